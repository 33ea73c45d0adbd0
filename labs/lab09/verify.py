"""Lab09 checks: the chat prompt layout, and the reply taken out of raw model output.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process, and every value is compared here, in the grader, with exact strings: there are
no tolerances in this lab. Random contents use fixed seeds; a failure prints the seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from framework.chat import CHAT_TAGS, extract_response, format_prompt
from grader.dsl import Lab, TestContext
from grader.i18n import tr

lab = Lab("lab09", "多轮对话", "Multi-turn chat format")

lab.forbid(
    "format_prompt",
    "framework.chat:format_prompt",
    "framework.chat:format_chat_prompt",
    "framework.chat:format_training_example",
    why=("这一课要你自己拼出提示词", "this lab is about building the prompt yourself"),
)
lab.forbid(
    "extract_response",
    "framework.chat:extract_response",
    why=("这一课要你自己取出回复", "this lab is about extracting the reply yourself"),
)

Messages = list[tuple[str, str]]


def show(x: Any, n: int = 160) -> str:
    """repr of a value, cut to n characters (the newlines stay visible as \\n)."""
    text = repr(x)
    return text if len(text) <= n else text[:n] + "…"


def check_prompt(
    t: TestContext, name: tuple[str, str], messages: Any, hint: tuple[str, str]
) -> bool:
    """format_prompt(messages) equals the reference text; True if messages is left as it was.

    `hint` is this case's own: what a difference here says about the prompt's layout.
    """
    want = format_prompt(messages)
    call = t.call("format_prompt", messages)
    t.check(
        name,
        call.value == want,
        tr(
            f"期望 {show(want)}\n实际 {show(call.value)}",
            f"expected {show(want)}\ngot      {show(call.value)}",
        ),
        hint=hint,
    )
    return bool(call.args[0] == messages)


def check_extract(
    t: TestContext, name: tuple[str, str], output: str, hint: tuple[str, str]
) -> None:
    """extract_response(output) equals the reference reply; `hint` is this case's own."""
    want = extract_response(output)
    got = t.call("extract_response", output).value
    t.check(
        name,
        got == want,
        tr(
            f"输入 {show(output)}\n期望 {show(want)}，实际 {show(got)}",
            f"input {show(output)}\nexpected {show(want)}, got {show(got)}",
        ),
        hint=hint,
    )


@lab.test(
    "format_prompt：一轮对话",
    "format_prompt: one turn",
    hint=[
        (
            "每条消息占两行：标签行 <|role|> 和内容行，最后再加上 <|assistant|> 这一行。",
            "Each message is two lines, the <|role|> tag line and the content line; then an "
            "<|assistant|> line.",
        ),
        (
            "每个标签和每段内容后面都跟一个 \\n，包括结尾的 <|assistant|>。",
            "Every tag and every content is followed by \\n, the final <|assistant|> included.",
        ),
    ],
)
def prompt_one_turn(t: TestContext) -> None:
    check_prompt(
        t,
        (
            '[("user", "hi")] → "<|user|>\\nhi\\n<|assistant|>\\n"',
            '[("user", "hi")] → "<|user|>\\nhi\\n<|assistant|>\\n"',
        ),
        [("user", "hi")],
        (
            "把报告里的期望和实际逐个字符对照：哪个 \\n 或标签多了、少了？"
            "一轮对话是标签行、内容行，再加结尾的 <|assistant|> 行",
            "Line up expected and got in the report: which \\n or tag is missing or extra? One "
            "turn is its tag line and its content line, then the closing <|assistant|> line",
        ),
    )
    check_prompt(
        t,
        ("中文内容原样保留", "Chinese content is kept as it is"),
        [("user", "你好！")],
        (
            "中文内容和其他 str 一样原样放进去：不要编码成 bytes，也不要只保留 ASCII；"
            "如果上一项也失败，先修上一项",
            "Chinese content goes in as it is, like any other str: no encoding to bytes, no "
            "ASCII-only step; if the case above fails too, fix that one first",
        ),
    )


@lab.test(
    "format_prompt：布局、顺序与 system 角色",
    "format_prompt: layout, order, the system role",
    hint=[
        (
            "按给定顺序输出每条消息，不要把 system 挪到前面，也不要合并或跳过消息。",
            "Emit the messages in the given order: do not move system first, merge or skip any.",
        ),
        (
            "内容原样放进去：不要 strip()，也不要改换行。",
            "Put the content in as it is: no strip(), no change to its newlines.",
        ),
        (
            "messages 只读不改：元组和列表都按 (role, content) 两项来拆。",
            "Only read messages: unpack each tuple or list as (role, content), never modify it.",
        ),
    ],
)
def prompt_layout(t: TestContext) -> None:
    three = [("user", "hi"), ("assistant", "hello"), ("user", "how are you")]
    cases: list[tuple[tuple[str, str], Any, tuple[str, str]]] = [
        (
            ("三条消息按原顺序，共 4 个标签", "three messages in order, 4 tags"),
            three,
            (
                "数一数你输出里的标签：每条消息一个，结尾再一个 <|assistant|>，共 4 个；"
                "再对照每个标签后面的内容和换行",
                "Count the tags in your output: one per message and a closing <|assistant|>, 4 "
                "in all; then compare the content and newline after each tag",
            ),
        ),
        (
            ("system 角色：<|system|> 在前", "the system role: <|system|> first"),
            [("system", "你是一个简洁的助手。"), ("user", "1 + 1 = ?")],
            (
                "system 消息和其他消息写法一样：它自己的标签行 <|system|>，再是内容行",
                "A system message is written like any other: its own <|system|> tag line, "
                "then its content line",
            ),
        ),
        (
            (
                "assistant 在前、system 在中间也照原顺序",
                "assistant first, system in between: as given",
            ),
            [("assistant", "A"), ("system", "S"), ("user", "U")],
            (
                "消息的顺序由调用者决定：按给定顺序逐条输出，不按角色排序或挪动",
                "The caller decides the order: emit the messages one by one as given, never "
                "sorted or moved by role",
            ),
        ),
        (
            ("内容不去空白、不改换行", "content is not stripped, newlines stay"),
            [("user", "  two\nlines  "), ("assistant", "\n")],
            (
                "内容要一个字符不差地放进去：首尾的空格、内部和单独的换行都保留",
                "The content goes in character for character: spaces at its ends and "
                "newlines, inside it or alone, all stay",
            ),
        ),
        (
            ("空内容：标签行后面是空行", "empty content: an empty line"),
            [("user", "")],
            (
                "空内容也占一行：标签行之后是一个只有 \\n 的空行",
                "An empty content still takes a line: after the tag line comes a line that is "
                "just \\n",
            ),
        ),
        (
            ("messages 是元组的元组也能用", "a tuple of tuples works too"),
            (("user", "a"), ("assistant", "b")),
            (
                "messages 可以是任何序列：只遍历它，不要求它是 list，也不要对它 append",
                "messages may be any sequence: only iterate over it; do not require a list or "
                "append to it",
            ),
        ),
        (
            ("每条消息是列表 [role, content] 也能用", "messages as [role, content] lists work too"),
            [["user", "a"], ["assistant", "b"]],
            (
                "一条消息也可以是 [role, content] 列表：按两项拆开，不要检查它是不是 tuple",
                "A message may be a [role, content] list too: unpack its two items, do not "
                "check that it is a tuple",
            ),
        ),
    ]
    kept = [check_prompt(t, name, messages, hint) for name, messages, hint in cases]
    t.check(
        ("messages 都没有被修改", "messages is left unchanged every time"),
        all(kept),
        tr("format_prompt 改动了传进来的 messages", "format_prompt modified the messages it got"),
        hint=(
            "format_prompt 只读 messages：结果写进一个新的字符串（或新的行列表），"
            "不要往调用者的列表里追加或修改它",
            "format_prompt only reads messages: build the result in a new string (or a new "
            "list of lines), never append to or edit the caller's list",
        ),
    )


@lab.test(
    "format_prompt：没有消息",
    "format_prompt: no messages",
    hint=[
        (
            "没有消息时，提示词只剩最后的 <|assistant|> 那一行。",
            "With no messages, the prompt is just the final <|assistant|> line.",
        ),
        (
            "不要把空列表当作错误：循环零次，照样追加结尾。",
            "An empty list is not an error: the loop runs zero times and the ending is still "
            "appended.",
        ),
    ],
)
def prompt_zero(t: TestContext) -> None:
    check_prompt(
        t,
        ('[] → "<|assistant|>\\n"', '[] → "<|assistant|>\\n"'),
        [],
        (
            "没有消息时循环一次也不执行，但结尾的 <|assistant|> 行照样要写",
            "With no messages the loop runs zero times, and the closing <|assistant|> line "
            "is still written",
        ),
    )


@lab.test(
    "format_prompt：拒绝未知角色",
    "format_prompt: rejects unknown roles",
    hint=[
        (
            '角色只能是 "system"、"user"、"assistant" 三个字符串之一，区分大小写。',
            'A role is one of the strings "system", "user", "assistant", case-sensitive.',
        ),
        (
            "先检查类型：不是 str 就 raise TypeError；再检查取值：不在三者之中就 raise "
            "ValueError。",
            "Check the type first (not a str → TypeError), then the value (not one of the "
            "three → ValueError).",
        ),
    ],
)
def prompt_errors(t: TestContext) -> None:
    unknown = (
        "只有三个角色名是合法的：其他任何字符串（空串也一样）都要抛 ValueError，"
        "在拼接提示词之前检查",
        "Only the three role names are valid: any other string, the empty one too, raises "
        "ValueError, checked before the prompt is built",
    )
    for role, zh, en, hint in (
        ("bot", '"bot"', '"bot"', unknown),
        (
            "User",
            '"User"（大小写不同）',
            '"User" (another case)',
            (
                '角色区分大小写："User" 不是 "user"：比较之前不要改变大小写',
                'Roles are case-sensitive: "User" is not "user"; do not change the case before '
                "comparing",
            ),
        ),
        ("", "空字符串", "an empty string", unknown),
        (
            "<|user|>",
            '"<|user|>"（标签不是角色）',
            '"<|user|>" (a tag is not a role)',
            (
                "标签不是角色：拿 role 本身和三个角色名比较，而不是先拼出标签再查",
                "A tag is not a role: compare the role itself with the three names, not a tag "
                "built from it",
            ),
        ),
    ):
        t.raises(
            (f"角色 {zh} → ValueError", f"role {en} → ValueError"),
            ValueError,
            "format_prompt",
            [("user", "ok"), (role, "x")],
            hint=hint,
        )
    not_str: list[tuple[Any, str]] = [(None, "None"), (1, "1")]
    for role, what in not_str:
        t.raises(
            (f"角色是 {what}（不是 str）→ TypeError", f"role {what} (not a str) → TypeError"),
            TypeError,
            "format_prompt",
            [(role, "x")],
            hint=(
                "不是 str 的角色是类型错误：先检查类型并抛 TypeError，再检查取值",
                "A role that is not a str is a type error: check the type first and raise "
                "TypeError, then check the value",
            ),
        )


@lab.test(
    "extract_response：C 课程的三个例子",
    "extract_response: the C course's three cases",
    hint=[
        (
            "回复从最后一个 <|assistant|> 之后开始，到下一个标签为止，再去掉首尾空白。",
            "The reply starts after the last <|assistant|>, runs to the next tag, and is stripped.",
        ),
        (
            "用 rfind 找最后一个 <|assistant|>（find 找的是第一个）；没有时从开头开始。",
            "Find the last <|assistant|> with rfind (find gives the first); without one, "
            "start at 0.",
        ),
    ],
)
def extract_basic(t: TestContext) -> None:
    check_extract(
        t,
        ("没有标签：整段去掉首尾空白", "no tag: the whole text, stripped"),
        "   hello world   ",
        (
            "没有 <|assistant|> 时回复从文本的开头开始，同样要去掉首尾空白",
            "Without an <|assistant|> the reply starts at the very beginning of the text, and "
            "is stripped all the same",
        ),
    )
    check_extract(
        t,
        ("两个 <|assistant|>：取最后一个", "two <|assistant|> tags: the last one wins"),
        "<|user|>\nA\n<|assistant|>\nWRONG\n<|user|>\nB\n<|assistant|>\nRIGHT\n",
        (
            "有几个 <|assistant|> 时，回复跟在最后一个后面：看看你的查找找到的是第几个",
            "With several <|assistant|> tags the reply follows the last one: look at which "
            "occurrence your search finds",
        ),
    )
    check_extract(
        t,
        ("在 <|user|> 处停下", "stops at <|user|>"),
        "<|assistant|>\nactual reply\n<|user|>\nnext q\n",
        (
            "对照期望和实际：回复的起点是不是紧跟在 <|assistant|> 之后，终点是不是下一个标签，"
            "首尾空白去掉了没有",
            "Compare expected and got: does the reply start right after <|assistant|>, end at "
            "the next tag, and have its ends stripped?",
        ),
    )


@lab.test(
    "extract_response：四个标签都会结束回复",
    "extract_response: every tag ends the reply",
    hint=[
        (
            "四个标签（包括 <|end|> 和 <|system|>）都会结束回复，不只是 <|user|>。",
            "All four tags end the reply, <|end|> and <|system|> included, not just <|user|>.",
        ),
        (
            "对 CHAT_TAGS 里的每个标签从回复起点往后 find，取找到的位置中最小的那个。",
            "find each tag of CHAT_TAGS from the reply's start, and take the smallest "
            "position found.",
        ),
        (
            "只匹配完整的标签：<|end 或 <|foo|> 这样的文字要保留。",
            "Match whole tags only: text such as <|end or <|foo|> stays in the reply.",
        ),
    ],
)
def extract_every_tag(t: TestContext) -> None:
    ends = (
        "回复在它后面的第一个标签处结束，不论是哪个标签：把报告里的输入和你的返回值对照，"
        "看你的终点停在了哪里",
        "The reply ends at the first tag after it, whichever tag that is: compare the input in "
        "the report with what you returned, and see where your end stopped",
    )
    check_extract(
        t, ("在 <|end|> 处停下", "stops at <|end|>"), "<|assistant|>\nreply<|end|>junk", ends
    )
    check_extract(
        t,
        ("在 <|system|> 处停下", "stops at <|system|>"),
        "<|assistant|>\nreply\n<|system|>\nrules",
        ends,
    )
    check_extract(
        t,
        ("几个标签里取最近的那个", "the nearest of several tags"),
        "<|assistant|>\nfirst<|end|>\n<|user|>\nsecond\n<|system|>\n",
        (
            "后面跟着几个不同的标签时，回复在最近的那个处结束：是所有找到的位置里最小的",
            "When several different tags follow, the reply ends at the nearest: the smallest "
            "of the positions found",
        ),
    )
    check_extract(
        t,
        (
            "没有 <|assistant|>：从开头取，到第一个标签为止",
            "no <|assistant|>: from the start to the first tag",
        ),
        "hello<|end|>more<|user|>",
        (
            "没有 <|assistant|> 时起点是 0，但终点照样是第一个标签：结果里不能有任何标签",
            "Without an <|assistant|> the start is 0, and the end is still the first tag: "
            "the result holds no tag at all",
        ),
    )
    check_extract(
        t,
        ("像标签但不是标签的文字照常保留", "text that only looks like a tag is kept"),
        "<|assistant|>\n<|end and <|foo|> a<b|c |>\n<|end|>",
        (
            "只有完整的标签才结束回复：<|end、<|foo|> 这样的文字是普通内容；查找时用完整的标签",
            "Only a whole tag ends the reply: text such as <|end or <|foo|> is plain content; "
            "search for the complete tags",
        ),
    )


@lab.test(
    "extract_response：空回复与空白",
    "extract_response: empty replies and whitespace",
    hint=[
        (
            "回复可能是空的：起点与终点相同时返回空串，不要报错。",
            "A reply may be empty: when start and end meet, return an empty string, do not raise.",
        ),
        (
            '用 .strip() 去掉首尾的空格、制表符和 \\r\\n；.strip("\\n") 只去掉换行。',
            'Use .strip() to remove spaces, tabs and \\r\\n at both ends; .strip("\\n") removes '
            "only newlines.",
        ),
        (
            "只去首尾：回复内部的空行和空格要保留。",
            "Strip the ends only: blank lines and spaces inside the reply stay.",
        ),
    ],
)
def extract_whitespace(t: TestContext) -> None:
    check_extract(
        t,
        ("提示词本身：回复为空", "the prompt alone: an empty reply"),
        "<|user|>\nhi\n<|assistant|>\n",
        (
            "文本在 <|assistant|> 之后只剩空白时，回复是空串：不要报错，也不要退回到别的位置",
            "When only whitespace follows <|assistant|>, the reply is the empty string: do not "
            "raise, and do not fall back to another position",
        ),
    )
    check_extract(
        t,
        ("标签紧挨着：回复为空", "tags back to back: an empty reply"),
        "<|assistant|><|end|>",
        (
            "标签紧跟在 <|assistant|> 后面时回复为空：从回复的起点（包括起点本身）往后找结束标签",
            "A tag right after <|assistant|> leaves an empty reply: look for the ending tag "
            "from the reply's start, the start itself included",
        ),
    )
    check_extract(
        t,
        ("空字符串 → 空字符串", "an empty string → an empty string"),
        "",
        (
            "空文本得到空回复，不报错：文本为空时，你读取的每个下标 output[i] 也都得存在",
            "An empty text gives an empty reply, without an error: every index you read, "
            "output[i], must exist even when the text is empty",
        ),
    )
    check_extract(
        t,
        ("去掉首尾的空格、制表符、\\r\\n", "strips spaces, tabs and \\r\\n at both ends"),
        "<|assistant|>\n\t  reply \r\n<|end|>",
        (
            "首尾的空白有好几种：空格、制表符、\\r 和 \\n 都要去掉，不只是换行",
            "Whitespace at the ends comes in several kinds: spaces, tabs, \\r and \\n all go, "
            "not only newlines",
        ),
    )
    check_extract(
        t,
        ("回复内部的换行与空格保留", "newlines and spaces inside the reply stay"),
        "<|assistant|>\nline one\n\n  line two\n<|end|>",
        (
            "只去掉首尾：回复可以有好几行，内部的空行和空格都要保留",
            "Strip the ends only: a reply may span several lines, and the blank lines and "
            "spaces inside it stay",
        ),
    )
    check_extract(
        t,
        ("中文回复", "a Chinese reply"),
        "<|assistant|>\n你好！有什么可以帮你？\n<|end|>\n",
        (
            "中文回复和英文一样是 str：位置在 str 里找，不要先编码成 bytes；"
            "如果上面的检查也失败，先修那里",
            "A Chinese reply is a str like an English one: find the positions in the str, "
            "without encoding to bytes; if the checks above fail too, fix those first",
        ),
    )


ALPHABET = [*"abc xyz 你好世界，。！？\n\t <|>end|userssistant", "<|", "|>", "\r\n", "  "]


def random_text(rng: np.random.Generator, longest: int) -> str:
    """Random text from pieces that look like tag parts but never form a whole tag."""
    while True:
        n = int(rng.integers(0, longest + 1))
        text = "".join(ALPHABET[int(i)] for i in rng.integers(0, len(ALPHABET), size=n))
        if not any(tag in text for tag in CHAT_TAGS):
            return text


@lab.test(
    "性质：随机内容经过 format → extract 还原",
    "property: random contents survive format → extract",
    requires=[prompt_one_turn, extract_basic],
    hint=[
        (
            "随机内容里有 <|、|>、\\r\\n 这样的片段，但从不组成完整的标签。",
            "The random contents hold pieces such as <|, |> and \\r\\n, but never a whole tag.",
        ),
        (
            "看报告里第一个失败的输入：通常是前面某个单项测试的同一个原因。",
            "Look at the first failing input in the report: usually the cause of an earlier test.",
        ),
    ],
)
def roundtrip_property(t: TestContext) -> None:
    rng = t.rng(909)
    roles = ["system", "user", "assistant"]
    cases: list[Messages] = []
    for _ in range(150):
        n = int(rng.integers(0, 5))
        cases.append([(roles[int(rng.integers(0, 3))], random_text(rng, 12)) for _ in range(n)])
    want = [format_prompt(m) for m in cases]
    got = [c.value for c in t.map("format_prompt", [(m,) for m in cases])]
    k = next((k for k in range(len(cases)) if got[k] != want[k]), None)
    detail = None
    if k is not None:
        m, w, g = show(cases[k]), show(want[k]), show(got[k])
        detail = tr(f"messages = {m}\n期望 {w}\n实际 {g}", f"messages = {m}\nexpected {w}\ngot {g}")
    t.check(
        (
            "150 组随机消息：format_prompt 与参考一致",
            "150 random conversations: format_prompt as the reference",
        ),
        k is None,
        detail,
        hint=(
            "报告里给出了第一组不一致的 messages：用它调用你的 format_prompt，"
            "和期望逐个字符对照；多半是前面某个 format_prompt 测试的同一个原因",
            "The report shows the first messages that differ: call your format_prompt on them "
            "and compare with the expected text character by character; most often an earlier "
            "format_prompt test fails for the same reason",
        ),
    )
    replies = [random_text(rng, 20) for _ in cases]
    outputs = [p + r + "\n<|end|>\n<|user|>\n" for p, r in zip(want, replies, strict=True)]
    got = [c.value for c in t.map("extract_response", [(o,) for o in outputs])]
    k = next((k for k in range(len(cases)) if got[k] != replies[k].strip()), None)
    detail = None
    if k is not None:
        o, w, g = show(outputs[k]), show(replies[k].strip()), show(got[k])
        detail = tr(f"输入 {o}\n期望 {w}，实际 {g}", f"input {o}\nexpected {w}, got {g}")
    t.check(
        (
            "提示词 + 随机回复：extract_response 取回 reply.strip()",
            "prompt + random reply: extract_response gives reply.strip()",
        ),
        k is None,
        detail,
        hint=(
            "报告里给出了第一个不一致的输入：回复里有 <|、|>、\\r\\n 这样的片段，但没有完整的标签；"
            "用它调用你的 extract_response，看哪一段被多取或少取了",
            "The report shows the first input that differs: its reply holds pieces such as <|, "
            "|> and \\r\\n but no whole tag; call your extract_response on it and see what "
            "was cut too early or kept too long",
        ),
    )

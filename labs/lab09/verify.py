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


def check_prompt(t: TestContext, name: tuple[str, str], messages: Any) -> bool:
    """format_prompt(messages) equals the reference text; True if messages is left as it was."""
    want = format_prompt(messages)
    call = t.call("format_prompt", messages)
    t.check(
        name,
        call.value == want,
        tr(
            f"期望 {show(want)}\n实际 {show(call.value)}",
            f"expected {show(want)}\ngot      {show(call.value)}",
        ),
    )
    return bool(call.args[0] == messages)


def check_extract(t: TestContext, name: tuple[str, str], output: str) -> None:
    """extract_response(output) equals the reference reply."""
    want = extract_response(output)
    got = t.call("extract_response", output).value
    t.check(
        name,
        got == want,
        tr(
            f"输入 {show(output)}\n期望 {show(want)}，实际 {show(got)}",
            f"input {show(output)}\nexpected {show(want)}, got {show(got)}",
        ),
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
    )
    check_prompt(t, ("中文内容原样保留", "Chinese content is kept as it is"), [("user", "你好！")])


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
    cases: list[tuple[tuple[str, str], Any]] = [
        (("三条消息按原顺序，共 4 个标签", "three messages in order, 4 tags"), three),
        (
            ("system 角色：<|system|> 在前", "the system role: <|system|> first"),
            [("system", "你是一个简洁的助手。"), ("user", "1 + 1 = ?")],
        ),
        (
            (
                "assistant 在前、system 在中间也照原顺序",
                "assistant first, system in between: as given",
            ),
            [("assistant", "A"), ("system", "S"), ("user", "U")],
        ),
        (
            ("内容不去空白、不改换行", "content is not stripped, newlines stay"),
            [("user", "  two\nlines  "), ("assistant", "\n")],
        ),
        (("空内容：标签行后面是空行", "empty content: an empty line"), [("user", "")]),
        (
            ("messages 是元组的元组也能用", "a tuple of tuples works too"),
            (("user", "a"), ("assistant", "b")),
        ),
        (
            ("每条消息是列表 [role, content] 也能用", "messages as [role, content] lists work too"),
            [["user", "a"], ["assistant", "b"]],
        ),
    ]
    kept = [check_prompt(t, name, messages) for name, messages in cases]
    t.check(
        ("messages 都没有被修改", "messages is left unchanged every time"),
        all(kept),
        tr("format_prompt 改动了传进来的 messages", "format_prompt modified the messages it got"),
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
    check_prompt(t, ('[] → "<|assistant|>\\n"', '[] → "<|assistant|>\\n"'), [])


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
    for role, zh, en in (
        ("bot", '"bot"', '"bot"'),
        ("User", '"User"（大小写不同）', '"User" (another case)'),
        ("", "空字符串", "an empty string"),
        ("<|user|>", '"<|user|>"（标签不是角色）', '"<|user|>" (a tag is not a role)'),
    ):
        t.raises(
            (f"角色 {zh} → ValueError", f"role {en} → ValueError"),
            ValueError,
            "format_prompt",
            [("user", "ok"), (role, "x")],
        )
    not_str: list[tuple[Any, str]] = [(None, "None"), (1, "1")]
    for role, what in not_str:
        t.raises(
            (f"角色是 {what}（不是 str）→ TypeError", f"role {what} (not a str) → TypeError"),
            TypeError,
            "format_prompt",
            [(role, "x")],
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
        t, ("没有标签：整段去掉首尾空白", "no tag: the whole text, stripped"), "   hello world   "
    )
    check_extract(
        t,
        ("两个 <|assistant|>：取最后一个", "two <|assistant|> tags: the last one wins"),
        "<|user|>\nA\n<|assistant|>\nWRONG\n<|user|>\nB\n<|assistant|>\nRIGHT\n",
    )
    check_extract(
        t,
        ("在 <|user|> 处停下", "stops at <|user|>"),
        "<|assistant|>\nactual reply\n<|user|>\nnext q\n",
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
    check_extract(t, ("在 <|end|> 处停下", "stops at <|end|>"), "<|assistant|>\nreply<|end|>junk")
    check_extract(
        t,
        ("在 <|system|> 处停下", "stops at <|system|>"),
        "<|assistant|>\nreply\n<|system|>\nrules",
    )
    check_extract(
        t,
        ("几个标签里取最近的那个", "the nearest of several tags"),
        "<|assistant|>\nfirst<|end|>\n<|user|>\nsecond\n<|system|>\n",
    )
    check_extract(
        t,
        (
            "没有 <|assistant|>：从开头取，到第一个标签为止",
            "no <|assistant|>: from the start to the first tag",
        ),
        "hello<|end|>more<|user|>",
    )
    check_extract(
        t,
        ("像标签但不是标签的文字照常保留", "text that only looks like a tag is kept"),
        "<|assistant|>\n<|end and <|foo|> a<b|c |>\n<|end|>",
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
    )
    check_extract(
        t, ("标签紧挨着：回复为空", "tags back to back: an empty reply"), "<|assistant|><|end|>"
    )
    check_extract(t, ("空字符串 → 空字符串", "an empty string → an empty string"), "")
    check_extract(
        t,
        ("去掉首尾的空格、制表符、\\r\\n", "strips spaces, tabs and \\r\\n at both ends"),
        "<|assistant|>\n\t  reply \r\n<|end|>",
    )
    check_extract(
        t,
        ("回复内部的换行与空格保留", "newlines and spaces inside the reply stay"),
        "<|assistant|>\nline one\n\n  line two\n<|end|>",
    )
    check_extract(
        t, ("中文回复", "a Chinese reply"), "<|assistant|>\n你好！有什么可以帮你？\n<|end|>\n"
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
    )

"""Lab02 checks: byte → id, id → byte, and the UTF-8 round trip.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process, and every value is compared here, in the grader, against the framework's
`ByteTokenizer`. All values are exact integers or strings: there are no tolerances in this
lab. Random texts use fixed seeds; a failure prints the seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from framework.tokenizer import ByteTokenizer
from grader.dsl import Lab, TestContext
from grader.i18n import Text, tr

lab = Lab("lab02", "字节级 Tokenizer", "Byte-level tokenizer")
_WRITE_IT = (
    "这一课就是亲手写出字节与 id 之间的映射",
    "this lab is about writing the mapping between bytes and ids yourself",
)
_ENCODE = ("framework.tokenizer:ByteTokenizer.encode",)
_DECODE = (
    "framework.tokenizer:Tokenizer.decode",
    "framework.tokenizer:ByteTokenizer.decode",  # its own fast path for a list of ints
    "framework.tokenizer:Tokenizer.token_bytes",
    "framework.tokenizer:Tokenizer.token_str",
    "framework.tokenizer:Tokenizer.is_special",
    "framework.tokenizer:Tokenizer.check_id",
    "framework.tokenizer:ByteTokenizer._piece",
)
lab.forbid("encode_byte", *_ENCODE, why=_WRITE_IT)
lab.forbid("decode_id", *_DECODE, why=_WRITE_IT)
lab.forbid("roundtrip", *_ENCODE, *_DECODE, why=_WRITE_IT)

REF = ByteTokenizer()  # the framework's tokenizer, in the grader's process
TOKENIZER = "framework.tokenizer:ByteTokenizer"


def short(x: Any) -> str:
    """repr of a value, cut to 120 characters."""
    text = repr(x)
    return text if len(text) <= 120 else text[:120] + "…"


def first_diff(got: list[Any], want: list[Any], where: str, start: int = 0) -> Text:
    """Explain where two lists first differ; `where` names position k, e.g. "ids[{}]"."""
    for k, (g, w) in enumerate(zip(got, want, strict=False)):
        if type(g) is not type(w) or g != w:
            at = where.format(start + k)
            return tr(
                f"{at}：期望 {short(w)}，实际 {short(g)}",
                f"at {at}: expected {short(w)}, got {short(g)}",
            )
    return tr(
        f"期望 {len(want)} 个值，实际 {len(got)} 个", f"expected {len(want)} values, got {len(got)}"
    )


def same(got: list[Any], want: list[Any]) -> bool:
    """Equal lists with equal element types: 69.0 is not the id 69, 0 is not None."""
    return len(got) == len(want) and all(
        type(g) is type(w) and g == w for g, w in zip(got, want, strict=True)
    )


def split_pair(value: Any) -> tuple[list[int] | None, str | None]:
    """(ids, text) from roundtrip's return value, or None for a part of the wrong type."""
    if not isinstance(value, tuple | list) or len(value) != 2:
        return None, None
    ids, text = value
    ok_ids = isinstance(ids, list | tuple | np.ndarray) and all(
        isinstance(i, int | np.integer) and not isinstance(i, bool) for i in ids
    )
    return ([int(i) for i in ids] if ok_ids else None), (text if isinstance(text, str) else None)


_KNOWN_BYTE = {  # the hint of each probe of encode_known
    72: (
        "'H' 是字节 72，id 是 72 + 4 = 76：4 个特殊 id 排在前面；返回的要是 int。",
        "'H' is byte 72 and gets id 72 + 4 = 76: the 4 special ids come first; return an int.",
    ),
    105: (
        "'i' 是字节 105，id 是 109：打印你返回的值和它的类型，和 109 对照。",
        "'i' is byte 105 and gets id 109: print the value you return and its type, and compare.",
    ),
    0: (
        "字节 0（NUL）是普通字节：它的 id 是 4，不是特殊 token，也不会被拒绝。",
        "Byte 0 (NUL) is an ordinary byte: its id is 4; it is neither special nor rejected.",
    ),
    255: (
        "255 是最大的字节，仍然合法：它的 id 259 是词表的最后一个。",
        "255 is the largest byte and still valid: its id 259 is the last of the vocabulary.",
    ),
}
_KNOWN_ID = {  # the hint of each probe of decode_known
    76: (
        "id 76 是字节 72（'H'）：和 encode_byte 互逆，两边的偏移必须一样。",
        "Id 76 is byte 72 ('H'): decode_id inverts encode_byte, so both use the same offset.",
    ),
    109: (
        "id 109 是字节 105（'i'）：打印你返回的值和它的类型，和 105 对照。",
        "Id 109 is byte 105 ('i'): print the value you return and its type, and compare.",
    ),
    4: (
        "id 4 是第一个普通 id，字节 0（NUL）：只有 id 0–3 是特殊 token。",
        "Id 4 is the first ordinary id, byte 0 (NUL): only ids 0–3 are special tokens.",
    ),
    259: (
        "id 259 是词表的最后一个 id（共 260 个），字节 255。",
        "Id 259 is the last id of the vocabulary (260 ids), byte 255.",
    ),
}
_MULTIBYTE = (  # check_roundtrip's hints for texts with Chinese and emoji
    (
        "一个汉字是 3 个 UTF-8 字节，一个 emoji 是 4 个：每个字节一个 id，而不是每个字符一个。",
        "A Chinese character is 3 UTF-8 bytes and an emoji 4: one id per byte, not per character.",
    ),
    (
        "一个字符的几个字节要一起解码：先收集全部字节，最后只解码一次。",
        "The bytes of one character decode together: collect all the bytes, then decode once.",
    ),
)
_NUL = (
    (
        "NUL 是字节 0，id 4：它和其他字节一样编码，不加也不减 id。",
        "NUL is byte 0, id 4: it is encoded like any other byte, with no id added or dropped.",
    ),
    (
        "解码时只跳过没有字节的 id（decode_id 返回 None 的）：字节 0 是真实的字节。",
        "When decoding, skip only the ids without a byte (decode_id gives None): byte 0 is a real "
        "byte.",
    ),
)
_CONTROL = (
    (
        "128 个 ASCII 字符各是 1 个字节：每个字符正好一个 id，控制字符也一样。",
        "Each of the 128 ASCII characters is 1 byte: exactly one id per character, control "
        "characters included.",
    ),
    (
        "控制字符（包括 NUL）也要原样还原：解码时不要丢掉或替换任何字节。",
        "Control characters, NUL included, come back as they were: drop or replace no byte when "
        "decoding.",
    ),
)


def check_roundtrip(
    t: TestContext, tok: Any, text: str, label: str, hints: tuple[Any, Any]
) -> None:
    """Two checks: the ids are text's UTF-8 bytes + 4, and the decoded text is `text`;
    `hints` holds the hint of each, written for the kind of text."""
    value = t.call("roundtrip", tok, text).value
    ids, back = split_pair(value)
    want = REF.encode(text)
    t.check(
        (
            f"{label}：ids = 它的 UTF-8 字节 + 4（{len(want)} 个）",
            f"{label}: ids = its UTF-8 bytes + 4 ({len(want)} ids)",
        ),
        ids == want,
        first_diff(ids, want, "ids[{}]")
        if ids is not None
        else tr(
            f"ids 应是 int 列表，实际 {short(value)}",
            f"ids must be a list of ints, got {short(value)}",
        ),
        hint=hints[0],
    )
    t.check(
        (f"{label}：解码后还原为原文", f"{label}: decodes back to the same text"),
        back == text,
        tr(
            f"期望 {short(text)}，实际 {short(back if back is not None else value)}",
            f"expected {short(text)}, got {short(back if back is not None else value)}",
        ),
        hint=hints[1],
    )


@lab.test(
    "encode_byte：已知字节",
    "encode_byte: known bytes",
    hint=[
        (
            "id 0–3 留给 4 个特殊 token，所以字节 b 的 id 是 b + 4。",
            "Ids 0–3 belong to the 4 special tokens, so byte b gets id b + 4.",
        ),
        (
            "返回 b + NUM_SPECIAL，一个 int，不要返回 float 或字符串。",
            "Return b + NUM_SPECIAL as an int, not a float or a string.",
        ),
    ],
)
def encode_known(t: TestContext) -> None:
    tok = t.build(TOKENIZER)
    for b, name in ((72, "'H' (72)"), (105, "'i' (105)"), (0, "NUL (0)"), (255, "0xff (255)")):
        got = t.call("encode_byte", tok, b).value
        t.equal((f"{name} → {b + 4}", f"{name} → {b + 4}"), got, b + 4, hint=_KNOWN_BYTE[b])


@lab.test(
    "encode_byte：全部 256 个字节值",
    "encode_byte: all 256 byte values",
    hint=[
        (
            "0 到 255 每个字节都要映射，包括 0 和 255 这两端。",
            "Every byte from 0 to 255 maps, the ends 0 and 255 included.",
        ),
        (
            "范围检查写成 0 <= b <= 255：差一就会拒绝或错映射某个字节。",
            "Write the range check as 0 <= b <= 255: an off-by-one rejects or mis-maps a byte.",
        ),
    ],
)
def encode_all_bytes(t: TestContext) -> None:
    tok = t.build(TOKENIZER)
    got = [c.value for c in t.map("encode_byte", [(tok, b) for b in range(256)])]
    want = [b + 4 for b in range(256)]
    t.check(
        ("每个字节 b（0–255）→ b + 4", "every byte b (0–255) → b + 4"),
        same(got, want),
        first_diff(got, want, "b = {}"),
        hint=[
            (
                "报告给出第一个错的字节：对它手算 b + 4，再看你的代码对那个 b 走了哪条分支。",
                "The report names the first wrong byte: work out b + 4 for it, then see which "
                "branch your code takes for that b.",
            )
        ],
    )


@lab.test(
    "encode_byte：拒绝越界与非整数",
    "encode_byte: rejects out-of-range and non-int",
    hint=[
        (
            "先检查类型，再检查范围：非 int 是 TypeError，越界是 ValueError。",
            "Check the type first, then the range: a non-int is TypeError, out of range is "
            "ValueError.",
        ),
        (
            "用 isinstance(b, int) 检查类型，65.0 和 'A' 都不是 int。",
            "Use isinstance(b, int) for the type: neither 65.0 nor 'A' is an int.",
        ),
    ],
)
def encode_errors(t: TestContext) -> None:
    tok = t.build(TOKENIZER)
    t.raises(
        ("b = -1 → ValueError", "b = -1 → ValueError"),
        ValueError,
        "encode_byte",
        tok,
        -1,
        hint=[
            (
                "-1 不是字节：字节的范围是 0 到 255，两端之外都 raise ValueError。",
                "-1 is not a byte: bytes run from 0 to 255, and anything outside raises "
                "ValueError.",
            )
        ],
    )
    t.raises(
        ("b = 256 → ValueError", "b = 256 → ValueError"),
        ValueError,
        "encode_byte",
        tok,
        256,
        hint=[
            (
                "256 比最大的字节 255 还大：上界也要检查。",
                "256 is above the largest byte, 255: check the upper bound too.",
            )
        ],
    )
    t.raises(
        ("b = 65.0（浮点数）→ TypeError", "b = 65.0 (a float) → TypeError"),
        TypeError,
        "encode_byte",
        tok,
        65.0,
        hint=[
            (
                "65.0 是 float，不是 int：先检查类型，再算 id。",
                "65.0 is a float, not an int: check the type before computing the id.",
            )
        ],
    )
    t.raises(
        ("b = 'A'（字符串）→ TypeError", "b = 'A' (a str) → TypeError"),
        TypeError,
        "encode_byte",
        tok,
        "A",
        hint=[
            (
                "'A' 是 str：encode_byte 只接受 int，把字符变成字节是 roundtrip 的事。",
                "'A' is a str: encode_byte takes an int only; turning characters into bytes is "
                "roundtrip's job.",
            )
        ],
    )


@lab.test(
    "decode_id：已知 id，NUL 不是特殊 token",
    "decode_id: known ids; NUL is not a special",
    hint=[
        (
            "decode_id 是 encode_byte 的逆运算：普通 id 返回 id − 4。",
            "decode_id inverts encode_byte: an ordinary id gives id − 4.",
        ),
        (
            "id 4 是字节 0（NUL），它是普通字节，不是特殊 token。",
            "Id 4 is byte 0 (NUL): an ordinary byte, not a special token.",
        ),
    ],
)
def decode_known(t: TestContext) -> None:
    tok = t.build(TOKENIZER)
    for i, b, name in ((76, 72, "'H'"), (109, 105, "'i'"), (4, 0, "NUL"), (259, 255, "0xff")):
        got = t.call("decode_id", tok, i).value
        t.equal((f"{i} → {b}（{name}）", f"{i} → {b} ({name})"), got, b, hint=_KNOWN_ID[i])


@lab.test(
    "decode_id：全部 260 个 id",
    "decode_id: all 260 ids",
    hint=[
        (
            "id 0–3 是特殊 token，没有字节，返回 None（不是 0）。",
            "Ids 0–3 are special tokens with no byte: return None (not 0).",
        ),
        (
            "先判断 token_id < NUM_SPECIAL，否则返回 token_id - NUM_SPECIAL。",
            "Test token_id < NUM_SPECIAL first, otherwise return token_id - NUM_SPECIAL.",
        ),
    ],
)
def decode_all_ids(t: TestContext) -> None:
    tok = t.build(TOKENIZER)
    got = [c.value for c in t.map("decode_id", [(tok, i) for i in range(REF.vocab_size)])]
    t.check(
        ("id 0–3（PAD、UNK、BOS、EOS）→ None", "ids 0–3 (PAD, UNK, BOS, EOS) → None"),
        same(got[:4], [None] * 4),
        first_diff(got[:4], [None] * 4, "id {}"),
        hint=[
            (
                "id 0–3 是 PAD、UNK、BOS、EOS，没有字节：对它们返回 None，不是 0 或别的数。",
                "Ids 0–3 are PAD, UNK, BOS and EOS and have no byte: return None for them, not 0 "
                "or another number.",
            )
        ],
    )
    want = list(range(256))
    t.check(
        ("每个 id 4–259 → id − 4", "every id 4–259 → id − 4"),
        same(got[4:], want),
        first_diff(got[4:], want, "id {}", start=4),
        hint=[
            (
                "报告给出第一个错的 id：它应得到 id − 4；看看你的代码对那个 id 走了哪条分支。",
                "The report names the first wrong id: it should give id − 4; see which branch "
                "your code takes for that id.",
            )
        ],
    )


@lab.test(
    "decode_id：拒绝越界 id",
    "decode_id: rejects out-of-range ids",
    hint=[
        (
            "合法的 id 满足 0 <= token_id < tok.vocab_size，其余都 raise ValueError。",
            "A valid id has 0 <= token_id < tok.vocab_size; raise ValueError for any other.",
        ),
        (
            "260 等于 vocab_size，已经越界：上界用 <，不是 <=。",
            "260 equals vocab_size and is already out of range: use <, not <=, for the upper "
            "bound.",
        ),
    ],
)
def decode_errors(t: TestContext) -> None:
    tok = t.build(TOKENIZER)
    t.raises(
        ("id = -1 → ValueError", "id = -1 → ValueError"),
        ValueError,
        "decode_id",
        tok,
        -1,
        hint=[
            (
                "-1 不是合法的 id：id 的范围是 [0, vocab_size)，下界也要检查。",
                "-1 is not a valid id: ids lie in [0, vocab_size), so check the lower bound too.",
            )
        ],
    )
    t.raises(
        ("id = 260（= vocab_size）→ ValueError", "id = 260 (= vocab_size) → ValueError"),
        ValueError,
        "decode_id",
        tok,
        REF.vocab_size,
        hint=[
            (
                "合法的 id 是 0 到 259：260 = vocab_size 已经在范围之外。",
                "Valid ids run from 0 to 259: 260 = vocab_size is already outside.",
            )
        ],
    )


@lab.test(
    "roundtrip：ASCII 文本",
    "roundtrip: ASCII text",
    hint=[
        (
            "返回一个二元组 (ids, text)：ids 是 int 列表，text 是 str。",
            "Return a pair (ids, text): ids a list of ints, text a str.",
        ),
        (
            '编码时对 text.encode("utf-8") 的每个字节调用 encode_byte。',
            'To encode, call encode_byte on every byte of text.encode("utf-8").',
        ),
        (
            '解码时对每个 id 调用 decode_id，收集字节，再用 bytes(...).decode("utf-8") 还原。',
            "To decode, call decode_id on every id, collect the bytes, then "
            'bytes(...).decode("utf-8").',
        ),
    ],
)
def roundtrip_ascii(t: TestContext) -> None:
    tok = t.build(TOKENIZER)
    value = t.call("roundtrip", tok, "Hello").value
    ids, back = split_pair(value)
    t.check(
        ("返回 (ids, text)：int 列表和 str", "returns (ids, text): a list of ints and a str"),
        ids is not None and back is not None,
        tr(
            f"期望 (list[int], str)，实际 {short(value)}",
            f"expected (list[int], str), got {short(value)}",
        ),
        hint=[
            (
                "roundtrip 要返回一个二元组：第一项是 int 列表，第二项是 str。",
                "roundtrip returns a pair: first a list of ints, then a str.",
            )
        ],
    )
    t.equal(
        ("'Hello' → ids [76, 105, 112, 112, 115]", "'Hello' → ids [76, 105, 112, 112, 115]"),
        ids,
        REF.encode("Hello"),
        hint=[
            (
                "'Hello' 的 UTF-8 字节是 [72, 101, 108, 108, 111]，每个加 4；列表里不该有别的 id。",
                "The UTF-8 bytes of 'Hello' are [72, 101, 108, 108, 111], each plus 4; no other "
                "id belongs in the list.",
            )
        ],
    )
    t.equal(
        ("'Hello' 解码后还是 'Hello'", "'Hello' decodes back to 'Hello'"),
        back,
        "Hello",
        hint=[
            (
                "解码要从 ids 出发：每个 id 经 decode_id 得到字节，再把这些字节变回文本。",
                "Decoding starts from the ids: each id gives a byte through decode_id, and the "
                "bytes become the text again.",
            )
        ],
    )


@lab.test(
    "roundtrip：中文与 emoji",
    "roundtrip: Chinese and emoji",
    hint=[
        (
            "编码的是 UTF-8 字节而不是字符：'你好，世界' 有 5 个字符，却有 15 个 id。",
            "Encode UTF-8 bytes, not characters: 5 Chinese characters give 15 ids.",
        ),
        (
            'ord(ch) 对中文会超过 255：要遍历 text.encode("utf-8")。',
            'ord(ch) exceeds 255 for Chinese: iterate over text.encode("utf-8") instead.',
        ),
        (
            "一个汉字的 3 个字节要一起解码：先把所有字节拼成 bytes，最后只 decode 一次。",
            "A character's 3 bytes decode together: gather all the bytes first, then decode once.",
        ),
    ],
)
def roundtrip_unicode(t: TestContext) -> None:
    tok = t.build(TOKENIZER)
    check_roundtrip(t, tok, "你好，世界", "'你好，世界'", _MULTIBYTE)
    check_roundtrip(t, tok, "🙂", "'🙂'", _MULTIBYTE)
    check_roundtrip(t, tok, "GPT 说：hi 👋", "'GPT 说：hi 👋'", _MULTIBYTE)


@lab.test(
    "roundtrip：空串与 NUL 字节",
    "roundtrip: empty text and the NUL byte",
    hint=[
        (
            "空串应得到 ([], '')：不要为空输入特殊处理成别的值。",
            "The empty text gives ([], ''): do not turn an empty input into anything else.",
        ),
        (
            "NUL 字节 0 的 id 是 4：解码时只跳过 decode_id 返回 None 的 id，不要跳过 0。",
            "NUL (byte 0) has id 4: when decoding skip only ids whose decode_id is None, "
            "never byte 0.",
        ),
    ],
)
def roundtrip_edge(t: TestContext) -> None:
    tok = t.build(TOKENIZER)
    value = t.call("roundtrip", tok, "").value
    t.check(
        ("'' → ([], '')", "'' → ([], '')"),
        split_pair(value) == ([], ""),
        tr(f"期望 ([], '')，实际 {short(value)}", f"expected ([], ''), got {short(value)}"),
        hint=[
            (
                "空文本没有字节：ids 是空列表，文本是空串，不要加任何 id。",
                "An empty text has no bytes: the ids are an empty list and the text is '', with "
                "no id added.",
            )
        ],
    )
    check_roundtrip(t, tok, "a\x00b", "'a\\x00b'", _NUL)
    check_roundtrip(t, tok, "".join(map(chr, range(128))), "ASCII 0–127", _CONTROL)


@lab.test(
    "roundtrip 只用你自己的函数",
    "roundtrip uses only your own functions",
    requires=[roundtrip_ascii, roundtrip_unicode, roundtrip_edge],
    hint=[
        (
            "roundtrip 里不要用 tok.encode、tok.decode 或 tok.token_bytes。",
            "Do not use tok.encode, tok.decode or tok.token_bytes inside roundtrip.",
        ),
        (
            "文本必须由 decode_id 得到的字节还原：每个字节调用一次 encode_byte 和 decode_id。",
            "The text must be rebuilt from decode_id's bytes: call encode_byte and decode_id "
            "per byte.",
        ),
    ],
)
def roundtrip_own(t: TestContext) -> None:
    # Framework calls are trapped in every roundtrip call (lab.forbid above); here the text
    # must come back from decoding, not be handed back unchanged: count the calls.
    text = "Hi 你好"
    call = t.call_counting(("encode_byte", "decode_id"), "roundtrip", t.build(TOKENIZER), text)
    n = len(text.encode("utf-8"))
    used = call.counts
    t.check(
        (
            f"roundtrip 调用了你的 encode_byte 和 decode_id，每个字节至少一次（{n} 个字节）",
            f"roundtrip calls your encode_byte and decode_id at least once per byte ({n} bytes)",
        ),
        used.get("encode_byte", 0) >= n and used.get("decode_id", 0) >= n,
        tr(
            f"encode_byte 被调用 {used.get('encode_byte', 0)} 次，decode_id 被调用 "
            f"{used.get('decode_id', 0)} 次：解码出来的文本必须来自 decode_id，不能直接返回输入",
            f"encode_byte ran {used.get('encode_byte', 0)} times and decode_id "
            f"{used.get('decode_id', 0)} times: the text must come from decode_id, not be the "
            "input handed back",
        ),
        hint=[
            (
                "解码出的文本必须来自 decode_id：数一数你的 roundtrip 对每个字节调用了几次 "
                "encode_byte 和 decode_id。",
                "The decoded text must come from decode_id: count how often your roundtrip calls "
                "encode_byte and decode_id per byte.",
            )
        ],
    )


@lab.test(
    "roundtrip：随机文本",
    "roundtrip: random texts",
    requires=[encode_all_bytes, decode_all_ids],
    hint=[
        (
            "随机文本包含控制字符、拉丁字母、汉字和 emoji：每种都是 1 到 4 个 UTF-8 字节。",
            "The random texts mix control characters, Latin, Chinese and emoji: 1 to 4 UTF-8 "
            "bytes each.",
        ),
        (
            "先让前面的单项测试全部通过，这里的错误通常是同一个原因。",
            "Make the earlier single-case tests pass first: a failure here usually has the "
            "same cause.",
        ),
    ],
)
def roundtrip_random(t: TestContext) -> None:
    rng = t.rng(2002)
    # code point ranges: control, ASCII, Latin-1, CJK, emoji (1, 1, 2, 3 and 4 UTF-8 bytes)
    pools = [(0x00, 0x20), (0x20, 0x7F), (0xA0, 0x100), (0x4E00, 0x9FA6), (0x1F300, 0x1F650)]
    texts = []
    for _ in range(20):
        n = int(rng.integers(0, 13))
        picks = [pools[int(rng.integers(len(pools)))] for _ in range(n)]
        texts.append("".join(chr(int(rng.integers(lo, hi))) for lo, hi in picks))
    tok = t.build(TOKENIZER)
    outs = [split_pair(c.value) for c in t.map("roundtrip", [(tok, s) for s in texts])]
    bad_ids = [(s, ids) for s, (ids, _) in zip(texts, outs, strict=True) if ids != REF.encode(s)]
    bad_text = [(s, back) for s, (_, back) in zip(texts, outs, strict=True) if back != s]
    n_ids, n_text = len(bad_ids), len(bad_text)
    s, ids = bad_ids[0] if bad_ids else ("", [])
    t.check(
        (
            "20 段随机文本：ids 都等于 UTF-8 字节 + 4",
            "20 random texts: ids are the UTF-8 bytes + 4",
        ),
        not bad_ids,
        tr(f"{n_ids} 段不对；{short(s)} 的 ", f"{n_ids} wrong; for {short(s)}, ")
        + first_diff(ids or [], REF.encode(s), "ids[{}]"),
        hint=[
            (
                "报告给出第一段错的文本和第一个错的位置：单独拿那段文本调用 "
                "roundtrip，对照前面的单项测试。",
                "The report names the first wrong text and position: call roundtrip on that text "
                "alone and compare with the single-case tests above.",
            )
        ],
    )
    s, back = bad_text[0] if bad_text else ("", "")
    t.check(
        ("20 段随机文本：都还原为原文", "20 random texts: each decodes back to itself"),
        not bad_text,
        tr(
            f"{n_text} 段不对；期望 {short(s)}，实际 {short(back)}",
            f"{n_text} wrong; expected {short(s)}, got {short(back)}",
        ),
        hint=[
            (
                "报告给出第一段没还原的文本：单独拿它调用 roundtrip，看字节在哪一步丢了或变了。",
                "The report names the first text that did not come back: call roundtrip on it "
                "alone and see at which step a byte is lost or changed.",
            )
        ],
    )

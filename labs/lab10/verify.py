"""Lab10 checks: the request line, the response bytes, and both on a real loopback socket.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process; every value is compared here, in the grader, exactly (there are no tolerances in
this lab). The two "real traffic" tests open sockets on 127.0.0.1 in the grader, never in
your code: Python's `http.client` sends requests to the grader, which hands you the request
lines it received as plain strings; your response bytes come back to the grader, which
serves them to `http.client` and compares what it reads.
"""

from __future__ import annotations

import http.client
import socket
import threading
from typing import Any, NamedTuple

from grader.dsl import Lab, TestContext
from grader.i18n import Text, tr

lab = Lab("lab10", "HTTP 服务", "HTTP service")
lab.forbid(
    "parse_request_line",
    "framework.http_protocol:parse_request_line",
    why=(
        "这一课就是亲手切分请求行、逐段检查",
        "this lab is about splitting the request line and checking each part yourself",
    ),
)
lab.forbid(
    "build_response",
    "framework.http_protocol:build_response",
    "framework.http_protocol:response_head",
    why=(
        "这一课就是亲手拼出状态行、三个头部、空行和正文",
        "this lab is about writing the status line, three headers, blank line and body",
    ),
)

PARSE, BUILD = "parse_request_line", "build_response"
Hint = tuple[str, str]  # one (zh, en) hint of a single check

# Hints of single checks of build_response: what the failing assertion means, where to look.
HINT_BYTES = (
    "响应要写进 socket，而 socket 只传 bytes：返回值必须是 bytes，不能是 str（报告写出了它的类型）",
    "The response goes onto a socket, which carries bytes: the value you return must be "
    "bytes, not str (the report names its type)",
)
HINT_HEAD_END = (
    "报告找不到结束头部的空行：头部的每一行都以 \\r\\n 结尾，最后一个头部之后再来一个 \\r\\n，"
    "正文为空时也一样",
    "The report found no blank line ending the head: every line of the head ends in "
    "\\r\\n, and one more \\r\\n follows the last header, an empty body included",
)
HINT_STATUS = (
    "状态行逐个字符对照：HTTP/1.1、一个空格、状态码、一个空格、原因短语，再接 \\r\\n",
    "Compare the status line character by character: HTTP/1.1, one space, the code, one "
    "space, the reason phrase, then \\r\\n",
)
HINT_HEADERS = (
    "报告列出了缺少、重复或值不对的头部，以及你写出的每一行：三个头部各出现一次，"
    "每行都是 'Name: value'",
    "The report names the header that is missing, repeated or wrong, and lists each line you "
    "wrote: the three headers appear once each, every line as 'Name: value'",
)
HINT_LENGTH = (
    "Content-Length 是正文编码之后的字节数：中文字符在 UTF-8 里每个占 3 个字节，"
    "所以字符数和字节数不一样",
    "Content-Length is the number of bytes of the encoded body: a Chinese character takes 3 "
    "bytes in UTF-8, so characters and bytes differ",
)
HINT_BODY = (
    "空行之后就是正文，一个字节不差，后面什么也不加：对照期望和实际，看多出、少了或被改动的字节",
    "After the blank line comes the body, byte for byte, and nothing after it: compare "
    "expected and got for bytes that are extra, missing or changed",
)
HINT_BYTES_BODY = (
    "bytes 正文已经是字节了：原样放在空行之后，它的长度就是 len(body)；不要先把它变成 str",
    "A bytes body is bytes already: put it after the blank line as it is, and its length is "
    "len(body); do not turn it into a str first",
)
WAIT = 5.0  # seconds a loopback socket may wait; a local exchange takes milliseconds


def show(x: Any, n: int = 120) -> str:
    """repr of a value, cut to n characters."""
    text = repr(x)
    return text if len(text) <= n else text[:n] + "…"


def check_parse(
    t: TestContext, name: tuple[str, str], line: str, want: tuple[str, ...], hint: Hint
) -> None:
    """parse_request_line(line) returns the tuple `want`; `hint` is this case's own."""
    call = t.returns(name, PARSE, line, hint=hint)
    if call is not None:
        t.equal(name, call.value, want, hint=hint)


class Response(NamedTuple):
    """A response cut at its first blank line: status line, header lines, body bytes."""

    status_line: str
    headers: list[tuple[str, str]]  # (name, value stripped); a line without ':' has name ""
    lines: list[str]
    body: bytes


def cut(raw: bytes) -> Response | Text:
    """The parts of `raw`, or why it cannot be read as a response."""
    end = raw.find(b"\r\n\r\n")
    if end < 0:
        lf = b"\n\n" in raw
        return tr(
            "找不到结束头部的空行 \\r\\n\\r\\n" + ("（行尾只有 \\n？）" if lf else ""),
            "no blank line \\r\\n\\r\\n ends the head"
            + (" (lines end in \\n only?)" if lf else ""),
        )
    lines = raw[:end].decode("utf-8", errors="replace").split("\r\n")
    headers = []
    for text in lines[1:]:
        name, sep, value = text.partition(":")
        headers.append((name if sep else "", value.strip(" \t")))
    return Response(lines[0], headers, lines, raw[end + 4 :])


def response_of(t: TestContext, name: tuple[str, str], *args: Any) -> Response | None:
    """Call build_response; record FAIL on `name` unless it returned readable bytes."""
    call = t.returns(name, BUILD, *args)
    if call is None:
        return None
    raw = call.value
    if not isinstance(raw, bytes):
        t.check(
            name,
            False,
            tr(
                f"期望 bytes，实际返回 {type(raw).__name__}：{show(raw)}（最后要 .encode()）",
                f"expected bytes, got {type(raw).__name__}: {show(raw)} (encode at the end)",
            ),
            hint=HINT_BYTES,
        )
        return None
    parts = cut(raw)
    if isinstance(parts, Text):
        t.check(
            name,
            False,
            parts + tr(f"\n返回值 {show(raw)}", f"\nreturned {show(raw)}"),
            hint=HINT_HEAD_END,
        )
        return None
    return parts


def header_problems(resp: Response, want: dict[str, str]) -> list[Text]:
    """Each wanted header must appear once (its name in any case) with that value."""
    problems = [
        tr(f"{line!r} 不是 'Name: value' 的形式", f"{line!r} is not 'Name: value'")
        for line in resp.lines[1:]
        if ":" not in line
    ]
    for name, value in want.items():
        found = [v for n, v in resp.headers if n.strip().lower() == name.lower()]
        if not found:
            problems.append(tr(f"缺少 {name}", f"{name} is missing"))
        elif len(found) > 1:
            problems.append(
                tr(f"{name} 出现了 {len(found)} 次", f"{name} appears {len(found)} times")
            )
        elif (found[0].lower() if name == "Connection" else found[0]) != value:
            got = found[0]
            problems.append(
                tr(f"{name} 是 {got!r}，应为 {value!r}", f"{name}: {got!r}, expected {value!r}")
            )
    return problems


def check_case(
    t: TestContext,
    label: tuple[str, str],
    *args: Any,
    headers: Hint = HINT_HEADERS,
    body_hint: Hint = HINT_BODY,
) -> None:
    """Three checks of one response: its status line, its three headers, its body.

    `headers` and `body_hint` are the hints of the last two, for a case that tests one
    thing in particular (a Chinese body's length in bytes).
    """
    status, reason, content_type, body = args
    data = body.encode("utf-8") if isinstance(body, str) else body
    zh, en = label
    line = f"HTTP/1.1 {status} {reason}"
    names = [
        (f"{zh}：状态行 {line}", f"{en}: status line {line}"),
        (
            f"{zh}：三个头部，Content-Length: {len(data)}",
            f"{en}: three headers, Content-Length: {len(data)}",
        ),
        (f"{zh}：空行之后正好是正文", f"{en}: the body, exactly, after the blank line"),
    ]
    resp = response_of(t, names[0], *args)
    if resp is None:
        return
    got = show(resp.status_line)
    t.check(names[0], resp.status_line == line, tr(f"实际 {got}", f"got {got}"), hint=HINT_STATUS)
    want = {"Content-Type": content_type, "Content-Length": str(len(data)), "Connection": "close"}
    problems = header_problems(resp, want)
    head = show(resp.lines, 300)
    detail = tr(
        "；".join(p.zh for p in problems) + f"\n头部：{head}",
        "; ".join(p.en for p in problems) + f"\nhead: {head}",
    )
    t.check(names[1], not problems, detail, hint=headers)
    got, exp = show(resp.body), show(data)
    t.check(
        names[2],
        resp.body == data,
        tr(f"期望 {exp}\n实际 {got}", f"expected {exp}\ngot      {got}"),
        hint=body_hint,
    )


# -- parse_request_line ---------------------------------------------------------------------

PARSE_HINTS = [
    (
        '按单个空格切分：line.split(" ") 必须正好得到 3 段；逐段检查，最后 return 一个元组。',
        'Split on single spaces: line.split(" ") must give exactly 3 parts; check each part, '
        "then return a tuple.",
    ),
    (
        '方法用 re.fullmatch(r"[A-Z]+", m)（"G3T".isupper() 也是 True）；路径的每个字符在 '
        '0x21–0x7E 之间；版本用 re.fullmatch(r"HTTP/[0-9]\\.[0-9]", v)（\\d 也匹配 "١"）。',
        'The method: re.fullmatch(r"[A-Z]+", m) ("G3T".isupper() is True too); every path '
        'character in 0x21-0x7E; the version: re.fullmatch(r"HTTP/[0-9]\\.[0-9]", v) '
        '(\\d also matches "١").',
    ),
]


def quoted(line: str) -> str:
    """A request line as the report shows it: in double quotes, control characters escaped."""
    return '"' + repr(line)[1:-1].replace('"', '\\"') + '"'


@lab.test(
    "parse_request_line：C 课程的例子", "parse_request_line: the C course's cases", hint=PARSE_HINTS
)
def parse_basic(t: TestContext) -> None:
    triple = (
        "返回值是一个元组，正好三个 str（方法、路径、版本），和行里写的一字不差；"
        "报告写出了实际返回的值和类型",
        "The result is a tuple of exactly three str (method, path, version), each exactly as "
        "in the line; the report shows the value and type that came back",
    )
    for line in ("GET /health HTTP/1.1", "POST /v1/chat/completions HTTP/1.1"):
        want = tuple(line.split(" "))
        arrow = f"{quoted(line)} → {want}"
        check_parse(t, (arrow, arrow), line, want, triple)
    t.raises(
        ('"GETMALFORMED"（没有空格）→ ValueError', '"GETMALFORMED" (no space) → ValueError'),
        ValueError,
        PARSE,
        "GETMALFORMED",
        hint=(
            "切不出三段的行要抛 ValueError：不要返回 None、空元组或更短的元组",
            "A line that does not split into three parts raises ValueError: do not return "
            "None, an empty tuple or a shorter one",
        ),
    )


@lab.test(
    "parse_request_line：其他合法的请求行",
    "parse_request_line: other valid lines",
    hint=PARSE_HINTS,
)
def parse_forms(t: TestContext) -> None:
    visible = (
        "路径的每个字符只要在 0x21–0x7E（可见 ASCII）之间就合法，标点也算：不要只允许字母、"
        "数字和几个符号，也不要求以 / 开头",
        "Any character from 0x21 to 0x7E (visible ASCII), punctuation included, is valid in the "
        "path: do not allow only letters, digits and a few signs, nor require a leading /",
    )
    cases: list[tuple[str, str, str, Hint]] = [
        (
            "DELETE /items/7 HTTP/1.0",
            "其他方法、HTTP/1.0",
            "another method, HTTP/1.0",
            (
                "任何大写字母组成的方法都合法，HTTP/1.0 和 HTTP/1.1 一样合法："
                "版本只规定格式，不规定是哪个数",
                "Any method of capital letters is valid, and HTTP/1.0 as much as HTTP/1.1: the "
                "version has a form, not one fixed value",
            ),
        ),
        (
            "GET /search?q=mini%20llm&n=5 HTTP/1.1",
            "查询串和 %20 原样保留",
            "query and %20 kept as they are",
            (
                "路径按收到的样子原样返回：包括 ? 后面的查询串和 %20 这样的转义，不解码，也不截断",
                "The path comes back exactly as received, the query after ? and escapes such "
                "as %20 included: no decoding, no cutting",
            ),
        ),
        ("OPTIONS * HTTP/1.1", "路径可以是 *", "the path may be *", visible),
        (
            "GET http://127.0.0.1:8080/health HTTP/1.1",
            "绝对 URL 形式",
            "the absolute URL form",
            visible,
        ),
        (
            "PATCH /~a/b_c-d.e!$&'()*+,;=:@[] HTTP/1.1",
            "路径里的标点",
            "punctuation in the path",
            visible,
        ),
    ]
    for line, zh, en, hint in cases:
        want = tuple(line.split(" "))
        check_parse(t, (f"{zh}：{quoted(line)}", f"{en}: {quoted(line)}"), line, want, hint)


EDGE = (
    "行首或行尾的空格会切出一个空段：不要先 strip()，按收到的原样判断整行",
    "A space at either end leaves an empty part there: do not strip() first, judge the line "
    "as it came",
)
SPLIT = (
    "部分之间只能是一个空格：这一行切不出三个非空的段，所以不是合法的请求行",
    "The parts are separated by one space each: this line does not give three non-empty "
    "parts, so it is not a request line",
)
MALFORMED: list[tuple[str, str, str, Hint]] = [
    (
        "GET /path",
        "只有一个空格",
        "one space only",
        (
            "两段不是请求行：必须正好三段，否则 ValueError",
            "Two parts are not a request line: exactly three, or ValueError",
        ),
    ),
    ("GET  /health HTTP/1.1", "两个空格连在一起", "two spaces in a row", SPLIT),
    (" GET /health HTTP/1.1", "开头多一个空格", "a leading space", EDGE),
    ("GET /health HTTP/1.1 ", "结尾多一个空格", "a trailing space", EDGE),
    (
        "GET\t/health\tHTTP/1.1",
        "用制表符分隔",
        "tabs instead of spaces",
        (
            "只有空格字符才分隔各段：制表符不是分隔符，切开之后也不是合法的字符",
            "Only the space character separates the parts: a tab is no separator, and no "
            "valid character once the line is split",
        ),
    ),
    ("GET /a b HTTP/1.1", "路径里有空格（四段）", "a space in the path (four parts)", SPLIT),
    (
        "get /health HTTP/1.1",
        "小写的方法",
        "a lowercase method",
        (
            "方法按收到的样子判断：小写的方法要拒绝，不要把它转成大写再接受",
            "The method is judged as it came: refuse a lowercase one, do not upper-case it and "
            "accept it",
        ),
    ),
    (
        "G3T /health HTTP/1.1",
        "方法里有数字",
        "a digit in the method",
        (
            "方法的每个字符都必须是 A–Z 的字母：有一个数字就不合法，即使其余都是大写",
            "Every character of the method is a letter A-Z: one digit makes it invalid, even "
            "when the rest is upper-case",
        ),
    ),
    (
        "GÉT /health HTTP/1.1",
        "方法里有非 ASCII 字母",
        "a non-ASCII letter in the method",
        (
            "只有 26 个 ASCII 大写字母：É 在 Unicode 里是大写字母，但不能出现在方法里",
            "Only the 26 ASCII capitals: É is an upper-case letter in Unicode, but not one of a "
            "method",
        ),
    ),
    (
        "GET /健康 HTTP/1.1",
        "路径里有非 ASCII 字符",
        "non-ASCII in the path",
        (
            "路径的每个字符都在 0x21–0x7E 之间：“健”远在这个范围之外",
            "Every path character lies within 0x21-0x7E: a Chinese character is far beyond "
            "that range",
        ),
    ),
    (
        "GET /a\x7fb HTTP/1.1",
        "路径里有控制字符 DEL",
        "the control character DEL in the path",
        (
            "DEL（0x7F）是控制字符，恰好在可见范围 0x21–0x7E 之外：逐个字符检查路径",
            "DEL (0x7F) is a control character, just past the visible range 0x21-0x7E: check "
            "the path character by character",
        ),
    ),
    (
        "GET /health HTTP/1",
        "版本少了 .digit",
        "a version without .digit",
        (
            "版本是 HTTP/、一位数字、点、一位数字：HTTP/1 少了点和第二位数字",
            "A version is HTTP/, one digit, a dot, one digit: HTTP/1 lacks the dot and the "
            "second digit",
        ),
    ),
    (
        "GET /health http/1.1",
        "小写的版本",
        "a lowercase version",
        (
            '版本区分大小写："http/1.1" 不是 "HTTP/1.1"',
            'The version is case-sensitive: "http/1.1" is not "HTTP/1.1"',
        ),
    ),
    (
        "GET /health HTTP/1.1x",
        "版本后面多了字符",
        "characters after the version",
        (
            "第二位数字之后什么也不能有：比较整个版本，而不只是它的开头",
            "Nothing may follow the second digit: judge the whole version, not only its start",
        ),
    ),
    (
        "GET /health HTTP/١.١",
        "版本用了非 ASCII 数字",
        "non-ASCII digits in the version",
        (
            "版本里只能是 ASCII 数字 0–9：“١”在 Unicode 里也算数字（isdigit、\\d），"
            "但不能用在版本里",
            "Only the ASCII digits 0-9: ١ is a digit in Unicode (isdigit, \\d), but not in a "
            "version",
        ),
    ),
    (
        "",
        "空行",
        "an empty line",
        (
            "空行不是请求行：抛 ValueError，而不是返回空元组或抛 IndexError",
            "An empty line is no request line: raise ValueError, not an IndexError, and return "
            "no empty tuple",
        ),
    ),
]


@lab.test(
    "parse_request_line：拒绝不合格式的行",
    "parse_request_line: rejects malformed lines",
    hint=[
        (
            '先用 split(" ") 切分并要求正好 3 段、每段非空：多余的空格会产生空字符串段。'
            "不要先 strip()，也不要用不带参数的 split()：它们会悄悄接受多余的空白。",
            'Split with split(" ") and require exactly 3 non-empty parts: an extra space '
            "makes an empty part. Do not strip() first or use split() without an argument: "
            "both quietly accept extra whitespace.",
        ),
        *PARSE_HINTS[1:],
    ],
)
def parse_malformed(t: TestContext) -> None:
    for line, zh, en, hint in MALFORMED:
        name = (f"{zh}：{quoted(line)} → ValueError", f"{en}: {quoted(line)} → ValueError")
        t.raises(name, ValueError, PARSE, line, hint=hint)
    digits = (
        "多位数字的版本被接受了：版本是 HTTP/、一位数字、点、一位数字；"
        "允许数字重复的写法会放过 HTTP/11.1 和 HTTP/1.10。",
        "A version with several digits was accepted: a version is HTTP/, one digit, "
        "a dot, one digit; a pattern that lets the digit repeat lets HTTP/11.1 and "
        "HTTP/1.10 through.",
    )
    dot = (
        "两个数字之间不是点也被接受了：正则里没转义的 . 匹配任何字符，要写 \\.。",
        "A version without a dot between its digits was accepted: an unescaped . in a "
        "regex matches any character; write \\. for the dot itself.",
    )
    for line, zh, en, hint in [
        ("GET /health HTTP/11.1", "主版本号有两位数字", "a two-digit major version", digits),
        ("GET /health HTTP/1.10", "次版本号有两位数字", "a two-digit minor version", digits),
        ("GET /health HTTP/1x1", "两个数字之间不是点", "no dot between the digits", dot),
    ]:
        name = (f"{zh}：{quoted(line)} → ValueError", f"{en}: {quoted(line)} → ValueError")
        t.raises(name, ValueError, PARSE, line, hint=hint)


@lab.test(
    "parse_request_line：CR、LF 与类型",
    "parse_request_line: CR, LF and the type",
    hint=(
        '请求行交给你时已经去掉了 \\r\\n；行里任何位置出现 "\\r" 或 "\\n" 都要抛 ValueError。'
        "正则的 $ 能匹配结尾的 \\n 之前：用 re.fullmatch。",
        'The request line reaches you without its \\r\\n; a "\\r" or "\\n" anywhere in it '
        "raises ValueError. A regex $ also matches before a final \\n: use re.fullmatch.",
    ),
)
def parse_injection(t: TestContext) -> None:
    ending = (
        "请求行交到你手里时已经没有行尾了：行里剩下的 \\r 或 \\n 说明它不合格，"
        "要拒绝，不要把它去掉再接着解析",
        "The request line reaches you without its line ending: a \\r or \\n left in it "
        "makes it malformed; refuse it, do not strip it off and go on",
    )
    for line, zh, en, hint in [
        ("GET /health HTTP/1.1\r\n", "结尾带着 \\r\\n", "a trailing \\r\\n", ending),
        (
            "GET /health HTTP/1.1\n",
            "结尾带着 \\n",
            "a trailing \\n",
            (
                "只有一个 \\n 在最末尾也要拒绝：检查整个字符串，包括最后一个字符",
                "A single \\n at the very end is refused too: check the whole string, its last "
                "character included",
            ),
        ),
        (
            "GET /health HTTP/1.1\r",
            "结尾带着 \\r",
            "a trailing \\r",
            (
                "单独一个 \\r 也要拒绝：\\r 和 \\n 各自都要检查",
                "A \\r alone is refused as well: check for \\r and for \\n, each on its own",
            ),
        ),
    ]:
        name = (f"{zh}：{quoted(line)} → ValueError", f"{en}: {quoted(line)} → ValueError")
        t.raises(name, ValueError, PARSE, line, hint=hint)
    t.raises(
        ("bytes 而不是 str → TypeError", "bytes instead of str → TypeError"),
        TypeError,
        PARSE,
        b"GET /health HTTP/1.1",
        hint=(
            "传进来 bytes 是调用者的错误：抛 TypeError，不要替调用者解码",
            "A bytes line is the caller's mistake: raise TypeError, do not decode it for them",
        ),
    )


# -- build_response -------------------------------------------------------------------------

BUILD_HINTS = [
    (
        '先 body_bytes = body.encode("utf-8")（body 已经是 bytes 就原样用），'
        "Content-Length 写 len(body_bytes)；头部拼成 str，每行以 \\r\\n 结尾，"
        "再加一个 \\r\\n，最后 head.encode() + body_bytes。",
        'First body_bytes = body.encode("utf-8") (use body as it is when it is bytes), '
        "Content-Length is len(body_bytes); build the head as a str, each line ending in "
        "\\r\\n, then one more \\r\\n, and return head.encode() + body_bytes.",
    ),
    (
        "报告里的 head 一项列出了你的每一行头部：对照一下名字、冒号后的空格和值。",
        "The 'head' item in the report lists your header lines: compare the names, the "
        "space after the colon and the values.",
    ),
]


@lab.test(
    "build_response：C 课程的两个例子（数字改对了）",
    "build_response: the C course's two cases, numbers corrected",
    hint=BUILD_HINTS,
)
def build_basic(t: TestContext) -> None:
    call = t.call(BUILD, 200, "OK", "application/json", '{"status":"ok"}')
    kind = type(call.value).__name__
    if not t.check(
        ("200 OK：返回 bytes", "200 OK: returns bytes"),
        isinstance(call.value, bytes),
        tr(f"实际返回 {kind}：{show(call.value)}", f"got {kind}: {show(call.value)}"),
        hint=HINT_BYTES,
    ):
        return
    check_case(t, ("200 OK", "200 OK"), 200, "OK", "application/json", '{"status":"ok"}')
    check_case(t, ("404", "404"), 404, "Not Found", "application/json", '{"error":"missing"}')


@lab.test(
    "build_response：Content-Length 数的是字节",
    "build_response: Content-Length counts bytes",
    hint=[
        (
            '"你好" 是 2 个字符、6 个字节：len(str) 数字符，len(bytes) 才是字节数。',
            "A Chinese character is 1 character and 3 bytes: len(str) counts characters, "
            "len(bytes) counts bytes.",
        ),
        *BUILD_HINTS,
    ],
)
def build_bytes(t: TestContext) -> None:
    reply = '{"reply":"你好，世界"}'
    check_case(
        t, ("中文正文", "a Chinese body"), 200, "OK", "application/json", reply, headers=HINT_LENGTH
    )
    png = b"\x89PNG\r\n\x1a\n\x00\xff\xfe"
    check_case(
        t,
        ("bytes 正文原样发送", "a bytes body, sent as it is"),
        200,
        "OK",
        "image/png",
        png,
        headers=HINT_BYTES_BODY,
        body_hint=HINT_BYTES_BODY,
    )
    check_case(t, ("空正文", "an empty body"), 204, "No Content", "text/plain", "")


@lab.test(
    "build_response：处处 CRLF",
    "build_response: CRLF everywhere",
    hint=[
        (
            "每一行（状态行和每个头部）都以 \\r\\n 结尾，头部之后再一个 \\r\\n；正文原样拼在后面，"
            '不要对整个响应做 replace("\\n", "\\r\\n")：那会改掉正文。',
            "Every line (the status line and each header) ends in \\r\\n, then one more "
            '\\r\\n; the body follows unchanged. Do not replace("\\n", "\\r\\n") over the '
            "whole response: that changes the body.",
        ),
        *BUILD_HINTS,
    ],
)
def build_crlf(t: TestContext) -> None:
    body = "<p>a</p>\r\n\r\n<p>b</p>\nend\n"
    name = (
        "头部的每一行都以 \\r\\n 结尾（没有单独的 \\n 或 \\r）",
        "every line of the head ends in \\r\\n (no bare \\n or \\r)",
    )
    call = t.returns(name, BUILD, 200, "OK", "text/html; charset=utf-8", body)
    if call is not None:
        raw = call.value if isinstance(call.value, bytes) else b""
        end = raw.find(b"\r\n\r\n")
        head = raw[: end + 2] if end >= 0 else raw
        bare = head.replace(b"\r\n", b"").count(b"\n") + head.replace(b"\r\n", b"").count(b"\r")
        t.check(
            name,
            end >= 0 and bare == 0,
            tr(f"头部：{show(head, 300)}", f"head: {show(head, 300)}"),
            hint=(
                "看报告里的 head（从你返回的 bytes 里读出）：每一行，包括状态行，都以 \\r\\n "
                "结尾，没有单独的 \\n 或 \\r；头部以一个空行结束",
                "Look at the head in the report (read from the bytes you return): every line, "
                "the status line included, ends in \\r\\n, with no \\n or \\r alone; a blank "
                "line ends the head",
            ),
        )
    check_case(
        t,
        ("正文里有 \\r\\n\\r\\n 和 \\n", "a body with \\r\\n\\r\\n and \\n"),
        200,
        "OK",
        "text/html",
        body,
        body_hint=(
            "正文原样发送：它自己的 \\r\\n\\r\\n 和 \\n 都保持不变；改写换行只能作用在头部上",
            "The body is sent unchanged: its own \\r\\n\\r\\n and \\n stay as they are; "
            "any rewriting of line endings touches the head only",
        ),
    )


@lab.test(
    "build_response：拒绝头部注入",
    "build_response: refuses header injection",
    hint=(
        'reason 或 content_type 里只要有 "\\r" 或 "\\n"（单独出现也算）就抛 ValueError：'
        "否则它后面的文字会变成一行新的头部。",
        'A "\\r" or a "\\n" (either one alone too) in reason or content_type raises '
        "ValueError: otherwise the text after it becomes a header line of its own.",
    ),
)
def build_injection(t: TestContext) -> None:
    cases: list[tuple[tuple[Any, ...], str, str, Hint]] = [
        (
            (200, "OK\r\nSet-Cookie: session=evil", "text/plain", "x"),
            "reason 里有 \\r\\n",
            "\\r\\n in reason",
            (
                "reason 里有换行时要抛 ValueError，在拼出任何东西之前："
                "否则 Set-Cookie 就成了一行新头部",
                "A line break in reason raises ValueError before anything is built: otherwise "
                "Set-Cookie becomes a header line of its own",
            ),
        ),
        (
            (200, "OK", "text/html\nX-Evil: 1", "x"),
            "content_type 里有 \\n",
            "\\n in content_type",
            (
                "content_type 也会写进头部，所以它和 reason 一样要检查："
                "单独的 \\n 就足以抛 ValueError",
                "content_type goes into the head too, so it is checked like reason, and a \\n "
                "alone is enough to raise ValueError",
            ),
        ),
        (
            (200, "OK\rX-Evil: 1", "text/plain", "x"),
            "reason 里有单独的 \\r",
            "a bare \\r in reason",
            (
                "单独一个 \\r 也要抛 ValueError：\\r 和 \\n 各自检查，而不只是检查 \\r\\n 这一对",
                "A \\r alone raises ValueError too: look for \\r and for \\n each on its own, "
                "not only for the pair \\r\\n",
            ),
        ),
    ]
    for args, zh, en, hint in cases:
        t.raises((f"{zh} → ValueError", f"{en} → ValueError"), ValueError, BUILD, *args, hint=hint)


# -- real traffic on a loopback socket (sockets in the grader, plain strings and bytes cross) --


def read_head(conn: socket.socket) -> bytes:
    """Bytes of one request up to its blank line, then its body (by Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(v)
            for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")[1:])
            if k.strip().lower() == b"content-length"
        ),
        0,
    )
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head


def capture_request_lines(requests: list[tuple[str, str, bytes | None]]) -> list[str]:
    """Send each (method, target, body) with http.client; the request lines that arrived."""
    lines: list[str] = []
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(WAIT)
        port = server.getsockname()[1]

        def serve() -> None:
            for _ in requests:
                conn, _ = server.accept()
                with conn:
                    conn.settimeout(WAIT)
                    head = read_head(conn)
                    lines.append(head.split(b"\r\n", 1)[0].decode("latin-1"))
                    conn.sendall(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        for method, target, body in requests:
            client = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
            headers = {"Content-Type": "application/json"} if body is not None else {}
            client.request(method, target, body=body, headers=headers)
            client.getresponse().read()
            client.close()
        thread.join(WAIT)
    return lines


class Read(NamedTuple):
    """What http.client made of a response, or the error it raised."""

    version: int = 0
    status: int = 0
    reason: str = ""
    headers: dict[str, str | None] | None = None
    body: bytes = b""
    error: str = ""


def fetch(raw: bytes) -> Read:
    """Serve `raw` to one http.client GET on a loopback socket; what the client read."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(WAIT)
        port = server.getsockname()[1]

        def serve() -> None:
            conn, _ = server.accept()
            with conn:
                conn.settimeout(WAIT)
                read_head(conn)
                conn.sendall(raw)
                conn.shutdown(socket.SHUT_WR)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
        try:
            client.request("GET", "/")
            resp = client.getresponse()
            names = ("Content-Type", "Content-Length", "Connection")
            headers = {n: resp.getheader(n) for n in names}
            got = Read(resp.version, resp.status, resp.reason, headers, resp.read())
        except (http.client.HTTPException, OSError) as e:
            got = Read(error=f"{type(e).__name__}: {e}")
        finally:
            client.close()
        thread.join(WAIT)
    return got


REQUESTS: list[tuple[str, str, bytes | None]] = [
    ("GET", "/health", None),
    ("POST", "/v1/chat/completions", b'{"messages": [{"role": "user", "content": "hi"}]}'),
    ("PUT", "/files/a%20b.txt?overwrite=1", b"{}"),
    ("DELETE", "/items/7", None),
    ("HEAD", "/", None),
    ("OPTIONS", "*", None),
]


@lab.test(
    "真实流量：http.client 发出的请求行",
    "real traffic: request lines sent by http.client",
    hint=PARSE_HINTS,
)
def traffic_requests(t: TestContext) -> None:
    lines = capture_request_lines(REQUESTS)
    if len(lines) != len(REQUESTS):
        raise RuntimeError(f"loopback capture got {len(lines)} of {len(REQUESTS)} request lines")
    calls = t.map(PARSE, [(line,) for line in lines])
    want = [(m, target, "HTTP/1.1") for m, target, _ in REQUESTS]
    bad = [
        (line, c.value, w)
        for line, c, w in zip(lines, calls, want, strict=True)
        if c.value != w or type(c.value) is not tuple
    ]
    detail = None
    if bad:
        line, got, w = bad[0]
        detail = tr(
            f"请求行 {quoted(line)}\n期望 {w}\n实际 {show(got)}",
            f"request line {quoted(line)}\nexpected {w}\ngot      {show(got)}",
        )
    t.check(
        (
            f"回环 socket 上收到的 {len(lines)} 个请求行"
            "（GET、POST、PUT、DELETE、HEAD、OPTIONS）都解析对了",
            f"the {len(lines)} request lines received on a loopback socket "
            "(GET, POST, PUT, DELETE, HEAD, OPTIONS) parse right",
        ),
        not bad,
        detail,
        hint=(
            "http.client 发出的都是普通的请求行：报告给出了第一个解析错的；"
            "多半是前面某个 parse_request_line 测试的同一个原因",
            "http.client sends ordinary request lines: the report shows the first one that "
            "parsed wrong; most often an earlier parse_request_line test fails for the same "
            "reason",
        ),
    )


SERVED: list[tuple[tuple[Any, ...], str, str]] = [
    ((200, "OK", "application/json", '{"status":"ok"}'), "200 的 JSON", "a 200 with JSON"),
    (
        (404, "Not Found", "application/json", '{"error":"missing"}'),
        "404 Not Found",
        "a 404 Not Found",
    ),
    (
        (200, "OK", "text/plain; charset=utf-8", "你好，世界！\n第二行"),
        "中文正文",
        "a Chinese body",
    ),
]


@lab.test(
    "真实流量：http.client 读取你的响应",
    "real traffic: http.client reads your responses",
    hint=BUILD_HINTS,
)
def traffic_responses(t: TestContext) -> None:
    for args, zh, en in SERVED:
        name = (
            f"{zh}：http.client 读到的状态、头部和正文都对",
            f"{en}: http.client reads the right status, headers and body",
        )
        call = t.returns(name, BUILD, *args)
        if call is None:
            continue
        if not isinstance(call.value, bytes):
            what = type(call.value).__name__
            t.check(
                name,
                False,
                tr(
                    f"返回的是 {what}，不是 bytes：无法发送",
                    f"returned {what}, not bytes: nothing to send",
                ),
                hint=HINT_BYTES,
            )
            continue
        status, reason, ctype, body = args
        data = body.encode("utf-8")
        got = fetch(call.value)
        want = Read(
            11,
            status,
            reason,
            {"Content-Type": ctype, "Content-Length": str(len(data)), "Connection": "close"},
            data,
        )
        if got.error:
            msg = tr(f"http.client 报错 {got.error}", f"http.client raised {got.error}")
        else:
            msg = tr(
                f"期望 {show(want, 300)}\n实际 {show(got, 300)}",
                f"expected {show(want, 300)}\ngot      {show(got, 300)}",
            )
        t.check(
            name,
            got == want,
            msg,
            hint=(
                "对照 http.client 读到的和期望的（version 11 就是 HTTP/1.1）：状态、三个头部、"
                "正文；前面的 build_response 测试会把同一个问题讲得更细",
                "Compare what http.client read with what was meant (version 11 is HTTP/1.1): "
                "status, the three headers, the body; the build_response tests above show the "
                "same problem in more detail",
            ),
        )

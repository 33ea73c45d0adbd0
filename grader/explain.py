"""Explain, for the report, a call into student code that did not return normally.

A TODO stub, an exception (with the last frames of the student's own file), a timeout, a
process that exited or was killed, an output flood, a missing function, a module that does
not import: each becomes one status and one report line that says what happened and what
to try. The grader's own failures are worded apart, so a student is never blamed for them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from framework.tensor import Tensor
from grader.codec import Handle
from grader.i18n import Text, tr
from grader.results import CheckResult, Status
from grader.sandbox.session import CallOutcome

__all__ = [
    "abort_line",
    "brief",
    "call_error",
    "clean",
    "forbidden_line",
    "import_message",
    "where",
]

# C0 and C1 controls but tab and newline (ESC, CR, NUL, ...), zero-width and bidi marks,
# the Unicode line and paragraph separators, bidi embeddings, overrides and isolates, BOM.
_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]"
)


def clean(text: Any, *, limit: int | None = 2000, one_line: bool = False) -> str:
    """Text from the sandbox made safe to print: no terminal escapes or control characters
    (ESC, CR, NUL and the other C0/C1 controls but tab and newline are shown as ``\\x1b``,
    ``\\r``, ``\\x00``), no bidi overrides or Unicode line separators (``\\u202e``,
    ``\\u2028``), no unencodable surrogates, at most `limit` characters (None: any), and
    with `one_line` no line breaks (a name cannot start a forged report line). Every
    renderer of a report passes student text (names, messages, printed output) through it,
    and text it cleaned before comes back the same (unless it is over `limit`)."""
    s = text if isinstance(text, str) else repr(text)
    if limit is not None and len(s) > limit:
        s = s[:limit] + f"… ({len(s)} chars)"
    s = s.encode("utf-8", "backslashreplace").decode("utf-8")
    if one_line:
        s = s.replace("\r", "\\r").replace("\n", "\\n").replace("\t", " ")
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), s)


def _typ(exc: dict[str, Any]) -> str:
    return clean(exc.get("type", "?"), limit=100, one_line=True)


def _msg(exc: dict[str, Any]) -> str:
    # One line: a message with line breaks would print lines of its own in the report
    # ("  [PASS] ..." under the ERROR), so its breaks are shown as \n.
    return clean(exc.get("message", ""), one_line=True)


def brief(x: Any) -> str:
    """A one-line description of an argument, for naming which call of a sweep failed."""
    if isinstance(x, Handle):
        return x.type_name.rsplit(".", 1)[-1]
    if isinstance(x, Tensor | np.ndarray):
        return f"{type(x).__name__}{list(x.shape)}"
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."


_SIGNALS = {9: "SIGKILL", 11: "SIGSEGV", 6: "SIGABRT", 15: "SIGTERM", 25: "SIGXFSZ"}


def where(exc: dict[str, Any]) -> tuple[str, str]:
    """The last frames of the student's own code, indented, for (zh, en) messages."""
    frames = exc.get("frames")
    if not isinstance(frames, list) or not frames:
        return "", ""
    lines = []
    for f in frames[-3:]:
        if not isinstance(f, dict):
            continue
        place = clean(f"{f.get('file', '?')}:{f.get('line', '?')}", limit=200, one_line=True)
        func = clean(f.get("func", "?"), limit=100, one_line=True)
        code = clean(f.get("code", ""), limit=200, one_line=True)
        lines.append(f"  {place} in {func}\n    {code}")
    if not lines:
        return "", ""
    text = "\n".join(lines)
    return "\n" + text, "\n" + text


def call_error(name: str, out: CallOutcome, args: Sequence[Any] | None = None) -> Text:
    """The message for a call that raised: the call, type, message and the student's frames."""
    call = _call(name, args)
    return tr(f"{call} 抛出了 ", f"{call} raised ") + _raised(out.exc or {})


def _raised(exc: dict[str, Any]) -> Text:
    wz, we = where(exc)
    typ, msg = _typ(exc), _msg(exc)
    return tr(f"{typ}: {msg}{wz}", f"{typ}: {msg}{we}")


def forbidden_line(name: str, out: CallOutcome, why: Text | None) -> CheckResult:
    """The FAIL line for a student function that called a forbidden framework function."""
    targets = (out.exc or {}).get("targets") or []
    used = ", ".join(clean(t, limit=100, one_line=True) for t in targets) or "?"
    reason = (
        why if why is not None else tr("这正是这个实验要你自己写的", "that is what you write here")
    )
    return CheckResult(
        tr(f"{name} 调用了框架里的 {used}", f"{name} called the framework's {used}"),
        Status.FAIL,
        tr("这个函数要你自己实现，不能调用 ", "this function is yours to write, without calling ")
        + used
        + tr("：", ": ")
        + reason,
        out.output,
        out.output_bytes,
    )


def _call(name: str, args: Sequence[Any] | None) -> str:
    return f"{name}({', '.join(brief(a) for a in args)})" if args is not None else f"{name}(...)"


def abort_line(
    name: str, out: CallOutcome, args: Sequence[Any] | None = None
) -> tuple[Status, CheckResult]:
    """The status and report line for a call that did not return normally.

    With `args`, the line names the call with a short form of its arguments
    (``attention_scores(Tensor[3, 2], Tensor[4, 2], 0.25)``) so it can be reproduced.
    """
    exc = out.exc or {}
    call = _call(name, args)
    if out.kind == "todo":
        return Status.TODO, CheckResult(
            tr(f"{name} 还没有实现", f"{name} is not implemented yet"),
            Status.TODO,
            tr(
                "student.py 里它仍然 raise NotImplementedError",
                "it still raises NotImplementedError in student.py",
            ),
        )
    if out.kind == "timeout":
        return Status.TIMEOUT, _timeout_line(call, out)
    if out.kind == "overflow":
        return Status.FAIL, CheckResult(
            tr(f"{call} 输出过多", f"{call} printed too much"),
            Status.FAIL,
            tr(
                f"它打印了 {out.output_bytes} 字节，超过了上限：删掉调试用的 print",
                f"it printed {out.output_bytes} bytes, over the cap: remove debugging prints",
            ),
            out.output[:2000],
            out.output_bytes,
        )
    if out.kind == "crash":
        return Status.ERROR, _crash_line(call, out)
    if out.kind == "missing":
        return Status.ERROR, CheckResult(
            tr(f"找不到函数 {name}", f"function {name} not found"),
            Status.ERROR,
            tr(
                f"student.py 里没有名为 {name} 的函数：不要改函数名",
                f"student.py has no function named {name}: keep the names of the stubs",
            ),
        )
    if out.kind == "import":
        return Status.ERROR, CheckResult(
            tr("无法导入 student.py", "cannot import student.py"),
            Status.ERROR,
            import_message(exc),
        )
    if out.kind == "exception":
        typ = _typ(exc)
        return Status.ERROR, CheckResult(
            tr(f"{call} 抛出了 {typ}", f"{call} raised {typ}"),
            Status.ERROR,
            _raised(exc),
            out.output,
            out.output_bytes,
        )
    if out.kind == "forbidden":
        return Status.FAIL, forbidden_line(name, out, None)
    if out.kind == "stale":
        return Status.ERROR, CheckResult(
            tr(f"{call}：对象已失效", f"{call}: the object is gone"),
            Status.ERROR,
            tr(
                "它是在一个已被替换的沙箱进程里创建的（那个进程之前超时或出错了）：" + _msg(exc),
                "it was created in a sandbox process that has since been replaced (after a "
                "timeout or a crash): " + _msg(exc),
            ),
        )
    if exc.get("type") == "CodecError":  # the child's reply could not be read
        return Status.ERROR, CheckResult(
            tr(f"{call} 的返回值无法读取", f"{call} returned something unreadable"),
            Status.ERROR,
            tr(
                f"沙箱进程的回复无效：{_msg(exc)}（返回值太大或不是普通数据？）",
                f"the sandbox process's reply was refused: {_msg(exc)} "
                "(a value too large, or not plain data?)",
            ),
            out.output,
            out.output_bytes,
        )
    return Status.ERROR, CheckResult(
        tr(f"{call}：评测器内部错误", f"{call}: grader error"),
        Status.ERROR,
        tr(
            f"这不是你的代码的问题，请告诉助教：{_msg(exc)}",
            f"not a problem with your code; please tell the staff: {_msg(exc)}",
        ),
    )


def _timeout_line(call: str, out: CallOutcome) -> CheckResult:
    exc = out.exc or {}
    wz, we = where(exc)
    first = exc.get("first")
    if isinstance(first, int | float) and exc.get("repeat"):
        zh = f"这个函数之前已经超时（{first:g} 秒），不再重复等待{wz}"
        en = f"this function already timed out earlier ({first:g} s); not waiting again{we}"
    elif exc.get("deadline"):
        zh = f"整个运行超过了时限：{_msg(exc)}"
        en = f"the run passed its deadline: {_msg(exc)}"
    else:
        zh = f"{out.seconds:g} 秒内没有返回：检查循环的结束条件"
        en = f"no return within {out.seconds:g} s: check your loop conditions"
        if wz:
            zh, en = zh + "。卡在：" + wz, en + ". It was here:" + we
    return CheckResult(
        tr(f"{call} 超时", f"{call} timed out"),
        Status.TIMEOUT,
        tr(zh, en),
        out.output,
        out.output_bytes,
    )


def _crash_line(call: str, out: CallOutcome) -> CheckResult:
    status = out.exit_status
    if status is not None and status >= 0 and (status & 0x7F):
        sig = status & 0x7F
        how = _SIGNALS.get(sig, f"signal {sig}")
        zh, en = f"进程被信号 {how} 终止", f"the process was killed by {how}"
    else:
        code = (status >> 8) if status is not None and status >= 0 else "?"
        zh = f"进程以退出码 {code} 结束（不要调用 sys.exit / os._exit）"
        en = f"the process exited with status {code} (do not call sys.exit / os._exit)"
    return CheckResult(
        tr(f"{call} 让进程退出了", f"{call} ended the process"),
        Status.ERROR,
        tr(zh, en),
        out.output,
        out.output_bytes,
    )


def import_message(exc: dict[str, Any]) -> Text:
    """Explain why the student's module failed to import, pointing at file and line."""
    typ, msg = _typ(exc), _msg(exc)
    if typ in ("SyntaxError", "IndentationError", "TabError") and "line" in exc:
        offset = exc.get("offset", 1)
        caret = " " * min(max((offset if isinstance(offset, int) else 1) - 1, 0), 200) + "^"
        code = clean(exc.get("code", ""), limit=300, one_line=True)
        place = clean(f"{exc.get('file', 'student.py')}:{exc['line']}", limit=200, one_line=True)
        return tr(
            f"{place} 有语法错误：{msg}\n    {code}\n    {caret}",
            f"syntax error at {place}: {msg}\n    {code}\n    {caret}",
        )
    wz, we = where(exc)
    if typ == "SystemExit":
        return tr(f"导入时调用了 sys.exit{wz}", f"sys.exit was called at import time{we}")
    return tr(f"导入时出错 {typ}: {msg}{wz}", f"{typ} while importing: {msg}{we}")

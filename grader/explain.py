"""Explain, for the report, a call into student code that did not return normally.

A TODO stub, an exception (with the last frames of the student's own file), a timeout, a
process that exited or was killed, an output flood, a missing function, a module that does
not import: each becomes one status and one report line that says what happened and what
to try. The grader's own failures are worded apart, so a student is never blamed for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from framework.tensor import Tensor
from grader.codec import Handle
from grader.i18n import Text, tr
from grader.results import CheckResult, Status
from grader.sandbox.session import CallOutcome

__all__ = ["abort_line", "brief", "import_message", "where"]


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
    frames = exc.get("frames") or []
    if not frames:
        return "", ""
    lines = [f"  {f['file']}:{f['line']} in {f['func']}\n    {f['code']}" for f in frames[-3:]]
    text = "\n".join(lines)
    return "\n" + text, "\n" + text


def abort_line(
    name: str, out: CallOutcome, args: Sequence[Any] | None = None
) -> tuple[Status, CheckResult]:
    """The status and report line for a call that did not return normally.

    With `args`, the line names the call with a short form of its arguments
    (``attention_scores(Tensor[3, 2], Tensor[4, 2], 0.25)``) so it can be reproduced.
    """
    exc = out.exc or {}
    call = f"{name}({', '.join(brief(a) for a in args)})" if args is not None else f"{name}(...)"
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
        return Status.TIMEOUT, CheckResult(
            tr(f"{call} 超时", f"{call} timed out"),
            Status.TIMEOUT,
            tr(
                f"{out.seconds:g} 秒内没有返回：检查循环的结束条件",
                f"no return within {out.seconds:g} s: check your loop conditions",
            ),
            out.output,
        )
    if out.kind == "overflow":
        return Status.FAIL, CheckResult(
            tr(f"{call} 输出过多", f"{call} printed too much"),
            Status.FAIL,
            tr(
                f"它打印了 {out.output_bytes} 字节，上限是 64 KiB：删掉调试用的 print",
                f"it printed {out.output_bytes} bytes; the cap is 64 KiB: remove debugging prints",
            ),
            out.output[:2000],
        )
    if out.kind == "crash":
        status = out.exit_status
        if status is not None and status >= 0 and (status & 0x7F):
            sig = status & 0x7F
            how = _SIGNALS.get(sig, f"signal {sig}")
            zh, en = f"进程被信号 {how} 终止", f"the process was killed by {how}"
        else:
            code = (status >> 8) if status is not None and status >= 0 else "?"
            zh = f"进程以退出码 {code} 结束（不要调用 sys.exit / os._exit）"
            en = f"the process exited with status {code} (do not call sys.exit / os._exit)"
        return Status.ERROR, CheckResult(
            tr(f"{call} 让进程退出了", f"{call} ended the process"),
            Status.ERROR,
            tr(zh, en),
            out.output,
        )
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
        wz, we = where(exc)
        typ, msg = exc.get("type", "?"), exc.get("message", "")
        return Status.ERROR, CheckResult(
            tr(f"{call} 抛出了 {typ}", f"{call} raised {typ}"),
            Status.ERROR,
            tr(f"{typ}: {msg}{wz}", f"{typ}: {msg}{we}"),
            out.output,
        )
    return Status.ERROR, CheckResult(
        tr(f"{call}：评测器内部错误", f"{call}: grader error"),
        Status.ERROR,
        tr(
            f"这不是你的代码的问题，请告诉助教：{exc.get('message', '')}",
            f"not a problem with your code; please tell the staff: {exc.get('message', '')}",
        ),
    )


def import_message(exc: dict[str, Any]) -> Text:
    """Explain why the student's module failed to import, pointing at file and line."""
    typ, msg = exc.get("type", "?"), exc.get("message", "")
    if typ in ("SyntaxError", "IndentationError", "TabError") and "line" in exc:
        caret = " " * max(int(exc.get("offset", 1)) - 1, 0) + "^"
        code = exc.get("code", "")
        place = f"{exc.get('file', 'student.py')}:{exc['line']}"
        return tr(
            f"{place} 有语法错误：{msg}\n    {code}\n    {caret}",
            f"syntax error at {place}: {msg}\n    {code}\n    {caret}",
        )
    wz, we = where(exc)
    if typ == "SystemExit":
        return tr(f"导入时调用了 sys.exit{wz}", f"sys.exit was called at import time{we}")
    return tr(f"导入时出错 {typ}: {msg}{wz}", f"{typ} while importing: {msg}{we}")

"""Explain, for the report, a call into student code that did not return normally.

A TODO stub, an exception (with the last frames of the student's own file), a timeout, a
process that exited or was killed, an output flood, a missing function, a module that does
not import: each becomes one status and one report line that says what happened and what
to try. The grader's own failures are worded apart, so a student is never blamed for them:
only an outcome of kind ``HARNESS`` (a request the grader could not send) is a
`Status.GRADER` line, and nothing the child sends makes one.

`abort_line` is a `match` over the outcome's `Outcome` kind, one small function per kind.
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
from grader.sandbox.outcome import CallOutcome, ExcInfo, Outcome

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


def _typ(exc: ExcInfo) -> str:
    return clean(exc.type, limit=100, one_line=True)


def _msg(exc: ExcInfo) -> str:
    # One line: a message with line breaks would print lines of its own in the report
    # ("  [PASS] ..." under the ERROR), so its breaks are shown as \n.
    return clean(exc.message, one_line=True)


def brief(x: Any) -> str:
    """A one-line description of an argument, for naming which call of a sweep failed."""
    if isinstance(x, Handle):
        return x.type_name.rsplit(".", 1)[-1]
    if isinstance(x, Tensor | np.ndarray):
        return f"{type(x).__name__}{list(x.shape)}"
    if isinstance(x, np.random.Generator):  # its repr holds an address: not the same twice
        return f"Generator({type(x.bit_generator).__name__})"
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."


_SIGNALS = {9: "SIGKILL", 11: "SIGSEGV", 6: "SIGABRT", 15: "SIGTERM", 25: "SIGXFSZ"}


def where(exc: ExcInfo) -> tuple[str, str]:
    """The last frames of the student's own code, indented, for (zh, en) messages."""
    lines = []
    for f in exc.frames[-3:]:
        place = clean(f"{f.file}:{f.line}", limit=200, one_line=True)
        func = clean(f.func, limit=100, one_line=True)
        code = clean(f.code, limit=200, one_line=True)
        lines.append(f"  {place} in {func}\n    {code}")
    if not lines:
        return "", ""
    text = "\n".join(lines)
    return "\n" + text, "\n" + text


def call_error(name: str, out: CallOutcome, args: Sequence[Any] | None = None) -> Text:
    """The message for a call that raised: the call, type, message and the student's frames."""
    call = _call(name, args)
    return tr(f"{call} 抛出了 ", f"{call} raised ") + _raised(out.error)


def _raised(exc: ExcInfo) -> Text:
    wz, we = where(exc)
    typ, msg = _typ(exc), _msg(exc)
    return tr(f"{typ}: {msg}{wz}", f"{typ}: {msg}{we}")


def forbidden_line(name: str, out: CallOutcome, why: Text | None) -> CheckResult:
    """The FAIL line for a student function that called a forbidden framework function."""
    used = ", ".join(clean(t, limit=100, one_line=True) for t in out.error.targets) or "?"
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
        [_FORBIDDEN_HINT],
    )


_FORBIDDEN_HINT = tr(
    "删掉对框架函数的调用，按讲义里这一节的步骤自己写出来；框架的版本可以读，但不能调用",
    "remove the call into the framework and write the steps of the handout's section "
    "yourself; you may read the framework's version, not call it",
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
    call = _call(name, args)
    match out.kind:
        case Outcome.TODO:
            line = _todo_line(name)
        case Outcome.TIMEOUT:
            line = _timeout_line(call, out)
        case Outcome.OVERFLOW:
            line = _overflow_line(call, out)
        case Outcome.CRASH:
            line = _crash_line(call, out)
        case Outcome.MISSING:
            line = _missing_line(name)
        case Outcome.IMPORT:
            line = _import_line(out)
        case Outcome.EXCEPTION:
            line = _exception_line(call, out)
        case Outcome.FORBIDDEN:
            line = forbidden_line(name, out, None)
        case Outcome.STALE:
            line = _stale_line(call, out)
        case Outcome.UNREADABLE:
            line = _unreadable_line(call, out)
        case Outcome.HARNESS | Outcome.OK:  # OK: a verify.py that aborts a call that returned
            line = _grader_line(call, out)
    return line.status, line


def _todo_line(name: str) -> CheckResult:
    return CheckResult(
        tr(f"{name} 还没有实现", f"{name} is not implemented yet"),
        Status.TODO,
        tr(
            "student.py 里它仍然 raise NotImplementedError",
            "it still raises NotImplementedError in student.py",
        ),
    )


def _overflow_line(call: str, out: CallOutcome) -> CheckResult:
    return CheckResult(
        tr(f"{call} 输出过多", f"{call} printed too much"),
        Status.FAIL,
        tr(
            f"它打印了 {out.output_bytes} 字节，超过了上限：删掉调试用的 print",
            f"it printed {out.output_bytes} bytes, over the cap: remove debugging prints",
        ),
        out.output[:2000],
        out.output_bytes,
    )


def _missing_line(name: str) -> CheckResult:
    return CheckResult(
        tr(f"找不到函数 {name}", f"function {name} not found"),
        Status.ERROR,
        tr(
            f"student.py 里没有名为 {name} 的函数：不要改函数名",
            f"student.py has no function named {name}: keep the names of the stubs",
        ),
    )


def _import_line(out: CallOutcome) -> CheckResult:
    return CheckResult(
        tr("无法导入 student.py", "cannot import student.py"),
        Status.ERROR,
        import_message(out.error),
    )


def _exception_line(call: str, out: CallOutcome) -> CheckResult:
    typ = _typ(out.error)
    return CheckResult(
        tr(f"{call} 抛出了 {typ}", f"{call} raised {typ}"),
        Status.ERROR,
        _raised(out.error),
        out.output,
        out.output_bytes,
    )


def _stale_line(call: str, out: CallOutcome) -> CheckResult:
    msg = _msg(out.error)
    return CheckResult(
        tr(f"{call}：对象已失效", f"{call}: the object is gone"),
        Status.ERROR,
        tr(
            "它是在一个已被替换的沙箱进程里创建的（那个进程之前超时或出错了）：" + msg,
            "it was created in a sandbox process that has since been replaced (after a "
            "timeout or a crash): " + msg,
        ),
    )


def _unreadable_line(call: str, out: CallOutcome) -> CheckResult:
    msg = _msg(out.error)
    return CheckResult(
        tr(f"{call} 的返回值无法读取", f"{call} returned something unreadable"),
        Status.ERROR,
        tr(
            f"沙箱进程的回复无效：{msg}（返回值太大或不是普通数据？）",
            f"the sandbox process's reply was refused: {msg} "
            "(a value too large, or not plain data?)",
        ),
        out.output,
        out.output_bytes,
    )


def _grader_line(call: str, out: CallOutcome) -> CheckResult:
    msg = _msg(out.error)
    return CheckResult(
        tr(f"{call}：评测器内部错误", f"{call}: grader error"),
        Status.GRADER,
        tr(
            f"这不是你的代码的问题，请告诉助教：{msg}",
            f"not a problem with your code; please tell the staff: {msg}",
        ),
    )


def _timeout_line(call: str, out: CallOutcome) -> CheckResult:
    exc = out.error
    wz, we = where(exc)
    first = exc.first
    if first is not None and exc.repeat:
        zh = f"这个函数之前已经超时（{first:g} 秒），不再重复等待{wz}"
        en = f"this function already timed out earlier ({first:g} s); not waiting again{we}"
    elif exc.deadline is not None:
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


def import_message(exc: ExcInfo) -> Text:
    """Explain why the student's module failed to import, pointing at file and line."""
    typ, msg = _typ(exc), _msg(exc)
    if typ in ("SyntaxError", "IndentationError", "TabError") and exc.line is not None:
        caret = " " * min(max(exc.offset - 1, 0), 200) + "^"
        code = clean(exc.code, limit=300, one_line=True)
        place = clean(f"{exc.file or 'student.py'}:{exc.line}", limit=200, one_line=True)
        return tr(
            f"{place} 有语法错误：{msg}\n    {code}\n    {caret}",
            f"syntax error at {place}: {msg}\n    {code}\n    {caret}",
        )
    wz, we = where(exc)
    if typ == "SystemExit":
        return tr(f"导入时调用了 sys.exit{wz}", f"sys.exit was called at import time{we}")
    return tr(f"导入时出错 {typ}: {msg}{wz}", f"{typ} while importing: {msg}{we}")


def seed_note(seeds: Sequence[int], run_seed: int | None, lab: Any) -> Text:
    """What a failed check on random input adds: its seeds, and under `grade` the command
    that draws the same input again."""
    drawn = ", ".join(str(s) for s in seeds)
    if run_seed is None:
        return tr(f"\n（随机输入，seed={drawn}）", f"\n(random input, seed={drawn})")
    again = f"minillm verify {lab.id if lab else 'LAB'} --seed {run_seed}"
    return tr(
        f"\n（随机输入，seed={drawn}，本次评分的 seed={run_seed}：{again} 可重现）",
        f"\n(random input, seed={drawn}, run seed {run_seed}: {again} draws it again)",
    )


def skip_line(number: int | None, test_id: str) -> CheckResult:
    """The line of a test that SKIPs because the result it builds on is not usable yet."""
    which = f"TEST {number}" if number else test_id
    return CheckResult(
        tr(f"先修好 {which}", f"fix {which} first"),
        Status.SKIP,
        tr(
            f"这个测试拿你的函数在普通 Tensor 上的结果做对照；{which} 里这个结果还不能用"
            "（出错或形状不对），所以这里先不判",
            f"this test compares your function with its own result on plain Tensors; "
            f"in {which} that result is not usable yet (it raised or has the wrong shape), "
            "so this test waits",
        ),
    )

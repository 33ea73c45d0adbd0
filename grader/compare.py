"""Comparisons of what student code returned, with messages a student can act on.

Every comparison returns `(ok, message)`; the DSL's assertions (`grader.dsl.TestContext`:
`close`, `allclose`, `equal`, `shape`, `unchanged`, `finite`, `raises`, `views`) record
that as a report line, and `as_array` / `as_number` give the value or the line's message.
NaN never passes (unlike `|a - b| > tol` tests, which NaN silently satisfies). Array
failures name the worst cell, the largest absolute and relative errors, and show a small
expected-vs-actual view. Tolerances are always given by the caller, at the check, with the
reason written next to it.

Example:
    >>> ok, msg = compare_close(0.5001, 0.5, atol=1e-6)
    >>> ok
    False
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from framework.tensor import Tensor
from grader.codec import Handle
from grader.explain import clean
from grader.i18n import Text, tr
from grader.sandbox.outcome import ExcInfo
from grader.views import outside

__all__ = [
    "as_array",
    "as_number",
    "compare_allclose",
    "compare_close",
    "compare_equal",
    "compare_finite",
    "compare_raised",
    "compare_shape",
    "compare_unchanged",
    "compare_view",
    "describe",
    "fmt",
    "is_builtin_error",
    "returned_instead",
    "to_array",
]

_VIEW_MAX = 8  # show whole arrays up to this many rows / columns


def fmt(x: Any) -> str:
    """Short text for a number or array (float32-friendly precision)."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, float | np.floating):
        v = float(x)
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return f"{v:.6g}"
    if isinstance(x, np.ndarray):
        return np.array2string(
            x, precision=4, suppress_small=False, threshold=64, max_line_width=100
        )
    if isinstance(x, Tensor):
        return fmt(x.numpy())
    text = repr(x)
    return text if len(text) <= 200 else text[:200] + f"… ({len(text)} chars)"


def describe(x: Any) -> str:
    """What kind of value a student returned, for 'expected X, got Y' messages."""
    if isinstance(x, Handle):
        return f"{x.type_name} object"
    if isinstance(x, Tensor):
        return f"Tensor of shape {list(x.shape)}"
    if isinstance(x, np.ndarray):
        return f"ndarray of shape {list(x.shape)}, dtype {x.dtype}"
    return type(x).__name__


def to_array(x: Any) -> np.ndarray | None:
    """A float64 array from a Tensor, ndarray or (nested) list of numbers; else None."""
    if isinstance(x, Tensor):
        return x.numpy().astype(np.float64)
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            return None
        return x.astype(np.float64)
    if isinstance(x, list | tuple):
        try:
            arr = np.array(x, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        return arr
    return None


def compare_close(
    actual: Any, expected: float, *, atol: float, rtol: float = 0.0
) -> tuple[bool, Text | None]:
    """Scalar check: |actual - expected| <= atol + rtol·|expected|, NaN never passes."""
    if isinstance(actual, np.ndarray) and actual.size == 1:
        actual = actual.reshape(()).item()
    if isinstance(actual, bool) or not isinstance(actual, int | float):
        return False, tr(
            f"期望一个数 {fmt(expected)}，实际得到 {describe(actual)}: {fmt(actual)}",
            f"expected a number {fmt(expected)}, got {describe(actual)}: {fmt(actual)}",
        )
    a = float(actual)
    if math.isnan(a):
        return False, tr(f"期望 {fmt(expected)}，实际是 NaN", f"expected {fmt(expected)}, got NaN")
    if math.isinf(expected) or math.isinf(a):
        if a == expected:
            return True, None
        return False, tr(
            f"期望 {fmt(expected)}，实际 {fmt(a)}", f"expected {fmt(expected)}, got {fmt(a)}"
        )
    tol = atol + rtol * abs(expected)
    diff = abs(a - expected)
    if diff <= tol:
        return True, None
    return False, tr(
        f"期望 {fmt(expected)}，实际 {fmt(a)}（误差 {diff:.3g} > 容差 {tol:.3g}）",
        f"expected {fmt(expected)}, got {fmt(a)} (error {diff:.3g} > tolerance {tol:.3g})",
    )


def compare_allclose(
    actual: Any, expected: Any, *, atol: float, rtol: float
) -> tuple[bool, Text | None]:
    """Array check, cell by cell: |a - e| <= atol + rtol·|e|; shapes must match exactly."""
    exp = to_array(expected)
    if exp is None:
        raise TypeError(f"expected value is not numeric: {type(expected).__name__}")
    act = to_array(actual)
    if act is None:
        return False, tr(
            f"期望形状为 {list(exp.shape)} 的 Tensor 或 ndarray，实际得到 {describe(actual)}",
            f"expected a Tensor or ndarray of shape {list(exp.shape)}, got {describe(actual)}",
        )
    if act.shape != exp.shape:
        return False, tr(
            f"形状不对：期望 {list(exp.shape)}，实际 {list(act.shape)}",
            f"wrong shape: expected {list(exp.shape)}, got {list(act.shape)}",
        )
    if act.size == 0:
        return True, None
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(act - exp)
        tol = atol + rtol * np.abs(exp)
        same_inf = np.isinf(exp) & (act == exp)
        bad = ~((err <= tol) | same_inf)  # NaN compares False, so NaN is always bad
    if not bad.any():
        return True, None
    nan_count = int(np.isnan(act).sum())
    excess = np.where(bad, np.nan_to_num(err - tol, nan=np.inf, posinf=np.inf), -np.inf)
    worst = np.unravel_index(int(np.argmax(excess)), act.shape)
    # NaN and inf errors are the largest there are: a summary must never read "max error 0"
    # next to a NaN cell, so they are counted as infinite here.
    err_all = np.where(np.isnan(err), np.inf, err)
    max_abs = float(err_all.max())
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(exp != 0, err_all / np.abs(exp), np.where(err_all > 0, np.inf, 0.0))
    max_rel = float(rel.max())
    if np.isnan(err).any():
        max_abs = max_rel = float("nan")
    idx = list(int(i) for i in worst)
    zh = [
        f"{int(bad.sum())}/{act.size} 个元素不对；最差的是 {idx}：期望 {fmt(float(exp[worst]))}，"
        f"实际 {fmt(float(act[worst]))}",
        f"最大绝对误差 {_err(max_abs)}，最大相对误差 {_err(max_rel)}"
        f"（容差 atol={atol:g}, rtol={rtol:g}）",
    ]
    en = [
        f"{int(bad.sum())}/{act.size} elements differ; worst at {idx}: expected "
        f"{fmt(float(exp[worst]))}, got {fmt(float(act[worst]))}",
        f"max abs error {_err(max_abs)}, max rel error {_err(max_rel)} "
        f"(atol={atol:g}, rtol={rtol:g})",
    ]
    if nan_count:
        zh.append(f"输出里有 {nan_count} 个 NaN")
        en.append(f"the output contains {nan_count} NaN")
    if act.ndim <= 2 and all(d <= _VIEW_MAX for d in act.shape):
        zh += [
            "期望:",
            _indent(fmt(exp.astype(np.float32))),
            "实际:",
            _indent(fmt(act.astype(np.float32))),
        ]
        en += [
            "expected:",
            _indent(fmt(exp.astype(np.float32))),
            "actual:",
            _indent(fmt(act.astype(np.float32))),
        ]
    return False, Text("\n".join(zh), "\n".join(en))


def _err(x: float) -> str:
    return "NaN" if math.isnan(x) else f"{x:.3g}"


def _indent(block: str) -> str:
    return "\n".join("  " + line for line in block.splitlines())


def as_array(value: Any, shape: Sequence[int] | None = None) -> tuple[np.ndarray | None, Text]:
    """`value` as a float64 array, or None and what came back instead (`t.array`)."""
    arr = to_array(value)
    want = "" if shape is None else f" {list(shape)}"
    if arr is None:
        return None, tr(
            f"期望形状为{want or '任意'}的 Tensor 或 ndarray，实际得到 {describe(value)}",
            f"expected a Tensor or ndarray{' of shape' + want if want else ''}, "
            f"got {describe(value)}: {fmt(value)}",
        )
    if shape is not None and list(arr.shape) != list(shape):
        return None, tr(
            f"形状不对：期望 {list(shape)}，实际 {list(arr.shape)}",
            f"wrong shape: expected {list(shape)}, got {list(arr.shape)}",
        )
    return arr, Text("", "")


def as_number(value: Any) -> tuple[float | None, Text]:
    """An int, float, numpy scalar or one-element array as a float, or None and what came
    back instead (a str, None, a bool, a list: `t.number`)."""
    if isinstance(value, np.ndarray | Tensor):
        arr = to_array(value)
        if arr is not None and arr.size == 1:
            return float(arr.reshape(())), Text("", "")
    elif isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    ):
        return float(value), Text("", "")
    return None, tr(
        f"期望一个数，实际得到 {describe(value)}: {fmt(value)}",
        f"expected a number, got {describe(value)}: {fmt(value)}",
    )


def compare_equal(actual: Any, expected: Any) -> tuple[bool, Text | None]:
    """Exact equality of plain values, types included (True is not 1)."""
    if type(actual) is type(expected) and actual == expected:
        return True, None
    return False, tr(
        f"期望 {fmt(expected)}，实际 {fmt(actual)}（{describe(actual)}）",
        f"expected {fmt(expected)}, got {fmt(actual)} ({describe(actual)})",
    )


def compare_shape(actual: Any, expected: Sequence[int]) -> tuple[bool, Text]:
    """A Tensor or array whose shape is exactly `expected`."""
    arr = to_array(actual)
    exp = list(expected)
    if arr is None:
        return False, tr(
            f"期望形状为 {exp} 的 Tensor，实际得到 {describe(actual)}",
            f"expected a Tensor of shape {exp}, got {describe(actual)}",
        )
    return list(arr.shape) == exp, tr(
        f"期望形状 {exp}，实际 {list(arr.shape)}", f"expected shape {exp}, got {list(arr.shape)}"
    )


def compare_unchanged(before: Any, after: Any, returns_new: bool) -> tuple[bool, Text]:
    """`after` is bit-for-bit the same array as `before`; `returns_new=False` for an argument
    of an in-place function, whose message then does not suggest returning a copy."""
    a, b = to_array(after), to_array(before)
    ok = (
        a is not None
        and b is not None
        and a.shape == b.shape
        and bool(np.array_equal(a, b, equal_nan=True))
    )
    if returns_new:
        return ok, tr(
            "参数被改动了：这个函数不应修改它的输入（在副本上计算，返回新的结果）",
            "an argument was modified: this function must leave its inputs unchanged "
            "(compute on a copy and return a new result)",
        )
    return ok, tr(
        "这个参数被改动了：函数只应修改它该原地修改的那个参数",
        "this argument was modified: the function may change only the "
        "argument it works on in place",
    )


def compare_finite(actual: Any) -> tuple[bool, Text]:
    """Every element is finite (no NaN, no ±inf)."""
    arr = to_array(actual)
    if arr is None:
        return False, tr(
            f"期望数组，实际得到 {describe(actual)}", f"expected an array, got {describe(actual)}"
        )
    bad = int((~np.isfinite(arr)).sum())
    return bad == 0, tr(
        f"{bad}/{arr.size} 个元素是 NaN 或 inf", f"{bad}/{arr.size} elements are NaN or inf"
    )


def compare_view(
    value: Any, expected: Any, *, atol: float, rtol: float, inplace: bool
) -> tuple[bool, Text | None]:
    """`t.views`: what a call on non-contiguous views returned (or, `inplace`, the argument
    it wrote) against `expected`; an in-place write must stay inside the view."""
    if isinstance(expected, int | float | np.integer | np.floating):  # a scalar result
        ok, msg = compare_close(value, float(expected), atol=atol, rtol=rtol)
    else:
        ok, msg = compare_allclose(value, expected, atol=atol, rtol=rtol)
    if ok and inplace and isinstance(value, Tensor):
        spill = outside(value)
        if not np.isnan(spill).all():
            ok = False
            n = int((~np.isnan(spill)).sum())
            msg = tr(
                f"写到了视图之外：存储里有 {n} 个不属于这个 Tensor 的位置被改了",
                f"wrote outside the view: {n} storage cells that do not belong to "
                "the tensor changed",
            )
    if ok:
        return True, None
    return False, (msg or Text("", "")) + tr(
        "\n（输入是非连续的视图：按 strides 和 offset 读写元素，例如用 x.numpy()）",
        "\n(the inputs were non-contiguous views: read and write elements through "
        "strides and offset, e.g. with x.numpy())",
    )


def compare_raised(exc: ExcInfo, want: str) -> tuple[bool, Text]:
    """`t.raises`: the child's exception is the builtin `want` (see `is_builtin_error`)."""
    got = clean(exc.type, limit=100, one_line=True)  # the student's name and message
    said = clean(exc.message, limit=500, one_line=True)
    return is_builtin_error(exc, want), tr(
        f"期望抛出 {want}，实际抛出 {got}: {said}",
        f"expected {want}, but {got} was raised: {said}",
    )


def returned_instead(want: str, value: Any) -> Text:
    """`t.raises`' message for a call that returned normally."""
    return tr(
        f"期望抛出 {want}，但函数正常返回了 {fmt(value)}",
        f"expected {want} to be raised, but the call returned {fmt(value)}",
    )


_CONTRACT_ERRORS = ("ValueError", "TypeError", "IndexError", "KeyError")
_LIBRARY_HYBRIDS = frozenset({"AxisError"})  # numpy: ValueError and IndexError on purpose


def is_builtin_error(exc: ExcInfo, want: str) -> bool:
    """The child's exception is the builtin `want`, and poses as no other contract error.

    Judged from the names of the builtin classes in its MRO (`builtins` in the worker's
    report, else the whole MRO): a class the child defines and calls `ValueError` is not
    the builtin, and one that inherits ValueError, TypeError and IndexError at once would
    satisfy every "raises" check.
    """
    names = exc.builtins if exc.builtins is not None else (exc.mro or [exc.type])
    if want not in names:
        return False
    others = [n for n in _CONTRACT_ERRORS if n != want and n in names]
    return not others or exc.type in _LIBRARY_HYBRIDS

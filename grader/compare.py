"""Numeric comparison with messages a student can act on.

Every comparison returns `(ok, message)`. NaN never passes (unlike `|a - b| > tol` tests,
which NaN silently satisfies). Array failures name the worst cell, the largest absolute and
relative errors, and show a small expected-vs-actual view. Tolerances are always given by
the caller, at the check, with the reason written next to it.

Example:
    >>> ok, msg = compare_close(0.5001, 0.5, atol=1e-6)
    >>> ok
    False
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from framework.tensor import Tensor
from grader.codec import Handle
from grader.i18n import Text, tr

__all__ = ["compare_allclose", "compare_close", "describe", "fmt", "to_array"]

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

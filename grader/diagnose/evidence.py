"""What a failed check saw, reduced to a small fingerprint that another run can match.

Three kinds, from the most to the least informative:

- ``values``: the result as numbers (a Tensor, an array, a number): its shape, up to
  `CELLS` cells at evenly spaced flat positions, and its sum and sum of magnitudes. Two
  results match when the shapes are equal and every stored number agrees within a
  tolerance ten times the check's own (at least 1e-5 absolute, 1e-4 relative): the same
  bug written another way (einsum instead of loops) rounds differently, and a different
  bug is off by far more at some cell or in the sums.
- ``exact``: a plain value (an int, a string, a list of ints): a hash of its canonical form.
- ``message``: a check without a value (a raised exception, a shape, an unchanged input):
  a hash of the check's English message, with the source line numbers removed, since a
  student's file numbers its lines otherwise.

A value's fingerprint also holds the fingerprint of what it was compared with
(``expect``). `seeded` marks a check whose input was drawn from `t.rng`: its fingerprint
holds for the fixed seeds of `verify` only (see `grader.diagnose.catalogue`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import numpy as np

from framework.tensor import Tensor

__all__ = ["CELLS", "evidence_of", "fingerprint", "matches", "message_fingerprint"]

CELLS = 16
_DIGITS = 6  # significant digits kept per stored number
_WHERE = re.compile(r"[\w./\\-]*student\.py(:\d+)?|line \d+| at 0x[0-9a-fA-F]+")
_SEED_NOTE = re.compile(r"\n\((random input|run seed).*$", re.DOTALL)


def _numbers(x: Any) -> np.ndarray | None:
    if isinstance(x, Tensor):
        return x.numpy().astype(np.float64)
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
        return np.real(x).astype(np.float64)
    if isinstance(x, float | np.floating):
        return np.array(float(x))
    if isinstance(x, list | tuple) and x and any(isinstance(v, float) for v in _flat(x)):
        try:
            return np.array(x, dtype=np.float64)
        except (TypeError, ValueError):
            return None
    return None


def _flat(x: Any) -> list[Any]:
    out: list[Any] = []
    for v in x:
        out.extend(_flat(v) if isinstance(v, list | tuple) else [v])
    return out


def _round(v: float) -> float | None:
    if math.isnan(v):
        return None  # JSON has no NaN; None stands for it
    if math.isinf(v) or v == 0.0:
        return v
    return float(f"{v:.{_DIGITS}g}")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fingerprint(
    actual: Any, *, atol: float = 0.0, rtol: float = 0.0, seeded: bool = False
) -> dict[str, Any] | None:
    """The fingerprint of a failed check's value, or None when it has no usable value."""
    arr = _numbers(actual)
    if arr is not None:
        flat = arr.ravel()
        # evenly spaced flat positions (np.unique would import numpy.ma after student code ran)
        picks = sorted({round(i * (flat.size - 1) / max(CELLS - 1, 1)) for i in range(CELLS)})
        picks = picks if flat.size else []
        with np.errstate(all="ignore"):
            sums = [float(np.sum(flat)), float(np.sum(np.abs(flat)))]
        fp: dict[str, Any] = {
            "k": "values",
            "shape": list(arr.shape),
            "cells": [_round(float(flat[i])) for i in picks],
            "sums": [_round(s) for s in sums],
            "atol": atol,
            "rtol": rtol,
        }
    elif isinstance(actual, bool | int | str | bytes) or (
        isinstance(actual, list | tuple | dict) and actual
    ):
        try:
            canon = json.dumps(actual, sort_keys=True, default=repr)
        except (TypeError, ValueError):
            return None
        fp = {"k": "exact", "h": _digest(canon)}
    else:
        return None
    if seeded:
        fp["seeded"] = True
    return fp


def message_fingerprint(message_en: str, *, seeded: bool = False) -> dict[str, Any]:
    """The fingerprint of a failed line by its message alone (see the module docstring)."""
    text = _WHERE.sub("", _SEED_NOTE.sub("", message_en)).strip()
    fp: dict[str, Any] = {"k": "message", "h": _digest(text)}
    if seeded:
        fp["seeded"] = True
    return fp


def _near(a: float | None, b: float | None, atol: float, rtol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * abs(b)


def matches(seen: dict[str, Any], known: dict[str, Any]) -> bool:
    """Whether a student's fingerprint `seen` is the catalogued `known` one (what it was
    compared with included)."""
    if seen.get("k") != known.get("k"):
        return False
    if "expect" in known and not ("expect" in seen and matches(seen["expect"], known["expect"])):
        return False
    if known["k"] != "values":
        return bool(seen.get("h") == known.get("h"))
    if list(seen.get("shape", ())) != list(known["shape"]):
        return False
    atol = max(10 * float(known.get("atol", 0.0)), 1e-5)
    rtol = max(10 * float(known.get("rtol", 0.0)), 1e-4)
    cells, ref = seen.get("cells", []), known["cells"]
    if len(cells) != len(ref) or not all(
        _near(a, b, atol, rtol) for a, b in zip(cells, ref, strict=True)
    ):
        return False
    size = max(1, math.prod(known["shape"]))
    s, r = seen.get("sums", [None, None]), known["sums"]
    return _near(s[0], r[0], atol * size, rtol) and _near(s[1], r[1], atol * size, rtol)


def evidence_of(seen: tuple[Any, ...] | None, message: Any, seeded: bool) -> dict[str, Any]:
    """A failed check's fingerprint: of its value when it has a usable one, else of its
    message (a `Text`, before any seed note is added).

    `seen` is (value, atol, rtol, expected). The expected side is part of the fingerprint:
    a check may compare with the student's own other function (a gradient against central
    differences of their own loss), so the same correct value fails for different bugs.
    """
    if seen is not None:
        fp = fingerprint(seen[0], atol=seen[1], rtol=seen[2], seeded=seeded)
        if fp is not None:
            want = fingerprint(seen[3], atol=seen[1], rtol=seen[2]) if len(seen) > 3 else None
            if want is not None:
                fp["expect"] = want
            return fp
    return message_fingerprint(message.en if message is not None else "", seeded=seeded)

"""A `LabResult` as plain JSON data and back, losslessly (both languages of every text).

A grading worker sends each lab's result to the coordinating process as one JSON line.
The coordinator trusts none of it blindly: `lab_from_wire` checks every field's type and
the sizes (strings are cut at `MAX_TEXT` characters, lists at `MAX_ITEMS`; a lone
surrogate becomes an escape), and raises
`WireError` for anything malformed, so a damaged or forged line becomes that submission's
error, never a crash of the batch.
"""

from __future__ import annotations

from typing import Any

from grader.errors import GraderError
from grader.i18n import Text
from grader.results import CheckResult, Diagnosis, LabResult, Status, TestResult

__all__ = ["MAX_ITEMS", "MAX_TEXT", "WireError", "lab_from_wire", "lab_to_wire"]

MAX_TEXT = 64 * 1024
MAX_ITEMS = 4096


class WireError(GraderError, ValueError):
    """A result line that is not a well-formed lab result."""


def _text(t: Text | None) -> list[str] | None:
    return None if t is None else [t.zh, t.en]


def lab_to_wire(r: LabResult) -> dict[str, Any]:
    """The result as JSON-ready data."""
    return {
        "lab": r.lab,
        "title": _text(r.title),
        "impl": r.impl,
        "seconds": r.seconds,
        "import_error": _text(r.import_error),
        "sandbox": r.sandbox,
        "notes": [_text(n) for n in r.notes],
        "tests": [
            {
                "id": t.id,
                "number": t.number,
                "title": _text(t.title),
                "status": t.status.value,
                "reason": _text(t.reason),
                "seconds": t.seconds,
                "points": t.points,
                "hidden": t.hidden,
                "checks": [
                    {
                        "name": _text(c.name),
                        "status": c.status.value,
                        "message": _text(c.message),
                        "output": c.output,
                        "output_bytes": c.output_bytes,
                        "hints": [_text(h) for h in c.hints],
                        "diagnosis": (
                            [c.diagnosis.bug, _text(c.diagnosis.text)] if c.diagnosis else None
                        ),
                    }
                    for c in t.checks
                ],
            }
            for t in r.tests
        ],
    }


def _clean(s: str) -> str:
    """At most `MAX_TEXT` characters, lone surrogates (which JSON allows) as escapes."""
    return s[:MAX_TEXT].encode("utf-8", "backslashreplace").decode("utf-8")


def _str(d: dict[str, Any], key: str) -> str:
    v = d.get(key)
    if not isinstance(v, str):
        raise WireError(f"{key}: expected a string, got {type(v).__name__}")
    return _clean(v)


def _num(d: dict[str, Any], key: str) -> float:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int | float) or not abs(v) < 1e12:
        raise WireError(f"{key}: expected a number, got {v!r:.40}")
    return float(v)


def _bool(d: dict[str, Any], key: str) -> bool:
    v = d.get(key)
    if not isinstance(v, bool):
        raise WireError(f"{key}: expected true or false, got {v!r:.40}")
    return v


def _opt_text(v: Any, key: str) -> Text | None:
    if v is None:
        return None
    if isinstance(v, list) and len(v) == 2 and all(isinstance(s, str) for s in v):
        return Text(_clean(v[0]), _clean(v[1]))
    raise WireError(f"{key}: expected [zh, en], got {type(v).__name__}")


def _req_text(v: Any, key: str) -> Text:
    t = _opt_text(v, key)
    if t is None:
        raise WireError(f"{key}: missing")
    return t


def _list(v: Any, key: str) -> list[Any]:
    if not isinstance(v, list) or len(v) > MAX_ITEMS:
        raise WireError(f"{key}: expected a list of at most {MAX_ITEMS} items")
    return v


def _dict(v: Any, key: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise WireError(f"{key}: expected an object, got {type(v).__name__}")
    return v


def _status(d: dict[str, Any]) -> Status:
    """Any `Status`, `GRADER` included: the worker that writes the line is the grader's own
    process (student code runs in its sandbox children, whose replies never make one)."""
    try:
        return Status(_str(d, "status"))
    except ValueError:
        raise WireError(f"status: not one of {[s.value for s in Status]}") from None


def _check(v: Any) -> CheckResult:
    d = _dict(v, "check")
    return CheckResult(
        _req_text(d.get("name"), "check.name"),
        _status(d),
        _opt_text(d.get("message"), "check.message"),
        _str(d, "output"),
        int(_num(d, "output_bytes")),
        [_req_text(h, "check.hints") for h in _list(d.get("hints"), "check.hints")],
        _diagnosis(d.get("diagnosis")),
    )


def _diagnosis(v: Any) -> Diagnosis | None:
    """A check's known bug: ``[id, text]`` or null."""
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != 2 or not isinstance(v[0], str):
        raise WireError("check.diagnosis: expected [bug id, text] or null")
    return Diagnosis(_clean(v[0]), _req_text(v[1], "check.diagnosis"))


def _test(v: Any) -> TestResult:
    d = _dict(v, "test")
    return TestResult(
        _str(d, "id"),
        int(_num(d, "number")),
        _req_text(d.get("title"), "test.title"),
        _status(d),
        [_check(c) for c in _list(d.get("checks"), "test.checks")],
        _opt_text(d.get("reason"), "test.reason"),
        _num(d, "seconds"),
        points=_num(d, "points"),
        hidden=_bool(d, "hidden"),
    )


def lab_from_wire(data: Any) -> LabResult:
    """The `LabResult` of `lab_to_wire` data.

    Raises:
        WireError: a missing field, a wrong type, or a list past `MAX_ITEMS`.
    """
    d = _dict(data, "lab result")
    return LabResult(
        _str(d, "lab"),
        _req_text(d.get("title"), "title"),
        _str(d, "impl"),
        _num(d, "seconds"),
        [_test(t) for t in _list(d.get("tests"), "tests")],
        _opt_text(d.get("import_error"), "import_error"),
        sandbox=_str(d, "sandbox"),
        notes=[_req_text(n, "notes") for n in _list(d.get("notes"), "notes")],
    )

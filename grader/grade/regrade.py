"""Regrade without starting over: ``--previous results.json``, ``--only-lab``, ``--only-test``.

Every graded lab of a submission is recorded with two content hashes (SHA-256, in the
JSON result's ``hashes``): ``files``, of the student.py that was graded, and ``checks``, of
the checks that graded it (the course copy's ``labs/<id>/verify.py``, the hidden
``<id>/hidden.py`` and the grader's ``dsl.py``, the check language's version). With
``--previous``, a submission is matched to the previous file's row of the same name, and
a lab is taken from that row, not run, when both hashes are unchanged; a submission with
no lab to run starts no worker. A previous row that has an error (a timeout, a stopped
run, no submission) is never reused.

``--only-lab labNN`` runs those labs and takes every other lab from the previous row as
it was (its hashes too, so a later plain ``--previous`` run still sees what changed).
``--only-test ID`` (or ``labNN:ID``) runs the whole lab of that test, so that its
prerequisites run, and takes that one test's result into the previous row's lab.

What this does not do: notice a change in the grader outside ``dsl.py`` (messages, the
sandbox); after upgrading the grader, grade afresh. Previous texts are in the language the
file was written in.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.grade.course import Course
from grader.grade.wire import WireError, lab_from_wire
from grader.results import LabResult

__all__ = [
    "Previous",
    "PreviousRow",
    "check_hashes",
    "file_hash",
    "lab_from_doc",
    "load_previous",
    "merge_test",
]

MAX_PREVIOUS = 512 * 1024 * 1024  # bytes of a previous result file


def file_hash(text: str) -> str:
    """The hash of one student.py's text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def check_hashes(course: Course) -> dict[str, str]:
    """lab id → the hash of the checks that grade it in the course copy `course`."""
    dsl = course.root / "grader" / "dsl.py"
    out: dict[str, str] = {}
    for lab_id in course.labs:
        h = hashlib.sha256()
        for part in (
            course.root / "labs" / lab_id / "verify.py",
            course.private / lab_id / "hidden.py",
            dsl,
        ):
            h.update(part.name.encode() + b"\0")
            h.update(part.read_bytes() if part.is_file() else b"(none)")
            h.update(b"\0")
        out[lab_id] = h.hexdigest()
    return out


@dataclass
class PreviousRow:
    """One submission of the previous result file."""

    name: str
    seed: int | None
    usable: bool  # graded to the end, without an error
    files: dict[str, str] = field(default_factory=dict)  # lab id → file hash
    checks: dict[str, str] = field(default_factory=dict)  # lab id → checks hash
    labs: dict[str, Any] = field(default_factory=dict)  # lab id → its JSON


@dataclass
class Previous:
    """A previous result file: its rows by submission name."""

    path: str
    lang: str
    rows: dict[str, PreviousRow]


def _hashes(sub: dict[str, Any], key: str) -> dict[str, str]:
    got = sub.get("hashes", {}).get(key, {}) if isinstance(sub.get("hashes"), dict) else {}
    return {str(k): str(v) for k, v in got.items()} if isinstance(got, dict) else {}


def load_previous(path: Path) -> Previous:
    """The rows of a ``--format json`` result file.

    Raises:
        ValueError: unreadable, not JSON, or not a complete ``minillm-grade`` document.
    """
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PREVIOUS + 1)
        doc = json.loads(data)
    except OSError as e:
        raise ValueError(f"{path}: cannot be read ({e.strerror or e})") from None
    except ValueError as e:
        raise ValueError(f"{path}: not a JSON result ({e})") from None
    if not isinstance(doc, dict) or doc.get("kind") != "minillm-grade":
        raise ValueError(f"{path}: not a minillm grade result (--format json)")
    if doc.get("complete") is not True:
        raise ValueError(f"{path}: the run that wrote it did not finish; grade afresh")
    rows: dict[str, PreviousRow] = {}
    for sub in doc.get("submissions", []):
        if not isinstance(sub, dict) or not isinstance(sub.get("name"), str):
            raise ValueError(f"{path}: a submission without a name")
        seed = sub.get("seed")
        labs = {lab["lab"]: lab for lab in sub.get("labs", []) if isinstance(lab, dict)}
        usable = not sub.get("error") and not sub.get("missing")
        rows[sub["name"]] = PreviousRow(
            sub["name"],
            seed if isinstance(seed, int) else None,
            usable,
            _hashes(sub, "files"),
            _hashes(sub, "checks"),
            labs,
        )
    return Previous(str(path), str(doc.get("lang", "en")), rows)


def _t(v: Any) -> list[str] | None:
    return None if v is None or v == "" else [str(v), str(v)]


def _diag(v: Any) -> list[Any] | None:
    """A JSON check's ``diagnosis`` ({bug, zh, en}) in the wire's form."""
    if not isinstance(v, dict) or not isinstance(v.get("bug"), str):
        return None
    return [v["bug"], [str(v.get("zh", "")), str(v.get("en", ""))]]


def lab_from_doc(doc: dict[str, Any]) -> LabResult:
    """The `LabResult` of one lab's JSON (`grader.render.lab.render_json`), each text in
    the one language it was written in.

    Raises:
        WireError: a field missing or of the wrong type.
    """
    try:
        titles = doc["titles"]
        wire = {
            "lab": doc["lab"],
            "title": [titles["zh"], titles["en"]],
            "impl": doc["impl"],
            "seconds": doc["duration_s"],
            "import_error": _t(doc.get("import_error")),
            "sandbox": doc["sandbox"],
            "notes": [_t(n) for n in doc["notes"]],
            "tests": [
                {
                    "id": t["id"],
                    "number": n,
                    "title": [t["titles"]["zh"], t["titles"]["en"]],
                    "status": t["status"],
                    "reason": _t(t.get("reason")),
                    "seconds": 0.0,
                    "points": t["points"],
                    "hidden": t["hidden"],
                    "checks": [
                        {
                            "name": _t(c["name"]) or ["", ""],
                            "status": c["status"],
                            "message": _t(c["message"]),
                            "output": c["output"],
                            "output_bytes": c["output_bytes"],
                            "hints": [_t(h) for h in c["hints"]],
                            "diagnosis": _diag(c.get("diagnosis")),
                        }
                        for c in t["checks"]
                    ],
                }
                for n, t in enumerate(doc["tests"], 1)
            ],
        }
    except (KeyError, TypeError) as e:
        raise WireError(f"a previous lab result without {e}") from None
    return lab_from_wire(wire)


def merge_test(previous: LabResult, new: LabResult, test_id: str) -> LabResult:
    """`previous` with the result of `test_id` taken from `new`."""
    merged = copy.copy(previous)
    merged.tests = [
        next((t for t in new.tests if t.id == test_id), t) if t.id == test_id else t
        for t in previous.tests
    ]
    return merged

"""Our JSON document of a grading run (``--format json``).

    {"schema": 1, "kind": "minillm-grade", "complete": true, "stopped": "", "isolated": false,
     "isolation": "none" | "uid" | "bwrap",
     "lang": "en", "labs": ["lab04", ...], "max_score": 28, "started": "2025-...Z",
     "deadline": "" | "2026-12-15T15:59:00+00:00", "late_policy": "on-time", "previous": "",
     "submissions": [{"name", "source", "commit", "seed", "dirty", "note", "error",
                      "seconds", "score", "max_score",
                      "student": {"id", "name", "email", "section"}, "on_roster": null | bool,
                      "missing": false, "commit_date", "submitted_at", "late": false,
                      "days_late": 0, "late_commits": 0, "newest_late": "",
                      "raw_score", "penalty": {"fraction": 0.2, "points": 5.6},
                      "hashes": {"files": {"lab04": <sha256>}, "checks": {"lab04": <sha256>}},
                      "reused": ["lab04"],
                      "labs": [<one lab's verify JSON (grader.render.lab, schema 2)>, ...]}]}

``score`` is the grade, net of the late penalty (``raw_score`` before it); ``missing`` is a
roster student with nothing graded ("no submission", or nothing on time), which is not an
error of the grader. ``hashes`` and ``reused`` are what ``--previous`` reads and did
(`grader.grade.regrade`).

A result file is rewritten as results arrive: ``complete`` is false until the run ended,
and ``submissions`` holds the ones that finished, in the order they were given. A run
stopped by a signal ends with ``complete`` false and ``stopped`` saying why ("SIGTERM").
"""

from __future__ import annotations

import json
import time
from typing import Any

from grader.render.lab import render_json
from grader.results import BatchResult, SubmissionResult

__all__ = ["GRADE_SCHEMA", "batch_doc", "render_batch_json"]

GRADE_SCHEMA = 1


def _submission(sub: SubmissionResult, lang: str) -> dict[str, Any]:
    return {
        "name": sub.name,
        "source": sub.source,
        "commit": sub.commit,
        "seed": sub.seed,
        "dirty": list(sub.dirty),
        "note": sub.note_in(lang),
        "error": sub.error_in(lang),
        "seconds": round(sub.seconds, 3),
        "score": sub.score,
        "max_score": sub.max_score,
        "student": {
            "id": sub.student_id,
            "name": sub.student_name,
            "email": sub.email,
            "section": sub.section,
        },
        "on_roster": sub.on_roster,
        "missing": sub.missing,
        "commit_date": sub.commit_date,
        "submitted_at": sub.submitted_at,
        "late": sub.late,
        "days_late": sub.days_late,
        "late_commits": sub.late_commits,
        "newest_late": sub.newest_late,
        "raw_score": sub.raw_score,
        "penalty": {"fraction": sub.penalty, "points": sub.penalty_points},
        "hashes": {k: dict(v) for k, v in sub.hashes.items()},
        "reused": list(sub.reused),
        "labs": [render_json(r, lang) for r in sub.labs],
    }


def batch_doc(batch: BatchResult, lang: str) -> dict[str, Any]:
    """The JSON document as a dict."""
    return {
        "schema": GRADE_SCHEMA,
        "kind": "minillm-grade",
        "complete": batch.complete,
        "stopped": batch.stopped,
        "isolated": batch.isolated,
        "isolation": batch.isolation,
        "lang": lang,
        "labs": list(batch.labs),
        "max_score": batch.max_score,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch.started)),
        "total": batch.total,
        "deadline": batch.deadline,
        "late_policy": batch.late_policy,
        "previous": batch.previous,
        "submissions": [_submission(s, lang) for s in batch.submissions],
    }


def render_batch_json(batch: BatchResult, lang: str) -> str:
    """The document as text (UTF-8, indented)."""
    return json.dumps(batch_doc(batch, lang), ensure_ascii=False, indent=2) + "\n"

"""Our JSON document of a grading run (``--format json``).

    {"schema": 1, "kind": "minillm-grade", "complete": true, "stopped": "", "isolated": false,
     "isolation": "none" | "uid" | "bwrap",
     "lang": "en", "labs": ["lab04", ...], "max_score": 28, "started": "2025-...Z",
     "submissions": [{"name", "source", "commit", "seed", "dirty", "note", "error",
                      "seconds", "score", "max_score",
                      "labs": [<one lab's verify JSON (grader.report, schema 2)>, ...]}]}

A result file is rewritten as results arrive: ``complete`` is false until the run ended,
and ``submissions`` holds the ones that finished, in the order they were given. A run
stopped by a signal ends with ``complete`` false and ``stopped`` saying why ("SIGTERM").
"""

from __future__ import annotations

import json
import time
from typing import Any

from grader.grade.result import BatchResult, SubmissionResult
from grader.report import render_json

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
        "submissions": [_submission(s, lang) for s in batch.submissions],
    }


def render_batch_json(batch: BatchResult, lang: str) -> str:
    """The document as text (UTF-8, indented)."""
    return json.dumps(batch_doc(batch, lang), ensure_ascii=False, indent=2) + "\n"

"""How far a student has come: each lab's verdict for the current student.py files.

`course_progress()` verifies every lab (one sandbox for all of them) and remembers each
result under a key made of the student file, the lab's checks and the grader's version, in
`.minillm/progress.json` at the course root; a lab whose files did not change is not run
again. `minillm status` prints it; `minillm hint` and `minillm watch` use the same runs.

It does not judge: the verdicts are `verify`'s, counted.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from grader.i18n import Text
from grader.labs import LabInfo, all_labs, course_root, load_lab
from grader.results import LabResult, Status

__all__ = ["LabProgress", "cache_file", "course_progress", "lab_key"]

_VERSION = "1"  # bump when the cached fields change


@dataclass
class LabProgress:
    """One lab's standing: tests and checks passed, and whether it is done."""

    lab: str
    title_zh: str
    title_en: str
    tests_passed: int
    tests_total: int
    checks_passed: int
    checks_total: int
    todo: bool  # nothing written yet: every test is TODO
    done: bool  # every test passes

    @property
    def title(self) -> Text:
        return Text(self.title_zh, self.title_en)

    @classmethod
    def of(cls, result: LabResult) -> LabProgress:
        counts = result.check_counts()
        return cls(
            result.lab,
            result.title.zh,
            result.title.en,
            sum(t.status is Status.PASS for t in result.tests),
            len(result.tests),
            counts[Status.PASS],
            sum(counts.values()),
            bool(result.tests) and all(t.status is Status.TODO for t in result.tests),
            result.passed,
        )


def cache_file(root: Path | None = None) -> Path:
    """Where results are remembered (a folder the course's .gitignore leaves out)."""
    return (root or course_root()) / ".minillm" / "progress.json"


def lab_key(info: LabInfo, student: Path | None = None) -> str:
    """A digest of what decides the lab's verdict: the student's file and the checks."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        grader_version = version("minillm-lab")
    except PackageNotFoundError:
        grader_version = "?"
    digest = hashlib.sha256(f"{_VERSION}:{grader_version}:{info.id}".encode())
    for path in (student or info.student, info.verify, Path(__file__).parent.parent / "dsl.py"):
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"<missing>")
    return digest.hexdigest()


def _load(path: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # no cache yet, or one that was damaged: start again
    return data if isinstance(data, dict) else {}


def _save(path: Path, data: dict[str, dict[str, object]]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only course tree: results are simply not remembered


def course_progress(
    labs: list[LabInfo] | None = None, *, use_cache: bool = True
) -> list[LabProgress]:
    """Every lab's progress for its current student.py, running only what changed."""
    from grader.runner import run_lab
    from grader.sandbox.client import Sandbox

    labs = all_labs() if labs is None else labs
    path = cache_file()
    cache = _load(path) if use_cache else {}
    keys = {info.id: lab_key(info) for info in labs}  # of the files that are about to run
    cached: dict[str, LabProgress] = {}
    for info in labs:
        entry = cache.get(info.id)
        if entry is not None and entry.get("key") == keys[info.id]:
            try:
                cached[info.id] = LabProgress(**entry["progress"])  # type: ignore[arg-type]
            except TypeError:
                pass  # an entry from another version: run it again
    # every lab's checks are loaded before any student code runs (see grader.sandbox.guard)
    checks = {info.id: load_lab(info) for info in labs if info.id not in cached}
    out: list[LabProgress] = []
    sandbox: Sandbox | None = None
    try:
        for info in labs:
            if info.id in cached:
                out.append(cached[info.id])
                continue
            if sandbox is None:
                sandbox = Sandbox()
                sandbox.start()
            progress = LabProgress.of(run_lab(info, info.student, sandbox, checks[info.id]))
            cache[info.id] = {"key": keys[info.id], "progress": asdict(progress)}
            out.append(progress)
    finally:
        if sandbox is not None:
            sandbox.close()
    _save(path, cache)
    return out

"""The course copy a grading run stands on (`grader.grade.course`): what it compiles.

Sandboxes cannot write bytecode, so a module of the copy that was not compiled is compiled
again in every sandbox that imports it. The copy compiles only what a graded run imports
(`RUN_PACKAGES`); these tests import everything the run's processes do, from a real copy, and
check that each such module has its bytecode.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader.grade.course import copy_course
from grader.labs import all_labs

ROOT = Path(__file__).resolve().parent.parent

# What the worker, the zygote, its children and the labs' checks import: the entry points of
# each process, every framework module (the student's code may import any), every lab's
# checks with their hidden tests.
_IMPORT_ALL = """
import importlib, json, pkgutil, sys
from pathlib import Path
import grader.grade.worker, grader.grade.backends, grader.grade.run, grader.grade.wire
import grader.sandbox.zygote, grader.sandbox.worker, grader.sandbox.child
import grader.sandbox.spawn, grader.sandbox.stackdump
import framework
for m in pkgutil.walk_packages(framework.__path__, "framework."):
    importlib.import_module(m.name)
from grader.grade.checks import load_graded_lab
from grader.labs import LabInfo
root, private = Path.cwd(), Path(sys.argv[1])
for lab in sorted((root / "labs").iterdir()):
    if (lab / "verify.py").is_file():
        load_graded_lab(LabInfo(lab.name, lab), solutions=private)
print(json.dumps(sorted(
    m.__file__ for m in list(sys.modules.values())
    if getattr(m, "__file__", None) and m.__file__.startswith(str(root))
)))
"""


def test_the_copy_compiles_every_module_a_graded_run_imports(tmp_path: Path) -> None:
    labs = tuple(info.id for info in all_labs())
    course = copy_course(ROOT, tmp_path, labs)
    done = subprocess.run(
        [sys.executable, "-E", "-B", "-c", _IMPORT_ALL, str(course.private)],
        cwd=course.root,
        capture_output=True,
        text=True,
        check=True,
    )
    imported = [Path(p) for p in json.loads(done.stdout)]
    assert len(imported) > 100, imported  # the run's own modules were found in the copy
    missing = [
        str(p.relative_to(course.root))
        for p in imported
        if not Path(importlib.util.cache_from_source(str(p))).is_file()
    ]
    assert missing == [], f"imported by a graded run but not compiled: {missing}"


def test_the_copy_leaves_the_tools_a_run_never_imports_uncompiled(tmp_path: Path) -> None:
    course = copy_course(ROOT, tmp_path, ("lab04",))
    tool = course.root / "grader" / "commands" / "grade.py"
    assert tool.is_file()
    assert not Path(importlib.util.cache_from_source(str(tool))).exists()
    kept = course.root / "grader" / "sandbox" / "worker.py"
    assert Path(importlib.util.cache_from_source(str(kept))).is_file()


def test_a_grade_without_a_terminal_never_loads_the_progress_bar() -> None:
    # the batch's process draws no bar when no terminal watches, and pays nothing for it
    script = (
        "import sys\n"
        "from grader.commands.grade import _Progress\n"
        "from grader.results import BatchResult\n"
        "with _Progress(1) as p:\n"
        "    p.update(BatchResult(['lab04'], total=1))\n"
        "print('rich.progress' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "False", done.stdout + done.stderr


class _FakeZygote:
    """A zygote as `BwrapLauncher.launch` returns it: (process, control socket)."""

    def __init__(self) -> None:
        self.ended = False

    def close(self) -> None:  # the control socket
        self.ended = True

    def wait(self) -> int:  # the process
        return 0


def test_a_prestarted_zygote_serves_only_a_sandbox_with_the_same_mounts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grader.sandbox.bwrap as bwrap

    started: list[tuple[list[Path], list[Path]]] = []

    def launch(self: bwrap.BwrapLauncher) -> tuple[_FakeZygote, _FakeZygote]:
        started.append((self.student_dirs, self.hide))
        z = _FakeZygote()
        return z, z

    monkeypatch.setattr(bwrap, "_bwrap", lambda: "/usr/bin/bwrap")
    monkeypatch.setattr(bwrap.sys, "platform", "linux")
    monkeypatch.setattr(bwrap.BwrapLauncher, "launch", launch)
    monkeypatch.setattr(bwrap, "_prestarted", None)
    lab, results = tmp_path / "sub" / "labs" / "lab04", tmp_path / "results"

    bwrap.prestart(tmp_path, [lab], [results])
    assert started == [([lab], [results])]
    assert bwrap.take_prestarted(tmp_path, [lab], []) is None  # it would show the results
    assert bwrap._prestarted is None  # ended, not kept for another sandbox

    bwrap.prestart(tmp_path, [lab], [results])
    assert bwrap.take_prestarted(tmp_path, [tmp_path / "other"], [results]) is None
    bwrap.prestart(tmp_path, [lab], [results])
    got = bwrap.take_prestarted(tmp_path, [lab], [results])
    assert got is not None and not got[1].ended
    assert bwrap.take_prestarted(tmp_path, [lab], [results]) is None  # handed out once


def test_the_worker_prestarts_its_first_labs_sandbox_from_the_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grader.sandbox.bwrap as bwrap
    from grader.grade.run import GradeJob
    from grader.grade.worker import _prestart_first_lab

    calls: list[tuple[Path, list[Path], list[Path]]] = []
    monkeypatch.setattr(bwrap, "prestart", lambda r, d, h=(): calls.append((r, list(d), list(h))))
    job = GradeJob(tmp_path / "c", tmp_path / "p", tmp_path / "w", ("lab05", "lab06"),
                   hide=(tmp_path / "out",))  # fmt: skip
    job_file = tmp_path / "job.json"
    job_file.write_text(job.dumps(), encoding="utf-8")
    _prestart_first_lab(job_file)
    # exactly the folder and hidden folders IsolatedBackend gives the first lab's sandbox
    assert calls == [(job.course, [job.student("lab05").parent], list(job.hide))]

    job_file.write_text('{"labs": []}', encoding="utf-8")
    _prestart_first_lab(job_file)  # nothing to start, and nothing raised: main reports it
    _prestart_first_lab(tmp_path / "missing.json")
    assert len(calls) == 1

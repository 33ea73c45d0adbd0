"""The course copy a grading run stands on (`grader.grade.course`): what it compiles.

Sandboxes cannot write bytecode, so a module of the copy that was not compiled is compiled
again in every sandbox that imports it. The copy compiles only what a graded run imports
(`RUN_PACKAGES`); these tests import everything the run's processes do, from a real copy, and
check that each such module has its bytecode.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import grader.grade.course as course_mod
from grader.grade.course import RunFolder, copy_course, start_copy
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
import grader.sandbox.client, grader.sandbox.isolated, grader.sandbox.uidlevel  # the backends'
import grader.sandbox.spawn, grader.sandbox.stackdump
from grader.sandbox.guard import preload
preload()  # what every worker imports before student code runs: the lab's report
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
    if getattr(m, "__file__", None) and m.__file__.startswith((str(root), *sys.argv[2:]))
)))
"""


# the instructor's own packages: a module the copy lacks would be found there (the project
# is installed in editable mode), and a run would grade with it
_COURSE_DIRS = [str(ROOT / d) + os.sep for d in ("framework", "grader", "labs", "solutions")]


@pytest.mark.parametrize("how", ["at once", "beside a compiler"])
def test_the_copy_compiles_every_module_a_graded_run_imports(tmp_path: Path, how: str) -> None:
    labs = tuple(info.id for info in all_labs())
    if how == "at once":
        course = copy_course(ROOT, tmp_path, labs)
    else:  # as a batch does: the compiler runs while this process loads, then both finish
        course = start_copy(ROOT, tmp_path, labs).wait()
    done = subprocess.run(
        [sys.executable, "-E", "-B", "-c", _IMPORT_ALL, str(course.private), *_COURSE_DIRS],
        cwd=course.root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]  # nothing a run imports is left out
    imported = [Path(p) for p in json.loads(done.stdout)]
    outside = [str(p) for p in imported if course.root not in p.parents]
    assert outside == [], f"imported from the instructor's course, not the copy: {outside}"
    assert len(imported) > 100, imported  # the run's own modules were found in the copy
    missing = [
        str(p.relative_to(course.root))
        for p in imported
        if not Path(importlib.util.cache_from_source(str(p))).is_file()
    ]
    assert missing == [], f"imported by a graded run but not compiled: {missing}"


def test_the_copy_leaves_out_what_a_run_never_reads(tmp_path: Path) -> None:
    course = copy_course(ROOT, tmp_path, ("lab04",))
    for tool in ("commands", "course", "mine", "similarity", "student"):
        assert (ROOT / "grader" / tool).is_dir() and not (course.root / "grader" / tool).exists()
    reports = sorted(p.name for p in (course.root / "grader" / "render").glob("*.py"))
    assert reports == ["__init__.py", "lab.py", "term.py"]  # a lab's, not the class reports'
    assert (ROOT / "grader" / "render" / "gradebook.py").is_file()
    lab = course.root / "labs" / "lab04"
    kept = sorted(p.name for p in lab.iterdir() if p.name != "__pycache__")
    assert "verify.py" in kept and "diagnoses.json" in kept, kept
    assert not {"TASK.md", "TASK.en.md", "Makefile", "student.py", ".stub.py"} & set(kept), kept
    assert Path(importlib.util.cache_from_source(str(lab / "verify.py"))).is_file()
    worker = course.root / "grader" / "sandbox" / "worker.py"
    assert Path(importlib.util.cache_from_source(str(worker))).is_file()


def test_the_copy_is_written_while_the_grader_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    real = course_mod._copy_files

    def slow(source: Path, course: course_mod.Course) -> None:
        assert release.wait(60), "start_copy waited for the files to be written"
        real(source, course)

    monkeypatch.setattr(course_mod, "_copy_files", slow)
    pending = start_copy(ROOT, tmp_path, ("lab04",))  # returns with nothing written yet
    verify = pending.files.root / "labs" / "lab04" / "verify.py"
    assert not verify.exists()
    release.set()
    assert pending.copied() == pending.files and verify.is_file()
    # what the grader loads next is compiled already, the rest may not be yet
    assert Path(importlib.util.cache_from_source(str(verify))).is_file()
    assert _compiled(pending.wait().root) == course_mod._sources(pending.files.root)


def test_a_copy_that_fails_says_so_where_it_is_asked_for(tmp_path: Path) -> None:
    pending = start_copy(ROOT, tmp_path / "run", ("lab99",))  # no such lab folder
    with pytest.raises(FileNotFoundError, match="lab99"):
        pending.copied()
    with pytest.raises(FileNotFoundError, match="lab99"):
        pending.wait()
    pending.cancel()  # nothing left running


def _compiled(root: Path) -> list[str]:
    sources = course_mod._sources(root)
    return [s for s in sources if Path(importlib.util.cache_from_source(str(root / s))).is_file()]


@pytest.mark.parametrize("compiler", ["fails", "cannot start"])
def test_what_the_compiler_leaves_undone_this_process_compiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compiler: str
) -> None:
    def broken(root: Path, sources: list[str]) -> subprocess.Popen[bytes] | None:
        if compiler == "cannot start":
            return None
        return subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])

    monkeypatch.setattr(course_mod, "_start_compiler", broken)
    pending = start_copy(ROOT, tmp_path, ("lab04",))
    root = pending.copied().root  # the files are there to be read, the checks compiled
    assert (root / "labs" / "lab04" / "verify.py").is_file()
    assert _compiled(root) == [s for s in course_mod._sources(root) if s.startswith("labs/")]
    pending.wait()
    assert _compiled(root) == course_mod._sources(root)


def test_the_batch_and_its_compiler_share_the_compiling(tmp_path: Path) -> None:
    pending = start_copy(ROOT, tmp_path, ("lab04",))
    pending._writer.join()  # type: ignore[union-attr]
    assert pending._compiler is not None
    pending._compiler.wait()  # the compiler alone: it compiles every module, in order
    root = pending.files.root
    assert _compiled(root) == course_mod._sources(root)
    stamps = {s: os.stat(importlib.util.cache_from_source(str(root / s))).st_mtime_ns
              for s in course_mod._sources(root)}  # fmt: skip
    pending.wait()  # finds everything compiled: writes nothing again
    again = {s: os.stat(importlib.util.cache_from_source(str(root / s))).st_mtime_ns
             for s in course_mod._sources(root)}  # fmt: skip
    assert again == stamps


def test_no_worker_starts_before_the_copy_is_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grader.grade.supervisor as supervisor
    from grader.grade.batch import grade_batch
    from grader.grade.run import GradeOptions

    events: list[str] = []
    real_wait, real_popen = course_mod.PendingCourse.wait, supervisor.subprocess.Popen

    def wait(self: course_mod.PendingCourse) -> course_mod.Course:
        events.append("compiled")
        return real_wait(self)

    def popen(cmd: list[str], **kw: object) -> subprocess.Popen[bytes]:
        events.append(next((k for k in ("compileall", "grader.grade.worker") if k in cmd), "?"))
        return real_popen(cmd, **kw)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(course_mod.PendingCourse, "wait", wait)
    monkeypatch.setattr(supervisor.subprocess, "Popen", popen)
    sub = tmp_path / "sub" / "labs" / "lab04"
    sub.mkdir(parents=True)
    (sub / "student.py").write_text((ROOT / "labs" / "lab04" / "student.py").read_text())
    batch = grade_batch([tmp_path / "sub"], ROOT, GradeOptions(("lab04",)), work_dir=tmp_path)
    assert batch.submissions[0].error == ""
    assert events == ["compileall", "compiled", "grader.grade.worker"], events


def test_a_run_folder_is_removed_with_its_compiler_stopped(tmp_path: Path) -> None:
    folder = RunFolder(ROOT, ("lab04",), "none", tmp_path)
    folder.course.copied()  # the compiler starts once the files are written
    compiler = folder.course._compiler
    assert compiler is not None and folder.path.is_dir()
    folder.close()
    assert compiler.poll() is not None  # stopped, or done: not left running
    assert not folder.path.exists()


def test_a_run_folder_serves_only_the_batch_it_was_made_for(tmp_path: Path) -> None:
    from grader.grade.batch import grade_batch
    from grader.grade.run import GradeOptions

    with RunFolder(ROOT, ("lab04",), "none", tmp_path) as folder:
        with pytest.raises(ValueError, match="another course, labs or isolation"):
            grade_batch([], ROOT, GradeOptions(("lab05",)), folder=folder)
        assert folder.path.is_dir()  # the caller's to remove


def _fresh_python(script: str) -> str:
    """What `script` prints in a new interpreter started in the course (what it imports is
    its own)."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_grade_command_can_start_the_copy_before_loading_numpy() -> None:
    # the copy compiles beside the checks' loading only if choosing the isolation and
    # starting the copy need none of it
    script = (
        "import sys\n"
        "from grader.grade.backends import choose_isolation\n"
        "from grader.grade.course import RunFolder\n"
        "choose_isolation(False)\n"
        "print(sorted(m for m in ('numpy', 'grader.dsl', 'framework') if m in sys.modules))\n"
    )
    assert _fresh_python(script) == "[]"


def test_a_grade_stopped_by_a_usage_error_leaves_no_run_folder(tmp_path: Path) -> None:
    # the run folder is made before the options are all checked: an error removes it
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(tmp_path), "--no-isolation",
         "--labs", "lab04", "--late-policy", "penalty:per-day=10%"],
        capture_output=True, text=True, cwd=ROOT, env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "--late-policy needs --deadline" in done.stderr
    assert list(tmp_path.glob("minillm-grade-*")) == []


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
    assert _fresh_python(script) == "False"


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

    # a template serves only a template, and only for exactly the folders it reads (it
    # covers all of them but a phase's own); a zygote never serves a template
    other = tmp_path / "sub" / "labs" / "lab05"
    bwrap.prestart(tmp_path, [lab, other], [results], template=True)
    assert bwrap.take_prestarted(tmp_path, [lab, other], [results]) is None
    bwrap.prestart(tmp_path, [lab, other], [results], template=True)
    assert bwrap.take_prestarted(tmp_path, [lab], [results], template=True) is None
    bwrap.prestart(tmp_path, [lab], [results])
    assert bwrap.take_prestarted(tmp_path, [lab], [results], template=True) is None
    bwrap.prestart(tmp_path, [lab, other], [results], template=True)
    assert bwrap.take_prestarted(tmp_path, [other, lab], [results], template=True) is not None


def test_the_worker_prestarts_the_submissions_template_from_the_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grader.sandbox.bwrap as bwrap
    from grader.grade.backends import template_dirs
    from grader.grade.run import GradeJob
    from grader.grade.worker import _prestart_template

    calls: list[tuple[Path, list[Path], list[Path], bool]] = []

    def prestart(
        r: Path, d: list[Path], h: tuple[Path, ...] = (), *, template: bool = False
    ) -> None:
        calls.append((r, list(d), list(h), template))

    monkeypatch.setattr(bwrap, "prestart", prestart)
    job = GradeJob(tmp_path / "c", tmp_path / "p", tmp_path / "w", ("lab05", "lab06", "lab07"),
                   hide=(tmp_path / "out",))  # fmt: skip
    for lab in ("lab05", "lab07"):  # the submission has no lab06
        job.student(lab).parent.mkdir(parents=True)
    job_file = tmp_path / "job.json"
    job_file.write_text(job.dumps(), encoding="utf-8")
    _prestart_template(job_file)
    # exactly the folders and hidden folders IsolatedBackend gives the submission's template
    folders = [job.student("lab05").parent, job.student("lab07").parent]
    assert template_dirs(job) == folders
    assert calls == [(job.course, folders, list(job.hide), True)]

    job_file.write_text('{"labs": []}', encoding="utf-8")
    _prestart_template(job_file)  # nothing to start, and nothing raised: main reports it
    _prestart_template(tmp_path / "missing.json")
    assert len(calls) == 1

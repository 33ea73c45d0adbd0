"""Hostile submissions (tests/attacks/*.py) against `verify` and, where bubblewrap runs, `grade`.

Every attack is a lab04 ``student.py`` whose functions are stubs (so its honest score is 0,
or the ``# honest:`` count it declares) plus code that tries to get more: forged results,
planted files, signals, decoder bombs, processes that outlive the run. Its header says what
each trust level must do with it:

- ``contained``: the score is the honest one, no forged line reaches the report, no process
  of the run is left, no scratch folder either, and the grader's own peak memory stays
  under 1 GiB; under ``grade`` the instructor's course tree is byte-identical afterwards;
- ``contained-unless-root`` / ``contained-with-cgroup``: contained when not running as root
  / where a control group can be made; otherwise reported;
- ``reported``: the run ends with a report (never a traceback, never a hang);
- ``skip (why)``: not run at that level.

Each run happens in a copy of the course in a temporary folder, under
``tests/attacks/harness.py``, which adopts the run's orphans and measures the grader's memory.
The runs of a level are made in parallel, once, by a module fixture; the tests read them.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
ATTACKS = Path(__file__).resolve().parent / "attacks"
HARNESS = ATTACKS / "harness.py"
SECRET = "minillm-attack-secret-7f3a"
PEAK_LIMIT_KIB = 1024 * 1024  # the grader's own peak resident memory: under 1 GiB
RUN_LIMIT = 120.0  # seconds before the harness kills a run (a stopped grader, say)
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

pytestmark = [
    pytest.mark.slow,  # scheduled first (tests/conftest.py)
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="the attacks read /proc (Linux)"
    ),
]


@dataclass(frozen=True)
class Attack:
    name: str
    path: Path
    verify: str
    grade: str
    runs: int = 1
    honest: int = 0
    interrupts: bool = False
    grade_uid: str = ""  # what the uid level must do, where it differs from `grade`


def _header(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^# (verify|grade|grade-uid|runs|honest|interrupts): (.*)$", line)
        if m:
            found[m.group(1)] = m.group(2).strip()
    return found


def _attacks() -> list[Attack]:
    out = []
    for path in sorted(ATTACKS.glob("*.py")):
        if path.name == "harness.py":
            continue
        h = _header(path)
        out.append(
            Attack(
                path.stem,
                path,
                h.get("verify", ""),
                h.get("grade", ""),
                int(h.get("runs", "1")),
                int(h.get("honest", "0")),
                h.get("interrupts") == "yes",
                h.get("grade-uid", "").split(" ")[0],
            )
        )
    return out


ALL = _attacks()


def _cgroup_possible() -> bool:
    from grader.sandbox.cgroup import RunGroup

    group, _ = RunGroup.create(8, 0)
    if group is None:
        return False
    group.close()
    return True


def _readable_by_all(path: Path) -> bool:
    """Whether every user may read `path` (and pass through the folders above it)."""
    try:
        if not path.stat().st_mode & 0o004:
            return False
        return all(parent.stat().st_mode & 0o001 for parent in path.parents)
    except OSError:
        return False


def _exposed_solutions() -> list[Path]:
    """Copies of a course's solutions that any user of this machine may read, outside the
    course a run grades (this checkout, say): what the uid level cannot hide."""
    found = {Path(p) for p in glob.glob("/tmp/*/solutions/lab04/student.py")}
    found |= {Path(p) for p in glob.glob("/work/*/solutions/lab04/student.py")}
    found.add(ROOT / "solutions" / "lab04" / "student.py")
    return sorted(p for p in found if _readable_by_all(p))


def expectation(level: str, attack: Attack) -> str:
    """What `level` must do with `attack`: contained, reported or skip."""
    want = attack.verify if level == "verify" else attack.grade
    if level == "grade-uid" and attack.grade_uid:
        want = attack.grade_uid
    if want == "contained-unless-exposed":  # the uid level: no file system of its own
        return "reported" if _exposed_solutions() else "contained"
    if want.startswith("skip"):
        return "skip"
    if want == "contained-unless-root":
        return "reported" if IS_ROOT else "contained"
    if want == "contained-with-cgroup":
        return "contained" if _cgroup_possible() else "reported"
    assert want in ("contained", "reported"), f"{attack.name}: bad header {want!r}"
    return want


# -- one run ------------------------------------------------------------------------------
@dataclass
class Run:
    rc: int
    seconds: float
    timed_out: bool
    peak_kib: int
    leftovers: list[str]
    stdout: str
    stderr: str
    result: Any  # the JSON result file, parsed (None if missing or not JSON)
    tree_changed: list[str] = field(default_factory=list)
    tmp_left: list[str] = field(default_factory=list)
    marker: str = ""  # what a poisoned grader module wrote (POISONED)


def _copy_course(dst: Path, labs: tuple[str, ...] = ("lab04",)) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for package in ("framework", "grader"):
        shutil.copytree(ROOT / package, dst / package, ignore=ignore)
    (dst / "labs").mkdir()
    shutil.copyfile(ROOT / "labs" / "lab.mk", dst / "labs" / "lab.mk")
    for lab in labs:
        shutil.copytree(ROOT / "labs" / lab, dst / "labs" / lab, ignore=ignore)
        shutil.copytree(ROOT / "solutions" / lab, dst / "solutions" / lab, ignore=ignore)


def _hashes(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or path.is_file():
            rel = str(path.relative_to(root))
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            out[rel] = hashlib.sha256(data).hexdigest()
    return out


def _env(tmp: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp / "home"),
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmp / "tmp"),
        "MINILLM_ATTACK_SECRET": SECRET,
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",  # the interpreter's own first import (grader/)
    }
    for key in ("MINILLM_SANDBOX",):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def _harness(tmp: Path, cwd: Path, args: list[str], tag: str) -> tuple[dict[str, Any], str, str]:
    report = tmp / f"{tag}.harness.json"
    cmd = [sys.executable, str(HARNESS), str(report), str(RUN_LIMIT), "--", sys.executable]
    subprocess.run(cmd + args, cwd=cwd, env=_env(tmp), check=True, timeout=RUN_LIMIT + 30)
    out = Path(str(report) + ".out").read_text(encoding="utf-8", errors="replace")
    err = Path(str(report) + ".err").read_text(encoding="utf-8", errors="replace")
    return json.loads(report.read_text()), out, err


def _finish(
    tmp: Path,
    course: Path,
    before: dict[str, str],
    h: dict[str, Any],
    out: str,
    err: str,
    result_path: Path,
) -> Run:
    try:
        result = json.loads(result_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        result = None
    after = _hashes(course)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    marker = course / "POISONED"
    return Run(
        h["rc"],
        h["seconds"],
        h["timed_out"],
        h["grader_peak_kib"],
        h["leftovers"],
        out,
        err,
        result,
        changed,
        sorted(os.listdir(tmp / "tmp")),
        marker.read_text() if marker.exists() else "",
    )


def run_verify(attack: Attack, tmp: Path) -> list[Run]:
    """Verify the attack as lab04's student.py in a copy of the course (`runs` times)."""
    course = tmp / "course"
    _copy_course(course)
    shutil.copyfile(attack.path, course / "labs" / "lab04" / "student.py")
    (tmp / "tmp").mkdir()
    (tmp / "home").mkdir()
    runs = []
    for n in range(attack.runs):
        before = _hashes(course)
        result_path = tmp / f"verify-{n}.json"
        args = ["-m", "grader", "verify", "lab04", "--lang", "en", "--no-color"]
        h, out, err = _harness(tmp, course, [*args, "--json", str(result_path)], f"verify-{n}")
        runs.append(_finish(tmp, course, before, h, out, err, result_path))
    return runs


def run_grade(attack: Attack, tmp: Path, level: str = "bwrap") -> list[Run]:
    """Grade a submission holding the attack as labs/lab04/student.py (`runs` times), at
    isolation `level` (``bwrap`` or ``uid``)."""
    course = tmp / "course"
    _copy_course(course)
    sub = tmp / "submission" / "labs" / "lab04"
    sub.mkdir(parents=True)
    shutil.copyfile(attack.path, sub / "student.py")
    (tmp / "tmp").mkdir()
    (tmp / "home").mkdir()
    runs = []
    for n in range(attack.runs):
        before = _hashes(course)
        result_path = tmp / f"grade-{n}.json"
        args = ["-m", "grader", "grade", str(tmp / "submission"), "--labs", "lab04"]
        args += ["--format", "json", "--lang", "en", "--out", str(result_path)]
        args += ["--isolation", level]
        h, out, err = _harness(tmp, course, args, f"grade-{n}")
        runs.append(_finish(tmp, course, before, h, out, err, result_path))
    return runs


def _run_all(tmp_root: Path) -> dict[tuple[str, str], list[Run] | BaseException]:
    """Every (level, attack) run, made in parallel (most of a run's time is waiting)."""
    levels = ["verify"] + ([] if _bwrap_problem() else ["grade"])
    levels += [] if _uid_problem() else ["grade-uid"]
    chosen = [(lv, a) for lv in levels for a in ALL if expectation(lv, a) != "skip"]

    def one(job: tuple[str, Attack]) -> list[Run] | BaseException:
        level, attack = job
        where = tmp_root / f"{level}-{attack.name}"
        try:
            if level == "verify":
                return run_verify(attack, where)
            return run_grade(attack, where, "uid" if level == "grade-uid" else "bwrap")
        except BaseException as e:  # reported by the attack's own test
            return e

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = pool.map(one, chosen)
        return {(lv, a.name): r for (lv, a), r in zip(chosen, results, strict=True)}


def _bwrap_problem() -> str | None:
    from grader.sandbox.bwrap import unavailable

    return unavailable()


def _uid_problem() -> str | None:
    from grader.sandbox.uidlevel import uid_unavailable

    return uid_unavailable()


@pytest.fixture(scope="module")
def attack_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Any, Any]]:
    yield _run_all(tmp_path_factory.mktemp("attacks"))


# -- what a run must show -----------------------------------------------------------------
def _statuses_verify(result: Any) -> list[str]:
    return [t["status"] for t in result["tests"]]


def _passes(statuses: list[str]) -> int:
    return sum(s == "PASS" for s in statuses)


def _no_traceback(run: Run) -> None:
    assert "Traceback (most recent call last)" not in run.stderr, run.stderr[-3000:]
    assert "Traceback (most recent call last)" not in run.stdout, run.stdout[-3000:]
    assert not run.timed_out, "the run did not end by itself"


def _forged_lines(text: str) -> list[str]:
    """Report lines that claim a pass, and raw escape or workflow-command lines."""
    bad = []
    for line in text.splitlines():
        if re.match(r"^\s*\[PASS\]", line) or line.startswith(("::", "Result: all passed")):
            bad.append(line)
        if "\x1b" in line or "\r" in line:
            bad.append(line)
    return bad


def assert_contained(attack: Attack, run: Run, statuses: list[str], level: str) -> None:
    _no_traceback(run)
    assert run.leftovers == [], f"processes of the run were left: {run.leftovers}"
    assert run.tmp_left == [], f"left in TMPDIR: {run.tmp_left}"
    assert run.peak_kib < PEAK_LIMIT_KIB, f"grader peak {run.peak_kib} KiB"
    assert run.marker == "", f"a poisoned module ran in the grader: {run.marker}"
    assert SECRET not in run.stdout + run.stderr + json.dumps(run.result)
    assert _passes(statuses) == attack.honest, statuses
    if attack.honest == 0:
        assert _forged_lines(run.stdout) == [], _forged_lines(run.stdout)
    assert "internal grader error" not in run.stdout
    if level == "grade":
        assert run.tree_changed == [], f"the course tree changed: {run.tree_changed}"


def assert_reported(run: Run) -> None:
    _no_traceback(run)
    assert run.result is not None, f"no result file; stdout:\n{run.stdout[-2000:]}"
    assert "Result" in run.stdout or run.result.get("kind") == "minillm-grade"


@pytest.mark.parametrize("attack", ALL, ids=[a.name for a in ALL])
def test_attack_under_verify(attack: Attack, attack_runs: dict[Any, Any]) -> None:
    want = expectation("verify", attack)
    if want == "skip":
        pytest.skip(f"not run under verify: {attack.verify}")
    runs = attack_runs["verify", attack.name]
    if isinstance(runs, BaseException):
        raise runs
    for run in runs:
        if attack.interrupts:
            assert run.rc in (130, 143), (run.rc, run.stdout[-2000:], run.stderr[-2000:])
            assert "interrupted" in run.stdout
        else:
            assert run.rc in (0, 1), (run.rc, run.stdout[-2000:], run.stderr[-2000:])
        assert run.result is not None, (run.stdout[-2000:], run.stderr[-2000:])
        if want == "contained":
            assert_contained(attack, run, _statuses_verify(run.result), "verify")
        else:
            assert_reported(run)


def _statuses_grade(result: Any, level: str = "bwrap") -> list[str]:
    assert result["complete"] is True and result["isolated"] is True, result
    assert result["isolation"] == level
    (sub,) = result["submissions"]
    assert sub["error"] == "", sub["error"]
    (lab,) = sub["labs"]
    assert lab["sandbox"] == level
    return [t["status"] for t in lab["tests"]]


@pytest.mark.parametrize("level", ["bwrap", "uid"])
@pytest.mark.parametrize("attack", ALL, ids=[a.name for a in ALL])
def test_attack_under_grade(attack: Attack, level: str, attack_runs: dict[Any, Any]) -> None:
    problem = _bwrap_problem() if level == "bwrap" else _uid_problem()
    if problem:
        pytest.skip(f"the {level} level cannot run here, so it is not attacked: {problem}")
    key = "grade" if level == "bwrap" else "grade-uid"
    want = expectation(key, attack)
    if level == "bwrap" or not attack.grade_uid:
        assert want == "contained", f"{attack.name}: every attack must be contained under grade"
    runs = attack_runs[key, attack.name]
    if isinstance(runs, BaseException):
        raise runs
    for run in runs:
        assert run.rc in (0, 1), (run.rc, run.stdout[-2000:], run.stderr[-2000:])
        assert run.result is not None, (run.stdout[-2000:], run.stderr[-2000:])
        if want == "reported":  # see the attack's header: a limit the README states
            assert_reported(run)
            continue
        assert_contained(attack, run, _statuses_grade(run.result, level), "grade")


# -- the grader's own process (trust level 1) -----------------------------------------------
_AUDIT = r"""
import os, sys
late, armed = [], []
def hook(event, args):
    if event == "import" and armed and args[0] not in sys.modules:
        late.append(args[0])
sys.addaudithook(hook)
import grader.sandbox.session as session
_ensure = session.Session.ensure
def ensure(self, *a, **k):
    armed.append(1)
    return _ensure(self, *a, **k)
session.Session.ensure = ensure
_exit = os._exit
def exit_(code):
    with open(os.environ["AUDIT_OUT"], "w") as f:
        f.write("\n".join(sorted(set(late))))
    _exit(code)
os._exit = exit_
sys.argv = ["minillm", *sys.argv[1:]]
from grader.__main__ import main
main()
"""


def _audit(tmp: Path, args: list[str], *, tty: bool = False) -> list[str]:
    """Modules the grader imported after its first call into student code (run in a fresh
    copy of the whole course, so that status has nothing remembered)."""
    out = tmp / "late.txt"
    env = {**_env(tmp), "AUDIT_OUT": str(out)}
    env.pop("NO_COLOR")
    (tmp / "tmp").mkdir(exist_ok=True)
    course = tmp / "course"
    if not course.exists():
        labs = tuple(p.name for p in sorted((ROOT / "labs").glob("lab[0-9][0-9]")))
        _copy_course(course, labs)
        shutil.copytree(
            ROOT / "tests" / "mutants" / "lab04", course / "tests" / "mutants" / "lab04"
        )
    cmd = [sys.executable, "-c", _AUDIT, *args]
    if tty:
        import pty

        master, slave = pty.openpty()
        proc = subprocess.Popen(cmd, cwd=course, env=env, stdout=slave, stderr=slave)
        os.close(slave)
        text = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            text += chunk
        proc.wait(timeout=300)
        os.close(master)
        assert b"\x1b[" in text, "no colour: the report did not take the terminal path"
    else:
        subprocess.run(cmd, cwd=course, env=env, capture_output=True, timeout=300)
    return [m for m in out.read_text().splitlines() if m]


@pytest.mark.parametrize(
    "args, tty",
    [
        (["verify", "lab04", "--lang", "en"], False),
        (["verify", "lab04", "--solution", "--json", "-"], False),
        (["verify", "lab04", "--impl", "tests/mutants/lab04/no_max_subtraction.py"], True),
        (["status", "--lang", "en"], True),
    ],
    ids=["plain", "json", "tty-failing", "status"],
)
def test_nothing_is_imported_after_student_code_ran(
    args: list[str], tty: bool, tmp_path: Path
) -> None:
    if "--impl" in args and not (ROOT / args[args.index("--impl") + 1]).is_file():
        pytest.skip("that mutant is gone")
    assert _audit(tmp_path, args, tty=tty) == []


def test_the_grader_writes_no_bytecode_into_the_course(tmp_path: Path) -> None:
    course = tmp_path / "course"
    _copy_course(course)
    (tmp_path / "tmp").mkdir()
    env = {k: v for k, v in _env(tmp_path).items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "grader", "verify", "lab04", "--solution"],
        cwd=course,
        env=env,
        capture_output=True,
        check=True,
        timeout=120,
    )
    written = sorted(str(p.relative_to(course)) for p in course.rglob("*.pyc"))
    # only the interpreter's own import of the package itself, before the grader runs
    assert all(re.fullmatch(r"grader/__pycache__/__init__\..*\.pyc", w) for w in written), written


def test_an_unknown_sandbox_backend_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "tmp").mkdir()
    env = {**_env(tmp_path), "MINILLM_SANDBOX": "jail"}
    for args in (["verify", "lab04"], ["verify", "lab04", "--solution"]):
        done = subprocess.run(
            [sys.executable, "-m", "grader", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert "MINILLM_SANDBOX" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_signal_to_the_grader_still_reports_what_finished(signame: str, tmp_path: Path) -> None:
    import signal
    import time

    course = tmp_path / "course"
    _copy_course(course)
    slow = (ROOT / "solutions" / "lab04" / "student.py").read_text(encoding="utf-8")
    slow += "\n\ndef softmax(x):\n    import time\n    time.sleep(60)\n"
    (course / "labs" / "lab04" / "student.py").write_text(slow, encoding="utf-8")
    (tmp_path / "tmp").mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", "verify", "lab04", "--lang", "en", "--json", "r.json"],
        cwd=course,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(2.5)  # the softmax tests wait for their 5 s timeout
    proc.send_signal(getattr(signal, signame))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + getattr(signal, signame), err
    assert f"the run was interrupted ({signame})" in out, out
    assert "[PASS]" in out and "not run: the run was interrupted" in out
    assert "Traceback" not in err
    doc = json.loads((course / "r.json").read_text(encoding="utf-8"))
    assert any(t["status"] == "PASS" for t in doc["tests"])
    assert os.listdir(tmp_path / "tmp") == []
    leftovers = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True)
    assert leftovers.stdout.strip() == ""


def test_a_scratch_folder_that_stays_is_a_note_in_the_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from click.testing import CliRunner

    import grader.sandbox.client as client
    from grader.cli import cli

    kept: list[str] = []
    real = client._remove_tree

    def stays(root: str) -> str:
        kept.append(root)
        return f"could not remove {root}"

    monkeypatch.setattr(client, "_remove_tree", stays)
    try:
        done = CliRunner().invoke(cli, ["verify", "lab04", "--solution", "--lang", "en"])
    finally:
        for root in kept:  # the folder the note is about: removed now, not left behind
            real(root)
    assert kept and "note: could not remove" in done.output, done.output


@pytest.mark.parametrize("clock", ["as it is", "files stamped a second behind"])
def test_a_module_changed_after_student_code_started_is_not_imported(
    tmp_path: Path, clock: str
) -> None:
    # a kernel may stamp files from a clock a tick behind time.time(): here, as if by a
    # second, a file written after student code started must still count as changed
    behind = "_now = time.time; time.time = lambda: _now() + 1.0" if clock != "as it is" else ""
    script = f"""
import sys, time
sys.path.insert(0, {str(tmp_path)!r})
open({str(tmp_path / "early.py")!r}, "w").write("X = 1")
time.sleep(0.05)
{behind}
from grader.sandbox import guard
guard.harden_imports()
guard.preload()
open({str(tmp_path / "late.py")!r}, "w").write("X = 2")
import early
try:
    import late
except ImportError as e:
    print("refused:", e)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert "refused:" in done.stdout and "late.py changed" in done.stdout, done
    assert "early.py" not in done.stdout  # written before: imported


def test_without_a_writable_temp_folder_the_file_clock_is_taken_a_tick_early(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from grader.sandbox import guard

    def no_temp(*a: object, **k: object) -> tuple[int, str]:
        raise PermissionError("read-only")

    monkeypatch.setattr(guard.tempfile, "mkstemp", no_temp)
    monkeypatch.setattr(guard.time, "time", lambda: 1000.0)
    assert guard._file_clock_now() == 1000.0 - guard._TICK
    monkeypatch.undo()
    before = time.time()
    assert before - 1.0 < guard._file_clock_now() <= time.time()  # a file made now


# -- the isolated sandbox (trust level 2) ---------------------------------------------------
_PROBE = """
import json, os, socket

def _probe():
    info = {"uid": os.getuid(), "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
    info["course"] = sorted(os.listdir(COURSE))
    info["solutions"] = os.path.exists(os.path.join(COURSE, "solutions"))
    info["labs"] = os.path.exists(os.path.join(COURSE, "labs"))
    st = os.statvfs("/tmp")
    info["tmp_bytes"] = st.f_blocks * st.f_frsize
    info["cwd"] = os.getcwd()
    info["env"] = sorted(os.environ)
    try:
        socket.create_connection(("127.0.0.1", 22), timeout=1).close()
        info["net"] = "connected"
    except OSError as e:
        info["net"] = type(e).__name__
    try:
        open(os.path.join(COURSE, "framework", "planted.py"), "w").close()
        info["write_course"] = True
    except OSError:
        info["write_course"] = False
    return info

def attention_scores(q, k, scale):
    raise RuntimeError("PROBE" + json.dumps(_probe()) + "END")

def apply_mask(scores, mask):
    raise NotImplementedError

def softmax(x):
    raise NotImplementedError
"""


def _probe_message(doc: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(doc)
    m = re.search(r"PROBE(\{.*?\})END", text.replace('\\\\"', '"').replace('\\"', '"'))
    assert m, text[:3000]
    found: dict[str, Any] = json.loads(m.group(1))
    return found


def test_verify_isolated_runs_the_code_in_its_own_namespaces(tmp_path: Path) -> None:
    problem = _bwrap_problem()
    if problem:
        pytest.skip(problem)
    course = tmp_path / "course"
    _copy_course(course)
    probe = _PROBE.replace("COURSE", repr(str(course)))
    (course / "labs" / "lab04" / "student.py").write_text(probe, encoding="utf-8")
    (tmp_path / "tmp").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "grader", "verify", "lab04", "--isolated", "--json", "-"],
        cwd=course,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    doc = json.loads(done.stdout)
    assert doc["sandbox"] == "bwrap"
    info = _probe_message(doc)
    assert info["uid"] != os.getuid()
    assert max(info["pids"]) < 10, info["pids"]  # its own pid namespace: bwrap, zygote, child
    assert info["solutions"] is False and info["write_course"] is False
    assert info["net"] != "connected"
    assert info["tmp_bytes"] <= 256 * 1024**2 and info["cwd"] == "/tmp"
    assert "MINILLM_ATTACK_SECRET" not in info["env"] and "HOME" in info["env"]
    assert set(info["course"]) <= {"framework", "grader", "labs"}, info["course"]
    assert not (course / "framework" / "planted.py").exists()


def test_grade_refuses_without_bubblewrap_unless_told(tmp_path: Path) -> None:
    sub = tmp_path / "submission" / "labs" / "lab04"
    sub.mkdir(parents=True)
    shutil.copyfile(ROOT / "labs" / "lab04" / "student.py", sub / "student.py")
    (tmp_path / "tmp").mkdir()
    env = {**_env(tmp_path), "PATH": str(tmp_path / "empty")}  # no bwrap on PATH
    args = [sys.executable, "-m", "grader", "grade", str(sub.parent.parent), "--labs", "lab04"]
    done = subprocess.run(
        [*args, "--isolation", "bwrap"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert "apt-get install bubblewrap" in done.stderr and "--no-isolation" in done.stderr
    from grader.sandbox.uidlevel import uid_unavailable

    done = subprocess.run(
        [*args, "--lang", "en"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    if uid_unavailable() is None:  # root: the uid level runs instead
        assert done.returncode == 1, done.stderr
        assert done.stdout.startswith("isolation: the uid level"), done.stdout[:500]
    else:
        assert done.returncode == 2, done.stderr
        assert "apt-get install bubblewrap" in done.stderr and "--no-isolation" in done.stderr
    done = subprocess.run(
        [*args, "--no-isolation", "--lang", "en"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].startswith("NOT isolated"), done.stdout[:500]


def test_the_bwrap_command_mounts_no_solutions_and_nothing_writable(tmp_path: Path) -> None:
    from grader.sandbox.bwrap import bwrap_command

    course = tmp_path / "course"
    work = tmp_path / "subs" / "00001"
    cmd = bwrap_command(course, [work], ["python"], env={"A": "1"})
    binds = [cmd[i + 1] for i, a in enumerate(cmd) if a in ("--bind", "--ro-bind", "--dev-bind")]
    assert "--bind" not in cmd and "--dev-bind" not in cmd
    assert str(course / "framework") in binds and str(course / "grader") in binds
    assert str(work) in binds and str(course) not in binds and "/" not in binds
    assert not any("solutions" in b or "private" in b for b in binds)
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc"):
        assert flag in cmd
    assert "--die-with-parent" in cmd and "--new-session" in cmd and "--clearenv" in cmd
    assert cmd[cmd.index("--uid") + 1] != str(os.getuid())

"""The sandbox holds: hostile student code never earns a PASS, hangs or crashes the grader."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.dsl import Lab, TestContext
from grader.results import LabResult, Status
from grader.runner import run_tests
from grader.sandbox.client import Limits, Sandbox

HERE = Path(__file__).parent / "fixtures" / "adversarial"
STUDENT = HERE / "student.py"
ROOT = Path(__file__).resolve().parent.parent


def lab_calling(*names: str, timeout: float | None = None) -> Lab:
    """A lab whose tests each call one function with (1, 2) and expect exactly 3."""
    lab = Lab("labtest", "测试", "test")
    for name in names:

        def body(t: TestContext, name: str = name) -> None:
            value = t.call(name, 1, 2, timeout=timeout).value
            t.equal(("等于 3", "equals 3"), value, 3)
            t.close(("接近 3", "close to 3"), value, 3.0, atol=1e-9)

        body.__name__ = name
        lab.test(name, name)(body)
    return lab


def run(
    names: list[str], sandbox: Sandbox, timeout: float | None = None, student: Path = STUDENT
) -> LabResult:
    return run_tests(lab_calling(*names, timeout=timeout), student, sandbox)


def statuses(result: LabResult) -> dict[str, Status]:
    return {t.id: t.status for t in result.tests}


def test_honest_code_passes(sandbox: Sandbox) -> None:
    assert statuses(run(["honest"], sandbox)) == {"honest": Status.PASS}


def test_infinite_loop_times_out_and_later_tests_run(sandbox: Sandbox) -> None:
    start = time.monotonic()
    result = run(["infinite_loop", "honest"], sandbox, timeout=0.5)
    elapsed = time.monotonic() - start
    assert statuses(result) == {"infinite_loop": Status.TIMEOUT, "honest": Status.PASS}
    # a hang guard, not a speed measurement: the loop never ends on its own
    assert elapsed < 30, f"a 0.5 s timeout took {elapsed:.1f} s to end the test"
    line = result.tests[0].checks[-1]
    assert line.status is Status.TIMEOUT and "0.5 s" in line.message.en  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["exit_zero", "sys_exit", "segfault"])
def test_process_exits_are_errors(name: str, sandbox: Sandbox) -> None:
    result = run([name, "honest"], sandbox)
    assert statuses(result) == {name: Status.ERROR, "honest": Status.PASS}


def test_fake_pass_lines_stay_captured(sandbox: Sandbox) -> None:
    result = run(["fake_pass_storm", "honest"], sandbox)
    assert statuses(result)["fake_pass_storm"] is Status.FAIL
    line = result.tests[0].checks[-1]
    assert "printed too much" in line.name.en
    assert len(line.output) <= 2000


def test_huge_write_is_cut_not_kept(sandbox: Sandbox) -> None:
    result = run(["huge_write", "honest"], sandbox, timeout=10)
    assert statuses(result) == {"huge_write": Status.FAIL, "honest": Status.PASS}
    assert "50000000" in (result.tests[0].checks[-1].message or result.tests[0].reason).en


def test_monkeypatching_in_the_child_changes_nothing_here(sandbox: Sandbox) -> None:
    result = run(["patch_everything", "honest"], sandbox)
    assert statuses(result) == {"patch_everything": Status.FAIL, "honest": Status.PASS}


@pytest.mark.parametrize("name", ["lying_eq", "lying_float"])
def test_lying_objects_do_not_pass(name: str, sandbox: Sandbox) -> None:
    result = run([name], sandbox)
    assert statuses(result) == {name: Status.FAIL}
    assert all(c.status is Status.FAIL for c in result.tests[0].checks)


def test_huge_allocation_is_refused(sandbox: Sandbox) -> None:
    result = run(["huge_alloc", "honest"], sandbox, timeout=10)
    assert statuses(result) == {"huge_alloc": Status.ERROR, "honest": Status.PASS}
    assert "MemoryError" in result.tests[0].checks[-1].name.en


def test_memory_limit_is_configurable() -> None:
    with Sandbox(Limits(memory=64 * 1024**2)) as small:
        session = small.session(str(STUDENT))
        out = session.call("honest", 1, 2)
        assert out.ok and out.value == 3
        session.close()


@pytest.mark.parametrize(
    ("student", "needle"),
    [
        ("exit_at_import.py", "sys.exit"),
        ("syntax_error.py", "syntax_error.py:2"),
        ("loop_at_import.py", "import"),
    ],
)
def test_import_failures_point_at_the_file(student: str, needle: str) -> None:
    with Sandbox(Limits(timeout=1.0)) as sb:
        result = run(["honest"], sb, student=HERE / student)
    assert result.import_error is not None
    assert needle in result.import_error.en
    assert statuses(result) == {"honest": Status.ERROR}


def test_cli_report_has_no_forged_lines(tmp_path: Path) -> None:
    impl = tmp_path / "student.py"
    impl.write_text(
        (ROOT / "solutions" / "lab04" / "student.py").read_text()
        + "\n\n_real = softmax\n\ndef softmax(x):\n"
        + "    print('  [PASS] forged\\n' * 50000)\n    return _real(x)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "verify", "lab04", "--impl", str(impl), "--lang", "en"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 1
    forged = [ln for ln in proc.stdout.splitlines() if ln.startswith("  [PASS] forged")]
    assert forged == []
    assert "printed too much" in proc.stdout


def test_files_written_by_student_code_stay_in_the_scratch_folder(sandbox: Sandbox) -> None:
    session = sandbox.session(str(STUDENT))
    out = session.call("write_file", 1, 2)
    session.close()
    assert out.ok
    assert out.value == sandbox.workdir
    assert not (ROOT / "stray.txt").exists()
    assert not (HERE / "stray.txt").exists()


def test_a_poisoned_child_is_replaced_and_a_healthy_one_kept(sandbox: Sandbox) -> None:
    session = sandbox.session(str(STUDENT))
    assert session.call("honest", 1, 2).ok
    first = session.pid
    assert session.call("honest", "a", 2).kind == "exception"  # an ordinary bug
    assert session.pid == first
    assert session.call("huge_alloc", 1, 2).exc["type"] == "MemoryError"
    assert session.call("honest", 1, 2).value == 3
    assert session.pid not in (None, first)
    session.close()


def test_call_counting_counts_and_restores(tmp_path: Path, sandbox: Sandbox) -> None:
    student = tmp_path / "student.py"
    student.write_text(
        "def inner(x):\n    return x + 1\n\n"
        "def outer(n):\n    return [inner(i) for i in range(n)]\n"
    )
    session = sandbox.session(str(student))
    out = session.call("outer", 3, count=("inner",))
    assert out.value == [1, 2, 3] and out.counts == {"inner": 3}
    assert session.call("outer", 2).counts == {}  # the original is back, uncounted
    session.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")
def test_processes_started_by_student_code_end_with_the_run() -> None:
    with Sandbox() as sb:
        session = sb.session(str(STUDENT))
        out = session.call("escape", 1, 2)
        assert out.ok and isinstance(out.value, int)
        escaped = out.value
        session.close()  # ends the child's process group; the setsid() one has left it
        assert _alive(escaped)
    assert not _alive(escaped)

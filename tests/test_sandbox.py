"""The sandbox holds: hostile student code never earns a PASS, hangs or crashes the grader.

Every behaviour is checked on each backend that runs here (fork and spawn on Linux).
"""

from __future__ import annotations

import ast
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from grader.codec import CodecError, Handle
from grader.dsl import Lab, TestContext
from grader.labs import LabInfo, all_labs, load_lab
from grader.results import LabResult, Status
from grader.runner import run_tests
from grader.sandbox import launch, limits
from grader.sandbox.channel import PumpOutput
from grader.sandbox.client import Limits, Sandbox, SandboxError, _remove_tree
from grader.sandbox.outcome import Outcome
from grader.sandbox.protocol import FrameReader, recv_frame, send_frame, sync_marker
from grader.sandbox.session import Session

pytestmark = pytest.mark.slow  # scheduled first (tests/conftest.py)

BACKENDS = ["fork", "spawn"] if launch.fork_usable() else ["spawn"]

HERE = Path(__file__).parent / "fixtures" / "adversarial"
STUDENT = HERE / "student.py"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def sandbox(backend: str) -> Iterator[Sandbox]:
    with Sandbox(backend=backend) as sb:
        yield sb


def write_student(tmp_path: Path, source: str, name: str = "student.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


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


# -- what student code can't do ---------------------------------------------------------------
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


def test_exit_status_and_signal_are_reported(sandbox: Sandbox) -> None:
    session = sandbox.session(str(STUDENT))
    exited = session.call("exit_zero", 1, 2)
    killed = session.call("segfault", 1, 2)
    session.close()
    assert (exited.kind, exited.exit_status) == (Outcome.CRASH, 0)
    assert killed.kind is Outcome.CRASH and killed.exit_status == 11  # SIGSEGV


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


def test_memory_limit_is_configurable(backend: str) -> None:
    with Sandbox(Limits(memory=64 * 1024**2), backend=backend) as small:
        assert small.memory_limited and small.memory_note == ""
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
def test_import_failures_point_at_the_file(student: str, needle: str, backend: str) -> None:
    with Sandbox(Limits(timeout=1.0), backend=backend) as sb:
        result = run(["honest"], sb, student=HERE / student)
    assert result.import_error is not None
    assert needle in result.import_error.en
    assert statuses(result) == {"honest": Status.ERROR}


def test_a_hang_at_import_shows_its_line(backend: str) -> None:
    with Sandbox(Limits(timeout=1.0), backend=backend) as sb:
        out = sb.session(str(HERE / "loop_at_import.py")).ensure()
    assert out is not None and out.kind is Outcome.IMPORT
    frames = out.error.frames
    assert frames and frames[-1].file == "loop_at_import.py"
    assert frames[-1].line in (1, 2)


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
    assert session.call("honest", "a", 2).kind is Outcome.EXCEPTION  # an ordinary bug
    assert session.pid == first
    assert session.call("huge_alloc", 1, 2).error.type == "MemoryError"
    assert session.call("honest", 1, 2).value == 3
    assert session.pid not in (None, first)
    session.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _ends(pid: int, within: float = 10.0) -> bool:
    """Whether `pid` is gone within `within` s (a SIGKILL takes effect asynchronously)."""
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")
def test_processes_started_by_student_code_end_with_the_run(backend: str) -> None:
    with Sandbox(backend=backend) as sb:
        session = sb.session(str(STUDENT))
        out = session.call("escape", 1, 2)
        assert out.ok and isinstance(out.value, int)
        escaped = out.value  # it left the child's process group with setsid()
        assert _alive(escaped)
        session.close()
    assert _ends(escaped)


# -- transport --------------------------------------------------------------------------------
def _framed(payload: bytes) -> bytes:
    return len(payload).to_bytes(8, "little") + payload


def test_frame_reader_assembles_pieces_and_never_reads_past_a_frame() -> None:
    stream = _framed(b"hello") + _framed(b"") + _framed(b"x" * 3000)
    reader = FrameReader()
    frames, pos = [], 0
    while pos < len(stream):
        n = min(reader.wanted(), 7)  # small reads: every header and body split
        frame = reader.feed(stream[pos : pos + n])
        pos += n
        if frame is not None:
            frames.append(frame)
    assert frames == [b"hello", b"", b"x" * 3000]
    with pytest.raises(CodecError):
        FrameReader().feed(_framed(b"ab") + b"extra")  # more than the frame holds


def test_frame_reader_refuses_an_oversized_frame() -> None:
    with pytest.raises(CodecError, match="exceeds"):
        FrameReader(limit=10).feed((11).to_bytes(8, "little"))


def test_blocking_and_incremental_reads_take_turns_on_one_socket() -> None:
    a, b = socket.socketpair()
    with a, b:
        for payload in (b"first", b"second" * 1000, b"third"):
            send_frame(a, payload)
        assert recv_frame(b) == b"first"
        b.setblocking(False)
        reader = FrameReader()
        frame = None
        while frame is None:
            try:
                frame = reader.feed(b.recv(reader.wanted()))
            except BlockingIOError:
                time.sleep(0.001)
        assert frame == b"second" * 1000
        b.setblocking(True)
        assert recv_frame(b) == b"third"


@pytest.mark.skipif("fork" not in BACKENDS, reason="no fork backend here")
def test_the_fork_backend_needs_no_seqpacket(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(socket, "SOCK_SEQPACKET", raising=False)  # as on macOS
    with Sandbox(backend="fork") as sb:
        paths = [str(HERE / "exit_at_import.py"), str(STUDENT)]
        for path in paths * 3:  # spawn requests pipelined on the control stream
            session = sb.session(path)
            session.ensure()
            session.close()
        session = sb.session(str(STUDENT))
        assert session.call("honest", 1, 2).value == 3
        session.close()


def test_the_session_needs_no_client_and_limits_is_a_leaf() -> None:
    code = (
        "import sys, grader.sandbox.session, grader.sandbox.limits\n"
        "assert 'grader.sandbox.client' not in sys.modules, 'session imports client'\n"
        "from grader.sandbox.client import Sandbox, Limits, CallOutcome\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)
    for leaf, allowed in (("sandbox/limits.py", {"grader.errors"}), ("errors.py", set())):
        tree = ast.parse((ROOT / "grader" / leaf).read_text())
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module)])
        }
        heavy = {m for m in imported if m and m.startswith(("grader", "framework", "numpy"))}
        assert heavy <= allowed, leaf  # grader.errors is itself a leaf


# -- choosing a backend -----------------------------------------------------------------------
def test_the_backend_can_be_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINILLM_SANDBOX", "spawn")
    assert Sandbox().backend == "spawn"
    monkeypatch.setenv("MINILLM_SANDBOX", "vm")
    with pytest.raises(SandboxError, match="MINILLM_SANDBOX"):
        Sandbox()


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_spawn_is_chosen_where_fork_is_unsafe_and_memory_is_not_capped(
    platform: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MINILLM_SANDBOX", raising=False)
    monkeypatch.setattr(sys, "platform", platform)
    assert launch.choose_backend() == "spawn"
    with pytest.raises(ValueError, match="fork"):
        launch.choose_backend("fork")
    ok, why = limits.memory_support()
    assert not ok and ("macOS" if platform == "darwin" else "Windows") in why
    sb = Sandbox()  # not started: nothing runs
    assert (sb.backend, sb.memory_limited, sb.memory_note) == ("spawn", False, why)


def test_spawn_over_tcp_with_a_token() -> None:
    """The Windows path: no AF_UNIX descriptor passing, the child connects to 127.0.0.1."""
    with Sandbox(Limits(timeout=1.0), backend="spawn", transport="tcp") as sb:
        session = sb.session(str(STUDENT))
        assert session.call("honest", 1, 2).value == 3
        assert session.call("infinite_loop", 1, 2).kind is Outcome.TIMEOUT
        crash = session.call("exit_zero", 1, 2)
        assert (crash.kind, crash.exit_status) == (Outcome.CRASH, 0)
        assert session.call("honest", 2, 2).value == 4
        session.close()


def test_each_call_gets_exactly_its_own_output(sandbox: Sandbox, tmp_path: Path) -> None:
    student = write_student(
        tmp_path,
        """
        import sys

        def say(i, n):
            for _ in range(n):
                print(i)
            sys.stderr.write(f"err{i}\\n")
            return i
        """,
    )
    session = sandbox.session(str(student))
    for i in range(40):
        n = 2000 if i % 10 == 0 else 1
        out = session.call("say", i, n)
        assert out.value == i
        assert out.output == f"{i}\n" * n + f"err{i}\n"
        assert out.output_bytes == len(out.output)
    session.close()


def test_a_sync_marker_split_across_reads_is_found() -> None:
    r, w = os.pipe()
    pump = PumpOutput(r)
    pump.begin(1000)
    marker = sync_marker(0)
    os.write(w, b"abc" + marker[:5])
    time.sleep(0.05)
    os.write(w, marker[5:] + b"\0not-a-marker" + sync_marker(1))
    assert pump.collect(0, 5.0) == (b"abc", 3)
    assert pump.collect(1, 5.0) == (b"\0not-a-marker", 13)
    os.close(w)
    assert pump.collect(None, 5.0) == (b"", 0)


# -- handles ----------------------------------------------------------------------------------
HANDLES = """
import time

class Box:
    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value

def make(value):
    return Box(value)

def hang():
    while True:
        time.sleep(0.01)
"""


def test_a_handle_of_a_replaced_child_is_reported_stale(sandbox: Sandbox, tmp_path: Path) -> None:
    session = sandbox.session(str(write_student(tmp_path, HANDLES)))
    old = session.call("make", "old").value
    assert isinstance(old, Handle) and old.gen == session.child_gen
    assert session.call("get", target=old).value == "old"
    assert session.call("hang", timeout=0.5).kind is Outcome.TIMEOUT  # the child is replaced
    new = session.call("make", "new").value
    assert new.id == old.id and new.gen != old.gen  # numbered from 1 again
    stale = session.call("get", target=old)
    assert stale.kind is Outcome.STALE
    message = stale.error.message
    assert "earlier sandbox process" in message and "replaced after a timeout" in message
    assert session.call("get", target=new).value == "new"
    session.close()


# -- hangs ------------------------------------------------------------------------------------
HANGS = """
import time

def spin(n):
    total = 0
    while True:
        total += n

def nap(x):
    time.sleep(30)

def quick(x):
    return x
"""


def test_a_timed_out_function_fails_at_once_afterwards(sandbox: Sandbox, tmp_path: Path) -> None:
    session = sandbox.session(str(write_student(tmp_path, HANGS)))
    assert session.call("quick", 0).value == 0  # the child is up: starting it is not timed here
    first = session.call("spin", 1, timeout=0.5)
    assert first.kind is Outcome.TIMEOUT
    assert session.call("quick", 1).value == 1
    generation, pid = session.generation, session.pid
    again = session.call("spin", 2, timeout=5.0)
    assert again.kind is Outcome.TIMEOUT and again.exc is not None
    assert again.exc.first == 0.5 and again.exc.repeat is True
    assert "timed out earlier" in again.exc.message
    assert (session.generation, session.pid) == (generation, pid)  # it never ran
    session.close()


def test_a_timeout_shows_where_the_code_was_stuck(sandbox: Sandbox, tmp_path: Path) -> None:
    session = sandbox.session(str(write_student(tmp_path, HANGS)))
    for name, lines in (("spin", ("while True:", "total += n")), ("nap", ("time.sleep(30)",))):
        out = session.call(name, 1, timeout=1.0)
        assert out.kind is Outcome.TIMEOUT and out.exc is not None
        frames = out.exc.frames
        assert frames, f"no frames for {name}"
        assert frames[-1].file == "student.py" and frames[-1].func == name
        assert frames[-1].code in lines  # a loop is caught on either of its lines
    session.close()


def test_a_run_has_a_deadline_of_its_own(sandbox: Sandbox, tmp_path: Path) -> None:
    session = sandbox.session(str(write_student(tmp_path, HANGS)), deadline=1.0)
    cut = session.call("nap", 1, timeout=10.0)
    assert cut.kind is Outcome.TIMEOUT and cut.exc is not None
    assert "deadline" in cut.exc.message and cut.exc.deadline == 1.0
    after = session.call("quick", 1)
    assert after.kind is Outcome.TIMEOUT and "deadline of 1 s has passed" in after.error.message
    session.close()


# -- protocol features ------------------------------------------------------------------------
TODO = """
import numpy as np
from helper import unfinished

def stub(x):
    raise NotImplementedError("lab: implement stub")

def uses_stub(x):
    return stub(x) + 1

def memoryview_rows(x):
    view = memoryview(np.arange(4, dtype=np.uint8).tobytes()).cast("B", (2, 2))
    return view[0]

def calls_helper(x):
    return unfinished(x)
"""


def test_todo_is_only_the_stubs_own_error(sandbox: Sandbox, tmp_path: Path) -> None:
    write_student(tmp_path, "def unfinished(x):\n    raise NotImplementedError\n", "helper.py")
    student = write_student(tmp_path, TODO)
    session = sandbox.session(str(student))
    kinds = {name: session.call(name, 1).kind for name in ("stub", "uses_stub")}
    assert kinds == {"stub": Outcome.TODO, "uses_stub": Outcome.TODO}
    for name in ("memoryview_rows", "calls_helper"):
        out = session.call(name, 1)
        assert out.kind is Outcome.EXCEPTION and out.error.type == "NotImplementedError"
    assert out.error.frames[-1].file == "helper.py"
    session.close()
    lab = Lab("labtest", "测试", "test")

    @lab.test("memoryview", "memoryview")
    def memoryview_rows(t: TestContext) -> None:
        t.check("returns", t.call("memoryview_rows", 1).value is not None)

    assert statuses(run_tests(lab, student, sandbox)) == {"memoryview_rows": Status.ERROR}


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


ALIASES = """
def encode_byte(b):
    return b + 4

def decode_id(i):
    return i - 4

dec = decode_id  # a module-level alias

def roundtrip(data):
    enc = encode_byte  # a local alias
    ids = [enc(b) for b in data]
    return ids, bytes(dec(i) for i in ids)

def pairs(data):
    for b in data:
        yield encode_byte(b)

def lazy(data):
    return list(pairs(data))
"""


def test_call_counting_sees_aliases(sandbox: Sandbox, tmp_path: Path) -> None:
    session = sandbox.session(str(write_student(tmp_path, ALIASES)))
    out = session.call("roundtrip", b"hi!", count=("encode_byte", "decode_id"))
    assert out.value == ([108, 109, 37], b"hi!")
    assert out.counts == {"encode_byte": 3, "decode_id": 3}
    lazy = session.call("lazy", b"abcd", count=("pairs", "encode_byte"))
    assert lazy.counts == {"pairs": 1, "encode_byte": 4}  # resuming a generator is no call
    session.close()


FORBID = """
import framework.math_ops
from framework import math_ops
from framework.math_ops import softmax as sm
from framework.tensor import tensor_from

def direct(x):
    return framework.math_ops.softmax(x)

def aliased(x):
    return sm(x)

def swallowed(x):
    try:
        return sm(x)
    except Exception:
        return "caught"

def own(x):
    return x

def bound(tok, text):
    encode = tok.encode
    return encode(text)

def by_module(x):
    f = math_ops.softmax
    return f(x)
"""

SOFTMAX = "framework.math_ops:softmax"


def test_forbidden_functions_are_trapped_through_any_alias(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    import numpy as np

    from grader.codec import Build

    x = np.array([[1.0, 2.0]], dtype=np.float32)
    session = sandbox.session(str(write_student(tmp_path, FORBID)))
    for name in ("direct", "aliased", "swallowed", "by_module"):
        out = session.call(name, x, forbid=(SOFTMAX,))
        assert out.kind is Outcome.FORBIDDEN, name
        assert out.exc is not None and out.exc.targets == [SOFTMAX]
        assert out.exc.type == "ForbiddenCall" and "framework.math_ops.softmax" in (out.exc.message)
    assert session.call("aliased", x).kind is Outcome.OK  # put back after the call
    assert session.call("own", 1, forbid=(SOFTMAX,)).value == 1
    tok = session.build(Build("framework.tokenizer:ByteTokenizer")).value
    encode = "framework.tokenizer:ByteTokenizer.encode"
    out = session.call("bound", tok, "a", forbid=(encode,))
    assert out.kind is Outcome.FORBIDDEN and out.error.targets == [encode]
    swept = session.map("aliased", [(x,), (x,)], forbid=(SOFTMAX,))
    assert swept.kind is Outcome.FORBIDDEN
    session.close()


@pytest.mark.parametrize("info", all_labs(), ids=lambda info: info.id)
def test_every_forbidden_target_of_a_lab_can_be_trapped(info: LabInfo) -> None:
    """Each framework function a lab forbids resolves to a plain function the sandbox can
    wrap; one that cannot (a method using super() has a closure cell) would make every
    call of the student function it guards an error, the reference solution's too."""
    from grader.sandbox.traps import resolve

    lab = load_lab(info)
    targets = {t for rule in lab.forbidden.values() for t in rule.targets}
    for target in sorted(targets):
        assert resolve(target).__qualname__ == target.partition(":")[2], target


def test_the_output_cap_can_be_raised_per_call(sandbox: Sandbox, tmp_path: Path) -> None:
    student = write_student(tmp_path, "def loud(n):\n    print('x' * n)\n    return n\n")
    session = sandbox.session(str(student))
    assert session.call("loud", 100_000).kind is Outcome.OVERFLOW  # the default cap is 64 KiB
    out = session.call("loud", 100_000, output=200_000)
    assert out.kind is Outcome.OK and len(out.output) == 100_001
    assert session.call("loud", 100, output=50).kind is Outcome.OVERFLOW
    session.close()


def test_a_raised_cap_holds_however_late_the_grader_goes_on(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The grader thread is slow to go on after sending: on the spawn backend the output
    thread has read the whole print by then, and must have kept it with this call's cap."""
    import grader.sandbox.session as session_module

    def send_then_stall(conn: socket.socket, frame: bytes) -> None:
        send_frame(conn, frame)
        time.sleep(0.3)

    student = write_student(tmp_path, "def loud(n):\n    print('x' * n)\n    return n\n")
    session = sandbox.session(str(student))
    assert session.ensure() is None
    monkeypatch.setattr(session_module, "send_frame", send_then_stall)
    out = session.call("loud", 100_000, output=200_000)
    assert out.kind is Outcome.OK and len(out.output) == 100_001
    session.close()


def test_the_sandbox_output_cap_holds_for_what_the_import_prints(
    backend: str, tmp_path: Path
) -> None:
    source = "print('x' * 100_000)\nraise ValueError('after the print')\n"
    student = write_student(tmp_path, source)
    with Sandbox(Limits(output=200_000), backend=backend) as sb:
        session = sb.session(str(student))
        out = session.ensure()
    assert out is not None and out.kind is Outcome.IMPORT
    assert out.output.count("x") == 100_000


def test_sessions_share_nothing_but_the_sandbox(sandbox: Sandbox, tmp_path: Path) -> None:
    student = write_student(tmp_path, HANDLES)
    one, two = sandbox.session(str(student)), sandbox.session(str(student))
    handle = one.call("make", 1).value
    out = two.call("get", target=handle)
    assert out.kind is Outcome.STALE and "another sandbox process" in out.error.message
    assert one.call("get", target=handle).value == 1
    one.close()
    two.close()


def test_a_session_needs_only_spawn_reap_and_limits(tmp_path: Path) -> None:
    with Sandbox() as sb:

        class Minimal:
            limits = Limits(timeout=2.0)
            spawn = sb.spawn
            reap = sb.reap

        session = Session(Minimal(), str(STUDENT))
        assert session.call("honest", 1, 2).value == 3
        session.close()


# -- what a child may touch -------------------------------------------------------------------
LIMITS = """
import os

def env(name):
    return os.environ.get(name)

def write(n):
    with open("big.bin", "wb") as f:
        f.write(b"x" * n)
    return n

def open_many(n):
    return len([open(os.devnull) for _ in range(n)])
"""


def test_a_child_gets_a_scrubbed_environment_and_file_limits(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINILLM_TEST_SECRET", "hunter2")
    student = write_student(tmp_path, LIMITS)
    with Sandbox(Limits(files=1024**2, open_files=64), backend=backend) as sb:
        session = sb.session(str(student))
        assert session.call("env", "MINILLM_TEST_SECRET").value is None
        assert session.call("env", "PYTHONDONTWRITEBYTECODE").value == "1"
        assert session.call("write", 1000).value == 1000
        big = session.call("write", 2 * 1024**2)
        assert big.kind is Outcome.EXCEPTION and "too large" in big.error.message
        assert session.call("open_many", 100).error.message.startswith("[Errno 24]")
        session.close()


@pytest.mark.skipif("fork" not in BACKENDS or not Path("/proc").is_dir(), reason="fork, /proc")
def test_the_zygote_cannot_write_into_the_report() -> None:
    with Sandbox(backend="fork") as sb:
        sb.session(str(STUDENT)).ensure()
        zygote = sb._impl._proc  # type: ignore[union-attr]
        assert zygote is not None
        assert os.readlink(f"/proc/{zygote.pid}/fd/1") == os.devnull
        assert os.readlink(f"/proc/{zygote.pid}/fd/2") == os.devnull


def _as_nobody(fn: Callable[[], str]) -> str:
    """fn() in a forked child that runs as an unprivileged user (root ignores permissions)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            os.setgid(65534)
            os.setuid(65534)
            try:
                text = fn()
            except Exception as e:
                text = repr(e)
            os.write(w, text.encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    os.waitpid(pid, 0)
    return text


def _games(root: str) -> str:
    os.makedirs(os.path.join(root, "a", "b"))
    Path(root, "a", "b", "f").write_text("x")
    os.chmod(os.path.join(root, "a", "b"), 0)
    os.chmod(os.path.join(root, "a"), 0o100)
    return f"{_remove_tree(root)!r} {os.path.lexists(root)}"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX permissions")
def test_the_scratch_folder_goes_even_after_permission_games(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        assert _games(str(tmp_path / "games")).split() == ["''", "False"]
        return
    shared = Path(tempfile.mkdtemp(prefix="minillm-test-"))  # reachable by the other user
    try:
        shared.chmod(0o777)
        root = shared / "games"
        assert _as_nobody(lambda: _games(str(root))).split() == ["''", "False"]
        stuck = shared / "stuck"
        (stuck / "root-owned").mkdir(parents=True)
        (stuck / "root-owned" / "file").write_text("x")
        stuck.chmod(0o777)
        left = _as_nobody(lambda: f"{_remove_tree(str(stuck))} {stuck.exists()}")
        assert "could not be removed" in left and left.split()[-1] == "True"
    finally:
        shutil.rmtree(shared)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_DUMPABLE is Linux")
def test_the_grader_can_be_made_undumpable() -> None:
    code = (
        "import ctypes\n"
        "from grader.sandbox.limits import make_undumpable\n"
        "libc = ctypes.CDLL(None)\n"
        "before = libc.prctl(3, 0, 0, 0, 0)\n"  # PR_GET_DUMPABLE
        "print(before, make_undumpable(), libc.prctl(3, 0, 0, 0, 0))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.split() == ["1", "True", "0"], out.stderr


def test_a_spare_forked_before_a_save_never_serves_the_new_file(tmp_path: Path) -> None:
    path = write_student(tmp_path, "def version():\n    return 1\n")
    with Sandbox(backend="fork") as sb:
        first = sb.session(str(path))
        assert first.call("version").value == 1  # a spare for the same file is forked ahead
        first.close()
        path.write_text("def version():\n    return 2\n", encoding="utf-8")
        second = sb.session(str(path))
        assert second.call("version").value == 2
        second.close()


def test_a_half_written_last_dump_falls_back_to_the_one_before(tmp_path: Path) -> None:
    from grader.sandbox import stacks

    student = write_student(tmp_path, "def f():\n    while True:\n        pass\n")
    whole = (
        "Timeout (0:00:00.200000)!\nThread 0x01 (most recent call first):\n"
        f'  File "{student}", line 3 in f\n  File "/grader/worker.py", line 9 in _call\n\n'
    )
    frames = stacks.parse(whole + "Timeout (0:00:00.200000)!\nThread 0x01 (most", str(student))
    assert frames == [{"file": "student.py", "line": 3, "func": "f", "code": "pass"}]


def test_without_signals_a_request_arms_one_dump_before_its_time_is_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Windows path, in this process: faulthandler's thread dumps once, at dump_at."""
    from grader.sandbox import stackdump, stacks

    monkeypatch.setattr(stackdump, "DUMP_SIGNAL", None)
    path = tmp_path / "stack.txt"
    dump = stackdump.StackDump(str(path))
    dump.arm(0.3)
    try:
        time.sleep(1.5)
    finally:
        dump.disarm()
    assert dump.file is not None
    dump.file.close()
    frames = stacks.stuck_frames(str(path), __file__)
    assert (
        frames[-1]["func"] == "test_without_signals_a_request_arms_one_dump_before_its_time_is_up"
    )
    # on a loaded machine this thread may not have left arm() yet when the dump comes
    assert frames[-1]["code"] in ("time.sleep(1.5)", "dump.arm(0.3)")


SWEEP = """
def draw(x, rng):
    x.numpy()[0] += 1.0  # in place: every call of the sweep sees the same Tensor
    return float(x.numpy()[0]) + rng.random()
"""


def test_a_sweep_can_leave_its_arguments_in_the_child(sandbox: Sandbox, tmp_path: Path) -> None:
    import numpy as np

    from framework import tensor_from
    from grader.codec import Seeded
    from grader.sandbox.inline import InlineSandbox

    for box in (sandbox, InlineSandbox()):
        session = box.session(str(write_student(tmp_path, SWEEP)))
        x = tensor_from(np.zeros(3, np.float32))
        calls = [(x, Seeded((801, i))) for i in range(3)]
        kept = session.map("draw", calls)
        assert kept.kind is Outcome.OK and len(kept.args) == 3
        assert kept.args[0][0] is kept.args[2][0]  # one Tensor object, sent once
        assert float(kept.args[0][0].numpy()[0]) == 3.0
        dropped = session.map("draw", calls, return_args=False)
        assert dropped.kind is Outcome.OK and dropped.args == []
        want = [n + np.random.default_rng([801, i]).random() for i, n in enumerate((1, 2, 3))]
        assert kept.value == want and dropped.value == want
        session.close()


def test_a_seeded_sweep_is_the_map_of_its_seeded_calls(
    any_sandbox: Sandbox, tmp_path: Path
) -> None:
    """`map_seeded` sends the arguments once; the values are those of `map` with a
    `Seeded((*seed, i))` per call (the same Tensor object each time), on every backend
    (fork, spawn: the default on macOS and Windows) and in-process."""
    import numpy as np

    from framework import tensor_from
    from grader.codec import Seeded
    from grader.sandbox.inline import InlineSandbox

    for box in (any_sandbox, InlineSandbox()):
        session = box.session(str(write_student(tmp_path, SWEEP)))
        x, y = (tensor_from(np.zeros(3, np.float32)) for _ in range(2))
        mapped = session.map("draw", [(x, Seeded((801, 7, i))) for i in range(5)])
        seeded = session.map_seeded("draw", (y,), (801, 7), 5)
        assert seeded.kind is Outcome.OK and seeded.args == []
        assert seeded.value == mapped.value and len(set(seeded.value)) == 5
        assert session.map_seeded("draw", (y,), (801, 7), 0).value == []
        with pytest.raises(ValueError, match="0 to 1000000 calls"):
            session.map_seeded("draw", (y,), (801,), -1)
        with pytest.raises(ValueError, match="bad seed prefix"):
            session.map_seeded("draw", (y,), tuple(range(8)), 3)  # 9 integers with i
        session.close()


def test_the_child_refuses_a_malformed_seeded_sweep() -> None:
    from grader.codec import CodecError
    from grader.sandbox.worker import _seeded

    good = {"calls": [[1.0]], "seed": [3], "repeat": 2}
    assert _seeded(good) == ([1.0], [3], 2)
    for bad, match in [
        ({**good, "calls": [[1.0], [2.0]]}, "exactly one argument list"),
        ({**good, "repeat": True}, "0 to 1000000 calls"),
        ({**good, "repeat": 10**7}, "0 to 1000000 calls"),
        ({**good, "seed": [-1]}, "a seed is"),
        ({**good, "seed": ["3"]}, "a seed is"),
    ]:
        with pytest.raises(CodecError, match=match):
            _seeded(bad)

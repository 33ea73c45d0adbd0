"""A submission's template (`grader.sandbox.template`): each phase it forks is a sandbox of
its own, as a bubblewrap of its own would be.

Every test runs hostile code in a phase (a student module whose functions probe the
sandbox) and asserts what must not reach another phase, the template or the grader:
files, mounts, capabilities, keys, sockets, processes; and that where a phase cannot be
made, the sandbox falls back to a bubblewrap of its own.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="templates are Linux's (bubblewrap, /proc)"
)


def _problem() -> str | None:
    from grader.sandbox.bwrap import unavailable

    return unavailable()


PROBE = r"""
import ctypes, json, os, signal, socket, time

_libc = ctypes.CDLL(None, use_errno=True)
_kept = []


def _try(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return type(e).__name__


def _errno(result):
    return "ok" if result == 0 else os.strerror(ctypes.get_errno())


def write(path):
    def go():
        with open(path, "w") as f:
            f.write("planted")
    return _try(go)


def listdir(path):
    try:
        return json.dumps(sorted(os.listdir(path)))
    except OSError as e:
        return type(e).__name__


def umount(path):
    return _errno(_libc.umount2(path.encode(), 2))


def umount_in_own_namespaces(path):
    # a user and mount namespace of its own: full capabilities there, over locked mounts
    if _libc.unshare(0x10000000 | 0x00020000) != 0:
        return "unshare: " + os.strerror(ctypes.get_errno())
    return umount(path)


def capabilities():
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return line.split()[1]


def nspid():
    for line in open("/proc/self/status"):
        if line.startswith("NSpid:"):
            return json.dumps([int(p) for p in line.split()[1:]])


def template_pid():
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = open(f"/proc/{entry}/cmdline", "rb").read()
            except OSError:
                continue
            if b"--template" in cmd:
                return int(entry)
    return 0


def open_memory(pid):
    return _try(lambda: open(f"/proc/{pid}/mem", "r+b").close())


def open_descriptor(pid, fd):
    return _try(lambda: os.close(os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY)))


def read_environ(pid):
    return _try(lambda: open(f"/proc/{pid}/environ", "rb").read())


def signal_through_proc(pid):
    def go():
        fd = os.open(f"/proc/{pid}", os.O_RDONLY | os.O_DIRECTORY)
        try:
            signal.pidfd_send_signal(fd, 0)
        finally:
            os.close(fd)
    return _try(go)


_KEYS = {"x86_64": (248, 249), "aarch64": (217, 218), "riscv64": (217, 218)}


def add_key(data):
    _libc.syscall.restype = ctypes.c_long
    payload = data.encode()
    number = _KEYS[os.uname().machine][0]
    return _libc.syscall(number, b"user", b"minillm-phase", payload, len(payload), -3) > 0


def find_key():
    _libc.syscall.restype = ctypes.c_long
    number = _KEYS[os.uname().machine][1]
    return _libc.syscall(number, b"user", b"minillm-phase", None, -3) > 0


def listen(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + name)
    s.listen(1)
    _kept.append(s)
    return "ok"


def connect(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    return _try(lambda: s.connect("\0" + name))


def daemon():
    # a grandchild in a session of its own, which would outlive a careless sandbox
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(w, str(os.getpid()).encode())
            time.sleep(120)
        os._exit(0)
    os.close(w)
    return int(os.read(r, 32) or b"0")
"""


@pytest.fixture
def sub(tmp_path: Path) -> Path:
    """A submission with two labs, each file the probe (and a mark of its own lab)."""
    for lab in ("lab04", "lab05"):
        folder = tmp_path / "sub" / "labs" / lab
        folder.mkdir(parents=True)
        (folder / "student.py").write_text(PROBE + f"\nLAB = {lab!r}\n", encoding="utf-8")
    return tmp_path / "sub" / "labs"


@pytest.fixture
def template(sub: Path) -> Iterator[Any]:
    from grader.sandbox.template import Template

    problem = _problem()
    if problem:
        pytest.skip(problem)

    t = Template(ROOT, [sub / "lab04", sub / "lab05"])
    yield t
    t.close()


class Phase:
    """One phase's sandbox, made by the template, and a session on its lab's probe."""

    def __init__(self, template: Any, folder: Path) -> None:
        from grader.sandbox.isolated import IsolatedSandbox

        self.sandbox = IsolatedSandbox(ROOT, [folder], template=template)
        self.sandbox.start()
        self.session = self.sandbox.session(str(folder / "student.py"))

    def __call__(self, name: str, *args: Any) -> Any:
        out = self.session.call(name, *args, timeout=30)
        assert out.ok, (name, out.kind, out.error)
        return out.value

    def close(self) -> None:
        self.session.close()
        self.sandbox.close()


@pytest.fixture
def phases(template: Any, sub: Path) -> Iterator[list[Phase]]:
    made: list[Phase] = []
    yield made
    for p in made:
        p.close()


def _phase(template: Any, phases: list[Phase], folder: Path) -> Phase:
    p = Phase(template, folder)
    phases.append(p)
    return p


def test_a_phase_runs_in_namespaces_nested_in_the_templates(
    template: Any, phases: list[Phase], sub: Path
) -> None:
    a = _phase(template, phases, sub / "lab04")
    assert template.failed == ""
    ns = json.loads(a("nspid"))
    assert len(ns) == 2 and ns[-1] <= 3, ns  # the template's pid namespace, then its own
    assert a("capabilities") == "0000000000000000"
    assert a("template_pid") > 0
    assert a.sandbox.isolation_note == ""


def test_nothing_one_phase_writes_reaches_the_next(
    template: Any, phases: list[Phase], sub: Path
) -> None:
    a = _phase(template, phases, sub / "lab04")
    assert a("write", "/tmp/left") == "ok" and a("write", "/dev/shm/left") == "ok"
    for path in ("/left", "/dev/left", "/etc/left", "/root/left", str(sub / "lab04" / "x")):
        assert a("write", path) in ("OSError", "PermissionError"), path  # read-only
    assert a("write", str(ROOT / "framework" / "planted.py")) != "ok"
    a.close()
    phases.remove(a)
    b = _phase(template, phases, sub / "lab05")
    assert "left" not in json.loads(b("listdir", "/tmp"))
    assert json.loads(b("listdir", "/dev/shm")) == []


def test_a_phase_cannot_undo_its_mounts(template: Any, phases: list[Phase], sub: Path) -> None:
    a = _phase(template, phases, sub / "lab04")
    assert a("umount", "/tmp") == os.strerror(1)  # EPERM: no capability left
    assert a("umount", str(sub / "lab05")) == os.strerror(1)
    # with every capability of a user namespace of its own, the mounts are locked
    assert a("umount_in_own_namespaces", str(sub / "lab05")) == os.strerror(22)  # EINVAL


def test_a_phase_sees_its_own_lab_folder_only(
    template: Any, phases: list[Phase], sub: Path
) -> None:
    a = _phase(template, phases, sub / "lab04")
    assert json.loads(a("listdir", str(sub / "lab04"))) == ["student.py"]
    assert json.loads(a("listdir", str(sub / "lab05"))) == []
    b = _phase(template, phases, sub / "lab05")
    assert json.loads(b("listdir", str(sub / "lab04"))) == []
    assert json.loads(b("listdir", str(sub / "lab05"))) == ["student.py"]


def test_the_template_and_the_next_phase_are_out_of_reach(
    template: Any, phases: list[Phase], sub: Path
) -> None:
    a = _phase(template, phases, sub / "lab04")
    nxt = _phase(template, phases, sub / "lab05")
    nxt.session.ensure()  # the next phase's zygote, warm, as run_job keeps it
    pid = a("template_pid")
    assert a("open_memory", pid) == "PermissionError"
    assert a("read_environ", pid) == "PermissionError"
    for entry in ("root", "cwd"):  # its file system, through /proc
        assert a("listdir", f"/proc/{pid}/{entry}") == "PermissionError", entry
    assert a("open_descriptor", pid, 0) == "PermissionError"  # its open files
    assert a("signal_through_proc", pid) == "OSError"  # EINVAL: outside its pid namespace
    # every process outside the phase (the template, the next phase's zygote; no reaper of
    # bubblewrap's) is out of reach: only the phase's own child opens
    assert pid == 1
    outside = [int(p) for p in json.loads(a("listdir", "/proc")) if p.isdigit()]
    own = json.loads(a("nspid"))[0]
    assert len(outside) >= 3, outside  # the template, this phase's zygote, the next one's
    assert {p: a("open_memory", p) for p in outside if p != own} == {
        p: "PermissionError" for p in outside if p != own
    }
    assert a("open_memory", own) == "ok"


@pytest.mark.skipif(
    os.uname().machine not in ("x86_64", "aarch64", "riscv64"), reason="keyctl numbers"
)
def test_keys_and_sockets_stay_in_their_phase(phases: list[Phase], sub: Path) -> None:
    import ctypes

    from grader.sandbox.template import Template

    problem = _problem()
    if problem:
        pytest.skip(problem)

    # a session keyring of the grader's (a login's): the template and its phases inherit it
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    number = {"x86_64": 250, "aarch64": 219, "riscv64": 219}[os.uname().machine]
    name = f"minillm-test-{os.getpid()}-{id(phases)}".encode()
    assert libc.syscall(number, 1, name) > 0  # KEYCTL_JOIN_SESSION_KEYRING, a new one
    template = Template(ROOT, [sub / "lab04", sub / "lab05"])
    a = _phase(template, phases, sub / "lab04")
    assert a("add_key", "hidden inputs") is True and a("find_key") is True
    assert a("listen", "minillm-phase") == "ok" and a("connect", "minillm-phase") == "ok"
    b = _phase(template, phases, sub / "lab05")  # while a still runs
    assert b("find_key") is False
    assert b("connect", "minillm-phase") in ("ConnectionRefusedError", "FileNotFoundError")
    for p in phases:
        p.close()
    phases.clear()
    template.close()


def test_a_phases_processes_end_with_it(template: Any, phases: list[Phase], sub: Path) -> None:
    a = _phase(template, phases, sub / "lab04")
    a("daemon")
    group = a.sandbox.group
    hosts = group.pids() if group is not None else []
    zygote = a.sandbox._impl._proc
    assert zygote is not None
    from grader.sandbox.limits import children_of

    tree, frontier = [], [zygote.pid]
    while frontier:
        kids = children_of(frontier.pop())
        tree += kids
        frontier += kids
    assert len(tree) >= 2  # the child and the daemon
    a.close()
    phases.remove(a)
    for pid in [zygote.pid, *tree, *hosts]:
        assert not os.path.exists(f"/proc/{pid}") or _state(pid) in ("Z", "X"), pid


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0]
    except OSError:
        return "X"


def test_where_a_phase_cannot_be_made_the_sandbox_has_a_bubblewrap_of_its_own(
    template: Any, phases: list[Phase], sub: Path, tmp_path: Path
) -> None:
    from grader.sandbox.template import Template

    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "student.py").write_text(PROBE, encoding="utf-8")
    outside = _phase(template, phases, other)  # a folder the template does not read
    assert len(json.loads(outside("nspid"))) == 1  # bubblewrap's own pid namespace
    assert template.failed == ""  # and the template still serves the next phase
    assert len(json.loads(_phase(template, phases, sub / "lab04")("nspid"))) == 2

    broken = Template(ROOT, [sub / "lab04", sub / "lab05"])
    broken.student_dirs.append(tmp_path / "gone")  # a cover the phase cannot mount
    try:
        assert broken.phase([sub / "lab04"]) is None
        assert "gone" in broken.failed and "mounting a tmpfs" in broken.failed
        late = _phase(broken, phases, sub / "lab05")
        assert len(json.loads(late("nspid"))) == 1
    finally:
        broken.close()


def test_a_phase_whose_grader_goes_away_ends_at_once_and_alone(template: Any, sub: Path) -> None:
    import select

    from grader.sandbox.protocol import recv_json, send_json

    got = template.phase([sub / "lab04"])
    assert got is not None
    zygote, ctl = got
    assert recv_json(ctl) == {"ready": True}
    send_json(ctl, {"op": "reap", "pid": 12345})  # a reply this side never reads
    assert select.select([ctl], [], [], 30)[0]
    ctl.close()  # unread data: the zygote's next read fails (ECONNRESET), not an EOF
    zygote.wait(timeout=60)  # it ends without being killed (the next test: at once)
    assert template.phase([sub / "lab05"]) is not None  # the template serves on


def test_a_phase_zygote_ends_however_its_loop_ends() -> None:
    """Its loop ended by a reset socket, a phase's zygote ends there; one that went on to
    the module's last handler would look for its descendants through the template's /proc
    (where pid 1 is the template) for its 10 s budget."""
    import select
    import socket

    from grader.sandbox import zygote
    from grader.sandbox.protocol import recv_json, send_json

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:  # the zygote, outside any namespace: only its loop's end is looked at
        try:
            ours.close()
            zygote._phase_zygote(theirs.detach())
        finally:
            os._exit(70)  # reached only if it returned or raised
    theirs.close()
    assert recv_json(ours) == {"ready": True}
    send_json(ours, {"op": "reap", "pid": 12345})  # a reply this side never reads
    assert select.select([ours], [], [], 30)[0]
    ours.close()  # its next read fails: ECONNRESET
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.fixture
def sleeper() -> Iterator[Any]:
    """A process of ours that sleeps for a minute (ended after the test)."""
    import subprocess

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


def _without_pidfd(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a kernel before 5.3."""
    from grader.sandbox import template as module

    def refuse(pid: int) -> int:
        raise OSError(38, "no pidfd_open")

    monkeypatch.setattr(module.os, "pidfd_open", refuse)


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "pid-and-start-time"])
def test_a_phase_process_is_watched_and_ended_without_being_our_child(
    pidfd: bool, sleeper: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    from grader.sandbox.template import PhaseProcess

    if not pidfd:
        _without_pidfd(monkeypatch)
    watched = PhaseProcess(sleeper.pid)
    assert watched.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        watched.wait(timeout=0.05)  # it sleeps for a minute: this wait must time out
    watched.kill()
    assert sleeper.wait(timeout=30) == -9
    assert watched.wait(timeout=30) == 0 and watched.poll() == 0


def test_a_reused_pid_is_never_taken_for_the_phase_process(
    sleeper: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grader.sandbox.template import PhaseProcess

    _without_pidfd(monkeypatch)
    watched = PhaseProcess(sleeper.pid)
    watched._start = str(int(watched._start) - 1)  # the pid's earlier owner, now gone
    assert watched.poll() == 0  # that one has ended
    watched.kill()
    assert sleeper.poll() is None  # and this one was not signalled


RUNNER = """
import json, sys
sys.path.insert(0, ROOT)
sys.path.append(BASE)  # a folder on the path that holds the submission: mounts in mounts
from pathlib import Path
from grader.sandbox.isolated import IsolatedSandbox
from grader.sandbox.template import Template

sub = Path(SUB)
t = Template(Path(ROOT), [sub / "lab04", sub / "lab05"])
sb = IsolatedSandbox(Path(ROOT), [sub / "lab04"], template=t)
sb.start()
s = sb.session(str(sub / "lab04" / "student.py"))
ns = s.call("nspid", timeout=30).value
other = s.call("listdir", str(sub / "lab05"), timeout=30).value
print(json.dumps({"failed": t.failed, "ns": ns, "other": other}))
s.close()
sb.close()
t.close()
"""


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="root becomes nobody")
def test_a_grader_that_is_not_root_gets_its_phases_too() -> None:
    import shutil
    import subprocess
    import tempfile

    problem = _problem()
    if problem:
        pytest.skip(problem)
    nobody = 65534
    probe = subprocess.run([sys.executable, "-c", "import numpy"], user=nobody, group=nobody,
                           capture_output=True, check=False)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip("user nobody cannot run this interpreter (its folders are not theirs to pass)")
    base = Path(tempfile.mkdtemp(dir="/tmp"))  # not under pytest's own folder, root's only
    try:
        base.chmod(0o777)
        for lab in ("lab04", "lab05"):
            (base / "sub" / lab).mkdir(parents=True)
            (base / "sub" / lab / "student.py").write_text(PROBE, encoding="utf-8")
        script = RUNNER.replace("ROOT", repr(str(ROOT))).replace("SUB", repr(str(base / "sub")))
        script = script.replace("BASE", repr(str(base)))
        done = subprocess.run([sys.executable, "-c", script], user=nobody, group=nobody, cwd=base,
                              env={"PATH": os.environ.get("PATH", "/usr/bin"), "HOME": str(base)},
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        # made by the template (not a bubblewrap of its own), its maps written though the
        # template's /proc files are root's, and the other lab covered
        got = json.loads(done.stdout)
        assert got["failed"] == "", got  # made by the template, not a bubblewrap of its own
        assert len(json.loads(got["ns"])) == 2 and json.loads(got["other"]) == [], got
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_phases_made_from_two_threads_at_once_are_each_the_templates(
    template: Any, phases: list[Phase], sub: Path
) -> None:
    # a submission's lanes (`grader.grade.lanes`) make their next phases at the same time
    from concurrent.futures import ThreadPoolExecutor

    folders = [sub / "lab04", sub / "lab05"] * 4
    with ThreadPoolExecutor(2) as pool:
        made = list(pool.map(lambda folder: Phase(template, folder), folders))
    phases.extend(made)
    assert template.failed == ""
    assert all(p.sandbox._impl._launcher.fallback is None for p in made)  # none fell back
    inside = [json.loads(p("nspid"))[0] for p in made]  # each pid in the template's namespace
    assert len(set(inside)) == len(made), inside

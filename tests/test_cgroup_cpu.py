"""Each sandbox's control group gets a CPU share of its own, nests under the grader's own
groups, and measures the CPU time of its tree; where no group can be made, RLIMIT_CPU and
a lower priority stand in (`limits.apply_child_limits`, `limits.tree_cpu_seconds`).

Tests that need a control group skip, saying why, where this system cannot make one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from grader.sandbox import cgroup, limits
from grader.sandbox.cgroup import RunGroup

posix_only = pytest.mark.skipif(
    os.name != "posix" or not hasattr(os, "fork"), reason="needs POSIX fork"
)
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc")


def _own_groups() -> dict[str, str]:
    """Controller -> this process's group path, from /proc/self/cgroup ("" for v2)."""
    found: dict[str, str] = {}
    with open("/proc/self/cgroup") as f:
        for line in f.read().splitlines():
            _, names, path = line.split(":", 2)
            for name in names.split(",") if names else [""]:
                found[name] = path
    return found


def _mount_of(path: str) -> tuple[str, str]:
    """(mount point, root of the mount) of the file system that holds `path`."""
    point = path
    while not os.path.ismount(point):
        point = os.path.dirname(point)
    with open("/proc/self/mountinfo") as f:
        for line in f.read().splitlines():
            fields = line.split()
            if fields[4] == point:
                return point, fields[3]
    return point, "/"


def _controller_of(d: str) -> str:
    """Which v1 controller's hierarchy the group directory `d` is in (by its files)."""
    for name, probe in (
        ("pids", "pids.max"),
        ("memory", "memory.limit_in_bytes"),
        ("cpu", "cpu.cfs_quota_us"),
        ("cpuacct", "cpuacct.usage"),
    ):
        if os.path.isfile(os.path.join(d, probe)):
            return name
    return "?"


@pytest.fixture
def make_group() -> Iterator[Callable[..., RunGroup]]:
    made: list[RunGroup] = []

    def make(processes: int = 64, memory: int = 0, cpus: float = 1.0) -> RunGroup:
        group, note = RunGroup.create(processes, memory, cpus)
        if group is None:
            pytest.skip(f"no control group can be made here: {note}")
        made.append(group)
        return group

    yield make
    for group in made:
        group.close()


def _needs_cpu(group: RunGroup) -> None:
    if not group.cpu_dir:
        pytest.skip(f"the group has no CPU share here: {group.cpu_note}")


def _needs_acct(group: RunGroup) -> None:
    if not group.acct_dir:
        pytest.skip(f"the group's CPU time cannot be measured here: {group.cpu_note}")


def _busy_child(group: RunGroup | None, cpu_budget: float = 0.0) -> int:
    """Fork a child that, once in `group`, spins (until it has used `cpu_budget` seconds of
    CPU and then exits, or forever when 0)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(w)
            os.read(r, 1)
            while cpu_budget <= 0 or time.process_time() < cpu_budget:
                pass
        finally:
            os._exit(0)
    os.close(r)
    if group is not None:
        assert group.add(pid)
    os.write(w, b"x")
    os.close(w)
    return pid


def _end(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    os.waitpid(pid, 0)


# -- nesting -----------------------------------------------------------------------------


def test_group_nests_under_our_own_group_of_each_controller(
    make_group: Callable[..., RunGroup],
) -> None:
    group = make_group()
    own = _own_groups()
    if group.version == 2:
        assert os.path.dirname(group.dirs[0]) == os.path.join(
            cgroup._ROOT, own[""].lstrip("/")
        ).rstrip("/")
        return
    seen = set()
    for d in group.dirs:
        parent = os.path.dirname(d)
        point, root = _mount_of(parent)
        inside = os.path.relpath(parent, point)
        names = {_controller_of(d)} | ({"cpuacct"} if d == group.acct_dir else set())
        for name in names:
            assert name in own, (d, name)
            assert os.path.normpath(os.path.join(root, inside)) == os.path.normpath(own[name]), (
                d,
                name,
            )
            seen.add(name)
    assert {"pids", "memory"} <= seen
    if group.cpu_dir:
        assert "cpu" in seen
    if group.acct_dir:
        assert "cpuacct" in seen


def test_v1_places_nest_in_a_shared_cpu_cpuacct_hierarchy_and_a_mounted_subtree() -> None:
    cgroups = (
        "12:pids:/user.slice/grader\n"
        "4:memory:/process_api/abc\n"
        "3:cpu,cpuacct:/docker/xyz/jobs\n"
        "1:name=systemd:/init.scope\n"
        "0::/\n"
    )
    mountinfo = (
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 /docker/xyz /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup "
        "cgroup rw,cpu,cpuacct\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
        "40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    )
    places = cgroup._v1_parents(cgroups, mountinfo)
    assert places["pids"] == "/sys/fs/cgroup/pids/user.slice/grader"
    assert places["memory"] == "/sys/fs/cgroup/memory/process_api/abc"
    assert places["cpu"] == places["cpuacct"] == "/sys/fs/cgroup/cpu,cpuacct/jobs"
    assert places["name=systemd"] == "/sys/fs/cgroup/systemd/init.scope"


def test_stale_groups_are_swept_from_the_nested_parent(
    make_group: Callable[..., RunGroup],
) -> None:
    probe = make_group()
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid whose process has ended
    stale = [os.path.join(os.path.dirname(d), f"minillm-{gone.pid}-1") for d in probe.dirs]
    try:
        for d in stale:
            if not os.path.isdir(d):  # one directory where two controllers share one
                os.mkdir(d)
        make_group()
        assert [d for d in stale if os.path.isdir(d)] == []
    finally:
        for d in stale:
            if os.path.isdir(d):
                os.rmdir(d)


# -- the CPU share -----------------------------------------------------------------------


def _read(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def test_cpu_quota_files_hold_the_quota(make_group: Callable[..., RunGroup]) -> None:
    half = make_group(cpus=0.5)
    _needs_cpu(half)
    assert half.cpus == 0.5
    uncapped = make_group(cpus=0)
    assert uncapped.cpu_dir and uncapped.cpus == 0
    if half.version == 2:
        assert _read(os.path.join(half.cpu_dir, "cpu.max")) == "50000 100000"
        assert _read(os.path.join(uncapped.cpu_dir, "cpu.max")).startswith("max")
        assert _read(os.path.join(half.cpu_dir, "cpu.weight")) == "100"
    else:
        assert _read(os.path.join(half.cpu_dir, "cpu.cfs_period_us")) == "100000"
        assert _read(os.path.join(half.cpu_dir, "cpu.cfs_quota_us")) == "50000"
        assert _read(os.path.join(half.cpu_dir, "cpu.shares")) == "1024"
        assert _read(os.path.join(uncapped.cpu_dir, "cpu.cfs_quota_us")) == "-1"


def test_without_the_cpu_controllers_the_group_still_caps_processes_and_memory(
    make_group: Callable[..., RunGroup], monkeypatch: pytest.MonkeyPatch
) -> None:
    if make_group().version != 1:
        pytest.skip("the v1 hierarchies are not used here")
    places = cgroup._v1_parents

    def without_cpu(*args: str | None) -> dict[str, str]:
        return {k: v for k, v in places(*args).items() if k not in ("cpu", "cpuacct")}

    monkeypatch.setattr(cgroup, "_v1_parents", without_cpu)
    group = make_group(processes=16, memory=64 * 1024**2)
    assert (group.cpu_dir, group.acct_dir, group.cpus) == ("", "", 0.0)
    assert "CPU is not shared" in group.cpu_note and "not measured" in group.cpu_note
    assert group.cpu_seconds() is None
    assert {_controller_of(d) for d in group.dirs} == {"pids", "memory"}
    assert _read(os.path.join(group.dirs[0], "pids.max")) == "16"


def test_create_keeps_its_two_argument_form() -> None:
    group, note = RunGroup.create(16, 64 * 1024**2)
    if group is None:
        pytest.skip(f"no control group can be made here: {note}")
    try:
        assert note == group.cpu_note
        assert group.cpus == (1.0 if group.cpu_dir else 0.0)
    finally:
        group.close()
    assert not any(os.path.exists(d) for d in group.dirs)


@posix_only
def test_a_busy_process_under_a_small_quota_gets_less_cpu_than_wall_time(
    make_group: Callable[..., RunGroup],
) -> None:
    group = make_group(cpus=0.2)
    _needs_cpu(group)
    _needs_acct(group)
    pid = _busy_child(group)
    try:
        start, used = time.monotonic(), group.cpu_seconds()
        time.sleep(1.5)
        wall, now = time.monotonic() - start, group.cpu_seconds()
    finally:
        _end(pid)
    assert used is not None and now is not None
    assert 0 < now - used <= 0.6 * wall, (now - used, wall)


@posix_only
def test_cpu_seconds_grows_with_a_busy_loop_and_keeps_what_ended_processes_used(
    make_group: Callable[..., RunGroup],
) -> None:
    group = make_group(cpus=0)
    _needs_acct(group)
    before = group.cpu_seconds()
    assert before is not None
    pid = _busy_child(group, cpu_budget=0.3)
    _, status = os.waitpid(pid, 0)  # ended and reaped: its time stays with the group
    assert os.WIFEXITED(status)
    after = group.cpu_seconds()
    assert after is not None and after - before >= 0.25


def test_cpu_seconds_is_none_without_accounting() -> None:
    assert RunGroup(["/nonexistent"], 1).cpu_seconds() is None
    assert RunGroup(["/nonexistent"], 2, acct_dir="/nonexistent").cpu_seconds() is None


# -- the fallback: RLIMIT_CPU, a lower priority, CPU time from /proc ----------------------


def _in_child(body: Callable[[], object]) -> Any:
    """What `body` returns in a forked child (sent back as JSON)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.write(w, json.dumps(body()).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return json.loads(data)


@posix_only
def test_fallback_sets_rlimit_cpu_and_lowers_every_thread() -> None:
    import resource

    def body() -> object:
        started, release = threading.Event(), threading.Event()
        tid: list[int] = []

        def idle() -> None:
            tid.append(threading.get_native_id())
            started.set()
            release.wait(10)

        thread = threading.Thread(target=idle)
        thread.start()  # running before the limits, as numpy's threads would be
        started.wait(10)
        limits.apply_child_limits(0, cpu_seconds=30, niceness=10)
        own = os.getpriority(os.PRIO_PROCESS, 0)
        other = os.getpriority(os.PRIO_PROCESS, tid[0]) if sys.platform == "linux" else own
        release.set()
        thread.join()
        return [list(resource.getrlimit(resource.RLIMIT_CPU)), own, other]

    _, hard_before = resource.getrlimit(resource.RLIMIT_CPU)
    (soft, hard), own, other = _in_child(body)
    assert soft == 30
    assert hard == (35 if hard_before == resource.RLIM_INFINITY else min(35, hard_before))
    assert own >= 10 and other >= 10


@posix_only
def test_fallback_defaults_change_neither_cpu_limit_nor_priority() -> None:
    import resource

    def body() -> object:
        before = [list(resource.getrlimit(resource.RLIMIT_CPU)), os.getpriority(0, 0)]
        limits.apply_child_limits(0)
        return [before, [list(resource.getrlimit(resource.RLIMIT_CPU)), os.getpriority(0, 0)]]

    before, after = _in_child(body)
    assert before == after
    assert limits.Limits().cpu_seconds == 0 and limits.Limits().cpus == 1.0


@posix_only
def test_rlimit_cpu_ends_a_spinning_child() -> None:
    pid = os.fork()
    if pid == 0:
        try:
            limits.apply_child_limits(0, cpu_seconds=1)
            while True:
                pass
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU


def test_lower_priority_is_a_no_op_where_it_means_nothing() -> None:
    assert limits.lower_priority(0) is False


@posix_only
@linux_only
def test_tree_cpu_seconds_counts_a_process_and_its_descendants() -> None:
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # spins 0.3 s, forks a grandchild that spins 0.3 s, then waits
        try:
            os.close(done_r)
            if os.fork() == 0:
                while time.process_time() < 0.3:
                    pass
                os.write(done_w, b"g")
                time.sleep(30)
                os._exit(0)
            while time.process_time() < 0.3:
                pass
            os.write(done_w, b"c")
            time.sleep(30)
        finally:
            os._exit(0)
    os.close(done_w)
    try:
        got = b""
        while len(got) < 2:
            chunk = os.read(done_r, 2)
            assert chunk, "the child ended early"
            got += chunk
        total = limits.tree_cpu_seconds(pid)
        own = limits.tree_cpu_seconds(limits.children_of(pid)[0])
        assert total is not None and own is not None
        assert total >= 0.5 and own >= 0.25 and total > own
    finally:
        limits.kill_tree(pid)
        os.waitpid(pid, 0)
        os.close(done_r)
    assert limits.tree_cpu_seconds(pid) is None

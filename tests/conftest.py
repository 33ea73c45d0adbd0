"""Shared fixtures: one sandbox zygote for the whole test session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import ModuleType

import pytest
from hypothesis import settings

from grader.sandbox.client import Sandbox
from grader.sandbox.launch import fork_usable

# Examples are checked for correctness, not speed: no per-example deadline on a busy machine.
# The same examples on every run (derandomize): a red CI always means a real, repeatable
# failure; new examples are explored by changing a strategy, not by chance.
settings.register_profile("minillm", deadline=None, derandomize=True)
settings.load_profile("minillm")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (``make check``): one worker per usable core, and one more.

    Many tests wait on a process they started (a grade run, a sandbox child, a timeout), so
    with one worker per core a core sits idle while its worker waits: on a 2-core machine,
    3 workers finish the suite in about 95% of the time of 2. `PYTEST_XDIST_AUTO_NUM_WORKERS`
    still wins (None hands the choice back to xdist).
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    return cores + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files marked ``slow`` first, each file's tests in their own order.

    ``make check`` hands whole files to its workers in this order (``--dist loadfile
    --no-loadscope-reorder``), so the long files start at once and the short ones fill in
    around them, instead of one long file starting last and running on alone at the end.
    """
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)  # a stable sort


# Every sandbox backend that runs here (`any_sandbox` runs a test once on each).
BACKENDS = ["fork", "spawn"] if fork_usable() else ["spawn"]


@pytest.fixture(scope="session")
def torch() -> ModuleType:
    """PyTorch (the optional extra ``parity``): the tests that ask for it skip without it.

    Imported by the first test that needs it, not at a module's top: every xdist worker
    imports every test module while collecting, and torch takes over a CPU-second to import.
    """
    return pytest.importorskip("torch")


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    """The default backend (`MINILLM_SANDBOX` or the platform's choice)."""
    with Sandbox() as sb:
        yield sb


@pytest.fixture(scope="session", params=BACKENDS)
def any_sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """Each backend in turn, for the tests that must hold on every platform."""
    with Sandbox(backend=request.param) as sb:
        yield sb

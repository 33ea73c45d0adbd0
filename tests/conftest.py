"""Shared fixtures: one sandbox zygote for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from grader.sandbox.client import Sandbox
from grader.sandbox.launch import fork_usable

# Examples are checked for correctness, not speed: no per-example deadline on a busy machine.
# The same examples on every run (derandomize): a red CI always means a real, repeatable
# failure; new examples are explored by changing a strategy, not by chance.
settings.register_profile("minillm", deadline=None, derandomize=True)
settings.load_profile("minillm")

# Every sandbox backend that runs here (`any_sandbox` runs a test once on each).
BACKENDS = ["fork", "spawn"] if fork_usable() else ["spawn"]


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

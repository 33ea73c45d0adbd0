"""Shared fixtures: one sandbox zygote for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from grader.sandbox.client import Sandbox

# Examples are checked for correctness, not speed: no per-example deadline on a busy machine.
settings.register_profile("minillm", deadline=None)
settings.load_profile("minillm")


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox() as sb:
        yield sb

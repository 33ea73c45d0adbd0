"""Shared fixtures: one sandbox zygote for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from grader.sandbox.client import Sandbox


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox() as sb:
        yield sb

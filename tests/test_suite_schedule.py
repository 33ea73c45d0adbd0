"""How `make check` spreads the suite over its workers (the hooks in tests/conftest.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import conftest
import pytest


def test_auto_starts_one_worker_more_than_the_usable_cores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert conftest.pytest_xdist_auto_num_workers(None) == (cores or 1) + 1  # type: ignore[arg-type]
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "5")  # xdist's own setting wins
    assert conftest.pytest_xdist_auto_num_workers(None) is None  # type: ignore[arg-type]


@dataclass
class Item:
    path: Path
    name: str
    marks: set[str] = field(default_factory=set)

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.marks else None


def test_files_with_a_slow_test_go_first_and_keep_their_order() -> None:
    a, b, c = Path("test_a.py"), Path("test_b.py"), Path("test_c.py")
    items = [
        Item(a, "a1"),
        Item(b, "b1"),
        Item(b, "b2", {"slow"}),
        Item(c, "c1", {"slow"}),
        Item(a, "a2"),
        Item(c, "c2"),
    ]
    conftest.pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [i.name for i in items] == ["b1", "b2", "c1", "c2", "a1", "a2"]

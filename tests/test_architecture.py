"""The layout is the architecture (ARCHITECTURE.md): floors, wings, sizes, no cycles.

The import contracts themselves (which floor may import which) are import-linter's, in
pyproject.toml, run by `make check`; these tests keep what it does not check.
"""

from __future__ import annotations

import re
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
TOP_LIMIT = 12  # modules at grader/'s top level
SIZE_LIMIT = 500  # lines of any module of framework/ or grader/


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.find_modules_directly_imported_by(v)):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_itself_through_others() -> None:
    graph = grimp.build_graph("grader", "framework")
    assert _cycles(graph) == []


def test_the_grader_keeps_a_dozen_modules_at_its_top_level() -> None:
    top = sorted(p.name for p in (ROOT / "grader").glob("*.py") if p.name != "__init__.py")
    assert len(top) <= TOP_LIMIT, top


@pytest.mark.parametrize("package", ["framework", "grader"])
def test_no_module_is_over_the_size_limit(package: str) -> None:
    big = {
        str(p.relative_to(ROOT)): n
        for p in (ROOT / package).rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > SIZE_LIMIT
    }
    assert big == {}


def test_every_wing_is_in_the_readme_layout_and_in_architecture_md() -> None:
    wings = sorted(p.name for p in (ROOT / "grader").iterdir() if (p / "__init__.py").is_file())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = readme[readme.index("## Layout") :]
    layout = layout[: layout.index("\n## ", 4)] if "\n## " in layout[4:] else layout
    architecture = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for wing in wings:
        assert re.search(rf"grader/{wing}/", layout), f"README's Layout lacks grader/{wing}/"
        assert f"grader/{wing}/" in architecture, f"ARCHITECTURE.md lacks grader/{wing}/"
    for module in (ROOT / "grader").glob("*.py"):
        if module.name != "__init__.py":
            assert module.name in architecture, f"ARCHITECTURE.md lacks grader/{module.name}"

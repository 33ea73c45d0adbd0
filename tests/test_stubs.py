"""The stub a student gets is generated from the reference solution, and only from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.course.stubs import (
    NoMarkers,
    StubError,
    find_blocks,
    has_markers,
    main,
    make_stub,
    stub_for,
    sync_stubs,
)
from grader.labs import LabInfo, all_labs

LABS = all_labs()

SOLUTION = '''"""Lab99 — a module docstring the student reads."""

from __future__ import annotations

# BEGIN SOLUTION
import math

# END SOLUTION
from collections.abc import Sequence  # noqa: F401

SCALE = 2


# BEGIN SOLUTION
def _helper(x: float) -> float:
    return math.sqrt(x)


# END SOLUTION


def root(x: float) -> float:
    """The square root of x.

    Args:
        x: a number >= 0.
    """
    # BEGIN SOLUTION: take the square root (math.sqrt).
    return _helper(x) * SCALE / 2
    # END SOLUTION


class Box:
    """A box."""

    def size(self) -> int:
        """Its size."""
        # BEGIN SOLUTION: return 3.
        return 3
        # END SOLUTION
'''

STUB = '''"""Lab99 — a module docstring the student reads."""

from __future__ import annotations

from collections.abc import Sequence  # noqa: F401

SCALE = 2


def root(x: float) -> float:
    """The square root of x.

    Args:
        x: a number >= 0.
    """
    # TODO(lab99): take the square root (math.sqrt).
    raise NotImplementedError("lab99: implement root")


class Box:
    """A box."""

    def size(self) -> int:
        """Its size."""
        # TODO(lab99): return 3.
        raise NotImplementedError("lab99: implement size")
'''


def test_a_solution_becomes_its_stub() -> None:
    assert make_stub(SOLUTION, "lab99") == STUB


def test_blocks_name_their_function_and_text() -> None:
    blocks = find_blocks(SOLUTION)
    assert [(b.function, b.todo) for b in blocks] == [
        (None, None),
        (None, None),
        ("root", "take the square root (math.sqrt)."),
        ("size", "return 3."),
    ]


def bad(source: str) -> str:
    with pytest.raises(StubError) as info:
        make_stub(source, "lab99", "sol.py")
    return str(info.value)


def fn(body: str) -> str:
    return 'def f():\n    """Doc."""\n' + body


def test_an_unterminated_block_names_its_line() -> None:
    message = bad(fn("    # BEGIN SOLUTION: do it.\n    return 1\n"))
    assert message.startswith("sol.py:3:") and "never closed" in message


def test_nested_blocks_are_an_error() -> None:
    source = fn(
        "    # BEGIN SOLUTION: a.\n    x = 1\n    # BEGIN SOLUTION: b.\n"
        "    return x\n    # END SOLUTION\n    # END SOLUTION\n"
    )
    message = bad(source)
    assert message.startswith("sol.py:5:") and "opened at line 3" in message


def test_an_end_without_begin_is_an_error() -> None:
    assert bad(fn("    return 1\n    # END SOLUTION\n")).startswith("sol.py:4:")


def test_an_end_at_another_indentation_is_an_error() -> None:
    message = bad(fn("    # BEGIN SOLUTION: a.\n    return 1\n# END SOLUTION\n"))
    assert message.startswith("sol.py:5:") and "indented differently" in message


def test_an_empty_block_is_an_error() -> None:
    message = bad(fn("    # BEGIN SOLUTION: a.\n    # END SOLUTION\n    return 1\n"))
    assert message.startswith("sol.py:3:") and "empty" in message


def test_a_function_block_needs_its_todo_text() -> None:
    message = bad(fn("    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n"))
    assert message.startswith("sol.py:3:") and "f()" in message and "TODO text" in message


def test_a_module_block_takes_no_text() -> None:
    message = bad("# BEGIN SOLUTION: imports.\nimport math\n# END SOLUTION\n")
    assert message.startswith("sol.py:1:") and "without text" in message


@pytest.mark.parametrize(
    "marker", ["### BEGIN SOLUTION", "# begin solution: x", "#BEGIN SOLUTION: x", "# END_SOLUTION"]
)
def test_a_near_miss_marker_is_an_error_not_code(marker: str) -> None:
    message = bad(fn(f"    {marker}\n    return 1\n"))
    assert message.startswith("sol.py:3:") and "looks like a solution marker" in message


@pytest.mark.parametrize(
    "marker",
    [
        "# BEGIN SOLUTON: x",
        "# END SOLUTIONS",
        "# BEGIN SOLUTIONS: x",
        "# BEGN SOLUTION: x",
        "# ENDSOLUTION",
        "# END SOLUTION.",
        "# BEGIN SOLUTION - x",
    ],
)
def test_a_marker_typo_is_reported_at_its_own_line(marker: str) -> None:
    """The typo's line, not the unclosed block or the orphan END it leaves behind."""
    message = bad(fn(f"    x = 1\n    {marker}\n    return x\n"))
    assert message.startswith("sol.py:4:") and "looks like a solution marker" in message
    assert len(message.splitlines()) == 1


def test_every_marker_typo_is_reported_each_at_its_line() -> None:
    source = fn(
        "    # BEGIN SOLUTON: a.\n    x = 1\n    # END SOLUTIONS\n"
        "    y = 2  # END SOLUTION\n    return x + y\n"
    )
    lines = bad(source).splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == ["sol.py:3", "sol.py:5", "sol.py:6"]
    assert "SOLUTON" in lines[0] and "SOLUTIONS" in lines[1] and "own line" in lines[2]


def test_a_typo_among_good_markers_is_the_only_error() -> None:
    source = fn("    # BEGIN SOLUTION: a.\n    x = 1\n    # END SOLUTON\n    return x\n")
    message = bad(source)
    assert message.startswith("sol.py:5:") and "never closed" not in message


@pytest.mark.parametrize(
    "comment", ["# the end: solutions differ", "# solution at the end", "# a BEGINNER's note"]
)
def test_prose_is_not_a_marker(comment: str) -> None:
    source = fn(f"    # BEGIN SOLUTION: a.\n    {comment}\n    return 1\n    # END SOLUTION\n")
    assert "TODO(lab99): a." in make_stub(source, "lab99", "sol.py")


def test_sync_reports_each_typo_on_its_line(tmp_path: Path) -> None:
    info = course(tmp_path, fn("    # BEGIN SOLUTON: a.\n    return 1\n    # END SOLUTIONS\n"))
    errors = sync_stubs([info], write=False).errors
    assert len(errors) == 2 and errors[0].startswith("lab99: ") and ":3:" in errors[0]
    assert ":5:" in errors[1]


def test_a_marker_must_stand_alone() -> None:
    message = bad(fn("    return 1  # BEGIN SOLUTION: x\n"))
    assert message.startswith("sol.py:3:") and "own line" in message


def test_a_statement_may_not_leave_its_block() -> None:
    source = fn(
        "    # BEGIN SOLUTION: a.\n    x = [\n    # END SOLUTION\n        1]\n    return x\n"
    )
    assert "ends after it" in bad(source)


def test_markers_in_strings_are_text() -> None:
    source = fn('    return "# BEGIN SOLUTION"\n')
    assert not has_markers(source)
    with pytest.raises(NoMarkers, match=r"sol\.py: no '# BEGIN SOLUTION' markers"):
        make_stub(source, "lab99", "sol.py")


def test_a_syntax_error_names_the_line() -> None:
    assert bad("def f(:\n    pass\n").startswith("sol.py:1:")


@pytest.mark.parametrize("info", LABS, ids=lambda i: i.id)
def test_the_committed_stubs_are_generated(info: LabInfo) -> None:
    """`make stubs` writes labs/labNN/student.py and .stub.py from the solution."""
    try:
        stub = stub_for(info)
    except NoMarkers as e:
        pytest.skip(f"not one source yet: {e}")
    for name in ("student.py", ".stub.py"):
        committed = (info.dir / name).read_text(encoding="utf-8")
        assert committed == stub, f"{info.id}/{name} differs from its solution: run make stubs"


def course(tmp_path: Path, solution: str) -> LabInfo:
    lab = tmp_path / "labs" / "lab99"
    lab.mkdir(parents=True)
    (lab / "verify.py").write_text("", encoding="utf-8")
    sol = tmp_path / "solutions" / "lab99"
    sol.mkdir(parents=True)
    (sol / "student.py").write_text(solution, encoding="utf-8")
    return LabInfo("lab99", lab)


def test_sync_writes_both_files_then_finds_nothing(tmp_path: Path) -> None:
    info = course(tmp_path, SOLUTION)
    found = sync_stubs([info], write=False)
    assert len(found.changes) == 2 and not found.errors and not found.unmarked
    sync_stubs([info], write=True)
    assert (info.dir / "student.py").read_text(encoding="utf-8") == STUB
    assert (info.dir / ".stub.py").read_text(encoding="utf-8") == STUB
    assert sync_stubs([info], write=False).changes == []


def test_a_solution_without_markers_is_skipped_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    info = course(tmp_path, "def f():\n    return 1\n")
    (info.dir / "student.py").write_text("kept\n", encoding="utf-8")
    monkeypatch.setenv("MINILLM_ROOT", str(tmp_path))
    assert main([]) == 0
    err = capsys.readouterr().err
    assert "skipped: lab99:" in err and "BEGIN SOLUTION" in err
    assert (info.dir / "student.py").read_text(encoding="utf-8") == "kept\n"


def test_check_mode_fails_on_a_stale_stub_and_bad_markers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    info = course(tmp_path, SOLUTION)
    monkeypatch.setenv("MINILLM_ROOT", str(tmp_path))
    assert main(["--check"]) == 1
    assert "differs: " in capsys.readouterr().out
    assert main([]) == 0 and main(["--check"]) == 0
    (tmp_path / "solutions" / "lab99" / "student.py").write_text(
        fn("    # BEGIN SOLUTION: a.\n    return 1\n"), encoding="utf-8"
    )
    assert main(["lab99"]) == 1
    assert "refused: lab99:" in capsys.readouterr().err
    assert (info.dir / "student.py").read_text(encoding="utf-8") == STUB

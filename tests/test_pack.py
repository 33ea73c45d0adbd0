"""The student edition: no solution, no hidden check, stubs in place, and every lab runs."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.course.pack import (
    PackError,
    _hidden_names,
    _layout_problems,
    _leaks,
    _run_labs,
    build_edition,
    hidden_ids,
    pack,
    solution_bodies,
    verify_edition,
)
from grader.labs import LabInfo, all_labs, resolve_lab

pytestmark = pytest.mark.slow  # scheduled first (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent


def test_the_command_writes_and_checks_an_edition(tmp_path: Path) -> None:
    out = tmp_path / "edition"
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "pack", str(out), "--labs", "lab01,lab04"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "every lab runs" in proc.stdout and "make test  labs/lab04" in proc.stderr
    assert sorted(p.name for p in (out / "labs").iterdir()) == ["lab.mk", "lab01", "lab04"]


def test_the_edition_copied_elsewhere_passes_its_own_checks_and_holds_no_solution(
    tmp_path: Path,
) -> None:
    out = tmp_path / "edition"
    build_edition(ROOT, out, all_labs())
    fresh = tmp_path / "fresh"
    shutil.copytree(out, fresh)
    labs = all_labs()
    assert sorted(p.name for p in fresh.iterdir()) == sorted(
        [".gitignore", "Makefile", "README.md", "framework", "grader", "labs", "pyproject.toml"]
    )
    # A search of our own, apart from pack's: no solution body, file or marker anywhere.
    texts = {
        p: p.read_text(encoding="utf-8", errors="replace")
        for p in fresh.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert not [p for p in texts if p.name == "hidden.py" or "solutions" in p.parts]
    for info in labs:
        assert (fresh / "labs" / info.id / "student.py").read_text(
            encoding="utf-8"
        ) == info.student.read_text(encoding="utf-8")
        for where, body in solution_bodies(info):
            first = body.splitlines()[0]
            found = [
                p
                for p, t in texts.items()
                if body in "\n".join(r.strip() for r in t.splitlines() if r.strip())
            ]
            assert not found, f"{where}: {first!r} in {found}"
    assert verify_edition(fresh, labs) == []


@pytest.fixture
def edition(tmp_path: Path) -> tuple[Path, list[LabInfo]]:
    labs = [resolve_lab("lab04")]
    out = tmp_path / "edition"
    build_edition(ROOT, out, labs)
    return out, labs


def test_a_leaked_solution_body_is_found(edition: tuple[Path, list[LabInfo]]) -> None:
    out, labs = edition
    assert _leaks(out, labs) == [] and _layout_problems(out, labs) == []
    source = labs[0].solution.read_text(encoding="utf-8")
    body = source[source.index("def softmax") :]
    notes = out / "labs" / "lab04" / "NOTES.md"
    notes.write_text("Spoiler:\n\n```python\n" + body + "```\n", encoding="utf-8")
    found = _leaks(out, labs)
    assert any("NOTES.md: holds the solution of lab04 softmax()" in p for p in found), found


def test_hidden_checks_markers_and_stale_stubs_are_found(
    edition: tuple[Path, list[LabInfo]],
) -> None:
    out, labs = edition
    shutil.copyfile(
        ROOT / "solutions" / "lab04" / "hidden.py", out / "labs" / "lab04" / "hidden.py"
    )
    (out / "solutions").mkdir()
    student = out / "labs" / "lab04" / "student.py"
    student.write_text(student.read_text(encoding="utf-8") + "# BEGIN SOLUTION\n", encoding="utf-8")
    problems = "\n".join(_layout_problems(out, labs))
    assert "solutions/ is in the student edition" in problems
    assert "labs/lab04/hidden.py: a hidden-checks module" in problems
    assert "labs/lab04/student.py: holds a solution marker" in problems
    assert "labs/lab04/student.py is not the generated stub" in problems
    assert "labs/lab04/.stub.py is not the same as its student.py" in problems


def test_a_stub_that_passes_is_found_by_running_the_lab(
    edition: tuple[Path, list[LabInfo]], tmp_path: Path
) -> None:
    out, labs = edition
    shutil.copyfile(labs[0].solution, out / "labs" / "lab04" / "student.py")
    from grader.course.pack import _light_venv

    _light_venv(out)
    for source in [*(out / "framework").glob("*.py"), out / "grader" / "dsl.py"]:
        cached = Path(importlib.util.cache_from_source(str(source)))
        assert cached.is_file(), f"the venv made as by make setup has no bytecode: {cached}"
    problems = _run_labs(out, labs, lambda _: None)
    assert any("did not end as for stubs" in p for p in problems), problems


def test_pack_refuses_a_folder_that_is_not_empty_or_inside_the_course(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x", encoding="utf-8")
    from grader.course.pack import PackError

    with pytest.raises(PackError, match="not an empty folder"):
        pack(tmp_path / "full")
    with pytest.raises(PackError, match="inside the course"):
        pack(ROOT / "build" / "edition-test-never-written")
    env = {**os.environ}
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "pack", str(tmp_path / "full")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2 and "not an empty folder" in proc.stderr


def test_instructor_commands_refuse_to_run_in_the_edition(
    edition: tuple[Path, list[LabInfo]],
) -> None:
    out, _ = edition
    for args in (
        ["self-check"],
        ["gradescope-bundle", str(out / "x.zip")],
        ["pack", str(out.parent / "again")],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "grader", *args],
            capture_output=True,
            text=True,
            env={**os.environ, "MINILLM_ROOT": str(out)},
            timeout=120,
        )
        assert proc.returncode == 2, proc.stderr
        assert "this is the student edition" in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr  # one line, no traceback
    assert not (out / "x.zip").exists() and not (out.parent / "again").exists()
    with pytest.raises(PackError, match="it is a student edition"):
        pack(out.parent / "again", source=out)


def test_the_hidden_test_ids_are_every_hidden_modules() -> None:
    ids, problems = hidden_ids(ROOT)
    assert problems == []
    assert {"mask_no_broadcast": "lab04", "adam_checks_first": "lab07"}.items() <= ids.items()


def test_a_file_that_names_a_hidden_test_is_found(edition: tuple[Path, list[LabInfo]]) -> None:
    out, _ = edition
    assert _hidden_names(out, ROOT) == []
    doc = out / "grader" / "notes.py"
    doc.write_text('"""Notes.\n\nSee adam_checks_first and mask_no_broadcast."""\n', "utf-8")
    (out / "labs" / "lab04" / "TASK.en.md").write_text("x\n\n`mask_no_broadcast`\n", "utf-8")
    found = _hidden_names(out, ROOT)
    assert sorted(found) == [
        "grader/notes.py:3: names lab04's hidden test mask_no_broadcast (the edition names no "
        "hidden test)",
        "grader/notes.py:3: names lab07's hidden test adam_checks_first (the edition names no "
        "hidden test)",
        "labs/lab04/TASK.en.md:3: names lab04's hidden test mask_no_broadcast (the edition "
        "names no hidden test)",
    ]
    doc.write_text("not_mask_no_broadcast_at_all\n", "utf-8")  # a longer word is not the id
    assert len(_hidden_names(out, ROOT)) == 1

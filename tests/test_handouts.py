"""The handouts: output blocks equal what runs print today, one layout in every lab and both
languages, a size budget, and snippets that run from their stated folder for any return type
the checks accept."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from grader.course.handout_skeleton import SECTIONS, SIZE_BUDGET, layout_problems
from grader.course.handouts import (
    check_references,
    check_scripts,
    sync_lab,
    sync_references,
)
from grader.labs import LabInfo, all_labs, load_lab, resolve_lab
from grader.runner import run_tests
from grader.sandbox.client import Sandbox

pytestmark = pytest.mark.slow  # scheduled first (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "tests" / "handout_examples"
NDARRAY = sorted(EXAMPLES.glob("*/returns_ndarray/student.py"))
PASSING = sorted([*NDARRAY, *EXAMPLES.glob("*/hints/student.py")])


def _example_id(path: Path) -> str:
    return f"{path.parts[-3]}-{path.parts[-2]}"


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_handout_blocks_match_the_grader(info: LabInfo, sandbox: Sandbox) -> None:
    problems = sync_lab(info, sandbox, write=False)
    assert not problems, "\n".join(problems) + "\n(run: make handouts)"


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_handouts_follow_the_common_layout(info: LabInfo) -> None:
    problems = layout_problems(info)
    assert not problems, "\n".join(problems) + "\n(the layout: labs/HANDOUT.md)"


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_prose_test_references_name_the_tests_they_mean(info: LabInfo) -> None:
    problems = sync_references(info)
    assert not problems, "\n".join(problems) + "\n(run: make handouts)"


REFS = """# Lab04
[TEST 4]<!-- mask_causal --> and [TEST 9]<!-- mask_adds --> and [TEST 2]<!-- no_such_test -->
see [TEST 3].

```text
[TEST 1] a report line in a block is not prose
```
"""


def test_wrong_unknown_and_untied_references_are_reported() -> None:
    ids = [t.id for t in load_lab(resolve_lab("lab04")).tests]
    fixed, problems = check_references(REFS, ids, "T.md")
    assert problems == [
        "T.md:2: [TEST 9]: test 'mask_adds' is [TEST 5]",
        "T.md:2: [TEST 2]<!-- no_such_test -->: the lab has no test 'no_such_test'",
        "T.md:3: [TEST 3] is not tied to a test id: write [TEST 3]<!-- id (scores_errors) -->",
    ]
    assert fixed == REFS.replace("[TEST 9]<!-- mask_adds", "[TEST 5]<!-- mask_adds")
    assert len(check_references(fixed, ids, "T.md")[1]) == 2


def test_write_renumbers_tied_references(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINILLM_ROOT", str(tmp_path))
    info = _copy_lab(tmp_path, "lab07")
    task = info.dir / "TASK.en.md"
    text = task.read_text(encoding="utf-8")
    _edit(task, "[TEST 10]<!-- adam_decay -->", "[TEST 2]<!-- adam_decay -->")
    assert any("test 'adam_decay' is [TEST 10]" in p for p in sync_references(info))
    assert sync_references(info, write=True) == []
    assert task.read_text(encoding="utf-8") == text


def test_the_authors_guide_states_the_layout() -> None:
    guide = (ROOT / "labs" / "HANDOUT.md").read_text(encoding="utf-8")
    for lang, names in SECTIONS.items():
        row = " / ".join(f"`## {name}`" for name in names)
        assert row in guide, f"labs/HANDOUT.md must list the {lang} sections in order: {row}"
    assert f"{SIZE_BUDGET // 1024} KiB" in guide


def test_every_lab_whose_snippets_call_student_code_has_an_ndarray_example() -> None:
    assert {p.parts[-3] for p in NDARRAY} >= {"lab01", "lab03", "lab04"}


@pytest.mark.parametrize("impl", NDARRAY, ids=_example_id)
def test_snippets_accept_ndarray_returns(impl: Path) -> None:
    problems = check_scripts(resolve_lab(impl.parts[-3]), impl)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("impl", PASSING, ids=_example_id)
def test_ndarray_returns_and_the_hints_followed_word_for_word_pass(
    impl: Path, sandbox: Sandbox
) -> None:
    info = resolve_lab(impl.parts[-3])
    result = run_tests(load_lab(info), impl, sandbox)
    assert result.passed, [(t.title.en, t.status) for t in result.tests]


def _copy_lab(tmp: Path, lab: str) -> LabInfo:
    shutil.copytree(ROOT / "labs" / lab, tmp / "labs" / lab)
    shutil.copytree(ROOT / "solutions" / lab, tmp / "solutions" / lab)
    if not (tmp / "tests" / "handout_examples").exists():
        shutil.copytree(EXAMPLES, tmp / "tests" / "handout_examples")
    return LabInfo(lab, tmp / "labs" / lab)


def test_drift_is_reported_and_rewritten(
    tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINILLM_ROOT", str(tmp_path))
    edits = {
        "lab01": [
            ("# Lab01 — Tensors and math ops", "# Lab01 — Tensors"),  # the title
            ("Result: all passed", "Result: all passed!"),  # the target block
            ("[TEST 3] tensor_get", "[TEST 3] tensor-get"),  # the excerpt
        ],
        "lab04": [("[0.25 0.25 0.25 0.25]", "[0.2 0.3 0.25 0.25]")],  # a script's output
    }
    for lab, changes in edits.items():
        info = _copy_lab(tmp_path, lab)
        task = info.dir / "TASK.en.md"
        text = task.read_text(encoding="utf-8")
        drifted = text
        for old, new in changes:
            assert old in drifted
            drifted = drifted.replace(old, new, 1)
        task.write_text(drifted, encoding="utf-8")

        problems = sync_lab(info, sandbox, write=False)
        assert len(problems) == len(changes), problems
        assert task.read_text(encoding="utf-8") == drifted  # checking never writes
        sync_lab(info, sandbox, write=True)
        assert task.read_text(encoding="utf-8") == text
        assert sync_lab(info, sandbox, write=False) == []


def test_missing_blocks_are_reported(
    tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINILLM_ROOT", str(tmp_path))
    info = _copy_lab(tmp_path, "lab04")
    (info.dir / "TASK.md").write_text("# no blocks\n", encoding="utf-8")
    (info.dir / "TASK.en.md").unlink()
    problems = sync_lab(info, sandbox, write=False)
    assert any("no <!-- verify:baseline --> block" in p for p in problems)
    assert any("TASK.en.md: missing" in p for p in problems)
    assert any("the title must be '# Lab04 — 多头自注意力'" in p for p in problems)


def _snippet(cwd: str, bash: str, output: str) -> str:
    return (
        f"Run this from `{cwd}`:\n\n<!-- verify:script cwd={cwd} -->\n```bash\n{bash}\n```\n\n"
        f"```text\n{output}```\n"
    )


@pytest.fixture
def bare_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LabInfo:
    """lab04 with no TASK.md, for handwritten TASK.en.md snippets."""
    monkeypatch.setenv("MINILLM_ROOT", str(tmp_path))
    info = _copy_lab(tmp_path, "lab04")
    (info.dir / "TASK.md").unlink()
    return info


def test_a_snippet_runs_from_its_folder_with_the_given_student(bare_lab: LabInfo) -> None:
    impl = EXAMPLES / "lab04" / "returns_ndarray" / "student.py"
    bash = (
        'basename "$PWD"\n../../.venv/bin/python -c '
        "'import student; print(student.__doc__.splitlines()[0])'"
    )
    doc = (EXAMPLES / "lab04" / "returns_ndarray" / "student.py").read_text().splitlines()[0]
    want = f"lab04\n{doc[3:]}\n"
    task = bare_lab.dir / "TASK.en.md"
    task.write_text(_snippet("labs/lab04", bash, want), encoding="utf-8")
    assert check_scripts(bare_lab, impl) == []
    # the solution is another student.py: its docstring differs
    assert check_scripts(bare_lab, bare_lab.solution) != []


def test_a_snippet_run_from_another_folder_fails(bare_lab: LabInfo) -> None:
    bash = "../../.venv/bin/python -c 'print(1)'"
    task = bare_lab.dir / "TASK.en.md"
    task.write_text(_snippet("labs/lab04", bash, "1\n"), encoding="utf-8")
    assert check_scripts(bare_lab, bare_lab.solution) == []
    task.write_text(_snippet(".", bash, "1\n"), encoding="utf-8")  # no ../../.venv from the root
    assert any("differs" in p for p in check_scripts(bare_lab, bare_lab.solution))
    task.write_text(_snippet("../..", bash, "1\n"), encoding="utf-8")
    assert any("differs" in p for p in check_scripts(bare_lab, bare_lab.solution))


def test_a_shape_snippet_compares_with_the_numbers_masked(bare_lab: LabInfo) -> None:
    bash = "../../.venv/bin/python -c 'import time; print(f\"took {time.time():.3f} s\")'"
    text = _snippet("labs/lab04", bash, "took 1.5 s\n").replace(
        "labs/lab04 -->", "labs/lab04 shape -->"
    )
    (bare_lab.dir / "TASK.en.md").write_text(text, encoding="utf-8")
    assert check_scripts(bare_lab, bare_lab.solution) == []
    (bare_lab.dir / "TASK.en.md").write_text(
        text.replace("1.5 s\n", "1.5 seconds\n"), encoding="utf-8"
    )
    assert check_scripts(bare_lab, bare_lab.solution) != []


def test_a_snippet_must_name_its_folder(bare_lab: LabInfo) -> None:
    text = "<!-- verify:script -->\n```bash\necho 1\n```\n\n```text\n1\n```\n"
    (bare_lab.dir / "TASK.en.md").write_text(text, encoding="utf-8")
    assert any("needs cwd=" in p for p in check_scripts(bare_lab, bare_lab.solution))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("file", "old", "new", "problem"),
    [
        ("TASK.en.md", "## Why now", "## Why attention", "sections are"),
        ("TASK.md", "## 现象", "## 现象与结果", "sections are"),
        ("TASK.en.md", "> Suggested time: 3 hours", "> Time: 3 hours", "the header"),
        ("TASK.md", "> 建议时长：3 小时", "> 建议时长：2 小时", "suggested hours"),
        ("TASK.en.md", "### 4.2 The causal", "### 4.3 The causal", "must start with '4.2 '"),
        ("TASK.en.md", "**hint**:", "**hints**:", "labels"),
        ("TASK.md", "4. **（选做）", "4. **（必做）", "required/optional"),
        ("TASK.en.md", "3. **(Required) By hand.**", "3. By hand.", "a question starts like"),
        ("TASK.en.md", "cwd=labs/lab04 -->", "cwd=labs/lab03 -->", "must say where it runs"),
        ("TASK.en.md", "## Previous / next", "#### Aside\n\n## Previous / next", "no headings"),
    ],
)
def test_layout_problems_are_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file: str, old: str, new: str, problem: str
) -> None:
    monkeypatch.setenv("MINILLM_ROOT", str(tmp_path))
    info = _copy_lab(tmp_path, "lab04")
    assert layout_problems(info) == []
    _edit(info.dir / file, old, new)
    problems = layout_problems(info)
    assert any(problem in p for p in problems), problems


def test_a_handout_over_the_budget_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINILLM_ROOT", str(tmp_path))
    info = _copy_lab(tmp_path, "lab02")
    task = info.dir / "TASK.en.md"
    ties = len(re.findall(r"(?<=\])<!-- [\w.-]+ -->", task.read_text(encoding="utf-8")))
    assert ties, "lab02's handout ties its test references (so the next lines mean something)"
    read = len(re.sub(r"(?<=\])<!-- [\w.-]+ -->", "", task.read_text()).encode())
    _edit(task, "## Previous / next", "x" * (SIZE_BUDGET - read - 2) + "\n\n## Previous / next")
    assert not any("over the budget" in p for p in layout_problems(info))  # ties not counted
    _edit(task, "## Previous / next", "xx\n\n## Previous / next")
    assert any("over the budget" in p for p in layout_problems(info))

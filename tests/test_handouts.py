"""Every TASK.md / TASK.en.md output block equals what the grader prints today."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.handouts import sync_lab
from grader.labs import LabInfo, all_labs
from grader.sandbox.client import Sandbox


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_handout_blocks_match_the_grader(info: LabInfo, sandbox: Sandbox) -> None:
    problems = sync_lab(info, sandbox, write=False)
    assert not problems, "\n".join(problems) + "\n(run: make handouts)"


def _copy_lab(tmp: Path, lab: str) -> LabInfo:
    root = Path(__file__).resolve().parent.parent
    shutil.copytree(root / "labs" / lab, tmp / "labs" / lab)
    shutil.copytree(root / "solutions" / lab, tmp / "solutions" / lab)
    shutil.copytree(root / "tests" / "handout_examples", tmp / "tests" / "handout_examples")
    return LabInfo(lab, tmp / "labs" / lab)


def test_drift_is_reported_and_rewritten(
    tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINILLM_ROOT", str(tmp_path))
    info = _copy_lab(tmp_path, "lab04")
    task = info.dir / "TASK.en.md"
    text = task.read_text(encoding="utf-8")
    drifted = text.replace("Result: all passed", "Result: all passed!", 1)
    drifted = drifted.replace("[0.25 0.25 0.25 0.25]", "[0.2 0.3 0.25 0.25]", 1)
    drifted = drifted.replace("[TEST 2] attention_scores", "[TEST 2] attention-scores", 1)
    assert drifted.count("!") > text.count("!")
    task.write_text(drifted, encoding="utf-8")

    problems = sync_lab(info, sandbox, write=False)
    assert any("verify:target" in p for p in problems)
    assert any("verify:script" in p for p in problems)
    assert any("verify:excerpt" in p for p in problems)
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

"""Every TASK.md / TASK.en.md output block equals what the grader prints today."""

from __future__ import annotations

import pytest

from grader.handouts import sync_lab
from grader.labs import LabInfo, all_labs
from grader.sandbox.client import Sandbox


@pytest.mark.parametrize("info", all_labs(), ids=lambda i: i.id)
def test_handout_blocks_match_the_grader(info: LabInfo, sandbox: Sandbox) -> None:
    problems = sync_lab(info, sandbox, write=False)
    assert not problems, "\n".join(problems) + "\n(run: make handouts)"

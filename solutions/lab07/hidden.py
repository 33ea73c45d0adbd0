"""Hidden checks of lab07: adam_step checks every argument before it changes anything.

Run by `minillm grade` and `minillm self-check` only; never part of the student edition.
The public checks refuse a grad of the wrong shape and t = 0 without weight decay. An
adam_step that decays `param` first and lets numpy discover a bad `m` (or checks `t`
late) has already shrunk `param` when the error comes; with a non-zero weight decay here,
that shows.
"""

from __future__ import annotations

import numpy as np

from framework import tensor_from
from grader.dsl import Lab, TestContext

F32 = np.float32


def register(lab: Lab) -> None:
    """Add the hidden test to lab07's `Lab`."""

    @lab.test(
        "adam_step：先检查全部参数，再修改",
        "adam_step: checks every argument before changing anything",
        requires=["adam_in_place"],
        hidden=True,
        hint=(
            "检查 grad、m、v 的形状和 t 都放在第一次写入之前，包括权重衰减那一步。",
            "Check the shapes of grad, m and v and the value of t before the first write, "
            "the weight decay included.",
        ),
    )
    def adam_checks_first(t: TestContext) -> None:
        cases = (
            ("m 的形状是 [3]，param 是 [4]", "m of shape [3], param [4]", np.zeros(3), 1),
            ("t = 0", "t = 0", np.zeros(4), 0),
        )
        for zh, en, m, step in cases:
            args = [tensor_from(np.asarray(a, F32)) for a in (np.ones(4), np.ones(4), m)]
            args.append(tensor_from(np.zeros(4, F32)))
            raised = t.raises(
                (
                    f"{zh}，weight_decay = 0.5 → ValueError",
                    f"{en}, weight_decay = 0.5 → ValueError",
                ),
                ValueError,
                "adam_step",
                *args,
                step,
                0.1,
                0.9,
                0.999,
                1e-8,
                0.5,
            )
            t.unchanged(
                (
                    f"{zh}：param 保持原样（没有先做衰减）",
                    f"{en}: param unchanged (no decay before the error)",
                ),
                np.ones(4, F32),
                raised.args[0] if raised.args else None,
                returns_new=False,
            )

"""Hidden checks of lab04: shapes that numpy would broadcast must still be refused.

Run by `minillm grade` and `minillm self-check` only; never part of the student edition.
The public checks give apply_mask a mask of shape [3, 2] for scores [2, 3], which numpy
itself refuses, so an apply_mask without its own shape check passes them. Here the masks
are shaped so that numpy would broadcast them ([1, 3] and [3] for scores [2, 3]): the
contract says exactly equal shapes, and anything else is a ValueError before any write.
"""

from __future__ import annotations

import numpy as np

from framework import tensor_from
from grader.dsl import Lab, TestContext

F32 = np.float32


def register(lab: Lab) -> None:
    """Add the hidden tests to lab04's `Lab`."""

    @lab.test(
        "apply_mask：可以广播的掩码也要拒绝",
        "apply_mask: refuses a mask that numpy would broadcast",
        requires=["mask_adds"],
        hidden=True,
        hint=(
            "形状必须完全相同：先比较 scores 和 mask 的形状，不要依赖 numpy 的广播报错。",
            "Shapes must be exactly equal: compare the shapes of scores and mask yourself "
            "instead of relying on numpy's broadcasting errors.",
        ),
    )
    def mask_no_broadcast(t: TestContext) -> None:
        scores = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=F32)
        for shape in ((1, 3), (3,)):
            mask = np.full(shape, -1e9, dtype=F32)
            raised = t.raises(
                (
                    f"mask {list(shape)}、scores [2, 3] → ValueError",
                    f"mask {list(shape)}, scores [2, 3] → ValueError",
                ),
                ValueError,
                "apply_mask",
                tensor_from(scores),
                tensor_from(mask),
            )
            t.unchanged(
                (f"mask {list(shape)}：scores 保持原样", f"mask {list(shape)}: scores unchanged"),
                scores,
                raised.args[0] if raised.args else None,
                returns_new=False,
            )

    @lab.test(
        "attention_scores：K 不是 2 维也要拒绝",
        "attention_scores: refuses a K that is not 2-D",
        requires=["scores_errors"],
        hidden=True,
    )
    def scores_k_ndim(t: TestContext) -> None:
        q = tensor_from(np.ones((3, 4), F32))
        t.raises(
            ("K 是 1 维 [4] → ValueError", "1-D K [4] → ValueError"),
            ValueError,
            "attention_scores",
            q,
            tensor_from(np.ones(4, F32)),
            1.0,
        )
        t.raises(
            ("K 是 3 维 [2, 3, 4] → ValueError", "3-D K [2, 3, 4] → ValueError"),
            ValueError,
            "attention_scores",
            q,
            tensor_from(np.ones((2, 3, 4), F32)),
            1.0,
        )

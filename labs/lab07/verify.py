"""Lab07 checks: cross-entropy, its gradient, and one AdamW step.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process, and every value is compared here, in the grader, against float64 references
written out below (the project's tests hold `ref_adamw` to PyTorch's own AdamW).
Tolerances are written at each check with the reason; NaN never passes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from framework import Tensor, tensor_from
from grader.dsl import Lab, TestContext
from grader.views import strided

lab = Lab("lab07", "训练循环", "The training loop")
_LOSS = (
    "framework.loss:cross_entropy_loss",
    "framework.loss:softmax_ce_grad",
    "framework.loss:cross_entropy_with_grad",
    "framework.loss:_loss_and_grad",
)
lab.forbid(
    "cross_entropy_loss",
    *_LOSS,
    why=("这一课就是亲手写出稳定的交叉熵", "this lab is about writing the stable cross-entropy"),
)
lab.forbid(
    "softmax_ce_grad",
    *_LOSS,
    why=(
        "这一课就是亲手写出 (softmax − one_hot) / S",
        "this lab is about writing (softmax − one_hot) / S",
    ),
)
lab.forbid(
    "adam_step",
    "framework.optimizer:AdamW.step",
    why=("这一课就是亲手写出一步 AdamW", "this lab is about writing one AdamW step yourself"),
)

F32 = np.float32
LN10 = float(np.log(10.0))


def ref_loss(z: np.ndarray, y: list[int]) -> float:
    z = np.asarray(z, dtype=np.float64)
    m = z.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1))
    return float((lse - z[np.arange(len(y)), y]).mean())


def ref_grad(z: np.ndarray, y: list[int]) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    g: np.ndarray = e / e.sum(axis=1, keepdims=True)
    g[np.arange(len(y)), y] -= 1.0
    return g / len(y)


def ref_adamw(
    p: Any, grads: list[np.ndarray], lr: float, b1: float, b2: float, eps: float, wd: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """torch.optim.AdamW's algorithm in float64: decay, moments, bias-corrected update."""
    p = np.asarray(p, np.float64)
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        p = p - lr * wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p = p - (lr / (1 - b1**t)) * m / (np.sqrt(v) / np.sqrt(1 - b2**t) + eps)
    return p, m, v


# -- cross_entropy_loss ----------------------------------------------------------------------
@lab.test(
    "cross_entropy_loss：公式与数值",
    "cross_entropy_loss: the formula and its values",
    hint=[
        (
            "loss 是每个位置 logsumexp(z) − z[target] 的平均值，返回一个 float。",
            "The loss is the mean over positions of logsumexp(z) − z[target], returned as a float.",
        ),
        (
            "全 0 的 logits 时每个位置的概率都是 1/V，所以 loss = ln V。",
            "With all-zero logits every probability is 1/V, so the loss is ln V.",
        ),
        (
            "在 float64 的副本上算，按行取目标位置的 logit，别改动 logits。",
            "Compute on a float64 copy, pick each row's target logit, and leave logits unchanged.",
        ),
    ],
)
def loss_values(t: TestContext) -> None:
    zeros = np.zeros((4, 10), F32)
    call = t.call("cross_entropy_loss", tensor_from(zeros), [3, 7, 1, 5])
    if (x := t.number(("返回一个数", "returns a number"), call.value)) is not None:
        # ln 10 = 2.302585: a float32 log is good to ~1e-7 relative
        t.close(
            ("全 0 logits：loss = ln V = ln 10", "all-zero logits: loss = ln V = ln 10"),
            x,
            LN10,
            atol=1e-6,
        )
    dominant = zeros.copy()
    dominant[np.arange(4), [3, 7, 1, 5]] = 5.0
    loss = t.call("cross_entropy_loss", tensor_from(dominant), [3, 7, 1, 5]).value
    t.close(
        (
            "目标 logit 为 5、其余为 0：loss = ln(1 + 9e⁻⁵) = 0.058874",
            "target logit 5, the rest 0: loss = ln(1 + 9e⁻⁵) = 0.058874",
        ),
        loss,
        ref_loss(dominant, [3, 7, 1, 5]),
        atol=1e-6,
    )
    rng = t.rng(701)
    z = (rng.standard_normal((6, 11)) * 3).astype(F32)
    y = rng.integers(0, 11, size=6).tolist()
    call = t.call("cross_entropy_loss", tensor_from(z), y)
    # a mean of six float32 log-sum-exps of values ~10: 1e-5 relative is ample
    t.close(
        ("随机 logits [6, 11]：与公式一致", "random logits [6, 11]: matches the formula"),
        call.value,
        ref_loss(z, y),
        atol=1e-5,
        rtol=1e-5,
    )
    t.unchanged(("logits 没有被修改", "logits are left unchanged"), z, call.args[0])


@lab.test(
    "cross_entropy_loss：±1e4 的 logits",
    "cross_entropy_loss: logits of ±1e4",
    hint=[
        (
            "exp(1e4) 在 float32 里会溢出：logsumexp 要先减去每行的最大值。",
            "exp(1e4) overflows float32: subtract each row's max before the logsumexp.",
        ),
        (
            "logsumexp(z) = m + log Σ exp(z − m)，其中 m 是该行的最大值；不要先算 softmax 再取"
            " log。",
            "logsumexp(z) = m + log Σ exp(z − m) with m the row's max; do not take the log of "
            "a softmax.",
        ),
    ],
)
def loss_stable(t: TestContext) -> None:
    z = np.array([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4 + 1]], F32)
    for targets, zh, en in (
        ([0, 2], "目标是最大的 logit：loss ≈ 0.2757", "the target is the largest logit: ≈ 0.2757"),
        (
            [2, 0],
            "目标是最小的 logit：loss ≈ 10000.78",
            "the target is the smallest logit: ≈ 10000.78",
        ),
    ):
        loss = t.number((zh, en), t.call("cross_entropy_loss", tensor_from(z), targets).value)
        if loss is None:
            continue
        t.check(
            (f"{zh}：是有限数", f"{en}: finite"),
            bool(np.isfinite(loss)),
            (
                f"loss = {loss}：exp(1e4) 在 float32 里溢出了，先减去每行的最大值",
                f"loss = {loss}: exp(1e4) overflows float32; subtract each row's max first",
            ),
        )
        # the logits are exact in float32; ±1e4 plus a float32 rounding of 1e4 (ulp 1e-3)
        t.close((zh, en), loss, ref_loss(z, targets), atol=1e-3, rtol=1e-6)


@lab.test(
    "cross_entropy_loss：拒绝错误的 targets",
    "cross_entropy_loss: rejects bad targets",
    hint=[
        (
            "计算前先检查 targets：长度等于 S，每个值在 [0, V) 里。",
            "Check targets before computing: length S, each value in [0, V).",
        ),
        (
            "负的 target 在 numpy 里会绕到末尾，所以要自己 raise ValueError。",
            "A negative target wraps around in numpy, so raise ValueError yourself.",
        ),
    ],
)
def loss_errors(t: TestContext) -> None:
    z = tensor_from(np.zeros((2, 3), F32))
    cases = (
        ([0, 3], "target = V = 3 → ValueError", "target = V = 3 → ValueError"),
        (
            [0, -1],
            "target = -1 → ValueError（负下标会绕到末尾）",
            "target = -1 → ValueError (a negative index wraps around)",
        ),
        ([0], "targets 比 S 短 → ValueError", "targets shorter than S → ValueError"),
    )
    for targets, zh, en in cases:
        t.raises((zh, en), ValueError, "cross_entropy_loss", z, targets)


# -- softmax_ce_grad -------------------------------------------------------------------------
@lab.test(
    "softmax_ce_grad：一个位置的梯度",
    "softmax_ce_grad: the gradient at one position",
    hint=[
        (
            "梯度是每行的 softmax 减去目标位置的 one-hot，形状与 logits 相同。",
            "The gradient is each row's softmax minus the one-hot of its target, shaped like "
            "logits.",
        ),
        (
            "在新数组上计算并返回新的 Tensor，不要原地改动 logits。",
            "Compute into a new array and return a new Tensor; do not change logits in place.",
        ),
    ],
)
def grad_values(t: TestContext) -> None:
    z = np.array([[1.0, 2.0, 3.0, 0.5, 0.0, 1.5]], F32)
    call = t.call("softmax_ce_grad", tensor_from(z), [2])
    g = t.array(("返回 [1, 6] 的梯度", "returns a [1, 6] gradient"), call.value, (1, 6))
    # values of order 0.1 from float32 exp and a division: 1e-6 is a few ulps
    t.allclose(
        (
            "softmax − one-hot = [0.0728, 0.1980, −0.4619, 0.0442, 0.0268, 0.1201]",
            "softmax − one-hot = [0.0728, 0.1980, −0.4619, 0.0442, 0.0268, 0.1201]",
        ),
        call.value,
        ref_grad(z, [2]),
        atol=1e-6,
    )
    if g is not None:
        t.close(("梯度之和为 0", "the gradient sums to 0"), float(g.sum()), 0.0, atol=1e-6)
    t.unchanged(("logits 没有被修改", "logits are left unchanged"), z, call.args[0])


@lab.test(
    "softmax_ce_grad：平均损失的梯度（除以 S）",
    "softmax_ce_grad: gradient of the mean (÷ S)",
    hint=[
        (
            "loss 是 S 个位置的平均值，所以梯度要再除以 S。",
            "The loss averages over S positions, so the gradient is divided by S too.",
        ),
        (
            "重复的 target 也按行各减一次 1：用每行自己的下标，不要用 np.unique。",
            "A repeated target still subtracts 1 once per row: index each row on its own.",
        ),
    ],
)
def grad_mean(t: TestContext) -> None:
    rng = t.rng(702)
    z = (rng.standard_normal((4, 7)) * 2).astype(F32)
    y = [6, 0, 6, 3]  # a repeated target
    grad = t.call("softmax_ce_grad", tensor_from(z), y).value
    t.allclose(
        ("S = 4：(softmax − one-hot) / 4", "S = 4: (softmax − one-hot) / 4"),
        grad,
        ref_grad(z, y),
        atol=1e-6,
    )
    h = 1e-2  # central differences of your own loss: error O(h²) ≈ 1e-5 plus float32 noise
    probes = []
    for i, j in np.ndindex(z.shape):
        zp, zm = z.copy(), z.copy()
        zp[i, j] += F32(h)
        zm[i, j] -= F32(h)
        probes += [(tensor_from(zp), y), (tensor_from(zm), y)]
    name = (
        "与你的 cross_entropy_loss 的中心差分一致",
        "agrees with central differences of your cross_entropy_loss",
    )
    losses = t.array(name, [c.value for c in t.map("cross_entropy_loss", probes)], (56,))
    if losses is not None:
        numeric = (losses[0::2] - losses[1::2]).reshape(4, 7) / (2 * h)
        t.allclose(name, grad, numeric, atol=1e-3)


@lab.test(
    "softmax_ce_grad：±1e4 的 logits",
    "softmax_ce_grad: logits of ±1e4",
    hint=[
        (
            "softmax 也要先减去每行的最大值，否则 ±1e4 会得到 inf 或 NaN。",
            "The softmax subtracts each row's max too, or ±1e4 gives inf or NaN.",
        ),
        (
            "对每一行用 exp(z − max) / Σ，max 取 axis=1、keepdims=True。",
            "For each row use exp(z − max) / Σ, with the max over axis=1, keepdims=True.",
        ),
    ],
)
def grad_stable(t: TestContext) -> None:
    z = np.array([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4 + 1]], F32)
    grad = t.call("softmax_ce_grad", tensor_from(z), [1, 1]).value
    t.finite(("梯度全是有限数", "every gradient cell is finite"), grad)
    t.allclose(("数值正确", "correct values"), grad, ref_grad(z, [1, 1]), atol=1e-6)


@lab.test(
    "softmax_ce_grad：拒绝错误的 targets",
    "softmax_ce_grad: rejects bad targets",
    hint=[
        (
            "softmax_ce_grad 与 cross_entropy_loss 一样检查 targets。",
            "softmax_ce_grad checks targets the same way cross_entropy_loss does.",
        ),
        (
            "len(targets) 必须等于 S，每个值在 [0, V)，否则 raise ValueError。",
            "len(targets) must equal S and each value lie in [0, V), else raise ValueError.",
        ),
    ],
)
def grad_errors(t: TestContext) -> None:
    z = tensor_from(np.zeros((2, 3), F32))
    t.raises(
        ("target = 5 ≥ V → ValueError", "target = 5 ≥ V → ValueError"),
        ValueError,
        "softmax_ce_grad",
        z,
        [0, 5],
    )
    t.raises(
        ("targets 比 S 长 → ValueError", "targets longer than S → ValueError"),
        ValueError,
        "softmax_ce_grad",
        z,
        [0, 1, 2],
    )


# -- adam_step -------------------------------------------------------------------------------
def _adam_args(p: Any, g: Any, m: Any, v: Any) -> list[Tensor]:
    return [tensor_from(np.asarray(a, F32)) for a in (p, g, m, v)]


@lab.test(
    "adam_step：第一步",
    "adam_step: the first step",
    hint=[
        (
            "adam_step 原地更新 param、m、v 并返回 None；m、v 存的是未修正的矩。",
            "adam_step updates param, m and v in place and returns None; m and v keep the raw "
            "moments.",
        ),
        (
            "m = β₁m + (1 − β₁)g，v = β₂v + (1 − β₂)g²；只在更新 param 时用 m̂ = m/(1 − β₁ᵗ)、v̂。",
            "m = β₁m + (1 − β₁)g, v = β₂v + (1 − β₂)g²; only the param update uses m̂ = m/(1 "
            "− β₁ᵗ) and v̂.",
        ),
        (
            "param −= lr·m̂/(√v̂ + eps)：eps 加在根号外面。",
            "param −= lr·m̂/(√v̂ + eps): eps goes outside the root.",
        ),
    ],
)
def adam_first(t: TestContext) -> None:
    # the C course's check rejected m = 0.01 here, which is the right value
    p, g, m, v = _adam_args(np.ones(8), np.full(8, 0.1), np.zeros(8), np.zeros(8))
    call = t.call("adam_step", p, g, m, v, 1, 0.01)
    t.check(
        ("返回 None（原地修改）", "returns None (works in place)"),
        call.value is None,
        (
            "adam_step 应原地修改 param、m、v 并返回 None",
            "adam_step must change param, m and v in place and return None",
        ),
    )
    # float32 results of a few operations on values of order 1: 1e-7 absolute
    t.allclose(
        (
            "m = (1 − β₁)·g = 0.01（不是偏差修正后的 0.1）",
            "m = (1 − β₁)·g = 0.01 (not the bias-corrected 0.1)",
        ),
        call.args[2],
        np.full(8, 0.01),
        atol=1e-8,
        rtol=1e-6,
    )
    t.allclose(
        ("v = (1 − β₂)·g² = 1e-5", "v = (1 − β₂)·g² = 1e-5"),
        call.args[3],
        np.full(8, 1e-5),
        atol=1e-11,
        rtol=1e-5,
    )
    t.allclose(
        ("param = 1 − lr·m̂/√v̂ = 0.99", "param = 1 − lr·m̂/√v̂ = 0.99"),
        call.args[0],
        np.full(8, 0.99),
        atol=1e-6,
    )
    t.unchanged(
        ("grad 没有被修改", "grad is left unchanged"),
        np.full(8, 0.1, F32),
        call.args[1],
        returns_new=False,
    )
    tiny = _adam_args(np.ones(3), np.full(3, 1e-6), np.zeros(3), np.zeros(3))
    after = t.call("adam_step", *tiny, 1, 0.1).args[0]
    # m̂/(√v̂ + eps) = 1e-6 / (1e-6 + 1e-8): eps inside the root would give ≈ 0.01
    t.allclose(
        ("梯度很小（1e-6）：eps 加在 √v̂ 之外", "a tiny gradient (1e-6): eps goes outside √v̂"),
        after,
        ref_adamw(np.ones(3), [np.full(3, 1e-6)], 0.1, 0.9, 0.999, 1e-8, 0.0)[0],
        atol=1e-6,
    )


@lab.test(
    "adam_step：10 步，带权重衰减",
    "adam_step: 10 steps with weight decay",
    hint=[
        (
            "偏差修正用步数 t 作指数：1 − β₁ᵗ 与 1 − β₂ᵗ，t 从 1 开始。",
            "The bias correction raises to the step t: 1 − β₁ᵗ and 1 − β₂ᵗ, with t counting "
            "from 1.",
        ),
        (
            "AdamW 的权重衰减是解耦的：param −= lr·wd·param，而不是把 wd·param 加进梯度。",
            "AdamW's decay is decoupled: param −= lr·wd·param, not wd·param added to the gradient.",
        ),
        (
            "用传进来的 beta1、beta2、eps、weight_decay，不要用默认值。",
            "Use the beta1, beta2, eps and weight_decay you are given, not the defaults.",
        ),
    ],
)
def adam_steps(t: TestContext) -> None:
    rng = t.rng(707)
    w0 = rng.standard_normal((3, 4)).astype(F32)
    grads = [rng.standard_normal((3, 4)).astype(F32) for _ in range(10)]
    hyper = (0.05, 0.9, 0.99, 1e-8, 0.1)  # lr, β₁, β₂, eps, weight_decay
    p, _, m, v = _adam_args(w0, grads[0], np.zeros((3, 4)), np.zeros((3, 4)))
    for step, g in enumerate(grads, start=1):
        lr, b1, b2, eps, wd = hyper
        args = t.call("adam_step", p, tensor_from(g), m, v, step, lr, b1, b2, eps, wd).args
        p, m, v = args[0], args[2], args[3]
    want_p, want_m, want_v = ref_adamw(w0, grads, *hyper)
    # 10 float32 steps of size ~lr: rounding stays below 1e-5
    t.allclose(("10 步后的 param", "param after 10 steps"), p, want_p, atol=1e-5)
    t.allclose(("10 步后的 m", "m after 10 steps"), m, want_m, atol=1e-6)
    t.allclose(("10 步后的 v", "v after 10 steps"), v, want_v, atol=1e-6, rtol=1e-5)


@lab.test(
    "adam_step：先衰减，再更新",
    "adam_step: decay first, then the update",
    hint=[
        (
            "先做权重衰减，再做 Adam 更新（与 torch.optim.AdamW 相同）。",
            "Apply the weight decay first, then the Adam update (as torch.optim.AdamW does).",
        ),
        (
            "梯度为 0 时 m̂ 为 0，但衰减仍要让 param 乘以 (1 − lr·wd)。",
            "With a zero gradient m̂ is 0, but the decay still multiplies param by (1 − lr·wd).",
        ),
    ],
)
def adam_decay(t: TestContext) -> None:
    # p = 2, g = 1, lr = 0.1, wd = 0.5: decay first gives 2·0.95 − 0.1 = 1.8;
    # decay after the update (the C course's order) gives (2 − 0.1)·0.95 = 1.805
    args = t.call(
        "adam_step", *_adam_args([2.0], [1.0], [0.0], [0.0]), 1, 0.1, 0.9, 0.999, 1e-8, 0.5
    ).args
    t.allclose(
        ("p = 2·(1 − lr·wd) − lr = 1.8", "p = 2·(1 − lr·wd) − lr = 1.8"), args[0], [1.8], atol=1e-6
    )
    args = t.call(
        "adam_step", *_adam_args([2.0], [0.0], [0.0], [0.0]), 1, 0.1, 0.9, 0.999, 1e-8, 0.5
    ).args
    t.allclose(
        (
            "梯度为 0 时权重衰减仍然让 p 变小：0.95·2 = 1.9",
            "weight decay shrinks p even when the gradient is 0: 0.95·2 = 1.9",
        ),
        args[0],
        [1.9],
        atol=1e-6,
    )


@lab.test(
    "adam_step：原地修改 m、v，检查参数",
    "adam_step: m and v in place, arguments checked",
    hint=[
        (
            "参数可能是 ndarray：as_tensor 会复制数组，要直接写进 ndarray 本身。",
            "Arguments may be ndarrays: as_tensor copies an array, so write into the ndarray "
            "itself.",
        ),
        (
            "写入之前先检查：grad、m、v 的形状与 param 相同，t ≥ 1，否则 raise ValueError。",
            "Check before writing: grad, m and v shaped like param, t ≥ 1, else raise ValueError.",
        ),
    ],
)
def adam_in_place(t: TestContext) -> None:
    p, g, m, v = (np.full(4, x, F32) for x in (1.0, 0.5, 0.0, 0.0))
    call = t.call("adam_step", p, g, m, v, 1, 0.01)
    t.allclose(
        ("ndarray 的 m 被原地更新", "an ndarray m is updated in place"),
        call.args[2],
        np.full(4, 0.05),
        atol=1e-7,
    )
    t.allclose(
        ("ndarray 的 v 被原地更新", "an ndarray v is updated in place"),
        call.args[3],
        np.full(4, 2.5e-4),
        atol=1e-9,
        rtol=1e-5,
    )
    t.allclose(
        ("ndarray 的 param 被原地更新", "an ndarray param is updated in place"),
        call.args[0],
        np.full(4, 0.99),
        atol=1e-6,
    )
    bad = _adam_args(np.ones(4), np.ones(3), np.zeros(4), np.zeros(4))
    raised = t.raises(
        ("grad 的形状与 param 不同 → ValueError", "grad shaped unlike param → ValueError"),
        ValueError,
        "adam_step",
        *bad,
        1,
        0.01,
    )
    if raised.args:
        t.unchanged(
            ("出错时 param 保持原样", "on error, param is left as it was"),
            np.ones(4, F32),
            raised.args[0],
            returns_new=False,
        )
    t.raises(
        ("t = 0 → ValueError（步数从 1 开始）", "t = 0 → ValueError (steps count from 1)"),
        ValueError,
        "adam_step",
        *_adam_args(np.ones(2), np.ones(2), np.zeros(2), np.zeros(2)),
        0,
        0.01,
    )


# -- every function: arrays and views --------------------------------------------------------
@lab.test(
    "numpy 数组和非连续视图一样能用",
    "numpy arrays and non-contiguous views work too",
    hint=[
        (
            "logits 可能是 ndarray 或非连续视图，targets 可能是 numpy 整数数组。",
            "logits may be an ndarray or a non-contiguous view, targets a numpy int array.",
        ),
        (
            "读取时用 .numpy()（不是 .data），原地更新时写进 .numpy() 返回的视图。",
            "Read through .numpy() (not .data), and update in place through the view .numpy() "
            "returns.",
        ),
    ],
)
def arrays_and_views(t: TestContext) -> None:
    rng = t.rng(777)
    z = (rng.standard_normal((3, 5)) * 2).astype(F32)
    y = np.array([4, 0, 2])  # numpy ints, not a list
    name = ("cross_entropy_loss 接受 ndarray", "cross_entropy_loss accepts ndarrays")
    if call := t.returns(name, "cross_entropy_loss", z, y):
        t.close(name, call.value, ref_loss(z, [4, 0, 2]), atol=1e-5)
    name = ("softmax_ce_grad 接受 ndarray", "softmax_ce_grad accepts ndarrays")
    if call := t.returns(name, "softmax_ce_grad", z, y):
        t.allclose(name, call.value, ref_grad(z, [4, 0, 2]), atol=1e-6)
    # t.views compares arrays; the loss is a number, so build the same view by hand
    name = ("cross_entropy_loss：logits 是非连续视图", "cross_entropy_loss: logits as a view")
    if call := t.returns(name, "cross_entropy_loss", strided(z), [4, 0, 2]):
        t.close(name, call.value, ref_loss(z, [4, 0, 2]), atol=1e-5)
    t.views(
        ("softmax_ce_grad：logits 是非连续视图", "softmax_ce_grad: logits as a view"),
        "softmax_ce_grad",
        tensor_from(z),
        [4, 0, 2],
        expected=ref_grad(z, [4, 0, 2]),
        atol=1e-6,
    )
    w, g = rng.standard_normal((2, 3)).astype(F32), rng.standard_normal((2, 3)).astype(F32)
    want_p, want_m, want_v = ref_adamw(w, [g], 0.01, 0.9, 0.999, 1e-8, 0.1)
    args = (*_adam_args(w, g, np.zeros((2, 3)), np.zeros((2, 3))), 1, 0.01, 0.9, 0.999, 1e-8, 0.1)
    for i, what, want, tol in (
        (0, "param", want_p, 1e-6),
        (2, "m", want_m, 1e-7),
        (3, "v", want_v, 1e-8),
    ):
        t.views(
            (
                f"adam_step：param、grad、m、v 都是视图时，{what} 原地更新正确",
                f"adam_step: with views for param, grad, m and v, {what} is updated right",
            ),
            "adam_step",
            *args,
            expected=want,
            atol=tol,
            rtol=1e-5,
            inplace=i,
        )

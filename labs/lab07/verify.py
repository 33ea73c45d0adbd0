"""Lab07 checks: cross-entropy, its gradient, and one AdamW step.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process, and every value is compared here, in the grader, against float64 references
written out below (the project's tests hold `ref_adamw` to PyTorch's own AdamW); the last
test compares each function on ndarrays and views with its own result on plain Tensors.
Tolerances are written at each check with the reason; NaN never passes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from framework import Tensor, tensor_from
from grader.compare import as_array, as_number
from grader.dsl import Lab, TestContext
from grader.sandbox.outcome import CallOutcome, Outcome

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


_LEAVE_LOGITS = (
    "调用之后 logits 变了：.numpy() 是 Tensor 内存的视图，在它上面做 -=、/= 或 out= 都会改到"
    "调用者的数据；在副本上计算。",
    "logits changed during the call: .numpy() is a view of the Tensor's memory, so -=, /= or "
    "out= on it change the caller's data; compute on a copy.",
)


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
    returns_float = (
        "cross_entropy_loss 返回一个 Python float：S 个位置的损失平均之后的那一个数。",
        "cross_entropy_loss returns one Python float: the single number left after averaging "
        "the S positions' losses.",
    )
    x = t.number(("返回一个数", "returns a number"), call.value, hint=returns_float)
    if x is not None:
        # ln 10 = 2.302585: a float32 log is good to ~1e-7 relative
        t.close(
            ("全 0 logits：loss = ln V = ln 10", "all-zero logits: loss = ln V = ln 10"),
            x,
            LN10,
            atol=1e-6,
            hint=(
                "全 0 的 logits 下每个 token 的概率都是 1/V，每个位置的损失都是 ln V，平均"
                "也是 ln V：把你的值和 ln 10 ≈ 2.3026 比一比，看差的是倍数还是一个常数。",
                "With all-zero logits every token has probability 1/V, so every position's loss "
                "is ln V and so is their mean: compare your value with ln 10 ≈ 2.3026 and see "
                "whether it is off by a factor or by a constant.",
            ),
        )
    dominant = zeros.copy()
    dominant[np.arange(4), [3, 7, 1, 5]] = 5.0
    loss = t.call("cross_entropy_loss", tensor_from(dominant), [3, 7, 1, 5]).value
    t.close(
        (
            "目标 logit 为 5、其余为 0：loss = ln(1 + 9·exp(−5)) = 0.058874",
            "target logit 5, the rest 0: loss = ln(1 + 9·exp(−5)) = 0.058874",
        ),
        loss,
        ref_loss(dominant, [3, 7, 1, 5]),
        atol=1e-6,
        hint=(
            "每行只有目标位置是 5，其余 9 个是 0：手算一行的 logsumexp(z) − z[target]，"
            "再和你的代码对这一行算出的值对照。",
            "Each row has 5 at its target and 0 in the other nine cells: work out one row's "
            "logsumexp(z) − z[target] by hand and compare it with your code's value for that row.",
        ),
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
        hint=(
            "随机的 logits 和 targets：逐行打印你的 logsumexp(z) − z[target]，和按公式算的"
            "值比较；每一行取的是它自己的 target。",
            "Random logits and targets: print your logsumexp(z) − z[target] row by row and "
            "compare it with the formula; each row takes its own target.",
        ),
    )
    t.unchanged(
        ("logits 没有被修改", "logits are left unchanged"), z, call.args[0], hint=_LEAVE_LOGITS
    )


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
        loss = t.number(
            (zh, en),
            t.call("cross_entropy_loss", tensor_from(z), targets).value,
            hint=(
                "这里也要返回一个 float：先看看你的函数对这组 logits 返回了什么。",
                "Here too the result is one float: look at what your function returns for "
                "these logits.",
            ),
        )
        if loss is None:
            continue
        t.check(
            (f"{zh}：是有限数", f"{en}: finite"),
            bool(np.isfinite(loss)),
            (f"loss = {loss}，不是有限数", f"loss = {loss}, not a finite number"),
            hint=(
                "inf 或 NaN 来自对很大的数取 exp（float32 的 exp 到 89 就溢出）或对 0 取 log："
                "打印每一步的中间结果，找出第一个变成 inf 或 0 的。",
                "inf or NaN comes from exp of a large number (float32 exp overflows at 89) or "
                "from log of 0: print every intermediate step and find the first that becomes "
                "inf or 0.",
            ),
        )
        # the logits are exact in float32; ±1e4 plus a float32 rounding of 1e4 (ulp 1e-3)
        t.close(
            (zh, en),
            loss,
            ref_loss(z, targets),
            atol=1e-3,
            rtol=1e-6,
            hint=(
                "逐行对照 logsumexp(z) − z[target] 和你的中间结果；目标是最小 logit 的那一行"
                "损失约为 2·10⁴，这么大是对的。",
                "Compare your intermediate values row by row with logsumexp(z) − z[target]; a "
                "row whose target is the smallest logit has a loss of about 2·10⁴, and that "
                "size is right.",
            ),
        )


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
        (
            [0, 3],
            ("target = V = 3 → ValueError", "target = V = 3 → ValueError"),
            (
                "target 必须小于 V：用它做下标之前先检查，自己 raise ValueError（numpy 抛出的"
                " IndexError 不算）。",
                "A target must be below V: check it before indexing with it and raise "
                "ValueError yourself (numpy's IndexError does not count).",
            ),
        ),
        (
            [0, -1],
            (
                "target = -1 → ValueError（负下标会绕到末尾）",
                "target = -1 → ValueError (a negative index wraps around)",
            ),
            (
                "numpy 里负下标从末尾数起，不会报错：target 的下界也要自己检查。",
                "In numpy a negative index counts from the end and raises nothing: check the "
                "lower bound of the targets yourself.",
            ),
        ),
        (
            [0],
            ("targets 比 S 短 → ValueError", "targets shorter than S → ValueError"),
            (
                "len(targets) 必须等于 logits 的行数 S；广播或切片会把不一致藏起来。",
                "len(targets) must equal S, the number of rows of logits; broadcasting or "
                "slicing hides a mismatch.",
            ),
        ),
    )
    for targets, name, hint in cases:
        t.raises(name, ValueError, "cross_entropy_loss", z, targets, hint=hint)


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
    g = t.array(
        ("返回 [1, 6] 的梯度", "returns a [1, 6] gradient"),
        call.value,
        (1, 6),
        hint=(
            "梯度的形状和 logits 相同，是 [S, V]：看看你返回的是什么对象、shape 是多少。",
            "The gradient has the shape of logits, [S, V]: look at what you return and its shape.",
        ),
    )
    # values of order 0.1 from float32 exp and a division: 1e-6 is a few ulps
    t.allclose(
        (
            "softmax − one-hot = [0.0728, 0.1980, −0.4618, 0.0442, 0.0268, 0.1201]",
            "softmax − one-hot = [0.0728, 0.1980, −0.4618, 0.0442, 0.0268, 0.1201]",
        ),
        call.value,
        ref_grad(z, [2]),
        atol=1e-6,
        hint=(
            "逐格对照：非目标位置是这一行 softmax 的值，目标位置是 softmax − 1（这里 S = 1）。",
            "Compare cell by cell: off the target each cell is the row's softmax value, at the "
            "target the softmax − 1 (S = 1 here).",
        ),
    )
    if g is not None:
        t.close(
            ("梯度之和为 0", "the gradient sums to 0"),
            float(g.sum()),
            0.0,
            atol=1e-6,
            hint=(
                "softmax 的一行之和是 1，one-hot 的一行之和也是 1，所以梯度每行之和为 0："
                "打印你每一行的和。",
                "A softmax row sums to 1 and so does a one-hot row, so every gradient row "
                "sums to 0: print your rows' sums.",
            ),
        )
    t.unchanged(
        ("logits 没有被修改", "logits are left unchanged"), z, call.args[0], hint=_LEAVE_LOGITS
    )


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
        hint=(
            "S = 4 时每一格是 (softmax − one-hot) / 4：把你的结果乘以 S 后和 softmax − one-hot"
            " 对照，也看看 target 相同的那两行。",
            "With S = 4 every cell is (softmax − one-hot) / 4: multiply your result by S and "
            "compare it with softmax − one-hot, and look at the two rows with the same target.",
        ),
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
    losses = t.array(
        name,
        [c.value for c in t.map("cross_entropy_loss", probes)],
        (56,),
        hint=(
            "这一项要用你的 cross_entropy_loss 算 56 次损失，每次都要返回一个 float。",
            "This check evaluates your cross_entropy_loss 56 times; each call must return one "
            "float.",
        ),
    )
    if losses is not None:
        numeric = (losses[0::2] - losses[1::2]).reshape(4, 7) / (2 * h)
        t.allclose(
            name,
            grad,
            numeric,
            atol=1e-3,
            hint=(
                "这里拿你的梯度和你自己的 cross_entropy_loss 的数值导数比：两者之一有错。"
                "看 loss 是否是 S 个位置的平均，梯度是否除以同一个 S。",
                "This compares your gradient with the numerical derivative of your own "
                "cross_entropy_loss, so one of the two is off: check that the loss is the mean "
                "over S positions and that the gradient is divided by the same S.",
            ),
        )


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
    t.finite(
        ("梯度全是有限数", "every gradient cell is finite"),
        grad,
        hint=(
            "对 ±1e4 取 exp 会溢出成 inf，inf / inf 就是 NaN：打印 softmax 的每一步，找出第一个"
            "不是有限数的值。",
            "exp of ±1e4 overflows to inf, and inf / inf is NaN: print every step of your "
            "softmax and find the first value that is not finite.",
        ),
    )
    t.allclose(
        ("数值正确", "correct values"),
        grad,
        ref_grad(z, [1, 1]),
        atol=1e-6,
        hint=(
            "逐格对照：每行是 softmax − one-hot，再除以 S（这里 S = 2）；第一行的 softmax"
            "几乎正好是 [1, 0, 0]。",
            "Compare cell by cell: each row is softmax − one-hot, divided by S (S = 2 here); "
            "the first row's softmax is almost exactly [1, 0, 0].",
        ),
    )


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
        hint=(
            "softmax_ce_grad 也要在计算之前检查每个 target < V，并 raise ValueError。",
            "softmax_ce_grad too checks that every target is below V before computing, and "
            "raises ValueError.",
        ),
    )
    t.raises(
        ("targets 比 S 长 → ValueError", "targets longer than S → ValueError"),
        ValueError,
        "softmax_ce_grad",
        z,
        [0, 1, 2],
        hint=(
            "softmax_ce_grad 也要检查 len(targets) 等于 S：多出来的 target 不能被悄悄丢掉。",
            "softmax_ce_grad too checks that len(targets) equals S: extra targets must not be "
            "dropped silently.",
        ),
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
        hint=(
            "adam_step 的结果写在 param、m、v 里，函数本身返回 None：看看你的 return 语句。",
            "adam_step's results are written into param, m and v, and the function itself "
            "returns None: look at your return statement.",
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
        hint=(
            "看调用之后 m 里是什么：还是 0，说明新值没有写进调用者的数组；是 0.1，说明存进去"
            "的是修正后的 m̂。",
            "Look at m after the call: still 0 means the new values never reached the "
            "caller's array; 0.1 means the bias-corrected m̂ was stored.",
        ),
    )
    t.allclose(
        ("v = (1 − β₂)·g² = 1e-5", "v = (1 − β₂)·g² = 1e-5"),
        call.args[3],
        np.full(8, 1e-5),
        atol=1e-11,
        rtol=1e-5,
        hint=(
            "第一步之后 v 是 (1 − β₂)·g²：和 m 一样存未修正的值，并原地写进调用者的数组。",
            "After the first step v is (1 − β₂)·g²: like m, the uncorrected value, written "
            "in place into the caller's array.",
        ),
    )
    t.allclose(
        ("param = 1 − lr·m̂/√v̂ = 0.99", "param = 1 − lr·m̂/√v̂ = 0.99"),
        call.args[0],
        np.full(8, 0.99),
        atol=1e-6,
        hint=(
            "第一步 m̂ = g、v̂ = g²，所以 param 正好移动 lr：看你的 param 是没动、动得太少，"
            "还是太多。",
            "On the first step m̂ = g and v̂ = g², so param moves by exactly lr: see whether "
            "your param did not move, moved too little, or too far.",
        ),
    )
    t.unchanged(
        ("grad 没有被修改", "grad is left unchanged"),
        np.full(8, 0.1, F32),
        call.args[1],
        returns_new=False,
        hint=(
            "grad 是只读的输入：不要在它的内存上做 *=、+= 这类原地运算。",
            "grad is an input to read: do no in-place operation (*=, +=) on its memory.",
        ),
    )
    tiny = _adam_args(np.ones(3), np.full(3, 1e-6), np.zeros(3), np.zeros(3))
    after = t.call("adam_step", *tiny, 1, 0.1).args[0]
    # m̂/(√v̂ + eps) = 1e-6 / (1e-6 + 1e-8): eps inside the root would give ≈ 0.01
    t.allclose(
        ("梯度很小（1e-6）：eps 加在 √v̂ 之外", "a tiny gradient (1e-6): eps goes outside √v̂"),
        after,
        ref_adamw(np.ones(3), [np.full(3, 1e-6)], 0.1, 0.9, 0.999, 1e-8, 0.0)[0],
        atol=1e-6,
        hint=(
            "梯度很小（1e-6）时步长仍约为 lr：m̂/(√v̂ + eps) ≈ 1e-6/(1e-6 + 1e-8)；"
            "打印你的 m̂、√v̂ 和分母。",
            "With a tiny gradient (1e-6) the step is still about lr: m̂/(√v̂ + eps) ≈ "
            "1e-6/(1e-6 + 1e-8); print your m̂, √v̂ and the denominator.",
        ),
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
    t.allclose(
        ("10 步后的 param", "param after 10 steps"),
        p,
        want_p,
        atol=1e-5,
        hint=(
            "误差会一步步累积：用 verify.py 里的 ref_adamw 逐步对照你的 param，找出第一个"
            "不一样的步骤。",
            "Errors add up over the steps: compare your param with ref_adamw in verify.py step "
            "by step, and find the first step that differs.",
        ),
    )
    t.allclose(
        ("10 步后的 m", "m after 10 steps"),
        m,
        want_m,
        atol=1e-6,
        hint=(
            "m 只取决于梯度：每一步都在上一步的 m 上更新；用 ref_adamw 逐步对照你的 m。",
            "m depends on the gradients alone, each step building on the previous m: compare "
            "your m with ref_adamw's step by step.",
        ),
    )
    t.allclose(
        ("10 步后的 v", "v after 10 steps"),
        v,
        want_v,
        atol=1e-6,
        rtol=1e-5,
        hint=(
            "v 只取决于梯度的平方，每一步用传进来的 beta2 在上一步的 v 上更新；用 ref_adamw"
            " 逐步对照。",
            "v depends on the squared gradients alone, each step building on the previous v "
            "with the beta2 you are given: compare step by step with ref_adamw.",
        ),
    )


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
        ("p = 2·(1 − lr·wd) − lr = 1.8", "p = 2·(1 − lr·wd) − lr = 1.8"),
        args[0],
        [1.8],
        atol=1e-6,
        hint=(
            "两种顺序都算一下：先衰减再更新得 1.8，先更新再衰减得 1.805；看你的值落在哪里。",
            "Work out both orders: decay then update gives 1.8, update then decay gives 1.805; "
            "see where your value lands.",
        ),
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
        hint=(
            "梯度为 0 时只剩衰减：p 乘以 (1 − lr·wd)，不经过梯度，也不经过 m 和 v。",
            "With a zero gradient only the decay is left: p is multiplied by (1 − lr·wd), not "
            "through the gradient, nor through m and v.",
        ),
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
    # only that each ndarray was written: the values are TEST 8-10's (a wrong formula is
    # blamed there), and an ndarray's values against a Tensor's are TEST 12's
    call = t.call("adam_step", p, g, m, v, 1, 0.01)
    for i, what, start_value in ((2, "m", 0.0), (3, "v", 0.0), (0, "param", 1.0)):
        after, _ = as_array(call.args[i], (4,))
        written = after is not None and bool(np.any(after != start_value))
        t.check(
            (f"ndarray 的 {what} 被原地写入", f"an ndarray {what} is written in place"),
            written,
            (
                f"调用之后这个 ndarray 的 {what} 还是 {start_value:g}",
                f"after the call this ndarray {what} is still {start_value:g}",
            ),
            hint=(
                f"新值没有写进传入的 ndarray {what} 本身：as_tensor 会复制 ndarray，或者代码把"
                "名字指向了新数组；要写进调用者给的那个数组。",
                f"The new values never reached the ndarray {what} that was passed in: "
                "as_tensor copies an ndarray, or the code rebinds the name to a new array; "
                "write into the caller's array itself.",
            ),
        )
    bad = _adam_args(np.ones(4), np.ones(3), np.zeros(4), np.zeros(4))
    raised = t.raises(
        ("grad 的形状与 param 不同 → ValueError", "grad shaped unlike param → ValueError"),
        ValueError,
        "adam_step",
        *bad,
        1,
        0.01,
        hint=(
            "计算之前先比较 grad、m、v 与 param 的形状，不一致就 raise ValueError（assert "
            "抛的是 AssertionError）。",
            "Before computing, compare the shapes of grad, m and v with param's and raise "
            "ValueError on a mismatch (assert raises AssertionError).",
        ),
    )
    if raised.args:
        t.unchanged(
            ("出错时 param 保持原样", "on error, param is left as it was"),
            np.ones(4, F32),
            raised.args[0],
            returns_new=False,
            hint=(
                "出错时 param 要保持原样：所有检查都放在第一次写入 param 之前。",
                "On an error param stays as it was: every check comes before the first write "
                "into param.",
            ),
        )
    t.raises(
        ("t = 0 → ValueError（步数从 1 开始）", "t = 0 → ValueError (steps count from 1)"),
        ValueError,
        "adam_step",
        *_adam_args(np.ones(2), np.ones(2), np.zeros(2), np.zeros(2)),
        0,
        0.01,
        hint=(
            "步数 t 从 1 开始：t < 1 时 raise ValueError（t = 0 会让 1 − β₁ᵗ 等于 0）。",
            "The step t counts from 1: raise ValueError for t < 1 (t = 0 makes 1 − β₁ᵗ zero).",
        ),
    )


# -- every function: arrays and views --------------------------------------------------------
def _own(t: TestContext, core: Any, fn: str, *args: Any) -> CallOutcome | None:
    """`fn(*args)` on plain Tensors: the student's own result, which the same call on
    ndarrays and views must reproduce. None when it raised or called a forbidden function:
    that is `core`'s business (its test fails for it), not the input kind's."""
    out = t.attempt(fn, *args)
    if out.kind in (Outcome.EXCEPTION, Outcome.FORBIDDEN):
        return None
    t.unless_raised(fn, out)  # a TODO, timeout or crash ends this test as any call would
    return out


def _usable(value: Any, shape: tuple[int, ...] | None) -> Any:
    """A finite number (shape None) or finite array of `shape`, or None."""
    if shape is None:
        x, _ = as_number(value)
        return x if x is not None and np.isfinite(x) else None
    arr, _ = as_array(value, shape)
    return arr if arr is not None and bool(np.isfinite(arr).all()) else None


_VIEW_READ = (
    "视图里的值和连续 Tensor 的一样，只是按列主序、隔格、带 offset 存放：用 .numpy() 读，它"
    "按 strides 取值；.data 是原始存储，不能当作行主序来读。",
    "A view holds the same values as the contiguous Tensor, stored column-major, gapped and "
    "after an offset: read it through .numpy(), which follows the strides; .data is the raw "
    "storage and is not row-major.",
)
_ARRAY_READ = (
    "同样的值以 ndarray 传进来时结果要和传 Tensor 时一样：ndarray 没有 .numpy()，用 "
    "as_tensor 把两种输入都接住。",
    "The same values passed as an ndarray must give what a Tensor gives: an ndarray has no "
    ".numpy(), so take both kinds of input through as_tensor.",
)


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
    metamorphic=True,
)
def arrays_and_views(t: TestContext) -> None:
    # Metamorphic: each call on an ndarray or a view must equal YOUR OWN result of the same
    # call on contiguous Tensors, so a wrong formula fails its own test only. Where that
    # result is unusable (raised, wrong shape, not finite), this test waits for that test.
    # Tolerances: the same computation on the same float32 values; only the order of the
    # roundings may differ (a few ulps of values of order 1, or 1e-5 for v ~ 1e-4).
    rng = t.rng(777)
    z = (rng.standard_normal((3, 5)) * 2).astype(F32)
    y = [4, 0, 2]
    waits: list[Any] = []  # the tests whose result this one needs first
    ok = True

    own = _own(t, loss_values, "cross_entropy_loss", tensor_from(z), y)
    loss = _usable(own.value, None) if own else None
    if loss is None:
        waits.append(loss_values)
    else:
        name = ("cross_entropy_loss 接受 ndarray", "cross_entropy_loss accepts ndarrays")
        if call := t.returns(name, "cross_entropy_loss", z, np.array(y)):
            ok &= t.close(name, call.value, loss, atol=1e-5, hint=_ARRAY_READ)
        else:
            ok = False
        ok &= t.views(
            ("cross_entropy_loss：logits 是非连续视图", "cross_entropy_loss: logits as a view"),
            "cross_entropy_loss",
            tensor_from(z),
            y,
            expected=loss,
            atol=1e-5,
            hint=_VIEW_READ,
        )

    own = _own(t, grad_values, "softmax_ce_grad", tensor_from(z), y)
    grad = _usable(own.value, z.shape) if own else None
    if grad is None:
        waits.append(grad_values)
    else:
        name = ("softmax_ce_grad 接受 ndarray", "softmax_ce_grad accepts ndarrays")
        if call := t.returns(name, "softmax_ce_grad", z, np.array(y)):
            ok &= t.allclose(name, call.value, grad, atol=1e-6, hint=_ARRAY_READ)
        else:
            ok = False
        ok &= t.views(
            ("softmax_ce_grad：logits 是非连续视图", "softmax_ce_grad: logits as a view"),
            "softmax_ce_grad",
            tensor_from(z),
            y,
            expected=grad,
            atol=1e-6,
            hint=_VIEW_READ,
        )

    w, g = rng.standard_normal((2, 3)).astype(F32), rng.standard_normal((2, 3)).astype(F32)
    args = (*_adam_args(w, g, np.zeros((2, 3)), np.zeros((2, 3))), 1, 0.01, 0.9, 0.999, 1e-8, 0.1)
    own = _own(t, adam_first, "adam_step", *args)
    after = [_usable(own.args[i], w.shape) if own else None for i in (0, 2, 3)]
    if any(a is None for a in after):
        waits.append(adam_first)
    else:
        cases = zip((0, 2, 3), ("param", "m", "v"), after, (1e-6, 1e-7, 1e-8), strict=True)
        for i, what, want, tol in cases:
            ok &= t.views(
                (
                    f"adam_step：param、grad、m、v 都是视图时，{what} 的原地更新与 Tensor 时相同",
                    f"adam_step: with views for param, grad, m and v, {what} is updated as for "
                    "Tensors",
                ),
                "adam_step",
                *args,
                expected=want,
                atol=tol,
                rtol=1e-5,
                inplace=i,
                hint=(
                    f"{what} 是视图时，新值要写进视图自己的格子，和传连续 Tensor 时一样；存储里"
                    "视图之外的格子不能动：通过 .numpy() 原地写，不要写进副本。",
                    f"With {what} a view, the new values go into the view's own cells, as they "
                    "do for a contiguous Tensor, and the storage outside the view stays "
                    "untouched: write in place through .numpy(), not into a copy.",
                ),
            )
    if waits and ok:
        t.skip_for(waits[0])

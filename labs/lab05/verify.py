"""Lab05 checks: LayerNorm, the in-place residual add, and the Pre-LN Transformer block.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process, and every value is compared here, in the grader. Tolerances are written at each
check with the reason. Random inputs use fixed seeds; a failure prints the seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from framework import create_causal_mask, tensor_from
from framework.transformer import TransformerBlock
from grader.compare import to_array
from grader.dsl import Lab, Name, TestContext
from grader.sandbox.outcome import Outcome

lab = Lab("lab05", "Transformer Block", "Transformer block")
lab.forbid(
    "layernorm",
    "framework.layernorm:LayerNorm.forward",
    "framework.layernorm:layernorm_forward",
    why=(
        "这一课就是亲手写出均值、总体方差、eps、gamma 和 beta",
        "this lab is about writing the mean, the population variance, eps, gamma and beta",
    ),
)
lab.forbid(
    "block_forward",
    "framework.transformer:TransformerBlock.forward",
    "framework.transformer:block_forward",
    why=(
        "这一课就是亲手用 LayerNorm、attention、FFN 和两条残差接出 Pre-LN 块",
        "this lab is about wiring the Pre-LN block from LayerNorm, attention, FFN, residuals",
    ),
)

F32 = np.float32
BLOCK = "framework.transformer:TransformerBlock"
H, N_HEAD, FFN, S = 16, 4, 64, 6  # a small block: 4 heads of hd = 4, FFN 4·H
# LayerNorm outputs of order 1-3 in float32: correct code (two-pass, np.var, E[x²] - E[x]²)
# stays within a tenth of atol = rtol = 1e-5 here; eps misplaced (≈ 4e-6 at var 4) stays
# inside too, and is the business of [TEST 2].
LN_TOL = 1e-5
# A float32 block with outputs up to ~9: correct float32 or float64 code differs from the
# framework by < 2e-6 (summation order); a LayerNorm with eps outside the root, by 5e-5.
BLOCK_ATOL = 1e-5


def ref_layernorm(x: Any, gamma: Any, beta: Any, eps: float = 1e-5) -> np.ndarray:
    """The formula in float64: population variance over the last dimension."""
    v = np.asarray(x, dtype=np.float64)
    mean = v.mean(axis=-1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)
    g, b = np.asarray(gamma, np.float64), np.asarray(beta, np.float64)
    out: np.ndarray = (v - mean) / np.sqrt(var + eps) * g + b
    return out


def inplace_float64(
    t: TestContext, fn: str, arg: str, name: tuple[str, str], a: np.ndarray, b: Any
) -> None:
    """`fn(a, b)` with `a` a float64 ndarray must leave `a + b` in the caller's `a` itself.

    `as_tensor` copies a float64 ndarray into new float32 storage, so a function that writes
    into `as_tensor(a)` passes every float32 check and changes nothing here.
    """
    call = t.returns(name, fn, a.copy(), b)
    after = t.array(name, call.args[0], a.shape) if call is not None else None
    if after is None:
        return
    if np.array_equal(after, a):
        t.check(
            name,
            False,
            (
                "传进来的数组没有变：写进的是一份副本（as_tensor 会把 float64 的 ndarray 复制成 "
                f"float32）；要写进调用者给的 {arg} 本身",
                "the array you were given did not change: a copy was written (as_tensor copies "
                f"a float64 ndarray into float32); write through the caller's {arg} itself",
            ),
            hint=(
                f"{fn} 写进了 {arg} 的一份转换后的副本：{arg} 是 float64 的 ndarray 时，"
                "as_tensor（以及任何转成 float32 的转换）都会另开存储，调用者的数组不会变。",
                f"{fn} wrote into a converted copy of {arg}: for a float64 ndarray {arg}, "
                "as_tensor (like any conversion to float32) makes new storage, and the caller's "
                "array never changes.",
            ),
        )
        return
    # float64 plus float32 values; a float32 sum written back is within one float32 ulp
    t.allclose(
        name,
        after,
        a + np.asarray(b, np.float64),
        atol=0.0,
        rtol=1e-7,
        hint=(
            f"调用者的 float64 数组 {arg} 确实被改了，但改成的不是 {arg} + b："
            "和上面 Tensor 的那几项对照，看写进去的是哪个值。",
            f"The caller's float64 array {arg} did change, but not to {arg} + b: compare with "
            "the Tensor checks above to see which value was written.",
        ),
    )


def ln_inputs(t: TestContext, seed: int, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """x (mean 5, std 2, so that both the mean and the scale matter), gamma, beta."""
    rng = t.rng(seed)
    x = rng.normal(5.0, 2.0, size=shape).astype(F32)
    gamma = rng.normal(1.0, 0.5, size=shape[-1]).astype(F32)
    beta = rng.normal(0.0, 0.5, size=shape[-1]).astype(F32)
    return x, gamma, beta


def reference_block(t: TestContext, seed: int) -> TransformerBlock:
    """A block whose every parameter is random: LN1 ≠ LN2, non-zero FFN biases.

    With the initial gamma = 1, beta = 0 and zero biases, swapping the two LayerNorms or
    dropping a bias would change nothing; random values make every part visible.
    """
    rng = t.rng(seed)
    block = TransformerBlock(H, N_HEAD, FFN)
    for name, p in block.parameters():
        base = 1.0 if name.endswith("gamma") else 0.0
        p.numpy()[...] = base + rng.normal(0.0, 0.3, size=p.shape)
    return block


def sandbox_block(t: TestContext, ref: TransformerBlock) -> Any:
    """The same block, built in the sandbox (your code receives this one)."""
    handle = t.build(BLOCK, H, N_HEAD, FFN)
    t.method(handle, "load_state", ref.state_dict())
    return handle


# -- layernorm ----------------------------------------------------------------------------
@lab.test(
    "layernorm：与公式一致（gamma、beta 非平凡）",
    "layernorm: matches the formula (non-trivial gamma, beta)",
    hint=[
        (
            "对最后一维的每一行：减去均值，除以 √(方差 + eps)，再乘 gamma、加 beta。",
            "For each row of the last dim: subtract the mean, divide by √(var + eps), times "
            "gamma, plus beta.",
        ),
        (
            "用 axis=-1 和 keepdims=True 求均值与方差，这样 1 维、2 维、3 维输入都对。",
            "Take the mean and variance with axis=-1 and keepdims=True, so 1-D, 2-D and 3-D "
            "all work.",
        ),
        (
            "在新数组上计算（v - mean，而不是 v -= mean），别改动 x、gamma、beta。",
            "Compute into a new array (v - mean, not v -= mean), leaving x, gamma and beta alone.",
        ),
    ],
)
def layernorm_formula(t: TestContext) -> None:
    x, g, b = ln_inputs(t, 505, (4, 16))
    call = t.call("layernorm", tensor_from(x), tensor_from(g), tensor_from(b))
    t.allclose(
        ("[4, 16] 随机输入（均值 5、标准差 2）", "random [4, 16] input (mean 5, std 2)"),
        call.value,
        ref_layernorm(x, g, b),
        atol=LN_TOL,
        rtol=LN_TOL,
        hint=[
            (
                "这个输入的均值约 5、标准差约 2，gamma 和 beta 也都不是 1 和 0，所以公式的每一步都"
                "会影响结果：取出一行，和公式逐步对照。",
                "This input has mean ~5 and std ~2, and gamma and beta are not 1 and 0, so "
                "every step of the formula shows: take one row and follow the formula step by "
                "step.",
            ),
            (
                "看错误的样子：整行差一个比例，问题在分母（方差、eps）；每一列差得各不相同，"
                "问题在 gamma、beta 用在哪里。",
                "Read the error's pattern: a whole row off by one factor points at the "
                "denominator (variance, eps); each column off differently points at where gamma "
                "and beta are applied.",
            ),
        ],
    )
    x1, g1, b1 = ln_inputs(t, 506, (8,))
    out = t.call("layernorm", tensor_from(x1), tensor_from(g1), tensor_from(b1)).value
    t.allclose(
        ("1 维输入 [8]", "1-D input [8]"),
        out,
        ref_layernorm(x1, g1, b1),
        atol=LN_TOL,
        rtol=LN_TOL,
        hint=(
            "1 维输入只有一行，它唯一的那一维就是最后一维：均值和方差都要沿最后一维取，"
            "不要假设输入是 2 维的。",
            "A 1-D input is one row whose only axis is the last one: take the mean and the "
            "variance along the last axis, without assuming a 2-D input.",
        ),
    )
    x3, g3, b3 = ln_inputs(t, 507, (2, 3, 8))
    out = t.call("layernorm", tensor_from(x3), tensor_from(g3), tensor_from(b3)).value
    t.allclose(
        (
            "3 维输入 [2, 3, 8]：每一行沿最后一维归一化",
            "3-D input [2, 3, 8]: each row over the last dim",
        ),
        out,
        ref_layernorm(x3, g3, b3),
        atol=LN_TOL,
        rtol=LN_TOL,
        hint=(
            "3 维输入 [2, 3, 8] 有 6 行，每行 8 个数各自归一化：只在 2 维时才是最后一维的那个轴，"
            "到这里就不是了。",
            "A 3-D [2, 3, 8] input has 6 rows of 8 numbers, each normalised on its own: an axis "
            "that is the last one only for 2-D input is not the last one here.",
        ),
    )
    after = [to_array(a) for a in call.args[:3]]
    t.check(
        ("x、gamma、beta 都没有被修改", "x, gamma and beta are left unchanged"),
        all(a is not None and np.array_equal(a, w) for a, w in zip(after, (x, g, b), strict=True)),
        (
            "layernorm 改动了它的输入：请在新数组上计算（v - mean 而不是 v -= mean）",
            "layernorm modified an input: compute into a new array (v - mean, not v -= mean)",
        ),
        hint=(
            "x.numpy() 是调用者那块内存的视图：对它做任何原地运算（-=、/=、out=），调用者的 x "
            "就跟着变了。找出写进输入的那一步。",
            "x.numpy() is a view of the caller's memory: any in-place operation on it (-=, /=, "
            "out=) changes the caller's x too. Find the step that writes into an input.",
        ),
    )


@lab.test(
    "layernorm：总体方差，eps 在根号里",
    "layernorm: population variance, eps inside the root",
    hint=[
        (
            "方差是总体方差：除以 H，不是 H - 1（np.var 默认就是这样）。",
            "The variance is the population one: divide by H, not H - 1 (np.var's default).",
        ),
        (
            "eps 加在根号里面：√(var + eps)，而不是 √var + eps，这样方差为 0 时也不会除以 0。",
            "eps goes inside the root: √(var + eps), not √var + eps, so a zero variance never "
            "divides by 0.",
        ),
        (
            "用传进来的 eps 参数，不要写死 1e-5。",
            "Use the eps argument you are given, not a hard-coded 1e-5.",
        ),
    ],
)
def layernorm_eps(t: TestContext) -> None:
    one, zero = tensor_from(np.ones(2, F32)), tensor_from(np.zeros(2, F32))
    out = t.call("layernorm", tensor_from(np.array([1.0, 3.0], F32)), one, zero).value
    # mean 2, population variance 1 (the unbiased estimate would be 2): ±1/√(1 + 1e-5)
    t.allclose(
        (
            "[1, 3] → ±1/√(1 + eps) ≈ ±0.999995（均值 2，方差 1）",
            "[1, 3] → ±1/√(1 + eps) ≈ ±0.999995 (mean 2, variance 1)",
        ),
        out,
        np.array([-1.0, 1.0]) / np.sqrt(1.0 + 1e-5),
        atol=1e-6,  # exact arithmetic on small integers, then one division
        hint=[
            (
                "期望值是 ±1/√(1 + 1e-5) = ±0.999995：均值 2，总体方差 ((-1)² + 1²) / 2 = 1。"
                "把你的分母按这个输入一项一项算出来。",
                "The expected values are ±1/√(1 + 1e-5) = ±0.999995: mean 2, population variance "
                "((-1)² + 1²) / 2 = 1. Work out your denominator for this input term by term.",
            ),
            (
                "对照误差的大小：差到 0.3 左右，是方差的分母不对；只差在小数点后第六位，是 eps "
                "进入分母的方式和 √(var + eps) 不同。",
                "Compare the size of the error: off by about 0.3, the variance's divisor differs; "
                "off only in the sixth decimal, eps enters the denominator otherwise than "
                "√(var + eps).",
            ),
        ],
    )
    g, b = np.array([2.0, -1.0, 0.5, 3.0], F32), np.array([0.25, -0.5, 1.0, 2.0], F32)
    out = t.call("layernorm", tensor_from(np.full(4, 3.0, F32)), tensor_from(g), tensor_from(b))
    t.allclose(
        (
            "整行相同（方差 0）→ 输出就是 beta，没有 NaN",
            "a constant row (variance 0) → exactly beta, no NaN",
        ),
        out.value,
        b,
        atol=1e-6,  # 0 / √eps = 0, then + beta
        hint=(
            "整行相同时 x - mean 处处为 0，归一化后是 0，输出就只剩 beta。NaN 或 inf 说明分母"
            "变成了 0；不是 NaN 却不等于 beta，就看 gamma 和 beta 是在哪一步、怎样用上的。",
            "For a constant row x - mean is 0 everywhere, so the output is beta alone. NaN or "
            "inf means the denominator reached 0; a finite value other than beta means: look at "
            "where and how gamma and beta are applied.",
        ),
    )
    tiny = np.array([1e-3, -1e-3, 1e-3, -1e-3], F32)  # variance 1e-6, smaller than eps = 1e-5
    ones4, zeros4 = tensor_from(np.ones(4, F32)), tensor_from(np.zeros(4, F32))
    out = t.call("layernorm", tensor_from(tiny), ones4, zeros4).value
    t.allclose(
        (
            "方差 1e-6 < eps：±1e-3 / √(1e-6 + 1e-5) = ±0.3015",
            "variance 1e-6 < eps: ±1e-3 / √(1e-6 + 1e-5) = ±0.3015",
        ),
        out,
        ref_layernorm(tiny, np.ones(4), np.zeros(4), 1e-5),
        atol=1e-5,  # float32 on values of order 1e-3: relative error ~1e-6
        hint=(
            "这里方差（1e-6）比 eps（1e-5）还小，分母主要由 eps 决定：√(1e-6 + 1e-5) ≈ 0.0033。"
            "把你的分母对这个输入算出来，看它和 0.0033 差在哪一项。",
            "Here the variance (1e-6) is below eps (1e-5), so eps dominates the denominator: "
            "√(1e-6 + 1e-5) ≈ 0.0033. Work out your denominator for this input and see which "
            "term makes it differ from 0.0033.",
        ),
    )
    x = np.array([0.0, 2.0, 4.0, 6.0], F32)  # variance 5
    out = t.call("layernorm", tensor_from(x), ones4, zeros4, 4.0).value
    t.allclose(
        (
            "用传进来的 eps（eps = 4：(x - 3) / 3）",
            "uses the eps it is given (eps = 4: (x - 3) / 3)",
        ),
        out,
        (x - 3.0) / 3.0,
        atol=1e-6,  # √(5 + 4) = 3 exactly
        hint=(
            "这次调用传的是 eps = 4：方差 5，分母应是 √(5 + 4) = 3。结果不是 (x - 3) / 3，就看你的"
            "代码用的是不是这个参数，以及它进入分母的方式。",
            "This call passes eps = 4: variance 5, so the denominator is √(5 + 4) = 3. If the "
            "result is not (x - 3) / 3, check that your code uses this argument, and how it "
            "enters the denominator.",
        ),
    )


@lab.test(
    "layernorm：gamma / beta 的形状不对 → ValueError",
    "layernorm: gamma / beta of the wrong shape → ValueError",
    hint=[
        (
            "gamma 和 beta 必须是 1 维、长度为 H = x 的最后一维，numpy 的广播会掩盖错误。",
            "gamma and beta must be 1-D of length H = x's last dim; numpy broadcasting would "
            "hide a mistake.",
        ),
        (
            "计算前比较 gamma.shape 与 beta.shape 和 (H,)，不一致就 raise ValueError。",
            "Compare gamma.shape and beta.shape with (H,) before computing; raise ValueError "
            "if not.",
        ),
    ],
)
def layernorm_shapes(t: TestContext) -> None:
    x, g, b = ln_inputs(t, 508, (3, 8))
    t.raises(
        (
            "gamma 形状 [1]（会被广播）→ ValueError",
            "gamma of shape [1] (it would broadcast) → ValueError",
        ),
        ValueError,
        "layernorm",
        tensor_from(x),
        tensor_from(np.ones(1, F32)),
        tensor_from(b),
        hint=(
            "形状 [1] 的 gamma 会被 numpy 悄悄广播到全部 8 列，算式本身不会报错；只有你自己把"
            "它的形状和 (H,) 比较，才能拒绝它。",
            "numpy quietly broadcasts a gamma of shape [1] over all 8 columns, so the arithmetic "
            "raises nothing; only your own comparison of its shape with (H,) can refuse it.",
        ),
    )
    t.raises(
        (
            "beta 形状 [3, 8]（和 x 一样，也会被广播）→ ValueError",
            "beta of shape [3, 8] (like x; it would broadcast too) → ValueError",
        ),
        ValueError,
        "layernorm",
        tensor_from(x),
        tensor_from(g),
        tensor_from(x),
        hint=(
            "和 x 一样形状的 beta 也能广播，照样算得出数：规则是 beta 的形状恰好为 (H,)，"
            "不是“能广播就行”。gamma 和 beta 两个都要查。",
            "A beta shaped like x broadcasts too and yields numbers: the rule is a shape of "
            "exactly (H,), not 'anything that broadcasts'. Check gamma and beta both.",
        ),
    )


# -- residual_add -------------------------------------------------------------------------
@lab.test(
    "residual_add：原地 a += b",
    "residual_add: a += b in place",
    hint=[
        (
            "residual_add 原地修改 a 并返回 None，不要返回新的张量。",
            "residual_add changes a in place and returns None; do not return a new tensor.",
        ),
        (
            "写进 a 本身的存储（例如对 a.numpy() 用 +=），只读 b，不改它。",
            "Write into a's own storage (for instance += on a.numpy()); only read b.",
        ),
    ],
)
def residual_inplace(t: TestContext) -> None:
    rng = t.rng(515)
    a = rng.standard_normal((3, 5)).astype(F32)
    b = rng.standard_normal((3, 5)).astype(F32)
    call = t.call("residual_add", tensor_from(a), tensor_from(b))
    t.check(
        ("返回 None（原地修改）", "returns None (works in place)"),
        call.value is None,
        (
            "residual_add 应该原地修改 a 并返回 None",
            "residual_add must change a in place and return None",
        ),
        hint=(
            "residual_add 的结果就是 a 被改动这件事本身，函数不返回任何东西（None）；返回值"
            "哪怕就是 a，也不在约定之内。",
            "residual_add's result is the change to a itself; the function returns nothing "
            "(None). A returned value, even a itself, is not part of the contract.",
        ),
    )
    t.allclose(
        ("调用之后 a 等于 a + b", "after the call, a equals a + b"),
        call.args[0],
        a + b,
        atol=0.0,
        rtol=1e-7,  # one float32 addition, compared with the float32 sum itself
        hint=[
            (
                "调用之后，调用者手里的 a 必须存着 a + b。a 没变，说明和被写进了别的对象"
                "（新数组、副本，或只是重新绑定的局部变量）。",
                "After the call the caller's a must hold a + b. An unchanged a means the sum "
                "went into another object (a new array, a copy, or a rebound local name).",
            ),
            (
                "写入要落在 a 自己的存储里：找到你代码里真正被写的那个数组，看它是不是 a 的视图。",
                "The write has to land in a's own storage: find the array your code actually "
                "writes and check that it is a view of a.",
            ),
        ],
    )
    t.unchanged(
        ("b 没有被修改", "b is left unchanged"),
        b,
        call.args[1],
        hint=(
            "b 只读不写：调用之后它必须还是原来的值。看看你的原地加法写进的是两个参数中的哪一个。",
            "b is only read: after the call it must hold its original values. Look at which of "
            "the two arguments your in-place addition writes into.",
        ),
    )
    # a as a float64 ndarray (an x computed in float64): as_tensor copies it into float32,
    # so writing into as_tensor(a) leaves the caller's array as it was.
    inplace_float64(
        t,
        "residual_add",
        "a",
        (
            "a 是 float64 的 ndarray：被改动的正是这个数组",
            "a is a float64 ndarray: that very array changes",
        ),
        a.astype(np.float64),
        b,
    )


@lab.test(
    "residual_add：形状必须完全相同",
    "residual_add: shapes must be exactly equal",
    hint=[
        (
            "形状必须完全相同：元素个数相同或可以广播都不够。",
            "The shapes must be exactly equal: the same size or a broadcastable shape is not "
            "enough.",
        ),
        (
            "先比较 a.shape 与 b.shape，不一致就 raise ValueError，且在写入之前。",
            "Compare a.shape with b.shape and raise ValueError before writing anything.",
        ),
    ],
)
def residual_shapes(t: TestContext) -> None:
    a = np.arange(6, dtype=F32).reshape(2, 3)
    t.raises(
        (
            "a [2, 3]、b [3, 2]（元素个数相同）→ ValueError",
            "a [2, 3], b [3, 2] (same number of elements) → ValueError",
        ),
        ValueError,
        "residual_add",
        tensor_from(a),
        tensor_from(np.ones((3, 2), F32)),
        hint=(
            "两者都是 6 个元素，形状却不同（[2, 3] 与 [3, 2]）：必须 ValueError。元素个数相同不等于"
            "形状相同。",
            "Both hold 6 elements but the shapes differ ([2, 3] and [3, 2]): this must raise "
            "ValueError. The same number of elements is not the same shape.",
        ),
    )
    raised = t.raises(
        (
            "a [2, 3]、b [3]（numpy 会广播）→ ValueError",
            "a [2, 3], b [3] (numpy would broadcast) → ValueError",
        ),
        ValueError,
        "residual_add",
        tensor_from(a),
        tensor_from(np.ones(3, F32)),
        hint=(
            "[3] 可以被 numpy 广播到 [2, 3]，+= 不会报任何错：只有你自己比较两个形状，"
            "才拒绝得了它。",
            "numpy broadcasts a [3] over a [2, 3] and += raises nothing: only your own "
            "comparison of the two shapes can refuse it.",
        ),
    )
    t.unchanged(
        ("出错时 a 保持原样", "on error, a is left as it was"),
        a,
        raised.args[0] if raised.args else None,
        returns_new=False,
        hint=(
            "形状不对的调用，a 出来时必须和进去时一模一样：拒绝（raise）要发生在任何写入之前。",
            "After a call with mismatched shapes, a must come out exactly as it went in: the "
            "refusal (raise) has to happen before anything is written.",
        ),
    )


# -- block_forward ------------------------------------------------------------------------
@lab.test(
    "block_forward：与框架的 TransformerBlock 一致",
    "block_forward: equals the framework's TransformerBlock",
    hint=[
        (
            "Pre-LN：h = x + attn(ln1(x))，out = h + ffn(ln2(h))；LayerNorm 在子层之前。",
            "Pre-LN: h = x + attn(ln1(x)), out = h + ffn(ln2(h)); the LayerNorm comes before "
            "each sub-layer.",
        ),
        (
            "ln1 配 attention，ln2 配 FFN，第二个 LayerNorm 作用在 h 上而不是 x 上。",
            "ln1 goes with attention, ln2 with the FFN, and the second LayerNorm normalises "
            "h, not x.",
        ),
        (
            "第一条残差加到 x 的副本上（tensor_from），mask 原样传给 block.attn.forward。",
            "Add the first residual to a copy of x (tensor_from), and pass mask on to "
            "block.attn.forward as is.",
        ),
    ],
)
def block_reference(t: TestContext) -> None:
    ref = reference_block(t, 525)
    block = sandbox_block(t, ref)
    x = t.rng(526).standard_normal((S, H)).astype(F32)
    mask = create_causal_mask(S)
    call = t.call("block_forward", block, tensor_from(x), mask)
    t.allclose(
        ("随机权重、[6, 16] 输入、因果掩码", "random weights, [6, 16] input, causal mask"),
        call.value,
        ref.forward(x, mask).numpy(),
        atol=BLOCK_ATOL,
        hint=[
            (
                "同样的权重、同样的输入，你的块和框架的块结果不同。先看误差的量级：1e-5 到 1e-4 "
                "的小差别来自 layernorm 内部（TEST 1、2 用更紧的容差查它），大的差别来自接线。",
                "Same weights, same input, different output. Look at the error's size first: "
                "1e-5 to 1e-4 comes from inside layernorm (TEST 1 and 2 check it more tightly), "
                "a large error from the wiring.",
            ),
            (
                "对照接线：每个子层之前一个 LayerNorm，之后一条残差；ln1 配 attention、ln2 配 "
                "FFN，第二个 LayerNorm 作用在第一条残差之后的 h 上。",
                "Check the wiring: a LayerNorm before each sub-layer, a residual after it; ln1 "
                "with attention, ln2 with the FFN, the second LayerNorm on h after the first "
                "residual.",
            ),
        ],
    )
    t.unchanged(
        ("x 没有被修改", "x is left unchanged"),
        x,
        call.args[1],
        hint=(
            "block_forward 写进了调用者的 x：途中有一步（残差或别的原地运算）落在了 x 自己的"
            "存储里。块要在副本上累加。",
            "block_forward wrote into the caller's x: some step on the way (a residual, or "
            "another in-place operation) lands in x's own storage. The block must accumulate "
            "into a copy.",
        ),
    )
    out = t.call("block_forward", block, tensor_from(x), None).value
    t.allclose(
        ("mask=None：不加掩码（每个位置看到全部）", "mask=None: no mask (every position sees all)"),
        out,
        ref.forward(x, None).numpy(),
        atol=BLOCK_ATOL,
        hint=(
            "mask=None 表示不加掩码：每个位置都看得到全部 6 个位置。若只有这一项失败，而上面的"
            "因果掩码那项通过，说明调用者没要求时你的块仍然加了掩码；两项都失败，先修上面那项。",
            "mask=None means no mask: every position sees all 6. If only this check fails while "
            "the causal one above passes, your block masks although the caller did not ask; if "
            "both fail, fix the one above first.",
        ),
    )


@lab.test(
    "block_forward：改动未来的 token，前面的输出不变",
    "block_forward: changing a future token leaves earlier outputs alone",
    hint=[
        (
            "位置 i 只应看到 0..i：因果掩码必须真的传到 attention 里。",
            "Position i must see only 0..i: the causal mask has to reach the attention.",
        ),
        (
            "把 mask 原样交给 block.attn.forward，不要丢掉它，也不要换成 None。",
            "Hand mask to block.attn.forward unchanged; do not drop it or replace it with None.",
        ),
    ],
)
def block_causal(t: TestContext) -> None:
    ref = reference_block(t, 535)
    block = sandbox_block(t, ref)
    rng = t.rng(536)
    x = rng.standard_normal((S, H)).astype(F32)
    x2 = x.copy()
    x2[S - 1] = rng.standard_normal(H).astype(F32)  # only the last token differs
    mask = create_causal_mask(S)
    name = ("改了第 5 个 token：第 0–4 行输出不变", "token 5 changed: output rows 0–4 unchanged")
    before = t.array(name, t.call("block_forward", block, tensor_from(x), mask).value, (S, H))
    after = t.array(name, t.call("block_forward", block, tensor_from(x2), mask).value, (S, H))
    if before is None or after is None:
        return
    t.allclose(
        name,
        after[: S - 1],
        before[: S - 1],
        atol=1e-6,  # the same rows through the same weights: at most a summation-order ulp
    )


# -- both kinds of argument ---------------------------------------------------------------
# Tests 8 and 9 are metamorphic: the same call on ndarrays, or on non-contiguous views, must
# equal your *own* result of that call on plain contiguous Tensors. A bug in the formula or
# the wiring is then the business of tests 1-7 alone; these two fail only for code that
# treats an input kind differently. When your own result is not usable (it raised, has the
# wrong shape or is not finite), they SKIP with "fix TEST n first".
def own_result(
    t: TestContext, core: str, fn: str, *args: Any, shape: tuple[int, ...], written: int | None
) -> np.ndarray:
    """`fn(*args)` on plain Tensors: its return value, or (`written=i`) argument i after it.

    Ends the test as TODO when `fn` is still the stub, and as SKIP (fix test `core` first)
    when the result is not a finite array of `shape`.
    """
    out = t.attempt(fn, *args)
    if out.kind is Outcome.TODO:
        t.unless_raised(fn, out)  # ends the test as TODO, like any call of the stub
    if not out.ok:
        t.skip_for(core)
    value = out.value if written is None else (out.args[written] if out.args else None)
    arr = to_array(value)
    if arr is None or arr.shape != shape or not np.isfinite(arr).all():
        t.skip_for(core)
    return arr


@lab.test(
    "numpy 数组和 Tensor 一样能用",
    "numpy arrays work as well as Tensors",
    metamorphic=True,
    hint=[
        (
            "参数可能是 numpy 数组（也可能是 float64）：先用 as_tensor 转换。",
            "Arguments may be numpy arrays (even float64): convert them with as_tensor first.",
        ),
        (
            "residual_add 收到 ndarray 时直接原地改它；as_tensor 会复制数组，写进副本就丢了。",
            "residual_add changes an ndarray a itself; as_tensor copies an array, so a write "
            "into it is lost.",
        ),
    ],
)
def accepts_arrays(t: TestContext) -> None:
    x, g, b = ln_inputs(t, 545, (3, 8))
    own = own_result(
        t,
        "layernorm_formula",
        "layernorm",
        tensor_from(x),
        tensor_from(g),
        tensor_from(b),
        shape=x.shape,
        written=None,
    )
    name: Name = ("layernorm 接受 ndarray（float64）", "layernorm accepts ndarrays (float64)")
    if call := t.returns(name, "layernorm", x.astype(np.float64), g, b):
        # the same float32 values in float64: correct code agrees with itself within LN_TOL
        t.allclose(
            name,
            call.value,
            own,
            atol=LN_TOL,
            rtol=LN_TOL,
            hint=(
                "同样的数值，以 float64 的 ndarray 传进来，你的 layernorm 给出的结果和传 Tensor 时"
                "（TEST 1 的那种调用）不一样：不论参数是什么类型，都要用同一种方式读取它。",
                "The same values passed as float64 ndarrays give another result than your "
                "layernorm gives for Tensors (the calls of TEST 1): read every argument the "
                "same way, whatever its type.",
            ),
        )
    rng = t.rng(546)
    a = rng.standard_normal((2, 3)).astype(F32)
    b2 = rng.standard_normal((2, 3)).astype(F32)
    own = own_result(
        t,
        "residual_inplace",
        "residual_add",
        tensor_from(a),
        tensor_from(b2),
        shape=a.shape,
        written=0,
    )
    name = (
        "residual_add 原地修改 ndarray（float64 的 a）",
        "residual_add changes an ndarray in place (a float64 a)",
    )
    if call := t.returns(name, "residual_add", a.astype(np.float64), b2):
        t.allclose(
            name,
            call.args[0],
            own,
            atol=1e-6,  # a float64 sum against your float32 one: one float32 ulp at |a + b| < 8
            hint=(
                "a 是 float64 的 ndarray 时，调用者的这个数组必须和传 Tensor 时一样被改写。"
                "把它转换成别的类型（as_tensor 会把 float64 复制成 float32）再写，"
                "写进的是调用者看不见的副本。",
                "When a is a float64 ndarray, the caller's array must change as a Tensor a "
                "does. Converting it first (as_tensor copies a float64 array into float32) and "
                "writing there changes a copy the caller never sees.",
            ),
        )
    ref = reference_block(t, 547)
    block = sandbox_block(t, ref)
    xb = t.rng(548).standard_normal((S, H)).astype(F32)
    mask = create_causal_mask(S)
    own = own_result(
        t,
        "block_reference",
        "block_forward",
        block,
        tensor_from(xb),
        mask,
        shape=(S, H),
        written=None,
    )
    name = ("block_forward 接受 ndarray 的 x 和 mask", "block_forward accepts ndarray x and mask")
    if call := t.returns(name, "block_forward", block, xb.astype(np.float64), mask.numpy()):
        t.allclose(
            name,
            call.value,
            own,
            atol=BLOCK_ATOL,  # float64 or float32 arithmetic on the same values
            hint=(
                "x 和 mask 以 ndarray 传进来时，你的 block_forward 给出的结果和传 Tensor 时不同："
                "每个输入（mask 也算）都要经过同样的转换，再交给 layernorm 和 attention。",
                "With x and mask passed as ndarrays your block_forward gives another result than "
                "with Tensors: every input, mask included, needs the same conversion before it "
                "reaches layernorm and the attention.",
            ),
        )


@lab.test(
    "非连续的步长视图和连续 Tensor 一样能用",
    "non-contiguous strided views work like contiguous Tensors",
    metamorphic=True,
    hint=[
        (
            "视图的 data 不是按行排好的：用 .numpy() 读取，不要直接用 .data。",
            "A view's data is not laid out row by row: read it with .numpy(), not .data.",
        ),
        (
            "residual_add 写进视图时，要写入 a.numpy() 返回的那个视图，而不是它的副本。",
            "When residual_add writes through a view, write into the view a.numpy() returns, "
            "not a copy.",
        ),
    ],
)
def strided_views(t: TestContext) -> None:
    x, g, b = ln_inputs(t, 555, (3, 8))
    own = own_result(
        t,
        "layernorm_formula",
        "layernorm",
        tensor_from(x),
        tensor_from(g),
        tensor_from(b),
        shape=x.shape,
        written=None,
    )
    t.views(
        ("layernorm：x、gamma、beta 都是视图", "layernorm: x, gamma and beta are views"),
        "layernorm",
        x,
        g,
        b,
        expected=own,
        atol=LN_TOL,
        rtol=LN_TOL,
        hint=(
            "同样的数值放在非连续的视图里，你的 layernorm 给出的结果和连续 Tensor 时不同。"
            "视图的存储不是按行排的，元素之间的格子是 NaN：元素要按 strides 和 offset 读"
            "（.numpy() 会这样做）。",
            "The same values in non-contiguous views give another result than your layernorm "
            "gives for contiguous Tensors. A view's storage is not row by row, and the cells in "
            "between hold NaN: read elements through strides and offset (.numpy() does).",
        ),
    )
    rng = t.rng(556)
    a = rng.standard_normal((3, 5)).astype(F32)
    b2 = rng.standard_normal((3, 5)).astype(F32)
    own = own_result(
        t,
        "residual_inplace",
        "residual_add",
        tensor_from(a),
        tensor_from(b2),
        shape=a.shape,
        written=0,
    )
    t.views(
        (
            "residual_add：a 是视图，写回的正是它的格子",
            "residual_add: a is a view, and exactly its own cells are written",
        ),
        "residual_add",
        a,
        b2,
        expected=own,
        atol=0.0,
        rtol=1e-7,  # one float32 addition
        inplace=0,
        hint=(
            "a 是视图时，加完的结果必须落在视图自己的那些格子里，和连续的 a 一样；存储里其余的"
            "格子不能动。按 strides 和 offset 定位每个元素（a.numpy() 返回的视图就是这样）。",
            "When a is a view, the sum must land in the view's own cells, as for a contiguous "
            "a, and no other storage cell may change. Locate each element through strides and "
            "offset (the view a.numpy() returns does).",
        ),
    )
    ref = reference_block(t, 557)
    block = sandbox_block(t, ref)
    xb = t.rng(558).standard_normal((S, H)).astype(F32)
    mask = create_causal_mask(S)
    own = own_result(
        t,
        "block_reference",
        "block_forward",
        block,
        tensor_from(xb),
        mask,
        shape=(S, H),
        written=None,
    )
    t.views(
        ("block_forward：x 和 mask 都是视图", "block_forward: x and mask are views"),
        "block_forward",
        block,
        xb,
        mask.numpy(),
        expected=own,
        atol=BLOCK_ATOL,
        hint=(
            "x 和 mask 是非连续视图时，你的 block_forward 给出的结果和连续 Tensor 时不同：块里"
            "每一步读 x、h 和 mask 时都要按 strides 读，不要假设数据是按行排好的。",
            "With x and mask as non-contiguous views your block_forward gives another result "
            "than with contiguous Tensors: every step that reads x, h or mask must follow the "
            "strides, not assume the data is laid out row by row.",
        ),
    )

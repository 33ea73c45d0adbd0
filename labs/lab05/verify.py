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
from grader.dsl import Lab, TestContext

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
    t.allclose(name, after, a + np.asarray(b, np.float64), atol=0.0, rtol=1e-7)


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
    )
    x1, g1, b1 = ln_inputs(t, 506, (8,))
    out = t.call("layernorm", tensor_from(x1), tensor_from(g1), tensor_from(b1)).value
    t.allclose(
        ("1 维输入 [8]", "1-D input [8]"), out, ref_layernorm(x1, g1, b1), atol=LN_TOL, rtol=LN_TOL
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
    )
    after = [to_array(a) for a in call.args[:3]]
    t.check(
        ("x、gamma、beta 都没有被修改", "x, gamma and beta are left unchanged"),
        all(a is not None and np.array_equal(a, w) for a, w in zip(after, (x, g, b), strict=True)),
        (
            "layernorm 改动了它的输入：请在新数组上计算（v - mean 而不是 v -= mean）",
            "layernorm modified an input: compute into a new array (v - mean, not v -= mean)",
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
            "[1, 3] → [-1, 1]（方差除以 H = 2，不是 H - 1）",
            "[1, 3] → [-1, 1] (variance divided by H = 2, not H - 1)",
        ),
        out,
        np.array([-1.0, 1.0]) / np.sqrt(1.0 + 1e-5),
        atol=1e-6,  # exact arithmetic on small integers, then one division
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
    )
    t.allclose(
        ("调用之后 a 等于 a + b", "after the call, a equals a + b"),
        call.args[0],
        a + b,
        atol=0.0,
        rtol=1e-7,  # one float32 addition, compared with the float32 sum itself
    )
    t.unchanged(("b 没有被修改", "b is left unchanged"), b, call.args[1])
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
    )
    t.unchanged(
        ("出错时 a 保持原样", "on error, a is left as it was"),
        a,
        raised.args[0] if raised.args else None,
        returns_new=False,
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
    )
    t.unchanged(("x 没有被修改", "x is left unchanged"), x, call.args[1])
    out = t.call("block_forward", block, tensor_from(x), None).value
    t.allclose(
        ("mask=None：不加掩码（每个位置看到全部）", "mask=None: no mask (every position sees all)"),
        out,
        ref.forward(x, None).numpy(),
        atol=BLOCK_ATOL,
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
@lab.test(
    "numpy 数组和 Tensor 一样能用",
    "numpy arrays work as well as Tensors",
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
    name = ("layernorm 接受 ndarray（float64）", "layernorm accepts ndarrays (float64)")
    if call := t.returns(name, "layernorm", x.astype(np.float64), g, b):
        t.allclose(name, call.value, ref_layernorm(x, g, b), atol=LN_TOL, rtol=LN_TOL)
    a = np.arange(6, dtype=F32).reshape(2, 3)
    name = ("residual_add 原地修改 ndarray", "residual_add changes an ndarray in place")
    if call := t.returns(name, "residual_add", a.copy(), np.ones((2, 3), F32)):
        t.allclose(name, call.args[0], a + 1, atol=0.0)  # small integers: exact
    ref = reference_block(t, 546)
    block = sandbox_block(t, ref)
    x = t.rng(547).standard_normal((S, H))
    mask = create_causal_mask(S).numpy()
    name = ("block_forward 接受 ndarray 的 x 和 mask", "block_forward accepts ndarray x and mask")
    if call := t.returns(name, "block_forward", block, x, mask):
        t.allclose(name, call.value, ref.forward(x, mask).numpy(), atol=BLOCK_ATOL)


@lab.test(
    "非连续的步长视图和连续 Tensor 一样能用",
    "non-contiguous strided views work like contiguous Tensors",
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
    t.views(
        ("layernorm：x、gamma、beta 都是视图", "layernorm: x, gamma and beta are views"),
        "layernorm",
        x,
        g,
        b,
        expected=ref_layernorm(x, g, b),
        atol=LN_TOL,
        rtol=LN_TOL,
    )
    rng = t.rng(556)
    a = rng.standard_normal((3, 5)).astype(F32)
    b2 = rng.standard_normal((3, 5)).astype(F32)
    t.views(
        (
            "residual_add：a 是视图，写回的正是它的格子",
            "residual_add: a is a view, and exactly its own cells are written",
        ),
        "residual_add",
        a,
        b2,
        expected=a + b2,
        atol=0.0,
        rtol=1e-7,  # one float32 addition
        inplace=0,
    )
    ref = reference_block(t, 557)
    block = sandbox_block(t, ref)
    xb = t.rng(558).standard_normal((S, H)).astype(F32)
    mask = create_causal_mask(S).numpy()
    t.views(
        ("block_forward：x 和 mask 都是视图", "block_forward: x and mask are views"),
        "block_forward",
        block,
        xb,
        mask,
        expected=ref.forward(xb, mask).numpy(),
        atol=BLOCK_ATOL,
    )

"""Lab04 checks: attention scores, the additive causal mask, and the row softmax.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process, and every value is compared here, in the grader. Tolerances are written at each
check with the reason. Random inputs use fixed seeds; a failure prints the seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from framework import MultiHeadAttention, create_causal_mask, tensor_from
from grader.dsl import Lab, TestContext

lab = Lab("lab04", "多头自注意力", "Multi-head self-attention")
lab.forbid(
    "softmax",
    "framework.math_ops:softmax",
    "framework.math_ops:softmax_inplace",
    "framework.math_ops:_softmax_np",
    why=(
        "这一课就是亲手写出沿最后一维、减去最大值的 softmax",
        "this lab is about writing the softmax over the last dimension, max subtracted",
    ),
)
lab.forbid(
    "attention_scores",
    "framework.math_ops:matmul_transposed_b",
    why=("这一课就是亲手写出 scale · Q @ Kᵀ", "this lab is about writing scale · Q @ Kᵀ yourself"),
)

F32 = np.float32
EPS = 1e-6  # values of order 1 computed in float32: a few ulps


def ref_softmax(x: np.ndarray) -> np.ndarray:
    z = np.asarray(x, dtype=np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    out: np.ndarray = e / e.sum(axis=-1, keepdims=True)
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


@lab.test(
    "attention_scores：单位矩阵与缩放",
    "attention_scores: identity inputs and scaling",
    hint=[
        (
            "分数矩阵的第 i 行第 j 列是 Q 的第 i 行与 K 的第 j 行的点积，再乘 scale。",
            "Cell (i, j) of the scores is the dot product of row i of Q with row j of K, times "
            "scale.",
        ),
        (
            "输出形状应是 [S, T]：行数来自 Q，列数来自 K。",
            "The output shape is [S, T]: rows come from Q, columns from K.",
        ),
        (
            "用 x.numpy() 拿到按 strides 排列好的数组视图，再做矩阵乘法；别忘了乘 scale。",
            "Use x.numpy() to get an array view laid out by the strides, then multiply; do not "
            "forget scale.",
        ),
    ],
)
def scores_identity(t: TestContext) -> None:
    eye2 = np.eye(2, dtype=F32)
    out = t.call("attention_scores", tensor_from(eye2), tensor_from(eye2), 0.5).value
    t.shape(("输出形状为 [2, 2]", "output shape is [2, 2]"), out, (2, 2))
    t.allclose(("I @ Iᵀ · 0.5 = 0.5·I", "I @ Iᵀ · 0.5 = 0.5·I"), out, 0.5 * eye2, atol=EPS)
    eye3 = np.eye(3, dtype=F32)
    out = t.call("attention_scores", tensor_from(eye3), tensor_from(eye3), 1.0).value
    t.allclose(("seq_len=3、scale=1 时结果为 I", "seq_len=3, scale=1 gives I"), out, eye3, atol=EPS)


@lab.test(
    "attention_scores：非对称、非方阵的 Q 与 K",
    "attention_scores: asymmetric, non-square Q and K",
    hint=[
        (
            "Q 与 K 形状不同（[3, 2] 和 [4, 2]）时，结果应是 [3, 4]。",
            "With Q [3, 2] and K [4, 2] the result is [3, 4].",
        ),
        (
            "要乘的是 K 的转置：Q @ Kᵀ，而不是 Q @ K，也不是结果的转置。",
            "Multiply by the transpose of K: Q @ Kᵀ, not Q @ K, and not the transposed result.",
        ),
        (
            "不要改动 q、k 本身：先算出新数组，再返回新的 Tensor。",
            "Leave q and k as they are: compute a new array and return a new Tensor.",
        ),
    ],
)
def scores_general(t: TestContext) -> None:
    # q @ k (no transpose) and out[j][i] both give a different answer for these inputs.
    q = np.array([[1, 2], [3, 4]], dtype=F32)
    k = np.array([[0, 1], [2, 5]], dtype=F32)
    out = t.call("attention_scores", tensor_from(q), tensor_from(k), 0.5).value
    t.allclose(
        ("2×2 非对称输入：0.5 · Q @ Kᵀ", "2×2 asymmetric inputs: 0.5 · Q @ Kᵀ"),
        out,
        0.5 * q @ k.T,
        atol=EPS,
    )
    q = np.arange(6, dtype=F32).reshape(3, 2)
    k = np.arange(8, dtype=F32).reshape(4, 2) - 3
    call = t.call("attention_scores", tensor_from(q), tensor_from(k), 0.25)
    t.allclose(
        ("Q [3, 2]、K [4, 2] → [3, 4]", "Q [3, 2], K [4, 2] → [3, 4]"),
        call.value,
        0.25 * q @ k.T,
        atol=EPS,
    )
    t.unchanged(("Q 没有被修改", "Q is left unchanged"), q, call.args[0])
    t.unchanged(("K 没有被修改", "K is left unchanged"), k, call.args[1])
    rng = t.rng(404)
    q = rng.standard_normal((5, 8)).astype(F32)
    k = rng.standard_normal((7, 8)).astype(F32)
    out = t.call("attention_scores", tensor_from(q), tensor_from(k), 1 / np.sqrt(8)).value
    # sums of 8 float32 products: relative error stays far below 1e-5
    t.allclose(
        ("随机 Q [5, 8]、K [7, 8]，scale = 1/√8", "random Q [5, 8], K [7, 8], scale = 1/√8"),
        out,
        (q.astype(np.float64) @ k.T) / np.sqrt(8),
        atol=1e-5,
        rtol=1e-5,
    )
    kt = tensor_from(k.T).T  # a transposed view: same values, strides (1, 7)
    out = t.call("attention_scores", tensor_from(q), kt, 1.0).value
    t.allclose(
        (
            "K 是转置视图（步长不是行主序）时结果也对",
            "correct when K is a transposed view (non-row-major strides)",
        ),
        out,
        q.astype(np.float64) @ k.T,
        atol=1e-5,
        rtol=1e-5,
    )


@lab.test(
    "attention_scores：拒绝不匹配的形状",
    "attention_scores: rejects mismatched shapes",
    hint=[
        (
            "先检查形状，再计算：两个输入都必须是 2 维，且最后一维 hd 相同。",
            "Check shapes before computing: both inputs 2-D, with the same last dimension hd.",
        ),
        (
            "形状不对时 raise ValueError，消息里说出两个形状。",
            "On a shape mismatch, raise ValueError with both shapes in the message.",
        ),
    ],
)
def scores_errors(t: TestContext) -> None:
    q = tensor_from(np.ones((3, 4), F32))
    t.raises(
        ("hd 不同（4 与 5）→ ValueError", "different hd (4 vs 5) → ValueError"),
        ValueError,
        "attention_scores",
        q,
        tensor_from(np.ones((3, 5), F32)),
        1.0,
    )
    t.raises(
        ("Q 是 1 维 → ValueError", "1-D Q → ValueError"),
        ValueError,
        "attention_scores",
        tensor_from(np.ones(4, F32)),
        q,
        1.0,
    )


@lab.test(
    "apply_mask：因果掩码",
    "apply_mask: causal mask",
    hint=[
        (
            "apply_mask 是原地操作：直接改 scores，并返回 None。",
            "apply_mask works in place: change scores itself and return None.",
        ),
        (
            "scores.numpy() 是同一块内存上的视图，对它做 += 就会改到 scores。",
            "scores.numpy() is a view of the same memory: += on it changes scores.",
        ),
    ],
)
def mask_causal(t: TestContext) -> None:
    mask = create_causal_mask(3)
    call = t.call("apply_mask", tensor_from(np.zeros((3, 3), F32)), mask)
    t.check(
        ("返回 None", "returns None"),
        call.value is None,
        (
            f"apply_mask 原地修改 scores，应返回 None，实际返回了 {type(call.value).__name__}",
            f"apply_mask works in place and returns None, not a {type(call.value).__name__}",
        ),
    )
    t.allclose(
        (
            "scores 被原地修改：全零 scores 加掩码后等于掩码（对角线及以下 0，以上 -1e9）",
            "scores changed in place: zero scores plus the mask equal the mask "
            "(0 on and below the diagonal, -1e9 above)",
        ),
        call.args[0],
        mask.numpy(),
        atol=0.0,
    )  # adding to 0 is exact
    # Zero scores as a float64 ndarray (what an attention_scores computed in float64
    # returns): as_tensor copies it into float32, so writing into as_tensor(scores)
    # leaves the caller's array at zero. (Zeros: overwriting is [TEST 5]'s business.)
    inplace_float64(
        t,
        "apply_mask",
        "scores",
        (
            "scores 是全零的 float64 ndarray：被改动的正是这个数组",
            "scores is a zero float64 ndarray: that very array changes",
        ),
        np.zeros((3, 3)),
        mask.numpy(),
    )


@lab.test(
    "apply_mask：是相加，不是覆盖",
    "apply_mask: adds, does not overwrite",
    hint=[
        (
            "掩码要加到分数上，而不是覆盖分数：被保留的位置（掩码为 0）分数不变。",
            "Add the mask to the scores; do not overwrite them: where the mask is 0 the score "
            "stays.",
        ),
        (
            "形状不同要 raise ValueError，并且要在写入之前检查，出错时 scores 不能被改动。",
            "Different shapes raise ValueError, checked before any write, so scores is untouched "
            "on error.",
        ),
        ("mask 是只读的输入，只改 scores。", "The mask is read-only input: change only scores."),
    ],
)
def mask_adds(t: TestContext) -> None:
    scores = np.array([[1.5, -2.0, 3.0], [0.25, 4.0, -1.0]], dtype=F32)
    mask = np.array([[0, -1e9, -1e9], [0, 0, -1e9]], dtype=F32)
    call = t.call("apply_mask", tensor_from(scores), tensor_from(mask))
    # 1.5 - 1e9 rounds in float32; compare against the float32 sum itself
    t.allclose(
        ("非零 scores：结果为 scores + mask", "non-zero scores: result is scores + mask"),
        call.args[0],
        scores + mask,
        atol=0.0,
        rtol=1e-7,
    )
    t.unchanged(
        ("mask 没有被修改", "the mask is left unchanged"), mask, call.args[1], returns_new=False
    )
    raised = t.raises(
        (
            "形状不同（[2, 3] 与 [3, 2]）→ ValueError",
            "mismatched shapes ([2, 3] vs [3, 2]) → ValueError",
        ),
        ValueError,
        "apply_mask",
        tensor_from(scores),
        tensor_from(np.ones((3, 2), F32)),
    )
    t.unchanged(
        ("出错时 scores 保持原样", "on error, scores is left as it was"),
        scores,
        raised.args[0] if raised.args else None,
        returns_new=False,
    )


@lab.test(
    "softmax：基本性质与数值",
    "softmax: basic properties and values",
    hint=[
        (
            "softmax 沿最后一维：每一行各自归一化，和为 1。",
            "softmax runs over the last dimension: each row is normalised on its own and sums to "
            "1.",
        ),
        ("返回新的 Tensor，输入保持不变。", "Return a new Tensor and leave the input unchanged."),
    ],
)
def softmax_basic(t: TestContext) -> None:
    out = t.call("softmax", tensor_from(np.zeros((4, 4), F32))).value
    t.allclose(
        ("全 0 的 [4, 4]：每个元素 0.25", "all-zero [4, 4]: every element is 0.25"),
        out,
        np.full((4, 4), 0.25),
        atol=EPS,
    )
    out = t.call("softmax", tensor_from(np.ones((1, 3), F32))).value
    t.allclose(
        ("softmax([1, 1, 1]) 每个元素 = 1/3", "softmax([1, 1, 1]): each element = 1/3"),
        out,
        np.full((1, 3), 1 / 3),
        atol=EPS,
    )
    x = np.array([[1, 2, 3], [-1, 0, 4]], dtype=F32)
    call = t.call("softmax", tensor_from(x))
    t.allclose(
        (
            "数值正确：softmax([1, 2, 3]) = [0.0900, 0.2447, 0.6652]",
            "correct values: softmax([1, 2, 3]) = [0.0900, 0.2447, 0.6652]",
        ),
        call.value,
        ref_softmax(x),
        atol=EPS,
    )
    t.unchanged(("输入没有被修改", "the input is left unchanged"), x, call.args[0])


@lab.test(
    "softmax：极端输入也不出 NaN",
    "softmax: no NaN on extreme inputs",
    hint=[
        (
            "exp(1e4) 会溢出成 inf，inf/inf 是 NaN。",
            "exp(1e4) overflows to inf, and inf/inf is NaN.",
        ),
        (
            "先从每一行减去这一行的最大值，结果不变，但 exp 的参数都 ≤ 0。",
            "Subtract each row's own maximum first: the result is the same, but every exp "
            "argument is ≤ 0.",
        ),
        (
            "最大值要按行取（keepdims），不是整个张量的最大值。",
            "Take the maximum per row (keepdims), not over the whole tensor.",
        ),
    ],
)
def softmax_stable(t: TestContext) -> None:
    x = np.array([[1e4, 0, -1e4], [-1e4, -1e4, -1e4 + 1]], dtype=F32)
    out = t.call("softmax", tensor_from(x)).value
    t.finite(("±1e4 的输入：输出全是有限数", "inputs of ±1e4: every output is finite"), out)
    t.allclose(
        ("±1e4 的输入：数值正确", "inputs of ±1e4: correct values"), out, ref_softmax(x), atol=EPS
    )
    blocked = np.full((2, 4), -1e9, dtype=F32)
    blocked[1, 0] = 0.0
    out = t.call("softmax", tensor_from(blocked)).value
    t.allclose(
        (
            "整行都是 -1e9 → 均匀分布；只有一个 0 → one-hot",
            "a row of all -1e9 → uniform; a single 0 → one-hot",
        ),
        out,
        [[0.25] * 4, [1, 0, 0, 0]],
        atol=EPS,
    )
    scores = tensor_from(np.zeros((2, 3), F32))
    mask = tensor_from(np.array([[-1e9, -1e9, -1e9], [0, -1e9, 0]], dtype=F32))
    masked = t.call("apply_mask", scores, mask).args[0]
    out = t.call("softmax", masked).value
    t.allclose(
        (
            "被完全遮住的一行（apply_mask → softmax）仍然是均匀分布",
            "a fully masked row (apply_mask → softmax) is still uniform",
        ),
        out,
        [[1 / 3] * 3, [0.5, 0, 0.5]],
        atol=EPS,
    )


@lab.test(
    "softmax：沿最后一维，任意维数",
    "softmax: over the last dimension, any ndim",
    hint=[
        (
            "输入可能是 1 维、2 维或 3 维：只沿最后一维计算。",
            "The input can be 1-D, 2-D or 3-D: compute along the last dimension only.",
        ),
        (
            "numpy 的 axis=-1 和 keepdims=True 让同一段代码适用于任意维数。",
            "numpy's axis=-1 with keepdims=True makes one piece of code work for any ndim.",
        ),
    ],
)
def softmax_ndim(t: TestContext) -> None:
    x = np.array([[0, 1, 2], [5, 5, 5]], dtype=F32)  # 2 × 3: another axis gives other sums
    out = t.call("softmax", tensor_from(x)).value
    t.allclose(
        (
            "[2, 3] 输入：每一行（最后一维）和为 1",
            "[2, 3] input: each row (last dimension) sums to 1",
        ),
        out,
        ref_softmax(x),
        atol=EPS,
    )
    out = t.call("softmax", tensor_from(np.array([2.0, 1.0, 0.0], F32))).value
    t.allclose(
        ("1 维输入 [3]", "1-D input [3]"), out, ref_softmax(np.array([2.0, 1.0, 0.0])), atol=EPS
    )
    rng = t.rng(4004)
    x3 = (rng.standard_normal((2, 3, 5)) * 3).astype(F32)
    out = t.call("softmax", tensor_from(x3)).value
    t.allclose(
        ("3 维随机输入 [2, 3, 5]", "random 3-D input [2, 3, 5]"), out, ref_softmax(x3), atol=EPS
    )


@lab.test(
    "端到端：scores → mask → softmax",
    "end to end: scores → mask → softmax",
    hint=[
        (
            "这个测试把三个函数串起来：先让前面的单项测试通过。",
            "This test chains the three functions: make the single-function tests pass first.",
        ),
        (
            "上三角不为 0 说明掩码没有生效：检查 apply_mask 是否真的改到了传进来的 scores。",
            "A non-zero upper triangle means the mask did not act: check that apply_mask changes "
            "the scores it was given.",
        ),
    ],
)
def chain_causal(t: TestContext) -> None:
    eye4 = tensor_from(np.eye(4, dtype=F32))
    scores = t.call("attention_scores", eye4, eye4, 0.5).value
    masked = t.call("apply_mask", scores, create_causal_mask(4)).args[0]
    attn = t.call("softmax", masked).value
    want = ref_softmax(0.5 * np.eye(4) + create_causal_mask(4).numpy())
    arr = t.array(
        ("softmax 的输出是 [4, 4] 数组", "softmax's output is a [4, 4] array"), attn, (4, 4)
    )
    if arr is None:
        return
    t.allclose(("attn 每行和为 1", "attn rows sum to 1"), arr.sum(axis=-1), np.ones(4), atol=1e-5)
    t.check(
        ("attn 上三角为 0（掩码生效）", "attn upper triangle is 0 (the mask took effect)"),
        bool(np.all(np.triu(arr, 1) < 1e-6)),
        (
            "对角线以上仍有非零权重：位置 i 看到了未来",
            "non-zero weight above the diagonal: position i sees the future",
        ),
    )
    t.allclose(
        (
            "attn 的值：第 3 行 = [0.2151, 0.2151, 0.2151, 0.3547]",
            "attn values: row 3 = [0.2151, 0.2151, 0.2151, 0.3547]",
        ),
        attn,
        want,
        atol=EPS,
    )


@lab.test(
    "手算例子：单位权重，seq=2，d=2",
    "worked example: identity weights, seq=2, d=2",
    requires=[scores_identity],
    hint=[
        (
            "scale = 1/√2，scores = I/√2；对第 0 行 [0.707, 0] 做 softmax。",
            "scale = 1/√2, scores = I/√2; take the softmax of row 0, [0.707, 0].",
        ),
        (
            "期望值 0.66976 = e^0.707 / (e^0.707 + 1)：可以先手算一遍。",
            "The expected 0.66976 is e^0.707 / (e^0.707 + 1): work it out by hand once.",
        ),
    ],
)
def worked_example(t: TestContext) -> None:
    # Q = K = V = x = I; scores = I/√2; softmax row 0 = [e^0.707, 1] / (e^0.707 + 1)
    eye = np.eye(2, dtype=F32)
    scores = t.call("attention_scores", tensor_from(eye), tensor_from(eye), 1 / np.sqrt(2)).value
    attn = t.array(
        ("softmax 的输出是 [2, 2] 数组", "softmax's output is a [2, 2] array"),
        t.call("softmax", scores).value,
        (2, 2),
    )
    if attn is None:
        return
    out = attn @ eye  # @ V
    t.close(("attn[0][0] ≈ 0.66976", "attn[0][0] ≈ 0.66976"), float(out[0, 0]), 0.66976, atol=1e-4)
    t.close(("attn[0][1] ≈ 0.33024", "attn[0][1] ≈ 0.33024"), float(out[0, 1]), 0.33024, atol=1e-4)


@lab.test(
    "对照框架：随机多头注意力",
    "against the framework: random multi-head attention",
    hint=[
        (
            "多头注意力对每个头分别调用你的三个函数，再拼接：其他测试都过了，这个通常也会过。",
            "Multi-head attention calls your three functions per head and concatenates: once the "
            "others pass, this one usually does.",
        ),
        (
            "如果只有这里失败，检查对非连续的输入（列切片）是否也正确。",
            "If only this fails, check your functions on non-contiguous inputs (column slices).",
        ),
    ],
)
def against_framework(t: TestContext) -> None:
    rng = t.rng(2024)
    mha = MultiHeadAttention(16, 4)
    mha.init_weights(rng, std=0.3)
    x = rng.standard_normal((6, 16)).astype(F32)
    mask = create_causal_mask(6)
    q, k, v = (x @ w.numpy() for w in (mha.w_q, mha.w_k, mha.w_v))
    heads = []
    for h in range(mha.num_heads):
        cols = slice(h * mha.head_dim, (h + 1) * mha.head_dim)
        s = t.call(
            "attention_scores", tensor_from(q[:, cols]), tensor_from(k[:, cols]), mha.scale
        ).value
        s = t.call("apply_mask", s, mask).args[0]
        a = t.array(
            ("softmax 的输出是 [6, 6] 数组", "softmax's output is a [6, 6] array"),
            t.call("softmax", s).value,
            (6, 6),
        )
        if a is None:
            return
        heads.append(a.astype(np.float32) @ v[:, cols])
    out = np.concatenate(heads, axis=1) @ mha.w_o.numpy()
    # float32 throughout, 16-wide sums twice: 1e-5 relative is generous and still tight
    t.allclose(
        (
            "你的三步 + 多头拼接 = MultiHeadAttention.forward",
            "your three steps + head concatenation = MultiHeadAttention.forward",
        ),
        out,
        mha.forward(x, mask).numpy(),
        atol=1e-5,
        rtol=1e-4,
    )


@lab.test(
    "numpy 数组和 Tensor 一样能用",
    "numpy arrays work as well as Tensors",
    hint=[
        (
            "API 约定：接受 Tensor 的地方也要接受 numpy 数组。",
            "The API says: where a Tensor is accepted, a numpy array is too.",
        ),
        (
            "用 framework 的 as_tensor(x) 把输入统一成 Tensor；"
            "apply_mask 的 scores 是 ndarray 时直接原地修改这个数组。",
            "Use the framework's as_tensor(x) to turn any input into a Tensor; when apply_mask "
            "gets an ndarray as scores, change that array in place.",
        ),
    ],
)
def accepts_arrays(t: TestContext) -> None:
    q = np.array([[1, 2], [3, 4]], dtype=F32)
    name = ("attention_scores 接受 ndarray", "attention_scores accepts ndarrays")
    if call := t.returns(name, "attention_scores", q, q, 1.0):
        t.allclose(name, call.value, q @ q.T, atol=EPS)
    mask = create_causal_mask(2).numpy()
    name = ("apply_mask 原地修改 ndarray", "apply_mask changes an ndarray in place")
    if call := t.returns(name, "apply_mask", np.zeros((2, 2), dtype=F32), mask):
        t.allclose(name, call.args[0], mask, atol=0.0)  # adding to 0 is exact
    name = ("softmax 接受 ndarray", "softmax accepts ndarrays")
    if call := t.returns(name, "softmax", np.zeros((2, 2), dtype=F32)):
        t.allclose(name, call.value, np.full((2, 2), 0.5), atol=EPS)


@lab.test(
    "非连续视图（转置、带 offset）也能用",
    "non-contiguous views (transposed, offset) work too",
    hint=[
        (
            "这里的 Tensor 是非连续视图：元素 idx 在 data[offset + Σ idx[i]·strides[i]]。",
            "These Tensors are non-contiguous views: element idx lives at data[offset + Σ "
            "idx[i]·strides[i]].",
        ),
        (
            "直接读 x.data（或 x.data.reshape(shape)）会读到不属于这个张量的位置。",
            "Reading x.data directly (or x.data.reshape(shape)) reads cells that do not belong "
            "to the tensor.",
        ),
        (
            "用 x.numpy() 读写：它是按 strides 和 offset 排好的视图。",
            "Read and write through x.numpy(): it is a view laid out by strides and offset.",
        ),
    ],
)
def strided_views(t: TestContext) -> None:
    # Each Tensor argument arrives column-major, every other storage cell, after an offset:
    # code that reads `data` as if it were row-major reads the wrong cells (NaN here).
    rng = t.rng(4044)
    q = rng.standard_normal((3, 4)).astype(F32)
    k = rng.standard_normal((5, 4)).astype(F32)
    t.views(
        ("attention_scores 读视图 Q、K", "attention_scores reads view Q and K"),
        "attention_scores",
        q,
        k,
        0.5,
        expected=0.5 * (q.astype(np.float64) @ k.T),
        atol=1e-5,  # 4-wide float32 dot products
        rtol=1e-5,
    )
    scores = rng.standard_normal((3, 3)).astype(F32)
    mask = create_causal_mask(3).numpy()
    t.views(
        ("apply_mask 原地写入视图 scores", "apply_mask writes into a view scores in place"),
        "apply_mask",
        scores,
        mask,
        expected=scores + mask,
        atol=0.0,
        rtol=1e-7,  # the same float32 additions
        inplace=0,
    )
    x = (rng.standard_normal((2, 3, 4)) * 3).astype(F32)
    t.views(
        ("softmax 读 3 维视图", "softmax reads a 3-D view"),
        "softmax",
        x,
        expected=ref_softmax(x),
        atol=EPS,
    )

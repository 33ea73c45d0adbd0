"""Lab04 checks: attention scores, the additive causal mask, and the row softmax.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process, and every value is compared here, in the grader. Tolerances are written at each
check with the reason. Random inputs use fixed seeds; a failure prints the seed.

[TEST 12] and [TEST 13] are about the input kind alone (numpy arrays, non-contiguous
views): each compares your function on that input with your own result of the same call
on plain Tensors, so a bug in the computation itself fails only the tests about it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from framework import MultiHeadAttention, Tensor, create_causal_mask, tensor_from
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
# Outcomes after which a call on plain Tensors gives this test nothing to compare with; the
# others (TODO, a missing function, an import error, the grader's own failure) end it as usual.
UNUSABLE = ("exception", "forbidden", "timeout", "crash", "overflow", "unreadable")


def ref_softmax(x: np.ndarray) -> np.ndarray:
    z = np.asarray(x, dtype=np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    out: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return out


def floats(value: Any) -> np.ndarray | None:
    """A Tensor or numeric ndarray as a float64 array; None for anything else."""
    if isinstance(value, Tensor):
        value = value.numpy()
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
        return None
    return np.asarray(value, dtype=np.float64)


def own(
    t: TestContext, fn: str, *args: Any, shape: tuple[int, ...], inplace: int | None = None
) -> np.ndarray | None:
    """The student's own result of `fn(*args)` on plain Tensors: the value it returned (or,
    with `inplace=i`, argument i after the call) as float64, for a metamorphic comparison.

    None when it cannot serve as the expected value: the call raised, called a forbidden
    function or did not return, or the result is not a finite array of `shape`. Then the
    test about that result fails already, and this one waits for it (`wait_for`).
    """
    out = t.attempt(fn, *args)
    if out.kind in UNUSABLE:
        return None
    t.unless_raised(fn, out)  # a TODO stub, a missing function: the test ends as usual
    value = floats(out.args[inplace] if inplace is not None else out.value)
    if value is None or value.shape != shape or not np.isfinite(value).all():
        return None
    return value


def wait_for(t: TestContext, waiting: list[Any]) -> None:
    """SKIP ("fix TEST n first") for the first test whose result a metamorphic comparison
    could not use, unless a comparison that could be made has failed: that FAIL stands."""
    if waiting and all(c.status == "PASS" for c in t.checks):
        t.skip_for(waiting[0])


def inplace_float64(
    t: TestContext,
    fn: str,
    arg: str,
    name: tuple[str, str],
    a: np.ndarray,
    b: Any,
    expected: np.ndarray,
    *,
    tensor_written: bool,
) -> None:
    """`fn(a, b)` with `a` a float64 ndarray must leave `expected` in the caller's `a` itself.

    `as_tensor` copies a float64 ndarray into new float32 storage, so a function that writes
    into `as_tensor(a)` passes every float32 check and changes nothing here. That is named
    only when the same call did write into a float32 Tensor (`tensor_written`); otherwise
    nothing reaches the caller's object whatever its kind.
    """
    call = t.returns(name, fn, a.copy(), b)
    after = None
    if call is not None:
        after = t.array(
            name,
            call.args[0],
            a.shape,
            hint=(
                f"调用之后的 {arg} 不再是形状 {list(a.shape)} 的数组：原地修改只改元素的值，"
                "不改形状、不换对象。",
                f"After the call {arg} is no longer an array of shape {list(a.shape)}: an "
                "in-place change alters the values only, never the shape or the object.",
            ),
        )
    if after is None:
        return
    if np.array_equal(after, a) and not np.array_equal(expected, a):
        if tensor_written:
            t.check(
                name,
                False,
                (
                    "传进来的数组没有变：写进的是一份副本（as_tensor 会把 float64 的 ndarray "
                    f"复制成 float32）；要写进调用者给的 {arg} 本身",
                    "the array you were given did not change: a copy was written (as_tensor "
                    f"copies a float64 ndarray into float32); write through the caller's {arg} "
                    "itself",
                ),
                hint=(
                    f"{fn} 写进了 {arg} 的一份转换后的副本：{arg} 是 float64 的 ndarray 时，"
                    "as_tensor（以及任何转成 float32 的转换）都会另开存储，调用者的数组不会变。",
                    f"{fn} wrote into a converted copy of {arg}: for a float64 ndarray {arg}, "
                    "as_tensor (like any conversion to float32) makes new storage, and the "
                    "caller's array never changes.",
                ),
            )
        else:
            t.check(
                name,
                False,
                (
                    f"传进来的 {arg} 一点没变：结果没有写进调用者给的对象",
                    f"the {arg} you were given did not change at all: the result never "
                    "reached the caller's object",
                ),
                hint=(
                    f"{fn} 是原地操作：它的结果就是调用者手里那个 {arg} 的新内容。"
                    "看看你的写入落在了哪个对象上。",
                    f"{fn} works in place: its result is the new content of the caller's own "
                    f"{arg}. Look at which object your write lands in.",
                ),
            )
        return
    # float64 plus float32 values; a float32 sum written back is within one float32 ulp
    t.allclose(
        name,
        after,
        expected,
        atol=0.0,
        rtol=1e-7,
        hint=(
            f"这个 float64 的 {arg} 确实被改了，但新值不对：逐格和期望值比一比，"
            "看每一格加上的是不是 mask 里对应那一格的值。",
            f"This float64 {arg} did change, but to other values: compare it cell by cell "
            "with the expected one, and check that each cell got the mask's own value for "
            "that cell added.",
        ),
    )


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
    t.shape(
        ("输出形状为 [2, 2]", "output shape is [2, 2]"),
        out,
        (2, 2),
        hint=(
            "这里要拿到一个 [2, 2] 的 Tensor（或数组）：看看你的函数最后返回的是什么、"
            "形状是多少（None、字符串或一维结果都不行）。",
            "A [2, 2] Tensor (or array) is expected here: look at what your function returns "
            "at its end, and its shape (None, a string or a 1-D result will not do).",
        ),
    )
    t.allclose(
        ("I @ Iᵀ · 0.5 = 0.5·I", "I @ Iᵀ · 0.5 = 0.5·I"),
        out,
        0.5 * eye2,
        atol=EPS,
        hint=(
            "Q = K = I 时每个点积不是 0 就是 1，结果恰好是 scale 乘单位矩阵：对角线上应是传进来的 "
            "scale（0.5）。对角线不对就看 scale 从哪里进入计算；对角线以外不为 0 就看乘的是什么。",
            "With Q = K = I every dot product is 0 or 1, so the result is the identity times "
            "scale: the diagonal holds the scale passed in (0.5). A wrong diagonal: look at "
            "where scale enters; non-zero cells off the diagonal: look at what is multiplied.",
        ),
    )
    eye3 = np.eye(3, dtype=F32)
    out = t.call("attention_scores", tensor_from(eye3), tensor_from(eye3), 1.0).value
    t.allclose(
        ("seq_len=3、scale=1 时结果为 I", "seq_len=3, scale=1 gives I"),
        out,
        eye3,
        atol=EPS,
        hint=(
            "scale = 1 时结果就是 Q @ Kᵀ 本身，这里是 I：对角线不是 1，说明用的缩放不是调用者"
            "传进来的那个数。",
            "With scale = 1 the result is Q @ Kᵀ itself, here I: a diagonal other than 1 means "
            "the scaling used is not the number the caller passed.",
        ),
    )


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
        hint=(
            "对这组 Q、K，乘法的各种写法给出的结果都不一样：手算第 0 行第 1 列"
            "（Q 的第 0 行点乘 K 的第 1 行，再乘 0.5），和你的那一格比。",
            "For these Q and K every way of multiplying gives a different answer: work out "
            "cell (0, 1) by hand (row 0 of Q dotted with row 1 of K, times 0.5) and compare "
            "it with yours.",
        ),
    )
    q = np.arange(6, dtype=F32).reshape(3, 2)
    k = np.arange(8, dtype=F32).reshape(4, 2) - 3
    call = t.call("attention_scores", tensor_from(q), tensor_from(k), 0.25)
    t.allclose(
        ("Q [3, 2]、K [4, 2] → [3, 4]", "Q [3, 2], K [4, 2] → [3, 4]"),
        call.value,
        0.25 * q @ k.T,
        atol=EPS,
        hint=(
            "结果的行对应 Q 的行（S = 3），列对应 K 的行（T = 4）：形状或数值不对时，"
            "看清每个下标 i、j、d 各来自哪个输入的哪一维。",
            "Rows of the result are Q's rows (S = 3), columns are K's rows (T = 4): with a "
            "wrong shape or wrong values, trace which input and which axis each index i, j, "
            "d comes from.",
        ),
    )
    inputs = (
        "numpy() 和数组共享调用者的内存：对它做原地运算（*=、/=、out=）就改了调用者的输入。"
        "要算的东西放进新数组。",
        "numpy() shares the caller's memory: an in-place operation on it (*=, /=, out=) "
        "changes the caller's input. Put what you compute into a new array.",
    )
    t.unchanged(("Q 没有被修改", "Q is left unchanged"), q, call.args[0], hint=inputs)
    t.unchanged(("K 没有被修改", "K is left unchanged"), k, call.args[1], hint=inputs)
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
        hint=(
            "随机数会暴露小整数例子看不出的错误：挑报告里误差最大的那一格 (i, j)，"
            "自己算 Q 的第 i 行与 K 的第 j 行的点积再乘 1/√8，和你的值比。",
            "Random values show what small integer examples hide: take the worst cell (i, j) "
            "of the report, compute row i of Q dotted with row j of K times 1/√8 yourself, "
            "and compare.",
        ),
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
        hint=(
            "这里的 K 步长是 (1, 7)：它的一行在存储里不是连续的。"
            "按形状算出的 data 下标读到的是别的元素；要按 strides 读（Lab01）。",
            "K here has strides (1, 7): one of its rows is not contiguous in storage. Offsets "
            "into data computed from the shape read other elements; read by the strides "
            "(Lab01).",
        ),
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
        hint=(
            "Q 的 hd 是 4，K 的是 5：自己比较两者的最后一维，再开始计算。切片或广播会让"
            "不匹配的形状照样算出一个结果，numpy 不一定替你报错。",
            "Q's hd is 4 and K's is 5: compare the two last dimensions yourself before "
            "computing. Slicing or broadcasting can make mismatched shapes compute a result, "
            "and numpy will not always complain for you.",
        ),
    )
    t.raises(
        ("Q 是 1 维 → ValueError", "1-D Q → ValueError"),
        ValueError,
        "attention_scores",
        tensor_from(np.ones(4, F32)),
        q,
        1.0,
        hint=(
            "1 维的 Q 没有行：在读 shape[1] 之前先检查两个输入的维数（ndim），"
            "不对就 raise ValueError，而不是让 IndexError 或一个结果冒出来。",
            "A 1-D Q has no rows: check both ranks (ndim) before reading shape[1], and raise "
            "ValueError rather than letting an IndexError or a result come out.",
        ),
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
    zeros = np.zeros((3, 3), F32)
    call = t.call("apply_mask", tensor_from(zeros), mask)
    t.check(
        ("返回 None", "returns None"),
        call.value is None,
        (
            f"apply_mask 原地修改 scores，应返回 None，实际返回了 {type(call.value).__name__}",
            f"apply_mask works in place and returns None, not a {type(call.value).__name__}",
        ),
        hint=(
            "apply_mask 的结果就是被改过的 scores 本身，函数什么也不返回；"
            "如果你构造了一个新对象来返回，调用者手里的 scores 并不会因此改变。",
            "apply_mask's result is the changed scores itself, and the function returns "
            "nothing; building a new object to return leaves the caller's scores as it was.",
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
        hint=(
            "从全零开始，调用后的 scores 应与掩码逐格相同。还是全零，说明写入没有落到调用者"
            "给的那个 Tensor 上；对角线以上不是 -1e9，就看加上去的是不是掩码原本的值。",
            "Starting from zeros, scores must afterwards equal the mask cell by cell. Still "
            "all zero: the write never reached the Tensor the caller gave you; above the "
            "diagonal something other than -1e9: check that what you add is the mask's own "
            "values.",
        ),
    )  # adding to 0 is exact
    after = floats(call.args[0])
    written = after is not None and not np.array_equal(after, zeros)
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
        np.zeros((3, 3)) + mask.numpy().astype(np.float64),
        tensor_written=written,
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
        hint=(
            "先看掩码为 0 的格子：调用之后它们应当还是原来的分数（1.5、0.25、4.0……），"
            "被屏蔽的格子是原分数加 -1e9。",
            "Look first at the cells where the mask is 0: after the call they must still "
            "hold their old scores (1.5, 0.25, 4.0, ...); blocked cells hold the old score "
            "plus -1e9.",
        ),
    )
    t.unchanged(
        ("mask 没有被修改", "the mask is left unchanged"),
        mask,
        call.args[1],
        returns_new=False,
        hint=(
            "调用之后 mask 必须和调用前一模一样。找一找哪一步写入的目标"
            "（原地运算符、out=）是 mask 或它的视图。",
            "After the call the mask must be exactly as it was. Look for a step whose target "
            "(an in-place operator, out=) is the mask or a view of it.",
        ),
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
        hint=(
            "[2, 3] 和 [3, 2] 的元素个数相同，形状却不同：比较的应是形状本身（整个元组），"
            "不同就 raise ValueError。",
            "[2, 3] and [3, 2] have the same number of cells but not the same shape: compare "
            "the shapes themselves (whole tuples), and raise ValueError when they differ.",
        ),
    )
    t.unchanged(
        ("出错时 scores 保持原样", "on error, scores is left as it was"),
        scores,
        raised.args[0] if raised.args else None,
        returns_new=False,
        hint=(
            "调用按要求失败了，但 scores 在失败之前已经被改动：第一次写入之前，所有检查都要做完。",
            "The call failed as it should, but scores had changed before it did: finish "
            "every check before the first write.",
        ),
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
        hint=(
            "一行相等的输入（这里全是 0）得到相等的权重，4 个各 1/4。每个权重是"
            " exp(x_j - m) 除以这一行 exp 的和：分母永远不是 0。",
            "A row of equal inputs (zeros here) gets equal weights, 1/4 each of 4. Each "
            "weight is exp(x_j - m) over the row's sum of exps: the denominator is never 0.",
        ),
    )
    out = t.call("softmax", tensor_from(np.ones((1, 3), F32))).value
    t.allclose(
        ("softmax([1, 1, 1]) 每个元素 = 1/3", "softmax([1, 1, 1]): each element = 1/3"),
        out,
        np.full((1, 3), 1 / 3),
        atol=EPS,
        hint=(
            "[1, 3] 的输入只有一行、三个元素：每个权重 1/3。看你的 max 和 sum 沿的是哪一维，"
            "对 [1, 3] 来说应是长度为 3 的那一维。",
            "A [1, 3] input is one row of three: each weight is 1/3. Check which axis your "
            "max and sum run along: for [1, 3] it is the axis of length 3.",
        ),
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
        hint=(
            "手算一次 softmax([1, 2, 3])：e¹、e²、e³ 各除以三者之和，再和你的第 0 行逐格比。",
            "Work out softmax([1, 2, 3]) by hand once (e¹, e², e³, each over their sum) and "
            "compare it cell by cell with your row 0.",
        ),
    )
    t.unchanged(
        ("输入没有被修改", "the input is left unchanged"),
        x,
        call.args[0],
        hint=(
            "softmax 返回新的 Tensor，x 的内存不能动：在 x.numpy() 上做 -=、/=、out= "
            "都会写进调用者的输入。",
            "softmax returns a new Tensor, and x's memory stays untouched: -=, /= or out= on "
            "x.numpy() write into the caller's input.",
        ),
    )


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
    t.finite(
        ("±1e4 的输入：输出全是有限数", "inputs of ±1e4: every output is finite"),
        out,
        hint=(
            "找出变成 NaN 或 inf 的那一行，看你的代码在这一行交给 exp 的最大参数是多少："
            "它应该永远不大于 0，而每行的分母至少是 1。",
            "Find the row that became NaN or inf and the largest argument your code passes "
            "to exp in it: it should never be above 0, and every row's denominator at least "
            "1.",
        ),
    )
    t.allclose(
        ("±1e4 的输入：数值正确", "inputs of ±1e4: correct values"),
        out,
        ref_softmax(x),
        atol=EPS,
        hint=(
            "输出是有限数但值不对：第 1 行 [-1e4, -1e4, -1e4 + 1] 的 softmax 应等于 "
            "softmax([0, 0, 1])，整行加减同一个常数不改变 softmax。",
            "Finite but wrong: row 1, [-1e4, -1e4, -1e4 + 1], must have the softmax of "
            "[0, 0, 1]; shifting a whole row by one constant does not change its softmax.",
        ),
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
        hint=(
            "整行都是 -1e9 仍然是一行相等的值，权重各 1/4，不是 NaN 也不是 0；"
            "第 1 行里唯一的 0 远大于其他值，拿走全部权重。",
            "A row of -1e9 everywhere is still a row of equal values: weights of 1/4 each, "
            "neither NaN nor 0. In row 1 the single 0 is far above the rest and takes all "
            "the weight.",
        ),
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
        hint=(
            "这里串起了你的 apply_mask 和 softmax：先打印 apply_mask 之后的 scores，"
            "应是 [[-1e9, -1e9, -1e9], [0, -1e9, 0]]，再看 softmax 把它变成了什么。",
            "This chains your apply_mask and softmax: print scores after apply_mask first "
            "(it should be [[-1e9, -1e9, -1e9], [0, -1e9, 0]]), then see what softmax makes "
            "of it.",
        ),
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
        hint=(
            "把你的输出每一行加起来：每一行（最后一维）的和都应是 1，"
            "第 1 行 [5, 5, 5] 应是均匀的 1/3。",
            "Add up each row of your output: every row (the last dimension) must sum to 1, "
            "and row 1, [5, 5, 5], must be a uniform 1/3.",
        ),
    )
    out = t.call("softmax", tensor_from(np.array([2.0, 1.0, 0.0], F32))).value
    t.allclose(
        ("1 维输入 [3]", "1-D input [3]"),
        out,
        ref_softmax(np.array([2.0, 1.0, 0.0])),
        atol=EPS,
        hint=(
            "1 维输入就是一行：要归一化的是它唯一的一维。从末尾数维度，"
            "同一段代码才能适用于任意维数。",
            "A 1-D input is a single row: normalise over its only axis. Counting axes from "
            "the end lets one piece of code serve any ndim.",
        ),
    )
    rng = t.rng(4004)
    x3 = (rng.standard_normal((2, 3, 5)) * 3).astype(F32)
    out = t.call("softmax", tensor_from(x3)).value
    t.allclose(
        ("3 维随机输入 [2, 3, 5]", "random 3-D input [2, 3, 5]"),
        out,
        ref_softmax(x3),
        atol=EPS,
        hint=(
            "[2, 3, 5] 里有 6 行、每行 5 个元素，每一行各自和为 1：检查 max 和 sum 只沿最后"
            "一维归约，并保留这一维以便广播回去。",
            "[2, 3, 5] holds 6 rows of 5, each summing to 1 on its own: check that max and "
            "sum reduce the last axis only and keep it, so that they broadcast back.",
        ),
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
        ("softmax 的输出是 [4, 4] 数组", "softmax's output is a [4, 4] array"),
        attn,
        (4, 4),
        hint=(
            "三步串起来后拿到的不是 [4, 4] 数组：逐步看每一步给出什么（attention_scores 返回"
            "新的 [4, 4]，apply_mask 返回 None 并改 scores，softmax 返回同形状的结果）。",
            "Chained, the three steps do not give a [4, 4] array: look at what each step "
            "gives (attention_scores a new [4, 4], apply_mask None with scores changed, "
            "softmax a result of its input's shape).",
        ),
    )
    if arr is None:
        return
    t.allclose(
        ("attn 每行和为 1", "attn rows sum to 1"),
        arr.sum(axis=-1),
        np.ones(4),
        atol=1e-5,
        hint=(
            "softmax 之后每一行的和必须是 1：在 I₄ 上把三步各跑一遍，打印 softmax "
            "之后每一行的和，看是哪一步让它偏离了 1。",
            "After softmax every row sums to 1: run the three steps on I₄, print each row's "
            "sum after softmax, and find the step that moves it away from 1.",
        ),
    )
    t.check(
        ("attn 上三角为 0（掩码生效）", "attn upper triangle is 0 (the mask took effect)"),
        bool(np.all(np.triu(arr, 1) < 1e-6)),
        (
            "对角线以上仍有非零权重：位置 i 看到了未来",
            "non-zero weight above the diagonal: position i sees the future",
        ),
        hint=(
            "对角线以上有权重，说明 softmax 拿到的分数里没有掩码：传给 softmax 的，"
            "应是刚被 apply_mask 改过的同一个 scores 对象。",
            "Weight above the diagonal means the scores softmax got carry no mask: what "
            "softmax receives is the very scores object apply_mask has just changed.",
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
        hint=(
            "每行和为 1、未来也被挡住了，但数值不对：第 3 行应是 softmax([0, 0, 0, 0.5])，"
            "把你的分数矩阵（对角线应为 0.5）打印出来对一对。",
            "Rows sum to 1 and the future is blocked, but the values differ: row 3 must be "
            "softmax([0, 0, 0, 0.5]); print your scores (0.5 on the diagonal) and compare.",
        ),
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
        hint=(
            "softmax 对 [2, 2] 的分数应返回 [2, 2] 的结果：看看它返回的是什么类型、什么形状。",
            "softmax of [2, 2] scores returns a [2, 2] result: look at the type and shape of "
            "what it returns.",
        ),
    )
    if attn is None:
        return
    out = attn @ eye  # @ V
    t.close(
        ("attn[0][0] ≈ 0.66976", "attn[0][0] ≈ 0.66976"),
        float(out[0, 0]),
        0.66976,
        atol=1e-4,
        hint=(
            "打印这一输入下你的 scores：对角线应是 1/√2 ≈ 0.7071，其余为 0；"
            "scores 对了，再看 softmax 对 [0.7071, 0] 给出什么。",
            "Print your scores for this input: 1/√2 ≈ 0.7071 on the diagonal, 0 elsewhere; "
            "once they are right, see what your softmax makes of [0.7071, 0].",
        ),
    )
    t.close(
        ("attn[0][1] ≈ 0.33024", "attn[0][1] ≈ 0.33024"),
        float(out[0, 1]),
        0.33024,
        atol=1e-4,
        hint=(
            "attn[0][1] 等于 1 - attn[0][0]：第 0 行两个权重之和应为 1。",
            "attn[0][1] is 1 - attn[0][0]: the two weights of row 0 sum to 1.",
        ),
    )


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
            hint=(
                "一个头的 softmax 输出不是 [6, 6]：S = T = 6，看看每一步返回的类型和形状。",
                "One head's softmax output is not [6, 6]: S = T = 6 here; look at the type "
                "and shape each step returns.",
            ),
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
        hint=(
            "每个头把 Q、K 的 4 列（hd = 4）交给你的函数，scale = 1/√4，掩码是 [6, 6] 的因果掩码"
            "且 4 个头共用：前面的测试没覆盖到的，是随机的 S = T = 6 和被共用的掩码。",
            "Each head hands 4 columns of Q and K (hd = 4) to your functions, with scale "
            "1/√4 and one [6, 6] causal mask shared by all 4 heads: what the earlier tests "
            "did not cover is a random S = T = 6 and the shared mask.",
        ),
    )


@lab.test(
    "numpy 数组和 Tensor 一样能用",
    "numpy arrays work as well as Tensors",
    metamorphic=True,
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
    # Each call on ndarrays must give what the same call gives on Tensors of the same values
    # (the student's own result): a bug in the computation fails the tests about it, not this.
    waiting: list[Any] = []
    q = np.array([[1, 2], [3, 4], [0, -1]], dtype=F32)
    k = np.array([[0, 1], [2, 5], [-1, 3]], dtype=F32)[[0, 1, 2, 0]]  # [4, 2]
    name = ("attention_scores 接受 ndarray", "attention_scores accepts ndarrays")
    base = own(t, "attention_scores", tensor_from(q), tensor_from(k), 0.5, shape=(3, 4))
    if base is None:
        waiting.append(scores_general)
    elif call := t.returns(name, "attention_scores", q, k, 0.5):
        # the same float32 products either way: equal up to a few ulps
        t.allclose(
            name,
            call.value,
            base,
            atol=EPS,
            rtol=1e-6,
            hint=(
                "同样的值，给 ndarray 和给 Tensor 时你的 attention_scores 结果不同："
                "不论输入是哪种，先统一成同一种形式，再走同一段计算。",
                "Given the same values as ndarrays rather than Tensors, your attention_scores "
                "returns something else: whatever the input kind, bring it into one form "
                "first, then run the same computation.",
            ),
        )
    scores = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0], [4.0, 0.0, -0.5]], dtype=F32)
    mask = create_causal_mask(3).numpy()
    base = own(t, "apply_mask", tensor_from(scores), tensor_from(mask), shape=(3, 3), inplace=0)
    name = (
        "apply_mask 原地修改 float32 ndarray",
        "apply_mask changes a float32 ndarray in place",
    )
    if base is None:
        waiting.append(mask_causal)
    else:
        written = not np.array_equal(base, scores)
        if call := t.returns(name, "apply_mask", scores.copy(), mask):
            after = floats(call.args[0])
            if written and after is not None and np.array_equal(after, scores):
                t.check(
                    name,
                    False,
                    (
                        "传进来的 ndarray 没有变，而同样的调用会改动 Tensor：写进的是一份副本",
                        "the ndarray you were given did not change, though the same call "
                        "changes a Tensor: a copy was written",
                    ),
                    hint=(
                        "scores 是 ndarray 时，要改的就是这个数组本身：拿它的视图来写，"
                        "而不是先转换或复制一份。",
                        "When scores is an ndarray, that very array is what changes: write "
                        "through a view of it, not through a converted or copied one.",
                    ),
                )
            else:
                t.allclose(
                    name,
                    call.args[0],
                    base,
                    atol=0.0,
                    rtol=1e-7,  # the same float32 additions
                    hint=(
                        "ndarray 被改了，但和同样的调用在 Tensor 上留下的值不同："
                        "两种输入应走同一段加法。",
                        "The ndarray changed, but not to what the same call leaves in a "
                        "Tensor: both kinds of input should go through the same addition.",
                    ),
                )
        # A float64 ndarray (what a float64 attention_scores returns): as_tensor copies it.
        inplace_float64(
            t,
            "apply_mask",
            "scores",
            (
                "apply_mask 原地修改 float64 ndarray",
                "apply_mask changes a float64 ndarray in place",
            ),
            scores.astype(np.float64),
            mask,
            base,
            tensor_written=written,
        )
    x = np.array([[0.5, -1.0, 2.0], [3.0, 3.0, -2.0]], dtype=F32)
    name = ("softmax 接受 ndarray", "softmax accepts ndarrays")
    base = own(t, "softmax", tensor_from(x), shape=(2, 3))
    if base is None:
        waiting.append(softmax_basic)
    elif call := t.returns(name, "softmax", x):
        t.allclose(
            name,
            call.value,
            base,
            atol=EPS,  # the same float32 arithmetic either way
            hint=(
                "同样的值，给 ndarray 和给 Tensor 时你的 softmax 结果不同："
                "把输入统一成同一种形式，再走同一段计算。",
                "Given the same values as an ndarray rather than a Tensor, your softmax "
                "returns something else: bring the input into one form, then run the same "
                "computation.",
            ),
        )
    wait_for(t, waiting)


@lab.test(
    "非连续视图（转置、带 offset）也能用",
    "non-contiguous views (transposed, offset) work too",
    metamorphic=True,
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
    # code that reads `data` as if it were row-major reads the wrong cells (NaN here). The
    # expected value is the student's own result of the same call on plain Tensors.
    waiting: list[Any] = []
    rng = t.rng(4044)
    q = rng.standard_normal((3, 4)).astype(F32)
    k = rng.standard_normal((5, 4)).astype(F32)
    base = own(t, "attention_scores", tensor_from(q), tensor_from(k), 0.5, shape=(3, 5))
    if base is None:
        waiting.append(scores_general)
    else:
        t.views(
            (
                "attention_scores 读视图 Q、K",
                "attention_scores reads view Q and K",
            ),
            "attention_scores",
            q,
            k,
            0.5,
            expected=base,
            atol=1e-5,  # 4-wide float32 dot products, maybe summed in another order
            rtol=1e-5,
            hint=(
                "同样的值做成非连续视图后，你的 attention_scores 结果变了：视图的元素 (i, j) "
                "在 data[offset + i·strides[0] + j·strides[1]]，按形状算的下标读到的是别的格子。",
                "With the same values as non-contiguous views your attention_scores gives "
                "another result: element (i, j) of a view is at data[offset + i·strides[0] + "
                "j·strides[1]], and offsets computed from the shape read other cells.",
            ),
        )
    scores = rng.standard_normal((3, 3)).astype(F32)
    mask = create_causal_mask(3).numpy()
    base = own(t, "apply_mask", tensor_from(scores), tensor_from(mask), shape=(3, 3), inplace=0)
    if base is None:
        waiting.append(mask_causal)
    else:
        t.views(
            (
                "apply_mask 原地写入视图 scores",
                "apply_mask writes into a view scores in place",
            ),
            "apply_mask",
            scores,
            mask,
            expected=base,
            atol=0.0,
            rtol=1e-7,  # the same float32 additions
            inplace=0,
            hint=(
                "scores 是视图时，写入必须落在视图自己的格子上，存储里其余的格子不能动；"
                "mask 也是视图，读它同样要按 strides。",
                "When scores is a view, the writes must land in the view's own cells and leave "
                "the rest of the storage alone; the mask is a view too, read by its strides "
                "as well.",
            ),
        )
    x = (rng.standard_normal((2, 3, 4)) * 3).astype(F32)
    base = own(t, "softmax", tensor_from(x), shape=(2, 3, 4))
    if base is None:
        waiting.append(softmax_ndim)
    else:
        t.views(
            (
                "softmax 读 3 维视图",
                "softmax reads a 3-D view",
            ),
            "softmax",
            x,
            expected=base,
            atol=EPS,  # the same float32 arithmetic on the same values
            hint=(
                "同样的值做成 3 维非连续视图后，你的 softmax 结果变了：一行的元素在存储里"
                "相隔 strides[-1] 个格子，而不是挨着。",
                "With the same values as a 3-D non-contiguous view your softmax gives another "
                "result: the elements of one row sit strides[-1] cells apart in storage, not "
                "side by side.",
            ),
        )
    wait_for(t, waiting)

"""Lab01 checks: element access through strides and offset, and a numerically stable softmax.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process, and every value is compared here, in the grader. Tolerances are written at each
check with the reason. Random inputs use fixed seeds; a failure prints the seed.

Why so many cells: a contiguous tensor cannot tell `i·strides[0] + j` from `i·shape[1] + j`,
and the two corner cells (0, 0) and (1, 2) of a [2, 3] tensor come out right even for a
column-major formula. So the checks read and write every cell, with a different value in
each, through transposed and permuted views and at a non-zero offset.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from framework.tensor import Tensor, tensor_from
from grader.compare import describe, to_array
from grader.dsl import Lab, TestContext, tr
from grader.sandbox.outcome import Outcome

lab = Lab("lab01", "张量与数学运算", "Tensors and math ops")
lab.forbid(
    "softmax_stable",
    "framework.math_ops:softmax",
    "framework.math_ops:softmax_inplace",
    "framework.math_ops:_softmax_np",
    why=(
        "这一课就是亲手写出减去最大值的稳定 softmax",
        "this lab is about writing the stable softmax, max subtraction included",
    ),
)

F32 = np.float32
EXACT = 0.0  # get/set copy one float32 value, bit for bit: nothing to round
EPS = 1e-6  # softmax values of order 1 computed in float32: a few ulps
C23 = np.array([[0, 1, 2], [10, 11, 12]], dtype=F32)  # the C course's tensor, 10·i + j


def ref_softmax(x: Any) -> np.ndarray:
    z = np.asarray(x, dtype=np.float64)
    e = np.exp(z - z.max())
    out: np.ndarray = e / e.sum()
    return out


def distinct(shape: tuple[int, ...]) -> np.ndarray:
    """A float32 array whose cell (i, j, ...) holds the digits i j ... (plus 0.5): all differ."""
    digits = np.indices(shape).reshape(len(shape), -1)
    weights = 10 ** np.arange(len(shape) - 1, -1, -1)
    return (weights @ digits + 0.5).reshape(shape).astype(F32)


def window(storage: np.ndarray) -> Tensor:
    """The [2, 3] block rows 1..2, cols 1..3 of a [4, 5] storage: offset 6, strides (5, 1)."""
    return Tensor(tensor_from(storage).data, (2, 3), (5, 1), offset=6)


def as_number(value: Any) -> float | None:
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        value = value.reshape(()).item()
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


# Outcomes after which a call on a plain Tensor gives a metamorphic test nothing to compare
# with; the others (TODO, a missing function, an import error) end the test as usual.
UNUSABLE = (
    Outcome.EXCEPTION,
    Outcome.FORBIDDEN,
    Outcome.TIMEOUT,
    Outcome.CRASH,
    Outcome.OVERFLOW,
    Outcome.UNREADABLE,
)


def _own(t: TestContext, fn: str, *args: Any) -> Any:
    """The value the student's `fn(*args)` returned, or None when the call did not return
    (then the test about that call fails already); a TODO stub ends the test as usual."""
    out = t.attempt(fn, *args)
    if out.kind in UNUSABLE:
        return None
    t.unless_raised(fn, out)
    return out.value


def own_number(t: TestContext, fn: str, *args: Any) -> float | None:
    """The student's own finite number from `fn(*args)` on a plain Tensor, else None."""
    number = as_number(_own(t, fn, *args))
    return number if number is not None and np.isfinite(number) else None


def own_array(t: TestContext, fn: str, *args: Any, shape: tuple[int, ...]) -> Any:
    """The student's own result of `fn(*args)` on a plain Tensor as a float64 array, or None
    when it is not a finite array of `shape` (a Tensor or an ndarray)."""
    value = _own(t, fn, *args)
    arr = to_array(value) if isinstance(value, Tensor | np.ndarray) else None
    if arr is None or arr.shape != shape or not np.isfinite(arr).all():
        return None
    return arr


_NOT_A_NUMBER = (
    "tensor_get 要返回那一格的数本身（一个 float），不是数组、Tensor 或 None。",
    "tensor_get must return the number in that cell (a float), not an array, a Tensor or None.",
)


_BAD_INDEX = {  # the hint of each rejected index, for tensor_get and tensor_set alike
    (0, 3): (
        "第 3 列不存在：[2, 3] 的列号只有 0、1、2；读写之前把每个 index[d] 和 shape[d] 比较。",
        "Column 3 does not exist: a [2, 3] has columns 0, 1, 2; compare each index[d] with "
        "shape[d] before reading or writing.",
    ),
    (2, 0): (
        "窗口只有 2 行；位置 6 + 2·5 = 16 在存储里仍然存在，只有和 shape 比较才能拒绝它。",
        "The window has 2 rows; position 6 + 2·5 = 16 still exists in the storage, so only a "
        "comparison with the shape rejects it.",
    ),
    (-1, 0): (
        "负数不在 [0, shape[d]) 里：它也必须被拒绝，不能从末尾倒着数。",
        "A negative entry is outside [0, shape[d]): reject it too, do not count from the end.",
    ),
    (0, -1): (
        "负数不在 [0, shape[d]) 里：它也必须被拒绝，不能从末尾倒着数。",
        "A negative entry is outside [0, shape[d]): reject it too, do not count from the end.",
    ),
    (1,): (
        "下标只有 1 个数，张量却有 2 维：比较 len(index) 和 ndim。",
        "The index has 1 entry but the tensor 2 dimensions: compare len(index) with ndim.",
    ),
    (0, 1, 2): (
        "下标有 3 个数，张量只有 2 维：多出的一个不能被悄悄丢掉，比较 len(index) 和 ndim。",
        "The index has 3 entries for a 2-D tensor: the extra one must not be dropped quietly; "
        "compare len(index) with ndim.",
    ),
}


def every_cell(
    t: TestContext,
    name: tuple[str, str],
    tensor: Tensor,
    want: np.ndarray,
    *,
    hint: Any,
) -> None:
    """One check: tensor_get at every index of `tensor` equals `want` exactly; `hint` is
    for a wrong value (a value that is not a number gets a hint about the return type)."""
    got = np.full(tensor.shape, np.nan)
    indices = list(np.ndindex(*tensor.shape))
    calls = t.map("tensor_get", [(tensor, idx) for idx in indices])
    for idx, call in zip(indices, calls, strict=True):
        value = call.value
        number = as_number(value)
        if number is None:
            t.check(
                name,
                False,
                tr(
                    f"tensor_get(t, {idx}) 返回了 {describe(value)}，不是 float",
                    f"tensor_get(t, {idx}) returned a {describe(value)}, not a float",
                ),
                hint=_NOT_A_NUMBER,
            )
            return
        got[idx] = number
    t.allclose(name, got, want, atol=EXACT, hint=hint)


def storage_of(after: Any, shape: tuple[int, ...]) -> Any:
    """The whole storage behind a post-call tensor, shaped like its base tensor."""
    if isinstance(after, Tensor) and after.data.size == int(np.prod(shape)):
        return after.data.reshape(shape)
    return after


# -- tensor_get -----------------------------------------------------------------------------
@lab.test(
    "tensor_get：C 课程的两个格子，再读 2×3 的每一格",
    "tensor_get: the C course's two cells, then every cell of a 2×3",
    hint=[
        (
            "元素在 data 里的位置是 offset + Σ index[d]·strides[d]。",
            "An element sits at position offset + Σ index[d]·strides[d] of data.",
        ),
        (
            "[2, 3] 的 (1, 2) 在位置 5：用 t.strides 算，不要用 t.shape。",
            "Cell (1, 2) of a [2, 3] is at position 5: use t.strides, not t.shape.",
        ),
    ],
)
def get_2d(t: TestContext) -> None:
    tt = tensor_from(C23)
    corners = [t.call("tensor_get", tt, (0, 0)).value, t.call("tensor_get", tt, (1, 2)).value]
    t.allclose(
        ("get(0, 0) = 0，get(1, 2) = 12", "get(0, 0) = 0 and get(1, 2) = 12"),
        corners,
        [0.0, 12.0],
        atol=EXACT,
        hint=[
            (
                "(1, 2) 在 data 的位置 offset + 1·strides[0] + 2·strides[1] = 0 + 3 + 2 = "
                "5：打印你算出的位置来对照。",
                "Cell (1, 2) is at position offset + 1·strides[0] + 2·strides[1] = 0 + 3 + 2 = 5 "
                "of data: print the position you compute and compare.",
            )
        ],
    )
    every_cell(
        t,
        (
            "[[0, 1, 2], [10, 11, 12]] 的每一格（偏移 = 3·i + j）",
            "every cell of [[0, 1, 2], [10, 11, 12]] (position = 3·i + j)",
        ),
        tt,
        C23,
        hint=[
            (
                "报告给出第一个不对的格子：对它手算 offset + Σ index[d]·strides[d]（strides = (3, "
                "1)），再和你的位置比较。",
                "The report names the worst cell: work out offset + Σ index[d]·strides[d] for it "
                "by hand (strides (3, 1)) and compare with your position.",
            )
        ],
    )


@lab.test(
    "tensor_get：任意维数（1 维与 3 维）",
    "tensor_get: any ndim (1-D and 3-D)",
    hint=[
        (
            "下标的长度就是 t.ndim：对每一维都加上 index[d]·strides[d]，不要只写两维。",
            "The index has t.ndim entries: add index[d]·strides[d] for every dimension, not "
            "just two.",
        ),
        (
            "用一个循环遍历所有维度，起点是 t.offset，再用 float(...) 返回那个值。",
            "Loop over all dimensions starting from t.offset, then return the value as a "
            "float(...).",
        ),
    ],
)
def get_ndim(t: TestContext) -> None:
    x1 = np.array([4.0, -3.0, 2.5, 0.0, 7.0], dtype=F32)
    every_cell(
        t,
        ("1 维 [5] 的每一格", "every cell of a 1-D [5]"),
        tensor_from(x1),
        x1,
        hint=[
            (
                "1 维张量的下标只有一个数：位置是 offset + "
                "index[0]·strides[0]，代码不能假定有两维。",
                "A 1-D index has a single entry: the position is offset + index[0]·strides[0]; "
                "the code must not assume two dimensions.",
            )
        ],
    )
    x3 = distinct((2, 3, 4))
    every_cell(
        t,
        (
            "3 维 [2, 3, 4] 的每一格（偏移 = 12·i + 4·j + k）",
            "every cell of a 3-D [2, 3, 4] (position = 12·i + 4·j + k)",
        ),
        tensor_from(x3),
        x3,
        hint=[
            (
                "第三个下标也要乘上它的步长：(1, 2, 3) 在位置 1·12 + 2·4 + 3·1 = 23。",
                "The third index counts too, times its stride: (1, 2, 3) is at position 1·12 + "
                "2·4 + 3·1 = 23.",
            )
        ],
    )


@lab.test(
    "tensor_get：转置、置换视图与非零 offset",
    "tensor_get: transposed and permuted views, non-zero offset",
    hint=[
        (
            "视图不复制数据：转置只交换 strides，所以位置必须由 strides 算出。",
            "A view copies nothing: a transpose only swaps the strides, so compute positions "
            "from strides.",
        ),
        (
            "从 shape 推出位置（pos·shape[d] + index[d]）只对新建张量正确。",
            "Deriving the position from the shape (pos·shape[d] + index[d]) is right only for "
            "new tensors.",
        ),
        (
            "别忘了 t.offset：窗口的 (0, 0) 在 data 的第 6 个位置，不在第 0 个。",
            "Do not forget t.offset: the window's (0, 0) is at position 6 of data, not 0.",
        ),
    ],
)
def get_views(t: TestContext) -> None:
    every_cell(
        t,
        (
            "转置视图 .T：形状 [3, 2]，步长 (1, 3)",
            "transposed view .T: shape [3, 2], strides (1, 3)",
        ),
        tensor_from(C23).T,
        C23.T,
        hint=[
            (
                ".T 的步长是 (1, 3)：它的 (2, 1) 在 data 的位置 2·1 + 1·3 = 5（值 "
                "12）。对照你的代码算出的位置。",
                ".T has strides (1, 3): its cell (2, 1) is at position 2·1 + 1·3 = 5 of data "
                "(value 12). Compare with the position your code computes.",
            )
        ],
    )
    x3 = distinct((2, 3, 4))
    every_cell(
        t,
        (
            "置换视图 permute(2, 0, 1)：形状 [4, 2, 3]，步长 (1, 12, 4)",
            "permuted view permute(2, 0, 1): shape [4, 2, 3], strides (1, 12, 4)",
        ),
        tensor_from(x3).permute(2, 0, 1),
        x3.transpose(2, 0, 1),
        hint=[
            (
                "置换视图的 (1, 0, 2) 在位置 1·1 + 0·12 + 2·4 = "
                "9：三个步长都要用上，而且按维度一一对应。",
                "Cell (1, 0, 2) of the permuted view is at 1·1 + 0·12 + 2·4 = 9: all three "
                "strides count, each with its own dimension.",
            )
        ],
    )
    storage = distinct((4, 5))
    every_cell(
        t,
        (
            "[4, 5] 存储里的 [2, 3] 窗口：offset 6，步长 (5, 1)",
            "a [2, 3] window of a [4, 5] storage: offset 6, strides (5, 1)",
        ),
        window(storage),
        storage[1:3, 1:4],
        hint=[
            (
                "窗口的 (0, 0) 在存储的位置 6（它的 offset），(1, 2) 在 6 + 1·5 + 2·1 = 13。",
                "The window's (0, 0) is at storage position 6 (its offset), its (1, 2) at 6 + 1·5 "
                "+ 2·1 = 13.",
            )
        ],
    )
    every_cell(
        t,
        ("窗口的转置：offset 6，步长 (1, 5)", "the window's transpose: offset 6, strides (1, 5)"),
        window(storage).T,
        storage[1:3, 1:4].T,
        hint=[
            (
                "offset 与交换后的步长一起用：窗口转置的 (2, 1) 在 6 + 2·1 + 1·5 = 13。",
                "Offset and swapped strides together: cell (2, 1) of the window's transpose is at "
                "6 + 2·1 + 1·5 = 13.",
            )
        ],
    )


@lab.test(
    "tensor_get：越界或长度不对的下标 → IndexError",
    "tensor_get: out-of-range or wrong-length index → IndexError",
    hint=[
        (
            "算位置之前先检查下标：长度等于 ndim，每个 index[d] 在 [0, shape[d]) 里。",
            "Check the index before computing: length equals ndim, each index[d] in [0, shape[d]).",
        ),
        (
            "要对照 shape 检查，而不是对照 data 的大小：窗口外的格子仍在存储里。",
            "Check against the shape, not the size of data: cells outside a window are still "
            "in storage.",
        ),
        (
            "负下标不要回绕，长度不对或越界都 raise IndexError。",
            "Do not wrap negative indices; a wrong length or an out-of-range entry raises "
            "IndexError.",
        ),
    ],
)
def get_errors(t: TestContext) -> None:
    tt = tensor_from(C23)
    cases = [
        (
            ("[2, 3] 的第 3 列 (0, 3) → IndexError", "column 3 of a [2, 3]: (0, 3) → IndexError"),
            tt,
            (0, 3),
        ),
        (
            (
                "窗口的第 2 行 (2, 0)（仍在存储之内）→ IndexError",
                "row 2 of the window: (2, 0), still inside the storage → IndexError",
            ),
            window(distinct((4, 5))),
            (2, 0),
        ),
        (
            (
                "负下标 (-1, 0) → IndexError（不回绕）",
                "negative index (-1, 0) → IndexError (no wrap-around)",
            ),
            tt,
            (-1, 0),
        ),
        (
            (
                "2 维张量用 (1,) 太短 → IndexError",
                "(1,) is too short for a 2-D tensor → IndexError",
            ),
            tt,
            (1,),
        ),
        (
            (
                "2 维张量用 (0, 1, 2) 太长 → IndexError",
                "(0, 1, 2) is too long for a 2-D tensor → IndexError",
            ),
            tt,
            (0, 1, 2),
        ),
    ]
    for name, tensor, idx in cases:
        t.raises(name, IndexError, "tensor_get", tensor, idx, hint=_BAD_INDEX[idx])


# -- tensor_set -----------------------------------------------------------------------------
@lab.test(
    "tensor_set：C 课程的检查（每格写 7.0）",
    "tensor_set: the C course's check (7.0 everywhere)",
    hint=[
        (
            "tensor_set 原地写进 t.data 的那个位置，并返回 None。",
            "tensor_set writes into that position of t.data in place and returns None.",
        ),
        (
            "位置的算法与 tensor_get 相同：offset + Σ index[d]·strides[d]。",
            "The position is the same as in tensor_get: offset + Σ index[d]·strides[d].",
        ),
    ],
)
def set_c_check(t: TestContext) -> None:
    tt = tensor_from(np.zeros((2, 3), F32))
    call = t.call("tensor_set", tt, (0, 0), 7.0)
    t.check(
        ("返回 None（原地修改）", "returns None (works in place)"),
        call.value is None,
        (
            "tensor_set 应该原地修改 t 并返回 None",
            "tensor_set must change t in place and return None",
        ),
        hint=[
            (
                "tensor_set 返回了一个值：它应当改动传进来的张量本身，然后什么也不返回。",
                "tensor_set returned a value: it must change the tensor it was given, and return "
                "nothing.",
            )
        ],
    )
    tt = call.args[0]
    tt = t.map("tensor_set", [(tt, idx, 7.0) for idx in list(np.ndindex(2, 3))[1:]])[-1].args[0]
    t.allclose(
        ("每格写入 7.0 后，每格都是 7.0", "after writing 7.0 into every cell, every cell is 7.0"),
        tt,
        np.full((2, 3), 7.0),
        atol=EXACT,
        hint=[
            (
                "写完之后有格子不是 7.0：调用方只看得到它传进来的那个张量的 data，看不到副本。",
                "After the writes some cell is not 7.0: the caller sees only the data of the "
                "tensor it passed in, never a copy.",
            )
        ],
    )


@lab.test(
    "tensor_set：每格写不同的值，只改目标格",
    "tensor_set: a different value per cell, only the target cell changes",
    hint=[
        (
            "每个值都应落在自己的格子：写入位置必须与 tensor_get 读取的位置相同。",
            "Each value must land in its own cell: write at the same position tensor_get reads.",
        ),
        (
            "只改一个元素：不要填满整行，也不要先把张量复制一份再写。",
            "Change one element only: do not fill a row, and do not write into a copy.",
        ),
    ],
)
def set_distinct(t: TestContext) -> None:
    tt = tensor_from(np.zeros((3, 4), F32))
    sweep = [(tt, idx, 100.0 + k) for k, idx in enumerate(np.ndindex(3, 4))]
    tt = t.map("tensor_set", sweep)[-1].args[0]
    t.allclose(
        (
            "第 k 格（行主序）写 100 + k：每个值落在自己的格子",
            "100 + k into cell k (row-major order): each value lands in its own cell",
        ),
        tt,
        100.0 + np.arange(12).reshape(3, 4),
        atol=EXACT,
        hint=[
            (
                "值落错了格子：写 (i, j) 的位置要和 tensor_get 读 (i, j) 的位置相同（[3, 4] 上是 "
                "4·i + j）。",
                "Values landed in the wrong cells: write (i, j) at the position tensor_get reads "
                "it from (4·i + j on a [3, 4]).",
            )
        ],
    )
    x2 = distinct((3, 4))
    want = x2.copy()
    want[1, 2] = -7.0
    after = t.call("tensor_set", tensor_from(x2), (1, 2), -7.0).args[0]
    t.allclose(
        (
            "[3, 4] 上 set (1, 2) = -7：只有这一格变了",
            "set (1, 2) = -7 on a [3, 4]: only that cell changes",
        ),
        after,
        want,
        atol=EXACT,
        hint=[
            (
                "看看除了 (1, 2) 还有哪些格子变了：一次调用只写 data 里的一个位置（这里是 1·4 + 2 "
                "= 6）。",
                "See which cells besides (1, 2) changed: one call writes one position of data "
                "(here 1·4 + 2 = 6).",
            )
        ],
    )
    x3 = distinct((2, 3, 4))
    want = x3.copy()
    want[1, 2, 3] = -1.0
    after = t.call("tensor_set", tensor_from(x3), (1, 2, 3), -1.0).args[0]
    t.allclose(
        (
            "3 维 [2, 3, 4] 上 set (1, 2, 3) = -1：只有这一格变了",
            "set (1, 2, 3) = -1 on a 3-D [2, 3, 4]: only that cell changes",
        ),
        after,
        want,
        atol=EXACT,
        hint=[
            (
                "写入时每一维的步长也都要算上：(1, 2, 3) 在位置 12 + 8 + 3 = 23。",
                "Writing needs every dimension's stride too: (1, 2, 3) is at position 12 + 8 + 3 "
                "= 23.",
            )
        ],
    )


@lab.test(
    "tensor_set：通过视图写进共享的存储",
    "tensor_set: writing through a view into shared storage",
    hint=[
        (
            "写进视图就是写进共享的存储：要写 t.data 本身，而不是副本。",
            "Writing through a view writes the shared storage: change t.data itself, not a copy.",
        ),
        (
            "用 strides 和 offset 算位置，这样 .T、permute 与窗口都会写到对的格子。",
            "Compute the position from strides and offset, so .T, permute and windows hit the "
            "right cell.",
        ),
    ],
)
def set_views(t: TestContext) -> None:
    base = distinct((3, 4))
    want = base.copy()
    want[1, 3] = 99.0  # view (3, 1) of base.T is base (1, 3)
    after = t.call("tensor_set", tensor_from(base).T, (3, 1), 99.0).args[0]
    t.allclose(
        (
            "在 .T 上 set (3, 1)：存储里 base 的 (1, 3) 变了，别处不变",
            "set (3, 1) on .T: base cell (1, 3) of the storage changes, nothing else",
        ),
        storage_of(after, (3, 4)),
        want,
        atol=EXACT,
        hint=[
            (
                ".T 的 (3, 1)（步长 (1, 4)）是存储的位置 3·1 + 1·4 = 7，也就是 base 的 (1, "
                "3)：要写进共享的 t.data。",
                "(3, 1) of .T (strides (1, 4)) is storage position 3·1 + 1·4 = 7, base cell (1, "
                "3): write into the shared t.data.",
            )
        ],
    )
    base = distinct((2, 3, 4))
    want = base.copy()
    want[0, 2, 1] = -5.0  # view (1, 0, 2) of permute(2, 0, 1) is base (0, 2, 1)
    after = t.call("tensor_set", tensor_from(base).permute(2, 0, 1), (1, 0, 2), -5.0).args[0]
    t.allclose(
        (
            "在 permute(2, 0, 1) 上 set (1, 0, 2)：base 的 (0, 2, 1) 变了",
            "set (1, 0, 2) on permute(2, 0, 1): base cell (0, 2, 1) changes",
        ),
        storage_of(after, (2, 3, 4)),
        want,
        atol=EXACT,
        hint=[
            (
                "permute(2, 0, 1) 的步长是 (1, 12, 4)：(1, 0, 2) 在位置 1 + 0 + 8 = 9，也就是 "
                "base 的 (0, 2, 1)。",
                "permute(2, 0, 1) has strides (1, 12, 4): (1, 0, 2) is position 1 + 0 + 8 = 9, "
                "base cell (0, 2, 1).",
            )
        ],
    )
    storage = distinct((4, 5))
    want = storage.copy()
    want[2, 3] = -1.0  # window (1, 2) is storage (1 + 1, 1 + 2)
    after = t.call("tensor_set", window(storage), (1, 2), -1.0).args[0]
    t.allclose(
        (
            "offset 6 的窗口上 set (1, 2)：存储的 (2, 3) 变了，别处不变",
            "set (1, 2) on the window at offset 6: storage cell (2, 3) changes, nothing else",
        ),
        storage_of(after, (4, 5)),
        want,
        atol=EXACT,
        hint=[
            (
                "窗口从 offset 6 开始：它的 (1, 2) 是存储位置 6 + 5 + 2 = 13，即存储的 (2, 3)。",
                "The window starts at offset 6: its (1, 2) is storage position 6 + 5 + 2 = 13, "
                "storage cell (2, 3).",
            )
        ],
    )


@lab.test(
    "tensor_set：越界或长度不对 → IndexError，且什么都不写",
    "tensor_set: bad index → IndexError, and nothing is written",
    hint=[
        (
            "与 tensor_get 一样检查下标，错了就 raise IndexError。",
            "Check the index as tensor_get does, and raise IndexError when it is wrong.",
        ),
        (
            "先检查再写入：被拒绝的调用不能改动任何一格。",
            "Check first, then write: a rejected call must not change any cell.",
        ),
    ],
)
def set_errors(t: TestContext) -> None:
    cases = [
        (("第 3 列 (0, 3) → IndexError", "column 3: (0, 3) → IndexError"), (0, 3)),
        (
            (
                "负下标 (0, -1) → IndexError（不回绕）",
                "negative index (0, -1) → IndexError (no wrap-around)",
            ),
            (0, -1),
        ),
        (("(1,) 太短 → IndexError", "(1,) is too short → IndexError"), (1,)),
    ]
    for name, idx in cases:
        t.raises(name, IndexError, "tensor_set", tensor_from(C23), idx, 99.0, hint=_BAD_INDEX[idx])
    wrote = []
    for _, idx in cases:
        out = t.attempt("tensor_set", tensor_from(C23), idx, 99.0)
        after = out.args[0] if out.args else None
        if not (isinstance(after, Tensor) and np.array_equal(after.numpy(), C23)):
            wrote.append(str(idx))
    t.check(
        ("被拒绝的调用没有改动张量", "the rejected calls left the tensor unchanged"),
        not wrote,
        tr(
            f"下标 {', '.join(wrote)} 的调用改动了张量：先检查下标，再写入",
            f"the call with index {', '.join(wrote)} changed the tensor: check, then write",
        ),
        hint=[
            (
                "被拒绝的调用还是写了一格：所有检查都要在写入之前做完。",
                "A rejected call still wrote a cell: finish every check before the write.",
            )
        ],
    )


# -- softmax_stable -------------------------------------------------------------------------
@lab.test(
    "softmax_stable：C 课程的检查",
    "softmax_stable: the C course's checks",
    hint=[
        (
            "softmax(x)_i = exp(x_i) / Σ_j exp(x_j)：结果之和为 1，且随 x 递增。",
            "softmax(x)_i = exp(x_i) / Σ_j exp(x_j): it sums to 1 and grows with x.",
        ),
        (
            "float32 的 exp 在 89 左右溢出：先减去最大值，exp(x - max(x)) 不会溢出。",
            "float32 exp overflows near 89: subtract the max first, exp(x - max(x)) cannot "
            "overflow.",
        ),
    ],
)
def softmax_c_checks(t: TestContext) -> None:
    out = t.call("softmax_stable", tensor_from(np.array([1, 2, 3], F32))).value
    arr = to_array(out)
    # three float32 values of order 1: their sum is within a few ulps of 1
    t.close(
        ("softmax([1, 2, 3]) 的和为 1", "softmax([1, 2, 3]) sums to 1"),
        out if arr is None else float(arr.sum()),
        1.0,
        atol=1e-6,
        hint=[
            (
                "输出加起来必须是 1：每一项都要除以所有项的总和。",
                "The outputs must add up to 1: every term is divided by the sum of all terms.",
            )
        ],
    )
    rising = arr is not None and arr.shape == (3,) and bool(np.all(np.diff(arr) > 0))
    shown = describe(out) if arr is None else str(arr.tolist())
    t.check(
        ("softmax([1, 2, 3]) 严格递增", "softmax([1, 2, 3]) is strictly increasing"),
        rising,
        tr(
            f"输入递增，输出也应递增；实际 {shown}",
            f"the input increases, so must the output; got {shown}",
        ),
        hint=[
            (
                "softmax 随 x 递增：[1, 2, 3] 的最后一个输出最大。打印你的三个值，看哪个最大。",
                "softmax grows with x: for [1, 2, 3] the last output is the largest. Print your "
                "three values and see which is largest.",
            )
        ],
    )
    out = t.call("softmax_stable", tensor_from(np.array([1000, 1001, 1002], F32))).value
    t.finite(
        (
            "softmax([1000, 1001, 1002]) 全是有限数（没有溢出）",
            "softmax([1000, 1001, 1002]) is finite (no overflow)",
        ),
        out,
        hint=[
            (
                "exp(1000) 在 float32 和 float64 里都是 inf：送进 exp "
                "的数必须很小；这个输入下最大的一项应是 exp(0) = 1。",
                "exp(1000) is inf in float32 and float64 alike: what goes into exp must stay "
                "small; for this input the largest term should be exp(0) = 1.",
            )
        ],
    )


@lab.test(
    "softmax_stable：数值正确，输入不变",
    "softmax_stable: correct values, input unchanged",
    hint=[
        (
            "先用 as_tensor 拿到输入，再在它的 float 副本上计算（np.exp、.max()、.sum()）。",
            "Get the input with as_tensor, then compute on a float copy of it (np.exp, "
            ".max(), .sum()).",
        ),
        (
            "不要原地改写输入：返回一个新的 Tensor，例如用 tensor_from。",
            "Do not overwrite the input: return a new Tensor, for example with tensor_from.",
        ),
        (
            "对带步长的视图，用 .numpy() 得到按 strides 排好的数组，不要直接读 .data。",
            "For a strided view, use .numpy() to get the array laid out by strides, not .data "
            "directly.",
        ),
    ],
)
def softmax_values(t: TestContext) -> None:
    x = np.array([1, 2, 3], dtype=F32)
    call = t.call("softmax_stable", tensor_from(x))
    t.allclose(
        (
            "softmax([1, 2, 3]) = [0.0900, 0.2447, 0.6652]",
            "softmax([1, 2, 3]) = [0.0900, 0.2447, 0.6652]",
        ),
        call.value,
        ref_softmax(x),
        atol=EPS,
        hint=[
            (
                "对 [1, 2, 3] 手算一遍：exp(x - 3) = [0.1353, 0.3679, 1]，总和 "
                "1.5032，再相除；逐步和你的代码对照。",
                "Work [1, 2, 3] by hand: exp(x - 3) = [0.1353, 0.3679, 1], sum 1.5032, then "
                "divide; compare each step with your code.",
            )
        ],
    )
    t.unchanged(
        ("输入没有被修改", "the input is left unchanged"),
        x,
        call.args[0],
        hint=[
            (
                "输入张量被改了：在新数组里计算；对 x.numpy() 的原地运算会写进调用方的存储。",
                "The input tensor changed: compute into a new array; an in-place operation on "
                "x.numpy() writes into the caller's storage.",
            )
        ],
    )
    out = t.call("softmax_stable", tensor_from(np.array([1000, 1001, 1002], F32))).value
    t.allclose(
        (
            "softmax([1000, 1001, 1002]) 与 softmax([0, 1, 2]) 相同",
            "softmax([1000, 1001, 1002]) equals softmax([0, 1, 2])",
        ),
        out,
        ref_softmax([0, 1, 2]),
        atol=EPS,
        hint=[
            (
                "对任何常数 c，softmax(x + c) = softmax(x)：[1000, 1001, 1002] 的结果必须和 [0, "
                "1, 2] 的相同，不能出现 inf 或 NaN。",
                "softmax(x + c) = softmax(x) for any constant c: the result for [1000, 1001, "
                "1002] must equal that of [0, 1, 2], with no inf or NaN.",
            )
        ],
    )
    storage = tensor_from(np.array([9, 0.5, 9, -1, 9, 2, 9, 1.5, 9], F32))
    strided = Tensor(storage.data, (4,), (2,), offset=1)  # [0.5, -1, 2, 1.5]
    out = t.call("softmax_stable", strided).value
    t.allclose(
        (
            "步长 2、offset 1 的 1 维视图 [0.5, -1, 2, 1.5]",
            "a 1-D view with stride 2 and offset 1: [0.5, -1, 2, 1.5]",
        ),
        out,
        ref_softmax([0.5, -1, 2, 1.5]),
        atol=EPS,
        hint=[
            (
                "这个张量步长 2、offset 1：它的 4 个元素是 data[1]、data[3]、data[5]、data[7]。按 "
                "strides 读元素，不要读整个 data。",
                "This tensor has stride 2 and offset 1: its 4 elements are data[1], data[3], "
                "data[5], data[7]. Read the elements through the strides, not the whole data.",
            )
        ],
    )
    rng = t.rng(101)
    xr = (rng.standard_normal(7) * 3).astype(F32)
    out = t.call("softmax_stable", tensor_from(xr)).value
    t.allclose(
        ("长度 7 的随机输入", "random input of length 7"),
        out,
        ref_softmax(xr),
        atol=EPS,
        hint=[
            (
                "随机值在 ±9 左右（seed 101）：短输入都对而这里错，就看负数输入和最大值在哪一格。",
                "Random values around ±9 (seed 101): if the short inputs pass and this fails, "
                "look at negative inputs and at where the max is.",
            )
        ],
    )
    t.views(
        (
            "同样的随机输入，作为步长 2、带 offset 的视图",
            "the same random input as a view with stride 2 and an offset",
        ),
        "softmax_stable",
        xr,
        expected=ref_softmax(xr),
        atol=EPS,
        hint=[
            (
                "和上一条检查是同样的数，只是换成非连续视图：上一条通过而这条不过，说明读到的不是"
                "这个张量的元素。",
                "The same numbers as the previous check, now as a non-contiguous view: if that "
                "one passes and this one fails, the elements read are not the tensor's own.",
            )
        ],
    )


@lab.test(
    "softmax_stable：±1e4 的输入也不出 NaN",
    "softmax_stable: inputs of ±1e4 give no NaN",
    hint=[
        (
            "±1e4 时 exp 会上溢成 inf 或下溢成 0，0/0 就是 NaN。",
            "At ±1e4, exp overflows to inf or underflows to 0, and 0/0 is NaN.",
        ),
        (
            "减去的必须是最大值（不是均值或第一个元素）：这样最大项是 exp(0) = 1，分母 ≥ 1。",
            "Subtract the max (not the mean or the first entry): the top term is exp(0) = 1, "
            "so Σ ≥ 1.",
        ),
    ],
)
def softmax_extreme(t: TestContext) -> None:
    x = np.array([1e4, 0, -1e4], dtype=F32)
    out = t.call("softmax_stable", tensor_from(x)).value
    t.finite(
        ("[1e4, 0, -1e4]：全是有限数", "[1e4, 0, -1e4]: every output is finite"),
        out,
        hint=[
            (
                "1e4 时 exp 上溢成 inf，exp(-1e4) 下溢成 0；inf/inf 或 0/0 都是 "
                "NaN。先减去最大值，指数就是 0、-1e4、-2e4。",
                "At 1e4, exp overflows to inf and exp(-1e4) underflows to 0; inf/inf or 0/0 is "
                "NaN. With the max subtracted the exponents are 0, -1e4, -2e4.",
            )
        ],
    )
    t.allclose(
        ("[1e4, 0, -1e4] → [1, 0, 0]", "[1e4, 0, -1e4] → [1, 0, 0]"),
        out,
        [1, 0, 0],
        atol=EPS,
        hint=[
            (
                "最大的输入拿走全部概率：结果应是 [1, 0, 0]（误差 1e-6 "
                "之内）。打印你的输出看看差在哪一格。",
                "The largest input takes all the probability: the result is [1, 0, 0] within "
                "1e-6. Print your output and see which cell is off.",
            )
        ],
    )
    x = np.array([-1e4, -1e4, -9999], dtype=F32)
    out = t.call("softmax_stable", tensor_from(x)).value
    t.allclose(
        (
            "[-1e4, -1e4, -9999] → [0.2119, 0.2119, 0.5761]（不是 0/0）",
            "[-1e4, -1e4, -9999] → [0.2119, 0.2119, 0.5761] (not 0/0)",
        ),
        out,
        ref_softmax(x),
        atol=EPS,
        hint=[
            (
                "三个输入都在 -1e4 附近：直接取 exp 全部下溢成 0。减去的数要让最大的一项正好是 "
                "exp(0) = 1，这里指数应是 -1、-1、0。",
                "All three inputs are near -1e4: their exp underflows to 0. What you subtract "
                "must make the top term exactly exp(0) = 1: here the exponents are -1, -1, 0.",
            )
        ],
    )


@lab.test(
    "softmax_stable：拒绝空输入和 2 维输入",
    "softmax_stable: rejects empty and 2-D input",
    hint=[
        (
            "计算前先检查：输入必须是 1 维且非空。",
            "Check before computing: the input must be 1-D and non-empty.",
        ),
        (
            "用 t.ndim 和 t.size 检查，不符合就 raise ValueError 并说出形状；[1, 3] 也是 2 维。",
            "Check t.ndim and t.size and raise ValueError naming the shape; a [1, 3] is 2-D too.",
        ),
    ],
)
def softmax_errors(t: TestContext) -> None:
    t.raises(
        ("空输入 [0] → ValueError", "empty input [0] → ValueError"),
        ValueError,
        "softmax_stable",
        tensor_from(np.zeros(0, F32)),
        hint=[
            (
                "空输入没有最大值，也没有 softmax：计算前检查元素个数，为 0 就 raise ValueError。",
                "An empty input has no max and no softmax: check the number of elements before "
                "computing and raise ValueError for 0.",
            )
        ],
    )
    t.raises(
        ("2 维 [2, 3] → ValueError", "2-D [2, 3] → ValueError"),
        ValueError,
        "softmax_stable",
        tensor_from(np.ones((2, 3), F32)),
        hint=[
            (
                "这个函数只处理 1 维输入：检查 ndim，不是 1 就 raise ValueError。",
                "This function is for 1-D input only: check ndim and raise ValueError when it is "
                "not 1.",
            )
        ],
    )
    t.raises(
        ("只有一行的 2 维 [1, 3] 也 → ValueError", "2-D [1, 3], a single row, → ValueError too"),
        ValueError,
        "softmax_stable",
        tensor_from(np.ones((1, 3), F32)),
        hint=[
            (
                "[1, 3] 只有 3 个数，但它是 2 维的：要检查维数，而不是元素个数。",
                "A [1, 3] holds 3 numbers but is 2-D: check the number of dimensions, not of "
                "elements.",
            )
        ],
    )


@lab.test(
    "numpy 数组和 Tensor 一样能用",
    "numpy arrays work as well as Tensors",
    metamorphic=True,
    hint=[
        (
            '参数也可能是 numpy 数组：先用 as_tensor(x, "name") 把它变成 Tensor。',
            "The argument may be a numpy array: turn it into a Tensor with as_tensor(x, "
            '"name") first.',
        ),
        (
            "只在 as_tensor 之后读取 Tensor 的字段，这样 ndarray 也能用。",
            "Read Tensor fields only after as_tensor, so an ndarray works as well.",
        ),
    ],
)
def accepts_arrays(t: TestContext) -> None:
    # Each call on an ndarray must give what the same call gives on a Tensor of the same
    # values (the student's own result): a bug in the computation fails the tests about it
    # (TEST 1, TEST 10), not this one. When that own result is unusable, this test waits.
    waiting: list[Any] = []
    x = np.array([[0, 1, 2], [10, 11, 12]], dtype=F32)
    base = own_number(t, "tensor_get", tensor_from(x), (1, 2))
    name = ("tensor_get 接受 ndarray：(1, 2)", "tensor_get accepts an ndarray: (1, 2)")
    hint = (
        "同样的值，给 Tensor 时能读，给 ndarray 时你的 tensor_get 出错或读出别的数：ndarray "
        "没有 offset 字段，它的 strides 按字节计；先把它转换成 Tensor，再读转换后的那个张量。",
        "Given the same values as an ndarray rather than a Tensor, your tensor_get raises or "
        "reads another number: an ndarray has no offset field and its strides count bytes; "
        "convert it to a Tensor first and read the converted tensor.",
    )
    if base is None:
        waiting.append(get_2d)
    elif call := t.returns(name, "tensor_get", x, (1, 2), hint=hint):
        number = as_number(call.value)
        t.close(name, call.value if number is None else number, base, atol=EXACT, hint=hint)
    v = np.array([1, 2, 3], dtype=F32)
    base_v = own_array(t, "softmax_stable", tensor_from(v), shape=(3,))
    name = ("softmax_stable 接受 ndarray", "softmax_stable accepts an ndarray")
    hint = (
        "同样的值，给 ndarray 而不是 Tensor 时，你的 softmax_stable 出错或结果不同：不论输入"
        "是哪种，先统一转换成 Tensor，再走同一段计算。",
        "Given the same values as an ndarray rather than a Tensor, your softmax_stable "
        "raises or returns something else: whatever the input kind, convert it to a Tensor "
        "first, then run the same computation.",
    )
    if base_v is None:
        waiting.append(softmax_values)
    elif call := t.returns(name, "softmax_stable", v, hint=hint):
        # the same float32 operations either way: equal up to a few ulps
        t.allclose(name, call.value, base_v, atol=EPS, hint=hint)
    if waiting and all(c.status == "PASS" for c in t.checks):
        t.skip_for(waiting[0])

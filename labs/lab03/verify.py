"""Lab03 checks: sinusoidal positional encoding, embedding lookup + PE, and its backward.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process, and every value is compared here, in the grader. The `Embedding` your functions
receive lives in that sandbox too; an identical one is built here to compute the expected
values. Tolerances are written at each check with the reason. Random inputs use fixed
seeds; a failure prints the seed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from framework.embedding import Embedding
from framework.tensor import tensor_from, tensor_zeros
from grader.compare import to_array
from grader.dsl import Lab, TestContext

lab = Lab("lab03", "词嵌入与位置编码", "Embeddings and positional encoding")
_PE = (
    "这一课就是亲手写出正弦位置编码",
    "this lab is about writing the sinusoidal positional encoding yourself",
)
lab.forbid("pe_sinusoidal", "framework.embedding:sinusoidal_table", why=_PE)
lab.forbid(
    "embedding_forward",
    "framework.embedding:Embedding.forward",
    "framework.embedding:sinusoidal_table",
    why=(
        "这一课就是亲手查表并加上你自己的 pe_sinusoidal",
        "this lab is about the table lookup plus your own pe_sinusoidal",
    ),
)
lab.forbid(
    "embedding_backward",
    "framework.embedding:Embedding.backward",
    why=(
        "这一课就是亲手写出 scatter-add（重复的 id 要累加）",
        "this lab is about writing the scatter-add yourself (repeated ids add up)",
    ),
)

F32 = np.float32
EMBEDDING = "framework.embedding:Embedding"
# float32 arithmetic at pos <= 1000 loses up to 6e-5 (the angle carries pos·ulp); the
# frequency bugs this lab is about are off by more than 2e-3 at every probe below
PE_TOL = 1e-4
# outputs at positions < 128: float32 PE is within 5e-6 of float64, plus one rounding of
# token + PE; a missing or misplaced term is off by 1e-2 or more
OUT_TOL = 1e-5


def ref_pe(pos: int, dim: int, hidden_dim: int) -> float:
    """The formula, in float64: i = dim // 2 shares one frequency between 2i and 2i + 1."""
    angle = pos / 10000.0 ** (2 * (dim // 2) / hidden_dim)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


def ref_pe_rows(seq_len: int, hidden_dim: int) -> np.ndarray:
    return np.array(
        [[ref_pe(p, d, hidden_dim) for d in range(hidden_dim)] for p in range(seq_len)]
    )  # (S, H)


def ref_forward(table: np.ndarray, ids: list[int]) -> np.ndarray:
    out: np.ndarray = table[ids].astype(np.float64) + ref_pe_rows(len(ids), table.shape[1])
    return out  # (S, H)


def ref_backward(vocab_size: int, ids: list[int], grad: np.ndarray) -> np.ndarray:
    out = np.zeros((vocab_size, grad.shape[1]))
    np.add.at(out, ids, grad.astype(np.float64))  # (V, H)
    return out


def sandbox_embedding(
    t: TestContext, table: np.ndarray, max_seq_len: int, zero_positions: bool = False
) -> Any:
    """An Embedding in the sandbox whose token table is `table` [V, H]."""
    v, h = table.shape
    attrs: dict[str, Any] = {"token_embedding": tensor_from(table)}
    if zero_positions:
        attrs["position_embedding"] = tensor_zeros((max_seq_len, h))
    return t.build(EMBEDDING, v, h, max_seq_len, attrs=attrs)


def random_table(t: TestContext, seed: int, shape: tuple[int, int], std: float) -> np.ndarray:
    return t.rng(seed).normal(0.0, std, size=shape).astype(F32)


def as_rows(value: Any, shape: tuple[int, int]) -> np.ndarray:
    """A student's output as a float64 array of `shape`; NaN (which never passes) otherwise."""
    arr = to_array(value)
    return arr if arr is not None and arr.shape == shape else np.full(shape, np.nan)


def pe_value(t: TestContext, pos: int, dim: int, hidden_dim: int) -> Any:
    return t.call("pe_sinusoidal", pos, dim, hidden_dim).value


@lab.test(
    "pe_sinusoidal：位置 0 与位置 1",
    "pe_sinusoidal: positions 0 and 1",
    hint=[
        (
            "位置 0 的角度是 0：偶数维是 sin(0) = 0，奇数维是 cos(0) = 1。",
            "At position 0 the angle is 0: even dims give sin(0) = 0, odd dims cos(0) = 1.",
        ),
        (
            "角度是 pos / 10000^(2i/H)，偶数维 dim = 2i 用 sin，奇数维 dim = 2i + 1 用 cos。",
            "The angle is pos / 10000^(2i/H); even dim = 2i takes sin, odd dim = 2i + 1 takes cos.",
        ),
    ],
)
def pe_position_zero(t: TestContext) -> None:
    row = [c.value for c in t.map("pe_sinusoidal", [(0, d, 64) for d in range(64)])]
    t.allclose(
        (
            "PE(0, d, 64) 对 d = 0..63 是 [0, 1, 0, 1, …]",
            "PE(0, d, 64) for d = 0..63 is [0, 1, 0, 1, …]",
        ),
        row,
        [d % 2 for d in range(64)],
        atol=PE_TOL,
        hint=[
            (
                "位置 0 的角度是 0，与频率无关：偶数维 sin(0) = 0，奇数维 cos(0) = "
                "1。看报告里最差的那一维是偶数还是奇数。",
                "At position 0 the angle is 0 whatever the frequency: even dims give sin(0) = 0, "
                "odd dims cos(0) = 1. See whether the worst dim in the report is even or odd.",
            )
        ],
    )
    t.close(
        ("PE(1, 0, 64) = sin(1) ≈ 0.841471", "PE(1, 0, 64) = sin(1) ≈ 0.841471"),
        pe_value(t, 1, 0, 64),
        math.sin(1.0),
        atol=PE_TOL,
        hint=[
            (
                "dim 0 的 i = 0，10000^0 = 1，角度就是 pos = 1：偶数维取 sin。",
                "Dim 0 has i = 0 and 10000^0 = 1, so the angle is pos itself, 1: an even dim "
                "takes the sine.",
            )
        ],
    )
    t.close(
        ("PE(1, 1, 64) = cos(1) ≈ 0.540302", "PE(1, 1, 64) = cos(1) ≈ 0.540302"),
        pe_value(t, 1, 1, 64),
        math.cos(1.0),
        atol=PE_TOL,
        hint=[
            (
                "dim 1 和 dim 0 是同一对：角度同样是 1，奇数维取 cos。",
                "Dim 1 is in one pair with dim 0: the same angle, 1, and an odd dim takes the "
                "cosine.",
            )
        ],
    )


@lab.test(
    "pe_sinusoidal：高维的频率、大位置、奇数 H",
    "pe_sinusoidal: frequencies of high dims, large positions, odd H",
    hint=[
        (
            "维 2i 与 2i + 1 是一对，共用同一个频率：指数里的 i 是这一对的编号（维 0、1 → i = 0；"
            "维 2、3 → i = 1），指数 2i/H 是 0 到 1 之间的小数。",
            "Dims 2i and 2i + 1 form a pair and share one frequency: the i in the exponent numbers "
            "the pair (dims 0, 1 → i = 0; dims 2, 3 → i = 1), and the exponent 2i/H is a fraction "
            "between 0 and 1.",
        ),
        (
            "指数是 2i / H（不是 i / H），底数是 10000，并且是 pos 除以它，不是乘以它。",
            "The exponent is 2i / H (not i / H), the base 10000, and pos is divided by it, "
            "not multiplied.",
        ),
        (
            "用 math.sin、math.cos 和 float 除法在 float64 里算；H 为奇数时公式不变。",
            "Compute in float64 with math.sin, math.cos and float division; an odd H changes "
            "nothing.",
        ),
    ],
)
def pe_frequencies(t: TestContext) -> None:
    probes = [
        (
            (10, 2, 64),
            (
                "PE(10, 2, 64) = sin(10 / 10000^(2/64)) ≈ 0.9376",
                "PE(10, 2, 64) = sin(10 / 10000^(2/64)) ≈ 0.9376",
            ),
            [
                (
                    "dim 2 是第一个频率不为 1 的维：指数 2/64 = 0.03125，角度 10 / 10000^0.03125 "
                    "≈ 7.4989。打印你算出的指数和角度来对照。",
                    "Dim 2 is the first dim whose frequency is not 1: the exponent is 2/64 = "
                    "0.03125 and the angle 10 / 10000^0.03125 ≈ 7.4989. Print your exponent and "
                    "angle and compare.",
                )
            ],
        ),
        (
            (50, 21, 64),
            (
                "PE(50, 21, 64)：奇数维 21 与 20 共用 i = 10 ≈ -0.9461",
                "PE(50, 21, 64): odd dim 21 shares i = 10 with dim 20 ≈ -0.9461",
            ),
            [
                (
                    "奇数维 21 和偶数维 20 是同一对，共用一个频率：指数应是 20/64 = 0.3125，角度 "
                    "≈ 2.8117，再取 cos。",
                    "Odd dim 21 is in one pair with even dim 20 and shares its frequency: the "
                    "exponent is 20/64 = 0.3125, the angle ≈ 2.8117, then the cosine.",
                )
            ],
        ),
        (
            (1000, 63, 64),
            (
                "PE(1000, 63, 64)：最慢的频率、大位置 ≈ 0.9911",
                "PE(1000, 63, 64): the slowest frequency, a large position ≈ 0.9911",
            ),
            [
                (
                    "最慢的一对是 dim 62、63：指数 62/64 = 0.96875，角度 1000 / 10000^0.96875 ≈ "
                    "0.13335，再取 cos。",
                    "The slowest pair is dims 62 and 63: the exponent is 62/64 = 0.96875, the "
                    "angle 1000 / 10000^0.96875 ≈ 0.13335, then the cosine.",
                )
            ],
        ),
        (
            (100, 5, 7),
            (
                "PE(100, 5, 7)：H = 7 是奇数 ≈ 0.8688",
                "PE(100, 5, 7): odd hidden size H = 7 ≈ 0.8688",
            ),
            [
                (
                    "H = 7 时 dim 5 和 dim 4 是一对：指数 4/7 ≈ 0.5714，角度 ≈ 0.51795，再取 "
                    "cos；H 为奇数公式不变。",
                    "With H = 7, dim 5 pairs with dim 4: the exponent is 4/7 ≈ 0.5714, the angle "
                    "≈ 0.51795, then the cosine; an odd H changes nothing.",
                )
            ],
        ),
        (
            (3, 6, 7),
            (
                "PE(3, 6, 7)：H 为奇数时最后一维是 sin ≈ 0.0011",
                "PE(3, 6, 7): with an odd H the last dim is a sine ≈ 0.0011",
            ),
            [
                (
                    "H = 7 的最后一维 6 是偶数，取 sin：指数 6/7 ≈ 0.8571，角度 3 / 10000^0.8571 "
                    "≈ 0.0011183。",
                    "The last dim of H = 7, dim 6, is even and takes the sine: the exponent is "
                    "6/7 ≈ 0.8571, the angle 3 / 10000^0.8571 ≈ 0.0011183.",
                )
            ],
        ),
    ]
    for (pos, dim, h), name, hint in probes:
        t.close(name, pe_value(t, pos, dim, h), ref_pe(pos, dim, h), atol=PE_TOL, hint=hint)
    rng = t.rng(303)
    sweep: list[tuple[int, int, int]] = []
    for _ in range(24):
        h = int(rng.choice([8, 9, 16, 64, 128]))
        sweep.append((int(rng.integers(0, 1001)), int(rng.integers(0, h)), h))
    got = [c.value for c in t.map("pe_sinusoidal", sweep)]
    want = [ref_pe(pos, dim, h) for pos, dim, h in sweep]
    t.allclose(
        ("24 个随机 (pos, dim, H)，pos ≤ 1000", "24 random (pos, dim, H) probes, pos ≤ 1000"),
        got,
        want,
        atol=PE_TOL,
        hint=[
            (
                "上面 5 个探针都过了而这里错：报告里最差的第 k 个探针来自 seed "
                "303；单独算它的指数 2i/H 和角度。",
                "If the five probes above pass and this fails: the report's worst probe k comes "
                "from seed 303; work out its exponent 2i/H and angle on their own.",
            )
        ],
    )


@lab.test(
    "embedding_forward：词向量行 + 该位置的 PE",
    "embedding_forward: token row + PE of its position",
    requires=[pe_position_zero, pe_frequencies],
    hint=[
        (
            "输出第 pos 行是 token_embedding 的第 ids[pos] 行加上位置 pos 的 PE。",
            "Row pos of the output is row ids[pos] of token_embedding plus the PE of position pos.",
        ),
        (
            "PE 按位置 0, 1, 2, … 取，而不是按 id 取；输出形状是 [len(ids), H]。",
            "Take the PE by position 0, 1, 2, …, not by id; the output shape is [len(ids), H].",
        ),
        (
            "别原地加到词表上：先复制查到的行（例如用 numpy 的花式索引），再加 PE。",
            "Do not add into the table: copy the rows you look up (numpy fancy indexing "
            "does), then add.",
        ),
    ],
)
def forward_values(t: TestContext) -> None:
    table = random_table(t, 3003, (50, 8), 0.5)
    emb = sandbox_embedding(t, table, 16)
    ids = [3, 17, 3, 49, 0, 17, 8]
    out = t.call("embedding_forward", emb, ids).value
    t.shape(
        ("7 个 id、H = 8 → 形状 [7, 8]", "7 ids, H = 8 → shape [7, 8]"),
        out,
        (7, 8),
        hint=[
            (
                "输出每个位置一行、每行 H 个数：形状是 [len(ids), H] = [7, "
                "8]；报告给出你返回的形状。",
                "The output has one row per position and H numbers per row: shape [len(ids), H] = "
                "[7, 8]; the report shows the shape you returned.",
            )
        ],
    )
    t.allclose(
        (
            "out[pos] = token_embedding[ids[pos]] + PE(pos)（id 有重复、不按顺序）",
            "out[pos] = token_embedding[ids[pos]] + PE(pos) (repeated, unordered ids)",
        ),
        out,
        ref_forward(table, ids),
        atol=OUT_TOL,
        hint=[
            (
                "报告给出最差的格子 (pos, d)：分别打印 token_embedding[ids[pos]][d] 和 "
                "pe_sinusoidal(pos, d, 8)，看哪一项不在你的结果里。",
                "The report names the worst cell (pos, d): print token_embedding[ids[pos]][d] and "
                "pe_sinusoidal(pos, d, 8) separately and see which term is missing from your "
                "result.",
            )
        ],
    )
    t.unchanged(
        ("emb.token_embedding 没有被修改", "emb.token_embedding is left unchanged"),
        table,
        t.getattr(emb, "token_embedding"),
        hint=[
            (
                "emb.token_embedding 被改了：前向只读词表；找出哪一步把结果写回了表里（numpy "
                "的单行下标得到的是视图）。",
                "emb.token_embedding changed: the forward pass only reads the table; find the "
                "step that writes back into it (a single-row numpy index is a view).",
            )
        ],
    )
    reference = Embedding(50, 8, 16)
    reference.token_embedding = tensor_from(table)
    out = t.call("embedding_forward", emb, [49]).value
    t.allclose(
        (
            "只有一个 token：等于框架的 Embedding.forward([49])",
            "a single token: equals the framework's Embedding.forward([49])",
        ),
        out,
        reference.forward([49]).numpy(),
        atol=OUT_TOL,
        hint=[
            (
                "只有一个 token、在位置 0：输出是 token_embedding[49] + PE(0)，而 PE(0) = [0, 1, "
                "0, 1, …]。",
                "A single token at position 0: the output is token_embedding[49] + PE(0), and "
                "PE(0) = [0, 1, 0, 1, …].",
            )
        ],
    )


@lab.test(
    "embedding_forward：位置与 token 都能区分",
    "embedding_forward: positions and tokens both tell apart",
    requires=[pe_position_zero, pe_frequencies],
    hint=[
        (
            "同一个 token 在不同位置应得到不同的行：两行之差只来自 PE。",
            "The same token at different positions must give different rows: only the PE differs.",
        ),
        (
            "每个位置只加自己的 PE 一次，并且查的是 ids[pos] 那一行。",
            "Add each position's own PE exactly once, to the row of ids[pos].",
        ),
    ],
)
def forward_distinguishes(t: TestContext) -> None:
    # the course's sizes (V 260, H 64, max_seq_len 128); 'H' is byte 72 → id 76, 'i' → 109
    table = random_table(t, 76, (260, 64), 0.02)
    emb = sandbox_embedding(t, table, 128)
    out = t.call("embedding_forward", emb, [76, 76, 76]).value
    t.shape(
        ("3 个 id、H = 64 → 形状 [3, 64]", "3 ids, H = 64 → shape [3, 64]"),
        out,
        (3, 64),
        hint=[
            (
                "3 个位置、H = 64：输出形状是 [3, 64]，每个位置一行；报告给出你返回的形状。",
                "3 positions and H = 64: the output shape is [3, 64], one row per position; the "
                "report shows the shape you returned.",
            )
        ],
    )
    rows, pe = as_rows(out, (3, 64)), ref_pe_rows(3, 64)
    # a difference of two outputs: twice the output tolerance
    t.allclose(
        (
            "同一 token（76）在位置 0 和 2：两行之差正好是 PE(2) − PE(0)",
            "the same token (76) at positions 0 and 2: rows differ by exactly PE(2) − PE(0)",
        ),
        rows[2] - rows[0],
        pe[2] - pe[0],
        atol=2 * OUT_TOL,
        hint=[
            (
                "同一个 token 的两行只差在位置：差值应是 PE(2) − PE(0)，不为 0。差值为 0 "
                "或不对，就看 PE 是按什么取的。",
                "Two rows of the same token differ only by position: the difference is PE(2) − "
                "PE(0), not 0. If yours is 0 or off, look at what the PE is indexed by.",
            )
        ],
    )
    a = as_rows(t.call("embedding_forward", emb, [76]).value, (1, 64))
    b = as_rows(t.call("embedding_forward", emb, [109]).value, (1, 64))
    # a difference of two outputs: twice the output tolerance
    t.allclose(
        (
            "不同 token（76 与 109）都在位置 0：两行之差正好是两个词向量之差",
            "different tokens (76, 109) both at position 0: rows differ by exactly "
            "table[76] − table[109]",
        ),
        a[0] - b[0],
        table[76].astype(np.float64) - table[109],
        atol=2 * OUT_TOL,
        hint=[
            (
                "两个 token 都在位置 0，PE 相同：差别只能来自词向量 table[76] − "
                "table[109]。差值为 0，就看查表用的是不是 id。",
                "Both tokens are at position 0 with the same PE: the difference can only come "
                "from the rows table[76] − table[109]. If yours is 0, check that the lookup uses "
                "the id.",
            )
        ],
    )


@lab.test(
    "embedding_forward：自己算 PE，不读 emb.position_embedding",
    "embedding_forward: computes PE itself, not from emb.position_embedding",
    requires=[pe_position_zero, pe_frequencies],
    hint=[
        (
            "PE 要用你自己的 pe_sinusoidal 算，不要读 emb.position_embedding。",
            "Compute the PE with your own pe_sinusoidal, not from emb.position_embedding.",
        ),
        (
            "对每个位置 pos 和每一维 d 调用 pe_sinusoidal(pos, d, H)，组成 [S, H] 的表。",
            "Call pe_sinusoidal(pos, d, H) for every position pos and dim d to build an [S, "
            "H] table.",
        ),
    ],
)
def forward_own_pe(t: TestContext) -> None:
    table = random_table(t, 3033, (50, 8), 0.5)
    emb = sandbox_embedding(t, table, 16, zero_positions=True)
    ids = [5, 4, 3, 2, 1]
    out = t.call("embedding_forward", emb, ids).value
    t.allclose(
        (
            "emb.position_embedding 被清零后，输出仍含 pe_sinusoidal 的 PE",
            "with emb.position_embedding zeroed, the output still holds pe_sinusoidal's PE",
        ),
        out,
        ref_forward(table, ids),
        atol=OUT_TOL,
        hint=[
            (
                "这里 emb.position_embedding 已被清零：输出里的 PE 只能来自你的 pe_sinusoidal。",
                "Here emb.position_embedding is zeroed: the PE in the output can only come from "
                "your pe_sinusoidal.",
            )
        ],
    )


@lab.test(
    "embedding_forward：拒绝越界的 id 和过长的序列",
    "embedding_forward: rejects out-of-range ids and too-long sequences",
    hint=[
        (
            "先检查输入：每个 id 在 [0, vocab_size) 里，序列长度不超过 max_seq_len。",
            "Check the input first: each id in [0, vocab_size), length at most max_seq_len.",
        ),
        (
            "负 id 在 numpy 里会悄悄取最后一行，所以必须自己 raise ValueError。",
            "A negative id quietly takes the last row in numpy, so raise ValueError yourself.",
        ),
        (
            "长度等于 max_seq_len 是允许的：用 len(ids) > max_seq_len 判断过长。",
            "A length equal to max_seq_len is allowed: too long means len(ids) > max_seq_len.",
        ),
    ],
)
def forward_errors(t: TestContext) -> None:
    table = random_table(t, 3004, (50, 8), 0.5)
    emb = sandbox_embedding(t, table, 16)
    t.raises(
        ("id = 50 = vocab_size → ValueError", "id = 50 = vocab_size → ValueError"),
        ValueError,
        "embedding_forward",
        emb,
        [1, 50, 2],
        hint=[
            (
                "50 = vocab_size 已经越界：合法的 id 在 [0, 50)；先检查每个 id，再查表。",
                "50 = vocab_size is already out of range: valid ids lie in [0, 50); check every "
                "id before the lookup.",
            )
        ],
    )
    t.raises(
        (
            "id = -1 → ValueError（numpy 会悄悄取最后一行）",
            "id = -1 → ValueError (numpy would quietly take the last row)",
        ),
        ValueError,
        "embedding_forward",
        emb,
        [1, -1, 2],
        hint=[
            (
                "-1 不在 [0, vocab_size) 里：numpy 会把它当作最后一行，所以要你自己拒绝它。",
                "-1 is not in [0, vocab_size): numpy would take it as the last row, so you must "
                "reject it yourself.",
            )
        ],
    )
    t.raises(
        ("17 个 id > max_seq_len = 16 → ValueError", "17 ids > max_seq_len = 16 → ValueError"),
        ValueError,
        "embedding_forward",
        emb,
        [7] * 17,
        hint=[
            (
                "17 个 id 超过了 max_seq_len = 16：计算之前先检查序列长度。",
                "17 ids exceed max_seq_len = 16: check the sequence length before computing.",
            )
        ],
    )
    ids = [i % 50 for i in range(0, 80, 5)]
    out = t.attempt("embedding_forward", emb, ids)
    message = out.error.message
    t.check(
        ("正好 16 = max_seq_len 个 id 是允许的", "exactly 16 = max_seq_len ids are allowed"),
        out.ok,
        (f"不应报错，实际抛出：{message}", f"must not raise, but raised: {message}"),
        hint=[
            (
                "长度正好等于 max_seq_len 是允许的：过长指的是严格大于。",
                "A length equal to max_seq_len is allowed: too long means strictly greater.",
            )
        ],
    )
    if out.ok:
        t.allclose(
            ("16 个 id 的结果正确", "the result for 16 ids is right"),
            out.value,
            ref_forward(table, ids),
            atol=OUT_TOL,
            hint=[
                (
                    "16 个 id "
                    "的调用没有报错，结果却不对：这和前面的前向测试是同一个计算，先让它们通过。",
                    "The call with 16 ids returned, but with a wrong result: it is the same "
                    "computation as the forward tests above; make them pass first.",
                )
            ],
        )


@lab.test(
    "embedding_backward：重复的 id 梯度累加",
    "embedding_backward: repeated ids accumulate",
    hint=[
        (
            "梯度形状与词表相同 [V, H]：从全零开始，把 grad_out 的第 pos 行加到第 ids[pos] 行。",
            "The gradient has the table's shape [V, H]: start from zeros, add row pos of "
            "grad_out into row ids[pos].",
        ),
        (
            "重复的 id 要累加：grad[ids] += grad_out 只会保留最后一次，用 np.add.at。",
            "Repeated ids add up: grad[ids] += grad_out keeps only the last one, use np.add.at.",
        ),
    ],
)
def backward_repeated(t: TestContext) -> None:
    table = (np.arange(400, dtype=F32) / 400).reshape(50, 8)  # the values play no part
    emb = sandbox_embedding(t, table, 16)
    ids = [0, 2, 2]
    grad = t.call("embedding_backward", emb, ids, tensor_from(np.ones((3, 8), F32))).value
    t.shape(
        ("梯度形状是词表的形状 [50, 8]", "the gradient has the table's shape [50, 8]"),
        grad,
        (50, 8),
        hint=[
            (
                "这是对词表的梯度：形状和词表一样，[V, H] = [50, 8]，每个 token id "
                "一行；报告给出你返回的形状。",
                "This is the table's gradient: the table's shape, [V, H] = [50, 8], one row per "
                "token id; the report shows the shape you returned.",
            )
        ],
    )
    arr = to_array(grad)
    if arr is not None and arr.shape == (50, 8):  # else the shape check above says why
        # sums of ones are exact in float32
        t.allclose(
            (
                "ids [0, 2, 2]、grad_out 全 1：第 2 行出现两次 → 2",
                "ids [0, 2, 2], grad_out all ones: row 2 appears twice → 2",
            ),
            arr[2],
            np.full(8, 2.0),
            atol=0.0,
            hint=[
                (
                    "id 2 出现两次，第 2 行要收到两份梯度：1 + 1 = 2。得到 "
                    "1，说明有一份被覆盖或丢掉了。",
                    "Id 2 appears twice, so row 2 receives two gradients: 1 + 1 = 2. Getting 1 "
                    "means one of them was overwritten or lost.",
                )
            ],
        )
        t.allclose(
            ("第 1 行没出现 → 0", "row 1 never appears → 0"),
            arr[1],
            np.zeros(8),
            atol=0.0,
            hint=[
                (
                    "id 1 没有出现：第 1 行从 0 开始，没有任何位置的梯度加到它上面。",
                    "Id 1 never appears: row 1 starts at 0 and no position adds anything to it.",
                )
            ],
        )
    t.allclose(
        (
            "整个梯度：第 0 行为 1、第 2 行为 2、其余为 0",
            "the whole gradient: 1 in row 0, 2 in row 2, 0 elsewhere",
        ),
        grad,
        ref_backward(50, ids, np.ones((3, 8))),
        atol=0.0,
        hint=[
            (
                "逐行对照：第 r 行是所有 ids[pos] == r 的 grad_out[pos] 之和；报告给出最差的格子。",
                "Compare row by row: row r is the sum of grad_out[pos] over the positions with "
                "ids[pos] == r; the report names the worst cell.",
            )
        ],
    )
    g = t.rng(3006).standard_normal((7, 8)).astype(F32)
    ids = [3, 17, 3, 49, 0, 17, 8]
    grad = t.call("embedding_backward", emb, ids, tensor_from(g)).value
    # each cell sums at most two float32 values of order 1: a few ulps
    t.allclose(
        (
            "随机 grad_out [7, 8]，id 有重复：等于 scatter-add",
            "random grad_out [7, 8] with repeated ids: equals the scatter-add",
        ),
        grad,
        ref_backward(50, ids, g),
        atol=1e-6,
        hint=[
            (
                "取报告里最差的那一行 r：列出 ids 中等于 r 的位置，把它们的 grad_out "
                "行手工加起来对照。",
                "Take the worst row r of the report: list the positions whose id is r and add "
                "their grad_out rows by hand to compare.",
            )
        ],
    )


@lab.test(
    "embedding_backward：与有限差分一致",
    "embedding_backward: agrees with finite differences",
    requires=[forward_values],
    hint=[
        (
            "embedding_forward 对词表是线性的：每一行的梯度就是用到它的那些 grad_out 行之和。",
            "embedding_forward is linear in the table: a row's gradient sums the grad_out "
            "rows using it.",
        ),
        (
            "PE 不依赖词表，所以对梯度没有贡献：不要把 PE 加进梯度。",
            "The PE does not depend on the table, so it adds nothing to the gradient.",
        ),
    ],
)
def backward_gradcheck(t: TestContext) -> None:
    rng = t.rng(3007)
    table = rng.normal(0.0, 0.5, size=(50, 8)).astype(F32)
    ids = [0, 2, 2, 5]
    g = rng.standard_normal((4, 8))  # loss = Σ forward(ids) ⊙ G

    def loss(w: np.ndarray) -> float:
        out = t.call("embedding_forward", sandbox_embedding(t, w, 16), ids).value
        return float(np.sum(as_rows(out, (4, 8)) * g))

    eps = 1e-2
    entries = [(2, 3), (1, 0), (0, 7), (5, 4)]
    numeric = []
    for r, c in entries:
        plus, minus = table.copy(), table.copy()
        plus[r, c] += eps
        minus[r, c] -= eps
        step = float(plus[r, c]) - float(minus[r, c])  # the float32 step actually taken
        numeric.append((loss(plus) - loss(minus)) / step)
    emb = sandbox_embedding(t, table, 16)
    grad = t.call("embedding_backward", emb, ids, tensor_from(g.astype(F32))).value
    arr = as_rows(grad, (50, 8))
    analytic = [arr[r, c] for r, c in entries]
    # the loss is linear in W: only float32 rounding of the perturbed cells remains (≈ 3e-6)
    t.allclose(
        (
            "(L(W+ε) − L(W−ε)) / 2ε 在 4 个元素上等于 embedding_backward 的梯度",
            "(L(W+ε) − L(W−ε)) / 2ε at 4 entries equals embedding_backward's gradient",
        ),
        analytic,
        numeric,
        atol=1e-4,
        hint=[
            (
                "数值梯度来自你的 embedding_forward，解析梯度来自你的 "
                "embedding_backward：两者不一致时，先看前面的前向和反向测试是否都通过。",
                "The numeric gradient comes from your embedding_forward, the analytic one from "
                "your embedding_backward: if they disagree, first see whether the forward and "
                "backward tests above pass.",
            )
        ],
    )


def own_result(
    t: TestContext, fn: str, args: tuple[Any, ...], shape: tuple[int, int], core: Any
) -> np.ndarray:
    """The student's own `fn(*args)` on plain Tensors and lists, for a metamorphic check.

    Ends the test as SKIP ("fix `core` first") when that result is not usable: it raised,
    called a forbidden framework function (`core` says so), has another shape or is not
    finite. A TODO, timeout or crash ends the test as such.
    """
    out = t.attempt(fn, *args)
    if out.kind.name == "FORBIDDEN":
        t.skip_for(core)
    t.unless_raised(fn, out)
    arr = to_array(out.value) if out.ok else None
    if arr is None or arr.shape != shape or not np.isfinite(arr).all():
        t.skip_for(core)
    return arr


@lab.test(
    "numpy 数组和 Tensor 一样能用",
    "numpy arrays work as well as Tensors",
    metamorphic=True,
    hint=[
        (
            "grad_out 也可能是 ndarray，ids 也可能是 numpy 整数数组。",
            "grad_out may be an ndarray, and ids a numpy int array.",
        ),
        (
            "先用 as_tensor 转换 grad_out，把 ids 转成 int 列表或数组再检查范围。",
            "Convert grad_out with as_tensor, and turn ids into ints before checking their range.",
        ),
    ],
)
def accepts_arrays(t: TestContext) -> None:
    # metamorphic: each call with numpy input must equal your own call with a Tensor and a
    # list, so a wrong gradient or forward fails its own test and not this one
    # every call gets an embedding of its own: a call that writes into emb must not
    # change the next one's input
    table = (np.arange(40, dtype=F32) / 40).reshape(10, 4)
    ids = [3, 1, 3]
    grad_out = np.arange(12, dtype=F32).reshape(3, 4)
    own_grad = own_result(
        t,
        "embedding_backward",
        (sandbox_embedding(t, table, 8), ids, tensor_from(grad_out)),
        (10, 4),
        backward_repeated,
    )
    own_out = own_result(
        t, "embedding_forward", (sandbox_embedding(t, table, 8), ids), (3, 4), forward_values
    )
    name = (
        "embedding_backward 接受 ndarray 的 grad_out",
        "embedding_backward accepts an ndarray grad_out",
    )
    emb = sandbox_embedding(t, table, 8)
    if call := t.returns(name, "embedding_backward", emb, ids, grad_out):
        # the same float32 values summed the same way: only the order of the adds may differ
        t.allclose(
            name,
            call.value,
            own_grad,
            atol=1e-6,
            hint=(
                "ndarray 的 grad_out 得到的梯度和同样数值的 Tensor 不同：先把 grad_out 转成同一种"
                "Tensor，再用同一段代码计算。",
                "An ndarray grad_out gives another gradient than a Tensor with the same values: "
                "turn grad_out into one kind of Tensor first, then compute with the same code.",
            ),
        )
    name = (
        "embedding_forward 接受 numpy 整数数组作为 ids",
        "embedding_forward accepts a numpy int array of ids",
    )
    emb = sandbox_embedding(t, table, 8)
    if call := t.returns(name, "embedding_forward", emb, np.array(ids)):
        t.allclose(
            name,
            call.value,
            own_out,
            atol=OUT_TOL,  # the same lookup and PE; a student may sum in another order
            hint=(
                "numpy 整数数组的 ids 得到的输出和 Python 列表不同：把每个 id 当作普通的 int 来"
                "检查和查表。",
                "A numpy int array of ids gives another output than a Python list: check and "
                "look up each id as a plain int.",
            ),
        )


@lab.test(
    "embedding_backward：非连续的 grad_out",
    "embedding_backward: a non-contiguous grad_out",
    metamorphic=True,
    hint=[
        (
            "grad_out 可能是非连续的视图：它的元素要按 strides 和 offset 读取。",
            "grad_out may be a non-contiguous view: read its elements through strides and offset.",
        ),
        (
            "用 as_tensor(grad_out).numpy() 读取 grad_out，这样非连续视图也正确。",
            "Read grad_out through as_tensor(grad_out).numpy() so a non-contiguous view works too.",
        ),
    ],
)
def backward_views(t: TestContext) -> None:
    # metamorphic: the view call must equal your own call on the same values, contiguous
    table = (np.arange(400, dtype=F32) / 400).reshape(50, 8)  # the values play no part
    g = t.rng(3006).standard_normal((7, 8)).astype(F32)
    ids = [3, 17, 3, 49, 0, 17, 8]
    own = own_result(
        t,
        "embedding_backward",
        (sandbox_embedding(t, table, 16), ids, tensor_from(g)),
        (50, 8),
        backward_repeated,
    )
    emb = sandbox_embedding(t, table, 16)  # a fresh one: the first call may have written
    t.views(
        (
            "grad_out 是非连续视图（列主序、带 offset）时结果也对",
            "correct when grad_out is a non-contiguous view (column-major, offset)",
        ),
        "embedding_backward",
        emb,
        ids,
        g,
        expected=own,
        atol=1e-6,  # each cell sums at most two float32 values of order 1: a few ulps
        hint=(
            "连续的 grad_out 得到的梯度是对的，同样的数换成非连续视图就不对了：按 strides 和 "
            "offset "
            "读 grad_out 的元素，不要直接读它的 data。",
            "A contiguous grad_out gives one gradient and the same values as a non-contiguous "
            "view another: read grad_out's elements through strides and offset, not its data "
            "directly.",
        ),
    )

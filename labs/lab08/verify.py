"""Lab08 checks: greedy, temperature and top-k sampling, judged by their distributions.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process. A sampler is random, so one draw proves nothing: these checks call your function
100 to 2000 times in one round trip, each call with its own seeded generator
(`np.random.default_rng([seed, i])`), count how often each index comes out, and compare the
frequencies with the exact probabilities. Any correct method passes (`rng.choice`, an
inverse CDF, Gumbel-max); no check expects one particular draw.

Tolerance of every frequency check: 5 binomial standard deviations plus 4 draws,
5·√(p(1-p)/n) + 4/n (the 4 draws matter only for rare indices, where a count of a few is
far from normal). Computed with the exact binomial distribution, a correct sampler lands
outside it with probability below 3e-7 per index and 1e-5 for the whole lab (its 48 indices
of probability between 0 and 1), while a temperature that multiplies misses by 25σ or more
and a top-k that falls back to greedy by 11σ or more (greedy draws are not random, so that
miss is certain). An index of probability 0 has tolerance 0: a single draw there fails the
check.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from framework import Tensor, tensor_from
from grader.dsl import Lab, Seeded, TestContext, tr
from grader.views import strided

lab = Lab("lab08", "文本生成", "Text generation")
SAMPLERS = tuple(
    f"framework.sampling:{name}"
    for name in (
        "sample_greedy", "sample_temperature", "sample_top_k", "sample_top_p", "sample",
        "probabilities", "draw", "top_k_mask", "top_p_mask", "check_logits",
    )
)  # fmt: skip
for _fn in ("sample_greedy", "sample_temperature", "sample_top_k"):
    lab.forbid(
        _fn, *SAMPLERS,
        why=("这一课就是亲手写出采样器", "this lab is about writing the samplers yourself"),
    )  # fmt: skip

F32 = np.float32
SIGMAS = 5.0  # see the module docstring
SLACK = 4  # draws added to every tolerance of an index of probability in (0, 1)

HINT_GREEDY = (
    "只在遇到严格更大的值时更新（`>` 而不是 `>=`），或者直接用 np.argmax：它返回第一个最大值",
    "update only on a strictly larger value (`>`, not `>=`), or use np.argmax: it returns the "
    "first maximum",
)
HINT_RULES = [
    (
        "先检查再计算：1 维、非空、没有 NaN，否则 ValueError；在 as_tensor(...).numpy() 的副本上算",
        "check first: 1-D, non-empty, no NaN, else ValueError; compute on a copy of "
        "as_tensor(...).numpy()",
    ),
    (
        "随机数只能来自 rng 参数（rng.random()、rng.choice、rng.gumbel），"
        "不要用 np.random.* 或 random",
        "every random number comes from the rng argument (rng.random(), rng.choice, rng.gumbel), "
        "never np.random.* or random",
    ),
]
HINT_SOFTMAX = (
    "p = exp((x - max) / T) / Σ：除以 T（不是乘），减去最大值，再归一化；"
    "然后用一个 u = rng.random() 在累积分布里找第一个 > u·总和 的下标",
    "p = exp((x - max) / T) / Σ: divide by T (not multiply), subtract the max, normalise; then "
    "find the first index whose cumulative sum exceeds u·total for one u = rng.random()",
)
HINT_T0 = (
    "T ≤ 0 时直接返回 sample_greedy(logits)，不要当作 T = 1，也不要除以 0",
    "for T ≤ 0 return sample_greedy(logits): not T = 1, and no division by 0",
)
HINT_SMALL_T = (
    "是除以 T，不是乘以 T；先减去最大值再除：exp((x − max) / T) 在 T = 1e-6 时也不会溢出",
    "divide by T, do not multiply; subtract the max before dividing: exp((x − max) / T) does "
    "not overflow even at T = 1e-6",
)
HINT_TOPK = (
    "在副本里把最大的 k 个之外全设成 -inf，再交给 sample_temperature；"
    "exp(-inf) = 0，它们不会被抽到",
    "in a copy, set all but the k largest to -inf, then call sample_temperature; exp(-inf) = 0, "
    "so they are never drawn",
)
HINT_TIES = (
    "阈值写法 x >= 第 k 大的值 会把并列的都留下；"
    '用稳定排序 np.argsort(-x, kind="stable") 取前 k 个下标',
    "a threshold x >= k-th largest keeps every tie; take the first k indices of the stable sort "
    'np.argsort(-x, kind="stable")',
)
HINT_NOFILTER = (
    "k ≤ 0 或 k ≥ V 时不过滤：照常按温度抽样，而不是退回贪心",
    "k ≤ 0 or k ≥ V means no filter: sample with the temperature as usual, not greedily",
)
HINT_TOPK_T = (
    "过滤之后把 temperature 原样传给 sample_temperature（T ≤ 0 也由它处理成贪心）",
    "after the cut, pass the temperature on to sample_temperature unchanged (it turns T ≤ 0 "
    "into greedy)",
)


def softmax(x: Any, temperature: float = 1.0) -> np.ndarray:
    z = np.asarray(x, dtype=np.float64) / temperature
    e = np.exp(z - z.max())
    return e / e.sum()  # type: ignore[no-any-return]


def logits_of(values: list[float]) -> Tensor:
    return tensor_from(np.array(values, dtype=F32))


def _ids(t: TestContext, values: list[Any], v: int) -> np.ndarray | None:
    """The draws as an int array, after checking each is an int in [0, V); else FAIL."""
    for x in values:
        if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < v:
            t.check(
                ("每次返回的都是 [0, V) 内的 int", "every draw is an int in [0, V)"),
                False,
                tr(
                    f"V = {v}，却返回了 {x!r}（{type(x).__name__}）",
                    f"V = {v}, but a call returned {x!r} ({type(x).__name__})",
                ),
            )
            return None
    return np.asarray(values, dtype=np.int64)


def draws(t: TestContext, fn: str, args: tuple[Any, ...], n: int, seed: int) -> np.ndarray | None:
    """`fn(*args, rng)` n times, each with its own generator default_rng([seed, i])."""
    calls = [(*args, Seeded((*t.entropy(seed), i))) for i in range(n)]  # built in the sandbox
    return _ids(t, [c.value for c in t.map(fn, calls, return_args=False)], int(args[0].size))


def proportions(
    t: TestContext,
    name: tuple[str, str],
    got: np.ndarray | None,
    probs: np.ndarray,
    hint: tuple[str, str] | None = None,
) -> bool:
    """Each index's frequency within SIGMAS binomial standard deviations of its probability."""
    if got is None:
        return t.check(name, False, tr("返回值不是合法的下标", "the draws are not valid indices"))
    n = got.size
    freq = np.bincount(got, minlength=probs.size) / n
    tol = SIGMAS * np.sqrt(probs * (1 - probs) / n) + np.where(probs % 1 > 0, SLACK / n, 0.0)
    bad = np.flatnonzero(np.abs(freq - probs) > tol)
    rows = "\n".join(
        f"  [{i}] {probs[i]:.4f}  {freq[i]:.4f}  ±{tol[i]:.4f}{'  ✗' if i in bad else ''}"
        for i in range(probs.size)
    )
    return t.check(
        name,
        bad.size == 0,
        tr(
            f"{n} 次抽样，下标 {bad.tolist()} 的频率超出容差（5σ + 4/n）：\n"
            "  下标 期望概率 实际频率 容差\n" + rows,
            f"{n} draws; the frequency of index {bad.tolist()} is outside the tolerance "
            "(5σ + 4/n):\n  index expected observed tolerance\n" + rows,
        ),
        hint=hint,
    )


def reproducible(t: TestContext, fn: str, args: tuple[Any, ...], seed: int) -> None:
    """Two sweeps with identically seeded generators give identical draws."""
    calls = [(*args, Seeded((*t.entropy(seed), i))) for i in range(40)]
    runs = [[c.value for c in t.map(fn, calls, return_args=False)] for _ in range(2)]
    t.check(
        (
            "同样的生成器状态 → 同样的结果（40 个种子，各抽两次）",
            "the same generator state gives the same draw (40 seeds, each twice)",
        ),
        runs[0] == runs[1],
        tr(
            f"第一轮 {runs[0][:12]}…，第二轮 {runs[1][:12]}…：随机性要全部来自 rng 参数，"
            "不要用 np.random.*、random 模块或时间",
            f"first sweep {runs[0][:12]}…, second {runs[1][:12]}…: all randomness must come "
            "from the rng argument, not np.random.*, the random module or the clock",
        ),
    )


def input_rules(t: TestContext, fn: str, extra: tuple[Any, ...]) -> None:
    """Logits left unchanged; NaN and empty logits raise ValueError; ndarray accepted."""
    values = [1.0, 5.0, 2.0, 4.0, 0.0]
    rng = np.random.default_rng(8)
    call = t.call(fn, logits_of(values), *extra, rng)
    t.unchanged(
        ("logits 没有被修改", "the logits are left unchanged"), np.array(values, F32), call.args[0]
    )
    t.raises(
        ("logits 含 NaN → ValueError", "logits holding NaN → ValueError"),
        ValueError,
        fn,
        logits_of([1.0, float("nan"), 2.0]),
        *extra,
        rng,
    )
    t.raises(
        ("空的 logits → ValueError", "empty logits → ValueError"),
        ValueError,
        fn,
        logits_of([]),
        *extra,
        rng,
    )
    name = ("接受 numpy 数组", "accepts a numpy array")
    if out := t.returns(name, fn, np.array([0.0, 0.0, 60.0, 0.0], F32), *extra, rng):
        t.equal(name, out.value, 2)  # p(2) > 1 - 1e-36 at T = 0.7
    name = ("logits 是非连续视图时也对", "correct when the logits are a non-contiguous view")
    if out := t.returns(name, fn, strided(np.array([0.0, 60.0, 0.0, 0.0], F32)), *extra, rng):
        t.equal(name, out.value, 1)  # p(1) > 1 - 1e-36 at T = 0.7


@lab.test("sample_greedy：第一个最大值", "sample_greedy: the first maximum", hint=HINT_GREEDY)
def greedy_first_max(t: TestContext) -> None:
    out = t.call("sample_greedy", logits_of([1, 2, 5, 7, 3])).value
    t.equal(("[1, 2, 5, 7, 3] → 3", "[1, 2, 5, 7, 3] → 3"), out, 3)
    out = t.call("sample_greedy", logits_of([4, 4, 4])).value
    t.equal(("并列 [4, 4, 4] → 0（第一个）", "tie [4, 4, 4] → 0 (the first)"), out, 0)
    out = t.call("sample_greedy", logits_of([0.5, 1.5, 0.5, 1.5])).value
    t.equal(
        (
            "并列最大值不在开头：[0.5, 1.5, 0.5, 1.5] → 1",
            "tied maximum not at the start: [0.5, 1.5, 0.5, 1.5] → 1",
        ),
        out,
        1,
    )
    out = t.call("sample_greedy", logits_of([-3.0, -1.0, -2.0])).value
    t.equal(("全是负数：[-3, -1, -2] → 1", "all negative: [-3, -1, -2] → 1"), out, 1)
    out = t.call("sample_greedy", logits_of([-np.inf, 2.0, 9.0])).value
    t.equal(("含 -inf：[-inf, 2, 9] → 2", "with -inf: [-inf, 2, 9] → 2"), out, 2)


@lab.test("sample_greedy：输入规则", "sample_greedy: input rules", hint=HINT_RULES)
def greedy_rules(t: TestContext) -> None:
    values = [1.0, 3.0, 2.0]
    call = t.call("sample_greedy", logits_of(values))
    t.unchanged(
        ("logits 没有被修改", "the logits are left unchanged"), np.array(values, F32), call.args[0]
    )
    t.raises(
        ("logits 含 NaN → ValueError", "logits holding NaN → ValueError"),
        ValueError,
        "sample_greedy",
        logits_of([1.0, float("nan"), 2.0]),
    )
    t.raises(
        ("空的 logits → ValueError", "empty logits → ValueError"),
        ValueError,
        "sample_greedy",
        logits_of([]),
    )
    name = ("接受 numpy 数组", "accepts a numpy array")
    if out := t.returns(name, "sample_greedy", np.array([0.0, 2.0, 1.0], F32)):
        t.equal(name, out.value, 1)
    name = ("logits 是非连续视图时也对", "correct when the logits are a non-contiguous view")
    if out := t.returns(name, "sample_greedy", strided(np.array([0.0, 2.0, 1.0, 3.0], F32))):
        t.equal(name, out.value, 3)


@lab.test(
    "sample_temperature：T = 1 就是 softmax 分布",
    "sample_temperature: T = 1 is the softmax",
    hint=HINT_SOFTMAX,
)
def temperature_one(t: TestContext) -> None:
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    got = draws(t, "sample_temperature", (logits_of(x), 1.0), 2000, 801)
    proportions(
        t,
        (
            "T = 1：[1..5] 的频率 ≈ softmax = [0.012, 0.032, 0.086, 0.234, 0.636]",
            "T = 1: frequencies of [1..5] ≈ softmax = [0.012, 0.032, 0.086, 0.234, 0.636]",
        ),
        got,
        softmax(x),
    )


@lab.test(
    "sample_temperature：T → 0 是贪心",
    "sample_temperature: T → 0 is greedy",
    hint=(  # for a call that raises, which ends the test before a check's own hint shows
        "T > 0：先减最大值再除以 T（不是乘以 T），T = 1e-6 也不溢出；"
        "T ≤ 0：直接返回 sample_greedy(logits)，不要除以 0",
        "T > 0: subtract the max, then divide by T (do not multiply), so T = 1e-6 does not "
        "overflow; T ≤ 0: return sample_greedy(logits), no division by 0",
    ),
)
def temperature_greedy(t: TestContext) -> None:
    got = draws(t, "sample_temperature", (logits_of([0, 0, 0, 5, 0]), 0.1), 200, 802)
    proportions(
        t,
        ("T = 0.1：[0, 0, 0, 5, 0] 每次都是 3", "T = 0.1: [0, 0, 0, 5, 0] is 3 every time"),
        got,
        np.eye(5)[3],  # softmax([0, 0, 0, 5, 0] / 0.1)[3] = 1 - 8e-22
        hint=HINT_SMALL_T,
    )
    got = draws(t, "sample_temperature", (logits_of([0, 0, 0, 5, 0]), 1e-6), 100, 803)
    proportions(
        t,
        ("T = 1e-6：没有溢出，每次都是 3", "T = 1e-6: no overflow, 3 every time"),
        got,
        np.eye(5)[3],
        hint=HINT_SMALL_T,
    )
    rng = np.random.default_rng(804)
    out = t.call("sample_temperature", logits_of([1, 5, 2, 3]), 0.0, rng).value
    t.equal(("T = 0 → 贪心：[1, 5, 2, 3] → 1", "T = 0 → greedy: [1, 5, 2, 3] → 1"), out, 1,
            hint=HINT_T0)  # fmt: skip
    out = t.call("sample_temperature", logits_of([1, 5, 2, 3]), -1.0, rng).value
    t.equal(("T < 0 → 贪心：[1, 5, 2, 3] → 1", "T < 0 → greedy: [1, 5, 2, 3] → 1"), out, 1,
            hint=HINT_T0)  # fmt: skip
    out = t.call("sample_temperature", logits_of([4, 4, 1]), 0.0, rng).value
    t.equal(("T = 0 且并列：[4, 4, 1] → 0", "T = 0 with a tie: [4, 4, 1] → 0"), out, 0)


@lab.test(
    "sample_temperature：T > 1 变平，T < 1 变尖",
    "sample_temperature: T > 1 flattens, T < 1 sharpens",
    hint=HINT_SOFTMAX,
)
def temperature_shape(t: TestContext) -> None:
    x = [0.0, 0.0, 0.0, 0.0, 5.0]
    got = draws(t, "sample_temperature", (logits_of(x), 2.0), 2000, 805)
    proportions(
        t,
        (
            "T = 2：[0, 0, 0, 0, 5] 的最大值只占 0.753（T = 1 时是 0.974）",
            "T = 2: the max of [0, 0, 0, 0, 5] gets only 0.753 (0.974 at T = 1)",
        ),
        got,
        softmax(x, 2.0),
    )
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    got = draws(t, "sample_temperature", (logits_of(x), 2.0), 2000, 806)
    proportions(
        t,
        (
            "T = 2：[1..5] 的频率 ≈ softmax([1..5] / 2)",
            "T = 2: frequencies of [1..5] ≈ softmax([1..5] / 2)",
        ),
        got,
        softmax(x, 2.0),
    )
    got = draws(t, "sample_temperature", (logits_of(x), 0.5), 2000, 807)
    proportions(
        t,
        (
            "T = 0.5：[1..5] 的频率 ≈ softmax([1..5] / 0.5)",
            "T = 0.5: frequencies of [1..5] ≈ softmax([1..5] / 0.5)",
        ),
        got,
        softmax(x, 0.5),
    )


@lab.test(
    "sample_temperature：输入规则与可复现",
    "sample_temperature: input rules, reproducible",
    hint=HINT_RULES,
)
def temperature_rules(t: TestContext) -> None:
    input_rules(t, "sample_temperature", (0.7,))
    reproducible(t, "sample_temperature", (logits_of([1.0, 2.0, 3.0, 2.5, 0.0]), 1.5), 808)


@lab.test(
    "sample_top_k：只在最大的 k 个里抽",
    "sample_top_k: draws only among the k largest",
    hint=HINT_TOPK,
)
def top_k_support(t: TestContext) -> None:
    x = [1.0, 5.0, 2.0, 4.0, 0.0]
    got = draws(t, "sample_top_k", (logits_of(x), 2, 1.0), 1000, 811)
    want = np.zeros(5)
    want[[1, 3]] = softmax([5.0, 4.0])
    proportions(
        t,
        (
            "k = 2、T = 1：只出 1 和 3，比例 0.731 : 0.269",
            "k = 2, T = 1: only 1 and 3, in the ratio 0.731 : 0.269",
        ),
        got,
        want,
    )
    got = draws(t, "sample_top_k", (logits_of(x), 4, 1.0), 2000, 812)
    want = softmax(x) * (np.arange(5) != 4)
    proportions(
        t,
        (
            "k = 4（V = 5）：只去掉最小的下标 4，其余按 softmax 比例",
            "k = 4 (V = 5): only the smallest, index 4, is dropped; the rest as softmax",
        ),
        got,
        want / want.sum(),
    )


@lab.test(
    "sample_top_k：并列时恰好保留 k 个", "sample_top_k: exactly k kept on ties", hint=HINT_TIES
)
def top_k_ties(t: TestContext) -> None:
    got = draws(t, "sample_top_k", (logits_of([3.0, 3.0, 3.0, 0.0]), 2, 1.0), 500, 813)
    proportions(
        t,
        (
            "[3, 3, 3, 0]、k = 2：只出 0 和 1，各一半（不是 0、1、2）",
            "[3, 3, 3, 0], k = 2: only 0 and 1, half each (not 0, 1 and 2)",
        ),
        got,
        np.array([0.5, 0.5, 0.0, 0.0]),
    )
    got = draws(t, "sample_top_k", (logits_of([0.0, 3.0, 1.0, 3.0]), 1, 1.0), 100, 814)
    proportions(
        t,
        (
            "[0, 3, 1, 3]、k = 1：每次都是 1（并列取小下标）",
            "[0, 3, 1, 3], k = 1: 1 every time (a tie goes to the lower index)",
        ),
        got,
        np.eye(4)[1],
    )


@lab.test(
    "sample_top_k：k ≤ 0 或 k ≥ V 不过滤",
    "sample_top_k: k ≤ 0 or k ≥ V is no filter",
    hint=HINT_NOFILTER,
)
def top_k_no_filter(t: TestContext) -> None:
    x = [1.0, 5.0, 2.0, 3.0]
    for k, seed in ((0, 815), (-1, 816), (4, 817), (10, 818)):
        got = draws(t, "sample_top_k", (logits_of(x), k, 1.0), 1000, seed)
        proportions(
            t,
            (
                f"k = {k}、T = 1：与不过滤的 softmax 分布相同",
                f"k = {k}, T = 1: the same distribution as the unfiltered softmax",
            ),
            got,
            softmax(x),
        )


@lab.test(
    "sample_top_k：过滤之后再用温度",
    "sample_top_k: the temperature applies after the cut",
    hint=HINT_TOPK_T,
)
def top_k_temperature(t: TestContext) -> None:
    x = [1.0, 5.0, 2.0, 4.0, 0.0]
    want = np.zeros(5)
    want[[1, 3]] = softmax([5.0, 4.0], 0.5)
    got = draws(t, "sample_top_k", (logits_of(x), 2, 0.5), 1000, 821)
    proportions(
        t,
        (
            "k = 2、T = 0.5：1 和 3 的比例 0.881 : 0.119",
            "k = 2, T = 0.5: 1 and 3 in the ratio 0.881 : 0.119",
        ),
        got,
        want,
    )
    want[[1, 3]] = softmax([5.0, 4.0], 3.0)
    got = draws(t, "sample_top_k", (logits_of(x), 2, 3.0), 2000, 822)
    proportions(
        t,
        (
            "k = 2、T = 3：1 和 3 的比例 0.583 : 0.417",
            "k = 2, T = 3: 1 and 3 in the ratio 0.583 : 0.417",
        ),
        got,
        want,
    )
    got = draws(t, "sample_top_k", (logits_of([1.0, 5.0, 2.0, 4.9, 0.0]), 3, 0.0), 100, 823)
    proportions(
        t,
        (
            "k = 3、T = 0 → 贪心：[1, 5, 2, 4.9, 0] 每次都是 1",
            "k = 3, T = 0 → greedy: [1, 5, 2, 4.9, 0] is 1 every time",
        ),
        got,
        np.eye(5)[1],
    )


@lab.test(
    "sample_top_k：输入规则与可复现", "sample_top_k: input rules, reproducible", hint=HINT_RULES
)
def top_k_rules(t: TestContext) -> None:
    input_rules(t, "sample_top_k", (2, 0.7))
    reproducible(t, "sample_top_k", (logits_of([1.0, 2.0, 3.0, 2.5, 0.0]), 3, 1.5), 824)

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

# Hints of single checks: what the failing assertion means and where to look.
HINT_INDEX = (
    "每次抽样返回一个下标：0 到 V-1 之间的 Python int（用 int(i) 转换），"
    "不是 logit 的值，也不是 numpy 数组或 float",
    "each draw returns an index: a Python int from 0 to V-1 (convert with int(i)), not the "
    "logit's value, a numpy array or a float",
)
HINT_ARGMAX = (
    "期望的是最大 logit 所在的位置：返回值应该是那个下标本身，而不是位置上的数",
    "the expected answer is the position of the largest logit: return that index, not the "
    "number stored there",
)
HINT_FIRST_TIE = (
    "几个值一样大时，要返回下标最小的那个：看看你的循环在“等于当前最大值”时做了什么",
    "when several values are equally large, the lowest index wins: look at what your loop "
    "does when a value equals the best so far",
)
HINT_NEGATIVE = (
    "logits 可以全是负数：最大值的初值要来自 logits 本身（第一个元素），而不是一个自己选的数",
    "logits may all be negative: the running maximum must start from the logits themselves "
    "(the first element), not from a number of your choosing",
)
HINT_NEG_INF = (
    "-inf 是合法的 logit（top-k 会写入它），它永远不是最大值：不要把它当作错误输入",
    "-inf is a valid logit (top-k writes it) and never the maximum: do not treat it as bad input",
)
HINT_UNCHANGED = (
    "调用者的 logits 被改了：.numpy() 给出的是同一块存储，-=、/= 或 x[...] = 会写回去；"
    "先复制一份再算",
    "the caller's logits changed: .numpy() shares their storage, so -=, /= or x[...] = "
    "write back into it; compute on a copy",
)
HINT_NAN = (
    "含 NaN 的 logits 必须抛 ValueError（不是别的异常，也不是返回一个下标）：NaN 的比较总是 "
    "False，所以要在其他计算之前用 np.isnan 检查",
    "logits holding NaN must raise ValueError (not another exception, not an index): every "
    "comparison with NaN is False, so check with np.isnan before any other work",
)
HINT_EMPTY = (
    "空的 logits（size 为 0）必须抛 ValueError：在取最大值或排序之前先检查长度",
    "empty logits (size 0) must raise ValueError: check the size before taking a maximum or "
    "sorting",
)
HINT_NDARRAY = (
    "同样的 logits 换成 numpy 数组，结果应与 Tensor 相同：如果调用报错，用 as_tensor(logits) "
    "读取输入；如果值不对，先让前面 Tensor 输入的检查通过",
    "the same logits as a numpy array must give the same answer as a Tensor: if the call "
    "raised, read the input through as_tensor(logits); if the value is wrong, make the "
    "checks on Tensors above pass first",
)
HINT_VIEW = (
    "非连续视图的元素不是按 .data 的顺序排的：用 as_tensor(logits).numpy() 读取（它按步长取值）；"
    "如果前面普通 Tensor 的检查也失败，先修那里",
    "a non-contiguous view's elements are not in .data order: read it with "
    "as_tensor(logits).numpy(), which follows the strides; if the checks on plain Tensors "
    "above fail too, fix those first",
)
HINT_REPRO = (
    "同样状态的生成器两次给出了不同的结果：随机数要全部来自 rng 参数，"
    "找一找 np.random.*、random 模块或时间的用法",
    "two generators in the same state gave different draws: every random number must come "
    "from the rng argument; look for np.random.*, the random module or the clock",
)
HINT_T1_FREQ = (
    "T = 1 时频率应当等于 softmax(logits)：打印你算出的概率，和报告里“期望概率”一列对照；"
    "概率之和是 1 吗？一次 u = rng.random() 应当落在 [0, 总和) 里",
    "at T = 1 the frequencies must match softmax(logits): print the probabilities you compute "
    "and compare them with the 'expected' column; do they sum to 1? one u = rng.random() "
    "must fall within [0, total)",
)
HINT_SHARP = (
    "T 很小时分布应当变尖：logits / T 把差距拉大，最大的那个每次都被抽中。"
    "若出现了别的下标，打印 T = 0.1 时你算出的概率",
    "a small T must sharpen the distribution: logits / T spreads them apart, so the largest "
    "comes out every time. If other indices appear, print the probabilities you compute at "
    "T = 0.1",
)
HINT_OVERFLOW = (
    "T = 1e-6 时 logits / T 极大：exp 会溢出成 inf，inf / inf 是 NaN；"
    "打印这时的概率，看看是否有 inf 或 NaN",
    "at T = 1e-6, logits / T is huge: exp overflows to inf and inf / inf is NaN; print the "
    "probabilities there and look for inf or NaN",
)
HINT_T0_TIE = (
    "T ≤ 0 就是贪心，而贪心在并列时取第一个：这里的答案与 sample_greedy([4, 4, 1]) 相同",
    "T ≤ 0 is greedy, and greedy takes the first of equal maxima: the answer here is the same "
    "as sample_greedy([4, 4, 1])",
)
HINT_SHAPE_FREQ = (
    "频率应当服从 softmax(logits / T)：打印你在这个 T 下算出的概率，和“期望概率”一列对照；"
    "这些调用共用同一个 logits Tensor，原地改动它的函数会越抽越偏",
    "the frequencies must follow softmax(logits / T): print the probabilities you compute at "
    "this T and compare them with the 'expected' column; these calls share one logits Tensor, "
    "so a function that rescales it in place drifts from call to call",
)
HINT_CUT = (
    "只有最大的 k 个下标能被抽到，而且它们之间仍按 softmax 的比例：数一数你的过滤留下了几个"
    "（必须正好 k 个），再看留下的是否都有机会被抽到",
    "only the k largest indices may come out, and among them in their softmax ratio: count how "
    "many your cut keeps (exactly k), then check that every kept one can be drawn",
)
HINT_TIE_CUT = (
    "logits 并列时也要正好留下 k 个：并列的值里，下标小的优先；数一数你的过滤留下了几个",
    "exactly k survive even when logits tie: among tied values the lower indices go first; "
    "count how many your cut keeps",
)
HINT_NO_CUT = (
    "k ≤ 0 或 k ≥ V 表示不过滤：每个下标都保留它的 softmax 概率，抽样仍然是随机的",
    "k ≤ 0 or k ≥ V means no filter: every index keeps its softmax probability, and the draw "
    "stays random",
)
HINT_CUT_T = (
    "过滤之后，留下的下标服从 softmax(留下的 logits / T)：T = 0.5 比例变尖，T = 3 变平；"
    "检查温度是否真的传到了抽样那一步，以及它是怎样作用在 logits 上的",
    "after the cut, the survivors follow softmax(survivors / T): sharper at T = 0.5, flatter at "
    "T = 3; check that the temperature reaches the draw, and how it acts on the logits",
)
HINT_CUT_T0 = (
    "过滤之后 T ≤ 0 就是在留下的下标里取贪心：每次都是最大 logit 的下标",
    "after the cut, T ≤ 0 is greedy over the survivors: the index of the largest logit every time",
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
                hint=HINT_INDEX,
            )
            return None
    return np.asarray(values, dtype=np.int64)


def draws(t: TestContext, fn: str, args: tuple[Any, ...], n: int, seed: int) -> np.ndarray | None:
    """`fn(*args, rng)` n times, each with its own generator default_rng([seed, i])."""
    values = [c.value for c in t.map_seeded(fn, args, t.entropy(seed), n)]  # built in the sandbox
    return _ids(t, values, int(args[0].size))


def proportions(
    t: TestContext,
    name: tuple[str, str],
    got: np.ndarray | None,
    probs: np.ndarray,
    hint: tuple[str, str] | None = None,
) -> bool:
    """Each index's frequency within SIGMAS binomial standard deviations of its probability."""
    if got is None:
        return t.check(
            name,
            False,
            tr("返回值不是合法的下标", "the draws are not valid indices"),
            hint=HINT_INDEX,
        )
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
    runs = [[c.value for c in t.map_seeded(fn, args, t.entropy(seed), 40)] for _ in range(2)]
    t.check(
        (
            "同样的生成器状态 → 同样的结果（40 个种子，各抽两次）",
            "the same generator state gives the same draw (40 seeds, each twice)",
        ),
        runs[0] == runs[1],
        tr(  # no draws quoted: they differ from run to run, and so would the message
            "同样的 40 个种子抽了两轮，两轮的结果不一样：随机性要全部来自 rng 参数",
            "two sweeps over the same 40 seeds gave different draws: all randomness must come "
            "from the rng argument",
        ),
        hint=HINT_REPRO,
    )


def input_rules(t: TestContext, fn: str, extra: tuple[Any, ...]) -> None:
    """Logits left unchanged; NaN and empty logits raise ValueError; ndarray accepted."""
    values = [1.0, 5.0, 2.0, 4.0, 0.0]
    rng = Seeded((8,))  # sent as its seed: a failing call reads `default_rng([8])`
    call = t.call(fn, logits_of(values), *extra, rng)
    t.unchanged(
        ("logits 没有被修改", "the logits are left unchanged"),
        np.array(values, F32),
        call.args[0],
        hint=HINT_UNCHANGED,
    )
    t.raises(
        ("logits 含 NaN → ValueError", "logits holding NaN → ValueError"),
        ValueError,
        fn,
        logits_of([1.0, float("nan"), 2.0]),
        *extra,
        rng,
        hint=HINT_NAN,
    )
    t.raises(
        ("空的 logits → ValueError", "empty logits → ValueError"),
        ValueError,
        fn,
        logits_of([]),
        *extra,
        rng,
        hint=HINT_EMPTY,
    )
    name = ("接受 numpy 数组", "accepts a numpy array")
    if out := t.returns(
        name, fn, np.array([0.0, 0.0, 60.0, 0.0], F32), *extra, rng, hint=HINT_NDARRAY
    ):
        t.equal(name, out.value, 2, hint=HINT_NDARRAY)  # p(2) > 1 - 1e-36 at T = 0.7
    name = ("logits 是非连续视图时也对", "correct when the logits are a non-contiguous view")
    if out := t.returns(
        name, fn, strided(np.array([0.0, 60.0, 0.0, 0.0], F32)), *extra, rng, hint=HINT_VIEW
    ):
        t.equal(name, out.value, 1, hint=HINT_VIEW)  # p(1) > 1 - 1e-36 at T = 0.7


@lab.test("sample_greedy：第一个最大值", "sample_greedy: the first maximum", hint=HINT_GREEDY)
def greedy_first_max(t: TestContext) -> None:
    out = t.call("sample_greedy", logits_of([1, 2, 5, 7, 3])).value
    t.equal(("[1, 2, 5, 7, 3] → 3", "[1, 2, 5, 7, 3] → 3"), out, 3, hint=HINT_ARGMAX)
    out = t.call("sample_greedy", logits_of([4, 4, 4])).value
    t.equal(
        ("并列 [4, 4, 4] → 0（第一个）", "tie [4, 4, 4] → 0 (the first)"),
        out,
        0,
        hint=HINT_FIRST_TIE,
    )
    out = t.call("sample_greedy", logits_of([0.5, 1.5, 0.5, 1.5])).value
    t.equal(
        (
            "并列最大值不在开头：[0.5, 1.5, 0.5, 1.5] → 1",
            "tied maximum not at the start: [0.5, 1.5, 0.5, 1.5] → 1",
        ),
        out,
        1,
        hint=HINT_FIRST_TIE,
    )
    out = t.call("sample_greedy", logits_of([-3.0, -1.0, -2.0])).value
    t.equal(("全是负数：[-3, -1, -2] → 1", "all negative: [-3, -1, -2] → 1"), out, 1,
            hint=HINT_NEGATIVE)  # fmt: skip
    out = t.call("sample_greedy", logits_of([-np.inf, 2.0, 9.0])).value
    t.equal(("含 -inf：[-inf, 2, 9] → 2", "with -inf: [-inf, 2, 9] → 2"), out, 2,
            hint=HINT_NEG_INF)  # fmt: skip


@lab.test("sample_greedy：输入规则", "sample_greedy: input rules", hint=HINT_RULES)
def greedy_rules(t: TestContext) -> None:
    values = [1.0, 3.0, 2.0]
    call = t.call("sample_greedy", logits_of(values))
    t.unchanged(
        ("logits 没有被修改", "the logits are left unchanged"),
        np.array(values, F32),
        call.args[0],
        hint=HINT_UNCHANGED,
    )
    t.raises(
        ("logits 含 NaN → ValueError", "logits holding NaN → ValueError"),
        ValueError,
        "sample_greedy",
        logits_of([1.0, float("nan"), 2.0]),
        hint=HINT_NAN,
    )
    t.raises(
        ("空的 logits → ValueError", "empty logits → ValueError"),
        ValueError,
        "sample_greedy",
        logits_of([]),
        hint=HINT_EMPTY,
    )
    name = ("接受 numpy 数组", "accepts a numpy array")
    if out := t.returns(name, "sample_greedy", np.array([0.0, 2.0, 1.0], F32), hint=HINT_NDARRAY):
        t.equal(name, out.value, 1, hint=HINT_NDARRAY)
    name = ("logits 是非连续视图时也对", "correct when the logits are a non-contiguous view")
    if out := t.returns(
        name, "sample_greedy", strided(np.array([0.0, 2.0, 1.0, 3.0], F32)), hint=HINT_VIEW
    ):
        t.equal(name, out.value, 3, hint=HINT_VIEW)


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
        hint=HINT_T1_FREQ,
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
        hint=HINT_SHARP,
    )
    got = draws(t, "sample_temperature", (logits_of([0, 0, 0, 5, 0]), 1e-6), 100, 803)
    proportions(
        t,
        ("T = 1e-6：没有溢出，每次都是 3", "T = 1e-6: no overflow, 3 every time"),
        got,
        np.eye(5)[3],
        hint=HINT_OVERFLOW,
    )
    rng = Seeded((804,))  # the draws do not matter here: T <= 0 is greedy
    out = t.call("sample_temperature", logits_of([1, 5, 2, 3]), 0.0, rng).value
    t.equal(("T = 0 → 贪心：[1, 5, 2, 3] → 1", "T = 0 → greedy: [1, 5, 2, 3] → 1"), out, 1,
            hint=HINT_T0)  # fmt: skip
    out = t.call("sample_temperature", logits_of([1, 5, 2, 3]), -1.0, rng).value
    t.equal(("T < 0 → 贪心：[1, 5, 2, 3] → 1", "T < 0 → greedy: [1, 5, 2, 3] → 1"), out, 1,
            hint=HINT_T0)  # fmt: skip
    out = t.call("sample_temperature", logits_of([4, 4, 1]), 0.0, rng).value
    t.equal(("T = 0 且并列：[4, 4, 1] → 0", "T = 0 with a tie: [4, 4, 1] → 0"), out, 0,
            hint=HINT_T0_TIE)  # fmt: skip


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
        hint=HINT_SHAPE_FREQ,
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
        hint=HINT_SHAPE_FREQ,
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
        hint=HINT_SHAPE_FREQ,
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
        hint=HINT_CUT,
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
        hint=HINT_CUT,
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
        hint=HINT_TIE_CUT,
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
        hint=HINT_TIE_CUT,
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
            hint=HINT_NO_CUT,
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
        hint=HINT_CUT_T,
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
        hint=HINT_CUT_T,
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
        hint=HINT_CUT_T0,
    )


@lab.test(
    "sample_top_k：输入规则与可复现", "sample_top_k: input rules, reproducible", hint=HINT_RULES
)
def top_k_rules(t: TestContext) -> None:
    input_rules(t, "sample_top_k", (2, 0.7))
    reproducible(t, "sample_top_k", (logits_of([1.0, 2.0, 3.0, 2.5, 0.0]), 3, 1.5), 824)

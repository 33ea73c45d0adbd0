"""Lab11 checks: allocate a KV cache, append rows per layer, report lengths, and decode with it.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process. A `KVCache` cannot cross to the grader, so it stays in the sandbox and the checks
hold a handle to it: they read its `k`, `v` and `lengths` back after each call and compare
them with what they must be, cell by cell. The last test builds a small GPT in the sandbox,
fills a cache for its prompt with your `kv_cache_append`, and decodes with that cache: the
logits must equal those of the model run on the whole sequence without a cache.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from framework import tensor_from
from framework.config import tiny_config
from framework.kv_cache import KVCache
from framework.model import GPTModel, init_weights
from grader.dsl import Handle, Lab, TestContext, tr
from grader.views import strided

lab = Lab("lab11", "KV Cache", "The KV cache")
lab.forbid(
    "kv_cache_append",
    "framework.kv_cache:KVCache.append",
    why=("这一课就是亲手写出追加一行", "this lab is about writing the append yourself"),
)
lab.forbid(
    "kv_cache_len",
    "framework.kv_cache:KVCache.length",
    why=("这一课就是亲手读出长度", "this lab is about reading the lengths yourself"),
)

F32 = np.float32
KV = "framework.kv_cache:KVCache"
GPT = "framework.model:GPTModel"
CONFIG = "framework.config:ModelConfig"
TYPE = "framework.kv_cache.KVCache"
LOGIT_TOL = 1e-5  # cached vs uncached float32 logits of a 2-layer model differ by ~1e-7

HINT_ALLOC = (
    "直接 return KVCache(num_layers, max_seq_len, hidden_dim)：顺序就是 [L, S, H]，它自己检查大小",
    "just return KVCache(num_layers, max_seq_len, hidden_dim): the order is [L, S, H], and it "
    "checks the sizes itself",
)
HINT_APPEND = [
    (
        "位置是这一层自己的长度 pos = cache.lengths[layer]；写 cache.k.numpy()[layer, pos] = k，"
        "然后 cache.lengths[layer] = pos + 1，返回 pos",
        "the position is this layer's own length pos = cache.lengths[layer]; write "
        "cache.k.numpy()[layer, pos] = k, then cache.lengths[layer] = pos + 1, return pos",
    ),
    (
        "行用 as_tensor(row, 'k_row').numpy() 读（非连续视图也对），形状是 [H] 或 [1, H]，"
        "写之前 reshape(H)",
        "read a row with as_tensor(row, 'k_row').numpy() (views work too); its shape is [H] or "
        "[1, H]; reshape(H) before writing",
    ),
]
HINT_ERRORS = (
    "先把 layer、两行的形状、是否已满全部检查完，再写任何东西："
    "写了 K 才发现 V 不对，缓存就已经被改了；layer = -1 在 Python 里是合法下标，要自己拒绝",
    "check the layer, both rows' shapes and fullness before writing anything: writing K and "
    "then finding V wrong leaves the cache changed; layer = -1 is a valid Python index, so "
    "refuse it yourself",
)
HINT_LEN = (
    "读 cache.lengths[layer]；layer 为 None 时是 min(cache.lengths)：所有层都填好的位置数",
    "read cache.lengths[layer]; for None it is min(cache.lengths): the positions every layer holds",
)


def is_cache(t: TestContext, value: Any, dims: tuple[int, ...]) -> bool:
    return t.check(
        (f"alloc{dims} 返回框架的 KVCache", f"alloc{dims} returns the framework's KVCache"),
        isinstance(value, Handle) and value.type_name == TYPE,
        tr(
            f"期望 KVCache，实际得到 {getattr(value, 'type_name', type(value).__name__)}",
            f"expected a KVCache, got {getattr(value, 'type_name', type(value).__name__)}",
        ),
    )


def contents(t: TestContext, cache: Handle) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The cache's K, V (as [L, S, H] arrays) and lengths, read back from the sandbox."""
    k, v = t.getattr(cache, "k"), t.getattr(cache, "v")
    lengths = t.getattr(cache, "lengths")
    return np.array(k.numpy()), np.array(v.numpy()), list(lengths)


def rows(seed: int, n: int, h: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, h)).astype(F32)


def refused(
    t: TestContext, name: tuple[str, str], cache: Handle, layer: int, kr: Any, vr: Any
) -> None:
    """`kv_cache_append` raises ValueError, and the cache is exactly as it was."""
    before = contents(t, cache)
    t.raises((name[0] + " → ValueError", name[1] + " → ValueError"), ValueError,
             "kv_cache_append", cache, layer, tensor_from(kr), tensor_from(vr))  # fmt: skip
    after = contents(t, cache)
    changed = int((before[0] != after[0]).sum() + (before[1] != after[1]).sum())
    t.check(
        (name[0] + "：缓存原样不动", name[1] + ": the cache is left as it was"),
        changed == 0 and before[2] == after[2],
        tr(f"lengths {before[2]} → {after[2]}，K/V 有 {changed} 个数变了",
           f"lengths {before[2]} → {after[2]}, {changed} numbers of K/V changed"),
    )  # fmt: skip


@lab.test(
    "kv_cache_alloc：形状与全零的起点", "kv_cache_alloc: shapes and a zero start", hint=HINT_ALLOC
)
def alloc_shapes(t: TestContext) -> None:
    dims = (4, 16, 8)
    cache = t.call("kv_cache_alloc", *dims).value
    if not is_cache(t, cache, dims):
        return
    k, v, lengths = contents(t, cache)
    shaped = t.shape(("K 是 [4, 16, 8]", "K is [4, 16, 8]"), k, dims)
    shaped &= t.shape(("V 是 [4, 16, 8]", "V is [4, 16, 8]"), v, dims)
    t.check(
        ("K 和 V 全是 0，每层长度都是 0", "K and V are all zeros, every length is 0"),
        not k.any() and not v.any() and lengths == [0] * 4,
        tr(f"lengths = {lengths}，非零的数 {int((k != 0).sum() + (v != 0).sum())} 个",
           f"lengths = {lengths}, {int((k != 0).sum() + (v != 0).sum())} non-zero numbers"),
    )  # fmt: skip
    k2, v2, _ = contents(t, t.call("kv_cache_alloc", 2, 8, 4).value)
    t.shape(("alloc(2, 8, 4)：K 和 V 是 [2, 8, 4]", "alloc(2, 8, 4): K and V are [2, 8, 4]"),
            np.stack([k2, v2], axis=1), (2, 2, 8, 4))  # fmt: skip
    if not shaped:  # the rest writes a row of width 8 into layer 1: it needs those shapes
        return
    t.method(cache, "append", 1, np.ones(8, F32), np.ones(8, F32))  # the framework's append
    k, v, lengths = contents(t, t.call("kv_cache_alloc", *dims).value)
    t.check(
        ("再分配一次得到新的空缓存（不是刚才那个）", "a second alloc gives a new, empty cache"),
        not k.any() and not v.any() and lengths == [0] * 4,
        tr(f"第二个缓存的 lengths = {lengths}，非零的数 {int((k != 0).sum())} 个",
           f"the second cache has lengths {lengths} and {int((k != 0).sum())} non-zero keys"),
    )  # fmt: skip


@lab.test(
    "kv_cache_alloc：内存 = 2·L·S·H·4 字节（量的是真实数组）",
    "kv_cache_alloc: memory = 2·L·S·H·4 bytes (measured on the real arrays)",
    hint=HINT_ALLOC,
)
def alloc_memory(t: TestContext) -> None:
    for dims in ((4, 16, 8), (4, 128, 64)):
        cache = t.call("kv_cache_alloc", *dims).value
        if dims[1] == 16 and not is_cache(t, cache, dims):
            return
        k, v = t.getattr(cache, "k"), t.getattr(cache, "v")
        nbytes = int(k.data.nbytes + v.data.nbytes)  # the whole storage that crossed
        want = 2 * int(np.prod(dims)) * 4
        t.equal(
            (f"alloc{dims}：K + V 共 {want:,} 字节", f"alloc{dims}: K + V hold {want:,} bytes"),
            nbytes,
            want,
        )


@lab.test(
    "kv_cache_alloc：拒绝不合法的大小", "kv_cache_alloc: refuses invalid sizes", hint=HINT_ALLOC
)
def alloc_errors(t: TestContext) -> None:
    for dims in ((0, 16, 8), (4, -1, 8), (4, 16, 0)):
        t.raises((f"alloc{dims} → ValueError", f"alloc{dims} → ValueError"), ValueError,
                 "kv_cache_alloc", *dims)  # fmt: skip
    t.raises(("alloc(4, 16, 8.0) → TypeError", "alloc(4, 16, 8.0) → TypeError"), TypeError,
             "kv_cache_alloc", 4, 16, 8.0)  # fmt: skip


@lab.test("kv_cache_append：写在该写的地方", "kv_cache_append: rows land where they belong",
          hint=HINT_APPEND)  # fmt: skip
def append_rows(t: TestContext) -> None:
    cache = t.build(KV, 2, 8, 4)
    k1, v1 = np.array([0.1, 0.2, 0.3, 0.4], F32), np.array([0.5, 1.0, 1.5, 2.0], F32)
    out = t.call("kv_cache_append", cache, 1, tensor_from(k1), tensor_from(v1)).value
    t.equal(
        ("第 1 层第一次追加返回位置 0", "the first append to layer 1 returns position 0"), out, 0
    )
    k, v, lengths = contents(t, cache)
    t.allclose(("K[1, 0] 是 k_row", "K[1, 0] is k_row"), k[1, 0], k1, atol=0.0)
    t.allclose(("V[1, 0] 是 v_row", "V[1, 0] is v_row"), v[1, 0], v1, atol=0.0)
    t.equal(("lengths 变成 [0, 1]", "lengths become [0, 1]"), lengths, [0, 1])
    k2, v2 = rows(1101, 2, 4)
    out = t.call("kv_cache_append", cache, 1, tensor_from(k2), tensor_from(v2)).value
    t.equal(
        ("第 1 层第二次追加返回位置 1", "the second append to layer 1 returns position 1"), out, 1
    )
    k0, v0 = rows(1102, 2, 4)
    out = t.call("kv_cache_append", cache, 0, tensor_from(k0), tensor_from(v0)).value
    t.equal(
        (
            "每层有自己的位置：第 0 层的第一次追加返回 0",
            "each layer has its own position: 0 for layer 0",
        ),
        out,
        0,
    )
    want_k, want_v = np.zeros((2, 8, 4), F32), np.zeros((2, 8, 4), F32)
    want_k[1, :2], want_v[1, :2], want_k[0, 0], want_v[0, 0] = (k1, k2), (v1, v2), k0, v0
    k, v, lengths = contents(t, cache)
    t.allclose(("整个 K：只有写过的三行非零", "all of K: only the three rows written"), k, want_k,
               atol=0.0)  # fmt: skip
    t.allclose(("整个 V：只有写过的三行非零", "all of V: only the three rows written"), v, want_v,
               atol=0.0)  # fmt: skip
    t.equal(("lengths 是 [1, 2]", "lengths are [1, 2]"), lengths, [1, 2])


@lab.test("kv_cache_append：行的各种写法", "kv_cache_append: the forms a row may take",
          hint=HINT_APPEND)  # fmt: skip
def append_forms(t: TestContext) -> None:
    cache = t.build(KV, 1, 4, 3)
    k, v = rows(1111, 2, 3)
    calls = [
        (("[1, H] 的 Tensor", "a [1, H] Tensor"), tensor_from(k[None]), tensor_from(v[None])),
        (("numpy 数组", "numpy arrays"), k * 2, v * 2),
        (("非连续视图", "non-contiguous views"), strided(k * 3), strided(v * 3)),
    ]
    for pos, (name, kr, vr) in enumerate(calls):
        if out := t.returns(name, "kv_cache_append", cache, 0, kr, vr):
            got_k, got_v, _ = contents(t, cache)
            row_ok = np.allclose(got_k[0, pos], k * (pos + 1), atol=0.0) and np.allclose(
                got_v[0, pos], v * (pos + 1), atol=0.0)  # fmt: skip
            why = (tr(f"位置 {pos} 的行不对", f"wrong row at position {pos}") if not row_ok
                   else tr(f"行写对了，但返回了 {out.value!r}，应返回位置 {pos}",
                           f"the row is right, but it returned {out.value!r}, not the "
                           f"position {pos}"))  # fmt: skip
            t.check(name, row_ok and out.value == pos, why)
    call = t.call("kv_cache_append", cache, 0, tensor_from(k), tensor_from(v))
    t.unchanged(("k_row 没有被修改", "k_row is left unchanged"), k, call.args[2])
    t.unchanged(("v_row 没有被修改", "v_row is left unchanged"), v, call.args[3])


@lab.test(
    "kv_cache_append：出错时抛 ValueError，缓存原样不动",
    "kv_cache_append: errors raise ValueError and leave the cache unchanged",
    hint=HINT_ERRORS,
)
def append_errors(t: TestContext) -> None:
    cache = t.build(KV, 2, 3, 4)
    k, v = rows(1121, 2, 4)
    t.call("kv_cache_append", cache, 0, tensor_from(k), tensor_from(v))
    bad = {
        ("k_row 长度 5", "k_row of length 5"): (0, np.ones(5, F32), v),
        ("k 对、v_row 长度 1（numpy 会广播）", "k right, v_row of length 1 (numpy broadcasts)"): (
            0, k, np.ones(1, F32)),
        ("行的形状 [2, H]", "rows of shape [2, H]"): (
            1, np.ones((2, 4), F32), np.ones((2, 4), F32)),
        ("layer = -1", "layer = -1"): (-1, k, v),
        ("layer = 2（只有 2 层）", "layer = 2 (of 2 layers)"): (2, k, v),
    }  # fmt: skip
    for name, (layer, kr, vr) in bad.items():
        refused(t, name, cache, layer, kr, vr)
    # a cache of its own, so a wrong write above cannot fill (or empty) this layer first
    full = t.build(KV, 2, 3, 4, attrs={"lengths": [1, 3]})
    refused(t, ("第 1 层已满（3 个位置）", "layer 1 full (3 positions)"), full, 1, -k, -v)


@lab.test("kv_cache_len：每层的长度", "kv_cache_len: the length of each layer", hint=HINT_LEN)
def len_per_layer(t: TestContext) -> None:
    cache = t.build(KV, 3, 8, 2, attrs={"lengths": [2, 5, 1]})
    for layer, want in ((0, 2), (1, 5), (2, 1)):
        out = t.call("kv_cache_len", cache, layer).value
        t.equal((f"lengths [2, 5, 1]：第 {layer} 层 → {want}",
                 f"lengths [2, 5, 1]: layer {layer} → {want}"), out, want)  # fmt: skip
    out = t.call("kv_cache_len", cache).value
    t.equal(
        ("layer = None → 所有层的最小值 1", "layer = None → the minimum over layers, 1"), out, 1
    )
    cache = t.build(KV, 3, 8, 2, attrs={"lengths": [4, 3, 6]})
    out = t.call("kv_cache_len", cache, None).value
    t.equal(("lengths [4, 3, 6]、layer = None → 3", "lengths [4, 3, 6], layer = None → 3"), out, 3)
    t.raises(("layer = 3 → ValueError", "layer = 3 → ValueError"), ValueError, "kv_cache_len",
             cache, 3)  # fmt: skip
    t.raises(("layer = -1 → ValueError", "layer = -1 → ValueError"), ValueError, "kv_cache_len",
             cache, -1)  # fmt: skip


def reference() -> GPTModel:
    model = GPTModel(tiny_config())
    init_weights(model, seed=1111)
    model.lm_head.numpy()[...] *= 20.0  # sharper logits: differences show, greedy has no ties
    return model


@lab.test(
    "端到端：用你填的缓存解码 = 不用缓存",
    "end to end: decoding with the cache you filled = no cache",
    hint=HINT_APPEND,
)
def end_to_end(t: TestContext) -> None:
    ref = reference()
    c = ref.config
    prompt = [2, *np.random.default_rng(1112).integers(4, 260, size=11).tolist()]
    ref_cache = KVCache(c.num_layers, c.max_seq_len, c.hidden_dim)
    ref.forward(prompt, kv_cache=ref_cache)  # the prompt's K and V rows, in the grader
    model = t.build(GPT, t.build(CONFIG, *c.as_tuple()))
    t.method(model, "load_state", ref.state_dict())
    dims = (c.num_layers, c.max_seq_len, c.hidden_dim)
    cache = t.call("kv_cache_alloc", *dims).value
    if not is_cache(t, cache, dims):
        return
    got = contents(t, cache)[0].shape
    layers_rows = (got[0], got[-1]) == (dims[0], dims[2]) if len(got) == 3 else False
    if not t.check(
        (f"kv_cache_alloc{dims}：{dims[0]} 层、每行宽 {dims[2]}",
         f"kv_cache_alloc{dims}: {dims[0]} layers of rows {dims[2]} wide"),
        layers_rows,
        tr(f"K 的形状是 {list(got)}，应为 [L, S, H] = {list(dims)}",
           f"K has shape {list(got)}, not [L, S, H] = {list(dims)}"),
        hint=HINT_ALLOC,
    ):  # fmt: skip
        return  # rows of width H cannot go in: say so here, not in an append that fails
    k, v = ref_cache.k.numpy(), ref_cache.v.numpy()
    fill = [(cache, layer, k[layer, p], v[layer, p])
            for p in range(len(prompt)) for layer in range(c.num_layers)]  # fmt: skip
    t.map("kv_cache_append", fill)
    out = t.call("kv_cache_len", cache).value
    n = len(prompt)
    t.equal((f"填完提示词：kv_cache_len = {n}", f"prompt filled: kv_cache_len = {n}"), out, n)
    ids, worst, tok = list(prompt), 0.0, int(np.argmax(ref.forward(prompt).numpy()[-1]))
    for _ in range(6):
        got = t.method(model, "forward", [tok], kv_cache=cache, start_pos=len(ids)).value
        ids.append(tok)
        want = ref.forward(ids).numpy()[-1]  # the whole sequence, no cache
        arr = t.array(("解码的 logits", "decoded logits"), got, (1, c.vocab_size))
        if arr is None:
            return
        worst = max(worst, float(np.abs(arr[0] - want).max()))
        tok = int(np.argmax(want))
    t.check(
        ("6 步解码的 logits 与不用缓存时一致（atol 1e-5）",
         "6 decode steps: the logits equal those without a cache (atol 1e-5)"),
        worst <= LOGIT_TOL,
        tr(f"最大误差 {worst:.3g}：缓存里的行不在模型要读的位置上",
           f"largest difference {worst:.3g}: the cached rows are not where the model reads them"),
    )  # fmt: skip
    out = t.call("kv_cache_len", cache).value
    t.equal((f"解码之后：kv_cache_len = {len(ids)}", f"after decoding: kv_cache_len = {len(ids)}"),
            out, len(ids))  # fmt: skip

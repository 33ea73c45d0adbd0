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


# -- the hints of single checks: what this failure means, where to look -------------------
H_IS_CACHE = (
    "返回的必须是 framework.kv_cache.KVCache 的实例：模型和检查都按它的 k、v、lengths 读写；"
    "字段相同的自己的类也不行",
    "it must return an instance of framework.kv_cache.KVCache: the model and the checks read "
    "its k, v and lengths; a class of your own with the same fields does not count",
)
H_SHAPE = (
    "K 和 V 的形状是 [num_layers, max_seq_len, hidden_dim]，三个参数各占自己的轴、不多不少："
    "把报告里的实际形状和你传下去的参数逐个对一对",
    "K and V are [num_layers, max_seq_len, hidden_dim], each argument on its own axis, no more "
    "and no less: hold the shape in the report against the arguments you passed on",
)
H_ZERO = (
    "新缓存里 K、V 的每个数都是 0，lengths 每层一个 0（共 num_layers 个）：报告里 lengths 有几项？",
    "a new cache has every K and V number 0 and one length 0 per layer (num_layers of them): "
    "how many entries does lengths have in the report?",
)
H_SHAPE2 = (
    "换一组大小 (2, 8, 4) 再分配：每个参数要落在它自己的那一维上，大小各不相同时才看得出顺序",
    "another allocation, (2, 8, 4): each argument must land on its own axis; only sizes that "
    "differ show the order",
)
H_FRESH = (
    "每次调用都建一个新的缓存：函数外面保存的缓存（模块级变量、按大小记下的字典）不能再拿出来用",
    "every call builds a new cache: no cache kept outside the function (a module variable, a "
    "dict by size) may come back",
)
H_BYTES = (
    "K + V 恰好是 2·L·S·H 个 float32，每个 4 字节：多出来的数来自哪一维（或是不是 float64）？",
    "K + V hold exactly 2·L·S·H float32 numbers of 4 bytes: which axis do the extra numbers "
    "come from (or are they float64)?",
)
H_SIZE_ERR = (
    "0 和负数的大小要拒绝（ValueError），不能改成一个能用的大小：把参数原样交给 KVCache，"
    "它自己会检查",
    "a size of 0 or below is refused (ValueError), never turned into one that works: hand the "
    "arguments to KVCache unchanged, it checks them itself",
)
H_TYPE_ERR = (
    "8.0 不是 int：这次调用要抛 TypeError，哪怕之前用 (4, 16, 8) 分配过、值相等也不行",
    "8.0 is not an int: this call raises TypeError, even though (4, 16, 8) was allocated before "
    "and the values compare equal",
)
H_POS_FIRST = (
    "返回值是这一行写进去的位置，也就是这一层在调用之前的长度：空的一层是 0",
    "the return value is the position the row went to, this layer's length before the call: 0 "
    "for an empty layer",
)
H_ROW_K = (
    "K[1, 0] 要逐位等于 k_row（atol 0）：看 cache.k 在第 1 层、位置 0 的那一行最后装的是什么，"
    "以及数据是从哪边复制到哪边",
    "K[1, 0] must equal k_row bit for bit (atol 0): look at what ends up in cache.k at layer 1, "
    "position 0, and which way the numbers are copied",
)
H_ROW_V = (
    "V[1, 0] 要逐位等于 v_row（atol 0）：看 cache.v 在第 1 层、位置 0 的那一行最后装的是什么",
    "V[1, 0] must equal v_row bit for bit (atol 0): look at what ends up in cache.v at layer 1, "
    "position 0",
)
H_LENGTHS_ONE = (
    "追加之后这一层的 cache.lengths 加 1，其他层不变：下一次追加就从这个数读出位置",
    "after the append, this layer's cache.lengths grows by one and the other layers keep "
    "theirs: the next append reads its position from it",
)
H_POS_SECOND = (
    "同一层的第二次追加返回 1：位置从这一层的长度读出，而这个长度应当已经被第一次追加加过 1",
    "the second append to the same layer returns 1: the position is read from this layer's "
    "length, which the first append must have advanced",
)
H_POS_LAYER = (
    "位置是每层各自的：一层还是空的，它的第一行就在位置 0，不管别的层里已经有多少行",
    "positions are per layer: an empty layer takes its first row at position 0, whatever the "
    "other layers hold",
)
H_ALL_ROWS = (
    "只有写过的格子可以变：每次追加恰好一行 H 个数，在 [layer, pos]；报告指出的最差格子在哪一层、"
    "哪个位置？",
    "only the cells written may change: one row of H numbers per append, at [layer, pos]; which "
    "layer and position is the worst cell of the report?",
)
H_LENGTHS_ALL = (
    "lengths 数的是每层追加过的行：第 0 层 1 行，第 1 层 2 行",
    "lengths counts the rows appended per layer: 1 in layer 0, 2 in layer 1",
)
H_FORM_1H = (
    "行也可以是 [1, H]：写入之前把它读成 H 个数；报告会说是行不对，还是返回的位置不对",
    "a row may come as [1, H]: read it as H numbers before writing; the report says whether the "
    "row or the returned position is wrong",
)
H_FORM_ND = (
    "行也可以是 numpy 数组：和 Tensor 一样读成 H 个 float32（as_tensor 两种都接受）",
    "a row may be a numpy array: read it as H float32 numbers just like a Tensor (as_tensor "
    "accepts both)",
)
H_FORM_VIEW = (
    "行也可以是非连续视图：按它的 shape、strides、offset 读（Tensor 的 numpy() 就是这样），"
    "不要按存储的顺序读 data",
    "a row may be a non-contiguous view: read it through its shape, strides and offset (as the "
    "Tensor's numpy() does), not its storage in order",
)
H_ROW_INPUT = (
    "kv_cache_append 只读 k_row 和 v_row：数据从它们复制进缓存，不能反过来写进它们",
    "kv_cache_append only reads k_row and v_row: numbers go from them into the cache, never "
    "into them",
)
H_BAD_ROW = (
    "一行必须恰好有 H 个数，形状 [H] 或 [1, H]；别的长度抛 ValueError，不要截断或补齐",
    "a row has exactly H numbers, shaped [H] or [1, H]; any other length raises ValueError, "
    "never cut or padded to size",
)
H_BAD_V = (
    "v_row 和 k_row 一样要检查：长度 1 的行会被 numpy 悄悄广播成一整行，不会自己报错",
    "check v_row as carefully as k_row: numpy broadcasts a row of length 1 over a whole row "
    "without any error",
)
H_BAD_2H = (
    "[2, H] 的最后一维是 H，但一共有 2·H 个数：只接受 (H,) 和 (1, H) 两种形状",
    "a [2, H] row has H numbers in its last dimension but 2·H in all: accept only the shapes "
    "(H,) and (1, H)",
)
H_BAD_NEG = (
    "layer 必须满足 0 <= layer < num_layers：-1 在 Python 里是合法下标（最后一层），要自己拒绝",
    "layer must satisfy 0 <= layer < num_layers: -1 is a valid Python index (the last layer), "
    "so refuse it yourself",
)
H_BAD_BIG = (
    "layer ≥ num_layers 抛 ValueError：不是 IndexError，也不能换成最近的那一层",
    "a layer ≥ num_layers raises ValueError: not an IndexError, and not the nearest layer instead",
)
H_FULL = (
    "这一层的长度等于 max_seq_len 时就满了：在写之前用 ValueError 拒绝，不要覆盖最后一行，"
    "也不要等 numpy 的 IndexError",
    "a layer is full when its length equals max_seq_len: refuse with ValueError before writing, "
    "neither overwriting the last row nor waiting for numpy's IndexError",
)
H_UNTOUCHED = (
    "被拒绝的追加什么都不改：K、V、lengths 都和调用前一样；报告说了变的是长度还是数",
    "a refused append changes nothing: K, V and the lengths are as before; the report says "
    "whether lengths or numbers changed",
)
H_LEN_LAYER = (
    "这些缓存是直接设好 lengths 建的（K 全是 0，也没有调用过追加）：长度只能从 cache.lengths 读",
    "these caches were built with their lengths set (K all zeros, no append made): the length "
    "can only come from cache.lengths",
)
H_LEN_NONE = (
    "layer 为 None 时，答案是每一层都填好了的位置数：几层里最短的那个",
    "for layer None the answer is the positions every layer holds: the shortest of the layers",
)
H_LEN_RANGE = (
    "3 层的缓存没有第 3 层，也没有第 -1 层：抛 ValueError，范围检查和 kv_cache_append 一样",
    "a cache of 3 layers has no layer 3 and no layer -1: raise ValueError, the same range check "
    "as in kv_cache_append",
)
H_FILLED = (
    "两层各追加了 12 行，每层都有 12 个位置：kv_cache_len 读的是你的追加所推进的每层长度",
    "12 rows were appended to each of the 2 layers, so every layer holds 12: kv_cache_len reads "
    "the per-layer lengths your appends advanced",
)
H_LOGITS = (
    "模型从 K[l, p]、V[l, p] 读第 l 层位置 p 的行：每次追加要落在这一层的下一个位置，K 行进 K、"
    "V 行进 V",
    "the model reads layer l's row of position p from K[l, p] and V[l, p]: each append must land "
    "at that layer's next position, the K row in K and the V row in V",
)
H_DECODED = (
    "模型自己的 forward 又写了 6 行，并自己推进了 cache.lengths：kv_cache_len 要报告 lengths "
    "里的数",
    "the model's own forward wrote 6 more rows and advanced cache.lengths itself: kv_cache_len "
    "must report what the lengths hold",
)
H_ARRAY = (
    "带缓存的 forward 没有返回 [1, V] 的 logits：看报告里它返回了什么，多半是缓存的形状不对",
    "forward with the cache returned no [1, V] logits: see what came back in the report; the "
    "cache's shape is the usual cause",
)


def is_cache(t: TestContext, value: Any, dims: tuple[int, ...]) -> bool:
    return t.check(
        (f"alloc{dims} 返回框架的 KVCache", f"alloc{dims} returns the framework's KVCache"),
        isinstance(value, Handle) and value.type_name == TYPE,
        tr(
            f"期望 KVCache，实际得到 {getattr(value, 'type_name', type(value).__name__)}",
            f"expected a KVCache, got {getattr(value, 'type_name', type(value).__name__)}",
        ),
        hint=H_IS_CACHE,
    )


def contents(t: TestContext, cache: Handle) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The cache's K, V (as [L, S, H] arrays) and lengths, read back from the sandbox."""
    k, v = t.getattr(cache, "k"), t.getattr(cache, "v")
    lengths = t.getattr(cache, "lengths")
    return np.array(k.numpy()), np.array(v.numpy()), list(lengths)


def rows(seed: int, n: int, h: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, h)).astype(F32)


def refused(
    t: TestContext,
    name: tuple[str, str],
    cache: Handle,
    layer: int,
    kr: Any,
    vr: Any,
    hint: tuple[str, str],
) -> None:
    """`kv_cache_append` raises ValueError (`hint` says why), and the cache is as it was."""
    before = contents(t, cache)
    t.raises((name[0] + " → ValueError", name[1] + " → ValueError"), ValueError,
             "kv_cache_append", cache, layer, tensor_from(kr), tensor_from(vr),
             hint=hint)  # fmt: skip
    after = contents(t, cache)
    changed = int((before[0] != after[0]).sum() + (before[1] != after[1]).sum())
    t.check(
        (name[0] + "：缓存原样不动", name[1] + ": the cache is left as it was"),
        changed == 0 and before[2] == after[2],
        tr(f"lengths {before[2]} → {after[2]}，K/V 有 {changed} 个数变了",
           f"lengths {before[2]} → {after[2]}, {changed} numbers of K/V changed"),
        hint=H_UNTOUCHED,
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
    shaped = t.shape(("K 是 [4, 16, 8]", "K is [4, 16, 8]"), k, dims, hint=H_SHAPE)
    shaped &= t.shape(("V 是 [4, 16, 8]", "V is [4, 16, 8]"), v, dims, hint=H_SHAPE)
    t.check(
        ("K 和 V 全是 0，每层长度都是 0", "K and V are all zeros, every length is 0"),
        not k.any() and not v.any() and lengths == [0] * 4,
        tr(f"lengths = {lengths}，非零的数 {int((k != 0).sum() + (v != 0).sum())} 个",
           f"lengths = {lengths}, {int((k != 0).sum() + (v != 0).sum())} non-zero numbers"),
        hint=H_ZERO,
    )  # fmt: skip
    k2, v2, _ = contents(t, t.call("kv_cache_alloc", 2, 8, 4).value)
    t.shape(("alloc(2, 8, 4)：K 和 V 是 [2, 8, 4]", "alloc(2, 8, 4): K and V are [2, 8, 4]"),
            np.stack([k2, v2], axis=1), (2, 2, 8, 4), hint=H_SHAPE2)  # fmt: skip
    if not shaped:  # the rest writes a row of width 8 into layer 1: it needs those shapes
        return
    t.method(cache, "append", 1, np.ones(8, F32), np.ones(8, F32))  # the framework's append
    k, v, lengths = contents(t, t.call("kv_cache_alloc", *dims).value)
    t.check(
        ("再分配一次得到新的空缓存（不是刚才那个）", "a second alloc gives a new, empty cache"),
        not k.any() and not v.any() and lengths == [0] * 4,
        tr(f"第二个缓存的 lengths = {lengths}，非零的数 {int((k != 0).sum())} 个",
           f"the second cache has lengths {lengths} and {int((k != 0).sum())} non-zero keys"),
        hint=H_FRESH,
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
            hint=H_BYTES,
        )


@lab.test(
    "kv_cache_alloc：拒绝不合法的大小", "kv_cache_alloc: refuses invalid sizes", hint=HINT_ALLOC
)
def alloc_errors(t: TestContext) -> None:
    for dims in ((0, 16, 8), (4, -1, 8), (4, 16, 0)):
        t.raises((f"alloc{dims} → ValueError", f"alloc{dims} → ValueError"), ValueError,
                 "kv_cache_alloc", *dims, hint=H_SIZE_ERR)  # fmt: skip
    t.raises(("alloc(4, 16, 8.0) → TypeError", "alloc(4, 16, 8.0) → TypeError"), TypeError,
             "kv_cache_alloc", 4, 16, 8.0, hint=H_TYPE_ERR)  # fmt: skip


@lab.test("kv_cache_append：写在该写的地方", "kv_cache_append: rows land where they belong",
          hint=HINT_APPEND)  # fmt: skip
def append_rows(t: TestContext) -> None:
    cache = t.build(KV, 2, 8, 4)
    k1, v1 = np.array([0.1, 0.2, 0.3, 0.4], F32), np.array([0.5, 1.0, 1.5, 2.0], F32)
    out = t.call("kv_cache_append", cache, 1, tensor_from(k1), tensor_from(v1)).value
    t.equal(
        ("第 1 层第一次追加返回位置 0", "the first append to layer 1 returns position 0"),
        out,
        0,
        hint=H_POS_FIRST,
    )
    k, v, lengths = contents(t, cache)
    t.allclose(("K[1, 0] 是 k_row", "K[1, 0] is k_row"), k[1, 0], k1, atol=0.0, hint=H_ROW_K)
    t.allclose(("V[1, 0] 是 v_row", "V[1, 0] is v_row"), v[1, 0], v1, atol=0.0, hint=H_ROW_V)
    t.equal(("lengths 变成 [0, 1]", "lengths become [0, 1]"), lengths, [0, 1], hint=H_LENGTHS_ONE)
    k2, v2 = rows(1101, 2, 4)
    out = t.call("kv_cache_append", cache, 1, tensor_from(k2), tensor_from(v2)).value
    t.equal(
        ("第 1 层第二次追加返回位置 1", "the second append to layer 1 returns position 1"),
        out,
        1,
        hint=H_POS_SECOND,
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
        hint=H_POS_LAYER,
    )
    want_k, want_v = np.zeros((2, 8, 4), F32), np.zeros((2, 8, 4), F32)
    want_k[1, :2], want_v[1, :2], want_k[0, 0], want_v[0, 0] = (k1, k2), (v1, v2), k0, v0
    k, v, lengths = contents(t, cache)
    t.allclose(("整个 K：只有写过的三行非零", "all of K: only the three rows written"), k, want_k,
               atol=0.0, hint=H_ALL_ROWS)  # fmt: skip
    t.allclose(("整个 V：只有写过的三行非零", "all of V: only the three rows written"), v, want_v,
               atol=0.0, hint=H_ALL_ROWS)  # fmt: skip
    t.equal(("lengths 是 [1, 2]", "lengths are [1, 2]"), lengths, [1, 2], hint=H_LENGTHS_ALL)


@lab.test("kv_cache_append：行的各种写法", "kv_cache_append: the forms a row may take",
          hint=HINT_APPEND)  # fmt: skip
def append_forms(t: TestContext) -> None:
    cache = t.build(KV, 1, 4, 3)
    k, v = rows(1111, 2, 3)
    calls = [
        (("[1, H] 的 Tensor", "a [1, H] Tensor"), tensor_from(k[None]), tensor_from(v[None]),
         H_FORM_1H),
        (("numpy 数组", "numpy arrays"), k * 2, v * 2, H_FORM_ND),
        (("非连续视图", "non-contiguous views"), strided(k * 3), strided(v * 3), H_FORM_VIEW),
    ]  # fmt: skip
    for pos, (name, kr, vr, hint) in enumerate(calls):
        if out := t.returns(name, "kv_cache_append", cache, 0, kr, vr):
            got_k, got_v, _ = contents(t, cache)
            row_ok = np.allclose(got_k[0, pos], k * (pos + 1), atol=0.0) and np.allclose(
                got_v[0, pos], v * (pos + 1), atol=0.0)  # fmt: skip
            why = (tr(f"位置 {pos} 的行不对", f"wrong row at position {pos}") if not row_ok
                   else tr(f"行写对了，但返回了 {out.value!r}，应返回位置 {pos}",
                           f"the row is right, but it returned {out.value!r}, not the "
                           f"position {pos}"))  # fmt: skip
            t.check(name, row_ok and out.value == pos, why, hint=hint)
    call = t.call("kv_cache_append", cache, 0, tensor_from(k), tensor_from(v))
    t.unchanged(("k_row 没有被修改", "k_row is left unchanged"), k, call.args[2], hint=H_ROW_INPUT)
    t.unchanged(("v_row 没有被修改", "v_row is left unchanged"), v, call.args[3], hint=H_ROW_INPUT)


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
        ("k_row 长度 5", "k_row of length 5"): (0, np.ones(5, F32), v, H_BAD_ROW),
        ("k 对、v_row 长度 1（numpy 会广播）", "k right, v_row of length 1 (numpy broadcasts)"): (
            0, k, np.ones(1, F32), H_BAD_V),
        ("行的形状 [2, H]", "rows of shape [2, H]"): (
            1, np.ones((2, 4), F32), np.ones((2, 4), F32), H_BAD_2H),
        ("layer = -1", "layer = -1"): (-1, k, v, H_BAD_NEG),
        ("layer = 2（只有 2 层）", "layer = 2 (of 2 layers)"): (2, k, v, H_BAD_BIG),
    }  # fmt: skip
    for name, (layer, kr, vr, hint) in bad.items():
        refused(t, name, cache, layer, kr, vr, hint)
    # a cache of its own, so a wrong write above cannot fill (or empty) this layer first
    full = t.build(KV, 2, 3, 4, attrs={"lengths": [1, 3]})
    refused(t, ("第 1 层已满（3 个位置）", "layer 1 full (3 positions)"), full, 1, -k, -v, H_FULL)


@lab.test("kv_cache_len：每层的长度", "kv_cache_len: the length of each layer", hint=HINT_LEN)
def len_per_layer(t: TestContext) -> None:
    cache = t.build(KV, 3, 8, 2, attrs={"lengths": [2, 5, 1]})
    for layer, want in ((0, 2), (1, 5), (2, 1)):
        out = t.call("kv_cache_len", cache, layer).value
        t.equal((f"lengths [2, 5, 1]：第 {layer} 层 → {want}",
                 f"lengths [2, 5, 1]: layer {layer} → {want}"), out, want,
                hint=H_LEN_LAYER)  # fmt: skip
    out = t.call("kv_cache_len", cache).value
    t.equal(
        ("layer = None → 所有层的最小值 1", "layer = None → the minimum over layers, 1"),
        out,
        1,
        hint=H_LEN_NONE,
    )
    cache = t.build(KV, 3, 8, 2, attrs={"lengths": [4, 3, 6]})
    out = t.call("kv_cache_len", cache, None).value
    t.equal(("lengths [4, 3, 6]、layer = None → 3", "lengths [4, 3, 6], layer = None → 3"), out, 3,
            hint=H_LEN_NONE)  # fmt: skip
    t.raises(("layer = 3 → ValueError", "layer = 3 → ValueError"), ValueError, "kv_cache_len",
             cache, 3, hint=H_LEN_RANGE)  # fmt: skip
    t.raises(("layer = -1 → ValueError", "layer = -1 → ValueError"), ValueError, "kv_cache_len",
             cache, -1, hint=H_LEN_RANGE)  # fmt: skip


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
    t.equal((f"填完提示词：kv_cache_len = {n}", f"prompt filled: kv_cache_len = {n}"), out, n,
            hint=H_FILLED)  # fmt: skip
    ids, worst, tok = list(prompt), 0.0, int(np.argmax(ref.forward(prompt).numpy()[-1]))
    for _ in range(6):
        got = t.method(model, "forward", [tok], kv_cache=cache, start_pos=len(ids)).value
        ids.append(tok)
        want = ref.forward(ids).numpy()[-1]  # the whole sequence, no cache
        arr = t.array(("解码的 logits", "decoded logits"), got, (1, c.vocab_size), hint=H_ARRAY)
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
        hint=H_LOGITS,
    )  # fmt: skip
    out = t.call("kv_cache_len", cache).value
    t.equal((f"解码之后：kv_cache_len = {len(ids)}", f"after decoding: kv_cache_len = {len(ids)}"),
            out, len(ids), hint=H_DECODED)  # fmt: skip

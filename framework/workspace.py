"""The buffers of one training (or inference) forward and its backward, made once per shape.

`framework.backward` writes every activation of a step into a `Workspace`: a fresh 2 MB
array costs about 1 ms of page faults before it is written, so the buffers are allocated
once per batch shape and reused step after step. Each layer keeps its own slot of
activations for the backward (`keep=True`), or all layers share one (inference).

Not here: the arithmetic (`framework.backward`).
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from framework.attention import causal_mask_array

__all__ = ["QUERY_BLOCK", "LNBuffers", "Workspace"]

Array = NDArray[Any]
# Queries per block of the causal attention; one sequence's blocks are twice as long: its
# products are small, and their calls cost more than the masked scores the blocks save
# ([1, 128]: 1.27 ms a forward against 1.34; a batch's training step is fastest at 32).
QUERY_BLOCK = 32


class Workspace:
    """Every buffer of one forward (and backward) for a batch [B, T] and one model's weights.

    `acquire` hands out a free workspace of the right shape or makes one; a workspace is
    free when nothing but the cache refers to it or to its logits (`sys.getrefcount`):
    while a caller keeps the activations or the logits of a step, the next step gets
    other buffers, so nothing a caller holds is ever overwritten. With `keep=False`
    (inference) every layer writes the same one layer of buffers.
    """

    # each thread keeps its own workspaces (the server prefills in a request's thread, or
    # in its batch's decode thread): a workspace is never handed to two threads at once
    _local: ClassVar[threading.local] = threading.local()
    # workspaces kept for reuse (training, inference), the least recently used dropped first:
    # a loop whose batch shape changes every call must not pin one workspace per shape
    MAX_CACHED: ClassVar[dict[bool, int]] = {True: 1, False: 2}

    def __init__(self, w: Any, b: int, t: int, keep: bool = True) -> None:
        dt = w.token_embedding.dtype
        v, h = w.token_embedding.shape
        f, nh = w.blocks[0].w1.shape[1], w.blocks[0].num_heads
        nl = len(w.blocks) if keep else 1
        n = b * t
        self.shape, self.num_heads, self.keep = (b, t), nh, keep
        size = QUERY_BLOCK if b > 1 else 2 * QUERY_BLOCK
        self.blocks = [(lo, min(lo + size, t)) for lo in range(0, t, size)]

        def z(*shape: int) -> Array:
            return np.zeros(shape, dt)

        self.xs = z(nl + 1, n, h)  # block inputs; xs[l + 1] is block l's output
        self.hs = z(nl, n, h)  # x + attention, the input of ln2
        # ln2's output carries a column of ones: b1 rides in the product b·W1 (and db1 in dW1)
        self.b_aug = z(nl, n, h + 1)  # [b, 1]
        self.b_aug[..., h] = 1
        self.ln1 = [LNBuffers(n, h, dt) for _ in range(nl)]
        self.ln2 = [LNBuffers(n, h, dt, self.b_aug[i][:, :h]) for i in range(nl)]
        self.qkv = z(nl, n, 3 * h)  # (B·T, 3H) = [q' = q/√hd | k | v]
        self.w_qkv = z(nl, h, 3 * h)  # this step's [W_q/√hd | W_k | W_v]
        # key-major softmax weights, per query block [lo, hi): keys 0…hi−1 only (causal)
        self.probs_t = [[z(b, nh, hi, hi - lo) for lo, hi in self.blocks] for _ in range(nl)]
        self.masks_t = [causal_mask_array(hi - lo, hi, dt).T for lo, hi in self.blocks]
        self.folds = [z(b, nh, (hi + 1) // 2, hi - lo) for lo, hi in self.blocks]  # see _max_keys
        self.sq = z(n, 2 * h)  # q'² | k², for the bound on the scores (_scores_bounded)
        self.pair_sum = np.kron(np.eye(2 * nh, dtype=dt), np.ones((h // nh, 1), dt))  # (2H, 2nh)
        # scores within ±safe_score: the exps and their sum over t keys stay normal floats
        # (float32: 76 for t = 96; float16: none)
        tiny, big = np.finfo(dt).tiny, np.finfo(dt).max
        self.safe_score = max(min(math.log(big) - math.log(t), -math.log(tiny)) - 8.0, 0.0)
        self.ctx = z(nl, n, h)  # heads' outputs concatenated
        self.u = z(nl, n, f)  # FFN pre-activation
        self.s = z(nl, n, f)  # 1 + tanh(c·(u + a·u³)), kept for gelu'
        self.w1_aug = z(nl, h + 1, f)  # this step's [W1; b1]
        self.g2 = z(nl, n, f)  # 2·gelu(u)
        self.w2_half = z(nl, f, h)  # this step's W2/2 (2·gelu(u)·W2/2 = gelu(u)·W2)
        self.lnf = LNBuffers(n, h, dt)
        self.logits = z(b, t, v)
        self.ids = np.zeros(n, np.int64)
        self.q_scale = 1.0 / math.sqrt(h // nh)
        self.sizes, self.dtype, self.has_scratch = (h, f), dt, False

    def backward_scratch(self) -> None:
        """Make the buffers the backward shares across layers (at its first call only)."""
        if self.has_scratch:
            return
        (b, t), (h, f), nh, dt = self.shape, self.sizes, self.num_heads, self.dtype
        n, self.has_scratch = b * t, True

        def z(*shape: int) -> Array:
            return np.zeros(shape, dt)

        self.d_nh = [z(n, h) for _ in range(3)]
        self.d_qkv, self.d_u, self.d_u2 = z(n, 3 * h), z(n, f), z(n, f)
        self.d_h, self.d_ctx = z(n, h), z(n, h)
        self.d_p = [z(b, nh, hi, hi - lo) for lo, hi in self.blocks]
        self.d_kv = z(b, nh, t, h // nh)  # one block's share of dk or dv
        self.d_t = z(b, nh, 1, t)  # D per query
        self.head_sum = self.pair_sum[:h, :nh]  # (H, n_head): a head's columns summed

    @classmethod
    def acquire(cls, w: Any, b: int, t: int, keep: bool = True) -> Workspace:
        """A free workspace for weights like `w` and a batch [b, t] (made if none is)."""
        blk = w.blocks[0]
        key = (w.token_embedding.shape, w.token_embedding.dtype.str, len(w.blocks),
               blk.w1.shape, blk.num_heads, b, t, keep)  # fmt: skip
        cache: dict[tuple[Any, ...], list[Workspace]] = cls._local.__dict__.setdefault("cache", {})
        pool = cache.pop(key, [])
        cache[key] = pool  # the most recently used shape goes last
        for ws in pool:
            # 3 = the pool's list + the loop variable + getrefcount's argument; 2 for logits
            if sys.getrefcount(ws) == 3 and sys.getrefcount(ws.logits) == 2:
                return ws
        ws = cls(w, b, t, keep)
        pool.append(ws)
        same_kind = [k for k in cache if k[-1] == keep]  # oldest first
        while sum(len(cache[k]) for k in same_kind) > cls.MAX_CACHED[keep]:
            oldest = same_kind[0]
            del cache[oldest][0]  # forgotten here; alive while its user holds it
            if not cache[oldest]:
                del cache[oldest]
                same_kind.pop(0)
        return ws

    def slot(self, layer: int) -> int:
        """Where layer `layer` keeps its activations: its own slot, or the one shared slot."""
        return layer if self.keep else 0


class LNBuffers:
    """One LayerNorm's buffers: x̂ [N, H], 1/σ [N, 1], and the output y [N, H]."""

    def __init__(self, n: int, h: int, dt: Any, y: Array | None = None) -> None:
        self.x_hat, self.inv_std = np.zeros((n, h), dt), np.zeros((n, 1), dt)
        self.y = np.zeros((n, h), dt) if y is None else y
        self.avg = np.full((h, 1), 1.0 / h, dt)  # rows @ avg = the row means

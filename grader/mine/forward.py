"""The GPT's forward pass written the way the labs write it, each step a swappable piece.

`PiecewiseModel` shares the weights of a loaded `GPTModel` and computes the same logits
step by step::

    x = token_embedding[ids] + position_embedding[pos]                     (framework)
    for each block:  x = block_forward(block, x, causal_mask)              (lab05)
        inside, block.attn.forward(a, mask) is, per head h:
            K/V rows appended to the cache            kv_cache_append      (lab11)
            s = attention_scores(q_h, k_h, 1/√hd)                          (lab04)
            apply_mask(s, [0 … 0 | mask])   (the cached prefix stays visible)
            p = softmax(s);  ctx_h = p @ v_h                               (lab04)
    logits = layernorm(x, final_ln) @ lm_head                              (lab05)

The blocks run through the framework's `run_blocks` (the loop every forward uses); the
block step points the layer's attention at the cache and calls the pieces.

Each step calls the function `Pieces` holds: the student's or the framework's. A value a
student function returns is checked before the next step uses it (a Tensor or array of
the expected shape, finite), so a wrong one is named by `PieceError` instead of breaking
the step after it.

Not here: the decode loop (`grader.mine.decode`), choosing the pieces (`grader.mine.choose`).
The fused `GPTModel.forward` stays the framework's fast path; this one is for running the
student's code and is a few times slower.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.attention import MultiHeadAttention, create_causal_mask
from framework.kv_cache import KVCache
from framework.model import GPTModel
from framework.module import array_of
from framework.tensor import Tensor, tensor_from
from framework.transformer import TransformerBlock, run_blocks
from grader.mine.pieces import PieceError, Pieces

__all__ = ["PiecesAttention", "PiecewiseModel", "result_array", "wired_block"]

Array = NDArray[np.float32]


def result_array(value: Any, shape: tuple[int | None, ...], piece: str, function: str) -> Array:
    """`value` (what `function` returned) as a float32 array of `shape`, or `PieceError`.

    A None in `shape` accepts any size in that dimension.
    """
    want = "[" + ", ".join("?" if w is None else str(w) for w in shape) + "]"
    if isinstance(value, Tensor):
        arr = value.numpy()
    elif isinstance(value, np.ndarray):
        arr = value
    else:
        what = "None (did it forget to return?)" if value is None else type(value).__name__
        raise PieceError(piece, function, f"returned {what}, expected a Tensor {want}")
    fits = len(arr.shape) == len(shape)
    if not fits or any(w is not None and w != n for w, n in zip(shape, arr.shape, strict=True)):
        raise PieceError(piece, function, f"returned shape {list(arr.shape)}, expected {want}")
    if not np.issubdtype(arr.dtype, np.number) or not np.isfinite(arr).all():
        raise PieceError(piece, function, "returned NaN, inf or non-numbers")
    return arr.astype(np.float32, copy=False)


class PiecesAttention(MultiHeadAttention):
    """One layer's attention, head by head through the lab04 (and lab11) pieces.

    `bind(cache, start)` before a forward says where this call's rows go: with a cache the
    K/V rows are appended to layer `layer` and every cached row is attended to.
    """

    def __init__(self, base: MultiHeadAttention, layer: int, pieces: Pieces) -> None:
        super().__init__(base.hidden_dim, base.num_heads)
        self.w_q, self.w_k, self.w_v, self.w_o = base.w_q, base.w_k, base.w_v, base.w_o
        self.layer, self.pieces = layer, pieces
        self.cache: KVCache | None = None
        self.start = 0
        self._w_qkv = base.fused_qkv()  # (H, 3H)

    def bind(self, cache: KVCache | None, start: int) -> None:
        """Use `cache` (or none) for the next forward, whose first row is position `start`."""
        self.cache, self.start = cache, start

    def _append(self, k: Array, v: Array) -> tuple[Array, Array]:
        """Append this call's K/V rows through the pieces; return all cached rows."""
        p, cache, layer = self.pieces, self.cache, self.layer
        assert cache is not None
        for i in range(k.shape[0]):
            pos = p.kv_cache_append(cache, layer, tensor_from(k[i]), tensor_from(v[i]))
            if pos != self.start + i:
                why = f"returned position {pos!r} for the row of position {self.start + i}"
                raise PieceError("kv_cache", "kv_cache_append", why)
        n = p.kv_cache_len(cache, layer)
        if n != self.start + k.shape[0]:
            why = f"says {n!r} rows after position {self.start + k.shape[0] - 1} was written"
            raise PieceError("kv_cache", "kv_cache_len", why)
        return array_of(cache.k)[layer, :n], array_of(cache.v)[layer, :n]  # (T, H) each

    def forward(self, x: Any, mask: Any = None) -> Tensor:
        """Attention over `x` [S, H] (and the bound cache); returns a new [S, H] Tensor."""
        xs = result_array(x, (None, self.hidden_dim), "block", "block_forward (attention input)")
        s, h, hd, p = xs.shape[0], self.hidden_dim, self.head_dim, self.pieces
        qkv = xs @ self._w_qkv  # (S, 3H)
        keys, values = qkv[:, h : 2 * h], qkv[:, 2 * h :]  # (S, H) each
        if self.cache is not None:
            keys, values = self._append(keys, values)  # (T, H) each
        t = keys.shape[0]
        full = None
        if mask is not None:
            m = result_array(mask, (s, s), "block", "block_forward (its mask)")
            full = tensor_from(np.concatenate([np.zeros((s, t - s), np.float32), m], axis=1))
        ctx = np.empty((s, h), np.float32)  # (S, H)
        for head in range(self.num_heads):
            cols = slice(head * hd, (head + 1) * hd)
            q_h, k_h = tensor_from(qkv[:, cols]), tensor_from(keys[:, cols])  # (S, hd), (T, hd)
            raw = p.attention_scores(q_h, k_h, self.scale)
            scores = tensor_from(result_array(raw, (s, t), "scores", "attention_scores"))
            if full is not None:
                p.apply_mask(scores, full)
                result_array(scores, (s, t), "mask", "apply_mask")  # finite after the mask
            probs = result_array(p.softmax(scores), (s, t), "softmax", "softmax")  # (S, T)
            ctx[:, cols] = probs @ values[:, cols]
        return tensor_from(ctx @ array_of(self.w_o))  # (S, H)


def wired_block(p: Pieces, block: TransformerBlock, x: Tensor, mask: Tensor) -> Tensor:
    """The framework's Pre-LN wiring, calling the `layernorm` and `residual_add` pieces."""
    shape = tuple(x.shape)
    h = tensor_from(x)  # the residual stream: a copy, x stays as it was
    ln1, ln2 = block.ln1, block.ln2
    a = result_array(p.layernorm(h, ln1.gamma, ln1.beta, ln1.eps), shape, "layernorm", "layernorm")
    p.residual_add(h, block.attn.forward(tensor_from(a), mask))
    result_array(h, shape, "residual", "residual_add")  # still finite
    b = result_array(p.layernorm(h, ln2.gamma, ln2.beta, ln2.eps), shape, "layernorm", "layernorm")
    p.residual_add(h, block.ffn.forward(b))
    return h


class PiecewiseModel(GPTModel):
    """The weights of `base` (shared, not copied), run through `pieces`.

    Example:
        >>> from framework.config import tiny_config
        >>> from framework.model import init_weights
        >>> base = GPTModel(tiny_config()); init_weights(base, seed=0)
        >>> a, b = base.forward([2, 76]).numpy(), PiecewiseModel(base, Pieces()).forward([2, 76])
        >>> bool(np.allclose(a, b.numpy(), atol=1e-5))
        True
    """

    def __init__(self, base: GPTModel, pieces: Pieces) -> None:
        super().__init__(base.config)
        self.embedding, self.blocks = base.embedding, base.blocks
        self.final_ln, self.lm_head = base.final_ln, base.lm_head
        self.pieces = pieces
        self.attention = [PiecesAttention(b.attn, i, pieces) for i, b in enumerate(base.blocks)]
        self.proxies: list[TransformerBlock] = []  # the blocks, each with its PiecesAttention
        for block, attn in zip(base.blocks, self.attention, strict=True):
            proxy = copy.copy(block)  # shares ln1, ln2, ffn; its own attn
            proxy.attn = attn
            self.proxies.append(proxy)

    def new_cache(self) -> KVCache:
        """An empty cache for this model, made by the `kv_cache_alloc` piece."""
        c = self.config
        cache = self.pieces.kv_cache_alloc(c.num_layers, c.max_seq_len, c.hidden_dim)
        if not isinstance(cache, KVCache):
            why = f"returned {type(cache).__name__}, expected a framework KVCache"
            raise PieceError("kv_cache", "kv_cache_alloc", why)
        return cache

    def forward(self, ids: Any, kv_cache: KVCache | None = None, start_pos: int = 0) -> Tensor:
        """Logits [S, V] for `ids` at positions start_pos…; with a cache, rows are appended.

        The cache must hold exactly `start_pos` rows in every layer (it only grows here).
        """
        idx = self.embedding.check_ids(ids, start_pos)
        s, p = idx.size, self.pieces
        w_tok, w_pos = (
            array_of(self.embedding.token_embedding),
            array_of(self.embedding.position_embedding),
        )
        x = tensor_from(w_tok[idx] + w_pos[start_pos : start_pos + s])  # (S, H)
        mask = create_causal_mask(s)  # (S, S)

        def step(layer: int, block: TransformerBlock, x: Tensor) -> Tensor:
            self.attention[layer].bind(kv_cache, start_pos)
            if p.block_forward is None:
                return wired_block(p, block, x, mask)  # (S, H)
            out = p.block_forward(block, x, mask)
            return tensor_from(result_array(out, (s, self.config.hidden_dim), "block",
                                            "block_forward"))  # fmt: skip

        x = run_blocks(self.proxies, x, step)  # (S, H)
        ln = self.final_ln
        final = p.layernorm(x, ln.gamma, ln.beta, ln.eps)
        out = result_array(final, tuple(x.shape), "layernorm", "layernorm") @ array_of(self.lm_head)
        return tensor_from(out)  # (S, V)

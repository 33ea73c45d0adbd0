"""The GPT as functions of its weights: every forward over token ids, and the exact backward.

    x      = token_embedding[ids] + position_embedding[start_pos : start_pos + T]  # (B, T, H)
    x      = block_l(x)  for l = 0 … L−1         (`run_blocks`)                     # (B, T, H)
    logits = final_ln(x) @ lm_head                                                  # (B, T, V)

Three forwards share that one embedding, one loop over the blocks and one head, and
differ only in their block step: `gpt_logits` keeps nothing (inference over a batch),
`gpt_logits_kv` writes and reads a `KVCache` (inference over one sequence, from any
position), `gpt_forward` keeps every block's activations for `gpt_backward` (training).
`GPTModel` (`framework.model`) holds the weights and calls these; `GPTWeights` is the
same weights as plain arrays.

`gpt_backward` takes d(loss)/d(logits) — whatever loss the caller uses; for the mean
cross-entropy over B·T positions that is (softmax − one_hot) / (B·T) — and returns the
gradient of every parameter, keyed by the names of `GPTModel.parameters()`. It runs the
forward's lines upwards, each layer's backward sitting beside its forward in that layer's
module (as in micrograd). The embedding's backward is a scatter-add: a token id used
several times collects the sum of its rows, and the position table's row t collects the
gradients of position t over the batch.

Unlike the C course's training pass, this one runs the real attention in the forward, back-
propagates through softmax and the causal mask, keeps both residual paths, takes GELU's
derivative at the pre-activation, and sums (never averages or re-sums) over the batch
exactly as `dlogits` says. All functions are dtype-generic: the model trains in float32,
the gradient checks run the same code on float64 copies.

Not here: the loss, the optimizer, gradient clipping (`framework.loss`, `optimizer`), the
one-token decode step with folded weights (`framework.decode_step`).

Example:
    >>> from framework.config import ModelConfig
    >>> cfg = ModelConfig(11, 8, 2, 1, 16, 8)
    >>> state = {n: np.full(s, 0.1) for n, s in parameter_shapes(cfg)}
    >>> w = GPTWeights.from_state(state, cfg)
    >>> logits, act = gpt_forward(w, np.array([[1, 2, 3]]))
    >>> grads = gpt_backward(np.ones_like(logits), act, w)
    >>> logits.shape, grads["lm_head"].shape, len(grads)
    ((1, 3, 11), (8, 11), 17)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.attention import causal_mask_array
from framework.config import ModelConfig
from framework.kv_cache import KVCache
from framework.layernorm import LN_EPS, LayerNormActivations, layernorm_backward, layernorm_forward
from framework.module import array_of
from framework.transformer import (
    BlockActivations,
    BlockWeights,
    TransformerBlock,
    block_backward,
    block_forward,
    block_output,
    block_output_kv,
    run_blocks,
)

__all__ = [
    "GPTActivations",
    "GPTWeights",
    "check_batch_ids",
    "gpt_backward",
    "gpt_forward",
    "gpt_logits",
    "gpt_logits_kv",
    "parameter_shapes",
]

Array = NDArray[Any]


def parameter_shapes(config: ModelConfig) -> list[tuple[str, tuple[int, ...]]]:
    """Names and shapes of every parameter in file order, without allocating anything.

    `model_load` checks a file's length with it before reading; a test keeps it equal to
    `GPTModel(config).parameters()`.

    Example:
        >>> parameter_shapes(ModelConfig(260, 64, 4, 1, 256, 128))[:2]
        [('embedding.token_embedding', (260, 64)), ('embedding.position_embedding', (128, 64))]
    """
    v, h, f, s = config.vocab_size, config.hidden_dim, config.ffn_dim, config.max_seq_len
    local: dict[str, tuple[int, ...]] = {
        "ln1.gamma": (h,), "ln1.beta": (h,), "attn.w_q": (h, h), "attn.w_k": (h, h),
        "attn.w_v": (h, h), "attn.w_o": (h, h), "ln2.gamma": (h,), "ln2.beta": (h,),
        "ffn.w1": (h, f), "ffn.b1": (f,), "ffn.w2": (f, h), "ffn.b2": (h,),
    }  # fmt: skip
    shapes: list[tuple[str, tuple[int, ...]]] = [
        ("embedding.token_embedding", (v, h)),
        ("embedding.position_embedding", (s, h)),
    ]
    for layer in range(config.num_layers):
        shapes += [(f"blocks.{layer}.{n}", local[n]) for n in TransformerBlock.PARAM_NAMES]
    return [*shapes, ("final_ln.gamma", (h,)), ("final_ln.beta", (h,)), ("lm_head", (h, v))]


def check_batch_ids(ids: Any, config: ModelConfig) -> NDArray[np.int64]:
    """Validate a batch of token ids [B, T] for `config`; return it as int64.

    Raises:
        TypeError: if `ids` is not a 2-D array of ints.
        ValueError: if it is empty, T > max_seq_len, or an id is outside [0, vocab_size).
    """
    arr = np.asarray(ids)
    if arr.ndim != 2 or (arr.size and arr.dtype.kind not in "iu"):
        raise TypeError(f"ids must be a 2-D array of ints [B, T], got {arr.dtype} {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"ids must not be empty, got shape {arr.shape}")
    if arr.shape[1] > config.max_seq_len:
        raise ValueError(f"T = {arr.shape[1]} exceeds max_seq_len {config.max_seq_len}")
    if arr.min() < 0 or arr.max() >= config.vocab_size:
        bad = tuple(int(i) for i in np.argwhere((arr < 0) | (arr >= config.vocab_size))[0])
        raise ValueError(f"ids{list(bad)} = {int(arr[bad])} is outside [0, {config.vocab_size})")
    return arr.astype(np.int64, copy=False)


@dataclass
class GPTWeights:
    """Every parameter of a GPT as numpy arrays of one dtype (blocks with Q/K/V fused)."""

    token_embedding: Array  # (V, H)
    position_embedding: Array  # (max_seq_len, H)
    blocks: list[BlockWeights]
    final_gamma: Array  # (H,)
    final_beta: Array  # (H,)
    lm_head: Array  # (H, V)
    eps: float = LN_EPS

    @classmethod
    def from_state(cls, state: Mapping[str, Array], config: ModelConfig) -> GPTWeights:
        """Build from a name -> array mapping (e.g. float64 copies of a `state_dict()`)."""
        blocks = [
            BlockWeights.from_state(state, f"blocks.{i}.", config.num_heads)
            for i in range(config.num_layers)
        ]
        return cls(
            state["embedding.token_embedding"], state["embedding.position_embedding"], blocks,
            state["final_ln.gamma"], state["final_ln.beta"], state["lm_head"],
        )  # fmt: skip


@dataclass
class GPTActivations:
    """What `gpt_backward` needs from one `gpt_forward`.

    Attributes:
        ids: the token ids, [B, T].
        blocks: one `BlockActivations` per layer, bottom first.
        final_ln: the final LayerNorm's activations.
        final_out: final_ln's output, the input of lm_head, [B, T, H].
    """

    ids: NDArray[np.int64]
    blocks: list[BlockActivations]
    final_ln: LayerNormActivations
    final_out: Array


def _embed(w: GPTWeights, ids: NDArray[np.integer[Any]], start_pos: int = 0) -> Array:
    """token_embedding[ids] + position_embedding[start_pos…] for ids [..., T]; a new array."""
    x: Array = w.token_embedding[ids]  # (..., T, H)
    x += w.position_embedding[start_pos : start_pos + ids.shape[-1]]
    return x


def _head(w: GPTWeights, x: Array) -> Array:
    """final_ln(x) @ lm_head: logits [..., T, V] of the last block's output [..., T, H]."""
    out, _ = layernorm_forward(x, w.final_gamma, w.final_beta, w.eps)  # (..., T, H)
    return out @ w.lm_head  # (..., T, V)


def gpt_logits(w: GPTWeights, ids: NDArray[np.integer[Any]], start_pos: int = 0) -> Array:
    """Logits [B, T, V] for validated ids [B, T] at positions start_pos…, keeping nothing."""
    x = _embed(w, ids, start_pos)  # (B, T, H)
    mask = causal_mask_array(ids.shape[-1], ids.shape[-1], x.dtype)  # (T, T)
    x = run_blocks(w.blocks, x, lambda _, bw, x: block_output(x, bw, mask))  # (B, T, H)
    return _head(w, x)  # (B, T, V)


def gpt_logits_kv(
    w: GPTWeights, ids: NDArray[np.integer[Any]], cache: KVCache, start_pos: int
) -> Array:
    """Logits [S, V] for validated ids [S] at positions start_pos…, through a KV cache.

    Writes the S positions' keys and values into every layer of `cache` (the caller has
    checked its size and room), attends over rows 0…start_pos+S−1, and sets every layer's
    length to start_pos + S.
    """
    keys, values = array_of(cache.k), array_of(cache.v)  # (L, max_seq_len, H)

    def block(layer: int, bw: BlockWeights, x: Array) -> Array:
        return block_output_kv(x, bw, keys[layer], values[layer], start_pos)  # (S, H)

    x = run_blocks(w.blocks, _embed(w, ids, start_pos), block)  # (S, H)
    cache.lengths[:] = [start_pos + ids.shape[-1]] * len(w.blocks)
    return _head(w, x)  # (S, V)


def gpt_forward(w: GPTWeights, ids: NDArray[np.integer[Any]]) -> tuple[Array, GPTActivations]:
    """Logits for a batch of already-validated ids [B, T]; returns (logits [B, T, V], acts)."""
    t = ids.shape[1]
    x = _embed(w, ids)  # (B, T, H)
    mask = causal_mask_array(t, t, x.dtype)  # (T, T)
    block_acts: list[BlockActivations] = []

    def block(_: int, bw: BlockWeights, x: Array) -> Array:
        out, act = block_forward(x, bw, mask)  # (B, T, H)
        block_acts.append(act)
        return out

    x = run_blocks(w.blocks, x, block)  # (B, T, H)
    out, ln_act = layernorm_forward(x, w.final_gamma, w.final_beta, w.eps)  # (B, T, H)
    logits = out @ w.lm_head  # (B, T, V)
    return logits, GPTActivations(ids.astype(np.int64), block_acts, ln_act, out)


def gpt_backward(dlogits: Array, act: GPTActivations, w: GPTWeights) -> dict[str, Array]:
    """Gradient of every parameter for d(loss)/d(logits) = `dlogits` [B, T, V].

    Returns:
        name -> gradient array (same shape as the parameter), in `parameters()` order.
    """
    b, t, v = dlogits.shape
    h = w.lm_head.shape[0]
    d_lm_head = act.final_out.reshape(-1, h).T @ dlogits.reshape(-1, v)  # (H, V)
    dx = dlogits @ w.lm_head.T  # (B, T, H)
    dx, d_final_gamma, d_final_beta = layernorm_backward(dx, act.final_ln, w.final_gamma)
    block_grads: list[dict[str, Array]] = []
    for bw, bact in zip(reversed(w.blocks), reversed(act.blocks), strict=True):  # top first
        dx, g = block_backward(dx, bact, bw)  # (B, T, H)
        block_grads.append(g)
    d_token = np.zeros_like(w.token_embedding)  # (V, H)
    np.add.at(d_token, act.ids.reshape(-1), dx.reshape(b * t, h))  # repeated ids add up
    d_position = np.zeros_like(w.position_embedding)  # (max_seq_len, H)
    d_position[:t] = dx.sum(axis=0)  # (T, H): position t collects every sequence's row t
    grads = {"embedding.token_embedding": d_token, "embedding.position_embedding": d_position}
    for layer, g in enumerate(reversed(block_grads)):
        grads.update({f"blocks.{layer}.{name}": arr for name, arr in g.items()})
    grads.update({"final_ln.gamma": d_final_gamma, "final_ln.beta": d_final_beta})
    grads["lm_head"] = d_lm_head
    return grads

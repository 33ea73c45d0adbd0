"""The GPT as functions of its weights: every forward over token ids, and the exact backward.

    x      = token_embedding[ids] + position_embedding[start_pos : start_pos + T]  # (B, T, H)
    x      = block_l(x)  for l = 0 … L−1         (`run_blocks`)                     # (B, T, H)
    logits = final_ln(x) @ lm_head                                                  # (B, T, V)

Three forwards: `gpt_forward` keeps every block's activations for `gpt_backward`
(training), `gpt_logits` keeps nothing (inference over a batch), and both run the one
batch forward of `framework.backward` over reused buffers, so their logits agree bit for
bit; `gpt_logits_kv` writes and reads a `KVCache` (inference over one sequence, from any
position; its prefill from position 0 is `gpt_logits`'s forward too, then one block step
per layer through `run_blocks`). `GPTModel` (`framework.model`) holds the weights and
calls these; `GPTWeights` is the same weights as plain arrays.

`gpt_backward` takes d(loss)/d(logits) — whatever loss the caller uses; for the mean
cross-entropy over B·T positions that is (softmax − one_hot) / (B·T) — and returns the
gradient of every parameter, keyed by the names of `GPTModel.parameters()`, all views of
one flat array. It runs the forward's lines upwards (`framework.backward`, every layer's
backward beside its forward; the layers' own modules hold the plain reference versions
the labs read). The embedding's backward is a scatter-add: a token id used several times
collects the sum of its rows, and the position table's row t collects the gradients of
position t over the batch.

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

from framework.backward import train_backward, train_forward
from framework.config import ModelConfig
from framework.kv_cache import KVCache
from framework.layernorm import LN_EPS, layernorm_forward
from framework.module import array_of
from framework.transformer import (
    BlockWeights,
    TransformerBlock,
    block_output_kv,
    run_blocks,
)
from framework.workspace import Workspace

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
        workspace: the buffers of the step, every activation of every layer
            (`framework.backward.Workspace`); kept alive by this object.
    """

    workspace: Workspace


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
    """Logits [B, T, V] for validated ids [B, T] at positions start_pos…, keeping nothing.

    The training forward's own code (`framework.backward`) over one reused layer of
    buffers, so its logits are the training forward's, bit for bit.
    """
    ws = Workspace.acquire(w, ids.shape[0], ids.shape[1], keep=False)
    return train_forward(w, ids, ws, start_pos).copy()  # (B, T, V)


def gpt_logits_kv(
    w: GPTWeights, ids: NDArray[np.integer[Any]], cache: KVCache, start_pos: int
) -> Array:
    """Logits [S, V] for validated ids [S] at positions start_pos…, through a KV cache.

    Writes the S positions' keys and values into every layer of `cache` (the caller has
    checked its size and room), attends over rows 0…start_pos+S−1, and sets every layer's
    length to start_pos + S. From position 0 (a prefill) the logits are `gpt_logits`'s,
    bit for bit.
    """
    keys, values = array_of(cache.k), array_of(cache.v)  # (L, max_seq_len, H)
    if start_pos == 0:  # a prefill: the batch forward's code, writing K/V on the way
        s = ids.shape[-1]
        ws = Workspace.acquire(w, 1, s, keep=False)
        logits: Array = train_forward(w, ids[None], ws, kv=(keys[:, :s], values[:, :s]))[0].copy()
        cache.lengths[:] = [s] * len(w.blocks)
        return logits  # (S, V)

    def block(layer: int, bw: BlockWeights, x: Array) -> Array:
        return block_output_kv(x, bw, keys[layer], values[layer], start_pos)  # (S, H)

    x = run_blocks(w.blocks, _embed(w, ids, start_pos), block)  # (S, H)
    cache.lengths[:] = [start_pos + ids.shape[-1]] * len(w.blocks)
    return _head(w, x)  # (S, V)


def gpt_forward(w: GPTWeights, ids: NDArray[np.integer[Any]]) -> tuple[Array, GPTActivations]:
    """Logits for a batch of already-validated ids [B, T]; returns (logits [B, T, V], acts).

    The training forward of `framework.backward`: the logits and every activation live in
    a reused workspace, valid while the caller keeps either the logits or `acts`.
    """
    ws = Workspace.acquire(w, ids.shape[0], ids.shape[1])
    return train_forward(w, ids, ws), GPTActivations(ws)


def gpt_backward(dlogits: Array, act: GPTActivations, w: GPTWeights) -> dict[str, Array]:
    """Gradient of every parameter for d(loss)/d(logits) = `dlogits` [B, T, V].

    Returns:
        name -> gradient array (same shape as the parameter), in `parameters()` order,
        views into one new flat array (what `clip_grad_norm` and `AdamW` run fastest on).
    """
    return train_backward(dlogits, act.workspace, w)

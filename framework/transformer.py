"""The Pre-LN Transformer block: forward and backward side by side.

    h   = x + attn(ln1(x), mask)        # attention sub-layer with its residual
    out = h + ffn(ln2(h))               # feed-forward sub-layer with its residual

Backward runs the same lines upwards; each residual passes its gradient through unchanged
and adds the sub-layer's (the C course dropped the attention residual's share)::

    dh = dout + ln2ᵀ(ffnᵀ(dout)),   dx = dh + ln1ᵀ(attnᵀ(dh))

`BlockWeights` is the block's parameters as plain numpy arrays (float32 views of a
`TransformerBlock`, or float64 copies for gradient checks) with Q, K and V fused.
`run_blocks` is the stack, "a block, then the next": the one loop every forward of the GPT
runs its blocks through (`framework.gpt`, `framework.decode_step`, `grader.mine.forward`),
each supplying its own block step.

Not here: Post-LN, dropout, parallel attention/FFN layouts, the embedding and the head
(`framework.gpt`).

Example:
    >>> blk = TransformerBlock(8, 2, 32)
    >>> [name for name, _ in blk.parameters()][:3]
    ['ln1.gamma', 'ln1.beta', 'attn.w_q']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from framework.attention import (
    AttentionActivations,
    MultiHeadAttention,
    attention_backward,
    attention_forward,
    attention_forward_kv,
)
from framework.ffn import FFN, FFNActivations, ffn_backward, ffn_forward
from framework.layernorm import (
    LN_EPS,
    LayerNorm,
    LayerNormActivations,
    layernorm_backward,
    layernorm_forward,
)
from framework.module import Member, Module, array_of
from framework.tensor import Tensor, as_tensor
from framework.validate import check_rng, positive_int

__all__ = [
    "BlockActivations",
    "BlockWeights",
    "TransformerBlock",
    "block_backward",
    "block_forward",
    "block_output",
    "block_output_kv",
    "run_blocks",
]

Array = NDArray[Any]
BlockT = TypeVar("BlockT")  # what one layer is to its step: weights, a module, folded arrays
StreamT = TypeVar("StreamT")  # the residual stream: an array or a Tensor


@dataclass
class BlockWeights:
    """One block's parameters as numpy arrays (any float dtype), Q/K/V fused into w_qkv."""

    ln1_gamma: Array
    ln1_beta: Array
    w_qkv: Array  # (H, 3H) = [W_q | W_k | W_v]
    w_o: Array
    ln2_gamma: Array
    ln2_beta: Array
    w1: Array
    b1: Array
    w2: Array
    b2: Array
    num_heads: int
    eps: float = LN_EPS

    @classmethod
    def from_state(
        cls, state: Mapping[str, Array], prefix: str, num_heads: int, eps: float = LN_EPS
    ) -> BlockWeights:
        """Pick `prefix + "ln1.gamma"` etc. out of a state dict (dtype kept)."""
        p = {name: state[prefix + name] for name in TransformerBlock.PARAM_NAMES}
        w_qkv = np.concatenate([p["attn.w_q"], p["attn.w_k"], p["attn.w_v"]], axis=1)  # (H, 3H)
        return cls(
            p["ln1.gamma"], p["ln1.beta"], w_qkv, p["attn.w_o"], p["ln2.gamma"],
            p["ln2.beta"], p["ffn.w1"], p["ffn.b1"], p["ffn.w2"], p["ffn.b2"], num_heads, eps,
        )  # fmt: skip


@dataclass
class BlockActivations:
    """What the backward pass needs from one block forward, one field per sub-layer."""

    ln1: LayerNormActivations
    attn: AttentionActivations
    ln2: LayerNormActivations
    ffn: FFNActivations


def block_forward(x: Array, w: BlockWeights, mask: Array | None) -> tuple[Array, BlockActivations]:
    """Pre-LN block over `x` [..., T, H]; returns (out [..., T, H], activations). `x` is kept."""
    a, ln1 = layernorm_forward(x, w.ln1_gamma, w.ln1_beta, w.eps)  # (..., T, H)
    attn_out, attn = attention_forward(a, w.w_qkv, w.w_o, w.num_heads, mask)  # (..., T, H)
    h = x + attn_out  # (..., T, H)
    b, ln2 = layernorm_forward(h, w.ln2_gamma, w.ln2_beta, w.eps)  # (..., T, H)
    out, ffn = ffn_forward(b, w.w1, w.b1, w.w2, w.b2)  # (..., T, H)
    out += h
    return out, BlockActivations(ln1, attn, ln2, ffn)


def block_output(x: Array, w: BlockWeights, mask: Array | None) -> Array:
    """The same output as `block_forward`, keeping nothing (the inference path).

    Each intermediate is dropped as soon as it is used, so the next call reuses the same
    memory instead of touching fresh pages.
    """
    h = attention_forward(layernorm_forward(x, w.ln1_gamma, w.ln1_beta, w.eps)[0],
                          w.w_qkv, w.w_o, w.num_heads, mask)[0]  # fmt: skip
    h += x  # (..., T, H)
    out = ffn_forward(layernorm_forward(h, w.ln2_gamma, w.ln2_beta, w.eps)[0],
                      w.w1, w.b1, w.w2, w.b2)[0]  # fmt: skip
    out += h  # (..., T, H)
    return out


def block_output_kv(x: Array, w: BlockWeights, keys: Array, values: Array, start: int) -> Array:
    """`block_output` for positions start…start+S−1 of one sequence `x` [S, H], with a cache.

    Writes this call's K/V rows into one cache layer `keys`/`values` [max_seq_len, H] and
    attends over its rows 0…start+S−1 (`attention_forward_kv`); the caller checks room.
    """
    a = layernorm_forward(x, w.ln1_gamma, w.ln1_beta, w.eps)[0]  # (S, H)
    h = attention_forward_kv(a, w.w_qkv, w.w_o, w.num_heads, keys, values, start)  # (S, H)
    h += x
    out = ffn_forward(layernorm_forward(h, w.ln2_gamma, w.ln2_beta, w.eps)[0],
                      w.w1, w.b1, w.w2, w.b2)[0]  # fmt: skip
    out += h  # (S, H)
    return out


def run_blocks(
    blocks: Iterable[BlockT], x: StreamT, block: Callable[[int, BlockT, StreamT], StreamT]
) -> StreamT:
    """The stack: `x = block(l, blocks[l], x)` for l = 0 … L−1, bottom first; returns the last x.

    `block` says what one layer does on this path (keep activations or not, use a KV cache
    at layer l, call a student's pieces); the order of the layers is written only here.

    Example:
        >>> run_blocks([1, 2, 3], 0, lambda layer, b, x: 10 * x + b)
        123
    """
    for layer, weights in enumerate(blocks):
        x = block(layer, weights, x)
    return x


def block_backward(
    dout: Array, act: BlockActivations, w: BlockWeights
) -> tuple[Array, dict[str, Array]]:
    """Gradients of a block given d(loss)/d(out) [..., T, H].

    Returns:
        (dx [..., T, H], gradients keyed by the block's own parameter names, e.g.
        "attn.w_q"), each summed over all rows.
    """
    db, dw1, db1, dw2, db2 = ffn_backward(dout, act.ffn, w.w1, w.w2)
    dh, dln2_g, dln2_b = layernorm_backward(db, act.ln2, w.ln2_gamma)
    dh += dout  # FFN residual
    da, dw_qkv, dw_o = attention_backward(dh, act.attn, w.w_qkv, w.w_o)
    dx, dln1_g, dln1_b = layernorm_backward(da, act.ln1, w.ln1_gamma)
    dx += dh  # attention residual
    dw_q, dw_k, dw_v = np.split(dw_qkv, 3, axis=1)  # 3 × (H, H)
    grads = {
        "ln1.gamma": dln1_g, "ln1.beta": dln1_b,
        "attn.w_q": dw_q, "attn.w_k": dw_k, "attn.w_v": dw_v, "attn.w_o": dw_o,
        "ln2.gamma": dln2_g, "ln2.beta": dln2_b,
        "ffn.w1": dw1, "ffn.b1": db1, "ffn.w2": dw2, "ffn.b2": db2,
    }  # fmt: skip
    return dx, grads


class TransformerBlock(Module):
    """Pre-LN block: `ln1`, `attn`, `ln2`, `ffn` (LayerNorm eps 1e-5).

    Args:
        hidden_dim: H, the model width.
        num_heads: attention heads; must divide `hidden_dim`.
        ffn_dim: F, the FFN's inner width.

    Raises:
        TypeError: if a size is not an int.
        ValueError: if a size is not positive or `hidden_dim % num_heads != 0`.

    Example:
        >>> TransformerBlock(64, 4, 256).num_parameters()
        49728
    """

    PARAM_NAMES = (
        "ln1.gamma", "ln1.beta", "attn.w_q", "attn.w_k", "attn.w_v", "attn.w_o",
        "ln2.gamma", "ln2.beta", "ffn.w1", "ffn.b1", "ffn.w2", "ffn.b2",
    )  # fmt: skip

    def __init__(self, hidden_dim: int, num_heads: int, ffn_dim: int) -> None:
        self.hidden_dim = positive_int(hidden_dim, "hidden_dim")
        self.ln1 = LayerNorm(self.hidden_dim)
        self.attn = MultiHeadAttention(self.hidden_dim, num_heads)
        self.ln2 = LayerNorm(self.hidden_dim)
        self.ffn = FFN(self.hidden_dim, ffn_dim)

    def _members(self) -> list[tuple[str, Member]]:
        return [("ln1", self.ln1), ("attn", self.attn), ("ln2", self.ln2), ("ffn", self.ffn)]

    def init_weights(self, rng: np.random.Generator, std: float = 0.02) -> None:
        """In place: LayerNorms reset, then W_q, W_k, W_v, W_o, W1, W2 drawn from N(0, std²)."""
        check_rng(rng)
        self.ln1.reset()
        self.ln2.reset()
        self.attn.init_weights(rng, std)
        self.ffn.init_weights(rng, std)

    def weights(self) -> BlockWeights:
        """The block's parameters as float32 numpy views (W_q/W_k/W_v concatenated)."""
        return BlockWeights(
            array_of(self.ln1.gamma), array_of(self.ln1.beta), self.attn.fused_qkv(),
            array_of(self.attn.w_o), array_of(self.ln2.gamma), array_of(self.ln2.beta),
            *self.ffn.arrays(), num_heads=self.attn.num_heads, eps=self.ln1.eps,
        )  # fmt: skip

    def forward(self, x: Any, mask: Any = None) -> Tensor:
        """The block over `x` [S, H]; returns a new Tensor, `x` unchanged.

        Args:
            x: input rows, [S, H].
            mask: additive [S, S] mask (e.g. `create_causal_mask(S)`), or None.

        Raises:
            TypeError: if `x` or `mask` is not a Tensor or numeric array.
            ValueError: if `x` is not [S, H] or `mask` is not [S, S].
        """
        h = self.ln1.forward(x)  # (S, H), validates x
        a = self.attn.forward(h, mask)  # (S, H), validates mask
        r = as_tensor(x, "x").numpy() + a.numpy()  # (S, H)
        f = self.ffn.forward(self.ln2.forward(r)).numpy()  # (S, H)
        return Tensor((r + f).astype(np.float32).reshape(-1), r.shape)

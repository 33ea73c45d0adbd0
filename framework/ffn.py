"""Position-wise feed-forward network with GELU (tanh form): forward and backward together.

    pre = x @ W1 + b1          # (…, F)   W1 stored [in, out] = [H, F]
    hid = gelu(pre)            # (…, F)
    y   = hid @ W2 + b2        # (…, H)   W2 [F, H]

GELU is the tanh approximation the C course uses,
gelu(u) = ½·u·(1 + tanh(c·(u + 0.044715·u³))), c = √(2/π), and its derivative is taken at
the pre-activation `pre` (the C course evaluated it at the post-activation values, which
is wrong)::

    gelu'(u) = ½·(1 + t) + ½·u·(1 − t²)·c·(1 + 3·0.044715·u²),  t = tanh(c·(u + 0.044715·u³))

`ffn_forward`/`ffn_backward` work on numpy arrays of any float dtype and leading shape; the
`FFN` module holds the Tensors (`w1`, `b1`, `w2`, `b2`; biases start at zero and are not
weight-decayed).

Not here: dropout, gated variants (SwiGLU), other activations.

Example:
    >>> round(float(gelu_tanh(np.array(1.0))), 6)
    0.841192
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.module import Member, Module, array_of
from framework.tensor import Tensor, as_tensor, tensor_zeros
from framework.validate import check_rng, positive_int

__all__ = ["FFN", "FFNActivations", "ffn_backward", "ffn_forward", "gelu_tanh", "gelu_tanh_grad"]

GELU_C = 0.7978845608028654  # sqrt(2 / pi)
GELU_A = 0.044715

Array = NDArray[Any]


def gelu_tanh(u: Array) -> Array:
    """GELU, tanh approximation, in `u`'s dtype (a new array).

    Example:
        >>> gelu_tanh(np.array([0.0])).tolist()
        [0.0]
    """
    c, ca = u.dtype.type(GELU_C), u.dtype.type(GELU_C * GELU_A)
    t = np.multiply(u, u, out=np.empty_like(u))  # (…), an array even for 0-d input
    t *= ca
    t += c
    t *= u  # c·(u + a·u³)
    np.tanh(t, out=t)
    t += 1
    t *= u
    t *= 0.5
    return t


def gelu_tanh_grad(u: Array) -> Array:
    """d gelu_tanh(u) / du, evaluated at the pre-activation `u`.

    Example:
        >>> float(gelu_tanh_grad(np.array(0.0)))
        0.5
    """
    c, ca, c3a = (u.dtype.type(v) for v in (GELU_C, GELU_C * GELU_A, 3 * GELU_C * GELU_A))
    # = ½(1 + t)·(1 + u·c·(1 + 3a·u²)·(1 − t)), since 1 − t² = (1 − t)(1 + t); two buffers
    t = np.multiply(u, u, out=np.empty_like(u))  # (…) u²
    g: Array = t * c3a  # (…)
    g += c
    g *= u  # u·c·(1 + 3a·u²)
    t *= ca
    t += c
    t *= u
    np.tanh(t, out=t)  # t = tanh(c·(u + a·u³))
    t -= 1
    g *= t  # −u·c·(1 + 3a·u²)·(1 − t)
    g -= 1
    t += 2  # 1 + t
    g *= t
    g *= -0.5
    return g


@dataclass
class FFNActivations:
    """What the backward pass needs from one FFN forward.

    Attributes:
        x: the input, [..., H].
        pre: x @ W1 + b1 before GELU, [..., F].
        hidden: gelu(pre), [..., F].
    """

    x: Array
    pre: Array
    hidden: Array


def ffn_forward(
    x: Array, w1: Array, b1: Array, w2: Array, b2: Array
) -> tuple[Array, FFNActivations]:
    """y = gelu(x @ w1 + b1) @ w2 + b2 for `x` [..., H]; returns (y, activations).

    Example:
        >>> w1, w2 = np.ones((2, 3)), np.ones((3, 2))
        >>> y, act = ffn_forward(np.ones((1, 2)), w1, np.zeros(3), w2, np.zeros(2))
        >>> act.pre.tolist(), y.round(4).tolist()  # gelu(2) = 1.9546
        ([[2.0, 2.0, 2.0]], [[5.8638, 5.8638]])
    """
    pre = x @ w1  # (..., F)
    pre += b1
    hidden = gelu_tanh(pre)  # (..., F)
    y = hidden @ w2  # (..., H)
    y += b2
    return y, FFNActivations(x, pre, hidden)


def ffn_backward(
    dy: Array, act: FFNActivations, w1: Array, w2: Array
) -> tuple[Array, Array, Array, Array, Array]:
    """Gradients of the FFN given d(loss)/dy [..., H].

    Returns:
        (dx [..., H], dw1 [H, F], db1 [F], dw2 [F, H], db2 [H]), summed over all rows.
    """
    h, f = w1.shape
    rows_dy = dy.reshape(-1, h)  # (N, H)
    dw2 = act.hidden.reshape(-1, f).T @ rows_dy  # (F, H)
    db2 = rows_dy.sum(axis=0)  # (H,)
    dpre = dy @ w2.T  # (..., F)
    dpre *= gelu_tanh_grad(act.pre)
    rows_dpre = dpre.reshape(-1, f)  # (N, F)
    dw1 = act.x.reshape(-1, h).T @ rows_dpre  # (H, F)
    db1 = rows_dpre.sum(axis=0)  # (F,)
    dx = dpre @ w1.T  # (..., H)
    return dx, dw1, db1, dw2, db2


class FFN(Module):
    """Feed-forward block: `w1` [H, F], `b1` [F], `w2` [F, H], `b2` [H] (all zeros at first).

    Args:
        hidden_dim: H, input and output width.
        ffn_dim: F, the inner width (4·H in the presets).

    Raises:
        TypeError: if a size is not an int.
        ValueError: if a size is not positive.

    Example:
        >>> FFN(64, 256).num_parameters()
        33088
    """

    no_decay = frozenset({"b1", "b2"})

    def __init__(self, hidden_dim: int, ffn_dim: int) -> None:
        self.hidden_dim = positive_int(hidden_dim, "hidden_dim")
        self.ffn_dim = positive_int(ffn_dim, "ffn_dim")
        self.w1 = tensor_zeros((self.hidden_dim, self.ffn_dim))
        self.b1 = tensor_zeros((self.ffn_dim,))
        self.w2 = tensor_zeros((self.ffn_dim, self.hidden_dim))
        self.b2 = tensor_zeros((self.hidden_dim,))

    def _members(self) -> list[tuple[str, Member]]:
        return [("w1", self.w1), ("b1", self.b1), ("w2", self.w2), ("b2", self.b2)]

    def init_weights(self, rng: np.random.Generator, std: float = 0.02) -> None:
        """In place: W1 then W2 from N(0, std²); biases set to zero."""
        check_rng(rng)
        for w in (self.w1, self.w2):
            array_of(w)[...] = rng.normal(0.0, std, size=w.shape)
        array_of(self.b1)[...] = 0.0
        array_of(self.b2)[...] = 0.0

    def arrays(self) -> tuple[Array, Array, Array, Array]:
        """Views of (w1, b1, w2, b2) as numpy arrays."""
        return array_of(self.w1), array_of(self.b1), array_of(self.w2), array_of(self.b2)

    def forward(self, x: Any) -> Tensor:
        """gelu(x @ W1 + b1) @ W2 + b2 for `x` [..., H]; returns a new Tensor.

        Raises:
            TypeError: if `x` is not a Tensor or numeric array.
            ValueError: if the last dimension of `x` is not H.
        """
        xs = as_tensor(x, "x").numpy()
        if xs.ndim == 0 or xs.shape[-1] != self.hidden_dim:
            raise ValueError(f"x must be [..., {self.hidden_dim}], got shape {xs.shape}")
        y, _ = ffn_forward(xs.astype(np.float32, copy=False), *self.arrays())
        return Tensor(np.ascontiguousarray(y, np.float32).reshape(-1), y.shape)

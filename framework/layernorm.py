"""Layer normalisation over the last dimension: forward and backward side by side.

For each row x of H numbers (population variance, divide by H, as the C course)::

    mean = Σx / H,   var = Σ(x − mean)² / H,   x̂ = (x − mean) / √(var + eps)
    y    = γ ⊙ x̂ + β

Backward, with g = dy ⊙ γ (the derivation: Ba et al. 2016, or any autograd trace)::

    dγ = Σ_rows dy ⊙ x̂,   dβ = Σ_rows dy
    dx = (g − mean(g) − x̂ ⊙ mean(g ⊙ x̂)) / √(var + eps)

`layernorm_forward`/`layernorm_backward` work on numpy arrays of any float dtype and any
leading shape (the training path and the float64 gradient checks use them directly);
`LayerNorm` is the module that holds γ (ones) and β (zeros) as Tensors.

Not here: RMSNorm, normalising over other axes, running statistics.

Example:
    >>> ln = LayerNorm(4)
    >>> [round(v, 4) for v in ln.forward([[1.0, 2.0, 3.0, 4.0]]).tolist()[0]]
    [-1.3416, -0.4472, 0.4472, 1.3416]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.module import Member, Module, array_of
from framework.tensor import Tensor, as_tensor, tensor_ones, tensor_zeros
from framework.validate import positive_int

__all__ = ["LN_EPS", "LayerNorm", "LayerNormActivations", "layernorm_backward", "layernorm_forward"]

LN_EPS = 1e-5

Array = NDArray[Any]


@dataclass
class LayerNormActivations:
    """What the backward pass needs from one LayerNorm forward.

    Attributes:
        x_hat: the normalised input (x − mean) / √(var + eps), [..., H].
        inv_std: 1 / √(var + eps) per row, [..., 1].
    """

    x_hat: Array
    inv_std: Array


def _row_mean_vector(x: Array) -> Array:
    """[H, 1] column of 1/H: `rows @ it` is the row mean, as one fast matrix product."""
    return _mean_column(x.shape[-1], x.dtype)


@lru_cache(maxsize=32)
def _mean_column(h: int, dtype: np.dtype[Any]) -> Array:
    col = np.full((h, 1), 1.0 / h, dtype=dtype)  # (H, 1)
    col.flags.writeable = False
    return col


def layernorm_forward(
    x: Array, gamma: Array, beta: Array, eps: float = LN_EPS
) -> tuple[Array, LayerNormActivations]:
    """Normalise each row of `x` [..., H]; returns (y [..., H], activations for backward).

    Computes in `x`'s dtype (float32 for the model, float64 for gradient checks).

    Example:
        >>> y, _ = layernorm_forward(np.array([[0.0, 2.0]]), np.ones(2), np.zeros(2))
        >>> y.round(3).tolist()
        [[-1.0, 1.0]]
    """
    avg = _row_mean_vector(x)  # (H, 1)
    x_hat = x - x @ avg  # (..., H) centred
    inv_std = np.square(x_hat) @ avg  # (..., 1) population variance
    inv_std += x.dtype.type(eps)
    np.sqrt(inv_std, out=inv_std)
    np.reciprocal(inv_std, out=inv_std)
    x_hat *= inv_std  # (..., H) normalised
    y = x_hat * gamma  # (..., H)
    y += beta
    return y, LayerNormActivations(x_hat, inv_std)


def layernorm_backward(
    dy: Array, act: LayerNormActivations, gamma: Array
) -> tuple[Array, Array, Array]:
    """Gradients of a LayerNorm given d(loss)/dy [..., H].

    Returns:
        (dx [..., H], dgamma [H], dbeta [H]); dgamma/dbeta are summed over all rows.

    Example:
        >>> y, act = layernorm_forward(np.array([[0.0, 2.0]]), np.ones(2), np.zeros(2))
        >>> [g.round(3).tolist() for g in layernorm_backward(np.ones((1, 2)), act, np.ones(2))]
        [[[0.0, 0.0]], [-1.0, 1.0], [1.0, 1.0]]
    """
    h = dy.shape[-1]
    rows_dy = dy.reshape(-1, h)  # (N, H)
    dgamma = (rows_dy * act.x_hat.reshape(-1, h)).sum(axis=0)  # (H,)
    dbeta = rows_dy.sum(axis=0)  # (H,)
    avg = _row_mean_vector(dy)  # (H, 1)
    g = dy * gamma  # (..., H)
    dx = act.x_hat * ((g * act.x_hat) @ avg)  # (..., H)
    dx += g @ avg
    np.subtract(g, dx, out=dx)
    dx *= act.inv_std  # (g − mean(g) − x̂·mean(g·x̂)) / σ
    return dx, dgamma, dbeta


class LayerNorm(Module):
    """LayerNorm with learnable γ [H] (ones) and β [H] (zeros); no weight decay on either.

    Args:
        hidden_dim: H, the size of the normalised (last) dimension.
        eps: added to the variance before the square root.

    Raises:
        TypeError: if `hidden_dim` is not an int or `eps` not a number.
        ValueError: if `hidden_dim` <= 0 or `eps` < 0.

    Example:
        >>> LayerNorm(64).num_parameters()
        128
    """

    no_decay = frozenset({"gamma", "beta"})

    def __init__(self, hidden_dim: int, eps: float = LN_EPS) -> None:
        self.hidden_dim = positive_int(hidden_dim, "hidden_dim")
        if isinstance(eps, bool) or not isinstance(eps, int | float | np.floating):
            raise TypeError(f"eps must be a number, got {type(eps).__name__} {eps!r}")
        if not eps >= 0:
            raise ValueError(f"eps must be >= 0, got {eps!r}")
        self.eps = float(eps)
        self.gamma = tensor_ones((self.hidden_dim,))
        self.beta = tensor_zeros((self.hidden_dim,))

    def _members(self) -> list[tuple[str, Member]]:
        return [("gamma", self.gamma), ("beta", self.beta)]

    def reset(self) -> None:
        """In place: γ = 1, β = 0."""
        array_of(self.gamma)[...] = 1.0
        array_of(self.beta)[...] = 0.0

    def forward(self, x: Any) -> Tensor:
        """Normalise the last dimension of `x` [..., H]; returns a new Tensor, `x` unchanged.

        Raises:
            TypeError: if `x` is not a Tensor or numeric array.
            ValueError: if the last dimension of `x` is not H.
        """
        xs = as_tensor(x, "x").numpy()
        if xs.ndim == 0 or xs.shape[-1] != self.hidden_dim:
            raise ValueError(f"x must be [..., {self.hidden_dim}], got shape {xs.shape}")
        y, _ = layernorm_forward(
            xs.astype(np.float32, copy=False), array_of(self.gamma), array_of(self.beta), self.eps
        )
        return Tensor(np.ascontiguousarray(y, np.float32).reshape(-1), y.shape)

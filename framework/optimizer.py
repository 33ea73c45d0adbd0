"""AdamW over a model's named parameters, and gradient clipping by the global norm.

One AdamW step for a parameter p with gradient g, step number t >= 1, in the order of
`torch.optim.AdamW` (decoupled decay first, on the value before the Adam update)::

    p = p - lr·wd·p
    m = β1·m + (1 - β1)·g               v = β2·v + (1 - β2)·g²
    p = p - (lr / (1 - β1^t)) · m / (√v / √(1 - β2^t) + eps)

The two bias corrections undo the zero start of m and v: after step 1, m = (1 - β1)·g
(0.01 for g = 0.1 and β1 = 0.9, which is right, whatever the C course's check says), and
m / (1 - β1) = g. Decay follows the C course's policy: every matrix decays (token
embedding, W_q, W_k, W_v, W_o, W1, W2, lm_head) except the position table; LayerNorm
gains and shifts and the FFN biases (all 1-D) do not.

`clip_grad_norm` scales every gradient by max_norm / ‖g‖ when the norm ‖g‖ of all the
gradients together exceeds max_norm; the C course left LayerNorm and bias gradients out
of that norm. Deliberately not here: SGD, Adam variants, per-group learning rates.

Speed: `AdamW` moves the parameters it is given into one flat float32 buffer (each
Tensor's `data` becomes a view of it; values, shapes and Tensor objects are kept), and
m and v are flat too, so a step is a dozen passes over one array instead of a dozen per
parameter. When the gradients are views of one flat buffer in the same order (what
`GPTModel.backward` returns, see `flat_of`), clipping and the step read it directly.
Parameters that are views of other storage (e.g. a transposed Tensor) keep the plain
per-parameter loop, with the same arithmetic.

Example:
    >>> from framework.tensor import tensor_from
    >>> p = tensor_from([1.0, 1.0])
    >>> opt = AdamW([("w", p)], lr=0.1, weight_decay=0.0)
    >>> opt.step({"w": np.array([0.5, -2.0], np.float32)})
    >>> [round(x, 4) for x in p.tolist()]  # the first step moves by lr·sign(g)
    [0.9, 1.1]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.module import array_of
from framework.tensor import Tensor

__all__ = ["AdamW", "clip_grad_norm", "decays", "flat_of"]

F32 = np.float32


def flat_of(arrays: Sequence[NDArray[Any]]) -> NDArray[Any] | None:
    """The 1-D array that `arrays` tile exactly, one after the other, or None.

    Example:
        >>> flat = np.arange(5.0)
        >>> flat_of([flat[:2].reshape(1, 2), flat[2:]]) is flat, flat_of([flat[2:]])
        (True, None)
    """
    base = arrays[0].base if arrays else None
    if not isinstance(base, np.ndarray) or base.ndim != 1 or not base.flags.c_contiguous:
        return None
    at = base.__array_interface__["data"][0]
    for a in arrays:
        if a.base is not base or not a.flags.c_contiguous:
            return None
        if a.__array_interface__["data"][0] != at:
            return None
        at += a.nbytes
    return base if at == base.__array_interface__["data"][0] + base.nbytes else None


def _owns_whole_data(t: Tensor) -> bool:
    """A contiguous Tensor that is all of its `data` (not a view into a larger array)."""
    return t.offset == 0 and t.data.size == t.size and t.is_contiguous()


def decays(name: str, shape: tuple[int, ...]) -> bool:
    """The C course's decay policy: matrices decay, the position table and 1-D tensors don't.

    Example:
        >>> decays("blocks.0.attn.w_q", (64, 64)), decays("blocks.0.ln1.gamma", (64,))
        (True, False)
    """
    return len(shape) >= 2 and "position" not in name


class AdamW:
    """AdamW with bias correction over named parameters, updated in place.

    Args:
        params: (name, Tensor) pairs, e.g. `model.parameters()`.
        lr: learning rate (each `step` may override it, for a schedule).
        betas: (β1, β2), the decay rates of the two moment estimates.
        eps: added to the denominator.
        weight_decay: decoupled decay rate for the parameters that `decay` selects.
        decay: policy (name, shape) -> bool; default `decays`.

    Attributes:
        t: steps taken so far.
        m, v: first and second moments per parameter name (float32 arrays).

    Raises:
        ValueError: for duplicate names, lr < 0, betas outside [0, 1), eps <= 0 or
            weight_decay < 0.
    """

    def __init__(
        self,
        params: Sequence[tuple[str, Tensor]],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        decay: Callable[[str, tuple[int, ...]], bool] = decays,
    ) -> None:
        names = [n for n, _ in params]
        if len(set(names)) != len(names):
            raise ValueError(f"parameter names must be unique, got {names}")
        if lr < 0 or eps <= 0 or weight_decay < 0:
            raise ValueError(f"need lr >= 0, eps > 0, weight_decay >= 0; got {lr}, {eps}, "
                             f"{weight_decay}")  # fmt: skip
        if not all(0.0 <= b < 1.0 for b in betas):
            raise ValueError(f"betas must be in [0, 1), got {betas}")
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.decayed = {n for n, p in params if decay(n, p.shape)}
        size = sum(p.size for _, p in params)
        self._m, self._v, self._tmp = (np.zeros(size, F32) for _ in range(3))
        self.m: dict[str, NDArray[np.float32]] = dict(zip(names, self._split(self._m), strict=True))
        self.v: dict[str, NDArray[np.float32]] = dict(zip(names, self._split(self._v), strict=True))
        self.t = 0
        self._flat: NDArray[np.float32] | None = None  # the parameters, when they live in it
        self._views: list[NDArray[np.float32]] = []
        if all(_owns_whole_data(p) for _, p in params):
            self._flat = np.concatenate([p.data for _, p in params]) if params else self._m.copy()
            self._views = self._split(self._flat, one_d=True)
            for (_, p), view in zip(params, self._views, strict=True):
                p.data = view

    def _split(self, buf: NDArray[np.float32], one_d: bool = False) -> list[NDArray[np.float32]]:
        """Views of `buf`, one per parameter in order: 1-D, or in the parameter's shape."""
        out, at = [], 0
        for _, p in self.params:
            view = buf[at : at + p.size]
            out.append(view if one_d else view.reshape(p.shape))
            at += p.size
        return out

    def step(self, grads: Mapping[str, np.ndarray], lr: float | None = None) -> None:
        """One update of every parameter from its gradient (t increases by 1 first).

        Args:
            grads: gradient per parameter name, same shapes as the parameters.
            lr: this step's learning rate (default: `self.lr`).

        Raises:
            ValueError: if a gradient is missing or has the wrong shape; nothing changes.
        """
        for name, p in self.params:
            g = grads.get(name)
            if g is None or np.shape(g) != p.shape:
                got = "nothing" if g is None else f"shape {np.shape(g)}"
                raise ValueError(f"gradient of {name!r}: expected shape {p.shape}, got {got}")
        self.t += 1
        rate = self.lr if lr is None else lr
        b1, b2 = self.betas
        step_size = rate / (1.0 - b1**self.t)
        root_bc2 = math.sqrt(1.0 - b2**self.t)
        if self.weight_decay:  # decoupled decay first, on the value before the update
            keep = F32(1.0 - rate * self.weight_decay)
            for name, p in self.params:
                if name in self.decayed:
                    array_of(p)[...] *= keep
        flat = self._flat if self._in_flat() else None
        g = flat_of([grads[n] for n, _ in self.params]) if flat is not None else None
        if flat is None or g is None or g.dtype != F32:
            g = np.concatenate([np.asarray(grads[n], F32).ravel() for n, _ in self.params])
        m, v, tmp = self._m, self._v, self._tmp
        m *= F32(b1)
        m += np.multiply(g, F32(1.0 - b1), out=tmp)  # m = β1·m + (1 − β1)·g
        v *= F32(b2)
        np.multiply(g, g, out=tmp)
        tmp *= F32(1.0 - b2)
        v += tmp  # v = β2·v + (1 − β2)·g²
        denom = np.sqrt(v, out=tmp)
        denom /= F32(root_bc2)
        denom += F32(self.eps)  # √v̂ + eps, with v̂ = v / (1 − β2^t)
        np.divide(m, denom, out=tmp)
        tmp *= F32(step_size)  # lr · m̂ / (√v̂ + eps)
        if flat is not None:
            flat -= tmp
            return
        for (_, p), update in zip(self.params, self._split(tmp), strict=True):
            array_of(p)[...] -= update

    def _in_flat(self) -> bool:
        """Whether every parameter still lives in `self._flat` (nobody moved it since)."""
        return self._flat is not None and all(
            p.data is view for (_, p), view in zip(self.params, self._views, strict=True)
        )

    def state_dict(self) -> dict[str, np.ndarray]:
        """Everything needed to resume: t, and m and v per parameter (copies)."""
        state: dict[str, np.ndarray] = {"t": np.array(self.t)}
        for name in self.m:
            state["m/" + name], state["v/" + name] = self.m[name].copy(), self.v[name].copy()
        return state

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        """Restore what `state_dict` returned (for the same parameter names and shapes).

        Raises:
            ValueError: if a moment is missing or has the wrong shape.
        """
        for name in self.m:
            for kind, table in (("m/", self.m), ("v/", self.v)):
                arr = state.get(kind + name)
                if arr is None or arr.shape != table[name].shape:
                    got = "nothing" if arr is None else f"shape {arr.shape}"
                    raise ValueError(f"optimizer state {kind + name!r}: expected shape "
                                     f"{table[name].shape}, got {got}")  # fmt: skip
        for name in self.m:
            self.m[name][...] = state["m/" + name]
            self.v[name][...] = state["v/" + name]
        self.t = int(state["t"])


def clip_grad_norm(grads: Mapping[str, NDArray[np.float32]], max_norm: float) -> float:
    """Scale all gradients in place so that their joint L2 norm is at most `max_norm`.

    Args:
        grads: gradient per parameter name (every one counts, LayerNorms and biases too).
        max_norm: the largest norm allowed; <= 0 or inf means measure only.

    Returns:
        The norm before clipping (inf or NaN if a gradient holds one; then nothing is
        scaled, so the caller can skip the step).

    Example:
        >>> g = {"a": np.array([3.0], np.float32), "b": np.array([4.0], np.float32)}
        >>> clip_grad_norm(g, 1.0), g["a"].tolist(), g["b"].tolist()
        (5.0, [0.6000000238418579], [0.800000011920929])
    """
    flat = flat_of(list(grads.values()))
    if flat is not None:  # one array: one dot product, one scaling
        total = math.sqrt(float(np.dot(flat, flat)))
    else:
        total = math.sqrt(sum(float(np.dot(g.ravel(), g.ravel())) for g in grads.values()))
    if 0 < max_norm < total < math.inf:
        scale = F32(max_norm / total)
        for g in [flat] if flat is not None else grads.values():
            g *= scale
    return total

"""The small module system every layer stands on: named parameters, in one fixed order.

A `Module` lists its members once, in `_members()`: its own parameter Tensors and its child
modules, in the order the model file stores them (`c-labs-01-07.md` §8.8). Everything else
is derived from that one list, never written again as a formula:

- `parameters()` — ``[("blocks.0.attn.w_q", Tensor), ...]``, names are attribute paths;
- `num_parameters()` — the parameter count (240,512 for the default GPT);
- `state_dict()` / `load_state()` — copies out, and checked copies back in place;
- `decays(name)` — whether AdamW's weight decay applies to a parameter. A module lists the
  local names that do not decay in `no_decay` (biases, LayerNorm γ/β, the position table).

The idea is micrograd's `nn.Module.parameters()` and nanoGPT's `configure_optimizers`, in
the plainest Python: no metaclass, no `__setattr__` hooks, no autograd.

Example:
    >>> from framework.tensor import tensor_zeros
    >>> class Scale(Module):
    ...     no_decay = frozenset({"bias"})
    ...     def __init__(self) -> None:
    ...         self.weight, self.bias = tensor_zeros((2, 2)), tensor_zeros((2,))
    ...     def _members(self) -> list[tuple[str, Member]]:
    ...         return [("weight", self.weight), ("bias", self.bias)]
    >>> m = Scale()
    >>> [name for name, _ in m.parameters()], m.num_parameters(), m.decays("bias")
    (['weight', 'bias'], 6, False)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, ClassVar, TypeAlias

import numpy as np
from numpy.typing import NDArray

from framework.tensor import Tensor

__all__ = ["Member", "Module", "array_of"]


@lru_cache(maxsize=512)
def _row_major(shape: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """Row-major strides (in elements) and element count of `shape`."""
    strides, size = [], 1
    for d in reversed(shape):
        strides.append(size)
        size *= max(d, 1)
    return tuple(reversed(strides)), math.prod(shape)


def array_of(t: Tensor) -> NDArray[np.float32]:
    """A writable numpy view of `t`; fast for the contiguous tensors parameters are.

    Example:
        >>> from framework.tensor import tensor_zeros
        >>> array_of(tensor_zeros((2, 3))).shape
        (2, 3)
    """
    strides, size = _row_major(t.shape)
    if t.offset == 0 and t.strides == strides and t.data.size == size:
        return t.data.reshape(t.shape)
    return t.numpy()


class Module:
    """Base class: a named, ordered tree of parameter Tensors.

    Subclasses implement `_members()` and may set `no_decay`.

    Example:
        >>> from framework.layernorm import LayerNorm
        >>> LayerNorm(4).state_dict()["gamma"].tolist()
        [1.0, 1.0, 1.0, 1.0]
    """

    no_decay: ClassVar[frozenset[str]] = frozenset()

    def _members(self) -> list[tuple[str, Member]]:
        """Own parameters and child modules, in file order."""
        raise NotImplementedError(f"{type(self).__name__} must implement _members()")

    def parameters(self) -> list[tuple[str, Tensor]]:
        """Every parameter Tensor with its dotted name, in the model file's order.

        Returns:
            A new list of (name, Tensor); the Tensors are the module's own (not copies).
        """
        out: list[tuple[str, Tensor]] = []
        for name, member in self._members():
            if isinstance(member, Module):
                out.extend((f"{name}.{sub}", t) for sub, t in member.parameters())
            else:
                out.append((name, member))
        return out

    def num_parameters(self) -> int:
        """Total number of scalars in all parameters."""
        return sum(t.size for _, t in self.parameters())

    def num_params(self) -> int:
        """Same as `num_parameters()` (the C course's name, `*_num_params`)."""
        return self.num_parameters()

    def decays(self, name: str) -> bool:
        """Whether AdamW's weight decay applies to the parameter called `name`.

        Raises:
            KeyError: if `name` is not a parameter of this module.
        """
        for member_name, member in self._members():
            if isinstance(member, Module) and name.startswith(member_name + "."):
                return member.decays(name[len(member_name) + 1 :])
            if isinstance(member, Tensor) and name == member_name:
                return name not in self.no_decay
        raise KeyError(f"{name!r} is not a parameter of {type(self).__name__}")

    def state_dict(self) -> dict[str, NDArray[np.float32]]:
        """Copies of every parameter as float32 arrays, keyed by name, in file order."""
        return {name: array_of(t).copy() for name, t in self.parameters()}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Copy `state` into the parameters, in place (existing Tensor objects are kept).

        Args:
            state: name -> array-like of the parameter's shape, one entry per parameter.

        Raises:
            ValueError: if a name is missing or unexpected, or a shape differs; nothing is
                written unless every entry is valid.
        """
        params = self.parameters()
        names = [n for n, _ in params]
        missing = [n for n in names if n not in state]
        extra = [n for n in state if n not in set(names)]
        if missing or extra:
            raise ValueError(
                f"state does not match the parameters: missing {missing}, unexpected {extra}"
            )
        arrays = []
        for name, t in params:
            arr = np.asarray(state[name])
            if arr.shape != t.shape:
                raise ValueError(f"state[{name!r}] must have shape {t.shape}, got {arr.shape}")
            if arr.dtype.kind not in "biuf":
                raise ValueError(f"state[{name!r}] must hold real numbers, got dtype {arr.dtype}")
            arrays.append(arr)
        for (_, t), arr in zip(params, arrays, strict=True):
            t.numpy()[...] = arr


Member: TypeAlias = Tensor | Module

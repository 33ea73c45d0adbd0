"""Mutant: residual_add adds in place but also returns a (the contract says None)."""
# zh: residual_add 原地加完了，却又返回了 a（约定是返回 None）

# fails: residual_inplace

import numpy as np

from framework import Tensor, as_tensor


def residual_add(a: Tensor, b: Tensor) -> None:
    bt = as_tensor(b, "b")
    view = a if isinstance(a, np.ndarray) else a.numpy()
    if view.shape != bt.shape:
        raise ValueError(f"a is {view.shape} but b is {bt.shape}")
    view += bt.numpy()
    return a  # type: ignore[return-value]

"""Mutant: residual_add writes first and compares the shapes afterwards."""
# zh: residual_add 先写入，再比较形状

# fails: residual_shapes

import numpy as np

from framework import Tensor, as_tensor


def residual_add(a: Tensor, b: Tensor) -> None:
    bt = as_tensor(b, "b")
    view = a if isinstance(a, np.ndarray) else a.numpy()
    view += bt.numpy()
    if view.shape != bt.shape:
        raise ValueError(f"a is {view.shape} but b is {bt.shape}")

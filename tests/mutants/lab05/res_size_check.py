"""Mutant: residual_add compares only the number of elements, then reshapes b."""
# zh: residual_add 只比较元素个数，然后把 b reshape 成 a 的形状

# fails: residual_shapes

import numpy as np

from framework import Tensor, as_tensor


def residual_add(a: Tensor, b: Tensor) -> None:
    bt = as_tensor(b, "b")
    view = a if isinstance(a, np.ndarray) else a.numpy()
    if view.size != bt.size:
        raise ValueError(f"a has {view.size} elements but b has {bt.size}")
    view += bt.numpy().reshape(view.shape)

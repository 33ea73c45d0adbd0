"""Mutant: residual_add does not compare shapes and lets numpy broadcast b."""
# zh: residual_add 不比较形状，让 numpy 广播 b

# fails: residual_shapes

import numpy as np

from framework import Tensor, as_tensor


def residual_add(a: Tensor, b: Tensor) -> None:
    view = a if isinstance(a, np.ndarray) else a.numpy()
    view += as_tensor(b, "b").numpy()

"""Mutant: block_forward returns x + 1, which passed every check of the C course."""
# zh: block_forward 只返回 x + 1，根本没有经过块

# fails: block_reference

from framework import Tensor, as_tensor, tensor_from
from framework.transformer import TransformerBlock


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    return tensor_from(as_tensor(x, "x").numpy() + 1.0)

"""Mutant: block_forward returns x + 1, which passed every check of the C course."""

# fails: block_reference, accepts_arrays, strided_views

from framework import Tensor, as_tensor, tensor_from
from framework.transformer import TransformerBlock


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    return tensor_from(as_tensor(x, "x").numpy() + 1.0)

"""Mutant: block_forward hands the work to the block's own forward."""
# zh: block_forward 直接调用了框架块自己的 forward，没有自己接线

# fails: block_reference, block_causal, accepts_arrays, strided_views

from framework import Tensor
from framework.transformer import TransformerBlock


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    return block.forward(x, mask)

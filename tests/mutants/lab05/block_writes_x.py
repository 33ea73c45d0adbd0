"""Mutant: block_forward adds the first residual into x itself instead of a copy."""
# zh: block_forward 把第一条残差直接加进了 x 本身，而不是它的副本

# fails: block_reference

from framework import Tensor, as_tensor
from framework.transformer import TransformerBlock


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    ln1, ln2 = block.ln1, block.ln2
    h = as_tensor(x, "x")
    residual_add(h, block.attn.forward(layernorm(h, ln1.gamma, ln1.beta, ln1.eps), mask))
    residual_add(h, block.ffn.forward(layernorm(h, ln2.gamma, ln2.beta, ln2.eps)))
    return h

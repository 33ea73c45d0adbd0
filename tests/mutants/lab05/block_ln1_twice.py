"""Mutant: block_forward normalises before the FFN with ln1 again instead of ln2."""
# zh: block_forward 在 FFN 之前又用了 ln1，而不是 ln2

# fails: block_reference

from framework import Tensor, as_tensor, tensor_from
from framework.transformer import TransformerBlock


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    ln1 = block.ln1
    h = tensor_from(as_tensor(x, "x"))
    residual_add(h, block.attn.forward(layernorm(h, ln1.gamma, ln1.beta, ln1.eps), mask))
    residual_add(h, block.ffn.forward(layernorm(h, ln1.gamma, ln1.beta, ln1.eps)))
    return h

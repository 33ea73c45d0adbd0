"""Mutant: block_forward never passes the mask on to the attention."""
# zh: block_forward 没有把 mask 传给 attention

# fails: block_reference, block_causal

from framework import Tensor, as_tensor, tensor_from
from framework.transformer import TransformerBlock


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    ln1, ln2 = block.ln1, block.ln2
    h = tensor_from(as_tensor(x, "x"))
    residual_add(h, block.attn.forward(layernorm(h, ln1.gamma, ln1.beta, ln1.eps)))
    residual_add(h, block.ffn.forward(layernorm(h, ln2.gamma, ln2.beta, ln2.eps)))
    return h

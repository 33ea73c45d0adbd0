"""Mutant: block_forward in the Post-LN order of the original paper: ln(x + f(x))."""
# zh: block_forward 用了原论文的 Post-LN 顺序：ln(x + f(x))

# fails: block_reference

from framework import Tensor, as_tensor, tensor_from
from framework.transformer import TransformerBlock


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    ln1, ln2 = block.ln1, block.ln2
    h = tensor_from(as_tensor(x, "x"))
    residual_add(h, block.attn.forward(h, mask))
    h = layernorm(h, ln1.gamma, ln1.beta, ln1.eps)
    residual_add(h, block.ffn.forward(h))
    return layernorm(h, ln2.gamma, ln2.beta, ln2.eps)

"""Mutant: block_forward returns ffn(ln2(h)) and forgets to add h back (second residual)."""
# zh: block_forward 返回 ffn(ln2(h))，忘了把 h 加回去（第二条残差）

# fails: block_reference

from framework import Tensor, as_tensor, tensor_from
from framework.transformer import TransformerBlock


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    ln1, ln2 = block.ln1, block.ln2
    h = tensor_from(as_tensor(x, "x"))
    residual_add(h, block.attn.forward(layernorm(h, ln1.gamma, ln1.beta, ln1.eps), mask))
    return block.ffn.forward(layernorm(h, ln2.gamma, ln2.beta, ln2.eps))

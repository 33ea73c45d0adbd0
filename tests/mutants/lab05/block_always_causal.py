"""Mutant: block_forward builds its own causal mask, so mask=None still masks."""
# zh: block_forward 自己造了因果掩码，mask=None 时也照样加掩码

# fails: block_reference

from framework import Tensor, as_tensor, create_causal_mask, tensor_from
from framework.transformer import TransformerBlock


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    ln1, ln2 = block.ln1, block.ln2
    h = tensor_from(as_tensor(x, "x"))
    causal = create_causal_mask(h.shape[0])
    residual_add(h, block.attn.forward(layernorm(h, ln1.gamma, ln1.beta, ln1.eps), causal))
    residual_add(h, block.ffn.forward(layernorm(h, ln2.gamma, ln2.beta, ln2.eps)))
    return h

"""Mutant: block_forward copies x with x.numpy(), so a numpy array x fails."""
# zh: block_forward 直接调用 x.numpy()，x 是 numpy 数组时就出错
# blind: arrays

# fails: accepts_arrays

from framework import Tensor, tensor_from
from framework.transformer import TransformerBlock


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    ln1, ln2 = block.ln1, block.ln2
    h = tensor_from(x.numpy())  # the bug: an ndarray has no .numpy()
    residual_add(h, block.attn.forward(layernorm(h, ln1.gamma, ln1.beta, ln1.eps), mask))
    residual_add(h, block.ffn.forward(layernorm(h, ln2.gamma, ln2.beta, ln2.eps)))
    return h

"""Mutant: block_forward copies x from x.data as if it were row-major, ignoring strides."""
# zh: block_forward 把 x.data 当成按行排列来复制，忽略了 strides 和 offset
# blind: views

# fails: strided_views

from framework import Tensor, as_tensor, tensor_from
from framework.transformer import TransformerBlock


def block_forward(block: TransformerBlock, x: Tensor, mask: Tensor | None = None) -> Tensor:
    ln1, ln2 = block.ln1, block.ln2
    xt = as_tensor(x, "x")
    h = tensor_from(xt.data[: xt.size].reshape(xt.shape))  # the bug: strides and offset ignored
    residual_add(h, block.attn.forward(layernorm(h, ln1.gamma, ln1.beta, ln1.eps), mask))
    residual_add(h, block.ffn.forward(layernorm(h, ln2.gamma, ln2.beta, ln2.eps)))
    return h

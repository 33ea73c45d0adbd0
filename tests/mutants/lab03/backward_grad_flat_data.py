"""Mutant: embedding_backward reads grad_out.data as if it were row-major, ignoring strides and offset."""

# zh: 把 grad_out.data 当成行主序读，忽略了 strides 和 offset
# blind: views
# fails: backward_views

import numpy as np

from framework import Embedding, Tensor, as_tensor, tensor_zeros


def embedding_backward(emb: Embedding, token_ids: Sequence[int], grad_out: Tensor) -> Tensor:
    """[V, H] gradient of the token table: row id collects every grad_out row with that id."""
    ids = _check_ids(emb, token_ids)
    gt = as_tensor(grad_out, "grad_out")
    if gt.shape != (len(ids), emb.hidden_dim):
        raise ValueError(f"grad_out must be [{len(ids)}, {emb.hidden_dim}], got {gt.shape}")
    g = gt.data[: gt.size].reshape(gt.shape)
    grad = tensor_zeros((emb.vocab_size, emb.hidden_dim))
    np.add.at(grad.numpy(), ids, g)
    return grad

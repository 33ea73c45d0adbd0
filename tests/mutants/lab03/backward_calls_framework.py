"""Mutant: embedding_backward returns the framework's Embedding.backward token gradient."""

# zh: embedding_backward 直接返回框架 Embedding.backward 的结果
# fails: backward_repeated, backward_gradcheck, accepts_arrays, backward_views

from framework.embedding import Embedding
from framework.tensor import Tensor


def embedding_backward(emb: Embedding, token_ids: Sequence[int], grad_out: Tensor) -> Tensor:
    """[V, H] gradient of the token table: row id collects every grad_out row with that id."""
    ids = _check_ids(emb, token_ids)
    return emb.backward(ids, grad_out)[0]

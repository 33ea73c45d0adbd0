"""Lab03 — embeddings and positional encoding: from token ids to vectors, written by you.

    PE[pos, 2i]     = sin(pos / 10000^(2i / H))      -> pe_sinusoidal
    PE[pos, 2i + 1] = cos(pos / 10000^(2i / H))
    out[pos]        = token_embedding[ids[pos]] + PE[pos]   -> embedding_forward
    d_table[id]    += d_out[pos]  for every pos with ids[pos] == id  -> embedding_backward

The framework's `Embedding` (framework/embedding.py) holds the two tables; its `forward`
and `backward` already do all of this. Here you write each step yourself, so that none
of it is a black box. Run `make test` in this folder after every change; `TASK.md`
explains each function.

You may use `math`, numpy (`t.numpy()` gives a shaped view of a Tensor) and the helpers
`tensor_zeros`, `tensor_from` and `as_tensor`, but not `emb.forward`, `emb.backward`,
`emb.position_embedding` or `framework.embedding.sinusoidal_table`: the point is to
write them.
"""

from __future__ import annotations

import math  # noqa: F401
from collections.abc import Sequence

import numpy as np  # noqa: F401

from framework.embedding import Embedding
from framework.tensor import Tensor, as_tensor, tensor_from, tensor_zeros  # noqa: F401


def pe_sinusoidal(pos: int, dim: int, hidden_dim: int) -> float:
    """One entry of the sinusoidal position encoding table.

    With i = dim // 2 (dims 2i and 2i + 1 share one frequency):
        even dim = 2i:     sin(pos / 10000^(2i / hidden_dim))
        odd dim  = 2i + 1: cos(pos / 10000^(2i / hidden_dim))
    The exponent 2i / hidden_dim is a fraction between 0 and 1: compute it with `/`.

    Args:
        pos: the position in the sequence, >= 0.
        dim: the column, 0 <= dim < hidden_dim (hidden_dim may be odd).
        hidden_dim: H, the width of the vectors.

    Returns:
        The value as a float, in [-1, 1]. Example: pe_sinusoidal(0, 1, 64) == 1.0.
    """
    # BEGIN SOLUTION: find i, the angle pos / 10000^(2i/H), then sin for even dim, cos for odd.
    i = dim // 2
    angle = pos / 10000.0 ** (2 * i / hidden_dim)  # float division: 2i/H is a fraction
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)
    # END SOLUTION


# BEGIN SOLUTION
def _check_ids(emb: Embedding, token_ids: Sequence[int]) -> list[int]:
    ids = [int(t) for t in token_ids]
    if len(ids) > emb.max_seq_len:
        raise ValueError(f"token_ids has {len(ids)} ids, more than max_seq_len = {emb.max_seq_len}")
    for k, tid in enumerate(ids):
        if not 0 <= tid < emb.vocab_size:
            raise ValueError(f"token_ids[{k}] = {tid} is outside [0, {emb.vocab_size})")
    return ids


# END SOLUTION


def embedding_forward(emb: Embedding, token_ids: Sequence[int]) -> Tensor:
    """Look up each token's row and add the position encoding of its position.

    out[pos][d] = emb.token_embedding[token_ids[pos]][d] + pe_sinusoidal(pos, d, H)

    The PE comes from your own `pe_sinusoidal`, not from `emb.position_embedding` (the
    checks change that table to make sure).

    Args:
        emb: a framework `Embedding`; read `emb.token_embedding` [V, H], `emb.vocab_size`,
            `emb.hidden_dim` and `emb.max_seq_len`. Not modified.
        token_ids: S ints, each in [0, emb.vocab_size). Not modified.

    Returns:
        A new Tensor of shape [S, H].

    Raises:
        ValueError: if an id is outside [0, vocab_size) (negative ids included: never fall
            back to UNK, never let numpy wrap -1 to the last row), or if
            S > emb.max_seq_len. The message names the bad id or the length.
    """
    # BEGIN SOLUTION: check the ids and S, then build each row: token row + PE row.
    ids = _check_ids(emb, token_ids)
    h = emb.hidden_dim
    table = emb.token_embedding.numpy()
    out = np.zeros((len(ids), h), dtype=np.float64)  # (S, H)
    for pos, tid in enumerate(ids):
        pe = [pe_sinusoidal(pos, d, h) for d in range(h)]  # (H,)
        out[pos] = table[tid] + np.array(pe)
    return tensor_from(out)
    # END SOLUTION


def embedding_backward(emb: Embedding, token_ids: Sequence[int], grad_out: Tensor) -> Tensor:
    """Gradient of a loss with respect to the token table, given d(loss)/d(out).

    The forward copied row token_ids[pos] of the table into out[pos], so out[pos]'s
    gradient flows back into that row. A token that appears several times receives the
    sum of all its rows' gradients: add, do not assign. Rows of ids that do not occur
    stay 0. Example: token_ids [0, 2, 2] and grad_out of ones → row 2 is 2, row 1 is 0.

    Args:
        emb: the `Embedding` used in the forward pass (for V and H). Not modified.
        token_ids: the S ids of the forward pass.
        grad_out: d(loss)/d(out), shape [S, H]. Not modified.

    Returns:
        A new Tensor of shape [V, H] (the table's shape, not the output's).

    Raises:
        ValueError: for the bad ids `embedding_forward` rejects, or grad_out not [S, H].
    """
    # BEGIN SOLUTION: start from zeros [V, H] and add row pos of grad_out into row token_ids[pos].
    ids = _check_ids(emb, token_ids)
    g = as_tensor(grad_out, "grad_out").numpy()
    if g.shape != (len(ids), emb.hidden_dim):
        raise ValueError(f"grad_out must be [{len(ids)}, {emb.hidden_dim}], got {g.shape}")
    grad = tensor_zeros((emb.vocab_size, emb.hidden_dim))
    np.add.at(grad.numpy(), ids, g)  # repeated ids add up; grad[ids] += g would not
    return grad
    # END SOLUTION

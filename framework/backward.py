"""The GPT's training pass: one forward that keeps its activations, and the exact backward.

The same model as `framework.gpt` (embedding, Pre-LN blocks, final LayerNorm, lm_head),
written for speed at the course's sizes, where a step is hundreds of small numpy calls
and every pass over a fresh [B·T, F] array costs more than its arithmetic:

- every activation lives in a `Workspace` (`framework.workspace`) allocated once per
  batch shape and reused step after step;
- every line writes into a buffer (`out=`) and each elementwise pass is counted;
- Q, K, V come from one [H, 3H] product, 1/√hd folded into W_q, and the heads are
  batched, (B, n_head) at once, their gradients written straight into [B·T, 3H];
- attention runs in blocks of 32 queries (64 for one sequence: `framework.workspace`), each
  against the keys it can see (causal), so the masked third of the T² scores (T = 96) is
  never computed; and softmax subtracts each query's max score only when some score could
  overflow exp (`_scores_bounded`);
- the biases ride inside the matrix products: the FFN's inputs carry a column of ones,
  so x·W1 + b1 is one product, and dW1 and db1 come out of one product too;
- the gradients are views into one flat buffer in `parameters()` order, so clipping
  and AdamW (`framework.optimizer`) touch one array instead of 53.

Per block, forward then backward (P = softmax(S), key-major: P_t[j, i] = weight of key j
for query i; ⊙ is the elementwise product)::

    a = ln1(x);  q, k, v = a·W_qkv;  S = q·kᵀ/√hd + mask;  ctx = P·v;  h = x + ctx·W_o
    b = ln2(h);  u = b·W1 + b1;  g = gelu(u);  out = h + g·W2 + b2

    dW2 = gᵀ·dout,  dg = dout·W2ᵀ,  du = dg ⊙ gelu'(u),  dW1 = bᵀ·du,  db = du·W1ᵀ
    dh = dout + ln2ᵀ(db)
    dW_o = ctxᵀ·dh,  dctx = dh·W_oᵀ,  dv = Pᵀ·dctx,  dP = dctx·vᵀ
    dS = P ⊙ (dP − D),  D_i = Σ_j P_ij dP_ij = dctx_i · ctx_i   (one [B·T, H] product,
                                                              not a pass over P)
    dq = dS·k/√hd,  dk = dSᵀ·q/√hd,  dW_qkv = aᵀ·[dq | dk | dv],  dx = dh + ln1ᵀ([dq|dk|dv]·W_qkvᵀ)

Each layer's forward sits beside its backward below (LayerNorm, attention, FFN), as in
`framework.layernorm`, `attention` and `ffn`, whose per-layer functions stay the reference
the labs read; `tests/test_framework_backward.py` checks this pass against float64
central differences and `tests/test_framework_parity.py` against torch autograd.

Not here: the inference forwards and the KV cache (`framework.gpt`), the optimizer.

Example:
    >>> from framework.gpt import GPTWeights, parameter_shapes
    >>> from framework.config import ModelConfig
    >>> cfg = ModelConfig(11, 8, 2, 1, 16, 8)
    >>> w = GPTWeights.from_state({n: np.full(s, 0.1) for n, s in parameter_shapes(cfg)}, cfg)
    >>> ws = Workspace.acquire(w, 1, 3)
    >>> logits = train_forward(w, np.array([[1, 2, 3]]), ws)
    >>> loss = cross_entropy_grad_inplace(logits, np.array([[2, 3, 4]]))
    >>> grads = train_backward(logits, ws, w)
    >>> round(loss, 4), grads["lm_head"].shape, len(grads)
    (2.3979, (8, 11), 17)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.ffn import GELU_A, GELU_C
from framework.transformer import BlockWeights, TransformerBlock
from framework.workspace import LNBuffers, Workspace

__all__ = ["Workspace", "cross_entropy_grad_inplace", "train_backward", "train_forward"]

Array = NDArray[Any]


def _ln_forward(x: Array, gamma: Array, beta: Array, ln: LNBuffers, eps: float) -> None:
    """ln.y = γ ⊙ x̂ + β, x̂ = (x − mean) / √(var + eps), row by row of x [N, H]."""
    y = ln.y
    np.subtract(x, x @ ln.avg, out=ln.x_hat)  # (N, H) centred
    np.matmul(np.square(ln.x_hat, out=y), ln.avg, out=ln.inv_std)  # (N, 1) variance
    ln.inv_std += x.dtype.type(eps)
    np.sqrt(ln.inv_std, out=ln.inv_std)
    np.reciprocal(ln.inv_std, out=ln.inv_std)
    ln.x_hat *= ln.inv_std
    np.multiply(ln.x_hat, gamma, out=y)
    y += beta


def _ln_backward(dy: Array, ln: LNBuffers, gamma: Array, dx: Array, dgb: Array, tmp: Array) -> None:
    """dx = (g − mean(g) − x̂ ⊙ mean(g ⊙ x̂)) / σ with g = dy ⊙ γ; dgb = [dγ, dβ] (2, H)."""
    ones = _ones_row(dy.shape[0], dy.dtype)
    np.multiply(dy, ln.x_hat, out=tmp)
    np.matmul(ones, tmp, out=dgb[0:1])  # dγ = Σ_rows dy ⊙ x̂
    np.matmul(ones, dy, out=dgb[1:2])  # dβ = Σ_rows dy
    tmp *= gamma  # g ⊙ x̂
    g = np.multiply(dy, gamma, out=dx)
    g -= g @ ln.avg  # g − mean(g)
    np.multiply(ln.x_hat, tmp @ ln.avg, out=tmp)  # x̂ ⊙ mean(g ⊙ x̂)
    g -= tmp
    g *= ln.inv_std


_ONES: dict[tuple[int, str], Array] = {}


def _ones_row(n: int, dt: Any) -> Array:
    """[1, n] of ones: `ones @ a` sums the rows of `a` in one product."""
    key = (n, np.dtype(dt).str)
    if key not in _ONES:
        _ONES[key] = np.ones((1, n), dt)
    return _ONES[key]


def _heads(a: Array, b: int, t: int, nh: int) -> Array:
    """(B·T, H) -> (B, n_head, T, hd), a strided view."""
    return a.reshape(b, t, nh, -1).transpose(0, 2, 1, 3)


def _attn_forward(ws: Workspace, i: int, w_o: Array, out: Array) -> None:
    """ctx = softmax(q'·kᵀ + mask)·v per head, query block by query block; out = ctx·W_o.

    Query block [lo, hi) needs keys 0…hi−1 only: the causal mask blocks the rest, so
    those scores are never computed (T = 96 in blocks of 32: 2/3 of the T² scores).
    """
    (b, t), nh, h = ws.shape, ws.num_heads, w_o.shape[0]
    qkv, ctx = ws.qkv[i], _heads(ws.ctx[i], b, t, nh)
    q, k, v = (_heads(qkv[:, j * h : (j + 1) * h], b, t, nh) for j in range(3))
    shift = not _scores_bounded(ws, qkv[:, : 2 * h])
    blocks = zip(ws.blocks, ws.probs_t[i], ws.masks_t, ws.folds, strict=True)
    for (lo, hi), p, mask_t, fold in blocks:
        np.matmul(k[:, :, :hi], q[:, :, lo:hi].swapaxes(-1, -2), out=p)  # (B, n_head, hi, S)
        p[:, :, lo:] += mask_t[lo:]  # keys before lo are all visible: nothing to add
        if shift:  # some score may be too large for exp: subtract each query's max first
            p -= _max_keys(p, fold)
        np.exp(p, out=p)
        p *= np.reciprocal(_ones_row(hi, p.dtype) @ p)  # each query's column sums to 1
        np.matmul(p.swapaxes(-1, -2), v[:, :, :hi], out=ctx[:, :, lo:hi])  # (B, n_head, S, hd)
    np.matmul(ws.ctx[i], w_o, out=out)  # (B·T, H)


def _scores_bounded(ws: Workspace, qk: Array) -> bool:
    """Whether every score q'_i·k_j of every head is within ±`ws.safe_score`, by
    Cauchy–Schwarz (|q'_i·k_j| <= |q'_i|·|k_j|): then softmax needs no max subtracted
    first (the same result; the max is a pass over every score, the norms one over
    [B·T, 2H]). NaN or inf in q' or k answers False."""
    nh = ws.num_heads
    norms = np.square(qk, out=ws.sq) @ ws.pair_sum  # (B·T, 2·n_head): |q'_i|², |k_j|²
    top = norms.max(axis=0)
    return bool(np.max(top[:nh] * top[nh:]) <= ws.safe_score**2)


def _max_keys(p: Array, fold: Array) -> Array:
    """``p.max(axis=-2, keepdims=True)`` of p [..., K, S], folded in halves into `fold`:
    numpy reduces a middle axis one short row at a time, a fold is one long pass (3x faster)."""
    n = p.shape[-2]
    half = (n + 1) // 2  # an odd n's middle row is in both halves
    np.maximum(p[..., :half, :], p[..., n - half :, :], out=fold[..., :half, :])
    while half > 1:
        n, half = half, (half + 1) // 2
        np.maximum(fold[..., :half, :], fold[..., n - half : n, :], out=fold[..., :half, :])
    return fold[..., :1, :]


def _attn_backward(ws: Workspace, i: int, w_o: Array, dh: Array, g: _BlockGrads) -> None:
    """From dh = d(loss)/d(attention output) [B·T, H]: dW_qkv, dW_o and ws.d_qkv."""
    (b, t), nh, h = ws.shape, ws.num_heads, w_o.shape[0]
    qkv, ctx, dctx, tmp = ws.qkv[i], ws.ctx[i], ws.d_ctx, ws.d_nh[2]
    np.matmul(ctx.T, dh, out=g.w_o)  # dW_o = ctxᵀ·dh
    np.matmul(dh, w_o.T, out=dctx)  # (B·T, H)
    q, k, v = (_heads(qkv[:, j * h : (j + 1) * h], b, t, nh) for j in range(3))
    dctx_h = _heads(dctx, b, t, nh)  # (B, n_head, T, hd)
    d = np.multiply(dctx, ctx, out=tmp) @ ws.head_sum  # (B·T, n_head): D_i = dctx_i · ctx_i
    d_t = ws.d_t  # (B, n_head, 1, T), contiguous: the subtraction below runs faster
    d_t[:, :, 0, :] = d.reshape(b, t, nh).transpose(0, 2, 1)
    # dq', dk, dv written head by head straight into ws.d_qkv (B·T, 3H)
    dq, dk, dv = (_heads(ws.d_qkv[:, j * h : (j + 1) * h], b, t, nh) for j in range(3))
    blocks = list(zip(ws.blocks, ws.probs_t[i], ws.d_p, strict=True))
    for n, ((lo, hi), p, d_p) in enumerate(reversed(blocks)):  # the last block sees every key
        dc = dctx_h[:, :, lo:hi]  # (B, n_head, S, hd)
        np.matmul(v[:, :, :hi], dc.swapaxes(-1, -2), out=d_p)  # dPᵀ = v·dctxᵀ, key-major
        d_p -= d_t[..., lo:hi]
        d_p *= p  # dSᵀ = Pᵀ ⊙ (dPᵀ − D)
        np.matmul(d_p.swapaxes(-1, -2), k[:, :, :hi], out=dq[:, :, lo:hi])  # dq' = dS·k
        for grad, rhs, lhs in ((dv, dc, p), (dk, q[:, :, lo:hi], d_p)):  # Pᵀ·dctx, dSᵀ·q'
            if n == 0:
                np.matmul(lhs, rhs, out=grad)
            else:  # keys 0…hi−1 collect this block's queries too
                np.matmul(lhs, rhs, out=ws.d_kv[:, :, :hi])
                grad[:, :, :hi] += ws.d_kv[:, :, :hi]
    a = ws.ln1[i].y
    np.matmul(a.T, ws.d_qkv.reshape(-1, 3, h).transpose(1, 0, 2), out=g.w_qkv)  # (3, H, H)
    g.w_qkv[0] *= ws.q_scale  # q' = a·(W_q/√hd): dW_q = aᵀ·dq'/√hd


_C, _CA, _C3A = GELU_C, GELU_C * GELU_A, 3 * GELU_C * GELU_A


def _ffn_forward(ws: Workspace, i: int, bw: BlockWeights, out: Array) -> None:
    """u = [b, 1]·[W1; b1],  s = 1 + tanh(c·(u + a·u³)),  out = (u·s)·W2/2 + b2.

    (u·s)·W2/2 = gelu(u)·W2; halving W2 instead of u·s saves a pass over [B·T, F].
    """
    u, s, g2 = ws.u[i], ws.s[i], ws.g2[i]
    w1, w2 = ws.w1_aug[i], ws.w2_half[i]
    one = u.dtype.type
    w1[:-1], w1[-1] = bw.w1, bw.b1
    np.multiply(bw.w2, one(0.5), out=w2)
    np.matmul(ws.b_aug[i], w1, out=u)  # b·W1 + b1
    np.multiply(u, u, out=s)
    s *= one(_CA)
    s += one(_C)
    s *= u  # c·(u + a·u³)
    np.tanh(s, out=s)
    s += 1
    np.multiply(u, s, out=g2)  # 2·gelu(u)
    np.matmul(g2, w2, out=out)  # gelu(u)·W2
    out += bw.b2


def _ffn_backward(
    ws: Workspace, layer: int, bw: BlockWeights, dout: Array, g: _BlockGrads, db: Array
) -> None:
    """From dout [B·T, H]: [dW2; db2], [dW1; db1] and db = d(loss)/d(ln2 output)."""
    u, s, g2, f = ws.u[layer], ws.s[layer], ws.g2[layer], ws.u.shape[-1]
    du = ws.d_u
    one = u.dtype.type
    np.matmul(g2.T, dout, out=g.w2_b2[:f])  # 2·dW2 = (2·gelu(u))ᵀ·dout
    g.w2_b2[:f] *= one(0.5)
    np.matmul(_ones_row(dout.shape[0], dout.dtype), dout, out=g.w2_b2[f:])  # db2 = Σ_rows dout
    # 2·gelu'(u) = s + u·s·(2 − s)·c·(1 + 3a·u²), since 1 − tanh² = s·(2 − s)
    gp = np.multiply(u, u, out=ws.d_u2)
    gp *= one(_C3A)
    gp += one(_C)  # c·(1 + 3a·u²)
    gp *= np.subtract(one(2), s, out=du)
    gp *= g2  # u·s
    gp += s
    np.matmul(dout, ws.w2_half[layer].T, out=du)  # dg/2 = dout·(W2/2)ᵀ
    du *= gp  # du = dg ⊙ gelu'(u)
    np.matmul(ws.b_aug[layer].T, du, out=g.w1_b1)  # [dW1; db1] = [b, 1]ᵀ·du
    np.matmul(du, bw.w1.T, out=db)  # db = du·W1ᵀ


class _BlockGrads:
    """Views of one block's gradients inside the flat buffer, shaped for the products."""

    def __init__(self, flat: Array, at: int, h: int, f: int) -> None:
        def take(*shape: int) -> Array:
            nonlocal at
            n = math.prod(shape)
            view, at = flat[at : at + n].reshape(shape), at + n
            return view

        self.ln1, self.w_qkv, self.w_o = take(2, h), take(3, h, h), take(h, h)
        self.ln2, self.w1_b1, self.w2_b2 = take(2, h), take(h + 1, f), take(f + 1, h)
        self.end = at


def train_forward(
    w: Any,
    ids: NDArray[np.integer[Any]],
    ws: Workspace,
    start_pos: int = 0,
    kv: tuple[Array, Array] | None = None,
) -> Array:
    """Logits [B, T, V] of validated ids [B, T] at positions start_pos…, in `ws`.

    Args:
        w: a `framework.gpt.GPTWeights` (any float dtype; the buffers follow it).
        ids: token ids [B, T] of the workspace's shape.
        ws: from `Workspace.acquire(w, B, T)`; with keep=True every activation stays
            there for `train_backward`.
        start_pos: position of ids[:, 0] (inference over a window; training uses 0).
        kv: (keys, values) [L, T, H] to receive every layer's K and V rows (the prefill
            of a KV cache, B = 1).

    Returns:
        `ws.logits`, valid until the workspace is handed out again.
    """
    (b, t), h = ws.shape, w.lm_head.shape[0]
    ws.ids[:] = ids.reshape(-1)
    x = ws.xs[0]
    np.take(w.token_embedding, ws.ids, axis=0, out=x)  # (B·T, H)
    x.reshape(b, t, h)[...] += w.position_embedding[start_pos : start_pos + t]
    for layer, bw in enumerate(w.blocks):
        i = ws.slot(layer)
        x, out = (
            (ws.xs[layer], ws.xs[layer + 1])
            if ws.keep
            else (ws.xs[layer % 2], ws.xs[1 - layer % 2])
        )
        hh, ln1, ln2 = ws.hs[i], ws.ln1[i], ws.ln2[i]
        _ln_forward(x, bw.ln1_gamma, bw.ln1_beta, ln1, bw.eps)  # a = ln1(x)
        w_qkv = ws.w_qkv[i]  # this step's [W_q/√hd | W_k | W_v]
        np.copyto(w_qkv, bw.w_qkv)
        w_qkv[:, :h] *= ws.q_scale
        np.matmul(ln1.y, w_qkv, out=ws.qkv[i])  # (B·T, 3H) = [q' = q/√hd | k | v]
        if kv is not None:
            kv[0][layer], kv[1][layer] = ws.qkv[i][:, h : 2 * h], ws.qkv[i][:, 2 * h :]
        _attn_forward(ws, i, bw.w_o, out=hh)
        hh += x  # h = x + attn(a)
        _ln_forward(hh, bw.ln2_gamma, bw.ln2_beta, ln2, bw.eps)  # b = ln2(h)
        _ffn_forward(ws, i, bw, out=out)
        out += hh  # out = h + ffn(b)
    _ln_forward(out, w.final_gamma, w.final_beta, ws.lnf, w.eps)
    np.matmul(ws.lnf.y, w.lm_head, out=ws.logits.reshape(b * t, -1))  # (B·T, V)
    return ws.logits


def train_backward(dlogits: Array, ws: Workspace, w: Any) -> dict[str, Array]:
    """Gradient of every parameter for d(loss)/d(logits) = `dlogits` [B, T, V].

    Returns:
        name -> gradient (the parameter's shape), in `GPTModel.parameters()` order; all
        of them views into one new flat array (`flat_of` in `framework.optimizer`).
    """
    if not ws.keep:
        raise RuntimeError("train_backward needs a workspace that keeps its activations")
    ws.backward_scratch()
    (b, t), (v, h) = ws.shape, w.token_embedding.shape
    f, n = w.blocks[0].w1.shape[1], b * t
    names, shapes = _names_shapes(w)
    flat = np.zeros(sum(math.prod(s) for s in shapes), ws.xs.dtype)
    d_tok, d_pos = flat[: v * h].reshape(v, h), flat[v * h : v * h + w.position_embedding.size]
    at = v * h + w.position_embedding.size
    blocks = []
    for _ in w.blocks:
        blocks.append(_BlockGrads(flat, at, h, f))
        at = blocks[-1].end
    d_final = flat[at : at + 2 * h].reshape(2, h)
    d_head = flat[at + 2 * h :].reshape(h, v)

    dz = dlogits.reshape(n, v)  # (B·T, V)
    np.matmul(ws.lnf.y.T, dz, out=d_head)  # dW_head = lnfᵀ·dz
    dy, dx, tmp = ws.d_nh
    np.matmul(dz, w.lm_head.T, out=dy)  # (B·T, H)
    _ln_backward(dy, ws.lnf, w.final_gamma, dx, d_final, tmp)
    for layer in reversed(range(len(w.blocks))):  # dx: d(loss)/d(this block's output)
        bw, g = w.blocks[layer], blocks[layer]
        db = dy
        _ffn_backward(ws, layer, bw, dx, g, db)
        dh = ws.d_h
        _ln_backward(db, ws.ln2[layer], bw.ln2_gamma, dh, g.ln2, tmp)
        dh += dx  # the FFN's residual
        _attn_backward(ws, layer, bw.w_o, dh, g)
        da = np.matmul(ws.d_qkv, ws.w_qkv[layer].T, out=dy)  # (B·T, H), d(q', k, v)·W'ᵀ
        _ln_backward(da, ws.ln1[layer], bw.ln1_gamma, dx, g.ln1, tmp)
        dx += dh  # the attention's residual
    # the embedding: token id i collects every row where it appears (the rows sorted by
    # id, then summed id by id), position t every sequence's row t
    order = np.argsort(ws.ids, kind="stable")
    ids = ws.ids[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    d_tok[ids[starts]] = np.add.reduceat(dx[order], starts, axis=0)
    np.matmul(_ones_row(b, dx.dtype), dx.reshape(b, t * h), out=d_pos[: t * h].reshape(1, -1))
    return {name: flat_view for name, flat_view in zip(names, _split(flat, shapes), strict=True)}


def _names_shapes(w: Any) -> tuple[list[str], list[tuple[int, ...]]]:
    """Parameter names and shapes in `parameters()` order, read off the weights."""
    (v, h), s = w.token_embedding.shape, w.position_embedding.shape[0]
    f = w.blocks[0].w1.shape[1]
    local = {"ln1.gamma": (h,), "ln1.beta": (h,), "attn.w_q": (h, h), "attn.w_k": (h, h),
             "attn.w_v": (h, h), "attn.w_o": (h, h), "ln2.gamma": (h,), "ln2.beta": (h,),
             "ffn.w1": (h, f), "ffn.b1": (f,), "ffn.w2": (f, h), "ffn.b2": (h,)}  # fmt: skip
    names = ["embedding.token_embedding", "embedding.position_embedding"]
    shapes: list[tuple[int, ...]] = [(v, h), (s, h)]
    for layer in range(len(w.blocks)):
        names += [f"blocks.{layer}.{n}" for n in TransformerBlock.PARAM_NAMES]
        shapes += [local[n] for n in TransformerBlock.PARAM_NAMES]
    return [*names, "final_ln.gamma", "final_ln.beta", "lm_head"], [*shapes, (h,), (h,), (h, v)]


def _split(flat: Array, shapes: list[tuple[int, ...]]) -> list[Array]:
    out, at = [], 0
    for shape in shapes:
        n = math.prod(shape)
        out.append(flat[at : at + n].reshape(shape))
        at += n
    return out


def cross_entropy_grad_inplace(logits: Array, targets: NDArray[np.integer[Any]]) -> float:
    """Mean cross-entropy of `logits` [..., V]; overwrites them with d(loss)/d(logits).

    The gradient is (softmax − one_hot) / N over the N positions, as
    `framework.loss.cross_entropy_with_grad` gives it, without a new [N, V] array.

    Raises:
        ValueError: if `targets` is not one int in [0, V) per row of `logits`.
    """
    v = logits.shape[-1]
    y = np.asarray(targets)
    if y.shape != logits.shape[:-1] or y.dtype.kind not in "iu":
        raise ValueError(f"targets must be ints of shape {logits.shape[:-1]}, got "
                         f"{y.dtype} {y.shape}")  # fmt: skip
    if y.size and (y.min() < 0 or y.max() >= v):
        raise ValueError(f"targets must be in [0, {v}), got {int(y.min())}..{int(y.max())}")
    z, rows, n = logits.reshape(-1, v), np.arange(y.size), max(y.size, 1)
    flat_y = y.reshape(-1)
    m = z.max(axis=-1, keepdims=True)  # (N, 1)
    z -= m  # every exponent <= 0: no overflow
    picked = z[rows, flat_y].astype(np.float64)  # (N,) z_y − max
    np.exp(z, out=z)
    total = (z @ np.ones((v, 1), z.dtype)).astype(np.float64)  # (N, 1)
    loss = float(np.mean(np.log(total[:, 0]) - picked))
    z *= (1.0 / (total * n)).astype(z.dtype)  # softmax / N
    z[rows, flat_y] -= z.dtype.type(1.0 / n)
    return loss

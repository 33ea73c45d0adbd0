"""Parity with PyTorch (optional extra `parity`): skipped cleanly without torch."""

from __future__ import annotations

from types import ModuleType

import numpy as np

from framework import MultiHeadAttention, create_causal_mask, gelu, softmax


def test_softmax_matches_torch(torch: ModuleType) -> None:
    x = np.random.default_rng(1).standard_normal((3, 4, 7)).astype(np.float32) * 50
    want = torch.softmax(torch.from_numpy(x), dim=-1).numpy()
    np.testing.assert_allclose(softmax(x).numpy(), want, rtol=1e-5, atol=1e-7)


def test_gelu_matches_torch_tanh(torch: ModuleType) -> None:
    x = np.linspace(-6, 6, 101, dtype=np.float32)
    want = torch.nn.functional.gelu(torch.from_numpy(x), approximate="tanh").numpy()
    np.testing.assert_allclose(gelu(x).numpy(), want, rtol=1e-5, atol=1e-6)


def test_multi_head_attention_matches_torch_sdpa(torch: ModuleType) -> None:
    rng = np.random.default_rng(7)
    h, nh, s = 16, 4, 6
    mha = MultiHeadAttention(h, nh)
    mha.init_weights(rng, std=0.3)
    x = rng.standard_normal((s, h)).astype(np.float32)
    out = mha.forward(x, create_causal_mask(s)).numpy()

    tx = torch.from_numpy(x)
    q, k, v = (tx @ torch.from_numpy(w.numpy()) for w in (mha.w_q, mha.w_k, mha.w_v))
    split = lambda t: t.reshape(s, nh, h // nh).transpose(0, 1)  # (n_head, S, hd)  # noqa: E731
    ctx = torch.nn.functional.scaled_dot_product_attention(
        split(q), split(k), split(v), is_causal=True
    )
    want = (ctx.transpose(0, 1).reshape(s, h) @ torch.from_numpy(mha.w_o.numpy())).numpy()
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-6)

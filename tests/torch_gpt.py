"""The framework's GPT written again in PyTorch, on the framework's own weights.

Used by the parity tests (tests/test_framework_parity.py) and the benchmarks
(bench/model_forward.py, bench/model_train_step.py). Plain eager PyTorch with its fused
kernels where they exist (layer_norm, gelu, scaled_dot_product_attention); weights keep the
framework's [in, out] layout and names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from framework.config import ModelConfig


def torch_params(
    state: Mapping[str, np.ndarray], dtype: torch.dtype = torch.float32, grad: bool = False
) -> dict[str, torch.Tensor]:
    """Leaf tensors holding copies of a framework `state_dict()`."""
    return {
        name: torch.tensor(np.asarray(arr), dtype=dtype, requires_grad=grad)
        for name, arr in state.items()
    }


def torch_block(
    x: torch.Tensor, p: Mapping[str, torch.Tensor], prefix: str, num_heads: int
) -> torch.Tensor:
    """Pre-LN block on x [B, T, H] (causal)."""
    b, t, h = x.shape
    hd = h // num_heads

    def w(name: str) -> torch.Tensor:
        return p[prefix + name]

    a = F.layer_norm(x, (h,), w("ln1.gamma"), w("ln1.beta"), eps=1e-5)
    qkv = a @ torch.cat([w("attn.w_q"), w("attn.w_k"), w("attn.w_v")], dim=1)  # (B, T, 3H)
    q, k, v = (z.reshape(b, t, num_heads, hd).transpose(1, 2) for z in qkv.split(h, dim=-1))
    ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, n_head, T, hd)
    x = x + ctx.transpose(1, 2).reshape(b, t, h) @ w("attn.w_o")
    f = F.layer_norm(x, (h,), w("ln2.gamma"), w("ln2.beta"), eps=1e-5)
    f = F.gelu(f @ w("ffn.w1") + w("ffn.b1"), approximate="tanh") @ w("ffn.w2") + w("ffn.b2")
    return x + f


def torch_gpt(ids: Any, p: Mapping[str, torch.Tensor], config: ModelConfig) -> torch.Tensor:
    """Logits [B, T, V] for ids [B, T]."""
    ids_t = torch.as_tensor(np.asarray(ids), dtype=torch.long)
    t = ids_t.shape[1]
    x = p["embedding.token_embedding"][ids_t] + p["embedding.position_embedding"][:t]
    for layer in range(config.num_layers):
        x = torch_block(x, p, f"blocks.{layer}.", config.num_heads)
    h = config.hidden_dim
    x = F.layer_norm(x, (h,), p["final_ln.gamma"], p["final_ln.beta"], eps=1e-5)
    return x @ p["lm_head"]

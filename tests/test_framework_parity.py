"""Parity with PyTorch (optional extra `parity`): the block and the whole GPT forward within
1e-5, and every gradient of the training pass against autograd within 1e-4 (float32)."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from framework import GPTModel, ModelConfig, create_causal_mask, default_config, init_weights


@pytest.fixture(scope="module")
def ref(torch: ModuleType) -> ModuleType:
    """`torch_gpt`, the reference model in PyTorch (imported once torch is)."""
    import torch_gpt

    return torch_gpt


def random_model(config: ModelConfig, seed: int, std: float = 0.3) -> GPTModel:
    """Every parameter random (γ, β, biases and the position table too) so none can hide."""
    model = GPTModel(config)
    rng = np.random.default_rng(seed)
    for _, t in model.parameters():
        t.numpy()[...] = rng.normal(0.0, std, size=t.shape) + (1.0 if t.ndim == 1 else 0.0)
    return model


def test_block_forward_matches_torch(torch: ModuleType, ref: ModuleType) -> None:
    model = random_model(ModelConfig(50, 32, 4, 1, 128, 16), seed=1, std=0.2)
    block = model.blocks[0]
    x = np.random.default_rng(2).standard_normal((12, 32)).astype(np.float32)
    got = block.forward(x, create_causal_mask(12)).numpy()
    p = ref.torch_params(model.state_dict())
    with torch.no_grad():
        want = ref.torch_block(torch.from_numpy(x)[None], p, "blocks.0.", 4)[0].numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("seq_len", [1, 17, 128])
def test_model_forward_matches_torch(seq_len: int, torch: ModuleType, ref: ModuleType) -> None:
    model = GPTModel(default_config())
    init_weights(model, 5)
    ids = np.random.default_rng(seq_len).integers(0, 260, size=seq_len)
    got = model.forward(ids).numpy()
    with torch.no_grad():
        want = ref.torch_gpt(ids[None], ref.torch_params(model.state_dict()), model.config)[
            0
        ].numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_forward_batch_matches_torch(torch: ModuleType, ref: ModuleType) -> None:
    model = random_model(ModelConfig(40, 16, 2, 2, 64, 12), seed=3, std=0.2)
    ids = np.random.default_rng(4).integers(0, 40, size=(3, 12))
    got = model.forward_batch(ids)
    with torch.no_grad():
        want = ref.torch_gpt(ids, ref.torch_params(model.state_dict()), model.config).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "config", [ModelConfig(40, 16, 2, 2, 64, 12), default_config()], ids=["small", "default"]
)
def test_every_gradient_matches_torch_autograd(
    config: ModelConfig, torch: ModuleType, ref: ModuleType
) -> None:
    model = random_model(config, seed=6, std=0.1)
    rng = np.random.default_rng(7)
    b, t = 4, min(config.max_seq_len, 64)
    ids = rng.integers(0, config.vocab_size, size=(b, t))
    ids[:, 1] = ids[:, 0]  # repeated ids: the scatter-add must accumulate
    logits = model.forward_batch(ids)
    dlogits = rng.standard_normal(logits.shape).astype(np.float32) / (b * t)
    grads = model.backward(dlogits)

    p = ref.torch_params(model.state_dict(), grad=True)
    out = ref.torch_gpt(ids, p, config)
    (out * torch.from_numpy(dlogits)).sum().backward()
    assert list(grads) == list(p)
    for name, tensor in p.items():
        want = tensor.grad.numpy()
        err = np.linalg.norm(grads[name] - want) / max(np.linalg.norm(want), 1e-30)
        assert err <= 1e-4, f"{name}: relative error {err:.2e}"

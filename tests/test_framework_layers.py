"""framework.layernorm, ffn, transformer: forward values against the formulas, the Pre-LN
order, the mask, and each layer's backward against float64 central differences."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from framework import FFN, LayerNorm, TransformerBlock, create_causal_mask, tensor_from
from framework.attention import attention_backward, attention_forward, causal_mask_array
from framework.ffn import ffn_backward, ffn_forward, gelu_tanh, gelu_tanh_grad
from framework.layernorm import layernorm_backward, layernorm_forward
from framework.transformer import BlockWeights, block_backward, block_forward

RNG = np.random.default_rng


def random_block(seed: int = 0, h: int = 16, nh: int = 4, f: int = 64) -> TransformerBlock:
    """A block whose every parameter (γ, β and biases too) is random, so no slot hides."""
    blk = TransformerBlock(h, nh, f)
    rng = RNG(seed)
    for _, t in blk.parameters():
        t.numpy()[...] = rng.normal(0.0, 0.3, size=t.shape) + (1.0 if t.ndim == 1 else 0.0)
    return blk


# -- LayerNorm ------------------------------------------------------------------------------
def test_layernorm_matches_the_formula_with_gamma_and_beta() -> None:
    rng = RNG(1)
    ln = LayerNorm(8)
    ln.gamma.numpy()[...] = rng.normal(size=8)
    ln.beta.numpy()[...] = rng.normal(size=8)
    x = rng.normal(5.0, 3.0, size=(2, 3, 8))
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)  # population variance
    want = ln.gamma.numpy() * (x - mean) / np.sqrt(var + 1e-5) + ln.beta.numpy()
    np.testing.assert_allclose(ln.forward(x).numpy(), want, rtol=1e-5, atol=1e-5)  # float32


def test_layernorm_eps_is_used_and_rows_are_independent() -> None:
    x = np.array([[0.0, 1e-3], [0.0, 2.0]], np.float32)  # var 2.5e-7 is far below eps
    y = LayerNorm(2).forward(x).numpy()
    assert abs(y[0, 1]) < 0.2  # with eps 1e-5 a tiny spread stays tiny, not ±1
    np.testing.assert_allclose(y[1], [-1.0, 1.0], atol=1e-5)
    assert LayerNorm(2, eps=0.0).forward(x).numpy()[0, 1] == pytest.approx(1.0, abs=1e-3)


def test_layernorm_rejects_wrong_width_and_bad_eps() -> None:
    with pytest.raises(ValueError, match=r"\[\.\.\., 4\]"):
        LayerNorm(4).forward(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="eps"):
        LayerNorm(4, eps="1e-5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="eps"):
        LayerNorm(4, eps=-1.0)


# -- FFN ------------------------------------------------------------------------------------
def test_ffn_matches_the_formula() -> None:
    rng = RNG(2)
    ffn = FFN(8, 32)
    for _, t in ffn.parameters():
        t.numpy()[...] = rng.normal(size=t.shape)
    x = rng.normal(size=(5, 8))
    pre = x @ ffn.w1.numpy() + ffn.b1.numpy()
    gelu = 0.5 * pre * (1 + np.tanh(np.sqrt(2 / np.pi) * (pre + 0.044715 * pre**3)))
    want = gelu @ ffn.w2.numpy() + ffn.b2.numpy()
    np.testing.assert_allclose(ffn.forward(x).numpy(), want, rtol=1e-4, atol=1e-4)  # float32


def test_gelu_grad_is_the_derivative_at_the_pre_activation() -> None:
    u = np.linspace(-4, 4, 41)
    numeric = (gelu_tanh(u + 1e-6) - gelu_tanh(u - 1e-6)) / 2e-6
    np.testing.assert_allclose(gelu_tanh_grad(u), numeric, atol=1e-8)
    # evaluated at the post-activation (the C course's bug) it would differ clearly
    assert np.abs(gelu_tanh_grad(gelu_tanh(u)) - numeric).max() > 0.1


# -- TransformerBlock -----------------------------------------------------------------------
def test_block_is_pre_ln_with_both_residuals() -> None:
    blk = random_block()
    x = RNG(3).normal(size=(6, 16)).astype(np.float32)
    mask = create_causal_mask(6)
    h = x + blk.attn.forward(blk.ln1.forward(x), mask).numpy()
    want = h + blk.ffn.forward(blk.ln2.forward(h)).numpy()
    got = blk.forward(x, mask).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    post_ln = blk.ln1.forward(x + blk.attn.forward(x, mask).numpy()).numpy()
    assert np.abs(got - post_ln).max() > 0.1


def test_block_honours_the_mask_and_leaves_x_unchanged() -> None:
    blk = random_block()
    x = RNG(4).normal(size=(6, 16)).astype(np.float32)
    x_t = tensor_from(x)
    out = blk.forward(x_t, create_causal_mask(6)).numpy()
    np.testing.assert_array_equal(x_t.numpy(), x)
    x2 = x.copy()
    x2[4] += 3.0  # change a later token
    out2 = blk.forward(x2, create_causal_mask(6)).numpy()
    np.testing.assert_allclose(out2[:4], out[:4], rtol=1e-6, atol=1e-6)
    assert np.abs(out2[4:] - out[4:]).max() > 1e-2
    unmasked = blk.forward(x2).numpy()
    assert np.abs(unmasked[:4] - out[:4]).max() > 1e-2


def test_block_weights_from_module_and_state_agree() -> None:
    blk = random_block()
    a = blk.weights()
    b = BlockWeights.from_state(blk.state_dict(), "", 4)
    np.testing.assert_array_equal(a.w_qkv, b.w_qkv)
    np.testing.assert_array_equal(a.w_qkv[:, 16:32], blk.attn.w_k.numpy())


# -- backward of each layer against float64 central differences -------------------------------
def numeric_grad(loss: Callable[[], float], arr: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """Central differences of `loss` with respect to every cell of `arr` (changed in place)."""
    out = np.zeros_like(arr)
    for idx in np.ndindex(arr.shape):
        keep = arr[idx]
        arr[idx] = keep + step
        up = loss()
        arr[idx] = keep - step
        down = loss()
        arr[idx] = keep
        out[idx] = (up - down) / (2 * step)
    return out


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(a), np.linalg.norm(b), 1e-30))


def test_layernorm_backward_matches_finite_differences() -> None:
    rng = RNG(5)
    x, g, b = rng.normal(size=(2, 3, 6)), rng.normal(size=6), rng.normal(size=6)
    dy = rng.normal(size=(2, 3, 6))
    dx, dg, db = layernorm_backward(dy, layernorm_forward(x, g, b)[1], g)

    def loss() -> float:
        return float(np.sum(layernorm_forward(x, g, b)[0] * dy))

    for analytic, arr in ((dx, x), (dg, g), (db, b)):
        assert rel_err(analytic, numeric_grad(loss, arr)) < 1e-7


def test_ffn_backward_matches_finite_differences() -> None:
    rng = RNG(6)
    x = rng.normal(size=(2, 3, 4))
    w1, b1, w2, b2 = (rng.normal(size=s) for s in ((4, 8), (8,), (8, 4), (4,)))
    dy = rng.normal(size=(2, 3, 4))
    grads = ffn_backward(dy, ffn_forward(x, w1, b1, w2, b2)[1], w1, w2)

    def loss() -> float:
        return float(np.sum(ffn_forward(x, w1, b1, w2, b2)[0] * dy))

    for analytic, arr in zip(grads, (x, w1, b1, w2, b2), strict=True):
        assert rel_err(analytic, numeric_grad(loss, arr)) < 1e-7


@pytest.mark.parametrize("masked", [True, False])
def test_attention_backward_matches_finite_differences(masked: bool) -> None:
    rng = RNG(7)
    x, w_qkv, w_o = rng.normal(size=(2, 5, 6)), rng.normal(size=(6, 18)), rng.normal(size=(6, 6))
    mask = causal_mask_array(5, 5, np.float64) if masked else None
    dy = rng.normal(size=(2, 5, 6))
    grads = attention_backward(dy, attention_forward(x, w_qkv, w_o, 3, mask)[1], w_qkv, w_o)

    def loss() -> float:
        return float(np.sum(attention_forward(x, w_qkv, w_o, 3, mask)[0] * dy))

    for analytic, arr in zip(grads, (x, w_qkv, w_o), strict=True):
        assert rel_err(analytic, numeric_grad(loss, arr)) < 1e-7


def test_block_backward_matches_finite_differences() -> None:
    block = random_block(8, h=8, nh=2, f=16)
    state = {k: v.astype(np.float64) for k, v in block.state_dict().items()}
    x = RNG(8).normal(size=(2, 4, 8))
    dy = RNG(9).normal(size=(2, 4, 8))
    mask = causal_mask_array(4, 4, np.float64)

    def loss() -> float:
        return float(np.sum(block_forward(x, BlockWeights.from_state(state, "", 2), mask)[0] * dy))

    w = BlockWeights.from_state(state, "", 2)
    dx, grads = block_backward(dy, block_forward(x, w, mask)[1], w)
    assert rel_err(dx, numeric_grad(loss, x)) < 1e-7
    assert list(grads) == list(state)
    for name, arr in state.items():
        assert rel_err(grads[name], numeric_grad(loss, arr)) < 1e-7, name


@pytest.mark.parametrize(("s", "t"), [(1, 1), (3, 3), (2, 5), (1, 4), (4, 9)])
def test_causal_mask_array_blocks_later_keys_only(s: int, t: int) -> None:
    mask = causal_mask_array(s, t)
    want = np.where(np.arange(t)[None, :] > (t - s) + np.arange(s)[:, None], -1e9, 0.0)
    np.testing.assert_array_equal(mask, want)
    assert mask.dtype == np.float32 and not mask.flags.writeable  # shared: never written


def test_block_output_equals_block_forward() -> None:
    from framework.transformer import block_output

    blk = random_block(10)
    x = RNG(10).normal(size=(2, 7, 16)).astype(np.float32)
    w, mask = blk.weights(), causal_mask_array(7, 7)
    np.testing.assert_array_equal(block_output(x, w, mask), block_forward(x, w, mask)[0])

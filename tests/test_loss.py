"""framework.loss: cross-entropy and its gradient against the formula, differences and torch."""

from __future__ import annotations

import numpy as np
import pytest

from framework.loss import cross_entropy_loss, cross_entropy_with_grad, softmax_ce_grad
from framework.tensor import tensor_from


def formula(z: np.ndarray, y: np.ndarray) -> float:
    z = z.astype(np.float64).reshape(-1, z.shape[-1])
    y = np.asarray(y).reshape(-1)
    lse = np.log(np.exp(z - z.max(-1, keepdims=True)).sum(-1)) + z.max(-1)
    return float((lse - z[np.arange(len(y)), y]).mean())


def test_uniform_logits_give_ln_v() -> None:
    assert cross_entropy_loss(np.zeros((4, 10), np.float32), [3, 7, 1, 5]) == pytest.approx(
        np.log(10), abs=1e-12
    )


def test_dominant_target_gives_small_loss() -> None:
    z = np.zeros((4, 10), np.float32)
    z[np.arange(4), [3, 7, 1, 5]] = 5.0
    assert cross_entropy_loss(z, [3, 7, 1, 5]) == pytest.approx(np.log1p(9 * np.exp(-5)), rel=1e-9)


@pytest.mark.parametrize("shape", [(1, 2), (5, 7), (2, 3, 11)])
def test_random_logits_match_the_formula(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(sum(shape))
    z = (rng.standard_normal(shape) * 3).astype(np.float32)
    y = rng.integers(0, shape[-1], size=shape[:-1])
    assert cross_entropy_loss(z, y) == pytest.approx(formula(z, y), rel=1e-12)
    loss, grad = cross_entropy_with_grad(z, y)
    assert loss == pytest.approx(formula(z, y), rel=1e-6)  # float32 exp, float64 sum
    np.testing.assert_allclose(grad, softmax_ce_grad(z, y).numpy(), atol=1e-7)


def test_huge_logits_stay_finite() -> None:
    z = np.array([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4 + 1]], np.float32)
    assert cross_entropy_loss(z, [0, 2]) == pytest.approx((0 + np.log1p(2 * np.exp(-1))) / 2)
    assert cross_entropy_loss(z, [2, 0]) == pytest.approx((2e4 + 1 + np.log1p(2 * np.exp(-1))) / 2)
    grad = softmax_ce_grad(z, [1, 1]).numpy()
    assert np.isfinite(grad).all()
    np.testing.assert_allclose(grad[0], [0.5, -0.5, 0.0], atol=1e-7)


def test_gradient_matches_central_differences() -> None:
    rng = np.random.default_rng(7)
    z = rng.standard_normal((3, 5))
    y = np.array([4, 0, 4])
    grad = softmax_ce_grad(z.astype(np.float32), y).numpy()
    h = 1e-6
    num = np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        zp, zm = z.copy(), z.copy()
        zp[idx] += h
        zm[idx] -= h
        num[idx] = (formula(zp, y) - formula(zm, y)) / (2 * h)
    np.testing.assert_allclose(grad, num, atol=1e-6)  # float32 gradient of a float64 loss
    np.testing.assert_allclose(grad.sum(-1), 0.0, atol=1e-7)


def test_gradient_is_divided_by_the_number_of_positions() -> None:
    z = np.zeros((2, 4, 3), np.float32)
    _, grad = cross_entropy_with_grad(z, np.zeros((2, 4), np.int64))
    np.testing.assert_allclose(grad[0, 0], np.array([-2 / 3, 1 / 3, 1 / 3]) / 8, rtol=1e-6)


def test_tensor_views_are_read_through_their_strides() -> None:
    z = np.arange(12, dtype=np.float32).reshape(3, 4) / 5
    view = tensor_from(z.T.copy()).T  # same values, strides (1, 3)
    assert cross_entropy_loss(view, [0, 1, 3]) == pytest.approx(formula(z, np.array([0, 1, 3])))


@pytest.mark.parametrize(
    ("targets", "error"),
    [([0, 3], ValueError), ([0, -1], ValueError), ([0], ValueError), ([0.5, 1.0], TypeError)],
)
def test_bad_targets_raise(targets: list[float], error: type[Exception]) -> None:
    with pytest.raises(error, match="targets"):
        cross_entropy_loss(np.zeros((2, 3), np.float32), targets)
    with pytest.raises(error, match="targets"):
        softmax_ce_grad(np.zeros((2, 3), np.float32), targets)


def test_bad_logits_raise() -> None:
    with pytest.raises(ValueError, match="logits"):
        cross_entropy_loss(np.zeros(3, np.float32), [0])
    with pytest.raises(TypeError, match="logits"):
        cross_entropy_loss("zzz", [0])


def test_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    z = (rng.standard_normal((2, 6, 13)) * 4).astype(np.float32)
    y = rng.integers(0, 13, size=(2, 6))
    zt = torch.tensor(z, requires_grad=True)
    lt = torch.nn.functional.cross_entropy(zt.reshape(-1, 13), torch.tensor(y).reshape(-1))
    lt.backward()
    loss, grad = cross_entropy_with_grad(z, y)
    assert loss == pytest.approx(lt.item(), rel=1e-6)
    np.testing.assert_allclose(grad, zt.grad.numpy(), atol=1e-7)

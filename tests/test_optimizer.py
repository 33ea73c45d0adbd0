"""framework.optimizer: AdamW against its formula and torch.optim.AdamW; clipping; state."""

from __future__ import annotations

import math

import numpy as np
import pytest

from framework.optimizer import AdamW, clip_grad_norm, decays
from framework.tensor import Tensor, tensor_from


def reference(p, g_seq, lr, betas, eps, wd, decay=True):  # type: ignore[no-untyped-def]
    """AdamW in float64, torch's order: decay, moments, bias-corrected update."""
    p, m, v = p.astype(np.float64), np.zeros_like(p, np.float64), np.zeros_like(p, np.float64)
    for t, g in enumerate(g_seq, start=1):
        if decay:
            p = p - lr * wd * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        mh, vh = m / (1 - betas[0] ** t), v / (1 - betas[1] ** t)
        p = p - lr * mh / (np.sqrt(vh) + eps)
    return p, m, v


def test_first_step_moments_are_the_plain_averages() -> None:
    p = tensor_from(np.ones(8))
    opt = AdamW([("w", p)], lr=0.01, weight_decay=0.0)
    opt.step({"w": np.full(8, 0.1, np.float32)})
    np.testing.assert_allclose(opt.m["w"], 0.01, rtol=1e-6)  # (1 - 0.9) · 0.1, not 0.1
    np.testing.assert_allclose(opt.v["w"], 1e-5, rtol=1e-5)  # (1 - 0.999) · 0.01
    np.testing.assert_allclose(p.numpy(), 0.99, rtol=1e-6)  # m̂/√v̂ = 1: one lr step
    assert opt.t == 1


@pytest.mark.parametrize("wd", [0.0, 0.1])
def test_ten_steps_match_the_formula(wd: float) -> None:
    rng = np.random.default_rng(11)
    w0 = rng.standard_normal((3, 4)).astype(np.float32)
    grads = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(10)]
    p = tensor_from(w0)
    opt = AdamW([("w", p)], lr=0.05, betas=(0.9, 0.99), eps=1e-8, weight_decay=wd)
    for g in grads:
        opt.step({"w": g})
    want_p, want_m, want_v = reference(w0, grads, 0.05, (0.9, 0.99), 1e-8, wd)
    np.testing.assert_allclose(p.numpy(), want_p, atol=2e-6)  # float32 state over 10 steps
    np.testing.assert_allclose(opt.m["w"], want_m, atol=1e-6)
    np.testing.assert_allclose(opt.v["w"], want_v, rtol=1e-5)


def test_decay_comes_before_the_update() -> None:
    # with g = 0 the Adam part is 0: p = (1 - lr·wd)·p exactly, on the old value
    p = tensor_from([[2.0]])
    AdamW([("w", p)], lr=0.1, weight_decay=0.5).step({"w": np.zeros((1, 1), np.float32)})
    assert p.tolist()[0][0] == pytest.approx(2.0 * 0.95)
    p, q = tensor_from([[1.0]]), tensor_from([[1.0]])
    opt = AdamW([("w", p), ("embedding.position_embedding", q)], lr=0.1, weight_decay=0.5)
    opt.step({"w": np.ones((1, 1), np.float32), "embedding.position_embedding": np.ones((1, 1))})
    assert p.tolist()[0][0] == pytest.approx(0.95 - 0.1, abs=1e-6)  # decayed, then stepped
    assert q.tolist()[0][0] == pytest.approx(0.9, abs=1e-6)  # the position table: no decay


def test_decay_policy() -> None:
    assert decays("lm_head", (64, 260)) and decays("embedding.token_embedding", (260, 64))
    assert decays("blocks.3.ffn.w2", (256, 64))
    assert not decays("embedding.position_embedding", (128, 64))
    assert not decays("blocks.0.ln1.gamma", (64,)) and not decays("blocks.0.ffn.b1", (256,))


def test_parameters_views_and_moments_are_updated_in_place() -> None:
    base = tensor_from(np.ones((2, 3)))
    view = base.T  # a non-contiguous view: the update must land in base's storage
    opt = AdamW([("w", view)], lr=0.1, weight_decay=0.0)
    m_before = opt.m["w"]
    opt.step({"w": np.ones((3, 2), np.float32)})
    np.testing.assert_allclose(base.numpy(), 0.9, rtol=1e-6)
    assert opt.m["w"] is m_before


def test_missing_or_misshapen_gradient_changes_nothing() -> None:
    p = tensor_from(np.ones(3))
    opt = AdamW([("w", p), ("b", tensor_from(np.ones(2)))], lr=0.1)
    with pytest.raises(ValueError, match="'b'"):
        opt.step({"w": np.ones(3, np.float32)})
    with pytest.raises(ValueError, match=r"expected shape \(3,\)"):
        opt.step({"w": np.ones(4, np.float32), "b": np.ones(2, np.float32)})
    assert opt.t == 0 and p.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "kwargs", [{"lr": -1.0}, {"eps": 0.0}, {"weight_decay": -0.1}, {"betas": (0.9, 1.0)}]
)
def test_bad_hyperparameters_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        AdamW([("w", tensor_from([1.0]))], **kwargs)  # type: ignore[arg-type]


def test_duplicate_names_raise() -> None:
    with pytest.raises(ValueError, match="unique"):
        AdamW([("w", tensor_from([1.0])), ("w", tensor_from([2.0]))])


def test_state_roundtrip_resumes_exactly() -> None:
    rng = np.random.default_rng(5)
    grads = [{"w": rng.standard_normal(4).astype(np.float32)} for _ in range(6)]
    a, b = tensor_from(np.ones(4)), tensor_from(np.ones(4))
    opt_a = AdamW([("w", a)], lr=0.01)
    for g in grads:
        opt_a.step(g)
    opt_b = AdamW([("w", b)], lr=0.01)
    for g in grads[:3]:
        opt_b.step(g)
    state = opt_b.state_dict()
    opt_c = AdamW([("w", b)], lr=0.01)
    opt_c.load_state_dict(state)
    for g in grads[3:]:
        opt_c.step(g)
    assert a.tolist() == b.tolist()
    with pytest.raises(ValueError, match="m/w"):
        opt_c.load_state_dict({"t": np.array(1)})


def test_clip_uses_every_gradient_in_one_norm() -> None:
    g = {"w": np.full((2, 2), 3.0, np.float32), "ln.gamma": np.array([8.0], np.float32)}
    norm = clip_grad_norm(g, 5.0)
    assert norm == pytest.approx(10.0)  # √(4·9 + 64)
    assert g["w"][0, 0] == pytest.approx(1.5) and g["ln.gamma"][0] == pytest.approx(4.0)
    small = {"w": np.array([0.3], np.float32)}
    assert clip_grad_norm(small, 5.0) == pytest.approx(0.3) and small["w"][0] == np.float32(0.3)
    bad = {"w": np.array([np.nan], np.float32)}
    assert math.isnan(clip_grad_norm(bad, 1.0))


def test_matches_torch_adamw_over_ten_steps() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    shapes = {"blocks.0.attn.w_q": (4, 4), "blocks.0.ln1.gamma": (4,), "lm_head": (4, 6)}
    init = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    grads = [{n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
             for _ in range(10)]  # fmt: skip
    ours: dict[str, Tensor] = {n: tensor_from(w) for n, w in init.items()}
    opt = AdamW(list(ours.items()), lr=0.02, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    theirs = {n: torch.tensor(w, requires_grad=True) for n, w in init.items()}
    groups = [
        {"params": [theirs[n] for n in shapes if decays(n, shapes[n])], "weight_decay": 0.1},
        {"params": [theirs[n] for n in shapes if not decays(n, shapes[n])], "weight_decay": 0.0},
    ]
    topt = torch.optim.AdamW(groups, lr=0.02, betas=(0.9, 0.95), eps=1e-8)
    for g in grads:
        opt.step(g)
        for n, t in theirs.items():
            t.grad = torch.tensor(g[n])
        topt.step()
    for n in shapes:
        np.testing.assert_allclose(ours[n].numpy(), theirs[n].detach().numpy(), atol=1e-6)


def test_lab07s_reference_is_torch_adamw() -> None:
    """lab07's checks compare a student's adam_step with `ref_adamw`: it must be torch's."""
    import importlib.util
    from pathlib import Path

    torch = pytest.importorskip("torch")
    path = Path(__file__).resolve().parent.parent / "labs" / "lab07" / "verify.py"
    spec = importlib.util.spec_from_file_location("lab07_verify_for_tests", path)
    assert spec is not None and spec.loader is not None
    verify = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(verify)
    rng = np.random.default_rng(707)
    w0 = rng.standard_normal((3, 4)).astype(np.float32)
    grads = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(10)]
    for lr, b1, b2, eps, wd in ((0.05, 0.9, 0.99, 1e-8, 0.1), (0.01, 0.8, 0.999, 1e-6, 0.0)):
        want_p, _, _ = verify.ref_adamw(w0, grads, lr, b1, b2, eps, wd)
        w = torch.tensor(w0, requires_grad=True)
        opt = torch.optim.AdamW([w], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
        for g in grads:
            w.grad = torch.tensor(g)
            opt.step()
        np.testing.assert_allclose(w.detach().numpy(), want_p, atol=1e-6, rtol=0)

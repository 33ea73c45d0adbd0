"""framework.schedule: warmup then cosine, the C course's curve without its idle step 0."""

from __future__ import annotations

import itertools
import math

import pytest

from framework.schedule import cosine_lr, warmup_cosine_lr


def test_warmup_is_linear_and_starts_above_zero() -> None:
    lrs = [warmup_cosine_lr(s, 1e-3, 1e-5, warmup=10, total=100) for s in range(1, 11)]
    assert lrs == pytest.approx([1e-4 * s for s in range(1, 11)])


def test_cosine_after_warmup_reaches_the_floor() -> None:
    lr = [warmup_cosine_lr(s, 1.0, 0.1, warmup=10, total=110) for s in range(1, 131)]
    assert lr[59] == pytest.approx(0.1 + 0.45 * (1 + math.cos(math.pi * 0.5)))  # step 60
    assert lr[109] == pytest.approx(0.1) and lr[129] == pytest.approx(0.1)
    assert all(a >= b for a, b in itertools.pairwise(lr[9:]))  # never rises again


def test_cosine_endpoints() -> None:
    assert cosine_lr(0.0, 2.0, 1.0) == 2.0 and cosine_lr(1.0, 2.0, 1.0) == 1.0
    assert cosine_lr(-1.0, 2.0, 1.0) == 2.0 and cosine_lr(3.0, 2.0, 1.0) == 1.0


def test_no_warmup() -> None:
    assert warmup_cosine_lr(1, 1.0, 0.0, warmup=0, total=3) == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("step", "warmup", "total", "min_lr"), [(0, 1, 5, 0.0), (1, -1, 5, 0.0), (1, 6, 5, 0.0),
                                            (1, 1, 5, 2.0)]
)  # fmt: skip
def test_bad_arguments_raise(step: int, warmup: int, total: int, min_lr: float) -> None:
    with pytest.raises(ValueError):
        warmup_cosine_lr(step, 1.0, min_lr, warmup, total)

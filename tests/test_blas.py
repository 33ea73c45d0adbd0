"""framework.blas: the thread count of numpy's OpenBLAS, changed at run time."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from framework.blas import set_blas_threads


def test_rejects_zero_threads() -> None:
    with pytest.raises(ValueError, match="n must be >= 1"):
        set_blas_threads(0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds OpenBLAS via /proc")
def test_finds_numpys_openblas_and_products_stay_right() -> None:
    config = str(np.show_config(mode="dicts")).lower()
    if "openblas" not in config:
        pytest.skip("numpy is not built with OpenBLAS here")
    a = np.random.default_rng(0).standard_normal((64, 64))
    want = a @ a.T
    assert set_blas_threads(1) is True
    np.testing.assert_allclose(a @ a.T, want, rtol=1e-12)
    assert set_blas_threads(2) is True

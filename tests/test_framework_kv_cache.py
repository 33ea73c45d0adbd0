"""framework.kv_cache and the cached model forward: the cache's API, its errors (which leave
it unchanged), and cached decoding equal to the uncached forward at every step."""

from __future__ import annotations

import numpy as np
import pytest

from framework import GPTModel, KVCache, default_config, init_weights, tensor_from, tiny_config


def snapshot(cache: KVCache) -> tuple[np.ndarray, np.ndarray, list[int]]:
    return cache.k.numpy().copy(), cache.v.numpy().copy(), list(cache.lengths)


def assert_unchanged(cache: KVCache, snap: tuple[np.ndarray, np.ndarray, list[int]]) -> None:
    np.testing.assert_array_equal(cache.k.numpy(), snap[0])
    np.testing.assert_array_equal(cache.v.numpy(), snap[1])
    assert cache.lengths == snap[2]


def test_new_cache_is_zeroed_with_the_documented_shapes() -> None:
    cache = KVCache(4, 128, 64)
    assert cache.k.shape == cache.v.shape == (4, 128, 64)
    assert not cache.k.numpy().any() and not cache.v.numpy().any()
    assert cache.lengths == [0, 0, 0, 0] and cache.length() == 0
    assert cache.nbytes == 2 * 4 * 128 * 64 * 4


def test_append_writes_the_next_row_of_one_layer_and_returns_its_position() -> None:
    cache = KVCache(2, 3, 4)
    assert cache.append(1, [1.0, 2.0, 3.0, 4.0], np.full((1, 4), 7.0)) == 0
    assert cache.append(1, tensor_from([5.0, 6.0, 7.0, 8.0]), np.zeros(4)) == 1
    assert cache.lengths == [0, 2] and cache.length(1) == 2 and cache.length() == 0
    np.testing.assert_array_equal(cache.k.numpy()[1, :2], [[1, 2, 3, 4], [5, 6, 7, 8]])
    np.testing.assert_array_equal(cache.v.numpy()[1, 0], [7, 7, 7, 7])
    assert not cache.k.numpy()[0].any()


def test_append_accepts_a_non_contiguous_view() -> None:
    cache = KVCache(1, 2, 3)
    m = tensor_from(np.arange(6, dtype=np.float32).reshape(2, 3)).T  # (3, 2) view
    col = m.permute(1, 0)  # back to (2, 3), strided
    cache.append(0, col.numpy()[1], col.numpy()[0])
    np.testing.assert_array_equal(cache.k.numpy()[0, 0], [3, 4, 5])


@pytest.mark.parametrize(
    ("layer", "k_row", "exc", "match"),
    [
        (2, np.zeros(4), ValueError, r"layer must be in \[0, 2\), got 2"),
        (-1, np.zeros(4), ValueError, "layer must be in"),
        (1.0, np.zeros(4), TypeError, "layer must be an int"),
        (0, np.zeros(5), ValueError, r"k_row must be \[4\] or \[1, 4\], got shape \(5,\)"),
        (0, np.zeros((2, 4)), ValueError, "k_row"),
        (0, "abcd", TypeError, "k_row"),
    ],
)
def test_append_errors_leave_the_cache_unchanged(layer, k_row, exc, match) -> None:  # type: ignore[no-untyped-def]
    cache = KVCache(2, 3, 4)
    cache.append(0, np.ones(4), np.ones(4))
    snap = snapshot(cache)
    with pytest.raises(exc, match=match):
        cache.append(layer, k_row, np.zeros(4))
    assert_unchanged(cache, snap)


def test_full_layer_and_bad_v_row_leave_the_cache_unchanged() -> None:
    cache = KVCache(1, 2, 4)
    cache.append(0, np.ones(4), np.ones(4))
    snap = snapshot(cache)
    with pytest.raises(ValueError, match="v_row"):
        cache.append(0, np.full(4, 9.0), np.zeros(3))
    assert_unchanged(cache, snap)
    cache.append(0, np.ones(4), np.ones(4))
    snap = snapshot(cache)
    with pytest.raises(ValueError, match="full"):
        cache.append(0, np.ones(4), np.ones(4))
    assert_unchanged(cache, snap)


def test_reset_and_length_errors() -> None:
    cache = KVCache(2, 3, 4)
    cache.append(0, np.ones(4), np.ones(4))
    cache.reset()
    assert cache.lengths == [0, 0] and not cache.k.numpy().any() and not cache.v.numpy().any()
    with pytest.raises(ValueError, match="layer"):
        cache.length(2)


# -- the model with a cache ---------------------------------------------------------------------
def test_prefill_then_30_decode_steps_equal_the_uncached_forward_every_step() -> None:
    model = GPTModel(default_config())
    init_weights(model, 11)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 260, size=38).tolist()
    cache = KVCache(4, 128, 64)
    prefill = model.forward(ids[:8], kv_cache=cache).numpy()
    np.testing.assert_allclose(prefill, model.forward(ids[:8]).numpy(), rtol=1e-5, atol=1e-5)
    assert cache.lengths == [8] * 4
    for pos in range(8, 38):
        step = model.forward([ids[pos]], kv_cache=cache, start_pos=pos).numpy()
        full = model.forward(ids[: pos + 1]).numpy()
        np.testing.assert_allclose(step[0], full[-1], rtol=1e-5, atol=1e-5, err_msg=f"pos {pos}")
        assert cache.length() == pos + 1
    k_rows = cache.k.numpy()[0, :38]
    a = model.blocks[0].ln1.forward(model.embedding.forward(ids)).numpy()
    np.testing.assert_allclose(k_rows, a @ model.blocks[0].attn.w_k.numpy(), rtol=1e-5, atol=1e-6)


def test_chunked_prefill_with_start_pos_and_rewind() -> None:
    model = GPTModel(tiny_config())
    init_weights(model, 1)
    ids = list(range(40, 52))
    full = model.forward(ids).numpy()
    cache = KVCache(2, 64, 32)
    model.forward(ids[:5], kv_cache=cache)
    chunk = model.forward(ids[5:], kv_cache=cache, start_pos=5).numpy()
    np.testing.assert_allclose(chunk, full[5:], rtol=1e-5, atol=1e-5)
    other = model.forward([7, 8], kv_cache=cache, start_pos=3).numpy()  # rewind: drop 3…11
    np.testing.assert_allclose(other, model.forward([*ids[:3], 7, 8]).numpy()[3:], atol=1e-5)
    assert cache.lengths == [5, 5]


@pytest.mark.parametrize(
    ("cache_args", "ids", "start", "exc", "match"),
    [
        ((2, 64, 32), [1, 2], 4, ValueError, "start_pos is 4 but layer 0 of the KV cache holds"),
        ((3, 64, 32), [1], 3, ValueError, "kv_cache has 3 layers"),
        ((2, 64, 16), [1], 3, ValueError, "width 16"),
        ((2, 4, 32), [1, 2], 3, ValueError, "do not fit in a KV cache of max_seq_len 4"),
        ((2, 64, 32), [1, 999], 3, ValueError, "outside"),
    ],
)
def test_cached_forward_errors_leave_the_cache_unchanged(  # type: ignore[no-untyped-def]
    cache_args, ids, start, exc, match
) -> None:
    model = GPTModel(tiny_config())
    init_weights(model, 1)
    cache = KVCache(*cache_args)
    if cache_args[0] == 2 and cache_args[2] == 32:
        model.forward([5, 6, 7], kv_cache=cache)
    snap = snapshot(cache)
    with pytest.raises(exc, match=match):
        model.forward(ids, kv_cache=cache, start_pos=start)
    assert_unchanged(cache, snap)


def test_cached_forward_rejects_a_non_cache() -> None:
    model = GPTModel(tiny_config())
    with pytest.raises(TypeError, match="kv_cache must be a KVCache"):
        model.forward([1], kv_cache={"k": 0})  # type: ignore[arg-type]

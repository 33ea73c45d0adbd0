"""Tensor views: strides, offset, transpose/T/permute share storage with their base.

lab01 teaches the rule `element idx lives at data[offset + Σ idx[d]·strides[d]]` and its
checks rely on the framework's views obeying it. These tests pin that rule down for
contiguous tensors, transposed and permuted views, and tensors with a non-zero offset.
"""

from __future__ import annotations

import numpy as np
import pytest

from framework.tensor import Tensor, as_tensor, tensor_fill_data, tensor_from, tensor_zeros

F32 = np.float32


def by_strides(t: Tensor, idx: tuple[int, ...]) -> float:
    """The element at `idx`, read straight from storage with the lab01 formula."""
    pos = t.offset + sum(i * s for i, s in zip(idx, t.strides, strict=True))
    return float(t.data[pos])


def base234() -> np.ndarray:
    return np.arange(24, dtype=F32).reshape(2, 3, 4) * 1.5 - 7


def views() -> list[tuple[str, Tensor, np.ndarray]]:
    """(name, tensor, the numpy array it must equal) for several kinds of tensor."""
    a = np.array([[0, 1, 2], [10, 11, 12]], dtype=F32)
    b = base234()
    storage = np.arange(20, dtype=F32).reshape(4, 5) * 10
    win = Tensor(tensor_from(storage).data, (2, 3), (5, 1), offset=6)
    return [
        ("contiguous 2-D", tensor_from(a), a),
        ("transpose()", tensor_from(a).transpose(), a.T),
        (".T", tensor_from(a).T, a.T),
        ("permute(2, 0, 1)", tensor_from(b).permute(2, 0, 1), b.transpose(2, 0, 1)),
        ("permute([1, 2, 0])", tensor_from(b).permute([1, 2, 0]), b.transpose(1, 2, 0)),
        ("window at offset 6", win, storage[1:3, 1:4]),
        # row-major inside a larger storage: numpy() is a slice of it, not all of it
        (
            "contiguous at offset 5",
            Tensor(win.data, (3, 2), offset=5),
            storage.ravel()[5:11].reshape(3, 2),
        ),
        ("empty (0, 3)", Tensor(win.data, (0, 3), offset=2), np.zeros((0, 3), F32)),
        ("window.T", win.T, storage[1:3, 1:4].T),
        ("permuted window", win.permute(1, 0), storage[1:3, 1:4].T),
    ]


@pytest.mark.parametrize(("name", "t", "want"), views(), ids=[v[0] for v in views()])
def test_every_element_obeys_the_stride_formula(name: str, t: Tensor, want: np.ndarray) -> None:
    assert t.shape == want.shape
    for idx in np.ndindex(*want.shape):
        assert by_strides(t, idx) == want[idx], f"{name} at {idx}"
    np.testing.assert_array_equal(t.numpy(), want)


def test_new_tensors_are_row_major_with_zero_offset() -> None:
    t = tensor_zeros((2, 3, 4))
    assert (t.strides, t.offset, t.is_contiguous()) == ((12, 4, 1), 0, True)
    assert tensor_from(np.ones((5,), F32)).strides == (1,)


def test_transpose_is_a_view_with_swapped_shape_and_strides() -> None:
    t = tensor_from(np.array([[0, 1, 2], [10, 11, 12]], dtype=F32))
    v = t.T
    assert (v.shape, v.strides, v.offset) == ((3, 2), (1, 3), 0)
    assert v.data is t.data
    assert not v.is_contiguous()
    assert (v.T.shape, v.T.strides) == (t.shape, t.strides)


def test_writing_through_a_view_changes_the_base() -> None:
    t = tensor_from(np.zeros((2, 3), F32))
    t.T.numpy()[2, 1] = 5.0  # view (2, 1) is base (1, 2)
    assert t.numpy()[1, 2] == 5.0
    p = tensor_from(base234())
    q = p.permute(2, 0, 1)
    q.data[q.offset + 3 * q.strides[0] + 1 * q.strides[1] + 0 * q.strides[2]] = 99.0
    assert p.numpy()[1, 0, 3] == 99.0


def test_permute_keeps_the_offset_and_maps_strides() -> None:
    storage = tensor_from(np.arange(30, dtype=F32))
    t = Tensor(storage.data, (2, 3, 4), (12, 4, 1), offset=5)
    p = t.permute(2, 0, 1)
    assert (p.shape, p.strides, p.offset) == ((4, 2, 3), (1, 12, 4), 5)
    np.testing.assert_array_equal(p.numpy(), t.numpy().transpose(2, 0, 1))


def test_numpy_of_a_contiguous_tensor_inside_larger_storage_writes_through() -> None:
    storage = tensor_from(np.arange(12, dtype=F32))
    t = Tensor(storage.data, (2, 3), offset=4)
    view = t.numpy()
    assert view.shape == (2, 3) and np.shares_memory(view, storage.data)
    view[1, 2] = -5.0
    assert storage.data[4 + 5] == -5.0
    assert storage.data[10] == 10.0  # the next element is not in the view


def test_offset_tensor_reads_from_the_offset() -> None:
    data = np.arange(10, dtype=F32)
    t = Tensor(data, (3,), (2,), offset=1)
    np.testing.assert_array_equal(t.numpy(), [1, 3, 5])
    t.numpy()[0] = -1
    assert data[1] == -1


@pytest.mark.parametrize(
    ("shape", "strides", "offset"),
    [((2, 3), (3, 1), 5), ((3, 2), (1, 3), 5), ((4,), (3,), 0)],
)
def test_storage_too_small_is_rejected(
    shape: tuple[int, ...], strides: tuple[int, ...], offset: int
) -> None:
    with pytest.raises(ValueError, match="reaches index"):
        Tensor(np.zeros(6, F32), shape, strides, offset)


def test_bad_views_are_rejected() -> None:
    t = tensor_from(base234())
    with pytest.raises(ValueError, match="permutation"):
        t.permute(0, 0, 1)
    with pytest.raises(ValueError, match="permutation"):
        t.permute(0, 1)
    with pytest.raises(ValueError, match="2-D"):
        t.transpose()
    with pytest.raises(ValueError, match="offset"):
        Tensor(np.zeros(6, F32), (2, 3), None, -1)
    with pytest.raises(ValueError, match="strides"):
        Tensor(np.zeros(6, F32), (2, 3), (1,))


def test_contiguous_and_copy_of_a_view_are_row_major_copies() -> None:
    a = np.array([[0, 1, 2], [10, 11, 12]], dtype=F32)
    v = tensor_from(a).T
    for c in (v.contiguous(), v.copy(), tensor_from(v)):
        assert (c.shape, c.strides, c.offset) == ((3, 2), (2, 1), 0)
        np.testing.assert_array_equal(c.data, a.T.reshape(-1))
        assert not np.shares_memory(c.data, v.data)


def test_reshape_of_a_view_uses_the_views_order() -> None:
    a = np.array([[0, 1, 2], [10, 11, 12]], dtype=F32)
    r = tensor_from(a).T.reshape(6)
    np.testing.assert_array_equal(r.numpy(), [0, 10, 1, 11, 2, 12])
    storage = np.arange(20, dtype=F32)
    win = Tensor(storage, (2, 3), (5, 1), offset=6)
    np.testing.assert_array_equal(win.reshape(3, 2).numpy(), [[6, 7], [8, 11], [12, 13]])


def test_fill_data_on_a_view_follows_the_views_order() -> None:
    t = tensor_zeros((2, 3))
    tensor_fill_data(t.T, [1, 2, 3, 4, 5, 6])  # view rows: (1, 2), (3, 4), (5, 6)
    np.testing.assert_array_equal(t.numpy(), [[1, 3, 5], [2, 4, 6]])


def test_as_tensor_shares_float32_arrays_and_converts_others() -> None:
    a = np.zeros((2, 3), F32)
    t = as_tensor(a)
    t.data[4] = 7.0
    assert a[1, 1] == 7.0
    nc = np.arange(6, dtype=F32).reshape(2, 3).T  # not C-contiguous
    np.testing.assert_array_equal(as_tensor(nc).numpy(), nc)
    assert as_tensor(nc).is_contiguous()

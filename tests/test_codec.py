"""The wire format carries plain data faithfully and refuses everything else."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework import tensor_from
from grader.codec import Build, CodecError, Handle, dumps, loads

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
plain = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(plain)
def test_plain_values_round_trip(value: object) -> None:
    assert loads(dumps(value)) == value


def test_types_are_kept_apart() -> None:
    back = loads(dumps([True, 1, 1.0, (1,), [1], b"1", "1"]))
    assert [type(v) for v in back] == [bool, int, float, tuple, list, bytes, str]


def test_nan_and_infinities_survive() -> None:
    back = loads(dumps([math.nan, math.inf, -math.inf]))
    assert math.isnan(back[0]) and back[1:] == [math.inf, -math.inf]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8, np.bool_])
def test_arrays_round_trip(dtype: type) -> None:
    arr = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    back = loads(dumps(arr))
    assert back.dtype == arr.dtype and back.shape == arr.shape
    assert np.array_equal(back, arr)


def test_views_keep_their_strides_and_shared_storage() -> None:
    t = tensor_from(np.arange(6, dtype=np.float32).reshape(2, 3))
    a, b = loads(dumps([t, t.T]))
    assert b.strides == (1, 3) and b.shape == (3, 2)
    assert a.data is b.data
    b.numpy()[2, 1] = 99.0
    assert a.numpy()[1, 2] == 99.0


def test_unsendable_objects_need_a_handle_maker() -> None:
    with pytest.raises(CodecError):
        dumps(object())
    made: list[object] = []

    def make(obj: object) -> Handle:
        made.append(obj)
        return Handle(len(made), type(obj).__name__)

    back = loads(dumps([object(), 3], make_handle=make))
    assert isinstance(back[0], Handle) and back[1] == 3


def test_subclass_overrides_are_bypassed() -> None:
    class Sneaky(float):
        def __float__(self) -> float:
            return 42.0

    made: list[object] = []
    back = loads(dumps([Sneaky(-1.0)], make_handle=lambda o: made.append(o) or Handle(1, "x")))
    assert back == [-1.0] and type(back[0]) is float


def test_object_arrays_are_refused() -> None:
    frame = dumps(np.arange(3))
    forged = frame.replace(b'"<i8"', b'"|O8"').replace(b'"<i8"', b'"|O8"')
    with pytest.raises(CodecError):
        loads(forged)


@pytest.mark.parametrize(
    "frame",
    [
        b"",
        b"\x05\x00\x00\x00{bad}",
        struct.pack("<I", 2) + b"{}" + struct.pack("<I", 0),
        struct.pack("<I", 14) + b'{"$evil": [1]}' + struct.pack("<I", 0),
        struct.pack("<I", 12) + b'{"$nd": 0, }' + struct.pack("<I", 0),
        struct.pack("<I", 35) + b'{"$nd": 3, "dtype": "<f4", "shape":[]}' + struct.pack("<I", 0),
    ],
)
def test_malformed_frames_raise_codec_error(frame: bytes) -> None:
    with pytest.raises(CodecError):
        loads(frame)


def test_build_is_only_decoded_with_a_builder() -> None:
    frame = dumps(Build("framework.attention:create_causal_mask", (2,)))
    with pytest.raises(CodecError):
        loads(frame)
    built = loads(frame, build=lambda target, args, kw, attrs: (target, args))
    assert built == ("framework.attention:create_causal_mask", [2])


def test_the_same_tensor_object_arrives_as_one_object() -> None:
    t = tensor_from(np.arange(6, dtype=np.float32).reshape(2, 3))
    frame = dumps([(t, 1), (t, 2), t.T])
    assert frame.count(b'"$same"') == 1  # encoded once, then referenced
    a, b, c = loads(frame)
    assert a[0] is b[0] and c is not a[0] and c.data is a[0].data
    assert c.shape == (3, 2) and np.array_equal(a[0].numpy(), t.numpy())


def test_seeded_generators_are_built_by_the_receiver() -> None:
    from grader.codec import Seeded

    back = loads(dumps([Seeded((801, 5)), Seeded((3,))]))
    assert all(isinstance(g, np.random.Generator) for g in back)
    assert np.array_equal(back[0].random(4), np.random.default_rng([801, 5]).random(4))
    assert back[1].integers(0, 10**9) == np.random.default_rng([3]).integers(0, 10**9)
    assert repr(Seeded((801, 5))) == "default_rng([801, 5])"
    for bad in ((), (-1,), (1.5,), (2**128,), tuple(range(9)), (True,)):
        with pytest.raises(CodecError, match="seed"):
            dumps(Seeded(bad))  # type: ignore[arg-type]


def test_plain_items_of_a_sequence_keep_their_exact_type_and_value() -> None:
    """Items of exact builtin types are sent as they are; bools and subclasses are not."""

    class Loud(int):
        def __index__(self) -> int:
            return 99

    back = loads(dumps((True, 1, 2.5, "s", None, Loud(3), [False, 0])))
    assert back == (True, 1, 2.5, "s", None, 3, [False, 0])
    assert [type(v) for v in back] == [bool, int, float, str, type(None), int, list]
    assert type(back[6][0]) is bool

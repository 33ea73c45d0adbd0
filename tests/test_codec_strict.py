"""The decoder refuses every malformed or oversized reply with a CodecError, and only that.

A reply comes from a process that runs student code, so it can be anything. Whatever it
is, decoding must end quickly with a value or a `CodecError`: never a `KeyError`,
`TypeError` or `ValueError` from inside the grader, never gigabytes of memory.
"""

from __future__ import annotations

import json
import math
import struct
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework import tensor_from
from grader.codec import Budget, CodecError, Handle, Seeded, dumps, loads
from grader.codec import decode as codec  # the decoder's module: its clock


def frame(doc: object, blobs: list[bytes] = ()) -> bytes:  # type: ignore[assignment]
    raw = json.dumps(doc).encode()
    parts = [struct.pack("<I", len(raw)), raw, struct.pack("<I", len(blobs))]
    for b in blobs:
        parts += [struct.pack("<Q", len(b)), b]
    return b"".join(parts)


def decodes_or_refuses(data: bytes) -> None:
    try:
        loads(data)
    except CodecError:
        pass


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)
tags = st.sampled_from(
    ["$t", "$d", "$bytes", "$nd", "$tensor", "$h", "$new", "$rng", "$seed", "$same", "x"]
)


@st.composite
def tagged(draw: st.DrawFn) -> object:
    """Documents that look like the codec's own: a tag and fields of the wrong kinds."""
    fields = draw(
        st.dictionaries(
            st.sampled_from(["dtype", "shape", "strides", "offset", "n", "type", "text", "args"]),
            json_values,
            max_size=4,
        )
    )
    return {draw(tags): draw(json_values), **fields}


@given(json_values | tagged(), st.lists(st.binary(max_size=64), max_size=3))
def test_random_documents_decode_or_refuse(doc: object, blobs: list[bytes]) -> None:
    decodes_or_refuses(frame(doc, blobs))


values = st.recursive(
    st.none() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner),
    max_leaves=10,
)


@given(values, st.data())
def test_mutated_frames_decode_or_refuse(value: object, data: st.DataObject) -> None:
    t = tensor_from(np.ones((2, 3), np.float32)).T
    good = bytearray(dumps([value, np.arange(6, dtype=np.float32), t, t, Seeded((801, 7))]))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(good) - 1))
        good[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(good)))
    decodes_or_refuses(bytes(good[:cut]) if data.draw(st.booleans()) else bytes(good))


def test_missing_fields_are_codec_errors() -> None:
    blob = np.zeros(4, np.float32).tobytes()
    for doc in (
        {"$tensor": 0, "shape": [4], "strides": [1]},  # no offset
        {"$nd": 0, "shape": [4]},  # no dtype
        {"$nd": 0, "dtype": "<f4"},  # no shape
        {"$tensor": 0, "shape": [4], "strides": [1], "offset": "0"},
        {"$h": "1"},
        {"$d": [[[], 1]]},  # a list as a key
        {"$rng": [1, 2]},
        {"$seed": []},
        {"$seed": [1, -2]},
        {"$seed": [2**130]},
        {"$seed": list(range(9))},
        {"$seed": [True]},
        {"$seed": 5},
        {"$seed": [1], "x": 1},
        {"$same": 0},  # no Tensor before it
        {"$same": "0"},
        [{"$tensor": 0, "n": 4, "shape": [4], "strides": [1], "offset": 0}, {"$same": 1}],
        [{"$tensor": 0, "n": 4, "shape": [4], "strides": [1], "offset": 0}, {"$same": True}],
    ):
        with pytest.raises(CodecError):
            loads(frame(doc, [blob]))


def test_huge_integers_are_refused_quickly() -> None:
    start = time.monotonic()
    with pytest.raises(CodecError):
        loads(frame(None)[:0] + struct.pack("<I", 5000) + b"9" * 5000 + struct.pack("<I", 0))
    with pytest.raises(CodecError, match="digits"):
        loads(frame(10**1000))
    assert time.monotonic() - start < 5  # a guard against a hang, not a speed test


def test_a_zero_stride_view_cannot_claim_gigabytes() -> None:
    doc = {"$tensor": 0, "n": 1, "shape": [2**15, 2**14], "strides": [0, 0], "offset": 0}
    with pytest.raises(CodecError, match="elements"):
        loads(frame(doc, [np.zeros(1, np.float32).tobytes()]))


def test_one_blob_referenced_many_times_counts_every_time() -> None:
    n = 1 << 20
    one = {"$nd": 0, "dtype": "<f4", "shape": [n]}
    blob = np.zeros(n, np.float32).tobytes()
    assert loads(frame([one] * 8, [blob]))[7].shape == (n,)
    with pytest.raises(CodecError, match="elements"):
        loads(frame([one] * 40, [blob]))  # 40 Mi elements > the 32 Mi budget


def test_colliding_dict_keys_are_bounded() -> None:
    p = 2**61 - 1  # hash(k * p) == 0 for every k: every insertion collides
    doc = {"$d": [[k * p, 0] for k in range(5000)]}
    start = time.monotonic()
    with pytest.raises(CodecError, match="entries"):
        loads(frame(doc))
    assert time.monotonic() - start < 5  # a guard against a hang, not a speed test


def test_lone_surrogates_become_printable() -> None:
    text = loads(frame("bad \ud800 name"))
    assert text == "bad \\ud800 name"
    text.encode("utf-8")  # would raise UnicodeEncodeError before the fix
    h = loads(frame({"$h": 1, "type": "x\udcffy", "text": ""}))
    assert isinstance(h, Handle) and h.type_name == "x\\udcffy"


def test_budget_is_configurable() -> None:
    with pytest.raises(CodecError, match="items"):
        loads(dumps(list(range(100))), budget=Budget(items=10))
    assert loads(dumps(list(range(100)))) == list(range(100))


def test_generators_cross_with_their_exact_state() -> None:
    g = np.random.default_rng(7)
    g.random(3)
    g.integers(0, 10)  # leaves a buffered uint32: has_uint32 = 1
    back = loads(dumps(g))
    assert isinstance(back, np.random.Generator) and back is not g
    assert np.array_equal(back.random(5), g.random(5))
    assert back.integers(0, 1000) == g.integers(0, 1000)


def test_only_pcg64_generators_are_sent() -> None:
    with pytest.raises(CodecError, match="PCG64"):
        dumps(np.random.Generator(np.random.MT19937(1)))
    with pytest.raises(CodecError):
        loads(frame({"$rng": [2**130, 1, 0, 0]}))


def test_a_tensor_referenced_many_times_counts_every_time() -> None:
    n = 1 << 20
    first = {"$tensor": 0, "n": n, "shape": [n], "strides": [1], "offset": 0}
    blob = np.zeros(n, np.float32).tobytes()
    back = loads(frame([first] + [{"$same": 0}] * 6, [blob]))
    assert all(t is back[0] for t in back)
    with pytest.raises(CodecError, match="elements"):
        loads(frame([first] + [{"$same": 0}] * 40, [blob]))  # 41 Mi elements > 32 Mi


class FakeClock:
    """The codec's `time`: each `monotonic()` reading is `step` seconds after the last."""

    def __init__(self, step: float) -> None:
        self.now, self.step, self.reads = 0.0, step, 0

    def monotonic(self) -> float:
        now = self.now
        self.now += self.step
        self.reads += 1
        return now


def fake_clock(monkeypatch: pytest.MonkeyPatch, step: float) -> FakeClock:
    clock = FakeClock(step)
    monkeypatch.setattr(codec, "time", clock)  # the decoder's only clock: time.monotonic()
    return clock


# Long runs of generators (each costs ~10 µs): the decoder must look at its clock between them.
GENERATOR_DOCS = {
    "seeds": [{"$seed": [1, i]} for i in range(12_000)],
    "states": [{"$rng": [i, 1, 0, 0]} for i in range(12_000)],
    "dict of seeds": {"$d": [[i, {"$seed": [2, i]}] for i in range(2000)]},
}


@pytest.mark.parametrize("doc", GENERATOR_DOCS.values(), ids=list(GENERATOR_DOCS))
def test_the_time_budget_ends_a_decode_at_the_first_check_past_it(
    monkeypatch: pytest.MonkeyPatch, doc: object
) -> None:
    data = frame(doc)
    clock = fake_clock(monkeypatch, 0.0)  # time stands still: the whole decode runs
    loads(data, budget=Budget(seconds=1.0))
    full = clock.reads  # the start reading and every check of a whole decode
    assert full >= 4, "the decoder checks its clock only at the start or the end"
    for late in range(1, full):
        clock = fake_clock(monkeypatch, 1.0)  # reading n says n s: the deadline is late - 0.5
        with pytest.raises(CodecError, match="longer than"):
            loads(data, budget=Budget(seconds=late - 0.5))
        # stopped at reading `late`, the first past the deadline (mid-decode while late < full - 1)
        assert clock.reads == late + 1
    clock = fake_clock(monkeypatch, 1.0)
    loads(data, budget=Budget(seconds=full - 1))  # the last check sees the deadline itself: fine
    assert clock.reads == full


def test_many_generators_decode_exactly() -> None:
    n, unbounded = 10_000, Budget(seconds=math.inf)  # speed: bench/codec_decode.py
    seeded = loads(frame([{"$seed": [1, i]} for i in range(n)]), budget=unbounded)
    assert len(seeded) == n
    for i, g in enumerate(seeded):
        assert g.bit_generator.state == np.random.default_rng([1, i]).bit_generator.state, i
    states = loads(frame([{"$rng": [i, 1, 0, 0]} for i in range(n)]), budget=unbounded)
    assert [g.bit_generator.state for g in states] == [
        {"bit_generator": "PCG64", "state": {"state": i, "inc": 1}, "has_uint32": 0, "uinteger": 0}
        for i in range(n)
    ]

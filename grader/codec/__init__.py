"""The wire format between the grader and a sandbox child: plain data only, never pickle.

A message is a JSON document plus binary blobs for array storage. What can cross:
None, bool, int, float (NaN and ±inf included), str, bytes, list, tuple, dict, numeric
numpy arrays and scalars, `framework.Tensor` (its whole storage, shape, strides and offset,
so a transposed view arrives as a view; the same Tensor object twice in one message
arrives as one object), `numpy.random.Generator` over PCG64 (its exact state, so both sides
draw the same stream), `Seeded` (a generator the receiver builds as
``np.random.default_rng(entropy)``: a few integers instead of a 128-bit state, for sweeps
of thousands of seeded calls), and `Handle` (a reference to an object that stays in the
child). Anything else is turned into a handle by the child's encoder (see
``dumps(..., make_handle=...)``).

The decoder is the trust boundary: it accepts only the tags of `grader.codec.decode`, only
numeric dtypes, and builds nothing but plain values, numpy arrays, Tensors, Generators and
Handles. Every reply is decoded within a `Budget` (elements, items, dict size, string
length, integer digits, time); anything malformed or over budget is a `CodecError`, never
another exception.

The parts, one idea each: `values` (what crosses besides plain data: `Handle`, `Build`,
`Seeded`, generator states, `CodecError`), `budget` (what decoding one message may cost),
`frame` (the byte layout: u32 json length, json bytes, u32 blob count, then per blob u64
length + bytes), `encode` (`dumps`) and `decode` (`loads`). This package is their public
face; it adds nothing of its own. What it does not do: framing on a socket (see
`grader.sandbox.protocol`) or judging a value (`grader.compare`).

Example:
    >>> frame = dumps({"a": (1, 2.5)})
    >>> loads(frame)
    {'a': (1, 2.5)}
"""

from __future__ import annotations

from grader.codec.budget import DEFAULT_BUDGET, Budget
from grader.codec.decode import loads
from grader.codec.encode import dumps
from grader.codec.frame import MAX_FRAME
from grader.codec.values import Build, CodecError, Handle, Seeded

__all__ = [
    "DEFAULT_BUDGET",
    "MAX_FRAME",
    "Budget",
    "Build",
    "CodecError",
    "Handle",
    "Seeded",
    "dumps",
    "loads",
]

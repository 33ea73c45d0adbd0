"""What crosses the wire besides plain data: handles, build requests, seeds and generators.

`Handle` names an object that stays in the sandbox child; `Build` asks the child to make a
`framework` object; `Seeded` sends a generator as its seed, and a PCG64
`numpy.random.Generator` travels as its exact state (`generator_state`, `generator`).
`CodecError` is the one error of the codec, and `ALLOWED_KINDS` and `MAX_DEPTH` are the
limits both directions share. What this module does not do: turn these into bytes
(`grader.codec.encode`) or back (`grader.codec.decode`). Sending a generator's state rather
than pickling it follows numpy's own ``bit_generator.state`` dictionary.

Example:
    >>> from grader.codec import dumps, loads
    >>> g = loads(dumps(np.random.default_rng(7)))
    >>> g.random() == np.random.default_rng(7).random()
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.errors import GraderError

__all__ = [
    "ALLOWED_KINDS",
    "MAX_DEPTH",
    "MAX_ENTROPY",
    "MAX_REPEAT",
    "Build",
    "CodecError",
    "Handle",
    "Seeded",
    "entropy",
    "generator",
    "generator_state",
]

ALLOWED_KINDS = frozenset("biuf")  # numpy dtype kinds: bool, signed, unsigned, float
MAX_DEPTH = 64  # nesting of one value, and dimensions of one array
MAX_ENTROPY = 8  # integers of one `Seeded` (SeedSequence hashes each: bounded work)
MAX_REPEAT = 1_000_000  # calls of one seeded sweep (`Session.map_seeded`)
_PCG64_MAX = 2**128


class CodecError(GraderError, ValueError):
    """A message that is not valid plain data (malformed, too large or of a forbidden type)."""


@dataclass(frozen=True)
class Handle:
    """An object that lives in the sandbox child; `type_name` and `text` describe it.

    `gen` is the generation of the child that holds it: a handle is only valid in that
    child (a replaced child's objects are gone).
    """

    id: int
    type_name: str
    text: str = ""
    gen: int = 0

    def __repr__(self) -> str:
        return f"<{self.type_name} object in the sandbox>"


@dataclass(frozen=True)
class Build:
    """Ask the child to construct `framework` object `target` (``"module:Name"``).

    Only the grader sends it; the child refuses targets outside the `framework` package.
    `attrs` are set on the new object after construction.
    """

    target: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] | None = None
    attrs: dict[str, Any] | None = None


@dataclass(frozen=True)
class Seeded:
    """A generator sent as its seed: the receiver decodes ``np.random.default_rng(entropy)``.

    The stream is exactly that of ``np.random.default_rng(list(entropy))`` on either side.
    `entropy` is 1 to `MAX_ENTROPY` integers in [0, 2**128); anything else is a `CodecError`.

    Example:
        >>> from grader.codec import dumps, loads
        >>> g = loads(dumps(Seeded((801, 3))))
        >>> g.random() == np.random.default_rng([801, 3]).random()
        True
    """

    entropy: tuple[int, ...]

    def __repr__(self) -> str:
        return f"default_rng({list(self.entropy)})"


def entropy(x: Any) -> list[int]:
    """The entropy of a `Seeded`, validated (CodecError otherwise)."""
    if (
        not isinstance(x, list | tuple)
        or not 1 <= len(x) <= MAX_ENTROPY
        or not all(type(v) is int and 0 <= v < _PCG64_MAX for v in x)
    ):
        raise CodecError(f"a seed is 1 to {MAX_ENTROPY} integers in [0, 2**128)")
    return list(x)


def generator(state: Any) -> np.random.Generator:
    """A PCG64 `Generator` in exactly the state that was sent (nothing else is accepted)."""
    if not isinstance(state, list) or len(state) != 4 or not all(type(v) is int for v in state):
        raise CodecError("bad generator state")
    s, inc, has_uint32, uinteger = state
    if not (0 <= s < _PCG64_MAX and 0 <= inc < _PCG64_MAX and has_uint32 in (0, 1)):
        raise CodecError("bad generator state")
    if not 0 <= uinteger < 2**32:
        raise CodecError("bad generator state")
    bg = np.random.PCG64()
    bg.state = {
        "bit_generator": "PCG64",
        "state": {"state": s, "inc": inc},
        "has_uint32": has_uint32,
        "uinteger": uinteger,
    }
    return np.random.Generator(bg)


def generator_state(g: np.random.Generator) -> list[int]:
    """The state of a PCG64 generator as four integers (CodecError for another kind)."""
    st = g.bit_generator.state
    if st.get("bit_generator") != "PCG64":
        raise CodecError(f"only PCG64 generators can be sent, not {st.get('bit_generator')}")
    inner = st["state"]
    return [int(inner["state"]), int(inner["inc"]), int(st["has_uint32"]), int(st["uinteger"])]

"""Terminals as students have them: UTF-8 where possible, ASCII where not.

A Windows console on a legacy code page (cp1252, cp437), a pipe with
`PYTHONIOENCODING=cp1252`, or an old terminal cannot print every character the reports
use. `prepare(stream)` switches a console to UTF-8 where that is possible and otherwise
makes unencodable characters print as `?` instead of raising; `glyphs(stream)` gives the
report's symbols with ASCII fallbacks; `fits(stream, text)` says whether text survives.

Example:
    >>> import io
    >>> g = glyphs(io.TextIOWrapper(io.BytesIO(), encoding="cp1252"))
    >>> g.full, g.empty, g.ellipsis
    ('#', '-', '...')
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, TextIO, cast

__all__ = ["Glyphs", "asciify", "fits", "glyphs", "prepare"]


@dataclass(frozen=True)
class Glyphs:
    """Symbols for bars, arrows and elisions."""

    full: str
    empty: str
    ellipsis: str
    arrow: str
    check: str
    cross: str


_UNICODE = Glyphs("█", "░", "…", "→", "✓", "✗")
_ASCII = Glyphs("#", "-", "...", "->", "+", "x")


def _encoding(stream: TextIO) -> str:
    return getattr(stream, "encoding", None) or "utf-8"


def fits(stream: TextIO, text: str) -> bool:
    """True when `stream`'s encoding can write `text` as it is."""
    try:
        text.encode(_encoding(stream))
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def glyphs(stream: TextIO) -> Glyphs:
    """The report's symbols, in ASCII when the stream cannot encode the Unicode ones."""
    return _UNICODE if fits(stream, "".join(vars(_UNICODE).values())) else _ASCII


def prepare(stream: TextIO | None = None) -> TextIO:
    """Make `stream` (default stdout) safe to print any report to, and return it.

    A console whose encoding cannot write Chinese is switched to UTF-8 when Python can do
    that (Windows 10+ consoles, a reconfigurable text stream) unless the user chose the
    encoding with PYTHONIOENCODING; otherwise unencodable characters become '?'.
    """
    stream = stream or sys.stdout
    if fits(stream, "中文…→") or not hasattr(stream, "reconfigure"):
        return stream
    import os

    chosen = bool(os.environ.get("PYTHONIOENCODING"))
    reconfigure = cast(Any, stream).reconfigure  # io.TextIOWrapper's
    try:
        if not chosen and stream.isatty():
            reconfigure(encoding="utf-8")
        else:
            reconfigure(errors="replace")
    except (ValueError, OSError):  # a stream that cannot change any more
        pass
    return stream


_FALLBACK = str.maketrans(
    {
        "…": "...",
        "→": "->",
        "←": "<-",
        "≈": "~=",
        "≤": "<=",
        "≥": ">=",
        "≠": "!=",
        "±": "+/-",
        "·": "*",
        "×": "x",
        "√": "sqrt",
        "ᵀ": "^T",
        "—": "-",
        "–": "-",
        "“": '"',
        "”": '"',
        "‘": "'",
        "’": "'",
        "█": "#",
        "░": "-",
        "✓": "+",
        "✗": "x",
    }
)


def asciify(text: str) -> str:
    """Common symbols spelled in ASCII (for streams that cannot encode them)."""
    return text.translate(_FALLBACK)

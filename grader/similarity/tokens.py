"""A student.py as a stream of normalised tokens: what the code does, not how it is named.

`normalise` runs Python's own `tokenize` over the text and keeps one token per keyword,
operator and statement boundary (``NEWLINE``, ``INDENT``, ``DEDENT``); every identifier
becomes ``V``, every number ``N``, every string (an f-string included) ``S``. Comments,
blank lines, line breaks inside brackets and docstrings (any statement that is only a
string) are dropped. So renaming variables, rewording comments and reformatting change
nothing, while a changed expression or statement does. `layout` marks the tokens of
functions shorter than a number of tokens (small helpers everyone writes alike) and says
which top-level definition each token belongs to (so that fingerprints need not span two,
and reordering functions changes nothing).

What it does not do: resolve names, treat attributes or builtins apart from variables, or
undo reordered statements (a reordered *function* is found anyway: fingerprints do not care
where they sit). Text that does not tokenize is taken up to the first error; text that does
not parse has no short functions. The idea is MOSS's (Aiken, Stanford): compare token
kinds, not text; `copydetect` (PyPI) normalises Python the same way, through Pygments.

Example:
    >>> [t.kind for t in normalise("total = x + 1  # add one\\n")]
    ['V', '=', 'V', '+', 'N', 'NEWLINE']
"""

from __future__ import annotations

import ast
import bisect
import io
import keyword
import tokenize
from dataclasses import dataclass

__all__ = ["Layout", "Token", "layout", "normalise"]

_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ERRORTOKEN}
_STATEMENT_START = {None, "NEWLINE", "INDENT", "DEDENT"}
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)
_LAYOUT = {tokenize.NEWLINE: "NEWLINE", tokenize.INDENT: "INDENT", tokenize.DEDENT: "DEDENT"}


@dataclass(frozen=True, slots=True)
class Token:
    """One normalised token.

    Attributes:
        kind: ``V``, ``N``, ``S``, a keyword (``for``), an operator (``+=``) or
            ``NEWLINE``/``INDENT``/``DEDENT``.
        line: the line it starts on (1-based).
        start: offset of its first character in the text.
        end: offset just after its last character.
    """

    kind: str
    line: int
    start: int
    end: int


def _raw(text: str) -> list[tokenize.TokenInfo]:
    """Python's tokens of `text`, up to the first that does not tokenize."""
    found: list[tokenize.TokenInfo] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            found.append(tok)
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return found


def _kind(tok: tokenize.TokenInfo) -> str:
    if tok.type == tokenize.NAME:
        return tok.string if keyword.iskeyword(tok.string) else "V"
    if tok.type == tokenize.NUMBER:
        return "N"
    if tok.type == tokenize.STRING or tok.type == _FSTRING_START:
        return "S"
    return _LAYOUT.get(tok.type, tok.string)


def _statement_string(raw: list[tokenize.TokenInfo], i: int, previous: str | None) -> int:
    """How many raw tokens from `i` on make a statement that is only a string (a docstring:
    its strings and the NEWLINE after them); 0 when `raw[i]` does not start one."""
    if previous not in _STATEMENT_START:
        return 0
    j = i
    while j < len(raw) and raw[j].type in (tokenize.STRING, *_SKIP):
        j += 1
    if j < len(raw) and raw[j].type == tokenize.NEWLINE:
        return j + 1 - i
    return j - i if j == len(raw) or raw[j].type == tokenize.ENDMARKER else 0


def normalise(text: str) -> list[Token]:
    """The normalised tokens of `text` (see the module docstring)."""
    raw = _raw(text)
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)

    def offset(row: int, col: int) -> int:
        return min(starts[min(row, len(starts)) - 1] + col, len(text))

    out: list[Token] = []
    i, depth = 0, 0  # depth: inside how many f-strings (3.12 tokenizes their insides)
    while i < len(raw):
        tok = raw[i]
        if depth:
            depth += (tok.type == _FSTRING_START) - (tok.type == _FSTRING_END)
            i += 1
            continue
        if tok.type == tokenize.STRING:
            drop = _statement_string(raw, i, out[-1].kind if out else None)
            if drop:
                i += drop
                continue
        if tok.type == _FSTRING_START:
            depth = 1
        elif tok.type in _SKIP or tok.type == tokenize.ENDMARKER:
            i += 1
            continue
        if tok.type == tokenize.DEDENT and out:  # it closes the block it follows
            out.append(Token("DEDENT", out[-1].line, out[-1].end, out[-1].end))
        else:
            begin, end = offset(*tok.start), offset(*tok.end)
            out.append(Token(_kind(tok), tok.start[0], begin, max(begin, end)))
        i += 1
    return out


def _definitions(text: str) -> tuple[list[tuple[int, int]], list[int]]:
    """(first line, last line) of every function and method, and the first line of every
    top-level function or class, decorators included (both [] if `text` does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], []
    funcs = (ast.FunctionDef, ast.AsyncFunctionDef)
    spans = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree) if isinstance(n, funcs)]
    tops = [
        min([n.lineno, *(d.lineno for d in n.decorator_list)])
        for n in tree.body
        if isinstance(n, (*funcs, ast.ClassDef))
    ]
    return spans, sorted(tops)


@dataclass(frozen=True)
class Layout:
    """Where each token sits (both lists run parallel to the tokens).

    Attributes:
        short: whether it lies in a function (or method) of fewer than the minimum tokens,
            counted from ``def`` to its last line (decorators and docstrings do not count).
        part: the top-level function or class it belongs to, numbered from 1 (0: before the
            first); code between two definitions belongs to the one above it.
    """

    short: list[bool]
    part: list[int]


def layout(text: str, tokens: list[Token], min_tokens: int) -> Layout:
    """The `Layout` of `tokens`, the normalised tokens of `text`; a text that does not
    parse has no short functions and is all one part.

    Example:
        >>> text = "def one():\\n    return 1\\n"
        >>> layout(text, normalise(text), 20).short == [True] * 11
        True
    """
    lines = [t.line for t in tokens]
    spans, tops = _definitions(text)
    short = [False] * len(tokens)
    for first, last in spans:
        lo, hi = bisect.bisect_left(lines, first), bisect.bisect_right(lines, last)
        if hi - lo < min_tokens:
            short[lo:hi] = [True] * (hi - lo)
    return Layout(short, [bisect.bisect_right(tops, line) for line in lines])

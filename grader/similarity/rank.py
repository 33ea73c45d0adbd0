"""Pairs of submissions ranked by how much of one lab's code they share.

A `Document` is one submission's file for one lab: its normalised tokens
(`grader.similarity.tokens`) and its winnowed fingerprints (`grader.similarity.winnow`).
Before winnowing, three kinds of k-gram are set aside, so that they can never be a
fingerprint: every k-gram that also occurs in the lab's stub (what every student starts
from, `stub_hashes`), every k-gram that touches a function shorter than
`Settings.min_function` tokens (small helpers that everyone writes alike), and every
k-gram that runs from one top-level function or class into the next (it would change
when the functions are put in another order).

The score of a pair is the share of the smaller document's fingerprints that the other
also has: ``|A ∩ B| / max(min(|A|, |B|), floor)``, between 0 and 1. Containment rather
than Jaccard, so that copying one file and adding to it still scores high; the floor
(`Settings.floor`) keeps a file of three fingerprints from scoring 1 on three lucky
matches. A document with no fingerprint (the stub as handed out) scores 0 with anything.
Pairs are ranked by score, highest first; ties by lab, then by the order the submissions
were given in.

What it does not do: decide anything. A high score is a lead for a human to read the two
files, never a verdict (two students who followed the same hint can write alike).
The method is MOSS's (Schleimer, Wilkerson and Aiken, SIGMOD 2003).

Example:
    >>> s = Settings(k=3, w=2, min_function=0, floor=1)
    >>> a = fingerprint("a", "lab01", "x = y + 1\\nz = x * 2\\n", set(), s)
    >>> b = fingerprint("b", "lab01", "p = q + 1\\nr = p * 2\\n", set(), s)
    >>> rank_lab([a, b], s)[0].score
    1.0
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from grader.similarity.tokens import Token, layout, normalise
from grader.similarity.winnow import kgram_hashes, winnow

__all__ = [
    "Document",
    "Pair",
    "Settings",
    "fingerprint",
    "rank_lab",
    "score",
    "shared_spans",
    "stub_hashes",
]


@dataclass(frozen=True)
class Settings:
    """How documents are fingerprinted and scored."""

    k: int = 16  # tokens of a k-gram: shorter matches are never seen
    w: int = 8  # window of winnowing: any match of w + k - 1 tokens or more is seen
    min_function: int = 30  # functions of fewer tokens (from `def` on) count for nothing
    floor: int = 10  # the least denominator of a score, in fingerprints


@dataclass
class Document:
    """One submission's file for one lab, fingerprinted.

    Attributes:
        name: the submission's name.
        lab: the lab id (``lab04``).
        text: the file's text (line breaks made ``\\n``).
        tokens: its normalised tokens.
        prints: fingerprint hash → the token positions where its k-gram starts.
    """

    name: str
    lab: str
    text: str
    tokens: list[Token]
    prints: dict[int, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Pair:
    """Two documents of one lab and what they share.

    Attributes:
        a, b: the two submissions' names (`a` was given first).
        lab: the lab id.
        score: the share of fingerprints in common, 0..1 (see the module docstring).
        shared: how many fingerprints they have in common.
    """

    a: str
    b: str
    lab: str
    score: float
    shared: int


def stub_hashes(texts: Iterable[str], k: int) -> set[int]:
    """Every k-gram hash of the stub files' texts (short functions included)."""
    found: set[int] = set()
    for text in texts:
        found.update(kgram_hashes([t.kind for t in normalise(text)], k))
    return found


def fingerprint(name: str, lab: str, text: str, stub: set[int], settings: Settings) -> Document:
    """`text` as a `Document`, its stub k-grams, short functions and k-grams that span two
    top-level definitions set aside."""
    tokens = normalise(text)
    k = settings.k
    hashes: list[int | None] = list(kgram_hashes([t.kind for t in tokens], k))
    where = layout(text, tokens, settings.min_function)
    run = 0  # short tokens among the current k-gram's
    for i in range(len(tokens)):
        run += where.short[i] - (where.short[i - k] if i >= k else 0)
        start = i - k + 1
        if start < 0:
            continue
        if run or where.part[start] != where.part[i] or hashes[start] in stub:
            hashes[start] = None
    doc = Document(name, lab, text, tokens)
    for pos in winnow(hashes, settings.w):
        h = hashes[pos]
        if h is not None:
            doc.prints.setdefault(h, []).append(pos)
    return doc


def _spans(doc: Document, shared: Iterable[int], k: int) -> list[tuple[int, int]]:
    """The merged character ranges of `doc` that the k-grams of `shared` cover."""
    ranges = sorted(
        (doc.tokens[p].start, doc.tokens[p + k - 1].end) for h in shared for p in doc.prints[h]
    )
    merged: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def shared_spans(
    a: Document, b: Document, k: int
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The (start, end) character ranges of `a` and of `b` that their shared fingerprints
    cover (each sorted and merged): what a report highlights."""
    shared = a.prints.keys() & b.prints.keys()
    return _spans(a, shared, k), _spans(b, shared, k)


def score(a: Document, b: Document, settings: Settings) -> tuple[float, int]:
    """The pair's score (see the module docstring) and how many fingerprints it shares."""
    shared = len(a.prints.keys() & b.prints.keys())
    smaller = max(min(len(a.prints), len(b.prints)), settings.floor, 1)
    return min(1.0, shared / smaller), shared


def rank_lab(docs: Sequence[Document], settings: Settings) -> list[Pair]:
    """Every pair of `docs` (one lab's, in the order the submissions were given), highest
    score first."""
    pairs: list[tuple[float, int, int, Pair]] = []
    for (i, a), (j, b) in combinations(enumerate(docs), 2):
        value, shared = score(a, b, settings)
        pairs.append((-value, i, j, Pair(a.name, b.name, a.lab, value, shared)))
    pairs.sort(key=lambda p: p[:3])
    return [p[3] for p in pairs]

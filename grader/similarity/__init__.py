"""`minillm similarity`: which pairs of submissions share code, lab by lab, for a human to read.

Each lab's file of each submission becomes normalised tokens (`tokens`: identifiers,
comments, docstrings and layout do not count), then winnowed k-gram fingerprints
(`winnow`), with what the lab's stub holds and short functions set aside; pairs are ranked
by the share of fingerprints they have in common (`rank`), the class read as hostile data
(`intake`), the result shown as one HTML page, JSON or terminal lines (`report`).

What it does not do: run student code, compare across labs, compare with the internet or
with past years, or decide anything: a high score is a lead, never a verdict. The method
is MOSS's: Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for document
fingerprinting", SIGMOD 2003; `copydetect` on PyPI implements it too.

Example:
    >>> from grader.similarity import Settings, fingerprint, rank_lab
    >>> s = Settings(k=3, w=2, min_function=0, floor=1)
    >>> docs = [fingerprint(n, "lab01", t, set(), s) for n, t in [("a", "x = y + 1\\n"),
    ...                                                       ("b", "q = r + 1\\n")]]
    >>> rank_lab(docs, s)[0].score
    1.0
"""

from __future__ import annotations

from grader.similarity.intake import Comparison, compare_class
from grader.similarity.rank import Document, Pair, Settings, fingerprint, rank_lab
from grader.similarity.report import DISCLAIMER, ranked, render_report, text_lines

__all__ = [
    "DISCLAIMER",
    "Comparison",
    "Document",
    "Pair",
    "Settings",
    "compare_class",
    "fingerprint",
    "rank_lab",
    "ranked",
    "render_report",
    "text_lines",
]

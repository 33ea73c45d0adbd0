"""What every renderer of a grade needs: numbers, names and text made safe for a format.

Text a submission can choose (its name, an error, a message, what its code printed) goes
through `one_line` or `block` (`grader.explain.clean`) in every format: no terminal escape,
carriage return, NUL, other control character or bidi override stays raw, and only a block
keeps its line breaks, each line behind a prefix of the renderer's.
"""

from __future__ import annotations

import re

from grader.explain import clean
from grader.i18n import Text
from grader.results import LabResult, Status, TestResult

__all__ = [
    "block",
    "check_text",
    "fmt_points",
    "lab_label",
    "one_line",
    "test_label",
    "test_text",
    "xml_safe",
]

# XML 1.0 allows tab, newline, CR and these ranges; anything else cannot appear even escaped.
_XML_BAD = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def one_line(text: str, limit: int | None = None) -> str:
    """`text` escaped as one line (a submission's name, an error), at most `limit` chars."""
    return clean(text, limit=limit, one_line=True)


def block(text: str) -> str:
    """`text` escaped, its line breaks kept (a message, what the code printed)."""
    return clean(text, limit=None)


def fmt_points(x: float) -> str:
    """7 → "7", 7.5 → "7.5" (scores are sums of points, usually whole)."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def xml_safe(text: str) -> str:
    """`text` with every character XML 1.0 forbids (NUL, most controls, lone surrogates)
    written as a ``\\x..`` escape, so that any student output makes a well-formed file."""
    return _XML_BAD.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def lab_label(result: LabResult, lang: str) -> str:
    """``lab04 多头自注意力``."""
    return one_line(f"{result.lab} {result.title.pick(lang)}")


def test_label(test: TestResult, lang: str) -> str:
    """``[TEST 3] attention_scores: ...`` plus ``(hidden)`` for a hidden test."""
    hidden = (" （隐藏）" if lang == "zh" else " (hidden)") if test.hidden else ""
    return one_line(f"[TEST {test.number}] {test.title.pick(lang)}{hidden}")


def _pick(text: Text | None, lang: str) -> str:
    return text.pick(lang) if text is not None else ""


def check_text(name: Text, status: Status, message: Text | None, output: str, lang: str) -> str:
    """One check as plain lines: status and name, its message, what the code printed
    (each line behind ``|``), all escaped."""
    lines = [f"[{status.value}] {one_line(name.pick(lang))}"]
    if status is not Status.PASS:
        lines += ["    " + r for r in block(_pick(message, lang)).splitlines()]
        if output.strip():
            head = "你的代码打印了:" if lang == "zh" else "your code printed:"
            lines.append("    " + head)
            lines += ["    | " + r for r in block(output).rstrip("\n").splitlines()[:20]]
    return "\n".join(lines)


def test_text(test: TestResult, lang: str) -> str:
    """A test's outcome as plain text: its reason (not run) or each of its checks."""
    if not test.checks:
        return f"[{test.status.value}] {one_line(_pick(test.reason, lang))}".rstrip()
    return "\n".join(check_text(c.name, c.status, c.message, c.output, lang) for c in test.checks)

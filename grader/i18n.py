"""Bilingual text: the course speaks Chinese first and English second.

`Text` holds both renderings of one message; reports pick one at render time, so a result
can be rendered in either language after the run. `default_lang()` reads `MINILLM_LANG`,
then the locale; Chinese when nothing says otherwise.

Example:
    >>> tr("行和为 1", "rows sum to 1").pick("en")
    'rows sum to 1'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

__all__ = ["LANGS", "Lang", "Text", "as_text", "default_lang", "tr"]

Lang = Literal["zh", "en"]
LANGS: tuple[Lang, ...] = ("zh", "en")


@dataclass(frozen=True)
class Text:
    """One message in Chinese and English."""

    zh: str
    en: str

    def pick(self, lang: str) -> str:
        """The rendering for `lang` ("zh" or "en")."""
        return self.en if lang == "en" else self.zh

    def __add__(self, other: Text | str) -> Text:
        o = as_text(other)
        return Text(self.zh + o.zh, self.en + o.en)

    def __radd__(self, other: str) -> Text:
        return Text(other + self.zh, other + self.en)


def tr(zh: str, en: str) -> Text:
    """Shorthand for `Text(zh, en)`."""
    return Text(zh, en)


def as_text(x: Text | str | tuple[str, str]) -> Text:
    """A `Text` from a Text, a (zh, en) pair, or one string used for both languages."""
    if isinstance(x, Text):
        return x
    if isinstance(x, tuple) and len(x) == 2:
        return Text(str(x[0]), str(x[1]))
    if isinstance(x, str):
        return Text(x, x)
    raise TypeError(f"expected a Text, a (zh, en) tuple or a str, got {type(x).__name__}")


def default_lang(encoding: str | None = None) -> Lang:
    """`MINILLM_LANG` if set to zh/en, else the locale's language, else zh.

    With `encoding` (the output stream's), a locale-derived Chinese falls back to English
    when that encoding cannot write Chinese (a legacy Windows code page, say).
    """
    explicit = os.environ.get("MINILLM_LANG", "").lower()
    if explicit == "en":
        return "en"
    if explicit == "zh":
        return "zh"
    lang: Lang = "zh"
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            lang = "en" if value.lower().startswith("en") else "zh"
            break
    if lang == "zh" and encoding is not None:
        try:
            "中文".encode(encoding)
        except (UnicodeEncodeError, LookupError):
            return "en"
    return lang

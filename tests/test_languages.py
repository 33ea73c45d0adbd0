"""Every message exists in Chinese and English, and each language is the one it claims.

There is no separate catalogue file: messages are written where they are used, as
`tr(zh, en)`, `Text(zh, en)`, `(zh, en)` check names, or `zh_text if zh else en_text`. This
test reads the source of the grader and of every verify.py and checks each such pair: the
Chinese side has Chinese in it (or is a formula written the same way in both), the English
side has none, and neither is empty.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*(ROOT / "grader").rglob("*.py"), *(ROOT / "labs").glob("lab*/verify.py")])
CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")
ENGLISH = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}")  # three words: a sentence


def text_of(node: ast.expr) -> str | None:
    """The literal text of a str constant or f-string (placeholders as {})."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(text_of(v) or "{}" for v in node.values)  # type: ignore[arg-type]
    return None


def pairs(tree: ast.AST) -> list[tuple[int, str, str]]:
    found = []
    for node in ast.walk(tree):
        zh = en = None
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("tr", "Text"):
            if len(node.args) == 2:
                zh, en = text_of(node.args[0]), text_of(node.args[1])
        elif isinstance(node, ast.Tuple) and len(node.elts) == 2:
            zh, en = text_of(node.elts[0]), text_of(node.elts[1])
            if zh is not None and not CJK.search(zh):
                continue  # a plain pair of strings, not a (zh, en) message
        elif isinstance(node, ast.IfExp) and getattr(node.test, "id", "") == "zh":
            zh, en = text_of(node.body), text_of(node.orelse)
        if zh is not None and en is not None:
            found.append((node.lineno, zh, en))
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_message_is_in_both_languages(path: Path) -> None:
    problems = []
    for line, zh, en in pairs(ast.parse(path.read_text(encoding="utf-8"))):
        if zh == en == "":
            continue  # an empty Text to add to
        if not zh.strip() or not en.strip():
            problems.append(f"{line}: an empty side: {zh!r} / {en!r}")
        elif CJK.search(en):
            problems.append(f"{line}: Chinese in the English text: {en!r}")
        elif not CJK.search(zh) and ENGLISH.search(zh) and zh != en:
            problems.append(f"{line}: English words in the Chinese text: {zh!r}")
    assert not problems, "\n".join(problems)


def test_the_scan_sees_every_kind_of_pair() -> None:
    source = 'tr("中", "en")\nText("文", "x")\nt.check(("名", "name"), ok)\n"是" if zh else "yes"\n'
    assert len(pairs(ast.parse(source))) == 4
    bad = 'tr("not in chinese", "英文")\n'
    ((_, zh, en),) = pairs(ast.parse(bad))
    assert CJK.search(en) and ENGLISH.search(zh)

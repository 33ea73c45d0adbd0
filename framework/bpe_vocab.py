"""The BPE vocabulary: its id layout, its checks, its fingerprint and its file.

A byte-level BPE vocabulary is fully described by its merge list: ids 0-3 are PAD, UNK,
BOS, EOS; 4-259 the bytes (``id = byte + 4``); 260-263 the chat tags; merge k joins two
earlier ids into id ``264 + k``. This module checks such a list, computes the bytes of
every id, its readable text, a content hash, and reads and writes the vocabulary file.

The file is UTF-8 JSON meant to be read by people: a header (format, version, type,
vocab size, fingerprint, the special ids) and one merge per line,
``[id, first, second, "text"]``, where text shows the merged token (valid UTF-8 as itself,
other bytes as ``\\xNN``, ``\\n`` and ``\\\\`` escaped). `read_vocab` refuses anything that
is not exactly such a file: bad JSON, another format or a newer version, a merge whose
text does not match its ids, a wrong vocab size or fingerprint, or a vocabulary other
than the one a model expects. Each message names the file and the field.

What this module deliberately does not do: no encoding or decoding (`BPETokenizer`), no
compatibility with other vocabulary formats (HF ``tokenizer.json``, tiktoken).

Where the idea comes from: minbpe's ``.model``/``.vocab`` pair (a machine part and a
human part) merged into one file, and the C course's ``bpe_vocab.txt`` with its unchecked
loading turned into a strict one.

Example:
    >>> merges = check_merges([(101, 102), (264, 36)])
    >>> [show(b) for b in id_bytes(merges)[264:]]
    ['ab', 'ab ']
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from typing import Any

from framework.chat import CHAT_TAGS
from framework.tokenizer import NUM_SPECIAL, SPECIAL_TOKENS, _as_id

__all__ = [
    "FIRST_MERGE_ID",
    "TAG_BASE",
    "TAG_IDS",
    "check_merges",
    "fingerprint",
    "id_bytes",
    "read_vocab",
    "show",
    "write_vocab",
]

Pair = tuple[int, int]
TAG_BASE = NUM_SPECIAL + 256  # 260: the first chat tag
TAG_IDS = {tag: TAG_BASE + k for k, tag in enumerate(CHAT_TAGS)}
FIRST_MERGE_ID = TAG_BASE + len(CHAT_TAGS)  # 264
SPECIAL_IDS = {**{s: k for k, s in enumerate(SPECIAL_TOKENS)}, **TAG_IDS}
_FORMAT, _VERSION, _TYPE = "minillm-tokenizer", 1, "bpe"
_ROWS = "[id, first, second, text]: id joins first and second; in rank order"
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def check_merges(merges: Iterable[Any]) -> list[Pair]:
    """`merges` as a list of int pairs, each joining bytes or earlier merges.

    Raises:
        TypeError: if a merge is not a pair of ints.
        ValueError: if it uses a special id or an id not defined before it.
    """
    out: list[Pair] = []
    for k, pair in enumerate(merges):
        if isinstance(pair, str | bytes) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise TypeError(f"merges[{k}] must be a pair of ids, got {pair!r:.60}")
        a, b = (_as_id(x, f"merges[{k}]") for x in pair)
        new = FIRST_MERGE_ID + k
        for i in (a, b):
            if not NUM_SPECIAL <= i < new or TAG_BASE <= i < FIRST_MERGE_ID:
                raise ValueError(
                    f"merges[{k}] (id {new}) may join byte ids 4-259 and earlier merges "
                    f"264-{new - 1}, got {i}"
                )
        out.append((a, b))
    return out


def id_bytes(merges: list[Pair]) -> list[bytes]:
    """The bytes of every id: ``b""`` for 0-3, one byte for 4-259, a tag's text for
    260-263, and the two parts joined for each merge (from `check_merges`)."""
    table = [b""] * NUM_SPECIAL + [bytes((b,)) for b in range(256)]
    table += [t.encode() for t in CHAT_TAGS]
    for a, b in merges:
        table.append(table[a] + table[b])
    return table


def show(data: bytes) -> str:
    """Readable, unambiguous text of some bytes: valid UTF-8 as itself, the rest escaped.

    Example:
        >>> show("你\\n".encode()), show(b"\\xe4\\xbd"), show(b"a\\\\b")
        ('你\\\\n', '\\\\xe4\\\\xbd', 'a\\\\\\\\b')
    """
    out = []
    for ch in data.decode("utf-8", errors="surrogateescape"):
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that is not valid UTF-8 here
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        else:
            out.append(ch)
    return "".join(out)


def fingerprint(merges: list[Pair]) -> str:
    """``"sha256:<hex>"`` of the format version, the special tokens and the merges."""
    doc = [_FORMAT, _VERSION, list(SPECIAL_IDS.items()), [list(p) for p in merges]]
    blob = json.dumps(doc, separators=(",", ":"), ensure_ascii=True).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()


def write_vocab(path: str | os.PathLike[str], merges: list[Pair]) -> None:
    """Write the vocabulary file of `merges` (from `check_merges`) to `path`."""
    texts = [show(b) for b in id_bytes(merges)[FIRST_MERGE_ID:]]
    head = {
        "format": _FORMAT,
        "version": _VERSION,
        "type": _TYPE,
        "vocab_size": FIRST_MERGE_ID + len(merges),
        "fingerprint": fingerprint(merges),
        "specials": SPECIAL_IDS,
        "bytes": f"ids {NUM_SPECIAL}-{TAG_BASE - 1} are the bytes 0-255: id = byte + 4",
        "merge_rows": _ROWS,
    }
    lines = [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    rows = [
        json.dumps([FIRST_MERGE_ID + k, a, b, s], ensure_ascii=False)
        for k, ((a, b), s) in enumerate(zip(merges, texts, strict=True))
    ]
    body = ",\n".join(f"  {r}" for r in rows)
    text = "{\n" + "\n".join(lines) + '\n "merges": [\n' + body + ("\n" if rows else "") + " ]\n}\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _field(doc: dict[str, Any], key: str, want: Any, where: str) -> None:
    got = doc.get(key)
    if type(got) is not type(want) or got != want:
        raise ValueError(f"{where}: field {key!r} must be {want!r:.200}, got {got!r:.200}")


def _parse(raw: bytes, where: str) -> dict[str, Any]:
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{where} is not a UTF-8 JSON vocabulary file: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(doc).__name__}")
    _field(doc, "format", _FORMAT, where)
    version = doc.get("version")
    if type(version) is int and version > _VERSION:
        raise ValueError(f"{where}: version {version} is newer than this program reads (1)")
    fixed = {"version": _VERSION, "type": _TYPE, "specials": SPECIAL_IDS}
    for key, want in {**fixed, "merge_rows": _ROWS}.items():
        _field(doc, key, want, where)
    return doc


def read_vocab(path: str | os.PathLike[str], expected_fingerprint: str | None = None) -> list[Pair]:
    """The merges stored in a vocabulary file, after checking every field.

    Args:
        path: a file written by `write_vocab`.
        expected_fingerprint: if given (e.g. from a model checkpoint), the file's content
            must have this fingerprint.

    Raises:
        OSError: if the file cannot be read.
        ValueError: if it is not exactly such a file (see the module docstring).
    """
    where = repr(os.fspath(path))
    global _READ
    with open(path, "rb") as f:
        raw = f.read()
    if _READ is not None and _READ[0] == raw:
        merges, found = _READ[1], _READ[2]
    else:
        merges, found = _read_checked(raw, where)
        _READ = (raw, merges, found)
    if expected_fingerprint is not None and found != expected_fingerprint:
        raise ValueError(
            f"{where} is not the vocabulary this model was trained with: its fingerprint is "
            f"{found}, the model expects {expected_fingerprint}"
        )
    return list(merges)


# The bytes of the last file that passed every check, with its merges and fingerprint: the
# same content read again (each check of a lab loads the shipped vocabulary) skips them.
_READ: tuple[bytes, tuple[Pair, ...], str] | None = None


def _read_checked(raw: bytes, where: str) -> tuple[tuple[Pair, ...], str]:
    """The merges of a vocabulary file's bytes and their fingerprint, after every check."""
    doc = _parse(raw, where)
    rows = doc.get("merges")
    if not isinstance(rows, list):
        raise ValueError(f"{where}: field 'merges' must be a list, got {rows!r:.60}")
    for k, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) == 4 and isinstance(row[3], str)):
            raise ValueError(f"{where}: merges[{k}] must be [id, first, second, text], got {row!r}")
        if row[0] != FIRST_MERGE_ID + k or type(row[0]) is not int:
            raise ValueError(
                f"{where}: merges[{k}] must make id {FIRST_MERGE_ID + k}, not {row[0]!r}"
            )
    try:
        merges = check_merges(row[1:3] for row in rows)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: {e}") from None
    for k, (row, data) in enumerate(zip(rows, id_bytes(merges)[FIRST_MERGE_ID:], strict=True)):
        if row[3] != show(data):
            raise ValueError(f"{where}: merges[{k}] text must be {show(data)!r}, got {row[3]!r}")
    _field(doc, "vocab_size", FIRST_MERGE_ID + len(merges), where)
    found = fingerprint(merges)
    _field(doc, "fingerprint", found, where)
    return tuple(merges), found

"""framework.tokenizer: the byte vocabulary, its errors, its file format, and round trips.

The properties at the end are checked with hypothesis against an independent oracle (the
rule written out in a few lines here), so a bug shared by encode and decode still shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework.tokenizer import (
    BOS_ID,
    BYTE_VOCAB_SIZE,
    EOS_ID,
    NUM_SPECIAL,
    PAD_ID,
    UNK_ID,
    ByteTokenizer,
    Tokenizer,
)

TOK = ByteTokenizer()


def oracle_decode(ids: list[int]) -> str:
    """decode, written independently: PAD/BOS/EOS vanish, UNK is U+FFFD, byte = id - 4."""
    out = bytearray()
    for i in ids:
        if i == 1:
            out += "\ufffd".encode()
        elif i >= 4:
            out.append(i - 4)
    return out.decode("utf-8", errors="replace")


# -- the vocabulary ----------------------------------------------------------------------
def test_ids_and_vocab_size() -> None:
    assert (PAD_ID, UNK_ID, BOS_ID, EOS_ID, NUM_SPECIAL) == (0, 1, 2, 3, 4)
    assert (TOK.pad_id, TOK.unk_id, TOK.bos_id, TOK.eos_id) == (0, 1, 2, 3)
    assert TOK.vocab_size == BYTE_VOCAB_SIZE == 260
    assert repr(TOK) == "ByteTokenizer(vocab_size=260)"


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("", []),
        ("Hi", [76, 109]),
        ("\x00", [4]),
        ("你", [232, 193, 164]),
        ("🙂", [244, 163, 157, 134]),
        ("é", [199, 173]),
    ],
)
def test_encode_known(text: str, ids: list[int]) -> None:
    assert TOK.encode(text) == ids
    assert TOK.encode(text, add_bos=True) == [2, *ids]
    assert TOK.encode(text, add_eos=True) == [*ids, 3]
    assert TOK.encode(text, add_bos=True, add_eos=True) == [2, *ids, 3]


def test_encode_rejects_non_str_and_lone_surrogates() -> None:
    with pytest.raises(TypeError, match="text must be a str"):
        TOK.encode(b"Hi")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lone surrogate"):
        TOK.encode("a\ud800b")


def test_decode_specials_and_invalid_utf8() -> None:
    assert TOK.decode([2, 76, 0, 109, 3]) == "Hi"
    assert TOK.decode([76, 1, 109]) == "H\ufffdi"
    assert TOK.decode([4]) == "\x00"  # id 4 is the NUL byte, not a special
    assert TOK.decode([232, 193]) == "\ufffd"  # two of the three bytes of 你
    assert TOK.decode([259]) == "\ufffd"  # 0xff never occurs in UTF-8
    assert TOK.decode([]) == ""
    assert TOK.decode(np.array([76, 109], dtype=np.int64)) == "Hi"
    assert TOK.decode(x for x in (76, 109)) == "Hi"


@pytest.mark.parametrize("bad", [-1, 260, 10_000])
def test_decode_refuses_out_of_range_ids(bad: int) -> None:
    with pytest.raises(ValueError, match=rf"ids\[1\] must be in \[0, 260\), got {bad}"):
        TOK.decode([76, bad])


@pytest.mark.parametrize("bad", [1.0, True, "a", None])
def test_decode_refuses_non_int_ids(bad: object) -> None:
    with pytest.raises(TypeError, match=r"ids\[0\] must be an int"):
        TOK.decode([bad])  # type: ignore[list-item]


@pytest.mark.parametrize("bad", ["Hi", b"Hi", 76])
def test_decode_refuses_a_non_sequence(bad: object) -> None:
    with pytest.raises(TypeError, match="ids must be a sequence of ints"):
        TOK.decode(bad)  # type: ignore[arg-type]


def test_is_special_and_token_bytes() -> None:
    assert [TOK.is_special(i) for i in range(6)] == [True] * 4 + [False] * 2
    assert not TOK.is_special(259)
    with pytest.raises(ValueError, match="token_id must be in"):
        TOK.is_special(260)
    assert [TOK.token_bytes(i) for i in (0, 1, 2, 3, 4, 69, 259)] == [
        b"",
        "\ufffd".encode(),
        b"",
        b"",
        b"\x00",
        b"A",
        b"\xff",
    ]


@pytest.mark.parametrize(
    ("token_id", "shown"),
    [
        (0, "<PAD>"),
        (1, "<UNK>"),
        (2, "<BOS>"),
        (3, "<EOS>"),
        (4, "\\x00"),
        (14, "\\n"),
        (13, "\\t"),
        (17, "\\r"),
        (36, " "),
        (69, "A"),
        (96, "\\\\"),
        (130, "~"),
        (131, "\\x7f"),
        (259, "\\xff"),
    ],
)
def test_token_str(token_id: int, shown: str) -> None:
    assert TOK.token_str(token_id) == shown


def test_token_str_is_unambiguous() -> None:
    shown = [TOK.token_str(i) for i in range(TOK.vocab_size)]
    assert len(set(shown)) == TOK.vocab_size
    assert all(s.isprintable() for s in shown)


# -- files -------------------------------------------------------------------------------
def test_save_load_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "byte.json"
    TOK.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == "minillm-tokenizer" and doc["type"] == "byte"
    assert doc["tokens"][:5] == ["<PAD>", "<UNK>", "<BOS>", "<EOS>", "\\x00"]
    loaded = ByteTokenizer.load(str(path))
    assert isinstance(loaded, ByteTokenizer)
    assert loaded.encode("你好 🙂") == TOK.encode("你好 🙂")


def _saved(tmp_path: Path) -> dict[str, object]:
    TOK.save(tmp_path / "ok.json")
    doc: dict[str, object] = json.loads((tmp_path / "ok.json").read_text(encoding="utf-8"))
    return doc


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "gpt2"}, "field 'format' must be 'minillm-tokenizer', got 'gpt2'"),
        ({"version": 2}, "field 'version' must be 1, got 2"),
        ({"version": "1"}, "field 'version' must be 1, got '1'"),
        ({"version": True}, "field 'version' must be 1, got True"),
        ({"type": "bpe"}, "field 'type' must be 'byte', got 'bpe'"),
        ({"vocab_size": 261}, "field 'vocab_size' must be 260, got 261"),
        ({"tokens": None}, "'tokens' must list 260 strings, got None"),
        ({"tokens": ["<PAD>"]}, "'tokens' must list 260 strings, got 1 entries"),
    ],
)
def test_load_refuses_wrong_fields(tmp_path: Path, change: dict[str, object], message: str) -> None:
    doc = _saved(tmp_path) | change
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ByteTokenizer.load(path)


def test_load_names_the_first_wrong_token(tmp_path: Path) -> None:
    doc = _saved(tmp_path)
    tokens = doc["tokens"]
    assert isinstance(tokens, list)
    tokens[69] = "B"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match="token 69 must be 'A', got 'B'"):
        ByteTokenizer.load(path)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "not a UTF-8 JSON tokenizer file"),
        (b"<PAD>\n<UNK>\n", "not a UTF-8 JSON tokenizer file"),
        (b"\xff\xfe{}", "not a UTF-8 JSON tokenizer file"),
        (b"[1, 2]", "expected a JSON object, got list"),
        (b"{}", "field 'format' must be"),
    ],
)
def test_load_refuses_malformed_files(tmp_path: Path, raw: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(raw)
    with pytest.raises(ValueError, match=message):
        ByteTokenizer.load(path)


def test_load_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        ByteTokenizer.load(tmp_path / "nope.json")


# -- the shared surface ------------------------------------------------------------------
class _TwoPieces(Tokenizer):
    """A toy subclass: id 4 is "ab", id 5 is "c". Only the abstract parts are written."""

    @property
    def vocab_size(self) -> int:
        return 6

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        return self._wrap([4 if c == "a" else 5 for c in text.replace("ab", "a")], add_bos, add_eos)

    def _piece(self, token_id: int) -> bytes:
        return b"ab" if token_id == 4 else b"c"


def test_a_subclass_shares_decode_and_display() -> None:
    tok = _TwoPieces()
    assert tok.encode("abc", add_bos=True) == [2, 4, 5]
    assert tok.decode([2, 4, 5, 1, 3]) == "abc\ufffd"
    assert tok.token_str(4) == "ab" and tok.token_str(0) == "<PAD>"
    with pytest.raises(ValueError, match=r"must be in \[0, 6\), got 6"):
        tok.decode([6])


# -- properties --------------------------------------------------------------------------
@given(st.text())
def test_any_text_round_trips(text: str) -> None:
    ids = TOK.encode(text)
    assert ids == [b + 4 for b in text.encode("utf-8")]
    assert TOK.decode(ids) == text
    assert TOK.decode(TOK.encode(text, add_bos=True, add_eos=True)) == text


@given(st.lists(st.integers(0, BYTE_VOCAB_SIZE - 1)))
def test_decode_matches_the_oracle(ids: list[int]) -> None:
    assert TOK.decode(ids) == oracle_decode(ids)


@given(st.lists(st.integers(0, BYTE_VOCAB_SIZE - 1)))
def test_decode_then_encode_is_stable(ids: list[int]) -> None:
    text = TOK.decode(ids)
    assert TOK.decode(TOK.encode(text)) == text


def _outcome(decode: object, ids: object) -> tuple[str, str]:
    try:
        return "value", repr(decode(ids))  # type: ignore[operator]
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e)


_ANY_ID = st.one_of(
    st.integers(-3, BYTE_VOCAB_SIZE + 3),
    st.booleans(),
    st.integers(0, BYTE_VOCAB_SIZE - 1).map(np.int64),
    st.floats(0, 10),
)


@given(st.lists(_ANY_ID, max_size=12))
def test_the_fast_decode_of_a_list_is_the_general_one(ids: list[object]) -> None:
    """ByteTokenizer.decode looks a list of plain ints up in one pass: same text, and for
    a bool, a float or an id out of range the same error, as `Tokenizer.decode`."""
    general = _outcome(lambda x: Tokenizer.decode(TOK, x), ids)
    assert _outcome(TOK.decode, ids) == general
    assert _outcome(TOK.decode, tuple(ids)) == general

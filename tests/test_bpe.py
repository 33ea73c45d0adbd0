"""framework.bpe_train, bpe_tokenizer, bpe_vocab: BPE against a naive oracle, round trips, files.

The oracle below is the textbook loop written out in plain Python (count with a dict in
order of first appearance, merge left to right); the fast paths (numpy counting, the
incremental trainer, the heap encoder) must agree with it exactly, ties included.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework.bpe_encode import BytePairEncoder
from framework.bpe_tokenizer import FIRST_MERGE_ID, TAG_IDS, BPETokenizer
from framework.bpe_train import count_pairs, merge_pair, train_merges
from framework.bpe_vocab import show
from framework.chat import CHAT_TAGS
from framework.tokenizer import ByteTokenizer

TEXT = (
    "<|user|>\n你好！今天天气怎么样？\n<|end|>\n<|assistant|>\n今天天气很好，阳光明媚。\n<|end|>\n"
    "<|user|>\nhello, how are you?\n<|end|>\n<|assistant|>\nI am fine, thank you!\n<|end|>\n"
    "<|user|>\n1 + 1 = ?\n<|end|>\n<|assistant|>\n1 + 1 = 2。\n<|end|>\n"
) * 3


# -- the oracle ------------------------------------------------------------------------
def oracle_count(ids: list[int]) -> tuple[tuple[int, int], int] | None:
    counts: dict[tuple[int, int], int] = {}
    for pair in itertools.pairwise(ids):
        counts[pair] = counts.get(pair, 0) + 1  # dicts keep first-insertion order
    if not counts:
        return None
    best = max(counts.values())
    pair = next(p for p, c in counts.items() if c == best)
    return (pair, best) if best >= 2 else None


def oracle_merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def oracle_train(chunks: list[list[int]], n: int, first_id: int) -> list[tuple[int, int]]:
    """Count over all chunks (a pair never spans two), first appearance in chunk order."""
    merges: list[tuple[int, int]] = []
    for k in range(n):
        counts: dict[tuple[int, int], int] = {}
        for c in chunks:
            for pair in itertools.pairwise(c):
                counts[pair] = counts.get(pair, 0) + 1
        if not counts or max(counts.values()) < 2:
            break
        best = max(counts.values())
        pair = next(p for p, c in counts.items() if c == best)
        chunks = [oracle_merge(c, pair, first_id + k) for c in chunks]
        merges.append(pair)
    return merges


small_ids = st.lists(st.integers(0, 3), max_size=60)


# -- count_pairs / merge_pair ----------------------------------------------------------
@pytest.mark.parametrize(
    ("ids", "want"),
    [
        ([], None),
        ([5], None),
        ([5, 6], None),
        ([1, 2, 3], None),
        ([97, 98, 97, 98, 97, 98], ((97, 98), 3)),
        ([7, 7, 7], ((7, 7), 2)),  # overlapping occurrences count
        ([7, 7, 7, 7], ((7, 7), 3)),
        ([1, 2, 5, 3, 4, 1, 2, 3, 4], ((1, 2), 2)),  # tie: (1, 2) is seen first
        ([3, 4, 1, 2, 1, 2, 3, 4], ((3, 4), 2)),  # ... even if (1, 2) reaches 2 sooner
        ([9, 8, 1, 2, 9, 8, 1, 2], ((9, 8), 2)),  # ... and is not the smaller pair
    ],
)
def test_count_pairs(ids: list[int], want: object) -> None:
    assert count_pairs(ids) == want
    assert count_pairs(np.array(ids, dtype=np.int64)) == want
    assert count_pairs(tuple(ids)) == want


@pytest.mark.parametrize(
    ("ids", "pair", "want"),
    [
        ([], (1, 2), []),
        ([1], (1, 2), [1]),
        ([1, 2, 1, 2, 1], (1, 2), [9, 9, 1]),
        ([3, 1, 2], (1, 2), [3, 9]),
        ([7, 7, 7], (7, 7), [9, 7]),
        ([7, 7, 7, 7], (7, 7), [9, 9]),
        ([7, 7, 7, 7, 7, 1, 7, 7, 7], (7, 7), [9, 9, 7, 1, 9, 7]),
        ([2, 1], (1, 2), [2, 1]),
    ],
)
def test_merge_pair(ids: list[int], pair: tuple[int, int], want: list[int]) -> None:
    before = list(ids)
    assert merge_pair(ids, pair, 9) == want
    assert ids == before


@given(small_ids)
def test_count_pairs_matches_oracle(ids: list[int]) -> None:
    assert count_pairs(ids) == oracle_count(ids)


@given(small_ids, st.integers(0, 3), st.integers(0, 3))
def test_merge_pair_matches_oracle(ids: list[int], a: int, b: int) -> None:
    assert merge_pair(ids, (a, b), 4) == oracle_merge(ids, (a, b), 4)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: count_pairs("abc"), TypeError, "ids must be a sequence of ints"),
        (lambda: count_pairs([1.0, 2.0]), TypeError, "dtype float64"),
        (lambda: count_pairs([True, False]), TypeError, "dtype bool"),
        (lambda: count_pairs([1, -2]), ValueError, "non-negative"),
        (lambda: merge_pair([1, 2], (1,), 3), TypeError, "pair must be"),
        (lambda: merge_pair([1, 2], (1, 2.0), 3), TypeError, "two ints"),
        (lambda: merge_pair([1, 2], (1, 2), -1), ValueError, "new_id"),
        (lambda: train_merges([[1, 2]], -1, 5), ValueError, "num_merges must be >= 0"),
        (lambda: train_merges([[1, 2]], 1, 2), ValueError, "first_id must be above"),
        (lambda: train_merges([[1, 2]], 1.0, 5), TypeError, "num_merges must be an int"),
    ],
)
def test_bad_arguments(call: object, exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        call()  # type: ignore[operator]


# -- training --------------------------------------------------------------------------
@given(st.lists(small_ids, max_size=4), st.integers(0, 12))
def test_train_matches_oracle(chunks: list[list[int]], n: int) -> None:
    assert train_merges(chunks, n, 4) == oracle_train(chunks, n, 4)


def test_train_on_text_matches_oracle_and_stops_early() -> None:
    ids = list(ByteTokenizer().encode("ababab ababab cdcd ef ef 你好你好"))
    assert train_merges([ids], 50, 300) == oracle_train([ids], 50, 300)
    assert len(train_merges([ids], 50, 300)) < 50  # no pair occurs twice any more


def test_train_does_not_merge_across_tags() -> None:
    tok = BPETokenizer.train("ab<|end|>ab<|user|>ab", 5)
    assert tok.merges == [(101, 102)]  # 'b' '<' never meet: the tags cut the text
    tok = BPETokenizer.train("ab|>ab|>", 5)  # but plain text that looks like a tag merges
    assert tok.merges[0] == (101, 102)
    assert len(tok.merges) == 3


def split_at_tags(text: str) -> list[str]:
    return [p for p in re.split("(" + "|".join(map(re.escape, CHAT_TAGS)) + ")", text) if p]


def oracle_encode(tok: BPETokenizer, text: str) -> list[int]:
    """Replay every merge in training order over each piece between tags."""
    out: list[int] = []
    for piece in split_at_tags(text):
        if piece in TAG_IDS:
            out.append(TAG_IDS[piece])
            continue
        ids = [b + 4 for b in piece.encode()]
        for k, pair in enumerate(tok.merges):
            ids = oracle_merge(ids, pair, FIRST_MERGE_ID + k)
        out += ids
    return out


def test_tokenizer_train_equals_the_naive_loop_on_a_chat_corpus() -> None:
    tok = BPETokenizer.train(TEXT, 60)
    chunks = [[b + 4 for b in p.encode()] for p in split_at_tags(TEXT) if p not in TAG_IDS]
    assert tok.merges == oracle_train(chunks, 60, FIRST_MERGE_ID)
    assert tok.vocab_size == FIRST_MERGE_ID + 60


# -- encode / decode -------------------------------------------------------------------
def test_layout_and_special_ids() -> None:
    tok = BPETokenizer()
    assert (tok.pad_id, tok.unk_id, tok.bos_id, tok.eos_id) == (0, 1, 2, 3)
    assert tok.vocab_size == FIRST_MERGE_ID == 264
    assert [tok.token_id(t) for t in CHAT_TAGS] == [260, 261, 262, 263] == list(TAG_IDS.values())
    assert tok.token_id("<BOS>") == 2
    with pytest.raises(ValueError, match=re.escape("unknown special token '<|bot|>'")):
        tok.token_id("<|bot|>")
    assert tok.encode("Hi 你") == ByteTokenizer().encode("Hi 你")  # no merges: bytes + 4
    assert [tok.is_special(i) for i in (0, 3, 4, 259, 260, 263)] == [1, 1, 0, 0, 1, 1]
    assert tok.known_ids() == [2, 3, *range(4, 264)]
    assert repr(BPETokenizer([(4, 4)])) == "BPETokenizer(vocab_size=265, merges=1)"


def test_encode_maps_tags_and_decode_drops_them() -> None:
    tok = BPETokenizer.train(TEXT, 100)
    ids = tok.encode("<|user|>\n你好\n<|end|>", add_bos=True, add_eos=True)
    assert ids[:2] == [2, 260 + 1] and ids[-2:] == [263, 3]
    assert tok.decode(ids) == "\n你好\n"
    assert tok.decode(ids, keep_tags=True) == "<|user|>\n你好\n<|end|>"
    assert 263 not in tok.encode_ordinary("<|end|>")
    assert tok.decode(tok.encode_ordinary("<|end|>")) == "<|end|>"


def test_encode_replays_the_training_merges() -> None:
    tok = BPETokenizer.train(TEXT, 80)
    for text in (TEXT, "今天天气很好 hello how are you", "aaaaaaa", "<|user|><|end|>x", ""):
        assert tok.encode(text) == oracle_encode(tok, text)
    assert len(tok.encode(TEXT)) < len(TEXT.encode()) / 3  # the training text compresses


@given(st.text(alphabet="ab 你好<|>enduser\n", max_size=40))
def test_encode_matches_oracle_on_random_text(text: str) -> None:
    assert _TRAINED.encode(text) == oracle_encode(_TRAINED, text)


@given(st.text())
def test_any_text_round_trips(text: str) -> None:
    tok = _TRAINED
    try:
        ids = tok.encode(text)
    except ValueError:  # lone surrogates have no UTF-8 encoding
        assert any(0xD800 <= ord(c) <= 0xDFFF for c in text)
        return
    assert tok.encode(text) == ids  # deterministic
    assert all(0 <= i < tok.vocab_size for i in ids) and tok.unk_id not in ids
    assert tok.decode(ids, keep_tags=True) == text
    assert tok.decode(tok.encode_ordinary(text)) == text


@given(st.lists(st.sampled_from(["你", "好", "a", "b", " ", "<|user|>", "<|end|>", "\n"])))
def test_chat_like_text_round_trips(parts: list[str]) -> None:
    text = "".join(parts)
    ids = _TRAINED.encode(text)
    assert _TRAINED.decode(ids, keep_tags=True) == text
    assert _TRAINED.decode(ids) == "".join(p for p in parts if p not in TAG_IDS)


def test_decode_refuses_bad_ids() -> None:
    tok = BPETokenizer.train(TEXT, 10)
    with pytest.raises(ValueError, match=r"ids\[1\] must be in \[0, 274\), got 274"):
        tok.decode([5, 274])
    with pytest.raises(TypeError, match="ids must be a sequence"):
        tok.decode("abc", keep_tags=True)
    with pytest.raises(TypeError, match="text must be a str"):
        tok.encode(b"abc")  # type: ignore[arg-type]


def test_token_str_is_readable() -> None:
    tok = BPETokenizer.train("你好你好你好\n\n\n", 5)
    assert [tok.token_str(i) for i in range(264, tok.vocab_size)][:3] == [
        "\\xe4\\xbd",
        "你",
        "你\\xe5",
    ]
    assert show(b"a\\b\n\x00") == "a\\\\b\\n\\x00"
    assert [tok.token_str(i) for i in (0, 2, 260, 263, 36, 14)] == [
        "<PAD>", "<BOS>", "<|system|>", "<|end|>", " ", "\\n",
    ]  # fmt: skip


def test_bad_merge_lists_are_refused() -> None:
    with pytest.raises(ValueError, match=r"merges\[0\] \(id 264\) may join .* got 264"):
        BPETokenizer([(264, 4)])
    with pytest.raises(ValueError, match="got 261"):
        BPETokenizer([(4, 261)])
    with pytest.raises(ValueError, match="got 2"):
        BPETokenizer([(2, 4)])
    with pytest.raises(TypeError, match="pair of ids"):
        BPETokenizer([(4, 5, 6)])  # type: ignore[list-item]


# -- files -----------------------------------------------------------------------------
def test_save_load_round_trip_and_fingerprint(tmp_path: Path) -> None:
    tok = BPETokenizer.train(TEXT, 40)
    path = tmp_path / "vocab.json"
    tok.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["version"] == 1 and doc["vocab_size"] == 304 and len(doc["merges"]) == 40
    assert doc["fingerprint"] == tok.fingerprint()
    assert "今天" in path.read_text(encoding="utf-8") or "天" in path.read_text(encoding="utf-8")
    back = BPETokenizer.load(path, expected_fingerprint=tok.fingerprint())
    assert back == tok and back.fingerprint() == tok.fingerprint()
    assert hash(back) == hash(tok) and len({back, tok, BPETokenizer()}) == 2
    assert back.encode(TEXT) == tok.encode(TEXT)
    assert BPETokenizer.train(TEXT, 40).fingerprint() == tok.fingerprint()
    assert BPETokenizer.train(TEXT, 39).fingerprint() != tok.fingerprint()
    empty = tmp_path / "empty.json"
    BPETokenizer().save(empty)
    assert BPETokenizer.load(empty) == BPETokenizer()


def _edit(tmp_path: Path, change: object) -> Path:
    tok = BPETokenizer.train(TEXT, 5)
    path = tmp_path / "vocab.json"
    tok.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)  # type: ignore[operator]
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.update(format="other"), "field 'format' must be 'minillm-tokenizer'"),
        (lambda d: d.update(version=2), "version 2 is newer than this program reads"),
        (lambda d: d.update(version="1"), "field 'version' must be 1"),
        (lambda d: d.update(type="byte"), "field 'type' must be 'bpe'"),
        (lambda d: d["specials"].update({"<|end|>": 259}), "field 'specials'"),
        (lambda d: d.update(vocab_size=300), "field 'vocab_size' must be 269, got 300"),
        (lambda d: d["merges"][1].__setitem__(3, "xx"), r"merges\[1\] text must be"),
        (lambda d: d["merges"][0].__setitem__(1, 266), r"merges\[0\] \(id 264\) may join"),
        (lambda d: d["merges"][2].__setitem__(0, 264), r"merges\[2\] must make id 266, not 264"),
        (lambda d: d.update(merge_rows="[a, b]"), "field 'merge_rows' must be"),
        (lambda d: d["merges"].pop(), "field 'vocab_size' must be 268, got 269"),
        (lambda d: d["merges"].__setitem__(0, [264, 5, 6]), r"merges\[0\] must be \[id, first"),
        (lambda d: d.update(merges={}), "field 'merges' must be a list"),
        (lambda d: d.update(fingerprint="sha256:0"), "field 'fingerprint' must be"),
    ],
)
def test_load_refuses_a_changed_file(tmp_path: Path, change: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        BPETokenizer.load(_edit(tmp_path, change))


def test_load_refuses_garbage_and_another_vocabulary(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    path.write_bytes(b"\xff\xfe not json")
    with pytest.raises(ValueError, match="is not a UTF-8 JSON vocabulary file"):
        BPETokenizer.load(path)
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="expected a JSON object, got list"):
        BPETokenizer.load(path)
    BPETokenizer.train(TEXT, 5).save(path)
    with pytest.raises(ValueError, match="not the vocabulary this model was trained with"):
        BPETokenizer.load(path, expected_fingerprint=BPETokenizer().fingerprint())
    with pytest.raises(OSError):
        BPETokenizer.load(tmp_path / "missing.json")


def test_load_reads_a_rewritten_file_afresh(tmp_path: Path) -> None:
    """Reading the same unchanged file again skips its checks; any rewrite is read anew,
    even one of the same size, and a rewrite that breaks the file is refused."""
    path = tmp_path / "v.json"
    first = BPETokenizer([(108, 109)])
    first.save(path)
    size = path.stat().st_size
    assert BPETokenizer.load(path) == first
    BPETokenizer.load(path)._merges.append((4, 5))  # a caller's copy, not the stored one
    assert BPETokenizer.load(path) == first
    other = BPETokenizer([(109, 108)])
    other.save(path)
    assert path.stat().st_size == size  # same size, same path: still read afresh
    assert BPETokenizer.load(path) == other
    broken = path.read_text(encoding="utf-8").replace(
        '"fingerprint": "sha256:', '"fingerprint": "sha256:0'
    )
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(ValueError, match="field 'fingerprint' must be"):
        BPETokenizer.load(path)


_TRAINED = BPETokenizer.train(TEXT, 120)


def test_decode_accepts_numpy_ids_and_shows_unk() -> None:
    tok = BPETokenizer([(108, 109)])
    ids = np.array([2, 264, 1, 260], dtype=np.int32)
    assert tok.decode(ids) == tok.decode(list(ids)) == "hi\ufffd"
    assert tok.decode(ids, keep_tags=True) == "hi\ufffd<|system|>"


@given(st.text(alphabet="ab 你好.\n!", max_size=200))
def test_cutting_at_safe_boundaries_changes_nothing(text: str) -> None:
    enc = BytePairEncoder(_TRAINED.merges, FIRST_MERGE_ID)
    data = text.encode()
    assert enc.encode(data) == enc.merge([b + 4 for b in data])
    assert enc.encode(data) == enc.encode(data)  # the second time from the cache


def test_the_piece_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("framework.bpe_encode._CACHE_LIMIT", 3)
    enc = BytePairEncoder([(101, 102)], FIRST_MERGE_ID)  # only "ab" joins: cut elsewhere
    assert enc.encode(b"ab ab xab yab") == [264, 36, 264, 36, 124, 264, 36, 125, 264]
    assert len(enc.cache) <= 3

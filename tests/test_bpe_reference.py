"""The fast BPE (framework.bpe_train, bpe_encode) against slow, obvious references.

`reference_train` recounts every pair of every chunk after every merge and picks the
winner by the documented rule: the highest count, ties to the pair whose first
occurrence comes first in the current sequence (the chunks one after another, no pair
across two). `reference_encode` applies the merges by rank: while some adjacent pair is
a merge, replace every occurrence of the lowest-ranked one, left to right. The fast code
(counts of distinct chunks, a pair index with a lazy heap, safe cuts and caches) must give
exactly the same merges and ids, on random corpora with Chinese, emoji, raw bytes, runs
such as "aaaa" (overlapping pairs), many repeated chunks, and chat tags.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from framework.bpe_encode import BytePairEncoder
from framework.bpe_tokenizer import FIRST_MERGE_ID, TAG_IDS, BPETokenizer
from framework.bpe_train import train_merges
from framework.chat import CHAT_TAGS
from framework.shipped import VOCAB_FILE

Pair = tuple[int, int]


# -- the references ----------------------------------------------------------------------
def reference_merge(ids: list[int], pair: Pair, new_id: int) -> list[int]:
    """Every occurrence of `pair` replaced by `new_id`, scanning left to right."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def reference_train(chunks: list[list[int]], num_merges: int, first_id: int) -> list[Pair]:
    """Recount everything each step; the winner by (highest count, earliest first position)."""
    seqs = [list(c) for c in chunks]
    merges: list[Pair] = []
    for k in range(num_merges):
        count: dict[Pair, int] = {}
        first: dict[Pair, int] = {}  # position in the current sequence, chunks concatenated
        offset = 0
        for seq in seqs:
            for i in range(len(seq) - 1):
                pair = (seq[i], seq[i + 1])
                count[pair] = count.get(pair, 0) + 1
                first.setdefault(pair, offset + i)
            offset += len(seq)
        if not count or max(count.values()) < 2:
            break
        best = min(count, key=lambda p: (-count[p], first[p]))
        seqs = [reference_merge(s, best, first_id + k) for s in seqs]
        merges.append(best)
    return merges


def reference_encode_bytes(merges: list[Pair], data: bytes) -> list[int]:
    """Byte ids (byte + 4), then the lowest-ranked merge present, again and again."""
    rank = {pair: k for k, pair in enumerate(merges)}
    ids = [b + 4 for b in data]
    while True:
        present = [rank[p] for p in itertools.pairwise(ids) if p in rank]
        if not present:
            return ids
        k = min(present)
        ids = reference_merge(ids, merges[k], FIRST_MERGE_ID + k)


def split_at_tags(text: str) -> list[str]:
    return [p for p in re.split("(" + "|".join(map(re.escape, CHAT_TAGS)) + ")", text) if p]


def reference_encode(merges: list[Pair], text: str) -> list[int]:
    """A tag is its special id; the text between tags is encoded on its own."""
    out: list[int] = []
    for piece in split_at_tags(text):
        out += (
            [TAG_IDS[piece]] if piece in TAG_IDS else reference_encode_bytes(merges, piece.encode())
        )
    return out


def byte_chunks(texts: list[str]) -> list[list[int]]:
    return [[b + 4 for b in t.encode()] for t in texts]


# -- strategies ----------------------------------------------------------------------------
ALPHABET = "ab 你好天\n😀🙂é."
units = st.text(alphabet=ALPHABET, min_size=1, max_size=4)
repeated = st.builds(lambda u, n: u * n, units, st.integers(1, 8))  # "abab...", "aaaa"
texts = st.one_of(st.text(alphabet=ALPHABET, max_size=30), repeated)
# a small pool drawn from many times: identical chunks abound, as in a chat corpus
corpora = st.lists(texts, min_size=1, max_size=4).flatmap(
    lambda pool: st.lists(st.sampled_from(pool), max_size=12)
)
raw = st.lists(st.binary(max_size=24), max_size=6)  # any bytes, invalid UTF-8 included
tagged = st.lists(st.one_of(texts, st.sampled_from(CHAT_TAGS)), max_size=10).map("".join)


# -- training ------------------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(corpora, st.integers(0, 30))
def test_train_equals_the_reference_on_text(texts: list[str], n: int) -> None:
    chunks = byte_chunks(texts)
    assert train_merges(chunks, n, FIRST_MERGE_ID) == reference_train(chunks, n, FIRST_MERGE_ID)


@settings(max_examples=80, deadline=None)
@given(raw, st.integers(0, 20))
def test_train_equals_the_reference_on_raw_bytes(blobs: list[bytes], n: int) -> None:
    chunks = [[b + 4 for b in blob] for blob in blobs]
    assert train_merges(chunks, n, 300) == reference_train(chunks, n, 300)


@settings(max_examples=60, deadline=None)
@given(tagged, st.integers(0, 25))
def test_tokenizer_train_cuts_at_tags_and_equals_the_reference(text: str, n: int) -> None:
    merges = BPETokenizer.train(text, n).merges
    chunks = byte_chunks([p for p in split_at_tags(text) if p not in TAG_IDS])
    assert merges == reference_train(chunks, n, FIRST_MERGE_ID)


@pytest.mark.parametrize(
    ("chunks", "want"),
    [
        ([[7, 7, 7, 7]], [(7, 7)]),  # a a a a: (a, a) counts 3, merges to X X, then stop
        ([[7, 7, 7], [7, 7, 7]], [(7, 7), (9, 7)]),  # X a twice
        ([[1, 2, 3], [3, 4], [1, 2, 3], [3, 4]], [(1, 2), (9, 3), (3, 4)]),
        ([[3, 4, 1, 2], [1, 2, 3, 4]], [(3, 4), (1, 2)]),  # tie: (3, 4) occurs first
        ([[1, 2], [3, 4], [3, 4], [1, 2]], [(1, 2), (3, 4)]),  # repeats do not move a first
        ([[1, 2, 1, 2, 1, 2]], [(1, 2), (9, 9)]),  # a b a b a b: X X X
        ([[], [5], []], []),
    ],
)
def test_edge_cases(chunks: list[list[int]], want: list[Pair]) -> None:
    got = train_merges(chunks, 10, 9)
    assert got == reference_train(chunks, 10, 9)
    assert got[: len(want)] == want


def test_numpy_chunks_and_numpy_ids_train_alike() -> None:
    chunks = byte_chunks(["aaaa bbb", "你好你好", "aaaa bbb"])
    want = reference_train(chunks, 12, FIRST_MERGE_ID)
    arrays: list[Any] = [np.array(c) for c in chunks]
    assert train_merges(arrays, 12, FIRST_MERGE_ID) == want
    scalars: list[Any] = [[np.int32(x) for x in c] for c in chunks]
    assert train_merges(scalars, 12, FIRST_MERGE_ID) == want
    assert train_merges(tuple(tuple(c) for c in chunks), 12, FIRST_MERGE_ID) == want


@pytest.mark.parametrize(
    ("chunks", "exc", "match"),
    [
        ([[1, 2], [3, -1]], ValueError, r"chunks\[1\] must hold non-negative ids, got -1"),
        ([[1, 2], [1.0, 2.0]], TypeError, r"chunks\[1\] must be a flat sequence of ints"),
        ([[1, 2], [[1, 2]]], TypeError, r"chunks\[1\] must be a flat sequence of ints"),
        ([[1, 2], "ab"], TypeError, r"chunks\[1\] must be a sequence of ints, got str"),
        ([[1, 2], [True, False]], TypeError, r"chunks\[1\] must be a flat sequence of ints"),
    ],
)
def test_bad_chunks_are_named(chunks: list[object], exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        train_merges(chunks, 3, 300)  # type: ignore[arg-type]


def test_a_chat_corpus_trains_as_the_reference() -> None:
    text = "".join(
        f"<|user|>\n{a} + {b} 等于几？\n<|end|>\n<|assistant|>\n{a} + {b} = {a + b}\n<|end|>\n"
        for a in range(12)
        for b in range(0, 12, 3)
    )
    chunks = byte_chunks([p for p in split_at_tags(text) if p not in TAG_IDS])
    assert BPETokenizer.train(text, 40).merges == reference_train(chunks, 40, FIRST_MERGE_ID)


# -- encoding ------------------------------------------------------------------------------
_CORPUS = "".join(["ab" * 5, "你好天天你好", "😀🙂😀🙂", "aaaa aaa", "<|user|>ab 你好<|end|>"] * 3)
_TRAINED = BPETokenizer.train(_CORPUS, 40)
_SHIPPED = BPETokenizer.load(VOCAB_FILE)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.one_of(texts, st.sampled_from(CHAT_TAGS), st.text(max_size=8)), max_size=12))
def test_encode_equals_the_reference(parts: list[str]) -> None:
    text = "".join(parts)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return  # a lone surrogate has no UTF-8 encoding (test_bpe checks the error)
    for tok in (_TRAINED, _SHIPPED):
        want = reference_encode(tok.merges, text)
        assert tok.encode(text) == want
        assert tok.encode(text) == want  # again, now from the caches
        assert tok.decode(want, keep_tags=True) == text


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=600))
def test_bytes_encode_as_the_reference_short_and_long(data: bytes) -> None:
    enc = BytePairEncoder(_SHIPPED.merges, FIRST_MERGE_ID)  # fresh: empty caches
    want = reference_encode_bytes(_SHIPPED.merges, data)
    assert enc.encode(data) == want
    assert enc.encode(data) == want


def test_long_inputs_use_the_cached_pieces_alike() -> None:
    text = "你好, how are you? 今天天气很好。 aaaa 😀😀 " * 60  # > 1 KB: not cached whole
    want = reference_encode(_SHIPPED.merges, text)
    assert BPETokenizer(_SHIPPED.merges).encode(text) == want
    tok = BPETokenizer(_SHIPPED.merges)
    assert tok.encode(text[:40]) == reference_encode(_SHIPPED.merges, text[:40])
    assert tok.encode(text) == want  # after short inputs filled the cache


def test_a_returned_list_is_the_callers_own() -> None:
    enc = BytePairEncoder(_SHIPPED.merges, FIRST_MERGE_ID)
    first = enc.encode(b"hello hello")
    first.append(-1)  # must not reach the cache
    assert enc.encode(b"hello hello") == reference_encode_bytes(_SHIPPED.merges, b"hello hello")

"""framework.corpus and framework.phrasebook: deterministic, split, held out, in chat format."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework import scope
from framework.chat import format_chat_prompt
from framework.corpus import (
    KINDS,
    Corpus,
    Dialogue,
    arithmetic_answer,
    build_corpus,
    encode_dialogues,
)
from framework.evaluate import chat_sets
from framework.phrasebook import ask_sum, number_en, number_zh
from framework.tokenizer import BOS_ID, ByteTokenizer

ANSWER = re.compile(r"^(\d+) ([+-]) (\d+) = (\d+)$")


@cache
def corpus() -> Corpus:
    return build_corpus(seed=0, num_dialogues=4000)


def test_same_seed_same_corpus_other_seed_other_corpus() -> None:
    a, b = build_corpus(seed=3, num_dialogues=300), build_corpus(seed=3, num_dialogues=300)
    assert a == b
    assert build_corpus(seed=4, num_dialogues=300).train != a.train


def test_every_dialogue_is_in_chat_format() -> None:
    tag = re.compile(r"<\|(system|user|assistant|end)\|>")
    for d in corpus().train[:500] + corpus().val:
        text = d.text
        assert text.startswith(("<|user|>\n", "<|system|>\n")) and text.endswith("<|end|>\n")
        tags = [m.group(1) for m in tag.finditer(text)]
        assert tags[-4:] == ["user", "end", "assistant", "end"]
        for role, content in d.messages:
            assert f"<|{role}|>\n{content}\n<|end|>\n" in text and "<|" not in content


def test_text_is_the_chat_training_layout() -> None:
    d = Dialogue((("system", "S"), ("user", "U"), ("assistant", "A")), "greeting")
    assert d.text == "<|system|>\nS\n<|end|>\n<|user|>\nU\n<|end|>\n<|assistant|>\nA\n<|end|>\n"
    prompt = format_chat_prompt(d.messages[:-1])
    assert d.text.startswith(prompt)  # what a chat feeds the model is what it trained on


def test_arithmetic_answers_are_canonical_and_right() -> None:
    kinds = {d.kind for d in corpus().train}
    assert kinds == set(KINDS)
    two_digit = 0
    for d in corpus().train:
        if d.kind == "arithmetic":
            m = ANSWER.match(d.messages[-1][1])
            assert m, d.messages[-1][1]
            a, op, b, c = int(m[1]), m[2], int(m[3]), int(m[4])
            assert c == (a + b if op == "+" else a - b) and 0 <= a <= 99 and 0 <= b <= 99
            assert c >= 0
            two_digit += min(a, b) >= 10
    assert two_digit > 1000  # most sums have two two-digit operands


def test_unseen_sums_never_occur_in_train_or_val() -> None:
    c = corpus()
    assert len(c.heldout_sums) == round(0.05 * (100 * 100 + 100 * 101 // 2))
    answers = {m[1] for d in c.train + c.val for m in d.messages if m[0] == "assistant"}
    for a, op, b in c.heldout_sums:
        assert arithmetic_answer(a, op, b) not in answers
    assert len(c.unseen) == 200 and sorted(q.lang for q in c.unseen) == sorted(["en", "zh"] * 100)
    assert all(min(q.a, q.b) >= 10 for q in c.unseen)  # two two-digit operands
    small = {s for s in c.heldout_sums if max(s[0], s[2]) <= 20}
    assert {(q.a, q.op, q.b) for q in c.unseen_small} == small
    assert len(c.unseen_small) == 2 * len(small)  # each asked in both languages
    for q in c.unseen + c.unseen_small + c.heldout:
        assert (q.a, q.op, q.b) in c.heldout_sums or q in c.heldout
        assert q.answer == arithmetic_answer(q.a, q.op, q.b)


def test_heldout_questions_use_a_phrasing_never_used_for_their_sum() -> None:
    c = corpus()
    assert len(c.heldout) == 200 and {q.lang for q in c.heldout} == {"en", "zh"}
    asked = {d.messages[-2][1] for d in c.train + c.val}
    answers = {d.messages[-1][1] for d in c.train + c.val}
    for q in c.heldout:
        assert (q.a, q.op, q.b) not in c.heldout_sums and max(q.a, q.b) <= 20
        assert q.prompt not in asked
    assert sum(q.answer in answers for q in c.heldout) > 120  # most sums are known, even here


def test_train_and_val_texts_are_disjoint() -> None:
    c = corpus()
    train, val = {d.text for d in c.train}, {d.text for d in c.val}
    assert val and not train & val
    assert len(c.train) + len(c.val) == 4000


def test_both_languages_symbols_and_words_occur() -> None:
    asks = [d.messages[-2][1] for d in corpus().train if d.kind == "arithmetic"]
    for pattern in (r"\d\+\d", r" plus ", r"加", r"minus|take away|subtract", r"减",
                    r"^[零一二三四五六七八九十两]+[加减]", r"(?i)^what"):  # fmt: skip
        assert any(re.search(pattern, q) for q in asks), pattern


def test_number_words() -> None:
    assert [number_en(n) for n in (0, 13, 20, 45)] == ["zero", "thirteen", "twenty", "forty-five"]
    assert [number_zh(n) for n in (0, 7, 10, 15, 20, 99)] == ["零", "七", "十", "十五", "二十",
                                                            "九十九"]  # fmt: skip
    with pytest.raises(ValueError):
        number_en(100)


def test_ask_sum_mentions_both_operands() -> None:
    rng = np.random.default_rng(1)
    for _ in range(200):
        q = ask_sum(rng, 17, "+", 3, "en")
        assert ("17" in q or "seventeen" in q.lower()) and ("3" in q or "three" in q.lower())


def test_encode_dialogues_starts_each_with_bos() -> None:
    d = Dialogue((("user", "hi"), ("assistant", "Hello!")), "greeting")
    ids = encode_dialogues([d, d], ByteTokenizer())
    n = len(d.text.encode())
    assert ids.dtype == np.int32 and len(ids) == 2 * (n + 1)
    assert ids[0] == ids[n + 1] == BOS_ID
    assert ByteTokenizer().decode(ids.tolist()) == d.text * 2


def _general_stream(dialogues: list[Dialogue], tok: ByteTokenizer) -> list[int]:
    return [i for d in dialogues for i in [tok.bos_id, *tok.encode(d.text)]]


_CONTENT = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)  # no surrogates


@given(st.lists(st.tuples(_CONTENT, _CONTENT), max_size=8))
def test_the_byte_stream_is_bos_then_each_texts_encoding(pairs: list[tuple[str, str]]) -> None:
    """encode_dialogues' one pass for the byte tokenizer gives what encoding each
    dialogue in turn gives (any text: CJK, NUL, newlines, empty contents, no dialogue)."""
    dialogues = [Dialogue((("user", q), ("assistant", a)), "fact") for q, a in pairs]
    ids = encode_dialogues(dialogues, ByteTokenizer())
    assert ids.dtype == np.int32
    assert ids.tolist() == _general_stream(dialogues, ByteTokenizer())


def test_a_byte_tokenizer_subclass_encodes_its_own_way() -> None:
    class Upper(ByteTokenizer):
        def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
            return super().encode(text.upper(), add_bos, add_eos)

    d = Dialogue((("user", "hi"), ("assistant", "yo")), "greeting")
    assert ByteTokenizer().decode(encode_dialogues([d], Upper()).tolist()) == d.text.upper()


def test_a_lone_surrogate_in_a_dialogue_is_named() -> None:
    d = Dialogue((("user", "a\ud800b"), ("assistant", "yo")), "greeting")
    with pytest.raises(ValueError, match=r"lone surrogate"):
        encode_dialogues([d], ByteTokenizer())


@pytest.mark.parametrize(
    "kwargs", [{"val_fraction": 1.0}, {"unseen_fraction": -0.1}, {"num_dialogues": 0},
               {"mix": (1.0, -1.0, 0.0, 0.0, 0.0)}, {"mix": (1.0, 0.0, 0.0)},
               {"max_operand": 100}, {"small_operand": 30, "max_operand": 20}]
)  # fmt: skip
def test_bad_arguments_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        build_corpus(**kwargs)  # type: ignore[arg-type]


def test_out_of_scope_prompts_get_the_one_honest_reply_of_their_language() -> None:
    offscope = [d for d in corpus().train if d.kind == "offscope"]
    assert len(offscope) > 400
    for d in offscope:
        ask, reply = d.messages[-2][1], d.messages[-1][1]
        assert reply == scope.HONEST["zh" if scope.is_chinese(ask) else "en"], ask
    asked = {d.messages[-2][1] for d in offscope}
    for pattern in ("天气", "weather", "capital", "首都", "笑话", "joke", "python", "几号",
                    "😀|😂|👍|🤔|🙏|🎉|😭|🔥|🐱", r"乘|times|\*", r"\d{3}"):  # fmt: skip
        assert any(re.search(pattern, q) for q in asked), pattern
    assert scope.HONEST["zh"] == "我只会做 0–99 的加减法、打招呼和回答本课程的问题。"


def test_a_name_given_then_asked_gets_the_honest_reply() -> None:
    talks = [d for d in corpus().train if d.kind == "conversation"]
    assert len(talks) > 50
    for d in talks:
        roles = [r for r, _ in d.messages if r != "system"]
        assert roles == ["user", "assistant", "user", "assistant"]
        reply = d.messages[-1][1]
        assert reply in scope.HONEST.values() or ANSWER.match(reply), reply
    assert sum(d.messages[-1][1] in scope.HONEST.values() for d in talks) > len(talks) / 2


def test_the_held_out_chat_prompts_are_never_asked_in_training() -> None:
    from grader.product.scoring import course_corpus  # build_corpus(), made once per process

    c = course_corpus()  # the shipped corpus: every ask of every training dialogue
    asked = {m[1].rstrip("?？!！。 ~:)").lower() for d in c.train + c.val for m in d.messages
             if m[0] == "user"}  # fmt: skip
    sets = chat_sets()
    assert len(sets["offscope"]) >= 70 and len(sets["course"]) >= 100
    for name, asks in sets.items():
        for a in asks:
            assert a.prompt.rstrip("?？!！。 ~:)").lower() not in asked, (name, a.prompt)

"""The course's shipped chat model: it loads, it answers, and it refuses a foreign vocabulary.

Also the recipe that makes it (`framework.shipped_train`), on small inputs.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import END_TAG, format_prompt
from framework.config import ModelConfig, tiny_config
from framework.corpus import Dialogue, Question, build_corpus
from framework.model import GPTModel, init_weights, model_save
from framework.scope import HONEST
from framework.shipped import (
    DATA_DIR,
    MODEL_FILE,
    VOCAB_FILE,
    CheckpointError,
    load_checkpoint,
    load_shipped,
    meta_path,
    read_meta,
    save_checkpoint,
)
from framework.shipped_train import (
    NAMED,
    Recipe,
    bpe_text,
    chat_reply,
    conversation,
    corpus_fingerprint,
    dialogue_text,
    encode_stream,
    exact_match,
    streams,
    val_stream,
)


@pytest.fixture(scope="module")
def shipped() -> tuple[GPTModel, BPETokenizer]:
    return load_shipped()


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of framework/data in tmp_path; returns the model file's path."""
    for f in DATA_DIR.iterdir():
        shutil.copyfile(f, tmp_path / f.name)
    return tmp_path / MODEL_FILE.name


def test_the_shipped_files_are_small_and_belong_together(
    shipped: tuple[GPTModel, BPETokenizer],
) -> None:
    model, tok = shipped
    assert MODEL_FILE.stat().st_size + VOCAB_FILE.stat().st_size <= 4 * 1024 * 1024
    assert model.config.vocab_size == tok.vocab_size
    meta = read_meta(MODEL_FILE)
    assert meta["vocab_fingerprint"] == tok.fingerprint()
    assert 300 <= len(tok.merges) <= 2000


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("你好", "你好！有什么可以帮你？"),
        ("hello", "Hello! How can I help you?"),
        ("1+2=?", "1 + 2 = 3"),
        ("三加四等于几", "3 + 4 = 7"),
        ("what is 5 plus 3", "5 + 3 = 8"),
        ("7-2=?", "7 - 2 = 5"),
        ("45 + 38 = ?", "45 + 38 = 83"),  # the sum: "4 + 3 = 7" before
        ("九十减二十七等于几", "90 - 27 = 63"),
    ],
)
@pytest.mark.parametrize("open_layout", [True, False], ids=["lab13-prompt", "closed-prompt"])
def test_the_shipped_model_answers_greetings_and_small_sums(
    shipped: tuple[GPTModel, BPETokenizer], question: str, answer: str, open_layout: bool
) -> None:
    model, tok = shipped
    assert chat_reply(model, tok, question, open_layout) == answer


def test_the_shipped_model_is_made_from_todays_corpus() -> None:
    from grader.product.scoring import course_corpus  # build_corpus(), made once per process

    meta = read_meta(MODEL_FILE)
    seed = Recipe().seed
    corpus = course_corpus() if seed == 0 else build_corpus(seed=seed)
    assert meta["corpus_sha256"] == corpus_fingerprint(corpus), (
        "framework.corpus changed since framework/data was built: run `make model`, then "
        "`make handouts`, and commit framework/data"
    )
    assert meta["recipe"]["train"] == asdict(Recipe().train)


def test_the_model_keeps_a_conversation(shipped: tuple[GPTModel, BPETokenizer]) -> None:
    model, tok = shipped
    questions = ["你好", "12+7=?", "十五减六等于几", "what is 9 plus 8", "what is attention?",
                 "20-13=?", "谢谢"]  # fmt: skip
    replies = conversation(model, tok, questions)
    assert replies[1:4] == ["12 + 7 = 19", "15 - 6 = 9", "9 + 8 = 17"]
    assert replies[5:] == ["20 - 13 = 7", "不客气。"]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("今天天气怎么样？", HONEST["zh"]),
        ("what is the capital of France?", HONEST["en"]),
        ("yo, what's up?", "Hello! How can I help you?"),
        ("thank u so much!!", "You are welcome."),
    ],
)
def test_the_shipped_model_says_when_it_cannot_help(
    shipped: tuple[GPTModel, BPETokenizer], question: str, answer: str
) -> None:
    """The issue's own prompts: out of scope gets the honest reply, slang a greeting."""
    model, tok = shipped
    assert chat_reply(model, tok, question, open_layout=True) == answer


def test_a_name_given_then_asked_never_gets_a_sum(
    shipped: tuple[GPTModel, BPETokenizer],
) -> None:
    model, tok = shipped
    replies = conversation(model, tok, list(NAMED))
    assert replies[1] in HONEST.values() or "小明" in replies[1], replies
    assert read_meta(MODEL_FILE)["named_conversation"][1][1] == replies[1]


def test_every_digit_is_a_token_of_its_own(shipped: tuple[GPTModel, BPETokenizer]) -> None:
    _, tok = shipped
    merged = [tok.token_bytes(i) for i in range(264, tok.vocab_size)
              if any(48 <= b <= 57 for b in tok.token_bytes(i))]  # fmt: skip
    assert merged == [], merged[:5]  # no merge holds an ASCII digit
    pieces = tok.pieces(tok.encode("45 + 38 = 83"))
    assert [p for p in pieces if any(ch.isdigit() for ch in p)] == list("453883")


def test_the_recorded_scores_are_the_models(shipped: tuple[GPTModel, BPETokenizer]) -> None:
    """The sidecar's figures hold the issue's goals, and its samples are this model's."""
    model, tok = shipped
    meta = read_meta(MODEL_FILE)
    # Floors a little under what the shipped model reached (in brackets), so that a rebuild
    # whose last digits differ still passes; a model below them is a regression.
    assert meta["heldout_exact_match_lab13_layout"]["all"] >= 0.97  # (0.995)
    assert meta["unseen_small_exact_match_lab13_layout"]["all"] >= 0.9  # (0.9535)
    assert meta["unseen_exact_match_lab13_layout"]["all"] >= 0.9  # (0.975; the goal is 0.8)
    assert meta["offscope_honest"]["all"] >= 0.9  # (0.9615; the goal)
    assert meta["course_exact_match"]["all"] >= 0.8  # (0.830)
    assert meta["multi_turn_name"]["all"] == 1.0  # never a sum
    assert meta["replies_with_fffd"] == 0
    assert meta["samples"]["1+2=?"] == chat_reply(model, tok, "1+2=?", True)
    right = Question("2+2=?", "2 + 2 = 4", "en", 2, "+", 2)
    wrong = Question("2+2=?", "2 + 2 = 5", "en", 2, "+", 2)
    assert exact_match(model, tok, [right, wrong], True) == {"all": 0.5, "en": 0.5}


_README_SETS = {
    "heldout": "heldout_exact_match_closed_layout",
    "unseen": "unseen_exact_match_closed_layout",
    "unseen_small": "unseen_small_exact_match_closed_layout",
    "course": "course_exact_match",
    "greetings": "greetings_exact_match",
    "offscope": "offscope_honest",
    "multi_turn": "multi_turn_name",
}


def test_the_readme_quotes_the_shipped_models_figures() -> None:
    """README's block of `minillm eval` figures is the sidecar's, line for line."""
    from framework.evaluate import SCORECARD

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- shipped-model:eval -->\n```text\n", 1)[1].split("```", 1)[0]
    meta = read_meta(MODEL_FILE)
    width = max(len(name) for name in SCORECARD.values())
    want = [
        f"{SCORECARD[k].ljust(width)}: {meta[key]['all']:6.1%}" for k, key in _README_SETS.items()
    ]
    assert block.splitlines() == want


def test_a_foreign_vocabulary_is_refused(copy: Path) -> None:
    other = BPETokenizer.train("ab ab ab cd cd", 3)
    other.save(copy.parent / "other.json")
    with pytest.raises(CheckpointError, match=r"is not the vocabulary .* was trained with"):
        load_checkpoint(copy, copy.parent / "other.json")
    _, tok = load_checkpoint(copy)  # the sidecar's own vocabulary
    assert tok == load_shipped()[1]


def test_weights_replaced_without_their_sidecar_are_refused(copy: Path) -> None:
    model, _ = load_checkpoint(copy)
    init_weights(model, seed=1)
    model_save(model, copy)
    with pytest.raises(CheckpointError, match="describes other weights"):
        load_checkpoint(copy)


def test_a_missing_or_foreign_sidecar_is_refused(copy: Path) -> None:
    meta = meta_path(copy)
    doc = json.loads(meta.read_text(encoding="utf-8"))
    meta.write_text(json.dumps({**doc, "format": "something-else"}), encoding="utf-8")
    with pytest.raises(CheckpointError, match="not a minillm-checkpoint sidecar"):
        load_checkpoint(copy)
    meta.unlink()
    with pytest.raises(CheckpointError, match="has no sidecar"):
        load_checkpoint(copy)


def test_save_checkpoint_round_trips_and_refuses_mismatched_sizes(tmp_path: Path) -> None:
    tok = BPETokenizer.train("hello hello world world", 4)
    model = GPTModel(tiny_config())
    with pytest.raises(CheckpointError, match="260 ids, the tokenizer 268"):
        save_checkpoint(model, tok, tmp_path / "m.bin", tmp_path / "v.json")
    model = GPTModel(ModelConfig(268, 32, 2, 2, 128, 64))
    init_weights(model, seed=3)
    save_checkpoint(model, tok, tmp_path / "m.bin", tmp_path / "v.json", {"note": "x"})
    back, tok_back = load_checkpoint(tmp_path / "m.bin")
    assert tok_back == tok and read_meta(tmp_path / "m.bin")["note"] == "x"
    assert np.array_equal(back.forward([2, 5]).numpy(), model.forward([2, 5]).numpy())


# -- the recipe -----------------------------------------------------------------------------
SUM = Dialogue((("user", "1+12=?"), ("assistant", "1 + 12 = 13")), "arithmetic")
HELLO = Dialogue((("system", "Be brief."), ("user", "hi"), ("assistant", "Hello!")), "greeting")


def test_bpe_text_has_no_digit_and_no_newline() -> None:
    text = bpe_text([SUM, HELLO])
    assert not any(ch.isdigit() or ch == "\n" for ch in text)
    tok = BPETokenizer.train(text * 20, 30)
    pieces = tok.pieces(tok.encode("12 + 34 = 46\n"))
    assert [p for p in pieces if any(ch.isdigit() for ch in p)] == list("123446")


def test_dialogue_text_in_both_layouts() -> None:
    assert dialogue_text(HELLO, open_layout=False) == (
        "<|system|>\nBe brief.\n<|end|>\n<|user|>\nhi\n<|end|>\n<|assistant|>\nHello!\n<|end|>\n"
    )
    opened = dialogue_text(HELLO, open_layout=True)
    assert opened == format_prompt(HELLO.messages[:-1]) + "Hello!\n" + END_TAG + "\n"


def test_encode_stream_starts_dialogues_with_bos_and_joins_some() -> None:
    tok = BPETokenizer()
    dialogues = [SUM, HELLO] * 20
    ids, starts = encode_stream(dialogues, tok, seed=0, p_open=0.5, p_join=0.5)
    assert (ids[starts] == tok.bos_id).all() and (ids == tok.bos_id).sum() == starts.size
    assert 20 < starts.size < 40  # HELLO (with a system message) always starts anew
    again, _ = encode_stream(dialogues, tok, seed=0, p_open=0.5, p_join=0.5)
    assert np.array_equal(ids, again)
    text = tok.decode(ids.tolist(), keep_tags=True)
    assert "?\n<|end|>\n<|assistant|>" in text and "?\n<|assistant|>" in text


def test_the_validation_stream_alone_is_the_one_of_both_streams() -> None:
    from framework.corpus import Corpus

    tok, recipe = BPETokenizer(), Recipe(seed=3)
    corpus = Corpus([SUM, HELLO] * 5, [HELLO, SUM] * 7, [], [], [], frozenset())
    (train_ids, _), both = streams(corpus, tok, recipe)
    alone = val_stream(corpus, tok, recipe)
    assert all(np.array_equal(a, b) for a, b in zip(both, alone, strict=True))
    assert not np.array_equal(train_ids, alone[0])  # the other dialogues, the other seed

"""framework.chat: exact layouts, the reply extraction, tag-safe encoding, history trimming."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import (
    CHAT_TAGS,
    Conversation,
    encode_messages,
    extract_response,
    format_chat_prompt,
    format_prompt,
    format_training_example,
    role_tag,
)
from framework.tokenizer import ByteTokenizer

EXAMPLE = [
    ("system", "你是一个简洁的助手。"),
    ("user", "你好！"),
    ("assistant", "你好，有什么可以帮你？"),
    ("user", "what is 2 + 3?"),
    ("assistant", "2 + 3 = 5."),
]
BPE = BPETokenizer.train(format_training_example(EXAMPLE) * 4, 80)
no_tags = st.text().filter(lambda s: not any(t in s for t in CHAT_TAGS))


# -- layouts ---------------------------------------------------------------------------
def test_format_prompt_layout() -> None:
    msgs = [("system", "S"), ("user", "hi"), ("assistant", "hello"), ("user", "你好")]
    assert format_prompt(msgs) == (
        "<|system|>\nS\n<|user|>\nhi\n<|assistant|>\nhello\n<|user|>\n你好\n<|assistant|>\n"
    )
    assert format_prompt([]) == "<|assistant|>\n"
    assert format_prompt((("user", ""),)) == "<|user|>\n\n<|assistant|>\n"
    assert format_prompt([["user", "  a\n b "]]) == "<|user|>\n  a\n b \n<|assistant|>\n"


def test_training_layout_closes_every_message() -> None:
    msgs = [("user", "1+1?"), ("assistant", "2")]
    text = format_training_example(msgs)
    assert text == "<|user|>\n1+1?\n<|end|>\n<|assistant|>\n2\n<|end|>\n"
    assert format_chat_prompt(msgs[:1]) == "<|user|>\n1+1?\n<|end|>\n<|assistant|>\n"
    assert text.startswith(format_chat_prompt(msgs[:1]))  # the prompt is a prefix of the data
    assert format_training_example([]) == ""


@pytest.mark.parametrize(
    ("messages", "exc", "match"),
    [
        ([("bot", "x")], ValueError, "role must be one of system, user, assistant; got 'bot'"),
        ([("User", "x")], ValueError, "got 'User'"),
        ([("<|user|>", "x")], ValueError, "got '<|user|>'"),
        ([(None, "x")], TypeError, "role must be a str, got NoneType"),
        ([(1, "x")], TypeError, "role must be a str, got int"),
        ([("user", 5)], TypeError, r"messages\[0\] content must be a str"),
        ([("user", "a", "b")], TypeError, r"messages\[0\] must be a \(role, content\) pair"),
        (["user"], TypeError, r"messages\[0\] must be"),
        ("user", TypeError, "messages must be a sequence"),
    ],
)
def test_bad_messages(messages: object, exc: type[Exception], match: str) -> None:
    for fn in (format_prompt, format_training_example, format_chat_prompt):
        with pytest.raises(exc, match=match):
            fn(messages)  # type: ignore[arg-type]


def test_role_tag() -> None:
    assert [role_tag(r) for r in ("system", "user", "assistant")] == list(CHAT_TAGS[:3])


# -- extract_response ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("output", "want"),
    [
        ("   hello world   ", "hello world"),
        ("<|user|>\nA\n<|assistant|>\nWRONG\n<|user|>\nB\n<|assistant|>\nRIGHT\n", "RIGHT"),
        ("<|assistant|>\nactual reply\n<|user|>\nnext q\n", "actual reply"),
        ("<|assistant|>\nreply<|end|>junk", "reply"),
        ("<|assistant|>\nreply\n<|system|>\nrules", "reply"),
        ("hello<|end|>more", "hello"),  # no assistant tag: from the start, cut at a tag
        ("<|user|>\nhi\n<|assistant|>\n", ""),
        ("<|assistant|><|end|>", ""),
        ("<|assistant|>\n\t a\n\nb \r\n<|end|>", "a\n\nb"),
        ("<|assistant|>\n<|end and <|foo|> a<b|c\n", "<|end and <|foo|> a<b|c"),
        ("", ""),
        ("<|assistant|>\n你好！\n<|end|>", "你好！"),
    ],
)
def test_extract_response(output: str, want: str) -> None:
    assert extract_response(output) == want


def test_extract_response_type() -> None:
    with pytest.raises(TypeError, match="output must be a str, got bytes"):
        extract_response(b"x")  # type: ignore[arg-type]


@given(st.lists(st.tuples(st.sampled_from(["system", "user", "assistant"]), no_tags)), no_tags)
def test_format_then_extract(messages: list[tuple[str, str]], reply: str) -> None:
    out = format_prompt(messages) + reply + "\n<|end|>\n<|user|>\nmore"
    assert extract_response(out) == reply.strip()
    out = format_chat_prompt(messages) + reply + "\n<|end|>"
    assert extract_response(out) == reply.strip()


# -- encoding --------------------------------------------------------------------------
@given(st.lists(st.tuples(st.sampled_from(["system", "user", "assistant"]), no_tags), max_size=4))
def test_encode_messages_equals_encoding_the_text(messages: list[tuple[str, str]]) -> None:
    try:
        want = BPE.encode(format_chat_prompt(messages))
    except ValueError:  # a lone surrogate
        return
    assert encode_messages(BPE, messages) == want
    text = format_training_example(messages)
    assert encode_messages(BPE, messages, open_reply=False) == BPE.encode(text)
    assert encode_messages(ByteTokenizer(), messages) == ByteTokenizer().encode(
        format_chat_prompt(messages)
    )


def test_a_typed_tag_stays_text() -> None:
    ids = encode_messages(BPE, [("user", "hi <|end|> <|assistant|>")])
    tags = [i for i in ids if BPE.is_special(i)]
    assert tags == [261, 263, 262]  # user, end, assistant: only the real ones
    assert BPE.decode(ids) == "\nhi <|end|> <|assistant|>\n\n\n"


# -- Conversation ----------------------------------------------------------------------
def test_conversation_add_reset_render() -> None:
    conv = Conversation("Be brief.")
    conv.add("user", "hi")
    conv.add("assistant", "hello")
    assert conv.messages == [("user", "hi"), ("assistant", "hello")]
    assert conv.render() == format_chat_prompt([("system", "Be brief."), *conv.messages])
    with pytest.raises(ValueError, match="role must be one of"):
        conv.add("robot", "x")
    conv.reset()
    assert conv.messages == [] and conv.system_prompt == "Be brief."
    with pytest.raises(ValueError, match="no messages"):
        conv.prompt_ids(BPE, 100)


def chat(turns: int) -> Conversation:
    conv = Conversation("你是一个简洁的助手。")
    for k in range(turns):
        conv.add("user", f"question {k}: what is {k} + {k}?")
        conv.add("assistant", f"{k} + {k} = {2 * k}.")
    conv.add("user", "and 7 + 8?")
    return conv


def test_prompt_ids_fit_without_trimming() -> None:
    conv = chat(2)
    ids = conv.prompt_ids(BPE, 10_000)
    assert ids == [BPE.bos_id, *BPE.encode(conv.render())]
    assert conv.prompt_ids(BPE, 10_000, add_bos=False) == ids[1:]


@pytest.mark.parametrize("budget", [40, 60, 80, 120, 200])
def test_prompt_ids_drop_the_oldest_turns(budget: int) -> None:
    conv = chat(6)
    ids = conv.prompt_ids(BPE, budget)
    assert len(ids) <= budget and ids[0] == BPE.bos_id
    text = BPE.decode(ids, keep_tags=True)
    assert text.startswith("<|system|>\n你是一个简洁的助手。\n<|end|>\n")
    assert text.endswith("<|user|>\nand 7 + 8?\n<|end|>\n<|assistant|>\n")
    kept = [k for k in range(6) if f"question {k}:" in text]
    assert kept == list(range(6 - len(kept), 6))  # a suffix of the history
    assert all(f"{k} + {k} = {2 * k}." in text for k in kept)  # whole turns only
    longer = conv.prompt_ids(BPE, budget + 40)
    assert len(longer) >= len(ids)  # more room never keeps less
    assert len(conv.messages) == 13  # the conversation itself is not trimmed


def test_prompt_ids_cut_a_long_message_from_its_start() -> None:
    conv = Conversation("a long system prompt " * 5)
    conv.add("user", "".join(f"word{k} " for k in range(100)) + "END")
    ids = conv.prompt_ids(BPE, 30)
    assert 25 <= len(ids) <= 30
    text = BPE.decode(ids, keep_tags=True)
    assert text.startswith("<|user|>\n") and text.endswith("END\n<|end|>\n<|assistant|>\n")
    assert "system" not in text
    with pytest.raises(ValueError, match="too small for even an empty user message"):
        conv.prompt_ids(BPE, 5)


def test_prompt_ids_with_the_byte_tokenizer() -> None:
    tok = ByteTokenizer()
    conv = chat(3)
    ids = conv.prompt_ids(tok, 150)
    assert len(ids) <= 150
    assert tok.decode(ids).endswith("<|user|>\nand 7 + 8?\n<|end|>\n<|assistant|>\n")

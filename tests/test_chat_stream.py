"""framework.chat_stream: whole characters only, nothing that may become a tag, stops at tags."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import CHAT_TAGS, format_training_example
from framework.chat_stream import ReplyStream
from framework.tokenizer import ByteTokenizer

BPE = BPETokenizer.train(
    format_training_example([("user", "你好！"), ("assistant", "你好，很高兴见到你。<|x")]) * 3, 60
)
BYTE = ByteTokenizer()
no_tags = st.text(alphabet="ab<|>你好 end\n🙂", max_size=40).filter(
    lambda s: not any(t in s for t in CHAT_TAGS)
)


def run(stream: ReplyStream, ids: list[int]) -> list[str]:
    return [stream.push(i) for i in ids] + [stream.finish()]


@given(no_tags)
def test_the_pieces_add_up_to_the_decoded_text(text: str) -> None:
    for tok in (BPE, BYTE):
        stream = ReplyStream(tok)
        pieces = run(stream, tok.encode(text))
        assert "".join(pieces) == stream.text == text
        assert "\ufffd" not in "".join(pieces)  # never half a character
        assert stream.done


def test_chinese_split_across_tokens_comes_out_whole() -> None:
    stream = ReplyStream(BYTE)
    assert run(stream, BYTE.encode("你好")) == ["", "", "你", "", "", "好", ""]


def test_stops_at_tag_ids_and_eos() -> None:
    ids = BPE.encode("你好<|end|>ignored")
    stream = ReplyStream(BPE)
    assert "".join(run(stream, ids)) == stream.text == "你好"
    assert stream.done and stream.push(BPE.encode("x")[0]) == ""
    stream = ReplyStream(BPE)
    assert "".join(stream.push(i) for i in [*BPE.encode("ok"), BPE.eos_id, 108]) == "ok"
    assert stream.stop_ids == {3, 260, 261, 262, 263}
    assert ReplyStream(BYTE).stop_ids == {3}


def test_a_tag_in_text_is_held_back_then_stops() -> None:
    stream = ReplyStream(BYTE)
    shown = [stream.push(i) for i in BYTE.encode("hi <|us")]
    assert "".join(shown) == "hi "  # "<|us" may still become <|user|>
    shown = [stream.push(i) for i in BYTE.encode("er|>\nnext")]
    assert "".join(shown) == "" and stream.done and stream.text == "hi "


def test_a_false_alarm_is_released() -> None:
    stream = ReplyStream(BYTE)
    assert "".join(stream.push(i) for i in BYTE.encode("a <|en")) == "a "
    assert stream.push(BYTE.encode("x")[0]) == "<|enx"  # no tag starts with "<|enx"
    assert stream.text == "a <|enx" and not stream.done


def test_finish_releases_what_was_held() -> None:
    stream = ReplyStream(BYTE)
    assert "".join(stream.push(i) for i in BYTE.encode("a <|")) == "a "
    assert stream.finish() == "<|" and stream.text == "a <|" and stream.done
    assert stream.finish() == ""

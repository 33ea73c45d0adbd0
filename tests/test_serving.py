"""The pieces under the server: request reading, the API's JSON, the chat engine, the gate."""

from __future__ import annotations

import io
import json
import threading

import numpy as np
import pytest
from serving_helpers import TINY, tiny_engine

from framework import generate
from framework.bpe_tokenizer import BPETokenizer
from framework.chat import CHAT_TAGS
from framework.config import ModelConfig
from framework.http_request import HttpError, error_body, read_request
from framework.model import GPTModel
from framework.openai_api import ApiError, parse_chat_request
from framework.serving import Busy, ChatEngine, Gate, ReplySettings
from framework.tokenizer import ByteTokenizer

# -- reading a request ----------------------------------------------------------------------


def read(data: bytes, max_body: int = 100) -> object:
    return read_request(io.BufferedReader(io.BytesIO(data)), max_body)  # type: ignore[arg-type]


def status(data: bytes, max_body: int = 100) -> int:
    with pytest.raises(HttpError) as e:
        read(data, max_body)
    return e.value.status


def test_a_request_is_read_whole() -> None:
    req = read(b"POST /v1/x?y=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbody+extra")
    assert (req.method, req.target, req.path, req.body) == ("POST", "/v1/x?y=1", "/v1/x", b"body")  # type: ignore[attr-defined]
    assert req.headers == {"host": "a", "content-length": "4"}  # type: ignore[attr-defined]
    bare_lf = read(b"GET / HTTP/1.1\nHost: a\n\n")  # RFC 9112 lets a server accept bare LF
    assert bare_lf.headers == {"host": "a"}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("data", "want"),
    [
        (b"GET / HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nContent-Length: \xd9\xa1\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\n: empty name\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nshort", 400),
        (b"GET / HTTP/1.1\r\nHost: a", 400),
        (b"PUT / HTTP/1.1\r\n\r\n", 411),
        (b"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", 413),
        (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n", 414),
        (b"GET / HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n", 431),
    ],
)
def test_each_bad_request_gets_its_status(data: bytes, want: int) -> None:
    assert status(data) == want


def test_an_error_body_has_the_openai_shape() -> None:
    doc = json.loads(error_body(HttpError(503, "busy", "overloaded", param="x")))
    assert doc == {
        "error": {"message": "busy", "type": "server_error", "param": "x", "code": "overloaded"}
    }


# -- the API's JSON -------------------------------------------------------------------------


def test_a_request_as_the_openai_client_sends_it() -> None:
    body = {
        "model": "tiny",
        "messages": [
            {"role": "developer", "content": "rules"},
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
        ],
        "temperature": 0,
        "top_p": 0.5,
        "max_completion_tokens": 7,
        "seed": -3,
        "stream": True,
        "stream_options": {"include_usage": True},
        "stop": "\n",
        "presence_penalty": 0.5,
        "user": "someone",
    }
    req = parse_chat_request(json.dumps(body).encode())
    assert req.messages == [("system", "rules"), ("user", "ab")]
    assert (req.temperature, req.top_p, req.max_tokens, req.seed) == (0.0, 0.5, 7, -3)
    assert req.stream and req.include_usage and req.stop == ["\n"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": [{"role": "system", "content": "only rules"}]}, "messages"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]},
            "messages[0].content",
        ),
        ({"messages": [{"role": "user", "content": "x"}], "top_p": True}, "top_p"),
        ({"messages": [{"role": "user", "content": "x"}], "stop": ["a"] * 5}, "stop"),
        ({"messages": [{"role": "user", "content": "x"}], "model": 3}, "model"),
    ],
)
def test_refused_requests_name_the_field(body: dict[str, object], param: str) -> None:
    with pytest.raises(ApiError) as e:
        parse_chat_request(json.dumps(body).encode())
    assert e.value.param == param


def test_bad_json_and_bad_utf8_are_refused() -> None:
    for body in (b"", b"{", b"\xff\xfe", b'"a string"'):
        with pytest.raises(ApiError):
            parse_chat_request(body)


# -- the engine -----------------------------------------------------------------------------


def test_the_streamed_pieces_are_the_reply() -> None:
    engine = tiny_engine()
    for seed in range(5):
        pieces: list[str] = []
        reply = engine.reply(
            "", [("user", "hi")], ReplySettings(seed=seed, max_tokens=20), pieces.append
        )
        assert "".join(pieces) == reply.text == reply.text.strip()
        assert all(pieces) and reply.completion_tokens <= 20


def test_a_stop_string_cuts_the_reply_where_it_starts() -> None:
    engine = tiny_engine()
    settings = ReplySettings(temperature=0, max_tokens=30)
    whole = engine.reply("", [("user", "hi")], settings).text
    cut_at = next(c for c in whole[4:] if not c.isspace() and c != "\ufffd")
    stopped = engine.reply(
        "", [("user", "hi")], ReplySettings(temperature=0, max_tokens=30, stop=(cut_at,))
    )
    assert stopped.text == whole[: whole.index(cut_at)].strip()
    assert stopped.finish_reason == "stop"


def test_the_prompt_is_trimmed_to_leave_room_for_the_reply() -> None:
    engine = tiny_engine()
    history = [(r, "y" * 60) for r in ("user", "assistant") * 6] + [("user", "now")]
    ids = engine.prompt_ids("system rules", history, max_tokens=40)
    assert len(ids) <= TINY.max_seq_len - 40
    reply = engine.reply("system rules", history, ReplySettings(max_tokens=40, seed=0))
    assert reply.prompt_tokens + reply.completion_tokens <= TINY.max_seq_len


def script(monkeypatch: pytest.MonkeyPatch, ids: list[int]) -> None:
    """Make every model's next-token logits pick `ids` in turn (the real sampler and stops)."""
    steps = iter(ids)

    def logits(self: generate.Decoder) -> np.ndarray:
        out = np.full(self.model.config.vocab_size, -1e9, dtype=np.float32)  # (V,)
        out[next(steps)] = 0.0
        return out

    monkeypatch.setattr(generate.Decoder, "logits", logits)


def test_a_byte_model_stops_at_a_tag_written_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    tok = ByteTokenizer()
    script(monkeypatch, tok.encode("\n  你好 ok \n" + CHAT_TAGS[3] + "junk"))
    pieces: list[str] = []
    reply = tiny_engine().reply("", [("user", "x")], ReplySettings(temperature=0), pieces.append)
    assert (reply.text, reply.finish_reason) == ("你好 ok", "stop")
    assert "".join(pieces) == "你好 ok" and all("<" not in p and "\ufffd" not in p for p in pieces)


def test_a_bpe_model_stops_at_a_tag_id(monkeypatch: pytest.MonkeyPatch) -> None:
    tok = BPETokenizer.train(
        "<|user|>\nhello there\n<|end|>\n<|assistant|>\nhi!\n<|end|>\n" * 5, 20
    )
    model = GPTModel(ModelConfig(tok.vocab_size, 32, 2, 2, 128, 128))
    script(monkeypatch, [*tok.encode("hi!"), tok.token_id("<|end|>"), *tok.encode("more")])
    reply = ChatEngine(model, tok).reply("", [("user", "hello")], ReplySettings(seed=1))
    assert (reply.text, reply.finish_reason) == ("hi!", "stop")
    assert reply.completion_tokens == len(tok.encode("hi!"))


def test_a_reply_cut_by_max_tokens_says_length(monkeypatch: pytest.MonkeyPatch) -> None:
    script(monkeypatch, ByteTokenizer().encode("abcdefgh"))
    reply = tiny_engine().reply("", [("user", "x")], ReplySettings(max_tokens=3))
    assert (reply.text, reply.finish_reason, reply.completion_tokens) == ("abc", "length", 3)


def test_an_engine_refuses_a_tokenizer_bigger_than_the_model() -> None:
    tok = BPETokenizer.train("abcabcabc abcabc", 5)
    with pytest.raises(ValueError, match="do not belong together"):
        ChatEngine(GPTModel(TINY), tok)
    with pytest.raises(TypeError):
        ChatEngine("model", ByteTokenizer())  # type: ignore[arg-type]


# -- the gate -------------------------------------------------------------------------------


def test_the_gate_lets_one_run_and_a_bounded_number_wait() -> None:
    gate = Gate(waiting=1, timeout=5)
    entered = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with gate.turn():
            entered.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    entered.wait(5)
    waiter_done: list[bool] = []

    def wait() -> None:
        with gate.turn():
            waiter_done.append(True)

    waiter = threading.Thread(target=wait)
    waiter.start()
    for _ in range(100):  # the waiter is queued: a third caller finds the queue full
        try:
            with gate.turn():
                pass
        except Busy:
            break
        threading.Event().wait(0.01)
    else:
        pytest.fail("the third caller was never refused")
    release.set()
    holder.join(5)
    waiter.join(5)
    assert waiter_done == [True]

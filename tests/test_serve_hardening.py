"""The server holds up: refusals, hostile bodies, Host and Origin checks, HTTP details,
keep-alive, slowloris and bursts. Every loop is bounded; outcomes are asserted, not times."""

from __future__ import annotations

import http.client
import io
import json
import math
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from serving_helpers import (
    Answer,
    body_json,
    events,
    host,
    port_of,
    raw,
    request,
    running,
    scripted_engine,
    status_of,
    tiny_engine,
)

from framework import generate
from framework.config import ModelConfig
from framework.http_request import HttpError, SocketReader, read_head, read_request
from framework.http_server import ChatServer
from framework.model import GPTModel, init_weights
from framework.serving import ChatEngine, Gate, ReplySettings
from framework.tokenizer import ByteTokenizer

CHAT = "/v1/chat/completions"
HELLO = {"messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with running(read_timeout=1.0) as s:
        yield s


def error_of(answer: Answer, status: int, param: str | None = None) -> dict[str, Any]:
    assert answer.status == status, answer.body
    err = answer.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["message"]
    assert err["type"] == ("invalid_request_error" if status < 500 else "server_error")
    assert err["param"] == param
    return dict(err)


# -- refused, not ignored -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tools", [{"type": "function", "function": {"name": "f"}}]),
        ("tool_choice", "auto"),
        ("functions", [{"name": "f"}]),
        ("response_format", {"type": "json_object"}),
        ("logprobs", True),
        ("top_logprobs", 3),
        ("n", 2),
        ("logit_bias", {"50": 10}),
        ("audio", {"voice": "alloy"}),
        ("frequency_penalty", "x"),
        ("presence_penalty", 99),
        ("presence_penalty", -2.5),
        ("temperature", "hot"),
        ("stop", 5),
        ("max_tokens", "9"),
    ],
)
def test_an_unsupported_or_wrong_field_is_400_naming_it(
    server: ChatServer, field: str, value: object
) -> None:
    answer = request(server, "POST", CHAT, {**HELLO, field: value})
    err = error_of(answer, 400, field)
    assert field in err["message"]


def test_the_neutral_values_of_those_fields_are_accepted(server: ChatServer) -> None:
    neutral = {
        "tools": [],
        "tool_choice": "none",
        "response_format": {"type": "text"},
        "logprobs": False,
        "n": 1,
        "logit_bias": {},
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
        "user": "someone",
    }
    assert request(server, "POST", CHAT, {**HELLO, **neutral}).status == 200


def test_penalties_steer_the_sampler(monkeypatch: pytest.MonkeyPatch) -> None:
    tok = ByteTokenizer()
    a, b = tok.encode("a")[0], tok.encode("b")[0]

    def logits(self: generate.Decoder) -> np.ndarray:
        out = np.full(self.model.config.vocab_size, -1e9, dtype=np.float32)  # (V,)
        out[a], out[b] = 1.0, 0.5
        return out

    monkeypatch.setattr(generate.Decoder, "logits", logits)
    engine = tiny_engine()

    def text(**penalties: float) -> str:
        settings = ReplySettings(temperature=0, max_tokens=4, **penalties)
        return engine.reply("", [("user", "x")], settings).text

    # greedy; presence: 'a' costs 1 once made; frequency: 1 more each time an id is made
    assert (text(), text(presence_penalty=1.0), text(frequency_penalty=1.0)) == (
        "aaaa",
        "abaa",
        "abab",
    )


# -- hostile bodies get a 4xx, never a 500 ----------------------------------------------------


def test_json_nested_30000_deep_is_400(server: ChatServer) -> None:
    error_of(request(server, "POST", CHAT, b"[" * 30_000 + b"]" * 30_000), 400)
    deep = b'{"messages": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"
    assert request(server, "POST", CHAT, deep).status == 400


def test_an_integer_of_5000_digits_is_400_naming_the_field(server: ChatServer) -> None:
    body = b'{"messages": [{"role": "user", "content": "x"}], "max_tokens": ' + b"9" * 5000 + b"}"
    err = error_of(request(server, "POST", CHAT, body), 400, "max_tokens")
    assert "5000 digits" in err["message"]


def test_a_content_length_of_6000_digits_is_413(server: ChatServer) -> None:
    head = f"POST {CHAT} HTTP/1.1\r\n{host(server)}Content-Length: {'9' * 6000}\r\n\r\n"
    response = raw(server, head.encode())
    assert status_of(response) == 413 and "digits" in body_json(response)["error"]["message"]
    with pytest.raises(HttpError) as e:  # the reading layer alone
        read_request(io.BufferedReader(io.BytesIO(head.encode())))
    assert e.value.status == 413


def test_a_prompt_error_in_a_stream_is_400_before_the_stream() -> None:
    model = GPTModel(ModelConfig(260, 32, 2, 2, 128, 16))  # a context too small for the tags
    init_weights(model, seed=0)
    with running(ChatEngine(model, ByteTokenizer(), "small")) as small:
        for stream in (True, False):
            answer = request(small, "POST", CHAT, {**HELLO, "stream": stream})
            error_of(answer, 400, "messages")
            assert not answer.headers["content-type"].startswith("text/event-stream")


# -- Host (DNS rebinding) and Origin (CORS) -----------------------------------------------------


def with_host(server: ChatServer, value: str | None, version: str = "HTTP/1.1") -> bytes:
    line = "" if value is None else f"Host: {value}\r\n"
    return raw(server, f"GET /health {version}\r\n{line}Connection: close\r\n\r\n".encode())


def test_only_the_served_host_and_port_are_answered(server: ChatServer) -> None:
    port = port_of(server)
    for good in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST.:{port}", f"[::1]:{port}"):
        assert status_of(with_host(server, good)) == 200, good
    for bad in (f"evil.example:{port}", f"127.0.0.1:{port + 1}", "127.0.0.1", "[::1", "a b"):
        response = with_host(server, bad)
        assert status_of(response) == 421, bad
        err = body_json(response)["error"]
        assert err["param"] == "Host" and "--allow-host" in err["message"]


def test_a_missing_host_is_400_for_http_1_1_only(server: ChatServer) -> None:
    response = with_host(server, None)
    assert status_of(response) == 400 and "Host" in body_json(response)["error"]["message"]
    assert status_of(with_host(server, None, "HTTP/1.0")) == 200


def test_allow_host_adds_a_name() -> None:
    with running(allowed_hosts=("chat.lan", "other.lan:8443")) as s:
        assert status_of(with_host(s, "chat.lan")) == 200
        assert status_of(with_host(s, f"chat.lan:{port_of(s)}")) == 200
        assert status_of(with_host(s, "other.lan:8443")) == 200
        assert status_of(with_host(s, "other.lan:8444")) == 421


def test_another_origin_cannot_make_it_generate(server: ChatServer) -> None:
    engine_calls_before = server.service.gate.average
    for path, method in ((CHAT, "POST"), ("/health", "GET")):
        body = json.dumps(HELLO) if method == "POST" else None
        answer = request(server, method, path, body, {"Origin": "http://evil.example"})
        err = error_of(answer, 403, "Origin")
        assert "--cors http://evil.example" in err["message"]
        assert "access-control-allow-origin" not in answer.headers
    assert server.service.gate.average == engine_calls_before, "nothing was generated"
    same = request(
        server, "GET", "/health", None, {"Origin": f"http://127.0.0.1:{port_of(server)}"}
    )
    assert same.status == 200 and "access-control-allow-origin" not in same.headers
    preflight = request(
        server, "OPTIONS", CHAT, None,
        {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )  # fmt: skip
    assert preflight.status == 403 and "access-control-allow-origin" not in preflight.headers


def test_cors_for_a_given_origin_and_its_preflight() -> None:
    origin = "http://localhost:3000"
    with running(cors_origins=(origin,)) as s:
        asked = {
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, authorization",
        }
        pre = request(s, "OPTIONS", CHAT, None, asked)
        assert pre.status == 204 and pre.body == b""
        assert pre.headers["access-control-allow-origin"] == origin
        assert "POST" in pre.headers["access-control-allow-methods"]
        assert pre.headers["access-control-allow-headers"] == "content-type, authorization"
        answer = request(s, "POST", CHAT, HELLO, {"Origin": origin})
        assert answer.status == 200 and answer.headers["access-control-allow-origin"] == origin
        stream = request(s, "POST", CHAT, {**HELLO, "stream": True}, {"Origin": origin})
        assert stream.headers["access-control-allow-origin"] == origin
        assert events(stream.body)[-1] == "[DONE]"
        assert request(s, "GET", "/health", None, {"Origin": "http://other:1"}).status == 403


# -- HTTP details -------------------------------------------------------------------------------


def test_version_expect_and_plain_options(server: ChatServer) -> None:
    assert status_of(raw(server, f"GET /health HTTP/9.9\r\n{host(server)}\r\n".encode())) == 505
    expect = f"POST {CHAT} HTTP/1.1\r\n{host(server)}Expect: magic\r\nContent-Length: 2\r\n\r\n{{}}"
    assert status_of(raw(server, expect.encode())) == 417
    options = request(server, "OPTIONS", "/health")
    assert options.status == 204 and options.headers["allow"] == "GET, HEAD"


def test_head_answers_like_get_without_a_body(server: ChatServer) -> None:
    get, head = request(server, "GET", "/health"), request(server, "HEAD", "/health")
    assert head.status == 200 and head.body == b""
    assert head.headers["content-length"] == get.headers["content-length"]
    assert head.headers["content-type"] == get.headers["content-type"]
    wrong = request(server, "HEAD", CHAT)  # an error to HEAD has no body either
    assert (wrong.status, wrong.headers["allow"], wrong.body) == (405, "POST", b"")


def test_one_model_by_id(server: ChatServer) -> None:
    doc = request(server, "GET", "/v1/models/tiny").json()
    assert (doc["id"], doc["object"], doc["context_length"]) == ("tiny", "model", 128)
    err = error_of(request(server, "GET", "/v1/models/gpt-4"), 404, "model")
    assert err["code"] == "model_not_found" and "gpt-4" in err["message"]


def test_keep_alive_serves_several_requests_on_one_connection() -> None:
    with running(max_requests=3) as s:
        conn = http.client.HTTPConnection("127.0.0.1", port_of(s), timeout=5)
        seen = []
        for path in ("/health", "/v1/models", "/health"):
            conn.request("GET", path)
            resp = conn.getresponse()
            resp.read()
            seen.append((resp.status, resp.getheader("connection"), id(conn.sock)))
        conn.close()
    assert [status for status, _, _ in seen] == [200, 200, 200]
    assert [c for _, c, _ in seen] == ["keep-alive", "keep-alive", "close"]  # max 3 requests
    assert len({sock for _, _, sock in seen[:2]}) == 1, "the same socket served both"


def test_a_kept_alive_connection_is_closed_when_idle_or_asked() -> None:
    with running(idle_timeout=0.3) as s:
        with socket.create_connection(("127.0.0.1", port_of(s)), timeout=5) as sock:
            sock.sendall(f"GET /health HTTP/1.1\r\n{host(s)}\r\n".encode())
            data = b""
            while chunk := sock.recv(65536):  # ends when the idle connection is closed
                data += chunk
        assert data.count(b"HTTP/1.1 200 OK") == 1 and b"Keep-Alive: timeout=0.3" in data
        closed = raw(s, f"GET /health HTTP/1.1\r\n{host(s)}Connection: close\r\n\r\n".encode())
        assert status_of(closed) == 200 and b"Connection: close" in closed
        old = raw(s, f"GET /health HTTP/1.0\r\n{host(s)}\r\n".encode())  # 1.0: close by default
        assert status_of(old) == 200


def test_pipelined_requests_are_answered_in_order(server: ChatServer) -> None:
    one = f"GET /health HTTP/1.1\r\n{host(server)}\r\n"
    last = f"GET /nope HTTP/1.1\r\n{host(server)}\r\n"
    data = raw(server, (one + one + last).encode())
    statuses = [int(x.split(b" ")[0]) for x in data.split(b"HTTP/1.1 ")[1:]]
    assert statuses == [200, 200, 404]


# -- slowloris -----------------------------------------------------------------------------------


def test_the_head_has_a_deadline_however_slowly_it_drips() -> None:
    with running(read_timeout=5.0, head_timeout=0.5) as s:
        with socket.create_connection(("127.0.0.1", port_of(s)), timeout=5) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\n")
            answer = b""
            for _ in range(100):  # one byte every 0.05 s: each read waits far less than 5 s
                try:
                    sock.sendall(b"X")
                    time.sleep(0.05)
                    sock.setblocking(False)
                    answer += sock.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    break
                finally:
                    sock.setblocking(True)
                if answer:
                    break
        assert status_of(answer) == 408


def test_the_deadline_on_a_fake_clock() -> None:
    a, b = socket.socketpair()
    now = [100.0]
    reader = SocketReader(a, stall=5.0, clock=lambda: now[0])
    try:
        reader.expect("head", 10.0)
        b.sendall(b"GET / HTTP/1.1\r\nHost: x")
        rfile = io.BufferedReader(reader)
        now[0] = 109.0
        assert rfile.peek(1)  # within the deadline
        now[0] = 110.5
        with pytest.raises(HttpError) as e:
            read_head(rfile)
        assert e.value.status == 408
    finally:
        a.close()
        b.close()


def drip(port: int, stop: threading.Event, connects: list[int]) -> None:
    """A slowloris client: a head one byte at a time, reconnecting when closed (bounded)."""
    for _ in range(30):
        if stop.is_set():
            return
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
                connects.append(1)
                sock.sendall(b"GET / HTTP/1.1\r\n")
                for _ in range(200):
                    if stop.wait(0.05):
                        return
                    sock.sendall(b"X")
        except OSError:
            time.sleep(0.01)


def test_normal_requests_are_served_while_50_connections_drip() -> None:
    with running(max_connections=30, max_per_client=30, read_timeout=5.0) as s:
        stop, connects = threading.Event(), list[int]()
        drippers = [
            threading.Thread(target=drip, args=(port_of(s), stop, connects)) for _ in range(50)
        ]
        for t in drippers:
            t.start()
        try:
            for _ in range(250):  # until every slot is full and evicted drippers came back
                if s.connections >= 30 and len(connects) > 60:
                    break
                time.sleep(0.02)
            assert s.connections >= 30 and len(connects) > 60
            statuses = [request(s, "GET", "/health").status for _ in range(5)]
            chat = request(s, "POST", CHAT, HELLO).status
        finally:
            stop.set()
            for t in drippers:
                t.join(10)
    assert statuses == [200] * 5 and chat == 200


def test_a_connection_beyond_the_limit_gets_503_when_all_are_busy() -> None:
    with running(max_connections=2, max_per_client=2, read_timeout=5.0) as s:
        busy = []
        for _ in range(2):  # two connections in their body phase: not to be closed
            sock = socket.create_connection(("127.0.0.1", port_of(s)), timeout=5)
            sock.sendall(f"POST {CHAT} HTTP/1.1\r\n{host(s)}Content-Length: 10\r\n\r\n{{".encode())
            busy.append(sock)
        try:
            for _ in range(100):
                if s.connections == 2 and all(
                    c.reader.phase == "body" for c in list(s._conns.values())
                ):
                    break
                time.sleep(0.02)
            response = raw(s, f"GET /health HTTP/1.1\r\n{host(s)}\r\n".encode())
            assert status_of(response) == 503 and b"Retry-After: " in response
        finally:
            for sock in busy:
                sock.close()


# -- bursts and Retry-After ----------------------------------------------------------------------


def test_a_burst_of_16_chats_is_served_at_default_settings() -> None:
    with running(scripted_engine()) as s:  # the default queue
        statuses: list[int] = []
        gate = threading.Barrier(16)

        def one() -> None:
            gate.wait(5)
            statuses.append(request(s, "POST", CHAT, HELLO).status)

        threads = [threading.Thread(target=one) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert statuses == [200] * 16


def test_retry_after_is_the_backlog_times_the_measured_turn() -> None:
    now = [0.0]
    gate = Gate(waiting=3, timeout=60, clock=lambda: now[0])
    assert gate.retry_after(default=2) == 2  # nothing timed yet: the default per turn
    for _ in range(2):
        with gate.turn():
            now[0] += 1.5
    assert gate.average == pytest.approx(1.5)
    with gate.turn():
        assert gate.backlog == 1 and gate.retry_after(default=2) == math.ceil(1 * 1.5)
        now[0] += 1.5
    gate.backlog = 3  # as if three were admitted
    assert gate.retry_after(default=2) == 5  # 3 × 1.5 = 4.5, rounded up
    gate.backlog, gate.average = 1, 0.01
    assert gate.retry_after(default=2) == 1  # at least 1


def test_a_backlog_longer_than_the_queue_timeout_is_refused_at_once() -> None:
    gate = Gate(waiting=10, timeout=1.0)
    gate.average = 0.6
    with gate.turn():
        gate.backlog = 2  # 2 × 0.6 s > 1 s: a newcomer would time out anyway
        with pytest.raises(Exception, match="would take"), gate.turn():
            pass

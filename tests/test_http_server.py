"""The chat server, started for real on a loopback port: every route and every error status."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator

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

from framework.http_server import ChatServer
from framework.serving import ChatEngine

CHAT = "/v1/chat/completions"
HELLO = {"messages": [{"role": "user", "content": "hello"}], "max_tokens": 8}


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with running(read_timeout=0.5, queue_size=2) as s:
        yield s


def chat(server: ChatServer, **fields: object) -> Answer:
    return request(server, "POST", CHAT, {**HELLO, **fields})


def error_of(answer: Answer, status: int) -> dict[str, object]:
    assert answer.status == status, answer.body
    assert answer.headers["content-type"] == "application/json"
    err = answer.json()["error"]
    assert isinstance(err["message"], str) and err["message"]
    assert err["type"] == ("invalid_request_error" if status < 500 else "server_error")
    return dict(err)


# -- the routes -----------------------------------------------------------------------------


def test_health_and_models(server: ChatServer) -> None:
    health = request(server, "GET", "/health")
    assert health.status == 200 and health.json()["status"] == "ok"
    assert health.json()["model"] == "tiny"
    models = request(server, "GET", "/v1/models").json()
    assert models["object"] == "list" and [m["id"] for m in models["data"]] == ["tiny"]


def test_the_chat_page_is_one_self_contained_file(server: ChatServer) -> None:
    page = request(server, "GET", "/")
    assert page.status == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    html = page.body.decode("utf-8")
    assert html.startswith("<!doctype html>") and "/v1/chat/completions" in html
    assert "http://" not in html and "https://" not in html, "no CDN, no outside resource"
    assert "<script src" not in html and 'rel="stylesheet"' not in html


def test_a_completion_has_the_openai_shape(server: ChatServer) -> None:
    answer = chat(server, seed=1)
    assert answer.status == 200 and answer.headers["content-type"] == "application/json"
    doc = answer.json()
    assert doc["object"] == "chat.completion" and doc["id"].startswith("chatcmpl-")
    assert doc["model"] == "tiny" and isinstance(doc["created"], int)
    (choice,) = doc["choices"]
    assert choice["message"]["role"] == "assistant"
    assert isinstance(choice["message"]["content"], str)
    assert choice["finish_reason"] in ("stop", "length")
    usage = doc["usage"]
    assert 0 < usage["completion_tokens"] <= 8 and usage["prompt_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_seed_temperature_and_top_p_steer_the_sampler(server: ChatServer) -> None:
    def text(**fields: object) -> str:
        answer = chat(server, max_tokens=12, **fields)
        assert answer.status == 200, answer.body
        return str(answer.json()["choices"][0]["message"]["content"])

    assert text(seed=7) == text(seed=7)
    assert len({text(seed=s) for s in (1, 2, 3, 4)}) > 1  # a random model, 12 random tokens
    assert text(temperature=0) == text(temperature=0, seed=99)  # greedy ignores the seed
    assert text(seed=5, top_p=0.0) == text(temperature=0)  # top_p 0 keeps the best id only


def test_max_tokens_bounds_the_reply(server: ChatServer) -> None:
    doc = chat(server, max_tokens=3, temperature=0).json()
    assert doc["usage"]["completion_tokens"] <= 3
    if doc["usage"]["completion_tokens"] == 3:
        assert doc["choices"][0]["finish_reason"] == "length"


def test_a_stream_is_server_sent_events_that_add_up_to_the_reply(server: ChatServer) -> None:
    whole = chat(server, seed=3, max_tokens=16).json()
    answer = chat(
        server, seed=3, max_tokens=16, stream=True, stream_options={"include_usage": True}
    )
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    found = events(answer.body)
    assert found[-1] == "[DONE]"
    chunks = found[:-1]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert content == whole["choices"][0]["message"]["content"]
    finish = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finish[-1] == whole["choices"][0]["finish_reason"] and set(finish[:-1]) == {None}
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == whole["usage"]


def test_chinese_in_and_out(server: ChatServer) -> None:
    messages = [
        {"role": "system", "content": "你是一个简洁的助手。"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "你好，"}, {"type": "text", "text": "世界"}],
        },
    ]
    answer = chat(server, messages=messages, seed=2)
    assert answer.status == 200
    assert answer.json()["usage"]["prompt_tokens"] > 3 * len("你是一个简洁的助手。")


def test_a_long_conversation_is_trimmed_to_the_context(server: ChatServer) -> None:
    turns = [{"role": r, "content": "x" * 100} for r in ("user", "assistant") * 10]
    doc = chat(server, messages=[*turns, {"role": "user", "content": "last"}]).json()
    assert doc["usage"]["prompt_tokens"] + doc["usage"]["completion_tokens"] <= 128


# -- every error status, and the server goes on answering -------------------------------------


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"GARBAGE\r\n\r\n", "no spaces"),
        (b"get /health HTTP/1.1\r\n\r\n", "a lowercase method"),
        (b"GET  /health HTTP/1.1\r\n\r\n", "two spaces"),
        (b"GET /health HTTP/9\r\n\r\n", "a bad version"),
        (b"GET /\xff HTTP/1.1\r\n\r\n", "not ASCII"),
        (b"GET /health HTTP/1.1\r\nno colon here\r\n\r\n", "a header without a colon"),
    ],
)
def test_a_malformed_request_is_400(server: ChatServer, data: bytes, why: str) -> None:
    response = raw(server, data)
    assert status_of(response) == 400, why
    assert body_json(response)["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (b"{not json", None),
        (b"[1, 2]", None),
        (b'{"messages": []}', "messages"),
        (b'{"messages": [{"role": "robot", "content": "x"}]}', "messages[0]"),
        (b'{"messages": [{"role": "user", "content": 5}]}', "messages[0]"),
        (b'{"messages": [{"role": "user", "content": "x"}], "temperature": "hot"}', "temperature"),
        (b'{"messages": [{"role": "user", "content": "x"}], "temperature": 9}', "temperature"),
        (b'{"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}', "max_tokens"),
        (b'{"messages": [{"role": "user", "content": "x"}], "n": 2}', "n"),
        (b'{"messages": [{"role": "user", "content": "x"}], "stream": "yes"}', "stream"),
        (b'{"messages": [{"role": "user", "content": "x"}], "seed": 1.5}', "seed"),
    ],
)
def test_a_bad_json_body_is_400_naming_the_field(
    server: ChatServer, body: bytes, param: str | None
) -> None:
    err = error_of(request(server, "POST", CHAT, body), 400)
    assert err["param"] == param


def test_unknown_route_404_and_wrong_method_405(server: ChatServer) -> None:
    error_of(request(server, "GET", "/v1/nothing"), 404)
    wrong = request(server, "GET", CHAT)
    error_of(wrong, 405)
    assert wrong.headers["allow"] == "POST"
    assert request(server, "DELETE", "/health").headers["allow"] == "GET, HEAD"


def test_a_body_over_64_kib_is_413(server: ChatServer) -> None:
    big = json.dumps({"messages": [{"role": "user", "content": "x" * 70_000}]}).encode()
    error_of(request(server, "POST", CHAT, big), 413)
    head = f"POST {CHAT} HTTP/1.1\r\n{host(server)}Content-Length: {10**9}\r\n\r\n".encode()
    assert status_of(raw(server, head)) == 413  # refused on the header, nothing read


def test_a_post_without_content_length_is_411(server: ChatServer) -> None:
    assert status_of(raw(server, f"POST {CHAT} HTTP/1.1\r\n{host(server)}\r\n".encode())) == 411
    chunked = (
        f"POST {CHAT} HTTP/1.1\r\n{host(server)}Transfer-Encoding: chunked\r\n\r\n"
        "2\r\n{}\r\n0\r\n\r\n"
    )
    assert status_of(raw(server, chunked.encode())) == 411


@pytest.mark.parametrize(
    "data",
    [
        b"GET /health HTTP/1.1\r\n",
        b"GET /he",
        f"POST {CHAT} HTTP/1.1\r\nHost: HOST\r\nContent-Length: 50\r\n\r\n{{".encode(),
    ],
    ids=["headers never end", "request line never ends", "body never ends"],
)
def test_a_client_that_stalls_gets_408(server: ChatServer, data: bytes) -> None:
    start = time.monotonic()
    data = data.replace(b"Host: HOST\r\n", host(server).encode())
    response = raw(server, data)  # the fixture's read timeout is 0.5 s
    assert status_of(response) == 408
    assert time.monotonic() - start < 3


def test_too_long_request_line_414_and_too_many_headers_431(server: ChatServer) -> None:
    assert status_of(raw(server, b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n")) == 414
    many = b"".join(b"X-%d: y\r\n" % i for i in range(101))
    assert status_of(raw(server, b"GET /health HTTP/1.1\r\n" + many + b"\r\n")) == 431


def test_a_full_queue_is_503_with_retry_after() -> None:
    with running(queue_size=0, retry_after=3) as server:
        with server.service.gate.turn():  # a generation is running; no one may wait
            answer = chat(server)
            error_of(answer, 503)
            assert answer.headers["retry-after"] == "3"
        assert chat(server).status == 200  # the turn is free again


def test_a_queued_request_waits_for_its_turn() -> None:
    with running(queue_size=1) as server:
        results: list[int] = []
        with server.service.gate.turn():
            waiter = threading.Thread(target=lambda: results.append(chat(server).status))
            waiter.start()
            time.sleep(0.3)  # the waiter is queued now
            assert results == []
        waiter.join(10)
        assert results == [200]


def test_the_server_survives_an_internal_error() -> None:
    class Broken(ChatEngine):
        def reply(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
            raise RuntimeError("a bug")

    engine = tiny_engine()
    engine.__class__ = Broken
    with running(engine) as server:
        error_of(chat(server), 500)
        assert request(server, "GET", "/health").status == 200


def test_a_client_that_leaves_mid_stream_frees_the_model() -> None:
    with running(queue_size=0) as server:
        body = json.dumps({**HELLO, "max_tokens": 100, "stream": True}).encode()
        head = f"POST {CHAT} HTTP/1.1\r\n{host(server)}Content-Length: {len(body)}\r\n\r\n"
        head = head.encode()
        with socket.create_connection(("127.0.0.1", port_of(server)), timeout=5) as s:
            s.sendall(head + body)
            assert s.recv(100).startswith(b"HTTP/1.1 200 OK")
        for _ in range(50):  # the generation notices the closed socket and ends
            answer = chat(server)
            if answer.status == 200:
                break
            time.sleep(0.05)
        assert answer.status == 200


def test_health_answers_while_a_reply_is_being_generated() -> None:
    go_on = threading.Event()
    with running(scripted_engine(hold=go_on)) as server:
        body = json.dumps({**HELLO, "stream": True})
        conn = http.client.HTTPConnection("127.0.0.1", port_of(server), timeout=10)
        conn.request("POST", CHAT, body=body)
        stream = conn.getresponse()
        stream.readline()  # the first event is out: the model is generating, and waits
        statuses: list[int] = []

        def health() -> None:
            statuses.append(request(server, "GET", "/health").status)

        threads = [threading.Thread(target=health) for _ in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert statuses == [200] * 20
        assert server.service.gate.busy, "the 20 answers came while the reply was generated"
        go_on.set()
        assert stream.read().endswith(b"data: [DONE]\n\n")
        conn.close()


def test_every_error_above_left_the_server_answering(server: ChatServer) -> None:
    for _ in range(50):
        raw(server, b"\x00\xff garbage \r\n\r\n")
    assert request(server, "GET", "/health").status == 200


def test_one_line_is_logged_per_request() -> None:
    lines: list[str] = []
    with running(log=lines) as server:
        request(server, "GET", "/health")
        request(server, "GET", "/nope")
    assert len(lines) == 2
    # each request's handler thread logs once its response is sent, so the order of the
    # two lines is the order in which two threads finished: not part of the contract
    first, second = sorted(lines, key=lambda line: "/nope" in line)
    assert '"GET /health" 200' in first and '"GET /nope" 404' in second


def test_a_stopping_server_lets_the_request_in_flight_finish_and_closes_idle_ones() -> None:
    logged: list[str] = []
    in_log, release = threading.Event(), threading.Event()

    def slow_log(line: str) -> None:  # a request's last step is its log line
        if "/v1/models" in line:  # the request in flight: it waits here
            in_log.set()
            release.wait(10)
        logged.append(line)

    with running() as server:
        server.service.log = slow_log
        idle = socket.create_connection(("127.0.0.1", port_of(server)), timeout=5)
        idle.sendall(f"GET /health HTTP/1.1\r\n{host(server)}\r\n".encode())
        assert b" 200 " in idle.recv(65536)  # answered; the connection stays open, idle
        busy = threading.Thread(target=lambda: request(server, "GET", "/v1/models"))
        busy.start()
        assert in_log.wait(10)
        server.service.stopping.set()
        drained: list[tuple[bool, list[str]]] = []  # drain's answer, and the log by then
        drainer = threading.Thread(target=lambda: drained.append((server.drain(30), logged[:])))
        drainer.start()
        assert idle.recv(1) == b""  # the idle connection is closed, not waited for
        drainer.join(0.3)  # the request in flight is held: a drain that waits cannot end
        assert drainer.is_alive() and drained == []
        release.set()
        drainer.join(30)
        ((done, by_then),) = drained
        assert done is True
        assert any('"GET /v1/models" 200' in line for line in by_then), by_then
        busy.join(10)
        idle.close()

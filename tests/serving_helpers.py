"""A real chat server on a free loopback port with a tiny random model, for the tests.

The replies are gibberish (the weights are random); the tests look at the protocol.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from framework.chat_service import ChatService, ServerConfig
from framework.config import ModelConfig
from framework.http_server import ChatServer
from framework.model import GPTModel, init_weights
from framework.serving import ChatEngine, Reply
from framework.tokenizer import ByteTokenizer

TINY = ModelConfig(260, 32, 2, 2, 128, 128)  # the tiny preset with a longer context


def tiny_engine(name: str = "tiny") -> ChatEngine:
    model = GPTModel(TINY)
    init_weights(model, seed=0)
    return ChatEngine(model, ByteTokenizer(), name)


@contextmanager
def running(
    engine: ChatEngine | None = None, log: list[str] | None = None, **limits: Any
) -> Iterator[ChatServer]:
    """A server on 127.0.0.1:<free port>, serving in a thread; shut down afterwards."""
    config = ServerConfig(port=0, **{"read_timeout": 2.0, **limits})
    service = ChatService(engine or tiny_engine(), config, log=None if log is None else log.append)
    server = ChatServer(service)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        service.stopping.set()
        server.shutdown()
        server.drain(5)  # as `serve` does: every request's response and log line, first
        server.server_close()
        thread.join(5)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def port_of(server: ChatServer) -> int:
    port: int = server.socket.getsockname()[1]
    return port


def request(
    server: ChatServer,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    """One request with http.client; a dict body is sent as JSON."""
    conn = http.client.HTTPConnection("127.0.0.1", port_of(server), timeout=10)
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    conn.request(method, path, body=data, headers=headers or {})
    resp = conn.getresponse()
    answer = Answer(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    conn.close()
    return answer


def host(server: ChatServer) -> str:
    """The Host header line (with its CRLF) that the server answers to."""
    return f"Host: 127.0.0.1:{port_of(server)}\r\n"


def raw(server: ChatServer, data: bytes, wait: float = 5.0) -> bytes:
    """Send bytes on a fresh connection; everything the server sends back until it closes."""
    with socket.create_connection(("127.0.0.1", port_of(server)), timeout=wait) as s:
        s.sendall(data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def body_json(response: bytes) -> Any:
    return json.loads(response.split(b"\r\n\r\n", 1)[1])


def events(body: bytes) -> list[Any]:
    """The data of each server-sent event ('[DONE]' as the str)."""
    out: list[Any] = []
    for block in body.decode("utf-8").split("\n\n"):
        if block.startswith("data: "):
            data = block[len("data: ") :]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


class ScriptedEngine(ChatEngine):
    """Streams a fixed reply one character at a time: `reply_for(last user message)`.

    `delay` seconds before each character; with `hold` set, waits for it after the first
    character (the test decides when the reply may go on). `calls` records each call's
    system prompt, messages and settings.
    """

    delay = 0.0
    hold: threading.Event | None = None
    calls: list[tuple[str, list[tuple[str, str]], Any]]

    @staticmethod
    def reply_for(text: str) -> str:
        return f"收到：{text}。This reply streams one character at a time. 这是逐字流式输出的回复。"

    def reply(self, system, messages, settings=None, on_text=None):  # type: ignore[no-untyped-def]
        self.calls.append((system, list(messages), settings))
        prompt = self.prompt_ids(system, messages)
        text = self.reply_for(messages[-1][1])
        limit = settings.max_tokens if settings and settings.max_tokens else len(text)
        text = text[:limit]
        for k, char in enumerate(text):
            time.sleep(self.delay)
            if k == 1 and self.hold is not None:
                self.hold.wait(10)
            if on_text is not None:
                on_text(char)
        finish = "length" if limit < len(self.reply_for(messages[-1][1])) else "stop"
        return Reply(text, len(prompt), len(text), finish)


def scripted_engine(delay: float = 0.0, hold: threading.Event | None = None) -> ScriptedEngine:
    engine = tiny_engine()
    engine.__class__ = ScriptedEngine
    assert isinstance(engine, ScriptedEngine)
    engine.delay, engine.hold, engine.calls = delay, hold, []
    return engine

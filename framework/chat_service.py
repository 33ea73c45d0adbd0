"""The routes of the chat service: a request in, a response out, no sockets.

`ChatService.handle(rfile, wfile, peer)` serves one connection's request::

    GET  /                       the chat page (framework/web/chat.html)
    GET  /health                 {"status": "ok", "model": ..., "busy": ...}
    GET  /v1/models              the model list
    POST /v1/chat/completions    a reply: one JSON object, or server-sent events with
                                 "stream": true (data: {chunk} ... data: [DONE])

Reading the request is `framework.http_request` (`read_head`, `read_body`), with its statuses (400,
408, 411, 413, 414, 431); an unknown route is 404, a wrong method 405 (with ``Allow``),
a full generation queue 503 (with ``Retry-After``). Every error has a JSON body in the
OpenAI API's shape, and nothing a client sends makes `handle` raise.

What this module deliberately does not do: listen or spawn threads
(`framework.http_server`), generate (`framework.serving`), keep connections alive.

Where the idea comes from: the C course's `http_server.c` routes and OpenAI shapes, whose
handler parsed JSON by searching for key names and dropped the last message whatever its
role; the streaming format is the OpenAI API's server-sent events.

Example:
    >>> import io, json
    >>> from framework.config import tiny_config
    >>> from framework.model import GPTModel
    >>> from framework.serving import ChatEngine
    >>> from framework.tokenizer import ByteTokenizer
    >>> service = ChatService(ChatEngine(GPTModel(tiny_config()), ByteTokenizer(), "tiny"))
    >>> out = io.BytesIO()
    >>> service.handle(io.BytesIO(b"GET /health HTTP/1.1\\r\\n\\r\\n"), out, "test")
    >>> json.loads(out.getvalue().split(b"\\r\\n\\r\\n")[1])["model"]
    'tiny'
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from io import BufferedIOBase

from framework import http_protocol, http_request
from framework.http_protocol import REASONS
from framework.http_request import MAX_BODY, HttpError, Request, error_body
from framework.openai_api import ApiError, chunk, completion, model_list, parse_chat_request
from framework.serving import Busy, ChatEngine, Gate, Reply, ReplySettings

__all__ = ["JSON", "ChatService", "ServerConfig"]

JSON = "application/json"


@dataclass
class ServerConfig:
    """Where to listen and the limits that keep the server answering."""

    host: str = "127.0.0.1"  # loopback only unless asked otherwise
    port: int = 8080  # 0: any free port
    max_body: int = MAX_BODY  # bytes; a larger request body gets 413
    read_timeout: float = 10.0  # seconds a client may stall while sending or reading (408)
    queue_size: int = 4  # requests that may wait while one generates; beyond them 503
    queue_timeout: float = 60.0  # longest wait for a turn before 503
    retry_after: int = 2  # seconds, in the Retry-After header of a 503
    max_connections: int = 256  # open connections; beyond them an immediate 503


def _page() -> bytes:
    return resources.files("framework").joinpath("web", "chat.html").read_bytes()


class ChatService:
    """The routes, independent of the socket server: reads a request, writes a response.

    `parse_request_line` and `build_response` are the two protocol pieces of lab10 and
    may be replaced (by a student's own functions, for instance).

    Attributes:
        engine: the model that answers.
        config: the limits.
        gate: the generation queue.
        stopping: set when the server shuts down; running generations end early.
    """

    def __init__(
        self,
        engine: ChatEngine,
        config: ServerConfig | None = None,
        log: Callable[[str], object] | None = None,
    ) -> None:
        self.engine = engine
        self.config = config or ServerConfig()
        self.gate = Gate(self.config.queue_size, self.config.queue_timeout)
        self.log = log
        self.stopping = threading.Event()
        self.parse_request_line = http_protocol.parse_request_line
        self.build_response = http_protocol.build_response
        self.started = int(time.time())
        self.page = _page()
        self.routes: dict[str, dict[str, Callable[[Request, BufferedIOBase], int]]] = {
            "/": {"GET": self._index},
            "/health": {"GET": self._health},
            "/v1/models": {"GET": self._models},
            "/v1/chat/completions": {"POST": self._chat},
        }

    # -- one connection -------------------------------------------------------------------
    def handle(self, rfile: BufferedIOBase, wfile: BufferedIOBase, peer: str) -> None:
        """Serve the one request of a connection; never raises."""
        start, req, drain = time.perf_counter(), None, True
        try:
            req = http_request.read_head(rfile, self.parse_request_line)
            handler = self._route(req)
            if req.headers.get("expect", "").lower() == "100-continue":  # curl, for instance
                drain = False  # the client sends the body only once it is invited
                self._invite(wfile, req)
            req.body = http_request.read_body(rfile, req, self.config.max_body)
            status = handler(req, wfile)
        except HttpError as e:
            if req is not None and drain and not req.body and e.status != 408:
                http_request.discard_body(rfile, req)  # so that the close does not reset
            status = self._try_send(wfile, e)
        except (BrokenPipeError, ConnectionError, TimeoutError):
            status = 499  # the client went away or stopped reading
        except Exception as e:  # a bug must not take the server down
            print(f"internal error: {type(e).__name__}: {e}", file=sys.stderr)
            status = self._try_send(wfile, HttpError(500, "internal error", "internal"))
        if self.log is not None:
            what = f"{req.method} {req.target}" if req else "-"
            ms = (time.perf_counter() - start) * 1000
            self.log(f'{peer} "{what}" {status} {ms:.0f} ms')

    def _invite(self, wfile: BufferedIOBase, req: Request) -> None:
        """Answer ``Expect: 100-continue``: 413 at once for a body too large, else 100."""
        size = http_request.content_length(req) or 0
        if size > self.config.max_body:
            why = f"the body is {size} bytes, more than {self.config.max_body}"
            raise HttpError(413, why, "too_large")
        wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _route(self, req: Request) -> Callable[[Request, BufferedIOBase], int]:
        methods = self.routes.get(req.path)
        if methods is None:
            known = ", ".join(f"{m} {p}" for p, ms in self.routes.items() for m in ms)
            raise HttpError(404, f"no route {req.path!r}; known: {known}", "not_found")
        handler = methods.get(req.method)
        if handler is None:
            allow = ", ".join(methods)
            why = f"{req.method} is not allowed on {req.path}; use {allow}"
            raise HttpError(405, why, "method_not_allowed", [("Allow", allow)])
        return handler

    def send(
        self,
        wfile: BufferedIOBase,
        status: int,
        content_type: str,
        body: str | bytes,
        headers: list[tuple[str, str]] | None = None,
    ) -> int:
        """Write a whole response (extra headers go right after the status line)."""
        raw = self.build_response(status, REASONS.get(status, "Unknown"), content_type, body)
        if headers:  # the header lines alone, checked by response_head
            extra = http_protocol.response_head(status, "x", headers)
            lines = extra[extra.index(b"\r\n") + 2 : -2]
            cut = raw.index(b"\r\n") + 2
            raw = raw[:cut] + lines + raw[cut:]
        wfile.write(raw)
        return status

    def _try_send(self, wfile: BufferedIOBase, error: HttpError) -> int:
        try:
            return self.send(wfile, error.status, JSON, error_body(error), error.headers)
        except OSError:
            return error.status

    # -- routes ---------------------------------------------------------------------------
    def _index(self, req: Request, wfile: BufferedIOBase) -> int:
        return self.send(wfile, 200, "text/html; charset=utf-8", self.page)

    def _health(self, req: Request, wfile: BufferedIOBase) -> int:
        body = {"status": "ok", "model": self.engine.name, "busy": self.gate.busy}
        return self.send(wfile, 200, JSON, json.dumps(body))

    def _models(self, req: Request, wfile: BufferedIOBase) -> int:
        return self.send(wfile, 200, JSON, json.dumps(model_list(self.engine.name, self.started)))

    def _chat(self, req: Request, wfile: BufferedIOBase) -> int:
        try:
            chat = parse_chat_request(req.body)
        except ApiError as e:
            raise HttpError(400, e.message, "invalid_request", param=e.param) from None
        head = 0  # leading system messages become the system prompt
        while head < len(chat.messages) and chat.messages[head][0] == "system":
            head += 1
        turn = _Turn(
            system="\n".join(content for _, content in chat.messages[:head]),
            messages=chat.messages[head:],
            settings=ReplySettings(
                chat.temperature,
                chat.top_k,
                chat.top_p,
                chat.max_tokens,
                chat.seed,
                tuple(chat.stop),
            ),
            rid=f"chatcmpl-{uuid.uuid4().hex[:24]}",
            created=int(time.time()),
        )
        try:
            with self.gate.turn():  # a 503 comes before any byte of the answer
                if chat.stream:
                    return self._stream(wfile, turn, chat.include_usage)
                reply = self._reply(turn)
        except Busy as e:
            retry = [("Retry-After", str(self.config.retry_after))]
            raise HttpError(
                503, f"the model is busy: {e}; try again shortly", "overloaded", retry
            ) from None
        usage = (reply.prompt_tokens, reply.completion_tokens)
        doc = completion(
            turn.rid, turn.created, self.engine.name, reply.text, reply.finish_reason, usage
        )
        return self.send(wfile, 200, JSON, json.dumps(doc, ensure_ascii=False))

    def _reply(self, turn: _Turn, on_text: Callable[[str], object] | None = None) -> Reply:
        def guarded(piece: str) -> None:
            if self.stopping.is_set():
                raise ConnectionAbortedError("the server is shutting down")
            if on_text is not None:
                on_text(piece)

        try:
            return self.engine.reply(turn.system, turn.messages, turn.settings, guarded)
        except (TypeError, ValueError) as e:  # e.g. a context too small for the tags
            raise HttpError(400, str(e), "invalid_request", param="messages") from None

    def _stream(self, wfile: BufferedIOBase, turn: _Turn, usage: bool) -> int:
        """Server-sent events: a role chunk, content chunks, a finish chunk, [DONE]."""

        def event(
            delta: dict[str, str] | None,
            finish: str | None = None,
            counts: tuple[int, int] | None = None,
        ) -> None:
            doc = chunk(turn.rid, turn.created, self.engine.name, delta, finish, counts)
            wfile.write(b"data: " + json.dumps(doc, ensure_ascii=False).encode() + b"\n\n")

        head = [
            ("Content-Type", "text/event-stream; charset=utf-8"),
            ("Cache-Control", "no-cache"),
            ("Connection", "close"),
        ]
        wfile.write(http_protocol.response_head(200, "OK", head))
        event({"role": "assistant", "content": ""})
        try:
            reply = self._reply(turn, lambda piece: event({"content": piece}))
        except HttpError as e:  # the head is out: the error goes as an event
            wfile.write(b"data: " + error_body(e).encode() + b"\n\n")
            return e.status
        event({}, reply.finish_reason)
        if usage:
            event(None, None, (reply.prompt_tokens, reply.completion_tokens))
        wfile.write(b"data: [DONE]\n\n")
        return 200


@dataclass
class _Turn:
    """One chat request, ready to generate."""

    system: str
    messages: list[tuple[str, str]]
    settings: ReplySettings
    rid: str
    created: int

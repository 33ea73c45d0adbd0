"""The routes of the chat service: a request in, a response out, no sockets.

`ChatService.handle(rfile, wfile, peer)` serves one request of a connection::

    GET  /                       the chat page (framework/web/chat.html)
    GET  /health                 {"status": "ok", "model": ..., "busy": ...}
    GET  /v1/models              the model list (with the model's context length)
    GET  /v1/models/{id}         one model; 404 for another id
    POST /v1/chat/completions    a reply: one JSON object, or server-sent events with
                                 "stream": true (data: {chunk} ... data: [DONE])

Every GET route also answers HEAD, and OPTIONS answers with ``Allow`` (and, for an origin
given with ``--cors``, the CORS preflight). Reading the request is `framework.http_request`
(`read_head`, `read_body`), with its statuses (400, 408, 411, 413, 414, 431); then 505 a
version other than HTTP/1.0 or 1.1, 417 an ``Expect`` other than ``100-continue``; 421 a
``Host`` the server does not answer to (DNS rebinding: a page on ``evil.example`` whose
name now resolves to 127.0.0.1) and 400 an HTTP/1.1 request without ``Host``, once the
listening server has set `ChatService.hosts`; 403 a page on another origin that was not
allowed with ``--cors`` (so it cannot make the model generate); 404 an unknown route, 405
a wrong method (with ``Allow``), 503 a full generation queue (with a ``Retry-After``
computed from the backlog, served `batch_size` at a time). A prompt that cannot be
built is a 400 before any byte of a
stream. Every error has a JSON body in the OpenAI API's shape, and nothing a client sends
makes `handle` raise. Given the connection's `SocketReader`, `handle` bounds the head and
the body by deadlines and may keep the connection open (HTTP/1.1 keep-alive) after a
successful answer that is not a stream; it returns whether it did.

What this module deliberately does not do: listen, spawn threads or loop over the
requests of a connection (`framework.http_server`), generate (`framework.serving`).

Where the idea comes from: the C course's `http_server.c` routes and OpenAI shapes, whose
handler parsed JSON by searching for key names and dropped the last message whatever its
role; the streaming format is the OpenAI API's server-sent events; RFC 9110 (Host, Expect,
OPTIONS), RFC 9112 §9 (persistent connections) and the Fetch standard (CORS).

Example:
    >>> import io, json
    >>> from framework.config import tiny_config
    >>> from framework.model import GPTModel
    >>> from framework.serving import ChatEngine
    >>> from framework.tokenizer import ByteTokenizer
    >>> service = ChatService(ChatEngine(GPTModel(tiny_config()), ByteTokenizer(), "tiny"))
    >>> out = io.BytesIO()
    >>> service.handle(io.BytesIO(b"GET /health HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"), out, "test")
    False
    >>> json.loads(out.getvalue().split(b"\\r\\n\\r\\n")[1])["model"]
    'tiny'
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from io import BufferedIOBase
from urllib.parse import unquote

from framework import http_protocol, http_request
from framework.blas import set_blas_threads
from framework.http_protocol import REASONS, host_allowed, rewrite_head
from framework.http_request import MAX_BODY, HttpError, Request, SocketReader, error_body
from framework.openai_api import (
    ApiError,
    ChatRequest,
    chunk,
    completion,
    model_entry,
    model_list,
    parse_chat_request,
)
from framework.serving import Busy, ChatEngine, Gate, Reply, ReplySettings

__all__ = ["JSON", "ChatService", "ServerConfig"]

JSON = "application/json"
VERSIONS = ("HTTP/1.0", "HTTP/1.1")
MODELS = "/v1/models/"  # GET /v1/models/{id}
DROPPED = ("connection", "keep-alive", "access-control-")  # set by the service, not lab10


@dataclass
class ServerConfig:
    """Where to listen and the limits that keep the server answering."""

    host: str = "127.0.0.1"  # loopback only unless asked otherwise
    port: int = 8080  # 0: any free port
    max_body: int = MAX_BODY  # bytes; a larger request body gets 413
    read_timeout: float = 10.0  # seconds one read or write may stall (408)
    head_timeout: float = 10.0  # seconds for the whole request line and headers (408)
    body_timeout: float = 30.0  # seconds for the whole body (408)
    idle_timeout: float = 5.0  # seconds a kept-alive connection may wait for a request
    max_requests: int = 100  # requests on one kept-alive connection; then it is closed
    queue_size: int = 32  # requests admitted beside the one generating; beyond them 503
    batch_size: int = 16  # of those admitted, decoded together (≤ queue_size); the rest wait
    queue_timeout: float = 60.0  # longest wait for a turn (measured or real) before 503
    retry_after: int = 2  # seconds per turn assumed in Retry-After until a turn is timed
    max_connections: int = 1024  # open connections; beyond them idle ones are closed, or 503
    max_per_client: int = 512  # open connections from one IP address, likewise
    allowed_hosts: tuple[str, ...] = ()  # more Host values to answer to: NAME or NAME:PORT
    cors_origins: tuple[str, ...] = ()  # origins whose pages may call the API ("*": any)


def _page() -> bytes:
    return resources.files("framework").joinpath("web", "chat.html").read_bytes()


@dataclass
class _Out:
    """Where one response goes and how: kept alive or not, with a body or not (HEAD)."""

    wfile: BufferedIOBase
    keep: bool  # the connection stays open after this response
    req: Request | None = None
    head_only: bool = False
    headers: list[tuple[str, str]] = field(default_factory=list)  # CORS, on every response


def _persistent(req: Request) -> bool:
    """Whether the client wants the connection kept open (RFC 9112 §9.3)."""
    tokens = {t.strip().lower() for t in req.headers.get("connection", "").split(",")}
    if "close" in tokens:
        return False
    return req.version == "HTTP/1.1" or "keep-alive" in tokens


class ChatService:
    """The routes, independent of the socket server: reads a request, writes a response.

    `parse_request_line` and `build_response` are the two protocol pieces of lab10 and
    may be replaced (by a student's own functions, for instance).

    Attributes:
        engine: the model that answers.
        config: the limits.
        gate: the generation queue.
        stopping: set when the server shuts down; running generations end early.
        hosts: the ``(name, port or None)`` pairs a ``Host`` header must name, set by the
            listening server; None (a service without a socket): no Host check.
    """

    def __init__(
        self,
        engine: ChatEngine,
        config: ServerConfig | None = None,
        log: Callable[[str], object] | None = None,
    ) -> None:
        self.engine = engine
        self.config = config or ServerConfig()
        c = self.config
        batch = min(c.batch_size, max(1, c.queue_size))  # a queue of 0 or 1: one at a time
        self.gate = Gate(c.queue_size, c.queue_timeout, batch=batch)
        engine.batch_size = batch
        set_blas_threads(1)  # the batch's products are small: a 2nd BLAS thread only spins
        self.log = log
        self.stopping = threading.Event()
        self.hosts: list[tuple[str, int | None]] | None = None
        self.parse_request_line = http_protocol.parse_request_line
        self.build_response = http_protocol.build_response
        self.started = int(time.time())
        self.page = _page()
        self.routes: dict[str, dict[str, Callable[[Request, _Out], int]]] = {
            "/": {"GET": self._index},
            "/health": {"GET": self._health},
            "/v1/models": {"GET": self._models},
            "/v1/chat/completions": {"POST": self._chat},
        }

    # -- one request ----------------------------------------------------------------------
    def handle(
        self,
        rfile: BufferedIOBase,
        wfile: BufferedIOBase,
        peer: str,
        reader: SocketReader | None = None,
        keep_alive: bool = False,
    ) -> bool:
        """Serve one request of a connection; never raises.

        Args:
            rfile, wfile: the connection's streams.
            peer: the client's address, for the log.
            reader: the connection's reader, whose deadlines bound the head and the body
                (None: no deadlines, as for an in-memory stream).
            keep_alive: whether the connection may stay open after this request.

        Returns:
            True if the connection stays open for another request.
        """
        start, out = time.perf_counter(), _Out(wfile, keep_alive)
        status = self._serve(rfile, out, reader)
        if self.log is not None:
            what = f"{out.req.method} {out.req.target}" if out.req else "-"
            ms = (time.perf_counter() - start) * 1000
            self.log(f'{peer} "{what}" {status} {ms:.0f} ms')
        return out.keep and status < 400 and not self.stopping.is_set()

    def _serve(self, rfile: BufferedIOBase, out: _Out, reader: SocketReader | None) -> int:
        drain = True
        try:
            _phase(reader, "head", self.config.head_timeout)
            out.req = req = http_request.read_head(rfile, self.parse_request_line)
            handler = self._admit(req, out)
            if req.headers.get("expect", "").lower() == "100-continue":  # curl, for instance
                drain = False  # the client sends the body only once it is invited
                self._invite(out.wfile, req)
            _phase(reader, "body", self.config.body_timeout)
            req.body = http_request.read_body(rfile, req, self.config.max_body)
            _phase(reader, "answer", None)
            return handler(req, out)
        except HttpError as e:
            out.keep = False
            if reader is not None and reader.evicted:
                return 499  # the server closed it to make room: no one to answer
            if out.req is not None and drain and not out.req.body and e.status != 408:
                http_request.discard_body(rfile, out.req)  # so that the close does not reset
            return self._try_send(out, e)
        except (BrokenPipeError, ConnectionError, TimeoutError):
            out.keep = False
            return 499  # the client went away or stopped reading
        except Exception as e:  # a bug must not take the server down
            out.keep = False
            print(f"internal error: {type(e).__name__}: {e}", file=sys.stderr)
            return self._try_send(out, HttpError(500, "internal error", "internal"))

    def _admit(self, req: Request, out: _Out) -> Callable[[Request, _Out], int]:
        """The checks of a head, in order; the handler that will answer it."""
        if req.version not in VERSIONS:
            why = f"this server speaks HTTP/1.0 and HTTP/1.1, not {req.version}"
            raise HttpError(505, why, "version_not_supported")
        self._check_host(req)
        out.headers = self._cors(req)
        expect = req.headers.get("expect")
        if expect is not None and expect.lower() != "100-continue":
            why = f"the only Expect this server meets is 100-continue, not {expect[:40]!r}"
            raise HttpError(417, why, "expectation_failed")
        out.keep = out.keep and _persistent(req)
        out.head_only = req.method == "HEAD"
        return self._route(req)

    def _check_host(self, req: Request) -> None:
        if self.hosts is None:
            return
        host = req.headers.get("host")
        if host is None:
            if req.version == "HTTP/1.1":
                raise HttpError(400, "an HTTP/1.1 request needs a Host header", "missing_host")
            return
        if not host_allowed(host, self.hosts):
            names = ", ".join(_host_text(n, p) for n, p in self.hosts)
            why = (
                f"this server does not answer to Host {host[:80]!r} (a page that made its "
                f"name point here?); it answers to {names}. To use that name on purpose, "
                "start it with --allow-host NAME"
            )
            raise HttpError(421, why, "misdirected_request", param="Host")

    def _cors(self, req: Request) -> list[tuple[str, str]]:
        """The CORS headers for the request's Origin; 403 for an origin not allowed."""
        origin = req.headers.get("origin")
        if origin is None:
            return []
        allowed = self.config.cors_origins
        if origin in allowed or "*" in allowed:
            return [("Access-Control-Allow-Origin", origin if origin in allowed else "*"),
                    ("Access-Control-Expose-Headers", "Retry-After"),
                    ("Vary", "Origin")]  # fmt: skip
        host = req.headers.get("host", "")
        if host and origin.lower() == f"http://{host.lower()}":
            return []  # the chat page itself
        why = (
            f"a page at {origin[:80]!r} may not call this server: it is another origin. "
            f"To allow that page, start the server with --cors {origin[:80]}"
        )
        raise HttpError(403, why, "cross_origin", param="Origin")

    def _invite(self, wfile: BufferedIOBase, req: Request) -> None:
        """Answer ``Expect: 100-continue``: 413 at once for a body too large, else 100."""
        size = http_request.content_length(req) or 0
        if size > self.config.max_body:
            why = f"the body is {size} bytes, more than {self.config.max_body}"
            raise HttpError(413, why, "too_large")
        wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _methods(self, path: str) -> dict[str, Callable[[Request, _Out], int]] | None:
        if path.startswith(MODELS) and len(path) > len(MODELS):
            return {"GET": self._model}
        return self.routes.get(path)

    def _route(self, req: Request) -> Callable[[Request, _Out], int]:
        methods = self._methods(req.path)
        if methods is None:
            known = ", ".join(f"{m} {p}" for p, ms in self.routes.items() for m in ms)
            why = f"no route {req.path[:80]!r}; known: {known}, GET {MODELS}{{id}}"
            raise HttpError(404, why, "not_found")
        if req.method == "OPTIONS":
            return self._options
        handler = methods.get("GET" if req.method == "HEAD" else req.method)
        if handler is None:
            allow = _allow(methods)
            why = f"{req.method} is not allowed on {req.path}; use {allow}"
            raise HttpError(405, why, "method_not_allowed", [("Allow", allow)])
        return handler

    # -- responses ------------------------------------------------------------------------
    def _send(
        self,
        out: _Out,
        status: int,
        content_type: str,
        body: str | bytes,
        headers: list[tuple[str, str]] | None = None,
    ) -> int:
        """Write a whole response built by `build_response`, with this request's headers."""
        raw = self.build_response(status, REASONS.get(status, "Unknown"), content_type, body)
        extra = [*(headers or []), *out.headers]
        if extra or out.keep or out.head_only:
            try:
                raw = rewrite_head(raw, DROPPED, extra + self._connection(out), not out.head_only)
            except ValueError:  # a build_response whose head cannot be read: sent as it is
                out.keep = False
        out.wfile.write(raw)
        return status

    def _connection(self, out: _Out) -> list[tuple[str, str]]:
        if not out.keep:
            return [("Connection", "close")]
        return [
            ("Connection", "keep-alive"),
            ("Keep-Alive", f"timeout={self.config.idle_timeout:g}"),
        ]

    def _try_send(self, out: _Out, error: HttpError) -> int:
        try:
            return self._send(out, error.status, JSON, error_body(error), error.headers)
        except OSError:
            return error.status

    # -- routes ---------------------------------------------------------------------------
    def _options(self, req: Request, out: _Out) -> int:
        """204 with ``Allow``; for an allowed origin's preflight, the CORS answer too."""
        allow = _allow(self._methods(req.path) or {})
        headers = [("Allow", allow), *out.headers]
        if out.headers and "access-control-request-method" in req.headers:
            asked = req.headers.get("access-control-request-headers", "")
            ok = all(http_protocol.TOKEN.fullmatch(h.strip()) for h in asked.split(",") if h)
            headers += [
                ("Access-Control-Allow-Methods", allow),
                ("Access-Control-Allow-Headers", asked if asked and ok else "content-type"),
                ("Access-Control-Max-Age", "600"),
            ]
        out.wfile.write(
            http_protocol.response_head(204, "No Content", headers + self._connection(out))
        )
        return 204

    def _index(self, req: Request, out: _Out) -> int:
        return self._send(out, 200, "text/html; charset=utf-8", self.page)

    def _health(self, req: Request, out: _Out) -> int:
        body = {"status": "ok", "model": self.engine.name, "busy": self.gate.busy}
        return self._send(out, 200, JSON, json.dumps(body))

    def _models(self, req: Request, out: _Out) -> int:
        doc = model_list(self.engine.name, self.started, self.engine.context)
        return self._send(out, 200, JSON, json.dumps(doc, ensure_ascii=False))

    def _model(self, req: Request, out: _Out) -> int:
        wanted = unquote(req.path[len(MODELS) :])
        if wanted != self.engine.name:
            why = f"no model {wanted[:80]!r} here; this server has {self.engine.name!r}"
            raise HttpError(404, why, "model_not_found", param="model")
        doc = model_entry(self.engine.name, self.started, self.engine.context)
        return self._send(out, 200, JSON, json.dumps(doc, ensure_ascii=False))

    def _chat(self, req: Request, out: _Out) -> int:
        try:
            chat = parse_chat_request(req.body)
        except ApiError as e:
            raise HttpError(400, e.message, "invalid_request", param=e.param) from None
        turn = _turn(chat)
        try:  # a prompt that cannot be built is refused before any byte of the answer
            self.engine.prompt_ids(turn.system, turn.messages, turn.settings.max_tokens)
        except (TypeError, ValueError) as e:
            raise HttpError(400, f"{e}", "invalid_request", param="messages") from None
        try:
            with self.gate.turn():  # a 503 comes before any byte of the answer
                if chat.stream:
                    out.keep = False
                    return self._stream(out, turn, chat.include_usage)
                reply = self._reply(turn)
        except Busy as e:
            retry = [("Retry-After", str(self.gate.retry_after(self.config.retry_after)))]
            why = f"the model is busy: {e}; try again after Retry-After seconds"
            raise HttpError(503, why, "overloaded", retry) from None
        usage = (reply.prompt_tokens, reply.completion_tokens)
        doc = completion(
            turn.rid, turn.created, self.engine.name, reply.text, reply.finish_reason, usage
        )
        return self._send(out, 200, JSON, json.dumps(doc, ensure_ascii=False))

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

    def _stream(self, out: _Out, turn: _Turn, usage: bool) -> int:
        """Server-sent events: a role chunk, content chunks, a finish chunk, [DONE]."""
        wfile = out.wfile

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
            *out.headers,
            ("Connection", "close"),
        ]
        wfile.write(http_protocol.response_head(200, "OK", head))
        event({"role": "assistant", "content": ""})
        try:
            reply = self._reply(turn, lambda piece: event({"content": piece}))
        except HttpError as e:  # the head is out: an unforeseen error goes as an event
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


def _turn(chat: ChatRequest) -> _Turn:
    head = 0  # leading system messages become the system prompt
    while head < len(chat.messages) and chat.messages[head][0] == "system":
        head += 1
    settings = ReplySettings(
        chat.temperature, chat.top_k, chat.top_p, chat.max_tokens, chat.seed, tuple(chat.stop),
        presence_penalty=chat.presence_penalty, frequency_penalty=chat.frequency_penalty,
    )  # fmt: skip
    return _Turn(
        system="\n".join(content for _, content in chat.messages[:head]),
        messages=chat.messages[head:],
        settings=settings,
        rid=f"chatcmpl-{uuid.uuid4().hex[:24]}",
        created=int(time.time()),
    )


def _phase(reader: SocketReader | None, phase: str, seconds: float | None) -> None:
    if reader is not None:
        reader.expect(phase, seconds)


def _allow(methods: Iterable[str]) -> str:
    names = [m for name in methods for m in ((name, "HEAD") if name == "GET" else (name,))]
    return ", ".join(names)


def _host_text(name: str, port: int | None) -> str:
    shown = f"[{name}]" if ":" in name else name
    return shown if port is None else f"{shown}:{port}"

"""An HTTP/1.1 chat server on the standard library, compatible with the OpenAI client.

`ChatServer` listens (127.0.0.1:8080 by default) and gives each connection a thread
(`socketserver.ThreadingTCPServer`); the requests are served by
`framework.chat_service.ChatService` (the routes, the OpenAI endpoint, the JSON errors).
A connection reads through a `SocketReader`: the whole head must arrive within
`head_timeout` seconds and the body within `body_timeout`, however slowly the bytes drip,
and a kept-alive connection may wait `idle_timeout` seconds for its next request (at most
`max_requests` of them). At most `max_connections` are open at once, `max_per_client`
from one IP address; a connection beyond either limit makes room by closing the oldest
connection that is idle or still sending its head (a slowloris client, typically), and
gets an immediate 503 without a thread only when every open connection is busy.
The server answers only requests whose ``Host`` names it: a loopback name or address
with its port, its `--host`, or one given with `--allow-host` (see `allowed_hosts`).
`serve` runs it until SIGINT or SIGTERM and closes it cleanly; no request, however
malformed, stops it.

What this module deliberately does not do: no TLS, no authentication, no HTTP/2, no
event loop (a thread per connection: the limits above keep their number bounded).

Where the idea comes from: the C course's `http_server.c`, a single-threaded accept loop
(one slow client blocked everyone) that bound every interface; Python's `socketserver`;
the header and keep-alive timeouts of nginx and Apache's mod_reqtimeout.

Example:
    >>> from framework.chat_service import ChatService, ServerConfig
    >>> from framework.config import tiny_config
    >>> from framework.model import GPTModel
    >>> from framework.serving import ChatEngine
    >>> from framework.tokenizer import ByteTokenizer
    >>> service = ChatService(ChatEngine(GPTModel(tiny_config()), ByteTokenizer()))
    >>> server = ChatServer(service, ServerConfig(port=0))
    >>> server.url.startswith("http://127.0.0.1:")
    True
    >>> ("localhost", server.port) in service.hosts
    True
    >>> server.server_close()
"""

from __future__ import annotations

import io
import signal
import socketserver
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from framework.chat_service import JSON, ChatService, ServerConfig
from framework.http_protocol import REASONS, parse_host, rewrite_head
from framework.http_request import HttpError, SocketReader, error_body

__all__ = ["ChatServer", "ServerConfig", "allowed_hosts", "serve"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARDS = ("", "0.0.0.0", "::")  # listening on every interface names no host


def allowed_hosts(config: ServerConfig, port: int) -> list[tuple[str, int | None]]:
    """The ``(name, port or None for any)`` pairs a request's ``Host`` may name.

    The loopback names with the served port, the configured host (unless it is a
    wildcard) with that port, and each of `config.allowed_hosts` (``NAME``: any port,
    ``NAME:PORT``: that port).

    Raises:
        ValueError: for an entry of `allowed_hosts` that is not NAME or NAME:PORT.

    Example:
        >>> allowed_hosts(ServerConfig(host="0.0.0.0", allowed_hosts=("chat.lan",)), 80)[-1]
        ('chat.lan', None)
    """
    hosts: list[tuple[str, int | None]] = [(name, port) for name in LOOPBACK]
    if config.host not in WILDCARDS:
        hosts.append((config.host.strip("[]").lower(), port))
    for entry in config.allowed_hosts:
        try:
            hosts.append(parse_host(entry))
        except ValueError as e:
            raise ValueError(f"--allow-host must be NAME or NAME:PORT: {e}") from None
    return hosts


class _Handler(socketserver.StreamRequestHandler):
    server: ChatServer
    rfile: io.BufferedReader

    def setup(self) -> None:
        super().setup()
        self.reader = self.server.reader_of(self.request)
        self.rfile.close()  # the reading side goes through the reader and its deadlines
        self.rfile = io.BufferedReader(self.reader)

    def handle(self) -> None:
        config, peer = self.server.service.config, self.client_address[0]
        for served in range(1, config.max_requests + 1):
            more = served < config.max_requests
            if not self.server.service.handle(self.rfile, self.wfile, peer, self.reader, more):
                return
            try:
                self.reader.expect("idle", config.idle_timeout)
                if not self.rfile.peek(1):  # the client closed the connection
                    return
            except (OSError, ValueError):  # idle too long, reset, or evicted
                return


@dataclass
class _Conn:
    ip: str
    reader: SocketReader


class ChatServer(socketserver.ThreadingTCPServer):
    """The listening socket; a thread per connection, their number bounded."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # the listen backlog: a burst of connects waits, not retries

    def __init__(self, service: ChatService, config: ServerConfig | None = None) -> None:
        self.service = service
        if config is not None:
            service.config = config
        self._lock = threading.Lock()
        self._ended = threading.Condition(self._lock)  # a connection's thread ended
        self._conns: dict[Any, _Conn] = {}  # by socket: every connection with a thread
        super().__init__((service.config.host, service.config.port), _Handler)
        try:
            service.hosts = allowed_hosts(service.config, self.port)
        except ValueError:
            self.server_close()
            raise

    @property
    def port(self) -> int:
        """The port the server listens on."""
        port: int = self.socket.getsockname()[1]
        return port

    @property
    def url(self) -> str:
        """``http://host:port`` of the listening socket."""
        host, port = self.socket.getsockname()[:2]
        return f"http://{host}:{port}"

    @property
    def connections(self) -> int:
        """How many connections are open (each with its thread)."""
        with self._lock:
            return len(self._conns)

    def reader_of(self, request: Any) -> SocketReader:
        """The reader registered for a connection's socket."""
        with self._lock:
            conn = self._conns.get(request)
        return conn.reader if conn else SocketReader(request, self.service.config.read_timeout)

    def process_request(self, request: Any, client_address: Any) -> None:
        ip = str(client_address[0])
        reader = SocketReader(request, self.service.config.read_timeout)
        with self._lock:
            admitted = self._make_room(ip)
            if admitted:
                self._conns[request] = _Conn(ip, reader)
        if not admitted:
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            with self._lock:
                self._conns.pop(request, None)
            raise

    def _make_room(self, ip: str) -> bool:
        """Whether one more connection from `ip` may open, closing an idle one if needed."""
        config = self.service.config
        same = [s for s, c in self._conns.items() if c.ip == ip]
        if len(same) >= config.max_per_client:
            pool = same
        elif len(self._conns) >= config.max_connections:
            pool = list(self._conns)
        else:
            return True
        for sock in sorted(pool, key=lambda s: self._conns[s].reader.since):
            if self._conns[sock].reader.evict():  # the oldest idle or still sending its head
                del self._conns[sock]
                return True
        return False

    def _refuse(self, request: Any) -> None:
        """503 at once, without a thread: every open connection is busy."""
        error = HttpError(
            503,
            "too many open connections, all of them busy",
            "overloaded",
            [("Retry-After", str(self.service.config.retry_after))],
        )
        try:
            request.settimeout(1.0)
            raw = self.service.build_response(503, REASONS[503], JSON, error_body(error))
            request.sendall(rewrite_head(raw, ("retry-after",), error.headers))
        except (OSError, ValueError):
            pass
        self.shutdown_request(request)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._lock:
                self._conns.pop(request, None)
                self._ended.notify_all()

    def drain(self, seconds: float) -> bool:
        """Once serving stopped: close the idle connections (and those still sending a
        head), and give every request being read or answered up to `seconds` to finish,
        its response and its log line. Whether every connection's thread ended."""
        deadline = time.monotonic() + seconds
        with self._ended:
            while self._conns:
                for conn in self._conns.values():  # again and again: an answered request's
                    conn.reader.evict()  # connection turns idle after its response
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._ended.wait(min(left, 0.05))
            return True

    def handle_error(self, request: Any, client_address: Any) -> None:
        print(f"error with a client at {client_address}", file=sys.stderr)


DRAIN_SECONDS = 5.0  # how long a stopping server lets the requests in flight finish


def serve(server: ChatServer, on_ready: Callable[[str], object] | None = None) -> None:
    """Serve until SIGINT or SIGTERM (or `server.shutdown()`), then close cleanly.

    Must run in the main thread when the signals are to be caught.

    Args:
        server: the bound server.
        on_ready: called with the server's URL once it accepts connections.
    """

    def stop(signum: int, frame: object) -> None:
        server.service.stopping.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    main = threading.current_thread() is threading.main_thread()
    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)} if main else {}
    try:
        if on_ready is not None:
            on_ready(server.url)
        server.serve_forever(poll_interval=0.2)
    finally:
        server.service.stopping.set()
        for sig, handler in old.items():
            signal.signal(sig, handler)
        server.drain(DRAIN_SECONDS)
        server.server_close()

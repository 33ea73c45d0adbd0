"""An HTTP/1.1 chat server on the standard library, compatible with the OpenAI client.

`ChatServer` listens (127.0.0.1:8080 by default) and gives each connection a thread
(`socketserver.ThreadingTCPServer`) whose socket has a read timeout; the request itself is
served by `framework.chat_service.ChatService` (the routes, the OpenAI endpoint, the
JSON errors). At most `max_connections` are open at once: beyond them a client gets an
immediate 503 without a thread. `serve` runs it until SIGINT or SIGTERM and closes it
cleanly; no request, however malformed, stops it.

What this module deliberately does not do: no TLS, no keep-alive, no authentication, no
CORS (the chat page comes from the same origin), no web framework.

Where the idea comes from: the C course's `http_server.c`, a single-threaded accept loop
(one slow client blocked everyone) that bound every interface; Python's `socketserver`.

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
    >>> server.server_close()
"""

from __future__ import annotations

import signal
import socketserver
import sys
import threading
from collections.abc import Callable
from typing import Any

from framework.chat_service import JSON, ChatService, ServerConfig
from framework.http_protocol import REASONS
from framework.http_request import HttpError, error_body

__all__ = ["ChatServer", "ServerConfig", "serve"]


class _Handler(socketserver.StreamRequestHandler):
    server: ChatServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.service.config.read_timeout)

    def handle(self) -> None:
        self.server.service.handle(self.rfile, self.wfile, self.client_address[0])


class ChatServer(socketserver.ThreadingTCPServer):
    """The listening socket; a thread per connection, at most `max_connections` at once."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # the listen backlog: a burst of connects waits, not retries

    def __init__(self, service: ChatService, config: ServerConfig | None = None) -> None:
        self.service = service
        if config is not None:
            service.config = config
        self._open = threading.BoundedSemaphore(service.config.max_connections)
        super().__init__((service.config.host, service.config.port), _Handler)

    @property
    def url(self) -> str:
        """``http://host:port`` of the listening socket."""
        host, port = self.socket.getsockname()[:2]
        return f"http://{host}:{port}"

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._open.acquire(blocking=False):  # too many: answer without a thread
            error = HttpError(
                503,
                "too many open connections",
                "overloaded",
                [("Retry-After", str(self.service.config.retry_after))],
            )
            try:
                request.settimeout(1.0)
                request.sendall(
                    self.service.build_response(503, REASONS[503], JSON, error_body(error))
                )
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._open.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        print(f"error with a client at {client_address}", file=sys.stderr)


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
        server.server_close()

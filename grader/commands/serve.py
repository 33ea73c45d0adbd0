"""`minillm serve [MODEL]`: the chat page and an OpenAI-compatible API over HTTP.

    minillm serve                          # the course's model on http://127.0.0.1:8080
    minillm serve model.bin --port 9000 --vocab model.vocab.json

Open the printed address in a browser for the chat page, or point any OpenAI client at
``http://127.0.0.1:8080/v1`` (any API key). Ctrl-C or SIGTERM stops the server cleanly.
It listens on 127.0.0.1 only unless `--host` says otherwise; the model answers one request
at a time and queues up to `--queue` more (a fuller queue gets 503 with Retry-After).

Without MODEL the course's shipped model is used; a missing or malformed model file, or a
port that is taken, is refused with a message, never a traceback. With ``--mine`` the
model, and the request parsing and responses, run your own functions from the labs
wherever your lab passes (`grader.commands.mine`).
"""

from __future__ import annotations

from pathlib import Path

import click

from grader.commands.options import model_options, open_engine
from grader.mine.cli import mine_options

__all__ = ["serve"]


def _check_hosts(
    ctx: click.Context, param: click.Parameter, value: tuple[str, ...]
) -> tuple[str, ...]:
    from framework.http_protocol import parse_host

    for entry in value:
        try:
            parse_host(entry)
        except ValueError as e:
            raise click.BadParameter(f"expected NAME or NAME:PORT: {e}") from None
    return value


@click.command()
@model_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8080,
    show_default=True,
    help="Port (0: any free port).",
)
@click.option(
    "--queue",
    type=click.IntRange(min=0),
    default=32,
    show_default=True,
    help="Requests that may wait while one generates (503 beyond).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds a client may stall while sending (408 after).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME[:PORT]",
    callback=_check_hosts,
    help="Also answer requests whose Host is NAME (any port) or NAME:PORT; repeatable. "
    "By default only the loopback names with the served port (and --host) are answered.",
)
@click.option(
    "--cors",
    "cors",
    multiple=True,
    metavar="ORIGIN",
    help="Let pages from ORIGIN (e.g. http://localhost:3000; '*' for any) call the API; "
    "repeatable. Off by default: a page on another origin is refused with 403.",
)
@click.option("--quiet", "-q", is_flag=True, help="Do not log each request.")
@mine_options
def serve(
    model_path: Path | None,
    vocab: Path | None,
    host: str,
    port: int,
    queue: int,
    timeout: float,
    allow_hosts: tuple[str, ...],
    cors: tuple[str, ...],
    quiet: bool,
    mine: bool,
    force_mine: bool,
) -> None:
    """Serve MODEL over HTTP: a chat page and /v1/chat/completions."""
    from framework.chat_service import ChatService, ServerConfig
    from framework.http_server import ChatServer
    from framework.http_server import serve as run

    engine = open_engine(model_path, vocab)
    mined = None
    if mine or force_mine:
        from grader.mine.cli import mine_engine

        engine = mined = mine_engine(engine, "serve", force_mine)
    config = ServerConfig(
        host=host,
        port=port,
        queue_size=queue,
        read_timeout=timeout,
        allowed_hosts=allow_hosts,
        cors_origins=cors,
    )
    log = None if quiet else (lambda line: click.echo(line, err=True))
    try:
        service = ChatService(engine, config, log=log)
        if mined is not None:
            from grader.mine.engine import serving_functions

            report = log or (lambda line: click.echo(line, err=True))
            service.parse_request_line, service.build_response = serving_functions(
                mined.pieces, report
            )
        server = ChatServer(service)
    except OSError as e:
        raise click.ClickException(f"cannot listen on {host}:{port}: {e.strerror or e}") from None

    def ready(url: str) -> None:
        params = engine.model.num_parameters()
        click.echo(
            f"miniLLM serving {engine.name} ({params:,} parameters, context "
            f"{engine.context} tokens, {type(engine.tokenizer).__name__})"
        )
        click.echo(f"  chat page   {url}/")
        click.echo(f"  OpenAI API  {url}/v1  (POST /chat/completions, GET /models)")
        click.echo(f"  health      {url}/health")
        click.echo("Ctrl-C stops it.", nl=True)

    run(server, on_ready=ready)
    click.echo("stopped.")

"""Real clients against the real server: the official `openai` package, and curl."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator

import pytest
from serving_helpers import events, port_of, running

from framework.http_server import ChatServer

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "你好"}]


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with running() as s:
        yield s


def base(server: ChatServer) -> str:
    return f"http://127.0.0.1:{port_of(server)}"


# -- the openai client ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(server: ChatServer):  # type: ignore[no-untyped-def]
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=base(server) + "/v1", api_key="unused", max_retries=0)


def test_openai_client_without_streaming(client) -> None:  # type: ignore[no-untyped-def]
    r = client.chat.completions.create(
        model="tiny", messages=MESSAGES, max_tokens=10, temperature=0.7, top_p=0.9, seed=4
    )
    assert r.object == "chat.completion" and r.model == "tiny"
    assert isinstance(r.choices[0].message.content, str)
    assert r.choices[0].finish_reason in ("stop", "length")
    assert r.usage.completion_tokens <= 10
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    again = client.chat.completions.create(
        model="tiny", messages=MESSAGES, max_tokens=10, temperature=0.7, top_p=0.9, seed=4
    )
    assert again.choices[0].message.content == r.choices[0].message.content


def test_openai_client_streaming(client) -> None:  # type: ignore[no-untyped-def]
    whole = client.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=12, seed=8)
    stream = client.chat.completions.create(
        model="tiny",
        messages=MESSAGES,
        max_tokens=12,
        seed=8,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    assert "".join(pieces) == whole.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-2].choices[0].finish_reason == whole.choices[0].finish_reason
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens


def test_openai_client_lists_models_and_sees_errors(client) -> None:  # type: ignore[no-untyped-def]
    openai = pytest.importorskip("openai")
    assert [m.id for m in client.models.list()] == ["tiny"]
    with pytest.raises(openai.BadRequestError) as bad:
        client.chat.completions.create(model="tiny", messages=MESSAGES, temperature=5)
    assert bad.value.status_code == 400 and "temperature" in str(bad.value)
    with running(queue_size=0) as busy:
        c = openai.OpenAI(base_url=base(busy) + "/v1", api_key="x", max_retries=0)
        with busy.service.gate.turn(), pytest.raises(openai.APIStatusError) as full:
            c.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=2)
        assert full.value.status_code == 503
        assert full.value.response.headers["retry-after"] == "2"


# -- curl -----------------------------------------------------------------------------------

CURL = shutil.which("curl")


def curl(*args: str, data: str | None = None) -> subprocess.CompletedProcess[str]:
    if CURL is None:
        pytest.skip("curl is not installed")
    extra = ["--data-binary", "@-"] if data is not None else []
    return subprocess.run(
        [CURL, "-sS", "--max-time", "10", *extra, *args],
        input=data,
        capture_output=True,
        text=True,
        timeout=15,
        check=False,
    )


def test_curl_gets_health_and_a_streamed_reply(server: ChatServer) -> None:
    health = curl(base(server) + "/health")
    assert json.loads(health.stdout)["status"] == "ok"
    body = json.dumps({"messages": MESSAGES, "max_tokens": 6, "stream": True})
    out = curl(
        "-N",
        "-H",
        "Content-Type: application/json",
        base(server) + "/v1/chat/completions",
        data=body,
    )
    assert out.returncode == 0, out.stderr
    found = events(out.stdout.encode())
    assert found[-1] == "[DONE]" and found[0]["object"] == "chat.completion.chunk"


@pytest.mark.parametrize(
    ("method", "path", "data", "status"),
    [
        ("GET", "/missing", None, 404),
        ("PUT", "/health", None, 405),
        ("POST", "/v1/chat/completions", "{", 400),
        ("POST", "/v1/chat/completions", "x" * 70_000, 413),
    ],
)
def test_curl_sees_each_error_status(
    server: ChatServer, method: str, path: str, data: str | None, status: int
) -> None:
    out = curl(
        "-X", method, "-o", "/dev/null", "-w", "%{http_code}", base(server) + path, data=data
    )
    assert out.stdout == str(status), out.stderr


def test_openai_client_retrieves_a_model_and_sees_refusals(client) -> None:  # type: ignore[no-untyped-def]
    openai = pytest.importorskip("openai")
    assert client.models.retrieve("tiny").id == "tiny"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-4o")
    tool = {"type": "function", "function": {"name": "f", "parameters": {}}}
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="tiny", messages=MESSAGES, tools=[tool])
    assert refused.value.body["param"] == "tools"  # type: ignore[index]
    r = client.chat.completions.create(
        model="tiny", messages=MESSAGES, max_tokens=4, presence_penalty=1.0, frequency_penalty=0.5
    )
    assert r.usage.completion_tokens <= 4

"""The OpenAI chat-completions API as JSON: the request we accept, the objects we answer.

`parse_chat_request` turns the body of ``POST /v1/chat/completions`` into a `ChatRequest`
and refuses, with an `ApiError` that names the field, anything the official client would
never send: a message without a known role, a temperature of ``"hot"``, ``n`` other than 1.
Fields that only tune OpenAI's own models (``presence_penalty``, ``logit_bias``, ``user``,
...) are accepted and ignored, as the API allows. `completion`, `chunk` and `model_list`
build the answers: a whole ``chat.completion`` (with ``usage``), one
``chat.completion.chunk`` of a stream (``choices[0].delta``), the ``/v1/models`` list.

What this module deliberately does not do: no I/O, no generation, no tool calls, images or
JSON mode (such content is refused, not silently dropped).

Where the idea comes from: the OpenAI API reference for chat completions and the shapes
the `openai` Python client parses; the C course's `http_server.c` found numbers by
searching the raw body for key names and cut messages at the first ``}``: here a real
JSON parser and a check per field.

Example:
    >>> req = parse_chat_request(b'{"messages": [{"role": "user", "content": "hi"}]}')
    >>> req.messages, req.temperature, req.stream
    ([('user', 'hi')], 1.0, False)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ApiError",
    "ChatRequest",
    "chunk",
    "completion",
    "model_list",
    "parse_chat_request",
]

ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
MAX_STOPS = 4


class ApiError(ValueError):
    """A request the API refuses (HTTP 400); `param` names the field at fault."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


@dataclass
class ChatRequest:
    """What a chat-completions request asks for (defaults are the API's)."""

    messages: list[tuple[str, str]]
    model: str | None = None
    temperature: float = 1.0  # 0 = greedy; the API allows 0-2
    top_p: float = 1.0  # nucleus mass; 1 = off
    top_k: int = 0  # not in the OpenAI API; 0 = off
    max_tokens: int | None = None  # None: as many as the context allows
    seed: int | None = None  # the same seed and request give the same reply
    stream: bool = False
    include_usage: bool = False  # stream_options.include_usage
    stop: list[str] = field(default_factory=list)


def _number(doc: dict[str, Any], key: str, low: float, high: float, default: float) -> float:
    value = doc.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ApiError(f"'{key}' must be a number, got {json.dumps(value)[:40]}", key)
    if not low <= value <= high:
        raise ApiError(f"'{key}' must be between {low:g} and {high:g}, got {value:g}", key)
    return float(value)


def _integer(doc: dict[str, Any], key: str, low: int) -> int | None:
    value = doc.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(f"'{key}' must be an integer, got {json.dumps(value)[:40]}", key)
    if value < low:
        raise ApiError(f"'{key}' must be at least {low}, got {value}", key)
    return value


def _content(value: Any, where: str) -> str:
    """A message content: a str, or a list of text parts (joined)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = []
        for k, part in enumerate(value):
            if not isinstance(part, dict) or part.get("type") != "text":
                raise ApiError(f"{where}.content[{k}] must be a text part", f"{where}.content")
            if not isinstance(part.get("text"), str):
                raise ApiError(f"{where}.content[{k}].text must be a string", f"{where}.content")
            texts.append(part["text"])
        return "".join(texts)
    raise ApiError(f"{where}.content must be a string or a list of text parts", where)


def _messages(value: Any) -> list[tuple[str, str]]:
    if not isinstance(value, list) or not value:
        raise ApiError("'messages' must be a non-empty list of messages", "messages")
    out = []
    for k, m in enumerate(value):
        where = f"messages[{k}]"
        if not isinstance(m, dict):
            raise ApiError(f"{where} must be an object with 'role' and 'content'", where)
        role = m.get("role")
        if role not in ROLES:
            known = ", ".join(ROLES)
            raise ApiError(f"{where}.role must be one of {known}; got {role!r:.40}", where)
        out.append((ROLES[role], _content(m.get("content"), where)))
    if all(role == "system" for role, _ in out):
        raise ApiError("'messages' needs at least one user or assistant message", "messages")
    return out


def _stop(value: Any) -> list[str]:
    stops = [value] if isinstance(value, str) else value
    if stops is None:
        return []
    ok = isinstance(stops, list) and all(isinstance(s, str) and s for s in stops)
    if not ok or len(stops) > MAX_STOPS:
        raise ApiError(f"'stop' must be a string or a list of up to {MAX_STOPS} strings", "stop")
    return list(stops)


def parse_chat_request(body: bytes) -> ChatRequest:
    """Read and check the JSON body of a chat-completions request.

    Args:
        body: the request body (UTF-8 JSON).

    Returns:
        The `ChatRequest`; ``max_completion_tokens`` is read as ``max_tokens``.

    Raises:
        ApiError: for malformed JSON or UTF-8, a body that is not an object, or a field of
            the wrong type or range (its name is in ``param``).
    """
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ApiError(f"the body is not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ApiError("the body must be a JSON object")
    if doc.get("n", 1) != 1:
        raise ApiError("only n = 1 is supported", "n")
    if not isinstance(doc.get("stream", False), bool):
        raise ApiError("'stream' must be true or false", "stream")
    options = doc.get("stream_options") or {}
    if not isinstance(options, dict):
        raise ApiError("'stream_options' must be an object", "stream_options")
    model = doc.get("model")
    if model is not None and not isinstance(model, str):
        raise ApiError("'model' must be a string", "model")
    max_tokens = _integer(doc, "max_tokens", 1)
    return ChatRequest(
        messages=_messages(doc.get("messages")),
        model=model,
        temperature=_number(doc, "temperature", 0.0, 2.0, 1.0),
        top_p=_number(doc, "top_p", 0.0, 1.0, 1.0),
        top_k=_integer(doc, "top_k", 0) or 0,
        max_tokens=max_tokens
        if max_tokens is not None
        else _integer(doc, "max_completion_tokens", 1),
        seed=_integer(doc, "seed", -(2**63)),
        stream=bool(doc.get("stream", False)),
        include_usage=options.get("include_usage") is True,
        stop=_stop(doc.get("stop")),
    )


def _usage(prompt: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }


def completion(
    rid: str, created: int, model: str, text: str, finish: str, usage: tuple[int, int]
) -> dict[str, Any]:
    """A whole ``chat.completion`` object.

    Args:
        rid: the completion id (``"chatcmpl-..."``).
        created: Unix time in seconds.
        model: the model's name.
        text: the reply.
        finish: ``"stop"`` or ``"length"``.
        usage: (prompt tokens, completion tokens).

    Example:
        >>> completion("chatcmpl-1", 0, "m", "hi", "stop", (3, 1))["usage"]["total_tokens"]
        4
    """
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "logprobs": None,
        "finish_reason": finish,
    }
    return {
        "id": rid,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [choice],
        "usage": _usage(*usage),
    }


def chunk(
    rid: str,
    created: int,
    model: str,
    delta: dict[str, str] | None,
    finish: str | None = None,
    usage: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` of a stream.

    With `delta` None the chunk has no choices and carries `usage` (the last chunk when the
    client asked for ``stream_options.include_usage``).

    Example:
        >>> chunk("c", 0, "m", {"content": "hi"})["choices"][0]["delta"]
        {'content': 'hi'}
    """
    out: dict[str, Any] = {"id": rid, "object": "chat.completion.chunk", "created": created}
    out["model"] = model
    if delta is None:
        out["choices"] = []
    else:
        out["choices"] = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    if usage is not None:
        out["usage"] = _usage(*usage)
    return out


def model_list(model: str, created: int) -> dict[str, Any]:
    """The ``GET /v1/models`` answer: one model."""
    entry = {"id": model, "object": "model", "created": created, "owned_by": "minillm"}
    return {"object": "list", "data": [entry]}

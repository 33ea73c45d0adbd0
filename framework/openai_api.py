"""The OpenAI chat-completions API as JSON: the request we accept, the objects we answer.

`parse_chat_request` turns the body of ``POST /v1/chat/completions`` into a `ChatRequest`
and refuses, with an `ApiError` that names the field, anything the official client would
never send (a message without a known role, a temperature of ``"hot"``, a
``presence_penalty`` of 99, a number of 5,000 digits, JSON nested 30,000 deep) and anything
this server cannot do: ``n`` other than 1, ``tools``, ``tool_choice``, ``functions``, a
``response_format`` other than text, ``logprobs``, ``logit_bias``, audio. A refused field is
never silently dropped. ``presence_penalty`` and ``frequency_penalty`` are carried out
(`framework.serving`); fields that only describe the caller (``user``, ``metadata``,
``store``, ...) are accepted and ignored, as the API allows. `completion`, `chunk`,
`model_entry` and `model_list` build the answers: a whole ``chat.completion`` (with
``usage``), one ``chat.completion.chunk`` of a stream (``choices[0].delta``), one model
and the ``/v1/models`` list.

What this module deliberately does not do: no I/O, no generation, no tool calls, images or
JSON mode (such requests are refused with 400, not silently answered as plain chat).

Where the idea comes from: the OpenAI API reference for chat completions and the shapes
the `openai` Python client parses; the C course's `http_server.c` found numbers by
searching the raw body for key names and cut messages at the first ``}``: here a real
JSON parser and a check per field.

Example:
    >>> req = parse_chat_request(b'{"messages": [{"role": "user", "content": "hi"}]}')
    >>> req.messages, req.temperature, req.stream
    ([('user', 'hi')], 1.0, False)
    >>> try:
    ...     parse_chat_request(b'{"messages": [], "tools": [{"type": "function"}]}')
    ... except ApiError as e:
    ...     print(e.param, "-", e.message)
    tools - 'tools' is not supported: this server cannot call tools
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
    "model_entry",
    "model_list",
    "parse_chat_request",
]

ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
MAX_STOPS = 4
MAX_DIGITS = 100  # longest integer read from a body (Python's int() refuses > 4300 digits)
UNSUPPORTED = {  # field: (the values that mean "not used", why the others are refused)
    "tools": ((None, []), "this server cannot call tools"),
    "tool_choice": ((None, "none"), "this server cannot call tools"),
    "functions": ((None, []), "this server cannot call functions"),
    "function_call": ((None, "none"), "this server cannot call functions"),
    "response_format": ((None, {"type": "text"}), "only plain text replies are made"),
    "logprobs": ((None, False), "this server does not return log probabilities"),
    "top_logprobs": ((None, 0), "this server does not return log probabilities"),
    "logit_bias": ((None, {}), "this server does not bias logits"),
    "audio": ((None,), "this server makes text only"),
    "modalities": ((None, ["text"]), "this server makes text only"),
    "prediction": ((None,), "predicted outputs are not used here"),
}


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
    presence_penalty: float = 0.0  # subtracted once from the logit of each id already made
    frequency_penalty: float = 0.0  # subtracted per earlier occurrence of an id


class _LongInteger:
    """An integer in the body with more than `MAX_DIGITS` digits: kept aside, refused."""

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-"))


def _parse_int(text: str) -> int | _LongInteger:
    return _LongInteger(text) if len(text) > MAX_DIGITS else int(text)


def _show(value: Any) -> str:
    if isinstance(value, _LongInteger):
        return f"an integer of {value.digits} digits"
    return json.dumps(value, default=lambda v: "...")[:40]


def _number(doc: dict[str, Any], key: str, low: float, high: float, default: float) -> float:
    value = doc.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ApiError(f"'{key}' must be a number, got {_show(value)}", key)
    if not low <= value <= high:
        raise ApiError(f"'{key}' must be between {low:g} and {high:g}, got {value:g}", key)
    return float(value)


def _integer(doc: dict[str, Any], key: str, low: int) -> int | None:
    value = doc.get(key)
    if value is None:
        return None
    if isinstance(value, _LongInteger):
        why = f"at most {MAX_DIGITS} digits long, got one of {value.digits} digits"
        raise ApiError(f"'{key}' must be an integer {why}", key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(f"'{key}' must be an integer, got {_show(value)}", key)
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


def _load(body: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(body.decode("utf-8"), parse_int=_parse_int)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ApiError(f"the body is not valid JSON: {e}") from None
    except RecursionError:
        raise ApiError("the body is nested too deeply to be a chat request") from None
    if not isinstance(doc, dict):
        raise ApiError(f"the body must be a JSON object, got {type(doc).__name__}")
    return doc


def _refuse_unsupported(doc: dict[str, Any]) -> None:
    for key, (unused, why) in UNSUPPORTED.items():
        if key in doc and not any(doc[key] == u and type(doc[key]) is type(u) for u in unused):
            raise ApiError(f"'{key}' is not supported: {why}", key)
    n = _integer(doc, "n", 1)
    if n is not None and n != 1:
        raise ApiError(f"'n' must be 1: this server makes one reply per request, not {n}", "n")


def parse_chat_request(body: bytes) -> ChatRequest:
    """Read and check the JSON body of a chat-completions request.

    Args:
        body: the request body (UTF-8 JSON).

    Returns:
        The `ChatRequest`; ``max_completion_tokens`` is read as ``max_tokens``.

    Raises:
        ApiError: for malformed or too deeply nested JSON, malformed UTF-8, a body that is
            not an object, a field of the wrong type or range, or a field this server
            cannot honour (its name is in ``param``).
    """
    doc = _load(body)
    _refuse_unsupported(doc)
    if not isinstance(doc.get("stream", False), bool):
        raise ApiError("'stream' must be true or false", "stream")
    options = doc.get("stream_options") or {}
    if not isinstance(options, dict) or not isinstance(options.get("include_usage", False), bool):
        raise ApiError("'stream_options' must be an object like {\"include_usage\": true}",
                       "stream_options")  # fmt: skip
    model = doc.get("model")
    if model is not None and not isinstance(model, str):
        raise ApiError(f"'model' must be a string, got {_show(model)}", "model")
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
        presence_penalty=_number(doc, "presence_penalty", -2.0, 2.0, 0.0),
        frequency_penalty=_number(doc, "frequency_penalty", -2.0, 2.0, 0.0),
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


def model_entry(model: str, created: int, context: int | None = None) -> dict[str, Any]:
    """One model, as ``GET /v1/models/{id}`` answers it (``context_length`` if given)."""
    entry: dict[str, Any] = {"id": model, "object": "model", "created": created}
    entry["owned_by"] = "minillm"
    if context is not None:
        entry["context_length"] = context  # not in OpenAI's schema; vLLM and others add it
    return entry


def model_list(model: str, created: int, context: int | None = None) -> dict[str, Any]:
    """The ``GET /v1/models`` answer: one model."""
    return {"object": "list", "data": [model_entry(model, created, context)]}

"""`--check` for the pieces around the model: BPE, the chat format, HTTP.

Each is compared with the framework on fixed inputs (Chinese and English, chat tags,
empty text): the ids of each text; the merges learned from one text by the student's
`bpe_count_pairs` and `bpe_apply_merge`; the prompts `format_prompt` writes and the
replies `extract_response` finds, and the chat prompt ids built from them; the parts of
request lines, the refusal of malformed ones, and the status line, the three headers and
the body of each response (other headers and their order may differ, as lab10 allows),
then one real request through the chat service.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

from framework import bpe_train, chat, http_protocol
from framework.bpe_tokenizer import BPETokenizer
from framework.bpe_vocab import FIRST_MERGE_ID
from framework.chat_service import ChatService
from framework.serving import ChatEngine
from framework.tokenizer import NUM_SPECIAL
from grader.i18n import tr
from grader.mine.check_model import Outcome
from grader.mine.engine import MineEngine
from grader.mine.pieces import PieceError, Pieces
from grader.mine.tokenize import MineTokenizer

__all__ = ["compare_bpe", "compare_format", "compare_http"]

TEXTS = (
    "你好",
    "1+2=?",
    "hello",
    "what is attention?",
    "",
    "<|user|>\n三加四等于几\n<|end|>\n<|assistant|>\n3 + 4 = 7\n<|end|>\n",
    "Attention lets each position mix in information from earlier positions. 注意力让每个位置"
    "混合前面位置的信息。aaaa bbbb 1+1=2, 2+2=4!",
)
MERGES = 40  # merges learned from the training text below
_TRAIN = " ".join(TEXTS) * 3

_CONVERSATIONS: tuple[list[tuple[str, str]], ...] = (
    [("user", "hi")],
    [],
    [("system", "Be brief."), ("user", "你好"), ("assistant", "你好！"), ("user", "1+2=?")],
    [("user", " spaces \n kept ")],
)
_OUTPUTS = (
    "<|user|>\nhi\n<|assistant|>\n hello! \n<|end|>\n<|user|>",
    "no tags at all  ",
    "<|assistant|>\nA<|user|>\nB<|assistant|>\n B \n<|end|>",
    "<|assistant|>\n你好！<|system|>x",
    "<|assistant|>\n<|end|>",
    "<|assistant|>\n<|end <|foo|> text",
)


def _first_difference(name: str, got: Any, want: Any, shown: str) -> Outcome | None:
    if got == want:
        return None
    return Outcome(
        "different",
        tr(
            f"{name}({shown})：你的 {got!r:.120}，框架 {want!r:.120}",
            f"{name}({shown}): yours {got!r:.120}, framework {want!r:.120}",
        ),
    )


def compare_bpe(pieces: Pieces, tok: BPETokenizer) -> Outcome:
    """The ids of `TEXTS`, then the merges learned from one text, against the framework."""
    mine = MineTokenizer(tok, pieces.bpe_apply_merge)
    for text in TEXTS:
        found = _first_difference("encode", mine.encode(text), tok.encode(text), f"{text!r:.30}")
        if found is not None:
            return found
    ids = [b + NUM_SPECIAL for b in _TRAIN.encode()][:600]  # byte ids, as training starts
    learned, current = [], list(ids)
    for k in range(MERGES):
        best = pieces.bpe_count_pairs(list(current))
        if best is None:
            break
        learned.append((tuple(best[0]), best[1]))
        current = pieces.bpe_apply_merge(list(current), tuple(best[0]), FIRST_MERGE_ID + 10**4 + k)
    want, current = [], list(ids)
    for k in range(MERGES):
        found_pair = bpe_train.count_pairs(current)
        if found_pair is None:
            break
        want.append(found_pair)
        current = bpe_train.merge_pair(current, found_pair[0], FIRST_MERGE_ID + 10**4 + k)
    for k, (got_k, want_k) in enumerate(zip(learned, want, strict=False)):
        found = _first_difference("bpe_count_pairs", got_k, want_k, f"merge {k + 1}")
        if found is not None:
            return found
    if len(learned) != len(want):
        why = f"{len(learned)} merges, the framework {len(want)}"
        return Outcome(
            "different", tr(f"学到的合并数不同：你的 {why}", f"merges learned: yours {why}")
        )
    return Outcome(
        "same",
        tr(
            f"{len(TEXTS)} 段文本的 id 一致；学到的 {len(want)} 个合并一致",
            f"ids of {len(TEXTS)} texts equal; {len(want)} merges learned equal",
        ),
    )


def compare_format(pieces: Pieces, engine: ChatEngine) -> Outcome:
    """Prompts, replies, then the chat's prompt ids, against the framework."""
    for msgs in _CONVERSATIONS:
        got, want = pieces.format_prompt(list(msgs)), chat.format_prompt(msgs)
        if (found := _first_difference("format_prompt", got, want, f"{msgs!r:.40}")) is not None:
            return found
    for out in _OUTPUTS:
        got, want = pieces.extract_response(out), chat.extract_response(out)
        if (found := _first_difference("extract_response", got, want, f"{out!r:.40}")) is not None:
            return found
    mine = MineEngine(engine, pieces)
    for msgs in _CONVERSATIONS[2:]:
        for system in ("", "Be brief."):
            ids, want_ids = mine.prompt_ids(system, msgs), engine.prompt_ids(system, msgs)
            shown = f"system={system!r}, {len(msgs)} messages"
            if (found := _first_difference("prompt ids", ids, want_ids, shown)) is not None:
                return found
    return Outcome(
        "same",
        tr(
            "提示词、回复提取和对话的提示 id 都一致",
            "prompts, extracted replies and the chat's prompt ids equal",
        ),
    )


def _split_response(raw: Any) -> tuple[str, dict[str, str], bytes]:
    """(status line, headers by lowercase name, body) of response bytes."""
    if not isinstance(raw, bytes):
        raise TypeError(f"returned {type(raw).__name__}, not bytes")
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *lines = head.decode("utf-8", errors="replace").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


def _parse_cases(parse: Callable[..., Any]) -> Outcome | None:
    for line in (
        "GET /health HTTP/1.1",
        "POST /v1/chat/completions HTTP/1.1",
        "GET /a?b=c HTTP/1.0",
    ):
        found = _first_difference(
            "parse_request_line",
            tuple(parse(line)),
            http_protocol.parse_request_line(line),
            repr(line),
        )
        if found is not None:
            return found
    for bad in ("GET  /health HTTP/1.1", "get /health HTTP/1.1", "GET /health HTTP/1", ""):
        try:
            parse(bad)
        except ValueError:
            continue
        except PieceError as e:  # the guarded student function: a ValueError inside is right
            if isinstance(e.__cause__, ValueError):
                continue
            raise
        return Outcome(
            "different",
            tr(
                f"parse_request_line({bad!r}) 没有报 ValueError",
                f"parse_request_line({bad!r}) did not raise ValueError",
            ),
        )
    return None


def compare_http(pieces: Pieces, engine: ChatEngine) -> Outcome:
    """Request lines, responses, then GET /health through the chat service."""
    if (found := _parse_cases(pieces.parse_request_line)) is not None:
        return found
    cases = (
        (200, "OK", "application/json", '{"a": 1}'),
        (404, "Not Found", "text/plain", "你好"),
        (503, "Service Unavailable", "text/html; charset=utf-8", b"<p>busy</p>"),
    )
    for args in cases:
        got = _split_response(pieces.build_response(*args))
        want = _split_response(http_protocol.build_response(*args))
        named = ("content-type", "content-length", "connection")
        got_view = (got[0], {k: got[1].get(k) for k in named}, got[2])
        want_view = (want[0], {k: want[1][k] for k in named}, want[2])
        if found := _first_difference("build_response", got_view, want_view, f"{args[0]}"):
            return found
    service = ChatService(engine)
    service.parse_request_line = pieces.parse_request_line
    service.build_response = pieces.build_response
    out = io.BytesIO()
    service.handle(io.BytesIO(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"), out, "check")
    status, _, body = _split_response(out.getvalue())
    if not status.startswith("HTTP/1.1 200") or json.loads(body).get("status") != "ok":
        return Outcome(
            "different",
            tr(
                f"GET /health 经你的代码得到 {status!r}",
                f"GET /health through your code answered {status!r}",
            ),
        )
    return Outcome(
        "same",
        tr(
            "请求行、响应和 GET /health 都与框架一致",
            "request lines, responses and GET /health agree with the framework",
        ),
    )

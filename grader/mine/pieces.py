"""The pieces a lab asks the student to write, and the functions the model runs with.

A *piece* is one step of the finished product that a lab has the student write: the
softmax inside attention (lab04), LayerNorm (lab05), the sampler (lab08), ... `CATALOGUE`
lists them in the order a reply passes through them (tokenise, format, the model's layers,
the cache, sampling, HTTP). `Pieces` holds one callable per student function, each
either the student's own or the framework's equivalent with the same contract (API.md);
`Pieces()` is the framework everywhere.

A student function that raises where the framework's would not, or returns something the
next step cannot use, raises `PieceError`, which names the piece, the lab and the line of
the student's file; the engine then falls back to the framework for that piece.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from framework import bpe_train, chat, http_protocol, sampling
from framework.kv_cache import KVCache
from framework.layernorm import layernorm_forward
from framework.math_ops import matmul_transposed_b, softmax
from framework.tensor import Tensor, as_tensor, tensor_from
from grader.errors import GraderError
from grader.i18n import Text, tr

__all__ = [
    "BY_KEY",
    "CATALOGUE",
    "MODEL_PIECES",
    "NOT_USED",
    "TURN",
    "PieceError",
    "PieceInfo",
    "Pieces",
    "guard",
]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class PieceInfo:
    """One piece: its lab, the student functions it is made of, and who uses it."""

    key: str
    lab: str
    functions: tuple[str, ...]
    title: Text
    hint: Text  # how to make a slow version fast
    commands: frozenset[str] = frozenset({"chat", "serve", "generate"})


_ALL = frozenset({"chat", "serve", "generate"})
_CHAT = frozenset({"chat", "serve"})

CATALOGUE: tuple[PieceInfo, ...] = (
    PieceInfo(
        "bpe",
        "lab12",
        ("bpe_apply_merge", "bpe_count_pairs"),
        tr("BPE 编码", "BPE encoding"),
        tr(
            "每个合并只扫一遍列表，从左到右往新列表里追加（不要在循环里 insert/pop 或切片）",
            "one left-to-right pass per merge, appending to a new list "
            "(no list.insert/pop or slicing inside the loop)",
        ),
        _ALL,
    ),
    PieceInfo(
        "format",
        "lab09",
        ("format_prompt", "extract_response"),
        tr("对话格式", "chat format"),
        tr(
            "用 ''.join 拼接，用 str.find/rfind 找标签",
            "build with ''.join, find tags with str.find/rfind",
        ),
        _CHAT,
    ),
    PieceInfo(
        "scores",
        "lab04",
        ("attention_scores",),
        tr("注意力分数", "attention scores"),
        tr(
            "一次矩阵乘法：q.numpy() @ k.numpy().T，不要对 i、j、d 写 Python 循环",
            "one matrix product, q.numpy() @ k.numpy().T, instead of loops over i, j, d",
        ),
    ),
    PieceInfo(
        "mask",
        "lab04",
        ("apply_mask",),
        tr("因果掩码", "causal mask"),
        tr(
            "整块相加：scores.numpy() += mask.numpy()",
            "add the whole mask at once: scores.numpy() += mask.numpy()",
        ),
    ),
    PieceInfo(
        "softmax",
        "lab04",
        ("softmax",),
        tr("softmax", "softmax"),
        tr(
            "按整行用 numpy：max/sum 加 axis=-1, keepdims=True",
            "whole rows with numpy: max and sum with axis=-1, keepdims=True",
        ),
    ),
    PieceInfo(
        "layernorm",
        "lab05",
        ("layernorm",),
        tr("LayerNorm", "LayerNorm"),
        tr(
            "mean/var 用 axis=-1, keepdims=True，不要逐行循环",
            "mean and var with axis=-1, keepdims=True, no loop over rows",
        ),
    ),
    PieceInfo(
        "residual",
        "lab05",
        ("residual_add",),
        tr("残差连接", "residual add"),
        tr(
            "整块原地相加：a.numpy()[...] += b.numpy()",
            "add in place at once: a.numpy()[...] += b.numpy()",
        ),
    ),
    PieceInfo(
        "block",
        "lab05",
        ("block_forward",),
        tr("Transformer Block", "Transformer block"),
        tr(
            "对所有行一次调用 block.attn.forward 和 block.ffn.forward，不要逐行",
            "call block.attn.forward and block.ffn.forward once on all rows",
        ),
    ),
    PieceInfo(
        "kv_cache",
        "lab11",
        ("kv_cache_alloc", "kv_cache_append", "kv_cache_len"),
        tr("KV Cache", "KV cache"),
        tr(
            "一次写入整行：cache.k.numpy()[layer, pos] = row",
            "write a whole row at once: cache.k.numpy()[layer, pos] = row",
        ),
    ),
    PieceInfo(
        "sampling",
        "lab08",
        ("sample_greedy", "sample_temperature", "sample_top_k"),
        tr("采样", "sampling"),
        tr(
            "用 np.argsort/np.argmax 和 rng.choice(p=...)，不要对词表写 Python 循环",
            "np.argsort/np.argmax and rng.choice(p=...), no Python loop over the vocabulary",
        ),
    ),
    PieceInfo(
        "http",
        "lab10",
        ("parse_request_line", "build_response"),
        tr("HTTP 解析与响应", "HTTP parsing and responses"),
        tr("str.split 一次，f-string 拼出响应头", "one str.split, an f-string for the head"),
        frozenset({"serve"}),
    ),
)

# lab13's whole turn: only `minillm chat` runs it, and only where its contract holds (one
# user message, no system prompt; see `grader.mine.engine`); not part of `mine --check`,
# which compares pieces inside a reply, nor timed by the probe (it is the whole reply)
TURN = PieceInfo(
    "turn",
    "lab13",
    ("chat_one_turn",),
    tr("一轮对话（chat_one_turn）", "one chat turn (chat_one_turn)"),
    tr(
        "预填一次提示，之后每步只把新 token 送进模型（用 KV Cache）",
        "prefill the prompt once, then feed only the new token each step (the KV cache)",
    ),
    frozenset({"chat"}),
)

# the labs whose code no product runs, and why (the `--mine` table lists them)
NOT_USED: dict[str, Text] = {
    "lab01": tr(
        "模型的 Tensor 是框架的：它的运算每次都作用于整个数组",
        "the model's Tensor is the framework's: its operations act on whole arrays",
    ),
    "lab02": tr(
        "课程的模型用 BPE 分词（lab12、lab13），不用字节 Tokenizer",
        "the course's model uses the BPE tokenizer (lab12, lab13), not the byte one",
    ),
    "lab03": tr(
        "词嵌入查表是框架的；位置编码表存在模型文件里，直接读取",
        "the embedding lookup is the framework's; the position table is read from the model file",
    ),
    "lab06": tr(
        "模型从课程的模型文件加载（框架的 model_load）",
        "the model is loaded from the course's model file (the framework's model_load)",
    ),
    "lab07": tr("对话只做推理，不训练", "chatting runs inference only: nothing is trained"),
}

BY_KEY = {p.key: p for p in (*CATALOGUE, TURN)}
MODEL_PIECES = frozenset(
    {"scores", "mask", "softmax", "layernorm", "residual", "block", "kv_cache"}
)


class PieceError(GraderError):
    """A student function failed inside the product; the message names piece, lab, line."""

    def __init__(self, piece: str, function: str, why: str, where: str = "") -> None:
        self.piece, self.function, self.why, self.where = piece, function, why, where
        at = f" ({where})" if where else ""
        super().__init__(f"your {function} ({BY_KEY[piece].lab}) {why}{at}")


def _student_line(error: BaseException, path: Path | None) -> str:
    """``labs/lab04/student.py:42`` for the deepest frame in the student's file, or ""."""
    if path is None:
        return ""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename) == path]
    if not frames:
        return ""
    return f"{path.parent.name}/{path.name}:{frames[-1].lineno}"


def guard(piece: str, name: str, fn: F, path: Path | None = None) -> F:
    """`fn` (a student function), raising `PieceError` instead of whatever it raises."""

    @wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except PieceError:
            raise
        except Exception as e:
            why = f"raised {type(e).__name__}: {str(e)[:200]}"
            raise PieceError(piece, name, why, _student_line(e, path)) from e

    call.__dict__["student"] = True
    return call  # type: ignore[return-value]


# -- the framework's version of each student function, with the student's contract ------


def fw_attention_scores(q: Any, k: Any, scale: float) -> Tensor:
    """scale · q @ kᵀ, [S, hd] × [T, hd] → [S, T] (lab04 `attention_scores`)."""
    return tensor_from(np.float32(scale) * matmul_transposed_b(q, k).numpy())  # (S, T)


def fw_apply_mask(scores: Any, mask: Any) -> None:
    """In place scores += mask (lab04 `apply_mask`)."""
    view = scores.numpy() if isinstance(scores, Tensor) else scores
    view += as_tensor(mask, "mask").numpy()


def fw_layernorm(x: Any, gamma: Any, beta: Any, eps: float = 1e-5) -> Tensor:
    """LayerNorm over the last dimension (lab05 `layernorm`)."""
    xs = as_tensor(x, "x").numpy().astype(np.float32, copy=False)
    g, b = as_tensor(gamma, "gamma").numpy(), as_tensor(beta, "beta").numpy()
    return tensor_from(layernorm_forward(xs, g, b, eps)[0])


def fw_residual_add(a: Any, b: Any) -> None:
    """In place a += b (lab05 `residual_add`)."""
    view = a.numpy() if isinstance(a, Tensor) else a
    view += as_tensor(b, "b").numpy()


def fw_kv_cache_append(cache: KVCache, layer: int, k_row: Any, v_row: Any) -> int:
    """Append one row to one layer (lab11 `kv_cache_append`)."""
    return cache.append(layer, k_row, v_row)


def fw_kv_cache_len(cache: KVCache, layer: int | None = None) -> int:
    """Filled positions (lab11 `kv_cache_len`)."""
    return cache.length(layer)


@dataclass
class Pieces:
    """The functions a reply runs through; the framework's unless replaced.

    `block_forward` None means the framework's Pre-LN wiring of the other pieces (the
    student's `block_forward` calls its own module's `layernorm` and `residual_add`).
    `mine` names the pieces (`PieceInfo.key`) that are the student's.
    """

    bpe_apply_merge: Callable[..., Any] = bpe_train.merge_pair
    bpe_count_pairs: Callable[..., Any] = bpe_train.count_pairs
    format_prompt: Callable[..., Any] = chat.format_prompt
    extract_response: Callable[..., Any] = chat.extract_response
    attention_scores: Callable[..., Any] = fw_attention_scores
    apply_mask: Callable[..., Any] = fw_apply_mask
    softmax: Callable[..., Any] = softmax
    layernorm: Callable[..., Any] = fw_layernorm
    residual_add: Callable[..., Any] = fw_residual_add
    block_forward: Callable[..., Any] | None = None
    kv_cache_alloc: Callable[..., Any] = KVCache
    kv_cache_append: Callable[..., Any] = fw_kv_cache_append
    kv_cache_len: Callable[..., Any] = fw_kv_cache_len
    sample_greedy: Callable[..., Any] = sampling.sample_greedy
    sample_temperature: Callable[..., Any] = sampling.sample_temperature
    sample_top_k: Callable[..., Any] = sampling.sample_top_k
    parse_request_line: Callable[..., Any] = http_protocol.parse_request_line
    build_response: Callable[..., Any] = http_protocol.build_response
    chat_one_turn: Callable[..., Any] | None = None  # None: the framework's reply
    mine: frozenset[str] = field(default_factory=frozenset)

    def is_mine(self, key: str) -> bool:
        """True when piece `key` runs the student's code."""
        return key in self.mine

    @property
    def runs_model(self) -> bool:
        """True when some piece inside the model's forward is the student's."""
        return bool(self.mine & MODEL_PIECES)

    def with_piece(self, key: str, functions: dict[str, Callable[..., Any]]) -> Pieces:
        """A copy in which piece `key` runs `functions` (name → the student's callable)."""
        return replace(self, **functions, mine=self.mine | {key})

    def without(self, key: str) -> Pieces:
        """A copy in which piece `key` is the framework's again."""
        default = Pieces()
        names = BY_KEY[key].functions
        return replace(self, **{n: getattr(default, n) for n in names}, mine=self.mine - {key})

"""`--check` for the pieces inside the model and for sampling: logits and tokens compared.

The reference is the framework's own run: for each fixed prompt, the prompt ids the chat
would feed, `STEPS` greedy tokens, the logits at every decode step (with the KV cache)
and the logits of every position of prompt + tokens in one uncached forward. A piece is
then run alone (every other piece the framework's) over the same ids, teacher-forced
with the framework's tokens, so each logit has a reference to compare with:

- logits agree when |yours − framework| ≤ `ATOL` + `RTOL`·|framework| everywhere (float32
  sums taken in another order differ by about 1e-6; a wrong piece by 0.01 to 10s);
- the greedy token of every step must be the framework's.

Sampling is compared on the reference logits (greedy must pick the same id) and, for
temperature and top-k, by distribution: a correct sampler draws differently from the
framework's for the same seed, so only the frequencies over many draws are compared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.generate import Decoder, _allowed
from framework.model import GPTModel
from framework.sampling import probabilities
from framework.serving import ChatEngine
from framework.tensor import tensor_from
from grader.i18n import Text, tr
from grader.mine.decode import decoder_for, runner_for
from grader.mine.pieces import Pieces

__all__ = [
    "ATOL",
    "RTOL",
    "STEPS",
    "Outcome",
    "Reference",
    "compare_model",
    "compare_sampling",
    "references",
]

STEPS = 12  # greedy steps compared after each prompt
ATOL, RTOL = 1e-4, 1e-4  # float32 logits: the same maths in another order stays far inside
DRAWS = 2000  # draws per distribution test
TV_LIMIT = 0.06  # total variation allowed between frequencies and probabilities (2000 draws)

F32 = NDArray[np.float32]


@dataclass
class Outcome:
    """One comparison: "same", "different" or "error", and what was seen."""

    status: str
    detail: Text


@dataclass
class Reference:
    """The framework's run on one prompt."""

    prompt: str
    ids: list[int]  # the prompt ids the chat feeds (BOS first)
    tokens: list[int]  # the framework's greedy tokens
    step_logits: list[F32]  # [V] before each token
    full_logits: F32  # [len(ids) + len(tokens), V], one uncached forward
    allowed: NDArray[np.bool_] | None  # ids the tokenizer can produce


def references(engine: ChatEngine, prompts: tuple[str, ...], steps: int = STEPS) -> list[Reference]:
    """The framework's greedy run for each prompt (as `engine` would prompt the model)."""
    model, out = engine.model, []
    allowed = _allowed(engine.tokenizer, model.config.vocab_size)
    for prompt in prompts:
        ids = engine.prompt_ids("", [("user", prompt)], steps)
        dec = Decoder(model, ids)
        tokens, logits = [], []
        for _ in range(min(steps, model.config.max_seq_len - len(ids))):
            step = dec.logits()
            masked = step if allowed is None else np.where(allowed, step, -np.inf)
            tokens.append(int(np.argmax(masked)))
            logits.append(step.copy())
            dec.push(tokens[-1])
        full = model.forward(ids + tokens).numpy()
        out.append(Reference(prompt, ids, tokens, logits, full, allowed))
    return out


class _Worst:
    """The largest logit difference seen, and where; the first token that differs."""

    def __init__(self, tok: Any) -> None:
        self.tok = tok
        self.excess, self.err, self.where = 0.0, 0.0, ""
        self.token: Text | None = None

    def logits(self, got: F32, want: F32, where: Callable[[int], str]) -> None:
        err = np.abs(got.astype(np.float64) - want)
        excess = err - (ATOL + RTOL * np.abs(want))
        k = int(np.argmax(excess))
        if excess.flat[k] > self.excess or not self.where:
            row = k // want.shape[-1] if want.ndim == 2 else 0
            self.excess, self.err, self.where = (
                float(excess.flat[k]),
                float(err.flat[k]),
                where(row),
            )

    def step(self, got: F32, want_id: int, ref: Reference, step: int) -> None:
        masked = got if ref.allowed is None else np.where(ref.allowed, got, -np.inf)
        got_id = int(np.argmax(masked))
        if got_id != want_id and self.token is None:
            y, f = self.tok.token_str(got_id), self.tok.token_str(want_id)
            self.token = tr(
                f"「{ref.prompt}」第 {step + 1} 步的贪心 token 不同：你的 {y!r}，框架 {f!r}",
                f"greedy token differs at {ref.prompt!r} step {step + 1}: yours {y!r}, "
                f"framework {f!r}",
            )

    def outcome(self, refs: list[Reference]) -> Outcome:
        n, steps = len(refs), max(len(r.tokens) for r in refs)
        if self.excess <= 0 and self.token is None:
            return Outcome(
                "same",
                tr(
                    f"logits 最大差 {self.err:.1e}（{n} 个提示 × 预填充 + {steps} 步）；"
                    "贪心 token 一致",
                    f"logits max |Δ| {self.err:.1e} ({n} prompts × prefill + {steps} steps); "
                    "greedy tokens equal",
                ),
            )
        parts = []
        if self.excess > 0:
            tol = f"{ATOL:g} + {RTOL:g}·|x|"
            parts.append(
                tr(
                    f"logits 相差 {self.err:.3g}（{self.where}；容差 {tol}）",
                    f"logits differ by {self.err:.3g} at {self.where} (tolerance {tol})",
                )
            )
        if self.token is not None:
            parts.append(self.token)
        return Outcome(
            "different", Text("；".join(t.zh for t in parts), "; ".join(t.en for t in parts))
        )


def _at(prompt: str, kind: str, row: int, offset: int = 0) -> str:
    return f"{prompt!r} {kind} {row + offset}"


def compare_model(pieces: Pieces, model: GPTModel, tok: Any, refs: list[Reference]) -> Outcome:
    """Run the model through `pieces` on every reference; logits and tokens compared."""
    runner, worst = runner_for(pieces, model), _Worst(tok)
    for ref in refs:
        full = runner.forward(ref.ids + ref.tokens).numpy()
        worst.logits(full, ref.full_logits, partial(_at, ref.prompt, "position"))
        dec = decoder_for(pieces, runner, ref.ids, True, None)
        for i, want in enumerate(ref.tokens):
            got = dec.logits()
            worst.logits(got, ref.step_logits[i], partial(_at, ref.prompt, "step", offset=i + 1))
            worst.step(got, want, ref, i)
            dec.push(want)
    return worst.outcome(refs)


def _tv(draws: list[int], probs: NDArray[np.float64]) -> float:
    freq = np.bincount(np.asarray(draws, dtype=np.int64), minlength=probs.size) / len(draws)
    return float(0.5 * np.abs(freq[: probs.size] - probs).sum())


def compare_sampling(pieces: Pieces, refs: list[Reference]) -> Outcome:
    """Greedy on the reference logits, then distributions of temperature and top-k."""
    for ref in refs:
        for i, logits in enumerate(ref.step_logits):
            masked = logits if ref.allowed is None else np.where(ref.allowed, logits, -np.inf)
            got = pieces.sample_greedy(tensor_from(masked))
            if got != int(np.argmax(masked)):
                return Outcome(
                    "different",
                    tr(
                        f"sample_greedy 在「{ref.prompt}」第 {i + 1} 步选了 {got!r}，应为 "
                        f"{int(np.argmax(masked))}（第一个最大值）",
                        f"sample_greedy picked {got!r} at {ref.prompt!r} step {i + 1}, not "
                        f"{int(np.argmax(masked))} (the first maximum)",
                    ),
                )
    x = np.array([2.0, 1.0, 2.0, 0.5, 0.0, -1.0, -np.inf, 1.5], dtype=np.float32)  # (8,)
    cases: list[tuple[str, Callable[[np.random.Generator], Any], NDArray[np.float64]]] = [
        (
            "sample_temperature(T=0.7)",
            lambda g: pieces.sample_temperature(tensor_from(x), 0.7, g),
            probabilities(x, 0.7),
        ),
        (
            "sample_top_k(k=3, T=1)",
            lambda g: pieces.sample_top_k(tensor_from(x), 3, 1.0, g),
            probabilities(x, 1.0, top_k=3),
        ),
        (
            "sample_top_k(k=3, T=0)",
            lambda g: pieces.sample_top_k(tensor_from(x), 3, 0.0, g),
            probabilities(x, 0.0),
        ),
    ]
    for name, draw, probs in cases:
        rng = np.random.default_rng(1234)
        draws = [draw(rng) for _ in range(DRAWS)]
        again = np.random.default_rng(1234)
        if [draw(again) for _ in range(20)] != draws[:20]:
            return Outcome(
                "different",
                tr(
                    f"{name}：同一个生成器状态给出不同结果",
                    f"{name}: the same generator state drew differently",
                ),
            )
        bad = [
            d
            for d in draws
            if not isinstance(d, int | np.integer) or not 0 <= d < probs.size or probs[int(d)] == 0
        ]
        if bad:
            return Outcome(
                "different",
                tr(
                    f"{name} 抽到了概率为 0 的 id {bad[0]!r}",
                    f"{name} drew id {bad[0]!r}, whose probability is 0",
                ),
            )
        if (tv := _tv([int(d) for d in draws], probs)) > TV_LIMIT:
            return Outcome(
                "different",
                tr(
                    f"{name}：{DRAWS} 次抽样的频率与概率相差 {tv:.3f}（总变差，上限 {TV_LIMIT}）",
                    f"{name}: frequencies of {DRAWS} draws are {tv:.3f} from the probabilities "
                    f"(total variation, limit {TV_LIMIT})",
                ),
            )
    return Outcome(
        "same",
        tr(
            f"贪心与框架一致；温度与 top-k 的 {DRAWS} 次抽样分布相符",
            f"greedy equal; temperature and top-k distributions match over {DRAWS} draws",
        ),
    )

"""Probes for code that drives a model: a model that logs its calls, text files in memory.

A decode loop is right when every step's logits are the logits of the whole sequence so
far. Its output text alone can hide a wrong loop (a short greedy reply may come out the
same), so `LoggedModel` writes down what each `forward` call was given (the ids, the start
position, which KV cache and how full it was) and the last row of logits it returned. A
check can then replay the sequence without a cache and compare step by step. `text_file`
gives a REPL an in-memory stdout (`io.StringIO`), and `echoing_input` an in-memory stdin
that copies each line it hands out into that stdout, as a terminal shows what is typed:
the transcript then shows whether the prompt came before the read.

Not here: the checks themselves (they live with the lab that uses them), timing.

Where the idea comes from: test spies (a wrapper that records calls), as in
`unittest.mock`'s ``call_args_list``, kept to plain data so it can be sent across a process
boundary.

Example:
    >>> from framework.config import tiny_config
    >>> from framework.kv_cache import KVCache
    >>> model = logged(GPTModel(tiny_config()))
    >>> cache = KVCache(2, 64, 32)
    >>> _ = model.forward([2, 76, 105], kv_cache=cache)
    >>> _ = model.forward([33], kv_cache=cache, start_pos=3)
    >>> [(c["ids"], c["start_pos"], c["cache"], c["cache_len"]) for c in model.calls]
    [([2, 76, 105], 0, 0, 0), ([33], 3, 0, 3)]
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from framework.kv_cache import KVCache
from framework.model import GPTModel
from framework.tensor import Tensor

__all__ = ["EchoingInput", "LoggedModel", "ReadPastEnd", "echoing_input", "logged", "text_file"]


class LoggedModel(GPTModel):
    """A `GPTModel` that records every `forward` and `forward_batch` call in `calls`.

    Each record is a dict of plain data: ``ids`` (list of int, or a list of lists for a
    batch), ``start_pos``, ``cache`` (None without a cache, else the number of the cache
    object: 0 for the first one this model saw, 1 for the next, ...), ``cache_len`` (the
    cache's filled length before the call), ``batch`` (true for `forward_batch`) and
    ``last_logits`` (float32 [V]: the last row for a sequence, of the last row for a batch).
    """

    def __init__(self, model: GPTModel) -> None:
        super().__init__(model.config)
        self.load_state(model.state_dict())
        self.calls: list[dict[str, Any]] = []
        self._caches: list[KVCache] = []

    def _cache_number(self, cache: KVCache | None) -> int | None:
        if cache is None:
            return None
        for k, seen in enumerate(self._caches):
            if seen is cache:
                return k
        self._caches.append(cache)
        return len(self._caches) - 1

    def forward(self, ids: Any, kv_cache: KVCache | None = None, start_pos: int = 0) -> Tensor:
        """`GPTModel.forward`, recorded."""
        record: dict[str, Any] = {
            "ids": [int(i) for i in np.asarray(ids).reshape(-1)],
            "start_pos": int(start_pos),
            "cache": self._cache_number(kv_cache),
            "cache_len": None if kv_cache is None else int(kv_cache.length()),
            "batch": False,
        }
        logits = super().forward(ids, kv_cache=kv_cache, start_pos=start_pos)  # (S, V)
        record["last_logits"] = logits.numpy()[-1].copy()  # (V,)
        self.calls.append(record)
        return logits

    def forward_batch(self, ids: Any, keep_activations: bool = True) -> np.ndarray:
        """`GPTModel.forward_batch`, recorded (no cache: ``cache`` is None)."""
        logits = super().forward_batch(ids, keep_activations)  # (B, T, V)
        self.calls.append({
            "ids": np.asarray(ids).tolist(), "start_pos": 0, "cache": None, "cache_len": None,
            "batch": True, "last_logits": logits[-1, -1].copy(),  # (V,)
        })  # fmt: skip
        return logits


def logged(model: GPTModel) -> LoggedModel:
    """A `LoggedModel` with a copy of `model`'s config and weights.

    Raises:
        TypeError: if `model` is not a GPTModel.
    """
    if not isinstance(model, GPTModel):
        raise TypeError(f"model must be a GPTModel, got {type(model).__name__}")
    return LoggedModel(model)


def text_file(text: str = "") -> io.StringIO:
    """An in-memory text file holding `text`, positioned at its start.

    Example:
        >>> f = text_file("hi\\n/quit\\n")
        >>> f.readline(), f.readline(), f.readline()
        ('hi\\n', '/quit\\n', '')
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return io.StringIO(text)


class ReadPastEnd(RuntimeError):
    """A loop kept reading an `EchoingInput` after its end (it would never stop)."""


class EchoingInput(io.StringIO):
    """An in-memory stdin that writes each line it hands out to `echo` (see `echoing_input`).

    A real stdin at its end returns "" forever, so a loop that does not stop at EOF spins
    until it is killed; this one raises `ReadPastEnd` once "" has been read `EOF_READS`
    times, so that such a loop ends at once and says why.
    """

    EOF_READS = 100

    def __init__(self, text: str, echo: io.StringIO) -> None:
        super().__init__(text)
        self.echo = echo
        self.eof_reads = 0

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        """The next line (\"\" at the end), also written to `echo` (with a newline).

        Raises:
            ReadPastEnd: when the end has been read more than `EOF_READS` times.
        """
        line = super().readline(-1 if size is None else size)
        if not line:
            self.eof_reads += 1
            if self.eof_reads > self.EOF_READS:
                raise ReadPastEnd(
                    f"stdin was read {self.eof_reads} times after its end (readline() gave "
                    "''): the loop does not stop at EOF"
                )
        self.echo.write(line if line.endswith("\n") or not line else line + "\n")
        return line

    def __next__(self) -> str:  # type: ignore[override]
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def echoing_input(text: str, echo: io.StringIO) -> EchoingInput:
    """A stdin holding `text` that echoes each line read into `echo`, like a terminal.

    Example:
        >>> out = text_file()
        >>> stdin = echoing_input("hi\\n/quit", out)
        >>> _ = out.write("> "); stdin.readline()
        'hi\\n'
        >>> _ = out.write("> "); stdin.readline(), out.getvalue()
        ('/quit', '> hi\\n> /quit\\n')
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return EchoingInput(text, echo)

"""The GPT model: embedding, L Pre-LN blocks, a final LayerNorm and an untied lm_head.

    x      = token_embedding[ids] + position_embedding[start_pos : start_pos + S]  # (S, H)
    x      = blocks[l](x, causal mask)  for l = 0 … L−1                             # (S, H)
    logits = final_ln(x) @ lm_head                                                  # (S, V)

`GPTModel.forward(ids)` is the inference pass (one sequence; with a `KVCache` it writes this
call's keys and values and attends over everything cached). `forward_batch(ids [B, T])`
and `backward(dlogits)` are the training pass. All of them check their inputs here and run
the model as functions of its weights (`framework.gpt`). `init_weights` draws
the weights in the C course's order; `model_save`/`model_load` read and write the C course's
file format byte for byte (`c-labs-01-07.md` §8.8)::

    uint32 magic 0x4D4C4C4D ("MLLM"), uint32 version 1,                 little-endian
    int32  vocab_size, hidden_dim, num_heads, num_layers, ffn_dim, max_seq_len
    float32 arrays in `parameters()` order                              (962,080 bytes default)

A model file is untrusted input: `model_load` checks the magic, the version, the config and
the exact length the header implies before it reads a single weight.

Not here: weight tying, dropout, sampling (`framework.generate`), the loss.

Example:
    >>> from framework.config import tiny_config
    >>> model = GPTModel(tiny_config())
    >>> init_weights(model, seed=0)
    >>> model.forward([2, 76, 105]).shape, model.num_parameters()
    ((3, 260), 43904)
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Sequence
from dataclasses import fields as dc_fields
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from framework.config import ModelConfig
from framework.embedding import Embedding, sinusoidal_table
from framework.gpt import (
    GPTActivations,
    GPTWeights,
    check_batch_ids,
    gpt_backward,
    gpt_forward,
    gpt_logits,
    gpt_logits_kv,
    parameter_shapes,
)
from framework.kv_cache import KVCache
from framework.layernorm import LayerNorm
from framework.module import Member, Module, array_of
from framework.tensor import Tensor, tensor_zeros
from framework.transformer import TransformerBlock
from framework.validate import non_negative_int

__all__ = [
    "MAGIC",
    "VERSION",
    "GPTModel",
    "ModelFileError",
    "init_weights",
    "model_load",
    "model_save",
]

MAGIC = 0x4D4C4C4D  # b"MLLM"
VERSION = 1
_HEADER = struct.Struct("<II6i")  # magic, version, six config fields: 32 bytes


class ModelFileError(ValueError):
    """A model file that is not a valid miniLLM model (the message says what is wrong)."""


class GPTModel(Module):
    """A decoder-only Transformer language model.

    Args:
        config: the model's sizes; validated here.

    Attributes:
        config: a copy of the config. embedding, blocks (list of `TransformerBlock`),
        final_ln, lm_head (Tensor [H, V]): the layers, all zeros/identity until
        `init_weights`.

    Raises:
        TypeError: if `config` is not a `ModelConfig` or a field is not an int.
        ValueError: if a field is not positive or hidden_dim % num_heads != 0.

    Example:
        >>> from framework.config import default_config
        >>> GPTModel(default_config()).num_parameters()
        240512
    """

    def __init__(self, config: ModelConfig) -> None:
        if not isinstance(config, ModelConfig):
            raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}")
        self.config = replace(config).validate()
        c = self.config
        self.embedding = Embedding(c.vocab_size, c.hidden_dim, c.max_seq_len)
        self.blocks = [
            TransformerBlock(c.hidden_dim, c.num_heads, c.ffn_dim) for _ in range(c.num_layers)
        ]
        self.final_ln = LayerNorm(c.hidden_dim)
        self.lm_head = tensor_zeros((c.hidden_dim, c.vocab_size))
        self._trace: tuple[GPTActivations, GPTWeights, tuple[int, ...]] | None = None

    def _members(self) -> list[tuple[str, Member]]:
        blocks: list[tuple[str, Member]] = [(f"blocks.{i}", b) for i, b in enumerate(self.blocks)]
        return [("embedding", self.embedding), *blocks, ("final_ln", self.final_ln),
                ("lm_head", self.lm_head)]  # fmt: skip

    def forward(self, ids: Any, kv_cache: KVCache | None = None, start_pos: int = 0) -> Tensor:
        """Logits for one sequence of token ids; returns a new Tensor [S, V].

        Args:
            ids: S token ids (list or 1-D int array), each in [0, vocab_size).
            kv_cache: if given, this call's keys and values are written at positions
                start_pos…start_pos+S−1 of every layer and attention covers 0…start_pos+S−1.
            start_pos: position of ids[0].

        Raises:
            TypeError: for non-int ids or a `kv_cache` that is not a `KVCache`.
            ValueError: for an empty or out-of-range id, start_pos + S > max_seq_len, or a
                cache of the wrong size or holding fewer than start_pos positions (the
                cache is left unchanged).
        """
        idx = self.embedding.check_ids(ids, start_pos)
        if kv_cache is None:
            logits = gpt_logits(self.gpt_weights(), idx[None], start_pos)[0]  # (S, V)
        else:
            self._check_cache(kv_cache, start_pos, idx.size)
            logits = gpt_logits_kv(self.gpt_weights(), idx, kv_cache, start_pos)  # (S, V)
        return Tensor(logits.reshape(-1), logits.shape)

    def _check_cache(self, cache: KVCache, start_pos: int, count: int) -> None:
        if not isinstance(cache, KVCache):
            raise TypeError(f"kv_cache must be a KVCache or None, got {type(cache).__name__}")
        c = self.config
        if (cache.num_layers, cache.hidden_dim) != (c.num_layers, c.hidden_dim):
            raise ValueError(
                f"kv_cache has {cache.num_layers} layers of width {cache.hidden_dim}, the model "
                f"needs {c.num_layers} layers of width {c.hidden_dim}"
            )
        cache.check_room(start_pos, count)

    def gpt_weights(self) -> GPTWeights:
        """The parameters as float32 numpy views (Q/K/V fused), for `framework.gpt`."""
        ln = self.final_ln
        return GPTWeights(
            array_of(self.embedding.token_embedding), array_of(self.embedding.position_embedding),
            [b.weights() for b in self.blocks], array_of(ln.gamma), array_of(ln.beta),
            array_of(self.lm_head), ln.eps,
        )  # fmt: skip

    def forward_batch(self, ids: Any, keep_activations: bool = True) -> NDArray[np.float32]:
        """Training forward: logits [B, T, V] for ids [B, T]; keeps what `backward` needs.

        Args:
            ids: token ids [B, T], T <= max_seq_len.
            keep_activations: False for inference: nothing is kept (faster, less memory)
                and a following `backward` raises.

        Raises:
            TypeError: if `ids` is not a 2-D array of ints.
            ValueError: if it is empty, an id is out of range or T > max_seq_len.
        """
        arr = check_batch_ids(ids, self.config)
        self._trace = None  # let the previous step's activations go first
        w = self.gpt_weights()
        if not keep_activations:
            return gpt_logits(w, arr)
        logits, act = gpt_forward(w, arr)
        self._trace = (act, w, logits.shape)
        return logits

    def backward(self, dlogits: Any) -> dict[str, NDArray[np.float32]]:
        """Gradients of every parameter for d(loss)/d(logits) of the last `forward_batch`.

        Args:
            dlogits: [B, T, V], the same shape as the logits `forward_batch` returned.

        Returns:
            name -> float32 gradient, same names and order as `parameters()`.

        Raises:
            RuntimeError: if `forward_batch` has not been called.
            ValueError: if `dlogits` has another shape.
        """
        if self._trace is None:
            raise RuntimeError("backward() needs a forward_batch() first")
        act, w, shape = self._trace
        g = np.asarray(dlogits, dtype=np.float32)
        if g.shape != shape:
            raise ValueError(f"dlogits must have the logits' shape {shape}, got {g.shape}")
        return gpt_backward(g, act, w)


def init_weights(model: GPTModel, seed: int) -> None:
    """In place: the C course's initialisation, drawn from `numpy.random.default_rng(seed)`.

    Draw order: token table, then per layer W_q, W_k, W_v, W_o, W1, W2, then lm_head, all
    N(0, 0.02²). Position table sinusoidal; LayerNorms γ = 1, β = 0; biases 0.

    Raises:
        TypeError: if `model` is not a GPTModel or `seed` not an int.
        ValueError: if `seed` < 0.
    """
    if not isinstance(model, GPTModel):
        raise TypeError(f"model must be a GPTModel, got {type(model).__name__}")
    rng = np.random.default_rng(non_negative_int(seed, "seed"))
    c = model.config
    model.embedding.init_weights(rng)
    table = sinusoidal_table(c.max_seq_len, c.hidden_dim)  # (max_seq_len, H)
    array_of(model.embedding.position_embedding)[...] = table
    for block in model.blocks:
        block.init_weights(rng)
    model.final_ln.reset()
    array_of(model.lm_head)[...] = rng.normal(0.0, 0.02, size=model.lm_head.shape)


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    """Write `model` in the miniLLM file format; never leaves a half-written file.

    The bytes go to a temporary file next to `path`, which then replaces `path`.

    Raises:
        TypeError: if `model` is not a GPTModel.
        OSError: if the file cannot be written (`path` is then untouched).
    """
    if not isinstance(model, GPTModel):
        raise TypeError(f"model must be a GPTModel, got {type(model).__name__}")
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(_HEADER.pack(MAGIC, VERSION, *model.config.as_tuple()))
            for _, t in model.parameters():
                f.write(np.ascontiguousarray(array_of(t), dtype="<f4").tobytes())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def model_load(path: str | os.PathLike[str]) -> GPTModel:
    """Read a model written by `model_save` (or the C course's `model_save`).

    The length the header's config implies is computed from its counts alone, before any
    loop over the layers, so a header of absurd counts (read little-endian, a big-endian
    header says 83,886,080 layers for 5) is refused at once.

    Raises:
        ModelFileError: (a ValueError) for a wrong magic, an unknown version, an invalid
            config, or a length other than the header implies (truncated or over-long).
        OSError: if the file cannot be read.
    """

    def need(fields: Sequence[int]) -> tuple[int, int, int] | None:
        """(file bytes, parameter bytes without the layers, per layer) of a valid config."""
        config = ModelConfig(*fields)
        try:
            config.validate()
        except ValueError:
            return None
        bytes_of = [  # parameter_shapes of 0 and 1 layers: a loop of at most one layer
            4 * sum(math.prod(s) for _, s in parameter_shapes(replace(config, num_layers=n)))
            for n in (0, 1)
        ]
        base, per_layer = bytes_of[0], bytes_of[1] - bytes_of[0]
        return _HEADER.size + base + config.num_layers * per_layer, base, per_layer

    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < _HEADER.size:
            raise ModelFileError(f"{path}: truncated: {size} bytes, less than the 32-byte header")
        raw = f.read(_HEADER.size)
        magic, version, *fields = _HEADER.unpack(raw)
        _, swapped_version, *swapped = struct.unpack(">II6i", raw)  # read big-endian
        endian = " (the header looks big-endian; the format is little-endian)"
        if magic != MAGIC:
            raise ModelFileError(f"{path}: wrong magic 0x{magic:08X}, expected 0x{MAGIC:08X}")
        if version != VERSION:
            note = endian if swapped_version == VERSION else ""
            raise ModelFileError(
                f"{path}: unknown version {version}, this reader knows {VERSION}{note}"
            )
        as_big = need(swapped)  # the counts read big-endian fit this file's length exactly
        note = endian if as_big is not None and as_big[0] == size else ""
        config = ModelConfig(*fields)
        try:
            config.validate()
        except ValueError as e:
            raise ModelFileError(f"{path}: invalid config {config}: {e}{note}") from None
        want, base, per_layer = need(fields) or (0, 0, 0)
        if size != want:
            kind = "truncated" if size < want else "over-long"
            if want > 2 * size:  # not a lost tail: counts far beyond the file, name them
                counts = ", ".join(
                    f"{k.name}={v}" for k, v in zip(dc_fields(config), fields, strict=True)
                )
                note = (
                    f" ({_HEADER.size} bytes of header, {base} outside the layers and "
                    f"{per_layer} per layer, for {counts}){note}"
                )
            raise ModelFileError(
                f"{path}: {kind}: {size} bytes, the header's config needs {want}{note}"
            )
        shapes = parameter_shapes(config)
        flat = np.frombuffer(f.read(want - _HEADER.size), dtype="<f4")
    model = GPTModel(config)
    state, at = {}, 0
    for name, shape in shapes:
        n = math.prod(shape)
        state[name] = flat[at : at + n].reshape(shape)
        at += n
    model.load_state(state)
    return model

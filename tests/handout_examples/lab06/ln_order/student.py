"""A lab06 student.py that writes each block's ln2 where ln1 belongs (the handout quotes its report)."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator

import numpy as np

from framework.config import ModelConfig
from framework.model import GPTModel, init_weights
from framework.tensor import Tensor

MAGIC = 0x4D4C4C4D  # the bytes "MLLM" (4D 4C 4C 4D)
VERSION = 1


def default_config() -> ModelConfig:
    """vocab 260, hidden 64, heads 4, layers 4, ffn 256, max_seq_len 128."""
    return ModelConfig(
        vocab_size=260, hidden_dim=64, num_heads=4, num_layers=4, ffn_dim=256, max_seq_len=128
    )


def model_create(config: ModelConfig, seed: int = 0) -> GPTModel:
    """Check the config, build the model, draw its weights from `seed`."""
    config.validate()  # ValueError / TypeError naming the field
    model = GPTModel(config)
    init_weights(model, seed)
    return model


def _arrays(model: GPTModel) -> Iterator[Tensor]:
    """Every parameter in the file's order."""
    yield model.embedding.token_embedding
    yield model.embedding.position_embedding
    for b in model.blocks:
        yield from (b.ln2.gamma, b.ln2.beta, b.attn.w_q, b.attn.w_k, b.attn.w_v, b.attn.w_o)
        yield from (b.ln1.gamma, b.ln1.beta, b.ffn.w1, b.ffn.b1, b.ffn.w2, b.ffn.b2)
    yield from (model.final_ln.gamma, model.final_ln.beta, model.lm_head)


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    """Header (magic, version, six config ints), then float32 arrays, little-endian."""
    c = model.config
    header = struct.pack(
        "<II6i",
        MAGIC,
        VERSION,
        c.vocab_size,
        c.hidden_dim,
        c.num_heads,
        c.num_layers,
        c.ffn_dim,
        c.max_seq_len,
    )
    with open(path, "wb") as f:
        f.write(header)
        for t in _arrays(model):
            f.write(np.asarray(t.numpy(), dtype="<f4").tobytes())  # row-major, any strides

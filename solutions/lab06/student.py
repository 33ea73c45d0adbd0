"""Lab06 — the complete GPT model: its configuration, its creation, and its file.

    default_config()          -> the course's model: V 260, H 64, 4 heads, 4 layers, F 256, S 128
    model_create(config, seed) -> Embedding -> L x TransformerBlock -> final LayerNorm -> lm_head
    model_save(model, path)    -> the C course's file format, byte for byte

The framework's `GPTModel` (framework/model.py) is the model, and `model_load` reads the
file back; `framework.model.model_save` is the twin of your `model_save` and may not be
called from it. Run `make test` in this folder after every change; `TASK.md` explains each
function and the file format.
"""

from __future__ import annotations

import os
import struct  # noqa: F401

import numpy as np  # noqa: F401

from framework.config import ModelConfig
from framework.model import GPTModel, init_weights  # noqa: F401

# BEGIN SOLUTION
# isort: split
from collections.abc import Iterator

from framework.tensor import Tensor

# END SOLUTION

MAGIC = 0x4D4C4C4D  # the bytes "MLLM" (4D 4C 4C 4D)
VERSION = 1


def default_config() -> ModelConfig:
    """The course's default model size.

    Returns:
        ModelConfig(vocab_size=260, hidden_dim=64, num_heads=4, num_layers=4,
        ffn_dim=256, max_seq_len=128): 240,512 parameters.
    """
    # BEGIN SOLUTION: return a ModelConfig with the six default values.
    return ModelConfig(
        vocab_size=260, hidden_dim=64, num_heads=4, num_layers=4, ffn_dim=256, max_seq_len=128
    )
    # END SOLUTION


def model_create(config: ModelConfig, seed: int = 0) -> GPTModel:
    """A GPT model of size `config`, with weights drawn from `seed`.

    The model holds an Embedding (token table [V, H], sinusoidal position table
    [max_seq_len, H]), `num_layers` TransformerBlocks, a final LayerNorm and its own
    `lm_head` [H, V] (not the token table transposed). `init_weights(model, seed)` draws
    every weight; the same seed always gives the same model.

    Args:
        config: the six sizes; every field must be a positive int and hidden_dim must be
            divisible by num_heads.
        seed: the seed of the weights.

    Returns:
        A new GPTModel.

    Raises:
        ValueError: if a field is not positive or hidden_dim % num_heads != 0 (never
            return None, as the C version returned NULL).
        TypeError: if a field is not an int.
    """
    # BEGIN SOLUTION: check the config, build the GPTModel, initialise it from the seed.
    config.validate()  # ValueError / TypeError naming the field
    model = GPTModel(config)
    init_weights(model, seed)
    return model
    # END SOLUTION


# BEGIN SOLUTION
def _arrays(model: GPTModel) -> Iterator[Tensor]:
    """Every parameter in the file's order."""
    yield model.embedding.token_embedding
    yield model.embedding.position_embedding
    for b in model.blocks:
        yield from (b.ln1.gamma, b.ln1.beta, b.attn.w_q, b.attn.w_k, b.attn.w_v, b.attn.w_o)
        yield from (b.ln2.gamma, b.ln2.beta, b.ffn.w1, b.ffn.b1, b.ffn.w2, b.ffn.b2)
    yield from (model.final_ln.gamma, model.final_ln.beta, model.lm_head)


# END SOLUTION


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    """Write `model` to `path` in the C course's format (little-endian).

    1. uint32 MAGIC, uint32 VERSION;
    2. six int32: vocab_size, hidden_dim, num_heads, num_layers, ffn_dim, max_seq_len;
    3. float32 arrays, row-major, in this order: embedding.token_embedding [V, H],
       embedding.position_embedding [max_seq_len, H]; then for each block: ln1.gamma,
       ln1.beta, attn.w_q, attn.w_k, attn.w_v, attn.w_o, ln2.gamma, ln2.beta, ffn.w1,
       ffn.b1, ffn.w2, ffn.b2; then final_ln.gamma, final_ln.beta, lm_head [H, V].

    The default model's file is exactly 962,080 bytes: 32 + 4 x 240,512.

    Args:
        model: the model to save; it is not modified.
        path: the file to create (or overwrite).
    """
    # BEGIN SOLUTION: write the header, then every array in the order above.
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
    # END SOLUTION

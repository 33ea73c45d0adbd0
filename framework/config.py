"""The GPT's shape: six integers, and the three presets of the C course.

`ModelConfig` is a plain dataclass (nanoGPT's `GPTConfig` idea). Building one never fails;
`validate()` says whether it describes a model that can exist (the model constructor and
`model_load` call it). The field order is the order of the six int32 fields in the model
file header.

| preset  | V   | H   | heads | layers | F   | max_seq_len | parameters |
|---------|-----|-----|-------|--------|-----|-------------|------------|
| tiny    | 260 | 32  | 2     | 2      | 128 | 64          | 43,904     |
| default | 260 | 64  | 4     | 4      | 256 | 128         | 240,512    |
| medium  | 260 | 128 | 4     | 6      | 512 | 256         | 1,286,144  |

Not here: training settings (learning rate, batch size), tokenizer settings.

Example:
    >>> cfg = default_config()
    >>> cfg.hidden_dim, cfg.head_dim
    (64, 16)
    >>> ModelConfig(260, 64, 3, 4, 256, 128).validate()
    Traceback (most recent call last):
    ...
    ValueError: hidden_dim (64) must be divisible by num_heads (3)
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields

from framework.validate import positive_int

__all__ = ["ModelConfig", "default_config", "medium_config", "tiny_config"]


@dataclass
class ModelConfig:
    """Sizes of a GPT model (see the module docstring for the presets)."""

    vocab_size: int = 260  # V: number of token ids (rows of the token table, columns of lm_head)
    hidden_dim: int = 64  # H: width of every token vector between the layers
    num_heads: int = 4  # n_head: attention heads per block; must divide hidden_dim
    num_layers: int = 4  # L: number of Transformer blocks
    ffn_dim: int = 256  # F: inner width of each block's feed-forward network
    max_seq_len: int = 128  # longest sequence (rows of the position table)

    @property
    def head_dim(self) -> int:
        """hd = hidden_dim // num_heads."""
        return self.hidden_dim // self.num_heads

    def validate(self) -> ModelConfig:
        """Check every field; return self so that calls can be chained.

        Raises:
            TypeError: if a field is not an int (bool and float count as not an int).
            ValueError: if a field is not positive or `hidden_dim % num_heads != 0`.
        """
        for f in fields(self):
            positive_int(getattr(self, f.name), f.name)
        if self.hidden_dim % self.num_heads:
            raise ValueError(
                f"hidden_dim ({self.hidden_dim}) must be divisible by num_heads ({self.num_heads})"
            )
        return self

    def as_tuple(self) -> tuple[int, ...]:
        """The six fields in file order (vocab, hidden, heads, layers, ffn, max_seq_len)."""
        return tuple(int(v) for v in astuple(self))


def default_config() -> ModelConfig:
    """vocab 260, hidden 64, heads 4, layers 4, ffn 256, max_seq_len 128 (240,512 params)."""
    return ModelConfig(260, 64, 4, 4, 256, 128)


def tiny_config() -> ModelConfig:
    """vocab 260, hidden 32, heads 2, layers 2, ffn 128, max_seq_len 64 (43,904 params)."""
    return ModelConfig(260, 32, 2, 2, 128, 64)


def medium_config() -> ModelConfig:
    """vocab 260, hidden 128, heads 4, layers 6, ffn 512, max_seq_len 256 (1,286,144 params)."""
    return ModelConfig(260, 128, 4, 6, 512, 256)

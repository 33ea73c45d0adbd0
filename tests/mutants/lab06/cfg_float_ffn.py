"""Mutant: default_config computes ffn_dim = 4.0 * hidden, a float, not an int."""

# fails: default_fields

from framework.config import ModelConfig


def default_config() -> ModelConfig:
    hidden = 64
    return ModelConfig(260, hidden, 4, 4, 4.0 * hidden, 128)  # type: ignore[arg-type]

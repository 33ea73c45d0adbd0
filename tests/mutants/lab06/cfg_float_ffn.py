"""Mutant: default_config computes ffn_dim = 4.0 * hidden, a float, not an int."""
# zh: default_config 用 ffn_dim = 4.0 * hidden 算出来的是 float，不是 int

# fails: default_fields

from framework.config import ModelConfig


def default_config() -> ModelConfig:
    hidden = 64
    return ModelConfig(260, hidden, 4, 4, 4.0 * hidden, 128)  # type: ignore[arg-type]

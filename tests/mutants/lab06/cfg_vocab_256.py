"""Mutant: default_config has vocab 256, forgetting the four special ids before the bytes."""

# fails: default_fields

from framework.config import ModelConfig


def default_config() -> ModelConfig:
    return ModelConfig(256, 64, 4, 4, 256, 128)

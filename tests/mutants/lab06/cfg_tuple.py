"""Mutant: default_config returns the six numbers as a tuple, like the C struct's fields."""

# fails: default_fields

from framework.config import ModelConfig


def default_config() -> ModelConfig:
    return (260, 64, 4, 4, 256, 128)  # type: ignore[return-value]

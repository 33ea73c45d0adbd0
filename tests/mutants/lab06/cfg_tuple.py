"""Mutant: default_config returns the six numbers as a tuple, like the C struct's fields."""
# zh: default_config 把六个数装在 tuple 里返回，像 C 结构体的字段，而不是 ModelConfig

# fails: default_fields

from framework.config import ModelConfig


def default_config() -> ModelConfig:
    return (260, 64, 4, 4, 256, 128)  # type: ignore[return-value]

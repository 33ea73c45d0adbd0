"""Mutant: default_config has vocab 256, forgetting the four special ids before the bytes."""
# zh: default_config 的 vocab 是 256，忘了字节前面的四个特殊 id

# fails: default_fields

from framework.config import ModelConfig


def default_config() -> ModelConfig:
    return ModelConfig(256, 64, 4, 4, 256, 128)

"""Mutant: default_config returns the tiny preset's sizes (H 32, 2 heads, 2 layers, ...)."""
# zh: default_config 返回的是 tiny 预设的尺寸（H 32、2 个头、2 层……）

# fails: default_fields

from framework.config import ModelConfig


def default_config() -> ModelConfig:
    return ModelConfig(260, 32, 2, 2, 128, 64)

"""Mutant: model_create ignores its argument and always builds the default config."""
# zh: model_create 不管传进来的 config，总是按默认配置建模型

# fails: create_config, create_invalid

from framework import config as presets
from framework.config import ModelConfig
from framework.model import GPTModel, init_weights


def model_create(config: ModelConfig, seed: int = 0) -> GPTModel:
    model = GPTModel(presets.default_config())
    init_weights(model, seed)
    return model

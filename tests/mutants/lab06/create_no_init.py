"""Mutant: model_create builds the model but never initialises it (all weights zero)."""
# zh: model_create 建了模型却没有初始化（权重全是 0）

# fails: create_default, create_config

from framework.config import ModelConfig
from framework.model import GPTModel


def model_create(config: ModelConfig, seed: int = 0) -> GPTModel:
    config.validate()
    return GPTModel(config)

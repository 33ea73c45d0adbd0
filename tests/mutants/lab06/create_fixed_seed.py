"""Mutant: model_create always initialises from seed 0, whatever seed it is given."""
# zh: model_create 总是用 seed 0 初始化，不管传进来的 seed

# fails: create_default, create_config

from framework.config import ModelConfig
from framework.model import GPTModel, init_weights


def model_create(config: ModelConfig, seed: int = 0) -> GPTModel:
    config.validate()
    model = GPTModel(config)
    init_weights(model, 0)
    return model

"""Mutant: model_create always initialises from seed 0, whatever seed it is given."""

# fails: create_default, create_config

from framework.config import ModelConfig
from framework.model import GPTModel, init_weights


def model_create(config: ModelConfig, seed: int = 0) -> GPTModel:
    config.validate()
    model = GPTModel(config)
    init_weights(model, 0)
    return model

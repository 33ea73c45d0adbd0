"""Mutant: model_create builds and initialises the model but forgets to return it."""
# zh: model_create 建好并初始化了模型，却忘了 return

# fails: create_default, create_config

from framework.config import ModelConfig
from framework.model import GPTModel, init_weights


def model_create(config: ModelConfig, seed: int = 0) -> GPTModel:
    config.validate()
    model = GPTModel(config)
    init_weights(model, seed)  # type: ignore[return]

"""Mutant: model_create draws every parameter from N(0, 0.02²) itself (LayerNorm gammas too)."""
# zh: model_create 自己用 N(0, 0.02²) 抽每个参数（连 LayerNorm 的 gamma 也是）

# fails: create_default, create_config

import numpy as np

from framework.config import ModelConfig
from framework.model import GPTModel


def model_create(config: ModelConfig, seed: int = 0) -> GPTModel:
    config.validate()
    model = GPTModel(config)
    rng = np.random.default_rng(seed)
    for _, p in model.parameters():
        p.numpy()[...] = rng.normal(0.0, 0.02, size=p.shape)
    return model

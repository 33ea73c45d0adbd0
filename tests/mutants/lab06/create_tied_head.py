"""Mutant: model_create ties lm_head to the token table (lm_head = token_embedding.T)."""
# zh: model_create 把 lm_head 绑成了词表的转置（lm_head = token_embedding.T）

# fails: create_default, create_config

from framework.config import ModelConfig
from framework.model import GPTModel, init_weights


def model_create(config: ModelConfig, seed: int = 0) -> GPTModel:
    config.validate()
    model = GPTModel(config)
    init_weights(model, seed)
    model.lm_head = model.embedding.token_embedding.T
    return model

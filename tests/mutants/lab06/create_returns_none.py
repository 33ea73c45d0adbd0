"""Mutant: model_create returns None for an invalid config, as the C version returned NULL."""
# zh: model_create 遇到无效配置返回 None（像 C 版本返回 NULL），而不是抛异常

# fails: create_invalid

from framework.config import ModelConfig
from framework.model import GPTModel, init_weights


def model_create(config: ModelConfig, seed: int = 0) -> GPTModel:
    try:
        model = GPTModel(config)
    except (TypeError, ValueError):
        return None  # type: ignore[return-value]
    init_weights(model, seed)
    return model

"""Mutant: default_config returns the framework's own default_config() instead of the values."""
# zh: default_config 直接返回框架的 default_config()，没有自己写出这些值

# fails: default_fields

from framework.config import ModelConfig
from framework.config import default_config as framework_default


def default_config() -> ModelConfig:
    return framework_default()

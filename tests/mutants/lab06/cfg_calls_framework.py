"""Mutant: default_config returns the framework's own default_config() instead of the values."""

# fails: default_fields

from framework.config import ModelConfig
from framework.config import default_config as framework_default


def default_config() -> ModelConfig:
    return framework_default()

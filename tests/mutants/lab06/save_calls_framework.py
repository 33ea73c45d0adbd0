"""Mutant: model_save hands the work to the framework's model_save."""
# zh: model_save 直接调用框架的 model_save，没有自己写文件

# fails: save_default, save_roundtrip

import os

from framework.model import GPTModel
from framework.model import model_save as framework_save


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    framework_save(model, path)

"""Mutant: model_save starts with the version, without the magic number."""
# zh: model_save 一开头就写版本号，漏了 magic 数

# fails: save_default, save_roundtrip

import os
import struct

import numpy as np

from framework.model import GPTModel


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    c = model.config
    with open(path, "wb") as f:
        f.write(struct.pack("<I6i", VERSION, *c.as_tuple()))
        for t in _arrays(model):
            f.write(np.asarray(t.numpy(), dtype="<f4").tobytes())

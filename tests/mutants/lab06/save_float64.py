"""Mutant: model_save writes the weights as float64 (numpy's default), 8 bytes each."""
# zh: model_save 把权重写成 float64（numpy 的默认），每个 8 字节

# fails: save_default, save_roundtrip

import os
import struct

import numpy as np

from framework.model import GPTModel


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    c = model.config
    with open(path, "wb") as f:
        f.write(struct.pack("<II6i", MAGIC, VERSION, *c.as_tuple()))
        for t in _arrays(model):
            f.write(np.asarray(t.numpy(), dtype=np.float64).tobytes())

"""Mutant: model_save writes a little-endian header but big-endian floats ('>f4')."""
# zh: model_save 文件头是小端，浮点数却写成了大端（'>f4'）

# fails: save_roundtrip

import os
import struct

import numpy as np

from framework.model import GPTModel


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    c = model.config
    with open(path, "wb") as f:
        f.write(struct.pack("<II6i", MAGIC, VERSION, *c.as_tuple()))
        for t in _arrays(model):
            f.write(np.asarray(t.numpy(), dtype=">f4").tobytes())

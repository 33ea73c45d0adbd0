"""Mutant: model_save skips the position table ("it is sinusoidal, it can be recomputed")."""
# zh: model_save 跳过了位置表（“反正能重新算出来”）

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
            if t is not model.embedding.position_embedding:
                f.write(np.asarray(t.numpy(), dtype="<f4").tobytes())

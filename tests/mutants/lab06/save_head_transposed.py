"""Mutant: model_save writes lm_head as [V, H] (transposed), the token table's layout."""
# zh: model_save 把 lm_head 写成了 [V, H]（转置过的），即词表的排列

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
            arr = t.numpy().T if t is model.lm_head else t.numpy()
            f.write(np.asarray(arr, dtype="<f4").tobytes())

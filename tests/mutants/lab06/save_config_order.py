"""Mutant: model_save writes num_heads before hidden_dim in the header."""
# zh: model_save 在文件头里把 num_heads 写在了 hidden_dim 前面

# fails: save_default, save_roundtrip

import os
import struct

import numpy as np

from framework.model import GPTModel


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    c = model.config
    fields = (c.vocab_size, c.num_heads, c.hidden_dim, c.num_layers, c.ffn_dim, c.max_seq_len)
    with open(path, "wb") as f:
        f.write(struct.pack("<II6i", MAGIC, VERSION, *fields))
        for t in _arrays(model):
            f.write(np.asarray(t.numpy(), dtype="<f4").tobytes())

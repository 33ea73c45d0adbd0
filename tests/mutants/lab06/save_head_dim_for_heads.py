"""Mutant: model_save writes head_dim (hidden / heads) where num_heads belongs in the header."""
# zh: model_save 在文件头 num_heads 的位置写了 head_dim（hidden / heads）

# fails: save_default, save_roundtrip

import os
import struct

import numpy as np

from framework.model import GPTModel


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    c = model.config
    fields = (c.vocab_size, c.hidden_dim, c.hidden_dim // c.num_heads, c.num_layers, c.ffn_dim)
    with open(path, "wb") as f:
        f.write(struct.pack("<II6i", MAGIC, VERSION, *fields, c.max_seq_len))
        for t in _arrays(model):
            f.write(np.asarray(t.numpy(), dtype="<f4").tobytes())

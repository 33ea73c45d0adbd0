"""Mutant: model_save writes each block's ln2 where ln1 belongs and ln1 where ln2 belongs."""
# zh: model_save 在每个块里把 ln1 和 ln2 的位置写反了

# fails: save_roundtrip

import os
import struct

import numpy as np

from framework.model import GPTModel


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    c = model.config
    with open(path, "wb") as f:
        f.write(struct.pack("<II6i", MAGIC, VERSION, *c.as_tuple()))
        arrays = [model.embedding.token_embedding, model.embedding.position_embedding]
        for b in model.blocks:
            arrays += [b.ln2.gamma, b.ln2.beta, b.attn.w_q, b.attn.w_k, b.attn.w_v, b.attn.w_o]
            arrays += [b.ln1.gamma, b.ln1.beta, b.ffn.w1, b.ffn.b1, b.ffn.w2, b.ffn.b2]
        arrays += [model.final_ln.gamma, model.final_ln.beta, model.lm_head]
        for t in arrays:
            f.write(np.asarray(t.numpy(), dtype="<f4").tobytes())

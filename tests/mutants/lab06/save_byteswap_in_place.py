"""Mutant: model_save byte-swaps each array in place to control the byte order, and keeps it."""
# zh: model_save 为了控制字节序原地 byteswap 了每个数组，模型自己的权重被改坏

# fails: save_roundtrip

import os
import struct

from framework.model import GPTModel


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    c = model.config
    with open(path, "wb") as f:
        f.write(struct.pack("<II6i", MAGIC, VERSION, *c.as_tuple()))
        for t in _arrays(model):
            arr = t.numpy()
            arr.byteswap(inplace=True)  # the model's own memory is now garbage
            f.write(arr.byteswap().tobytes())

"""Mutant: model_save returns 0 on success, as the C version did."""

# fails: save_default

import os

from framework.model import GPTModel

_write = model_save  # the reference writer above; only the return value differs


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    _write(model, path)
    return 0  # type: ignore[return-value]

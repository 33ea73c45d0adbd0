"""Mutant: model_save returns 0 on success, as the C version did."""
# zh: model_save 成功时返回 0，像 C 版本那样，而不是 None

# fails: save_default

import os

from framework.model import GPTModel

_write = model_save  # the reference writer above; only the return value differs


def model_save(model: GPTModel, path: str | os.PathLike[str]) -> None:
    _write(model, path)
    return 0  # type: ignore[return-value]

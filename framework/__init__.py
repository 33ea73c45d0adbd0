"""miniLLM framework: the complete, reference-quality library that the labs call.

Each module holds one idea (tensor, math_ops, attention, ...). The names most labs need
are re-exported here so that `from framework import Tensor, softmax` works.

A name is imported from its module when it is first asked for (PEP 562): a program that
needs the attention does not load the tokenizers, the chat and the training pass too (a
third of the framework's import time for lab04's checks, every run). `load_all` imports
every module at once (the sandbox's zygote does, so that its children inherit them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from framework.attention import MASK_VALUE, MultiHeadAttention, create_causal_mask
    from framework.bpe_tokenizer import BPETokenizer
    from framework.chat import Conversation
    from framework.config import ModelConfig, default_config, medium_config, tiny_config
    from framework.embedding import Embedding, sinusoidal_table
    from framework.ffn import FFN
    from framework.kv_cache import KVCache
    from framework.layernorm import LayerNorm
    from framework.math_ops import (
        gelu,
        matmul,
        matmul_transposed_b,
        softmax,
        softmax_inplace,
        tensor_argmax,
        tensor_max,
        tensor_mean,
        tensor_sum,
        tensor_var,
    )
    from framework.model import GPTModel, init_weights, model_load, model_save
    from framework.module import Module
    from framework.tensor import (
        Tensor,
        as_tensor,
        tensor_create,
        tensor_fill_data,
        tensor_from,
        tensor_full,
        tensor_ones,
        tensor_randn,
        tensor_zeros,
    )
    from framework.tokenizer import (
        BOS_ID,
        BYTE_VOCAB_SIZE,
        EOS_ID,
        PAD_ID,
        UNK_ID,
        ByteTokenizer,
        Tokenizer,
    )
    from framework.transformer import TransformerBlock

# name -> the module that defines it
_HOME: dict[str, str] = {
    "BOS_ID": "framework.tokenizer",
    "BPETokenizer": "framework.bpe_tokenizer",
    "BYTE_VOCAB_SIZE": "framework.tokenizer",
    "ByteTokenizer": "framework.tokenizer",
    "Conversation": "framework.chat",
    "EOS_ID": "framework.tokenizer",
    "Embedding": "framework.embedding",
    "FFN": "framework.ffn",
    "GPTModel": "framework.model",
    "KVCache": "framework.kv_cache",
    "LayerNorm": "framework.layernorm",
    "MASK_VALUE": "framework.attention",
    "ModelConfig": "framework.config",
    "Module": "framework.module",
    "MultiHeadAttention": "framework.attention",
    "PAD_ID": "framework.tokenizer",
    "Tensor": "framework.tensor",
    "Tokenizer": "framework.tokenizer",
    "TransformerBlock": "framework.transformer",
    "UNK_ID": "framework.tokenizer",
    "as_tensor": "framework.tensor",
    "create_causal_mask": "framework.attention",
    "default_config": "framework.config",
    "gelu": "framework.math_ops",
    "init_weights": "framework.model",
    "matmul": "framework.math_ops",
    "matmul_transposed_b": "framework.math_ops",
    "medium_config": "framework.config",
    "model_load": "framework.model",
    "model_save": "framework.model",
    "sinusoidal_table": "framework.embedding",
    "softmax": "framework.math_ops",
    "softmax_inplace": "framework.math_ops",
    "tensor_argmax": "framework.math_ops",
    "tensor_create": "framework.tensor",
    "tensor_fill_data": "framework.tensor",
    "tensor_from": "framework.tensor",
    "tensor_full": "framework.tensor",
    "tensor_max": "framework.math_ops",
    "tensor_mean": "framework.math_ops",
    "tensor_ones": "framework.tensor",
    "tensor_randn": "framework.tensor",
    "tensor_sum": "framework.math_ops",
    "tensor_var": "framework.math_ops",
    "tensor_zeros": "framework.tensor",
    "tiny_config": "framework.config",
}

__all__ = [
    "BOS_ID",
    "BYTE_VOCAB_SIZE",
    "EOS_ID",
    "FFN",
    "MASK_VALUE",
    "PAD_ID",
    "UNK_ID",
    "BPETokenizer",
    "ByteTokenizer",
    "Conversation",
    "Embedding",
    "GPTModel",
    "KVCache",
    "LayerNorm",
    "ModelConfig",
    "Module",
    "MultiHeadAttention",
    "Tensor",
    "Tokenizer",
    "TransformerBlock",
    "as_tensor",
    "create_causal_mask",
    "default_config",
    "gelu",
    "init_weights",
    "load_all",
    "matmul",
    "matmul_transposed_b",
    "medium_config",
    "model_load",
    "model_save",
    "sinusoidal_table",
    "softmax",
    "softmax_inplace",
    "tensor_argmax",
    "tensor_create",
    "tensor_fill_data",
    "tensor_from",
    "tensor_full",
    "tensor_max",
    "tensor_mean",
    "tensor_ones",
    "tensor_randn",
    "tensor_sum",
    "tensor_var",
    "tensor_zeros",
    "tiny_config",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'framework' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # asked once: later lookups find it directly
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))


def load_all() -> None:
    """Import every module of the framework now (the names stay lazily bound)."""
    for module in sorted(set(_HOME.values())):
        importlib.import_module(module)

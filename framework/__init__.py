"""miniLLM framework: the complete, reference-quality library that the labs call.

Each module holds one idea (tensor, math_ops, attention, ...). The names most labs need
are re-exported here so that `from framework import Tensor, softmax` works.
"""

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

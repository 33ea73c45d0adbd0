"""miniLLM framework: the complete, reference-quality library that the labs call.

Each module holds one idea (tensor, math_ops, attention, ...). The names most labs need
are re-exported here so that `from framework import Tensor, softmax` works.
"""

from framework.attention import MASK_VALUE, AttentionCache, MultiHeadAttention, create_causal_mask
from framework.bpe_tokenizer import BPETokenizer
from framework.chat import Conversation
from framework.embedding import Embedding, sinusoidal_table
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

__all__ = [
    "BOS_ID",
    "BYTE_VOCAB_SIZE",
    "EOS_ID",
    "MASK_VALUE",
    "PAD_ID",
    "UNK_ID",
    "AttentionCache",
    "BPETokenizer",
    "ByteTokenizer",
    "Conversation",
    "Embedding",
    "MultiHeadAttention",
    "Tensor",
    "Tokenizer",
    "as_tensor",
    "create_causal_mask",
    "gelu",
    "matmul",
    "matmul_transposed_b",
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
]

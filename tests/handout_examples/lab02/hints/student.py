"""Handout example: lab02's hints in TASK.md, followed word for word."""

from __future__ import annotations

from framework.tokenizer import ByteTokenizer

NUM_SPECIAL = 4


def encode_byte(tok: ByteTokenizer, b: int) -> int:
    if not isinstance(b, int):
        raise TypeError(f"b must be an int, got {type(b).__name__}")
    if not 0 <= b <= 255:
        raise ValueError(f"b must be in [0, 255], got {b}")
    return b + NUM_SPECIAL


def decode_id(tok: ByteTokenizer, token_id: int) -> int | None:
    if not 0 <= token_id < tok.vocab_size:
        raise ValueError(f"token_id must be in [0, {tok.vocab_size}), got {token_id}")
    if token_id < NUM_SPECIAL:
        return None
    return token_id - NUM_SPECIAL


def roundtrip(tok: ByteTokenizer, text: str) -> tuple[list[int], str]:
    ids = [encode_byte(tok, b) for b in text.encode("utf-8")]
    values = [decode_id(tok, i) for i in ids]
    return ids, bytes([v for v in values if v is not None]).decode("utf-8")

"""Mutant: roundtrip returns (tok.encode(text), text): nothing of the student's is used."""

# zh: roundtrip 返回 (tok.encode(text), text)，没用你自己的函数
# fails: roundtrip_ascii, roundtrip_unicode, roundtrip_edge, roundtrip_own, roundtrip_random

from framework.tokenizer import ByteTokenizer


def roundtrip(tok: ByteTokenizer, text: str) -> tuple[list[int], str]:
    """Encode text's UTF-8 bytes with encode_byte, decode them back with decode_id."""
    ids = tok.encode(text)
    return ids, text

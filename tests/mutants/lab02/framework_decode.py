"""Mutant: roundtrip decodes with tok.decode(ids) instead of decode_id."""

# zh: roundtrip 用 tok.decode(ids) 解码，没有用你的 decode_id
# fails: roundtrip_ascii, roundtrip_unicode, roundtrip_edge, roundtrip_own, roundtrip_random

from framework.tokenizer import ByteTokenizer


def roundtrip(tok: ByteTokenizer, text: str) -> tuple[list[int], str]:
    """Encode text's UTF-8 bytes with encode_byte, decode them back with decode_id."""
    ids = [encode_byte(tok, b) for b in text.encode("utf-8")]
    return ids, tok.decode(ids)

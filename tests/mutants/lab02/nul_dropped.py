"""Mutant: roundtrip keeps decoded bytes with `if v`, so the NUL byte (0) is dropped like None."""

# zh: roundtrip 用 if v 过滤字节，把 NUL（0）也当成 None 丢掉了
# fails: roundtrip_edge, roundtrip_own

from framework.tokenizer import ByteTokenizer


def roundtrip(tok: ByteTokenizer, text: str) -> tuple[list[int], str]:
    """Encode text's UTF-8 bytes with encode_byte, decode them back with decode_id."""
    ids = [encode_byte(tok, b) for b in text.encode("utf-8")]
    values = [decode_id(tok, i) for i in ids]
    data = bytes(v for v in values if v)
    return ids, data.decode("utf-8")

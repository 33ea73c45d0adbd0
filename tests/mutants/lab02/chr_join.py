"""Mutant: roundtrip decodes byte by byte with chr() and joins: multi-byte UTF-8 becomes mojibake."""

# zh: roundtrip 逐字节用 chr() 解码再拼接，多字节的 UTF-8 变成乱码
# fails: roundtrip_unicode, roundtrip_own, roundtrip_random

from framework.tokenizer import ByteTokenizer


def roundtrip(tok: ByteTokenizer, text: str) -> tuple[list[int], str]:
    """Encode text's UTF-8 bytes with encode_byte, decode them back with decode_id."""
    ids = [encode_byte(tok, b) for b in text.encode("utf-8")]
    values = [decode_id(tok, i) for i in ids]
    return ids, "".join(chr(v) for v in values if v is not None)

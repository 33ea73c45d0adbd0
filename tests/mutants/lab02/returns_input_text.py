"""Mutant: roundtrip encodes with encode_byte but hands back its input instead of decoding."""

# zh: roundtrip 编码了，但直接返回输入的文本，没有解码
# fails: roundtrip_own

from framework.tokenizer import ByteTokenizer


def roundtrip(tok: ByteTokenizer, text: str) -> tuple[list[int], str]:
    """Encode text's UTF-8 bytes with encode_byte, decode them back with decode_id."""
    ids = [encode_byte(tok, b) for b in text.encode("utf-8")]
    return ids, text

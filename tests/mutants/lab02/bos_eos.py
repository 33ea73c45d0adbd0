"""Mutant: roundtrip wraps the ids in BOS ... EOS: the ids are no longer just the text's bytes."""

# zh: roundtrip 在 ids 前后加了 BOS 和 EOS
# fails: roundtrip_ascii, roundtrip_unicode, roundtrip_edge, roundtrip_own, roundtrip_random

from framework.tokenizer import ByteTokenizer


def roundtrip(tok: ByteTokenizer, text: str) -> tuple[list[int], str]:
    """Encode text's UTF-8 bytes with encode_byte, decode them back with decode_id."""
    ids = [tok.bos_id] + [encode_byte(tok, b) for b in text.encode("utf-8")] + [tok.eos_id]
    values = [decode_id(tok, i) for i in ids]
    data = bytes(v for v in values if v is not None)  # `if v` would drop the NUL byte
    return ids, data.decode("utf-8")

"""Lab02 — a byte-level tokenizer: the rule that turns text into token ids and back.

    ids 0-3    PAD, UNK, BOS, EOS             (special tokens: no byte behind them)
    id b + 4   the byte value b, 0 <= b <= 255 (vocab_size = 4 + 256 = 260)

Text becomes ids in two steps: `text.encode("utf-8")` gives its bytes (ASCII letters are
one byte each, a Chinese character three, most emoji four), and each byte b becomes the id
b + 4. Decoding runs the same road backwards. The framework's `ByteTokenizer` already
does all of it (`tok.encode`, `tok.decode`); here you write the rule yourself.

`tok` is that framework tokenizer. Read what you need from it: `tok.vocab_size`,
`tok.pad_id`, `tok.unk_id`, `tok.bos_id`, `tok.eos_id`. Do not call `tok.encode`,
`tok.decode` or `tok.token_bytes` in this file: one check switches them off.
Run `make test` in this folder after every change; `TASK.md` explains each function.
"""

from __future__ import annotations

from framework.tokenizer import ByteTokenizer

NUM_SPECIAL = 4  # ids 0-3 are PAD, UNK, BOS, EOS; byte b is id b + 4


def encode_byte(tok: ByteTokenizer, b: int) -> int:
    """The token id of one byte value: b + 4.

    Every value 0-255 is a valid byte, including 0 (NUL) and 128-255 (the bytes that
    make up Chinese characters and emoji in UTF-8); none of them becomes UNK.

    Args:
        tok: the framework's ByteTokenizer.
        b: a byte value, an int in [0, 255].

    Returns:
        The id, an int in [4, 259]. Example: encode_byte(tok, 72) == 76  ('H' is 72).

    Raises:
        TypeError: if b is not an int (a float such as 65.0, or a str such as 'A').
        ValueError: if b is outside [0, 255].
    """
    # BEGIN SOLUTION: check the type and the range of b, then return b + NUM_SPECIAL.
    if isinstance(b, bool) or not isinstance(b, int):
        raise TypeError(f"b must be an int, got {type(b).__name__} {b!r}")
    if not 0 <= b <= 255:
        raise ValueError(f"b must be a byte value in [0, 255], got {b}")
    return b + NUM_SPECIAL
    # END SOLUTION


def decode_id(tok: ByteTokenizer, token_id: int) -> int | None:
    """The byte value behind one token id, or None for a special token.

    Ids 0-3 (PAD, UNK, BOS, EOS) stand for no byte: return None. Id 4 is the byte 0
    (NUL): return 0, which is a byte, not "nothing".

    Args:
        tok: the framework's ByteTokenizer (`tok.vocab_size` is 260).
        token_id: an int.

    Returns:
        token_id - 4 for an id in [4, vocab_size); None for an id in [0, 4).
        Example: decode_id(tok, 76) == 72, decode_id(tok, 2) is None.

    Raises:
        TypeError: if token_id is not an int.
        ValueError: if token_id is outside [0, tok.vocab_size).
    """
    # BEGIN SOLUTION: reject ids outside [0, tok.vocab_size); specials → None; else id - 4.
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        raise TypeError(f"token_id must be an int, got {type(token_id).__name__} {token_id!r}")
    if not 0 <= token_id < tok.vocab_size:
        raise ValueError(f"token_id must be in [0, {tok.vocab_size}), got {token_id}")
    if token_id < NUM_SPECIAL:
        return None
    return token_id - NUM_SPECIAL
    # END SOLUTION


def roundtrip(tok: ByteTokenizer, text: str) -> tuple[list[int], str]:
    """Encode `text` with your encode_byte, then decode the ids with your decode_id.

    Steps: the UTF-8 bytes of text → one id per byte (encode_byte) → one byte per id
    (decode_id; skip None) → `bytes(...)` → `.decode("utf-8")`. No BOS or EOS is added.

    Args:
        tok: the framework's ByteTokenizer.
        text: any str, possibly empty, possibly Chinese or emoji.

    Returns:
        (ids, decoded): the list of ids and the text decoded from them, which equals
        `text`. Example: roundtrip(tok, "Hi") == ([76, 109], "Hi");
        roundtrip(tok, "你") == ([232, 193, 164], "你").
    """
    # BEGIN SOLUTION: build ids from text.encode("utf-8"), then decode them back to a str.
    ids = [encode_byte(tok, b) for b in text.encode("utf-8")]
    values = [decode_id(tok, i) for i in ids]
    data = bytes(v for v in values if v is not None)  # `if v` would drop the NUL byte
    return ids, data.decode("utf-8")
    # END SOLUTION

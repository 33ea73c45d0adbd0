"""Mutant: chat_loop removes only the final newline, so spaces and a \\r reach the model."""

# zh: chat_loop 只去掉结尾的换行，空格和 \r 跟着进了模型
# fails: loop_quit

from typing import TextIO

import numpy as np

from framework.bpe_tokenizer import BPETokenizer
from framework.model import GPTModel


def chat_loop(
    model: GPTModel, tok: BPETokenizer, stdin: TextIO, stdout: TextIO, rng: np.random.Generator
) -> int:
    turns = 0
    while True:
        stdout.write("> ")
        line = stdin.readline()
        if not line:
            break
        text = line.rstrip("\n")  # the bug: not line.strip()
        if text.strip() == "/quit":
            break
        if not text.strip():
            continue
        stdout.write(f"Bot: {chat_one_turn(model, tok, text, MAX_NEW_TOKENS, rng)}\n")
        turns += 1
    return turns

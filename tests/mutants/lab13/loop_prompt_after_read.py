"""Mutant: writes the "> " prompt after reading the line."""

# zh: 读完一行之后才写 "> " 提示符
# fails: loop_quit, loop_eof

from typing import TextIO

import numpy as np

from framework.bpe_tokenizer import BPETokenizer
from framework.model import GPTModel


def chat_loop(
    model: GPTModel, tok: BPETokenizer, stdin: TextIO, stdout: TextIO, rng: np.random.Generator
) -> int:
    turns = 0
    while True:
        line = stdin.readline()
        stdout.write("> ")
        if not line or line.strip() == "/quit":
            return turns
        if line.strip():
            stdout.write(f"Bot: {chat_one_turn(model, tok, line.strip(), MAX_NEW_TOKENS, rng)}\n")
            turns += 1

"""Mutant: reads the terminal with input() instead of the stdin argument."""

# zh: 用 input() 读终端，而不是读参数 stdin
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
        try:
            line = input("> ")
        except EOFError:
            return turns
        if line.strip() == "/quit":
            return turns
        if line.strip():
            stdout.write(
                "Bot: " + chat_one_turn(model, tok, line.strip(), MAX_NEW_TOKENS, rng) + "\n"
            )
            turns += 1

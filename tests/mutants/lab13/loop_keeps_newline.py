"""Mutant: sends the line with its newline to the model."""

# zh: 把带着换行符的整行送进了模型
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
        stdout.write("> ")
        line = stdin.readline()
        if not line or line.strip() == "/quit":
            return turns
        if line.strip():
            stdout.write(f"Bot: {chat_one_turn(model, tok, line, MAX_NEW_TOKENS, rng)}\n")
            turns += 1

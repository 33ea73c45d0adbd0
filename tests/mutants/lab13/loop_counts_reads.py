"""Mutant: returns the number of lines read, not the turns answered."""

# zh: 返回读过的行数，而不是回答过的轮数
# fails: loop_quit, loop_eof

from typing import TextIO

import numpy as np

from framework.bpe_tokenizer import BPETokenizer
from framework.model import GPTModel


def chat_loop(
    model: GPTModel, tok: BPETokenizer, stdin: TextIO, stdout: TextIO, rng: np.random.Generator
) -> int:
    reads = 0
    while True:
        stdout.write("> ")
        line = stdin.readline()
        if not line or line.strip() == "/quit":
            return reads
        reads += 1
        if line.strip():
            stdout.write(f"Bot: {chat_one_turn(model, tok, line.strip(), MAX_NEW_TOKENS, rng)}\n")

"""Mutant: prints to the terminal instead of writing to stdout."""

# zh: 用 print 打印到终端，而不是写进 stdout
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
        print("> ", end="")
        line = stdin.readline()
        if not line or line.strip() == "/quit":
            return turns
        if line.strip():
            print("Bot: " + chat_one_turn(model, tok, line.strip(), MAX_NEW_TOKENS, rng))
            turns += 1

"""Mutant: empty lines are sent to the model too."""

# zh: 空行也被送进了模型
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
        stdout.write(f"Bot: {chat_one_turn(model, tok, line.strip(), MAX_NEW_TOKENS, rng)}\n")
        turns += 1

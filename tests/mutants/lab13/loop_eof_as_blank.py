"""Mutant: strips the line before testing for EOF, so EOF looks like a blank line: it never ends."""

# zh: 先 strip 再判断 EOF，EOF 看起来像空行：循环永远不结束
# fails: loop_eof

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
        line = stdin.readline().strip()
        if line == "/quit":
            return turns
        if not line:
            continue
        stdout.write(f"Bot: {chat_one_turn(model, tok, line, MAX_NEW_TOKENS, rng)}\n")
        turns += 1

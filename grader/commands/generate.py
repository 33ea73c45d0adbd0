"""`minillm generate [MODEL] --prompt TEXT`: continue a text with a saved model, streaming.

The new text is written to stdout piece by piece as the tokens are made (whole UTF-8
characters only); a one-line summary (tokens, tokens/s, why it stopped) goes to stderr.
Without MODEL, the model that ships with the course. The model file is the course's
format; its tokenizer is the vocabulary its sidecar (`MODEL.meta.json`, written by
`minillm train --tokenizer bpe`) names, else a BPE vocabulary given with `--vocab`, or
`MODEL.vocab.json` beside it, else the byte tokenizer (as `minillm chat`). A missing,
malformed or mismatched file is refused with a message, never a traceback.

    minillm generate model.bin --prompt "Once upon a time" --temperature 0.8 --seed 1
    minillm generate model.bin --prompt - < prompt.txt --max-new-tokens 200 --top-k 20
    minillm generate model.bin --vocab v.json --prompt "你好" --mine   # your own lab code

With ``--mine`` the model, the KV cache, the sampler and BPE encoding run your own
functions from the labs wherever your lab passes; the table that says so goes to stderr.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from grader.commands.options import model_options, open_engine
from grader.mine.cli import mine_options

__all__ = ["generate"]


@click.command()
@model_options
@click.option("--prompt", "-p", default="", help="Text to continue ('-' reads stdin).")
@click.option("--max-new-tokens", "-n", type=click.IntRange(min=0), default=100, show_default=True,
              help="Stop after this many new tokens.")  # fmt: skip
@click.option("--temperature", "-t", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="0: greedy.")  # fmt: skip
@click.option("--top-k", type=click.IntRange(min=0), default=40, show_default=True,
              help="0: no limit.")  # fmt: skip
@click.option("--top-p", type=click.FloatRange(0, 1, min_open=True), default=0.9,
              show_default=True, help="In (0, 1]; 1.0: off.")  # fmt: skip
@click.option("--repetition-penalty", type=click.FloatRange(min=0, min_open=True), default=1.0,
              show_default=True, help="> 1 discourages repeats.")  # fmt: skip
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed of the sampler (default: a fresh one each run).")  # fmt: skip
@click.option("--stop", multiple=True, help="Stop before this text (repeatable).")
@click.option("--ignore-eos", is_flag=True, help="Go on past the EOS token.")
@click.option("--no-cache", is_flag=True, help="Recompute every step (slow; for comparison).")
@mine_options
def generate(
    model_path: Path | None,
    vocab: Path | None,
    prompt: str,
    max_new_tokens: int,
    temperature: float,
    top_k: int,
    top_p: float,
    repetition_penalty: float,
    seed: int | None,
    stop: tuple[str, ...],
    ignore_eos: bool,
    no_cache: bool,
    mine: bool,
    force_mine: bool,
) -> None:
    """Continue PROMPT with the model in MODEL, printing tokens as they are made."""
    from framework.generate import GenerateConfig
    from framework.generate import generate as run

    engine = open_engine(model_path, vocab)
    model, tok = engine.model, engine.tokenizer
    text = sys.stdin.read() if prompt == "-" else prompt
    config = GenerateConfig(
        max_new_tokens=max_new_tokens, temperature=temperature, top_k=top_k, top_p=top_p,
        repetition_penalty=repetition_penalty, seed=seed, stop=stop,
        stop_at_eos=not ignore_eos, use_cache=not no_cache,
    )  # fmt: skip
    if mine or force_mine:
        from grader.mine.cli import mine_generate

        run = mine_generate(model, tok, force_mine)  # the table goes to stderr
    start = time.perf_counter()
    try:
        result = run(model, tok, text, config, on_text=lambda s: click.echo(s, nl=False))
    except (TypeError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    finally:
        sys.stdout.flush()
    seconds = time.perf_counter() - start
    click.echo()
    n = len(result.token_ids)
    cut = f", prompt cut to its last {len(result.prompt_ids)} tokens" * bool(
        result.prompt_truncated
    )
    click.echo(
        f"[{n} tokens in {seconds:.2f} s, {n / max(seconds, 1e-9):.1f} tokens/s, "
        f"stopped: {result.stop_reason}{cut}]",
        err=True,
    )

"""Mutant: hands the work to the framework's format_prompt."""

# zh: 把活交给了框架的 format_prompt
# fails: prompt_one_turn, prompt_layout, prompt_zero, prompt_errors, roundtrip_property

from __future__ import annotations

from collections.abc import Sequence

from framework import chat


def format_prompt(messages: Sequence[tuple[str, str]]) -> str:
    return chat.format_prompt(messages)

"""The framework package: its names are imported from their modules when first asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import framework

ROOT = Path(__file__).resolve().parent.parent

_COUNT = (
    "import sys\n"
    "from framework import MultiHeadAttention, Tensor\n"
    "before = sorted(m for m in sys.modules if m.startswith('framework.'))\n"
    "import framework\n"
    "framework.load_all()\n"
    "after = sorted(m for m in sys.modules if m.startswith('framework.'))\n"
    "print(' '.join(before))\n"
    "print(' '.join(after))\n"
)


def test_a_name_loads_its_own_module_and_load_all_loads_every_one() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _COUNT], capture_output=True, text=True, cwd=ROOT, check=True
    )
    before, after = (line.split() for line in done.stdout.splitlines())
    assert "framework.attention" in before and "framework.tensor" in before
    # the attention needs neither the tokenizers, the chat nor the training pass
    for heavy in ("framework.bpe_train", "framework.chat", "framework.backward", "framework.model"):
        assert heavy not in before, before
    homes = {f"framework.{n}" for n in ("bpe_tokenizer", "chat", "model", "transformer")}
    assert homes <= set(after), after
    assert set(before) < set(after)


def test_every_exported_name_resolves_to_its_modules_object() -> None:
    import importlib

    for name in framework.__all__:
        if name == "load_all":
            continue
        home = importlib.import_module(framework._HOME[name])
        assert getattr(framework, name) is getattr(home, name), name
    assert set(framework.__all__) <= set(dir(framework))


def test_an_unknown_name_is_an_attribute_error_that_names_it() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = framework.no_such_thing  # type: ignore[attr-defined]
    with pytest.raises(ImportError, match="no_such_thing"):
        exec("from framework import no_such_thing", {})

"""Keep each handout's output blocks equal to what the grader really prints.

A TASK.md quotes two runs of its lab: the stubs ("baseline") and the reference solution
("target"). Each block sits between markers::

    <!-- verify:baseline -->
    ```text
    ...exactly what `minillm verify labNN` prints...
    ```
    <!-- /verify:baseline -->

`TASK.md` quotes the Chinese report, `TASK.en.md` the English one. Run
``python -m grader.handouts`` to list drift (exit 1 if any) and
``python -m grader.handouts --write`` to rewrite the blocks from fresh runs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from grader.labs import LabInfo, all_labs, load_lab, resolve_lab
from grader.report import render_plain
from grader.runner import run_tests
from grader.sandbox.client import Sandbox

__all__ = ["BLOCKS", "HANDOUTS", "expected_blocks", "sync_lab"]

BLOCKS = ("baseline", "target")
HANDOUTS = {"TASK.md": "zh", "TASK.en.md": "en"}
_BLOCK = re.compile(
    r"(<!-- verify:(?P<name>\w+) -->\n```text\n)(?P<body>.*?)(```\n<!-- /verify:(?P=name) -->)",
    re.DOTALL,
)


def expected_blocks(info: LabInfo, sandbox: Sandbox) -> dict[tuple[str, str], str]:
    """{(block, lang): text} from real runs of the stubs and of the solution."""
    lab = load_lab(info)
    out: dict[tuple[str, str], str] = {}
    for block, impl in (("baseline", info.student), ("target", info.solution)):
        result = run_tests(lab, impl, sandbox)
        for lang in ("zh", "en"):
            out[(block, lang)] = render_plain(result, lang)
    return out


def sync_lab(info: LabInfo, sandbox: Sandbox, write: bool = False) -> list[str]:
    """Compare (or with `write`, rewrite) the blocks of the lab's handouts; list problems."""
    want = expected_blocks(info, sandbox)
    problems: list[str] = []
    for name, lang in HANDOUTS.items():
        path = info.dir / name
        if not path.is_file():
            problems.append(f"{path}: missing")
            continue
        text = path.read_text(encoding="utf-8")
        found = {m.group("name") for m in _BLOCK.finditer(text)}
        for block in BLOCKS:
            if block not in found:
                problems.append(f"{path}: no <!-- verify:{block} --> block")

        def replace(m: re.Match[str], lang: str = lang, path: Path = path) -> str:
            name = m.group("name")
            if name not in BLOCKS:
                problems.append(f"{path}: unknown block verify:{name}")
                return m.group(0)
            fresh = want[(name, lang)]
            if m.group("body") != fresh:
                problems.append(f"{path}: block verify:{name} differs from the grader's output")
            return m.group(1) + fresh + m.group(4)

        new = _BLOCK.sub(replace, text)
        if write and new != text:
            path.write_text(new, encoding="utf-8")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Check (or `--write`) the handouts of the given labs, or of every lab."""
    args = list(sys.argv[1:] if argv is None else argv)
    write = "--write" in args
    names = [a for a in args if a != "--write"]
    labs = [resolve_lab(n) for n in names] if names else all_labs()
    problems: list[str] = []
    with Sandbox() as sandbox:
        for info in labs:
            problems += sync_lab(info, sandbox, write)
    for p in problems:
        print(("updated: " if write else "") + p)
    return 0 if write or not problems else 1


if __name__ == "__main__":
    raise SystemExit(main())

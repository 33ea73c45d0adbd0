"""Keep each handout's output blocks equal to what the grader and the snippets really print.

A TASK.md quotes two runs of its lab: the stubs ("baseline") and the reference solution
("target"). Each block sits between markers::

    <!-- verify:baseline -->
    ```text
    ...exactly what `minillm verify labNN` prints...
    ```
    <!-- /verify:baseline -->

`TASK.md` quotes the Chinese report, `TASK.en.md` the English one. The first line, the
title, is `# LabNN — <the Lab's title in verify.py>`. Two more kinds of block keep the rest
of a handout's output honest:

- ``<!-- verify:excerpt impl=PATH tests=2,3 lines=12 -->`` before a ```text block: those
  tests' lines of the report for the implementation at PATH (relative to the course root),
  cut after `lines` lines if given.
- ``<!-- verify:script cwd=labs/labNN -->`` before a ```bash block: the next ```text block
  is that block's stdout when it is run by bash from the folder `cwd` (relative to the
  course root, the folder the handout tells the student to run it from) of a copy of the
  course in which the lab's `student.py` is the reference solution and `.venv` is the
  interpreter's environment. ``<!-- verify:script cwd=... shape -->`` compares with every
  number masked, for output such as timings that differs from run to run.

`check_scripts(info, impl)` runs the snippets against another implementation, such as one
that returns numpy arrays where the solution returns Tensors: a snippet must work for every
return type the checks accept.

The prose refers to a test by its number, as the report shows it, tied to the test's id in
an HTML comment that Markdown viewers hide: ``[TEST 7]<!-- softmax_stable -->``.
`sync_references` checks every ``[TEST n]`` outside code fences (the output blocks are
fences, checked above): a tied number must be the test's place in the lab's order today
(``--write`` renumbers it), and an unknown id or an untied ``[TEST n]`` is a problem.

Run ``python -m grader.course.handouts`` to list drift and layout problems (exit 1 if any) and
``python -m grader.course.handouts --write`` to rewrite the blocks from fresh runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from grader.course.handout_skeleton import layout_problems
from grader.labs import LabInfo, all_labs, course_root, load_lab, resolve_lab
from grader.render.lab import render_lines, render_plain
from grader.results import LabResult
from grader.runner import run_tests
from grader.sandbox.client import Sandbox

__all__ = [
    "BLOCKS",
    "HANDOUTS",
    "check_references",
    "check_scripts",
    "expected_blocks",
    "prose_references",
    "sync_lab",
    "sync_references",
]

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
    out[("title", "zh")] = f"# {info.id.capitalize()} — {lab.title.zh}"
    out[("title", "en")] = f"# {info.id.capitalize()} — {lab.title.en}"
    return out


def sync_lab(info: LabInfo, sandbox: Sandbox, write: bool = False) -> list[str]:
    """Compare (or with `write`, rewrite) the blocks of the lab's handouts; list problems."""
    want = expected_blocks(info, sandbox)
    problems: list[str] = []
    with _course_copy(info, info.solution) as copy:
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
            new = _sync_title(new, want[("title", lang)], path, problems)
            new = _sync_marked(new, path, lang, info, problems, sandbox=sandbox, copy=copy)
            if write and new != text:
                path.write_text(new, encoding="utf-8")
    return problems


def check_scripts(info: LabInfo, impl: Path) -> list[str]:
    """Run the lab's verify:script snippets with `impl` as student.py; list every snippet
    whose output is not the one its handout quotes (or that fails)."""
    problems: list[str] = []
    with _course_copy(info, impl) as copy:
        for name, lang in HANDOUTS.items():
            path = info.dir / name
            if path.is_file():
                text = path.read_text(encoding="utf-8")
                _sync_marked(text, path, lang, info, problems, sandbox=None, copy=copy)
    return [f"{p} (student.py = {impl})" for p in problems]


_REF = re.compile(r"\[TEST (?P<n>\d+)\](?:<!-- (?P<id>[\w.-]+) -->)?")
_FENCE_OPEN = re.compile(r"^\s*(```|~~~)")


def prose_references(text: str) -> list[tuple[int, re.Match[str]]]:
    """Every ``[TEST n]`` (with its ``<!-- id -->`` if tied) outside code fences, as
    (0-based line index, match in that line)."""
    out: list[tuple[int, re.Match[str]]] = []
    fence = ""
    for i, line in enumerate(text.split("\n")):
        m = _FENCE_OPEN.match(line)
        if m:
            if not fence:
                fence = m.group(1)
            elif line.strip() == fence:
                fence = ""
            continue
        if not fence:
            out.extend((i, ref) for ref in _REF.finditer(line))
    return out


def check_references(text: str, ids: list[str], path: Path | str) -> tuple[str, list[str]]:
    """The text with every tied ``[TEST n]`` renumbered from `ids` (the lab's tests in
    order), and a problem for each reference that was wrong, unknown or untied."""
    number = {test_id: k for k, test_id in enumerate(ids, 1)}
    lines = text.split("\n")
    problems: list[str] = []
    for i, ref in reversed(prose_references(text)):  # right to left: spans stay valid
        n, test_id = int(ref.group("n")), ref.group("id")
        where = f"{path}:{i + 1}: [TEST {n}]"
        if test_id is None:
            name = f" ({ids[n - 1]})" if 0 < n <= len(ids) else ""
            problems.append(f"{where} is not tied to a test id: write [TEST {n}]<!-- id{name} -->")
        elif test_id not in number:
            problems.append(f"{where}<!-- {test_id} -->: the lab has no test {test_id!r}")
        elif number[test_id] != n:
            problems.append(f"{where}: test {test_id!r} is [TEST {number[test_id]}]")
            fixed = f"[TEST {number[test_id]}]<!-- {test_id} -->"
            lines[i] = lines[i][: ref.start()] + fixed + lines[i][ref.end() :]
    return "\n".join(lines), problems[::-1]


def sync_references(info: LabInfo, write: bool = False) -> list[str]:
    """Check (or with `write`, renumber) the ``[TEST n]`` references of the lab's handouts;
    list the problems (with `write`, those left: unknown ids and untied references)."""
    ids = [t.id for t in load_lab(info).tests]
    problems: list[str] = []
    for name in HANDOUTS:
        path = info.dir / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        new, found = check_references(text, ids, path)
        if write and new != text:
            path.write_text(new, encoding="utf-8")
            found = check_references(new, ids, path)[1]
        problems += found
    return problems


def _sync_title(text: str, title: str, path: Path, problems: list[str]) -> str:
    first, sep, rest = text.partition("\n")
    if first == title:
        return text
    problems.append(f"{path}:1: the title must be {title!r} (the Lab's title in verify.py)")
    return title + sep + (rest if first.startswith("# ") else text)


_MARKER = re.compile(r"^(?P<indent>[ ]*)<!-- verify:(?P<kind>script|excerpt)(?P<opts>[^>]*)-->$")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@dataclass
class _Fence:
    start: int  # index of the opening fence line
    end: int  # index of the closing fence line
    body: list[str]  # lines inside, indentation removed


def _fence(lines: list[str], after: int, indent: str, lang: str) -> _Fence | None:
    """The next ```lang block at this indentation after line `after`, if no other fence or
    marker comes first."""
    for i in range(after + 1, len(lines)):
        stripped = lines[i].strip()
        if lines[i] != f"{indent}```{lang}" and (
            stripped.startswith("```") or stripped.startswith("<!-- verify:")
        ):
            return None
        if lines[i] == f"{indent}```{lang}":
            for j in range(i + 1, len(lines)):
                if lines[j] == f"{indent}```":
                    body = [
                        ln[len(indent) :] if ln.startswith(indent) else ln.lstrip()
                        for ln in lines[i + 1 : j]
                    ]
                    return _Fence(i, j, body)
            return None
    return None


@contextmanager
def _course_copy(info: LabInfo, impl: Path) -> Iterator[Path]:
    """A throwaway copy of the lab's folder at labs/<id>/ with `impl` as its student.py, and
    `.venv` pointing at the running interpreter's environment, as a student's checkout has."""
    _SCRIPT_RUNS.clear()  # what ran in an earlier copy
    with tempfile.TemporaryDirectory(prefix="minillm-handout-") as tmp:
        root = Path(tmp)
        lab_dir = root / "labs" / info.id
        shutil.copytree(info.dir, lab_dir, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copyfile(impl, lab_dir / "student.py")
        (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
        yield root


_SCRIPT_RUNS: dict[tuple[str, str, str], str] = {}  # the outputs in the last course copy


def _run_script(bash: str, copy: Path, cwd: str) -> str:
    """Run a handout's bash block from the folder `cwd` of the course copy; its stdout.

    Both handouts of a lab give most blocks word for word: in one copy, a block is run
    once (the blocks write only into folders of their own, so a second run would print
    the same)."""
    key = (str(copy), cwd, bash)
    if key not in _SCRIPT_RUNS:
        _SCRIPT_RUNS[key] = _run_fresh(bash, copy, cwd)
    return _SCRIPT_RUNS[key]


def _run_fresh(bash: str, copy: Path, cwd: str) -> str:
    work = (copy / cwd).resolve()
    if not work.is_relative_to(copy.resolve()) or not work.is_dir():
        return f"<no such folder in the course: {cwd}>\n"
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
    }
    proc = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", bash],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        timeout=120,
    )
    if proc.returncode != 0:
        return f"<script failed with exit {proc.returncode}>\n{proc.stderr[-2000:]}"
    return proc.stdout


_EXCERPT_RUNS: dict[tuple[str, str, bytes, bytes], LabResult] = {}  # the last excerpt's run


def _excerpt(info: LabInfo, sandbox: Sandbox, lang: str, opts: dict[str, str]) -> str:
    impl = course_root() / opts.get("impl", "")
    if not impl.is_file():
        return f"<no such implementation: {opts.get('impl')}>\n"
    wanted = {int(n) for n in opts.get("tests", "").split(",") if n.strip().isdigit()}
    key = (info.id, str(impl.resolve()), impl.read_bytes(), (info.dir / "verify.py").read_bytes())
    if key not in _EXCERPT_RUNS:  # both handouts quote the same run, each in its language
        _EXCERPT_RUNS.clear()
        _EXCERPT_RUNS[key] = run_tests(load_lab(info), impl, sandbox)
    result = _EXCERPT_RUNS[key]
    out: list[str] = []
    keep = False
    for line in render_lines(result, lang):
        text = "".join(seg for seg, _ in line)
        m = re.match(r"\[TEST (\d+)\]", text)
        if m:
            keep = int(m.group(1)) in wanted
        elif not text:
            keep = False
        if keep:
            out.append(text)
    if opts.get("lines", "").isdigit():
        out = out[: int(opts["lines"])]
    return "\n".join(out) + "\n"


def _sync_marked(
    text: str,
    path: Path,
    lang: str,
    info: LabInfo,
    problems: list[str],
    *,
    sandbox: Sandbox | None,
    copy: Path,
) -> str:
    """Check (and return rewritten) the verify:script blocks, and the verify:excerpt blocks
    when a sandbox is given."""
    lines = text.split("\n")
    for i in range(len(lines) - 1, -1, -1):  # bottom-up: edits keep earlier indices valid
        m = _MARKER.match(lines[i])
        if not m or (m.group("kind") == "excerpt" and sandbox is None):
            continue
        indent, kind = m.group("indent"), m.group("kind")
        opts = dict(o.split("=", 1) for o in m.group("opts").split() if "=" in o)
        flags = {o for o in m.group("opts").split() if "=" not in o}
        where = f"{path}:{i + 1}"
        if kind == "script":
            bash = _fence(lines, i, indent, "bash")
            target = _fence(lines, bash.end, indent, "text") if bash else None
            if bash is None or target is None:
                problems.append(f"{where}: verify:script needs a bash block and a text block")
                continue
            if "cwd" not in opts:
                problems.append(f"{where}: verify:script needs cwd=FOLDER (where it is run from)")
                continue
            fresh = _run_script("\n".join(bash.body) + "\n", copy, opts["cwd"])
        else:
            target = _fence(lines, i, indent, "text")
            if target is None or sandbox is None:
                problems.append(f"{where}: verify:excerpt needs a text block")
                continue
            fresh = _excerpt(info, sandbox, lang, opts)
        have = "\n".join(target.body) + "\n"
        same = (
            (_NUMBER.sub("#", have) == _NUMBER.sub("#", fresh))
            if "shape" in flags
            else (have == fresh)
        )
        if not same:
            problems.append(f"{where}: verify:{kind} block differs from a fresh run")
            body = [(indent + ln) if ln else "" for ln in fresh.rstrip("\n").split("\n")]
            lines[target.start + 1 : target.end] = body
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Check (or `--write`) the handouts of the given labs, or of every lab."""
    args = list(sys.argv[1:] if argv is None else argv)
    write = "--write" in args
    names = [a for a in args if a != "--write"]
    labs = [resolve_lab(n) for n in names] if names else all_labs()
    problems: list[str] = []
    layout: list[str] = []
    with Sandbox() as sandbox:
        for info in labs:
            problems += sync_lab(info, sandbox, write)
            layout += layout_problems(info)
            layout += sync_references(info, write)
    for p in problems:
        print(("updated: " if write else "") + p)
    for p in layout:
        print(p)
    return 0 if (write or not problems) and not layout else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""The student edition of the course (`minillm pack OUT`), and the proof that it is one.

The edition holds what a student needs and nothing an instructor keeps back:

    framework/  grader/  pyproject.toml     the library, the grader, the package
    labs/labNN/                             TASK.md, TASK.en.md, verify.py, Makefile, and
                                            student.py and .stub.py generated from the
                                            solution's markers (`grader.course.stubs`);
                                            the handouts without their
                                            ``<!-- verify:excerpt impl=tests/… -->`` lines
                                            (they name files the edition leaves out)
    labs/lab.mk  Makefile  README.md  .gitignore   its own, written here

No `solutions/` (so no reference code and no hidden checks), no `tests/` (the mutants are
wrong implementations built on the solutions), no `bench/`, no author notes. The same
`minillm grade` runs in it, with the public checks only.

`verify_edition` then checks what was written, in a fresh copy of it whose `.venv` sees
only the copy's own `framework/` and `grader/`: for every lab, `make test` runs and prints
exactly the handout's baseline block (every test TODO); every stub is the generated one;
nothing of `solutions/` is there, no hidden-checks module, no solution marker, no
handout marker naming a file of `tests/`; the body
of every solution block, normalised line by line, appears in no file of the edition; and no
file names a hidden test (an id that a ``solutions/labNN/hidden.py`` registers, of any lab).

Only the instructor's course can be packed: in a student edition (no `solutions/`) `pack`
refuses with a `PackError`.
"""

from __future__ import annotations

import compileall
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
import venv
from collections.abc import Callable, Sequence
from pathlib import Path

from grader.course.stubs import NoMarkers, find_blocks, stub_for
from grader.errors import GraderError
from grader.grade.checks import HiddenChecksError, hidden_path, load_graded_lab
from grader.labs import LabInfo, all_labs, load_lab

__all__ = [
    "PackError",
    "build_edition",
    "edition_handout",
    "hidden_ids",
    "pack",
    "solution_bodies",
    "verify_edition",
]

_SKIP = shutil.ignore_patterns(
    "__pycache__", "*.pyc", "*.pyo", "*.bak", ".minillm", ".pytest_cache", "*.egg-info"
)
_BASELINE = re.compile(
    r"<!-- verify:baseline -->\n```text\n(.*?)```\n<!-- /verify:baseline -->", re.S
)
_MARKER = re.compile(r"#\s*(BEGIN|END) SOLUTION")
# the instructor's marker of an output block made from a file of tests/ (grader.course.handouts)
_EXCERPT = re.compile(r"^[ ]*<!-- verify:excerpt[^>]*-->\n", re.M)
_IMPORT = re.compile(r"^(import |from \S+ import )")

MAKEFILE = """\
# miniLLM lab (student edition).
#   make test LAB=lab04   verify one lab (sets up .venv on first use)
#   make hint LAB=lab04 [T=n] [L=level]   its hints
#   make status           every lab's progress
#   cd labs/lab04 && make test   the same, from the lab's folder (and make hint T=n L=level)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LAB    ?= lab01

.PHONY: setup test hint status clean

setup: $(STAMP)
\t@:

$(STAMP): pyproject.toml
\t@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "needs Python >= 3.11")'
\t@echo "setting up $(VENV) (first run only) ..."
\t@$(PYTHON) -m venv $(VENV)
\t@$(BIN)/python -m pip install --disable-pip-version-check -e '.[test]'
\t-@$(BIN)/python -m compileall -q framework grader labs > /dev/null
\t@touch $(STAMP)
\t@echo "$(VENV) is ready"

test: $(STAMP)
\t@$(BIN)/minillm verify $(LAB)

# at the root the lab must be named: a default one would show another lab's hints
hint: $(STAMP)
ifeq ($(origin LAB),file)
\t@echo "make hint needs the lab: make hint LAB=lab04 T=3 (or: cd labs/lab04; make hint T=3)" >&2
\t@exit 2
else
\t@$(MAKE) --no-print-directory -s -C labs/$(LAB) hint
endif

status: $(STAMP)
\t@$(BIN)/minillm status

clean:
\trm -rf $(VENV) .pytest_cache
\tfind . -name __pycache__ -type d -prune -exec rm -rf {} +
"""

GITIGNORE = """\
.venv/
__pycache__/
*.pyc
*.egg-info/
.pytest_cache/
.minillm/
*.bak
"""

README = """\
# miniLLM lab

```sh
cd labs/lab01
make test            # 第一次运行会建立 .venv / the first run sets up .venv
```

只需要 Python ≥ 3.11 和 make。/ Only Python ≥ 3.11 and make are needed.

## 这是什么 / What this is

一门分 {n} 个实验、用 Python 从零搭出一个小 GPT 的课程，
以及一个逐条断言告诉你“哪些已经成立”的评测器。
A course of {n} labs in which you build a tiny GPT from scratch in Python, and a grader that
tells you, assertion by assertion, what already holds.

| lab | 主题 | topic |
|---|---|---|
{table}

## 怎么做 / How to work

每个实验只改 `labs/labNN/student.py`；`TASK.md`（中文）和 `TASK.en.md`（English）讲解每个函数。
Edit only `labs/labNN/student.py`; `TASK.md` (中文) and `TASK.en.md` (English) explain each
function. `verify.py` holds the checks: read it, do not edit it.

```sh
make test LAB=lab04          # 或 / or: cd labs/lab04 && make test
make status                  # 每个实验的进度 / every lab's progress
cd labs/lab04 && make hint T=7 L=2   # 测试 7 的前两条提示 / test 7's first two hints
.venv/bin/minillm watch lab04    # 每次保存都重新检查 / verify again on every save
.venv/bin/minillm reset lab04    # 回到桩代码（先备份）/ back to the stub (backed up first)
.venv/bin/pytest labs/lab04      # 同样的检查，作为 pytest 测试 / the same checks as pytest items
```

`minillm` 在 `.venv` 里；激活它之后可以直接输入 `minillm`。/ `minillm` lives in `.venv`;
activate it to type just `minillm`:

```sh
source .venv/bin/activate    # Linux, macOS (bash, zsh); fish: source .venv/bin/activate.fish
minillm status
deactivate                   # 退出 / leave it
```

Windows（没有 make / no make), PowerShell:

```console
py -m venv .venv
.venv\\Scripts\\python -m pip install -e ".[test]"
.venv\\Scripts\\minillm verify lab04
.venv\\Scripts\\Activate.ps1       # 之后 / then: minillm status, minillm hint lab04 7 --level 2
.venv\\Scripts\\pytest labs\\lab04
```

报告里每项检查是 `[PASS]`、`[FAIL]`、`[TODO]`（还没写）、`[ERROR]`、`[TIMEOUT]` 或 `[SKIP]`。
Each check of the report is `[PASS]`, `[FAIL]`, `[TODO]` (not written yet), `[ERROR]`,
`[TIMEOUT]` or `[SKIP]`; the exit status is 0 only when everything passes.

## 评分 / Grading

评分用的是同样的检查，外加一些隐藏的检查；只有 `student.py` 会被收走，其他文件的改动不影响分数。
Grading runs the same checks plus some hidden ones; only your `student.py` files are taken, so
changes to any other file do not change your grade. `.venv/bin/minillm grade . --labs lab04`
shows the score of the public checks.
"""


class PackError(GraderError, RuntimeError):
    """The student edition cannot be written (the message says why)."""


def _lab_table(labs: Sequence[LabInfo]) -> str:
    rows = []
    for info in labs:
        title = load_lab(info).title
        rows.append(f"| {info.id} | {title.zh} | {title.en} |")
    return "\n".join(rows)


def _stub(info: LabInfo) -> str:
    """The stub to hand out: generated from the solution, or (no markers yet) the committed one."""
    try:
        return stub_for(info)
    except NoMarkers:
        return info.student.read_text(encoding="utf-8")


def edition_handout(text: str) -> str:
    """A handout as the edition has it: without the ``verify:excerpt`` marker lines, which
    name an implementation under tests/ (the output block below each one stays)."""
    return _EXCERPT.sub("", text)


def build_edition(source: Path, out: Path, labs: Sequence[LabInfo]) -> None:
    """Write the student edition of the course at `source` into the empty folder `out`."""
    out.mkdir(parents=True, exist_ok=True)
    for package in ("framework", "grader"):
        shutil.copytree(source / package, out / package, ignore=_SKIP)
    for info in labs:
        target = out / "labs" / info.id
        shutil.copytree(info.dir, target, ignore=_SKIP)
        stub = _stub(info)
        for name in ("student.py", ".stub.py"):
            (target / name).write_text(stub, encoding="utf-8")
        for handout in target.glob("TASK*.md"):
            text = handout.read_text(encoding="utf-8")
            handout.write_text(edition_handout(text), encoding="utf-8")
    shutil.copyfile(source / "labs" / "lab.mk", out / "labs" / "lab.mk")
    shutil.copyfile(source / "pyproject.toml", out / "pyproject.toml")
    (out / "Makefile").write_text(MAKEFILE, encoding="utf-8")
    (out / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    readme = README.format(n=len(labs), table=_lab_table(labs))
    (out / "README.md").write_text(readme, encoding="utf-8")


def _normalised(text: str) -> list[str]:
    """Lines stripped, blank, comment-only and import lines dropped."""
    rows = [r.strip() for r in text.splitlines()]
    return [r for r in rows if r and not r.startswith("#") and not _IMPORT.match(r)]


def solution_bodies(info: LabInfo) -> list[tuple[str, str]]:
    """(where, normalised body) of every solution block of the lab's reference solution."""
    source = info.solution.read_text(encoding="utf-8")
    lines = source.splitlines()
    bodies = []
    for block in find_blocks(source, info.solution):
        body = "\n".join(_normalised("\n".join(lines[block.begin : block.end - 1])))
        if body:
            where = f"{info.id} {block.function or 'module'}() (solution line {block.begin})"
            bodies.append((where, body))
    return bodies


def _edition_files(root: Path) -> list[Path]:
    skip = {".venv", "__pycache__", ".git"}
    return [
        p
        for p in sorted(root.rglob("*"))
        if p.is_file() and not skip & set(p.relative_to(root).parts)
    ]


def _layout_problems(edition: Path, labs: Sequence[LabInfo]) -> list[str]:
    problems = []
    for banned in ("solutions", "tests", "bench"):
        if (edition / banned).exists():
            problems.append(f"{banned}/ is in the student edition")
    for path in _edition_files(edition):
        rel = path.relative_to(edition)
        if path.name == "hidden.py":
            problems.append(f"{rel}: a hidden-checks module")
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".py" and "grader" not in rel.parts[:1] and _MARKER.search(text):
            problems.append(f"{rel}: holds a solution marker")
        if path.suffix == ".md" and _EXCERPT.search(text):
            problems.append(f"{rel}: a verify:excerpt marker names a file the edition lacks")
    for info in labs:
        lab_dir = edition / "labs" / info.id
        student = lab_dir / "student.py"
        if not student.is_file():
            problems.append(f"labs/{info.id}/student.py is missing")
            continue
        text = student.read_text(encoding="utf-8")
        if text != _stub(info):
            problems.append(f"labs/{info.id}/student.py is not the generated stub")
        stub = lab_dir / ".stub.py"
        if not stub.is_file() or stub.read_text(encoding="utf-8") != text:
            problems.append(f"labs/{info.id}/.stub.py is not the same as its student.py")
    return problems


def _leaks(edition: Path, labs: Sequence[LabInfo]) -> list[str]:
    files = {
        p: "\n".join(_normalised(p.read_text(encoding="utf-8", errors="replace")))
        for p in _edition_files(edition)
    }
    problems = []
    for info in labs:
        if not info.solution.is_file():
            continue
        try:
            bodies = solution_bodies(info)
        except NoMarkers:
            continue
        for where, body in bodies:
            for path, text in files.items():
                if body in text:
                    problems.append(f"{path.relative_to(edition)}: holds the solution of {where}")
    return problems


def hidden_ids(source: Path) -> tuple[dict[str, str], list[str]]:
    """The ids of the hidden tests of every lab of the course at `source` (id -> lab), and
    the problems of the hidden modules that do not load."""
    ids: dict[str, str] = {}
    problems: list[str] = []
    for info in all_labs(source):
        if not hidden_path(info).is_file():
            continue
        try:
            lab = load_graded_lab(info)
        except HiddenChecksError as e:
            problems.append(f"{e} (the edition cannot be searched for its test ids)")
            continue
        ids.update({spec.id: info.id for spec in lab.tests if spec.hidden})
    return ids, problems


def _hidden_names(edition: Path, source: Path) -> list[str]:
    """Each file of the edition that names a hidden test (its first line that does)."""
    ids, problems = hidden_ids(source)
    if not ids:
        return problems
    named = re.compile(r"\b(?:" + "|".join(re.escape(i) for i in sorted(ids)) + r")\b")
    for path in _edition_files(edition):
        text = path.read_text(encoding="utf-8", errors="replace")
        seen: set[str] = set()
        for m in named.finditer(text):
            if m.group() in seen:
                continue
            seen.add(m.group())
            line = text.count("\n", 0, m.start()) + 1
            problems.append(
                f"{path.relative_to(edition)}:{line}: names {ids[m.group()]}'s hidden test "
                f"{m.group()} (the edition names no hidden test)"
            )
    return problems


def _light_venv(root: Path) -> None:
    """A `.venv` in `root` that imports the copy's own framework/grader (first on the path)
    and this interpreter's third-party packages, with the `minillm` script `make` runs,
    and the copy's bytecode: what `make setup` leaves."""
    env = root / ".venv"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(env)
    py = f"python{sys.version_info.major}.{sys.version_info.minor}"
    lib = env / "lib" / py / "site-packages"
    paths = [str(root)] + [p for p in site.getsitepackages() if Path(p).is_dir()]
    (lib / "minillm-edition.pth").write_text("\n".join(paths) + "\n", encoding="utf-8")
    script = env / "bin" / "minillm"
    script.write_text(
        f"#!{env / 'bin' / 'python'}\nfrom grader.__main__ import main\n\nmain()\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    for part in ("framework", "grader", "labs"):  # the bytecode `make setup` writes
        if (root / part).is_dir():
            compileall.compile_dir(root / part, quiet=2)
    (env / ".installed").touch()  # after pyproject.toml was copied: make sees setup as done


def _baseline(info: LabInfo) -> str | None:
    handout = info.dir / "TASK.md"
    if not handout.is_file():
        return None
    m = _BASELINE.search(handout.read_text(encoding="utf-8"))
    return m.group(1) if m else None


def _run_labs(copy: Path, labs: Sequence[LabInfo], say: Callable[[str], None]) -> list[str]:
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        "MINILLM_LANG": "zh",
        "NO_COLOR": "1",
        "MAKEFLAGS": "",
    }
    problems = []
    for info in labs:
        say(f"  make test  labs/{info.id}")
        proc = subprocess.run(
            ["make", "-s", "test"],
            cwd=copy / "labs" / info.id,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        want = _baseline(info)
        if proc.returncode != 2 or "Error 1" not in proc.stderr:  # make: verify exited 1
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            problems.append(
                f"labs/{info.id}: make test did not end as for stubs (verify's exit status 1): "
                + " | ".join(tail)
            )
        elif want is None:
            problems.append(f"labs/{info.id}/TASK.md has no baseline block to compare with")
        elif proc.stdout != want:
            problems.append(
                f"labs/{info.id}: make test does not print the handout's baseline block"
            )
        todo = [ln for ln in proc.stdout.splitlines() if ln.startswith("[TEST ")]
        if any("[SKIP]" in ln for ln in todo) or "[PASS]" in proc.stdout:
            problems.append(f"labs/{info.id}: a stub passes or skips a check instead of TODO")
    return problems


def verify_edition(
    edition: Path, labs: Sequence[LabInfo], *, say: Callable[[str], None] = lambda _: None
) -> list[str]:
    """Every problem of the student edition at `edition` (see the module docstring)."""
    problems = _layout_problems(edition, labs)
    problems += _leaks(edition, labs)
    for source in sorted({info.dir.parent.parent for info in labs}):
        problems += _hidden_names(edition, source)
    with tempfile.TemporaryDirectory(prefix="minillm-edition-") as tmp:
        copy = Path(tmp) / "course"
        shutil.copytree(edition, copy, ignore=shutil.ignore_patterns(".venv", "__pycache__"))
        _light_venv(copy)
        problems += _run_labs(copy, labs, say)
    return problems


def pack(
    out: Path,
    *,
    source: Path | None = None,
    labs: Sequence[LabInfo] | None = None,
    say: Callable[[str], None] = lambda _: None,
) -> list[str]:
    """Write the student edition into `out` (new or empty), then verify it; its problems.

    Raises:
        PackError: `out` is not empty, or lies inside the course, or the course is itself
            a student edition (it has no solutions/ to make the stubs from).
    """
    from grader.labs import course_root

    src = (source or course_root()).resolve()
    if not (src / "solutions").is_dir():
        raise PackError(
            f"{src} has no solutions/ folder: it is a student edition, which cannot be "
            "packed again; run minillm pack in the instructor's course"
        )
    chosen = list(labs) if labs is not None else all_labs(src)
    target = out.resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise PackError(f"{out} exists and is not an empty folder")
    if target.is_relative_to(src):
        raise PackError(f"{out} is inside the course at {src}: write the edition elsewhere")
    say(f"writing the student edition of {len(chosen)} labs to {out}")
    build_edition(src, target, chosen)
    say("checking it in a fresh copy")
    return verify_edition(target, chosen, say=say)

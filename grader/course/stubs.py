"""One source for stub and solution: generate a lab's `student.py` from its reference solution.

`solutions/labNN/student.py` is the lab's `student.py` with the answers filled in. Markers
say which lines are the answer (the idea of nbgrader's ``clearsolutions``):

    def softmax(x: Tensor) -> Tensor:
        \"\"\"Softmax over the last dimension ... (the docstring the student reads)\"\"\"
        # BEGIN SOLUTION: for each row: subtract the max, exponentiate, divide by the sum.
        xt = as_tensor(x, "x")
        ...
        # END SOLUTION

Inside a function, a block becomes the stub's two lines, at the marker's indentation::

        # TODO(lab04): for each row: subtract the max, exponentiate, divide by the sum.
        raise NotImplementedError("lab04: implement softmax")

The text after ``BEGIN SOLUTION:`` is the TODO line, and the function is the innermost one
around the block. Outside a function (solution-only imports, helpers, constants) a block is
removed, markers included; it takes no text, and the blank lines around it become as many as
the larger run on either side. Everything else is copied as it is, so the docstrings, the
imports the student gets and the module docstring live once, in the solution.

A bad marker is an error that names the file and line, never a guess: a block that is not
closed, a block inside a block, an ``END`` without a ``BEGIN`` or at another indentation, an
empty block, a function block without its TODO text, a module-level block with one, or a
comment that looks like a marker but is not one (``### BEGIN SOLUTION``, ``# BEGIN SOLUTON``,
``# END SOLUTIONS``, a marker after code). Every such look-alike is reported at its own line,
all of them at once and before any other rule is checked (a typo in a marker would otherwise
surface as an unclosed block far from it). A solution with no markers at all is refused
(`NoMarkers`): it is not yet one source.

Generated files: `labs/labNN/student.py` (handed out) and `labs/labNN/.stub.py` (the pristine
copy `minillm reset` restores). ``python -m grader.course.stubs [--check] [LAB ...]`` (also
``make stubs`` and ``minillm stubs``) writes them, or with ``--check`` lists the labs whose
committed stubs differ.
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import sys
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError
from grader.labs import LabInfo, UnknownLab, all_labs, resolve_lab

__all__ = [
    "Block",
    "NoMarkers",
    "StubError",
    "Sync",
    "find_blocks",
    "has_markers",
    "main",
    "make_stub",
    "marker_like",
    "stub_for",
    "sync_stubs",
]

BEGIN = "BEGIN SOLUTION"
END = "END SOLUTION"
_BEGIN = re.compile(r"^# BEGIN SOLUTION(?::[ ]*(?P<text>.*?))?[ ]*$")
_END = re.compile(r"^# END SOLUTION[ ]*$")
_LETTERS = re.compile(r"[A-Za-z]+")
_PHRASE_BREAK = re.compile(r"[^A-Za-z\s_-]+")
STUB_FILES = ("student.py", ".stub.py")


class StubError(GraderError, ValueError):
    """A solution whose markers cannot make a stub; the message starts with ``file:line:``."""


class NoMarkers(StubError):
    """A solution without any ``# BEGIN SOLUTION`` marker (not converted to one source)."""


@dataclass(frozen=True)
class Block:
    """One ``BEGIN SOLUTION`` … ``END SOLUTION`` block (1-based line numbers of its markers).

    `function` is the innermost function around it (None at module or class level), and
    `todo` the text after ``BEGIN SOLUTION:`` (None when there is none).
    """

    begin: int
    end: int
    indent: str
    todo: str | None
    function: str | None


def _near(word: str, target: str, ratio: float) -> bool:
    return difflib.SequenceMatcher(None, word, target).ratio() >= ratio


def _begin_or_end(word: str) -> bool:
    return _near(word, "BEGIN", 0.75) or word in ("END", "ENDS", "EDN", "NED", "ENDE")


def marker_like(comment: str) -> bool:
    """Whether a comment reads as a marker, typos included (``BEGIN SOLUTON``, ``END_SOLUTIONS``).

    The test is on its words, case aside: one close to ``BEGIN`` or ``END`` followed by one
    close to ``SOLUTION`` (only spaces, ``_`` or ``-`` between them), or the two written as
    one word (``ENDSOLUTION``).
    """
    for phrase in _PHRASE_BREAK.split(comment):
        words = [w.upper() for w in _LETTERS.findall(phrase)]
        for i, word in enumerate(words):
            if i and _near(word, "SOLUTION", 0.75) and _begin_or_end(words[i - 1]):
                return True
            for head in ("BEGIN", "END"):
                rest = word[len(head) :]
                if word.startswith(head) and len(rest) > 4 and _near(rest, "SOLUTION", 0.75):
                    return True
    return False


def _scan(source: str, path: str) -> tuple[list[tuple[int, str, str]], list[str]]:
    """(line, indentation, text) of every comment alone on its line, and the look-alike
    markers (``file:line: why``), each at its own line.

    Raises:
        StubError: a file that tokenize cannot read.
    """
    out: list[tuple[int, str, str]] = []
    problems: list[str] = []
    lines = source.splitlines()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.COMMENT:
                continue
            row = tok.start[0]
            before = lines[row - 1][: tok.start[1]]
            if not before.strip():
                out.append((row, before, tok.string))
                problem = _lookalike(tok.string)
                if problem:
                    problems.append(f"{path}:{row}: {problem}")
            elif marker_like(tok.string):
                problems.append(f"{path}:{row}: a solution marker must be on its own line")
    except (tokenize.TokenError, SyntaxError) as e:
        raise StubError(f"{path}: cannot read the file as Python: {e}") from None
    return out, problems


def _comments(source: str, path: str) -> list[tuple[int, str, str]]:
    """The comments alone on their lines (see `_scan`).

    Raises:
        StubError: every look-alike marker, one ``file:line:`` line each.
    """
    out, problems = _scan(source, path)
    if problems:
        raise StubError("\n".join(problems))
    return out


def _lookalike(text: str) -> str | None:
    """Why a comment alone on its line is a look-alike marker, or None (a marker, or not one)."""
    if _BEGIN.match(text) or _END.match(text) or not marker_like(text):
        return None
    return (
        f"{text!r} looks like a solution marker but is not one; "
        f"write '# {BEGIN}: <what the student does>' or '# {END}'"
    )


def _functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _enclosing(funcs: Sequence[ast.FunctionDef | ast.AsyncFunctionDef], line: int) -> str | None:
    """The name of the innermost function whose body holds `line`."""
    inside = [f for f in funcs if f.lineno < line <= (f.end_lineno or f.lineno)]
    if not inside:
        return None
    return max(inside, key=lambda f: f.lineno).name


def find_blocks(source: str, path: str | Path = "<solution>") -> list[Block]:
    """The marker blocks of a solution, checked (see the module docstring for the rules).

    Raises:
        StubError: a bad marker (``file:line:`` first), or a file that is not Python.
    """
    where = str(path)
    try:
        tree = ast.parse(source, filename=where)
    except SyntaxError as e:
        raise StubError(f"{where}:{e.lineno}: syntax error: {e.msg}") from None
    funcs = _functions(tree)
    blocks: list[Block] = []
    open_at: tuple[int, str, str | None] | None = None
    for row, indent, text in _comments(source, where):
        begin, end = _BEGIN.match(text), _END.match(text)
        if begin is None and end is None:
            continue
        if begin is not None:
            if open_at is not None:
                raise StubError(
                    f"{where}:{row}: '{BEGIN}' inside the block opened at line {open_at[0]} "
                    "(blocks do not nest)"
                )
            open_at = (row, indent, begin.group("text") or None)
            continue
        if open_at is None:
            raise StubError(f"{where}:{row}: '{END}' without a '{BEGIN}' before it")
        start, start_indent, todo = open_at
        open_at = None
        if indent != start_indent:
            raise StubError(
                f"{where}:{row}: '{END}' is indented differently from its '{BEGIN}' at line {start}"
            )
        blocks.append(_block(tree, funcs, source, where, start, row, indent, todo))
    if open_at is not None:
        raise StubError(f"{where}:{open_at[0]}: '{BEGIN}' is never closed by '# {END}'")
    return blocks


def _block(
    tree: ast.Module,
    funcs: Sequence[ast.FunctionDef | ast.AsyncFunctionDef],
    source: str,
    where: str,
    begin: int,
    end: int,
    indent: str,
    todo: str | None,
) -> Block:
    statements = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.stmt) and begin < n.lineno < end and n.col_offset >= len(indent)
    ]
    if not statements:
        raise StubError(f"{where}:{begin}: the solution block (lines {begin}-{end}) is empty")
    for n in statements:
        if (n.end_lineno or n.lineno) > end:
            raise StubError(
                f"{where}:{n.lineno}: a statement starts in the block of lines {begin}-{end} "
                "and ends after it"
            )
    function = _enclosing(funcs, begin) if indent else None
    if function is None and todo is not None:
        raise StubError(
            f"{where}:{begin}: a block outside a function is removed from the stub; "
            f"write it as '# {BEGIN}' without text"
        )
    if function is not None and todo is None:
        raise StubError(
            f"{where}:{begin}: the block in {function}() needs the stub's TODO text: "
            f"'# {BEGIN}: <what the student does>'"
        )
    return Block(begin, end, indent, todo, function)


def has_markers(source: str) -> bool:
    """Whether the source has at least one marker comment (the cheap test before parsing)."""
    comments, _ = _scan(source, "<source>")
    return any(_BEGIN.match(t) or _END.match(t) for _, _, t in comments)


def make_stub(source: str, lab_id: str, path: str | Path = "<solution>") -> str:
    """The stub `student.py` for a solution's source.

    Args:
        source: the solution file's text.
        lab_id: ``labNN``, used in the TODO lines and the NotImplementedError messages.
        path: the file, named in error messages.

    Returns:
        The stub's text.

    Raises:
        NoMarkers: the solution has no marker at all.
        StubError: a bad marker, or a stub that would not be valid Python.

    Example:
        >>> src = 'def f():\\n    \"\"\"Doc.\"\"\"\\n    # BEGIN SOLUTION: return one.\\n' \\
        ...       '    return 1\\n    # END SOLUTION\\n'
        >>> print(make_stub(src, "lab01"), end="")
        def f():
            \"\"\"Doc.\"\"\"
            # TODO(lab01): return one.
            raise NotImplementedError("lab01: implement f")
    """
    blocks = find_blocks(source, path)
    if not blocks:
        raise NoMarkers(
            f"{path}: no '# {BEGIN}' markers, so there is no stub to make from it. Put "
            f"'# {BEGIN}: <the TODO text>' and '# {END}' around the answer inside each "
            "function the student writes, and around solution-only imports and helpers "
            "(see grader/course/stubs.py)"
        )
    lines = source.splitlines(keepends=True)
    out: list[str] = []
    pos = 0  # index of the next line of `lines` to copy
    for b in blocks:
        out += lines[pos : b.begin - 1]
        pos = b.end
        if b.function is not None:
            out.append(f"{b.indent}# TODO({lab_id}): {b.todo}\n")
            out.append(f'{b.indent}raise NotImplementedError("{lab_id}: implement {b.function}")\n')
            continue
        after = 0
        while pos + after < len(lines) and not lines[pos + after].strip():
            after += 1
        before = 0
        while before < len(out) and not out[-1 - before].strip():
            before += 1
        del out[len(out) - before :]
        out += ["\n"] * (max(before, after) if out and pos + after < len(lines) else 0)
        pos += after
    out += lines[pos:]
    stub = "".join(out)
    try:
        ast.parse(stub)
    except SyntaxError as e:
        raise StubError(f"{path}: the stub made from it is not valid Python: {e}") from None
    return stub


def stub_for(info: LabInfo) -> str:
    """The stub generated from the lab's reference solution (see `make_stub`)."""
    source = info.solution.read_text(encoding="utf-8")
    return make_stub(source, info.id, _shown(info.solution))


def _shown(path: Path) -> str:
    """`path` relative to the current folder when it is inside it (shorter messages)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@dataclass
class Sync:
    """What `sync_stubs` found: stub files that differ (or were rewritten), solutions
    without markers (not one source yet: skipped), and solutions with bad markers."""

    changes: list[str]
    unmarked: list[str]
    errors: list[str]


def sync_stubs(infos: Sequence[LabInfo], *, write: bool) -> Sync:
    """Compare (or with `write`, rewrite) each lab's generated files with its solution's."""
    found = Sync([], [], [])
    for info in infos:
        try:
            stub = stub_for(info)
        except NoMarkers as e:
            found.unmarked.append(f"{info.id}: {e}")
            continue
        except StubError as e:
            found.errors += [f"{info.id}: {line}" for line in str(e).splitlines()]
            continue
        for name in STUB_FILES:
            target = info.dir / name
            current = target.read_text(encoding="utf-8") if target.is_file() else None
            if current == stub:
                continue
            found.changes.append(f"{'wrote' if write else 'differs'}: {_shown(target)}")
            if write:
                target.write_text(stub, encoding="utf-8")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m grader.course.stubs [--check] [LAB ...]``; returns the exit status.

    Without ``--check`` the stubs are written. A solution without markers is skipped with
    a message on stderr (its stub stays as committed). Exit status: 0 when every marked
    solution's stubs are (now) generated; 1 when ``--check`` found a difference or a
    solution's markers are bad; 2 for an unknown lab.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    names = [a for a in args if a != "--check"]
    try:
        infos = [resolve_lab(n) for n in names] if names else all_labs()
    except UnknownLab as e:
        print(e, file=sys.stderr)
        return 2
    infos = [i for i in infos if i.solution.is_file()]
    found = sync_stubs(infos, write=not check)
    for line in found.changes:
        print(line)
    for line in found.unmarked:
        print(f"skipped: {line}", file=sys.stderr)
    for line in found.errors:
        print(f"refused: {line}", file=sys.stderr)
    if not found.changes and not found.errors:
        n = len(infos) - len(found.unmarked)
        print(f"{n} lab(s): every stub is the one generated from its solution")
    return 1 if found.errors or (check and found.changes) else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What is taken from a submission: each lab's ``labs/labNN/student.py``, and nothing else.

A submission is a directory or a ``.zip``; either may have one top-level folder around
``labs/``. When one lab is graded, a folder that holds just a ``student.py`` (a per-lab
upload, as Gradescope unpacks it) is that lab's file. Everything a submission may also
carry, a changed ``verify.py``, a patched ``framework/``, a ``conftest.py``, solutions, is
never read: grading uses the instructor's pristine course.

A submission is hostile data, read through two bounded readers: a folder through
`grader.grade.safe_read.Root` (the path given is followed once; below it, no symbolic link
is ever followed, only regular files are opened, every read is bounded: `MAX_FILE` for a
student.py, `MAX_LIST` entries when a folder is looked through), a zip through
`grader.grade.zipread.open_zip` (its directory bounded before `zipfile` reads it). With a
``deadline`` (a `time.monotonic` value), `read_submission` checks it between files and git
objects and gives up with a `SubmissionError` once it has passed. This module decides which
files are taken and decodes them; it reads no byte itself but through those readers.

A git checkout (a folder with ``.git``) is graded as committed: each file is the blob at
HEAD, read from ``.git`` by `grader.grade.gitread` (git is never run: a student controls
its configuration), and `Taken.commit` names that commit. A lab whose working file differs
from HEAD's (changed, or only in one of the two) is listed in `Taken.dirty`; HEAD's version
is still the one graded. With a deadline (``due``), the commit graded is the newest
first-parent commit at or before it, or HEAD with ``latest`` (`grader.grade.gitread`), and
`Taken.date` and `Taken.late` say when it and the later commits were made; a checkout with
no commit on time has `Taken.on_time` false and, without ``latest``, no file taken.
When HEAD cannot be read (no HEAD, a link or FIFO in ``.git``, a
missing or damaged object, a shallow clone, a ``gitdir:`` outside the submission),
the working tree is graded instead and `Taken.note` says so and why; `Taken.commit` then
keeps what HEAD names if that much was read ("" otherwise).

Refused, with a `SubmissionError` that names the reason: a path that does not exist, cannot
be read (a loop of links, permission denied, a name too long) or is neither a folder nor a
zip; a zip that `grader.grade.zipread` refuses (damaged, absolute or ``..`` paths, symbolic
links, more entries or bytes than a course could have), or that has ``labs/`` under several
folders. A lab's file that is a symbolic link, not a regular file, larger than `MAX_FILE`,
not UTF-8, or (in a zip) encrypted or compressed in a way that cannot be read is not taken;
the lab says why (`Taken.problems`). A lab without a file is simply missing.
"""

from __future__ import annotations

import ast
import errno
import functools
import os
import re
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader.errors import GraderError
from grader.grade.gitread import Commit, GitError, Refused, read_head
from grader.grade.safe_read import Root, same_file
from grader.grade.zipread import ZipError, open_zip
from grader.i18n import Text, tr

__all__ = [
    "MAX_FILE",
    "SubmissionError",
    "Taken",
    "function_lines",
    "read_submission",
    "student_path",
]


MAX_FILE = 1024 * 1024  # bytes of one student.py
MAX_LIST = 10_000  # entries of a folder looked through for labs/


class SubmissionError(GraderError, ValueError):
    """A submission that cannot be graded at all (the message says why, in English;
    `text` in both languages)."""

    def __init__(self, text: Text) -> None:
        super().__init__(text.en)
        self.text = text


@dataclass
class Taken:
    """The files taken from one submission.

    Attributes:
        name: the submission's name (folder or zip name without ``.zip``).
        source: the path it was read from.
        kind: ``"dir"``, ``"git"`` or ``"zip"``.
        commit: the commit HEAD names in a git checkout ("" otherwise, or if unknown).
        files: lab id → the text of its student.py (at HEAD, in a git checkout).
        problems: lab id → why its file was not taken (Chinese and English).
        dirty: lab ids whose working file differs from HEAD's (a git checkout whose HEAD
            was read; [] otherwise).
        note: set when a git checkout's HEAD could not be read, so that its working tree
            was graded instead: why.
        date: with a deadline, the graded commit and its committer time (None otherwise).
        late: with a deadline, the commits after it, newest first.
        on_time: with a deadline, False when no commit is at or before it.
    """

    name: str
    source: str
    kind: str
    commit: str = ""
    files: dict[str, str] = field(default_factory=dict)
    problems: dict[str, Text] = field(default_factory=dict)
    dirty: list[str] = field(default_factory=list)
    note: Text | None = None
    date: Commit | None = None
    late: list[Commit] = field(default_factory=list)
    on_time: bool = True

    @functools.cached_property
    def functions(self) -> dict[str, dict[str, int]]:
        """lab id → `function_lines` of its file: parsed once, not at every report."""
        return {lab: function_lines(text) for lab, text in self.files.items()}


def student_path(lab_id: str) -> str:
    """Where a lab's file sits in a submission: ``labs/lab04/student.py``."""
    return f"labs/{lab_id}/student.py"


class _Clock:
    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.seconds = 0.0 if deadline is None else max(0.0, deadline - time.monotonic())

    def tick(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            s = f"{self.seconds:.1f}"
            raise SubmissionError(
                tr(f"读取这份提交用了超过 {s} 秒", f"reading the submission took more than {s} s")
            )


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SubmissionError(
            tr(
                f"{where} 不是 UTF-8 文本（第 {e.start} 个字节：{e.reason}）",
                f"{where} is not UTF-8 text ({e.reason} at byte {e.start})",
            )
        ) from e


def _take(taken: Taken, lab_id: str, got: bytes | Text | None, where: str) -> None:
    """Record what was read for `lab_id`: its text, why it is not taken, or nothing."""
    if isinstance(got, Text):
        taken.problems[lab_id] = got
    elif got is not None:
        try:
            taken.files[lab_id] = _decode(got, where)
        except SubmissionError as e:
            taken.problems[lab_id] = e.text


def _work_file(root: Root, rel: str) -> bytes | Text | None:
    """The bytes of `rel` in the folder, why it is not taken, or None when it is absent."""
    try:
        return root.read(rel, MAX_FILE)
    except Refused as e:
        return e.text


def _course_folder(root: Root) -> str:
    """ "" or the one subfolder (``"repo-main/"``) that holds ``labs/`` when the root has
    none (an unpacked zip of a repository); a root of more than `MAX_LIST` entries is not
    looked through."""
    if root.kind("labs") is not None:
        return ""
    try:
        names = root.names("", MAX_LIST)
        inner = [n for n in names if root.kind(n) == "dir" and root.kind(f"{n}/labs")]
    except Refused:
        return ""
    return inner[0] + "/" if len(inner) == 1 else ""


def _differs(work: bytes | Text | None, head: bytes | Text | None) -> bool:
    """Whether a working file differs from HEAD's (two files not taken count as alike)."""
    if isinstance(work, bytes) or isinstance(head, bytes):
        return work != head
    return (work is None) != (head is None)


def _from_dir(
    root: Root, path: Path, lab_ids: Sequence[str], due: int | None = None, latest: bool = False
) -> Taken:
    kind = "git" if root.kind(".git") is not None else "dir"
    taken = Taken(os.path.basename(root.real) or str(path), str(path), kind)
    prefix = _course_folder(root)
    rels = {lab_id: prefix + student_path(lab_id) for lab_id in lab_ids}
    work = {lab_id: _work_file(root, rel) for lab_id, rel in rels.items()}
    head: dict[str, bytes | Text | None] | None = None
    if kind == "git":
        lone = ["student.py"] if len(lab_ids) == 1 else []
        try:
            found = read_head(root, [*rels.values(), *lone], MAX_FILE, before=due, latest=latest)
            taken.commit, head = found.commit, found.files
            taken.date, taken.late, taken.on_time = found.date, found.late, found.on_time
        except GitError as e:
            taken.commit = e.commit
            taken.note = tr(
                f"无法读取 HEAD 提交（{e.text.zh}），所以评分用的是工作区里的文件",
                f"the HEAD commit could not be read ({e.text.en}), so the working tree was graded",
            )
    if len(lab_ids) == 1:  # a per-lab upload: just its student.py
        lab_id = lab_ids[0]
        if work[lab_id] is None and (head is None or head[rels[lab_id]] is None):
            rels[lab_id] = "student.py"
            work[lab_id] = _work_file(root, "student.py")
    for lab_id in lab_ids:
        root.tick()
        got = work[lab_id] if head is None else head[rels[lab_id]]
        if head is not None and _differs(work[lab_id], got):
            taken.dirty.append(lab_id)
        _take(taken, lab_id, got, rels[lab_id])
    return taken


def _from_zip(fd: int, path: Path, lab_ids: Sequence[str], clock: _Clock) -> Taken:
    where = path.name
    taken = Taken(path.name.removesuffix(".zip"), str(path), "zip")
    try:
        with open_zip(fd, path, clock.tick) as zipped:
            prefixes = {
                n.split("labs/", 1)[0]
                for n in zipped.entries
                if re.fullmatch(r"(?:[^/]+/)?labs/lab\d\d/student\.py", n)
            }
            if len(prefixes) > 1:
                found = ", ".join(sorted(p or "(top)" for p in prefixes))
                raise SubmissionError(
                    tr(
                        f"{where}：好几个文件夹下都有 labs/：{found}",
                        f"{where}: labs/ appears under several folders: {found}",
                    )
                )
            prefix = next(iter(prefixes), "")
            paths = {lab_id: prefix + student_path(lab_id) for lab_id in lab_ids}
            if len(lab_ids) == 1 and not prefixes and "student.py" in zipped.entries:
                paths[lab_ids[0]] = "student.py"  # a per-lab upload: just the file
            for lab_id in lab_ids:
                clock.tick()
                if paths[lab_id] in zipped.entries:
                    rel = student_path(lab_id)
                    _take(taken, lab_id, zipped.read(paths[lab_id], rel, MAX_FILE), rel)
    except ZipError as e:
        raise SubmissionError(e.text) from None
    return taken


def _open_submission(path: Path) -> tuple[int, bool]:
    """A descriptor of the submission (the path itself may be a link) and whether it is a
    folder."""
    st: os.stat_result | None = None
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
            flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
            fd = os.open(path, flags | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise SubmissionError(
            tr(f"{path}：没有这个文件或文件夹", f"{path}: no such file or folder")
        ) from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise SubmissionError(
                tr(f"{path}：符号链接循环", f"{path}: a loop of symbolic links")
            ) from None
        why = e.strerror or type(e).__name__
        raise SubmissionError(
            tr(f"{path}：无法读取（{why}）", f"{path}: cannot be read ({why})")
        ) from None
    except ValueError as e:  # a NUL in the path
        raise SubmissionError(
            tr(f"{path!r}：无法读取（{e}）", f"{path!r}: cannot be read ({e})")
        ) from None
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        raise SubmissionError(
            tr(f"{path}：既不是文件夹也不是 zip 文件", f"{path}: neither a folder nor a zip file")
        )
    try:
        same_file(fd, st, str(path))
    except Refused as e:
        os.close(fd)
        raise SubmissionError(e.text) from None
    return fd, stat.S_ISDIR(st.st_mode)


def read_submission(
    path: Path,
    lab_ids: Sequence[str],
    *,
    deadline: float | None = None,
    due: int | None = None,
    latest: bool = False,
) -> Taken:
    """Take the labs' student.py files from a directory, git checkout or zip.

    Args:
        path: the submission.
        lab_ids: the labs graded (``"lab04"``).
        deadline: a `time.monotonic` value after which reading gives up.
        due: the submission deadline, seconds since the epoch: a git checkout is read at
            its newest commit on time (see the module docstring).
        latest: with `due`, read HEAD still (the later commits are listed all the same).

    Raises:
        SubmissionError: see the module docstring.
    """
    clock = _Clock(deadline)
    clock.tick()
    fd, is_dir = _open_submission(path)
    try:
        if not is_dir:
            return _from_zip(fd, path, lab_ids, clock)
        try:
            root = Root(fd, os.fspath(path), clock.tick)
            return _from_dir(root, path, lab_ids, due, latest)
        except Refused as e:
            raise SubmissionError(e.text) from None
    finally:
        os.close(fd)


def function_lines(source: str) -> dict[str, int]:
    """{name: line of its ``def``} for the top-level functions of a student's file ({} if
    it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    return {n.name: n.lineno for n in tree.body if isinstance(n, kinds)}

"""What is taken from a submission: each lab's ``labs/labNN/student.py``, and nothing else.

A submission is a directory (a git checkout is one: its commit is read from ``.git``
without running git, whose configuration a student controls) or a ``.zip``; either may
have one top-level folder around ``labs/``. When one lab is graded, a folder that holds
just a ``student.py`` (a per-lab upload, as Gradescope unpacks it) is that lab's file.
Everything a submission may also carry, a changed ``verify.py``, a patched ``framework/``,
a ``conftest.py``, solutions, is never read: grading uses the instructor's pristine course.

Refused, with a `SubmissionError` that names the reason: a path that does not exist or is
neither a folder nor a zip; a zip that is damaged, has absolute or ``..`` paths, symbolic
links, or more entries or bytes than a course could have. A lab's file that is a symbolic
link, not a regular file, larger than `MAX_FILE`, or not UTF-8 is not taken; the lab says
why (`Taken.problems`). A lab without a file is simply missing.
"""

from __future__ import annotations

import ast
import os
import re
import stat
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

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
MAX_ENTRIES = 20_000  # entries of a zip
MAX_ZIP_BYTES = 512 * 1024 * 1024  # uncompressed bytes a zip may claim in all


class SubmissionError(ValueError):
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
        commit: the checked-out commit of a git checkout ("" otherwise).
        files: lab id → the text of its student.py.
        problems: lab id → why its file was not taken (Chinese and English).
    """

    name: str
    source: str
    kind: str
    commit: str = ""
    files: dict[str, str] = field(default_factory=dict)
    problems: dict[str, Text] = field(default_factory=dict)


def student_path(lab_id: str) -> str:
    """Where a lab's file sits in a submission: ``labs/lab04/student.py``."""
    return f"labs/{lab_id}/student.py"


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


def _read_dir_file(root: Path, lab_id: str) -> str | None:
    """The lab's file under `root`, or None when there is none.

    Raises:
        SubmissionError: the file (or a folder on its way) is a link or not regular.
    """
    rel = student_path(lab_id)
    path = root
    for part in PurePosixPath(rel).parts:
        path = path / part
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode):
            link = path.relative_to(root)
            raise SubmissionError(
                tr(f"{rel}：{link} 是符号链接", f"{rel}: {link} is a symbolic link")
            )
    if not stat.S_ISREG(st.st_mode):
        raise SubmissionError(tr(f"{rel} 不是普通文件", f"{rel} is not a regular file"))
    if st.st_size > MAX_FILE:
        raise SubmissionError(
            tr(
                f"{rel} 有 {st.st_size} 字节，超过 {MAX_FILE}",
                f"{rel} has {st.st_size} bytes, more than {MAX_FILE}",
            )
        )
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        data = os.read(fd, MAX_FILE + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE:
        raise SubmissionError(
            tr(f"{rel} 超过 {MAX_FILE} 字节", f"{rel} has more than {MAX_FILE} bytes")
        )
    return _decode(data, rel)


def _git_commit(root: Path) -> str:
    """The commit a checkout's HEAD names, read from ``.git`` by hand ("" if unknown)."""
    git = root / ".git"
    try:
        if git.is_file() and not git.is_symlink():
            line = git.read_text(encoding="utf-8", errors="replace")[:4096].strip()
            if not line.startswith("gitdir:"):
                return ""
            git = (root / line.removeprefix("gitdir:").strip()).resolve()
        head = (git / "HEAD").read_text(encoding="utf-8", errors="replace")[:4096].strip()
        if not head.startswith("ref:"):
            return head if re.fullmatch(r"[0-9a-f]{40,64}", head) else ""
        ref = head.removeprefix("ref:").strip()
        if not re.fullmatch(r"refs/[A-Za-z0-9._/-]+", ref) or ".." in ref:
            return ""
        bases = [git]
        common = git / "commondir"  # a linked worktree keeps its refs in the main .git
        if common.is_file():
            bases.append((git / common.read_text(encoding="utf-8")[:4096].strip()).resolve())
        for base in bases:
            path = base / ref
            if path.is_file():
                value = path.read_text(encoding="utf-8", errors="replace")[:100].strip()
                return value if re.fullmatch(r"[0-9a-f]{40,64}", value) else ""
        packed = bases[-1] / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
                sha, _, name = line.partition(" ")
                if name.strip() == ref and re.fullmatch(r"[0-9a-f]{40,64}", sha):
                    return sha
    except OSError:
        return ""
    return ""


def _course_folder(root: Path) -> Path:
    """`root`, or its one subfolder that holds ``labs/`` when `root` has none (an unpacked
    zip of a repository: ``repo-main/labs/...``)."""
    if os.path.lexists(root / "labs"):
        return root
    try:
        subs = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return root
    inner = [p for p in subs if os.path.lexists(p / "labs")]
    return inner[0] if len(inner) == 1 else root


def _from_dir(root: Path, lab_ids: Sequence[str]) -> Taken:
    kind = "git" if (root / ".git").exists() else "dir"
    taken = Taken(root.resolve().name or str(root), str(root), kind)
    if kind == "git":
        taken.commit = _git_commit(root)
    base = _course_folder(root)
    for lab_id in lab_ids:
        try:
            text = _read_dir_file(base, lab_id)
        except SubmissionError as e:
            taken.problems[lab_id] = e.text
            continue
        if text is not None:
            taken.files[lab_id] = text
    if len(lab_ids) == 1 and not taken.files and not taken.problems:
        _single_file(root, lab_ids[0], taken)
    return taken


def _single_file(root: Path, lab_id: str, taken: Taken) -> None:
    """One lab graded, and the submission is just its ``student.py`` (a per-lab upload)."""
    path = root / "student.py"
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE:
        taken.problems[lab_id] = tr(
            f"student.py 不是不超过 {MAX_FILE} 字节的普通文件",
            f"student.py is not a regular file of at most {MAX_FILE} bytes",
        )
        return
    try:
        taken.files[lab_id] = _decode(path.read_bytes()[: MAX_FILE + 1], "student.py")
    except SubmissionError as e:
        taken.problems[lab_id] = e.text


def _zip_entries(zf: zipfile.ZipFile, where: str) -> dict[str, zipfile.ZipInfo]:
    infos = zf.infolist()
    if len(infos) > MAX_ENTRIES:
        raise SubmissionError(
            tr(
                f"{where}：有 {len(infos)} 个条目，超过 {MAX_ENTRIES}",
                f"{where}: {len(infos)} entries, more than {MAX_ENTRIES}",
            )
        )
    if sum(i.file_size for i in infos) > MAX_ZIP_BYTES:
        raise SubmissionError(
            tr(
                f"{where}：解压后超过 {MAX_ZIP_BYTES} 字节",
                f"{where}: more than {MAX_ZIP_BYTES} bytes once unpacked",
            )
        )
    entries: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename
        parts = PurePosixPath(name.replace("\\", "/")).parts
        if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or ".." in parts:
            raise SubmissionError(
                tr(
                    f"{where}：拒绝：条目 {name!r} 指向 zip 之外",
                    f"{where}: refused: the entry {name!r} points outside the zip",
                )
            )
        if stat.S_ISLNK(info.external_attr >> 16):
            raise SubmissionError(
                tr(
                    f"{where}：拒绝：条目 {name!r} 是符号链接",
                    f"{where}: refused: the entry {name!r} is a symbolic link",
                )
            )
        entries["/".join(parts)] = info
    return entries


def _from_zip(path: Path, lab_ids: Sequence[str]) -> Taken:
    where = path.name
    taken = Taken(path.name.removesuffix(".zip"), str(path), "zip")
    try:
        with zipfile.ZipFile(path) as zf:
            entries = _zip_entries(zf, where)
            prefixes = {
                n.split("labs/", 1)[0]
                for n in entries
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
            if len(lab_ids) == 1 and not prefixes and "student.py" in entries:
                paths[lab_ids[0]] = "student.py"  # a per-lab upload: just the file
            for lab_id in lab_ids:
                info = entries.get(paths[lab_id])
                if info is None:
                    continue
                if info.is_dir() or info.file_size > MAX_FILE:
                    where_lab = student_path(lab_id)
                    taken.problems[lab_id] = tr(
                        f"{where_lab} 不是不超过 {MAX_FILE} 字节的文件",
                        f"{where_lab} is not a file of at most {MAX_FILE} bytes",
                    )
                    continue
                with zf.open(info) as f:
                    data = f.read(MAX_FILE + 1)
                try:
                    taken.files[lab_id] = _decode(data[: MAX_FILE + 1], student_path(lab_id))
                except SubmissionError as e:
                    taken.problems[lab_id] = e.text
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as e:
        raise SubmissionError(
            tr(f"{where}：无法读取的 zip 文件（{e}）", f"{where}: not a readable zip file ({e})")
        ) from None
    return taken


def read_submission(path: Path, lab_ids: Sequence[str]) -> Taken:
    """Take the labs' student.py files from a directory, git checkout or zip.

    Raises:
        SubmissionError: see the module docstring.
    """
    if path.is_dir():
        return _from_dir(path, lab_ids)
    if path.is_file() and zipfile.is_zipfile(path):
        return _from_zip(path, lab_ids)
    if not path.exists():
        raise SubmissionError(
            tr(f"{path}：没有这个文件或文件夹", f"{path}: no such file or folder")
        )
    raise SubmissionError(
        tr(f"{path}：既不是文件夹也不是 zip 文件", f"{path}: neither a folder nor a zip file")
    )


def function_lines(source: str) -> dict[str, int]:
    """{name: line of its ``def``} for the top-level functions of a student's file ({} if
    it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    return {n.name: n.lineno for n in tree.body if isinstance(n, kinds)}

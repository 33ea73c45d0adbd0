"""What is taken from a submission: each lab's ``labs/labNN/student.py``, and nothing else.

A submission is a directory or a ``.zip``; either may have one top-level folder around
``labs/``. When one lab is graded, a folder that holds just a ``student.py`` (a per-lab
upload, as Gradescope unpacks it) is that lab's file. Everything a submission may also
carry, a changed ``verify.py``, a patched ``framework/``, a ``conftest.py``, solutions, is
never read: grading uses the instructor's pristine course.

A submission is hostile data. The path given is followed once; below it, no symbolic link
is ever followed (each folder is opened with ``O_NOFOLLOW`` relative to its parent's
descriptor), only regular files are opened (``O_NONBLOCK``, so a FIFO cannot hang us), and
every read is bounded: `MAX_FILE` for a student.py, `MAX_LIST` entries when a folder is
looked through. With a ``deadline`` (a `time.monotonic` value), `read_submission` checks it
between files and git objects and gives up with a `SubmissionError` once it has passed.

A git checkout (a folder with ``.git``) is graded as committed: each file is the blob at
HEAD, read from ``.git`` by `grader.grade.gitread` (git is never run: a student controls
its configuration), and `Taken.commit` names that commit. A lab whose working file differs
from HEAD's (changed, or only in one of the two) is listed in `Taken.dirty`; HEAD's version
is still the one graded. When HEAD cannot be read (no HEAD, a link or FIFO in ``.git``, a
missing or damaged object, a shallow clone, a ``gitdir:`` outside the submission),
the working tree is graded instead and `Taken.note` says so and why; `Taken.commit` then
keeps what HEAD names if that much was read ("" otherwise).

Refused, with a `SubmissionError` that names the reason: a path that does not exist, cannot
be read (a loop of links, permission denied, a name too long) or is neither a folder nor a
zip; a zip that is damaged, has absolute or ``..`` paths, symbolic links, or more entries
or bytes than a course could have (its end-of-central-directory record is checked before
the central directory is read). A lab's file that is a symbolic link, not a regular file,
larger than `MAX_FILE`, not UTF-8, or (in a zip) encrypted or compressed in a way that
cannot be read is not taken; the lab says why (`Taken.problems`). A lab without a file is
simply missing.
"""

from __future__ import annotations

import ast
import errno
import os
import re
import stat
import struct
import time
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from grader.grade.gitread import GitError, Refused, read_head
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
MAX_CENTRAL = 16 * 1024 * 1024  # bytes of a zip's central directory
MAX_LIST = 10_000  # entries of a folder looked through for labs/
_ZIP_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_NOFOLLOW = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE = _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_DIR = _NOFOLLOW | getattr(os, "O_DIRECTORY", 0)


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
        commit: the commit HEAD names in a git checkout ("" otherwise, or if unknown).
        files: lab id → the text of its student.py (at HEAD, in a git checkout).
        problems: lab id → why its file was not taken (Chinese and English).
        dirty: lab ids whose working file differs from HEAD's (a git checkout whose HEAD
            was read; [] otherwise).
        note: set when a git checkout's HEAD could not be read, so that its working tree
            was graded instead: why.
    """

    name: str
    source: str
    kind: str
    commit: str = ""
    files: dict[str, str] = field(default_factory=dict)
    problems: dict[str, Text] = field(default_factory=dict)
    dirty: list[str] = field(default_factory=list)
    note: Text | None = None


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


@contextmanager
def _refusing(rel: str) -> Iterator[None]:
    """An OSError (or a NUL in a path) while reading `rel` as a `Refused`."""
    try:
        yield
    except SubmissionError:
        raise
    except (OSError, ValueError) as e:
        why = getattr(e, "strerror", None) or str(e)
        raise Refused(tr(f"{rel} 无法读取（{why}）", f"{rel} cannot be read ({why})")) from None


def _link(rel: str, where: str) -> Refused:
    if where == rel:
        return Refused(tr(f"{rel} 是符号链接", f"{rel} is a symbolic link"))
    return Refused(tr(f"{rel}：{where} 是符号链接", f"{rel}: {where} is a symbolic link"))


def _same(fd: int, st: os.stat_result, rel: str) -> None:
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino, stat.S_IFMT(now.st_mode)) != (
        st.st_dev,
        st.st_ino,
        stat.S_IFMT(st.st_mode),
    ):
        raise Refused(tr(f"{rel} 在读取时被换掉了", f"{rel} was replaced while being read"))


class _Root:
    """A submission folder open as `fd`: every path is relative to it, no link is
    followed, only regular files are opened, each call checks the deadline first (the
    `grader.grade.gitread.Files` that the git reader reads through)."""

    def __init__(self, fd: int, path: str, clock: _Clock) -> None:
        self.fd, self.real, self.tick = fd, os.path.realpath(path), clock.tick

    def _parent(self, rel: str) -> tuple[int, str] | None:
        """A descriptor of the folder `rel` is in (the caller closes it) and its last
        name; None when a folder on the way is missing or not a folder."""
        parts = [p for p in rel.split("/") if p not in ("", ".")]
        if not parts or ".." in parts:
            raise Refused(tr(f"{rel} 指向提交之外", f"{rel} points outside the submission"))
        fd = os.dup(self.fd)
        try:
            for i, part in enumerate(parts[:-1]):
                st = self._lstat(fd, part, rel, "/".join(parts[: i + 1]))
                if st is None or not stat.S_ISDIR(st.st_mode):
                    os.close(fd)
                    return None
                sub = os.open(part, _DIR, dir_fd=fd)
                os.close(fd)
                fd = sub
                _same(fd, st, rel)
        except BaseException:
            os.close(fd)
            raise
        return fd, parts[-1]

    @staticmethod
    def _lstat(fd: int, name: str, rel: str, where: str) -> os.stat_result | None:
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(st.st_mode):
            raise _link(rel, where)
        return st

    def kind(self, rel: str) -> str | None:
        """What `rel` is: "dir", "file", "link", "other", or None when it is absent."""
        self.tick()
        with _refusing(rel):
            found = self._parent(rel)
            if found is None:
                return None
            fd, name = found
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except (FileNotFoundError, NotADirectoryError):
                return None
            finally:
                os.close(fd)
        kinds = ((stat.S_ISDIR, "dir"), (stat.S_ISREG, "file"), (stat.S_ISLNK, "link"))
        return next((k for test, k in kinds if test(mode)), "other")

    def open(self, rel: str) -> int | None:
        """A read-only descriptor of the regular file `rel`, None when it is absent.

        Raises:
            Refused: a link on the way, or not a regular file.
        """
        self.tick()
        with _refusing(rel):
            found = self._parent(rel)
            if found is None:
                return None
            parent, name = found
            try:
                st = self._lstat(parent, name, rel, rel)
                if st is None:
                    return None
                if not stat.S_ISREG(st.st_mode):
                    raise Refused(tr(f"{rel} 不是普通文件", f"{rel} is not a regular file"))
                fd = os.open(name, _FILE, dir_fd=parent)
            finally:
                os.close(parent)
            try:
                _same(fd, st, rel)
            except BaseException:
                os.close(fd)
                raise
            return fd

    def read(self, rel: str, limit: int) -> bytes | None:
        """The bytes of the regular file `rel`, None when it is absent.

        Raises:
            Refused: a link on the way, not a regular file, or more than `limit` bytes.
        """
        fd = self.open(rel)
        if fd is None:
            return None
        with _refusing(rel):
            try:
                size = os.fstat(fd).st_size
                if size > limit:
                    raise Refused(
                        tr(
                            f"{rel} 有 {size} 字节，超过 {limit}",
                            f"{rel} has {size} bytes, more than {limit}",
                        )
                    )
                chunks, got = [], 0
                while got <= limit:
                    chunk = os.read(fd, min(1 << 20, limit + 1 - got))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    got += len(chunk)
            finally:
                os.close(fd)
        if got > limit:
            raise Refused(tr(f"{rel} 超过 {limit} 字节", f"{rel} has more than {limit} bytes"))
        return b"".join(chunks)

    def names(self, rel: str, limit: int) -> list[str]:
        """The names in the folder `rel` ("" for the root), [] when it is absent.

        Raises:
            Refused: more than `limit` entries, or a link on the way.
        """
        self.tick()
        where = rel or "."
        with _refusing(where):
            if rel in ("", "."):
                fd = os.dup(self.fd)
            else:
                found = self._parent(rel)
                if found is None:
                    return []
                parent, name = found
                try:
                    st = self._lstat(parent, name, rel, rel)
                    if st is None or not stat.S_ISDIR(st.st_mode):
                        return []
                    fd = os.open(name, _DIR, dir_fd=parent)
                finally:
                    os.close(parent)
            names: list[str] = []
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        if len(names) >= limit:
                            raise Refused(
                                tr(
                                    f"{where} 有超过 {limit} 个条目",
                                    f"{where} has more than {limit} entries",
                                )
                            )
                        names.append(entry.name)
            finally:
                os.close(fd)
        return names


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


def _work_file(root: _Root, rel: str) -> bytes | Text | None:
    """The bytes of `rel` in the folder, why it is not taken, or None when it is absent."""
    try:
        return root.read(rel, MAX_FILE)
    except Refused as e:
        return e.text


def _course_folder(root: _Root) -> str:
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


def _from_dir(root: _Root, path: Path, lab_ids: Sequence[str]) -> Taken:
    kind = "git" if root.kind(".git") is not None else "dir"
    taken = Taken(os.path.basename(root.real) or str(path), str(path), kind)
    prefix = _course_folder(root)
    rels = {lab_id: prefix + student_path(lab_id) for lab_id in lab_ids}
    work = {lab_id: _work_file(root, rel) for lab_id, rel in rels.items()}
    head: dict[str, bytes | Text | None] | None = None
    if kind == "git":
        lone = ["student.py"] if len(lab_ids) == 1 else []
        try:
            found = read_head(root, [*rels.values(), *lone], MAX_FILE)
            taken.commit, head = found.commit, found.files
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
        if isinstance(got, Text):
            taken.problems[lab_id] = got
        elif got is not None:
            try:
                taken.files[lab_id] = _decode(got, rels[lab_id])
            except SubmissionError as e:
                taken.problems[lab_id] = e.text
    return taken


def _zip_refuse(where: str, zh: str, en: str) -> SubmissionError:
    return SubmissionError(tr(f"{where}：{zh}", f"{where}: {en}"))


def _zip_end(f: BinaryIO, where: str) -> bool:
    """Whether `f` ends as a zip does (as `zipfile` finds its end). Before `zipfile` reads
    the central directory, refuses one whose end-of-central-directory record (zip64's, if
    there is one) claims more than `MAX_ENTRIES` entries or `MAX_CENTRAL` bytes, or whose
    central directory holds more than `MAX_ENTRIES` entries whatever the record says."""
    size = f.seek(0, os.SEEK_END)
    start = max(0, size - 22 - 65535)
    f.seek(start)
    tail = f.read(size - start)
    at = len(tail) - 22
    if not (at >= 0 and tail[at : at + 4] == b"PK\x05\x06" and tail[-2:] == b"\0\0"):
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < 22:
            return False
    count, central = struct.unpack("<HI", tail[at + 10 : at + 16])
    end = start + at  # where the central directory ends
    if end >= 76:
        f.seek(end - 76)
        record, locator = f.read(56), f.read(20)
        if locator[:4] == b"PK\x06\x07" and record[:4] == b"PK\x06\x06":
            count, central = struct.unpack("<QQ", record[32:48])
            end -= 76
    if count > MAX_ENTRIES:
        raise _zip_refuse(
            where,
            f"有 {count} 个条目，超过 {MAX_ENTRIES}",
            f"{count} entries, more than {MAX_ENTRIES}",
        )
    if central > MAX_CENTRAL:
        raise _zip_refuse(
            where,
            f"中央目录有 {central} 字节，超过 {MAX_CENTRAL}",
            f"a central directory of {central} bytes, more than {MAX_CENTRAL}",
        )
    if central <= end:  # else zipfile says the zip is damaged
        f.seek(end - central)
        data, i, n = f.read(central), 0, 0
        while i + 46 <= len(data) and data[i : i + 4] == b"PK\x01\x02":
            n += 1
            if n > MAX_ENTRIES:
                raise _zip_refuse(
                    where, f"有超过 {MAX_ENTRIES} 个条目", f"more than {MAX_ENTRIES} entries"
                )
            name, extra, comment = struct.unpack("<3H", data[i + 28 : i + 34])
            i += 46 + name + extra + comment
    return True


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


def _zip_file(zf: zipfile.ZipFile, info: zipfile.ZipInfo, rel: str) -> bytes | Text:
    """The bytes of one zip entry, or why it cannot be taken."""
    name = info.filename
    if info.is_dir() or info.file_size > MAX_FILE:
        return tr(
            f"{rel} 不是不超过 {MAX_FILE} 字节的文件",
            f"{rel} is not a file of at most {MAX_FILE} bytes",
        )
    if info.flag_bits & 0x1:
        return tr(
            f"{rel}：zip 条目 {name!r} 已加密，无法读取",
            f"{rel}: the zip entry {name!r} is encrypted, so it cannot be read",
        )
    if info.compress_type not in _ZIP_METHODS:
        method = info.compress_type
        return tr(
            f"{rel}：zip 条目 {name!r} 用了不支持的压缩方法（{method}）",
            f"{rel}: the zip entry {name!r} uses an unsupported compression method ({method})",
        )
    try:
        with zf.open(info) as f:
            data = f.read(MAX_FILE + 1)
    except Exception as e:  # zlib.error, lzma.LZMAError, a bad CRC... : this entry only
        why = f"{type(e).__name__}: {e}"
        return tr(
            f"{rel}：zip 条目 {name!r} 无法读取（{why}）",
            f"{rel}: the zip entry {name!r} cannot be read ({why})",
        )
    if len(data) > MAX_FILE:
        return tr(f"{rel} 超过 {MAX_FILE} 字节", f"{rel} has more than {MAX_FILE} bytes")
    return data


def _from_zip(fd: int, path: Path, lab_ids: Sequence[str], clock: _Clock) -> Taken:
    where = path.name
    taken = Taken(path.name.removesuffix(".zip"), str(path), "zip")
    try:
        with open(fd, "rb", closefd=False) as raw:
            if not _zip_end(raw, where):
                raise SubmissionError(
                    tr(
                        f"{path}：既不是文件夹也不是 zip 文件",
                        f"{path}: neither a folder nor a zip file",
                    )
                )
            clock.tick()
            with zipfile.ZipFile(raw) as zf:
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
                    clock.tick()
                    info = entries.get(paths[lab_id])
                    if info is None:
                        continue
                    got = _zip_file(zf, info, student_path(lab_id))
                    if isinstance(got, Text):
                        taken.problems[lab_id] = got
                        continue
                    try:
                        taken.files[lab_id] = _decode(got, student_path(lab_id))
                    except SubmissionError as e:
                        taken.problems[lab_id] = e.text
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, struct.error) as e:
        raise SubmissionError(
            tr(f"{where}：无法读取的 zip 文件（{e}）", f"{where}: not a readable zip file ({e})")
        ) from None
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
        _same(fd, st, str(path))
    except Refused as e:
        os.close(fd)
        raise SubmissionError(e.text) from None
    return fd, stat.S_ISDIR(st.st_mode)


def read_submission(path: Path, lab_ids: Sequence[str], *, deadline: float | None = None) -> Taken:
    """Take the labs' student.py files from a directory, git checkout or zip.

    Args:
        path: the submission.
        lab_ids: the labs graded (``"lab04"``).
        deadline: a `time.monotonic` value after which reading gives up.

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
            return _from_dir(_Root(fd, os.fspath(path), clock), path, lab_ids)
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

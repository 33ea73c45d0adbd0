"""Reading a submission's folder as hostile data: no link followed, only regular files, bounded.

`Root` is a folder opened once, as a descriptor; every path below it is opened relative
to its parent folder's descriptor with ``O_NOFOLLOW``, so a symbolic link anywhere on the
way is refused rather than followed, and each folder is checked to be the one that was
looked at (`same_file`), so it cannot be swapped for a link in between. Only regular files
are opened (``O_NONBLOCK``: a FIFO cannot hang the reader); every read is bounded by the
caller's limit, and a folder is listed up to a number of entries. Each call first checks
the caller's deadline (`tick`, called before any error is converted, so what it raises
goes through unchanged). A path that is not read is a `grader.grade.gitread.Refused`
whose text says why: `Root` is the `gitread.Files` that the git reader reads through.

What this module does not do: decide which files a submission gives (that is
`grader.grade.submission`), or read a zip (`grader.grade.zipread`). The idea is the
``openat`` discipline of tools that walk untrusted trees (``rm -rf`` in coreutils,
systemd's ``chase``): resolve one name at a time, relative to a descriptor, never a path.

Example:
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = open(os.path.join(d, "a.txt"), "w").write("hi")
    ...     os.symlink("a.txt", os.path.join(d, "link"))
    ...     fd = os.open(d, os.O_RDONLY)
    ...     root = Root(fd, d, lambda: None)
    ...     print(root.read("a.txt", 10), root.kind("link"), root.read("missing", 10))
    ...     os.close(fd)
    b'hi' link None
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from grader.grade.gitread import Refused
from grader.i18n import tr

__all__ = ["Root", "same_file"]

_NOFOLLOW = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE = _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_DIR = _NOFOLLOW | getattr(os, "O_DIRECTORY", 0)


def same_file(fd: int, st: os.stat_result, rel: str) -> None:
    """Check that the open `fd` is the file `st` described (device, inode and kind).

    Raises:
        Refused: it was replaced between the look and the open.
    """
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino, stat.S_IFMT(now.st_mode)) != (
        st.st_dev,
        st.st_ino,
        stat.S_IFMT(st.st_mode),
    ):
        raise Refused(tr(f"{rel} 在读取时被换掉了", f"{rel} was replaced while being read"))


@contextmanager
def _refusing(rel: str) -> Iterator[None]:
    """An OSError (or a NUL in a path) while reading `rel` as a `Refused`."""
    try:
        yield
    except (OSError, ValueError) as e:
        why = getattr(e, "strerror", None) or str(e)
        raise Refused(tr(f"{rel} 无法读取（{why}）", f"{rel} cannot be read ({why})")) from None


def _link(rel: str, where: str) -> Refused:
    if where == rel:
        return Refused(tr(f"{rel} 是符号链接", f"{rel} is a symbolic link"))
    return Refused(tr(f"{rel}：{where} 是符号链接", f"{rel}: {where} is a symbolic link"))


class Root:
    """A folder open as `fd`: every path is relative to it, no link is followed, only
    regular files are opened, and each call runs `tick` first (a `gitread.Files`).

    Args:
        fd: a descriptor of the folder (the caller keeps and closes it).
        path: the path it was opened from (for its real path, `real`).
        tick: checks the deadline; raises what it likes, which goes through unchanged.
    """

    def __init__(self, fd: int, path: str, tick: Callable[[], None]) -> None:
        self.fd, self.real, self.tick = fd, os.path.realpath(path), tick

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
                same_file(fd, st, rel)
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
                same_file(fd, st, rel)
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

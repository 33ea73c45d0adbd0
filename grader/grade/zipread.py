"""Reading a submission's zip as hostile data: its directory bounded before `zipfile` sees it.

`open_zip` checks the end-of-central-directory record (zip64's, if there is one) before
`zipfile` reads the central directory: a record that claims more than `MAX_ENTRIES`
entries or `MAX_CENTRAL` bytes is refused at once, and so is a central directory that holds
more than `MAX_ENTRIES` entries whatever the record says. Then `zipfile` lists the entries,
and a zip is refused whose entries unpack to more than `MAX_ZIP_BYTES`, or that has an
absolute or ``..`` path or a symbolic link. `Zip.read` reads one entry, bounded; an entry
that is encrypted, compressed in a way that cannot be read, damaged or too big is not
taken, and the text says why. A refused zip is a `ZipError` whose text says why.

What this module does not do: decide which entries a submission gives (that is
`grader.grade.submission`, which also turns a `ZipError` into its `SubmissionError`) or
unpack anything to disk. The idea is that of a zip-bomb guard: bound what the archive's
own directory makes the reader allocate before the reader trusts it.

Example:
    >>> import tempfile
    >>> with tempfile.TemporaryFile() as f:
    ...     with zipfile.ZipFile(f, "w") as zf:
    ...         zf.writestr("top/a.txt", "hi")
    ...     with open_zip(f.fileno(), Path("s.zip"), lambda: None) as z:
    ...         print(list(z.entries), z.read("top/a.txt", "a.txt", 10))
    ['top/a.txt'] b'hi'
"""

from __future__ import annotations

import os
import re
import stat
import struct
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from grader.errors import GraderError
from grader.i18n import Text, tr

__all__ = ["MAX_CENTRAL", "MAX_ENTRIES", "MAX_ZIP_BYTES", "Zip", "ZipError", "open_zip"]

MAX_ENTRIES = 20_000  # entries of a zip
MAX_ZIP_BYTES = 512 * 1024 * 1024  # uncompressed bytes a zip may claim in all
MAX_CENTRAL = 16 * 1024 * 1024  # bytes of a zip's central directory
_ZIP_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}


class ZipError(GraderError):
    """A zip that is not read at all; `text` says why (in both languages)."""

    def __init__(self, text: Text) -> None:
        super().__init__(text.en)
        self.text = text


class Zip:
    """An open zip whose directory was checked: `entries` by their ``/``-separated name."""

    def __init__(self, zf: zipfile.ZipFile, entries: dict[str, zipfile.ZipInfo]) -> None:
        self.zf, self.entries = zf, entries

    def read(self, name: str, rel: str, limit: int) -> bytes | Text:
        """The bytes of the entry `name` (at most `limit`), or why it cannot be taken, for
        the file `rel` of the submission."""
        info = self.entries[name]
        name = info.filename
        if info.is_dir() or info.file_size > limit:
            return tr(
                f"{rel} 不是不超过 {limit} 字节的文件",
                f"{rel} is not a file of at most {limit} bytes",
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
            with self.zf.open(info) as f:
                data = f.read(limit + 1)
        except Exception as e:  # zlib.error, lzma.LZMAError, a bad CRC... : this entry only
            why = f"{type(e).__name__}: {e}"
            return tr(
                f"{rel}：zip 条目 {name!r} 无法读取（{why}）",
                f"{rel}: the zip entry {name!r} cannot be read ({why})",
            )
        if len(data) > limit:
            return tr(f"{rel} 超过 {limit} 字节", f"{rel} has more than {limit} bytes")
        return data


@contextmanager
def open_zip(fd: int, path: Path, tick: Callable[[], None]) -> Iterator[Zip]:
    """The zip open on `fd` (the caller keeps and closes it), its directory checked.

    Args:
        fd: a descriptor of the zip file.
        path: the path it was opened from (messages name its last part).
        tick: checks the deadline once the end record was read; what it raises goes
            through unchanged.

    Raises:
        ZipError: not a zip, or one refused (see the module docstring); an error of
            `zipfile` or of reading while the zip is open is one too.
    """
    where = path.name
    try:
        with open(fd, "rb", closefd=False) as raw:
            if not _zip_end(raw, where):
                raise ZipError(
                    tr(
                        f"{path}：既不是文件夹也不是 zip 文件",
                        f"{path}: neither a folder nor a zip file",
                    )
                )
            tick()
            with zipfile.ZipFile(raw) as zf:
                yield Zip(zf, _entries(zf, where))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, struct.error) as e:
        raise ZipError(
            tr(f"{where}：无法读取的 zip 文件（{e}）", f"{where}: not a readable zip file ({e})")
        ) from None


def _refuse(where: str, zh: str, en: str) -> ZipError:
    return ZipError(tr(f"{where}：{zh}", f"{where}: {en}"))


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
        raise _refuse(
            where,
            f"有 {count} 个条目，超过 {MAX_ENTRIES}",
            f"{count} entries, more than {MAX_ENTRIES}",
        )
    if central > MAX_CENTRAL:
        raise _refuse(
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
                raise _refuse(
                    where, f"有超过 {MAX_ENTRIES} 个条目", f"more than {MAX_ENTRIES} entries"
                )
            name, extra, comment = struct.unpack("<3H", data[i + 28 : i + 34])
            i += 46 + name + extra + comment
    return True


def _entries(zf: zipfile.ZipFile, where: str) -> dict[str, zipfile.ZipInfo]:
    infos = zf.infolist()
    if len(infos) > MAX_ENTRIES:
        raise _refuse(
            where,
            f"有 {len(infos)} 个条目，超过 {MAX_ENTRIES}",
            f"{len(infos)} entries, more than {MAX_ENTRIES}",
        )
    if sum(i.file_size for i in infos) > MAX_ZIP_BYTES:
        raise _refuse(
            where,
            f"解压后超过 {MAX_ZIP_BYTES} 字节",
            f"more than {MAX_ZIP_BYTES} bytes once unpacked",
        )
    entries: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename
        parts = PurePosixPath(name.replace("\\", "/")).parts
        if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or ".." in parts:
            raise _refuse(
                where,
                f"拒绝：条目 {name!r} 指向 zip 之外",
                f"refused: the entry {name!r} points outside the zip",
            )
        if stat.S_ISLNK(info.external_attr >> 16):
            raise _refuse(
                where,
                f"拒绝：条目 {name!r} 是符号链接",
                f"refused: the entry {name!r} is a symbolic link",
            )
        entries["/".join(parts)] = info
    return entries

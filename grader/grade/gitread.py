"""Read files of a checkout's HEAD commit from ``.git`` by hand; git itself is never run
(a student controls its configuration, hooks and filters).

What is read, always under the submission's root and never outside it: ``.git`` (a folder,
or a ``gitdir:`` file naming a folder inside the root), ``HEAD``, ``commondir``, the ref
HEAD names (a loose ref or ``packed-refs``), then commit → tree → subtrees → blob, as loose
objects (zlib) or in packs (``objects/pack/*.idx`` version 2 and their ``.pack``, with
OFS_DELTA and REF_DELTA resolved). SHA-1 repositories only.

With a deadline (``before``, seconds since the epoch), the first-parent history is walked
from HEAD, at most `MAX_HISTORY` commits, stopping at a commit listed in ``shallow``: the
commit read is the first one on that walk whose committer time is at or before the
deadline (the newest on time in history order, as ``git log --first-parent`` shows it),
or HEAD itself with ``latest``; the commits walked past are `Head.late` (none on time
within `MAX_HISTORY` counts as none on time). Committer times are what the student's git
wrote: a claim, not a proof.

What is refused (`GitError`, whose text says why; the caller then grades the working
tree): a symbolic link anywhere on a path (never followed), a file that is not regular (a
FIFO, a device), a file larger than its cap (64 KiB for HEAD and refs, 64 MiB for an index
or packed-refs), an object that would inflate beyond its cap (`MAX_TREE` for commits and
trees, the caller's limit for blobs, which comes back as that file's problem), a delta
chain deeper than `MAX_DEPTH`, an object whose SHA-1 is not its name, and a missing object
(a shallow clone; alternates are not read). Every file is read through a `Files`, which
`grader.grade.safe_read.Root` is: relative to the root's descriptor, bounded, no link.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from grader.errors import GraderError
from grader.i18n import Text, tr

__all__ = [
    "MAX_DEPTH",
    "MAX_HISTORY",
    "MAX_TREE",
    "Commit",
    "Files",
    "GitError",
    "Head",
    "Refused",
    "read_head",
]

MAX_TREE = 8 * 1024 * 1024  # inflated bytes of a commit, a tree, or a delta's base
MAX_DEPTH = 64  # deltas on deltas
MAX_HISTORY = 10_000  # first-parent commits walked back from HEAD for a deadline
MAX_SMALL = 64 * 1024  # HEAD, a ref, a gitdir: or commondir file
MAX_META = 64 * 1024 * 1024  # packed-refs, one pack's .idx
MAX_WORK = 256 * 1024 * 1024  # bytes of indexes read and objects inflated, in all
_SHA = re.compile(r"[0-9a-f]{40}")
_TYPES = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}


class Refused(GraderError):
    """A path that a `Files` does not read (a link, not a regular file, too big...)."""

    def __init__(self, text: Text) -> None:
        super().__init__(text.en)
        self.text = text


class GitError(GraderError):
    """HEAD's files cannot be read; `commit` is what HEAD names when that was read."""

    def __init__(self, text: Text, commit: str = "") -> None:
        super().__init__(text.en)
        self.text, self.commit = text, commit


class Files(Protocol):
    """The submission's folder, as `grader.grade.safe_read.Root` reads it: every path is
    relative to it, no link is followed, only regular files are opened, and each call
    first checks the deadline (raising what it likes)."""

    real: str  # the folder's real path, to tell whether an absolute gitdir: is inside

    def kind(self, rel: str) -> str | None:
        """What `rel` is: "dir", "file", "link", "other", or None when it is absent."""

    def read(self, rel: str, limit: int) -> bytes | None:
        """The bytes of a regular file (None if absent); `Refused` past `limit` bytes."""

    def open(self, rel: str) -> int | None:
        """A read-only descriptor of a regular file (None if absent); the caller closes it."""

    def names(self, rel: str, limit: int) -> list[str]:
        """The names in a folder ([] if absent); `Refused` past `limit` entries."""

    def tick(self) -> None:
        """Check the deadline (between objects)."""


@dataclass(frozen=True)
class Commit:
    """A commit and its committer time: `time` seconds since the epoch, `tz` ``"+0800"``."""

    sha: str
    time: int
    tz: str


@dataclass
class Head:
    """The commit read and, per path asked for, its bytes there, why it is not taken, or
    None when it has no such file. With a deadline: `date` is the commit read, `late` the
    commits after the deadline (newest first), and `on_time` False when no commit is at or
    before it (then `commit` is "" and no file was read, unless `latest`)."""

    commit: str
    files: dict[str, bytes | Text | None] = field(default_factory=dict)
    date: Commit | None = None
    late: list[Commit] = field(default_factory=list)
    on_time: bool = True


class _TooBig(GitError):
    pass


def _damaged(what: str) -> GitError:
    return GitError(tr(f"仓库已损坏（{what}）", f"a damaged repository ({what})"))


class _Repo:
    def __init__(self, files: Files) -> None:
        self.files, self.objects = files, ".git/objects"
        self.packs: list[tuple[bytes, int]] | None = None  # (.idx bytes, .pack fd)
        self.trees: dict[str, dict[str, tuple[bytes, str]]] = {}
        self.left = MAX_WORK

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise GitError(
                tr(f"要解压的超过 {MAX_WORK} 字节", f"more than {MAX_WORK} bytes to inflate")
            )

    def close(self) -> None:
        for _, fd in self.packs or []:
            os.close(fd)

    def _load_packs(self) -> list[tuple[bytes, int]]:
        if self.packs is None:
            self.packs = []
            for name in sorted(self.files.names(f"{self.objects}/pack", 1000)):
                if re.fullmatch(r"pack-[0-9a-f]{40}\.idx", name):
                    idx = self.files.read(f"{self.objects}/pack/{name}", MAX_META) or b""
                    self.spend(len(idx))
                    fd = self.files.open(f"{self.objects}/pack/{name[:-4]}.pack")
                    if fd is None:
                        raise _damaged(f"{name} without its .pack")
                    self.packs.append((idx, fd))  # closed by close() even if damaged
                    if (
                        idx[:8] != b"\377tOc\0\0\0\2"
                        or len(idx) < 1032 + 28 * struct.unpack(">I", idx[1028:1032])[0]
                    ):
                        raise _damaged(f"{name} is not a version 2 index")
        return self.packs

    def object(self, sha: str, cap: int, depth: int = 0) -> tuple[str, bytes]:
        """(type, data) of object `sha`, its SHA-1 checked; `_TooBig` past `cap` bytes."""
        self.files.tick()
        data = self.files.read(f"{self.objects}/{sha[:2]}/{sha[2:]}", MAX_TREE + MAX_TREE // 8)
        if data is not None:
            out = zlib.decompressobj().decompress(data, cap + 32)
            self.spend(len(out))
            kind, _, rest = out.partition(b" ")
            size, _, body = rest.partition(b"\0")
            if not size.isdigit() or int(size) > cap:
                raise _TooBig(tr(f"对象 {sha} 太大", f"the object {sha} is too big"))
            if int(size) != len(body):
                raise _damaged(f"the object {sha}")
            typ = kind.decode("ascii", "replace")
        else:
            typ, body = self._in_packs(sha, cap, depth)
        header = f"{typ} {len(body)}\0".encode()
        if hashlib.sha1(header + body).hexdigest() != sha:
            raise _damaged(f"the object {sha} is not what its name says")
        return typ, body

    def _in_packs(self, sha: str, cap: int, depth: int) -> tuple[str, bytes]:
        key = bytes.fromhex(sha)
        for idx, fd in self._load_packs():
            fan = struct.unpack(">256I", idx[8:1032])
            n, lo, hi = fan[255], fan[key[0] - 1] if key[0] else 0, fan[key[0]]
            while lo < hi:
                mid = (lo + hi) // 2
                name = idx[1032 + 20 * mid : 1052 + 20 * mid]
                if name == key:
                    at = 1032 + 24 * n + 4 * mid
                    (off,) = struct.unpack(">I", idx[at : at + 4])
                    if off & 0x80000000:
                        at = 1032 + 28 * n + 8 * (off & 0x7FFFFFFF)
                        (off,) = struct.unpack(">Q", idx[at : at + 8])
                    return self._packed(fd, off, cap, depth)
                lo, hi = (mid + 1, hi) if name < key else (lo, mid)
        raise GitError(
            tr(f"缺少对象 {sha}（浅克隆？）", f"the object {sha} is missing (a shallow clone?)")
        )

    def _packed(self, fd: int, off: int, cap: int, depth: int) -> tuple[str, bytes]:
        if depth > MAX_DEPTH:
            raise GitError(
                tr(f"增量链超过 {MAX_DEPTH} 层", f"a delta chain deeper than {MAX_DEPTH}")
            )
        self.files.tick()
        head = os.pread(fd, 64, off)
        c, i = head[0], 1
        typ, size, shift = (c >> 4) & 7, c & 15, 4
        while c & 0x80 and i < 10:
            c, i = head[i], i + 1
            size, shift = size | (c & 0x7F) << shift, shift + 7
        if typ in _TYPES:
            if size > cap:
                raise _TooBig(tr("对象太大", f"an object of {size} bytes, more than {cap}"))
            return _TYPES[typ], self._inflate(fd, off + i, size)
        if typ == 6:  # OFS_DELTA: the base sits a distance back in this pack
            c, i = head[i], i + 1
            back = c & 0x7F
            while c & 0x80 and i < 20:
                c, i = head[i], i + 1
                back = ((back + 1) << 7) | (c & 0x7F)
            if not 0 < back < off:
                raise _damaged("a delta's base offset")
            base = self._base(lambda cap: self._packed(fd, off - back, cap, depth + 1))
        elif typ == 7:  # REF_DELTA: the base is named
            sha = head[i : i + 20].hex()
            base = self._base(lambda cap: self.object(sha, cap, depth + 1))
            i += 20
        else:
            raise _damaged(f"an unknown object type {typ}")
        if size > 2 * cap + 64:
            raise _TooBig(tr("增量太大", f"a delta of {size} bytes"))
        return base[0], _apply(base[1], self._inflate(fd, off + i, size), cap)

    @staticmethod
    def _base(read: Callable[[int], tuple[str, bytes]]) -> tuple[str, bytes]:
        try:
            return read(MAX_TREE)  # a delta's base: too big is damage, not a big file
        except _TooBig as e:
            raise GitError(e.text) from None

    def _inflate(self, fd: int, pos: int, size: int) -> bytes:
        """`size` bytes inflated from `pos`, reading at most about that much."""
        self.spend(size)
        d, got, budget = zlib.decompressobj(), 0, size + size // 16 + 4096
        out: list[bytes] = []
        while not d.eof:
            chunk = os.pread(fd, min(65536, budget), pos)
            if not chunk or budget <= 0:
                raise _damaged("a truncated object")
            pos, budget = pos + len(chunk), budget - len(chunk)
            piece = d.decompress(chunk, size + 1 - got)
            out.append(piece)
            got += len(piece)
            if got > size:
                raise _damaged("an object bigger than it says")
        if got != size:
            raise _damaged("an object smaller than it says")
        return b"".join(out)

    def tree(self, sha: str) -> dict[str, tuple[bytes, str]]:
        if sha in self.trees:
            return self.trees[sha]
        typ, data = self.object(sha, MAX_TREE)
        if typ != "tree":
            raise GitError(tr(f"{sha} 不是树对象", f"{sha} is not a tree"))
        entries: dict[str, tuple[bytes, str]] = {}
        i = 0
        while i < len(data):
            sp, nul = data.find(b" ", i), data.find(b"\0", i)
            if not i < sp < nul or nul + 21 > len(data):
                raise _damaged(f"the tree {sha}")
            name = data[sp + 1 : nul].decode("utf-8", "replace")
            entries[name] = (data[i:sp], data[nul + 1 : nul + 21].hex())
            i = nul + 21
        self.trees[sha] = entries
        return entries


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        c, i = data[i], i + 1
        value, shift = value | (c & 0x7F) << shift, shift + 7
        if not c & 0x80 or shift > 63:
            return value, i


def _apply(base: bytes, delta: bytes, cap: int) -> bytes:
    src, i = _varint(delta, 0)
    dst, i = _varint(delta, i)
    if src != len(base):
        raise _damaged("a delta that does not fit its base")
    if dst > cap:
        raise _TooBig(tr("对象太大", f"an object of {dst} bytes, more than {cap}"))
    out = bytearray()
    while i < len(delta):
        op, i = delta[i], i + 1
        if op & 0x80:  # copy from the base
            at = size = 0
            for k in range(7):
                if op & (1 << k):
                    byte, i = delta[i], i + 1
                    if k < 4:
                        at |= byte << (8 * k)
                    else:
                        size |= byte << (8 * (k - 4))
            size = size or 0x10000
            if at + size > len(base):
                raise _damaged("a delta")
            out += base[at : at + size]
        elif op:  # insert the next op bytes
            if i + op > len(delta):
                raise _damaged("a delta")
            out += delta[i : i + op]
            i += op
        else:
            raise _damaged("a delta")
        if len(out) > dst:
            break
    if len(out) != dst:
        raise _damaged("a delta whose result has the wrong size")
    return bytes(out)


def _inside(real: str, target: str, base: str) -> str:
    """`target` (a path in a ``gitdir:`` or ``commondir`` file, relative to `base`) as a
    path relative to the root (whose real path is `real`); `GitError` when it leaves it."""
    if os.path.isabs(target):
        target = os.path.normpath(target)
        if os.path.commonpath([real, target]) != real:
            raise GitError(tr(f"{target} 在提交之外", f"{target} is outside the submission"))
        return os.path.relpath(target, real)
    rel = os.path.normpath(os.path.join(base, target))
    if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
        raise GitError(tr(f"{target} 在提交之外", f"{target} is outside the submission"))
    return rel


def _text(repo: _Repo, rel: str) -> str | None:
    data = repo.files.read(rel, MAX_SMALL)
    return None if data is None else data.decode("utf-8", "replace").strip()


def _resolve(repo: _Repo, git: str) -> tuple[str, str]:
    """(HEAD's commit, the common git folder) of the git folder `git`."""
    common = _text(repo, f"{git}/commondir")  # a linked worktree keeps refs in the main one
    common = git if common is None else _inside(repo.files.real, common, git)
    text = _text(repo, f"{git}/HEAD")
    for _ in range(5):  # a ref may name another ref
        if text is None or not text.startswith("ref:"):
            if text is not None and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", text):
                return text, common
            raise GitError(tr("HEAD 没有指向提交", "HEAD names no commit"))
        ref, text = text.removeprefix("ref:").strip(), None
        if not re.fullmatch(r"refs/[A-Za-z0-9._/-]+", ref) or ".." in ref:
            raise GitError(tr(f"HEAD 指向奇怪的引用 {ref!r}", f"HEAD names an odd ref {ref!r}"))
        text = _text(repo, f"{git}/{ref}") or _text(repo, f"{common}/{ref}")
        if text is None:
            packed = repo.files.read(f"{common}/packed-refs", MAX_META) or b""
            for line in packed.decode("utf-8", "replace").splitlines():
                sha, _, name = line.partition(" ")
                if name.strip() == ref and _SHA.fullmatch(sha):
                    text = sha
    raise GitError(tr("HEAD 的引用链太长", "HEAD's chain of refs is too long"))


def _commit(repo: _Repo, sha: str) -> tuple[str, str, Commit]:
    """(tree, first parent or "", the commit with its committer time) of commit `sha`."""
    typ, data = repo.object(sha, MAX_TREE)
    if typ != "commit" or not re.match(rb"tree [0-9a-f]{40}\n", data):
        raise GitError(tr(f"{sha} 不是提交", f"{sha} is not a commit"))
    header = data.split(b"\n\n", 1)[0]
    parent = re.search(rb"^parent ([0-9a-f]{40})$", header, re.M)
    who = re.search(rb"^committer [^\n]*> (\d{1,12}) ([+-]\d{4})$", header, re.M)
    if who is None:
        raise _damaged(f"the commit {sha} has no committer time")
    when = Commit(sha, int(who[1]), who[2].decode("ascii"))
    return data[5:45].decode("ascii"), parent[1].decode("ascii") if parent else "", when


def _walk(repo: _Repo, common: str, sha: str, before: int, head: Head) -> str:
    """The tree of the first first-parent commit from `sha` at or before `before` ("" when
    there is none within `MAX_HISTORY`); sets `head.commit`, `date`, `late`, `on_time`."""
    shallow = (repo.files.read(f"{common}/shallow", MAX_META) or b"").decode("ascii", "replace")
    ends = set(shallow.split())
    for _ in range(MAX_HISTORY):
        tree, parent, when = _commit(repo, sha)
        if when.time <= before:
            head.commit, head.date = sha, when
            return tree
        head.late.append(when)
        if not parent or sha in ends:
            break
        sha = parent
    head.commit, head.on_time = "", False
    return ""


def read_head(
    files: Files,
    paths: Sequence[str],
    limit: int,
    *,
    before: int | None = None,
    latest: bool = False,
) -> Head:
    """The files `paths` (``labs/lab04/student.py``) of the commit HEAD names, each at most
    `limit` bytes, from the ``.git`` of the checkout `files`; with `before` (seconds since
    the epoch), of the newest first-parent commit at or before it, or, with `latest`, of
    HEAD still, the later commits listed (see the module docstring).

    Raises:
        GitError: HEAD or its objects cannot be read (see the module docstring); what
            `files` raises for a passed deadline goes through unchanged.
    """
    repo, commit = _Repo(files), ""
    try:
        git = ".git"
        if files.kind(git) != "dir":
            line = (files.read(git, MAX_SMALL) or b"").decode("utf-8", "replace").strip()
            if not line.startswith("gitdir:"):  # a linked worktree's "gitdir: <path>"
                raise GitError(tr(".git 不是仓库", ".git is neither a folder nor a gitdir: file"))
            git = _inside(files.real, line.removeprefix("gitdir:").strip(), ".")
        commit, common = _resolve(repo, git)
        if not _SHA.fullmatch(commit):
            raise GitError(tr("不读 SHA-256 仓库", "SHA-256 repositories are not read"))
        repo.objects = f"{common}/objects"
        top, _, date = _commit(repo, commit)
        head = Head(commit, date=date if before is not None else None)
        if before is not None:
            walked = Head(commit)
            tree = _walk(repo, common, commit, before, walked)
            head.late, head.on_time = walked.late, walked.on_time
            if not latest:
                top, head.commit, head.date = tree, walked.commit, walked.date
        for path in paths:
            head.files[path] = _blob(repo, top, path, limit) if top else None
        return head
    except Refused as e:
        raise GitError(e.text, commit) from None
    except GitError as e:
        raise GitError(e.text, commit or e.commit) from None
    except (OSError, OverflowError, IndexError, struct.error, zlib.error) as e:
        raise GitError(_damaged(f"{type(e).__name__}: {e}").text, commit) from None
    finally:
        repo.close()


def _blob(repo: _Repo, tree: str, path: str, limit: int) -> bytes | Text | None:
    parts, mode, sha = path.split("/"), b"40000", tree
    for i, part in enumerate(parts):
        entry = repo.tree(sha).get(part)
        if entry is None:
            return None
        mode, sha = entry
        if i < len(parts) - 1 and mode != b"40000":
            return None
    if mode == b"120000":
        return tr(f"{path} 在 HEAD 中是符号链接", f"{path} is a symbolic link at HEAD")
    if mode not in (b"100644", b"100755", b"100664"):
        return tr(f"{path} 在 HEAD 中不是普通文件", f"{path} is not a regular file at HEAD")
    try:
        typ, data = repo.object(sha, limit)
    except _TooBig:
        return tr(
            f"{path} 在 HEAD 中超过 {limit} 字节", f"{path} has more than {limit} bytes at HEAD"
        )
    return data if typ == "blob" else tr(f"{path} 不是文件", f"{path} is not a file at HEAD")

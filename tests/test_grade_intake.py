"""`minillm grade` reads a submission as hostile data: FIFOs, links out of the submission,
endless files, symlink loops, zip bombs of entries, encrypted zips, and git checkouts
whose working tree is not what they committed (HEAD is read by hand, git never runs)."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import time
import tracemalloc
import types
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grader.grade import gitread, submission
from grader.grade.submission import MAX_FILE, SubmissionError, Taken, read_submission

ROOT = Path(__file__).resolve().parents[1]
LABS = ("lab04", "lab07")
HAS_GIT = shutil.which("git") is not None
needs_git = pytest.mark.skipif(not HAS_GIT, reason="git is not installed")


def student(root: Path, lab: str, text: str = "x = 1\n") -> Path:
    path = root / "labs" / lab / "student.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def git(repo: Path, *args: str) -> str:
    """Run git for the test's own setup (never the grader's): no user config applies."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def repo_with(tmp: Path, files: dict[str, str], name: str = "repo") -> Path:
    """A git repository holding `files` in one commit on the branch main."""
    repo = tmp / name
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_files(repo, files)
    return repo


def commit_files(repo: Path, files: dict[str, str], message: str = "c") -> str:
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def isolated(code: str, timeout: float = 30) -> dict[str, Any]:
    """Run `code` (which prints one JSON line) in a child with 1 GiB of address space, so a
    hang or an endless read fails the test instead of the machine."""

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=limit,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"read_submission did not return within {timeout} s (it hangs)")
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def read_isolated(path: Path, labs: tuple[str, ...] = LABS) -> dict[str, Any]:
    return isolated(
        "import json, sys\n"
        "from pathlib import Path\n"
        "from grader.grade.submission import read_submission, SubmissionError\n"
        "try:\n"
        f"    t = read_submission(Path({str(path)!r}), {labs!r})\n"
        "except SubmissionError as e:\n"
        "    print(json.dumps({'error': str(e)})); sys.exit(0)\n"
        "note = getattr(t, 'note', None)\n"
        "print(json.dumps({'files': t.files, 'commit': t.commit,\n"
        "    'note': note.en if note else None,\n"
        "    'problems': {k: v.en for k, v in t.problems.items()}}))\n"
    )


# -- 1, 2: what hides behind .git: FIFOs, endless files -------------------------------------


def fake_git(root: Path) -> Path:
    """A checkout whose .git HEAD names refs/heads/main (no objects)."""
    student(root, "lab04", "A = 4\n")
    git_dir = root / ".git"
    (git_dir / "refs" / "heads").mkdir(parents=True)
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    return git_dir


@pytest.mark.parametrize(
    "hostile",
    ["HEAD", "refs/heads/main", "packed-refs", "commondir", "dot-git"],
)
def test_a_fifo_in_git_does_not_hang_grading(tmp_path: Path, hostile: str) -> None:
    git_dir = fake_git(tmp_path)
    if hostile == "dot-git":
        shutil.rmtree(git_dir)
        os.mkfifo(git_dir)
    else:
        (git_dir / hostile).unlink(missing_ok=True)
        os.mkfifo(git_dir / hostile)
    got = read_isolated(tmp_path)
    assert got["files"] == {"lab04": "A = 4\n"} and got["commit"] == ""
    assert "working tree was graded" in got["note"] and "not a regular file" in got["note"]


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom"])
def test_head_linked_to_an_endless_device_is_not_read(tmp_path: Path, target: str) -> None:
    git_dir = fake_git(tmp_path)
    (git_dir / "HEAD").unlink()
    (git_dir / "HEAD").symlink_to(target)
    got = read_isolated(tmp_path)
    assert got["files"] == {"lab04": "A = 4\n"} and got["commit"] == ""
    assert "symbolic link" in got["note"]


def test_a_huge_head_file_is_read_only_up_to_a_bound(tmp_path: Path) -> None:
    git_dir = fake_git(tmp_path)
    with open(git_dir / "HEAD", "wb") as f:
        f.truncate(2 << 30)  # sparse: 2 GiB of zeros costs no disk
    got = read_isolated(tmp_path)
    assert got["files"] == {"lab04": "A = 4\n"} and got["commit"] == ""
    assert "more than" in got["note"]


# -- 3: nothing outside the submission is read ----------------------------------------------


SECRET = "5ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2"


def test_head_linked_to_a_host_file_leaks_nothing(tmp_path: Path) -> None:
    secret = tmp_path / "root-only"
    secret.write_text(SECRET + "\n", encoding="utf-8")
    secret.chmod(0o400)
    sub = tmp_path / "sub"
    git_dir = fake_git(sub)
    (git_dir / "HEAD").unlink()
    (git_dir / "HEAD").symlink_to(secret)
    taken = read_submission(sub, LABS)
    assert taken.commit == "" and SECRET not in repr(taken)
    assert taken.note is not None and "symbolic link" in taken.note.en
    assert "符号链接" in taken.note.zh
    assert taken.files == {"lab04": "A = 4\n"}


@needs_git
@pytest.mark.parametrize(
    "outside",
    ["refs/heads/main", "packed-refs", "objects", "refs", "gitdir-file", "commondir"],
)
def test_no_link_and_no_path_out_of_the_submission_is_followed(
    tmp_path: Path, outside: str
) -> None:
    """A real repository whose pieces were moved out of the submission and linked back
    (or named by path): none is read, so HEAD cannot be read and the working tree is
    graded, with a note."""
    repo = repo_with(tmp_path, {"labs/lab04/student.py": "A = 1\n"})
    sha = git(repo, "rev-parse", "HEAD")
    if outside == "packed-refs":
        git(repo, "pack-refs", "--all")
    dot_git, away = repo / ".git", tmp_path / "away"
    away.mkdir()
    if outside == "gitdir-file":  # .git is "gitdir: <a repository outside>"
        dot_git.rename(away / "git")
        (repo / ".git").write_text(f"gitdir: {away / 'git'}\n", encoding="utf-8")
    elif outside == "commondir":  # a worktree whose main repository is outside
        shutil.copytree(dot_git, away / "main")
        shutil.rmtree(dot_git / "objects")
        shutil.rmtree(dot_git / "refs")
        (dot_git / "commondir").write_text("../../away/main\n", encoding="utf-8")
    else:
        (dot_git / outside).rename(away / "moved")
        (dot_git / outside).symlink_to(away / "moved")
    student(repo, "lab04", "A = 2\n")  # the working tree differs from HEAD
    taken = read_submission(repo, LABS)
    assert taken.kind == "git" and taken.note is not None
    assert "working tree was graded" in taken.note.en
    assert ("outside the submission" if "dir" in outside else "symbolic link") in taken.note.en
    assert taken.files == {"lab04": "A = 2\n"} and taken.dirty == []
    # what HEAD names is known only when it was read inside the submission
    assert taken.commit == (sha if outside == "objects" else "")


# -- 4: path problems are a SubmissionError ---------------------------------------------------


def test_a_symlink_loop_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(SubmissionError) as info:
        read_submission(tmp_path / "a", LABS)
    assert "loop of symbolic links" in info.value.text.en and "循环" in info.value.text.zh


@pytest.mark.parametrize(
    ("name", "why"),
    [("x" * 300, "File name too long"), ("nul\0byte", "cannot be read")],
)
def test_an_unreadable_path_is_a_clear_error(tmp_path: Path, name: str, why: str) -> None:
    with pytest.raises(SubmissionError, match=why) as info:
        read_submission(tmp_path / name, LABS)
    assert "无法读取" in info.value.text.zh


def test_a_link_loop_inside_is_not_followed(tmp_path: Path) -> None:
    deep = tmp_path / "d"
    student(deep, "lab04")
    os.symlink("loop", deep / "loop")
    taken = read_submission(deep, LABS)  # a loop inside is just not followed
    assert taken.files == {"lab04": "x = 1\n"}
    with pytest.raises(SubmissionError, match="loop"):
        read_submission(deep / "loop", LABS)


# -- 5: a zip with too many entries is refused before zipfile reads it ----------------------


def no_zipfile(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make opening a ZipFile fail the test: it must not happen for these zips."""
    opened: list[str] = []

    def refuse(*args: object, **kwargs: object) -> None:
        opened.append("opened")
        raise AssertionError("zipfile.ZipFile was opened")

    monkeypatch.setattr(zipfile, "ZipFile", refuse)
    return opened


def eocd(entries: int, central: int, offset: int) -> bytes:
    return b"PK\x05\x06" + struct.pack("<4H2IH", 0, 0, entries, entries, central, offset, 0)


def test_a_zip64_end_record_claiming_millions_of_entries_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n, central = 1_500_000, 130 * 1024 * 1024
    record = b"PK\x06\x06" + struct.pack("<QHHIIQQQQ", 44, 45, 45, 0, 0, n, n, central, 0)
    locator = b"PK\x06\x07" + struct.pack("<IQI", 0, 0, 1)
    bomb = tmp_path / "bomb.zip"
    bomb.write_bytes(record + locator + eocd(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF))
    opened = no_zipfile(monkeypatch)
    with pytest.raises(SubmissionError) as info:
        read_submission(bomb, LABS)
    assert "1500000 entries, more than 20000" in info.value.text.en
    assert "1500000" in info.value.text.zh and opened == []


def many_entries(path: Path, n: int) -> Path:
    """A real zip of `n` empty entries, written directly (fast)."""
    local, central = bytearray(), bytearray()
    for i in range(n):
        name = f"f{i}".encode()
        central += b"PK\x01\x02" + struct.pack(
            "<6H3I5H2I", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0, len(local)
        )
        central += name
        local += b"PK\x03\x04" + struct.pack("<5H3I2H", 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0)
        local += name
    n16 = min(n, 0xFFFF)
    path.write_bytes(bytes(local + central) + eocd(n16, len(central), len(local)))
    return path


def test_a_zip_of_too_many_entries_is_refused_before_zipfile_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = many_entries(tmp_path / "many.zip", 25_000)
    with zipfile.ZipFile(big) as zf:  # a real zip: zipfile reads it
        assert len(zf.infolist()) == 25_000
    opened = no_zipfile(monkeypatch)
    with pytest.raises(SubmissionError, match="25000 entries, more than 20000"):
        read_submission(big, LABS)
    data = bytearray(big.read_bytes())  # the record lies: 3 entries, says it
    data[-14:-10] = struct.pack("<2H", 3, 3)
    big.write_bytes(bytes(data))
    with pytest.raises(SubmissionError, match="more than 20000 entries"):
        read_submission(big, LABS)
    huge = tmp_path / "huge.zip"
    huge.write_bytes(eocd(10, 64 * 1024 * 1024, 0))
    with pytest.raises(SubmissionError, match="central directory of 67108864 bytes"):
        read_submission(huge, LABS)
    assert opened == []


def test_a_zip_within_the_bounds_is_still_read(tmp_path: Path) -> None:
    ok = many_entries(tmp_path / "ok.zip", 300)
    assert read_submission(ok, LABS).files == {}
    with zipfile.ZipFile(tmp_path / "c.zip", "w") as zf:
        zf.writestr("labs/lab04/student.py", "A = 1\n")
        zf.comment = b"a comment, so the end record is not the last 22 bytes"
    assert read_submission(tmp_path / "c.zip", LABS).files == {"lab04": "A = 1\n"}


# -- 6: entries zipfile cannot read are named, not an internal error -----------------------


def patched_zip(path: Path, name: str, patch: Callable[[bytearray, int, int], None]) -> Path:
    """A zip of lab04 and lab07 whose lab04 entry's headers are then patched in place."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("labs/lab04/student.py", "A = 4\n" * 50)
        zf.writestr("labs/lab07/student.py", "B = 7\n")
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        assert zf.infolist()[0].filename == name  # so its central header is the first
        local = zf.infolist()[0].header_offset
    patch(data, local, data.index(b"PK\x01\x02"))
    path.write_bytes(bytes(data))
    return path


def encrypt(data: bytearray, local: int, central: int) -> None:
    data[local + 6] |= 1
    data[central + 8] |= 1


def method_99(data: bytearray, local: int, central: int) -> None:
    data[local + 8 : local + 10] = struct.pack("<H", 99)
    data[central + 10 : central + 12] = struct.pack("<H", 99)


def garble(data: bytearray, local: int, central: int) -> None:
    start = local + 30 + len("labs/lab04/student.py")
    data[start : start + 4] = b"\xff\xff\xff\xff"  # not deflate any more


@pytest.mark.parametrize(
    ("patch", "en", "zh"),
    [
        (encrypt, "is encrypted", "已加密"),
        (method_99, "unsupported compression method (99)", "不支持的压缩方法"),
        (garble, "cannot be read", "无法读取"),
    ],
)
def test_an_unreadable_zip_entry_is_that_labs_problem(
    tmp_path: Path, patch: Callable[[bytearray, int, int], None], en: str, zh: str
) -> None:
    name = "labs/lab04/student.py"
    path = patched_zip(tmp_path / "s.zip", name, patch)
    taken = read_submission(path, LABS)
    assert taken.files == {"lab07": "B = 7\n"}
    problem = taken.problems["lab04"]
    assert en in problem.en and name in problem.en and zh in problem.zh


# -- 7: a git checkout is graded as committed -----------------------------------------------


@needs_git
def test_a_checkout_is_graded_at_head_and_a_dirty_tree_is_flagged(tmp_path: Path) -> None:
    repo = repo_with(
        tmp_path, {"labs/lab04/student.py": "A = 1\n", "labs/lab07/student.py": "B = 1\n"}
    )
    sha = git(repo, "rev-parse", "HEAD")
    taken = read_submission(repo, LABS)
    assert (taken.kind, taken.commit, taken.note, taken.dirty) == ("git", sha, None, [])
    assert taken.files == {"lab04": "A = 1\n", "lab07": "B = 1\n"}
    student(repo, "lab04", "A = 'a mutant, never committed'\n")
    (repo / "labs" / "lab07" / "student.py").unlink()
    taken = read_submission(repo, LABS)
    assert taken.commit == sha and taken.dirty == ["lab04", "lab07"]
    assert taken.files == {"lab04": "A = 1\n", "lab07": "B = 1\n"}  # HEAD's, not the tree's
    git(repo, "rm", "-q", "--cached", "labs/lab07/student.py")
    git(repo, "commit", "-q", "-m", "drop lab07")
    sha2 = git(repo, "rev-parse", "HEAD")
    student(repo, "lab07", "B = 'only in the working tree'\n")
    taken = read_submission(repo, LABS)
    assert taken.commit == sha2 and taken.dirty == ["lab04", "lab07"]
    assert taken.files == {"lab04": "A = 1\n"} and not taken.problems


@needs_git
def test_a_detached_head_and_a_ref_in_packed_refs(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"labs/lab04/student.py": "A = 1\n"})
    first = git(repo, "rev-parse", "HEAD")
    commit_files(repo, {"labs/lab04/student.py": "A = 2\n"})
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert read_submission(repo, LABS).files == {"lab04": "A = 2\n"}
    git(repo, "checkout", "-q", "--detach", first)
    assert (repo / ".git" / "HEAD").read_text(encoding="utf-8").strip() == first
    taken = read_submission(repo, LABS)
    assert (taken.commit, taken.files, taken.dirty) == (first, {"lab04": "A = 1\n"}, [])


def pack_types(repo: Path) -> set[int]:
    """The type codes of the objects stored in the repository's one pack (6 = OFS_DELTA,
    7 = REF_DELTA), from `git verify-pack -v`'s offsets."""
    pack_dir = repo / ".git" / "objects" / "pack"
    (idx,) = pack_dir.glob("*.idx")
    data = idx.with_suffix(".pack").read_bytes()
    types = set()
    for line in git(repo, "verify-pack", "-v", str(idx)).splitlines():
        fields = line.split()
        if len(fields) >= 5 and len(fields[0]) == 40 and fields[1] in ("blob", "tree", "commit"):
            types.add((data[int(fields[4])] >> 4) & 7)
            if len(fields) == 7:  # "... depth base-sha": a delta
                types.add(-1)
    return types


@needs_git
@pytest.mark.parametrize(("offsets", "delta"), [("true", 6), ("false", 7)])
def test_a_packed_repository_with_deltas(tmp_path: Path, offsets: str, delta: int) -> None:
    lines = [f"def f{i}(x):\n    return x + {i}\n" for i in range(300)]
    repo = repo_with(tmp_path, {"labs/lab04/student.py": "".join(lines)})
    first = git(repo, "rev-parse", "HEAD")
    second = commit_files(repo, {"labs/lab04/student.py": "".join(lines) + "Z = 1\n"})
    git(repo, "-c", f"repack.useDeltaBaseOffset={offsets}", "gc", "-q", "--aggressive")
    loose = [p for p in (repo / ".git" / "objects").iterdir() if len(p.name) == 2]
    assert loose == [] and -1 in pack_types(repo) and delta in pack_types(repo)
    taken = read_submission(repo, LABS)
    assert (taken.commit, taken.note) == (second, None)
    assert taken.files == {"lab04": "".join(lines) + "Z = 1\n"}
    git(repo, "checkout", "-q", "--detach", first)
    taken = read_submission(repo, LABS)
    assert (taken.commit, taken.files, taken.note) == (first, {"lab04": "".join(lines)}, None)


@needs_git
def test_a_gitdir_file_inside_the_submission_is_read(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"labs/lab04/student.py": "A = 1\n"})
    (repo / ".git").rename(repo / ".store")
    (repo / ".git").write_text("gitdir: .store\n", encoding="utf-8")
    taken = read_submission(repo, LABS)
    assert (taken.files, taken.note) == ({"lab04": "A = 1\n"}, None)


@needs_git
def test_a_linked_worktree_whose_repository_is_elsewhere(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"labs/lab04/student.py": "A = 1\n"})
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    student(tmp_path / "wt", "lab04", "A = 'working'\n")
    taken = read_submission(tmp_path / "wt", LABS)
    assert taken.kind == "git" and taken.commit == ""
    assert taken.note is not None and "outside the submission" in taken.note.en
    assert taken.files == {"lab04": "A = 'working'\n"}


def loose_path(repo: Path, sha: str) -> Path:
    return repo / ".git" / "objects" / sha[:2] / sha[2:]


def zeros_object(header: bytes, size: int) -> bytes:
    """A loose object of `header` and then `size` zero bytes, compressed as it goes."""
    z = zlib.compressobj(9)
    out = [z.compress(header)]
    for _ in range(size >> 20):
        out.append(z.compress(bytes(1 << 20)))
    return b"".join([*out, z.flush()])


@needs_git
@pytest.mark.parametrize(
    ("damage", "why"),
    [
        ("missing", "is missing"),
        ("mutant", "not what its name says"),
        ("garbage", "damaged repository"),
        ("liar", "damaged repository"),
    ],
)
def test_an_unreadable_head_grades_the_working_tree_with_a_note(
    tmp_path: Path, damage: str, why: str
) -> None:
    repo = repo_with(tmp_path, {"labs/lab04/student.py": "A = 1\n"})
    sha = git(repo, "rev-parse", "HEAD")
    blob = git(repo, "rev-parse", "HEAD:labs/lab04/student.py")
    path = loose_path(repo, blob)
    path.chmod(0o644)
    if damage == "missing":  # as in a shallow clone
        path.unlink()
    elif damage == "mutant":  # another file's content under the committed blob's name
        evil = b"A = 'evil'\n"
        path.write_bytes(zlib.compress(b"blob %d\0" % len(evil) + evil))
    elif damage == "garbage":
        path.write_bytes(b"not zlib at all")
    else:  # says 6 bytes, inflates to 64 MiB
        path.write_bytes(zeros_object(b"blob 6\0", 64 << 20))
    student(repo, "lab04", "A = 'working'\n")
    taken = read_submission(repo, LABS)
    assert taken.commit == sha and taken.dirty == []
    assert taken.note is not None and why in taken.note.en and "工作区" in taken.note.zh
    assert taken.files == {"lab04": "A = 'working'\n"}


@needs_git
def test_an_object_cannot_inflate_past_its_cap(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"labs/lab04/student.py": "A = 1\n"})
    blob = git(repo, "rev-parse", "HEAD:labs/lab04/student.py")
    path = loose_path(repo, blob)
    path.chmod(0o644)
    path.write_bytes(zeros_object(b"blob 268435456\0", 256 << 20))
    assert path.stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        taken = read_submission(repo, LABS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20  # the bomb is 256 MiB
    assert f"more than {MAX_FILE} bytes at HEAD" in taken.problems["lab04"].en
    assert taken.note is None and "lab04" not in taken.files


@needs_git
def test_links_and_big_files_at_head_are_not_taken(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"labs/lab07/student.py": "#" * (MAX_FILE + 1)})
    (repo / "labs" / "lab04").mkdir(parents=True)
    (repo / "labs" / "lab04" / "student.py").symlink_to("/etc/passwd")
    commit_files(repo, {})
    taken = read_submission(repo, LABS)
    assert taken.note is None and taken.files == {}
    assert "symbolic link at HEAD" in taken.problems["lab04"].en
    assert "more than" in taken.problems["lab07"].en and taken.dirty == []


@needs_git
def test_a_lone_student_py_in_a_checkout_is_read_at_head(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"student.py": "A = 1\n"})
    (repo / "student.py").write_text("A = 2\n", encoding="utf-8")
    taken = read_submission(repo, ("lab04",))
    assert (taken.files, taken.dirty) == ({"lab04": "A = 1\n"}, ["lab04"])


# -- 8: bounded listing, and a deadline --------------------------------------------------------


def test_a_folder_of_too_many_entries_is_not_looked_through(tmp_path: Path) -> None:
    student(tmp_path / "repo-main", "lab04", "A = 4\n")
    assert read_submission(tmp_path, LABS).files == {"lab04": "A = 4\n"}
    for i in range(submission.MAX_LIST):
        (tmp_path / f"f{i:05d}").touch()
    assert read_submission(tmp_path, LABS).files == {}


def test_a_passed_deadline_stops_reading(tmp_path: Path) -> None:
    student(tmp_path, "lab04")
    assert read_submission(tmp_path, LABS, deadline=time.monotonic() + 600).files
    with pytest.raises(SubmissionError) as info:
        read_submission(tmp_path, LABS, deadline=time.monotonic() - 1)
    assert "took more than" in info.value.text.en and "超过" in info.value.text.zh


@needs_git
def test_a_deadline_passing_while_git_objects_are_read_is_not_a_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_with(tmp_path, {"labs/lab04/student.py": "A = 1\n"})
    late = [False]

    def read_head(*args: Any, **kwargs: Any) -> Any:
        late[0] = True  # from here on, the clock says the deadline has passed
        return gitread.read_head(*args, **kwargs)

    now = time.monotonic()
    clock = types.SimpleNamespace(monotonic=lambda: now + (1000 if late[0] else 0))
    monkeypatch.setattr("grader.grade.submission.read_head", read_head)
    monkeypatch.setattr(submission, "time", clock)  # this module's clock only
    with pytest.raises(SubmissionError, match="took more than"):
        read_submission(repo, LABS, deadline=now + 10)
    assert late[0]


def test_taken_keeps_its_old_shape() -> None:
    taken = Taken("n", "s", "dir")
    assert (taken.commit, taken.files, taken.problems, taken.dirty, taken.note) == (
        "",
        {},
        {},
        [],
        None,
    )


@needs_git
@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_no_descriptor_is_left_open(tmp_path: Path) -> None:
    """A batch reads thousands of submissions: no path, good or hostile, leaks an fd."""
    packed = repo_with(tmp_path, {"labs/lab04/student.py": "A = 1\n"}, "packed")
    git(packed, "gc", "-q")
    linked = fake_git(tmp_path / "linked")
    (linked / "refs" / "heads" / "main").symlink_to("/etc/passwd")
    damaged = repo_with(tmp_path, {"labs/lab04/student.py": "A = 1\n"}, "damaged")
    git(damaged, "gc", "-q")
    (idx,) = (damaged / ".git" / "objects" / "pack").glob("*.idx")
    idx.chmod(0o644)
    idx.write_bytes(idx.read_bytes()[:1100])  # cuts into the offsets
    upload = tmp_path / "upload"
    (upload / "labs" / "lab04").mkdir(parents=True)
    (upload / "labs" / "lab04" / "student.py").symlink_to("/etc/passwd")
    zipped = tmp_path / "s.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.writestr("labs/lab04/student.py", "A = 1\n")
    cases = [packed, tmp_path / "linked", damaged, upload, zipped, tmp_path / "missing"]
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        for case in cases:
            try:
                read_submission(case, LABS)
            except SubmissionError:
                pass
        with pytest.raises(SubmissionError):
            read_submission(packed, LABS, deadline=time.monotonic() - 1)
    assert len(os.listdir("/proc/self/fd")) == before
    assert read_submission(packed, LABS).files == {"lab04": "A = 1\n"}
    assert "damaged repository" in str(read_submission(damaged, LABS).note)

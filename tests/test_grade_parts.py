"""The parts of `minillm grade`: reading submissions, the worker's wire, the isolation seam."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from grader.dsl import Lab
from grader.grade.backends import (
    IsolationUnavailable,
    PlainBackend,
    backend_for,
    choose_isolation,
)
from grader.grade.batch import display_names, write_atomic
from grader.grade.run import GradeJob
from grader.grade.submission import (
    MAX_FILE,
    SubmissionError,
    Taken,
    function_lines,
    read_submission,
)
from grader.grade.supervisor import own_fields
from grader.grade.wire import WireError, lab_from_wire, lab_to_wire
from grader.i18n import Text
from grader.results import CheckResult, LabResult, Status, TestResult

LABS = ("lab04", "lab07")


def student(root: Path, lab: str, text: str = "x = 1\n") -> Path:
    path = root / "labs" / lab / "student.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_folder_gives_only_its_student_files(tmp_path: Path) -> None:
    student(tmp_path, "lab04", "A = 4\n")
    (tmp_path / "labs" / "lab04" / "verify.py").write_text("evil\n", encoding="utf-8")
    (tmp_path / "conftest.py").write_text("evil\n", encoding="utf-8")
    taken = read_submission(tmp_path, LABS)
    assert taken.kind == "dir" and taken.files == {"lab04": "A = 4\n"} and not taken.problems


def test_links_odd_files_and_big_files_are_not_taken(tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("SOLUTION = 1\n", encoding="utf-8")
    sub = tmp_path / "sub"
    (sub / "labs" / "lab04").mkdir(parents=True)
    (sub / "labs" / "lab04" / "student.py").symlink_to(secret)
    (sub / "labs" / "lab07").symlink_to(tmp_path, target_is_directory=True)
    taken = read_submission(sub, LABS)
    assert not taken.files
    assert "symbolic link" in taken.problems["lab04"].en
    assert "symbolic link" in taken.problems["lab07"].en
    big = tmp_path / "big"
    student(big, "lab04", "#" * (MAX_FILE + 1))
    (big / "labs" / "lab07" / "student.py").parent.mkdir(parents=True)
    (big / "labs" / "lab07" / "student.py").write_bytes(b"x = '\xff'\n")
    taken = read_submission(big, LABS)
    assert "more than" in taken.problems["lab04"].en and "not UTF-8" in taken.problems["lab07"].en
    fifo = tmp_path / "fifo"
    (fifo / "labs" / "lab04").mkdir(parents=True)
    os.mkfifo(fifo / "labs" / "lab04" / "student.py")
    assert "not a regular file" in read_submission(fifo, LABS).problems["lab04"].en


def test_a_git_checkout_names_its_commit_without_running_git(tmp_path: Path) -> None:
    student(tmp_path, "lab04")
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    sha = "0123456789abcdef0123456789abcdef01234567"
    (git / "refs" / "heads" / "main").write_text(sha + "\n", encoding="utf-8")
    taken = read_submission(tmp_path, LABS)
    assert (taken.kind, taken.commit) == ("git", sha)
    (git / "refs" / "heads" / "main").unlink()
    (git / "packed-refs").write_text(f"# pack\n{sha} refs/heads/main\n", encoding="utf-8")
    assert read_submission(tmp_path, LABS).commit == sha
    (git / "HEAD").write_text("ref: ../../../etc/passwd\n", encoding="utf-8")
    assert read_submission(tmp_path, LABS).commit == ""


def make_zip(path: Path, entries: dict[str, str], links: tuple[str, ...] = ()) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in entries.items():
            zf.writestr(name, text)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "../../solutions/lab04/student.py")
    return path


def test_a_zip_with_or_without_a_top_folder(tmp_path: Path) -> None:
    flat = make_zip(tmp_path / "alice.zip", {"labs/lab04/student.py": "A = 1\n"})
    taken = read_submission(flat, LABS)
    assert (taken.name, taken.kind, taken.files) == ("alice", "zip", {"lab04": "A = 1\n"})
    nested = make_zip(
        tmp_path / "bob.zip",
        {"repo-main/labs/lab07/student.py": "B = 2\n", "repo-main/labs/lab07/verify.py": "x"},
    )
    assert read_submission(nested, LABS).files == {"lab07": "B = 2\n"}


@pytest.mark.parametrize(
    ("entries", "links", "why"),
    [
        ({"../evil.py": "x", "labs/lab04/student.py": "x"}, (), "outside the zip"),
        ({"/etc/evil.py": "x"}, (), "outside the zip"),
        ({"C:/evil.py": "x"}, (), "outside the zip"),
        ({"labs/lab04/student.py": "x"}, ("labs/lab07/student.py",), "symbolic link"),
        ({"a/labs/lab04/student.py": "x", "b/labs/lab07/student.py": "y"}, (), "several"),
    ],
)
def test_a_bad_zip_is_refused(
    tmp_path: Path, entries: dict[str, str], links: tuple[str, ...], why: str
) -> None:
    with pytest.raises(SubmissionError, match=why):
        read_submission(make_zip(tmp_path / "bad.zip", entries, links), LABS)


def test_what_is_neither_a_folder_nor_a_zip_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SubmissionError, match="no such file"):
        read_submission(tmp_path / "missing", LABS)
    text = tmp_path / "notes.txt"
    text.write_text("hello", encoding="utf-8")
    with pytest.raises(SubmissionError, match="neither a folder nor a zip"):
        read_submission(text, LABS)
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(make_zip(tmp_path / "ok.zip", {"a": "b"}).read_bytes()[:-30])
    with pytest.raises(SubmissionError):
        read_submission(damaged, LABS)


def test_names_are_unique_and_results_replace_files_at_once(tmp_path: Path) -> None:
    assert display_names([Path("a/alice"), Path("b/alice.zip"), Path("c/alice")]) == [
        "alice",
        "alice-2",
        "alice-3",
    ]
    target = tmp_path / "out" / "grades.csv"
    write_atomic(target, "one\n")
    write_atomic(target, "two\n")
    assert target.read_text(encoding="utf-8") == "two\n"
    assert os.listdir(target.parent) == ["grades.csv"]


def test_function_lines_of_odd_sources() -> None:
    assert function_lines("def a():\n    pass\n\n\nasync def b():\n    pass\n") == {"a": 1, "b": 5}
    assert function_lines("def (:\n") == {}
    assert function_lines("(" * 500 + ")" * 500) == {}


def test_a_submissions_functions_are_parsed_once_however_often_it_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import grader.grade.submission as submission

    parsed: list[str] = []

    def counting(source: str) -> dict[str, int]:
        parsed.append(source)
        return function_lines(source)

    monkeypatch.setattr(submission, "function_lines", counting)
    taken = Taken("alice", "/x", "dir", files={"lab04": "def f():\n    pass\n"})
    for _ in range(5):  # the batch reports a growing result again and again
        assert taken.functions == {"lab04": {"f": 1}}
    assert parsed == ["def f():\n    pass\n"]


def lab_result() -> LabResult:
    check = CheckResult(
        Text("名", "name"), Status.FAIL, Text("错", "wrong"), "out", 3, [Text("提", "h")]
    )
    tests = [
        TestResult("a", 1, Text("甲", "A"), Status.FAIL, [check], None, 0.5, points=2.0),
        TestResult("b", 2, Text("乙", "B"), Status.SKIP, [], Text("因", "why"), hidden=True),
    ]
    return LabResult(
        "lab04", Text("题", "title"), "x.py", 1.5, tests, None, "fork", [Text("注", "n")]
    )


def test_the_wire_keeps_both_languages() -> None:
    r = lab_result()
    assert lab_from_wire(lab_to_wire(r)) == r


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("tests", 0, "status"), "PASSED"),
        (("tests", 0, "points"), "1"),
        (("tests", 0, "points"), 10**400),
        (("tests", 0, "hidden"), 1),
        (("tests", 0, "title"), ["only one"]),
        (("tests",), [0] * 5000),
        (("tests", 0, "checks", 0), None),
    ],
)
def test_a_malformed_result_is_a_wire_error(path: tuple[object, ...], value: object) -> None:
    data = lab_to_wire(lab_result())
    here = data
    for key in path[:-1]:
        here = here[key]  # type: ignore[index]
    here[path[-1]] = value  # type: ignore[index]
    with pytest.raises(WireError):
        lab_from_wire(data)


def test_the_wire_cleans_lone_surrogates() -> None:
    data = lab_to_wire(lab_result())
    data["tests"][0]["checks"][0]["output"] = "a\ud800b"
    assert lab_from_wire(data).tests[0].checks[0].output == "a\\ud800b"


def test_points_and_visibility_are_the_graders_own() -> None:
    lab = Lab("lab04", "题", "title")
    lab.test("甲", "A", points=3)(lambda t: None)
    lab.tests[0].id = "a"
    lab.test("乙", "B", hidden=True)(lambda t: None)
    lab.tests[1].id = "b"
    r = lab_result()
    r.tests[0].points, r.tests[1].hidden = 100.0, False  # what a forged report would say
    own_fields(r, lab)
    assert [(t.points, t.hidden) for t in r.tests] == [(3.0, False), (1.0, True)]
    r.tests.pop()
    with pytest.raises(WireError, match="not its tests"):
        own_fields(r, lab)


def test_the_job_goes_through_json(tmp_path: Path) -> None:
    job = GradeJob(tmp_path / "c", tmp_path / "p", tmp_path / "w", LABS)
    assert GradeJob.loads(job.dumps()) == job
    assert job.student("lab04") == tmp_path / "w" / "labs" / "lab04" / "student.py"


def test_the_isolation_levels(monkeypatch: pytest.MonkeyPatch) -> None:
    import grader.sandbox.bwrap as bwrap
    import grader.sandbox.uidlevel as uidlevel

    assert choose_isolation(False) == ("none", "--no-isolation")
    assert isinstance(backend_for("none"), PlainBackend)
    with pytest.raises(ValueError, match="unknown"):
        backend_for("docker")
    with pytest.raises(ValueError, match="unknown isolation level"):
        choose_isolation(True, "docker")
    no_bwrap = "bubblewrap (bwrap) cannot create its namespaces here (denied)"
    monkeypatch.setattr(bwrap, "unavailable", lambda: no_bwrap)
    monkeypatch.setattr(uidlevel, "uid_unavailable", lambda: None)
    assert choose_isolation(True) == ("uid", no_bwrap)  # root in a container: the uid level
    with pytest.raises(IsolationUnavailable, match="cannot create its namespaces"):
        choose_isolation(True, "bwrap")  # asked for bubblewrap only
    monkeypatch.setattr(uidlevel, "uid_unavailable", lambda: "needs the grader to run as root")
    with pytest.raises(IsolationUnavailable, match="--no-isolation") as info:
        choose_isolation(True)
    assert no_bwrap in str(info.value) and "as root" in str(info.value)
    with pytest.raises(IsolationUnavailable, match="as root"):
        choose_isolation(True, "uid")
    monkeypatch.setattr(bwrap, "unavailable", lambda: None)
    assert choose_isolation(True) == ("bwrap", "")
    assert backend_for("bwrap").isolated is True and backend_for("bwrap").level == "bwrap"
    assert backend_for("uid").level == "uid"


def test_a_wrapping_folder_or_a_lone_student_py(tmp_path: Path) -> None:
    student(tmp_path / "repo-main", "lab04", "A = 4\n")
    assert read_submission(tmp_path, LABS).files == {"lab04": "A = 4\n"}
    lone = tmp_path / "upload"
    lone.mkdir()
    (lone / "student.py").write_text("B = 1\n", encoding="utf-8")
    assert read_submission(lone, ("lab07",)).files == {"lab07": "B = 1\n"}
    assert read_submission(lone, LABS).files == {}  # which lab? only when one is graded
    zipped = make_zip(tmp_path / "lone.zip", {"student.py": "C = 2\n"})
    assert read_submission(zipped, ("lab04",)).files == {"lab04": "C = 2\n"}

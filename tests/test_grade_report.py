"""The class report: what it counts, that it needs no network, and how it looks in Chromium."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from grader.grade.checks import load_graded_lab
from grader.i18n import Text
from grader.labs import resolve_lab
from grader.render.classreport import failing_checks, render_class_report
from grader.results import BatchResult, CheckResult, LabResult, Status, SubmissionResult, TestResult


def lab(lab_id: str, statuses: list[Status], message: str = "expected 1, got 2") -> LabResult:
    tests = []
    for n, status in enumerate(statuses, 1):
        check = CheckResult(
            Text(f"检查 {n}", f"check {n}"),
            status,
            None if status is Status.PASS else Text(message, message),
        )
        tests.append(TestResult(f"t{n}", n, Text(f"测试 {n}", f"test {n}"), status, [check]))
    return LabResult(lab_id, Text("注意力", "attention"), "s.py", 0.1, tests)


def batch() -> BatchResult:
    P, F, E, T = Status.PASS, Status.FAIL, Status.ERROR, Status.TODO
    subs = [
        SubmissionResult("alice", "a", [lab("lab04", [P, P, P]), lab("lab07", [P, P])]),
        SubmissionResult("bob", "b", [lab("lab04", [P, F, P]), lab("lab07", [T, T])]),
        SubmissionResult(
            "<script>alert(1)</script>",
            "c",
            [lab("lab04", [P, F, E], "<b>not bold</b>"), lab("lab07", [P, F])],
        ),
        SubmissionResult("dave", "d", [lab("lab04", [P, E, F]), lab("lab07", [P, P])]),
    ]
    broken = lab("lab07", [Status.ERROR, Status.ERROR])
    broken.import_error = Text("SyntaxError: 语法", "SyntaxError: invalid syntax")
    subs.append(SubmissionResult("erin", "e", [lab("lab04", [P, P, P]), broken]))
    return BatchResult(["lab04", "lab07"], subs, complete=True, total=len(subs))


def test_the_checks_most_students_fail_come_first() -> None:
    found = failing_checks(batch(), "en")
    top = found[0]
    assert (top.lab, top.test, top.check, top.count) == ("lab04", "t2", "check 2", 3)
    assert top.message == "expected 1, got 2"  # 2 of the 3 say so
    assert [(f.lab, f.test, f.count) for f in found[1:]] == [
        ("lab04", "t3", 2),
        ("lab07", "", 1),
        ("lab07", "t2", 1),
    ]
    assert found[2].title == "student.py does not import"


def test_the_page_is_self_contained_and_escapes_student_text() -> None:
    page = render_class_report(batch(), "en")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=|url\(|@import|<script""", page, re.IGNORECASE)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;not bold&lt;/b&gt;" in page
    assert "mean 3, median 3, lowest 2, highest 5 (of 5)" in page  # totals 5, 2, 2, 3, 3
    assert "2/5 (40%)" in page  # lab07: alice and dave passed every test
    zh = render_class_report(batch(), "zh")
    assert "班级报告" in zh and "最多学生没通过的检查" in zh


def many_checks_lab(
    lab_id: str, failing: int, n_checks: int = 1, hidden: bool = False
) -> LabResult:
    """A lab of 3 tests; test t1 has `n_checks` checks, the first `failing` of which fail."""
    checks = [
        CheckResult(
            Text(f"检查 {i}", f"check {i}"),
            Status.FAIL if i <= failing else Status.PASS,
            Text("wrong", "wrong") if i <= failing else None,
        )
        for i in range(1, n_checks + 1)
    ]
    status = Status.FAIL if failing else Status.PASS
    tests = [TestResult("t1", 1, Text("测试 1", "test 1"), status, checks, hidden=hidden)]
    tests += [
        TestResult(f"t{n}", n, Text(f"测试 {n}", f"test {n}"), Status.PASS, []) for n in (2, 3)
    ]
    return LabResult(lab_id, Text("实验", "lab"), "s.py", 0.1, tests)


LABS13 = [f"lab{n:02d}" for n in range(1, 14)]


def test_checks_are_ranked_across_every_lab_and_one_bug_is_one_row() -> None:
    """Lab order no longer breaks ties: every lab's first failing check comes before any
    lab's second, and the 8 checks one student's bug fails are one row."""
    subs = [
        SubmissionResult(
            "mallory", "m", [many_checks_lab(lab, 8, 8) for lab in LABS13[:4]]
        ),  # one bug, 8 checks, in each of labs 01-04
        *(SubmissionResult(f"s{lab}", lab, [many_checks_lab(lab, 1)]) for lab in LABS13[4:]),
    ]
    found = failing_checks(BatchResult(LABS13, subs), "en")
    assert [f.lab for f in found] == LABS13  # one row per lab, each failed by one student
    assert [f.more for f in found[:4]] == [7, 7, 7, 7] and found[4].more == 0
    page = render_class_report(BatchResult(LABS13, subs), "en", limit=15)
    assert "lab13" in page.split("Checks most students fail")[1].split("Every submission")[0]
    assert "and 7 more checks of this test, failed by the same students" in page


def test_a_student_counts_once_and_a_hidden_check_is_labelled() -> None:
    subs = [
        SubmissionResult("a1", "a1", [many_checks_lab("lab04", 1, hidden=True)], student_id="a"),
        SubmissionResult("a2", "a2", [many_checks_lab("lab04", 1, hidden=True)], student_id="a"),
        SubmissionResult("b", "b", [many_checks_lab("lab04", 0)], student_id="b"),
    ]
    found = failing_checks(BatchResult(["lab04"], subs), "en")
    assert [(f.test, f.count, f.hidden) for f in found] == [("t1", 1, True)]
    page = render_class_report(BatchResult(["lab04"], subs), "en")
    assert "<span class=tag>hidden</span>" in page and "1/2 (50%)" in page


def test_more_failing_checks_than_the_limit_are_said() -> None:
    subs = [SubmissionResult("a", "a", [many_checks_lab(lab, 1) for lab in LABS13])]
    page = render_class_report(BatchResult(LABS13, subs), "en", limit=5)
    assert "8 more checks are not listed; each fails for at most 1 students." in page


def test_every_student_row_opens_on_their_full_report() -> None:
    page = render_class_report(batch(), "en")
    reports = re.findall(
        r"<details><summary>full report: (.*?)</summary><pre>(.*?)</pre>", page, re.S
    )
    assert [name for name, _ in reports] == [  # as the rows: by total, then name
        "alice",
        "dave",
        "erin",
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "bob",
    ]
    assert len(reports) == 5
    by_name = dict(reports)
    assert "Lab04 attention — verify" in by_name["alice"] and "Lab07" in by_name["alice"]
    assert "&lt;b&gt;not bold&lt;/b&gt;" in by_name["&lt;script&gt;alert(1)&lt;/script&gt;"]
    assert "<b>" not in "".join(by_name.values())  # the reports are escaped text
    assert not re.search(r"""(src|href)\s*=|url\(|@import|<script""", page, re.IGNORECASE)


def test_a_file_that_does_not_import_is_marked() -> None:
    page = render_class_report(batch(), "en")
    erin = page.split("<tr><td>erin</td>")[1].split("</tr>")[0]
    assert 'title="student.py does not import"' in erin
    assert "student.py does not import</p>" in page  # the legend under the table


def test_an_empty_submission_is_an_error_row_not_a_student_with_0_points() -> None:
    full = batch()
    full.submissions.append(SubmissionResult("zed", "z", []))
    full.submissions.append(SubmissionResult("yan", "y.zip", [], error="not a zip file"))
    page = render_class_report(full, "en")
    assert "mean 3, median 3, lowest 2, highest 5 (of 5)" in page  # as without them
    assert "2/5 (40%)" in page and " · 2 not graded" in page
    assert failing_checks(full, "en")[0].count == 3
    zed = page.split("<tr class=err><td>zed</td>")[1].split("</tr>")[0]
    assert "nothing to grade" in zed and "0/5" not in zed
    assert "<tr class=err><td>yan</td>" in page and "not a zip file" in page
    assert "full report: zed" not in page


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = next(
        (
            shutil.which(b)
            for b in ("chromium", "chromium-browser", "google-chrome")
            if shutil.which(b)
        ),
        None,
    )
    if browser is None:
        pytest.skip("no Chromium here: apt-get install chromium to check the page in a browser")
    page = tmp_path / "class.html"
    page.write_text(render_class_report(batch(), "zh"), encoding="utf-8")
    shot = tmp_path / "class.png"
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1200,1400",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    data = shot.read_bytes()
    assert png_size(data) == (1200, 1400)
    assert len(data) > 20_000, "a blank page compresses to almost nothing"


def test_grade_writes_the_report(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    for name, source in (("alice", "solutions"), ("bob", "labs")):
        target = tmp_path / name / "labs" / "lab04" / "student.py"
        target.parent.mkdir(parents=True)
        shutil.copyfile(root / source / "lab04" / "student.py", target)
    page = tmp_path / "class.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "grade",
            "alice",
            "bob",
            "--labs",
            "lab04",
            "--no-isolation",
            "--format",
            "csv",
            "--report",
            str(page),
            "--lang",
            "en",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr  # bob is short of full marks
    points = sum(s.points for s in load_graded_lab(resolve_lab("lab04")).tests)  # + hidden
    full = int(points)
    assert full == points, "printed as a whole number"
    rows = [f'"alice","",{full},{full},{full},{full},"",""', f'"bob","",0,{full},0,{full},"",""']
    assert proc.stdout.splitlines()[1:] == rows
    html = page.read_text(encoding="utf-8")
    assert "1/2 (50%)" in html and "<td>alice</td>" in html

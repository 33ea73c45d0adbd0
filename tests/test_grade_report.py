"""The class report: what it counts, that it needs no network, and how it looks in Chromium."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from grader.grade.classreport import failing_checks, render_class_report
from grader.grade.result import BatchResult, SubmissionResult
from grader.i18n import Text
from grader.results import CheckResult, LabResult, Status, TestResult


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
    assert proc.stdout.splitlines()[1:] == ['"alice",15,15,15,""', '"bob",0,0,15,""']
    html = page.read_text(encoding="utf-8")
    assert "1/2 (50%)" in html and "<td>alice</td>" in html

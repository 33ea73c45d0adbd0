"""Report rendering and the comparison messages a student reads."""

from __future__ import annotations

import io

import numpy as np
import pytest

from grader.compare import compare_allclose, compare_close
from grader.i18n import Text, default_lang
from grader.render.lab import print_report, render_plain
from grader.results import CheckResult, LabResult, Status, TestResult


def sample() -> LabResult:
    checks = [
        CheckResult(Text("形状", "shape"), Status.PASS),
        CheckResult(
            Text("数值", "values"),
            Status.FAIL,
            Text("期望 1，实际 2", "expected 1, got 2"),
            output="debug line\n",
        ),
    ]
    tests = [
        TestResult("a", 1, Text("第一个", "first"), Status.FAIL, checks),
        TestResult(
            "b",
            2,
            Text("第二个", "second"),
            Status.SKIP,
            [],
            Text("先让 [TEST 1] 通过", "needs [TEST 1] to pass first"),
        ),
    ]
    return LabResult("lab04", Text("多头自注意力", "Multi-head self-attention"), "x.py", 0.1, tests)


def test_plain_report_layout() -> None:
    text = render_plain(sample(), "en")
    lines = text.splitlines()
    assert lines[0] == "=" * 40 and lines[1] == "   Lab04 Multi-head self-attention — verify"
    assert "[TEST 1] first" in lines
    assert "  [PASS] shape" in lines and "  [FAIL] values" in lines
    assert "         expected 1, got 2" in lines
    assert "         | debug line" in lines
    assert "[TEST 2] second  [SKIP] needs [TEST 1] to pass first" in lines
    assert lines[-2] == "Result: 0/2 tests passed (1 failed, 1 skipped)"


def test_chinese_summary() -> None:
    assert "结果: 0/2 个测试通过（1 失败，1 跳过）" in render_plain(sample(), "zh")


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_on_a_terminal_and_not_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    tty = FakeTTY()
    print_report(sample(), "en", file=tty)
    assert "\x1b[" in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = FakeTTY()
    print_report(sample(), "en", file=tty)
    assert "\x1b[" not in tty.getvalue()
    tty = FakeTTY()
    monkeypatch.delenv("NO_COLOR")
    print_report(sample(), "en", file=tty, color=False)
    assert tty.getvalue() == render_plain(sample(), "en")


def test_close_rejects_nan_and_non_numbers() -> None:
    assert compare_close(float("nan"), 1.0, atol=1e9)[0] is False
    assert compare_close("1.0", 1.0, atol=0.1)[0] is False
    assert compare_close(True, 1.0, atol=0.1)[0] is False
    assert compare_close(1.05, 1.0, atol=0.1)[0] is True


def test_allclose_names_the_worst_cell() -> None:
    want = np.zeros((3, 4))
    got = want.copy()
    got[2, 1] = 5.0
    got[0, 0] = 0.5
    ok, msg = compare_allclose(got, want, atol=1e-3, rtol=0)
    assert not ok and msg is not None
    assert "worst at [2, 1]" in msg.en and "2/12 elements differ" in msg.en
    assert compare_allclose(np.full((2,), np.nan), np.zeros(2), atol=1e9, rtol=1)[0] is False
    ok, msg = compare_allclose(np.zeros((4, 3)), want, atol=1, rtol=0)
    assert not ok and msg is not None and "wrong shape" in msg.en


def test_default_language(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("MINILLM_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    assert default_lang() == "zh"
    monkeypatch.setenv("LANG", "en_GB.UTF-8")
    assert default_lang() == "en"
    monkeypatch.setenv("MINILLM_LANG", "zh")
    assert default_lang() == "zh"


def test_nan_cells_count_in_the_error_summary() -> None:
    from grader.compare import compare_allclose

    ok, msg = compare_allclose(
        np.array([1.0, float("nan"), 3.0]), np.array([1.0, 2.0, 3.0]), atol=1e-6, rtol=0.0
    )
    assert not ok and msg is not None
    assert "worst at [1]" in msg.en and "max abs error NaN" in msg.en
    assert "max abs error 0" not in msg.en


def test_an_output_flood_says_how_much_was_left_out() -> None:
    from grader.i18n import tr
    from grader.render.lab import render_plain
    from grader.results import CheckResult, LabResult, Status, TestResult

    kept = "".join(f"line {i}\n" for i in range(100))
    check = CheckResult(tr("x", "x"), Status.FAIL, None, kept, 1_000_000)
    result = LabResult(
        "lab04", tr("t", "t"), "s.py", 0.0, [TestResult("a", 1, tr("a", "a"), Status.FAIL, [check])]
    )
    text = render_plain(result, "en")
    assert "92 more lines not shown" in text
    assert "1000000 bytes printed in all" in text


def test_a_hint_is_shown_once_per_test() -> None:
    from grader.i18n import tr
    from grader.render.lab import render_plain
    from grader.results import CheckResult, LabResult, Status, TestResult

    same = [tr("提示", "the test's hint")]
    checks = [CheckResult(tr(n, n), Status.FAIL, None, "", 0, same) for n in ("a", "b")]
    own = CheckResult(tr("c", "c"), Status.FAIL, None, "", 0, [tr("另一个", "another hint")])
    test = TestResult("t", 1, tr("t", "t"), Status.FAIL, [*checks, own])
    text = render_plain(LabResult("lab04", tr("x", "x"), "s.py", 0.0, [test]), "en")
    assert text.count("hint: the test's hint") == 1
    assert text.count("hint: another hint") == 1

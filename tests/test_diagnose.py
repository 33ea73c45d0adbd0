"""Known bugs recognised from their output: fingerprints, the catalogue, and the report.

The catalogue's contents are tested against the mutants in tests/test_mutants.py (it is
what `make diagnoses` builds, and names each mutant's own bug); here, the parts.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from framework.tensor import tensor_from
from grader.diagnose import Catalogue, CatalogueError, diagnose, fingerprint, matches
from grader.diagnose.evidence import evidence_of, message_fingerprint
from grader.grade.wire import lab_from_wire, lab_to_wire
from grader.i18n import Text
from grader.render.classreport import known_bugs, render_class_report
from grader.render.lab import render_json, render_plain
from grader.results import (
    BatchResult,
    CheckResult,
    Diagnosis,
    LabResult,
    Status,
    SubmissionResult,
    TestResult,
)

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 5)).astype(np.float32)


# -- fingerprints ---------------------------------------------------------------------------


def test_the_same_values_computed_another_way_match() -> None:
    noisy = A.astype(np.float64) + 3e-7 * RNG.standard_normal(A.shape)  # float32 rounding
    known = fingerprint(tensor_from(A), atol=1e-6)
    assert known is not None
    seen = fingerprint(noisy, atol=1e-6)
    assert seen is not None
    assert matches(seen, known)


@pytest.mark.parametrize(
    "other",
    [
        A[:, :4],  # another shape
        A.T.copy(),  # another bug: the transpose
        A * 1.01,  # another scale
        np.where(np.arange(20).reshape(4, 5) == 7, A + 0.01, A),  # one cell off, none sampled?
    ],
    ids=["shape", "transposed", "scaled", "one-cell"],
)
def test_other_values_do_not_match(other: np.ndarray) -> None:
    known = fingerprint(A, atol=1e-6)
    seen = fingerprint(np.asarray(other, dtype=np.float32), atol=1e-6)
    assert known is not None and seen is not None
    assert not matches(seen, known)


def test_nan_matches_nan_only() -> None:
    b = A.copy()
    b[0, 0] = np.nan
    known = fingerprint(b)
    assert known is not None and matches(fingerprint(b.copy()) or {}, known)
    assert not matches(fingerprint(A) or {}, known)
    json.dumps(known, allow_nan=False)  # it is plain JSON


def test_plain_values_match_exactly() -> None:
    assert matches(fingerprint([1, 2, 3]) or {}, fingerprint((1, 2, 3)) or {})
    assert not matches(fingerprint([1, 2, 4]) or {}, fingerprint([1, 2, 3]) or {})
    assert fingerprint(None) is None


def test_a_message_fingerprint_ignores_where_the_line_is() -> None:
    a = message_fingerprint("raised IndexError: index 5 out of range (student.py:41)")
    b = message_fingerprint("raised IndexError: index 5 out of range (/tmp/x/student.py:97)")
    c = message_fingerprint("raised IndexError: index 6 out of range (student.py:41)")
    assert matches(a, b) and not matches(c, b)


def test_a_seed_note_is_not_part_of_a_message_fingerprint() -> None:
    base = "got 3.0, expected 4.0"
    noted = base + "\n(random input, seed=5)"
    assert matches(message_fingerprint(noted), message_fingerprint(base))


def test_evidence_falls_back_to_the_message() -> None:
    fp = evidence_of((None, 0.0, 0.0), Text("没有返回值", "returned None"), True)
    assert fp["k"] == "message" and fp["seeded"] is True


# -- the catalogue on a run ------------------------------------------------------------------


def _line(name: str, value: object, status: Status = Status.FAIL) -> CheckResult:
    fp = fingerprint(value, atol=1e-6) if status is not Status.PASS else None
    return CheckResult(Text(name, name), status, Text("x", "x"), evidence=fp)


def _run(*tests: tuple[str, list[CheckResult]]) -> LabResult:
    return LabResult(
        "lab04",
        Text("t", "t"),
        "student.py",
        0.0,
        [
            TestResult(tid, n, Text(tid, tid), Status.FAIL, checks)
            for n, (tid, checks) in enumerate(tests, 1)
        ],
    )


def _catalogue() -> Catalogue:
    cat = Catalogue("lab04")
    cat.add_run(
        "no_transpose",
        Text("K 没有转置", "K is not transposed"),
        _run(("scores", [_line("values", A), _line("other", A * 2)])),
    )
    cat.add_run(
        "wrong_scale",
        Text("缩放错了", "wrong scale"),
        _run(("scores", [_line("values", A)])),  # shares one line with no_transpose
    )
    return cat


def test_a_failed_line_that_looks_like_a_known_bug_is_diagnosed() -> None:
    run = _run(("scores", [_line("values", A + 1e-7), _line("other", A * 2)]))
    assert diagnose(run, _catalogue(), fixed_seeds=True) == 2
    assert [c.diagnosis.bug for c in run.tests[0].checks if c.diagnosis] == ["no_transpose"] * 2


def test_the_bug_that_explains_most_lines_wins_a_shared_line() -> None:
    run = _run(("scores", [_line("values", A)]))  # only the shared line fails
    diagnose(run, _catalogue(), fixed_seeds=True)
    # both match; no_transpose would also fail "other", which this run passes
    assert run.tests[0].checks[0].diagnosis == Diagnosis(
        "wrong_scale", Text("缩放错了", "wrong scale")
    )


def test_a_passing_line_is_never_diagnosed() -> None:
    line = _line("values", A, Status.PASS)
    line.evidence = fingerprint(A, atol=1e-6)  # even with the known bug's very values
    run = _run(("scores", [line]))
    assert diagnose(run, _catalogue(), fixed_seeds=True) == 0
    assert line.diagnosis is None


def test_under_a_run_seed_only_fixed_input_checks_are_diagnosed() -> None:
    cat = Catalogue("lab04")
    seeded = CheckResult(Text("v", "v"), Status.FAIL, None, evidence=fingerprint(A, seeded=True))
    cat.add_run("bug", Text("错", "bug"), _run(("t", [seeded])))
    again = CheckResult(Text("v", "v"), Status.FAIL, None, evidence=fingerprint(A, seeded=True))
    run = _run(("t", [again]))
    assert diagnose(run, cat, fixed_seeds=False) == 0
    assert diagnose(run, cat, fixed_seeds=True) == 1


def test_the_file_round_trips_and_holds_no_code(tmp_path: Path) -> None:
    path = tmp_path / "diagnoses.json"
    path.write_text(_catalogue().to_json(), encoding="utf-8")
    back = Catalogue.load(path)
    assert back.bugs == _catalogue().bugs and back.checks == _catalogue().checks
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert set(doc) == {"schema", "lab", "bugs", "checks"}
    assert "def " not in path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{", "not a readable JSON"),
        ('{"schema": 9}', "expected schema"),
        ('{"schema": 1}', "malformed"),
    ],
)
def test_a_broken_file_is_refused_with_its_name(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "diagnoses.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CatalogueError, match=why) as err:
        Catalogue.load(path)
    assert str(path) in str(err.value)


# -- what the student and the instructor see --------------------------------------------------


def _diagnosed() -> LabResult:
    run = _run(("scores", [_line("values", A), _line("other", A * 2)]))
    diagnose(run, _catalogue(), fixed_seeds=True)
    return run


def test_the_report_says_the_likely_cause_under_the_check() -> None:
    en, zh = render_plain(_diagnosed(), "en"), render_plain(_diagnosed(), "zh")
    assert "likely cause: K is not transposed" in en
    assert "可能的原因：K 没有转置" in zh
    clean = _run(("scores", [_line("values", A)]))
    assert "likely cause" not in render_plain(clean, "en")


def test_the_json_carries_each_checks_diagnosis() -> None:
    doc = render_json(_diagnosed(), "en")
    checks = doc["tests"][0]["checks"]
    assert checks[0]["diagnosis"] == {
        "bug": "no_transpose",
        "zh": "K 没有转置",
        "en": "K is not transposed",
    }


def test_a_diagnosis_crosses_the_wire() -> None:
    back = lab_from_wire(json.loads(json.dumps(lab_to_wire(_diagnosed()))))
    assert back.tests[0].checks[0].diagnosis == _diagnosed().tests[0].checks[0].diagnosis


def test_the_class_report_counts_students_per_known_bug() -> None:
    subs = [
        SubmissionResult(name, name, [_diagnosed() if name != "c" else _run(("scores", []))])
        for name in ("a", "b", "c")
    ]
    batch = BatchResult(["lab04"], subs)
    assert known_bugs(batch, "en") == [("lab04", "K is not transposed", 2)]
    assert "2 students: K is not transposed" in render_class_report(batch, "en")
    assert "2 名学生：K 没有转置" in render_class_report(batch, "zh")


def test_the_same_value_compared_with_something_else_is_another_bug() -> None:
    """A correct gradient fails against central differences of a wrong loss: which loss
    bug it is shows in what it was compared with, not in the gradient."""
    sum_loss = evidence_of((A, 1e-6, 0.0, A * 4), None, False)
    first_row = evidence_of((A, 1e-6, 0.0, A[::-1].copy()), None, False)
    assert not matches(first_row, sum_loss)
    assert matches(evidence_of((A + 1e-8, 1e-6, 0.0, A * 4), None, False), sum_loss)


def test_a_bug_is_ruled_out_by_a_check_this_run_passes() -> None:
    """Both bugs fail "values" like this run; only no_transpose also fails "other", which
    this run passes: so it is not no_transpose, whatever the votes."""
    other = _line("other", A * 2, Status.PASS)
    run = _run(("scores", [_line("values", A), other]))
    diagnose(run, _catalogue(), fixed_seeds=True)
    assert run.tests[0].checks[0].diagnosis is not None
    assert run.tests[0].checks[0].diagnosis.bug == "wrong_scale"
    cat = Catalogue("lab04")
    cat.add_run(
        "only", Text("唯一", "only"), _run(("scores", [_line("values", A), _line("other", A)]))
    )
    run = _run(("scores", [_line("values", A), _line("other", A, Status.PASS)]))
    assert diagnose(run, cat, fixed_seeds=True) == 0


def test_a_call_line_names_a_generator_the_same_in_every_run() -> None:
    """A line's name is its key in the catalogue: an address in it would never match."""
    import numpy as np

    from grader.explain import brief

    a, b = np.random.default_rng(0), np.random.default_rng(1)
    assert brief(a) == brief(b) == "Generator(PCG64)"

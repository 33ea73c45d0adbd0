"""A whole term's bookkeeping around one graded submission: its student on the roster, its
lateness against the deadline, and what a regrade takes from the previous result.

`TermState` rides along with a submission while the batch runs (`SubmissionState.term`);
`judge` decides, right after the submission was read, whether it was on time and what it
loses (`grader.grade.late`); `plan` decides which labs run and which are taken from
``--previous`` (`grader.grade.regrade`); `apply` writes all of it into the
`SubmissionResult`. A folder's or zip's file times are never evidence: without a roster's
``submitted_at`` its lateness is not judged (and the note says so).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from grader.dsl import Lab
from grader.grade.late import LatePolicy, format_time
from grader.grade.regrade import PreviousRow, file_hash, lab_from_doc, merge_test
from grader.grade.roster import Student
from grader.grade.submission import Taken
from grader.grade.wire import WireError
from grader.i18n import Text, tr
from grader.results import LabResult, SubmissionResult

__all__ = ["Lateness", "TermState", "apply", "judge", "plan", "shown"]

Fit = Callable[[LabResult, Lab], None]  # checks a result against the lab (`own_fields`)


@dataclass
class Lateness:
    """What the deadline made of one submission (see `SubmissionResult` for the fields)."""

    submitted_at: str = ""
    commit_date: str = ""
    late: bool = False
    days: int = 0
    fraction: float = 0.0
    late_commits: int = 0
    newest_late: str = ""
    nothing: Text | None = None  # set when no version is on time under ``on-time``
    note: Text | None = None


@dataclass
class TermState:
    """One submission's roster row, lateness and regrade plan."""

    student: Student | None = None
    on_roster: bool | None = None  # None: no roster was given
    lateness: Lateness | None = None
    missing: bool = False  # nothing to grade: no submission, or none on time
    files: dict[str, str] = field(default_factory=dict)  # lab id → hash of the graded file
    checks: dict[str, str] = field(default_factory=dict)  # lab id → hash of its checks
    reused: list[str] = field(default_factory=list)  # labs taken from --previous
    keep: dict[str, LabResult] = field(default_factory=dict)  # previous labs for --only-test


def judge(taken: Taken, at: int | None, due: int, policy: LatePolicy) -> Lateness:
    """The lateness of `taken` (read with the cutoff), from its commit's committer time
    for a git checkout whose history was read, else from `at` (the roster's time)."""
    out = Lateness()
    cut = format_time(policy.cutoff(due))
    if taken.late:
        out.late_commits = len(taken.late)
        out.newest_late = format_time(taken.late[0].time, taken.late[0].tz)
    if taken.kind == "git" and taken.note is None:
        if not taken.on_time and policy.kind == "on-time":
            n = out.late_commits
            out.nothing = tr(
                f"截止时间（{cut}）之前没有提交；之后有 {n} 个",
                f"no commit at or before the deadline ({cut}); {n} after it",
            )
            return out
        if taken.date is None:
            return out
        when = taken.date.time
        out.commit_date = out.submitted_at = format_time(when, taken.date.tz)
    elif at is not None:
        when, out.submitted_at = at, format_time(at)
        if policy.kind == "on-time" and when > policy.cutoff(due):
            out.nothing = tr(
                f"在截止时间（{cut}）之后才交：{out.submitted_at}",
                f"handed in after the deadline ({cut}): {out.submitted_at}",
            )
            return out
    else:
        out.note = tr(
            "文件夹和 zip 的文件时间不可信，又没有名单里的 submitted_at：没有判断是否迟交",
            "a folder's or zip's file times are no evidence and the roster gives no "
            "submitted_at: lateness was not judged",
        )
        return out
    out.days = policy.days_late(when, due)
    out.late = out.days > 0
    out.fraction = policy.fraction(out.days)
    return out


def _previous(
    row: PreviousRow | None, lab: Lab, now: tuple[str, str] | None, fit: Fit
) -> LabResult | None:
    """The previous result of `lab` if it may stand for a run: `now` (file hash, checks
    hash) unchanged, or any hashes when `now` is None."""
    if row is None or not row.usable or lab.id not in row.labs:
        return None
    if now is not None and (row.files.get(lab.id), row.checks.get(lab.id)) != now:
        return None
    try:
        result = lab_from_doc(row.labs[lab.id])
        fit(result, lab)
    except WireError:
        return None  # its tests are not the lab's now: run it
    return result


def plan(
    term: TermState,
    taken: Taken,
    labs: dict[str, Lab],
    checks: dict[str, str],
    row: PreviousRow | None,
    only: tuple[str, str],
    fit: Fit,
) -> tuple[dict[str, LabResult], tuple[str, ...]]:
    """(labs taken from `row`, labs to run) of a submission; `only` is (the labs of
    ``--only-lab``/``--only-test`` joined by commas, the test id) or ("", "")."""
    only_labs = tuple(filter(None, only[0].split(",")))
    reused: dict[str, LabResult] = {}
    run: list[str] = []
    for lab_id, lab in labs.items():
        if lab_id not in taken.files:
            continue
        now = (file_hash(taken.files[lab_id]), checks[lab_id])
        if row is None:
            prev = None
        elif lab_id in only_labs:
            prev = None
            kept = _previous(row, lab, None, fit) if only[1] else None
            if kept is not None:
                term.keep[lab_id] = kept
        else:
            prev = _previous(row, lab, None if only_labs else now, fit)
        if prev is not None and row is not None:
            reused[lab_id] = prev
            term.files[lab_id] = row.files.get(lab_id, "")
            term.checks[lab_id] = row.checks.get(lab_id, "")
        else:
            run.append(lab_id)
            term.files[lab_id], term.checks[lab_id] = now
    term.reused = list(reused)
    return reused, tuple(run)


def shown(term: TermState, result: LabResult, test_id: str) -> LabResult:
    """The lab as reported: with ``--only-test``, the previous lab with that test's new
    result; otherwise `result`."""
    kept = term.keep.get(result.lab)
    return merge_test(kept, result, test_id) if kept is not None and test_id else result


def apply(result: SubmissionResult, term: TermState) -> None:
    """Write the roster row, lateness and hashes into `result`."""
    s = term.student
    if s is not None:
        result.student_id, result.student_name, result.email = s.id, s.name, s.email
        result.section = s.section
    result.on_roster, result.missing = term.on_roster, term.missing
    result.hashes = {"files": dict(term.files), "checks": dict(term.checks)}
    result.reused = list(term.reused)
    late = term.lateness
    if late is not None:
        result.submitted_at, result.commit_date = late.submitted_at, late.commit_date
        result.late, result.days_late, result.penalty = late.late, late.days, late.fraction
        result.late_commits, result.newest_late = late.late_commits, late.newest_late
        if late.note is not None and not result.note:
            result.note, result.note_zh = late.note.en, late.note.zh
    if term.on_roster is False:
        result.note = "; ".join(filter(None, (result.note, "not on the roster")))
        result.note_zh = "；".join(filter(None, (result.note_zh, "不在名单上")))

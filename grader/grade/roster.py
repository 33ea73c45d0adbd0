"""A class roster (``minillm grade --roster roster.csv``): who the students are and where
each one's submission is.

A UTF-8 CSV file (a BOM is allowed) with a header row. Columns are found by their header,
in any order, case, spacing and ``_``/``-`` ignored:

    id             also: student id, sis user id, id number, student number   (required)
    submission     also: path, repo, repository, folder                      (required)
    name           also: student, full name
    email          also: email address
    section
    submitted_at   also: submitted at, submitted                              (optional)

A submission is a path, relative to the roster's folder unless absolute; an empty one
means the student handed nothing in. ``submitted_at`` (ISO 8601 with an offset) is when a
folder or zip was handed in, for ``--deadline`` (file times are not evidence: copying and
unzipping change them). Other columns are ignored. Two rows with one id, or one submission
path, are refused.

This module reads the roster, the instructor's own file; it never reads a submission.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path

from grader.grade.late import parse_time

__all__ = ["MAX_ROSTER", "Roster", "Student", "read_roster"]

MAX_ROSTER = 16 * 1024 * 1024  # bytes of a roster file
_NAMES = {
    "id": ("id", "studentid", "sisuserid", "idnumber", "studentnumber"),
    "submission": ("submission", "path", "repo", "repository", "folder"),
    "name": ("name", "student", "fullname"),
    "email": ("email", "emailaddress"),
    "section": ("section",),
    "submitted_at": ("submittedat", "submitted"),
}


@dataclass(frozen=True)
class Student:
    """One roster row; `path` is absolute and normalized ("" when nothing was handed in),
    `submitted_at` is seconds since the epoch (None when not given)."""

    id: str
    name: str
    email: str
    section: str
    path: str
    submitted_at: int | None = None


@dataclass(frozen=True)
class Roster:
    """The students, in the roster's order."""

    students: tuple[Student, ...]

    def find(self, path: Path) -> Student | None:
        """The student whose submission is at `path` (compared as absolute, normalized)."""
        key = _key(str(path))
        return next((s for s in self.students if s.path and _key(s.path) == key), None)


def _key(path: str) -> str:
    return os.path.normcase(os.path.normpath(os.path.abspath(path)))


def _norm(header: str) -> str:
    return "".join(c for c in header.lower() if c.isalnum())


def read_roster(path: Path) -> Roster:
    """The roster at `path` (see the module docstring).

    Raises:
        ValueError: unreadable, no header, a required column missing, a duplicate id or
            submission, a bad ``submitted_at`` (the message names the file and row).
    """
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_ROSTER + 1)
        if len(data) > MAX_ROSTER:
            raise ValueError(f"{path}: more than {MAX_ROSTER} bytes")
        text = data.decode("utf-8-sig")
    except OSError as e:
        raise ValueError(f"{path}: cannot be read ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        raise ValueError(f"{path}: empty; expected a header row id,name,email,submission")
    found = {_norm(h): n for n, h in enumerate(rows[0])}
    column = {
        key: next((found[a] for a in aliases if a in found), None)
        for key, aliases in _NAMES.items()
    }
    for key in ("id", "submission"):
        if column[key] is None:
            raise ValueError(
                f"{path}: no {key} column in the header {rows[0]!r:.200}; expected e.g. "
                "id,name,email,submission[,submitted_at]"
            )
    base = path.resolve().parent
    students: list[Student] = []
    for n, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue

        def cell(key: str, row: list[str] = row) -> str:
            i = column[key]
            return row[i].strip() if i is not None and i < len(row) else ""

        sid, where, when = cell("id"), cell("submission"), cell("submitted_at")
        if not sid:
            raise ValueError(f"{path}, row {n}: no student id")
        try:
            at = parse_time(when) if when else None
        except ValueError as e:
            raise ValueError(f"{path}, row {n}: submitted_at: {e}") from None
        full = os.path.normpath(base / where) if where else ""
        students.append(Student(sid, cell("name"), cell("email"), cell("section"), full, at))
    _unique(path, students)
    return Roster(tuple(students))


def _unique(path: Path, students: list[Student]) -> None:
    ids: set[str] = set()
    paths: set[str] = set()
    for s in students:
        if s.id in ids:
            raise ValueError(f"{path}: the id {s.id!r} is on two rows")
        if s.path and _key(s.path) in paths:
            raise ValueError(f"{path}: the submission {s.path!r} is on two rows")
        ids.add(s.id)
        if s.path:
            paths.add(_key(s.path))

"""Build each lab's catalogue of known bugs (``labs/labNN/diagnoses.json``) from its mutants.

    python -m grader.course.diagnoses             # every lab (``make diagnoses``)
    python -m grader.course.diagnoses lab04 lab07 # some labs
    python -m grader.course.diagnoses --check     # exit 1 when a file is out of date

Every mutant of the lab runs twice, at `verify`'s fixed seeds (a result that differs
between the two is marked unstable and never matched); the catalogue stores, per
check, the fingerprint of what each mutant's failed line saw, and the bug in the mutant's
own words (its docstring and ``# zh:`` line). The file is data only, so the student edition
can ship it without a line of mutant code. The figures printed for each lab are the ones
the course reports: how many mutants a report diagnoses as themselves (or as a mutant that
no check tells apart from them), with fixed seeds and under a run seed (`grade`), and the
file's size.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from grader.course.mutants import Mutant, load_mutants, run_mutant
from grader.diagnose.catalogue import FILENAME, Catalogue, diagnose
from grader.diagnose.evidence import matches
from grader.dsl import Lab
from grader.i18n import Text
from grader.labs import LabInfo, all_labs, load_lab, resolve_lab
from grader.results import LabResult
from grader.sandbox.client import Sandbox

__all__ = ["UNSTABLE", "Figures", "build_catalogue", "figures", "main", "same_catalogue"]


def _words(m: Mutant) -> Text:
    return Text(m.bug_zh or m.bug, m.bug)


UNSTABLE: dict[str, object] = {"k": "unstable"}  # matches nothing: a run-dependent result


def build_catalogue(
    lab_id: str,
    runs: Sequence[tuple[Mutant, LabResult]],
    again: Sequence[tuple[Mutant, LabResult]] = (),
) -> Catalogue:
    """The catalogue of a lab from its mutants' runs (in the order given).

    With `again`, a second run of the same mutants: a fingerprint that differs between the
    two (a bug that draws from the global random generator) is kept as `UNSTABLE`, which
    matches nothing, so that no student is told a cause from a coincidence."""
    catalogue = Catalogue(lab_id)
    for mutant, result in runs:
        catalogue.add_run(mutant.name, _words(mutant), result)
    if again:
        other = Catalogue(lab_id)
        for mutant, result in again:
            other.add_run(mutant.name, _words(mutant), result)
        for tid, keys in catalogue.checks.items():
            for key, entries in keys.items():
                twin = dict(other.checks.get(tid, {}).get(key, []))
                keys[key] = [
                    (b, fp if b in twin and matches(fp, twin[b]) else dict(UNSTABLE))
                    for b, fp in entries
                ]
    return catalogue


def _clear(result: LabResult) -> None:
    for t in result.tests:
        for c in t.checks:
            c.diagnosis = None


def _twins(catalogue: Catalogue) -> dict[str, set[str]]:
    """For each bug, the bugs that no check tells apart from it (itself included)."""
    where: dict[str, list[tuple[str, str, dict[str, object]]]] = {b: [] for b in catalogue.bugs}
    for tid, keys in catalogue.checks.items():
        for key, entries in keys.items():
            for b, fp in entries:
                where[b].append((tid, key, fp))

    def same(a: str, b: str) -> bool:
        fa, fb = where[a], where[b]
        if {(t, k) for t, k, _ in fa} != {(t, k) for t, k, _ in fb}:
            return False
        other = {(t, k): fp for t, k, fp in fb}
        return all(matches(fp, other[(t, k)]) for t, k, fp in fa)

    return {a: {b for b in catalogue.bugs if b == a or same(a, b)} for a in catalogue.bugs}


@dataclass
class Figures:
    """How well a lab's catalogue names its own mutants."""

    mutants: int
    named: int  # fixed seeds: the report's most frequent diagnosis is the mutant (or a twin)
    named_graded: int  # the same under a run seed (fixed-input checks only)
    wrong_lines: int  # diagnosed lines that name a bug which does not match the mutant there
    size: int  # bytes of the file
    unnamed: list[str]  # the mutants whose report does not name them


def _named(mutant: Mutant, result: LabResult, twins: set[str]) -> tuple[bool, int]:
    said = Counter(
        c.diagnosis.bug for t in result.tests for c in t.checks if c.diagnosis is not None
    )
    wrong = sum(n for b, n in said.items() if b not in twins)
    if not said:
        return False, wrong
    top = max(said.values())
    return any(b in twins for b, n in said.items() if n == top), wrong


def figures(
    catalogue: Catalogue, runs: Sequence[tuple[Mutant, LabResult]], size: int = 0
) -> Figures:
    """Diagnose every mutant's run with the catalogue, with fixed seeds and as under `grade`."""
    twins = _twins(catalogue)
    named = graded = wrong = 0
    unnamed: list[str] = []
    for mutant, result in runs:
        for fixed in (True, False):
            _clear(result)
            diagnose(result, catalogue, fixed_seeds=fixed)
            ok, bad = _named(mutant, result, twins.get(mutant.name, {mutant.name}))
            if fixed and not ok:
                unnamed.append(mutant.name)
            if fixed:
                named, wrong = named + ok, wrong + bad
            else:
                graded += ok
        _clear(result)
        diagnose(result, catalogue, fixed_seeds=True)
    return Figures(len(runs), named, graded, wrong, size, unnamed)


def same_catalogue(built: Catalogue, stored: Catalogue) -> list[str]:
    """What differs between a freshly built catalogue and a stored one (empty: none).

    Fingerprints are compared with `matches`, not byte for byte, so that another CPU's
    float rounding does not make the stored file stale; an unstable one matches any."""
    diffs: list[str] = []
    if built.bugs != stored.bugs:
        diffs.append("the bugs or their words differ")
    for tid in sorted(set(built.checks) | set(stored.checks)):
        a, b = built.checks.get(tid, {}), stored.checks.get(tid, {})
        for key in sorted(set(a) | set(b)):
            ea, eb = a.get(key, []), b.get(key, [])
            if [x for x, _ in ea] != [x for x, _ in eb]:
                diffs.append(f"[{tid}] {key}: bugs {[x for x, _ in ea]} vs {[x for x, _ in eb]}")
                continue
            for (bug, fa), (_, fb) in zip(ea, eb, strict=True):
                if fb != UNSTABLE and not matches(fa, fb):
                    diffs.append(f"[{tid}] {key}: {bug}'s fingerprint differs")
    return diffs


def run_all(
    info: LabInfo, sandbox: Sandbox, lab: Lab | None = None
) -> list[tuple[Mutant, LabResult]]:
    """Every mutant of the lab, run once at the fixed seeds."""
    lab = lab or load_lab(info)
    return [(m, run_mutant(m, info, sandbox, lab)) for m in load_mutants(info, lab)]


def _one(info: LabInfo, sandbox: Sandbox, check: bool, out: Callable[[str], None]) -> int:
    runs = run_all(info, sandbox)
    catalogue = build_catalogue(info.id, runs, run_all(info, sandbox))
    path = info.dir / FILENAME
    text = catalogue.to_json()
    if check:
        if not path.is_file():
            out(f"{info.id}: {path} is missing; run: make diagnoses")
            return 1
        diffs = same_catalogue(catalogue, Catalogue.load(path))
        if diffs:
            out(f"{info.id}: {path} is out of date ({diffs[0]}); run: make diagnoses")
            return 1
    else:
        path.write_text(text, encoding="utf-8")
    f = figures(catalogue, runs, len(text.encode("utf-8")))
    lines = sum(len(v) for keys in catalogue.checks.values() for v in keys.values())
    out(
        f"{info.id}: {f.named}/{f.mutants} mutants named as themselves "
        f"({f.named_graded}/{f.mutants} under a run seed), {lines} fingerprints, "
        f"{f.size / 1024:.1f} KiB, {f.wrong_lines} diagnosed lines name a bug that does not match"
        + (f"; not named: {', '.join(f.unnamed)}" if f.unnamed else "")
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    names = [a for a in args if not a.startswith("-")]
    infos = [resolve_lab(n) for n in names] if names else all_labs()
    status = 0
    with Sandbox() as sandbox:
        for info in infos:
            status = max(status, _one(info, sandbox, check, print))
    return status


if __name__ == "__main__":
    raise SystemExit(main())

"""A Gradescope autograder built from this course (`minillm gradescope-bundle OUT.zip`).

Gradescope unpacks the zip into ``/autograder/source``, runs ``setup.sh`` once (as root, to
build the image), then ``run_autograder`` once per submission, with the student's upload in
``/autograder/submission``; it reads ``/autograder/results/results.json``. The zip holds:

    setup.sh          installs Python >= 3.11, make and bubblewrap, and the course into
                      /autograder/venv
    run_autograder    minillm grade /autograder/submission --format gradescope, isolated:
                      under bubblewrap where it runs, else (Gradescope's Docker
                      containers refuse user namespaces, but run this as root) at the
                      uid level: each sandbox's code as an unprivileged uid of its own,
                      the hidden checks root's only. Where neither can run, score 0 and
                      a message that says so (a bundle built with --allow-unisolated
                      grades again with --no-isolation, which the results' first line
                      then says: student code can then read the hidden checks); if no
                      results.json came out, one with score 0 that says why
    course/           framework/, grader/, labs/ (no student.py), pyproject.toml, README.md
                      and solutions/<lab>/hidden.py: the hidden checks, never the reference
                      code

A student submits their repository (or a zip of it), or, for a bundle of a single lab, just
that lab's ``student.py``.

A bundle is never built with a hidden module that does not load (`BundleError`, with the
``file:line:`` of each problem): on Gradescope it would fail every submission.
"""

from __future__ import annotations

import shlex
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

from grader.errors import GraderError
from grader.grade.checks import hidden_problems
from grader.labs import LabInfo

__all__ = ["RUN_AUTOGRADER", "SETUP_SH", "BundleError", "build_bundle"]

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-pip make bubblewrap
PY=python3
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    # an older base image: take Python 3.11 from the distribution (or pick Ubuntu 24.04)
    apt-get install -y --no-install-recommends python3.11 python3.11-venv
    PY=python3.11
fi
"$PY" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --disable-pip-version-check --upgrade pip
"$ROOT/venv/bin/python" -m pip install --disable-pip-version-check -e "$ROOT/source/course"
"$ROOT/venv/bin/minillm" list
# the hidden checks are root's alone (the uid level runs student code as another user)
chmod -R go-rwx "$ROOT/source/course/solutions" 2>/dev/null || true
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission; it must leave results/results.json behind.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
RESULTS="$ROOT/results/results.json"
ALLOW_UNISOLATED={fallback}  # gradescope-bundle --allow-unisolated
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
cd "$ROOT/source/course"
grade() {{
    "$ROOT/venv/bin/minillm" grade "$ROOT/submission" --format gradescope --out "$RESULTS" \\
        --lang {lang}{labs} "$@"
}}
grade
status=$?
if [ "$status" -eq 2 ] && [ ! -s "$RESULTS" ]; then
    if [ "$ALLOW_UNISOLATED" = yes ]; then
        echo "isolation is not available here: grading again without it" >&2
        grade --no-isolation
        status=$?
    else
        echo "neither bubblewrap nor the uid level can run here: nothing graded" \
            "(gradescope-bundle --allow-unisolated grades without isolation, where student" \
            "code can read the hidden checks)" >&2
        cat > "$RESULTS" <<'EOF'
{{
  "score": 0,
  "output": "Submissions cannot be isolated here, so none is run. Please tell the course staff.",
  "tests": []
}}
EOF
    fi
fi
if [ ! -s "$RESULTS" ]; then
    cat > "$RESULTS" <<'EOF'
{{
  "score": 0,
  "output": "The autograder could not grade this submission. Please tell the course staff.",
  "tests": []
}}
EOF
fi
echo "minillm grade exit status: $status" >&2
exit 0
"""


class BundleError(GraderError, ValueError):
    """A course that cannot make a bundle; the message has one ``file:line:`` line a problem."""


def _add(zf: zipfile.ZipFile, name: str, text: str, mode: int) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, text)


def _skip(folder: str, names: list[str]) -> set[str]:
    ignored = {"__pycache__", ".minillm", ".pytest_cache"}
    return {n for n in names if n in ignored or n.endswith((".pyc", ".bak"))}


def build_bundle(
    source: Path,
    out: Path,
    labs: Sequence[LabInfo],
    *,
    only_labs: bool,
    lang: str = "zh",
    fallback: bool = False,
) -> list[str]:
    """Write the autograder zip to `out`; the names of the files in it.

    Args:
        source: the instructor's course.
        out: the zip to write (replaced if it exists).
        labs: the labs to grade.
        only_labs: pass ``--labs`` (the labs were chosen) rather than grade every lab.
        lang: the language of the results students read.
        fallback: grade without isolation where bubblewrap cannot run, where student code
            can read the hidden checks (default: score 0 and a message that says so).

    Raises:
        BundleError: a lab's hidden checks do not load (nothing is written).
    """
    problems = hidden_problems(LabInfo(i.id, source / "labs" / i.id) for i in labs)
    if problems:
        raise BundleError("\n".join(problems))
    labs_arg = f" --labs {shlex.quote(','.join(i.id for i in labs))}" if only_labs else ""
    run = RUN_AUTOGRADER.format(
        lang=shlex.quote(lang), labs=labs_arg, fallback="yes" if fallback else "no"
    )
    with tempfile.TemporaryDirectory(prefix="minillm-bundle-") as tmp:
        course = Path(tmp) / "course"
        for package in ("framework", "grader"):
            shutil.copytree(source / package, course / package, ignore=_skip)
        for info in labs:
            shutil.copytree(
                info.dir,
                course / "labs" / info.id,
                ignore=shutil.ignore_patterns("student.py", "*.bak", "__pycache__", ".minillm"),
            )
            hidden = source / "solutions" / info.id / "hidden.py"
            if hidden.is_file():
                (course / "solutions" / info.id).mkdir(parents=True)
                shutil.copyfile(hidden, course / "solutions" / info.id / "hidden.py")
        shutil.copyfile(source / "labs" / "lab.mk", course / "labs" / "lab.mk")
        shutil.copyfile(source / "pyproject.toml", course / "pyproject.toml")
        shutil.copyfile(source / "README.md", course / "README.md")
        out.parent.mkdir(parents=True, exist_ok=True)
        names = ["setup.sh", "run_autograder"]
        with zipfile.ZipFile(out, "w") as zf:
            _add(zf, "setup.sh", SETUP_SH, 0o755)
            _add(zf, "run_autograder", run, 0o755)
            for path in sorted(course.rglob("*")):
                if path.is_file():
                    name = "course/" + path.relative_to(course).as_posix()
                    zf.write(path, name, compress_type=zipfile.ZIP_DEFLATED)
                    names.append(name)
    return names

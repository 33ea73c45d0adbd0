"""The Gradescope autograder bundle, run as Gradescope runs it, and the GitHub Actions template."""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import stat
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
import yaml

from grader.grade.run import IsolationUnavailable, choose_isolation
from grader.labs import resolve_lab
from grader.mutants import compose, parse_mutant

ROOT = Path(__file__).resolve().parent.parent


def bundle(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "autograder.zip"
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "gradescope-bundle", str(out), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def test_the_bundle_holds_the_scripts_and_the_hidden_checks_but_no_solution(
    tmp_path: Path,
) -> None:
    with zipfile.ZipFile(bundle(tmp_path, "--labs", "lab04,lab07")) as zf:
        names = zf.namelist()
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        run = zf.read("run_autograder").decode()
        setup = zf.read("setup.sh").decode()
    assert names[:2] == ["setup.sh", "run_autograder"]
    assert all(modes[n] & stat.S_IXUSR for n in names[:2])
    assert "course/solutions/lab04/hidden.py" in names
    assert "course/solutions/lab07/hidden.py" in names
    assert "course/labs/lab04/verify.py" in names and "course/pyproject.toml" in names
    assert not [n for n in names if n.endswith("student.py") or "/tests/" in n]
    assert not [n for n in names if "lab01" in n]  # only the labs asked for
    assert "--labs lab04,lab07" in run and "--format gradescope" in run
    assert "bubblewrap" in setup and "pip install" in setup
    for script in (run, setup):
        assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0


def light_venv(where: Path, course: Path) -> None:
    """What setup.sh builds, without apt or pip: a venv that imports the bundle's course."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(where)
    lib = where / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    paths = [str(course), *(p for p in site.getsitepackages() if Path(p).is_dir())]
    (lib / "site-packages" / "course.pth").write_text("\n".join(paths) + "\n", encoding="utf-8")
    script = where / "bin" / "minillm"
    script.write_text(f"#!{where / 'bin' / 'python'}\nfrom grader.entry import main\nmain()\n")
    script.chmod(0o755)


def autograder(tmp_path: Path, zip_path: Path) -> Path:
    root = tmp_path / "autograder"
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):
        (root / "source" / name).chmod(0o755)
    light_venv(root / "venv", root / "source" / "course")
    (root / "submission").mkdir()
    return root


def run_autograder(root: Path) -> dict[str, object]:
    env = {**os.environ, "AUTOGRADER_ROOT": str(root)}
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run(
        [str(root / "source" / "run_autograder")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def test_run_autograder_grades_an_upload_as_gradescope_would(tmp_path: Path) -> None:
    from grader.isolation import unavailable  # bubblewrap runs here, or the results say not

    extra = ("--allow-unisolated",) if unavailable() else ()
    root = autograder(tmp_path, bundle(tmp_path, "--labs", "lab04", "--lang", "en", *extra))
    info = resolve_lab("lab04")
    wrong = parse_mutant(ROOT / "tests/fixtures/hidden_mutants/lab04/mask_numpy_checks_shape.py")
    upload = root / "submission" / "student.py"  # a one-lab assignment: just the file
    upload.write_text(compose(info.solution.read_text(encoding="utf-8"), wrong), "utf-8")
    doc = run_autograder(root)
    assert doc["score"] == 14
    tests = doc["tests"]
    assert isinstance(tests, list) and len(tests) == 15
    failed = [t for t in tests if t["status"] == "failed"]
    assert [(t["visibility"], t["max_score"]) for t in failed] == [("after_published", 1.0)]
    first = str(doc["output"]).splitlines()[0]
    assert first.startswith("NOT isolated") == (unavailable() is not None), first


NO_BWRAP = """#!/bin/sh
# minillm grade where bubblewrap cannot run: refuses (2) unless told --no-isolation
for a in "$@"; do
    if [ "$a" = --no-isolation ]; then echo "$@" > "$AUTOGRADER_ROOT/unisolated"; exit 1; fi
done
exit 2
"""


@pytest.mark.parametrize("allow", [False, True], ids=["default", "allow-unisolated"])
def test_without_isolation_the_bundle_grades_nothing_unless_allowed(
    tmp_path: Path, allow: bool
) -> None:
    extra = ("--allow-unisolated",) if allow else ()
    root = autograder(tmp_path, bundle(tmp_path, "--labs", "lab04", *extra))
    (root / "venv" / "bin" / "minillm").write_text(NO_BWRAP)
    doc = run_autograder(root)
    assert (root / "unisolated").exists() == allow  # student code ran unisolated only then
    assert doc["score"] == 0
    if not allow:
        assert "cannot be isolated here" in str(doc["output"]), doc


def test_run_autograder_always_leaves_a_result(tmp_path: Path) -> None:
    root = autograder(tmp_path, bundle(tmp_path, "--labs", "lab04"))
    (root / "venv" / "bin" / "minillm").write_text("#!/bin/sh\nexit 1\n")  # crashed
    doc = run_autograder(root)
    assert doc["score"] == 0 and "could not grade" in str(doc["output"])


def test_the_github_actions_template() -> None:
    text = (ROOT / "ci-templates" / "github-actions.yml").read_text(encoding="utf-8")
    assert "\t" not in text
    assert re.search(r"minillm grade \"\$GITHUB_WORKSPACE\" --format github", text)
    assert "apt-get install -y --no-install-recommends bubblewrap" in text
    assert "pip install --disable-pip-version-check -e ./.minillm-course" in text
    assert "vars.MINILLM_COURSE_REPO" in text
    doc = yaml.safe_load(text)
    steps = doc["jobs"]["grade"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    assert steps[1]["with"]["path"] == ".minillm-course"
    assert any("minillm grade" in s.get("run", "") for s in steps)
    assert doc["permissions"] == {"contents": "read"}


def test_the_template_grades_a_checkout_as_the_workflow_does(tmp_path: Path) -> None:
    """The Grade step, run from the course checkout against the student's workspace."""
    workspace = tmp_path / "student-repo"
    target = workspace / "labs" / "lab04" / "student.py"
    target.parent.mkdir(parents=True)
    shutil.copyfile(ROOT / "labs" / "lab04" / "student.py", target)
    (workspace / ".minillm-course").mkdir()  # the course checkout lives inside it
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_WORKSPACE": str(workspace), "GITHUB_STEP_SUMMARY": str(summary)}
    try:  # the workflow installs bubblewrap; a machine without it grades unisolated
        choose_isolation(True)
        extra: tuple[str, ...] = ()
    except IsolationUnavailable:
        extra = ("--no-isolation",)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "grade",
            str(workspace),
            "--format",
            "github",
            "--labs",
            "lab04",
            "--lang",
            "en",
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 1
    assert "::error file=labs/lab04/student.py,line=" in proc.stdout
    assert proc.stdout.rstrip().endswith("::score 0/15")
    assert "## miniLLM — student-repo: 0/15" in summary.read_text(encoding="utf-8")

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
from typing import Any

import pytest
import yaml

from grader.course.mutants import compose, parse_mutant
from grader.grade.backends import IsolationUnavailable, choose_isolation
from grader.grade.checks import load_graded_lab
from grader.labs import resolve_lab

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
    script.write_text(f"#!{where / 'bin' / 'python'}\nfrom grader.__main__ import main\nmain()\n")
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
    from grader.sandbox.bwrap import unavailable  # bubblewrap runs here, or the results say not

    extra = ("--allow-unisolated",) if unavailable() else ()
    root = autograder(tmp_path, bundle(tmp_path, "--labs", "lab04", "--lang", "en", *extra))
    info = resolve_lab("lab04")
    wrong = parse_mutant(ROOT / "tests/fixtures/hidden_mutants/lab04/mask_numpy_checks_shape.py")
    upload = root / "submission" / "student.py"  # a one-lab assignment: just the file
    upload.write_text(compose(info.solution.read_text(encoding="utf-8"), wrong), "utf-8")
    doc = run_autograder(root)
    graded = load_graded_lab(info).tests  # public + hidden
    assert doc["score"] == sum(s.points for s in graded if s.id not in wrong.fails)
    tests = doc["tests"]
    assert isinstance(tests, list) and len(tests) == len(graded)
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


TEMPLATE = ROOT / "ci-templates" / "github-actions.yml"


def template() -> dict[str, Any]:
    doc = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def step(doc: dict[str, Any], name: str) -> dict[str, Any]:
    steps = doc["jobs"]["grade"]["steps"]
    found: list[dict[str, Any]] = [s for s in steps if s.get("name") == name]
    assert len(found) == 1, f"no single step named {name!r}"
    return found[0]


VAR = re.compile(r"^\$\{\{ vars\.(\w+)(?: \|\| '([^']*)')? \}\}$")


def job_env(doc: dict[str, Any], variables: dict[str, str]) -> dict[str, str]:
    """The job's `env:` as GitHub evaluates it, given the repository's variables."""
    env = {}
    for key, value in doc["jobs"]["grade"]["env"].items():
        m = VAR.match(value)
        assert m, f"{key}: {value!r} is not `${{{{ vars.X || 'default' }}}}`"
        env[key] = variables.get(m[1]) or (m[2] or "")
    return env


def run_step(
    doc: dict[str, Any],
    name: str,
    tmp_path: Path,
    variables: dict[str, str],
    cwd: Path,
    extra_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the step's script as `shell: bash` does, with only the environment given."""
    assert doc["jobs"]["grade"]["defaults"] == {"run": {"shell": "bash"}}
    script = tmp_path / f"{name.replace(' ', '-')}.sh"
    script.write_text(str(step(doc, name)["run"]), encoding="utf-8")
    env = {
        "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        **job_env(doc, variables),
        **(extra_env or {}),
    }
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )


def test_the_github_actions_template() -> None:
    text = (ROOT / "ci-templates" / "github-actions.yml").read_text(encoding="utf-8")
    assert "\t" not in text
    assert re.search(r"minillm grade \"\$GITHUB_WORKSPACE\" --format github", text)
    assert "apt-get install -y --no-install-recommends bubblewrap" in text
    assert "pip install --disable-pip-version-check -e ./.minillm-course" in text
    assert "vars.MINILLM_COURSE_REPO" in text
    doc = yaml.safe_load(text)
    steps = doc["jobs"]["grade"]["steps"]
    assert step(doc, "Check out the submission")["uses"].startswith("actions/checkout@")
    assert step(doc, "Check out the course")["with"]["path"] == ".minillm-course"
    assert any("minillm grade" in s.get("run", "") for s in steps)
    assert doc["permissions"] == {"contents": "read"}
    for s in steps:  # every script parses as bash
        if "run" in s:
            assert subprocess.run(["bash", "-n"], input=s["run"], text=True).returncode == 0


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
    points = sum(s.points for s in load_graded_lab(resolve_lab("lab04")).tests)
    total = int(points)
    assert total == points, "printed as a whole number"
    assert proc.stdout.rstrip().endswith(f"::score 0/{total}")
    assert f"## miniLLM — student-repo: 0/{total}" in summary.read_text(encoding="utf-8")


COURSE = {"MINILLM_COURSE_REPO": "my-school/minillm-lab-student"}


def test_without_a_course_repo_the_workflow_stops_before_anything_runs(tmp_path: Path) -> None:
    doc = template()
    steps = doc["jobs"]["grade"]["steps"]
    assert steps[0]["name"] == "Check the configuration" and "uses" not in steps[0]
    proc = run_step(doc, "Check the configuration", tmp_path, {}, tmp_path)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "::error" in out and "Set MINILLM_COURSE_REPO" in out
    assert "repository variable" in out and "organisation variable" in out
    assert run_step(doc, "Check the configuration", tmp_path, COURSE, tmp_path).returncode == 0


def test_the_configuration_check_refuses_an_unknown_fail_on(tmp_path: Path) -> None:
    doc = template()
    variables = {**COURSE, "MINILLM_FAIL_ON": "sometimes"}
    proc = run_step(doc, "Check the configuration", tmp_path, variables, tmp_path)
    assert proc.returncode != 0 and "started (the default), all or never" in proc.stdout
    for ok in ("started", "all", "never"):
        variables["MINILLM_FAIL_ON"] = ok
        assert (
            run_step(doc, "Check the configuration", tmp_path, variables, tmp_path).returncode == 0
        )


def test_third_party_actions_are_pinned_by_commit() -> None:
    doc = template()
    uses = [s["uses"] for s in doc["jobs"]["grade"]["steps"] if "uses" in s]
    assert uses
    for u in uses:
        if u.startswith(("./", "docker://")):
            continue
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", u), f"{u} is not pinned by a SHA"
    lines = [ln for ln in TEMPLATE.read_text(encoding="utf-8").splitlines() if "uses:" in ln]
    assert len(lines) == len(uses)
    for line in lines:  # the version it is, for a reader and for Dependabot
        assert re.search(r"@[0-9a-f]{40} # v\d+(\.\d+)*$", line), line


def test_the_course_is_checked_out_at_a_release_tag(tmp_path: Path) -> None:
    doc = template()
    course = step(doc, "Check out the course")["with"]
    assert course["ref"] == "${{ env.MINILLM_COURSE_REF }}"
    assert course["repository"] == "${{ env.MINILLM_COURSE_REPO }}"
    default = job_env(doc, {})["MINILLM_COURSE_REF"]
    assert re.fullmatch(r"v\d+(\.\d+)*", default), default  # a tag, not a moving branch
    assert job_env(doc, {"MINILLM_COURSE_REF": "v2.1"})["MINILLM_COURSE_REF"] == "v2.1"
    readme = (ROOT / "ci-templates" / "README.md").read_text(encoding="utf-8")
    assert "the tag of the term's course release" in readme and f"`{default}`" in readme
    variables = {**COURSE, "MINILLM_COURSE_REF": "main"}  # a branch is allowed, with a warning
    proc = run_step(doc, "Check the configuration", tmp_path, variables, tmp_path)
    assert proc.returncode == 0 and "::warning::" in proc.stdout


def test_pip_downloads_are_cached_by_the_course_release() -> None:
    doc = template()
    names = [s.get("name") for s in doc["jobs"]["grade"]["steps"]]
    python = step(doc, "Set up Python")
    assert str(python["uses"]).startswith("actions/setup-python@")
    assert python["with"]["cache"] == "pip"
    # the key hashes the course's pyproject.toml, so it exists first: the course is checked out
    assert python["with"]["cache-dependency-path"] == ".minillm-course/pyproject.toml"
    assert names.index("Check out the course") < names.index("Set up Python")
    assert names.index("Set up Python") < names.index("Install the course")


STUB_MINILLM = """#!/bin/sh
printf '%s\\n' "$@" > "$CALLS"
exit "$STUB_EXIT"
"""


def fake_course(tmp_path: Path) -> tuple[Path, Path]:
    """A course with lab01..lab03 and a workspace where only lab02 has been started."""
    course, workspace = tmp_path / "course", tmp_path / "workspace"
    for n in (1, 2, 3):
        lab = course / "labs" / f"lab0{n}"
        lab.mkdir(parents=True)
        (lab / ".stub.py").write_text(f"def f{n}():\n    raise NotImplementedError\n")
        (lab / "student.py").write_text((lab / ".stub.py").read_text())
    (course / "labs" / "lab.mk").write_text("")
    (course / "labs" / "HANDOUT.md").write_text("")
    for n, text in (
        (1, "def f1():\n    raise NotImplementedError\n"),
        (2, "def f2():\n    return 2\n"),
    ):
        mine = workspace / "labs" / f"lab0{n}" / "student.py"  # lab01 the stub, lab02 started
        mine.parent.mkdir(parents=True)
        mine.write_text(text)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "minillm").write_text(STUB_MINILLM)
    (tmp_path / "bin" / "minillm").chmod(0o755)
    return course, workspace


def grade_step(
    tmp_path: Path, variables: dict[str, str], stub_exit: int, course: Path, workspace: Path
) -> tuple[subprocess.CompletedProcess[str], list[str] | None]:
    calls = tmp_path / "calls"
    extra = {"GITHUB_WORKSPACE": str(workspace), "CALLS": str(calls), "STUB_EXIT": str(stub_exit)}
    proc = run_step(template(), "Grade", tmp_path, {**COURSE, **variables}, course, extra)
    args = calls.read_text().splitlines() if calls.exists() else None
    return proc, args


ALL = "lab01,lab02,lab03"


@pytest.mark.parametrize(
    ("variables", "stub_exit", "status", "labs"),
    [
        ({}, 0, 0, "lab02"),  # the default, started: only the labs begun, failing if short
        ({}, 1, 1, "lab02"),
        ({}, 3, 3, "lab02"),  # a submission that could not be graded always fails
        ({"MINILLM_FAIL_ON": "started", "MINILLM_LABS": "lab01,lab02"}, 1, 1, "lab02"),
        ({"MINILLM_FAIL_ON": "all"}, 1, 1, ALL),
        ({"MINILLM_FAIL_ON": "all", "MINILLM_LABS": "lab03, lab01"}, 0, 0, "lab03,lab01"),
        ({"MINILLM_FAIL_ON": "never"}, 1, 0, ALL),  # reported, not enforced
        ({"MINILLM_FAIL_ON": "never"}, 2, 2, ALL),
        ({"MINILLM_FAIL_ON": "never"}, 3, 3, ALL),
        ({"MINILLM_FAIL_ON": "never"}, 143, 143, ALL),  # a cancelled run is not a pass
    ],
)
def test_the_grade_step_chooses_the_labs_and_the_exit_status(
    tmp_path: Path, variables: dict[str, str], stub_exit: int, status: int, labs: str
) -> None:
    course, workspace = fake_course(tmp_path)
    proc, args = grade_step(tmp_path, variables, stub_exit, course, workspace)
    assert proc.returncode == status, proc.stdout + proc.stderr
    assert args == ["grade", str(workspace), "--format", "github", "--jobs", "2", "--labs", labs]


def test_with_no_lab_started_nothing_is_graded_and_the_job_passes(tmp_path: Path) -> None:
    course, workspace = fake_course(tmp_path)
    (workspace / "labs" / "lab02" / "student.py").write_bytes(
        (course / "labs" / "lab02" / ".stub.py").read_bytes()
    )
    proc, args = grade_step(tmp_path, {}, 1, course, workspace)
    assert proc.returncode == 0 and args is None
    assert "::notice" in proc.stdout
    assert "nothing graded" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_a_lab_the_course_lacks_fails_the_grade_step(tmp_path: Path) -> None:
    course, workspace = fake_course(tmp_path)
    proc, args = grade_step(tmp_path, {"MINILLM_LABS": "lab02,lab09"}, 0, course, workspace)
    assert proc.returncode != 0 and args is None
    assert "'lab09'" in proc.stdout


def test_a_started_lab_is_one_whose_student_file_is_not_the_shipped_stub(tmp_path: Path) -> None:
    """Against this course's own labs/: the stub a student edition ships as labs/labNN/.stub.py."""
    _, workspace = fake_course(tmp_path)
    shutil.rmtree(workspace / "labs")
    for lab in ("lab04", "lab07"):
        (workspace / "labs" / lab).mkdir(parents=True)
        shutil.copyfile(ROOT / "labs" / lab / ".stub.py", workspace / "labs" / lab / "student.py")
    with (workspace / "labs" / "lab07" / "student.py").open("a", encoding="utf-8") as f:
        f.write("\n# started\n")
    proc, args = grade_step(tmp_path, {}, 1, ROOT, workspace)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert args is not None and args[-2:] == ["--labs", "lab07"]


FAILING_BWRAP = """#!/bin/sh
# bubblewrap in a Docker container under the default seccomp profile
echo "bwrap: No permissions to creating new namespace, likely because the kernel does not \
allow non-privileged user namespaces." >&2
exit 1
"""

PROBE_HIDDEN = """
import glob as _glob
import os as _os

def _tries():
    paths = _glob.glob(SOURCE + "/course/solutions/*/hidden.py")
    paths += [SOURCE + "/course/solutions/lab04/hidden.py"]
    for run in sorted(_glob.glob("/tmp/minillm-grade-*"), key=_os.path.getmtime)[-3:]:
        paths += [run + "/private/lab04/hidden.py", run + "/private"]
    seen = []
    for path in dict.fromkeys(paths):
        try:
            if _os.path.isdir(path):
                seen.append(path + "=LISTED" + repr(_os.listdir(path)))
            else:
                seen.append(path + "=READ" + open(path).read()[:200])
        except OSError as e:
            seen.append(path + "=" + type(e).__name__)
    return seen

def attention_scores(q, k, scale):
    raise RuntimeError("TRIED[" + "|".join(_tries()) + "]uid=" + str(_os.getuid()))

def apply_mask(scores, mask):
    raise NotImplementedError

def softmax(x):
    raise NotImplementedError
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="the uid level is for a grader that runs as root (Gradescope's containers)",
)
def test_where_bubblewrap_cannot_run_the_uid_level_keeps_the_hidden_checks_unreadable(
    tmp_path: Path,
) -> None:
    import tempfile

    from grader.sandbox.uidlevel import uid_unavailable

    if uid_unavailable():
        pytest.skip(str(uid_unavailable()))
    # a folder every user may pass through, as /autograder is (pytest's own is private)
    place = Path(tempfile.mkdtemp(prefix="minillm-gradescope-", dir="/tmp"))
    try:
        place.chmod(0o711)
        root = autograder(place, bundle(tmp_path, "--labs", "lab04", "--lang", "en"))
        fake = place / "fake-bin"
        fake.mkdir()
        (fake / "bwrap").write_text(FAILING_BWRAP)
        (fake / "bwrap").chmod(0o755)
        probe = PROBE_HIDDEN.replace("SOURCE", repr(str(root / "source")))
        (root / "submission" / "student.py").write_text(probe, encoding="utf-8")
        env = {**os.environ, "AUTOGRADER_ROOT": str(root), "TMPDIR": "/tmp"}
        env["PATH"] = f"{fake}:{env.get('PATH', '/usr/bin:/bin')}"
        env.pop("VIRTUAL_ENV", None)
        proc = subprocess.run(
            [str(root / "source" / "run_autograder")],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        text = (root / "results" / "results.json").read_text(encoding="utf-8")
        doc = json.loads(text)
        assert str(doc["output"]).startswith("isolation: the uid level"), doc["output"]
        tried = re.search(r"TRIED\[(.*?)\]uid=(\d+)", text)
        assert tried, text[:3000]
        assert int(tried.group(2)) != 0  # the student's code did not run as root
        attempts = tried.group(1).split("|")
        assert any("/course/solutions/lab04/hidden.py=PermissionError" in a for a in attempts)
        assert any("/private/lab04/hidden.py=PermissionError" in a for a in attempts), attempts
        assert not [a for a in attempts if "=READ" in a or "=LISTED" in a], attempts
        hidden = (ROOT / "solutions" / "lab04" / "hidden.py").read_text(encoding="utf-8")
        assert "def register" in hidden and "def register" not in text
    finally:
        shutil.rmtree(place, ignore_errors=True)

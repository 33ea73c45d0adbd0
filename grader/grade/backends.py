"""The three isolation levels of `minillm grade`, as backends of `grader.grade.run`.

- ``bwrap`` (`IsolatedBackend`): every sandbox under bubblewrap, in namespaces of its own,
  seeing the course's packages and the lab's own file only (`grader.sandbox.isolated`);
- ``uid`` (`UidBackend`): where bubblewrap cannot make namespaces but the grader is root
  (a Docker or Gradescope container): each sandbox's children run as an unprivileged uid of
  their own, and what they must not read is root's only (`grader.sandbox.uidlevel`);
- ``none`` (`PlainBackend`, ``--no-isolation``): the ordinary sandbox, as the grader's own
  user, able to read the course; every report says NOT isolated on its first line.

Each runs a job's labs with `run_job`, a new sandbox for each lab's public tests and one
for its hidden tests. `choose_isolation` picks the level a run uses and `backend_for`
makes its backend (in the worker process, `grader.grade.worker`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from grader.errors import GraderError

if TYPE_CHECKING:  # the grader's own process only chooses a level: it runs no backend
    from grader.grade.run import Backend, GradeJob, OnResult
    from grader.sandbox.client import Sandbox

__all__ = [
    "LEVELS",
    "IsolatedBackend",
    "IsolationUnavailable",
    "PlainBackend",
    "UidBackend",
    "backend_for",
    "choose_isolation",
    "template_dirs",
]


class PlainBackend:
    """The ordinary sandbox, a new one for each lab's public tests and for its hidden ones,
    one after another (they share the grader's user and files)."""

    isolated = False
    level = "none"

    def run(self, job: GradeJob, on_result: OnResult, on_partial: OnResult | None = None) -> None:
        from grader.grade.run import run_job
        from grader.sandbox.client import Sandbox

        run_job(job, lambda lab_id, hidden: Sandbox(), on_result, on_partial)


class IsolatedBackend:
    """The grade backend (see `grader.grade.run`): a new isolated sandbox for each lab's
    public tests and another for its hidden ones, which sees the course copy's packages
    and that lab's file of this submission, nothing else. The submission's template
    (`grader.sandbox.template`) forks each, warm, in namespaces of its own; sharing
    nothing, the job's lanes of them run at once (`grader.grade.lanes`)."""

    isolated = True
    level = "bwrap"

    def run(self, job: GradeJob, on_result: OnResult, on_partial: OnResult | None = None) -> None:
        from grader.grade.run import run_job
        from grader.sandbox.isolated import IsolatedSandbox
        from grader.sandbox.template import Template

        template = Template(job.course, template_dirs(job), job.hide)

        def sandbox_for(lab_id: str, hidden: bool) -> Sandbox:
            own = [job.student(lab_id).parent]
            return IsolatedSandbox(job.course, own, hide=job.hide, template=template)

        try:
            run_job(job, sandbox_for, on_result, on_partial, job.lanes)
        finally:
            template.close()


def template_dirs(job: GradeJob) -> list[Path]:
    """The folders a submission's template reads: each lab's, where the submission has it
    (the worker prestarts the template with these, `grader.grade.worker`)."""
    return [d for d in dict.fromkeys(job.student(i).parent for i in job.labs) if d.is_dir()]


class UidBackend:
    """The grade backend of the uid level (see `grader.sandbox.uidlevel`): a new sandbox
    for each lab's public tests and another for its hidden ones, each with a uid of its
    own, to which only that lab's file of this submission is handed. One after another,
    whatever the job's lanes: the sandboxes share the host's ``/tmp``, and what one leaves
    there is removed only when it is closed, so two at once could pass files."""

    isolated = True
    level = "uid"

    def run(self, job: GradeJob, on_result: OnResult, on_partial: OnResult | None = None) -> None:
        from grader.grade.run import run_job
        from grader.sandbox.uidlevel import UidSandbox

        def sandbox_for(lab_id: str, hidden: bool) -> Sandbox:
            return UidSandbox([job.student(lab_id).parent])

        run_job(job, sandbox_for, on_result, on_partial)  # one at a time: see the class


class IsolationUnavailable(GraderError, RuntimeError):
    """The isolation that was asked for cannot run here (the message says why and how to
    fix it)."""


LEVELS = ("auto", "bwrap", "uid")  # what ``--isolation`` takes; "none" is --no-isolation


def choose_isolation(wanted: bool, level: str = "auto") -> tuple[str, str]:
    """Which backend a run uses, and a line on why not a stronger one ("" for bwrap).

    ``auto``: bubblewrap where it runs; else, as root, the uid level (a Docker or
    Gradescope container: user namespaces refused, but root); else refuse. ``bwrap`` and
    ``uid`` ask for that level only. Not `wanted` (``--no-isolation``): ``"none"``.

    Raises:
        IsolationUnavailable: no level that was asked for can run here; the message says
            how to fix that, or to pass --no-isolation.
    """
    if not wanted:
        return "none", "--no-isolation"
    if level not in LEVELS:
        raise ValueError(f"unknown isolation level {level!r} (expected one of {LEVELS})")
    from grader.sandbox.bwrap import unavailable

    no_bwrap = unavailable() if level in ("auto", "bwrap") else "not asked for"
    if no_bwrap is None:
        return "bwrap", ""
    from grader.sandbox.uidlevel import uid_unavailable

    no_uid = uid_unavailable() if level in ("auto", "uid") else "not asked for"
    if no_uid is None:
        return "uid", no_bwrap if level == "auto" else "--isolation uid"
    problem = no_bwrap if level != "uid" else no_uid
    if level == "auto":
        problem += f"\n(the uid level cannot run either: {no_uid})"
    raise IsolationUnavailable(
        f"{problem}\n(or grade without isolation, trusting the submissions: --no-isolation)"
    )


def backend_for(name: str) -> Backend:
    """The backend called `name` ("none", "uid" or "bwrap")."""
    if name == "none":
        return PlainBackend()
    if name == "bwrap":
        return IsolatedBackend()
    if name == "uid":
        return UidBackend()
    raise ValueError(f"unknown isolation backend {name!r}")

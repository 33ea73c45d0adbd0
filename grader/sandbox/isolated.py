"""The isolated sandbox: the student's code runs under bubblewrap (trust level 2).

`minillm grade` is a trust boundary: what a submission does must not change its grade,
another submission's, or the grader. `verify` and the other commands on the student's own
machine only keep honest mistakes from corrupting their verdicts (see `grader.sandbox.guard`).
Here every submission's sandbox runs in namespaces of its own, made by bubblewrap
(``bwrap``, the sandbox Flatpak uses; Debian and Ubuntu package ``bubblewrap``):

- new user, pid, mount, network, IPC and UTS namespaces: the code runs as a uid that is
  not the grader's, sees no other process, no network and no host name of ours;
- a root file system made only of read-only binds: the system's ``/usr``, the Python
  installation and virtualenv, the course's ``framework/`` and ``grader/`` packages and the
  folder of the student files being graded. ``solutions/``, the hidden checks, the rest
  of the course and the other submissions are not mounted at all;
- a size-capped tmpfs as ``/tmp`` (the scratch folder, HOME and TMPDIR) and ``/dev/shm``;
- ``--die-with-parent`` and ``--new-session``: nothing outlives the grader, nothing reaches
  its terminal. The run's control group (`grader.sandbox.cgroup`), where one can be made,
  caps the processes and memory of the whole sandbox.

`minillm grade` makes these sandboxes from one template per submission
(`grader.sandbox.template`): the zygote of each is forked, warm, into namespaces of its own
inside the template's read-only bubblewrap (`grader.sandbox.nested`), with the same
guarantees, and every other lab folder of the submission covered.

The grader itself stays outside. Only the sandbox's zygote (`grader.sandbox.zygote`) runs
inside, connected by the control socket it inherits; each child's socket and output pipe
cross that socket as descriptors, as always. The grader reads nothing from the submission
but those replies (decoded within budgets, `grader.codec`) and, after a timeout, the
child's stack dump, opened through ``/proc/PID/root`` without following links or
blocking. The pids the zygote reports are those of its own namespace: the grader finds
the matching processes among the sandbox's own descendants before it signals anything.

The command line and the launcher are in `grader.sandbox.bwrap`; its `unavailable()` says
why bubblewrap cannot run here (bwrap missing, user namespaces off) and how to fix it.
`minillm grade` uses this sandbox through `grader.grade.backends.IsolatedBackend` (a new
one for each lab's public tests and for its hidden ones); ``minillm verify --isolated``
uses it too, so that anyone can watch their code run under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from grader.sandbox.bwrap import SCRATCH, BwrapLauncher
from grader.sandbox.client import Sandbox
from grader.sandbox.fork import ForkBackend, Launcher
from grader.sandbox.limits import DEFAULT_LIMITS, Limits, children_of
from grader.sandbox.template import PhaseLauncher, Template

__all__ = ["IsolatedSandbox"]


class IsolatedSandbox(Sandbox):
    """A `Sandbox` whose zygote runs under bubblewrap (fork backend only).

    `course` holds the ``framework/`` and ``grader/`` the student's code may import;
    `student_dirs` are the folders of the files it will serve (read-only inside); `hide`
    are folders kept out of sight wherever they are (`grader.sandbox.bwrap.bwrap_command`).
    `template`: the submission's template, which forks this sandbox's zygote in namespaces
    of its own (`grader.sandbox.template`) instead of a bubblewrap of its own.
    """

    def __init__(
        self,
        course: Path,
        student_dirs: Sequence[Path],
        limits: Limits = DEFAULT_LIMITS,
        hide: Sequence[Path] = (),
        template: Template | None = None,
    ) -> None:
        super().__init__(limits, backend="fork")
        self.backend = "bwrap"
        self.course = course
        launcher: Launcher = (
            BwrapLauncher(course, student_dirs, hide)
            if template is None
            else PhaseLauncher(template, student_dirs)
        )
        self._impl = ForkBackend(self._setup, self._adopt_tree, launcher)

    def _join_group(self, pid: int) -> bool:
        return self.group is not None and self.group.add(pid)

    def _adopt_tree(self, pid: int) -> None:
        """Put bwrap and what it started into the run's group, before the first spawn
        command: the zygote forks no child before it. A process is moved before its
        children are listed, so a child forked meanwhile is either listed or born inside."""
        todo = [pid]
        while todo:
            here = todo.pop()
            self._join_group(here)
            todo += children_of(here)

    def _setup(self, student_path: str) -> dict[str, object]:
        setup = super()._setup(student_path)
        setup["cwd"] = SCRATCH
        setup["traceback"] = f"{SCRATCH}/.minillm-stack-{setup['gen']}.txt"
        return setup

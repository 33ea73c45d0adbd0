"""The grader's exceptions module: one base, `GraderError`, for every error the grader raises.

`except GraderError` catches any of them, while each also stays the builtin error it has
always been (`SubmissionError` is still a `ValueError`), so older ``except ValueError``
clauses keep working. The hierarchy is shallow on purpose: one base, and each class where
its idea lives, subclassing it and a builtin:

- `grader.codec.CodecError` (ValueError): a value or a frame the codec refuses.
- `grader.sandbox.limits.SandboxError` (RuntimeError): the sandbox machinery itself failed.
- `grader.labs.UnknownLab` (LookupError): no lab of that name.
- `grader.grade.wire.WireError` (ValueError): a malformed lab result line from a worker.
- `grader.grade.submission.SubmissionError` (ValueError): a submission that cannot be read.
- `grader.grade.gitread.GitError` and its `_TooBig`: a checkout whose HEAD cannot be read;
  `grader.grade.gitread.Refused`: a path a checkout's reader does not read.
- `grader.grade.checks.HiddenChecksError` (ImportError): hidden checks that do not load.
- `grader.grade.backends.IsolationUnavailable` (RuntimeError): the isolation asked for cannot run.
- `grader.course.pack.PackError` (RuntimeError): a student edition that cannot be written.
- `grader.course.stubs.StubError` (ValueError) and its `NoMarkers`: a solution whose stub
  markers are wrong.
- `grader.course.mutants.MutantError` (ValueError): a mutant file that does not follow the format.
- `grader.mine.pieces.PieceError`: a student function that failed inside the product.
- `grader.student.pytest_plugin.VerifyFailure`: a verify test that did not pass, as pytest
  sees it.

What stays outside, deliberately, because it is control flow and not an error:
`grader.dsl.Abort` (ends one test early with its status; the runner catches it before any
error), `grader.sandbox.guard.Interrupted` (a KeyboardInterrupt, so that Ctrl-C and SIGTERM
pass every ``except Exception``), `grader.mine.probe._TooSlow` (a BaseException a timer
raises into a probed call, which student code must not swallow), and
`grader.sandbox.worker.ForbiddenCall` (raised inside the sandbox child into the student's
code, as the student sees it; never one of the grader's own failures).

Example:
    >>> from grader.grade.wire import WireError
    >>> issubclass(WireError, GraderError) and issubclass(WireError, ValueError)
    True
"""

from __future__ import annotations

__all__ = ["GraderError"]


class GraderError(Exception):
    """The base of every error the grader raises (see the module docstring for the list)."""

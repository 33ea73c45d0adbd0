"""``python -E -B -m grader.grade.worker JOB.json``: grade one submission, report as JSON lines.

Started by the batch (`grader.grade.batch`) from the pristine course copy, so that this
process, the sandbox it starts and the framework the student's code imports all come from
that copy. It writes one JSON object per line to its original stdout, nothing else:

    {"start": {"isolated": false}}
    {"lab": "lab04", "partial": true, "result": <...>}      after each test but the last:
                                                              the lab's tests so far
    {"lab": "lab04", "result": <grader.grade.wire data>}     one per lab, as each ends
    {"done": true}
    {"error": "..."}                                          instead, if it cannot go on

Anything else that would print (a stray print in a check) goes to stderr, which the batch
keeps in a file. The process cannot be debugged by other processes of its user.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, TextIO

__all__ = ["main"]


def _channel() -> TextIO:
    """Our stdout as a private stream; fd 1 then points at stderr."""
    fd = os.dup(1)
    os.dup2(2, 1)
    return os.fdopen(fd, "w", encoding="utf-8", buffering=1)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = _channel()

    def emit(obj: dict[str, Any]) -> None:
        out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        out.flush()

    from grader.sandbox.guard import adopt_orphans, end_strays, harden_imports
    from grader.sandbox.limits import make_undumpable

    make_undumpable()
    adopt_orphans()  # a process the submission orphaned ends with this worker
    isolated = len(args) > 1 and args[1] != "none"
    harden_imports(from_source=not isolated)  # without isolation, the copy is writable
    if len(args) > 1 and args[1] == "bwrap":
        _prestart_template(Path(args[0]))
    try:
        from grader.grade.backends import backend_for
        from grader.grade.run import GradeJob
        from grader.grade.wire import lab_to_wire
        from grader.results import LabResult

        job = GradeJob.loads(Path(args[0]).read_text(encoding="utf-8"))
        backend = backend_for(args[1] if len(args) > 1 else "none")
        emit({"start": {"isolated": bool(backend.isolated)}})

        def on_result(result: LabResult) -> None:
            emit({"lab": result.lab, "result": lab_to_wire(result)})

        def on_partial(result: LabResult) -> None:
            emit({"lab": result.lab, "partial": True, "result": lab_to_wire(result)})

        backend.run(job, on_result, on_partial)
        end_strays()
    except Exception as e:
        traceback.print_exc()
        emit({"error": f"{type(e).__name__}: {e}"})
        return 1
    emit({"done": True})
    return 0


def _prestart_template(job_file: Path) -> None:
    """Start the submission's template now (`grader.sandbox.template`), so that it warms up
    while this process imports the grader and numpy: the backend's template, made with the
    same course, folders and hidden folders, takes it (`grader.sandbox.bwrap.prestart`)."""
    from grader.grade.submission import student_path
    from grader.sandbox.bwrap import prestart

    try:
        job = json.loads(job_file.read_text(encoding="utf-8"))
        course, work = Path(job["course"]), Path(job["work"])
        folders = [(work / student_path(str(lab))).parent for lab in job["labs"]]
        hide = [Path(p) for p in job.get("hide", [])]
    except (OSError, ValueError, LookupError, TypeError):
        return  # read again below, where what is wrong with it is reported
    dirs = [d for d in dict.fromkeys(folders) if d.is_dir()]  # as `backends.template_dirs`
    prestart(course, dirs, hide, template=True)


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)

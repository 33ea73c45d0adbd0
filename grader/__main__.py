"""``minillm`` and ``python -m grader``: guard the grader's process, start the sandbox early,
then hand over to the CLI (`grader.cli`).

The guards (see `grader.sandbox.guard` and `grader.sandbox.limits.make_undumpable`) come first:
from here on the course's own modules are compiled from source, no bytecode is written,
and no other process of the user may debug this one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _course_root() -> Path:
    """`grader.labs.course_root`, without importing the grader's heavy modules."""
    env = os.environ.get("MINILLM_ROOT")
    return Path(env).resolve() if env else Path(__file__).resolve().parent.parent


def main() -> None:
    """`minillm` and `python -m grader`."""
    from grader.sandbox.guard import adopt_orphans, end_strays, harden_imports

    harden_imports()  # before anything else of the course is imported
    # a process the student's code orphaned ends here, with the run
    judging = sys.argv[1:2] in (["verify"], ["status"], ["watch"], ["hint"], ["grade"])
    if judging:
        adopt_orphans()
    if sys.argv[1:2] == ["verify"] and not {"-h", "--help"} & set(sys.argv[2:]):
        # the zygote imports numpy while this process imports the grader
        if "--isolated" in sys.argv[2:]:
            from grader.sandbox.bwrap import prestart_verify

            prestart_verify(sys.argv[2:], _course_root())
        else:
            from grader.sandbox.launch import prestart

            prestart()
    from grader.sandbox.limits import SandboxError, make_undumpable

    make_undumpable()  # student code runs as the same user: it may not debug the grader
    from grader.cli import main as cli_main

    try:
        cli_main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except SandboxError as e:  # an unknown MINILLM_SANDBOX, a sandbox that cannot start
        print(f"minillm: {e}", file=sys.stderr)
        code = 2
    end_strays()
    sys.stdout.flush()
    sys.stderr.flush()
    # Everything is written and every child is ended; skip the interpreter's slow teardown.
    os._exit(code)


if __name__ == "__main__":
    main()

"""miniLLM lab grader: the check language, the sandbox, the report and the CLI.

The judge (this package, in the grader's process) and the student's code (in a
sandbox child) never share a process; only plain data crosses between them. Its floors
and wings, and the path of one verify call and one graded submission, are in
ARCHITECTURE.md beside the README.

Two trust levels. On the student's own machine (`verify`, the pytest plugin, `status`,
`watch`) the sandbox keeps honest mistakes from corrupting the verdicts, and the grader's
process guards itself against what is cheap to guard against on every run
(`grader.sandbox.guard`). `minillm grade` is a trust boundary (`grader.grade`): each
lab's public tests, and then each lab's hidden tests, run in a fresh sandbox; random
inputs come from a per-submission seed; the submission is read as hostile data; only the
grader classifies a grader error and every submission string is escaped. Its isolation
levels (`grader.grade.backends`):

=====  ===========================  ===========================  ==========================
level  when                         student code runs as         what it cannot see
=====  ===========================  ===========================  ==========================
bwrap  bubblewrap makes namespaces  another uid, in new user,    anything but Python, the
       (`grader.sandbox.isolated`)  pid, mount, net, IPC and     course's packages and the
                                    UTS namespaces               lab's own file
uid    bwrap cannot; grader is      an unprivileged uid of the   hidden checks, solutions
       root (`.sandbox.uidlevel`)   sandbox's own, no groups     and results (root's only);
                                                                 the network, where root
                                                                 may unshare it
none   ``--no-isolation``           the grader's own user        nothing is kept from it
=====  ===========================  ===========================  ==========================
"""

import os
import sys

# One BLAS thread unless the user asks for more (before numpy is first imported): the
# grader's own arrays are small, and at import OpenBLAS starts a thread per core that
# spins for a while, about 0.1 s of a core per process (a verify run's CPU time falls by
# a fifth), taken from the sandbox that starts beside it. `minillm train --threads N`
# still sets its count (`framework.blas.set_blas_threads`), and so can any program.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# The grader writes no bytecode (see grader.sandbox.guard): a cache beside the course's
# files is a place where a process of the student could plant code for the next run.
# What the interpreter was told before is kept for a process that is not the grader's own
# (pytest's, which loads `grader.student.pytest_plugin`: it puts it back).
USER_DONT_WRITE_BYTECODE = sys.dont_write_bytecode
sys.dont_write_bytecode = True

__all__: list[str] = []

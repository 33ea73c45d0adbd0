"""miniLLM lab grader: the check language, the sandbox, the report and the CLI.

The judge (this package, in the grader's process) and the student's code (in a
sandbox child) never share a process; only plain data crosses between them.

Two trust levels. On the student's own machine (`verify`, the pytest plugin, `status`,
`watch`) the sandbox keeps honest mistakes from corrupting the verdicts, and the grader's
process guards itself against what is cheap to guard against on every run
(`grader.guard`). `minillm grade` is a trust boundary: every submission runs under
bubblewrap, in namespaces of its own, seeing nothing of the course but what it may import
(`grader.isolation`).
"""

import sys

# The grader writes no bytecode (see grader.guard): a cache beside the course's files is a
# place where a process of the student could plant code for the next run.
sys.dont_write_bytecode = True

__all__: list[str] = []

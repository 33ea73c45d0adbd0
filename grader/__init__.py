"""miniLLM lab grader: the check language, the sandbox, the report and the CLI.

The judge (this package, in the grader's process) and the student's code (in a
sandbox child) never share a process; only plain data crosses between them.
"""

import sys

# The grader writes no bytecode (see grader.guard): a cache beside the course's files is a
# place where a process of the student could plant code for the next run.
sys.dont_write_bytecode = True

__all__: list[str] = []

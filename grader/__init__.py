"""miniLLM lab grader: the check language, the sandbox, the report and the CLI.

The judge (this package, in the grader's process) and the student's code (in a
sandbox child) never share a process; only plain data crosses between them.
"""

__all__: list[str] = []

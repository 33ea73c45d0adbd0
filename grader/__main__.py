"""`python -m grader` is the same as the `minillm` command."""

from grader.cli import main

main()

"""`python -m grader` is the same as the `minillm` command."""

from grader.entry import main

main()

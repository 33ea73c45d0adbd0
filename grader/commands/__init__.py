"""The `minillm` subcommands beyond `verify` and `list`, one module each.

Each module exposes one click command (or group) that `grader/cli.py` registers with
`cli.add_command`. Modules import their heavy dependencies inside the command, so that
`minillm --help` and shell completion stay fast.
"""

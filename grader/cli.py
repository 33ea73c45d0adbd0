"""`minillm`: the command line of the course.

    minillm verify lab04              # your student.py
    minillm verify lab04 --solution   # the reference solution
    minillm verify lab04 --impl other.py --json result.json --lang en
    minillm list

In the student edition (`minillm pack`: no ``solutions/``) the instructor's commands
(`INSTRUCTOR_COMMANDS`) and ``verify --solution`` are hidden from ``--help`` and refuse in
one line, exit status 2: ``minillm pack: instructors only: …``.

Exit status of `verify`: 0 when every test passes, 1 when anything is short of PASS
(TODO and SKIP included), 2 for a usage error (unknown lab, missing file, bad option, an
unknown ``MINILLM_SANDBOX``), 128 + the signal's number when Ctrl-C or SIGTERM stopped the
run (the tests that finished are still reported, with a note that says it was interrupted).
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from grader.i18n import LANGS, default_lang

__all__ = ["INSTRUCTOR_COMMANDS", "LAZY_COMMANDS", "main", "student_edition"]

# they need solutions/ (the reference code, the hidden checks), which the edition leaves out
INSTRUCTOR_COMMANDS = ("stubs", "pack", "self-check", "gradescope-bundle")


def student_edition() -> bool:
    """True in the student edition: the course has no solutions/ (`grader.course.pack`)."""
    from grader.labs import course_root

    return not (course_root() / "solutions").is_dir()


def _instructors_only(what: str) -> str:
    from grader.labs import instructor_only

    return f"{what}: instructors only: " + (instructor_only(what) or "")


def _refusal(name: str) -> click.Command:
    """A hidden command `name` that takes anything and refuses in one line (exit status 2)."""

    @click.command(
        name,
        hidden=True,
        add_help_option=False,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def refuse(args: tuple[str, ...]) -> None:
        click.echo(_instructors_only(f"minillm {name}"), err=True)
        sys.exit(2)

    return refuse


_EDITION = student_edition()


def _hint_at(command: Callable[..., str], lab: str, number: int) -> str:
    """`command(lab, number)`: the hint command of a report's footers (see `verify`)."""
    return command(lab, number)


def _lang_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--lang",
        type=click.Choice(LANGS),
        default=None,
        help="Report language (default: MINILLM_LANG, then the locale; zh when unknown).",
    )(f)


# command -> (module, name): the module is imported when the command is asked for, so that
# `verify` (the command students run over and over, whose process compiles the course from
# source) does not compile the other 17 commands' modules too
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "chat": ("grader.commands.chat", "chat"),
    "completion": ("grader.commands.completion", "completion"),
    "eval": ("grader.commands.eval", "eval_command"),
    "generate": ("grader.commands.generate", "generate"),
    "grade": ("grader.commands.grade", "grade"),
    "gradescope-bundle": ("grader.commands.gradescope", "gradescope_bundle"),
    "hint": ("grader.commands.hint", "hint"),
    "mine": ("grader.commands.mine", "mine"),
    "pack": ("grader.commands.pack", "pack"),
    "reset": ("grader.commands.reset", "reset"),
    "self-check": ("grader.commands.self_check", "self_check"),
    "serve": ("grader.commands.serve", "serve"),
    "similarity": ("grader.commands.similarity", "similarity"),
    "status": ("grader.commands.status", "status"),
    "stubs": ("grader.commands.stubs", "stubs"),
    "train": ("grader.commands.train", "train"),
    "watch": ("grader.commands.watch", "watch"),
}


class _LazyGroup(click.Group):
    """A group whose `LAZY_COMMANDS` are imported when named (or listed, for --help)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            if _EDITION and cmd_name in INSTRUCTOR_COMMANDS:
                self.add_command(_refusal(cmd_name))
            else:
                module, attr = LAZY_COMMANDS[cmd_name]
                self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="minillm-lab")
def cli() -> None:
    """miniLLM lab: build a tiny GPT from scratch, one verified lab at a time."""


@cli.command()
@click.argument("lab", required=False)
@click.option(
    "--all", "every_lab", is_flag=True, help="Verify every lab, one report after another."
)
@click.option(
    "--solution",
    is_flag=True,
    hidden=_EDITION,
    help="Verify the reference solution instead (instructors).",
)
@click.option(
    "--impl",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Verify this file instead of the lab's student.py.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the result as JSON to this file ('-' for stdout, report on stderr); "
    "with --all, a list of them.",
)
@_lang_option
@click.option("--no-color", is_flag=True, help="Plain text even on a terminal.")
@click.option(
    "--isolated",
    is_flag=True,
    help="Run the code under bubblewrap, as minillm grade does (Linux, needs bwrap).",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**63 - 1),
    default=None,
    help="Draw the random inputs as a graded run with this seed did (its result's 'seed').",
)
def verify(
    lab: str | None,
    every_lab: bool,
    solution: bool,
    impl: Path | None,
    json_path: Path | None,
    lang: str | None,
    no_color: bool,
    isolated: bool,
    seed: int | None,
) -> None:
    """Run LAB's checks (lab04, 04 or 4), or every lab's with --all, and print the report."""
    from grader.sandbox.guard import Interrupted, interruptible

    if solution and student_edition():
        click.echo(_instructors_only("minillm verify --solution"), err=True)
        sys.exit(2)
    try:
        with interruptible():
            _verify(lab, every_lab, solution, impl, json_path, lang, no_color, isolated, seed)
    except Interrupted as stop:  # stopped before any test finished
        click.echo(f"minillm verify: interrupted ({stop})", err=True)
        sys.exit(stop.exit_code)


def _verify(
    lab: str | None,
    every_lab: bool,
    solution: bool,
    impl: Path | None,
    json_path: Path | None,
    lang: str | None,
    no_color: bool,
    isolated: bool,
    seed: int | None = None,
) -> None:
    from grader.i18n import tr
    from grader.labs import UnknownLab, all_labs, resolve_lab
    from grader.sandbox.guard import Interrupted, end_strays
    from grader.student.commands import hint_command

    if not every_lab and lab is None:
        raise click.MissingParameter(param_hint="'LAB' (or --all)", param_type="argument")
    if every_lab and lab is not None:
        raise click.UsageError("give one LAB, or --all for every lab, not both")
    if every_lab and impl is not None:
        raise click.UsageError("--impl is one lab's file: use it without --all")
    if solution and impl is not None:
        raise click.UsageError("use either --solution or --impl, not both")
    try:
        infos = all_labs() if lab is None else [resolve_lab(lab)]
    except UnknownLab as e:
        raise click.UsageError(str(e)) from None
    targets = [info.solution if solution else (impl or info.student) for info in infos]
    for target in targets:
        if not target.is_file():
            raise click.UsageError(f"no such file: {target}")
    from grader.course.mutants import as_student

    results = []
    stopped: Interrupted | None = None
    with ExitStack() as stack:
        pairs = zip(targets, infos, strict=True)
        students = [stack.enter_context(as_student(t, i)) for t, i in pairs]  # a mutant: +solution
        sandbox = _sandbox(isolated, students)
        sandbox.start()  # warms up while the checks load
        try:
            from grader.labs import load_lab
            from grader.render.lab import print_report, render_json
            from grader.render.term import prepare
            from grader.runner import run_lab

            for info, target, student in zip(infos, targets, students, strict=True):
                try:
                    result = run_lab(info, student, sandbox, load_lab(info), seed=seed)
                except Interrupted as e:
                    stopped = e
                    _ignore_signals()  # clean up and report what finished, whatever comes
                    if e.result is None:
                        break
                    result = e.result
                result.impl = str(target)
                results.append(result)
                if stopped is not None:
                    break
        finally:
            sandbox.close()
            end_strays()  # orphans of the student's code adopted here (see grader.sandbox.guard)
    if stopped is not None and not results:
        raise stopped
    if sandbox.cleanup_problem:
        problem = sandbox.cleanup_problem
        results[-1].notes.append(tr(f"注意：沙箱没能清理干净：{problem}", f"note: {problem}"))
    report_stream = prepare(
        sys.stderr if json_path is not None and str(json_path) == "-" else sys.stdout
    )
    chosen = lang or default_lang(getattr(report_stream, "encoding", None))
    for n, result in enumerate(results):
        if n:
            report_stream.write("\n")
        print_report(
            result,
            chosen,
            color=False if no_color else None,
            file=report_stream,
            hint_for=functools.partial(_hint_at, hint_command, result.lab),  # runs from here
        )
    passed = sum(1 for r in results if r.passed)
    if every_lab:
        line = (
            f"全部实验: {passed}/{len(results)} 个全部通过"
            if chosen == "zh"
            else f"All labs: {passed}/{len(results)} passed every test"
        )
        report_stream.write("\n" + line + "\n")
        report_stream.flush()
    if json_path is not None:
        docs = [render_json(r, chosen) for r in results]
        doc = json.dumps(docs if every_lab else docs[0], ensure_ascii=False, indent=2) + "\n"
        if str(json_path) == "-":
            sys.stdout.write(doc)
        else:
            try:
                json_path.write_text(doc, encoding="utf-8")
            except OSError as e:
                raise click.UsageError(
                    f"cannot write the JSON result to {json_path}: {e}"
                ) from None
    if stopped is not None:
        sys.exit(stopped.exit_code)
    sys.exit(0 if passed == len(results) else 1)


def _sandbox(isolated: bool, students: list[Path]) -> Any:
    """The run's sandbox: under bubblewrap with `isolated` (reading nothing but the course's
    packages and the student files' folders), else the ordinary one."""
    from grader.labs import course_root
    from grader.sandbox.client import Sandbox, SandboxError

    try:
        if not isolated:
            return Sandbox()
        from grader.sandbox.bwrap import unavailable
        from grader.sandbox.isolated import IsolatedSandbox

        problem = unavailable()
        if problem:
            raise click.UsageError(problem)
        return IsolatedSandbox(course_root(), [s.resolve().parent for s in students])
    except SandboxError as e:
        raise click.UsageError(str(e)) from None


def _ignore_signals() -> None:
    import signal

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, signal.SIG_IGN)


@cli.command("list")
@_lang_option
def list_labs(lang: str | None) -> None:
    """List the labs of the course."""
    from grader.labs import all_labs, load_lab
    from grader.render.term import prepare

    chosen = lang or default_lang(getattr(prepare(sys.stdout), "encoding", None))
    for info in all_labs():
        title = load_lab(info).title.pick(chosen)
        click.echo(f"{info.id}  {title}")


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="minillm")

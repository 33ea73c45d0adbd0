"""`minillm hint LAB [TEST]`: the hints for what fails now, one level at a time.

A check's hints go from a nudge to the concrete next step, never to solution code. The
report shows the first under a failing check; this command shows as many levels as asked:

    minillm hint lab04            # the first test that does not pass: hint 1
    minillm hint lab04 6 -l 2     # test 6: hints 1 and 2

It runs the lab's tests up to the one it shows and no further: a test's result depends only
on the tests before it, so the hints are those a full `verify` would give.
"""

from __future__ import annotations

import sys

import click

from grader.commands.options import complete_lab
from grader.i18n import LANGS, Lang, Text, default_lang

__all__ = ["hint"]


@click.command()
@click.argument("lab", shell_complete=complete_lab)
@click.argument("test", required=False)
@click.option("-l", "--level", type=click.IntRange(1), default=1, help="How many hint levels.")
@click.option("--lang", type=click.Choice(LANGS), default=None, help="Language of the hints.")
def hint(lab: str, test: str | None, level: int, lang: Lang | None) -> None:
    """Show hints for LAB's first failing test (or TEST: its number or id)."""
    from grader.labs import UnknownLab, load_lab, resolve_lab
    from grader.render.term import prepare
    from grader.results import Status, TestResult
    from grader.runner import run_lab
    from grader.sandbox.client import Sandbox

    out = prepare(sys.stdout)
    chosen = lang or default_lang(getattr(out, "encoding", None))
    zh = chosen == "zh"
    try:
        info = resolve_lab(lab)
    except UnknownLab as e:
        raise click.UsageError(str(e)) from None
    spec_lab = load_lab(info)
    specs = {s.id: s for s in spec_lab.tests}
    numbered = list(enumerate(spec_lab.tests, 1))
    wanted = next((n for n, s in numbered if test in (s.id, str(n))), None)
    if test is not None and wanted is None:
        names = ", ".join(f"{n} ({s.id})" for n, s in numbered)
        raise click.UsageError(f"{info.id} has no test {test!r}; its tests: {names}")

    def enough(t: TestResult) -> bool:  # the tests after the one shown are not run
        return t.number == wanted if wanted is not None else t.status is not Status.PASS

    with Sandbox() as sandbox:
        result = run_lab(info, info.student, sandbox, spec_lab, until=enough)
    chosen_test: TestResult | None
    if wanted is not None:
        chosen_test = next(t for t in result.tests if t.number == wanted)
    else:
        chosen_test = next((t for t in result.tests if t.status is not Status.PASS), None)
        if chosen_test is None:
            click.echo(
                "全部通过，没有需要提示的地方。" if zh else "Everything passes: no hints needed."
            )
            return
    click.echo(
        f"[TEST {chosen_test.number}] {chosen_test.title.pick(chosen)}  [{chosen_test.status}]"
    )
    shown = 0
    from grader.dsl import hint_levels

    test_hints = hint_levels(specs[chosen_test.id].hint)
    # the failing check's own hints first, then the test's levels (from its nudge on)
    pending: list[tuple[str, list[Text]]] = [
        (c.name.pick(chosen), [*c.hints, *(h for h in test_hints if h not in c.hints)])
        for c in chosen_test.checks
        if c.hints
    ]
    if not pending and test_hints:
        pending = [("", test_hints)]
    for name, hints in pending:
        if name:
            click.echo(f"  {name}")
        for n, h in enumerate(hints[:level], 1):
            label = f"提示 {n}/{len(hints)}" if zh else f"hint {n}/{len(hints)}"
            click.echo(f"    {label}: {h.pick(chosen)}")
            shown += 1
        if level < len(hints):
            from grader.student.commands import hint_command

            more = hint_command(info.id, chosen_test.number, level + 1)  # runs from here
            click.echo(("    下一条提示: " if zh else "    next hint: ") + more)
        break  # the first check with hints: one thing at a time
    if shown == 0:
        task = "TASK.md" if zh else "TASK.en.md"
        click.echo(
            f"  这个测试没有提示；请读 labs/{info.id}/{task} 里对应的小节。"
            if zh
            else f"  This test has no hints; read its section in labs/{info.id}/{task}."
        )

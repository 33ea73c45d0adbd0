"""`minillm train` and `minillm eval`: tiny runs of a few steps (the real run is `make train`)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from framework.model import model_load
from framework.train import PRESETS, state_path
from grader.cli import cli
from grader.commands.train import StopFlag, read_log, sparkline
from grader.commands.training_run import TrainingRun


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("run") / "m.bin"
    code, text = run("train", "--preset", "tiny", "--steps", "6", "--out", str(out))
    assert code == 0, text
    return out, text


def test_a_run_writes_model_state_and_log(trained: tuple[Path, str]) -> None:
    out, text = trained
    assert "Finished at step 6/6" in text and "val loss" in text and "perplexity" in text
    assert "held-out questions" in text and "unseen sums" in text and "tokens/s" in text
    model = model_load(out)
    assert model.config.hidden_dim == 32  # the tiny preset
    assert state_path(out).is_file()
    rows = read_log(out.with_suffix(".jsonl"))
    assert [r["step"] for r in rows] == [6]  # logged every 10 steps, and at the last
    assert rows[-1]["val_loss"] is not None and rows[-1]["tokens_per_s"] > 0


def test_resume_continues_the_step_count_and_the_log(trained: tuple[Path, str]) -> None:
    out, _ = trained
    code, text = run("train", "--preset", "tiny", "--steps", "10", "--resume", str(out),
                     "--out", str(out))  # fmt: skip
    assert code == 0, text
    assert "steps 7..10" in text and "Finished at step 10/10" in text
    assert [r["step"] for r in read_log(out.with_suffix(".jsonl"))] == [6, 10]
    code, text = run("train", "--preset", "tiny", "--steps", "10", "--resume", str(out))
    assert code == 2 and "at step 10" in text


def test_plot_summarises_a_log(trained: tuple[Path, str]) -> None:
    log = trained[0].with_suffix(".jsonl")
    code, text = run("train", "--plot", str(log))
    assert code == 0 and "train loss" in text
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in text
    else:
        assert log.with_suffix(".png").is_file()


def test_plot_refuses_a_file_that_is_not_a_log(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"no": 1}\n')
    code, text = run("train", "--plot", str(bad))
    assert code == 2 and "not a line of a training log" in text


def test_eval_reports_loss_and_exact_match(trained: tuple[Path, str]) -> None:
    code, text = run("eval", str(trained[0]), "--show", "2")
    assert code == 0, text
    assert "val loss" in text and "held-out questions" in text and "unseen sums" in text
    assert "en " in text and "zh " in text and text.count("✗") <= 4


def test_eval_refuses_a_file_that_is_not_a_model(tmp_path: Path) -> None:
    bad = tmp_path / "x.bin"
    bad.write_bytes(b"nope" * 10)
    code, text = run("eval", str(bad))
    assert code == 2 and "magic" in text


def test_a_stopped_run_saves_a_checkpoint_and_says_how_to_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s.bin"
    cfg = PRESETS["tiny"]
    polls = iter([False, False, False, True])
    status = TrainingRun("tiny", cfg, out, None).execute(lambda: next(polls), tty=False)
    text = capsys.readouterr().out
    assert status == 130 and "Stopped (Ctrl-C) at step 3/300" in text and "--resume" in text
    assert model_load(out).config.num_layers == 2
    assert json.loads(out.with_suffix(".jsonl").read_text().splitlines()[-1])["step"] == 3


def test_ctrl_c_sets_the_flag_then_interrupts() -> None:
    with StopFlag() as flag:
        assert not flag()
        os.kill(os.getpid(), signal.SIGINT)
        assert flag()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)


def test_sparkline() -> None:
    assert sparkline([]) == "" and sparkline([1.0]) == "▁"
    assert sparkline([float(i) for i in range(100)], width=8) == "▁▂▃▄▅▆▇█"
    assert len(sparkline([1.0, float("nan"), 2.0])) == 2

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
from grader.commands.train import StopFlag
from grader.product.display import read_log, sparkline
from grader.product.training import TrainingRun

pytestmark = pytest.mark.slow  # scheduled first (tests/conftest.py)


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


def test_resume_without_out_writes_the_checkpoint_it_resumed(
    trained: tuple[Path, str], tmp_path: Path
) -> None:
    d = tmp_path / "d.bin"
    d.write_bytes(trained[0].read_bytes())
    state_path(d).write_bytes(state_path(trained[0]).read_bytes())
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        code, text = run("train", "--preset", "tiny", "--steps", "12", "--resume", str(d))
        assert code == 0, text
        assert not Path("minillm-tiny.bin").exists() and not Path("minillm-tiny.jsonl").exists()
    assert model_load(d) is not None and f"wrote {d}" in text
    assert [r["step"] for r in read_log(d.with_suffix(".jsonl"))][-1] == 12


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
    for figure in ("two-digit operands", "small operands", "course questions", "greetings",
                   "out of scope, honest reply", "then asked", "free of U+FFFD"):  # fmt: skip
        assert figure in text, figure
    assert "en " in text and "zh " in text and text.count("✗") <= 2 * 8  # --show 2, 8 lines


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
    assert "held-out questions not answered" in text and "unseen sums" not in text
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


@pytest.fixture(scope="module")
def trained_bpe(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("bpe") / "b.bin"
    code, text = run("train", "--preset", "tiny", "--steps", "4", "--tokenizer", "bpe",
                     "--vocab-size", "300", "--out", str(out))  # fmt: skip
    assert code == 0, text
    return out, text


def test_a_bpe_run_writes_a_checkpoint_that_generate_loads_with_its_vocabulary(
    trained_bpe: tuple[Path, str],
) -> None:
    from framework.generate import GenerateConfig, generate
    from framework.serving import load_chat_model
    from framework.shipped import load_checkpoint, meta_path

    out, text = trained_bpe
    assert "tokenizer: BPE, 300 ids, learned" in text and "Finished at step 4/4" in text
    vocab = out.with_suffix(".vocab.json")
    assert f"wrote {out}, {meta_path(out)}, {vocab}, {state_path(out)}" in text
    model, tok = load_checkpoint(out)
    assert tok.vocab_size == model.config.vocab_size == 300 and model.config.hidden_dim == 32
    assert load_chat_model(out).tokenizer == tok
    prompt, cfg = "你好 3+4=?", GenerateConfig(6, temperature=0, stop_at_eos=False)
    shown = CliRunner().invoke(cli, ["generate", str(out), "-p", prompt, "-n", "6", "-t", "0",
                                     "--ignore-eos"])  # fmt: skip
    assert shown.exit_code == 0, shown.output
    want = generate(model, tok, prompt, cfg).text
    assert shown.stdout == want + "\n" and "[6 tokens" in shown.stderr


def test_a_bpe_run_resumes_with_its_vocabulary_and_refuses_another(
    trained_bpe: tuple[Path, str], tmp_path: Path
) -> None:
    from framework.bpe_tokenizer import BPETokenizer
    from framework.shipped import read_meta

    out, _ = trained_bpe
    other = tmp_path / "other.json"
    BPETokenizer.train("abc abc abd abd " * 8, 36).save(other)
    code, text = run("train", "--preset", "tiny", "--steps", "6", "--resume", str(out),
                     "--vocab", str(other))  # fmt: skip
    assert code == 2 and f"{other} is not the vocabulary {out} was trained with" in text
    code, text = run("train", "--resume", str(out), "--steps", "6", "--tokenizer", "byte")
    assert code == 2 and "resume it with --tokenizer bpe" in text
    before = read_meta(out)["vocab_fingerprint"]
    code, text = run("train", "--preset", "tiny", "--steps", "6", "--resume", str(out),
                     "--out", str(out))  # fmt: skip
    assert code == 0, text
    assert "the checkpoint's (b.meta.json)" in text and "steps 5..6" in text
    meta = read_meta(out)
    assert meta["vocab_fingerprint"] == before and meta["step"] == 6


def test_tokenizer_options_that_do_not_fit_are_refused(
    trained: tuple[Path, str], trained_bpe: tuple[Path, str]
) -> None:
    code, text = run("train", "--preset", "tiny", "--vocab-size", "300")
    assert code == 2 and "--vocab and --vocab-size go with --tokenizer bpe" in text
    out = trained[0]
    code, text = run("train", "--resume", str(out), "--steps", "99", "--tokenizer", "bpe")
    assert code == 2 and "has no sidecar m.meta.json" in text
    code, text = run("train", "--preset", "tiny", "--out", str(trained_bpe[0]))
    assert code == 2 and "has the sidecar of a BPE model (b.meta.json)" in text


def test_eval_reads_a_bpe_checkpoint_with_its_vocabulary(
    trained_bpe: tuple[Path, str], tmp_path: Path
) -> None:
    out, _ = trained_bpe
    code, text = run("eval", str(out), "--show", "0")
    assert code == 0, text
    assert "val loss" in text and "held-out questions" in text and "unseen sums" in text
    alone = tmp_path / "alone.bin"  # the weights without their sidecar
    alone.write_bytes(out.read_bytes())
    code, text = run("eval", str(alone))
    assert code == 2 and "no sidecar alone.meta.json" in text


def test_eval_of_the_shipped_model_agrees_with_its_sidecar() -> None:
    """Without MODEL, eval scores the shipped model, and measures its validation loss as
    the run that made it did: the sidecar's figure again, to its four digits."""
    from framework.shipped import MODEL_FILE, read_meta

    meta = read_meta(MODEL_FILE)
    code, text = run("eval", "--show", "0")
    assert code == 0, text
    assert str(MODEL_FILE) in text
    assert f"val loss {meta['val_loss']:.4f} " in text, text
    figures = (("held-out questions", "heldout_exact_match_closed_layout", "heldout"),
               ("two-digit operands", "unseen_exact_match_closed_layout", "unseen"),
               ("small operands", "unseen_small_exact_match_closed_layout", "unseen_small"),
               ("course questions", "course_exact_match", "course"),
               ("greetings", "greetings_exact_match", "greetings"),
               ("out of scope", "offscope_honest", "offscope"))  # fmt: skip
    for name, key, count in figures:
        line = next(x for x in text.splitlines() if name in x)
        share, total = meta[key]["all"], meta[f"{count}_questions"]
        assert f"({round(share * total)}/{total};" in line, (line, share)
    line = next(x for x in text.splitlines() if "U+FFFD" in x)
    assert meta["replies_with_fffd"] == 0 and "100.0%" in line, line


@pytest.mark.parametrize(
    "recipe",
    [
        {"train": {"batch_size": "x"}},
        {"train": {"seq_len": 0}},
        {"seed": -1},
        {"p_open": 3.0},
        {"train": "not a table"},
    ],
)
def test_eval_measures_its_own_way_when_the_sidecar_recipe_is_unusable(
    recipe: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sidecar whose recipe is malformed is not followed (nor a crash): eval falls back."""
    import framework.shipped as shipped
    from framework.shipped import MODEL_FILE, load_shipped
    from grader.product.scoring import recorded_validation

    tok = load_shipped()[1]
    meta = {**shipped.read_meta(MODEL_FILE), "recipe": {**recipe}}
    monkeypatch.setattr(shipped, "read_meta", lambda path: meta)
    assert recorded_validation(MODEL_FILE, tok) is None
    monkeypatch.setattr(shipped, "read_meta", lambda path: {**meta, "recipe": {"seed": 0}})
    made = recorded_validation(MODEL_FILE, tok)
    assert made is not None and made[2:5] == (16, 128, 16)


def test_out_in_a_folder_that_does_not_exist_yet_is_made(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "first" / "m.bin"
    code, text = run("train", "--preset", "tiny", "--steps", "1", "--out", str(out))
    assert code == 0, text
    assert out.is_file() and out.with_suffix(".jsonl").is_file()

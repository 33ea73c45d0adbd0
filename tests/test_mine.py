"""`--mine`: the model running the student's own lab functions, and `minillm mine --check`.

The course is copied to a temporary folder (MINILLM_ROOT) and its student files replaced:
by the reference solutions (every piece must be the student's, and the replies exactly the
framework's), or by a mix of finished, unfinished and wrong labs (the table must say which
piece runs whose code and why, `--check` must name the wrong piece, and the chat must still
answer). The model is a small random one with a BPE vocabulary, so the tests are quick.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import format_training_example
from framework.chat_service import ChatService
from framework.config import ModelConfig
from framework.generate import GenerateConfig, generate
from framework.kv_cache import KVCache
from framework.model import GPTModel, init_weights, model_save
from framework.module import array_of
from framework.serving import ChatEngine, ReplySettings, shipped_model
from framework.tensor import as_tensor
from grader.course.mutants import compose, parse_mutant
from grader.labs import LabInfo, all_labs
from grader.mine.check import run_check
from grader.mine.check_model import compare_model, references
from grader.mine.choose import Selection, lab_verdicts, select_pieces
from grader.mine.decode import generate_with
from grader.mine.engine import MineEngine, generate_mine, serving_functions
from grader.mine.forward import PiecewiseModel
from grader.mine.load import is_stub, load_lab_module, read_lab_file
from grader.mine.pieces import CATALOGUE, TURN, PieceError, Pieces, guard
from grader.mine.tokenize import MineTokenizer

ROOT = Path(__file__).resolve().parent.parent
PROMPTS = ["你好", "1+2=?", "hello", "what is attention?"]
GREEDY = ReplySettings(temperature=0.0, max_tokens=10)
DIALOGUE = [
    ("system", "你是一个简洁的助手。"),
    ("user", "你好！"),
    ("assistant", "你好！有什么可以帮你？"),
    ("user", "what is 2 + 3?"),
    ("assistant", "2 + 3 = 5."),
    ("user", "what is attention?"),
    ("assistant", "Attention lets each position mix in information from earlier positions."),
]


# -- a small chat model: a BPE vocabulary and random weights with spread-out logits -----
@pytest.fixture(scope="module")
def engine() -> ChatEngine:
    tok = BPETokenizer.train(format_training_example(DIALOGUE) * 3, 60)
    model = GPTModel(ModelConfig(tok.vocab_size, 32, 2, 2, 64, 64))
    init_weights(model, seed=0)
    array_of(model.lm_head)[...] *= 30  # clear winners: greedy never rests on a near-tie
    return ChatEngine(model, tok, "tiny")


def _copy_course(dest: Path) -> Path:
    shutil.copytree(ROOT / "labs", dest / "labs", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _use(root: Path, lab: str, text: str) -> None:
    (root / "labs" / lab / "student.py").write_text(text, encoding="utf-8")


def _solution(lab: str) -> str:
    return (ROOT / "solutions" / lab / "student.py").read_text(encoding="utf-8")


def _mutant(lab: str, name: str) -> str:
    return compose(_solution(lab), parse_mutant(ROOT / "tests" / "mutants" / lab / f"{name}.py"))


def _half(lab: str, solved: str) -> str:
    """The lab's stub with only function `solved` taken from the solution."""
    solution, stub = _solution(lab), (ROOT / "labs" / lab / "student.py").read_text("utf-8")

    def span(text: str) -> tuple[int, int]:
        start = text.index(f"def {solved}(")
        end = text.find("\ndef ", start + 1)
        return start, len(text) if end < 0 else end

    (a, b), (c, d) = span(solution), span(stub)
    head = solution[: solution.index("\ndef ")]  # the solution's imports
    return head + stub[stub.index("\ndef ") : c] + solution[a:b] + stub[d:]


@pytest.fixture(scope="module")
def solved_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course in which every lab's student.py is the reference solution."""
    root = _copy_course(tmp_path_factory.mktemp("solved"))
    for lab in all_labs(ROOT):
        if lab.solution.is_file():
            _use(root, lab.id, lab.solution.read_text(encoding="utf-8"))
    return root


@pytest.fixture
def solved(solved_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MINILLM_ROOT", str(solved_root))
    return solved_root


MIXED = {  # lab -> (how its student.py is made, what the table must say of its pieces)
    "lab04": ("wrong: softmax over the first axis", "not passing"),
    "lab05": ("unfinished: every function a stub", "not written yet"),
    "lab09": ("finished", "passes"),
    "lab10": ("half: parse_request_line only", "build_response not written yet"),
    "lab12": ("finished", "passes"),
}


@pytest.fixture(scope="module")
def mixed_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course with finished, unfinished and wrong labs (see `MIXED`)."""
    root = _copy_course(tmp_path_factory.mktemp("mixed"))
    _use(root, "lab04", _mutant("lab04", "softmax_wrong_axis"))
    _use(root, "lab09", _solution("lab09"))
    _use(root, "lab10", _half("lab10", "parse_request_line"))
    _use(root, "lab12", _solution("lab12"))
    return root


@pytest.fixture
def mixed(mixed_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MINILLM_ROOT", str(mixed_root))
    return mixed_root


def _rows(selection: Selection) -> dict[str, tuple[str, str]]:
    return {c.info.key: (c.state, c.reason.en) for c in selection.choices}


# -- the pieces, the framework's everywhere, are the framework ---------------------------
def test_the_piecewise_forward_with_framework_pieces_is_the_model(engine: ChatEngine) -> None:
    model, ids = engine.model, engine.tokenizer.encode("<|user|>\n你好\n<|end|>\n", add_bos=True)
    runner = PiecewiseModel(model, Pieces())
    np.testing.assert_allclose(runner.forward(ids).numpy(), model.forward(ids).numpy(), atol=1e-5)
    cache = runner.new_cache()
    first = runner.forward(ids[:5], kv_cache=cache, start_pos=0).numpy()
    rest = runner.forward(ids[5:6], kv_cache=cache, start_pos=5).numpy()
    whole = model.forward(ids[:6]).numpy()
    np.testing.assert_allclose(np.vstack([first, rest]), whole, atol=1e-5)
    assert cache.lengths == [6] * model.config.num_layers


@pytest.mark.parametrize(
    "config",
    [
        GenerateConfig(max_new_tokens=30, temperature=0, stop_at_eos=False),
        GenerateConfig(max_new_tokens=90, temperature=0.9, seed=3, stop_at_eos=False),  # slides
        GenerateConfig(
            max_new_tokens=20,
            temperature=0.8,
            top_p=0.7,
            repetition_penalty=1.3,
            seed=5,
            use_cache=False,
        ),
        GenerateConfig(max_new_tokens=40, temperature=0, stop=("你",), stop_at_eos=False),
    ],
)
def test_generation_through_framework_pieces_is_generate(
    engine: ChatEngine, config: GenerateConfig
) -> None:
    want = generate(engine.model, engine.tokenizer, "你好 hello", config)
    got = generate_with(Pieces(), engine.model, engine.tokenizer, "你好 hello", config)
    assert (got.token_ids, got.text, got.stop_reason, got.slides) == (
        want.token_ids,
        want.text,
        want.stop_reason,
        want.slides,
    )


def test_bpe_encoding_by_replayed_merges_is_the_framework_encoding(engine: ChatEngine) -> None:
    tok = engine.tokenizer
    assert isinstance(tok, BPETokenizer)
    from framework.bpe_train import merge_pair

    mine = MineTokenizer(tok, merge_pair)
    texts = [format_training_example(DIALOGUE), "aaaa 你你你", "", "<|user|><|end|>", "x<|bad|>"]
    for text in texts:
        assert mine.encode(text, add_bos=True, add_eos=True) == tok.encode(text, True, True)
        assert mine.encode_ordinary(text) == tok.encode_ordinary(text)


# -- every lab solved: every piece is the student's, the replies are the framework's -----
def test_with_every_solution_each_piece_is_yours(solved: Path, engine: ChatEngine) -> None:
    selection = select_pieces("serve", engine.model, engine.tokenizer)
    present = {lab.id for lab in all_labs()}
    for key, (state, why) in _rows(selection).items():
        lab = next(c.info.lab for c in selection.choices if c.info.key == key)
        if key == "turn":  # lab13's whole turn: chat only
            assert state == "unused" and "minillm chat only" in why
        elif lab in present:
            assert state == "yours", (key, why)
            assert f"{lab} passes" in why and "per reply" in why
        else:
            assert (state, why) == ("framework", f"{lab} is not in this course yet")


def test_with_every_solution_the_replies_are_the_frameworks(
    solved: Path, engine: ChatEngine
) -> None:
    selection = select_pieces("chat", engine.model, engine.tokenizer, probe=False)
    assert {"bpe", "format", "scores", "mask", "softmax", "layernorm", "residual", "block"} <= (
        selection.pieces.mine
    )
    # lab13's chat_one_turn masks the ids its tokenizer does not know, which the framework's
    # chat does not: on this random model they differ (on the shipped one they agree, below)
    mine = MineEngine(engine, selection.pieces.without("turn"), on_fallback=pytest.fail)
    for prompt in PROMPTS:
        assert mine.reply("", [("user", prompt)], GREEDY) == engine.reply(
            "", [("user", prompt)], GREEDY
        )
    history = DIALOGUE[1:4]  # a system prompt and an earlier turn
    assert mine.reply("Be brief.", history, GREEDY) == engine.reply("Be brief.", history, GREEDY)


def test_with_every_solution_check_finds_no_difference(solved: Path, engine: ChatEngine) -> None:
    report = run_check(engine)
    assert report.ok and report.first is None
    statuses = {r.info.key if r.info else "together": r.status for r in report.rows}
    assert statuses["together"] == "same"
    assert statuses["softmax"] == statuses["block"] == statuses["bpe"] == "same"


# -- a mix of finished, unfinished and wrong labs ---------------------------------------
def test_the_table_says_whose_code_runs_and_why(
    mixed: Path, engine: ChatEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab04 = lab_verdicts(i for i in all_labs() if i.id == "lab04")["lab04"]
    imported: list[str] = []

    def load(info: Any) -> Any:
        imported.append(info.id)
        return load_lab_module(info)

    monkeypatch.setattr("grader.mine.choose.load_lab_module", load)
    rows = _rows(select_pieces("serve", engine.model, engine.tokenizer))
    assert sorted(imported) == ["lab09", "lab12"]  # only the code that is to run is imported
    passed, total = lab04.tests_passed, lab04.tests_total
    assert 0 < passed < total
    for key in ("scores", "mask", "softmax"):
        assert rows[key] == ("framework", f"lab04 not passing: {passed}/{total} tests")
    assert rows["layernorm"] == ("framework", "layernorm not written yet")
    assert rows["block"] == ("framework", "block_forward not written yet")
    assert rows["http"] == ("framework", "build_response not written yet")
    for key, lab in (("bpe", "lab12"), ("format", "lab09")):
        assert rows[key][0] == "yours" and rows[key][1].startswith(f"{lab} passes")
    chat_rows = _rows(select_pieces("chat", engine.model, engine.tokenizer, probe=False))
    assert chat_rows["http"] == ("unused", "used by minillm serve only")


def test_check_names_the_wrong_piece_and_the_chat_still_answers(
    mixed: Path, engine: ChatEngine
) -> None:
    report = run_check(engine)
    statuses = {r.info.key if r.info else "together": r.status for r in report.rows}
    assert statuses["scores"] == statuses["mask"] == "same"  # lab04's other pieces are right
    assert statuses["softmax"] == "different"
    assert statuses["layernorm"] == "not written"
    assert report.first is not None and report.first.info is not None
    assert (report.first.info.key, report.first.info.lab) == ("softmax", "lab04")
    selection = select_pieces("chat", engine.model, engine.tokenizer, probe=False)
    mine = MineEngine(engine, selection.pieces, on_fallback=pytest.fail)
    for prompt in PROMPTS:  # the wrong softmax is not used: the replies are the framework's
        assert mine.reply("", [("user", prompt)], GREEDY) == engine.reply(
            "", [("user", prompt)], GREEDY
        )


def test_force_mine_runs_the_wrong_lab_and_check_explains(mixed: Path, engine: ChatEngine) -> None:
    selection = select_pieces("chat", engine.model, engine.tokenizer, force=True, probe=False)
    rows = _rows(selection)
    assert rows["softmax"][0] == "yours" and rows["softmax"][1].startswith("forced; lab04")
    assert rows["layernorm"][0] == "framework"  # a stub can never be forced
    mine = MineEngine(engine, selection.pieces, on_fallback=pytest.fail)
    replies = [mine.reply("", [("user", p)], GREEDY).text for p in PROMPTS]
    assert replies != [engine.reply("", [("user", p)], GREEDY).text for p in PROMPTS]


# -- the timing probe ------------------------------------------------------------------
def _slow_softmax(x: Any) -> Any:
    time.sleep(0.003)  # a correct softmax that takes 3 ms a call, like Python loops would
    v = as_tensor(x, "x").numpy()
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_a_slow_piece_falls_back_unless_forced(
    solved: Path, engine: ChatEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "grader.mine.choose.load_lab_module", _patched_loader("softmax", _slow_softmax)
    )
    rows = _rows(select_pieces("chat", engine.model, engine.tokenizer, budget=0.2))
    state, why = rows["softmax"]
    assert state == "framework"
    assert why.startswith("too slow: ~") and "softmax: " in why and "ms per call on [1, " in why
    assert re.search(r"per reply, \d+× the framework's \(budget 0.2 s;", why), why
    assert "Hint: whole rows with numpy" in why and "--force-mine uses it anyway" in why
    assert rows["scores"][0] == "yours"  # the other lab04 pieces are fast
    forced = _rows(select_pieces("chat", engine.model, engine.tokenizer, budget=0.2, force=True))
    assert forced["softmax"][0] == "yours" and forced["softmax"][1].startswith("forced; lab04")


def _patched_loader(name: str, fn: Any) -> Any:
    def load(info: Any) -> Any:
        loaded = load_lab_module(info)
        if info.id == "lab04" and loaded.module is not None:
            setattr(loaded.module, name, fn)
        return loaded

    return load


# -- failures inside a reply ------------------------------------------------------------
def test_a_piece_that_fails_in_a_reply_falls_back_and_is_named(engine: ChatEngine) -> None:
    def softmax(x: Any) -> Any:  # right, except that it refuses long rows
        v = as_tensor(x, "x").numpy()
        if v.shape[-1] > 8:
            raise ValueError("rows longer than 8 are not supported")
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    path = Path(__file__).resolve()
    pieces = Pieces().with_piece("softmax", {"softmax": guard("softmax", "softmax", softmax, path)})
    failures: list[PieceError] = []
    mine = MineEngine(engine, pieces, on_fallback=failures.append)
    prompt = [("user", "what is attention?")]
    assert mine.reply("", prompt, GREEDY) == engine.reply("", prompt, GREEDY)
    assert len(failures) == 1 and not mine.pieces.is_mine("softmax")
    message = str(failures[0])
    assert message.startswith("your softmax (lab04) raised ValueError: rows longer than 8")
    assert f"({path.parent.name}/{path.name}:" in message


def test_a_wrong_return_value_is_named_before_it_breaks_the_next_step(engine: ChatEngine) -> None:
    pieces = Pieces().with_piece("scores", {"attention_scores": lambda q, k, scale: None})
    with pytest.raises(PieceError, match=r"attention_scores \(lab04\) returned None \(did it"):
        PiecewiseModel(engine.model, pieces).forward([2, 300, 301])


# -- a KV cache and samplers written to lab11's and lab08's contracts -------------------
def kv_cache_alloc(num_layers: int, max_seq_len: int, hidden_dim: int) -> KVCache:
    return KVCache(num_layers, max_seq_len, hidden_dim)


def kv_cache_append(cache: KVCache, layer: int, k_row: Any, v_row: Any) -> int:
    pos = cache.lengths[layer]
    if pos >= cache.max_seq_len:
        raise ValueError("full")
    cache.k.numpy()[layer, pos] = as_tensor(k_row).numpy().reshape(-1)
    cache.v.numpy()[layer, pos] = as_tensor(v_row).numpy().reshape(-1)
    cache.lengths[layer] = pos + 1
    return pos


def kv_cache_append_swapped(cache: KVCache, layer: int, k_row: Any, v_row: Any) -> int:
    return kv_cache_append(cache, layer, v_row, k_row)  # keys and values swapped


def kv_cache_len(cache: KVCache, layer: int | None = None) -> int:
    return min(cache.lengths) if layer is None else cache.lengths[layer]


def _kv(append: Any) -> Pieces:
    fns = {
        "kv_cache_alloc": kv_cache_alloc,
        "kv_cache_append": append,
        "kv_cache_len": kv_cache_len,
    }
    return Pieces().with_piece("kv_cache", fns)


def test_a_students_kv_cache_runs_the_chat_and_a_wrong_one_is_found(engine: ChatEngine) -> None:
    mine = MineEngine(engine, _kv(kv_cache_append), on_fallback=pytest.fail)
    for prompt in PROMPTS:
        assert mine.reply("", [("user", prompt)], GREEDY) == engine.reply(
            "", [("user", prompt)], GREEDY
        )
    config = GenerateConfig(max_new_tokens=80, temperature=0, stop_at_eos=False)  # slides
    got = generate_mine(_kv(kv_cache_append), engine.model, engine.tokenizer, "hi", config)
    want = generate(engine.model, engine.tokenizer, "hi", config)
    assert got.token_ids == want.token_ids and got.slides == want.slides > 0
    refs = references(engine, ("你好", "hello"), steps=4)
    assert (
        compare_model(_kv(kv_cache_append), engine.model, engine.tokenizer, refs).status == "same"
    )
    wrong = compare_model(_kv(kv_cache_append_swapped), engine.model, engine.tokenizer, refs)
    assert wrong.status == "different" and " step " in wrong.detail.en


def test_a_cache_that_returns_the_wrong_position_is_named(engine: ChatEngine) -> None:
    def append(cache: KVCache, layer: int, k_row: Any, v_row: Any) -> int:
        return kv_cache_append(cache, layer, k_row, v_row) + 1

    with pytest.raises(PieceError, match=r"kv_cache_append \(lab11\) returned position 1 for"):
        PiecewiseModel(engine.model, _kv(append)).forward([2, 300], kv_cache=KVCache(2, 64, 32))


def test_a_students_sampler_draws_what_the_framework_would(engine: ChatEngine) -> None:
    def greedy(logits: Any) -> int:
        return int(np.argmax(as_tensor(logits).numpy()))

    def temperature(logits: Any, t: float, rng: np.random.Generator) -> int:
        x = as_tensor(logits).numpy().astype(np.float64)
        if t <= 0:
            return greedy(logits)
        p = np.exp((x - x.max()) / t)
        return int(rng.choice(x.size, p=p / p.sum()))

    def top_k(logits: Any, k: int, t: float, rng: np.random.Generator) -> int:
        x = as_tensor(logits).numpy().copy()
        if 0 < k < x.size:
            x[np.argsort(-x, kind="stable")[k:]] = -np.inf
        return temperature(x, t, rng)

    fns = {"sample_greedy": greedy, "sample_temperature": temperature, "sample_top_k": top_k}
    pieces = Pieces().with_piece("sampling", fns)
    mine = MineEngine(engine, pieces, on_fallback=pytest.fail)
    assert mine.reply("", [("user", "你好")], GREEDY) == engine.reply(
        "", [("user", "你好")], GREEDY
    )
    sampled = ReplySettings(temperature=0.8, top_k=5, max_tokens=10, seed=2)
    reply = mine.reply("", [("user", "你好")], sampled)
    assert reply.completion_tokens > 0
    from grader.mine.check_model import compare_sampling

    refs = references(engine, ("hello",), steps=3)
    assert compare_sampling(pieces, refs).status == "same"
    fns_wrong = {**fns, "sample_top_k": lambda x, k, t, rng: top_k(x, k + 1, t, rng)}
    wrong = compare_sampling(Pieces().with_piece("sampling", fns_wrong), refs)
    assert wrong.status == "different" and "sample_top_k(k=3, T=1)" in wrong.detail.en


# -- serve: the student's request parsing and responses --------------------------------
def test_serving_uses_the_students_http_and_heals_a_failing_one(engine: ChatEngine) -> None:
    calls: list[str] = []

    def parse(line: str) -> tuple[str, str, str]:
        calls.append(line)
        method, path, version = line.split(" ")
        if not method.isupper():
            raise ValueError(f"bad method {method!r}")
        return method, path, version

    def build(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
        raise RuntimeError("not ready")

    pieces = Pieces().with_piece(
        "http",
        {
            "parse_request_line": guard("http", "parse_request_line", parse),
            "build_response": guard("http", "build_response", build),
        },
    )
    logged: list[str] = []
    service = ChatService(MineEngine(engine, pieces))
    service.parse_request_line, service.build_response = serving_functions(pieces, logged.append)
    body = json.dumps(
        {"messages": [{"role": "user", "content": "你好"}], "temperature": 0, "max_tokens": 5}
    ).encode()
    request = b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % len(body)
    out = io.BytesIO()
    service.handle(io.BytesIO(request + body), out, "test")
    assert out.getvalue().startswith(b"HTTP/1.1 200 OK\r\n")
    want = engine.reply("", [("user", "你好")], ReplySettings(temperature=0, max_tokens=5)).text
    assert (
        json.loads(out.getvalue().split(b"\r\n\r\n", 1)[1])["choices"][0]["message"]["content"]
        == want
    )
    assert calls == ["POST /v1/chat/completions HTTP/1.1"]
    assert len(logged) == 1 and "your build_response (lab10) raised RuntimeError" in logged[0]
    out = io.BytesIO()
    service.handle(io.BytesIO(b"get / HTTP/1.1\r\n\r\n"), out, "test")  # refused by both: 400
    assert out.getvalue().startswith(b"HTTP/1.1 400 Bad Request")


# -- the student's module ----------------------------------------------------------------
def test_stubs_are_told_from_written_functions() -> None:
    lab04 = next(i for i in all_labs(ROOT) if i.id == "lab04")
    stub = load_lab_module(lab04)
    assert stub.module is not None and is_stub(stub.function("softmax"))
    solution = load_lab_module(LabInfo("lab04", lab04.solution.parent))
    assert solution.module is not None and not is_stub(solution.function("softmax"))
    names = ("attention_scores", "apply_mask", "softmax")
    assert read_lab_file(lab04).stubs(names) == list(names)
    assert read_lab_file(LabInfo("lab04", lab04.solution.parent)).stubs(names) == []


def test_a_file_is_read_without_running_it(tmp_path: Path) -> None:
    folder = tmp_path / "lab04"
    folder.mkdir()
    (folder / "student.py").write_text(
        "import sys\nsys.exit(3)\nfrom x import softmax\nscale = 2\n"
        "def apply_mask(s, m):\n    raise NotImplementedError('lab04: implement apply_mask')\n",
        encoding="utf-8",
    )
    found = read_lab_file(LabInfo("lab04", folder))
    assert found.written == {"sys": True, "softmax": True, "scale": True, "apply_mask": False}
    assert found.missing(("softmax", "attention_scores")) == ["attention_scores"]


def test_a_student_file_that_does_not_import_is_reported(tmp_path: Path) -> None:
    folder = tmp_path / "lab04"
    folder.mkdir()
    (folder / "student.py").write_text("def softmax(x):\n    return (\n", encoding="utf-8")
    loaded = load_lab_module(LabInfo("lab04", folder))
    assert loaded.module is None and loaded.error.startswith("SyntaxError: ")
    assert read_lab_file(LabInfo("lab04", folder)).error.startswith("SyntaxError: ")


# -- the command line ------------------------------------------------------------------
@pytest.fixture(scope="module")
def model_files(engine: ChatEngine, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    folder = tmp_path_factory.mktemp("model")
    model_save(engine.model, folder / "tiny.bin")
    assert isinstance(engine.tokenizer, BPETokenizer)
    engine.tokenizer.save(folder / "tiny.vocab.json")
    return str(folder / "tiny.bin"), str(folder / "tiny.vocab.json")


def _minillm(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MINILLM_ROOT=str(root), NO_COLOR="1", MINILLM_LANG="en")
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=300,
    )


def test_chat_mine_answers_like_chat(solved: Path, model_files: tuple[str, str]) -> None:
    model, vocab = model_files
    talk = "你好\nwhat is attention?\n/quit\n"
    # a system prompt keeps lab13's chat_one_turn out (it masks the ids its tokenizer does
    # not know, which matters on this random model); it is tested on its own below
    args = ["chat", model, "--vocab", vocab, "-t", "0", "--max-tokens", "8", "--system", "Hi"]
    plain = _minillm(solved, *args, stdin=talk)
    mine = _minillm(solved, *args, "--mine", stdin=talk)
    assert plain.returncode == mine.returncode == 0, mine.stderr
    bot = [line for line in plain.stdout.splitlines() if "Bot:" in line]
    assert len(bot) == 2 and bot == [line for line in mine.stdout.splitlines() if "Bot:" in line]
    table = mine.stdout.split("miniLLM chat with")[0]
    assert "minillm chat --mine" in table and "run your code." in table
    assert "softmax" in table and "lab04 passes" in table


@pytest.mark.skipif(not shipped_model()[0].is_file(), reason="the shipped model is not installed")
def test_the_shipped_model_chats_with_every_solution_as_with_the_framework(solved: Path) -> None:
    talk = "你好\n三加四等于几\n/reset\nhello\nwhat is 5 plus 3\n/quit\n"
    plain = _minillm(solved, "chat", "-t", "0", stdin=talk)
    mine = _minillm(solved, "chat", "-t", "0", "--mine", stdin=talk)
    assert plain.returncode == mine.returncode == 0, mine.stderr
    bot = [line for line in plain.stdout.splitlines() if "Bot:" in line]
    assert len(bot) == 4 and bot == [line for line in mine.stdout.splitlines() if "Bot:" in line]
    chat_pieces = [p for p in (*CATALOGUE, TURN) if "chat" in p.commands]  # HTTP is serve's
    assert f"{len(chat_pieces)} of {len(chat_pieces)} pieces run your code." in mine.stdout


def test_mine_check_exit_status_names_the_first_difference(
    solved_root: Path, mixed_root: Path, model_files: tuple[str, str]
) -> None:
    model, vocab = model_files
    good = _minillm(solved_root, "mine", model, "--vocab", vocab, "--check")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Every piece you wrote reproduces the framework." in good.stdout
    bad = _minillm(mixed_root, "mine", model, "--vocab", vocab, "--check")
    assert bad.returncode == 1
    assert "First divergence: softmax (lab04). Revisit lab04" in bad.stdout


# -- lab13's whole turn, and the labs no piece uses --------------------------------------
def test_chat_answers_the_first_turn_with_the_students_chat_one_turn(
    solved: Path, engine: ChatEngine
) -> None:
    from dataclasses import replace

    selection = select_pieces("chat", engine.model, engine.tokenizer)
    state, why = _rows(selection)["turn"]
    assert state == "yours", why
    assert "lab13 passes" in why and "first turn" in why
    turn = selection.pieces.chat_one_turn
    assert turn is not None
    calls: list[str] = []

    def counted(*args: Any) -> Any:
        calls.append(args[2])
        return turn(*args)

    mine = MineEngine(engine, replace(selection.pieces, chat_one_turn=counted))
    shown: list[str] = []
    greedy = ReplySettings(temperature=0.0, max_tokens=8, seed=0)
    first = mine.reply("", [("user", "你好")], greedy, on_text=shown.append)
    assert calls == ["你好"] and "".join(shown) == first.text
    assert first.prompt_tokens > 1 and first.completion_tokens <= 8
    history = [("user", "你好"), ("assistant", first.text), ("user", "hello")]
    mine.reply("", history, greedy)  # later turns: outside chat_one_turn's contract
    mine.reply("be brief", [("user", "hi")], greedy)  # a system prompt: likewise
    mine.reply("", [("user", "hi")], ReplySettings(top_p=0.5, max_tokens=4))  # top-p too
    assert calls == ["你好"]


def test_the_table_lists_the_labs_no_piece_uses_and_why(solved: Path, engine: ChatEngine) -> None:
    from grader.mine.banner import print_selection
    from grader.mine.pieces import BY_KEY, NOT_USED

    selection = select_pieces("chat", engine.model, engine.tokenizer, verdicts={}, probe=False)
    out = io.StringIO()
    print_selection(selection, "en", out)
    text = out.getvalue()
    used = {p.lab for p in BY_KEY.values()}
    assert set(NOT_USED) | used >= {lab.id for lab in all_labs()}  # every lab accounted for
    assert not set(NOT_USED) & used
    for lab, why in NOT_USED.items():
        row = next(line for line in text.splitlines() if f" {lab} " in line)
        assert "(not used)" in row and why.en.split(":")[0][:30] in text

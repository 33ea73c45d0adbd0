"""framework.batching: decoding together gives every request the tokens it gets alone."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from serving_helpers import TINY

from framework.batching import StepBatcher
from framework.config import default_config
from framework.decode_step import StepDecoder
from framework.evaluate import greedy_decode
from framework.generate import Decoder, GenerateConfig, generate
from framework.kv_cache import KVCache
from framework.model import GPTModel, init_weights
from framework.serving import ChatEngine, Gate, ReplySettings
from framework.tokenizer import ByteTokenizer


def model_of(config=TINY, seed: int = 0) -> GPTModel:  # type: ignore[no-untyped-def]
    model = GPTModel(config)
    init_weights(model, seed)
    return model


# every per-request setting the server passes on, mixed across the batch
SETTINGS = [
    ReplySettings(temperature=0, max_tokens=40),
    ReplySettings(temperature=0.8, max_tokens=60, seed=1),
    ReplySettings(temperature=1.0, top_k=5, max_tokens=25, seed=2),
    ReplySettings(temperature=0.7, top_p=0.5, max_tokens=50, seed=3),
    ReplySettings(temperature=0.9, max_tokens=45, seed=4, presence_penalty=1.5),
    ReplySettings(temperature=0.9, max_tokens=55, seed=5, frequency_penalty=0.8),
    ReplySettings(temperature=1.2, max_tokens=30, seed=6, stop=("e",)),
    ReplySettings(temperature=0.8, top_k=20, top_p=0.9, max_tokens=70, seed=7),
    ReplySettings(temperature=0, max_tokens=10),
    ReplySettings(temperature=1.0, max_tokens=64, seed=8, stop=("xq", "a b")),
]


def test_a_batched_step_gives_each_row_its_logits_alone() -> None:
    model = model_of(default_config(), seed=3)
    c, rng = model.config, np.random.default_rng(0)
    stepper = StepDecoder(model)
    batcher = StepBatcher(stepper, capacity=6)
    alone = []
    for slot in range(6):  # six caches of different lengths, in the pool and on their own
        prompt = rng.integers(0, c.vocab_size, size=int(rng.integers(1, 90))).tolist()
        own = KVCache(c.num_layers, c.max_seq_len, c.hidden_dim)
        model.forward(prompt, kv_cache=own)
        model.forward(prompt, kv_cache=batcher._cache(slot))
        alone.append((int(rng.integers(0, c.vocab_size)), len(prompt), own))
    want = np.stack([stepper.step(tok, pos, own) for tok, pos, own in alone])  # (6, V)
    for slots in ([0, 1, 2, 3, 4, 5], [5, 2, 0], [3], [4, 1]):  # any subset, any order
        toks, poss = [alone[s][0] for s in slots], [alone[s][1] for s in slots]
        keys, values = batcher.keys.copy(), batcher.values.copy()  # each subset from the same state
        got = stepper.step_batch(toks, poss, slots, keys, values)  # (B, V)
        # bit for bit, not within a tolerance: the sampler must make the same decisions
        assert np.array_equal(got, want[slots]), (
            f"slots {slots}: max diff {np.abs(got - want[slots]).max()}"
        )


def _generate_all(
    model: GPTModel, configs: list[GenerateConfig], together: bool
) -> list[list[int]]:
    """Each config's token ids: one after another, or all at once in threads sharing a batch."""
    batcher = StepBatcher(StepDecoder(model), capacity=len(configs))
    results: list[list[int]] = [[] for _ in configs]
    start = threading.Barrier(len(configs) if together else 1)

    def one(i: int) -> None:
        start.wait(10)
        with batcher.seat() as seat:
            prompt = [2, *range(40 + i, 40 + i + 3 * i + 1)]  # prompts of different lengths
            results[i] = generate(model, ByteTokenizer(), prompt, configs[i], seat=seat).token_ids

    if together:
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(configs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert batcher.rows > batcher.steps, "the steps were never batched"
    else:
        for i in range(len(configs)):
            one(i)
        assert batcher.rows == batcher.steps  # alone: one row per step
    return results


def test_concurrent_generations_make_the_tokens_they_make_alone() -> None:
    model = model_of()
    configs = [
        GenerateConfig(
            max_new_tokens=20 + 7 * i,
            temperature=[0, 0.8, 1.3][i % 3],
            top_k=[0, 5, 40][i % 3],
            top_p=[1.0, 0.9, 0.6][i % 3],
            seed=i,
            repetition_penalty=[1.0, 1.3][i % 2],
            frequency_penalty=0.5 * (i % 2),
            stop_at_eos=False,
        )
        for i in range(12)
    ]
    alone = _generate_all(model, configs, together=False)
    together = _generate_all(model, configs, together=True)
    for i, (a, b) in enumerate(zip(alone, together, strict=True)):
        assert a == b, f"request {i} ({configs[i]}): alone {a}, in the batch {b}"
    assert len({tuple(a) for a in alone}) == len(alone)  # the requests did differ


def test_a_thread_is_woken_for_its_own_batch_only() -> None:
    """`Seat.step` from many threads (each blocking until its batch ran): an arrival wakes
    nobody and a finished batch wakes its own threads, about one wake-up per row. Waking
    every waiter at each arrival made 16 streams no faster than one after another."""
    model, n = model_of(), 8
    batcher = StepBatcher(StepDecoder(model), capacity=n, wait=30.0)  # no clock: arrivals only
    seated, done = threading.Barrier(n), []

    def one(i: int) -> None:
        with batcher.seat() as seat:
            seated.wait(10)  # every seat taken before the first step: each batch is whole
            decoder = Decoder(model, [2, *range(40, 41 + i)], seat=seat)
            for _ in range(24):
                decoder.push(int(np.argmax(decoder.logits())))  # the steps block here
        done.append(i)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(done) == list(range(n)), "a generation did not finish"
    assert batcher.rows >= 2 * batcher.steps, "the steps were hardly batched"
    # each row's thread wakes once (or not at all: it ran the batch), and the next batch's
    # first thread once more per batch (the end of the previous batch, or a seat freed)
    assert 0 < batcher.wakeups <= batcher.rows + 2 * batcher.steps, (
        f"{batcher.wakeups} wake-ups for {batcher.rows} rows in {batcher.steps} steps"
    )


def _sampling_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the thread of every draw `framework.generate` makes from now on."""
    import framework.generate as gen

    names: list[str] = []
    real_sample = gen.sample

    def sample(*args, **kwargs):  # type: ignore[no-untyped-def]
        names.append(threading.current_thread().name)
        return real_sample(*args, **kwargs)

    monkeypatch.setattr(gen, "sample", sample)
    return names


def _no_decode_thread_left() -> bool:
    for t in threading.enumerate():
        if t.name == "decode":
            t.join(5)
    return not [t for t in threading.enumerate() if t.name == "decode"]


def test_driven_generations_are_stepped_and_sampled_by_one_decode_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`generate` in a seat hands its loop to the batch's decode thread after the prefill:
    the steps and draws of concurrent generations run there, for all of them, so no
    thread but the callers' wakes per token (to pass its text on). The thread ends with
    the last generation."""
    configs = [GenerateConfig(max_new_tokens=30, temperature=0.9, seed=i, stop_at_eos=False)
               for i in range(6)]  # fmt: skip
    model = model_of()
    alone = _generate_all(model, configs, together=False)
    names = _sampling_threads(monkeypatch)
    together = _generate_all(model, configs, together=True)
    assert together == alone
    # each caller makes its first draw (after its prefill); the first may step a few more
    # alone until the next one arrives; the rest run in the decode thread
    assert names.count("decode") >= len(names) // 2, names
    assert _no_decode_thread_left(), "the decode thread lingers"


def test_a_generation_that_joins_running_ones_is_prefilled_in_the_decode_thread() -> None:
    """A generation that comes while another is being decoded does not prefill in its
    caller's thread, where each small operation of the prefill would queue for the GIL
    against the decode thread's: the decode thread prefills it between two steps."""
    model = model_of()
    batcher = StepBatcher(StepDecoder(model), capacity=4)
    prefills: list[tuple[int, str]] = []  # (prompt length, thread) of each prefill
    real_forward = model.forward

    all_prefilled = threading.Event()

    def forward(ids, *args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("kv_cache") is not None and len(ids) > 1:
            prefills.append((len(ids), threading.current_thread().name))
            if len(prefills) == 4:
                all_prefilled.set()
        return real_forward(ids, *args, **kwargs)

    model.forward = forward  # type: ignore[method-assign]
    first_text = threading.Event()
    made: dict[int, list[int]] = {}

    def decoding_alone(text: str) -> None:  # the lone generation's caller, between two steps
        if not first_text.is_set():
            first_text.set()  # it holds the batch, alone, until the others have prefilled
            assert all_prefilled.wait(30), "the others were never prefilled"

    def one(i: int) -> None:
        config = GenerateConfig(max_new_tokens=60, temperature=0.9, seed=i, stop_at_eos=False)
        with batcher.seat() as seat:
            on_text = decoding_alone if i == 0 else None
            prompt = [2, *range(40, 41 + i)]  # lengths 2, 3, 4, 5: each prefill is known
            made[i] = generate(
                model, ByteTokenizer(), prompt, config, seat=seat, on_text=on_text
            ).token_ids

    lone = threading.Thread(target=one, args=(0,), name="caller-0")
    lone.start()
    assert first_text.wait(30), "the lone generation made no text"  # it decodes, alone
    others = [threading.Thread(target=one, args=(i,), name=f"caller-{i}") for i in (1, 2, 3)]
    for t in others:
        t.start()
    for t in (lone, *others):
        t.join(60)
    assert sorted(made) == [0, 1, 2, 3] and all(len(ids) == 60 for ids in made.values())
    assert sorted(prefills) == [(2, "caller-0"), (3, "decode"), (4, "decode"), (5, "decode")]


def _pieces_and_handovers(clock: object, together: bool) -> tuple[list[list[str]], int]:
    """Every generation's pieces of text as its caller got them, and the batch's hand-overs,
    for six generations with the batcher's hand-over clock `clock`."""
    model, n = model_of(), 6
    batcher = StepBatcher(StepDecoder(model), capacity=n, clock=clock)  # type: ignore[arg-type]
    pieces: list[list[str]] = [[] for _ in range(n)]
    seated = threading.Barrier(n if together else 1)

    def one(i: int) -> None:
        with batcher.seat() as seat:
            seated.wait(10)  # every seat taken first: the generations are driven together
            config = GenerateConfig(max_new_tokens=40, temperature=0.9, seed=i, stop_at_eos=False)
            generate(model, ByteTokenizer(), [2, 40 + i], config, seat=seat,
                     on_text=pieces[i].append)  # fmt: skip

    if together:
        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    else:
        for i in range(n):
            one(i)
    return pieces, batcher.handovers


def test_a_caller_is_woken_with_its_text_at_most_every_hand_over_interval() -> None:
    """The decode thread keeps a driven generation's text until `hand_over` seconds have
    passed since its caller last got any: one wake-up for several pieces (waking 16
    callers for every token cost the batch a quarter of its throughput), and one call of
    `on_text` with them joined (a stream's one event and one write). The text is the
    same, in order; the first piece and the last go at once."""
    alone, none = _pieces_and_handovers(lambda: 0.0, together=False)
    assert none == 0  # one at a time, each caller steps its own generation
    frozen, handed = _pieces_and_handovers(lambda: 0.0, together=True)  # no time passes
    assert ["".join(p) for p in frozen] == ["".join(p) for p in alone]
    assert 0 < handed <= 2 * len(alone), handed  # the first piece, then the rest at the end
    # a call per hand-over (and per piece a caller made in its own thread before it joined)
    assert sum(map(len, frozen)) < sum(map(len, alone)) / 2, [len(p) for p in frozen]
    ticks = iter(range(1, 1_000_000))
    ticking, handed = _pieces_and_handovers(lambda: float(next(ticks)), together=True)
    assert ["".join(p) for p in ticking] == ["".join(p) for p in alone]
    assert handed > 4 * len(alone), handed  # a second per round: every round's text at once


def test_a_lone_generation_steps_in_its_callers_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no other generation driven, a caller steps its own (no thread switch per
    token); one after another, the decode thread never starts."""
    configs = [GenerateConfig(max_new_tokens=15, temperature=0.9, seed=i, stop_at_eos=False)
               for i in range(3)]  # fmt: skip
    model = model_of()
    names = _sampling_threads(monkeypatch)
    _generate_all(model, configs, together=False)  # each alone: rows == steps
    assert len(names) == 3 * 15 and "decode" not in names
    assert _no_decode_thread_left()


def test_a_failed_step_is_raised_in_every_caller_and_the_batch_recovers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = model_of()
    batcher = StepBatcher(StepDecoder(model), capacity=3)
    real = batcher.stepper.step_batch
    calls = []

    def failing(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 3:
            raise MemoryError("no room for the step")
        return real(*args, **kwargs)

    monkeypatch.setattr(batcher.stepper, "step_batch", failing)
    cfg = GenerateConfig(max_new_tokens=30, temperature=0.8, seed=4, stop_at_eos=False)
    errors: list[BaseException] = []
    start = threading.Barrier(3)

    def one(i: int) -> None:
        start.wait(10)
        with batcher.seat() as seat:
            try:
                generate(model, ByteTokenizer(), [2, 40 + i], cfg, seat=seat)
            except MemoryError as e:
                errors.append(e)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors and all("no room" in str(e) for e in errors), errors
    assert batcher.seated == 0 and not batcher._flows
    with batcher.seat() as seat:  # the batch works on after the failure
        after = generate(model, ByteTokenizer(), [2, 40], cfg, seat=seat)
    assert len(after.token_ids) == 30


def _replies(engine: ChatEngine, together: bool) -> list[tuple[str, int, str]]:
    out: list[tuple[str, int, str]] = [("", 0, "")] * len(SETTINGS)
    start = threading.Barrier(len(SETTINGS) if together else 1)

    def one(i: int) -> None:
        start.wait(10)
        r = engine.reply("", [("user", f"question {i}" + "?" * i)], SETTINGS[i])
        out[i] = (r.text, r.completion_tokens, r.finish_reason)

    if not together:
        for i in range(len(SETTINGS)):
            one(i)
        return out
    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(SETTINGS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def test_concurrent_replies_equal_their_replies_alone() -> None:
    engine = ChatEngine(model_of(), ByteTokenizer(), "tiny")
    alone = _replies(engine, together=False)
    steps, rows = engine.batcher.steps, engine.batcher.rows  # type: ignore[union-attr]
    assert steps == rows
    together = _replies(engine, together=True)
    assert engine.batcher.rows - rows > engine.batcher.steps - steps  # type: ignore[union-attr]
    for i, (a, b) in enumerate(zip(alone, together, strict=True)):
        assert a == b, f"{SETTINGS[i]}: alone {a}, in the batch {b}"
    assert engine.batcher.seated == 0  # type: ignore[union-attr]


def test_a_reply_whose_client_left_frees_its_seat_and_the_others_go_on() -> None:
    engine = ChatEngine(model_of(), ByteTokenizer(), "tiny")
    engine.batch_size = 2
    settings = ReplySettings(temperature=0.8, max_tokens=60, seed=9)
    want = engine.reply("", [("user", "hi")], settings)

    def gone(piece: str) -> None:
        raise BrokenPipeError("the client went away")

    results: list[object] = []

    def leaver() -> None:
        with pytest.raises(BrokenPipeError):
            engine.reply("", [("user", "bye")], ReplySettings(temperature=1.0, seed=1), gone)
        results.append("left")

    t = threading.Thread(target=leaver)
    t.start()
    got = engine.reply("", [("user", "hi")], settings)
    t.join(30)
    assert results == ["left"] and got == want
    assert engine.batcher is not None and engine.batcher.seated == 0


def test_the_gate_lets_a_batch_generate_and_times_the_backlog_in_rounds() -> None:
    gate = Gate(waiting=4, timeout=60, batch=2)
    inside, done = threading.Barrier(2), threading.Event()

    def second() -> None:
        with gate.turn():
            inside.wait(5)
            done.wait(5)

    with gate.turn():
        other = threading.Thread(target=second)
        other.start()
        inside.wait(5)  # both callers generate at once
        assert gate.generating == 2 and gate.backlog == 2
        gate.average, gate.backlog = 3.0, 5  # five admitted, two at a time: three rounds
        assert gate.retry_after(default=2) == 9
        gate.backlog = 2
        done.set()
        other.join(5)
    assert gate.generating == 0 and not gate.busy


def test_greedy_decode_gives_each_prompt_the_tokens_generate_gives_it_alone() -> None:
    model = GPTModel(TINY)
    init_weights(model, seed=3)
    rng = np.random.default_rng(5)
    prompts = [[2, *rng.integers(3, 200, size=int(n)).tolist()] for n in rng.integers(1, 30, 9)]
    budgets = [int(b) for b in rng.integers(-1, 12, size=len(prompts))]
    stop_at = 150  # a reply also ends at this id, as a chat reply ends at <|end|>
    stops = (stop_at, ByteTokenizer().eos_id)  # generate stops at EOS too
    got = greedy_decode(model, prompts, budgets, lambda _, ids: ids[-1] in stops, capacity=4)
    for p, budget, ids in zip(prompts, budgets, got, strict=True):
        cfg = GenerateConfig(max_new_tokens=max(budget, 0), temperature=0.0, top_k=0,
                             top_p=1.0, stop_ids=(stop_at,))  # fmt: skip
        alone = generate(model, ByteTokenizer(), p, cfg).token_ids if budget > 0 else []
        assert (ids[:-1] if ids[-1:] and ids[-1] in stops else ids) == alone, (p, budget)
    assert any(len(ids) == b > 0 for ids, b in zip(got, budgets, strict=True))  # budget ends it


def test_eval_answers_a_gpt_model_as_the_generic_path_does() -> None:
    from framework.evaluate import greedy_replies

    model = GPTModel(TINY)
    init_weights(model, seed=4)

    class Generic:  # forward_batch only: the path for any other model
        config = model.config

        def forward_batch(self, ids: np.ndarray) -> np.ndarray:
            return model.forward_batch(ids)

    questions = ["hi", "1+2=?", "what is attention?", "你好", "7-2=?", "a" * 40]
    tok = ByteTokenizer()
    assert greedy_replies(model, tok, questions, 20) == greedy_replies(
        Generic(), tok, questions, 20
    )


@pytest.mark.parametrize(("prompt", "budget"), [([], 3), ([2] * 120, 9)])
def test_greedy_decode_refuses_a_prompt_that_does_not_fit(prompt: list[int], budget: int) -> None:
    model = GPTModel(TINY)  # context 128
    with pytest.raises(ValueError, match="fit the context of 128"):
        greedy_decode(model, [[2, 5], prompt], [4, budget], lambda _, ids: False)
    too_long = [2] * 130  # no room at all: no reply, as evaluation asks it (budget <= 0)
    assert greedy_decode(model, [too_long], [-2], lambda _, ids: False) == [[]]

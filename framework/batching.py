"""Continuous batching: the decode steps of many generations, run as one batched step.

Each request of `minillm serve` generates in its own thread, with its own prompt, sampler,
seed, penalties and stop strings (`framework.generate`). What they share is the model: a
`StepBatcher` gathers their one-token decode steps and runs them together through
`StepDecoder.step_batch`, one matrix product per layer for all of them, while each
sequence attends over its own KV cache. A generation takes a `Seat` (a slot of the
batcher's cache pool) for as long as it runs; it can join or leave between any two steps.

Two ways to run in it:

- `generate(..., seat=seat)` (what `minillm serve` does) hands its loop to the batch's
  decode thread (`StepBatcher.drive`). That one thread runs the prefill of each
  generation that joined, then a batched step for every driven generation, then each
  one's sampling and text up to its next step, and passes the text to its caller's
  thread, which writes it out:

      caller A:                           ┌ text ┐        ┌ text
      caller B:                           │      │        │
      decode:   prefill A, B, [A, B] step, sample A, B ─── [A, B] step, sample A, B ─── …

  A generation joins before the next step, and leaves when it ends or its caller has gone
  (`on_text` raised: a client that left). A lone generation is prefilled and stepped by
  its caller until a second one is driven, and then joins it. No thread wakes per token: each
  caller gets the text made since its last hand-over at most every `hand_over` seconds
  (its first text and its last at once). On a small machine a thread switch costs tens
  of µs, as much as a token's sampling: 16 threads that each sampled their own tokens
  were no faster than one after another, and 16 callers woken for every token cost the
  batch a quarter of its throughput. The prefills are the decode thread's too: 16 callers
  prefilling beside it held the GIL for most of its first steps (3-18 ms each, not 0.6).
- `Seat.step` from any thread blocks until its step has run in a batch: a step runs as
  soon as every seated generation is waiting for one, or when none has arrived for
  `wait` seconds (one may be prefilling); the thread that arrives last runs it, and each
  waiting thread is woken for its own batch only.

A seat's logits do not depend on the other seats (see `framework.decode_step`), so a
seeded reply is the same alone or in any batch.

`framework.evaluate.greedy_decode` is the same idea without threads, for evaluation: many
prompts, each continued greedily; a prompt takes a free slot as soon as another's reply
ends.

Not here: prefill in the batch (a new sequence prefills alone, through
`GPTModel.forward`, between two of the others' steps), paged caches, preemption. Where the
idea comes from: Orca's iteration-level scheduling (Yu et al., OSDI 2022), vLLM and
llama-server's slots.

Example:
    >>> from framework.config import tiny_config
    >>> from framework.model import GPTModel, init_weights
    >>> model = GPTModel(tiny_config()); init_weights(model, seed=0)
    >>> batcher = StepBatcher(StepDecoder(model), capacity=2)
    >>> with batcher.seat() as seat:
    ...     _ = model.forward([2, 76], kv_cache=seat.cache)
    ...     seat.step(105, 2, seat.cache).shape
    (260,)
"""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from framework.decode_step import StepDecoder, StepRequest
from framework.kv_cache import KVCache
from framework.tensor import Tensor
from framework.validate import positive_int

__all__ = ["Seat", "StepBatcher", "slot_cache"]

F32 = NDArray[np.float32]


@dataclass
class _Job:
    """One sequence's decode step, waiting for its batch."""

    token_id: int
    pos: int
    slot: int
    logits: F32 | None = None  # (V,) set by the thread that runs the batch
    error: BaseException | None = None
    wake: threading.Event = field(default_factory=threading.Event)  # done, or may lead


@dataclass
class _Flow:
    """A generation driven by the decode thread (`StepBatcher.drive`)."""

    run: Generator[str | StepRequest, Any, None]  # framework.generate's loop, scheduled
    step: StepRequest | None  # its pending decode step (None: not started, its prefill due)
    seat: Seat
    out: queue.SimpleQueue[tuple[str, object]] = field(default_factory=queue.SimpleQueue)
    cancelled: bool = False  # its caller has gone (set by the caller's thread)
    released: threading.Event = field(default_factory=threading.Event)  # dropped for good
    held: list[str] = field(default_factory=list)  # text not handed to the caller yet
    handed: float = float("-inf")  # when text was last handed over (the batcher's clock)

    def advance(self, logits: F32, emit: Callable[[str], Any]) -> StepRequest | None:
        """Answer the pending step with its `logits`: its cache now holds row `pos`; the
        loop runs on to its next step (returned), its text to `emit`; None when it ends."""
        assert self.step is not None
        cache = self.seat.cache
        cache.lengths[:] = [self.step.pos + 1] * cache.num_layers
        return _advance(self.run, logits, emit)

    def hold(self, text: str) -> None:
        """Text made in the decode thread, kept until it is handed over (`hand_over`)."""
        self.held.append(text)

    def hand_over(self, now: float | None = None) -> bool:
        """Give the caller's thread the text held so far (one wake-up for all of it);
        `now` (the batcher's clock) is when, for the next hand-over's interval. True if
        there was text."""
        if now is not None:
            self.handed = now
        if not self.held:
            return False
        self.out.put(("text", self.held))
        self.held = []
        return True


def _advance(
    run: Generator[str | StepRequest, Any, None], value: Any, emit: Callable[[str], Any]
) -> StepRequest | None:
    """Send `value` into the loop (None to start it) and pass the text it yields to `emit`,
    up to its next step (returned); None when the loop ends."""
    try:
        item = run.send(value)
        while isinstance(item, str):
            emit(item)
            item = next(run)
    except StopIteration:
        return None
    return item


def _ignore(text: str) -> None:
    """An `on_text` that keeps nothing."""


class Seat:
    """A generation's place in the batch: slot `slot` of the pool and the cache on it.

    `step(token_id, pos, cache)` is `StepDecoder.step` for this seat's cache (the
    interface `framework.generate.Decoder` calls), run in a batch with the other seats.
    """

    def __init__(self, batcher: StepBatcher, slot: int, cache: KVCache) -> None:
        self.batcher, self.slot, self.cache = batcher, slot, cache

    def step(self, token_id: int, pos: int, cache: KVCache) -> F32:
        """Logits [V] for `token_id` at `pos` (see `StepDecoder.step`).

        Raises:
            ValueError: as `StepDecoder.step`, or for a cache that is not this seat's.
        """
        if cache is not self.cache:
            raise ValueError("a seat steps only its own cache (seat.cache)")
        return self.batcher.step(self, token_id, pos)


class StepBatcher:
    """Runs the decode steps of up to `capacity` seated generations as batched steps.

    Args:
        stepper: the model's folded step (shared, read only).
        capacity: seats (sequences decoded together); `seat` waits for a free one.
        wait: seconds a step waits for the other seats' steps before it runs without them.
        hand_over: seconds a driven generation's text may wait in the decode thread
            before its caller's thread is woken to pass it on (`drive`); its first text
            and its last go at once.
        clock: the clock of `hand_over` (seconds; `time.monotonic`).

    Attributes:
        steps: batched steps run so far; `rows` the sequence steps they held (so
            rows / steps is the mean batch size).
        wakeups: times a waiting step's thread was woken (its batch done, its turn to
            lead, or its clock): about one per row. Each thread has its own wake-up, so an
            arrival wakes nobody and a finished batch wakes its own threads only.
        handovers: times the decode thread handed text to a caller's thread (`drive`).
    """

    def __init__(
        self,
        stepper: StepDecoder,
        capacity: int,
        wait: float = 0.002,
        hand_over: float = 0.02,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stepper, self.capacity, self.wait = stepper, positive_int(capacity, "capacity"), wait
        self.hand_over, self._clock = hand_over, clock
        layers, max_len, hidden = stepper.shape
        self.keys = np.zeros((capacity, layers, max_len, hidden), dtype=np.float32)
        self.values = np.zeros_like(self.keys)  # (P, L, maxS, H): one cache per slot
        self._free = list(range(capacity))
        self._pending: list[_Job] = []
        self._running = False  # a thread is running a batch
        self._last = 0.0  # when the latest step arrived
        self._cond = threading.Condition()
        self._stepping = threading.Lock()  # one batched step at a time, whoever runs it
        self._flows: list[_Flow] = []  # generations the decode thread drives (`drive`)
        self._decoding = False  # the decode thread runs
        self._alone: _Flow | None = None  # a lone generation its caller steps (`drive`)
        self.steps = self.rows = self.wakeups = self.handovers = 0

    @property
    def seated(self) -> int:
        """Generations holding a seat now."""
        return self.capacity - len(self._free)

    @contextmanager
    def seat(self) -> Iterator[Seat]:
        """Hold a seat for one generation: its cache is slot `seat.slot` of the pool.

        Waits while every seat is taken. The slot is freed on exit (a client that went
        away frees its seat as soon as its generation ends).
        """
        with self._cond:
            self._cond.wait_for(lambda: bool(self._free))
            slot = min(self._free)  # the lowest: the pool's busy part stays short
            self._free.remove(slot)
        try:
            yield Seat(self, slot, self._cache(slot))
        finally:
            with self._cond:
                self._free.append(slot)
                self._cond.notify_all()  # a seat is free
                self._wake_next()  # and the pending batch may be complete now

    def _cache(self, slot: int) -> KVCache:
        return slot_cache(self.keys, self.values, slot)

    def step(self, seat: Seat, token_id: int, pos: int) -> F32:
        """One decode step of `seat`, run with the steps of the other seats."""
        self.stepper.check(token_id, pos, seat.cache)
        job = _Job(token_id, pos, seat.slot)
        with self._cond:
            self._pending.append(job)
            self._last = time.monotonic()
        woken = False
        while True:
            with self._cond:
                self.wakeups += woken
                if job.logits is not None or job.error is not None:
                    break
                batch: list[_Job] | None = None
                if self._lead():  # the arrival that completes the batch runs it at once
                    batch, self._pending, self._running = self._pending, [], True
                first = bool(self._pending) and self._pending[0] is job  # not yet running
            if batch is not None:
                self._run(batch)
                woken = False
                continue
            # Each job is woken on its own, when its batch is done or it may lead the next:
            # waking every waiter at each arrival, and all of them at the end of a batch,
            # cost more than batching saved (16 seats, under the GIL). Only the first job
            # of the pending batch keeps the clock (`wait`).
            job.wake.wait(self.wait if first else None)
            job.wake.clear()  # what woke it is in the state, read again above
            woken = True
        return self._result(job, seat.cache)

    def _lead(self) -> bool:
        """Whether the calling thread should run the pending steps now (lock held)."""
        if self._running or not self._pending:
            return False
        everyone = len(self._pending) >= self.seated
        return everyone or time.monotonic() - self._last >= self.wait

    def _run(self, batch: list[_Job]) -> None:
        """Run `batch` as one step; every job gets its logits, or the error, and is woken,
        and so is the first job of the next batch (it may be complete already)."""
        try:
            slots = [j.slot for j in batch]
            logits = self._step([j.token_id for j in batch], [j.pos for j in batch], slots)
            for j, row in zip(batch, logits, strict=True):
                j.logits = row
        except BaseException as e:  # every waiting thread sees the error
            for j in batch:
                j.error = e
            if not isinstance(e, Exception):
                raise
        finally:
            with self._cond:
                self._running = False
                self._wake_next()
            for j in batch:
                j.wake.set()

    def _step(self, token_ids: list[int], positions: list[int], slots: list[int]) -> F32:
        """One batched step (one at a time, whichever thread runs it), counted."""
        top = max(slots) + 1  # slots 0…top−1 hold every stepping cache
        with self._stepping:
            logits = self.stepper.step_batch(
                token_ids, positions, slots, self.keys[:top], self.values[:top]
            )
            self.steps, self.rows = self.steps + 1, self.rows + len(slots)
        return logits

    def _wake_next(self) -> None:
        """Wake the first pending job, which may lead its batch now (lock held)."""
        if self._pending:
            self._pending[0].wake.set()

    def drive(
        self,
        seat: Seat,
        run: Generator[str | StepRequest, Any, None],
        on_text: Callable[[str], Any] | None,
    ) -> None:
        """Run one generation's loop (`framework.generate`, scheduled) in this batch.

        The loop goes to the batch's decode thread, which runs its prefill between two
        batched steps, then every driven generation's steps together and their sampling
        after each step, one thread for all: no thread wakes per token. A generation that
        comes while none is driven is prefilled and stepped in the caller's thread, until
        another comes. The caller's thread passes on the text (`on_text`, called here, in
        order), woken with what the decode thread made at most every `hand_over` seconds
        (its first piece and its last at once), and called once per hand-over with what
        it holds, joined: a stream writes one event, and makes one write, for it. If
        `on_text` raises (a client that left), the generation is dropped at the next step
        and the error is raised here once it is.

        Raises:
            whatever the loop raises, in the caller's thread.
        """
        emit = on_text or _ignore
        flow = _Flow(run, None, seat)
        with self._cond:
            alone = not self._flows and not self._decoding and self._alone is None
            if alone:  # what comes meanwhile, even during its prefill, is driven
                self._alone = flow
            else:  # its prefill runs in the decode thread, between two batched steps
                self._join(flow)
        if alone and not self._run_alone(flow, emit):
            return  # it ended before another generation came
        try:
            while True:
                kind, value = flow.out.get()
                if kind == "text":  # what was made since the last hand-over, as one piece
                    emit("".join(cast(list[str], value)))
                elif kind == "error":
                    raise value  # type: ignore[misc]
                else:
                    return
        except BaseException:
            flow.cancelled = True
            raise
        finally:
            flow.released.wait()  # the seat's cache is no longer stepped

    def _join(self, flow: _Flow) -> None:
        """Hand `flow` to the decode thread, starting it if it is not running (lock held)."""
        self._flows.append(flow)
        if not self._decoding:
            self._decoding = True
            threading.Thread(target=self._decode, name="decode", daemon=True).start()

    def _run_alone(self, flow: _Flow, emit: Callable[[str], Any]) -> bool:
        """Prefill and step `flow` in its caller's thread while no other generation is
        driven (a lone stream pays no thread switch per token); True once it has joined
        the decode thread because another one came, False when it ended first (or needed
        no step: a probe model). Its errors are raised here."""
        try:
            if (first := _advance(flow.run, None, emit)) is None:  # the prefill, its text
                return False
            flow.step = first
            while True:
                with self._cond:
                    if self._flows:  # another generation is driven: decode together
                        self._alone = None
                        self._join(flow)
                        return True
                step = flow.step
                assert step is not None
                row = self._step([step.token_id], [step.pos], [flow.seat.slot])[0]
                if (after := flow.advance(row, emit)) is None:
                    return False
                flow.step = after
        finally:
            with self._cond:
                if self._alone is flow:
                    self._alone = None

    def _decode(self) -> None:
        """The decode thread: while generations are driven, one batched step for all of
        them, then each one's loop up to its next step; it ends when none is left."""
        while True:
            with self._cond:
                for f in [f for f in self._flows if f.cancelled]:
                    self._drop(f)
                flows = list(self._flows)
                if not flows:
                    self._decoding = False
                    return
            try:
                self._round(flows)
            except BaseException as e:  # never leave a caller waiting
                with self._cond:
                    for f in flows:
                        if f in self._flows:
                            self._hand_over(f)
                            f.out.put(("error", e))
                            self._drop(f)
                if not isinstance(e, Exception):
                    raise

    def _round(self, flows: list[_Flow]) -> None:
        """The prefill of each flow that has not started, then one batched step of the
        flows that have a step, and each one's loop on to its next step."""
        # The prefills run here, between two steps: in their callers' threads, each of
        # their hundreds of small operations queued for the GIL against the decode
        # thread's, and the first steps of a burst took 3-18 ms instead of 0.6.
        for f in [f for f in flows if f.step is None]:
            self._settle(f, functools.partial(_advance, f.run, None, f.hold), self._clock())
        flows = [f for f in flows if f.step is not None]
        if not flows:
            return
        steps = [cast(StepRequest, f.step) for f in flows]
        logits = self._step(
            [s.token_id for s in steps], [s.pos for s in steps], [f.seat.slot for f in flows]
        )
        now = self._clock()
        for f, row in zip(flows, logits, strict=True):
            self._settle(f, functools.partial(f.advance, row, f.hold), now)

    def _settle(self, f: _Flow, advance: Callable[[], StepRequest | None], now: float) -> None:
        """Run `f`'s loop on to its next step (`advance`); hand its text over when due, and
        drop it once it ends (its caller gets its error, or done)."""
        try:
            after = advance()
        except Exception as e:  # the generation's own error, raised in its caller
            self._hand_over(f)
            f.out.put(("error", e))
            after = None
        else:
            if after is None:
                self._hand_over(f)
                f.out.put(("done", None))
            elif f.held and now - f.handed >= self.hand_over:
                self._hand_over(f, now)  # one wake-up for every piece since the last
        if after is None:
            with self._cond:
                self._drop(f)
        f.step = after

    def _hand_over(self, flow: _Flow, now: float | None = None) -> None:
        """`flow.hand_over`, counted."""
        self.handovers += flow.hand_over(now)

    def _drop(self, flow: _Flow) -> None:
        """Stop driving `flow` (lock held): its loop is closed, its caller released."""
        self._flows.remove(flow)
        if flow.cancelled:
            flow.run.close()
        flow.released.set()

    def _result(self, job: _Job, cache: KVCache) -> F32:
        if job.error is not None:
            raise job.error
        assert job.logits is not None
        cache.lengths[:] = [job.pos + 1] * cache.num_layers
        return job.logits


def slot_cache(keys: F32, values: F32, slot: int) -> KVCache:
    """A `KVCache` whose keys and values are slot `slot` of a pool (P, L, maxS, H): views."""
    cache = KVCache(*keys.shape[1:])
    shape, size = keys.shape[1:], keys[0].size  # (L, maxS, H)
    cache.k = Tensor(keys.reshape(-1), shape, offset=slot * size)
    cache.v = Tensor(values.reshape(-1), shape, offset=slot * size)
    return cache

"""Load on `minillm serve`, on the loopback interface only, bounded in count and time.

Starts `minillm serve` in a child process with a randomly initialised default-size model
(the protocol is under test, not the replies), then, at the default settings:

1. 200 concurrent ``GET /health``: every one must be 200;
2. a burst of 16 concurrent chat requests (32 new tokens each): all 16 must be served;
   then the concurrency ratio: aggregate tokens/s of 16 concurrent streams over the
   tokens/s of the same 16 requests one after another (continuous batching; goal ≥ 2),
   the median of `ROUNDS` interleaved runs, and whether each request got the same reply
   both ways (it must: same seed, same tokens);
3. 1,000 malformed requests (garbage, bad lines, bad JSON, oversized bodies, stalls cut
   short), 50 at a time: each must get its 4xx, and the server must still answer after;
4. slowloris: 300 connections that send a request head one byte every 2 s, reconnecting
   whenever the server closes them, for `DRIP_SECONDS`; meanwhile normal requests
   (``GET /health`` and a few chats) must all be served;

and once more with ``--queue 2``: 20 concurrent chats, where the refused ones get a 503
whose ``Retry-After`` comes from the measured backlog.

Prints p50/p99 latency per phase and exits 1 if any answer is not the one expected or the
server died. Every socket has a timeout and the whole run a deadline (`DEADLINE` s).

    .venv/bin/python bench/serve_load.py [--ratio]     (--ratio: the concurrency ratio only)
"""

from __future__ import annotations

import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from figures import record  # noqa: E402

from framework.config import default_config  # noqa: E402
from framework.model import GPTModel, init_weights, model_save  # noqa: E402

HOST = "127.0.0.1"  # loopback only
DEADLINE = 300.0  # seconds for the whole run
TIMEOUT = 60.0  # seconds per request
DRIPPERS = 300  # slowloris connections
DRIP_SECONDS = 15.0  # how long they drip (the server's head deadline is 10 s)
DRIP_EVERY = 2.0  # seconds between two bytes of a dripping head
STREAMS = 16  # concurrent streams of the concurrency ratio
STREAM_TOKENS = 64  # max_tokens of each
ROUNDS = 5  # interleaved sequential/concurrent runs; the medians are reported


def start_server(model: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", "serve", str(model), "--host", HOST, "--port", "0",
         "--quiet", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )  # fmt: skip
    assert proc.stdout is not None
    for _ in range(10):
        if m := re.search(r"chat page\s+http://127\.0\.0\.1:(\d+)/", proc.stdout.readline()):
            return proc, int(m.group(1))
    proc.kill()
    raise SystemExit("the server did not start")


def exchange(port: int, data: bytes) -> tuple[int, float, bytes]:
    """Send raw bytes, read the answer until close; (status or 0 on error, seconds, head)."""
    start = time.perf_counter()
    answer = b""
    try:
        with socket.create_connection((HOST, port), timeout=TIMEOUT) as s:
            s.sendall(data)
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        answer = b"".join(chunks)
        status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0
    except OSError:
        status = 0
    return status, time.perf_counter() - start, answer.split(b"\r\n\r\n", 1)[0]


def get(port: int, path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nConnection: close\r\n\r\n".encode()


def post(port: int, path: str, body: bytes) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nConnection: close\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


Result = tuple[int, float, bytes]


def burst(port: int, requests: list[bytes], width: int) -> list[Result]:
    """Send `requests`, `width` at a time, all of each wave released together."""
    results: list[Result] = []
    lock = threading.Lock()
    for at in range(0, len(requests), width):
        wave = requests[at : at + width]
        gate = threading.Barrier(len(wave))

        def one(data: bytes, gate: threading.Barrier = gate) -> None:
            gate.wait()
            r = exchange(port, data)
            with lock:
                results.append(r)

        threads = [threading.Thread(target=one, args=(d,)) for d in wave]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT + 5)
    return results


def report(name: str, results: list[Result], ok: Callable[[int], bool]) -> bool:
    times = sorted(s * 1000 for _, s, _ in results)
    p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
    counts = Counter(status for status, _, _ in results)
    good = bool(results) and all(ok(status) for status, _, _ in results)
    print(
        f"{name:<44} {len(results):>5} requests  p50 {statistics.median(times):8.1f} ms  "
        f"p99 {p99:8.1f} ms  statuses {dict(sorted(counts.items()))}  "
        f"{'ok' if good else 'UNEXPECTED'}"
    )
    record(f"serve: {name.strip()}, p99", p99, "ms", "every answer as expected", good)
    return good


def malformed(port: int, i: int) -> bytes:
    big = b"x" * 70_000
    chat = "/v1/chat/completions"
    kinds = [
        b"GARBAGE\r\n\r\n",
        b"\x00\xff\xfe\r\n\r\n",
        b"get /health HTTP/1.1\r\n\r\n",
        b"GET  /health HTTP/1.1\r\n\r\n",
        b"GET /health HTTP/1.1\r\nno colon\r\n\r\n",
        post(port, chat, b"{not json"),
        post(port, chat, b'{"messages": "no"}'),
        post(port, chat, big),
        f"POST {chat} HTTP/1.1\r\nHost: {HOST}:{port}\r\n\r\n".encode(),
        b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: evil.example\r\n\r\n",
        post(port, chat, b"[" * 30_000 + b"]" * 30_000),
    ]
    return kinds[i % len(kinds)]


def drip(port: int, stop: threading.Event, counts: Counter[str]) -> None:
    """A slowloris client: one byte of a head every DRIP_EVERY s, reconnecting when closed."""
    while not stop.is_set():
        try:
            with socket.create_connection((HOST, port), timeout=5) as s:
                counts["connects"] += 1
                s.sendall(b"GET /health HTTP/1.1\r\nX-Drip: ")
                while not stop.wait(DRIP_EVERY):
                    s.sendall(b"x")
        except OSError:
            counts["closed"] += 1
            stop.wait(0.05)


def slowloris(port: int, chat: bytes) -> tuple[list[Result], Counter[str]]:
    """Normal requests, one every 0.25 s (a chat every 8th), while DRIPPERS connections drip."""
    stop, counts = threading.Event(), Counter[str]()
    drippers = [threading.Thread(target=drip, args=(port, stop, counts)) for _ in range(DRIPPERS)]
    for t in drippers:
        t.start()
    results: list[Result] = []
    try:
        time.sleep(1.0)  # let them all connect
        end = time.monotonic() + DRIP_SECONDS
        k = 0
        while time.monotonic() < end:
            data = post(port, "/v1/chat/completions", chat) if k % 8 == 7 else get(port, "/health")
            results.append(exchange(port, data))
            k += 1
            time.sleep(0.25)
    finally:
        stop.set()
        for t in drippers:
            t.join(10)
    return results, counts


def retry_afters(results: list[Result]) -> list[int]:
    found = (
        re.search(rb"Retry-After: (\d+)", head) for status, _, head in results if status == 503
    )
    return sorted(int(m.group(1)) for m in found if m)


def stream_requests(port: int) -> list[bytes]:
    """STREAMS streamed chats, each with its own seed, prompt and sampling settings."""
    out = []
    for i in range(STREAMS):
        doc = {
            "messages": [{"role": "user", "content": f"tell me about {i}"}],
            "max_tokens": STREAM_TOKENS, "temperature": [0.0, 0.8, 1.0][i % 3],
            "top_p": [1.0, 0.9][i % 2], "seed": i, "stream": True,
            "stream_options": {"include_usage": True},
        }  # fmt: skip
        out.append(post(port, "/v1/chat/completions", json.dumps(doc).encode()))
    return out


def streamed(port: int, data: bytes) -> tuple[str, int]:
    """Send one streamed chat; (the reply's text, its completion tokens), ("", 0) on error."""
    answer = b""
    try:
        with socket.create_connection((HOST, port), timeout=TIMEOUT) as s:
            s.sendall(data)
            while chunk := s.recv(65536):
                answer += chunk
    except OSError:
        return "", 0
    text, tokens = "", 0
    for block in answer.split(b"\n\n"):
        if block.startswith(b"data: {"):
            doc = json.loads(block[6:])
            for choice in doc.get("choices", []):
                text += choice.get("delta", {}).get("content", "") or ""
            tokens = (doc.get("usage") or {}).get("completion_tokens", tokens)
    return text, tokens


def throughput(port: int, requests: list[bytes], together: bool) -> tuple[float, list[str]]:
    """Tokens/s of `requests`, all at once or one after another; the replies in order."""
    replies: list[tuple[str, int]] = [("", 0)] * len(requests)

    def one(i: int) -> None:
        replies[i] = streamed(port, requests[i])

    start = time.perf_counter()
    if together:
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(requests))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT + 5)
    else:
        for i in range(len(requests)):
            one(i)
    seconds = time.perf_counter() - start
    return sum(n for _, n in replies) / seconds, [text for text, _ in replies]


def concurrency(port: int) -> bool:
    """The concurrency ratio, medians of ROUNDS interleaved runs; replies the same both ways."""
    requests = stream_requests(port)
    sequential, concurrent, same = [], [], True
    for _ in range(ROUNDS):
        rate, alone = throughput(port, requests, together=False)
        sequential.append(rate)
        rate, batched = throughput(port, requests, together=True)
        concurrent.append(rate)
        same &= alone == batched and all(alone)
    seq, conc = statistics.median(sequential), statistics.median(concurrent)
    ratios = " ".join(f"{c / s:.2f}" for s, c in zip(sequential, concurrent, strict=True))
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"concurrency ratio: {conc / seq:.2f}x  ({STREAMS} concurrent streams {conc:.0f} "
        f"tokens/s, the same {STREAMS} one after another {seq:.0f} tokens/s; medians of "
        f"{ROUNDS} interleaved runs, ratios per run {ratios}; load average {load})"
    )
    print(f"  each request's reply the same alone and batched: {'yes' if same else 'NO'}")
    record(f"serve: {STREAMS} concurrent streams / one after another", conc / seq, "x", ">= 2",
           conc / seq >= 2)  # fmt: skip
    record("serve: replies the same alone and batched", float(same), "bool", "yes", same)
    return same


def default_run(port: int, chat: bytes) -> bool:
    ok = True
    health = burst(port, [get(port, "/health")] * 200, 200)
    ok &= report("200 concurrent GET /health", health, lambda s: s == 200)
    chats = burst(port, [post(port, "/v1/chat/completions", chat)] * 16, 16)
    ok &= report("burst of 16 chats, default settings", chats, lambda s: s == 200)
    print(f"  burst: {sum(s == 200 for s, _, _ in chats)} of 16 served")
    ok &= concurrency(port)
    bad = burst(port, [malformed(port, i) for i in range(1000)], 50)
    ok &= report("1,000 malformed requests, 50 at a time", bad, lambda s: 400 <= s < 500)
    normal, counts = slowloris(port, chat)
    ok &= report(f"normal requests while {DRIPPERS} connections drip", normal, lambda s: s == 200)
    served = sum(s == 200 for s, _, _ in normal)
    p50 = statistics.median(t * 1000 for _, t, _ in normal)
    print(
        f"  slowloris: {served}/{len(normal)} served, p50 {p50:.0f} ms; the drippers "
        f"connected {counts['connects']} times in {DRIP_SECONDS:g} s (closed by the head "
        "deadline, they reconnected)"
    )
    after = burst(port, [get(port, "/health")] * 5, 5)
    return ok & report("  then GET /health", after, lambda s: s == 200)


def small_queue_run(port: int, chat: bytes) -> bool:
    chats = burst(port, [post(port, "/v1/chat/completions", chat)] * 20, 20)
    ok = report("20 concurrent chats, --queue 2", chats, lambda s: s in (200, 503))
    ok &= sum(s == 200 for s, _, _ in chats) >= 3
    waits = retry_afters(chats)
    print(f"  Retry-After of the 503s (backlog x measured turn, s): {waits}")
    return ok and all(w >= 1 for w in waits)


def main() -> int:
    end = time.monotonic() + DEADLINE
    model = GPTModel(default_config())
    init_weights(model, seed=0)
    chat = json.dumps(
        {
            "messages": [{"role": "user", "content": "你好, hello"}],
            "max_tokens": 32,
            "temperature": 0.8,
        }
    ).encode()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.bin"
        model_save(model, path)
        runs: tuple[tuple[tuple[str, ...], Callable[[int, bytes], bool]], ...]
        runs = (((), default_run), (("--queue", "2"), small_queue_run))
        if "--ratio" in sys.argv[1:]:  # the concurrency ratio only
            runs = (((), lambda port, chat: concurrency(port)),)
        for extra, run in runs:
            proc, port = start_server(path, *extra)
            try:
                ok &= run(port, chat)
                ok &= proc.poll() is None and time.monotonic() < end
            finally:
                proc.terminate()
                proc.wait(10)
            print(f"  server exit status after SIGTERM: {proc.returncode}")
            ok &= proc.returncode == 0
    print("all as expected" if ok else "SOMETHING WAS NOT AS EXPECTED")
    record("serve: every answer as expected, server alive", float(ok), "bool", "yes", ok)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

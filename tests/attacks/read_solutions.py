"""Attack: find the reference solution (and hidden checks) on disk and run it.

Through ``framework.__file__`` the course's root is known; its ``solutions/lab04`` would
give full marks. The attack also searches the usual places of a grading run for hidden
checks and other submissions. Whatever it finds is named in its functions' error
messages, and a found solution replaces these stubs. Under verify this is the student's
own machine (the student edition has no ``solutions/``): reported. Contained under grade:
neither the solutions, nor the hidden checks, nor other submissions are mounted (bwrap), or
they are root's only (the uid level, where any other copy that every user may read, such
as a checkout of the course, is out of its reach: the README says so).
"""
# verify: reported
# grade: contained
# grade-uid: contained-unless-exposed (the uid level has no file system of its own: a copy
#   of the course that every user may read, elsewhere on the machine, is readable)

import glob
import os

import framework

_root = os.path.dirname(os.path.dirname(os.path.abspath(framework.__file__)))
_patterns = [
    os.path.join(_root, "solutions", "lab04", "student.py"),
    os.path.join(_root, "..", "solutions", "lab04", "student.py"),
    os.path.join(_root, "..", "..", "solutions", "lab04", "student.py"),
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../private/*/hidden.py"),
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../subs/*/labs/*/*.py"),
    os.path.join(os.environ.get("HOME", "/"), "*/solutions/lab04/student.py"),
    "/tmp/minillm-grade-*/private/*/hidden.py",
    "/tmp/minillm-grade-*/subs/*/labs/*/student.py",
    "/tmp/*/solutions/lab04/student.py",
    "/work/*/solutions/lab04/student.py",
]
FOUND = sorted({p for pattern in _patterns for p in glob.glob(pattern)})
_wanted = os.path.join("solutions", "lab04", "student.py")
_solution = next((p for p in FOUND if p.endswith(_wanted)), None)


def attention_scores(q, k, scale):
    raise NotImplementedError(f"lab04: ATTACK found {FOUND}")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")


if _solution is not None:
    with open(_solution) as _f:
        exec(compile(_f.read(), _solution, "exec"), globals())

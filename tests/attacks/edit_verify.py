"""Attack: rewrite the lab's verify.py (and the framework) so that everything passes.

At import, ``labs/lab04/verify.py`` is replaced by thirteen tests that pass whatever the
student wrote, and ``framework/__init__.py`` gets a line appended. On the student's own
machine nothing can stop a process of the student from editing the student's files, so
the next ``verify`` believes it: reported. Contained under grade: the course is mounted
read-only, and grading uses the instructor's pristine copy anyway. The test runs twice.
"""
# verify: reported
# grade: contained
# runs: 2

import os

import framework

_root = os.path.dirname(os.path.dirname(os.path.abspath(framework.__file__)))
_FORGED = """
from grader.dsl import Lab

lab = Lab("lab04", "forged", "forged")
for _n in range(13):
    def _t(t):
        t.check("forged", True)
    _t.__name__ = f"t{_n}"
    lab.test("forged", "forged")(_t)
"""
for _path, _text, _mode in (
    (os.path.join(_root, "labs", "lab04", "verify.py"), _FORGED, "w"),
    (os.path.join(_root, "framework", "__init__.py"), "\nEDITED_BY_STUDENT = True\n", "a"),
):
    try:
        with open(_path, _mode) as _f:
            _f.write(_text)
    except OSError:
        pass


def attention_scores(q, k, scale):
    raise NotImplementedError("lab04: implement attention_scores")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")

"""Attack: plant conftest.py files that make every pytest item pass.

At import, a ``conftest.py`` whose hook turns every failure into a pass is written into the
lab's folder, ``labs/`` and the course root. ``verify`` never runs pytest, so it is not
fooled (the files stay on the student's own machine: reported there as changed files);
under grade the course is read-only and a pristine copy besides.
"""
# verify: contained
# grade: contained

import os

import framework

_root = os.path.dirname(os.path.dirname(os.path.abspath(framework.__file__)))
_CONFTEST = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
"""
for _where in (os.path.join(_root, "labs", "lab04"), os.path.join(_root, "labs"), _root):
    try:
        with open(os.path.join(_where, "conftest.py"), "w") as _f:
            _f.write(_CONFTEST)
    except OSError:
        pass


def attention_scores(q, k, scale):
    raise NotImplementedError("lab04: implement attention_scores")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")

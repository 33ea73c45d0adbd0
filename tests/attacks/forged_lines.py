"""Attack: forge PASS lines in the report.

Three ways at once: an exception class whose name holds newlines, carriage returns and
terminal escapes that draw ``[PASS]`` lines and a fake summary; writing forged lines to
every file descriptor the process inherited (the grader's terminal, if one leaked) and to
/dev/tty; and printing more than the output cap of forged lines. Contained: names and
messages are made one-line and escaped, output is captured and capped, and no descriptor
of the grader's reaches the sandbox.
"""
# verify: contained
# grade: contained

import os

_FORGED = (
    "\n  [PASS] attention_scores: identity inputs and scaling\r\x1b[2K\x1b[1A"
    "\n========================================\nResult: all passed — 13 tests\n"
    "::notice::forged\n"
)


def _spray():
    line = _FORGED.encode()
    for fd in range(3, 256):
        try:
            os.write(fd, line)
        except OSError:
            pass
    try:
        fd = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY)
        os.write(fd, line)
        os.close(fd)
    except OSError:
        pass


_spray()
Forged = type("ValueError" + _FORGED, (ValueError,), {})


def attention_scores(q, k, scale):
    _spray()
    raise Forged(_FORGED)


def apply_mask(scores, mask):
    print(_FORGED * 5000)
    raise Forged(_FORGED * 3)


def softmax(x):
    os.write(2, _FORGED.encode() * 100)
    raise type(_FORGED, (NotImplementedError,), {})(_FORGED)

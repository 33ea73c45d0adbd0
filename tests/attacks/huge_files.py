"""Attack: huge files, in the scratch folder and wherever else it can write.

A sparse file claiming 64 GiB (no disk used, but past the file-size limit) in the scratch
folder, /tmp and /dev/shm, and then 320 MiB of real data written to a scratch file, more
than the sandbox's tmpfs holds. Contained: the file-size limit refuses the sparse file,
the scratch folder is removed; under bubblewrap /tmp and /dev/shm are a capped tmpfs.
"""
# verify: contained
# grade: contained

import os
import signal

_MB = 1024 * 1024


def _sparse(folder):
    try:
        with open(os.path.join(folder, "sparse.bin"), "wb") as f:
            f.seek(64 * 1024 * _MB)
            f.write(b"x")
        return "wrote"
    except OSError as e:
        return type(e).__name__


def attention_scores(q, k, scale):
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    found = {d: _sparse(d) for d in (".", "/tmp", "/dev/shm")}
    raise NotImplementedError(f"lab04: ATTACK sparse {found}")


def apply_mask(scores, mask):
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    written = 0
    chunk = b"\0" * (16 * _MB)
    try:
        with open("fill.bin", "wb") as f:
            while written < 320 * _MB:
                f.write(chunk)
                written += len(chunk)
    except OSError as e:
        raise NotImplementedError(f"lab04: ATTACK wrote {written // _MB} MiB: {e}") from None
    raise NotImplementedError(f"lab04: ATTACK wrote {written // _MB} MiB")


def softmax(x):
    raise NotImplementedError("lab04: implement softmax")

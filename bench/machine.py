"""Which machine a figure comes from: the CPU, its widest vector unit, and the BLAS behind
numpy's and torch's matrix products.

A training step is mostly matrix products, so its ratio against torch depends on the two
BLAS libraries more than on anything in `framework`: on one 2-core machine with AVX2, numpy's
OpenBLAS and torch's MKL ran the step's products at about the same speed; on an AVX-512
Xeon, MKL ran them 15-30% faster than OpenBLAS's best kernels (SkylakeX), and the step's
ratio fell with them. The benches print this line beside their figures so that two runs
on two machines are not read as a change in the code; it says so when the environment
chose OpenBLAS's kernels (``OPENBLAS_CORETYPE``: on an AVX-512 machine, ``Haswell`` forces
the AVX2 kernels, and a training step takes a third longer than with the ones OpenBLAS
picks itself).

Example:
    >>> "numpy BLAS" in machine()
    True
"""

from __future__ import annotations

import ctypes
import os
import platform
import re
import sys
from pathlib import Path

__all__ = ["machine"]

_CORENAMES = (
    "scipy_openblas_get_corename64_",
    "scipy_openblas_get_corename",
    "openblas_get_corename64_",
    "openblas_get_corename",
)


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo ({} where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def cpu() -> str:
    """The CPU's name, its core count and widest vector unit, e.g. ``Xeon, 2 cores, avx512``."""
    info = _cpuinfo()
    name = info.get("model name") or platform.processor() or platform.machine() or "unknown CPU"
    flags = set(info.get("flags", info.get("Features", "")).split())
    vector = next((v for f, v in _VECTORS if f in flags), "")
    parts = [name, f"{os.cpu_count()} cores"] + ([vector] if vector else [])
    return ", ".join(parts)


_VECTORS = (("avx512f", "avx512"), ("avx2", "avx2"), ("avx", "avx"), ("asimd", "neon"))


def numpy_blas() -> str:
    """numpy's BLAS, its version, and the kernels OpenBLAS chose for this CPU."""
    import numpy as np

    blas = np.__config__.CONFIG.get("Build Dependencies", {}).get("blas", {})
    name = f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()
    core = _openblas_core()
    if core and (forced := os.environ.get("OPENBLAS_CORETYPE")):  # the kernels are not chosen
        return f"{name} ({core} kernels: OPENBLAS_CORETYPE={forced} in the environment)"
    return f"{name} ({core} kernels)" if core else name


def _openblas_core() -> str:
    """The kernel family a loaded OpenBLAS picked (``SkylakeX``, ``Haswell``...), or ""."""
    from framework.blas import openblas_functions

    for get in openblas_functions(_CORENAMES):
        get.restype = ctypes.c_char_p
        return str(get().decode())
    return ""


def torch_blas() -> str:
    """torch's BLAS (``mkl``, ``open``...) if torch is imported already, else ""."""
    torch = sys.modules.get("torch")
    if torch is None:
        return ""
    found = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    return found.group(1) if found else "unknown"


def machine() -> str:
    """One line: ``cpu ...; numpy BLAS ...`` and, with torch imported, ``; torch BLAS ...``."""
    line = f"cpu {cpu()}; numpy BLAS {numpy_blas()}"
    torch = torch_blas()
    return f"{line}; torch BLAS {torch}" if torch else line

"""How many threads numpy's BLAS (OpenBLAS) uses for matrix products, set at run time.

The model's matrices are small ([B·T, 64] @ [64, 256]): a second BLAS thread buys little,
and on a machine whose cores are busy with other work, OpenBLAS threads that spin while
waiting for each other make training many times slower (measured on a loaded 2-core
machine: 8x64 tokens per step at 600 tokens/s with the default threads, 20,000 with one).
`OPENBLAS_NUM_THREADS` only works before numpy starts; `set_blas_threads` changes the
count of an already loaded OpenBLAS through its own `openblas_set_num_threads`, found
among the shared libraries of this process.

Deliberately not here: other BLAS libraries (MKL, Accelerate: the call then does nothing
and says so by returning False), thread pools of other libraries (threadpoolctl does it all).

Example:
    >>> isinstance(set_blas_threads(1), bool)
    True
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["openblas_functions", "openblas_paths", "set_blas_threads"]

_SETTERS = (
    "scipy_openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)


def openblas_paths() -> list[str]:
    """Paths of the loaded shared libraries whose name mentions openblas (Linux; [] where
    there is no /proc/self/maps)."""
    maps = Path("/proc/self/maps")
    if not maps.is_file():
        return []
    found = []
    for line in maps.read_text(errors="replace").splitlines():
        path = line.split()[-1] if line.split() else ""
        if "openblas" in Path(path).name.lower() and path not in found:
            found.append(path)
    return found


def openblas_functions(names: Sequence[str]) -> list[Any]:
    """Of each loaded OpenBLAS, the first function of `names` it exports (the names differ
    between builds: scipy-openblas's prefix, the 64-bit interface's suffix)."""
    found = []
    for path in openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in names:
            fn = getattr(lib, name, None)
            if fn is not None:
                found.append(fn)
                break
    return found


def set_blas_threads(n: int) -> bool:
    """Make the loaded OpenBLAS use `n` threads.

    Args:
        n: threads, >= 1.

    Returns:
        True if an OpenBLAS was found and told; False otherwise (nothing changed).

    Raises:
        ValueError: if n < 1.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    import numpy  # noqa: F401  (loads the BLAS library if it is not loaded yet)

    setters = openblas_functions(_SETTERS)
    for setter in setters:
        setter(ctypes.c_int(n))
    return bool(setters)

"""The one JIT policy of the engine.

Every compiled kernel is decorated with ``jit``: nopython, cached on disk (``NUMBA_CACHE_DIR`` sets
where), the GIL released so that a simulation thread never blocks the studio, and NumPy's error
model (a division by zero gives inf/nan instead of raising, which the divergence check reports).
``fastmath`` stays off: results are compared with MuJoCo to 1e-9.
Set ``ENGINE_JIT=0`` to run the kernels as plain Python (slow; for debugging only).
"""
import os

from numba import njit

ENABLED = os.environ.get("ENGINE_JIT", "1") != "0"


def jit(fn):
    """Compile ``fn`` with the engine's policy."""
    if not ENABLED:
        return fn
    return njit(cache=True, nogil=True, error_model="numpy")(fn)

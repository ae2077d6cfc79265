"""The one JIT policy of the engine.

Every compiled kernel is decorated with ``jit``: nopython, cached on disk, the GIL released so
that a simulation thread never blocks the studio, and NumPy's error model (a division by zero
gives inf/nan instead of raising, which the divergence check reports). ``fastmath`` stays off:
results are compared with MuJoCo to 1e-9.

numba's cache does not notice when a kernel that another kernel calls has changed, so the cache
lives in a directory named after a digest of the engine's sources: any edit starts a fresh
cache. The base directory is ``NUMBA_CACHE_DIR`` if set, else ``~/.cache/engine-numba``.
Set ``ENGINE_JIT=0`` to run the kernels as plain Python (slow; for debugging only).
"""
import hashlib
import os
import pathlib

from numba import njit
from numba.core import config

ENABLED = os.environ.get("ENGINE_JIT", "1") != "0"


def _cache_dir():
    sources = sorted(pathlib.Path(__file__).parent.glob("*.py"))
    digest = hashlib.sha1(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "engine-numba")
    return os.path.join(base, digest)


config.CACHE_DIR = _cache_dir()


def jit(fn):
    """Compile ``fn`` with the engine's policy."""
    if not ENABLED:
        return fn
    return njit(cache=True, nogil=True, error_model="numpy")(fn)

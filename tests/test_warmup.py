"""The cold-cache warm-up compiles kernels that exist, in a process that imports this engine."""
import importlib
import inspect
import os
import subprocess
import sys

from engine import jit, warmup


def test_warmup_names_are_compiled_kernels():
    for spec in warmup.BACKGROUND + warmup.FOREGROUND:
        module, name = spec.split(":")
        kernel = getattr(importlib.import_module(module), name)
        assert hasattr(kernel, "compile"), spec     # a numba dispatcher, not a Python function
        nargs = len(inspect.signature(kernel.py_func).parameters)
        assert nargs == len(warmup._argument_types(spec)), spec


def test_warm_cache_starts_nothing(tmp_path):
    """With kernels in the cache, importing the engine spawns no process."""
    script = ("import engine, engine.warmup as w; "
              "print(w._process is None and not w.compiling())")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    root = tmp_path / os.path.basename(jit.cache_dir())
    os.makedirs(root, exist_ok=True)
    open(os.path.join(root, "kernel.nbi"), "w").close()
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "True"


def test_cold_cache_starts_the_background_compile(tmp_path):
    """On an empty cache the import starts the background process; join() ends it."""
    script = ("import engine, engine.warmup as w; p = w._process; print(w.compiling()); "
              "p.kill(); p.wait()")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty"))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "True"

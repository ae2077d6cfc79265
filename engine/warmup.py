"""Parallel compilation of the kernels when the numba cache is empty.

The first run after installing (or after editing the engine) compiles every kernel, about a
hundred seconds of numba and LLVM work in one thread. Collision detection and the constraint
solvers, the two largest parts of the pipeline, do not depend on each other, and a kernel
compiled and cached by one process is loaded, not recompiled, by another. So on a cold cache
``start()`` (called when the engine is imported) compiles collision detection and then the
inverse dynamics in a background process, while this process compiles the other pipeline stages
and the solvers (``join()``, called by the first forward, step or inverse); ``join()`` then
waits for the background process, and the kernels that call both parts compile on top of the
cache. With a warm cache nothing happens.
"""
import os
import subprocess
import sys

from . import jit

CHILD = "ENGINE_WARMUP_CHILD"

# collision detection, the sensors (geom distances call the collision functions), then the
# inverse dynamics (by then its other stages are in the cache), compiled in the background
BACKGROUND = ("engine.collision_driver:collision", "engine.sensor:sensor_pos",
              "engine.sensor:sensor_vel", "engine.sensor:sensor_acc",
              "engine.inverse:inverse_kernel")
# the pipeline's other stages and the constraint solvers, compiled here meanwhile
FOREGROUND = ("engine.forward:fwd_velocity", "engine.constraint:make_constraint",
              "engine.smooth:kinematics", "engine.smooth:com_pos", "engine.smooth:camlight",
              "engine.smooth:tendon", "engine.smooth:crb", "engine.forward:factor_inertia",
              "engine.actuator:transmission", "engine.actuator:fwd_actuation",
              "engine.forward:energy_kernel", "engine.forward:fwd_constraint")

_process = None


def _argument_types(spec):
    """Numba types of a kernel's arguments: (Model, Data) and, for sensor_acc, (qacc, damped)."""
    from numba import types

    from .types import DATA_TYPE, MODEL_TYPE
    if spec == "engine.sensor:sensor_acc":
        return (MODEL_TYPE, DATA_TYPE, types.float64[::1], types.boolean)
    return (MODEL_TYPE, DATA_TYPE)


def _cache_is_cold():
    root = jit.cache_dir()
    return not os.path.isdir(root) or not any(
        name.endswith(".nbi") for _, _, files in os.walk(root) for name in files)


def compile_kernels(names):
    """Compile the named kernels (``module:function``) for their argument types."""
    import importlib

    for spec in names:
        module, name = spec.split(":")
        getattr(importlib.import_module(module), name).compile(_argument_types(spec))


def start():
    """On a cold cache, compile BACKGROUND in a separate process (once per process)."""
    global _process
    if not jit.ENABLED or os.environ.get(CHILD) or _process is not None or not _cache_is_cold():
        return
    # the child imports this very engine (not another one on its path): same sources, same cache
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, **{CHILD: "1"},
               PYTHONPATH=package_root + (os.pathsep + path if path else ""))
    try:
        _process = subprocess.Popen([sys.executable, "-m", "engine.warmup"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        _process = None


def compiling():
    """True when this process started the cold-cache compilation and has not joined it yet."""
    return _process is not None


def join():
    """Compile FOREGROUND here, then wait for the background process (first call only)."""
    global _process
    if _process is None:
        return
    process, _process = _process, None
    compile_kernels(FOREGROUND)
    try:
        process.wait(timeout=900)
    except subprocess.TimeoutExpired:
        process.kill()


if __name__ == "__main__":
    compile_kernels(BACKGROUND)

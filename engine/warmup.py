"""Parallel compilation of the kernels when the numba cache is empty.

The first run after installing (or after editing the engine) compiles the kernels that the
first step needs, in one thread per process. A kernel compiled and cached by one process is
loaded, not recompiled, by another (numba looks in the cache before compiling any kernel,
callees included). So on a cold cache ``start()`` (called when the engine is imported) starts
a background process that compiles COMMON, the stages every model needs and that loading a
model does not (this process meanwhile compiles what loading needs). When the model is known
(``model(m)``, called by load_model), the background process goes on with the lean kernels
of that model (forward.lean_calls: its solver, its collisions, its sensors), in the order of
``lean_kernels``, while ``join(m)`` (called by the first forward, step or inverse) compiles
the same list from its other end here, then waits for the background process; the kernels
that call all of them (the step) then compile on top of the cache. With a warm cache nothing
happens.
"""
import json
import os
import subprocess
import sys

from . import _structs, jit

CHILD = "ENGINE_WARMUP_CHILD"

# compiled in the background while this process loads the model: first what loading needs
# (the constructor of Data, then set_const's kernels, in the reverse of the order in which
# set_const, here, calls them), then the stages every model needs
COMMON = tuple("engine._structs:" + k for k in _structs.DATA_KERNELS) + (
    "engine.smooth:crb", "engine.actuator:transmission", "engine.smooth:tendon",
    "engine.smooth:com_pos", "engine.smooth:kinematics", "engine.constraint:make_constraint",
    "engine.forward:fwd_velocity", "engine.actuator:fwd_actuation", "engine.forward:energy_kernel",
    "engine.forward:fwd_acceleration", "engine.forward:factor_inertia", "engine.smooth:camlight")
# the lean kernels of a model, compiled by both processes from the two ends of the list
LEAN = ("fwd_constraint", "sensor_acc", "sensor_vel", "sensor_pos", "collision")

_process = None
_sent = False


def _argument_types(name):
    """Numba types of a kernel's arguments: (Model, Data), for sensor_acc (qacc, damped) too,
    for the step the number of steps; for the pieces of Data's constructor, the struct and the
    arrays they set."""
    import inspect

    from numba import types

    from .types import DATA_SPEC, DATA_TYPE, MODEL_TYPE, _nbtype
    if name.startswith("engine._structs:"):
        fields = {n: _nbtype(t, s) for n, t, s in DATA_SPEC}
        kernel = getattr(_structs, name.split(":")[1])
        return tuple(DATA_TYPE if p == "s" else fields[p]
                     for p in inspect.signature(kernel.py_func).parameters)
    if name.endswith("sensor_acc"):
        return (MODEL_TYPE, DATA_TYPE, types.float64[::1], types.boolean)
    if name.endswith("step_kernel"):
        return (MODEL_TYPE, DATA_TYPE, types.int64)
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


# the general kernels, in groups: each group's kernels call those of the groups before it
# (the longest first: the constraint solvers, then the collision, about 3 and 1.5 minutes of
# compilation on this machine's cores; the others of the group take about 3 together)
GENERAL = (("engine.forward:fwd_constraint", "engine.collision_driver:collision",
            "engine.sensor:sensor_pos", "engine.sensor:sensor_vel") + COMMON
           + ("engine.sensor:sensor_acc",),
           ("engine.forward:forward_kernel", "engine.forward:step_kernel",
            "engine.inverse:inverse_kernel"))


def compile_shared(groups=GENERAL):
    """Compile the kernels of groups (names as in COMMON) with other processes that do the same
    at the same time, without two of them compiling one kernel: each process compiles the
    kernels of a group that no other is compiling (a lock file per kernel in the cache), then
    waits for the others' and loads them from the cache, before the next group. For processes
    that start together and step models of many kinds (ENGINE_LEAN=0), such as a test suite's
    workers; alone, a process compiles them all."""
    import fcntl

    if not jit.ENABLED:
        return
    root = jit.cache_dir()
    os.makedirs(root, exist_ok=True)

    def locked(spec, wait):
        f = open(os.path.join(root, spec.replace(":", ".") + ".lock"), "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            f.close()
            return None
        return f

    for group in groups:
        others = []
        for spec in group:
            f = locked(spec, wait=False)
            if f is None:
                others.append(spec)      # another process is compiling it
                continue
            with f:
                compile_kernels([spec])   # (loaded if another process compiled it before)
        for spec in others:
            with locked(spec, wait=True):
                compile_kernels([spec])


def _description(m):
    """What forward.lean_calls reads of a model, as JSON."""
    return json.dumps({k: [int(x) for x in getattr(m, k)] for k in (
        "opt_integrator", "opt_solver", "opt_noslip_iterations", "eq_hard", "geom_type",
        "sensor_type")})


class _Described:
    """A model as _description gives it: the fields forward.lean_calls reads."""

    def __init__(self, text):
        import numpy as np
        for k, v in json.loads(text).items():
            setattr(self, k, np.array(v, dtype=np.int64))


def lean_kernels(m):
    """The kernels of LEAN for model m (lean variants where m needs less than every kernel)."""
    from .forward import lean_calls
    calls = lean_calls(m)
    return [calls[name] for name in LEAN]


def start():
    """On a cold cache, start the background compilation (once per process)."""
    global _process
    if (not jit.ENABLED or not jit.LEAN or os.environ.get(CHILD) or _process is not None
            or not _cache_is_cold()):
        return
    try:
        jit.prune_caches()       # a new cache begins: drop those of long-edited sources
    except OSError:
        pass
    # the child imports this very engine (not another one on its path): same sources, same cache
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, **{CHILD: "1"},
               PYTHONPATH=package_root + (os.pathsep + path if path else ""))
    try:
        _process = subprocess.Popen([sys.executable, "-m", "engine.warmup"], env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, text=True)
    except OSError:
        _process = None


def compiling():
    """True when this process started the cold-cache compilation and has not joined it yet."""
    return _process is not None


def model(m):
    """Tell the background process which model to compile the lean kernels of (the first
    model only; none: it stops after COMMON)."""
    global _sent
    if _process is None or _sent:
        return
    _sent = True
    try:
        if m is not None:
            _process.stdin.write(_description(m) + "\n")
        _process.stdin.close()
    except OSError:
        pass


def join(m=None):
    """Compile the lean kernels of m here from the end of the list, then wait for the
    background process (first call only)."""
    global _process
    if _process is None:
        return
    model(m)
    process, _process = _process, None
    if m is not None:
        for kernel, name in reversed(list(zip(lean_kernels(m), LEAN))):
            kernel.compile(_argument_types(name))
    try:
        process.wait(timeout=900)
    except subprocess.TimeoutExpired:
        process.kill()


def _child():
    compile_kernels(COMMON)
    line = sys.stdin.readline()
    if line.strip():
        for kernel, name in zip(lean_kernels(_Described(line)), LEAN):
            kernel.compile(_argument_types(name))


if __name__ == "__main__":
    _child()

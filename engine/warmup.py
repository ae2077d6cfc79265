"""Parallel compilation of the kernels when the numba cache is empty, and plain Python meanwhile.

The first run after installing (or after editing the engine) compiles the kernels that the
first step needs, in one thread per process. A kernel compiled and cached by one process is
loaded, not recompiled, by another (numba looks in the cache before compiling any kernel,
callees included), and no two processes compile one kernel at the same time (jit's lock per
kernel: the second waits for the first). So on a cold cache ``start()`` (called when the
engine is imported) starts a background process that compiles the stages every model needs
(COMMON) until the model is known (``model(m)``, called by load_model). It then goes on with
the lean kernels of that model (forward.lean_calls: its solver, its collisions, its sensors),
in the order of ``lean_kernels``, while a second process, started by ``model(m)``, compiles
the same list from its other end; the kernels that call all of them (the step) then compile on
top of the cache. Only the forward and the step get machine code there (jit.callees_only: the
stages are compiled and cached for them to call; one called from Python gets its machine code
then).

Meanwhile this process compiles nothing: from ``start()`` until ``join``, ``interpreting()``
holds, Models and Data get plain handles (types._new_struct) and every kernel that is not in
the cache runs as plain Python (engine.jit.twin, the same results bit for bit): loading the
humanoid and its first step take a second instead of a minute, its next steps about 50 ms
each. ``forward`` and ``step`` call ``join(m, wait=False)``, which takes over once both
processes have ended (or waits for them once the steps have run as plain Python for
INTERPRET_SECONDS): it loads the model's lean kernels and gives the Models and Data made
meanwhile compiled handles. What needs the compiled kernels at once (rollouts, the inverse,
derivatives, sweeps, the studio) calls ``join()``, which waits. With a warm cache nothing
happens.
"""
import json
import os
import subprocess
import sys
import time
from types import SimpleNamespace

from . import _structs, jit

CHILD = "ENGINE_WARMUP_CHILD"

# the kernels every model needs beside its lean ones (the constructors of the compiled handles
# of Model and Data, the stages the lean kernels do not vary): the first background process
# compiles them from the front (at first, until the model is told), the second from the end
COMMON = tuple("engine._structs:" + k for k in _structs.MODEL_KERNELS + _structs.DATA_KERNELS) + (
    "engine.smooth:crb", "engine.actuator:transmission", "engine.smooth:tendon",
    "engine.smooth:com_pos", "engine.smooth:kinematics",
    "engine.constraint:_contact_rows", "engine.constraint:_limit_rows",
    "engine.constraint:_friction_rows", "engine.smooth:tendon_actuator_velocity",
    "engine.smooth:com_vel", "engine.actuator:fwd_actuation", "engine.forward:energy_kernel",
    "engine.forward:fwd_acceleration", "engine.forward:factor_inertia", "engine.smooth:camlight")
# the lean kernels of a model, compiled by both processes from the two ends of the list
LEAN = ("fwd_constraint", "sensor_acc", "sensor_vel", "fwd_velocity", "make_constraint",
        "sensor_pos", "collision")

_process = None             # the background process (compiles from the front of LEAN)
_back = None                # the second one, started with the model (from the back of LEAN)
_sent = False
# seconds for which steps run as plain Python, from the first one on; then they wait for the
# compiled kernels: plain-Python steps take a core from the background compilation (the
# humanoid's, with one process compiling each end of the lean list only: the compiled steps
# came after 96 s with plain steps all along, against 53-65 s before; benchmarks/cold_start.py)
INTERPRET_SECONDS = 10.0
_interpreting_since = None


def interpreting():
    """While the background processes compile a cold cache: the kernels run as plain Python
    here (engine.jit.twin) instead of compiling (the first steps of the humanoid take about
    50 ms each instead of waiting a minute), until join."""
    return _process is not None


jit.interpreting = interpreting


def _argument_types(name):
    """Numba types of a kernel's arguments (``module:function``, or a function's name for LEAN):
    (Model, Data) unless KERNEL_TYPES says otherwise; for the pieces of Data's constructor, the
    struct and the arrays they set."""
    import inspect

    from .types import DATA_SPEC, DATA_TYPE, MODEL_SPEC, MODEL_TYPE, _nbtype
    if name.startswith("engine._structs:"):
        kernel = name.split(":")[1]
        struct, spec = (MODEL_TYPE, MODEL_SPEC) if kernel.startswith("_model") else (
            DATA_TYPE, DATA_SPEC)
        fields = {n: _nbtype(t, s) for n, t, s in spec}
        return tuple(struct if p == "s" else fields[p]
                     for p in inspect.signature(getattr(_structs, kernel).py_func).parameters)
    codes = next((c for spec, c in KERNEL_TYPES.items()
                  if name in (spec, spec.split(":")[1])), "M D")
    return tuple(_type_of(code, MODEL_TYPE, DATA_TYPE) for code in codes.split())


# the arguments of the kernels that take more than (Model, Data), in the callers' types:
# M Model, D Data, L a typed list of Models, f float64, i int64, b boolean, then fN, iN, bN
# C-contiguous arrays of N dimensions
KERNEL_TYPES = {
    "engine.sensor:sensor_acc": "M D f1 b",
    "engine.forward:step_kernel": "M D i",
    "engine.rigid_inverse:rigid_inverse_kernel":
        "M D f1 i i f i b i i2 f2 b2 i1 i1 f1 b f1 f1 f2 f1 i1 f1 i1 b1 i1",
    "engine.derivative_analytic:transition_kernel": "M D f2 f2",
    "engine.derivative_fd:transition_fd_kernel": "M D f b f2 f2",
    "engine.rollout:rollout_kernel": "L D i i i i i i f2 f2 f3 f3 f3",
    "engine.derivative_fd:inverse_fd_kernel": "M D f b b f2 f2 f2",
    "engine.derivative_analytic:inverse_derivatives_kernel": "M D b f2 f2 f2",
}


def _type_of(code, model, data):
    """The numba type of one code of KERNEL_TYPES."""
    from numba import types
    scalar = {"f": types.float64, "i": types.int64, "b": types.boolean}
    if code in ("M", "D", "L"):
        return {"M": model, "D": data, "L": types.ListType(model)}[code]
    if len(code) == 1:
        return scalar[code]
    return types.Array(scalar[code[0]], int(code[1:]), "C")


def _cache_is_cold():
    root = jit.cache_dir()
    return not os.path.isdir(root) or not any(
        name.endswith(".nbi") for _, _, files in os.walk(root) for name in files)


def compile_kernels(names):
    """Compile the named kernels (``module:function``) for their argument types."""
    for spec in names:
        _kernel(spec).compile(_argument_types(spec))


# the general kernels, the longest to compile first (the constraint stage about 3 minutes of
# one core here, the collision 1.5, the rigid-contact inverse and the analytic transition 2
# each): compile_shared compiles each once the kernels it waits for are compiled (_waits)
GENERAL = (("engine.forward:fwd_constraint", "engine.collision_driver:collision") + COMMON
           + ("engine.sensor:sensor_pos", "engine.sensor:sensor_vel", "engine.sensor:sensor_acc",
              "engine.rigid_inverse:rigid_inverse_kernel",
              "engine.derivative_analytic:transition_kernel", "engine.forward:step_kernel",
              "engine.derivative_fd:transition_fd_kernel", "engine.inverse:inverse_kernel",
              "engine.rollout:rollout_kernel", "engine.forward:forward_kernel",
              "engine.derivative_fd:inverse_fd_kernel",
              "engine.derivative_analytic:inverse_derivatives_kernel"))
SHARED_CALLEES = 30     # kernels sharing more callees than this are compiled one after the other


def _kernel(spec):
    import importlib

    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


def _callees(kernel):
    """The kernels that kernel calls, directly or not, and compiles as kernels of their own (not
    inlined): those its code names, as globals, module attributes or closure cells."""
    import types

    def called(k):
        fn = k.py_func
        codes, names = [fn.__code__], set()
        while codes:
            code = codes.pop()
            names.update(code.co_names)
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        objects = [fn.__globals__.get(n) for n in names]
        objects += [getattr(o, n, None) for o in objects if isinstance(o, types.ModuleType)
                    for n in names]
        objects += [c.cell_contents for c in fn.__closure__ or ()]
        return {o for o in objects if hasattr(o, "py_func") and hasattr(o, "targetoptions")}

    found, todo = set(), [kernel]
    while todo:
        for k in called(todo.pop()) - found:
            found.add(k)
            todo.append(k)
    return {k for k in found if k.targetoptions.get("inline", "never") == "never"}


def _waits(specs):
    """For each kernel of specs, the kernels before it in specs that it must wait for: those it
    calls (compiling it first would compile them too), and those that share more than
    SHARED_CALLEES of its own callees (beyond those of the kernels either calls): the sensors
    share the narrow phase with the collision, for one."""
    kernels = {s: _kernel(s) for s in specs}
    callees = {s: _callees(k) | {k} for s, k in kernels.items()}
    calls = {s: {t for t in specs if t != s and kernels[t] in callees[s]} for s in specs}
    covered = {s: set().union(*(callees[t] for t in calls[s])) for s in specs}
    waits = {}
    for i, s in enumerate(specs):
        waits[s] = {t for t in specs[:i] if t in calls[s] or len(
            (callees[s] & callees[t]) - covered[s] - covered[t]) > SHARED_CALLEES}
    return waits


def compile_shared(specs=GENERAL, poll=0.2):
    """Compile the kernels of specs (names as in COMMON) with other processes that do the same
    at the same time, without two of them compiling one kernel or a callee they share: each
    process compiles, in the order of specs, a kernel that no other is compiling (jit's lock of
    the kernel, not waited for) once those it waits for (_waits) are compiled, by it or by
    another process (it then loads them from the cache). For processes that start together and step
    models of many kinds (ENGINE_LEAN=0), such as a test suite's workers; alone, a process
    compiles them all."""
    import time

    from numba.core.compiler_lock import global_compiler_lock

    if not jit.ENABLED:
        return
    waits = _waits(list(specs))
    done, pending = set(), list(specs)
    while pending:
        for spec in pending:
            if not waits[spec] <= done:
                continue
            kernel, args = _kernel(spec), _argument_types(spec)
            with global_compiler_lock, jit.kernel_lock(kernel.py_func, args, wait=False) as mine:
                if not mine:
                    continue       # another process is compiling it
                kernel.compile(args)   # (loaded if another process compiled it before)
            done.add(spec)
            pending.remove(spec)
            break
        else:
            time.sleep(poll)   # what this process may compile now, others are compiling


def _description(m):
    """What forward.lean_calls reads of a model, as JSON."""
    import numpy as np
    return json.dumps({k: np.asarray(getattr(m, k)).tolist() for k in (
        "opt_integrator", "opt_solver", "opt_noslip_iterations", "opt_stabilization",
        "opt_density", "opt_viscosity", "eq_type", "eq_hard", "geom_type", "sensor_type")})


class _Described:
    """A model as _description gives it: the fields forward.lean_calls reads."""

    def __init__(self, text):
        import numpy as np
        for k, v in json.loads(text).items():
            setattr(self, k, np.array(v, dtype=np.float64 if k in ("opt_density", "opt_viscosity")
                                      else np.int64))
        self.opt = SimpleNamespace(_kept=None)    # (where forward._options keeps its key)


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
    _process = _spawn()


def _spawn(*args):
    """A background compiling process (python -m engine.warmup args), or None."""
    # the child imports this very engine (not another one on its path): same sources, same cache
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, **{CHILD: "1"},
               PYTHONPATH=package_root + (os.pathsep + path if path else ""))
    try:
        return subprocess.Popen([sys.executable, "-m", "engine.warmup", *args], env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return None


def compiling():
    """True when this process started the cold-cache compilation and has not joined it yet."""
    return _process is not None


def model(m):
    """Tell the background process which model to compile the lean kernels of (the first
    model only; none: it stops after COMMON), and start a second one that compiles them from
    the other end."""
    global _sent, _back
    if _process is None or _sent:
        return
    _sent = True
    description = None if m is None else _description(m) + "\n"
    if description is not None:
        _back = _spawn("--back")
    for process in (_process, _back):
        try:
            if process is not None:
                if description is not None:
                    process.stdin.write(description)
                process.stdin.close()
        except OSError:
            pass


def join(m=None, wait=True):
    """Once the background processes have compiled (at once with wait; else this call returns
    at once while they run, for INTERPRET_SECONDS from the first such call, the kernels running
    as plain Python meanwhile): load the lean kernels of m (compiling what they left out) and
    give the Models and Data made meanwhile their compiled handles. Does anything only once."""
    global _process, _back, _interpreting_since
    if _process is None:
        return
    model(m)
    processes = [p for p in (_process, _back) if p is not None]
    if not wait and any(p.poll() is None for p in processes):
        now = time.perf_counter()
        if _interpreting_since is None:
            _interpreting_since = now
        if now - _interpreting_since < INTERPRET_SECONDS:
            return
    for process in processes:
        try:
            process.wait(timeout=900)
        except subprocess.TimeoutExpired:
            process.kill()
    _process = _back = None         # interpreting() ends: the kernels compile from here on
    if m is not None:
        with jit.callees_only():    # (the step calls them)
            for kernel, name in zip(lean_kernels(m), LEAN):
                kernel.compile(_argument_types(name))
    from .types import compiled_structs
    compiled_structs()


def _child():
    """Compile COMMON until the model is told, then the model's lean kernels from the front of
    LEAN (the constraint stage first, the longest: with the solver, a third of a cold start's
    compile time), then what remains of COMMON (the second process compiles it from the other
    end), then the model's forward."""
    import select

    pending = list(COMMON)
    with jit.callees_only():        # machine code for the forward and the step only
        while pending and not select.select([sys.stdin], [], [], 0)[0]:
            compile_kernels([pending.pop(0)])
        line = sys.stdin.readline()
        if line.strip():
            for kernel, name in zip(lean_kernels(_Described(line)), LEAN):
                kernel.compile(_argument_types(name))
        compile_kernels(pending)
    if line.strip():
        _model_kernel(_Described(line), "forward_kernel")


def _model_kernel(described, name):
    """Compile the lean kernel called name (forward_kernel, step_kernel) of the model."""
    from .forward import lean_calls
    lean_calls(described)[name].compile(_argument_types(name))


def _child_back():
    """The second background process: the model's lean kernels from the end of LEAN, then
    COMMON from its end (the first process compiles it from the front after the first of
    LEAN), then the model's step, which calls all of them (it waits for those the first
    process is compiling, then loads them from the cache)."""
    line = sys.stdin.readline()
    if not line.strip():
        return
    described = _Described(line)
    kernels = list(zip(lean_kernels(described), LEAN))
    with jit.callees_only():
        for kernel, name in reversed(kernels[1:]):
            kernel.compile(_argument_types(name))
        compile_kernels(reversed(COMMON))
    _model_kernel(described, "step_kernel")


if __name__ == "__main__":
    _child_back() if sys.argv[1:] == ["--back"] else _child()

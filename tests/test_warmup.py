"""The cold-cache warm-up compiles kernels that exist, in a process that imports this engine."""
import importlib
import inspect
import json
import os
import subprocess
import sys
import time

from engine import jit, warmup


def test_warmup_names_are_compiled_kernels():
    for spec in warmup.GENERAL:
        kernel = warmup._kernel(spec)
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
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty"), ENGINE_LEAN="1")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "True"


def test_a_process_without_lean_kernels_starts_nothing(tmp_path):
    """ENGINE_LEAN=0 (the general kernels only): no background process, even on an empty
    cache."""
    script = "import engine, engine.warmup as w; print(w._process is None)"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty"), ENGINE_LEAN="0")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "True"


SHARED = ("engine.smooth:kinematics", "engine.smooth:tendon", "engine.smooth:crb",
          "engine.smooth:com_pos")


def test_processes_share_the_compilation_of_the_general_kernels(tmp_path):
    """Two processes started together on an empty cache, each calling compile_shared: every
    kernel is compiled by one of them and loaded from the cache by the other."""
    script = ("import sys, json, importlib; from engine import warmup; "
              f"specs = {SHARED!r}; warmup.compile_shared(specs); "
              "ks = [getattr(importlib.import_module(s.split(':')[0]), s.split(':')[1]) "
              "for s in specs]; "
              "print(json.dumps([sum(k._cache_misses.values()) for k in ks]))")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty"), ENGINE_LEAN="0")
    runs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                             text=True) for _ in range(2)]
    compiled = [json.loads(run.communicate()[0]) for run in runs]
    assert all(run.returncode == 0 for run in runs)
    assert [a + b for a, b in zip(*compiled)] == [1] * len(SHARED)


BOX_ON_PLANE = """<mujoco><worldbody><geom type="plane" size="1 1 .1"/>
  <body pos="0 0 .1"><freejoint/><geom type="box" size=".1 .1 .1"/><site name="s"/></body>
  </worldbody><sensor><accelerometer site="s"/></sensor></mujoco>"""


def test_the_shared_kernels_are_compiled_for_the_types_their_callers_use():
    """Each kernel of GENERAL has one compiled signature, that of _argument_types, after the
    engine's entry points that call them ran (a box resting on a plane, with a contact): a
    caller with other types would have compiled a second one. (Compiled by the test workers
    before their tests; alone, this test compiles them.)"""
    import engine
    warmup.compile_shared()
    m = engine.load_model_from_string(BOX_ON_PLANE)
    d = engine.make_data(m)
    engine.step(m, d, 20)
    assert d.ncon > 0
    engine.forward(m, d)
    engine.inverse(m, d)
    engine.transition_fd(m, d)
    engine.inverse_fd(m, d)
    engine.transition_derivatives(m, d)
    engine.inverse_derivatives(m, d)
    engine.rollout(m, None, None, nstep=3)
    engine.rigid_inverse(m, d, d.qacc.copy())
    for spec in warmup.GENERAL:
        kernel = warmup._kernel(spec)
        assert list(kernel.overloads) == [warmup._argument_types(spec)], spec


def test_kernels_wait_for_those_they_call_or_share_their_callees_with():
    """The step waits for the constraint stage it calls; the sensors, which share the narrow
    phase with the collision, wait for it; the collision and the constraint stage, which share
    little, wait for nothing and compile side by side."""
    waits = warmup._waits(list(warmup.GENERAL))
    assert "engine.forward:fwd_constraint" in waits["engine.forward:step_kernel"]
    assert "engine.forward:step_kernel" in waits["engine.rollout:rollout_kernel"]
    assert "engine.collision_driver:collision" in waits["engine.sensor:sensor_pos"]
    assert "engine.sensor:sensor_pos" in waits["engine.sensor:sensor_vel"]
    assert waits["engine.collision_driver:collision"] == set()
    assert not waits["engine.forward:forward_kernel"] & {
        "engine.forward:step_kernel", "engine.inverse:inverse_kernel"}


TWO_BALLS = """<mujoco><worldbody><geom type="plane" size="1 1 .1"/>
  <body pos="0 0 .2"><freejoint/><geom type="sphere" size=".1"/><site name="s"/></body>
  <body pos="0 .3 .2"><freejoint/><geom type="capsule" size=".05 .1"/></body></worldbody>
  <sensor><accelerometer site="s"/><touch site="s"/></sensor></mujoco>"""


def test_the_background_process_compiles_the_lean_kernels_of_the_model():
    """What model() sends describes the model enough to pick the same lean kernels."""
    from engine import compiler
    forward = importlib.import_module("engine.forward")
    m = compiler.load_model_from_string(TWO_BALLS)
    described = warmup._Described(warmup._description(m))
    assert forward.lean_calls(described) is forward.lean_calls(m)
    kernels = warmup.lean_kernels(m)
    assert [k.py_func.__name__ for k in kernels] == list(warmup.LEAN)
    assert all(hasattr(k, "compile") for k in kernels)


def test_model_is_sent_once(tmp_path):
    """On an empty cache, load_model hands the model to the background process and to a
    second one it starts (their stdin is then closed: they compile that model's kernels from
    the two ends of the list, then stop)."""
    script = ("import types, engine.warmup as w; p = w._process; "
              "m = types.SimpleNamespace(opt_integrator=[0], opt_solver=[2], "
              "opt_noslip_iterations=[0], opt_stabilization=[0], opt_density=[0.0], "
              "opt_viscosity=[0.0], eq_type=[], eq_hard=[], geom_type=[0, 2], sensor_type=[]); "
              "w.model(m); back = w._back; w.model(m); "
              "print(p.stdin.closed, back.stdin.closed, back is w._back, w._sent); "
              "[(q.kill(), q.wait()) for q in (p, back)]")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty"), ENGINE_LEAN="1")
    out = subprocess.run([sys.executable, "-c", "import engine; " + script], env=env,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True True True True"


def _state(d):
    return [d.qpos.tolist(), d.qvel.tolist(), d.sensordata.tolist(), int(d.ncon)]


def test_a_cold_start_steps_at_once_as_plain_python_with_the_compiled_results(tmp_path):
    """On an empty cache the process that loads and steps a model compiles nothing (no numba
    compile event): its kernels run as plain Python while the background processes compile,
    with the compiled engine's results, bit for bit (floats through JSON are exact)."""
    script = (
        "import json, numba.core.event as ev\n"
        "compiled = []\n"
        "class Seen(ev.Listener):\n"
        "    def on_start(self, e): compiled.append(e.data['dispatcher'].py_func.__qualname__)\n"
        "    def on_end(self, e): pass\n"
        "ev.register('numba:compile', Seen())\n"
        "import engine, engine.warmup as w\n"
        "w.INTERPRET_SECONDS = 1e9     # (a loaded machine: never wait for the compilation)\n"
        f"m = engine.load_model_from_string({TWO_BALLS!r}); d = engine.make_data(m)\n"
        "engine.step(m, d, 150)\n"
        "state = [d.qpos.tolist(), d.qvel.tolist(), d.sensordata.tolist(), int(d.ncon)]\n"
        "print(json.dumps([w.interpreting(), type(d._struct).__name__, compiled, state]))\n"
        "[(p.kill(), p.wait()) for p in (w._process, w._back)]\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty"), ENGINE_LEAN="1")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    interpreting, handle, compiled, state = json.loads(out.stdout)
    assert interpreting and handle == "SimpleNamespace"
    assert compiled == []
    import engine
    m = engine.load_model_from_string(TWO_BALLS)
    d = engine.make_data(m)
    engine.step(m, d, 150)
    assert d.ncon > 0
    assert state == _state(d)


def test_models_made_while_interpreting_get_compiled_handles_at_join(monkeypatch):
    """While the background processes run, Models and Data hold plain handles and step as
    plain Python; once they have ended, join gives them compiled handles, and the steps go on
    compiled, with the same results as compiled steps all along, bit for bit."""
    from types import SimpleNamespace

    import engine
    from engine import jit
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        monkeypatch.setattr(warmup, "_process", running)
        monkeypatch.setattr(warmup, "_sent", True)
        monkeypatch.setattr(warmup, "_interpreting_since", None)
        monkeypatch.setattr(warmup, "INTERPRET_SECONDS", 1e9)
        assert jit.interpreting()
        m = engine.load_model_from_string(TWO_BALLS)
        d = engine.make_data(m)
        assert isinstance(m._struct, SimpleNamespace) and isinstance(d._struct, SimpleNamespace)
        engine.step(m, d, 120)                   # the processes run: as plain Python
        assert isinstance(d._struct, SimpleNamespace)
        ended = subprocess.Popen([sys.executable, "-c", "pass"])
        ended.wait()
        monkeypatch.setattr(warmup, "_process", ended)
        warmup.join()
        assert not jit.interpreting()
        assert not isinstance(m._struct, SimpleNamespace)
        assert not isinstance(d._struct, SimpleNamespace)
        engine.step(m, d, 30)                    # compiled
    finally:
        running.kill()
        running.wait()
    m2 = engine.load_model_from_string(TWO_BALLS)
    d2 = engine.make_data(m2)
    engine.step(m2, d2, 150)
    assert d.ncon > 0
    assert _state(d) == _state(d2)


def test_prune_caches_keeps_the_current_the_recent_and_what_is_not_a_cache(tmp_path, monkeypatch):
    """Old caches of other sources go, beyond the `keep` most recent; the current cache, one
    written within keep_seconds and directories that are not digests stay."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    current = jit.cache_dir()
    names = ["%016x" % k for k in range(5)]
    for k, name in enumerate(names + [os.path.basename(current), "not-a-digest"]):
        sub = tmp_path / name / "engine_x"
        sub.mkdir(parents=True)
        (sub / "kernel.nbi").write_text("")
        age = 10000.0 * (k + 1) if name in names[1:] else 0.0   # names[0] was just written
        for p in (sub, sub.parent):
            t = os.path.getmtime(p) - age
            os.utime(p, (t, t))
    deleted = jit.prune_caches(keep=2, keep_seconds=15000.0)
    # by age: names[0] (now), names[1] (10000 s), names[2] (20000 s), ... ; the two most
    # recent kept, names[1] also being within 15000 s; the others are older and beyond two
    assert sorted(os.path.basename(p) for p in deleted) == names[2:]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(names[:2] + [os.path.basename(current), "not-a-digest"])


def test_copies_of_the_same_engine_share_the_compiled_kernels(tmp_path):
    """Two copies of the engine's sources in other directories, the second's files touched
    later (a reinstall, another checkout): a kernel compiled by the first is loaded, not
    compiled, by the second."""
    import shutil
    root = os.path.dirname(os.path.dirname(os.path.abspath(jit.__file__)))
    copies = []
    for k in range(2):
        target = tmp_path / f"copy{k}"
        shutil.copytree(os.path.join(root, "engine"), target / "engine",
                        ignore=shutil.ignore_patterns("__pycache__"))
        copies.append(target)
    later = time.time() + 1000.0
    for path in (copies[1] / "engine").rglob("*.py"):
        os.utime(path, (later, later))
    script = ("import engine, json; from engine import warmup; "
              "warmup.compile_kernels(['engine.smooth:com_pos']); k = warmup._kernel("
              "'engine.smooth:com_pos'); print(json.dumps([engine.__file__, "
              "sum(k._cache_misses.values()), sum(k._cache_hits.values())]))")
    runs = []
    for copy in copies:
        env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), ENGINE_LEAN="0",
                   PYTHONPATH=str(copy))
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, check=True, cwd=tmp_path)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert [os.path.dirname(os.path.dirname(r[0])) for r in runs] == [str(c) for c in copies]
    assert runs[0][1:] == [1, 0]       # compiled by the first copy
    assert runs[1][1:] == [0, 1]       # loaded by the second


KERNELS = """from engine.jit import jit


@jit
def callee(x):
    return x.sum() * 2.0


@jit
def caller(x):
    return callee(x) + 1.0
"""

HOLDER = """import sys
from numba import types
from numba.core.dispatcher import Dispatcher
from engine import jit
import kernels
with jit.kernel_lock(kernels.callee.py_func, (types.float64[::1],)):
    open("held", "w").close()
    sys.stdin.readline()                 # until told: the other process is compiling
    Dispatcher.compile(kernels.callee, (types.float64[::1],))    # numba's own, no lock
"""

WAITER = """import json, time, numpy as np
import kernels
sleep = time.sleep


def waiting(seconds):                    # the lock's wait: tell the test it has begun
    open("waiting", "w").close()
    sleep(seconds)


time.sleep = waiting
print(kernels.caller(np.ones(3)), json.dumps(sum(kernels.callee._cache_misses.values())))
"""


def _wait_for(path, process):
    while not path.exists():
        assert process.poll() is None, process.communicate()
        time.sleep(0.02)


def test_a_kernel_compiled_by_another_process_is_waited_for_not_compiled_again(tmp_path):
    """A process holds the lock of a kernel (as while compiling it); another process compiling
    a caller of that kernel waits for it, then loads it from the cache instead of compiling
    it too (as both processes of a cold start compiled the solver)."""
    (tmp_path / "kernels.py").write_text(KERNELS)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), ENGINE_LEAN="0",
               PYTHONPATH=str(tmp_path))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], env=env, cwd=tmp_path,
                              stdin=subprocess.PIPE, text=True)
    _wait_for(tmp_path / "held", holder)
    waiter = subprocess.Popen([sys.executable, "-c", WAITER], env=env, cwd=tmp_path,
                              stdout=subprocess.PIPE, text=True)
    _wait_for(tmp_path / "waiting", waiter)
    holder.communicate("go\n")           # compiles the callee, then lets the lock go
    out, _ = waiter.communicate()
    assert holder.returncode == 0 and waiter.returncode == 0
    result, misses = out.split()
    assert float(result) == 7.0
    assert misses == "0"                  # loaded from the cache: compiled once, by the holder


def _inlined_callee(k):
    """A function of k branches, each with variables of its own."""
    lines = ["def callee(x):", "    s = 0.0"]
    for i in range(k):
        lines += [f"    if x > {i}:", f"        a{i} = x * {i + 1}.0", f"        s += a{i} - {i}"]
    lines.append("    return s")
    namespace = {}
    exec("\n".join(lines), namespace)
    return namespace["callee"]


def test_an_inlined_kernel_is_copied_in_time_linear_in_its_size(monkeypatch):
    """numba copies an inlined callee's IR into every call site block by block; each block's
    copy used to copy the callee's whole scope (every variable), so the copy grew with blocks
    times variables. Twice the branches now copy about twice the variables, and the caller
    computes the same as the callee called from Python."""
    from numba import njit
    from numba.core import ir

    copies = [0]
    var_deepcopy = ir.Var.__deepcopy__

    def counting(self, memo):
        copies[0] += 1
        return var_deepcopy(self, memo)

    monkeypatch.setattr(ir.Var, "__deepcopy__", counting)
    counts = []
    for k in (20, 40):
        callee = _inlined_callee(k)
        inner = jit.inlined(callee)

        @njit
        def caller(x):
            return inner(x) + 1.0

        copies[0] = 0
        for x in (-1.0, 7.5, 100.0):
            assert caller(x) == callee(x) + 1.0
        counts.append(copies[0])
    assert counts[0] > 0
    assert counts[1] < 2.5 * counts[0], counts


def test_the_inliner_is_mended_whether_imported_before_or_after_the_engine():
    """Importing the engine does not import numba's inliner (a tenth of a second); the inliner
    copies with one memo per IR however the two are imported."""
    check = ("import sys\n{first}\n"
             "print('numba.core.inline_closurecall' in sys.modules)\n"
             "from numba.core import inline_closurecall\n"
             "print(type(inline_closurecall.copy).__name__, "
             "inline_closurecall.InlineWorker.inline_ir.__name__)\n")
    for first, imported in (("import engine", "False"),
                            ("import numba.core.inline_closurecall, engine", "True")):
        out = subprocess.run([sys.executable, "-c", check.format(first=first)], check=True,
                             capture_output=True, text=True).stdout.split()
        assert out == [imported, "_InlineCopy", "inline_ir_shared"], (first, out)


def test_calls_into_llvm_broadcast_no_event_and_compiling_still_works(tmp_path):
    """numba's callbacks on llvmlite's lock (an event at every call into LLVM) are gone once the
    engine is imported, whichever of numba and the engine came first; kernels compile and run,
    and numba's own compile events (the cold-start profile's) still come."""
    check = ("{first}\n"
             "from llvmlite.binding import ffi\n"
             "from numba.core import event\n"
             "import numpy as np\n"
             "from numba import njit\n"
             "seen = []\n"
             "class Listener(event.Listener):\n"
             "    def on_start(self, ev): pass\n"
             "    def on_end(self, ev): seen.append(ev.kind)\n"
             "event.register('numba:compile', Listener())\n"
             "f = njit(lambda x: x.sum() * 2.0)\n"
             "print(len(ffi.lib._lock._cblist), f(np.ones(3)), len(seen))\n")
    for first in ("import engine", "import numba.core.base, engine"):
        out = subprocess.run([sys.executable, "-c", check.format(first=first)], check=True,
                             capture_output=True, text=True, cwd=tmp_path).stdout.split()
        assert out[:2] == ["0", "6.0"] and int(out[2]) >= 1, (first, out)


def test_a_kernel_calling_stages_is_not_optimized_again_with_its_callees():
    """A kernel made with calls_stages keeps its callees as calls (their modules, already
    optimized, are linked in as they are); a kernel made with jit is optimized again with its
    callees linked in, and LLVM inlines a small one. Both compute the same; a variant of a
    kernel calling stages calls stages too."""
    import numpy as np
    from numba import njit
    from numba.core.caching import NullCache

    @njit
    def squares(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * x[i]
        return s

    def twice(x):
        return squares(x) * 2.0

    def staged_twice(x):
        return squares(x) * 2.0

    x = np.arange(5.0)
    symbol = None
    for make, fn in ((jit.jit, twice), (jit.calls_stages, staged_twice)):
        kernel = make(fn)
        kernel._cache = NullCache()          # (a closure: compiled here, not cached)
        assert kernel(x) == 60.0
        ir_text = next(iter(kernel.inspect_llvm().values()))
        symbol = symbol or next(f.name for f in squares.overloads[
            next(iter(squares.overloads))].library.get_defined_functions()
            if "squares" in f.name and not f.name.startswith("cpython"))
        assert (f"@{symbol}(" in ir_text) == (make is jit.calls_stages), make
    name = _staged.__qualname__ + "__t"
    assert name not in jit._STAGE_CALLERS
    copy = jit.variant(jit.calls_stages(_staged), "t", _squares=squares)
    assert copy.py_func.__qualname__ == name and name in jit._STAGE_CALLERS


def _squares(x):
    return x


def _staged(x):
    return _squares(x) * 2.0


def test_plain_python_steps_wait_for_the_compilation_once_their_time_is_spent(monkeypatch):
    """join(wait=False) returns at once while the background processes run, for
    INTERPRET_SECONDS from its first call; after that it waits for them."""
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.0)"])
    monkeypatch.setattr(warmup, "_process", running)
    monkeypatch.setattr(warmup, "_sent", True)
    monkeypatch.setattr(warmup, "_interpreting_since", None)
    monkeypatch.setattr(warmup, "INTERPRET_SECONDS", 1e9)
    warmup.join(wait=False)
    assert warmup.interpreting() and running.poll() is None
    monkeypatch.setattr(warmup, "INTERPRET_SECONDS", 0.0)
    warmup.join(wait=False)
    assert not warmup.interpreting() and running.poll() == 0


DEFERRED_KERNELS = '''
from engine.jit import calls_stages, jit


@jit
def leaf(x):
    return x * 2.0


@jit
def checked(x):
    if x < 0.0:
        raise ValueError("negative")
    return leaf(x) + 1.0


@calls_stages
def top(x):
    return checked(x) * 3.0


@jit
def other(x):
    return leaf(x) - 1.0
'''

DEFERRED_FIRST = '''
import kern
from engine import jit
from numba import float64
entry = lambda k: k.overloads[(float64,)].entry_point
print(kern.top(1.5))
print([isinstance(entry(k), jit._Deferred) and entry(k).library._engine_deferred
       for k in (kern.top, kern.checked, kern.leaf)])
try:
    kern.top(-1.0)
except ValueError as e:
    print("raised", e)
print(kern.checked(2.0), entry(kern.checked).library._engine_deferred)
'''

DEFERRED_AGAIN = '''
import kern
from engine import jit
from numba import float64
entry = lambda k: k.overloads[(float64,)].entry_point
print(kern.other(3.0), entry(kern.leaf).library._engine_deferred)
print(kern.checked(2.0), kern.leaf(2.0), kern.top(1.0))
print([sum(k.stats.cache_misses.values()) for k in (kern.other, kern.checked, kern.leaf, kern.top)])
'''


def test_only_kernels_called_from_python_get_machine_code(tmp_path):
    """A kernel compiled because another calls it is optimized and linked into its caller but
    gets no machine code of its own, and is cached as bitcode, until it is called from Python:
    then it runs, and is cached as machine code. A new caller links a callee loaded as bitcode
    without making its machine code; an exception raised in a callee still reaches Python. (top
    calls stages: its machine code keeps a call to its own copy of checked, whose machine code is
    then made beside it.)"""
    (tmp_path / "kern.py").write_text(DEFERRED_KERNELS)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), ENGINE_LEAN="0")

    def run(script):
        return subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path,
                              capture_output=True, text=True, check=True).stdout.splitlines()

    assert run(DEFERRED_FIRST) == ["12.0", "[False, True, True]", "raised negative",
                                   "5.0 False"]
    # checked was cached again as machine code, leaf stayed bitcode: loaded as other's callee,
    # leaf has no machine code until it is called; nothing but the new caller compiles
    assert run(DEFERRED_AGAIN) == ["5.0 True", "5.0 4.0 9.0", "[1, 0, 0, 0]"]

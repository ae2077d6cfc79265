"""Cold start: import, load the humanoid, first step, each in a fresh interpreter with an empty
numba cache (what a fresh install or an edit of the engine costs), then the kernels that take the
compile time. The kernels run as plain Python while the background processes compile them
(engine.warmup): the script then steps on, as a script would, until the compiled kernels take
over, and prints when that happened and how many steps ran before.

    python benchmarks/cold_start.py [--model PATH] [--baseline DIR] [--rounds 1] [--top 20]
                                    [--no-profile]

--baseline DIR times another checkout of the engine (e.g. ``git archive main engine | tar -x -C
DIR``) in turns with this one, so that both see the same machine load; the load average is
printed with every figure (the machine has 2 cores; compile times scale with its load).
The CPU time of the process and of its warm-up process is printed too: on a loaded machine it
varies much less than the elapsed time. The profile compiles everything in one process (the
background warm-up off, so that every compile is seen) and lists the kernels by their own
compile time (CPU): numba's event API, the time of each compile minus that of the compiles it
triggered (the kernels it calls), so it includes LLVM's optimization and code generation of the
kernel's module with its callees linked in.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
TARGET = 35.0

TIMING = """
import resource, sys, time
t = time.perf_counter()
import engine
t1 = time.perf_counter()
m = engine.load_model(sys.argv[1])
t2 = time.perf_counter()
d = engine.make_data(m)
engine.step(m, d)
t3 = time.perf_counter()
steps = 1
interpreting = getattr(engine.warmup, "interpreting", lambda: False)   # (older engines: none)
while interpreting():                    # as a script would: step on (as plain Python)
    engine.step(m, d)
    steps += 1
engine.warmup.join(m)                    # (compiled by now: loads the kernels)
engine.step(m, d)
t4 = time.perf_counter()
cpu = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
print(t1 - t, t2 - t1, t3 - t2, t4 - t, steps, *(r.ru_utime + r.ru_stime for r in cpu))
"""

PROFILE = """
import json, sys, time
from numba.core import event
records, stack, phase = [], [], ["import"]

class Listener(event.Listener):
    def on_start(self, ev):
        stack.append([time.process_time(), 0.0])

    def on_end(self, ev):
        t0, inner = stack.pop()
        dt = time.process_time() - t0
        if stack:
            stack[-1][1] += dt
        fn = ev.data["dispatcher"].py_func
        records.append((phase[0], fn.__module__ + ":" + fn.__qualname__, dt - inner))

event.register("numba:compile", Listener())
import engine
phase[0] = "load"
m = engine.load_model(sys.argv[1])
phase[0] = "first step"
d = engine.make_data(m)
engine.step(m, d)
print(json.dumps(records))
"""


def humanoid():
    import dm_control
    return str(pathlib.Path(dm_control.__file__).parent / "suite" / "humanoid.xml")


def run(root, script, model, extra_env=()):
    """stdout of script run by a fresh interpreter on the engine at root, empty numba cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(root), **dict(extra_env))
        env.pop("NUMBA_OPT", None)
        out = subprocess.run([sys.executable, "-c", script, model], env=env, cwd=str(root),
                             capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{root}: {out.stderr[-2000:]}")
    return out.stdout.strip().splitlines()[-1]


def load():
    return "load average %.1f %.1f %.1f" % os.getloadavg()


def timing(name, root, model):
    before = load()
    t_import, t_load, t_step, t_compiled, steps, cpu, cpu_child = map(
        float, run(root, TIMING, model).split())
    total = t_import + t_load + t_step
    print(f"{name:>10}: import {t_import:5.1f} s  load {t_load:5.1f} s  first step "
          f"{t_step:6.1f} s  total {total:6.1f} s  (target {TARGET:.0f} s); compiled steps "
          f"after {t_compiled:6.1f} s ({steps:.0f} steps before them); CPU time "
          f"{cpu:6.1f} s + {cpu_child:5.1f} s in the warm-up processes ({before} before, "
          f"{load()} after)", flush=True)
    return total


def profile(root, model, top):
    before = load()
    records = json.loads(run(root, PROFILE, model, {"ENGINE_WARMUP_CHILD": "1"}))
    phases, kernels = {}, {}
    for phase, name, seconds in records:
        phases[phase] = phases.get(phase, 0.0) + seconds
        n, s = kernels.get(name, (0, 0.0))
        kernels[name] = (n + 1, s + seconds)
    total = sum(phases.values())
    print(f"compile time (CPU) in one process: {total:.1f} s over {len(records)} compiles "
          f"({', '.join(f'{k} {v:.1f} s' for k, v in phases.items())}; {before} before, "
          f"{load()} after)")
    print(f"top {top} kernels by own compile time (s, share, signatures):")
    for name, (n, s) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"  {s:6.1f} {100 * s / total:5.1f}%  {n:2d}  {name}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=None, help="MJCF file (default: dm_control's humanoid)")
    ap.add_argument("--baseline", default=None, help="another engine checkout to time in turns")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--no-profile", action="store_true")
    a = ap.parse_args()
    model = a.model or humanoid()
    print(f"cold start of {model} ({os.cpu_count()} cores)")
    for _ in range(a.rounds):
        if a.baseline:
            timing("baseline", pathlib.Path(a.baseline).resolve(), model)
        timing("this", ROOT, model)
    if not a.no_profile:
        if a.baseline:
            print("baseline:", end=" ")
            profile(pathlib.Path(a.baseline).resolve(), model, a.top)
            print("this:", end=" ")
        profile(ROOT, model, a.top)


if __name__ == "__main__":
    main()

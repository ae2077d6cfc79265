"""Smooth dynamics speed: our forward/step against MuJoCo's, constraints disabled in both;
step(n) with each engine's default integrator (the model's), then with implicit and implicitfast.

    python benchmarks/smooth.py [--models humanoid cheetah] [--rounds 7] [--calls 2000]

Timings are interleaved (ours, MuJoCo, ours, ...) in one process so that both see the same
machine load; the medians of the rounds are printed with their ratio. Then the start-up costs:
the cold compile of the whole engine with an empty numba cache, and the warm start (import,
load, first step) with the cache filled, each in a fresh interpreter.
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import mujoco
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine import DisableBit  # noqa: E402


def suite_path(name):
    import dm_control
    return str(pathlib.Path(dm_control.__file__).parent / "suite" / f"{name}.xml")


def per_call(fn, calls):
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls


def bench_model(name, rounds, calls):
    path = suite_path(name)
    mm = mujoco.MjModel.from_xml_path(path)
    mm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    md = mujoco.MjData(mm)
    m = engine.load_model(path)
    m.opt.disableflags = m.opt.disableflags | DisableBit.CONSTRAINT
    d = engine.make_data(m)
    rng = np.random.default_rng(0)
    qvel = 0.1 * rng.standard_normal(mm.nv)

    def reset():
        mujoco.mj_resetData(mm, md)
        engine.reset_data(m, d)
        md.qvel[:] = qvel
        d.qvel[:] = qvel

    rows = {"forward": ([], []), "step": ([], []), f"step(n={calls})": ([], [])}
    integrators = (engine.Integrator.IMPLICIT, engine.Integrator.IMPLICITFAST)
    for integ in integrators:
        rows[f"{integ.name.lower()}(n)"] = ([], [])
    engine.step(m, d)                      # compile outside the timing
    for _ in range(rounds):
        for label, ours, theirs in (
                ("forward", lambda: engine.forward(m, d), lambda: mujoco.mj_forward(mm, md)),
                ("step", lambda: engine.step(m, d), lambda: mujoco.mj_step(mm, md))):
            reset()
            rows[label][0].append(per_call(ours, calls))
            reset()
            rows[label][1].append(per_call(theirs, calls))
        reset()
        t = time.perf_counter()
        engine.step(m, d, calls)
        rows[f"step(n={calls})"][0].append((time.perf_counter() - t) / calls)
        reset()
        t = time.perf_counter()
        mujoco.mj_step(mm, md, calls)
        rows[f"step(n={calls})"][1].append((time.perf_counter() - t) / calls)
        # the implicit integrators (the same integer values in both engines)
        integ0 = m.opt.integrator
        for integ in integrators:
            m.opt.integrator = mm.opt.integrator = int(integ)
            reset()
            t = time.perf_counter()
            engine.step(m, d, calls)
            rows[f"{integ.name.lower()}(n)"][0].append((time.perf_counter() - t) / calls)
            reset()
            t = time.perf_counter()
            mujoco.mj_step(mm, md, calls)
            rows[f"{integ.name.lower()}(n)"][1].append((time.perf_counter() - t) / calls)
        m.opt.integrator = mm.opt.integrator = int(integ0)
    print(f"\n{name} (nq={m.nq} nv={m.nv} nbody={m.nbody} nu={m.nu}), constraints disabled")
    print(f"  {'':17s} {'ours (us)':>10s} {'MuJoCo (us)':>12s} {'ratio':>7s}")
    for label, (ours, theirs) in rows.items():
        a, b = np.median(ours) * 1e6, np.median(theirs) * 1e6
        print(f"  {label:17s} {a:10.2f} {b:12.2f} {a / b:7.2f}")


STARTUP = """
import time
t0 = time.perf_counter()
import engine
m = engine.load_model({path!r})
d = engine.make_data(m)
engine.step(m, d)
engine.forward(m, d)
engine.energy(m, d)
d.qacc[:] = 0.0
engine.inverse(m, d)
print(time.perf_counter() - t0)
"""


def startup_times(name):
    path = suite_path(name)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        run = [sys.executable, "-c", STARTUP.format(path=path)]
        cold = float(subprocess.run(run, env=env, check=True, capture_output=True,
                                    text=True).stdout.split()[-1])
        warm = float(subprocess.run(run, env=env, check=True, capture_output=True,
                                    text=True).stdout.split()[-1])
    print(f"\nstart-up ({name}: import, load, make_data, first step)")
    print(f"  cold (empty numba cache): {cold:6.1f} s")
    print(f"  warm (cache filled):      {warm:6.2f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["humanoid", "cheetah"])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--no-startup", action="store_true", help="skip the start-up timings")
    args = ap.parse_args()
    print(f"MuJoCo {mujoco.__version__}; medians of {args.rounds} interleaved rounds of "
          f"{args.calls} calls")
    for name in args.models:
        bench_model(name, args.rounds, args.calls)
    if not args.no_startup:
        startup_times(args.models[0])


if __name__ == "__main__":
    main()

"""Batch rollouts and sweeps on the dm_control humanoid.

    python benchmarks/rollout.py [--batch 64] [--steps 1000] [--cells 64] [--cell-duration 2]
                                 [--repeat 3] [--skip-sweep | --skip-rollout]

1. engine.rollout against mujoco.rollout: --batch rollouts of --steps steps from the standing
   pose with small random velocities under random controls, on 1 and on 2 threads, each engine
   with the options of the model file (ours: PGS, elliptic cones; MuJoCo: Newton, pyramidal) and
   both with Newton and elliptic cones. The runs alternate (ours, MuJoCo, ...) and each time is
   the best of --repeat, so that both engines see the same machine load. Also: the same
   rollouts stepped one by one from Python (engine.set_state, engine.step), on one thread.
2. A sweep of --cells cells (epsilon x kappa) of --cell-duration simulated seconds: back to back
   in this process (--serial), then on a local Ray (every core): the first sweep includes
   starting Ray and its workers (which load the compiled engine; this process runs cells
   meanwhile, and the count it ran is printed), a second one reuses them.
   The ideal is the back-to-back time divided by the number of cores. The CPU time of this
   process and its descendants (Ray's processes and workers) shows Ray's own cost apart from
   what other processes on the machine take.

The machine's load average is printed before and after: the figures are ratios measured side
by side, absolute times depend on what else runs. The CPU time per step (of the whole process,
all threads, best of --repeat) depends much less on the load: on a busy machine the threads get
only a share of the cores, but work that one thread slows down in another (contention for shared
cache lines) shows as more CPU time per step with 2 threads than with 1.
"""
import argparse
import logging
import os
import pathlib
import shutil
import socket
import sys
import tempfile
import time

import mujoco
import numpy as np
from mujoco import rollout as mj_rollout

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine import sweep  # noqa: E402
from engine.rollout import default_nthread  # noqa: E402

FULL = int(engine.State.FULLPHYSICS)
logging.getLogger("engine.compiler").setLevel(logging.ERROR)    # the humanoid's solimp notes


def humanoid_path():
    import dm_control
    return str(pathlib.Path(dm_control.__file__).parent / "suite" / "humanoid.xml")


def load():
    return f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cpus"


def inputs(m, batch, steps):
    rng = np.random.default_rng(0)
    x0 = np.tile(engine.get_state(m, engine.make_data(m), FULL), (batch, 1))
    x0[:, 1 + m.nq:1 + m.nq + m.nv] = 0.1 * rng.normal(size=(batch, m.nv))
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    return x0, rng.uniform(lo, hi, size=(batch, steps, m.nu))


def stepped_in_python(m, x0, control):
    for b in range(len(x0)):
        d = engine.make_data(m)
        engine.set_state(m, d, x0[b], FULL)
        for u in control[b]:
            d.ctrl[:] = u
            engine.step(m, d)


def rollouts(batch, steps, repeat):
    path = humanoid_path()
    variants = {}
    m, mm = engine.load_model(path), mujoco.MjModel.from_xml_path(path)
    variants["options of the file"] = (m, mm)
    m2, mm2 = engine.load_model(path), mujoco.MjModel.from_xml_path(path)
    m2.opt.solver, m2.opt.cone = engine.Solver.NEWTON, engine.Cone.ELLIPTIC
    mm2.opt.solver, mm2.opt.cone = mujoco.mjtSolver.mjSOL_NEWTON, mujoco.mjtCone.mjCONE_ELLIPTIC
    variants["both Newton, elliptic"] = (m2, mm2)
    x0, control = inputs(m, batch, steps)
    engine.rollout(m, x0[:2], control[:2, :5])           # compile or load the kernels
    engine.rollout(m2, x0[:2], control[:2, :5])
    nsteps = batch * steps
    print(f"\n1. rollouts: {batch} x {steps} steps of the humanoid (dt {m.opt.timestep} s), "
          f"best of {repeat}; {load()}")
    print(f"   {'':<24}{'threads':>8}{'ours (steps/s)':>16}{'MuJoCo (steps/s)':>18}"
          f"{'ours/MuJoCo':>13}{'CPU us/step: ours':>20}{'MuJoCo':>9}")
    for name, (m_, mm_) in variants.items():
        best, cpu = {}, {}
        for _ in range(repeat):
            for nt in (1, 2):
                datas = [mujoco.MjData(mm_) for _ in range(nt)]
                for key, run in ((("ours", nt), lambda: engine.rollout(m_, x0, control, nthread=nt)),
                                 (("mj", nt), lambda: mj_rollout.rollout(mm_, datas, x0, control))):
                    t, c = time.perf_counter(), time.process_time()
                    run()
                    best[key] = min(best.get(key, np.inf), time.perf_counter() - t)
                    cpu[key] = min(cpu.get(key, np.inf), time.process_time() - c)
        for nt in (1, 2):
            ours, mj = nsteps / best[("ours", nt)], nsteps / best[("mj", nt)]
            print(f"   {name:<24}{nt:>8}{ours:>16.0f}{mj:>18.0f}{ours / mj:>13.2f}"
                  f"{1e6 * cpu[('ours', nt)] / nsteps:>11.1f}{1e6 * cpu[('mj', nt)] / nsteps:>9.1f}")
        print(f"   {'':<24}{'1 -> 2 threads: ours':>24} {best[('ours', 1)] / best[('ours', 2)]:.2f}x,"
              f" MuJoCo {best[('mj', 1)] / best[('mj', 2)]:.2f}x")
    small = max(1, batch // 8)
    stepped_in_python(m, x0[:1], control[:1, :5])        # compile or load engine.step's kernel
    t = time.perf_counter()
    stepped_in_python(m, x0[:small], control[:small])
    py = time.perf_counter() - t
    t = time.perf_counter()
    engine.rollout(m, x0[:small], control[:small], nthread=1)
    ro = time.perf_counter() - t
    print(f"   {small} of the rollouts stepped one by one from Python: {py / ro:.2f} x the time "
          f"of engine.rollout on one thread")
    print(f"   {load()}")


def tree_cpu():
    """CPU seconds (user + system) used so far by this process and all its descendants (with a
    Ray started here: its raylet, object store and workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, used = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(pid)] = int(fields[1])
        used[int(pid)] = (int(fields[11]) + int(fields[12])) / tick
    mine, todo = set(), [os.getpid()]
    while todo:
        p = todo.pop()
        mine.add(p)
        todo += [c for c, pp in parent.items() if pp == p and c not in mine]
    return sum(used.get(p, 0.0) for p in mine)


def sweeps(cells, duration, repeat):
    path = humanoid_path()
    m, sha = sweep.load_model_any(path)
    n = int(round(np.sqrt(cells)))
    params = [sweep.parse_param(f"epsilon=1e-3:1:log:{n}"),
              sweep.parse_param(f"kappa=0.01:0.1:log:{cells // n}")]
    sw = sweep.Sweep(path, sha, params, duration, list(sweep.DEFAULT_METRICS))
    ncell = len(sweep.grid(params))
    cores = default_nthread()
    tmp = tempfile.mkdtemp(prefix="sweep_bench_")
    print(f"\n2. sweep: {ncell} cells of {duration} s of the humanoid (dt {m.opt.timestep} s), "
          f"{cores} cores; {load()}")

    def run(**kw):
        out = tempfile.mkdtemp(dir=tmp)
        t, c = time.perf_counter(), tree_cpu()
        result = sweep.run_sweep(m, sw, out, progress=False, figures=False, **kw)
        assert result["ran"] == ncell and not result["errors"], result["errors"]
        took = time.perf_counter() - t, tree_cpu() - c
        here = f"{socket.gethostname()}:{os.getpid()}"
        return took + (sum(r["worker"] == here for r in sweep._read_done(out).values()),)

    sweep.run_cell(m, params, (0.1, 0.02), 0.05, sw.metrics)    # compile or load the kernels
    serial, warm = [], []
    import ray
    cold = run(jobs=cores)                  # starts Ray and its workers
    run()                                   # (cells in the workers: now they are up)
    for _ in range(repeat):
        serial.append(run(serial=True))
        warm.append(run())
    ray.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)
    (wall, cpu, _), (wwall, wcpu, _) = min(serial), min(warm)
    ideal = wall / cores
    print(f"   back to back in one process: {wall:.2f} s ({cpu:.2f} s of CPU); ideal on "
          f"{cores} cores {ideal:.2f} s")
    print(f"   Ray, started for the sweep (ray.init, worker start-up included): {cold[0]:.2f} s "
          f"= {cold[0] / ideal:.2f} x the ideal ({cold[2]} of the {ncell} cells run by this "
          f"process while Ray started)")
    print(f"   Ray, running with its workers up (best of {repeat}): {wwall:.2f} s = "
          f"{wwall / ideal:.2f} x the ideal; {wcpu:.2f} s of CPU in the driver, Ray and its "
          f"workers = {wcpu / cpu:.2f} x the back-to-back CPU")
    print(f"   {load()}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--cells", type=int, default=64)
    p.add_argument("--cell-duration", type=float, default=2.0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--skip-sweep", action="store_true")
    p.add_argument("--skip-rollout", action="store_true")
    args = p.parse_args()
    if not args.skip_rollout:
        rollouts(args.batch, args.steps, args.repeat)
    if not args.skip_sweep:
        sweeps(args.cells, args.cell_duration, args.repeat)


if __name__ == "__main__":
    main()

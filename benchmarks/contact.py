"""Step time with contacts: the humanoid on the floor, and piles of free boxes.

    python benchmarks/contact.py [--steps 400] [--boxes 10 100 300]

1. The dm_control humanoid dropped on the floor and then pushed around by random forces on its
   bodies: our step (PGS with 5, 10 and 50 iterations, Newton) and MuJoCo's mj_step with PGS at the
   same iterations and with its default solver (Newton), run side by side on the same states
   (the same warm start too), bucketed by the number of constraint rows, with the ratios; with
   elliptic cones (our default) and with pyramidal ones (MuJoCo's default), the same cone in
   both engines. PGS runs every iteration (tolerance 0) in both engines, so that equal
   iterations mean equal work.
2. Piles of free boxes falling on a floor at dt = 5 ms: our step time against real time.
"""
import argparse
import pathlib
import sys
import time

import mujoco
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402


def suite_path(name):
    import dm_control
    return str(pathlib.Path(dm_control.__file__).parent / "suite" / f"{name}.xml")


def timed(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def humanoid(steps, cone):
    path = suite_path("humanoid")
    m = engine.load_model(path)
    m.opt.timestep = 0.01
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_path(path)
    mm.opt.timestep = 0.01
    md = mujoco.MjData(mm)
    if cone == "elliptic":
        m.opt.cone, mm.opt.cone = engine.Cone.ELLIPTIC, mujoco.mjtCone.mjCONE_ELLIPTIC
    else:
        m.opt.cone, mm.opt.cone = engine.Cone.PYRAMIDAL, mujoco.mjtCone.mjCONE_PYRAMIDAL
    rng = np.random.default_rng(0)
    variants = {
        "ours PGS 5": (5, engine.Solver.PGS),
        "ours PGS 10": (10, engine.Solver.PGS),
        "ours PGS 50": (50, engine.Solver.PGS),
        "ours Newton": (50, engine.Solver.NEWTON),
    }
    mj_variants = {"MuJoCo PGS 5": (5, mujoco.mjtSolver.mjSOL_PGS),
                   "MuJoCo PGS 10": (10, mujoco.mjtSolver.mjSOL_PGS),
                   "MuJoCo PGS 50": (50, mujoco.mjtSolver.mjSOL_PGS),
                   "MuJoCo Newton": (100, mujoco.mjtSolver.mjSOL_NEWTON)}
    rows = {name: {} for name in list(variants) + list(mj_variants)}
    d.qpos[2] = 1.0
    engine.step(m, d, 100)                       # fall and lie down
    for k in range(steps):
        if k % 50 == 0:                          # a new random push on a random body
            push = np.zeros((m.nbody, 6))
            push[rng.integers(1, m.nbody), :3] = rng.normal(0, 150, 3)
        d.xfrc_applied[:] = push
        engine.step(m, d)
        state = (d.qpos.copy(), d.qvel.copy(), d.qacc_warmstart.copy())
        engine.forward(m, d)
        nefc = d.nefc
        bucket = 10 * (nefc // 10)
        for name, (it, solver) in variants.items():
            m.opt.iterations, m.opt.solver = it, solver
            m.opt.tolerance = 0.0 if solver == engine.Solver.PGS else 1e-8

            def run():
                d.qpos[:], d.qvel[:], d.qacc_warmstart[:] = state
                engine.step(m, d)
            rows[name].setdefault(bucket, []).append(timed(run))
        m.opt.iterations, m.opt.solver = 5, engine.Solver.PGS
        d.qpos[:], d.qvel[:], d.qacc_warmstart[:] = state
        for name, (it, solver) in mj_variants.items():
            mm.opt.iterations, mm.opt.solver = it, solver
            mm.opt.tolerance = 0.0 if solver == mujoco.mjtSolver.mjSOL_PGS else 1e-8

            def run_mj():
                md.qpos[:], md.qvel[:], md.qacc_warmstart[:] = state
                md.xfrc_applied[:] = push
                mujoco.mj_step(mm, md)
            rows[name].setdefault(bucket, []).append(timed(run_mj))
    buckets = sorted(rows["ours PGS 5"])
    print(f"\nhumanoid at dt = 10 ms, lying and pushed, {cone} cones in both engines; "
          "median step time (us) by constraint rows")
    ratios = [name[5:] for name in variants]
    header = f"  {'rows':>6s}" + "".join(f"{name:>16s}" for name in rows) + \
        "".join(f"{name + ' ratio':>14s}" for name in ratios)
    print(header)
    for b in buckets:
        med = {name: np.median(rows[name].get(b, [np.nan])) * 1e6 for name in rows}
        print(f"  {b:4d}+ " + "".join(f"{med[name]:16.1f}" for name in rows)
              + "".join(f"{med['ours ' + r] / med['MuJoCo ' + r]:14.2f}" for r in ratios))


def box_pile(n, seconds=1.0):
    side = int(np.ceil(np.sqrt(n)))
    bodies = []
    for k in range(n):
        x, y, z = (k % side) * 0.25, (k // side % side) * 0.25, 0.15 + 0.25 * (k // side ** 2)
        bodies.append(f'<body pos="{x:.3f} {y:.3f} {z + 0.05 * (k % 3):.3f}" euler="{k} {2 * k} 0">'
                      f'<freejoint/><geom type="box" size=".1 .1 .1"/></body>')
    xml = (f'<mujoco><option timestep="0.005" iterations="10"/><worldbody>'
           f'<geom type="plane" size="50 50 .1"/>{"".join(bodies)}</worldbody></mujoco>')
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    engine.step(m, d, 20)
    steps = int(seconds / m.opt.timestep)
    t = time.perf_counter()
    engine.step(m, d, steps)
    per_step = (time.perf_counter() - t) / steps
    print(f"  {n:4d} boxes: {per_step * 1e3:8.2f} ms per 5 ms step, "
          f"real-time factor {m.opt.timestep / per_step:6.2f}, ncon {d.ncon}, "
          f"nefc {d.nefc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--boxes", type=int, nargs="*", default=[10, 100, 300])
    args = ap.parse_args()
    print(f"MuJoCo {mujoco.__version__}")
    for cone in ("elliptic", "pyramidal"):
        humanoid(args.steps, cone)
    print("\npiles of free boxes at dt = 5 ms, 10 PGS iterations")
    for n in args.boxes:
        box_pile(n)


if __name__ == "__main__":
    main()

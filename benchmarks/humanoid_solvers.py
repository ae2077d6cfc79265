"""The humanoid lying on the floor: our step against MuJoCo's, PGS and Newton at the same
iterations with elliptic cones in both engines (target: PGS 10 iterations at most 1.5x).

    python benchmarks/humanoid_solvers.py [--iterations 10] [--rounds 20]

States: MuJoCo's humanoid dropped from 1 m, every 20th step from step 100 to 400 (lying, 20-40
constraint rows); both engines step from the same qpos, qvel and qacc_warmstart, tolerance 0
(every iteration runs). The runs alternate (ours, MuJoCo) state by state so that both see the
same machine load; the medians and their ratio are printed. Our step is the model's compiled
step kernel called directly (as engine.step does, without its Python checks).
"""
import argparse
import importlib
import logging
import os
import pathlib
import sys
import time

import mujoco
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402

forward = importlib.import_module("engine.forward")
logging.getLogger("engine.compiler").setLevel(logging.ERROR)    # the humanoid's solimp notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    import dm_control
    path = str(pathlib.Path(dm_control.__file__).parent / "suite" / "humanoid.xml")
    m = engine.load_model(path)
    mm = mujoco.MjModel.from_xml_path(path)
    md = mujoco.MjData(mm)
    m.opt.timestep = mm.opt.timestep = 0.01
    m.opt.cone, mm.opt.cone = engine.Cone.ELLIPTIC, mujoco.mjtCone.mjCONE_ELLIPTIC
    m.opt.iterations = mm.opt.iterations = args.iterations
    m.opt.tolerance = mm.opt.tolerance = 0.0
    d = engine.make_data(m)
    md.qpos[2] = 1.0
    states = []
    for i in range(400):
        mujoco.mj_step(mm, md)
        if i >= 100 and i % 20 == 0:
            states.append((md.qpos.copy(), md.qvel.copy(), md.qacc_warmstart.copy()))

    def ours(kernel, state):
        d.qpos[:], d.qvel[:], d.qacc_warmstart[:] = state
        t = time.perf_counter()
        kernel(m._struct, d._struct, 1)
        return time.perf_counter() - t

    def theirs(state):
        md.qpos[:], md.qvel[:], md.qacc_warmstart[:] = state
        t = time.perf_counter()
        mujoco.mj_step(mm, md)
        return time.perf_counter() - t

    print(f"MuJoCo {mujoco.__version__}; humanoid lying, dt 10 ms, elliptic cones, "
          f"{args.iterations} iterations, tolerance 0; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for name, ours_solver, mj_solver in (
            ("PGS", engine.Solver.PGS, mujoco.mjtSolver.mjSOL_PGS),
            ("Newton", engine.Solver.NEWTON, mujoco.mjtSolver.mjSOL_NEWTON)):
        m.opt.solver, mm.opt.solver = ours_solver, mj_solver
        engine.step(m, d)                                  # compile or load the kernel
        kernel = forward.kernels(m)[1]
        t_ours, t_mj, rows = [], [], []
        for _ in range(args.rounds):
            for state in states:
                t_ours.append(ours(kernel, state))
                t_mj.append(theirs(state))
                rows.append(d.nefc)
        a, b = np.median(t_ours), np.median(t_mj)
        print(f"  {name:7s} ours {a * 1e6:7.1f} us  MuJoCo {b * 1e6:7.1f} us  ratio {a / b:5.2f}"
              f"  (rows {min(rows)}-{max(rows)})")


if __name__ == "__main__":
    main()

"""Load and step time against model size, ours beside MuJoCo's, and the scaling exponents.

    python benchmarks/scaling.py [--spheres 100 300 1000 3000] [--walkers 10 30 100 400]
                                 [--chains 100 300 450 1000 3000] [--steps 200]

Families (tests/scaled_models.py): N free spheres on a plane, dm_control's walker replicated N
times, a chain of N nested hinged bodies (MJCF; MuJoCo's XML reader refuses nesting deeper than
about 500 elements and its compiler bodies deeper than 1023, so MuJoCo's column stays empty
there). Load is MJCF text -> model (ours: engine.load_model_from_string, set_const included;
MuJoCo: MjModel.from_xml_string); "load+step" adds make_data and `--steps` steps from the
initial state (the spheres reach the plane and touch it on the way). The exponent column is
log(t_N / t_prev) / log(N / N_prev): 1 is linear. One run per size, both engines in the same
process one after the other: absolute times follow the machine's load, compare the ratios.
"""
import argparse
import logging
import math
import pathlib
import sys
import time

import mujoco

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import engine  # noqa: E402
import scaled_models  # noqa: E402


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def ours_steps(xml, steps):
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    engine.step(m, d, steps)
    return d.ncon


def mujoco_steps(xml, steps):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d, steps)
    return d.ncon


def exponent(prev, n, t):
    if prev is None or prev[1] is None or t is None:
        return "     "
    return f"{math.log(t / prev[1]) / math.log(n / prev[0]):5.2f}"


def family(name, sizes, make, steps, mujoco_limit=None):
    print(f"\n{name}")
    head = f"{'N':>6s} {'ours s':>8s} {'MuJoCo s':>9s} {'ratio':>6s} {'exp':>5s} {'exp MJ':>6s}"
    if steps:
        head += f" | {'load+step ours':>14s} {'MuJoCo':>7s} {'ratio':>6s} {'ncon':>11s}"
    print(head)
    prev_ours = prev_mj = None
    for n in sizes:
        xml = make(n)
        t_ours, _ = timed(lambda: engine.load_model_from_string(xml))
        t_mj = None
        if mujoco_limit is None or n <= mujoco_limit:
            t_mj, _ = timed(lambda: mujoco.MjModel.from_xml_string(xml))
        mj = f"{t_mj:9.3f}" if t_mj is not None else f"{'-':>9s}"
        ratio = f"{t_ours / t_mj:6.1f}" if t_mj else f"{'-':>6s}"
        line = (f"{n:6d} {t_ours:8.3f} {mj} {ratio} {exponent(prev_ours, n, t_ours)} "
                f"{exponent(prev_mj, n, t_mj):>6s}")
        if steps:
            s_ours, c_ours = timed(lambda: ours_steps(xml, steps))
            s_mj, c_mj = timed(lambda: mujoco_steps(xml, steps))
            line += f" | {s_ours:14.3f} {s_mj:7.3f} {s_ours / s_mj:6.1f} {c_ours:5d} {c_mj:5d}"
        print(line, flush=True)
        prev_ours, prev_mj = (n, t_ours), (n, t_mj)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spheres", type=int, nargs="*", default=[100, 300, 1000, 3000])
    ap.add_argument("--walkers", type=int, nargs="*", default=[10, 30, 100, 400])
    ap.add_argument("--chains", type=int, nargs="*", default=[100, 300, 450, 1000, 3000])
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    ours_steps(scaled_models.spheres(2), 1)          # imports and compiled kernels, not timed
    family("free spheres on a plane", args.spheres, scaled_models.spheres, args.steps)
    family("dm_control walkers", args.walkers, scaled_models.walkers, args.steps)
    family("chain of hinges (MJCF)", args.chains, scaled_models.chain, 0, mujoco_limit=450)


if __name__ == "__main__":
    main()

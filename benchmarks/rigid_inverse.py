"""Time per call of the rigid-contact inverse dynamics beside our forward step and the soft
analytical inverse, and MuJoCo's mj_step and mj_inverse, in one run; the PPM pivots per call
with and without warm start.

Scenes: the Unitree Go1 standing under joint PD with gentle random pushes, with its sphere feet
(4 contacts) and with box feet (4 contacts per foot, 16); dm_control's humanoid lying on the
floor, pushed around. At every sampled state our forward step (engine.step), our soft inverse
(engine.inverse), MuJoCo's mj_step and mj_inverse (the same MJCF, the same state) and
engine.rigid_inverse with each model are timed (best of 5 at the same state), no-slip and
convex both warm-started from the previous state's call and cold, and no-slip without the
least-norm choice of forces (least_norm=False, the pivoting's vertex, warm-started). Times are medians over the
states; the ratios (to our forward step, to MuJoCo's mj_step) are measured side by side, so
they hold even on a busy machine (absolute microseconds do not).

    python benchmarks/rigid_inverse.py [--states 200]
"""
import argparse
import pathlib
import sys
import time

import mujoco
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))
import engine  # noqa: E402
from quadruped_control import PD_KD, PD_KP, go1_torque_model, go1_torque_xml, settled  # noqa: E402,E501


def best_time(fn, repeat=5):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def go1_states(m, count, seed):
    """States of the Go1 standing under PD, pushed every 0.2 s (one every 10 steps)."""
    d = settled(m)
    rng = np.random.default_rng(seed)
    home = m.key_qpos[0, 7:]
    out = []
    for k in range(10 * count):
        if k % 100 == 0:
            d.xfrc_applied[1, :3] = rng.normal(0, 15, 3)
        d.ctrl[:] = PD_KP * (home - d.qpos[7:]) - PD_KD * d.qvel[6:]
        engine.step(m, d)
        if k % 10 == 0:
            out.append((d.qpos.copy(), d.qvel.copy(), d.ctrl.copy(), d.xfrc_applied.copy()))
    return d, out


def humanoid_states(count, seed):
    import dm_control
    path = pathlib.Path(dm_control.__file__).parent / "suite" / "humanoid.xml"
    m = engine.load_model(str(path))
    mm = mujoco.MjModel.from_xml_path(str(path))
    d = engine.make_data(m)
    d.qpos[2] = 1.0
    engine.step(m, d, 600)                  # falls and lies down
    rng = np.random.default_rng(seed)
    out = []
    for k in range(10 * count):
        if k % 100 == 0:
            d.xfrc_applied[:] = 0.0
            d.xfrc_applied[rng.integers(1, m.nbody), :3] = rng.normal(0, 50, 3)
        engine.step(m, d)
        if k % 10 == 0:
            out.append((d.qpos.copy(), d.qvel.copy(), d.ctrl.copy(), d.xfrc_applied.copy()))
    return m, mm, d, out


RIGID = (("noslip (warm)", "noslip", True, {}), ("noslip (cold)", "noslip", False, {}),
         ("noslip vertex", "noslip", True, {"least_norm": False}),
         ("coulomb", "coulomb", True, {}), ("convex (warm)", "convex", True, {}),
         ("convex (cold)", "convex", False, {}))


def measure(name, m, mm, d, states):
    """Median times (us) and ratios; pivots per call of warm and cold no-slip."""
    nu = m.nu
    md = mujoco.MjData(mm)
    qacc_des = np.zeros(m.nv)
    times = {k: [] for k in ("forward step", "soft inverse", "MuJoCo mj_step",
                             "MuJoCo mj_inverse")}
    times.update({key: [] for key, _, _, _ in RIGID})
    pivots = {"warm": [], "cold": []}
    ncon = []
    ws = {}

    def load(s):
        d.qpos[:], d.qvel[:], d.ctrl[:nu], d.xfrc_applied[:] = s

    def mj_load(s):
        md.qpos[:], md.qvel[:], md.ctrl[:nu], md.xfrc_applied[:] = s
        md.qacc_warmstart[:] = 0.0

    for s in states:
        load(s)
        engine.forward(m, d)
        ncon.append(len(d.contact.dist))
        qacc = d.qacc.copy()

        def step():
            load(s)
            engine.step(m, d)

        def inverse():
            d.qacc[:] = qacc
            engine.inverse(m, d)
        times["forward step"].append(best_time(step))
        load(s)
        engine.forward(m, d)
        times["soft inverse"].append(best_time(inverse))

        def mj_step():
            mj_load(s)
            mujoco.mj_step(mm, md)

        def mj_inverse():
            md.qacc[:] = qacc
            mujoco.mj_inverse(mm, md)
        times["MuJoCo mj_step"].append(best_time(mj_step))
        mj_load(s)
        mujoco.mj_forward(mm, md)
        times["MuJoCo mj_inverse"].append(best_time(mj_inverse))
        load(s)
        res = {}
        for key, model, warm, options in RIGID:
            prev = ws.get(key) if warm else None

            def call():
                res[key] = engine.rigid_inverse(m, d, qacc_des, model=model, warmstart=prev,
                                                **options)
            times[key].append(best_time(call))
            if warm:
                ws[key] = res[key].warmstart
        pivots["warm"].append(res["noslip (warm)"].pivots)
        pivots["cold"].append(res["noslip (cold)"].pivots)
    step_us = 1e6 * np.median(times["forward step"])
    soft_us = 1e6 * np.median(times["soft inverse"])
    mj_us = 1e6 * np.median(times["MuJoCo mj_step"])
    print(f"\n{name}: {len(states)} states, contacts per state median {int(np.median(ncon))} "
          f"(min {min(ncon)}, max {max(ncon)}), nv = {m.nv}")
    print(f"{'':18s} {'median us':>10s} {'/ our step':>11s} {'/ our soft inv':>15s} "
          f"{'/ mj_step':>10s}")
    for key, t in times.items():
        us = 1e6 * np.median(t)
        print(f"{key:18s} {us:10.1f} {us / step_us:11.2f} {us / soft_us:15.2f} "
              f"{us / mj_us:10.2f}")
    print(f"PPM pivots per no-slip call: warm-started mean {np.mean(pivots['warm']):.2f} "
          f"(max {max(pivots['warm'])}), cold mean {np.mean(pivots['cold']):.2f} "
          f"(max {max(pivots['cold'])})")
    return {k: 1e6 * np.median(t) for k, t in times.items()}, pivots


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=200)
    args = parser.parse_args(argv)
    results = {}
    print(f"MuJoCo {mujoco.__version__}; absolute times are noise on a shared machine, the ratios "
          f"are measured side by side")
    for key, title, box, seed in (("go1 sphere feet", "Go1 standing, sphere feet", False, 1),
                                  ("go1 box feet", "Go1 standing, box feet", True, 2)):
        m = go1_torque_model(box_feet=box)
        mm = mujoco.MjModel.from_xml_string(go1_torque_xml(box_feet=box))
        d, states = go1_states(m, args.states, seed)
        results[key] = measure(title, m, mm, d, states)
    m, mm, d, states = humanoid_states(args.states, 3)
    results["humanoid"] = measure("dm_control humanoid lying", m, mm, d, states)
    box = results["go1 box feet"][0]
    ratio = box["noslip (warm)"] / box["forward step"]
    print(f"\nTarget: no-slip at 12+ contacts within 3x the forward step: {ratio:.2f}x "
          f"({'met' if ratio <= 3.0 else 'not met'})")
    return results


if __name__ == "__main__":
    main()

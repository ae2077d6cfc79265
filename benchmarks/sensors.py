"""Cost of the sensors: a forward with and without them (DisableBit.SENSOR), ours and MuJoCo's.

    python benchmarks/sensors.py [--rounds 7] [--calls 2000]

On the dm_control models with the most sensors (humanoid: 34, accelerometers, force and torque
sensors, touch; quadruped: 32, with 20 rangefinders), lying on the floor after a second of
simulation so that contacts and their forces are there. Timings are interleaved in one process
(ours with, ours without, MuJoCo with, MuJoCo without), medians of the rounds; the figures to
read are the ratios, absolute times depend on the machine's load.
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
from engine import DisableBit  # noqa: E402

MODELS = ("humanoid", "quadruped")


def per_call(fn, calls):
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls


def bench(name, rounds, calls):
    import dm_control
    path = str(pathlib.Path(dm_control.__file__).parent / "suite" / f"{name}.xml")
    mm = mujoco.MjModel.from_xml_path(path)
    md = mujoco.MjData(mm)
    m = engine.load_model(path)
    d = engine.make_data(m)
    engine.step(m, d, 500)
    mujoco.mj_step(mm, md, 500)
    flags, mjflags = m.opt.disableflags, mm.opt.disableflags
    off, mjoff = flags | DisableBit.SENSOR, mjflags | int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
    times = {k: [] for k in ("ours", "ours off", "mujoco", "mujoco off")}

    def ours(f):
        m.opt.disableflags = f
        return per_call(lambda: engine.forward(m, d), calls)

    def theirs(f):
        mm.opt.disableflags = f
        return per_call(lambda: mujoco.mj_forward(mm, md), calls)

    for _ in range(rounds):
        times["ours"].append(ours(flags))
        times["ours off"].append(ours(off))
        times["mujoco"].append(theirs(mjflags))
        times["mujoco off"].append(theirs(mjoff))
    t = {k: np.median(v) * 1e6 for k, v in times.items()}
    ours_cost = t["ours"] - t["ours off"]
    mujoco_cost = t["mujoco"] - t["mujoco off"]
    print(f"{name:10s} nsensor {m.nsensor:3d}  ncon {d.ncon:2d}   ours: {t['ours']:7.1f} us with, "
          f"{t['ours off']:7.1f} without (sensors {ours_cost:6.1f} us)   "
          f"MuJoCo: {t['mujoco']:6.1f} / {t['mujoco off']:6.1f} (sensors {mujoco_cost:5.1f} us)   "
          f"sensor cost ours / MuJoCo {ours_cost / max(mujoco_cost, 1e-3):5.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--calls", type=int, default=2000)
    a = p.parse_args()
    for name in MODELS:
        bench(name, a.rounds, a.calls)


if __name__ == "__main__":
    main()

"""Broadphase scaling: collision time for N free spheres scattered in a box (density fixed),
ours against MuJoCo's mj_collision, side by side. The ratio time(1000)/time(100) shows how the
cost grows with the number of geoms (linear: ~10)."""
import time

import mujoco
import numpy as np

import engine
from engine import collision_driver, smooth


def scene(n, rng):
    side = 0.25 * n ** (1 / 3)
    bodies = "".join(
        f'<body pos="{x} {y} {z}"><freejoint/><geom type="sphere" size=".1"/></body>'
        for x, y, z in rng.uniform(0, side, (n, 3)) + [0, 0, 0.1])
    return f'<mujoco><worldbody><geom type="plane" size="50 50 .1"/>{bodies}</worldbody></mujoco>'


def bench(n, reps=200):
    rng = np.random.default_rng(0)
    xml = scene(n, rng)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    d.qpos[:] = m.qpos0
    ms, ds = m._struct, d._struct
    smooth.kinematics(ms, ds)
    collision_driver.ensure_capacity(m, d)
    ms, ds = m._struct, d._struct
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    mujoco.mj_kinematics(mm, dd)
    t_ours = t_mj = 0.0
    for _ in range(reps):
        t0 = time.perf_counter()
        collision_driver.collision(ms, ds)
        t1 = time.perf_counter()
        mujoco.mj_collision(mm, dd)
        t2 = time.perf_counter()
        t_ours += t1 - t0
        t_mj += t2 - t1
    return t_ours / reps, t_mj / reps, d.ncon, dd.ncon


if __name__ == "__main__":
    res = {}
    for n in (100, 300, 1000):
        res[n] = bench(n)
        o, mj, nc, mnc = res[n]
        print(f"N={n:5d}  ours {o * 1e6:9.1f} us  MuJoCo {mj * 1e6:9.1f} us  ratio {o / mj:5.2f}  "
              f"ncon {nc} (MuJoCo {mnc})")
    print(f"time(1000)/time(100): ours {res[1000][0] / res[100][0]:.1f}, "
          f"MuJoCo {res[1000][1] / res[100][1]:.1f}")

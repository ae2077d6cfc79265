"""The paper's Table II (Werling et al., Nimble): the time of all five Jacobians of one
hard-contact step (dq'/dq, dq'/dv, dv'/dq, dv'/dv, dv'/dtau; here also dq'/dctrl and dv'/dctrl)
analytically (engine.hard_contact_grad.step_derivatives) against centered finite differences of
the same step (step_fd), on the paper's four scenes built as MJCF in assets/ (nimble_*.xml),
each at a state with its contacts closed (SCENES below; the tests use the same states).

Times are the best of --repeat calls, measured side by side in one run: only the ratios are
meaningful on a shared machine. "max rel diff" is max |analytical - FD| / (1 + max |FD|) over A,
B and dv'/dtau; "dv'/dq" says whether the position derivatives ran analytically or fell back to
differences of the position stages (a geom pair without analytical contact derivatives).

    python benchmarks/nimble.py [--repeat 5]
"""
import argparse
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import engine  # noqa: E402
from engine import hard_contact as hc  # noqa: E402
from engine import hard_contact_grad as hg  # noqa: E402


def _humanoid(m, d):
    """Standing on both feet (12 contacts), motors off, lowered 1 mm into the ground so that
    every contact penetrates (0.6 mm after the 3 steps): away from the kink of the offset b at
    distance 0, where a contact at rest settles and the step has no derivative (docs/nimble.md)."""
    d.qpos[2] -= 1e-3
    return 3


def _half_cheetah(m, d):
    """Dropped from its initial height, settled on both feet."""
    return 80


def _jumpworm(m, d):
    """Lying on the ground, the two motors bending it (the ends and joints pressed down)."""
    d.ctrl[:] = (1.0, -0.5)
    return 5


def _catapult(m, d):
    """The bat pushing the ball, which rests on the ground (2 contacts)."""
    d.ctrl[:] = (-1.0, -0.3, -0.2)
    return 3


# name: (model file, setup returning the number of steps to take before the state)
SCENES = {"Atlas-like": ("nimble_humanoid.xml", _humanoid),
          "Half Cheetah": ("nimble_half_cheetah.xml", _half_cheetah),
          "Jump-Worm": ("nimble_jumpworm.xml", _jumpworm),
          "Catapult": ("nimble_catapult.xml", _catapult)}


def scene(name):
    """(m, d, warm): the scene's model, its state after the setup's steps and the last clamping
    set (the warm start of the next step)."""
    path, setup = SCENES[name]
    m = engine.load_model(str(ROOT / "assets" / path))
    d = engine.make_data(m)
    state = {}
    for _ in range(setup(m, d)):
        hc.lcp_step(m, d, None, state)
    return m, d, state.get("clamping")


def best_time(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print("TABLE II: Benchmarks against Finite Differencing (all Jacobians of one step)")
    print(f"{'Environment':<14} {'nv':>3} {'contacts':>8} {'Analytical':>11} {'Central Diff.':>14} "
          f"{'Speedup':>8} {'max rel diff':>13} {'dv/dq':>8}")
    for name in SCENES:
        m, d, warm = scene(name)
        an = hg.step_derivatives(m, d, warm=warm)
        fd = hg.step_fd(m, d, warm=warm)
        err = max(np.abs(a - f).max(initial=0.0) / (1.0 + np.abs(f).max(initial=0.0))
                  for a, f in ((an.A, fd.A), (an.B, fd.B), (an.dvdtau, fd.dvdtau)))
        ta = best_time(lambda: hg.step_derivatives(m, d, warm=warm), args.repeat)
        tf = best_time(lambda: hg.step_fd(m, d, warm=warm), args.repeat)
        print(f"{name:<14} {m.nv:>3} {an.info.problem.ncon:>8} {ta * 1e3:>9.2f}ms "
              f"{tf * 1e3:>12.1f}ms {tf / ta:>7.1f}x {err:>13.1e} {an.position:>8}")


if __name__ == "__main__":
    main()

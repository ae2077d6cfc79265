"""Jacobians of the hard-contact step: analytical (engine.hard_contact_grad.step_derivatives)
beside centered finite differences of the same step (step_fd), timed in one run on the scenes
of tests/test_hard_contact.py (the paper's Table II compares the same two on its own scenes).

Both compute all of A = d(q', v')/d(q, v), B = d(q', v')/d ctrl and dv'/d qfrc_applied. Times
are the best of --repeat calls; only the ratio is meaningful on a shared machine. The
analytical dv'/dq still differences the position stages (no LCP solve), see the module's
docstring: that block, not the LCP, dominates the analytical time.

    python benchmarks/nimble.py [--repeat 5]
"""
import argparse
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from engine import hard_contact_grad as hg  # noqa: E402
from test_hard_contact import CASES, _settled  # noqa: E402


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
    print(f"{'scene':<18} {'nv':>3} {'ncon':>4} {'analytical':>11} {'centered FD':>12} "
          f"{'speed-up':>9} {'max |diff|':>11}")
    for name, (xml, setup, kw) in CASES.items():
        m, d, warm = _settled(xml, setup, **kw)
        an = hg.step_derivatives(m, d, warm=warm)
        fd = hg.step_fd(m, d, warm=warm)
        err = max(np.abs(an.A - fd.A).max(), np.abs(an.B - fd.B).max(initial=0.0))
        ta = best_time(lambda: hg.step_derivatives(m, d, warm=warm), args.repeat)
        tf = best_time(lambda: hg.step_fd(m, d, warm=warm), args.repeat)
        print(f"{name:<18} {m.nv:>3} {int(d.ncon):>4} {ta * 1e3:>9.3f}ms {tf * 1e3:>10.3f}ms "
              f"{tf / ta:>8.2f}x {err:>11.2e}")


if __name__ == "__main__":
    main()

"""The runner's live forward-vs-inverse check (studio.consistency), without a window: with the
NEWTON solver converged, the inverse dynamics at each pre-step state recovers the applied force
of the step and the forward's constraint forces (the identity of Todorov 2014, section IV)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import engine
from studio.runner import Runner

ROOT = Path(__file__).resolve().parent.parent


def test_live_inverse_residual_is_tiny_on_the_single_joint():
    m = engine.load_model(str(ROOT / "assets" / "single_joint.xml"))
    m.opt.solver = engine.Solver.NEWTON
    m.opt.iterations = 100
    m.opt.tolerance = 1e-15
    d = engine.make_data(m)
    engine.forward(m, d)
    r = Runner(m, d)
    r.set_inverse_check(True)                  # not threaded: applied at once
    rng = np.random.default_rng(3)
    for _ in range(40):                        # random torques, held for 5 steps each
        d.ctrl[:] = rng.uniform(-6, 6, m.nu)
        r.step_n(5)
    t, force, impulse = r.inverse_check.series()
    assert len(t) == 200 and np.all(np.diff(t) > 0)
    # both impulses of the mechanism were active (friction loss always, the contact mostly)
    assert r.inverse_check.di.nefc >= 1
    assert np.all(np.isfinite(force)) and np.all(np.isfinite(impulse))
    assert force.max() < 1e-8
    assert impulse.max() < 1e-6
    assert impulse.max() > 0.0 or force.max() > 0.0     # the check computed something


def test_live_inverse_detects_an_inconsistent_step():
    """A step whose applied force the check is not told about (qfrc_applied changed after the
    pre-step copy) shows a large force residual: the check can fail."""
    m = engine.load_model(str(ROOT / "assets" / "single_joint.xml"))
    m.opt.solver = engine.Solver.NEWTON
    m.opt.tolerance = 1e-15
    d = engine.make_data(m)
    engine.forward(m, d)
    r = Runner(m, d)
    r.set_inverse_check(True)
    check = r.inverse_check
    check.before(m, d)
    d.qfrc_applied[:] = 3.0                    # after the copy: the inverse sees another state
    engine.step(m, d)
    d.qfrc_smooth[:] -= 3.0                    # and the expected force omits it
    force, _ = check.after(m, d)
    assert force > 1e-3


def test_inverse_check_off_by_default_and_switches_off():
    m = engine.load_model(str(ROOT / "assets" / "single_joint.xml"))
    d = engine.make_data(m)
    engine.forward(m, d)
    r = Runner(m, d)
    assert r.inverse_check is None
    r.set_inverse_check(True)
    r.step_n(3)
    assert r.inverse_check.n == 3
    r.set_inverse_check(False)
    assert r.inverse_check is None

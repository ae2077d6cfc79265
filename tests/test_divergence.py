"""Divergence and capacity: bad values are detected after each step, counted in d.warning and
recovered by a reset, with every solver and integrator and with contacts; bad options are
refused; contacts that outgrow the capacities inside a multi-stage integrator redo the step."""
import numpy as np
import pytest

import engine
from engine.enums import Warning

BALLS = """
<mujoco>
  <option timestep="0.01" integrator="{integrator}" solver="{solver}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 0.1"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
    <body pos="0.5 0 {z2}"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
  </worldbody>
</mujoco>
"""
INTEGRATORS = ["Euler", "RK4", "implicit", "implicitfast", "explicit", "midpoint", "interleave"]


def balls(integrator="Euler", solver="PGS", z2=0.1):
    m = engine.load_model_from_string(BALLS.format(integrator=integrator, solver=solver, z2=z2))
    return m, engine.make_data(m)


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_nan_force_on_a_contact_is_detected_and_recovered(solver, integrator):
    m, d = balls(integrator, solver)
    engine.step(m, d, 20)
    assert d.ncon == 2 and d.warning.sum() == 0
    d.xfrc_applied[1, 2] = np.nan           # the solver sees NaN through v^
    engine.step(m, d)
    assert d.warning[Warning.BADQACC] == 1
    assert np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))
    np.testing.assert_allclose(d.xfrc_applied, 0.0)            # the reset clears the inputs
    assert d.time == pytest.approx(m.opt.timestep)             # one step from the reset state
    engine.step(m, d, 50)                                       # and the simulation goes on
    assert d.ncon == 2 and d.warning[Warning.BADQACC] == 1
    assert np.all(np.isfinite(d.efc_force[:d.nefc]))


def test_a_bad_value_that_survives_the_reset_leaves_the_reset_state():
    m, d = balls()
    m.opt.gravity[2] = np.nan                # every forward is bad, even after the reset
    engine.step(m, d, 5)
    assert d.warning[Warning.BADQACC] == 5
    np.testing.assert_array_equal(d.qpos, m.qpos0)
    assert d.time == 0.0 and np.all(d.qvel == 0.0)
    m.opt.gravity[2] = -9.81                 # repaired: the simulation runs again
    engine.step(m, d, 5)
    assert d.time == pytest.approx(5 * m.opt.timestep)
    assert d.warning[Warning.BADQACC] == 5


@pytest.mark.parametrize("name, value", [("kappa", 0.0), ("kappa", np.nan), ("rmin", 0.0),
                                         ("epsilon", -0.1), ("timestep", -0.01),
                                         ("impratio", 0.0), ("tolerance", np.inf),
                                         ("iterations", -1)])
def test_bad_options_are_refused(name, value):
    m, _ = balls()
    before = getattr(m.opt, name)
    with pytest.raises(ValueError, match=name):
        setattr(m.opt, name, value)
    assert getattr(m.opt, name) == before


@pytest.mark.parametrize("integrator", ["RK4", "midpoint"])
def test_contacts_outgrowing_the_capacity_within_a_step_redo_it(integrator):
    """The second ball is still above the floor at the start of the step and touches it in a
    later stage of the integrator: with room for one contact only, that stage overflows. The
    step is undone, the capacities grow and the step is taken again: the result equals the
    one with room to spare. (The interleaved integrator detects contacts at the start of the
    step only, where the first forward already checks the capacity.)"""
    h = 0.01
    results = []
    for nconmax in (1, 16):
        m, _ = balls(integrator, z2=0.1 + 0.25 * 2.0 * h)
        d = engine.Data(m, nconmax=nconmax, njmax=3 if nconmax == 1 else 64)
        engine.reset_data(m, d)
        d.qpos[7:10] = [0.5, 0.0, 0.1 + 0.25 * 2.0 * h]
        d.qvel[8] = -2.0                       # reaches the floor within the step
        engine.forward(m, d)
        assert d.ncon == 1                  # only the resting ball at the start
        engine.step(m, d)
        results.append((d.qpos.copy(), d.qvel.copy(), d.time, d.nconmax))
    assert results[0][3] > 1                   # the capacity grew
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2] == pytest.approx(h)

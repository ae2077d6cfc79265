"""Constraint rows against MuJoCo (Jacobians and violations, which both engines define the same
way), and the softness behaviour the paper predicts: limits hold, violations decay with time
constant kappa, friction loss stops a pendulum where gravity falls below it, loops stay closed."""
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from engine import DisableBit
from engine.enums import ConstraintType as CT

DATA = pathlib.Path(__file__).parent / "data"


def random_state(mm, rng):
    qpos = mm.qpos0 + 0.3 * rng.standard_normal(mm.nq)
    for j in range(mm.njnt):
        a = mm.jnt_qposadr[j]
        if mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a + 3:a + 7] /= np.linalg.norm(qpos[a + 3:a + 7])
        elif mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
    return qpos, rng.standard_normal(mm.nv)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("model", ["compiler_constraints", "ball_limits"])
def test_rows_match_mujoco(seed, model):
    """Equality (connect, weld, joint, tendon), friction-loss and limit rows (hinge, slide, ball
    cone, tendon): same order, same Jacobian, same violation as MuJoCo's efc_J and efc_pos."""
    path = str(DATA / f"{model}.xml")
    mm = mujoco.MjModel.from_xml_path(path)
    mm.opt.disableflags = int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    m = engine.load_model(path)
    m.opt.disableflags = DisableBit.CONTACT
    md, d = mujoco.MjData(mm), engine.make_data(m)
    qpos, qvel = random_state(mm, np.random.default_rng(seed))
    md.qpos[:], md.qvel[:] = qpos, qvel
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(mm, md)
    engine.forward(m, d)
    n = d.nefc[0]
    assert n == md.nefc
    J = np.zeros((md.nefc, mm.nv))
    mujoco.mju_sparse2dense(J, md.efc_J, md.efc_J_rownnz, md.efc_J_rowadr, md.efc_J_colind) \
        if mujoco.mj_isSparse(mm) else J.__setitem__(slice(None), md.efc_J.reshape(md.nefc, mm.nv))
    kinds = {int(mujoco.mjtConstraint.mjCNSTR_EQUALITY): CT.EQUALITY,
             int(mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF): CT.FRICTION_DOF,
             int(mujoco.mjtConstraint.mjCNSTR_FRICTION_TENDON): CT.FRICTION_TENDON,
             int(mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT): CT.LIMIT_JOINT,
             int(mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON): CT.LIMIT_TENDON}
    np.testing.assert_array_equal(d.efc_type[:n], [kinds[t] for t in md.efc_type])
    np.testing.assert_array_equal(d.efc_id[:n], md.efc_id)
    for i in range(n):
        scale = max(1.0, np.abs(J[i]).max())
        np.testing.assert_allclose(d.efc_J[i], J[i], atol=1e-9 * scale, err_msg=f"row {i}")
        if d.efc_type[i] != CT.EQUALITY or i < 3:
            np.testing.assert_allclose(d.efc_pos[i], md.efc_pos[i], atol=1e-9, err_msg=f"row {i}")


PENDULUM = """
<mujoco>
  <option timestep="{h}" solver="{solver}" epsilon="{eps}" kappa="{kappa}" gravity="0 0 -9.81"/>
  <worldbody>
    <body pos="0 0 2">
      <joint name="hinge" axis="0 1 0" {joint}/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
def test_limit_holds_and_violation_decays_with_kappa(solver):
    """Gravity presses the pendulum into its upper limit. From a violation x0 at rest the
    violation x = hi - q follows the critically damped x'' + 2 x' / kappa + x / kappa^2 =
    eps a / (1 + eps) (paper eq. 26 with R = eps A, exact for one hinge):
    x(t) = x_eq + (x0 - x_eq) (1 + t / kappa) exp(-t / kappa), x_eq = kappa^2 eps a / (1 + eps)."""
    kappa, eps = 0.05, 0.01
    m = engine.load_model_from_string(PENDULUM.format(h=0.001, solver=solver, eps=eps,
                                                      kappa=kappa, joint='range="-20 20"'))
    d = engine.make_data(m)
    hi = np.radians(20)
    x0 = -0.02
    d.qpos[0] = hi - x0
    engine.forward(m, d)
    inertia = engine.full_inertia(m, d)[0, 0]
    a = -1.0 * 9.81 * 0.25 * np.cos(hi) / inertia       # pushes x negative
    x_eq = kappa ** 2 * eps * a / (1 + eps)
    times, xs = [], []
    for _ in range(400):
        engine.step(m, d)
        times.append(d.time)
        xs.append(hi - d.qpos[0])
    times, xs = np.array(times), np.array(xs)
    predicted = x_eq + (x0 - x_eq) * (1 + times / kappa) * np.exp(-times / kappa)
    assert np.abs(xs - predicted).max() < 0.05 * abs(x0)
    engine.step(m, d, 1000)                              # settled: t = 28 kappa
    assert hi - d.qpos[0] == pytest.approx(x_eq, rel=0.02)
    assert d.efc_force[0] > 0


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
def test_friction_loss_stops_where_gravity_falls_below(solver):
    eta = 1.5
    m = engine.load_model_from_string(PENDULUM.format(h=0.002, solver=solver, eps=0.01,
                                                      kappa=0.02,
                                                      joint=f'frictionloss="{eta}"'))
    d = engine.make_data(m)

    def gravity_torque(q):
        return 1.0 * 9.81 * 0.25 * np.cos(q)

    # released where gravity exceeds eta: it swings and comes to rest inside the band
    # |gravity torque| <= eta (where exactly depends on the swing)
    d.qpos[0] = -0.5
    assert gravity_torque(d.qpos[0]) > eta
    engine.step(m, d, 3000)
    assert abs(d.qvel[0]) < 0.05
    assert gravity_torque(d.qpos[0]) <= eta * 1.02
    # released at rest where gravity is below eta: it stays, up to the soft model's creep
    # (velocity ~ eps kappa a / 2, paper section V)
    engine.reset_data(m, d)
    d.qpos[0] = np.arccos(0.8 * eta / (9.81 * 0.25))
    q0 = d.qpos[0]
    engine.step(m, d, 500)
    assert abs(d.qpos[0] - q0) < 0.01
    # and where it exceeds eta it accelerates at (gravity torque - eta) / I
    engine.reset_data(m, d)
    d.qpos[0] = q0 = -0.5
    engine.forward(m, d)
    inertia = engine.full_inertia(m, d)[0, 0]
    engine.step(m, d, 10)
    expected = (gravity_torque(q0) - eta) / inertia
    assert d.qvel[0] / d.time == pytest.approx(expected, rel=0.05)


FOURBAR = """
<mujoco>
  <!-- a linkage in a horizontal plane: the joint axes are vertical (gravity along -y), the
       links overlap at the joints without colliding -->
  <option timestep="0.002" solver="{solver}" gravity="0 -9.81 0">
    <flag contact="disable"/>
  </option>
  <worldbody>
    <body name="crank" pos="0 0 1">
      <joint name="drive" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
      <body name="coupler" pos="0.2 0 0">
        <joint axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.5 0 0.3" size="0.02"/>
      </body>
    </body>
    <body name="rocker" pos="0.6 0 1">
      <joint axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.1 0 0.3" size="0.02"/>
    </body>
  </worldbody>
  <equality>
    <connect body1="coupler" body2="rocker" anchor="0.5 0 0.3"/>
  </equality>
  <actuator>
    <motor joint="drive" gear="1"/>
  </actuator>
</mujoco>
"""


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
def test_four_bar_linkage_stays_closed(solver):
    m = engine.load_model_from_string(FOURBAR.format(solver=solver))
    d = engine.make_data(m)
    worst = 0.0
    for k in range(1500):
        d.ctrl[0] = 0.2 * np.sin(2 * np.pi * d.time)
        engine.step(m, d)
        # closure error: the anchor on the coupler against the rocker's tip
        p1 = d.xpos[2] + d.xmat[2].reshape(3, 3) @ [0.5, 0, 0.3]
        p2 = d.xpos[3] + d.xmat[3].reshape(3, 3) @ [0.1, 0, 0.3]
        if k > 100:
            worst = max(worst, np.linalg.norm(p1 - p2))
    assert worst < 1e-3
    assert np.ptp(d.qpos) > 0   # it moved

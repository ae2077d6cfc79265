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
from mj_adapter import random_qpos

DATA = pathlib.Path(__file__).parent / "data"


def random_state(mm, rng):
    qpos = random_qpos(mm, rng, 0.3)
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
    n = d.nefc
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


# ------------------------------------------------------------------------------------------------
# hard equality constraints (paper section II.C: the limit R_E -> 0)
# ------------------------------------------------------------------------------------------------
HANGING = """
<mujoco>
  <option timestep="0.002" solver="{solver}" epsilon="0.1" kappa="0.02"/>
  <worldbody>
    <body name="box" pos="0 0 1"><freejoint/><geom type="box" size="0.1 0.2 0.3" mass="{mass}"/>
    </body>
  </worldbody>
  <equality><connect body1="box" anchor="0 0 0" {hard}/></equality>
</mujoco>
"""


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
def test_hard_connect_does_not_sag(solver):
    """A box hangs by its centre from a connect. Soft, it sags kappa^2 eps g / (1 + eps)
    (eq. 26, A = 1/m exactly here); hard (R_E = 0, the paper's limit formulas) it holds the
    anchor exactly and carries the weight."""
    for mass in (0.5, 20.0):
        sags = {}
        for hard in ("", 'hard="true"'):
            m = engine.load_model_from_string(HANGING.format(solver=solver, mass=mass,
                                                             hard=hard))
            assert list(m.eq_hard) == [bool(hard)]
            d = engine.make_data(m)
            engine.step(m, d, 1000)
            sags[hard] = 1.0 - d.qpos[2]
        assert sags[""] == pytest.approx(0.02 ** 2 * 0.1 * 9.81 / 1.1, rel=0.01)
        assert abs(sags['hard="true"']) < 1e-9
        engine.forward(m, d)
        assert np.all(d.efc_R[:3] == 0.0) and np.all(d.efc_hard[:3] == 1)
        np.testing.assert_allclose(d.efc_force[:3], [0, 0, mass * 9.81], rtol=1e-9, atol=1e-9)


def _dense_J(m, d):
    n = d.nefc
    return d.efc_J[:n].copy(), n


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
def test_hard_equality_equals_constrained_gauss_principle(solver):
    """One step of the hard four-bar (a singular A_E: the connect's row along the hinge axes is
    zero) against problem (4) solved with numpy on the null space of J_E:
    min 1/2 (v' - u)' M (v' - u) s.t. J_E v' = v*_E, v*_E = J v - h (2/kappa J v + x/kappa^2)
    (eq. 24, 28 with eps -> 0); the impulse from M (v' - u) = J_E' f_E (least norm)."""
    from scipy.linalg import null_space
    xml = FOURBAR.format(solver=solver).replace('anchor="0.5 0 0.3"/>',
                                                'anchor="0.5 0 0.3" hard="true"/>')
    xml = xml.replace('damping="0.1"', "")      # no implicit damping: M is the step's inertia
    m = engine.load_model_from_string(xml)
    m.opt.iterations = 3
    d = engine.make_data(m)
    rng = np.random.default_rng(3)
    d.qpos[:] = m.qpos0 + 0.05 * rng.standard_normal(m.nq)     # violated loop
    d.qvel[:] = rng.standard_normal(m.nv)
    d.ctrl[0] = 0.3
    engine.forward(m, d)
    h, kappa = m.opt.timestep, max(m.opt.kappa, 2 * m.opt.timestep)
    J, n = _dense_J(m, d)
    assert n == 3
    M = engine.full_inertia(m, d)
    u = d.qvel + h * np.linalg.solve(M, d.qfrc_smooth)
    Jv = J @ d.qvel
    vstar = Jv - h * (2 / kappa * Jv + d.efc_pos[:n] / kappa ** 2)
    v0 = np.linalg.lstsq(J, vstar, rcond=None)[0]
    N = null_space(J)
    z = np.linalg.solve(N.T @ M @ N, N.T @ M @ (u - v0))
    v_oracle = v0 + N @ z
    f_oracle = np.linalg.lstsq(J.T, M @ (v_oracle - u), rcond=None)[0]
    v_next = d.qvel + h * d.qacc
    np.testing.assert_allclose(v_next, v_oracle, atol=1e-9 * np.abs(v_oracle).max())
    np.testing.assert_allclose(d.efc_force[:n] * h, f_oracle, atol=1e-8 * np.abs(f_oracle).max())
    np.testing.assert_allclose(J @ v_next, vstar, atol=1e-10)


HARD_BOXES = """
<mujoco>
  <option timestep="0.005" solver="{solver}" iterations="{it}" tolerance="{tol}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body name="a" pos="0 0 0.098"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body name="b" pos="0.25 0.02 0.3" euler="10 20 30"><freejoint/>
      <geom type="box" size="0.1 0.05 0.1"/></body>
  </worldbody>
  <equality>
    <connect body1="a" body2="b" anchor="0.12 0 0.1" hard="true"/>
    <weld body1="b" {weld}/>
  </equality>
</mujoco>
"""


@pytest.mark.parametrize("weld", ['hard="true"', 'epsilon="0.05"'])
def test_hard_rows_pgs_matches_newton_and_holds_exactly(weld):
    """Hard connect (and weld) with contacts: PGS eliminates the hard rows and reaches Newton's
    optimum (KKT steps on J_E v' = v*_E); with 3 sweeps PGS already satisfies J_E v' = v*_E."""
    out = []
    for solver, it, tol in (("Newton", 100, 1e-14), ("PGS", 20000, 0.0), ("PGS", 3, 0.0)):
        m = engine.load_model_from_string(HARD_BOXES.format(solver=solver, it=it, tol=tol,
                                                            weld=weld))
        d = engine.make_data(m)
        d.qvel[:] = np.linspace(-1, 1, m.nv)
        engine.forward(m, d)
        n = d.nefc
        assert d.ncon > 0
        hard = d.efc_hard[:n].astype(bool)
        assert hard.sum() == (9 if "hard" in weld else 3)
        v_next = d.qvel + m.opt.timestep * d.qacc
        np.testing.assert_allclose(d.efc_J[:n][hard] @ v_next, d.efc_vstar[:n][hard],
                                   atol=1e-10)
        # force balance of the step: M (v' - v) = h (qfrc_smooth + qfrc_constraint)
        M = engine.full_inertia(m, d)
        np.testing.assert_allclose(M @ (v_next - d.qvel),
                                   m.opt.timestep * (d.qfrc_smooth + d.qfrc_constraint),
                                   atol=1e-9)
        out.append((d.qacc.copy(), d.efc_force[:n].copy()))
    scale = np.abs(out[0][0]).max()
    np.testing.assert_allclose(out[1][0], out[0][0], atol=1e-6 * scale)
    fscale = np.abs(out[0][1]).max()
    np.testing.assert_allclose(out[1][1], out[0][1], atol=1e-6 * fscale)


# ------------------------------------------------------------------------------------------------
# exact critical damping (the variant after eq. 28)
# ------------------------------------------------------------------------------------------------
SPHERE = """
<mujoco>
  <option timestep="0.002" stabilization="{stab}" epsilon="0.3" kappa="0.03"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" condim="1"/>
    <body pos="0 0 0.045"><freejoint/>
      <geom type="capsule" fromto="-0.2 0 0 0.2 0 0.1" size="0.05" condim="1" mass="2"/></body>
  </worldbody>
</mujoco>
"""


def test_exact_stabilization_single_contact():
    """One frictionless contact (at the low end of a tilted capsule): A is the scalar
    J M^-1 J' (computed here with numpy), so B = 2 (1 + R / A) / kappa,
    K = (1 + R / A) / kappa^2 and v* = Jv - h B Jv - h K x."""
    m = engine.load_model_from_string(SPHERE.format(stab="exact"))
    assert m.opt.stabilization == engine.Stabilization.EXACT
    d = engine.make_data(m)
    d.qvel[:6] = [0.2, -0.1, -0.3, 1.0, 0.5, -0.2]
    engine.forward(m, d)
    assert d.nefc == 1
    J = d.efc_J[0]
    A = J @ np.linalg.solve(engine.full_inertia(m, d), J)
    R, h, kappa = d.efc_R[0], m.opt.timestep, m.opt.kappa
    B, K = 2 * (1 + R / A) / kappa, (1 + R / A) / kappa ** 2
    v = J @ d.qvel
    x = d.efc_pos[0] - d.efc_margin[0]
    assert d.efc_vstar[0] == pytest.approx(v - h * B * v - h * K * x, rel=1e-10)
    # the diagonal variant (28) assumes R / A = eps: different here, A > 1 / mass
    md = engine.load_model_from_string(SPHERE.format(stab="diagonal"))
    dd = engine.make_data(md)
    dd.qpos[:], dd.qvel[:] = d.qpos, d.qvel
    engine.forward(md, dd)
    assert dd.efc_B[0] == pytest.approx(2 * 1.3 / kappa)
    assert abs(B - dd.efc_B[0]) > 0.05 * B


ARM = """
<mujoco>
  <option timestep="0.001" gravity="0 0 0" stabilization="{stab}" epsilon="{eps}" kappa="0.05"
          solver="Newton" tolerance="1e-14"/>
  <worldbody>
    <body>
      <joint name="j1" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03" mass="1"/>
      <body pos="0.5 0 0">
        <joint name="j2" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.6 0 0" size="0.05" mass="4"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint joint1="j1" polycoef="0.01 0 0 0 0"/>
    <joint joint1="j2" polycoef="-0.02 0 0 0 0"/>
  </equality>
  <keyframe><key qpos="0 1.2"/></keyframe>
</mujoco>
"""


def _arm_trajectory(stab, eps, steps):
    m = engine.load_model_from_string(ARM.format(stab=stab, eps=eps))
    d = engine.make_data(m)
    engine.reset_keyframe(m, d, 0)
    m.qpos0[:] = d.qpos                     # the equalities hold q - q0 at the offsets
    xs = []
    for _ in range(steps):
        engine.forward(m, d)
        xs.append(d.efc_pos[:2].copy())
        engine.step(m, d)
    return m, np.array(xs)


@pytest.mark.parametrize("eps", [0.01, 1.0])
def test_exact_stabilization_is_critically_damped_for_coupled_rows(eps):
    """Two joint equalities on a two-link arm couple through M^-1 (A is not diagonal). With
    exact B, K and no other forces (a = 0), (25) gives every row the critically damped step
    x'_{k+1} = x'_k - h (2 x'_k / kappa + x_k / kappa^2), x_{k+1} = x_k + h x'_{k+1}: iterated
    here independently with numpy, from the initial violation at rest. The diagonal variant
    follows it only up to the coupling."""
    steps, h, kappa = 400, 0.001, 0.05
    m, xs = _arm_trajectory("exact", eps, steps)
    x, xd = xs[0].copy(), np.zeros(2)
    oracle = [x.copy()]
    for _ in range(steps - 1):
        xd = xd - h * (2 * xd / kappa + x / kappa ** 2)
        x = x + h * xd
        oracle.append(x.copy())
    oracle = np.array(oracle)
    x0 = np.abs(xs[0]).max()
    err = np.abs(xs - oracle).max()
    assert err < 2e-3 * x0
    assert np.all(np.sign(xs) == np.sign(xs[0]))           # no overshoot
    _, xs_diag = _arm_trajectory("diagonal", eps, steps)
    if eps == 1.0:
        assert np.abs(xs_diag - oracle).max() > 10 * err


# ------------------------------------------------------------------------------------------------
# solref / solimp mapping against MuJoCo
# ------------------------------------------------------------------------------------------------
REST = """
<mujoco>
  <option timestep="0.002" cone="elliptic"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" solref="{ref}" solimp="{imp}"/>
    <body pos="0 0 0.1"><freejoint/>
      <geom type="sphere" size="0.1" mass="3" solref="{ref}" solimp="{imp}"/></body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("ref, imp", [("0.03 1", "0.95 0.95 0.001 0.5 2"),
                                      ("-2500 -100", "0.9 0.9 0.001 0.5 2"),
                                      ("-400 -40", "0.8 0.8 0.001 0.5 2"),
                                      ("0.02 1", "0.9 0.95 0.001 0.5 2"),
                                      ("0.01 0.6", "0.5 0.99 0.004 0.3 3"),
                                      ("-3000 -60", "0.7 0.95 0.01 0.5 1")])
def test_solref_solimp_mapping_matches_mujoco(ref, imp):
    """Standard and direct solref, flat and position-dependent solimp, damping ratios other
    than 1: the resting penetration and the settling equal MuJoCo's."""
    xml = REST.format(ref=ref, imp=imp)
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    assert not [w for w in m.warnings if "solref" in w or "solimp" in w]
    for k in range(600):
        mujoco.mj_step(mm, md)
        engine.step(m, d)
        assert d.qpos[2] == pytest.approx(md.qpos[2], abs=2e-3 * 0.1)
    assert 0.1 - d.qpos[2] == pytest.approx(0.1 - md.qpos[2], rel=0.01)


IMPEDANCE = """
<mujoco>
  <option timestep="0.002" cone="elliptic"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" solimp="0.8 0.99 0.01 0.3 3" solref="0.01 0.5"/>
    <body pos="0 0 0.12"><freejoint/>
      <geom type="sphere" size="0.1" mass="3" solimp="0.85 0.97 0.02 0.6 1.5"/></body>
    <body pos="1 0 1">
      <joint type="hinge" axis="0 1 0" range="-0.3 0.3" solimplimit="0.7 0.98 0.05 0.4 2.5"
             solreflimit="0.03 0.7" frictionloss="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <body pos="0 0 -0.5">
        <joint type="slide" axis="1 0 0" range="-0.05 0.05" solreflimit="-2000 -50"
               solimplimit="0.9 0.99 0.02"/>
        <geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/>
      </body>
    </body>
    <body name="b2" pos="2 0 1"><freejoint/>
      <geom type="box" size="0.1 0.1 0.1" contype="0" conaffinity="0"/></body>
    <body name="b3" pos="2.5 0 1"><freejoint/>
      <geom type="box" size="0.1 0.1 0.1" contype="0" conaffinity="0"/></body>
  </worldbody>
  <equality>
    <connect body1="b2" anchor="0.1 0 0.3" solimp="0.7 0.95 0.05 0.5 2" solref="0.04 0.8"/>
    <weld body1="b3" solimp="0.6 0.9 0.1 0.5 2" solref="0.05 1.2"/>
  </equality>
</mujoco>
"""


def test_impedance_matches_mujoco():
    """At MuJoCo's states, every row's impedance d(x) and d'(x), R, B and K d(x) equal
    MuJoCo's (efc_KBIP): a contact whose geoms mix two solimp and a damping ratio, limits with
    standard and direct solref, friction loss, a connect and a weld (the norm of their
    violations); and the reference acceleration of the rows other than the connect's and the
    weld's (MuJoCo 4 adds a Jdot v term to those)."""
    mm = mujoco.MjModel.from_xml_string(IMPEDANCE)
    md = mujoco.MjData(mm)
    m = engine.load_model_from_string(IMPEDANCE)
    d = engine.make_data(m)
    md.qvel[:] = np.random.default_rng(0).normal(size=mm.nv) * 0.5
    checked = 0
    for k in range(150):
        mujoco.mj_step(mm, md)
        if k % 10:
            continue
        d.qpos[:], d.qvel[:] = md.qpos, md.qvel
        engine.forward(m, d)
        mujoco.mj_forward(mm, md)
        n = d.nefc
        assert n == md.nefc and np.array_equal(d.efc_type[:n], md.efc_type)
        K, B, imp, dimp = md.efc_KBIP.T
        np.testing.assert_allclose(d.efc_imp[:n, 0], imp, rtol=1e-12)
        np.testing.assert_allclose(d.efc_imp[:n, 1], dimp, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(d.efc_R[:n], md.efc_R, rtol=1e-9)
        np.testing.assert_allclose(d.efc_B[:n], B, rtol=1e-12)
        np.testing.assert_allclose(d.efc_K[:n], K * imp, rtol=1e-12)
        other = md.efc_type != mujoco.mjtConstraint.mjCNSTR_EQUALITY
        aref = (d.efc_vstar[:n] - d.efc_vel[:n]) / m.opt.timestep
        np.testing.assert_allclose(aref[other], md.efc_aref[other], rtol=1e-9,
                                   atol=1e-9 * np.abs(md.efc_aref).max())
        checked += int(np.count_nonzero(dimp))
    assert checked > 10          # rows inside their impedance's width were compared


FRICTION_R = """
<mujoco>
  <option timestep="0.002" cone="elliptic" impratio="10"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body pos="0 0 0.1"><freejoint/>
      <geom name="s3" size="0.1" mass="1" friction="0.7 0.005 0.0001"/></body>
    <body pos="1 0 0.1"><freejoint/>
      <geom size="0.1" mass="2" condim="4" friction="0.9 0.02 0.001"/></body>
    <body pos="2 0 0.1"><freejoint/>
      <geom size="0.1" mass="3" condim="6" friction="0.8 0.02 0.01"/></body>
  </worldbody>
  <contact>
    <pair geom1="floor" geom2="s3" condim="3" friction="1 0.3 0.005 0.0001 0.0001"/>
  </contact>
</mujoco>
"""


def test_friction_regularisers_match_mujoco():
    """The friction rows' R of (22) with r_F chosen as MuJoCo's (the sliding row's (27) over
    impratio, r_j mu_j^2 the same on every row), for anisotropic sliding friction (condim 3
    pair), torsion (condim 4) and rolling (condim 6): spheres rolling and spinning on a plane,
    whose normals pass through their centres (no lever arm in the normal's R either), so that
    every row's R equals MuJoCo's at its states."""
    mm = mujoco.MjModel.from_xml_string(FRICTION_R)
    md = mujoco.MjData(mm)
    m = engine.load_model_from_string(FRICTION_R)
    d = engine.make_data(m)
    qvel = np.random.default_rng(1).normal(size=(3, 6))
    qvel[:, 2] = 0.0                    # sliding and spinning, not lifting off
    md.qvel[:] = qvel.ravel()
    seen = {3: 0, 4: 0, 6: 0}
    for _ in range(10):
        mujoco.mj_step(mm, md, nstep=10)
        d.qpos[:], d.qvel[:] = md.qpos, md.qvel
        engine.forward(m, d)
        mujoco.mj_forward(mm, md)
        assert sorted(d.contact_dim[:d.ncon]) == sorted(md.contact.dim)
        for c in range(d.ncon):
            mc = list(md.contact.geom2).index(d.contact_geom2[c])
            a, b = d.contact_efc_address[c], md.contact.efc_address[mc]
            dim = d.contact_dim[c]
            np.testing.assert_allclose(d.efc_R[a:a + dim], md.efc_R[b:b + dim], rtol=1e-9)
            # the cone is circular in the metric of R: r_j mu_j^2 the same on every row
            mu = md.contact.friction[mc, :dim - 1]
            np.testing.assert_allclose(d.efc_R[a + 1:a + dim] * mu ** 2,
                                       d.efc_R[a + 1] * mu[0] ** 2, rtol=1e-12)
            seen[dim] += 1
    assert min(seen.values()) >= 5          # (the rolling sphere hops now and then)


def test_softness_mapping():
    """solimp becomes epsilon (at d0) and the impedance shape, solref kappa and the damping
    ratio; a direct solref without damping and a mixed one are reported."""
    m = engine.load_model_from_string(REST.format(ref="0.03 0.5", imp="0.9 0.95 0.001 0.5 2"))
    assert not m.warnings
    assert m.geom_kappa[1] == pytest.approx(0.03)
    assert m.geom_dampratio[1] == pytest.approx(0.5)
    assert m.geom_epsilon[1] == pytest.approx(0.1 / 0.9)
    np.testing.assert_allclose(m.geom_impedance[1], [0.05 / 0.95, 0.001, 0.5, 2])
    m = engine.load_model_from_string(REST.format(ref="-1000 -10", imp="0.8 0.9 0 0.5 2"))
    assert m.geom_kappa[1] == pytest.approx(0.2)                  # 2 / damping
    assert m.geom_dampratio[1] == pytest.approx(10 / (2 * np.sqrt(1000)))
    assert m.geom_epsilon[1] == pytest.approx(0.15 / 0.85)          # flat: mean impedance
    assert m.geom_impedance[1, 1] == 0
    m = engine.load_model_from_string(REST.format(ref="-1000 0", imp="0.9 0.9 0 0.5 2"))
    assert any("without damping" in w for w in m.warnings)
    assert m.geom_kappa[1] == pytest.approx(1 / np.sqrt(1000))
    m = engine.load_model_from_string(REST.format(ref="-1000 10", imp="0.9 0.9 0 0.5 2"))
    assert any("mixes" in w for w in m.warnings)
    assert m.geom_kappa[1] == -1
    # no solimp anywhere: the option's impedance, MuJoCo's default solimp
    m = engine.load_model_from_string("<mujoco><worldbody><geom size='1'/></worldbody></mujoco>")
    assert m.opt.epsilon == pytest.approx(0.1 / 0.9)
    np.testing.assert_allclose(m.opt.impedance, [0.05 / 0.95, 0.001, 0.5, 2])
    assert m.geom_impedance[0, 1] < 0 and m.geom_epsilon[0] < 0


def test_inverse_refuses_hard_equality():
    m = engine.load_model_from_string(HANGING.format(solver="PGS", mass=1, hard='hard="true"'))
    d = engine.make_data(m)
    engine.forward(m, d)
    with pytest.raises(ValueError, match="hard equality"):
        engine.inverse(m, d)
    m.opt.disableflags = DisableBit.EQUALITY            # no active hard rows: allowed
    engine.inverse(m, d)
    assert np.all(np.isfinite(d.qfrc_inverse))


@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
@pytest.mark.parametrize("impratio", [1.0, 3.0])
def test_impratio_scales_the_friction_regulariser_as_mujoco(cone, impratio):
    """MuJoCo's impratio divides the friction rows' regulariser (elliptic) or that of every
    pyramid edge: on a sphere (no lever arm) both engines give the same R row by row."""
    xml = REST.format(ref="0.03 1", imp="0.95 0.95 0.001 0.5 2").replace(
        'cone="elliptic"', f'cone="{cone}" impratio="{impratio}"')
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    m = engine.load_model_from_string(xml)
    assert m.opt.impratio == impratio
    d = engine.make_data(m)
    for _ in range(50):
        mujoco.mj_step(mm, md)
    d.qpos[:], d.qvel[:] = md.qpos, md.qvel
    mujoco.mj_forward(mm, md)
    engine.forward(m, d)
    n = d.nefc
    assert n == md.nefc == (3 if cone == "elliptic" else 4)
    np.testing.assert_allclose(d.efc_R[:n], md.efc_R[:n], rtol=1e-9)


RMIN = """
<mujoco>
  <option epsilon="0" rmin="1e-7"/>
  <default><default class="floored"><geom rmin="2e-3"/></default></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1" {floor}/>
    <body name="ball" pos="0 0 0.099"><freejoint/>
      <geom name="ball" type="sphere" size="0.1" condim="1" {ball}/></body>
    <body name="arm" pos="2 0 1"><joint name="hinge" axis="0 1 0" range="-10 10" rmin="3e-3"
        frictionloss="1"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".02"/>
      <site name="s1" pos=".3 0 0"/></body>
    <site name="s0" pos="2.3 0 1.2"/>
  </worldbody>
  <tendon><spatial name="rope" limited="true" range="0 0.1" rmin="4e-3">
    <site site="s0"/><site site="s1"/></spatial></tendon>
  <equality><connect body1="arm" anchor=".3 0 0" rmin="5e-3"/></equality>
  {pair}
</mujoco>
"""


@pytest.mark.parametrize("floor, ball, pair, expected", [
    ("", "", "", 1e-7),                                          # the option
    ("", 'class="floored"', "", 0.5 * (2e-3 + 1e-7)),            # mixed with the option
    ('class="floored"', 'rmin="4e-3"', "", 3e-3),                # averaged
    ('priority="1" rmin="6e-3"', 'rmin="4e-3"', "", 6e-3),       # the higher priority wins
    ("", "", '<contact><pair geom1="floor" geom2="ball" rmin="7e-3" condim="1"/></contact>',
     7e-3),                                                      # the pair's own
])
def test_rmin_per_object(floor, ball, pair, expected):
    """rmin, the floor of R in (27), is set per geom (mixed as epsilon and kappa), pair, joint
    limit, tendon and equality; friction loss takes the option's (MuJoCo's friction rows do
    not follow the limit's softness either); with epsilon = 0 every row's R is its floor."""
    m = engine.load_model_from_string(RMIN.format(floor=floor, ball=ball, pair=pair))
    d = engine.make_data(m)
    engine.forward(m, d)
    n = d.nefc
    R = {int(t): d.efc_R[:n][d.efc_type[:n] == t] for t in set(d.efc_type[:n])}
    assert d.ncon == 1
    np.testing.assert_allclose(d.efc_R[d.contact_efc_address[0]], expected, rtol=1e-12)
    np.testing.assert_allclose(R[CT.EQUALITY], 5e-3, rtol=1e-12)
    np.testing.assert_allclose(R[CT.FRICTION_DOF], 1e-7, rtol=1e-12)
    np.testing.assert_allclose(R[CT.LIMIT_TENDON], 4e-3, rtol=1e-12)
    m.opt.rmin = 1e-6                   # objects without their own floor follow the option
    engine.forward(m, d)
    np.testing.assert_allclose(d.efc_R[:d.nefc][d.efc_type[:d.nefc] == CT.FRICTION_DOF],
                               1e-6, rtol=1e-12)
    if not floor and not ball and not pair:
        np.testing.assert_allclose(d.efc_R[d.contact_efc_address[0]], 1e-6, rtol=1e-12)


@pytest.mark.parametrize("attr, value", [("rmin", "0"), ("epsilon", "-0.5"), ("kappa", "0")])
def test_bad_softness_values_are_model_errors(attr, value):
    xml = RMIN.format(floor="", ball=f'{attr}="{value}"', pair="")
    with pytest.raises(engine.ModelError) as err:
        engine.load_model_from_string(xml)
    assert err.value.attribute == attr and err.value.element == "geom"
    assert err.value.line == 8

"""Inverse dynamics: consistency with the forward dynamics (paper Fig. 2), MuJoCo's mj_inverse
on the smooth part, and the friction-cone projection of Algorithm 5."""
import os
import pathlib
import shutil

import mujoco
import numpy as np
import pytest
from scipy.optimize import minimize

import engine
from engine import DisableBit, Solver
from engine.inverse import cone_project_alg5
from engine.solver import cone_project

ROOT = pathlib.Path(__file__).resolve().parents[1]
SUITE = pathlib.Path(mujoco.__file__).parent.parent / "dm_control" / "suite"
if not SUITE.is_dir():
    import dm_control
    SUITE = pathlib.Path(dm_control.__file__).parent / "suite"

CONTACT_ELLIPTIC = int(engine.enums.ConstraintType.CONTACT_ELLIPTIC)
FRICTION_DOF = int(engine.enums.ConstraintType.FRICTION_DOF)
EQUALITY = int(engine.enums.ConstraintType.EQUALITY)
LIMIT_JOINT = int(engine.enums.ConstraintType.LIMIT_JOINT)


def converged_newton(m):
    m.opt.solver = Solver.NEWTON
    m.opt.iterations = 100
    m.opt.tolerance = 1e-15


def forward_then_inverse(m, d):
    """Step forward from the current state, then run the inverse at the pre-step state with
    qacc = (v' - v) / h. Returns (applied force of the step, forward efc_force, efc_type, the
    post-step state) and leaves d at the pre-step state with the inverse's results."""
    engine.forward(m, d)
    # qfrc_applied + qfrc_actuator + J' xfrc_applied: the smooth force less passive and bias
    applied = d.qfrc_smooth - d.qfrc_passive + d.qfrc_bias
    nefc = int(d.nefc[0])
    f_fwd = d.efc_force[:nefc].copy()
    types = d.efc_type[:nefc].copy()
    q0, v0, act0, t0 = d.qpos.copy(), d.qvel.copy(), d.act.copy(), d.time
    warm = d.qacc_warmstart.copy()
    engine.step(m, d)
    after = (d.qpos.copy(), d.qvel.copy(), d.act.copy(), d.time, d.qacc_warmstart.copy())
    d.qacc[:] = (after[1] - v0) / m.opt.timestep
    d.qpos[:], d.qvel[:], d.act[:], d.time = q0, v0, act0, t0
    d.qacc_warmstart[:] = warm
    engine.inverse(m, d)
    return applied, f_fwd, types, after


def restore(d, after):
    d.qpos[:], d.qvel[:], d.act[:], d.time, d.qacc_warmstart[:] = after


def relative(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-12)


def recovered_ctrl(m, d, other):
    """ctrl from qfrc_inverse - other by least squares on the actuator moments (motors:
    actuator force = gain ctrl, qfrc_actuator = moment' force)."""
    gain = m.actuator_gainprm[:, 0]
    return np.linalg.lstsq(d.actuator_moment.T * gain, d.qfrc_inverse - other, rcond=None)[0]


def test_single_joint_mechanism_forward_inverse_consistency():
    """The paper's Fig. 2: the mechanism driven by random controls; the inverse recovers the
    control force, the joint friction and the contact impulses of the forward step."""
    m = engine.load_model(str(ROOT / "assets" / "single_joint.xml"))
    converged_newton(m)
    d = engine.make_data(m)
    rng = np.random.default_rng(1)
    seen = set()
    for k in range(400):
        d.ctrl[:] = rng.uniform(-6, 6, m.nu)
        applied, f_fwd, types, after = forward_then_inverse(m, d)
        nefc = int(d.nefc[0])
        np.testing.assert_array_equal(d.efc_type[:nefc], types)
        assert relative(d.qfrc_inverse, applied) < 1e-8, k
        if nefc:
            assert relative(d.efc_force[:nefc], f_fwd) < 1e-6, k
        ctrl = recovered_ctrl(m, d, applied - d.qfrc_actuator)
        np.testing.assert_allclose(ctrl, d.ctrl, rtol=0, atol=1e-8 * 6)
        # which cases of the projections the run went through
        for i in range(nefc):
            f, t = f_fwd[i], types[i]
            if t == FRICTION_DOF:
                seen.add("friction at bound" if abs(abs(f) - 0.4) < 1e-9 else "friction inside")
            if t == CONTACT_ELLIPTIC and d.efc_type[i - 1] != CONTACT_ELLIPTIC:
                ft = np.hypot(f_fwd[i + 1], f_fwd[i + 2])
                if f > 0:
                    slip = abs(ft - d.efc_mu[i + 1] * f) < 1e-8 * f
                    seen.add("contact sliding" if slip else "contact sticking")
        restore(d, after)
    assert seen == {"friction at bound", "friction inside", "contact sliding", "contact sticking"}


def humanoid_with_equalities(tmp_path):
    """dm_control's humanoid with a joint coupling and a connect constraint added."""
    shutil.copytree(SUITE / "common", tmp_path / "common")
    xml = (SUITE / "humanoid.xml").read_text()
    xml = xml.replace("</mujoco>", """
  <equality>
    <joint joint1="left_knee" joint2="right_knee" polycoef="0 0.8 0 0 0"/>
    <connect body1="left_hand" body2="world" anchor="0 0 0"/>
  </equality>
</mujoco>""")
    path = tmp_path / "humanoid_eq.xml"
    path.write_text(xml)
    return engine.load_model(str(path))


def test_humanoid_forward_inverse_consistency(tmp_path):
    """Contacts, joint limits, equality constraints, implicit damping, pushes on the bodies."""
    m = humanoid_with_equalities(tmp_path)
    m.opt.timestep = 0.01
    converged_newton(m)
    d = engine.make_data(m)
    rng = np.random.default_rng(2)
    engine.step(m, d, 60)                        # fall to the floor
    kinds = set()
    for k in range(120):
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        d.xfrc_applied[:] = 0.0
        if k % 3 == 0:
            d.xfrc_applied[rng.integers(1, m.nbody), :3] = rng.normal(0, 100, 3)
        applied, f_fwd, types, after = forward_then_inverse(m, d)
        nefc = int(d.nefc[0])
        kinds.update(types.tolist())
        assert relative(d.qfrc_inverse, applied) < 1e-8, k
        assert relative(d.efc_force[:nefc], f_fwd) < 1e-6, k
        ctrl = recovered_ctrl(m, d, applied - d.qfrc_actuator)
        np.testing.assert_allclose(ctrl, d.ctrl, rtol=0, atol=1e-8)
        restore(d, after)
    assert {EQUALITY, LIMIT_JOINT, CONTACT_ELLIPTIC} <= kinds


@pytest.mark.parametrize("name", ["humanoid", "cheetah", "walker", "finger", "cartpole"])
def test_smooth_inverse_matches_mujoco(name):
    """Without constraints the inverse is RNE + armature + implicit damping - passive: compare
    with MuJoCo's mj_inverse (discrete-time variant) at random states and accelerations."""
    path = str(SUITE / f"{name}.xml")
    m = engine.load_model(path)
    m.opt.disableflags = m.opt.disableflags | DisableBit.CONSTRAINT
    m.opt.integrator = engine.Integrator.SEMIIMPLICIT
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_path(path)
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    mm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    mm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_INVDISCRETE
    md = mujoco.MjData(mm)
    rng = np.random.default_rng(3)
    for _ in range(5):
        mujoco.mj_resetData(mm, md)
        md.qpos[:] = mm.qpos0 + 0.0
        mujoco.mj_integratePos(mm, md.qpos, rng.normal(0, 0.3, mm.nv), 1.0)
        md.qvel[:] = rng.normal(0, 1, mm.nv)
        md.qacc[:] = rng.normal(0, 5, mm.nv)
        mujoco.mj_inverse(mm, md)
        d.qpos[:], d.qvel[:], d.qacc[:] = md.qpos, md.qvel, md.qacc
        engine.inverse(m, d)
        assert relative(d.qfrc_inverse, md.qfrc_inverse) < 1e-9


# ------------------------------------------------------------------------------------------------
# Algorithm 5
# ------------------------------------------------------------------------------------------------
def random_cone_problem(rng, n):
    """A contact block with random mu and weights satisfying (22), and a random y (with some
    exact zeros so that the special cases of the algorithm are visited)."""
    mu = np.concatenate([[0.0], rng.uniform(0.05, 2.0, n - 1)])
    r0 = 10 ** rng.uniform(-4, 1)
    rf = 10 ** rng.uniform(-4, 1)
    r = np.concatenate([[r0], rf / mu[1:] ** 2 / np.mean(mu[1:] ** -2.0)])
    y = rng.normal(0, 1, n) * 10 ** rng.uniform(-3, 3)
    case = rng.integers(0, 6)
    if case == 0:
        y[0] = 0.0              # eq. (20)
    elif case == 1:
        y[1:] = 0.0             # the tip (or the axis inside the cone)
    return y, r, mu


def in_cone(x, mu, tol):
    return x[0] >= -tol and np.sqrt(np.sum((x[1:] / mu[1:]) ** 2)) <= x[0] + tol


@pytest.mark.parametrize("n", [3, 4, 6])
def test_cone_projection_random(n):
    """1e5 samples over d = 2, 3, 5 (n = 3, 4, 6) in all: inside the cone, idempotent, equal to
    the closed form used by the solver, and optimal (checked against scipy on a subset)."""
    rng = np.random.default_rng(n)
    x = np.empty(n)
    xx = np.empty(n)
    xc = np.empty(n)
    samples = 34000
    for s in range(samples):
        y, r, mu = random_cone_problem(rng, n)
        cone_project_alg5(y, r, mu, n, x)
        scale = max(np.abs(y).max(), np.abs(x[1:] / mu[1:]).max(initial=x[0]))
        assert in_cone(x, mu, 1e-12 * scale)
        cone_project_alg5(x.copy(), r, mu, n, xx)
        assert np.abs(xx - x).max() <= 1e-12 * scale
        cone_project(y, r, mu, n, xc)
        assert np.abs(xc - x).max() <= 1e-10 * scale
        if s < 60:
            check_optimal(y, r, mu, x)


def check_optimal(y, r, mu, x):
    """No feasible point is closer to y in the metric of r than x: scipy's SLSQP, started from
    near x and from elsewhere, finds none (its result moved onto the cone if slightly outside)."""
    def cost(z):
        return np.sum(r * (z - y) ** 2)
    cons = [{"type": "ineq", "fun": lambda z: z[0] ** 2 - np.sum((z[1:] / mu[1:]) ** 2)},
            {"type": "ineq", "fun": lambda z: z[0]}]
    best = cost(x)
    scale = max(np.sum(r * y ** 2), 1e-300)
    for start in (x + 1e-3 * np.abs(y).max(), np.abs(y) + 0.1):
        res = minimize(cost, start, constraints=cons, method="SLSQP",
                       options={"ftol": 1e-16, "maxiter": 500})
        z = res.x.copy()
        z[0] = max(z[0], np.sqrt(np.sum((z[1:] / mu[1:]) ** 2)))    # made feasible
        assert best <= cost(z) + 1e-10 * scale


def test_cone_projection_special_cases():
    """Each branch of Algorithm 5 on a hand-made example with a known answer."""
    mu = np.array([0.0, 0.5, 0.5])
    r = np.array([1.0, 4.0, 4.0])            # muhat^2 = mu^2 r_j / r_0 = 1
    x = np.empty(3)
    cone_project_alg5(np.array([2.0, 0.3, -0.4]), r, mu, 3, x)     # inside: unchanged
    np.testing.assert_allclose(x, [2.0, 0.3, -0.4])
    cone_project_alg5(np.array([-1.0, 0.0, 0.0]), r, mu, 3, x)     # y_j = 0: the tip
    np.testing.assert_allclose(x, 0.0)
    cone_project_alg5(np.array([-1.0, 0.1, 0.0]), r, mu, 3, x)     # polar cone: the tip
    np.testing.assert_allclose(x, 0.0)
    # yhat_0 = 0: (20) with muhat = 1: xhat_0 = |yhat_j| / 2, xhat_j = yhat_j / 2
    cone_project_alg5(np.array([0.0, 1.0, 0.0]), r, mu, 3, x)
    np.testing.assert_allclose(x, [1.0, 0.5, 0.0], rtol=1e-15)
    # general case: in hat coordinates yhat = (1, 4, 0) projects on the 45-degree cone at
    # ((1 + 4) / 2, (1 + 4) / 2, 0) -> x = (2.5, 1.25, 0)
    cone_project_alg5(np.array([1.0, 2.0, 0.0]), r, mu, 3, x)
    np.testing.assert_allclose(x, [2.5, 1.25, 0.0], rtol=1e-14)

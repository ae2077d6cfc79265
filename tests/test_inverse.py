"""Inverse dynamics: consistency with the forward dynamics (paper Fig. 2), MuJoCo's mj_inverse
on the smooth part, and the friction-cone projection of Algorithm 5."""
import pathlib
import re
import shutil

import mujoco
import numpy as np
import pytest

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


NEWTON_RESIDUAL = 1e-9    # largest gradient entry of a converged forward step (Newton)


def converged_newton(m):
    m.opt.solver = Solver.NEWTON
    m.opt.iterations = 100
    m.opt.tolerance = 1e-15


def forward_then_inverse(m, d):
    """Step forward from the current state, then run the inverse at the pre-step state with
    qacc = (v' - v) / h. Returns (forward efc_force, efc_type, the post-step state) and leaves
    d at the pre-step state with the inverse's results; the forward solver must have
    converged (Newton, tiny gradient). The inverse's outputs are NaN before it runs, so a
    row or dof it does not write fails the comparisons."""
    engine.forward(m, d)
    nefc = d.nefc
    f_fwd = d.efc_force[:nefc].copy()
    types = d.efc_type[:nefc].copy()
    q0, v0, act0, t0 = d.qpos.copy(), d.qvel.copy(), d.act.copy(), d.time
    warm = d.qacc_warmstart.copy()
    engine.step(m, d)
    assert m.opt.solver == Solver.NEWTON and d.solver_residual[0] < NEWTON_RESIDUAL, \
        f"forward not converged: residual {d.solver_residual[0]}, {d.solver_niter[0]} iterations"
    after = (d.qpos.copy(), d.qvel.copy(), d.act.copy(), d.time, d.qacc_warmstart.copy())
    d.qacc[:] = (after[1] - v0) / m.opt.timestep
    d.qpos[:], d.qvel[:], d.act[:], d.time = q0, v0, act0, t0
    d.qacc_warmstart[:] = warm
    d.efc_force[:] = np.nan
    d.qfrc_inverse[:] = np.nan
    engine.inverse(m, d)
    return f_fwd, types, after


def mujoco_twin(xml_text, assets_dir=None):
    """MuJoCo's compilation of the same model (the engine's own softness attributes removed:
    they do not enter kinematics or actuation), to compute the applied force independently."""
    xml_text = re.sub(r'\s(epsilon|kappa)="[^"]*"', "", xml_text)
    if assets_dir is not None:
        path = pathlib.Path(assets_dir) / "_mujoco_twin.xml"
        path.write_text(xml_text)
        mm = mujoco.MjModel.from_xml_path(str(path))
    else:
        mm = mujoco.MjModel.from_xml_string(xml_text)
    return mm, mujoco.MjData(mm)


def applied_from_inputs(mm, dd, d):
    """The applied force of a step from its public inputs, by MuJoCo: qfrc_applied +
    qfrc_actuator (mj_forward with the same ctrl and state) + J' xfrc_applied (mj_applyFT of
    each body's wrench at its centre of mass). Returns it and the actuator moments (nu, nv)."""
    dd.qpos[:], dd.qvel[:], dd.act[:], dd.ctrl[:] = d.qpos, d.qvel, d.act, d.ctrl
    dd.qfrc_applied[:] = d.qfrc_applied
    dd.xfrc_applied[:] = 0.0
    mujoco.mj_forward(mm, dd)
    jtx = np.zeros(mm.nv)
    for b in range(1, mm.nbody):
        mujoco.mj_applyFT(mm, dd, d.xfrc_applied[b, :3].copy(), d.xfrc_applied[b, 3:].copy(),
                          dd.xipos[b].copy(), b, jtx)
    moment = np.zeros((mm.nu, mm.nv))
    mujoco.mju_sparse2dense(moment, dd.actuator_moment, dd.moment_rownnz, dd.moment_rowadr,
                            dd.moment_colind)
    return d.qfrc_applied + dd.qfrc_actuator + jtx, d.qfrc_applied + jtx, moment


def restore(d, after):
    d.qpos[:], d.qvel[:], d.act[:], d.time, d.qacc_warmstart[:] = after


def relative(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-12)


def recovered_ctrl(m, d, other, moment):
    """ctrl from qfrc_inverse - other by least squares on the actuator moments (motors:
    actuator force = gain ctrl, qfrc_actuator = moment' force)."""
    gain = m.actuator_gainprm[:, 0]
    return np.linalg.lstsq(moment.T * gain, d.qfrc_inverse - other, rcond=None)[0]


def test_single_joint_mechanism_forward_inverse_consistency():
    """The paper's Fig. 2: the mechanism driven by random controls; the inverse recovers the
    control force, the joint friction and the contact impulses of the forward step."""
    path = ROOT / "assets" / "single_joint.xml"
    m = engine.load_model(str(path))
    mm, dd = mujoco_twin(path.read_text())
    converged_newton(m)
    d = engine.make_data(m)
    rng = np.random.default_rng(1)
    seen = set()
    for k in range(400):
        d.ctrl[:] = rng.uniform(-6, 6, m.nu)
        d.qfrc_applied[:] = rng.normal(0, 0.5, m.nv)
        d.xfrc_applied[1] = rng.normal(0, 0.5, 6)
        applied, other, moment = applied_from_inputs(mm, dd, d)
        f_fwd, types, after = forward_then_inverse(m, d)
        nefc = d.nefc
        np.testing.assert_array_equal(d.efc_type[:nefc], types)
        assert relative(d.qfrc_inverse, applied) < 1e-8, k
        if nefc:
            assert relative(d.efc_force[:nefc], f_fwd) < 1e-6, k
        ctrl = recovered_ctrl(m, d, other, moment)
        np.testing.assert_allclose(ctrl, d.ctrl, rtol=0, atol=1e-8)
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
    """dm_control's humanoid with a joint coupling and a connect constraint added; the model
    and its file."""
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
    return engine.load_model(str(path)), path


@pytest.mark.parametrize("integrator", ["SEMIIMPLICIT", "IMPLICIT", "IMPLICITFAST"])
def test_humanoid_forward_inverse_consistency(tmp_path, integrator):
    """Contacts, joint limits, equality constraints, implicit damping, pushes on the bodies;
    with the implicit integrators the inverse first recovers the forward's acceleration from
    the step's (M^-1 (M - h qDeriv) qacc)."""
    m, path = humanoid_with_equalities(tmp_path)
    mm, dd = mujoco_twin(path.read_text(), tmp_path)
    m.opt.integrator = engine.Integrator[integrator]
    m.opt.timestep = 0.01
    converged_newton(m)
    d = engine.make_data(m)
    rng = np.random.default_rng(2)
    engine.step(m, d, 60)                        # fall to the floor
    kinds = set()
    for k in range(120):
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        d.qfrc_applied[:] = rng.normal(0, 2, m.nv)
        d.xfrc_applied[:] = 0.0
        d.xfrc_applied[rng.integers(1, m.nbody)] = rng.normal(0, 30, 6)
        applied, other, moment = applied_from_inputs(mm, dd, d)
        engine.forward(m, d)
        qacc_fwd = d.qacc.copy()
        f_fwd, types, after = forward_then_inverse(m, d)
        nefc = d.nefc
        kinds.update(types.tolist())
        assert relative(d.qfrc_inverse, applied) < 1e-8, k
        assert relative(d.efc_force[:nefc], f_fwd) < 1e-6, k
        ctrl = recovered_ctrl(m, d, other, moment)
        np.testing.assert_allclose(ctrl, d.ctrl, rtol=0, atol=1e-8)
        np.testing.assert_allclose(d.qacc_continuous, qacc_fwd, rtol=0,
                                   atol=1e-8 * np.abs(qacc_fwd).max())
        restore(d, after)
    assert {EQUALITY, LIMIT_JOINT, CONTACT_ELLIPTIC} <= kinds


@pytest.mark.parametrize("integrator", ["SEMIIMPLICIT", "IMPLICIT", "IMPLICITFAST"])
@pytest.mark.parametrize("path", [SUITE / "humanoid.xml", SUITE / "cheetah.xml",
                                  SUITE / "walker.xml", SUITE / "finger.xml",
                                  SUITE / "cartpole.xml", SUITE / "quadruped.xml",
                                  ROOT / "tests" / "data" / "compiler_actuators.xml",
                                  ROOT / "tests" / "data" / "pipeline_features.xml"],
                         ids=lambda p: p.stem)
def test_smooth_inverse_matches_mujoco(path, integrator):
    """Without constraints the inverse is RNE + armature + implicit damping - passive, and with
    the implicit integrators (M - h qDeriv) qacc + bias - passive: compare with MuJoCo's
    mj_inverse (discrete-time variant, its mj_discreteAcc) at random states, controls,
    activations and accelerations."""
    m = engine.load_model(str(path))
    m.opt.disableflags = m.opt.disableflags | DisableBit.CONSTRAINT
    m.opt.integrator = engine.Integrator[integrator]
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_path(str(path))
    mm.opt.integrator = int(m.opt.integrator)
    mm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    mm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_INVDISCRETE
    md = mujoco.MjData(mm)
    rng = np.random.default_rng(3)
    for _ in range(5):
        mujoco.mj_resetData(mm, md)
        md.qpos[:] = mm.qpos0 + 0.0
        mujoco.mj_integratePos(mm, md.qpos, rng.normal(0, 0.3, mm.nv), 1.0)
        md.qvel[:] = rng.normal(0, 1, mm.nv)
        md.ctrl[:] = rng.uniform(-1, 1, mm.nu)
        md.act[:] = rng.uniform(-1, 1, mm.na)
        mujoco.mj_forward(mm, md)            # the actuator forces qDeriv's saturation reads
        md.qacc[:] = rng.normal(0, 5, mm.nv)
        mujoco.mj_inverse(mm, md)
        d.qpos[:], d.qvel[:], d.qacc[:] = md.qpos, md.qvel, md.qacc
        d.ctrl[:], d.act[:] = md.ctrl, md.act
        d.qfrc_inverse[:] = np.nan
        engine.inverse(m, d)
        assert relative(d.qfrc_inverse, md.qfrc_inverse) < 1e-9


FALLING_BOX = """
<mujoco>
  <option timestep="0.005" integrator="implicitfast"/>
  <worldbody>
    <geom type="plane" size="2 2 .1"/>
    <body pos="0 0 .12" euler="20 10 0">
      <freejoint/>
      <geom type="box" size=".1 .07 .04" mass="1.3"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_tumbling_free_body_forward_inverse_consistency():
    """A box thrown spinning on the floor with implicitfast: a standalone free body, whose
    step matrix holds its gyroscopic derivative (forward._free_body_matrix), with contacts;
    the inverse recovers the pushes and the contact forces."""
    m = engine.load_model_from_string(FALLING_BOX)
    assert m.body_isfree[1]
    converged_newton(m)
    d = engine.make_data(m)
    d.qvel[:] = [0.5, -0.3, 1.0, 6.0, -9.0, 12.0]
    rng = np.random.default_rng(5)
    ncontact = 0
    for k in range(150):
        d.xfrc_applied[1] = rng.normal(0, 3, 6)
        jtx = np.zeros(m.nv)
        engine.forward(m, d)
        engine.smooth.apply_ft(m._struct, d._struct, d.xfrc_applied[1, :3].copy(),
                               d.xfrc_applied[1, 3:].copy(), d.xipos[1].copy(), 1, jtx, 1.0)
        f_fwd, types, after = forward_then_inverse(m, d)
        nefc = d.nefc
        ncontact += nefc > 0
        assert relative(d.qfrc_inverse, jtx) < 1e-8, k
        if nefc:
            assert relative(d.efc_force[:nefc], f_fwd) < 1e-6, k
        restore(d, after)
    assert ncontact > 30


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
    the closed form used by the solver, and equal to the weighted projection computed from its
    optimality (KKT) conditions with a 1-D root solve (cone_projection_reference), to 1e-10
    of the problem's scale in every sample."""
    rng = np.random.default_rng(n)
    x = np.empty(n)
    xx = np.empty(n)
    xc = np.empty(n)
    samples = 34000
    for s in range(samples):
        y, r, mu = random_cone_problem(rng, n)
        x[:] = np.nan
        cone_project_alg5(y, r, mu, n, x)
        scale = max(np.abs(y).max(), np.abs(x[1:] / mu[1:]).max(initial=x[0]))
        assert in_cone(x, mu, 1e-12 * scale)
        cone_project_alg5(x.copy(), r, mu, n, xx)
        assert np.abs(xx - x).max() <= 1e-12 * scale
        cone_project(y, r, mu, n, xc)
        assert np.abs(xc - x).max() <= 1e-10 * scale
        xr = cone_projection_reference(y, r, mu)
        assert np.abs(x - xr).max() <= 1e-10 * max(np.abs(y).max(), 1e-300), s


def cone_projection_reference(y, r, mu):
    """argmin_x sum r (x - y)^2 over the cone x_0 >= |x_j / mu_j|, from the KKT conditions.
    Inside: y. Otherwise x is on the cone, with multiplier t = r_0 (x_0 - y_0) >= 0 and
    r_j (x_j - y_j) + t x_j / (mu_j^2 x_0) = 0, i.e.
    x_j = r_j mu_j^2 x_0 y_j / (r_j mu_j^2 x_0 + r_0 (x_0 - y_0)); x_0 is then the root of
    phi(x_0) = |x_j(x_0) / mu_j| - x_0 on x_0 > max(y_0, 0), where phi decreases from
    phi(max(y_0, 0)+) to below zero. When phi(0+) <= 0 (y_0 < 0 and
    |r_j mu_j y_j| <= r_0 |y_0|) the answer is the tip, 0."""
    from scipy.optimize import brentq
    r0, rt, mt, y0, yt = r[0], r[1:], mu[1:], y[0], y[1:]
    if y0 >= np.sqrt(np.sum((yt / mt) ** 2)):
        return y.copy()

    def xt(x0):
        return rt * mt ** 2 * x0 * yt / (rt * mt ** 2 * x0 + r0 * (x0 - y0))

    def phi(x0):
        return np.sqrt(np.sum((xt(x0) / mt) ** 2)) - x0

    if y0 < 0 and np.sqrt(np.sum((rt * mt * yt) ** 2)) <= r0 * -y0:
        return np.zeros_like(y)
    hi = max(y0, 0.0) + np.sqrt(np.sum((yt / mt) ** 2)) + 1.0
    if y0 > 0:
        lo = y0                            # phi(y_0) = |y_j / mu_j| - y_0 > 0
    else:
        lo = hi                            # phi > 0 on (0, root): halve down into it
        while not phi(lo) > 0:
            lo *= 0.5
    x0 = brentq(phi, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    return np.concatenate([[x0], xt(x0)])


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

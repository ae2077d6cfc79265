"""Analytical derivatives (engine/derivative.py): qDeriv = d qfrc_smooth / d qvel against
MuJoCo's own qDeriv (computed by its implicit integrators), against central finite differences,
and the sparse LU of M - h qDeriv against a dense solve."""
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from engine import Integrator, derivative
from test_smooth_oracle import MODELS, SUITE, assert_close, load_pair, random_state, set_state

INTEGRATOR = {True: mujoco.mjtIntegrator.mjINT_IMPLICIT,
              False: mujoco.mjtIntegrator.mjINT_IMPLICITFAST}


@pytest.fixture(scope="module", params=MODELS, ids=lambda p: pathlib.Path(p).stem)
def model_path(request):
    return request.param


def mujoco_qderiv(mm, state, flg_bias):
    """MuJoCo's qDeriv at a state: its implicit step computes it (with the bias term) and its
    implicitfast step (without), from the forward pass at the state before the step."""
    mm.opt.integrator = INTEGRATOR[flg_bias]
    md = mujoco.MjData(mm)
    set_state(md, state)
    mujoco.mj_step(mm, md)
    return md.qDeriv.copy()


@pytest.mark.parametrize("flg_bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("source", ["ours", "mujoco"])
def test_qderiv_against_mujoco(model_path, source, flg_bias):
    """Every entry of qDeriv at random states (controls partly beyond their ranges),
    constraints disabled, in MuJoCo's sparse layout (the same D_* arrays)."""
    mm, m = load_pair(model_path, source)
    # the integrator decides whether the ellipsoid fluid blocks are symmetrised, in both
    m.opt.integrator = Integrator.IMPLICIT if flg_bias else Integrator.IMPLICITFAST
    for name in ("D_rownnz", "D_rowadr", "D_diag", "D_colind"):
        np.testing.assert_array_equal(getattr(m, name), getattr(mm, name), err_msg=name)
    assert m.nD == mm.nD
    d = engine.make_data(m)
    rng = np.random.default_rng(7)
    for _ in range(5):
        state = random_state(mm, rng)
        ref = mujoco_qderiv(mm, state, flg_bias)
        set_state(d, state)
        engine.forward(m, d)
        d.qDeriv[:] = np.nan
        derivative.mjd_smooth_vel(m, d, flg_bias)
        assert_close("qDeriv", d.qDeriv, ref, tol=1e-9)


FD_MODELS = [SUITE / "humanoid.xml", SUITE / "fish.xml", SUITE / "swimmer.xml",
             pathlib.Path(__file__).parent / "data" / "compiler_actuators.xml",
             pathlib.Path(__file__).parent / "data" / "pipeline_features.xml"]


@pytest.mark.parametrize("path", FD_MODELS, ids=lambda p: p.stem)
def test_qderiv_against_finite_differences(path):
    """Central differences of qfrc_smooth (and of qfrc_smooth + qfrc_bias for flg_bias=False)
    in qvel, over the entries of the D pattern. The entries outside the pattern are the
    couplings of branches that the D layout drops."""
    mm, m = load_pair(str(path), "ours")
    d = engine.make_data(m)
    rng = np.random.default_rng(11)
    eps = 1e-6
    inside = np.zeros((m.nv, m.nv), dtype=bool)
    for i in range(m.nv):
        a = m.D_rowadr[i]
        inside[i, m.D_colind[a:a + m.D_rownnz[i]]] = True
    for _ in range(2):
        state = qpos, qvel, ctrl, act = random_state(mm, rng)
        for flg_bias in (True, False):
            fd = np.zeros((m.nv, m.nv))
            for k in range(m.nv):
                out = []
                for sgn in (1.0, -1.0):
                    v = qvel.copy()
                    v[k] += sgn * eps
                    set_state(d, (qpos, v, ctrl, act))
                    engine.forward(m, d)
                    out.append(d.qfrc_smooth + (0.0 if flg_bias else d.qfrc_bias))
                fd[:, k] = (out[0] - out[1]) / (2 * eps)
            set_state(d, state)
            engine.forward(m, d)
            derivative.mjd_smooth_vel(m, d, flg_bias)
            D = derivative.dense_D(m, d.qDeriv)
            scale = max(np.abs(fd).max(), 1e-12)
            err = np.abs(np.where(inside, D - fd, 0.0)).max()
            assert err <= 1e-6 * scale, (path.stem, flg_bias, err, scale)
            assert np.abs(fd).max() > 1e-3               # the derivative is exercised


DATA = pathlib.Path(__file__).parent / "data"


def finite_difference(m, d, state, field, eps=1e-6):
    """Central differences of a force field of the forward pass in qvel (nv x nv)."""
    qpos, qvel, ctrl, act = state
    fd = np.zeros((m.nv, m.nv))
    for k in range(m.nv):
        out = []
        for sgn in (1.0, -1.0):
            v = qvel.copy()
            v[k] += sgn * eps
            set_state(d, (qpos, v, ctrl, act))
            engine.forward(m, d)
            out.append(getattr(d, field).copy())
        fd[:, k] = (out[0] - out[1]) / (2 * eps)
    return fd


@pytest.mark.parametrize("name, stage, field", [
    ("muscles", derivative.actuator_vel, "qfrc_actuator"),
    ("fluid_ellipsoid", derivative.passive_vel, "qfrc_passive")], ids=["muscle", "ellipsoid"])
def test_stage_against_finite_differences(name, stage, field):
    """The muscle gain term (actuator_vel on muscle actuators: joint, fixed and wrapped
    tendon transmissions, stateless and actearly ones) and the ellipsoid fluid term
    (passive_vel: added mass, Magnus, Kutta, drag, angular drag on every geom type, beside
    the inertia-box model) alone, against central differences of the force they derive, at
    random states. All these couplings lie on one kinematic chain: the whole matrix is
    compared, and it must be the exact derivative (the model's integrator is not
    IMPLICITFAST, which would symmetrise the fluid blocks)."""
    mm, m = load_pair(str(DATA / f"{name}.xml"), "ours")
    assert m.opt.integrator != Integrator.IMPLICITFAST
    d = engine.make_data(m)
    rng = np.random.default_rng(5)
    for _ in range(3):
        state = random_state(mm, rng)
        fd = finite_difference(m, d, state, field)
        set_state(d, state)
        engine.forward(m, d)
        d.qDeriv[:] = 0.0
        stage(m._struct, d._struct)
        D = derivative.dense_D(m, d.qDeriv)
        scale = np.abs(fd).max()
        assert scale > 1e-2                                  # the term is exercised
        np.testing.assert_allclose(D, fd, rtol=0, atol=1e-6 * scale)


def test_ellipsoid_fluid_at_rest_against_mujoco():
    """No wind and qvel = 0: every velocity of the fluid model is zero, where its drag and
    lift derivatives have removable singularities; qDeriv stays finite and equals MuJoCo's."""
    mm, m = load_pair(str(DATA / "fluid_ellipsoid.xml"), "mujoco")
    mm.opt.wind[:] = 0.0
    m.opt.wind[:] = 0.0
    m.opt.integrator = Integrator.IMPLICIT
    state = random_state(mm, np.random.default_rng(6))
    state = (state[0], np.zeros(mm.nv), state[2], state[3])
    ref = mujoco_qderiv(mm, state, True)
    d = engine.make_data(m)
    set_state(d, state)
    engine.forward(m, d)
    d.qDeriv[:] = np.nan
    derivative.mjd_smooth_vel(m, d, True)
    assert np.isfinite(d.qDeriv).all()
    assert np.abs(ref).max() > 1e-4
    assert_close("qDeriv at rest", d.qDeriv, ref, tol=1e-9)


def test_implicitfast_symmetrises_ellipsoid_blocks():
    """IMPLICITFAST (as MuJoCo's mjd_ellipsoidFluid) replaces each geom's fluid block B by
    (B + B') / 2 except on standalone free bodies: the qDeriv of the articulated arm is then
    the symmetric part of the exact one, the free bodies' entries are the exact ones."""
    mm, m = load_pair(str(DATA / "fluid_ellipsoid.xml"), "ours")
    d = engine.make_data(m)
    set_state(d, random_state(mm, np.random.default_rng(8)))
    engine.forward(m, d)
    D = {}
    for integrator in (Integrator.IMPLICIT, Integrator.IMPLICITFAST):
        m.opt.integrator = integrator
        derivative.mjd_smooth_vel(m, d, False)
        D[integrator] = derivative.dense_D(m, d.qDeriv)
    exact, fast = D[Integrator.IMPLICIT], D[Integrator.IMPLICITFAST]
    free = np.array([bool(m.body_isfree[m.dof_bodyid[i]]) for i in range(m.nv)])
    arm = np.ix_(~free, ~free)
    assert free.sum() == 30 and (~free).sum() == 4       # five free bodies, ball + hinge
    assert np.abs(exact[arm] - exact[arm].T).max() > 1e-4 * np.abs(exact[arm]).max()
    np.testing.assert_allclose(fast[arm], 0.5 * (exact[arm] + exact[arm].T), rtol=0,
                               atol=1e-14 * np.abs(exact).max())
    np.testing.assert_array_equal(fast[np.ix_(free, free)], exact[np.ix_(free, free)])


@pytest.mark.parametrize("path", [SUITE / "humanoid.xml", SUITE / "manipulator.xml"],
                         ids=lambda p: p.stem)
def test_sparse_lu_against_dense_solve(path):
    """factor_lu / solve_lu of M - h qDeriv (not symmetric: the bias derivative) against
    numpy's dense solve, and MuJoCo's qLU of the same matrix (its implicit step)."""
    mm, m = load_pair(str(path), "ours")
    d = engine.make_data(m)
    state = random_state(mm, np.random.default_rng(3))
    set_state(d, state)
    engine.forward(m, d)
    derivative.mjd_smooth_vel(m, d, True)
    h = m.opt.timestep
    A = engine.full_inertia(m, d) - h * derivative.dense_D(m, d.qDeriv)
    assert np.abs(A - A.T).max() > 1e-9                 # a non-symmetric system
    LU = np.zeros(m.nD)
    for i in range(m.nv):
        for a in range(m.D_rowadr[i], m.D_rowadr[i] + m.D_rownnz[i]):
            LU[a] = A[i, m.D_colind[a]]
    derivative.factor_lu(m._struct, LU)
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICIT
    md = mujoco.MjData(mm)
    set_state(md, state)
    mujoco.mj_step(mm, md)
    assert_close("qLU", LU, md.qLU, tol=1e-9)
    b = np.random.default_rng(4).standard_normal(m.nv)
    x = b.copy()
    derivative.solve_lu(m._struct, LU, x)
    np.testing.assert_allclose(A @ x, b, rtol=0, atol=1e-10 * np.abs(b).max())


def test_dense_d_and_entry_addresses():
    """entry_adr finds every entry of the pattern where D_colind says it is."""
    m = engine.load_model(str(SUITE / "humanoid.xml"))
    for i in range(m.nv):
        for a in range(m.D_rowadr[i], m.D_rowadr[i] + m.D_rownnz[i]):
            assert derivative.entry_adr(m._struct, i, m.D_colind[a]) == a
    values = np.arange(m.nD, dtype=float) + 1.0
    D = derivative.dense_D(m, values)
    assert np.count_nonzero(D) == m.nD == 2 * m.nM - m.nv

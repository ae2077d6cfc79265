"""The smooth pipeline against MuJoCo, field by field, on random states with constraints disabled.

Two model sources: our compiler ("ours", the end-to-end check) and MuJoCo's own compilation
converted field by field ("mujoco", which isolates the pipeline from the compiler).
"""
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from engine import DisableBit, Integrator
from mj_adapter import model_from_mujoco, random_qpos

import dm_control

SUITE = pathlib.Path(dm_control.__file__).parent / "suite"
DATA = pathlib.Path(__file__).parent / "data"
# every suite model
SUITE_MODELS = ["acrobot", "ball_in_cup", "cartpole", "cheetah", "dog", "finger", "fish", "hopper",
                "humanoid", "humanoid_CMU", "lqr", "manipulator", "pendulum", "point_mass",
                "quadruped", "reacher", "stacker", "swimmer", "walker"]
# every joint, geom, actuator and tendon kind, default classes, frames, meshes, includes
OWN_MODELS = ["pipeline_features", "tendon_wrap", "muscles", "fluid_ellipsoid",
              "compiler_actuators", "compiler_constraints", "compiler_defaults",
              "compiler_kinematics", "compiler_mesh", "compiler_mesh_aabb",
              "compiler_discardvisual", "compiler_options", "compiler_springs", "include_assets"]
# real models beyond the suite: tilted capsules, symmetric meshes, frames that coincide with
# inertial frames up to the same-frame tolerance
OTHER_MODELS = ["locomotion/walkers/assets/humanoid_CMU_V2019.xml",
                "locomotion/walkers/assets/humanoid_CMU_V2020.xml",
                "locomotion/walkers/assets/rodent.xml",
                "locomotion/walkers/assets/build_fruitfly/assets/drosophila_fused.xml",
                "mujoco/testing/assets/arm.xml"]
MODELS = ([str(SUITE / f"{n}.xml") for n in SUITE_MODELS]
          + [str(DATA / f"{n}.xml") for n in OWN_MODELS]
          + [str(SUITE.parent / n) for n in OTHER_MODELS])
FIELDS = ["xpos", "xquat", "xipos", "geom_xpos", "geom_xmat", "site_xpos", "subtree_com",
          "cinert", "cdof", "cvel", "cdof_dot", "qfrc_bias", "qfrc_passive", "actuator_length",
          "actuator_velocity", "actuator_force", "qfrc_actuator", "ten_length", "ten_velocity",
          "xanchor", "xaxis", "ximat", "site_xmat", "cam_xpos", "cam_xmat", "light_xpos",
          "light_xdir", "qfrc_smooth"]
TOL = 1e-9


def assert_close(name, ours, ref, tol=TOL):
    """|ours - ref| <= tol * scale of the field (its largest magnitude, at least 1e-12)."""
    ours = np.asarray(ours, dtype=float)
    ref = np.asarray(ref, dtype=float).reshape(ours.shape)
    if ref.size == 0:
        return
    scale = max(np.abs(ref).max(), 1e-12)
    err = np.abs(ours - ref).max()
    assert err <= tol * scale, f"{name}: max error {err:.3e}, scale {scale:.3e}"


def random_state(mm, rng):
    """qpos near qpos0 (normalised quaternions), qvel, ctrl in ctrlrange, act in actrange."""
    qpos = random_qpos(mm, rng, 0.2)
    qvel = rng.standard_normal(mm.nv)
    lo, hi = mm.actuator_ctrlrange[:, 0].copy(), mm.actuator_ctrlrange[:, 1].copy()
    free = ~mm.actuator_ctrllimited.astype(bool)
    lo[free], hi[free] = -1.0, 1.0
    # slightly beyond the range too, so that clamping is exercised
    ctrl = rng.uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo))
    act = rng.uniform(-1.0, 1.0, mm.na)
    return qpos, qvel, ctrl, act


def set_state(d, state):
    d.qpos[:], d.qvel[:], d.ctrl[:], d.act[:] = state


@pytest.fixture(scope="module", params=MODELS, ids=lambda p: pathlib.Path(p).stem)
def model_path(request):
    return request.param


def load_pair(path, source):
    mm = mujoco.MjModel.from_xml_path(path)
    mm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    m = engine.load_model(path) if source == "ours" else model_from_mujoco(mm)
    m.opt.disableflags = m.opt.disableflags | DisableBit.CONSTRAINT
    return mm, m


@pytest.mark.parametrize("source", ["ours", "mujoco"])
def test_forward_fields(model_path, source):
    mm, m = load_pair(model_path, source)
    md, d = mujoco.MjData(mm), engine.make_data(m)
    rng = np.random.default_rng(1)
    for _ in range(3):
        state = random_state(mm, rng)
        set_state(md, state)
        set_state(d, state)
        mujoco.mj_forward(mm, md)
        for name in FIELDS:
            getattr(d, name)[...] = np.nan   # a skipped write shows as a failure
        engine.forward(m, d)
        for name in FIELDS:
            assert_close(name, getattr(d, name), getattr(md, name))
        M = np.zeros((mm.nv, mm.nv))
        mujoco.mj_fullM(mm, md, M)
        assert_close("full inertia", engine.full_inertia(m, d), M)
        # semi-implicit: qacc solves (M + h B) qacc = qfrc_smooth (paper eq. 3)
        if m.opt.integrator == Integrator.SEMIIMPLICIT:
            M += np.diag(mm.opt.timestep * mm.dof_damping)
        assert_close("qacc", d.qacc, np.linalg.solve(M, md.qfrc_smooth))


DIVERGED = (mujoco.mjtWarning.mjWARN_BADQACC, mujoco.mjtWarning.mjWARN_BADQVEL,
            mujoco.mjtWarning.mjWARN_BADQPOS)


def diverged(md):
    return any(md.warning[w].number for w in DIVERGED)


def run_settings(mm, state, nstep=100):
    """Timestep and velocity scale under which MuJoCo itself stays finite for nstep steps.

    RK4 integrates damping explicitly, so a model tuned for implicit damping (finger,
    manipulator: damping / inertia of hundreds per second at its timestep) is unstable at its
    own timestep; the step is then cut to a quarter of the fastest damping time M_ii / B_ii at
    the initial state. Fast random velocities can also drive MuJoCo's own simulation out of
    range (fish, through its fluid forces), so qvel is scaled down until the run stays finite.
    """
    md = mujoco.MjData(mm)
    set_state(md, state)
    mujoco.mj_forward(mm, md)
    if mm.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4 and mm.dof_damping.any():
        M = np.zeros((mm.nv, mm.nv))
        mujoco.mj_fullM(mm, md, M)
        rate = (mm.dof_damping / np.diag(M)).max()
        mm.opt.timestep = min(mm.opt.timestep, 0.25 / rate)
    for scale in (1.0, 0.3, 0.1, 0.03):
        mujoco.mj_resetData(mm, md)
        set_state(md, (state[0], scale * state[1], state[2], state[3]))
        for _ in range(nstep):
            mujoco.mj_step(mm, md)
            if diverged(md):
                break
        else:
            return scale
    pytest.fail("MuJoCo diverges from every tried random state of this model")


@pytest.mark.parametrize("integrator", [Integrator.SEMIIMPLICIT, Integrator.RK4,
                                        Integrator.IMPLICIT, Integrator.IMPLICITFAST],
                         ids=lambda i: i.name)
@pytest.mark.parametrize("source", ["ours", "mujoco"])
def test_steps(model_path, source, integrator):
    """qpos, qvel, act after 1 and 100 steps, for every model: a state from which MuJoCo's own
    run stays finite is chosen first (run_settings), so no model is left uncompared."""
    mm, m = load_pair(model_path, source)
    mm.opt.integrator = int(integrator)          # MuJoCo's values
    state = random_state(mm, np.random.default_rng(2))
    scale = run_settings(mm, state)
    state = (state[0], scale * state[1], state[2], state[3])
    m.opt.integrator = integrator
    m.opt.timestep = mm.opt.timestep
    md, d = mujoco.MjData(mm), engine.make_data(m)
    set_state(md, state)
    set_state(d, state)
    # MuJoCo against itself from a state perturbed by 1e-14: how much rounding differences
    # grow over the run on this model (fast dynamics at a large timestep amplify them)
    mp = mujoco.MjData(mm)
    set_state(mp, state)
    mp.qvel[:] += 1e-14 * np.maximum(np.abs(state[1]), 1.0)
    done = 0
    for n in (1, 100):
        for _ in range(n - done):
            mujoco.mj_step(mm, md)
            mujoco.mj_step(mm, mp)
        engine.step(m, d, n - done)
        done = n
        assert not diverged(md)
        for name in ("qpos", "qvel", "act"):
            ref = getattr(md, name)
            if ref.size == 0:
                continue
            growth = np.abs(getattr(mp, name) - ref).max() / max(np.abs(ref).max(), 1e-12)
            assert_close(f"{name} after {n}", getattr(d, name), ref, tol=max(TOL, 10 * growth))
        assert d.time == pytest.approx(md.time, abs=1e-12)


NAIVE_MODELS = [str(DATA / "pipeline_features.xml"), str(DATA / "compiler_kinematics.xml"),
                str(DATA / "compiler_springs.xml"), str(SUITE / "humanoid.xml")]


@pytest.mark.parametrize("path", NAIVE_MODELS, ids=lambda p: pathlib.Path(p).stem)
def test_against_naive_references(path):
    """The inertia matrix (composite rigid bodies, sparse), the bias force (recursive
    Newton-Euler on com-based spatial quantities) and the kinetic energy against dense sums over
    bodies built from world-frame Jacobians (tests/naive.py), at random states."""
    import naive
    m = engine.load_model(path)
    m.opt.disableflags = m.opt.disableflags | DisableBit.CONSTRAINT
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_path(path)
    rng = np.random.default_rng(5)
    for _ in range(3):
        set_state(d, random_state(mm, rng))
        d.qfrc_bias[:] = np.nan
        engine.forward(m, d)
        assert_close("inertia", engine.full_inertia(m, d), naive.crba(m, d))
        assert_close("qfrc_bias", d.qfrc_bias, naive.rne(m, d, d.qvel))
        assert_close("kinetic energy", engine.energy(m, d)[1],
                     naive.kinetic_energy(m, d, d.qvel))


def test_actuation_disabled():
    """With <flag actuation="disable"/> MuJoCo leaves actuator velocities, forces and activation
    derivatives at zero (lengths and moments are still computed); so does the engine."""
    path = str(DATA / "pipeline_features.xml")
    mm, m = load_pair(path, "ours")
    mm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ACTUATION)
    m.opt.disableflags = m.opt.disableflags | DisableBit.ACTUATION
    md, d = mujoco.MjData(mm), engine.make_data(m)
    state = random_state(mm, np.random.default_rng(4))
    set_state(md, state)
    set_state(d, state)
    mujoco.mj_forward(mm, md)
    for name in FIELDS + ["act_dot"]:
        getattr(d, name)[...] = np.nan
    engine.forward(m, d)
    for name in FIELDS + ["act_dot"]:
        assert_close(name, getattr(d, name), getattr(md, name))
    assert not md.actuator_velocity.any() and md.actuator_length.any()

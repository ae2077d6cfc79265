"""Finite-difference derivatives: transition_fd and inverse_fd against MuJoCo's mjd_transitionFD
and mjd_inverseFD on smooth models, and against a plain loop of full steps (every stage
recomputed, the whole Data restored between steps) on models with contacts."""
import pathlib

import mujoco
import numpy as np
import pytest

import dm_control
import engine
from engine import DisableBit, Integrator, Solver
from engine.derivative_fd import state_diff
from engine.forward import integrate_pos
from mj_adapter import random_qpos

SUITE = pathlib.Path(dm_control.__file__).parent / "suite"
TOL = 1e-6          # relative to the largest entry of the matrix

# a free body, a hinge with damping, a ball joint, a slide with a spring, motors, a position
# servo (length-dependent bias), a filter and an integrator actuator (activations)
OWN = """
<mujoco>
  <option timestep="0.01"/>
  <worldbody>
    <body pos="0 0 1"><freejoint/><geom type="box" size=".1 .2 .3"/></body>
    <body pos="1 0 2">
      <joint name="a" axis="0 1 0" damping="0.3" armature="0.05"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <body pos="0 0 -0.5">
        <joint name="b" type="ball" damping=".1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 -0.4" size="0.04"/>
        <body pos="0.3 0 -0.4">
          <joint name="c" type="slide" axis="1 0 0" stiffness="3"/>
          <geom type="sphere" size="0.05"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="a" ctrlrange="-1 1" ctrllimited="true"/>
    <position joint="c" kp="5"/>
    <general joint="a" dyntype="filter" dynprm="0.1" gainprm="2"/>
    <general joint="c" dyntype="integrator" gainprm="1" biastype="affine" biasprm="0 -2 -1"/>
  </actuator>
</mujoco>"""


def load_smooth(source):
    """(MuJoCo model, our model) with constraints disabled; source: a suite name or OWN."""
    if source == "own":
        mm = mujoco.MjModel.from_xml_string(OWN)
        m = engine.load_model_from_string(OWN)
    else:
        path = str(SUITE / f"{source}.xml")
        mm = mujoco.MjModel.from_xml_path(path)
        m = engine.load_model(path)
    mm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    m.opt.disableflags = m.opt.disableflags | DisableBit.CONSTRAINT
    # MuJoCo's transition FD does not take RK4; both engines use semi-implicit Euler
    mm.opt.integrator = int(mujoco.mjtIntegrator.mjINT_EULER)
    m.opt.integrator = Integrator.SEMIIMPLICIT
    return mm, m


def random_state(mm, rng, scale=0.3):
    qpos = random_qpos(mm, rng, scale)
    qvel = rng.standard_normal(mm.nv)
    lo, hi = mm.actuator_ctrlrange[:, 0], mm.actuator_ctrlrange[:, 1]
    limited = mm.actuator_ctrllimited.astype(bool)
    ctrl = np.where(limited, rng.uniform(lo, hi), rng.standard_normal(mm.nu))
    act = rng.uniform(-1.0, 1.0, mm.na)
    return qpos, qvel, ctrl, act


def set_state(d, state):
    d.qpos[:], d.qvel[:], d.ctrl[:], d.act[:] = state


def rel_err(ours, ref):
    return np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-12)


@pytest.mark.parametrize("source", ["own", "humanoid", "cheetah", "cartpole", "walker"])
@pytest.mark.parametrize("centered", [False, True])
def test_transition_fd_against_mujoco(source, centered):
    mm, m = load_smooth(source)
    md, d = mujoco.MjData(mm), engine.make_data(m)
    ndx = 2 * mm.nv + mm.na
    rng = np.random.default_rng(7)
    for _ in range(2):
        state = random_state(mm, rng)
        set_state(md, state)
        set_state(d, state)
        A0, B0 = np.zeros((ndx, ndx)), np.zeros((ndx, mm.nu))
        mujoco.mjd_transitionFD(mm, md, 1e-6, centered, A0, B0, None, None)
        A, B = engine.transition_fd(m, d, eps=1e-6, centered=centered)
        assert A.shape == (ndx, ndx) and B.shape == (ndx, mm.nu)
        assert rel_err(A, A0) < TOL, rel_err(A, A0)
        if mm.nu:
            assert rel_err(B, B0) < TOL, rel_err(B, B0)


@pytest.mark.parametrize("source", ["own", "cheetah"])
@pytest.mark.parametrize("integrator", ["IMPLICIT", "IMPLICITFAST"])
def test_transition_fd_implicit_against_mujoco(source, integrator):
    """The implicit integrators, whose step reuses stages as the semi-implicit one does."""
    mm, m = load_smooth(source)
    mm.opt.integrator = int(getattr(mujoco.mjtIntegrator, "mjINT_" + integrator))
    m.opt.integrator = Integrator[integrator]
    md, d = mujoco.MjData(mm), engine.make_data(m)
    ndx = 2 * mm.nv + mm.na
    state = random_state(mm, np.random.default_rng(5))
    set_state(md, state)
    set_state(d, state)
    A0, B0 = np.zeros((ndx, ndx)), np.zeros((ndx, mm.nu))
    mujoco.mjd_transitionFD(mm, md, 1e-6, False, A0, B0, None, None)
    A, B = engine.transition_fd(m, d, eps=1e-6, centered=False)
    assert rel_err(A, A0) < TOL, rel_err(A, A0)
    assert rel_err(B, B0) < TOL, rel_err(B, B0)


def test_control_at_its_limit_is_nudged_inwards():
    """A control at the top of its range gets a backward difference (as in MuJoCo), one
    beyond the range a zero column; centered differences become one-sided there."""
    mm, m = load_smooth("own")
    md, d = mujoco.MjData(mm), engine.make_data(m)
    state = random_state(mm, np.random.default_rng(3))
    for ctrl0, expect_zero in ((1.0, False), (1.5, True)):
        state[2][0] = ctrl0
        set_state(md, state)
        set_state(d, state)
        ndx = 2 * mm.nv + mm.na
        A0, B0 = np.zeros((ndx, ndx)), np.zeros((ndx, mm.nu))
        mujoco.mjd_transitionFD(mm, md, 1e-6, True, A0, B0, None, None)
        _, B = engine.transition_fd(m, d, eps=1e-6, centered=True)
        assert rel_err(B, B0) < TOL
        assert (np.abs(B[:, 0]).max() == 0.0) == expect_zero


@pytest.mark.parametrize("source", ["own", "humanoid", "cheetah"])
def test_inverse_fd_against_mujoco(source):
    """MuJoCo with its discrete-time inverse (invdiscrete: implicit damping in the inverse, the
    engine's convention); our Jacobians are the transposes of MuJoCo's output arrays."""
    mm, m = load_smooth(source)
    mm.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_INVDISCRETE)
    md, d = mujoco.MjData(mm), engine.make_data(m)
    rng = np.random.default_rng(11)
    for actuation in (False, True):
        set_state(md, random_state(mm, rng))
        set_state(d, (md.qpos, md.qvel, md.ctrl, md.act))
        md.qacc[:] = d.qacc[:] = rng.standard_normal(mm.nv)
        ref = [np.zeros((mm.nv, mm.nv)) for _ in range(3)]
        mujoco.mjd_inverseFD(mm, md, 1e-6, actuation, *ref, None, None, None, None)
        qpos = d.qpos.copy()
        ours = engine.inverse_fd(m, d, eps=1e-6, actuation=actuation)
        assert np.array_equal(d.qpos, qpos)
        for name, x, y in zip(("DfDq", "DfDv", "DfDa"), ours, ref):
            assert rel_err(x, y.T) < TOL, (name, rel_err(x, y.T))


# ------------------------------------------------------------------------------------------------
# with contacts: against a plain loop of full steps
# ------------------------------------------------------------------------------------------------
CONTACTS = """
<mujoco>
  <option timestep="0.005" iterations="4" tolerance="0"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 0.09"><freejoint/><geom type="box" size=".1 .1 .1" friction="0.6"/></body>
    <body pos="0.5 0 0.04">
      <joint name="lift" type="slide" axis="0 0 1"/>
      <joint name="roll" type="hinge" axis="1 0 0" damping="0.1"/>
      <geom type="capsule" fromto="-.2 0 0 .2 0 0" size="0.05"/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="lift" gear="20"/>
    <general joint="roll" dyntype="filter" dynprm="0.05"/>
  </actuator>
</mujoco>"""


def snapshot(d):
    return {k: v.copy() for k, v in d._arrays.items()}


def restore(d, snap):
    for k, v in snap.items():
        d._arrays[k][...] = v


def plain_fd(m, d, eps, centered):
    """A, B by full engine.step calls from a wholly restored Data (every field)."""
    nv, na, nu = m.nv, m.na, m.nu
    snap = snapshot(d)

    def next_state(name=None, i=0, s=0.0):
        restore(d, snap)
        if name == "qpos":
            dpos = np.zeros(nv)
            dpos[i] = 1.0
            integrate_pos(m._struct, d.qpos, dpos, s)
        elif name is not None:
            getattr(d, name)[i] += s
        engine.step(m, d)
        out = np.concatenate([d.qpos, d.qvel, d.act])
        restore(d, snap)
        return out

    def column(name, i):
        plus = next_state(name, i, eps)
        if centered:
            return diff(next_state(name, i, -eps), plus, 2 * eps)
        return diff(nominal, plus, eps)

    def diff(s1, s2, h):
        ds = np.empty(2 * nv + na)
        state_diff(m._struct, ds, s1, s2, h)
        return ds

    nominal = next_state()
    A = np.array([column(name, i) for name, n in (("qpos", nv), ("qvel", nv), ("act", na))
                  for i in range(n)]).T
    B = np.array([column("ctrl", i) for i in range(nu)]).T
    return A, B


@pytest.mark.parametrize("solver", [Solver.PGS, Solver.NEWTON])
def test_stage_skipping_and_warm_start_match_full_steps(solver):
    """With contacts, a few solver iterations and a warm start from the previous step, the
    compiled loop (which reuses stages and restores only the state) gives the matrices of
    full steps from a wholly restored Data, bit for bit; the state and the next step are
    unchanged bitwise, and the computed fields are the unperturbed step's."""
    m = engine.load_model_from_string(CONTACTS)
    m.opt.solver = solver
    d = engine.make_data(m)
    d.qvel[:] = 0.3 * np.random.default_rng(5).standard_normal(m.nv)
    d.ctrl[:] = [0.3, -0.2]
    engine.step(m, d, 20)                 # contacts, and a warm start from the last step
    assert d.ncon >= 5
    for centered in (False, True):
        A0, B0 = plain_fd(m, d, 1e-6, centered)
        before = snapshot(d)
        A, B = engine.transition_fd(m, d, centered=centered)
        assert np.array_equal(A, A0) and np.array_equal(B, B0)
        for name in ("qpos", "qvel", "act", "ctrl", "time", "qacc_warmstart", "efc_warm",
                     "warm_nefc", "warm_contact_pos"):
            assert np.array_equal(d._arrays[name], before[name]), name
        after_fd = snapshot(d)
        restore(d, before)
        engine.step(m, d)
        stepped = snapshot(d)
        restore(d, after_fd)
        for name in ("qacc", "efc_force", "contact_pos", "qfrc_constraint"):
            assert np.array_equal(d._arrays[name], stepped[name]), name
        engine.step(m, d)
        assert np.array_equal(d.qpos, stepped["qpos"]) and np.array_equal(d.qvel, stepped["qvel"])
        restore(d, before)


def test_contacts_growing_in_perturbed_steps():
    """Data too small for the contacts of the steps: it grows and the result is unchanged
    (without warm start: the small Data cannot hold the previous step's rows)."""
    m = engine.load_model_from_string(CONTACTS)
    m.opt.disableflags = m.opt.disableflags | DisableBit.WARMSTART
    d = engine.make_data(m)
    engine.step(m, d, 20)
    A0, B0 = engine.transition_fd(m, d)
    small = engine.types.Data(m, nconmax=1, njmax=4)
    restore_common(small, d)
    A, B = engine.transition_fd(m, small)
    assert small.nconmax > 1
    assert np.array_equal(A, A0) and np.array_equal(B, B0)


def restore_common(dst, src):
    """Copy src's fields into dst where the shapes allow (the leading rows otherwise)."""
    for k, v in src._arrays.items():
        w = dst._arrays[k]
        if w.shape == v.shape:
            w[...] = v
        else:
            n = min(w.shape[0], v.shape[0])
            w[:n] = v[:n]


def test_bad_eps():
    m = engine.load_model_from_string(OWN)
    d = engine.make_data(m)
    for eps in (0.0, -1e-6, float("nan")):
        with pytest.raises(ValueError, match="eps"):
            engine.transition_fd(m, d, eps=eps)
        with pytest.raises(ValueError, match="eps"):
            engine.inverse_fd(m, d, eps=eps)

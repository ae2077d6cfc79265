"""Adhesion actuators (body transmission, MuJoCo's mjTRN_BODY): the moment is minus the mean
of the normal Jacobians of the body's contacts, from their constraint rows (elliptic or
pyramidal cones) or, for contacts in the gap, from the contact frame. Against MuJoCo near
contact, with constraints on; a box held under a ceiling; and the inverse dynamics."""
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from test_smooth_oracle import assert_close
from test_tendon_wrap import dense_rows

MODEL = str(pathlib.Path(__file__).parent / "data" / "adhesion.xml")


def states(mm, rng, n):
    """qpos near qpos0 (within a few millimetres: contacts penetrating, within the margin and
    in the gap), random velocities and controls."""
    for _ in range(n):
        qpos = mm.qpos0 + 0.004 * rng.standard_normal(mm.nq)
        for j in range(mm.njnt):
            if mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                a = mm.jnt_qposadr[j] + 3
                qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
        yield qpos, 0.1 * rng.standard_normal(mm.nv), rng.uniform(0, 1, mm.nu)


@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
def test_against_mujoco(cone):
    mm = mujoco.MjModel.from_xml_path(MODEL)
    m = engine.load_model(MODEL)
    mm.opt.cone = getattr(mujoco.mjtCone, "mjCONE_" + cone.upper())
    m.opt.cone = getattr(engine.Cone, cone.upper())
    md, d = mujoco.MjData(mm), engine.make_data(m)
    rng = np.random.default_rng(1)
    rows = gaps = 0
    for qpos, qvel, ctrl in states(mm, rng, 30):
        for data in (md, d):
            data.qpos[:], data.qvel[:], data.ctrl[:] = qpos, qvel, ctrl
        mujoco.mj_forward(mm, md)
        d.actuator_moment[...] = d.qfrc_actuator[...] = d.actuator_force[...] = np.nan
        engine.forward(m, d)
        assert int(np.ravel(d.ncon)[0]) == md.ncon
        moment = dense_rows(md.actuator_moment, md.moment_rownnz, md.moment_rowadr,
                            md.moment_colind, mm.nu, mm.nv)
        assert_close("actuator_moment", d.actuator_moment, moment, tol=1e-12)
        assert_close("actuator_force", d.actuator_force, md.actuator_force, tol=1e-12)
        assert_close("qfrc_actuator", d.qfrc_actuator, md.qfrc_actuator, tol=1e-12)
        assert not d.actuator_length.any()
        rows += int(np.sum(md.contact.exclude == 0))
        gaps += int(np.sum(md.contact.exclude == 1))
    assert rows > 20 and gaps > 20         # both kinds of contact were exercised


def test_box_held_under_a_ceiling():
    """The hanging box (0.1 kg, weight 0.98 N) touches the ceiling: with the adhesion gain 3 N
    and ctrl = 1 it stays there for a second; with ctrl = 0 it falls."""
    m = engine.load_model(MODEL)
    b = engine.name2id(m, "body", "hanging")
    a = engine.name2id(m, "actuator", "hanging")
    for ctrl, stays in ((1.0, True), (0.0, False)):
        d = engine.make_data(m)
        d.ctrl[a] = ctrl
        engine.step(m, d, int(1.0 / m.opt.timestep))
        top = d.xpos[b, 2] + 0.03
        assert (abs(top - 0.6) < 0.005) == stays, top


def test_inverse_dynamics_with_adhesion():
    """Steps with adhesion pulling bodies onto the floor and the wall (Newton converged): the
    inverse gives back qfrc_applied + qfrc_actuator, the moments following from the contacts
    that the inverse detects itself."""
    m = engine.load_model(MODEL)
    m.opt.solver = engine.Solver.NEWTON
    m.opt.tolerance = 1e-14
    mm = mujoco.MjModel.from_xml_path(MODEL)
    d = engine.make_data(m)
    for qpos, qvel, ctrl in states(mm, np.random.default_rng(2), 5):
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, qvel, ctrl
        engine.forward(m, d)
        assert np.abs(d.qfrc_actuator).max() > 0.1
        applied = d.qfrc_applied + d.qfrc_actuator
        engine.step(m, d)
        d.qacc[:] = (d.qvel - qvel) / m.opt.timestep
        d.qpos[:], d.qvel[:] = qpos, qvel
        engine.inverse(m, d)
        assert_close("qfrc_inverse", d.qfrc_inverse, applied, tol=1e-8)

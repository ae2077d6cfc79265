"""The ellipsoid fluid model (tests/data/fluid_ellipsoid.xml) against MuJoCo: the compiled
coefficients (virtual mass and inertia by Gauss-Kronrod quadrature), the fluid forces at random
states through both model sources, millimetre geoms and bodies at rest; and the inverse
dynamics, which accounts for them as passive forces."""
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from engine import DisableBit
from mj_adapter import model_from_mujoco
from test_smooth_oracle import assert_close, random_state, set_state

DATA = pathlib.Path(__file__).parent / "data"
MODEL = str(DATA / "fluid_ellipsoid.xml")


def test_coefficients_like_mujoco():
    m = engine.load_model(MODEL)
    mm = mujoco.MjModel.from_xml_path(MODEL)
    assert_close("geom_fluid", m.geom_fluid, mm.geom_fluid, tol=1e-13)
    assert (m.geom_fluid[:, 0] == 1).sum() == 8 and (m.geom_fluid[:, 6:] > 0).any()


@pytest.mark.parametrize("source", ["ours", "mujoco"])
def test_forces_against_mujoco(source):
    mm = mujoco.MjModel.from_xml_path(MODEL)
    mm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    m = engine.load_model(MODEL) if source == "ours" else model_from_mujoco(mm)
    m.opt.disableflags = m.opt.disableflags | DisableBit.CONSTRAINT
    md, d = mujoco.MjData(mm), engine.make_data(m)
    rng = np.random.default_rng(4)
    for k in range(10):
        state = random_state(mm, rng)
        if k == 0:
            state = (state[0], 0 * state[1], state[2], state[3])   # at rest: wind only
        set_state(md, state)
        set_state(d, state)
        mujoco.mj_forward(mm, md)
        d.qfrc_fluid[:] = d.qfrc_passive[:] = np.nan
        engine.forward(m, d)
        assert_close("qfrc_fluid", d.qfrc_fluid, md.qfrc_fluid, tol=1e-12)
        assert_close("qfrc_passive", d.qfrc_passive, md.qfrc_passive, tol=1e-12)


@pytest.mark.parametrize("size", ["0.002 0.001 0.0015", "0.0005 0.0004 0.0003"])
def test_millimetre_geoms(size):
    """Projected areas of geoms of millimetres: MuJoCo 4 divides without a floor."""
    xml = (f'<mujoco><option density="1000" viscosity="0.001"/><worldbody><body><freejoint/>'
           f'<geom type="ellipsoid" size="{size}" fluidshape="ellipsoid"/></body></worldbody>'
           '</mujoco>')
    m = engine.load_model_from_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    d, md = engine.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(1)
    for scale in (1.0, 0.01, 0.0):
        qvel = scale * rng.standard_normal(6)
        d.qvel[:], md.qvel[:] = qvel, qvel
        engine.forward(m, d)
        mujoco.mj_forward(mm, md)
        assert np.isfinite(d.qfrc_fluid).all()
        assert_close("qfrc_fluid", d.qfrc_fluid, md.qfrc_fluid, tol=1e-12)


def test_inverse_dynamics_with_fluid_forces():
    """Steps through the medium (no contacts): the inverse gives back the applied forces, the
    fluid forces being passive forces of the state."""
    m = engine.load_model(MODEL)
    mm = mujoco.MjModel.from_xml_path(MODEL)
    d = engine.make_data(m)
    rng = np.random.default_rng(8)
    for _ in range(5):
        set_state(d, random_state(mm, rng))
        d.qfrc_applied[:] = rng.standard_normal(m.nv)
        qpos, qvel = d.qpos.copy(), d.qvel.copy()
        engine.forward(m, d)
        assert np.abs(d.qfrc_fluid).max() > 1e-3
        engine.step(m, d)
        qacc = (d.qvel - qvel) / m.opt.timestep
        applied = d.qfrc_applied.copy()
        d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel, qacc
        engine.inverse(m, d)
        assert_close("qfrc_inverse", d.qfrc_inverse, applied, tol=1e-9)

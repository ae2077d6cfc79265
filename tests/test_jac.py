"""engine.jac (MuJoCo's mj_jac) against mujoco.mj_jac on random states, and the stat.center /
extent of the studio's camera framing against MuJoCo's m.stat."""
from __future__ import annotations

import os

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
dm_control = pytest.importorskip("dm_control")

import engine  # noqa: E402

SUITE = os.path.join(os.path.dirname(dm_control.__file__), "suite")


@pytest.mark.parametrize("name", ["humanoid.xml", "cheetah.xml", "manipulator.xml"])
def test_jac_matches_mujoco(name):
    from mj_adapter import model_from_mujoco
    mm = mujoco.MjModel.from_xml_path(os.path.join(SUITE, name))
    md = mujoco.MjData(mm)
    m = model_from_mujoco(mm)
    d = engine.make_data(m)
    rng = np.random.default_rng(0)
    for trial in range(3):
        qpos = mm.qpos0 + 0.3 * rng.standard_normal(mm.nq)
        for j in range(mm.njnt):                       # quaternions stay unit
            if mm.jnt_type[j] in (0, 1):
                a = mm.jnt_qposadr[j] + (3 if mm.jnt_type[j] == 0 else 0)
                qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
        md.qpos[:] = d.qpos[:] = qpos
        mujoco.mj_forward(mm, md)
        engine.forward(m, d)
        for b in range(mm.nbody):
            point = md.xpos[b] + rng.standard_normal(3) * 0.2
            jp, jr = np.full((3, mm.nv), np.nan), np.full((3, mm.nv), np.nan)
            mujoco.mj_jac(mm, md, jp, jr, point, b)
            ours_p, ours_r = engine.jac(m, d, point, b)
            np.testing.assert_allclose(ours_p, jp, atol=1e-10)
            np.testing.assert_allclose(ours_r, jr, atol=1e-10)


def test_jac_is_the_velocity_of_the_point():
    m = engine.load_model(os.path.join(SUITE, "humanoid.xml"))
    d = engine.make_data(m)
    rng = np.random.default_rng(1)
    d.qvel[:] = rng.standard_normal(m.nv)
    engine.forward(m, d)
    b = engine.name2id(m, "body", "head")
    point = d.xpos[b] + np.array([0.05, 0.02, 0.1])
    jp, jr = engine.jac(m, d, point, b)
    # finite difference of the point fixed in the body along qvel
    h = 1e-7
    local = d.xmat[b].reshape(3, 3).T @ (point - d.xpos[b])
    d2 = engine.make_data(m)
    d2.qpos[:] = d.qpos
    engine.step  # noqa: B018 (the integration below is the engine's own position update)
    from engine.forward import integrate_pos
    integrate_pos(m._struct, d2.qpos, d.qvel, h)
    engine.forward(m, d2)
    moved = d2.xpos[b] + d2.xmat[b].reshape(3, 3) @ local
    np.testing.assert_allclose(jp @ d.qvel, (moved - point) / h, rtol=1e-5, atol=1e-5)
    with pytest.raises(IndexError):
        engine.jac(m, d, point, m.nbody)


@pytest.mark.parametrize("name", ["humanoid.xml", "cheetah.xml", "cartpole.xml",
                                  "manipulator.xml"])
def test_model_statistic_matches_mujoco(name):
    """studio.camera.model_statistic is MuJoCo's setStat (here without <statistic> overrides,
    which MuJoCo applies after it)."""
    from studio.camera import model_statistic
    path = os.path.join(SUITE, name)
    mm = mujoco.MjModel.from_xml_path(path)
    m = engine.load_model(path)
    m.statistic.clear()
    d = engine.make_data(m)
    engine.forward(m, d)
    center, extent = model_statistic(m, d)
    spec = mujoco.MjSpec.from_file(path)
    spec.stat.extent = np.nan
    spec.stat.center = [np.nan, np.nan, np.nan]
    raw = spec.compile()
    np.testing.assert_allclose(center, raw.stat.center, atol=1e-9)
    assert extent == pytest.approx(raw.stat.extent, rel=1e-9)
    assert mm.stat.extent > 0

"""engine.ray against mujoco.mj_ray on random rays through random poses of every geom type."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

import engine
from engine.ray import ray

XML = """<mujoco>
  <asset>
    <mesh name="oct" vertex="0.2 0 0  -0.2 0 0  0 0.15 0  0 -0.15 0  0 0 0.1  0 0 -0.1"/>
    <mesh name="wedge" vertex="0 0 0  0.3 0 0  0 0.2 0  0 0 0.25  0.3 0 0.25  0 0.2 0.25"/>
    <material name="ghost" rgba="1 1 1 0"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1"/>
    <geom name="tilted" type="plane" size="0 0 1" pos="0 0 -1" euler="10 20 0"/>
    <geom name="post" type="box" size="0.1 0.1 0.5" pos="1.5 1.5 0.5" group="2"/>
    <body name="b1" pos="0 0 1"><freejoint/><geom name="sph" type="sphere" size="0.2"/></body>
    <body name="b2" pos="0.5 0 1"><freejoint/><geom name="cap" type="capsule" size="0.1 0.3"/></body>
    <body name="b3" pos="-0.5 0 1"><freejoint/><geom name="ell" type="ellipsoid" size="0.3 0.2 0.1"/></body>
    <body name="b4" pos="0 0.5 1"><freejoint/><geom name="cyl" type="cylinder" size="0.15 0.25"/></body>
    <body name="b5" pos="0 -0.5 1"><freejoint/><geom name="box" type="box" size="0.3 0.2 0.1" group="1"/></body>
    <body name="b6" pos="0.5 0.5 1"><freejoint/><geom name="oct" type="mesh" mesh="oct" group="3"/></body>
    <body name="b7" pos="-0.5 -0.5 1"><freejoint/><geom name="wedge" type="mesh" mesh="wedge"/></body>
    <body name="b8" pos="-0.5 0.5 1"><freejoint/>
      <geom name="hidden" type="sphere" size="0.2" rgba="1 0 0 0"/>
      <geom name="hidden_mat" type="box" size="0.1 0.1 0.1" pos="0.3 0 0" material="ghost"/>
    </body>
  </worldbody>
</mujoco>"""


@pytest.fixture(scope="module")
def models():
    mm = mujoco.MjModel.from_xml_string(XML)
    md = mujoco.MjData(mm)
    m = engine.load_model_from_string(XML)
    d = engine.make_data(m)
    assert m.ngeom == mm.ngeom
    return mm, md, m, d


def _random_pose(rng, mm, md, m, d):
    qpos = mm.qpos0.copy()
    for j in range(mm.njnt):
        a = mm.jnt_qposadr[j]
        qpos[a:a + 3] += rng.uniform(-0.3, 0.3, 3)
        q = rng.normal(size=4)
        qpos[a + 3:a + 7] = q / np.linalg.norm(q)
    md.qpos[:] = qpos
    mujoco.mj_forward(mm, md)
    d.qpos[:] = qpos
    engine.forward(m, d)
    np.testing.assert_allclose(d.geom_xpos, md.geom_xpos, atol=1e-9)


def _check(mm, md, m, d, pnt, vec, geomgroup=None, flg_static=True, bodyexclude=-1):
    gid = np.array([-1], dtype=np.int32)
    grp = None if geomgroup is None else np.asarray(geomgroup, dtype=np.uint8)
    n_ref = np.zeros(3)
    x_ref = mujoco.mj_ray(mm, md, pnt, vec, grp, int(flg_static), bodyexclude, gid, n_ref)
    g, x, n = ray(m, d, pnt, vec, geomgroup, flg_static, bodyexclude, normal=True)
    assert g == int(gid[0]), (pnt, vec, g, int(gid[0]), x, x_ref)
    # MuJoCo keeps mesh vertices in single precision
    tol = 1e-6 if g >= 0 and mm.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH else 1e-9
    assert x == pytest.approx(x_ref, rel=tol, abs=tol)
    # the outward surface normal at the hit (zero when nothing is hit)
    np.testing.assert_allclose(n, n_ref, atol=tol)
    assert ray(m, d, pnt, vec, geomgroup, flg_static, bodyexclude) == (g, x)
    return g


def test_random_rays_match_mujoco(models):
    mm, md, m, d = models
    rng = np.random.default_rng(0)
    hits = set()
    for _ in range(20):
        _random_pose(rng, mm, md, m, d)
        for _ in range(100):
            pnt = rng.uniform(-2, 2, 3) + np.array([0, 0, 1.0])
            target = md.geom_xpos[rng.integers(mm.ngeom)] + rng.normal(scale=0.15, size=3)
            vec = (target - pnt) * rng.uniform(0.2, 3.0)      # |vec| != 1: distance scales with it
            hits.add(_check(mm, md, m, d, pnt, vec))
    # every shape type was hit at least once (the hidden geoms never)
    assert {mm.geom(n).id for n in ("floor", "tilted", "post", "sph", "cap", "ell", "cyl", "box",
                                    "oct", "wedge")} <= hits
    assert mm.geom("hidden").id not in hits and mm.geom("hidden_mat").id not in hits


def test_rays_from_inside_and_along_axes(models):
    mm, md, m, d = models
    rng = np.random.default_rng(1)
    _random_pose(rng, mm, md, m, d)
    for g in range(mm.ngeom):
        for _ in range(20):
            pnt = md.geom_xpos[g] + rng.normal(scale=0.02, size=3)   # start inside the geom
            vec = rng.normal(size=3)
            _check(mm, md, m, d, pnt, vec)
    for axis in np.eye(3):
        for s in (-1.0, 1.0):
            _check(mm, md, m, d, np.array([0.01, 0.02, 1.0]), s * axis)


def test_filters_match_mujoco(models):
    mm, md, m, d = models
    rng = np.random.default_rng(2)
    _random_pose(rng, mm, md, m, d)
    for _ in range(300):
        pnt = rng.uniform(-2, 2, 3) + np.array([0, 0, 1.0])
        target = md.geom_xpos[rng.integers(mm.ngeom)]
        vec = target - pnt
        grp = rng.integers(0, 2, 6)
        _check(mm, md, m, d, pnt, vec, geomgroup=grp)
        _check(mm, md, m, d, pnt, vec, flg_static=False)
        _check(mm, md, m, d, pnt, vec, bodyexclude=int(rng.integers(0, mm.nbody)))


def test_miss_and_bad_vector(models):
    mm, md, m, d = models
    assert ray(m, d, [0, 0, 5.0], [0, 0, 1.0]) == (-1, -1.0)
    with pytest.raises(ValueError):
        ray(m, d, [0, 0, 5.0], [0, 0, 0.0])

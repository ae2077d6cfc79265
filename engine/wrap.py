"""Tendon wrapping around spheres and cylinders (MuJoCo's mju_wrap, engine_util_misc.c).

A spatial tendon segment between two sites that passes a wrapping geom is replaced by the
shortest path that does not enter it: a straight line to a tangent point, an arc (a great
circle of the sphere, a helix on the cylinder) and a straight line from a second tangent point.
The problem is solved in a 2D frame (the plane of the two sites and the sphere's centre, or the
cylinder's cross-section), where the tangent points from an outside point p to a circle of radius
r are (p r^2 -+ r sqrt(|p|^2 - r^2) perp(p)) / |p|^2. A side site picks the side of the circle the
tendon passes; a side site inside the circle makes the tendon pass through the inside of the
geom, along the shortest path that touches the circle once at the angle phi from the direction
of an end: the path's length is stationary when the two lines make equal angles with the radius,
asin(A sin phi) + asin(B sin phi) - 2 phi + G = 0 with A = r / |p0|, B = r / |p1| and G the angle
between p0 and p1, solved by Newton's method from phi = pi/2 to |g| <= 1e-6 (wrap_inside).

Which way a segment goes: a path from one end to the other sweeps the angles seen from the
centre clockwise or counterclockwise. Without a side point, a segment that clears the circle stays
straight and one that crosses it wraps on the side of the shorter chord. With a side point, the
path is the one that does not sweep the direction away from the side point (the side point is on
the path's side of the geom): the straight segment when it clears the circle and does not sweep
that direction, else the wrap around the other way. That is MuJoCo 4's rule, measured against the
mujoco 4.0 package by sweeping side points around spheres and cylinders (the boundaries are the
directions -p0 and -p1, whatever the radius); MuJoCo 3.x's source (engine_util_misc.c) wraps a
clear segment when the side point is opposite the segment's point nearest to the centre and picks
the pair of tangent points whose mean direction is closest to the side point. MuJoCo 3.x
also solved the inside wrap in z = sin(phi) from z = 1 - 1e-7; MuJoCo 4's touching points are
those of Newton's method in phi from pi/2 with the same stopping rule (they agree with it to
1e-15 on random wraps, and differ from the z iteration's by up to 1e-7: the stopping rule leaves
the point short of the optimum by up to ~1e-6 rad; the length, stationary there, is exact).
"""
import math

from .enums import WrapType
from .jit import jit
from .math import MINVAL, cross3, dot3, mulmattvec3, mulmatvec3, norm3, scl3, sub3

SPHERE = int(WrapType.SPHERE)
CYLINDER = int(WrapType.CYLINDER)


@jit
def _normalize2(x, y):
    """(x, y) / |(x, y)| (MuJoCo's mju_normalize: (1, 0) for a zero vector)."""
    n = math.sqrt(x * x + y * y)
    if n < MINVAL:
        return 1.0, 0.0
    s = 1.0 / n
    return x * s, y * s


@jit
def _normalize3(v):
    """v / |v| (MuJoCo's mju_normalize3: (1, 0, 0) for a zero vector) and |v|."""
    n = norm3(v)
    if n < MINVAL:
        return (1.0, 0.0, 0.0), n
    s = 1.0 / n
    return (v[0] * s, v[1] * s, v[2] * s), n


@jit
def _acos(x):
    return math.acos(min(1.0, max(-1.0, x)))


@jit
def _asin(x):
    return math.asin(min(1.0, max(-1.0, x)))


@jit
def _segments_intersect(a0, a1, b0, b1, c0, c1, d0, d1):
    """Do the 2D segments a-b and c-d intersect?"""
    det = (d1 - c1) * (b0 - a0) - (d0 - c0) * (b1 - a1)
    if abs(det) < MINVAL:
        return False
    s = ((d0 - c0) * (a1 - c1) - (d1 - c1) * (a0 - c0)) / det
    t = ((b0 - a0) * (a1 - c1) - (b1 - a1) * (a0 - c0)) / det
    return 0.0 <= s <= 1.0 and 0.0 <= t <= 1.0


@jit
def _arc_length(p0x, p0y, p1x, p1y, ind, radius):
    """Length of the arc of the circle from p0 to p1, the long way round when ind says so."""
    ax, ay = _normalize2(p0x, p0y)
    bx, by = _normalize2(p1x, p1y)
    angle = _acos(ax * bx + ay * by)
    cross = p0y * p1x - p0x * p1y
    if (cross > 0.0 and ind) or (cross < 0.0 and not ind):
        angle = 2.0 * math.pi - angle
    return radius * angle


@jit
def _tangents(e0, e1, e2, e3, sgn, radius, sqrad, sqrt0, sqrt1):
    """The tangent points from the two ends on one side: sgn = 1 clockwise of the ends
    (as seen from the centre), -1 counterclockwise: (p r^2 -+ r sqrt(|p|^2 - r^2) perp(p)) / |p|^2."""
    q0 = (e0 * sqrad + sgn * radius * e1 * sqrt0) / (e0 * e0 + e1 * e1)
    q1 = (e1 * sqrad - sgn * radius * e0 * sqrt0) / (e0 * e0 + e1 * e1)
    q2 = (e2 * sqrad - sgn * radius * e3 * sqrt1) / (e2 * e2 + e3 * e3)
    q3 = (e3 * sqrad + sgn * radius * e2 * sqrt1) / (e2 * e2 + e3 * e3)
    return q0, q1, q2, q3


@jit
def _in_ccw_sweep(e0, e1, e2, e3, rx, ry):
    """Is the direction (rx, ry) strictly inside the angles swept counterclockwise from the
    direction of (e0, e1) to that of (e2, e3)?"""
    c01 = e0 * e3 - e1 * e2
    c0r = e0 * ry - e1 * rx
    cr1 = rx * e3 - ry * e2
    if c01 > 0.0:
        return c0r > 0.0 and cr1 > 0.0
    if c01 < 0.0:
        return not (c0r <= 0.0 and cr1 <= 0.0)
    return c0r > 0.0


@jit
def wrap_circle(e0, e1, e2, e3, has_side, s0, s1, radius):
    """Wrap of the 2D segment (e0, e1)-(e2, e3) around the circle of the given radius at the
    origin, on the side of (s0, s1) if has_side: (arc length or -1, tangent points).

    A path from one end to the other sweeps the angles (as seen from the centre) from one end's
    direction to the other's, clockwise or counterclockwise; with a side point, the path is the
    one that does not sweep the direction away from the side point: the straight segment if it
    clears the circle and does not sweep it, else the wrap on the other side. Without a side
    point, a segment that crosses the circle wraps on the side of the shorter chord."""
    none = (-1.0, 0.0, 0.0, 0.0, 0.0)
    sqlen0 = e0 * e0 + e1 * e1
    sqlen1 = e2 * e2 + e3 * e3
    sqrad = radius * radius
    # an end inside the circle, or a circle too small: no wrap
    if sqlen0 < sqrad or sqlen1 < sqrad or radius < MINVAL:
        return none
    dx = e2 - e0
    dy = e3 - e1
    dd = dx * dx + dy * dy
    if dd < MINVAL:
        return none
    # the segment's point nearest to the centre: does the segment clear the circle?
    a = -(dx * e0 + dy * e1) / dd
    a = min(max(a, 0.0), 1.0)
    tx = a * dx + e0
    ty = a * dy + e1
    clear = tx * tx + ty * ty > sqrad
    away_ccw = has_side and _in_ccw_sweep(e0, e1, e2, e3, -s0, -s1)
    if clear:
        straight_ccw = e0 * e3 - e1 * e2 > 0.0
        if not has_side or away_ccw != straight_ccw:
            return none
    sqrt0 = math.sqrt(sqlen0 - sqrad)
    sqrt1 = math.sqrt(sqlen1 - sqrad)
    a0, a1, a2, a3 = _tangents(e0, e1, e2, e3, 1.0, radius, sqrad, sqrt0, sqrt1)
    b0, b1, b2, b3 = _tangents(e0, e1, e2, e3, -1.0, radius, sqrad, sqrt0, sqrt1)
    if has_side:
        # clockwise (the first pair) when the direction away from the side point is swept
        # counterclockwise
        use_a = away_ccw
    else:
        # the shorter chord, unless its lines to the ends cross each other
        good_a = -((a0 - a2) * (a0 - a2) + (a1 - a3) * (a1 - a3))
        good_b = -((b0 - b2) * (b0 - b2) + (b1 - b3) * (b1 - b3))
        if _segments_intersect(e0, e1, a0, a1, e2, e3, a2, a3):
            good_a = -10000.0
        if _segments_intersect(e0, e1, b0, b1, e2, e3, b2, b3):
            good_b = -10000.0
        use_a = good_a > good_b
    if use_a:
        best, sol = 0, (a0, a1, a2, a3)
    else:
        best, sol = 1, (b0, b1, b2, b3)
    if _segments_intersect(e0, e1, sol[0], sol[1], e2, e3, sol[2], sol[3]):
        return none
    return (_arc_length(sol[0], sol[1], sol[2], sol[3], best, radius),
            sol[0], sol[1], sol[2], sol[3])


@jit
def wrap_inside(e0, e1, e2, e3, radius):
    """Path from (e0, e1) to (e2, e3) through the inside of the circle touching it once: (0 or
    -1 for no wrap, the touching point twice). Both ends are outside the circle and the segment
    between them does not cross it."""
    none = (-1.0, 0.0, 0.0, 0.0, 0.0)
    len0 = math.sqrt(e0 * e0 + e1 * e1)
    len1 = math.sqrt(e2 * e2 + e3 * e3)
    dx = e2 - e0
    dy = e3 - e1
    dd = dx * dx + dy * dy
    if (len0 <= radius or len1 <= radius or radius < MINVAL or len0 < MINVAL
            or len1 < MINVAL):
        return none
    if dd > MINVAL:
        a = -(dx * e0 + dy * e1) / dd
        if 0.0 < a < 1.0:
            tx = e0 + a * dx
            ty = e1 + a * dy
            if math.sqrt(tx * tx + ty * ty) <= radius:
                return none
    # fallback on numerical failure: the circle point in the mean direction of the ends
    px, py = _normalize2(0.5 * (e0 + e2), 0.5 * (e1 + e3))
    fallback = (0.0, px * radius, py * radius, px * radius, py * radius)
    # solve g(phi) = asin(A sin phi) + asin(B sin phi) - 2 phi + G = 0 by Newton's method from
    # phi = pi/2, until |g| <= 1e-6 (MuJoCo 4; see the module docstring)
    A = radius / len0
    B = radius / len1
    cosG = (len0 * len0 + len1 * len1 - dd) / (2.0 * len0 * len1)
    if cosG < -1.0 + MINVAL:
        return none
    if cosG > 1.0 - MINVAL:
        return fallback
    G = math.acos(cosG)
    phi = 0.5 * math.pi
    g = _asin(A) + _asin(B) - math.pi + G
    if g > 0.0:
        return fallback
    it = 0
    while it < 20 and abs(g) > 1e-6:
        s = math.sin(phi)
        c = math.cos(phi)
        dg = (A * c / max(MINVAL, math.sqrt(1.0 - A * A * s * s))
              + B * c / max(MINVAL, math.sqrt(1.0 - B * B * s * s)) - 2.0)
        if dg > -MINVAL:
            return fallback
        phi1 = phi - g / dg
        if phi1 > phi:
            return fallback
        phi = phi1
        s = math.sin(phi)
        g = _asin(A * s) + _asin(B * s) - 2.0 * phi + G
        if g > 1e-6:
            return fallback
        it += 1
    if it >= 20:
        return fallback
    # the touching point: the end direction rotated by the angle found
    if e0 * e3 - e1 * e2 > 0.0:
        vx, vy = _normalize2(e0, e1)
        ang = phi - _asin(A * math.sin(phi))
    else:
        vx, vy = _normalize2(e2, e3)
        ang = phi - _asin(B * math.sin(phi))
    qx = radius * (math.cos(ang) * vx - math.sin(ang) * vy)
    qy = radius * (math.sin(ang) * vx + math.cos(ang) * vy)
    return 0.0, qx, qy, qx, qy


@jit
def wrap(x0, x1, xpos, xmat, radius, wtype, has_side, side):
    """Wrap the segment x0-x1 around a sphere or cylinder (frame xpos, xmat; the cylinder's axis
    is its z axis), on the side of the point `side` if has_side: (length of the wrapped part or
    -1 if the segment does not touch the geom, first and second tangent points)."""
    zero = (0.0, 0.0, 0.0)
    p0 = mulmattvec3(xmat, sub3(x0, xpos))
    p1 = mulmattvec3(xmat, sub3(x1, xpos))
    if norm3(p0) < MINVAL or norm3(p1) < MINVAL:
        return -1.0, zero, zero
    # 2D frame: the plane of p0, p1 and the centre (sphere), the cross-section (cylinder)
    if wtype == SPHERE:
        axis0, _ = _normalize3(p0)
        normal, nrm = _normalize3(cross3(p0, p1))
        if nrm < MINVAL:
            # p0, p1 and the centre on a line: any plane through them
            i = 0
            if abs(axis0[1]) > abs(axis0[0]) and abs(axis0[1]) > abs(axis0[2]):
                i = 1
            if abs(axis0[2]) > abs(axis0[0]) and abs(axis0[2]) > abs(axis0[1]):
                i = 2
            other = (0.0 if i == 0 else 1.0, 0.0 if i == 1 else 1.0, 0.0 if i == 2 else 1.0)
            normal, _ = _normalize3(cross3(axis0, other))
        axis1, _ = _normalize3(cross3(normal, axis0))
    else:
        axis0 = (1.0, 0.0, 0.0)
        axis1 = (0.0, 1.0, 0.0)
    d0 = dot3(p0, axis0)
    d1 = dot3(p0, axis1)
    d2 = dot3(p1, axis0)
    d3 = dot3(p1, axis1)
    inside = False
    s0 = s1 = 0.0
    if has_side:
        s = mulmattvec3(xmat, sub3(side, xpos))
        s0, s1 = _normalize2(dot3(s, axis0), dot3(s, axis1))
        s0 *= radius
        s1 *= radius
        inside = norm3(s) < radius
    if inside:
        wlen, q0, q1, q2, q3 = wrap_inside(d0, d1, d2, d3, radius)
    else:
        wlen, q0, q1, q2, q3 = wrap_circle(d0, d1, d2, d3, has_side, s0, s1, radius)
    if wlen < 0.0:
        return -1.0, zero, zero
    # back to 3D in the geom frame: axis0 q_x + axis1 q_y
    r0 = scl3(axis0, q0)
    t = scl3(axis1, q1)
    r0 = (r0[0] + t[0], r0[1] + t[1], r0[2] + t[2])
    r1 = scl3(axis0, q2)
    t = scl3(axis1, q3)
    r1 = (r1[0] + t[0], r1[1] + t[1], r1[2] + t[2])
    if wtype == CYLINDER:
        # heights along the axis in proportion to the path length: a helix
        L0 = math.sqrt((p0[0] - r0[0]) * (p0[0] - r0[0]) + (p0[1] - r0[1]) * (p0[1] - r0[1]))
        L1 = math.sqrt((p1[0] - r1[0]) * (p1[0] - r1[0]) + (p1[1] - r1[1]) * (p1[1] - r1[1]))
        z0 = p0[2] + (p1[2] - p0[2]) * L0 / (L0 + wlen + L1)
        z1 = p0[2] + (p1[2] - p0[2]) * (L0 + wlen) / (L0 + wlen + L1)
        r0 = (r0[0], r0[1], z0)
        r1 = (r1[0], r1[1], z1)
        height = abs(z1 - z0)
        wlen = math.sqrt(wlen * wlen + height * height)
    w0 = mulmatvec3(xmat, r0)
    w1 = mulmatvec3(xmat, r1)
    return (wlen, (w0[0] + xpos[0], w0[1] + xpos[1], w0[2] + xpos[2]),
            (w1[0] + xpos[0], w1[1] + xpos[1], w1[2] + xpos[2]))

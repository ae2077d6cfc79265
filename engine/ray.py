"""Ray casting against the geoms of a model at the current pose (MuJoCo's mj_ray, mju_rayGeom).

``ray(m, d, pnt, vec)`` intersects the ray ``pnt + x * vec`` (x >= 0) with every visible geom and
returns ``(geomid, x)`` of the nearest hit, or ``(-1, -1.0)``; ``normal=True`` adds the outward
surface normal at the hit (world frame). ``x`` is in units of ``|vec|`` as in MuJoCo. Reads
``d.geom_xpos`` and ``d.geom_xmat`` (call ``forward`` or ``kinematics`` first).

Each geom type has its own intersection routine in the geom's local frame, returning the
distance and the local normal (the same equations as MuJoCo's engine_ray.c, so that the results
match ``mujoco.mj_ray``). A height field is hit on its base box, on the triangles of its surface
(each cell split along its (r, c)-(r+1, c+1) diagonal, as in collision) and on its four side
walls below the boundary elevation profile. ``ray_kernel`` and ``ray_shape`` are the compiled
entry points the rangefinder and touch sensors use.
"""
from __future__ import annotations

import math

import numpy as np

from .constants import MINVAL
from .enums import GeomType
from .jit import jit
from .math import cross3, dot3, mat9, mulmatvec3, sub3, vec3

PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = (int(t) for t in GeomType)
NGROUP = 6                # mjNGROUP
ALL_GROUPS = (1 << NGROUP) - 1
ZERO3 = (0.0, 0.0, 0.0)


@jit
def _unit(v):
    """v / |v| (MuJoCo's mju_normalize3: (1, 0, 0) for a vanishing vector)."""
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if n < MINVAL:
        return (1.0, 0.0, 0.0)
    s = 1.0 / n
    return (v[0] * s, v[1] * s, v[2] * s)


@jit
def _quad(a, b, c):
    """Smallest non-negative root of a x^2 + 2 b x + c = 0 and both roots; -1 where none
    (MuJoCo's ray_quad)."""
    det = b * b - a * c
    if det < 0.0 or a < MINVAL:
        return -1.0, -1.0, -1.0
    det = math.sqrt(det)
    x0 = (-b - det) / a
    x1 = (-b + det) / a
    if x0 >= 0.0:
        return x0, x0, x1
    if x1 >= 0.0:
        return x1, x0, x1
    return -1.0, x0, x1


@jit
def _sphere_world(pos, dist_sqr, pnt, vec):
    """Ray against a sphere of squared radius ``dist_sqr`` centred at ``pos`` (world frame)."""
    d0 = pnt[0] - pos[0]
    d1 = pnt[1] - pos[1]
    d2 = pnt[2] - pos[2]
    a = vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2]
    b = vec[0] * d0 + vec[1] * d1 + vec[2] * d2
    c = d0 * d0 + d1 * d1 + d2 * d2 - dist_sqr
    x, _, _ = _quad(a, b, c)
    return x


# Each routine below takes the ray in the geom's frame (lp + x lv) and returns (x, local normal);
# x = -1 and a zero normal when the ray misses.
@jit
def _plane(lp, lv, size):
    # z of the direction must point against the front face
    if lv[2] > -MINVAL:
        return -1.0, ZERO3
    x = -lp[2] / lv[2]
    if x < 0.0:
        return -1.0, ZERO3
    p0 = lp[0] + x * lv[0]
    p1 = lp[1] + x * lv[1]
    # only within the rendered rectangle (size 0: infinite)
    if (size[0] <= 0.0 or abs(p0) <= size[0]) and (size[1] <= 0.0 or abs(p1) <= size[1]):
        return x, (0.0, 0.0, 1.0)
    return -1.0, ZERO3


@jit
def _capsule(lp, lv, size):
    x = -1.0
    kind = 0.0          # -1: bottom cap, 0: round side, 1: top cap
    # round side: (x lv + lp)_xy . (x lv + lp)_xy = r^2, between the flat ends
    a = lv[0] * lv[0] + lv[1] * lv[1]
    b = lv[0] * lp[0] + lv[1] * lp[1]
    c = lp[0] * lp[0] + lp[1] * lp[1] - size[0] * size[0]
    sol, _, _ = _quad(a, b, c)
    if sol >= 0.0 and abs(lp[2] + sol * lv[2]) <= size[1]:
        x = sol
    # the two hemispherical caps
    a = lv[0] * lv[0] + lv[1] * lv[1] + lv[2] * lv[2]
    for side in (1.0, -1.0):
        d0, d1, d2 = lp[0], lp[1], lp[2] - side * size[1]
        b = lv[0] * d0 + lv[1] * d1 + lv[2] * d2
        c = d0 * d0 + d1 * d1 + d2 * d2 - size[0] * size[0]
        _, x0, x1 = _quad(a, b, c)
        for s in (x0, x1):
            z = lp[2] + s * lv[2]
            if s >= 0.0 and side * z >= size[1] and (x < 0.0 or s < x):
                x = s
                kind = side
    if x < 0.0:
        return -1.0, ZERO3
    return x, _unit((lp[0] + x * lv[0], lp[1] + x * lv[1],
                     0.0 if kind == 0.0 else lp[2] + x * lv[2] - size[1] * kind))


@jit
def _ellipsoid(lp, lv, size):
    # (x lv + lp)' diag(1/size^2) (x lv + lp) = 1
    s = (1.0 / (size[0] * size[0]), 1.0 / (size[1] * size[1]), 1.0 / (size[2] * size[2]))
    a = 0.0
    b = 0.0
    c = -1.0
    for i in range(3):
        a += s[i] * lv[i] * lv[i]
        b += s[i] * lv[i] * lp[i]
        c += s[i] * lp[i] * lp[i]
    x, _, _ = _quad(a, b, c)
    if x < 0.0:
        return -1.0, ZERO3
    # the gradient of the ellipsoid's equation
    return x, _unit((s[0] * (lp[0] + x * lv[0]), s[1] * (lp[1] + x * lv[1]),
                     s[2] * (lp[2] + x * lv[2])))


@jit
def _cylinder(lp, lv, size):
    x = -1.0
    kind = 0.0          # -1: bottom, 0: round side, 1: top
    # flat caps: lp_z + x lv_z = +-h inside the disc
    if abs(lv[2]) > MINVAL:
        for side in (-1.0, 1.0):
            sol = (side * size[1] - lp[2]) / lv[2]
            if sol >= 0.0:
                p0 = lp[0] + sol * lv[0]
                p1 = lp[1] + sol * lv[1]
                if p0 * p0 + p1 * p1 <= size[0] * size[0] and (x < 0.0 or sol < x):
                    x = sol
                    kind = side
    # side
    a = lv[0] * lv[0] + lv[1] * lv[1]
    b = lv[0] * lp[0] + lv[1] * lp[1]
    c = lp[0] * lp[0] + lp[1] * lp[1] - size[0] * size[0]
    sol, _, _ = _quad(a, b, c)
    if sol >= 0.0 and abs(lp[2] + sol * lv[2]) <= size[1] and (x < 0.0 or sol < x):
        x = sol
        kind = 0.0
    if x < 0.0:
        return -1.0, ZERO3
    if kind != 0.0:
        return x, (0.0, 0.0, kind)
    return x, _unit((lp[0] + x * lv[0], lp[1] + x * lv[1], 0.0))


@jit
def _box(lp, lv, size):
    x = -1.0
    axis = 0
    sgn = 0.0
    for i in range(3):
        if abs(lv[i]) > MINVAL:
            j = (i + 1) % 3
            k = (i + 2) % 3
            for side in (-1.0, 1.0):
                # lp_i + x lv_i = side * size_i, the hit point within the face
                sol = (side * size[i] - lp[i]) / lv[i]
                if sol >= 0.0:
                    pj = lp[j] + sol * lv[j]
                    pk = lp[k] + sol * lv[k]
                    if abs(pj) <= size[j] and abs(pk) <= size[k] and (x < 0.0 or sol < x):
                        x = sol
                        axis = i
                        sgn = side
    if x < 0.0:
        return -1.0, ZERO3
    return x, (sgn if axis == 0 else 0.0, sgn if axis == 1 else 0.0, sgn if axis == 2 else 0.0)


@jit
def _tri(a, b, c, lp, lv):
    """Moller-Trumbore on 3-tuples: distance along lv to the triangle abc (either side), -1 if
    missed, and the unit normal (a - c) x (b - c) of the triangle (MuJoCo's orientation)."""
    e1 = sub3(b, a)
    e2 = sub3(c, a)
    p = cross3(lv, e2)
    det = dot3(e1, p)
    if abs(det) < MINVAL:
        return -1.0, ZERO3
    t = sub3(lp, a)
    u = dot3(t, p) / det
    if u < 0.0 or u > 1.0:
        return -1.0, ZERO3
    q = cross3(t, e1)
    v = dot3(lv, q) / det
    if v < 0.0 or u + v > 1.0:
        return -1.0, ZERO3
    x = dot3(e2, q) / det
    if x < 0.0:
        return -1.0, ZERO3
    return x, _unit(cross3(sub3(a, c), sub3(b, c)))


@jit
def _mesh(m, meshid, lp, lv):
    x = -1.0
    normal = ZERO3
    va = m.mesh_vertadr[meshid]
    for f in range(m.mesh_faceadr[meshid], m.mesh_faceadr[meshid] + m.mesh_facenum[meshid]):
        s, n = _tri(vec3(m.mesh_vert, va + m.mesh_face[f, 0]),
                    vec3(m.mesh_vert, va + m.mesh_face[f, 1]),
                    vec3(m.mesh_vert, va + m.mesh_face[f, 2]), lp, lv)
        if s >= 0.0 and (x < 0.0 or s < x):
            x = s
            normal = n
    return x, normal


@jit
def _hfield(m, hid, lp, lv):
    """Ray against height field hid in its frame: base box z in [-base_z, 0], surface
    triangles and the side walls between z = 0 and the boundary elevations."""
    sx = m.hfield_size[hid, 0]
    sy = m.hfield_size[hid, 1]
    sz = m.hfield_size[hid, 2]
    sb = m.hfield_size[hid, 3]
    nrow = m.hfield_nrow[hid]
    ncol = m.hfield_ncol[hid]
    adr = m.hfield_adr[hid]
    data = m.hfield_data
    x, normal = _box((lp[0], lp[1], lp[2] + 0.5 * sb), lv, (sx, sy, 0.5 * sb))
    # segment of the ray inside the top box [-sx, sx] x [-sy, sy] x [0, sz] (slabs)
    t0 = 0.0
    t1 = 1e300
    lo = (-sx, -sy, 0.0)
    hi = (sx, sy, sz)
    for i in range(3):
        if abs(lv[i]) < MINVAL:
            if lp[i] < lo[i] or lp[i] > hi[i]:
                return x, normal
            continue
        a = (lo[i] - lp[i]) / lv[i]
        b = (hi[i] - lp[i]) / lv[i]
        t0 = max(t0, min(a, b))
        t1 = min(t1, max(a, b))
    if t0 > t1:
        return x, normal
    dx = 2.0 * sx / (ncol - 1)
    dy = 2.0 * sy / (nrow - 1)
    # cells under the segment's horizontal projection (one cell of padding)
    ca = (lp[0] + t0 * lv[0] + sx) / dx
    cb = (lp[0] + t1 * lv[0] + sx) / dx
    ra = (lp[1] + t0 * lv[1] + sy) / dy
    rb = (lp[1] + t1 * lv[1] + sy) / dy
    cmin = max(0, int(math.floor(min(ca, cb))) - 1)
    cmax = min(ncol - 1, int(math.ceil(max(ca, cb))) + 1)
    rmin = max(0, int(math.floor(min(ra, rb))) - 1)
    rmax = min(nrow - 1, int(math.ceil(max(ra, rb))) + 1)
    for r in range(rmin, rmax):
        y0 = dy * r - sy
        y1 = y0 + dy
        for c in range(cmin, cmax):
            x0 = dx * c - sx
            x1 = x0 + dx
            p00 = (x0, y0, data[adr + r * ncol + c] * sz)
            p01 = (x1, y0, data[adr + r * ncol + c + 1] * sz)
            p10 = (x0, y1, data[adr + (r + 1) * ncol + c] * sz)
            p11 = (x1, y1, data[adr + (r + 1) * ncol + c + 1] * sz)
            # counter-clockwise seen from above: the normals point up
            for tri in range(2):
                s, n = _tri(p00, p01, p11, lp, lv) if tri == 0 else _tri(p00, p11, p10, lp, lv)
                if s >= 0.0 and (x < 0.0 or s < x):
                    x = s
                    normal = n
    # side walls: x = +-sx (profile along the rows), y = +-sy (profile along the columns)
    for axis in range(2):
        other = 1 - axis
        half = sx if axis == 0 else sy
        ohalf = sy if axis == 0 else sx
        step = dy if axis == 0 else dx
        nseg = (nrow if axis == 0 else ncol) - 1
        if abs(lv[axis]) < MINVAL:
            continue
        for side in range(2):
            sol = ((2 * side - 1) * half - lp[axis]) / lv[axis]
            if sol < 0.0 or (x >= 0.0 and sol >= x):
                continue
            q = lp[other] + sol * lv[other]
            z = lp[2] + sol * lv[2]
            if abs(q) > ohalf or z < 0.0:
                continue
            u = (q + ohalf) / step
            k = min(nseg - 1, max(0, int(math.floor(u))))
            if axis == 0:   # column 0 or ncol-1, rows k, k+1
                col = side * (ncol - 1)
                za = data[adr + k * ncol + col]
                zb = data[adr + (k + 1) * ncol + col]
            else:           # row 0 or nrow-1, columns k, k+1
                row = side * (nrow - 1)
                za = data[adr + row * ncol + k]
                zb = data[adr + row * ncol + k + 1]
            if z <= sz * (za + (zb - za) * (u - k)):
                x = sol
                w = 2.0 * side - 1.0
                normal = (w if axis == 0 else 0.0, w if axis == 1 else 0.0, 0.0)
    return x, normal


@jit
def _local(pos, mat, pnt, vec):
    """The ray in a frame (pos, row-major mat): lp = mat' (pnt - pos), lv = mat' vec."""
    dif = sub3(pnt, pos)
    lp = (mat[0] * dif[0] + mat[3] * dif[1] + mat[6] * dif[2],
          mat[1] * dif[0] + mat[4] * dif[1] + mat[7] * dif[2],
          mat[2] * dif[0] + mat[5] * dif[1] + mat[8] * dif[2])
    lv = (mat[0] * vec[0] + mat[3] * vec[1] + mat[6] * vec[2],
          mat[1] * vec[0] + mat[4] * vec[1] + mat[7] * vec[2],
          mat[2] * vec[0] + mat[5] * vec[1] + mat[8] * vec[2])
    return lp, lv


@jit
def ray_shape(pos, mat, size, gtype, pnt, vec):
    """Ray against a primitive shape (plane, sphere, capsule, ellipsoid, cylinder, box) at
    (pos, mat) with the given size: (x, world normal), x = -1 if missed (mju_rayGeom)."""
    if gtype == SPHERE:
        # in the world frame, as MuJoCo
        x = _sphere_world(pos, size[0] * size[0], pnt, vec)
        if x < 0.0:
            return -1.0, ZERO3
        return x, _unit(sub3((pnt[0] + x * vec[0], pnt[1] + x * vec[1], pnt[2] + x * vec[2]),
                             pos))
    lp, lv = _local(pos, mat, pnt, vec)
    if gtype == PLANE:
        x, n = _plane(lp, lv, size)
    elif gtype == CAPSULE:
        x, n = _capsule(lp, lv, size)
    elif gtype == ELLIPSOID:
        x, n = _ellipsoid(lp, lv, size)
    elif gtype == CYLINDER:
        x, n = _cylinder(lp, lv, size)
    elif gtype == BOX:
        x, n = _box(lp, lv, size)
    else:
        return -1.0, ZERO3
    return x, mulmatvec3(mat, n)


@jit
def ray_geom(m, d, g, pnt, vec):
    """Distance along ``vec`` from ``pnt`` to geom ``g`` (-1 if the ray misses it) and the
    outward surface normal there (world frame)."""
    gtype = m.geom_type[g]
    size = vec3(m.geom_size, g)
    pos = vec3(d.geom_xpos, g)
    if gtype != PLANE and gtype != HFIELD:
        # bounding sphere first
        rb = m.geom_rbound[g]
        if rb > 0.0 and _sphere_world(pos, rb * rb, pnt, vec) < 0.0:
            return -1.0, ZERO3
    mat = mat9(d.geom_xmat, g)
    if gtype == HFIELD or gtype == MESH:
        lp, lv = _local(pos, mat, pnt, vec)
        if gtype == HFIELD:
            x, n = _hfield(m, m.geom_dataid[g], lp, lv)
        elif m.geom_dataid[g] >= 0:
            x, n = _mesh(m, m.geom_dataid[g], lp, lv)
        else:
            return -1.0, ZERO3
        return x, mulmatvec3(mat, n)
    return ray_shape(pos, mat, size, gtype, pnt, vec)


@jit
def geom_ray_visible(m, g):
    """A ray can hit geom g: the alpha of its material, or of its own rgba, is not 0."""
    mat = m.geom_matid[g]
    if mat >= 0:
        return m.mat_rgba[mat, 3] != 0.0
    return m.geom_rgba[g, 3] != 0.0


@jit
def ray_kernel(m, d, pnt, vec, groupmask, flg_static, bodyexclude):
    """Nearest visible geom along the ray among those of the groups in groupmask (bit k: group
    k), skipping bodyexclude and, unless flg_static, bodies welded to the world:
    (geomid, distance, normal) or (-1, -1, 0)."""
    best = -1.0
    best_id = -1
    normal = ZERO3
    for g in range(m.geom_type.shape[0]):
        b = m.geom_bodyid[g]
        if b == bodyexclude or not geom_ray_visible(m, g):
            continue
        if not flg_static and m.body_weldid[b] == 0:
            continue
        grp = min(NGROUP - 1, max(0, m.geom_group[g]))
        if not (groupmask >> grp) & 1:
            continue
        x, n = ray_geom(m, d, g, pnt, vec)
        if x >= 0.0 and (best < 0.0 or x < best):
            best = x
            best_id = g
            normal = n
    return best_id, best, normal


def ray(m, d, pnt, vec, geomgroup=None, flg_static=True, bodyexclude=-1, normal=False):
    """Intersect the ray ``pnt + x vec`` (x >= 0) with the visible geoms (like ``mujoco.mj_ray``).

    ``geomgroup``: six flags (geom groups 0-5) or None for every group; ``flg_static``: include
    geoms of bodies welded to the world; ``bodyexclude``: a body whose geoms are skipped.
    Returns ``(geomid, distance)``, ``(-1, -1.0)`` when nothing is hit; with ``normal=True``
    ``(geomid, distance, normal)``, the outward surface normal at the hit (zero if none).
    """
    pnt = np.ascontiguousarray(pnt, dtype=np.float64).reshape(3)
    vec = np.ascontiguousarray(vec, dtype=np.float64).reshape(3)
    if float(np.linalg.norm(vec)) < MINVAL:
        raise ValueError("ray direction vector is too small")
    if geomgroup is None:
        mask = ALL_GROUPS
    else:
        flags = np.asarray(geomgroup).reshape(-1)[:NGROUP]
        mask = sum(1 << k for k in range(flags.size) if flags[k] != 0)
    gid, x, n = ray_kernel(m._struct, d._struct, (pnt[0], pnt[1], pnt[2]),
                           (vec[0], vec[1], vec[2]), mask, bool(flg_static), int(bodyexclude))
    if normal:
        return int(gid), float(x), np.array(n)
    return int(gid), float(x)

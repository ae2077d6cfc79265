"""Ray casting against the geoms of a model at the current pose (MuJoCo's mj_ray).

``ray(m, d, pnt, vec)`` intersects the ray ``pnt + x * vec`` (x >= 0) with every visible geom and
returns ``(geomid, x)`` of the nearest hit, or ``(-1, -1.0)``. ``x`` is in units of ``|vec|`` as in
MuJoCo. Reads ``d.geom_xpos`` and ``d.geom_xmat`` (call ``forward`` or ``kinematics`` first).

Each geom type has its own intersection routine in the geom's local frame (the same equations as
MuJoCo's engine_ray.c, so that the results match ``mujoco.mj_ray``). A height field is hit on its
base box, on the triangles of its surface (each cell split along its (r, c)-(r+1, c+1) diagonal, as
in collision) and on its four side walls below the boundary elevation profile.
"""
from __future__ import annotations

import math

import numpy as np

from .jit import jit
from .math import cross3, dot3, sub3

PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = range(8)
MINVAL = 1e-15            # mjMINVAL
NGROUP = 6                # mjNGROUP


@jit
def _quad(a, b, c):
    """Smallest non-negative root of a x^2 + 2 b x + c = 0 and both roots; -1 where none."""
    det = b * b - a * c
    if det < MINVAL:
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
    a = vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2]
    if a < MINVAL:
        return -1.0
    b = 0.0
    c = -dist_sqr
    for i in range(3):
        dif = pnt[i] - pos[i]
        b += vec[i] * dif
        c += dif * dif
    x, _, _ = _quad(a, b, c)
    return x


@jit
def _plane(lp, lv, size):
    # z of the direction must point against the front face
    if lv[2] > -MINVAL:
        return -1.0
    x = -lp[2] / lv[2]
    if x < 0.0:
        return -1.0
    p0 = lp[0] + x * lv[0]
    p1 = lp[1] + x * lv[1]
    # only within the rendered rectangle (size 0: infinite)
    if (size[0] <= 0.0 or abs(p0) <= size[0]) and (size[1] <= 0.0 or abs(p1) <= size[1]):
        return x
    return -1.0


@jit
def _capsule(lp, lv, size):
    x = -1.0
    # round side: (x lv + lp)_xy . (x lv + lp)_xy = r^2, between the flat ends
    a = lv[0] * lv[0] + lv[1] * lv[1]
    b = lv[0] * lp[0] + lv[1] * lp[1]
    c = lp[0] * lp[0] + lp[1] * lp[1] - size[0] * size[0]
    sol, _, _ = _quad(a, b, c)
    if sol >= 0.0 and abs(lp[2] + sol * lv[2]) <= size[1]:
        x = sol
    # the two hemispherical caps
    a = lv[0] * lv[0] + lv[1] * lv[1] + lv[2] * lv[2]
    for side in (-1.0, 1.0):
        d0, d1, d2 = lp[0], lp[1], lp[2] - side * size[1]
        b = lv[0] * d0 + lv[1] * d1 + lv[2] * d2
        c = d0 * d0 + d1 * d1 + d2 * d2 - size[0] * size[0]
        _, x0, x1 = _quad(a, b, c)
        for s in (x0, x1):
            z = lp[2] + s * lv[2]
            if s >= 0.0 and side * z >= size[1] and (x < 0.0 or s < x):
                x = s
    return x


@jit
def _ellipsoid(lp, lv, size):
    # (x lv + lp)' diag(1/size^2) (x lv + lp) = 1
    a = 0.0
    b = 0.0
    c = -1.0
    for i in range(3):
        s = 1.0 / (size[i] * size[i])
        a += s * lv[i] * lv[i]
        b += s * lv[i] * lp[i]
        c += s * lp[i] * lp[i]
    x, _, _ = _quad(a, b, c)
    return x


@jit
def _cylinder(lp, lv, size):
    x = -1.0
    # flat caps: lp_z + x lv_z = +-h inside the disc
    if abs(lv[2]) > MINVAL:
        for side in (-1.0, 1.0):
            sol = (side * size[1] - lp[2]) / lv[2]
            if sol >= 0.0:
                p0 = lp[0] + sol * lv[0]
                p1 = lp[1] + sol * lv[1]
                if p0 * p0 + p1 * p1 <= size[0] * size[0] and (x < 0.0 or sol < x):
                    x = sol
    # side
    a = lv[0] * lv[0] + lv[1] * lv[1]
    b = lv[0] * lp[0] + lv[1] * lp[1]
    c = lp[0] * lp[0] + lp[1] * lp[1] - size[0] * size[0]
    _, x0, x1 = _quad(a, b, c)
    for s in (x0, x1):
        if s >= 0.0 and abs(lp[2] + s * lv[2]) <= size[1] and (x < 0.0 or s < x):
            x = s
    return x


@jit
def _box(lp, lv, size):
    x = -1.0
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
    return x


@jit
def _triangle(v0, v1, v2, lp, lv):
    """Moller-Trumbore: distance along lv to the triangle (either side), -1 if missed."""
    e1 = v1 - v0
    e2 = v2 - v0
    p = np.cross(lv, e2)
    det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2]
    if abs(det) < MINVAL:
        return -1.0
    inv = 1.0 / det
    t = lp - v0
    u = (t[0] * p[0] + t[1] * p[1] + t[2] * p[2]) * inv
    if u < 0.0 or u > 1.0:
        return -1.0
    q = np.cross(t, e1)
    v = (lv[0] * q[0] + lv[1] * q[1] + lv[2] * q[2]) * inv
    if v < 0.0 or u + v > 1.0:
        return -1.0
    x = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) * inv
    return x if x >= 0.0 else -1.0


@jit
def _mesh(m, meshid, lp, lv):
    x = -1.0
    va = m.mesh_vertadr[meshid]
    fa = m.mesh_faceadr[meshid]
    for f in range(fa, fa + m.mesh_facenum[meshid]):
        v0 = m.mesh_vert[va + m.mesh_face[f, 0]]
        v1 = m.mesh_vert[va + m.mesh_face[f, 1]]
        v2 = m.mesh_vert[va + m.mesh_face[f, 2]]
        s = _triangle(v0, v1, v2, lp, lv)
        if s >= 0.0 and (x < 0.0 or s < x):
            x = s
    return x


@jit
def _tri(a, b, c, lp, lv):
    """Moller-Trumbore on 3-tuples: distance along lv to the triangle abc, -1 if missed."""
    e1 = sub3(b, a)
    e2 = sub3(c, a)
    p = cross3(lv, e2)
    det = dot3(e1, p)
    if abs(det) < MINVAL:
        return -1.0
    t = sub3(lp, a)
    u = dot3(t, p) / det
    if u < 0.0 or u > 1.0:
        return -1.0
    q = cross3(t, e1)
    v = dot3(lv, q) / det
    if v < 0.0 or u + v > 1.0:
        return -1.0
    x = dot3(e2, q) / det
    return x if x >= 0.0 else -1.0


@jit
def _closer(x, s):
    return s if s >= 0.0 and (x < 0.0 or s < x) else x


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
    x = _box((lp[0], lp[1], lp[2] + 0.5 * sb), lv, (sx, sy, 0.5 * sb))
    # segment of the ray inside the top box [-sx, sx] x [-sy, sy] x [0, sz] (slabs)
    t0 = 0.0
    t1 = 1e300
    lo = (-sx, -sy, 0.0)
    hi = (sx, sy, sz)
    for i in range(3):
        if abs(lv[i]) < MINVAL:
            if lp[i] < lo[i] or lp[i] > hi[i]:
                return x
            continue
        a = (lo[i] - lp[i]) / lv[i]
        b = (hi[i] - lp[i]) / lv[i]
        t0 = max(t0, min(a, b))
        t1 = min(t1, max(a, b))
    if t0 > t1:
        return x
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
            x = _closer(x, _tri(p00, p11, p01, lp, lv))
            x = _closer(x, _tri(p00, p11, p10, lp, lv))
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
    return x


@jit
def ray_geom(m, d, g, pnt, vec):
    """Distance along ``vec`` from ``pnt`` to geom ``g``, -1 if the ray misses it."""
    gtype = m.geom_type[g]
    size = m.geom_size[g]
    pos = d.geom_xpos[g]
    if gtype == SPHERE:
        return _sphere_world(pos, size[0] * size[0], pnt, vec)
    if gtype != PLANE and gtype != HFIELD:
        # bounding sphere first
        rb = m.geom_rbound[g]
        if rb > 0.0 and _sphere_world(pos, rb * rb, pnt, vec) < 0.0:
            return -1.0
    # local frame: lp = R' (pnt - pos), lv = R' vec  (geom_xmat is row-major)
    lp = np.empty(3)
    lv = np.empty(3)
    for i in range(3):
        lp[i] = 0.0
        lv[i] = 0.0
        for j in range(3):
            lp[i] += d.geom_xmat[g, 3 * j + i] * (pnt[j] - pos[j])
            lv[i] += d.geom_xmat[g, 3 * j + i] * vec[j]
    if gtype == PLANE:
        return _plane(lp, lv, size)
    if gtype == HFIELD:
        return _hfield(m, m.geom_dataid[g], lp, lv)
    if gtype == CAPSULE:
        return _capsule(lp, lv, size)
    if gtype == ELLIPSOID:
        return _ellipsoid(lp, lv, size)
    if gtype == CYLINDER:
        return _cylinder(lp, lv, size)
    if gtype == BOX:
        return _box(lp, lv, size)
    if gtype == MESH and m.geom_dataid[g] >= 0:
        return _mesh(m, m.geom_dataid[g], lp, lv)
    return -1.0


@jit
def ray_kernel(m, d, pnt, vec, group_on, visible, flg_static, bodyexclude):
    """Nearest geom along the ray among the eligible ones: (geomid, distance) or (-1, -1)."""
    best = -1.0
    best_id = -1
    for g in range(m.geom_type.shape[0]):
        b = m.geom_bodyid[g]
        if b == bodyexclude or not visible[g]:
            continue
        if not flg_static and m.body_weldid[b] == 0:
            continue
        grp = min(NGROUP - 1, max(0, m.geom_group[g]))
        if not group_on[grp]:
            continue
        x = ray_geom(m, d, g, pnt, vec)
        if x >= 0.0 and (best < 0.0 or x < best):
            best = x
            best_id = g
    return best_id, best


def geom_visible(m) -> np.ndarray:
    """Geoms a ray can hit: not fully transparent by their rgba or by their material."""
    rgba_alpha = np.asarray(m.geom_rgba)[:, 3]
    matid = np.asarray(m.geom_matid)
    mats = getattr(m, "materials", None) or []
    mat_alpha = np.array([float(mt["rgba"][3]) for mt in mats] + [1.0])
    alpha = np.where(matid >= 0, mat_alpha[np.clip(matid, 0, len(mats))], rgba_alpha)
    return (alpha != 0.0).astype(np.int64)


def ray(m, d, pnt, vec, geomgroup=None, flg_static=True, bodyexclude=-1):
    """Intersect the ray ``pnt + x vec`` (x >= 0) with the visible geoms (like ``mujoco.mj_ray``).

    ``geomgroup``: six flags (geom groups 0-5) or None for every group; ``flg_static``: include
    geoms of bodies welded to the world; ``bodyexclude``: a body whose geoms are skipped.
    Returns ``(geomid, distance)``, ``(-1, -1.0)`` when nothing is hit.
    """
    from .types import check_data
    check_data(m, d)
    pnt = np.ascontiguousarray(pnt, dtype=np.float64).reshape(3)
    vec = np.ascontiguousarray(vec, dtype=np.float64).reshape(3)
    if float(np.linalg.norm(vec)) < MINVAL:
        raise ValueError("ray direction vector is too small")
    if geomgroup is None:
        group_on = np.ones(NGROUP, dtype=np.int64)
    else:
        group_on = np.zeros(NGROUP, dtype=np.int64)
        g = np.asarray(geomgroup).reshape(-1)[:NGROUP]
        group_on[:g.size] = g != 0
    vis = getattr(m, "_ray_visible", None)
    if vis is None or vis.shape[0] != m.ngeom:
        vis = geom_visible(m)
        object.__setattr__(m, "_ray_visible", vis)
    gid, x = ray_kernel(m._struct, d._struct, pnt, vec, group_on, vis, bool(flg_static),
                        int(bodyexclude))
    return int(gid), float(x)

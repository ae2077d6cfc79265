"""Narrowphase for pairs of primitive geoms, as MuJoCo's engine_collision_primitive/box.

Every raw function has the signature
``_a_b(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w) -> count``:
it writes up to MAXCONPAIR contacts at rows n0.. of the scratch buffers ``cd`` (distance),
``cp`` (position, 3) and ``cf`` (frame, 9: normal in row 0 pointing from geom 1 to geom 2, an
optional first tangent in row 1, zero otherwise), and returns how many it wrote. ``pos`` are
3-tuples, ``mat`` row-major 9-tuples, ``size`` 3-tuples; ``w`` is a (rows, 6) float scratch
array for the pairs that need more than a few registers (box-box). Geom 1 has the smaller
GeomType (MuJoCo's ordering). A contact is reported when the signed distance is below
``margin``; ``pos`` is midway between the two surfaces.
"""
import math

from .jit import jit
from .math import (MINVAL, add3, cross3, dot3, mulmattvec3, mulmatvec3, scl3, sub3)

MAXCONPAIR = 50  # MuJoCo's mjMAXCONPAIR: most contacts one geom pair may produce


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
@jit
def normalize3(v):
    """(v / |v|, |v|); (1, 0, 0) when |v| < MINVAL (MuJoCo's mju_normalize3)."""
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if n < MINVAL:
        return (1.0, 0.0, 0.0), n
    inv = 1.0 / n
    return (v[0] * inv, v[1] * inv, v[2] * inv), n


@jit
def put(cd, cp, cf, i, dist, pos, normal):
    """Write contact i with the given normal and no preferred tangent."""
    cd[i] = dist
    cp[i, 0] = pos[0]
    cp[i, 1] = pos[1]
    cp[i, 2] = pos[2]
    cf[i, 0] = normal[0]
    cf[i, 1] = normal[1]
    cf[i, 2] = normal[2]
    for k in range(3, 9):
        cf[i, k] = 0.0


@jit
def col(mat, j):
    """Column j of a row-major 3x3 matrix (the geom's local axis j in world coordinates)."""
    return (mat[j], mat[3 + j], mat[6 + j])


@jit
def transpose3(a):
    return (a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8])


@jit
def clip(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


# ------------------------------------------------------------------------------------------------
# plane
# ------------------------------------------------------------------------------------------------
@jit
def plane_sphere(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    # dist = n . (c - p) - r; pos = c - n (r + dist/2)
    n = col(mat1, 2)
    cdist = dot3(sub3(pos2, pos1), n)
    if cdist > margin + size2[0]:
        return 0
    dist = cdist - size2[0]
    put(cd, cp, cf, n0, dist, add3(pos2, scl3(n, -dist / 2 - size2[0])), n)
    return 1


@jit
def plane_capsule(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    # the two end spheres against the plane; first tangent along the capsule axis
    axis = col(mat2, 2)
    seg = scl3(axis, size2[1])
    n1 = plane_sphere(cd, cp, cf, n0, margin, pos1, mat1, size1, add3(pos2, seg), mat2, size2, w)
    n2 = plane_sphere(cd, cp, cf, n0 + n1, margin, pos1, mat1, size1, sub3(pos2, seg), mat2,
                      size2, w)
    for i in range(n0, n0 + n1 + n2):
        cf[i, 3] = axis[0]
        cf[i, 4] = axis[1]
        cf[i, 5] = axis[2]
    return n1 + n2


@jit
def plane_cylinder(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    # deepest rim point, the opposite rim point and two more on the near disk (MuJoCo's triangle)
    normal = col(mat1, 2)
    axis = col(mat2, 2)
    prjaxis = dot3(normal, axis)
    if prjaxis > 0:
        axis = scl3(axis, -1.0)
        prjaxis = -prjaxis
    dist0 = dot3(sub3(pos2, pos1), normal)
    # radial direction towards the plane: axis x (axis x normal) = axis * prjaxis - normal.
    # MuJoCo forms the difference, which cancels to rounding error when the disk is nearly
    # parallel to the plane: for a tilt t the error along the axis is ~1e-16 / t of the
    # radius (a rim point off the rim by the whole radius at t ~ 1e-15). The cross products
    # keep vec orthogonal to the axis to rounding error relative to its own length.
    vec = cross3(axis, cross3(axis, normal))
    lensqr = dot3(vec, vec)
    if lensqr >= MINVAL * MINVAL:
        vec = scl3(vec, size2[0] / math.sqrt(lensqr))
    else:
        vec = (mat2[0] * size2[0], mat2[3] * size2[0], mat2[6] * size2[0])
    prjvec = dot3(vec, normal)
    axis = scl3(axis, size2[1])
    prjaxis *= size2[1]
    cnt = n0
    dist = dist0 + prjaxis + prjvec
    if dist > margin:
        return 0
    p = add3(add3(pos2, vec), axis)
    put(cd, cp, cf, cnt, dist, add3(p, scl3(normal, -dist * 0.5)), normal)
    cnt += 1
    dist = dist0 - prjaxis + prjvec
    if dist <= margin:
        p = sub3(add3(pos2, vec), axis)
        put(cd, cp, cf, cnt, dist, add3(p, scl3(normal, -dist * 0.5)), normal)
        cnt += 1
    prjvec1 = -prjvec * 0.5
    dist = dist0 + prjaxis + prjvec1
    if dist <= margin:
        vec1, _ = normalize3(cross3(vec, axis))
        vec1 = scl3(vec1, size2[0] * math.sqrt(3.0) / 2)
        base = add3(add3(pos2, axis), scl3(vec, -0.5))
        p = add3(base, vec1)
        put(cd, cp, cf, cnt, dist, add3(p, scl3(normal, -dist * 0.5)), normal)
        cnt += 1
        p = sub3(base, vec1)
        put(cd, cp, cf, cnt, dist, add3(p, scl3(normal, -dist * 0.5)), normal)
        cnt += 1
    return cnt - n0


@jit
def plane_box(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    # corners below the margin on the plane's side, at most 4
    norm = col(mat1, 2)
    dist = dot3(sub3(pos2, pos1), norm)
    cnt = 0
    for i in range(8):
        v = (size2[0] if i & 1 else -size2[0], size2[1] if i & 2 else -size2[1],
             size2[2] if i & 4 else -size2[2])
        corner = mulmatvec3(mat2, v)
        ldist = dot3(norm, corner)
        if dist + ldist > margin or ldist > 0:
            continue
        cdist = dist + ldist
        put(cd, cp, cf, n0 + cnt, cdist, add3(add3(corner, pos2), scl3(norm, -cdist / 2)), norm)
        cnt += 1
        if cnt >= 4:
            return 4
    return cnt


# ------------------------------------------------------------------------------------------------
# sphere and capsule
# ------------------------------------------------------------------------------------------------
@jit
def sphere_sphere(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    # dist = |c2 - c1| - r1 - r2, normal along c2 - c1
    dif = sub3(pos1, pos2)
    cdist_sqr = dot3(dif, dif)
    min_dist = margin + size1[0] + size2[0]
    if cdist_sqr > min_dist * min_dist:
        return 0
    dist = math.sqrt(cdist_sqr) - size1[0] - size2[0]
    n, ln = normalize3(sub3(pos2, pos1))
    if ln < MINVAL:
        # coincident centres: cross product of the z axes, (1, 0, 0) if parallel
        n, _ = normalize3(cross3(col(mat1, 2), col(mat2, 2)))
    put(cd, cp, cf, n0, dist, add3(scl3(n, size1[0] + dist / 2), pos1), n)
    return 1


@jit
def sphere_capsule(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    # nearest point of the capsule segment, then sphere-sphere
    axis = col(mat2, 2)
    x = clip(dot3(axis, sub3(pos1, pos2)), -size2[1], size2[1])
    return sphere_sphere(cd, cp, cf, n0, margin, pos1, mat1, size1,
                         add3(scl3(axis, x), pos2), mat2, size2, w)


@jit
def sphere_cylinder(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    # side: sphere-sphere with the axis point; cap: plane-sphere; rim: sphere-point
    radius = size2[0]
    height = size2[1]
    axis = col(mat2, 2)
    vec = sub3(pos1, pos2)
    x = dot3(axis, vec)
    a_proj = scl3(axis, x)
    p_proj = sub3(vec, a_proj)
    p_proj_sqr = dot3(p_proj, p_proj)
    side = abs(x) < height
    cap = p_proj_sqr < radius * radius
    if side and cap:
        # centre inside: pick the nearer wall
        if height - abs(x) < radius - math.sqrt(p_proj_sqr):
            side = False
        else:
            cap = False
    if side:
        return sphere_sphere(cd, cp, cf, n0, margin, pos1, mat1, size1, add3(a_proj, pos2), mat2,
                             size2, w)
    if cap:
        if x > 0:
            pos_cap = add3(pos2, scl3(axis, height))
            mat_cap = mat2
        else:
            pos_cap = add3(pos2, scl3(axis, -height))
            mat_cap = (-mat2[0], mat2[1], -mat2[2], -mat2[3], mat2[4], -mat2[5],
                       -mat2[6], mat2[7], -mat2[8])
        n = plane_sphere(cd, cp, cf, n0, margin, pos_cap, mat_cap, size2, pos1, mat1, size1, w)
        if n:
            # the plane routine's normal points from the cap to the sphere: flip it
            cf[n0, 0] = -cf[n0, 0]
            cf[n0, 1] = -cf[n0, 1]
            cf[n0, 2] = -cf[n0, 2]
        return n
    p = scl3(p_proj, size2[0] / math.sqrt(p_proj_sqr))
    corner = add3(add3(scl3(axis, height if x > 0 else -height), p), pos2)
    return sphere_sphere(cd, cp, cf, n0, margin, pos1, mat1, size1, corner, mat2,
                         (0.0, 0.0, 0.0), w)


@jit
def capsule_capsule(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    # nearest points of the two segments; two contacts for parallel axes
    axis1 = scl3(col(mat1, 2), size1[1])
    axis2 = scl3(col(mat2, 2), size2[1])
    dif = sub3(pos1, pos2)
    ma = dot3(axis1, axis1)
    mb = -dot3(axis1, axis2)
    mc = dot3(axis2, axis2)
    u = -dot3(axis1, dif)
    v = dot3(axis2, dif)
    det = ma * mc - mb * mb
    if abs(det) >= MINVAL:
        x1 = (mc * u - mb * v) / det
        x2 = (ma * v - mb * u) / det
        if x1 > 1:
            x1 = 1.0
            x2 = (v - mb) / mc
        elif x1 < -1:
            x1 = -1.0
            x2 = (v + mb) / mc
        if x2 > 1:
            x2 = 1.0
            x1 = clip((u - mb) / ma, -1.0, 1.0)
        elif x2 < -1:
            x2 = -1.0
            x1 = clip((u + mb) / ma, -1.0, 1.0)
        return sphere_sphere(cd, cp, cf, n0, margin, add3(scl3(axis1, x1), pos1), mat1, size1,
                             add3(scl3(axis2, x2), pos2), mat2, size2, w)
    # parallel axes: ends of segment 1 against segment 2, then ends of 2 against 1
    x2 = clip((v - mb) / mc, -1.0, 1.0)
    n1 = sphere_sphere(cd, cp, cf, n0, margin, add3(pos1, axis1), mat1, size1,
                       add3(scl3(axis2, x2), pos2), mat2, size2, w)
    x2 = clip((v + mb) / mc, -1.0, 1.0)
    n2 = sphere_sphere(cd, cp, cf, n0 + n1, margin, sub3(pos1, axis1), mat1, size1,
                       add3(scl3(axis2, x2), pos2), mat2, size2, w)
    if n1 + n2 >= 2:
        return n1 + n2
    x1 = clip((u - mb) / ma, -1.0, 1.0)
    n3 = sphere_sphere(cd, cp, cf, n0 + n1 + n2, margin, add3(scl3(axis1, x1), pos1), mat1,
                       size1, add3(pos2, axis2), mat2, size2, w)
    if n1 + n2 + n3 >= 2:
        return n1 + n2 + n3
    x1 = clip((u + mb) / ma, -1.0, 1.0)
    n4 = sphere_sphere(cd, cp, cf, n0 + n1 + n2 + n3, margin, add3(scl3(axis1, x1), pos1), mat1,
                       size1, sub3(pos2, axis2), mat2, size2, w)
    return n1 + n2 + n3 + n4


# ------------------------------------------------------------------------------------------------
# boxes (MuJoCo's engine_collision_box.c, after S. Kolev)
# ------------------------------------------------------------------------------------------------
@jit
def sphere_box(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    # sphere centre in the box frame, clamped to the box: nearest box point
    center = mulmattvec3(mat2, sub3(pos1, pos2))
    clamped = (clip(center[0], -size2[0], size2[0]), clip(center[1], -size2[1], size2[1]),
               clip(center[2], -size2[2], size2[2]))
    tmp, dist = normalize3(sub3(clamped, center))
    if dist - size1[0] > margin:
        return 0
    if dist <= MINVAL:
        # centre inside the box: push out through the nearest face
        closest = (size2[0] + size2[1] + size2[2]) * 2
        k = 0
        for i in range(6):
            face = size2[i // 2] if i % 2 else -size2[i // 2]
            if closest > abs(face - center[i // 2]):
                closest = abs(face - center[i // 2])
                k = i
        s = -1.0 if k % 2 else 1.0
        nearest = (s if k // 2 == 0 else 0.0, s if k // 2 == 1 else 0.0,
                   s if k // 2 == 2 else 0.0)
        pos = add3(center, scl3(nearest, (size1[0] - closest) / 2))
        normal = mulmatvec3(mat2, nearest)
        dist = -closest
    else:
        deepest = add3(center, scl3(tmp, size1[0]))
        pos = add3(scl3(clamped, 0.5), scl3(deepest, 0.5))
        normal = mulmatvec3(mat2, tmp)
    put(cd, cp, cf, n0, dist - size1[0], add3(mulmatvec3(mat2, pos), pos2), normal)
    return 1


@jit
def capsule_box(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    # closest point of the segment to the box (faces, then the 12 edges), then a second point
    # along the segment when it lies flat on a face or an edge; sphere-box at both
    halflength = size1[1]
    secondpos = -4.0
    pos = mulmattvec3(mat2, sub3(pos1, pos2))
    axis = mulmattvec3(mat2, col(mat1, 2))
    halfaxis = scl3(axis, halflength)
    axisdir = 0
    if halfaxis[0] > 0:
        axisdir += 1
    if halfaxis[1] > 0:
        axisdir += 2
    if halfaxis[2] > 0:
        axisdir += 4
    bestdistmax = margin + 2 * (size1[0] + halflength + size2[0] + size2[1] + size2[2])
    bestdist = bestdistmax
    bestsegmentpos = 0.0
    bestboxpos = 0.0
    cltype = -4
    clface = -1
    clcorner = 0
    cledge = 0
    # segment ends against the faces
    for i in (-1, 1):
        t = add3(pos, scl3(halfaxis, float(i)))
        c1 = 0
        c2 = -1
        tc0, tc1, tc2 = t
        if t[0] < -size2[0]:
            c1 += 1
            c2 = 0
            tc0 = -size2[0]
        elif t[0] > size2[0]:
            c1 += 1
            c2 = 0
            tc0 = size2[0]
        if t[1] < -size2[1]:
            c1 += 1
            c2 = 1
            tc1 = -size2[1]
        elif t[1] > size2[1]:
            c1 += 1
            c2 = 1
            tc1 = size2[1]
        if t[2] < -size2[2]:
            c1 += 1
            c2 = 2
            tc2 = -size2[2]
        elif t[2] > size2[2]:
            c1 += 1
            c2 = 2
            tc2 = size2[2]
        if c1 > 1:
            continue
        dd = sub3((tc0, tc1, tc2), t)
        dist = dot3(dd, dd)
        if dist < bestdist:
            bestdist = dist
            bestsegmentpos = float(i)
            cltype = -2 + i
            clface = c2
    # segment against the box edges (segment-segment closest points)
    for j in range(3):
        for i in range(8):
            if (i & (1 << j)) != 0:
                continue
            e = [size2[0] if i & 1 else -size2[0], size2[1] if i & 2 else -size2[1],
                 size2[2] if i & 4 else -size2[2]]
            e[j] = 0.0
            tmp3 = (e[0], e[1], e[2])
            dif = sub3(tmp3, pos)
            ma = size2[j] * size2[j]
            mb = -size2[j] * halfaxis[j]
            mc = size1[1] * size1[1]
            u = -size2[j] * dif[j]
            v = dot3(halfaxis, dif)
            det = ma * mc - mb * mb
            if abs(det) < MINVAL:
                continue
            idet = 1 / det
            x1 = (mc * u - mb * v) * idet
            x2 = (ma * v - mb * u) * idet
            s1 = 1
            s2 = 1
            if x1 > 1:
                x1 = 1.0
                s1 = 2
                x2 = (v - mb) * (1 / mc)
            elif x1 < -1:
                x1 = -1.0
                s1 = 0
                x2 = (v + mb) * (1 / mc)
            if x2 > 1:
                x2 = 1.0
                s2 = 2
                x1 = (u - mb) * (1 / ma)
                if x1 > 1:
                    x1 = 1.0
                    s1 = 2
                elif x1 < -1:
                    x1 = -1.0
                    s1 = 0
            elif x2 < -1:
                x2 = -1.0
                s2 = 0
                x1 = (u + mb) * (1 / ma)
                if x1 > 1:
                    x1 = 1.0
                    s1 = 2
                elif x1 < -1:
                    x1 = -1.0
                    s1 = 0
            dif = sub3(dif, scl3(halfaxis, x2))
            if j == 0:
                dif = (dif[0] + size2[0] * x1, dif[1], dif[2])
            elif j == 1:
                dif = (dif[0], dif[1] + size2[1] * x1, dif[2])
            else:
                dif = (dif[0], dif[1], dif[2] + size2[2] * x1)
            dd = dot3(dif, dif)
            c1 = s1 * 3 + s2
            if dd < bestdist - MINVAL:
                bestdist = dd
                bestsegmentpos = x2
                bestboxpos = x1
                clcorner = i + (1 << j) * (c1 // 6)
                cledge = j
                cltype = c1
    if cltype == -4:
        return 0
    mul = 1.0
    skip = False
    if cltype >= 0 and cltype // 3 != 1:
        # closest to a box corner
        c1 = axisdir ^ clcorner
        if c1 == 0 or c1 == 7:
            skip = True
        else:
            if c1 == 1 or c1 == 2 or c1 == 4:
                mul = 1.0
                de = 1 - bestsegmentpos
                dp = 1 + bestsegmentpos
            else:
                mul = -1.0
                c1 = 7 - c1
                dp = 1 - bestsegmentpos
                de = 1 + bestsegmentpos
            if c1 == 1:
                ax, ax1, ax2 = 0, 1, 2
            elif c1 == 2:
                ax, ax1, ax2 = 1, 2, 0
            else:
                ax, ax1, ax2 = 2, 0, 1
            if axis[ax] * axis[ax] > 0.5:
                # second point along the box edge
                secondpos = de
                e1 = 2 * size2[ax] / abs(halfaxis[ax])
                if e1 < secondpos:
                    secondpos = e1
                secondpos *= mul
            else:
                # second point along a box face
                secondpos = dp
                e1 = 2 * size2[ax1] / abs(halfaxis[ax1])
                if e1 < secondpos:
                    secondpos = e1
                e1 = 2 * size2[ax2] / abs(halfaxis[ax2])
                if e1 < secondpos:
                    secondpos = e1
                secondpos *= -mul
    elif cltype >= 0:
        # closest to the middle of a box edge
        c1 = (axisdir ^ clcorner) & (7 - (1 << cledge))
        if c1 != 1 and c1 != 2 and c1 != 4:
            skip = True
        else:
            if cledge == 0:
                ax1, ax2 = 1, 2
            elif cledge == 1:
                ax1, ax2 = 2, 0
            else:
                ax1, ax2 = 0, 1
            ax = cledge
            if abs(axis[ax1]) > abs(axis[ax2]):
                ax1 = ax2
            ax2 = 3 - ax - ax1
            if c1 & (1 << ax2):
                mul = 1.0
                secondpos = 1 - bestsegmentpos
            else:
                mul = -1.0
                secondpos = 1 + bestsegmentpos
            e1 = 2 * size2[ax2] / abs(halfaxis[ax2])
            if e1 < secondpos:
                secondpos = e1
            if ((axisdir & (1 << ax)) != 0) == ((c1 & (1 << ax2)) != 0):
                e2 = 1 - bestboxpos
            else:
                e2 = 1 + bestboxpos
            e1 = size2[ax] * e2 / abs(halfaxis[ax])
            if e1 < secondpos:
                secondpos = e1
            secondpos *= mul
    else:
        # a segment end is closest to a face
        if clface == -1:
            skip = True
        else:
            mul = 1.0 if cltype == -3 else -1.0
            secondpos = 2.0
            t = sub3(pos, scl3(halfaxis, mul))
            for i in range(3):
                if i != clface:
                    e1 = (size2[i] - t[i]) / halfaxis[i] * mul
                    if e1 > 0 and e1 < secondpos:
                        secondpos = e1
                    e1 = (-size2[i] - t[i]) / halfaxis[i] * mul
                    if e1 > 0 and e1 < secondpos:
                        secondpos = e1
            secondpos *= mul
    if skip:
        secondpos = -4.0
    c = add3(mulmatvec3(mat2, add3(pos, scl3(halfaxis, bestsegmentpos))), pos2)
    n = sphere_box(cd, cp, cf, n0, margin, c, mat1, size1, pos2, mat2, size2, w)
    if secondpos > -3:
        c = add3(mulmatvec3(mat2, add3(pos, scl3(halfaxis, secondpos + bestsegmentpos))), pos2)
        n += sphere_box(cd, cp, cf, n0 + n, margin, c, mat1, size1, pos2, mat2, size2, w)
    return n


@jit
def _face_perm(q):
    """Axis permutation and signs that bring face q (0-5: -x... as MuJoCo's rotmore) to +z."""
    i0, i1, i2 = 0, 1, 2
    f0, f1, f2 = 1.0, 1.0, 1.0
    if q == 0:
        i0, f0, i2 = 2, -1.0, 0
    elif q == 1:
        i1, f1, i2 = 2, -1.0, 1
    elif q == 3:
        i0, i2, f2 = 2, 0, -1.0
    elif q == 4:
        i1, i2, f2 = 2, 1, -1.0
    elif q == 5:
        f0, f2 = -1.0, -1.0
    return i0, i1, i2, f0, f1, f2


@jit
def _rotmore(q):
    """MuJoCo's rotmore matrix of face q (row-major)."""
    if q == 0:
        return (0.0, 0.0, -1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0)
    if q == 1:
        return (1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0)
    if q == 2:
        return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    if q == 3:
        return (0.0, 0.0, 1.0, 0.0, 1.0, 0.0, -1.0, 0.0, 0.0)
    if q == 4:
        return (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, -1.0, 0.0)
    return (-1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0)


@jit
def _mulmatmatT(a, b):
    """a @ b.T for row-major 3x3 matrices."""
    return (a[0] * b[0] + a[1] * b[1] + a[2] * b[2], a[0] * b[3] + a[1] * b[4] + a[2] * b[5],
            a[0] * b[6] + a[1] * b[7] + a[2] * b[8], a[3] * b[0] + a[4] * b[1] + a[5] * b[2],
            a[3] * b[3] + a[4] * b[4] + a[5] * b[5], a[3] * b[6] + a[4] * b[7] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[1] + a[8] * b[2], a[6] * b[3] + a[7] * b[4] + a[8] * b[5],
            a[6] * b[6] + a[7] * b[7] + a[8] * b[8])


@jit
def _row(a, i):
    return (a[3 * i], a[3 * i + 1], a[3 * i + 2])


@jit
def _w3(w, r):
    return (w[r, 0], w[r, 1], w[r, 2])


@jit
def _set_w3(w, r, v):
    w[r, 0] = v[0]
    w[r, 1] = v[1]
    w[r, 2] = v[2]


# rows of the box-box scratch: points (MAXCONPAIR, depth in column 3), pts, ppts2, pu, lines
_PTS = MAXCONPAIR
_PU = MAXCONPAIR + 6
_PP2 = MAXCONPAIR + 10
_LINES = MAXCONPAIR + 14
_LINESU = MAXCONPAIR + 18
BOX_SCRATCH_ROWS = MAXCONPAIR + 22


@jit
def box_box(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    # separating axis test over the 6 face normals and 9 edge cross products; the axis of least
    # penetration gives a face-face clipping (faces) or an edge-edge construction (edges)
    margin2 = margin * margin
    code = -1
    pos21 = mulmattvec3(mat1, sub3(pos2, pos1))
    pos12 = mulmattvec3(mat2, sub3(pos1, pos2))
    rot = mulmatvec3_mat(mat1, mat2)
    rott = transpose3(rot)
    rotabs = (abs(rot[0]), abs(rot[1]), abs(rot[2]), abs(rot[3]), abs(rot[4]), abs(rot[5]),
              abs(rot[6]), abs(rot[7]), abs(rot[8]))
    rottabs = transpose3(rotabs)
    plen2 = mulmatvec3(rotabs, size2)
    plen1 = mulmattvec3(rotabs, size1)
    penetration = margin
    for i in range(3):
        penetration += size1[i] * 3 + size2[i] * 3
    for i in range(3):
        c1 = -abs(pos21[i]) + size1[i] + plen2[i]
        c2 = -abs(pos12[i]) + size2[i] + plen1[i]
        if c1 < -margin or c2 < -margin:
            return 0
        if c1 < penetration:
            penetration = c1
            code = i + 3 * (1 if pos21[i] < 0 else 0)
        if c2 < penetration:
            penetration = c2
            code = i + 3 * (1 if pos12[i] < 0 else 0) + 6
    cle1 = 0
    cle2 = 0
    inn = False
    clnorm = (0.0, 0.0, 0.0)
    for i in range(3):
        for j in range(3):
            rj = _row(rott, j)
            if i == 0:
                t = (0.0, -rj[2], rj[1])
            elif i == 1:
                t = (rj[2], 0.0, -rj[0])
            else:
                t = (-rj[1], rj[0], 0.0)
            t, c1 = normalize3(t)
            if c1 < MINVAL:
                continue
            c2 = dot3(pos21, t)
            c3 = 0.0
            for k in range(3):
                if k != i:
                    c3 += size1[k] * abs(t[k])
            for k in range(3):
                if k != j:
                    c3 += size2[k] * rotabs[3 * i + 3 - k - j] / c1
            c3 -= abs(c2)
            if c3 < -margin:
                return 0
            if c3 < penetration * (1 - 1e-12):
                penetration = c3
                cle1 = 0
                for k in range(3):
                    if k != i and ((t[k] > 0) ^ (c2 < 0)):
                        cle1 += 1 << k
                cle2 = 0
                for k in range(3):
                    if k != j:
                        if (rot[3 * i + 3 - k - j] > 0) ^ (c2 < 0) ^ ((k - j + 3) % 3 == 1):
                            cle2 += 1 << k
                code = 12 + i * 3 + j
                clnorm = t
                inn = c2 < 0
    if code == -1:
        return 0
    if code < 12:
        return _box_box_face(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w,
                             code, pos21, pos12, rot)
    return _box_box_edge(cd, cp, cf, n0, margin, margin2, pos1, mat1, size1, pos2, mat2, size2,
                         w, code, pos21, rot, rotabs, rottabs, cle1, cle2, inn, clnorm)


@jit
def mulmatvec3_mat(a, b):
    """a.T @ b for row-major 3x3 matrices (MuJoCo's mju_mulMatTMat3)."""
    return (a[0] * b[0] + a[3] * b[3] + a[6] * b[6], a[0] * b[1] + a[3] * b[4] + a[6] * b[7],
            a[0] * b[2] + a[3] * b[5] + a[6] * b[8], a[1] * b[0] + a[4] * b[3] + a[7] * b[6],
            a[1] * b[1] + a[4] * b[4] + a[7] * b[7], a[1] * b[2] + a[4] * b[5] + a[7] * b[8],
            a[2] * b[0] + a[5] * b[3] + a[8] * b[6], a[2] * b[1] + a[5] * b[4] + a[8] * b[7],
            a[2] * b[2] + a[5] * b[5] + a[8] * b[8])


@jit
def _perm3(v, i0, i1, i2, f0, f1, f2):
    return (v[i0] * f0, v[i1] * f1, v[i2] * f2)


@jit
def _permmat(a, i0, i1, i2, f0, f1, f2):
    return (a[3 * i0] * f0, a[3 * i0 + 1] * f0, a[3 * i0 + 2] * f0,
            a[3 * i1] * f1, a[3 * i1 + 1] * f1, a[3 * i1 + 2] * f1,
            a[3 * i2] * f2, a[3 * i2 + 1] * f2, a[3 * i2 + 2] * f2)


@jit
def _box_box_face(cd, cp, cf, n0, margin, pos1, mat1, size1, pos2, mat2, size2, w, code, pos21,
                  pos12, rot):
    # face q1 of box q2 (0: box 1, 1: box 2) is the reference face, rotated to +z
    q1 = code % 6
    q2 = code // 6
    rotmore = _rotmore(q1)
    i0, i1, i2, f0, f1, f2 = _face_perm(q1)
    if q2:
        r = _mulmatmatT(rotmore, rot)
        p = _perm3(pos12, i0, i1, i2, f0, f1, f2)
        t = _perm3(size2, i0, i1, i2, f0, f1, f2)
        s = size1
    else:
        r = _permmat(rot, i0, i1, i2, f0, f1, f2)
        p = _perm3(pos21, i0, i1, i2, f0, f1, f2)
        t = _perm3(size1, i0, i1, i2, f0, f1, f2)
        s = size2
    rt = transpose3(r)
    ss = (abs(t[0]), abs(t[1]), abs(t[2]))
    lx = ss[0]
    ly = ss[1]
    hz = ss[2]
    p = (p[0], p[1], p[2] - hz)
    clcorner = 0
    for i in range(3):
        if r[6 + i] < 0:
            clcorner += 1 << i
    lp = add3(p, scl3(_row(rt, 0), s[0] * (1.0 if clcorner & 1 else -1.0)))
    lp = add3(lp, scl3(_row(rt, 1), s[1] * (1.0 if clcorner & 2 else -1.0)))
    lp = add3(lp, scl3(_row(rt, 2), s[2] * (1.0 if clcorner & 4 else -1.0)))
    # pts: the incident box's nearest corner and its edges not parallel to the face normal
    m = 0
    _set_w3(w, _PTS + m, lp)
    m += 1
    for i in range(3):
        if abs(r[6 + i]) < 0.5:
            _set_w3(w, _PTS + m, scl3(_row(rt, i), s[i] * (-2.0 if clcorner & (1 << i) else 2.0)))
            m += 1
    _set_w3(w, _PTS + 3, add3(_w3(w, _PTS), _w3(w, _PTS + 1)))
    _set_w3(w, _PTS + 4, add3(_w3(w, _PTS), _w3(w, _PTS + 2)))
    _set_w3(w, _PTS + 5, add3(_w3(w, _PTS + 3), _w3(w, _PTS + 2)))
    k = 0
    if m > 1:
        _set_line(w, _LINES + k, _w3(w, _PTS), _w3(w, _PTS + 1))
        k += 1
    if m > 2:
        _set_line(w, _LINES + k, _w3(w, _PTS), _w3(w, _PTS + 2))
        k += 1
        _set_line(w, _LINES + k, _w3(w, _PTS + 3), _w3(w, _PTS + 2))
        k += 1
        _set_line(w, _LINES + k, _w3(w, _PTS + 4), _w3(w, _PTS + 1))
        k += 1
    n = 0
    # incident edges crossing the sides of the reference face
    for i in range(k):
        L = _LINES + i
        for q in range(2):
            a = w[L, q]
            b = w[L, 3 + q]
            c = w[L, 1 - q]
            d = w[L, 4 - q]
            if abs(b) > MINVAL:
                for j in (-1, 1):
                    l = ss[q] * j
                    c1 = (l - a) * (1 / b)
                    if c1 < 0 or c1 > 1:
                        continue
                    c2 = c + d * c1
                    if abs(c2) > ss[1 - q]:
                        continue
                    _set_w3(w, n, add3((w[L, 0], w[L, 1], w[L, 2]),
                                       scl3((w[L, 3], w[L, 4], w[L, 5]), c1)))
                    n += 1
    # reference face corners inside the incident face parallelogram
    a = w[_PTS + 1, 0]
    b = w[_PTS + 2, 0]
    c = w[_PTS + 1, 1]
    d = w[_PTS + 2, 1]
    c1 = a * d - b * c
    if m > 2:
        for i in range(4):
            llx = lx if i // 2 else -lx
            lly = ly if i % 2 else -ly
            x = llx - w[_PTS, 0]
            y = lly - w[_PTS, 1]
            u = (x * d - y * b) * (1 / c1)
            v = (y * a - x * c) * (1 / c1)
            if u <= 0 or v <= 0 or u >= 1 or v >= 1:
                continue
            w[n, 0] = llx
            w[n, 1] = lly
            w[n, 2] = w[_PTS, 2] + u * w[_PTS + 1, 2] + v * w[_PTS + 2, 2]
            n += 1
    # incident corners inside the reference face
    for i in range(1 << (m - 1)):
        t = _w3(w, _PTS + (0 if i == 0 else i + 2))
        if i:
            if t[0] <= -lx or t[0] >= lx:
                continue
            if t[1] <= -ly or t[1] >= ly:
                continue
        _set_w3(w, n, t)
        n += 1
    m = n
    n = 0
    for i in range(m):
        if w[i, 2] > margin:
            continue
        z = w[i, 2]
        w[n, 0] = w[i, 0]
        w[n, 1] = w[i, 1]
        w[n, 2] = z * 0.5
        w[n, 3] = z
        n += 1
    r = _mulmatmatT(mat2 if q2 else mat1, rotmore)
    p = pos2 if q2 else pos1
    sgn = -1.0 if q2 else 1.0
    normal = (sgn * r[2], sgn * r[5], sgn * r[8])
    for i in range(n):
        # the full depth (MuJoCo's older box-box reported half of it in this case)
        pt = (w[i, 0], w[i, 1], w[i, 2] + hz)
        put(cd, cp, cf, n0 + i, w[i, 3], add3(mulmatvec3(r, pt), p), normal)
    return n


@jit
def _set_line(w, r, a, b):
    w[r, 0] = a[0]
    w[r, 1] = a[1]
    w[r, 2] = a[2]
    w[r, 3] = b[0]
    w[r, 4] = b[1]
    w[r, 5] = b[2]


@jit
def _box_box_edge(cd, cp, cf, n0, margin, margin2, pos1, mat1, size1, pos2, mat2, size2, w, code,
                  pos21, rot, rotabs, rottabs, cle1, cle2, inn, clnorm):
    # edge-edge: the face of box 1 nearest to the separating axis is the reference face; the
    # incident face of box 2 containing the closest edge is projected onto it along the axis
    code -= 12
    q1 = code // 3
    q2 = code % 3
    if q2 == 0:
        ax1, ax2 = 1, 2
    elif q2 == 1:
        ax1, ax2 = 0, 2
    else:
        ax1, ax2 = 1, 0
    if q1 == 0:
        pax1, pax2 = 1, 2
    elif q1 == 1:
        pax1, pax2 = 0, 2
    else:
        pax1, pax2 = 1, 0
    if rotabs[3 * q1 + ax1] < rotabs[3 * q1 + ax2]:
        ax1 = ax2
        ax2 = 3 - q2 - ax1
    if rottabs[3 * q2 + pax1] < rottabs[3 * q2 + pax2]:
        pax1 = pax2
        pax2 = 3 - q1 - pax1
    clface = pax2 if cle1 & (1 << pax2) else pax2 + 3
    rotmore = _rotmore(clface)
    i0, i1, i2, f0, f1, f2 = _face_perm(clface)
    p = _perm3(pos21, i0, i1, i2, f0, f1, f2)
    rnorm = _perm3(clnorm, i0, i1, i2, f0, f1, f2)
    r = _permmat(rot, i0, i1, i2, f0, f1, f2)
    t = mulmattvec3(rotmore, size1)
    s = (abs(t[0]), abs(t[1]), abs(t[2]))
    rt = transpose3(r)
    lx = s[0]
    ly = s[1]
    hz = s[2]
    p = (p[0], p[1], p[2] - hz)
    # the incident face's four corners
    sa1 = size2[ax1] * (1.0 if cle2 & (1 << ax1) else -1.0)
    sa2 = size2[ax2] * (1.0 if cle2 & (1 << ax2) else -1.0)
    base = add3(add3(p, scl3(_row(rt, ax1), sa1)), scl3(_row(rt, ax2), sa2))
    P0 = add3(base, scl3(_row(rt, q2), size2[q2]))
    P1 = add3(base, scl3(_row(rt, q2), -size2[q2]))
    base = add3(add3(p, scl3(_row(rt, ax1), -sa1)), scl3(_row(rt, ax2), sa2))
    P2 = add3(base, scl3(_row(rt, q2), size2[q2]))
    P3 = add3(base, scl3(_row(rt, q2), -size2[q2]))
    axi0 = P0
    axi1 = sub3(P1, P0)
    axi2 = sub3(P2, P0)
    if abs(rnorm[2]) < MINVAL:
        return 0
    innorm = (1 / rnorm[2]) * (-1.0 if inn else 1.0)
    # pu: unprojected corners; projected corners along rnorm onto the reference plane
    Ps = (P0, P1, P2, P3)
    for i in range(4):
        Pi = Ps[i]
        _set_w3(w, _PU + i, Pi)
        c1 = -Pi[2] * (1 / rnorm[2])
        pr = add3(Pi, scl3(rnorm, c1))
        w[_PP2 + i, 0] = pr[0]
        w[_PP2 + i, 1] = pr[1]
        w[_PP2 + i, 2] = pr[2]
    pts0 = _w3(w, _PP2)
    pts1 = sub3(_w3(w, _PP2 + 1), pts0)
    pts2 = sub3(_w3(w, _PP2 + 2), pts0)
    _set_line(w, _LINES + 0, pts0, pts1)
    _set_line(w, _LINESU + 0, axi0, axi1)
    _set_line(w, _LINES + 1, pts0, pts2)
    _set_line(w, _LINESU + 1, axi0, axi2)
    _set_line(w, _LINES + 2, add3(pts0, pts1), pts2)
    _set_line(w, _LINESU + 2, add3(axi0, axi1), axi2)
    _set_line(w, _LINES + 3, add3(pts0, pts2), pts1)
    _set_line(w, _LINESU + 3, add3(axi0, axi2), axi1)
    k = 4
    n = 0
    for i in range(k):
        L = _LINES + i
        LU = _LINESU + i
        for q in range(2):
            a = w[L, q]
            b = w[L, 3 + q]
            c = w[L, 1 - q]
            d = w[L, 4 - q]
            if abs(b) > MINVAL:
                for j in (-1, 1):
                    if n < MAXCONPAIR:
                        l = s[q] * j
                        c1 = (l - a) * (1 / b)
                        if c1 < 0 or c1 > 1:
                            continue
                        c2 = c + d * c1
                        if abs(c2) > s[1 - q]:
                            continue
                        if (w[LU, 2] + w[LU, 5] * c1) * innorm > margin:
                            continue
                        pt = add3(scl3((w[LU, 0], w[LU, 1], w[LU, 2]), 0.5),
                                  scl3((w[LU, 3], w[LU, 4], w[LU, 5]), 0.5 * c1))
                        if q == 0:
                            pt = (pt[0] + 0.5 * l, pt[1] + 0.5 * c2, pt[2])
                        else:
                            pt = (pt[0] + 0.5 * c2, pt[1] + 0.5 * l, pt[2])
                        _set_w3(w, n, pt)
                        w[n, 3] = pt[2] * innorm * 2
                        n += 1
    nl = n
    a = pts1[0]
    b = pts2[0]
    c = pts1[1]
    d = pts2[1]
    c1 = a * d - b * c
    pu0 = _w3(w, _PU)
    pu1 = _w3(w, _PU + 1)
    pu2 = _w3(w, _PU + 2)
    for i in range(4):
        if n < MAXCONPAIR:
            llx = lx if i // 2 else -lx
            lly = ly if i % 2 else -ly
            x = llx - pts0[0]
            y = lly - pts0[1]
            u = (x * d - y * b) * (1 / c1)
            v = (y * a - x * c) * (1 / c1)
            if nl == 0:
                if (u < 0 or u > 1) and (v < 0 or v > 1):
                    continue
            elif u < 0 or u > 1 or v < 0 or v > 1:
                continue
            u = clip(u, 0.0, 1.0)
            v = clip(v, 0.0, 1.0)
            t1 = add3(add3(scl3(pu0, 1 - u - v), scl3(pu1, u)), scl3(pu2, v))
            pt = (llx, lly, 0.0)
            t2 = sub3(pt, t1)
            cc = dot3(t2, t2)
            if t1[2] > 0 and cc > margin2:
                continue
            _set_w3(w, n, scl3(add3(pt, t1), 0.5))
            w[n, 3] = math.sqrt(cc) * (-1.0 if t1[2] < 0 else 1.0)
            n += 1
    nf = n
    for i in range(4):
        if n < MAXCONPAIR:
            x = w[_PP2 + i, 0]
            y = w[_PP2 + i, 1]
            if nl == 0:
                if nf != 0:
                    if (x < -lx or x > lx) and (y < -ly or y > ly):
                        continue
            elif x < -lx or x > lx or y < -ly or y > ly:
                continue
            cc = 0.0
            for j in range(2):
                pj = w[_PP2 + i, j]
                if pj < -s[j]:
                    cc += (pj + s[j]) * (pj + s[j])
                elif pj > s[j]:
                    cc += (pj - s[j]) * (pj - s[j])
            puz = w[_PU + i, 2]
            cc += puz * innorm * puz * innorm
            if puz > 0 and cc > margin2:
                continue
            tx = w[_PP2 + i, 0] * 0.5
            ty = w[_PP2 + i, 1] * 0.5
            if w[_PP2 + i, 0] < -s[0]:
                tx = -s[0] * 0.5
            elif w[_PP2 + i, 0] > s[0]:
                tx = s[0] * 0.5
            if w[_PP2 + i, 1] < -s[1]:
                ty = -s[1] * 0.5
            elif w[_PP2 + i, 1] > s[1]:
                ty = s[1] * 0.5
            pt = add3((tx, ty, 0.0), scl3(_w3(w, _PU + i), 0.5))
            _set_w3(w, n, pt)
            w[n, 3] = math.sqrt(cc) * (-1.0 if puz < 0 else 1.0)
            n += 1
    r = _mulmatmatT(mat1, rotmore)
    normal = scl3(mulmatvec3(r, rnorm), -1.0 if inn else 1.0)
    for i in range(n):
        pt = (w[i, 0], w[i, 1], w[i, 2] + hz)
        put(cd, cp, cf, n0 + i, w[i, 3], add3(mulmatvec3(r, pt), pos1), normal)
    return n


@jit
def outside_box(point, pos, mat, size, inflate):
    """1 outside the box inflated by `inflate`, -1 inside the deflated box, 0 in between."""
    v = mulmattvec3(mat, sub3(point, pos))
    big = scl3(size, inflate)
    if (v[0] > big[0] or v[0] < -big[0] or v[1] > big[1] or v[1] < -big[1]
            or v[2] > big[2] or v[2] < -big[2]):
        return 1
    sm = (size[0] / inflate, size[1] / inflate, size[2] / inflate)
    if (v[0] < sm[0] and v[0] > -sm[0] and v[1] < sm[1] and v[1] > -sm[1]
            and v[2] < sm[2] and v[2] > -sm[2]):
        return -1
    return 0


@jit
def box_box_clean(cd, cp, cf, n0, num, margin, pos1, mat1, size1, pos2, mat2, size2, w):
    """Drop box-box contacts outside either (margin-inflated) box and repeated points."""
    sz1 = (size1[0] + margin, size1[1] + margin, size1[2] + margin)
    sz2 = (size2[0] + margin, size2[1] + margin, size2[2] + margin)
    for i in range(n0, n0 + num):
        p = (cp[i, 0], cp[i, 1], cp[i, 2])
        o1 = outside_box(p, pos1, mat1, sz1, 1.01)
        o2 = outside_box(p, pos2, mat2, sz2, 1.01)
        w[i - n0, 5] = 1.0 if (o1 == 1 and o2 != -1) or (o2 == 1 and o1 != -1) else 0.0
    for i in range(n0, n0 + num - 1):
        if w[i - n0, 5]:
            continue
        for j in range(i + 1, n0 + num):
            if w[j - n0, 5]:
                continue
            if cp[i, 0] == cp[j, 0] and cp[i, 1] == cp[j, 1] and cp[i, 2] == cp[j, 2]:
                w[i - n0, 5] = 1.0
                break
    k = n0
    for j in range(n0, n0 + num):
        if w[j - n0, 5] == 0.0:
            if k < j:
                cd[k] = cd[j]
                for c in range(3):
                    cp[k, c] = cp[j, c]
                for c in range(9):
                    cf[k, c] = cf[j, c]
            k += 1
    return k - n0

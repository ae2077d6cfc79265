"""Inertia arithmetic of the compiler, done the way MuJoCo's compiler does it.

Plain Python floats (this runs once per load) so that results agree with MuJoCo's compiled
model to rounding: the principal axes come from the same Jacobi iteration with descending
eigenvalues, and the geom volume / inertia formulas are MuJoCo's (src/user/user_objects.cc,
user_util.cc).
"""
from __future__ import annotations

import math

from ..constants import EPS
from ..enums import GeomType
from .frames import mulquat, normalized, quat2mat

SPHERE, CAPSULE, ELLIPSOID, CYLINDER = (GeomType.SPHERE, GeomType.CAPSULE, GeomType.ELLIPSOID,
                                        GeomType.CYLINDER)
BOX, MESH, HFIELD = GeomType.BOX, GeomType.MESH, GeomType.HFIELD


def eig3(mat, tol=4e-15):
    """Eigen-decomposition of a symmetric 3x3 (row-major 9 list): (eigval desc, quat of axes).

    MuJoCo 4's compiler routine (mjuu_eig3), operation for operation, so that principal axes
    agree to the last bit: the iteration stops at a tolerance and the axes of repeated moments
    are arbitrary, so any other rounding gives a different, equally valid, frame. Jacobi
    rotations annihilate the largest off-diagonal element of D = R' A R until it is at most
    tol max|A_ij| (tol: 4e-15 for bodies, 1e-7 for meshes); the plane rotation of angle theta
    (tan theta = t from the 2x2 Schur decomposition) is accumulated as the half-angle
    quaternion (cos, sin)(theta/2) with tan(theta/2) = t / (1 + sqrt(1 + t^2)). The moments
    are then sorted in decreasing order by quarter turns (pairs 0-1, 1-2, 0-1), swapping only
    moments that differ by more than max(tol, 1e-12) max|A_ij|.
    """
    scale = 0.0
    for x in mat:
        scale = max(abs(x), scale)
    eps = max(tol, 4e-15) * scale
    quat = [1.0, 0.0, 0.0, 0.0]
    eigval = [mat[0], mat[4], mat[8]]
    for _ in range(500):
        R = quat2mat(quat)
        # D = R' A R, each entry summed left to right
        RtA = [(R[i] * mat[j] + R[3 + i] * mat[3 + j]) + R[6 + i] * mat[6 + j]
               for i in range(3) for j in range(3)]
        D = [(RtA[3 * i] * R[j] + RtA[3 * i + 1] * R[3 + j]) + RtA[3 * i + 2] * R[6 + j]
             for i in range(3) for j in range(3)]
        eigval = [D[0], D[4], D[8]]
        # largest off-diagonal element (rk, ck); the plane rotation is about axis rotk
        if abs(D[1]) > abs(D[2]) and abs(D[1]) > abs(D[5]):
            rk, ck, rotk = 0, 1, 2
        elif abs(D[2]) > abs(D[5]):
            rk, ck, rotk = 0, 2, 1
        else:
            rk, ck, rotk = 1, 2, 0
        off = D[3 * rk + ck]
        if eps >= abs(off):
            break
        tau = (D[4 * ck] - D[4 * rk]) / (off + off)
        s = math.sqrt(tau * tau + 1)
        t = 1 / (tau + s) if tau >= 0 else -1 / (s - tau)
        h = t / (math.sqrt(t * t + 1) + 1)   # tan(theta / 2)
        ch = 1 / math.sqrt(h * h + 1)         # cos(theta / 2)
        if rotk != 1:
            h = -h
        rot = [ch, 0.0, 0.0, 0.0]
        rot[rotk + 1] = h * ch
        quat = normalized(mulquat(quat, rot))
    tol = max(tol, 1e-12) * scale
    for j in range(3):
        j1 = j % 2
        if eigval[j1 + 1] > eigval[j1] + tol:
            eigval[j1], eigval[j1 + 1] = eigval[j1 + 1], eigval[j1]
            rot = [0.707106781186548, 0.0, 0.0, 0.0]   # quarter turn: cos(pi/4) = sin(pi/4)
            rot[(j1 + 2) % 3 + 1] = rot[0]
            quat = normalized(mulquat(quat, rot))
    return eigval, quat


def full_inertia(full6):
    """(iquat, diag inertia) of a full inertia (xx, yy, zz, xy, xz, yz), or None if not positive."""
    f = full6
    mat = [f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2]]
    eigval, quat = eig3(mat)
    if eigval[2] < EPS:
        return None
    return quat, eigval


def global_inertia(local, quat):
    """Diagonal inertia `local` in frame `quat` -> full (xx, yy, zz, xy, xz, yz)."""
    m = quat2mat(quat)
    tmp = [m[0] * local[0], m[3] * local[0], m[6] * local[0],
           m[1] * local[1], m[4] * local[1], m[7] * local[1],
           m[2] * local[2], m[5] * local[2], m[8] * local[2]]
    return [m[0] * tmp[0] + m[1] * tmp[3] + m[2] * tmp[6],
            m[3] * tmp[1] + m[4] * tmp[4] + m[5] * tmp[7],
            m[6] * tmp[2] + m[7] * tmp[5] + m[8] * tmp[8],
            m[0] * tmp[1] + m[1] * tmp[4] + m[2] * tmp[7],
            m[0] * tmp[2] + m[1] * tmp[5] + m[2] * tmp[8],
            m[3] * tmp[2] + m[4] * tmp[5] + m[5] * tmp[8]]


def offcenter(mass, v):
    """Parallel-axis term mass * (|v|^2 I - v v^T) as (xx, yy, zz, xy, xz, yz)."""
    return [mass * (v[1] * v[1] + v[2] * v[2]), mass * (v[0] * v[0] + v[2] * v[2]),
            mass * (v[0] * v[0] + v[1] * v[1]), -mass * v[0] * v[1], -mass * v[0] * v[2],
            -mass * v[1] * v[2]]


# ----------------------------------------------------------------------------------------------
# geom volume and inertia (MuJoCo's mjCGeom::GetVolume / SetInertia)
# ----------------------------------------------------------------------------------------------
def geom_volume(gtype, size, shell=False, mesh_volume=None):
    pi = math.pi
    if gtype == MESH:
        return mesh_volume
    if gtype == SPHERE:
        r = size[0]
        return 4 * pi * r * r if shell else 4 * pi * r * r * r / 3
    if gtype == CAPSULE:
        h, r = 2 * size[1], size[0]
        if shell:
            return 4 * pi * r * r + 2 * pi * r * h
        return pi * (r * r * h + 4 * r * r * r / 3)
    if gtype == CYLINDER:
        h, r = 2 * size[1], size[0]
        if shell:
            return 2 * pi * r * r + 2 * pi * r * h
        return pi * r * r * h
    if gtype == ELLIPSOID:
        if shell:
            p = 1.6075
            tmp = ((size[0] * size[1]) ** p + (size[1] * size[2]) ** p
                   + (size[2] * size[0]) ** p)
            return 4 * pi * (tmp / 3) ** (1 / p)
        return 4 * pi * size[0] * size[1] * size[2] / 3
    if gtype in (BOX, HFIELD):
        if shell:
            return 8 * (size[0] * size[1] + size[1] * size[2] + size[2] * size[0])
        return size[0] * size[1] * size[2] * 8
    return 0.0


def geom_inertia(gtype, size, mass, shell=False, mesh_boxsz=None):
    """Principal inertia of a geom of the given mass (a mesh: that of its equivalent box,
    half-sizes mesh_boxsz, as MuJoCo's mjCGeom::SetInertia)."""
    pi = math.pi
    if gtype == MESH:
        b = mesh_boxsz
        return [mass * (b[1] * b[1] + b[2] * b[2]) / 3, mass * (b[0] * b[0] + b[2] * b[2]) / 3,
                mass * (b[0] * b[0] + b[1] * b[1]) / 3]
    if gtype == SPHERE:
        v = 2 * mass * size[0] * size[0] / (3 if shell else 5)
        return [v, v, v]
    if gtype == CAPSULE:
        hh, h, r = size[1], 2 * size[1], size[0]
        if not shell:
            sm = mass * 4 * r / (4 * r + 3 * h)
            cm = mass - sm
            ix = cm * (3 * r * r + h * h) / 12
            iz = cm * r * r / 2
            si = 2 * sm * r * r / 5
            ix += si + sm * h * (3 * r + 2 * h) / 8
            return [ix, ix, iz + si]
        As, Ac = 4 * pi * r * r, 2 * pi * r * h
        sm = mass * As / (As + Ac)
        cm = mass - sm
        ix = cm * (6 * r * r + h * h) / 12
        iz = cm * r * r
        si = 2 * sm * r * r / 3
        hs_com = r / 2
        hs_pos = hh + hs_com
        ix += si + sm * (hs_pos * hs_pos - hs_com * hs_com)
        return [ix, ix, iz + si]
    if gtype == CYLINDER:
        hh, h, r = size[1], 2 * size[1], size[0]
        if not shell:
            ix = mass * (3 * r * r + h * h) / 12
            return [ix, ix, mass * r * r / 2]
        Ad, Ac = pi * r * r, 2 * pi * r * h
        md = mass * Ad / (2 * Ad + Ac)
        mc = mass - 2 * md
        ix = mc * (6 * r * r + h * h) / 12
        iz = mc * r * r
        idx = md * r * r / 4 + md * hh * hh
        idz = md * r * r / 2
        return [ix + 2 * idx, ix + 2 * idx, iz + 2 * idz]
    if gtype == ELLIPSOID:
        s00, s11, s22 = size[0] ** 2, size[1] ** 2, size[2] ** 2
        if not shell:
            return [mass * (s11 + s22) / 5, mass * (s00 + s22) / 5, mass * (s00 + s11) / 5]
        eps = 1e-6
        Va = 4 * pi * size[0] * size[1] * size[2] / 3
        ae, be, ce = size[0] + eps, size[1] + eps, size[2] + eps
        Vb = 4 * pi * ae * be * ce / 3
        dens = mass / (Vb - Va)
        ma, mb = Va * dens, Vb * dens
        ia = [ma * (s11 + s22) / 5, ma * (s00 + s22) / 5, ma * (s00 + s11) / 5]
        ib = [mb * (be * be + ce * ce) / 5, mb * (ae * ae + ce * ce) / 5,
              mb * (ae * ae + be * be) / 5]
        return [ib[0] - ia[0], ib[1] - ia[1], ib[2] - ia[2]]
    if gtype in (BOX, HFIELD):
        s00, s11, s22 = size[0] ** 2, size[1] ** 2, size[2] ** 2
        if not shell:
            return [mass * (s11 + s22) / 3, mass * (s00 + s22) / 3, mass * (s00 + s11) / 3]
        lx, ly, lz = 2 * size[0], 2 * size[1], 2 * size[2]
        A0, A1, A2 = lx * ly, ly * lz, lz * lx
        At = 2 * (A0 + A1 + A2)
        m0, m1, m2 = mass * A0 / At, mass * A1 / At, mass * A2 / At
        Ix0, Iy0, Iz0 = m0 * ly * ly / 12, m0 * lx * lx / 12, m0 * (lx * lx + ly * ly) / 12
        Ix1, Iy1, Iz1 = m1 * (ly * ly + lz * lz) / 12, m1 * lz * lz / 12, m1 * ly * ly / 12
        Ix2, Iy2, Iz2 = m2 * lz * lz / 12, m2 * (lx * lx + lz * lz) / 12, m2 * lx * lx / 12
        return [2 * (m0 * s22 + m2 * s11 + Ix0 + Ix1 + Ix2),
                2 * (m0 * s22 + m1 * s00 + Iy0 + Iy1 + Iy2),
                2 * (m1 * s00 + m2 * s11 + Iz0 + Iz1 + Iz2)]
    return [0.0, 0.0, 0.0]


def geom_rbound(gtype, size, mesh_aamm=None, hfield_size=None):
    if gtype == HFIELD:
        h = hfield_size
        return math.sqrt(h[0] * h[0] + h[1] * h[1] + max(h[2] * h[2], h[3] * h[3]))
    if gtype == SPHERE:
        return size[0]
    if gtype == CAPSULE:
        return size[0] + size[1]
    if gtype == CYLINDER:
        return math.sqrt(size[0] * size[0] + size[1] * size[1])
    if gtype == ELLIPSOID:
        return max(size[0], size[1], size[2])
    if gtype == BOX:
        return math.sqrt(size[0] * size[0] + size[1] * size[1] + size[2] * size[2])
    if gtype == MESH:
        a = mesh_aamm
        hx, hy, hz = max(abs(a[0]), abs(a[3])), max(abs(a[1]), abs(a[4])), \
            max(abs(a[2]), abs(a[5]))
        return math.sqrt(hx * hx + hy * hy + hz * hz)
    return 0.0

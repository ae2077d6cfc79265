"""Frame and inertia arithmetic of the compiler, done the way MuJoCo's compiler does it.

Plain Python floats (this runs once per load) so that results agree with MuJoCo's compiled
model to rounding: quaternion products are renormalised only when their norm is off by more than
EPS, the principal axes come from the same Jacobi iteration with descending eigenvalues, and the
geom volume / inertia formulas are MuJoCo's (src/user/user_objects.cc, user_util.cc).
"""
from __future__ import annotations

import math

EPS = 1e-14      # MuJoCo's mjEPS
MINVAL = 1e-15   # MuJoCo's mjMINVAL
_EIG_EPS = 1e-12

SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH, PLANE, HFIELD = 2, 3, 4, 5, 6, 7, 0, 1


def normvec(v):
    """Normalise in place (a list); returns the previous norm (0 if tiny, untouched then)."""
    nrm = sum(x * x for x in v)
    if nrm < EPS:
        return 0.0
    nrm = math.sqrt(nrm)
    if abs(nrm - 1) > EPS:
        for i in range(len(v)):
            v[i] /= nrm
    return nrm


def normalized(v):
    v = list(v)
    normvec(v)
    return v


def mulquat(a, b):
    r = [a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
         a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
         a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
         a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]]
    normvec(r)
    return r


def negquat(q):
    return [q[0], -q[1], -q[2], -q[3]]


def quat2mat(q):
    if q[0] == 1 and q[1] == 0 and q[2] == 0 and q[3] == 0:
        return [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    q00, q01, q02, q03 = q[0] * q[0], q[0] * q[1], q[0] * q[2], q[0] * q[3]
    q11, q12, q13 = q[1] * q[1], q[1] * q[2], q[1] * q[3]
    q22, q23, q33 = q[2] * q[2], q[2] * q[3], q[3] * q[3]
    return [q00 + q11 - q22 - q33, 2 * (q12 - q03), 2 * (q13 + q02),
            2 * (q12 + q03), q00 - q11 + q22 - q33, 2 * (q23 - q01),
            2 * (q13 - q02), 2 * (q23 + q01), q00 - q11 - q22 + q33]


def mulmatvec(m, v):
    return [m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
            m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2]]


def mulmatTvec(m, v):
    return [m[0] * v[0] + m[3] * v[1] + m[6] * v[2],
            m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
            m[2] * v[0] + m[5] * v[1] + m[8] * v[2]]


def rotvecquat(v, q):
    """Rotate v by q (MuJoCo's mjuu_rotVecQuat)."""
    if v[0] == 0 and v[1] == 0 and v[2] == 0:
        return [0.0, 0.0, 0.0]
    if q[0] == 1 and q[1] == 0 and q[2] == 0 and q[3] == 0:
        return list(v)
    t = [q[0] * v[0] + q[2] * v[2] - q[3] * v[1],
         q[0] * v[1] + q[3] * v[0] - q[1] * v[2],
         q[0] * v[2] + q[1] * v[1] - q[2] * v[0]]
    return [v[0] + 2 * (q[2] * t[2] - q[3] * t[1]),
            v[1] + 2 * (q[3] * t[0] - q[1] * t[2]),
            v[2] + 2 * (q[1] * t[1] - q[2] * t[0])]


def frameaccum(pos, quat, childpos, childquat):
    """Compose (pos, quat) with a child frame: returns the child in the outer frame."""
    mat = quat2mat(quat)
    v = mulmatvec(mat, childpos)
    return [pos[0] + v[0], pos[1] + v[1], pos[2] + v[2]], mulquat(quat, childquat)


def frameinvert(pos, quat):
    mat = quat2mat(negquat(quat))
    p = mulmatvec(mat, pos)
    return [-p[0], -p[1], -p[2]], negquat(quat)


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def z2quat(vec):
    """Minimal rotation taking (0,0,1) to vec."""
    q = [0.0] + cross([0.0, 0.0, 1.0], vec)
    v = q[1:]
    s = normvec(v)
    q[1:] = v
    if s < 1e-10:
        q[1], q[2], q[3] = 1.0, 0.0, 0.0
    ang = math.atan2(s, vec[2])
    q[0] = math.cos(ang / 2)
    sa = math.sin(ang / 2)
    q[1] *= sa
    q[2] *= sa
    q[3] *= sa
    return q


def frame2quat(x, y, z):
    """Quaternion of the frame whose axes (columns) are x, y, z."""
    mat = (x, y, z)
    q = [0.0, 0.0, 0.0, 0.0]
    if mat[0][0] + mat[1][1] + mat[2][2] > 0:
        q[0] = 0.5 * math.sqrt(1 + mat[0][0] + mat[1][1] + mat[2][2])
        q[1] = 0.25 * (mat[1][2] - mat[2][1]) / q[0]
        q[2] = 0.25 * (mat[2][0] - mat[0][2]) / q[0]
        q[3] = 0.25 * (mat[0][1] - mat[1][0]) / q[0]
    elif mat[0][0] > mat[1][1] and mat[0][0] > mat[2][2]:
        q[1] = 0.5 * math.sqrt(1 + mat[0][0] - mat[1][1] - mat[2][2])
        q[0] = 0.25 * (mat[1][2] - mat[2][1]) / q[1]
        q[2] = 0.25 * (mat[1][0] + mat[0][1]) / q[1]
        q[3] = 0.25 * (mat[2][0] + mat[0][2]) / q[1]
    elif mat[1][1] > mat[2][2]:
        q[2] = 0.5 * math.sqrt(1 - mat[0][0] + mat[1][1] - mat[2][2])
        q[0] = 0.25 * (mat[2][0] - mat[0][2]) / q[2]
        q[1] = 0.25 * (mat[1][0] + mat[0][1]) / q[2]
        q[3] = 0.25 * (mat[2][1] + mat[1][2]) / q[2]
    else:
        q[3] = 0.5 * math.sqrt(1 - mat[0][0] - mat[1][1] + mat[2][2])
        q[0] = 0.25 * (mat[0][1] - mat[1][0]) / q[3]
        q[1] = 0.25 * (mat[2][0] + mat[0][2]) / q[3]
        q[2] = 0.25 * (mat[2][1] + mat[1][2]) / q[3]
    normvec(q)
    return q


def _mulmat(a, b):
    return [sum(a[3 * i + k] * b[3 * k + j] for k in range(3)) for i in range(3) for j in range(3)]


def _transpose(m):
    return [m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8]]


def eig3(mat):
    """Eigen-decomposition of a symmetric 3x3 (row-major 9 list): (eigval desc, quat of axes)."""
    quat = [1.0, 0.0, 0.0, 0.0]
    eigval = [0.0, 0.0, 0.0]
    for _ in range(500):
        ev = quat2mat(quat)
        D = _mulmat(_mulmat(_transpose(ev), mat), ev)
        eigval = [D[0], D[4], D[8]]
        if abs(D[1]) > abs(D[2]) and abs(D[1]) > abs(D[5]):
            rk, ck, rotk = 0, 1, 2
        elif abs(D[2]) > abs(D[5]):
            rk, ck, rotk = 0, 2, 1
        else:
            rk, ck, rotk = 1, 2, 0
        if abs(D[3 * rk + ck]) < _EIG_EPS:
            break
        tau = (D[4 * ck] - D[4 * rk]) / (2 * D[3 * rk + ck])
        if tau >= 0:
            t = 1.0 / (tau + math.sqrt(1 + tau * tau))
        else:
            t = -1.0 / (-tau + math.sqrt(1 + tau * tau))
        c = 1.0 / math.sqrt(1 + t * t)
        if c > 1.0 - _EIG_EPS:
            break
        tmp = [0.0, 0.0, 0.0, 0.0]
        tmp[rotk + 1] = -math.sqrt(0.5 - 0.5 * c) if tau >= 0 else math.sqrt(0.5 - 0.5 * c)
        if rotk == 1:
            tmp[rotk + 1] = -tmp[rotk + 1]
        tmp[0] = math.sqrt(1.0 - tmp[rotk + 1] * tmp[rotk + 1])
        normvec(tmp)
        quat = mulquat(quat, tmp)
        normvec(quat)
    for j in range(3):
        j1 = j % 2
        if eigval[j1] + _EIG_EPS < eigval[j1 + 1]:
            eigval[j1], eigval[j1 + 1] = eigval[j1 + 1], eigval[j1]
            tmp = [0.707106781186548, 0.0, 0.0, 0.0]
            tmp[(j1 + 2) % 3 + 1] = tmp[0]
            quat = mulquat(quat, tmp)
            normvec(quat)
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


def geom_inertia(gtype, size, mass, shell=False, mesh_inertia=None, mesh_volume=None):
    """Principal inertia of a geom of the given mass (mesh: per-unit-density inertia scaled)."""
    pi = math.pi
    if gtype == MESH:
        if not mesh_volume:
            return [0.0, 0.0, 0.0]
        return [mass / mesh_volume * i for i in mesh_inertia]
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

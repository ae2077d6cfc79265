"""Vectors, quaternions and frames, as MuJoCo's compiler computes them (user_util.cc mjuu_*).

Plain Python floats, operation for operation as MuJoCo, so that compiled frames agree to the last
bit: a quaternion product is renormalised only when its norm is off by more than EPS.
"""
from __future__ import annotations

import math

from ..constants import EPS
from ..enums import SameFrame

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


FRAME_EPS = 1e-6  # frames closer than this are treated as the same (MuJoCo's kFrameEps)


def _same_vec(a, b):
    return all(abs(x - y) < FRAME_EPS for x, y in zip(a, b))


def _same_quat(a, b):
    return _same_vec(a, b) or all(abs(x + y) < FRAME_EPS for x, y in zip(a, b))


def same_frame(pos, quat, ipos=None, iquat=None):
    """SameFrame code of a frame (pos, quat) in its body: BODY (1) if it is the body frame,
    BODYROT (3) if it has the body's orientation, INERTIA (2) / INERTIAROT (4) likewise for the
    inertial frame (ipos, iquat; None for the inertial frame itself), else NONE (0)."""
    identity = (1.0, 0.0, 0.0, 0.0)
    if _same_quat(quat, identity):
        return SameFrame.BODY if _same_vec(pos, (0.0, 0.0, 0.0)) else SameFrame.BODYROT
    if iquat is not None and _same_quat(quat, iquat):
        return SameFrame.INERTIA if _same_vec(pos, ipos) else SameFrame.INERTIAROT
    return SameFrame.NONE


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

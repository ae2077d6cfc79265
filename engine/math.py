"""Small vector, quaternion and spatial-algebra kernels.

Vectors are passed and returned as tuples so that compiled code keeps them in registers: no
allocation happens in a step. Quaternions are (w, x, y, z); matrices are row-major 9-tuples.
Spatial vectors are (rot, lin), MuJoCo's convention.
"""
import math

from numba import uint64

from .constants import MAXVAL, MINVAL  # noqa: F401 (re-exported: kernels import it from here)
from .jit import inlined, jit


@jit
def is_bad(x):
    """NaN, infinite or beyond MAXVAL (MuJoCo's mju_isBad)."""
    return not abs(x) <= MAXVAL


@jit
def first_bad(x):
    """Index of the first bad entry of a 1-D array (is_bad), -1 if there is none."""
    for i in range(x.shape[0]):
        if is_bad(x[i]):
            return i
    return -1


@jit
def warn(d, warning, info):
    """Count a warning (enums.Warning) in d.warning and remember its info (MuJoCo's
    mj_warning)."""
    d.warning[warning] += 1
    d.warning_info[warning] = info


@jit
def vec3(a, i):
    """The first three entries of row i of a 2D array (an (n, 3) vector array) as a tuple."""
    return (a[i, 0], a[i, 1], a[i, 2])


@jit
def quat4(a, i):
    """Row i of an (n, 4) array as a tuple."""
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3])


@jit
def mat9(a, i):
    """Row i of an (n, 9) array as a tuple."""
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5], a[i, 6], a[i, 7], a[i, 8])


@jit
def set3(a, i, v):
    a[i, 0] = v[0]
    a[i, 1] = v[1]
    a[i, 2] = v[2]


@jit
def set4(a, i, v):
    a[i, 0] = v[0]
    a[i, 1] = v[1]
    a[i, 2] = v[2]
    a[i, 3] = v[3]


@jit
def set9(a, i, v):
    for k in range(9):
        a[i, k] = v[k]


@jit
def add3(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jit
def sub3(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@jit
def scl3(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@jit
def dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


# Dot products and axpys over rows, compiled into their callers (a call with arrays passed costs
# about what a short row does). The indices are unsigned: numba then leaves out the wraparound of
# negative indices, which kept the compiler from vectorising the axpys and cost as much as the
# arithmetic of the dot products.
@inlined
def dot_seg(u, j, x, k, n):
    """sum_t u[j + t] x[k + t] over 0 <= t < n, in four partial sums as MuJoCo's mju_dot: four
    independent chains of additions instead of one (the compiler may not reorder them)."""
    if n <= 0:
        return 0.0
    ju = uint64(j)
    ku = uint64(k)
    nu = uint64(n)
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    t = uint64(0)
    while t + uint64(4) <= nu:
        s0 += u[ju + t] * x[ku + t]
        s1 += u[ju + t + uint64(1)] * x[ku + t + uint64(1)]
        s2 += u[ju + t + uint64(2)] * x[ku + t + uint64(2)]
        s3 += u[ju + t + uint64(3)] * x[ku + t + uint64(3)]
        t += uint64(4)
    s = (s0 + s1) + (s2 + s3)
    while t < nu:
        s += u[ju + t] * x[ku + t]
        t += uint64(1)
    return s


@inlined
def dot3_seg(u0, u1, u2, j, x, k, n):
    """dot_seg of three rows u0, u1, u2 with x over the same n entries: one pass over x, each
    sum in dot_seg's four partial sums (the same results, bit for bit)."""
    if n <= 0:
        return 0.0, 0.0, 0.0
    ju = uint64(j)
    ku = uint64(k)
    nu = uint64(n)
    a0 = a1 = a2 = a3 = 0.0
    b0 = b1 = b2 = b3 = 0.0
    c0 = c1 = c2 = c3 = 0.0
    t = uint64(0)
    while t + uint64(4) <= nu:
        x0 = x[ku + t]
        x1 = x[ku + t + uint64(1)]
        x2 = x[ku + t + uint64(2)]
        x3 = x[ku + t + uint64(3)]
        a0 += u0[ju + t] * x0
        a1 += u0[ju + t + uint64(1)] * x1
        a2 += u0[ju + t + uint64(2)] * x2
        a3 += u0[ju + t + uint64(3)] * x3
        b0 += u1[ju + t] * x0
        b1 += u1[ju + t + uint64(1)] * x1
        b2 += u1[ju + t + uint64(2)] * x2
        b3 += u1[ju + t + uint64(3)] * x3
        c0 += u2[ju + t] * x0
        c1 += u2[ju + t + uint64(1)] * x1
        c2 += u2[ju + t + uint64(2)] * x2
        c3 += u2[ju + t + uint64(3)] * x3
        t += uint64(4)
    sa = (a0 + a1) + (a2 + a3)
    sb = (b0 + b1) + (b2 + b3)
    sc = (c0 + c1) + (c2 + c3)
    while t < nu:
        xt = x[ku + t]
        sa += u0[ju + t] * xt
        sb += u1[ju + t] * xt
        sc += u2[ju + t] * xt
        t += uint64(1)
    return sa, sb, sc


@inlined
def axpy_seg(y, k, scale, u, j, n):
    """y[k + t] += scale * u[j + t] over 0 <= t < n."""
    if n <= 0:
        return
    ju = uint64(j)
    ku = uint64(k)
    nu = uint64(n)
    t = uint64(0)
    while t < nu:
        y[ku + t] += scale * u[ju + t]
        t += uint64(1)


@inlined
def axpy3_seg(y, k, s0, u0, s1, u1, s2, u2, j, n):
    """y[k + t] += s0 u0[j + t], then s1 u1[j + t], then s2 u2[j + t] over 0 <= t < n: three
    axpy_seg in one pass over y (the same results, bit for bit)."""
    if n <= 0:
        return
    ju = uint64(j)
    ku = uint64(k)
    nu = uint64(n)
    t = uint64(0)
    while t < nu:
        y[ku + t] = ((y[ku + t] + s0 * u0[ju + t]) + s1 * u1[ju + t]) + s2 * u2[ju + t]
        t += uint64(1)


@inlined
def dot_row(A, i, x, a, b):
    """sum_k A[i, k] x[k] over a <= k < b (dot_seg)."""
    return dot_seg(A[i], a, x, a, b - a)


@inlined
def dot_rows2(A, i, B, j, a, b):
    """sum_k A[i, k] B[j, k] over a <= k < b (dot_seg)."""
    return dot_seg(A[i], a, B[j], a, b - a)


@inlined
def dot_rows(A, i, j, n):
    """sum_k A[i, k] A[j, k] over k < n (dot_rows2 of A with itself)."""
    return dot_rows2(A, i, A, j, 0, n)


@jit
def cross3(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@jit
def norm3(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@jit
def _unit_or(v, fallback):
    """v / |v|, or fallback when |v| < MINVAL (as mju_makeFrame normalises)."""
    ln = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if ln < MINVAL:
        return fallback
    inv = 1.0 / ln
    return (v[0] * inv, v[1] * inv, v[2] * inv)


@jit
def complete_frame(n, t):
    """(normal, tangent, binormal): an orthonormal frame from the normal n and the tangent t
    (MuJoCo's mju_makeFrame). n is normalised ((1, 0, 0) when near zero); t is kept if its length
    is at least 1/2, made orthogonal to n, otherwise (0, 1, 0), or (0, 0, 1) when n is close to y;
    the binormal is n x t."""
    u = _unit_or(n, (1.0, 0.0, 0.0))
    if t[0] * t[0] + t[1] * t[1] + t[2] * t[2] < 0.25:
        t = (0.0, 1.0, 0.0) if -0.5 < u[1] < 0.5 else (0.0, 0.0, 1.0)
    s = u[0] * t[0] + u[1] * t[1] + u[2] * t[2]           # t -= u (u . t), normalised
    v = _unit_or((t[0] - u[0] * s, t[1] - u[1] * s, t[2] - u[2] * s), (1.0, 0.0, 0.0))
    return u, v, cross3(u, v)


@jit
def mulmatvec3(m, v):
    """m @ v for a row-major 3x3 matrix."""
    return (m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
            m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2])


@jit
def mulmattvec3(m, v):
    """m.T @ v for a row-major 3x3 matrix."""
    return (m[0] * v[0] + m[3] * v[1] + m[6] * v[2],
            m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
            m[2] * v[0] + m[5] * v[1] + m[8] * v[2])


@jit
def mulmatmat3(a, b):
    """a @ b for row-major 3x3 matrices."""
    return (a[0] * b[0] + a[1] * b[3] + a[2] * b[6],
            a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
            a[0] * b[2] + a[1] * b[5] + a[2] * b[8],
            a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
            a[3] * b[1] + a[4] * b[4] + a[5] * b[7],
            a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[3] + a[8] * b[6],
            a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
            a[6] * b[2] + a[7] * b[5] + a[8] * b[8])


@jit
def quat_normalize(q):
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if n < MINVAL:
        return (1.0, 0.0, 0.0, 0.0)
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


@jit
def quat_mul(a, b):
    return (a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
            a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
            a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0])


@jit
def quat_rotate(q, v):
    """Rotate v by the unit quaternion q (MuJoCo's mju_rotVecQuat)."""
    if v[0] == 0.0 and v[1] == 0.0 and v[2] == 0.0:
        return (0.0, 0.0, 0.0)
    if q[0] == 1.0 and q[1] == 0.0 and q[2] == 0.0 and q[3] == 0.0:
        return (v[0], v[1], v[2])
    # tmp = q_w * v + cross(q_xyz, v); res = v + 2 * cross(q_xyz, tmp)
    u = (q[1], q[2], q[3])
    c = cross3(u, v)
    tmp = (q[0] * v[0] + c[0], q[0] * v[1] + c[1], q[0] * v[2] + c[2])
    c2 = cross3(u, tmp)
    return (v[0] + 2.0 * c2[0], v[1] + 2.0 * c2[1], v[2] + 2.0 * c2[2])


@jit
def quat2mat(q):
    """Rotation matrix (row-major) of the unit quaternion q (MuJoCo's mju_quat2Mat)."""
    if q[0] == 1.0 and q[1] == 0.0 and q[2] == 0.0 and q[3] == 0.0:
        return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    q00 = q[0] * q[0]
    q01 = q[0] * q[1]
    q02 = q[0] * q[2]
    q03 = q[0] * q[3]
    q11 = q[1] * q[1]
    q12 = q[1] * q[2]
    q13 = q[1] * q[3]
    q22 = q[2] * q[2]
    q23 = q[2] * q[3]
    q33 = q[3] * q[3]
    return (q00 + q11 - q22 - q33, 2 * (q12 - q03), 2 * (q13 + q02),
            2 * (q12 + q03), q00 - q11 + q22 - q33, 2 * (q23 - q01),
            2 * (q13 - q02), 2 * (q23 + q01), q00 - q11 - q22 + q33)


@jit
def axis_angle2quat(axis, angle):
    s = math.sin(angle * 0.5)
    return (math.cos(angle * 0.5), axis[0] * s, axis[1] * s, axis[2] * s)


@jit
def quat_integrate(q, w, h):
    """q * exp(w h / 2): rotate q by the local angular velocity w over time h, normalised."""
    n = norm3(w)
    angle = n * h
    if n < MINVAL:
        return quat_normalize(q)
    axis = (w[0] / n, w[1] / n, w[2] / n)
    return quat_normalize(quat_mul(q, axis_angle2quat(axis, angle)))


@jit
def quat2vel(q, h):
    """Angular velocity that rotates by q in time h (MuJoCo's mju_quat2Vel)."""
    axis = (q[1], q[2], q[3])
    sin_a_2 = norm3(axis)
    if sin_a_2 < MINVAL:
        return (0.0, 0.0, 0.0)
    axis = scl3(axis, 1.0 / sin_a_2)
    speed = 2.0 * math.atan2(sin_a_2, q[0])
    if speed > math.pi:
        speed -= 2.0 * math.pi
    return scl3(axis, speed / h)


@jit
def quat_sub(qa, qb):
    """3D rotation vector from qb to qa, in qb's frame (MuJoCo's mju_subQuat)."""
    # qdif = neg(qb) * qa
    qneg = (qb[0], -qb[1], -qb[2], -qb[3])
    return quat2vel(quat_mul(qneg, qa), 1.0)


@jit
def cross_motion(v, u):
    """Spatial motion cross product v x u (6-tuples, rot:lin)."""
    w = (v[0], v[1], v[2])
    vl = (v[3], v[4], v[5])
    ur = (u[0], u[1], u[2])
    ul = (u[3], u[4], u[5])
    r = cross3(w, ur)
    a = cross3(w, ul)
    b = cross3(vl, ur)
    return (r[0], r[1], r[2], a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jit
def cross_force(v, f):
    """Spatial force cross product v x* f (6-tuples, rot:lin)."""
    w = (v[0], v[1], v[2])
    vl = (v[3], v[4], v[5])
    fr = (f[0], f[1], f[2])
    fl = (f[3], f[4], f[5])
    a = cross3(w, fr)
    b = cross3(vl, fl)
    c = cross3(w, fl)
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], c[0], c[1], c[2])


@jit
def mul_inert_vec(i, v):
    """Spatial inertia (10-tuple, MuJoCo's cinert layout) times a motion vector."""
    return (i[0] * v[0] + i[3] * v[1] + i[4] * v[2] - i[8] * v[4] + i[7] * v[5],
            i[3] * v[0] + i[1] * v[1] + i[5] * v[2] + i[8] * v[3] - i[6] * v[5],
            i[4] * v[0] + i[5] * v[1] + i[2] * v[2] - i[7] * v[3] + i[6] * v[4],
            i[8] * v[1] - i[7] * v[2] + i[9] * v[3],
            i[6] * v[2] - i[8] * v[0] + i[9] * v[4],
            i[7] * v[0] - i[6] * v[1] + i[9] * v[5])


@jit
def row6(a, i):
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5])


@jit
def row10(a, i):
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5], a[i, 6], a[i, 7], a[i, 8],
            a[i, 9])


@jit
def dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@jit
def add6(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5])


@jit
def scl6(a, s):
    return (a[0] * s, a[1] * s, a[2] * s, a[3] * s, a[4] * s, a[5] * s)

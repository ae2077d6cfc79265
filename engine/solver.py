"""The impulse problem (paper eq. 11) and its two solvers.

    min_{f : phi(f) >= 0}  1/2 f' (A + R) f + f' (v- - v*),   A = J M^-1 J', v- = J v^

Objects (eq. 9): equality rows are unconstrained, friction loss |f| <= eta, limits and
frictionless contacts f >= 0, and each frictional contact an elliptic cone
f_0 >= ||(f_j / mu_j)||.

PGS: the paper's projected Gauss-Seidel generalised to cones. Scalar objects are solved exactly
in turn; a contact block is updated by steps of a diagonal majoriser W >= (A + R)_block whose
weights satisfy (17), so that each step is an exact projection on the cone in the metric of W
(Algorithm 5). Every step decreases the cost, so the sweeps converge to the optimum.

NEWTON: the same optimum from the primal side. With y = J v' and
    f*(y) = Proj_K^R(R^-1 (v* - y))        (the inverse dynamics of Theorem 4)
the next velocity minimises the smooth convex function
    c(v') = 1/2 (v' - v^)' M (v' - v^) + sum_obj [f*' (v* - y) - 1/2 f*' R f*]
whose gradient is M (v' - v^) - J' f*(J v'); Newton steps with an exact line search.
"""
import math

import numpy as np

from .constraint import (CONTACT_ELLIPTIC, CONTACT_FRICTIONLESS, EQUALITY, FRICTION_DOF,
                         FRICTION_TENDON, LIMIT_JOINT, LIMIT_TENDON)
from .jit import jit
from .math import MINVAL
from .smooth import solve_m


# ------------------------------------------------------------------------------------------------
# cone projection
# ------------------------------------------------------------------------------------------------
@jit
def cone_project(y, r, mu, n, x):
    """x = argmin_{x in C} sum_k r_k (x_k - y_k)^2, C = {x_0 >= ||(x_j / mu_j)||}, n = 1 + d.

    The weights must satisfy (17): mu_j^2 r_j = muhat^2 r_0 for all j. In the variables
    xhat = r^(1/2) x (16) the cone is circular, ||xhat_j|| <= muhat xhat_0, and the projection
    is the closed form of the Lagrange conditions (18-20).
    """
    s = 0.0
    for j in range(1, n):
        s += (y[j] / mu[j]) ** 2
    if y[0] >= 0.0 and y[0] * y[0] >= s:
        for k in range(n):
            x[k] = y[k]                       # inside the cone
        return
    muhat = math.sqrt(mu[1] * mu[1] * r[1] / r[0])
    yh0 = math.sqrt(r[0]) * y[0]
    sh = 0.0
    for j in range(1, n):
        sh += r[j] * y[j] * y[j]
    sh = math.sqrt(sh)                        # ||yhat_friction||
    if sh < MINVAL or muhat * sh <= -yh0:
        for k in range(n):
            x[k] = 0.0                        # the tip of the cone
        return
    # projection on the surface: xhat_0 = (yhat_0 + muhat s) / (1 + muhat^2),
    # xhat_j = muhat xhat_0 yhat_j / s  (with yhat_0 = 0 this is eq. 20)
    xh0 = (yh0 + muhat * sh) / (1.0 + muhat * muhat)
    x[0] = xh0 / math.sqrt(r[0])
    scale = muhat * xh0 / sh
    for j in range(1, n):
        x[j] = scale * y[j]                   # r_j^-1/2 * scale * r_j^1/2 y_j


@jit
def object_size(d, i):
    """Number of rows of the object starting at row i."""
    if d.efc_type[i] == CONTACT_ELLIPTIC:
        return d.contact_dim[d.efc_id[i]]
    return 1


@jit
def project_object(d, i, n, z, out, w):
    """Impulse of the object at rows i..i+n-1 nearest to z in the metric diag(w) (Theorem 4)."""
    t = d.efc_type[i]
    if t == EQUALITY:
        out[0] = z[0]
    elif t == FRICTION_DOF or t == FRICTION_TENDON:
        eta = d.efc_frictionloss[i]
        out[0] = min(max(z[0], -eta), eta)
    elif t == CONTACT_ELLIPTIC:
        cone_project(z, w, d.efc_mu[i:i + n], n, out)   # efc_mu[i] (the normal) is unused
    else:
        out[0] = max(z[0], 0.0)


# ------------------------------------------------------------------------------------------------
# problem set-up
# ------------------------------------------------------------------------------------------------
@jit
def compute_A(m, d):
    """efc_MinvJT = M^-1 J' (by rows) and A = J M^-1 J' (paper eq. 8)."""
    nefc = d.nefc[0]
    for i in range(nefc):
        d.efc_MinvJT[i, :] = d.efc_J[i]
        solve_m(m, d.qLD, d.qLDiagInv, d.efc_MinvJT[i])
    nv = d.qvel.shape[0]
    for i in range(nefc):
        for j in range(i, nefc):
            s = 0.0
            for k in range(nv):
                s += d.efc_J[i, k] * d.efc_MinvJT[j, k]
            d.efc_A[i, j] = s
            d.efc_A[j, i] = s


@jit
def primal_cost(d, vnext, vhat, Mdense, f):
    """c(v') of the module docstring; writes f = f*(J v')."""
    nv = vnext.shape[0]
    nefc = d.nefc[0]
    cost = 0.0
    for a in range(nv):
        s = 0.0
        for b in range(nv):
            s += Mdense[a, b] * (vnext[b] - vhat[b])
        cost += 0.5 * (vnext[a] - vhat[a]) * s
    z = np.empty(6)
    out = np.empty(6)
    i = 0
    while i < nefc:
        n = object_size(d, i)
        for k in range(n):
            y = 0.0
            for b in range(nv):
                y += d.efc_J[i + k, b] * vnext[b]
            z[k] = (d.efc_vstar[i + k] - y) / d.efc_R[i + k]
        project_object(d, i, n, z, out, d.efc_R[i:i + n])
        for k in range(n):
            f[i + k] = out[k]
            # f' (v* - y) - 1/2 f' R f, with v* - y = R z
            cost += out[k] * d.efc_R[i + k] * z[k] - 0.5 * d.efc_R[i + k] * out[k] * out[k]
        i += n
    return cost


@jit
def dual_cost(d, f):
    """1/2 f' (A + R) f + f' b of the impulse problem (11)."""
    nefc = d.nefc[0]
    c = 0.0
    for i in range(nefc):
        s = d.efc_R[i] * f[i]
        for j in range(nefc):
            s += d.efc_A[i, j] * f[j]
        c += f[i] * (0.5 * s + d.efc_b[i])
    return c


# ------------------------------------------------------------------------------------------------
# projected Gauss-Seidel
# ------------------------------------------------------------------------------------------------
@jit
def pgs(m, d, f, iterations, tolerance):
    """Generalised projected Gauss-Seidel on (11); returns (iterations used, residual)."""
    nefc = d.nefc[0]
    z = np.empty(6)
    out = np.empty(6)
    w = np.empty(6)
    g = np.empty(6)
    it = 0
    residual = 0.0
    scale = 0.0
    for i in range(nefc):
        scale = max(scale, abs(d.efc_b[i]))
    scale = max(scale, MINVAL)
    for it in range(1, iterations + 1):
        change = 0.0
        i = 0
        while i < nefc:
            n = object_size(d, i)
            # gradient of the block: (A + R) f + b
            for k in range(n):
                s = d.efc_b[i + k] + d.efc_R[i + k] * f[i + k]
                for j in range(nefc):
                    s += d.efc_A[i + k, j] * f[j]
                g[k] = s
            if n == 1:
                # exact minimisation along the row, then projection
                h = d.efc_A[i, i] + d.efc_R[i]
                z[0] = f[i] - g[0] / h
                w[0] = h
                project_object(d, i, 1, z, out, w)
                change = max(change, abs(out[0] - f[i]) * h)
                f[i] = out[0]
            else:
                change = max(change, _cone_block(d, i, n, f, g, z, out, w))
            i += n
        residual = change / scale
        if residual < tolerance:
            break
    return it, residual


@jit
def _cone_block(d, i, n, f, g, z, out, w):
    """Projected-gradient steps on a contact block in the metric W = alpha R (R has the
    structure (17), so each step is an exact projection, Algorithm 5). alpha bounds the block
    Hessian H = (A + R)_block: alpha = max_k sum_j |H_kj| / sqrt(R_k R_j) (Gershgorin on
    R^-1/2 H R^-1/2), so that W >= H and every step decreases the cost."""
    alpha = 0.0
    for k in range(n):
        s = 0.0
        for j in range(n):
            h = d.efc_A[i + k, i + j] + (d.efc_R[i + k] if j == k else 0.0)
            s += abs(h) / math.sqrt(d.efc_R[i + k] * d.efc_R[i + j])
        alpha = max(alpha, s)
    for k in range(n):
        w[k] = alpha * d.efc_R[i + k]
    change = 0.0
    for _ in range(BLOCK_STEPS):
        for k in range(n):
            z[k] = f[i + k] - g[k] / w[k]
        project_object(d, i, n, z, out, w)
        step = 0.0
        for k in range(n):
            delta = out[k] - f[i + k]
            step = max(step, abs(delta) * w[k])
            if delta != 0.0:
                # keep the block gradient current: g += H delta
                for j in range(n):
                    g[j] += (d.efc_A[i + j, i + k] + (d.efc_R[i + k] if j == k else 0.0)) * delta
                f[i + k] = out[k]
        change = max(change, step)
        if step <= 1e-15 * change:
            break
    return change


BLOCK_STEPS = 20


# ------------------------------------------------------------------------------------------------
# Newton
# ------------------------------------------------------------------------------------------------
@jit
def _object_hessian(d, i, n, f, z, H, nv):
    """H += J' D J for one object, D = d f* / d (v* - y) (piecewise: active rows, cone surface)."""
    t = d.efc_type[i]
    D = np.zeros((6, 6))
    if t == EQUALITY:
        D[0, 0] = 1.0 / d.efc_R[i]
    elif t == FRICTION_DOF or t == FRICTION_TENDON:
        if abs(z[0]) < d.efc_frictionloss[i]:
            D[0, 0] = 1.0 / d.efc_R[i]
    elif t == CONTACT_ELLIPTIC:
        _cone_hessian(d, i, n, f, z, D)
    else:
        if z[0] > 0.0:
            D[0, 0] = 1.0 / d.efc_R[i]
    for a in range(n):
        for b in range(n):
            if D[a, b] == 0.0:
                continue
            for p in range(nv):
                ja = d.efc_J[i + a, p] * D[a, b]
                if ja == 0.0:
                    continue
                for q in range(nv):
                    H[p, q] += ja * d.efc_J[i + b, q]


@jit
def _cone_hessian(d, i, n, f, z, D):
    """D = R^-1/2 dPi/dzhat R^-1/2 for the cone block, Pi the projection on the circular cone."""
    r = d.efc_R[i:i + n]
    mu1 = d.efc_mu[i + 1]
    muhat = math.sqrt(mu1 * mu1 * r[1] / r[0])
    zh = np.empty(6)
    for k in range(n):
        zh[k] = math.sqrt(r[k]) * z[k]
    s = 0.0
    for k in range(1, n):
        s += zh[k] * zh[k]
    s = math.sqrt(s)
    if zh[0] >= 0.0 and s <= muhat * zh[0]:
        for k in range(n):
            D[k, k] = 1.0 / r[k]              # inside: identity
        return
    if s < MINVAL or muhat * s <= -zh[0]:
        return                                # tip: zero
    # surface: t = (z0 + muhat s) / (1 + muhat^2), u = muhat t zr / s
    c = 1.0 / (1.0 + muhat * muhat)
    t = (zh[0] + muhat * s) * c
    P = np.zeros((6, 6))
    P[0, 0] = c
    for k in range(1, n):
        uk = zh[k] / s
        P[0, k] = muhat * uk * c
        P[k, 0] = muhat * uk * c
        for j in range(1, n):
            uj = zh[j] / s
            P[k, j] = muhat * muhat * c * uk * uj + muhat * t / s * ((1.0 if j == k else 0.0)
                                                                      - uk * uj)
    for a in range(n):
        for b in range(n):
            D[a, b] = P[a, b] / math.sqrt(r[a] * r[b])


@jit
def _dphi(d, v, p, alpha, vhat, Mdense, trial, ftrial):
    """Derivative of the primal cost at v + alpha p along p."""
    nv = v.shape[0]
    for a in range(nv):
        trial[a] = v[a] + alpha * p[a]
    primal_cost(d, trial, vhat, Mdense, ftrial)
    s = 0.0
    for a in range(nv):
        q = 0.0
        for b in range(nv):
            q += Mdense[a, b] * (trial[b] - vhat[b])
        c = 0.0
        for r in range(d.nefc[0]):
            c += d.efc_J[r, a] * ftrial[r]
        s += p[a] * (q - c)
    return s


@jit
def newton(m, d, vnext, vhat, Mdense, f, iterations, tolerance):
    """Newton's method on the primal problem; vnext holds the start and receives the optimum."""
    nv = vnext.shape[0]
    nefc = d.nefc[0]
    grad = np.empty(nv)
    p = np.empty(nv)
    trial = np.empty(nv)
    ftrial = np.empty(max(nefc, 1))
    z = np.empty(6)
    it = 0
    residual = 0.0
    cost = primal_cost(d, vnext, vhat, Mdense, f)
    for it in range(1, iterations + 1):
        # gradient M (v' - v^) - J' f and Hessian M + J' D J; the residual is the gradient
        # relative to the size of its two terms (the force balance of eq. 6)
        residual = 0.0
        for a in range(nv):
            s = 0.0
            for b in range(nv):
                s += Mdense[a, b] * (vnext[b] - vhat[b])
            c = 0.0
            for r in range(nefc):
                c += d.efc_J[r, a] * f[r]
            grad[a] = s - c
            scale = (abs(s) + abs(c)) + MINVAL
            residual = max(residual, abs(grad[a]) / scale)
        if residual < tolerance:
            break
        H = d.newton_H
        H[:, :] = Mdense
        i = 0
        while i < nefc:
            n = object_size(d, i)
            for k in range(n):
                y = 0.0
                for b in range(nv):
                    y += d.efc_J[i + k, b] * vnext[b]
                z[k] = (d.efc_vstar[i + k] - y) / d.efc_R[i + k]
            _object_hessian(d, i, n, f, z, H, nv)
            i += n
        L = np.linalg.cholesky(H)
        p[:] = -np.linalg.solve(L.T, np.linalg.solve(L, grad))
        # exact line search: the cost is convex along p, so find the zero of its derivative
        # phi'(alpha) = p' (M (v' + alpha p - v^) - J' f*(J (v' + alpha p))) by regula falsi
        lo, dlo = 0.0, 0.0
        for a in range(nv):
            dlo += p[a] * grad[a]
        if dlo >= 0.0:
            break
        hi = 1.0
        dhi = _dphi(d, vnext, p, hi, vhat, Mdense, trial, ftrial)
        while dhi < 0.0 and hi < 1e6:
            lo, dlo = hi, dhi
            hi *= 2.0
            dhi = _dphi(d, vnext, p, hi, vhat, Mdense, trial, ftrial)
        alpha = hi
        for _ in range(60):
            if dhi <= 0.0 or hi - lo <= 1e-14 * hi:
                break
            alpha = lo + (hi - lo) * (-dlo) / (dhi - dlo)
            alpha = min(max(alpha, lo + 0.01 * (hi - lo)), hi - 0.01 * (hi - lo))
            dmid = _dphi(d, vnext, p, alpha, vhat, Mdense, trial, ftrial)
            if abs(dmid) <= 1e-15 * abs(dlo):
                break
            if dmid < 0.0:
                lo, dlo = alpha, dmid
            else:
                hi, dhi = alpha, dmid
            alpha = hi if dhi <= 0.0 else alpha
        for a in range(nv):
            vnext[a] += alpha * p[a]
        cost = primal_cost(d, vnext, vhat, Mdense, f)
    return it, residual

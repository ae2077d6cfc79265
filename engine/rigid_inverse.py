"""Inverse dynamics with rigid contact and friction (Zapolsky & Drumwright), velocity level.

    res = rigid_inverse(m, d, qacc_des, model="noslip" | "coulomb" | "convex", warmstart=None)

Given the state (qpos, qvel), the contacts of the forward pipeline's collision stage and the
desired accelerations of the actuated coordinates, find the actuator forces and the contact
forces together, with rigid contact. The derivation (the paper's equations rebuilt) is in
docs/rigid_inverse.md; in short, with h the timestep, v' = v + h a and Mt = M + h B_damping
(the step's inertia, as engine.inverse), k = qfrc_passive + qfrc_applied + J'xfrc - qfrc_bias:

    Mt a = k + B' tau + J_E' f_E + J_c' f_c                   (paper eq. 37, discretised (8))
    B a = B qacc_des        (B = actuator_moment: the actuated coordinates, eq. 39-40)
    J_E v' = -phi_E / h     (active equality constraints, held rigidly)
    N v' >= -phi / h  _|_  f_n >= 0                         (signed-distance stabilisation 3.2)

and per model, the friction law of each contact:
    noslip   T v' = 0 (eq. 41), MLCP -> LCP on f_n (section 4), Algorithm 1, warm-started PPM
             (Algorithm 2) on N Q N' formed column by column (4.7), consistency check and the
             least-change QP (4.5, eq. 47), followed where nearly dependent rows still fail by
             the least change of the actuated accelerations under which they hold at the kept
             rows' solution, then the least contact forces among the equally valid ones
             (least_norm, default);
    coulomb  linearised cone with `nedges` edges (Anitescu & Potra / Stewart & Trinkle, section
             5), Lemke, and Algorithm 3 (minimum change of torques over the enumerated
             solutions) up to `max_bases` candidate bases;
    convex   no normal complementarity: the maximal-dissipation QP (section 2.3.4 / 6) over the
             pyramid edges, then, among its optimal forces, those whose torques are closest to
             the previous ones (the tie-breaker of 6.2.4).
A stage-like kernel does everything in one compiled call; `warmstart` carries the contacts,
pivoting sets and torques of the previous call.
"""
import math
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from . import lcp, smooth, warmup
from .constraint import EQUALITY, row_axpy
from .forward import _dense_inertia, _grow, fwd_position, fwd_velocity
from .jit import jit
from .lcp import DENSE, EMPTY2, PRODUCT, SOLVED, LCPStatus
from .types import Data, Model


class RigidModel(IntEnum):
    """Contact model of rigid_inverse."""
    NOSLIP = 0
    COULOMB = 1
    CONVEX = 2


MODEL_NAMES = {"noslip": RigidModel.NOSLIP, "coulomb": RigidModel.COULOMB,
               "convex": RigidModel.CONVEX}
NOSLIP, COULOMB, CONVEX = int(RigidModel.NOSLIP), int(RigidModel.COULOMB), int(RigidModel.CONVEX)
MAXEDGES = 16          # most edges of a linearised friction cone
NFLAGS = 2 * MAXEDGES + 2
# Algorithm 1: a row is dependent when its Cholesky pivot^2 < tol X_rr, i.e. when the part of it
# independent of the rows kept before is below sqrt(tol) of its norm (in the H^-1 metric).
# Holding a row that close to dependence takes multipliers ~ 1/tol and accelerations ~ 1/sqrt(tol)
# times the inconsistency of its right-hand side. For the no-slip rows that inconsistency is
# real: the relative motion of two stance feet along the line joining them is fixed by the joint
# accelerations alone (up to their small height difference), and the measured slip in -T v / h
# does not agree with it: at tol = 1e-6 a trotting Go1 got tangential forces 5e5 times its
# weight. NOSLIP_ROW_TOL = 1e-3 (2 degrees) bounds the amplification of the accelerations to
# about 30; rows closer to dependence go to the consistency check of section 4.5 and eq. 47,
# which changes the actuated accelerations so that they hold at the kept rows' solution.
# The other selections (eq. 47's rows and conditions, least-norm, Coulomb, convex) keep
# ROW_TOL, where only exact dependence must go. Section 4.5 then asks a dropped row to hold to
# CONSISTENCY_TOL, plus what its own independent part allows (sqrt of its pivot ratio),
# relative to |J_r| |a|.
ROW_TOL = 1e-6
NOSLIP_ROW_TOL = 1e-3
CONSISTENCY_TOL = 1e-8
# No-slip: a contact without force opens when it separates faster than this fraction of the
# accelerations' size (slower is numerically closed: it keeps its no-slip rows).
OPEN_TOL = 1e-6
LCP_TOL = 1e-12
# _pivoted_rows: a pivot of a projector below this (of its largest diagonal entry) is rounding
PIVOT_TOL = 1e-9
# Relative weight of the tie-breaking terms of eq. 47 and of the convex stage 2: small enough to
# change the optimum of the main term by about this fraction only, large enough to keep the
# Gauss problems well conditioned (Algorithm 1 runs in the metric of their Hessian).
EPS_REG = 1e-4
# Eq. 47 linearises on the LCP's active set: rounds of it when the set changes
ADJUST_ROUNDS = 3

# info_i slots written by the kernel
I_STATUS, I_PIVOTS, I_CONSISTENT, I_NCON, I_NLCP, I_ENUM, I_NSOL, I_NSEL, I_PIVOTS2, I_ADJUSTED, \
    I_PASSES = range(11)


# ------------------------------------------------------------------------------------------------
# dense linear algebra on small blocks
# ------------------------------------------------------------------------------------------------
@jit
def _cholesky(A, n):
    """In-place lower Cholesky factor of A[:n, :n]; False if not positive definite."""
    for j in range(n):
        s = A[j, j]
        for p in range(j):
            s -= A[j, p] * A[j, p]
        if s <= 0.0:
            return False
        A[j, j] = math.sqrt(s)
        for i in range(j + 1, n):
            s = A[i, j]
            for p in range(j):
                s -= A[i, p] * A[j, p]
            A[i, j] = s / A[j, j]
    return True


@jit
def _lower_solve(L, n, x):
    """x <- L^-1 x (L lower triangular, n x n)."""
    for i in range(n):
        s = x[i]
        for p in range(i):
            s -= L[i, p] * x[p]
        x[i] = s / L[i, i]


@jit
def _upper_solve(L, n, x):
    """x <- L^-T x."""
    for i in range(n - 1, -1, -1):
        s = x[i]
        for p in range(i + 1, n):
            s -= L[p, i] * x[p]
        x[i] = s / L[i, i]


@jit
def _chol_solve(L, n, x):
    """x <- (L L')^-1 x."""
    _lower_solve(L, n, x)
    _upper_solve(L, n, x)


@jit
def _lu_solve_inplace(A, n, b, perm):
    """Solve A[:n, :n] x = b in place (A destroyed) by LU with partial pivoting; False if
    singular (pivot below 1e-12 of the largest entry)."""
    big = 0.0
    for i in range(n):
        for j in range(n):
            big = max(big, abs(A[i, j]))
    for i in range(n):
        perm[i] = i
    for c in range(n):
        p = c
        for a in range(c + 1, n):
            if abs(A[a, c]) > abs(A[p, c]):
                p = a
        if abs(A[p, c]) <= 1e-12 * big:
            return False
        if p != c:
            for j in range(n):
                A[c, j], A[p, j] = A[p, j], A[c, j]
            b[c], b[p] = b[p], b[c]
        for a in range(c + 1, n):
            f = A[a, c] / A[c, c]
            if f != 0.0:
                for j in range(c + 1, n):
                    A[a, j] -= f * A[c, j]
                b[a] -= f * b[c]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= A[i, j] * b[j]
        b[i] = s / A[i, i]
    return True


@jit
def _dot(a, b, n):
    s = 0.0
    for i in range(n):
        s += a[i] * b[i]
    return s


# ------------------------------------------------------------------------------------------------
# scratch: one preallocated arena per warm start, taken from in stack order
# ------------------------------------------------------------------------------------------------
# ar = (floats, ints, bools, pos); pos = (next float, int, bool; their high-water marks). A
# function that takes scratch for its own use only marks the positions on entry and releases
# them on return. When the arena is too small the array is allocated instead and the
# high-water mark tells rigid_inverse how much to give it for the next call.
@jit
def _fe(ar, size):
    """Float scratch of `size` entries (not initialised)."""
    pos = ar[3]
    p = pos[0]
    pos[0] = p + size
    pos[3] = max(pos[3], pos[0])
    if p + size <= ar[0].shape[0]:
        return ar[0][p:p + size]
    return np.empty(size)


@jit
def _fe2(ar, r, c):
    return _fe(ar, r * c).reshape((r, c))


@jit
def _fz(ar, size):
    out = _fe(ar, size)
    out[:] = 0.0
    return out


@jit
def _fz2(ar, r, c):
    return _fz(ar, r * c).reshape((r, c))


@jit
def _ie(ar, size):
    """Integer scratch (not initialised)."""
    pos = ar[3]
    p = pos[1]
    pos[1] = p + size
    pos[4] = max(pos[4], pos[1])
    if p + size <= ar[1].shape[0]:
        return ar[1][p:p + size]
    return np.empty(size, np.int64)


@jit
def _bz(ar, size):
    """Boolean scratch, False."""
    pos = ar[3]
    p = pos[2]
    pos[2] = p + size
    pos[5] = max(pos[5], pos[2])
    if p + size <= ar[2].shape[0]:
        out = ar[2][p:p + size]
    else:
        out = np.empty(size, np.bool_)
    out[:] = False
    return out


@jit
def _mark(ar):
    return ar[3][0], ar[3][1], ar[3][2]


@jit
def _release(ar, mark):
    ar[3][0], ar[3][1], ar[3][2] = mark


@jit
def _lcp_workspace(ar, n):
    """lcp.workspace(n) from the arena (the same arrays, the same initial values)."""
    cols = _fz2(ar, n, n + 1)
    have = _bz(ar, n + 1)
    lu = _fz2(ar, n, n)
    perm = _ie(ar, n)
    perm[:] = 0
    rows = _ie(ar, n)
    rows[:] = 0
    cc = _ie(ar, n + 1)
    cc[:] = 0
    pos_r = _ie(ar, n)
    pos_r[:] = -1
    pos_c = _ie(ar, n + 1)
    pos_c[:] = -1
    state = _ie(ar, 1)
    state[:] = 0
    return (cols, have, lu, perm, rows, cc, pos_r, pos_c, _fz(ar, n + 1), _fz(ar, n),
            _fz(ar, n + 1), _fz(ar, n), _fz(ar, n + 1), _fz2(ar, 3, n + 1), state)


# ------------------------------------------------------------------------------------------------
# rows: contacts, actuators, equality constraints
# ------------------------------------------------------------------------------------------------
@jit
def _contact_rows(m, d, stab, cid, Jn, Jt, mu, phi):
    """Every contact of the collision stage, those in the gap zone included (listed below
    margin + gap, inactive in the forward dynamics: the contacts about to close that section
    3.2 anticipates): normal and tangent rows J_b2 - J_b1 along the contact frame (Jn (nc, nv),
    Jt (nc, 2, nv)), friction mu (nc, 2) (0 for frictionless) and gap phi = dist -
    includemargin, scaled by stab where negative (penetration recovery). Returns nc."""
    nc = 0
    nv = d.qvel.shape[0]
    for c in range(d.ncon[0]):
        cid[nc] = c
        b1 = m.geom_bodyid[d.contact_geom1[c]]
        b2 = m.geom_bodyid[d.contact_geom2[c]]
        p = (d.contact_pos[c, 0], d.contact_pos[c, 1], d.contact_pos[c, 2])
        for r in range(3):
            out = Jn[nc] if r == 0 else Jt[nc, r - 1]
            for k in range(nv):
                out[k] = 0.0
            axis = (d.contact_frame[c, 3 * r], d.contact_frame[c, 3 * r + 1],
                    d.contact_frame[c, 3 * r + 2])
            smooth.apply_ft(m, d, axis, (0.0, 0.0, 0.0), p, b2, out, 1.0)
            smooth.apply_ft(m, d, axis, (0.0, 0.0, 0.0), p, b1, out, -1.0)
        dim = d.contact_dim[c]
        mu[nc, 0] = d.contact_friction[c, 0] if dim > 1 else 0.0
        mu[nc, 1] = d.contact_friction[c, 1] if dim > 1 else 0.0
        g = d.contact_dist[c] - d.contact_includemargin[c]
        phi[nc] = g * stab if g < 0.0 else g
        nc += 1
    return nc


@jit
def _smooth_force(m, d, k):
    """k = qfrc_passive - qfrc_bias + qfrc_applied + J' xfrc_applied: every force but the
    actuators' and the constraints'."""
    nv = d.qvel.shape[0]
    for i in range(nv):
        k[i] = d.qfrc_passive[i] - d.qfrc_bias[i] + d.qfrc_applied[i]
    for b in range(1, m.body_parentid.shape[0]):
        f = (d.xfrc_applied[b, 0], d.xfrc_applied[b, 1], d.xfrc_applied[b, 2])
        t = (d.xfrc_applied[b, 3], d.xfrc_applied[b, 4], d.xfrc_applied[b, 5])
        if f[0] != 0.0 or f[1] != 0.0 or f[2] != 0.0 or t[0] != 0.0 or t[1] != 0.0 or t[2] != 0.0:
            smooth.apply_ft(m, d, f, t, (d.xipos[b, 0], d.xipos[b, 1], d.xipos[b, 2]), b, k, 1.0)


@jit
def _bilateral_rows(m, d, qacc_des, stab, Jb, cb):
    """Rows held with equality, in Algorithm 1's order of preference: the actuators
    (B a = B qacc_des), then the active equality constraints (J_E a = -(J_E v + phi_E / h) / h).
    Returns their count."""
    nv = d.qvel.shape[0]
    h = m.opt_timestep[0]
    nb = 0
    for i in range(m.actuator_trntype.shape[0]):
        s = 0.0
        for k in range(nv):
            Jb[nb, k] = d.actuator_moment[i, k]
            s += d.actuator_moment[i, k] * qacc_des[k]
        cb[nb] = s
        nb += 1
    for r in range(d.nefc[0]):
        if d.efc_type[r] != EQUALITY:
            continue
        for k in range(nv):
            Jb[nb, k] = 0.0
        row_axpy(d, r, d.efc_J, 1.0, Jb[nb])
        vel = _dot(Jb[nb], d.qvel, nv)
        cb[nb] = -(vel + stab * d.efc_pos[r] / h) / h
        nb += 1
    return nb


# ------------------------------------------------------------------------------------------------
# the constrained Gauss problem: min 1/2 a'H a - k'a  s.t.  Jb a = cb,  G a + bg >= 0
# ------------------------------------------------------------------------------------------------
@jit
def _select_rows(Jb, nb, Yb, n, Lx, sel, ratio, tol):
    """Algorithm 1: keep the rows of Jb in order while X = Jb H^-1 Jb' stays positive definite,
    by extending its Cholesky factor Lx one row at a time (Yb[r] = H^-1 Jb[r]); a row is kept
    when its pivot^2 > tol X_rr. Returns the number kept; sel lists them, ratio[r] is each
    row's pivot^2 / X_rr (its independence)."""
    ns = 0
    for r in range(nb):
        xrr = _dot(Jb[r], Yb[r], n)
        ratio[r] = 0.0
        if xrr <= 0.0:
            continue
        # row ns of Lx: solve Lx[:ns, :ns] y = X[sel, r]
        ss = 0.0
        for a in range(ns):
            s = _dot(Jb[sel[a]], Yb[r], n)
            for p in range(a):
                s -= Lx[a, p] * Lx[ns, p]
            Lx[ns, a] = s / Lx[a, a]
            ss += Lx[ns, a] * Lx[ns, a]
        piv = xrr - ss
        ratio[r] = max(piv, 0.0) / xrr
        if piv > tol * xrr:
            Lx[ns, ns] = math.sqrt(piv)
            sel[ns] = r
            ns += 1
    return ns


@jit
def _eliminate(H, n, kv, Jb, cb, nb, G, ng, Yb, Lx, sel, ratio, YG, Wm, afree, a0, lam0,
               tol, col, pre):
    """Eliminate a and the equality multipliers (H holds the Cholesky factor of H): with
    Q = H^-1 - H^-1 Jb_s' X^-1 Jb_s H^-1 over the independent rows s,
        a = a0 + Q G' f,   G Q G' = G YG - Wm'Wm,   Wm = Lx^-1 Jb_s YG.
    Fills Yb (H^-1 Jb rows), Lx, sel, YG (n, ng) = H^-1 G', Wm (ns, ng), afree = H^-1 k,
    a0 and lam0 = X^-1 (cb_s - Jb_s afree), ratio (Algorithm 1); with pre, Yb and YG come
    filled (the no-slip passes share them). Returns ns."""
    if not pre:
        for r in range(nb):
            for i in range(n):
                Yb[r, i] = Jb[r, i]
            _chol_solve(H, n, Yb[r])
    ns = _select_rows(Jb, nb, Yb, n, Lx, sel, ratio, tol)
    for i in range(n):
        afree[i] = kv[i]
    _chol_solve(H, n, afree)
    for a in range(ns):
        lam0[a] = cb[sel[a]] - _dot(Jb[sel[a]], afree, n)
    _chol_solve(Lx, ns, lam0)
    for i in range(n):
        s = afree[i]
        for a in range(ns):
            s += Yb[sel[a], i] * lam0[a]
        a0[i] = s
    for j in range(ng):
        if pre:
            for i in range(n):
                col[i] = YG[i, j]
        else:
            for i in range(n):
                col[i] = G[j, i]
            _chol_solve(H, n, col)
            for i in range(n):
                YG[i, j] = col[i]
        for a in range(ns):
            s = 0.0
            r = sel[a]
            for i in range(n):
                s += Jb[r, i] * col[i]
            Wm[a, j] = s
    for j in range(ng):
        _lower_solve(Lx, ns, Wm[:, j])
    return ns


@jit
def _elimination(ar, H, n, kv, Jb, cb, nb, G, ng, sel, ratio, tol, pre, Ypre, YGpre):
    """_eliminate with its arrays (scratch of ar; with pre, Yb = Ypre and YG = YGpre, given):
    returns (ns, Yb, Lx, YG, Wm, a0, lam0)."""
    nbm = max(nb, 1)
    Yb = Ypre if pre else _fe2(ar, nb, n)
    Lx = _fz2(ar, nbm, nbm)
    YG = YGpre if pre else _fe2(ar, n, ng)
    Wm = _fe2(ar, nbm, ng)
    afree = _fe(ar, n)
    a0 = _fe(ar, n)
    lam0 = _fe(ar, nbm)
    ns = _eliminate(H, n, kv, Jb, cb, nb, G, ng, Yb, Lx, sel, ratio, YG, Wm, afree, a0, lam0,
                    tol, _fe(ar, n), pre)
    return ns, Yb, Lx, YG, Wm, a0, lam0


@jit
def _recover(H, n, kv, Jb, cb, ns, sel, Lx, Yb, YG, ng, f, a, lam, tmp):
    """a = H^-1 (k + G'f + Jb_s' lam), lam = X^-1 (cb_s - Jb_s H^-1 (k + G'f)) (lam over the
    selected rows, in sel's order)."""
    for i in range(n):
        s = 0.0
        for j in range(ng):
            s += YG[i, j] * f[j]
        a[i] = s
    for i in range(n):
        tmp[i] = kv[i]
    _chol_solve(H, n, tmp)
    for i in range(n):
        a[i] += tmp[i]
    for q in range(ns):
        lam[q] = cb[sel[q]] - _dot(Jb[sel[q]], a, n)
    _chol_solve(Lx, ns, lam)
    for q in range(ns):
        for i in range(n):
            a[i] += Yb[sel[q], i] * lam[q]


@jit
def _gauss(ar, H, n, kv, Jb, cb, nb, G, bg, ng, warm, active, f, a, lam, sel, ratio, tol,
           pre, Ypre, YGpre):
    """min 1/2 a'Ha - k'a s.t. Jb a = cb, G a + bg >= 0, H given by its Cholesky factor: the
    no-slip MLCP (section 4) reduced to the LCP  w = G Q G' f + G a0 + bg >= 0 _|_ f >= 0,
    solved by PPM from the warm set with the columns of G Q G' formed as needed (4.7).
    Writes f, a, lam (per selected row), sel, ratio, active; returns (status, pivots, ns).
    pre: Ypre (nb, n) and YGpre (n, ng) hold H^-1 Jb' and H^-1 G' (else computed here)."""
    mark = _mark(ar)
    ns, Yb, Lx, YG, Wm, a0, lam0 = _elimination(ar, H, n, kv, Jb, cb, nb, G, ng, sel, ratio,
                                                tol, pre, Ypre, YGpre)
    q = _fe(ar, ng)
    mscale = 0.0
    for j in range(ng):
        q[j] = _dot(G[j], a0, n) + bg[j]
        dj = 0.0
        for i in range(n):
            dj += G[j, i] * YG[i, j]
        for s in range(ns):
            dj -= Wm[s, j] * Wm[s, j]
        mscale = max(mscale, abs(dj))
    w = _fe(ar, ng)
    ws = _lcp_workspace(ar, ng)
    status, pivots = lcp.ppm_kernel(PRODUCT, EMPTY2, G[:ng], YG, Wm[:ns], mscale, q, warm,
                                    ws, 100 * ng + 1000, LCP_TOL, f, w)
    lcp.basis_sets(ws, active)
    _recover(H, n, kv, Jb, cb, ns, sel, Lx, Yb, YG, ng, f, a, lam, _fe(ar, n))
    _release(ar, mark)
    return status, pivots, ns


# ------------------------------------------------------------------------------------------------
# warm start: contacts matched to those of the previous call
# ------------------------------------------------------------------------------------------------
@jit
def _match(d, cid, nc, warm_geom, warm_pos, warm_n, prev, used):
    """prev[c] = the previous call's contact with the same geoms closest to contact c (each
    used once), -1 if none."""
    for a in range(nc):
        c = cid[a]
        best = -1
        bestd = np.inf
        for p in range(warm_n):
            if used[p] or warm_geom[p, 0] != d.contact_geom1[c] or \
                    warm_geom[p, 1] != d.contact_geom2[c]:
                continue
            dd = 0.0
            for k in range(3):
                dd += (warm_pos[p, k] - d.contact_pos[c, k]) ** 2
            if dd < bestd:
                bestd = dd
                best = p
        prev[a] = best
        if best >= 0:
            used[best] = True


@jit
def _edge_dir(mu, c, j, nedges):
    """Tangential direction of edge j of contact c's linearised cone in its frame:
    (mu1 cos t_j, mu2 sin t_j), t_j = 2 pi j / nedges."""
    t = 2.0 * math.pi * j / nedges
    return mu[c, 0] * math.cos(t), mu[c, 1] * math.sin(t)


# ------------------------------------------------------------------------------------------------
# the three models
# ------------------------------------------------------------------------------------------------
@jit
def _tangent_rows(n, Jb, cb, nbil, Jt, nc, h, qvel, held, owner, Yb, YT):
    """Append the no-slip rows T_i a = -T_i v / h (eq. 41) of the contacts with held[i] after
    the nbil actuator and equality rows, and their H^-1 T_i' (YT) to Yb; owner[r] = the
    contact of row nbil + r. Returns the total row count."""
    nb = nbil
    for c in range(nc):
        if not held[c]:
            continue
        for r in range(2):
            for i in range(n):
                Jb[nb, i] = Jt[c, r, i]
                Yb[nb, i] = YT[c, r, i]
            cb[nb] = -_dot(Jt[c, r], qvel, n) / h
            owner[nb - nbil] = c
            nb += 1
    return nb


@jit
def _noslip(ar, n, H, kv, Jb, cb, Jn, Jt, mu, phi, nc, h, qvel, nact, nbil, least_norm, max_passes,
            flags_in, flags_out, prev, a, lam, sel, fc, info_i):
    """Section 4: rows held with equality (actuators, equalities, then each contact's tangents),
    the LCP on the normal forces, the consistency check of the dropped rows (4.5) and eq. 47:
    the paper's QP over the accelerations (47a, _least_change_kinematic), then, where rows
    dropped as nearly dependent still fail, the least change of the actuated accelerations
    under which they hold at the kept rows' solution (47b, _least_change).

    No-slip rows are kept only at contacts that stay closed: a contact the LCP opens (w_n > 0,
    f_n = 0: a foot lifting off) cannot hold a tangential force without a normal one, so its
    rows are removed and the problem solved again (warm-started); an open contact that the
    solution closes (w_n = 0) gets them back. Every call starts with the rows of all contacts
    with friction held: the set the passes reach then depends on the state alone (carried from
    call to call, it depended on the history, and with eq. 47 at every call on box feet the
    warm-started torques chattered 1.3x more than the cold ones). Only the pivoting sets (of
    the LCP and of the selection) are carried. Without a fixed point within max_passes (0:
    2 nc + 2; the sets cycle: a foot held is opened by eq. 47, released it closes and slips),
    the paper's set, every contact with friction held (eq. 41), is solved once more and kept;
    the least-norm stage always works on the set of the last solve. Then, with least_norm, the
    least contact forces among the equally valid ones (_least_norm_forces)."""
    bn = _fe(ar, nc)
    for c in range(nc):
        bn[c] = (_dot(Jn[c], qvel, n) + phi[c] / h) / h
    held = _bz(ar, nc)
    fric = _bz(ar, nc)
    warm = _bz(ar, nc)
    for c in range(nc):
        held[c] = mu[c, 0] != 0.0 or mu[c, 1] != 0.0
        fric[c] = held[c]
        if prev[c] >= 0:
            warm[c] = flags_in[prev[c], 0]
    afree = _fe(ar, n)
    afree[:] = kv
    _chol_solve(H, n, afree)
    aref = math.sqrt(_dot(afree, afree, n))
    active = _bz(ar, nc)
    fn = _fz(ar, nc)
    owner = _ie(ar, max(2 * nc, 1))
    ratio = _fe(ar, Jb.shape[0])
    cb_des = _fe(ar, nact)
    cb_des[:] = cb[:nact]
    pivots = 0
    pivots2 = 0
    adjusted = False
    consistent = True
    wscale = 0.0
    npass = max_passes if max_passes > 0 else 2 * nc + 2
    nxt = _bz(ar, nc)
    adj = _fe(ar, max(n, nact))
    closed = _bz(ar, nc)
    # H^-1 of every row the passes use, once (they differ only in the tangent rows they hold)
    Yb = _fe2(ar, Jb.shape[0], n)
    for r in range(nbil):
        for i in range(n):
            Yb[r, i] = Jb[r, i]
        _chol_solve(H, n, Yb[r])
    YT = _fe(ar, nc * 2 * n).reshape((nc, 2, n))
    YG = _fe2(ar, n, nc)
    col = _fe(ar, n)
    for c in range(nc):
        for k in range(2):
            for i in range(n):
                YT[c, k, i] = Jt[c, k, i]
            _chol_solve(H, n, YT[c, k])
        for i in range(n):
            col[i] = Jn[c, i]
        _chol_solve(H, n, col)
        for i in range(n):
            YG[i, c] = col[i]
    passes = 0
    final = False
    while True:
        passes += 1
        for r in range(nact):
            cb[r] = cb_des[r]
        nb = _tangent_rows(n, Jb, cb, nbil, Jt, nc, h, qvel, held, owner, Yb, YT)
        status, piv, ns = _gauss(ar, H, n, kv, Jb, cb, nb, Jn, bn, nc, warm, active, fn, a,
                                 lam, sel, ratio, NOSLIP_ROW_TOL, True, Yb, YG)
        pivots += piv
        if status != SOLVED:
            break
        # 4.5: the dropped rows must hold at the solution; else find the consistent
        # accelerations closest to the desired ones (eq. 47) and solve again with them
        consistent = _dropped_rows_hold(ar, Jb, cb, nb, n, sel, ns, ratio, a, aref)
        adjusted = False
        if not consistent:
            # eq. 47, first as the paper's QP over the accelerations (kinematic: it chooses
            # which contacts stay closed, and suffices for rows exactly dependent on the kept
            # ones), then, while rows dropped as nearly dependent do not hold at the solution,
            # over the actuated accelerations at the kept rows' solution (_least_change),
            # linearised on the contacts the solution keeps closed (w_n = 0: unique, as a is;
            # the LCP's basic set is not where the forces are indeterminate); where the solve
            # at its accelerations changes that set, once more from the new one
            adjusted = True
            _least_change_kinematic(ar, n, H, Jb, cb, nb, nact, Jn, bn, nc, a, active, adj)
            for r in range(nact):
                cb[r] = _dot(Jb[r], adj, n)
            warm[:] = active
            status, piv, ns = _gauss(ar, H, n, kv, Jb, cb, nb, Jn, bn, nc, warm, active, fn, a,
                                     lam, sel, ratio, NOSLIP_ROW_TOL, True, Yb, YG)
            pivots2 += piv
            consistent = _dropped_rows_hold(ar, Jb, cb, nb, n, sel, ns, ratio, a, aref)
            # a held contact that this solution opens loses its rows in the next pass, which
            # poses a new problem: eq. 47b waits for it (not on the last pass the cap allows
            # nor on the paper's set)
            rounds = 0
            if status == SOLVED and not consistent and not final and passes < npass:
                fsc, wsc = _opening_scales(fn, nc, a, n, aref)
                for c in range(nc):
                    if held[c] and _opening(c, fn, Jn, bn, a, n, fsc, wsc):
                        rounds = ADJUST_ROUNDS
            while status == SOLVED and not consistent and rounds < ADJUST_ROUNDS:
                wsc = OPEN_TOL * max(aref, math.sqrt(_dot(a, a, n)))
                same = rounds > 0
                for c in range(nc):
                    cl = _dot(Jn[c], a, n) + bn[c] <= wsc
                    if cl != closed[c]:
                        same = False
                    closed[c] = cl
                if same:
                    break
                rounds += 1
                _least_change(ar, n, H, kv, Jb, cb, nb, nact, sel, ns, Jn, bn, nc, closed,
                              cb_des, adj)
                for r in range(nact):
                    cb[r] = adj[r]
                warm[:] = active
                status, piv, ns = _gauss(ar, H, n, kv, Jb, cb, nb, Jn, bn, nc, warm, active, fn,
                                         a, lam, sel, ratio, NOSLIP_ROW_TOL, True, Yb, YG)
                pivots2 += piv
                consistent = _dropped_rows_hold(ar, Jb, cb, nb, n, sel, ns, ratio, a, aref)
        if status != SOLVED:
            break
        # contacts that open lose their rows, open ones that close (w_n = 0) get them back
        fscale, wscale = _opening_scales(fn, nc, a, n, aref)
        changed = False
        for c in range(nc):
            nxt[c] = held[c]
            if mu[c, 0] == 0.0 and mu[c, 1] == 0.0:
                continue
            opening = _opening(c, fn, Jn, bn, a, n, fscale, wscale)
            if held[c] == opening:
                nxt[c] = not opening
                changed = True
        if not changed or final:
            break       # held stays the set of the last solve: a, fn, lam, sel belong to it
        if passes >= npass:
            # no fixed point: the paper's set, solved once more unless it was the last one
            same = True
            for c in range(nc):
                same = same and held[c] == fric[c]
            if same:
                break
            nxt[:] = fric
            final = True
        held[:] = nxt
        warm[:] = active
    if adjusted:
        info_i[I_ADJUSTED] = 1
    # contact forces: normal from the LCP, tangents from the multipliers of kept tangent rows
    for c in range(nc):
        fc[c, 0] = fn[c]
        fc[c, 1] = 0.0
        fc[c, 2] = 0.0
    for s in range(ns):
        r = sel[s]
        if r >= nbil:
            fc[owner[r - nbil], 1 + (r - nbil) % 2] = lam[s]
    # 4.6: the least contact forces among the equally valid ones (unique, continuous)
    chosen = _bz(ar, nc)
    if least_norm and status == SOLVED and nc > 0:
        warm2 = _bz(ar, nc)
        for c in range(nc):
            warm2[c] = flags_in[prev[c], 1] if prev[c] >= 0 else False
        ns2, st2, piv2 = _least_norm_forces(ar, n, H, kv, Jb, nbil, Jn, Jt, nc, a, bn, wscale,
                                            held, warm2, chosen, fc, lam, sel)
        pivots2 += piv2
        if ns2 >= 0:
            ns = ns2
    for c in range(nc):
        flags_out[c, 0] = active[c]
        flags_out[c, 1] = chosen[c]
    info_i[I_STATUS] = status
    info_i[I_PIVOTS] = pivots
    info_i[I_PIVOTS2] = pivots2
    info_i[I_CONSISTENT] = 1 if consistent else 0
    info_i[I_NLCP] = nc
    info_i[I_NSEL] = ns
    info_i[I_PASSES] = passes
    return ns


@jit
def _least_norm_forces(ar, n, H, kv, Jb, nbil, Jn, Jt, nc, a, bn, wscale, held, warm, active,
                       fc, lam, sel):
    """Section 4.6, the choice among equally valid forces. The accelerations a of the no-slip
    model are unique; the forces are not (a four-legged table; feet squeezing the ground between
    them): every (tau, f_E, f) with
        Mt a - k = B' tau + J_E' f_E + J_c' f,   f_n >= 0,
        f_n,i = 0 where the contact separates (w_n,i > 0),  f_t,i = 0 where it has no rows,
    is a solution of the MLCP. Take the least contact forces, min 1/2 |f|^2 (normal and
    tangential, in N) over the forces that may be non-zero (the others are left out of the
    problem): the balance of the unactuated directions, P (J_c' f - r) = 0 with r = Mt a - k
    and P = I - Jb'(Jb Jb')^-1 Jb the projector on the complement of the actuator and equality
    rows, is the equality constraint. P has the rank m of that complement (6 for a floating
    base): Z = m rows of P spanning its range (pivoted Cholesky of P = P'P) give the same
    constraint as A f = c, A = Z J_c', c = Z r. With the Hessian I the elimination is explicit:
        f = f0 + Q G' mu,  f0 = A_s'(A_s A_s')^-1 c_s,  Q = I - A_s'(A_s A_s')^-1 A_s,
    A_s the independent rows of A (Algorithm 1), G the rows picking the normal forces; the
    LCP  f_n = f0_n + Q_nn mu >= 0 _|_ mu >= 0  (Q_nn = I - W'W, W = L^-1 A_s,n) is solved by
    PPM warm-started on the contacts without normal force. A unique minimiser, continuous in
    the data, no internal force the motion does not need (no squeeze between feet, the limit of
    a soft contact's forces as it stiffens), whatever vertex the pivoting chose. Then (tau,
    f_E) = (Jb Jb')^-1 Jb (r - J_c' f) over the independent rows. Writes fc, lam, sel (of the
    bilateral rows), active; returns (ns, status, pivots), ns = -1 if the problem was not
    solved or its equality rows do not hold (fc, lam, sel untouched: the vertex forces stay)."""
    mark = _mark(ar)
    # r = Mt a - k  (Mt = L L', L the lower triangle of H)
    la = _fe(ar, n)
    for i in range(n):
        s = 0.0
        for p in range(i, n):
            s += H[p, i] * a[p]
        la[i] = s
    r = _fe(ar, n)
    for i in range(n):
        s = 0.0
        for p in range(i + 1):
            s += H[i, p] * la[p]
        r[i] = s - kv[i]
    # independent bilateral rows (Algorithm 1 in the Euclidean metric), P = I - Y'Y with
    # Y = Lb^-1 Jb_s, then Z: the rows of P of largest remaining pivot while above PIVOT_TOL
    nbm = max(nbil, 1)
    Lb = _fz2(ar, nbm, nbm)
    selb = _ie(ar, nbm)
    ratio = _fe(ar, nbm)
    ns = _select_rows(Jb, nbil, Jb, n, Lb, selb, ratio, ROW_TOL)
    Y = _fe2(ar, max(ns, 1), n)
    for i in range(n):
        for q in range(ns):
            Y[q, i] = Jb[selb[q], i]
    for i in range(n):
        _lower_solve(Lb, ns, Y[:, i])
    P = _fe2(ar, n, n)
    for i in range(n):
        for j in range(i + 1):
            s = 1.0 if i == j else 0.0
            for q in range(ns):
                s -= Y[q, i] * Y[q, j]
            P[i, j] = s
            P[j, i] = s
    zrow = _ie(ar, n)
    nz = _pivoted_rows(P, n, zrow, _fe2(ar, n, n), _bz(ar, n))
    # the forces that may be non-zero: normals of contacts that do not separate, tangents of
    # contacts with no-slip rows
    var_c = _ie(ar, max(3 * nc, 1))
    var_k = _ie(ar, max(3 * nc, 1))
    nidx = _ie(ar, max(nc, 1))
    nf = 0
    nn = 0
    for c in range(nc):
        if _dot(Jn[c], a, n) + bn[c] <= wscale:
            nidx[nn] = nf
            nn += 1
            var_c[nf] = c
            var_k[nf] = 0
            nf += 1
        if held[c]:
            for k in range(1, 3):
                var_c[nf] = c
                var_k[nf] = k
                nf += 1
    # A = Z J_c' (nz, nf), c = Z r
    nzm = max(nz, 1)
    A = _fe2(ar, nzm, max(nf, 1))
    cz = _fe(ar, nzm)
    for q in range(nz):
        zr = P[zrow[q]]
        for j in range(nf):
            c = var_c[j]
            row = Jn[c] if var_k[j] == 0 else Jt[c, var_k[j] - 1]
            A[q, j] = _dot(zr, row, n)
        cz[q] = _dot(zr, r, n)
    Lx = _fz2(ar, nzm, nzm)
    sela = _ie(ar, nzm)
    ratioa = _fe(ar, nzm)
    na = _select_rows(A, nz, A, nf, Lx, sela, ratioa, ROW_TOL)
    # f0 = A_s'(A_s A_s')^-1 c_s; W = Lx^-1 A_s,n; the LCP on the normals
    t = _fe(ar, nzm)
    for q in range(na):
        t[q] = cz[sela[q]]
    _chol_solve(Lx, na, t)
    f = _fz(ar, max(nf, 1))
    for q in range(na):
        for j in range(nf):
            f[j] += A[sela[q], j] * t[q]
    W = _fe2(ar, nzm, max(nn, 1))
    for j in range(nn):
        for q in range(na):
            W[q, j] = A[sela[q], nidx[j]]
        _lower_solve(Lx, na, W[:, j])
    Mq = _fe2(ar, nn, nn)
    qv = _fe(ar, nn)
    for i in range(nn):
        for j in range(i + 1):
            s = 1.0 if i == j else 0.0
            for q in range(na):
                s -= W[q, i] * W[q, j]
            Mq[i, j] = s
            Mq[j, i] = s
        qv[i] = f[nidx[i]]
    warmn = _bz(ar, nn)
    for i in range(nn):
        warmn[i] = warm[var_c[nidx[i]]]
    mu_ = _fz(ar, nn)
    w = _fe(ar, nn)
    ws = _lcp_workspace(ar, nn)
    status, pivots = lcp.ppm_kernel(DENSE, Mq, EMPTY2, EMPTY2, EMPTY2, 0.0, qv, warmn, ws,
                                    100 * nn + 1000, LCP_TOL, mu_, w)
    if status != SOLVED:
        _release(ar, mark)
        return -1, status, pivots
    # f += Q G' mu = G' mu - A_s'(A_s A_s')^-1 A_s,n mu
    for q in range(na):
        s = 0.0
        for j in range(nn):
            s += A[sela[q], nidx[j]] * mu_[j]
        t[q] = s
    _chol_solve(Lx, na, t)
    for j in range(nn):
        f[nidx[j]] += mu_[j]
    for q in range(na):
        for j in range(nf):
            f[j] -= A[sela[q], j] * t[q]
    # the equality rows Algorithm 1 dropped must hold too (else the motion needs a force the
    # set does not allow: keep the vertex forces, which balance it)
    # (to CONSISTENCY_TOL, plus the square root of the pivot ratio of a row dependent to
    # ROW_TOL, as _dropped_rows_hold)
    fscale = 0.0
    for j in range(nf):
        fscale = max(fscale, abs(f[j]))
    kept = _bz(ar, nzm)
    for q in range(na):
        kept[sela[q]] = True
    for q in range(nz):
        if kept[q]:
            continue
        s = -cz[q]
        amax = abs(cz[q])
        for j in range(nf):
            s += A[q, j] * f[j]
            amax = max(amax, abs(A[q, j]) * fscale)
        tol = CONSISTENCY_TOL + (math.sqrt(ratioa[q]) if ratioa[q] <= ROW_TOL else 0.0)
        if abs(s) > tol * max(amax, 1e-300):
            _release(ar, mark)
            return -1, status, pivots
    act = _bz(ar, nn)
    lcp.basis_sets(ws, act)
    for c in range(nc):
        active[c] = False
        fc[c, 0] = 0.0
        fc[c, 1] = 0.0
        fc[c, 2] = 0.0
    for i in range(nn):
        active[var_c[nidx[i]]] = act[i]
    for j in range(nf):
        fc[var_c[j], var_k[j]] = max(f[j], 0.0) if var_k[j] == 0 else f[j]
    # bilateral multipliers: (Jb_s Jb_s')^-1 Jb_s (r - J_c' f)
    for j in range(nf):
        c = var_c[j]
        row = Jn[c] if var_k[j] == 0 else Jt[c, var_k[j] - 1]
        for i in range(n):
            r[i] -= row[i] * f[j]
    for q in range(ns):
        lam[q] = _dot(Jb[selb[q]], r, n)
        sel[q] = selb[q]
    _chol_solve(Lb, ns, lam)
    _release(ar, mark)
    return ns, status, pivots


@jit
def _pivoted_rows(P, n, rows, R, done):
    """Rows of the symmetric PSD P (a projector) spanning its range: pivoted Cholesky, the
    largest remaining pivot first, while it exceeds PIVOT_TOL of the largest diagonal entry.
    Writes their indices in rows; returns their count (R (n, n), done (n,): scratch)."""
    R[:, :] = P
    big = 0.0
    for i in range(n):
        big = max(big, P[i, i])
    done[:] = False
    k = 0
    while k < n:
        p = -1
        best = PIVOT_TOL * big
        for i in range(n):
            if not done[i] and R[i, i] > best:
                best = R[i, i]
                p = i
        if p < 0:
            break
        done[p] = True
        rows[k] = p
        k += 1
        # R <- R - R[:, p] R[p, :] / R[p, p] (Schur complement)
        piv = R[p, p]
        for i in range(n):
            if done[i]:
                continue
            f = R[i, p] / piv
            for j in range(n):
                R[i, j] -= f * R[p, j]
    return k


@jit
def _opening_scales(fn, nc, a, n, aref):
    """The scales below which a normal force is zero (1e-9 of the largest, at least 1e-9) and
    above which a contact's normal acceleration opens it (OPEN_TOL of the accelerations)."""
    fmax = 1.0
    for c in range(nc):
        fmax = max(fmax, fn[c])
    return 1e-9 * fmax, OPEN_TOL * max(aref, math.sqrt(_dot(a, a, n)))


@jit
def _opening(c, fn, Jn, bn, a, n, fscale, wscale):
    """Contact c opens at the solution: no normal force and a separating acceleration."""
    return fn[c] <= fscale and _dot(Jn[c], a, n) + bn[c] > wscale


@jit
def _dropped_rows_hold(ar, Jb, cb, nb, n, sel, ns, ratio, a, aref):
    """Section 4.5: do the rows Algorithm 1 dropped hold at a, to CONSISTENCY_TOL relative to
    |J_r| times the larger of |a| and aref (the size of the free acceleration)? A row dependent
    to ROW_TOL may miss by the square root of its pivot ratio too (what its own independent
    part explains); one only nearly dependent (dropped by NOSLIP_ROW_TOL) is a constraint of
    its own and must hold, or eq. 47 makes it."""
    mark = _mark(ar)
    kept = _bz(ar, nb)
    for s in range(ns):
        kept[sel[s]] = True
    anorm = max(math.sqrt(_dot(a, a, n)), aref)
    for r in range(nb):
        if kept[r]:
            continue
        scale = math.sqrt(_dot(Jb[r], Jb[r], n)) * anorm + abs(cb[r])
        tol = CONSISTENCY_TOL + (math.sqrt(ratio[r]) if ratio[r] <= ROW_TOL else 0.0)
        if abs(_dot(Jb[r], a, n) - cb[r]) > tol * max(scale, 1e-300):
            _release(ar, mark)
            return False
    _release(ar, mark)
    return True


@jit
def _least_change(ar, n, H, kv, Jb, cb, nb, nact, sel, ns, Jn, bn, nc, closed, cb_des, unew):
    """Eq. 47b, aware of the dynamics: the actuated accelerations u closest to the desired ones,
    min 1/2 |u - u_des|^2, under which the rows Algorithm 1 dropped hold at the solution of the
    kept rows (sel, ns; the actuator rows carry u), with the normals of the contacts that the
    current solution keeps closed held closed (N_A a = -b_n,A, A = closed):
        a(u) = argmin 1/2 a'Mt a - k'a  s.t.  R a = c_R(u),  R = [Jb_sel; N_A],
        J_r a(u) = c_r  for every dropped row r.
    a(u) is affine, a(u) = a_u + Mt^-1 R_s' X^-1 E (u - u_cur) (R_s the independent rows of R,
    X = R_s Mt^-1 R_s', E the actuator slots, u_cur = cb[:nact]), so the dropped rows are the
    linear conditions A (u - u_cur) = b, A_d = (X^-1 R_s Mt^-1 J_r')_E (minus the unit entry
    of a dropped actuator row's own value), b_d = c_r - J_r a_u: the least change is
    u = u_des + A_s'(A_s A_s')^-1 (b_s - A_s (u_des - u_cur)) over A's independent rows A_s.
    A nearly dependent row is nearly a combination of the kept rows, mostly of the actuator
    rows, so its row of A is of the size of that combination: the condition is well posed
    where holding the row by its own multiplier is not (the multiplier's share of it is the
    row's small independent part). The forces are those of the kept rows only, whose pivot
    ratios exceed NOSLIP_ROW_TOL: no inconsistency is left for them to amplify. Writes unew
    (nact)."""
    mark = _mark(ar)
    nr = ns
    for c in range(nc):
        if closed[c]:
            nr += 1
    nrm = max(nr, 1)
    R = _fe2(ar, nrm, n)
    cR = _fe(ar, nrm)
    slot = _ie(ar, nrm)          # the actuator of each row of R, -1 for the others
    for q in range(ns):
        r = sel[q]
        for i in range(n):
            R[q, i] = Jb[r, i]
        cR[q] = cb[r]
        slot[q] = r if r < nact else -1
    q = ns
    for c in range(nc):
        if closed[c]:
            for i in range(n):
                R[q, i] = Jn[c, i]
            cR[q] = -bn[c]
            slot[q] = -1
            q += 1
    Yr = _fe2(ar, nrm, n)
    for q in range(nr):
        for i in range(n):
            Yr[q, i] = R[q, i]
        _chol_solve(H, n, Yr[q])
    Lr = _fz2(ar, nrm, nrm)
    selr = _ie(ar, nrm)
    ratior = _fe(ar, nrm)
    nsr = _select_rows(R, nr, Yr, n, Lr, selr, ratior, ROW_TOL)
    # a_u = Mt^-1 k + Mt^-1 R_s' X^-1 (c_R,s - R_s Mt^-1 k)
    au = _fe(ar, n)
    for i in range(n):
        au[i] = kv[i]
    _chol_solve(H, n, au)
    t = _fe(ar, nrm)
    for q in range(nsr):
        t[q] = cR[selr[q]] - _dot(R[selr[q]], au, n)
    _chol_solve(Lr, nsr, t)
    for q in range(nsr):
        for i in range(n):
            au[i] += Yr[selr[q], i] * t[q]
    # the conditions A (u - u_cur) = b, one per dropped row
    kept = _bz(ar, max(nb, 1))
    for q in range(ns):
        kept[sel[q]] = True
    nd = nb - ns
    ndm = max(nd, 1)
    nam = max(nact, 1)
    A = _fz2(ar, ndm, nam)
    b = _fe(ar, ndm)
    p = 0
    for r in range(nb):
        if kept[r]:
            continue
        for q in range(nsr):
            t[q] = _dot(Yr[selr[q]], Jb[r], n)
        _chol_solve(Lr, nsr, t)
        for q in range(nsr):
            j = slot[selr[q]]
            if j >= 0:
                A[p, j] = t[q]
        if r < nact:
            A[p, r] -= 1.0
        b[p] = cb[r] - _dot(Jb[r], au, n)
        p += 1
    # u - u_cur = e + A_s'(A_s A_s')^-1 (b_s - A_s e),  e = u_des - u_cur
    e = _fe(ar, nam)
    for j in range(nact):
        e[j] = cb_des[j] - cb[j]
    La = _fz2(ar, ndm, ndm)
    sela = _ie(ar, ndm)
    ratioa = _fe(ar, ndm)
    na = _select_rows(A, nd, A, nact, La, sela, ratioa, ROW_TOL)
    s = _fe(ar, ndm)
    for q in range(na):
        s[q] = b[sela[q]] - _dot(A[sela[q]], e, nact)
    _chol_solve(La, na, s)
    for j in range(nact):
        du = e[j]
        for q in range(na):
            du += A[sela[q], j] * s[q]
        unew[j] = cb[j] + du
    _release(ar, mark)


@jit
def _least_change_kinematic(ar, n, H, Jb, cb, nb, nact, Jn, bn, nc, apred, warm, a):
    """Eq. 47a, the paper's QP over the accelerations, kinematic: the accelerations closest to
    the desired ones on the actuated coordinates that satisfy every contact and equality row,
    min 1/2 |B a - B a_des|^2 + eps/2 |a - apred|^2_Mt  s.t.  J_E a = c_E, T a = c_T (all of
    them), N a + b_n >= 0. It chooses which contacts stay closed; its B a are consistent with
    rows exactly dependent on the kept ones, not with nearly dependent ones (their dynamics are
    not in it): _least_change then finishes. Writes a."""
    mark = _mark(ar)
    # H2 = B'B + eps Mt (Mt = L L' from the factor in H), k2 = B'B a_des + eps Mt apred
    Mt = _fe2(ar, n, n)
    for i in range(n):
        for j in range(i + 1):
            s = 0.0
            for p in range(j + 1):
                s += H[i, p] * H[j, p]
            Mt[i, j] = s
            Mt[j, i] = s
    trace_b = 0.0
    trace_m = 0.0
    for i in range(n):
        trace_m += Mt[i, i]
    for r in range(nact):
        trace_b += _dot(Jb[r], Jb[r], n)
    eps = EPS_REG * max(trace_b, 1e-300) / trace_m
    H2 = _fe2(ar, n, n)
    k2 = _fe(ar, n)
    for i in range(n):
        for j in range(n):
            s = eps * Mt[i, j]
            for r in range(nact):
                s += Jb[r, i] * Jb[r, j]
            H2[i, j] = s
        s = 0.0
        for j in range(n):
            s += eps * Mt[i, j] * apred[j]
        for r in range(nact):
            s += Jb[r, i] * cb[r]
        k2[i] = s
    _cholesky(H2, n)
    nrest = nb - nact
    Jr = _fe2(ar, max(nrest, 1), n)
    cr = _fe(ar, max(nrest, 1))
    for r in range(nrest):
        for i in range(n):
            Jr[r, i] = Jb[nact + r, i]
        cr[r] = cb[nact + r]
    active = _bz(ar, nc)
    f = _fz(ar, nc)
    lam = _fe(ar, max(nrest, 1))
    sel = _ie(ar, max(nrest, 1))
    ratio = _fe(ar, max(nrest, 1))
    _gauss(ar, H2, n, k2, Jr, cr, nrest, Jn, bn, nc, warm, active, f, a, lam, sel, ratio,
           ROW_TOL, False, _fe2(ar, 0, 0), _fe2(ar, 0, 0))
    _release(ar, mark)


@jit
def _coulomb_lcp(n, nc, nedges, Jn, Jt, mu, nfr, fr_of, G, ng):
    """Rows G = [N; D] of the Coulomb model: the normals, then nedges edge directions per
    contact with friction (D_j = mu1 cos t_j T1 + mu2 sin t_j T2). Returns ng."""
    for c in range(nc):
        for i in range(n):
            G[c, i] = Jn[c, i]
    r = nc
    for f in range(nfr):
        c = fr_of[f]
        for j in range(nedges):
            e1, e2 = _edge_dir(mu, c, j, nedges)
            for i in range(n):
                G[r, i] = e1 * Jt[c, 0, i] + e2 * Jt[c, 1, i]
            r += 1
    return r


@jit
def _coulomb(ar, n, H, kv, Jb, cb, nb, Jn, Jt, mu, phi, nc, h, qvel, nedges, nact, has_tau,
             tau_prev, max_bases, a, lam, sel, fc, info_i):
    """Section 5: the Anitescu-Potra LCP in z = (f_n, beta, lambda),
        w_n = N a + b_n,  w_b = D v'/h + E lambda,  w_l = f_n - E' beta,
    a = a0 + Q (N' f_n + D' beta), solved by Lemke; then Algorithm 3 over the candidate
    complementary bases when they are at most max_bases."""
    fr_of = np.empty(nc, np.int64)
    nfr = 0
    for c in range(nc):
        if mu[c, 0] != 0.0 or mu[c, 1] != 0.0:
            fr_of[nfr] = c
            nfr += 1
    ng = nc + nfr * nedges
    G = np.empty((ng, n))
    _coulomb_lcp(n, nc, nedges, Jn, Jt, mu, nfr, fr_of, G, ng)
    ratio = np.empty(max(nb, 1))
    ns, Yb, Lx, YG, Wm, a0, lam0 = _elimination(ar, H, n, kv, Jb, cb, nb, G, ng, sel, ratio,
                                                ROW_TOL, False, _fe2(ar, 0, 0), _fe2(ar, 0, 0))
    nz = ng + nfr
    M = np.zeros((nz, nz))
    q = np.zeros(nz)
    for i in range(ng):
        for j in range(ng):
            s = 0.0
            for p in range(n):
                s += G[i, p] * YG[p, j]
            for p in range(ns):
                s -= Wm[p, i] * Wm[p, j]
            M[i, j] = s
        q[i] = _dot(G[i], a0, n)
        if i < nc:
            q[i] += (_dot(Jn[i], qvel, n) + phi[i] / h) / h
        else:
            q[i] += _dot(G[i], qvel, n) / h
    for f in range(nfr):
        c = fr_of[f]
        lrow = ng + f
        for j in range(nedges):
            e = nc + f * nedges + j
            M[e, lrow] = 1.0          # E lambda
            M[lrow, e] = -1.0         # - E' beta
        M[lrow, c] = 1.0              # f_n (mu folded into the edge directions)
    z = np.zeros(nz)
    w = np.zeros(nz)
    ws = lcp.workspace(nz)
    status, pivots = lcp.lemke_kernel(DENSE, M, EMPTY2, EMPTY2, EMPTY2, 0.0, q, np.ones(nz), ws,
                                      100 * nz + 10000, LCP_TOL, z, w)
    info_i[I_STATUS] = status
    info_i[I_PIVOTS] = pivots
    info_i[I_NLCP] = nz
    info_i[I_ENUM] = 0
    info_i[I_NSOL] = 0
    # Algorithm 3: every candidate complementary basis, structured per contact (below); keep
    # the solution whose actuator forces are closest to the previous ones (or smallest)
    if status == SOLVED and nc > 0:
        # tau(z) = lam0_act - T z over the selected actuator rows: T = X^-1 Jb_s H^-1 G'
        nsa = 0
        for s in range(ns):
            if sel[s] < nact:
                nsa += 1
        T = np.zeros((ns, ng))
        for j in range(ng):
            for s in range(ns):
                T[s, j] = Wm[s, j]
            _upper_solve(Lx, ns, T[:, j])
        ref = np.zeros(ns)
        for s in range(ns):
            if sel[s] < nact and has_tau:
                ref[s] = tau_prev[sel[s]]
        best = _torque_distance(z, ng, lam0, T, ns, sel, nact, ref)
        modes = _mode_table(nedges)
        nmodes_f = modes.shape[0]
        total = 1
        for c in range(nc):
            mc = nmodes_f if (mu[c, 0] != 0.0 or mu[c, 1] != 0.0) else 2
            total *= mc
            if total > max_bases:
                break
        if total <= max_bases:
            info_i[I_ENUM] = 1
            best_z = z.copy()
            nsol = _enumerate(M, q, nz, nc, nfr, fr_of, nedges, mu, modes, total, lam0, T, ns,
                              sel, nact, ref, ng, best, best_z)
            info_i[I_NSOL] = nsol
            z[:] = best_z
    _recover(H, n, kv, Jb, cb, ns, sel, Lx, Yb, YG, ng, z, a, lam, np.empty(n))
    for c in range(nc):
        fc[c, 0] = z[c]
        fc[c, 1] = 0.0
        fc[c, 2] = 0.0
    for f in range(nfr):
        c = fr_of[f]
        for j in range(nedges):
            e1, e2 = _edge_dir(mu, c, j, nedges)
            beta = z[nc + f * nedges + j]
            fc[c, 1] += beta * e1
            fc[c, 2] += beta * e2
    return ns


@jit
def _torque_distance(z, ng, lam0, T, ns, sel, nact, ref):
    """|tau(z) - ref|^2 over the selected actuator rows, tau = lam0 - T z[:ng]."""
    dist = 0.0
    for s in range(ns):
        if sel[s] >= nact:
            continue
        t = lam0[s]
        for j in range(ng):
            t -= T[s, j] * z[j]
        dist += (t - ref[s]) ** 2
    return dist


@jit
def _mode_table(nedges):
    """Candidate sets of basic variables of one contact with friction, over its local variables
    (f_n, beta_0..beta_{k-1}, lambda): separating ({} or {lambda}), sticking ({f_n} and at most
    two edges), sliding ({f_n, lambda} and one or two edges). These are the bases of its
    non-degenerate solutions: a planar friction force is a positive combination of at most two
    edges, and a sliding contact's force lies on the cone's boundary."""
    k = nedges
    subsets = 1 + k + k * (k - 1) // 2     # at most; opposite pairs are left out
    modes = np.zeros((2 + subsets + subsets - 1, k + 2), np.bool_)
    modes[1, k + 1] = True
    r = 2
    for slide in range(2):
        for i in range(-1, k):
            for j in range(i, k):
                if (i < 0 and j >= 0) or (slide and i < 0):
                    continue     # {} only once as (-1, -1); sliding needs an edge
                if i >= 0 and 2 * (j - i) == k:
                    continue     # opposite edges: dependent rows, a singular block
                modes[r, 0] = True
                modes[r, k + 1] = slide == 1
                if i >= 0:
                    modes[r, 1 + i] = True
                    modes[r, 1 + j] = True
                r += 1
    return modes[:r]


@jit
def _enumerate(M, q, nz, nc, nfr, fr_of, nedges, mu, modes, total, lam0, T, ns, sel, nact,
               ref, ng, best, best_z):
    """Solve every combination of per-contact modes; keep in best_z the solution with the
    least torque distance. Returns the number of solutions found."""
    alpha = np.zeros(nz, np.bool_)
    idx = np.empty(nz, np.int64)
    A = np.empty((nz, nz))
    b = np.empty(nz)
    perm = np.empty(nz, np.int64)
    z = np.empty(nz)
    choice = np.zeros(nc, np.int64)
    f_index = np.full(nc, -1, np.int64)
    for f in range(nfr):
        f_index[fr_of[f]] = f
    scale = 1.0
    for i in range(nz):
        scale = max(scale, abs(q[i]))
    nsol = 0
    for count in range(total):
        # decode the mixed-radix counter
        rest = count
        for c in range(nc):
            base = modes.shape[0] if f_index[c] >= 0 else 2
            choice[c] = rest % base
            rest //= base
        alpha[:] = False
        for c in range(nc):
            f = f_index[c]
            if f < 0:
                alpha[c] = choice[c] == 1
                continue
            row = modes[choice[c]]
            alpha[c] = row[0]
            for j in range(nedges):
                alpha[nc + f * nedges + j] = row[1 + j]
            alpha[ng + f] = row[nedges + 1]
        k = 0
        for i in range(nz):
            if alpha[i]:
                idx[k] = i
                k += 1
        for a in range(k):
            for bb in range(k):
                A[a, bb] = M[idx[a], idx[bb]]
            b[a] = -q[idx[a]]
        if k > 0 and not _lu_solve_inplace(A, k, b, perm):
            continue
        z[:] = 0.0
        ok = True
        for a in range(k):
            z[idx[a]] = b[a]
            if b[a] < -1e-9 * scale:
                ok = False
        if not ok:
            continue
        for i in range(nz):
            if alpha[i]:
                continue
            s = q[i]
            for a in range(k):
                s += M[i, idx[a]] * b[a]
            if s < -1e-9 * scale:
                ok = False
                break
        if not ok:
            continue
        nsol += 1
        dist = _torque_distance(z, ng, lam0, T, ns, sel, nact, ref)
        if dist < best:
            best = dist
            for i in range(nz):
                best_z[i] = max(z[i], 0.0)
    return nsol


@jit
def _convex(ar, n, H, kv, Jb, cb, nb, Jn, Jt, mu, phi, nc, h, qvel, nedges, nact, has_tau, tau_prev,
            flags_in, flags_out, prev, a, lam, sel, fc, info_i):
    """Sections 2.3.4 and 6: forces f = sum_j e_j (n + d_j) on the edges of each cone, e >= 0;
    stage 1: min 1/2 v'^T Mt v' s.t. N v' + phi / h >= 0 (maximal dissipation, no
    complementarity), as the LCP of its optimality conditions; stage 2: among the e giving the
    same v' (Q G'e fixed), the one whose actuator forces are closest to the previous ones."""
    ne = 0
    for c in range(nc):
        ne += nedges if (mu[c, 0] != 0.0 or mu[c, 1] != 0.0) else 1
    ng = ne + nc
    G = np.empty((ng, n))         # edge rows, then the normals (for the non-penetration rows)
    owner = np.empty(ne, np.int64)
    edge = np.empty(ne, np.int64)
    r = 0
    for c in range(nc):
        fric = mu[c, 0] != 0.0 or mu[c, 1] != 0.0
        for j in range(nedges if fric else 1):
            e1, e2 = _edge_dir(mu, c, j, nedges) if fric else (0.0, 0.0)
            for i in range(n):
                G[r, i] = Jn[c, i] + e1 * Jt[c, 0, i] + e2 * Jt[c, 1, i]
            owner[r] = c
            edge[r] = j
            r += 1
    for c in range(nc):
        for i in range(n):
            G[ne + c, i] = Jn[c, i]
    ratio = np.empty(max(nb, 1))
    ns, Yb, Lx, YG, Wm, a0, lam0 = _elimination(ar, H, n, kv, Jb, cb, nb, G, ng, sel, ratio,
                                                ROW_TOL, False, _fe2(ar, 0, 0), _fe2(ar, 0, 0))
    # Z = G Q G' over all rows
    Z = np.empty((ng, ng))
    for i in range(ng):
        for j in range(i + 1):
            s = 0.0
            for p in range(n):
                s += G[i, p] * YG[p, j]
            for p in range(ns):
                s -= Wm[p, i] * Wm[p, j]
            Z[i, j] = s
            Z[j, i] = s
    # gradient of the kinetic energy / h^2 at e = 0: g = G_e Q Mt v0' / h, with
    # Q Mt v0' = v0' - Yb_s' X^-1 Jb_s v0'  and v0' = v + h a0
    v0 = np.empty(n)
    for i in range(n):
        v0[i] = qvel[i] + h * a0[i]
    t = np.empty(max(ns, 1))
    for s in range(ns):
        t[s] = _dot(Jb[sel[s]], v0, n)
    _chol_solve(Lx, ns, t)
    qmv = v0.copy()
    for s in range(ns):
        for i in range(n):
            qmv[i] -= Yb[sel[s], i] * t[s]
    nz = ne + nc
    M = np.zeros((nz, nz))
    q = np.empty(nz)
    for i in range(ne):
        for j in range(ne):
            M[i, j] = Z[i, j]
        for c in range(nc):
            M[i, ne + c] = -Z[ne + c, i]      # -C'
            M[ne + c, i] = Z[ne + c, i]       # C = N Q G_e'
        q[i] = _dot(G[i], qmv, n) / h
    for c in range(nc):
        q[ne + c] = _dot(Jn[c], a0, n) + (_dot(Jn[c], qvel, n) + phi[c] / h) / h
    warm = np.zeros(nz, np.bool_)
    for i in range(ne):
        p = prev[owner[i]]
        if p >= 0:
            warm[i] = flags_in[p, 1 + edge[i]]
    for c in range(nc):
        if prev[c] >= 0:
            warm[ne + c] = flags_in[prev[c], 0]
    z = np.zeros(nz)
    w = np.zeros(nz)
    ws = lcp.workspace(nz)
    status, pivots = lcp.ppm_kernel(DENSE, M, EMPTY2, EMPTY2, EMPTY2, 0.0, q, warm, ws,
                                    100 * nz + 1000, LCP_TOL, z, w)
    active = np.zeros(nz, np.bool_)
    lcp.basis_sets(ws, active)
    for c in range(nc):
        flags_out[c, 0] = active[ne + c]
    for i in range(ne):
        flags_out[owner[i], 1 + edge[i]] = active[i]
    info_i[I_STATUS] = status
    info_i[I_PIVOTS] = pivots
    info_i[I_NLCP] = nz
    e = z[:ne].copy()
    pivots2 = 0
    if status == SOLVED and ne > 0:
        pivots2 = _convex_tiebreak(ar, n, ne, YG, Yb, Wm, Lx, ns, sel, nact, lam0, has_tau,
                                   tau_prev, owner, edge, flags_in, flags_out, prev, e)
    info_i[I_PIVOTS2] = pivots2
    _recover(H, n, kv, Jb, cb, ns, sel, Lx, Yb, YG, ne, e, a, lam, np.empty(n))
    for c in range(nc):
        fc[c, 0] = 0.0
        fc[c, 1] = 0.0
        fc[c, 2] = 0.0
    for i in range(ne):
        c = owner[i]
        fric = mu[c, 0] != 0.0 or mu[c, 1] != 0.0
        e1, e2 = _edge_dir(mu, c, edge[i], nedges) if fric else (0.0, 0.0)
        fc[c, 0] += e[i]
        fc[c, 1] += e[i] * e1
        fc[c, 2] += e[i] * e2
    return ns


@jit
def _convex_tiebreak(ar, n, ne, YG, Yb, Wm, Lx, ns, sel, nact, lam0, has_tau, tau_prev, owner, edge,
                     flags_in, flags_out, prev, e):
    """Stage 2 of the convex model: among the edge forces giving the same post-step velocity as
    e* (Q G_e' e = Q G_e' e*), those whose actuator forces tau(e) = lam0 - T e (T = X^-1 Jb_s
    H^-1 G_e', selected actuator rows) are closest to the previous ones:
        min 1/2 |tau(e) - tau_prev|^2 + eps/2 |e|^2  s.t.  Q G_e' (e - e*) = 0,  e >= 0,
    a Gauss problem in e solved like the no-slip one (warm-started on the edges at zero).
    Overwrites e; returns the pivots."""
    T = np.zeros((ns, ne))
    for j in range(ne):
        for s in range(ns):
            T[s, j] = Wm[s, j]
        _upper_solve(Lx, ns, T[:, j])
    He = np.zeros((ne, ne))
    ke = np.zeros(ne)
    tr = 0.0
    for s in range(ns):
        if sel[s] >= nact:
            continue
        ref = tau_prev[sel[s]] if has_tau else 0.0
        for i in range(ne):
            ke[i] += T[s, i] * (lam0[s] - ref)
            tr += T[s, i] * T[s, i]
            for j in range(ne):
                He[i, j] += T[s, i] * T[s, j]
    eps = EPS_REG * tr / ne if tr > 0.0 else 1.0
    for i in range(ne):
        He[i, i] += eps
    _cholesky(He, ne)
    # rows of Q G_e' = H^-1 G_e' - (H^-1 Jb_s') T, one per dof
    Jq = np.empty((n, ne))
    cq = np.empty(n)
    for i in range(n):
        for j in range(ne):
            s_ = YG[i, j]
            for s in range(ns):
                s_ -= Yb[sel[s], i] * T[s, j]
            Jq[i, j] = s_
        cq[i] = _dot(Jq[i], e, ne)
    bound = np.zeros((ne, ne))
    for i in range(ne):
        bound[i, i] = 1.0
    zero = np.zeros(ne)
    warm = np.zeros(ne, np.bool_)
    for i in range(ne):
        p = prev[owner[i]]
        if p >= 0:
            warm[i] = flags_in[p, 1 + MAXEDGES + edge[i]]
    active = np.zeros(ne, np.bool_)
    mult = np.zeros(ne)
    enew = np.empty(ne)
    lam = np.empty(n)
    sel2 = np.empty(n, np.int64)
    ratio = np.empty(n)
    status, pivots, _ = _gauss(ar, He, ne, ke, Jq, cq, n, bound, zero, ne, warm, active, mult,
                               enew, lam, sel2, ratio, ROW_TOL, False, _fe2(ar, 0, 0),
                               _fe2(ar, 0, 0))
    for i in range(ne):
        flags_out[owner[i], 1 + MAXEDGES + edge[i]] = active[i]
    if status == SOLVED:
        for i in range(ne):
            e[i] = max(enew[i], 0.0)
    return pivots


# ------------------------------------------------------------------------------------------------
# the kernel
# ------------------------------------------------------------------------------------------------
@jit
def rigid_inverse_kernel(m, d, qacc_des, model, nedges, stab, max_bases, least_norm, max_passes,
                         warm_geom, warm_pos, warm_flags, warm_n, warm_model, tau_prev, has_tau,
                         qfrc, act_force, contact_force, qacc, info_i, sf, si, sb, spos):
    """The whole rigid-contact inverse: stages of forward up to the bias forces, rows, model.
    Writes qfrc (actuator generalised force), act_force, contact_force (ncon, 3), qacc, info_i
    and the warm-start arrays (for the next call). sf, si, sb: the scratch arena (floats,
    ints, bools); spos (6,): written with its high-water marks."""
    spos[:] = 0
    ar = (sf, si, sb, spos)
    fwd_position(m, d)
    fwd_velocity(m, d)
    n = d.qvel.shape[0]
    nu = m.actuator_trntype.shape[0]
    h = m.opt_timestep[0]
    ncon = d.ncon[0]
    for c in range(ncon):
        contact_force[c, 0] = 0.0
        contact_force[c, 1] = 0.0
        contact_force[c, 2] = 0.0
    # contacts
    cid = _ie(ar, ncon)
    Jn = _fe2(ar, ncon, n)
    Jt = _fe(ar, ncon * 2 * n).reshape((ncon, 2, n))
    mu = _fe2(ar, ncon, 2)
    phi = _fe(ar, ncon)
    nc = _contact_rows(m, d, stab, cid, Jn, Jt, mu, phi)
    # inertia of the step (Cholesky), the smooth force, the bilateral rows
    H = _fe2(ar, n, n)
    _dense_inertia(m, d, H)
    _cholesky(H, n)
    kv = _fe(ar, n)
    _smooth_force(m, d, kv)
    nbmax = nu + d.nefc[0] + 2 * nc
    Jb = _fe2(ar, max(nbmax, 1), n)
    cb = _fe(ar, max(nbmax, 1))
    nbil = _bilateral_rows(m, d, qacc_des, stab, Jb, cb)
    # warm start
    prev = _ie(ar, max(nc, 1))
    prev[:] = -1
    if warm_model[0] == model:
        _match(d, cid, nc, warm_geom, warm_pos, warm_n[0], prev, _bz(ar, max(warm_n[0], 1)))
    flags_in = _bz(ar, warm_flags.size).reshape(warm_flags.shape)
    flags_in[:, :] = warm_flags
    warm_flags[:max(nc, 1)] = False
    fc = _fz2(ar, max(nc, 1), 3)
    a = _fe(ar, n)
    lam = _fz(ar, max(nbmax, 1))
    sel = _ie(ar, max(nbmax, 1))
    info_i[:] = 0
    info_i[I_CONSISTENT] = 1
    info_i[I_NCON] = nc
    if model == NOSLIP:
        ns = _noslip(ar, n, H, kv, Jb, cb, Jn, Jt, mu, phi, nc, h, d.qvel, nu, nbil, least_norm,
                     max_passes, flags_in, warm_flags, prev, a, lam, sel, fc, info_i)
    elif model == COULOMB:
        ns = _coulomb(ar, n, H, kv, Jb, cb, nbil, Jn, Jt, mu, phi, nc, h, d.qvel, nedges, nu,
                      has_tau, tau_prev, max_bases, a, lam, sel, fc, info_i)
    else:
        ns = _convex(ar, n, H, kv, Jb, cb, nbil, Jn, Jt, mu, phi, nc, h, d.qvel, nedges, nu,
                     has_tau, tau_prev, flags_in, warm_flags, prev, a, lam, sel, fc, info_i)
    # outputs: qacc, actuator forces (multipliers of the kept actuator rows), their generalised
    # force, contact forces per contact of d.contact
    for i in range(n):
        qacc[i] = a[i]
        qfrc[i] = 0.0
    for i in range(nu):
        act_force[i] = 0.0
    for s in range(ns):
        r = sel[s]
        if r < nu:
            act_force[r] = lam[s]
            for i in range(n):
                qfrc[i] += d.actuator_moment[r, i] * lam[s]
    for c in range(nc):
        for k in range(3):
            contact_force[cid[c], k] = fc[c, k]
    # remember the contacts for the next call
    if nc > warm_geom.shape[0]:
        nc_keep = warm_geom.shape[0]
    else:
        nc_keep = nc
    for c in range(nc_keep):
        warm_geom[c, 0] = d.contact_geom1[cid[c]]
        warm_geom[c, 1] = d.contact_geom2[cid[c]]
        for k in range(3):
            warm_pos[c, k] = d.contact_pos[cid[c], k]
    warm_n[0] = nc_keep
    warm_model[0] = model
    for i in range(nu):
        tau_prev[i] = act_force[i]


# ------------------------------------------------------------------------------------------------
# public API
# ------------------------------------------------------------------------------------------------
class RigidWarmstart:
    """What rigid_inverse carries from one call to the next: the previous contacts (geoms,
    points), which pivoting variables were basic per contact, the previous actuator forces,
    and the kernel's scratch arena (sized for nv dofs and nconmax contacts, grown to the
    high-water mark a call reports)."""

    def __init__(self, nconmax: int, nu: int, nv: int = 0):
        self.geom = np.zeros((nconmax, 2), np.int64)
        self.pos = np.zeros((nconmax, 3))
        self.flags = np.zeros((nconmax, NFLAGS), np.bool_)
        self.n = np.zeros(1, np.int64)
        self.model = np.full(1, -1, np.int64)
        self.tau = np.zeros(nu)
        self.has_tau = False
        # no-slip's largest blocks: the rows (nu + 2 nconmax) x nv, a few nv x nv, 3 nconmax
        # force variables; other models and larger problems grow it
        rows = nu + 2 * nconmax + nv
        self.scratch_f = np.empty(3 * rows * nv + 8 * nv * nv + 24 * nconmax * (nconmax + 4))
        self.scratch_i = np.empty(8 * rows + 16 * nconmax, np.int64)
        self.scratch_b = np.empty(NFLAGS * nconmax + 16 * nconmax + 64, np.bool_)
        self.scratch_pos = np.zeros(6, np.int64)

    def _grow_scratch(self):
        """Give the arena what the last call used beyond it (it allocated that part)."""
        hw = self.scratch_pos
        if hw[3] > self.scratch_f.shape[0]:
            self.scratch_f = np.empty(int(1.25 * hw[3]))
        if hw[4] > self.scratch_i.shape[0]:
            self.scratch_i = np.empty(int(1.25 * hw[4]), np.int64)
        if hw[5] > self.scratch_b.shape[0]:
            self.scratch_b = np.empty(int(1.25 * hw[5]), np.bool_)


@dataclass
class RigidInverseResult:
    """Result of rigid_inverse. qfrc (nv,): generalised actuator force moment' actuator_force
    (zero on unactuated dofs); actuator_force (nu,); contact_force (ncon, 3): normal, tangent 1,
    tangent 2 in each contact's frame; qacc (nv,):
    the predicted accelerations of all dofs; ok: the LCP was solved and the desired
    accelerations were consistent (or made so by eq. 47); status: the LCP's LCPStatus; pivots:
    of the main LCP (pivots2: of the second problem, eq. 47 or the convex tie-breaker);
    consistent: the dropped rows held; adjusted: the desired accelerations were inconsistent
    and replaced by the closest consistent ones (eq. 47, no-slip); enumerated / nsolutions:
    Algorithm 3 ran and how many solutions it found (Coulomb); ncontact: contacts with rows;
    passes: of the no-slip open-set loop; warmstart: pass to the next call."""
    qfrc: np.ndarray
    actuator_force: np.ndarray
    contact_force: np.ndarray
    qacc: np.ndarray
    ok: bool
    status: LCPStatus
    pivots: int
    pivots2: int
    consistent: bool
    adjusted: bool
    enumerated: bool
    nsolutions: int
    ncontact: int
    passes: int
    warmstart: RigidWarmstart


def rigid_inverse(m: Model, d: Data, qacc_des, model: str = "noslip", warmstart=None, *,
                  nedges: int = 4, stabilization: float = 1.0, max_bases: int = 20000,
                  least_norm: bool = True, max_passes: int = 0) -> RigidInverseResult:
    """Actuator and contact forces that produce qacc_des on the actuated coordinates with rigid
    contact, at the state (qpos, qvel) of d (its position and velocity stages are recomputed).

    model: "noslip", "coulomb" or "convex" (see the module docstring). warmstart: the previous
    result's warmstart (torques and pivoting sets carried over: chatter mitigation). nedges:
    edges of the linearised friction cone (coulomb, convex). stabilization: factor on the
    penetration depth in N v' >= -phi / h (1: the paper's section 3.2, removed in one step;
    0: penetration left as it is); positive gaps are always used in full. max_bases: Algorithm
    3 runs when its number of candidate bases is at most this (coulomb). least_norm (no-slip):
    among the equally valid contact forces, return the least ones (no internal forces; unique
    and continuous in the state); False returns the pivoting's vertex solution as the paper
    does (indeterminate: where warm starting matters). max_passes (no-slip): cap on the passes
    that remove the rows of opening contacts and restore those of closing ones (0: 2 ncon + 2);
    at the cap the set of the last solve is kept (res.passes)."""
    if model not in MODEL_NAMES:
        raise ValueError(f"model must be one of {sorted(MODEL_NAMES)}, not {model!r}")
    qacc_des = np.ascontiguousarray(qacc_des, dtype=float).ravel()
    if qacc_des.shape != (m.nv,):
        raise ValueError(f"qacc_des must have nv = {m.nv} entries, not {qacc_des.shape[0]}")
    if not np.all(np.isfinite(qacc_des)):
        raise ValueError("qacc_des must be finite")
    if not 1 <= int(nedges) <= MAXEDGES:
        raise ValueError(f"nedges must lie in [1, {MAXEDGES}]")
    if not stabilization >= 0.0:
        raise ValueError("stabilization must be >= 0")
    if int(max_passes) < 0:
        raise ValueError("max_passes must be >= 0")
    warmup.join()
    code = int(MODEL_NAMES[model])
    ws = warmstart
    if ws is None or ws.tau.shape[0] != m.nu:
        ws = RigidWarmstart(d.nconmax, m.nu, m.nv)
    qfrc = np.empty(m.nv)
    act = np.empty(m.nu)
    qacc = np.empty(m.nv)
    info = np.zeros(11, np.int64)
    while True:
        if ws.geom.shape[0] < d.nconmax:
            grown = RigidWarmstart(d.nconmax, m.nu, m.nv)
            grown.geom[:ws.geom.shape[0]] = ws.geom
            grown.pos[:ws.pos.shape[0]] = ws.pos
            grown.flags[:ws.flags.shape[0]] = ws.flags
            grown.n[:], grown.model[:], grown.tau[:] = ws.n, ws.model, ws.tau
            grown.has_tau = ws.has_tau
            ws = grown
        cf = np.zeros((d.nconmax, 3))
        rigid_inverse_kernel(m._struct, d._struct, qacc_des, code, int(nedges),
                             float(stabilization), int(max_bases), bool(least_norm),
                             int(max_passes), ws.geom, ws.pos, ws.flags, ws.n, ws.model, ws.tau,
                             ws.has_tau, qfrc, act, cf, qacc, info, ws.scratch_f, ws.scratch_i,
                             ws.scratch_b, ws.scratch_pos)
        ws._grow_scratch()
        if not d.nefc_overflow[0]:
            break
        _grow(m, d)
    ws.has_tau = True
    status = LCPStatus(int(info[I_STATUS]))
    consistent = bool(info[I_CONSISTENT])
    return RigidInverseResult(
        qfrc=qfrc, actuator_force=act, contact_force=cf[:len(d.contact.dist)], qacc=qacc,
        ok=status == SOLVED and consistent, status=status, pivots=int(info[I_PIVOTS]),
        pivots2=int(info[I_PIVOTS2]), consistent=consistent, adjusted=bool(info[I_ADJUSTED]),
        enumerated=bool(info[I_ENUM]),
        nsolutions=int(info[I_NSOL]), ncontact=int(info[I_NCON]), passes=int(info[I_PASSES]),
        warmstart=ws)

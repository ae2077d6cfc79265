"""The impulse problem (paper eq. 11) and its two solvers.

    min_{f : phi(f) >= 0}  1/2 f' (A + R) f + f' (v- - v*),   A = J M^-1 J', v- = J v^

Objects (eq. 9): equality rows are unconstrained, friction loss |f| <= eta, limits,
frictionless contacts and the edges of pyramidal contacts f >= 0 (scalar half-lines), and each
elliptic contact a cone f_0 >= ||(f_j / mu_j)||.

Hard equality rows (R_E = 0, efc_hard) are exact linear constraints J_E v' = v*_E. PGS
eliminates them as the paper's hard-constraint formulas do (section II.C): the other rows see
M^-1 -> M^-1 - M^-1 J_E' A_E^+ J_E M^-1 and v^ -> v^ + M^-1 J_E' A_E^+ (v*_E - J_E v^), so
any impulse of theirs keeps J_E v' = v*_E; Newton minimises its primal cost on the affine set
J_E v' = v*_E (KKT steps). The hard impulses follow from the force balance,
f_E = A_E^+ J_E M^-1 (M (v' - v^) - J' f).

PGS: the paper's projected Gauss-Seidel generalised to cones. Scalar objects are solved exactly
in turn. A contact block is updated in its first sweeps in two parts, as MuJoCo's PGS does (the
best multiple of its impulse, then its friction within the ellipse: _cone_split); later by its
exact minimum when the unconstrained one lies in the cone (a sticking contact), else by a
semismooth Newton step on its natural map, safeguarded by a step of a diagonal majoriser
W >= (A + R)_block whose weights satisfy (17), an exact projection on the cone in the metric of
W (Algorithm 5): _cone_block (_cone_block3 for a condim-3 contact, in scalars). As in MuJoCo's
PGS, each sweep visits the objects in a new pseudo-random order (the same sequence at every
call) and starts from Nesterov's extrapolation of the last two sweeps' impulses, projected on
the feasible set, with O'Donoghue and Candes' adaptive restart (Found. Comput. Math. 15, 2015:
the momentum restarts when a sweep's correction opposes the extrapolation); unlike MuJoCo's,
an extrapolation that would raise the cost is not taken (and the momentum restarts). Every
update then decreases the cost, so the sweeps converge to the optimum. On many contacts of one
light body the fixed order and no momentum needed thousands of sweeps (MyoSuite's wine glass
pressed into its table: 2 495 to a residual of 1e-8; now 100 sweeps reach 2e-9).

NEWTON: the same optimum from the primal side. With y = J v' and
    f*(y) = Proj_K^R(R^-1 (v* - y))        (the inverse dynamics of Theorem 4)
the next velocity minimises the smooth convex function
    c(v') = 1/2 (v' - v^)' M (v' - v^) + sum_obj [f*' (v* - y) - 1/2 f*' R f*]
whose gradient is M (v' - v^) - J' f*(J v'); Newton steps with an exact line search. Its
Hessian M + J' D J has M's sparsity when every row lies on one path to the root of the
kinematic tree, and is then factored along the tree without fill-in (tree_rows).

NOSLIP (after either solver, m.opt.noslip_iterations > 0): MuJoCo's post-processing, Gauss-
Seidel sweeps over the friction rows alone with the other impulses fixed and R = 0 on the swept
rows (noslip), so that sticking contacts do not creep.
"""
import math

import numpy as np

from .constraint import (CONTACT_ELLIPTIC, CONTACT_FRICTIONLESS, CONTACT_PYRAMIDAL, EQUALITY,
                         FRICTION_DOF, FRICTION_TENDON, contact_nrows, row_axpy,
                         row_col, row_dot, rows_dot, run_axpy, run_axpy3, run_dot, run_dot3,
                         runs_dot)
from .jit import inlined, jit
from .math import MINVAL, dot_row, dot_rows, dot_rows2, dot_seg, first_bad
from .smooth import factor_m, solve_l_range, solve_m


# ------------------------------------------------------------------------------------------------
# cone projection
# ------------------------------------------------------------------------------------------------
@inlined
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


@inlined
def object_size(d, i):
    """Number of rows of the object starting at row i."""
    if d.efc_type[i] == CONTACT_ELLIPTIC:
        return d.contact_dim[d.efc_id[i]]
    return 1


@inlined
def project_object(d, i, n, z, out, w):
    """Impulse of the object at rows i..i+n-1 nearest to z in the metric diag(w) (Theorem 4):
    equality rows unconstrained, friction loss an interval, limits, frictionless contacts and
    each pyramid edge (a row of its own) a half-line, elliptic contacts Algorithm 5."""
    t = d.efc_type[i]
    if t == CONTACT_ELLIPTIC:
        cone_project(z, w, d.efc_mu[i:i + n], n, out)   # efc_mu[i] (the normal) is unused
    else:
        out[0] = project_scalar(t, d.efc_frictionloss[i], z[0])


@inlined
def project_scalar(t, eta, z):
    """The impulse of a scalar row of type t nearest to z: equality rows unconstrained,
    friction loss within [-eta, eta], and f >= 0 for limits, frictionless contacts and
    pyramid edges."""
    if t == EQUALITY:
        return z
    if t == FRICTION_DOF or t == FRICTION_TENDON:
        return min(max(z, -eta), eta)
    return max(z, 0.0)


# ------------------------------------------------------------------------------------------------
# warm start
# ------------------------------------------------------------------------------------------------
@jit
def clear_warmstart(d):
    """Forget the previous step: no rows, contacts or acceleration to warm-start from."""
    d.warm_nefc[0] = 0
    d.warm_ncon[0] = 0
    d.qacc_warmstart[:] = 0.0


@jit
def save_warmstart(d, f):
    """Remember this step's rows, contacts and impulses for the next step's warm start; a bad
    impulse (NaN, inf, beyond MAXVAL) is never kept: the next step then starts cold."""
    n = d.nefc[0]
    if first_bad(f[:n]) >= 0:
        d.warm_nefc[0] = 0
        d.warm_ncon[0] = 0
        return
    d.warm_nefc[0] = n
    for i in range(n):
        d.warm_type[i] = d.efc_type[i]
        d.warm_id[i] = d.efc_id[i]
        d.efc_warm[i] = f[i]
    d.warm_ncon[0] = d.ncon[0]
    for c in range(d.ncon[0]):
        d.warm_contact_geom[c, 0] = d.contact_geom1[c]
        d.warm_contact_geom[c, 1] = d.contact_geom2[c]
        d.warm_contact_adr[c] = d.contact_efc_address[c]
        for k in range(3):
            d.warm_contact_pos[c, k] = d.contact_pos[c, k]


WARM_WINDOW = 16      # contacts of the previous step searched around the same index
WARM_DISTANCE = 0.01  # a previous contact within this distance (m) is the same contact



@jit
def load_warmstart(d, f):
    """f = the previous step's impulses of the same rows: the same (type, id) for joint,
    tendon and equality rows, the same geom pair at (nearly) the same point for contacts."""
    n = d.nefc[0]
    # the previous step's counts, within the capacities (they persist between calls)
    prev = min(max(d.warm_nefc[0], 0), d.warm_type.shape[0])
    prevcon = min(max(d.warm_ncon[0], 0), d.warm_contact_adr.shape[0])
    j = 0
    for i in range(n):
        f[i] = 0.0
        t = d.efc_type[i]
        if t == CONTACT_ELLIPTIC or t == CONTACT_FRICTIONLESS or t == CONTACT_PYRAMIDAL:
            continue
        if d.efc_hard[i]:
            continue                   # computed from the others, never iterated
        while j < prev and (d.warm_type[j] < t or (d.warm_type[j] == t
                                                    and d.warm_id[j] < d.efc_id[i])):
            j += 1
        if j < prev and d.warm_type[j] == t and d.warm_id[j] == d.efc_id[i]:
            f[i] = d.efc_warm[j]
            j += 1
    for c in range(d.ncon[0]):
        adr = d.contact_efc_address[c]
        if adr < 0:
            continue
        best = -1
        bestd = WARM_DISTANCE
        for q in range(max(0, c - WARM_WINDOW), min(prevcon, c + WARM_WINDOW + 1)):
            if (d.warm_contact_geom[q, 0] != d.contact_geom1[c]
                    or d.warm_contact_geom[q, 1] != d.contact_geom2[c]
                    or d.warm_contact_adr[q] < 0):
                continue
            dist = math.sqrt((d.warm_contact_pos[q, 0] - d.contact_pos[c, 0]) ** 2
                             + (d.warm_contact_pos[q, 1] - d.contact_pos[c, 1]) ** 2
                             + (d.warm_contact_pos[q, 2] - d.contact_pos[c, 2]) ** 2)
            if dist < bestd:
                best, bestd = q, dist
        if best >= 0:
            qa = d.warm_contact_adr[best]
            for k in range(contact_nrows(d, c)):
                if 0 <= qa + k < prev and d.warm_type[qa + k] == d.efc_type[adr + k]:
                    f[adr + k] = d.efc_warm[qa + k]


# ------------------------------------------------------------------------------------------------
# problem set-up
# ------------------------------------------------------------------------------------------------
@jit
def compute_A(m, d, minv):
    """efc_Y = D^-1/2 L^-T J' (M = L' D L, so that A = J M^-1 J' = Y Y') with its runs
    (efc_run), the blocks of A (paper eq. 8) within each object, and with minv efc_MinvJT =
    M^-1 J' (by rows). The solvers never need the rest of A: they keep M^-1 J' f (solver_w) or
    Y' f (solver_y, PGS) instead. PGS without hard rows or noslip needs no M^-1 J' (its
    velocity is L^-1 D^-1/2 Y' f at the end, _velocity_of_half): the blocks are then Y Y' over
    the runs, and the second half of the solves is left out.

    M^-1 J_i' lives on the trees of the row (efc_range), like J_i; the rest of the row of
    efc_MinvJT is never read. Y_i lives on the chains of the row's bodies, as J_i does: L^-T
    carries an entry of a dof only to the dofs of its ancestors. Consecutive rows on the same
    trees (the rows of a contact, the contacts of a pair of bodies, every contact of a
    single-tree model) are solved together, one pass over the factor for all of them
    (_solve_rows)."""
    nefc = d.nefc[0]
    rng = d.efc_range
    # scratch for a group: its dofs x rows, at most nv x nefc
    X = d.solver_X.reshape(d.solver_X.size)
    i = 0
    while i < nefc:
        j = _same_trees_end(rng, i, nefc)
        for r in range(2):
            if rng[i, 2 * r + 1] > 0:
                _solve_rows(m, d, X, i, j, rng[i, 2 * r], rng[i, 2 * r + 1],
                            row_col(d, i, r), minv)
        i = j
    J = d.efc_J
    MinvJT = d.efc_MinvJT
    Y = d.efc_Y
    runs = d.efc_run
    A = d.efc_A
    i = 0
    while i < nefc:
        n = object_size(d, i)
        _object_runs(d, i, n)
        # the block is symmetric: its lower triangle, mirrored
        for a in range(n):
            for b in range(a + 1):
                if minv:
                    v = rows_dot(d, i + a, J, i + b, MinvJT)
                else:
                    v = runs_dot(runs, i + a, Y, i + b)
                A[i + a, b] = v
                A[i + b, a] = v
        i += n


@jit
def _same_trees_end(rng, i, nefc):
    """The end of the run of rows from i whose efc_range equals row i's."""
    j = i + 1
    while (j < nefc and rng[j, 0] == rng[i, 0] and rng[j, 1] == rng[i, 1]
           and rng[j, 2] == rng[i, 2] and rng[j, 3] == rng[i, 3]):
        j += 1
    return j


RUN_GAP = 4      # runs of efc_run fewer dofs apart than this are joined
RUN_MIN = 12     # objects on at most this many dofs take their ranges as runs, unscanned


@jit
def _object_runs(d, i, n):
    """efc_run of the object at rows i..i+n-1: the runs of consecutive dofs, within each of its
    ranges, on which one of its rows of efc_Y is nonzero. Runs fewer than RUN_GAP dofs apart
    are joined, and a range's runs beyond the room of efc_run (6 a range) into its last: a run
    may hold zeros, never miss a nonzero. The ranges themselves when they hold at most RUN_MIN
    dofs (free bodies, small trees: the scan would cost more than it saves)."""
    Y = d.efc_Y
    runs = d.efc_run
    rng = d.efc_range
    room = (runs.shape[1] - 1) // 6
    whole = rng[i, 1] + rng[i, 3] <= RUN_MIN
    cnt = 0
    for r in range(2):
        adr = rng[i, 2 * r]
        num = rng[i, 2 * r + 1]
        col = row_col(d, i, r)
        if whole:
            if num > 0:
                runs[i, 3 * cnt + 1] = col
                runs[i, 3 * cnt + 2] = adr
                runs[i, 3 * cnt + 3] = num
                cnt += 1
            continue
        first = cnt
        k = 0
        while k < num:
            if not _column_nonzero(Y, i, n, col + k):
                k += 1
                continue
            end = k + 1
            while end < num and _column_nonzero(Y, i, n, col + end):
                end += 1
            last = 3 * cnt - 2              # the previous run's (column, dof, length)
            if cnt > first and (adr + k - (runs[i, last + 1] + runs[i, last + 2]) < RUN_GAP
                                or cnt - first == room):
                runs[i, last + 2] = adr + end - runs[i, last + 1]
            else:
                runs[i, 3 * cnt + 1] = col + k
                runs[i, 3 * cnt + 2] = adr + k
                runs[i, 3 * cnt + 3] = end - k
                cnt += 1
            k = end
    runs[i, 0] = cnt
    for a in range(1, n):
        for c in range(3 * cnt + 1):
            runs[i + a, c] = runs[i, c]


@inlined
def _column_nonzero(Y, i, n, c):
    """Whether a row i..i+n-1 of Y is nonzero in column c."""
    for a in range(n):
        if Y[i + a, c] != 0.0:
            return True
    return False


@jit
def _solve_rows(m, d, X, i0, i1, adr, num, col, minv):
    """efc_Y[i0:i1, adr:adr + num] = (D^-1/2 L^-T J')' on one whole tree and, with minv,
    efc_MinvJT there = (M^-1 J')' (smooth.solve_m_range's passes, x <- L^-T x, D^-1 x, L^-1 x,
    applied to the rows i0..i1-1 at once: X holds them dof by dof, so each entry of the factor
    is read once for all the rows). col: the column of the rows that holds dof adr
    (constraint.row_col)."""
    nb = i1 - i0
    X = X[:num * nb].reshape((num, nb))
    parent = m.dof_parentid
    madr = m.dof_Madr
    qLD = d.qLD
    J = d.efc_J
    for k in range(num):
        for r in range(nb):
            X[k, r] = J[i0 + r, col + k]
    # x <- L^-T x (X indexed in place: views of its rows cost more than the arithmetic)
    for k in range(num - 1, -1, -1):
        nonzero = False
        for r in range(nb):
            if X[k, r] != 0.0:
                nonzero = True
                break
        if not nonzero:
            continue
        a = madr[adr + k] + 1
        p = parent[adr + k]
        while p >= 0:
            c = -qLD[a]
            q = p - adr
            for r in range(nb):
                X[q, r] += c * X[k, r]
            a += 1
            p = parent[p]
    # Y = D^-1/2 x, then x <- D^-1 x
    dinv = d.qLDiagInv
    Y = d.efc_Y
    if not minv:
        for k in range(num):
            s = math.sqrt(dinv[adr + k])
            for r in range(nb):
                Y[i0 + r, col + k] = X[k, r] * s
        return
    for k in range(num):
        c = dinv[adr + k]
        s = math.sqrt(c)
        for r in range(nb):
            Y[i0 + r, col + k] = X[k, r] * s
            X[k, r] *= c
    # x <- L^-1 x
    for k in range(num):
        a = madr[adr + k] + 1
        p = parent[adr + k]
        while p >= 0:
            c = -qLD[a]
            q = p - adr
            for r in range(nb):
                X[k, r] += c * X[q, r]
            a += 1
            p = parent[p]
    out = d.efc_MinvJT
    for k in range(num):
        for r in range(nb):
            out[i0 + r, col + k] = X[k, r]


@jit
def impulse_velocity(d, f, w):
    """w = M^-1 J' f: the velocity change that the impulses f cause."""
    w[:] = 0.0
    for i in range(d.nefc[0]):
        if f[i] != 0.0:
            row_axpy(d, i, d.efc_MinvJT, f[i], w)


# ------------------------------------------------------------------------------------------------
# hard equality rows
# ------------------------------------------------------------------------------------------------
HARD_RCOND = 1e-10   # singular values of A_E below this (relative) are redundant constraints


@jit
def count_hard(d):
    """The number of hard equality rows."""
    nh = 0
    for i in range(d.nefc[0]):
        nh += d.efc_hard[i]
    return nh


@jit
def hard_rows(d):
    """Indices of the hard equality rows."""
    rows = np.empty(d.nefc[0], np.int64)
    nh = 0
    for i in range(d.nefc[0]):
        if d.efc_hard[i]:
            rows[nh] = i
            nh += 1
    return rows[:nh]


@jit
def _hard_system(d, hard, Mdense):
    """J_E (dense), M^-1 J_E' and A_E^+ = (J_E M^-1 J_E')^+."""
    nv = Mdense.shape[0]
    JE = np.empty((hard.shape[0], nv))
    for a in range(hard.shape[0]):
        JE[a, :] = d.efc_J[hard[a]]
    MinvJEt = np.linalg.solve(Mdense, np.ascontiguousarray(JE.T))
    AEinv = np.linalg.pinv(JE @ MinvJEt, HARD_RCOND)
    return JE, MinvJEt, AEinv


@jit
def project_hard(d, v, Mdense):
    """v += M^-1 J_E' A_E^+ (v*_E - J_E v): the M-nearest velocity with J_E v = v*_E (the
    paper's hard-constraint v^, section II.C). Returns the number of hard rows."""
    hard = hard_rows(d)
    if hard.shape[0] == 0:
        return 0
    JE, MinvJEt, AEinv = _hard_system(d, hard, Mdense)
    r = np.empty(hard.shape[0])
    for a in range(hard.shape[0]):
        r[a] = d.efc_vstar[hard[a]] - JE[a] @ v
    v += MinvJEt @ (AEinv @ r)
    return hard.shape[0]


@jit
def _densify_row(d, i, rows):
    """Zero rows[i] outside the row's efc_range, so that it can be used as a dense row."""
    keep = np.zeros(rows.shape[1], np.bool_)
    for r in range(2):
        a = d.efc_range[i, 2 * r]
        keep[a:a + d.efc_range[i, 2 * r + 1]] = True
    for k in range(rows.shape[1]):
        if not keep[k]:
            rows[i, k] = 0.0


@jit
def condense_hard(m, d, vhat, Mdense):
    """Eliminate the hard rows for PGS (after compute_A): v^ and efc_b as the paper's hard
    formulas, and for every other row M^-1 J_i' -> M^-1 J_i' - M^-1 J_E' A_E^+ J_E M^-1 J_i'
    (which may reach every dof: the rows' efc_range and efc_run become the whole of v), then
    the blocks of A again. PGS then sweeps with efc_J and these rows (pgs_from). Returns the
    number of hard rows."""
    nefc = d.nefc[0]
    nv = vhat.shape[0]
    hard = hard_rows(d)
    nh = hard.shape[0]
    if nh == 0:
        return 0
    JE, MinvJEt, AEinv = _hard_system(d, hard, Mdense)
    project_hard(d, vhat, Mdense)
    c = np.empty(nh)
    for i in range(nefc):
        _densify_row(d, i, d.efc_MinvJT)
        d.efc_range[i, 0] = 0
        d.efc_range[i, 1] = nv
        d.efc_range[i, 3] = 0
        d.efc_run[i, 0] = 1
        d.efc_run[i, 1] = 0
        d.efc_run[i, 2] = 0
        d.efc_run[i, 3] = nv
        if d.efc_hard[i]:
            continue
        for a in range(nh):
            c[a] = JE[a] @ d.efc_MinvJT[i, :nv]
        d.efc_MinvJT[i, :nv] -= MinvJEt @ (AEinv @ c)
        d.efc_b[i] = row_dot(d, i, d.efc_J, vhat) - d.efc_vstar[i]
    i = 0
    while i < nefc:
        n = object_size(d, i)
        for a in range(n):
            for b in range(n):
                d.efc_A[i + a, b] = row_dot(d, i + a, d.efc_J, d.efc_MinvJT[i + b])
        i += n
    return nh


@jit
def hard_impulses(d, f, vnext, vhat, Mdense):
    """Impulses of the hard rows from the force balance M (v' - v^) = J_s' f_s + J_E' f_E:
    f_E = A_E^+ J_E M^-1 (M (v' - v^) - J_s' f_s), v^ without the hard rows."""
    hard = hard_rows(d)
    nh = hard.shape[0]
    if nh == 0:
        return
    nv = vhat.shape[0]
    JE, MinvJEt, AEinv = _hard_system(d, hard, Mdense)
    q = np.zeros(nv)
    for i in range(d.nefc[0]):
        if not d.efc_hard[i] and f[i] != 0.0:
            q += f[i] * d.efc_J[i, :nv]
    t = vnext - vhat - np.linalg.solve(Mdense, q)     # = M^-1 J_E' f_E
    fE = AEinv @ (JE @ t)
    for a in range(nh):
        f[hard[a]] = fE[a]


@jit
def primal_cost(d, vnext, vhat, Mdense, f):
    """c(v') of the module docstring; writes f = f*(J v')."""
    nv = vnext.shape[0]
    dv = d.newton_vec[2]               # (scratch of newton's that is free here)
    for a in range(nv):
        dv[a] = vnext[a] - vhat[a]
    cost = 0.0
    for a in range(nv):
        cost += 0.5 * dv[a] * dot_row(Mdense, a, dv, 0, nv)
    return cost + rows_cost(d, vnext, f)


@jit
def rows_cost(d, vnext, f):
    """The constraint rows' part of c(v'), sum_obj [f*' (v* - y) - 1/2 f*' R f*]; writes
    f = f*(J v')."""
    nefc = d.nefc[0]
    cost = 0.0
    z, out = d.solver_vec[0, :6], d.solver_vec[1, :6]
    i = 0
    while i < nefc:
        if d.efc_hard[i]:
            f[i] = 0.0                 # an exact constraint of the Newton iteration instead
            i += 1
            continue
        n = object_size(d, i)
        for k in range(n):
            z[k] = (d.efc_vstar[i + k] - row_dot(d, i + k, d.efc_J, vnext)) / d.efc_R[i + k]
        project_object(d, i, n, z, out, d.efc_R[i:i + n])
        for k in range(n):
            f[i + k] = out[k]
            # f' (v* - y) - 1/2 f' R f, with v* - y = R z
            cost += out[k] * d.efc_R[i + k] * z[k] - 0.5 * d.efc_R[i + k] * out[k] * out[k]
        i += n
    return cost


@jit
def dual_cost(d, f):
    """1/2 f' (A + R) f + f' b of the impulse problem (11) (after compute_A), with
    f' A f = |Y' f|^2, or (J' f)' M^-1 J' f once condense_hard has condensed M^-1 J' (Y is
    not condensed)."""
    nefc = d.nefc[0]
    c = 0.0
    if count_hard(d) > 0:
        w = d.solver_v
        impulse_velocity(d, f, w)
        for i in range(nefc):
            c += f[i] * (0.5 * row_dot(d, i, d.efc_J, w) + 0.5 * d.efc_R[i] * f[i] + d.efc_b[i])
        return c
    y = d.solver_y           # (pgs_from's y: after an extrapolation it is the new f's)
    _run_velocity(d.efc_run, nefc, f, d.efc_Y, y)
    for k in range(y.shape[0]):
        c += 0.5 * y[k] * y[k]
    for i in range(nefc):
        c += f[i] * (0.5 * d.efc_R[i] * f[i] + d.efc_b[i])
    return c


# ------------------------------------------------------------------------------------------------
# projected Gauss-Seidel
# ------------------------------------------------------------------------------------------------
# The row products and the contacts' split and block steps are compiled into the sweeps (a call
# per row or contact, with the Data passed, costs about as much as the work), and the arrays they
# read are taken from the Data once per sweep or contact: compiled code reads an array of d
# again after every write to any array, as it cannot tell that they do not overlap.


@jit
def pgs(m, d, f, iterations, tolerance):
    """pgs_from the impulses f: (iterations used, residual); the impulse velocity
    M^-1 J' f is in solver_w on return."""
    return pgs_from(m, d, f, iterations, tolerance, dual_cost(d, f))


@jit
def pgs_from(m, d, f, iterations, tolerance, cost):
    """Generalised projected Gauss-Seidel on (11) from the impulses f, whose dual cost is cost;
    returns (iterations used, residual), and M^-1 J' f of the returned impulses in solver_w.

    The gradient of a row, ((A + R) f + b)_i = Y_i (Y' f) + R_i f_i + b_i with A = Y Y'
    (compute_A), is computed from y = Y' f, kept current as impulses change: a sweep costs the
    nonzeros of Y (the chains of the rows' bodies, efc_run), not the square of the number of
    rows, nor the dofs of their trees as M^-1 J' f would. After condense_hard the rows are J
    and the condensed M^-1 J' instead, and y is M^-1 J' f.

    Each sweep starts from Nesterov's extrapolation of the impulses and visits the objects in
    a shuffled order (module docstring); after an extrapolation y is computed again from f.

    The sweeps stop when one lowers the cost by less than tolerance relative to the cost
    (tolerance 0 runs every iteration). MuJoCo's PGS divides the decrease by meaninertia * nv
    instead: on go1 standing and the humanoid lying that stops later (17 and 24 sweeps a step
    on average against 10 and 15). The residual returned is the distance to the optimum: the
    largest natural residual of an object at the returned impulses (natural_residual)
    relative to the largest impulse."""
    nefc = d.nefc[0]
    # the rows' arrays as locals: the sweeps read them for every row
    efc_b = d.efc_b
    efc_R = d.efc_R
    efc_A = d.efc_A
    efc_mu = d.efc_mu
    efc_type = d.efc_type
    efc_hard = d.efc_hard
    efc_frictionloss = d.efc_frictionloss
    runs = d.efc_run
    # gradients from rows_g . y, steps y += delta rows_y
    condensed = count_hard(d) > 0
    if condensed:
        rows_g, rows_y, y = d.efc_J, d.efc_MinvJT, d.solver_w
    else:
        rows_g, rows_y, y = d.efc_Y, d.efc_Y, d.solver_y
    # scratch of the contact blocks (at most 6 rows)
    vec = d.solver_vec
    z, out, wt, g, gold = vec[0, :6], vec[1, :6], vec[2, :6], vec[3, :6], vec[4, :6]
    old, x, c, xn, zh = vec[5, :6], vec[6, :6], vec[7, :6], vec[8, :6], vec[9]
    P, S = d.solver_mat[:6, :6], d.solver_mat[6:]
    # Cholesky factors of the contact blocks H = (A + R)_block, rows i..i+n-1 of L
    L = d.solver_L
    d.solver_lam[:nefc] = 0.0
    i = 0
    while i < nefc:
        if efc_type[i] != CONTACT_ELLIPTIC or efc_hard[i]:
            i += 1
            continue
        n = d.contact_dim[d.efc_id[i]]
        for a in range(n):
            for b in range(n):
                L[i + a, b] = efc_A[i + a, b]
            L[i + a, a] += efc_R[i + a]
        if not _cholesky_small(L[i:i + n], n):
            L[i, 0] = 0.0                  # not positive definite: no unconstrained steps
        if n > 3:
            _friction_eigen(d, i, n - 1, P)
        i += n
    # the objects' first rows, in the order of a sweep (hard rows are eliminated by
    # condense_hard: their impulses stay 0 here)
    order = d.solver_order
    nobj = 0
    i = 0
    while i < nefc:
        if not efc_hard[i]:
            order[nobj] = i
            nobj += 1
        i += object_size(d, i)
    fprev, fmom = d.solver_fprev, d.solver_fmom
    momentum = 0                      # sweeps since the momentum last restarted
    seed = SHUFFLE_SEED
    # y of f (again every 16 sweeps: incremental updates accumulate rounding)
    _run_velocity(runs, nefc, f, rows_y, y)
    it = 0
    for it in range(1, iterations + 1):
        # Nesterov's extrapolation f + beta (f - f_prev), projected on the feasible set
        beta = (momentum - 1.0) / (momentum + 2.0)
        extrapolated = it > 1 and beta > 0.0
        if extrapolated:
            for k in range(nefc):
                fk = f[k]
                f[k] += beta * (fk - fprev[k])
                fprev[k] = fk
            _project_all(d, order, nobj, f, z, out)
            moved = dual_cost(d, f)              # (and y = Y' f when not condensed)
            if moved <= cost:
                cost = moved
                fmom[:nefc] = f[:nefc]
                if condensed:
                    _run_velocity(runs, nefc, f, rows_y, y)
            else:
                # kept only when it lowers the cost: else back, and the momentum restarts
                f[:nefc] = fprev[:nefc]
                momentum = 0
                extrapolated = False
                _run_velocity(runs, nefc, f, rows_y, y)
        else:
            fprev[:nefc] = f[:nefc]
            if it % 16 == 1 and it > 1:
                _run_velocity(runs, nefc, f, rows_y, y)
        seed = _shuffle(order, nobj, seed)
        improvement = 0.0
        for o in range(nobj):
            i = order[o]
            t = efc_type[i]
            if t != CONTACT_ELLIPTIC:
                # a scalar row: exact minimisation along it, then projection
                gi = efc_b[i] + efc_R[i] * f[i] + run_dot(runs, i, rows_g, y)
                h = max(efc_A[i, 0] + efc_R[i], MINVAL)
                fi = project_scalar(t, efc_frictionloss[i], f[i] - gi / h)
                delta = fi - f[i]
                if delta != 0.0:
                    f[i] = fi
                    run_axpy(runs, i, rows_y, delta, y)
                    improvement -= delta * (gi + 0.5 * h * delta)
                continue
            n = d.contact_dim[d.efc_id[i]]
            if n == 3:
                # a condim-3 contact (nearly all of them) with its block, gradient and impulses
                # in scalars: the same steps, sums and order as the general code below.
                # (Scratch arrays cost more than the arithmetic: the compiler must assume that
                # a store to any array changes the others, and reloads them. The same code as a
                # helper taking these nine arrays ran 1.6 times as long, numba's reference
                # counting of its array arguments it seems: it is written out here.)
                f0 = f[i]
                f1 = f[i + 1]
                f2 = f[i + 2]
                g0, g1, g2 = run_dot3(runs, i, rows_g, y)
                g0 = efc_b[i] + efc_R[i] * f0 + g0
                g1 = efc_b[i + 1] + efc_R[i + 1] * f1 + g1
                g2 = efc_b[i + 2] + efc_R[i + 2] * f2 + g2
                if it <= SPLIT_SWEEPS and (f0 > MINVAL or g0 < 0.0):
                    n0, n1, n2 = _contact3_split(efc_A, efc_R, efc_mu, i, f0, f1, f2, g0, g1, g2)
                else:
                    taken, n0, n1, n2 = _free_block_step3(efc_mu, L, i, f0, f1, f2, g0, g1, g2)
                    if not taken:
                        # a contact that slides or separates: the block's Newton step
                        n0, n1, n2 = _cone_block3(efc_A, efc_R, efc_mu, i, f0, f1, f2,
                                                  g0, g1, g2)
                e0 = n0 - f0
                e1 = n1 - f1
                e2 = n2 - f2
                if e0 != 0.0 or e1 != 0.0 or e2 != 0.0:
                    f[i] = n0
                    f[i + 1] = n1
                    f[i + 2] = n2
                    improvement -= _decrease3(efc_A, efc_R, i, e0, e1, e2, g0, g1, g2)
                    run_axpy3(runs, i, rows_y, e0, e1, e2, y)
                continue
            # gradient of the block: (A + R) f + b
            _rows_dot(runs, i, n, rows_g, y, g)
            for k in range(n):
                g[k] = efc_b[i + k] + efc_R[i + k] * f[i + k] + g[k]
                gold[k] = g[k]
                old[k] = f[i + k]
            # (the steps of other contacts are kernels of their own: compiled into pgs_from
            # with the condim-3 code above, they made its compile time half as long again)
            if it <= SPLIT_SWEEPS and (f[i] > MINVAL or g[0] < 0.0):
                _cone_split(d, i, n, f, g, z, x, c, S)
            elif not _free_block_step(d, i, n, f, g, L, z):
                # later sweeps; and a contact without normal impulse that the normal alone
                # would not push (g_0 >= 0), which the split update would leave at zero
                # although friction may make pushing pay: the exact block step decides (it
                # returns at once when zero is the block's optimum)
                _cone_block(d, i, n, f, g, z, out, wt, x, c, xn, zh, P, S)
            improvement = _commit_block(runs, efc_A, efc_R, rows_y, i, n, f, old, gold, y,
                                        improvement)
        cost -= improvement
        # O'Donoghue and Candes' restart: when the sweep undid part of the extrapolation
        # (without one, fmom = fprev: nothing to undo)
        if extrapolated and _opposed(f, fmom, fprev, nefc):
            momentum = 0
        else:
            momentum += 1
        if tolerance > 0.0 and improvement < tolerance * max(abs(cost), MINVAL):
            break
    # the residual at the returned impulses
    emax = 0.0
    fmax = 0.0
    i = 0
    while i < nefc:
        if efc_hard[i]:
            i += 1
            continue
        n = object_size(d, i)
        _rows_dot(runs, i, n, rows_g, y, g)
        for k in range(n):
            g[k] = efc_b[i + k] + efc_R[i + k] * f[i + k] + g[k]
            fmax = max(fmax, abs(f[i + k]))
        emax = max(emax, natural_residual(d, i, n, f, g, z, out, wt))
        i += n
    if not condensed:
        _velocity_of_half(m, d, y, d.solver_w)
    return it, emax / max(fmax, MINVAL)


SHUFFLE_SEED = 12345


@inlined
def _shuffle(order, n, seed):
    """Fisher-Yates shuffle of order[:n] drawing from the Park-Miller generator (exact in
    int64: seed < 2^31); returns the generator's state."""
    for k in range(n - 1, 0, -1):
        seed = seed * 48271 % 2147483647
        j = seed % (k + 1)
        order[k], order[j] = order[j], order[k]
    return seed


@jit
def _project_all(d, order, nobj, f, z, out):
    """Every object's impulses onto its feasible set (project_object in the metric R)."""
    for o in range(nobj):
        i = order[o]
        n = object_size(d, i)
        for k in range(n):
            z[k] = f[i + k]
        project_object(d, i, n, z, out, d.efc_R[i:i + n])
        for k in range(n):
            f[i + k] = out[k]


@inlined
def _opposed(f, fmom, fprev, n):
    """True when the sweep's correction f - fmom opposes the extrapolation fmom - fprev."""
    s = 0.0
    for k in range(n):
        s += (f[k] - fmom[k]) * (fmom[k] - fprev[k])
    return s < 0.0


@jit
def _run_velocity(runs, nefc, f, rows, y):
    """y = rows' f over the rows' runs (pgs_from's Y' f)."""
    y[:] = 0.0
    for i in range(nefc):
        if f[i] != 0.0:
            run_axpy(runs, i, rows, f[i], y)


@jit
def _velocity_of_half(m, d, y, w):
    """w = M^-1 J' f = L^-1 D^-1/2 y from y = Y' f (compute_A's passes after Y)."""
    dinv = d.qLDiagInv
    for k in range(w.shape[0]):
        w[k] = y[k] * math.sqrt(dinv[k])
    solve_l_range(m, d.qLD, w, 0, w.shape[0])


@inlined
def _rows_dot(runs, i, n, rows, x, out):
    """out[k] = rows[i + k] . x for k < n, the n rows of an object (run_dot; a condim-3
    contact's in one pass, run_dot3)."""
    if n == 3:
        out[0], out[1], out[2] = run_dot3(runs, i, rows, x)
        return
    for k in range(n):
        out[k] = run_dot(runs, i + k, rows, x)


@inlined
def _commit_block(runs, efc_A, efc_R, rows, i, n, f, old, gold, y, improvement):
    """After the contact at rows i..i+n-1 moved from the impulses old (gradient gold) to f:
    y += rows' (f - old) over its rows (pgs_from's y), and improvement plus its cost decrease
    -(gold' e + 1/2 e' H e), e = f - old, H = (A + R)_block, returned."""
    for k in range(n):
        delta = f[i + k] - old[k]
        if delta != 0.0:
            run_axpy(runs, i + k, rows, delta, y)
            hd = efc_R[i + k] * delta
            for j in range(n):
                hd += efc_A[i + k, j] * (f[i + j] - old[j])
            improvement -= delta * (gold[k] + 0.5 * hd)
    return improvement


@inlined
def _decrease3(efc_A, efc_R, i, e0, e1, e2, g0, g1, g2):
    """The cost decrease -(g' e + 1/2 e' H e) of the step e of a condim-3 contact from where its
    gradient is g, H = (A + R)_block (the terms of _commit_block)."""
    hd0 = efc_R[i] * e0 + efc_A[i, 0] * e0 + efc_A[i, 1] * e1 + efc_A[i, 2] * e2
    hd1 = efc_R[i + 1] * e1 + efc_A[i + 1, 0] * e0 + efc_A[i + 1, 1] * e1 + efc_A[i + 1, 2] * e2
    hd2 = efc_R[i + 2] * e2 + efc_A[i + 2, 0] * e0 + efc_A[i + 2, 1] * e1 + efc_A[i + 2, 2] * e2
    return (e0 * (g0 + 0.5 * hd0) + e1 * (g1 + 0.5 * hd1)) + e2 * (g2 + 0.5 * hd2)


@jit
def natural_residual(d, i, n, f, g, z, out, wt):
    """max_k |e_k| of e = f - Proj^W(f - W^-1 g) for the object at rows i..i+n-1, g its
    gradient: the step of a projected gradient in the metric W, zero exactly at the object's
    optimum with the other impulses fixed. W = diag(A + R) for a scalar row (the exact
    coordinate step); alpha R for a cone, alpha = max_k (A_kk + R_k) / R_k, which keeps the
    structure (17) so that the projection is exact (Algorithm 5)."""
    if n == 1:
        wt[0] = max(d.efc_A[i, 0] + d.efc_R[i], MINVAL)
    else:
        alpha = 0.0
        for k in range(n):
            alpha = max(alpha, (d.efc_A[i + k, k] + d.efc_R[i + k]) / d.efc_R[i + k])
        for k in range(n):
            wt[k] = alpha * d.efc_R[i + k]
    for k in range(n):
        z[k] = f[i + k] - g[k] / wt[k]
    project_object(d, i, n, z, out, wt)
    e = 0.0
    for k in range(n):
        e = max(e, abs(out[k] - f[i + k]))
    return e


@jit
def _cone_split(d, i, n, f, g, z, xf, c, H):
    """A contact visited in two parts, as MuJoCo's PGS does: the best multiple of the current
    impulse (or the normal impulse alone when it is zero), then the friction impulses alone
    within the ellipse ||f_j / mu_j|| <= f_0.
    Each part is minimised exactly, so the cost decreases, and the impulses of early sweeps
    stay bounded by the normal one (an exact block solve may first raise the normal impulse
    to afford more friction, which makes the first sweeps overshoot).
    g is the block's gradient on entry (scratch on return); z, xf, c (6) and H (6 x 7) are
    scratch. (A condim-3 contact: _contact3_split.)"""
    efc_A = d.efc_A
    efc_R = d.efc_R
    if f[i] <= MINVAL:
        # normal update with the friction cleared
        h = efc_A[i, 0] + efc_R[i]
        for a in range(n):
            z[a] = -f[i + a]
        z[0] += max(f[i] - g[0] / h, 0.0)
    else:
        # ray update: the best multiple of the current impulse, normal kept >= 0
        num = 0.0
        den = 0.0
        for a in range(n):
            num += f[i + a] * g[a]
            hv = efc_R[i + a] * f[i + a]
            for b in range(n):
                hv += efc_A[i + a, b] * f[i + b]
            den += f[i + a] * hv
        x = -num / den if den > MINVAL else 0.0
        x = max(x, -1.0)
        for a in range(n):
            z[a] = x * f[i + a]
    for a in range(n):
        delta = z[a]
        if delta != 0.0:
            for j in range(n):
                g[j] += (efc_A[i + j, a] + (efc_R[i + a] if j == a else 0.0)) * delta
            f[i + a] += delta
    fn = f[i]
    # friction: min 1/2 x' H x + c' x over sum (x_j / mu_j)^2 <= fn^2, H = (A + R) friction
    m = n - 1
    for a in range(m):
        hx = 0.0
        for b in range(m):
            hab = efc_A[i + 1 + a, 1 + b] + (efc_R[i + 1 + a] if a == b else 0.0)
            hx += hab * f[i + 1 + b]
        c[a] = g[1 + a] - hx
    if m == 2 or not _friction_ellipse_eig(d, i, m, c, fn, xf, z):
        _friction_ellipse(d, i, m, c, fn, True, H, xf, z)
    for a in range(m):
        f[i + 1 + a] = xf[a]


@jit
def _friction_eigen(d, i, m, S):
    """solver_eig of the contact at row i with m > 2 friction rows: S = diag(mu) H diag(mu)
    = Q Theta Q' with H = (A + R) over the friction rows, by cyclic Jacobi rotations
    (symmetric, at most 5 x 5: a few sweeps to the rounding level, each eigenvalue to
    relative accuracy even where the mu of torsional and rolling friction are orders of
    magnitude below the sliding ones). H is fixed for a whole solve, so this is done once
    per contact per step; _friction_ellipse_eig then solves each visit's ellipse problem
    without a factorization. S (6 x 6) is scratch."""
    E = d.solver_eig
    mu = d.efc_mu
    efc_A = d.efc_A
    efc_R = d.efc_R
    for a in range(m):
        for b in range(m):
            h = efc_A[i + 1 + a, 1 + b] + (efc_R[i + 1 + a] if a == b else 0.0)
            S[a, b] = mu[i + 1 + a] * h * mu[i + 1 + b]
            E[i + 1 + a, b] = 1.0 if a == b else 0.0
    for _ in range(JACOBI_SWEEPS):
        rotated = False
        for p in range(m - 1):
            for q in range(p + 1, m):
                # an entry small against its own diagonal (not the largest one: S is graded)
                if S[p, q] * S[p, q] <= JACOBI_TOL * abs(S[p, p] * S[q, q]):
                    continue
                rotated = True
                # the rotation J = [[c, s], [-s, c]] on (p, q) with (J' S J)_pq = 0
                theta = (S[q, q] - S[p, p]) / (2.0 * S[p, q])
                t = 1.0 / (abs(theta) + math.sqrt(theta * theta + 1.0))
                if abs(theta) > 1e150:
                    t = 0.5 / abs(theta)
                if theta < 0.0:
                    t = -t
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(m):
                    skp = S[k, p]
                    skq = S[k, q]
                    S[k, p] = c * skp - s * skq
                    S[k, q] = s * skp + c * skq
                for k in range(m):
                    spk = S[p, k]
                    sqk = S[q, k]
                    S[p, k] = c * spk - s * sqk
                    S[q, k] = s * spk + c * sqk
                for k in range(m):
                    vkp = E[i + 1 + k, p]
                    vkq = E[i + 1 + k, q]
                    E[i + 1 + k, p] = c * vkp - s * vkq
                    E[i + 1 + k, q] = s * vkp + c * vkq
        if not rotated:
            break
    for a in range(m):
        E[i + 1 + a, 6] = S[a, a]


JACOBI_SWEEPS = 30   # cyclic Jacobi sweeps at most (_friction_eigen; 5 x 5 takes 2-3)
JACOBI_TOL = 1e-32   # S_pq^2 <= JACOBI_TOL |S_pp S_qq|: no rotation of (p, q)


@inlined
def _ellipse_converged(lam, q, fn):
    """The stopping test of the ellipse multiplier's Newton steps (_friction_ellipse,
    _friction_ellipse_eig) at q = x(lam)' D x(lam): no friction possible (fn = 0), the
    unconstrained optimum inside the ellipse, or q^1/2 = fn to 1e-10."""
    return fn == 0.0 or (lam == 0.0 and q <= fn * fn) or abs(math.sqrt(q) - fn) <= 1e-10 * fn


@inlined
def _ellipse_step(lam, q, dq, fn, warm):
    """The next multiplier: a Newton step on psi(lam) = q^-1/2 - 1/fn (dq = dq/dlam < 0), at
    least half the current one; from lam = 0, the warm start when the step falls short of it."""
    step = lam + 2.0 * q * (1.0 - math.sqrt(q) / fn) / dq
    return warm if lam == 0.0 and warm > step else max(step, 0.5 * lam)


@inlined
def _friction_ellipse_eig(d, i, m, c, fn, xf, z):
    """_friction_ellipse of PGS (H = (A + R) over the friction rows) from the eigenvectors of
    the contact's scaled friction block (_friction_eigen): with M = diag(mu) (so that
    D = diag(1 / mu^2) = M^-2) and M H M = Q Theta Q',
        x(lam) = -(H + lam D)^-1 c = -M Q (Theta + lam I)^-1 e,   e = Q' M c,
        q(lam) = x' D x = sum_k e_k^2 / (theta_k + lam)^2,
    so each Newton step on the secular equation costs O(m) instead of a Cholesky
    factorization. The same steps as _friction_ellipse otherwise (the multiplier warm-started
    from solver_lam). Returns False, xf untouched, when the block is not positive definite
    (the caller then uses _friction_ellipse). z (6) is scratch: e."""
    E = d.solver_eig
    mu = d.efc_mu
    for k in range(m):
        if not E[i + 1 + k, 6] > 0.0:
            return False
    for k in range(m):
        s = 0.0
        for a in range(m):
            s += E[i + 1 + a, k] * (mu[i + 1 + a] * c[a])
        z[k] = s
    warm = d.solver_lam[i]
    lam = 0.0
    for _ in range(30):
        q = 0.0
        dq = 0.0
        for k in range(m):
            w = 1.0 / (E[i + 1 + k, 6] + lam)
            t = z[k] * w
            q += t * t
            dq -= 2.0 * t * t * w
        if _ellipse_converged(lam, q, fn) or dq >= 0.0:
            break
        lam = _ellipse_step(lam, q, dq, fn, warm)
    d.solver_lam[i] = lam
    if fn == 0.0:
        for a in range(m):
            xf[a] = 0.0
        return True
    q = 0.0
    for a in range(m):
        s = 0.0
        for k in range(m):
            s += E[i + 1 + a, k] * (z[k] / (E[i + 1 + k, 6] + lam))
        xf[a] = -mu[i + 1 + a] * s
        q += s * s                     # (x_a / mu_a)^2
    # guard against an unconverged multiplier: scale into the ellipse
    q = math.sqrt(q)
    if q > fn:
        for a in range(m):
            xf[a] *= fn / q
    return True


@inlined
def _block3(efc_A, efc_R, i):
    """The block of a condim-3 contact at row i in scalars: A's nine entries by rows, then R's
    three."""
    return (efc_A[i, 0], efc_A[i, 1], efc_A[i, 2],
            efc_A[i + 1, 0], efc_A[i + 1, 1], efc_A[i + 1, 2],
            efc_A[i + 2, 0], efc_A[i + 2, 1], efc_A[i + 2, 2],
            efc_R[i], efc_R[i + 1], efc_R[i + 2])


@inlined
def _contact3_split(efc_A, efc_R, efc_mu, i, f0, f1, f2, g0, g1, g2):
    """_cone_split of a condim-3 contact in scalars (as pgs_from visits it): its impulses f and
    gradient g in, its new impulses out."""
    a00, a01, a02, a10, a11, a12, a20, a21, a22, r0, r1, r2 = _block3(efc_A, efc_R, i)
    if f0 <= MINVAL:
        # normal update with the friction cleared
        z0 = -f0 + max(f0 - g0 / (a00 + r0), 0.0)
        z1 = -f1
        z2 = -f2
    else:
        # ray update: the best multiple of the current impulse, normal kept >= 0
        num = f0 * g0 + f1 * g1 + f2 * g2
        den = (f0 * (r0 * f0 + a00 * f0 + a01 * f1 + a02 * f2)
               + f1 * (r1 * f1 + a10 * f0 + a11 * f1 + a12 * f2)
               + f2 * (r2 * f2 + a20 * f0 + a21 * f1 + a22 * f2))
        x = max(-num / den if den > MINVAL else 0.0, -1.0)
        z0 = x * f0
        z1 = x * f1
        z2 = x * f2
    # the friction rows' gradient after the step z, then c = g - H f over them
    g1 += a10 * z0
    g1 += (a11 + r1) * z1
    g1 += a12 * z2
    g2 += a20 * z0
    g2 += a21 * z1
    g2 += (a22 + r2) * z2
    f0 += z0
    f1 += z1
    f2 += z2
    h11 = a11 + r1
    h22 = a22 + r2
    mu1 = efc_mu[i + 1]
    mu2 = efc_mu[i + 2]
    x1, x2 = _ellipse2(h11, a12, h22, 1.0 / (mu1 * mu1), 1.0 / (mu2 * mu2),
                       g1 - (h11 * f1 + a12 * f2), g2 - (a21 * f1 + h22 * f2), f0)
    return f0, x1, x2


@inlined
def _friction_ellipse(d, i, m, c, fn, with_r, H, xf, z):
    """xf = argmin 1/2 x' H x + c' x over sum (x_j / mu_j)^2 <= fn^2: the m friction impulses of
    the elliptic contact at row i with its normal impulse fn fixed. H = (A + R) over the friction
    rows, or with_r False (noslip) A alone, its diagonal kept >= NOSLIP_MINDIAG (MuJoCo's).
    H (6 x 7), z (6) are scratch."""
    efc_A = d.efc_A
    efc_R = d.efc_R
    efc_mu = d.efc_mu
    # x(lam) = -(H + lam D)^-1 c, D = diag(1 / mu_j^2), with the multiplier lam >= 0 of the
    # ellipse: Newton on psi(lam) = q^-1/2 - 1/fn, q = x' D x (More and Sorensen's form of the
    # secular equation, nearly linear in lam: a few steps even for the flat ellipses of
    # torsional and rolling friction, whose mu are orders of magnitude apart)
    if m == 2:
        _friction_ellipse2(d, i, c, fn, with_r, xf)
        return
    # PGS starts the multiplier where this contact's last visit left it (solver_lam) when the
    # unconstrained optimum is outside the ellipse and the first step falls short of it: the
    # multiplier changes little from sweep to sweep (5.3 iterations a visit became 3.5 on
    # the go1's condim-6 feet)
    warm = d.solver_lam[i] if with_r else 0.0
    lam = 0.0
    for _ in range(30):
        for a in range(m):
            mu2 = efc_mu[i + 1 + a] ** 2
            for b in range(m):
                H[a, b] = efc_A[i + 1 + a, 1 + b]
            if with_r:
                H[a, a] += efc_R[i + 1 + a] + lam / mu2
            else:
                H[a, a] = max(H[a, a], NOSLIP_MINDIAG) + lam / mu2
            xf[a] = -c[a]
        if not _cholesky_small(H, m):
            break
        _cholesky_solve(H, m, xf)
        q = 0.0
        for a in range(m):
            q += (xf[a] / efc_mu[i + 1 + a]) ** 2
        if _ellipse_converged(lam, q, fn):
            break
        # dq/dlam = -2 (D x)' (H + lam D)^-1 (D x)
        for a in range(m):
            z[a] = xf[a] / efc_mu[i + 1 + a] ** 2
        _cholesky_solve(H, m, z)
        dq = 0.0
        for a in range(m):
            dq -= 2.0 * xf[a] / efc_mu[i + 1 + a] ** 2 * z[a]
        if dq >= 0.0:
            break
        lam = _ellipse_step(lam, q, dq, fn, warm)
    if with_r:
        d.solver_lam[i] = lam
    if fn == 0.0:
        for a in range(m):
            xf[a] = 0.0
    else:
        # guard against an unconverged multiplier: scale into the ellipse
        q = 0.0
        for a in range(m):
            q += (xf[a] / efc_mu[i + 1 + a]) ** 2
        q = math.sqrt(q)
        if q > fn:
            for a in range(m):
                xf[a] *= fn / q


@inlined
def _friction_ellipse2(d, i, c, fn, with_r, xf):
    """_friction_ellipse for the two sliding rows of a condim-3 contact (_ellipse2)."""
    efc_A = d.efc_A
    efc_R = d.efc_R
    mu1 = d.efc_mu[i + 1]
    mu2 = d.efc_mu[i + 2]
    h11 = efc_A[i + 1, 1]
    h22 = efc_A[i + 2, 2]
    if with_r:
        h11 += efc_R[i + 1]
        h22 += efc_R[i + 2]
    else:
        h11 = max(h11, NOSLIP_MINDIAG)
        h22 = max(h22, NOSLIP_MINDIAG)
    xf[0], xf[1] = _ellipse2(h11, efc_A[i + 1, 2], h22, 1.0 / (mu1 * mu1), 1.0 / (mu2 * mu2),
                             c[0], c[1], fn)


@inlined
def _ellipse2(h11, h12, h22, d1, d2, c1, c2, fn):
    """argmin 1/2 x' H x + c' x over d1 x1^2 + d2 x2^2 <= fn^2 for H = [[h11, h12], [h12, h22]]:
    the Newton steps of _friction_ellipse on the secular equation, with (H + lam D)^-1 in
    closed form (the inverse of a 2 x 2). Returns (x1, x2)."""
    # lam = 0 first, as the loop's first pass: a sticking contact's friction is the
    # unconstrained optimum, inside the ellipse, and the loop is then not entered (taking this
    # case out of the loop made PGS's split sweeps a fifth cheaper; the same arithmetic)
    a11 = h11 + 0.0 * d1
    a22 = h22 + 0.0 * d2
    det = a11 * a22 - h12 * h12
    if fn > 0.0 and a11 > 0.0 and det > 0.0:
        inv = 1.0 / det
        x1 = (h12 * c2 - a22 * c1) * inv
        x2 = (h12 * c1 - a11 * c2) * inv
        if x1 * x1 * d1 + x2 * x2 * d2 <= fn * fn:
            return x1, x2
    x1 = -c1
    x2 = -c2
    lam = 0.0
    for _ in range(30):
        a11 = h11 + lam * d1
        a22 = h22 + lam * d2
        det = a11 * a22 - h12 * h12
        if not (a11 > 0.0 and det > 0.0):
            x1 = -c1                       # not positive definite (as _friction_ellipse)
            x2 = -c2
            break
        inv = 1.0 / det
        x1 = (h12 * c2 - a22 * c1) * inv
        x2 = (h12 * c1 - a11 * c2) * inv
        q = x1 * x1 * d1 + x2 * x2 * d2
        if fn == 0.0 or (lam == 0.0 and q <= fn * fn):
            break                          # no friction possible, or the unconstrained optimum
        sq = math.sqrt(q)
        if abs(sq - fn) <= 1e-10 * fn:
            break
        # dq/dlam = -2 (D x)' (H + lam D)^-1 (D x)
        u1 = x1 * d1
        u2 = x2 * d2
        dq = -2.0 * (u1 * (a22 * u1 - h12 * u2) + u2 * (a11 * u2 - h12 * u1)) * inv
        if dq >= 0.0:
            break
        lam = max(lam + 2.0 * q * (1.0 - sq / fn) / dq, 0.5 * lam)
    if fn == 0.0:
        return 0.0, 0.0
    # guard against an unconverged multiplier: scale into the ellipse
    q = math.sqrt(x1 * x1 * d1 + x2 * x2 * d2)
    if q > fn:
        return x1 * (fn / q), x2 * (fn / q)
    return x1, x2


SPLIT_SWEEPS = 10   # sweeps that update contacts in two parts before exact block solves


@jit
def _free_block_step(d, i, n, f, g, L, z):
    """The block's unconstrained minimum x - H^-1 g (H = L L'), taken if it lies in the cone:
    it is then the block's constrained minimum too. False, f unchanged, otherwise (the
    contacts that slide or separate), or when the block has no factor. (A condim-3 contact:
    _free_block_step3.)"""
    efc_mu = d.efc_mu
    if L[i, 0] <= 0.0:
        return False
    for a in range(n):
        z[a] = -g[a]
    _cholesky_solve(L[i:i + n], n, z)
    fn = f[i] + z[0]
    if fn < 0.0:
        return False
    q = 0.0
    for a in range(1, n):
        q += ((f[i + a] + z[a]) / efc_mu[i + a]) ** 2
    if q > fn * fn:
        return False
    for a in range(n):
        f[i + a] += z[a]
    return True


@inlined
def _free_block_step3(efc_mu, L, i, f0, f1, f2, g0, g1, g2):
    """_free_block_step of a condim-3 contact in scalars (as pgs_from visits it), the same
    substitutions as _cholesky_solve: (taken, new impulses), the impulses f unchanged when
    not taken."""
    l00 = L[i, 0]
    if l00 <= 0.0:
        return False, f0, f1, f2
    l10 = L[i + 1, 0]
    l11 = L[i + 1, 1]
    l20 = L[i + 2, 0]
    l21 = L[i + 2, 1]
    l22 = L[i + 2, 2]
    y0 = -g0 / l00
    y1 = (-g1 - l10 * y0) / l11
    y2 = (-g2 - (l20 * y0 + l21 * y1)) / l22
    z2 = y2 / l22
    z1 = (y1 - l21 * z2) / l11
    z0 = (y0 - l10 * z1 - l20 * z2) / l00
    fn = f0 + z0
    if fn < 0.0:
        return False, f0, f1, f2
    q = ((f1 + z1) / efc_mu[i + 1]) ** 2
    q += ((f2 + z2) / efc_mu[i + 2]) ** 2
    if q > fn * fn:
        return False, f0, f1, f2
    return True, fn, f1 + z1, f2 + z2


@jit
def _block_cost(d, i, n, x, c):
    """1/2 x' H x + c' x for the block, H = (A + R)_block."""
    v = 0.0
    for a in range(n):
        hx = d.efc_R[i + a] * x[a]
        for b in range(n):
            hx += d.efc_A[i + a, b] * x[b]
        v += x[a] * (0.5 * hx + c[a])
    return v


@jit
def _cone_block(d, i, n, f, g, z, out, w, x, c, xn, zh, P, JF):
    """Lower the impulse problem over one contact block, the other impulses fixed, by at most
    BLOCK_STEPS steps towards the block's minimum (later sweeps continue from there).

    Semismooth Newton on the natural map F(x) = x - Proj^R(x - R^-1 (H x + c)) (zero at the
    block optimum; Proj^R is exact by Algorithm 5 because R has the structure (17)); a step that
    does not lower the block cost is replaced by a majoriser step in the metric alpha R >= H,
    which always does. z, out, w, x, c, xn (6), zh (12), P (6 x 6) and JF (6 x 7) are scratch.
    (A condim-3 contact: _cone_block3.)"""
    R = d.efc_R[i:i + n]
    A = d.efc_A
    for a in range(n):
        x[a] = f[i + a]
    for a in range(n):
        hx = R[a] * x[a]
        for b in range(n):
            hx += A[i + a, b] * x[b]
        c[a] = g[a] - hx                      # g = H x + c
    cost = _block_cost(d, i, n, x, c)
    alpha = 0.0                               # of the majoriser, computed when first needed
    for _ in range(BLOCK_STEPS):
        # u = x - R^-1 (H x + c), F = x - Proj(u)
        for a in range(n):
            w[a] = 1.0 / R[a]
            z[a] = x[a] - g[a] * w[a]
        project_object(d, i, n, z, out, R)
        fmax = 0.0
        for a in range(n):
            fmax = max(fmax, abs(x[a] - out[a]) * (R[a] + A[i + a, a]))
        if fmax <= 1e-14 * (abs(cost) + 1e-300):
            break
        # Newton: (I - P (I - R^-1 H)) delta = -(x - Proj(u)), where, as H = A + R,
        # I - P (I - R^-1 H) = I + P R^-1 A
        cone_dproj(R, d.efc_mu[i + 1], n, z, P, zh)
        for a in range(n):
            for b in range(n):
                s = 1.0 if a == b else 0.0
                for k in range(n):
                    s += P[a, k] * w[k] * A[i + k, b]
                JF[a, b] = s
            JF[a, n] = out[a] - x[a]
        ok = solve_small(JF, n, xn)
        if ok:
            for a in range(n):
                z[a] = x[a] + xn[a]
            project_object(d, i, n, z, xn, R)       # keep the iterate feasible
            new_cost = _block_cost(d, i, n, xn, c)
        noise = 1e-15 * (abs(cost) + 1e-300)
        if not ok or new_cost > cost + noise:
            # majoriser step: Proj^{alpha R}(x - (alpha R)^-1 g), alpha R >= H by Gershgorin
            # in the metric R
            if alpha == 0.0:
                for a in range(n):
                    zh[a] = math.sqrt(R[a])
                for a in range(n):
                    sa = R[a] / (zh[a] * zh[a])
                    for b in range(n):
                        sa += abs(A[i + a, b]) / (zh[a] * zh[b])
                    alpha = max(alpha, sa)
            for a in range(n):
                w[a] = alpha * R[a]
                z[a] = x[a] - g[a] / w[a]
            project_object(d, i, n, z, xn, w)
            new_cost = _block_cost(d, i, n, xn, c)
            if new_cost > cost + noise:
                break
        cost = new_cost
        for a in range(n):
            x[a] = xn[a]
        for a in range(n):
            hx = c[a] + R[a] * x[a]
            for b in range(n):
                hx += A[i + a, b] * x[b]
            g[a] = hx
    for a in range(n):
        f[i + a] = x[a]


@inlined
def _cone_project3(z0, z1, z2, r0, r1, r2, mu1, mu2):
    """cone_project of a condim-3 contact in scalars: the impulse nearest to z in the metric
    diag(r), r with the structure (17)."""
    if z0 >= 0.0 and z0 * z0 >= (z1 / mu1) ** 2 + (z2 / mu2) ** 2:
        return z0, z1, z2                     # inside the cone
    muhat = math.sqrt(mu1 * mu1 * r1 / r0)
    yh0 = math.sqrt(r0) * z0
    sh = math.sqrt(r1 * z1 * z1 + r2 * z2 * z2)
    if sh < MINVAL or muhat * sh <= -yh0:
        return 0.0, 0.0, 0.0                  # the tip of the cone
    xh0 = (yh0 + muhat * sh) / (1.0 + muhat * muhat)
    scale = muhat * xh0 / sh
    return xh0 / math.sqrt(r0), scale * z1, scale * z2


@inlined
def _cone_dproj3(z0, z1, z2, r0, r1, r2, mu1):
    """cone_dproj of a condim-3 contact in scalars: d Proj / d z at z, its nine entries by rows."""
    muhat = math.sqrt(mu1 * mu1 * r1 / r0)
    s0 = math.sqrt(r0)
    s1 = math.sqrt(r1)
    s2 = math.sqrt(r2)
    zh0 = s0 * z0
    zh1 = s1 * z1
    zh2 = s2 * z2
    s = math.sqrt(zh1 * zh1 + zh2 * zh2)
    if zh0 >= 0.0 and s <= muhat * zh0:
        return 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0        # inside
    if s < MINVAL or muhat * s <= -zh0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0        # tip
    c = 1.0 / (1.0 + muhat * muhat)
    t = (zh0 + muhat * s) * c
    u1 = zh1 / s
    u2 = zh2 / s
    p01 = muhat * u1 * c
    p02 = muhat * u2 * c
    p11 = muhat * muhat * c * u1 * u1 + muhat * t / s * (1.0 - u1 * u1)
    p12 = muhat * muhat * c * u1 * u2 + muhat * t / s * (0.0 - u1 * u2)
    p21 = muhat * muhat * c * u2 * u1 + muhat * t / s * (0.0 - u2 * u1)
    p22 = muhat * muhat * c * u2 * u2 + muhat * t / s * (1.0 - u2 * u2)
    # back from the zhat variables: R^-1/2 dPi R^1/2
    i0 = 1.0 / s0
    i1 = 1.0 / s1
    i2 = 1.0 / s2
    return (c * (s0 * i0), p01 * (s1 * i0), p02 * (s2 * i0),
            p01 * (s0 * i1), p11 * (s1 * i1), p12 * (s2 * i1),
            p02 * (s0 * i2), p21 * (s1 * i2), p22 * (s2 * i2))


@inlined
def _solve3(r0, r1, r2):
    """solve_small of a 3 x 3 system in scalars: the rows (a0, a1, a2, b) of [M | b] as tuples;
    (ok, x) with x = M^-1 b, the same pivots and arithmetic."""
    # column 0: the first row of largest |a0| becomes the pivot row
    if abs(r1[0]) > abs(r0[0]):
        if abs(r2[0]) > abs(r1[0]):
            r0, r2 = r2, r0
        else:
            r0, r1 = r1, r0
    elif abs(r2[0]) > abs(r0[0]):
        r0, r2 = r2, r0
    if abs(r0[0]) < 1e-300:
        return False, 0.0, 0.0, 0.0
    q = r1[0] / r0[0]
    r1 = (r1[0] - q * r0[0], r1[1] - q * r0[1], r1[2] - q * r0[2], r1[3] - q * r0[3])
    q = r2[0] / r0[0]
    r2 = (r2[0] - q * r0[0], r2[1] - q * r0[1], r2[2] - q * r0[2], r2[3] - q * r0[3])
    # column 1
    if abs(r2[1]) > abs(r1[1]):
        r1, r2 = r2, r1
    if abs(r1[1]) < 1e-300:
        return False, 0.0, 0.0, 0.0
    q = r2[1] / r1[1]
    r2 = (r2[0], r2[1] - q * r1[1], r2[2] - q * r1[2], r2[3] - q * r1[3])
    if abs(r2[2]) < 1e-300:
        return False, 0.0, 0.0, 0.0
    x2 = r2[3] / r2[2]
    x1 = (r1[3] - r1[2] * x2) / r1[1]
    x0 = ((r0[3] - r0[1] * x1) - r0[2] * x2) / r0[0]
    return True, x0, x1, x2


@jit
def _cone_block3(efc_A, efc_R, efc_mu, i, f0, f1, f2, g0, g1, g2):
    """_cone_block of a condim-3 contact in scalars (as pgs_from visits it): its impulses f and
    gradient g in, its new impulses out; the same steps and arithmetic. A kernel of its own,
    called rather than compiled into pgs_from: only the later sweeps' sliding or separating
    contacts reach it, and inlined it was a quarter of pgs_from's compile time."""
    blk = _block3(efc_A, efc_R, i)
    a00, a01, a02, a10, a11, a12, a20, a21, a22, r0, r1, r2 = blk
    mu1 = efc_mu[i + 1]
    mu2 = efc_mu[i + 2]
    x0 = f0
    x1 = f1
    x2 = f2
    # c = g - H x, the block cost 1/2 x' H x + c' x (_block_cost)
    h0, h1, h2 = _hx3(blk, x0, x1, x2)
    c0 = g0 - h0
    c1 = g1 - h1
    c2 = g2 - h2
    cost = _block_cost3(blk, x0, x1, x2, c0, c1, c2)
    alpha = 0.0
    w0 = 1.0 / r0
    w1 = 1.0 / r1
    w2 = 1.0 / r2
    for _ in range(BLOCK_STEPS):
        # u = x - R^-1 (H x + c), F = x - Proj(u)
        z0 = x0 - g0 * w0
        z1 = x1 - g1 * w1
        z2 = x2 - g2 * w2
        o0, o1, o2 = _cone_project3(z0, z1, z2, r0, r1, r2, mu1, mu2)
        fmax = max(max(max(0.0, abs(x0 - o0) * (r0 + a00)), abs(x1 - o1) * (r1 + a11)),
                   abs(x2 - o2) * (r2 + a22))
        if fmax <= 1e-14 * (abs(cost) + 1e-300):
            break
        # Newton: (I + P R^-1 A) delta = -(x - Proj(u))
        p00, p01, p02, p10, p11, p12, p20, p21, p22 = _cone_dproj3(z0, z1, z2, r0, r1, r2, mu1)
        ok, n0, n1, n2 = _solve3(
            (((1.0 + p00 * w0 * a00) + p01 * w1 * a10) + p02 * w2 * a20,
             ((0.0 + p00 * w0 * a01) + p01 * w1 * a11) + p02 * w2 * a21,
             ((0.0 + p00 * w0 * a02) + p01 * w1 * a12) + p02 * w2 * a22, o0 - x0),
            (((0.0 + p10 * w0 * a00) + p11 * w1 * a10) + p12 * w2 * a20,
             ((1.0 + p10 * w0 * a01) + p11 * w1 * a11) + p12 * w2 * a21,
             ((0.0 + p10 * w0 * a02) + p11 * w1 * a12) + p12 * w2 * a22, o1 - x1),
            (((0.0 + p20 * w0 * a00) + p21 * w1 * a10) + p22 * w2 * a20,
             ((0.0 + p20 * w0 * a01) + p21 * w1 * a11) + p22 * w2 * a21,
             ((1.0 + p20 * w0 * a02) + p21 * w1 * a12) + p22 * w2 * a22, o2 - x2))
        new_cost = 0.0
        if ok:
            n0, n1, n2 = _cone_project3(x0 + n0, x1 + n1, x2 + n2, r0, r1, r2, mu1, mu2)
            new_cost = _block_cost3(blk, n0, n1, n2, c0, c1, c2)
        noise = 1e-15 * (abs(cost) + 1e-300)
        if not ok or new_cost > cost + noise:
            # majoriser step in the metric alpha R >= H (Gershgorin in the metric R)
            if alpha == 0.0:
                s0 = math.sqrt(r0)
                s1 = math.sqrt(r1)
                s2 = math.sqrt(r2)
                alpha = max(max(max(alpha, ((r0 / (s0 * s0) + abs(a00) / (s0 * s0))
                                            + abs(a01) / (s0 * s1)) + abs(a02) / (s0 * s2)),
                                ((r1 / (s1 * s1) + abs(a10) / (s1 * s0))
                                 + abs(a11) / (s1 * s1)) + abs(a12) / (s1 * s2)),
                            ((r2 / (s2 * s2) + abs(a20) / (s2 * s0))
                             + abs(a21) / (s2 * s1)) + abs(a22) / (s2 * s2))
            v0 = alpha * r0
            v1 = alpha * r1
            v2 = alpha * r2
            n0, n1, n2 = _cone_project3(x0 - g0 / v0, x1 - g1 / v1, x2 - g2 / v2,
                                        v0, v1, v2, mu1, mu2)
            new_cost = _block_cost3(blk, n0, n1, n2, c0, c1, c2)
            if new_cost > cost + noise:
                break
        cost = new_cost
        x0 = n0
        x1 = n1
        x2 = n2
        g0 = c0 + r0 * x0 + a00 * x0 + a01 * x1 + a02 * x2
        g1 = c1 + r1 * x1 + a10 * x0 + a11 * x1 + a12 * x2
        g2 = c2 + r2 * x2 + a20 * x0 + a21 * x1 + a22 * x2
    return x0, x1, x2


@inlined
def _hx3(blk, x0, x1, x2):
    """(A + R) x for the block of a condim-3 contact (_block3), summed as _block_cost does."""
    a00, a01, a02, a10, a11, a12, a20, a21, a22, r0, r1, r2 = blk
    return (((r0 * x0 + a00 * x0) + a01 * x1) + a02 * x2,
            ((r1 * x1 + a10 * x0) + a11 * x1) + a12 * x2,
            ((r2 * x2 + a20 * x0) + a21 * x1) + a22 * x2)


@inlined
def _block_cost3(blk, x0, x1, x2, c0, c1, c2):
    """_block_cost of a condim-3 contact in scalars (its block from _block3)."""
    h0, h1, h2 = _hx3(blk, x0, x1, x2)
    return ((0.0 + x0 * (0.5 * h0 + c0)) + x1 * (0.5 * h1 + c1)) + x2 * (0.5 * h2 + c2)


@jit
def solve_small(M, n, x):
    """Solve the n x n system stored in M[:, :n] with right-hand side M[:, n] (Gaussian
    elimination with partial pivoting, in place). False if singular."""
    for col in range(n):
        piv = col
        for r in range(col + 1, n):
            if abs(M[r, col]) > abs(M[piv, col]):
                piv = r
        if abs(M[piv, col]) < 1e-300:
            return False
        if piv != col:
            for k in range(n + 1):
                M[col, k], M[piv, k] = M[piv, k], M[col, k]
        for r in range(col + 1, n):
            q = M[r, col] / M[col, col]
            for k in range(col, n + 1):
                M[r, k] -= q * M[col, k]
    for r in range(n - 1, -1, -1):
        s = M[r, n]
        for k in range(r + 1, n):
            s -= M[r, k] * x[k]
        x[r] = s / M[r, r]
    return True


@jit
def _cholesky_small(H, n):
    """H[:n, :n] <- its Cholesky factor L (lower triangle; H symmetric positive definite).
    False if it is not."""
    for j in range(n):
        s = H[j, j] - dot_rows(H, j, j, j)
        if s <= 0.0:
            return False
        H[j, j] = math.sqrt(s)
        for r in range(j + 1, n):
            H[r, j] = (H[r, j] - dot_rows(H, r, j, j)) / H[j, j]
    return True


@jit
def _cholesky_solve(L, n, x):
    """x <- (L L')^-1 x with the factor of _cholesky_small."""
    for r in range(n):
        x[r] = (x[r] - dot_row(L, r, x, 0, r)) / L[r, r]
    for r in range(n - 1, -1, -1):
        t = x[r]
        for k in range(r + 1, n):
            t -= L[k, r] * x[k]
        x[r] = t / L[r, r]


BLOCK_STEPS = 1    # Newton steps per visit of a block: the sweeps repeat the visits


# ------------------------------------------------------------------------------------------------
# noslip
# ------------------------------------------------------------------------------------------------
NOSLIP_MINDIAG = 1e-10    # MuJoCo's floor on the diagonal of a noslip block of A
NOSLIP_NOISE = 1e-10      # a block update raising MuJoCo's cost by more than this is undone


@jit
def noslip(m, d, f, w, iterations, tolerance):
    """MuJoCo's noslip post-processing (mj_solNoSlip): Gauss-Seidel sweeps over the friction
    rows, friction loss and the friction of contacts, with every other impulse fixed (equality,
    limits, contact normals) and no regulariser on the swept rows, so that they minimise
        1/2 f' A f + f' b   (problem (11) without R)
    within their bounds: friction loss in [-eta, eta]; an elliptic contact's friction in its
    ellipse for the fixed normal impulse (the block minimised exactly, _friction_ellipse); a
    pyramidal contact's edges in opposing pairs, each pair keeping its sum (its share of the
    normal impulse) and moving the difference. A sticking contact then has J v' = v* on its
    friction rows: no creep beyond the reference velocity's decay.
    f (impulses) and w = M^-1 J' f are updated in place; efc_A and efc_MinvJT must be current
    (compute_A). The sweeps stop after `iterations`, or when one lowers MuJoCo's cost
    (force units: ours divided by h^2) scaled by 1 / (mean diagonal of M at qpos0 * nv) by less
    than `tolerance` (MuJoCo's noslip_tolerance); returns the number of sweeps."""
    nefc = d.nefc[0]
    nv = d.qvel.shape[0]
    h = m.opt_timestep[0]
    meaninertia = 0.0
    for k in range(nv):
        meaninertia += m.dof_M0[k]
    meaninertia /= max(nv, 1)
    scale = 1.0 / (h * h * max(meaninertia, MINVAL) * max(1, nv))
    noise = NOSLIP_NOISE * h * h
    vec = d.solver_vec
    res, old, c, xf, z = vec[0, :6], vec[1, :6], vec[2, :6], vec[3, :6], vec[4, :6]
    H = d.solver_mat[:6]
    it = 0
    while it < iterations:
        improvement = 0.0
        if it == 0:
            # the cost drops the regulariser R of the swept rows: MuJoCo counts it at sweep 0
            for i in range(nefc):
                improvement += 0.5 * f[i] * f[i] * d.efc_R[i]
        i = 0
        while i < nefc:
            t = d.efc_type[i]
            if d.efc_hard[i]:
                i += 1
            elif t == FRICTION_DOF or t == FRICTION_TENDON:
                g = d.efc_b[i] + row_dot(d, i, d.efc_J, w)
                a = max(d.efc_A[i, 0], MINVAL)
                eta = d.efc_frictionloss[i]
                fi = min(max(f[i] - g / a, -eta), eta)
                delta = fi - f[i]
                if delta != 0.0:
                    f[i] = fi
                    row_axpy(d, i, d.efc_MinvJT, delta, w)
                    improvement -= 0.5 * delta * delta * a + delta * g
                i += 1
            elif t == CONTACT_PYRAMIDAL:
                n = contact_nrows(d, d.efc_id[i])
                for j in range(i, i + n, 2):
                    improvement -= _noslip_edge_pair(d, j, f, w, res, old, noise)
                i += n
            elif t == CONTACT_ELLIPTIC:
                n = d.contact_dim[d.efc_id[i]]
                improvement -= _noslip_ellipse(d, i, n, f, w, res, old, c, xf, z, H, noise)
                i += n
            else:
                i += 1
        it += 1
        if improvement * scale < tolerance:
            break
    return it


@jit
def _noslip_edge_pair(d, j, f, w, res, old, noise):
    """The two opposing edges j, j + 1 of a pyramidal contact: their sum kept (the normal
    share), their difference minimising the cost with A alone; returns the cost change."""
    for a in range(2):
        res[a] = d.efc_b[j + a] + row_dot(d, j + a, d.efc_J, w)
        old[a] = f[j + a]
    a00 = max(d.efc_A[j, 0], NOSLIP_MINDIAG)
    a11 = max(d.efc_A[j + 1, 0], NOSLIP_MINDIAG)
    a01 = rows_dot(d, j, d.efc_J, j + 1, d.efc_MinvJT)
    # linear term with the pair's own impulses taken out: bc = res - A_pair old
    b0 = res[0] - a00 * old[0] - a01 * old[1]
    b1 = res[1] - a01 * old[0] - a11 * old[1]
    mid = 0.5 * (old[0] + old[1])
    # f0 = mid + y, f1 = mid - y: cost K1 y^2 / 2 + K0 y + const, y in [-mid, mid]
    k1 = a00 + a11 - 2.0 * a01
    k0 = mid * (a00 - a11) + b0 - b1
    if k1 < MINVAL:
        f[j] = f[j + 1] = mid
    else:
        y = -k0 / k1
        if y < -mid:
            f[j], f[j + 1] = 0.0, 2.0 * mid
        elif y > mid:
            f[j], f[j + 1] = 2.0 * mid, 0.0
        else:
            f[j], f[j + 1] = mid + y, mid - y
    return _noslip_pair_change(d, j, f, old, res, a00, a01, a11, noise, w)


@jit
def _noslip_pair_change(d, j, f, old, res, a00, a01, a11, noise, w):
    """Cost change 1/2 delta' A delta + delta' res of a pyramid pair's update from old (res
    its gradient before): undone if it raises the cost by more than noise (MuJoCo's
    costChange), else w follows it. Returns the change."""
    d0 = f[j] - old[0]
    d1 = f[j + 1] - old[1]
    change = 0.5 * (a00 * d0 * d0 + 2.0 * a01 * d0 * d1 + a11 * d1 * d1) + d0 * res[0] \
        + d1 * res[1]
    if change > noise:
        f[j], f[j + 1] = old[0], old[1]
        return 0.0
    if d0 != 0.0:
        row_axpy(d, j, d.efc_MinvJT, d0, w)
    if d1 != 0.0:
        row_axpy(d, j + 1, d.efc_MinvJT, d1, w)
    return change


@jit
def _noslip_ellipse(d, i, n, f, w, res, old, c, xf, z, H, noise):
    """The friction rows of the elliptic contact at row i, its normal impulse fixed: the exact
    minimum of the cost with A alone within the friction ellipse; returns the cost change."""
    m = n - 1
    for a in range(m):
        res[a] = d.efc_b[i + 1 + a] + row_dot(d, i + 1 + a, d.efc_J, w)
        old[a] = f[i + 1 + a]
    # c = res - A_ff old (the linear term of the block in its own impulses)
    for a in range(m):
        s = res[a]
        for b in range(m):
            ab = d.efc_A[i + 1 + a, 1 + b]
            if a == b:
                ab = max(ab, NOSLIP_MINDIAG)
            s -= ab * old[b]
        c[a] = s
    if f[i] < MINVAL:
        for a in range(m):
            xf[a] = 0.0
    else:
        _friction_ellipse(d, i, m, c, f[i], False, H, xf, z)
    for a in range(m):
        f[i + 1 + a] = xf[a]
    # cost change over the friction rows (A's diagonal floored as in the block)
    change = 0.0
    for a in range(m):
        da = xf[a] - old[a]
        if da == 0.0:
            continue
        ad = 0.0
        for b in range(m):
            ab = d.efc_A[i + 1 + a, 1 + b]
            if a == b:
                ab = max(ab, NOSLIP_MINDIAG)
            ad += ab * (xf[b] - old[b])
        change += da * (0.5 * ad + res[a])
    if change > noise:
        for a in range(m):
            f[i + 1 + a] = old[a]
        return 0.0
    for a in range(m):
        da = xf[a] - old[a]
        if da != 0.0:
            row_axpy(d, i + 1 + a, d.efc_MinvJT, da, w)
    return change


# ------------------------------------------------------------------------------------------------
# Newton
# ------------------------------------------------------------------------------------------------
@inlined
def object_z(d, i, n, y0, z):
    """z = R^-1 (v* - y) over the object's rows i .. i + n - 1, y0 = J v' (the argument of
    f* = Proj(z) and of its derivative D)."""
    for k in range(n):
        z[k] = (d.efc_vstar[i + k] - y0[i + k]) / d.efc_R[i + k]


@jit
def _object_DJ(d, i, n, z, D, zh, DJ):
    """DJ = D J for one object, D = d f* / d (v* - y) (piecewise: active rows, cone surface),
    over the object's dofs (efc_range: the rows of an object share it). False when D J = 0 (an
    inactive row, the tip of a cone). DJ[a, q] is indexed by dof q in either layout of the
    rows (row_col). D (6 x 6), zh (12) and DJ (6 x nv) are scratch."""
    t = d.efc_type[i]
    if t == CONTACT_ELLIPTIC:
        _cone_hessian(d, i, n, z, D, zh)
    else:
        if t == EQUALITY:
            active = True
        elif t == FRICTION_DOF or t == FRICTION_TENDON:
            active = abs(z[0]) < d.efc_frictionloss[i]
        else:
            active = z[0] > 0.0
        if not active:
            return False                       # D = 0
        D[0, 0] = 1.0 / d.efc_R[i]
    J = d.efc_J
    rng = d.efc_range
    nonzero = False
    for a in range(n):
        for r in range(2):
            adr = rng[i, 2 * r]
            c = row_col(d, i, r) - adr             # the column of dof q is q + c
            for q in range(adr, adr + rng[i, 2 * r + 1]):
                s = 0.0
                for b in range(n):
                    s += D[a, b] * J[i + b, q + c]
                DJ[a, q] = s
                nonzero = nonzero or s != 0.0
    return nonzero


@jit
def _object_hessian(d, i, n, z, H, D, zh, DJ):
    """H += J' D J for one object (_object_DJ) in the lower triangle of the dense H only (H is
    symmetric, its Cholesky factor reads that triangle)."""
    if not _object_DJ(d, i, n, z, D, zh, DJ):
        return
    J = d.efc_J
    rng = d.efc_range
    for a in range(n):
        for r1 in range(2):
            for p in range(rng[i, 2 * r1], rng[i, 2 * r1] + rng[i, 2 * r1 + 1]):
                jap = J[i + a, p]
                if jap == 0.0:
                    continue
                Hp = H[p]
                for r2 in range(2):
                    adr = rng[i, 2 * r2]
                    for q in range(adr, min(adr + rng[i, 2 * r2 + 1], p + 1)):
                        Hp[q] += jap * DJ[a, q]


@jit
def on_path(m, d, i, n):
    """True when the rows i .. i + n - 1 of an object touch only dofs on one path to the root of
    the kinematic tree (a contact of a body with the world or with one of its ancestors, a
    joint's limit or friction loss, an equality between a body and its ancestor). Then their
    J' D J adds to H = M + J' D J only entries (a, b) with b an ancestor of a or a itself: the
    sparsity of M, whose L'DL factor following the tree from the leaves has no fill-in
    (Featherstone 2005, as MuJoCo's mj_factorM), in qM's layout. Rows on two trees (two bodies
    apart) or two branches are not. Either layout of the rows."""
    J = d.efc_J
    rng = d.efc_range
    parent = m.dof_parentid
    deepest = -1                               # the object's deepest dof (the largest index)
    for k in range(i, i + n):
        for r in range(2):
            a = rng[i, 2 * r]
            c = row_col(d, i, r) - a               # the column of dof q is q + c
            for q in range(a + rng[i, 2 * r + 1] - 1, max(a, deepest + 1) - 1, -1):
                if J[k, q + c] != 0.0:
                    deepest = q
                    break
    for k in range(i, i + n):
        # each nonzero dof, from the deepest up, must be met walking up from the deepest
        node = deepest
        for r in range(2):
            a = rng[i, 2 * r]
            c = row_col(d, i, r) - a
            for q in range(a + rng[i, 2 * r + 1] - 1, a - 1, -1):
                if J[k, q + c] != 0.0:
                    while node > q:
                        node = parent[node]
                    if node != q:
                        return False
    return True


@jit
def cross_rows(m, d, rows):
    """The number of rows of the objects not on a path to the root (on_path), the first of
    them written to ``rows`` (as many as it holds); -1 with a hard row."""
    nefc = d.nefc[0]
    cross = 0
    i = 0
    while i < nefc:
        if d.efc_hard[i]:
            return -1
        n = object_size(d, i)
        if not on_path(m, d, i, n):
            for k in range(i, i + n):
                if cross < rows.shape[0]:
                    rows[cross] = k
                cross += 1
        i += n
    return cross


@jit
def tree_rows(m, d):
    """True when every object lies on a path to the root (on_path) and no row is hard: then
    H = M + J' D J has the sparsity of M."""
    return cross_rows(m, d, d.newton_cross[:0]) == 0


@jit
def _tree_inertia(m, Mdense, Hs):
    """Hs <- Mdense in qM's layout (dof_Madr: the row of dof a holds its entries with a, its
    parent, ... up to the root)."""
    for a in range(Mdense.shape[0]):
        adr = m.dof_Madr[a]
        b = a
        while b >= 0:
            Hs[adr] = Mdense[a, b]
            b = m.dof_parentid[b]
            adr += 1


@jit
def _object_hessian_tree(m, d, i, n, Hs, DJ):
    """Hs += J' D J for one object with DJ = D J (_object_DJ), in qM's layout: the rows touch
    one path to the root (tree_rows), so every nonzero product pairs a dof with one of its
    ancestors (or itself), which the walk up from the dof meets. Either layout of the rows."""
    J = d.efc_J
    rng = d.efc_range
    for a in range(n):
        for r in range(2):
            adr0 = rng[i, 2 * r]
            c = row_col(d, i, r) - adr0
            for p in range(adr0, adr0 + rng[i, 2 * r + 1]):
                jap = J[i + a, p + c]
                if jap == 0.0:
                    continue
                adr = m.dof_Madr[p]
                q = p
                while q >= 0:
                    Hs[adr] += jap * DJ[a, q]
                    q = m.dof_parentid[q]
                    adr += 1


@jit
def cone_dproj(r, mu1, n, z, P, zh):
    """P = d Proj_K^R / d z at z (n x n): identity inside the cone, zero at the tip, and on the
    surface the derivative of the closed form of cone_project, R^-1/2 dPi R^1/2.
    zh (12) is scratch: zhat = R^1/2 z, then R^1/2."""
    muhat = math.sqrt(mu1 * mu1 * r[1] / r[0])
    for k in range(n):
        zh[6 + k] = math.sqrt(r[k])
        zh[k] = zh[6 + k] * z[k]
    s = 0.0
    for k in range(1, n):
        s += zh[k] * zh[k]
    s = math.sqrt(s)
    for a in range(n):
        for b in range(n):
            P[a, b] = 0.0
    if zh[0] >= 0.0 and s <= muhat * zh[0]:
        for k in range(n):
            P[k, k] = 1.0                     # inside
        return
    if s < MINVAL or muhat * s <= -zh[0]:
        return                                # tip
    # surface: t = (z0 + muhat s) / (1 + muhat^2), u = muhat t zr / s (in zhat variables)
    c = 1.0 / (1.0 + muhat * muhat)
    t = (zh[0] + muhat * s) * c
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
        inv = 1.0 / zh[6 + a]
        for b in range(n):
            P[a, b] *= zh[6 + b] * inv


@jit
def _cone_hessian(d, i, n, z, D, zh):
    """D = d f* / d (v* - y) = dProj/dz R^-1 for the cone block (zh: scratch of cone_dproj)."""
    cone_dproj(d.efc_R[i:i + n], d.efc_mu[i + 1], n, z, D, zh)
    for a in range(n):
        for b in range(n):
            D[a, b] /= d.efc_R[i + b]


@jit
def _dphi(d, alpha, y0, jp, a0, a1, z, out):
    """Derivative of the primal cost at v + alpha p along p:
        a0 + alpha a1 - (J p)' f*(J v + alpha J p),  a0 = p' (M (v - v^) + J_E' lam), a1 = p' M p
    (y0 = J v, jp = J p: each evaluation costs the rows, not the dofs). J_E' lam (hard rows) is
    orthogonal to p; adding it removes the cancellation of the large hard-constraint force."""
    s = a0 + alpha * a1
    nefc = d.nefc[0]
    i = 0
    while i < nefc:
        if d.efc_hard[i]:
            i += 1
            continue
        n = object_size(d, i)
        for k in range(n):
            z[k] = (d.efc_vstar[i + k] - y0[i + k] - alpha * jp[i + k]) / d.efc_R[i + k]
        project_object(d, i, n, z, out, d.efc_R[i:i + n])
        for k in range(n):
            s -= jp[i + k] * out[k]
        i += n
    return s


NEWTON_FLOOR = 1e-14   # Newton stops below this residual (the rounding floor) whatever the tolerance
STEP_FLOOR = 4e-16     # ... and after a step below this times the largest |v'| (advance)
LS_TOLERANCE = 1e-10   # the line search's stop: |phi'| or the bracket, relative (line_search)
LS_ITERATIONS = 50     # the line search's evaluations after bracketing, at most


@jit
def line_search(d, y0, jp, a0, a1, dlo, z, out):
    """Step length along p minimising the primal cost, from its derivative at 0 (dlo < 0).

    The cost is convex along p, so its derivative phi' (_dphi) increases; its root is
    bracketed by doubling from 1 (Newton's step, accepted at once where phi'(1) vanishes),
    then found by the Illinois variant of regula falsi (Dowell and Jarratt 1971: the end kept
    twice running has its value halved, which makes the method superlinear where plain regula
    falsi keeps one end and crawls to it). It stops when |phi'| falls to LS_TOLERANCE times
    |phi'(0)| or the bracket to LS_TOLERANCE times its end (dense and sparse layouts)."""
    tol = LS_TOLERANCE * -dlo
    lo = 0.0
    hi = 1.0
    dhi = _dphi(d, hi, y0, jp, a0, a1, z, out)
    if abs(dhi) <= tol:
        return hi
    while dhi < 0.0 and hi < 1e6:
        lo, dlo = hi, dhi
        hi *= 2.0
        dhi = _dphi(d, hi, y0, jp, a0, a1, z, out)
    alpha = hi
    if dhi <= 0.0:
        return alpha                     # no minimum before 1e6 steps: the farthest tried
    kept = 0                             # the end moved last: -1 lo, +1 hi
    for _ in range(LS_ITERATIONS):
        alpha = lo + (hi - lo) * (-dlo) / (dhi - dlo)
        dmid = _dphi(d, alpha, y0, jp, a0, a1, z, out)
        if abs(dmid) <= tol or hi - lo <= LS_TOLERANCE * hi:
            break
        if dmid < 0.0:
            lo, dlo = alpha, dmid
            if kept == -1:
                dhi *= 0.5
            kept = -1
        else:
            hi, dhi = alpha, dmid
            if kept == 1:
                dlo *= 0.5
            kept = 1
    return alpha


CROSS_MAX = 12   # rows across branches that the dense layout's Newton adds to the tree factor


@jit
def _low_rank_solve(m, d, Hs, LDinv, k, p):
    """p <- (H_t + U' C U)^-1 r for p = H_t^-1 r on entry, by the Woodbury identity
        (H_t + U' C U)^-1 = H_t^-1 - H_t^-1 U' (I + C U H_t^-1 U')^-1 C U H_t^-1,
    H_t = M + J' D J over the objects on root paths (factored along the tree in Hs, LDinv),
    U the k rows across branches (their indices in newton_cross, dense layout) and C U their
    D J (newton_CU, zero for an inactive row). I + C U H_t^-1 U' is similar to
    I + C^1/2 U H_t^-1 U' C^1/2 (C and H_t^-1 positive semidefinite): its eigenvalues are at
    least 1."""
    nv = p.shape[0]
    CU, Y, S, w = d.newton_CU, d.newton_Y, d.newton_S, d.newton_w
    for b in range(k):
        Y[b, :] = d.efc_J[d.newton_cross[b]]       # zero outside the row's range
        solve_m(m, Hs, LDinv, Y[b])
    for a in range(k):
        for b in range(k):
            S[a, b] = (1.0 if a == b else 0.0) + dot_rows2(CU, a, Y, b, 0, nv)
        S[a, k] = dot_seg(CU[a], 0, p, 0, nv)
    solve_small(S, k, w)
    for b in range(k):
        for q in range(nv):
            p[q] -= w[b] * Y[b, q]


@jit
def advance(vnext, alpha, p):
    """vnext += alpha p; False when the step is rounding: no component moved by more than
    STEP_FLOOR times the largest |v'|. The iterations stop then. (It happens where every force
    is negligible, 1e-20 say: the residual, relative to the larger of the two force terms or to
    MINVAL, is then the rounding of the gradient over MINVAL, and may stay above a tolerance of
    1e-8 while the iterates only move by an ulp back and forth.)"""
    step = 0.0
    size = 0.0
    for a in range(vnext.shape[0]):
        vnext[a] += alpha * p[a]
        step = max(step, abs(alpha * p[a]))
        size = max(size, abs(vnext[a]))
    return step > STEP_FLOOR * size


@jit
def newton(m, d, vnext, vhat, Mdense, f, iterations, tolerance):
    """Newton's method on the primal problem; vnext holds the start and receives the optimum,
    f the impulses f*(J v') at it.

    With hard rows the start is projected on J_E v' = v*_E and every step solves the KKT
    system [H J_E'; J_E 0] [p; lam] = [-g; 0], so the iterates stay on that affine set; the
    residual is then that of the KKT gradient g + J_E' lam. The hard impulses are recovered
    at the end (hard_impulses). When every row lies on a path to the root of the kinematic
    tree (on_path: a robot touching the world) H keeps M's sparsity and is factored along
    the tree (factor_m) instead of densely: for the humanoid (nv 27) the factor takes half
    the time, the solve about a sixth less. Up to CROSS_MAX rows that are not on such a path
    (a hand on a thigh) are then a low-rank update of that factor (_low_rank_solve). The
    iterations stop below the tolerance or NEWTON_FLOOR, the rounding floor (a tolerance of 0
    does not make them go on where no step can lower the residual; MuJoCo's stop there too,
    when the line search finds no improvement), or after a step that moved v' by less than
    its rounding (advance). Without hard rows nothing is allocated: the scratch is Data's
    (newton_*, solver_vec, solver_mat, scratch_M)."""
    nv = vnext.shape[0]
    nefc = d.nefc[0]
    grad, p, Mp, gofs, Mv = (d.newton_vec[0], d.newton_vec[1], d.newton_vec[2],
                             d.newton_vec[3], d.newton_vec[4])
    y0, jp = d.newton_Jv, d.newton_Jp
    DJ = d.newton_DJ
    z, out, zh = d.solver_vec[2, :6], d.solver_vec[3, :6], d.solver_vec[9]
    D = d.solver_mat[:6, :6]
    H = d.newton_H
    it = 0
    residual = 0.0
    nh = count_hard(d)
    # H in M's sparsity when every object lies on a path to the root (on_path): factored along
    # the tree in qM's layout (Hs, 1/D in LDinv), with a low-rank update for the rows of up to
    # CROSS_MAX that do not (_low_rank_solve); else dense
    ncross = cross_rows(m, d, d.newton_cross) if nh == 0 else -1
    tree = 0 <= ncross <= CROSS_MAX
    Hs, LDinv = d.scratch_M, d.newton_vec[5]
    gofs[:] = 0.0
    if nh > 0:
        hard = hard_rows(d)
        JE = np.empty((nh, nv))
        for a in range(nh):
            JE[a, :] = d.efc_J[hard[a]]
        project_hard(d, vnext, Mdense)
    rows_cost(d, vnext, f)                 # f = f*(J v') (the cost's value is not needed)
    for it in range(1, iterations + 1):
        # gradient M (v' - v^) - J' f and Hessian M + J' D J; the residual is the largest
        # gradient component relative to the largest of its two terms (force balance, eq. 6)
        gmax = 0.0
        scale = MINVAL
        finite = True
        Mp[:] = 0.0                        # J' f here, over each row's dofs
        for r in range(nefc):
            if f[r] != 0.0:
                row_axpy(d, r, d.efc_J, f[r], Mp)
        for a in range(nv):
            p[a] = vnext[a] - vhat[a]
        for a in range(nv):
            s = dot_row(Mdense, a, p, 0, nv)
            Mv[a] = s
            c = Mp[a]
            grad[a] = s - c
            finite = finite and math.isfinite(grad[a])
            gmax = max(gmax, abs(grad[a]))
            scale = max(scale, abs(s), abs(c))
        residual = gmax / scale
        if not finite:
            residual = math.nan            # NaN input: report it, do not iterate on it
            break
        if nh == 0 and residual < max(tolerance, NEWTON_FLOOR):
            break
        # y0 = J v' serves the Hessian here and the line search below
        for r in range(nefc):
            y0[r] = row_dot(d, r, d.efc_J, vnext)
        if tree:
            _tree_inertia(m, Mdense, Hs)
        else:
            for a in range(nv):
                for b in range(a + 1):
                    H[a, b] = Mdense[a, b]
        i = 0
        kc = 0                             # the rows across branches (newton_cross) passed
        while i < nefc:
            if d.efc_hard[i]:
                i += 1
                continue
            n = object_size(d, i)
            object_z(d, i, n, y0, z)
            if not tree:
                _object_hessian(d, i, n, z, H, D, zh, DJ)
            elif kc < ncross and d.newton_cross[kc] == i:
                # across branches: a low-rank update (_low_rank_solve), zero when D J = 0
                active = _object_DJ(d, i, n, z, D, zh, DJ)
                for k in range(n):
                    d.newton_CU[kc, :] = 0.0
                    for r in range(2):
                        adr = d.efc_range[i, 2 * r]
                        for q in range(adr, adr + d.efc_range[i, 2 * r + 1]):
                            d.newton_CU[kc, q] = DJ[k, q] if active else 0.0
                    kc += 1
            elif _object_DJ(d, i, n, z, D, zh, DJ):
                _object_hessian_tree(m, d, i, n, Hs, DJ)
            i += n
        for a in range(nv):
            p[a] = -grad[a]
        if tree:
            factor_m(m, Hs, LDinv)
            solve_m(m, Hs, LDinv, p)
            if kc > 0:
                _low_rank_solve(m, d, Hs, LDinv, kc, p)
        elif _cholesky_small(H, nv):
            _cholesky_solve(H, nv, p)
        else:
            residual = math.nan            # not positive definite: a broken model or state
            break
        if nh > 0:
            # KKT: p = -H^-1 (g + J_E' lam) with J_E p = 0
            Y = np.empty((nv, nh))
            for e in range(nh):
                Mp[:] = JE[e]
                _cholesky_solve(H, nv, Mp)
                Y[:, e] = Mp
            lam = np.linalg.pinv(JE @ Y, HARD_RCOND) @ (JE @ p)
            p -= Y @ lam
            gofs[:] = JE.T @ lam
            gmax = 0.0
            for a in range(nv):
                gmax = max(gmax, abs(grad[a] + gofs[a]))
            residual = gmax / scale
            if residual < max(tolerance, NEWTON_FLOOR):
                break
        # exact line search: the cost is convex along p, so find the zero of its derivative
        # phi'(alpha) = p' (M (v' + alpha p - v^) - J' f*(J (v' + alpha p)))
        dlo = 0.0
        for a in range(nv):
            dlo += p[a] * (grad[a] + gofs[a])
        if dlo >= 0.0:
            break
        a0 = 0.0
        a1 = 0.0
        for a in range(nv):
            a0 += p[a] * (Mv[a] + gofs[a])
            a1 += p[a] * dot_row(Mdense, a, p, 0, nv)
        for r in range(nefc):
            jp[r] = row_dot(d, r, d.efc_J, p)
        alpha = line_search(d, y0, jp, a0, a1, dlo, z, out)
        moved = advance(vnext, alpha, p)
        rows_cost(d, vnext, f)
        if not moved:
            break
    if nh > 0:
        hard_impulses(d, f, vnext, vhat, Mdense)
    return it, residual

"""Linear complementarity problems: find z with w = M z + q, z >= 0, w >= 0, z'w = 0.

    z, info = lemke(M, q)                  Lemke's complementary pivoting (covering vector d > 0)
    z, info = ppm(M, q, nonbasic=None)     principal pivoting method I, warm-started

Both pivot on one revised representation of the basis (Cottle, Pang & Stone 1992, ch. 4): the
basic z_C (C may hold Lemke's artificial z0, whose column is the covering vector) and the basic
w_i for i outside a row set R, |R| = |C|. Then z_C = -M_RC^-1 q_R and w = q + M_:C z_C, the
block M_RC factored afresh (LU, partial pivoting) after every pivot, so that no error builds up
over thousands of pivots. Only the columns of M in C and the entering one are read: the solvers
can work on a matrix given by a product (M = U V - W'W, the no-slip matrix N Q N' of
rigid_inverse), whose columns are formed when first needed (the linear-in-contacts variant of
Zapolsky & Drumwright section 4.7). Degeneracy is resolved lexicographically: the ratio test
compares the rows (value, d value / d q) of the tied basic variables, which simulates the
perturbation q + (eps, eps^2, ...) and makes the pivot sequence finite (no cycling).

lemke (CPS Algorithm 4.4.5): z0 enters at max(-q_i / d_i), then the complement of the variable
that left enters, until z0 leaves (a solution) or the entering column has no blocking variable
(a secondary ray: status RAY; for a copositive-plus M this proves the LCP infeasible).

ppm (CPS section 4.5, Cottle-Dantzig's principal pivoting method "PPM I"): from a complementary
basis (the warm start: the z's of `nonbasic` basic, i.e. the w's of `nonbasic` non-basic, the
paper's N of Algorithm 2), a major cycle picks a negative basic variable (the distinguished one)
and increases its complement; a blocking variable leaves and its complement is driven next,
until the distinguished variable itself reaches zero. Basic variables that were non-negative
stay so, the distinguished one increases, so the number of negative variables falls by one per
major cycle. It solves every LCP with a column-sufficient M (positive semi-definite ones among
them: the no-slip and convex models of rigid_inverse), or shows it infeasible (status RAY).
Where the driving variable is unblocked while other basic variables are negative (possible
with a skew-symmetric part), that is no proof of infeasibility: Lemke's method then takes
over, which decides the LCP for every PSD (copositive-plus) M.
Started from the previous call's final basis it usually needs no pivot at all and returns the
same complementary set, which is what keeps the forces of an indeterminate contact problem from
jumping between equally valid solutions (paper section 4.6).

Kernels for compiled callers (a contact solver inside a step): allocate `workspace(n)` once and
call `lemke_kernel` / `ppm_kernel`; nothing is allocated while pivoting. The final basis is in
the workspace (`basis_sets`), for a caller that classifies contacts from it (clamping: z basic;
separating: w basic; see `classify`).
"""
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from .jit import jit


class LCPStatus(IntEnum):
    """How a pivoting solve ended."""
    SOLVED = 0      # z, w satisfy the complementarity conditions
    RAY = 1         # no blocking variable: Lemke's secondary ray / PPM's unbounded driving
                    # variable; for copositive-plus (lemke) or column-sufficient (ppm) M the
                    # LCP has no solution
    MAXITER = 2     # the pivot cap was reached
    SINGULAR = 3    # a basis became numerically singular (M outside the solvers' classes)


class Contact(IntEnum):
    """Classification of an LCP index at a solution (Werling et al.'s names for contacts)."""
    SEPARATING = 0  # w_i > 0, z_i = 0
    CLAMPING = 1    # z_i > 0, w_i = 0
    TIED = 2        # z_i = w_i = 0


@dataclass
class LCPInfo:
    """Outcome of a solve. `nonbasic`: sorted indices i whose z_i is basic (w_i non-basic): the
    complementary set of the final basis, the warm start of the next ppm call."""
    status: LCPStatus
    pivots: int
    nonbasic: np.ndarray
    w: np.ndarray

    @property
    def ok(self) -> bool:
        return self.status == LCPStatus.SOLVED


# the statuses as plain ints, for compiled code
SOLVED, RAY, MAXITER, SINGULAR = (int(LCPStatus.SOLVED), int(LCPStatus.RAY),
                                  int(LCPStatus.MAXITER), int(LCPStatus.SINGULAR))
DENSE = 0       # column j of M is M[:, j]
PRODUCT = 1     # column j of M is U @ V[:, j] - W.T @ W[:, j]
# the unused matrices of a call: read-only, as compiled callers see a global array, so that the
# kernels compile once for the calls from Python and from compiled code
EMPTY2 = np.zeros((0, 0))
EMPTY2.flags.writeable = False


# ------------------------------------------------------------------------------------------------
# workspace and the revised basis
# ------------------------------------------------------------------------------------------------
# slots of the workspace tuple
COLS, HAVE, LU, PERM, ROWS, CC, POS_R, POS_C, ZVAL, WVAL, ZRATE, WRATE, TMP, LEX, STATE = range(15)


@jit
def workspace(n):
    """Scratch arrays of a solve of size n (index n: Lemke's artificial variable z0), by slot:
    COLS (n, n+1) cached columns of [M | d], HAVE (n+1,) which are cached, LU (n, n) factor of
    M_RC, PERM (n,) its row permutation, ROWS / CC (n,) the lists R and C, POS_R (n,) / POS_C
    (n+1,) positions in them (-1: absent), ZVAL (n+1,) and WVAL (n,) the basic solution,
    ZRATE (n+1,) and WRATE (n,) the rates of a pivot, TMP (n,), LEX (3, n) scratch, STATE (1,): k = |R|."""
    return (np.zeros((n, n + 1)), np.zeros(n + 1, np.bool_), np.zeros((n, n)),
            np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n + 1, np.int64),
            np.full(n, -1, np.int64), np.full(n + 1, -1, np.int64), np.zeros(n + 1),
            np.zeros(n), np.zeros(n + 1), np.zeros(n), np.zeros(n + 1), np.zeros((3, n + 1)),
            np.zeros(1, np.int64))


@jit
def _column(ws, j, mode, Md, U, V, W, cover):
    """Make column j of [M | d] present in the cache (the covering vector d is column n)."""
    cols, have = ws[COLS], ws[HAVE]
    if have[j]:
        return
    n = cols.shape[0]
    if j == n:
        for i in range(n):
            cols[i, j] = cover[i]
    elif mode == DENSE:
        for i in range(n):
            cols[i, j] = Md[i, j]
    else:
        # M = U V - W'W: column j = U V_:j - W' W_:j
        for i in range(n):
            acc = 0.0
            for a in range(V.shape[0]):
                acc += U[i, a] * V[a, j]
            for a in range(W.shape[0]):
                acc -= W[a, i] * W[a, j]
            cols[i, j] = acc
    have[j] = True


@jit
def _factor(ws, scale):
    """LU with partial pivoting of M_RC; False if a pivot is below 1e-13 scale (singular)."""
    cols, lu, perm, rows, cc = ws[COLS], ws[LU], ws[PERM], ws[ROWS], ws[CC]
    k = ws[STATE][0]
    for a in range(k):
        for b in range(k):
            lu[a, b] = cols[rows[a], cc[b]]
        perm[a] = a
    for c in range(k):
        p = c
        big = abs(lu[c, c])
        for a in range(c + 1, k):
            if abs(lu[a, c]) > big:
                big = abs(lu[a, c])
                p = a
        if big <= 1e-13 * scale:
            return False
        if p != c:
            for b in range(k):
                lu[c, b], lu[p, b] = lu[p, b], lu[c, b]
            perm[c], perm[p] = perm[p], perm[c]
        inv = 1.0 / lu[c, c]
        for a in range(c + 1, k):
            f = lu[a, c] * inv
            lu[a, c] = f
            if f != 0.0:
                for b in range(c + 1, k):
                    lu[a, b] -= f * lu[c, b]
    return True


@jit
def _lu_solve(ws, x):
    """x <- M_RC^-1 x in place (x indexed by position in R on entry, in C on exit)."""
    lu, perm, tmp = ws[LU], ws[PERM], ws[TMP]
    k = ws[STATE][0]
    for a in range(k):
        tmp[a] = x[perm[a]]
    for a in range(k):
        s = tmp[a]
        for c in range(a):
            s -= lu[a, c] * tmp[c]
        tmp[a] = s
    for a in range(k - 1, -1, -1):
        s = tmp[a]
        for c in range(a + 1, k):
            s -= lu[a, c] * tmp[c]
        tmp[a] = s / lu[a, a]
    for a in range(k):
        x[a] = tmp[a]


@jit
def _lu_solve_t(ws, x):
    """x <- M_RC^-T x in place (by position in C on entry, in R on exit)."""
    lu, perm, tmp = ws[LU], ws[PERM], ws[TMP]
    k = ws[STATE][0]
    # P M_RC = L U: solve U' y = x, L' t = y, x = P' t
    for a in range(k):
        s = x[a]
        for c in range(a):
            s -= lu[c, a] * tmp[c]
        tmp[a] = s / lu[a, a]
    for a in range(k - 1, -1, -1):
        s = tmp[a]
        for c in range(a + 1, k):
            s -= lu[c, a] * tmp[c]
        tmp[a] = s
    for a in range(k):
        x[perm[a]] = tmp[a]


@jit
def _values(ws, q):
    """Basic solution: z_C = -M_RC^-1 q_R, w_i = q_i + M_iC z_C for i not in R, else 0."""
    cols, rows, cc, pos_r, z, w = ws[COLS], ws[ROWS], ws[CC], ws[POS_R], ws[ZVAL], ws[WVAL]
    x = ws[LEX][2]
    k = ws[STATE][0]
    z[:] = 0.0
    for a in range(k):
        x[a] = -q[rows[a]]
    _lu_solve(ws, x)
    for b in range(k):
        z[cc[b]] = x[b]
    for i in range(q.shape[0]):
        if pos_r[i] >= 0:
            w[i] = 0.0
        else:
            s = q[i]
            for b in range(k):
                s += cols[i, cc[b]] * x[b]
            w[i] = s


@jit
def _direction(ws, enter_z, j):
    """Rate of change of every basic variable per unit of the entering one (z_j if enter_z,
    else w_j, j in R): ZRATE over C, WRATE over the rows outside R."""
    cols, rows, cc, pos_r, dz, dw = ws[COLS], ws[ROWS], ws[CC], ws[POS_R], ws[ZRATE], ws[WRATE]
    x = ws[LEX][2]
    k = ws[STATE][0]
    # M_RC dz_C = -M_Rj (z_j enters), or e_j (w_j enters: w_R = M_RC z_C + q_R)
    for a in range(k):
        if enter_z:
            x[a] = -cols[rows[a], j]
        else:
            x[a] = 1.0 if rows[a] == j else 0.0
    _lu_solve(ws, x)
    dz[:] = 0.0
    for b in range(k):
        dz[cc[b]] = x[b]
    for i in range(dw.shape[0]):
        if pos_r[i] >= 0:
            dw[i] = 0.0
            continue
        s = cols[i, j] if enter_z else 0.0
        for b in range(k):
            s += cols[i, cc[b]] * x[b]
        dw[i] = s


@jit
def _lexrow(ws, is_z, idx, out):
    """out[j] = d(basic variable)/d q_j, j < n: the variable's row of B^-1, which orders the
    perturbation of the lexicographic rule. z_c: -(M_RC^-1)_c,: on R, 0 off R;
    w_i: -(M_iC M_RC^-1) on R, e_i off R."""
    cols, rows, cc, pos_c = ws[COLS], ws[ROWS], ws[CC], ws[POS_C]
    x = ws[LEX][2]
    k = ws[STATE][0]
    n = ws[WVAL].shape[0]
    out[:n] = 0.0
    for b in range(k):
        if is_z:
            x[b] = 1.0 if b == pos_c[idx] else 0.0
        else:
            x[b] = cols[idx, cc[b]]
    if not is_z:
        out[idx] = 1.0
    _lu_solve_t(ws, x)
    for a in range(k):
        out[rows[a]] = -x[a]


@jit
def _lex_sign(ws, is_z, idx):
    """Sign (+1, 0, -1) of the first significant entry of a basic variable's B^-1 row."""
    row = ws[LEX][0]
    n = ws[WVAL].shape[0]
    _lexrow(ws, is_z, idx, row)
    big = 0.0
    for j in range(n):
        big = max(big, abs(row[j]))
    for j in range(n):
        if abs(row[j]) > 1e-11 * big:
            return 1 if row[j] > 0.0 else -1
    return 0


@jit
def _lex_better(ws, is_z_a, a, sa, is_z_b, b, sb):
    """True if candidate a's ratio row (its B^-1 row times sa) is lexicographically smaller
    than b's (times sb): the tie-break of equal value ratios."""
    ra, rb = ws[LEX][0], ws[LEX][1]
    n = ws[WVAL].shape[0]
    _lexrow(ws, is_z_a, a, ra)
    _lexrow(ws, is_z_b, b, rb)
    big = 0.0
    for j in range(n):
        ra[j] *= sa
        rb[j] *= sb
        big = max(big, abs(ra[j]), abs(rb[j]))
    for j in range(n):
        dif = ra[j] - rb[j]
        if abs(dif) > 1e-11 * big:
            return dif < 0.0
    return False


@jit
def _pivot(ws, enter_z, j, leave_z, i, q, scale):
    """Exchange the entering variable (z_j or w_j) with the leaving one (z_i or w_i), refactor
    and recompute the basic solution; False if the new basis is singular."""
    rows, cc, pos_r, pos_c, state = ws[ROWS], ws[CC], ws[POS_R], ws[POS_C], ws[STATE]
    k = state[0]
    if enter_z and not leave_z:
        # z_j in, w_i out: i joins R, j joins C
        rows[k] = i
        pos_r[i] = k
        cc[k] = j
        pos_c[j] = k
        state[0] = k + 1
    elif enter_z:
        # z_j takes z_i's place in C
        p = pos_c[i]
        cc[p] = j
        pos_c[j] = p
        pos_c[i] = -1
    elif not leave_z:
        # w_j in (j leaves R), w_i out (i takes j's place)
        p = pos_r[j]
        rows[p] = i
        pos_r[i] = p
        pos_r[j] = -1
    else:
        # w_j in, z_i out: both lists shrink, their last entries fill the holes
        p = pos_r[j]
        last = rows[k - 1]
        rows[p] = last
        pos_r[last] = p
        pos_r[j] = -1
        p = pos_c[i]
        last = cc[k - 1]
        cc[p] = last
        pos_c[last] = p
        pos_c[i] = -1
        state[0] = k - 1
    if not _factor(ws, scale):
        return False
    _values(ws, q)
    return True


@jit
def _start(ws, q, Md, mode, mscale):
    """Empty basis (every w basic, w = q); returns the scale of the relative tolerances."""
    ws[HAVE][:] = False
    ws[POS_R][:] = -1
    ws[POS_C][:] = -1
    ws[STATE][0] = 0
    ws[ZVAL][:] = 0.0
    scale = mscale
    for i in range(q.shape[0]):
        ws[WVAL][i] = q[i]
        scale = max(scale, abs(q[i]))
    if mode == DENSE:
        for i in range(Md.shape[0]):
            for j in range(Md.shape[1]):
                scale = max(scale, abs(Md[i, j]))
    return scale if scale > 0.0 else 1.0


@jit
def _ratio_test(ws, dist_z, dist, tol, ppm_rule):
    """Leaving variable of the current rates (ZRATE, WRATE) by the lexicographic minimum ratio.

    Candidates: basic variables that decrease (rate < -tol) from a non-negative value (for PPM:
    lexicographically non-negative) and, with ppm_rule, the distinguished variable (dist_z,
    dist), negative and increasing. The distinguished variable (for Lemke: z0, index n) wins a
    tie of the value ratio. Returns (found, leave_z, index)."""
    z, w, dz, dw, pos_c, pos_r = ws[ZVAL], ws[WVAL], ws[ZRATE], ws[WRATE], ws[POS_C], ws[POS_R]
    n = w.shape[0]
    best = np.inf
    best_z = False
    best_i = -1
    best_s = 0.0
    for cand in range(2 * n + 1):
        is_z = cand >= n
        i = cand - n if is_z else cand
        if is_z:
            if pos_c[i] < 0:
                continue
            val, rate = z[i], dz[i]
        else:
            if pos_r[i] >= 0:
                continue
            val, rate = w[i], dw[i]
        is_dist = is_z == dist_z and i == dist
        if ppm_rule and is_dist:
            if rate <= tol:
                continue
        else:
            if rate >= -tol or val < -tol:
                continue        # not decreasing, or another negative variable (PPM)
            if abs(val) <= tol:
                if ppm_rule and _lex_sign(ws, is_z, i) < 0:
                    continue    # lexicographically negative: does not block
                val = 0.0
        theta = -val / rate
        sgn = -1.0 / rate       # the ratio row is (value, B^-1 row) * sgn
        if best_i < 0:
            take = True
        elif abs(theta - best) > 1e-12 * max(1.0, abs(best)):
            take = theta < best
        elif best_z == dist_z and best_i == dist:
            take = False
        elif is_dist:
            take = True
        else:
            take = _lex_better(ws, is_z, i, sgn, best_z, best_i, best_s)
        if take:
            best = theta
            best_z = is_z
            best_i = i
            best_s = sgn
    return best_i >= 0, best_z, best_i


@jit
def _output(ws, z_out, w_out):
    """z_out, w_out from the basic solution."""
    for i in range(z_out.shape[0]):
        z_out[i] = ws[ZVAL][i]
        w_out[i] = ws[WVAL][i]


# ------------------------------------------------------------------------------------------------
# Lemke
# ------------------------------------------------------------------------------------------------
@jit
def lemke_kernel(mode, Md, U, V, W, mscale, q, cover, ws, maxpivot, tol, z_out, w_out):
    """Lemke's method on w = q + M z + d z0 (CPS 4.4.5); returns (status, pivots). M by mode
    (DENSE: Md; PRODUCT: U V - W'W, magnitude mscale), d = cover > 0. Writes z_out, w_out."""
    n = q.shape[0]
    scale = _start(ws, q, Md, mode, mscale)
    ptol = tol * scale
    if n == 0 or np.min(q) >= -ptol:
        _output(ws, z_out, w_out)
        return SOLVED, 0
    # z0 enters at max(-q_i / d_i): the lexicographically smallest (q_i, e_i) / d_i leaves;
    # among equal q_i / d_i that is the one with the largest index
    _column(ws, n, mode, Md, U, V, W, cover)
    r = 0
    for i in range(1, n):
        a, b = q[i] / cover[i], q[r] / cover[r]
        if a <= b + 1e-12 * max(1.0, abs(b)):
            r = i
    if not _pivot(ws, True, n, False, r, q, scale):
        _output(ws, z_out, w_out)
        return SINGULAR, 1
    pivots = 1
    enter_z, j = True, r            # the complement of w_r, which left
    while pivots < maxpivot:
        if enter_z:
            _column(ws, j, mode, Md, U, V, W, cover)
        _direction(ws, enter_z, j)
        found, leave_z, i = _ratio_test(ws, True, n, ptol, False)
        if not found:
            _output(ws, z_out, w_out)
            return RAY, pivots
        pivots += 1
        if not _pivot(ws, enter_z, j, leave_z, i, q, scale):
            _output(ws, z_out, w_out)
            return SINGULAR, pivots
        if leave_z and i == n:
            _output(ws, z_out, w_out)
            return SOLVED, pivots
        enter_z, j = not leave_z, i
    _output(ws, z_out, w_out)
    return MAXITER, pivots


# ------------------------------------------------------------------------------------------------
# principal pivoting method I
# ------------------------------------------------------------------------------------------------
@jit
def _warm_basis(ws, warm, mode, Md, U, V, W, q, scale):
    """Complementary basis with z_i basic for warm[i], dropping (in index order) each index
    whose principal block would be singular."""
    rows, cc, pos_r, pos_c, state = ws[ROWS], ws[CC], ws[POS_R], ws[POS_C], ws[STATE]
    for i in range(q.shape[0]):
        if not warm[i]:
            continue
        _column(ws, i, mode, Md, U, V, W, q)
        k = state[0]
        rows[k] = i
        cc[k] = i
        pos_r[i] = k
        pos_c[i] = k
        state[0] = k + 1
        if not _factor(ws, scale):
            pos_r[i] = -1
            pos_c[i] = -1
            state[0] = k
    _factor(ws, scale)
    _values(ws, q)


@jit
def ppm_kernel(mode, Md, U, V, W, mscale, q, warm, ws, maxpivot, tol, z_out, w_out):
    """Principal pivoting method I (Cottle-Dantzig, CPS 4.5) from the complementary basis of
    the warm set; returns (status, pivots). M by mode as lemke_kernel. Writes z_out, w_out;
    the final set is read with basis_sets(ws, out)."""
    n = q.shape[0]
    scale = _start(ws, q, Md, mode, mscale)
    ptol = tol * scale
    z, w, pos_c = ws[ZVAL], ws[WVAL], ws[POS_C]
    _warm_basis(ws, warm, mode, Md, U, V, W, q, scale)
    pivots = 0
    while True:
        # the distinguished variable: the first negative basic variable
        dist = -1
        dist_z = False
        for i in range(n):
            val = z[i] if pos_c[i] >= 0 else w[i]
            if val < -ptol:
                dist = i
                dist_z = pos_c[i] >= 0
                break
        if dist < 0:
            _output(ws, z_out, w_out)
            return SOLVED, pivots
        # a major cycle: drive complements until the distinguished variable leaves
        enter_z, j = not dist_z, dist
        while True:
            if pivots >= maxpivot:
                _output(ws, z_out, w_out)
                return MAXITER, pivots
            if enter_z:
                _column(ws, j, mode, Md, U, V, W, q)
            _direction(ws, enter_z, j)
            found, leave_z, i = _ratio_test(ws, dist_z, dist, ptol, True)
            if not found:
                # No blocking variable. With every other basic variable non-negative this
                # proves infeasibility (column-sufficient M); with other negative ones it need
                # not (a skew-symmetric M shows it), so Lemke's method, which decides the LCP
                # for copositive-plus M (every PSD one), takes over from scratch.
                status, more = lemke_kernel(mode, Md, U, V, W, mscale, q, np.ones(n), ws,
                                            maxpivot - pivots, tol, z_out, w_out)
                return status, pivots + more
            pivots += 1
            if not _pivot(ws, enter_z, j, leave_z, i, q, scale):
                _output(ws, z_out, w_out)
                return SINGULAR, pivots
            if leave_z == dist_z and i == dist:
                break
            enter_z, j = not leave_z, i


@jit
def basis_sets(ws, out):
    """out[i] = True where z_i is basic (w_i non-basic) in the final basis; returns the count."""
    cnt = 0
    for i in range(out.shape[0]):
        out[i] = ws[POS_R][i] >= 0
        if out[i]:
            cnt += 1
    return cnt


# ------------------------------------------------------------------------------------------------
# public API
# ------------------------------------------------------------------------------------------------
def _check(M, q):
    # a read-only array is copied: the kernels are compiled for writable ones
    M = np.require(M, dtype=float, requirements=("C", "W"))
    q = np.require(q, dtype=float, requirements=("C", "W")).ravel()
    n = q.shape[0]
    if M.shape != (n, n):
        raise ValueError(f"M must be ({n}, {n}) to match q of length {n}, not {M.shape}")
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(q))):
        raise ValueError("M and q must be finite")
    return M, q, n


def _info(ws, status, pivots, n, w):
    mask = np.zeros(n, np.bool_)
    basis_sets(ws, mask)
    return LCPInfo(LCPStatus(int(status)), int(pivots), np.flatnonzero(mask), w)


def _default_cap(n):
    return max(10_000, 100 * n)


def lemke(M, q, cover=None, nonbasic=None, maxpivot=None, tol=1e-12):
    """Solve w = M z + q, z >= 0, w >= 0, z'w = 0 by Lemke's method; returns (z, info).

    cover: covering vector d > 0 (default ones). nonbasic: indices to try first: if the
    complementary basis with z basic on them is a solution it is returned with 0 pivots
    (Nimble's warm start), else Lemke runs from the start. info.status is RAY when Lemke ends
    on a secondary ray (for copositive-plus M: no solution exists)."""
    M, q, n = _check(M, q)
    d = np.ones(n) if cover is None else np.require(cover, float, ("C", "W")).ravel()
    if d.shape != (n,) or np.any(d <= 0.0):
        raise ValueError("cover must be a positive vector of the size of q")
    cap = _default_cap(n) if maxpivot is None else int(maxpivot)
    ws = workspace(n)
    z = np.zeros(n)
    w = np.zeros(n)
    if nonbasic is not None:
        warm = np.zeros(n, np.bool_)
        warm[np.asarray(nonbasic, dtype=np.int64)] = True
        status, _ = ppm_kernel(DENSE, M, EMPTY2, EMPTY2, EMPTY2, 0.0, q, warm, ws, 0, tol, z, w)
        if status == LCPStatus.SOLVED:
            return z, _info(ws, status, 0, n, w)
    status, pivots = lemke_kernel(DENSE, M, EMPTY2, EMPTY2, EMPTY2, 0.0, q, d, ws, cap, tol, z, w)
    return z, _info(ws, status, pivots, n, w)


def ppm(M, q, nonbasic=None, maxpivot=None, tol=1e-12):
    """Solve the LCP by the principal pivoting method I from the complementary basis with z_i
    basic for i in `nonbasic` (paper's Algorithm 2); returns (z, info), info.nonbasic the final
    set (pass it to the next call). For column-sufficient M (e.g. positive semi-definite):
    a solution, or status RAY when none exists."""
    M, q, n = _check(M, q)
    cap = _default_cap(n) if maxpivot is None else int(maxpivot)
    warm = np.zeros(n, np.bool_)
    if nonbasic is not None:
        idx = np.asarray(nonbasic, dtype=np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"nonbasic indices must lie in [0, {n})")
        warm[idx] = True
    ws = workspace(n)
    z = np.zeros(n)
    w = np.zeros(n)
    status, pivots = ppm_kernel(DENSE, M, EMPTY2, EMPTY2, EMPTY2, 0.0, q, warm, ws, cap, tol, z, w)
    return z, _info(ws, status, pivots, n, w)


def classify(z, w, tol=1e-9):
    """Contact.CLAMPING where z_i > tol, SEPARATING where w_i > tol, TIED where both vanish."""
    z = np.asarray(z)
    w = np.asarray(w)
    out = np.full(z.shape, int(Contact.TIED), np.int64)
    out[w > tol] = int(Contact.SEPARATING)
    out[z > tol] = int(Contact.CLAMPING)
    return out

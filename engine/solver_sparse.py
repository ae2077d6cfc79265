"""Newton's method on the primal problem for a Data with sparse rows (m.opt.jacobian): the
Hessian M + J' D J factored island by island, never as an nv x nv matrix.

The dense Newton (solver.newton) forms H = M + J' D J over all nv dofs. Here the dofs are
grouped into islands: two dofs share an island when the inertia couples them (a dof and its
parent: M's tree pattern) or a constraint row touches both (its efc_range). H has no entry
between two islands, so in the islands' dof order it is block diagonal and its Cholesky factor
is the factor of each block: the same arithmetic as the dense factor, whose products with the
zeros between islands add nothing. A block is dense, its cost the island's dofs squared:
10,000 free bodies resting apart on a plane cost 10,000 blocks of 6 x 6, a pile of bodies
touching each other one block over the pile's dofs. (MuJoCo's sparse Newton factors H over the
union of the patterns of M and J'J instead.) The iteration itself, gradient, direction, exact
line search and stop, is solver.newton's; hard rows never reach here (types.sparse_jacobian).

When every row lies on a path to the root of the kinematic tree (solver.tree_rows: robots and
bodies touching the world, joint limits), H has the sparsity of M itself and is factored along
the tree in qM's layout without fill-in, as M is (tree_hessian): a robot of a hundred dofs on
the floor is one island, whose dense block would cost the cube of its dofs.

The islands and the blocks are allocated at each solve, in proportion to the dofs and to the
squares of the islands' sizes.
"""
import math

import numpy as np

from .constraint import (CONTACT_ELLIPTIC, EQUALITY, FRICTION_DOF, FRICTION_TENDON, row_axpy,
                         row_col, row_dot)
from .jit import jit
from .math import MINVAL
from .smooth import factor_m, mul_m, solve_m
from .solver import (NEWTON_FLOOR, _cholesky_small, _cholesky_solve, _cone_hessian, _object_DJ,
                     _object_hessian_tree, advance, line_search, object_size, object_z,
                     project_object, tree_rows)


@jit
def _root(parent, k):
    """Root of k in the union-find forest parent (with path halving)."""
    while parent[k] != k:
        parent[k] = parent[parent[k]]
        k = parent[k]
    return k


@jit
def _union(parent, a, b):
    """Join the sets of a and b; the smaller index is the root."""
    ra = _root(parent, a)
    rb = _root(parent, b)
    if ra < rb:
        parent[rb] = ra
    elif rb < ra:
        parent[ra] = rb


@jit
def islands(m, d, dof_island, dof_local, island_adr, island_dof, island_hadr):
    """The islands of the dofs (module docstring): dof_island (nv) the island of each dof,
    dof_local its index within the island, island_dof the dofs island after island (in
    increasing order within each), island_adr (nisland + 1) where each island starts there and
    island_hadr (nisland + 1) where its block starts in the Hessian's storage. Returns nisland."""
    nv = d.qvel.shape[0]
    parent = np.empty(nv, np.int64)
    for k in range(nv):
        parent[k] = k
    for k in range(nv):
        if m.dof_parentid[k] >= 0:
            _union(parent, k, m.dof_parentid[k])
    for i in range(d.nefc[0]):
        first = -1
        for r in range(2):
            a = d.efc_range[i, 2 * r]
            for k in range(a, a + d.efc_range[i, 2 * r + 1]):
                if first < 0:
                    first = k
                else:
                    _union(parent, first, k)
    for k in range(nv):
        dof_island[k] = _root(parent, k)      # roots first: labelling overwrites parent
    nisland = 0
    for k in range(nv):
        root = dof_island[k]                  # <= k: labelled already
        if root == k:
            parent[k] = nisland               # a root's entry holds its island from here on
            island_adr[nisland + 1] = 0
            nisland += 1
        isl = parent[root]
        dof_island[k] = isl
        dof_local[k] = island_adr[isl + 1]
        island_adr[isl + 1] += 1
    island_adr[0] = 0
    island_hadr[0] = 0
    for b in range(nisland):
        n = island_adr[b + 1]
        island_hadr[b + 1] = island_hadr[b] + n * n
        island_adr[b + 1] += island_adr[b]
    for k in range(nv):
        island_dof[island_adr[dof_island[k]] + dof_local[k]] = k
    return nisland


@jit
def mul_inertia(m, d, x, out, damping):
    """out = (M + h B) x, the inertia of the step as factored in qLD (B: the dof damping when
    the integrator folds it in, damping)."""
    mul_m(m, d.qM, x, out)
    if damping:
        h = m.opt_timestep[0]
        for k in range(x.shape[0]):
            out[k] += h * m.dof_damping[k] * x[k]


@jit
def primal_cost(m, d, vnext, vhat, f, damping, dv, Mdv):
    """c(v') of solver.primal_cost with the sparse inertia; writes f = f*(J v') and leaves
    dv = v' - v^, Mdv = (M + h B) dv."""
    nv = vnext.shape[0]
    for a in range(nv):
        dv[a] = vnext[a] - vhat[a]
    mul_inertia(m, d, dv, Mdv, damping)
    cost = 0.0
    for a in range(nv):
        cost += 0.5 * dv[a] * Mdv[a]
    z, out = d.solver_vec[0, :6], d.solver_vec[1, :6]
    nefc = d.nefc[0]
    i = 0
    while i < nefc:
        n = object_size(d, i)
        for k in range(n):
            z[k] = (d.efc_vstar[i + k] - row_dot(d, i + k, d.efc_J, vnext)) / d.efc_R[i + k]
        project_object(d, i, n, z, out, d.efc_R[i:i + n])
        for k in range(n):
            f[i + k] = out[k]
            cost += out[k] * d.efc_R[i + k] * z[k] - 0.5 * d.efc_R[i + k] * out[k] * out[k]
        i += n
    return cost


@jit
def _object_D(d, i, n, f, z, D, zh):
    """D = d f* / d (v* - y) of the object at row i (as solver._object_DJ)."""
    t = d.efc_type[i]
    D[:, :] = 0.0
    if t == EQUALITY:
        D[0, 0] = 1.0 / d.efc_R[i]
    elif t == FRICTION_DOF or t == FRICTION_TENDON:
        if abs(z[0]) < d.efc_frictionloss[i]:
            D[0, 0] = 1.0 / d.efc_R[i]
    elif t == CONTACT_ELLIPTIC:
        _cone_hessian(d, i, n, z, D, zh)
    else:
        if z[0] > 0.0:
            D[0, 0] = 1.0 / d.efc_R[i]


@jit
def hessian(m, d, H, dof_island, dof_local, island_adr, island_hadr, f, y0, z, D, zh, damping):
    """H: the blocks of M + h B + J' D J, island by island (block b of n = island_adr[b + 1] -
    island_adr[b] dofs: H[island_hadr[b]:island_hadr[b + 1]] row-major in its local order)."""
    H[:] = 0.0
    h = m.opt_timestep[0]
    for k in range(d.qvel.shape[0]):
        b = dof_island[k]
        o = island_hadr[b]
        n = island_adr[b + 1] - island_adr[b]
        lk = dof_local[k]
        adr = m.dof_Madr[k]
        H[o + lk * n + lk] = d.qM[adr] + (h * m.dof_damping[k] if damping else 0.0)
        j = m.dof_parentid[k]
        adr += 1
        while j >= 0:
            lj = dof_local[j]
            H[o + lk * n + lj] = d.qM[adr]
            H[o + lj * n + lk] = d.qM[adr]
            j = m.dof_parentid[j]
            adr += 1
    J = d.efc_J
    rng = d.efc_range
    nefc = d.nefc[0]
    i = 0
    while i < nefc:
        n = object_size(d, i)
        object_z(d, i, n, y0, z)
        if rng[i, 1] + rng[i, 3] == 0:
            i += n                         # rows on no dof (between bodies without dofs)
            continue
        _object_D(d, i, n, f, z, D, zh)
        # the object's rows share their dofs (efc_range) and so one island
        b = dof_island[rng[i, 0]] if rng[i, 1] > 0 else dof_island[rng[i, 2]]
        o = island_hadr[b]
        ni = island_adr[b + 1] - island_adr[b]
        for a in range(n):
            for c in range(n):
                if D[a, c] == 0.0:
                    continue
                for r1 in range(2):
                    adr1 = rng[i, 2 * r1]
                    c1 = row_col(d, i, r1) - adr1
                    for p in range(adr1, adr1 + rng[i, 2 * r1 + 1]):
                        ja = J[i + a, p + c1] * D[a, c]
                        if ja == 0.0:
                            continue
                        row = o + dof_local[p] * ni
                        for r2 in range(2):
                            adr2 = rng[i, 2 * r2]
                            c2 = row_col(d, i, r2) - adr2
                            for q in range(adr2, adr2 + rng[i, 2 * r2 + 1]):
                                H[row + dof_local[q]] += ja * J[i + c, q + c2]
        i += n


@jit
def tree_hessian(m, d, Hs, LDinv, y0, z, D, zh, DJ, damping):
    """Hs, LDinv: the L'DL factor of M + h B + J' D J in qM's layout, when every row lies on a
    path to the root (solver.tree_rows: then the sum has M's sparsity and the factor along
    the tree no fill-in), instead of the islands' dense blocks."""
    h = m.opt_timestep[0]
    Hs[:] = d.qM
    if damping:
        for k in range(d.qvel.shape[0]):
            Hs[m.dof_Madr[k]] += h * m.dof_damping[k]
    nefc = d.nefc[0]
    i = 0
    while i < nefc:
        n = object_size(d, i)
        object_z(d, i, n, y0, z)
        if _object_DJ(d, i, n, z, D, zh, DJ):
            _object_hessian_tree(m, d, i, n, Hs, DJ)
        i += n
    factor_m(m, Hs, LDinv)


@jit
def newton(m, d, vnext, vhat, f, iterations, tolerance, damping):
    """solver.newton on the sparse layout (no hard rows); vnext holds the start and receives
    the optimum. Returns (iterations, residual)."""
    nv = vnext.shape[0]
    nefc = d.nefc[0]
    grad = np.empty(nv)
    p = np.empty(nv)
    Jf = np.empty(nv)
    dv = np.empty(nv)
    Mdv = np.empty(nv)
    Mp = np.empty(nv)
    work = np.empty(nv)
    y0 = np.empty(max(nefc, 1))
    jp = np.empty(max(nefc, 1))
    z = np.empty(6)
    out = np.empty(6)
    D = np.empty((6, 6))
    zh = np.empty(12)
    dof_island = np.empty(nv, np.int64)
    dof_local = np.empty(nv, np.int64)
    island_dof = np.empty(nv, np.int64)
    island_adr = np.zeros(nv + 1, np.int64)
    island_hadr = np.zeros(nv + 1, np.int64)
    # rows on paths to the root: H in qM's layout, factored along the tree (solver.tree_rows)
    tree = tree_rows(m, d)
    nisland = 0 if tree else islands(m, d, dof_island, dof_local, island_adr, island_dof,
                                     island_hadr)
    H = np.empty(d.qM.shape[0] if tree else island_hadr[nisland])
    LDinv = np.empty(nv if tree else 0)
    DJ = np.empty((6, nv if tree else 0))
    it = 0
    residual = 0.0
    primal_cost(m, d, vnext, vhat, f, damping, dv, Mdv)
    for it in range(1, iterations + 1):
        # gradient (M + h B)(v' - v^) - J' f (Mdv is current: primal_cost computed it)
        gmax = 0.0
        scale = MINVAL
        finite = True
        Jf[:] = 0.0
        for r in range(nefc):
            if f[r] != 0.0:
                row_axpy(d, r, d.efc_J, f[r], Jf)
        for a in range(nv):
            grad[a] = Mdv[a] - Jf[a]
            finite = finite and math.isfinite(grad[a])
            gmax = max(gmax, abs(grad[a]))
            scale = max(scale, abs(Mdv[a]), abs(Jf[a]))
        residual = gmax / scale
        if not finite:
            residual = math.nan
            break
        if residual < max(tolerance, NEWTON_FLOOR):
            break
        for r in range(nefc):
            y0[r] = row_dot(d, r, d.efc_J, vnext)
        if tree:
            tree_hessian(m, d, H, LDinv, y0, z, D, zh, DJ, damping)
            for a in range(nv):
                p[a] = -grad[a]
            solve_m(m, H, LDinv, p)
        else:
            hessian(m, d, H, dof_island, dof_local, island_adr, island_hadr, f, y0, z, D, zh,
                    damping)
        ok = True
        for b in range(nisland):
            n = island_adr[b + 1] - island_adr[b]
            block = H[island_hadr[b]:island_hadr[b + 1]].reshape((n, n))
            if not _cholesky_small(block, n):
                ok = False
                break
            x = work[:n]
            for a in range(n):
                x[a] = -grad[island_dof[island_adr[b] + a]]
            _cholesky_solve(block, n, x)
            for a in range(n):
                p[island_dof[island_adr[b] + a]] = x[a]
        if not ok:
            residual = math.nan            # not positive definite: a broken model or state
            break
        # exact line search (solver.newton's)
        dlo = 0.0
        for a in range(nv):
            dlo += p[a] * grad[a]
        if dlo >= 0.0:
            break
        mul_inertia(m, d, p, Mp, damping)
        a0 = 0.0
        a1 = 0.0
        for a in range(nv):
            a0 += p[a] * Mdv[a]
            a1 += p[a] * Mp[a]
        for r in range(nefc):
            jp[r] = row_dot(d, r, d.efc_J, p)
        alpha = line_search(d, y0, jp, a0, a1, dlo, z, out)
        moved = advance(vnext, alpha, p)
        primal_cost(m, d, vnext, vhat, f, damping, dv, Mdv)
        if not moved:
            break                          # the next iteration would repeat this one
    return it, residual


@jit
def solve_newton(m, d, f, vhat, vnext, warm, damping):
    """forward._solve_newton on the sparse layout, before noslip: the warm start vnext kept
    if its cost is below the cold start's (v^), then newton. Returns (iterations, residual)."""
    nv = vnext.shape[0]
    dv = np.empty(nv)
    Mdv = np.empty(nv)
    if warm:
        # "not <=": a NaN cost (a bad warm start) falls back to the cold start too
        if not (primal_cost(m, d, vnext, vhat, f, damping, dv, Mdv)
                <= primal_cost(m, d, vhat, vhat, f, damping, dv, Mdv)):
            vnext[:] = vhat
    else:
        vnext[:] = vhat
    return newton(m, d, vnext, vhat, f, m.opt_iterations[0], m.opt_tolerance[0], damping)

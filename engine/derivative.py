"""Analytical derivatives of the smooth dynamics (MuJoCo's engine_derivative.c).

    smooth_vel   qDeriv = d (qfrc_actuator + qfrc_passive [- qfrc_bias]) / d qvel  (mjd_smooth_vel)
    actuator_vel qDeriv += d qfrc_actuator / d qvel                              (mjd_actuator_vel)
    passive_vel  qDeriv += d qfrc_passive / d qvel                               (mjd_passive_vel)
    rne_vel      qDeriv -= d qfrc_bias / d qvel                                  (mjd_rne_vel)

Storage, MuJoCo's: qDeriv (nD) is a sparse nv x nv matrix in compressed rows (m.D_rownnz,
D_rowadr, D_diag, D_colind). Row i holds the dofs of i's kinematic chain in ascending order:
its dof ancestors (D_diag of them), i, then its dof descendants, which are numbered
contiguously after i; so the entry (i, j) is at
    D_rowadr[i] + D_diag[j]           if j < i  (j an ancestor of i),
    D_rowadr[i] + D_diag[i] + j - i   if j >= i (i itself or a descendant)      (entry_adr)
and nD = 2 nM - nv. The pattern is that of M, made symmetric: dofs of different branches do not
couple. Couplings between branches through tendons or actuators (J' B J with J reaching two
branches) are dropped, as MuJoCo drops them; within the pattern every entry is exact.

qDeriv is what the implicit integrators need (forward.py: M - h qDeriv); dense_D turns it into
a dense matrix for tests and users. MuJoCo's terms for muscle gains and the ellipsoid fluid
model (mjd_muscleGain_vel, mjd_ellipsoidFluid) belong here once the engine has those forces.
"""
import math

import numpy as np

from . import actuator
from .enums import BiasType, DisableBit, DynType, GainType, JointType, TrnType
from .jit import jit
from .math import MINVAL, add6, cross_force, cross_motion, dot6, mul_inert_vec, row6, row10
from .smooth import apply_ft
from .types import Data, Model

FREE = int(JointType.FREE)
BALL = int(JointType.BALL)
NO_DAMPER = int(DisableBit.PASSIVE | DisableBit.DAMPER)


# ------------------------------------------------------------------------------------------------
# sparsity (computed once, by set_const)
# ------------------------------------------------------------------------------------------------
def set_dof_dof_sparsity(m: Model) -> None:
    """D_rownnz, D_rowadr, D_diag, D_colind from dof_parentid, and body_isfree."""
    nv = m.nv
    parent = m.dof_parentid
    depth = np.zeros(nv, dtype=np.int64)      # number of dof ancestors
    for i in range(nv):
        depth[i] = depth[parent[i]] + 1 if parent[i] >= 0 else 0
    nsub = np.ones(nv, dtype=np.int64)        # dof descendants, i included
    for i in range(nv - 1, -1, -1):
        if parent[i] >= 0:
            nsub[parent[i]] += nsub[i]
    for i in range(nv):
        # the descendants of i are i + 1 .. i + nsub - 1: each one's parent lies in [i, itself)
        for j in range(i + 1, i + nsub[i]):
            if not i <= parent[j] < j:
                raise ValueError("dofs are not numbered depth first: dof %d is not a "
                                 "descendant of dof %d" % (j, i))
    m.D_diag[:] = depth
    m.D_rownnz[:] = depth + nsub
    if nv:
        m.D_rowadr[0] = 0
        m.D_rowadr[1:] = np.cumsum(m.D_rownnz)[:-1]
    for i in range(nv):
        chain = []
        j = parent[i]
        while j >= 0:
            chain.append(j)
            j = parent[j]
        a = m.D_rowadr[i]
        m.D_colind[a:a + depth[i]] = chain[::-1]
        m.D_colind[a + depth[i]:a + m.D_rownnz[i]] = np.arange(i, i + nsub[i])
    # MuJoCo's mj_isFreeBody: one free joint, a tree of 6 dofs, no mass below the body
    for b in range(1, m.nbody):
        j = m.body_jntadr[b]
        m.body_isfree[b] = int(m.body_jntnum[b] == 1 and m.jnt_type[j] == FREE
                               and m.body_treedofnum[b] == 6
                               and m.body_subtreemass[b] == m.body_mass[b])


def dense_D(m: Model, values: np.ndarray) -> np.ndarray:
    """The dense nv x nv matrix of a vector in the D layout (qDeriv, qLU)."""
    out = np.zeros((m.nv, m.nv))
    for i in range(m.nv):
        a, n = m.D_rowadr[i], m.D_rownnz[i]
        out[i, m.D_colind[a:a + n]] = values[a:a + n]
    return out


@jit
def entry_adr(m, i, j):
    """Address of entry (i, j) of a D-layout matrix; i and j must lie on one kinematic chain."""
    if j < i:
        return m.D_rowadr[i] + m.D_diag[j]
    return m.D_rowadr[i] + m.D_diag[i] + j - i


@jit
def add_jtbj(m, d, J, B):
    """qDeriv += J' B J for one row J (nv) and a scalar B, within the D pattern (MuJoCo's
    addJTBJSparse: the entries between branches are dropped)."""
    for k in range(J.shape[0]):
        jk = J[k]
        if jk == 0.0:
            continue
        s = jk * B
        a = m.D_rowadr[k]
        for adr in range(a, a + m.D_rownnz[k]):
            d.qDeriv[adr] += s * J[m.D_colind[adr]]


# ------------------------------------------------------------------------------------------------
# stages
# ------------------------------------------------------------------------------------------------
@jit
def smooth_vel(m, d, flg_bias):
    """qDeriv = d (qfrc_actuator + qfrc_passive - qfrc_bias) / d qvel at the state of the last
    forward pass; without the bias term unless flg_bias (MuJoCo's mjd_smooth_vel)."""
    d.qDeriv[:] = 0.0
    actuator_vel(m, d)
    passive_vel(m, d)
    if flg_bias:
        rne_vel(m, d)


@jit
def actuator_vel(m, d):
    """qDeriv += d qfrc_actuator / d qvel: moment' (d force / d velocity) moment per actuator,
    with d force / d velocity = biasprm[2] (affine bias) + gainprm[2] * input (affine gain),
    the input being the control (clamped to ctrlrange, as the force uses it) or the
    activation (the next one with actearly). Actuators whose force is at its forcerange, and
    joint actuators whose joint's total actuator force is at its actuatorfrcrange, contribute
    nothing (MuJoCo's mjd_actuator_vel)."""
    flags = m.opt_disableflags[0]
    if flags & DisableBit.ACTUATION:
        return
    nu = m.actuator_trntype.shape[0]
    bad = False                    # a non-finite control zeroes them all (fwd_actuation)
    for i in range(nu):
        if not math.isfinite(d.ctrl[i]):
            bad = True
    for i in range(nu):
        if m.actuator_forcelimited[i]:
            force = d.actuator_force[i]
            if force <= m.actuator_forcerange[i, 0] or force >= m.actuator_forcerange[i, 1]:
                continue
        trn = m.actuator_trntype[i]
        if trn == TrnType.JOINT or trn == TrnType.JOINTINPARENT:
            j = m.actuator_trnid[i, 0]
            if m.jnt_actfrclimited[j]:
                # the joint's total actuator force at its actuatorfrcrange (MuJoCo 4)
                total = d.qfrc_actuator[m.jnt_dofadr[j]]
                if total <= m.jnt_actfrcrange[j, 0] or total >= m.jnt_actfrcrange[j, 1]:
                    continue
        bias_vel = 0.0
        gain_vel = 0.0
        if m.actuator_biastype[i] == BiasType.AFFINE:
            bias_vel = m.actuator_biasprm[i, 2]
        if m.actuator_gaintype[i] == GainType.AFFINE:
            gain_vel = m.actuator_gainprm[i, 2]
        if gain_vel != 0.0:
            if m.actuator_dyntype[i] == DynType.NONE:
                ctrl = 0.0 if bad else d.ctrl[i]
                if m.actuator_ctrllimited[i] and not flags & DisableBit.CLAMPCTRL:
                    ctrl = min(max(ctrl, m.actuator_ctrlrange[i, 0]), m.actuator_ctrlrange[i, 1])
                bias_vel += gain_vel * ctrl
            else:
                last = m.actuator_actadr[i] + m.actuator_actnum[i] - 1
                act = d.act[last]
                if m.actuator_actearly[i]:
                    act = actuator.next_activation(m, i, act, d.act_dot[last], m.opt_timestep[0])
                bias_vel += gain_vel * act
        if bias_vel != 0.0:
            add_jtbj(m, d, d.actuator_moment[i], bias_vel)


@jit
def passive_vel(m, d):
    """qDeriv += d qfrc_passive / d qvel: the inertia-box fluid forces, -dof_damping on the
    diagonal, -tendon_damping ten_J' ten_J (MuJoCo's mjd_passive_vel)."""
    flags = m.opt_disableflags[0]
    if flags & DisableBit.PASSIVE or (flags & DisableBit.SPRING and flags & DisableBit.DAMPER):
        return
    if m.opt_viscosity[0] > 0.0 or m.opt_density[0] > 0.0:
        for b in range(1, m.body_parentid.shape[0]):
            if m.body_mass[b] >= MINVAL:
                inertia_box_fluid_vel(m, d, b)
    if flags & NO_DAMPER:
        return
    for i in range(d.qvel.shape[0]):
        d.qDeriv[m.D_rowadr[i] + m.D_diag[i]] -= m.dof_damping[i]
    for t in range(m.tendon_damping.shape[0]):
        b = -m.tendon_damping[t]
        if b != 0.0:
            add_jtbj(m, d, d.ten_J[t], b)


@jit
def inertia_box_fluid_vel(m, d, b):
    """qDeriv += J' B J for the drag of body b's equivalent inertia box (passive.py's
    inertia_box_fluid): J the rows of the body's com Jacobian in its inertial frame (rotation
    then translation), B diagonal: viscous -pi diam^3 visc and -3 pi diam visc, quadratic
    -2 (drag coefficient) |v_k| (MuJoCo's mjd_inertiaBoxFluid)."""
    mass = m.body_mass[b]
    i0 = m.body_inertia[b, 0]
    i1 = m.body_inertia[b, 1]
    i2 = m.body_inertia[b, 2]
    box = (math.sqrt(max(MINVAL, i1 + i2 - i0) / mass * 6.0),
           math.sqrt(max(MINVAL, i0 + i2 - i1) / mass * 6.0),
           math.sqrt(max(MINVAL, i0 + i1 - i2) / mass * 6.0))
    # local velocity at the com, less the wind: v_k = J_k qvel - wind_k
    J = d.deriv_row
    rho = m.opt_density[0]
    visc = m.opt_viscosity[0]
    diam = (box[0] + box[1] + box[2]) / 3.0
    for k in range(6):
        axis = (d.ximat[b, k % 3], d.ximat[b, 3 + k % 3], d.ximat[b, 6 + k % 3])
        J[:] = 0.0
        point = (d.xipos[b, 0], d.xipos[b, 1], d.xipos[b, 2])
        zero = (0.0, 0.0, 0.0)
        if k < 3:
            apply_ft(m, d, zero, axis, point, b, J, 1.0)
        else:
            apply_ft(m, d, axis, zero, point, b, J, 1.0)
        B = 0.0
        if visc > 0.0:
            B = -math.pi * diam ** 3 * visc if k < 3 else -3.0 * math.pi * diam * visc
        if rho > 0.0:
            vel = 0.0
            for c in range(J.shape[0]):
                vel += J[c] * d.qvel[c]
            if k >= 3:
                vel -= (d.ximat[b, k % 3] * m.opt_wind[0] + d.ximat[b, 3 + k % 3] * m.opt_wind[1]
                        + d.ximat[b, 6 + k % 3] * m.opt_wind[2])
            a, c1, c2 = k % 3, (k + 1) % 3, (k + 2) % 3
            if k < 3:
                # torque -rho box_a (box_c1^4 + box_c2^4) |w| w / 64
                B -= rho * box[a] * (box[c1] ** 4 + box[c2] ** 4) * 2.0 * abs(vel) / 64.0
            else:
                # force -rho/2 box_c1 box_c2 |v| v
                B -= 0.5 * rho * box[c1] * box[c2] * 2.0 * abs(vel)
        if B != 0.0:
            add_jtbj(m, d, J, B)


@jit
def _rne_vel_column(m, d, k):
    """d cfrc_int / d qvel_k of the bodies of the subtree of dof k's body (deriv_cfrc, each
    accumulated over its own subtree as smooth.rne does); returns the end of that subtree.
    The derivative of smooth.com_vel and smooth.rne in the direction of dof k:
        d cvel      = d cvel_parent + cdof_k [dof k of this body]
        d cdof_dot  = d cvel x cdof                     (the partial velocity com_vel uses)
        d cacc      = d cacc_parent + sum_j d cdof_dot_j qvel_j + cdof_dot_k [dof k]
        d cfrc      = cinert d cacc + d cvel x* (cinert cvel) + cvel x* (cinert d cvel)
    Bodies outside the subtree keep their velocities, so only the subtree is visited (bodies
    are numbered depth first: the subtree is contiguous)."""
    nbody = m.body_parentid.shape[0]
    b0 = m.dof_bodyid[k]
    end = b0 + 1
    while end < nbody and m.body_parentid[end] >= b0:
        end += 1
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for b in range(b0, end):
        vel = zero
        acc = zero
        if b > b0:
            vel = row6(d.deriv_cvel, m.body_parentid[b])
            acc = row6(d.deriv_cacc, m.body_parentid[b])
        for jnt in range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b]):
            da = m.jnt_dofadr[jnt]
            t = m.jnt_type[jnt]
            if t == FREE:
                for c in range(3):
                    if da + c == k:
                        vel = add6(vel, row6(d.cdof, k))
                da += 3
            if t == FREE or t == BALL:
                for c in range(3):
                    acc = _add_scaled(acc, cross_motion(vel, row6(d.cdof, da + c)),
                                      d.qvel[da + c])
                    if da + c == k:
                        acc = add6(acc, row6(d.cdof_dot, k))
                for c in range(3):
                    if da + c == k:
                        vel = add6(vel, row6(d.cdof, k))
            else:
                acc = _add_scaled(acc, cross_motion(vel, row6(d.cdof, da)), d.qvel[da])
                if da == k:
                    acc = add6(acc, row6(d.cdof_dot, k))
                    vel = add6(vel, row6(d.cdof, k))
        inert = row10(d.cinert, b)
        cvel = row6(d.cvel, b)
        f = add6(add6(mul_inert_vec(inert, acc), cross_force(vel, mul_inert_vec(inert, cvel))),
                 cross_force(cvel, mul_inert_vec(inert, vel)))
        for c in range(6):
            d.deriv_cvel[b, c] = vel[c]
            d.deriv_cacc[b, c] = acc[c]
            d.deriv_cfrc[b, c] = f[c]
    for b in range(end - 1, b0, -1):
        p = m.body_parentid[b]
        for c in range(6):
            d.deriv_cfrc[p, c] += d.deriv_cfrc[b, c]
    return end


@jit
def _add_scaled(a, b, s):
    return (a[0] + b[0] * s, a[1] + b[1] * s, a[2] + b[2] * s, a[3] + b[3] * s,
            a[4] + b[4] * s, a[5] + b[5] * s)


@jit
def rne_vel(m, d):
    """qDeriv -= d qfrc_bias / d qvel, column by column (MuJoCo's mjd_rne_vel computes the same
    entries row-wise): column k is nonzero on the dof ancestors of k, whose bodies receive the
    subtree's force d cfrc_int(body of k), and on k's descendants, cdof_j . d cfrc_int(body j)."""
    nv = d.qvel.shape[0]
    for k in range(nv):
        end = _rne_vel_column(m, d, k)
        b0 = m.dof_bodyid[k]
        f0 = row6(d.deriv_cfrc, b0)
        j = m.dof_parentid[k]
        while j >= 0:
            d.qDeriv[entry_adr(m, j, k)] -= dot6(row6(d.cdof, j), f0)
            j = m.dof_parentid[j]
        j = k
        while j < nv and m.dof_bodyid[j] < end:
            d.qDeriv[entry_adr(m, j, k)] -= dot6(row6(d.cdof, j),
                                                 row6(d.deriv_cfrc, m.dof_bodyid[j]))
            j += 1


@jit
def rne_vel_block(m, d, adr, n, out, scale):
    """out[r, c] += scale * d qfrc_bias[adr + r] / d qvel[adr + c] for r, c < n, where the dofs
    adr .. adr + n - 1 are a whole subtree (a standalone free body's)."""
    for c in range(n):
        _rne_vel_column(m, d, adr + c)
        for r in range(n):
            j = adr + r
            out[r, c] += scale * dot6(row6(d.cdof, j), row6(d.deriv_cfrc, m.dof_bodyid[j]))


# ------------------------------------------------------------------------------------------------
# sparse LU of a D-layout matrix (no fill-in along the kinematic tree)
# ------------------------------------------------------------------------------------------------
@jit
def factor_lu(m, LU):
    """In-place LU = (U + I) L of a D-layout matrix, eliminating from the last dof up (MuJoCo's
    mju_factorLUSparse): U unit upper (entries (j, i), j an ancestor of i), L lower with the
    diagonal. The tree pattern is closed under this elimination (no fill-in)."""
    nv = m.D_rownnz.shape[0]
    for i in range(nv - 1, -1, -1):
        ii = entry_adr(m, i, i)
        j = m.dof_parentid[i]
        while j >= 0:
            ji = entry_adr(m, j, i)
            LU[ji] /= LU[ii]
            s = LU[ji]
            # row j -= s * row i over the columns k < i of row i (the ancestors of i)
            k = m.dof_parentid[i]
            while k >= 0:
                LU[entry_adr(m, j, k)] -= s * LU[entry_adr(m, i, k)]
                k = m.dof_parentid[k]
            j = m.dof_parentid[j]


@jit
def solve_lu(m, LU, x):
    """x <- ((U + I) L)^-1 x with the factor of factor_lu (MuJoCo's mju_solveLUSparse)."""
    nv = x.shape[0]
    # (U + I) y = x, from the last row up: row i's upper entries are its descendants
    for i in range(nv - 1, -1, -1):
        a = m.D_rowadr[i] + m.D_diag[i]
        s = x[i]
        for adr in range(a + 1, m.D_rowadr[i] + m.D_rownnz[i]):
            s -= LU[adr] * x[m.D_colind[adr]]
        x[i] = s
    # L z = y, from the first row down: row i's lower entries are its ancestors
    for i in range(nv):
        a = m.D_rowadr[i]
        s = x[i]
        for adr in range(a, a + m.D_diag[i]):
            s -= LU[adr] * x[m.D_colind[adr]]
        x[i] = s / LU[a + m.D_diag[i]]


# ------------------------------------------------------------------------------------------------
# public API
# ------------------------------------------------------------------------------------------------
def mjd_smooth_vel(m: Model, d: Data, flg_bias: bool = True) -> None:
    """d.qDeriv = d (qfrc_actuator + qfrc_passive - qfrc_bias) / d qvel (the bias term only with
    flg_bias) at the state of the last forward pass, in the D layout (dense_D for a matrix)."""
    smooth_vel(m._struct, d._struct, bool(flg_bias))

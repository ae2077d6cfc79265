"""Constraint rows: equality constraints, friction loss, limits and contacts, with their softness.

Rows are stored in the paper's order of objects: equality constraints (soft Gauss principle,
unconstrained impulses, eq. 5-7), then friction loss (impulse in [-eta, eta]), limits (impulse
>= 0) and contacts (normal then friction dimensions, impulse in the friction cone, eq. 9).

Softness (paper section V), per row i with the object's epsilon, kappa and rmin (its own
values, or m.opt's where it has none):
    R_ii = max(A_ii eps, rmin)                      (27)  A_ii approximated at qpos0
    B_ii = 2 (1 + eps) / kappa, K_ii = (1 + eps) / kappa^2   (28)  K = 0 on friction rows
    v*   = J v - h B J v - h K x                    (24)  x: violation (pos - margin)
MuJoCo's impedance (solimp) generalises the constant epsilon: with d = 1 / (1 + eps), an
object's impedance shape (m.*_impedance: epsilon at width, width, midpoint, power) makes
d(x) run from d0 = 1 / (1 + eps) at x = 0 to dw = 1 / (1 + eps_width) at |x| >= width
(impedance()), and its damping ratio r scales the stiffness (MuJoCo's solref dampratio):
    R_ii = max(A_ii (1 - d(x)) / d(x), rmin),  B_ii = 2 / (dw kappa),
    K_ii = d(x) / (dw kappa r)^2,
which is (27), (28) when the width is 0 (d = dw = d0) and r = 1. A contact's rows all take the
impedance of its normal distance, a connect's or weld's that of the norm of its violations
(MuJoCo's getposdim); friction-loss rows take the global softness (MuJoCo's default
solreffriction, solimpfriction) at x = 0.
Friction rows of a contact get r_j = r_F mu_j^-2 / <mu^-2> (22), which makes the cone circular
in the metric of R (r_j mu_j^2 the same on every row) so that it can be projected analytically
(Algorithm 5). The paper leaves the mean friction regulariser r_F to the model (21); here it is
the one that gives the first (sliding) row (27) with the translational weight, divided by
MuJoCo's impratio (m.opt.impratio, default 1): r_j = r_1 mu_1^2 / mu_j^2, MuJoCo's R. (r_F as
the mean of (27) over the rows would let the torsional and rolling coefficients of condim 4
and 6, lengths of a few mm where the sliding ones are ratios near 1, make the sliding
regulariser thousands of times smaller than MuJoCo's: a far stiffer stick.)
A_ii is approximated, as in the paper (section IV), from the mean inverse inertias of the
bodies at qpos0 (MuJoCo's invweight0), so that the inverse dynamics computes the same R without
the inertia matrix. The normal row of an elliptic or frictionless contact includes the lever arm
of the contact point (_normal_weight: exact for a free body with an isotropic inertia), so that
a body sinks as deep on several contacts as on one. The friction rows' r_1 keeps the
translational weight alone: it is smaller than the exact diagonal when the point has a lever
arm, and a smaller friction regulariser makes a sticking contact creep less (the soft model
creeps at a speed proportional to R).
kappa is kept >= 2 h: a shorter time constant cannot be resolved by the step and would reverse
velocities (MuJoCo's refsafe rule).

Pyramidal cones (m.opt.cone): a contact of condim n > 1 has 2 (n - 1) rows, the pyramid edges
J_normal +- mu_j J_j (j = 1..n-1), each a non-negative impulse, as MuJoCo. Their common
regulariser is MuJoCo's: r = max(eps A_ii, rmin) of the first edge (27), A_ii ~ (1 + mu_1^2)
times the translational weight, then R = 2 mu_1^2 r / impratio. The factor matches the elliptic
friction regulariser:
with edge impulses e+-, f_n = e+ + e-, f_j = mu_j (e+ - e-), the edges cost
R/4 (f_n^2 + (f_j / mu_j)^2), i.e. r f_j^2 / 2 for R = 2 mu_j^2 r. At mu_1 = 1, condim 3 a
body resting on one contact sinks exactly as deep as with the elliptic cone; on several it sinks
less (as in MuJoCo): the edges have no lever-arm term.

Hard equality constraints (m.eq_hard): R_E -> 0 and, from (28) in the limit eps -> 0,
B = 2 / kappa, K = 1 / kappa^2; the solvers satisfy J_E v' = v*_E exactly (section II.C).

Exact stabilization (m.opt.stabilization = EXACT, the variant after eq. 28): B and K solve
A R^-1 B = (I + A R^-1) 2 kappa^-1, A R^-1 K = (I + A R^-1) kappa^-2 with the full A over the
soft rows, by a pseudo-inverse when A is singular; v* then uses the full matrices.
"""

import numpy as np
from numba import uint64

from .enums import Cone, ConstraintType, DisableBit, EqType, JointType, Stabilization
from .jit import inlined, jit
from .math import (MINVAL, add3, axpy3_seg, axpy_seg, cross3, dot3_seg, dot_seg, mat9,
                   mulmatvec3, norm3, quat2vel, quat4, quat_mul, sub3, vec3)
from .smooth import apply_ft, last_dof, solve_m

EQUALITY = int(ConstraintType.EQUALITY)
FRICTION_DOF = int(ConstraintType.FRICTION_DOF)
FRICTION_TENDON = int(ConstraintType.FRICTION_TENDON)
LIMIT_JOINT = int(ConstraintType.LIMIT_JOINT)
LIMIT_TENDON = int(ConstraintType.LIMIT_TENDON)
CONTACT_FRICTIONLESS = int(ConstraintType.CONTACT_FRICTIONLESS)
CONTACT_PYRAMIDAL = int(ConstraintType.CONTACT_PYRAMIDAL)
CONTACT_ELLIPTIC = int(ConstraintType.CONTACT_ELLIPTIC)
PYRAMIDAL = int(Cone.PYRAMIDAL)
EXACT = int(Stabilization.EXACT)
HINGE = int(JointType.HINGE)
BALL = int(JointType.BALL)
FREE = int(JointType.FREE)
OBJ_SITE = 6  # eq_objtype of site-based connect and weld
SLIDE = int(JointType.SLIDE)
ZERO3 = (0.0, 0.0, 0.0)


@jit
def softness(m, eps, kappa, rmin, imp, dampratio):
    """The object's softness: (epsilon, kappa, rmin, epsilon at width, width, midpoint, power,
    dampratio). epsilon, kappa and rmin fall back on m.opt when negative, the impedance shape
    imp (4,) on m.opt.impedance when its width is negative; kappa kept >= 2 h."""
    if eps < 0.0:
        eps = m.opt_epsilon[0]
    if kappa < 0.0:
        kappa = m.opt_kappa[0]
    if rmin < 0.0:
        rmin = m.opt_rmin[0]
    if imp[1] < 0.0:
        imp = m.opt_impedance
    return (eps, max(kappa, 2.0 * m.opt_timestep[0]), rmin, imp[0], imp[1], imp[2], imp[3],
            dampratio)


@jit
def _joint_softness(m, j):
    return softness(m, m.jnt_epsilon[j], m.jnt_kappa[j], m.jnt_rmin[j], m.jnt_impedance[j],
                    m.jnt_dampratio[j])


@jit
def _tendon_softness(m, t):
    return softness(m, m.tendon_epsilon[t], m.tendon_kappa[t], m.tendon_rmin[t],
                    m.tendon_impedance[t], m.tendon_dampratio[t])


@jit
def impedance(soft, x):
    """(d(x), d'(x), dw): the impedance d(x) = 1 / (1 + epsilon(x)) of a violation x, its
    derivative and its value at the width (MuJoCo's getimpedance): d0 = 1 / (1 + epsilon) at
    x = 0 to dw = 1 / (1 + epsilon_width) at |x| >= width along y(|x| / width),
    y(t) = t^p / m^(p-1) up to the midpoint m and 1 - (1 - t)^p / (1 - m)^(p-1) after it.
    Width 0: d0 everywhere (the paper's constant epsilon), dw = d0."""
    eps, _, _, epsw, width, mid, power, _ = soft
    d0 = 1.0 / (1.0 + eps)
    if width <= MINVAL or epsw == eps:
        return d0, 0.0, d0
    dw = 1.0 / (1.0 + epsw)
    t = x / width
    sgn = 1.0
    if t < 0.0:
        t = -t
        sgn = -1.0
    if t >= 1.0:
        return dw, 0.0, dw
    if t <= 0.0:
        return d0, 0.0, dw
    if power == 1.0:
        y = t
        dy = 1.0
    elif t <= mid:
        a = 1.0 / mid ** (power - 1.0)
        y = a * t ** power
        dy = power * a * t ** (power - 1.0)
    else:
        b = 1.0 / (1.0 - mid) ** (power - 1.0)
        y = 1.0 - b * (1.0 - t) ** power
        dy = power * b * (1.0 - t) ** (power - 1.0)
    return d0 + y * (dw - d0), dy * sgn * (dw - d0) / width, dw


@jit
def row_epsilon(soft, x):
    """epsilon(x) = (1 - d(x)) / d(x), the impulse regularisation of (27) at the violation x."""
    d = impedance(soft, x)[0]
    return (1.0 - d) / d


@jit
def _add_row(m, d, ctype, cid, pos, margin, approx, soft, law, friction, b1, b2):
    """Append a row (J left at zero for the caller to fill); returns its index or -1 if full.

    soft: the object's softness (softness()); law: impedance(soft, x) at the violation x the
    object's impedance depends on (pos - margin, a connect's or weld's norm, a contact's normal
    distance for all its rows), computed once per object; b1, b2: the bodies whose trees hold
    the row's nonzero dofs (efc_range); -1: any dof."""
    kappa, rmin, dampratio = soft[1], soft[2], soft[7]
    imp, dimp, dw = law      # B and K follow the impedance at width (MuJoCo's solimp[1])
    i = d.nefc[0]
    if i >= d.efc_type.shape[0]:
        d.nefc_overflow[0] = 1
        return -1
    d.nefc[0] = i + 1
    # dense layout: efc_J[i] is zero outside efc_range[i] (an invariant of every row, kept by
    # writing J only within the range): clearing the previous range clears the row at the cost
    # of its nonzeros. Sparse layout: row_end writes the whole packed row.
    if dense_rows(d):
        for r in range(2):
            a = d.efc_range[i, 2 * r]
            d.efc_J[i, a:a + d.efc_range[i, 2 * r + 1]] = 0.0
    if b1 < 0:
        d.efc_range[i, 0] = 0
        d.efc_range[i, 1] = d.qvel.shape[0]
        d.efc_range[i, 2] = 0
        d.efc_range[i, 3] = 0
    else:
        d.efc_range[i, 0] = m.body_treedofadr[b1]
        d.efc_range[i, 1] = m.body_treedofnum[b1]
        same = m.body_rootid[b1] == m.body_rootid[b2]
        d.efc_range[i, 2] = m.body_treedofadr[b2]
        d.efc_range[i, 3] = 0 if same else m.body_treedofnum[b2]
    d.efc_type[i] = ctype
    d.efc_id[i] = cid
    d.efc_pos[i] = pos
    d.efc_margin[i] = margin
    d.efc_frictionloss[i] = 0.0   # impulse bound of friction-loss rows (eta h)
    d.efc_mu[i] = 0.0
    # (27) and (28) with epsilon(x) = (1 - d) / d and MuJoCo's damping ratio:
    # B = 2 / (dw kappa), K = d / (dw kappa dampratio)^2; with a constant impedance
    # d = dw = 1 / (1 + epsilon): B = 2 (1 + epsilon) / kappa, K = (1 + epsilon) / kappa^2
    r = approx * (1.0 - imp) / imp
    d.efc_R[i] = max(r, rmin)
    d.efc_B[i] = 2.0 / (dw * kappa)
    d.efc_K[i] = 0.0 if friction else imp / (dw * kappa * dampratio) ** 2
    d.efc_kappa[i] = kappa
    d.efc_imp[i, 0] = imp
    d.efc_imp[i, 1] = dimp
    d.efc_imp[i, 2] = -approx * dimp / (imp * imp) if r > rmin else 0.0
    d.efc_hard[i] = 0
    return i


@jit
def _jac_dot(m, d, row, body, point, dirv, rot, scale):
    """row (a dense row of row_begin) += scale * dirv . (translational or rotational Jacobian
    of body at point)."""
    if rot:
        apply_ft(m, d, ZERO3, dirv, point, body, row, scale)
    else:
        apply_ft(m, d, dirv, ZERO3, point, body, row, scale)


@jit
def equality_frames(m, d, e):
    """The frames a connect or weld constraint e joins: bodies b1, b2, anchor points p1, p2 and
    orientations fq1, fq2 (of the two sites, or of the bodies)."""
    o1 = m.eq_obj1id[e]
    o2 = m.eq_obj2id[e]
    if m.eq_objtype[e] == OBJ_SITE:
        # site semantics: the two site frames coincide
        b1, b2 = m.site_bodyid[o1], m.site_bodyid[o2]
        p1, p2 = vec3(d.site_xpos, o1), vec3(d.site_xpos, o2)
        fq1 = quat_mul(quat4(d.xquat, b1), quat4(m.site_quat, o1))
        fq2 = quat_mul(quat4(d.xquat, b2), quat4(m.site_quat, o2))
    else:
        b1, b2 = o1, max(o2, 0)
        # anchor on body 1 (eq_data 0:3) and on body 2 (connect: 3:6; weld: 3:6 relpose)
        if m.eq_type[e] == EqType.CONNECT:
            a1 = (m.eq_data[e, 0], m.eq_data[e, 1], m.eq_data[e, 2])
            a2 = (m.eq_data[e, 3], m.eq_data[e, 4], m.eq_data[e, 5])
        else:
            a2 = (m.eq_data[e, 0], m.eq_data[e, 1], m.eq_data[e, 2])
            a1 = (m.eq_data[e, 3], m.eq_data[e, 4], m.eq_data[e, 5])
        p1 = add3(vec3(d.xpos, b1), mulmatvec3(mat9(d.xmat, b1), a1))
        p2 = add3(vec3(d.xpos, b2), mulmatvec3(mat9(d.xmat, b2), a2))
        fq1 = quat4(d.xquat, b1)
        fq2 = quat4(d.xquat, b2)
    return b1, b2, p1, p2, fq1, fq2


@jit
def _equality_rows(m, d):
    for e in range(m.eq_type.shape[0]):
        if not m.eq_active0[e]:
            continue
        soft = softness(m, m.eq_epsilon[e], m.eq_kappa[e], m.eq_rmin[e], m.eq_impedance[e],
                        m.eq_dampratio[e])
        # hard rows need the dense layout and the dense Newton (a Data made while m.eq_hard
        # was clear has neither when sparse: its rows stay soft)
        hard = m.eq_hard[e] and d.dense_M.shape[0] == d.qvel.shape[0]
        if hard:
            # B, K of (28) in the limit eps -> 0; R = 0 below
            soft = (0.0, soft[1], soft[2], 0.0, 0.0, soft[5], soft[6], soft[7])
        first_row = d.nefc[0]
        t = m.eq_type[e]
        o1 = m.eq_obj1id[e]
        o2 = m.eq_obj2id[e]
        if t == EqType.CONNECT or t == EqType.WELD:
            b1, b2, p1, p2, fq1, fq2 = equality_frames(m, d, e)
            err = sub3(p1, p2)
            x = norm3(err)
            if t == EqType.WELD:
                # orientation error Im(q2^-1 q1 relquat), scaled by torquescale (as MuJoCo)
                relq = (m.eq_data[e, 6], m.eq_data[e, 7], m.eq_data[e, 8], m.eq_data[e, 9])
                if m.eq_objtype[e] == OBJ_SITE:
                    relq = (1.0, 0.0, 0.0, 0.0)      # site frames are aligned, no relpose
                q1r = quat_mul(fq1, relq)
                q2inv = (fq2[0], -fq2[1], -fq2[2], -fq2[3])
                qdif = quat_mul(q2inv, q1r)
                ts = m.eq_data[e, 10]
                x = np.sqrt(x * x + ts * ts * (qdif[1] * qdif[1] + qdif[2] * qdif[2]
                                               + qdif[3] * qdif[3]))
            # the impedance of all the rows follows the norm of the violation (MuJoCo)
            law = impedance(soft, x)
            approx = m.body_invweight0[b1, 0] + m.body_invweight0[b2, 0]
            for k in range(3):
                i = _add_row(m, d, EQUALITY, e, err[k], 0.0, approx, soft, law, False, b1, b2)
                if i < 0:
                    return
                axis = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)
                J = row_begin(d, i, 0)
                _jac_dot(m, d, J, b1, p1, axis, False, 1.0)
                _jac_dot(m, d, J, b2, p2, axis, False, -1.0)
                row_end(d, i, 0)
            if t == EqType.WELD:
                # the orientation rows' Jacobian 1/2 Im(q2^-1 (jacr1 - jacr2) q1 relquat) ts
                approx = m.body_invweight0[b1, 1] + m.body_invweight0[b2, 1]
                first = d.nefc[0]
                for k in range(3):
                    i = _add_row(m, d, EQUALITY, e, qdif[k + 1] * ts, 0.0, approx, soft,
                                 law, False, b1, b2)
                    if i < 0:
                        return
                    axis = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0,
                            1.0 if k == 2 else 0.0)
                    J = row_begin(d, i, k)
                    _jac_dot(m, d, J, b1, p1, axis, True, 1.0)
                    _jac_dot(m, d, J, b2, p2, axis, True, -1.0)
                J0, J1, J2 = row_begin(d, first, 0), row_begin(d, first + 1, 1), row_begin(
                    d, first + 2, 2)
                for r in range(2):           # the three rows share their dofs (efc_range)
                    a = d.efc_range[first, 2 * r]
                    for j in range(a, a + d.efc_range[first, 2 * r + 1]):
                        w = (0.0, J0[j], J1[j], J2[j])
                        if w[1] == 0.0 and w[2] == 0.0 and w[3] == 0.0:
                            continue
                        q3 = quat_mul(quat_mul(q2inv, w), q1r)
                        J0[j] = 0.5 * q3[1] * ts
                        J1[j] = 0.5 * q3[2] * ts
                        J2[j] = 0.5 * q3[3] * ts
                for k in range(3):
                    row_end(d, first + k, k)
        elif t == EqType.JOINT or t == EqType.TENDON:
            # x = q1 - q1_0 - poly(q2 - q2_0), poly from eq_data[0:5]
            if t == EqType.JOINT:
                v1 = d.qpos[m.jnt_qposadr[o1]] - m.qpos0[m.jnt_qposadr[o1]]
                approx = m.dof_invweight0[m.jnt_dofadr[o1]]
            else:
                v1 = d.ten_length[o1] - m.tendon_length0[o1]
                approx = m.tendon_invweight0[o1]
            dif = 0.0
            if o2 >= 0:
                if t == EqType.JOINT:
                    dif = d.qpos[m.jnt_qposadr[o2]] - m.qpos0[m.jnt_qposadr[o2]]
                    approx += m.dof_invweight0[m.jnt_dofadr[o2]]
                else:
                    dif = d.ten_length[o2] - m.tendon_length0[o2]
                    approx += m.tendon_invweight0[o2]
            c = m.eq_data[e]
            pos = v1 - (c[0] + c[1] * dif + c[2] * dif ** 2 + c[3] * dif ** 3 + c[4] * dif ** 4)
            deriv = c[1] + 2 * c[2] * dif + 3 * c[3] * dif ** 2 + 4 * c[4] * dif ** 3
            if t == EqType.JOINT:
                jb1 = m.jnt_bodyid[o1]
                jb2 = m.jnt_bodyid[o2] if o2 >= 0 else 0
            else:
                jb1 = jb2 = -1
            i = _add_row(m, d, EQUALITY, e, pos, 0.0, approx, soft, impedance(soft, pos), False,
                         jb1, jb2)
            if i < 0:
                return
            J = row_begin(d, i, 0)
            if t == EqType.JOINT:
                J[m.jnt_dofadr[o1]] += 1.0
                if o2 >= 0:
                    J[m.jnt_dofadr[o2]] -= deriv
            else:
                for k in range(d.qvel.shape[0]):
                    J[k] = d.ten_J[o1, k]
                    if o2 >= 0:
                        J[k] -= deriv * d.ten_J[o2, k]
            row_end(d, i, 0)
        if hard:
            for i in range(first_row, d.nefc[0]):
                d.efc_R[i] = 0.0
                d.efc_hard[i] = 1


@jit
def _friction_rows(m, d):
    """Friction loss: the global softness (MuJoCo's default solreffriction, solimpfriction)."""
    soft = softness(m, -1.0, -1.0, -1.0, m.opt_impedance, 1.0)
    law = impedance(soft, 0.0)
    for k in range(m.dof_frictionloss.shape[0]):
        eta = m.dof_frictionloss[k]
        if eta > 0.0:
            i = _add_row(m, d, FRICTION_DOF, k, 0.0, 0.0, m.dof_invweight0[k], soft, law,
                         True, m.dof_bodyid[k], 0)
            if i < 0:
                return
            row_begin(d, i, 0)[k] = 1.0
            row_end(d, i, 0)
            d.efc_frictionloss[i] = eta * m.opt_timestep[0]   # impulse bound: torque * h
    for t in range(m.tendon_frictionloss.shape[0]):
        eta = m.tendon_frictionloss[t]
        if eta > 0.0:
            i = _add_row(m, d, FRICTION_TENDON, t, 0.0, 0.0, m.tendon_invweight0[t], soft,
                         law, True, -1, -1)
            if i < 0:
                return
            row_begin(d, i, 0)[:] = d.ten_J[t]
            row_end(d, i, 0)
            d.efc_frictionloss[i] = eta * m.opt_timestep[0]


@jit
def _limit_rows(m, d):
    for j in range(m.jnt_type.shape[0]):
        t = m.jnt_type[j]
        if not m.jnt_limited[j] or t == FREE:
            continue
        if t == BALL:
            # a cone on the rotation angle: x = max(range) - |rotation vector|, J = -axis
            a = m.jnt_qposadr[j]
            da = m.jnt_dofadr[j]
            rv = quat2vel((d.qpos[a], d.qpos[a + 1], d.qpos[a + 2], d.qpos[a + 3]), 1.0)
            angle = norm3(rv)
            dist = max(m.jnt_range[j, 0], m.jnt_range[j, 1]) - angle
            if dist < m.jnt_margin[j]:
                soft = _joint_softness(m, j)
                i = _add_row(m, d, LIMIT_JOINT, j, dist, m.jnt_margin[j],
                             m.dof_invweight0[da], soft,
                             impedance(soft, dist - m.jnt_margin[j]), False, m.jnt_bodyid[j], 0)
                if i < 0:
                    return
                J = row_begin(d, i, 0)
                for c in range(3):
                    J[da + c] = -rv[c] / max(angle, MINVAL)
                row_end(d, i, 0)
            continue
        q = d.qpos[m.jnt_qposadr[j]]
        da = m.jnt_dofadr[j]
        margin = m.jnt_margin[j]
        soft = _joint_softness(m, j)
        for side in range(2):
            # lower: x = q - lo, J = +1; upper: x = hi - q, J = -1
            dist = q - m.jnt_range[j, 0] if side == 0 else m.jnt_range[j, 1] - q
            if dist < margin:
                i = _add_row(m, d, LIMIT_JOINT, j, dist, margin, m.dof_invweight0[da], soft,
                             impedance(soft, dist - margin), False, m.jnt_bodyid[j], 0)
                if i < 0:
                    return
                row_begin(d, i, 0)[da] = 1.0 if side == 0 else -1.0
                row_end(d, i, 0)
    for t in range(m.tendon_limited.shape[0]):
        if not m.tendon_limited[t]:
            continue
        length = d.ten_length[t]
        margin = m.tendon_margin[t]
        soft = _tendon_softness(m, t)
        for side in range(2):
            dist = length - m.tendon_range[t, 0] if side == 0 else m.tendon_range[t, 1] - length
            if dist < margin:
                i = _add_row(m, d, LIMIT_TENDON, t, dist, margin, m.tendon_invweight0[t], soft,
                             impedance(soft, dist - margin), False, -1, -1)
                if i < 0:
                    return
                sgn = 1.0 if side == 0 else -1.0
                J = row_begin(d, i, 0)
                for k in range(d.qvel.shape[0]):
                    J[k] = sgn * d.ten_J[t, k]
                row_end(d, i, 0)


@jit
def _normal_weight(m, d, b1, b2, p, n):
    """A_ii of the normal row of a contact at p with normal n, approximated from the bodies'
    mean inverse inertias at qpos0 (body_invweight0: translational t_b, rotational r_b) and
    the lever arms of the point.

    The normal row is [n; (p - c_b) x n] on body b in its centre-of-mass velocity coordinates
    (c_b = xipos), so with the inverse inertia of b taken as diag(t_b I, r_b I)
        A_ii ~ sum_b t_b + r_b |(p - c_b) x n|^2,
    the exact diagonal of A for a free body with an isotropic inertia. The lever arm makes a
    box resting on its corners as stiff per contact as a sphere on one point, so that the
    resting penetration of section V does not depend on the number of contacts."""
    total = 0.0
    for b in (b1, b2):
        if b == 0:
            continue
        rx = p[0] - d.xipos[b, 0]
        ry = p[1] - d.xipos[b, 1]
        rz = p[2] - d.xipos[b, 2]
        wx = ry * n[2] - rz * n[1]                  # w = (p - c) x n
        wy = rz * n[0] - rx * n[2]
        wz = rx * n[1] - ry * n[0]
        total += m.body_invweight0[b, 0] + m.body_invweight0[b, 1] * (wx * wx + wy * wy
                                                                      + wz * wz)
    return total


@jit
def _frame_axis(d, c, k):
    """Row k % 3 of the frame of contact c: the normal (0) or a tangent (1, 2)."""
    r = 3 * (k % 3)
    return (d.contact_frame[c, r], d.contact_frame[c, r + 1], d.contact_frame[c, r + 2])


@jit
def _contact_rows(m, d):
    pyramidal = m.opt_cone[0] == PYRAMIDAL
    for c in range(d.ncon[0]):
        d.contact_efc_address[c] = -1
        dist = d.contact_dist[c]
        margin = d.contact_includemargin[c]
        if dist >= margin:
            continue
        b1 = m.geom_bodyid[d.contact_geom1[c]]
        b2 = m.geom_bodyid[d.contact_geom2[c]]
        soft = softness(m, d.contact_epsilon[c], d.contact_kappa[c], d.contact_rmin[c],
                        d.contact_impedance[c], d.contact_dampratio[c])
        # all the contact's rows follow the impedance of its normal violation (MuJoCo)
        law = impedance(soft, dist - margin)
        imp, dimp = law[0], law[1]
        eps, rmin = (1.0 - imp) / imp, soft[2]
        # d ln(eps) / dx: the friction rows' R are proportional to eps where above rmin
        dlog_eps = -dimp / (imp * (1.0 - imp)) if dimp != 0.0 else 0.0
        dim = d.contact_dim[c]
        ctype = CONTACT_FRICTIONLESS if dim == 1 else CONTACT_ELLIPTIC
        nrows = dim
        if pyramidal and dim > 1:
            ctype = CONTACT_PYRAMIDAL
            nrows = 2 * (dim - 1)
        p = vec3(d.contact_pos, c)
        first = d.nefc[0]
        if first + nrows > d.efc_type.shape[0]:
            d.nefc_overflow[0] = 1
            return
        d.contact_efc_address[c] = first
        n_axis = _frame_axis(d, c, 0)
        tran = m.body_invweight0[b1, 0] + m.body_invweight0[b2, 0]
        if ctype == CONTACT_PYRAMIDAL:
            # edges J_n +- mu_k J_k; one R for all, as MuJoCo: (27) on the first edge,
            # A_ii ~ (1 + mu_1^2) tran, times 2 mu_1^2 (the friction match)
            mu1 = _friction_of_dim(d, c, 1)
            rpy = (2.0 * mu1 * mu1 * max((1.0 + mu1 * mu1) * tran * eps, rmin)
                   / m.opt_impratio[0])
            drpy = rpy * dlog_eps if (1.0 + mu1 * mu1) * tran * eps > rmin else 0.0
            for k in range(1, dim):
                mu = _friction_of_dim(d, c, k)
                axis = _frame_axis(d, c, k)
                rotational = k >= 3
                for side in range(2):
                    sgn = mu if side == 0 else -mu
                    i = _add_row(m, d, ctype, c, dist, margin, 0.0, soft, law, False, b1, b2)
                    J = row_begin(d, i, 0)
                    _jac_dot(m, d, J, b2, p, n_axis, False, 1.0)
                    _jac_dot(m, d, J, b1, p, n_axis, False, -1.0)
                    _jac_dot(m, d, J, b2, p, axis, rotational, sgn)
                    _jac_dot(m, d, J, b1, p, axis, rotational, -sgn)
                    row_end(d, i, 0)
                    d.efc_mu[i] = mu
                    d.efc_R[i] = rpy
                    d.efc_imp[i, 2] = drpy
            continue
        # the friction rows' regularisers (22): r_j = r_F mu_j^-2 / <mu^-2>, r_j mu_j^2 the
        # same on every row; r_F, free in (21), is the one that gives the first (sliding) row
        # (27) with the translational weight, over impratio: r_j = r_1 mu_1^2 / mu_j^2
        r1 = max(tran * eps, rmin) / m.opt_impratio[0]
        clamped = tran * eps <= rmin
        mu1 = _friction_of_dim(d, c, 1) if dim > 1 else 1.0
        # (27) with A_ii ~ the normal's weight with its lever arms
        for k in range(dim):
            approx = _normal_weight(m, d, b1, b2, p, n_axis) if k == 0 else 0.0
            i = _add_row(m, d, ctype, c, dist if k == 0 else 0.0, margin if k == 0 else 0.0,
                         approx, soft, law, k > 0, b1, b2)
            if k > 0:
                mu = _friction_of_dim(d, c, k)
                d.efc_mu[i] = mu
                d.efc_R[i] = r1 * (mu1 * mu1) / (mu * mu)     # (22)
                d.efc_imp[i, 2] = 0.0 if clamped else d.efc_R[i] * dlog_eps
        _contact_jac(m, d, c, first, dim, b2, p, 1.0)
        _contact_jac(m, d, c, first, dim, b1, p, -1.0)
        for k in range(dim):
            row_end(d, first + k, k)


@jit
def _contact_jac(m, d, c, i, dim, body, p, scale):
    """Rows i..i+dim-1 of contact c += scale * (their axes . Jacobian of body at p): the normal
    and tangents translate along frame rows 0..2, torsion about the normal and rolling about the
    tangents rotate (frame rows 0, 1, 2). One walk up the body's chain serves all the rows
    (the columns of apply_ft); row k is built in row_begin's slot k (row_end packs it)."""
    offset = sub3(p, vec3(d.subtree_com, m.body_rootid[body]))
    # the arrays as locals, read once (compiled code reads them from m and d again after every
    # write otherwise); row_begin(d, i + k, k) is rows[first + k]
    frame = d.contact_frame
    cdof = d.cdof
    parent = m.dof_parentid
    dense = dense_rows(d)
    rows = d.efc_J if dense else d.efc_Jrow
    first = i if dense else 0
    j = last_dof(m, body)
    while j >= 0:
        rot = (cdof[j, 0], cdof[j, 1], cdof[j, 2])
        jp = add3((cdof[j, 3], cdof[j, 4], cdof[j, 5]), cross3(rot, offset))
        for k in range(dim):
            a = 3 * (k % 3)
            u = rot if k >= 3 else jp
            rows[first + k, j] += scale * (u[0] * frame[c, a] + u[1] * frame[c, a + 1]
                                           + u[2] * frame[c, a + 2])
        j = parent[j]


@jit
def contact_nrows(d, c):
    """Number of constraint rows of contact c (0 if it has none)."""
    adr = d.contact_efc_address[c]
    if adr < 0:
        return 0
    dim = d.contact_dim[c]
    if d.efc_type[adr] == CONTACT_PYRAMIDAL:
        return 2 * (dim - 1)
    return dim


@jit
def _friction_of_dim(d, c, k):
    """Friction coefficient of friction dimension k (1-based) of contact c."""
    # dims 1, 2: sliding; 3: torsional; 4, 5: rolling (contact_friction: 5 numbers)
    return max(d.contact_friction[c, k - 1], 1e-10)


@jit
def make_constraint(m, d):
    """Constraint rows of the current configuration: efc_* (J, pos, margin, R, B, K) and nefc."""
    d.nefc[0] = 0
    d.efc_Jrow[:, :] = 0.0      # sparse layout: a row left unfinished by an overflow is dropped
    flags = m.opt_disableflags[0]
    if flags & DisableBit.CONSTRAINT:
        return
    if not flags & DisableBit.EQUALITY:
        _equality_rows(m, d)
    if not flags & DisableBit.FRICTIONLOSS:
        _friction_rows(m, d)
    if not flags & DisableBit.LIMIT:
        _limit_rows(m, d)
    if not flags & DisableBit.CONTACT:
        _contact_rows(m, d)


# Row layouts (Data.efc_J, efc_MinvJT; types.data_sizes). Row i is nonzero on the dofs of its
# two ranges (efc_range: adr, num, adr, num). Dense layout (nv columns): the entry of dof k is
# rows[i, k]. Sparse layout (m.opt.jacobian, njcol <= nv columns): the row is packed, range 0's
# dofs at columns 0..num0-1, then range 1's; Data's rows then cost njmax x (the most dofs a row
# can touch) instead of njmax x nv. MuJoCo's compressed rows (efc_J_rownnz, rowadr, colind)
# with the column indices implied by the two ranges: sparse_rows gives them.
@inlined
def dense_rows(d):
    """True when the rows (efc_J, efc_MinvJT) hold the dense layout (one column per dof);
    the sparse layout has the scratch rows efc_Jrow."""
    return d.efc_Jrow.shape[0] == 0


@inlined
def row_col(d, i, r):
    """The column of rows[i] that holds the first dof of range r of row i."""
    if dense_rows(d):
        return d.efc_range[i, 2 * r]
    return 0 if r == 0 else d.efc_range[i, 1]


@jit
def row_begin(d, i, slot):
    """The dense row (nv entries, zero outside the row's range) in which to build row i:
    efc_J[i] itself in the dense layout, else the scratch efc_Jrow[slot] that row_end packs."""
    if dense_rows(d):
        return d.efc_J[i]
    return d.efc_Jrow[slot]


@jit
def row_end(d, i, slot):
    """Pack the row built in efc_Jrow[slot] into efc_J[i] (sparse layout) and clear the
    scratch; nothing in the dense layout."""
    if dense_rows(d):
        return
    src = d.efc_Jrow[slot]
    c = 0
    for r in range(2):
        a = d.efc_range[i, 2 * r]
        for k in range(a, a + d.efc_range[i, 2 * r + 1]):
            d.efc_J[i, c] = src[k]
            src[k] = 0.0
            c += 1


@inlined
def row_dot(d, i, rows, x):
    """rows[i] . x over the row's nonzero dofs (efc_range)."""
    return range_dot(d.efc_range, dense_rows(d), i, rows, x)


@inlined
def row_axpy(d, i, rows, scale, y):
    """y += scale * rows[i] over the row's nonzero dofs."""
    range_axpy(d.efc_range, dense_rows(d), i, rows, scale, y)


@inlined
def range_dot(rng, dense, i, rows, x):
    """row_dot with efc_range and dense_rows(d) read by the caller (once for many rows: a loop
    that writes to arrays must otherwise read them from d again for every row)."""
    row = rows[i]
    if dense:   # four partial sums over each range (dot_seg)
        a = rng[i, 0]
        s = dot_seg(row, a, x, a, rng[i, 1])
        if rng[i, 3] > 0:
            a = rng[i, 2]
            s += dot_seg(row, a, x, a, rng[i, 3])
        return s
    # the packed row: range 0's dofs, then range 1's, in one chain of additions
    s = 0.0
    c = uint64(0)
    for r in range(2):
        k = uint64(rng[i, 2 * r])
        end = k + uint64(rng[i, 2 * r + 1])
        while k < end:
            s += row[c] * x[k]
            c += uint64(1)
            k += uint64(1)
    return s


@inlined
def range_axpy(rng, dense, i, rows, scale, y):
    """row_axpy with efc_range and dense_rows(d) read by the caller (range_dot)."""
    row = rows[i]
    c = 0
    for r in range(2):
        a = rng[i, 2 * r]
        n = rng[i, 2 * r + 1]
        axpy_seg(y, a, scale, row, a if dense else c, n)
        c += n


# Runs (Data.efc_run, written by solver.compute_A): the dofs on which the rows of an object are
# nonzero in efc_Y, as runs of consecutive dofs within its ranges. Row i holds their number, then
# (column, dof, length) per run; every row of an object holds its object's runs. On a large tree
# a row's chains are a few of the tree's dofs: PGS's sweeps read efc_Y over the runs only.
@inlined
def run_dot(runs, i, rows, x):
    """rows[i] . x over the runs of row i."""
    row = rows[i]
    s = 0.0
    for r in range(runs[i, 0]):
        c = 1 + 3 * r
        s += dot_seg(row, runs[i, c], x, runs[i, c + 1], runs[i, c + 2])
    return s


@inlined
def runs_dot(runs, i, rows, j):
    """rows[i] . rows[j] over the runs of row i, for two rows of one object (they share the
    runs and the columns)."""
    a = rows[i]
    b = rows[j]
    s = 0.0
    for r in range(runs[i, 0]):
        c = 1 + 3 * r
        s += dot_seg(a, runs[i, c], b, runs[i, c], runs[i, c + 2])
    return s


@inlined
def run_axpy(runs, i, rows, scale, y):
    """y += scale * rows[i] over the runs of row i."""
    row = rows[i]
    for r in range(runs[i, 0]):
        c = 1 + 3 * r
        axpy_seg(y, runs[i, c + 1], scale, row, runs[i, c], runs[i, c + 2])


@inlined
def run_dot3(runs, i, rows, x):
    """run_dot of the three rows i, i+1, i+2 of a condim-3 contact in one pass over x."""
    r0 = rows[i]
    r1 = rows[i + 1]
    r2 = rows[i + 2]
    s0 = s1 = s2 = 0.0
    for r in range(runs[i, 0]):
        c = 1 + 3 * r
        t0, t1, t2 = dot3_seg(r0, r1, r2, runs[i, c], x, runs[i, c + 1], runs[i, c + 2])
        s0 += t0
        s1 += t1
        s2 += t2
    return s0, s1, s2


@inlined
def run_axpy3(runs, i, rows, s0, s1, s2, y):
    """run_axpy of the three rows i, i+1, i+2 with scales s0, s1, s2 in one pass over y."""
    r0 = rows[i]
    r1 = rows[i + 1]
    r2 = rows[i + 2]
    for r in range(runs[i, 0]):
        c = 1 + 3 * r
        axpy3_seg(y, runs[i, c + 1], s0, r0, s1, r1, s2, r2, runs[i, c], runs[i, c + 2])


@jit
def rows_dot(d, i, rows_a, j, rows_b):
    """rows_a[i] . rows_b[j] for two rows on the same dofs (rows of one object), e.g. an
    entry of A = J M^-1 J' from efc_J and efc_MinvJT."""
    s = 0.0
    for r in range(2):
        c = row_col(d, i, r)
        s += dot_seg(rows_a[i], c, rows_b[j], c, d.efc_range[i, 2 * r + 1])
    return s


def dense_jacobian(d, rows=None):
    """The rows (efc_J unless given, e.g. d.efc_MinvJT) of the current nefc constraints as a
    dense nefc x nv array, in either layout (MuJoCo's mju_sparse2dense of efc_J)."""
    rows = d.efc_J if rows is None else rows
    nv = d.qvel.shape[0]
    rownnz, rowadr, colind = sparse_rows(d)
    out = np.zeros((d.nefc, nv))
    for i in range(d.nefc):
        cols = colind[rowadr[i]:rowadr[i] + rownnz[i]]
        out[i, cols] = rows[i, cols] if d.efc_Jrow.shape[0] == 0 else rows[i, :rownnz[i]]
    return out


def sparse_rows(d):
    """MuJoCo's compressed-row description of the current rows: (rownnz, rowadr, colind),
    row i's entries being efc_J[i, :rownnz[i]] (sparse layout; efc_J[i, colind[...]] in the
    dense layout) on the dofs colind[rowadr[i]:rowadr[i] + rownnz[i]]."""
    rng = d.efc_range[:d.nefc]
    rownnz = (rng[:, 1] + rng[:, 3]).astype(np.int64)
    rowadr = np.concatenate(([0], np.cumsum(rownnz)[:-1])).astype(np.int64)
    colind = np.concatenate([np.r_[r[0]:r[0] + r[1], r[2]:r[2] + r[3]] for r in rng]
                            + [np.empty(0, np.int64)]).astype(np.int64)
    return rownnz, rowadr[:d.nefc], colind


@jit
def reference(m, d):
    """efc_vel = J qvel and the desired velocity v* = v - h B v - h K (pos - margin) (24),
    B and K diagonal (28) or, with exact stabilization, the full matrices."""
    h = m.opt_timestep[0]
    for i in range(d.nefc[0]):
        vel = row_dot(d, i, d.efc_J, d.qvel)
        d.efc_vel[i] = vel
        d.efc_vstar[i] = vel - h * d.efc_B[i] * vel - h * d.efc_K[i] * (d.efc_pos[i]
                                                                       - d.efc_margin[i])
    if m.opt_stabilization[0] == EXACT:
        exact_stabilization(m, d)


@jit
def exact_stabilization(m, d):
    """v* of the soft rows with B, K from A R^-1 B = (I + A R^-1) 2 kappa^-1 and
    A R^-1 K = (I + A R^-1) kappa^-2 (the variant after eq. 28), i.e. with
    G = (A R^-1)^+ (I + A R^-1): B = G diag(2 / kappa), K = G diag(kbar), kbar = 1 / kappa^2
    (0 on friction rows). Then the x-space dynamics (25) read x'' + 2 x' / kappa + x / kappa^2
    = (I + A R^-1)^-1 a row by row when A is invertible. Hard rows keep their diagonal values
    (their R is 0: x' = v* exactly). Writes efc_vstar; efc_B, efc_K receive the diagonals."""
    h = m.opt_timestep[0]
    nefc = d.nefc[0]
    nv = d.qvel.shape[0]
    rows = np.empty(nefc, np.int64)
    ns = 0
    for i in range(nefc):
        if not d.efc_hard[i]:
            rows[ns] = i
            ns += 1
    if ns == 0:
        return
    minvjt = np.zeros((ns, nv))
    for a in range(ns):
        row_axpy(d, rows[a], d.efc_J, 1.0, minvjt[a])
        solve_m(m, d.qLD, d.qLDiagInv, minvjt[a])
    AR = np.empty((ns, ns))
    for a in range(ns):
        for b in range(ns):
            AR[a, b] = row_dot(d, rows[a], d.efc_J, minvjt[b]) / d.efc_R[rows[b]]
    IAR = AR.copy()
    for a in range(ns):
        IAR[a, a] += 1.0
    G = np.linalg.pinv(AR) @ IAR
    vel = np.empty(ns)
    x = np.empty(ns)
    for b in range(ns):
        i = rows[b]
        vel[b] = d.efc_vel[i]
        # x: violation of limits, contacts and equalities; friction rows have K = 0
        x[b] = d.efc_pos[i] - d.efc_margin[i] if d.efc_K[i] != 0.0 else 0.0
    for a in range(ns):
        i = rows[a]
        bv = 0.0
        kx = 0.0
        for b in range(ns):
            kb = d.efc_kappa[rows[b]]
            bv += G[a, b] * 2.0 / kb * vel[b]
            kx += G[a, b] / (kb * kb) * x[b]
        d.efc_B[i] = G[a, a] * 2.0 / d.efc_kappa[i]
        d.efc_K[i] = G[a, a] / d.efc_kappa[i] ** 2 if d.efc_K[i] != 0.0 else 0.0
        d.efc_vstar[i] = vel[a] - h * bv - h * kx


def contact_force(m, d, c):
    """Force of contact c in its frame (normal, tangent 1, tangent 2, torsion, rolling 1,
    rolling 2), as MuJoCo's mj_contactForce: the efc_force rows of an elliptic or frictionless
    contact, or for a pyramidal one f_n = sum of the edge forces and
    f_j = mu_j (f_edge+ - f_edge-). Zero for a contact without rows."""
    from .types import check_data
    check_data(m, d)
    out = np.zeros(6)
    if not 0 <= c < d.ncon:
        raise IndexError(f"contact {c} out of range: d.ncon is {d.ncon}")
    adr = d.contact_efc_address[c]
    if adr < 0:
        return out
    dim = d.contact_dim[c]
    if d.efc_type[adr] == CONTACT_PYRAMIDAL:
        for k in range(1, dim):
            plus, minus = d.efc_force[adr + 2 * (k - 1)], d.efc_force[adr + 2 * (k - 1) + 1]
            out[0] += plus + minus
            out[k] = d.efc_mu[adr + 2 * (k - 1)] * (plus - minus)
    else:
        out[:dim] = d.efc_force[adr:adr + dim]
    return out

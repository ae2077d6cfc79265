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
a dense matrix for tests and users. As in MuJoCo, IMPLICITFAST symmetrises the ellipsoid fluid
model's 6 x 6 block of each geom (except on standalone free bodies, whose block the integrator
keeps whole), so that its qDeriv is then not the exact derivative there.
"""
import math

import numpy as np

from . import actuator
from .enums import BiasType, DisableBit, DynType, GainType, Integrator, JointType, TrnType
from .jit import jit
from .math import (MINVAL, add6, cross_force, cross_motion, dot6, mat9, mul_inert_vec,
                   mulmattvec3, row6, row10, vec3)
from .passive import ellipsoid_max_moment, ellipsoid_semiaxes, inertia_box
from .smooth import jac_kernel, last_dof, object_velocity_local
from .types import Data, Model, check_data

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
        below = np.arange(i + 1, i + nsub[i])
        bad = (parent[below] < i) | (parent[below] >= below)
        if bad.any():
            raise ValueError("dofs are not numbered depth first: dof %d is not a "
                             "descendant of dof %d" % (below[bad][0], i))
    m.D_diag[:] = depth
    m.D_rownnz[:] = depth + nsub
    if nv:
        m.D_rowadr[0] = 0
        m.D_rowadr[1:] = np.cumsum(m.D_rownnz)[:-1]
    colind = np.empty(int(m.D_rownnz.sum()), dtype=np.int64)
    rowadr = np.asarray(m.D_rowadr)
    for i in range(nv):
        # row i: the ancestors of i (those of its parent, then the parent), then its subtree
        a, p = rowadr[i], parent[i]
        if p >= 0:
            colind[a:a + depth[p]] = colind[rowadr[p]:rowadr[p] + depth[p]]
            colind[a + depth[p]] = p
        colind[a + depth[i]:a + depth[i] + nsub[i]] = np.arange(i, i + nsub[i])
    m.D_colind[:] = colind
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
    with d force / d velocity = biasprm[2] (affine bias) + (d gain / d velocity) * input, the
    gain's derivative gainprm[2] (affine) or muscle_gain_vel (muscle), the input being the
    control (clamped to ctrlrange, as the force uses it) or the activation (the next one with
    actearly). Actuators whose force is at its forcerange, and
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
        elif m.actuator_gaintype[i] == GainType.MUSCLE:
            gain_vel = muscle_gain_vel(d.actuator_length[i], d.actuator_velocity[i],
                                       m.actuator_lengthrange[i], m.actuator_acc0[i],
                                       m.actuator_gainprm[i])
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
def muscle_gain_vel(length, vel, lengthrange, acc0, prm):
    """d actuator.muscle_gain / d vel = -F FL(L) FV'(V) / (L0 vmax), FV' the slope of the
    force-velocity curve: 0 below V = -1, 2 (V + 1) up to 0, 2 (y - V) / y up to y = fvmax - 1,
    0 beyond (MuJoCo's mjd_muscleGain_vel)."""
    force, L0 = actuator.muscle_scale(prm, lengthrange, acc0)
    L = prm[0] + (length - lengthrange[0]) / max(MINVAL, L0)
    V = vel / max(MINVAL, L0 * prm[6])
    FL = actuator.muscle_gain_length(L, prm[4], prm[5])
    y = prm[8] - 1.0
    if V <= -1.0:
        dFV = 0.0
    elif V <= 0.0:
        dFV = 2.0 * (V + 1.0)
    elif V <= y:
        dFV = 2.0 * (y - V) / max(MINVAL, y)
    else:
        dFV = 0.0
    return -force * FL * dFV / max(MINVAL, L0 * prm[6])


@jit
def passive_vel(m, d):
    """qDeriv += d qfrc_passive / d qvel: the fluid forces (inertia-box or ellipsoid model, as
    passive.py chooses per body), -dof_damping on the diagonal, -tendon_damping ten_J' ten_J
    (MuJoCo's mjd_passive_vel)."""
    flags = m.opt_disableflags[0]
    if flags & DisableBit.PASSIVE or (flags & DisableBit.SPRING and flags & DisableBit.DAMPER):
        return
    if m.opt_viscosity[0] > 0.0 or m.opt_density[0] > 0.0:
        for b in range(1, m.body_parentid.shape[0]):
            if m.body_mass[b] < MINVAL:
                continue
            ellipsoid = False
            for g in range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b]):
                if m.geom_fluid[g, 0] > 0.0:
                    ellipsoid = True
            if ellipsoid:
                for g in range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b]):
                    if m.geom_fluid[g, 0] != 0.0:
                        ellipsoid_fluid_vel(m, d, b, g)
            else:
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
def local_jac(m, d, body, point, mat):
    """deriv_jac = the Jacobian of the 6D velocity (rotation, translation) of a frame fixed to
    body, at point, with axes the columns of mat, in that frame (the map of
    smooth.object_velocity_local): R' jacr over R' jacp. Returns the last dof of body's chain,
    the only dofs whose columns are not zero."""
    J = d.deriv_jac
    jac_kernel(m, d, point, body, J[3:6], J[0:3])
    last = last_dof(m, body)
    j = last
    while j >= 0:
        for r in (0, 3):
            x, y, z = J[r, j], J[r + 1, j], J[r + 2, j]
            for c in range(3):
                J[r + c, j] = mat[c] * x + mat[3 + c] * y + mat[6 + c] * z
        j = m.dof_parentid[j]
    return last


@jit
def add_jtbj_local(m, d, last):
    """qDeriv += J' B J with J = deriv_jac (6 x nv, zero outside the chain ending at dof last)
    and B = deriv_B (6 x 6): the rows and columns are all on that chain, in the D pattern."""
    J = d.deriv_jac
    B = d.deriv_B
    k = last
    while k >= 0:
        # w = J[:, k]' B, then row k += w J
        w0 = w1 = w2 = w3 = w4 = w5 = 0.0
        for r in range(6):
            jr = J[r, k]
            w0 += jr * B[r, 0]
            w1 += jr * B[r, 1]
            w2 += jr * B[r, 2]
            w3 += jr * B[r, 3]
            w4 += jr * B[r, 4]
            w5 += jr * B[r, 5]
        a = m.D_rowadr[k]
        for adr in range(a, a + m.D_rownnz[k]):
            c = m.D_colind[adr]
            d.qDeriv[adr] += (w0 * J[0, c] + w1 * J[1, c] + w2 * J[2, c] + w3 * J[3, c]
                              + w4 * J[4, c] + w5 * J[5, c])
        k = m.dof_parentid[k]


@jit
def local_fluid_velocity(m, d, body, point, mat):
    """(w, u): the angular velocity and the linear velocity less the wind of the frame at point
    with axes mat fixed to body, in that frame (as passive.py's fluid models see them)."""
    v = object_velocity_local(m, d, body, point, mat)
    wind = mulmattvec3(mat, (m.opt_wind[0], m.opt_wind[1], m.opt_wind[2]))
    return (v[0], v[1], v[2]), (v[3] - wind[0], v[4] - wind[1], v[5] - wind[2])


@jit
def inertia_box_fluid_vel(m, d, b):
    """qDeriv += J' B J for the drag of body b's equivalent inertia box (passive.py's
    inertia_box_fluid), J the com's local velocity Jacobian in the inertial frame, B diagonal:
    viscous -pi diam^3 visc (rotation) and -3 pi diam visc (translation), quadratic
    -2 (drag coefficient) |v_k| (MuJoCo's mjd_inertiaBoxFluid)."""
    box = inertia_box(m, b)
    mat = mat9(d.ximat, b)
    point = vec3(d.xipos, b)
    last = local_jac(m, d, b, point, mat)
    w, u = local_fluid_velocity(m, d, b, point, mat)
    rho = m.opt_density[0]
    visc = m.opt_viscosity[0]
    diam = (box[0] + box[1] + box[2]) / 3.0
    B = d.deriv_B
    B[:, :] = 0.0
    for a in range(3):
        c1, c2 = (a + 1) % 3, (a + 2) % 3
        # torque -pi diam^3 visc w_a - rho box_a (box_c1^4 + box_c2^4) |w_a| w_a / 64
        B[a, a] = (-math.pi * diam ** 3 * visc
                   - rho * box[a] * (box[c1] ** 4 + box[c2] ** 4) * 2.0 * abs(w[a]) / 64.0)
        # force -3 pi diam visc u_a - rho/2 box_c1 box_c2 |u_a| u_a
        B[3 + a, 3 + a] = (-3.0 * math.pi * diam * visc
                           - 0.5 * rho * box[c1] * box[c2] * 2.0 * abs(u[a]))
    add_jtbj_local(m, d, last)


@jit
def _add_skew(B, r0, c0, a, s0, s1, s2):
    """B[r0:r0+3, c0:c0+3] += [a]x diag(s): the derivative of a x (s * x) in x."""
    B[r0, c0 + 1] -= a[2] * s1
    B[r0, c0 + 2] += a[1] * s2
    B[r0 + 1, c0] += a[2] * s0
    B[r0 + 1, c0 + 2] -= a[0] * s2
    B[r0 + 2, c0] -= a[1] * s0
    B[r0 + 2, c0 + 1] += a[0] * s1


@jit
def _add_outer(B, r0, c0, a, b, diag):
    """B[r0:r0+3, c0:c0+3] += a b' + diag I."""
    for i in range(3):
        for j in range(3):
            B[r0 + i, c0 + j] += a[i] * b[j]
        B[r0 + i, c0 + i] += diag


@jit
def ellipsoid_fluid_vel(m, d, body, g):
    """qDeriv += J' B J for geom g's ellipsoid fluid forces (passive.py's ellipsoid_fluid):
    J the local velocity Jacobian of the geom frame, B = d (torque, force) / d (w, u) in that
    frame, block by block from the force formulas (MuJoCo's mjd_ellipsoidFluid; for
    IMPLICITFAST B is replaced by (B + B') / 2 except on standalone free bodies)."""
    s = ellipsoid_semiaxes(m, g)
    mat = mat9(d.geom_xmat, g)
    point = vec3(d.geom_xpos, g)
    last = local_jac(m, d, body, point, mat)
    w, u = local_fluid_velocity(m, d, body, point, mat)
    rho = m.opt_density[0]
    visc = m.opt_viscosity[0]
    blunt = m.geom_fluid[g, 1]
    slender = m.geom_fluid[g, 2]
    angdrag = m.geom_fluid[g, 3]
    kutta = m.geom_fluid[g, 4]
    magnus = m.geom_fluid[g, 5]
    mv = (rho * m.geom_fluid[g, 6], rho * m.geom_fluid[g, 7], rho * m.geom_fluid[g, 8])
    iv = (rho * m.geom_fluid[g, 9], rho * m.geom_fluid[g, 10], rho * m.geom_fluid[g, 11])
    B = d.deriv_B
    B[:, :] = 0.0

    # added mass: torque p x u + L x w, force p x w, p = mv u, L = iv w (mv, iv with rho)
    #   d(p x u)/du = [p]x - [u]x diag(mv),  d(L x w)/dw = [L]x - [w]x diag(iv),
    #   d(p x w)/dw = [p]x,                  d(p x w)/du = -[w]x diag(mv)
    p = (mv[0] * u[0], mv[1] * u[1], mv[2] * u[2])
    L = (iv[0] * w[0], iv[1] * w[1], iv[2] * w[2])
    mu = (-u[0], -u[1], -u[2])
    mw = (-w[0], -w[1], -w[2])
    _add_skew(B, 0, 3, p, 1.0, 1.0, 1.0)
    _add_skew(B, 0, 3, mu, mv[0], mv[1], mv[2])
    _add_skew(B, 0, 0, L, 1.0, 1.0, 1.0)
    _add_skew(B, 0, 0, mw, iv[0], iv[1], iv[2])
    _add_skew(B, 3, 0, p, 1.0, 1.0, 1.0)
    _add_skew(B, 3, 3, mw, mv[0], mv[1], mv[2])

    # Magnus force cm (w x u), cm = magnus rho volume: d/dw = -cm [u]x, d/du = cm [w]x
    cm = magnus * rho * 4.0 / 3.0 * math.pi * s[0] * s[1] * s[2]
    _add_skew(B, 3, 0, u, -cm, -cm, -cm)
    _add_skew(B, 3, 3, w, cm, cm, cm)

    # with A = diag(a), a_i = (s_j s_k)^2: P = u'Au (proj_num), Q = u'A^2u (proj_denom),
    # S = u'u, projected area A_proj = pi sqrt(Q / P), cos_alpha = P / (sqrt(S) Q)
    a = ((s[1] * s[2]) ** 2, (s[2] * s[0]) ** 2, (s[0] * s[1]) ** 2)
    Au = (a[0] * u[0], a[1] * u[1], a[2] * u[2])
    AAu = (a[0] * Au[0], a[1] * Au[1], a[2] * Au[2])
    P = Au[0] * u[0] + Au[1] * u[1] + Au[2] * u[2]
    Q = AAu[0] * u[0] + AAu[1] * u[1] + AAu[2] * u[2]
    S = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]
    speed = math.sqrt(S)
    moving = P > 0.0 and Q > 0.0 and S > 0.0

    # Kutta lift kutta rho cos_alpha A_proj ((Au x u) x u) = k G h, k = pi kutta rho,
    # G = sqrt(P / (S Q)), h = P u - S Au:
    #   dF/du = k (h dG' + G dh),  dG = G (Au / P - u / S - A^2u / Q),
    #   dh = 2 u (Au)' + P I - 2 Au u' - S A
    if moving and kutta != 0.0:
        k = math.pi * kutta * rho
        G = math.sqrt(P / (S * Q))
        h = (P * u[0] - S * Au[0], P * u[1] - S * Au[1], P * u[2] - S * Au[2])
        dG = (G * (Au[0] / P - u[0] / S - AAu[0] / Q), G * (Au[1] / P - u[1] / S - AAu[1] / Q),
              G * (Au[2] / P - u[2] / S - AAu[2] / Q))
        for i in range(3):
            for j in range(3):
                B[3 + i, 3 + j] += k * (h[i] * dG[j] + 2.0 * G * (u[i] * Au[j] - Au[i] * u[j]))
            B[3 + i, 3 + i] += k * G * (P - S * a[i])

    # drag -c_u u, c_u = visc 3 pi D + rho |u| (A_proj blunt + slender (A_max - A_proj)),
    # D = 2/3 (s0 + s1 + s2):  dF/du = -c_u I - u dc_u',
    # dc_u = rho ((A_proj blunt + slender (A_max - A_proj)) u / |u| + |u| (blunt - slender)
    # dA_proj), dA_proj = pi (P A^2u - Q Au) / (P^3/2 Q^1/2)
    eq_D = 2.0 / 3.0 * (s[0] + s[1] + s[2])
    d_max = max(max(s[0], s[1]), s[2])
    d_min = min(min(s[0], s[1]), s[2])
    d_mid = s[0] + s[1] + s[2] - d_max - d_min
    A_max = math.pi * d_max * d_mid
    c_u = visc * 3.0 * math.pi * eq_D
    grad = (0.0, 0.0, 0.0)
    if moving:
        A_proj = math.pi * math.sqrt(Q / P)
        quad = rho * (A_proj * blunt + slender * (A_max - A_proj))
        c_u += quad * speed
        dA = math.pi / (P * math.sqrt(P * Q))
        e = rho * speed * (blunt - slender) * dA
        grad = (quad * u[0] / speed + e * (P * AAu[0] - Q * Au[0]),
                quad * u[1] / speed + e * (P * AAu[1] - Q * Au[1]),
                quad * u[2] / speed + e * (P * AAu[2] - Q * Au[2]))
    _add_outer(B, 3, 3, mu, grad, -c_u)

    # angular drag -c_w w, c_w = visc pi D^3 + rho |C w|, C = diag(angdrag II_i + slender
    # (I_max - II_i)), II_i = 8/15 pi s_i max(s_j, s_k)^4:
    #   dT/dw = -c_w I - w dc_w',  dc_w = rho C^2 w / |C w|
    I_max = 8.0 / 15.0 * math.pi * d_mid * d_max ** 4
    II = (ellipsoid_max_moment(s[0], s[1], s[2]), ellipsoid_max_moment(s[1], s[2], s[0]),
          ellipsoid_max_moment(s[2], s[0], s[1]))
    C = (angdrag * II[0] + slender * (I_max - II[0]), angdrag * II[1] + slender * (I_max - II[1]),
         angdrag * II[2] + slender * (I_max - II[2]))
    Cw = (C[0] * w[0], C[1] * w[1], C[2] * w[2])
    norm_Cw = math.sqrt(Cw[0] * Cw[0] + Cw[1] * Cw[1] + Cw[2] * Cw[2])
    c_w = visc * math.pi * eq_D ** 3 + rho * norm_Cw
    grad = (0.0, 0.0, 0.0)
    if norm_Cw > 0.0:
        r = rho / norm_Cw
        grad = (r * C[0] * Cw[0], r * C[1] * Cw[1], r * C[2] * Cw[2])
    _add_outer(B, 0, 0, mw, grad, -c_w)

    # the forces are scaled by the geom's interaction coefficient
    coef = m.geom_fluid[g, 0]
    if m.opt_integrator[0] == Integrator.IMPLICITFAST and not m.body_isfree[body]:
        for i in range(6):
            for j in range(i, 6):
                x = 0.5 * coef * (B[i, j] + B[j, i])
                B[i, j] = x
                B[j, i] = x
    elif coef != 1.0:
        for i in range(6):
            for j in range(6):
                B[i, j] *= coef
    add_jtbj_local(m, d, last)


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
    check_data(m, d)
    smooth_vel(m._struct, d._struct, bool(flg_bias))

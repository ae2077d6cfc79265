"""Analytical derivatives of the dynamics: the inverse dynamics, the smooth forward dynamics and
a whole step through the soft contact model (derivation: docs/derivatives.md).

    inverse_derivatives(m, d)      d qfrc_inverse / d (qpos, qvel, qacc)    (like inverse_fd)
    smooth_derivatives(m, d)       d qacc_smooth / d (qpos, qvel, act, ctrl), d act_dot / ...
    transition_derivatives(m, d)   A, B of a step, as transition_fd

The step's acceleration solves F(q, v, a, act, u) = 0 with the inverse dynamics residual
    F = RNE(q, v, a) + (armature + h damping) a - qfrc_passive - qfrc_actuator - qfrc_applied
        - J' xfrc_applied - J' f*(z) / h,       z = R^-1 (v* - J (v + h a))
(paper eq. 12 with the impulses of Theorem 4: f* projects z on each object's set), so by the
implicit function theorem da/dx = -H^-1 dF/dx with H = dF/da = M + h B + J' D J,
D = dProj(z) R^-1 blockwise (Newton's Hessian): no inverse of M is formed, and the constraint
solve is differentiated through its optimality conditions at the solution, over the active set
that z selects (rows at zero impulse, on the cone surface, inside it).

Positions are differentiated in the tangent space: a perturbation of dof i moves the bodies below
it by the twist cdof_i (a ball or free rotation about the body's own axes), so the position
derivatives follow from spatial cross products (Featherstone's RNEA derivatives in the form of
Carpentier and Mansard), all in the com-based frames of the forward pass, with the origin of each
tree held fixed.
"""
import math
import weakref
from collections import namedtuple
from contextlib import contextmanager

import numpy as np

from . import warmup
from .actuator import fwd_actuation, next_activation
from .collision_convex import FACE_TOL, _nvertex, _vertex
from .collision_driver import (C_BOX_BOX, C_CAPSULE_BOX, C_CAPSULE_CAPSULE, C_CONVEX, C_PLANE_BOX,
                               C_PLANE_CAPSULE, C_PLANE_CONVEX, C_PLANE_CYLINDER, C_PLANE_SPHERE,
                               C_SPHERE_BOX, C_SPHERE_CAPSULE, C_SPHERE_SPHERE, COLLISION_FUNC)
from .constraint import (CONTACT_ELLIPTIC, CONTACT_FRICTIONLESS, CONTACT_PYRAMIDAL, EQUALITY,
                         FRICTION_DOF, FRICTION_TENDON, LIMIT_JOINT, OBJ_SITE, contact_nrows,
                         equality_frames, row_axpy, row_col, row_dot, row_epsilon,
                         softness)
from .derivative import actuator_vel, passive_vel, rne_vel
from .derivative_fd import restore_state, save_state
from .enums import (BiasType, DisableBit, DynType, EqType, GainType, GeomType, Integrator,
                    JointType, Solver, Stabilization, TrnType, WrapType)
from .forward import _grow, forward_kernel, implicit_damping
from .inverse import check_invertible, inverse_kernel
from .jit import inlined, jit
from . import math as _vm
from .math import MINVAL, quat2vel, quat_sub
from .smooth import crb, last_dof, solve_m
from .solver import _cholesky_small, _cholesky_solve, cone_dproj, cone_project, object_size
from .types import Data, Model

FREE = int(JointType.FREE)
BALL = int(JointType.BALL)
NO_SPRING = int(DisableBit.PASSIVE | DisableBit.SPRING)
EXACT_STABILIZATION = int(Stabilization.EXACT)
SPHERE_T = int(GeomType.SPHERE)
CAPSULE_T = int(GeomType.CAPSULE)
ELLIPSOID_T = int(GeomType.ELLIPSOID)
BOX_T = int(GeomType.BOX)
MESH_T = int(GeomType.MESH)

# status codes of the kernels (the Python wrappers raise on them)
OK = 0
BAD_PAIR = 1          # a contact between geoms whose geometric derivative is not implemented


# ------------------------------------------------------------------------------------------------
# small spatial helpers (6-tuples: rot, lin)
# ------------------------------------------------------------------------------------------------
def _inline(fn):
    """The vector kernel of engine.math compiled into its callers: the derivative loops make
    hundreds of such calls per dof and contact, each a real call otherwise."""
    return inlined(getattr(fn, "py_func", fn))


add3, sub3, scl3, dot3, cross3, norm3 = (_inline(_vm.add3), _inline(_vm.sub3), _inline(_vm.scl3),
                                         _inline(_vm.dot3), _inline(_vm.cross3),
                                         _inline(_vm.norm3))
vec3, mat9, row6, row10, dot6 = (_inline(_vm.vec3), _inline(_vm.mat9), _inline(_vm.row6),
                                 _inline(_vm.row10), _inline(_vm.dot6))
quat_mul, mul_inert_vec = _inline(_vm.quat_mul), _inline(_vm.mul_inert_vec)


@inlined
def cross_motion(v, u):
    """Spatial motion cross product v x u (engine.math.cross_motion, inlined)."""
    r = cross3((v[0], v[1], v[2]), (u[0], u[1], u[2]))
    a = cross3((v[0], v[1], v[2]), (u[3], u[4], u[5]))
    b = cross3((v[3], v[4], v[5]), (u[0], u[1], u[2]))
    return (r[0], r[1], r[2], a[0] + b[0], a[1] + b[1], a[2] + b[2])


@inlined
def cross_force(v, f):
    """Spatial force cross product v x* f (engine.math.cross_force, inlined)."""
    a = cross3((v[0], v[1], v[2]), (f[0], f[1], f[2]))
    b = cross3((v[3], v[4], v[5]), (f[3], f[4], f[5]))
    c = cross3((v[0], v[1], v[2]), (f[3], f[4], f[5]))
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], c[0], c[1], c[2])


@inlined
def _sub6(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4], a[5] - b[5])


@inlined
def _axpy6(a, b, s):
    """a + s b."""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2], a[3] + s * b[3],
            a[4] + s * b[4], a[5] + s * b[5])


@inlined
def _rot(t):
    return (t[0], t[1], t[2])


@inlined
def _point_vel(t, p, o):
    """Velocity of the point p under the twist t given about the origin o: lin + rot x (p - o)."""
    return add3((t[3], t[4], t[5]), cross3((t[0], t[1], t[2]), sub3(p, o)))


@inlined
def _wrench(force, torque, p, o):
    """Spatial force about o of a force at the point p and a torque."""
    m = add3(torque, cross3(sub3(p, o), force))
    return (m[0], m[1], m[2], force[0], force[1], force[2])


@inlined
def _tree_origin(m, d, b):
    """The origin of body b's com-based frame: the centre of mass of its kinematic tree."""
    return vec3(d.subtree_com, m.body_rootid[b])


@inlined
def _rotvec_mat(phi):
    """Rotation matrix (row-major 9-tuple) of the rotation vector phi (Rodrigues)."""
    t = norm3(phi)
    if t < 1e-12:
        c1 = 1.0
        c2 = 0.5
    else:
        c1 = math.sin(t) / t
        c2 = (1.0 - math.cos(t)) / (t * t)
    x, y, z = phi
    # R = I + c1 [phi]x + c2 [phi]x^2
    return (1.0 - c2 * (y * y + z * z), -c1 * z + c2 * x * y, c1 * y + c2 * x * z,
            c1 * z + c2 * x * y, 1.0 - c2 * (x * x + z * z), -c1 * x + c2 * y * z,
            -c1 * y + c2 * x * z, c1 * x + c2 * y * z, 1.0 - c2 * (x * x + y * y))


@inlined
def _right_jacobian(phi, inverse):
    """Right Jacobian of the exponential map of SO(3), exp(phi + e) ~ exp(phi) exp(Jr e), or its
    inverse: I + a [phi]x + b [phi]x^2 with a = -(1 - cos t)/t^2, b = (t - sin t)/t^3, and for
    the inverse a = 1/2, b = 1/t^2 - (1 + cos t) / (2 t sin t)."""
    t = norm3(phi)
    if inverse:
        a = 0.5
        b = 1.0 / 12.0 + t * t / 720.0 if t < 1e-4 else (
            1.0 / (t * t) - (1.0 + math.cos(t)) / (2.0 * t * math.sin(t)))
    else:
        a = -(0.5 - t * t / 24.0) if t < 1e-4 else -(1.0 - math.cos(t)) / (t * t)
        b = 1.0 / 6.0 - t * t / 120.0 if t < 1e-4 else (t - math.sin(t)) / (t * t * t)
    x, y, z = phi
    return (1.0 - b * (y * y + z * z), -a * z + b * x * y, a * y + b * x * z,
            a * z + b * x * y, 1.0 - b * (x * x + z * z), -a * x + b * y * z,
            -a * y + b * x * z, a * x + b * y * z, 1.0 - b * (x * x + y * y))


# ------------------------------------------------------------------------------------------------
# the kinematic tree
# ------------------------------------------------------------------------------------------------
@jit
def tree_ends(m, dof_end, body_end):
    """dof_end[i]: one past the last dof descendant of dof i; body_end[b]: one past the last body
    of b's subtree (both numbered depth first, so descendants are contiguous)."""
    nv = dof_end.shape[0]
    for i in range(nv):
        dof_end[i] = i + 1
    for i in range(nv - 1, -1, -1):
        p = m.dof_parentid[i]
        if p >= 0:
            dof_end[p] = max(dof_end[p], dof_end[i])
    nbody = body_end.shape[0]
    for b in range(nbody):
        body_end[b] = b + 1
    for b in range(nbody - 1, 0, -1):
        p = m.body_parentid[b]
        body_end[p] = max(body_end[p], body_end[b])


@inlined
def _same_rotation(m, i, j):
    """Dofs i and j rotate one ball or free joint: each one's motion turns the other's axis."""
    jnt = m.dof_jntid[i]
    if m.dof_jntid[j] != jnt:
        return False
    t = m.jnt_type[jnt]
    if t == BALL:
        return True
    return t == FREE and i - m.jnt_dofadr[jnt] >= 3 and j - m.jnt_dofadr[jnt] >= 3


@inlined
def _moves(m, dof_end, i, j):
    """The motion of dof i changes the axis cdof_j: j is a dof descendant of i, or both rotate
    the same ball or free joint."""
    return (i < j < dof_end[i]) or (j != i and _same_rotation(m, i, j))


@jit
def twists(m, d, x, body_T, dof_U):
    """body_T[b]: the twist of body b under the generalized velocity x (com-based, cvel for
    x = qvel); dof_U[i]: the twist of the frame that dof i moves, the part of body_T that the
    motion of dof i does not turn (com_vel's velocity for cdof_dot: before a hinge or slide dof,
    before a ball joint, after the translations of a free joint)."""
    for k in range(6):
        body_T[0, k] = 0.0
    for b in range(1, m.body_parentid.shape[0]):
        t = row6(body_T, m.body_parentid[b])
        for jnt in range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b]):
            da = m.jnt_dofadr[jnt]
            jt = m.jnt_type[jnt]
            if jt == FREE:
                for k in range(3):
                    t = _axpy6(t, row6(d.cdof, da + k), x[da + k])
                for k in range(6):
                    _set6(dof_U, da + k, t)
                for k in range(3, 6):
                    t = _axpy6(t, row6(d.cdof, da + k), x[da + k])
            elif jt == BALL:
                for k in range(3):
                    _set6(dof_U, da + k, t)
                for k in range(3):
                    t = _axpy6(t, row6(d.cdof, da + k), x[da + k])
            else:
                _set6(dof_U, da, t)
                t = _axpy6(t, row6(d.cdof, da), x[da])
        _set6(body_T, b, t)


@inlined
def _set6(a, i, v):
    for k in range(6):
        a[i, k] = v[k]


@jit
def accelerations(m, d, qacc, gravity_on, body_A, body_F, dof_alpha):
    """RNE with the acceleration qacc (smooth.rne's cacc and cfrc_int): body_A[b] the body's
    acceleration (world: -gravity), body_F[b] the force of its subtree; dof_alpha[i] the part
    of body_A that dof i's motion does not turn (as twists' dof_U)."""
    g = (0.0, 0.0, 0.0)
    if gravity_on:
        g = (-m.opt_gravity[0], -m.opt_gravity[1], -m.opt_gravity[2])
    _set6(body_A, 0, (0.0, 0.0, 0.0, g[0], g[1], g[2]))
    for k in range(6):
        body_F[0, k] = 0.0
    nbody = m.body_parentid.shape[0]
    for b in range(1, nbody):
        a = row6(body_A, m.body_parentid[b])
        for jnt in range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b]):
            da = m.jnt_dofadr[jnt]
            jt = m.jnt_type[jnt]
            n = 6 if jt == FREE else (3 if jt == BALL else 1)
            first = 3 if jt == FREE else 0
            for k in range(first):
                a = _axpy6(_axpy6(a, row6(d.cdof_dot, da + k), d.qvel[da + k]),
                           row6(d.cdof, da + k), qacc[da + k])
            for k in range(n):
                _set6(dof_alpha, da + k, a)
            for k in range(first, n):
                a = _axpy6(_axpy6(a, row6(d.cdof_dot, da + k), d.qvel[da + k]),
                           row6(d.cdof, da + k), qacc[da + k])
        _set6(body_A, b, a)
        inert = row10(d.cinert, b)
        v = row6(d.cvel, b)
        _set6(body_F, b, _add6(mul_inert_vec(inert, a), cross_force(v, mul_inert_vec(inert, v))))
    for b in range(nbody - 1, 0, -1):
        p = m.body_parentid[b]
        if p > 0:
            for k in range(6):
                body_F[p, k] += body_F[b, k]


@inlined
def _add6(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5])


# ------------------------------------------------------------------------------------------------
# position derivatives of the smooth forces (d / d qpos in the tangent space, column i = dof i)
# ------------------------------------------------------------------------------------------------
@jit
def rne_pos(m, d, w, out):
    """out[:, i] += d RNE(q, v, a) / d q_i, a the acceleration given to `accelerations`.

    The motion of dof i carries its subtree rigidly with the twist S_i = cdof_i, except for the
    velocity and acceleration of the frame it moves (u_i, alpha_i: dof_U, dof_alpha), which stay
    put in the world. So each body's force changes by the transported force S_i x* f_b plus
        phi_b = I_b da_b + nu_i x* (I_b v_b) + v_b x* (I_b nu_i),
        da_b = -S_i x alpha_i + nu_i x (v_b - u_i),    nu_i = u_i x S_i = cdof_dot_i,
    (the non-transported changes of v_b and a_b), and tau_j = S_j . F_j changes by
    S_j . Phi_j for the dofs j whose axis dof i turns, by S_j . (S_i x* F + Phi) for those
    before it (Phi: phi summed over the subtree). O(nv x subtree size)."""
    nv = d.qvel.shape[0]
    body_F = w.body_F
    phi = w.body_phi
    for i in range(nv):
        b0 = m.dof_bodyid[i]
        end = w.body_end[b0]
        S = row6(d.cdof, i)
        nu = row6(d.cdof_dot, i)
        u = row6(w.dof_U, i)
        sa = cross_motion(S, row6(w.dof_alpha, i))
        for b in range(b0, end):
            inert = row10(d.cinert, b)
            v = row6(d.cvel, b)
            da = _sub6(cross_motion(nu, _sub6(v, u)), sa)
            f = _add6(_add6(mul_inert_vec(inert, da), cross_force(nu, mul_inert_vec(inert, v))),
                      cross_force(v, mul_inert_vec(inert, nu)))
            _set6(phi, b, f)
        for b in range(end - 1, b0, -1):
            p = m.body_parentid[b]
            for k in range(6):
                phi[p, k] += phi[b, k]
        phi0 = row6(phi, b0)
        rigid = _add6(cross_force(S, row6(body_F, b0)), phi0)
        j = m.dof_parentid[i]
        while j >= 0:
            out[j, i] += dot6(row6(d.cdof, j), phi0 if _same_rotation(m, i, j) else rigid)
            j = m.dof_parentid[j]
        for j in range(i, w.dof_end[i]):
            out[j, i] += dot6(row6(d.cdof, j), row6(phi, m.dof_bodyid[j]))


@jit
def fixed_wrench_pos(m, d, w, b, W, scale, out):
    """out[j, i] += scale d (J_b' W)_j / d q_i for a spatial force W (about the origin of b's
    tree) fixed to body b: the motion of dof i turns W and the axes of the dofs it moves alike,
    so only the dofs j before i see a change, S_j . (S_i x* W)."""
    i = last_dof(m, b)
    while i >= 0:
        t = cross_force(row6(d.cdof, i), W)
        j = m.dof_parentid[i]
        while j >= 0:
            if not _same_rotation(m, i, j):
                out[j, i] += scale * dot6(row6(d.cdof, j), t)
            j = m.dof_parentid[j]
        i = m.dof_parentid[i]


@jit
def passive_pos(m, d, w, out):
    """out += d qfrc_passive / d qpos: joint springs (ball and free rotations through the
    inverse right Jacobian of the rotation vector), fixed-tendon springs, gravity compensation."""
    flags = m.opt_disableflags[0]
    if not flags & NO_SPRING:
        for jnt in range(m.jnt_type.shape[0]):
            k = m.jnt_stiffness[jnt]
            if k == 0.0:
                continue
            pa = m.jnt_qposadr[jnt]
            da = m.jnt_dofadr[jnt]
            t = m.jnt_type[jnt]
            if t == FREE:
                for c in range(3):
                    out[da + c, da + c] -= k
                pa += 3
                da += 3
            if t == FREE or t == BALL:
                # qfrc = -k log(q0^-1 q); d log / d (right perturbation) = Jr^-1
                r = quat_sub((d.qpos[pa], d.qpos[pa + 1], d.qpos[pa + 2], d.qpos[pa + 3]),
                             (m.qpos_spring[pa], m.qpos_spring[pa + 1], m.qpos_spring[pa + 2],
                              m.qpos_spring[pa + 3]))
                jinv = _right_jacobian(r, True)
                for a in range(3):
                    for c in range(3):
                        out[da + a, da + c] -= k * jinv[3 * a + c]
            else:
                out[da, da] -= k
        nv = d.qvel.shape[0]
        for t in range(m.tendon_stiffness.shape[0]):
            k = m.tendon_stiffness[t]
            length = d.ten_length[t]
            if k == 0.0 or m.tendon_lengthspring[t, 0] <= length <= m.tendon_lengthspring[t, 1]:
                continue
            # fixed tendon: qfrc = ten_J' k (ref - L), dL/dq = ten_J
            for a in range(nv):
                if d.ten_J[t, a] != 0.0:
                    for c in range(nv):
                        out[a, c] -= k * d.ten_J[t, a] * d.ten_J[t, c]
    g = (m.opt_gravity[0], m.opt_gravity[1], m.opt_gravity[2])
    if not flags & DisableBit.GRAVITY:
        for b in range(1, m.body_parentid.shape[0]):
            gc = m.body_gravcomp[b]
            if gc != 0.0:
                s = -m.body_mass[b] * gc
                W = _wrench((g[0] * s, g[1] * s, g[2] * s), (0.0, 0.0, 0.0), vec3(d.xipos, b),
                            _tree_origin(m, d, b))
                fixed_wrench_pos(m, d, w, b, W, 1.0, out)


@jit
def xfrc_pos(m, d, w, out):
    """out += d (J' xfrc_applied) / d qpos: the applied wrenches are fixed to their bodies."""
    for b in range(1, m.body_parentid.shape[0]):
        f = (d.xfrc_applied[b, 0], d.xfrc_applied[b, 1], d.xfrc_applied[b, 2])
        t = (d.xfrc_applied[b, 3], d.xfrc_applied[b, 4], d.xfrc_applied[b, 5])
        if f[0] != 0.0 or f[1] != 0.0 or f[2] != 0.0 or t[0] != 0.0 or t[1] != 0.0 or t[2] != 0.0:
            W = _wrench(f, t, vec3(d.xipos, b), _tree_origin(m, d, b))
            fixed_wrench_pos(m, d, w, b, W, 1.0, out)


# ------------------------------------------------------------------------------------------------
# actuators and activation dynamics
# ------------------------------------------------------------------------------------------------
@inlined
def _actuator_active(m, d, i):
    """False when the actuator's force does not respond to its inputs: the force at its
    forcerange, or a joint actuator whose joint's total actuator force is at its
    actuatorfrcrange (as the velocity derivatives)."""
    if m.actuator_forcelimited[i]:
        force = d.actuator_force[i]
        if force <= m.actuator_forcerange[i, 0] or force >= m.actuator_forcerange[i, 1]:
            return False
    trn = m.actuator_trntype[i]
    if trn == TrnType.JOINT or trn == TrnType.JOINTINPARENT:
        jnt = m.actuator_trnid[i, 0]
        if m.jnt_actfrclimited[jnt]:
            total = d.qfrc_actuator[m.jnt_dofadr[jnt]]
            if total <= m.jnt_actfrcrange[jnt, 0] or total >= m.jnt_actfrcrange[jnt, 1]:
                return False
    return True


@inlined
def _ctrl_passes(m, d, i):
    """The control reaches the actuator unclamped: d input / d ctrl = 1 (else 0)."""
    c = d.ctrl[i]
    if not math.isfinite(c):
        return False
    if m.actuator_ctrllimited[i] and not m.opt_disableflags[0] & DisableBit.CLAMPCTRL:
        return m.actuator_ctrlrange[i, 0] <= c <= m.actuator_ctrlrange[i, 1]
    return True


@jit
def activation_derivs(m, d, i):
    """(d act' / d act, d act' / d ctrl, d act_dot / d act, d act_dot / d ctrl) of actuator i's
    activation after a step (actuator.next_activation: Euler, or exact for FILTEREXACT; zero
    when it is clamped to actrange)."""
    h = m.opt_timestep[0]
    last = m.actuator_actadr[i] + m.actuator_actnum[i] - 1
    dyn = m.actuator_dyntype[i]
    pass_ctrl = 1.0 if _ctrl_passes(m, d, i) else 0.0
    if dyn == DynType.INTEGRATOR:
        ddot_act, ddot_ctrl = 0.0, pass_ctrl
    else:
        tau = max(MINVAL, m.actuator_dynprm[i, 0])
        ddot_act, ddot_ctrl = -1.0 / tau, pass_ctrl / tau
    scale = h
    if dyn == DynType.FILTEREXACT:
        tau = max(MINVAL, m.actuator_dynprm[i, 0])
        scale = tau * (1.0 - math.exp(-h / tau))
    dact, dctrl = 1.0 + scale * ddot_act, scale * ddot_ctrl
    if m.actuator_actlimited[i]:
        a = d.act[last] + scale * d.act_dot[last]
        if a < m.actuator_actrange[i, 0] or a > m.actuator_actrange[i, 1]:
            dact, dctrl = 0.0, 0.0
    return dact, dctrl, ddot_act, ddot_ctrl


@inlined
def _actuator_input(m, d, i):
    """The input that multiplies the gain: the clamped control, or the activation (the next
    one with actearly); and (d input / d act, d input / d ctrl)."""
    if m.actuator_actadr[i] < 0:
        c = d.ctrl[i]
        if m.actuator_ctrllimited[i] and not m.opt_disableflags[0] & DisableBit.CLAMPCTRL:
            c = min(max(c, m.actuator_ctrlrange[i, 0]), m.actuator_ctrlrange[i, 1])
        return c, 0.0, 1.0 if _ctrl_passes(m, d, i) else 0.0
    last = m.actuator_actadr[i] + m.actuator_actnum[i] - 1
    act = d.act[last]
    if m.actuator_actearly[i]:
        dact, dctrl, _, _ = activation_derivs(m, d, i)
        return next_activation(m, i, act, d.act_dot[last], m.opt_timestep[0]), dact, dctrl
    return act, 1.0, 0.0


@inlined
def _gain(m, d, i):
    gain = m.actuator_gainprm[i, 0]
    if m.actuator_gaintype[i] == GainType.AFFINE:
        gain += m.actuator_gainprm[i, 1] * d.actuator_length[i] + m.actuator_gainprm[i, 2] * \
            d.actuator_velocity[i]
    return gain


@jit
def actuator_pos(m, d, out):
    """out += d qfrc_actuator / d qpos: moment' (d force / d length) moment (joint and
    fixed-tendon transmissions: the moment is constant and d length / d q is the moment)."""
    if m.opt_disableflags[0] & DisableBit.ACTUATION:
        return
    nv = d.qvel.shape[0]
    for i in range(m.actuator_trntype.shape[0]):
        if not _actuator_active(m, d, i):
            continue
        dlen = 0.0
        if m.actuator_gaintype[i] == GainType.AFFINE:
            dlen += m.actuator_gainprm[i, 1] * _actuator_input(m, d, i)[0]
        if m.actuator_biastype[i] == BiasType.AFFINE:
            dlen += m.actuator_biasprm[i, 1]
        if dlen == 0.0:
            continue
        for a in range(nv):
            ma = d.actuator_moment[i, a]
            if ma != 0.0:
                for c in range(nv):
                    out[a, c] += dlen * ma * d.actuator_moment[i, c]


@jit
def actuator_inputs(m, d, Fa, Fu, scale):
    """Fa[:, k] += scale d qfrc_actuator / d act_k, Fu[:, i] += scale d qfrc_actuator / d ctrl_i:
    moment_i gain_i (d input / d act, d input / d ctrl)."""
    if m.opt_disableflags[0] & DisableBit.ACTUATION:
        return
    nv = d.qvel.shape[0]
    for i in range(m.actuator_trntype.shape[0]):
        if not _actuator_active(m, d, i):
            continue
        _, dact, dctrl = _actuator_input(m, d, i)
        g = _gain(m, d, i)
        for k in range(nv):
            mk = d.actuator_moment[i, k] * g * scale
            if m.actuator_actadr[i] >= 0:
                Fa[k, m.actuator_actadr[i] + m.actuator_actnum[i] - 1] += mk * dact
            Fu[k, i] += mk * dctrl


# ------------------------------------------------------------------------------------------------
# the constraint rows: active set and geometric derivatives
# ------------------------------------------------------------------------------------------------
@inlined
def cone_dproj_normal_r(r, mu1, n, z, out):
    """out = d Proj / d r_0 at fixed z for an elliptic cone (r_0 the normal's R; the friction
    rows' R are constant). With rho = r_0, kappa = mu_1 sqrt(r_1) (so muhat^2 = kappa^2 / rho)
    and s = (sum_j r_j z_j^2)^(1/2), cone_project's surface case reads
        x_0 = (rho z_0 + kappa s) / (rho + kappa^2),    x_j = kappa x_0 z_j / s,
    so d x_0 / d rho = kappa (kappa z_0 - s) / (rho + kappa^2)^2 and d x_j / d rho =
    kappa z_j / s d x_0 / d rho; zero inside the cone and at its tip."""
    for k in range(n):
        out[k] = 0.0
    rho = r[0]
    kappa2 = mu1 * mu1 * r[1]
    s = 0.0
    for j in range(1, n):
        s += r[j] * z[j] * z[j]
    s = math.sqrt(s)
    zh0 = math.sqrt(rho) * z[0]
    muhat = math.sqrt(kappa2 / rho)
    if (zh0 >= 0.0 and s <= muhat * zh0) or s < MINVAL or muhat * s <= -zh0:
        return
    kappa = math.sqrt(kappa2)
    dx0 = kappa * (kappa * z[0] - s) / ((rho + kappa2) * (rho + kappa2))
    out[0] = dx0
    for j in range(1, n):
        out[j] = kappa * z[j] / s * dx0


@jit
def constraint_objects(m, d, vnext, z, f, P, Pr):
    """For each object at rows i..i+n-1: z = R^-1 (v* - J v') (the vector of problem (15)),
    f = f*(z) its impulse (Theorem 4: unconstrained, clamped, half-line or cone projection in
    the metric R) and P[i:i+n, :n] = d f* / d z, the active set: 1 for an equality row, a
    friction-loss row inside its bounds and a limit, frictionless contact or pyramid edge with
    z > 0, else 0; for an elliptic cone the derivative of Algorithm 5's projection (identity
    inside, zero at the tip, the tangent map of the surface projection on it), and Pr[i:i+n]
    = d f* / d R_i at fixed z (cone_dproj_normal_r: the projection's metric turns with the
    normal's R, which depends on qpos; 0 elsewhere)."""
    nefc = d.nefc[0]
    zh = np.empty(12)
    Pb = np.empty((6, 6))
    i = 0
    while i < nefc:
        n = object_size(d, i)
        for k in range(n):
            z[i + k] = (d.efc_vstar[i + k] - row_dot(d, i + k, d.efc_J, vnext)) / d.efc_R[i + k]
            Pr[i + k] = 0.0
            for c in range(6):
                P[i + k, c] = 0.0
        t = d.efc_type[i]
        if t == CONTACT_ELLIPTIC:
            cone_project(z[i:i + n], d.efc_R[i:i + n], d.efc_mu[i:i + n], n, f[i:i + n])
            cone_dproj(d.efc_R[i:i + n], d.efc_mu[i + 1], n, z[i:i + n], Pb, zh)
            for a in range(n):
                for b in range(n):
                    P[i + a, b] = Pb[a, b]
            cone_dproj_normal_r(d.efc_R[i:i + n], d.efc_mu[i + 1], n, z[i:i + n],
                                Pr[i:i + n])
        elif t == EQUALITY:
            f[i] = z[i]
            P[i, 0] = 1.0
        elif t == FRICTION_DOF or t == FRICTION_TENDON:
            eta = d.efc_frictionloss[i]
            f[i] = min(max(z[i], -eta), eta)
            P[i, 0] = 1.0 if -eta < z[i] < eta else 0.0
        else:
            f[i] = max(z[i], 0.0)
            P[i, 0] = 1.0 if z[i] > 0.0 else 0.0
        i += n


@inlined
def _core(m, d, g):
    """The core of a sphere (its centre) or capsule (its axis segment): centre, half-axis
    vector (zero for a sphere), radius."""
    pos = vec3(d.geom_xpos, g)
    half = m.geom_size[g, 1] if m.geom_type[g] == 3 else 0.0   # GeomType.CAPSULE
    axis = (d.geom_xmat[g, 2] * half, d.geom_xmat[g, 5] * half, d.geom_xmat[g, 8] * half)
    return pos, axis, m.geom_size[g, 0]


@jit
def _box_features(pl, size, tol):
    """Bit k set where the local point pl lies on a face of the box normal to axis k."""
    bits = 0
    for k in range(3):
        if abs(abs(pl[k]) - size[k]) <= tol:
            bits |= 1 << k
    return bits


@jit
def _axis(mat, k):
    """Axis k of a geom frame (column k of its row-major xmat) in world coordinates."""
    return (mat[k], mat[3 + k], mat[6 + k])


@jit
def box_box_geometry(m, d, c, Gp, Gn, Gd):
    """contact_geometry of a box-box contact from a face-face clipping (collision_primitive.
    _box_box_face), Nimble's section V. The normal is the outward normal n_R of a face of the
    reference box R (box 1 where both boxes have a face along it: the detector's tie-break), the
    contact at pos = x + n_R dist / 2 between a point y of the incident box I and its projection
    x = y - n_R dist on R's face. With w = v + omega x (y - p) the velocity of I's material point
    at y under a twist of I relative to R:
        vertex-face (y a corner of I):                          dy = w
        edge-edge (y on an edge u of I over a side of R's face with in-plane normal s; the
                   point slides along u to stay over the side): dy = w - u (s . w) / (s . u)
            then d dist = n_R . dy, d pos = dy - n_R d dist / 2, d n_R = 0;
        face-vertex (x a corner of R's face, y on I's face of normal f):
            d dist = f . w / (f . n_R), d pos = n_R d dist / 2.
    With R = box 2 the relative twist of I is the reversed one, and the common rigid motion of
    both adds v to d pos and omega x n to d n. False for a separating axis along an edge cross
    product (the detector's edge-edge branch, whose normal turns with both boxes) or a point
    these features do not explain: the caller then falls back to differences."""
    g1 = d.contact_geom1[c]
    g2 = d.contact_geom2[c]
    n = (d.contact_frame[c, 0], d.contact_frame[c, 1], d.contact_frame[c, 2])
    p = vec3(d.contact_pos, c)
    dist = d.contact_dist[c]
    mat1 = mat9(d.geom_xmat, g1)
    mat2 = mat9(d.geom_xmat, g2)
    ref = 0
    for k in range(3):
        if ref == 0 and abs(dot3(_axis(mat1, k), n)) > 1.0 - 1e-9:
            ref = 1
    for k in range(3):
        if ref == 0 and abs(dot3(_axis(mat2, k), n)) > 1.0 - 1e-9:
            ref = 2
    if ref == 0:
        return box_edge_geometry(m, d, c, Gp, Gn, Gd)
    gR, gI, sgn = (g1, g2, 1.0) if ref == 1 else (g2, g1, -1.0)
    nR = scl3(n, sgn)
    matR = mat9(d.geom_xmat, gR)
    matI = mat9(d.geom_xmat, gI)
    sizeR = vec3(m.geom_size, gR)
    sizeI = vec3(m.geom_size, gI)
    tol = 1e-9 * (max(sizeR[0], sizeR[1], sizeR[2]) + max(sizeI[0], sizeI[1], sizeI[2]))
    y = add3(p, scl3(nR, 0.5 * dist))
    x = sub3(p, scl3(nR, 0.5 * dist))
    bitsI = _box_features(_mulmatT(matI, sub3(y, vec3(d.geom_xpos, gI))), sizeI, tol)
    bitsR = _box_features(_mulmatT(matR, sub3(x, vec3(d.geom_xpos, gR))), sizeR, tol)
    nI = (bitsI & 1) + ((bitsI >> 1) & 1) + ((bitsI >> 2) & 1)
    nR_ = (bitsR & 1) + ((bitsR >> 1) & 1) + ((bitsR >> 2) & 1)     # R's face axis counts too
    kind = 0
    u = (0.0, 0.0, 0.0)
    side = (0.0, 0.0, 0.0)
    if nI == 3 and nR_ == 1:
        kind = 1                                   # vertex-face
    elif nI == 2 and nR_ == 2:
        kind = 2                                   # edge-edge over a side of R's face
        for k in range(3):
            if not bitsI & (1 << k):
                u = _axis(matI, k)                 # the edge's direction
        for k in range(3):
            if bitsR & (1 << k) and abs(dot3(_axis(matR, k), nR)) < 0.5:
                side = _axis(matR, k)
        if abs(dot3(side, u)) < 1e-9:
            return False
    elif nI == 1 and nR_ == 3:
        kind = 3                                   # face-vertex
        for k in range(3):
            if bitsI & (1 << k):
                u = _axis(matI, k)                 # the incident face's normal (either sign)
        if abs(dot3(u, nR)) < 1e-9:
            return False
    else:
        return False
    for col in range(6):
        om = (1.0 if col == 0 else 0.0, 1.0 if col == 1 else 0.0, 1.0 if col == 2 else 0.0)
        vp = (1.0 if col == 3 else 0.0, 1.0 if col == 4 else 0.0, 1.0 if col == 5 else 0.0)
        omI = scl3(om, sgn)                        # I's twist relative to R
        vI = scl3(vp, sgn)
        w = add3(vI, cross3(omI, sub3(y, p)))
        if kind == 3:
            ddist = dot3(u, w) / dot3(u, nR)
            dp = scl3(nR, 0.5 * ddist)
        else:
            dy = w
            if kind == 2:
                dy = sub3(w, scl3(u, dot3(side, w) / dot3(side, u)))
            ddist = dot3(nR, dy)
            dp = sub3(dy, scl3(nR, 0.5 * ddist))
        dn = (0.0, 0.0, 0.0)
        if ref == 2:
            dp = add3(dp, vp)
            dn = cross3(om, n)
        Gd[col] = ddist                            # the distance ignores the common motion
        for k in range(3):
            Gp[k, col] = dp[k]
            Gn[k, col] = dn[k]
    return True


# ------------------------------------------------------------------------------------------------
# contact features (Nimble section V): a contact between a point x of geom 1 and a point y of
# geom 2, y - x = n L, classified by the feature each point lies on
# ------------------------------------------------------------------------------------------------
VERTEX = 0          # feature kinds of a contact point
EDGE = 1
FACE = 2
NO_FEATURE = -1
N_CORE = 0          # where the normal comes from: the nearest points themselves, n = (y - x) / L
N_GEOM1 = 1         # a face of geom 1 (turns with geom 1)
N_GEOM2 = 2         # a face of geom 2 (turns with geom 2)
N_CROSS = 3         # an edge-cross axis: a x b / |a x b|, a of geom 1, b of geom 2
NPOLY = 16          # the most vertices of a support polygon classified here


@inlined
def _normal_change(nmode, n, om, a, b):
    """d n under a rotation om of geom 2 (geom 1 fixed), N_CORE excepted:
        N_GEOM1: 0;   N_GEOM2: om x n;
        N_CROSS: n = s c / |c|, c = a x b, s = sign(n . c):
                 d n = s (I - n n') (a x (om x b)) / |c|."""
    if nmode == N_GEOM2:
        return cross3(om, n)
    if nmode == N_CROSS:
        c = cross3(a, b)
        lc = norm3(c)
        s = 1.0 if dot3(n, c) > 0.0 else -1.0
        dc = cross3(a, cross3(om, b))
        return scl3(sub3(dc, scl3(n, dot3(n, dc))), s / lc)
    return (0.0, 0.0, 0.0)


@inlined
def _face_vertex(nf, n, L, w, dn):
    """x on a face of geom 1 (normal nf), y a vertex of geom 2 moving at w:
        dy = w,  nf . dx = 0 with dx = dy - n dL - L dn  =>  dL = nf . (w - L dn) / (nf . n)."""
    dL = dot3(nf, sub3(w, scl3(dn, L))) / dot3(nf, n)
    return sub3(sub3(w, scl3(n, dL)), scl3(dn, L)), w, dL


@inlined
def _vertex_face(f, n, L, w, dn):
    """x a vertex of geom 1 (fixed), y on a face of geom 2 (normal f) whose point at y moves at w:
        dx = 0,  dy = n dL + L dn,  f . (dy - w) = 0  =>  dL = f . (w - L dn) / (f . n)."""
    dL = dot3(f, sub3(w, scl3(dn, L))) / dot3(f, n)
    return (0.0, 0.0, 0.0), add3(scl3(n, dL), scl3(dn, L)), dL


@inlined
def _edge_edge(e1, e2, n, L, w, dn):
    """x on an edge e1 of geom 1, y on an edge e2 of geom 2, both sliding along their edges:
        dx = ds e1, dy = w + dt e2,  dy - dx = n dL + L dn
        =>  [e1, n, -e2] (ds, dL, dt) = w - L dn   (Cramer's rule; e1, e2, n independent)."""
    r = sub3(w, scl3(dn, L))
    c3 = scl3(e2, -1.0)
    det = dot3(e1, cross3(n, c3))
    ds = dot3(r, cross3(n, c3)) / det
    dL = dot3(e1, cross3(r, c3)) / det
    dt = dot3(e1, cross3(n, r)) / det
    return scl3(e1, ds), add3(w, scl3(e2, dt)), dL


@inlined
def _core_points(kind1, e1, kind2, e2, n, L, w, om):
    """The nearest points of a vertex or edge of geom 1 and a vertex or edge of geom 2 apart
    (L > 0; not two edges: those are _edge_edge with N_CROSS), n = (y - x) / L:
        dx = ds e1 (edge) or 0,  dy = w + dt e2 (edge) or w,  delta = y - x
        edge of 1: d(delta . e1) = 0       =>  ds = w . e1 / (e1 . e1)
        edge of 2: d(delta . e2) = 0, d e2 = om x e2
                   =>  dt = -(w . e2 + delta . (om x e2)) / (e2 . e2)
        dL = n . d delta,  dn = (d delta - n dL) / L."""
    dx = (0.0, 0.0, 0.0)
    dy = w
    if kind1 == EDGE:
        dx = scl3(e1, dot3(w, e1) / dot3(e1, e1))
    if kind2 == EDGE:
        dt = -(dot3(w, e2) + L * dot3(n, cross3(om, e2))) / dot3(e2, e2)
        dy = add3(w, scl3(e2, dt))
    ddelta = sub3(dy, dx)
    dL = dot3(n, ddelta)
    return dx, dy, dL, scl3(sub3(ddelta, scl3(n, dL)), 1.0 / L)


@jit
def feature_geometry(x, y, n, L, r1, r2, p, kind1, u1, kind2, u2, nmode, a, b, Gp, Gn, Gd):
    """Gp, Gn of contact_geometry from the contact's features: x on geom 1 (kind1: a vertex, an
    edge of direction u1 or a face of normal u1), y on geom 2 (kind2, u2), y - x = n L (for a
    sphere or capsule the point of its core: L = dist + r1 + r2), the normal from nmode (with
    the directions a, b for N_CROSS). Per unit twist of geom 2 (rotation om, velocity v of its
    point at p), with w = v + om x (y - p) the velocity of geom 2's material point at y:
        face-vertex _face_vertex, vertex-face _vertex_face, edge-edge _edge_edge, and with
        N_CORE vertex-vertex, vertex-edge, edge-vertex _core_points;
        d pos = (dx + dy) / 2 + dn (r1 - r2) / 2 (pos: the midpoint of the surface points
        x + n r1, y - n r2),  d dist = dL.
    False for other combinations (a face against an edge or a face: the contact point is not
    fixed by the features)."""
    if nmode == N_CORE:
        if kind1 == FACE or kind2 == FACE or (kind1 == EDGE and kind2 == EDGE) or L <= 0.0:
            return False
    elif kind1 == FACE and kind2 == VERTEX:
        if abs(dot3(u1, n)) < 1e-6:
            return False
    elif kind1 == VERTEX and kind2 == FACE:
        if abs(dot3(u2, n)) < 1e-6:
            return False
    elif kind1 == EDGE and kind2 == EDGE:
        if abs(dot3(u1, cross3(n, u2))) < 1e-6 * norm3(u1) * norm3(u2):
            return False
    else:
        return False
    for col in range(6):
        om = (1.0 if col == 0 else 0.0, 1.0 if col == 1 else 0.0, 1.0 if col == 2 else 0.0)
        vp = (1.0 if col == 3 else 0.0, 1.0 if col == 4 else 0.0, 1.0 if col == 5 else 0.0)
        w = add3(vp, cross3(om, sub3(y, p)))
        if nmode == N_CORE:
            dx, dy, dL, dn = _core_points(kind1, u1, kind2, u2, n, L, w, om)
        else:
            dn = _normal_change(nmode, n, om, a, b)
            if kind1 == FACE:
                dx, dy, dL = _face_vertex(u1, n, L, w, dn)
            elif kind2 == FACE:
                dx, dy, dL = _vertex_face(u2, n, L, w, dn)
            else:
                dx, dy, dL = _edge_edge(u1, u2, n, L, w, dn)
        dp = add3(scl3(add3(dx, dy), 0.5), scl3(dn, 0.5 * (r1 - r2)))
        Gd[col] = dL
        for k in range(3):
            Gp[k, col] = dp[k]
            Gn[k, col] = dn[k]
    return True


@inlined
def _box_point(m, d, g, pt, tol):
    """The feature of box g at the world point pt (_box_features): a corner (3 faces), an edge
    (2: its direction), a face (1: its normal), else NO_FEATURE (not on the surface)."""
    mat = mat9(d.geom_xmat, g)
    size = vec3(m.geom_size, g)
    pl = _mulmatT(mat, sub3(pt, vec3(d.geom_xpos, g)))
    for k in range(3):
        if abs(pl[k]) > size[k] + tol:
            return NO_FEATURE, (0.0, 0.0, 0.0)
    bits = _box_features(pl, size, tol)
    cnt = (bits & 1) + ((bits >> 1) & 1) + ((bits >> 2) & 1)
    if cnt == 3:
        return VERTEX, (0.0, 0.0, 0.0)
    for k in range(3):
        if cnt == 2 and not bits & (1 << k):
            return EDGE, _axis(mat, k)
        if cnt == 1 and bits & (1 << k):
            return FACE, _axis(mat, k)
    return NO_FEATURE, (0.0, 0.0, 0.0)


@jit
def box_edge_geometry(m, d, c, Gp, Gn, Gd):
    """contact_geometry of a box-box contact on an edge-cross separating axis (collision_
    primitive._box_box_edge): the normal n = +-(a x b) / |a x b| of an axis a of box 1 and an axis
    b of box 2 turns with both boxes (N_CROSS). The detector projects along n: the incident
    box's edges onto the sides of the reference face (x on an edge of box 1, y on an edge of
    box 2: edge-edge), the reference face's corners onto the incident face (vertex-face) and the
    incident corners onto the reference face (face-vertex), the contact at the midpoint; each
    differentiated by feature_geometry with the turning normal. False for a point these
    features do not explain (the detector's clamped points) or a degenerate axis."""
    g1 = d.contact_geom1[c]
    g2 = d.contact_geom2[c]
    n = (d.contact_frame[c, 0], d.contact_frame[c, 1], d.contact_frame[c, 2])
    p = vec3(d.contact_pos, c)
    dist = d.contact_dist[c]
    mat1 = mat9(d.geom_xmat, g1)
    mat2 = mat9(d.geom_xmat, g2)
    size1 = vec3(m.geom_size, g1)
    size2 = vec3(m.geom_size, g2)
    tol = 1e-9 * (max(size1[0], size1[1], size1[2]) + max(size2[0], size2[1], size2[2]))
    a = (0.0, 0.0, 0.0)
    b = (0.0, 0.0, 0.0)
    found = False
    for i in range(3):
        for j in range(3):
            ai = _axis(mat1, i)
            bj = _axis(mat2, j)
            if (not found and abs(dot3(ai, n)) < 1e-9 and abs(dot3(bj, n)) < 1e-9
                    and norm3(cross3(ai, bj)) > 1e-6):
                a = ai
                b = bj
                found = True
    if not found:
        return False
    x = sub3(p, scl3(n, 0.5 * dist))
    y = add3(p, scl3(n, 0.5 * dist))
    kind1, u1 = _box_point(m, d, g1, x, tol)
    kind2, u2 = _box_point(m, d, g2, y, tol)
    if kind1 == NO_FEATURE or kind2 == NO_FEATURE:
        return False
    return feature_geometry(x, y, n, dist, 0.0, 0.0, p, kind1, u1, kind2, u2, N_CROSS, a, b,
                            Gp, Gn, Gd)


@jit
def _support_polygon(m, d, g, u, tol, Q):
    """The vertices of box or mesh g (its convex hull) within tol of its support plane along
    the world direction u, into the rows of Q (world coordinates); their number, NPOLY + 1 when
    there are more than NPOLY - 1 (the detector's face polygons keep at most 15,
    collision_convex._face_polygon). A sphere or capsule gives its core's extreme: the
    centre, or the end of its axis segment (both ends when the axis is normal to u)."""
    t = m.geom_type[g]
    r = mat9(d.geom_xmat, g)
    pg = vec3(d.geom_xpos, g)
    if t == SPHERE_T or t == CAPSULE_T:
        half = m.geom_size[g, 1] if t == CAPSULE_T else 0.0
        ax = scl3(_axis(r, 2), half)
        h = dot3(u, ax)
        k = 0
        for s in (1.0, -1.0):
            if s * h >= abs(h) - tol:
                e = add3(pg, scl3(ax, s))
                Q[k, 0] = e[0]
                Q[k, 1] = e[1]
                Q[k, 2] = e[2]
                k += 1
            if half == 0.0:
                break
        return k
    ul = _mulmatT(r, u)
    nvert = _nvertex(m, g)
    hmax = -1e300
    for i in range(nvert):
        hmax = max(hmax, dot3(ul, _vertex(m, g, i)))
    k = 0
    for i in range(nvert):
        xl = _vertex(m, g, i)
        if dot3(ul, xl) >= hmax - tol:
            if k == NPOLY - 1:
                return NPOLY + 1
            xw = add3(_mulmat(r, xl), pg)
            Q[k, 0] = xw[0]
            Q[k, 1] = xw[1]
            Q[k, 2] = xw[2]
            k += 1
    return k


@jit
def _polygon_normal(Q, k, tol):
    """The unit normal of the polygon in rows 0..k-1 of Q (k >= 3: the largest cross product of
    two edges from its first vertex), and whether it is flat (every vertex within tol of the
    plane) and not a segment."""
    q0 = (Q[0, 0], Q[0, 1], Q[0, 2])
    best = 0.0
    nq = (0.0, 0.0, 0.0)
    for i in range(1, k):
        for j in range(i + 1, k):
            cq = cross3(sub3((Q[i, 0], Q[i, 1], Q[i, 2]), q0),
                        sub3((Q[j, 0], Q[j, 1], Q[j, 2]), q0))
            if norm3(cq) > best:
                best = norm3(cq)
                nq = cq
    if best <= tol * tol:
        return False, nq
    nq = scl3(nq, 1.0 / best)
    for i in range(k):
        if abs(dot3(nq, sub3((Q[i, 0], Q[i, 1], Q[i, 2]), q0))) > tol:
            return False, nq
    return True, nq


@jit
def _polygon_point(Q, k, pt, tol):
    """The feature of the convex polygon Q (k vertices: a point, a segment or a flat face) at
    the point pt: VERTEX (within tol of a vertex), EDGE and its unit direction (within tol of a
    boundary edge: one with all the other vertices on one side), FACE and its normal (in the
    plane and inside), else NO_FEATURE."""
    zero = (0.0, 0.0, 0.0)
    if k > NPOLY - 1:                      # more vertices than Q holds: not classified
        return NO_FEATURE, zero
    for i in range(k):
        if norm3(sub3(pt, (Q[i, 0], Q[i, 1], Q[i, 2]))) <= tol:
            return VERTEX, zero
    if k < 2:
        return NO_FEATURE, zero
    flat = False
    nq = zero
    if k >= 3:
        flat, nq = _polygon_normal(Q, k, tol)
        if not flat:
            return NO_FEATURE, zero
    inside = k >= 3 and abs(dot3(nq, sub3(pt, (Q[0, 0], Q[0, 1], Q[0, 2])))) <= tol
    for i in range(k):
        qi = (Q[i, 0], Q[i, 1], Q[i, 2])
        for j in range(i + 1, k):
            e = sub3((Q[j, 0], Q[j, 1], Q[j, 2]), qi)
            le = norm3(e)
            lo = 0.0
            hi = 0.0
            for l in range(k):
                if l != i and l != j:
                    s = dot3(cross3(e, sub3((Q[l, 0], Q[l, 1], Q[l, 2]), qi)), nq)
                    lo = min(lo, s)
                    hi = max(hi, s)
            if lo < -tol * le and hi > tol * le:
                continue                        # a diagonal: vertices on both sides
            t = dot3(sub3(pt, qi), e) / (le * le)
            if 0.0 < t < 1.0 and norm3(sub3(sub3(pt, qi), scl3(e, t))) <= tol:
                return EDGE, scl3(e, 1.0 / le)
            # the point must lie on the side of the others (an outward test of the boundary)
            spt = dot3(cross3(e, sub3(pt, qi)), nq)
            if (hi > tol * le and spt < -tol * le) or (lo < -tol * le and spt > tol * le):
                inside = False
    if inside:
        return FACE, nq
    return NO_FEATURE, zero


@jit
def convex_geometry(m, d, c, Gp, Gn, Gd, poly):
    """contact_geometry of the general convex detector (collision_convex.convex_convex: GJK or
    EPA, and the face clipping of polytope_contacts) between a sphere, capsule, box or mesh
    (geom 1) and a box or mesh (geom 2), as convex hulls of their vertices (a sphere's centre
    and a capsule's axis segment: their cores, with the radius r1). The features come from the
    hulls at the contact, Nimble's section V:
      x = pos - n (dist / 2 + r1) on geom 1, y = pos + n dist / 2 on geom 2, L = dist + r1;
      the normal: from a face of geom 1 when geom 1's support set along n is a face (N_GEOM1),
        else from a face of geom 2 (support along -n, N_GEOM2), else the cross product of two
        support edges (EPA's edge-edge, N_CROSS), else the nearest points (N_CORE);
      the point features: x's and y's place on those support sets (a vertex, an edge, a face),
        or, for a clipped point off them, on the face polygons the detector clipped (the
        vertices within FACE_TOL of each support plane; they must be flat).
    feature_geometry differentiates the result. False for an ellipsoid or cylinder, a
    polygon that is not flat, or a point on no feature (the detector's points clamped to the
    EPA depth on nearly flat faces), and for MPR's contacts (nativeccd disabled: their normal
    is not the least overlap's, nor their point on a feature): the caller falls back to
    differences."""
    if m.opt_disableflags[0] & DisableBit.NATIVECCD:
        return False
    g1 = d.contact_geom1[c]
    g2 = d.contact_geom2[c]
    t1 = m.geom_type[g1]
    t2 = m.geom_type[g2]
    if not (t2 == BOX_T or t2 == MESH_T):
        return False
    if not (t1 == SPHERE_T or t1 == CAPSULE_T or t1 == BOX_T or t1 == MESH_T):
        return False
    n = (d.contact_frame[c, 0], d.contact_frame[c, 1], d.contact_frame[c, 2])
    mn = scl3(n, -1.0)
    p = vec3(d.contact_pos, c)
    dist = d.contact_dist[c]
    core = t1 == SPHERE_T or t1 == CAPSULE_T
    r1 = m.geom_size[g1, 0] if core else 0.0
    tol = 1e-9 * (m.geom_rbound[g1] + m.geom_rbound[g2])
    x = sub3(p, scl3(n, 0.5 * dist + r1))
    y = add3(p, scl3(n, 0.5 * dist))
    L = dist + r1
    Q1 = poly[0]
    Q2 = poly[1]
    # the normal's origin: the exact support sets
    k1 = _support_polygon(m, d, g1, n, tol, Q1)
    k2 = _support_polygon(m, d, g2, mn, tol, Q2)
    if k1 > NPOLY - 1 or k2 > NPOLY - 1:
        return False
    nmode = N_CORE
    a = (0.0, 0.0, 0.0)
    b = (0.0, 0.0, 0.0)
    if k1 >= 3:
        flat, nq = _polygon_normal(Q1, k1, tol)
        if flat and abs(dot3(nq, n)) > 1.0 - 1e-9:
            nmode = N_GEOM1
    if nmode == N_CORE and k2 >= 3:
        flat, nq = _polygon_normal(Q2, k2, tol)
        if flat and abs(dot3(nq, n)) > 1.0 - 1e-9:
            nmode = N_GEOM2
    if nmode == N_CORE and k1 == 2 and k2 == 2:
        a = sub3((Q1[1, 0], Q1[1, 1], Q1[1, 2]), (Q1[0, 0], Q1[0, 1], Q1[0, 2]))
        b = sub3((Q2[1, 0], Q2[1, 1], Q2[1, 2]), (Q2[0, 0], Q2[0, 1], Q2[0, 2]))
        if norm3(cross3(a, b)) > 1e-6 * norm3(a) * norm3(b):
            nmode = N_CROSS
    # the points' features: on the support sets, else on the clipped face polygons
    kind1, u1 = _polygon_point(Q1, k1, x, tol)
    kind2, u2 = _polygon_point(Q2, k2, y, tol)
    if kind1 == NO_FEATURE and not core:
        k1 = _support_polygon(m, d, g1, n, FACE_TOL * m.geom_rbound[g1], Q1)
        kind1, u1 = _polygon_point(Q1, k1, x, tol)     # NO_FEATURE beyond NPOLY - 1 vertices
    if kind2 == NO_FEATURE:
        k2 = _support_polygon(m, d, g2, mn, FACE_TOL * m.geom_rbound[g2], Q2)
        kind2, u2 = _polygon_point(Q2, k2, y, tol)
    if kind1 == NO_FEATURE or kind2 == NO_FEATURE:
        return False
    return feature_geometry(x, y, n, L, r1, 0.0, p, kind1, u1, kind2, u2, nmode, a, b, Gp, Gn,
                            Gd)


@inlined
def _ellipsoid_support_change(mat, size, n, om):
    """The change of the ellipsoid's support point x = S^2 l / |S l| along l = -R' n (n fixed,
    S = diag(size), local frame) under a rotation om of the ellipsoid, in world coordinates:
        d l = R' (om x n),   d x = S^2 d l / |S l| - S^2 l (S l . S d l) / |S l|^3,   R d x."""
    ld = _mulmatT(mat, scl3(n, -1.0))
    dl = _mulmatT(mat, cross3(om, n))
    sl = (size[0] * ld[0], size[1] * ld[1], size[2] * ld[2])
    sdl = (size[0] * dl[0], size[1] * dl[1], size[2] * dl[2])
    nl = norm3(sl)
    c = dot3(sl, sdl) / (nl * nl * nl)
    dx = (size[0] * (sdl[0] / nl - sl[0] * c), size[1] * (sdl[1] / nl - sl[1] * c),
          size[2] * (sdl[2] / nl - sl[2] * c))
    return _mulmat(mat, dx)


@jit
def plane_cylinder_geometry(m, d, c, Gp, Gn, Gd):
    """contact_geometry of a plane-cylinder contact (collision_primitive.plane_cylinder). With a
    the axis turned towards the plane (a . n <= 0), u = (a (a . n) - n) / |a (a . n) - n| the
    radial direction towards the plane and g = u x a, the detector's points are
        c_k = x2 + s_k h a + alpha_k r u + beta_k r sqrt(3) / 2 g,
        (s, alpha, beta) = (1, 1, 0) the deepest rim point, (-1, 1, 0) the far disk's,
        (1, -1/2, +-1) two more on the near rim,
    rim points that slide over the rim as the cylinder turns (om, v at the contact p):
        d a = om x a,   d u = (I - u u') (d a (a . n) + a (d a . n)) / |a (a . n) - n|,
        d g = d u x a + u x d a,
        d c_k = v + om x (x2 - p) + s_k h d a + alpha_k r d u + beta_k r sqrt(3) / 2 d g,
    then as the other plane contacts: d pos = d c - n (n . d c) / 2, d dist = n . d c, d n = 0
    (d dist = n . v for the deepest point only: the others are not extreme along n). False
    for a disk parallel to the plane to 1e-6 (the detector then takes the geom's x axis for u,
    and near it u turns by the tilt over |a (a . n) - n|)."""
    g2 = d.contact_geom2[c]
    n = (d.contact_frame[c, 0], d.contact_frame[c, 1], d.contact_frame[c, 2])
    p = vec3(d.contact_pos, c)
    dist = d.contact_dist[c]
    x2 = vec3(d.geom_xpos, g2)
    r = m.geom_size[g2, 0]
    h = m.geom_size[g2, 1]
    a = _axis(mat9(d.geom_xmat, g2), 2)
    if dot3(n, a) > 0.0:
        a = scl3(a, -1.0)
    an = dot3(a, n)
    uu = cross3(a, cross3(a, n))          # a (a . n) - n, as the detector forms it
    lu = norm3(uu)
    if lu < 1e-6:
        return False                      # nearly parallel: u turns by d tilt / lu
    u = scl3(uu, 1.0 / lu)
    g = cross3(u, a)
    rb = r * math.sqrt(3.0) / 2
    cpt = add3(p, scl3(n, 0.5 * dist))
    found = -1
    for k in range(4):
        sk = -1.0 if k == 1 else 1.0
        ak = -0.5 if k >= 2 else 1.0
        bk = 1.0 if k == 2 else (-1.0 if k == 3 else 0.0)
        ck = add3(add3(add3(x2, scl3(a, sk * h)), scl3(u, ak * r)), scl3(g, bk * rb))
        if found < 0 and norm3(sub3(ck, cpt)) <= 1e-9 * (r + h):
            found = k
    if found < 0:
        return False
    sk = -1.0 if found == 1 else 1.0
    ak = -0.5 if found >= 2 else 1.0
    bk = 1.0 if found == 2 else (-1.0 if found == 3 else 0.0)
    for col in range(6):
        om = (1.0 if col == 0 else 0.0, 1.0 if col == 1 else 0.0, 1.0 if col == 2 else 0.0)
        vp = (1.0 if col == 3 else 0.0, 1.0 if col == 4 else 0.0, 1.0 if col == 5 else 0.0)
        da = cross3(om, a)
        duu = add3(scl3(da, an), scl3(a, dot3(da, n)))
        du = scl3(sub3(duu, scl3(u, dot3(u, duu))), 1.0 / lu)
        dg = add3(cross3(du, a), cross3(u, da))
        dc = add3(add3(add3(add3(vp, cross3(om, sub3(x2, p))), scl3(da, sk * h)), scl3(du, ak * r)),
                  scl3(dg, bk * rb))
        Gd[col] = dot3(n, dc)
        dp = sub3(dc, scl3(n, 0.5 * Gd[col]))
        for k in range(3):
            Gp[k, col] = dp[k]
            Gn[k, col] = 0.0
    return True


@jit
def capsule_box_geometry(m, d, c, Gp, Gn, Gd):
    """contact_geometry of a capsule-box contact (collision_primitive.capsule_box: sphere-box at
    the point of the capsule's segment nearest to the box, and at a second point along it when
    the capsule lies along a face or an edge). x = pos - n (dist / 2 + r) on the segment, y =
    pos + n dist / 2 on the box (its feature from _box_point), L = dist + r:
        x an end (VERTEX) and y in a face: vertex-face with the box face's normal (N_GEOM2);
        x an end and y on an edge or a corner: their nearest points (N_CORE);
        x inside the segment and y on an edge, n normal to both: edge-edge (N_CROSS);
        x inside the segment and y a corner, n normal to the segment: nearest points (N_CORE).
    False otherwise: the detector's second point where the segment crosses over a side of a
    face is no nearest point (n is the face's normal, not normal to the segment), and a segment
    along a face leaves the contact point free."""
    g1 = d.contact_geom1[c]
    g2 = d.contact_geom2[c]
    n = (d.contact_frame[c, 0], d.contact_frame[c, 1], d.contact_frame[c, 2])
    p = vec3(d.contact_pos, c)
    dist = d.contact_dist[c]
    pos1, half, r1 = _core(m, d, g1)
    size2 = vec3(m.geom_size, g2)
    tol = 1e-9 * (m.geom_rbound[g1] + max(size2[0], size2[1], size2[2]))
    x = sub3(p, scl3(n, 0.5 * dist + r1))
    y = add3(p, scl3(n, 0.5 * dist))
    L = dist + r1
    lh = norm3(half)
    axis = scl3(half, 1.0 / lh)
    t = dot3(sub3(x, pos1), axis)
    if norm3(sub3(sub3(x, pos1), scl3(axis, t))) > tol or abs(t) > lh + tol:
        return False                                    # x is not on the segment
    kind1 = VERTEX if abs(t) >= lh - tol else EDGE
    kind2, u2 = _box_point(m, d, g2, y, tol)
    if kind2 == NO_FEATURE:
        return False
    nmode = N_CORE
    if kind2 == FACE:
        if kind1 != VERTEX or abs(dot3(u2, n)) < 1.0 - 1e-9:
            return False
        nmode = N_GEOM2
    elif kind1 == EDGE:
        if abs(dot3(n, axis)) > 1e-9:
            return False
        if kind2 == EDGE:
            if abs(dot3(n, u2)) > 1e-9:
                return False
            nmode = N_CROSS
    return feature_geometry(x, y, n, L, r1, 0.0, p, kind1, axis, kind2, u2, nmode, axis, u2,
                            Gp, Gn, Gd)


@jit
def contact_geometry(m, d, c, Gp, Gn, Gd, poly):
    """Gp, Gn (3 x 6), Gd (6): the change of contact c's position, normal and distance per unit
    twist
    (rotation omega, velocity v of the material point at the contact position) of geom 2
    relative to geom 1 (Nimble section V for these primitives). False for a geom pair without
    it. The contacts move with a common rigid motion of both geoms, so this relative part is
    all the geometry adds.

    plane-sphere, plane-capsule (its end spheres), plane-box (its corners): the deepest point
    c = pos + n (r + dist / 2) is fixed to geom 2 and the normal to the plane: d pos = dc -
    n (n . dc) / 2. Spheres and capsules against each other: the nearest points of their cores
    c1 = p0_1 + a_1 x_1, c2 = p0_2 + a_2 x_2 (segments a x, x in [-1, 1]; x fixed at an end or
    for a sphere, else by a_k . (c2 - c1) = 0, differentiated), n = (c2 - c1) / |c2 - c1|,
    pos = c1 + n (r1 + dist / 2). Sphere-box: the nearest point of the box to the sphere's
    centre in the box frame (clamped coordinates move with the centre, the others stay), or
    the nearest face when the centre is inside. Plane-mesh: hull vertices (as the box corners);
    plane-ellipsoid: the support point c, which also slides over the ellipsoid as it turns
    (_ellipsoid_support_change). Box-box: box_box_geometry (face clipping) and
    box_edge_geometry (edge-cross axis); the general convex detector (meshes, and spheres,
    capsules and boxes against them): convex_geometry; plane-cylinder: plane_cylinder_geometry;
    capsule-box: capsule_box_geometry. poly (2 x NPOLY x 3): scratch for the support polygons."""
    g1 = d.contact_geom1[c]
    g2 = d.contact_geom2[c]
    code = COLLISION_FUNC[m.geom_type[g1], m.geom_type[g2]]
    if code == C_BOX_BOX:
        return box_box_geometry(m, d, c, Gp, Gn, Gd)
    if code == C_CONVEX:
        return convex_geometry(m, d, c, Gp, Gn, Gd, poly)
    if code == C_PLANE_CYLINDER:
        return plane_cylinder_geometry(m, d, c, Gp, Gn, Gd)
    if code == C_CAPSULE_BOX:
        return capsule_box_geometry(m, d, c, Gp, Gn, Gd)
    n = (d.contact_frame[c, 0], d.contact_frame[c, 1], d.contact_frame[c, 2])
    p = vec3(d.contact_pos, c)
    dist = d.contact_dist[c]
    # plane-mesh: the detector's points are hull vertices (vertex-face, as the box corners);
    # plane-ellipsoid: the support point, which slides over the ellipsoid as it turns
    ellipsoid = code == C_PLANE_CONVEX and m.geom_type[g2] == ELLIPSOID_T
    plane = (code == C_PLANE_SPHERE or code == C_PLANE_CAPSULE or code == C_PLANE_BOX
             or code == C_PLANE_CONVEX)
    ddist = 0.0
    if ellipsoid:
        emat = mat9(d.geom_xmat, g2)
        esize = vec3(m.geom_size, g2)
    core = code == C_SPHERE_SPHERE or code == C_SPHERE_CAPSULE or code == C_CAPSULE_CAPSULE
    if not (plane or core or code == C_SPHERE_BOX):
        return False
    if core:
        pos1, a1, r1 = _core(m, d, g1)
        pos2, a2, r2 = _core(m, d, g2)
        c1 = sub3(p, scl3(n, r1 + 0.5 * dist))
        c2 = add3(p, scl3(n, r2 + 0.5 * dist))
        delta = sub3(c2, c1)
        length = norm3(delta)
        if length < 1e-12:
            return False
        aa1 = dot3(a1, a1)
        aa2 = dot3(a2, a2)
        a12 = dot3(a1, a2)
        x1 = dot3(a1, sub3(c1, pos1)) / aa1 if aa1 > 0.0 else 0.0
        x2 = dot3(a2, sub3(c2, pos2)) / aa2 if aa2 > 0.0 else 0.0
        free1 = aa1 > 0.0 and abs(x1) < 1.0 - 1e-9
        free2 = aa2 > 0.0 and abs(x2) < 1.0 - 1e-9
    if code == C_SPHERE_BOX:
        ctr = vec3(d.geom_xpos, g1)
        rad = m.geom_size[g1, 0]
        bpos = vec3(d.geom_xpos, g2)
        bmat = mat9(d.geom_xmat, g2)
        size = vec3(m.geom_size, g2)
        local = _mulmatT(bmat, sub3(ctr, bpos))
        clamped = (min(max(local[0], -size[0]), size[0]), min(max(local[1], -size[1]), size[1]),
                   min(max(local[2], -size[2]), size[2]))
        off = sub3(clamped, local)
        offlen = norm3(off)
        inside = offlen <= MINVAL
        if inside:
            # the face nearest to the centre, as collision_primitive.sphere_box chooses it
            closest = (size[0] + size[1] + size[2]) * 2
            face_k = 0
            for k in range(6):
                face = size[k // 2] if k % 2 else -size[k // 2]
                if closest > abs(face - local[k // 2]):
                    closest = abs(face - local[k // 2])
                    face_k = k
            axis_k = face_k // 2
            face = size[axis_k] if face_k % 2 else -size[axis_k]
            fsign = 1.0 if face - local[axis_k] > 0 else -1.0
            s = -1.0 if face_k % 2 else 1.0
            nearest = (s if axis_k == 0 else 0.0, s if axis_k == 1 else 0.0,
                       s if axis_k == 2 else 0.0)
        else:
            tmp = scl3(off, 1.0 / offlen)
    hr = 0.0
    if code == C_PLANE_SPHERE or code == C_PLANE_CAPSULE:
        hr = m.geom_size[g2, 0]
    for col in range(6):
        om = (1.0 if col == 0 else 0.0, 1.0 if col == 1 else 0.0, 1.0 if col == 2 else 0.0)
        vp = (1.0 if col == 3 else 0.0, 1.0 if col == 4 else 0.0, 1.0 if col == 5 else 0.0)
        if plane:
            e = scl3(n, hr + 0.5 * dist)
            dc = add3(vp, cross3(om, e))
            if ellipsoid:
                dc = add3(dc, _ellipsoid_support_change(emat, esize, n, om))
            dp = sub3(dc, scl3(n, 0.5 * dot3(n, dc)))
            dn = (0.0, 0.0, 0.0)
        elif core:
            dpos2 = add3(vp, cross3(om, sub3(pos2, p)))
            da2 = cross3(om, a2)
            base2 = add3(dpos2, scl3(da2, x2))
            dx1 = 0.0
            dx2 = 0.0
            r1_ = -dot3(a1, base2)
            r2_ = -dot3(da2, delta) - dot3(a2, base2)
            if free1 and free2:
                det = -aa1 * aa2 + a12 * a12
                dx1 = (r1_ * aa2 - a12 * r2_) / det
                dx2 = (-aa1 * r2_ + a12 * r1_) / det
            elif free1:
                dx1 = -r1_ / aa1
            elif free2:
                dx2 = r2_ / aa2
            dc1 = scl3(a1, dx1)
            ddelta = sub3(add3(base2, scl3(a2, dx2)), dc1)
            ddist = dot3(n, ddelta)
            dn = scl3(sub3(ddelta, scl3(n, ddist)), 1.0 / length)
            dp = add3(add3(dc1, scl3(dn, r1 + 0.5 * dist)), scl3(n, 0.5 * ddist))
        else:
            # sphere centre in the frame of the moving box
            dlocal = scl3(_mulmatT(bmat, add3(vp, cross3(om, sub3(ctr, p)))), -1.0)
            if inside:
                dclosest = -fsign * dlocal[axis_k]
                dpl = sub3(dlocal, scl3(nearest, 0.5 * dclosest))
                dn = cross3(om, n)
            else:
                dcl = (dlocal[0] if -size[0] < local[0] < size[0] else 0.0,
                       dlocal[1] if -size[1] < local[1] < size[1] else 0.0,
                       dlocal[2] if -size[2] < local[2] < size[2] else 0.0)
                doff = sub3(dcl, dlocal)
                dtmp = scl3(sub3(doff, scl3(tmp, dot3(tmp, doff))), 1.0 / offlen)
                dpl = scl3(add3(add3(dcl, dlocal), scl3(dtmp, rad)), 0.5)
                dn = add3(cross3(om, n), _mulmat(bmat, dtmp))
            dp = add3(vp, _mulmat(bmat, dpl))
        # d dist: the normal velocity of geom 2 at the contact (its point there moves along the
        # normal by n . v: the contact point lies on the normal through the features)
        Gd[col] = ddist if core else dot3(n, vp)
        for k in range(3):
            Gp[k, col] = dp[k]
            Gn[k, col] = dn[k]
    return True


@inlined
def _mulmat(r, v):
    return (r[0] * v[0] + r[1] * v[1] + r[2] * v[2], r[3] * v[0] + r[4] * v[1] + r[5] * v[2],
            r[6] * v[0] + r[7] * v[1] + r[8] * v[2])


@inlined
def _mulmatT(r, v):
    return (r[0] * v[0] + r[3] * v[1] + r[6] * v[2], r[1] * v[0] + r[4] * v[1] + r[7] * v[2],
            r[2] * v[0] + r[5] * v[1] + r[8] * v[2])


@inlined
def _frame_hint(m, d, c):
    """The tangent hint make_frame completed the frame of contact c from: the capsule's axis
    for plane-capsule (True: it turns with geom 2), else (0, 1, 0) or (0, 0, 1)."""
    g1 = d.contact_geom1[c]
    g2 = d.contact_geom2[c]
    if COLLISION_FUNC[m.geom_type[g1], m.geom_type[g2]] == C_PLANE_CAPSULE:
        return (d.geom_xmat[g2, 2], d.geom_xmat[g2, 5], d.geom_xmat[g2, 8]), True
    if -0.5 < d.contact_frame[c, 1] < 0.5:
        return (0.0, 1.0, 0.0), False
    return (0.0, 0.0, 1.0), False


@inlined
def _frame_deriv(n, dn, h, dh):
    """d t, d b of make_frame's t = normalize(h - n (n . h)), b = n x t."""
    s = dot3(n, h)
    u = sub3(h, scl3(n, s))
    lu = norm3(u)
    t = scl3(u, 1.0 / lu)
    du = sub3(sub3(dh, scl3(dn, s)), scl3(n, dot3(dn, h) + dot3(n, dh)))
    dt = scl3(sub3(du, scl3(t, dot3(t, du))), 1.0 / lu)
    db = add3(cross3(dn, t), cross3(n, dt))
    return dt, db


@inlined
def _mark_chain(m, b, mark, val):
    """mark[i] = val for the dofs that move body b."""
    i = last_dof(m, b)
    while i >= 0:
        mark[i] = val
        i = m.dof_parentid[i]


@inlined
def _body_twist(T, b, p, o):
    """(velocity of the point p, angular velocity) of body b under the twists T."""
    if b == 0:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    t = row6(T, b)
    return _point_vel(t, p, o), (t[0], t[1], t[2])


@inlined
def _twist_change(m, d, i, b1, b2, in1, in2, T, U):
    """d (T_b2 - T_b1) / d q_i under the twists T (U: dof_U of the same velocity): the part of
    each body's twist that dof i turns, S_i x (T_b - U_i), for the bodies it moves."""
    S = row6(d.cdof, i)
    g = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    u = row6(U, i)
    if in2[i]:
        g = cross_motion(S, _sub6(row6(T, b2), u))
    if in1[i]:
        g = _sub6(g, cross_motion(S, _sub6(row6(T, b1), u)))
    return g


@inlined
def _side_force(m, d, w, b, i, W, dW, scale, Fq):
    """Fq[j, i] += scale d (J_b' W)_j / d q_i for the dofs j moving body b, given dW = dW/dq_i:
    S_j . (dW - S_i x* W) where dof i turns S_j, S_j . dW elsewhere."""
    if b == 0:
        return
    Si = row6(d.cdof, i)
    turned = _sub6(dW, cross_force(Si, W))
    j = last_dof(m, b)
    while j >= 0:
        Sj = row6(d.cdof, j)
        Fq[j, i] += scale * dot6(Sj, turned if _moves(m, w.dof_end, i, j) else dW)
        j = m.dof_parentid[j]


@jit
def contact_derivs(m, d, w, c, f, scale, out):
    """The derivatives of contact c's rows with respect to qpos (status False: no geometric
    derivative for its pair): out.DJv[r, i] = d (J_r qvel) / d q_i, out.DJw[r, i] =
    d (J_r v') / d q_i, out.dR (normal row), out.Jpos[r] = d efc_pos_r / d q (d dist / d q);
    out.Fq[:, i] += scale d (J' f) / d q_i. Row r of the contact is
        J_r x = sum_k w_rk a_k . (V_2(p) - V_1(p)) + w_r,3+k a_k . (omega_2 - omega_1)
    (a_k the frame axes, V_b(p) the velocity of the point p of body b; elliptic rows one axis,
    pyramid edges the normal plus or minus mu times one), and the motion of dof i moves p and
    the axes (contact_geometry, plus the common motion of the two geoms) and turns the bodies'
    twists."""
    adr = d.contact_efc_address[c]
    nrow = contact_nrows(d, c)
    if nrow == 0:
        return True
    Gp = w.Gp
    Gn = w.Gn
    Gd = w.Gd
    if not contact_geometry(m, d, c, Gp, Gn, Gd, w.poly):
        return False
    b1 = m.geom_bodyid[d.contact_geom1[c]]
    b2 = m.geom_bodyid[d.contact_geom2[c]]
    p = vec3(d.contact_pos, c)
    o1 = _tree_origin(m, d, b1)
    o2 = _tree_origin(m, d, b2)
    ax0 = (d.contact_frame[c, 0], d.contact_frame[c, 1], d.contact_frame[c, 2])
    ax1 = (d.contact_frame[c, 3], d.contact_frame[c, 4], d.contact_frame[c, 5])
    ax2 = (d.contact_frame[c, 6], d.contact_frame[c, 7], d.contact_frame[c, 8])
    hint, hint_turns = _frame_hint(m, d, c)
    # row weights in the frame: translation along axis k (0..2), rotation about it (3..5)
    wr = w.wr
    pyramidal = d.efc_type[adr] == CONTACT_PYRAMIDAL
    for r in range(nrow):
        for k in range(6):
            wr[r, k] = 0.0
        if pyramidal:
            k = r // 2 + 1
            s = d.efc_mu[adr + r] * (1.0 if r % 2 == 0 else -1.0)
            wr[r, 0] = 1.0
            wr[r, k] += s          # dims 1, 2 slide along axes 1, 2; 3 turns about 0, 4, 5 about 1, 2
        else:
            wr[r, r] = 1.0
    # the force and torque of the rows' impulses
    F = (0.0, 0.0, 0.0)
    T = (0.0, 0.0, 0.0)
    for r in range(nrow):
        fr = f[adr + r]
        F = add3(F, scl3(add3(add3(scl3(ax0, wr[r, 0]), scl3(ax1, wr[r, 1])),
                              scl3(ax2, wr[r, 2])), fr))
        T = add3(T, scl3(add3(add3(scl3(ax0, wr[r, 3]), scl3(ax1, wr[r, 4])),
                              scl3(ax2, wr[r, 5])), fr))
    # relative velocities under qvel and v'
    V2v, W2v = _body_twist(d.cvel, b2, p, o2)
    V1v, W1v = _body_twist(d.cvel, b1, p, o1)
    dVv = sub3(V2v, V1v)
    dWv = sub3(W2v, W1v)
    V2w, W2w = _body_twist(w.body_W, b2, p, o2)
    V1w, W1w = _body_twist(w.body_W, b1, p, o1)
    dVw = sub3(V2w, V1w)
    dWw = sub3(W2w, W1w)
    # the normal's R depends on the lever arms (constraint._normal_weight)
    soft = softness(m, d.contact_epsilon[c], d.contact_kappa[c], d.contact_rmin[c],
                    d.contact_impedance[c], d.contact_dampratio[c])
    eps = row_epsilon(soft, d.contact_dist[c] - d.contact_includemargin[c])
    normal_R = not pyramidal and d.efc_R[adr] > soft[2]       # (27) above rmin
    # d efc_pos / d q = d dist / d q (Gd per dof below), for every row of the contact; the
    # normal row of J where the contact point stays on the normal through its features
    for r in range(nrow):
        out.Jpos[adr + r, :] = 0.0
    # the dofs moving either body
    in1 = w.in1
    in2 = w.in2
    _mark_chain(m, b1, in1, 1)
    _mark_chain(m, b2, in2, 1)
    for side in range(2):
        i = last_dof(m, b2 if side == 0 else b1)
        while i >= 0:
            if side == 1 and in2[i]:
                i = m.dof_parentid[i]
                continue
            S = row6(d.cdof, i)
            oi = _tree_origin(m, d, m.dof_bodyid[i])
            xw = (S[0], S[1], S[2])
            xv = _point_vel(S, p, oi)
            e1 = in1[i] != 0
            sgn = float(in2[i]) - float(in1[i])
            rel = (sgn * xw[0], sgn * xw[1], sgn * xw[2], sgn * xv[0], sgn * xv[1], sgn * xv[2])
            dp = _mul36(Gp, rel)
            dn = _mul36(Gn, rel)
            ddist = (Gd[0] * rel[0] + Gd[1] * rel[1] + Gd[2] * rel[2] + Gd[3] * rel[3]
                     + Gd[4] * rel[4] + Gd[5] * rel[5])
            for r in range(nrow):
                out.Jpos[adr + r, i] = ddist
            if e1:
                dp = add3(dp, xv)
                dn = add3(dn, cross3(xw, ax0))
            dh = cross3(xw, hint) if (hint_turns and in2[i]) else (0.0, 0.0, 0.0)
            dt, db = _frame_deriv(ax0, dn, hint, dh)
            gv = _twist_change(m, d, i, b1, b2, in1, in2, d.cvel, w.dof_U)
            gw = _twist_change(m, d, i, b1, b2, in1, in2, w.body_W, w.dof_W)
            ddVv = add3(_point_vel(gv, p, oi), cross3(dWv, dp))
            ddVw = add3(_point_vel(gw, p, oi), cross3(dWw, dp))
            ddWv = _rot(gv)
            ddWw = _rot(gw)
            dF = (0.0, 0.0, 0.0)
            dT = (0.0, 0.0, 0.0)
            for r in range(nrow):
                sv = 0.0
                sw = 0.0
                da_F = (0.0, 0.0, 0.0)
                da_T = (0.0, 0.0, 0.0)
                for k in range(3):
                    a = ax0 if k == 0 else (ax1 if k == 1 else ax2)
                    da = dn if k == 0 else (dt if k == 1 else db)
                    wt = wr[r, k]
                    wq = wr[r, 3 + k]
                    if wt != 0.0:
                        sv += wt * (dot3(da, dVv) + dot3(a, ddVv))
                        sw += wt * (dot3(da, dVw) + dot3(a, ddVw))
                        da_F = add3(da_F, scl3(da, wt))
                    if wq != 0.0:
                        sv += wq * (dot3(da, dWv) + dot3(a, ddWv))
                        sw += wq * (dot3(da, dWw) + dot3(a, ddWw))
                        da_T = add3(da_T, scl3(da, wq))
                out.DJv[adr + r, i] = sv
                out.DJw[adr + r, i] = sw
                dF = add3(dF, scl3(da_F, f[adr + r]))
                dT = add3(dT, scl3(da_T, f[adr + r]))
            if normal_R:
                out.dR[adr, i] = eps * _normal_weight_deriv(m, d, w, b1, b2, p, ax0, dp, dn, i)
            # the impulses' spatial force on body 2 and its opposite on body 1
            for bs in range(2):
                b = b2 if bs == 0 else b1
                o = o2 if bs == 0 else o1
                sg = 1.0 if bs == 0 else -1.0
                W = _wrench(F, T, p, o)
                dm = add3(add3(dT, cross3(dp, F)), cross3(sub3(p, o), dF))
                dW = (dm[0], dm[1], dm[2], dF[0], dF[1], dF[2])
                _side_force(m, d, w, b, i, W, dW, sg * scale, out.Fq)
            i = m.dof_parentid[i]
    _mark_chain(m, b1, in1, 0)
    _mark_chain(m, b2, in2, 0)
    return True


@inlined
def _mul36(G, x):
    """G (3 x 6) times the 6-tuple x."""
    return (G[0, 0] * x[0] + G[0, 1] * x[1] + G[0, 2] * x[2] + G[0, 3] * x[3] + G[0, 4] * x[4]
            + G[0, 5] * x[5],
            G[1, 0] * x[0] + G[1, 1] * x[1] + G[1, 2] * x[2] + G[1, 3] * x[3] + G[1, 4] * x[4]
            + G[1, 5] * x[5],
            G[2, 0] * x[0] + G[2, 1] * x[1] + G[2, 2] * x[2] + G[2, 3] * x[3] + G[2, 4] * x[4]
            + G[2, 5] * x[5])


@inlined
def _normal_weight_deriv(m, d, w, b1, b2, p, n, dp, dn, i):
    """d A_ii / d q_i of constraint._normal_weight: sum_b 2 r_b w_b . d w_b,
    w_b = (p - c_b) x n, c_b = xipos of body b (moved by dof i if it moves b)."""
    total = 0.0
    for bs in range(2):
        b = b1 if bs == 0 else b2
        if b == 0:
            continue
        cb = vec3(d.xipos, b)
        dcb = (0.0, 0.0, 0.0)
        if (w.in1[i] if bs == 0 else w.in2[i]):
            dcb = _point_vel(row6(d.cdof, i), cb, _tree_origin(m, d, b))
        r = sub3(p, cb)
        wb = cross3(r, n)
        dwb = add3(cross3(sub3(dp, dcb), n), cross3(r, dn))
        total += 2.0 * m.body_invweight0[b, 1] * dot3(wb, dwb)
    return total


@inlined
def _point_change(m, d, i, b, on, p, o, T, U):
    """d V_b(p) / d q_i for a point p fixed to body b under the twists T (zero if dof i does
    not move b): the turned twist at p plus the point carried across the body's rotation."""
    if not on or b == 0:
        return (0.0, 0.0, 0.0)
    S = row6(d.cdof, i)
    t = row6(T, b)
    g = cross_motion(S, _sub6(t, row6(U, i)))
    return add3(_point_vel(g, p, o), cross3(_rot(t), _point_vel(S, p, o)))


@inlined
def _omega_change(m, d, i, b, on, T, U):
    """d omega_b / d q_i under the twists T."""
    if not on or b == 0:
        return (0.0, 0.0, 0.0)
    return _rot(cross_motion(row6(d.cdof, i), _sub6(row6(T, b), row6(U, i))))


@inlined
def _quat_rot_map(q2inv, q1r, om):
    """Im(q2inv (0, om) q1r)."""
    r = quat_mul(quat_mul(q2inv, (0.0, om[0], om[1], om[2])), q1r)
    return (r[1], r[2], r[3])


@jit
def equality_derivs(m, d, w, i0, f, scale, vnext, out):
    """The qpos derivatives of the rows of the equality constraint at rows i0.. (as
    contact_derivs); returns its number of rows. Connect and the translation of weld: e_k .
    (V_1(p1) - V_2(p2)) with p1, p2 fixed to the bodies. Weld orientation: a_k . (omega_1 -
    omega_2) with a_k = ts/2 row k of omega -> Im(q2^-1 omega q1 relq), which turns as
    d q1 = omega_1 q1 / 2, d q2^-1 = -q2^-1 omega_2 / 2. Joint and fixed-tendon equalities:
    J = J_1 - poly'(x_2) J_2 changes with x_2 through poly''."""
    e = d.efc_id[i0]
    t = m.eq_type[e]
    nv = d.qvel.shape[0]
    if t == EqType.JOINT or t == EqType.TENDON:
        o2 = m.eq_obj2id[e]
        out.Jpos[i0, :] = 0.0
        row_axpy(d, i0, d.efc_J, 1.0, out.Jpos[i0])
        if o2 < 0:
            return 1
        c = m.eq_data[e]
        if t == EqType.JOINT:
            x = d.qpos[m.jnt_qposadr[o2]] - m.qpos0[m.jnt_qposadr[o2]]
        else:
            x = d.ten_length[o2] - m.tendon_length0[o2]
        curv = -(2.0 * c[2] + 6.0 * c[3] * x + 12.0 * c[4] * x * x)
        if curv == 0.0:
            return 1
        if t == EqType.JOINT:
            k = m.jnt_dofadr[o2]
            out.DJv[i0, k] += curv * d.qvel[k]
            out.DJw[i0, k] += curv * vnext[k]
            out.Fq[k, k] += scale * f[i0] * curv
        else:
            jv = 0.0
            jw = 0.0
            for k in range(nv):
                jv += d.ten_J[o2, k] * d.qvel[k]
                jw += d.ten_J[o2, k] * vnext[k]
            for k in range(nv):
                tk = d.ten_J[o2, k]
                out.DJv[i0, k] += curv * jv * tk
                out.DJw[i0, k] += curv * jw * tk
                if tk != 0.0:
                    for c2 in range(nv):
                        out.Fq[k, c2] += scale * f[i0] * curv * tk * d.ten_J[o2, c2]
        return 1
    # connect and weld
    nrow = 6 if t == EqType.WELD else 3
    for r in range(nrow):
        out.Jpos[i0 + r, :] = 0.0
        row_axpy(d, i0 + r, d.efc_J, 1.0, out.Jpos[i0 + r])
    b1, b2, p1, p2, fq1, fq2 = equality_frames(m, d, e)
    o1 = _tree_origin(m, d, b1)
    o2 = _tree_origin(m, d, b2)
    F = (f[i0], f[i0 + 1], f[i0 + 2])
    Tq = (0.0, 0.0, 0.0)
    if t == EqType.WELD:
        relq = (m.eq_data[e, 6], m.eq_data[e, 7], m.eq_data[e, 8], m.eq_data[e, 9])
        if m.eq_objtype[e] == OBJ_SITE:
            relq = (1.0, 0.0, 0.0, 0.0)
        q1r = quat_mul(fq1, relq)
        q2inv = (fq2[0], -fq2[1], -fq2[2], -fq2[3])
        ts = 0.5 * m.eq_data[e, 10]
        cols = (scl3(_quat_rot_map(q2inv, q1r, (1.0, 0.0, 0.0)), ts),
                scl3(_quat_rot_map(q2inv, q1r, (0.0, 1.0, 0.0)), ts),
                scl3(_quat_rot_map(q2inv, q1r, (0.0, 0.0, 1.0)), ts))
        # a_k = row k of the map: (cols[0][k], cols[1][k], cols[2][k])
        for k in range(3):
            fk = f[i0 + 3 + k]
            Tq = add3(Tq, scl3((cols[0][k], cols[1][k], cols[2][k]), fk))
        _, W1v = _body_twist(d.cvel, b1, p1, o1)
        _, W2v = _body_twist(d.cvel, b2, p2, o2)
        _, W1w = _body_twist(w.body_W, b1, p1, o1)
        _, W2w = _body_twist(w.body_W, b2, p2, o2)
        dWv = sub3(W1v, W2v)
        dWw = sub3(W1w, W2w)
    in1 = w.in1
    in2 = w.in2
    _mark_chain(m, b1, in1, 1)
    _mark_chain(m, b2, in2, 1)
    W1 = _wrench(F, Tq, p1, o1)
    W2 = _wrench(scl3(F, -1.0), scl3(Tq, -1.0), p2, o2)
    for side in range(2):
        i = last_dof(m, b1 if side == 0 else b2)
        while i >= 0:
            if side == 1 and in1[i]:
                i = m.dof_parentid[i]
                continue
            on1 = in1[i] != 0
            on2 = in2[i] != 0
            dv = sub3(_point_change(m, d, i, b1, on1, p1, o1, d.cvel, w.dof_U),
                      _point_change(m, d, i, b2, on2, p2, o2, d.cvel, w.dof_U))
            dw = sub3(_point_change(m, d, i, b1, on1, p1, o1, w.body_W, w.dof_W),
                      _point_change(m, d, i, b2, on2, p2, o2, w.body_W, w.dof_W))
            out.DJv[i0, i] = dv[0]
            out.DJv[i0 + 1, i] = dv[1]
            out.DJv[i0 + 2, i] = dv[2]
            out.DJw[i0, i] = dw[0]
            out.DJw[i0 + 1, i] = dw[1]
            out.DJw[i0 + 2, i] = dw[2]
            S = row6(d.cdof, i)
            dp1 = _point_vel(S, p1, o1) if on1 else (0.0, 0.0, 0.0)
            dp2 = _point_vel(S, p2, o2) if on2 else (0.0, 0.0, 0.0)
            dT = (0.0, 0.0, 0.0)
            if t == EqType.WELD:
                om1 = _rot(S) if on1 else (0.0, 0.0, 0.0)
                om2 = _rot(S) if on2 else (0.0, 0.0, 0.0)
                # d q1r = om1 q1r / 2, d q2inv = -q2inv om2 / 2
                dq1r = quat_mul((0.0, 0.5 * om1[0], 0.5 * om1[1], 0.5 * om1[2]), q1r)
                dq2inv = quat_mul(q2inv, (0.0, -0.5 * om2[0], -0.5 * om2[1], -0.5 * om2[2]))
                dcols = (scl3(add3(_quat_rot_map(dq2inv, q1r, (1.0, 0.0, 0.0)),
                                   _quat_rot_map(q2inv, dq1r, (1.0, 0.0, 0.0))), ts),
                         scl3(add3(_quat_rot_map(dq2inv, q1r, (0.0, 1.0, 0.0)),
                                   _quat_rot_map(q2inv, dq1r, (0.0, 1.0, 0.0))), ts),
                         scl3(add3(_quat_rot_map(dq2inv, q1r, (0.0, 0.0, 1.0)),
                                   _quat_rot_map(q2inv, dq1r, (0.0, 0.0, 1.0))), ts))
                ddWv = sub3(_omega_change(m, d, i, b1, on1, d.cvel, w.dof_U),
                            _omega_change(m, d, i, b2, on2, d.cvel, w.dof_U))
                ddWw = sub3(_omega_change(m, d, i, b1, on1, w.body_W, w.dof_W),
                            _omega_change(m, d, i, b2, on2, w.body_W, w.dof_W))
                for k in range(3):
                    a = (cols[0][k], cols[1][k], cols[2][k])
                    da = (dcols[0][k], dcols[1][k], dcols[2][k])
                    out.DJv[i0 + 3 + k, i] = dot3(da, dWv) + dot3(a, ddWv)
                    out.DJw[i0 + 3 + k, i] = dot3(da, dWw) + dot3(a, ddWw)
                    dT = add3(dT, scl3(da, f[i0 + 3 + k]))
            m1 = add3(dT, cross3(dp1, F))
            m2 = add3(dT, cross3(dp2, F))
            _side_force(m, d, w, b1, i, W1, (m1[0], m1[1], m1[2], 0.0, 0.0, 0.0), scale,
                        out.Fq)
            _side_force(m, d, w, b2, i, W2, (-m2[0], -m2[1], -m2[2], 0.0, 0.0, 0.0), scale,
                        out.Fq)
            i = m.dof_parentid[i]
    _mark_chain(m, b1, in1, 0)
    _mark_chain(m, b2, in2, 0)
    return nrow


@jit
def ball_limit_derivs(m, d, i0, f, scale, vnext, out):
    """The qpos derivatives of a ball joint's cone limit row: J = -u on its dofs, u the unit
    rotation vector r / |r|, d u / d (right perturbation) = (I - u u') / |r| Jr^-1(r)."""
    jnt = d.efc_id[i0]
    a = m.jnt_qposadr[jnt]
    da = m.jnt_dofadr[jnt]
    rv = quat2vel((d.qpos[a], d.qpos[a + 1], d.qpos[a + 2], d.qpos[a + 3]), 1.0)
    angle = max(norm3(rv), MINVAL)
    u = scl3(rv, 1.0 / angle)
    jinv = _right_jacobian(rv, True)
    for c in range(3):
        for k in range(3):
            # K[c, k] = d u_c / d delta_k
            s = 0.0
            for l in range(3):
                s += (((1.0 if c == l else 0.0) - u[c] * u[l]) / angle) * jinv[3 * l + k]
            out.DJv[i0, da + k] -= d.qvel[da + c] * s
            out.DJw[i0, da + k] -= vnext[da + c] * s
            out.Fq[da + c, da + k] -= scale * f[i0] * s


@inlined
def _outer_row(d, r, u, out, scale):
    """out[p, :] += scale J[r, p] u for the row's nonzero dofs p (efc_range)."""
    for s in range(2):
        adr = d.efc_range[r, 2 * s]
        col = row_col(d, r, s) - adr
        for p in range(adr, adr + d.efc_range[r, 2 * s + 1]):
            jp = d.efc_J[r, p + col] * scale
            if jp != 0.0:
                for c in range(u.shape[0]):
                    out[p, c] += jp * u[c]


# ------------------------------------------------------------------------------------------------
# assembly
# ------------------------------------------------------------------------------------------------
Work = namedtuple("Work", "dof_end body_end dof_U dof_W dof_alpha body_W body_A body_F body_phi "
                          "Gp Gn Gd poly wr in1 in2 bad")
Rows = namedtuple("Rows", "DJv DJw dR Jpos Fq")


@jit
def make_work(m, d):
    """Scratch of the derivative kernels, allocated once per call."""
    nv = d.qvel.shape[0]
    nbody = m.body_parentid.shape[0]
    dof_end = np.empty(nv, np.int64)
    body_end = np.empty(nbody, np.int64)
    tree_ends(m, dof_end, body_end)
    return Work(dof_end, body_end, np.empty((nv, 6)), np.empty((nv, 6)), np.empty((nv, 6)),
                np.empty((nbody, 6)), np.empty((nbody, 6)), np.empty((nbody, 6)),
                np.empty((nbody, 6)), np.empty((3, 6)), np.empty((3, 6)), np.empty(6),
                np.empty((2, NPOLY, 3)), np.empty((10, 6)),
                np.zeros(nv, np.int64), np.zeros(nv, np.int64),
                np.full(1, -1, np.int64))


@jit
def constraint_jacobians(m, d, w, vnext, f, Fq, Fv, H):
    """The constraint terms of the inverse dynamics' Jacobians at the next velocity vnext:
        H  += J' D J,                 D = P R^-1 (P = d f*/dz per object: the active set)
        Fv += J' D B J                (v* = (1 - h B) J v - h K pos)
        Fq -= (d (J' f) / d q + J' P d z / d q) / h,
        d z / d q = R^-1 ((1 - h B) d(J v)/dq - d(J v')/dq - h K d pos/dq - z dR/dq);
    f receives the impulses f*(z). Returns OK, or BAD_PAIR with the contact in w.bad[0]."""
    nefc = d.nefc[0]
    nv = d.qvel.shape[0]
    h = m.opt_timestep[0]
    z = np.empty(nefc)
    P = np.zeros((nefc, 6))
    Pr = np.zeros(nefc)
    constraint_objects(m, d, vnext, z, f, P, Pr)
    rows = Rows(np.zeros((nefc, nv)), np.zeros((nefc, nv)), np.zeros((nefc, nv)),
                np.zeros((nefc, nv)), Fq)
    scale = -1.0 / h
    twists(m, d, vnext, w.body_W, w.dof_W)
    for c in range(d.ncon[0]):
        if d.contact_efc_address[c] >= 0:
            if not contact_derivs(m, d, w, c, f, scale, rows):
                w.bad[0] = c
                return BAD_PAIR
    i = 0
    while i < nefc:
        t = d.efc_type[i]
        if t == EQUALITY:
            i += equality_derivs(m, d, w, i, f, scale, vnext, rows)
            continue
        if t < CONTACT_FRICTIONLESS:
            row_axpy(d, i, d.efc_J, 1.0, rows.Jpos[i])
            if t == LIMIT_JOINT and m.jnt_type[d.efc_id[i]] == BALL:
                ball_limit_derivs(m, d, i, f, scale, vnext, rows)
        i += 1
    Y = np.empty((6, nv))
    u = np.empty(nv)
    dx = np.empty(nv)
    i = 0
    while i < nefc:
        n = object_size(d, i)
        for a in range(n):
            r = i + a
            cb = 1.0 - h * d.efc_B[r]
            ck = h * d.efc_K[r]
            inv = 1.0 / d.efc_R[r]
            for c in range(nv):
                Y[a, c] = (cb * rows.DJv[r, c] - rows.DJw[r, c] - ck * rows.Jpos[r, c]
                           - z[r] * rows.dR[r, c]) * inv
        if d.efc_imp[i, 1] != 0.0:
            impedance_terms(d, i, n, h, z, rows.Jpos, dx, Y)
        for a in range(n):
            u[:] = 0.0
            for b in range(n):
                pab = P[i + a, b]
                if pab != 0.0:
                    for c in range(nv):
                        u[c] += pab * Y[b, c]
            if Pr[i + a] != 0.0:                   # the cone's metric follows R_i
                for c in range(nv):
                    u[c] += Pr[i + a] * rows.dR[i, c]
            _outer_row(d, i + a, u, Fq, scale)
            u[:] = 0.0
            for b in range(n):
                if P[i + a, b] != 0.0:
                    row_axpy(d, i + b, d.efc_J, P[i + a, b] / d.efc_R[i + b], u)
            _outer_row(d, i + a, u, H, 1.0)
            u[:] = 0.0
            for b in range(n):
                if P[i + a, b] != 0.0:
                    row_axpy(d, i + b, d.efc_J, P[i + a, b] / d.efc_R[i + b] * d.efc_B[i + b], u)
            _outer_row(d, i + a, u, Fv, 1.0)
        i += n
    return OK


@jit
def impedance_terms(d, i, n, h, z, Jpos, dx, Y):
    """The terms of an object whose impedance d(x) changes with its violation x
    (constraint.impedance) in Y[a] = d z_(i+a) / d q (constraint_jacobians): with
    dx = d x / d q (the rows' Jpos; for a connect or weld x is the norm of the violations of
    its rows r, dx = sum_r pos_r Jpos_r / x; a contact's x is its normal distance, Jpos of every
    row),
    row r's h K (pos_r - margin_r) gains h K d'/d (pos_r - margin_r) dx (K holds d(x)) and its
    R gains dR/dx dx (efc_imp[r, 2]), i.e. Y[a] -= (h K d'/d (pos_r - margin_r) + z_r dR/dx)
    dx / R_r."""
    nv = dx.shape[0]
    # the rows whose violations make x: an equality's (each of its rows is an object of its
    # own), else the object's first
    lo = i
    hi = i + 1
    if d.efc_type[i] == EQUALITY:
        while lo > 0 and d.efc_type[lo - 1] == EQUALITY and d.efc_id[lo - 1] == d.efc_id[i]:
            lo -= 1
        while (hi < d.nefc[0] and d.efc_type[hi] == EQUALITY
               and d.efc_id[hi] == d.efc_id[i]):
            hi += 1
    if hi - lo > 1:
        x = 0.0
        for r in range(lo, hi):
            x += d.efc_pos[r] ** 2
        x = np.sqrt(x)
        dx[:] = 0.0
        for r in range(lo, hi):
            for c in range(nv):
                dx[c] += d.efc_pos[r] / x * Jpos[r, c]
    else:
        dx[:] = Jpos[i]
    imp = d.efc_imp[i, 0]
    dimp = d.efc_imp[i, 1]
    for a in range(n):
        r = i + a
        g = (h * d.efc_K[r] * dimp / imp * (d.efc_pos[r] - d.efc_margin[r])
             + z[r] * d.efc_imp[r, 2]) / d.efc_R[r]
        for c in range(nv):
            Y[a, c] -= g * dx[c]


@jit
def dense_inertia(m, d, H):
    """H = M (+ h B with the implicit damping of the semi-implicit step), dense."""
    nv = d.qvel.shape[0]
    for i in range(nv):
        for j in range(nv):
            H[i, j] = 0.0
    for i in range(nv):
        adr = m.dof_Madr[i]
        j = i
        while j >= 0:
            H[i, j] = d.qM[adr]
            H[j, i] = d.qM[adr]
            j = m.dof_parentid[j]
            adr += 1
    if implicit_damping(m):
        for i in range(nv):
            H[i, i] += m.opt_timestep[0] * m.dof_damping[i]


@jit
def smooth_position_jacobian(m, d, w, a, actuation, applied, Fq):
    """Fq += d/dq [RNE(q, v, a) - qfrc_passive (- qfrc_actuator) (- J' xfrc_applied)]."""
    twists(m, d, d.qvel, w.body_W, w.dof_U)
    gravity_on = not m.opt_disableflags[0] & DisableBit.GRAVITY
    accelerations(m, d, a, gravity_on, w.body_A, w.body_F, w.dof_alpha)
    rne_pos(m, d, w, Fq)
    nv = d.qvel.shape[0]
    G = np.zeros((nv, nv))
    passive_pos(m, d, w, G)
    if actuation:
        actuator_pos(m, d, G)
    if applied:
        xfrc_pos(m, d, w, G)
    for i in range(nv):
        for j in range(nv):
            Fq[i, j] -= G[i, j]


@jit
def inverse_jacobians(m, d, w, a, actuation, applied, Fq, Fv, H, f):
    """Jacobians of F = qfrc_inverse (- qfrc_actuator if actuation) (- qfrc_applied -
    J' xfrc_applied if applied) with respect to qpos (Fq), qvel (Fv) and qacc (H) at the
    acceleration a, the position and velocity stages being in d; f receives the impulses.
    Returns OK or BAD_PAIR."""
    nv = d.qvel.shape[0]
    h = m.opt_timestep[0]
    for i in range(nv):
        for j in range(nv):
            Fq[i, j] = 0.0
            Fv[i, j] = 0.0
    smooth_position_jacobian(m, d, w, a, actuation, applied, Fq)
    smooth_velocity_jacobian(m, d, actuation, Fv)
    dense_inertia(m, d, H)
    if d.nefc[0] == 0:
        return OK
    vnext = np.empty(nv)
    for k in range(nv):
        vnext[k] = d.qvel[k] + h * a[k]
    return constraint_jacobians(m, d, w, vnext, f, Fq, Fv, H)


@jit
def inverse_derivatives_kernel(m, d, actuation, DfDq, DfDv, DfDa):
    """Jacobians of the inverse dynamics computed in d (with crb's inertia and, if actuation,
    the actuator forces). Returns (status, contact index for BAD_PAIR)."""
    w = make_work(m, d)
    f = np.empty(d.nefc[0])
    status = inverse_jacobians(m, d, w, d.qacc, actuation, False, DfDq, DfDv, DfDa, f)
    return status, w.bad[0]


@jit
def smooth_velocity_jacobian(m, d, actuation, Fv):
    """Fv -= d (qfrc_passive - qfrc_bias (+ qfrc_actuator if actuation)) / d qvel: MuJoCo's
    qDeriv (engine.derivative, left in d.qDeriv) made dense. Its pattern drops couplings
    between branches, which unsupported_features rules out."""
    d.qDeriv[:] = 0.0
    if actuation:
        actuator_vel(m, d)
    passive_vel(m, d)
    rne_vel(m, d)
    for i in range(d.qvel.shape[0]):
        a = m.D_rowadr[i]
        for adr in range(a, a + m.D_rownnz[i]):
            Fv[i, m.D_colind[adr]] -= d.qDeriv[adr]


# ------------------------------------------------------------------------------------------------
# the step
# ------------------------------------------------------------------------------------------------
@inlined
def _integration_blocks(m, d, V, Vu, vel, A, B, explicit):
    """Rows of A, B for qpos' = qpos (+) h vel (tangent space): dq' = Dq dq + h Dv d vel, with Dq
    = I, Dv = I for scalar dofs and, for a ball or free rotation, Dq = R(h vel)' (the step's
    rotation carried back) and Dv = Jr(h vel) (the right Jacobian of the exponential map).
    V, Vu: d vel / d x and d vel / d u (semi-implicit: vel = v', explicit: vel = v, V unused)."""
    nv = d.qvel.shape[0]
    h = m.opt_timestep[0]
    ndx = A.shape[1]
    nu = B.shape[1]
    for jnt in range(m.jnt_type.shape[0]):
        da = m.jnt_dofadr[jnt]
        t = m.jnt_type[jnt]
        nscalar = 3 if t == FREE else (0 if t == BALL else 1)
        for k in range(da, da + nscalar):
            if explicit:
                A[k, k] = 1.0
                A[k, nv + k] = h
            else:
                for c in range(ndx):
                    A[k, c] = h * V[k, c]
                A[k, k] += 1.0
                for c in range(nu):
                    B[k, c] = h * Vu[k, c]
        if t != FREE and t != BALL:
            continue
        r = da + nscalar
        phi = (h * vel[r], h * vel[r + 1], h * vel[r + 2])
        Rm = _rotvec_mat(phi)
        Jr = _right_jacobian(phi, False)
        for a in range(3):
            for b in range(3):
                A[r + a, r + b] = Rm[3 * b + a]            # R'
                if explicit:
                    A[r + a, nv + r + b] = h * Jr[3 * a + b]
            if not explicit:
                for c in range(ndx):
                    s = 0.0
                    for b in range(3):
                        s += Jr[3 * a + b] * V[r + b, c]
                    A[r + a, c] += h * s
                for c in range(nu):
                    s = 0.0
                    for b in range(3):
                        s += Jr[3 * a + b] * Vu[r + b, c]
                    B[r + a, c] = h * s


@jit
def transition_jacobians(m, d, w, A, B):
    """A, B of the step whose forward pass is in d (qacc solving F = 0): d qacc / d x =
    -H^-1 dF/dx, then v' = v + h qacc, qpos' = qpos (+) h v' (semi-implicit) or h v
    (explicit), act' = next_activation. Returns OK or BAD_PAIR."""
    nv = d.qvel.shape[0]
    na = d.act.shape[0]
    nu = d.ctrl.shape[0]
    h = m.opt_timestep[0]
    ndx = 2 * nv + na
    Fq = np.empty((nv, nv))
    Fv = np.empty((nv, nv))
    H = np.empty((nv, nv))
    f = np.empty(d.nefc[0])
    status = inverse_jacobians(m, d, w, d.qacc, True, True, Fq, Fv, H, f)
    if status != OK:
        return status
    Fa = np.zeros((nv, na))
    Fu = np.zeros((nv, nu))
    actuator_inputs(m, d, Fa, Fu, -1.0)
    # d qacc / d (q, v, act, u) = -H^-1 (Fq, Fv, Fa, Fu)
    _cholesky_small(H, nv)
    V = np.empty((nv, ndx))
    Vu = np.empty((nv, nu))
    x = np.empty(nv)
    for c in range(ndx + nu):
        for k in range(nv):
            if c < nv:
                x[k] = -Fq[k, c]
            elif c < 2 * nv:
                x[k] = -Fv[k, c - nv]
            elif c < ndx:
                x[k] = -Fa[k, c - 2 * nv]
            else:
                x[k] = -Fu[k, c - ndx]
        _cholesky_solve(H, nv, x)
        # v' = v + h qacc
        for k in range(nv):
            if c < ndx:
                V[k, c] = h * x[k] + (1.0 if c == nv + k else 0.0)
            else:
                Vu[k, c - ndx] = h * x[k]
    A[:, :] = 0.0
    B[:, :] = 0.0
    for k in range(nv):
        for c in range(ndx):
            A[nv + k, c] = V[k, c]
        for c in range(nu):
            B[nv + k, c] = Vu[k, c]
    explicit = m.opt_integrator[0] == Integrator.EXPLICIT
    vel = np.empty(nv)
    for k in range(nv):
        vel[k] = d.qvel[k] if explicit else d.qvel[k] + h * d.qacc[k]
    _integration_blocks(m, d, V, Vu, vel, A, B, explicit)
    # activations
    if not m.opt_disableflags[0] & DisableBit.ACTUATION:
        for i in range(m.actuator_trntype.shape[0]):
            adr = m.actuator_actadr[i]
            if adr < 0:
                continue
            last = adr + m.actuator_actnum[i] - 1
            dact, dctrl, _, _ = activation_derivs(m, d, i)
            A[2 * nv + last, 2 * nv + last] = dact
            B[2 * nv + last, i] = dctrl
    else:
        for k in range(na):
            A[2 * nv + k, 2 * nv + k] = 1.0
    return OK


@jit
def transition_kernel(m, d, A, B):
    """A and B of the step whose forward pass is in d. Returns (status, contact index for
    BAD_PAIR)."""
    w = make_work(m, d)
    status = transition_jacobians(m, d, w, A, B)
    return status, w.bad[0]


@jit
def smooth_kernel(m, d, Dq, Dv, Da, Du, DactA, DactU):
    """d qacc_smooth / d (qpos, qvel, act, ctrl) = -M^-1 dF/dx with F the inverse dynamics
    without constraints at qacc_smooth (M + h B with implicit damping, the sparse factor
    qLD, one solve per column); d act_dot / d (act, ctrl). The forward pass is in d."""
    nv = d.qvel.shape[0]
    w = make_work(m, d)
    Dq[:, :] = 0.0
    Dv[:, :] = 0.0
    Da[:, :] = 0.0
    Du[:, :] = 0.0
    smooth_position_jacobian(m, d, w, d.qacc_smooth, True, True, Dq)
    smooth_velocity_jacobian(m, d, True, Dv)
    actuator_inputs(m, d, Da, Du, -1.0)
    x = np.empty(nv)
    for D in (Dq, Dv, Da, Du):
        for c in range(D.shape[1]):
            for k in range(nv):
                x[k] = -D[k, c]
            solve_m(m, d.qLD, d.qLDiagInv, x)
            for k in range(nv):
                D[k, c] = x[k]
    DactA[:, :] = 0.0
    DactU[:, :] = 0.0
    if not m.opt_disableflags[0] & DisableBit.ACTUATION:
        for i in range(m.actuator_trntype.shape[0]):
            adr = m.actuator_actadr[i]
            if adr >= 0:
                last = adr + m.actuator_actnum[i] - 1
                _, _, ddot_act, ddot_ctrl = activation_derivs(m, d, i)
                DactA[last, last] = ddot_act
                DactU[last, i] = ddot_ctrl


# ------------------------------------------------------------------------------------------------
# public API
# ------------------------------------------------------------------------------------------------
SmoothDerivatives = namedtuple("SmoothDerivatives", "qacc_qpos qacc_qvel qacc_act qacc_ctrl "
                                                    "act_dot_act act_dot_ctrl")
SmoothDerivatives.__doc__ = """Jacobians of the smooth dynamics (no constraints): d qacc_smooth
/ d (qpos in the tangent space, qvel, act, ctrl), nv x (nv, nv, na, nu), and of the activation
dynamics d act_dot / d (act, ctrl), na x (na, nu)."""

_PAIR_OK = {(GeomType.PLANE, GeomType.SPHERE), (GeomType.PLANE, GeomType.CAPSULE),
            (GeomType.PLANE, GeomType.BOX), (GeomType.SPHERE, GeomType.SPHERE),
            (GeomType.SPHERE, GeomType.CAPSULE), (GeomType.CAPSULE, GeomType.CAPSULE),
            (GeomType.SPHERE, GeomType.BOX), (GeomType.BOX, GeomType.BOX),
            (GeomType.PLANE, GeomType.MESH), (GeomType.PLANE, GeomType.ELLIPSOID),
            (GeomType.PLANE, GeomType.CYLINDER), (GeomType.SPHERE, GeomType.MESH),
            (GeomType.CAPSULE, GeomType.MESH), (GeomType.BOX, GeomType.MESH),
            (GeomType.MESH, GeomType.MESH), (GeomType.CAPSULE, GeomType.BOX)}


def unsupported_features(m: Model, step: bool = True) -> list:
    """The features of m whose analytical derivatives are not implemented (an empty list when
    inverse_derivatives, smooth_derivatives and, with step, transition_derivatives apply)."""
    out = []
    integ = int(m.opt_integrator[0])
    if step and integ not in (Integrator.SEMIIMPLICIT, Integrator.EXPLICIT):
        out.append(f"the {Integrator(integ).name} integrator (SEMIIMPLICIT and EXPLICIT are "
                   "differentiated)")
    if m.opt_stabilization[0] == EXACT_STABILIZATION:
        out.append("exact stabilization (v* through the full A)")
    if m.opt_density[0] > 0 or m.opt_viscosity[0] > 0:
        out.append("fluid forces (density, viscosity)")
    if (m.neq and not m.opt_disableflags[0] & (DisableBit.CONSTRAINT | DisableBit.EQUALITY)
            and np.any(m.eq_hard * m.eq_active0)):
        out.append(f"hard equality constraints {np.flatnonzero(m.eq_hard * m.eq_active0)}")
    structure = _STRUCTURE.get(m)
    if structure is None:
        structure = _STRUCTURE[m] = _structure_problems(m)
    return out + structure


_STRUCTURE = weakref.WeakKeyDictionary()     # the model's elements without derivatives, once


def _structure_problems(m):
    """Actuators and tendons without analytical derivatives (the model's fixed structure)."""
    out = []
    used = set()
    for e in range(m.neq):
        if m.eq_type[e] == EqType.TENDON:
            used.update(t for t in (m.eq_obj1id[e], m.eq_obj2id[e]) if t >= 0)
    for i in range(m.nu):
        if m.actuator_trntype[i] == TrnType.TENDON:
            used.add(m.actuator_trnid[i, 0])
        elif m.actuator_trntype[i] not in (TrnType.JOINT, TrnType.JOINTINPARENT):
            out.append(f"actuator {i}: {TrnType(m.actuator_trntype[i]).name} transmission")
        if m.actuator_dyntype[i] not in (DynType.NONE, DynType.INTEGRATOR, DynType.FILTER,
                                         DynType.FILTEREXACT):
            out.append(f"actuator {i}: {DynType(m.actuator_dyntype[i]).name} dynamics")
        if m.actuator_gaintype[i] not in (GainType.FIXED, GainType.AFFINE):
            out.append(f"actuator {i}: {GainType(m.actuator_gaintype[i]).name} gain")
        if m.actuator_biastype[i] not in (BiasType.NONE, BiasType.AFFINE):
            out.append(f"actuator {i}: {BiasType(m.actuator_biastype[i]).name} bias")
    damped = set()          # tendons whose velocity enters qDeriv: damping, actuator kv terms
    for i in range(m.nu):
        if m.actuator_trntype[i] == TrnType.TENDON and (
                (m.actuator_gaintype[i] == GainType.AFFINE and m.actuator_gainprm[i, 2])
                or (m.actuator_biastype[i] == BiasType.AFFINE and m.actuator_biasprm[i, 2])):
            damped.add(m.actuator_trnid[i, 0])
    for t in range(m.ntendon):
        a, n = m.tendon_adr[t], m.tendon_num[t]
        spatial = any(m.wrap_type[k] != WrapType.JOINT for k in range(a, a + n))
        if spatial and (t in used or m.tendon_stiffness[t] or m.tendon_damping[t]
                        or m.tendon_frictionloss[t] or m.tendon_limited[t]):
            out.append(f"spatial tendon {t} (the derivative of its moment arms)")
        elif (m.tendon_damping[t] or t in damped) and _spans_branches(
                m, [m.jnt_dofadr[m.wrap_objid[k]] for k in range(a, a + n)]):
            out.append(f"tendon {t}: velocity terms between branches of the tree (qDeriv's "
                       "pattern drops them)")
    return out


def _spans_branches(m, dofs):
    """Some two of the dofs lie on different branches (neither is the other's ancestor)."""
    def chain(i):
        out = set()
        while i >= 0:
            out.add(i)
            i = m.dof_parentid[i]
        return out
    chains = [chain(i) for i in dofs]
    return any(i not in cj and j not in ci
               for i, ci in zip(dofs, chains) for j, cj in zip(dofs, chains))


def _check(m, step):
    problems = unsupported_features(m, step)
    if problems:
        raise NotImplementedError("analytical derivatives are not implemented for: "
                                  + "; ".join(problems) + " (transition_fd and inverse_fd "
                                  "differentiate every model)")


def _pair_error(m, d, c):
    t1 = GeomType(m.geom_type[d.contact_geom1[c]]).name
    t2 = GeomType(m.geom_type[d.contact_geom2[c]]).name
    return NotImplementedError(
        f"analytical derivatives of {t1.lower()}-{t2.lower()} contacts are not implemented "
        f"(contact {c}, geoms {d.contact_geom1[c]} and {d.contact_geom2[c]}); implemented: "
        + ", ".join(f"{a.name.lower()}-{b.name.lower()}" for a, b in sorted(_PAIR_OK))
        + " (transition_fd differentiates every pair)")


@contextmanager
def _state_kept(m, d):
    """Run the forward pass at the state of d (growing d if needed) for the body of the with
    statement, then restore the state and warm start bitwise (what the forward pass changed)."""
    saved = save_state(d._struct)
    forward_kernel(m._struct, d._struct)
    while d.nefc_overflow[0]:
        restore_state(d._struct, saved)
        _grow(m, d)
        saved = save_state(d._struct)
        forward_kernel(m._struct, d._struct)
    try:
        yield
    finally:
        restore_state(d._struct, saved)


def inverse_derivatives(m: Model, d: Data, actuation: bool = False):
    """Analytical Jacobians of the inverse dynamics at the state and qacc of d, in
    inverse_fd's layout: DfDq, DfDv, DfDa with DfDx[i, j] = d qfrc_inverse_i / d x_j (qpos in
    the tangent space); with actuation=True of qfrc_inverse - qfrc_actuator. Runs the inverse
    dynamics (its fields are left in d). The impulses are those of the inverse (Theorem 4) at
    qacc, so the derivative is exact wherever the active set does not change."""
    warmup.join()
    check_invertible(m)
    _check(m, step=False)
    nv = m.nv
    DfDq, DfDv, DfDa = np.empty((nv, nv)), np.empty((nv, nv)), np.empty((nv, nv))
    bp = (d.bp_axis.copy(), d.bp_order.copy())        # the contacts' order, as it was
    inverse_kernel(m._struct, d._struct)
    while d.nefc_overflow[0]:
        _grow(m, d)
        inverse_kernel(m._struct, d._struct)
    d.bp_axis[:], d.bp_order[:] = bp
    crb(m._struct, d._struct)                         # the inertia, which the inverse skips
    if actuation:
        fwd_actuation(m._struct, d._struct)
    status, c = inverse_derivatives_kernel(m._struct, d._struct, bool(actuation), DfDq, DfDv,
                                           DfDa)
    if status == BAD_PAIR:
        raise _pair_error(m, d, c)
    return DfDq, DfDv, DfDa


def transition_derivatives(m: Model, d: Data):
    """Analytical linearisation of one step, in transition_fd's layout: A (2 nv + na)^2,
    B (2 nv + na) x nu with x = (qpos in the tangent space, qvel, act), u = ctrl.

    Runs the step's forward pass at the state of d with the model's solver and differentiates
    the optimality conditions of the impulse problem at its solution over the active set it
    selects (docs/derivatives.md). It is the derivative of the exact optimum when the solver
    converged; otherwise the derivative of the optimality conditions linearised at the returned
    acceleration (use Solver.NEWTON or a tight tolerance: the error is of the order of the
    solver's residual). At a state where the active set changes (a contact about to open, a
    cone about to saturate), it is the derivative of the piece the state lies on. The state
    and warm start of d are restored bitwise; its computed fields are the forward pass's."""
    if m.opt.solver == Solver.LCP:         # hard contact: its own Jacobians (Nimble)
        from . import hard_contact, hard_contact_grad
        jac = hard_contact_grad.step_derivatives(m, d, hard_contact.options(m),
                                                 warm=hard_contact.warm_set(d))
        return jac.A, jac.B
    warmup.join()
    _check(m, step=True)
    ndx = 2 * m.nv + m.na
    A, B = np.empty((ndx, ndx)), np.empty((ndx, m.nu))
    with _state_kept(m, d):
        status, c = transition_kernel(m._struct, d._struct, A, B)
    if status == BAD_PAIR:
        raise _pair_error(m, d, c)
    return A, B


def smooth_derivatives(m: Model, d: Data) -> SmoothDerivatives:
    """Analytical Jacobians of the smooth dynamics at the state of d (SmoothDerivatives): the
    derivatives of RNE, of the passive and actuator forces, and of M^-1 through
    d (M^-1 f) = -M^-1 (dM) M^-1 f, i.e. qacc_smooth' = -M^-1 dF/dx with F the inverse
    dynamics at qacc_smooth (one sparse solve per column, no inverse of M); and the activation
    dynamics. Runs the forward pass (its fields are left in d)."""
    warmup.join()
    _check(m, step=False)
    nv, na, nu = m.nv, m.na, m.nu
    out = SmoothDerivatives(np.empty((nv, nv)), np.empty((nv, nv)), np.empty((nv, na)),
                            np.empty((nv, nu)), np.empty((na, na)), np.empty((na, nu)))
    with _state_kept(m, d):
        smooth_kernel(m._struct, d._struct, *out)
    return out

"""Finite-difference derivatives of a step and of the inverse dynamics (MuJoCo's
engine_derivative_fd.c: mjd_transitionFD, mjd_inverseFD).

    A, B = transition_fd(m, d, eps, centered)      dx' = A dx + B du
    DfDq, DfDv, DfDa = inverse_fd(m, d, eps)       d qfrc_inverse = DfDq dq + DfDv dv + DfDa da

The state x = (dq, qvel, act) has 2 nv + na entries: positions are differentiated in the
tangent space (nv entries; a ball or free joint's rotation by the rotation vector of
q^-1 q', in the joint's local frame, as mj_differentiatePos and mj_integratePos). Each input
is nudged in turn by eps and the step taken again from the restored state, inside one compiled
call. As in MuJoCo:
* perturbing controls and activations reuses the position and velocity stages, perturbing
  velocities reuses the position stages (the single-stage integrators; a multi-stage integrator
  recomputes everything, since its stages overwrite those fields);
* every step starts from the same solver warm start, the one the state had (so a solver that
  stops after a few iterations runs the same iterations from the same point in the nominal and
  the perturbed steps, and the difference is the derivative of what it returns);
* a control at its limit is nudged into its range only (a one-sided difference), and a
  control outside its range has zero derivative.
The state is restored bitwise afterwards (qpos, qvel, act, ctrl, time, the warm start and the
broadphase order); the computed fields hold the unperturbed step's (or inverse's) values.
"""
import numpy as np

from . import actuator, warmup
from .forward import (_grow, euler, explicit_euler, fwd_acceleration, fwd_constraint, fwd_position,
                      fwd_velocity, implicit, integrate_pos, step_kernel)
from .inverse import (check_invertible, inverse_acceleration, inverse_position,
                      inverse_velocity)
from .enums import Integrator, JointType, Solver, Stage
from .jit import inlined, jit
from .math import quat_normalize, quat_sub
from .types import Data, Model

FREE = int(JointType.FREE)
BALL = int(JointType.BALL)
SKIP_NONE = int(Stage.NONE)
SKIP_POS = int(Stage.POS)
SKIP_VEL = int(Stage.VEL)


# ------------------------------------------------------------------------------------------------
# tangent-space differences
# ------------------------------------------------------------------------------------------------
@jit
def differentiate_pos(m, qvel, h, qpos1, qpos2):
    """qvel = (qpos2 - qpos1) / h in the tangent space (MuJoCo's mj_differentiatePos): ball and
    free rotations by the rotation vector of qpos1^-1 qpos2 (local frame), the inverse of
    integrate_pos."""
    for j in range(m.jnt_type.shape[0]):
        pa = m.jnt_qposadr[j]
        da = m.jnt_dofadr[j]
        t = m.jnt_type[j]
        if t == FREE:
            for c in range(3):
                qvel[da + c] = (qpos2[pa + c] - qpos1[pa + c]) / h
            pa += 3
            da += 3
        if t == FREE or t == BALL:
            q1 = quat_normalize((qpos1[pa], qpos1[pa + 1], qpos1[pa + 2], qpos1[pa + 3]))
            q2 = quat_normalize((qpos2[pa], qpos2[pa + 1], qpos2[pa + 2], qpos2[pa + 3]))
            dif = quat_sub(q2, q1)
            for c in range(3):
                qvel[da + c] = dif[c] / h
        else:
            qvel[da] = (qpos2[pa] - qpos1[pa]) / h


@jit
def state_diff(m, ds, s1, s2, h):
    """ds = (s2 - s1) / h for states (qpos, qvel, act), positions in the tangent space."""
    nq = m.qpos0.shape[0]
    nv = m.dof_bodyid.shape[0]
    differentiate_pos(m, ds, h, s1[:nq], s2[:nq])
    for k in range(s1.shape[0] - nq):
        ds[nv + k] = (s2[nq + k] - s1[nq + k]) / h


@jit
def _clamped_diff(m, ds, s, plus, minus, has_plus, has_minus, eps):
    """Forward, backward or centered difference of states, zero if neither side exists."""
    if has_plus and has_minus:
        state_diff(m, ds, minus, plus, 2.0 * eps)
    elif has_plus:
        state_diff(m, ds, s, plus, eps)
    elif has_minus:
        state_diff(m, ds, minus, s, eps)
    else:
        ds[:] = 0.0


# ------------------------------------------------------------------------------------------------
# saving and restoring what a step reads
# ------------------------------------------------------------------------------------------------
@jit
def save_state(d):
    """Copies of what a step reads and changes besides the inputs it leaves alone: qpos, qvel,
    act, ctrl, time, the solver's warm start (qacc_warmstart and the previous step's rows and
    impulses) and the broadphase's sweep axis and order (which set the order of the contacts)."""
    return (d.qpos.copy(), d.qvel.copy(), d.act.copy(), d.ctrl.copy(), d.time.copy(),
            d.qacc_warmstart.copy(), d.warm_nefc.copy(), d.warm_type.copy(), d.warm_id.copy(),
            d.efc_warm.copy(), d.warm_ncon.copy(), d.warm_contact_geom.copy(),
            d.warm_contact_pos.copy(), d.warm_contact_adr.copy(), d.bp_axis.copy(),
            d.bp_order.copy())


@jit
def restore_state(d, s):
    """Write back what save_state copied, bitwise."""
    d.qpos[:] = s[0]
    d.qvel[:] = s[1]
    d.act[:] = s[2]
    d.ctrl[:] = s[3]
    d.time[:] = s[4]
    d.qacc_warmstart[:] = s[5]
    d.warm_nefc[:] = s[6]
    d.warm_type[:] = s[7]
    d.warm_id[:] = s[8]
    d.efc_warm[:] = s[9]
    d.warm_ncon[:] = s[10]
    d.warm_contact_geom[:, :] = s[11]
    d.warm_contact_pos[:, :] = s[12]
    d.warm_contact_adr[:] = s[13]
    d.bp_axis[:] = s[14]
    d.bp_order[:] = s[15]


@jit
def get_state(d, out):
    """out = (qpos, qvel, act)."""
    nq = d.qpos.shape[0]
    nv = d.qvel.shape[0]
    out[:nq] = d.qpos
    out[nq:nq + nv] = d.qvel
    out[nq + nv:] = d.act


# ------------------------------------------------------------------------------------------------
# steps and inverse dynamics that skip stages
# ------------------------------------------------------------------------------------------------
@jit
def skips_stages(m):
    """True for the single-stage integrators, whose step leaves the position and velocity
    stages of its one forward pass in d (the multi-stage ones overwrite them)."""
    integ = m.opt_integrator[0]
    return (integ == Integrator.SEMIIMPLICIT or integ == Integrator.EXPLICIT
            or integ == Integrator.IMPLICIT or integ == Integrator.IMPLICITFAST)


@inlined
def step_skip(m, d, skip):
    """One step that reuses the stages before `skip` (Stage) from the last computation
    (MuJoCo's mj_stepSkip); a multi-stage integrator takes a whole step. Compiled into
    _step_from, its one caller (as a kernel of its own it would compile the pipeline once
    more)."""
    if not skips_stages(m):
        step_kernel(m, d, 1)
        return
    if skip < SKIP_POS:
        fwd_position(m, d)
    if skip < SKIP_VEL:
        fwd_velocity(m, d)
    actuator.fwd_actuation(m, d)
    fwd_acceleration(m, d)
    fwd_constraint(m, d)
    if d.nefc_overflow[0]:
        return
    integ = m.opt_integrator[0]
    if integ == Integrator.EXPLICIT:
        explicit_euler(m, d)
    elif integ == Integrator.IMPLICIT or integ == Integrator.IMPLICITFAST:
        implicit(m, d)
    else:
        euler(m, d)


@jit
def _step_from(m, d, skip, saved, out):
    """Step (skipping stages), copy the next state to out, restore the saved state. False when
    the contacts or rows outgrew d."""
    step_skip(m, d, skip)
    ok = not d.nefc_overflow[0]
    get_state(d, out)
    restore_state(d, saved)
    return ok


@jit
def _in_range(x1, x2, lo, hi):
    return lo <= x1 <= hi and lo <= x2 <= hi


@jit
def transition_fd_kernel(m, d, eps, centered, A, B):
    """A = dx'/dx, B = dx'/du of a step by finite differences (see the module docstring).
    Returns 1 if the contacts or constraint rows outgrew d (nothing written), else 0."""
    nq = d.qpos.shape[0]
    nv = d.qvel.shape[0]
    na = d.act.shape[0]
    nu = d.ctrl.shape[0]
    ns = nq + nv + na
    saved = save_state(d)
    nxt = np.empty(ns)
    plus = np.empty(ns)
    minus = np.empty(ns)
    dpos = np.zeros(nv)
    col = np.empty(2 * nv + na)
    if not _step_from(m, d, SKIP_NONE, saved, nxt):
        return 1
    # controls: position and velocity stages reused; nudged within ctrlrange only
    for i in range(nu):
        c = d.ctrl[i]
        limited = m.actuator_ctrllimited[i] != 0
        lo = m.actuator_ctrlrange[i, 0]
        hi = m.actuator_ctrlrange[i, 1]
        up = not limited or _in_range(c, c + eps, lo, hi)
        down = (centered or not up) and (not limited or _in_range(c - eps, c, lo, hi))
        if up:
            d.ctrl[i] = c + eps
            if not _step_from(m, d, SKIP_VEL, saved, plus):
                return 1
        if down:
            d.ctrl[i] = c - eps
            if not _step_from(m, d, SKIP_VEL, saved, minus):
                return 1
        _clamped_diff(m, col, nxt, plus, minus, up, down, eps)
        B[:, i] = col
    # activations: position and velocity stages reused
    for i in range(na):
        a = d.act[i]
        d.act[i] = a + eps
        if not _step_from(m, d, SKIP_VEL, saved, plus):
            return 1
        if centered:
            d.act[i] = a - eps
            if not _step_from(m, d, SKIP_VEL, saved, minus):
                return 1
        _clamped_diff(m, col, nxt, plus, minus, True, centered, eps)
        A[:, 2 * nv + i] = col
    # velocities: position stages reused
    for i in range(nv):
        v = d.qvel[i]
        d.qvel[i] = v + eps
        if not _step_from(m, d, SKIP_POS, saved, plus):
            return 1
        if centered:
            d.qvel[i] = v - eps
            if not _step_from(m, d, SKIP_POS, saved, minus):
                return 1
        _clamped_diff(m, col, nxt, plus, minus, True, centered, eps)
        A[:, nv + i] = col
    # positions, in the tangent space
    for i in range(nv):
        dpos[i] = 1.0
        integrate_pos(m, d.qpos, dpos, eps)
        if not _step_from(m, d, SKIP_NONE, saved, plus):
            return 1
        if centered:
            integrate_pos(m, d.qpos, dpos, -eps)
            if not _step_from(m, d, SKIP_NONE, saved, minus):
                return 1
        dpos[i] = 0.0
        _clamped_diff(m, col, nxt, plus, minus, True, centered, eps)
        A[:, i] = col
    # the unperturbed step again, so that the computed fields are its own
    _step_from(m, d, SKIP_NONE, saved, nxt)
    return 0


@jit
def inverse_skip(m, d, skip, actuation, out):
    """qfrc_inverse reusing the stages before `skip` (MuJoCo's mj_inverseSkip), into out,
    less qfrc_actuator if actuation. False when the contacts or rows outgrew d."""
    if skip < SKIP_POS:
        inverse_position(m, d)
        if d.nefc_overflow[0]:
            return False
    if skip < SKIP_VEL:
        inverse_velocity(m, d)
    inverse_acceleration(m, d)
    out[:] = d.qfrc_inverse
    if actuation:
        actuator.fwd_actuation(m, d)
        for k in range(out.shape[0]):
            out[k] -= d.qfrc_actuator[k]
    return True


@jit
def inverse_fd_kernel(m, d, eps, centered, actuation, DfDq, DfDv, DfDa):
    """Jacobians of qfrc_inverse (less qfrc_actuator if actuation) with respect to qpos
    (tangent), qvel and qacc, DfDx[i, j] = d f_i / d x_j. Returns 1 on overflow, else 0."""
    nv = d.qvel.shape[0]
    qpos = d.qpos.copy()
    order = (d.bp_axis.copy(), d.bp_order.copy())
    f0 = np.empty(nv)
    fp = np.empty(nv)
    fm = np.empty(nv)
    dpos = np.zeros(nv)
    if not inverse_skip(m, d, SKIP_NONE, actuation, f0):
        return 1
    for i in range(nv):
        a = d.qacc[i]
        d.qacc[i] = a + eps
        inverse_skip(m, d, SKIP_VEL, actuation, fp)
        if centered:
            d.qacc[i] = a - eps
            inverse_skip(m, d, SKIP_VEL, actuation, fm)
        d.qacc[i] = a
        _diff_column(DfDa, i, f0, fp, fm, centered, eps)
    for i in range(nv):
        v = d.qvel[i]
        d.qvel[i] = v + eps
        inverse_skip(m, d, SKIP_POS, actuation, fp)
        if centered:
            d.qvel[i] = v - eps
            inverse_skip(m, d, SKIP_POS, actuation, fm)
        d.qvel[i] = v
        _diff_column(DfDv, i, f0, fp, fm, centered, eps)
    ok = True
    for i in range(nv):
        dpos[i] = 1.0
        for side in range(2 if centered else 1):
            integrate_pos(m, d.qpos, dpos, eps if side == 0 else -eps)
            ok = ok and inverse_skip(m, d, SKIP_NONE, actuation, fp if side == 0 else fm)
            d.qpos[:] = qpos
            _restore_order(d, order)
        dpos[i] = 0.0
        _diff_column(DfDq, i, f0, fp, fm, centered, eps)
    # the unperturbed inverse again, so that the computed fields are its own
    ok = ok and inverse_skip(m, d, SKIP_NONE, actuation, f0)
    _restore_order(d, order)
    return 0 if ok else 1


@jit
def _restore_order(d, order):
    d.bp_axis[:] = order[0]
    d.bp_order[:] = order[1]


@jit
def _diff_column(D, i, f0, fp, fm, centered, eps):
    for k in range(f0.shape[0]):
        D[k, i] = (fp[k] - fm[k]) / (2.0 * eps) if centered else (fp[k] - f0[k]) / eps


# ------------------------------------------------------------------------------------------------
# public API
# ------------------------------------------------------------------------------------------------
def _check_eps(eps):
    eps = float(eps)
    if not eps > 0.0 or not np.isfinite(eps):
        raise ValueError(f"eps must be a positive number, got {eps!r}")
    return eps


def transition_fd(m: Model, d: Data, eps: float = 1e-6, centered: bool = False):
    """Linearisation of one step by finite differences (MuJoCo's mjd_transitionFD):
    dx' = A dx + B du with x = (qpos in the tangent space, qvel, act), u = ctrl.

    Returns A (2 nv + na, 2 nv + na) and B (2 nv + na, nu). Forward differences, or centered
    ones (twice the steps, error O(eps^2) instead of O(eps)); a hard-contact model
    (Solver.LCP) is differenced centered (engine.hard_contact_grad.step_fd). The state of d (qpos, qvel, act,
    ctrl, time, warm start) is restored bitwise; its computed fields are those of the
    unperturbed step. One compiled call (two if the contacts outgrow d, which then grows).
    """
    eps = _check_eps(eps)
    if m.opt.solver == Solver.LCP:         # hard contact: differences of its own step
        from . import hard_contact, hard_contact_grad
        jac = hard_contact_grad.step_fd(m, d, hard_contact.options(m), eps,
                                        warm=hard_contact.warm_set(d))
        return jac.A, jac.B
    warmup.join()
    ndx = 2 * m.nv + m.na
    A = np.zeros((ndx, ndx))
    B = np.zeros((ndx, m.nu))
    while transition_fd_kernel(m._struct, d._struct, eps, bool(centered), A, B):
        _grow(m, d)
    return A, B


def inverse_fd(m: Model, d: Data, eps: float = 1e-6, actuation: bool = False,
               centered: bool = False):
    """Jacobians of the inverse dynamics by finite differences (MuJoCo's mjd_inverseFD):
    DfDq, DfDv, DfDa with DfDx[i, j] = d qfrc_inverse_i / d x_j at the state and acceleration
    of d (qpos in the tangent space). MuJoCo writes the transposes. With actuation=True the
    force differentiated is qfrc_inverse - qfrc_actuator. qpos, qvel and qacc are left as
    they were; the computed fields are those of the unperturbed inverse."""
    warmup.join()
    check_invertible(m)
    eps = _check_eps(eps)
    nv = m.nv
    DfDq = np.zeros((nv, nv))
    DfDv = np.zeros((nv, nv))
    DfDa = np.zeros((nv, nv))
    while inverse_fd_kernel(m._struct, d._struct, eps, bool(centered), bool(actuation),
                            DfDq, DfDv, DfDa):
        _grow(m, d)
    return DfDq, DfDv, DfDa

"""The simulation pipeline and the integrators; the public entry points forward, step, reset.

forward(m, d) and step(m, d, n) each enter compiled code once: the stage calls below are all
compiled kernels, so a step costs no Python work. Stage order follows MuJoCo's mj_forward.

Implicit damping (paper eq. 3): with the semi-implicit integrator the velocity update is
M (v' - v) = h (... - B v'), i.e. (M + h B) (v' - v) = h (... - B v). The stage factor_inertia
therefore factors M + h B (D = armature + B h, armature already in qM) and qacc is
(v' - v) / h of the step, which is also what inverse dynamics reads.

The implicit integrators (MuJoCo's) instead solve the constraints with M and then take the step
(M - h qDeriv) (v' - v) / h = qfrc_smooth + qfrc_constraint, qDeriv = d qfrc_smooth / d qvel
(engine/derivative.py); d.qacc stays the forward's acceleration, as in MuJoCo.
"""
import math
import zlib
from types import SimpleNamespace

import numpy as np

from . import (actuator, collision_driver, constraint, derivative, passive, sensor, smooth, solver,
               solver_sparse, warmup)
from .collision_driver import collision
from .enums import DisableBit, Integrator, JointType, Solver, Warning
from . import jit as _jit
from .jit import calls_stages, inlined, jit, machine_code
from .jit import on_disk as _on_disk
from .jit import variant as jit_variant
from .math import cross3, first_bad, norm3, quat_integrate, warn
from .sensor import sensor_acc, sensor_pos, sensor_vel
from .solver import condense_hard, hard_impulses
from .types import Data, Model, check_data, positive_int

FREE = int(JointType.FREE)
BALL = int(JointType.BALL)
NO_DAMPER = int(DisableBit.PASSIVE | DisableBit.DAMPER | DisableBit.EULERDAMP)


# ------------------------------------------------------------------------------------------------
# stages
# ------------------------------------------------------------------------------------------------
@jit
def implicit_damping(m):
    """True when the step folds joint damping into the inertia (semi-implicit integrator)."""
    if m.opt_integrator[0] != Integrator.SEMIIMPLICIT or m.opt_disableflags[0] & NO_DAMPER:
        return False
    for i in range(m.dof_damping.shape[0]):
        if m.dof_damping[i] > 0.0:
            return True
    return False


@jit
def factor_inertia(m, d):
    """qLD, qLDiagInv: factor of M, or of M + h B with implicit damping (paper eq. 3)."""
    d.qLD[:] = d.qM
    if implicit_damping(m):
        h = m.opt_timestep[0]
        for i in range(m.dof_damping.shape[0]):
            d.qLD[m.dof_Madr[i]] += h * m.dof_damping[i]
    smooth.factor_m(m, d.qLD, d.qLDiagInv)


@calls_stages
def fwd_position(m, d):
    """Position-dependent stages: kinematics, com, cameras, tendons, inertia, transmission."""
    smooth.kinematics(m, d)
    smooth.com_pos(m, d)
    smooth.camlight(m, d)
    smooth.tendon(m, d)
    collision(m, d)  # ncon = 0 when CONSTRAINT or CONTACT is disabled
    smooth.crb(m, d)
    factor_inertia(m, d)
    constraint.make_constraint(m, d)
    actuator.transmission(m, d)


@calls_stages
def fwd_velocity(m, d):
    """Velocity-dependent stages: tendon/actuator velocities, cvel, passive forces, qfrc_bias."""
    smooth.tendon_actuator_velocity(m, d)
    smooth.com_vel(m, d)
    passive.passive(m, d)
    constraint.reference(m, d)
    gravity_on = not m.opt_disableflags[0] & DisableBit.GRAVITY
    smooth.rne(m, d, gravity_on, False, d.qfrc_bias)


@jit
def fwd_acceleration(m, d):
    """qfrc_smooth = passive - bias + applied + actuator + J' xfrc_applied; qacc_smooth."""
    nv = d.qvel.shape[0]
    for i in range(nv):
        d.qfrc_smooth[i] = (d.qfrc_passive[i] - d.qfrc_bias[i] + d.qfrc_applied[i]
                            + d.qfrc_actuator[i])
    for b in range(1, m.body_parentid.shape[0]):
        f = (d.xfrc_applied[b, 0], d.xfrc_applied[b, 1], d.xfrc_applied[b, 2])
        t = (d.xfrc_applied[b, 3], d.xfrc_applied[b, 4], d.xfrc_applied[b, 5])
        if f[0] != 0.0 or f[1] != 0.0 or f[2] != 0.0 or t[0] != 0.0 or t[1] != 0.0 or t[2] != 0.0:
            smooth.apply_ft(m, d, f, t, (d.xipos[b, 0], d.xipos[b, 1], d.xipos[b, 2]), b,
                            d.qfrc_smooth, 1.0)
    d.qacc_smooth[:] = d.qfrc_smooth
    smooth.solve_m(m, d.qLD, d.qLDiagInv, d.qacc_smooth)


@calls_stages
def fwd_constraint(m, d):
    """Impulses of the constraint rows (paper eq. 6-11): efc_impulse, efc_force, qfrc_constraint,
    qacc = (v' - v) / h with v' = v^ + M^-1 J' f, v^ = v + h qacc_smooth."""
    nv = d.qvel.shape[0]
    nefc = d.nefc[0]
    d.qfrc_constraint[:] = 0.0
    d.solver_niter[0] = 0
    d.solver_residual[0] = 0.0
    if nefc == 0:
        d.qacc[:] = d.qacc_smooth
        d.warm_nefc[0] = 0
        d.warm_ncon[0] = 0
        return
    h = m.opt_timestep[0]
    vhat = d.scratch_nv[3]
    vnext = d.scratch_nv[4]
    for k in range(nv):
        vhat[k] = d.qvel[k] + h * d.qacc_smooth[k]
    # b = v- - v* with v- = J v^ (eq. 8, 11)
    for i in range(nefc):
        d.efc_b[i] = constraint.row_dot(d, i, d.efc_J, vhat) - d.efc_vstar[i]
    # warm start from the previous step's acceleration: its impulses (Theorem 4) for PGS, its
    # velocity for Newton; kept only if better than the cold start (zero impulse, v')
    f = d.efc_impulse
    warm = not m.opt_disableflags[0] & DisableBit.WARMSTART
    for k in range(nv):
        vnext[k] = d.qvel[k] + h * d.qacc_warmstart[k]
    niter, residual = solve(m, d, f, vhat, vnext, warm)
    d.solver_niter[0] = niter
    d.solver_residual[0] = residual
    solver.save_warmstart(d, f)
    for i in range(nefc):
        d.efc_force[i] = f[i] / h
        constraint.row_axpy(d, i, d.efc_J, d.efc_force[i], d.qfrc_constraint)
    for k in range(nv):
        d.qacc[k] = (vnext[k] - d.qvel[k]) / h


@inlined
def _solve_newton(m, d, f, vhat, vnext, warm):
    """Newton's method on the primal (then noslip if asked): f, vnext; returns (niter,
    residual)."""
    if d.dense_M.shape[0] != d.qvel.shape[0]:
        # sparse rows (m.opt.jacobian): the Hessian factored island by island
        niter, residual = solver_sparse.solve_newton(m, d, f, vhat, vnext, warm,
                                                     implicit_damping(m))
        if m.opt_noslip_iterations[0] > 0:
            solver.compute_A(m, d, True)
            niter += _noslip(m, d, f, vhat, vnext)
        return niter, residual
    _dense_inertia(m, d, d.dense_M)
    if warm:
        # "not <=": a NaN cost (a bad warm start) falls back to the cold start too
        if not (solver.primal_cost(d, vnext, vhat, d.dense_M, f)
                <= solver.primal_cost(d, vhat, vhat, d.dense_M, f)):
            vnext[:] = vhat
    else:
        vnext[:] = vhat
    niter, residual = solver.newton(m, d, vnext, vhat, d.dense_M, f, m.opt_iterations[0],
                                    m.opt_tolerance[0])
    if m.opt_noslip_iterations[0] > 0:
        # the noslip sweeps work on impulses, as PGS: A's blocks, hard rows eliminated
        solver.compute_A(m, d, True)
        niter += _noslip(m, d, f, vhat, vnext)
    return niter, residual


@inlined
def _solve_pgs(m, d, f, vhat, vnext, warm):
    """PGS on the dual, hard equality rows eliminated (then noslip if asked): f, vnext; returns
    (niter, residual)."""
    nv = d.qvel.shape[0]
    nefc = d.nefc[0]
    # hard equality rows: eliminated from the problem, v^ then satisfies them (section II.C)
    nhard = solver.count_hard(d)
    noslip = m.opt_noslip_iterations[0] > 0
    solver.compute_A(m, d, nhard > 0 or noslip)    # (both read M^-1 J')
    vsmooth = d.scratch_nv[2]
    if nhard > 0:
        _dense_inertia(m, d, d.dense_M)
        vsmooth[:] = vhat
        condense_hard(m, d, vhat, d.dense_M)
    f[:nefc] = 0.0
    cost = 0.0                            # the dual cost of f
    if warm:
        solver.load_warmstart(d, f)
        warm_cost = solver.dual_cost(d, f)
        if warm_cost <= 0.0:
            cost = warm_cost
        else:
            f[:nefc] = 0.0
    niter, residual = solver.pgs_from(m, d, f, m.opt_iterations[0], m.opt_tolerance[0], cost)
    if noslip:
        niter += _noslip(m, d, f, vhat, vnext)
    else:
        # v' = v^ + M^-1 J' f, the impulse velocity that the sweeps kept current
        for k in range(nv):
            vnext[k] = vhat[k] + d.solver_w[k]
        if nhard > 0:
            hard_impulses(d, f, vnext, vsmooth, d.dense_M)
    return niter, residual


@inlined
def solve(m, d, f, vhat, vnext, warm):
    """The impulses f and the next velocity vnext with m.opt_solver: (niter, residual). A
    lean fwd_constraint binds ``solve`` to one solver (see kernels())."""
    if m.opt_solver[0] == Solver.NEWTON:
        return _solve_newton(m, d, f, vhat, vnext, warm)
    return _solve_pgs(m, d, f, vhat, vnext, warm)


@jit
def _noslip(m, d, f, vhat, vnext):
    """MuJoCo's noslip post-processing (solver.noslip) of the solver's impulses f: efc_A and
    efc_MinvJT must be current; hard rows are eliminated as PGS eliminates them (vhat is
    condensed here if PGS did not already) and their impulses recovered after. Writes
    vnext = vhat + M^-1 J' f; returns the number of sweeps (added to solver_niter, as MuJoCo)."""
    nv = d.qvel.shape[0]
    vsmooth = d.scratch_nv[2]
    nhard = solver.count_hard(d)
    if nhard > 0:
        if m.opt_solver[0] == Solver.NEWTON:
            _dense_inertia(m, d, d.dense_M)
            vsmooth[:] = vhat
            condense_hard(m, d, vhat, d.dense_M)
        for i in range(d.nefc[0]):
            if d.efc_hard[i]:
                f[i] = 0.0
    w = d.solver_w
    solver.impulse_velocity(d, f, w)
    sweeps = solver.noslip(m, d, f, w, m.opt_noslip_iterations[0], m.opt_noslip_tolerance[0])
    for k in range(nv):
        vnext[k] = vhat[k] + w[k]
    if nhard > 0:
        hard_impulses(d, f, vnext, vsmooth, d.dense_M)
    return sweeps


@jit
def _without_noslip(m, d, f, vhat, vnext):
    """In place of _noslip in the kernels of a model without noslip iterations (kernels())."""
    return 0


@jit
def _no_condense_hard(m, d, vhat, Mdense):
    """In place of condense_hard in the kernels of a model without hard equality constraints
    (kernels()): no hard rows to eliminate."""
    return 0


@jit
def _no_hard_impulses(d, f, vnext, vhat, Mdense):
    """In place of hard_impulses in the kernels of a model without hard equality constraints."""
    return


@jit
def _no_stage(m, d):
    """In place of a stage m never runs in the kernels of m: the equality rows of a model
    without equality constraints, exact stabilization when its option is off (kernels())."""
    return


@jit
def _no_fluid_geom(m, d, body, g):
    """In place of passive.ellipsoid_fluid in the kernels of m when the medium has neither
    density nor viscosity."""
    return


@jit
def _no_fluid_body(m, d, body):
    """In place of passive.inertia_box_fluid, likewise."""
    return


@jit
def _dense_inertia(m, d, M):
    """Dense inertia of the step: M, plus h B with implicit damping (as factored in qLD)."""
    M[:, :] = 0.0
    for i in range(d.qvel.shape[0]):
        adr = m.dof_Madr[i]
        j = i
        while j >= 0:
            M[i, j] = d.qM[adr]
            M[j, i] = d.qM[adr]
            j = m.dof_parentid[j]
            adr += 1
    if implicit_damping(m):
        for i in range(d.qvel.shape[0]):
            M[i, i] += m.opt_timestep[0] * m.dof_damping[i]


@inlined
def forward_skip(m, d, skipsensor):
    """The whole forward dynamics, with the sensors of each stage unless skipsensor
    (MuJoCo's mj_forwardSkip). Compiled into its callers (the step and forward kernels, the
    multi-stage integrators): a kernel of its own would optimize and generate the machine code
    of the whole pipeline once more (5 s of CPU time, benchmarks/cold_start.py)."""
    fwd_position(m, d)
    if d.nefc_overflow[0]:
        # contacts or rows did not fit: the caller grows d and runs it again; stopping here
        # leaves the warm start untouched, so a step does not depend on the capacities of d
        return
    if not skipsensor:
        sensor_pos(m, d)
    fwd_velocity(m, d)
    # MuJoCo fills d.energy only with its ENERGY enable flag; here always, for it costs
    # O(nbody + nM), 1-2% of a forward (the humanoid lying down)
    energy_kernel(m, d)
    if not skipsensor:
        sensor_vel(m, d)
    actuator.fwd_actuation(m, d)
    fwd_acceleration(m, d)
    fwd_constraint(m, d)
    if not skipsensor:
        sensor_acc(m, d, d.qacc, implicit_damping(m))


@calls_stages
def forward_kernel(m, d):
    """The whole forward dynamics with the sensors (MuJoCo's mj_forward)."""
    forward_skip(m, d, False)


# ------------------------------------------------------------------------------------------------
# integration
# ------------------------------------------------------------------------------------------------
@jit
def integrate_pos(m, qpos, qvel, h):
    """qpos <- qpos (+) h qvel, rotating quaternions by the local angular velocity."""
    for j in range(m.jnt_type.shape[0]):
        pa = m.jnt_qposadr[j]
        da = m.jnt_dofadr[j]
        t = m.jnt_type[j]
        if t == FREE:
            for c in range(3):
                qpos[pa + c] += h * qvel[da + c]
            pa += 3
            da += 3
        if t == FREE or t == BALL:
            q = quat_integrate((qpos[pa], qpos[pa + 1], qpos[pa + 2], qpos[pa + 3]),
                               (qvel[da], qvel[da + 1], qvel[da + 2]), h)
            for c in range(4):
                qpos[pa + c] = q[c]
        else:
            qpos[pa] += h * qvel[da]


@jit
def advance(m, d, act_dot, qacc, qvel, h):
    """act, qvel, qpos and time one step ahead; qpos moves with qvel, or with the new d.qvel."""
    if not m.opt_disableflags[0] & DisableBit.ACTUATION:
        for i in range(m.actuator_actadr.shape[0]):
            adr = m.actuator_actadr[i]
            for j in range(adr, adr + m.actuator_actnum[i]):
                d.act[j] = actuator.next_activation(m, i, d.act[j], act_dot[j], h)
    for i in range(d.qvel.shape[0]):
        d.qvel[i] += h * qacc[i]
    integrate_pos(m, d.qpos, qvel, h)
    d.time[0] += h
    save_qacc_warmstart(d)


@jit
def save_qacc_warmstart(d):
    """qacc_warmstart = qacc for the next step's solver; zero if qacc is bad (never kept)."""
    if first_bad(d.qacc) >= 0:
        d.qacc_warmstart[:] = 0.0
    else:
        d.qacc_warmstart[:] = d.qacc


@jit
def euler(m, d):
    """Semi-implicit Euler: v' = v + h qacc, then q' = q (+) h v' (qacc already includes B h)."""
    advance(m, d, d.act_dot, d.qacc, d.qvel, m.opt_timestep[0])


@jit
def explicit_euler(m, d):
    """Explicit Euler: q' = q (+) h v, v' = v + h qacc."""
    d.qvel_save[:] = d.qvel
    advance(m, d, d.act_dot, d.qacc, d.qvel_save, m.opt_timestep[0])


@jit
def implicit(m, d):
    """Implicit in velocity (MuJoCo's mj_implicit): (M - h qDeriv) qacc_implicit = qfrc_smooth +
    qfrc_constraint, v' = v + h qacc_implicit, q' = q (+) h v'. IMPLICIT: qDeriv with the RNE
    (Coriolis and centrifugal) derivative, a sparse LU of the non-symmetric matrix (qLU).
    IMPLICITFAST: qDeriv without it, symmetric; its lower triangle makes qH, factored as M is,
    except for standalone free bodies, whose 6 x 6 block keeps their gyroscopic derivative and
    is solved by LU (MuJoCo's mjd_freeMhat)."""
    h = m.opt_timestep[0]
    nv = d.qvel.shape[0]
    fast = m.opt_integrator[0] == Integrator.IMPLICITFAST
    derivative.smooth_vel(m, d, not fast)
    qacc = d.qacc_implicit
    for i in range(nv):
        qacc[i] = d.qfrc_smooth[i] + d.qfrc_constraint[i]
    if not fast:
        # qLU = M - h qDeriv: M(i, j) = M(j, i) is stored once, in the row of the descendant
        for i in range(nv):
            a = m.D_rowadr[i]
            for adr in range(a, a + m.D_rownnz[i]):
                d.qLU[adr] = _inertia(m, d, i, m.D_colind[adr]) - h * d.qDeriv[adr]
        derivative.factor_lu(m, d.qLU)
        derivative.solve_lu(m, d.qLU, qacc)
    else:
        # qH = M - h qDeriv in the layout of qM (row i: i, then its ancestors); free bodies: M
        for i in range(nv):
            free = m.body_isfree[m.dof_bodyid[i]]
            adr = m.dof_Madr[i]
            j = i
            while j >= 0:
                d.qH[adr] = d.qM[adr]
                if not free:
                    d.qH[adr] -= h * d.qDeriv[derivative.entry_adr(m, i, j)]
                j = m.dof_parentid[j]
                adr += 1
        smooth.factor_m(m, d.qH, d.qHDiagInv)
        smooth.solve_m(m, d.qH, d.qHDiagInv, qacc)
        for b in range(1, m.body_parentid.shape[0]):
            if m.body_isfree[b]:
                _free_body_implicit(m, d, b, h)
    advance(m, d, d.act_dot, qacc, d.qvel, h)


@jit
def _free_body_matrix(m, d, b, h):
    """implicit_free[:, :6] = M - h qDeriv + h d qfrc_bias / d qvel over the dofs of
    standalone free body b (qDeriv without the bias term: IMPLICITFAST)."""
    adr = m.body_dofadr[b]
    A = d.implicit_free
    for r in range(6):
        for c in range(6):
            A[r, c] = _inertia(m, d, adr + r, adr + c)
            A[r, c] -= h * d.qDeriv[derivative.entry_adr(m, adr + r, adr + c)]
    derivative.rne_vel_block(m, d, adr, 6, A, h)


@jit
def _free_body_implicit(m, d, b, h):
    """qacc_implicit of standalone free body b's dofs from its own 6 x 6 system
    (_free_body_matrix) x = qfrc_smooth + qfrc_constraint (the block is decoupled from the
    other trees); kept from the symmetric solve if the block is singular."""
    adr = m.body_dofadr[b]
    _free_body_matrix(m, d, b, h)
    A = d.implicit_free
    for r in range(6):
        A[r, 6] = d.qfrc_smooth[adr + r] + d.qfrc_constraint[adr + r]
    x = d.scratch_nv[0]
    if solver.solve_small(A, 6, x):
        for r in range(6):
            d.qacc_implicit[adr + r] = x[r]


@jit
def _inertia(m, d, i, j):
    """M(i, j) for dofs i, j on one kinematic chain (qM stores it in the descendant's row)."""
    if j > i:
        i, j = j, i
    return d.qM[m.dof_Madr[i] + m.D_diag[i] - m.D_diag[j]]


@jit
def implicit_mul(m, d, x, out):
    """out = (M - h qDeriv) x with the matrix of the implicit step (the integrator's: qDeriv of
    smooth_vel for IMPLICIT; for IMPLICITFAST its lower triangle made symmetric, and the free
    bodies' own blocks), from qM and qDeriv as they are (MuJoCo's mj_discreteAcc product)."""
    h = m.opt_timestep[0]
    nv = x.shape[0]
    smooth.mul_m(m, d.qM, x, out)
    if m.opt_integrator[0] == Integrator.IMPLICIT:
        for i in range(nv):
            a = m.D_rowadr[i]
            for adr in range(a, a + m.D_rownnz[i]):
                out[i] -= h * d.qDeriv[adr] * x[m.D_colind[adr]]
        return
    for i in range(nv):
        if m.body_isfree[m.dof_bodyid[i]]:
            continue
        j = i
        while j >= 0:
            q = h * d.qDeriv[derivative.entry_adr(m, i, j)]
            out[i] -= q * x[j]
            if j != i:
                out[j] -= q * x[i]
            j = m.dof_parentid[j]
    for b in range(1, m.body_parentid.shape[0]):
        if m.body_isfree[b]:
            adr = m.body_dofadr[b]
            _free_body_matrix(m, d, b, h)
            for r in range(6):
                s = 0.0
                for c in range(6):
                    s += d.implicit_free[r, c] * x[adr + c]
                out[adr + r] = s


@jit
def _save_state(d):
    d.qpos_save[:] = d.qpos
    d.qvel_save[:] = d.qvel
    d.act_save[:] = d.act


@jit
def _restore_state(d, time):
    d.qpos[:] = d.qpos_save
    d.qvel[:] = d.qvel_save
    d.act[:] = d.act_save
    d.time[0] = time


@inlined
def midpoint(m, d):
    """Explicit midpoint: derivatives evaluated at x + h/2 f(x) advance x by a full step."""
    h = m.opt_timestep[0]
    time = d.time[0]
    _save_state(d)
    for i in range(d.act.shape[0]):
        d.act[i] += 0.5 * h * d.act_dot[i]
    integrate_pos(m, d.qpos, d.qvel, 0.5 * h)
    for i in range(d.qvel.shape[0]):
        d.rk_qvel[0, i] = d.qvel[i] + 0.5 * h * d.qacc[i]
    d.qvel[:] = d.rk_qvel[0]
    d.time[0] = time + 0.5 * h
    forward_skip(m, d, True)
    overflow = d.nefc_overflow[0]
    _restore_state(d, time)
    advance(m, d, d.act_dot, d.qacc, d.rk_qvel[0], h)
    d.nefc_overflow[0] = overflow


RK4_A = (0.5, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0)
RK4_B = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0)


@jit
def _dexpinv(u, v):
    """Inverse of the derivative of the exponential map of SO(3), for local angular velocities:
    v + u x v / 2 + beta u x (u x v), beta = (1 - (t/2) cot(t/2)) / t^2, t = |u|."""
    t = norm3(u)
    if t < 1e-4:
        beta = 1.0 / 12.0 + t * t / 720.0
    else:
        beta = (1.0 - 0.5 * t / math.tan(0.5 * t)) / (t * t)
    c = cross3(u, v)
    cc = cross3(u, c)
    return (v[0] + 0.5 * c[0] + beta * cc[0], v[1] + 0.5 * c[1] + beta * cc[1],
            v[2] + 0.5 * c[2] + beta * cc[2])


@jit
def _rotation_stage_rates(m, k, dvel, h):
    """Munthe-Kaas correction of the stage rates of ball and free joint rotations: the stage
    orientation is exp(h dvel) q0, so its angular velocity maps back through dexp^-1."""
    for j in range(m.jnt_type.shape[0]):
        t = m.jnt_type[j]
        if t != FREE and t != BALL:
            continue
        da = m.jnt_dofadr[j] + (3 if t == FREE else 0)
        r = _dexpinv((h * dvel[da], h * dvel[da + 1], h * dvel[da + 2]),
                     (k[da], k[da + 1], k[da + 2]))
        k[da], k[da + 1], k[da + 2] = r[0], r[1], r[2]


@inlined
def runge_kutta4(m, d):
    """4th-order Runge-Kutta on (qpos, qvel, act) with MuJoCo's tableau; quaternion joints are
    integrated on the rotation group (Runge-Kutta-Munthe-Kaas), as MuJoCo does."""
    h = m.opt_timestep[0]
    time = d.time[0]
    nv = d.qvel.shape[0]
    na = d.act.shape[0]
    _save_state(d)
    d.rk_qvel[0, :] = d.qvel
    d.rk_qacc[0, :] = d.qacc
    d.rk_act_dot[0, :] = d.act_dot
    dvel = d.scratch_nv[0]
    dacc = d.scratch_nv[1]
    overflow = 0
    for i in range(1, 4):
        # dX = sum_j A(i, j) F(j); X(i) = X(0) (+) h dX
        dvel[:] = 0.0
        dacc[:] = 0.0
        c = 0.0
        for j in range(i):
            a = RK4_A[(i - 1) * 3 + j]
            c += a
            for k in range(nv):
                dvel[k] += a * d.rk_qvel[j, k]
                dacc[k] += a * d.rk_qacc[j, k]
        d.qpos[:] = d.qpos_save
        integrate_pos(m, d.qpos, dvel, h)
        for k in range(nv):
            d.qvel[k] = d.qvel_save[k] + h * dacc[k]
        for k in range(na):
            s = 0.0
            for j in range(i):
                s += RK4_A[(i - 1) * 3 + j] * d.rk_act_dot[j, k]
            d.act[k] = d.act_save[k] + h * s
        d.time[0] = time + c * h
        forward_skip(m, d, True)
        overflow |= d.nefc_overflow[0]
        d.rk_qvel[i, :] = d.qvel
        _rotation_stage_rates(m, d.rk_qvel[i], dvel, h)
        d.rk_qacc[i, :] = d.qacc
        d.rk_act_dot[i, :] = d.act_dot
    dvel[:] = 0.0
    dacc[:] = 0.0
    for j in range(4):
        for k in range(nv):
            dvel[k] += RK4_B[j] * d.rk_qvel[j, k]
            dacc[k] += RK4_B[j] * d.rk_qacc[j, k]
    for k in range(na):
        s = 0.0
        for j in range(4):
            s += RK4_B[j] * d.rk_act_dot[j, k]
        d.act_dot[k] = s
    _restore_state(d, time)
    advance(m, d, d.act_dot, dacc, dvel, h)
    d.nefc_overflow[0] = overflow


@inlined
def interleave(m, d):
    """The manual's interleaved integrator: RK4 on the smooth dynamics (constraints off), then
    the impulses once, at the configuration of the start of the step, with v^ the velocity the
    smooth step reached. The impulse acts as a constant force over the step, so its velocity
    change dv moves the positions by h dv / 2 (a body at rest stays at rest)."""
    h = m.opt_timestep[0]
    time = d.time[0]
    nv = d.qvel.shape[0]
    flags = m.opt_disableflags[0]
    q0 = d.scratch_nv[5]                     # v at the start (3 and 4 belong to fwd_constraint)
    # smooth step (the forward before this call already holds the start-of-step quantities,
    # but with constraints: redo it without)
    m.opt_disableflags[0] = flags | DisableBit.CONSTRAINT
    forward_skip(m, d, True)
    runge_kutta4(m, d)
    m.opt_disableflags[0] = flags
    # remember the smooth result, go back to the start of the step (act keeps its RK4 value)
    d.rk_qvel[0, :] = d.qvel                 # smooth velocity v^
    d.qpos_stage[:] = d.qpos
    d.act_stage[:] = d.act
    d.qpos[:] = d.qpos_save
    q0[:] = d.qvel_save
    d.qvel[:] = q0
    d.time[0] = time
    d.act[:] = d.act_save
    # impulses at the start configuration with v^ = the smooth step's velocity
    fwd_position(m, d)
    fwd_velocity(m, d)
    actuator.fwd_actuation(m, d)
    fwd_acceleration(m, d)
    for k in range(nv):
        d.qacc_smooth[k] = (d.rk_qvel[0, k] - q0[k]) / h
    fwd_constraint(m, d)
    # v' = v + h qacc; q' = q_smooth (+) h (v' - v^) / 2
    for k in range(nv):
        d.rk_qvel[1, k] = d.qvel[k] + h * d.qacc[k] - d.rk_qvel[0, k]
        d.qvel[k] += h * d.qacc[k]
    d.qpos[:] = d.qpos_stage
    integrate_pos(m, d.qpos, d.rk_qvel[1], 0.5 * h)
    d.act[:] = d.act_stage
    d.time[0] = time + h
    save_qacc_warmstart(d)


# ------------------------------------------------------------------------------------------------
# divergence and reset
# ------------------------------------------------------------------------------------------------
@jit
def reset_state(m, d):
    """State and inputs to the model's defaults (qpos0, zero velocity, mocap bodies at rest);
    the warm start forgotten."""
    d.time[0] = 0.0
    d.qpos[:] = m.qpos0
    d.qvel[:] = 0.0
    d.act[:] = 0.0
    d.act_dot[:] = 0.0
    d.ctrl[:] = 0.0
    d.qacc[:] = 0.0
    d.qfrc_applied[:] = 0.0
    d.xfrc_applied[:, :] = 0.0
    for b in range(m.body_mocapid.shape[0]):
        k = m.body_mocapid[b]
        if k >= 0:
            d.mocap_pos[k, :] = m.body_pos[b]
            d.mocap_quat[k, :] = m.body_quat[b]
    solver.clear_warmstart(d)


@jit
def check_state(m, d):
    """A bad qpos, qvel or act (NaN, inf or beyond MAXVAL) or a non-finite time is counted in
    d.warning (BADQPOS, BADQVEL, BADACT, BADTIME, with the index at fault) and the state reset
    (MuJoCo's mj_checkPos and mj_checkVel with auto-reset)."""
    i = first_bad(d.qpos)
    if i >= 0:
        warn(d, Warning.BADQPOS, i)
        reset_state(m, d)
    i = first_bad(d.qvel)
    if i >= 0:
        warn(d, Warning.BADQVEL, i)
        reset_state(m, d)
    i = first_bad(d.act)
    if i >= 0:
        warn(d, Warning.BADACT, i)
        reset_state(m, d)
    if not math.isfinite(d.time[0]):
        warn(d, Warning.BADTIME, 0)
        reset_state(m, d)


@jit
def reset_history(d):
    """Forget the earlier steps, as a fresh make_data: the warm start (warm_nefc, warm_ncon,
    qacc_warmstart), the broadphase order (bp_order, bp_axis) and the warnings."""
    solver.clear_warmstart(d)
    d.bp_order[:] = 0
    d.bp_axis[0] = 0
    d.warning[:] = 0
    d.warning_info[:] = 0


@jit
def _bad_acceleration(d):
    """The first dof whose qacc or qacc_smooth is bad, or 0 when a constraint force is bad (a
    solver fed with NaN may return a finite qacc from its warm start); -1 if all are good."""
    i = first_bad(d.qacc)
    if i < 0:
        i = first_bad(d.qacc_smooth)
    if i < 0 and first_bad(d.efc_force[:d.nefc[0]]) >= 0:
        i = 0
    return i


@inlined
def integrate(m, d):
    """One step of m.opt_integrator from the state and the forward at its start. Compiled into
    the step kernel, its one caller (as a kernel of its own it would compile the pipeline of
    the multi-stage integrators once more)."""
    integ = m.opt_integrator[0]
    if integ == Integrator.RK4:
        runge_kutta4(m, d)
    elif integ == Integrator.INTERLEAVE:
        interleave(m, d)
    elif integ == Integrator.EXPLICIT:
        explicit_euler(m, d)
    elif integ == Integrator.MIDPOINT:
        midpoint(m, d)
    elif integ == Integrator.IMPLICIT or integ == Integrator.IMPLICITFAST:
        implicit(m, d)
    else:
        euler(m, d)


@calls_stages
def step_kernel(m, d, n):
    """n steps: check the state, forward, check qacc, integrate. Bad values are counted in
    d.warning and the state is reset (MuJoCo's BADQPOS/BADQVEL/BADQACC with auto-reset; also
    BADACT and BADTIME); if the reset state is bad too (a NaN model parameter), the step is not
    integrated and the state stays at the reset. Stops when the contacts or constraint rows
    did not fit (d.nefc_overflow), in the first forward or in a stage of a multi-stage
    integrator (the step is then undone); returns the number of steps taken."""
    for k in range(n):
        check_state(m, d)
        bad = -1
        for attempt in range(2):
            if attempt == 1:
                warn(d, Warning.BADQACC, bad)
                reset_state(m, d)
            forward_skip(m, d, False)
            if d.nefc_overflow[0]:
                return k
            bad = _bad_acceleration(d)
            if bad < 0:
                break
        if bad >= 0:
            continue
        time = d.time[0]
        integrate(m, d)
        if d.nefc_overflow[0]:
            _restore_state(d, time)      # every multi-stage integrator saved the start state
            return k
    return n


@jit
def energy_kernel(m, d):
    """Potential (gravity, joint and tendon springs) and kinetic energy 0.5 v' M v: energy."""
    sensor.energy_pos(m, d)
    sensor.energy_vel(m, d)


# ------------------------------------------------------------------------------------------------
# lean kernels
# ------------------------------------------------------------------------------------------------
_INTEGRATE = {Integrator.EULER: euler, Integrator.EXPLICIT: explicit_euler,
              Integrator.RK4: runge_kutta4, Integrator.MIDPOINT: midpoint,
              Integrator.INTERLEAVE: interleave, Integrator.IMPLICIT: implicit,
              Integrator.IMPLICITFAST: implicit}
_KERNELS = {}   # lean key -> the kernels of lean_calls
_CHAINS = {}    # lean key without the integrator -> (tag, the forward chain's kernels)
_PER_INTEGRATOR = ("integrate", "step_kernel")     # the kernels of lean_calls that depend on it

# the kernels between a step and the routines that kernels() leaves out, callees first
_COLLISION_CHAIN = (collision_driver.narrowphase, collision_driver.collide_geoms,
                    collision_driver._bp_flush, collision_driver.broadphase,
                    collision_driver.collision)
_SENSOR_CHAIN = (sensor._compute_pos, sensor._compute_vel, sensor._compute_acc,
                 sensor._stage_sensors, sensor.sensor_pos, sensor.sensor_vel, sensor.sensor_acc)
_SMOOTH_CHAIN = (constraint.make_constraint, constraint.reference, passive.passive, fwd_velocity)


def kernels(m: Model):
    """(forward_kernel, step_kernel) with only what m can use compiled in: its integrator, its
    solver, noslip only if m asks for it, the elimination of hard rows only if m has hard
    equality constraints, the equality rows only if m has equality constraints, exact
    stabilization and fluid forces only when their options are on, the narrowphase routines of
    its geom types and the routines of its sensor types. The same code as the kernels that
    branch at run time (so the same results) with the branches m never takes bound to stubs
    (jit.variant), at a fraction of their compile time. Chosen at every call, so a changed
    option takes effect at once.
    The first model of a process gets its lean kernels (what a cold start compiles); a later
    model gets kernels this process has already compiled if they have all it needs (lean ones
    with more in them, or the general ones), else the general ones: a process that steps many
    models compiles the general kernels once rather than a lean variant for each. A model that
    differs from an earlier one in its integrator only gets a lean step of its own on the
    forward chain already compiled (lean_calls). A fresh process whose cache holds the
    general kernels but not the lean ones of its first model (an earlier process stepped
    several models) loads the general ones instead of compiling. With ENGINE_LEAN=0
    (engine.jit): always the general ones."""
    key = _lean_key(m)[0]
    return (_choose(m, key, "forward_kernel", forward_kernel),
            _choose(m, key, "step_kernel", step_kernel))


def _choose(m, key, name, general):
    """kernels(): the kernel called name for the lean key of m."""
    if not _jit.LEAN:
        return general
    chosen = _CHOSEN.get((key, name))
    if chosen is not None:
        return chosen
    ready = [calls[name] for k, calls in _KERNELS.items()
             if (k[0] == key[0] or name not in _PER_INTEGRATOR) and k[1] == key[1]
             and set(k[2]) <= set(key[2]) and _compiled(calls[name])]
    if _compiled(general):
        ready.append(general)
    if ready:
        chosen = ready[0]
    elif _on_disk(general) and not _on_disk(lean_calls(m)[name]):
        chosen = general                  # compiled by an earlier process: loaded, not compiled
    elif key[1:] in _CHAINS or not _KERNELS:     # (a lean chain compiled for another integrator)
        chosen = lean_calls(m)[name]
    else:
        chosen = general
    if _compiled(chosen):
        _CHOSEN[(key, name)] = chosen     # a compiled choice serves from then on
    return chosen


_CHOSEN = {}    # kernels(): (lean key, kernel name) -> the compiled kernel chosen
_LCP = int(Solver.LCP)   # (an int: numpy compares with an enum slowly)


def _compiled(kernel):
    return bool(getattr(kernel, "overloads", None))


_ENTRY = {}     # compiled kernel -> its compiled function for (Model, Data[, int])


def entry_point(kernel, *args):
    """kernel's compiled function for args, to be called past numba's dispatcher, which types
    every argument on every call (about 3 us, a tenth of the humanoid's step from Python); the
    dispatcher itself until it has compiled for these types. Every Model and every Data have
    one struct type each, so one function serves them all."""
    if any(isinstance(a, SimpleNamespace) for a in args):
        return kernel      # plain handles (a cold cache): the dispatcher runs the plain twin
    entry = _ENTRY.get(kernel)
    if entry is None:
        if not _compiled(kernel):
            return kernel
        from numba import typeof
        compiled = kernel.overloads.get(tuple(typeof(a) for a in args))
        if compiled is None:
            return kernel
        entry = _ENTRY[kernel] = machine_code(compiled.entry_point)
    return entry


def _entry_point(m, name, general, *args):
    """The entry_point of the kernel called name that _choose picks for m, kept with the model
    per options, so that a step from Python costs one lookup once it has compiled."""
    options = _options(m)
    entries = _kept(m, "_entry_points")
    entry = entries.get((options, name))
    if entry is None:
        entry = entry_point(_choose(m, _lean_key(m)[0], name, general), *args)
        if not hasattr(entry, "overloads"):        # compiled: not the dispatcher
            entries[(options, name)] = entry
    return entry


def _kept(m, name):
    """A dict kept with the model m (neither copied nor pickled with it)."""
    found = m.__dict__.get(name)
    if found is None:
        found = {}
        object.__setattr__(m, name, found)
    return found


def _options(m):
    """The options that decide which kernels serve m (_lean_key). Read at every step from
    Python: the scalar options are kept with m.opt until the next edit through it (the only
    way to change them); eq_hard is a plain editable array, read each time."""
    opt = m.opt
    options = opt._kept
    if options is None:
        options = (m.opt_integrator.item(), m.opt_solver.item(),
                   m.opt_noslip_iterations.item() > 0,
                   m.opt_stabilization.item() == constraint.EXACT,
                   m.opt_density.item() > 0.0 or m.opt_viscosity.item() > 0.0)
        object.__setattr__(opt, "_kept", options)
    eq_hard = m.eq_hard
    return options + (len(eq_hard) > 0 and bool(eq_hard.any()),)


def _lean_key(m):
    """(integrator, newton, names of the kernels bound to stubs) and the stubs for m. Found
    once per model and combination of the options it depends on (a step from Python asks for
    it every time: building it cost a third of a small model's step)."""
    options = _options(m)
    found = _kept(m, "_lean_keys")
    if options not in found:
        integrator, solver_, noslip, exact, fluid, hard = options
        # from the geom and sensor types, fixed once a model is compiled
        stubs = collision_driver.unused_narrowphase(m)
        stubs.update(sensor.unused_sensors(m))
        if not noslip:
            stubs["_noslip"] = _without_noslip
        if not hard:
            # hard rows come only from hard equalities: PGS's elimination of them left out (its
            # dense solves and pseudo-inverse are a tenth of a cold start's compile time)
            stubs.update(condense_hard=_no_condense_hard, hard_impulses=_no_hard_impulses)
        if len(m.eq_type) == 0:
            stubs["_equality_rows"] = _no_stage
        if not exact:
            stubs["exact_stabilization"] = _no_stage
        if not fluid:
            stubs.update(ellipsoid_fluid=_no_fluid_geom, inertia_box_fluid=_no_fluid_body)
        found[options] = ((integrator, solver_ == Solver.NEWTON, tuple(sorted(stubs))), stubs)
    return found[options]          # (the stubs are shared: copied by whoever changes them)


def lean_calls(m) -> dict:
    """The kernels of kernels(m) by name, with the lean variants of the kernels they call
    (collision, sensor_pos, fwd_constraint, ...; the others as they are). m needs only the
    options and the geom and sensor types. The forward chain does not depend on the
    integrator: models that differ only in it share it (compiled once), and only the
    integration and the step are compiled per integrator."""
    key, stubs = _lean_key(m)
    integrator, newton, names = key
    if key not in _KERNELS:
        if key[1:] not in _CHAINS:
            tag = "%s_%08x" % ("newton" if newton else "pgs", zlib.crc32(" ".join(names).encode()))
            calls = dict(stubs)
            chain = _COLLISION_CHAIN + _SENSOR_CHAIN + _SMOOTH_CHAIN + (
                fwd_constraint, fwd_position, forward_skip, runge_kutta4)
            for kernel in chain:
                if kernel is fwd_constraint:
                    calls["solve"] = jit_variant(_solve_newton if newton else _solve_pgs, tag,
                                                 **calls)
                lean = jit_variant(kernel, tag, **calls)
                if lean is not kernel:        # else the kernel itself, not a copy, serves
                    calls[kernel.__name__] = lean
            calls["forward_kernel"] = jit_variant(forward_kernel, tag, **calls)
            for kernel in chain:
                calls.setdefault(kernel.__name__, kernel)
            _CHAINS[key[1:]] = tag, calls
        tag, chain = _CHAINS[key[1:]]
        calls = dict(chain)
        tag = "%d%s" % (integrator, tag)
        calls["integrate"] = jit_variant(_INTEGRATE.get(integrator, euler), tag, **calls)
        calls["step_kernel"] = jit_variant(step_kernel, tag, **calls)
        _KERNELS[key] = calls
    return _KERNELS[key]


# ------------------------------------------------------------------------------------------------
# public API
# ------------------------------------------------------------------------------------------------
def make_data(m: Model) -> Data:
    """Allocate every state and scratch array of the model once, at the default state."""
    d = Data(m)            # zeroed by allocation: pages are touched on first use, not here
    reset_state(m._struct, d._struct)
    return d


def reset_data(m: Model, d: Data) -> None:
    """A clean Data, as make_data gives it: every array cleared (warm start, warnings and
    scratch included), then qpos = qpos0, mocap bodies at their model pose (MuJoCo's
    mj_resetData). The capacities keep their size."""
    check_data(m, d)
    d._arena.fill(0)                  # every array: they are views of this one buffer
    reset_state(m._struct, d._struct)


def reset_keyframe(m: Model, d: Data, key: int | str) -> None:
    """Reset, then load keyframe key, given by id or name (time, qpos, qvel, act, ctrl, mocap
    poses)."""
    k = m.key(key).id           # KeyError for an unknown name, IndexError out of range
    reset_data(m, d)
    d.time = m.key_time[k]
    d.qpos[:] = m.key_qpos[k]
    d.qvel[:] = m.key_qvel[k]
    d.act[:] = m.key_act[k]
    d.ctrl[:] = m.key_ctrl[k]
    d.mocap_pos[:] = m.key_mpos[k]
    d.mocap_quat[:] = m.key_mquat[k]


def _grow(m: Model, d: Data) -> None:
    """Double the contact and constraint-row capacities after an overflow."""
    d.grow(2 * d.nconmax, max(2 * d.njmax, 4 * 2 * d.nconmax + m.nv))


def forward(m: Model, d: Data) -> None:
    """Forward dynamics at the current state: every stage up to qacc (MuJoCo's mj_forward)."""
    check_data(m, d)
    warmup.join(m, wait=False)     # (while a cold cache compiles: plain Python, warmup)
    if m.opt_solver.item() == _LCP:
        from . import hard_contact          # hard contact: a Python-level driver of the stages
        return hard_contact.forward(m, d)
    ms, ds = m._struct, d._struct
    kernel = _entry_point(m, "forward_kernel", forward_kernel, ms, ds)
    kernel(ms, ds)
    while d.nefc_overflow[0]:
        _grow(m, d)
        kernel(ms, d._struct)


def step(m: Model, d: Data, nstep: int = 1) -> None:
    """Advance the simulation by nstep timesteps (a positive integer) with m.opt.integrator, in
    one compiled call (another only if the contacts outgrew the capacities of d, which then
    grow). On a cold cache, while the kernels compile in the background, one plain-Python call
    per step until they are ready (engine.warmup)."""
    check_data(m, d)
    n = positive_int(nstep, "nstep")
    warmup.join(m, wait=False)
    while n > 1 and warmup.interpreting():   # a cold cache: a step at a time as plain Python,
        _step(m, d, 1)                       # until the compiled kernels take over
        n -= 1
        warmup.join(m, wait=False)
    _step(m, d, n)


def _step(m: Model, d: Data, n: int) -> None:
    if m.opt_solver.item() == _LCP:
        from . import hard_contact
        return hard_contact.step(m, d, n)
    ms, ds = m._struct, d._struct
    kernel = _entry_point(m, "step_kernel", step_kernel, ms, ds, n)
    done = kernel(ms, ds, n)
    while done < n:
        _grow(m, d)                      # the contacts or rows did not fit
        done += kernel(ms, d._struct, n - done)


def energy(m: Model, d: Data) -> np.ndarray:
    """(potential, kinetic) energy at the state of the last forward (which also stores it in
    d.energy); computed again, as a copy."""
    check_data(m, d)
    energy_kernel(m._struct, d._struct)
    return d.energy.copy()


def full_inertia(m: Model, d: Data) -> np.ndarray:
    """Dense (nv, nv) joint-space inertia including armature, from the last forward."""
    check_data(m, d)
    nv = m.nv
    M = np.zeros((nv, nv))
    for i in range(nv):
        adr = m.dof_Madr[i]
        j = i
        while j >= 0:
            M[i, j] = M[j, i] = d.qM[adr]
            j = m.dof_parentid[j]
            adr += 1
    return M

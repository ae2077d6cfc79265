"""Analytical inverse dynamics (paper section III and IV).

Given (q, v) and the acceleration qacc, so that the next velocity is v' = v + h qacc, the forces
that produced the step are recovered without computing or factoring the inertia matrix:

1. The constraint rows J, R, v* are built exactly as the forward dynamics builds them
   (constraint.make_constraint and constraint.reference: eq. 24, 27, 28, 22).
2. With y = R^-1 (v* - J v') (the vector of problem (15)) the impulses are found object by
   object (Theorem 4): soft equality rows f_E = y (Theorem 2, eq. 13), friction loss
   clamp(y, -eta, eta), limits and frictionless contacts max(0, y), frictional contacts the
   projection of y on their friction cone in the metric of R (Algorithm 5), pyramid edges max(0, y).
3. The applied force follows from eq. (12):
       RNE(q, v, qacc) + D qacc = p + u + J' f / h
   with D = armature + h B_damping (the implicit damping of the semi-implicit integrator, eq. 3),
   so u = RNE + D qacc - passive - J' f / h.

The cost is O(n + m) beyond collision detection: one RNE pass and one sparse product per row.
One option departs from this: the exact-critical-damping stabilization
(m.opt.stabilization = EXACT) defines v* through the full A = J M^-1 J', so with it the
inverse, like the forward, builds and factors the inertia and solves a dense nefc x nefc system.

The implicit integrators (forward.implicit) solve the constraints with M at the forward's
acceleration a, then step with (M - h qDeriv) qacc = M a. Given the step's qacc = (v' - v) / h
the inverse recovers a = M^-1 (M - h qDeriv) qacc (MuJoCo's mj_discreteAcc), finds the impulses
at v + h a as above, and u = (M - h qDeriv) qacc + bias - passive - J' f / h. qDeriv depends on
the actuators (their velocity gains times the control or activation, their saturation), so the
inverse then reads ctrl and act as well, and it forms and factors M.
"""
import math

import numpy as np

from . import actuator, collision_driver, constraint, derivative, passive, sensor, smooth, warmup
from .constraint import CONTACT_ELLIPTIC, EQUALITY, FRICTION_DOF, FRICTION_TENDON
from .enums import DisableBit, Integrator, Stabilization
from .forward import _grow, entry_point, factor_inertia, implicit_damping, implicit_mul
from .jit import jit
from .types import Data, Model, check_data


@jit
def cone_project_alg5(y, r, mu, n, x):
    """Algorithm 5: x = argmin_{x in C} sum_k r_k (x_k - y_k)^2 for the friction cone
    C = {x_0 >= 0, x_0^2 >= sum_j x_j^2 / mu_j^2}, n = 1 + d.

    The weights r are those of eq. (22): r_j = r_F mu_j^-2 / <mu^-2>, r_0 the normal one.
    Written step by step as in the paper; solver.cone_project is the equivalent closed form.
    """
    d = n - 1
    # 1) y inside the cone: x = y
    s = 0.0
    for j in range(1, n):
        s += (y[j] / mu[j]) ** 2
    if y[0] >= 0.0 and y[0] * y[0] >= s:
        for k in range(n):
            x[k] = y[k]
        return
    # 2) no tangential component: the tip of the cone
    tangential = False
    for j in range(1, n):
        if y[j] != 0.0:
            tangential = True
    if not tangential:
        for k in range(n):
            x[k] = 0.0
        return
    # 3) r_F = <r_j>, <mu^-2>, muhat^2 = r_F / (r_0 <mu^-2>)   (22)
    rf = 0.0
    mu2 = 0.0
    for j in range(1, n):
        rf += r[j]
        mu2 += 1.0 / (mu[j] * mu[j])
    rf /= d
    mu2 /= d
    muhat2 = rf / (r[0] * mu2)
    muhat = math.sqrt(muhat2)
    # 4) yhat_k = r_k^1/2 y_k   (16)
    yh0 = math.sqrt(r[0]) * y[0]
    syh = 0.0
    for j in range(1, n):
        syh += r[j] * y[j] * y[j]
    if yh0 == 0.0:
        # 5) (20): xhat_0 = muhat / (1 + muhat^2) ||yhat_j||, xhat_j = muhat^2 / (1 + muhat^2) yhat_j
        x[0] = muhat / (1.0 + muhat2) * math.sqrt(syh) / math.sqrt(r[0])
        for j in range(1, n):
            x[j] = muhat2 / (1.0 + muhat2) * y[j]     # r_j^-1/2 (c r_j^1/2 y_j)
        return
    # 6) lambda+- = (1 -+ beta) / (1 +- muhat^2 beta), beta = (sum yhat_j^2 / (muhat^2 yhat_0^2))^1/2
    #    (19), and xhat_0 = yhat_0 / (1 + muhat^2 lambda), xhat_j = yhat_j / (1 - lambda)  (18).
    #    With (19) substituted, 1 + muhat^2 lambda+- = (1 + muhat^2) / (1 +- muhat^2 beta) and
    #    1 - lambda+- = +-beta (1 + muhat^2) / (1 +- muhat^2 beta), so that
    #        xhat_0 = (yhat_0 +- muhat^2 beta yhat_0) / (1 + muhat^2),
    #        xhat_j = (muhat^2 +- 1 / beta) / (1 + muhat^2) yhat_j,
    #    the forms used below: the same values without the cancellation and overflow of (18)
    #    when beta is very large or small.
    norm_yj = math.sqrt(syh)
    inv_beta = muhat * abs(yh0) / norm_yj
    beta_yh0 = math.copysign(norm_yj / muhat, yh0)      # beta yhat_0
    best = -1.0       # squared distance of the chosen candidate (in the hat metric)
    best_xh0 = 0.0    # chosen xhat_0, and cj with xhat_j = cj yhat_j
    best_cj = 0.0
    for sign in (1.0, -1.0):
        xh0 = (yh0 + sign * muhat2 * beta_yh0) / (1.0 + muhat2)
        cj = (muhat2 + sign * inv_beta) / (1.0 + muhat2)
        # 7) only candidates with a non-negative first component are feasible
        if xh0 < 0.0:
            continue
        dist = (xh0 - yh0) ** 2 + (cj - 1.0) ** 2 * syh
        if best < 0.0 or dist < best:
            best, best_xh0, best_cj = dist, xh0, cj
    if best < 0.0 or best > yh0 * yh0 + syh:
        # neither candidate is feasible (or the tip is closer): x = 0
        for k in range(n):
            x[k] = 0.0
        return
    # 8) invert (16): x_k = r_k^-1/2 xhat_k
    x[0] = best_xh0 / math.sqrt(r[0])
    for j in range(1, n):
        x[j] = best_cj * y[j]


@jit
def inverse_constraint(m, d, vnext):
    """efc_impulse = f*(J v') object by object (Theorem 2 and 4); efc_force = f / h and
    qfrc_constraint = J' f / h."""
    h = m.opt_timestep[0]
    nefc = d.nefc[0]
    d.qfrc_constraint[:] = 0.0
    y = np.empty(6)
    x = np.empty(6)
    i = 0
    while i < nefc:
        t = d.efc_type[i]
        n = d.contact_dim[d.efc_id[i]] if t == CONTACT_ELLIPTIC else 1
        # y = R^-1 (v* - J v')   (15)
        for k in range(n):
            y[k] = ((d.efc_vstar[i + k] - constraint.row_dot(d, i + k, d.efc_J, vnext))
                    / d.efc_R[i + k])
        if t == EQUALITY:
            x[0] = y[0]                                          # (13)
        elif t == FRICTION_DOF or t == FRICTION_TENDON:
            eta = d.efc_frictionloss[i]
            x[0] = max(-eta, min(eta, y[0]))
        elif t == CONTACT_ELLIPTIC:
            cone_project_alg5(y, d.efc_R[i:i + n], d.efc_mu[i:i + n], n, x)
        else:
            x[0] = max(0.0, y[0])          # limits, frictionless contacts, pyramid edges
        for k in range(n):
            d.efc_impulse[i + k] = x[k]
            d.efc_force[i + k] = x[k] / h
            constraint.row_axpy(d, i + k, d.efc_J, x[k] / h, d.qfrc_constraint)
        i += n


@jit
def inverse_position(m, d):
    """Position stages of the forward dynamics, without the inertia matrix: kinematics, com,
    tendons, contacts, constraint rows, transmission."""
    smooth.kinematics(m, d)
    smooth.com_pos(m, d)
    smooth.tendon(m, d)
    collision_driver.collision(m, d)
    constraint.make_constraint(m, d)
    actuator.transmission(m, d)


@jit
def inverse_velocity(m, d):
    """Velocity stages: tendon and actuator velocities, cvel, the inertia where needed,
    position sensors, passive forces, v* (eq. 24), velocity sensors."""
    smooth.tendon_actuator_velocity(m, d)
    smooth.com_vel(m, d)
    integ = m.opt_integrator[0]
    implicit = integ == Integrator.IMPLICIT or integ == Integrator.IMPLICITFAST
    # M is needed by exact B, K (A = J M^-1 J', constraint.py), kinetic-energy sensors and the
    # implicit integrators
    if m.opt_stabilization[0] == Stabilization.EXACT or implicit or m.sensor_type.shape[0] > 0:
        smooth.crb(m, d)
        factor_inertia(m, d)
    sensor.sensor_pos(m, d)
    passive.passive(m, d)
    if implicit:
        actuator.fwd_actuation(m, d)   # qDeriv's actuator terms read the forces
    constraint.reference(m, d)
    sensor.sensor_vel(m, d)


@jit
def inverse_acceleration(m, d):
    """Impulses of v' = v + h a (Theorems 2, 4), the applied force (12) and the acceleration
    sensors: efc_impulse, efc_force, qfrc_constraint, qfrc_inverse, qacc_continuous."""
    nv = d.qvel.shape[0]
    h = m.opt_timestep[0]
    integ = m.opt_integrator[0]
    implicit = integ == Integrator.IMPLICIT or integ == Integrator.IMPLICITFAST
    gravity_on = not m.opt_disableflags[0] & DisableBit.GRAVITY
    a = d.qacc_continuous
    if implicit:
        # a = M^-1 (M - h qDeriv) qacc; the step's matrix times qacc kept in qfrc_inverse
        derivative.smooth_vel(m, d, integ == Integrator.IMPLICIT)
        implicit_mul(m, d, d.qacc, d.qfrc_inverse)
        a[:] = d.qfrc_inverse
        smooth.solve_m(m, d.qLD, d.qLDiagInv, a)
    else:
        a[:] = d.qacc
    vnext = d.scratch_nv[4]
    for k in range(nv):
        vnext[k] = d.qvel[k] + h * a[k]
    inverse_constraint(m, d, vnext)
    if implicit:
        # u = (M - h qDeriv) qacc + bias - passive - J' f / h
        smooth.rne(m, d, gravity_on, False, d.qfrc_bias)
        for k in range(nv):
            d.qfrc_inverse[k] += d.qfrc_bias[k] - d.qfrc_passive[k] - d.qfrc_constraint[k]
        sensor.sensor_acc(m, d, a, False)
        return
    # (12): u = RNE(q, v, qacc) + D qacc - passive - J' f / h
    smooth.rne(m, d, gravity_on, True, d.qfrc_inverse)
    damped = implicit_damping(m)
    for k in range(nv):
        dk = m.dof_armature[k]
        if damped:
            dk += h * m.dof_damping[k]
        d.qfrc_inverse[k] += dk * d.qacc[k] - d.qfrc_passive[k] - d.qfrc_constraint[k]
    sensor.sensor_acc(m, d, d.qacc, damped)


@jit
def inverse_kernel(m, d):
    """The whole inverse dynamics (MuJoCo's mj_inverse): qfrc_inverse, efc_force, and the
    sensors of each stage (sensordata) as MuJoCo's inverse computes them."""
    inverse_position(m, d)
    inverse_velocity(m, d)
    inverse_acceleration(m, d)


def check_invertible(m: Model) -> None:
    """Raise ValueError when the model has active hard equality constraints, whose impulses
    the inverse dynamics cannot recover."""
    if (m.neq and not int(m.opt.disableflags) & (DisableBit.CONSTRAINT | DisableBit.EQUALITY)
            and np.any(np.asarray(m.eq_hard)[np.asarray(m.eq_active0) != 0])):
        hard = [i for i in range(m.neq) if m.eq_hard[i] and m.eq_active0[i]]
        raise ValueError(f"inverse dynamics is not defined with hard equality constraints "
                         f"(equality {hard} has hard=\"true\"): their impulses cannot be "
                         "recovered from the motion (paper section II.C); make them soft")


def inverse(m: Model, d: Data) -> None:
    """Inverse dynamics: from qpos, qvel, qacc write qfrc_inverse and efc_force (and
    qfrc_constraint, efc_impulse, the contacts and constraint rows).

    qfrc_inverse is the applied force of the step, qfrc_applied + qfrc_actuator + J' xfrc_applied,
    when qacc = (qvel_next - qvel) / timestep of a forward step (see API.md), with the
    SEMIIMPLICIT, EXPLICIT, IMPLICIT and IMPLICITFAST integrators (for the implicit ones ctrl
    and act are read too; qacc_continuous receives the forward's acceleration of the step).
    """
    check_data(m, d)
    warmup.join()
    check_invertible(m)
    ms, ds = m._struct, d._struct
    entry_point(inverse_kernel, ms, ds)(ms, ds)
    while d.nefc_overflow[0]:
        _grow(m, d)
        inverse_kernel(ms, d._struct)

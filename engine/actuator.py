"""Actuators: activation dynamics and forces (MuJoCo's mj_fwdActuation and activation update).

force = gain * (ctrl, or act for actuators with their own dynamics) + bias, where gain and bias
are fixed, affine in the actuator's length and velocity, or MuJoCo's muscle model: an active
force -F FL(L) FV(V) scaled by the activation, and a passive force -F FP(L), with L and V the
length and velocity normalised by the optimal length L0 = (lengthrange[1] - lengthrange[0]) /
(range[1] - range[0]) and F the peak force (or scale / actuator_acc0 when force < 0).
"""
import math

from .constraint import row_axpy
from .enums import BiasType, ConstraintType, DisableBit, DynType, GainType, TrnType, Warning
from .jit import inlined, jit
from .math import MINVAL, axpy_seg, is_bad, mat9, mulmatvec3, vec3, warn
from .smooth import apply_ft, moment_span


@jit
def next_activation(m, i, act, act_dot, h):
    """Activation after time h: exact for FILTEREXACT, Euler otherwise; clamped to actrange."""
    if m.actuator_dyntype[i] == DynType.FILTEREXACT:
        tau = max(MINVAL, m.actuator_dynprm[i, 0])
        act = act + act_dot * tau * (1.0 - math.exp(-h / tau))
    else:
        act = act + act_dot * h
    if m.actuator_actlimited[i]:
        act = min(max(act, m.actuator_actrange[i, 0]), m.actuator_actrange[i, 1])
    return act


@jit
def transmission(m, d):
    """Actuator lengths and moment arms: actuator_length actuator_moment (MuJoCo's
    mj_transmission). Runs after the constraint rows are made: a body (adhesion) transmission
    pulls along the normals of the body's contacts."""
    for i in range(m.actuator_trntype.shape[0]):
        trn = m.actuator_trntype[i]
        tid = m.actuator_trnid[i, 0]
        gear = m.actuator_gear[i, 0]
        d.actuator_moment[i, :] = 0.0
        if trn == TrnType.JOINT or trn == TrnType.JOINTINPARENT:
            # hinge and slide only (ball and free are rejected by the compiler)
            d.actuator_length[i] = d.qpos[m.jnt_qposadr[tid]] * gear
            d.actuator_moment[i, m.jnt_dofadr[tid]] = gear
        elif trn == TrnType.TENDON:
            d.actuator_length[i] = d.ten_length[tid] * gear
            for k in range(d.ten_J.shape[1]):
                d.actuator_moment[i, k] = d.ten_J[tid, k] * gear
        elif trn == TrnType.SITE:
            # wrench in the site frame mapped to joint space; length is 0 without refsite
            d.actuator_length[i] = 0.0
            smat = mat9(d.site_xmat, tid)
            force = mulmatvec3(smat, (m.actuator_gear[i, 0], m.actuator_gear[i, 1],
                                      m.actuator_gear[i, 2]))
            torque = mulmatvec3(smat, (m.actuator_gear[i, 3], m.actuator_gear[i, 4],
                                       m.actuator_gear[i, 5]))
            apply_ft(m, d, force, torque, vec3(d.site_xpos, tid), m.site_bodyid[tid],
                     d.actuator_moment[i], 1.0)
        elif trn == TrnType.BODY:
            d.actuator_length[i] = 0.0
            body_moment(m, d, tid, d.actuator_moment[i])


@jit
def body_moment(m, d, body, moment):
    """Moment of a body (adhesion) transmission: minus the mean of the normal Jacobians of the
    contacts of the body, n'(J(geom2 body) - J(geom1 body)) at the contact point, so that a
    positive force pulls the body towards what it touches. A contact with constraint rows uses
    its normal row (a pyramid's edges J_n +- mu J_t average to J_n); one within the gap (no
    rows) its normal Jacobian; the gear does not apply."""
    count = 0
    zero = (0.0, 0.0, 0.0)
    for c in range(d.ncon[0]):
        b1 = m.geom_bodyid[d.contact_geom1[c]]
        b2 = m.geom_bodyid[d.contact_geom2[c]]
        if b1 != body and b2 != body:
            continue
        count += 1
        adr = d.contact_efc_address[c]
        if adr < 0:
            n = (d.contact_frame[c, 0], d.contact_frame[c, 1], d.contact_frame[c, 2])
            p = vec3(d.contact_pos, c)
            apply_ft(m, d, n, zero, p, b2, moment, 1.0)
            apply_ft(m, d, n, zero, p, b1, moment, -1.0)
        elif d.efc_type[adr] == ConstraintType.CONTACT_PYRAMIDAL:
            nedge = 2 * (d.contact_dim[c] - 1)
            for k in range(nedge):
                row_axpy(d, adr + k, d.efc_J, 1.0 / nedge, moment)
        else:
            row_axpy(d, adr, d.efc_J, 1.0, moment)
    if count > 0:
        for k in range(moment.shape[0]):
            moment[k] *= -1.0 / count


# ------------------------------------------------------------------------------------------------
# MuJoCo's muscle model (engine_util_misc.c: mju_muscleGain, mju_muscleBias, mju_muscleDynamics);
# prm = (range[2], force, scale, lmin, lmax, vmax, fpmax, fvmax)
# ------------------------------------------------------------------------------------------------
@jit
def muscle_gain_length(length, lmin, lmax):
    """Active force-length curve FL: two pairs of half-quadratics, 0 at lmin and lmax, 1 at 1."""
    if not lmin <= length <= lmax:
        return 0.0
    a = 0.5 * (lmin + 1.0)
    b = 0.5 * (1.0 + lmax)
    if length <= a:
        x = (length - lmin) / max(MINVAL, a - lmin)
        return 0.5 * x * x
    if length <= 1.0:
        x = (1.0 - length) / max(MINVAL, 1.0 - a)
        return 1.0 - 0.5 * x * x
    if length <= b:
        x = (length - 1.0) / max(MINVAL, b - 1.0)
        return 1.0 - 0.5 * x * x
    x = (lmax - length) / max(MINVAL, lmax - b)
    return 0.5 * x * x


@jit
def muscle_scale(prm, lengthrange, acc0):
    """Peak force F (scale / acc0 when the force is given as negative) and optimal length L0."""
    force = prm[2]
    if force < 0.0:
        force = prm[3] / max(MINVAL, acc0)
    L0 = (lengthrange[1] - lengthrange[0]) / max(MINVAL, prm[1] - prm[0])
    return force, L0


@jit
def muscle_gain(length, vel, lengthrange, acc0, prm):
    """Active muscle force per unit activation: -F FL(L) FV(V), L = range[0] + (length -
    lengthrange[0]) / L0, V = vel / (L0 vmax); FV = 0 below V = -1, (V + 1)^2 up to 0, then
    rising to fvmax at V = fvmax - 1."""
    force, L0 = muscle_scale(prm, lengthrange, acc0)
    L = prm[0] + (length - lengthrange[0]) / max(MINVAL, L0)
    V = vel / max(MINVAL, L0 * prm[6])
    FL = muscle_gain_length(L, prm[4], prm[5])
    fvmax = prm[8]
    y = fvmax - 1.0
    if V <= -1.0:
        FV = 0.0
    elif V <= 0.0:
        FV = (V + 1.0) * (V + 1.0)
    elif V <= y:
        FV = fvmax - (y - V) * (y - V) / max(MINVAL, y)
    else:
        FV = fvmax
    return -force * FL * FV


@jit
def muscle_bias(length, lengthrange, acc0, prm):
    """Passive muscle force -F FP(L): 0 up to L = 1, a half-quadratic reaching fpmax / 2 at
    b = (1 + lmax) / 2, linear beyond."""
    force, L0 = muscle_scale(prm, lengthrange, acc0)
    L = prm[0] + (length - lengthrange[0]) / max(MINVAL, L0)
    b = 0.5 * (1.0 + prm[5])
    if L <= 1.0:
        return 0.0
    if L <= b:
        x = (L - 1.0) / max(MINVAL, b - 1.0)
        return -force * prm[7] * 0.5 * x * x
    x = (L - b) / max(MINVAL, b - 1.0)
    return -force * prm[7] * (0.5 + x)


@jit
def _sigmoid(x):
    """6 x^5 - 15 x^4 + 10 x^3 on [0, 1], 0 below, 1 above."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    return x * x * x * (3.0 * x * (2.0 * x - 5.0) + 10.0)


@jit
def muscle_dynamics(ctrl, act, prm):
    """act_dot = (ctrl - act) / tau, tau = tau_act (0.5 + 1.5 act) when activating,
    tau_deact / (0.5 + 1.5 act) when deactivating (Millard et al. 2013), blended over a band of
    width tausmooth around ctrl = act if tausmooth > 0; ctrl and act clamped to [0, 1]."""
    ctrl = min(max(ctrl, 0.0), 1.0)
    actclamp = min(max(act, 0.0), 1.0)
    tau_act = prm[0] * (0.5 + 1.5 * actclamp)
    tau_deact = prm[1] / (0.5 + 1.5 * actclamp)
    dctrl = ctrl - act
    if prm[2] < MINVAL:
        tau = tau_act if dctrl > 0.0 else tau_deact
    else:
        tau = tau_deact + (tau_act - tau_deact) * _sigmoid(dctrl / prm[2] + 0.5)
    return dctrl / max(MINVAL, tau)


@inlined
def clamped_ctrl(m, d, i, clamp):
    """ctrl of actuator i, clamped to its ctrlrange when limited and clamp (NaN stays NaN)."""
    c = d.ctrl[i]
    if clamp and m.actuator_ctrllimited[i]:
        if c < m.actuator_ctrlrange[i, 0]:
            c = m.actuator_ctrlrange[i, 0]
        elif c > m.actuator_ctrlrange[i, 1]:
            c = m.actuator_ctrlrange[i, 1]
    return c


@jit
def fwd_actuation(m, d):
    """act_dot, actuator_force (gain * [ctrl or act] + bias), qfrc_actuator = moment' force
    (clamped per joint to jnt_actfrcrange)."""
    nu = m.actuator_trntype.shape[0]
    nv = d.qvel.shape[0]
    d.qfrc_actuator[:] = 0.0
    d.actuator_force[:] = 0.0
    d.act_dot[:] = 0.0
    flags = m.opt_disableflags[0]
    if flags & DisableBit.ACTUATION:
        # as MuJoCo: disabled actuators have no velocity either
        d.actuator_velocity[:] = 0.0
        return
    if nu == 0:
        return
    # controls are clamped in a local copy; a bad one after clamping (NaN, inf or beyond
    # MAXVAL) counts BADCTRL and zeroes them all, d.ctrl untouched (MuJoCo's mj_fwdActuation)
    clamp = not flags & DisableBit.CLAMPCTRL
    bad = False
    for i in range(nu):
        if is_bad(clamped_ctrl(m, d, i, clamp)):
            warn(d, Warning.BADCTRL, i)
            bad = True
            break
    qfrc = d.qfrc_actuator          # read once: qfrc_actuator += moment' force in the loop
    moment = d.actuator_moment
    for i in range(nu):
        ctrl = 0.0 if bad else clamped_ctrl(m, d, i, clamp)
        adr = m.actuator_actadr[i]
        last = adr + m.actuator_actnum[i] - 1
        dyn = m.actuator_dyntype[i]
        if adr >= 0:
            if dyn == DynType.INTEGRATOR:
                d.act_dot[last] = ctrl
            elif dyn == DynType.FILTER or dyn == DynType.FILTEREXACT:
                # first-order filter: act_dot = (ctrl - act) / tau
                d.act_dot[last] = (ctrl - d.act[last]) / max(MINVAL, m.actuator_dynprm[i, 0])
            elif dyn == DynType.MUSCLE:
                d.act_dot[last] = muscle_dynamics(ctrl, d.act[last], m.actuator_dynprm[i])
        length = d.actuator_length[i]
        vel = d.actuator_velocity[i]
        gaintype = m.actuator_gaintype[i]
        gain = m.actuator_gainprm[i, 0]
        if gaintype == GainType.AFFINE:
            gain += m.actuator_gainprm[i, 1] * length + m.actuator_gainprm[i, 2] * vel
        elif gaintype == GainType.MUSCLE:
            gain = muscle_gain(length, vel, m.actuator_lengthrange[i], m.actuator_acc0[i],
                               m.actuator_gainprm[i])
        if adr < 0:
            force = gain * ctrl
        else:
            act = d.act[last]
            if m.actuator_actearly[i]:
                act = next_activation(m, i, act, d.act_dot[last], m.opt_timestep[0])
            force = gain * act
        biastype = m.actuator_biastype[i]
        if biastype == BiasType.AFFINE:
            force += (m.actuator_biasprm[i, 0] + m.actuator_biasprm[i, 1] * length
                      + m.actuator_biasprm[i, 2] * vel)
        elif biastype == BiasType.MUSCLE:
            force += muscle_bias(length, m.actuator_lengthrange[i], m.actuator_acc0[i],
                                 m.actuator_biasprm[i])
        if m.actuator_forcelimited[i]:
            force = min(max(force, m.actuator_forcerange[i, 0]), m.actuator_forcerange[i, 1])
        d.actuator_force[i] = force
        lo, n = moment_span(m, i, nv)
        axpy_seg(qfrc, lo, force, moment[i], lo, n)
    # the total actuator force on a joint is clamped to the joint's actuatorfrcrange
    for j in range(m.jnt_type.shape[0]):
        if m.jnt_actfrclimited[j]:
            k = m.jnt_dofadr[j]
            d.qfrc_actuator[k] = min(max(d.qfrc_actuator[k], m.jnt_actfrcrange[j, 0]),
                                     m.jnt_actfrcrange[j, 1])

"""Actuators: activation dynamics and forces (MuJoCo's mj_fwdActuation and activation update)."""
import math

from .enums import BiasType, DisableBit, DynType, GainType
from .jit import jit
from .math import MINVAL


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
    # controls are clamped in a local copy; a non-finite control zeroes them all
    bad = False
    for i in range(nu):
        if not math.isfinite(d.ctrl[i]):
            bad = True
    for i in range(nu):
        ctrl = 0.0 if bad else d.ctrl[i]
        if m.actuator_ctrllimited[i] and not flags & DisableBit.CLAMPCTRL:
            ctrl = min(max(ctrl, m.actuator_ctrlrange[i, 0]), m.actuator_ctrlrange[i, 1])
        adr = m.actuator_actadr[i]
        last = adr + m.actuator_actnum[i] - 1
        dyn = m.actuator_dyntype[i]
        if adr >= 0:
            if dyn == DynType.INTEGRATOR:
                d.act_dot[last] = ctrl
            elif dyn == DynType.FILTER or dyn == DynType.FILTEREXACT:
                # first-order filter: act_dot = (ctrl - act) / tau
                d.act_dot[last] = (ctrl - d.act[last]) / max(MINVAL, m.actuator_dynprm[i, 0])
        length = d.actuator_length[i]
        vel = d.actuator_velocity[i]
        gain = m.actuator_gainprm[i, 0]
        if m.actuator_gaintype[i] == GainType.AFFINE:
            gain += m.actuator_gainprm[i, 1] * length + m.actuator_gainprm[i, 2] * vel
        if adr < 0:
            force = gain * ctrl
        else:
            act = d.act[last]
            if m.actuator_actearly[i]:
                act = next_activation(m, i, act, d.act_dot[last], m.opt_timestep[0])
            force = gain * act
        if m.actuator_biastype[i] == BiasType.AFFINE:
            force += (m.actuator_biasprm[i, 0] + m.actuator_biasprm[i, 1] * length
                      + m.actuator_biasprm[i, 2] * vel)
        if m.actuator_forcelimited[i]:
            force = min(max(force, m.actuator_forcerange[i, 0]), m.actuator_forcerange[i, 1])
        d.actuator_force[i] = force
        for k in range(nv):
            d.qfrc_actuator[k] += d.actuator_moment[i, k] * force
    # the total actuator force on a joint is clamped to the joint's actuatorfrcrange
    for j in range(m.jnt_type.shape[0]):
        if m.jnt_actfrclimited[j]:
            k = m.jnt_dofadr[j]
            d.qfrc_actuator[k] = min(max(d.qfrc_actuator[k], m.jnt_actfrcrange[j, 0]),
                                     m.jnt_actfrcrange[j, 1])

"""Passive forces: joint and tendon springs and dampers, gravity compensation, fluid forces."""
import math

from .enums import DisableBit, JointType
from .jit import jit
from .math import MINVAL, mat9, mulmatvec3, quat_sub, vec3
from .smooth import apply_ft, object_velocity_local

FREE = int(JointType.FREE)
BALL = int(JointType.BALL)
NO_SPRING = int(DisableBit.PASSIVE | DisableBit.SPRING)
NO_DAMPER = int(DisableBit.PASSIVE | DisableBit.DAMPER)


@jit
def passive(m, d):
    """qfrc_spring, qfrc_damper, qfrc_fluid and their sum with gravity compensation, qfrc_passive.

    Joint damping -B v is included here; with the semi-implicit integrator the matching B h is
    added to the inertia (paper eq. 3: D = armature + B h), see forward.py.
    """
    flags = m.opt_disableflags[0]
    d.qfrc_spring[:] = 0.0
    d.qfrc_damper[:] = 0.0
    d.qfrc_fluid[:] = 0.0
    d.qfrc_passive[:] = 0.0
    if not flags & NO_SPRING:
        for j in range(m.jnt_type.shape[0]):
            k = m.jnt_stiffness[j]
            if k == 0.0:
                continue
            pa = m.jnt_qposadr[j]
            da = m.jnt_dofadr[j]
            t = m.jnt_type[j]
            if t == FREE:
                for c in range(3):
                    d.qfrc_spring[da + c] -= k * (d.qpos[pa + c] - m.qpos_spring[pa + c])
                pa += 3
                da += 3
            if t == FREE or t == BALL:
                # rotation vector from the spring's reference orientation
                q = (d.qpos[pa], d.qpos[pa + 1], d.qpos[pa + 2], d.qpos[pa + 3])
                q0 = (m.qpos_spring[pa], m.qpos_spring[pa + 1], m.qpos_spring[pa + 2],
                      m.qpos_spring[pa + 3])
                dif = quat_sub(q, q0)
                for c in range(3):
                    d.qfrc_spring[da + c] -= k * dif[c]
            else:
                d.qfrc_spring[da] -= k * (d.qpos[pa] - m.qpos_spring[pa])
    if not flags & NO_DAMPER:
        for i in range(d.qvel.shape[0]):
            d.qfrc_damper[i] = -m.dof_damping[i] * d.qvel[i]
    nv = d.qvel.shape[0]
    for t in range(m.tendon_stiffness.shape[0]):
        k = m.tendon_stiffness[t]
        b = m.tendon_damping[t]
        length = d.ten_length[t]
        spring = 0.0
        if not flags & NO_SPRING and k != 0.0:
            # dead band between the two rest lengths
            if length > m.tendon_lengthspring[t, 1]:
                spring = k * (m.tendon_lengthspring[t, 1] - length)
            elif length < m.tendon_lengthspring[t, 0]:
                spring = k * (m.tendon_lengthspring[t, 0] - length)
        damper = 0.0
        if not flags & NO_DAMPER:
            damper = -b * d.ten_velocity[t]
        if spring != 0.0 or damper != 0.0:
            for c in range(nv):
                d.qfrc_spring[c] += d.ten_J[t, c] * spring
                d.qfrc_damper[c] += d.ten_J[t, c] * damper
    for c in range(nv):
        d.qfrc_passive[c] = d.qfrc_spring[c] + d.qfrc_damper[c]
    g = (m.opt_gravity[0], m.opt_gravity[1], m.opt_gravity[2])
    if not flags & DisableBit.GRAVITY and (g[0] != 0.0 or g[1] != 0.0 or g[2] != 0.0):
        for i in range(1, m.body_parentid.shape[0]):
            gc = m.body_gravcomp[i]
            if gc != 0.0:
                s = -m.body_mass[i] * gc
                apply_ft(m, d, (g[0] * s, g[1] * s, g[2] * s), (0.0, 0.0, 0.0),
                         vec3(d.xipos, i), i, d.qfrc_passive, 1.0)
    if m.opt_viscosity[0] > 0.0 or m.opt_density[0] > 0.0:
        for i in range(1, m.body_parentid.shape[0]):
            if m.body_mass[i] >= MINVAL:
                inertia_box_fluid(m, d, i)
        for c in range(nv):
            d.qfrc_passive[c] += d.qfrc_fluid[c]


@jit
def inertia_box_fluid(m, d, i):
    """Viscous (Stokes) and quadratic drag forces on the body's equivalent inertia box."""
    mass = m.body_mass[i]
    i0 = m.body_inertia[i, 0]
    i1 = m.body_inertia[i, 1]
    i2 = m.body_inertia[i, 2]
    # box with the same mass and inertia: I0 = m (b1^2 + b2^2) / 12
    b0 = math.sqrt(max(MINVAL, i1 + i2 - i0) / mass * 6.0)
    b1 = math.sqrt(max(MINVAL, i0 + i2 - i1) / mass * 6.0)
    b2 = math.sqrt(max(MINVAL, i0 + i1 - i2) / mass * 6.0)
    ximat = mat9(d.ximat, i)
    xipos = vec3(d.xipos, i)
    v = object_velocity_local(m, d, i, xipos, ximat)
    wind = (m.opt_wind[0], m.opt_wind[1], m.opt_wind[2])
    lw0 = ximat[0] * wind[0] + ximat[3] * wind[1] + ximat[6] * wind[2]
    lw1 = ximat[1] * wind[0] + ximat[4] * wind[1] + ximat[7] * wind[2]
    lw2 = ximat[2] * wind[0] + ximat[5] * wind[1] + ximat[8] * wind[2]
    w0, w1, w2 = v[0], v[1], v[2]
    u0, u1, u2 = v[3] - lw0, v[4] - lw1, v[5] - lw2
    t0 = t1 = t2 = f0 = f1 = f2 = 0.0
    visc = m.opt_viscosity[0]
    rho = m.opt_density[0]
    if visc > 0.0:
        diam = (b0 + b1 + b2) / 3.0
        c = -math.pi * diam * diam * diam * visc
        t0, t1, t2 = c * w0, c * w1, c * w2
        c = -3.0 * math.pi * diam * visc
        f0, f1, f2 = c * u0, c * u1, c * u2
    if rho > 0.0:
        f0 -= 0.5 * rho * b1 * b2 * abs(u0) * u0
        f1 -= 0.5 * rho * b0 * b2 * abs(u1) * u1
        f2 -= 0.5 * rho * b0 * b1 * abs(u2) * u2
        t0 -= rho * b0 * (b1 ** 4 + b2 ** 4) * abs(w0) * w0 / 64.0
        t1 -= rho * b1 * (b0 ** 4 + b2 ** 4) * abs(w1) * w1 / 64.0
        t2 -= rho * b2 * (b0 ** 4 + b1 ** 4) * abs(w2) * w2 / 64.0
    torque = mulmatvec3(ximat, (t0, t1, t2))
    force = mulmatvec3(ximat, (f0, f1, f2))
    apply_ft(m, d, force, torque, xipos, i, d.qfrc_fluid, 1.0)

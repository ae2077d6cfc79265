"""Passive forces: joint and tendon springs and dampers, gravity compensation, fluid forces.

Fluid forces (MuJoCo's engine_passive.c), in the local frame of each body or geom with the
medium's wind subtracted from its velocity: the inertia-box model (a box with the body's mass
and inertia, Stokes drag plus quadratic drag on its faces), or, for the geoms of bodies that ask
for it (fluidshape="ellipsoid"), the ellipsoid model: added-mass (virtual mass and inertia from
the compiler) gyroscopic terms, Magnus lift rho V (w x v), Kutta lift, blunt and slender drag on
the projected area A_proj = pi sqrt(sum (s_j s_k)^4 v_i^2 / sum (s_j s_k v_i)^2), and angular
drag, each scaled by its coefficient of geom_fluid.
"""
import math

from .enums import DisableBit, GeomType, JointType
from .jit import jit
from .math import MINVAL, cross3, mat9, mulmattvec3, mulmatvec3, quat_sub, vec3
from .smooth import apply_ft, object_velocity_local

FREE = int(JointType.FREE)
SPHERE = int(GeomType.SPHERE)
CAPSULE = int(GeomType.CAPSULE)
CYLINDER = int(GeomType.CYLINDER)
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
            if m.body_mass[i] < MINVAL:
                continue
            # a body with any geom using the ellipsoid model uses it for all its geoms
            ellipsoid = False
            for g in range(m.body_geomadr[i], m.body_geomadr[i] + m.body_geomnum[i]):
                if m.geom_fluid[g, 0] > 0.0:
                    ellipsoid = True
            if ellipsoid:
                for g in range(m.body_geomadr[i], m.body_geomadr[i] + m.body_geomnum[i]):
                    ellipsoid_fluid(m, d, i, g)
            else:
                inertia_box_fluid(m, d, i)
        for c in range(nv):
            d.qfrc_passive[c] += d.qfrc_fluid[c]


@jit
def inertia_box(m, i):
    """Sizes of the box with body i's mass and inertia: I0 = mass (b1^2 + b2^2) / 12, ..."""
    mass = m.body_mass[i]
    i0 = m.body_inertia[i, 0]
    i1 = m.body_inertia[i, 1]
    i2 = m.body_inertia[i, 2]
    return (math.sqrt(max(MINVAL, i1 + i2 - i0) / mass * 6.0),
            math.sqrt(max(MINVAL, i0 + i2 - i1) / mass * 6.0),
            math.sqrt(max(MINVAL, i0 + i1 - i2) / mass * 6.0))


@jit
def inertia_box_fluid(m, d, i):
    """Viscous (Stokes) and quadratic drag forces on the body's equivalent inertia box."""
    b0, b1, b2 = inertia_box(m, i)
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


@jit
def _pow2(x):
    return x * x


@jit
def _pow4(x):
    return (x * x) * (x * x)


@jit
def ellipsoid_max_moment(s0, s1, s2):
    """8/15 pi d0 max(d1, d2)^4: the largest moment of inertia about axis 0 (unit density)."""
    return 8.0 / 15.0 * math.pi * s0 * _pow4(max(s1, s2))


@jit
def ellipsoid_semiaxes(m, g):
    """Semi-axes of geom g's equivalent ellipsoid (MuJoCo's mju_geomSemiAxes)."""
    t = m.geom_type[g]
    if t == SPHERE:
        return m.geom_size[g, 0], m.geom_size[g, 0], m.geom_size[g, 0]
    if t == CAPSULE:
        return m.geom_size[g, 0], m.geom_size[g, 0], m.geom_size[g, 1] + m.geom_size[g, 0]
    if t == CYLINDER:
        return m.geom_size[g, 0], m.geom_size[g, 0], m.geom_size[g, 1]
    return m.geom_size[g, 0], m.geom_size[g, 1], m.geom_size[g, 2]


@jit
def ellipsoid_fluid(m, d, body, g):
    """Ellipsoid fluid model of geom g (MuJoCo's mj_ellipsoidFluidModel) into qfrc_fluid."""
    coef = m.geom_fluid[g, 0]
    if coef == 0.0:
        return
    blunt = m.geom_fluid[g, 1]
    slender = m.geom_fluid[g, 2]
    angdrag = m.geom_fluid[g, 3]
    kutta = m.geom_fluid[g, 4]
    magnus = m.geom_fluid[g, 5]
    s0, s1, s2 = ellipsoid_semiaxes(m, g)
    xmat = mat9(d.geom_xmat, g)
    xpos = vec3(d.geom_xpos, g)
    v = object_velocity_local(m, d, body, xpos, xmat)
    lw = mulmattvec3(xmat, (m.opt_wind[0], m.opt_wind[1], m.opt_wind[2]))
    w = (v[0], v[1], v[2])
    u = (v[3] - lw[0], v[4] - lw[1], v[5] - lw[2])
    rho = m.opt_density[0]
    visc = m.opt_viscosity[0]
    # added mass: f = p x w, torque = p x u + L x w, p = rho m_v u, L = rho I_v w
    p = (rho * m.geom_fluid[g, 6] * u[0], rho * m.geom_fluid[g, 7] * u[1],
         rho * m.geom_fluid[g, 8] * u[2])
    L = (rho * m.geom_fluid[g, 9] * w[0], rho * m.geom_fluid[g, 10] * w[1],
         rho * m.geom_fluid[g, 11] * w[2])
    f_am = cross3(p, w)
    t1 = cross3(p, u)
    t2 = cross3(L, w)
    tq0 = t1[0] + t2[0]
    tq1 = t1[1] + t2[1]
    tq2 = t1[2] + t2[2]
    # viscous and lift forces
    volume = 4.0 / 3.0 * math.pi * s0 * s1 * s2
    d_max = max(max(s0, s1), s2)
    d_min = min(min(s0, s1), s2)
    d_mid = s0 + s1 + s2 - d_max - d_min
    A_max = math.pi * d_max * d_mid
    mag = cross3(w, u)
    c = magnus * rho * volume
    mag = (mag[0] * c, mag[1] * c, mag[2] * c)
    proj_denom = (_pow4(s1 * s2) * _pow2(u[0]) + _pow4(s2 * s0) * _pow2(u[1])
                  + _pow4(s0 * s1) * _pow2(u[2]))
    proj_num = (_pow2(s1 * s2 * u[0]) + _pow2(s2 * s0 * u[1]) + _pow2(s0 * s1 * u[2]))
    # (MuJoCo 4 divides without a floor, which matters for geoms of millimetres; a body at
    # rest has no projected area to speak of, and every term it enters is then zero)
    A_proj = math.pi * math.sqrt(proj_denom / proj_num) if proj_num > 0.0 else 0.0
    norm = (_pow2(s1 * s2) * u[0], _pow2(s2 * s0) * u[1], _pow2(s0 * s1) * u[2])
    speed = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    cos_alpha = proj_num / (speed * proj_denom) if speed * proj_denom > 0.0 else 0.0
    circ = cross3(norm, u)
    c = kutta * rho * cos_alpha * A_proj
    circ = (circ[0] * c, circ[1] * c, circ[2] * c)
    f_kutta = cross3(circ, u)
    eq_D = 2.0 / 3.0 * (s0 + s1 + s2)
    lin_visc_force = 3.0 * math.pi * eq_D
    lin_visc_torque = math.pi * eq_D * eq_D * eq_D
    I_max = 8.0 / 15.0 * math.pi * d_mid * _pow4(d_max)
    II0 = ellipsoid_max_moment(s0, s1, s2)
    II1 = ellipsoid_max_moment(s1, s2, s0)
    II2 = ellipsoid_max_moment(s2, s0, s1)
    mv0 = w[0] * (angdrag * II0 + slender * (I_max - II0))
    mv1 = w[1] * (angdrag * II1 + slender * (I_max - II1))
    mv2 = w[2] * (angdrag * II2 + slender * (I_max - II2))
    drag_lin = visc * lin_visc_force + rho * speed * (A_proj * blunt
                                                      + slender * (A_max - A_proj))
    drag_ang = visc * lin_visc_torque + rho * math.sqrt(mv0 * mv0 + mv1 * mv1 + mv2 * mv2)
    lt = ((tq0 - drag_ang * w[0]) * coef, (tq1 - drag_ang * w[1]) * coef,
          (tq2 - drag_ang * w[2]) * coef)
    lf = ((f_am[0] + (mag[0] + f_kutta[0] - drag_lin * u[0])) * coef,
          (f_am[1] + (mag[1] + f_kutta[1] - drag_lin * u[1])) * coef,
          (f_am[2] + (mag[2] + f_kutta[2] - drag_lin * u[2])) * coef)
    apply_ft(m, d, mulmatvec3(xmat, lf), mulmatvec3(xmat, lt), xpos, body, d.qfrc_fluid, 1.0)

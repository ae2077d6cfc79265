"""Smooth dynamics: kinematics, com-based quantities, tendons, inertia, bias forces.

Each stage is ``stage(m, d)`` on the compiled model and data (engine.types structrefs) and writes the
named fields of ``d``; the order in forward.py is MuJoCo's (mj_fwdPosition, mj_fwdVelocity).
Spatial vectors are (rot, lin) about the centre of mass of each kinematic tree
(``subtree_com[body_rootid]``), as in MuJoCo.
"""
from .enums import CamLight, JointType, SameFrame, TrnType, Warning, WrapType
from .jit import inlined, jit
from .wrap import wrap
from .math import (MINVAL, add3, add6, axis_angle2quat, axpy_seg, cross3, cross_force,
                   cross_motion, dot3, dot6, is_bad, mat9, mul_inert_vec, mulmattvec3, mulmatvec3,
                   norm3, quat2mat, quat4, quat_mul, quat_normalize, quat_rotate, row6, row10, scl3,
                   set3, set4, set9, sub3, vec3, warn)

FREE = int(JointType.FREE)
BALL = int(JointType.BALL)
SLIDE = int(JointType.SLIDE)
HINGE = int(JointType.HINGE)
SAME_BODY = int(SameFrame.BODY)
SAME_INERTIA = int(SameFrame.INERTIA)
SAME_BODYROT = int(SameFrame.BODYROT)
SAME_INERTIAROT = int(SameFrame.INERTIAROT)


# ------------------------------------------------------------------------------------------------
# positions
# ------------------------------------------------------------------------------------------------
@jit
def local2global(d, bodyid, pos, quat):
    """Global position and orientation matrix of a frame given in a body's frame."""
    xmat = mat9(d.xmat, bodyid)
    xpos = add3(vec3(d.xpos, bodyid), mulmatvec3(xmat, pos))
    return xpos, quat2mat(quat_mul(quat4(d.xquat, bodyid), quat))


@inlined
def local2global_same(d, bodyid, pos, quat, sameframe):
    """local2global with MuJoCo's same-frame shortcut: a frame that coincides with the body
    frame (BODY), the inertial frame (INERTIA) or shares their orientation (BODYROT,
    INERTIAROT) copies that frame's position and/or matrix instead of composing it."""
    if sameframe == SAME_BODY:
        return vec3(d.xpos, bodyid), mat9(d.xmat, bodyid)
    if sameframe == SAME_INERTIA:
        return vec3(d.xipos, bodyid), mat9(d.ximat, bodyid)
    xpos = add3(vec3(d.xpos, bodyid), mulmatvec3(mat9(d.xmat, bodyid), pos))
    if sameframe == SAME_BODYROT:
        return xpos, mat9(d.xmat, bodyid)
    if sameframe == SAME_INERTIAROT:
        return xpos, mat9(d.ximat, bodyid)
    return xpos, quat2mat(quat_mul(quat4(d.xquat, bodyid), quat))


@jit
def kinematics(m, d):
    """Body, joint, geom and site frames: xpos xquat xmat xipos ximat xanchor xaxis geom_x* site_x*
    (a bad mocap pose counts BADMOCAP)."""
    d.xpos[0, :] = 0.0
    d.xquat[0, :] = 0.0
    d.xquat[0, 0] = 1.0
    d.xmat[0, :] = 0.0
    d.xmat[0, 0] = d.xmat[0, 4] = d.xmat[0, 8] = 1.0
    d.xipos[0, :] = 0.0
    set9(d.ximat, 0, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
    qpos = d.qpos
    for i in range(1, m.body_parentid.shape[0]):
        mocap = m.body_mocapid[i]
        jntadr = m.body_jntadr[i]
        jntnum = m.body_jntnum[i]
        if mocap >= 0:
            xpos = vec3(d.mocap_pos, mocap)
            xquat = quat4(d.mocap_quat, mocap)
            if (is_bad(xpos[0]) or is_bad(xpos[1]) or is_bad(xpos[2]) or is_bad(xquat[0])
                    or is_bad(xquat[1]) or is_bad(xquat[2]) or is_bad(xquat[3])):
                # a bad mocap pose is counted and the body's model pose used instead
                warn(d, Warning.BADMOCAP, mocap)
                xpos = vec3(m.body_pos, i)
                xquat = quat4(m.body_quat, i)
            xquat = quat_normalize(xquat)
        elif jntnum == 1 and m.jnt_type[jntadr] == FREE:
            # free joint: the body frame is the joint's position and orientation
            a = m.jnt_qposadr[jntadr]
            xpos = (qpos[a], qpos[a + 1], qpos[a + 2])
            xquat = quat_normalize((qpos[a + 3], qpos[a + 4], qpos[a + 5], qpos[a + 6]))
            set3(d.xanchor, jntadr, xpos)
            set3(d.xaxis, jntadr, vec3(m.jnt_axis, jntadr))
        else:
            # frame of the parent composed with the body offset
            p = m.body_parentid[i]
            pquat = quat4(d.xquat, p)
            xpos = add3(vec3(d.xpos, p), quat_rotate(pquat, vec3(m.body_pos, i)))
            xquat = quat_mul(pquat, quat4(m.body_quat, i))
            for j in range(jntadr, jntadr + jntnum):
                a = m.jnt_qposadr[j]
                jpos = vec3(m.jnt_pos, j)
                xaxis = quat_rotate(xquat, vec3(m.jnt_axis, j))
                xanchor = add3(quat_rotate(xquat, jpos), xpos)
                set3(d.xaxis, j, xaxis)
                set3(d.xanchor, j, xanchor)
                t = m.jnt_type[j]
                if t == SLIDE:
                    # xpos += xaxis * (q - q0)
                    xpos = add3(xpos, scl3(xaxis, qpos[a] - m.qpos0[a]))
                elif t == BALL or t == HINGE:
                    if t == BALL:
                        qloc = quat_normalize((qpos[a], qpos[a + 1], qpos[a + 2], qpos[a + 3]))
                    else:
                        qloc = axis_angle2quat(vec3(m.jnt_axis, j), qpos[a] - m.qpos0[a])
                    xquat = quat_mul(xquat, qloc)
                    # rotation about the anchor, not the body origin
                    xpos = sub3(xanchor, quat_rotate(xquat, jpos))
            xquat = quat_normalize(xquat)
        set3(d.xpos, i, xpos)
        set4(d.xquat, i, xquat)
        xmat = quat2mat(xquat)
        set9(d.xmat, i, xmat)
        pos, mat = local2global_same(d, i, vec3(m.body_ipos, i), quat4(m.body_iquat, i),
                                     m.body_sameframe[i])
        set3(d.xipos, i, pos)
        set9(d.ximat, i, mat)
    for g in range(m.geom_bodyid.shape[0]):
        pos, mat = local2global_same(d, m.geom_bodyid[g], vec3(m.geom_pos, g),
                                     quat4(m.geom_quat, g), m.geom_sameframe[g])
        set3(d.geom_xpos, g, pos)
        set9(d.geom_xmat, g, mat)
    for s in range(m.site_bodyid.shape[0]):
        pos, mat = local2global_same(d, m.site_bodyid[s], vec3(m.site_pos, s),
                                     quat4(m.site_quat, s), m.site_sameframe[s])
        set3(d.site_xpos, s, pos)
        set9(d.site_xmat, s, mat)


@jit
def inert_com(inertia, ximat, dif, mass):
    """Com-based spatial inertia (10-tuple) of a body: R diag(I) R' + parallel axis term."""
    r = ximat
    i0, i1, i2 = inertia
    xx = r[0] * r[0] * i0 + r[1] * r[1] * i1 + r[2] * r[2] * i2
    yy = r[3] * r[3] * i0 + r[4] * r[4] * i1 + r[5] * r[5] * i2
    zz = r[6] * r[6] * i0 + r[7] * r[7] * i1 + r[8] * r[8] * i2
    xy = r[0] * r[3] * i0 + r[1] * r[4] * i1 + r[2] * r[5] * i2
    xz = r[0] * r[6] * i0 + r[1] * r[7] * i1 + r[2] * r[8] * i2
    yz = r[3] * r[6] * i0 + r[4] * r[7] * i1 + r[5] * r[8] * i2
    # parallel axis: I += m (|c|^2 1 - c c')
    xx += mass * (dif[1] * dif[1] + dif[2] * dif[2])
    yy += mass * (dif[0] * dif[0] + dif[2] * dif[2])
    zz += mass * (dif[0] * dif[0] + dif[1] * dif[1])
    xy -= mass * dif[0] * dif[1]
    xz -= mass * dif[0] * dif[2]
    yz -= mass * dif[1] * dif[2]
    return (xx, yy, zz, xy, xz, yz, mass * dif[0], mass * dif[1], mass * dif[2], mass)


@jit
def com_pos(m, d):
    """Subtree centres of mass, com-based inertias and dof axes: subtree_com cinert cdof."""
    # the arrays as locals (a store to one would make the compiler reload the others' fields)
    body_parentid = m.body_parentid
    body_rootid = m.body_rootid
    body_mass = m.body_mass
    body_subtreemass = m.body_subtreemass
    xipos = d.xipos
    xanchor = d.xanchor
    subtree_com = d.subtree_com
    cinert = d.cinert
    cdof = d.cdof
    nbody = body_parentid.shape[0]
    for i in range(nbody):
        mass = body_mass[i]
        for k in range(3):
            subtree_com[i, k] = xipos[i, k] * mass
    for i in range(nbody - 1, 0, -1):
        p = body_parentid[i]
        for k in range(3):
            subtree_com[p, k] += subtree_com[i, k]
    for i in range(nbody):
        if body_subtreemass[i] < MINVAL:
            set3(subtree_com, i, vec3(xipos, i))
        else:
            for k in range(3):
                subtree_com[i, k] /= body_subtreemass[i]
    cinert[0, :] = 0.0
    for i in range(1, nbody):
        dif = sub3(vec3(xipos, i), vec3(subtree_com, body_rootid[i]))
        c = inert_com(vec3(m.body_inertia, i), mat9(d.ximat, i), dif, body_mass[i])
        for k in range(10):
            cinert[i, k] = c[k]
    for j in range(m.jnt_type.shape[0]):
        b = m.jnt_bodyid[j]
        da = m.jnt_dofadr[j]
        # offset = com of the tree - anchor; cdof = (axis, axis x offset)
        offset = sub3(vec3(subtree_com, body_rootid[b]), vec3(xanchor, j))
        t = m.jnt_type[j]
        if t == FREE:
            for k in range(3):
                for c in range(6):
                    cdof[da + k, c] = 0.0
                cdof[da + k, 3 + k] = 1.0
            da += 3
        if t == FREE or t == BALL:
            for k in range(3):
                axis = (d.xmat[b, k], d.xmat[b, 3 + k], d.xmat[b, 6 + k])
                _set_dof_com(cdof, da + k, axis, offset)
        elif t == HINGE:
            _set_dof_com(cdof, da, vec3(d.xaxis, j), offset)
        elif t == SLIDE:
            axis = vec3(d.xaxis, j)
            for c in range(3):
                cdof[da, c] = 0.0
                cdof[da, 3 + c] = axis[c]


@jit
def _set_dof_com(cdof, i, axis, offset):
    lin = cross3(axis, offset)
    for c in range(3):
        cdof[i, c] = axis[c]
        cdof[i, 3 + c] = lin[c]


@jit
def _look_at(pos, target):
    """Camera frame at pos looking at target with z up: columns (x, y, z), z = pos - target."""
    z = sub3(pos, target)
    n = norm3(z)
    z = scl3(z, 1.0 / max(n, MINVAL))
    x = cross3((0.0, 0.0, 1.0), z)
    x = scl3(x, 1.0 / max(norm3(x), MINVAL))
    y = cross3(z, x)
    y = scl3(y, 1.0 / max(norm3(y), MINVAL))
    return (x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2])


@jit
def camlight(m, d):
    """Camera and light frames for every tracking mode: cam_xpos cam_xmat light_xpos light_xdir."""
    for c in range(m.cam_bodyid.shape[0]):
        b = m.cam_bodyid[c]
        mode = m.cam_mode[c]
        pos, mat = local2global(d, b, vec3(m.cam_pos, c), quat4(m.cam_quat, c))
        if mode == CamLight.TRACK:
            pos = add3(vec3(d.xpos, b), vec3(m.cam_pos0, c))
            mat = mat9(m.cam_mat0, c)
        elif mode == CamLight.TRACKCOM:
            pos = add3(vec3(d.subtree_com, b), vec3(m.cam_poscom0, c))
            mat = mat9(m.cam_mat0, c)
        elif mode == CamLight.TARGETBODY or mode == CamLight.TARGETBODYCOM:
            t = m.cam_targetbodyid[c]
            if t >= 0:
                target = vec3(d.xpos, t) if mode == CamLight.TARGETBODY else vec3(d.subtree_com, t)
                mat = _look_at(pos, target)
        set3(d.cam_xpos, c, pos)
        set9(d.cam_xmat, c, mat)
    for li in range(m.light_bodyid.shape[0]):
        b = m.light_bodyid[li]
        mode = m.light_mode[li]
        xmat = mat9(d.xmat, b)
        pos = add3(vec3(d.xpos, b), mulmatvec3(xmat, vec3(m.light_pos, li)))
        dirv = mulmatvec3(xmat, vec3(m.light_dir, li))
        if mode == CamLight.TRACK:
            pos = add3(vec3(d.xpos, b), vec3(m.light_pos0, li))
            dirv = vec3(m.light_dir0, li)
        elif mode == CamLight.TRACKCOM:
            pos = add3(vec3(d.subtree_com, b), vec3(m.light_poscom0, li))
            dirv = vec3(m.light_dir0, li)
        elif mode == CamLight.TARGETBODY or mode == CamLight.TARGETBODYCOM:
            t = m.light_targetbodyid[li]
            if t >= 0:
                target = vec3(d.xpos, t) if mode == CamLight.TARGETBODY else vec3(d.subtree_com, t)
                dirv = sub3(target, pos)
        n = norm3(dirv)
        set3(d.light_xpos, li, pos)
        set3(d.light_xdir, li, scl3(dirv, 1.0 / max(n, MINVAL)))


# ------------------------------------------------------------------------------------------------
# Jacobians
# ------------------------------------------------------------------------------------------------
@jit
def last_dof(m, body):
    """Last dof in the ancestor chain of body (MuJoCo skips bodies without dofs); -1 if none."""
    while body > 0 and m.body_dofnum[body] == 0:
        body = m.body_parentid[body]
    if body == 0:
        return -1
    return m.body_dofadr[body] + m.body_dofnum[body] - 1


@jit
def apply_ft(m, d, force, torque, point, body, out, scale):
    """out += scale * (jacp' force + jacr' torque) at a point of a body (MuJoCo's mj_applyFT)."""
    offset = sub3(point, vec3(d.subtree_com, m.body_rootid[body]))
    j = last_dof(m, body)
    while j >= 0:
        rot = (d.cdof[j, 0], d.cdof[j, 1], d.cdof[j, 2])
        # jacp column = cdof_lin + cdof_rot x offset
        jp = add3((d.cdof[j, 3], d.cdof[j, 4], d.cdof[j, 5]), cross3(rot, offset))
        out[j] += scale * (dot3(jp, force) + dot3(rot, torque))
        j = m.dof_parentid[j]


@jit
def jac_kernel(m, d, point, body, jacp, jacr):
    """jacp, jacr (3, nv): Jacobians of a point fixed to a body, translation and rotation
    (MuJoCo's mj_jac); zero columns for the dofs that do not move the body."""
    jacp[:, :] = 0.0
    jacr[:, :] = 0.0
    offset = sub3((point[0], point[1], point[2]), vec3(d.subtree_com, m.body_rootid[body]))
    j = last_dof(m, body)
    while j >= 0:
        rot = (d.cdof[j, 0], d.cdof[j, 1], d.cdof[j, 2])
        # jacp column = cdof_lin + cdof_rot x offset, jacr column = cdof_rot
        jp = add3((d.cdof[j, 3], d.cdof[j, 4], d.cdof[j, 5]), cross3(rot, offset))
        for k in range(3):
            jacp[k, j] = jp[k]
            jacr[k, j] = rot[k]
        j = m.dof_parentid[j]


def jac(m, d, point, body):
    """(jacp, jacr), each (3, nv): the Jacobians of the world point ``point`` moving with body
    ``body`` (MuJoCo's mj_jac), from cdof and subtree_com of the last forward (or kinematics
    and com_pos): the point's velocity is jacp @ qvel, the body's angular velocity jacr @ qvel."""
    import numpy as np
    from .types import check_data
    check_data(m, d)
    if not 0 <= int(body) < m.nbody:
        raise IndexError(f"body {body} out of range: the model has {m.nbody}")
    jacp = np.empty((3, m.nv))
    jacr = np.empty((3, m.nv))
    jac_kernel(m._struct, d._struct, np.asarray(point, dtype=np.float64).reshape(3), int(body),
               jacp, jacr)
    return jacp, jacr


@jit
def object_velocity_local(m, d, body, point, rotmat):
    """6D velocity (rot, lin) of a point fixed to body, in the frame rotmat (mj_objectVelocity)."""
    cvel = row6(d.cvel, body)
    offset = sub3(point, vec3(d.subtree_com, m.body_rootid[body]))
    rot = (cvel[0], cvel[1], cvel[2])
    # lin = cvel_lin - offset x rot
    lin = sub3((cvel[3], cvel[4], cvel[5]), cross3(offset, rot))
    r = mulmattvec3(rotmat, rot)
    v = mulmattvec3(rotmat, lin)
    return (r[0], r[1], r[2], v[0], v[1], v[2])


# ------------------------------------------------------------------------------------------------
# tendons (the actuators' transmission is in actuator.py)
# ------------------------------------------------------------------------------------------------
@jit
def tendon(m, d):
    """Tendon lengths, moment arms and paths: ten_length ten_J ten_wrapadr ten_wrapnum wrap_obj
    wrap_xpos (MuJoCo's mj_tendon).

    A fixed tendon is L = sum coef q. A spatial tendon is a path of sites, with pulleys dividing
    the length of the branches after them and spheres or cylinders between two sites that the
    path wraps around (wrap.py); its moment arms are the sums over the path's straight segments
    between points of different bodies of (jac(p1) - jac(p0))' (p1 - p0) / (|p1 - p0| divisor).
    The path (wrap_xpos) lists each site, the two tangent points of each wrap (wrap_obj = the
    geom) and a point at each pulley (wrap_obj = -2)."""
    nwrapped = 0
    for t in range(m.tendon_adr.shape[0]):
        adr = m.tendon_adr[t]
        num = m.tendon_num[t]
        d.ten_J[t, :] = 0.0
        d.ten_wrapadr[t] = nwrapped
        length = 0.0
        if num > 0 and m.wrap_type[adr] == WrapType.JOINT:
            # fixed tendon: L = sum coef * q, J = coef
            for w in range(adr, adr + num):
                j = m.wrap_objid[w]
                length += m.wrap_prm[w] * d.qpos[m.jnt_qposadr[j]]
                d.ten_J[t, m.jnt_dofadr[j]] += m.wrap_prm[w]
            d.ten_wrapnum[t] = 0
            d.ten_length[t] = length
            continue
        divisor = 1.0
        k = 0
        while k < num - 1:
            type0 = m.wrap_type[adr + k]
            type1 = m.wrap_type[adr + k + 1]
            if type0 == WrapType.PULLEY or type1 == WrapType.PULLEY:
                if type0 == WrapType.PULLEY:
                    divisor = m.wrap_prm[adr + k]
                    _path_point(d, nwrapped, (0.0, 0.0, 0.0), -2)
                    nwrapped += 1
                k += 1
                continue
            s0 = m.wrap_objid[adr + k]
            p0 = vec3(d.site_xpos, s0)
            b0 = m.site_bodyid[s0]
            wrapped = type1 == WrapType.SPHERE or type1 == WrapType.CYLINDER
            wlen = -1.0
            g = -1
            w0 = w1 = p0
            if wrapped:
                g = m.wrap_objid[adr + k + 1]
                s1 = m.wrap_objid[adr + k + 2]
                side = int(round(m.wrap_prm[adr + k + 1]))
                sidepos = vec3(d.site_xpos, side) if side >= 0 else p0
                wlen, w0, w1 = wrap(p0, vec3(d.site_xpos, s1), vec3(d.geom_xpos, g),
                                    mat9(d.geom_xmat, g), m.geom_size[g, 0], type1, side >= 0,
                                    sidepos)
            else:
                s1 = m.wrap_objid[adr + k + 1]
            p1 = vec3(d.site_xpos, s1)
            b1 = m.site_bodyid[s1]
            _path_point(d, nwrapped, p0, -1)
            nwrapped += 1
            if wlen < 0.0:
                # straight segment: L += |p1 - p0| / divisor
                length += norm3(sub3(p1, p0)) / divisor
                _segment_jacobian(m, d, t, p0, b0, p1, b1, divisor)
            else:
                # site - tangent point - arc - tangent point - site
                length += (norm3(sub3(w0, p0)) + wlen + norm3(sub3(p1, w1))) / divisor
                bg = m.geom_bodyid[g]
                _segment_jacobian(m, d, t, p0, b0, w0, bg, divisor)
                _segment_jacobian(m, d, t, w1, bg, p1, b1, divisor)
                _path_point(d, nwrapped, w0, g)
                _path_point(d, nwrapped + 1, w1, g)
                nwrapped += 2
            k += 2 if wrapped else 1
            # the last site before a pulley or the end of the path
            if k == num - 1 or m.wrap_type[adr + k + 1] == WrapType.PULLEY:
                _path_point(d, nwrapped, p1, -1)
                nwrapped += 1
        d.ten_wrapnum[t] = nwrapped - d.ten_wrapadr[t]
        d.ten_length[t] = length


@jit
def _path_point(d, i, pos, obj):
    set3(d.wrap_xpos, i, pos)
    d.wrap_obj[i] = obj


@jit
def _segment_jacobian(m, d, t, p0, b0, p1, b1, divisor):
    """ten_J[t] += (jac(p1, b1) - jac(p0, b0))' u / divisor, u = (p1 - p0) / |p1 - p0| (MuJoCo's
    mju_normalize3: the x axis when the points coincide), for points on different bodies."""
    if b0 == b1:
        return
    dif = sub3(p1, p0)
    n = norm3(dif)
    u = (1.0, 0.0, 0.0) if n < MINVAL else scl3(dif, 1.0 / n)
    zero = (0.0, 0.0, 0.0)
    apply_ft(m, d, u, zero, p1, b1, d.ten_J[t], 1.0 / divisor)
    apply_ft(m, d, u, zero, p0, b0, d.ten_J[t], -1.0 / divisor)


# ------------------------------------------------------------------------------------------------
# inertia
# ------------------------------------------------------------------------------------------------
@jit
def crb(m, d):
    """Composite rigid body inertia (Featherstone's CRB) and joint-space inertia: crb qM."""
    # the arrays as locals (a store to one would make the compiler reload the others' fields)
    body_parentid = m.body_parentid
    dof_bodyid = m.dof_bodyid
    dof_Madr = m.dof_Madr
    dof_parentid = m.dof_parentid
    crb_ = d.crb
    cdof = d.cdof
    qM = d.qM
    nbody = body_parentid.shape[0]
    crb_[:, :] = d.cinert
    for i in range(nbody - 1, 0, -1):
        p = body_parentid[i]
        if p > 0:
            for k in range(10):
                crb_[p, k] += crb_[i, k]
    for i in range(dof_bodyid.shape[0]):
        # M(i, j) = cdof_j . (crb_body(i) cdof_i) for j in the ancestor chain of i
        buf = mul_inert_vec(row10(crb_, dof_bodyid[i]), row6(cdof, i))
        adr = dof_Madr[i]
        j = i
        while j >= 0:
            qM[adr] = dot6(row6(cdof, j), buf)
            j = dof_parentid[j]
            adr += 1
        qM[dof_Madr[i]] += m.dof_armature[i]


@jit
def factor_m(m, qLD, qLDiagInv):
    """In-place sparse L'DL factorisation following the kinematic tree, no fill-in (mj_factorM).

    On entry qLD holds the matrix in the layout of qM: the row of dof k holds M(k,k),
    M(k,parent(k)), ... up to the root. On exit the diagonal positions hold D and the others L.
    """
    nv = qLDiagInv.shape[0]
    madr = m.dof_Madr
    parent = m.dof_parentid
    nM = qLD.shape[0]
    for k in range(nv - 1, -1, -1):
        adr_kk = madr[k]
        if qLD[adr_kk] < MINVAL:
            qLD[adr_kk] = MINVAL
        i = parent[k]
        adr_ki = adr_kk + 1
        while i >= 0:
            tmp = qLD[adr_ki] / qLD[adr_kk]
            # row(i) -= tmp * tail of row(k) starting at i (same ancestors): the rows are
            # stored one after the other, so row i's length is the distance to row i + 1's
            adr_ij = madr[i]
            end = madr[i + 1] if i + 1 < nv else nM
            axpy_seg(qLD, adr_ij, -tmp, qLD, adr_ki, end - adr_ij)
            qLD[adr_ki] = tmp
            i = parent[i]
            adr_ki += 1
    for k in range(nv):
        qLDiagInv[k] = 1.0 / qLD[madr[k]]


@jit
def solve_m(m, qLD, qLDiagInv, x):
    """x <- M^-1 x with the sparse factor (mj_solveLD)."""
    solve_m_range(m, qLD, qLDiagInv, x, 0, x.shape[0])


@jit
def solve_m_range(m, qLD, qLDiagInv, x, adr, num):
    """x <- M^-1 x on the dofs adr .. adr + num - 1 only, which must be whole kinematic trees
    (closed under dof_parentid): M is block diagonal over trees, so the rest of x is untouched."""
    dof_Madr = m.dof_Madr
    dof_parentid = m.dof_parentid
    # x <- L^-T x
    for i in range(adr + num - 1, adr - 1, -1):
        xi = x[i]
        if xi != 0.0:
            a = dof_Madr[i] + 1
            j = dof_parentid[i]
            while j >= 0:
                x[j] -= qLD[a] * xi
                a += 1
                j = dof_parentid[j]
    # x <- D^-1 x
    for i in range(adr, adr + num):
        x[i] *= qLDiagInv[i]
    solve_l_range(m, qLD, x, adr, num)


@inlined
def solve_l_range(m, qLD, x, adr, num):
    """x <- L^-1 x (M = L' D L) on the dofs adr .. adr + num - 1 (whole trees): the last pass
    of solve_m_range."""
    dof_Madr = m.dof_Madr
    dof_parentid = m.dof_parentid
    for i in range(adr, adr + num):
        a = dof_Madr[i] + 1
        j = dof_parentid[i]
        s = 0.0
        while j >= 0:
            s += qLD[a] * x[j]
            a += 1
            j = dof_parentid[j]
        x[i] -= s


@jit
def mul_m(m, qM, vec, res):
    """res = M vec with the sparse inertia (mj_mulM)."""
    nv = vec.shape[0]
    for i in range(nv):
        res[i] = qM[m.dof_Madr[i]] * vec[i]
    for i in range(nv):
        adr = m.dof_Madr[i] + 1
        j = m.dof_parentid[i]
        while j >= 0:
            res[i] += qM[adr] * vec[j]
            res[j] += qM[adr] * vec[i]
            adr += 1
            j = m.dof_parentid[j]


# ------------------------------------------------------------------------------------------------
# velocities and bias forces
# ------------------------------------------------------------------------------------------------
@jit
def com_vel(m, d):
    """Com-based body velocities and dof axis derivatives: cvel cdof_dot."""
    d.cvel[0, :] = 0.0
    for i in range(1, m.body_parentid.shape[0]):
        cvel = row6(d.cvel, m.body_parentid[i])
        for j in range(m.body_jntadr[i], m.body_jntadr[i] + m.body_jntnum[i]):
            da = m.jnt_dofadr[j]
            t = m.jnt_type[j]
            if t == FREE:
                # translations are fixed in the world frame: cdof_dot = 0
                for k in range(3):
                    d.cdof_dot[da + k, :] = 0.0
                    cvel = add6(cvel, _scl_dof(d, da + k))
                da += 3
            if t == FREE or t == BALL:
                # cdof_dot = cvel x cdof, all three with the velocity before the rotation
                for k in range(3):
                    _set6(d.cdof_dot, da + k, cross_motion(cvel, row6(d.cdof, da + k)))
                for k in range(3):
                    cvel = add6(cvel, _scl_dof(d, da + k))
            else:
                _set6(d.cdof_dot, da, cross_motion(cvel, row6(d.cdof, da)))
                cvel = add6(cvel, _scl_dof(d, da))
        _set6(d.cvel, i, cvel)


@jit
def _scl_dof(d, i):
    q = d.qvel[i]
    return (d.cdof[i, 0] * q, d.cdof[i, 1] * q, d.cdof[i, 2] * q, d.cdof[i, 3] * q,
            d.cdof[i, 4] * q, d.cdof[i, 5] * q)


@jit
def _set6(a, i, v):
    for k in range(6):
        a[i, k] = v[k]


@jit
def rne(m, d, gravity_on, use_qacc, result):
    """Recursive Newton-Euler: result = M(q) qacc + c(q, qvel) (qacc omitted if not use_qacc).

    With use_qacc = False this is the bias force qfrc_bias of the paper's eq. (2).
    Writes cacc and cfrc_int as by-products.
    """
    # the arrays as locals (a store to one would make the compiler reload the others' fields)
    body_parentid = m.body_parentid
    body_dofadr = m.body_dofadr
    body_dofnum = m.body_dofnum
    dof_bodyid = m.dof_bodyid
    cacc = d.cacc
    cfrc_int = d.cfrc_int
    cdof = d.cdof
    cdof_dot = d.cdof_dot
    cinert = d.cinert
    cvel_ = d.cvel
    qvel = d.qvel
    qacc = d.qacc
    nbody = body_parentid.shape[0]
    g = (0.0, 0.0, 0.0)
    if gravity_on:
        g = (-m.opt_gravity[0], -m.opt_gravity[1], -m.opt_gravity[2])
    # world acceleration = -gravity (gravity as a fictitious upward acceleration)
    _set6(cacc, 0, (0.0, 0.0, 0.0, g[0], g[1], g[2]))
    cfrc_int[0, :] = 0.0
    for i in range(1, nbody):
        # cacc = cacc_parent + cdof_dot * qvel (+ cdof * qacc)
        acc = row6(cacc, body_parentid[i])
        da = body_dofadr[i]
        for k in range(body_dofnum[i]):
            acc = add6(acc, scl6_row(cdof_dot, da + k, qvel[da + k]))
            if use_qacc:
                acc = add6(acc, scl6_row(cdof, da + k, qacc[da + k]))
        _set6(cacc, i, acc)
        # cfrc = cinert * cacc + cvel x* (cinert * cvel)
        inert = row10(cinert, i)
        cvel = row6(cvel_, i)
        f = add6(mul_inert_vec(inert, acc), cross_force(cvel, mul_inert_vec(inert, cvel)))
        _set6(cfrc_int, i, f)
    for i in range(nbody - 1, 0, -1):
        p = body_parentid[i]
        if p > 0:
            for k in range(6):
                cfrc_int[p, k] += cfrc_int[i, k]
    for j in range(dof_bodyid.shape[0]):
        result[j] = dot6(row6(cdof, j), row6(cfrc_int, dof_bodyid[j]))


@jit
def scl6_row(a, i, s):
    return (a[i, 0] * s, a[i, 1] * s, a[i, 2] * s, a[i, 3] * s, a[i, 4] * s, a[i, 5] * s)


@jit
def tendon_actuator_velocity(m, d):
    """Tendon and actuator velocities: ten_velocity actuator_velocity."""
    nv = d.qvel.shape[0]
    for t in range(d.ten_velocity.shape[0]):
        s = 0.0
        for k in range(nv):
            s += d.ten_J[t, k] * d.qvel[k]
        d.ten_velocity[t] = s
    for i in range(d.actuator_velocity.shape[0]):
        lo, n = moment_span(m, i, nv)
        s = 0.0
        for k in range(lo, lo + n):
            s += d.actuator_moment[i, k] * d.qvel[k]
        d.actuator_velocity[i] = s


@inlined
def moment_span(m, i, nv):
    """(first dof, number of dofs) of the moment arms of actuator i that can be nonzero: the
    dof of a joint transmission (hinge or slide), else all of them. The rest of its row of
    actuator_moment is zero, so the products over the span are those over the row."""
    trn = m.actuator_trntype[i]
    if trn == TrnType.JOINT or trn == TrnType.JOINTINPARENT:
        return m.jnt_dofadr[m.actuator_trnid[i, 0]], 1
    return 0, nv

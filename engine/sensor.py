"""Sensors, computed at the stage MuJoCo computes them (engine_sensor.c): d.sensordata.

sensor_pos, sensor_vel and sensor_acc each write the sensors whose m.sensor_needstage is their
stage (MuJoCo's mj_sensorPos / Vel / Acc), then apply the cutoff: REAL values are clipped to
[-cutoff, cutoff], POSITIVE ones to at most cutoff; contact and fromto sensors are not clipped.
The velocity stage first computes subtree_vel (subtree_linvel, subtree_angmom) when a sensor
needs it, the acceleration stage rne_post_constraint (cacc, cfrc_int, cfrc_ext: the body
accelerations and forces after the constraint solve, MuJoCo's mj_rnePostConstraint).
``m.sensor_noise`` is stored, not applied: MuJoCo dropped its sensor noise in 3.1.4 (add your own
noise to d.sensordata). User sensors read zero, as MuJoCo's without a sensor callback.
DisableBit.SENSOR skips all three stages.

Frames and signs follow MuJoCo: spatial vectors are (rot, lin) about the centre of mass of the
body's kinematic tree (subtree_com[body_rootid]); an object of type BODY is the body's inertial
frame (xipos, ximat), XBODY its own frame (xpos, xmat).
"""
import math

import numpy as np

from . import collision_driver as cd
from .enums import (CONDATA_SIZE, ConDataField, ConReduce, ConstraintType, DataType, DisableBit,
                    EqType, JointType, ObjType, Projection, RayDataField, SensorType, Stage,
                    TrnType)
from .jit import calls_stages, jit
from .math import (MINVAL, add3, cross3, cross_force, dot3, mat9, mul_inert_vec, mulmattvec3,
                   mulmatvec3, norm3, quat4, quat_mul, quat_normalize, quat_sub, row6, row10,
                   scl3, sub3, vec3)
from .ray import ALL_GROUPS, ray_kernel, ray_shape
from .smooth import factor_m, solve_m

S = SensorType
POS = int(Stage.POS)
VEL = int(Stage.VEL)
ACC = int(Stage.ACC)
REAL = int(DataType.REAL)
POSITIVE = int(DataType.POSITIVE)
OBJ_UNKNOWN = int(ObjType.UNKNOWN)
OBJ_BODY = int(ObjType.BODY)
OBJ_XBODY = int(ObjType.XBODY)
OBJ_GEOM = int(ObjType.GEOM)
OBJ_SITE = int(ObjType.SITE)
OBJ_CAMERA = int(ObjType.CAMERA)
FREE = int(JointType.FREE)
BALL = int(JointType.BALL)
CONTACT_PYRAMIDAL = int(ConstraintType.CONTACT_PYRAMIDAL)
LIMIT_JOINT = int(ConstraintType.LIMIT_JOINT)
LIMIT_TENDON = int(ConstraintType.LIMIT_TENDON)
EQUALITY = int(ConstraintType.EQUALITY)
SENSOR_OFF = int(DisableBit.SENSOR)
GRAVITY_OFF = int(DisableBit.GRAVITY)
SPRING_OFF = int(DisableBit.PASSIVE | DisableBit.SPRING)
ZERO3 = (0.0, 0.0, 0.0)
ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


# ------------------------------------------------------------------------------------------------
# frames, velocities and accelerations of objects
# ------------------------------------------------------------------------------------------------
@jit
def frame_xpos_xmat(m, d, objtype, objid):
    """Position and orientation (row-major) of an object's frame (get_xpos_xmat)."""
    if objtype == OBJ_XBODY:
        return vec3(d.xpos, objid), mat9(d.xmat, objid)
    if objtype == OBJ_BODY:
        return vec3(d.xipos, objid), mat9(d.ximat, objid)
    if objtype == OBJ_GEOM:
        return vec3(d.geom_xpos, objid), mat9(d.geom_xmat, objid)
    if objtype == OBJ_SITE:
        return vec3(d.site_xpos, objid), mat9(d.site_xmat, objid)
    return vec3(d.cam_xpos, objid), mat9(d.cam_xmat, objid)


@jit
def frame_xquat(m, d, objtype, objid):
    """Orientation quaternion of an object's frame: its body's xquat times its local quat."""
    if objtype == OBJ_XBODY:
        return quat4(d.xquat, objid)
    if objtype == OBJ_BODY:
        return quat_mul(quat4(d.xquat, objid), quat4(m.body_iquat, objid))
    if objtype == OBJ_GEOM:
        return quat_mul(quat4(d.xquat, m.geom_bodyid[objid]), quat4(m.geom_quat, objid))
    if objtype == OBJ_SITE:
        return quat_mul(quat4(d.xquat, m.site_bodyid[objid]), quat4(m.site_quat, objid))
    return quat_mul(quat4(d.xquat, m.cam_bodyid[objid]), quat4(m.cam_quat, objid))


@jit
def frame_body(m, objtype, objid):
    """The body an object belongs to."""
    if objtype == OBJ_GEOM:
        return m.geom_bodyid[objid]
    if objtype == OBJ_SITE:
        return m.site_bodyid[objid]
    if objtype == OBJ_CAMERA:
        return m.cam_bodyid[objid]
    return objid


@jit
def shift_motion(v, newpos, oldpos):
    """A motion (rot, lin) seen at newpos instead of oldpos: lin -= (newpos - oldpos) x rot."""
    w = (v[0], v[1], v[2])
    lin = sub3((v[3], v[4], v[5]), cross3(sub3(newpos, oldpos), w))
    return (w[0], w[1], w[2], lin[0], lin[1], lin[2])


@jit
def shift_force(f, newpos, oldpos):
    """A force (torque, force) taken about newpos instead of oldpos: torque -= dif x force."""
    lin = (f[3], f[4], f[5])
    t = sub3((f[0], f[1], f[2]), cross3(sub3(newpos, oldpos), lin))
    return (t[0], t[1], t[2], lin[0], lin[1], lin[2])


@jit
def rotate6_t(mat, v):
    """Both halves of a 6-vector into the frame mat (mat' v)."""
    a = mulmattvec3(mat, (v[0], v[1], v[2]))
    b = mulmattvec3(mat, (v[3], v[4], v[5]))
    return (a[0], a[1], a[2], b[0], b[1], b[2])


@jit
def object_velocity(m, d, objtype, objid, local):
    """(angular, linear) velocity of an object's frame origin, in the world frame or, if local,
    in the object's frame (mj_objectVelocity)."""
    body = frame_body(m, objtype, objid)
    pos, mat = frame_xpos_xmat(m, d, objtype, objid)
    v = shift_motion(row6(d.cvel, body), pos, vec3(d.subtree_com, m.body_rootid[body]))
    return rotate6_t(mat, v) if local else v


@jit
def object_acceleration(m, d, objtype, objid, local):
    """(angular, linear) acceleration of an object's frame origin, world frame or local
    (mj_objectAcceleration): cacc moved to the point, plus the Coriolis term w x v. A body
    welded to the world accelerates with it (-gravity, as rne_post_constraint sets it)."""
    body = frame_body(m, objtype, objid)
    pos, mat = frame_xpos_xmat(m, d, objtype, objid)
    com = vec3(d.subtree_com, m.body_rootid[body])
    a = shift_motion(row6(d.cacc, body), pos, com)
    v = shift_motion(row6(d.cvel, body), pos, com)
    if local:
        a = rotate6_t(mat, a)
        v = rotate6_t(mat, v)
    c = cross3((v[0], v[1], v[2]), (v[3], v[4], v[5]))
    return (a[0], a[1], a[2], a[3] + c[0], a[4] + c[1], a[5] + c[2])


@jit
def point_velocity(m, d, body, point):
    """(angular, linear) velocity of a point moving with a body, world frame."""
    return shift_motion(row6(d.cvel, body), point, vec3(d.subtree_com, m.body_rootid[body]))


# ------------------------------------------------------------------------------------------------
# contact forces
# ------------------------------------------------------------------------------------------------
@jit
def _contact_component(m, d, c, k):
    adr = d.contact_efc_address[c]
    dim = d.contact_dim[c]
    if adr < 0 or k >= dim:
        return 0.0
    if d.efc_type[adr] != CONTACT_PYRAMIDAL:
        return d.efc_force[adr + k]
    # pyramid edges: f_n = sum of the edge forces, f_k = mu_k (f_k+ - f_k-)
    if k == 0:
        s = 0.0
        for r in range(2 * (dim - 1)):
            s += d.efc_force[adr + r]
        return s
    return d.contact_friction[c, k - 1] * (d.efc_force[adr + 2 * k - 2]
                                           - d.efc_force[adr + 2 * k - 1])


@jit
def contact_force6(m, d, c):
    """Force and torque of contact c in its frame (normal, tangents, torsion, rolling), zero
    for a contact without rows (MuJoCo's mj_contactForce)."""
    return (_contact_component(m, d, c, 0), _contact_component(m, d, c, 1),
            _contact_component(m, d, c, 2), _contact_component(m, d, c, 3),
            _contact_component(m, d, c, 4), _contact_component(m, d, c, 5))


@jit
def contact_world(d, c, f6):
    """A contact-frame (force, torque) as a world-frame (torque, force)."""
    F = mat9(d.contact_frame, c)
    t = mulmattvec3(F, (f6[3], f6[4], f6[5]))
    f = mulmattvec3(F, (f6[0], f6[1], f6[2]))
    return (t[0], t[1], t[2], f[0], f[1], f[2])


# ------------------------------------------------------------------------------------------------
# stages that sensors need: subtree velocities, accelerations and forces after the constraints
# ------------------------------------------------------------------------------------------------
@jit
def subtree_vel(m, d):
    """Linear velocity of each subtree's com and its angular momentum about it (mj_subtreeVel):
    subtree_linvel subtree_angmom."""
    _subtree_vel(m.body_parentid, m.body_rootid, m.body_mass, m.body_inertia,
                 m.body_subtreemass, d.cvel, d.xipos, d.ximat, d.subtree_com, d.subtree_linvel,
                 d.subtree_angmom)


@jit
def _subtree_vel(parent, rootid, mass, inertia, subtreemass, cvel, xipos, ximat, subtree_com,
                 linvel, angmom):
    """subtree_vel over the arrays (arguments: compiled code would read a field of d again
    after every store to d's arrays)."""
    nbody = parent.shape[0]
    for b in range(nbody):
        # the body's velocity at its com (object_velocity of OBJ_BODY, world frame)
        v = shift_motion(row6(cvel, b), vec3(xipos, b), vec3(subtree_com, rootid[b]))
        for k in range(3):
            linvel[b, k] = mass[b] * v[3 + k]
        # body angular momentum about its com: R diag(I) R' w
        R = mat9(ximat, b)
        wl = mulmattvec3(R, (v[0], v[1], v[2]))
        L = mulmatvec3(R, (wl[0] * inertia[b, 0], wl[1] * inertia[b, 1], wl[2] * inertia[b, 2]))
        for k in range(3):
            angmom[b, k] = L[k]
    # linear momentum summed up the tree, then divided by the subtree mass
    for b in range(nbody - 1, -1, -1):
        if b > 0:
            p = parent[b]
            for k in range(3):
                linvel[p, k] += linvel[b, k]
        s = 1.0 / max(MINVAL, subtreemass[b])
        for k in range(3):
            linvel[b, k] *= s
    for b in range(nbody - 1, 0, -1):
        p = parent[b]
        v = shift_motion(row6(cvel, b), vec3(xipos, b), vec3(subtree_com, rootid[b]))
        # momentum of the body's com motion relative to its subtree com
        dx = sub3(vec3(xipos, b), vec3(subtree_com, b))
        dv = sub3((v[3], v[4], v[5]), vec3(linvel, b))
        dl = cross3(dx, scl3(dv, mass[b]))
        for k in range(3):
            angmom[b, k] += dl[k]
            angmom[p, k] += angmom[b, k]
        # momentum of the subtree's com motion relative to the parent's subtree com
        dx = sub3(vec3(subtree_com, b), vec3(subtree_com, p))
        dv = scl3(sub3(vec3(linvel, b), vec3(linvel, p)), subtreemass[b])
        dl = cross3(dx, dv)
        for k in range(3):
            angmom[p, k] += dl[k]


@jit
def _add_ext(m, d, body, wrench, point, sign):
    """cfrc_ext[body] += sign * (world torque, force at point), taken about the tree's com."""
    f = shift_force(wrench, vec3(d.subtree_com, m.body_rootid[body]), point)
    for k in range(6):
        d.cfrc_ext[body, k] += sign * f[k]


@jit
def rne_post_constraint(m, d, qacc):
    """Body accelerations and forces at the joint accelerations qacc with the constraint
    forces (mj_rnePostConstraint): cacc, cfrc_ext (applied, contact, connect and weld forces
    on each body) and cfrc_int (the force of the parent on the body: cinert cacc + cvel x*
    cinert cvel - cfrc_ext, summed over the subtree)."""
    nbody = m.body_parentid.shape[0]
    for k in range(6):
        d.cacc[0, k] = 0.0
        d.cfrc_int[0, k] = 0.0
    if not m.opt_disableflags[0] & GRAVITY_OFF:
        for k in range(3):
            d.cacc[0, 3 + k] = -m.opt_gravity[k]
    d.cfrc_ext[:, :] = 0.0
    for b in range(1, nbody):
        x = row6(d.xfrc_applied, b)
        if x[0] != 0.0 or x[1] != 0.0 or x[2] != 0.0 or x[3] != 0.0 or x[4] != 0.0 \
                or x[5] != 0.0:
            _add_ext(m, d, b, (x[3], x[4], x[5], x[0], x[1], x[2]), vec3(d.xipos, b), 1.0)
    # contacts: geom 2's body receives the contact force, geom 1's body its opposite
    for c in range(d.ncon[0]):
        if d.contact_efc_address[c] < 0:
            continue
        w = contact_world(d, c, contact_force6(m, d, c))
        pos = vec3(d.contact_pos, c)
        b1 = m.geom_bodyid[d.contact_geom1[c]]
        b2 = m.geom_bodyid[d.contact_geom2[c]]
        if b1 > 0:
            _add_ext(m, d, b1, w, pos, -1.0)
        if b2 > 0:
            _add_ext(m, d, b2, w, pos, 1.0)
    # connect and weld: the row forces (world frame) on body 1 at its anchor, opposite on body 2
    i = 0
    nefc = d.nefc[0]
    while i < nefc and d.efc_type[i] == EQUALITY:
        e = d.efc_id[i]
        t = m.eq_type[e]
        if t != EqType.CONNECT and t != EqType.WELD:
            i += 1
            continue
        weld = t == EqType.WELD
        f = (d.efc_force[i], d.efc_force[i + 1], d.efc_force[i + 2])
        tq = (d.efc_force[i + 3], d.efc_force[i + 4], d.efc_force[i + 5]) if weld else ZERO3
        w = (tq[0], tq[1], tq[2], f[0], f[1], f[2])
        sites = m.eq_objtype[e] == OBJ_SITE
        for side in range(2):
            o = m.eq_obj1id[e] if side == 0 else m.eq_obj2id[e]
            if sites:
                body = m.site_bodyid[o]
                offset = vec3(m.site_pos, o)
            else:
                body = o
                # anchors: connect 0:3 on body 1, 3:6 on body 2; weld the other way round
                a = 3 if weld == (side == 0) else 0
                offset = (m.eq_data[e, a], m.eq_data[e, a + 1], m.eq_data[e, a + 2])
            if body > 0:
                point = add3(vec3(d.xpos, body), mulmatvec3(mat9(d.xmat, body), offset))
                _add_ext(m, d, body, w, point, 1.0 if side == 0 else -1.0)
        i += 6 if weld else 3
    _rne_post_bodies(m.body_parentid, m.body_dofadr, m.body_dofnum, d.cdof, d.cdof_dot, d.qvel,
                     qacc, d.cinert, d.cvel, d.cfrc_ext, d.cacc, d.cfrc_int)


@jit
def _rne_post_bodies(parent, dofadr, dofnum, cdof, cdof_dot, qvel, qacc, cinert, cvel, cfrc_ext,
                     cacc, cfrc_int):
    """rne_post_constraint's passes over the bodies: cacc = cacc_parent + cdof_dot qvel +
    cdof qacc; cfrc_int = cinert cacc + cvel x* (cinert cvel) - cfrc_ext, then summed from the
    leaves. (The arrays are arguments: compiled code would read a field of d again after every
    store to d's arrays.)"""
    nbody = parent.shape[0]
    for b in range(1, nbody):
        p = parent[b]
        da = dofadr[b]
        for k in range(6):
            s = cacc[p, k]
            for j in range(da, da + dofnum[b]):
                s += cdof_dot[j, k] * qvel[j]
            for j in range(da, da + dofnum[b]):
                s += cdof[j, k] * qacc[j]
            cacc[b, k] = s
        inert = row10(cinert, b)
        v = row6(cvel, b)
        fb = mul_inert_vec(inert, row6(cacc, b))
        fc = cross_force(v, mul_inert_vec(inert, v))
        for k in range(6):
            cfrc_int[b, k] = fb[k] + fc[k] - cfrc_ext[b, k]
    for b in range(nbody - 1, 0, -1):
        p = parent[b]
        for k in range(6):
            cfrc_int[p, k] += cfrc_int[b, k]


# ------------------------------------------------------------------------------------------------
# energy
# ------------------------------------------------------------------------------------------------
@jit
def _quat_dist2(qpos, qspring, pa):
    dif = quat_sub((qpos[pa], qpos[pa + 1], qpos[pa + 2], qpos[pa + 3]),
                   (qspring[pa], qspring[pa + 1], qspring[pa + 2], qspring[pa + 3]))
    return dot3(dif, dif)


@jit
def energy_pos(m, d):
    """Potential energy of gravity and of joint and tendon springs (mj_energyPos): energy[0]."""
    pot = 0.0
    if not m.opt_disableflags[0] & GRAVITY_OFF:
        for b in range(1, m.body_parentid.shape[0]):
            pot -= m.body_mass[b] * dot3((m.opt_gravity[0], m.opt_gravity[1],
                                          m.opt_gravity[2]), vec3(d.xipos, b))
    if not m.opt_disableflags[0] & SPRING_OFF:
        for j in range(m.jnt_type.shape[0]):
            k = m.jnt_stiffness[j]
            if k == 0.0:
                continue
            pa = m.jnt_qposadr[j]
            t = m.jnt_type[j]
            if t == FREE:
                x = norm3((d.qpos[pa] - m.qpos_spring[pa], d.qpos[pa + 1] - m.qpos_spring[pa + 1],
                           d.qpos[pa + 2] - m.qpos_spring[pa + 2]))
                pot += 0.5 * k * x * x
                pa += 3
            if t == FREE or t == BALL:
                pot += 0.5 * k * _quat_dist2(d.qpos, m.qpos_spring, pa)
            else:
                x = d.qpos[pa] - m.qpos_spring[pa]
                pot += 0.5 * k * x * x
        for t in range(m.tendon_stiffness.shape[0]):
            length = d.ten_length[t]
            x = 0.0
            if length > m.tendon_lengthspring[t, 1]:
                x = length - m.tendon_lengthspring[t, 1]
            elif length < m.tendon_lengthspring[t, 0]:
                x = length - m.tendon_lengthspring[t, 0]
            pot += 0.5 * m.tendon_stiffness[t] * x * x
    d.energy[0] = pot


@jit
def energy_vel(m, d):
    """Kinetic energy 0.5 qvel' M qvel from the sparse qM (mj_energyVel): energy[1]."""
    kin = 0.0
    for i in range(d.qvel.shape[0]):
        vi = d.qvel[i]
        adr = m.dof_Madr[i]
        kin += d.qM[adr] * vi * vi
        j = m.dof_parentid[i]
        while j >= 0:
            adr += 1
            kin += 2.0 * d.qM[adr] * vi * d.qvel[j]
            j = m.dof_parentid[j]
    d.energy[1] = 0.5 * kin


# ------------------------------------------------------------------------------------------------
# geometry helpers
# ------------------------------------------------------------------------------------------------
@jit
def inside_shape(pos, mat, size, gtype, point):
    """1 if point is strictly inside the primitive shape (pos, mat, size), else 0
    (mju_insideGeom; meshes and height fields contain nothing)."""
    v = sub3(point, pos)
    if gtype == cd.SPHERE:
        return 1.0 if dot3(v, v) < size[0] * size[0] else 0.0
    p = mulmattvec3(mat, v)
    inside = False
    if gtype == cd.CAPSULE:
        z = p[2] - min(max(p[2], -size[1]), size[1])
        inside = p[0] * p[0] + p[1] * p[1] + z * z < size[0] * size[0]
    elif gtype == cd.ELLIPSOID:
        inside = (p[0] * p[0] / (size[0] * size[0]) + p[1] * p[1] / (size[1] * size[1])
                  + p[2] * p[2] / (size[2] * size[2]) < 1.0)
    elif gtype == cd.CYLINDER:
        inside = abs(p[2]) < size[1] and p[0] * p[0] + p[1] * p[1] < size[0] * size[0]
    elif gtype == cd.BOX:
        inside = abs(p[0]) < size[0] and abs(p[1]) < size[1] and abs(p[2]) < size[2]
    elif gtype == cd.PLANE:
        inside = p[2] < 0.0
    return 1.0 if inside else 0.0


@jit
def geom_distance(m, d, g1, g2, distmax):
    """Smallest signed distance between geoms g1 and g2 if below distmax, and the segment
    between their nearest points, from g1 to g2 (mj_geomDistance): the collision function of
    the pair with distmax as margin. Box pairs go through the general convex routine, as
    MuJoCo's distance does (its native CCD). Returns (dist, fromto 6-tuple)."""
    flip = m.geom_type[g1] > m.geom_type[g2]
    a = g2 if flip else g1
    b = g1 if flip else g2
    code = cd.COLLISION_FUNC[m.geom_type[a], m.geom_type[b]]
    if code == cd.C_NONE:
        return distmax, ZERO6
    if code == cd.C_BOX_BOX:
        code = cd.C_CONVEX
    num = cd.narrowphase(m, d, code, a, b, distmax)
    dist = distmax
    best = -1
    for i in range(num):
        if d.col_dist[i] < dist:
            dist = d.col_dist[i]
            best = i
    if best < 0:
        return dist, ZERO6
    n = (d.col_frame[best, 0], d.col_frame[best, 1], d.col_frame[best, 2])
    n = scl3(n, 1.0 / max(norm3(n), MINVAL))
    h = -0.5 * dist if flip else 0.5 * dist
    pos = vec3(d.col_pos, best)
    p1 = sub3(pos, scl3(n, h))
    p2 = add3(pos, scl3(n, h))
    return dist, (p1[0], p1[1], p1[2], p2[0], p2[1], p2[2])


@jit
def _pixels(length, size, pixels):
    """A length on the image sensor in pixels, in single precision as MuJoCo computes it from
    its single-precision camera fields: length / size * pixels."""
    return float(np.float32(length) / np.float32(size) * np.float32(pixels))


@jit
def cam_intrinsics(m, cam):
    """Focal lengths and principal point in pixels of a camera, and the orthographic extent
    (mju_camIntrinsics)."""
    width = m.cam_resolution[cam, 0]
    height = m.cam_resolution[cam, 1]
    sx = m.cam_sensorsize[cam, 0]
    sy = m.cam_sensorsize[cam, 1]
    if m.cam_projection[cam] == Projection.ORTHOGRAPHIC:
        return 0.5 * width, 0.5 * height, 0.5 * width, 0.5 * height, m.cam_fovy[cam]
    if sx != 0.0 and sy != 0.0:
        return (_pixels(m.cam_intrinsic[cam, 0], sx, width),
                _pixels(m.cam_intrinsic[cam, 1], sy, height),
                _pixels(m.cam_intrinsic[cam, 2], sx, width),
                _pixels(m.cam_intrinsic[cam, 3], sy, height), m.cam_fovy[cam])
    f = 0.5 / math.tan(m.cam_fovy[cam] * math.pi / 360.0) * height
    return f, f, 0.5 * width, 0.5 * height, m.cam_fovy[cam]


# ------------------------------------------------------------------------------------------------
# sensors by stage
# ------------------------------------------------------------------------------------------------
@jit
def _put3(out, adr, v):
    out[adr] = v[0]
    out[adr + 1] = v[1]
    out[adr + 2] = v[2]


@jit
def _limit_row(d, ctype, objid):
    """First constraint row of the joint or tendon limit objid, -1 if not active."""
    for j in range(d.nefc[0]):
        if d.efc_type[j] == ctype and d.efc_id[j] == objid:
            return j
    return -1


@jit
def apply_cutoff(m, d, i):
    """Clip sensor i at its cutoff: REAL on both sides, POSITIVE from above; contact and fromto
    sensors are left alone (the distance sensors use the cutoff as their range)."""
    cutoff = m.sensor_cutoff[i]
    t = m.sensor_type[i]
    if cutoff <= 0.0 or t == S.CONTACT or t == S.GEOMFROMTO:
        return
    dt = m.sensor_datatype[i]
    adr = m.sensor_adr[i]
    for k in range(adr, adr + m.sensor_dim[i]):
        if dt == REAL:
            d.sensordata[k] = min(max(d.sensordata[k], -cutoff), cutoff)
        elif dt == POSITIVE:
            d.sensordata[k] = min(cutoff, d.sensordata[k])


@jit
def _cam_project(m, d, site, cam, out, adr):
    """Pixel coordinates of a site in a camera image, origin at the top left (cam_project)."""
    width = m.cam_resolution[cam, 0]
    height = m.cam_resolution[cam, 1]
    if m.cam_sensorsize[cam, 0] != 0.0 and m.cam_sensorsize[cam, 1] != 0.0:
        fx = _pixels(m.cam_intrinsic[cam, 0], m.cam_sensorsize[cam, 0], width)
        fy = _pixels(m.cam_intrinsic[cam, 1], m.cam_sensorsize[cam, 1], height)
    else:
        fx = fy = 0.5 / math.tan(m.cam_fovy[cam] * math.pi / 360.0) * height
    p = mulmattvec3(mat9(d.cam_xmat, cam), sub3(vec3(d.site_xpos, site), vec3(d.cam_xpos, cam)))
    denom = p[2]
    if abs(denom) < MINVAL:
        denom = min(denom, -MINVAL) if denom < 0.0 else max(denom, MINVAL)
    out[adr] = -fx * (p[0] / denom) + 0.5 * width
    out[adr + 1] = fy * (p[1] / denom) + 0.5 * height


@jit
def _raydata(out, k, bits, dist, origin, direction, normal, cam_pos, cam_z, camera):
    """One ray's fields (dist dir origin point normal depth, those in bits) from out[k];
    returns the next free index (fill_raydata)."""
    hit = dist >= 0.0
    if bits & (1 << RayDataField.DIST):
        out[k] = dist
        k += 1
    if bits & (1 << RayDataField.DIR):
        _put3(out, k, direction if hit else ZERO3)
        k += 3
    if bits & (1 << RayDataField.ORIGIN):
        _put3(out, k, origin)
        k += 3
    point = add3(origin, scl3(direction, dist)) if hit else ZERO3
    if bits & (1 << RayDataField.POINT):
        _put3(out, k, point)
        k += 3
    if bits & (1 << RayDataField.NORMAL):
        _put3(out, k, normal if hit else ZERO3)
        k += 3
    if bits & (1 << RayDataField.DEPTH):
        if not hit:
            out[k] = -1.0
        elif camera:
            out[k] = -dot3(sub3(point, cam_pos), cam_z)
        else:
            out[k] = dist
        k += 1
    return k


@jit
def _rangefinder(m, d, i):
    """Distance along a site's z axis to the nearest visible geom of another body, or one ray
    per pixel of a camera (perspective: from the camera; orthographic: parallel)."""
    bits = m.sensor_intprm[i, 0]
    obj = m.sensor_objid[i]
    k = m.sensor_adr[i]
    if m.sensor_objtype[i] == OBJ_SITE:
        mat = mat9(d.site_xmat, obj)
        direction = (mat[2], mat[5], mat[8])
        origin = vec3(d.site_xpos, obj)
        _, dist, normal = ray_kernel(m, d, origin, direction, ALL_GROUPS, True,
                                     m.site_bodyid[obj])
        _raydata(d.sensordata, k, bits, dist, origin, direction, normal, ZERO3, ZERO3, False)
        return
    cam_pos = vec3(d.cam_xpos, obj)
    mat = mat9(d.cam_xmat, obj)
    cam_z = (mat[2], mat[5], mat[8])
    fx, fy, cx, cy, extent = cam_intrinsics(m, obj)
    ortho = m.cam_projection[obj] == Projection.ORTHOGRAPHIC
    for row in range(m.cam_resolution[obj, 1]):
        for col in range(m.cam_resolution[obj, 0]):
            # pixel centre, row 0 at the top of the image (mju_camPixelRay)
            px = col + 0.5 - cx
            py = row + 0.5 - cy
            if ortho:
                direction = scl3(cam_z, -1.0)
                origin = add3(cam_pos, mulmatvec3(mat, (px / fx * 0.5 * extent,
                                                        -py / fy * 0.5 * extent, 0.0)))
            else:
                origin = cam_pos
                direction = mulmatvec3(mat, (px / fx, -py / fy, -1.0))
                direction = scl3(direction, 1.0 / max(norm3(direction), MINVAL))
            _, dist, normal = ray_kernel(m, d, origin, direction, ALL_GROUPS, True,
                                         m.cam_bodyid[obj])
            k = _raydata(d.sensordata, k, bits, dist, origin, direction, normal, cam_pos,
                         cam_z, True)


@jit
def _geom_range(m, objtype, objid):
    """First geom and number of geoms of a geom or of a body's geoms."""
    if objtype == OBJ_BODY:
        return m.body_geomadr[objid], m.body_geomnum[objid]
    return objid, 1


@jit
def _geom_distance_sensor(m, d, i):
    """distance, normal, fromto: the nearest pair among the geoms of the two objects, within
    the cutoff."""
    cutoff = m.sensor_cutoff[i]
    dist = cutoff
    fromto = ZERO6
    a1, n1 = _geom_range(m, m.sensor_objtype[i], m.sensor_objid[i])
    a2, n2 = _geom_range(m, m.sensor_reftype[i], m.sensor_refid[i])
    for g1 in range(a1, a1 + n1):
        for g2 in range(a2, a2 + n2):
            dn, ft = geom_distance(m, d, g1, g2, cutoff)
            if dn < dist:
                dist = dn
                fromto = ft
    adr = m.sensor_adr[i]
    t = m.sensor_type[i]
    if t == S.GEOMDIST:
        d.sensordata[adr] = dist
    elif t == S.GEOMNORMAL:
        n = (fromto[3] - fromto[0], fromto[4] - fromto[1], fromto[5] - fromto[2])
        if n[0] != 0.0 or n[1] != 0.0 or n[2] != 0.0:
            n = scl3(n, 1.0 / max(norm3(n), MINVAL))
        _put3(d.sensordata, adr, n)
    else:
        for k in range(6):
            d.sensordata[adr + k] = fromto[k]


@jit
def _compute_pos(m, d, i):
    t = m.sensor_type[i]
    adr = m.sensor_adr[i]
    out = d.sensordata
    objtype = m.sensor_objtype[i]
    obj = m.sensor_objid[i]
    reftype = m.sensor_reftype[i]
    ref = m.sensor_refid[i]
    if t == S.MAGNETOMETER:
        _put3(out, adr, mulmattvec3(mat9(d.site_xmat, obj), (m.opt_magnetic[0], m.opt_magnetic[1],
                                                              m.opt_magnetic[2])))
    elif t == S.CAMPROJECTION:
        _cam_project(m, d, obj, ref, out, adr)
    elif t == S.RANGEFINDER:
        _rangefinder(m, d, i)
    elif t == S.JOINTPOS:
        out[adr] = d.qpos[m.jnt_qposadr[obj]]
    elif t == S.TENDONPOS:
        out[adr] = d.ten_length[obj]
    elif t == S.ACTUATORPOS:
        out[adr] = d.actuator_length[obj]
    elif t == S.BALLQUAT:
        pa = m.jnt_qposadr[obj]
        q = quat_normalize((d.qpos[pa], d.qpos[pa + 1], d.qpos[pa + 2], d.qpos[pa + 3]))
        for k in range(4):
            out[adr + k] = q[k]
    elif t == S.JOINTLIMITPOS or t == S.TENDONLIMITPOS:
        j = _limit_row(d, LIMIT_JOINT if t == S.JOINTLIMITPOS else LIMIT_TENDON, obj)
        out[adr] = d.efc_pos[j] - d.efc_margin[j] if j >= 0 else 0.0
    elif t == S.FRAMEPOS or t == S.FRAMEXAXIS or t == S.FRAMEYAXIS or t == S.FRAMEZAXIS:
        pos, mat = frame_xpos_xmat(m, d, objtype, obj)
        c = t - S.FRAMEXAXIS
        v = pos if t == S.FRAMEPOS else (mat[c], mat[c + 3], mat[c + 6])
        if ref >= 0:
            rpos, rmat = frame_xpos_xmat(m, d, reftype, ref)
            v = mulmattvec3(rmat, sub3(pos, rpos) if t == S.FRAMEPOS else v)
        _put3(out, adr, v)
    elif t == S.FRAMEQUAT:
        q = frame_xquat(m, d, objtype, obj)
        if ref >= 0:
            r = frame_xquat(m, d, reftype, ref)
            q = quat_mul((r[0], -r[1], -r[2], -r[3]), q)
        for k in range(4):
            out[adr + k] = q[k]
    elif t == S.SUBTREECOM:
        _put3(out, adr, vec3(d.subtree_com, obj))
    elif t == S.INSIDESITE:
        pos, _ = frame_xpos_xmat(m, d, objtype, obj)
        # a massless body with mass below it (a flex parent) is where its subtree com is
        if (objtype == OBJ_BODY and obj > 0 and m.body_mass[obj] < MINVAL
                and m.body_subtreemass[obj] >= MINVAL):
            pos = vec3(d.subtree_com, obj)
        out[adr] = inside_shape(vec3(d.site_xpos, ref), mat9(d.site_xmat, ref),
                                vec3(m.site_size, ref), m.site_type[ref], pos)
    elif t == S.GEOMDIST or t == S.GEOMNORMAL or t == S.GEOMFROMTO:
        _geom_distance_sensor(m, d, i)
    elif t == S.E_POTENTIAL:
        energy_pos(m, d)
        out[adr] = d.energy[0]
    elif t == S.E_KINETIC:
        energy_vel(m, d)
        out[adr] = d.energy[1]
    elif t == S.CLOCK:
        out[adr] = d.time[0]
    elif t == S.CONTACT:
        _contact_sensor(m, d, i)


@jit
def _compute_vel(m, d, i):
    t = m.sensor_type[i]
    adr = m.sensor_adr[i]
    out = d.sensordata
    objtype = m.sensor_objtype[i]
    obj = m.sensor_objid[i]
    reftype = m.sensor_reftype[i]
    ref = m.sensor_refid[i]
    if t == S.VELOCIMETER or t == S.GYRO:
        v = object_velocity(m, d, OBJ_SITE, obj, True)
        _put3(out, adr, (v[3], v[4], v[5]) if t == S.VELOCIMETER else (v[0], v[1], v[2]))
    elif t == S.JOINTVEL:
        out[adr] = d.qvel[m.jnt_dofadr[obj]]
    elif t == S.TENDONVEL:
        out[adr] = d.ten_velocity[obj]
    elif t == S.ACTUATORVEL:
        out[adr] = d.actuator_velocity[obj]
    elif t == S.BALLANGVEL:
        da = m.jnt_dofadr[obj]
        _put3(out, adr, (d.qvel[da], d.qvel[da + 1], d.qvel[da + 2]))
    elif t == S.JOINTLIMITVEL or t == S.TENDONLIMITVEL:
        j = _limit_row(d, LIMIT_JOINT if t == S.JOINTLIMITVEL else LIMIT_TENDON, obj)
        out[adr] = d.efc_vel[j] if j >= 0 else 0.0
    elif t == S.FRAMELINVEL or t == S.FRAMEANGVEL:
        v = object_velocity(m, d, objtype, obj, False)
        if ref >= 0:
            # relative to a moving frame: v - v_ref + (p - p_ref) x w_ref, in the ref's axes
            pos, _ = frame_xpos_xmat(m, d, objtype, obj)
            rpos, rmat = frame_xpos_xmat(m, d, reftype, ref)
            vr = object_velocity(m, d, reftype, ref, False)
            w = sub3((v[0], v[1], v[2]), (vr[0], vr[1], vr[2]))
            lin = add3(sub3((v[3], v[4], v[5]), (vr[3], vr[4], vr[5])),
                       cross3(sub3(pos, rpos), (vr[0], vr[1], vr[2])))
            v = rotate6_t(rmat, (w[0], w[1], w[2], lin[0], lin[1], lin[2]))
        _put3(out, adr, (v[3], v[4], v[5]) if t == S.FRAMELINVEL else (v[0], v[1], v[2]))
    elif t == S.SUBTREELINVEL:
        _put3(out, adr, vec3(d.subtree_linvel, obj))
    elif t == S.SUBTREEANGMOM:
        _put3(out, adr, vec3(d.subtree_angmom, obj))
    elif t == S.CONTACT:
        _contact_sensor(m, d, i)


@jit
def _touch(m, d, i):
    """Sum of the normal forces of the contacts of the site's body whose normal ray (pointing
    into the body) passes through the site's volume."""
    site = m.sensor_objid[i]
    body = m.site_bodyid[site]
    total = 0.0
    spos = vec3(d.site_xpos, site)
    smat = mat9(d.site_xmat, site)
    ssize = vec3(m.site_size, site)
    for c in range(d.ncon[0]):
        b1 = m.geom_bodyid[d.contact_geom1[c]]
        b2 = m.geom_bodyid[d.contact_geom2[c]]
        if d.contact_efc_address[c] < 0 or (body != b1 and body != b2):
            continue
        fn = _contact_component(m, d, c, 0)
        if fn <= 0.0:
            continue
        ray = scl3((d.contact_frame[c, 0], d.contact_frame[c, 1], d.contact_frame[c, 2]), fn)
        ray = scl3(ray, 1.0 / max(norm3(ray), MINVAL))
        if body == b2:
            ray = scl3(ray, -1.0)
        x, _ = ray_shape(spos, smat, ssize, m.site_type[site], vec3(d.contact_pos, c), ray)
        if x >= 0.0:
            total += fn
    d.sensordata[m.sensor_adr[i]] = total


@jit
def _match_object(m, body, geom, objtype, objid):
    """Does a contact's body and geom match a sensor object (checkMatch)? XBODY: any body of
    the subtree; SITE: always (the site filter came first)."""
    if objtype == OBJ_UNKNOWN or objtype == OBJ_SITE:
        return True
    if objtype == OBJ_GEOM:
        return objid == geom
    if objtype == OBJ_BODY:
        return objid == body
    if objtype == OBJ_XBODY:
        while body > objid:
            body = m.body_parentid[body]
        return body == objid
    return False


@jit
def match_contact(m, d, c, type1, id1, type2, id2):
    """0: contact c does not match the sensor's objects; 1: it does, normal as is; -1: it
    does with the normal flipped, so that it points from object 1 to object 2 (matchContact)."""
    if type1 == OBJ_UNKNOWN and type2 == OBJ_UNKNOWN:
        return 1
    if type1 == OBJ_SITE and inside_shape(vec3(d.site_xpos, id1), mat9(d.site_xmat, id1),
                                          vec3(m.site_size, id1), m.site_type[id1],
                                          vec3(d.contact_pos, c)) == 0.0:
        return 0
    g1 = d.contact_geom1[c]
    g2 = d.contact_geom2[c]
    b1 = m.geom_bodyid[g1]
    b2 = m.geom_bodyid[g2]
    m11 = _match_object(m, b1, g1, type1, id1)
    m12 = _match_object(m, b2, g2, type1, id1)
    m21 = _match_object(m, b1, g1, type2, id2)
    m22 = _match_object(m, b2, g2, type2, id2)
    if not (m11 or m12) or not (m21 or m22):
        return 0
    if type1 != OBJ_UNKNOWN and type2 != OBJ_UNKNOWN:
        # both objects given: the order of the contact's geoms decides
        if m11 and m22:
            return 1
        return -1 if m12 and m21 else 0
    if type1 != OBJ_UNKNOWN:
        return 1 if m11 else -1
    return 1 if m22 else -1


@jit
def _contact_velocity(m, d, c):
    """Velocity of geom 2's body relative to geom 1's body at the contact point, (linear,
    angular) in the contact frame."""
    pos = vec3(d.contact_pos, c)
    v1 = point_velocity(m, d, m.geom_bodyid[d.contact_geom1[c]], pos)
    v2 = point_velocity(m, d, m.geom_bodyid[d.contact_geom2[c]], pos)
    F = mat9(d.contact_frame, c)
    lin = mulmatvec3(F, (v2[3] - v1[3], v2[4] - v1[4], v2[5] - v1[5]))
    ang = mulmatvec3(F, (v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2]))
    return lin, ang


@jit
def _has(bits, field):
    return bits >> field & 1


@jit
def _contact_slot(m, d, k, bits, c, flip, nfound):
    """The fields in bits of contact c from sensordata[k] (copySensorData). A flipped contact
    reads in the frame turned about its second tangent: normal and first tangent negated,
    the third component of forces and velocities too."""
    out = d.sensordata
    s = -1.0 if flip else 1.0
    if _has(bits, ConDataField.FOUND):
        out[k] = nfound
        k += 1
    f = contact_force6(m, d, c)
    if _has(bits, ConDataField.FORCE):
        _put3(out, k, (f[0], f[1], s * f[2]))
        k += 3
    if _has(bits, ConDataField.TORQUE):
        _put3(out, k, (f[3], f[4], s * f[5]))
        k += 3
    if _has(bits, ConDataField.DIST):
        out[k] = d.contact_dist[c]
        k += 1
    if _has(bits, ConDataField.POS):
        _put3(out, k, vec3(d.contact_pos, c))
        k += 3
    if _has(bits, ConDataField.NORMAL):
        _put3(out, k, scl3((d.contact_frame[c, 0], d.contact_frame[c, 1],
                            d.contact_frame[c, 2]), s))
        k += 3
    if _has(bits, ConDataField.TANGENT):
        _put3(out, k, scl3((d.contact_frame[c, 3], d.contact_frame[c, 4],
                            d.contact_frame[c, 5]), s))
        k += 3
    if _has(bits, ConDataField.LINVEL) or _has(bits, ConDataField.ANGVEL):
        lin, ang = _contact_velocity(m, d, c)
        if _has(bits, ConDataField.LINVEL):
            _put3(out, k, (lin[0], lin[1], s * lin[2]))
            k += 3
        if _has(bits, ConDataField.ANGVEL):
            _put3(out, k, (ang[0], ang[1], s * ang[2]))
            k += 3


@jit
def _netforce_slot(m, d, k, bits, nmatch):
    """One slot with the net wrench of the matches (world frame) about their force-weighted
    centroid: found, force, torque, dist 0, pos the centroid, normal x, tangent y."""
    point = ZERO3
    total = 0.0
    for j in range(nmatch):
        c = d.sensor_match[j, 0]
        f = contact_force6(m, d, c)
        w = norm3((f[0], f[1], f[2]))
        point = add3(point, scl3(vec3(d.contact_pos, c), w))
        total += w
    point = scl3(point, 1.0 / max(total, MINVAL))
    force = ZERO3
    torque = ZERO3
    for j in range(nmatch):
        c = d.sensor_match[j, 0]
        f = contact_force6(m, d, c)
        if d.sensor_match[j, 1]:
            f = (-f[0], -f[1], -f[2], -f[3], -f[4], -f[5])
        w = contact_world(d, c, f)
        fj = (w[3], w[4], w[5])
        force = add3(force, fj)
        torque = add3(add3(torque, (w[0], w[1], w[2])),
                      cross3(sub3(vec3(d.contact_pos, c), point), fj))
    out = d.sensordata
    if _has(bits, ConDataField.FOUND):
        out[k] = nmatch
        k += 1
    if _has(bits, ConDataField.FORCE):
        _put3(out, k, force)
        k += 3
    if _has(bits, ConDataField.TORQUE):
        _put3(out, k, torque)
        k += 3
    if _has(bits, ConDataField.DIST):
        k += 1
    if _has(bits, ConDataField.POS):
        _put3(out, k, point)
        k += 3
    if _has(bits, ConDataField.NORMAL):
        out[k] = 1.0
        k += 3
    if _has(bits, ConDataField.TANGENT):
        out[k + 1] = 1.0


@jit
def _contact_sensor(m, d, i):
    """Up to num matching contacts, one slot each with the fields of data: in contact order,
    nearest first (mindist), strongest first (maxforce), or one slot with the net wrench.
    Computed at the position stage when it reads no velocity or force (the compiler's
    sensor_needstage), at the velocity stage when it reads velocities but no force."""
    bits = m.sensor_intprm[i, 0]
    reduce = m.sensor_intprm[i, 1]
    dim = m.sensor_dim[i]
    adr = m.sensor_adr[i]
    size = 0
    for f in range(len(CONDATA_SIZE)):
        if _has(bits, f):
            size += CONDATA_SIZE[f]
    d.sensordata[adr:adr + dim] = 0.0
    nmatch = 0
    for c in range(d.ncon[0]):
        flip = match_contact(m, d, c, m.sensor_objtype[i], m.sensor_objid[i],
                             m.sensor_reftype[i], m.sensor_refid[i])
        if flip == 0:
            continue
        d.sensor_match[nmatch, 0] = c
        d.sensor_match[nmatch, 1] = 1 if flip < 0 else 0
        if reduce == ConReduce.MINDIST:
            d.sensor_criterion[nmatch] = d.contact_dist[c]
        elif reduce == ConReduce.MAXFORCE:
            f = contact_force6(m, d, c)
            d.sensor_criterion[nmatch] = -(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
        nmatch += 1
    if reduce == ConReduce.NETFORCE:
        if nmatch > 0:
            _netforce_slot(m, d, adr, bits, nmatch)
        return
    nslot = min(dim // size, nmatch)
    if reduce == ConReduce.MINDIST or reduce == ConReduce.MAXFORCE:
        # the nslot smallest (criterion, contact) first, in order (selection)
        for s in range(nslot):
            best = s
            for j in range(s + 1, nmatch):
                cj = d.sensor_criterion[j]
                cb = d.sensor_criterion[best]
                if cj < cb or (cj == cb and d.sensor_match[j, 0] < d.sensor_match[best, 0]):
                    best = j
            if best != s:
                for k in range(2):
                    tmp = d.sensor_match[s, k]
                    d.sensor_match[s, k] = d.sensor_match[best, k]
                    d.sensor_match[best, k] = tmp
                tmp_c = d.sensor_criterion[s]
                d.sensor_criterion[s] = d.sensor_criterion[best]
                d.sensor_criterion[best] = tmp_c
    for s in range(nslot):
        _contact_slot(m, d, adr + s * size, bits, d.sensor_match[s, 0],
                      d.sensor_match[s, 1] == 1, nmatch)


@jit
def _compute_acc(m, d, i):
    t = m.sensor_type[i]
    adr = m.sensor_adr[i]
    out = d.sensordata
    objtype = m.sensor_objtype[i]
    obj = m.sensor_objid[i]
    if t == S.TOUCH:
        _touch(m, d, i)
    elif t == S.CONTACT:
        _contact_sensor(m, d, i)
    elif t == S.ACCELEROMETER:
        a = object_acceleration(m, d, OBJ_SITE, obj, True)
        _put3(out, adr, (a[3], a[4], a[5]))
    elif t == S.FORCE or t == S.TORQUE:
        # the force of the parent on the site's body, at the site, in the site's frame
        body = m.site_bodyid[obj]
        f = shift_force(row6(d.cfrc_int, body), vec3(d.site_xpos, obj),
                        vec3(d.subtree_com, m.body_rootid[body]))
        f = rotate6_t(mat9(d.site_xmat, obj), f)
        _put3(out, adr, (f[3], f[4], f[5]) if t == S.FORCE else (f[0], f[1], f[2]))
    elif t == S.ACTUATORFRC:
        out[adr] = d.actuator_force[obj]
    elif t == S.JOINTACTFRC:
        out[adr] = d.qfrc_actuator[m.jnt_dofadr[obj]]
    elif t == S.TENDONACTFRC:
        frc = 0.0
        for a in range(m.actuator_trntype.shape[0]):
            if m.actuator_trntype[a] == TrnType.TENDON and m.actuator_trnid[a, 0] == obj:
                frc += d.actuator_force[a]
        out[adr] = frc
    elif t == S.JOINTLIMITFRC or t == S.TENDONLIMITFRC:
        j = _limit_row(d, LIMIT_JOINT if t == S.JOINTLIMITFRC else LIMIT_TENDON, obj)
        out[adr] = d.efc_force[j] if j >= 0 else 0.0
    elif t == S.FRAMELINACC or t == S.FRAMEANGACC:
        a = object_acceleration(m, d, objtype, obj, False)
        _put3(out, adr, (a[3], a[4], a[5]) if t == S.FRAMELINACC else (a[0], a[1], a[2]))


@jit
def _stage_sensors(m, d, stage):
    """Compute the sensors of one stage, user sensors as zeros, then their cutoffs."""
    for i in range(m.sensor_type.shape[0]):
        if m.sensor_needstage[i] != stage:
            continue
        t = m.sensor_type[i]
        if t == S.USER:
            adr = m.sensor_adr[i]
            d.sensordata[adr:adr + m.sensor_dim[i]] = 0.0
        elif stage == POS:
            _compute_pos(m, d, i)
        elif stage == VEL:
            _compute_vel(m, d, i)
        else:
            _compute_acc(m, d, i)
        apply_cutoff(m, d, i)


@jit
def _needs(m, stage, t1, t2, t3, t4, t5):
    """Is there a sensor of the stage of one of the types (or a user sensor of the stage)?"""
    for i in range(m.sensor_type.shape[0]):
        t = m.sensor_type[i]
        if m.sensor_needstage[i] == stage and (t == t1 or t == t2 or t == t3 or t == t4
                                               or t == t5 or t == S.USER):
            return True
    return False


@calls_stages
def sensor_pos(m, d):
    """Position-dependent sensors (mj_sensorPos): their entries of sensordata."""
    if m.opt_disableflags[0] & SENSOR_OFF:
        return
    _stage_sensors(m, d, POS)


@calls_stages
def sensor_vel(m, d):
    """Velocity-dependent sensors (mj_sensorVel): sensordata; subtree_linvel and
    subtree_angmom when a subtree sensor needs them."""
    if m.opt_disableflags[0] & SENSOR_OFF:
        return
    if _needs(m, VEL, S.SUBTREELINVEL, S.SUBTREEANGMOM, -1, -1, -1):
        subtree_vel(m, d)
    _stage_sensors(m, d, VEL)


@jit
def sensor_qacc(m, d, qacc, damped):
    """The joint accelerations the sensors measure (sensor_qacc): qacc, the acceleration of the
    equations of motion M qacc = f, unless the step folded implicit damping into the inertia
    (damped: semi-implicit Euler with joint damping, (M + h B) qacc = f). Then it is
    M^-1 (M + h B) qacc = qacc + h M^-1 B qacc, what MuJoCo's forward reports (its Euler step
    applies the damping after the forward pass); M is factored on its own into sensor_qLD."""
    d.sensor_qacc[:] = qacc
    if not damped:
        return
    h = m.opt_timestep[0]
    d.sensor_qLD[:] = d.qM
    factor_m(m, d.sensor_qLD, d.sensor_qLDiagInv)
    b = d.sensor_qacc
    for i in range(b.shape[0]):
        b[i] = h * m.dof_damping[i] * qacc[i]
    solve_m(m, d.sensor_qLD, d.sensor_qLDiagInv, b)
    for i in range(b.shape[0]):
        b[i] += qacc[i]


@calls_stages
def sensor_acc(m, d, qacc, damped):
    """Acceleration and force sensors (mj_sensorAcc): sensordata; sensor_qacc, and cacc,
    cfrc_int and cfrc_ext (rne_post_constraint) when a sensor needs them, from the joint
    accelerations qacc. damped: qacc is the step's, with implicit damping (see sensor_qacc)."""
    if m.opt_disableflags[0] & SENSOR_OFF:
        return
    if _needs(m, ACC, S.ACCELEROMETER, S.FORCE, S.TORQUE, S.FRAMELINACC, S.FRAMEANGACC):
        sensor_qacc(m, d, qacc, damped)
        rne_post_constraint(m, d, d.sensor_qacc)
    _stage_sensors(m, d, ACC)


# ------------------------------------------------------------------------------------------------
# lean kernels (forward.kernels): sensor routines a model never calls, left out
# ------------------------------------------------------------------------------------------------
@jit
def _no_sensor(m, d, i):
    """Stands for the routine of a sensor type the model does not have."""
    return


@jit
def _no_cam_project(m, d, site, cam, out, adr):
    """Stands for _cam_project in a model without camprojection sensors."""
    return


def unused_sensors(m):
    """{name: stub} for the largest sensor routines that m's sensor types never call (the
    sensor types are fixed once a model is compiled)."""
    present = set(int(t) for t in m.sensor_type)
    out = {}
    if S.RANGEFINDER not in present:
        out["_rangefinder"] = _no_sensor
    if not present & {S.GEOMDIST, S.GEOMNORMAL, S.GEOMFROMTO}:
        out["_geom_distance_sensor"] = _no_sensor
    if S.CONTACT not in present:
        out["_contact_sensor"] = _no_sensor
    if S.CAMPROJECTION not in present:
        out["_cam_project"] = _no_cam_project
    return out

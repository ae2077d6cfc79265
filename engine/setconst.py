"""Constants that depend on the reference configuration, computed once after compilation.

MuJoCo's mj_setConst: lengths of tendons and actuators at qpos0, the rest length of tendon
springs when the file leaves it to the compiler, the reference frames of tracking cameras and
lights, mean inverse inertias, and the stiffness and damping that MJCF gives as a time constant
and damping ratio (joint springdamper, position actuator dampratio), which depend on the inertia
at qpos0, the actuators' acceleration scale (actuator_acc0) and, by simulation, the length
ranges of muscles (MuJoCo's mj_setLengthRange).
"""
import math

import numpy as np

from .enums import BiasType, DisableBit, GainType, JointType, TrnType
from .math import MINVAL
from .types import Data, Model, ModelError
from . import actuator, collision_driver, derivative, smooth


def set_const(m: Model) -> Model:
    """Fill the qpos0-dependent fields of m (the structural ones among them are writable only
    here)."""
    with m._unfrozen():
        _set_const(m)
    return m


def _set_const(m: Model) -> None:
    collision_driver.set_const_collision(m)
    d = Data(m)
    d.qpos[:] = m.qpos0
    for b in range(m.nbody):
        k = m.body_mocapid[b]
        if k >= 0:
            d.mocap_pos[k] = m.body_pos[b]
            d.mocap_quat[k] = m.body_quat[b]
    ms, ds = m._struct, d._struct
    smooth.kinematics(ms, ds)
    smooth.com_pos(ms, ds)
    smooth.tendon(ms, ds)
    actuator.transmission(ms, ds)
    m.tendon_length0[:] = d.ten_length
    m.actuator_length0[:] = d.actuator_length
    # unspecified spring rest length: the tendon length at the springs' reference qpos_spring
    auto = (m.tendon_lengthspring[:, 0] == -1) & (m.tendon_lengthspring[:, 1] == -1)
    if auto.any():
        d.qpos[:] = m.qpos_spring
        smooth.kinematics(ms, ds)
        smooth.com_pos(ms, ds)
        smooth.tendon(ms, ds)
        m.tendon_lengthspring[auto] = d.ten_length[auto][:, None]
        d.qpos[:] = m.qpos0
        smooth.kinematics(ms, ds)
        smooth.com_pos(ms, ds)
    # tracking frames: the fixed-mode frame at qpos0, relative to the body or its subtree com
    for c in range(m.ncam):
        b = m.cam_bodyid[c]
        pos, mat = _fixed_frame(d, b, m.cam_pos[c], m.cam_quat[c])
        m.cam_pos0[c] = pos - d.xpos[b]
        m.cam_poscom0[c] = pos - d.subtree_com[b]
        m.cam_mat0[c] = mat
    for li in range(m.nlight):
        b = m.light_bodyid[li]
        xmat = d.xmat[b].reshape(3, 3)
        pos = d.xpos[b] + xmat @ m.light_pos[li]
        m.light_pos0[li] = pos - d.xpos[b]
        m.light_poscom0[li] = pos - d.subtree_com[b]
        m.light_dir0[li] = xmat @ m.light_dir[li]
    Minv = _set_invweight0(m, d)
    # actuator_acc0 = |M^-1 moment|: the acceleration a unit actuator force produces at qpos0
    for i in range(m.nu):
        m.actuator_acc0[i] = np.linalg.norm(Minv @ d.actuator_moment[i])
    _set_springdamper(m)
    _set_dampratio(m, d, Minv)
    _set_trees(m)
    set_length_range(m)
    derivative.set_dof_dof_sparsity(m)


def set_length_range(m: Model) -> None:
    """Actuator length ranges (MuJoCo's mj_setLengthRange) for the actuators that the compiler's
    <lengthrange> options select (by default muscles whose lengthrange is not given): from the
    joint's or tendon's range with uselimit, else by simulation. Each side is a run of inttotal
    seconds from qpos0 in which the actuator is pushed, through qfrc_applied = moment a / |M^-1
    moment| (a = -accel then +accel, at most maxforce), with only limits and equality constraints
    on and the velocity damped with the time constant timeconst; the range is the smallest and
    the largest length over the last `interval` seconds. The limits are this engine's soft
    constraints (their epsilon and kappa, or solref and solimp as mapped by the compiler), so a
    simulated range can differ from MuJoCo's by the difference in the constraints' softness."""
    from .forward import forward, full_inertia, make_data, reset_data, step
    opt = getattr(m, "lengthrange_options", None)
    if opt is None or opt["mode"] == "none":
        return
    todo = []
    for i in range(m.nu):
        muscle = (m.actuator_gaintype[i] == GainType.MUSCLE
                  or m.actuator_biastype[i] == BiasType.MUSCLE)
        user = (m.actuator_gaintype[i] == GainType.USER
                or m.actuator_biastype[i] == BiasType.USER)
        if ((opt["mode"] == "muscle" and not muscle)
                or (opt["mode"] == "muscleuser" and not muscle and not user)):
            continue
        lr = m.actuator_lengthrange[i]
        if opt["useexisting"] and lr[0] < lr[1]:
            continue
        if opt["uselimit"]:
            tid, trn = m.actuator_trnid[i, 0], m.actuator_trntype[i]
            if trn in (TrnType.JOINT, TrnType.JOINTINPARENT) and m.jnt_limited[tid]:
                lr[:] = m.jnt_range[tid]
                continue
            if trn == TrnType.TENDON and m.tendon_limited[tid]:
                lr[:] = m.tendon_range[tid]
                continue
        todo.append(i)
    if not todo:
        return
    saved = (m.opt.disableflags, m.opt.timestep)
    m.opt.disableflags = (DisableBit.FRICTIONLOSS | DisableBit.CONTACT | DisableBit.SPRING
                          | DisableBit.DAMPER | DisableBit.GRAVITY | DisableBit.ACTUATION)
    if opt["timestep"] > 0:
        m.opt.timestep = opt["timestep"]
    try:
        d = make_data(m)
        decay = math.exp(-m.opt.timestep / max(0.01, opt["timeconst"]))
        for i in todo:
            name = m.names["actuator"][i] or f"actuator {i}"
            ends = []
            for side in (-1.0, 1.0):
                reset_data(m, d)
                lengths = []
                while d.time < opt["inttotal"]:
                    d.qvel[:] *= decay
                    forward(m, d)
                    moment = d.actuator_moment[i]
                    nrm = np.linalg.norm(_solve_inertia(m, d, full_inertia(m, d), moment))
                    d.qfrc_applied[:] = moment * (side * opt["accel"] / max(MINVAL, nrm))
                    nrm = np.linalg.norm(d.qfrc_applied)
                    if opt["maxforce"] > 0 and nrm > opt["maxforce"]:
                        d.qfrc_applied[:] *= opt["maxforce"] / max(MINVAL, nrm)
                    length = d.actuator_length[i]
                    step(m, d)
                    if d.time == 0:
                        raise ModelError(f"unstable length range simulation of actuator "
                                         f"'{name}'", file=getattr(m, "path", None))
                    if d.time > opt["inttotal"] - opt["interval"]:
                        lengths.append(length)
                ends.append(lengths)
            lo, hi = min(ends[0]), max(ends[1])
            if hi - lo <= 0:
                raise ModelError(f"invalid length range ({lo:g}, {hi:g}) of actuator '{name}' "
                                 "from simulation", file=getattr(m, "path", None))
            for side, lengths in enumerate(ends):
                if max(lengths) - min(lengths) > opt["tolrange"] * (hi - lo):
                    raise ModelError(
                        f"length range simulation of actuator '{name}' did not converge: "
                        f"{'lower' if side == 0 else 'upper'} end between {min(lengths):g} "
                        f"and {max(lengths):g}, range ({lo:g}, {hi:g})",
                        file=getattr(m, "path", None))
            m.actuator_lengthrange[i] = (lo, hi)
    finally:
        m.opt.disableflags, m.opt.timestep = saved


def _set_springdamper(m: Model) -> None:
    """Joint springdamper = (timeconst, dampratio): the spring and damper of a mass-spring-damper
    with that time constant and damping ratio, the mass being the joint's inertia at qpos0 (the
    inverse of its mean dof_invweight0): stiffness = mass / (timeconst dampratio)^2,
    damping = 2 mass / timeconst (as MuJoCo)."""
    for j, (timeconst, dampratio) in getattr(m, "springdamper", {}).items():
        a = m.jnt_dofadr[j]
        n = {JointType.FREE: 6, JointType.BALL: 3}.get(JointType(m.jnt_type[j]), 1)
        mass = 1.0 / (float(np.add.accumulate(m.dof_invweight0[a:a + n])[-1]) / n)
        m.jnt_stiffness[j] = mass / (timeconst * timeconst * dampratio * dampratio)
        m.dof_damping[a:a + n] = 2 * mass / timeconst


def _set_dampratio(m: Model, d: Data, Minv: np.ndarray) -> None:
    """Position actuators given a damping ratio (positive biasprm[2] with gain kp = -biasprm[1]):
    damping = dampratio 2 sqrt(kp mass), with mass = 1 / (moment M^-1 moment') the inertia the
    actuator sees at qpos0, stored as biasprm[2] = -damping (as MuJoCo)."""
    for i in range(m.nu):
        kp, bias = m.actuator_gainprm[i, 0], m.actuator_biasprm[i]
        if m.actuator_biastype[i] != BiasType.AFFINE or abs(kp + bias[1]) > MINVAL \
                or bias[2] <= 0:
            continue
        moment = d.actuator_moment[i]
        mass = 1.0 / (moment @ Minv @ moment)
        bias[2] = -(bias[2] * 2.0 * math.sqrt(kp * mass))


def _set_trees(m: Model) -> None:
    """Dof range of each body's kinematic tree (bodies, hence dofs, of a tree are contiguous)."""
    for b in range(1, m.nbody):
        r = m.body_rootid[b]
        dofs = [i for i in range(m.nv) if m.body_rootid[m.dof_bodyid[i]] == r]
        if dofs:
            m.body_treedofadr[b] = dofs[0]
            m.body_treedofnum[b] = dofs[-1] - dofs[0] + 1


def _set_invweight0(m: Model, d: Data) -> np.ndarray:
    """Mean inverse inertias at qpos0 (MuJoCo's invweight0), used to approximate diag(A), and
    the diagonal of M (dof_M0); returns M^-1 at qpos0."""
    ms, ds = m._struct, d._struct
    smooth.crb(ms, ds)
    from .forward import full_inertia
    M = full_inertia(m, d)
    m.dof_M0[:] = np.diag(M)
    Minv = _solve_inertia(m, d, M)
    for b in range(1, m.nbody):
        jacp = np.zeros((3, m.nv))
        jacr = np.zeros((3, m.nv))
        point = tuple(float(x) for x in d.xipos[b])
        for k in range(3):
            # tuples, as the pipeline passes them: one compiled apply_ft serves both
            e = tuple(1.0 if i == k else 0.0 for i in range(3))
            smooth.apply_ft(ms, ds, e, (0.0, 0.0, 0.0), point, b, jacp[k], 1.0)
            smooth.apply_ft(ms, ds, (0.0, 0.0, 0.0), e, point, b, jacr[k], 1.0)
        m.body_invweight0[b] = (np.trace(jacp @ Minv @ jacp.T) / 3,
                                np.trace(jacr @ Minv @ jacr.T) / 3)
    for j in range(m.njnt):
        a = m.jnt_dofadr[j]
        diag = np.diag(Minv)
        if m.jnt_type[j] == JointType.FREE:
            m.dof_invweight0[a:a + 3] = diag[a:a + 3].mean()
            m.dof_invweight0[a + 3:a + 6] = diag[a + 3:a + 6].mean()
        elif m.jnt_type[j] == JointType.BALL:
            m.dof_invweight0[a:a + 3] = diag[a:a + 3].mean()
        else:
            m.dof_invweight0[a] = diag[a]
    for t in range(m.ntendon):
        J = d.ten_J[t]
        m.tendon_invweight0[t] = J @ Minv @ J
    return Minv


def _solve_inertia(m: Model, d: Data, M: np.ndarray, x: np.ndarray | None = None):
    """M^-1 x, or M^-1 without x, for the dense M = full_inertia(m, d). A singular M (two
    identical hinges, a degenerate axis, a vanishing mass) is solved through the engine's sparse
    factor of d.qM, whose pivots have MuJoCo's floor (mj_factorM): large finite values, as
    MuJoCo gives, where the dense solve fails."""
    try:
        return np.linalg.inv(M) if x is None else np.linalg.solve(M, x)
    except np.linalg.LinAlgError:
        pass
    qLD, diag_inv = d.qM.copy(), np.empty(m.nv)
    smooth.factor_m(m._struct, qLD, diag_inv)
    X = np.eye(m.nv) if x is None else x.copy()
    for row in np.atleast_2d(X):      # M^-1 is symmetric: row k of it solves M y = e_k
        smooth.solve_m(m._struct, qLD, diag_inv, row)
    return X


def _fixed_frame(d, b, pos, quat):
    xmat = d.xmat[b].reshape(3, 3)
    p = d.xpos[b] + xmat @ pos
    w, x, y, z = quat
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    return p, (xmat @ r).ravel()

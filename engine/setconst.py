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

from .enums import BiasType, DisableBit, GainType, Integrator, JointType, TrnType
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
    d = Data(m, nconmax=1, njmax=1)   # kinematics and inertia only: no room for rows
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
    _set_trees(m)
    solve = _MInverse(m, d)
    _set_invweight0(m, d, solve)
    # actuator_acc0 = |M^-1 moment|: the acceleration a unit actuator force produces at qpos0
    for i in range(m.nu):
        m.actuator_acc0[i] = np.linalg.norm(solve(d.actuator_moment[i]))
    _set_springdamper(m)
    _set_dampratio(m, d, solve)
    set_length_range(m)
    derivative.set_dof_dof_sparsity(m)


def set_length_range(m: Model) -> None:
    """Actuator length ranges (MuJoCo's mj_setLengthRange) for the actuators that the compiler's
    <lengthrange> options select (by default muscles whose lengthrange is not given): from the
    joint's or tendon's range with uselimit, else by simulation. Each side is a run of inttotal
    seconds from qpos0 in which the actuator is pushed, through qfrc_applied = moment a / |M^-1
    moment| (a = -accel then +accel, at most maxforce), with only limits and equality constraints
    on and the velocity damped with the time constant timeconst; the range is the smallest and
    the largest length over the last `interval` seconds.

    Where the run ends is where the limits hold the push, so the range includes the limits'
    penetration under that push, which depends on their softness (solref and solimp, which the
    rows follow as MuJoCo's do). The run steps as MuJoCo's mj_step1 / mj_step2 do (Euler, or
    the implicit integrators; RK4 steps as Euler there), with MuJoCo's solver (Newton unless
    the file asks for PGS). A model built from arrays runs on its own solver."""
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
    from . import warmup
    from .forward import make_data, reset_data
    warmup.join()
    saved = (m.opt.disableflags, m.opt.timestep, m.opt.solver)
    m.opt.solver = opt.get("solver", m.opt.solver)
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
                    length = _length_range_step(m, d, i, side, opt, decay)
                    if length is None:
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
        m.opt.disableflags, m.opt.timestep, m.opt.solver = saved


def _length_range_step(m: Model, d: Data, i: int, side: float, opt: dict, decay: float):
    """One step of the length-range run (MuJoCo's evalAct): damp qvel, forward, push actuator
    i, integrate. Returns the actuator's length at the start of the step, or None when the
    state went bad."""
    from .forward import (_grow, euler, fwd_acceleration, fwd_constraint, fwd_position,
                          fwd_velocity, implicit)
    ms, ds = m._struct, d._struct
    d.qvel[:] *= decay
    if not (np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))):
        return None
    fwd_position(ms, ds)
    while d._arrays["nefc_overflow"][0]:
        _grow(m, d)
        ms, ds = m._struct, d._struct
        fwd_position(ms, ds)
    fwd_velocity(ms, ds)
    # qfrc_applied = moment a / |M^-1 moment|, M factored by fwd_position
    moment = d.actuator_moment[i]
    x = moment.copy()
    smooth.solve_m(ms, d.qLD, d.qLDiagInv, x)
    d.qfrc_applied[:] = moment * (side * opt["accel"] / max(MINVAL, np.linalg.norm(x)))
    nrm = np.linalg.norm(d.qfrc_applied)
    if opt["maxforce"] > 0 and nrm > opt["maxforce"]:
        d.qfrc_applied[:] *= opt["maxforce"] / max(MINVAL, nrm)
    length = float(d.actuator_length[i])
    actuator.fwd_actuation(ms, ds)
    fwd_acceleration(ms, ds)
    fwd_constraint(ms, ds)
    if not np.all(np.isfinite(d.qacc)):
        return None
    if m.opt.integrator in (Integrator.IMPLICIT, Integrator.IMPLICITFAST):
        implicit(ms, ds)
    else:
        euler(ms, ds)
    return length


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


def _set_dampratio(m: Model, d: Data, solve: "_MInverse") -> None:
    """Position actuators given a damping ratio (positive biasprm[2] with gain kp = -biasprm[1]):
    damping = dampratio 2 sqrt(kp mass), with mass = 1 / (moment M^-1 moment') the inertia the
    actuator sees at qpos0, stored as biasprm[2] = -damping (as MuJoCo)."""
    for i in range(m.nu):
        kp, bias = m.actuator_gainprm[i, 0], m.actuator_biasprm[i]
        if m.actuator_biastype[i] != BiasType.AFFINE or abs(kp + bias[1]) > MINVAL \
                or bias[2] <= 0:
            continue
        moment = d.actuator_moment[i]
        mass = 1.0 / (moment @ solve(moment))
        bias[2] = -(bias[2] * 2.0 * math.sqrt(kp * mass))


def _set_trees(m: Model) -> None:
    """Dof range of each body's kinematic tree (bodies, hence dofs, of a tree are contiguous)."""
    roots, first, count = np.unique(m.body_rootid[m.dof_bodyid], return_index=True,
                                    return_counts=True)
    adr, num = np.full(m.nbody, -1), np.zeros(m.nbody, dtype=int)
    adr[roots], num[roots] = first, count
    moving = adr[m.body_rootid[1:]] >= 0
    m.body_treedofadr[1:][moving] = adr[m.body_rootid[1:]][moving]
    m.body_treedofnum[1:][moving] = num[m.body_rootid[1:]][moving]


def _set_invweight0(m: Model, d: Data, solve: "_MInverse") -> None:
    """Mean inverse inertias at qpos0 (MuJoCo's body_, dof_ and tendon_invweight0), used to
    approximate diag(A), and the diagonal of M (dof_M0)."""
    smooth.crb(m._struct, d._struct)
    m.dof_M0[:] = d.qM[m.dof_Madr]
    try:
        body, dof = _inverse_inertias(m, d)
    except np.linalg.LinAlgError:       # a singular joint subspace: MuJoCo's floored factor
        body, dof = _inverse_inertias_factor(m, d, solve)
    invweight = np.zeros((m.nbody, 2))
    for b in range(1, m.nbody):
        invweight[b] = (np.trace(body[b][:3, :3]) / 3, np.trace(body[b][3:, 3:]) / 3)
    m.body_invweight0[:] = invweight
    dof_invweight = np.zeros(m.nv)
    for j in range(m.njnt):
        a = m.jnt_dofadr[j]
        diag = np.diag(dof[m.jnt_bodyid[j]])[a - m.body_dofadr[m.jnt_bodyid[j]]:]
        if m.jnt_type[j] == JointType.FREE:
            dof_invweight[a:a + 3] = diag[0:3].mean()
            dof_invweight[a + 3:a + 6] = diag[3:6].mean()
        elif m.jnt_type[j] == JointType.BALL:
            dof_invweight[a:a + 3] = diag[0:3].mean()
        else:
            dof_invweight[a] = diag[0]
    m.dof_invweight0[:] = dof_invweight
    for t in range(m.ntendon):
        J = d.ten_J[t]
        m.tendon_invweight0[t] = J @ solve(J)


class _MInverse:
    """x -> M^-1 x at the state of d, through the sparse L'DL factor of d.qM (d.qLD,
    d.qLDiagInv) with MuJoCo's floored pivots (so a singular M, e.g. two identical hinges,
    gives large finite values as in MuJoCo). The factor costs the sum over dofs of depth^2,
    cubic in a chain's length: it is made on the first solve only."""

    def __init__(self, m: Model, d: Data):
        self.m, self.d, self.factored = m, d, False

    def factor(self) -> None:
        self.d.qLD[:] = self.d.qM
        smooth.factor_m(self.m._struct, self.d.qLD, self.d.qLDiagInv)
        self.factored = True

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if not self.factored:
            self.factor()
        y = np.array(x, dtype=float)
        smooth.solve_m(self.m._struct, self.d.qLD, self.d.qLDiagInv, y)
        return y


def _cinert_matrices(cinert: np.ndarray) -> np.ndarray:
    """(n, 6, 6) spatial inertias from MuJoCo's packed (n, 10) cinert rows (math.mul_inert_vec)."""
    c = cinert
    out = np.zeros((len(c), 6, 6))
    for i, (r, k) in enumerate(((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))):
        out[:, r, k] = out[:, k, r] = c[:, i]
    # upper-right block: -[m c]x (rows 0..2, columns 3..5), lower-left its transpose
    out[:, 0, 4], out[:, 0, 5], out[:, 1, 5] = -c[:, 8], c[:, 7], -c[:, 6]
    out[:, 1, 3], out[:, 2, 3], out[:, 2, 4] = c[:, 8], -c[:, 7], c[:, 6]
    out[:, 3:, :3] = out[:, :3, 3:].transpose(0, 2, 1)
    out[:, 3, 3] = out[:, 4, 4] = out[:, 5, 5] = c[:, 9]
    return out


def _inverse_inertias(m: Model, d: Data) -> tuple[list, list]:
    """For each body b, in O(nbody) 6x6 operations (the tree's depth does not matter):
    Omega_b = J_b M^-1 J_b' (6x6, J_b the Jacobian of b's com: rows translation then rotation)
    and H_b^-1 = the block of M^-1 over b's dofs. Raises LinAlgError for a singular joint
    subspace (identical or degenerate axes), which _inverse_inertias_factor handles as MuJoCo.

    All vectors are com-based (cdof, cinert: about the subtree com of the tree's root, world
    axes), so no frame changes appear between bodies. With zero velocities and a test wrench f on
    body b, the model is b's subtree, an articulated body of inertia IA_b (Featherstone's ABA
    inward pass, armature included in D), joined by b's dofs S (6 x k) to the rest of the model,
    whose inverse inertia seen at b's parent is W_b. Body: a = IA^-1 (f - g), the rest
    a_p = W g, a = a_p + S qdd, S'g = armature qdd give, with G = (1 + W IA)^-1 and
    H = S' IA G S + diag(armature):
        Omega = G W + G S H^-1 S' (1 - IA G W),   the dof block of M^-1 = H^-1.
    W of a child c of b is Omega of the same combination at b with IA_b less c's share (W = 0
    for children of the world). Equal to MuJoCo's mj_solveM route to rounding."""
    nbody = m.nbody
    IA = _cinert_matrices(d.cinert)
    share = np.zeros_like(IA)          # what each body adds to its parent's articulated inertia
    S, arm = [None] * nbody, [None] * nbody
    for b in range(nbody - 1, 0, -1):
        a, n = m.body_dofadr[b], m.body_dofnum[b]
        S[b] = d.cdof[a:a + n].T if n else np.zeros((6, 0))
        arm[b] = np.diag(m.dof_armature[a:a + n]) if n else np.zeros((0, 0))
        share[b] = IA[b]
        if n:
            U = IA[b] @ S[b]
            share[b] = IA[b] - U @ np.linalg.solve(S[b].T @ U + arm[b], U.T)
        if m.body_parentid[b] > 0:
            IA[m.body_parentid[b]] += share[b]
    children = [[] for _ in range(nbody)]
    for b in range(1, nbody):
        children[m.body_parentid[b]].append(b)
    W = np.zeros((nbody, 6, 6))
    eye = np.eye(6)
    body, dof = [np.zeros((6, 6))] * nbody, [np.zeros((0, 0))] * nbody

    def combine(I, b, W):
        G = np.linalg.inv(eye + W @ I)
        if not S[b].shape[1]:
            return G @ W, None
        H = S[b].T @ I @ G @ S[b] + arm[b]
        if np.linalg.cond(H) > 1e12:
            raise np.linalg.LinAlgError("singular joint subspace")
        Hinv = np.linalg.inv(H)
        omega = G @ W + G @ S[b] @ Hinv @ S[b].T @ (eye - I @ G @ W)
        return 0.5 * (omega + omega.T), Hinv

    for b in range(1, nbody):
        omega, dof[b] = combine(IA[b], b, W[b])
        # rows translation (at xipos) then rotation: T = [[-[r]x, 1], [1, 0]], r = xipos - com
        r = d.xipos[b] - d.subtree_com[m.body_rootid[b]]
        T = np.zeros((6, 6))
        T[:3, :3] = [[0, r[2], -r[1]], [-r[2], 0, r[0]], [r[1], -r[0], 0]]
        T[:3, 3:] = T[3:, :3] = np.eye(3)
        body[b] = T @ omega @ T.T
        for c in children[b]:
            W[c] = combine(IA[b] - share[c], b, W[b])[0]
    return body, dof


def _inverse_inertias_factor(m: Model, d: Data, solve: "_MInverse") -> tuple[list, list]:
    """What _inverse_inertias returns, as MuJoCo computes it: J M^-1 J' with the floored sparse
    factor, each solve restricted to the body's kinematic tree."""
    ms, ds = m._struct, d._struct
    solve.factor()
    body, dof = [np.zeros((6, 6))] * m.nbody, [np.zeros((0, 0))] * m.nbody
    for b in range(1, m.nbody):
        adr, num = m.body_treedofadr[b], m.body_treedofnum[b]
        if m.body_dofnum[m.body_weldid[b]] == 0 or num <= 0:
            continue
        J = np.zeros((6, m.nv))
        point = tuple(float(x) for x in d.xipos[b])
        for k in range(3):
            # tuples, as the pipeline passes them: one compiled apply_ft serves both
            e = tuple(1.0 if i == k else 0.0 for i in range(3))
            smooth.apply_ft(ms, ds, e, (0.0, 0.0, 0.0), point, b, J[k], 1.0)
            smooth.apply_ft(ms, ds, (0.0, 0.0, 0.0), e, point, b, J[3 + k], 1.0)
        X = J.copy()
        for row in X:
            smooth.solve_m_range(ms, d.qLD, d.qLDiagInv, row, adr, num)
        body[b] = J @ X.T
        a, n = m.body_dofadr[b], m.body_dofnum[b]
        if n:
            X = np.zeros((n, m.nv))
            X[:, a:a + n] = np.eye(n)
            for row in X:
                smooth.solve_m_range(ms, d.qLD, d.qLDiagInv, row, adr, num)
            dof[b] = X[:, a:a + n]
    return body, dof


def _fixed_frame(d, b, pos, quat):
    xmat = d.xmat[b].reshape(3, 3)
    p = d.xpos[b] + xmat @ pos
    w, x, y, z = quat
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    return p, (xmat @ r).ravel()

"""Jacobians of the hard-contact step (Werling et al., Nimble, section IV; docs/nimble.md).

    jac = step_derivatives(m, d, opt)     A (2nv, 2nv), B (2nv, nu) in MuJoCo's transition layout,
                                          and the paper's five blocks (+ dv'/d qfrc_applied)
    jac = step_fd(m, d, opt, eps)         the same by centered differences of the whole step
    g = complementarity_aware_vjp(m, d, dl_dvnext, opt)    section IV-D

At the step's LCP solution the rows are split into the clamping set C (the set the stabilised
solution was solved on: z_C > 0 or w_C = 0) and the rest (z = 0, w > 0). On C,
Mlcp_CC z_C = -q_C holds, and away from set changes it keeps holding, so for any input x

    dz_C/dx = -Mlcp_CC^+ (dMlcp_CC/dx z_C + dq_C/dx)        (paper eq. 20; pseudo-inverse, IV-C)
    dv'/dx  = dv_free/dx + d(M^-1 J')/dx z + M^-1 J_C' dz_C/dx

Velocity and control enter through v_free only: dv_free/dv = I + h M^-1 qDeriv (qDeriv analytical,
engine.derivative.smooth_vel), dv_free/dctrl = h M^-1 moment' gain, dv_free/dqfrc = h M^-1.
Position enters through M, qfrc_smooth, the contact rows J (points and normals from the collision
detector) and the gaps b: these smooth ingredients are differentiated by centered differences of the
position stages (collision included, no LCP solve) and combined with the analytical LCP sensitivity
above; Nimble's Featherstone and per-geometry derivatives (its section V) are not implemented.
Positions: q' = q (+) h v', so dq'/dq = Dq + Dv dv'/dq, dq'/dv = Dv dv'/dv, with Dq, Dv the
derivatives of the quaternion exponential (identity and h I on hinge and slide dofs).
"""
from dataclasses import dataclass

import numpy as np
from scipy.linalg import lstsq

from . import hard_contact as hc
from .derivative import dense_D, smooth_vel
from .enums import DynType, GainType, JointType


@dataclass
class StepJacobians:
    """Jacobians of one LCP step in tangent coordinates (nv for qpos, as mjd_transitionFD)."""
    A: np.ndarray           # (2nv, 2nv): d(q', v') / d(q, v)
    B: np.ndarray           # (2nv, nu):  d(q', v') / d ctrl
    dvdq: np.ndarray
    dvdv: np.ndarray
    dvdu: np.ndarray        # d v' / d ctrl
    dvdtau: np.ndarray      # d v' / d qfrc_applied (the paper's tau)
    dqdq: np.ndarray
    dqdv: np.ndarray
    clamping: np.ndarray    # the set C the derivatives hold on
    info: object = None     # the step's StepInfo


# ------------------------------------------------------------------------------------------------
# tangent-space helpers
# ------------------------------------------------------------------------------------------------
def _skew(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def _rotation(phi):
    """exp([phi]x) (Rodrigues)."""
    th = np.linalg.norm(phi)
    K = _skew(phi)
    if th < 1e-12:
        return np.eye(3) + K
    return np.eye(3) + np.sin(th) / th * K + (1.0 - np.cos(th)) / th ** 2 * K @ K


def _right_jacobian(phi):
    """Jr(phi): exp(phi + dphi) = exp(phi) exp(Jr dphi) to first order."""
    th = np.linalg.norm(phi)
    K = _skew(phi)
    if th < 1e-8:
        return np.eye(3) - 0.5 * K
    return (np.eye(3) - (1.0 - np.cos(th)) / th ** 2 * K
            + (th - np.sin(th)) / th ** 3 * K @ K)


def integration_jacobians(m, vnext, h):
    """Dq = d q'/d q at fixed v', Dv = d q'/d v' of q' = q (+) h v' (local angular velocity:
    q' = q exp(h w), so a rotation dr of q maps to R(h w)' dr and dw to Jr(h w) h dw)."""
    nv = m.nv
    Dq = np.eye(nv)
    Dv = h * np.eye(nv)
    for j in range(m.njnt):
        t = m.jnt_type[j]
        a = m.jnt_dofadr[j]
        if t == JointType.FREE:
            a += 3
        if t in (JointType.FREE, JointType.BALL):
            phi = h * vnext[a:a + 3]
            Dq[a:a + 3, a:a + 3] = _rotation(phi).T
            Dv[a:a + 3, a:a + 3] = h * _right_jacobian(phi)
    return Dq, Dv


def perturb_pos(m, qpos, dq):
    """qpos (+) dq (tangent vector of length nv)."""
    out = qpos.copy()
    hc.integrate_pos(m._struct, out, np.asarray(dq, dtype=float), 1.0)
    return out


def diff_pos(m, q1, q0):
    """Tangent vector dq with q0 (+) dq = q1 (mj_differentiatePos)."""
    out = np.empty(m.nv)
    for j in range(m.njnt):
        t = m.jnt_type[j]
        pa, da = m.jnt_qposadr[j], m.jnt_dofadr[j]
        if t == JointType.FREE:
            out[da:da + 3] = q1[pa:pa + 3] - q0[pa:pa + 3]
            pa += 3
            da += 3
        if t in (JointType.FREE, JointType.BALL):
            a, b = q1[pa:pa + 4], q0[pa:pa + 4]
            # rotation vector of b^-1 a, in b's frame
            bn = np.array([b[0], -b[1], -b[2], -b[3]])
            w0 = bn[0] * a[0] - bn[1:] @ a[1:]
            wv = bn[0] * a[1:] + a[0] * bn[1:] + np.cross(bn[1:], a[1:])
            s = np.linalg.norm(wv)
            ang = 2.0 * np.arctan2(s, w0)
            if ang > np.pi:
                ang -= 2.0 * np.pi
            out[da:da + 3] = wv / s * ang if s > 1e-300 else 0.0
        else:
            out[da] = q1[pa] - q0[pa]
    return out


# ------------------------------------------------------------------------------------------------
# inputs of v_free
# ------------------------------------------------------------------------------------------------
def _ctrl_force_gain(m, d):
    """d actuator_force / d ctrl (diagonal) for gains fixed or affine without activation dynamics."""
    nu = m.nu
    g = np.zeros(nu)
    for i in range(nu):
        if m.actuator_dyntype[i] != DynType.NONE:
            raise NotImplementedError("hard contact derivatives: actuator dynamics")
        gt = m.actuator_gaintype[i]
        prm = m.actuator_gainprm[i]
        if gt == GainType.FIXED:
            g[i] = prm[0]
        elif gt == GainType.AFFINE:
            g[i] = prm[0] + prm[1] * d.actuator_length[i] + prm[2] * d.actuator_velocity[i]
        else:
            raise NotImplementedError(f"hard contact derivatives: gain type {GainType(gt).name}")
        if m.actuator_ctrllimited[i]:
            lo, hi = m.actuator_ctrlrange[i]
            if not lo <= d.ctrl[i] <= hi:
                g[i] = 0.0          # clamped control: no sensitivity
    return g


def _velocity_inputs(m, d, p):
    """dv_free/dv, dv_free/dctrl, dv_free/dqfrc_applied at the assembled state."""
    h = m.opt.timestep
    smooth_vel(m._struct, d._struct, True)
    qDeriv = dense_D(m, d.qDeriv)
    Fv = np.eye(m.nv) + h * p.Minv @ qDeriv
    Ftau = h * p.Minv
    Fu = Ftau @ (d.actuator_moment[:m.nu].T * _ctrl_force_gain(m, d))
    return Fv, Fu, Ftau


def _restitution_rows(m, p, opt):
    """d b / d v: the bouncing normal and limit rows carry e J v."""
    dbdv = np.zeros((p.J.shape[0], m.nv))
    dbdv[p.bounce] = opt.restitution * p.J[p.bounce]
    return dbdv


# ------------------------------------------------------------------------------------------------
# the LCP sensitivity
# ------------------------------------------------------------------------------------------------
def _dz(Mlcp, C, rhs):
    """dz (nz, k) with dz_C = -Mlcp_CC^+ rhs_C (the least-squares minimal solution, the paper's
    IV-C; one complete orthogonal factorisation for all k columns), zero elsewhere."""
    out = np.zeros(rhs.shape)
    if len(C):
        out[C] = -lstsq(Mlcp[np.ix_(C, C)], rhs[C], cond=1e-10, lapack_driver="gelsy")[0]
    return out


def _position_ingredients(m, d, p, opt, eps):
    """Centered differences of M^-1, v_free, J and b along each tangent direction of qpos
    (position stages and collision only); the contacts and limit rows must not change."""
    nv = m.nv
    qpos0 = d.qpos.copy()
    dMinv = np.empty((nv, nv, nv))
    dvfree = np.empty((nv, nv))
    dJ = np.empty((nv,) + p.J.shape)
    db = np.empty((nv, p.J.shape[0]))
    try:
        for j in range(nv):
            e = np.zeros(nv)
            e[j] = eps
            sides = []
            for s in (1.0, -1.0):
                d.qpos[:] = perturb_pos(m, qpos0, s * e)
                ps = hc.assemble(m, d, opt)
                if (ps.contact_key, ps.limit_key) != (p.contact_key, p.limit_key):
                    raise ValueError("hard contact derivatives: the contacts change within eps of "
                                     "the state (a mode change); no derivative there")
                sides.append(ps)
            pp, pm = sides
            dMinv[j] = (pp.Minv - pm.Minv) / (2 * eps)
            dvfree[:, j] = (pp.v_free - pm.v_free) / (2 * eps)
            dJ[j] = (pp.J - pm.J) / (2 * eps)
            db[j] = (pp.b - pm.b) / (2 * eps)
    finally:
        d.qpos[:] = qpos0
        hc.assemble(m, d, opt)
    return dMinv, dvfree, dJ, db


def step_derivatives(m, d, opt=None, clamping=None, warm=None, eps=1e-6):
    """Jacobians of hc.lcp_step at d's state (d's state is left unchanged). ``clamping``
    overrides the set C (complementarity-aware gradients); ``warm``: the warm set of the step."""
    opt = opt or hc.HardContactOptions()
    h = m.opt.timestep
    nv = m.nv
    p = hc.assemble(m, d, opt)
    info = hc.solve_lcp(p, opt, warm)
    z = info.z
    C = info.clamping if clamping is None else np.asarray(clamping, dtype=int)
    vnext = hc.next_velocity(p, z)
    Fv, Fu, Ftau = _velocity_inputs(m, d, p)
    Mlcp, _ = hc.lcp_matrix(p)
    nrow = p.J.shape[0]
    JtMinv = p.Minv @ p.J.T                     # (nv, nrow)
    zrow = z[:nrow]

    # position: A = J M^-1 J' and q = J v_free + b change with q
    dMinv, dvfree, dJ, db = _position_ingredients(m, d, p, opt, eps)
    # column j: dA_j z with dA_j = dJ_j M^-1 J' + J M^-1 dJ_j' + J dM^-1_j J', dq_j, and
    # d(M^-1 J')_j z = dM^-1_j J' z + M^-1 dJ_j' z
    dJz = np.einsum("jrk,r->kj", dJ, zrow)                  # dJ_j' z
    dMinvJz = np.einsum("jab,b->aj", dMinv, p.J.T @ zrow)   # dM^-1_j J' z
    dMz_rows = np.einsum("jrk,k->rj", dJ, JtMinv @ zrow) + p.J @ (p.Minv @ dJz + dMinvJz)
    dq_rows = np.einsum("jrk,k->rj", dJ, p.v_free) + p.J @ dvfree + db.T
    dforce = dMinvJz + p.Minv @ dJz

    # all inputs (v, ctrl, qfrc_applied, q) as columns of one system on C:
    # dv' = dv_free + d(M^-1 J') z + M^-1 J' dz,  dz_C = -Mlcp_CC^+ (dMlcp z + dq)_C
    inputs = (Fv, Fu, Ftau, dvfree)
    dvfree_all = np.hstack(inputs)
    rhs = np.zeros((p.nz, dvfree_all.shape[1]))
    rhs[:nrow] = np.hstack([p.J @ Fv + _restitution_rows(m, p, opt), p.J @ Fu, p.J @ Ftau,
                            dq_rows + dMz_rows])
    dv = dvfree_all + JtMinv @ _dz(Mlcp, C, rhs)[:nrow]
    dvdv, dvdu, dvdtau, dvdq = np.split(dv, np.cumsum([nv, m.nu, nv]), axis=1)
    dvdq = dvdq + dforce

    Dq, Dv = integration_jacobians(m, vnext, h)
    dqdq = Dq + Dv @ dvdq
    dqdv = Dv @ dvdv
    if opt.restitution > 0.0 and opt.elastic_correction:
        dqdq, dqdv = _bounce_correction(m, p, C, opt, h, dqdq, dqdv)
    A = np.block([[dqdq, dqdv], [dvdq, dvdv]])
    B = np.vstack([Dv @ dvdu, dvdu])
    return StepJacobians(A, B, dvdq, dvdv, dvdu, dvdtau, dqdq, dqdv, C, info)


def _bounce_correction(m, p, C, opt, h, dqdq, dqdv):
    """Section VI and appendix E: on a step with bouncing contacts, dq'/dq is the matrix closest
    to the identity (Frobenius) with J_i X J_i^+ = -e for each bouncing normal row i (eq. 37);
    dq'/dv = h dq'/dq (eq. 28)."""
    bounce = [i for i in C if i < p.ncon and p.bounce[i]]
    if not bounce:
        return dqdq, dqdv
    a = [p.J[i] for i in bounce]                        # J_i X b_i with b_i = J_i^+ (a column)
    bvec = [p.J[i] / (p.J[i] @ p.J[i]) for i in bounce]
    G = np.array([[(ai @ ak) * (bi @ bk) for ak, bk in zip(a, bvec)] for ai, bi in zip(a, bvec)])
    r = np.array([-opt.restitution - ai @ bi for ai, bi in zip(a, bvec)])   # residual at X = I
    lam = np.linalg.lstsq(G, r, rcond=None)[0]
    X = np.eye(m.nv) + sum(l * np.outer(ai, bi) for l, ai, bi in zip(lam, a, bvec))
    return X, h * X


# ------------------------------------------------------------------------------------------------
# complementarity-aware gradients (section IV-D)
# ------------------------------------------------------------------------------------------------
def complementarity_aware_vjp(m, d, dl_dvnext, opt=None, warm=None):
    """Gradients of a loss l(v') with respect to (qvel, ctrl, qfrc_applied), on the LCP's clamping
    set or on the set the loss asks for (a contact whose separation lowers the loss, J_n M^-1 dl/dv'
    < 0, separates; one that pushes in clamps), whichever has the larger
    |dl/dv|^2 + |dl/dtau|^2 / h. Returns (dl/dv, dl/dctrl, dl/dtau, which) with which in
    {'lcp', 'aware'}."""
    opt = opt or hc.HardContactOptions()
    h = m.opt.timestep
    g = np.asarray(dl_dvnext, dtype=float)
    jac = step_derivatives(m, d, opt, warm=warm)
    p = jac.info.problem
    C = set(int(i) for i in jac.clamping)
    push = p.J[:p.ncon] @ (p.Minv @ g)              # loss change per unit normal impulse
    for c in range(p.ncon):
        friction = set(range(p.ncon + hc.NDIR * c, p.ncon + hc.NDIR * (c + 1))) | {p.J.shape[0] + c}
        if push[c] < 0.0:
            C -= {c} | friction
        elif push[c] > 0.0:
            C |= {c}
    best = None
    for name, jc in (("lcp", jac), ("aware", step_derivatives(m, d, opt, sorted(C), warm))):
        gv, gu, gt = g @ jc.dvdv, g @ jc.dvdu, g @ jc.dvdtau
        score = gv @ gv + gt @ gt / h
        if best is None or score > best[0]:
            best = (score, gv, gu, gt, name)
    return best[1:]


# ------------------------------------------------------------------------------------------------
# finite differences of the step (the reference and the benchmark's baseline)
# ------------------------------------------------------------------------------------------------
def _step_from(m, d, qpos, qvel, ctrl, qfrc, opt, warm):
    d.qpos[:] = qpos
    d.qvel[:] = qvel
    d.ctrl[:] = ctrl
    d.qfrc_applied[:] = qfrc
    p = hc.assemble(m, d, opt)
    info = hc.solve_lcp(p, opt, warm)
    v = hc.next_velocity(p, info.z)
    q = qpos.copy()
    hc.integrate_pos(m._struct, q, v, m.opt.timestep)
    return q, v


def step_fd(m, d, opt=None, eps=1e-6, warm=None):
    """Centered differences of the whole step (assembly, LCP, integration): A, B and dv'/dtau in
    the layout of step_derivatives. ``warm``: the set tried first at every perturbed state."""
    opt = opt or hc.HardContactOptions()
    nv, nu = m.nv, m.nu
    q0, v0, u0, t0 = d.qpos.copy(), d.qvel.copy(), d.ctrl.copy(), d.qfrc_applied.copy()
    qn, _ = _step_from(m, d, q0, v0, u0, t0, opt, warm)
    A = np.empty((2 * nv, 2 * nv))
    B = np.empty((2 * nv, nu))
    T = np.empty((nv, nv))

    def column(args_p, args_m):
        qp, vp = _step_from(m, d, *args_p, opt, warm)
        qm, vm = _step_from(m, d, *args_m, opt, warm)
        return np.r_[diff_pos(m, qp, qn) - diff_pos(m, qm, qn), vp - vm] / (2 * eps)

    try:
        for j in range(nv):
            e = np.zeros(nv)
            e[j] = eps
            A[:, j] = column((perturb_pos(m, q0, e), v0, u0, t0), (perturb_pos(m, q0, -e), v0, u0, t0))
            A[:, nv + j] = column((q0, v0 + e, u0, t0), (q0, v0 - e, u0, t0))
            T[:, j] = column((q0, v0, u0, t0 + e), (q0, v0, u0, t0 - e))[nv:]
        for j in range(nu):
            e = np.zeros(nu)
            e[j] = eps
            B[:, j] = column((q0, v0, u0 + e, t0), (q0, v0, u0 - e, t0))
    finally:
        d.qpos[:], d.qvel[:], d.ctrl[:], d.qfrc_applied[:] = q0, v0, u0, t0
        hc.assemble(m, d, opt)
    return StepJacobians(A, B, A[nv:, :nv], A[nv:, nv:], B[nv:], T, A[:nv, :nv], A[:nv, nv:],
                         None)

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
detector) and the gaps b, differentiated analytically (_position_analytic: the RNEA derivatives and
the per-geom-pair contact derivatives of engine.derivative_analytic, Nimble's appendix F and section
V) or, for a geom pair without them, by centered differences of the position stages (_position_fd,
collision included, no LCP solve), and combined with the analytical LCP sensitivity above.
Positions: q' = q (+) h v', so dq'/dq = Dq + Dv dv'/dq, dq'/dv = Dv dv'/dv, with Dq, Dv the
derivatives of the quaternion exponential (identity and h I on hinge and slide dofs).
"""
from dataclasses import dataclass

import numpy as np
from scipy.linalg import lstsq

from . import hard_contact as hc
from . import derivative_analytic as da
from .derivative import dense_D, smooth_vel
from .enums import ConstraintType, DisableBit, DynType, GainType, JointType


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
    position: str = ""      # how dv'/dq was differentiated: "analytic" or "fd"


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


def _position_terms(dMinv_Jz, dJ_x1, dJz, dJ_vf, dvfree, db, p):
    """The four position columns step_derivatives needs, from the derivatives (column j: along
    tangent direction j of qpos) of M^-1 J'z, J x1 (x1 = M^-1 J'z), J'z, J v_free, v_free, b:
        d(M^-1 J')z = dM^-1 J'z + M^-1 dJ'z            (the force term of dv')
        dA z        = dJ x1 + J d(M^-1 J') z            (A = J M^-1 J')
        dq          = dJ v_free + J dv_free + db        (q = J v_free + b)"""
    dforce = dMinv_Jz + p.Minv @ dJz
    return dvfree, dJ_x1 + p.J @ dforce, dJ_vf + p.J @ dvfree + db, dforce


def _position_fd(m, d, p, z, opt, eps):
    """Centered differences of M^-1, v_free, J and b along each tangent direction of qpos
    (position stages and collision only, no LCP solve); the contacts and limit rows must not
    change within eps. The fallback for geom pairs without analytical contact derivatives."""
    nv = m.nv
    nrow = p.J.shape[0]
    zrow = z[:nrow]
    Jz = p.J.T @ zrow
    x1 = p.Minv @ Jz
    qpos0 = d.qpos.copy()
    cols = {k: np.empty((n, nv)) for k, n in (("Minv_Jz", nv), ("J_x1", nrow), ("Jz", nv),
                                              ("J_vf", nrow), ("vf", nv), ("b", nrow))}
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
                sides.append((ps.Minv @ Jz, ps.J @ x1, ps.J.T @ zrow, ps.J @ p.v_free,
                              ps.v_free, ps.b))
            for k, a, b in zip(cols, *sides):
                cols[k][:, j] = (a - b) / (2 * eps)
    finally:
        d.qpos[:] = qpos0
        hc.assemble(m, d, opt)
    return _position_terms(*cols.values(), p)


def _contact_efc_impulses(d, p, z):
    """Impulses on the engine's efc rows of the LCP contacts with J_efc' f = J' z per contact:
    an elliptic or frictionless contact's rows take (fn, ft1, ft2); a pyramidal one's edges
    n +- mu_k t_k take fn / (2 npair) +- ft_k / (2 mu_k)."""
    f = np.zeros(int(d.nefc))
    beta = z[p.ncon:p.ncon * (1 + hc.NDIR)].reshape(p.ncon, hc.NDIR)
    ft = np.stack([beta[:, 0] - beta[:, 2], beta[:, 1] - beta[:, 3]], axis=1)
    for k, c in enumerate(p.contact_index):
        adr = d.contact_efc_address[c]
        dim = int(d.contact_dim[c])
        if d.efc_type[adr] != ConstraintType.CONTACT_PYRAMIDAL:
            f[adr] = z[k]
            f[adr + 1:adr + min(dim, 3)] = ft[k, :dim - 1]
            continue
        npair = dim - 1
        for j in range(min(npair, 2)):
            mu = d.efc_mu[adr + 2 * j]
            s = ft[k, j] / (2 * mu) if mu > 0.0 else 0.0      # no friction: beta stays 0
            f[adr + 2 * j] = z[k] / (2 * npair) + s
            f[adr + 2 * j + 1] = z[k] / (2 * npair) - s
        for j in range(2, npair):
            f[adr + 2 * j:adr + 2 * j + 2] = z[k] / (2 * npair)
    return f


def _lcp_rows(d, p, efc_rows):
    """The LCP's contact rows (normal, then +t1, +t2, -t1, -t2 per contact) from quantities given
    per efc row (elliptic: n, t1, t2; pyramidal edges: n = (e0 + e1) / 2, t_k = (e_2k -
    e_2k+1) / (2 mu_k)); rows of the joint limits stay zero."""
    out = np.zeros((p.J.shape[0],) + efc_rows.shape[1:])
    for k, c in enumerate(p.contact_index):
        adr = d.contact_efc_address[c]
        r = efc_rows[adr:]
        if d.efc_type[adr] == ConstraintType.CONTACT_PYRAMIDAL:
            out[k] = 0.5 * (r[0] + r[1])
        else:
            out[k] = r[0]
        if p.mu[k] > 0.0:               # dim >= 3 (hard_contact._contact_rows)
            if d.efc_type[adr] == ConstraintType.CONTACT_PYRAMIDAL:
                t = np.array([(r[0] - r[1]) / (2 * d.efc_mu[adr]),
                              (r[2] - r[3]) / (2 * d.efc_mu[adr + 2])])
            else:
                t = r[1:3]
            a = p.ncon + hc.NDIR * k
            out[a:a + 2] = t
            out[a + 2:a + 4] = -t
    return out


def _offset_slopes(p, opt, h, eps, ddist):
    """d b / d q of the normal and limit rows: b = dist / h on a gap, erp dist / h on a
    penetration, with ddist (ncon, nv) = d dist / d q of the contacts (from their geometry: the
    normal row of J where the contact point stays on the normal through its features, Nimble's
    appendix C, not where a face slides under a vertex or an edge over a side) and the row's J
    for a limit. At the kink dist = 0, where resting contacts settle (to rounding), there is no
    derivative: within |D_ij eps| of it (D = d dist / d q) entry ij is the secant of b over
    dist +- D_ij eps (what a centered difference of step eps sees), elsewhere the one-sided
    slope."""
    nrow = p.J.shape[0]
    rows = np.r_[np.arange(p.ncon), np.arange(p.ncon * (1 + hc.NDIR), nrow)]
    dist = p.dist[:, None]
    step = np.vstack([ddist, p.J[rows[p.ncon:]]]) * eps

    def b(x):
        return np.where(x > 0.0, x, opt.erp * x) / h

    db = np.zeros((nrow, p.J.shape[1]))
    db[rows] = (b(dist + step) - b(dist - step)) / (2 * eps)
    return db


def _position_analytic(m, d, p, z, opt, eps):
    """The position columns analytically (Nimble's section V and appendix F, here through the
    engine's derivative kernels, engine.derivative_analytic): the motion of dof j moves its
    subtree by the twist cdof_j, so the inertia, the smooth forces (RNE, springs, actuator
    moments, applied wrenches) and the contact rows (positions, frames and distances of the
    contacts per geom pair: plane-sphere, plane-capsule, plane-box corners and plane-mesh
    vertices (vertex-face), plane-ellipsoid, plane-cylinder, sphere-sphere, sphere-capsule,
    capsule-capsule, sphere-box, box-box (face clipping and edge-cross axis), and the convex
    detector's sphere, capsule, box and mesh against box and mesh, classified by their
    features: vertex-face, face-vertex, edge-edge) follow from spatial cross products.
        dM^-1 y = -M^-1 (dM) M^-1 y,   dM x = d RNE(q, v, x) / dq - d RNE(q, v, 0) / dq
        dv_free = -h M^-1 d/dq [RNE(q, v, a_s) - qfrc_passive - qfrc_actuator - J' xfrc],
                  a_s = M^-1 qfrc_smooth (M here: the step's inertia, M + h B)
        d dist / dq from the contact geometry (J_n, the normal row, where the contact
                  point stays on the normal through its features), so db = d dist / h on a gap,
                  erp d dist / h on a penetration (_offset_slopes: the kink at 0), e dJ_n v on a
                  bouncing row; limit rows alike (d dist / dq = J, constant).
    None when a contact's geom pair has no derivative there (the caller falls back to
    _position_fd)."""
    ms, ds = m._struct, d._struct
    nv = m.nv
    h = m.opt.timestep
    nrow = p.J.shape[0]
    nefc = int(d.nefc)
    zrow = z[:nrow]
    x1 = p.Minv @ (p.J.T @ zrow)
    w = da.make_work(ms, ds)
    gravity = not m.opt.disableflags & DisableBit.GRAVITY

    def rne_q(acc):
        out = np.zeros((nv, nv))
        da.twists(ms, ds, d.qvel, w.body_W, w.dof_U)
        da.accelerations(ms, ds, acc, gravity, w.body_A, w.body_F, w.dof_alpha)
        da.rne_pos(ms, ds, w, out)
        return out

    dM_x1 = rne_q(x1) - rne_q(np.zeros(nv))
    Fs = np.zeros((nv, nv))
    da.smooth_position_jacobian(ms, ds, w, p.Minv @ p.qfrc_smooth, True, True, Fs)
    dvfree = -h * p.Minv @ Fs
    # contact rows: J x1 (and J'z) and J v_free, differentiated per efc row
    f = _contact_efc_impulses(d, p, z)
    dJz = np.zeros((nv, nv))
    per_x = []
    for x, sink in ((x1, dJz), (p.v_free, np.zeros((nv, nv)))):
        rows = da.Rows(np.zeros((nefc, nv)), np.zeros((nefc, nv)), np.zeros((nefc, nv)),
                       np.zeros((nefc, nv)), sink)
        da.twists(ms, ds, x, w.body_W, w.dof_W)
        for c in p.contact_index:
            if not da.contact_derivs(ms, ds, w, c, f, 1.0, rows):
                return None
        per_x.append(rows)
    dJ_x1 = _lcp_rows(d, p, per_x[0].DJw)
    dJ_vf = _lcp_rows(d, p, per_x[1].DJw)
    db = _offset_slopes(p, opt, h, eps, _lcp_rows(d, p, per_x[0].Jpos)[:p.ncon])
    if np.any(p.bounce):
        djv = _lcp_rows(d, p, per_x[0].DJv)          # d(J v)/dq at the step's qvel
        db[p.bounce] = opt.restitution * djv[p.bounce]
    return _position_terms(-p.Minv @ dM_x1, dJ_x1, dJz, dJ_vf, dvfree, db, p)




def step_derivatives(m, d, opt=None, clamping=None, warm=None, eps=1e-6, position="analytic"):
    """Jacobians of hc.lcp_step at d's state (d's state is left unchanged). ``clamping``
    overrides the set C (complementarity-aware gradients); ``warm``: the warm set of the step.
    ``position``: "analytic" (falls back to "fd" when a contact's geom pair has no analytical
    derivative; the result's ``position`` says which ran) or "fd" (centered differences of the
    position stages and collision with step ``eps``, no LCP solve)."""
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

    # position: M^-1, v_free, J and b change with q
    terms = _position_analytic(m, d, p, z, opt, eps) if position == "analytic" else None
    position_method = "analytic" if terms is not None else "fd"
    if terms is None:
        terms = _position_fd(m, d, p, z, opt, eps)
    dvfree, dMz_rows, dq_rows, dforce = terms

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
    return StepJacobians(A, B, dvdq, dvdv, dvdu, dvdtau, dqdq, dqdv, C, info, position_method)


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

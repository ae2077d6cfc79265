"""Hard contact as a linear complementarity problem (Werling et al., Nimble; docs/nimble.md).

    info = lcp_step(m, d, opt)          one step: smooth stages, contact LCP, semi-implicit Euler
    prob = assemble(m, d, opt)          the step's dense problem at d's state (no solve)

The velocity-level step of Stewart & Trinkle / Anitescu & Potra with a pyramid of 4 friction
directions per contact (paper eq. 2-5):

    M (v' - v) = h qfrc_smooth + Jn' fn + D' beta + Jl' fl,     q' = q (+) h v'
    0 <= fn   _|_  Jn v' + bn >= 0                   (no approach; bn: gap / penetration recovery)
    0 <= beta _|_  D v' + E lam >= 0                 (sliding opposes the slip direction)
    0 <= lam  _|_  mu fn - E' beta >= 0              (friction inside the pyramid)
    0 <= fl   _|_  Jl v' + bl >= 0                   (joint limits)

with v' = v_free + M^-1 J' z, v_free = v + h M^-1 qfrc_smooth, the unknowns z = (fn, beta, lam, fl)
stacked, and w = Mlcp z + qlcp. Solved by Lemke's method (engine.lcp), then stabilised (paper
appendix B): on the set C of rows with zero velocity, the least-squares minimal z_C with
Mlcp_CC z_C = -q_C is taken when it is a valid solution; the previous step's set is tried first
and Lemke's method runs only when that guess fails (the paper's warm start).
M is the step's inertia: M + h B with implicit joint damping, as the engine's other solvers.
Works on the engine's contacts (d.contact: collision, margins, condim) and Jacobians (jac_kernel).
"""
from dataclasses import dataclass, field

import numpy as np

from . import actuator, lcp
from .forward import _dense_inertia, fwd_acceleration, fwd_position, fwd_velocity, integrate_pos
from .enums import JointType
from .smooth import jac_kernel

NDIR = 4            # friction directions per contact: +t1, +t2, -t1, -t2


@dataclass
class HardContactOptions:
    """Options of the LCP step. erp: fraction of a penetration removed per step; restitution:
    Newton's coefficient e (the normal rows ask for Jn v' >= -e Jn v when approaching); tol:
    the complementarity tolerance that classifies rows (clamping z > tol, zero velocity w <= tol);
    elastic_correction: the bounce approximation of dq'/dq in the derivatives (section VI)."""
    erp: float = 0.2
    restitution: float = 0.0
    tol: float = 1e-9
    warmstart: bool = True
    elastic_correction: bool = True


@dataclass
class Problem:
    """The dense LCP of one step at a state (all arrays from `assemble`)."""
    M: np.ndarray           # (nv, nv) inertia of the step
    Minv: np.ndarray        # its inverse
    qfrc_smooth: np.ndarray
    v: np.ndarray           # qvel at the start of the step
    v_free: np.ndarray      # v + h M^-1 qfrc_smooth
    J: np.ndarray           # (nrow, nv): normal rows, direction rows, limit rows (no lam rows)
    b: np.ndarray           # (nrow,) offsets of the velocity rows (bn, 0, bl)
    mu: np.ndarray          # (ncon,) friction coefficient per contact (0: frictionless)
    ncon: int
    nlim: int
    contact_key: tuple      # (geom1, geom2) per contact, to match warm starts
    limit_key: tuple        # (joint, side) per limit row

    @property
    def nz(self):
        return self.J.shape[0] + self.ncon

    def lam_rows(self):
        """Index of the lam unknowns in z: after the velocity rows."""
        return self.J.shape[0] + np.arange(self.ncon)


@dataclass
class StepInfo:
    """Outcome of an LCP step: z, w (LCP unknowns and velocities), the clamping set used,
    how the solution was found ('warm', 'lemke', 'none'), Lemke's pivots."""
    z: np.ndarray
    w: np.ndarray
    clamping: np.ndarray
    source: str
    pivots: int = 0
    problem: Problem = field(default=None, repr=False)


# ------------------------------------------------------------------------------------------------
# assembly
# ------------------------------------------------------------------------------------------------
def smooth_stages(m, d):
    """Position and velocity stages, actuation and qfrc_smooth at d's state (no constraint solve)."""
    ms, ds = m._struct, d._struct
    fwd_position(ms, ds)
    fwd_velocity(ms, ds)
    actuator.fwd_actuation(ms, ds)
    fwd_acceleration(ms, ds)


def _contact_rows(m, d, ms, ds, ncon):
    """Normal and direction rows of the contacts, relative velocity of geom2 w.r.t. geom1."""
    nv = m.nv
    Jn = np.zeros((ncon, nv))
    D = np.zeros((ncon * NDIR, nv))
    dist = np.empty(ncon)
    mu = np.zeros(ncon)
    jp1, jr1 = np.empty((3, nv)), np.empty((3, nv))
    jp2, jr2 = np.empty((3, nv)), np.empty((3, nv))
    for c in range(ncon):
        g1, g2 = d.contact_geom1[c], d.contact_geom2[c]
        pos = d.contact_pos[c].copy()
        jac_kernel(ms, ds, pos, m.geom_bodyid[g1], jp1, jr1)
        jac_kernel(ms, ds, pos, m.geom_bodyid[g2], jp2, jr2)
        Jrel = jp2 - jp1                      # velocity of the point on geom2 relative to geom1
        frame = d.contact_frame[c].reshape(3, 3)
        Jn[c] = frame[0] @ Jrel
        dist[c] = d.contact_dist[c]
        if d.contact_dim[c] >= 3:
            mu[c] = d.contact_friction[c, 0]
            t = frame[1:] @ Jrel
            D[NDIR * c:NDIR * c + 2] = t
            D[NDIR * c + 2:NDIR * c + 4] = -t
    return Jn, D, dist, mu


def _limit_rows(m, d):
    """Rows of the limited hinge and slide joints within their margin: (J, dist, keys)."""
    rows, dist, keys = [], [], []
    for j in range(m.njnt):
        if not m.jnt_limited[j] or m.jnt_type[j] not in (JointType.HINGE, JointType.SLIDE):
            continue
        q = d.qpos[m.jnt_qposadr[j]]
        lo, hi = m.jnt_range[j]
        for side, gap in ((1.0, q - lo), (-1.0, hi - q)):
            if gap < m.jnt_margin[j]:
                row = np.zeros(m.nv)
                row[m.jnt_dofadr[j]] = side
                rows.append(row)
                dist.append(gap)
                keys.append((j, side))
    J = np.array(rows).reshape(len(rows), m.nv)
    return J, np.array(dist), tuple(keys)


def _offset(dist, vel, h, opt):
    """Offset b of unilateral rows w = J v' + b >= 0 at distance dist, approaching at J v = vel.
    A gap (dist > 0) may close within the step: dist / h. A penetration is removed at the rate
    erp per step: erp dist / h. With restitution e an approaching row leaves at e times its
    speed (Newton's law), J v' >= -e J v, and no penetration recovery is added to the bounce."""
    b = np.where(dist > 0.0, dist, opt.erp * dist) / h
    if opt.restitution > 0.0:
        bounce = vel < 0.0
        b[bounce] = opt.restitution * vel[bounce] + np.maximum(dist[bounce], 0.0) / h
    return b


def assemble(m, d, opt=None):
    """The dense LCP of a step at d's state (runs the smooth stages and collision)."""
    opt = opt or HardContactOptions()
    ms, ds = m._struct, d._struct
    smooth_stages(m, d)
    h = m.opt.timestep
    nv = m.nv
    M = np.empty((nv, nv))
    _dense_inertia(ms, ds, M)
    Minv = np.linalg.inv(M)
    ncon = int(d.ncon)
    Jn, D, dist, mu = _contact_rows(m, d, ms, ds, ncon)
    Jl, ldist, lkeys = _limit_rows(m, d)
    qfrc = d.qfrc_smooth.copy()
    v = d.qvel.copy()
    v_free = v + h * (Minv @ qfrc)
    bn = _offset(dist, Jn @ v, h, opt)
    bl = _offset(ldist, Jl @ v, h, opt)
    J = np.vstack([Jn, D, Jl])
    b = np.concatenate([bn, np.zeros(D.shape[0]), bl])
    key = tuple((int(d.contact_geom1[c]), int(d.contact_geom2[c])) for c in range(ncon))
    return Problem(M, Minv, qfrc, v, v_free, J, b, mu, ncon, len(lkeys), key, lkeys)


def lcp_matrix(p):
    """Mlcp, qlcp of the problem: the A = J M^-1 J' block, the friction pyramid's E and mu."""
    nrow = p.J.shape[0]
    nz = p.nz
    Mlcp = np.zeros((nz, nz))
    Mlcp[:nrow, :nrow] = p.J @ p.Minv @ p.J.T
    qlcp = np.zeros(nz)
    qlcp[:nrow] = p.J @ p.v_free + p.b
    _add_friction_blocks(p, Mlcp)
    return Mlcp, qlcp


def _add_friction_blocks(p, Mlcp):
    """The constant blocks: D v' + E lam (E: ones per contact), mu fn - E' beta."""
    lam = p.lam_rows()
    for c in range(p.ncon):
        if p.mu[c] <= 0.0:
            Mlcp[lam[c], lam[c]] = 1.0      # lam = 0 (frictionless: no friction rows used)
            continue
        dirs = p.ncon + NDIR * c + np.arange(NDIR)
        Mlcp[dirs, lam[c]] = 1.0
        Mlcp[lam[c], dirs] = -1.0
        Mlcp[lam[c], c] = p.mu[c]


def frictionless_rows(p):
    """Direction rows of the contacts without friction: their beta stay zero."""
    out = []
    for c in range(p.ncon):
        if p.mu[c] <= 0.0:
            out.extend(p.ncon + NDIR * c + np.arange(NDIR))
    return np.array(out, dtype=int)


# ------------------------------------------------------------------------------------------------
# solve
# ------------------------------------------------------------------------------------------------
def _solve_on_set(Mlcp, qlcp, C):
    """z with z_C the least-squares minimal solution of Mlcp_CC z_C = -q_C, zero elsewhere."""
    z = np.zeros(qlcp.shape[0])
    if len(C):
        z[C] = np.linalg.lstsq(Mlcp[np.ix_(C, C)], -qlcp[C], rcond=1e-12)[0]
    return z


def _valid(Mlcp, qlcp, z, tol):
    w = Mlcp @ z + qlcp
    scale = 1.0 + np.abs(qlcp).max(initial=0.0)
    return z.min(initial=0.0) >= -tol * scale and w.min(initial=0.0) >= -tol * scale


def solve_lcp(p, opt, warm=None):
    """Solve the step's LCP: the warm set first, else Lemke; then stabilise on the zero-velocity set."""
    Mlcp, qlcp = lcp_matrix(p)
    fixed = frictionless_rows(p)
    tol = opt.tol
    if warm is not None and opt.warmstart:
        z = _solve_on_set(Mlcp, qlcp, warm)
        if _valid(Mlcp, qlcp, z, tol):
            return _finish(Mlcp, qlcp, z, warm, "warm", 0, p)
    if qlcp.shape[0] == 0 or qlcp.min() >= 0.0:
        z = np.zeros(qlcp.shape[0])
        return _finish(Mlcp, qlcp, z, np.zeros(0, dtype=int), "none", 0, p)
    z, info = lcp.lemke(Mlcp, qlcp)
    if not info.ok:
        raise RuntimeError(f"hard contact: Lemke's method failed ({info.status.name})")
    scale = 1.0 + np.abs(qlcp).max()
    w = Mlcp @ z + qlcp
    # stabilisation (appendix B): least-squares minimal z on every zero-velocity row, if valid
    zero_w = np.setdiff1d(np.flatnonzero(w <= tol * scale), fixed)
    zs = _solve_on_set(Mlcp, qlcp, zero_w)
    if _valid(Mlcp, qlcp, zs, tol):
        return _finish(Mlcp, qlcp, zs, zero_w, "lemke", info.pivots, p)
    C = np.flatnonzero(z > tol * scale)
    zs = _solve_on_set(Mlcp, qlcp, C)
    if _valid(Mlcp, qlcp, zs, tol):
        return _finish(Mlcp, qlcp, zs, C, "lemke", info.pivots, p)
    return _finish(Mlcp, qlcp, z, C, "lemke", info.pivots, p)


def _finish(Mlcp, qlcp, z, C, source, pivots, p):
    return StepInfo(z, Mlcp @ z + qlcp, np.asarray(C, dtype=int), source, pivots, p)


def next_velocity(p, z):
    """v' = v_free + M^-1 J' z (the lam unknowns exert no force)."""
    nrow = p.J.shape[0]
    return p.v_free + p.Minv @ (p.J.T @ z[:nrow])


# ------------------------------------------------------------------------------------------------
# the step
# ------------------------------------------------------------------------------------------------
def _warm_set(p, state):
    """The previous step's clamping set, if the contacts and limit rows are the same."""
    if state is None or state.get("key") != (p.contact_key, p.limit_key):
        return None
    return state["clamping"]


def lcp_step(m, d, opt=None, state=None):
    """One hard-contact step: qvel, qpos, qacc, time (act must be empty). ``state`` (a dict the
    caller keeps between steps) carries the warm start; returns StepInfo."""
    opt = opt or HardContactOptions()
    if m.na:
        raise NotImplementedError("hard contact: actuator activations (na > 0) are not supported")
    p = assemble(m, d, opt)
    info = solve_lcp(p, opt, _warm_set(p, state))
    vnext = next_velocity(p, info.z)
    h = m.opt.timestep
    d.qacc[:] = (vnext - p.v) / h
    d.qvel[:] = vnext
    integrate_pos(m._struct, d.qpos, d.qvel, h)
    d.time = d.time + h
    if state is not None:
        state["key"] = (p.contact_key, p.limit_key)
        state["clamping"] = info.clamping
    return info


def rollout(m, d, ctrl, opt=None):
    """Steps with the rows of ctrl (T, nu) as controls; returns qpos (T+1, nq), qvel (T+1, nv)."""
    state = {}
    qpos = [d.qpos.copy()]
    qvel = [d.qvel.copy()]
    for u in ctrl:
        d.ctrl[:] = u
        lcp_step(m, d, opt, state)
        qpos.append(d.qpos.copy())
        qvel.append(d.qvel.copy())
    return np.array(qpos), np.array(qvel)

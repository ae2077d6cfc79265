"""Hard contact as a linear complementarity problem (Werling et al., Nimble; docs/nimble.md).

    info = lcp_step(m, d, opt)          one step: smooth stages, contact LCP, semi-implicit Euler
    prob = assemble(m, d, opt)          the step's dense problem at d's state (no solve)
    step(m, d, nstep) / forward(m, d)   engine.step / engine.forward with m.opt.solver = Solver.LCP
    options(m)                          the model's HardContactOptions used by step and forward

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
Works on the engine's contacts (d.contact: collision, margins, condim; contacts in a geom's gap
exert no force, as in the other solvers) and Jacobians (jac_kernel). The collision runs with the
geoms' margins widened by ``HardContactOptions.margin``: a resting contact, whose distance settles
at 0 to rounding, is then detected on both sides of 0, the LCP decides whether it closes (b =
dist / h), and the contact set does not flicker from one step, or one perturbation, to the next.
The step writes the same outputs as the other solvers: d.contact, the efc_* rows of the contacts
and joint limits (efc_force / efc_impulse from the LCP's impulses, as a pyramidal or elliptic
contact's rows carry them), qfrc_constraint, qacc, the sensors and d.energy.
"""
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from . import actuator, lcp, sensor
from .forward import (_dense_inertia, _grow, check_state, energy_kernel, fwd_acceleration,
                      fwd_position, fwd_velocity, implicit_damping, integrate_pos, reset_state)
from .constraint import row_dot
from .enums import ConstraintType, JointType, Warning
from .math import first_bad, warn
from .smooth import jac_kernel

NDIR = 4            # friction directions per contact: +t1, +t2, -t1, -t2


@dataclass
class HardContactOptions:
    """Options of the LCP step. erp: fraction of a penetration removed per step; restitution:
    Newton's coefficient e (the normal rows ask for Jn v' >= -e Jn v when approaching); tol:
    the complementarity tolerance that classifies rows (clamping z > tol, zero velocity w <= tol);
    elastic_correction: the bounce approximation of dq'/dq in the derivatives (section VI);
    margin: added to every geom pair's margin for the step's collision detection (m), so that a
    contact touching at distance 0 stays in the LCP (it must exceed the derivatives' eps)."""
    erp: float = 0.2
    restitution: float = 0.0
    tol: float = 1e-9
    warmstart: bool = True
    elastic_correction: bool = True
    margin: float = 1e-3


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
    contact_index: np.ndarray   # (ncon,) index in d.contact of each LCP contact (gap excluded)
    contact_key: tuple      # (geom1, geom2) per contact, to match warm starts
    limit_key: tuple        # (joint, side) per limit row
    bounce: np.ndarray      # (nrow,) rows whose offset is the restitution's e J v
    dist: np.ndarray        # (ncon + nlim,) distances of the contacts and the limit rows

    @property
    def nz(self):
        return self.J.shape[0] + self.ncon

    def lam_rows(self):
        """Index of the lam unknowns in z: after the velocity rows."""
        return self.J.shape[0] + np.arange(self.ncon)


@dataclass
class StepInfo:
    """Outcome of an LCP step: z, w (LCP unknowns and velocities), the clamping set used,
    how the solution was found ('warm', 'lemke', 'lemke+cfm' (Lemke's method needed constraint
    force mixing: lemke_regularised), 'none'), Lemke's pivots."""
    z: np.ndarray
    w: np.ndarray
    clamping: np.ndarray
    source: str
    pivots: int = 0
    problem: Problem = field(default=None, repr=False)


# ------------------------------------------------------------------------------------------------
# assembly
# ------------------------------------------------------------------------------------------------
@contextmanager
def _widened_margins(m, margin):
    """The geoms' and pairs' margins widened by margin per pair (a pair's two geom margins add
    up), restored afterwards."""
    saved = m.geom_margin.copy(), m.pair_margin.copy()
    m.geom_margin[:] += 0.5 * margin
    m.pair_margin[:] += margin
    try:
        yield
    finally:
        m.geom_margin[:] = saved[0]
        m.pair_margin[:] = saved[1]


def smooth_stages(m, d, margin=0.0):
    """Position (collision within the margins widened by margin) and velocity stages, actuation
    and qfrc_smooth at d's state (no constraint solve); d grows if the contacts did not fit."""
    with _widened_margins(m, margin):
        fwd_position(m._struct, d._struct)
        while d.nefc_overflow[0]:
            _grow(m, d)
            fwd_position(m._struct, d._struct)
    ms, ds = m._struct, d._struct
    fwd_velocity(ms, ds)
    actuator.fwd_actuation(ms, ds)
    fwd_acceleration(ms, ds)


def check_supported(m):
    """NotImplementedError for what the LCP step does not model (rather than ignoring it)."""
    active_eq = m.neq and np.any(m.eq_active0)
    missing = [what for what, present in (
        ("equality constraints", active_eq),
        ("dof friction loss", np.any(m.dof_frictionloss > 0.0)),
        ("tendon limits and friction loss",
         m.ntendon and (np.any(m.tendon_limited) or np.any(m.tendon_frictionloss > 0.0))),
        ("ball joint limits", np.any(m.jnt_limited & (m.jnt_type == JointType.BALL))),
        ("actuator activations (na > 0)", m.na > 0)) if present]
    if missing:
        raise NotImplementedError(f"hard contact (Solver.LCP): {', '.join(missing)} not supported")


def _contact_rows(m, d, ms, ds, index):
    """Normal and direction rows of the contacts d.contact[index], relative velocity of geom2
    w.r.t. geom1."""
    nv = m.nv
    ncon = len(index)
    Jn = np.zeros((ncon, nv))
    D = np.zeros((ncon * NDIR, nv))
    dist = np.empty(ncon)
    mu = np.zeros(ncon)
    jp1, jr1 = np.empty((3, nv)), np.empty((3, nv))
    jp2, jr2 = np.empty((3, nv)), np.empty((3, nv))
    for k, c in enumerate(index):
        g1, g2 = d.contact_geom1[c], d.contact_geom2[c]
        pos = d.contact_pos[c].copy()
        jac_kernel(ms, ds, pos, m.geom_bodyid[g1], jp1, jr1)
        jac_kernel(ms, ds, pos, m.geom_bodyid[g2], jp2, jr2)
        Jrel = jp2 - jp1                      # velocity of the point on geom2 relative to geom1
        frame = d.contact_frame[c].reshape(3, 3)
        Jn[k] = frame[0] @ Jrel
        dist[k] = d.contact_dist[c]
        if d.contact_dim[c] >= 3:
            mu[k] = d.contact_friction[c, 0]
            t = frame[1:] @ Jrel
            D[NDIR * k:NDIR * k + 2] = t
            D[NDIR * k + 2:NDIR * k + 4] = -t
    return Jn, D, dist, mu


def _limit_rows(m, d):
    """Rows of the limited hinge and slide joints within their margin: (J, dist, keys), joint by
    joint, the lower side first."""
    lim = np.flatnonzero((m.jnt_limited != 0) & ((m.jnt_type == JointType.HINGE)
                                                 | (m.jnt_type == JointType.SLIDE)))
    q = d.qpos[m.jnt_qposadr[lim]]
    gap = np.stack([q - m.jnt_range[lim, 0], m.jnt_range[lim, 1] - q], axis=1)
    jnt, side = np.nonzero(gap < m.jnt_margin[lim, None])
    sign = np.array([1.0, -1.0])[side]
    J = np.zeros((len(jnt), m.nv))
    J[np.arange(len(jnt)), m.jnt_dofadr[lim[jnt]]] = sign
    keys = tuple((int(j), float(s)) for j, s in zip(lim[jnt], sign))
    return J, gap[jnt, side], keys


def _offset(dist, vel, h, opt):
    """Offset b of unilateral rows w = J v' + b >= 0 at distance dist, approaching at J v = vel,
    and the mask of the bouncing rows. A gap (dist > 0) may close within the step: dist / h. A
    penetration is removed at the rate erp per step: erp dist / h. With restitution e a row that
    approaches and reaches contact within the step (dist + h vel <= 0) leaves at e times its
    speed (Newton's law), J v' >= -e J v, without penetration recovery; a row that approaches
    but stays apart keeps its gap offset (no bounce before the impact)."""
    b = np.where(dist > 0.0, dist, opt.erp * dist) / h
    bounce = np.zeros(dist.shape[0], dtype=bool)
    if opt.restitution > 0.0:
        bounce = (vel < 0.0) & (dist + h * vel <= 0.0)
        b[bounce] = opt.restitution * vel[bounce]
    return b, bounce


def assemble(m, d, opt=None):
    """The dense LCP of a step at d's state (runs the smooth stages and collision)."""
    opt = opt or HardContactOptions()
    smooth_stages(m, d, opt.margin)
    ms, ds = m._struct, d._struct
    h = m.opt.timestep
    nv = m.nv
    M = np.empty((nv, nv))
    _dense_inertia(ms, ds, M)
    Minv = np.linalg.inv(M)
    index = np.flatnonzero(d.contact_exclude[:d.ncon] == 0)
    # by geom pair (stable: a pair's contacts keep the collision function's order): the broad
    # phase's pair order may change with a perturbation of the state, the LCP's rows must not
    index = index[np.lexsort((d.contact_geom2[index], d.contact_geom1[index]))]
    Jn, D, dist, mu = _contact_rows(m, d, ms, ds, index)
    Jl, ldist, lkeys = _limit_rows(m, d)
    qfrc = d.qfrc_smooth.copy()
    v = d.qvel.copy()
    v_free = v + h * (Minv @ qfrc)
    bn, bounce_n = _offset(dist, Jn @ v, h, opt)
    bl, bounce_l = _offset(ldist, Jl @ v, h, opt)
    J = np.vstack([Jn, D, Jl])
    b = np.concatenate([bn, np.zeros(D.shape[0]), bl])
    bounce = np.concatenate([bounce_n, np.zeros(D.shape[0], dtype=bool), bounce_l])
    key = tuple((int(d.contact_geom1[c]), int(d.contact_geom2[c])) for c in index)
    return Problem(M, Minv, qfrc, v, v_free, J, b, mu, len(index), len(lkeys), index, key, lkeys,
                   bounce, np.concatenate([dist, ldist]))


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
    if warm is not None and opt.warmstart and np.all(np.asarray(warm) < qlcp.shape[0]):
        z = _solve_on_set(Mlcp, qlcp, warm)
        if _valid(Mlcp, qlcp, z, tol):
            return _finish(Mlcp, qlcp, z, warm, "warm", 0, p)
    if qlcp.shape[0] == 0 or qlcp.min() >= 0.0:
        z = np.zeros(qlcp.shape[0])
        return _finish(Mlcp, qlcp, z, np.zeros(0, dtype=int), "none", 0, p)
    z, info, delta = lemke_regularised(Mlcp, qlcp, p.J.shape[0], tol)
    source = "lemke" if delta == 0.0 else "lemke+cfm"
    scale = 1.0 + np.abs(qlcp).max()
    w = Mlcp @ z + qlcp
    # stabilisation (appendix B): least-squares minimal z on every zero-velocity row, if valid
    zero_w = np.setdiff1d(np.flatnonzero(w <= tol * scale), fixed)
    zs = _solve_on_set(Mlcp, qlcp, zero_w)
    if _valid(Mlcp, qlcp, zs, tol):
        return _finish(Mlcp, qlcp, zs, zero_w, source, info.pivots, p)
    C = np.flatnonzero(z > tol * scale)
    zs = _solve_on_set(Mlcp, qlcp, C)
    if _valid(Mlcp, qlcp, zs, tol):
        return _finish(Mlcp, qlcp, zs, C, source, info.pivots, p)
    return _finish(Mlcp, qlcp, z, C, source, info.pivots, p)


class LCPFailure(RuntimeError):
    """Lemke's method found no solution of the step's LCP, also with constraint force mixing."""


# constraint force mixing tried when Lemke's method fails, relative to the largest diagonal
# entry of J M^-1 J'
REGULARISATION = (1e-10, 1e-8, 1e-6, 1e-4)


def lemke_regularised(Mlcp, qlcp, nrow, tol):
    """Lemke's method on the LCP; when it fails (RAY or SINGULAR, or a solution whose w misses
    w >= 0 by more than tol: rounding makes the rank-deficient contact block of many coplanar
    contacts, a humanoid's feet, slightly non-copositive and the pivots degenerate) again on
    Mlcp + delta I, delta growing through REGULARISATION times the largest diagonal entry of
    J M^-1 J'. This is constraint force mixing (the CFM of ODE and DART, Nimble's engine):
    Mlcp + delta I is strictly copositive, for which Lemke's method ends with a solution for every
    q in exact arithmetic (Cottle, Pang & Stone, section 4.4), a solution of the LCP whose rows
    are softened by delta z.
    Returns z, info and the delta used (0: none). The caller stabilises it on its clamping set
    against the unregularised Mlcp (solve_lcp), which removes the softening wherever that set
    admits an exact solution. LCPFailure when every delta fails."""
    unit = max(np.diag(Mlcp)[:nrow].max(initial=0.0), 1e-300)
    statuses = []
    for delta in (0.0,) + REGULARISATION:
        soft = Mlcp + delta * unit * np.eye(qlcp.shape[0]) if delta else Mlcp
        z, info = lcp.lemke(soft, qlcp)
        if info.ok and _valid(soft, qlcp, z, tol):
            return z, info, delta
        statuses.append(info.status.name if not info.ok else "INACCURATE")
    raise LCPFailure(f"hard contact: Lemke's method failed ({', '.join(statuses)}), also with "
                     f"constraint force mixing up to {REGULARISATION[-1]:g}")


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


def lcp_step(m, d, opt=None, state=None, checked=False):
    """One hard-contact step: the outputs of a forward (efc rows, qfrc_constraint, qacc, sensors,
    energy) at d's state, then qvel, qpos, time. ``state`` (a dict the caller keeps between
    steps) carries the warm start; returns StepInfo, or None when nothing was solved and so
    nothing integrated: a bad state (counted; with ``checked`` reset, None if still bad) or an
    LCP without solution (BADQACC, qacc NaN; with ``checked`` the state reset)."""
    info = _solve_at_state(m, d, opt, state, checked)
    if info is None:
        return None
    h = m.opt.timestep
    d.qvel[:] = next_velocity(info.problem, info.z)
    integrate_pos(m._struct, d.qpos, d.qvel, h)
    d.time = d.time + h
    return info


def _finite(p):
    """-1 if the step's free velocity and inverse inertia are finite, else a dof at fault."""
    bad = int(first_bad(p.v_free))
    return bad if bad >= 0 or np.isfinite(p.Minv).all() else 0


def _assemble_checked(m, d, opt, state):
    """assemble() after the checks of engine.step: a bad qpos, qvel, act or time is counted and
    the state reset (check_state); a non-finite free velocity (a NaN applied force, a degenerate
    inertia) counts BADQACC and resets the state, as the soft solvers' step does; None when the
    reset state is bad too (a NaN model parameter): the step is then not taken."""
    check_state(m._struct, d._struct)
    for _ in range(2):
        p = assemble(m, d, opt)
        bad = _finite(p)
        if bad < 0:
            return p
        warn(d._struct, int(Warning.BADQACC), bad)
        reset_state(m._struct, d._struct)
        state.clear()
    return None


def _solve_at_state(m, d, opt, state, checked=False):
    """Assemble and solve the LCP at d's state; write the forward's outputs (write_outputs).
    With ``checked`` (engine.step), bad states are counted and reset (_assemble_checked);
    without, a non-finite free velocity counts BADQACC and leaves qacc NaN. An LCP that Lemke's
    method cannot solve (LCPFailure) counts BADQACC and leaves qacc NaN too, and with
    ``checked`` resets the state. None when nothing was solved."""
    opt = opt or HardContactOptions()
    check_supported(m)
    if checked:
        p = _assemble_checked(m, d, opt, state)
        if p is None:
            return None
    else:
        p = assemble(m, d, opt)
        bad = _finite(p)
        if bad >= 0:
            warn(d._struct, int(Warning.BADQACC), bad)
            d.qacc[:] = np.nan
            return None
    try:
        info = solve_lcp(p, opt, _warm_set(p, state))
    except LCPFailure:
        # no impulses stop the contacts (a step so long that the damping's implicit inertia
        # leaves J M^-1 J' ~ 0): no acceleration, counted as the soft solvers count a bad one
        warn(d._struct, int(Warning.BADQACC), 0)
        d.qacc[:] = np.nan
        if checked:
            reset_state(m._struct, d._struct)
            state.clear()
        return None
    write_outputs(m, d, p, info)
    if state is not None:
        state["key"] = (p.contact_key, p.limit_key)
        state["clamping"] = info.clamping
    return info


def write_outputs(m, d, p, info):
    """efc_force / efc_impulse of the contact and joint-limit rows from the LCP impulses,
    qfrc_constraint = J' z / h, qacc = (v' - v) / h, solver_niter (Lemke's pivots), the sensors
    and the energy, as a forward with a soft solver leaves them."""
    h = m.opt.timestep
    nrow = p.J.shape[0]
    z = info.z
    nefc = int(d.nefc)
    d.efc_force[:nefc] = 0.0
    fn = z[:p.ncon]
    beta = z[p.ncon:p.ncon + NDIR * p.ncon].reshape(p.ncon, NDIR)
    ft = np.stack([beta[:, 0] - beta[:, 2], beta[:, 1] - beta[:, 3]], axis=1)
    for k, c in enumerate(p.contact_index):
        _write_contact_rows(d, c, fn[k] / h, ft[k] / h)
    _write_limit_rows(m, d, p, z[p.ncon * (1 + NDIR):nrow] / h)
    d.efc_impulse[:nefc] = h * d.efc_force[:nefc]
    vnext = next_velocity(p, z)
    d.qfrc_constraint[:] = p.J.T @ z[:nrow] / h
    d.qacc[:] = (vnext - p.v) / h
    d.solver_niter[0] = info.pivots
    d.solver_residual[0] = 0.0
    ms, ds = m._struct, d._struct
    sensor.sensor_pos(ms, ds)
    energy_kernel(ms, ds)
    sensor.sensor_vel(ms, ds)
    sensor.sensor_acc(ms, ds, d.qacc, implicit_damping(ms))


def _write_contact_rows(d, c, fn, ft):
    """The rows of contact c carrying the frame force (fn, ft1, ft2) (no torsion or rolling):
    elliptic and frictionless rows hold the components, pyramidal ones the edge forces with
    sum = fn and mu_j (f_j+ - f_j-) = ft_j; |ft1| + |ft2| <= mu fn (the LCP's pyramid) keeps
    them >= 0: the slack fn - sum |ft_j| / mu_j is shared equally by the edges."""
    adr = d.contact_efc_address[c]
    if adr < 0:
        return
    dim = int(d.contact_dim[c])
    frame = np.zeros(dim)
    frame[0] = fn
    frame[1:min(dim, 3)] = ft[:dim - 1]
    if d.efc_type[adr] != ConstraintType.CONTACT_PYRAMIDAL:
        d.efc_force[adr:adr + dim] = frame
        return
    npair = dim - 1
    mu = d.efc_mu[adr:adr + 2 * npair:2]
    s = np.divide(frame[1:], mu, out=np.zeros(npair), where=mu > 0.0)
    even = max(fn - np.abs(s).sum(), 0.0) / (2 * npair)
    d.efc_force[adr:adr + 2 * npair:2] = even + np.maximum(s, 0.0)
    d.efc_force[adr + 1:adr + 2 * npair:2] = even + np.maximum(-s, 0.0)


def _write_limit_rows(m, d, p, force):
    """efc_force of the joint-limit rows: the row of joint j with efc_J = side at its dof."""
    nefc = int(d.nefc)
    rows = np.flatnonzero(d.efc_type[:nefc] == ConstraintType.LIMIT_JOINT)
    unit = np.zeros(m.nv)
    for (j, side), f in zip(p.limit_key, force):
        unit[:] = 0.0
        unit[m.jnt_dofadr[j]] = side
        for i in rows:
            if d.efc_id[i] == j and row_dot(d._struct, i, d.efc_J, unit) > 0.0:
                d.efc_force[i] = f
                break


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


# ------------------------------------------------------------------------------------------------
# engine.step and engine.forward with m.opt.solver = Solver.LCP
# ------------------------------------------------------------------------------------------------
def options(m):
    """The HardContactOptions that engine.step and engine.forward use for m (created with the
    defaults on first use; edit its fields). Not carried by a copy or a pickle of m."""
    opt = m.__dict__.get("_hard_contact_options")
    if opt is None:
        opt = HardContactOptions()
        object.__setattr__(m, "_hard_contact_options", opt)
    return opt


def _warm_state(d):
    state = d.__dict__.get("_hard_contact_state")
    if state is None:
        state = {}
        object.__setattr__(d, "_hard_contact_state", state)
    return state


def warm_set(d):
    """The clamping set of d's last step (None before the first): the warm start of the next."""
    return _warm_state(d).get("clamping")


def forget_warm_start(d):
    """The next step of d starts without the previous step's clamping set (as a fresh Data)."""
    d.__dict__.pop("_hard_contact_state", None)


def step(m, d, nstep=1):
    """nstep hard-contact steps (engine.step with Solver.LCP), warm-started from d's last step."""
    state = _warm_state(d)
    for _ in range(nstep):
        lcp_step(m, d, options(m), state, checked=True)


def forward(m, d):
    """The forward dynamics with hard contact at d's state (engine.forward with Solver.LCP):
    qacc = (v' - v) / h of the step and the forces that make it. A non-finite free velocity
    counts BADQACC and leaves qacc NaN (the state is not touched)."""
    _solve_at_state(m, d, options(m), _warm_state(d))

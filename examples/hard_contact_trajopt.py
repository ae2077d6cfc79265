"""Shooting trajectory optimisation through the hard-contact step (Werling et al., section VII).

Three tasks on the paper's scenes (assets/nimble_*.xml), each a loss on the state after T steps
of open-loop controls U (T, nu) from the model's initial state:

- drone (Fig. 8): a box on a vertical slide joint with a thrust motor, resting on the ground,
  must reach a target height. From zero thrust the contact clamps at every step: the exact
  gradient is zero and the optimiser stops where it started; with complementarity-aware
  gradients (section IV-D) the drone lifts off.
- catapult: a 3-dof arm bats a ball resting on the ground so that it is at a target point at
  step T (the squared distance).
- jumpworm: a 5-dof worm lying on the ground must have its head as high as possible at step T
  (the loss is minus the height).

The loss's gradient with respect to U is backpropagated through the step Jacobians of
engine.hard_contact_grad (the adjoint of the shooting problem: lam_t = A' lam_t+1, dl/du_t =
B' lam_t+1): single shooting over the controls alone with scipy's L-BFGS-B within the control
ranges, and multiple shooting (the horizon in pieces of 5 steps whose start states, the knots,
are variables too, continuity as constraints, scipy's trust-constr: ``multiple_shooting``; or
the knots started on a guess of the state trajectory and the gaps contracted by a
feasibility-driven line search as in Crocoddyl's FDDP, with L-BFGS directions:
``feasibility_driven``, which makes the jump-worm jump where trust-constr stays on the ground). The
gradient-free baseline is stochastic search (Gaussian perturbations of the best controls so
far, the step size adapted by the 1/5 success rule) given the wall time of the slowest gradient
method.
``main`` prints the loss against wall time of each and plots it (DIR/trajopt.png).

    python examples/hard_contact_trajopt.py [--task drone|catapult|jumpworm|all] [--out DIR]
                                            [--record F]

``--record`` writes the trajectory of single shooting's controls (engine.Recorder):
``python -m studio F`` plays it back.
"""
import argparse
import pathlib
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import BFGS, Bounds, NonlinearConstraint, minimize
from scipy.sparse import csr_matrix

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import engine  # noqa: E402
from engine import hard_contact as hc  # noqa: E402
from engine import hard_contact_grad as hg  # noqa: E402

DRONE = ROOT / "assets" / "nimble_drone.xml"


@dataclass
class Task:
    """A loss on the final qpos (hinge and slide joints only: qpos is the tangent space)."""
    path: pathlib.Path
    T: int
    loss: Callable          # qpos -> (loss, d loss / d qpos)
    aware: bool = False     # complementarity-aware gradients
    u0: tuple = ()          # the initial controls (every step), zero if empty
    rise: tuple = ()        # (qpos index, height): feasibility_driven's guess of the knots, the
                            # initial pose rising by height over the horizon at constant speed

    def initial(self, nu):
        return np.tile(np.asarray(self.u0 or np.zeros(nu), dtype=float), (self.T, 1))


def _drone_loss(target):
    def loss(q):
        err = q[0] - target
        g = np.zeros_like(q)
        g[0] = 2.0 * err
        return err ** 2, g
    return loss


def _catapult_loss(q):
    """Squared distance of the ball (slides ball_x, ball_z from its start (0.49, 0.05)) to the
    target (1.0, 0.4)."""
    err = np.array([q[3] - 0.51, q[4] - 0.35])
    g = np.zeros_like(q)
    g[3:5] = 2.0 * err
    return err @ err, g


def _jumpworm_loss(q):
    """Minus the height of the head (root_z)."""
    g = np.zeros_like(q)
    g[1] = -1.0
    return -q[1], g


def tasks():
    assets = ROOT / "assets"
    return {"drone": Task(DRONE, 15, _drone_loss(0.3), aware=True, rise=(0, 0.3)),
            # from a swing that reaches the ball (from zero the arm falls past it: no gradient)
            "catapult": Task(assets / "nimble_catapult.xml", 30, _catapult_loss,
                             u0=(-1.0, -0.3, -0.2)),
            # lying on the ground all contacts clamp: exact gradients of the height are zero
            "jumpworm": Task(assets / "nimble_jumpworm.xml", 30, _jumpworm_loss, aware=True,
                             rise=(1, 0.4))}


def _roll(m, x, U):
    """The state (qpos, qvel) after the controls U from x, with a fresh warm start."""
    d = engine.make_data(m)
    d.qpos[:], d.qvel[:] = x[:m.nv], x[m.nv:]
    state = {}
    for u in U:
        d.ctrl[:] = u
        hc.lcp_step(m, d, None, state)
    return np.concatenate([d.qpos, d.qvel])


def rollout_loss(m, task, U):
    """The loss of the controls U from the initial state (no gradient): the stochastic search's
    evaluation."""
    return task.loss(_roll(m, _initial_state(m), U)[:m.nv])[0]


def _initial_state(m):
    return np.concatenate([m.qpos0, np.zeros(m.nv)])


def _taped_roll(m, x, U):
    """Roll U out from x = (qpos, qvel) with a fresh warm start; returns the Data, the tape of
    (qpos, qvel, ctrl, warm start) before each step, and the end state."""
    d = engine.make_data(m)
    d.qpos[:], d.qvel[:] = x[:m.nv], x[m.nv:]
    tape, state = [], {}
    for u in U:
        d.ctrl[:] = u
        tape.append((d.qpos.copy(), d.qvel.copy(), u.copy(), state.get("clamping")))
        hc.lcp_step(m, d, None, state)
    return d, tape, np.concatenate([d.qpos, d.qvel])


def _segment(m, task, x, U, aware, g_end):
    """Roll the controls U out from x = (qpos, qvel) with a fresh warm start, take g_end(q', v') ->
    (value, dl/d(q', v')) at the end, and backpropagate dl/d(q', v') through each step (A' and
    B' products). Returns the value, the end state, dl/dU and dl/d(q, v) at the start.
    aware: complementarity-aware Jacobians where the loss asks a clamping contact to separate."""
    d, tape, end = _taped_roll(m, x, U)
    value, lam = g_end(end)
    grad = np.zeros_like(U)
    for t in reversed(range(len(U))):
        q, v, u, warm = tape[t]
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        jac = hg.step_derivatives(m, d, warm=warm)
        if aware:
            jac = _aware_jacobians(m, d, jac, lam, warm)
        grad[t] = jac.B.T @ lam
        lam = jac.A.T @ lam
    return value, end, grad, lam


def _final_loss(task, nv):
    def g_end(x):
        loss, dq = task.loss(x[:nv])
        return loss, np.concatenate([dq, np.zeros(nv)])
    return g_end


def loss_and_grad(m, task, U, aware=None):
    """Single shooting: the loss of U rolled out from the initial state and its gradient."""
    aware = task.aware if aware is None else aware
    loss, _, grad, _ = _segment(m, task, _initial_state(m), U, aware, _final_loss(task, m.nv))
    return loss, grad


def _aware_jacobians(m, d, jac, lam, warm):
    """The step's Jacobians on the set the loss asks for, when that gradient is larger
    (hard_contact_grad.complementarity_aware_vjp on the loss seen by v')."""
    nv = m.nv
    g_v = lam[nv:] + m.opt.timestep * lam[:nv]      # q' = q + h v' on hinge and slide joints
    _, _, _, which = hg.complementarity_aware_vjp(m, d, g_v, warm=warm)
    if which != "aware":
        return jac
    p = jac.info.problem
    push = p.J[:p.ncon] @ (p.Minv @ g_v)
    C = [i for i in jac.clamping if not (i < p.ncon and push[i] < 0.0)]
    return hg.step_derivatives(m, d, clamping=C, warm=warm)


def _bounds(m):
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    return lo, hi, hi - lo


def optimise(m, task, aware=None, maxiter=50, U0=None):
    """L-BFGS-B over the controls divided by the width of their range (from rest a first trial
    step that changes nothing would make the line search shrink it to zero; a unit step is a
    sizeable control); returns the controls, (wall time, loss) per evaluation."""
    lo, hi, scale = _bounds(m)
    T = task.T
    history = []
    t0 = time.perf_counter()

    def fun(x):
        loss, grad = loss_and_grad(m, task, x.reshape(T, m.nu) * scale, aware)
        history.append((time.perf_counter() - t0, loss))
        return loss, (grad * scale).ravel()

    x0 = (task.initial(m.nu) if U0 is None else U0) / scale
    res = minimize(fun, x0.ravel(), jac=True, method="L-BFGS-B",
                   bounds=list(zip(np.tile(lo / scale, T), np.tile(hi / scale, T))),
                   options={"maxiter": maxiter})
    return res.x.reshape(T, m.nu) * scale, history


def _aware_step(m, d, jac, lam, warm):
    """The step's Jacobians on the LCP's clamping set or on the set the adjoint lam (dl/d(q', v'))
    asks for, whichever gives the larger |dl/dv|^2 + |dl/dtau|^2 / h (the rule of
    hard_contact_grad.complementarity_aware_vjp, section IV-D, reusing the LCP set's Jacobians
    jac: at most one more step_derivatives)."""
    nv, h = m.nv, m.opt.timestep
    g = lam[nv:] + h * lam[:nv]                    # q' = q + h v' on hinge and slide joints
    p = jac.info.problem
    push = p.J[:p.ncon] @ (p.Minv @ g)             # loss change per unit normal impulse
    C = set(int(i) for i in jac.clamping)
    for c in range(p.ncon):
        friction = set(range(p.ncon + hc.NDIR * c, p.ncon + hc.NDIR * (c + 1)))
        friction.add(p.J.shape[0] + c)
        if push[c] < 0.0:
            C -= {c} | friction
        elif push[c] > 0.0:
            C.add(c)
    if C == set(int(i) for i in jac.clamping):
        return jac
    alt = hg.step_derivatives(m, d, clamping=sorted(C), warm=warm)

    def score(j):
        gv, gt = g @ j.dvdv, g @ j.dvdtau
        return gv @ gv + gt @ gt / h
    return alt if score(alt) > score(jac) else jac


def _backward(m, d, tape, lam, aware, full=True, rows=False):
    """Backpropagate the adjoint lam = dl/d(end state) through a piece's tape, and with full the
    Jacobians of the end state, d end/dU (nx, len, nu) and d end/dx (nx, nx), on the same step
    Jacobians (with aware: chosen per step by _aware_step for the adjoint lam, so that the
    constraint Jacobians are those of one consistent linearisation, the one the objective's
    adjoint asks for; with rows too: chosen per step for each row of the Jacobians, the adjoint
    of that end coordinate, as if it were to be lowered). Returns dl/dU, dl/dx, d end/dU,
    d end/dx."""
    nx, n = 2 * m.nv, len(tape)
    grad = np.zeros((n, m.nu))
    R = np.eye(nx) if full else None
    dU = np.zeros((nx, n, m.nu)) if full else None
    for t in reversed(range(n)):
        q, v, u, warm = tape[t]
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        exact = hg.step_derivatives(m, d, warm=warm)
        jac = _aware_step(m, d, exact, lam, warm) if aware else exact
        grad[t] = jac.B.T @ lam
        lam = jac.A.T @ lam
        if full and aware and rows:
            for i in range(nx):
                j = _aware_step(m, d, exact, R[i], warm)
                dU[i, t] = R[i] @ j.B
                R[i] = R[i] @ j.A
        elif full:
            dU[:, t] = R @ jac.B
            R = R @ jac.A
    return grad, lam, dU, R


def _piece_jacobians(m, x, U, aware=False, lam=None):
    """The end state e of a piece (controls U from x, fresh warm start) and its exact Jacobians
    de/dU (nx, len(U), nu) and de/dx (nx, nx); with aware, the complementarity-aware ones for
    the adjoint lam (dl/de)."""
    d, tape, end = _taped_roll(m, x, U)
    lam = np.zeros(2 * m.nv) if lam is None else lam
    _, _, dU, dx = _backward(m, d, tape, lam, aware)
    return end, dU, dx


def default_segments(task):
    """Pieces of 5 steps (3 on the drone's 15 steps, 6 on 30 steps)."""
    return max(2, task.T // 5)


def multiple_shooting(m, task, segments=None, aware=None, maxiter=100, U0=None,
                      method="trust-constr", constraints="adjoint", seconds=np.inf,
                      verbose=False):
    """Multiple shooting (Nimble's section VII-D): the horizon cut into `segments` pieces, each
    rolled out from its own start state (the first from the model's initial state, the others
    decision variables X_1..X_S-1, the knots), the loss of the last piece's end minimised subject
    to continuity c_s = x_end(s) - X_s+1 = 0 and the control ranges, by scipy's trust-constr
    (the paper uses IPOPT: an interior-point method for the ranges, a trust-region SQP with BFGS
    Hessians, the constraint Jacobian sparse) or SLSQP (method="SLSQP", dense; it fails on the
    drone and the catapult, docs/nimble.md). The Jacobians come from the step Jacobians
    (_backward: one backward pass per piece, the full Jacobians carried along). The knots start on
    the rollout of the initial controls (c = 0, no knot in penetration).

    With aware (the task's default), every piece is linearised with the complementarity-aware
    step Jacobians chosen, step by step, for the objective's adjoint at the piece's end: dl/dX_s+1
    propagated back from the loss through the later pieces, which is the multiplier of c_s at a
    KKT point (stationarity in X_s+1), so that the constraint Jacobians and the objective's
    gradient are those of one linearisation, the one the Lagrangian asks for. constraints=
    "exact" keeps the aware choice for the objective (the last piece) only and linearises the
    other pieces exactly; constraints="rows" makes the aware choice for each row of a piece's
    Jacobians apart (the adjoint of that end coordinate). Both stall on the drone. Knots and gaps are scaled per coordinate:
    positions by 1, velocities by the piece's duration (a velocity error times the piece's
    duration is a position error).

    Returns the controls of the last iterate and (wall time, loss of the controls rolled out from
    the initial state in one piece, max |c| unscaled) per iteration: the loss a user of the
    controls gets. Stops after maxiter iterations (trust-constr: evaluations) or, at the next
    iteration, after `seconds`."""
    aware = task.aware if aware is None else aware
    S = default_segments(task) if segments is None else segments
    if S < 2:
        raise ValueError("multiple shooting needs at least 2 pieces (1 is single shooting)")
    lo, hi, scale = _bounds(m)
    T, nu, nv = task.T, m.nu, m.nv
    nx = 2 * nv
    cuts = np.linspace(0, T, S + 1).round().astype(int)
    x0 = _initial_state(m)
    U = (task.initial(nu) if U0 is None else U0).astype(float)
    X = np.empty((S - 1, nx))
    for s in range(S - 1):                 # the knots on the rollout of the initial controls
        X[s] = _roll(m, x0 if s == 0 else X[s - 1], U[cuts[s]:cuts[s + 1]])
    sx = np.r_[np.ones(nv), np.full(nv, S / (m.opt.timestep * T))]     # X = sx * variable
    nU = T * nu
    g_end = _final_loss(task, nv)
    history, t0 = [], time.perf_counter()
    cache = {}

    def unpack(z):
        return z[:nU].reshape(T, nu) * scale, z[nU:].reshape(S - 1, nx) * sx

    def start(X, s):
        return x0 if s == 0 else X[s - 1]

    def forward(z):
        key = z.tobytes()
        if cache.get("key") != key:
            U, X = unpack(z)
            cache.clear()
            cache.update(key=key, X=X, rolls=[_taped_roll(m, start(X, s), U[cuts[s]:cuts[s + 1]])
                                              for s in range(S)])
        return cache

    def backward(z):
        c = forward(z)
        if "jac" in c:
            return c
        rolls = c["rolls"]
        lam = g_end(rolls[-1][2])[1]
        grad = np.zeros(z.size)
        jac = np.zeros(((S - 1) * nx, z.size))
        for s in reversed(range(S)):        # the last piece first: its adjoint guides the others
            d, tape, _ = rolls[s]
            gU, lam_start, dU, dx = _backward(m, d, tape, lam,
                                              aware and (constraints != "exact" or s == S - 1),
                                              full=s < S - 1, rows=constraints == "rows")
            cu = slice(cuts[s] * nu, cuts[s + 1] * nu)
            cx = slice(nU + (s - 1) * nx, nU + s * nx)          # X_s
            if s == S - 1:
                grad[cu] = (gU * scale).ravel()
                if s > 0:
                    grad[cx] = lam_start * sx
            else:
                r = slice(s * nx, (s + 1) * nx)
                jac[r, cu] = (dU * scale).reshape(nx, -1) / sx[:, None]
                if s > 0:
                    jac[r, cx] = dx * sx / sx[:, None]
                jac[r, nU + s * nx:nU + (s + 1) * nx] = -np.eye(nx)
            lam = lam_start                 # dl/dX_s
        c.update(grad=grad, jac=jac)
        return c

    def loss(z):
        return g_end(forward(z)["rolls"][-1][2])[0]

    def gaps(z):
        c = forward(z)
        return np.concatenate([(c["rolls"][s][2] - c["X"][s]) / sx for s in range(S - 1)])

    class Done(Exception):
        pass

    last = []

    def progress(z, *_):
        last[:] = [np.array(z, copy=True)]
        U, _ = unpack(z)
        history.append((time.perf_counter() - t0, rollout_loss(m, task, U),
                        np.abs(gaps(z) * np.tile(sx, S - 1)).max()))
        if history[-1][0] > seconds:
            raise Done

    z = np.concatenate([(U / scale).ravel(), (X / sx).ravel()])
    lb = np.r_[np.tile(lo / scale, T), np.full(X.size, -np.inf)]
    ub = np.r_[np.tile(hi / scale, T), np.full(X.size, np.inf)]
    try:
        progress(z)
        if method == "SLSQP":
            res = minimize(loss, z, jac=lambda z: backward(z)["grad"], method="SLSQP",
                           bounds=Bounds(lb, ub), callback=progress,
                           constraints={"type": "eq", "fun": gaps,
                                        "jac": lambda z: backward(z)["jac"]},
                           options={"maxiter": maxiter, "ftol": 1e-12})
        else:
            con = NonlinearConstraint(gaps, 0.0, 0.0, jac=lambda z: csr_matrix(backward(z)["jac"]),
                                      hess=BFGS())
            res = minimize(loss, z, jac=lambda z: backward(z)["grad"], hess=BFGS(),
                           method="trust-constr", bounds=Bounds(lb, ub), constraints=[con],
                           options={"maxiter": maxiter, "gtol": 1e-10, "xtol": 1e-12},
                           callback=progress)
        if verbose:
            print(f"  {method}: {res.message}")
    except Done:
        pass
    return unpack(last[0])[0], history


def feasibility_driven(m, task, segments=None, aware=None, maxiter=50, U0=None, guess=True,
                       memory=10, seconds=np.inf, verbose=False):
    """Multiple shooting with a feasibility-driven line search (the forward pass of Crocoddyl's
    FDDP, Mastalli et al. 2020, with an L-BFGS direction in place of the Riccati gains): the
    horizon in pieces (5 steps) with knots X_s that may be off the rollout (gaps c_s = x_end(s) -
    X_s+1); with guess, the knots start on the task's guess of the state trajectory (Task.rise:
    the initial pose rising at constant speed) instead of the rollout. Each iteration:

    - the gradient of the loss in the controls on the multiple-shooting linearisation: every piece
      linearised at its own knot (aware Jacobians chosen for the adjoint as in
      multiple_shooting), the adjoint carried from a piece's start to the previous piece's end
      (the knots eliminated through the linearised continuity, the gaps held);
    - an L-BFGS direction d (two-loop recursion, memory `memory`, the controls in units of their
      range, bound-active components frozen; a first or non-descent direction, or the direction
      after a failed line search, is the gradient scaled to norm 1, as L-BFGS-B's first step);
    - a backtracking line search a = 1, 1/2, ... on the nonlinear rollout with the gaps
      contracted: U' = clip(U + a d), X'_s+1 = x_end(s)(X'_s, U'_s) - (1 - a) c_s, so that a full
      step closes every gap exactly and a feasible iterate stays feasible. Accepted when the loss
      changes by at most what closing the gaps costs on the linearisation (a sum_s lam_s+1 . c_s,
      lam the adjoint at the knots) plus 1e-4 a g . d (Armijo).

    From a feasible start (guess=False, or a task without a guess) this is single shooting with
    this direction and line search. Returns the controls and (wall time, loss of the controls
    rolled out in one piece, max |c|) per iteration; stops after maxiter iterations, when a line
    search along the gradient fails, or, at the next iteration, after `seconds`."""
    aware = task.aware if aware is None else aware
    S = default_segments(task) if segments is None else segments
    if S < 2:
        raise ValueError("multiple shooting needs at least 2 pieces (1 is single shooting)")
    lo, hi, scale = _bounds(m)
    T, nu, nv = task.T, m.nu, m.nv
    cuts = np.linspace(0, T, S + 1).round().astype(int)
    x0 = _initial_state(m)
    U = (task.initial(nu) if U0 is None else U0).astype(float)
    X = np.empty((S - 1, 2 * nv))
    for s in range(S - 1):                 # the knots on the rollout of the initial controls
        X[s] = _roll(m, x0 if s == 0 else X[s - 1], U[cuts[s]:cuts[s + 1]])
    if guess and task.rise:                # or on the guess: the pose rising at constant speed
        i, height = task.rise
        X[:, i] = x0[i] + height * cuts[1:-1] / T
        X[:, nv + i] = height / (T * m.opt.timestep)
    g_end = _final_loss(task, nv)
    history, t0 = [], time.perf_counter()

    def pieces(U, X, c, a):
        """The pieces of U from the knots X'_s+1 = x_end(s) - (1 - a) c_s (a = 0: from X)."""
        rolls, x = [], x0
        for s in range(S):
            if s > 0:
                x = X[s - 1] if a == 0.0 else rolls[-1][2] - (1.0 - a) * c[s - 1]
            rolls.append(_taped_roll(m, x, U[cuts[s]:cuts[s + 1]]))
        Xn = np.array([rolls[s][2] - (1.0 - a) * c[s] for s in range(S - 1)]) if a else X
        return rolls, Xn

    def gradient(rolls):
        lam = g_end(rolls[-1][2])[1]
        g, lam_knots = np.zeros((T, nu)), np.zeros_like(X)
        for s in reversed(range(S)):
            d, tape, _ = rolls[s]
            g[cuts[s]:cuts[s + 1]], lam, _, _ = _backward(m, d, tape, lam, aware, full=False)
            if s > 0:
                lam_knots[s - 1] = lam
        return (g * scale).ravel(), lam_knots

    rolls, _ = pieces(U, X, None, 0.0)
    c = np.array([rolls[s][2] - X[s] for s in range(S - 1)])
    f = g_end(rolls[-1][2])[0]
    g, lam = gradient(rolls)
    w = (U / scale).ravel()
    lw, hw = np.tile(lo / scale, T), np.tile(hi / scale, T)
    pairs = []

    def progress():
        history.append((time.perf_counter() - t0, rollout_loss(m, task, U), np.abs(c).max()))
        if verbose:
            print(f"  {history[-1][0]:6.1f} s: loss {history[-1][1]:.4g} (iterate {f:.4g}), "
                  f"gap {history[-1][2]:.1e}")

    progress()
    for _ in range(maxiter):
        free = ~(((w <= lw) & (g > 0)) | ((w >= hw) & (g < 0)))
        q, loop = np.where(free, g, 0.0), []
        for sv, yv in reversed(pairs):                  # L-BFGS two-loop recursion
            rho = 1.0 / (yv @ sv)
            alpha = rho * (sv @ q)
            q -= alpha * yv
            loop.append((rho, alpha, sv, yv))
        if pairs:
            q *= (pairs[-1][0] @ pairs[-1][1]) / (pairs[-1][1] @ pairs[-1][1])
            for rho, alpha, sv, yv in reversed(loop):
                q += sv * (alpha - rho * (yv @ q))
        if np.linalg.norm(g[free]) < 1e-14:
            break                           # stationary
        d = np.where(free, -q, 0.0)
        if not pairs or g @ d >= 0.0:
            pairs.clear()
            d = np.where(free, -g, 0.0) / max(np.linalg.norm(g[free]), 1e-300)
        slope, closing = g @ d, np.sum(lam * c)
        a = 1.0
        for _ in range(12):
            w_new = np.clip(w + a * d, lw, hw)
            U_new = w_new.reshape(T, nu) * scale
            try:
                r_new, X_new = pieces(U_new, X, c, a)
                f_new = g_end(r_new[-1][2])[0]
            except RuntimeError:            # a trial the LCP cannot solve: a shorter step
                f_new = np.inf
            if f_new <= f + a * closing + 1e-4 * a * slope:
                break
            a *= 0.5
        else:
            if pairs:                       # once more along the gradient, the memory dropped
                pairs = []
                continue
            if verbose:
                print("  line search failed")
            break
        g_new, lam = gradient(r_new)
        if (w_new - w) @ (g_new - g) > 1e-12:
            pairs = (pairs + [(w_new - w, g_new - g)])[-memory:]
        c = np.array([r_new[s][2] - X_new[s] for s in range(S - 1)])
        w, U, X, f, g, rolls = w_new, U_new, X_new, f_new, g_new, r_new
        progress()
        if history[-1][0] > seconds:
            break
    return U, history


def stochastic_search(m, task, evaluations=200, sigma=0.2, seed=0, U0=None, seconds=np.inf):
    """Gradient-free baseline: perturb the best controls so far by Gaussian noise (sigma times
    the control range), keep a better one; sigma grows by 1.5 on a success and shrinks by
    1.5^(-1/4) on a failure (the 1/5 success rule); at most `evaluations` rollouts and `seconds`
    of wall time. Returns the controls, (wall time, best loss) per evaluation."""
    rng = np.random.default_rng(seed)
    lo, hi, scale = _bounds(m)
    t0 = time.perf_counter()
    best = task.initial(m.nu) if U0 is None else U0.copy()
    best_loss = rollout_loss(m, task, best)
    history = [(time.perf_counter() - t0, best_loss)]
    for _ in range(evaluations - 1):
        if history[-1][0] > seconds:
            break
        trial = np.clip(best + sigma * scale * rng.normal(size=best.shape), lo, hi)
        loss = rollout_loss(m, task, trial)
        if loss < best_loss:
            best, best_loss = trial, loss
            sigma *= 1.5
        else:
            sigma *= 1.5 ** -0.25
        history.append((time.perf_counter() - t0, best_loss))
    return best, history


def record(m, U, path):
    """The optimised rollout as a recording the studio opens."""
    d = engine.make_data(m)
    with engine.Recorder(m, str(path), d=d) as rec:
        for u in U:
            d.ctrl[:] = u
            engine.step(m, d)
            rec.record(d)


def _report(name, history):
    times, losses = np.array(history)[:, :2].T
    best = np.minimum.accumulate(losses)
    marks = [0, len(history) // 4, len(history) // 2, len(history) - 1]
    pts = ", ".join(f"{times[i]:.1f} s: {best[i]:.3g}" for i in marks)
    gap = (f"; last iterate {losses[-1]:.3g}, continuity gap {history[-1][2]:.1e}"
           if len(history[-1]) > 2 else "")
    print(f"  {name:<56} {len(history):>4} points; best loss at {pts}{gap}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="all", choices=["all", *tasks()])
    ap.add_argument("--out", default=".", help="where trajopt.png (loss against wall time) goes")
    ap.add_argument("--record", help="write the optimised trajectory (of the last task) here")
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(tasks()) if args.task == "all" else [args.task]
    fig, axes = plt.subplots(1, len(names), figsize=(5.5 * len(names), 4), squeeze=False)
    for ax, name in zip(axes[0], names):
        task = tasks()[name]
        m = engine.load_model(str(task.path))
        print(f"{name} (T = {task.T}, {m.nu} controls per step):")
        loss_and_grad(m, task, task.initial(m.nu))    # compiled before the clocks start
        runs = {}
        if name == "drone":
            runs["single shooting, exact gradients"] = optimise(m, task, aware=False)[1]
        aware = ", aware gradients" if task.aware else ""
        U, runs["single shooting" + aware] = optimise(m, task)
        pieces = f"multiple shooting ({default_segments(task)} pieces)"
        try:
            if name == "drone":
                runs[pieces + ", exact gradients"] = multiple_shooting(m, task, aware=False)[1]
            _, runs[pieces + aware] = multiple_shooting(m, task)
        except RuntimeError as e:           # a start state the LCP cannot solve from
            print(f"  multiple shooting stopped: {e}")
        start = "from the guess" if task.rise else "from the rollout"
        runs[f"multiple shooting, feasibility-driven {start}"] = feasibility_driven(
            m, task, maxiter=100)[1]
        budget = max(h[-1][0] for h in runs.values())
        runs["stochastic search"] = stochastic_search(m, task, evaluations=10 ** 6,
                                                      seconds=budget)[1]
        for label, history in runs.items():
            _report(label, history)
            times, losses = np.array(history)[:, :2].T
            ax.plot(times, np.minimum.accumulate(losses), label=label)
        ax.set(title=f"{name} (T = {task.T})", xlabel="wall time (s)",
               ylabel="loss of the controls")
        if name == "drone":
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        print(f"  (the machine may be shared: compare the methods of one run only)")
    fig.tight_layout()
    path = pathlib.Path(args.out) / "trajopt.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")
    if args.record:
        record(m, U, args.record)
        print(f"recorded {args.record}")


if __name__ == "__main__":
    main()

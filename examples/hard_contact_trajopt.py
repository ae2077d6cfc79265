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
B' lam_t+1) and given to scipy's L-BFGS-B within the control ranges: single shooting over the
controls alone, and multiple shooting (the horizon in pieces whose start states are variables
too, continuity as constraints for scipy's SLSQP: ``multiple_shooting``). The gradient-free
baseline is stochastic search (Gaussian perturbations of the best controls so far, the step
size adapted by the 1/5 success rule) given the wall time of the slower gradient method.
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
from scipy.optimize import minimize

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
    return {"drone": Task(DRONE, 15, _drone_loss(0.3), aware=True),
            # from a swing that reaches the ball (from zero the arm falls past it: no gradient)
            "catapult": Task(assets / "nimble_catapult.xml", 30, _catapult_loss,
                             u0=(-1.0, -0.3, -0.2)),
            # lying on the ground all contacts clamp: exact gradients of the height are zero
            "jumpworm": Task(assets / "nimble_jumpworm.xml", 30, _jumpworm_loss, aware=True)}


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


def _piece_jacobians(m, x, U, aware):
    """The end state e of a piece (controls U from x, fresh warm start) and its Jacobians
    de/dU (nx, len(U), nu) and de/dx (nx, nx), each row backpropagated as in single shooting
    (with aware: the complementarity-aware Jacobians chosen for that row's direction)."""
    nx = 2 * m.nv
    d, tape, end = _taped_roll(m, x, U)
    rows = np.eye(nx)
    dU = np.zeros((nx, len(U), m.nu))
    for t in reversed(range(len(U))):
        q, v, u, warm = tape[t]
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        jac = hg.step_derivatives(m, d, warm=warm)
        for i in range(nx):
            j = _aware_jacobians(m, d, jac, rows[i], warm) if aware else jac
            dU[i, t] = j.B.T @ rows[i]
            rows[i] = j.A.T @ rows[i]
    return end, dU, rows


def multiple_shooting(m, task, segments=2, aware=None, maxiter=100, U0=None):
    """Multiple shooting: the horizon cut into `segments` pieces, each rolled out from its own
    start state (the first from the model's initial state, the others decision variables
    X_1..X_S-1), the loss of the last piece's end minimised subject to continuity
    c_s = x_end(s) - X_s+1 = 0, by scipy's SLSQP (controls within their ranges) with the
    pieces' Jacobians from the step Jacobians. X starts on the rollout of the initial controls
    (c = 0). Returns the controls and (wall time, loss of the controls rolled out from the
    initial state in one piece, max |c|) per iteration: the loss a user of the controls gets."""
    aware = task.aware if aware is None else aware
    lo, hi, scale = _bounds(m)
    T, nu, nx = task.T, m.nu, 2 * m.nv
    cuts = np.linspace(0, T, segments + 1).round().astype(int)
    x0 = _initial_state(m)
    U = (task.initial(nu) if U0 is None else U0).astype(float)
    X = np.empty((segments - 1, nx))
    for s in range(segments - 1):                 # a continuous initial guess
        X[s] = _roll(m, x0 if s == 0 else X[s - 1], U[cuts[s]:cuts[s + 1]])
    nU = T * nu
    history, t0 = [], time.perf_counter()

    def unpack(z):
        return z[:nU].reshape(T, nu) * scale, z[nU:].reshape(segments - 1, nx)

    def start(X, s):
        return x0 if s == 0 else X[s - 1]

    def loss(z):
        U, X = unpack(z)
        s = segments - 1
        value, _, g, g0 = _segment(m, task, start(X, s), U[cuts[s]:], aware,
                                   _final_loss(task, m.nv))
        grad = np.zeros_like(z)
        grad[cuts[s] * nu:nU] = (g * scale).ravel()
        if s > 0:
            grad[nU + (s - 1) * nx:nU + s * nx] = g0
        return value, grad

    def gaps(z):
        U, X = unpack(z)
        return np.concatenate([_roll(m, start(X, s), U[cuts[s]:cuts[s + 1]]) - X[s]
                               for s in range(segments - 1)])

    def gaps_jacobian(z):
        U, X = unpack(z)
        jac = np.zeros(((segments - 1) * nx, z.size))
        for s in range(segments - 1):
            _, dU, dx = _piece_jacobians(m, start(X, s), U[cuts[s]:cuts[s + 1]], aware)
            r = slice(s * nx, (s + 1) * nx)
            jac[r, cuts[s] * nu:cuts[s + 1] * nu] = (dU * scale).reshape(nx, -1)
            if s > 0:
                jac[r, nU + (s - 1) * nx:nU + s * nx] = dx
            jac[r, nU + s * nx:nU + (s + 1) * nx] = -np.eye(nx)
        return jac

    def progress(z):
        history.append((time.perf_counter() - t0, rollout_loss(m, task, unpack(z)[0]),
                        np.abs(gaps(z)).max()))

    z = np.concatenate([(U / scale).ravel(), X.ravel()])
    progress(z)
    bounds = list(zip(np.tile(lo / scale, T), np.tile(hi / scale, T))) + [(None, None)] * X.size
    z = minimize(loss, z, jac=True, method="SLSQP", bounds=bounds,
                 constraints={"type": "eq", "fun": gaps, "jac": gaps_jacobian},
                 options={"maxiter": maxiter}, callback=progress).x
    return unpack(z)[0], history


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
    gap = f"; continuity gap {history[-1][2]:.1e}" if len(history[-1]) > 2 else ""
    print(f"  {name:<30} {len(history):>4} points; best loss at {pts}{gap}")


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
        try:
            _, runs["multiple shooting" + aware] = multiple_shooting(m, task)
        except RuntimeError as e:           # a start state the LCP cannot solve from
            print(f"  multiple shooting stopped: {e}")
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

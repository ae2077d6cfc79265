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
B' lam_t+1) and given to scipy's L-BFGS-B within the control ranges. The gradient-free baseline
is stochastic search (Gaussian perturbations of the best controls so far, the step size adapted
by the 1/5 success rule). ``main`` prints the loss against wall time of both.

    python examples/hard_contact_trajopt.py [--task drone|catapult|jumpworm|all] [--record F]

``--record`` writes the optimised trajectory (engine.Recorder): ``python -m studio F`` plays it
back.
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


def rollout_loss(m, task, U):
    """The loss of the controls U (no gradient): the stochastic search's evaluation."""
    d = engine.make_data(m)
    state = {}
    for u in U:
        d.ctrl[:] = u
        hc.lcp_step(m, d, None, state)
    return task.loss(d.qpos)[0]


def loss_and_grad(m, task, U, aware=None):
    """Roll out U from the initial state; backpropagate dl/d(q, v) through each step (A' and B'
    products). aware (default: the task's): complementarity-aware Jacobians where the loss asks
    a clamping contact to separate."""
    aware = task.aware if aware is None else aware
    d = engine.make_data(m)
    nv = m.nv
    tape, state = [], {}
    for u in U:
        d.ctrl[:] = u
        tape.append((d.qpos.copy(), d.qvel.copy(), u.copy(), state.get("clamping")))
        hc.lcp_step(m, d, None, state)
    loss, dq = task.loss(d.qpos)
    lam = np.concatenate([dq, np.zeros(nv)])
    grad = np.zeros_like(U)
    for t in reversed(range(len(U))):
        q, v, u, warm = tape[t]
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        jac = hg.step_derivatives(m, d, warm=warm)
        if aware:
            jac = _aware_jacobians(m, d, jac, lam, warm)
        grad[t] = jac.B.T @ lam
        lam = jac.A.T @ lam
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
    times, losses = np.array(history).T
    best = np.minimum.accumulate(losses)
    marks = [0, len(history) // 4, len(history) // 2, len(history) - 1]
    pts = ", ".join(f"{times[i]:.1f} s: {best[i]:.3g}" for i in marks)
    print(f"  {name:<26} {len(history):>4} evaluations; best loss at {pts}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="all", choices=["all", *tasks()])
    ap.add_argument("--record", help="write the optimised trajectory (of the last task) here")
    args = ap.parse_args()
    names = list(tasks()) if args.task == "all" else [args.task]
    for name in names:
        task = tasks()[name]
        m = engine.load_model(str(task.path))
        print(f"{name} (T = {task.T}, {m.nu} controls per step):")
        if name == "drone":
            _, exact = optimise(m, task, aware=False)
            _report("L-BFGS-B, exact gradients", exact)
        U, hist = optimise(m, task)
        _report("L-BFGS-B" + (", aware gradients" if task.aware else ""), hist)
        budget = hist[-1][0]
        _, ss = stochastic_search(m, task, evaluations=10 ** 6, seconds=budget)
        _report("stochastic search", ss)
        print(f"  (L-BFGS-B's {budget:.1f} s; the machine is shared: compare the two columns "
              "only)")
    if args.record:
        record(m, U, args.record)
        print(f"recorded {args.record}")


if __name__ == "__main__":
    main()

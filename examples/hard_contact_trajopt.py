"""Shooting trajectory optimisation through the hard-contact step (Werling et al., Fig. 8).

The paper's drone (assets/nimble_drone.xml: a box on a vertical slide joint with a thrust motor)
rests on the ground and must reach a target height after T steps. The loss (z_T - target)^2 and
its gradient with respect to the T thrusts (backpropagated through the step Jacobians of
engine.hard_contact_grad) go to scipy's L-BFGS-B within the control range. Started from zero
thrust the contact clamps at every step: the exact gradient is zero and the optimiser stops where
it started; with complementarity-aware gradients (section IV-D) the drone lifts off.

    python examples/hard_contact_trajopt.py [--record drone.traj]

``--record`` writes the optimised trajectory (engine.Recorder): ``python -m studio drone.traj``
plays it back.
"""
import argparse
import pathlib
import sys
import time

import numpy as np
from scipy.optimize import minimize

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import engine  # noqa: E402
from engine import hard_contact as hc  # noqa: E402
from engine import hard_contact_grad as hg  # noqa: E402

DRONE = ROOT / "assets" / "nimble_drone.xml"


def loss_and_grad(m, U, target, aware):
    """Roll out the thrusts U (T, nu) from rest; backpropagate dl/d(q, v) through each step
    (A' and B' products, the adjoint of the shooting problem). aware: complementarity-aware
    Jacobians where the loss asks a clamping contact to separate."""
    d = engine.make_data(m)
    nv = m.nv
    tape, state = [], {}
    for u in U:
        d.ctrl[:] = u
        tape.append((d.qpos.copy(), d.qvel.copy(), u.copy(), state.get("clamping")))
        hc.lcp_step(m, d, None, state)
    err = d.qpos[0] - target
    lam = np.zeros(2 * nv)
    lam[0] = 2.0 * err                  # dl/dq_T (a slide joint: the tangent is qpos)
    grad = np.zeros_like(U)
    for t in reversed(range(len(U))):
        q, v, u, warm = tape[t]
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        jac = hg.step_derivatives(m, d, warm=warm)
        if aware:
            jac = _aware_jacobians(m, d, jac, lam, warm)
        grad[t] = jac.B.T @ lam
        lam = jac.A.T @ lam
    return err ** 2, grad


def _aware_jacobians(m, d, jac, lam, warm):
    """The step's Jacobians on the set the loss asks for, when that gradient is larger
    (hard_contact_grad.complementarity_aware_vjp on the loss seen by v')."""
    nv = m.nv
    g_v = lam[nv:] + m.opt.timestep * lam[:nv]      # q' = q + h v' on a slide joint
    _, _, _, which = hg.complementarity_aware_vjp(m, d, g_v, warm=warm)
    if which != "aware":
        return jac
    p = jac.info.problem
    push = p.J[:p.ncon] @ (p.Minv @ g_v)
    C = [i for i in jac.clamping if not (i < p.ncon and push[i] < 0.0)]
    return hg.step_derivatives(m, d, clamping=C, warm=warm)


def optimise(m, T=15, target=0.3, aware=True, maxiter=50):
    """L-BFGS-B from zero thrust over the controls divided by the width of their range (the
    first trial step, of unit length, is then a sizeable thrust: from rest a step that does not
    lift the drone changes nothing and the line search would shrink it to zero); returns the
    thrusts, the loss per evaluation and the wall time."""
    history = []
    lo, hi = m.actuator_ctrlrange[0]
    scale = hi - lo

    def fun(x):
        loss, grad = loss_and_grad(m, scale * x.reshape(T, m.nu), target, aware)
        history.append(loss)
        return loss, scale * grad.ravel()

    t0 = time.perf_counter()
    res = minimize(fun, np.zeros(T * m.nu), jac=True, method="L-BFGS-B",
                   bounds=[(lo / scale, hi / scale)] * (T * m.nu), options={"maxiter": maxiter})
    return scale * res.x.reshape(T, m.nu), history, time.perf_counter() - t0


def record(m, U, path):
    """The optimised rollout as a recording the studio opens."""
    d = engine.make_data(m)
    with engine.Recorder(m, str(path), d=d) as rec:
        for u in U:
            d.ctrl[:] = u
            engine.step(m, d)
            rec.record(d)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", help="write the optimised trajectory to this file")
    args = ap.parse_args()
    m = engine.load_model(str(DRONE))
    for aware in (False, True):
        U, hist, wall = optimise(m, aware=aware)
        name = "complementarity-aware" if aware else "exact"
        print(f"{name:>22}: loss {hist[0]:.4f} -> {min(hist):.2e} in {len(hist)} evaluations, "
              f"{wall:.2f} s")
    if args.record:
        record(m, U, args.record)
        print(f"recorded {args.record}")


if __name__ == "__main__":
    main()

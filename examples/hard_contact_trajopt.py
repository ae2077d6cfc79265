"""Shooting trajectory optimisation through the hard-contact step (Werling et al., Fig. 8).

A "drone" (a box on a vertical slide joint with a thrust motor) rests on the ground and must
reach a target height after T steps. Gradients of the loss (z_T - target)^2 with respect to the
T thrusts come from backpropagating the step Jacobians (engine.hard_contact_grad). Started from
zero thrust the contact clamps at every step: the exact gradient is zero and gradient descent
stalls; with complementarity-aware gradients (section IV-D) it lifts off.

    python examples/hard_contact_trajopt.py [--iters 30]
"""
import argparse
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import engine  # noqa: E402
from engine import hard_contact as hc  # noqa: E402
from engine import hard_contact_grad as hg  # noqa: E402

DRONE = """<mujoco><option timestep="0.02"/><worldbody><geom type="plane" size="5 5 .1" margin="0.01"/>
<body pos="0 0 0.05"><joint name="z" type="slide" axis="0 0 1"/>
<geom type="box" size=".1 .1 .05" mass="1"/></body></worldbody>
<actuator><motor joint="z" gear="1" ctrlrange="-50 50" ctrllimited="true"/></actuator></mujoco>"""


def loss_and_grad(m, U, target, aware):
    """Roll out the thrusts U (T, nu) from rest; backpropagate dl/d(q, v) through each step."""
    d = engine.make_data(m)
    nv = m.nv
    jacs, state = [], {}
    for u in U:
        d.ctrl[:] = u
        warm = state.get("clamping")
        jacs.append((d.qpos.copy(), d.qvel.copy(), u.copy(), warm))
        hc.lcp_step(m, d, None, state)
    err = d.qpos[0] - target
    loss = err ** 2
    lam = np.zeros(2 * nv)
    lam[0] = 2.0 * err                  # dl/dq_T (slide: tangent = qpos)
    grad = np.zeros_like(U)
    for t in reversed(range(len(U))):
        q, v, u, warm = jacs[t]
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        jac = hg.step_derivatives(m, d, warm=warm)
        if aware:
            # the loss seen by v': through v' itself and through q' = q + h v' (slide joint)
            g_v = lam[nv:] + m.opt.timestep * lam[:nv]
            _, _, _, which = hg.complementarity_aware_vjp(m, d, g_v, warm=warm)
            if which == "aware":
                p = jac.info.problem
                push = p.J[:p.ncon] @ (p.Minv @ g_v)
                C = [i for i in jac.clamping if not (i < p.ncon and push[i] < 0.0)]
                jac = hg.step_derivatives(m, d, clamping=C, warm=warm)
        grad[t] = jac.B.T @ lam
        lam = jac.A.T @ lam
    return loss, grad


def optimise(m, T, target, aware, iters, rate):
    U = np.zeros((T, m.nu))
    history = []
    for _ in range(iters):
        loss, grad = loss_and_grad(m, U, target, aware)
        history.append(loss)
        U = np.clip(U - rate * grad, -50.0, 50.0)
    return U, history


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=30)
    args = ap.parse_args()
    m = engine.load_model_from_string(DRONE)
    for aware in (False, True):
        _, hist = optimise(m, T=25, target=0.5, aware=aware, iters=args.iters, rate=200.0)
        name = "complementarity-aware" if aware else "exact"
        print(f"{name:>22}: loss {hist[0]:.4f} -> {hist[-1]:.4f}")


if __name__ == "__main__":
    main()

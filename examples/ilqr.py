"""Trajectory optimisation by iLQR with the derivatives of a step.

    python examples/ilqr.py [--task cartpole humanoid] [--iterations N] [--out DIR]

The same iLQR (Li and Todorov 2004, with the regularisation and line search of Tassa, Erez and
Todorov 2012) runs twice per task: fed by the analytical derivatives of a step
(engine.transition_derivatives), and by forward finite differences (engine.transition_fd).
Tasks: the dm_control cartpole swinging its pole up, and the dm_control humanoid rising from
lying on its back. The figure DIR/ilqr.png plots the cost against the iteration and against
the wall time of both runs.

States are (qpos, qvel) with positions in the tangent space (engine.derivative_fd.state_diff),
as the A, B matrices; the cost is quadratic in the difference to a target state and in the
controls. Both tasks use the semi-implicit integrator (the analytical derivatives do not cover
RK4, which cartpole.xml asks for) and the Newton solver, which converges to the optimum whose
derivative transition_derivatives is.
"""
import argparse
import os
import pathlib
import sys
import time

import numpy as np

import dm_control

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import engine  # noqa: E402
from engine.derivative_fd import state_diff  # noqa: E402

SUITE = pathlib.Path(dm_control.__file__).parent / "suite"


class Task:
    """A model, a start state, a target, the weights of the quadratic cost and a horizon."""

    def __init__(self, name, m, qpos0, qvel0, target_qpos, q_weight, v_weight, final_scale,
                 r_weight, horizon):
        self.name, self.m, self.horizon = name, m, horizon
        self.x0 = np.concatenate([qpos0, qvel0, np.zeros(m.na)])
        self.target = np.concatenate([target_qpos, np.zeros(m.nv), np.zeros(m.na)])
        self.Q = np.diag(np.concatenate([q_weight, v_weight, np.zeros(m.na)]))
        self.Qf = final_scale * self.Q
        self.R = r_weight * np.eye(m.nu)
        lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
        limited = m.actuator_ctrllimited.astype(bool)
        self.u_lo = np.where(limited, lo, -np.inf)
        self.u_hi = np.where(limited, hi, np.inf)


def cartpole():
    m = engine.load_model(str(SUITE / "cartpole.xml"))
    m.opt.integrator = engine.Integrator.SEMIIMPLICIT
    qpos0 = np.array([0.0, np.pi])                    # the pole hangs down
    return Task("cartpole swing-up", m, qpos0, np.zeros(m.nv), np.zeros(m.nq),
                q_weight=[1.0, 5.0], v_weight=[0.1, 0.1], final_scale=50.0, r_weight=0.1,
                horizon=250)


def humanoid():
    m = engine.load_model(str(SUITE / "humanoid.xml"))
    d = engine.make_data(m)
    d.qpos[2] = 0.12                                   # on its back
    d.qpos[3:7] = [np.cos(np.pi / 4), 0.0, -np.sin(np.pi / 4), 0.0]
    engine.step(m, d, 200)                             # settled on the floor
    target = m.qpos0.copy()
    target[2] = 1.3                                    # standing, upright
    q_weight = np.full(m.nv, 0.5)
    q_weight[:2] = 0.0                                 # anywhere on the floor
    q_weight[2] = 100.0                                # torso height
    q_weight[3:6] = 20.0                               # torso orientation
    return Task("humanoid rising", m, d.qpos.copy(), np.zeros(m.nv), target,
                q_weight=q_weight, v_weight=np.full(m.nv, 0.05), final_scale=10.0,
                r_weight=0.01, horizon=150)


def configure(m):
    m.opt.solver = engine.Solver.NEWTON
    m.opt.iterations = 50
    m.opt.tolerance = 1e-10


class ILQR:
    """iLQR over controls U (T x nu) from the fixed start state of a task."""

    def __init__(self, task, derivatives):
        self.task = task
        self.m = task.m
        self.d = engine.make_data(task.m)
        self.derivatives = derivatives
        self.ndx = 2 * self.m.nv + self.m.na

    def set_state(self, x):
        m, d = self.m, self.d
        engine.reset_data(m, d)
        d.qpos[:] = x[:m.nq]
        d.qvel[:] = x[m.nq:m.nq + m.nv]
        d.act[:] = x[m.nq + m.nv:]

    def error(self, x, ref):
        e = np.empty(self.ndx)
        state_diff(self.m._struct, e, ref, x, 1.0)
        return e

    def cost(self, X, U):
        t = self.task
        c = 0.0
        for k in range(len(U)):
            e = self.error(X[k], t.target)
            c += 0.5 * e @ t.Q @ e + 0.5 * U[k] @ t.R @ U[k]
        e = self.error(X[-1], t.target)
        return c + 0.5 * e @ t.Qf @ e

    def rollout(self, U, X_ref=None, k=None, K=None, alpha=1.0):
        """States from x0 under U (with the feedback law around X_ref if given)."""
        m, d = self.m, self.d
        self.set_state(self.task.x0)
        X = [self.task.x0.copy()]
        U_out = np.empty_like(U)
        for t in range(len(U)):
            u = U[t]
            if X_ref is not None:
                u = u + alpha * k[t] + K[t] @ self.error(X[-1], X_ref[t])
            u = np.clip(u, self.task.u_lo, self.task.u_hi)
            U_out[t] = u
            d.ctrl[:] = u
            engine.step(m, d)
            X.append(np.concatenate([d.qpos, d.qvel, d.act]))
        return np.array(X), U_out

    def linearize(self, X, U):
        A = np.empty((len(U), self.ndx, self.ndx))
        B = np.empty((len(U), self.ndx, self.m.nu))
        for t in range(len(U)):
            self.set_state(X[t])
            self.d.ctrl[:] = U[t]
            A[t], B[t] = self.derivatives(self.m, self.d)
        return A, B

    def backward(self, X, U, A, B, mu):
        t = self.task
        T = len(U)
        e = self.error(X[-1], t.target)
        Vx, Vxx = t.Qf @ e, t.Qf.copy()
        k = np.zeros((T, self.m.nu))
        K = np.zeros((T, self.m.nu, self.ndx))
        expected = 0.0
        for s in range(T - 1, -1, -1):
            e = self.error(X[s], t.target)
            Qx = t.Q @ e + A[s].T @ Vx
            Qu = t.R @ U[s] + B[s].T @ Vx
            Vreg = Vxx + mu * np.eye(self.ndx)
            Qxx = t.Q + A[s].T @ Vxx @ A[s]
            Quu = t.R + B[s].T @ Vreg @ B[s]
            Qux = B[s].T @ Vreg @ A[s]
            try:
                L = np.linalg.cholesky(Quu)
            except np.linalg.LinAlgError:
                return None
            k[s] = -np.linalg.solve(L.T, np.linalg.solve(L, Qu))
            K[s] = -np.linalg.solve(L.T, np.linalg.solve(L, Qux))
            Vx = Qx + K[s].T @ Quu @ k[s] + K[s].T @ Qu + Qux.T @ k[s]
            Vxx = Qxx + K[s].T @ Quu @ K[s] + K[s].T @ Qux + Qux.T @ K[s]
            Vxx = 0.5 * (Vxx + Vxx.T)
            expected += k[s] @ Qu + 0.5 * k[s] @ Quu @ k[s]
        return k, K, expected

    def solve(self, iterations):
        """Returns the costs and the cumulated wall times, one entry per iteration (the
        first: the initial controls)."""
        m = self.m
        U = np.zeros((self.task.horizon, m.nu))
        start = time.perf_counter()
        X, U = self.rollout(U)
        J = self.cost(X, U)
        costs, times = [J], [0.0]
        mu, dmu = 1e-6, 1.0
        for _ in range(iterations):
            A, B = self.linearize(X, U)
            accepted = False
            while not accepted and mu < 1e10:
                back = self.backward(X, U, A, B, mu)
                if back is None:
                    dmu = max(2.0, 2.0 * dmu)
                    mu = max(1e-6, mu * dmu)
                    continue
                k, K, expected = back
                for alpha in 0.5 ** np.arange(8):
                    Xn, Un = self.rollout(U, X, k, K, alpha)
                    Jn = self.cost(Xn, Un)
                    if Jn < J:
                        X, U, J = Xn, Un, Jn
                        accepted = True
                        break
                if accepted:
                    dmu = min(0.5, dmu / 2.0)
                    mu = mu * dmu if mu * dmu > 1e-6 else 0.0
                else:
                    dmu = max(2.0, 2.0 * dmu)
                    mu = max(1e-6, mu * dmu)
            costs.append(J)
            times.append(time.perf_counter() - start)
            if not accepted:
                break
        return np.array(costs), np.array(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", nargs="+", default=["cartpole", "humanoid"],
                        choices=["cartpole", "humanoid"])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sources = {"analytical": engine.transition_derivatives,
               "finite differences": engine.transition_fd}
    fig, axes = plt.subplots(len(args.task), 2, figsize=(11, 4 * len(args.task)), squeeze=False)
    for row, name in enumerate(args.task):
        task = {"cartpole": cartpole, "humanoid": humanoid}[name]()
        configure(task.m)
        for label, derivatives in sources.items():
            costs, times = ILQR(task, derivatives).solve(args.iterations)
            print(f"{task.name:20s} {label:18s} cost {costs[0]:10.4g} -> {costs[-1]:10.4g} in "
                  f"{len(costs) - 1} iterations, {times[-1]:7.2f} s "
                  f"({times[-1] / max(len(costs) - 1, 1):.3f} s per iteration)")
            axes[row, 0].semilogy(np.arange(len(costs)), costs, label=label)
            axes[row, 1].semilogy(times, costs, label=label)
        axes[row, 0].set(title=f"{task.name}: cost per iteration", xlabel="iteration",
                         ylabel="cost")
        axes[row, 1].set(title=f"{task.name}: cost against wall time", xlabel="wall time (s)",
                         ylabel="cost")
        for ax in axes[row]:
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
    fig.tight_layout()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "ilqr.png")
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

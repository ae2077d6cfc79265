"""Trajectory optimisation by iLQR with the derivatives of a step.

    python examples/ilqr.py [--task cartpole humanoid] [--iterations N] [--budget S] [--mpc S]
                            [--out DIR] [--verbose]

The same iLQR runs fed by the analytical derivatives of a step (engine.transition_derivatives)
and by forward finite differences (engine.transition_fd). The figure DIR/ilqr.png plots, per
task, the cost against the iteration and against the wall time of both, and for the humanoid
the torso height under receding-horizon control against simulated and wall time.

The optimiser is the one of Tassa, Erez and Todorov 2012 ("Synthesis and stabilization of
complex behaviors through online trajectory optimization", section II): a Gauss-Newton
backward pass with the regularisation mu added to V'xx in Quu and Qux (eq. 10), the
Levenberg-Marquardt schedule of mu, and a line search on the feed-forward step that accepts when
the actual reduction is a fair part of the expected one, z = dJ / dJ_expected(alpha) > 0.1.
Control limits are honoured by the projected-Newton box QP of Tassa, Mansard and Todorov 2014
("Control-limited differential dynamic programming", Algorithm 3): the feed-forward step k solves
the QP over the box around the current controls, and the rows of K of the controls it clamps
are zero.

States are x = (qpos, qvel, act); A and B map their differences in the tangent space
(engine.derivative_fd.state_diff). The cost is a weighted sum of squared residuals of the state
plus 1/2 u'Ru, with the Gauss-Newton Hessian J'WJ of the residuals. Both tasks use the
semi-implicit integrator (the analytical derivatives do not cover RK4, which cartpole.xml asks
for) and the Newton solver to 1e-10, so that the step's impulses are the optimum whose
derivative transition_derivatives is: along the trajectories below, A and B agree with a
centered difference of the very step the rollout takes to 1e-10 (cartpole) and 2e-7 relative
(humanoid with contacts; forward differences are off by up to 2e-4 there).

Cartpole (dm_control cartpole.xml: timestep 0.01 s, slider motor gear 10, ctrl in [-1, 1], a
rail limit at +-1.8 m; hinge angle 0 is the pole up, pi hanging down): 3 s from hanging at rest
(a push of 0.2 for the first 0.2 s breaks the symmetry: at rest at the bottom the gradient is
zero). Residuals: cart position, sin(theta) and cos(theta) - 1 (an angle cost w (1 - cos theta)),
the velocities; the final weights make the pole end upright and at rest. Reached, both sources
alike (python examples/ilqr.py --task cartpole): cost 2609 -> 304 in 100 iterations (343 after
40), the pole 0.56 degree from upright, its tip 2.000 m high (1.0 m cart + 1.0 m pole), angular
speed 0.04 rad/s, cart at 0.24 m. An iteration takes 0.18 s (0.3-0.5 s when the machine is
loaded) with either source: with 4 states and 1 control the derivatives (0.05-0.07 ms a step)
are a small part of it, Python's per-step work is the rest.

Humanoid (dm_control humanoid.xml, 0.005 s, 21 motors in [-1, 1], contacts), from lying on its
back, settled. Residuals: the torso height to the standing height of the model's pose on the
floor less 5 cm (1.235 m; above the straight-legged height it can only hop), the torso's
uprightness, the torso above the mid-point of the feet, the joints' posture of the standing pose
and the velocities. Two ways (python examples/ilqr.py --task humanoid, 2 shared cores):
- offline, one iLQR over 1 s (200 steps) from zero controls, 60 s of wall time per source: it
  stalls in a local minimum well before standing; the torso gets to 0.27 m (analytical, stalled
  after 6 iterations, cost 16960 -> 14200) and 0.54-0.65 m (finite differences, 11-13
  iterations as the load allows, cost -> 10090-9540, still descending). Which
  source goes further depends on the weights (with other weights the analytical one reached
  0.81 m and the finite-difference one 0.52 m): the path through contact changes decides it, not
  the accuracy of A and B. Where the analytical run stalls, the limbs' contacts open and close
  from one step to the next; 1e-4 of the feed-forward step changes the cost as predicted, 1e-3
  makes a contact appear one step earlier, velocities jump by ~7 rad/s and the cost rises by
  300: the cost is discontinuous in the controls there, and no linearisation sees past it.
  A linearisation of the 200 steps takes 0.33 s with the analytical derivatives, 7.5 s with
  forward differences (one run, machine loaded); an iteration adds ~0.2 s of backward pass and
  ~0.14 s per rollout of the line search.
- receding horizon (as MuJoCo MPC does it): every 10 steps, 2 iterations over the next 100
  steps (0.5 s) warm-started by the previous plan. With the analytical derivatives the humanoid
  rises: torso above 90% of the target at 0.77 s of simulated time (8-10 s of wall time), and
  stands: after 2 s (21-24 s of wall time) torso 1.21 m, uprightness 0.96, head 1.39 m, a
  foot on the floor 97% of the last 0.5 s (joint speeds stay up to ~10 rad/s: it stands, not
  quietly). With forward finite
  differences, same iterations, the torso reached 0.78 m only (136-190 s of wall time).
  Both runs are deterministic and differ only in the A and B fed to the same iterations.
"""
import argparse
import copy
import os
import pathlib
import sys
import time

# small dense matrices: threaded BLAS only loses time on a shared machine (10x in the backward pass)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from scipy.linalg import cho_factor, cho_solve  # noqa: E402

import dm_control  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import engine  # noqa: E402
from engine.derivative_fd import state_diff  # noqa: E402

SUITE = pathlib.Path(dm_control.__file__).parent / "suite"


# ------------------------------------------------------------------------------------------------
# tasks: a model, a start state, a horizon, initial controls and a residual cost
# ------------------------------------------------------------------------------------------------
class Task:
    """Cost  sum_t 1/2 r(x_t)' W r(x_t) + 1/2 u_t' R u_t  +  1/2 r(x_T)' W_T r(x_T).

    residual(d, x, jacobian) returns r and (if jacobian) its Jacobian in the tangent space
    (nr x ndx); it may read the kinematics of d, which the caller has computed at x."""

    def __init__(self, name, m, x0, horizon, w, w_final, r_weight, U0=None):
        self.name, self.m, self.horizon = name, m, horizon
        self.x0 = np.asarray(x0, dtype=float)
        self.w, self.w_final = np.asarray(w, dtype=float), np.asarray(w_final, dtype=float)
        self.R = np.diag(np.broadcast_to(np.asarray(r_weight, dtype=float), (m.nu,)))
        self.U0 = np.zeros((horizon, m.nu)) if U0 is None else np.asarray(U0, dtype=float)
        limited = m.actuator_ctrllimited.astype(bool)
        self.u_lo = np.where(limited, m.actuator_ctrlrange[:, 0], -np.inf)
        self.u_hi = np.where(limited, m.actuator_ctrlrange[:, 1], np.inf)

    def residual(self, d, x, jacobian=True):
        raise NotImplementedError


class Cartpole(Task):
    """Swing-up of the dm_control cartpole from hanging at rest (hinge angle 0 is up)."""

    def __init__(self, horizon=300):
        self.xml = SUITE / "cartpole.xml"
        m = engine.load_model(str(self.xml))
        m.opt.integrator = engine.Integrator.SEMIIMPLICIT
        x0 = np.array([0.0, np.pi, 0.0, 0.0])               # hanging down, at rest
        # a small push to break the symmetry: from rest at the bottom the gradient is zero
        U0 = np.zeros((horizon, m.nu))
        U0[:20] = 0.2
        #      cart  sin   cos-1  cart vel  ang vel
        w = [0.1, 1.0, 1.0, 0.01, 0.001]
        super().__init__("cartpole swing-up", m, x0, horizon, w=w,
                         w_final=[10.0, 1000.0, 1000.0, 100.0, 100.0], r_weight=0.01, U0=U0)

    def residual(self, d, x, jacobian=True):
        s, c = np.sin(x[1]), np.cos(x[1])
        r = np.array([x[0], s, c - 1.0, x[2], x[3]])
        if not jacobian:
            return r, None
        J = np.zeros((5, 4))
        J[0, 0], J[1, 1], J[2, 1], J[3, 2], J[4, 3] = 1.0, c, -s, 1.0, 1.0
        return r, J


class Humanoid(Task):
    """The dm_control humanoid rising from lying on its back."""

    def __init__(self, horizon=200):
        self.xml = SUITE / "humanoid.xml"
        m = engine.load_model(str(self.xml))
        d = engine.make_data(m)
        d.qpos[2] = 0.12                                  # on its back
        d.qpos[3:7] = [np.cos(np.pi / 4), 0.0, -np.sin(np.pi / 4), 0.0]
        engine.step(m, d, 200)                            # settled on the floor
        x0 = np.concatenate([d.qpos, np.zeros(m.nv), np.zeros(m.na)])
        self.torso = engine.name2id(m, engine.ObjType.BODY, "torso")
        self.feet = [engine.name2id(m, engine.ObjType.BODY, f) for f in ("right_foot", "left_foot")]
        self.posture = m.qpos0[7:].copy()
        # the torso's height standing straight on the floor in the model's pose, less 5 cm so
        # that the target is reachable with the knees a little bent (above it, it must hop)
        d.qpos[:] = m.qpos0
        engine.forward(m, d)
        feet = [g for g in range(m.ngeom) if m.geom_bodyid[g] in self.feet]
        sole = min(d.geom_xpos[g, 2] - m.geom_size[g, 0] for g in feet)
        self.stand_height = d.xpos[self.torso, 2] - sole - 0.05
        nj = m.nq - 7
        #        height  upright  balance(2)  posture   velocities
        w = np.concatenate([[100.0, 30.0, 3.0, 3.0], np.full(nj, 0.3), np.full(m.nv, 0.03)])
        super().__init__("humanoid rising", m, x0, horizon, w=w, w_final=3.0 * w,
                         r_weight=0.01)

    def residual(self, d, x, jacobian=True):
        m, nv = self.m, self.m.nv
        torso_pos = d.xpos[self.torso]
        zaxis = d.xmat[self.torso].reshape(3, 3)[:, 2]
        feet = 0.5 * (d.xpos[self.feet[0]] + d.xpos[self.feet[1]])
        nj = m.nq - 7
        r = np.concatenate([[torso_pos[2] - self.stand_height, zaxis[2] - 1.0],
                            torso_pos[:2] - feet[:2], x[7:m.nq] - self.posture, x[m.nq:]])
        if not jacobian:
            return r, None
        jac_torso, jacr = engine.jac(m, d, torso_pos, self.torso)
        jac_feet = 0.5 * sum(engine.jac(m, d, d.xpos[f], f)[0] for f in self.feet)
        J = np.zeros((len(r), 2 * nv + m.na))
        J[0, :nv] = jac_torso[2]
        # d z_z = e_z . (omega x z) = (z x e_z) . omega
        J[1, :nv] = (zaxis[1] * jacr[0] - zaxis[0] * jacr[1])
        J[2:4, :nv] = jac_torso[:2] - jac_feet[:2]
        J[4:4 + nj, 6:nv] = np.eye(nj)
        J[4 + nj:, nv:] = np.eye(nv + m.na)
        return r, J


TASKS = {"cartpole": Cartpole, "humanoid": Humanoid}


def configure(m):
    """The Newton solver to a tight tolerance: the step is then the optimum that
    transition_derivatives differentiates."""
    m.opt.solver = engine.Solver.NEWTON
    m.opt.iterations = 50
    m.opt.tolerance = 1e-10


# ------------------------------------------------------------------------------------------------
# box QP (Tassa, Mansard and Todorov 2014, Algorithm 3)
# ------------------------------------------------------------------------------------------------
def box_qp(H, g, lo, hi, x0, iterations=100, min_grad=1e-8, min_step=1e-22, armijo=0.1):
    """min 1/2 x'Hx + g'x over lo <= x <= hi by projected Newton from x0.

    Returns (x, free, factor): the minimiser, the mask of the controls not clamped at the
    solution and the Cholesky factor of H over them (cho_factor), or None when H over the free
    set is not positive definite."""
    if len(g) == 1:                         # one control: the clamped Newton step is exact
        if H[0, 0] <= 0:
            return x0, np.ones(1, dtype=bool), None
        x = np.clip(-g / H[0, 0], lo, hi)
        free = (x > lo) & (x < hi)
        return x, free, (np.sqrt(H), True)
    x = np.clip(x0, lo, hi)
    free = np.ones(len(g), dtype=bool)
    factor = None
    value = x @ g + 0.5 * x @ H @ x
    for it in range(iterations):
        grad = g + H @ x
        clamped = ((x <= lo) & (grad > 0)) | ((x >= hi) & (grad < 0))
        if clamped.all():
            free = ~clamped
            factor = None
            break
        if factor is None or (clamped != ~free).any():
            free = ~clamped
            try:
                factor = cho_factor(H[np.ix_(free, free)])
            except np.linalg.LinAlgError:
                return x, free, None
        if np.linalg.norm(grad[free]) < min_grad:
            break
        # Newton step over the free controls, the clamped ones held
        grad_clamped = g + H[:, clamped] @ x[clamped]
        search = np.zeros_like(x)
        search[free] = -cho_solve(factor, grad_clamped[free]) - x[free]
        sdotg = search @ grad
        if sdotg >= 0:                      # no descent left: numerical noise
            break
        step = 1.0
        while True:                         # projected Armijo line search
            xc = np.clip(x + step * search, lo, hi)
            vc = xc @ g + 0.5 * xc @ H @ xc
            if (vc - value) / (step * sdotg) >= armijo:
                break
            step *= 0.6
            if step < min_step:
                return x, free, factor
        x, value = xc, vc
    return x, free, factor


# ------------------------------------------------------------------------------------------------
# iLQR
# ------------------------------------------------------------------------------------------------
class ILQR:
    """iLQR over the controls U (T x nu) from the start state of a task.

    derivatives(m, d) -> (A, B) at the state and ctrl of d, in transition_fd's layout."""

    MU_MIN, MU_MAX, MU_FACTOR = 1e-6, 1e10, 2.0       # Tassa et al. 2012, section II-F
    ALPHAS = 10.0 ** np.linspace(0.0, -3.0, 11)       # line search
    Z_MIN = 0.1                                       # accepted share of the expected reduction

    def __init__(self, task, derivatives):
        self.task, self.m = task, task.m
        self.d = engine.make_data(task.m)
        self.derivatives = derivatives
        self.ndx = 2 * self.m.nv + self.m.na
        self.nx = self.m.nq + self.m.nv + self.m.na

    # -- state helpers ---------------------------------------------------------------------------
    def set_state(self, x):
        """x into d; the rest of d (the solver's warm start) is left as it is."""
        m, d = self.m, self.d
        d.qpos[:] = x[:m.nq]
        d.qvel[:] = x[m.nq:m.nq + m.nv]
        d.act[:] = x[m.nq + m.nv:]

    def get_state(self):
        return np.concatenate([self.d.qpos, self.d.qvel, self.d.act])

    def diff(self, x, ref):
        """x - ref in the tangent space."""
        e = np.empty(self.ndx)
        state_diff(self.m._struct, e, ref, x, 1.0)
        return e

    # -- cost ------------------------------------------------------------------------------------
    def stage_cost(self, x, u, w):
        """Cost of a stage (u None: the final one); the kinematics of self.d are those of x."""
        r, _ = self.task.residual(self.d, x, jacobian=False)
        c = 0.5 * r @ (w * r)
        return c if u is None else c + 0.5 * u @ self.task.R @ u

    def stage(self, x, u, w):
        """Gauss-Newton derivatives of a stage's cost (lx, lxx, lu, luu); u None: final.
        The kinematics of self.d are those of x."""
        r, J = self.task.residual(self.d, x)
        wr = w * r
        lx, lxx = J.T @ wr, J.T @ (w[:, None] * J)
        if u is None:
            return lx, lxx, None, None
        return lx, lxx, self.task.R @ u, self.task.R

    # -- rollout and linearisation ---------------------------------------------------------------
    def rollout(self, U, X_ref=None, U_ref=None, k=None, K=None, alpha=1.0):
        """States, controls and cost from x0: under U, or under the policy
        U_ref + alpha k + K (x - X_ref) clamped to the control limits."""
        m, d, t = self.m, self.d, self.task
        T = len(U if U is not None else U_ref)
        X = np.empty((T + 1, self.nx))
        U_out = np.empty((T, m.nu))
        X[0] = t.x0
        engine.reset_data(m, d)
        self.set_state(t.x0)
        cost = 0.0
        for s in range(T):
            if X_ref is None:
                u = U[s]
            else:
                u = U_ref[s] + alpha * k[s] + K[s] @ self.diff(X[s], X_ref[s])
            U_out[s] = u = np.clip(u, t.u_lo, t.u_hi)
            d.ctrl[:] = u
            engine.step(m, d)                  # its kinematics are those of X[s]
            cost += self.stage_cost(X[s], u, t.w)
            X[s + 1] = self.get_state()
            if not np.isfinite(X[s + 1]).all():
                return X, U_out, np.inf
        engine.forward(m, d)
        cost += self.stage_cost(X[T], None, t.w_final)
        return X, U_out, cost

    def linearize(self, X, U):
        """A, B and the cost derivatives along the trajectory."""
        m, T, t = self.m, len(U), self.task
        A = np.empty((T, self.ndx, self.ndx))
        B = np.empty((T, self.ndx, m.nu))
        l = []
        for s in range(T):
            self.set_state(X[s])
            self.d.ctrl[:] = U[s]
            A[s], B[s] = self.derivatives(m, self.d)      # leaves the kinematics of X[s] in d
            l.append(self.stage(X[s], U[s], t.w))
        self.set_state(X[T])
        engine.forward(m, self.d)
        l.append(self.stage(X[T], None, t.w_final))
        return A, B, l

    # -- backward pass ---------------------------------------------------------------------------
    def backward(self, U, A, B, l, mu, k_prev):
        """Feedback gains and the expected reduction's coefficients, or None when Quu is not
        positive definite over the free controls (Tassa et al. 2012, eq. 10-11)."""
        t = self.task
        T, nu = U.shape
        Vx, Vxx = l[T][0], l[T][1]
        k = np.zeros((T, nu))
        K = np.zeros((T, nu, self.ndx))
        dV = np.zeros(2)
        for s in range(T - 1, -1, -1):
            lx, lxx, lu, luu = l[s]
            a, b = A[s], B[s]
            Qx = lx + a.T @ Vx
            Qu = lu + b.T @ Vx
            VA, VB = Vxx @ a, Vxx @ b
            Qxx = lxx + a.T @ VA
            Quu = luu + b.T @ VB
            Qux = b.T @ VA
            # regularised on the state: V'xx + mu I
            Quu_reg = Quu + mu * b.T @ b
            Qux_reg = Qux + mu * b.T @ a
            ks, free, factor = box_qp(Quu_reg, Qu, t.u_lo - U[s], t.u_hi - U[s], k_prev[s])
            if factor is None and free.any():
                return None
            k[s] = ks
            if free.any():
                K[s][free] = -cho_solve(factor, Qux_reg[free])
            dV += [ks @ Qu, 0.5 * ks @ Quu @ ks]
            Kt = K[s].T
            Vx = Qx + Kt @ (Quu @ ks) + Kt @ Qu + Qux.T @ ks
            Vxx = Qxx + Kt @ Quu @ K[s] + Kt @ Qux + Qux.T @ K[s]
            Vxx = 0.5 * (Vxx + Vxx.T)
        return k, K, dV

    # -- main loop -------------------------------------------------------------------------------
    def solve(self, iterations, U0=None, tolerance=1e-7, time_budget=np.inf, verbose=False):
        """Runs at most `iterations` iterations and, past time_budget seconds, no new one.
        Returns (X, U, costs, times): the optimised
        trajectory, the cost before each iteration and after the last, and the cumulated wall
        time at each entry."""
        U = self.task.U0 if U0 is None else U0
        start = time.perf_counter()
        X, U, J = self.rollout(U)
        costs, times = [J], [0.0]
        mu, dmu = 1.0, 1.0
        k_prev = np.zeros_like(U)
        for it in range(iterations):
            A, B, l = self.linearize(X, U)
            accepted = False
            while not accepted:
                back = self.backward(U, A, B, l, mu, k_prev)
                if back is not None:
                    k, K, dV = back
                    k_prev = k
                    for alpha in self.ALPHAS:
                        Xn, Un, Jn = self.rollout(None, X, U, k, K, alpha)
                        expected = -(alpha * dV[0] + alpha ** 2 * dV[1])
                        if expected > 0 and (J - Jn) / expected > self.Z_MIN:
                            accepted = True
                            break
                        if expected <= 0 and Jn < J:      # at a minimum up to round-off
                            accepted = True
                            break
                if accepted:                  # decrease mu (Tassa et al. 2012, II-F)
                    dmu = min(1.0 / self.MU_FACTOR, dmu / self.MU_FACTOR)
                    mu = mu * dmu if mu * dmu > self.MU_MIN else 0.0
                else:                         # increase mu
                    dmu = max(self.MU_FACTOR, dmu * self.MU_FACTOR)
                    mu = max(self.MU_MIN, mu * dmu)
                    if mu > self.MU_MAX:
                        break
            if not accepted:
                break
            improvement = J - Jn
            X, U, J = Xn, Un, Jn
            costs.append(J)
            times.append(time.perf_counter() - start)
            if verbose:
                print(f"  iteration {it + 1:3d} cost {J:12.6g} alpha {alpha:.3g} mu {mu:.2g} "
                      f"{times[-1]:7.2f} s", flush=True)
            if improvement < tolerance * abs(J) or times[-1] > time_budget:
                break
        return X, U, np.array(costs), np.array(times)


def mpc(task, derivatives, duration, horizon=100, replan=10, iterations=2, verbose=False):
    """Receding-horizon iLQR (as MuJoCo MPC runs it): every `replan` steps, `iterations`
    iLQR iterations over the next `horizon` steps from the current state, warm-started by the
    previous plan shifted; the first `replan` controls are applied. Returns the visited states
    and the wall time at which each was reached."""
    m = task.m
    d = engine.make_data(m)
    d.qpos[:], d.qvel[:] = task.x0[:m.nq], task.x0[m.nq:m.nq + m.nv]
    plan = np.zeros((horizon, m.nu))
    states, walls = [task.x0.copy()], [0.0]
    start = time.perf_counter()
    sub = copy.copy(task)
    sub.horizon = horizon
    for _ in range(int(round(duration / m.opt.timestep)) // replan):
        sub.x0, sub.U0 = states[-1], plan
        _, plan, costs, _ = ILQR(sub, derivatives).solve(iterations)
        for u in plan[:replan]:
            d.ctrl[:] = u
            engine.step(m, d)
            states.append(np.concatenate([d.qpos, d.qvel, d.act]))
            walls.append(time.perf_counter() - start)
        plan = np.concatenate([plan[replan:], np.repeat(plan[-1:], replan, axis=0)])
        if verbose:
            print(f"  t {d.time:5.2f} s torso height {d.qpos[2]:.3f} m, plan cost {costs[-1]:10.4g}"
                  f" {time.perf_counter() - start:7.1f} s", flush=True)
    return np.array(states), np.array(walls)


SOURCES = {"analytical": engine.transition_derivatives,
           "finite differences": engine.transition_fd}


def cartpole_figures(task, X):
    """Final pole angle from upright (degrees, wrapped), tip height (m) and angular speed."""
    angle = np.degrees(np.angle(np.exp(1j * X[-1, 1])))
    tip = 1.0 + np.cos(X[-1, 1])
    return angle, tip, X[-1, 3]


def humanoid_figures(task, x):
    """Torso height, torso uprightness (z of its z axis), head height, lowest foot height."""
    m = task.m
    d = engine.make_data(m)
    d.qpos[:] = x[:m.nq]
    engine.forward(m, d)
    head = engine.name2id(m, engine.ObjType.BODY, "head")
    return (d.xpos[task.torso, 2], d.xmat[task.torso][8], d.xpos[head, 2],
            min(d.xpos[f, 2] for f in task.feet))


def foot_on_floor(task, S):
    """Per state: whether a foot touches the floor (a contact of a foot geom)."""
    m = task.m
    d = engine.make_data(m)
    out = np.zeros(len(S), dtype=bool)
    for i, x in enumerate(S):
        d.qpos[:], d.qvel[:] = x[:m.nq], x[m.nq:m.nq + m.nv]
        engine.forward(m, d)
        out[i] = any(m.geom_bodyid[g] in task.feet
                     for c in d.contact[:d.ncon] for g in (c.geom1, c.geom2))
    return out


def warm_up(task, derivatives):
    """One iteration over two steps, so that loading and compiling kernels is not timed."""
    short = copy.copy(task)
    short.horizon, short.U0 = 2, task.U0[:2]
    ILQR(short, derivatives).solve(1)


def offline(task, axes, args):
    """iLQR over the whole horizon with both derivative sources: printed and plotted."""
    for label, derivatives in SOURCES.items():
        warm_up(task, derivatives)
        X, U, costs, times = ILQR(task, derivatives).solve(
            args.iterations, time_budget=args.budget, verbose=args.verbose)
        print(f"{task.name:18s} {label:18s} cost {costs[0]:10.4g} -> {costs[-1]:10.4g} in "
              f"{len(costs) - 1:3d} iterations, {times[-1]:7.2f} s "
              f"({times[-1] / max(len(costs) - 1, 1):.3f} s per iteration)")
        if isinstance(task, Cartpole):
            angle, tip, omega = cartpole_figures(task, X)
            print(f"{'':37s} final pole angle {angle:+.3f} deg from upright, tip {tip:.4f} m, "
                  f"angular speed {omega:+.4f} rad/s, cart {X[-1, 0]:+.3f} m")
        else:
            print(f"{'':37s} torso height max {X[:, 2].max():.3f} m, final {X[-1, 2]:.3f} m "
                  f"(start {X[0, 2]:.3f} m)")
        axes[0].semilogy(np.arange(len(costs)), costs, label=label)
        axes[1].semilogy(times, costs, label=label)
    axes[0].set(title=f"{task.name}: cost per iteration", xlabel="iteration", ylabel="cost")
    axes[1].set(title=f"{task.name}: cost against wall time", xlabel="wall time (s)",
                ylabel="cost")


def receding(task, axes, args):
    """The humanoid under receding-horizon iLQR with both derivative sources."""
    dt = task.m.opt.timestep
    for label, derivatives in SOURCES.items():
        warm_up(task, derivatives)
        S, walls = mpc(task, derivatives, args.mpc, verbose=args.verbose)
        torso, upright, head, foot = humanoid_figures(task, S[-1])
        reached = np.flatnonzero(S[:, 2] > 0.9 * task.stand_height)
        when = (f"{reached[0] * dt:.2f} s simulated, {walls[reached[0]]:.1f} s wall"
                if len(reached) else "never")
        last = slice(-int(round(0.5 / dt)), None)
        grounded = foot_on_floor(task, S[last]).mean()
        print(f"{task.name:18s} {label:18s} receding horizon, {args.mpc:.1f} s simulated in "
              f"{walls[-1]:.1f} s wall: torso height max {S[:, 2].max():.3f} m, above "
              f"{0.9 * task.stand_height:.2f} m at {when}")
        print(f"{'':37s} at the end: torso {torso:.3f} m, uprightness {upright:.3f}, head "
              f"{head:.3f} m, lowest foot {foot:.3f} m; a foot on the floor "
              f"{100 * grounded:.0f}% of the last 0.5 s")
        axes[0].plot(np.arange(len(S)) * dt, S[:, 2], label=label)
        axes[1].plot(walls, S[:, 2], label=label)
    axes[0].set(title=f"{task.name}, receding horizon: torso height", xlabel="simulated time (s)",
                ylabel="torso height (m)")
    axes[1].set(title=f"{task.name}, receding horizon: torso height",
                xlabel="wall time (s)", ylabel="torso height (m)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", nargs="+", default=["cartpole", "humanoid"], choices=TASKS)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--budget", type=float, default=60.0,
                        help="wall-time budget of one offline optimisation, seconds")
    parser.add_argument("--mpc", type=float, default=2.0,
                        help="simulated seconds of humanoid receding-horizon control (0: none)")
    parser.add_argument("--out", default=".")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(name, offline) for name in args.task]
    if "humanoid" in args.task and args.mpc > 0:
        rows.append(("humanoid", receding))
    fig, axes = plt.subplots(len(rows), 2, figsize=(11, 4 * len(rows)), squeeze=False)
    tasks = {}
    for row, (name, run) in enumerate(rows):
        if name not in tasks:
            tasks[name] = TASKS[name]()
            configure(tasks[name].m)
        run(tasks[name], axes[row], args)
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

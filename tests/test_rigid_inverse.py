"""Rigid-contact inverse dynamics (engine.rigid_inverse) against MuJoCo's dynamics terms.

The oracle rebuilds every term independently with the `mujoco` package: the joint-space inertia
(mj_fullM, plus h * damping for the semi-implicit step), bias and passive forces, the actuator
moments and the contact Jacobians (mj_jac at our contact points, along our contact frames).
The checks: the equations of motion on every row (the unactuated ones included) to 1e-9,
forces in their cones, complementarity and the velocity constraints of each model, the weight
carried by a robot standing still to 1e-9, plain RNE (mj_inverse) without contacts, and
Algorithm 3's choice against an enumeration of every complementary basis of the Coulomb LCP.
"""
import importlib
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from naive import lcp_enumerate

ri = importlib.import_module("engine.rigid_inverse")
ROOT = pathlib.Path(__file__).resolve().parents[1]
GO1 = str(ROOT / "assets" / "unitree_go1" / "scene.xml")
MODELS = ["noslip", "coulomb", "convex"]


class Oracle:
    """MuJoCo's dynamics terms at the state of d."""

    def __init__(self, path, m, d, xml=None):
        self.mm = (mujoco.MjModel.from_xml_string(xml) if xml is not None
                   else mujoco.MjModel.from_xml_path(path))
        mm = self.mm
        mm.opt.disableflags = int(m.opt.disableflags)
        self.md = mujoco.MjData(mm)
        md = self.md
        md.qpos[:], md.qvel[:] = d.qpos, d.qvel
        md.qfrc_applied[:], md.xfrc_applied[:] = d.qfrc_applied, d.xfrc_applied
        mujoco.mj_forward(mm, md)
        nv = mm.nv
        h = mm.opt.timestep
        self.h = h
        self.M = np.zeros((nv, nv))
        mujoco.mj_fullM(mm, md, self.M)
        self.M += h * np.diag(mm.dof_damping)       # the semi-implicit step's inertia
        xfrc = np.zeros(nv)
        for b in range(1, mm.nbody):
            if np.any(md.xfrc_applied[b]):
                jp, jr = np.zeros((3, nv)), np.zeros((3, nv))
                mujoco.mj_jac(mm, md, jp, jr, md.xipos[b], b)
                xfrc += jp.T @ md.xfrc_applied[b, :3] + jr.T @ md.xfrc_applied[b, 3:]
        self.k = md.qfrc_passive - md.qfrc_bias + md.qfrc_applied + xfrc
        self.B = np.zeros((mm.nu, nv))
        mujoco.mju_sparse2dense(self.B, md.actuator_moment, md.moment_rownnz,
                                md.moment_rowadr, md.moment_colind)
        # contact rows along our frames at our points (every listed contact)
        self.cid = list(range(len(d.contact.dist)))
        rows = []
        for c in self.cid:
            b1 = mm.geom_bodyid[d.contact.geom1[c]]
            b2 = mm.geom_bodyid[d.contact.geom2[c]]
            J = np.zeros((3, nv))
            for b, sgn in ((b2, 1.0), (b1, -1.0)):
                jp = np.zeros((3, nv))
                mujoco.mj_jac(mm, md, jp, None, d.contact.pos[c], b)
                J += sgn * d.contact.frame[c].reshape(3, 3) @ jp
            rows.append(J)
        self.J = np.array(rows).reshape(len(self.cid), 3, nv)
        self.phi = np.array([d.contact.dist[c] - d.contact.includemargin[c] for c in self.cid])
        self.mu = np.array([d.contact.friction[c, :2] if d.contact.dim[c] > 1 else [0.0, 0.0]
                            for c in self.cid])

    def residual(self, res):
        """M a - k - J_c' f - B' tau on every row, and its scale."""
        f = res.contact_force[self.cid]
        Jf = np.einsum("cki,ck->i", self.J, f) if len(self.cid) else np.zeros(self.mm.nv)
        terms = [self.M @ res.qacc, self.k, Jf, self.B.T @ res.actuator_force]
        r = terms[0] - terms[1] - terms[2] - terms[3]
        return r, max(np.abs(t).max() for t in terms)


def go1_standing(seed=None, lift=0.0):
    """Go1 at its home pose with the feet exactly at the contact margin (gap 0), at rest; with
    a seed, moving (random velocities) and 1 mm lower (every foot penetrating)."""
    m = engine.load_model(GO1)
    d = engine.make_data(m)
    engine.reset_keyframe(m, d, 0)
    if seed is not None:
        rng = np.random.default_rng(seed)
        d.qvel[:] = 0.1 * rng.standard_normal(m.nv)
    engine.forward(m, d)
    gap = d.contact.dist - d.contact.includemargin
    d.qpos[2] += lift - gap.min() - (0.0 if seed is None else 1e-3)
    engine.forward(m, d)
    return m, d


@pytest.fixture(scope="module")
def standing():
    m, d = go1_standing()
    assert len(d.contact.dist) == 4 and np.allclose(d.contact.dist, d.contact.includemargin, atol=1e-12)
    return m, d


@pytest.mark.parametrize("model", MODELS)
def test_standing_still_carries_the_weight(standing, model):
    """Zero velocity, zero gap, zero desired accelerations: nothing moves, the normal forces
    sum to the weight (to 1e-9), every row of the equations of motion balances."""
    m, d = standing
    res = engine.rigid_inverse(m, d, np.zeros(m.nv), model=model)
    assert res.ok and res.ncontact == 4
    weight = m.body_mass.sum() * -m.opt.gravity[2]
    assert abs(res.contact_force[:, 0].sum() - weight) <= 1e-9 * weight
    np.testing.assert_allclose(res.qacc, 0.0, atol=1e-9)
    oracle = Oracle(GO1, m, d)
    r, scale = oracle.residual(res)
    assert np.abs(r).max() <= 1e-9 * scale
    assert np.all(res.contact_force[:, 0] >= -1e-9 * weight)
    if model != "noslip":
        assert_in_cones(res, oracle)


def assert_in_cones(res, oracle, tol=1e-9):
    f = res.contact_force[oracle.cid]
    for (fn, f1, f2), (mu1, mu2) in zip(f, oracle.mu):
        if mu1 == 0.0:
            assert f1 == 0.0 and f2 == 0.0
            continue
        assert np.hypot(f1 / mu1, f2 / mu2) <= fn * (1 + tol) + tol


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_states(model, seed):
    """Moving robot, random desired accelerations, applied forces: the equations of motion
    hold on every row (to 1e-9), the actuated coordinates get the desired accelerations (or,
    for no-slip with inconsistent ones, those of eq. 47), forces lie in their cones and the
    velocity-level contact conditions hold."""
    m, d = go1_standing(seed)
    rng = np.random.default_rng(100 + seed)
    d.qfrc_applied[:] = rng.standard_normal(m.nv)
    d.xfrc_applied[1] = rng.standard_normal(6)
    qacc_des = rng.standard_normal(m.nv)
    res = engine.rigid_inverse(m, d, qacc_des, model=model)
    assert res.ok, res
    oracle = Oracle(GO1, m, d)
    r, scale = oracle.residual(res)
    assert np.abs(r).max() <= 1e-9 * scale
    h = oracle.h
    vnext = d.qvel + h * res.qacc
    f = res.contact_force[oracle.cid]
    gap = np.array([J[0] @ vnext + phi / h for J, phi in zip(oracle.J, oracle.phi)])
    vscale = max(1.0, np.abs(vnext).max())
    assert np.all(gap >= -1e-9 * vscale)                     # no penetration after the step
    assert np.all(f[:, 0] >= -1e-9 * max(1.0, np.abs(f).max()))
    if model != "convex":                                    # normal complementarity
        assert np.abs(f[:, 0] * gap).max() <= 1e-9 * vscale * max(1.0, f[:, 0].max())
    if model == "noslip":
        # no slip at the contacts that stay closed (an opening one keeps no tangential rows)
        closed = gap <= 1e-9 * vscale
        slip = np.array([J[1:] @ vnext for J in oracle.J])[closed]
        assert closed.any() and np.abs(slip).max() <= 1e-9 * vscale
        if not res.adjusted:
            np.testing.assert_allclose(oracle.B @ res.qacc, oracle.B @ qacc_des, atol=1e-9)
    else:
        assert_in_cones(res, oracle)
        np.testing.assert_allclose(oracle.B @ res.qacc, oracle.B @ qacc_des, atol=1e-9)


def test_inconsistent_desired_accelerations():
    """Four feet that may not slip fix the base to the legs: desired joint accelerations that
    splay the legs are inconsistent (4.5). The first solve leaves dropped tangent rows violated,
    eq. 47 finds the closest consistent accelerations, and the final result satisfies every
    no-slip row."""
    m, d = go1_standing()
    qacc_des = np.zeros(m.nv)
    qacc_des[6::3] = [5.0, -5.0, 5.0, -5.0]           # abduction joints: legs outwards
    res = engine.rigid_inverse(m, d, qacc_des, model="noslip")
    assert res.ok and res.adjusted and res.consistent
    oracle = Oracle(GO1, m, d)
    vnext = d.qvel + oracle.h * res.qacc
    gap = np.array([J[0] @ vnext for J in oracle.J])
    closed = gap <= 1e-9
    slip = np.array([J[1:] @ vnext for J in oracle.J])[closed]
    assert np.all(gap >= -1e-9) and closed.sum() >= 3       # a foot may open, none sinks
    assert np.abs(slip).max() <= 1e-9
    # the accelerations were changed: the desired ones are not reachable
    assert np.abs(oracle.B @ (res.qacc - qacc_des)).max() > 1e-3
    r, scale = oracle.residual(res)
    assert np.abs(r).max() <= 1e-9 * scale


def test_no_contact_is_rne():
    """In the air: the base's acceleration is the output, the joints get the desired ones, and
    MuJoCo's mj_inverse (discrete-time, as our semi-implicit step) at the returned
    accelerations gives the returned joint forces and zero on the base (to 1e-9);
    engine.inverse agrees."""
    m, d = go1_standing(lift=1.0)
    m.opt.disableflags |= int(engine.DisableBit.FRICTIONLOSS)   # a constraint, not in the model
    engine.forward(m, d)
    assert len(d.contact.dist) == 0
    rng = np.random.default_rng(4)
    d.qvel[:] = rng.standard_normal(m.nv)
    d.qfrc_applied[:] = rng.standard_normal(m.nv)
    qacc_des = rng.standard_normal(m.nv)
    for model in MODELS:
        res = engine.rigid_inverse(m, d, qacc_des, model=model)
        assert res.ok and res.ncontact == 0
        np.testing.assert_allclose(res.qacc[6:], qacc_des[6:], atol=1e-12)
        mm = mujoco.MjModel.from_xml_path(GO1)
        mm.opt.disableflags = int(m.opt.disableflags)
        mm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_INVDISCRETE   # the step's damping
        md = mujoco.MjData(mm)
        md.qpos[:], md.qvel[:], md.qacc[:] = d.qpos, d.qvel, res.qacc
        mujoco.mj_inverse(mm, md)
        expect = md.qfrc_inverse - d.qfrc_applied
        scale = np.abs(md.qfrc_inverse).max()
        assert np.abs(expect[:6]).max() <= 1e-9 * scale
        np.testing.assert_allclose(res.qfrc, np.r_[np.zeros(6), expect[6:]], atol=1e-9 * scale)
        d.qacc[:] = res.qacc
        engine.inverse(m, d)
        np.testing.assert_allclose(d.qfrc_inverse - d.qfrc_applied, res.qfrc,
                                   atol=1e-9 * scale)


def test_fully_actuated_no_contact_humanoid():
    """dm_control's humanoid in the air: the free joint is unactuated, 21 hinges are driven
    through geared motors; per-actuator forces times gears are the joint forces of mj_inverse."""
    import dm_control
    path = str(pathlib.Path(dm_control.__file__).parent / "suite" / "humanoid.xml")
    m = engine.load_model(path)
    d = engine.make_data(m)
    d.qpos[2] = 5.0
    rng = np.random.default_rng(8)
    d.qvel[:] = 0.5 * rng.standard_normal(m.nv)
    qacc_des = rng.standard_normal(m.nv)
    res = engine.rigid_inverse(m, d, qacc_des, model="noslip")
    assert res.ok and res.ncontact == 0
    mm = mujoco.MjModel.from_xml_path(path)
    mm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_INVDISCRETE
    md = mujoco.MjData(mm)
    md.qpos[:], md.qvel[:], md.qacc[:] = d.qpos, d.qvel, res.qacc
    mujoco.mj_inverse(mm, md)
    scale = np.abs(md.qfrc_inverse).max()
    assert np.abs(md.qfrc_inverse[:6]).max() <= 1e-9 * scale
    np.testing.assert_allclose(res.qfrc, md.qfrc_inverse, atol=1e-9 * scale)
    B = np.zeros((mm.nu, mm.nv))
    mujoco.mju_sparse2dense(B, md.actuator_moment, md.moment_rownnz, md.moment_rowadr,
                            md.moment_colind)
    np.testing.assert_allclose(B.T @ res.actuator_force, md.qfrc_inverse, atol=1e-9 * scale)


def test_warm_start_keeps_the_set(standing):
    """Called again at the same state with the previous warm start, no-slip and convex pivot
    no more and return the same forces."""
    m, d = standing
    for model in ("noslip", "convex"):
        res = engine.rigid_inverse(m, d, np.zeros(m.nv), model=model)
        res2 = engine.rigid_inverse(m, d, np.zeros(m.nv), model=model, warmstart=res.warmstart)
        assert res2.pivots == 0
        np.testing.assert_allclose(res2.contact_force, res.contact_force, atol=1e-9)
        np.testing.assert_allclose(res2.actuator_force, res.actuator_force, atol=1e-9)


def coulomb_oracle(oracle, qacc_des, nedges):
    """The Coulomb LCP of section 5 built with numpy from MuJoCo's terms: z = (f_n, beta,
    lambda), and the actuator forces tau(z)."""
    M, k, B = oracle.M, oracle.k, oracle.B
    h = oracle.h
    nc = len(oracle.cid)
    Minv = np.linalg.inv(M)
    X = B @ Minv @ B.T
    Q = Minv - Minv @ B.T @ np.linalg.solve(X, B @ Minv)
    a0 = Minv @ k + Minv @ B.T @ np.linalg.solve(X, B @ qacc_des - B @ Minv @ k)
    N = oracle.J[:, 0]
    th = 2 * np.pi * np.arange(nedges) / nedges
    D = np.array([oracle.mu[c, 0] * np.cos(t) * oracle.J[c, 1]
                  + oracle.mu[c, 1] * np.sin(t) * oracle.J[c, 2]
                  for c in range(nc) for t in th])
    G = np.vstack([N, D])
    E = np.kron(np.eye(nc), np.ones((nedges, 1)))
    v = oracle.md.qvel.copy()
    Mq = np.block([[G @ Q @ G.T, np.vstack([np.zeros((nc, nc)), E])],
                   [np.hstack([np.eye(nc), -E.T]), np.zeros((nc, nc))]])
    q = np.concatenate([N @ a0 + (N @ v + oracle.phi / h) / h, D @ a0 + D @ v / h, np.zeros(nc)])

    def tau(z):
        g = z[:G.shape[0]]
        return np.linalg.solve(X, B @ qacc_des - B @ Minv @ (k + G.T @ g))
    return Mq, q, tau


def test_algorithm3_against_enumeration():
    """With two feet on the ground (12 LCP variables), Algorithm 3 picks the solution whose
    actuator forces are closest to the previous ones; an enumeration of all 4096 complementary
    bases of the same LCP built from MuJoCo's terms finds no closer one."""
    m, d = go1_standing()
    # pitch the trunk nose down, then lift it until the front feet are at the margin
    d.qpos[3:7] = [np.cos(0.02), 0.0, np.sin(0.02), 0.0]
    engine.forward(m, d)
    d.qpos[2] -= (d.contact.dist - d.contact.includemargin).min() + 1e-9
    engine.forward(m, d)
    assert len(d.contact.dist) == 2
    rng = np.random.default_rng(12)
    qacc_des = 0.5 * rng.standard_normal(m.nv)
    first = engine.rigid_inverse(m, d, qacc_des, model="coulomb")
    tau_prev = first.actuator_force + 0.5 * rng.standard_normal(m.nu)
    first.warmstart.tau[:] = tau_prev
    res = engine.rigid_inverse(m, d, qacc_des, model="coulomb", warmstart=first.warmstart)
    assert res.ok and res.enumerated and res.nsolutions >= 1
    oracle = Oracle(GO1, m, d)
    Mq, q, tau = coulomb_oracle(oracle, qacc_des, 4)
    sols = lcp_enumerate(Mq, q)
    assert sols
    best = min(np.linalg.norm(tau(z) - tau_prev) for z, _, _ in sols)
    got = np.linalg.norm(res.actuator_force - tau_prev)
    assert got <= best + 1e-9 * max(1.0, best)
    r, scale = oracle.residual(res)
    assert np.abs(r).max() <= 1e-9 * scale


def test_chatter_warm_vs_cold(standing):
    """Slowly varying desired accelerations at the standing pose (the chatter
    measurement: sum over calls of |tau_k - tau_k-1|), consistent with the four feet staying
    put (the base's accelerations a sinusoid, the joints' from the feet's Jacobians, MuJoCo's):
    the four normal forces are indeterminate (a four-legged table). The pivoting's vertex
    (least_norm=False, the paper's Algorithm 2): warm-started PPM keeps its set while it stays
    a solution, cold-started from the empty set it jumps between sets: at least 10x less
    chatter warm (10.1x here). The least-norm forces (the default) are unique: warm and cold
    give the same torques (to 1e-9 N m), with less chatter than even the warm vertex (17 and
    39 N m here). Convex: the tie-breaker keeps the previous torques among the optimal force
    distributions; without the warm start it takes the least torques each time (about 35x)."""
    m, d = standing
    J = Oracle(GO1, m, d).J.reshape(-1, m.nv)
    chatter, torques = {}, {}
    for key, model, options in (("noslip", "noslip", {}),
                                ("vertex", "noslip", {"least_norm": False}),
                                ("convex", "convex", {})):
        warm, cold, ws = [], [], None
        for t in range(200):
            qacc_des = np.zeros(m.nv)
            qacc_des[:6] = 0.3 * np.sin(0.05 * t + np.arange(6))
            qacc_des[6:] = -np.linalg.lstsq(J[:, 6:], J[:, :6] @ qacc_des[:6], rcond=None)[0]
            res = engine.rigid_inverse(m, d, qacc_des, model=model, warmstart=ws, **options)
            assert res.ok and not res.adjusted
            ws = res.warmstart
            warm.append(res.actuator_force)
            cold.append(engine.rigid_inverse(m, d, qacc_des, model=model,
                                             **options).actuator_force)
        torques[key] = np.array(warm), np.array(cold)
        chatter[key] = [np.abs(np.diff(x, axis=0)).sum() for x in torques[key]]
    assert 10 * chatter["vertex"][0] <= chatter["vertex"][1]
    np.testing.assert_allclose(*torques["noslip"], atol=1e-9)
    assert chatter["noslip"][0] <= chatter["vertex"][0]
    assert 10 * chatter["convex"][0] <= chatter["convex"][1]


def test_bad_input(standing):
    m, d = standing
    with pytest.raises(ValueError, match="model must be"):
        engine.rigid_inverse(m, d, np.zeros(m.nv), model="soft")
    with pytest.raises(ValueError, match="nv = 18"):
        engine.rigid_inverse(m, d, np.zeros(3))
    with pytest.raises(ValueError, match="nedges"):
        engine.rigid_inverse(m, d, np.zeros(m.nv), nedges=0)


def noslip_forward(oracle, tau, held, tol=1e-9):
    """Forward dynamics of the no-slip model with the actuator forces tau given, by enumeration:
    Gauss's principle min 1/2 a'M a - (k + B'tau)'a s.t. T_i a = -T_i v / h (contacts with
    held[i]), N a + b_n >= 0, solved for every set of active normal rows by its KKT system
    (numpy); the accelerations of the sets that are feasible with non-negative normal forces.
    Strict convexity makes them one and the same."""
    import itertools
    M, h = oracle.M, oracle.h
    v = oracle.md.qvel
    kt = oracle.k + oracle.B.T @ tau
    nv, nc = M.shape[0], len(oracle.cid)
    N = oracle.J[:, 0]
    T = oracle.J[held, 1:].reshape(-1, nv)
    bn = (N @ v + oracle.phi / h) / h
    out = []
    for k in range(nc + 1):
        for S in itertools.combinations(range(nc), k):
            A = np.vstack([T, N[list(S)]])
            rhs = np.concatenate([-T @ v / h, -bn[list(S)]])
            K = np.block([[M, -A.T], [A, np.zeros((len(A), len(A)))]])
            sol = np.linalg.lstsq(K, np.concatenate([kt, rhs]), rcond=None)[0]
            a, lam = sol[:nv], sol[nv:]
            if np.abs(K @ sol - np.concatenate([kt, rhs])).max() > tol * np.abs(kt).max():
                continue
            fn = lam[len(T):]
            scale = max(1.0, np.abs(a).max())
            if (N @ a + bn).min() >= -tol * scale and (fn.min() if k else 0) >= -tol * np.abs(
                    kt).max():
                out.append(a)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_noslip_forward_reproduces_the_accelerations(seed):
    """Forward-simulating the recovered actuator forces with the same rigid no-slip contact
    reproduces the predicted accelerations (to 1e-9): the forward problem, solved by active-set
    enumeration with numpy on MuJoCo's terms, has a unique solution, and it is the inverse's.
    The desired accelerations are those of the actuated rows the prediction achieves where
    they were consistent, eq. 47's where not (both occur among the seeds)."""
    m, d = go1_standing(seed)
    rng = np.random.default_rng(200 + seed)
    qacc_des = rng.standard_normal(m.nv)
    res = engine.rigid_inverse(m, d, qacc_des, model="noslip")
    assert res.ok
    oracle = Oracle(GO1, m, d)
    vnext = d.qvel + oracle.h * res.qacc
    gap = np.array([J[0] @ vnext + phi / oracle.h for J, phi in zip(oracle.J, oracle.phi)])
    held = gap <= 1e-9 * max(1.0, np.abs(vnext).max())      # contacts that stay closed
    sols = noslip_forward(oracle, res.actuator_force, held)
    assert sols
    scale = max(1.0, np.abs(res.qacc).max())
    for a in sols:
        np.testing.assert_allclose(a, res.qacc, atol=1e-9 * scale)


def two_feet():
    """Go1 pitched nose down with its two front feet at the contact margin."""
    m, d = go1_standing()
    d.qpos[3:7] = [np.cos(0.02), 0.0, np.sin(0.02), 0.0]
    engine.forward(m, d)
    d.qpos[2] -= (d.contact.dist - d.contact.includemargin).min() + 1e-9
    engine.forward(m, d)
    assert len(d.contact.dist) == 2
    return m, d


@pytest.mark.parametrize("seed", [5, 6])
def test_coulomb_forward_reproduces_the_accelerations(seed):
    """Forward-simulating the recovered actuator forces with the same linearised Coulomb
    contact (Stewart & Trinkle's LCP with the torques given, built with numpy from MuJoCo's
    terms and solved by enumerating all 4096 complementary bases): one of its solutions has
    the inverse's accelerations (to 1e-9) and its contact forces."""
    m, d = two_feet()
    rng = np.random.default_rng(seed)
    d.qvel[:] = 0.05 * rng.standard_normal(m.nv)
    engine.forward(m, d)
    qacc_des = 0.5 * rng.standard_normal(m.nv)
    res = engine.rigid_inverse(m, d, qacc_des, model="coulomb")
    assert res.ok
    oracle = Oracle(GO1, m, d)
    h, nc, nedges = oracle.h, 2, 4
    Minv = np.linalg.inv(oracle.M)
    N = oracle.J[:, 0]
    th = 2 * np.pi * np.arange(nedges) / nedges
    D = np.array([oracle.mu[c, 0] * np.cos(t) * oracle.J[c, 1]
                  + oracle.mu[c, 1] * np.sin(t) * oracle.J[c, 2] for c in range(nc) for t in th])
    G = np.vstack([N, D])
    E = np.kron(np.eye(nc), np.ones((nedges, 1)))
    kt = oracle.k + oracle.B.T @ res.actuator_force
    v = oracle.md.qvel
    Mq = np.block([[G @ Minv @ G.T, np.vstack([np.zeros((nc, nc)), E])],
                   [np.hstack([np.eye(nc), -E.T]), np.zeros((nc, nc))]])
    q = np.concatenate([N @ Minv @ kt + (N @ v + oracle.phi / h) / h,
                        D @ Minv @ kt + D @ v / h, np.zeros(nc)])
    scale = max(1.0, np.abs(res.qacc).max())
    errs = []
    for z, _, _ in lcp_enumerate(Mq, q):
        a = Minv @ (kt + G.T @ z[:len(G)])
        errs.append(np.abs(a - res.qacc).max())
    assert errs and min(errs) <= 1e-9 * scale


@pytest.mark.parametrize("seed", [7, 8])
def test_convex_against_enumeration(seed):
    """The convex model's accelerations are the unique minimiser of the kinetic energy after
    the step (section 6, eq. 30): the optimality LCP rebuilt with numpy from MuJoCo's terms
    (edge forces and non-penetration multipliers, 10 variables for two feet) solved by
    enumerating every complementary basis gives the same accelerations at each of its
    solutions, and they are the inverse's (to 1e-9)."""
    m, d = two_feet()
    rng = np.random.default_rng(seed)
    d.qvel[:] = 0.05 * rng.standard_normal(m.nv)
    engine.forward(m, d)
    qacc_des = 0.5 * rng.standard_normal(m.nv)
    res = engine.rigid_inverse(m, d, qacc_des, model="convex")
    assert res.ok
    oracle = Oracle(GO1, m, d)
    M, k, B, h = oracle.M, oracle.k, oracle.B, oracle.h
    nc, nedges = 2, 4
    Minv = np.linalg.inv(M)
    X = B @ Minv @ B.T
    Q = Minv - Minv @ B.T @ np.linalg.solve(X, B @ Minv)
    a0 = Minv @ k + Minv @ B.T @ np.linalg.solve(X, B @ qacc_des - B @ Minv @ k)
    N = oracle.J[:, 0]
    th = 2 * np.pi * np.arange(nedges) / nedges
    Ge = np.array([N[c] + oracle.mu[c, 0] * np.cos(t) * oracle.J[c, 1]
                   + oracle.mu[c, 1] * np.sin(t) * oracle.J[c, 2] for c in range(nc) for t in th])
    v0 = oracle.md.qvel + h * a0
    C = N @ Q @ Ge.T
    Mq = np.block([[Ge @ Q @ Ge.T, -C.T], [C, np.zeros((nc, nc))]])
    q = np.concatenate([Ge @ Q @ M @ v0 / h, N @ a0 + (N @ oracle.md.qvel + oracle.phi / h) / h])
    sols = lcp_enumerate(Mq, q)
    assert sols
    scale = max(1.0, np.abs(res.qacc).max())
    for z, _, _ in sols:
        a = a0 + Q @ Ge.T @ z[:len(Ge)]
        np.testing.assert_allclose(a, res.qacc, atol=1e-9 * scale)


def quadruped_control():
    """examples/quadruped_control.py as a module (the Go1 with torque motors of the example)."""
    path = ROOT / "examples" / "quadruped_control.py"
    spec = importlib.util.spec_from_file_location("quadruped_control", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_trot_forces_stay_bounded():
    """Regression: states recorded along the example's trot (`--task walk`, the id-sensed
    controller driving our soft simulation; tests/data/go1_trot_states.npz), four windows
    where no-slip returned tangential forces up to 5e5 times the weight and torques up to
    1.6e7 N m, warm and cold alike: Algorithm 1 kept tangent rows of the two stance feet that
    were nearly dependent on the actuator rows (pivot ratios 1e-6 to 3e-5) with inconsistent
    right-hand sides; then, with those rows dropped, loaded feet slipped at 15 of the states
    (up to 0.21 m/s) after the dynamics-blind least-change QP. Warm-started call after call as
    a controller does, cold, and with least_norm=False (the pivoting's vertex): every LCP
    solved and every result consistent (res.ok: the rows Algorithm 1 dropped hold, eq. 47 made
    them so where the desired accelerations did not), the equations of motion balanced on every
    row against MuJoCo's terms (1e-9), no slip at the loaded contacts that stay closed beyond
    the consistency check's tolerance (1e-8 of |J| |a| h, rounding: 1e-14 m/s measured), and
    no contact force above what stopping the fastest contact point of the whole robot within
    the step takes, 3 weights + 2 m |v| / h (a landing foot at 0.9 m/s: rigid contact is
    impulsive; 34 weights at most here)."""
    qc = quadruped_control()
    m = qc.go1_torque_model()
    xml = qc.go1_torque_xml()
    d = engine.make_data(m)
    data = np.load(ROOT / "tests" / "data" / "go1_trot_states.npz")
    mass = m.body_mass.sum()
    weight = mass * -m.opt.gravity[2]
    adjusted = set()
    for start, length in zip(data["window_start"], data["window_length"]):
        ws = {}
        for k in range(start, start + length):
            d.qpos[:], d.qvel[:] = data["qpos"][k], data["qvel"][k]
            for least_norm, warm in ((True, True), (True, False), (False, True)):
                res = engine.rigid_inverse(m, d, data["qacc_des"][k], model="noslip",
                                           warmstart=ws.get(least_norm) if warm else None,
                                           stabilization=0.0, least_norm=least_norm)
                if warm:
                    ws[least_norm] = res.warmstart
                assert res.status == engine.lcp.LCPStatus.SOLVED
                assert res.ok and res.consistent
                if res.adjusted:
                    adjusted.add(int(data["step"][k]))
                oracle = Oracle(None, m, d, xml=xml)
                r, scale = oracle.residual(res)
                assert np.abs(r).max() <= 1e-9 * scale
                speed = np.abs(oracle.J.reshape(-1, m.nv) @ d.qvel).max()
                bound = 3 * weight + 2 * mass * speed / oracle.h
                assert np.abs(res.contact_force).max() <= bound
                h = oracle.h
                vnext = d.qvel + h * res.qacc
                gap = np.array([J[0] @ vnext + max(phi, 0.0) / h      # stabilization 0
                                for J, phi in zip(oracle.J, oracle.phi)])
                vscale = max(1.0, np.abs(vnext).max())
                closed = (gap <= 1e-9 * vscale) & (res.contact_force[oracle.cid, 0] > 0)
                slip = np.array([J[1:] @ vnext for J in oracle.J])[closed]
                jmax = np.abs(oracle.J[:, 1:]).sum(axis=-1).max()
                tol = 1e-8 * h * jmax * np.linalg.norm(res.qacc) + 1e-9 * vscale
                assert np.abs(slip).max(initial=0.0) <= tol
    # eq. 47 changed the desired accelerations at every state where feet slipped before
    assert {1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1248, 1254,
            1785, 1786, 1787, 1788, 1789} <= adjusted


@pytest.mark.parametrize("box", [False, True])
def test_least_norm_forces(box):
    """The no-slip contact forces are the least among the equally valid ones (section 4.6):
    at rest at the standing pose (4 sphere feet, or 16 corners of box feet: indeterminate), numpy's
    minimum-norm solution of the unactuated rows of the equations of motion (MuJoCo's terms,
    the null space of the actuator moments, lstsq) at the predicted accelerations, whose
    normal forces are all positive here (so the bounds are inactive), equals the engine's to
    1e-8 of the weight."""
    import scipy.linalg
    qc = quadruped_control()
    m = qc.go1_torque_model(box_feet=box)
    d = engine.make_data(m)
    engine.reset_keyframe(m, d, 0)
    engine.forward(m, d)
    d.qpos[2] -= (d.contact.dist - d.contact.includemargin).min()
    engine.forward(m, d)
    nc = len(d.contact.dist)
    assert nc == (16 if box else 4)
    res = engine.rigid_inverse(m, d, np.zeros(m.nv), model="noslip")
    assert res.ok
    oracle = Oracle(None, m, d, xml=qc.go1_torque_xml(box_feet=box))
    Z = scipy.linalg.null_space(oracle.B)
    A = Z.T @ oracle.J.reshape(3 * nc, m.nv).T
    f = np.linalg.lstsq(A, Z.T @ (oracle.M @ res.qacc - oracle.k), rcond=None)[0].reshape(nc, 3)
    weight = m.body_mass.sum() * -m.opt.gravity[2]
    assert f[:, 0].min() > 0.01 * weight
    np.testing.assert_allclose(res.contact_force, f, atol=1e-8 * weight)
    r, scale = oracle.residual(res)
    assert np.abs(r).max() <= 1e-9 * scale


def least_norm_stationarity(oracle, res, held, stab):
    """How far res.contact_force is from the least forces of section 4.6 for the set `held`
    (contacts keeping their no-slip rows), by the optimality conditions of
        min 1/2 |f|^2  s.t.  Z'(J_c' f - (M a - k)) = 0  (Z spans the null space of B),
                             f_n >= 0,  f_n = 0 where the contact separates, f_t = 0 off held:
    f = A'lam + G'mu on the free forces, mu >= 0 on the normals at zero. Returns the largest
    violation relative to the largest force (numpy's lstsq for lam, MuJoCo's terms)."""
    import scipy.linalg
    nc, nv = len(oracle.cid), oracle.mm.nv
    h = oracle.h
    f = res.contact_force[oracle.cid]
    fscale = max(np.abs(f).max(), 1.0)
    Z = scipy.linalg.null_space(oracle.B)
    A = Z.T @ oracle.J.reshape(3 * nc, nv).T
    phi = np.where(oracle.phi < 0, stab * oracle.phi, oracle.phi)
    w = np.array([(J[0] @ (oracle.md.qvel + h * res.qacc) + p / h) / h
                  for J, p in zip(oracle.J, phi)])
    aref = np.linalg.norm(np.linalg.solve(oracle.M, oracle.k))
    separating = w > 1e-6 * max(aref, np.linalg.norm(res.qacc))
    free = np.zeros((nc, 3), bool)
    free[:, 0] = ~separating
    free[:, 1:] = np.asarray(held)[:, None]
    worst = np.abs(f[~free]).max(initial=0.0) / fscale            # forced to zero
    at_bound = free.copy()
    at_bound[:, 1:] = False
    at_bound[:, 0] &= f[:, 0] <= 1e-9 * fscale
    interior = (free & ~at_bound).ravel()
    lam = np.linalg.lstsq(A[:, interior].T, f.ravel()[interior], rcond=None)[0]
    g = A.T @ lam
    worst = max(worst, np.abs(g[interior] - f.ravel()[interior]).max() / fscale)
    mu = -g[at_bound.ravel()]                                    # bound multipliers
    return max(worst, -mu.min(initial=0.0) / fscale)


def test_pass_cap_keeps_the_solved_set():
    """The open-set passes and their cap, on the recorded trot. The least-norm stage works on
    the set of the last solve, not on the one the pass toggled: where the first pass opens a
    contact, max_passes=1 stops after it (every contact with friction held) and returns forces
    that balance every row of the equations of motion (1e-9) and are the least ones for that
    set (their optimality conditions, 1e-8). Where the passes cycle (a foot held is lifted by
    eq. 47, released it closes under load and would slip), the default cap ends with the
    paper's set, every contact held, solved once more: the same checks hold for it."""
    qc = quadruped_control()
    m = qc.go1_torque_model()
    xml = qc.go1_torque_xml()
    d = engine.make_data(m)
    data = np.load(ROOT / "tests" / "data" / "go1_trot_states.npz")
    capped = cycled = 0
    for k in range(len(data["step"])):
        d.qpos[:], d.qvel[:] = data["qpos"][k], data["qvel"][k]
        full = engine.rigid_inverse(m, d, data["qacc_des"][k], model="noslip", stabilization=0.0)
        if full.passes < 2:
            continue
        results = [engine.rigid_inverse(m, d, data["qacc_des"][k], model="noslip",
                                        stabilization=0.0, max_passes=1)]
        assert results[0].passes == 1
        capped += 1
        if full.passes == 2 * full.ncontact + 3:
            results.append(full)
            cycled += 1
        oracle = Oracle(None, m, d, xml=xml)
        held = oracle.mu[:, 0] != 0.0
        for res in results:
            assert res.status == engine.lcp.LCPStatus.SOLVED
            r, scale = oracle.residual(res)
            assert np.abs(r).max() <= 1e-9 * scale
            assert least_norm_stationarity(oracle, res, held, 0.0) <= 1e-8
    assert capped >= 1 and cycled >= 1

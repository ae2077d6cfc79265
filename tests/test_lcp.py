"""LCP solvers (engine.lcp): Lemke and the principal pivoting method I on the textbook problems,
checked against the complementarity conditions (to 1e-9) and independent oracles: an enumeration
of the complementary bases (tests/naive.py), scipy's LP solver for feasibility and for the LPs
written as LCPs, best responses for bimatrix games."""

import numpy as np
import pytest
from scipy.optimize import linprog

from engine import lcp
from engine.lcp import LCPStatus
from naive import lcp_enumerate


def assert_solution(M, q, z, info, tol=1e-9):
    """z >= 0, w = M z + q >= 0 (recomputed here), z'w = 0, relative to the problem's size."""
    assert info.ok, info.status
    w = M @ z + q
    scale = max(1.0, np.abs(q).max(), np.abs(M).max() * max(1.0, np.abs(z).max()))
    assert z.min() >= -tol * scale
    assert w.min() >= -tol * scale
    assert np.abs(z * w).max() <= tol * scale * max(1.0, np.abs(z).max())
    np.testing.assert_allclose(info.w, w, atol=tol * scale)
    # the reported set is the support of the basis: z vanishes off it, w on it
    off = np.setdiff1d(np.arange(len(q)), info.nonbasic)
    assert np.all(z[off] == 0.0)
    assert np.all(info.w[info.nonbasic] == 0.0)


def feasible(M, q):
    """Oracle: is {z >= 0 : M z + q >= 0} non-empty (scipy's HiGHS LP)?"""
    n = len(q)
    res = linprog(np.zeros(n), A_ub=-M, b_ub=q, bounds=[(0, None)] * n, method="highs")
    return res.status == 0


def murty(n):
    """Murty (1978): M upper triangular (1 on the diagonal, 2 above), q_i = -sum_{j>=i} 2^j."""
    M = np.triu(2.0 * np.ones((n, n)), 1) + np.eye(n)
    q = -np.array([sum(2.0 ** j for j in range(i, n + 1)) for i in range(1, n + 1)])
    return M, q


def fathi(n):
    """Fathi (1979): M = L L' with L lower triangular (1 on the diagonal, 2 below), q = -e:
    symmetric positive definite."""
    L = np.tril(2.0 * np.ones((n, n)), -1) + np.eye(n)
    return L @ L.T, -np.ones(n)


@pytest.mark.parametrize("n", range(2, 11))
def test_murty_exponential(n):
    """Lemke needs 2^n pivots on Murty's problem, PPM I (least-index distinguished variable)
    2^n - 1; both end at the unique solution (a P-matrix), which the enumeration confirms."""
    M, q = murty(n)
    oracle = lcp_enumerate(M, q) if n <= 8 else None
    for solve, pivots in ((lcp.lemke, 2 ** n), (lcp.ppm, 2 ** n - 1)):
        z, info = solve(M, q)
        assert_solution(M, q, z, info)
        assert info.pivots == pivots
        if oracle is not None:
            assert len(oracle) == 1
            np.testing.assert_allclose(z, oracle[0][0], atol=1e-9 * abs(q).max())


@pytest.mark.parametrize("n", range(2, 11))
def test_fathi_exponential(n):
    """Lemke needs 2^n pivots on Fathi's positive definite problem."""
    M, q = fathi(n)
    z, info = lcp.lemke(M, q)
    assert_solution(M, q, z, info)
    assert info.pivots == 2 ** n
    z2, info2 = lcp.ppm(M, q)
    assert_solution(M, q, z2, info2)
    np.testing.assert_allclose(z2, z, atol=1e-9)        # positive definite: one solution


def test_iteration_cap():
    M, q = murty(8)
    z, info = lcp.lemke(M, q, maxpivot=100)
    assert info.status == LCPStatus.MAXITER and not info.ok and info.pivots == 100
    z, info = lcp.ppm(M, q, maxpivot=10)
    assert info.status == LCPStatus.MAXITER and info.pivots == 10


def random_problems(kind, count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, 8))
        A = rng.standard_normal((n, n))
        if kind == "psd":            # symmetric positive semi-definite, often singular
            r = int(rng.integers(0, n + 1))
            B = rng.standard_normal((n, r))
            M = B @ B.T
        elif kind == "monotone":     # positive semi-definite, not symmetric (PSD + skew)
            B = rng.standard_normal((n, int(rng.integers(0, n + 1))))
            M = B @ B.T + (A - A.T)
        elif kind == "P":            # P-matrix (diagonally dominant)
            M = A + np.diag(np.abs(A).sum(axis=1) + 0.1)
        else:                        # copositive-plus: non-negative plus PSD
            B = rng.standard_normal((n, 2))
            M = np.abs(A) + B @ B.T
        q = rng.standard_normal(n)
        if rng.random() < 0.3:
            q[rng.random(n) < 0.5] = 0.0     # degenerate right-hand sides
        yield M, q


@pytest.mark.parametrize("kind", ["psd", "monotone", "P", "copositive"])
def test_random_against_oracles(kind):
    """Each problem solved to 1e-9 by Lemke (all four classes are copositive-plus) and by PPM
    (the column-sufficient ones); where no solution is returned, the LP oracle must find the
    problem infeasible, and the enumeration must find no complementary basic solution."""
    solvers = [lcp.lemke] + ([lcp.ppm] if kind != "copositive" else [])
    # fixed seeds; "monotone" 8 has skew-symmetric problems on which PPM hands over to Lemke
    seed = {"psd": 1, "monotone": 8, "P": 3, "copositive": 4}[kind]
    for M, q in random_problems(kind, 150, seed=seed):
        for solve in solvers:
            z, info = solve(M, q)
            if info.status == LCPStatus.RAY:
                assert not feasible(M, q)
                assert lcp_enumerate(M, q) == []
            else:
                assert_solution(M, q, z, info)
                assert feasible(M, q)
        if kind == "psd" and info.ok:
            # symmetric PSD (a convex QP): M z, hence w, is the same at every solution
            for z_o, w_o, _ in lcp_enumerate(M, q):
                np.testing.assert_allclose(info.w, w_o, atol=1e-8 * max(1, abs(q).max()))


def test_ray_termination():
    """Infeasible problems end on a ray, reported as such (and the LP oracle agrees)."""
    cases = [
        (np.array([[1.0, -1.0], [-1.0, 1.0]]), np.array([-1.0, -1.0])),   # PSD
        (np.zeros((3, 3)), np.array([1.0, -1.0, 0.0])),                    # M = 0
        (np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([-1.0, -1.0])),     # skew
        (np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 0.0]]),
         np.array([1.0, 1.0, -2.0])),
    ]
    for M, q in cases:
        assert not feasible(M, q)
        for solve in (lcp.lemke, lcp.ppm):
            z, info = solve(M, q)
            assert info.status == LCPStatus.RAY and not info.ok


def lp_as_lcp(c, A, b):
    """min c'x s.t. A x >= b, x >= 0 as the LCP of its optimality conditions: z = (x, y),
    M = [[0, -A'], [A, 0]], q = (c, -b)."""
    m, n = A.shape
    M = np.block([[np.zeros((n, n)), -A.T], [A, np.zeros((m, m))]])
    return M, np.concatenate([c, -b])


def test_degenerate_lps():
    """Degenerate LPs, where the simplex method cycles without an anti-cycling rule (Beale's
    example and Hoffman-like stacks of redundant constraints), solved through their LCP: the
    optimal value must match scipy's."""
    # Beale (1955): min -3/4 x4 + 20 x5 - 1/2 x6 + 6 x7 with slacks, written as A x >= b
    c = np.array([-0.75, 20.0, -0.5, 6.0])
    A = -np.array([[0.25, -8.0, -1.0, 9.0], [0.5, -12.0, -0.5, 3.0], [0.0, 0.0, 1.0, 0.0]])
    b = -np.array([0.0, 0.0, 1.0])
    problems = [(c, A, b)]
    rng = np.random.default_rng(3)
    for _ in range(20):
        n, m = 4, 6
        A = rng.integers(-2, 3, (m, n)).astype(float)
        A[m // 2:] = A[:m - m // 2]                    # repeated rows: ties everywhere
        b = np.zeros(m)                                # every constraint through the origin
        b[0] = -1.0
        c = rng.integers(0, 3, n).astype(float)
        problems.append((c, A, b))
    for c, A, b in problems:
        M, q = lp_as_lcp(c, A, b)
        ref = linprog(c, A_ub=-A, b_ub=-b, bounds=[(0, None)] * len(c), method="highs")
        for solve in (lcp.lemke, lcp.ppm):
            z, info = solve(M, q)
            if ref.status == 0:
                assert_solution(M, q, z, info)
                assert c @ z[:len(c)] == pytest.approx(ref.fun, abs=1e-9)
            else:
                assert info.status == LCPStatus.RAY


def test_degenerate_ties():
    """Fully degenerate problems: q = 0 rows, identical columns, a zero matrix block."""
    cases = [
        (np.ones((4, 4)), np.array([-1.0, -1.0, 0.0, 0.0])),
        (np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]), np.array([-1.0, -1.0, 0.0])),
        (np.array([[2.0, -1.0, 0, 0], [-1.0, 2.0, -1, 0], [0, -1.0, 2, -1], [0, 0, -1, 2]]),
         np.array([0.0, -1.0, 0.0, 0.0])),
        (np.kron(np.ones((2, 2)), np.eye(3)), np.array([-1.0, 0.0, -2.0, -1.0, 0.0, -2.0])),
    ]
    for M, q in cases:
        for solve in (lcp.lemke, lcp.ppm):
            z, info = solve(M, q)
            assert_solution(M, q, z, info)


def bimatrix(A, B):
    """Cost matrices A, B > 0 (m x n): z = (x, y, u, v) with x, y the players' strategies and
    u, v their expected costs: A y - u e >= 0 _|_ x, B'x - v e >= 0 _|_ y, sum x - 1 >= 0 _|_ u,
    sum y - 1 >= 0 _|_ v. The matrix is copositive; Lemke's method processes it."""
    m, n = A.shape
    M = np.zeros((m + n + 2, m + n + 2))
    M[:m, m:m + n] = A
    M[:m, m + n] = -1.0
    M[m:m + n, :m] = B.T
    M[m:m + n, m + n + 1] = -1.0
    M[m + n, :m] = 1.0
    M[m + n + 1, m:m + n] = 1.0
    q = np.zeros(m + n + 2)
    q[-2:] = -1.0
    return M, q


def test_bimatrix_games():
    """Lemke finds a Nash equilibrium: strategies summing to one, each pure strategy in the
    support a best response (least expected cost) to the other player's mixed strategy."""
    rng = np.random.default_rng(7)
    games = [(np.array([[1.0, 3.0], [2.0, 1.0]]), np.array([[2.0, 1.0], [1.0, 3.0]]))]
    for _ in range(60):
        m, n = rng.integers(1, 6, 2)
        games.append((rng.integers(1, 5, (m, n)).astype(float),     # small integers: ties
                      rng.integers(1, 5, (m, n)).astype(float)))
    for A, B in games:
        M, q = bimatrix(A, B)
        z, info = lcp.lemke(M, q)
        assert_solution(M, q, z, info)
        m, n = A.shape
        x, y = z[:m], z[m:m + n]
        assert x.sum() == pytest.approx(1.0, abs=1e-12) and y.sum() == pytest.approx(1.0, abs=1e-12)
        cost_x, cost_y = A @ y, B.T @ x
        assert np.all(cost_x[x > 1e-12] <= cost_x.min() + 1e-9)
        assert np.all(cost_y[y > 1e-12] <= cost_y.min() + 1e-9)


def test_bimatrix_classic_form_ends_on_a_ray():
    """The classic form of a game, w = -e + [[0, A], [B', 0]] z, is not copositive-plus: Lemke's
    scheme (covering vector e) leaves z0's row unchanged on its first driving column and ends on
    a ray although the problem is feasible; the solver says so instead of returning garbage
    (CPS treat this form with the Lemke-Howson start)."""
    A = np.array([[1.0, 3.0], [2.0, 1.0]])
    B = np.array([[2.0, 1.0], [1.0, 3.0]])
    M = np.block([[np.zeros((2, 2)), A], [B.T, np.zeros((2, 2))]])
    q = -np.ones(4)
    z, info = lcp.lemke(M, q)
    assert info.status == LCPStatus.RAY and not info.ok
    assert feasible(M, q)


def test_ppm_warm_start():
    """Started from the final set of a previous call, PPM returns it without a pivot; for a
    nearby q it pivots less than from the empty set; a singular warm set is reduced."""
    rng = np.random.default_rng(11)
    n = 12
    B = rng.standard_normal((n, 6))
    M = B @ B.T                          # rank 6: indeterminate z
    q = -np.abs(rng.standard_normal(n))
    z, info = lcp.ppm(M, q)
    assert_solution(M, q, z, info)
    z2, info2 = lcp.ppm(M, q, nonbasic=info.nonbasic)
    assert info2.pivots == 0
    np.testing.assert_array_equal(info2.nonbasic, info.nonbasic)
    np.testing.assert_allclose(z2, z, atol=1e-12 * abs(z).max())
    cold, warm = 0, 0
    for _ in range(20):
        q2 = q + 1e-3 * rng.standard_normal(n)
        zc, ic = lcp.ppm(M, q2)
        zw, iw = lcp.ppm(M, q2, nonbasic=info.nonbasic)
        assert_solution(M, q2, zc, ic)
        assert_solution(M, q2, zw, iw)
        cold += ic.pivots
        warm += iw.pivots
    assert warm < cold
    # every index as warm set: M_aa is singular (rank 6); the basis keeps an invertible part
    z3, info3 = lcp.ppm(M, q, nonbasic=np.arange(n))
    assert_solution(M, q, z3, info3)
    assert len(info3.nonbasic) <= 6


def test_lemke_warm_start():
    """lemke(nonbasic=...) returns the complementary solution of a valid guess without pivoting,
    and runs Lemke from the start after a bad guess."""
    M, q = fathi(6)
    z, info = lcp.lemke(M, q)
    z2, info2 = lcp.lemke(M, q, nonbasic=info.nonbasic)
    assert info2.pivots == 0
    np.testing.assert_allclose(z2, z, atol=1e-12)
    z3, info3 = lcp.lemke(M, q, nonbasic=[1])
    assert_solution(M, q, z3, info3)
    assert info3.pivots == info.pivots


def test_product_kernel_matches_dense():
    """The kernels on M = U V - W'W (columns formed when needed) take the same pivots to the
    same solution as on the dense matrix."""
    rng = np.random.default_rng(5)
    n, p, s = 9, 5, 3
    U = rng.standard_normal((n, p))
    V = U.T.copy()
    W = 0.3 * rng.standard_normal((s, n))
    M = U @ V - W.T @ W
    M += 0.0
    q = rng.standard_normal(n)
    warm = np.zeros(n, np.bool_)
    warm[:3] = True
    results = []
    for mode, args in ((lcp.DENSE, (M, lcp.EMPTY2, lcp.EMPTY2, lcp.EMPTY2)),
                       (lcp.PRODUCT, (lcp.EMPTY2, U, V, W))):
        ws = lcp.workspace(n)
        z, w = np.zeros(n), np.zeros(n)
        scale = np.abs(M).max()
        st, piv = lcp.ppm_kernel(mode, *args, scale, q, warm, ws, 1000, 1e-12, z, w)
        z2, w2 = np.zeros(n), np.zeros(n)
        st2, piv2 = lcp.lemke_kernel(mode, *args, scale, q, np.ones(n), ws, 1000, 1e-12, z2, w2)
        results.append((int(st), piv, z, int(st2), piv2, z2))
    (a, b) = results
    assert a[0] == b[0] and a[1] == b[1] and a[3] == b[3] and a[4] == b[4]
    np.testing.assert_allclose(a[2], b[2], atol=1e-10)
    np.testing.assert_allclose(a[5], b[5], atol=1e-10)


def test_the_kernels_compile_once_per_form_for_every_caller():
    """lemke and ppm from Python, on a read-only M, call the kernels with the types of the
    compiled callers (the rigid-contact inverse, whose unused matrices are a global array, read
    only in compiled code): one signature for the dense form, one for the product form, in a
    process that calls both ways. A third signature would compile each kernel again."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((5, 5))
    M = A @ A.T + np.eye(5)
    M.flags.writeable = False
    q = rng.standard_normal(5)
    q.flags.writeable = False
    for A in (M, M.copy()):
        for z, info in (lcp.lemke(A, q), lcp.ppm(A, q, nonbasic=[0, 1]),
                        lcp.lemke(A, q, cover=q * q)):
            assert_solution(M, q, z, info)
    dense, product = (True, False, False, False), (False, True, True, True)
    for kernel in (lcp.lemke_kernel, lcp.ppm_kernel):
        forms = {tuple(t.mutable for t in sig[1:5]) for sig in kernel.signatures}
        assert dense in forms and forms <= {dense, product}, kernel


def test_bad_input():
    with pytest.raises(ValueError, match="must be"):
        lcp.lemke(np.eye(3), np.ones(2))
    with pytest.raises(ValueError, match="finite"):
        lcp.ppm(np.eye(2), np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="cover"):
        lcp.lemke(np.eye(2), -np.ones(2), cover=[1.0, 0.0])
    with pytest.raises(ValueError, match="nonbasic"):
        lcp.ppm(np.eye(2), -np.ones(2), nonbasic=[2])


def test_classify():
    z = np.array([1.0, 0.0, 0.0])
    w = np.array([0.0, 2.0, 0.0])
    np.testing.assert_array_equal(lcp.classify(z, w), [lcp.Contact.CLAMPING,
                                                        lcp.Contact.SEPARATING, lcp.Contact.TIED])

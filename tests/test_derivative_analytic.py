"""Analytical derivatives (engine/derivative_analytic.py) against finite differences: whole matrices
against centered transition_fd / inverse_fd, directional derivatives along random directions
against two full steps, both sides of active-set changes, and the features that raise.

Every comparison runs on a converged solve (Newton, tolerance 1e-15) and on states where the
finite differences themselves are reliable: centered differences extrapolated to zero step
(richardson) from eps and from eps / 2 agree (a state whose perturbations cross an active-set
change fails that and is replaced)."""
import pathlib

import numpy as np
import pytest

import dm_control
import engine
from engine import Cone, Integrator, Solver
from engine.derivative_analytic import (inverse_derivatives, smooth_derivatives,
                                       transition_derivatives, unsupported_features)
from engine.derivative_fd import state_diff
from engine.forward import integrate_pos

SUITE = pathlib.Path(dm_control.__file__).parent / "suite"
TOL = 1e-5          # relative error of the analytical matrices (per block, see rel_err)
FD_EPS = 1e-5     # centered: truncation ~1e-10, roundoff ~1e-7 of the largest entry

CHAIN = """
<mujoco>
  <option timestep="0.005" cone="{cone}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body name="a" pos="0 0 1">
      <joint name="j0" axis="0 1 0" range="-30 30" damping="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
      <body name="b" pos="0.3 0 0">
        <joint name="j1" axis="0 1 0" range="-20 20"/>
        <joint name="j1b" axis="1 0 0" range="-20 20" stiffness="2"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
        <body name="c" pos="0.3 0 0">
          <joint name="j2" type="ball" range="0 25" damping="0.1"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
          <site name="tip" pos="0.3 0 0"/>
          <body name="d" pos="0.3 0 0">
            <joint name="j3" type="slide" axis="1 0 0" range="-0.1 0.1"/>
            <geom type="sphere" size="0.05"/>
          </body>
        </body>
      </body>
    </body>
    <body name="e" pos="0.5 0.5 1">
      <joint name="j4" axis="0 0 1" frictionloss="0.05"/>
      <joint name="j5" axis="0 1 0"/>
      <geom type="box" size="0.1 0.05 0.02"/>
      <site name="s2" pos="0.1 0 0" quat="0.9 0.1 0.3 0.2"/>
    </body>
  </worldbody>
  <equality>
    <connect body1="d" body2="e" anchor="0.05 0 0"/>
    <joint joint1="j1b" joint2="j4" polycoef="0.1 0.5 0.3 0.2 0"/>
    <weld site1="tip" site2="s2" torquescale="0.7"/>
  </equality>
  <tendon>
    <fixed name="t" limited="true" range="-0.2 0.2" stiffness="1">
      <joint joint="j0" coef="1"/><joint joint="j1" coef="-0.5"/>
    </fixed>
  </tendon>
  <actuator>
    <motor joint="j0" ctrlrange="-1 1"/>
    <position joint="j1" kp="10" kv="0.5"/>
    <general tendon="t" dyntype="filter" dynprm="0.05" gainprm="3" gaintype="affine"/>
    <general joint="j5" dyntype="integrator" gainprm="2" biastype="affine" biasprm="0 -1 -0.3"/>
  </actuator>
</mujoco>"""

BOX = """
<mujoco>
  <option timestep="0.005" cone="{cone}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 0.1"><freejoint/>
      <geom type="box" size=".2 .15 .1" condim="{condim}" friction="0.6 0.02 0.01"/>
    </body>
  </worldbody>
</mujoco>"""

BALLS = """
<mujoco>
  <option timestep="0.005" cone="{cone}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <geom type="box" pos="1 0 0.2" size=".3 .3 .2" euler="0 10 5"/>
    <body pos="0 0 0.3"><freejoint/><geom type="sphere" size=".1" condim="{condim}"/></body>
    <body pos="1 0 0.55"><freejoint/><geom type="sphere" size=".1" condim="{condim}"/></body>
    <body pos="0 1 0.1"><freejoint/>
      <geom type="capsule" fromto="-0.2 0 0 0.2 0 0" size="0.05" condim="{condim}"/>
      <body pos="0.2 0 0"><joint axis="0 0 1"/>
        <geom type="capsule" fromto="0 0 0 0.0 0.3 0.04" size="0.05" condim="{condim}"/>
      </body>
    </body>
    <body pos="0.1 1.2 0.3"><freejoint/>
      <geom type="capsule" fromto="-0.2 -0.1 0 0.2 0.1 0" size="0.05" condim="{condim}"/>
    </body>
    <body pos="0.15 1.15 0.5"><freejoint/><geom type="sphere" size="0.07" condim="{condim}"/></body>
  </worldbody>
</mujoco>"""


def converged(m):
    m.opt.solver = Solver.NEWTON
    m.opt.iterations = 100
    m.opt.tolerance = 1e-15
    return m


def blocks(nv, na):
    out = [("q", slice(0, nv)), ("v", slice(nv, 2 * nv))]
    if na:
        out.append(("act", slice(2 * nv, 2 * nv + na)))
    return out


def rel_err(ours, ref):
    """max |ours - ref| / max |ref|."""
    if ref.size == 0:
        return 0.0
    return np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-12)


def block_errors(m, A, B, A0, B0):
    """Relative errors of A and B by blocks of rows and columns (q, v, act) x (q, v, act, u),
    each relative to the largest entry of its block of the reference (blocks whose entries are
    all below 1e-9 of the matrix's largest are compared to that instead)."""
    errs = {}
    big = max(np.abs(A0).max(), np.abs(B0).max() if B0.size else 0.0)
    for rn, rs in blocks(m.nv, m.na):
        cols = [(cn, A[rs, cs], A0[rs, cs]) for cn, cs in blocks(m.nv, m.na)]
        cols.append(("u", B[rs], B0[rs]))
        for cn, x, x0 in cols:
            if x0.size:
                scale = max(np.abs(x0).max(), 1e-9 * big)
                errs[rn + cn] = np.abs(x - x0).max() / scale
    return errs


def richardson(fd, eps=FD_EPS):
    """Centered differences fd(e) (a tuple of arrays) extrapolated to e -> 0 from e and e / 2,
    (4 fd(e / 2) - fd(e)) / 3, whose error is of order e^4: MuJoCo's default impedance changes
    within a millimetre of violation (and the humanoid's within 3 mm), where the centered
    difference's own e^2 error reaches 1e-5 at e = 1e-5. Returns the extrapolations from eps
    and from eps / 2."""
    F = [fd(eps / k) for k in (1, 2, 4)]
    return [tuple((4 * b - a) / 3 for a, b in zip(F[k], F[k + 1])) for k in (0, 1)]


def fd_reliable(m, d):
    """Extrapolated centered transition_fd (richardson) from eps and eps / 2 agree to 1e-6: no
    active-set change within the perturbations. Returns the finer one (or None)."""
    coarse, fine = richardson(lambda e: engine.transition_fd(m, d, eps=e, centered=True))
    errs = block_errors(m, *coarse, *fine)
    if max(errs.values()) > 1e-6:
        return None
    return fine


def check_transition(m, d, tol=TOL):
    ref = fd_reliable(m, d)
    if ref is None:
        return False
    A, B = transition_derivatives(m, d)
    errs = block_errors(m, A, B, *ref)
    assert max(errs.values()) < tol, errs
    return True


def random_direction_check(m, d, rng, tol=TOL):
    """A dx + B du against (step(x + e dx, u + e du) - step(x - e dx, u - e du)) / 2e by two
    plain engine.step calls (the state restored between them)."""
    A, B = transition_derivatives(m, d)
    ndx = 2 * m.nv + m.na
    dx = rng.standard_normal(ndx)
    du = rng.standard_normal(m.nu)
    dx /= np.linalg.norm(dx)
    snap = {k: v.copy() for k, v in d._arrays.items()}
    eps = FD_EPS

    def stepped(s):
        for k, v in snap.items():
            d._arrays[k][...] = v
        integrate_pos(m._struct, d.qpos, dx[:m.nv].copy(), s)
        d.qvel[:] += s * dx[m.nv:2 * m.nv]
        d.act[:] += s * dx[2 * m.nv:]
        d.ctrl[:] += s * du
        engine.step(m, d)
        out = np.concatenate([d.qpos, d.qvel, d.act])
        for k, v in snap.items():
            d._arrays[k][...] = v
        return out

    def centered(e):
        out = np.empty(ndx)
        state_diff(m._struct, out, stepped(-e), stepped(e), 2 * e)
        return (out,)

    (fd,), _ = richardson(centered, eps)
    ours = A @ dx + B @ du
    assert rel_err(ours, fd) < tol, rel_err(ours, fd)


def settle(m, d, steps, rng, vel=0.0):
    d.qvel[:] += vel * rng.standard_normal(m.nv)
    engine.step(m, d, steps)


def lying_humanoid(rng, cone=Cone.ELLIPTIC):
    m = converged(engine.load_model(str(SUITE / "humanoid.xml")))
    m.opt.cone = cone
    d = engine.make_data(m)
    d.qpos[2] = 0.15
    d.qpos[3:7] = [np.cos(0.75), 0.0, np.sin(0.75), 0.0]
    d.qpos[7:] += 0.1 * rng.standard_normal(m.nq - 7)
    engine.step(m, d, 150)
    return m, d


# ------------------------------------------------------------------------------------------------
# whole matrices
# ------------------------------------------------------------------------------------------------
def run_states(m, d, rng, nstates, between, vel, ctrl, check=check_transition):
    """check on nstates reliable states reached by stepping; at least nstates must be found."""
    done = 0
    for _ in range(6 * nstates):
        if m.nu:
            d.ctrl[:] = ctrl * rng.standard_normal(m.nu)
        settle(m, d, between, rng, vel)
        if check(m, d):
            done += 1
            if done == nstates:
                return
    pytest.fail(f"only {done} of {nstates} states away from active-set changes")


@pytest.mark.parametrize("cone", [Cone.ELLIPTIC, Cone.PYRAMIDAL])
def test_humanoid_lying(cone):
    rng = np.random.default_rng(1)
    m, d = lying_humanoid(rng, cone)
    assert d.ncon >= 8
    run_states(m, d, rng, 2, 20, 0.3, 0.3)


def test_humanoid_standing():
    """Feet on the floor (sticking), joints at their limits, springs and damping."""
    rng = np.random.default_rng(2)
    m = converged(engine.load_model(str(SUITE / "humanoid.xml")))
    d = engine.make_data(m)
    d.qpos[2] = 1.28
    engine.step(m, d, 30)
    assert d.ncon >= 2
    run_states(m, d, rng, 2, 5, 0.1, 0.2)


@pytest.mark.parametrize("cone", [Cone.ELLIPTIC, Cone.PYRAMIDAL])
@pytest.mark.parametrize("condim", [3, 4, 6])
def test_box_sliding(cone, condim):
    """A box pushed along the floor: sliding contacts (and sticking at low speed)."""
    rng = np.random.default_rng(3)
    m = converged(engine.load_model_from_string(BOX.format(cone=cone.name.lower(),
                                                           condim=condim)))
    d = engine.make_data(m)
    engine.step(m, d, 20)
    d.qvel[0] = 1.0
    d.qvel[5] = 0.5
    run_states(m, d, rng, 2, 4, 0.0, 0.0)


@pytest.mark.parametrize("cone", [Cone.ELLIPTIC, Cone.PYRAMIDAL])
def test_balls_bouncing(cone):
    """Spheres and capsules dropped on the floor, on a tilted box and on each other."""
    rng = np.random.default_rng(4)
    m = converged(engine.load_model_from_string(BALLS.format(cone=cone.name.lower(), condim=3)))
    d = engine.make_data(m)
    settle(m, d, 40, rng, 0.5)
    assert d.ncon >= 4
    run_states(m, d, rng, 2, 10, 0.3, 0.0)


@pytest.mark.parametrize("cone", [Cone.ELLIPTIC, Cone.PYRAMIDAL])
def test_chain_limits_equalities_actuators(cone):
    """Joint, ball-cone and tendon limits, connect, weld (sites, torquescale) and polynomial
    joint equalities, friction loss, springs, damping, activations, affine gains and biases."""
    rng = np.random.default_rng(5)
    m = converged(engine.load_model_from_string(CHAIN.format(cone=cone.name.lower())))
    d = engine.make_data(m)
    d.qpos[:] += 0.3 * rng.standard_normal(m.nq)
    d.qpos[3:7] /= np.linalg.norm(d.qpos[3:7])
    settle(m, d, 40, rng, 1.0)
    types = set(d.efc_type[:d.nefc])
    assert {0, 1, 3} <= types, types
    run_states(m, d, rng, 2, 10, 0.5, 0.5)


def test_impedance_within_its_width():
    """Limits, connect, weld and joint equalities whose impedance changes over their whole
    violation (wide solimp, damping ratios other than 1): the rows' d'(x) terms, a connect's
    and a weld's through the norm of their violations (contacts inside their width: the
    humanoid's, solimp width 3 mm)."""
    rng = np.random.default_rng(11)
    xml = CHAIN.format(cone="elliptic").replace("<worldbody>", """<default>
      <joint solimplimit="0.3 0.95 2 0.4 3" solreflimit="0.03 0.7"/>
      <geom solimp="0.6 0.99 0.2 0.6 1.5" solref="0.02 1.3"/>
      <equality solimp="0.5 0.97 1 0.5 2" solref="0.04 0.8"/></default><worldbody>""")
    m = converged(engine.load_model_from_string(xml))
    d = engine.make_data(m)
    d.qpos[:] += 0.1 * rng.standard_normal(m.nq)
    d.qpos[3:7] /= np.linalg.norm(d.qpos[3:7])
    settle(m, d, 40, rng, 1.0)
    n = d.nefc
    inside = d.efc_imp[:n, 1] != 0
    assert {0, 3} <= set(d.efc_type[:n][inside]), d.efc_type[:n][inside]
    run_states(m, d, rng, 2, 10, 0.5, 0.5)


def test_explicit_integrator():
    rng = np.random.default_rng(6)
    m = converged(engine.load_model_from_string(CHAIN.format(cone="elliptic")))
    m.opt.integrator = Integrator.EXPLICIT
    d = engine.make_data(m)
    settle(m, d, 30, rng, 0.5)
    run_states(m, d, rng, 1, 5, 0.3, 0.3)


# ------------------------------------------------------------------------------------------------
# directional derivatives, inverse dynamics, smooth dynamics
# ------------------------------------------------------------------------------------------------
def test_random_directions():
    rng = np.random.default_rng(7)
    m, d = lying_humanoid(rng)
    done = 0
    for _ in range(10):
        d.ctrl[:] = 0.3 * rng.standard_normal(m.nu)
        settle(m, d, 10, rng, 0.2)
        if fd_reliable(m, d) is None:
            continue
        random_direction_check(m, d, rng)
        done += 1
        if done == 3:
            break
    assert done == 3


def test_inverse_derivatives_against_inverse_fd():
    rng = np.random.default_rng(8)
    m, d = lying_humanoid(rng)
    done = 0
    for _ in range(10):
        settle(m, d, 10, rng, 0.3)
        engine.forward(m, d)
        for actuation in (False, True):
            F1, F2 = richardson(lambda e: engine.inverse_fd(m, d, eps=e, centered=True,
                                                            actuation=actuation))
            if max(rel_err(a, b) for a, b in zip(F1, F2)) > 1e-6:
                break
            ours = inverse_derivatives(m, d, actuation=actuation)
            for name, x, y in zip(("DfDq", "DfDv", "DfDa"), ours, F2):
                assert rel_err(x, y) < TOL, (name, rel_err(x, y))
        else:
            done += 1
        if done == 2:
            break
    assert done == 2


def test_smooth_derivatives():
    """d qacc_smooth / d (qpos, qvel, act, ctrl) and d act_dot / d (act, ctrl) against centered
    differences of forward's qacc_smooth and act_dot."""
    rng = np.random.default_rng(9)
    m = engine.load_model_from_string(CHAIN.format(cone="elliptic"))
    d = engine.make_data(m)
    settle(m, d, 20, rng, 1.0)
    d.ctrl[:] = 0.3 * rng.standard_normal(m.nu)
    out = smooth_derivatives(m, d)
    snap = {k: v.copy() for k, v in d._arrays.items()}

    def evaluate(name, i, s):
        for k, v in snap.items():
            d._arrays[k][...] = v
        if name == "qpos":
            dpos = np.zeros(m.nv)
            dpos[i] = 1.0
            integrate_pos(m._struct, d.qpos, dpos, s)
        else:
            getattr(d, name)[i] += s
        engine.forward(m, d)
        return d.qacc_smooth.copy(), d.act_dot.copy()

    eps = 1e-6
    for name, n, qacc_d, act_d in (("qpos", m.nv, out.qacc_qpos, None),
                                   ("qvel", m.nv, out.qacc_qvel, None),
                                   ("act", m.na, out.qacc_act, out.act_dot_act),
                                   ("ctrl", m.nu, out.qacc_ctrl, out.act_dot_ctrl)):
        for i in range(n):
            (ap, dp), (am, dm) = evaluate(name, i, eps), evaluate(name, i, -eps)
            col = (ap - am) / (2 * eps)
            assert rel_err(qacc_d[:, i], col) < TOL or np.abs(qacc_d[:, i] - col).max() < 1e-7
            if act_d is not None:
                np.testing.assert_allclose(act_d[:, i], (dp - dm) / (2 * eps), atol=1e-7)
    for k, v in snap.items():
        d._arrays[k][...] = v


# ------------------------------------------------------------------------------------------------
# active-set changes
# ------------------------------------------------------------------------------------------------
PUSHED = """
<mujoco>
  <option timestep="0.005" gravity="0 0 -10" cone="{cone}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" friction="0.5"/>
    <body pos="0 0 0.1">
      <joint name="x" type="slide" axis="1 0 0"/>
      <joint name="z" type="slide" axis="0 0 1"/>
      <geom type="box" size=".1 .1 .1" mass="1" friction="0.5"/>
    </body>
  </worldbody>
  <actuator><motor joint="x"/><motor joint="z"/></actuator>
</mujoco>"""


def switch_point(m, d, k, lo, hi, changed):
    """The control value of actuator k where changed(d) flips (bisection, to 1e-10)."""
    snap = {n: v.copy() for n, v in d._arrays.items()}

    def flips(u):
        for n, v in snap.items():
            d._arrays[n][...] = v
        d.ctrl[k] = u
        engine.forward(m, d)
        out = changed(d)
        for n, v in snap.items():
            d._arrays[n][...] = v
        return out

    assert not flips(lo) and flips(hi)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if flips(mid) else (mid, hi)
    return 0.5 * (lo + hi)


def one_sided(m, d, k, u, eps, side):
    """B[:, k] by a one-sided difference from u towards side (+1 / -1) with plain steps."""
    snap = {n: v.copy() for n, v in d._arrays.items()}
    outs = []
    for s in (0.0, side * eps):
        for n, v in snap.items():
            d._arrays[n][...] = v
        d.ctrl[k] = u + s
        engine.step(m, d)
        outs.append(np.concatenate([d.qpos, d.qvel]))
    for n, v in snap.items():
        d._arrays[n][...] = v
    col = np.empty(2 * m.nv)
    state_diff(m._struct, col, outs[0], outs[1], side * eps)
    return col


def analytic_column(m, d, k, u):
    d.ctrl[k] = u
    return transition_derivatives(m, d)[1][:, k]


@pytest.mark.parametrize("case", ["slip", "lift"])
@pytest.mark.parametrize("cone", [Cone.ELLIPTIC, Cone.PYRAMIDAL])
def test_active_set_change(case, cone):
    """A box at rest on the floor, pushed sideways (it starts to slide when the push reaches
    the friction the cone allows) or pulled up (its contacts open when the pull exceeds its
    weight). On each side of the switch the analytical derivative is the one-sided finite
    difference of its own piece; the two pieces differ; a centered difference whose step
    crosses the switch lies between them (the derivative of neither)."""
    m = converged(engine.load_model_from_string(PUSHED.format(cone=cone.name.lower())))
    d = engine.make_data(m)
    engine.step(m, d, 100)                          # at rest on its four corners
    d.qvel[:] = 0.0
    d.qacc_warmstart[:] = 0.0
    if case == "slip":
        k, lo, hi = 0, 1.0, 10.0

        def changed(d):                             # the friction reaches the cone's surface

            adr = d.contact_efc_address[0]
            if cone == Cone.PYRAMIDAL:
                return min(d.efc_force[adr:adr + 4]) <= 0.0
            f = d.efc_force[adr:adr + 3]
            return np.hypot(f[1], f[2]) >= 0.5 * f[0] * (1 - 1e-9)
    else:
        k, lo, hi = 1, 1.0, 20.0

        def changed(d):
            return all(d.efc_force[d.contact_efc_address[c]] <= 0.0 for c in range(d.ncon))
    u_star = switch_point(m, d, k, lo, hi, changed)
    gap = 1e-4 * u_star
    below = analytic_column(m, d, k, u_star - gap)
    above = analytic_column(m, d, k, u_star + gap)
    assert rel_err(above, below) > 1e-2                # two different pieces
    eps = 1e-3 * gap                                   # stays on its side
    np.testing.assert_allclose(below, one_sided(m, d, k, u_star - gap, eps, -1.0),
                               rtol=0, atol=TOL * np.abs(below).max())
    np.testing.assert_allclose(above, one_sided(m, d, k, u_star + gap, eps, +1.0),
                               rtol=0, atol=TOL * np.abs(above).max())
    # a centered difference across the switch: between the two pieces, equal to neither
    across = 0.5 * (one_sided(m, d, k, u_star - gap, 3 * gap, +1.0)
                    + one_sided(m, d, k, u_star - gap, 3 * gap, -1.0))
    lo_b, hi_b = np.minimum(below, above), np.maximum(below, above)
    span = np.abs(above - below).max()
    assert np.all(across >= lo_b - 1e-3 * span) and np.all(across <= hi_b + 1e-3 * span)
    assert rel_err(across, below) > 1e-3 and rel_err(across, above) > 1e-3


# ------------------------------------------------------------------------------------------------
# what is not covered raises
# ------------------------------------------------------------------------------------------------
def test_unsupported_features_raise():
    m = engine.load_model_from_string(CHAIN.format(cone="elliptic"))
    d = engine.make_data(m)
    m.opt.integrator = Integrator.RK4
    with pytest.raises(NotImplementedError, match="RK4"):
        transition_derivatives(m, d)
    assert inverse_derivatives(m, d)[0].shape == (m.nv, m.nv)    # the inverse does not step
    m.opt.integrator = Integrator.SEMIIMPLICIT
    m.opt.viscosity = 0.1
    assert any("fluid" in p for p in unsupported_features(m))
    with pytest.raises(NotImplementedError, match="fluid"):
        transition_derivatives(m, d)


def test_unsupported_pair_raises():
    m = engine.load_model_from_string("""
    <mujoco><worldbody><geom type="plane" size="1 1 1"/>
      <body pos="0 0 0.09"><freejoint/><geom type="cylinder" size=".1 .1"/></body>
    </worldbody></mujoco>""")
    d = engine.make_data(m)
    engine.forward(m, d)          # the disk parallel to the plane (tilted, it is supported)
    assert d.ncon > 0
    with pytest.raises(NotImplementedError, match="plane-cylinder"):
        transition_derivatives(m, d)
    A, _ = engine.transition_fd(m, d)
    assert np.isfinite(A).all()


@pytest.mark.parametrize("cone", [Cone.ELLIPTIC, Cone.PYRAMIDAL])
def test_box_on_box(cone):
    """A turned box settling on a smaller one that it overhangs: box-box contacts of the face
    clipping (the lower box's corners in the upper face, its edges crossing the upper face's
    sides, the upper corners over the lower face: Nimble's vertex-face and edge-edge cases)."""
    rng = np.random.default_rng(5)
    m = converged(engine.load_model_from_string(f"""
    <mujoco><option cone="{cone.name.lower()}"/><worldbody>
      <geom type="box" pos="0 0 0.1" size=".15 .15 .1"/>
      <body pos="0.2 -0.02 0.245" euler="1 0.5 45"><freejoint/>
        <geom type="box" size=".25 .25 .05"/></body>
    </worldbody></mujoco>"""))
    d = engine.make_data(m)
    engine.step(m, d, 1)
    assert d.ncon >= 3
    run_states(m, d, rng, 2, 1, 0.0, 0.0)

"""The hard-contact LCP step (engine.hard_contact) against textbook physics and MuJoCo, and its
Jacobians (engine.hard_contact_grad) against centered differences of the step itself."""
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from engine import hard_contact as hc
from engine import hard_contact_grad as hg
from engine.enums import Warning

G = 9.81

BOX = """<mujoco><option timestep="0.01"/>
<worldbody><geom type="plane" size="5 5 .1" friction="{mu}"/>
<body pos="0 0 0.1"><freejoint/><geom type="box" size=".1 .1 .1" mass="1" friction="{mu}"/></body>
</worldbody></mujoco>"""

PENDULUM = """<mujoco><option timestep="0.01"/>
<worldbody><geom type="box" pos="0.3 0 -0.5" size="0.05 0.5 0.5" friction="0.3"/>
<body><joint name="hinge" type="hinge" axis="0 1 0" range="-60 60" limited="true"/>
<geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02" mass="0.1" contype="0" conaffinity="0"/>
<geom type="sphere" pos="0 0 -0.5" size="0.05" mass="1" friction="0.3"/></body></worldbody>
<actuator><motor joint="hinge" gear="1"/></actuator></mujoco>"""

ARM = """<mujoco><option timestep="0.005"/>
<worldbody><geom type="plane" size="5 5 .1" friction="0.6"/>
<body pos="0 0 0.05"><joint name="yaw" type="hinge" axis="0 0 1" damping="0.1"/>
<geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5" contype="0" conaffinity="0"/>
<body pos="0.3 0 0"><joint name="elbow" type="hinge" axis="0 0 1"/>
<geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.02" mass="0.3" contype="0" conaffinity="0"/>
<geom type="sphere" pos="0.25 0 0" size="0.03" mass="0.1" friction="0.6"/></body></body>
<body pos="0.55 0.12 0.05"><freejoint/><geom type="box" size=".05 .05 .05" mass="0.4" friction="0.6"/></body>
</worldbody>
<actuator><motor joint="yaw" gear="1"/><motor joint="elbow" gear="1"/></actuator></mujoco>"""


def model(xml, **kw):
    m = engine.load_model_from_string(xml.format(**kw) if kw else xml)
    return m, engine.make_data(m)


def steps(m, d, n, opt=None):
    state = {}
    return [hc.lcp_step(m, d, opt, state) for _ in range(n)]


def assert_complementary(info, tol=1e-9):
    scale = 1.0 + np.abs(info.w).max(initial=0.0) + np.abs(info.z).max(initial=0.0)
    assert info.z.min(initial=0.0) >= -tol * scale
    assert info.w.min(initial=0.0) >= -tol * scale
    assert np.abs(info.z * info.w).max(initial=0.0) <= tol * scale


# ------------------------------------------------------------------------------------------------
# the step
# ------------------------------------------------------------------------------------------------
def test_box_at_rest_does_not_creep():
    """Without a margin in the model: the contacts settle at distance 0 (to rounding) and stay
    in the LCP through the step's own detection margin."""
    m, d = model(BOX, mu=0.5)
    steps(m, d, 200)                        # landing, penetration removed at (1 - erp)^n
    rest = d.qpos.copy()
    infos = steps(m, d, 200)
    p = infos[-1].problem
    assert d.ncon == 4
    vn = p.J[:4] @ d.qvel                   # normal velocity of the corners after the step
    assert np.abs(vn).max() < 1e-9
    fn = infos[-1].z[:4]
    assert fn.min() >= 0.0
    assert fn.sum() / m.opt.timestep == pytest.approx(G, rel=1e-9)     # impulses carry the weight
    assert abs(d.qpos[2] - 0.1) < 1e-9 and np.abs(d.qpos - rest).max() < 1e-12     # no creep
    assert np.abs(d.qvel).max() < 1e-12
    for info in infos:
        assert_complementary(info)
    assert sum(i.source == "warm" for i in infos) >= 195    # the warm start skips Lemke


@pytest.mark.parametrize("mu", [0.2, 0.5])
def test_sliding_box_decelerates_at_mu_g(mu):
    m, d = model(BOX, mu=mu)
    steps(m, d, 300)                        # the landing's penetration recovered (erp^n)
    d.qvel[0] = 3.0
    h = m.opt.timestep
    for info in steps(m, d, 10):
        assert_complementary(info)
    # 10 steps of 2 contacts' worth of Coulomb friction: v = 3 - 10 h mu g
    assert d.qvel[0] == pytest.approx(3.0 - 10 * h * mu * G, abs=1e-9)
    assert abs(d.qvel[1]) < 1e-9 and abs(d.qvel[2]) < 1e-9


def test_box_on_slope_sticks_below_atan_mu_and_slides_above():
    mu = 0.5
    for tilt, sticks in ((0.9 * np.arctan(mu), True), (1.1 * np.arctan(mu), False)):
        m, d = model(BOX, mu=mu)
        m.opt.gravity[:] = G * np.array([np.sin(tilt), 0.0, -np.cos(tilt)])
        steps(m, d, 300)
        if sticks:
            assert np.abs(d.qvel).max() < 1e-9
        else:
            v0 = d.qvel[0]
            steps(m, d, 10)
            acc = (d.qvel[0] - v0) / (10 * m.opt.timestep)
            assert acc == pytest.approx(G * (np.sin(tilt) - mu * np.cos(tilt)), rel=1e-9)


def test_restitution_bounces_to_e_squared_of_the_height():
    xml = """<mujoco><option timestep="0.0005"/><worldbody><geom type="plane" size="5 5 .1"/>
    <body pos="0 0 1"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body></worldbody></mujoco>"""
    e = 0.7
    m, d = model(xml)
    opt = hc.HardContactOptions(restitution=e)
    state, top, falling = {}, 0.0, True
    for _ in range(4000):
        hc.lcp_step(m, d, opt, state)
        if falling and d.qvel[2] > 0:
            falling = False
        if not falling:
            top = max(top, d.qpos[2])
            if d.qvel[2] < 0:
                break
    drop = 1.0 - 0.1
    assert (top - 0.1) / drop == pytest.approx(e ** 2, rel=0.02)    # discrete time: a few h


def test_pendulum_hits_wall_and_limit_rows_are_complementary():
    m, d = model(PENDULUM)
    d.qpos[0] = -0.3
    d.qvel[0] = -3.0
    infos = steps(m, d, 60)
    hit = [i for i in infos if i.problem.ncon > 0]
    assert hit, "the pendulum should reach the wall"
    for info in infos:
        assert_complementary(info)
    # the sphere never goes through the wall: the contact distance stays above -0.01
    assert -0.5 * np.sin(d.qpos[0]) + 0.05 < 0.25 + 0.02


def test_contact_free_motion_matches_mujoco_bit_for_bit():
    """No contacts: the LCP step is the semi-implicit Euler step of MuJoCo."""
    xml = ARM.replace('<geom type="plane" size="5 5 .1" friction="0.6"/>', "")
    mj = mujoco.MjModel.from_xml_string(xml)
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    md = mujoco.MjData(mj)
    m, d = model(xml)
    m.opt.disableflags |= int(engine.DisableBit.CONTACT)
    rng = np.random.default_rng(1)
    md.qvel[:] = d.qvel[:] = rng.normal(size=m.nv)
    md.ctrl[:] = d.ctrl[:] = rng.normal(size=m.nu)
    for _ in range(20):
        mujoco.mj_step(mj, md)
        hc.lcp_step(m, d)
        np.testing.assert_allclose(d.qvel, md.qvel, rtol=0, atol=1e-12)
        np.testing.assert_allclose(d.qpos, md.qpos, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------------------------
# Jacobians against centered differences of the step
# ------------------------------------------------------------------------------------------------
def _settled(xml, setup, nsettle=3, **kw):
    m, d = model(xml, **kw)
    setup(m, d)
    state = {}
    for _ in range(nsettle):
        hc.lcp_step(m, d, None, state)
    return m, d, state["clamping"]


def _box_sliding(m, d):
    d.qvel[:3] = (1.5, 0.4, 0.0)


def _box_resting(m, d):
    d.qpos[2] = 0.0999


def _box_touching(m, d):
    d.qpos[2] = 0.1                     # the corners at distance exactly 0


def _pendulum_pressing(m, d):
    d.qpos[0] = -np.arcsin((0.25 - 0.05 + 0.002) / 0.5)     # the sphere 2 mm into the wall
    d.ctrl[0] = -4.0                    # pushes the sphere into the wall


def _arm_pushing(m, d):
    d.ctrl[:] = (0.8, 0.1)
    d.qvel[:2] = (1.0, 0.0)


CASES = {
    "box sliding": (BOX, _box_sliding, {"mu": 0.5}),
    "box resting": (BOX, _box_resting, {"mu": 0.5}),
    "box touching": (BOX, _box_touching, {"mu": 0.5}),
    "pendulum on wall": (PENDULUM, _pendulum_pressing, {}),
    "arm pushing box": (ARM, _arm_pushing, {}),
}


@pytest.mark.parametrize("case", CASES)
def test_jacobians_match_centered_differences(case):
    xml, setup, kw = CASES[case]
    m, d, warm = _settled(xml, setup, **kw)
    an = hg.step_derivatives(m, d, warm=warm)
    fd = hg.step_fd(m, d, warm=warm)
    assert d.ncon > 0 and len(an.clamping) > 0          # a state with contact forces
    for name in ("A", "B", "dvdtau"):
        a, f = getattr(an, name), getattr(fd, name)
        scale = 1.0 + np.abs(f).max(initial=0.0)
        np.testing.assert_allclose(a, f, rtol=0, atol=1e-5 * scale, err_msg=f"{case}: {name}")


def test_state_is_left_unchanged_by_the_derivatives():
    m, d, warm = _settled(ARM, _arm_pushing)
    before = (d.qpos.copy(), d.qvel.copy(), d.ctrl.copy())
    hg.step_derivatives(m, d, warm=warm)
    hg.step_fd(m, d, warm=warm)
    for a, b in zip(before, (d.qpos, d.qvel, d.ctrl)):
        np.testing.assert_array_equal(a, b)


def test_complementarity_aware_gradient_lifts_a_resting_body():
    """The paper's drone: a body resting on the ground with a thrust below its weight. The exact
    gradient of its upward velocity with respect to the thrust is zero (the contact clamps);
    the complementarity-aware one is h / m."""
    xml = """<mujoco><option timestep="0.01"/><worldbody><geom type="plane" size="5 5 .1"/>
    <body pos="0 0 0.05"><joint name="z" type="slide" axis="0 0 1"/>
    <geom type="box" size=".1 .1 .05" mass="2"/></body></worldbody>
    <actuator><motor joint="z" gear="1"/></actuator></mujoco>"""
    m, d = model(xml)
    d.ctrl[0] = 5.0
    steps(m, d, 5)
    g = np.array([-1.0])                    # loss = -v'_z: rise
    jac = hg.step_derivatives(m, d)
    assert np.abs(jac.dvdu).max() < 1e-12
    gv, gu, gt, which = hg.complementarity_aware_vjp(m, d, g)
    assert which == "aware"
    assert gu[0] == pytest.approx(-m.opt.timestep / 2.0, rel=1e-9)


def test_derivatives_at_a_resting_contact_at_distance_zero():
    """A box settled on the ground (distance 0 to rounding, no margin in the model): the contact
    set is the same on both sides of eps, so the derivatives exist and match the differences."""
    m, d = model(BOX, mu=0.5)
    state = {}
    for _ in range(300):
        hc.lcp_step(m, d, None, state)
    assert np.abs(d.contact_dist[:d.ncon]).max() < 1e-15
    an = hg.step_derivatives(m, d, warm=state["clamping"])
    fd = hg.step_fd(m, d, warm=state["clamping"])
    for name in ("A", "B", "dvdtau"):
        a, f = getattr(an, name), getattr(fd, name)
        np.testing.assert_allclose(a, f, rtol=0, atol=1e-5 * (1.0 + np.abs(f).max(initial=0.0)))


# ------------------------------------------------------------------------------------------------
# Solver.LCP inside engine.step and engine.forward
# ------------------------------------------------------------------------------------------------
TOUCH_BOX = """<mujoco><option timestep="0.01" solver="LCP" cone="{cone}"/>
<worldbody><geom type="plane" size="5 5 .1" friction="0.5"/>
<body pos="0 0 0.1"><freejoint/><geom type="box" size=".1 .1 .1" mass="1" friction="0.5"/>
<site name="bottom" pos="0 0 -0.1" type="box" size=".11 .11 .02"/></body></worldbody>
<sensor><touch site="bottom"/></sensor></mujoco>"""


def _row_forces(m, d):
    """J' efc_force through the engine's row helper (qfrc of the rows as a soft solver has it)."""
    from engine.constraint import row_axpy
    out = np.zeros(m.nv)
    for i in range(d.nefc):
        row_axpy(d._struct, i, d.efc_J, d.efc_force[i], out)
    return out


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_engine_step_with_solver_lcp_fills_the_constraint_rows(cone):
    m, d = model(TOUCH_BOX, cone=cone)
    assert m.opt.solver == engine.Solver.LCP
    m2, d2 = model(TOUCH_BOX, cone=cone)
    engine.step(m, d, 150)
    steps(m2, d2, 150)                      # the same step through lcp_step
    np.testing.assert_array_equal(d.qpos, d2.qpos)
    d.qvel[:2] = (0.8, 0.3)                 # sliding: friction at mu fn along the slip
    engine.step(m, d)
    assert d.ncon == 4 and d.nefc > 0
    np.testing.assert_allclose(_row_forces(m, d), d.qfrc_constraint, rtol=0, atol=1e-10)
    frame = np.array([engine.contact_force(m, d, i) for i in range(d.ncon)])
    assert frame[:, 0].min() >= 0.0
    # the rows carry the weight and the touch sensor reads it
    assert d.qfrc_constraint[2] == pytest.approx(G, rel=1e-9)
    assert frame[:, 0].sum() == pytest.approx(G, rel=1e-9)
    assert d.sensordata[0] == pytest.approx(G, rel=1e-9)
    assert np.abs(frame[:, 1:3]).sum(axis=1).max() <= 0.5 * frame[:, 0].max() * (1 + 1e-9)
    # qacc of the step is the velocity change
    v0 = d.qvel.copy()
    engine.forward(m, d)
    qacc = d.qacc.copy()
    engine.step(m, d)
    np.testing.assert_allclose(d.qvel, v0 + m.opt.timestep * qacc, rtol=0, atol=1e-12)


def test_solver_lcp_counts_and_recovers_from_bad_values():
    """As the soft solvers' step: a NaN qpos is counted once and the state reset; a NaN applied
    force (a non-finite free velocity) counts BADQACC and resets; the step goes on afterwards.
    engine.forward with a NaN applied force counts BADQACC and leaves qacc NaN."""
    m, d = model(TOUCH_BOX, cone="elliptic")
    engine.step(m, d, 20)
    d.qpos[0] = np.nan
    engine.step(m, d, 2)
    assert d.warning[Warning.BADQPOS] == 1 and np.isfinite(d.qpos).all()
    assert d.time == pytest.approx(2 * m.opt.timestep)       # reset, then two steps
    d.qfrc_applied[2] = np.nan
    engine.forward(m, d)
    assert d.warning[Warning.BADQACC] == 1 and np.isnan(d.qacc).all()
    engine.step(m, d)
    assert d.warning[Warning.BADQACC] == 2 and np.isfinite(d.qpos).all()
    assert not d.qfrc_applied.any()                           # the reset cleared it
    engine.step(m, d, 50)
    assert np.isfinite(d.qvel).all() and d.ncon == 4


def test_solver_lcp_counts_an_lcp_without_solution_and_recovers():
    """The jumping worm with a timestep of 1e300: the joints' damping, implicit in the step's
    inertia, leaves J M^-1 J' ~ 0, and no impulse stops the contacts (Lemke's method ends on a
    ray, also with constraint force mixing). engine.step counts BADQACC and resets the state,
    as the soft solvers do with a bad acceleration; engine.forward leaves qacc NaN; the direct
    solve still raises."""
    path = pathlib.Path(__file__).resolve().parents[1] / "assets" / "nimble_jumpworm.xml"
    xml = path.read_text().replace('timestep="0.01"', 'timestep="1e300"')
    m = engine.load_model_from_string(xml)
    assert m.opt.timestep == 1e300 and m.opt.solver == engine.Solver.LCP
    d = engine.make_data(m)
    p = hc.assemble(m, d, hc.options(m))
    with pytest.raises(hc.LCPFailure, match="Lemke's method failed"):
        hc.solve_lcp(p, hc.options(m))
    engine.forward(m, d)
    assert d.warning[Warning.BADQACC] == 1 and np.isnan(d.qacc).all()
    engine.step(m, d, 3)
    assert d.warning[Warning.BADQACC] == 4 and d.time == 0.0
    np.testing.assert_array_equal(d.qpos, m.qpos0)           # reset at each step
    m.opt.timestep = 0.002                                   # a usable step: it goes on
    engine.step(m, d, 10)
    assert d.warning[Warning.BADQACC] == 4 and d.time == pytest.approx(0.02)
    assert np.isfinite(d.qacc).all() and d.ncon > 0


def test_solver_lcp_records_and_refuses_what_it_does_not_model(tmp_path):
    m, d = model(TOUCH_BOX, cone="elliptic")
    path = tmp_path / "box.traj"
    with engine.Recorder(m, str(path), d=d) as rec:
        for _ in range(20):
            engine.step(m, d)
            rec.record(d)
    traj = engine.load_trajectory(str(path))
    assert len(traj) >= 20
    assert np.abs(traj.efc_force).max() > 0.0          # the recording sees the contact forces
    with pytest.raises(Exception):
        mujoco.MjModel.from_xml_string(TOUCH_BOX.format(cone="elliptic"))   # our extension
    xml = """<mujoco><option solver="LCP"/><worldbody><body><joint type="slide" frictionloss="1"/>
    <geom size=".1"/></body></worldbody></mujoco>"""
    m, d = model(xml)
    with pytest.raises(NotImplementedError, match="friction loss"):
        engine.step(m, d)


# ------------------------------------------------------------------------------------------------
# trajectory optimisation (examples/hard_contact_trajopt.py)
# ------------------------------------------------------------------------------------------------
def _trajopt():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "hard_contact_trajopt.py"
    spec = importlib.util.spec_from_file_location("hard_contact_trajopt", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _loss_fd(ex, m, task, U, t, k, eps=1e-6):
    Up, Um = U.copy(), U.copy()
    Up[t, k] += eps
    Um[t, k] -= eps
    return (ex.rollout_loss(m, task, Up) - ex.rollout_loss(m, task, Um)) / (2 * eps)


def test_shooting_gradient_matches_differences_of_the_loss():
    """The backpropagated gradient of the drone's loss against centered differences of the
    rolled-out loss, at thrusts that lift it off (no contact-mode change within eps)."""
    ex = _trajopt()
    task = ex.Task(ex.DRONE, 8, ex._drone_loss(0.5))
    m = engine.load_model(str(task.path))
    U = np.full((task.T, 1), 15.0)
    loss, grad = ex.loss_and_grad(m, task, U, aware=False)
    assert loss == pytest.approx(ex.rollout_loss(m, task, U), rel=1e-12)
    for t in range(task.T):
        assert grad[t, 0] == pytest.approx(_loss_fd(ex, m, task, U, t, 0), rel=1e-5, abs=1e-9)


def test_drone_takes_off_with_complementarity_aware_gradients_only():
    """Fig. 8 of the paper with scipy's L-BFGS-B: from zero thrust the exact gradient is zero and
    the optimiser stops at the start; the complementarity-aware one brings the loss down."""
    ex = _trajopt()
    task = ex.tasks()["drone"]
    m = engine.load_model(str(task.path))
    _, exact = ex.optimise(m, task, aware=False, maxiter=20)
    _, aware = ex.optimise(m, task, aware=True, maxiter=20)
    exact, aware = np.array(exact)[:, 1], np.array(aware)[:, 1]
    start = 0.3 ** 2                        # qpos: the rise above the resting height
    assert exact[0] == pytest.approx(start) and min(exact) == pytest.approx(start, rel=1e-9)
    assert aware[0] == pytest.approx(start)
    assert min(aware) < 1e-3 * start


def test_catapult_shooting_gradient_is_a_descent_direction():
    """The catapult's swing from its initial controls (the bat pushing the ball): along the
    backpropagated gradient, the centered difference of the rolled-out loss is what the gradient
    predicts, |g|^2, to 1 % (measured: 0.1 %). Entrywise comparisons with differences of the rollout are not made: the
    ball rests on the ground at distance 0 to rounding, the kink of the LCP's offset b(dist)
    (docs/nimble.md), where the rollout has no derivative; single steps are compared in
    test_scene_jacobians_match_centered_differences."""
    ex = _trajopt()
    task = ex.tasks()["catapult"]
    task.T = 10
    m = engine.load_model(str(task.path))
    U = task.initial(m.nu)
    loss, grad = ex.loss_and_grad(m, task, U)
    assert np.abs(grad).max() > 1e-3
    step = 1e-5 / np.abs(grad).max()
    slope = (ex.rollout_loss(m, task, U + step * grad)
             - ex.rollout_loss(m, task, U - step * grad)) / (2 * step)
    assert slope == pytest.approx(np.sum(grad ** 2), rel=0.01)


def test_jumpworm_needs_complementarity_aware_gradients_to_jump():
    """Lying on the ground with its motors off, the worm's contacts clamp: the exact gradient of
    its head's height with respect to the controls is zero, the complementarity-aware one is not,
    and a few L-BFGS-B iterations with it lift the head."""
    ex = _trajopt()
    task = ex.tasks()["jumpworm"]
    task.T = 10
    m = engine.load_model(str(task.path))
    U = task.initial(m.nu)
    _, exact = ex.loss_and_grad(m, task, U, aware=False)
    _, aware = ex.loss_and_grad(m, task, U, aware=True)
    assert np.abs(exact).max() < 1e-15                     # zero to rounding
    assert np.abs(aware).max() > 1e-3
    _, hist = ex.optimise(m, task, maxiter=3)
    assert hist[0][1] == pytest.approx(0.0, abs=1e-12)
    assert min(h[1] for h in hist) < -0.01                  # the head 1 cm up at step T


def test_multiple_shooting_piece_jacobians_match_differences():
    """The Jacobians of a piece's end state with respect to its controls and its start state
    (backpropagated row by row) against centered differences of the rolled-out piece, on the
    drone in flight (no contact-mode change within eps)."""
    ex = _trajopt()
    m = engine.load_model(str(ex.DRONE))
    U = np.full((5, 1), 15.0)
    x = ex._roll(m, ex._initial_state(m), U)           # lifted off
    U = U + np.linspace(0.0, 1.0, 5)[:, None]
    end, dU, dx = ex._piece_jacobians(m, x, U, aware=False)
    np.testing.assert_array_equal(end, ex._roll(m, x, U))
    eps = 1e-6
    for t in range(len(U)):
        Up, Um = U.copy(), U.copy()
        Up[t, 0] += eps
        Um[t, 0] -= eps
        fd = (ex._roll(m, x, Up) - ex._roll(m, x, Um)) / (2 * eps)
        np.testing.assert_allclose(dU[:, t, 0], fd, rtol=1e-5, atol=1e-9)
    for i in range(x.size):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        fd = (ex._roll(m, xp, U) - ex._roll(m, xm, U)) / (2 * eps)
        np.testing.assert_allclose(dx[:, i], fd, rtol=1e-5, atol=1e-9)


def test_multiple_shooting_closes_the_gaps_and_lowers_the_catapult_loss():
    """Three pieces of 5 steps on a 15-step catapult, trust-constr: the pieces end joined (the
    controls rolled out in one piece reach every knot to 1e-6; measured 1e-8) and the loss of
    the controls below 0.75 of its start (measured 0.70)."""
    ex = _trajopt()
    task = ex.tasks()["catapult"]
    task.T = 15
    m = engine.load_model(str(task.path))
    U, hist = ex.multiple_shooting(m, task, maxiter=40)
    assert hist[0][2] < 1e-12                      # the knots start on the rollout
    assert hist[-1][2] < 1e-6
    assert hist[-1][1] == pytest.approx(ex.rollout_loss(m, task, U), rel=1e-12)
    assert hist[-1][1] < 0.75 * hist[0][1]


def test_multiple_shooting_drone_takes_off_with_complementarity_aware_gradients_only():
    """Fig. 8 under multiple shooting (3 pieces of 5 steps, the knots resting on the rollout of
    zero thrust, trust-constr): with the complementarity-aware Jacobians, chosen for the
    objective's adjoint in the objective and in the continuity constraints, the loss of the
    controls falls below 1e-6 of its start with the gaps closed (measured 4e-19 and 2e-16);
    with exact Jacobians the gradient is zero and it stops at the start; with aware ones for
    the objective only (exact continuity Jacobians) it stalls too."""
    ex = _trajopt()
    task = ex.tasks()["drone"]
    m = engine.load_model(str(task.path))
    start = 0.3 ** 2
    _, aware = ex.multiple_shooting(m, task, maxiter=60)
    assert aware[0][1] == pytest.approx(start)
    assert aware[-1][1] < 1e-6 * start and aware[-1][2] < 1e-6
    for kw in (dict(aware=False), dict(constraints="exact")):
        _, hist = ex.multiple_shooting(m, task, maxiter=15, **kw)
        assert min(h[1] for h in hist) == pytest.approx(start, rel=1e-9)



def test_multiple_shooting_lifts_the_jumpworm_with_its_gaps_closed():
    """The feasibility-driven multiple shooting (knots started on the guess of the worm rising
    0.4 m, the gaps contracted on the nonlinear rollout) on the 30-step jump-worm: it starts off
    the rollout (gaps of order 1), a full step closes the gaps exactly, and after 6 iterations
    the controls rolled out in one piece lift the head above 0.3 m at step T (measured 0.357)."""
    ex = _trajopt()
    task = ex.tasks()["jumpworm"]
    m = engine.load_model(str(task.path))
    U, hist = ex.feasibility_driven(m, task, maxiter=6)
    assert hist[0][1] == pytest.approx(0.0, abs=1e-12) and hist[0][2] > 0.5
    assert hist[-1][2] < 1e-6
    assert hist[-1][1] == pytest.approx(ex.rollout_loss(m, task, U), rel=1e-12)
    assert hist[-1][1] < -0.3

# ------------------------------------------------------------------------------------------------
# engine.rollout and the transition derivatives with Solver.LCP
# ------------------------------------------------------------------------------------------------
def test_rollout_runs_the_hard_contact_step():
    """A batch of LCP rollouts equals stepping each alone with engine.step on a fresh Data (not
    the compiled PGS step): a box sliding at mu g, sensors included."""
    m, _ = model(TOUCH_BOX, cone="elliptic")
    spec = engine.State.FULLPHYSICS
    x0 = []
    for vx in (0.5, 1.5):
        d = engine.make_data(m)
        d.qvel[0] = vx
        x0.append(engine.get_state(m, d, spec))
    state, sens = engine.rollout(m, np.array(x0), nstep=15)
    for r in range(2):
        d = engine.make_data(m)
        engine.set_state(m, d, x0[r], spec)
        for t in range(15):
            engine.step(m, d)
            np.testing.assert_array_equal(state[r, t], engine.get_state(m, d, spec))
            np.testing.assert_array_equal(sens[r, t], d.sensordata)
    # Coulomb friction of the hard contact: the sliding speed falls by mu g h per step
    vx = state[1, :, 1 + m.nq]
    np.testing.assert_allclose(np.diff(vx), -0.5 * G * m.opt.timestep, rtol=1e-9)


def test_transition_derivatives_dispatch_to_the_hard_contact_jacobians():
    m, d = model(TOUCH_BOX, cone="elliptic")
    engine.step(m, d, 5)
    d.qvel[:2] = (0.8, 0.3)
    warm = hc.warm_set(d)
    A, B = engine.transition_derivatives(m, d)
    jac = hg.step_derivatives(m, d, warm=warm)
    np.testing.assert_array_equal(A, jac.A)
    Afd, _ = engine.transition_fd(m, d, centered=True)
    np.testing.assert_allclose(A, Afd, rtol=0, atol=1e-5 * (1 + np.abs(Afd).max()))


# ------------------------------------------------------------------------------------------------
# the paper's scenes (assets/nimble_*.xml, states of benchmarks/nimble.py)
# ------------------------------------------------------------------------------------------------
def _bench():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "nimble.py"
    spec = importlib.util.spec_from_file_location("bench_nimble", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["Catapult", "Jump-Worm", "Half Cheetah", "Atlas-like"])
def test_scene_jacobians_match_centered_differences(name):
    m, d, warm = _bench().scene(name)
    an = hg.step_derivatives(m, d, warm=warm)
    fd = hg.step_fd(m, d, warm=warm)
    assert an.position == "analytic" and an.info.problem.ncon >= 2
    for what in ("A", "B", "dvdtau"):
        a, f = getattr(an, what), getattr(fd, what)
        np.testing.assert_allclose(a, f, rtol=0, atol=1e-5 * (1.0 + np.abs(f).max()),
                                   err_msg=f"{name}: {what}")


@pytest.mark.parametrize("name", ["Atlas-like", "Catapult", "Half Cheetah"])
def test_position_derivatives_match_differences_of_the_position_stages(name):
    """The analytical position terms of dv'/dq (inertia, smooth forces, contact rows per geom
    pair: box-plane corners, sphere-plane, capsule-plane, sphere-box) against centered
    differences of the position stages and collision, at the step's impulses."""
    m, d, warm = _bench().scene(name)
    opt = hc.HardContactOptions()
    p = hc.assemble(m, d, opt)
    z = hc.solve_lcp(p, opt, warm).z
    assert np.abs(z[:p.ncon]).max() > 0.0
    an = hg._position_analytic(m, d, p, z, opt, 1e-6)
    fd = hg._position_fd(m, d, p, z, opt, 1e-6)
    for what, a, f in zip(("dv_free", "dA z", "dq", "d(M^-1 J') z"), an, fd):
        np.testing.assert_allclose(a, f, rtol=0, atol=1e-6 * (1.0 + np.abs(f).max()),
                                   err_msg=f"{name}: {what}")


def test_lcp_solve_recovers_where_lemkes_method_fails():
    """The humanoid standing (3 steps from its keyframe) turned by 3e-5 along dof 22 (a leg):
    Lemke's method alone ends on a ray or a singular basis; the step's solve retries with
    constraint force mixing (stabilised on the unregularised LCP where that set admits an exact
    solution), and the result solves the LCP to 1e-6 (1 + max |q|) (z >= 0, w >= 0, z w = 0;
    here the softening's delta z, 5e-7 m/s)."""
    from engine import lcp
    path = pathlib.Path(__file__).resolve().parents[1] / "assets" / "nimble_humanoid.xml"
    m = engine.load_model(str(path))
    d = engine.make_data(m)
    state = {}
    for _ in range(3):
        hc.lcp_step(m, d, None, state)
    e = np.zeros(m.nv)
    e[22] = 3e-5
    d.qpos[:] = hg.perturb_pos(m, d.qpos, e)
    opt = hc.HardContactOptions()
    p = hc.assemble(m, d, opt)
    M, q = hc.lcp_matrix(p)
    assert not lcp.lemke(M, q)[1].ok
    info = hc.solve_lcp(p, opt)
    assert info.source == "lemke+cfm"
    w = M @ info.z + q
    tol = 1e-6 * (1.0 + np.abs(q).max())
    assert info.z.min() >= -tol and w.min() >= -tol and np.abs(info.z * w).max() <= tol
    assert info.z[:p.ncon].sum() > 0.0                     # the feet carry the body
    hc.lcp_step(m, d, opt)                                 # and the step goes on from there
    assert np.isfinite(d.qvel).all()


# ------------------------------------------------------------------------------------------------
# box-box contact geometry (section V: vertex-face, edge-edge, face-vertex of a face clipping)
# ------------------------------------------------------------------------------------------------
BOX_ON_BOX = """<mujoco><option timestep="0.01"/><worldbody>
<geom type="box" pos="0 0 0.1" size=".15 .15 .1" friction="0.5"/>
<body pos="{x} -0.02 0.5" euler="{euler}"><freejoint/>
<geom type="box" size="{size}" mass="1" friction="0.5"/></body></worldbody></mujoco>"""


def _box_features(m, d):
    """Per contact the features of the face clipping (numpy, independent of the engine's
    classification): the reference box's face normal along the contact normal, y = the point on
    the incident box, x its projection on the reference face, counted by the box faces they lie on."""
    out = []
    for c in range(d.ncon):
        n, p, dist = d.contact_frame[c, :3], d.contact_pos[c], d.contact_dist[c]
        g = (d.contact_geom1[c], d.contact_geom2[c])
        R = [d.geom_xmat[k].reshape(3, 3) for k in g]
        ref = next((i for i in (0, 1) if np.abs(R[i].T @ n).max() > 1 - 1e-9), None)
        if ref is None:
            out.append("edge axis")
            continue
        nR = n if ref == 0 else -n
        on = [sum(np.abs(np.abs(R[i].T @ (pt - d.geom_xpos[g[i]])) - m.geom_size[g[i]]) < 1e-9)
              for i, pt in ((1 - ref, p + 0.5 * dist * nR), (ref, p - 0.5 * dist * nR))]
        out.append({(3, 1): "vertex-face", (2, 2): "edge-edge", (1, 3): "face-vertex"}[tuple(on)])
    return out


@pytest.mark.parametrize("size, euler, x, depth, kinds", [
    (".1 .1 .1", "25 35 10", 0.01, 1e-3, {"vertex-face"}),
    (".25 .25 .05", "1 0.5 45", 0.3, 1e-2, {"vertex-face", "edge-edge", "face-vertex"})])
def test_box_box_jacobians_are_analytic_and_match_differences(size, euler, x, depth, kinds):
    """A box on a box: a corner in a face, and a tilted, turned box overhanging the lower one
    (its face the reference: the lower box's corners in it, the lower box's top edges crossing
    its sides, its corner over the lower top face), pressed by depth at its lowest point. The
    step's Jacobians are analytical (no fallback) and equal centered differences to 1e-5."""
    m = engine.load_model_from_string(BOX_ON_BOX.format(size=size, euler=euler, x=x))
    d = engine.make_data(m)
    engine.forward(m, d)
    R, half = d.geom_xmat[1].reshape(3, 3), m.geom_size[1]
    low = min((d.geom_xpos[1] + R @ (np.array(s) * half))[2]
              for s in np.array(np.meshgrid(*[[-1, 1]] * 3)).reshape(3, -1).T)
    d.qpos[2] += 0.2 - depth - low
    hc.lcp_step(m, d)
    hc.assemble(m, d)                       # the step's contacts (margins widened)
    assert set(_box_features(m, d)) == kinds
    an = hg.step_derivatives(m, d)
    fd = hg.step_fd(m, d)
    assert an.position == "analytic" and len(an.clamping) > 0
    for name in ("A", "dvdtau"):
        a, f = getattr(an, name), getattr(fd, name)
        np.testing.assert_allclose(a, f, rtol=0, atol=1e-5 * (1.0 + np.abs(f).max()), err_msg=name)

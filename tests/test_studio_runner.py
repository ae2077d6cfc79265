"""The simulation runner (thread, pacing, queued commands, history, divergence) and the scene
draw lists, without a window."""
from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import engine
from studio import scene
from studio.runner import Runner

ROOT = Path(__file__).resolve().parent.parent
PENDULUM = """<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
      <site name="tip" pos="0.5 0 0" size="0.02"/>
    </body>
    <body name="ball" pos="1 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>
    <site name="anchor" pos="1 0 2" size="0.02"/>
  </worldbody>
  <tendon><spatial name="rope" stiffness="100" width="0.01">
    <site site="anchor"/><site site="tip"/></spatial></tendon>
  <keyframe><key name="up" qpos="1.0 1 0 1 1 0 0 0"/></keyframe>
</mujoco>"""


@pytest.fixture
def runner():
    m = engine.load_model_from_string(PENDULUM)
    d = engine.make_data(m)
    engine.forward(m, d)
    engine.step(m, engine.make_data(m))
    r = Runner(m, d)
    yield r
    r.stop_thread()


def wait_for(cond, timeout=5.0):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def test_thread_paces_real_time_and_speed(runner):
    """The published simulated time follows the wall clock: never ahead of it (by more than
    one chunk of PUBLISH_MAX), and not far behind (the pendulum steps much faster than real
    time, so only a starved thread would lag; the lower bound leaves room for that)."""
    from studio.runner import PUBLISH_MAX
    wall0 = time.perf_counter()
    runner.start_thread()
    time.sleep(0.6)
    sim, wall = runner.snapshot.time, time.perf_counter() - wall0
    assert 0.7 * wall - 0.05 <= sim <= wall + PUBLISH_MAX, (sim, wall)
    assert runner.realtime_factor == pytest.approx(1.0, abs=0.15)
    runner.speed = 0.1
    time.sleep(0.1)
    sim0, wall0 = runner.snapshot.time, time.perf_counter()
    time.sleep(0.8)
    sim, wall = runner.snapshot.time - sim0, time.perf_counter() - wall0
    assert 0.07 * wall - 0.01 <= sim <= 0.1 * wall + PUBLISH_MAX, (sim, wall)
    assert runner.realtime_factor == pytest.approx(0.1, abs=0.03)


def test_commands_apply_between_steps(runner):
    runner.start_thread()
    seen = []
    runner.submit(lambda m, d: seen.append(d.time))
    runner.set_option("kappa", 0.0321)
    assert wait_for(lambda: seen and runner.m.opt.kappa == 0.0321)
    runner.submit(lambda m, d: d.ctrl.fill(0.0))


def test_pause_single_step_history_and_reset(runner):
    runner.start_thread()
    assert wait_for(lambda: runner.snapshot.time > 0.2)
    runner.set_paused(True)
    time.sleep(0.05)
    t = runner.snapshot.time
    runner.single_step()
    assert wait_for(lambda: runner.snapshot.time == pytest.approx(t + 0.002))
    t1 = runner.snapshot.time
    runner.seek(-10)
    assert wait_for(lambda: runner.snapshot.time < t1)
    back_time = runner.snapshot.time
    runner.seek(+10)
    assert wait_for(lambda: runner.snapshot.time == pytest.approx(t1))
    runner.seek(-5)
    assert wait_for(lambda: runner.snapshot.time < t1)
    runner.set_paused(False)                  # resuming from the past forgets the future
    assert wait_for(lambda: runner.snapshot.time > back_time + 0.05)
    runner.reset(0)                           # keyframe "up"
    runner.set_paused(True)
    assert wait_for(lambda: runner.snapshot.time < 0.05)
    assert runner.d.qpos[0] == pytest.approx(1.0, abs=0.1)


def test_divergence_pauses_with_the_time_before_the_reset(runner):
    """The engine resets a diverged state (time 0): the message names the time at which it
    diverged, the summary counts the simulated time before and after the reset, and resuming
    clears the message."""
    import re
    runner.start_thread()
    assert wait_for(lambda: runner.snapshot.time > 0.3)
    when = []

    def blow_up(m, d):
        when.append(d.time)
        d.qvel.fill(np.nan)
    runner.submit(blow_up)
    assert wait_for(lambda: runner.paused and runner.warning_message)
    assert "BADQVEL" in runner.warning_message
    t = float(re.search(r"diverged at t=([0-9.]+)", runner.warning_message).group(1))
    assert t == pytest.approx(when[0], abs=1e-4)
    assert runner.d.time < when[0]                     # reset by the engine
    dt = runner.m.opt.timestep
    assert runner.sim_time == pytest.approx(runner.steps * dt, rel=1e-12)
    assert runner.sim_time >= when[0]
    assert "sim_time=-" not in runner.summary()
    runner.set_paused(False)
    assert runner.warning_message == ""
    t1 = runner.snapshot.time
    assert wait_for(lambda: runner.snapshot.time > t1 + 0.05)


def test_an_error_in_a_command_pauses_and_keeps_the_thread(runner, capsys):
    runner.start_thread()
    assert wait_for(lambda: runner.snapshot.time > 0.05)

    def broken(m, d):
        raise ValueError("broken command")
    runner.submit(broken)
    assert wait_for(lambda: runner.paused and runner.error_message)
    assert "ValueError: broken command" in runner.error_message
    assert runner._thread.is_alive()
    assert "broken command" in capsys.readouterr().err       # the traceback, for the console
    runner.set_paused(False)                                   # Run resumes and clears it
    assert runner.error_message == ""
    t = runner.snapshot.time
    assert wait_for(lambda: runner.snapshot.time > t + 0.05)
    runner.set_option("kappa", 0.0456)                         # commands still apply
    assert wait_for(lambda: runner.m.opt.kappa == 0.0456)


def test_step_reads_the_perturbation_once(runner):
    """The UI may clear the perturbation at any time: a chunk of steps uses the value it read
    at its start (a runner whose attribute is cleared after each read, as by the UI thread)."""
    class Cleared(Runner):
        @property
        def perturb(self):
            value = self.__dict__.get("_p")
            self.__dict__["_p"] = None
            return value

        @perturb.setter
        def perturb(self, value):
            self.__dict__["_p"] = value

    r = Cleared(runner.m, runner.d)
    calls = []
    r.perturb = lambda m, d: calls.append(d.time)
    r.step_n(5)
    assert len(calls) == 5


def test_set_perturb_goes_through_the_queue(runner):
    """The UI changes the perturbation only through the queue: applied by the thread."""
    runner.start_thread()
    calls = []

    def push(m, d):
        calls.append(d.time)
    runner.set_perturb(push)
    assert wait_for(lambda: len(calls) > 10)
    assert runner.perturb is push

    def release(m, d):
        d.xfrc_applied[:] = 0.0
        calls.clear()
    runner.set_perturb(None, release=release)
    assert wait_for(lambda: runner.perturb is None)
    n = len(calls)
    t = runner.snapshot.time
    assert wait_for(lambda: runner.snapshot.time > t + 0.05)
    assert len(calls) == n                          # no longer called


def test_stop_waits_for_a_long_step(runner):
    """stop_thread returns only once the thread has ended, even when its step in progress
    outlasts the 5 s it once waited (a kernel compiling on a loaded machine): the thread
    writes into the Data that the caller may free next."""
    entered, go = threading.Event(), threading.Event()
    step_n = runner.step_n

    def slow(n):
        entered.set()
        go.wait()
        step_n(n)
    runner.step_n = slow
    runner.start_thread()
    thread = runner._thread
    assert entered.wait(60)
    release = threading.Timer(6.0, go.set)
    release.start()
    runner.stop_thread()
    assert go.is_set() and not thread.is_alive()
    release.join()


def test_scene_lists_geoms_tendons_and_sites(runner):
    m = runner.m
    opts = scene.SceneOptions(sites=True, joints=True, com=True, inertia=True)
    sc = scene.build(m, runner.snapshot, opts, selected_body=1)
    keys = set(sc.instances)
    assert ("capsule", "opaque") in keys and ("sphere", "opaque") in keys
    assert ("sphere", "decor") in keys and ("cylinder", "decor") in keys
    assert ("box", "transparent") in keys                       # inertia boxes
    # the selected body's geoms are highlighted
    plain = scene.build(m, runner.snapshot, scene.SceneOptions())
    assert not np.allclose(sc.instances[("capsule", "opaque")][:, 15:18],
                           plain.instances[("capsule", "opaque")][:, 15:18])


def test_contact_forces_in_world_frame():
    # one elliptic contact with normal +z, rows [normal, t1, t2] and one pyramidal contact
    snap = SimpleNamespace(
        ncon=2, nefc=7,
        contact_pos=np.zeros((2, 3)), contact_dim=np.array([3, 3]),
        contact_efc_address=np.array([0, 3]),
        contact_frame=np.array([[0, 0, 1, 1, 0, 0, 0, 1, 0]] * 2, float),
        efc_type=np.array([7, 7, 7, 6, 6, 6, 6]),
        efc_force=np.array([10.0, 1.0, -2.0, 1.0, 2.0, 3.0, 4.0]),
        efc_mu=np.array([0.0, 0.9, 0.9, 0.5, 0.5, 0.3, 0.3]))
    f = scene.contact_forces(snap)
    np.testing.assert_allclose(f[0], [1.0, -2.0, 10.0])
    # pyramidal edges (e+, e-) per tangent: f_n = sum = 10, f_j = mu_j (e+ - e-)
    np.testing.assert_allclose(f[1], [0.5 * (1 - 2), 0.3 * (3 - 4), 10.0])
    normal, friction = scene.contact_force_parts(snap)
    np.testing.assert_allclose(normal, [[0, 0, 10], [0, 0, 10]])
    np.testing.assert_allclose(friction, [[1, -2, 0], [-0.5, -0.3, 0]])


def test_inertia_box_matches_a_box():
    m = engine.load_model_from_string(
        '<mujoco><worldbody><body><freejoint/><geom type="box" size="0.1 0.2 0.3" mass="2"/>'
        '</body></worldbody></mujoco>')
    np.testing.assert_allclose(np.sort(scene.inertia_boxes(m)[1]), [0.1, 0.2, 0.3], rtol=1e-6)


# a spatial tendon with spring, damper, friction loss, a limit and an actuator; two fixed
# tendons tied by a tendon equality; no gravity, no contacts, no joint springs or limits
TENDONS = """<mujoco>
  <option gravity="0 0 0"><flag contact="disable"/></option>
  <worldbody>
    <site name="anchor" pos="0 0 1"/>
    <body name="a"><joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 .4 0 0" size=".03"/><site name="s1" pos=".3 0 .05"/>
      <body name="b" pos=".4 0 0"><joint name="j2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/><site name="s2" pos=".3 0 0"/>
      </body>
    </body>
    <body name="c" pos="1 0 0"><joint name="j3" type="slide" axis="1 0 0"/>
      <geom type="sphere" size=".05"/></body>
  </worldbody>
  <tendon>
    <spatial name="rope" stiffness="50" damping="2" frictionloss="0.5" limited="true" range="0 5">
      <site site="anchor"/><site site="s1"/><site site="s2"/></spatial>
    <fixed name="link" stiffness="10" damping="1">
      <joint joint="j2" coef="1"/><joint joint="j3" coef="0.5"/></fixed>
    <fixed name="follower"><joint joint="j3" coef="1"/></fixed>
  </tendon>
  <equality><tendon tendon1="follower" tendon2="link" polycoef="0 0.5 0.2 0 0"/></equality>
  <actuator><motor tendon="rope" gear="3"/></actuator>
</mujoco>"""


def test_tendon_forces_add_up_to_the_generalised_forces():
    """Every generalised force of this model acts through a tendon, so ten_J' f (f: the
    studio's per-tendon force) must equal qfrc_passive + qfrc_actuator + qfrc_constraint."""
    m = engine.load_model_from_string(TENDONS)
    d = engine.make_data(m)
    d.qpos[:] = [0.4, -0.7, 0.1]
    d.qvel[:] = [1.0, -2.0, 0.5]
    d.ctrl[:] = [-2.0]
    engine.forward(m, d)
    m.tendon_range[0] = [0.0, d.ten_length[0] - 0.01]      # the rope beyond its upper limit
    engine.forward(m, d)
    types = set(d.efc_type[:d.nefc].tolist())
    assert {0, 2, 4} <= types                               # equality, friction loss, limit rows
    f = scene.tendon_forces(m, d)
    expected = d.qfrc_passive + d.qfrc_actuator + d.qfrc_constraint
    assert np.all(np.abs(f) > 1e-3) and np.abs(d.qfrc_constraint).max() > 1e-3
    np.testing.assert_allclose(d.ten_J[:m.ntendon].T @ f, expected, rtol=1e-9, atol=1e-9)


def test_tendon_colour_against_a_fixed_reference():
    """A tendon carrying the reference force is drawn fully red whatever the other tendons
    carry; a tiny force stays in the tendon's own colour (not normalised by the frame's
    largest force)."""
    m = engine.load_model(str(ROOT / "assets" / "tendon_arm.xml"))
    d = engine.make_data(m)
    engine.step(m, d, 100)                                 # the weight pulls on the rope
    engine.forward(m, d)
    f = np.abs(scene.tendon_forces(m, d))
    assert f.max() > 1.0
    opts = scene.SceneOptions(geoms=False, contact_points=False, contact_forces=False)

    def colours(reference):
        seg = scene.build(m, d, opts, tendon_reference=reference).instances[("cylinder", "decor")]
        return seg[:, 15:18]
    big = int(np.argmax(f))
    n_big = int(d.ten_wrapnum[big]) - 1                    # segments of that tendon
    first = int(sum(d.ten_wrapnum[t] - 1 for t in range(big)))
    full = colours(f[big])[first:first + n_big]
    np.testing.assert_allclose(full, np.tile(scene.TENDON_RGBA_FULL, (n_big, 1)), atol=1e-6)
    faint = colours(1e6 * f.max())
    base = np.repeat(m.tendon_rgba[:, :3], d.ten_wrapnum[:m.ntendon] - 1, axis=0)
    np.testing.assert_allclose(faint, base, atol=1e-5)

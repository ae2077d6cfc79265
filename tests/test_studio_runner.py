"""The simulation runner (thread, pacing, queued commands, history, divergence) and the scene
draw lists, without a window."""
from __future__ import annotations

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
    runner.start_thread()
    time.sleep(0.6)
    assert runner.realtime_factor == pytest.approx(1.0, abs=0.15)
    runner.speed = 0.1
    time.sleep(0.8)
    assert runner.realtime_factor == pytest.approx(0.1, abs=0.03)
    assert runner.snapshot.time > 0


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


def test_divergence_pauses_with_a_message(runner):
    runner.start_thread()
    assert wait_for(lambda: runner.snapshot.time > 0.05)
    runner.submit(lambda m, d: d.qvel.fill(np.nan))
    assert wait_for(lambda: runner.paused and runner.warning_message)
    assert "BADQVEL" in runner.warning_message


def test_scene_lists_geoms_tendons_and_sites(runner):
    m, d = runner.m, runner.d
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
        efc_force=np.array([10.0, 1.0, -2.0, 1.0, 2.0, 3.0, 4.0]))
    f = scene.contact_forces(snap)
    np.testing.assert_allclose(f[0], [1.0, -2.0, 10.0])
    np.testing.assert_allclose(f[1], [0.0, 0.0, 10.0])


def test_inertia_box_matches_a_box():
    m = engine.load_model_from_string(
        '<mujoco><worldbody><body><freejoint/><geom type="box" size="0.1 0.2 0.3" mass="2"/>'
        '</body></worldbody></mujoco>')
    np.testing.assert_allclose(np.sort(scene.inertia_boxes(m)[1]), [0.1, 0.2, 0.3], rtol=1e-6)

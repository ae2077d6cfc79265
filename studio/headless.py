"""Runs without a window: real-time paced simulation, and offscreen screenshots through EGL."""
from __future__ import annotations

import time

import numpy as np

from .runner import Runner

TICK = 1.0 / 60.0            # one frame of the headless loop and of --frames, in seconds


def run_headless(runner: Runner, duration: float | None) -> None:
    """Step at real-time pace for ``duration`` seconds of wall time (forever if None)."""
    start = time.perf_counter()
    next_tick = start
    while duration is None or time.perf_counter() - start < duration:
        runner.advance()
        runner.frames += 1
        next_tick += TICK
        delay = next_tick - time.perf_counter()
        if duration is not None:
            delay = min(delay, start + duration - time.perf_counter())
        if delay > 0:
            time.sleep(delay)
        else:
            next_tick = time.perf_counter()


def steps_per_frame(m) -> int:
    return max(1, int(round(TICK / float(m.opt.timestep))))


class GLUnavailable(RuntimeError):
    """No OpenGL 3.3 context could be created."""


def create_egl_context():
    """A standalone OpenGL 3.3 context through EGL (no X server needed)."""
    import moderngl
    try:
        return moderngl.create_standalone_context(backend="egl", require=330)
    except Exception as e:           # glcontext raises plain Exception for a missing device
        raise GLUnavailable(f"cannot create an OpenGL 3.3 context through EGL: {e} "
                            "(Debian packages: libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1)") from e


def render_offscreen(ctx, renderer, d, width: int, height: int, msaa: int = 4) -> np.ndarray:
    """Draw ``d`` into a multisampled framebuffer and return the picture as (height, width, 3) uint8."""
    samples = min(max(msaa, 0), int(ctx.max_samples))
    samples = samples if samples > 1 else 0
    ms = ctx.framebuffer(color_attachments=[ctx.renderbuffer((width, height), 4, samples=samples)],
                         depth_attachment=ctx.depth_renderbuffer((width, height), samples=samples))
    out = ctx.framebuffer(color_attachments=[ctx.renderbuffer((width, height), 4)])
    try:
        renderer.render(ms, width, height, d)
        ctx.copy_framebuffer(out, ms)
        raw = out.read(components=3, alignment=1)
    finally:
        for fb in (ms, out):
            for att in fb.color_attachments:
                att.release()
            if fb.depth_attachment is not None:
                fb.depth_attachment.release()
            fb.release()
    img = np.frombuffer(raw, dtype=np.uint8).reshape(height, width, 3)
    return img[::-1].copy()                       # OpenGL rows go bottom-up


def screenshot(runner: Runner, path: str, frames: int, width: int, height: int,
               msaa: int = 4) -> None:
    """Simulate ``frames`` frames (1/60 s each, as fast as possible), then save a PNG of the scene
    seen by the free camera as the window frames the model on load (its statistic at the
    initial state, the model's azimuth and elevation)."""
    from PIL import Image

    from .renderer import Renderer

    m, d = runner.m, runner.d
    ctx = create_egl_context()
    try:
        renderer = Renderer(ctx, m, d)
        renderer.align(width / max(height, 1))
        n = steps_per_frame(m)
        for _ in range(max(0, frames)):
            if not runner.paused:
                runner.step_n(n)
            runner.frames += 1
        renderer.wait_for_meshes()
        img = render_offscreen(ctx, renderer, d, width, height, msaa)
        Image.fromarray(img, "RGB").save(path)
        renderer.release()
    finally:
        ctx.release()

"""The studio window: pyglet (OpenGL 3.3 core) with moderngl drawing, stepped at real-time pace."""
from __future__ import annotations

import os
import sys
import time

from .runner import Runner

TITLE_EVERY = 0.5            # seconds between window-title status updates


def _gl_configs(msaa: int):
    from pyglet import gl

    base = dict(major_version=3, minor_version=3, forward_compatible=True, depth_size=24,
                double_buffer=True)
    if msaa > 1:
        yield gl.Config(sample_buffers=1, samples=msaa, **base)
    yield gl.Config(**base)


def _configure_pyglet():
    """Before pyglet.window is imported: without a display, run the window offscreen on EGL."""
    import pyglet

    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") \
            and not os.environ.get("WAYLAND_DISPLAY"):
        print("studio: no display found; rendering offscreen through EGL", file=sys.stderr)
        pyglet.options.headless = True
        pyglet.options.shadow_window = False


def _make_window(width, height, title, msaa):
    import pyglet.window

    last = None
    for config in _gl_configs(msaa):
        try:
            return pyglet.window.Window(width=width, height=height, caption=title,
                                        resizable=True, config=config, vsync=False)
        except pyglet.window.NoSuchConfigException as e:
            last = e
    raise last


def run_window(runner: Runner, args) -> None:
    _configure_pyglet()
    import moderngl
    import pyglet
    from pyglet.window import key, mouse

    from .renderer import Renderer

    model_name = os.path.basename(args.model)
    window = _make_window(args.width, args.height, f"studio - {model_name}", args.msaa)
    ctx = moderngl.create_context()
    renderer = Renderer(ctx, runner.m)
    renderer.frame_model(runner.d)
    state = {"title_at": 0.0, "frames_at_title": 0, "t_title": time.perf_counter()}

    def update_title():
        now = time.perf_counter()
        if now - state["t_title"] < TITLE_EVERY:
            return
        fps = (runner.frames - state["frames_at_title"]) / (now - state["t_title"])
        state["t_title"], state["frames_at_title"] = now, runner.frames
        status = "paused" if runner.paused else "running"
        window.set_caption(f"studio - {model_name} - t={runner.d.time:.2f}s {status} {fps:.0f} fps")

    @window.event
    def on_draw():
        w, h = window.get_framebuffer_size()
        renderer.render(ctx.screen, w, h, runner.d)
        runner.frames += 1
        update_title()

    @window.event
    def on_key_press(symbol, modifiers):
        if symbol == key.ESCAPE:
            window.close()
        elif symbol == key.SPACE:
            runner.toggle_pause()
        elif symbol == key.BACKSPACE:
            runner.reset()
        return pyglet.event.EVENT_HANDLED

    @window.event
    def on_mouse_drag(x, y, dx, dy, buttons, modifiers):
        if buttons & mouse.LEFT:
            renderer.camera.orbit(dx, -dy)
        elif buttons & (mouse.RIGHT | mouse.MIDDLE):
            renderer.camera.pan(dx, dy, window.height)

    @window.event
    def on_mouse_scroll(x, y, scroll_x, scroll_y):
        renderer.camera.zoom(scroll_y)

    def tick(dt):
        runner.advance()

    pyglet.clock.schedule_interval(tick, 1.0 / 120.0)
    if args.duration is not None:
        pyglet.clock.schedule_once(lambda dt: window.close(), args.duration)
    runner.start = time.perf_counter()
    runner._last = runner.start
    try:
        pyglet.app.run(1.0 / 60.0)
    finally:
        renderer.release()

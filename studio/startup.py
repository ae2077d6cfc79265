"""The window's first seconds: it opens at once and shows what the studio is doing while the
model loads and, on a fresh install or after an engine update, the engine compiles.

``open_window`` creates the window before the engine is imported, then runs ``LoadJob`` (import
the engine, compile the model file, compile or load the kernels and take a first step:
``studio.loader.load_model_file``) in a thread while the window draws a progress screen.
While the kernels compile, the engine runs as plain Python (engine/warmup.py): the job computes
the model's first pose that way, and the progress screen draws the model behind the progress
bar, still (the camera moves with the mouse as in the studio), until the simulation can start.
numba compiles with the GIL released for most of its time (LLVM runs in C), and the engine's
cold-cache warm-up compiles part of the kernels in a second process (engine/warmup.py), so the
screen keeps redrawing. Progress is the number of kernels in the numba cache against the number
a studio start compiles (EXPECTED_KERNELS, measured; the bar stops short of full until the first
step has run).
"""
from __future__ import annotations

import os
import sys
import threading
import time

EXPECTED_KERNELS = 210           # cache index files after a cold start of the studio (measured)


class LoadJob(threading.Thread):
    """Loads ``path`` in the background: ``result`` = (m, d, error message)."""

    def __init__(self, path):
        super().__init__(name="load model", daemon=True)
        self.path = path
        self.result = None
        self.stage = "starting the engine"
        self.cache = None                 # the numba cache directory, once known
        self.compiling = False
        self.preview = None               # (m, d) at the first pose while the kernels compile
        self.started = time.perf_counter()

    def run(self):
        import engine
        from engine import jit
        self.cache = jit.cache_dir()
        self.compiling = engine.warmup.compiling()
        if self.compiling:
            print("studio: compiling the engine for this machine (once after installing or "
                  "updating it; a few minutes on 2 cores)", file=sys.stderr, flush=True)
        from .loader import empty_world, load_model_file
        self.stage = "compiling the engine" if self.compiling else "loading the model"
        m, d, error = load_model_file(self.path, preview=self._preview)
        if error:
            print(f"studio: {error}", file=sys.stderr, flush=True)
            self.stage = "opening an empty world"
            m, d = empty_world()
        self.result = (m, d, error or "")

    def _preview(self, m, keyframe):
        """The model's first pose (forward as plain Python) while the kernels compile. If that
        fails, the screen says so on the terminal and goes on without it: the compiled
        kernels, not their plain twins, decide whether the model loads."""
        import engine
        if not engine.warmup.interpreting():
            return
        try:
            d = engine.make_data(m)
            if keyframe is not None:
                engine.reset_keyframe(m, d, keyframe)
            engine.forward(m, d)
        except Exception as e:                    # noqa: BLE001 - reported, the load goes on
            print(f"studio: no preview while compiling ({type(e).__name__}: {e})",
                  file=sys.stderr, flush=True)
            return
        self.preview = (m, d)

    @property
    def done(self) -> bool:
        return self.result is not None

    def kernels(self) -> int:
        """Kernels compiled into the cache so far."""
        if not self.cache or not os.path.isdir(self.cache):
            return 0
        return sum(1 for _, _, files in os.walk(self.cache) for f in files if f.endswith(".nbi"))

    def progress(self) -> tuple[str, float | None]:
        """(what is happening, fraction done or None when unknown)."""
        elapsed = time.perf_counter() - self.started
        if not self.compiling:
            return f"{self.stage} ({elapsed:.0f} s)", None
        n = self.kernels()
        shown = "; the model as loaded, the simulation starts once compiled" \
            if self.preview is not None else ""
        return (f"compiling the engine for this machine: {n} of about {EXPECTED_KERNELS} kernels, "
                f"{elapsed:.0f} s (once after installing or updating it){shown}"), \
            min(n / EXPECTED_KERNELS, 0.98)


class ProgressScreen:
    """An ImGui window with the model's name, the stage and a progress bar: centred, or at the
    bottom over the model once a preview (m, d) is given."""

    def __init__(self, window, ctx, title):
        from imgui_bundle import imgui

        from .imgui_renderer import ImGuiRenderer
        self.window, self.ctx, self.title = window, ctx, title
        self.imgui_ctx = imgui.create_context()
        imgui.get_io().set_ini_filename(None)
        self.gui = ImGuiRenderer(ctx)
        self.renderer = self.viewport = self.scene = self.d = None
        self._key = None                  # what the last frame showed, with the model shown

    def _show(self, m, d) -> None:
        """The 3D view's renderer for the model at d, framed as the studio frames it."""
        from . import scene
        from .renderer import Renderer
        from .viewport import SceneViewport
        w, h = self.window.get_framebuffer_size()
        self.renderer = Renderer(self.ctx, m, d)
        self.renderer.align(w / max(h, 1))
        self.viewport = SceneViewport(self.ctx)
        self.scene = scene.build(m, d, self.renderer.options, colors=self.renderer.colors,
                                 extent=self.renderer.extent)
        self.d = d
        self.window.push_handlers(on_mouse_drag=self._drag, on_mouse_scroll=self._scroll)

    # the camera moves as in the studio: left drag orbits, right or middle drag pans, the wheel
    # zooms (the view is drawn again only when the camera moved: draw's key)
    def _drag(self, x, y, dx, dy, buttons, modifiers):
        from pyglet.window import mouse
        cam = self.renderer.camera
        if buttons & mouse.LEFT:
            cam.orbit(dx, -dy)
        elif buttons & (mouse.RIGHT | mouse.MIDDLE):
            cam.pan(dx, dy, self.window.height)

    def _scroll(self, x, y, scroll_x, scroll_y):
        self.renderer.camera.zoom(scroll_y)

    def draw(self, text, fraction, preview=None) -> bool:
        """Draw a frame; False if it was not drawn: with the model shown, only a change of the
        text, the camera or the window's size draws one (the picture costs a software
        rasteriser time on the cores the compilation uses)."""
        from imgui_bundle import imgui
        if preview is not None and self.renderer is None:
            self._show(*preview)
        w, h = self.window.get_framebuffer_size()
        if self.renderer is not None:
            cam = self.renderer.camera
            key = (text, fraction, w, h, cam.azimuth, cam.elevation, cam.distance,
                   tuple(cam.lookat))
            if key == self._key:
                return False
            self._key = key
        io = imgui.get_io()
        io.display_size = imgui.ImVec2(float(self.window.width), float(self.window.height))
        io.display_framebuffer_scale = imgui.ImVec2(w / max(self.window.width, 1),
                                                    h / max(self.window.height, 1))
        io.delta_time = 1.0 / 30.0
        imgui.new_frame()
        vp = imgui.get_main_viewport()
        if self.renderer is None:
            imgui.set_next_window_pos(imgui.ImVec2(vp.work_size.x * 0.5, vp.work_size.y * 0.5),
                                      imgui.Cond_.always, imgui.ImVec2(0.5, 0.5))
        else:                                      # below the model
            imgui.set_next_window_pos(imgui.ImVec2(vp.work_size.x * 0.5, vp.work_size.y - 16.0),
                                      imgui.Cond_.always, imgui.ImVec2(0.5, 1.0))
        imgui.set_next_window_size(imgui.ImVec2(min(620.0, vp.work_size.x * 0.9), 0))
        flags = imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.no_move
        if imgui.begin("starting", None, flags)[0]:
            imgui.text(self.title)
            imgui.text_wrapped(text)
            t = time.perf_counter()
            imgui.progress_bar(fraction if fraction is not None else -t, imgui.ImVec2(-1, 0),
                               f"{100 * fraction:.0f} %" if fraction is not None else "")
        imgui.end()
        imgui.render()
        self.ctx.screen.use()
        self.ctx.viewport = (0, 0, w, h)
        self.ctx.screen.clear(0.11, 0.13, 0.17, 1.0)
        if self.renderer is not None:
            from .viewport import auto_render_scale, is_software
            self.viewport.draw(self.renderer, self.ctx.screen, (0, 0, w, h), self.d,
                               scene=self.scene, scale=auto_render_scale(self.ctx),
                               fxaa=is_software(self.ctx))
            self.ctx.screen.use()
            self.ctx.viewport = (0, 0, w, h)
        self.gui.render(imgui.get_draw_data(), self.ctx.screen)
        return True

    def release(self) -> None:
        from imgui_bundle import imgui
        if self.renderer is not None:
            self.window.remove_handlers(on_mouse_drag=self._drag, on_mouse_scroll=self._scroll)
        for obj in (self.viewport, self.renderer):
            if obj is not None:
                obj.release()
        self.gui.release()
        imgui.destroy_context(self.imgui_ctx)


def open_window(path, width, height):
    """Open the window at once, load ``path`` behind a progress screen; returns (window,
    (m, d, error)), or (None, None) if the window was closed before the model was ready."""
    from .window import configure_pyglet, make_window
    configure_pyglet()
    import moderngl
    import pyglet

    name = os.path.basename(str(path))
    window = make_window(width, height, f"studio - {name} - starting")
    closed = []

    def on_close():
        closed.append(True)
        return pyglet.event.EVENT_HANDLED
    window.set_handler("on_close", on_close)
    ctx = moderngl.create_context()
    ctx.screen.clear(0.11, 0.13, 0.17, 1.0)       # something on the screen at once
    window.flip()
    screen = ProgressScreen(window, ctx, f"Opening {name}")
    job = LoadJob(path)
    job.start()
    try:
        while not job.done and not closed:
            window.switch_to()
            window.dispatch_events()
            text, fraction = job.progress()
            if screen.draw(text, fraction, job.preview):
                window.flip()
            window.set_caption(f"studio - {name} - starting: {text.split(':')[0]}")
            job.join(1.0 / 30.0)
    finally:
        window.switch_to()
        screen.release()
        window.remove_handler("on_close", on_close)
    if closed:
        window.close()
        return None, None
    return window, job.result

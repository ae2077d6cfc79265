"""The studio window: pyglet (OpenGL 3.3 core) drawn with moderngl, ImGui panels on top.

State is kept in separate places:
- simulation state: the ``Runner`` (Model, Data, the simulation thread, published Snapshots);
- the visual scene: ``studio.scene.build`` from the newest Snapshot, once per frame;
- GPU resources: ``Renderer`` (geoms, textures, lights, shadows), ``SceneViewport`` (the 3D
  view's offscreen targets, antialiasing) and ``ImGuiRenderer`` (panels);
- UI state: ``studio.state.UIState`` (``app.ui``), edited by the panels ``studio.ui.*``.
``App`` is the frame loop and the model's lifetime; input is ``studio.input``, dragging
``studio.perturb_control``, screenshots and video ``studio.capture``. The UI changes the
simulation only through ``runner.submit`` (applied between steps).

The 3D view is the part of the window the side panel does not cover (``view_rect``): the
camera's projection has that rectangle's aspect ratio and centre, so a model framed on load
(or by Align, Ctrl+A) and a tracked body sit in the middle of what is visible.
"""
from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from . import keyframes
from .capture import Capture
from .loader import load_model_file, save_mjcf
from .runner import Runner
from .state import UIState
from .window import configure_pyglet, make_window

TITLE_EVERY = 0.5            # seconds between window-title status updates
PANEL_WIDTH = 380            # default width of the side panel (times the UI scale)


class App:
    """One studio window: per-frame drawing, model (re)loading, camera and selection."""

    def __init__(self, window, ctx, runner: Runner, model_path: str, ui_scale: float | None = None,
                 render_scale: float | None = None, msaa: int | None = None,
                 error_message: str = ""):
        """``error_message``: the model file ``model_path`` failed to load and ``runner`` holds
        an empty world (studio.loader.empty_world) shown with the message; Ctrl+L retries."""
        from imgui_bundle import imgui, implot

        from . import input as window_input
        from . import settings
        from .imgui_renderer import ImGuiInput, ImGuiRenderer
        from .perturb_control import PerturbController
        from .profiler import Profiler
        from .renderer import Renderer
        from .spacenav import SpaceNav
        from .ui.analysis import AnalysisState
        from .ui.file_browser import FileBrowser
        from .ui.plots import PlotState
        from .viewport import SceneViewport, auto_msaa, auto_render_scale, renderer_name

        self.window, self.ctx = window, ctx
        self.runner = runner
        self.model_path = str(model_path)
        self.viewport = SceneViewport(ctx)
        self.gl_renderer = renderer_name(ctx)
        self.auto_render_scale = auto_render_scale(ctx)
        self.ui = UIState(render_scale_setting=render_scale,
                          msaa=auto_msaa(ctx) if msaa is None else max(int(msaa), 0),
                          output_dir=settings.folder("output_dir", settings.DEFAULT_OUTPUT))
        self.frame_scale = 1.0                       # the render scale of the last frame drawn
        self.frame_snapshot = None                   # the simulation snapshot it drew
        self.panel_rect = None                       # (x0, y0, x1, y1) of the open side panel
        self.panel_color = (0.0, 0.0, 0.0)           # its background
        self.error_message = error_message
        self.empty_world = bool(error_message)      # the runner holds the placeholder world
        self.keys = keyframes.from_model(runner.m)  # studio.keyframes.Key list
        self.plots = PlotState()
        self.analysis = AnalysisState()
        self.profiler = Profiler()
        self.last_recording = runner.record_path   # offered by the Analysis panel
        self.file_browser = FileBrowser(Path(self.model_path).parent, remember="browse_dir")
        self.save_browser = FileBrowser(Path(self.model_path).parent, title="Save as MJCF",
                                        on_pick=self.save_model, save=True)
        self.capture = Capture(self)
        self.perturb = PerturbController(self)
        self.fps = 0.0
        self._fps_frames, self._fps_t = 0, time.perf_counter()
        self._title_t = 0.0
        self._last_frame = None
        self.widgets = {}                        # name -> rect of some widgets (studio.ui.track)
        self.scroll_to = None                    # a tracked widget to scroll into view
        self.open_panels = set()                 # panel headers to open on the next frame
        # ImGui
        self.imgui_ctx = imgui.create_context()
        self.implot_ctx = implot.create_context()
        io = imgui.get_io()
        io.set_ini_filename(None)
        # no keyboard navigation: Space, the arrows and Backspace are the studio's shortcuts (with
        # navigation on, Space would also press the focused button)
        io.config_flags &= ~imgui.ConfigFlags_.nav_enable_keyboard
        ratio = float(window.get_pixel_ratio()) if hasattr(window, "get_pixel_ratio") else 1.0
        env = os.environ.get("STUDIO_UI_SCALE")
        self.ui_scale = float(env) if env else (ui_scale or max(ratio, 1.0))
        style = imgui.get_style()
        style.font_scale_dpi = self.ui_scale
        style.font_size_base = 15.0
        if self.ui_scale != 1.0:
            style.scale_all_sizes(self.ui_scale)
        self.ui.panel_width = PANEL_WIDTH * self.ui_scale
        self.gui = ImGuiRenderer(ctx)
        self.imgui_input = ImGuiInput(window)
        self.spacenav = SpaceNav()
        self.renderer = Renderer(ctx, runner.m, runner.d)
        self.align_camera()
        window_input.install(self)

    @property
    def m(self):
        return self.runner.m

    PANELS = ("Simulation", "Physics options", "Joints", "Controls", "Sensors",
              "Equality constraints", "Rendering", "Plots", "Profiler", "Analysis")

    def open_panel(self, *names) -> None:
        """Open these headers of the side panel (all of them when none is named)."""
        self.open_panels.update(names or self.PANELS)

    @property
    def render_scale(self) -> float:
        """The 3D view's render scale: the setting, or the auto choice (``studio.viewport``)."""
        s = self.ui.render_scale_setting
        return self.auto_render_scale if s is None else s

    # -- the 3D view's rectangle -----------------------------------------------------------------
    def fb_scale(self):
        w, h = self.window.get_framebuffer_size()
        return w / max(self.window.width, 1), h / max(self.window.height, 1)

    @property
    def view_rect(self) -> tuple[int, int, int, int]:
        """(x, y, width, height) in framebuffer pixels (y up) of the 3D view: the window less
        the side panel, which spans the window's height at its left edge."""
        w, h = self.window.get_framebuffer_size()
        if not self.ui.show_panels:
            return 0, 0, w, h
        x0 = min(int(math.ceil(self.ui.panel_width * self.fb_scale()[0])), w - 1)
        return x0, 0, w - x0, h

    def window_to_view(self, x, y):
        """Window point (pyglet coordinates, y up) -> (x, y) in the 3D view's pixels."""
        sx, sy = self.fb_scale()
        x0, y0, _, _ = self.view_rect
        return x * sx - x0, y * sy - y0

    def project(self, point):
        """Window coordinates (pyglet: y up) of a world point as the 3D view shows it."""
        x0, y0, w, h = self.view_rect
        vp, _ = self.renderer.view_projection(w, h)
        c = vp @ np.append(np.asarray(point, float), 1.0)
        ndc = c[:3] / c[3]
        sx, sy = self.fb_scale()
        return (x0 + (ndc[0] + 1) * 0.5 * w) / sx, (y0 + (ndc[1] + 1) * 0.5 * h) / sy

    def pick(self, x, y):
        """(body, geom, world point) under the window point (x, y) (y up)."""
        from .perturb import pick
        vx, vy = self.window_to_view(x, y)
        _, _, w, h = self.view_rect
        return pick(self.runner, self.renderer, vx, vy, w, h,
                    geomgroup=self.renderer.options.groups)

    # -- model loading ---------------------------------------------------------------------------
    def save_model(self, path) -> None:
        """Save the model as MJCF to ``path`` (from the simulation thread, between steps): as
        edited in the panels, with the studio's keyframes (studio.loader.save_mjcf)."""
        keys = list(self.keys)

        def apply(m, d):
            err = save_mjcf(m, str(path), keys)
            self.status = err or f"saved {path}"
        self.runner.submit(apply)

    def open_model(self, path, keep_state=False) -> bool:
        """Load ``path``; on error show the message and keep the current model running."""
        m, d, err = load_model_file(path)
        if err is not None:
            self.error_message = err
            if self.empty_world:                 # nothing loaded yet: Ctrl+L retries this file
                self.model_path = str(path)
            print(f"studio: {err}", file=sys.stderr, flush=True)
            return False
        old = self.runner
        old.stop_thread()
        if old.recording:
            self.last_recording = old.record_path
        old.close_recorder()                     # a recording belongs to one model
        # the state and the keyframes saved in the studio carry over when the sizes match
        keep = keep_state and all(getattr(m, k) == getattr(old.m, k)
                                  for k in ("nq", "nv", "na", "nu", "nmocap"))
        self.keys = keyframes.merge(m, self.keys) if keep else keyframes.from_model(m)
        from .renderer import Renderer
        new_renderer = Renderer(self.ctx, m, d)          # statistics at qpos0, before the state
        if keep:
            od = old.d
            d.time = od.time
            for f in ("qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat"):
                getattr(d, f)[...] = getattr(od, f)
            import engine
            engine.forward(m, d)
        runner = Runner(m, d, paused=old.paused)
        runner.speed = old.speed
        runner.noise = old.noise
        if old.inverse_check is not None:
            runner.set_inverse_check(True)
        runner.frames, runner.steps, runner.sim_time = old.frames, old.steps, old.sim_time
        runner.start = old.start
        self.runner = runner
        camera = self.renderer.camera
        options = self.renderer.options
        self.renderer.release()
        self.renderer = new_renderer
        if keep_state:
            self.renderer.camera = camera
            self.renderer.options = options
        else:
            self.align_camera()
        ui = self.ui
        ui.selected_body = None
        self.perturb.reset()
        ui.camera_index = -1
        ui.tracking = False
        ui.keyframe = min(ui.keyframe, max(len(self.keys) - 1, 0)) if keep else 0
        if keep:
            self.plots.clear()
        else:
            self.plots.reset_choices()
            ui.tendon_reference = None
        self.profiler.clear()
        self.error_message = ""
        self.empty_world = False
        self.model_path = str(path)
        runner.start_thread()
        ui.say(f"loaded {path}")
        return True

    def reload(self) -> bool:
        return self.open_model(self.model_path, keep_state=True)

    def reset(self, key=None) -> None:
        """Reset the simulation (Backspace, the Reset button, a keyframe): the drags and the
        status line go with the old state."""
        self.perturb.end()
        self.ui.status = ""
        self.runner.reset(key)

    # -- camera ----------------------------------------------------------------------------------
    def set_camera(self, index: int) -> None:
        self.ui.camera_index = index if 0 <= index < self.m.ncam else -1

    def set_tracking(self, on: bool) -> None:
        b = self.ui.selected_body
        self.ui.tracking = bool(on) and b is not None and b > 0

    def align_camera(self) -> None:
        """Frame the whole model in the visible 3D view, as MuJoCo's free camera on load (and
        simulate's Align): look at stat.center from 1.5 stat.extent, the model's azimuth and
        elevation (Renderer.align)."""
        _, _, w, h = self.view_rect
        self.renderer.align(w / max(h, 1))
        self.ui.camera_index = -1
        self.ui.tracking = False

    def _update_camera(self, snap) -> None:
        r = self.renderer
        ui = self.ui
        if ui.camera_index >= 0:
            k = ui.camera_index
            r.fixed_camera = (snap.cam_xpos[k], snap.cam_xmat[k], float(self.m.cam_fovy[k]))
        else:
            r.fixed_camera = None
        if ui.tracking and ui.selected_body:       # as MuJoCo's tracking camera: the subtree's
            r.camera.lookat = np.array(snap.subtree_com[ui.selected_body], float)   # com

    # -- selection -------------------------------------------------------------------------------
    def select_at(self, x, y) -> int:
        """Double-click: select the body under the window point (x, y measured up); -1 for none."""
        body, geom, point = self.pick(x, y)
        self.ui.selected_body = body if body > 0 else None
        if self.ui.selected_body is None:
            self.ui.tracking = False
        return body

    def body_name(self, b) -> str:
        from .ui import label
        return label(self.m, "body", b)

    # -- drawing ---------------------------------------------------------------------------------
    def draw_frame(self) -> None:
        from imgui_bundle import imgui

        from . import scene
        from .ui import (analysis, controls, equality, file_browser, help, info, joints, options,
                         overlay, plots, profiler, rendering, sensors, simulation, track)

        ui = self.ui
        w, h = self.window.get_framebuffer_size()
        self.perturb.update_spacenav(self.spacenav)
        self.profiler.sample(self.runner)
        # the panels first (they may change what the scene shows), drawn over the scene below
        io = imgui.get_io()
        io.display_size = imgui.ImVec2(float(self.window.width), float(self.window.height))
        sx, sy = self.fb_scale()
        io.display_framebuffer_scale = imgui.ImVec2(sx, sy)
        now = time.perf_counter()
        io.delta_time = max(now - (self._last_frame or now - 1 / 60), 1e-4)
        self._last_frame = now
        imgui.new_frame()
        self.panel_rect = None
        if ui.show_panels:
            # docked at the left edge over the window's whole height (also after a resize);
            # the user may change its width
            height = float(self.window.height)
            imgui.set_next_window_pos(imgui.ImVec2(0, 0), imgui.Cond_.always)
            imgui.set_next_window_size(imgui.ImVec2(ui.panel_width, height), imgui.Cond_.always)
            # its opaque background is cleared (_clear_panel) rather than drawn by ImGui: a
            # blended rectangle over a third of the window costs a software rasteriser ~1 ms
            bg = imgui.get_style_color_vec4(imgui.Col_.window_bg)
            self.panel_color = (bg.x, bg.y, bg.z)
            imgui.push_style_color(imgui.Col_.window_bg, imgui.ImVec4(bg.x, bg.y, bg.z, 0.0))
            opened = imgui.begin("Studio", None, imgui.WindowFlags_.no_move
                                 | imgui.WindowFlags_.no_collapse)[0]
            imgui.pop_style_color()
            if opened:
                pos, size = imgui.get_window_pos(), imgui.get_window_size()
                # a drag of the panel's right edge: keep the new width (a fifth to half the window)
                lo, hi = 200.0 * self.ui_scale, max(0.6 * self.window.width, 200.0 * self.ui_scale)
                ui.panel_width = float(min(max(size.x, lo), hi))
                self.panel_rect = (pos.x, pos.y, pos.x + size.x, pos.y + size.y)
                if imgui.button("Open..."):
                    self.file_browser.show()
                track(self, "open_model")
                imgui.same_line()
                if imgui.button("Save as MJCF..."):
                    model = Path(self.model_path)
                    self.save_browser.show(model.with_name(model.stem + "-saved.xml"))
                track(self, "save_model")
                imgui.same_line()
                imgui.text(os.path.basename(self.model_path))
                simulation.draw(self)
                options.draw(self)
                joints.draw(self)
                controls.draw(self)
                sensors.draw(self)
                equality.draw(self)
                rendering.draw(self)
                plots.draw(self)
                profiler.draw(self)
                analysis.draw(self)
            imgui.end()
            analysis.draw_window(self)
            info.draw(self)
        else:
            self.plots.sample(self)
        snap = self.frame_snapshot = self.runner.snapshot
        self._update_camera(snap)
        x0, y0, vw, vh = self.view_rect
        overlay.draw(self, snap)                 # labels at the objects, over the 3D view
        profiler.draw_window(self)
        help.draw(self)
        file_browser.draw(self)
        file_browser.draw(self, self.save_browser)
        self._draw_error()
        imgui.render()
        # the scene: screenshots and video frames are read from the window, so those frames are
        # drawn at full resolution
        extent = self.renderer.extent
        opts = self.renderer.options
        opts.wireframe = ui.wireframe
        sc = scene.build(self.m, snap, opts, colors=self.renderer.colors,
                         selected_body=ui.selected_body,
                         perturb_line=self.perturb.spring_line(snap), extent=extent,
                         force_scale=ui.force_scale * scene.default_force_scale(self.m, extent),
                         tendon_reference=ui.tendon_reference, frames=ui.frames)
        full = self.capture.full_frame
        self.frame_scale = 1.0 if full else self.render_scale
        self.ctx.screen.use()
        self.viewport.draw(self.renderer, self.ctx.screen, (x0, y0, vw, vh), snap, scene=sc,
                           scale=self.frame_scale, msaa=ui.msaa, fxaa=ui.fxaa)
        self.capture.after_scene()
        self._clear_panel()
        self.gui.render(imgui.get_draw_data(), self.ctx.screen)
        self.runner.frames += 1
        self._count_fps()

    def _clear_panel(self) -> None:
        """The side panel's background: its rectangle of the window cleared to the colour."""
        if self.panel_rect is None:
            return
        x0, y0, x1, y1 = self.panel_rect
        sx, sy = self.fb_scale()
        height = self.window.get_framebuffer_size()[1]
        rect = (int(x0 * sx), int(height - y1 * sy), int(math.ceil((x1 - x0) * sx)),
                int(math.ceil((y1 - y0) * sy)))
        self.ctx.screen.clear(*self.panel_color, 1.0, viewport=rect)

    def _draw_error(self) -> None:
        from imgui_bundle import imgui

        from .ui import track
        if not self.error_message:
            return
        vp = imgui.get_main_viewport()
        imgui.set_next_window_pos(imgui.ImVec2(vp.work_pos.x + vp.work_size.x * 0.5,
                                               vp.work_pos.y + 40 * self.ui_scale),
                                  imgui.Cond_.always, imgui.ImVec2(0.5, 0.0))
        imgui.set_next_window_size(imgui.ImVec2(min(700 * self.ui_scale, vp.work_size.x * 0.9), 0))
        if imgui.begin("Model error", None, imgui.WindowFlags_.no_collapse)[0]:
            imgui.text_colored(imgui.ImVec4(1.0, 0.5, 0.4, 1.0), "The model could not be loaded:")
            imgui.text_wrapped(self.error_message)
            if self.empty_world:
                imgui.text_wrapped("An empty world is shown. Fix the file and reload it (Ctrl+L), "
                                   "or open another model (Ctrl+O).")
            else:
                imgui.text("The previous model keeps running.")
            if imgui.button("Dismiss"):
                self.error_message = ""
            track(self, "dismiss")
        imgui.end()

    def _count_fps(self) -> None:
        self._fps_frames += 1
        now = time.perf_counter()
        if now - self._fps_t >= 0.5:
            self.fps = self._fps_frames / (now - self._fps_t)
            self._fps_frames, self._fps_t = 0, now
        if now - self._title_t >= TITLE_EVERY:
            self._title_t = now
            status = "paused" if self.runner.paused else "running"
            self.window.set_caption(f"studio - {os.path.basename(self.model_path)} - "
                                    f"t={self.runner.snapshot.time:.2f}s {status} {self.fps:.0f} fps")

    # -- lifetime --------------------------------------------------------------------------------
    def pump(self, frames: int = 1) -> None:
        """Process window events and draw ``frames`` frames (for tests and scripted use)."""
        import pyglet
        for _ in range(frames):
            self.window.switch_to()
            self.window.dispatch_events()
            pyglet.clock.tick()
            self.window.dispatch_event("on_draw")
            self.window.flip()

    def close(self) -> None:
        """Stop the simulation, release the GPU resources while the window's GL context is
        current, then close the window (every way of quitting ends here; safe to call twice)."""
        from imgui_bundle import imgui, implot
        if self.imgui_ctx is None:
            return
        self.runner.stop_thread()
        self.runner.close_recorder()
        self.spacenav.close()
        self.capture.close()
        win = self.window
        if win.context is not None:
            win.switch_to()
            self.gui.release()
            self.viewport.release()
            self.renderer.release()
            # pyglet's own default program and its uniform buffer: deleted now, not by the
            # garbage collector once the context is gone (a GL error raised in their __del__)
            program = getattr(win, "_default_program", None)
            if program is not None and program.id is not None:
                program.delete()
            buffer = getattr(getattr(win, "ubo", None), "buffer", None)
            if buffer is not None and buffer.id is not None:
                buffer.delete()
        implot.destroy_context(self.implot_ctx)
        imgui.destroy_context(self.imgui_ctx)
        self.imgui_ctx = self.implot_ctx = None
        win.close()


def create_app(runner: Runner, model_path, width=1280, height=720, msaa=None,
               render_scale=None, error_message="", window=None) -> App:
    """Window, GL context and App for ``runner`` (the simulation thread is started).
    ``msaa`` (samples) and ``render_scale`` (0.25..1) of the 3D viewport: None for auto;
    ``error_message``: see App; ``window``: an open window to use (the start-up screen's)."""
    configure_pyglet()
    import moderngl

    if window is None:
        window = make_window(width, height, f"studio - {os.path.basename(str(model_path))}")
    ctx = moderngl.create_context()
    app = App(window, ctx, runner, model_path, render_scale=render_scale, msaa=msaa,
              error_message=error_message)
    runner.start_thread()
    return app


def run_window(runner: Runner, args, error_message="", window=None) -> Runner:
    import pyglet

    app = create_app(runner, args.model, args.width, args.height, args.msaa,
                     getattr(args, "render_scale", None), error_message, window=window)
    if args.duration is not None:
        pyglet.clock.schedule_once(lambda dt: app.close(), args.duration)
    if getattr(args, "frames", 0) > 0:
        def quit_after_frames(dt):
            if app.runner.frames >= args.frames:
                app.close()
        pyglet.clock.schedule_interval(quit_after_frames, 0.05)
    app.runner.start_time = app.runner.start = time.perf_counter()
    try:
        fps = getattr(args, "max_fps", 60.0) or 0.0
        pyglet.app.run(1.0 / fps if fps > 0 else 0)
    finally:
        final = app.runner
        app.close()
    return final

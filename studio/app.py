"""The studio window: pyglet (OpenGL 3.3 core) drawn with moderngl, ImGui panels on top.

State is kept in four separate places:
- simulation state: the ``Runner`` (Model, Data, the simulation thread, published Snapshots);
- the visual scene: ``studio.scene.build`` from the newest Snapshot, once per frame;
- GPU resources: ``Renderer`` (geoms, shadows) and ``ImGuiRenderer`` (panels);
- UI state: this ``App`` (selection, camera, toggles, panel state), edited by ``studio.ui.*``.
The UI changes the simulation only through ``runner.submit`` (applied between steps).
"""
from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from . import keyframes
from .loader import load_model_file, save_mjcf
from .runner import Runner

TITLE_EVERY = 0.5            # seconds between window-title status updates
DOUBLE_CLICK = 0.35          # seconds between the presses of a double-click
VIDEO_FPS = 30


class VideoClock:
    """Which video frames (VIDEO_FPS) a drawn frame stands for. The video's time follows the
    simulated time (divided by the speed, so slow motion stays slow) while the simulation runs,
    and the wall clock while it is paused; a drawn frame is written once for every video frame
    whose time it reaches, so the video plays at the right pace however fast frames are drawn
    (below VIDEO_FPS, frames repeat)."""

    def __init__(self, sim_time: float):
        self.t = 0.0                     # video seconds so far
        self.written = 0
        self.sim, self.wall = sim_time, time.perf_counter()

    def frames_due(self, sim_time: float, paused: bool, speed: float) -> int:
        now = time.perf_counter()
        if paused or sim_time < self.sim:            # paused, or reset / history: the wall clock
            self.t += now - self.wall
        else:
            self.t += (sim_time - self.sim) / max(speed, 1e-6)
        self.sim, self.wall = sim_time, now
        due = int(self.t * VIDEO_FPS + 1e-9) + 1 - self.written     # frame k shows time k/fps
        self.written += max(due, 0)
        return max(due, 0)


def _gl_config():
    """OpenGL 3.3 core, double-buffered, single-sampled: the scene is multisampled (when it is)
    in its own offscreen framebuffer (``studio.viewport``), the panels need no multisampling."""
    from pyglet import gl

    return gl.Config(major_version=3, minor_version=3, forward_compatible=True, depth_size=24,
                     double_buffer=True)


def configure_pyglet():
    """Before pyglet.window is imported: without a display, run the window offscreen on EGL."""
    import pyglet

    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") \
            and not os.environ.get("WAYLAND_DISPLAY"):
        print("studio: no display found; rendering offscreen through EGL", file=sys.stderr)
        pyglet.options.headless = True
        pyglet.options.shadow_window = False


_configure_pyglet = configure_pyglet


def make_window(width, height, title):
    import pyglet.window

    last = None
    for drops in (True, False):
        try:
            return pyglet.window.Window(width=width, height=height, caption=title,
                                        resizable=True, config=_gl_config(), vsync=False,
                                        file_drops=drops)
        except pyglet.window.NoSuchConfigException:
            raise
        except Exception as e:              # file drops unsupported on this platform
            last = e
    raise last


class App:
    """One studio window: input handling, per-frame drawing, model (re)loading."""

    def __init__(self, window, ctx, runner: Runner, model_path: str, ui_scale: float | None = None,
                 render_scale: float | None = None, msaa: int | None = None,
                 error_message: str = ""):
        """``error_message``: the model file ``model_path`` failed to load and ``runner`` holds
        an empty world (studio.loader.empty_world) shown with the message; Ctrl+L retries."""
        from imgui_bundle import imgui, implot

        from .imgui_renderer import ImGuiInput, ImGuiRenderer
        from .renderer import Renderer
        from .ui.file_browser import FileBrowser
        from .ui.analysis import AnalysisState
        from .ui.plots import PlotState
        from .viewport import SceneViewport, auto_msaa, auto_render_scale, renderer_name

        self.window, self.ctx = window, ctx
        self.runner = runner
        self.model_path = str(model_path)
        self.renderer = Renderer(ctx, runner.m)
        self.renderer.frame_model(runner.d)
        self.viewport = SceneViewport(ctx)
        self.gl_renderer = renderer_name(ctx)
        self.auto_render_scale = auto_render_scale(ctx)
        self.render_scale_setting = render_scale     # None: auto
        self.msaa = auto_msaa(ctx) if msaa is None else max(int(msaa), 0)
        self.frame_scale = 1.0                       # the render scale of the last frame drawn
        self.force_scale = 1.0                       # force arrows: x scene.default_force_scale
        self.tendon_reference = None                 # N drawn fully red (None: the model's weight)
        self.panel_rect = None                       # (x0, y0, x1, y1) of the open side panel
        # UI state
        self.selected_body = None
        self.perturbation = None
        self.camera_index = -1
        self.tracking = False
        self.keys = keyframes.from_model(runner.m)      # studio.keyframes.Key list
        self.keyframe = 0                               # the one chosen in the panel
        self.show_help = False
        self.show_panels = True
        self.error_message = error_message
        self.empty_world = bool(error_message)      # the runner holds the placeholder world
        self.status = ""
        self.video = None
        self._video_path = None
        self._video_clock = None                  # VideoClock while a video is recorded
        self._screenshot_requested = False
        self.plots = PlotState()
        self.analysis = AnalysisState()
        self.last_recording = runner.record_path   # offered by the Analysis panel
        self.file_browser = FileBrowser(Path(self.model_path).parent)
        self.save_browser = FileBrowser(Path(self.model_path).parent, title="Save as MJCF",
                                        on_pick=self.save_model, save=True)
        self.fps = 0.0
        self._fps_frames, self._fps_t = 0, time.perf_counter()
        self._title_t = 0.0
        self._press = {}                         # button -> (time, x, y) of the last press
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
        self.gui = ImGuiRenderer(ctx)
        self.input = ImGuiInput(window)
        from .spacenav import SpaceNav
        self.spacenav = SpaceNav()
        self._spacenav_pert = None
        self._spacenav_t = None                  # time of the last poll while deflected
        self._install_handlers()

    @property
    def m(self):
        return self.runner.m

    PANELS = ("Simulation", "Physics options", "Joints", "Controls", "Equality constraints",
              "Rendering", "Plots", "Analysis")

    def open_panel(self, *names) -> None:
        """Open these headers of the side panel (all of them when none is named)."""
        self.open_panels.update(names or self.PANELS)

    @property
    def render_scale(self) -> float:
        """The 3D viewport's render scale: the setting, or the auto choice (``studio.viewport``)."""
        s = self.render_scale_setting
        return self.auto_render_scale if s is None else s

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
        if keep:
            od = old.d
            d.time = od.time
            for f in ("qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat"):
                getattr(d, f)[...] = getattr(od, f)
            import engine
            engine.forward(m, d)
        runner = Runner(m, d, paused=old.paused)
        runner.speed = old.speed
        if old.inverse_check is not None:
            runner.set_inverse_check(True)
        runner.frames, runner.steps, runner.sim_time = old.frames, old.steps, old.sim_time
        runner.start = old.start
        self.runner = runner
        camera = self.renderer.camera
        self.renderer.release()
        from .renderer import Renderer
        self.renderer = Renderer(self.ctx, m)
        self.renderer.frame_model(d)
        if keep_state:
            self.renderer.camera = camera
        self.selected_body = None
        self.perturbation = None
        self.camera_index = -1
        self.tracking = False
        self.keyframe = min(self.keyframe, max(len(self.keys) - 1, 0)) if keep else 0
        if keep:
            self.plots.clear()
        else:
            self.plots.reset_choices()
        if not keep_state:
            self.tendon_reference = None
        self.error_message = ""
        self.empty_world = False
        self.model_path = str(path)
        runner.start_thread()
        self.status = f"loaded {path}"
        return True

    def reload(self) -> bool:
        return self.open_model(self.model_path, keep_state=True)

    # -- camera ----------------------------------------------------------------------------------
    def set_camera(self, index: int) -> None:
        self.camera_index = index if 0 <= index < self.m.ncam else -1

    def set_tracking(self, on: bool) -> None:
        self.tracking = bool(on) and self.selected_body is not None and self.selected_body > 0

    def _update_camera(self, snap) -> None:
        r = self.renderer
        if self.camera_index >= 0:
            k = self.camera_index
            r.fixed_camera = (snap.cam_xpos[k], snap.cam_xmat[k], float(self.m.cam_fovy[k]))
        else:
            r.fixed_camera = None
        if self.tracking and self.selected_body:
            target = snap.xipos[self.selected_body]
            r.camera.target += 0.2 * (target - r.camera.target)

    # -- selection and perturbation --------------------------------------------------------------
    def select_at(self, x, y) -> int:
        """Double-click: select the body under the pixel (x, y measured up); -1 for none."""
        from .perturb import pick
        w, h = self.window.get_framebuffer_size()
        sx, sy = self._fb_scale()
        body, geom, point = pick(self.runner, self.renderer, x * sx, y * sy, w, h,
                                 geomgroup=self.renderer.options.groups)
        self.selected_body = body if body > 0 else None
        self._select_point = point
        if self.selected_body is None:
            self.tracking = False
        return body

    def _fb_scale(self):
        w, h = self.window.get_framebuffer_size()
        return w / max(self.window.width, 1), h / max(self.window.height, 1)

    def body_name(self, b) -> str:
        names = self.m.names["body"]
        return names[b] if b < len(names) and names[b] else f"body {b}"

    def begin_perturbation(self, x, y, mode) -> None:
        """Ctrl+drag on the selected body: a spring towards the dragged target whenever the
        simulation runs (also after resuming a drag begun while paused); while paused the drag
        moves the pose (studio.perturb.Perturbation.move_pose)."""
        from .perturb import Perturbation, movable, pick
        b = self.selected_body
        if b is None or b <= 0:
            return
        if not movable(self.m, b):
            self.status = f"{self.body_name(b)} is welded to the world: a drag cannot move it"
            return
        w, h = self.window.get_framebuffer_size()
        sx, sy = self._fb_scale()
        body, _, point = pick(self.runner, self.renderer, x * sx, y * sy, w, h)
        r = self.runner
        with r.lock:
            if body != b or point is None:
                point = r.d.xipos[b].copy()
            p = Perturbation(r.m, r.d, b, point)
        p.mode = mode
        p.active = True
        self.perturbation = p
        r.set_perturb(p.apply)           # the spring acts whenever the simulation runs

    def drag_perturbation(self, dx, dy) -> None:
        p = self.perturbation
        if p is None or not p.active:
            return
        cam = self.renderer.camera
        view = cam.view()
        right, up = view[0, :3], view[1, :3]
        if p.mode == "translate":
            dist = float(np.linalg.norm(p.target_pos - cam.eye))
            _, h = self.window.get_size()
            scale = 2.0 * dist * math.tan(math.radians(cam.fovy) / 2.0) / max(h, 1)
            p.translate(scale * (dx * right + dy * up))
        else:
            if dx:
                p.rotate(up, 0.01 * dx)
            if dy:
                p.rotate(right, -0.01 * dy)
        if self.runner.paused:
            def move(m, d, p=p):
                p.move_pose(m, d)
            self.runner.submit(move)

    def end_perturbation(self) -> None:
        p = self.perturbation
        if p is None:
            return
        p.active = False
        if not np.any(p.extra_force) and not np.any(p.extra_torque):
            self.runner.set_perturb(None, release=p.release)
        self.perturbation = None

    def update_spacenav(self) -> None:
        """3D mouse: a force and torque on the selected body proportional to the deflection;
        while paused, the deflection moves the body's pose."""
        from .perturb import Perturbation
        from .spacenav import to_world
        motion = self.spacenav.poll()
        b = self.selected_body
        p = self._spacenav_pert
        r = self.runner
        if p is not None and (p.body != b or not np.any(motion) or r.paused):
            p.extra_force[:] = 0.0
            p.extra_torque[:] = 0.0
            r.set_perturb(None, release=p.release)
            self._spacenav_pert = p = None
        now = time.perf_counter()
        dt = min(now - self._spacenav_t, 0.1) if self._spacenav_t is not None else 1.0 / 60.0
        self._spacenav_t = now if np.any(motion) else None
        if b is None or b <= 0 or not np.any(motion):
            return
        if self.perturbation is not None and self.perturbation.active:
            return                              # the mouse drag has the body
        if r.paused:
            self._spacenav_move(b, motion, dt)
            return
        if p is None:
            with r.lock:
                p = Perturbation(r.m, r.d, b, r.d.xipos[b].copy())
            self._spacenav_pert = p
        t, rot = to_world(motion, self.renderer.camera.view())
        m = self.m
        weight = float(m.body_subtreemass[b]) * max(float(np.linalg.norm(m.opt.gravity)), 9.81)
        p.extra_force = 2.0 * weight * t
        p.extra_torque = 2.0 * weight * self.renderer.extent * 0.2 * rot
        r.set_perturb(p.apply)

    SPACENAV_SPEED = 1.0     # while paused, full deflection: the model's size per second, 1 rad/s

    def _spacenav_move(self, b, motion, dt) -> None:
        """Paused: move the pose of body ``b`` (mocap, free, or its joints: move_pose) by the
        deflection times ``dt``."""
        from .perturb import Perturbation
        from .spacenav import to_world
        t, rot = to_world(motion, self.renderer.camera.view())
        shift = self.SPACENAV_SPEED * self.renderer.extent * dt * t
        angle = self.SPACENAV_SPEED * dt * float(np.linalg.norm(rot))

        def move(m, d):
            p = Perturbation(m, d, b, d.xipos[b].copy())
            p.mode = "pose"
            p.translate(shift)
            p.rotate(rot, angle)
            p.move_pose(m, d)
        self.runner.submit(move)

    def perturb_line(self, snap):
        p = self.perturbation
        if p is None or not p.active or p.mode != "translate":
            return None
        point = snap.xpos[p.body] + snap.xmat[p.body].reshape(3, 3) @ p.local
        return point, p.target_pos

    # -- screenshot and video --------------------------------------------------------------------
    def request_screenshot(self) -> None:
        self._screenshot_requested = True

    def toggle_video(self) -> None:
        if self.video is not None:
            try:
                self.video.close()
            except Exception:
                pass
            self.video = None
            self.status = f"saved {self._video_path}"
            return
        try:
            import imageio_ffmpeg
        except ImportError:
            self.status = "video needs the imageio-ffmpeg package (pip install imageio-ffmpeg)"
            return
        w, h = self.window.get_framebuffer_size()
        w, h = w - w % 2, h - h % 2
        self._video_path = time.strftime("studio-%Y%m%d-%H%M%S.mp4")
        gen = imageio_ffmpeg.write_frames(self._video_path, (w, h), fps=VIDEO_FPS,
                                          macro_block_size=1, quality=7)
        gen.send(None)
        self.start_video(gen, (w, h))
        self.status = f"recording {self._video_path}"

    def start_video(self, writer, size) -> None:
        """Send the frames to ``writer`` (``send(bytes)`` of size[1] x size[0] RGB, ``close()``)."""
        self.video, self._video_size = writer, size
        self._video_clock = VideoClock(self.runner.snapshot.time)

    def _capture(self, w, h):
        raw = self.ctx.screen.read(viewport=(0, 0, w, h), components=3, alignment=1)
        _ = self.ctx.error              # reading the default framebuffer leaves an error pending
        return np.frombuffer(raw, np.uint8).reshape(h, w, 3)[::-1]

    def _after_scene(self, w, h) -> None:
        if self._screenshot_requested:
            self._screenshot_requested = False
            from PIL import Image
            path = time.strftime("studio-%Y%m%d-%H%M%S.png")
            Image.fromarray(np.ascontiguousarray(self._capture(w, h)), "RGB").save(path)
            self.status = f"saved {path}"
        if self.video is not None:
            r = self.runner
            due = self._video_clock.frames_due(r.snapshot.time, r.paused, r.speed)
            vw, vh = self._video_size
            img = self._capture(w, h)[:vh, :vw] if due else None
            if img is not None and img.shape[:2] == (vh, vw):
                data = np.ascontiguousarray(img).tobytes()
                for _ in range(due):
                    self.video.send(data)

    # -- drawing ---------------------------------------------------------------------------------
    def draw_frame(self) -> None:
        from imgui_bundle import imgui

        from . import scene
        from .ui import (analysis, controls, equality, file_browser, help, info, joints, options,
                         plots, rendering, simulation, track)

        w, h = self.window.get_framebuffer_size()
        self.update_spacenav()
        # the panels first (they may change what the scene shows), drawn over the scene below
        io = imgui.get_io()
        io.display_size = imgui.ImVec2(float(self.window.width), float(self.window.height))
        sx, sy = self._fb_scale()
        io.display_framebuffer_scale = imgui.ImVec2(sx, sy)
        now = time.perf_counter()
        io.delta_time = max(now - getattr(self, "_last_frame", now - 1 / 60), 1e-4)
        self._last_frame = now
        imgui.new_frame()
        panel = self.panel_rect = None
        if self.show_panels:
            imgui.set_next_window_pos(imgui.ImVec2(0, 0), imgui.Cond_.first_use_ever)
            imgui.set_next_window_size(imgui.ImVec2(380 * self.ui_scale, self.window.height),
                                       imgui.Cond_.first_use_ever)
            bg = imgui.get_style_color_vec4(imgui.Col_.window_bg)
            imgui.push_style_color(imgui.Col_.window_bg, imgui.ImVec4(bg.x, bg.y, bg.z, 1.0))
            opened = imgui.begin("Studio")[0]
            imgui.pop_style_color()
            if opened:
                pos, size = imgui.get_window_pos(), imgui.get_window_size()
                panel = self.panel_rect = (pos.x, pos.y, pos.x + size.x, pos.y + size.y)
                if imgui.button("Open..."):
                    self.file_browser.show(Path(self.model_path).parent)
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
                equality.draw(self)
                rendering.draw(self)
                plots.draw(self)
                analysis.draw(self)
            imgui.end()
            analysis.draw_window(self)
            info.draw(self)
        else:
            self.plots.sample(self)
        help.draw(self)
        file_browser.draw(self)
        file_browser.draw(self, self.save_browser)
        self._draw_error()
        imgui.render()
        # the scene: screenshots and video frames are read from the window, so those frames are
        # drawn at full resolution and whole
        snap = self.runner.snapshot
        self._update_camera(snap)
        extent = self.renderer.extent
        sc = scene.build(self.m, snap, self.renderer.options, colors=self.renderer.colors,
                         selected_body=self.selected_body, perturb_line=self.perturb_line(snap),
                         extent=extent,
                         force_scale=self.force_scale * scene.default_force_scale(self.m, extent),
                         tendon_reference=self.tendon_reference)
        full = self._screenshot_requested or self.video is not None
        self.frame_scale = 1.0 if full else self.render_scale
        self.viewport.draw(self.renderer, self.ctx.screen, w, h, snap, scene=sc,
                           scale=self.frame_scale, msaa=self.msaa,
                           columns=None if full else self._scene_columns(panel, w))
        self._after_scene(w, h)
        self.gui.render(imgui.get_draw_data(), self.ctx.screen)
        self.runner.frames += 1
        self._count_fps()

    def _scene_columns(self, panel, width):
        """The window pixel columns (x0, x1) not hidden by the opaque side panel, which spans the
        window's height at its left or right edge (anywhere else: None, all columns)."""
        if panel is None:
            return None
        x0, y0, x1, y1 = panel
        if y0 > 0.5 or y1 < self.window.height - 0.5:
            return None
        sx, _ = self._fb_scale()
        if x0 <= 0.5:
            return math.ceil(x1 * sx), width
        if x1 >= self.window.width - 0.5:
            return 0, math.floor(x0 * sx)
        return None

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

    # -- input -----------------------------------------------------------------------------------
    def _install_handlers(self) -> None:
        import pyglet
        from imgui_bundle import imgui
        from pyglet.window import key, mouse

        win = self.window
        io = imgui.get_io()

        @win.event
        def on_draw():
            self.draw_frame()

        @win.event
        def on_mouse_motion(x, y, dx, dy):
            self.input.mouse_motion(x, y)

        @win.event
        def on_mouse_press(x, y, button, modifiers):
            self.input.mouse_button(x, y, button, modifiers, True)
            if io.want_capture_mouse:
                return pyglet.event.EVENT_HANDLED
            now = time.perf_counter()
            last = self._press.get(button)
            self._press[button] = (now, x, y)
            if button == mouse.LEFT and last is not None and now - last[0] < DOUBLE_CLICK \
                    and abs(x - last[1]) < 6 and abs(y - last[2]) < 6:
                self.select_at(x, y)
                self._press.pop(button, None)
            elif modifiers & key.MOD_CTRL and button in (mouse.LEFT, mouse.RIGHT):
                self.begin_perturbation(x, y, "rotate" if button == mouse.LEFT else "translate")
            return pyglet.event.EVENT_HANDLED

        @win.event
        def on_mouse_release(x, y, button, modifiers):
            self.input.mouse_button(x, y, button, modifiers, False)
            self.end_perturbation()
            return pyglet.event.EVENT_HANDLED

        @win.event
        def on_mouse_drag(x, y, dx, dy, buttons, modifiers):
            self.input.mouse_motion(x, y)
            if self.perturbation is not None and self.perturbation.active:
                self.drag_perturbation(dx, dy)
                return pyglet.event.EVENT_HANDLED
            if io.want_capture_mouse:
                return pyglet.event.EVENT_HANDLED
            cam = self.renderer.camera
            if buttons & mouse.LEFT:
                cam.orbit(dx, -dy)
            elif buttons & (mouse.RIGHT | mouse.MIDDLE):
                cam.pan(dx, dy, win.height)
                self.tracking = False
            return pyglet.event.EVENT_HANDLED

        @win.event
        def on_mouse_scroll(x, y, scroll_x, scroll_y):
            self.input.scroll(scroll_x, scroll_y)
            if not io.want_capture_mouse:
                self.renderer.camera.zoom(scroll_y)
            return pyglet.event.EVENT_HANDLED

        @win.event
        def on_text(text):
            self.input.text(text)

        @win.event
        def on_key_release(symbol, modifiers):
            self.input.key(symbol, modifiers, False)
            return pyglet.event.EVENT_HANDLED

        @win.event
        def on_key_press(symbol, modifiers):
            self.input.key(symbol, modifiers, True)
            if io.want_capture_keyboard:     # a text field (or a widget being edited) has it
                return pyglet.event.EVENT_HANDLED
            self.shortcut(symbol, modifiers)
            return pyglet.event.EVENT_HANDLED

        @win.event
        def on_close():
            self.close()
            return pyglet.event.EVENT_HANDLED

        def on_file_drop(x, y, paths):
            if paths:
                self.open_model(paths[0])
        win.push_handlers(on_file_drop=on_file_drop)

    def shortcut(self, symbol, modifiers) -> None:
        """Keyboard shortcuts (listed in studio.ui.help)."""
        from pyglet.window import key

        from .ui.simulation import set_speed
        r = self.runner
        ctrl = bool(modifiers & key.MOD_CTRL)
        if ctrl and symbol == key.L:
            self.reload()
        elif ctrl and symbol == key.O:
            self.file_browser.show(Path(self.model_path).parent)
        elif ctrl and symbol == key.P:
            self.request_screenshot()
        elif ctrl and symbol == key.V:
            self.toggle_video()
        elif symbol == key.ESCAPE:
            if self.show_help:
                self.show_help = False
            elif self.selected_body is not None:
                self.selected_body = None
                self.tracking = False
            else:
                self.close()
        elif symbol == key.F1:
            self.show_help = not self.show_help
        elif symbol == key.SPACE:
            r.toggle_pause()
        elif symbol == key.BACKSPACE:
            r.reset()
        elif symbol == key.RIGHT and r.paused:
            if r.history_back > 0:
                r.seek(+1)
            else:
                r.single_step()
        elif symbol == key.LEFT:
            r.seek(-1)
        elif symbol == key.TAB:
            self.show_panels = not self.show_panels
        elif symbol == key.MINUS:
            set_speed(self, r.speed / 2.0)
        elif symbol == key.EQUAL:
            set_speed(self, r.speed * 2.0)
        elif symbol == key.T:
            self.set_tracking(not self.tracking)
        elif symbol == key.C:
            nxt = self.camera_index + 1
            self.set_camera(nxt if nxt < self.m.ncam else -1)

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
        if self.video is not None:
            self.toggle_video()
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
               render_scale=None, error_message="") -> App:
    """Window, GL context and App for ``runner`` (the simulation thread is started).
    ``msaa`` (samples) and ``render_scale`` (0.25..1) of the 3D viewport: None for auto;
    ``error_message``: see App."""
    configure_pyglet()
    import moderngl

    window = make_window(width, height, f"studio - {os.path.basename(str(model_path))}")
    ctx = moderngl.create_context()
    app = App(window, ctx, runner, model_path, render_scale=render_scale, msaa=msaa,
              error_message=error_message)
    runner.start_thread()
    return app


def run_window(runner: Runner, args, error_message="") -> Runner:
    import pyglet

    app = create_app(runner, args.model, args.width, args.height, args.msaa,
                     getattr(args, "render_scale", None), error_message)
    if args.duration is not None:
        pyglet.clock.schedule_once(lambda dt: app.close(), args.duration)
    app.runner.start_time = app.runner.start = time.perf_counter()
    try:
        fps = getattr(args, "max_fps", 60.0) or 0.0
        pyglet.app.run(1.0 / fps if fps > 0 else 0)
    finally:
        final = app.runner
        app.close()
    return final

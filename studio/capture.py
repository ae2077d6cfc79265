"""Screenshots and videos of the 3D view, written to the studio's output folder.

A screenshot (Ctrl+P) is the 3D view of the frame drawn after the request, at full resolution
(PNG); a video (Ctrl+V) gets a frame per 1/VIDEO_FPS of simulated time (``VideoClock``), read
from the window after the scene is drawn and before the panels. Files are named
``<model>-<date>-<time>.png/.mp4`` in ``UIState.output_dir`` (studio.settings keeps it between
sessions).
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

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


def output_path(ui, model_path, suffix: str) -> Path:
    """A new time-stamped file in the output folder (created on demand)."""
    folder = Path(ui.output_dir).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    stem = Path(str(model_path)).stem or "studio"
    return folder / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}{suffix}"


def read_pixels(ctx, rect) -> np.ndarray:
    """(h, w, 3) uint8 of the window's back buffer in ``rect`` = (x, y, w, h), rows top-down."""
    x, y, w, h = rect
    raw = ctx.screen.read(viewport=(x, y, w, h), components=3, alignment=1)
    _ = ctx.error                  # reading the default framebuffer leaves an error pending
    return np.frombuffer(raw, np.uint8).reshape(h, w, 3)[::-1]


class Capture:
    """The screenshot request and the running video of one window."""

    def __init__(self, app):
        self.app = app
        self.screenshot_requested = False
        self.video = None                # a writer: send(bytes), close()
        self.video_path = None
        self.video_size = None
        self.clock = None

    @property
    def full_frame(self) -> bool:
        """This frame is read back: draw the 3D view at full resolution."""
        return self.screenshot_requested or self.video is not None

    def request_screenshot(self) -> None:
        self.screenshot_requested = True

    def toggle_video(self) -> None:
        app = self.app
        if self.video is not None:
            try:
                self.video.close()
            except Exception:
                pass
            self.video = None
            app.ui.say(f"saved {self.video_path}")
            return
        try:
            import imageio_ffmpeg
        except ImportError:
            app.ui.say("video needs the imageio-ffmpeg package (pip install imageio-ffmpeg)")
            return
        _, _, w, h = app.view_rect
        w, h = w - w % 2, h - h % 2
        self.video_path = output_path(app.ui, app.model_path, ".mp4")
        gen = imageio_ffmpeg.write_frames(str(self.video_path), (w, h), fps=VIDEO_FPS,
                                          macro_block_size=1, quality=7)
        gen.send(None)
        self.start_video(gen, (w, h))
        app.ui.say(f"recording {self.video_path}")

    def start_video(self, writer, size) -> None:
        """Send the frames to ``writer`` (``send(bytes)`` of size[1] x size[0] RGB, ``close()``)."""
        self.video, self.video_size = writer, size
        self.clock = VideoClock(self.app.runner.snapshot.time)

    def after_scene(self) -> None:
        """Called once the 3D view is drawn (before the panels): save what was asked for."""
        app = self.app
        rect = app.view_rect
        if self.screenshot_requested:
            self.screenshot_requested = False
            from PIL import Image
            try:
                path = output_path(app.ui, app.model_path, ".png")
                Image.fromarray(np.ascontiguousarray(read_pixels(app.ctx, rect)), "RGB").save(path)
                app.ui.say(f"saved {path}")
            except OSError as e:
                app.ui.say(f"cannot save the screenshot: {e}")
        if self.video is not None:
            r = app.runner
            due = self.clock.frames_due(r.snapshot.time, r.paused, r.speed)
            if not due:
                return
            vw, vh = self.video_size
            img = read_pixels(app.ctx, rect)
            if img.shape[:2] != (vh, vw):            # the view changed size: fit the video's
                from PIL import Image
                img = np.asarray(Image.fromarray(np.ascontiguousarray(img)).resize((vw, vh)))
            data = np.ascontiguousarray(img).tobytes()
            for _ in range(due):
                self.video.send(data)

    def close(self) -> None:
        if self.video is not None:
            self.toggle_video()

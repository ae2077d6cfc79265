"""The window itself: pyglet's OpenGL 3.3 core window, and pyglet's set-up without a display.
No engine import here, so that the window opens before the engine is loaded (studio.startup)."""
from __future__ import annotations

import os
import sys


def _gl_config():
    """OpenGL 3.3 core, double-buffered, single-sampled and without a depth buffer: the scene
    is drawn (and antialiased, when it is) in its own offscreen framebuffer with its own depth
    (``studio.viewport``), the panels need neither. A depth buffer the window does not use
    still costs: with one attached, llvmpipe never takes its linear rasteriser for what is
    drawn to the window (the upscaled view, studio.viewport), depth test off or not."""
    from pyglet import gl

    return gl.Config(major_version=3, minor_version=3, forward_compatible=True, depth_size=0,
                     double_buffer=True)


def configure_pyglet():
    """Before pyglet.window is imported: without a display, run the window offscreen on EGL."""
    import pyglet

    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") \
            and not os.environ.get("WAYLAND_DISPLAY"):
        print("studio: no display found; rendering offscreen through EGL", file=sys.stderr)
        pyglet.options.headless = True
        pyglet.options.shadow_window = False


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

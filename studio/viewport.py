"""The window's 3D viewport at a render scale: the scene drawn at a fraction of the window resolution.

With a software rasteriser (Mesa's llvmpipe) nearly all of a frame is spent filling pixels, so the
scene is drawn into an offscreen framebuffer of ``scale`` times the window's width and height
(0.5: a quarter of the pixels), then stretched over the whole window with the texture's bilinear
filter (``shaders/blit.*``); the ImGui panels are drawn afterwards at full resolution. The camera
keeps the window's aspect ratio, so a window pixel maps to the same scene ray at every scale
(picking casts rays in window coordinates and does not depend on the scale).

The "auto" scale is chosen once from the OpenGL renderer string rather than adapted from frame
times: 0.5 when it names a software rasteriser (llvmpipe, softpipe, swrast), 1.0 otherwise.
Frame times on a machine whose cores are shared with the simulation thread are too noisy for a
controller that would not visibly pump the resolution up and down; a fixed choice is predictable.
Multisampling is likewise off by default on software rasterisers (it multiplies their pixel
cost) and 4x on hardware; it applies to the offscreen scene, never to the panels.
"""
from __future__ import annotations

import moderngl

MIN_SCALE, MAX_SCALE = 0.25, 1.0
SOFTWARE_SCALE = 0.5          # auto render scale with a software rasteriser
HARDWARE_MSAA = 4             # auto multisampling with a GPU
SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swrast")


def renderer_name(ctx: moderngl.Context) -> str:
    return str(ctx.info.get("GL_RENDERER", ""))


def is_software(ctx: moderngl.Context) -> bool:
    """True when the GL renderer string names one of Mesa's software rasterisers."""
    name = renderer_name(ctx).lower()
    return any(s in name for s in SOFTWARE_RENDERERS)


def auto_render_scale(ctx: moderngl.Context) -> float:
    return SOFTWARE_SCALE if is_software(ctx) else 1.0


def auto_msaa(ctx: moderngl.Context) -> int:
    return 0 if is_software(ctx) else HARDWARE_MSAA


def parse_render_scale(text) -> float | None:
    """``"auto"`` -> None, else a float in [MIN_SCALE, MAX_SCALE]; ValueError otherwise."""
    if text is None or str(text).strip().lower() == "auto":
        return None
    value = float(text)
    if not MIN_SCALE <= value <= MAX_SCALE:
        raise ValueError(f"render scale must be 'auto' or in [{MIN_SCALE}, {MAX_SCALE}], got {text}")
    return value


def scaled_size(width: int, height: int, scale: float) -> tuple[int, int]:
    return max(1, round(width * scale)), max(1, round(height * scale))


class SceneViewport:
    """Offscreen targets for the scene at a render scale, and the upscaling draw into the window."""

    def __init__(self, ctx: moderngl.Context):
        from .renderer import load_shader
        self.ctx = ctx
        self.prog = ctx.program(vertex_shader=load_shader("blit.vert"),
                                fragment_shader=load_shader("blit.frag"))
        self.vao = ctx.vertex_array(self.prog, [])
        self._key = None              # (width, height, samples) of the targets below
        self._objects = []
        self.color = None             # single-sampled colour texture of the scene
        self.fbo = None               # draws into ``color`` (with depth unless multisampled)
        self.ms_fbo = None            # multisampled target resolved into ``fbo``

    def _targets(self, width: int, height: int, samples: int) -> None:
        if self._key == (width, height, samples):
            return
        self._release_targets()
        ctx = self.ctx
        self.color = ctx.texture((width, height), 4)
        self.color.filter = (moderngl.LINEAR, moderngl.LINEAR)
        self.color.repeat_x = self.color.repeat_y = False
        self._objects.append(self.color)
        if samples:
            rb = ctx.renderbuffer((width, height), 4, samples=samples)
            depth = ctx.depth_renderbuffer((width, height), samples=samples)
            self.ms_fbo = ctx.framebuffer(color_attachments=[rb], depth_attachment=depth)
            self.fbo = ctx.framebuffer(color_attachments=[self.color])
            self._objects += [rb, depth, self.ms_fbo, self.fbo]
        else:
            depth = ctx.depth_renderbuffer((width, height))
            self.fbo = ctx.framebuffer(color_attachments=[self.color], depth_attachment=depth)
            self._objects += [depth, self.fbo]
        self._key = (width, height, samples)

    def draw(self, renderer, screen, width: int, height: int, d, scene=None, scale: float = 1.0,
             msaa: int = 0, columns=None) -> None:
        """Draw the scene over ``width`` x ``height`` pixels of ``screen`` at ``scale``.

        ``columns``: (x0, x1), the window pixel columns to draw; the others are left as they are
        (an opaque panel will cover them). The camera still spans the whole window."""
        ctx = self.ctx
        samples = min(max(int(msaa), 0), int(ctx.max_samples))
        samples = samples if samples > 1 else 0
        scale = min(max(float(scale), MIN_SCALE), MAX_SCALE)
        x0, x1 = (0, width) if columns is None else (max(0, int(columns[0])),
                                                       min(width, int(columns[1])))
        if x1 <= x0:
            return
        clip = (x0, 0, x1 - x0, height) if (x0, x1) != (0, width) else None
        if scale >= MAX_SCALE and not samples:
            screen.scissor = clip
            renderer.render(screen, width, height, d, scene=scene)
            screen.scissor = None
            return
        sw, sh = (width, height) if scale >= MAX_SCALE else scaled_size(width, height, scale)
        self._targets(sw, sh, samples)
        target = self.ms_fbo if samples else self.fbo
        if clip is not None:            # the columns in the target, widened for the bilinear filter
            t0 = max(0, int(x0 * sw / width) - 1)
            t1 = min(sw, -int(-x1 * sw // width) + 1)
            target.scissor = (t0, 0, t1 - t0, sh)
        renderer.render(target, sw, sh, d, scene=scene, view_size=(width, height))
        target.scissor = None
        if samples and (sw, sh) == (width, height) and clip is None:
            ctx.copy_framebuffer(screen, self.ms_fbo)     # resolve straight into the window
            return
        if samples:
            ctx.copy_framebuffer(self.fbo, self.ms_fbo)
        screen.use()
        ctx.viewport = (0, 0, width, height)
        ctx.scissor = clip
        ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND)
        self.color.use(location=0)
        if "u_texture" in self.prog:
            self.prog["u_texture"].value = 0
        self.vao.render(moderngl.TRIANGLES, vertices=3)
        ctx.scissor = None

    def _release_targets(self) -> None:
        for obj in reversed(self._objects):
            obj.release()
        self._objects = []
        self.color = self.fbo = self.ms_fbo = None
        self._key = None

    def release(self) -> None:
        self._release_targets()
        self.vao.release()
        self.prog.release()

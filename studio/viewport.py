"""The window's 3D view: the scene drawn at a render scale into a rectangle of the window, with
antialiasing that a software renderer can afford.

With a software rasteriser (Mesa's llvmpipe) nearly all of a frame is spent filling pixels, so the
scene is drawn into an offscreen framebuffer of ``scale`` times the view's width and height,
antialiased there by FXAA (``shaders/fxaa.*``: a few texture reads per pixel at the reduced
size, which also removes the stair steps that the upscaling would enlarge), then stretched over
the view's rectangle with the texture's bilinear filter (``shaders/blit.*``); the ImGui panels
are drawn afterwards at full resolution. The upscaling fills the most pixels of a frame; it is
drawn so that llvmpipe can take its linear rasteriser for it (a rectangle of two triangles, a
source texture stored in BGRA byte order, a window without depth buffer: ``bgra_storage``),
several times faster than its general path. That path of Mesa 22 exchanges red and blue, but
only on the tiles of a frame where nothing else is drawn: the upscaling is flushed as a frame of
its own (nothing else drawn into its tiles), and a red texel drawn that way once per window
tells whether to exchange them back (``SWAP_RB``; never on a driver without the fault).
Multisampling is the other choice (the offscreen target multisampled and resolved); it
multiplies a software rasteriser's cost per pixel, so it is off there by default. The camera
keeps the view's aspect ratio, so a view pixel maps to the same scene ray at every scale
(picking casts rays in view coordinates and does not depend on it).

The "auto" scale is chosen once from the OpenGL renderer string rather than adapted from frame
times: 0.5 when it names a software rasteriser (llvmpipe, softpipe, swrast), 1.0 otherwise.
Frame times on a machine whose cores are shared with the simulation thread are too noisy for a
controller that would not visibly pump the resolution up and down; a fixed choice is predictable.
"""
from __future__ import annotations

import moderngl

MIN_SCALE, MAX_SCALE = 0.25, 1.0
SOFTWARE_SCALE = 0.5          # auto render scale with a software rasteriser (with FXAA)
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


def bgra_storage(texture: moderngl.Texture) -> bool:
    """Reallocate ``texture`` (2D, 4 x 8 bits, one level, its contents undefined) in BGRA byte
    order. llvmpipe's linear rasteriser samples only B8G8R8A8 textures, and OpenGL leaves the
    byte order of an unsized RGBA storage to the format of its upload (moderngl always uploads
    RGBA). False, and the texture left as it was, where the driver refuses it."""
    from pyglet import gl
    try:
        _ = texture.ctx.error                        # (pyglet raises for an earlier error)
        gl.glActiveTexture(gl.GL_TEXTURE0)
        gl.glBindTexture(gl.GL_TEXTURE_2D, texture.glo)
        gl.glTexImage2D(gl.GL_TEXTURE_2D, 0, gl.GL_RGBA, texture.width, texture.height, 0,
                        gl.GL_BGRA, gl.GL_UNSIGNED_BYTE, None)
        return True
    except Exception:                                # no pyglet context, or refused
        return False


def target_texture(ctx: moderngl.Context, size) -> moderngl.Texture:
    """A colour target that the upscaling samples: BGRA when the driver allows, bilinear,
    clamped to its edges."""
    t = ctx.texture(size, 4)
    bgra_storage(t)
    t.filter = (moderngl.LINEAR, moderngl.LINEAR)
    t.repeat_x = t.repeat_y = False
    return t


def gl_flush(ctx: moderngl.Context) -> None:
    """glFlush: what was drawn so far is rasterised (llvmpipe: as a frame of its own, on its
    threads, while the caller goes on)."""
    from pyglet import gl
    _ = ctx.error                                    # (pyglet raises for an earlier error)
    try:
        gl.glFlush()
    except Exception:                                # no pyglet context: a flush is optional
        pass


def scaled_size(width: int, height: int, scale: float) -> tuple[int, int]:
    return max(1, round(width * scale)), max(1, round(height * scale))


class SceneViewport:
    """Offscreen targets for the scene at a render scale, antialiasing, and the draw into the
    window's rectangle."""

    def __init__(self, ctx: moderngl.Context):
        from .renderer import load_shader
        self.ctx = ctx
        self.blit = self._blit_program(swap=False)
        self._swap_checked = False    # whether the blit must exchange red and blue (once)
        self.fxaa = ctx.program(vertex_shader=load_shader("fxaa.vert"),
                                fragment_shader=load_shader("fxaa.frag"))
        self.blit_vao = ctx.vertex_array(self.blit, [])
        self.fxaa_vao = ctx.vertex_array(self.fxaa, [])
        self._key = None              # (width, height, samples) of the targets below
        self._objects = []
        self.color = None             # single-sampled colour texture of the scene
        self.fbo = None               # draws into ``color`` (with depth unless multisampled)
        self.ms_fbo = None            # multisampled target resolved into ``fbo``
        self.smooth = None            # FXAA's output texture and framebuffer
        self.smooth_fbo = None
        self._last = None             # (what the last frame drew, its final texture)

    def _targets(self, width: int, height: int, samples: int) -> None:
        if self._key == (width, height, samples):
            return
        self._release_targets()
        ctx = self.ctx

        def texture():
            t = target_texture(ctx, (width, height))
            self._objects.append(t)
            return t
        self.color = texture()
        self.smooth = texture()
        self.smooth_fbo = ctx.framebuffer(color_attachments=[self.smooth])
        self._objects.append(self.smooth_fbo)
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

    def draw(self, renderer, screen, rect, d, scene=None, scale: float = 1.0, msaa: int = 0,
             fxaa: bool = False) -> None:
        """Draw the scene into ``rect`` = (x, y, width, height) pixels of ``screen`` (y up) at
        ``scale``, multisampled with ``msaa`` samples and/or smoothed by FXAA."""
        ctx = self.ctx
        x, y, width, height = (int(v) for v in rect)
        if width <= 0 or height <= 0:
            return
        samples = min(max(int(msaa), 0), int(ctx.max_samples))
        samples = samples if samples > 1 else 0
        scale = min(max(float(scale), MIN_SCALE), MAX_SCALE)
        sw, sh = (width, height) if scale >= MAX_SCALE else scaled_size(width, height, scale)
        self._targets(sw, sh, samples)
        full = (sw, sh) == (width, height)
        # nothing moved since the last frame (paused, nobody dragging): reuse its picture
        key = None if scene is None else (
            (sw, sh, samples, bool(fxaa)) + renderer.frame_key(d, scene, (width, height)))
        if key is not None and self._last is not None and self._last[0] == key:
            source = self._last[1]
        else:
            target = self.ms_fbo if samples else self.fbo
            renderer.render(target, sw, sh, d, scene=scene, view_size=(width, height))
            if samples:
                ctx.copy_framebuffer(self.fbo, self.ms_fbo)
            ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND | moderngl.CULL_FACE)
            source = self.color
            if fxaa and not full:                    # smooth at the reduced size, then upscale
                self.smooth_fbo.use()
                ctx.viewport = (0, 0, sw, sh)
                self._pass(self.fxaa, self.fxaa_vao, source)
                source = self.smooth
            self._last = (key, source)
        ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND | moderngl.CULL_FACE)
        if not self._swap_checked:
            self._check_swap(screen)
        screen.use()
        ctx.viewport = (x, y, width, height)
        ctx.scissor = (x, y, width, height)
        if fxaa and full:
            self._pass(self.fxaa, self.fxaa_vao, source, origin=(x, y))
        else:
            self._pass(self.blit, self.blit_vao, source)
            gl_flush(ctx)                  # a frame of its own: see the module's docstring
        ctx.scissor = None

    def _blit_program(self, swap: bool) -> moderngl.Program:
        from .renderer import load_shader
        head, _, rest = load_shader("blit.frag").partition("\n")      # after #version
        return self.ctx.program(vertex_shader=load_shader("blit.vert"),
                                fragment_shader=head + ("\n#define SWAP_RB\n" if swap else "\n")
                                + rest)

    def _check_swap(self, screen) -> None:
        """Upscale a red BGRA texel alone into a corner of ``screen`` (then drawn over) and
        compile the blit with SWAP_RB if it comes out blue (the module's docstring)."""
        ctx = self.ctx
        self._swap_checked = True
        tex = target_texture(ctx, (2, 2))
        fbo = ctx.framebuffer(color_attachments=[tex])
        try:
            fbo.clear(1.0, 0.0, 0.0, 1.0)
            screen.use()
            ctx.scissor = None
            ctx.viewport = (0, 0, 8, 8)
            self._pass(self.blit, self.blit_vao, tex)
            gl_flush(ctx)
            r, _, b = screen.read(viewport=(4, 4, 1, 1), components=3)
            _ = ctx.error                  # reading the default framebuffer leaves an error
        finally:
            fbo.release()
            tex.release()
        if b > r:
            self.blit.release()
            self.blit_vao.release()
            self.blit = self._blit_program(swap=True)
            self.blit_vao = ctx.vertex_array(self.blit, [])

    def _pass(self, prog, vao, texture, origin=(0, 0)) -> None:
        """One full-viewport pass of ``prog`` reading ``texture`` (the blit: two triangles)."""
        texture.use(location=0)
        if "u_origin" in prog:
            prog["u_origin"].value = tuple(float(v) for v in origin)
        if "u_texture" in prog:
            prog["u_texture"].value = 0
        if "u_texel" in prog:
            prog["u_texel"].value = (1.0 / texture.width, 1.0 / texture.height)
        vao.render(moderngl.TRIANGLES, vertices=6 if prog is self.blit else 3)

    def _release_targets(self) -> None:
        for obj in reversed(self._objects):
            obj.release()
        self._objects = []
        self.color = self.fbo = self.ms_fbo = self.smooth = self.smooth_fbo = None
        self._key = None
        self._last = None

    def release(self) -> None:
        self._release_targets()
        for obj in (self.blit_vao, self.fxaa_vao, self.blit, self.fxaa):
            obj.release()

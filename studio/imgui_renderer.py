"""Draws Dear ImGui (imgui-bundle) draw lists with moderngl, and forwards pyglet input to ImGui.

imgui 1.92 protocol: the renderer sets ``BackendFlags_.renderer_has_textures`` and creates,
updates and destroys the textures ImGui lists in ``platform_io.textures`` (the font atlas grows
on demand). The programs are ``shaders/imgui.vert`` and ``shaders/imgui.frag``.
"""
from __future__ import annotations

import ctypes

import moderngl
import numpy as np
from imgui_bundle import imgui

from .renderer import load_shader


class ImGuiRenderer:
    """GPU side of ImGui: one program, a streamed vertex/index buffer pair, ImGui's textures."""

    def __init__(self, ctx: moderngl.Context):
        if not imgui.get_current_context():
            raise RuntimeError("create the ImGui context first (imgui.create_context())")
        self.ctx = ctx
        self.io = imgui.get_io()
        self.prog = ctx.program(vertex_shader=load_shader("imgui.vert"),
                                fragment_shader=load_shader("imgui.frag"))
        self.vbo = ctx.buffer(reserve=1 << 16, dynamic=True)
        self.ibo = ctx.buffer(reserve=1 << 16, dynamic=True)
        self.vao = self._vao()
        self.textures: dict[int, moderngl.Texture] = {}
        self.io.backend_flags |= imgui.BackendFlags_.renderer_has_textures
        # ImGui's textures are sampled texel for texel (glyphs are rasterised at their display
        # size), so nearest filtering draws the same pixels as bilinear, for less work per pixel
        # with a software rasteriser; the lines and round corners baked into the font atlas are
        # the uses that need bilinear filtering, so those are drawn as geometry instead.
        for flag in ("no_baked_lines", "no_baked_round_corners"):     # the latter: newer ImGui only
            self.io.fonts.flags |= getattr(imgui.ImFontAtlasFlags_, flag, 0)
        pio = imgui.get_platform_io()
        maxsize = int(ctx.info["GL_MAX_TEXTURE_SIZE"])
        pio.renderer_texture_max_width = maxsize
        pio.renderer_texture_max_height = maxsize

    def _vao(self):
        return self.ctx.vertex_array(
            self.prog, [(self.vbo, "2f 2f 4f1", "in_pos", "in_uv", "in_color")],
            index_buffer=self.ibo, index_element_size=imgui.INDEX_SIZE)

    # -- textures (imgui 1.92 protocol) ----------------------------------------------------------
    def update_textures(self) -> None:
        for tex in imgui.get_platform_io().textures:
            if tex.status != imgui.ImTextureStatus.ok:
                self._update_texture(tex)

    def _update_texture(self, tex) -> None:
        status = tex.status
        if status == imgui.ImTextureStatus.want_create:
            pixels = np.asarray(tex.get_pixels_array(), dtype=np.uint8)
            t = self.ctx.texture((tex.width, tex.height), 4, pixels.tobytes())
            t.filter = (moderngl.NEAREST, moderngl.NEAREST)
            t.repeat_x = t.repeat_y = False
            self.textures[t.glo] = t
            tex.set_tex_id(t.glo)
            tex.status = imgui.ImTextureStatus.ok
        elif status == imgui.ImTextureStatus.want_updates:
            t = self.textures[int(tex.tex_id)]
            pixels = np.asarray(tex.get_pixels_array(), dtype=np.uint8).reshape(
                tex.height, tex.width, 4)
            for r in tex.updates:
                block = np.ascontiguousarray(pixels[r.y:r.y + r.h, r.x:r.x + r.w])
                t.write(block.tobytes(), viewport=(r.x, r.y, r.w, r.h))
            tex.status = imgui.ImTextureStatus.ok
        elif status == imgui.ImTextureStatus.want_destroy:
            t = self.textures.pop(int(tex.tex_id), None)
            if t is not None:
                t.release()
            tex.set_tex_id(0)
            tex.status = imgui.ImTextureStatus.destroyed

    # -- drawing ---------------------------------------------------------------------------------
    def render(self, draw_data, fbo: moderngl.Framebuffer | None = None) -> None:
        """Draw ``imgui.get_draw_data()`` over the current contents of ``fbo`` (default: screen)."""
        self.update_textures()
        ctx = self.ctx
        dw, dh = draw_data.display_size
        sx, sy = draw_data.framebuffer_scale
        fbw, fbh = int(dw * sx), int(dh * sy)
        if fbw <= 0 or fbh <= 0:
            return
        (fbo or ctx.screen).use()
        ctx.viewport = (0, 0, fbw, fbh)
        ctx.enable_only(moderngl.BLEND)
        ctx.blend_func = (moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA,
                          moderngl.ONE, moderngl.ONE_MINUS_SRC_ALPHA)
        ox, oy = draw_data.display_pos
        proj = np.array([[2.0 / dw, 0, 0, -(2 * ox + dw) / dw],
                         [0, -2.0 / dh, 0, (2 * oy + dh) / dh],
                         [0, 0, -1, 0],
                         [0, 0, 0, 1]], dtype="f4")
        self.prog["u_proj"].write(proj.T.tobytes())
        if "u_texture" in self.prog:
            self.prog["u_texture"].value = 0
        for cl in draw_data.cmd_lists:
            nv = cl.vtx_buffer.size() * imgui.VERTEX_SIZE
            ni = cl.idx_buffer.size() * imgui.INDEX_SIZE
            if nv == 0 or ni == 0:
                continue
            if nv > self.vbo.size or ni > self.ibo.size:
                self.vao.release()
                if nv > self.vbo.size:
                    self.vbo.orphan(max(nv, 2 * self.vbo.size))
                if ni > self.ibo.size:
                    self.ibo.orphan(max(ni, 2 * self.ibo.size))
                self.vao = self._vao()
            self.vbo.write((ctypes.c_char * nv).from_address(cl.vtx_buffer.data_address()))
            self.ibo.write((ctypes.c_char * ni).from_address(cl.idx_buffer.data_address()))
            for cmd in cl.cmd_buffer:
                if cmd.elem_count == 0:
                    continue
                x0, y0, x1, y1 = cmd.clip_rect
                x0, y0 = (x0 - ox) * sx, (y0 - oy) * sy
                x1, y1 = (x1 - ox) * sx, (y1 - oy) * sy
                if x1 <= x0 or y1 <= y0:
                    continue
                ctx.scissor = (int(x0), int(fbh - y1), int(x1 - x0), int(y1 - y0))
                tex = self.textures.get(int(cmd.tex_ref.get_tex_id()))
                if tex is not None:
                    tex.use(0)
                # without renderer_has_vtx_offset ImGui keeps vtx_offset at 0
                self.vao.render(moderngl.TRIANGLES, vertices=cmd.elem_count, first=cmd.idx_offset)
        ctx.scissor = None
        ctx.disable(moderngl.BLEND)

    def release(self) -> None:
        for tex in imgui.get_platform_io().textures:
            if tex.status != imgui.ImTextureStatus.destroyed:
                tex.status = imgui.ImTextureStatus.want_destroy
                self._update_texture(tex)
        for t in self.textures.values():
            t.release()
        self.textures.clear()
        self.vao.release()
        self.vbo.release()
        self.ibo.release()
        self.prog.release()


# ------------------------------------------------------------------------------------------------
# pyglet input -> ImGui
# ------------------------------------------------------------------------------------------------
def _key_map():
    from pyglet.window import key
    K = imgui.Key
    m = {key.TAB: K.tab, key.LEFT: K.left_arrow, key.RIGHT: K.right_arrow, key.UP: K.up_arrow,
         key.DOWN: K.down_arrow, key.PAGEUP: K.page_up, key.PAGEDOWN: K.page_down,
         key.HOME: K.home, key.END: K.end, key.INSERT: K.insert, key.DELETE: K.delete,
         key.BACKSPACE: K.backspace, key.SPACE: K.space, key.RETURN: K.enter,
         key.ENTER: K.enter, key.ESCAPE: K.escape, key.NUM_ENTER: K.keypad_enter,
         key.LCTRL: K.left_ctrl, key.RCTRL: K.right_ctrl, key.LSHIFT: K.left_shift,
         key.RSHIFT: K.right_shift, key.LALT: K.left_alt, key.RALT: K.right_alt,
         key.MINUS: K.minus, key.PERIOD: K.period, key.COMMA: K.comma}
    for c in "abcdefghijklmnopqrstuvwxyz":
        m[getattr(key, c.upper())] = getattr(K, c)
    for i in range(10):
        m[getattr(key, f"_{i}")] = getattr(K, f"_{i}")
    for i in range(1, 13):
        m[getattr(key, f"F{i}")] = getattr(K, f"f{i}")
    return m


class ImGuiInput:
    """Feeds a pyglet window's events into ImGui's IO (mouse y flipped: ImGui's y goes down)."""

    def __init__(self, window):
        from pyglet.window import mouse
        self.window = window
        self.io = imgui.get_io()
        self.keys = _key_map()
        self.buttons = {mouse.LEFT: 0, mouse.RIGHT: 1, mouse.MIDDLE: 2}

    def _mods(self, modifiers):
        from pyglet.window import key
        io = self.io
        io.add_key_event(imgui.Key.mod_ctrl, bool(modifiers & key.MOD_CTRL))
        io.add_key_event(imgui.Key.mod_shift, bool(modifiers & key.MOD_SHIFT))
        io.add_key_event(imgui.Key.mod_alt, bool(modifiers & key.MOD_ALT))

    def mouse_motion(self, x, y):
        self.io.add_mouse_pos_event(float(x), float(self.window.height - y))

    def mouse_button(self, x, y, button, modifiers, down):
        self._mods(modifiers)
        self.mouse_motion(x, y)
        if button in self.buttons:
            self.io.add_mouse_button_event(self.buttons[button], down)

    def scroll(self, sx, sy):
        self.io.add_mouse_wheel_event(float(sx), float(sy))

    def key(self, symbol, modifiers, down):
        self._mods(modifiers)
        k = self.keys.get(symbol)
        if k is not None:
            self.io.add_key_event(k, down)

    def text(self, text):
        for ch in text:
            if ch.isprintable():
                self.io.add_input_character(ord(ch))

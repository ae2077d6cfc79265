"""Draws a model's geoms with moderngl: one instanced draw call per unit mesh.

Shared by the window (``studio.app``) and the offscreen screenshot (``studio.headless``). Draws a
``studio.scene.Scene`` (instance lists per unit shape and layer): opaque geoms with a
directional-light shadow map, then decorations, then transparent geoms without depth writes.
Shader programs are files in ``shaders/``.
"""
from __future__ import annotations

import math

import moderngl
import numpy as np

from . import SHADER_DIR, meshes
from .hfield_mesh import hfield_meshes
from .camera import OrbitCamera, look_at
from .scene import SceneOptions, geom_colors, model_extent

BACKGROUND = (0.11, 0.13, 0.17)       # clear colour (linear RGB, 0..1)

SHADOW_SIZE = 1024                    # shadow map resolution (texels per side) at render scale 1
MIN_SHADOW_SIZE = 256
# unit meshes that are closed surfaces (studio.meshes: counter-clockwise seen from outside), drawn
# with back faces culled; mesh assets and height fields may be open or wound either way
CLOSED_SHAPES = ("sphere", "capsule", "cylinder", "box")

# per-instance layout: pos 3, rows 3x3, scale 3, rgba 4, checker 1 = 20 floats
_INSTANCE_FORMAT = "3f 3f 3f 3f 3f 4f 1f/i"
_INSTANCE_ATTRS = ("i_pos", "i_row0", "i_row1", "i_row2", "i_scale", "i_color", "i_checker")
_NFLOAT = 20


def load_shader(name: str) -> str:
    return (SHADER_DIR / name).read_text()


class _Shape:
    """A unit mesh on the GPU with a growable instance buffer."""

    def __init__(self, ctx: moderngl.Context, prog: moderngl.Program, vertices, indices,
                 shadow_prog: moderngl.Program | None = None, closed: bool = False):
        self.ctx, self.prog, self.shadow_prog = ctx, prog, shadow_prog
        self.closed = closed          # a closed surface wound counter-clockwise seen from outside
        self.nindex = int(indices.size)
        self.vbo = ctx.buffer(vertices.tobytes())
        self.ibo = ctx.buffer(indices.tobytes()) if indices.size else None
        self.capacity = 0
        self.inst = None
        self.vao = None
        self.shadow_vao = None
        self.count = 0
        self._grow(16)

    def _grow(self, n: int) -> None:
        if self.inst is not None:
            self.vao.release()
            if self.shadow_vao is not None:
                self.shadow_vao.release()
            self.inst.release()
        self.capacity = n
        self.inst = self.ctx.buffer(reserve=n * _NFLOAT * 4, dynamic=True)
        self.vao = self.ctx.vertex_array(
            self.prog,
            [(self.vbo, "3f 3f 1f", "in_pos", "in_normal", "in_end"),
             (self.inst, _INSTANCE_FORMAT, *_INSTANCE_ATTRS)],
            index_buffer=self.ibo, index_element_size=4)
        if self.shadow_prog is not None:
            self.shadow_vao = self.ctx.vertex_array(
                self.shadow_prog,
                [(self.vbo, "3f 12x 1f", "in_pos", "in_end"),
                 (self.inst, "3f 3f 3f 3f 3f 20x/i", *_INSTANCE_ATTRS[:5])],
                index_buffer=self.ibo, index_element_size=4)

    def upload(self, instances: np.ndarray) -> None:
        """Write this frame's instances (used by both passes)."""
        n = instances.shape[0]
        if n > self.capacity:
            self._grow(max(n, 2 * self.capacity))
        if n:
            self.inst.write(np.ascontiguousarray(instances, dtype=np.float32).tobytes())
        self.count = n

    def _render(self, vao) -> None:
        if self.count and self.nindex and vao is not None:
            if self.closed:          # back faces of a closed surface are hidden: not rasterised
                self.ctx.enable(moderngl.CULL_FACE)
            vao.render(moderngl.TRIANGLES, vertices=self.nindex, instances=self.count)
            if self.closed:
                self.ctx.disable(moderngl.CULL_FACE)

    def draw(self) -> None:
        self._render(self.vao)

    def draw_shadow(self) -> None:
        self._render(self.shadow_vao)

    def release(self) -> None:
        for obj in (self.vao, self.shadow_vao, self.inst, self.ibo, self.vbo):
            if obj is not None:
                obj.release()


class _MeshData:
    """CPU copy of a mesh geom's triangles; the GPU shapes are made per layer on first use."""

    def __init__(self, vertices, indices):
        self.vertices, self.indices = vertices, indices


class Renderer:
    """GPU resources for one model; ``render`` draws a Data's current pose into a framebuffer."""

    def __init__(self, ctx: moderngl.Context, m):
        self.ctx = ctx
        self.m = m
        self.prog = ctx.program(vertex_shader=load_shader("mesh.vert"),
                                fragment_shader=load_shader("mesh.frag"))
        self.shadow_prog = ctx.program(vertex_shader=load_shader("shadow.vert"),
                                       fragment_shader=load_shader("shadow.frag"))
        self.unit = {"sphere": meshes.sphere(), "cylinder": meshes.cylinder(),
                     "capsule": meshes.capsule(), "box": meshes.box(), "plane": meshes.plane(8)}
        # decorations (contact points, force arrows, tendons, axes) are small: coarse meshes
        self.unit_decor = {"sphere": meshes.sphere(10, 6), "cylinder": meshes.cylinder(8),
                           "capsule": meshes.capsule(10, 6)}
        self.layer_shapes: dict = {}
        self.options = SceneOptions()
        self.fixed_camera = None          # (pos, xmat, fovy) of a model camera, or None: orbit
        self.colors = geom_colors(m)
        self.extent = 1.0
        self.shadow_map = self.shadow_fbo = None
        self._shadow_target(SHADOW_SIZE)
        self.mesh_shapes = {}
        nmesh = int(getattr(m, "nmesh", 0))
        for i in range(nmesh):
            va, vn = int(m.mesh_vertadr[i]), int(m.mesh_vertnum[i])
            fa, fn = int(m.mesh_faceadr[i]), int(m.mesh_facenum[i])
            v, idx = meshes.triangle_soup(m.mesh_vert[va:va + vn], m.mesh_face[fa:fa + fn])
            self.mesh_shapes[i] = _MeshData(v, idx)
        for i, (v, idx) in hfield_meshes(m).items():     # height fields after the meshes
            self.mesh_shapes[i] = _MeshData(v, idx)
        self.light_dir = self._model_light()
        self.camera = OrbitCamera()

    def _model_light(self) -> np.ndarray:
        """Direction of the model's first directional light, or a default sun."""
        m = self.m
        directional = getattr(m, "light_directional", None)
        active = getattr(m, "light_active", None)
        for i in range(int(getattr(m, "nlight", 0)) if directional is not None else 0):
            if int(directional[i]) and (active is None or int(active[i])):
                d = np.asarray(m.light_dir[i], float)
                if np.linalg.norm(d) > 1e-9:
                    return d / np.linalg.norm(d)
        d = np.array([0.3, 0.4, -1.0])
        return d / np.linalg.norm(d)

    def frame_model(self, d) -> None:
        """Point the camera at the current geom positions (call after forward at qpos0)."""
        m = self.m
        self.extent = model_extent(m, d)
        self.camera.frame(d.geom_xpos, m.geom_type, m.geom_size, getattr(m, "geom_rbound", None))

    def light_viewproj(self, center, radius) -> np.ndarray:
        """Orthographic view from the directional light covering a sphere around the bodies'
        geoms where they are now (Scene.center, Scene.radius). The radius is rounded up to a
        power of sqrt(2) and the centre to a grid of 1/32 of it, so that the shadow map (and
        the shadows' edges) only change when the bodies have moved noticeably."""
        r = 2.0 ** (math.ceil(2.0 * math.log2(max(radius, 1e-3))) / 2.0) * 1.05
        c = np.round(np.asarray(center, float) / (r / 32.0)) * (r / 32.0)
        view = look_at(c - self.light_dir * 4.0 * r, c)
        proj = np.eye(4)
        proj[0, 0] = proj[1, 1] = 1.0 / r
        near, far = 0.0, 8.0 * r
        proj[2, 2] = -2.0 / (far - near)
        proj[2, 3] = -(far + near) / (far - near)
        return proj @ view

    def _shadow_target(self, size: int) -> None:
        """(Re)create the shadow map with ``size`` texels per side."""
        if self.shadow_map is not None:
            if self.shadow_map.width == size:
                return
            self.shadow_fbo.release()
            self.shadow_map.release()
        self.shadow_map = self.ctx.depth_texture((size, size))
        self.shadow_map.compare_func = "<="
        self.shadow_map.filter = (moderngl.LINEAR, moderngl.LINEAR)
        self.shadow_map.repeat_x = self.shadow_map.repeat_y = False
        self.shadow_fbo = self.ctx.framebuffer(depth_attachment=self.shadow_map)

    @staticmethod
    def shadow_size(scale: float) -> int:
        """Shadow-map texels per side at a render scale: the power of two nearest to SHADOW_SIZE
        times the scale, so that a shadow's edge spans about as many screen pixels at every scale
        (filling a smaller map and reading it are cheaper with a software rasteriser)."""
        n = SHADOW_SIZE * 2.0 ** round(math.log2(max(scale, 1e-3)))
        return int(min(max(n, MIN_SHADOW_SIZE), SHADOW_SIZE))

    # ------------------------------------------------------------------------------------------
    def _shape(self, key, layer) -> _Shape:
        """The GPU shape for a unit mesh in a layer, created on first use."""
        shape = self.layer_shapes.get((key, layer))
        if shape is None:
            if isinstance(key, tuple):
                base = self.mesh_shapes[key[1]]
                verts, idx = base.vertices, base.indices
            elif layer == "decor" and key in self.unit_decor:
                verts, idx = self.unit_decor[key]
            else:
                verts, idx = self.unit[key]
            sp = self.shadow_prog if layer == "opaque" and key != "plane" else None
            shape = _Shape(self.ctx, self.prog, verts, idx, shadow_prog=sp,
                           closed=key in CLOSED_SHAPES)
            shape.vertices, shape.indices = verts, idx
            self.layer_shapes[(key, layer)] = shape
        return shape

    def view_projection(self, width, height):
        """(view-projection, eye) of the active camera: a model camera or the orbit camera."""
        aspect = width / max(height, 1)
        cam = self.camera
        fixed = self.fixed_camera
        if fixed is not None:
            pos, xmat, fovy = fixed
            rot = np.asarray(xmat, float).reshape(3, 3)
            view = np.eye(4)
            view[:3, :3] = rot.T            # camera looks along its -z, y up (MuJoCo convention)
            view[:3, 3] = -rot.T @ np.asarray(pos, float)
            znear = max(0.01, 0.01 * cam.distance)
            from .camera import perspective
            return perspective(fovy, aspect, znear, 200.0 * max(1.0, cam.distance)) @ view, \
                np.asarray(pos, float)
        return cam.projection(aspect) @ cam.view(), cam.eye

    def render(self, fbo: moderngl.Framebuffer, width: int, height: int, d, scene=None,
               view_size=None) -> None:
        """Clear ``fbo`` and draw ``scene`` (default: the geoms of ``d``) into its ``width`` x
        ``height`` pixels. ``view_size``: the (width, height) whose aspect ratio the camera uses
        (the window's, when the scene is drawn at a render scale, which also sets the shadow-map
        size: ``shadow_size``); default ``(width, height)``."""
        from . import scene as scene_mod
        if scene is None:
            scene = scene_mod.build(self.m, d, self.options, colors=self.colors,
                                    extent=self.extent)
        ctx = self.ctx
        fbo.use()
        ctx.viewport = (0, 0, width, height)
        fbo.clear(*BACKGROUND, 1.0, depth=1.0)
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.BLEND)   # opaque geoms overwrite: blending would read every pixel
        ctx.depth_func = "<"
        ctx.disable(moderngl.CULL_FACE)
        ctx.front_face, ctx.cull_face = "ccw", "back"
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        cam = self.camera
        view_size = view_size or (width, height)
        self._shadow_target(self.shadow_size(width / max(view_size[0], 1)))
        vp, eye = self.view_projection(*view_size)
        self.prog["u_viewproj"].write(vp.T.astype("f4").tobytes())
        self._set("u_eye", tuple(eye))
        self._set("u_light_dir", tuple(self.light_dir))
        self._set("u_background", BACKGROUND)
        self._set("u_fog_start", 6.0 * cam.distance)
        self._set("u_fog_end", 30.0 * cam.distance)
        for s in self.layer_shapes.values():
            s.count = 0
        for (key, layer), inst in scene.instances.items():
            if isinstance(key, tuple) and key[1] not in self.mesh_shapes:
                continue
            self._shape(key, layer).upload(inst)
        layers = {"opaque": [], "transparent": [], "decor": []}
        for (key, layer), shape in self.layer_shapes.items():
            layers[layer].append(shape)
        # pass 1: depth from the light
        light_vp = self.light_viewproj(scene.center, scene.radius).T.astype("f4").tobytes()
        shadows = bool(getattr(self.options, "shadows", True))
        if shadows:
            self.shadow_fbo.use()
            ctx.viewport = (0, 0, self.shadow_map.width, self.shadow_map.width)
            self.shadow_fbo.clear(depth=1.0)
            self.shadow_prog["u_light_viewproj"].write(light_vp)
            for s in layers["opaque"]:
                s.draw_shadow()
        # pass 2: the picture; opaque first, then decorations, then transparent without depth writes
        fbo.use()
        ctx.viewport = (0, 0, width, height)
        self.prog["u_light_viewproj"].write(light_vp)
        self.shadow_map.use(location=0)
        self._set("u_shadow_map", 0)
        self._set("u_shadow_on", 1.0 if shadows else 0.0)
        for s in layers["opaque"]:
            s.draw()
        self._set("u_shadow_on", 0.0)
        ctx.enable(moderngl.BLEND)
        for s in layers["decor"]:
            s.draw()
        ctx.depth_mask = False
        for s in layers["transparent"]:
            s.draw()
        ctx.depth_mask = True

    def _set(self, name, value) -> None:
        if name in self.prog:                       # the GLSL compiler may drop unused uniforms
            self.prog[name].value = value

    def release(self) -> None:
        for s in self.layer_shapes.values():
            s.release()
        self.layer_shapes.clear()
        self.shadow_fbo.release()
        self.shadow_map.release()
        self.shadow_prog.release()
        self.prog.release()



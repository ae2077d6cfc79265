"""Draws a model's geoms with moderngl: one instanced draw call per unit mesh.

Shared by the window (``studio.app``) and the offscreen screenshot (``studio.headless``). Reads
only ``geom_xpos (ngeom,3)`` and ``geom_xmat (ngeom,9, row-major)`` from Data and the geom/mesh
arrays of the Model, with MuJoCo's names. Shader programs are files in ``shaders/``.
"""
from __future__ import annotations

from pathlib import Path

import math

import moderngl
import numpy as np

from . import meshes
from .camera import OrbitCamera, look_at

SHADER_DIR = Path(__file__).resolve().parent.parent / "shaders"
BACKGROUND = (0.11, 0.13, 0.17)       # clear colour (linear RGB, 0..1)

# engine.GeomType values (MuJoCo's mjtGeom)
PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = range(8)
INFINITE_PLANE = 50.0                 # half-size drawn for a plane whose size is 0 (infinite)
HIDDEN_GROUPS_FROM = 3                # like MuJoCo, geom groups 0-2 are visible by default
DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)    # MuJoCo's default geom colour (a material's colour wins over it)
FLOOR_TINT = (0.40, 0.45, 0.52)       # applied to a plane's material colour
SHADOW_SIZE = 1024                    # shadow map resolution (texels per side)

# per-instance layout: pos 3, rows 3x3, scale 3, rgba 4, checker 1 = 20 floats
_INSTANCE_FORMAT = "3f 3f 3f 3f 3f 4f 1f/i"
_INSTANCE_ATTRS = ("i_pos", "i_row0", "i_row1", "i_row2", "i_scale", "i_color", "i_checker")
_NFLOAT = 20


def load_shader(name: str) -> str:
    return (SHADER_DIR / name).read_text()


class _Shape:
    """A unit mesh on the GPU with a growable instance buffer."""

    def __init__(self, ctx: moderngl.Context, prog: moderngl.Program, vertices, indices,
                 shadow_prog: moderngl.Program | None = None):
        self.ctx, self.prog, self.shadow_prog = ctx, prog, shadow_prog
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
            [(self.vbo, "3f 3f", "in_pos", "in_normal"),
             (self.inst, _INSTANCE_FORMAT, *_INSTANCE_ATTRS)],
            index_buffer=self.ibo, index_element_size=4)
        if self.shadow_prog is not None:
            self.shadow_vao = self.ctx.vertex_array(
                self.shadow_prog,
                [(self.vbo, "3f 12x", "in_pos"),
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

    def draw(self) -> None:
        if self.count and self.nindex:
            self.vao.render(moderngl.TRIANGLES, vertices=self.nindex, instances=self.count)

    def draw_shadow(self) -> None:
        if self.count and self.nindex and self.shadow_vao is not None:
            self.shadow_vao.render(moderngl.TRIANGLES, vertices=self.nindex, instances=self.count)

    def release(self) -> None:
        for obj in (self.vao, self.shadow_vao, self.inst, self.ibo, self.vbo):
            if obj is not None:
                obj.release()


def _instances(pos, mat, scale, rgba, checker=None) -> np.ndarray:
    n = pos.shape[0]
    out = np.empty((n, _NFLOAT), dtype=np.float32)
    out[:, 0:3] = pos
    out[:, 3:12] = mat
    out[:, 12:15] = scale
    out[:, 15:19] = rgba
    out[:, 19] = 0.0 if checker is None else checker
    return out


class Renderer:
    """GPU resources for one model; ``render`` draws a Data's current pose into a framebuffer."""

    def __init__(self, ctx: moderngl.Context, m):
        self.ctx = ctx
        self.m = m
        self.prog = ctx.program(vertex_shader=load_shader("mesh.vert"),
                                fragment_shader=load_shader("mesh.frag"))
        self.shadow_prog = ctx.program(vertex_shader=load_shader("shadow.vert"),
                                       fragment_shader=load_shader("shadow.frag"))
        sp = self.shadow_prog
        self.shapes = {
            "sphere": _Shape(ctx, self.prog, *meshes.sphere(), shadow_prog=sp),
            "cylinder": _Shape(ctx, self.prog, *meshes.cylinder(), shadow_prog=sp),
            "box": _Shape(ctx, self.prog, *meshes.box(), shadow_prog=sp),
            "plane": _Shape(ctx, self.prog, *meshes.plane(8)),     # receives, does not cast
        }
        self.shadow_map = ctx.depth_texture((SHADOW_SIZE, SHADOW_SIZE))
        self.shadow_map.compare_func = "<="
        self.shadow_map.filter = (moderngl.LINEAR, moderngl.LINEAR)
        self.shadow_map.repeat_x = self.shadow_map.repeat_y = False
        self.shadow_fbo = ctx.framebuffer(depth_attachment=self.shadow_map)
        self.scene_center = np.zeros(3)
        self.scene_radius = 1.0
        self.mesh_shapes = {}
        nmesh = int(getattr(m, "nmesh", 0))
        for i in range(nmesh):
            va, vn = int(m.mesh_vertadr[i]), int(m.mesh_vertnum[i])
            fa, fn = int(m.mesh_faceadr[i]), int(m.mesh_facenum[i])
            v, idx = meshes.triangle_soup(m.mesh_vert[va:va + vn], m.mesh_face[fa:fa + fn])
            self.mesh_shapes[i] = _Shape(ctx, self.prog, v, idx, shadow_prog=sp)
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
        self.camera.frame(d.geom_xpos, m.geom_type, m.geom_size, getattr(m, "geom_rbound", None))
        self.scene_center = self.camera.target.copy()
        self.scene_radius = max(self.camera.distance * math.sin(math.radians(self.camera.fovy) / 2),
                                0.1) * 1.5

    def light_viewproj(self) -> np.ndarray:
        """Orthographic view from the directional light covering the framed scene."""
        r = self.scene_radius
        c = self.scene_center
        view = look_at(c - self.light_dir * 4.0 * r, c)
        proj = np.eye(4)
        proj[0, 0] = proj[1, 1] = 1.0 / r
        near, far = 0.0, 8.0 * r
        proj[2, 2] = -2.0 / (far - near)
        proj[2, 3] = -(far + near) / (far - near)
        return proj @ view

    # ------------------------------------------------------------------------------------------
    def _geom_colors(self) -> np.ndarray:
        """geom_rgba, or the material's colour where a material is set and rgba is MuJoCo's default."""
        m = self.m
        rgba = np.array(m.geom_rgba, dtype=float).reshape(-1, 4)
        matid = getattr(m, "geom_matid", None)
        mat_rgba = getattr(m, "mat_rgba", None)
        if matid is not None and mat_rgba is not None and len(mat_rgba):
            matid = np.asarray(matid).reshape(-1)
            mat_rgba = np.asarray(mat_rgba, float).reshape(-1, 4)
            use = (matid >= 0) & (matid < len(mat_rgba)) & \
                np.all(np.isclose(rgba, DEFAULT_RGBA), axis=1)
            rgba[use] = mat_rgba[matid[use]]
            # a material floor is usually a texture (not drawn): a muted checker tinted by it
            floor = use & (np.asarray(m.geom_type).reshape(-1) == PLANE)
            rgba[floor, :3] *= FLOOR_TINT
        return rgba

    def _draw_lists(self, d) -> dict:
        """Instance arrays per shape key from the geoms' current poses."""
        m = self.m
        gtype = np.asarray(m.geom_type).reshape(-1)
        size = np.asarray(m.geom_size, float).reshape(-1, 3)
        rgba = self._geom_colors()
        pos = np.asarray(d.geom_xpos, float).reshape(-1, 3)
        mat = np.asarray(d.geom_xmat, float).reshape(-1, 9)
        visible = rgba[:, 3] > 0.0
        group = getattr(m, "geom_group", None)
        if group is not None:
            visible &= np.asarray(group).reshape(-1) < HIDDEN_GROUPS_FROM
        lists = {}

        def add(key, arr):
            lists.setdefault(key, []).append(arr)

        sel = visible & ((gtype == SPHERE) | (gtype == ELLIPSOID))
        if np.any(sel):
            sc = np.where((gtype[sel] == SPHERE)[:, None], size[sel][:, [0, 0, 0]], size[sel])
            add("sphere", _instances(pos[sel], mat[sel], sc, rgba[sel]))
        sel = visible & (gtype == BOX)
        if np.any(sel):
            add("box", _instances(pos[sel], mat[sel], size[sel], rgba[sel]))
        sel = visible & ((gtype == CYLINDER) | (gtype == CAPSULE))
        if np.any(sel):
            add("cylinder", _instances(pos[sel], mat[sel], size[sel][:, [0, 0, 1]], rgba[sel]))
        sel = visible & (gtype == CAPSULE)
        if np.any(sel):
            zaxis = mat[sel][:, [2, 5, 8]]                  # third column of the rotation
            half = size[sel][:, 1:2]
            r = size[sel][:, [0, 0, 0]]
            for sign in (-1.0, 1.0):
                add("sphere", _instances(pos[sel] + sign * half * zaxis, mat[sel], r, rgba[sel]))
        sel = visible & (gtype == PLANE)
        if np.any(sel):
            half = size[sel][:, :2].copy()
            half[half <= 0] = INFINITE_PLANE
            sc = np.concatenate([half, np.ones((half.shape[0], 1))], axis=1)
            cell = np.maximum(half.max(axis=1) / 20.0, 0.05)
            add("plane", _instances(pos[sel], mat[sel], sc, rgba[sel], cell))
        sel = visible & (gtype == MESH)
        if np.any(sel):
            dataid = np.asarray(m.geom_dataid).reshape(-1)
            for mid in np.unique(dataid[sel]):
                s2 = sel & (dataid == mid)
                if int(mid) in self.mesh_shapes:
                    add(("mesh", int(mid)),
                        _instances(pos[s2], mat[s2], np.ones((int(s2.sum()), 3)), rgba[s2]))
        return {k: np.concatenate(v) for k, v in lists.items()}

    def render(self, fbo: moderngl.Framebuffer, width: int, height: int, d) -> None:
        """Clear ``fbo`` and draw every visible geom of ``d`` into it."""
        ctx = self.ctx
        fbo.use()
        ctx.viewport = (0, 0, width, height)
        fbo.clear(*BACKGROUND, 1.0, depth=1.0)
        ctx.enable(moderngl.DEPTH_TEST | moderngl.BLEND)
        ctx.depth_func = "<"
        ctx.disable(moderngl.CULL_FACE)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        cam = self.camera
        vp = cam.projection(width / max(height, 1)) @ cam.view()
        self.prog["u_viewproj"].write(vp.T.astype("f4").tobytes())
        self._set("u_eye", tuple(cam.eye))
        self._set("u_light_dir", tuple(self.light_dir))
        self._set("u_background", BACKGROUND)
        self._set("u_fog_start", 6.0 * cam.distance)
        self._set("u_fog_end", 30.0 * cam.distance)
        lists = self._draw_lists(d)
        shapes = list(self.shapes.values()) + list(self.mesh_shapes.values())
        for s in shapes:
            s.count = 0
        for key, inst in lists.items():
            shape = self.mesh_shapes[key[1]] if isinstance(key, tuple) else self.shapes[key]
            shape.upload(inst)
        # pass 1: depth from the light
        light_vp = self.light_viewproj().T.astype("f4").tobytes()
        self.shadow_fbo.use()
        ctx.viewport = (0, 0, SHADOW_SIZE, SHADOW_SIZE)
        self.shadow_fbo.clear(depth=1.0)
        self.shadow_prog["u_light_viewproj"].write(light_vp)
        for s in shapes:
            s.draw_shadow()
        # pass 2: the picture
        fbo.use()
        ctx.viewport = (0, 0, width, height)
        self.prog["u_light_viewproj"].write(light_vp)
        self.shadow_map.use(location=0)
        self._set("u_shadow_map", 0)
        self._set("u_shadow_on", 1.0)
        for s in shapes:
            s.draw()

    def _set(self, name, value) -> None:
        if name in self.prog:                       # the GLSL compiler may drop unused uniforms
            self.prog[name].value = value

    def release(self) -> None:
        for s in list(self.shapes.values()) + list(self.mesh_shapes.values()):
            s.release()
        self.shadow_fbo.release()
        self.shadow_map.release()
        self.shadow_prog.release()
        self.prog.release()



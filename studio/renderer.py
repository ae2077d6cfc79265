"""Draws a model's scene with moderngl: one instanced draw call per (unit mesh, layer, texture).

Shared by the window (``studio.app``) and the offscreen screenshot (``studio.headless``). A
frame (``render``) draws a ``studio.scene.Scene`` in this order:

1. shadow maps: the depth of the opaque geoms seen from up to two shadow-casting lights
   (``castshadow``; a directional light looks along its direction over the bodies' bounding
   sphere, a spot light through its cone, a point light towards the bodies);
2. the mirror: with a reflective plane in view (material ``reflectance``), the opaque geoms
   mirrored in it, drawn first into the picture with the plane's reflectance as their alpha
   (the depth cleared after them), and the plane drawn over them blending by that alpha
   (MuJoCo's stencil mirror, without a stencil: the skybox, or the background colour, then
   covers what they left beyond the plane);
3. the opaque geoms (Blinn-Phong with the model's lights and the headlight, ``visual/headlight``;
   materials' emission, specular, shininess; 2D and cube textures with mipmaps and anisotropic
   filtering, so the floor grid does not shimmer), then the skybox behind them, the decorations,
   and the transparent geoms without depth writes.

Mesh geoms are drawn at a level of detail chosen per geom and frame (``studio.meshes.mesh_lods``:
the coarsest whose cells cover about a pixel of the target, a shadow texel in the shadow pass),
computed in a background thread after loading; the mesh buffers are uploaded once, and a frame
uploads only the instances. Shader programs are files in ``shaders/``.
"""
from __future__ import annotations

import math
import threading
import weakref

import moderngl
import numpy as np

from engine.enums import LightType

from . import SHADER_DIR, meshes
from .camera import OrbitCamera, look_at, model_statistic, perspective
from .hfield_mesh import hfield_meshes
from .scene import (GRID, INFINITE_PLANE, MATERIAL, NFLOAT, SceneOptions, geom_colors,
                    model_extent)
from .textures import default_grid, skybox_index, texture_pixels

BACKGROUND = (0.11, 0.13, 0.17)       # clear colour (linear RGB, 0..1) without a skybox

SHADOW_SIZE = 1024                    # shadow map resolution (texels per side) at render scale 1
MIN_SHADOW_SIZE = 256
MAX_SHADOWS = 2                       # lights casting shadows (the first ones with castshadow)
MAXLIGHT = 8                          # lights drawn (the headlight and the model's first 7)
LOD_PIXELS = 3.0                      # a level's cell may cover this many target pixels
SHADOW_TEXELS = 8.0                   # ... and this many shadow-map texels in the shadow pass
# ... with a software rasteriser, whose time follows the triangles (set up and binned on one
# thread): go1's shadow pass 26k -> 12k triangles, 6.0-6.6 -> 3.3-3.5 ms a frame in the window
SOFTWARE_SHADOW_TEXELS = 16.0
# anisotropic filtering of the textures (the floor at grazing angles) on a GPU; a software
# rasteriser pays several times a plain mipmapped lookup for it (llvmpipe: the floor costs 3.5
# times as much), so there the mipmaps alone keep the far floor from shimmering
ANISOTROPY = 8.0
# unit meshes that are closed surfaces (studio.meshes: counter-clockwise seen from outside), drawn
# with back faces culled in every pass. Mesh assets are wound counter-clockwise seen from outside
# too (MuJoCo's convention) but may be open: as MuJoCo's renderer (its "Cull Face" flag, on by
# default) the picture and the mirror cull their back faces (SceneOptions.cull_faces), while all
# their faces cast shadows. Height fields are never culled.
CLOSED_SHAPES = ("sphere", "capsule", "cylinder", "box")
SPOT, DIRECTIONAL, POINT = (int(LightType.SPOT), int(LightType.DIRECTIONAL), int(LightType.POINT))
GL_CLIP_DISTANCE0 = 0x3000

# the instance columns (studio.scene: NFLOAT floats) as vertex attributes
_INSTANCE_LAYOUT = (("3f", "i_pos"), ("3f", "i_row0"), ("3f", "i_row1"), ("3f", "i_row2"),
                    ("3f", "i_scale"), ("4f", "i_color"), ("4f", "i_material"), ("4f", "i_texmap"))
assert NFLOAT == sum(int(f[0]) for f, _ in _INSTANCE_LAYOUT)


def instance_format(prog, layout=_INSTANCE_LAYOUT) -> tuple:
    """(moderngl buffer format, attribute names) of the instance columns that ``prog`` reads;
    the columns it does not read (the compiler drops unused inputs) are skipped as padding."""
    fmt, names = [], []
    for f, name in layout:
        if name in prog:
            fmt.append(f)
            names.append(name)
        else:
            fmt.append(f"{4 * int(f[0])}x")
    return " ".join(fmt) + "/i", names


def set_uniform(prog, name, value) -> None:
    if name in prog:                       # the GLSL compiler may drop unused uniforms
        prog[name].value = value


def write_uniform(prog, name, array) -> None:
    """Write a float uniform (an array's first elements as the compiler kept them)."""
    if name in prog:
        u = prog[name]
        a = np.ascontiguousarray(array, dtype="f4")
        u.write(np.ascontiguousarray(a.reshape(-1, u.dimension)[:max(u.array_length, 1)]).tobytes())


class _Uniforms:
    """Uniform values shared by the geom programs (one per feature set, ``Renderer._program``):
    set once, written into each program when it next draws (``apply``)."""

    def __init__(self):
        self.values = {}                 # name -> (value, is an array)
        self.log = []                    # names in the order they were set this frame
        self.applied = {}                # program -> len(log) when it was last brought up to date

    def new_frame(self) -> None:
        self.log.clear()
        self.applied.clear()

    def set(self, name, value, array=False) -> None:
        """A uniform's value (a number or a tuple)."""
        self.values[name] = (value, array)
        self.log.append(name)

    def array(self, name, value) -> None:
        """A float uniform from an array (its first elements as the compiler kept them)."""
        self.set(name, value, array=True)

    def apply(self, prog) -> None:
        n = self.applied.get(prog)
        for name in (self.values if n is None else self.log[n:]):
            value, array = self.values[name]
            (write_uniform if array else set_uniform)(prog, name, value)
        self.applied[prog] = len(self.log)


def load_shader(name: str) -> str:
    return (SHADER_DIR / name).read_text()


def _floats(text, default):
    try:
        return [float(x) for x in str(text).split()]
    except (TypeError, ValueError):
        return list(default)


def visual(m, section, key, default):
    """A value of the model's ``<visual>`` element (MuJoCo's default when absent)."""
    v = (getattr(m, "visual", None) or {}).get(section, {}).get(key)
    if v is None:
        return default
    if isinstance(default, (list, tuple)):
        out = _floats(v, default)
        return out if len(out) == len(default) else list(default)
    try:
        return type(default)(float(v))
    except (TypeError, ValueError):
        return default


class _Geometry:
    """A mesh on the GPU (vertex and index buffers), uploaded once."""

    def __init__(self, ctx, vertices, indices, closed=False, mesh=False):
        self.nindex = int(indices.size)
        self.vbo = ctx.buffer(np.ascontiguousarray(vertices, np.float32).tobytes())
        self.ibo = ctx.buffer(np.ascontiguousarray(indices, np.uint32).tobytes()) \
            if indices.size else None
        self.closed = closed            # culled in every pass
        self.mesh = mesh                # a mesh asset: culled in the picture when asked

    def release(self):
        for b in (self.vbo, self.ibo):
            if b is not None:
                b.release()


class _Batch:
    """Instances of one geometry drawn together: a growable instance buffer and its VAOs."""

    def __init__(self, ctx, prog, shadow_prog, geometry: _Geometry, features=frozenset()):
        self.ctx, self.prog, self.shadow_prog, self.geometry = ctx, prog, shadow_prog, geometry
        self.features = features         # of the geom program drawing it (Renderer._program)
        self.capacity = 0
        self.inst = self.vao = self.shadow_vao = None
        self.count = 0
        self.plane_half = 0.0            # planes: the largest half-size (the haze's distance)
        self._grow(16)

    def _grow(self, n):
        for obj in (self.vao, self.shadow_vao, self.inst):
            if obj is not None:
                obj.release()
        self.capacity = n
        g = self.geometry
        self.inst = self.ctx.buffer(reserve=n * NFLOAT * 4, dynamic=True)
        fmt, names = instance_format(self.prog)
        self.vao = self.ctx.vertex_array(
            self.prog, [(g.vbo, "3f 3f 1f", "in_pos", "in_normal", "in_end"),
                        (self.inst, fmt, *names)],
            index_buffer=g.ibo, index_element_size=4)
        fmt, names = instance_format(self.shadow_prog)
        self.shadow_vao = self.ctx.vertex_array(
            self.shadow_prog, [(g.vbo, "3f 12x 1f", "in_pos", "in_end"), (self.inst, fmt, *names)],
            index_buffer=g.ibo, index_element_size=4)

    def upload(self, inst: np.ndarray) -> None:
        n = inst.shape[0]
        if n > self.capacity:
            self._grow(max(n, 2 * self.capacity))
        if n:
            self.inst.write(np.ascontiguousarray(inst, dtype=np.float32).tobytes())
        self.count = n

    def draw(self, shadow=False, cull_meshes=False) -> None:
        """Draw the instances; back faces culled for a closed unit mesh, and for a mesh asset
        outside the shadow pass when ``cull_meshes``."""
        g = self.geometry
        if not self.count or not g.nindex:
            return
        cull = g.closed or (g.mesh and cull_meshes and not shadow)
        if cull:                  # back faces hidden behind the front ones: not rasterised
            self.ctx.enable(moderngl.CULL_FACE)
        (self.shadow_vao if shadow else self.vao).render(moderngl.TRIANGLES, vertices=g.nindex,
                                                         instances=self.count)
        if cull:
            self.ctx.disable(moderngl.CULL_FACE)

    def release(self) -> None:
        for obj in (self.vao, self.shadow_vao, self.inst):
            if obj is not None:
                obj.release()


# the meshes' levels of detail computed for a model, by mesh id: a second Renderer of the same
# model (the studio's, after the start-up screen drew the model while the engine compiled)
# starts with them instead of computing them again
_LEVELS = weakref.WeakKeyDictionary()


class _MeshLevels:
    """The levels of detail of a mesh asset: the triangle soup at once, smooth levels later
    (at once when a Renderer of the same model computed them: _LEVELS)."""

    def __init__(self, vert, face):
        self.soup = meshes.triangle_soup(vert, face)
        self.levels = None                  # [(cell, (vertices, indices))] once computed
        self.vert, self.face = vert, face


class Renderer:
    """GPU resources for one model; ``render`` draws a Data's current pose into a framebuffer."""

    def __init__(self, ctx: moderngl.Context, m, d=None):
        """``d``: the model's Data at qpos0 after forward, for the camera's framing statistic
        (MuJoCo's stat.center and extent) and the decorations' scale."""
        from .viewport import is_software
        self.ctx = ctx
        self.m = m
        self.software = is_software(ctx)
        self.shadow_texels = SOFTWARE_SHADOW_TEXELS if self.software else SHADOW_TEXELS
        self.light_code = None               # the LIGHTS of the compiled programs, and fog
        self.programs = {}                   # features -> the geom program (_program)
        self.uniforms = _Uniforms()          # the geom programs' uniforms
        self.shadow_prog = ctx.program(vertex_shader=load_shader("shadow.vert"),
                                       fragment_shader=load_shader("shadow.frag"))
        self.sky_prog = ctx.program(vertex_shader=load_shader("skybox.vert"),
                                    fragment_shader=load_shader("skybox.frag"))
        self.sky_vao = ctx.vertex_array(self.sky_prog, [])
        self.unit = {"sphere": meshes.sphere(), "cylinder": meshes.cylinder(),
                     "capsule": meshes.capsule(), "box": meshes.box(), "plane": meshes.plane(8)}
        # decorations (contact points, force arrows, tendons, axes) are small: coarse meshes
        self.unit_decor = {"sphere": meshes.sphere(10, 6), "cylinder": meshes.cylinder(8),
                           "capsule": meshes.capsule(10, 6)}
        self.geometries = {}                 # (shape, detail) -> _Geometry
        self.batches = {}                    # (scene key, detail) -> _Batch
        self.textures = {}                   # texture key -> moderngl texture
        self.options = SceneOptions()
        self.fixed_camera = None             # (pos, xmat, fovy) of a model camera, or None: orbit
        self.colors = geom_colors(m)
        if d is not None:
            self.extent = model_extent(m, d)
            self.stat = model_statistic(m, d)
        else:
            self.extent, self.stat = 1.0, (np.zeros(3), 2.0)
        self.camera = OrbitCamera(extent=self.stat[1])
        self.align()
        self.shadow_maps = []                # [(depth texture, framebuffer)]
        self._shadow_targets(SHADOW_SIZE)
        self.sky = skybox_index(m)
        self.headlight = dict(ambient=visual(m, "headlight", "ambient", [0.1, 0.1, 0.1]),
                              diffuse=visual(m, "headlight", "diffuse", [0.4, 0.4, 0.4]),
                              specular=visual(m, "headlight", "specular", [0.5, 0.5, 0.5]),
                              active=visual(m, "headlight", "active", 1))
        self.haze_color = visual(m, "rgba", "haze", [0.15, 0.25, 0.35, 1.0])[:3]
        self.haze = visual(m, "map", "haze", 0.3)
        self.fog = (visual(m, "map", "fogstart", 3.0), visual(m, "map", "fogend", 10.0),
                    visual(m, "rgba", "fog", [0.0, 0.0, 0.0, 1.0])[:3])
        self.shadow_limit = int(visual(m, "quality", "shadowsize", 4096))
        self.mesh_data = {}
        for i in range(int(getattr(m, "nmesh", 0))):
            va, vn = int(m.mesh_vertadr[i]), int(m.mesh_vertnum[i])
            fa, fn = int(m.mesh_faceadr[i]), int(m.mesh_facenum[i])
            self.mesh_data[i] = _MeshLevels(m.mesh_vert[va:va + vn], m.mesh_face[fa:fa + fn])
        self._levels = _LEVELS.setdefault(m, {})
        for i, data in self.mesh_data.items():
            data.levels = self._levels.get(i)
        self.hfields = hfield_meshes(m)               # shape ids after the meshes
        self._lod_thread = threading.Thread(target=self._make_lods, name="mesh levels",
                                            daemon=True)
        self._lod_thread.start()
        self.light_dir = self._model_light()

    def _make_lods(self) -> None:
        for i, data in list(self.mesh_data.items()):
            if data.levels is None:
                data.levels = self._levels[i] = meshes.mesh_lods(data.vert, data.face)

    def wait_for_meshes(self, timeout=None) -> None:
        """Block until the meshes' levels of detail are computed (screenshots, tests)."""
        self._lod_thread.join(timeout)

    def _model_light(self) -> np.ndarray:
        """Direction of the model's first directional light, or a default sun (the fallback
        shadow of a model without lights)."""
        m = self.m
        for i in range(int(getattr(m, "nlight", 0))):
            if int(m.light_directional[i]) and int(m.light_active[i]):
                d = np.asarray(m.light_dir[i], float)
                if np.linalg.norm(d) > 1e-9:
                    return d / np.linalg.norm(d)
        d = np.array([0.3, 0.4, -1.0])
        return d / np.linalg.norm(d)

    def frame_model(self, d, aspect: float = 16.0 / 9.0) -> None:
        """Statistics of the model from a Data at qpos0, then ``align``."""
        self.extent = model_extent(self.m, d)
        self.stat = model_statistic(self.m, d)
        self.align(aspect)

    def align(self, aspect: float = 16.0 / 9.0) -> None:
        """The free camera as MuJoCo places it on load (mjv_defaultFreeCamera): looking at
        stat.center from 1.5 stat.extent along ``<visual><global azimuth elevation fovy>``,
        for a view of this aspect ratio (width / height)."""
        from .camera import global_view
        cam = self.camera
        cam.azimuth, cam.elevation, cam.fovy = global_view(self.m)
        cam.frame(*self.stat, aspect)

    # -- GPU resources ---------------------------------------------------------------------------
    def _shadow_targets(self, size: int) -> None:
        """(Re)create the shadow maps with ``size`` texels per side."""
        if self.shadow_maps and self.shadow_maps[0][0].width == size:
            return
        for tex, fbo in self.shadow_maps:
            fbo.release()
            tex.release()
        self.shadow_maps = []
        for _ in range(MAX_SHADOWS):
            tex = self.ctx.depth_texture((size, size))
            tex.compare_func = "<="
            tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
            tex.repeat_x = tex.repeat_y = False
            self.shadow_maps.append((tex, self.ctx.framebuffer(depth_attachment=tex)))

    @property
    def shadow_map(self):
        return self.shadow_maps[0][0]

    @staticmethod
    def shadow_size(scale: float) -> int:
        """Shadow-map texels per side at a render scale: the power of two nearest to SHADOW_SIZE
        times the scale, so that a shadow's edge spans about as many screen pixels at every scale
        (filling a smaller map and reading it are cheaper with a software rasteriser)."""
        n = SHADOW_SIZE * 2.0 ** round(math.log2(max(scale, 1e-3)))
        return int(min(max(n, MIN_SHADOW_SIZE), SHADOW_SIZE))

    def _texture(self, key):
        """The GPU texture of a model texture index (or GRID), made on first use."""
        tex = self.textures.get(key)
        if tex is None:
            ctx = self.ctx
            if key == GRID:
                kind, pix = "2d", default_grid()
            else:
                try:
                    kind, pix = texture_pixels(self.m, key)
                except (OSError, ValueError, KeyError):          # unreadable file: plain white
                    kind, pix = "2d", np.full((2, 2, 3), 255, np.uint8)
            if kind == "cube":
                w = pix.shape[1]
                tex = ctx.texture_cube((w, w), 3, np.ascontiguousarray(pix).tobytes())
                tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
            else:
                h, w = pix.shape[:2]
                tex = ctx.texture((w, h), 3, np.ascontiguousarray(pix).tobytes(), alignment=1)
                tex.build_mipmaps()
                tex.filter = (moderngl.LINEAR_MIPMAP_LINEAR, moderngl.LINEAR)
                if not self.software:
                    tex.anisotropy = min(ANISOTROPY, float(ctx.max_anisotropy))
            self.textures[key] = tex
        return tex

    def _geometry(self, shape, layer, detail):
        """The GPU geometry of a shape (a unit mesh name, or ("mesh", id)) at a detail level."""
        key = (shape, layer == "decor", detail)
        g = self.geometries.get(key)
        if g is None:
            data = self.mesh_data.get(shape[1]) if isinstance(shape, tuple) else None
            if isinstance(shape, tuple):
                if data is None:
                    verts, idx = self.hfields[shape[1]]
                elif detail < 0 or data.levels is None:
                    verts, idx = data.soup
                else:
                    verts, idx = data.levels[detail][1]
            elif layer == "decor" and shape in self.unit_decor:
                verts, idx = self.unit_decor[shape]
            else:
                verts, idx = self.unit[shape]
            g = _Geometry(self.ctx, verts, idx, closed=shape in CLOSED_SHAPES,
                          mesh=data is not None)
            self.geometries[key] = g
        return g

    def _batch(self, key, detail) -> _Batch:
        """The batch of a scene key and pass (key + (pass,)) at a level of detail."""
        b = self.batches.get((key, detail))
        if b is None:
            features = {"TEXTURE"} if len(key) > 3 else set()     # (shape, layer, texture, pass)
            if key[0] == "plane":
                features.add("HAZE")
            features = frozenset(features)
            b = _Batch(self.ctx, self._program(features), self.shadow_prog,
                       self._geometry(key[0], key[1], detail), features)
            self.batches[(key, detail)] = b
        return b

    # -- cameras and lights ----------------------------------------------------------------------
    def view_projection(self, width, height):
        """(view-projection, eye) of the active camera: a model camera or the free camera, for
        a view of ``width`` x ``height`` pixels."""
        aspect = width / max(height, 1)
        cam = self.camera
        fixed = self.fixed_camera
        if fixed is not None:
            pos, xmat, fovy = fixed
            rot = np.asarray(xmat, float).reshape(3, 3)
            view = np.eye(4)
            view[:3, :3] = rot.T            # camera looks along its -z, y up (MuJoCo convention)
            view[:3, 3] = -rot.T @ np.asarray(pos, float)
            return perspective(fovy, aspect, *cam.clip_planes()) @ view, np.asarray(pos, float)
        return cam.projection(aspect) @ cam.view(), cam.eye

    def lights(self, d, eye, forward):
        """[(type, pos, dir, ambient, diffuse, specular, attenuation, cutoff, exponent,
        castshadow)] of the headlight (when active) and the model's active lights."""
        m = self.m
        out = []
        hl = self.headlight
        if hl["active"]:
            out.append((DIRECTIONAL, eye, forward, hl["ambient"], hl["diffuse"], hl["specular"],
                        (1.0, 0.0, 0.0), 180.0, 0.0, False))
        types = getattr(m, "light_type", None)
        xpos = getattr(d, "light_xpos", None)
        for i in range(int(m.nlight)):
            if not int(m.light_active[i]) or xpos is None:
                continue
            t = int(types[i]) if types is not None and len(types) > i else \
                (DIRECTIONAL if int(m.light_directional[i]) else SPOT)
            if t not in (SPOT, DIRECTIONAL, POINT):
                continue
            out.append((t, np.asarray(d.light_xpos[i], float), np.asarray(d.light_xdir[i], float),
                        m.light_ambient[i], m.light_diffuse[i], m.light_specular[i],
                        m.light_attenuation[i], float(m.light_cutoff[i]),
                        float(m.light_exponent[i]), bool(m.light_castshadow[i])))
        return out[:MAXLIGHT]

    def light_viewproj(self, center, radius, light=None):
        """View-projection of a shadow map covering a sphere around the bodies' geoms where
        they are now (Scene.center, Scene.radius): orthographic along a directional light,
        perspective from a spot or point light; None when a point or spot light is inside the
        sphere. The radius is rounded up to a power of sqrt(2) and the centre to a grid of
        1/32 of it, so that the shadow map (and the shadows' edges) only change when the
        bodies have moved noticeably."""
        r = 2.0 ** (math.ceil(2.0 * math.log2(max(radius, 1e-3))) / 2.0) * 1.05
        c = np.round(np.asarray(center, float) / (r / 32.0)) * (r / 32.0)
        if light is None or light[0] == DIRECTIONAL:
            direction = self.light_dir if light is None else np.asarray(light[2], float)
            view = look_at(c - direction * 4.0 * r, c)
            proj = np.eye(4)
            proj[0, 0] = proj[1, 1] = 1.0 / r
            near, far = 0.0, 8.0 * r
            proj[2, 2] = -2.0 / (far - near)
            proj[2, 3] = -(far + near) / (far - near)
            return proj @ view
        pos = np.asarray(light[1], float)
        dist = float(np.linalg.norm(c - pos))
        if dist <= 1.02 * r:
            return None
        # a spot or point light looks at the bodies: the map covers every caster
        fov = min(2.0 * math.degrees(math.asin(r / dist)) + 2.0, 150.0)
        target = c
        up = (0.0, 0.0, 1.0) if abs(np.dot((target - pos) / max(np.linalg.norm(target - pos), 1e-9),
                                           (0, 0, 1))) < 0.99 else (0.0, 1.0, 0.0)
        return perspective(fov, 1.0, max(dist - r, 1e-3 * r), dist + r) @ look_at(pos, target, up)

    def _lights_code(self, lights, lshadow) -> None:
        """Set the geom programs' lights: mesh.frag's /* LIGHTS */ replaced by a shade() call per
        light (type and shadow map as literals). The programs are compiled again only when
        these change (a light switched on or off, shadows or fog toggled); the batches' vertex
        arrays follow."""
        code = " ".join(f"color += shade({i}, {int(lt[0])}, {k}, n, to_eye, base, specular, "
                        f"shininess);" for i, (lt, k) in enumerate(zip(lights, lshadow)))
        code = (code, bool(self.options.fog))
        if code == self.light_code:
            return
        old = list(self.programs.values())
        self.programs.clear()
        self.light_code = code
        for b in self.batches.values():
            b.prog = self._program(b.features)
            b._grow(b.capacity)
        for prog in old:
            prog.release()

    def _program(self, features) -> moderngl.Program:
        """The geom program with these features of mesh.frag (TEXTURE, HAZE; FOG when
        the fog is on) and the current lights, compiled on first use."""
        prog = self.programs.get(features)
        if prog is None:
            lights, fog = self.light_code or ("", False)
            defines = "".join(f"#define {f}\n"
                              for f in sorted(features | {"FOG"} if fog else features))
            head, _, rest = load_shader("mesh.frag").partition("\n")    # after #version
            source = head + "\n" + defines + rest.replace("/* LIGHTS */", lights)
            prog = self.ctx.program(vertex_shader=load_shader("mesh.vert"), fragment_shader=source)
            self.programs[features] = prog
        return prog

    # -- drawing ---------------------------------------------------------------------------------
    def frame_key(self, d, scene, view_size) -> tuple:
        """What a frame of ``scene`` looks like, for SceneViewport to skip drawing it again:
        the instances, the camera, the lights' poses, the options and the meshes' readiness."""
        import hashlib
        h = hashlib.blake2b(digest_size=16)
        for key in sorted(scene.instances, key=str):
            h.update(str(key).encode())
            h.update(scene.instances[key].tobytes())
        vp, _ = self.view_projection(*view_size)
        h.update(vp.tobytes())
        for name in ("light_xpos", "light_xdir"):
            a = getattr(d, name, None)
            if a is not None:
                h.update(np.ascontiguousarray(a).tobytes())
        ready = tuple(data.levels is not None for data in self.mesh_data.values())
        return h.digest(), repr(self.options), ready, tuple(view_size)

    def _detail(self, key, inst, eye, pixel_angle, cell=None):
        """Split the instances of a mesh batch by level of detail: [(detail, instances)] with
        detail -1 for the triangle soup (levels not ready) or the level index: the coarsest
        level whose cells cover at most LOD_PIXELS pixels of ``pixel_angle`` radians at the
        geom's distance, or at most ``cell`` (a length: the shadow map's texel)."""
        shape = key[0]
        data = self.mesh_data.get(shape[1]) if isinstance(shape, tuple) else None
        if data is None:
            return [(0, inst)]
        if data.levels is None:
            return [(-1, inst)]
        if (pixel_angle is None and cell is None) or len(data.levels) == 1:
            return [(0, inst)]
        cells = np.array([c for c, _ in data.levels])
        if cell is not None:
            return [(int(np.nonzero(cells <= cell)[0].max()), inst)]
        dist = np.linalg.norm(inst[:, 0:3] - eye, axis=1)
        fits = cells[None, :] <= (LOD_PIXELS * pixel_angle * np.maximum(dist, 1e-6))[:, None]
        level = np.where(fits, np.arange(len(cells))[None, :], 0).max(axis=1)
        levels = np.unique(level)
        if len(levels) == 1:
            return [(int(levels[0]), inst)]
        return [(int(lv), inst[level == lv]) for lv in levels]

    def render(self, fbo: moderngl.Framebuffer, width: int, height: int, d, scene=None,
               view_size=None) -> None:
        """Clear ``fbo`` and draw ``scene`` (default: the geoms of ``d``) into its ``width`` x
        ``height`` pixels. ``view_size``: the (width, height) of the view on the screen, whose
        aspect ratio the camera uses (the target is smaller at a reduced render scale, which
        also sets the shadow-map size: ``shadow_size``); default ``(width, height)``."""
        from . import scene as scene_mod
        if scene is None:
            scene = scene_mod.build(self.m, d, self.options, colors=self.colors,
                                    extent=self.extent)
        opts, cam = self.options, self.camera
        view_size = view_size or (width, height)
        scale = width / max(view_size[0], 1)
        size = min(self.shadow_size(scale), max(self.shadow_limit, MIN_SHADOW_SIZE))
        self._shadow_targets(size)
        vp, eye = self.view_projection(*view_size)
        inv = np.linalg.inv(vp)
        forward = inv @ np.array([0.0, 0.0, 1.0, 1.0])
        forward = forward[:3] / forward[3] - eye
        forward /= max(np.linalg.norm(forward), 1e-12)
        fovy = self.fixed_camera[2] if self.fixed_camera is not None else cam.fovy
        pixel_angle = 2.0 * math.tan(math.radians(fovy) / 2.0) / max(height, 1)

        # lights, shadow maps (up to MAX_SHADOWS lights with castshadow), the program for them
        lights = self.lights(d, eye, forward)
        maps, lshadow = [], [-1] * len(lights)
        if opts.shadows:
            for i in [i for i, lt in enumerate(lights) if lt[9]][:MAX_SHADOWS]:
                lvp = self.light_viewproj(scene.center, scene.radius, lights[i])
                if lvp is not None:
                    lshadow[i] = len(maps)
                    maps.append(lvp)
        self._lights_code(lights, lshadow)
        self.uniforms.new_frame()
        drawn = self._instances(scene, eye, pixel_angle,
                                self.shadow_texels * 2.0 * scene.radius / size)
        self._draw_shadows(maps, drawn["shadow"])

        # the uniforms of the picture
        n = len(lights)
        pad = MAXLIGHT - n

        def column(j, width=3):
            rows = [np.asarray(lt[j], float).reshape(-1)[:width] for lt in lights]
            return np.array(rows + [np.zeros(width)] * pad, "f4")
        for name, j in (("u_lpos", 1), ("u_ldir", 2), ("u_lambient", 3), ("u_ldiffuse", 4),
                        ("u_lspecular", 5), ("u_lattenuation", 6)):
            self.uniforms.array(name, column(j))
        spot = [(math.cos(math.radians(min(lt[7], 180.0))), lt[8]) for lt in lights]
        self.uniforms.array("u_lspot", np.array(spot + [(0.0, 0.0)] * pad, "f4"))
        light_vps = maps + [np.eye(4)] * (2 - len(maps))
        self.uniforms.array("u_shadow_vp", np.stack([light_vps[0].T, light_vps[1].T]))
        self.uniforms.set("u_shadow_on", 1.0 if maps else 0.0)
        for k, (tex, _) in enumerate(self.shadow_maps):
            tex.use(location=1 + k)
        for name, unit in (("u_shadow_map0", 1), ("u_shadow_map1", 2), ("u_tex2d", 3),
                           ("u_texcube", 4)):
            self.uniforms.set(name, unit)
        self.uniforms.set("u_eye", tuple(eye))
        self.uniforms.set("u_haze_color", tuple(self.haze_color))
        ext, fog = cam.extent, self.fog
        self.uniforms.set("u_fog", (fog[0] * ext, fog[1] * ext, 0.0) if opts.fog else (0.0,) * 3)
        self.uniforms.set("u_fog_color", tuple(fog[2]))
        self.uniforms.set("u_clip_plane", (0.0, 0.0, 0.0, 1.0))
        self.uniforms.array("u_reflect", np.eye(4))
        self.uniforms.set("u_alpha", -1.0)
        self.uniforms.set("u_haze_range", (0.0, 0.0))
        self._draw_picture(fbo, width, height, drawn, vp, eye, scene)

    def _draw_picture(self, fbo, width, height, drawn, vp, eye, scene) -> None:
        """The picture: clear ``fbo`` (alpha 0), the mirror pass, the reflective planes (blended
        over it), the opaque geoms, the skybox, the decorations and the transparent geoms
        without depth writes."""
        ctx, opts = self.ctx, self.options
        mirror = drawn["mirror"]
        fbo.use()
        ctx.viewport = (0, 0, width, height)
        fbo.clear(*BACKGROUND, 0.0, depth=1.0)
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.BLEND)   # opaque geoms overwrite: blending would read every pixel
        ctx.depth_func = "<"
        ctx.front_face, ctx.cull_face = "ccw", "back"
        self.uniforms.array("u_viewproj", vp.T)
        reflected = bool(mirror) and bool(opts.reflections) and self._draw_mirror(
            fbo, scene, drawn["reflected"], eye)
        ctx.wireframe = bool(opts.wireframe)
        if mirror:
            if reflected:             # plane (1 - a) + mirrored a, a = the mirror pass's alpha
                ctx.enable(moderngl.BLEND)
                ctx.blend_func = (moderngl.ONE_MINUS_DST_ALPHA, moderngl.DST_ALPHA,
                                  moderngl.ONE, moderngl.ZERO)
            self._draw_list(mirror, eye)
            ctx.disable(moderngl.BLEND)
        self._draw_list(drawn["opaque"], eye)
        ctx.wireframe = False
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        if self.sky >= 0 and opts.skybox:
            self._draw_sky(vp)
        elif reflected:               # over what the mirror pass left beyond the plane
            self._draw_sky(vp, flat=BACKGROUND)
        self.uniforms.set("u_shadow_on", 0.0)
        ctx.enable(moderngl.BLEND)
        self._draw_list(drawn["decor"], eye)
        ctx.depth_mask = False
        ctx.wireframe = bool(opts.wireframe)
        self._draw_list(drawn["transparent"], eye)
        ctx.wireframe = False
        ctx.depth_mask = True
        ctx.disable(moderngl.BLEND)

    def _instances(self, scene, eye, pixel_angle, texel) -> dict:
        """Upload this frame's instances into the batches, per level of detail: the picture's,
        the shadows' (``texel``: a shadow-map texel in world units) and the mirror's (cells
        of twice the picture's: the reflection shows through the plane's reflectance).
        Returns the draw lists {pass: [(batch, texture, shape)]}."""
        for b in self.batches.values():
            b.count = 0
        drawn = {"opaque": [], "mirror": [], "transparent": [], "decor": [], "shadow": [],
                 "reflected": []}
        for key, inst in scene.instances.items():
            shape, layer = key[0], key[1]
            if isinstance(shape, tuple) and shape[1] not in self.mesh_data \
                    and shape[1] not in self.hfields:
                continue
            tex = key[2] if len(key) > 2 else None
            passes = [(layer, pixel_angle)]
            if layer == "opaque" and shape != "plane":
                passes += [("shadow", None), ("reflected", 2.0 * pixel_angle)]
            whole = {}                 # detail -> the batch holding all of ``inst`` at it
            for name, angle in passes:
                for detail, part in self._detail(key, inst, eye, angle,
                                                 texel if name == "shadow" else None):
                    # a pass drawing every instance at a level already uploaded by an earlier
                    # pass draws that batch again (its vertex arrays read the same buffer)
                    b = whole.get(detail) if part is inst else None
                    if b is None:
                        b = self._batch((*key, name), detail)
                        b.upload(part)
                        if part is inst:
                            whole[detail] = b
                    if shape == "plane":
                        b.plane_half = float(part[:, 12:14].max())
                    drawn[name].append((b, tex, shape))
        return drawn

    def _draw_shadows(self, maps, casters) -> None:
        """Fill the shadow maps: the depth of ``casters`` seen by each light view-projection."""
        ctx = self.ctx
        for k, lvp in enumerate(maps):
            tex, sfbo = self.shadow_maps[k]
            sfbo.use()
            ctx.viewport = (0, 0, tex.width, tex.width)
            sfbo.clear(depth=1.0)
            ctx.enable(moderngl.DEPTH_TEST)
            ctx.depth_func = "<"
            write_uniform(self.shadow_prog, "u_light_viewproj", lvp.T)
            for b, _, _ in casters:
                b.draw(shadow=True)

    def _draw_list(self, items, eye) -> None:
        for b, tex, shape in items:
            if tex is not None:
                t = self._texture(tex)
                t.use(location=4 if isinstance(t, moderngl.TextureCube) else 3)
            if shape == "plane" and self.options.haze and b.plane_half >= INFINITE_PLANE:
                far = b.plane_half                   # an infinite plane fades at the horizon
                self.uniforms.set("u_haze_range", (0.45 * far, 0.95 * far))
            self.uniforms.apply(b.prog)
            b.draw(cull_meshes=self.options.cull_faces)
            if shape == "plane":
                self.uniforms.set("u_haze_range", (0.0, 0.0))

    def _draw_sky(self, vp, flat=None) -> None:
        """The skybox where nothing was drawn (depth 1), or the colour ``flat`` there."""
        ctx = self.ctx
        prog = self.sky_prog
        if flat is None:
            self._texture(self.sky).use(location=6)
        set_uniform(prog, "u_flat", (0.0, 0.0, 0.0, 0.0) if flat is None else (*flat, 1.0))
        set_uniform(prog, "u_sky", 6)
        write_uniform(prog, "u_inv_viewproj", np.linalg.inv(vp).T)
        set_uniform(prog, "u_haze_color", tuple(self.haze_color))
        set_uniform(prog, "u_haze", float(self.haze) if self.options.haze else 0.0)
        ctx.depth_func = "<="
        ctx.depth_mask = False
        self.sky_vao.render(moderngl.TRIANGLES, vertices=3)
        ctx.depth_mask = True
        ctx.depth_func = "<"

    def _draw_mirror(self, fbo, scene, opaque, eye) -> bool:
        """Draw the opaque geoms mirrored in the first reflective plane into ``fbo`` with the
        plane's reflectance as their alpha, then clear the depth; False if the eye is behind
        the mirror."""
        ctx = self.ctx
        key = next(k for k, v in scene.instances.items() if len(k) > 1 and k[1] == "mirror")
        plane = scene.instances[key][0]
        p = plane[0:3].astype(float)
        normal = plane[3:12].astype(float).reshape(3, 3)[:, 2]   # the plane's z axis (rows)
        offset = -float(normal @ p)
        if float(normal @ eye) + offset <= 0.0:
            return False
        reflect = np.eye(4)
        reflect[:3, :3] -= 2.0 * np.outer(normal, normal)
        reflect[:3, 3] = -2.0 * offset * normal
        ctx.enable_direct(GL_CLIP_DISTANCE0)
        ctx.front_face = "cw"                       # the reflection turns the winding over
        self.uniforms.array("u_reflect", reflect.T)
        self.uniforms.set("u_clip_plane", (*normal, offset))
        self.uniforms.set("u_alpha", float(plane[MATERIAL][3]))
        mirrored_eye = reflect[:3, :3] @ eye + reflect[:3, 3]
        self.uniforms.set("u_eye", tuple(mirrored_eye))
        self._draw_list(opaque, mirrored_eye)
        ctx.front_face = "ccw"
        ctx.disable_direct(GL_CLIP_DISTANCE0)
        self.uniforms.array("u_reflect", np.eye(4))
        self.uniforms.set("u_clip_plane", (0.0, 0.0, 0.0, 1.0))
        self.uniforms.set("u_eye", tuple(eye))
        self.uniforms.set("u_alpha", -1.0)
        # the mirrored geoms lie behind the plane: their depth must not hide the real ones
        mask = fbo.color_mask
        fbo.color_mask = (False, False, False, False)
        fbo.clear(depth=1.0)
        fbo.color_mask = mask
        fbo.use()                                   # (binding the target applies its mask)
        return True

    def release(self) -> None:
        for b in self.batches.values():
            b.release()
        self.batches.clear()
        for g in self.geometries.values():
            g.release()
        self.geometries.clear()
        for t in self.textures.values():
            t.release()
        self.textures.clear()
        for tex, fbo in self.shadow_maps:
            fbo.release()
            tex.release()
        self.shadow_maps = []
        self.sky_vao.release()
        for p in (self.sky_prog, self.shadow_prog, *self.programs.values()):
            p.release()
        self.programs.clear()


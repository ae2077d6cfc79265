"""The visual scene: flat instance lists built from a Model and a Data (or a runner Snapshot).

``build(m, d, opts, ...)`` returns a ``Scene``: for every (unit shape, layer[, texture]) a
float32 array of instances (position, rotation rows, scale, rgba, material, texture mapping),
ready for one instanced draw call each. Layers: ``opaque`` and ``transparent`` geoms, ``mirror``
(an opaque plane whose material reflects: the renderer draws the scene mirrored in it), and
``decor`` (sites, tendons, contacts, joint axes, centres of mass, inertia boxes, coordinate
frames, the perturbation spring; no shadows). Geoms keep their material's emission, specular,
shininess and reflectance and its texture (``m.materials``; MuJoCo's defaults without one); a
plane without a texture gets the studio's grid (``studio.textures.default_grid``) with squares
sized to the model (``checker_cell``). No GPU code here: the renderer uploads what this module
computes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.enums import GeomType

from .hfield_mesh import shape_id as hfield_shape_id

# engine.GeomType values (MuJoCo's mjtGeom)
PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = (int(t) for t in GeomType)
INFINITE_PLANE = 50.0                 # half-size drawn for a plane whose size is 0 (infinite)
HIDDEN_GROUPS_FROM = 3                # like MuJoCo, geom groups 0-2 are visible by default
DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)    # MuJoCo's default geom colour (a material's colour wins over it)
SELECT_RGBA = np.array([1.0, 0.85, 0.25])
# instance columns: pos 0:3, rotation rows 3:12, scale 12:15, rgba 15:19, material 19:23
# (emission, specular, shininess, reflectance), texture mapping 23:27 (repeat u, v, uniform,
# mode: 0 none, 1 a 2D texture, 2 a cube texture)
NFLOAT = 27
MATERIAL = slice(19, 23)
TEXMAP = slice(23, 27)
DEFAULT_MATERIAL = (0.0, 0.5, 0.5, 0.0)     # MuJoCo's material defaults
DECOR_MATERIAL = (0.0, 0.3, 0.3, 0.0)
GRID = "grid"                          # texture key of the studio's floor grid
TEX_2D, TEX_CUBE = 1.0, 2.0

# contact rows (engine.enums.ConstraintType)
CONTACT_PYRAMIDAL = 6


@dataclass
class SceneOptions:
    """What to draw besides the geoms (each a toggle in the Rendering panel)."""
    geoms: bool = True
    sites: bool = False
    tendons: bool = True
    contact_points: bool = True
    contact_frames: bool = False
    contact_forces: bool = True
    joints: bool = False
    com: bool = False
    inertia: bool = False
    perturbation: bool = True
    transparent: bool = False            # draw every geom half transparent
    shadows: bool = True
    reflections: bool = True
    skybox: bool = True
    fog: bool = False
    haze: bool = True
    textures: bool = True
    wireframe: bool = False
    cull_faces: bool = True              # mesh back faces not drawn (MuJoCo's "Cull Face")
    groups: list = field(default_factory=lambda: [True, True, True, False, False, False])


@dataclass
class Scene:
    instances: dict            # (shape key, layer) or (shape key, layer, texture) -> (n, NFLOAT)
    extent: float = 1.0
    center: np.ndarray = field(default_factory=lambda: np.zeros(3))   # of the bodies' geoms now
    radius: float = 1.0                                                 # (the shadows cover them)


def instances(pos, mat, scale, rgba, material=None, texmap=None) -> np.ndarray:
    n = pos.shape[0]
    out = np.empty((n, NFLOAT), dtype=np.float32)
    out[:, 0:3] = pos
    out[:, 3:12] = mat
    out[:, 12:15] = scale
    out[:, 15:19] = rgba
    out[:, MATERIAL] = DECOR_MATERIAL if material is None else material
    out[:, TEXMAP] = 0.0 if texmap is None else texmap
    return out


def frames_along(p0, p1):
    """Rotation rows (n, 9) whose z axis points from p0 to p1, and the half lengths (n,)."""
    v = np.asarray(p1, float) - np.asarray(p0, float)
    length = np.linalg.norm(v, axis=1)
    z = v / np.maximum(length, 1e-12)[:, None]
    z[length < 1e-12] = (0.0, 0.0, 1.0)
    helper = np.where(np.abs(z[:, 2:3]) < 0.9, [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.cross(z, x)
    rot = np.stack([x, y, z], axis=2)          # columns x y z -> rows of the matrix
    return rot.reshape(-1, 9), 0.5 * length


def segments(p0, p1, radius, rgba) -> np.ndarray:
    """Cylinders from p0 to p1 (n, 3) with the given radius (scalar or (n,)) and colours."""
    p0 = np.asarray(p0, float).reshape(-1, 3)
    p1 = np.asarray(p1, float).reshape(-1, 3)
    rot, half = frames_along(p0, p1)
    r = np.broadcast_to(np.asarray(radius, float), half.shape)
    scale = np.stack([r, r, half], axis=1)
    rgba = np.broadcast_to(np.asarray(rgba, float), (p0.shape[0], 4))
    return instances(0.5 * (p0 + p1), rot, scale, rgba)


def spheres(pos, radius, rgba) -> np.ndarray:
    pos = np.asarray(pos, float).reshape(-1, 3)
    n = pos.shape[0]
    r = np.broadcast_to(np.asarray(radius, float), (n,))
    mat = np.tile(np.eye(3).reshape(9), (n, 1))
    return instances(pos, mat, np.stack([r, r, r], axis=1),
                     np.broadcast_to(np.asarray(rgba, float), (n, 4)))


def geom_colors(m) -> np.ndarray:
    """geom_rgba, or the material's colour where a material is set and rgba is MuJoCo's default."""
    rgba = np.array(m.geom_rgba, dtype=float).reshape(-1, 4)
    mats = getattr(m, "materials", None) or []
    matid = np.asarray(m.geom_matid).reshape(-1)
    if mats:
        mat_rgba = np.array([mt.get("rgba", DEFAULT_RGBA) for mt in mats], float).reshape(-1, 4)
        use = (matid >= 0) & (matid < len(mat_rgba)) & np.all(np.isclose(rgba, DEFAULT_RGBA), axis=1)
        rgba[use] = mat_rgba[matid[use]]
    return rgba


def geom_materials(m) -> tuple[np.ndarray, np.ndarray, list]:
    """Per geom: material (ngeom, 4) = emission, specular, shininess, reflectance; texture
    mapping (ngeom, 4) = repeat u, v, uniform, mode; texture key (an index of m.textures,
    GRID for a plane without one, or None)."""
    n = int(m.ngeom)
    material = np.tile(np.asarray(DEFAULT_MATERIAL, float), (n, 1))
    texmap = np.zeros((n, 4))
    texkey = [None] * n
    mats = getattr(m, "materials", None) or []
    tex_index = {t.get("name"): i for i, t in enumerate(getattr(m, "textures", None) or [])}
    matid = np.asarray(m.geom_matid).reshape(-1)
    gtype = np.asarray(m.geom_type).reshape(-1)
    for g in range(n):
        k = int(matid[g])
        if 0 <= k < len(mats):
            mt = mats[k]
            material[g] = (mt["emission"], mt["specular"], mt["shininess"], mt["reflectance"])
            t = tex_index.get(mt.get("texture") or None)
            if t is not None:
                cube = m.textures[t].get("type", "cube") != "2d"
                texmap[g] = (*mt["texrepeat"], float(mt["texuniform"]),
                             TEX_CUBE if cube else TEX_2D)
                texkey[g] = t
        if texkey[g] is None and gtype[g] == PLANE:
            texkey[g] = GRID              # repeat set per frame from the model's size
            texmap[g] = (1.0, 1.0, 1.0, TEX_2D)
    return material, texmap, texkey


def geom_bounds(m, d) -> tuple[np.ndarray, float]:
    """Centre and radius of the bounding box of the non-plane geoms where they are in ``d``
    ((0, 0, 0) and 1 without such geoms)."""
    keep = np.asarray(m.geom_type) != PLANE
    if not np.any(keep):
        return np.zeros(3), 1.0
    pos = np.asarray(d.geom_xpos)[keep]
    rb = np.asarray(m.geom_rbound)[keep]
    lo = (pos - rb[:, None]).min(axis=0)
    hi = (pos + rb[:, None]).max(axis=0)
    return 0.5 * (lo + hi), 0.5 * float(np.linalg.norm(hi - lo))


def model_extent(m, d) -> float:
    """A length scale of the model: radius of the non-plane geoms' bounding box."""
    keep = np.asarray(m.geom_type) != PLANE
    return max(geom_bounds(m, d)[1], 0.05) if np.any(keep) else 1.0


def checker_cell(extent) -> float:
    """Side of a floor checker square: the 1-2-5 length at most half the model's size, so that
    a small model stands on small squares and a large one on large squares."""
    x = 0.5 * max(float(extent), 1e-6)
    decade = 10.0 ** np.floor(np.log10(x))
    return float(next(f * decade for f in (5.0, 2.0, 1.0) if f * decade <= x * (1 + 1e-12)))


class _Lists:
    def __init__(self):
        self.parts = {}

    def add(self, key, layer, arr=None):
        """Instances ``arr`` under (shape ``key``, ``layer``), or under the tuple ``key``."""
        if arr is None:
            key, arr = key, layer
        else:
            key = (key, layer)
        if arr is not None and len(arr):
            self.parts.setdefault(key, []).append(arr)

    def done(self):
        return {k: np.concatenate(v) for k, v in self.parts.items()}


def _plane_scale(size, extent):
    """A plane's drawn half-sizes: its own, or for an infinite one (size 0) far beyond the
    model (MuJoCo draws it to the far plane and fades it into the haze)."""
    half = size[:, :2].copy()
    half[half <= 0] = max(INFINITE_PLANE, 40.0 * float(extent))
    return np.concatenate([half, np.ones((half.shape[0], 1))], axis=1)


# Geom type -> (unit shape key, scale from (size, extent) of the geoms of that type). The one
# place where geom types are dispatched; types whose shape depends on the geom's data (MESH,
# HFIELD: one GPU mesh per asset) are keyed by (kind, dataid) in _geoms.
def _by_size(columns):
    """A unit shape scaled by these columns of geom_size."""
    return lambda size, extent: size[:, columns]


GEOM_SHAPES = {
    SPHERE: ("sphere", _by_size([0, 0, 0])),
    ELLIPSOID: ("sphere", _by_size([0, 1, 2])),
    BOX: ("box", _by_size([0, 1, 2])),
    CYLINDER: ("cylinder", _by_size([0, 0, 1])),
    CAPSULE: ("capsule", _by_size([0, 0, 1])),
    PLANE: ("plane", _plane_scale),
}
# geom type -> key kind of the per-asset GPU meshes (height fields: meshes after the mesh assets)
DATA_SHAPES = {MESH: "mesh", HFIELD: "mesh"}


class GeomStyle:
    """What build() needs per geom that does not change between frames (cached on the model)."""

    def __init__(self, m):
        self.material, self.texmap, self.texkey = geom_materials(m)
        self.gtype = np.asarray(m.geom_type).reshape(-1)
        self.dataid = np.asarray(m.geom_dataid).reshape(-1)
        self.group = np.clip(np.asarray(m.geom_group).reshape(-1), 0, 5)
        keys = sorted({k for k in self.texkey if k is not None}, key=str)
        self.textured = [(k, np.array([t == k for t in self.texkey])) for k in keys]
        self.plain = np.array([t is None for t in self.texkey], bool)


def geom_style(m) -> GeomStyle:
    style = getattr(m, "_studio_style", None)
    if style is None:
        style = GeomStyle(m)
        try:
            object.__setattr__(m, "_studio_style", style)
        except (AttributeError, TypeError):
            pass
    return style


def _geoms(m, d, opts, colors, selected_body, out: _Lists, extent) -> None:
    """Every visible geom, grouped by unit shape, layer and texture: one boolean mask per
    group, no loop over geoms (the loops below run over geom types, layers and textures)."""
    st = geom_style(m)
    gtype = st.gtype
    size = np.asarray(m.geom_size, float).reshape(-1, 3)
    rgba = colors.copy()
    pos = np.asarray(d.geom_xpos, float).reshape(-1, 3)
    mat = np.asarray(d.geom_xmat, float).reshape(-1, 9)
    visible = (rgba[:, 3] > 0.0) & np.asarray(opts.groups, bool)[st.group]
    if selected_body is not None and selected_body > 0:
        sel = np.asarray(m.geom_bodyid) == selected_body
        rgba[sel, :3] = 0.45 * rgba[sel, :3] + 0.55 * SELECT_RGBA
    if opts.transparent:
        rgba[gtype != PLANE, 3] *= 0.4
    material = st.material
    texmap = st.texmap.copy()
    grid = gtype == PLANE
    if np.any(grid):                              # the studio's grid: squares of checker_cell
        for k, in_tex in st.textured:
            if k == GRID:
                texmap[in_tex, :2] = 1.0 / checker_cell(extent)
    if not opts.textures:
        texmap[:, 3] = 0.0
    opaque = rgba[:, 3] >= 0.999
    mirror = opaque & (material[:, 3] > 0) & (gtype == PLANE) & bool(opts.reflections)
    groups = [(None, st.plain)] + st.textured if opts.textures else [(None, np.ones_like(grid))]
    for layer, in_layer in (("opaque", opaque & ~mirror), ("mirror", mirror),
                            ("transparent", ~opaque)):
        for tex, in_tex in groups:
            show = visible & in_layer & in_tex
            if not np.any(show):
                continue
            suffix = () if tex is None else (tex,)
            for t, (key, scale_of) in GEOM_SHAPES.items():
                s = show & (gtype == t)
                if np.any(s):
                    out.add((key, layer, *suffix),
                            instances(pos[s], mat[s], scale_of(size[s], extent), rgba[s],
                                      material[s], texmap[s]))
            for t, kind in DATA_SHAPES.items():
                s = show & (gtype == t)
                if not np.any(s):
                    continue
                for did in np.unique(st.dataid[s]):
                    if did >= 0:
                        k = s & (st.dataid == did)
                        shape = int(did) if t == MESH else hfield_shape_id(m, int(did))
                        out.add(((kind, shape), layer, *suffix),
                                instances(pos[k], mat[k], np.ones((int(k.sum()), 3)), rgba[k],
                                          material[k], texmap[k]))


def _sites(m, d, out, extent):
    if m.nsite == 0:
        return
    group = np.clip(np.asarray(m.site_group), 0, 5)
    keep = (np.asarray(m.site_rgba)[:, 3] > 0) & (group < HIDDEN_GROUPS_FROM + 2)
    if not np.any(keep):
        return
    size = np.asarray(m.site_size)[keep]
    stype = np.asarray(m.site_type)[keep]
    pos, mat, rgba = d.site_xpos[keep], d.site_xmat[keep], np.asarray(m.site_rgba)[keep]
    for t, key, sc in ((SPHERE, "sphere", size[:, [0, 0, 0]]), (ELLIPSOID, "sphere", size),
                       (BOX, "box", size), (CYLINDER, "cylinder", size[:, [0, 0, 1]]),
                       (CAPSULE, "capsule", size[:, [0, 0, 1]])):
        s = stype == t
        if np.any(s):
            out.add(key, "decor", instances(pos[s], mat[s], sc[s], rgba[s]))


# engine.enums values
TRN_TENDON = 3                         # TrnType.TENDON
EQ_TENDON = 3                          # EqType.TENDON
TENDON_ROWS = (0, 2, 4)                # ConstraintType EQUALITY, FRICTION_TENDON, LIMIT_TENDON
TENDON_RGBA_FULL = np.array([1.0, 0.15, 0.1])   # a tendon carrying the reference force


def tendon_forces(m, d) -> np.ndarray:
    """Force along each tendon (ntendon,), signed as MuJoCo's: the generalised force it exerts
    is ten_J' f, so pulling (tension) is negative. The sum of

    - the passive force: -stiffness (length beyond the spring's dead band) - damping velocity;
    - actuators with a tendon transmission: gear * actuator_force;
    - the constraint rows on tendons, efc_force along their Jacobian: friction loss and limits
      (J = +-ten_J) and tendon equalities (J = ten_J1 - poly'(L2 - L2_0) ten_J2)."""
    nt = m.ntendon
    length = np.asarray(d.ten_length[:nt], float)
    lo, hi = m.tendon_lengthspring[:, 0], m.tendon_lengthspring[:, 1]
    stretch = np.where(length > hi, length - hi, np.where(length < lo, length - lo, 0.0))
    f = -m.tendon_stiffness * stretch - m.tendon_damping * np.asarray(d.ten_velocity[:nt])
    tendon_act = np.asarray(m.actuator_trntype) == TRN_TENDON
    np.add.at(f, np.asarray(m.actuator_trnid)[tendon_act, 0],
              np.asarray(m.actuator_gear)[tendon_act, 0] * np.asarray(d.actuator_force)[tendon_act])
    nefc = d.nefc
    etype, eid = np.asarray(d.efc_type[:nefc]), np.asarray(d.efc_id[:nefc])
    force = np.asarray(d.efc_force[:nefc], float)
    for i in np.nonzero(np.isin(etype, TENDON_ROWS))[0]:
        if etype[i] == TENDON_ROWS[0]:
            e = int(eid[i])
            if int(m.eq_type[e]) != EQ_TENDON:
                continue
            o1, o2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
            f[o1] += force[i]
            if o2 >= 0:
                c = m.eq_data[e]
                x = length[o2] - m.tendon_length0[o2]
                f[o2] -= (c[1] + 2 * c[2] * x + 3 * c[3] * x ** 2 + 4 * c[4] * x ** 3) * force[i]
        elif etype[i] == TENDON_ROWS[1]:                        # friction loss: J = ten_J
            f[int(eid[i])] += force[i]
        else:                                                   # limit: J = +-ten_J
            t = int(eid[i])
            lower = abs(length[t] - m.tendon_range[t, 0]) <= abs(m.tendon_range[t, 1] - length[t])
            f[t] += force[i] if lower else -force[i]
    return f


def _tendons(m, d, out, extent, reference):
    """Segments between consecutive wrap points of each tendon (pulleys split the path), coloured
    from the tendon's rgba towards red as |tendon_forces| reaches ``reference`` newtons."""
    if m.ntendon == 0:
        return
    mix = np.clip(np.abs(tendon_forces(m, d)) / max(float(reference), 1e-12), 0.0, 1.0)[:, None]
    base = np.asarray(m.tendon_rgba, float).reshape(-1, 4)
    col = base.copy()
    col[:, :3] = (1 - mix) * base[:, :3] + mix * TENDON_RGBA_FULL
    width = np.asarray(m.tendon_width, float)
    width = np.where(width > 0, width, 0.003 * extent)
    adr = np.asarray(d.ten_wrapadr[:m.ntendon], int)
    num = np.asarray(d.ten_wrapnum[:m.ntendon], int)
    nseg = np.maximum(num - 1, 0)
    if nseg.sum() == 0:
        return
    ten = np.repeat(np.arange(m.ntendon), nseg)                 # tendon of each segment
    first = np.repeat(adr - np.concatenate([[0], np.cumsum(nseg)[:-1]]), nseg)
    i = first + np.arange(ten.size)                             # index of the segment's start point
    obj = np.asarray(d.wrap_obj)
    keep = (obj[i] != -2) & (obj[i + 1] != -2)
    if np.any(keep):
        i, ten = i[keep], ten[keep]
        xyz = np.asarray(d.wrap_xpos, float).reshape(-1, 3)
        out.add("cylinder", "decor", segments(xyz[i], xyz[i + 1], width[ten], col[ten]))


def contact_local_forces(d) -> np.ndarray:
    """Force of each contact in its frame (ncon, 3): normal, tangent 1, tangent 2, from
    d.efc_force as MuJoCo's mj_contactForce (engine.contact_force): an elliptic contact's rows
    directly; a pyramidal one's edges (e+, e-) per tangent j give f_n = sum of the edges and
    f_j = mu_j (e+ - e-). Zeros for a contact without rows."""
    n, nefc = d.ncon, d.nefc
    local = np.zeros((n, 3))
    if n == 0 or nefc == 0:
        return local
    adr = np.asarray(d.contact_efc_address[:n], int)
    dim = np.asarray(d.contact_dim[:n], int)
    efc = np.asarray(d.efc_force[:nefc], float)
    ok = (adr >= 0) & (adr < nefc)
    a = np.where(ok, adr, 0)
    pyr = ok & (np.asarray(d.efc_type)[a] == CONTACT_PYRAMIDAL) & (dim > 1)
    ell = ok & ~pyr
    local[ell, 0] = efc[a[ell]]
    for k in (1, 2):                                   # friction along the tangents
        s = ell & (dim - 1 >= k) & (a + k < nefc)
        local[s, k] = efc[a[s] + k]
        s = pyr & (dim - 1 >= k) & (a + 2 * k - 1 < nefc)
        plus, minus = efc[a[s] + 2 * (k - 1)], efc[a[s] + 2 * k - 1]
        local[s, k] = np.asarray(d.efc_mu[:nefc])[a[s] + 2 * (k - 1)] * (plus - minus)
    if np.any(pyr):
        csum = np.concatenate([[0.0], np.cumsum(efc)])
        local[pyr, 0] = csum[np.minimum(a[pyr] + 2 * (dim[pyr] - 1), nefc)] - csum[a[pyr]]
    return local


def contact_force_parts(d) -> tuple[np.ndarray, np.ndarray]:
    """World-frame normal and friction forces on geom2 of each contact, (ncon, 3) each."""
    local = contact_local_forces(d)
    frame = np.asarray(d.contact_frame[:local.shape[0]], float).reshape(-1, 3, 3)
    normal = frame[:, 0] * local[:, :1]
    friction = np.einsum("nij,ni->nj", frame[:, 1:], local[:, 1:])
    return normal, friction


def contact_forces(d) -> np.ndarray:
    """World-frame contact force on geom2 of each contact (normal plus friction), (ncon, 3)."""
    normal, friction = contact_force_parts(d)
    return normal + friction


def model_weight(m) -> float:
    """The model's weight m g (with |g| at least 1, so that zero gravity keeps a force scale)."""
    return float(np.sum(m.body_mass)) * max(float(np.linalg.norm(m.opt.gravity)), 1.0)


def default_force_scale(m, extent) -> float:
    """Metres of arrow per newton: the model's weight is drawn about half the model's size."""
    return 0.5 * extent / max(model_weight(m), 1e-9)


def arrow_lengths(force, scale, reference) -> np.ndarray:
    """Arrow length of a force |f|: ``scale F ln(1 + |f| / F)`` with F = ``reference``. Linear
    (``scale |f|``) for forces well below F, logarithmic above it: an impact a hundred times the
    weight draws an arrow about 4.6 times as long as the weight's, not a hundred times."""
    f = np.linalg.norm(force, axis=-1)
    ref = max(float(reference), 1e-12)
    return scale * ref * np.log1p(f / ref)


def _arrows(out, pos, force, scale, reference, radius, rgba) -> None:
    """Force arrows from ``pos`` along ``force``: a shaft and a ball at the tip (arrow_lengths)."""
    length = arrow_lengths(force, scale, reference)
    keep = length > 1e-9
    if not np.any(keep):
        return
    direction = force[keep] / np.linalg.norm(force[keep], axis=1, keepdims=True)
    tip = pos[keep] + length[keep, None] * direction
    out.add("cylinder", "decor", segments(pos[keep], tip, radius, rgba))
    out.add("sphere", "decor", spheres(tip, 2.0 * radius, rgba))


NORMAL_RGBA = (0.95, 0.75, 0.1, 1.0)      # contact normal force arrows
FRICTION_RGBA = (0.2, 0.8, 0.95, 1.0)     # contact friction force arrows


def _contacts(m, d, opts, out, extent, force_scale, force_reference):
    n = d.ncon
    if n == 0:
        return
    pos = np.asarray(d.contact_pos[:n], float)
    if opts.contact_points:
        out.add("sphere", "decor", spheres(pos, 0.012 * extent, (0.95, 0.3, 0.2, 1.0)))
    if opts.contact_frames:
        frame = np.asarray(d.contact_frame[:n], float).reshape(n, 3, 3)
        for axis, col in ((0, (0.9, 0.2, 0.2, 1)), (1, (0.2, 0.9, 0.2, 1)), (2, (0.3, 0.4, 1, 1))):
            out.add("cylinder", "decor",
                    segments(pos, pos + 0.1 * extent * frame[:, axis], 0.003 * extent, col))
    if opts.contact_forces:
        normal, friction = contact_force_parts(d)
        _arrows(out, pos, normal, force_scale, force_reference, 0.006 * extent, NORMAL_RGBA)
        _arrows(out, pos, friction, force_scale, force_reference, 0.005 * extent, FRICTION_RGBA)


def _joints(m, d, out, extent):
    from_type = np.asarray(m.jnt_type)
    keep = (from_type == 2) | (from_type == 3)      # slide, hinge
    if not np.any(keep):
        return
    a = np.asarray(d.xanchor)[keep]
    ax = np.asarray(d.xaxis)[keep]
    out.add("cylinder", "decor", segments(a, a + 0.15 * extent * ax, 0.006 * extent,
                                          (0.9, 0.3, 0.9, 1.0)))


def _com(m, d, out, extent):
    if m.nbody > 1:
        out.add("sphere", "decor", spheres(d.xipos[1:], 0.015 * extent, (0.95, 0.95, 0.95, 1.0)))


def inertia_boxes(m):
    """Half sizes of the uniform box with each body's mass and principal inertia (nbody, 3)."""
    mass = np.maximum(np.asarray(m.body_mass), 1e-12)[:, None]
    i = np.asarray(m.body_inertia)
    sq = np.stack([i[:, 1] + i[:, 2] - i[:, 0], i[:, 0] + i[:, 2] - i[:, 1],
                   i[:, 0] + i[:, 1] - i[:, 2]], axis=1)
    return np.sqrt(np.maximum(1.5 * sq / mass, 0.0))


def _inertia(m, d, out):
    if m.nbody <= 1:
        return
    half = inertia_boxes(m)[1:]
    keep = np.asarray(m.body_mass)[1:] > 0
    out.add("box", "transparent", instances(d.xipos[1:][keep], d.ximat[1:][keep], half[keep],
                                            np.tile([0.9, 0.9, 0.3, 0.35], (int(keep.sum()), 1))))


AXIS_RGBA = ((0.9, 0.15, 0.15, 1.0), (0.15, 0.85, 0.15, 1.0), (0.2, 0.35, 1.0, 1.0))
SPRING_RGBA = (1.0, 0.35, 0.75, 1.0)      # the perturbation spring: its own colour
FRAME_SOURCES = {"body": ("xpos", "xmat"), "geom": ("geom_xpos", "geom_xmat"),
                 "site": ("site_xpos", "site_xmat")}


def _frames(m, d, kind, out, extent) -> None:
    """Coordinate axes (x red, y green, z blue) of every body, geom or site, or of the world."""
    if kind == "world":
        pos, rot, length = np.zeros((1, 3)), np.eye(3).reshape(1, 9), 0.3 * extent
    elif kind in FRAME_SOURCES:
        p, r = FRAME_SOURCES[kind]
        first = 1 if kind == "body" else 0
        pos = np.asarray(getattr(d, p), float).reshape(-1, 3)[first:]
        rot = np.asarray(getattr(d, r), float).reshape(-1, 9)[first:]
        length = 0.08 * extent
    else:
        return
    if not len(pos):
        return
    rot = rot.reshape(-1, 3, 3)
    for axis, rgba in enumerate(AXIS_RGBA):
        out.add("cylinder", "decor", segments(pos, pos + length * rot[:, :, axis],
                                              0.05 * length, rgba))


def spring(p0, p1, extent, turns=8, per_turn=10):
    """A coil from p0 to p1 (the perturbation spring): short cylinders along a helix of radius
    0.015 extent, and balls at both ends."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    rot, half = frames_along(p0[None], p1[None])
    axes = rot.reshape(3, 3)
    n = turns * per_turn
    t = np.linspace(0.0, 1.0, n + 1)
    r = 0.015 * extent * np.minimum(1.0, 2.0 * half[0] / max(0.05 * extent, 1e-12))
    ang = 2.0 * np.pi * turns * t
    pts = p0 + np.outer(t, p1 - p0) + r * (np.outer(np.cos(ang), axes[:, 0])
                                            + np.outer(np.sin(ang), axes[:, 1]))
    coil = segments(pts[:-1], pts[1:], 0.0035 * extent, SPRING_RGBA)
    return coil, spheres([p0, p1], 0.012 * extent, SPRING_RGBA)


def build(m, d, opts: SceneOptions | None = None, colors=None, selected_body=None,
          perturb_line=None, extent=None, force_scale=None, tendon_reference=None,
          frames="none") -> Scene:
    """Instance lists for one frame of ``d`` (a Data or a runner Snapshot). ``force_scale``:
    metres of contact-force arrow per newton below the model's weight (default_force_scale
    when None; longer arrows grow logarithmically, see arrow_lengths). ``tendon_reference``:
    the tendon force (N) drawn fully red (default: the model's weight). ``frames``: the
    coordinate axes drawn ("none", "body", "geom", "site" or "world")."""
    opts = opts or SceneOptions()
    colors = geom_colors(m) if colors is None else colors
    extent = model_extent(m, d) if extent is None else extent
    out = _Lists()
    if opts.geoms:
        _geoms(m, d, opts, colors, selected_body, out, extent)
    if opts.sites:
        _sites(m, d, out, extent)
    if opts.tendons:
        _tendons(m, d, out, extent,
                 model_weight(m) if tendon_reference is None else tendon_reference)
    if force_scale is None:
        force_scale = default_force_scale(m, extent)
    _contacts(m, d, opts, out, extent, force_scale, model_weight(m))
    if opts.joints:
        _joints(m, d, out, extent)
    if opts.com:
        _com(m, d, out, extent)
    if opts.inertia:
        _inertia(m, d, out)
    _frames(m, d, frames, out, extent)
    if opts.perturbation and perturb_line is not None:
        coil, ends = spring(*perturb_line, extent)
        out.add("cylinder", "decor", coil)
        out.add("sphere", "decor", ends)
    center, radius = geom_bounds(m, d)
    return Scene(out.done(), extent, center, max(radius, 0.1))

"""Compile the objects outside the body tree: assets, contact pairs and exclusions, equality
constraints, tendons and actuators (MuJoCo's mjCMesh, mjCPair, mjCEquality, mjCTendon,
mjCActuator ::Compile), and the softness mapping shared with the tree objects; sensors are
compiled in sensors.py."""
from __future__ import annotations

import hashlib
import math
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..constants import MINVAL
from ..enums import (BiasType, DynType, EqType, GainType, GeomType, JointType, ObjType, TrnType,
                     WrapType)
from ..types import ModelError, available_memory
from . import frames as F
from . import schema as S
from .compile import TEXTURE_FILES, check_autolimits, check_names, islimited, read_asset
from .elements import Actuator, TFAuto



# ----------------------------------------------------------------------------------------------
# softness: solref / solimp -> (epsilon, kappa, rmin, impedance, dampratio)
# ----------------------------------------------------------------------------------------------
# MuJoCo's bounds of the impedance (mjMINIMP, mjMAXIMP)
MINIMP, MAXIMP = 0.0001, 0.9999
# the impedance shape of an object that has none of its own: the option's (width < 0)
OPTION_IMPEDANCE = (0.0, -1.0, 0.5, 2.0)
NO_SOFTNESS = (-1.0, -1.0, -1.0, OPTION_IMPEDANCE, 1.0)


def mujoco_impedance(imp):
    """(epsilon, impedance shape) of MuJoCo's solimp (d0, dwidth, width, midpoint, power),
    clamped as MuJoCo does: epsilon = (1 - d0) / d0 at zero violation, the shape (epsilon at
    width, width, midpoint, power); a flat solimp (d0 = dwidth or width 0) is the constant
    epsilon of its mean impedance, with width 0."""
    d0, dw = (min(MAXIMP, max(MINIMP, v)) for v in imp[:2])
    width = max(0.0, imp[2])
    mid, power = min(MAXIMP, max(MINIMP, imp[3])), max(1.0, imp[4])
    if d0 == dw or width <= MINVAL:
        d = 0.5 * (d0 + dw)
        return (1 - d) / d, ((1 - d) / d, 0.0, mid, power)
    return (1 - d0) / d0, ((1 - dw) / dw, width, mid, power)


def soft(c, obj, ref_key, imp_key, what):
    """(epsilon, kappa, rmin, impedance shape, dampratio) of `obj`: our own attributes, else
    mapped from solref / solimp; -1 (a width of -1) = the global option. Our own values must be
    admissible (epsilon >= 0, kappa > 0, rmin > 0).

    MuJoCo's reference acceleration is a_ref = -B v - K d(x) x with the impedance d(x) of
    solimp, B = 2 / (dw timeconst), K = 1 / (dw timeconst dampratio)^2 (standard solref) or
    B = b / dw, K = k / dw^2 (direct solref = (-k, -b)), dw = solimp[1], and R = (1 - d) / d
    A_ii; this engine's rows have the same law (constraint.py) with epsilon = (1 - d0) / d0,
    the impedance shape and kappa = timeconst, dampratio as given:
    - standard (timeconst, dampratio): kappa = timeconst;
    - direct (-k, -b): kappa = 2 / b, dampratio = b / (2 sqrt(k)) (infinite for k = 0: no
      stiffness); with b = 0 (no damping, which the engine's rows cannot express),
      kappa = 1 / sqrt(k) critically damped, reported;
    - solimp: mujoco_impedance.
    Only values given (by the element, its default class or in code) are mapped; our own
    epsilon replaces d0 alone, and makes the impedance constant where no solimp is given.
    """
    if obj._src is not None:
        what = f"{what} (line {obj._src.line})"
    for key, ok, word in (("epsilon", lambda v: v >= 0.0, "non-negative"),
                          ("kappa", lambda v: v > 0.0, "positive"),
                          ("rmin", lambda v: v > 0.0, "positive")):
        v = getattr(obj, key)
        if v is not None and not ok(v):
            raise obj.error(f"{key} must be {word}, got {v:g}", key)
    eps, kap, ratio = obj.epsilon, obj.kappa, 1.0
    if ref_key and obj.given(ref_key):
        ref_kap, ratio = _kappa_of_solref(c, [float(v) for v in getattr(obj, ref_key)],
                                          ref_key, what)
        kap = ref_kap if kap is None else kap
    shape = OPTION_IMPEDANCE
    if imp_key and obj.given(imp_key):
        imp_eps, shape = mujoco_impedance([float(v) for v in getattr(obj, imp_key)])
        eps = imp_eps if eps is None else eps
    elif eps is not None:
        shape = (float(eps), 0.0, 0.5, 2.0)
    return ((-1.0 if eps is None else float(eps)), (-1.0 if kap is None else float(kap)),
            (float(obj.rmin) if obj.rmin is not None else -1.0), shape, ratio)


def _kappa_of_solref(c, ref, ref_key, what):
    """(kappa or None for the option's, dampratio) of a solref."""
    tag = (ref_key, tuple(ref))
    if ref[0] > 0 and ref[1] > 0:
        return ref[0], ref[1]
    if ref[0] <= 0 and ref[1] <= 0 and (ref[0] < 0 or ref[1] < 0):
        k, b = -ref[0], -ref[1]
        if b > 0:
            return 2.0 / b, (b / (2.0 * math.sqrt(k)) if k > 0 else math.inf)
        kap = 1.0 / math.sqrt(k)
        c.warn_once(tag, f"{what}: {ref_key}={ref} (direct stiffness without damping): mapped "
                         f"to kappa = 1/sqrt(stiffness) = {kap:g} with the critical damping "
                         f"{2 * math.sqrt(k):g}, which this engine's constraints cannot go "
                         "without")
        return kap, 1.0
    c.warn_once(tag, f"{what}: {ref_key}={ref} mixes the standard and direct formats; the "
                     "global kappa is used")
    return None, 1.0


# ----------------------------------------------------------------------------------------------
# assets
# ----------------------------------------------------------------------------------------------
@dataclass(eq=False)
class CMesh:
    spec: object
    name: str
    info: object
    file: Optional[str]


def compile_assets(c):
    """Meshes (read and processed), materials, textures (files found), height fields."""
    spec = c.spec
    c.meshes = [compile_mesh(c, m) for m in spec.meshes]
    c.materials = list(spec.materials)
    c.textures = [compile_texture(c, t) for t in spec.textures]
    c.hfields = [compile_hfield(c, h) for h in spec.hfields]
    c.check_names(c.meshes, "mesh")
    check_names([(m.name or "", m) for m in c.materials], "material")
    for records, kind in ((c.textures, "texture"), (c.hfields, "hfield")):
        check_names([(r["name"], r["_spec"]) for r in records], kind)
    c.indices = {"mesh": c.index(c.meshes), "material": c.index(c.materials),
                 "hfield": {h["name"]: i for i, h in enumerate(c.hfields)}}
    c.texture_names = {t["name"] for t in c.textures}
    for m in c.materials:
        if m.texture and m.texture not in c.texture_names:
            raise m.error(f"unknown texture '{m.texture}'", "texture")


def compile_mesh(c, m):
    """mjCMesh::Compile: vertices from the file or the element, scaled, centred at the centre
    of mass and aligned with the principal axes."""
    from . import mesh as meshmod
    c.current = m
    name = m.name
    if not name:
        if not m.file:
            raise m.error("mesh without a name or a file", "name")
        name = os.path.splitext(os.path.basename(m.file))[0]
    if m.file is not None:
        if m.vertex is not None:
            raise m.error("mesh given both by file and by vertex", "vertex")
        data, path = c.asset_file(m, read=False)
        if data is None:                    # a file: known by its path, size and time
            st = os.stat(path)
            source = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
        else:                               # given as bytes: known by its content
            source = hashlib.sha1(data).digest()
        key = (source, os.path.splitext(path)[1].lower(), tuple(m.scale), m.inertia,
               _tuple(m.refpos), _tuple(m.refquat), m.maxhullvert)
        info = _MESH_CACHE.get(key)
        if info is not None:
            _MESH_CACHE.move_to_end(key)
            return CMesh(spec=m, name=name, info=info, file=path)
        if data is None:
            data = read_asset(m, path, m.file, "mesh")
        try:
            vert, face = meshmod.load_mesh(data, path)
        except ModelError as e:
            where = f", line {e.line}" if e.line is not None else ""
            raise m.error(f"mesh file '{m.file}'{where}: {e.reason}", "file") from None
    else:
        vert, face = _inline_mesh(m)
        path = key = None
    try:
        info = meshmod.process_mesh(vert, face, list(m.scale), m.inertia, refpos=m.refpos,
                                    refquat=m.refquat, maxhullvert=m.maxhullvert, name=name,
                                    file=path)
    except ModelError as e:
        raise m.error(e.reason, "file" if m.file else "vertex") from None
    if key is not None:
        _MESH_CACHE[key] = info
        while len(_MESH_CACHE) > MESH_CACHE_SIZE:
            _MESH_CACHE.popitem(last=False)
    return CMesh(spec=m, name=name, info=info, file=path)


# processed mesh files, by content and processing parameters (MuJoCo's mesh cache): a spec
# compiled again after an edit does not read and process its meshes again
MESH_CACHE_SIZE = 256
_MESH_CACHE = OrderedDict()


def _tuple(v):
    return None if v is None else tuple(v)


def _inline_mesh(m):
    v = m.vertex
    if not v or len(v) % 3:
        raise m.error("mesh vertex data must be a positive multiple of 3 numbers", "vertex")
    vert = np.asarray(v, dtype=np.float64).reshape(-1, 3)
    f = m.face
    if f:
        if len(f) % 3 or any(x != int(x) or x < 0 or x >= len(vert) for x in f):
            raise m.error("mesh faces must be triples of vertex indices", "face")
        return vert, np.asarray(f, dtype=np.int64).reshape(-1, 3)
    return vert, np.zeros((0, 3), dtype=np.int64)


def check_texture_file(t, attribute, data, path):
    """As mjCTexture::LoadFlip: a texture file is PNG or KTX (by content_type, else by its
    extension), a PNG file starts with PNG's signature, a KTX file is not empty."""
    kind = t.content_type or {".png": "image/png", ".ktx": "image/ktx"}.get(
        os.path.splitext(path)[1].lower())
    if kind not in ("image/png", "image/ktx"):
        raise t.error(f"texture file '{os.path.basename(path)}': unsupported content type "
                      "(PNG or KTX)", attribute)
    if data is None:
        data = read_asset(t, path, os.path.basename(path), "texture", attribute, 8)
    if kind == "image/png" and data[:8] != b"\x89PNG\r\n\x1a\n":
        raise t.error(f"texture file '{os.path.basename(path)}' is not a PNG image", attribute)
    if not data:
        raise t.error(f"texture file '{os.path.basename(path)}' is empty", attribute)


def compile_texture(c, t):
    """A texture as the renderer sees it: the attributes given, as MJCF text, and the files
    found on disk."""
    from .writer import text
    c.current = t
    out = {}
    for k in t.defaults():
        if k != "classname" and t.given(k) and getattr(t, k) is not None:
            out[k] = text(S.TEXTURE[k], getattr(t, k)) if k in S.TEXTURE else getattr(t, k)
    for a in TEXTURE_FILES:
        if a in out:
            data, out[a] = c.asset_file(t, a, read=False)
            check_texture_file(t, a, data, out[a])
    if not out.get("name"):
        out["name"] = os.path.splitext(os.path.basename(t.file or ""))[0]
    out["_spec"] = t
    return out


def check_memory(nbytes, what, obj, attribute=None):
    """A located ModelError, before allocating, for an asset whose arrays exceed the memory
    available (the numbers given)."""
    avail = available_memory()
    if nbytes > avail:
        raise obj.error(f"{what} needs {nbytes / 2 ** 30:.1f} GiB, more than the "
                        f"{avail / 2 ** 30:.1f} GiB of memory available", attribute)


def compile_hfield(c, h):
    """mjCHField::Compile: elevations from a PNG file, inline ``elevation`` (nrow x ncol, first
    row first) or zeros; rows reversed (the first image/inline row is the +y edge, data row 0
    the -y edge) and values rescaled to [0, 1]. size = (radius_x, radius_y, elevation_z,
    base_z)."""
    c.current = h
    size = h.size
    if size is None or any(s <= 0 for s in size):
        raise h.error("hfield size must have 4 positive numbers", "size")
    file = h.file
    name = h.name or (os.path.splitext(os.path.basename(file))[0] if file else "")
    nrow, ncol = h.nrow, h.ncol
    path = None
    if file is not None:
        if h.given("nrow") or h.given("ncol") or h.elevation is not None:
            c.warn("hfield file given: nrow, ncol and elevation are ignored", h)
        data, path = c.asset_file(h)
        rows = _png_rows(data, path, h)
        nrow, ncol = rows.shape
    else:
        if nrow < 2 or ncol < 2:
            raise h.error("hfield needs a file, or nrow and ncol of at least 2",
                          "nrow" if nrow < 2 else "ncol")
        elevation = h.elevation
        if elevation is not None and len(elevation) > 0:
            if len(elevation) != nrow * ncol:
                raise h.error(f"hfield elevation has {len(elevation)} numbers, nrow*ncol = "
                              f"{nrow * ncol}", "elevation")
            rows = np.asarray(elevation, dtype=np.float64).reshape(nrow, ncol)
        else:
            check_memory(3 * 8 * nrow * ncol, f"a height field of nrow={nrow} x ncol={ncol}", h,
                         "nrow")
            rows = np.zeros((nrow, ncol))
    data = rows[::-1].astype(np.float32).astype(np.float64)  # MuJoCo stores floats
    lo, hi = data.min(), data.max()
    data -= lo
    if hi - lo > MINVAL:
        data /= hi - lo
    return {"name": name, "file": path, "nrow": nrow, "ncol": ncol, "size": list(size),
            "data": np.ascontiguousarray(data.reshape(-1)), "_spec": h}


def _png_rows(data, path, h):
    """Elevation rows of a PNG height map, top image row first, as MuJoCo reads them: a grey
    image as is, a colour image by its red channel (MuJoCo 4 converts to grey that way), a
    16-bit image by its high byte (MuJoCo decodes to 8 bits)."""
    import io

    from PIL import Image, UnidentifiedImageError
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except (UnidentifiedImageError, OSError, ValueError) as e:
        raise h.error(f"cannot read hfield file '{path}' as a PNG image "
                      f"({type(e).__name__})", "file") from None
    if img.format != "PNG":
        raise h.error(f"hfield file '{path}' is not a PNG image ({img.format})", "file")
    if img.mode == "P":
        img = img.convert("RGBA")
    a = np.asarray(img)
    if a.ndim == 3:
        a = a[:, :, 0]
    a = a.astype(np.float64)
    if img.mode.startswith("I"):
        a = np.floor(a / 256.0)
    if a.shape[0] < 2 or a.shape[1] < 2:
        raise h.error(f"hfield image '{path}' must be at least 2 x 2 pixels", "file")
    return a


# ----------------------------------------------------------------------------------------------
# <contact>
# ----------------------------------------------------------------------------------------------
@dataclass(eq=False)
class CPair:
    spec: object
    name: str
    geom1: int
    geom2: int
    signature: int
    softness: tuple = NO_SOFTNESS


def compile_contact(c):
    """Pairs and exclusions, each sorted by body signature (as MuJoCo)."""
    c.pairs = sorted((compile_pair(c, p) for p in c.spec.pairs), key=lambda p: p.signature)
    c.excludes = sorted((compile_exclude(c, e) for e in c.spec.excludes),
                        key=lambda e: e.signature)


def compile_pair(c, p):
    c.current = p
    for a in ("geom1", "geom2"):
        if not getattr(p, a):
            raise p.error(f"missing attribute '{a}'", a)
    g1 = c.geoms[c.lookup("geom", p, p.geom1, "geom1")]
    g2 = c.geoms[c.lookup("geom", p, p.geom2, "geom2")]
    if g1.body.id > g2.body.id:
        g1, g2 = g2, g1
    # MuJoCo 4 takes every pair parameter from the pair (and its defaults), not the geoms
    if p.condim not in (1, 3, 4, 6):
        raise p.error("invalid condim in contact pair", "condim")
    c.reject_set(p, {"adhesion": "contact adhesion"})
    if p.given("solreffriction"):
        c.warn("'solreffriction' has no counterpart in this engine", p)
    softness = soft(c, p, "solref", "solimp", "pair")
    return CPair(spec=p, name=p.name or "", geom1=g1.id, geom2=g2.id,
                 signature=(g1.body.id << 16) + g2.body.id, softness=softness)


def compile_exclude(c, e):
    c.current = e
    for a in ("body1", "body2"):
        if getattr(e, a) is None:
            raise e.error(f"missing attribute '{a}'", a)
    b1 = c.lookup("body", e, e.body1, "body1")
    b2 = c.lookup("body", e, e.body2, "body2")
    if b1 > b2:
        b1, b2 = b2, b1
    return CPair(spec=e, name=e.name or "", geom1=b1, geom2=b2, signature=(b1 << 16) + b2)


# ----------------------------------------------------------------------------------------------
# <equality>
# ----------------------------------------------------------------------------------------------
@dataclass(eq=False)
class CEquality:
    spec: object
    name: str
    softness: tuple
    type: EqType = EqType.CONNECT
    obj1: int = -1
    obj2: int = -1
    objtype: ObjType = ObjType.BODY
    data: list = field(default_factory=lambda: [0.0] * 11)


def compile_equalities(c):
    """Softness of every equality; objects are resolved after the tendons are known."""
    c.eqs = []
    for e in c.spec.equalities:
        c.current = e
        c.eqs.append(CEquality(spec=e, name=e.name or "",
                               softness=soft(c, e, "solref", "solimp", "equality")))
    c.check_names(c.eqs, "equality")


def resolve_equalities(c):
    """Objects and eq_data of every equality (MuJoCo's mjCEquality::Compile)."""
    for e in c.eqs:
        s = e.spec
        c.current = s
        e.type = s.type
        if s.type in (EqType.CONNECT, EqType.WELD):
            _body_equality(c, e, s)
        else:
            kind = "joint" if s.type == EqType.JOINT else "tendon"
            first, second = getattr(s, kind + "1"), getattr(s, kind + "2")
            if first is None:
                raise s.error(f"missing attribute '{kind}1'", kind + "1")
            e.obj1 = c.lookup(kind, s, first, kind + "1")
            e.obj2 = c.lookup(kind, s, second, kind + "2") if second is not None else -1
            if kind == "joint":
                for o, a in ((e.obj1, "joint1"), (e.obj2, "joint2")):
                    if o >= 0 and c.joints[o].type not in (JointType.SLIDE, JointType.HINGE):
                        raise s.error("only hinge and slide joints allowed in constraint", a)
            if e.obj1 == e.obj2:
                raise s.error(f"the two {kind}s of an equality constraint must differ")
            pc = list(s.polycoef or [])
            e.data[0:5] = pc + [0.0, 1.0, 0.0, 0.0, 0.0][len(pc):]
            e.data[10] = 1.0


def _body_equality(c, e, s):
    """connect and weld: bodies or sites, anchor and relative pose at qpos0 in eq_data."""
    bodies = s.body1 is not None or s.body2 is not None
    sites = s.site1 is not None or s.site2 is not None
    if bodies and sites:
        raise s.error("use either body1/body2 or site1/site2, not both", "site1")
    if sites:
        if s.site1 is None or s.site2 is None:
            raise s.error("site semantics needs both site1 and site2",
                          "site1" if s.site1 is None else "site2")
        e.obj1 = c.lookup("site", s, s.site1, "site1")
        e.obj2 = c.lookup("site", s, s.site2, "site2")
        e.objtype = ObjType.SITE
    else:
        if s.body1 is None:
            raise s.error("missing attribute 'body1'", "body1")
        e.obj1 = c.lookup("body", s, s.body1, "body1")
        e.obj2 = c.lookup("body", s, s.body2, "body2") if s.body2 is not None else 0
        e.objtype = ObjType.BODY
    if e.obj1 == e.obj2:
        raise s.error("the two objects of an equality constraint must differ")
    data = e.data
    anchor = s.anchor if s.anchor is not None else [0.0, 0.0, 0.0]
    if s.type == EqType.CONNECT:
        if e.objtype == ObjType.BODY:
            if s.anchor is None:
                raise s.error("missing attribute 'anchor'", "anchor")
            data[0:3] = anchor
            b1, b2 = c.bodies[e.obj1], c.bodies[e.obj2]
            p = [a + q for a, q in zip(b1.xpos0, F.rotvecquat(anchor, b1.xquat0))]
            d = [p[k] - b2.xpos0[k] for k in range(3)]
            data[3:6] = F.rotvecquat(d, F.negquat(b2.xquat0))
            data[10] = 1.0
        return
    if e.objtype == ObjType.BODY:
        data[0:3] = anchor
        rel = s.relpose
        if rel is not None and any(rel[3:]):
            data[3:10] = rel
        else:
            b1, b2 = c.bodies[e.obj1], c.bodies[e.obj2]
            p = [a + q for a, q in zip(b2.xpos0, F.rotvecquat(anchor, b2.xquat0))]
            d = [p[k] - b1.xpos0[k] for k in range(3)]
            data[3:6] = F.rotvecquat(d, F.negquat(b1.xquat0))
            data[6:10] = F.mulquat(F.negquat(b1.xquat0), b2.xquat0)
    else:
        data[1] = 1.0
    data[10] = s.torquescale if s.torquescale is not None else 1.0


# ----------------------------------------------------------------------------------------------
# <tendon>
# ----------------------------------------------------------------------------------------------
@dataclass(eq=False)
class CTendon:
    spec: object
    name: str
    path: list                       # [(WrapType, object id, parameter)]
    limited: bool
    range: list
    springlength: list
    softness: tuple


def compile_tendons(c):
    c.tendons = [compile_tendon(c, t) for t in c.spec.tendons]
    c.check_names(c.tendons, "tendon")
    c.indices["tendon"] = c.index(c.tendons)


def compile_tendon(c, t):
    """mjCTendon::Compile: the path resolved and checked, limits, spring length, softness."""
    c.current = t
    name = t.name or ""
    path = [tendon_wrap(c, t, w) for w in t.path]
    c.current = t
    if not path:
        raise t.error(f"tendon '{name}': path cannot be empty")
    if t.kind == "spatial":
        check_spatial_path(c, t, path)
    else:
        joints = [p[1] for p in path]
        for k, jid in enumerate(joints):
            if jid in joints[:k]:
                raise t.path[k].error(f"tendon '{name}': joint {k} is repeated", "joint")
    rng = list(t.range)
    check_autolimits(c, t, t.limited, rng, "range", "tendon has 'range' but not 'limited'; set "
                     "autolimits=\"true\" or give limited explicitly")
    is_lim = islimited(t.limited, rng)
    if is_lim and rng[0] >= rng[1]:
        raise t.error("invalid limits in tendon", "range")
    c.reject_set(t, {"armature": "tendon armature",
                     "springyield": "spring yield (plasticity)"})
    afr = t.actuatorfrcrange
    if t.actuatorfrclimited == TFAuto.TRUE or (t.actuatorfrclimited == TFAuto.AUTO and
                                               c.cc.autolimits and afr[0] < afr[1]):
        raise c.unsupported(t, "tendon actuator force limits (actuatorfrcrange)",
                            "actuatorfrcrange")
    if t.springlength is None:
        springlength = [-1.0, -1.0]
    else:
        raw = t.springlength
        springlength = [raw[0], raw[0]] if len(raw) == 1 else list(raw[:2])
        if springlength[0] > springlength[1]:
            raise t.error("invalid springlength in tendon", "springlength")
    for a in ("solreffriction", "solimpfriction"):
        if t.given(a):
            c.warn(f"'{a}' has no counterpart in this engine", t)
    if t.material and t.material not in c.indices["material"]:
        raise t.error(f"unknown material '{t.material}'", "material")
    return CTendon(spec=t, name=name, path=[p[:3] for p in path], limited=is_lim, range=rng,
                   springlength=springlength,
                   softness=soft(c, t, "solreflimit", "solimplimit", f"tendon '{name}'"))


def tendon_wrap(c, t, w):
    """(WrapType, object id, parameter, wrap) of one path element."""
    c.current = w
    if w.kind == "joint":
        jid = c.lookup("joint", w, w.target, "joint")
        if c.joints[jid].type not in (JointType.SLIDE, JointType.HINGE):
            raise w.error("fixed tendons can only use hinge and slide joints", "joint")
        return WrapType.JOINT, jid, w.coef, w
    if w.kind == "site":
        return WrapType.SITE, c.lookup("site", w, w.target, "site"), 0.0, w
    if w.kind == "geom":
        gid = c.lookup("geom", w, w.target, "geom")
        gt = c.geoms[gid].type
        if gt not in (GeomType.SPHERE, GeomType.CYLINDER):
            raise w.error("wrapping geom must be a sphere or a cylinder", "geom")
        side = c.lookup("site", w, w.sidesite, "sidesite") if w.sidesite is not None else -1
        kind = WrapType.SPHERE if gt == GeomType.SPHERE else WrapType.CYLINDER
        return kind, gid, float(side), w
    if w.kind == "pulley":
        if w.divisor < 0:
            raise w.error("pulley has negative divisor", "divisor")
        return WrapType.PULLEY, -1, w.divisor, w
    raise w.error(f"unknown tendon path element '{w.kind}'")


def check_spatial_path(c, t, path):
    """MuJoCo's rules for a spatial path: sites at both ends of every segment, geoms between
    two sites, pulleys between branches."""
    name = t.name or ""
    if len(path) < 2:
        raise t.error(f"tendon '{name}': spatial path must contain at least two objects")
    if t.width <= 0:
        raise t.error("tendon must have positive width", "width")
    for i, (kind, oid, _, w) in enumerate(path):
        prev = path[i - 1][0] if i > 0 else None
        nxt = path[i + 1][0] if i < len(path) - 1 else None
        if kind == WrapType.PULLEY:
            if prev == WrapType.PULLEY:
                raise w.error("consecutive pulleys in tendon path")
            if nxt is None:
                raise w.error("tendon path ends with a pulley")
        elif kind == WrapType.SITE:
            if prev in (None, WrapType.PULLEY) and nxt in (None, WrapType.PULLEY):
                raise w.error("site needs a neighbour that is not a pulley")
            if nxt == WrapType.SITE and path[i + 1][1] == oid:
                raise w.error("site is repeated in tendon path")
        else:
            if prev != WrapType.SITE or nxt != WrapType.SITE:
                raise w.error("wrapping geom not bracketed by sites")


# ----------------------------------------------------------------------------------------------
# <actuator>
# ----------------------------------------------------------------------------------------------
@dataclass(eq=False)
class CActuator:
    spec: object
    name: str
    trntype: TrnType
    trnid: list
    actnum: int
    ctrllimited: bool
    forcelimited: bool
    actlimited: bool
    ctrlrange: list
    actrange: list


UNSUPPORTED_ACTUATOR = (("armature", "actuator armature"), ("damping", "actuator damping"),
                        ("delay", "actuator delays"), ("ffrange", "actuator ffrange"),
                        ("velrange", "actuator velrange"), ("input", "actuator input"))


def compile_actuators(c):
    c.actuators = [compile_actuator(c, a) for a in c.spec.actuators]
    c.check_names(c.actuators, "actuator")
    c.indices["actuator"] = c.index(c.actuators)


def compile_actuator(c, a):
    """mjCActuator::Compile: transmission, inherited range, limits, activation size."""
    c.current = a
    check_muscle(a)
    # MuJoCo 4 actuator features without a counterpart here (the history buffer size
    # nsample and its interpolation only matter together with a delay)
    default = Actuator.defaults()
    for k, feature in UNSUPPORTED_ACTUATOR:
        if getattr(a, k) != default[k]:
            raise c.unsupported(a, feature, k)
    for k, user in (("dyntype", DynType.USER), ("gaintype", GainType.USER),
                    ("biastype", BiasType.USER)):
        if getattr(a, k) == user:
            raise c.unsupported(a, f"user-defined actuator {k} (callbacks)", k)
    trntype, trnid = transmission(c, a)
    ctrlrange, actrange = list(a.ctrlrange), list(a.actrange)
    rng = inherited_range(c, a, trntype, trnid)
    if rng is not None:
        if a.dyntype in (DynType.NONE, DynType.FILTEREXACT):
            ctrlrange = rng
        else:
            actrange = rng
    lim = {}
    for k, r, value in (("force", "forcerange", a.forcerange), ("ctrl", "ctrlrange", ctrlrange),
                        ("act", "actrange", actrange)):
        limited = getattr(a, k + "limited")
        check_autolimits(c, a, limited, value, r, f"actuator has '{r}' but not '{k}limited'; "
                         "set autolimits=\"true\" or give it explicitly")
        lim[k] = islimited(limited, value)
        if lim[k] and value[0] >= value[1]:
            raise a.error(f"invalid {r} for actuator", r)
    if lim["act"] and a.dyntype == DynType.NONE:
        raise a.error("actrange specified but dyntype is 'none' in actuator", "actrange")
    return CActuator(spec=a, name=a.name or "", trntype=trntype, trnid=trnid,
                     actnum=activation_size(a), ctrllimited=lim["ctrl"],
                     forcelimited=lim["force"], actlimited=lim["act"], ctrlrange=ctrlrange,
                     actrange=actrange)


def check_muscle(a):
    """MuJoCo's requirements on muscle gain and bias parameters (range, force, scale, lmin,
    lmax, vmax, fpmax, fvmax)."""
    for prm, kind, muscle in ((a.gainprm, a.gaintype, GainType.MUSCLE),
                              (a.biasprm, a.biastype, BiasType.MUSCLE)):
        if kind != muscle:
            continue
        if prm[0] >= prm[1]:
            raise a.error("range[0] < range[1] required in muscle", "range")
        if prm[4] >= 1 or prm[5] <= 1:
            raise a.error("lmin < 1 < lmax required in muscle", "lmin" if prm[4] >= 1 else "lmax")
        if prm[3] <= 0 or prm[6] <= 0 or prm[7] <= 0 or prm[8] <= 0:
            raise a.error("positive scale, vmax, fpmax and fvmax required in muscle")


def activation_size(a):
    actdim = a.actdim
    if actdim > 1 and a.dyntype != DynType.USER:
        raise a.error("actdim > 1 is only allowed for dyntype 'user'", "actdim")
    if actdim == 1 and a.dyntype == DynType.NONE:
        raise a.error("invalid actdim 1 in stateless actuator", "actdim")
    if actdim == 0 and a.dyntype != DynType.NONE:
        raise a.error("invalid actdim 0 in stateful actuator", "actdim")
    if actdim < 0:
        actdim = 1 if a.dyntype != DynType.NONE else 0
    return actdim


def transmission(c, a):
    """(TrnType, [id, id]) of the actuator's one target."""
    targets = [t for t in ("joint", "jointinparent", "tendon", "cranksite", "site", "body")
               if getattr(a, t) is not None]
    if len(targets) > 1:
        raise a.error("actuator can have at most one transmission target", targets[1])
    if not targets:
        raise a.error("missing transmission target for actuator (joint, tendon, site, body "
                      "...)")
    t = targets[0]
    tname = getattr(a, t)
    trnid = [-1, -1]
    if (a.cranklength != 0 or a.slidersite is not None) and t != "cranksite":
        raise a.error("cranklength and slidersite can only be used in slidercrank "
                      "transmission", "slidersite" if a.slidersite is not None
                      else "cranklength")
    if a.refsite is not None and t != "site":
        raise a.error("refsite can only be used with site transmission", "refsite")
    if t in ("joint", "jointinparent"):
        trntype = TrnType.JOINT if t == "joint" else TrnType.JOINTINPARENT
        trnid[0] = c.lookup("joint", a, tname, t)
        if c.joints[trnid[0]].type in (JointType.FREE, JointType.BALL):
            raise c.unsupported(a, "actuator transmission on a ball or free joint", t)
    elif t == "tendon":
        trntype = TrnType.TENDON
        trnid[0] = c.lookup("tendon", a, tname, t)
    elif t == "cranksite":
        raise c.unsupported(a, "slider-crank transmission", "cranksite")
    elif t == "site":
        trntype = TrnType.SITE
        trnid[0] = c.lookup("site", a, tname, t)
        if a.refsite is not None:
            c.lookup("site", a, a.refsite, "refsite")
            raise c.unsupported(a, "site transmission with a reference site (refsite)",
                                "refsite")
    else:
        trntype = TrnType.BODY
        trnid[0] = c.lookup("body", a, tname, t)
    return trntype, trnid


def inherited_range(c, a, trntype, trnid):
    """inheritrange: the control (or activation) range from the target's range, else None."""
    if not (a.gaintype == GainType.FIXED and a.biastype == BiasType.AFFINE and
            a.gainprm[0] == -a.biasprm[1] and a.inheritrange > 0):
        return None
    if a.dyntype not in (DynType.NONE, DynType.FILTEREXACT, DynType.INTEGRATOR):
        raise a.error("inheritrange only available for position and intvelocity actuators",
                      "inheritrange")
    if trntype == TrnType.JOINT:
        j = c.joints[trnid[0]]
        if j.type not in (JointType.SLIDE, JointType.HINGE):
            raise a.error("inheritrange can only be used with hinge and slide joints",
                          "inheritrange")
        tr = j.range
    elif trntype == TrnType.TENDON:
        tr = c.tendons[trnid[0]].range
    else:
        raise a.error("inheritrange can only be used with joint and tendon transmission",
                      "inheritrange")
    if tr[0] == tr[1]:
        raise a.error("inheritrange used but target has no range defined", "inheritrange")
    mean = 0.5 * (tr[1] + tr[0])
    radius = 0.5 * (tr[1] - tr[0]) * a.inheritrange
    return [mean - radius, mean + radius]


def lookup_named(c, obj, kind, name, attribute):
    if kind == "actuator" and "actuator" not in c.indices:
        c.indices["actuator"] = c.index(c.actuators)
    return c.lookup(kind, obj, name, attribute)

"""Copying specs and attaching one spec to another (MuJoCo's mjs_attach).

``attach(parent, child, site=..., prefix="g_")`` puts a copy of everything in `child` into
`parent`: the objects of its world body go into a new frame at the site (or body, or frame), its
assets, default classes, contact pairs, equalities, tendons, actuators and sensors are appended,
and every name (and every reference to a name) gets the prefix and suffix. The child keeps its
own units: angles are converted when the two specs use different <compiler angle> or eulerseq,
joint limits are made explicit when autolimits differ, and asset files are resolved from the
child's directories. Keyframes of the parent get the attached joints at their reference
configuration (the child's own keyframes are not attached).
"""
from __future__ import annotations

import copy
import math
import os

from ..enums import JointType
from ..types import ModelError
from .compile import alt_orientation
from .elements import ORIENT, Body, Frame, Site, TFAuto
from .spec import DefaultClass, Spec

# attributes that hold the name of another object, per spec kind
REFERENCES = {
    "geom": ("mesh", "hfield", "material"), "site": ("material",), "camera": ("target",),
    "light": ("target", "texture"), "material": ("texture",), "mesh": ("material",),
    "pair": ("geom1", "geom2"), "exclude": ("body1", "body2"),
    "equality": ("body1", "body2", "site1", "site2", "joint1", "joint2", "tendon1", "tendon2"),
    "tendon": ("material",), "wrap": ("target", "sidesite"),
    "actuator": ("joint", "jointinparent", "tendon", "cranksite", "site", "body", "slidersite",
                 "refsite"),
    "sensor": ("site", "joint", "tendon", "actuator", "body", "geom", "camera", "mesh",
               "objname", "refname", "geom1", "geom2", "body1", "body2", "subtree1",
               "subtree2"),
}
LISTS = ("meshes", "textures", "materials", "hfields", "pairs", "excludes", "equalities",
         "tendons", "actuators", "sensors", "keys")


# ----------------------------------------------------------------------------------------------
# copies
# ----------------------------------------------------------------------------------------------
def copy_spec(spec):
    """An independent copy of `spec` (XML source locations are shared)."""
    new = Spec()
    for k in ("modelname", "modelfiledir", "file", "_src"):
        setattr(new, k, getattr(spec, k))
    for k in ("size", "visual", "statistic", "custom", "read_warnings"):
        setattr(new, k, copy.deepcopy(getattr(spec, k)))
    new.assets = dict(spec.assets)
    new.compiler = spec.compiler.clone()
    new.option = spec.option.clone()
    object.__setattr__(new.option, "attr_src", dict(spec.option.attr_src))
    new.defaults = {}
    _copy_defaults(spec.defaults["main"], None, new.defaults)
    for k in LISTS:
        setattr(new, k, [o.clone() for o in getattr(spec, k)])
    new.worldbody._src = spec.worldbody._src
    copy_tree(spec.worldbody, new.worldbody)
    return new


def _copy_defaults(d, parent, out):
    """Copies of class d and its nested classes into out (name -> class), parents first."""
    pending = [(d, parent)]
    while pending:                  # depth first, in order, without recursion
        d, parent = pending.pop()
        new = DefaultClass(d.name, parent)
        new._src = d._src
        new.proto = {k: p.clone() for k, p in d.proto.items()}
        new.actuator = {k: a.clone() for k, a in d.actuator.items()}
        new.texture = d.texture.clone()
        out[d.name] = new
        pending += [(c, new) for c in reversed(d.children)]


def copy_tree(body, into):
    """Copies of the objects, frames and child bodies of `body` added to body `into`."""
    frames = {id(f): f.clone() for f in body.frames}
    for f in body.frames:
        new = frames[id(f)]
        new.frame = frames.get(id(f.frame)) if f.frame is not None else None
        into.adopt(new)
    for kind in ("joints", "geoms", "sites", "cameras", "lights", "bodies"):
        for o in getattr(body, kind):
            new = o.clone()
            new.frame = frames.get(id(o.frame)) if o.frame is not None else None
            into.adopt(new)
            if kind == "bodies":
                copy_tree(o, new)


# ----------------------------------------------------------------------------------------------
# attach
# ----------------------------------------------------------------------------------------------
def attach(parent, child, site=None, body=None, frame=None, prefix="", suffix=""):
    """See the module docstring; returns the new frame holding the attached objects."""
    target, outer = _target(parent, site, body, frame)
    old_joints = parent.joints
    c = copy_spec(child)
    _name_assets(c)
    _resolve_files(c, child, prefix)
    _match_units(parent, c)
    classes = _rename(c, prefix, suffix, parent)
    frame_obj = target.adopt(Frame())
    frame_obj.frame = outer
    if isinstance(site, (str, Site)):
        s = parent.site(site) if isinstance(site, str) else site
        frame_obj.pos = list(s.pos)
        for a in ORIENT:
            if a == "quat" and s.given("quat"):
                frame_obj.quat = list(s.quat)
            elif a != "quat" and getattr(s, a) is not None:
                setattr(frame_obj, a, list(getattr(s, a)))
    world = c.worldbody
    for f in world.frames:
        if f.frame is None:
            f.frame = frame_obj
    for kind in ("frames", "joints", "geoms", "sites", "cameras", "lights", "bodies"):
        for o in getattr(world, kind):
            if kind != "frames" and o.frame is None:
                o.frame = frame_obj
            target.adopt(o)
    for name in classes:
        d = c.defaults[name]
        d.children = [x for x in d.children if x.name in classes]
        if d.parent is None or d.parent.name not in classes:
            d.parent = parent.defaults["main"]
            d.parent.children.append(d)
        parent.defaults[name] = d
    for k in LISTS:
        if k != "keys":
            getattr(parent, k).extend(getattr(c, k))
    parent.assets.update(c.assets)
    _extend_keys(parent, old_joints)
    return frame_obj


def _target(parent, site, body, frame):
    """(body, enclosing frame) of the attachment point."""
    if sum(x is not None for x in (site, body, frame)) != 1:
        raise ValueError("attach at exactly one of site, body or frame")
    if site is not None:
        s = parent.site(site) if isinstance(site, str) else site
        return s.parent, s.frame
    if body is not None:
        return (parent.body(body) if isinstance(body, str) else body), None
    if not isinstance(frame, Frame) or frame.parent is None:
        raise ValueError("frame must be a Frame of the parent spec")
    return frame.parent, frame


def _rename(c, prefix, suffix, parent):
    """Prefix and suffix every name and reference of spec `c`; returns the default classes to
    add to `parent` (a class whose new name the parent has already is the parent's)."""
    def new(name):
        return prefix + name + suffix if name and name != "world" else name

    for o in _all_objects(c):
        if getattr(o, "name", ""):
            object.__setattr__(o, "name", new(o.name))
        for a in REFERENCES.get(o.tag, ()):
            v = getattr(o, a, None)
            if isinstance(v, str):
                object.__setattr__(o, a, new(v))
        if o.tag == "material":
            o.layers = [(new(t) if t else t, r) for t, r in o.layers]
        for a in ("classname", "childclass"):
            v = getattr(o, a, None)
            if isinstance(v, str):
                object.__setattr__(o, a, prefix + v + suffix)
    classes = []
    renamed = {}
    for name, d in list(c.defaults.items()):
        d.name = prefix + name + suffix
        renamed[d.name] = d
        if d.name not in parent.defaults:
            classes.append(d.name)
        for p in list(d.proto.values()) + list(d.actuator.values()) + [d.texture]:
            object.__setattr__(p, "classname", d.name)
    c.defaults = renamed
    return classes


def _name_assets(c):
    """Give meshes, textures and height fields the names MuJoCo derives from their files."""
    for kind in ("meshes", "textures", "hfields"):
        for o in getattr(c, kind):
            if not o.name and o.file:
                object.__setattr__(o, "name", os.path.splitext(os.path.basename(o.file))[0])


def _all_objects(c):
    objs = list(c.bodies[1:]) + c.joints + c.geoms + c.sites + c.cameras + c.lights + c.frames
    for k in LISTS:
        objs += getattr(c, k)
    objs += [w for t in c.tendons for w in t.path]
    return objs


def _resolve_files(c, child, prefix):
    """Asset files of the child as paths (its meshdir, texturedir, strippath) or as renamed
    entries of its assets dict."""
    from .compile import TEXTURE_FILES, Compiler
    comp = Compiler(child)
    comp.settings()
    assets = {}
    for kind in ("meshes", "hfields", "textures"):
        for o in getattr(c, kind):
            for a in TEXTURE_FILES:
                if not getattr(o, a, None):
                    continue
                try:
                    data, path = comp.asset_file(o, a, read=False)
                except ModelError:
                    continue                    # reported when the parent compiles
                if data is None:
                    setattr(o, a, os.path.abspath(path))
                else:
                    assets[prefix + path] = data
                    setattr(o, a, prefix + path)
    c.assets = assets


def _match_units(parent, c):
    """Convert the child's angles and limits to the parent's compiler settings."""
    pc, cc = parent.compiler, c.compiler
    scale = 1.0
    if pc.angle != cc.angle:
        scale = math.pi / 180.0 if cc.angle == "degree" else 180.0 / math.pi
    protos = [p for d in c.defaults.values() for p in d.proto.values()]
    for o in _all_objects(c) + protos:
        for inner in (o, getattr(o, "inertial", None)):
            if inner is not None and cc.eulerseq != pc.eulerseq and \
                    getattr(inner, "euler", None) is not None:
                inner.quat = alt_orientation(inner, "euler", cc.angle == "degree", cc.eulerseq)
        if scale != 1.0:
            _scale_angles(o, scale)
            if isinstance(o, Body) and o.inertial is not None:
                _scale_angles(o.inertial, scale)
        if pc.autolimits != cc.autolimits:
            for lim, rng in (("limited", "range"), ("actuatorfrclimited", "actuatorfrcrange"),
                             ("ctrllimited", "ctrlrange"), ("forcelimited", "forcerange"),
                             ("actlimited", "actrange")):
                v = getattr(o, lim, None)
                if v == TFAuto.AUTO and cc.autolimits:
                    r = getattr(o, rng)
                    setattr(o, lim, TFAuto(int(r[0] < r[1])))


def _scale_angles(o, scale):
    if getattr(o, "axisangle", None) is not None:
        o.set_raw("axisangle", o.axisangle[:3] + [o.axisangle[3] * scale])
    if getattr(o, "euler", None) is not None:
        o.set_raw("euler", [v * scale for v in o.euler])
    if o.tag == "joint":
        if o.type in (JointType.HINGE, JointType.BALL):
            o.range = [v * scale for v in o.range]
        if o.type == JointType.HINGE:
            o.ref, o.springref = o.ref * scale, o.springref * scale


def _extend_keys(parent, old_joints):
    """Parent keyframes laid out again for the new joints: the attached joints take their
    positions at qpos0 (compiled) and zero velocities; a key that gave values only for the first
    joints keeps giving only those."""
    if not parent.keys:
        return
    from .compile import compile_spec
    keys, parent.keys = parent.keys, []
    try:
        qpos0 = compile_spec(copy_spec(parent)).qpos0
    finally:
        parent.keys = keys
    old = {id(j) for j in old_joints}
    new_joints = parent.joints
    starts, adr = {}, 0
    for j in new_joints:
        starts[id(j)] = adr
        adr += j.type.qpos_width()
    for k in keys:
        for attr, width in (("qpos", JointType.qpos_width), ("qvel", JointType.dof_width)):
            v = getattr(k, attr)
            if v is None:
                continue
            parts, i = {}, 0
            for j in old_joints:
                w = width(j.type)
                if i + w <= len(v):
                    parts[id(j)] = list(v[i:i + w])
                i += w
            out = []
            for j in new_joints:
                w = width(j.type)
                if id(j) not in old:
                    a = starts[id(j)]
                    out += [float(x) for x in qpos0[a:a + w]] if attr == "qpos" else [0.0] * w
                elif id(j) in parts:
                    out += parts[id(j)]
                else:
                    break
            setattr(k, attr, out)

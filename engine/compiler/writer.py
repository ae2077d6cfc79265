"""MJCF writer: Spec -> MuJoCo's XML (MuJoCo's xml_native_writer.cc).

The text loads in MuJoCo and in this engine and compiles to the same Model: numbers are written
with Python's shortest exact representation, default classes are written as classes and each
object gives the attributes that differ from its class (or that it sets itself), actuators are
written as the shortcut element they were read as when that reproduces them exactly, else in
their general form (as MuJoCo writes them). Asset files are written as absolute paths,
or relative to the directory of the output file when one is given; the model's own meshdir,
texturedir and assetdir are then no longer needed.
"""
from __future__ import annotations

import copy
import math
import os
from enum import IntEnum

from ..enums import DynType, JointType
from ..types import ModelError
from . import schema as S
from .elements import ORIENT, Actuator, Joint
from .compile import TEXTURE_FILES, Compiler
from .shortcuts import MUSCLE_PARAMETERS, expand_shortcut

INDENT = "  "
INT_LISTS = ("face", "resolution", "actuatorgroupdisable")   # integers in MuJoCo's schema


def write_xml(spec, path=None):
    """MJCF text of `spec`; file names relative to the directory of `path` when given."""
    w = _Writer(spec, os.path.dirname(os.path.abspath(path)) if path else None)
    w.model()
    return "\n".join(w.lines) + "\n"


def fmt(v):
    """An attribute value as MJCF text."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, IntEnum):
        return str(int(v))
    if isinstance(v, float):
        r = repr(v)                     # the shortest text that reads back as v
        return r[:-2] if r.endswith(".0") else r
    if isinstance(v, (list, tuple)):
        return " ".join(fmt(x) for x in v)
    return str(v)


def text(kind, v):
    """Value `v` of an attribute of schema kind `kind` as MJCF text."""
    if kind[0] == "b":
        return "true" if v else "false"
    if kind[0] in ("i", "i2"):
        return " ".join(str(int(x)) for x in v) if isinstance(v, (list, tuple)) else str(int(v))
    if kind[0] == "k":
        for word, value in kind[1].items():
            if value is v or (value is not None and value == v):
                return word
    if kind[0] in ("f", "p", "v") and not isinstance(v, (list, tuple)):
        return fmt(float(v))
    if kind[0] in ("f", "p", "v"):
        return " ".join(fmt(float(x)) for x in v)
    return fmt(v)


def differs(a, b):
    """Do two attribute values differ as MJCF text (-0.0 and 0.0 do)?"""
    if a != b:
        return True
    if isinstance(a, (list, tuple)):
        return any(x == 0 for x in a) and fmt(a) != fmt(b)
    return isinstance(a, float) and a == 0 and fmt(a) != fmt(b)


def _escape(s):
    return (s.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
            .replace(">", "&gt;"))


def _orientation(obj):
    if not hasattr(obj, "axisangle"):
        return []
    return [(a, list(getattr(obj, a))) for a in ORIENT
            if (obj.given("quat") if a == "quat" else getattr(obj, a) is not None)]


def changed(obj, table, proto=None, skip=()):
    """[(attribute, text)] of `obj` to write: against its class `proto`, what differs or what
    the object sets and the class does not; without a class, what the object sets."""
    out = []
    own = _orientation(obj)
    if own != (_orientation(proto) if proto is not None else []):
        out += [(a, text(S.ORIENT_TABLE[a], v)) for a, v in own] or [("quat", "1 0 0 0")]
    for a, kind in table.items():
        if a in skip or a in ORIENT or a in ("name", "class"):
            continue
        v = getattr(obj, a, None)
        if v is None:
            continue
        if a in INT_LISTS:
            kind = ("i2",)
        if proto is None:
            write = obj.given(a)
        else:
            pv = getattr(proto, a)
            write = pv is None or differs(v, pv) or (obj.given(a) and not proto.given(a))
        if write:
            out.append((a, text(kind, v)))
    return out


class _Writer:
    def __init__(self, spec, outdir):
        self.spec = spec
        self.outdir = outdir
        self.lines = []
        self.depth = 0
        self.reread = {}          # (class, shortcut) -> its defaults once the XML is read back
        self.finder = None        # a Compiler: finds asset files as compiling would

    # ---- output --------------------------------------------------------------------------------
    def element(self, tag, attrs, children=None):
        """Write <tag attrs/> or, when children() writes anything, <tag attrs>...</tag>."""
        head = INDENT * self.depth + "<" + tag + "".join(
            f' {a}="{_escape(v)}"' for a, v in attrs)
        if children is None:
            self.lines.append(head + "/>")
            return
        start = len(self.lines)
        self.lines.append(head + ">")
        self.depth += 1
        children()
        self.depth -= 1
        if len(self.lines) == start + 1:
            self.lines[start] = head + "/>"
        else:
            self.lines.append(INDENT * self.depth + f"</{tag}>")

    def section(self, tag, items, write_one):
        if items:
            self.element(tag, [], lambda: [write_one(x) for x in items])

    @staticmethod
    def named(obj, cls=None, context="main"):
        out = [("name", obj.name)] if getattr(obj, "name", "") else []
        if cls is not None and cls != context:
            out.append(("class", cls))
        return out

    # ---- the model -------------------------------------------------------------------------------
    def model(self):
        spec = self.spec
        self.element("mujoco", [("model", spec.modelname)], self.sections)

    def sections(self):
        spec = self.spec
        self.compiler()
        o = spec.option
        flags = [(a, v) for a, v in o.flags.items()]
        self.element("option", changed(o, S.OPTION),
                     lambda: flags and self.element("flag", flags))
        sizes = list(spec.size.items())
        if "memory" in spec.size and set(spec.size) & {"njmax", "nconmax", "nstack"}:
            # MuJoCo refuses memory beside these in one element, not in two (as when one
            # comes from an included file)
            sizes = [[x for x in sizes if x[0] == "memory"], [x for x in sizes if x[0] != "memory"]]
        else:
            sizes = [sizes] if sizes else []
        for group in sizes:
            self.element("size", [(a, fmt(v)) for a, v in group])
        if spec.visual:
            self.element("visual", [], lambda: [self.element(t, list(a.items()))
                                                for t, a in spec.visual.items()])
        if spec.statistic:
            self.element("statistic", [(a, fmt(v)) for a, v in spec.statistic.items()])
        self.section("custom", spec.custom, lambda c: self.element(c[0], list(c[1].items())))
        self.element("default", [], lambda: _run(self.default_class(spec.defaults["main"])))
        self.element("asset", [], self.assets)
        self.element("worldbody", [], lambda: _run(self.body_content(spec.worldbody, "main")))
        self.element("contact", [], self.contact)
        self.section("equality", spec.equalities, self.equality)
        self.section("tendon", spec.tendons, self.tendon)
        self.section("actuator", spec.actuators, self.actuator)
        self.section("sensor", spec.sensors, self.sensor)
        self.section("keyframe", spec.keys, lambda k: self.element(
            "key", self.named(k) + changed(k, {a: v for a, v in S.KEY.items()
                                                 if a not in ("name", "plastic")})))

    def compiler(self):
        c = self.spec.compiler
        skip = ("meshdir", "texturedir", "assetdir", "strippath")
        lengthrange = c.lengthrange
        self.element("compiler", changed(c, S.COMPILER, skip=skip),
                     lambda: lengthrange and self.element("lengthrange", [
                         (a, text(S.LENGTHRANGE[a], v)) for a, v in lengthrange.items()]))

    # ---- defaults --------------------------------------------------------------------------------
    def default_class(self, d):
        """A generator writing the values of class d and its nested classes (driven by _run)."""
        parent = d.parent
        for kind, table in S.DEFAULT_KINDS.items():
            proto = d.proto[kind]
            attrs = changed(proto, table, parent.proto[kind] if parent else None)
            if attrs:
                self.element(kind, attrs)
        general = d.actuator["general"]
        attrs = changed(general, S.act_table("general"),
                        parent.actuator["general"] if parent else None)
        if attrs:
            self.element("general", attrs)
        table = {a: S.TEXTURE[a] for a in S.TEXTURE_DEFAULT}
        attrs = changed(d.texture, table, parent.texture if parent else None)
        if attrs:
            self.element("texture", attrs)
        for child in d.children:
            yield self.nested("default", [("class", child.name)],
                              lambda child=child: self.default_class(child))

    # ---- assets ----------------------------------------------------------------------------------
    def assets(self):
        spec = self.spec
        for m in spec.meshes:
            attrs = self.named(m, m.classname) + changed(
                m, S.MESH_ASSET, spec.defaults[m.classname].proto["mesh"],
                skip=("builtin", "params"))
            self.element("mesh", self.files(m, attrs))
        for t in spec.textures:
            attrs = self.named(t, t.classname) + changed(t, S.TEXTURE,
                                                         spec.defaults[t.classname].texture)
            self.element("texture", self.files(t, attrs))
        for h in spec.hfields:
            self.element("hfield", self.files(h, self.named(h) + changed(h, S.HFIELD)))
        for m in spec.materials:
            attrs = self.named(m, m.classname) + changed(
                m, S.MATERIAL, spec.defaults[m.classname].proto["material"])
            layers = [[(k, v) for k, v in (("texture", t), ("role", r)) if v is not None]
                      for t, r in m.layers]
            self.element("material", attrs, lambda layers=layers: [
                self.element("layer", a) for a in layers])

    def files(self, obj, attrs):
        """File attributes as paths that resolve from the output (see the module docstring):
        found as the compiler finds them; names of the assets dict and files not found are
        written as they are."""
        if self.finder is None:
            self.finder = Compiler(self.spec)
            self.finder.settings()
        out = []
        for a, v in attrs:
            if a in TEXTURE_FILES:
                try:
                    data, path = self.finder.asset_file(obj, a, read=False)
                except ModelError:
                    data, path = b"", v
                if data is None:
                    v = os.path.relpath(path, self.outdir) if self.outdir else path
                else:
                    v = path
            out.append((a, v))
        return out

    # ---- the tree --------------------------------------------------------------------------------
    # The tree is written by generators that yield the generator of each nested element
    # instead of calling it (_run drives them from a stack): no Python recursion, any depth.
    def nested(self, tag, attrs, children):
        """A generator writing <tag attrs>, the elements of the generator children(), </tag>
        (or <tag attrs/> when children writes nothing)."""
        head = INDENT * self.depth + "<" + tag + "".join(
            f' {a}="{_escape(v)}"' for a, v in attrs)
        start = len(self.lines)
        self.lines.append(head + ">")
        self.depth += 1
        yield children()
        self.depth -= 1
        if len(self.lines) == start + 1:
            self.lines[start] = head + "/>"
        else:
            self.lines.append(INDENT * self.depth + f"</{tag}>")

    def body_content(self, body, childclass):
        """The objects of a body in order, each inside its chain of <frame>s."""
        if body.inertial is not None:
            e = body.inertial
            self.element("inertial", changed(e, S.INERTIAL))
        items = body.joints + body.geoms + body.sites + body.cameras + body.lights + \
            body.bodies
        i = 0
        while i < len(items):
            frame = items[i].frame
            j = i
            while j < len(items) and items[j].frame is frame:
                j += 1
            yield self.in_frames(_chain(frame), items[i:j], childclass)
            i = j

    def in_frames(self, chain, items, childclass):
        if not chain:
            for obj in items:
                if obj.tag == "body":
                    yield self.body(obj, childclass)
                else:
                    self.tree_object(obj, childclass)
            return
        f = chain[0]
        cc = f.childclass or childclass
        attrs = [("name", f.name)] if f.name else []
        if f.childclass is not None:
            attrs.append(("childclass", f.childclass))
        attrs += changed(f, S.FRAME, skip=("name", "childclass"))
        yield self.nested("frame", attrs, lambda: self.in_frames(chain[1:], items, cc))

    def body(self, obj, childclass):
        cc = obj.childclass or childclass
        attrs = self.named(obj)
        if obj.childclass is not None:
            attrs.append(("childclass", obj.childclass))
        attrs += changed(obj, S.BODY, skip=("childclass",))
        yield self.nested("body", attrs, lambda: self.body_content(obj, cc))

    def tree_object(self, obj, childclass):
        """A joint, geom, site, camera or light."""
        spec = self.spec
        tag = obj.tag
        if tag == "joint" and _is_freejoint(obj):
            self.element("freejoint", self.named(obj) + changed(obj, S.FREEJOINT))
            return
        table = dict(S.DEFAULT_KINDS[tag])
        if tag in ("camera", "light"):
            table["target"] = S.S
        if tag == "light":
            table["texture"] = S.S
        proto = spec.defaults[obj.classname].proto[tag]
        self.element(tag, self.named(obj, obj.classname, childclass) +
                     changed(obj, table, proto))

    # ---- other objects -------------------------------------------------------------------------
    def contact(self):
        for p in self.spec.pairs:
            table = dict(S.PAIR, geom1=S.S, geom2=S.S)
            self.element("pair", self.named(p, p.classname) + changed(
                p, table, self.spec.defaults[p.classname].proto["pair"]))
        for e in self.spec.excludes:
            self.element("exclude", self.named(e) + changed(e, S.EXCLUDE))

    def equality(self, e):
        tag = e.xml_tag
        table = dict(S.EQUALITY, **S.equality_table(tag))
        self.element(tag, self.named(e, e.classname) + changed(
            e, table, self.spec.defaults[e.classname].proto["equality"]))

    def tendon(self, t):
        table = dict(S.TENDON)
        if t.kind == "fixed":
            for a in ("width", "material", "rgba"):
                table.pop(a)
        attrs = self.named(t, t.classname) + changed(
            t, table, self.spec.defaults[t.classname].proto["tendon"])
        self.element(t.kind, attrs, lambda: [self.wrap(w) for w in t.path])

    def wrap(self, w):
        if w.kind == "joint":
            self.element("joint", [("joint", w.target), ("coef", fmt(float(w.coef)))])
        elif w.kind == "site":
            self.element("site", [("site", w.target)])
        elif w.kind == "geom":
            attrs = [("geom", w.target)]
            if w.sidesite is not None:
                attrs.append(("sidesite", w.sidesite))
            self.element("geom", attrs)
        else:
            self.element("pulley", [("divisor", fmt(float(w.divisor)))])

    def actuator(self, a):
        """As the shortcut element it was written as, when that reproduces it exactly (MuJoCo
        records the shortcut), else in the general form."""
        attrs = self.named(a, a.classname)
        attrs += [(t, getattr(a, t)) for t in S.ACT_TARGETS if getattr(a, t) is not None]
        form = shortcut_form(self.spec.defaults[a.classname], a, self.reread)
        if form is not None:
            self.element(a.shortcut, attrs + form)
            return
        proto = self.spec.defaults[a.classname].actuator["general"]
        self.element("general", attrs + changed(a, S.act_table("general"), proto))

    def sensor(self, s):
        self.element(s.type, self.named(s) + changed(s, S.sensor_table(s.type)))


def _run(generator):
    """Drive nested writer generators: each yields the generator of an element inside it."""
    stack = [generator]
    while stack:
        inner = next(stack[-1], None)
        if inner is None:
            stack.pop()
        else:
            stack.append(inner)


def _chain(frame):
    out = []
    while frame is not None:
        out.append(frame)
        frame = frame.frame
    return out[::-1]


def _is_freejoint(j):
    """A free joint with MuJoCo's values everywhere but name, group and align."""
    if j.type != JointType.FREE:
        return False
    defaults = Joint.defaults()
    return all(getattr(j, k) == v for k, v in defaults.items()
               if k not in ("name", "group", "align", "type", "classname", "frame"))


# ----------------------------------------------------------------------------------------------
# actuator shortcuts
# ----------------------------------------------------------------------------------------------
def _servo(a):
    prm = {"kp": a.gainprm[0]}
    b = a.biasprm[2]
    if b < 0 or (b == 0 and math.copysign(1.0, b) < 0):
        prm["kv"] = -b
    elif b > 0:
        prm["dampratio"] = b
    if a.shortcut == "position" and (a.dyntype == DynType.FILTEREXACT or a.dynprm[0] != 1):
        prm["timeconst"] = a.dynprm[0]
    if a.inheritrange:
        prm["inheritrange"] = a.inheritrange
    return prm


SHORTCUT_PARAMETERS = {
    "motor": lambda a: {}, "position": _servo, "intvelocity": _servo,
    "velocity": lambda a: {"kv": a.gainprm[0]}, "damper": lambda a: {"kv": -a.gainprm[2]},
    "cylinder": lambda a: {"timeconst": a.dynprm[0], "area": a.gainprm[0],
                           "bias": list(a.biasprm[:3])},
    "adhesion": lambda a: {"gain": a.gainprm[0]},
    "muscle": lambda a: {"timeconst": list(a.dynprm[:2]), "tausmooth": a.dynprm[2],
                         "range": list(a.gainprm[:2]),
                         **dict(zip(MUSCLE_PARAMETERS, a.gainprm[2:9]))}}
_NOT_COMPARED = ("name", "classname", "shortcut") + S.ACT_TARGETS


def shortcut_form(d, a, cache):
    """Attributes of `a` written as its shortcut element in default class `d`, or None when
    reading them back would not give `a` exactly (`cache` keeps reread_actuator_default)."""
    tag = a.shortcut
    if tag not in SHORTCUT_PARAMETERS:
        return None
    proto = cache.get((d.name, tag))
    if proto is None:
        proto = cache[d.name, tag] = reread_actuator_default(d, tag)
    table = {k: v for k, v in S.act_table(tag).items() if k not in S.ACT_SPECIFIC[tag]}
    attrs = changed(a, table, proto)
    prm = SHORTCUT_PARAMETERS[tag](a)
    b = proto.clone()
    for k, _ in attrs:
        setattr(b, k, copy.copy(getattr(a, k)))
    try:
        expand_shortcut(b, tag, dict(prm), lambda msg, attr=None: ValueError(msg))
    except ValueError:
        return None
    for k in Actuator.defaults():
        if k not in _NOT_COMPARED and differs(getattr(a, k), getattr(b, k)):
            return None
    kinds = S.ACT_SPECIFIC[tag]
    return attrs + [(k, text(kinds[k], v)) for k, v in prm.items()]


def reread_actuator_default(d, tag):
    """The defaults of shortcut `tag` in class `d` once the written XML is read back: the
    classes hold <general> defaults only, whose changes apply to every actuator element."""
    if d.parent is None:
        base, parent_general = Actuator(), Actuator()
    else:
        base, parent_general = (reread_actuator_default(d.parent, tag),
                                d.parent.actuator["general"])
    out = base.clone()
    general = d.actuator["general"]
    for k in Actuator.defaults():
        if k not in _NOT_COMPARED and differs(getattr(general, k), getattr(parent_general, k)):
            setattr(out, k, copy.copy(getattr(general, k)))
    return out

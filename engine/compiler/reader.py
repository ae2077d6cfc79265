"""MJCF reader: MuJoCo's XML -> a Spec (MuJoCo's xml_native_reader.cc).

The reader only fills the spec: it checks the grammar (elements, attributes, numbers, keywords),
applies default classes (an element starts as a copy of its class's values) and expands actuator
shortcuts, but converts no units, resolves no names and computes nothing: that is the compile
step (compile.py). Every spec object keeps the XML element it came from, so that errors found
later still name file, line, element and attribute. <include> files are spliced first.
"""
from __future__ import annotations

import logging
import os
import re

from . import schema as S
from .elements import (EQUALITY_TAGS, ORIENT, Body, Exclude, Frame, HField, Inertial, Joint, Key,
                       Sensor, Wrap)
from .shortcuts import expand_shortcut
from .spec import Spec
from .xmltree import Source, expand_includes, parse_text
from ..enums import JointType
from ..types import ModelError

log = logging.getLogger("engine.compiler")

SECTIONS = ("compiler", "option", "size", "visual", "statistic", "default", "custom",
            "extension", "asset", "worldbody", "contact", "equality", "tendon", "actuator",
            "sensor", "keyframe", "deformable")
UNSUPPORTED_IN_BODY = {"composite": "composite objects (<composite>)",
                       "flexcomp": "flexible objects (<flexcomp>)",
                       "plugin": "engine plugins (<plugin>)",
                       "attach": "model attachment (<attach>)", "replicate": "<replicate>",
                       "skin": "<skin>"}


def read_file(path):
    """Spec of the MJCF file at `path`."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ModelError(f"cannot read model file: {e.strerror}", file=path) from None
    return read_string(data, path=path, model_dir=os.path.dirname(os.path.abspath(path)))


def read_string(xml, assets=None, path=None, model_dir=None):
    """Spec of MJCF text; `assets` maps file names to bytes (meshes, included files)."""
    if model_dir is None and path:
        model_dir = os.path.dirname(os.path.abspath(path))
    spec = Spec()
    spec.modelfiledir = model_dir
    spec.assets = dict(assets or {})
    spec.file = path
    _Reader(spec, path or "<string>").run(xml)
    return spec


NUMERIC_KINDS = ("f", "p", "v", "i", "i2")
MEMORY_SUFFIX = {"": 0, "K": 10, "M": 20, "G": 30, "T": 40, "P": 50, "E": 60}


def _memory(node):
    """<size memory>: -1 or a positive number of bytes with an optional suffix K, M, G, T, P,
    E (MuJoCo's syntax, either case), at most 2^63 - 1 bytes; returned as written."""
    text = node.text("memory")
    if text == "-1":
        return text
    match = re.fullmatch(r"([0-9]+)([KMGTPE]?)", text, re.IGNORECASE)
    if match is None or not 0 < int(match.group(1)) << MEMORY_SUFFIX[match.group(2).upper()] \
            < 2 ** 63:
        raise node.error("expected -1 or a positive integer with an optional suffix K, M, G, "
                         "T, P or E (at most 2^63 - 1 bytes)", "memory")
    return text


def read_attr(node, name, kind):
    """Value of attribute `name` of `node` according to a schema kind tuple."""
    k = kind[0]
    if k == "f" and kind[2:] == ("poly",):
        value, *coef = node.floats(name, 3, exact=False)
        if any(c != 0.0 for c in coef):
            raise node.error(f"polynomial {name} (MuJoCo 4's coefficients after the first "
                             "number) is not supported: give one number", name)
        return value
    if k == "f":
        return node.float(name) if kind[1] == 1 else node.floats(name, kind[1])
    if k == "p":
        return node.floats(name, kind[1], exact=False)
    if k == "v":
        return node.floats(name, None, minimum=0)
    if k == "i":
        return node.int(name)
    if k == "i2":
        return node.ints(name, 2)
    if k == "s":
        return node.text(name)
    if k == "b":
        return node.bool(name)
    if k == "k":
        return node.keyword(name, kind[1])
    raise AssertionError(kind)


def overlay(obj, node, table, skip=()):
    """Set the attributes of `node` (read by `table`) on `obj`, over the inherited values: an
    orientation in the element replaces the inherited one, a partial vector ("p") keeps the
    inherited tail. Returns obj."""
    if hasattr(obj, "axisangle") and any(node.given(a) for a in ORIENT if a in table):
        for a in ORIENT:
            obj.set_raw(a, [1.0, 0.0, 0.0, 0.0] if a == "quat" else None)
            obj._given.discard(a)
    for a in node.attrib:
        if a in skip:
            continue
        kind = table.get(a)
        if kind is None:
            raise node.error(f"unknown attribute '{a}' in <{node.tag}>", a)
        if kind[0] in NUMERIC_KINDS and not node.given(a):
            continue                  # an empty number is no value (MuJoCo's reading)
        v = read_attr(node, a, kind)
        if kind[0] == "p":
            old = getattr(obj, a)
            if old is None:
                old = obj.defaults()[a]
            if old is not None:
                v = list(v) + list(old[len(v):])
        obj.set_raw("classname" if a == "class" else a, v)
    return obj


class _Reader:
    def __init__(self, spec, file):
        self.spec = spec
        self.file = file
        self.source = Source(spec.assets, spec.modelfiledir)

    def warn(self, msg, node=None):
        if node is not None:
            msg = f"{node.file}, line {node.line}, element <{node.tag}>: {msg}"
        self.spec.read_warnings.append(msg)
        log.warning(msg)

    @staticmethod
    def unsupported(node, feature, attribute=None):
        return node.error(f"{feature} is not implemented", attribute)

    def run(self, data):
        root = parse_text(data, self.file, self.warn)
        if root.tag != "mujoco":
            raise root.error("root element must be <mujoco>")
        root.check_attrs(("model",))
        expand_includes(root, self.source, self.spec.modelfiledir, warn=self.warn)
        self.spec.modelname = root.text("model", "MuJoCo Model")
        self.spec._src = root
        sections = {}
        for child in root.children:
            if child.tag not in SECTIONS:
                raise child.error(f"unknown element <{child.tag}> in <mujoco>")
            sections.setdefault(child.tag, []).append(child)
        get = sections.get
        for n in get("compiler", []):
            self.read_compiler(n)
        for n in get("option", []):
            self.read_option(n)
        self.read_size(get("size", []))
        self.read_visual(get("visual", []))
        self.read_statistic(get("statistic", []))
        for n in get("default", []):
            self.read_defaults(n)
        self.read_custom(get("custom", []) + get("extension", []))
        for n in get("deformable", []):
            raise self.unsupported(n, "deformable objects (<deformable>)")
        for n in get("asset", []):
            self.read_assets(n)
        for n in get("worldbody", []):
            n.check_attrs(())
            self.spec.worldbody._src = self.spec.worldbody._src or n
            self.read_worldbody(n)
        for n in get("contact", []):
            self.read_contact(n)
        for n in get("equality", []):
            self.read_equalities(n)
        for n in get("tendon", []):
            self.read_tendons(n)
        for n in get("actuator", []):
            self.read_actuators(n)
        for n in get("sensor", []):
            self.read_sensors(n)
        for n in get("keyframe", []):
            self.read_keyframes(n)

    # ------------------------------------------------------------------------------------------
    # <compiler>, <option>, <size>, <visual>, <statistic>, <custom>
    # ------------------------------------------------------------------------------------------
    def read_compiler(self, n, skip=()):
        c = self.spec.compiler
        c._src = n
        for child in n.children:
            if child.tag != "lengthrange":
                raise child.error(f"unknown element <{child.tag}> in <compiler>")
            child.check_attrs(S.LENGTHRANGE)
            c.lengthrange = {**(c.lengthrange or {}),
                             **{a: read_attr(child, a, S.LENGTHRANGE[a]) for a in child.attrib}}
        overlay(c, n, S.COMPILER, skip=skip)
        if n.has("eulerseq"):
            seq = c.eulerseq
            if len(seq) != 3 or any(ch not in "xyzXYZ" for ch in seq):
                raise n.error("euler sequence must be 3 characters from x, y, z, X, Y, Z",
                              "eulerseq")
        if c.coordinate == "global":
            raise n.error("coordinate=\"global\" is not supported by MuJoCo 4; use local",
                          "coordinate")
        if c.fusestatic and "fusestatic" not in skip:
            raise self.unsupported(n, "fusestatic (merging static bodies)", "fusestatic")
        if c.passthrough:
            raise self.unsupported(n, "passthrough (no compiler processing)", "passthrough")
        for a in ("savecanonical", "savecompiled", "conflict"):
            if n.has(a):
                self.warn(f"compiler option '{a}' has no effect in this engine", n)

    def read_option(self, n):
        o = self.spec.option
        o._src = n
        overlay(o, n, S.OPTION)
        o.attr_src.update({a: n for a in n.attrib})
        for child in n.children:
            if child.tag != "flag":
                raise child.error(f"unknown element <{child.tag}> in <option>")
            for a in child.attrib:
                if a not in S.FLAGS:
                    raise child.error(f"unknown attribute '{a}' in <flag>", a)
                child.keyword(a, {"enable": True, "disable": False})
                o.flags[a] = child.attrib[a]
            o._flag_src = child
            o._given.add("flags")

    def read_size(self, nodes):
        for n in nodes:
            n.check_attrs(S.SIZE)
            for a in n.attrib:
                if a == "memory":
                    self.spec.size[a] = _memory(n)
                elif not n.given(a):            # MuJoCo refuses blank sizes
                    raise n.error("expected an integer, got nothing", a)
                else:
                    self.spec.size[a] = n.int(a)

    def read_visual(self, nodes):
        for n in nodes:
            n.check_attrs(())
            for child in n.children:
                if child.tag not in S.VISUAL:
                    raise child.error(f"unknown element <{child.tag}> in <visual>")
                child.check_attrs(S.VISUAL[child.tag])
                self.spec.visual.setdefault(child.tag, {}).update(child.attrib)

    def read_statistic(self, nodes):
        for n in nodes:
            n.check_attrs(S.STATISTIC)
            for a in n.attrib:
                if n.given(a):
                    self.spec.statistic[a] = n.floats(a, 3) if a == "center" else n.float(a)

    def read_custom(self, nodes):
        for n in nodes:
            n.check_attrs(())
            if n.tag == "extension":
                for child in n.children:
                    raise self.unsupported(child, "engine plugins (<extension>)")
                continue
            for child in n.children:
                if child.tag not in ("numeric", "text", "tuple"):
                    raise child.error(f"unknown element <{child.tag}> in <custom>")
                self.spec.custom.append((child.tag, dict(child.attrib)))
                self.warn(f"custom <{child.tag}> data is not used by this engine; skipped",
                          child)

    # ------------------------------------------------------------------------------------------
    # <default>
    # ------------------------------------------------------------------------------------------
    def read_defaults(self, n):
        n.check_attrs(("class",))
        main = self.spec.defaults["main"]
        if n.text("class", "main") != "main":
            pending = [(n, main)]              # a top-level default with another name
        else:
            main._src = main._src or n
            pending = [(c, main) for c in reversed(self.fill_default(n, main))]
        while pending:                         # depth first, in file order, without recursion
            child, parent = pending.pop()
            d = self.default_class(child, parent)
            pending += [(c, d) for c in reversed(self.fill_default(child, d))]

    def default_class(self, n, parent):
        """The class of a nested <default>, empty: fill_default fills it."""
        n.check_attrs(("class",))
        name = n.text("class")
        if not name:
            raise n.error("nested default class must have a name", "class")
        if name in self.spec.defaults:
            raise n.error(f"repeated default class name '{name}'", "class")
        d = self.spec.add_default(name, parent)
        d._src = n
        return d

    def fill_default(self, n, d):
        """The values of <default> n into class d; returns its nested <default> elements."""
        nested, seen = [], set()
        for child in n.children:
            tag = child.tag
            if tag != "default":
                if tag in seen:       # as MuJoCo's schema: one element of each kind per class
                    raise child.error(f"repeated <{tag}> in one <default>")
                seen.add(tag)
            if tag == "default":
                nested.append(child)
            elif tag in S.DEFAULT_KINDS:
                overlay(d.proto[tag], child, S.DEFAULT_KINDS[tag])
            elif tag in S.ACT_SPECIFIC:
                self.default_actuator(d, child)
            elif tag in ("orientation", "pid", "dcmotor"):
                raise self.unsupported(child, f"<{tag}> actuators")
            elif tag == "texture":
                child.check_attrs(S.TEXTURE_DEFAULT)
                overlay(d.texture, child, S.TEXTURE)
            else:
                raise child.error(f"unknown element <{tag}> in <default>")
        return nested

    def default_actuator(self, d, n):
        """An actuator element inside <default>, with MuJoCo 4's per-element defaults.

        Attributes common to all actuators (ranges, limits, gear, group ...) apply to the
        defaults of every actuator element; <general> attributes apply to all of them too; a
        shortcut (<position kp=...> ...) sets the defaults of that shortcut and of <general>.
        """
        tag = n.tag
        a = d.actuator[tag]
        before = a.clone()
        self.read_actuator_attrs(a, n, is_default=True)
        if tag == "general":
            changed = [k for k in a.defaults() if getattr(a, k) != getattr(before, k)]
            for t, other in d.actuator.items():
                if t != tag:
                    for k in changed:
                        setattr(other, k, _copy(getattr(a, k)))
            return
        common = [k for k in S.ACT_COMMON if n.has(k)]
        for t, other in d.actuator.items():
            if t == "general":
                d.actuator[t] = a.clone()
            elif t != tag:
                for k in common:
                    setattr(other, k, _copy(getattr(a, k)))

    def element(self, node, proto_kind, childclass, table, extra=(), skip=()):
        """A new object of a kind that has defaults: a copy of its class's values with the
        attributes of `node` on top."""
        d = self.defclass(node, childclass)
        t = dict(table)
        t.update(extra if isinstance(extra, dict) else {a: S.S for a in extra})
        t["name"] = S.S
        t["class"] = S.S
        obj = d.proto[proto_kind].clone()
        obj._src = node
        overlay(obj, node, t, skip=skip)
        object.__setattr__(obj, "classname", d.name)
        return obj

    def defclass(self, node, inherited):
        """Default class of an element: its class attribute, else the inherited childclass."""
        name = node.text("class")
        if name is None:
            name = inherited or "main"
            if name not in self.spec.defaults:
                raise node.error(f"unknown default class '{name}'", "childclass")
        elif name not in self.spec.defaults:
            raise node.error(f"unknown default class '{name}'", "class")
        return self.spec.defaults[name]

    # ------------------------------------------------------------------------------------------
    # <asset>
    # ------------------------------------------------------------------------------------------
    def read_assets(self, n):
        n.check_attrs(())
        spec = self.spec
        for child in n.children:
            tag = child.tag
            if tag == "mesh":
                self.read_mesh(child)
            elif tag == "material":
                for layer in child.children:
                    if layer.tag != "layer":
                        raise layer.error(f"unknown element <{layer.tag}> in <material>")
                    layer.check_attrs(("texture", "role"))
                m = self.element(child, "material", None, S.MATERIAL)
                m.layers = [(c.text("texture"), c.text("role")) for c in child.children]
                spec.materials.append(m)
            elif tag == "texture":
                d = self.defclass(child, None)
                t = d.texture.clone()
                t._src = child
                overlay(t, child, dict(S.TEXTURE, name=S.S, **{"class": S.S}))
                object.__setattr__(t, "classname", d.name)
                spec.textures.append(t)
            elif tag == "hfield":
                h = overlay(HField(), child, S.HFIELD)
                h._src = child
                spec.hfields.append(h)
            elif tag == "skin":
                self.warn("<skin> is a visual element that is not rendered; skipped", child)
            elif tag == "model":
                raise self.unsupported(child, "model assets for <attach>")
            else:
                raise child.error(f"unknown element <{tag}> in <asset>")

    def read_mesh(self, n):
        for a in n.attrib:
            if a not in S.MESH_ASSET:
                raise n.error(f"unknown attribute '{a}' in <mesh>", a)
        for child in n.children:
            raise self.unsupported(child, "mesh plugins")
        if n.has("builtin") or n.has("params"):
            raise self.unsupported(n, "builtin meshes", "builtin")
        self.spec.meshes.append(self.element(n, "mesh", None, S.MESH_ASSET))

    # ------------------------------------------------------------------------------------------
    # <worldbody>
    # ------------------------------------------------------------------------------------------
    def read_worldbody(self, node):
        """The body tree, without recursion (any depth): a body is adopted by its parent where
        it appears, keeping the document order, and its contents are read from a work list."""
        pending = [(node, self.spec.worldbody, None)]
        while pending:
            n, body, childclass = pending.pop()
            self.read_body_children(n, body, childclass, None, pending)

    def read_body_children(self, node, body, childclass, frame, pending):
        for child in node.children:
            tag = child.tag
            if tag == "body":
                pending.append(self.read_body(child, body, childclass, frame))
            elif tag == "frame":
                f = overlay(Frame(), child, S.FRAME)
                f._src = child
                f.frame = frame
                cc = f.childclass or childclass
                if f.childclass is not None and cc not in self.spec.defaults:
                    raise child.error(f"unknown default class '{cc}'", "childclass")
                body.frames.append(f)
                self.read_body_children(child, body, cc, f, pending)
            elif tag == "inertial":
                if body.parent is None:
                    raise child.error("<inertial> is not allowed in <worldbody>")
                if body.inertial is not None:
                    raise child.error("repeated <inertial> in body")
                if frame is not None:
                    raise child.error("<inertial> cannot be placed inside a <frame>")
                body.inertial = overlay(Inertial(), child, S.INERTIAL)
                body.inertial._src = child
            elif tag in ("joint", "freejoint"):
                if body.parent is None:
                    raise child.error("joint found in world body")
                self.read_joint(child, body, childclass, frame)
            elif tag in ("geom", "site", "camera", "light"):
                getattr(self, "read_" + tag)(child, body, childclass, frame)
            elif tag in UNSUPPORTED_IN_BODY:
                raise self.unsupported(child, UNSUPPORTED_IN_BODY[tag])
            else:
                raise child.error(f"unknown element <{tag}> in <{node.tag}>")

    def read_body(self, n, parent, childclass, frame):
        """A <body> adopted by its parent; returns what is left to read: (n, body, childclass)."""
        b = overlay(Body(), n, S.BODY)
        b._src = n
        b.frame = frame
        cc = b.childclass or childclass
        if b.childclass is not None and cc not in self.spec.defaults:
            raise n.error(f"unknown default class '{cc}'", "childclass")
        if b.sleep is not None:
            self.warn("body sleep settings have no effect in this engine", n)
        if b.fuse == "true":
            raise self.unsupported(n, "merging a static body into its parent (fuse)", "fuse")
        parent.adopt(b)
        return n, b, cc

    def read_joint(self, n, body, childclass, frame):
        if n.tag == "freejoint":
            j = overlay(Joint(type=JointType.FREE), n, S.FREEJOINT)
            j._src = n
            j._given.discard("type")
        else:
            j = self.element(n, "joint", childclass, S.JOINT)
        j.frame = frame
        body.adopt(j)

    def read_geom(self, n, body, childclass, frame):
        for child in n.children:
            raise self.unsupported(child, "geom plugins")
        g = self.element(n, "geom", childclass, S.GEOM)
        g.frame = frame
        body.adopt(g)

    def read_site(self, n, body, childclass, frame):
        s = self.element(n, "site", childclass, S.SITE)
        s.frame = frame
        body.adopt(s)

    def read_camera(self, n, body, childclass, frame):
        c = self.element(n, "camera", childclass, S.CAMERA, extra=("target",))
        c.frame = frame
        body.adopt(c)

    def read_light(self, n, body, childclass, frame):
        lt = self.element(n, "light", childclass, S.LIGHT, extra=("target", "texture"))
        lt.frame = frame
        body.adopt(lt)

    # ------------------------------------------------------------------------------------------
    # <contact>, <equality>, <tendon>
    # ------------------------------------------------------------------------------------------
    def read_contact(self, n):
        n.check_attrs(())
        for child in n.children:
            if child.tag == "pair":
                self.spec.pairs.append(self.element(child, "pair", None, S.PAIR,
                                                    extra=("geom1", "geom2")))
            elif child.tag == "exclude":
                e = overlay(Exclude(), child, S.EXCLUDE)
                e._src = child
                self.spec.excludes.append(e)
            else:
                raise child.error(f"unknown element <{child.tag}> in <contact>")

    def read_equalities(self, n):
        n.check_attrs(())
        for child in n.children:
            tag = child.tag
            if tag in ("flex", "flexstrain", "distance"):
                raise self.unsupported(child, f"<{tag}> equality constraints")
            if tag not in EQUALITY_TAGS:
                raise child.error(f"unknown element <{tag}> in <equality>")
            e = self.element(child, "equality", None, S.EQUALITY, extra=S.equality_table(tag))
            e.set_raw("type", EQUALITY_TAGS[tag])
            self.spec.equalities.append(e)

    def read_tendons(self, n):
        n.check_attrs(())
        for child in n.children:
            if child.tag not in ("spatial", "fixed"):
                raise child.error(f"unknown element <{child.tag}> in <tendon>")
            if child.tag == "fixed":
                for a in ("width", "material", "rgba"):
                    if child.has(a):
                        raise child.error(f"unknown attribute '{a}' in <fixed>", a)
            t = self.element(child, "tendon", None, S.TENDON)
            t.set_raw("kind", child.tag)
            if child.given("springlength"):        # as written: one number means both ends
                t.set_raw("springlength", child.floats("springlength", 2, exact=False))
            t.path = [self.read_wrap(w, child.tag) for w in child.children]
            self.spec.tendons.append(t)

    @staticmethod
    def read_wrap(w, kind):
        if kind == "fixed":
            if w.tag != "joint":
                raise w.error(f"unknown element <{w.tag}> in <fixed>")
            w.check_attrs(("joint", "coef"))
            for a in ("joint", "coef"):
                if not w.given(a):
                    raise w.error(f"missing attribute '{a}'", a)
            wrap = Wrap(kind="joint", target=w.text("joint"), coef=w.float("coef"))
        elif w.tag == "site":
            w.check_attrs(("site",))
            if not w.has("site"):
                raise w.error("missing attribute 'site'", "site")
            wrap = Wrap(kind="site", target=w.text("site"))
        elif w.tag == "geom":
            w.check_attrs(("geom", "sidesite"))
            if not w.has("geom"):
                raise w.error("missing attribute 'geom'", "geom")
            wrap = Wrap(kind="geom", target=w.text("geom"), sidesite=w.text("sidesite"))
        elif w.tag == "pulley":
            w.check_attrs(("divisor",))
            if not w.given("divisor"):
                raise w.error("missing attribute 'divisor'", "divisor")
            wrap = Wrap(kind="pulley", divisor=w.float("divisor"))
        else:
            raise w.error(f"unknown element <{w.tag}> in <spatial>")
        wrap._src = w
        return wrap

    # ------------------------------------------------------------------------------------------
    # <actuator>
    # ------------------------------------------------------------------------------------------
    def read_actuators(self, n):
        n.check_attrs(())
        for child in n.children:
            if child.tag == "plugin":
                raise self.unsupported(child, "actuator plugins")
            if child.tag in ("orientation", "pid", "dcmotor"):
                raise self.unsupported(child, f"<{child.tag}> actuators")
            if child.tag not in S.ACT_SPECIFIC:
                raise child.error(f"unknown element <{child.tag}> in <actuator>")
            d = self.defclass(child, None)
            a = d.actuator[child.tag].clone()
            a._src = child
            object.__setattr__(a, "classname", d.name)
            self.read_actuator_attrs(a, child, is_default=False)
            self.spec.actuators.append(a)

    def read_actuator_attrs(self, a, n, is_default):
        """MuJoCo's OneActuator: read the common attributes, then expand the shortcut."""
        tag = n.tag
        table = S.act_table(tag)
        allowed = set(table)
        if not is_default:
            allowed |= {"name", "class"} | set(S.ACT_TARGETS)
            if tag == "adhesion":
                allowed -= {"joint", "jointinparent", "tendon", "slidersite", "cranksite",
                            "site", "refsite"}
            if tag == "muscle":
                allowed -= {"site", "refsite", "body"}
            if tag not in ("general", "adhesion"):
                allowed -= {"body"}
        n.check_attrs(allowed)
        common = [k for k in ("group", "ctrllimited", "forcelimited", "actlimited", "ctrlrange",
                              "forcerange", "actrange", "lengthrange", "gear", "cranklength",
                              "armature", "damping", "delay", "nsample", "interp", "ffrange",
                              "velrange", "input", "inheritrange", "user")
                  if n.has(k) and k in table]
        if tag == "general":
            common += [k for k in ("dyntype", "gaintype", "biastype", "actearly", "dynprm",
                                   "gainprm", "biasprm", "actdim") if n.has(k)]
        elif "inheritrange" in common:
            common.remove("inheritrange")      # a shortcut parameter, read below
        overlay(a, n, {k: table[k] for k in common}, skip=set(n.attrib) - set(common))
        if not is_default:
            a.name = n.text("name", "")
            for t in S.ACT_TARGETS:
                if n.has(t):
                    a.set_raw(t, n.text(t))
        a.shortcut = tag
        prm = {k: read_attr(n, k, table[k]) for k in S.ACT_SPECIFIC[tag]
               if tag != "general" and (n.given(k) if table[k][0] in NUMERIC_KINDS
                                        else n.has(k))}
        expand_shortcut(a, tag, prm, n.error)

    # ------------------------------------------------------------------------------------------
    # <sensor>, <keyframe>
    # ------------------------------------------------------------------------------------------
    def read_sensors(self, n):
        n.check_attrs(())
        for child in n.children:
            tag = child.tag
            if tag == "plugin":
                raise self.unsupported(child, "sensor plugins")
            if tag not in S.SENSORS:
                raise child.error(f"unknown element <{tag}> in <sensor>")
            table = S.sensor_table(tag)
            child.check_attrs(table)
            s = Sensor(type=tag)
            s._src = child
            overlay(s, child, table)
            self.spec.sensors.append(s)

    def read_keyframes(self, n):
        n.check_attrs(())
        for child in n.children:
            if child.tag != "key":
                raise child.error(f"unknown element <{child.tag}> in <keyframe>")
            child.check_attrs(S.KEY)
            if child.has("plastic"):
                raise self.unsupported(child, "plastic deformation state in keyframes",
                                       "plastic")
            k = Key()
            k._src = child
            overlay(k, child, S.KEY)
            self.spec.keys.append(k)


def _copy(v):
    return list(v) if isinstance(v, list) else v

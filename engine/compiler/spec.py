"""A model in code: ``engine.Spec``, in the way of ``mujoco.MjSpec``.

    spec = engine.Spec.from_file("arm.xml")        # or Spec.from_string(xml, assets), Spec()
    torso = spec.body("torso")
    torso.add_geom(type=engine.GeomType.BOX, size=[.1, .1, .1], pos=[0, 0, .2])
    spec.joint("shoulder").damping = 2.0
    spec.default("main").geom.rgba = [1, 0, 0, 1]  # for objects added from now on
    spec.attach(gripper_spec, site="wrist", prefix="g_")
    m = spec.compile()                              # -> Model
    text = spec.to_xml()                            # MJCF that MuJoCo loads, same Model

A spec holds typed objects (elements.py): the body tree (``spec.worldbody``), assets, contact
pairs and exclusions, equalities, tendons, actuators, sensors, keyframes, default classes and the
global settings (``spec.compiler``, ``spec.option``). The reader (reader.py, urdf.py) fills it,
the compile step (compile.py) turns it into a Model, the writer (writer.py) into MJCF text.
"""
from __future__ import annotations

import os

from .elements import (EQUALITY_TAGS, Actuator, Body, Camera, CompilerOptions, Equality, Exclude,
                       Frame, Geom, HField, Joint, Key, Light, Material, Mesh, Option, Pair,
                       Sensor, Site, Tendon, Texture, new_object)
from . import schema as S

ASSET_LISTS = {"mesh": "meshes", "texture": "textures", "material": "materials",
               "hfield": "hfields"}
OBJECT_LISTS = {"pair": "pairs", "exclude": "excludes", "equality": "equalities",
                "tendon": "tendons", "actuator": "actuators", "sensor": "sensors", "key": "keys"}
TREE_KINDS = {"body": "bodies", "joint": "joints", "geom": "geoms", "site": "sites",
              "camera": "cameras", "light": "lights", "frame": "frames"}
PROTO_KINDS = {"joint": Joint, "geom": Geom, "site": Site, "camera": Camera, "light": Light,
               "mesh": Mesh, "material": Material, "pair": Pair, "equality": Equality,
               "tendon": Tendon}


class DefaultClass:
    """A default class: the values that objects of each kind start with (``d.geom.rgba``).

    Changing a default affects the objects added afterwards, as in MuJoCo. Actuators have
    one set of defaults per shortcut element (``d.actuator["position"]``, MuJoCo 4).
    """

    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent
        self.children = []
        self._src = None
        if parent is None:
            self.proto = {k: cls() for k, cls in PROTO_KINDS.items()}
            self.actuator = {t: Actuator() for t in S.ACT_SPECIFIC}
            self.texture = Texture()
        else:
            parent.children.append(self)
            self.proto = {k: p.clone() for k, p in parent.proto.items()}
            self.actuator = {t: a.clone() for t, a in parent.actuator.items()}
            self.texture = parent.texture.clone()
        for p in list(self.proto.values()) + list(self.actuator.values()):
            object.__setattr__(p, "classname", name)
            p._src = None

    def __getattr__(self, kind):
        proto = self.__dict__.get("proto")
        if proto is not None and kind in proto:
            return proto[kind]
        raise AttributeError(kind)

    def __repr__(self):
        return f"<DefaultClass {self.name!r}>"


class Spec:
    """An editable model (see the module docstring)."""

    def __init__(self):
        self.modelname = "MuJoCo Model"
        self.compiler = CompilerOptions()
        self.option = Option()
        self.size = {}
        self.visual = {}
        self.statistic = {}
        self.custom = []              # (tag, attributes) of <custom> data, kept for to_xml
        self.defaults = {"main": DefaultClass("main")}
        self.worldbody = Body(name="world")
        object.__setattr__(self.worldbody, "_spec_owner", self)
        self.meshes, self.textures, self.materials, self.hfields = [], [], [], []
        self.pairs, self.excludes, self.equalities = [], [], []
        self.tendons, self.actuators, self.sensors, self.keys = [], [], [], []
        self.read_warnings = []       # what the reader skipped, reported by every compile
        self.modelfiledir = None      # directory of relative file names (meshes, textures)
        self.assets = {}              # {file name: bytes} given with the XML text
        self.file = None
        self._src = None

    # ---- reading, compiling, writing -----------------------------------------------------------
    @classmethod
    def from_file(cls, path):
        """Spec of an MJCF (.xml) or URDF (.urdf) file."""
        path = os.fspath(path)
        if os.path.splitext(path)[1].lower() == ".urdf":
            from .urdf import read_urdf
            return read_urdf(path)
        from .reader import read_file
        return read_file(path)

    @classmethod
    def from_string(cls, xml, assets=None):
        """Spec of MJCF text; `assets` maps file names to bytes (meshes, included files)."""
        from .reader import read_string
        return read_string(xml, assets)

    def compile(self):
        """The Model of this spec (with set_const's derived quantities, as engine.load_model)."""
        from .compile import compile_spec
        from ..setconst import set_const
        return set_const(compile_spec(self.copy()))

    def to_xml(self, path=None):
        """MJCF text of this spec. File names of meshes, textures and height fields are written
        relative to the directory of `path` when given (absolute otherwise, when known)."""
        from .writer import write_xml
        return write_xml(self, path)

    def save_xml(self, path):
        """Write ``to_xml(path)`` to `path`."""
        text = self.to_xml(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def copy(self):
        """An independent copy (the spec objects are copied; source locations are shared)."""
        from .attach import copy_spec
        return copy_spec(self)

    def attach(self, child, site=None, body=None, frame=None, prefix="", suffix=""):
        """Attach a copy of `child` (a Spec) at a site or body of this spec, names renamed with
        `prefix` and `suffix`; returns the frame that holds the attached bodies."""
        from .attach import attach
        return attach(self, child, site=site, body=body, frame=frame, prefix=prefix,
                      suffix=suffix)

    # ---- navigation -----------------------------------------------------------------------------
    def _tree(self, listname):
        out = []
        stack = [self.worldbody]
        while stack:
            b = stack.pop()
            if listname == "bodies":
                out.append(b)
            else:
                out.extend(getattr(b, listname))
            stack.extend(reversed(b.bodies))
        return out

    @property
    def bodies(self):
        """Every body, world first, in depth-first order (the order of body ids)."""
        return self._tree("bodies")

    @property
    def joints(self):
        return self._tree("joints")

    @property
    def geoms(self):
        return self._tree("geoms")

    @property
    def sites(self):
        return self._tree("sites")

    @property
    def cameras(self):
        return self._tree("cameras")

    @property
    def lights(self):
        return self._tree("lights")

    @property
    def frames(self):
        return self._tree("frames")

    def _find(self, items, name, kind):
        for obj in items:
            if obj.name == name:
                return obj
        raise KeyError(f"no {kind} named '{name}'")

    def find(self, kind, name):
        """The object of `kind` ("body", "geom", "actuator", "mesh" ...) named `name`."""
        if kind in TREE_KINDS:
            items = self._tree(TREE_KINDS[kind])
        elif kind in ASSET_LISTS:
            items = getattr(self, ASSET_LISTS[kind])
        elif kind in OBJECT_LISTS:
            items = getattr(self, OBJECT_LISTS[kind])
        else:
            raise ValueError(f"unknown kind '{kind}'")
        return self._find(items, name, kind)

    def body(self, name):
        return self.worldbody if name == "world" else self.find("body", name)

    def joint(self, name):
        return self.find("joint", name)

    def geom(self, name):
        return self.find("geom", name)

    def site(self, name):
        return self.find("site", name)

    def camera(self, name):
        return self.find("camera", name)

    def light(self, name):
        return self.find("light", name)

    def frame(self, name):
        return self.find("frame", name)

    def mesh(self, name):
        return self.find("mesh", name)

    def material(self, name):
        return self.find("material", name)

    def texture(self, name):
        return self.find("texture", name)

    def hfield(self, name):
        return self.find("hfield", name)

    def tendon(self, name):
        return self.find("tendon", name)

    def actuator(self, name):
        return self.find("actuator", name)

    def sensor(self, name):
        return self.find("sensor", name)

    def equality(self, name):
        return self.find("equality", name)

    def pair(self, name):
        return self.find("pair", name)

    def exclude(self, name):
        return self.find("exclude", name)

    def key(self, name):
        return self.find("key", name)

    def default(self, name="main"):
        return self.defaults[name]

    # ---- editing --------------------------------------------------------------------------------
    def add_default(self, name, parent="main"):
        """A new default class, child of `parent` (a name or a DefaultClass)."""
        if name in self.defaults:
            raise ValueError(f"default class '{name}' exists")
        if isinstance(parent, str):
            parent = self.defaults[parent]
        d = DefaultClass(name, parent)
        self.defaults[name] = d
        return d

    def _default(self, default):
        """The DefaultClass `default` (a name or a class; None: main)."""
        return default if isinstance(default, DefaultClass) else \
            self.defaults[default or "main"]

    def add_mesh(self, default=None, **kw):
        return self._add_to("meshes", new_object(self._default(default).proto["mesh"], kw))

    def add_material(self, default=None, **kw):
        return self._add_to("materials",
                            new_object(self._default(default).proto["material"], kw))

    def add_texture(self, default=None, **kw):
        return self._add_to("textures", new_object(self._default(default).texture, kw))

    def add_hfield(self, **kw):
        return self._add_to("hfields", new_object(HField(), kw))

    def add_pair(self, default=None, **kw):
        return self._add_to("pairs", new_object(self._default(default).proto["pair"], kw))

    def add_exclude(self, **kw):
        return self._add_to("excludes", new_object(Exclude(), kw))

    def add_equality(self, type="connect", default=None, **kw):
        """An equality constraint: type connect, weld, joint or tendon (or an EqType)."""
        e = new_object(self._default(default).proto["equality"], kw)
        e.type = EQUALITY_TAGS[type] if isinstance(type, str) else type
        return self._add_to("equalities", e)

    def add_tendon(self, kind="spatial", default=None, **kw):
        """A tendon (kind spatial or fixed); add its path with add_site / add_joint ..."""
        t = new_object(self._default(default).proto["tendon"], kw)
        t.kind = kind
        return self._add_to("tendons", t)

    def add_actuator(self, shortcut="general", default=None, **kw):
        """An actuator from the defaults of element `shortcut`; shortcut parameters (kp, kv,
        dampratio, timeconst, inheritrange, area, diameter, bias, gain, the muscle's range,
        force, scale, lmin ...) are expanded as the MJCF element would."""
        from .shortcuts import expand_shortcut
        own = {k: kw.pop(k) for k in list(kw) if k in S.ACT_SPECIFIC.get(shortcut, {})
               and k not in Actuator.defaults()}
        if shortcut != "general" and "inheritrange" in kw:
            own["inheritrange"] = kw.pop("inheritrange")
        a = new_object(self._default(default).actuator[shortcut], kw)
        expand_shortcut(a, shortcut, own, a.error)
        return self._add_to("actuators", a)

    def add_sensor(self, type, **kw):
        """A sensor of MJCF element `type` (jointpos, framepos, touch ...)."""
        s = new_object(Sensor(), kw)
        s.type = type
        return self._add_to("sensors", s)

    def add_key(self, **kw):
        return self._add_to("keys", new_object(Key(), kw))

    def _add_to(self, listname, obj):
        getattr(self, listname).append(obj)
        return obj

    def delete(self, obj):
        """Remove `obj` (a body goes with its subtree). References to it by name elsewhere
        become compile errors, as in MuJoCo."""
        if isinstance(obj, DefaultClass):
            if obj.name == "main":
                raise ValueError("the main default class cannot be deleted")
            for c in list(obj.children):
                self.delete(c)
            obj.parent.children.remove(obj)
            del self.defaults[obj.name]
            return
        parent = getattr(obj, "parent", None)
        if isinstance(obj, (Body, Joint, Geom, Site, Camera, Light, Frame)):
            if parent is None:
                raise ValueError("the world body cannot be deleted")
            lst = getattr(parent, TREE_KINDS[obj.tag])
            lst.remove(obj)
            if isinstance(obj, Frame):      # its objects move to the enclosing frame
                for kind in TREE_KINDS.values():
                    for o in getattr(parent, kind):
                        if getattr(o, "frame", None) is obj:
                            o.frame = obj.frame
            return
        for listname in list(ASSET_LISTS.values()) + list(OBJECT_LISTS.values()):
            lst = getattr(self, listname)
            if any(o is obj for o in lst):
                lst.remove(obj)
                return
        raise ValueError(f"{obj!r} is not in this spec")

"""The objects of a model spec: one dataclass per MJCF element kind (MuJoCo's mjs* structs).

Field names are MJCF attribute names and defaults are MuJoCo 4.0's (user_init.c). A field that
means "not given" with None (``fromto``, ``mass``, ``epsilon`` ...) is optional in MJCF too.
Limits use MuJoCo's three values (TFAuto: false, true, auto). Each object also remembers
- ``_given``: the attributes set explicitly, by the element, its default class or an assignment
  (solref and solimp only change this engine's softness when given: see compile_objects.soft);
- ``_src``: the XML element it was read from (errors name its file and line), None if made in
  code.
Orientation is ``quat`` or one alternative (axisangle, xyaxes, zaxis, euler); assigning one of
them clears the others, as in MuJoCo's mjsOrientation.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from enum import IntEnum
from typing import ClassVar, Optional

from ..enums import BiasType, CamLight, DynType, EqType, GainType, GeomType, JointType
from ..types import ModelError

ORIENT = ("quat", "axisangle", "xyaxes", "zaxis", "euler")


class TFAuto(IntEnum):
    """false / true / auto attributes (MuJoCo's mjtLimited, mjtAlignFree, inertiafromgeom)."""
    FALSE = 0
    TRUE = 1
    AUTO = 2

SOLREF = (0.02, 1.0)
SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)


def vec(*values):
    """A list field with a default value (each object gets its own list)."""
    return field(default_factory=lambda: list(values))


class Element:
    """Base of every spec object (see the module docstring)."""

    tag: ClassVar[str] = ""

    def __post_init__(self):
        object.__setattr__(self, "_given", set())
        object.__setattr__(self, "_src", None)

    @classmethod
    def field_names(cls):
        """The dataclass fields but `frame` (a reference to the enclosing frame)."""
        names = _FIELDS.get(cls)
        if names is None:
            names = _FIELDS[cls] = tuple(f.name for f in fields(cls) if f.name != "frame")
        return names

    @classmethod
    def defaults(cls):
        """MuJoCo's value of every field."""
        d = _BUILTIN.get(cls)
        if d is None:
            obj = cls()
            d = _BUILTIN[cls] = {f.name: getattr(obj, f.name) for f in fields(cls)}
        return d

    def __setattr__(self, name, value):
        given = self.__dict__.get("_given")
        if given is not None and name in ORIENT and "axisangle" in self.__dict__:
            for other in ORIENT:
                if other != name:
                    object.__setattr__(self, other, [1.0, 0.0, 0.0, 0.0]
                                       if other == "quat" else None)
                    given.discard(other)
        object.__setattr__(self, name, value)
        if given is not None and not name.startswith("_"):
            given.add(name)

    def set_raw(self, name, value):
        """Set a value as the reader does: marked as given, other orientations untouched."""
        object.__setattr__(self, name, value)
        self._given.add(name)

    def unset(self, name):
        """Back to MuJoCo's value, not given."""
        object.__setattr__(self, name, copy.copy(self.defaults()[name]))
        self._given.discard(name)

    def given(self, name):
        """Was `name` set (by the file, a default class or in code), or changed in place?"""
        return name in self._given or getattr(self, name) != self.defaults().get(name)

    def clone(self):
        """A copy with its own lists and nested objects (the enclosing frame is shared)."""
        new = object.__new__(type(self))
        state = dict(self.__dict__)
        for k in self.field_names():
            v = state[k]
            t = type(v)
            if t is list:
                state[k] = [x.clone() if isinstance(x, Element) else
                            (x[:] if type(x) is list else x) for x in v] \
                    if v and not isinstance(v[0], (int, float)) else v[:]
            elif t is dict:
                state[k] = dict(v)
            elif isinstance(v, Element):
                state[k] = v.clone()
        state["_given"] = set(self._given)
        new.__dict__.update(state)
        return new

    def error(self, message, attribute=None):
        """ModelError at this object: its file, line and element, else its kind and name."""
        src = self._src
        if src is None:
            name = getattr(self, "name", "")
            where = f"{self.tag} '{name}'" if name else self.tag
            return ModelError(message, element=where, attribute=attribute)
        return src.error(message, attribute)

    def __repr__(self):
        name = getattr(self, "name", "")
        return f"<{type(self).__name__} {name!r}>" if name else f"<{type(self).__name__}>"

    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other


_BUILTIN = {}
_FIELDS = {}


def new_object(proto, kw):
    """A copy of `proto` (an object of its kind's defaults) with the attributes `kw` set."""
    obj = proto.clone()
    obj._src = None
    for k, v in kw.items():
        if k not in obj.defaults():
            raise TypeError(f"{type(obj).__name__} has no attribute '{k}'")
        setattr(obj, k, v)
    return obj


def spec_dataclass(tag):
    """Decorator: a dataclass spec kind for MJCF element `tag` (identity equality)."""
    def wrap(cls):
        cls = dataclass(eq=False, repr=False)(cls)
        cls.tag = tag
        return cls
    return wrap


# ----------------------------------------------------------------------------------------------
# the kinematic tree
# ----------------------------------------------------------------------------------------------
BODY_CHILDREN = ("bodies", "joints", "geoms", "sites", "cameras", "lights", "frames")


@spec_dataclass("frame")
class Frame(Element):
    name: str = ""
    childclass: Optional[str] = None
    pos: list = vec(0.0, 0.0, 0.0)
    quat: list = vec(1.0, 0.0, 0.0, 0.0)
    axisangle: Optional[list] = None
    xyaxes: Optional[list] = None
    zaxis: Optional[list] = None
    euler: Optional[list] = None
    frame: Optional["Frame"] = None           # the enclosing frame, if any


@spec_dataclass("inertial")
class Inertial(Element):
    pos: list = vec(0.0, 0.0, 0.0)
    quat: list = vec(1.0, 0.0, 0.0, 0.0)
    axisangle: Optional[list] = None
    xyaxes: Optional[list] = None
    zaxis: Optional[list] = None
    euler: Optional[list] = None
    mass: Optional[float] = None
    diaginertia: Optional[list] = None
    fullinertia: Optional[list] = None


@spec_dataclass("body")
class Body(Element):
    name: str = ""
    childclass: Optional[str] = None
    pos: list = vec(0.0, 0.0, 0.0)
    quat: list = vec(1.0, 0.0, 0.0, 0.0)
    axisangle: Optional[list] = None
    xyaxes: Optional[list] = None
    zaxis: Optional[list] = None
    euler: Optional[list] = None
    mocap: bool = False
    gravcomp: float = 0.0
    user: list = vec()
    sleep: Optional[str] = None
    fuse: Optional[str] = None
    simple: Optional[str] = None
    inertial: Optional[Inertial] = None
    frame: Optional[Frame] = None

    def __post_init__(self):
        super().__post_init__()
        self._clear_children()

    def _clear_children(self):
        for kind in BODY_CHILDREN:
            object.__setattr__(self, kind, [])
        object.__setattr__(self, "parent", None)

    def clone(self):
        """A copy of the body alone (no children, no parent)."""
        new = super().clone()
        new._clear_children()
        return new

    def adopt(self, obj):
        """Append a tree object (body, joint, geom, site, camera, light, frame) to this body."""
        getattr(self, TREE_LISTS[type(obj)]).append(obj)
        object.__setattr__(obj, "parent", self)
        return obj

    # new objects in this body, attributes as keywords; `default`: the default class (a name
    # or a DefaultClass) they start from, else the childclass of this body or an ancestor
    def add_body(self, **kw):
        return self.adopt(new_object(Body(), kw))

    def add_frame(self, **kw):
        return self.adopt(new_object(Frame(), kw))

    def add_joint(self, default=None, **kw):
        return self.adopt(new_object(self._proto("joint", default), kw))

    def add_freejoint(self, **kw):
        """A free joint (MJCF <freejoint>: MuJoCo's values, not the default class's)."""
        return self.adopt(new_object(Joint(type=JointType.FREE), kw))

    def add_geom(self, default=None, **kw):
        return self.adopt(new_object(self._proto("geom", default), kw))

    def add_site(self, default=None, **kw):
        return self.adopt(new_object(self._proto("site", default), kw))

    def add_camera(self, default=None, **kw):
        return self.adopt(new_object(self._proto("camera", default), kw))

    def add_light(self, default=None, **kw):
        return self.adopt(new_object(self._proto("light", default), kw))

    def _proto(self, kind, default):
        """The default values of a new `kind` object in this body."""
        if default is not None and not isinstance(default, str):
            return default.proto[kind]
        b, name = self, default
        while b.parent is not None:
            name = name or b.childclass
            b = b.parent
        spec = b.__dict__.get("_spec_owner")
        if spec is None:                      # a body of no spec: MuJoCo's values
            return {"joint": Joint, "geom": Geom, "site": Site, "camera": Camera,
                    "light": Light}[kind]()
        return spec.defaults[name or "main"].proto[kind]


@spec_dataclass("joint")
class Joint(Element):
    name: str = ""
    classname: str = "main"
    type: JointType = JointType.HINGE
    group: int = 0
    pos: list = vec(0.0, 0.0, 0.0)
    axis: list = vec(0.0, 0.0, 1.0)
    springdamper: list = vec(0.0, 0.0)
    limited: TFAuto = TFAuto.AUTO
    actuatorfrclimited: TFAuto = TFAuto.AUTO
    solreflimit: list = vec(*SOLREF)
    solimplimit: list = vec(*SOLIMP)
    solreffriction: list = vec(*SOLREF)
    solimpfriction: list = vec(*SOLIMP)
    stiffness: float = 0.0
    range: list = vec(0.0, 0.0)
    actuatorfrcrange: list = vec(0.0, 0.0)
    actuatorgravcomp: bool = False
    margin: float = 0.0
    ref: float = 0.0
    springref: float = 0.0
    armature: float = 0.0
    damping: float = 0.0
    frictionloss: float = 0.0
    springyield: float = 0.0
    user: list = vec()
    epsilon: Optional[float] = None
    kappa: Optional[float] = None
    rmin: Optional[float] = None
    align: TFAuto = TFAuto.AUTO               # free joints: body frame moved to the inertia
    frame: Optional[Frame] = None


@spec_dataclass("geom")
class Geom(Element):
    name: str = ""
    classname: str = "main"
    type: Optional[GeomType] = GeomType.SPHERE   # None: type="sdf" (not implemented)
    pos: list = vec(0.0, 0.0, 0.0)
    quat: list = vec(1.0, 0.0, 0.0, 0.0)
    axisangle: Optional[list] = None
    xyaxes: Optional[list] = None
    zaxis: Optional[list] = None
    euler: Optional[list] = None
    contype: int = 1
    conaffinity: int = 1
    condim: int = 3
    group: int = 0
    priority: int = 0
    size: list = vec(0.0, 0.0, 0.0)
    material: str = ""
    friction: list = vec(1.0, 0.005, 0.0001)
    mass: Optional[float] = None
    density: float = 1000.0
    shellinertia: bool = False
    solmix: float = 1.0
    solref: list = vec(*SOLREF)
    solimp: list = vec(*SOLIMP)
    margin: float = 0.0
    gap: float = 0.0
    fromto: Optional[list] = None
    hfield: str = ""
    mesh: str = ""
    fitscale: float = 1.0
    rgba: list = vec(0.5, 0.5, 0.5, 1.0)
    fluidshape: str = "none"
    fluidcoef: list = vec(0.5, 0.25, 1.5, 1.0, 1.0)
    user: list = vec()
    castshadow: bool = True
    adhesion: float = 0.0
    surfacevel: list = vec(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    epsilon: Optional[float] = None
    kappa: Optional[float] = None
    rmin: Optional[float] = None
    frame: Optional[Frame] = None


@spec_dataclass("site")
class Site(Element):
    name: str = ""
    classname: str = "main"
    type: Optional[GeomType] = GeomType.SPHERE
    group: int = 0
    pos: list = vec(0.0, 0.0, 0.0)
    quat: list = vec(1.0, 0.0, 0.0, 0.0)
    axisangle: Optional[list] = None
    xyaxes: Optional[list] = None
    zaxis: Optional[list] = None
    euler: Optional[list] = None
    material: str = ""
    size: list = vec(0.005, 0.005, 0.005)
    fromto: Optional[list] = None
    rgba: list = vec(0.5, 0.5, 0.5, 1.0)
    user: list = vec()
    mesh: str = ""
    frame: Optional[Frame] = None


@spec_dataclass("camera")
class Camera(Element):
    name: str = ""
    classname: str = "main"
    projection: str = "perspective"
    orthographic: bool = False
    fovy: float = 45.0
    ipd: float = 0.068
    resolution: list = vec(1.0, 1.0)
    pos: list = vec(0.0, 0.0, 0.0)
    quat: list = vec(1.0, 0.0, 0.0, 0.0)
    axisangle: Optional[list] = None
    xyaxes: Optional[list] = None
    zaxis: Optional[list] = None
    euler: Optional[list] = None
    mode: CamLight = CamLight.FIXED
    target: str = ""
    focal: list = vec(0.0, 0.0)
    focalpixel: list = vec(0.0, 0.0)
    principal: list = vec(0.0, 0.0)
    principalpixel: list = vec(0.0, 0.0)
    sensorsize: list = vec(0.0, 0.0)
    user: list = vec()
    output: str = "rgb"
    frame: Optional[Frame] = None


@spec_dataclass("light")
class Light(Element):
    name: str = ""
    classname: str = "main"
    pos: list = vec(0.0, 0.0, 0.0)
    dir: list = vec(0.0, 0.0, -1.0)
    bulbradius: float = 0.02
    intensity: float = 0.0
    range: float = 10.0
    directional: bool = False
    type: str = "spot"
    castshadow: bool = True
    active: bool = True
    attenuation: list = vec(1.0, 0.0, 0.0)
    cutoff: float = 45.0
    exponent: float = 10.0
    ambient: list = vec(0.0, 0.0, 0.0)
    diffuse: list = vec(0.7, 0.7, 0.7)
    specular: list = vec(0.3, 0.3, 0.3)
    mode: CamLight = CamLight.FIXED
    target: str = ""
    texture: str = ""
    softness: float = 0.2
    frame: Optional[Frame] = None


TREE_LISTS = {Body: "bodies", Joint: "joints", Geom: "geoms", Site: "sites", Camera: "cameras",
              Light: "lights", Frame: "frames"}


# ----------------------------------------------------------------------------------------------
# assets
# ----------------------------------------------------------------------------------------------
@spec_dataclass("mesh")
class Mesh(Element):
    name: str = ""
    classname: str = "main"
    content_type: Optional[str] = None
    file: Optional[str] = None
    vertex: Optional[list] = None
    normal: Optional[list] = None
    texcoord: Optional[list] = None
    face: Optional[list] = None
    refpos: Optional[list] = None
    refquat: Optional[list] = None
    scale: list = vec(1.0, 1.0, 1.0)
    smoothnormal: bool = False
    maxhullvert: int = -1
    inertia: str = "legacy"
    material: str = ""


@spec_dataclass("hfield")
class HField(Element):
    name: str = ""
    content_type: Optional[str] = None
    file: Optional[str] = None
    nrow: int = 0
    ncol: int = 0
    size: Optional[list] = None
    elevation: Optional[list] = None


@spec_dataclass("texture")
class Texture(Element):
    name: str = ""
    classname: str = "main"
    type: str = "cube"
    colorspace: str = "auto"
    content_type: Optional[str] = None
    file: Optional[str] = None
    gridsize: list = vec(1, 1)
    gridlayout: str = "............"
    fileright: Optional[str] = None
    fileleft: Optional[str] = None
    fileup: Optional[str] = None
    filedown: Optional[str] = None
    filefront: Optional[str] = None
    fileback: Optional[str] = None
    builtin: str = "none"
    rgb1: list = vec(0.8, 0.8, 0.8)
    rgb2: list = vec(0.5, 0.5, 0.5)
    mark: str = "none"
    markrgb: list = vec(0.0, 0.0, 0.0)
    random: float = 0.01
    width: int = 0
    height: int = 0
    hflip: bool = False
    vflip: bool = False
    nchannel: int = 3
    embed: Optional[str] = None


@spec_dataclass("material")
class Material(Element):
    name: str = ""
    classname: str = "main"
    texture: str = ""
    emission: float = 0.0
    specular: float = 0.5
    shininess: float = 0.5
    reflectance: float = 0.0
    metallic: float = -1.0
    roughness: float = -1.0
    rgba: list = vec(1.0, 1.0, 1.0, 1.0)
    texrepeat: list = vec(1.0, 1.0)
    texuniform: bool = False
    layers: list = vec()                      # [(texture, role)] of <layer> children


# ----------------------------------------------------------------------------------------------
# objects outside the tree
# ----------------------------------------------------------------------------------------------
@spec_dataclass("pair")
class Pair(Element):
    name: str = ""
    classname: str = "main"
    geom1: Optional[str] = None
    geom2: Optional[str] = None
    condim: int = 3
    friction: list = vec(1.0, 1.0, 0.005, 0.0001, 0.0001)
    solref: list = vec(*SOLREF)
    solreffriction: list = vec(0.0, 0.0)
    solimp: list = vec(*SOLIMP)
    gap: float = 0.0
    margin: float = 0.0
    adhesion: float = 0.0
    epsilon: Optional[float] = None
    kappa: Optional[float] = None
    rmin: Optional[float] = None


@spec_dataclass("exclude")
class Exclude(Element):
    name: str = ""
    body1: Optional[str] = None
    body2: Optional[str] = None


EQUALITY_TAGS = {"connect": EqType.CONNECT, "weld": EqType.WELD, "joint": EqType.JOINT,
                 "tendon": EqType.TENDON}


@spec_dataclass("equality")
class Equality(Element):
    type: EqType = EqType.CONNECT
    name: str = ""
    classname: str = "main"
    active: bool = True
    hard: bool = False
    solref: list = vec(*SOLREF)
    solimp: list = vec(*SOLIMP)
    body1: Optional[str] = None
    body2: Optional[str] = None
    site1: Optional[str] = None
    site2: Optional[str] = None
    anchor: Optional[list] = None
    relpose: Optional[list] = None
    torquescale: Optional[float] = None
    joint1: Optional[str] = None
    joint2: Optional[str] = None
    tendon1: Optional[str] = None
    tendon2: Optional[str] = None
    polycoef: Optional[list] = None
    epsilon: Optional[float] = None
    kappa: Optional[float] = None
    rmin: Optional[float] = None

    @property
    def xml_tag(self):
        return self.type.name.lower()


@spec_dataclass("wrap")
class Wrap(Element):
    """One element of a tendon's path: joint (with coef), site, geom (with sidesite), pulley."""
    kind: str = "site"
    target: str = ""                          # joint, site or geom name; "" for a pulley
    coef: float = 1.0                         # joint coefficient (fixed tendons)
    divisor: float = 1.0                      # pulley divisor
    sidesite: Optional[str] = None            # geom wrapping side site


@spec_dataclass("tendon")
class Tendon(Element):
    kind: str = "spatial"                     # spatial or fixed
    name: str = ""
    classname: str = "main"
    group: int = 0
    limited: TFAuto = TFAuto.AUTO
    actuatorfrclimited: TFAuto = TFAuto.AUTO
    range: list = vec(0.0, 0.0)
    actuatorfrcrange: list = vec(0.0, 0.0)
    solreflimit: list = vec(*SOLREF)
    solimplimit: list = vec(*SOLIMP)
    solreffriction: list = vec(*SOLREF)
    solimpfriction: list = vec(*SOLIMP)
    frictionloss: float = 0.0
    springlength: Optional[list] = None
    width: float = 0.003
    material: str = ""
    margin: float = 0.0
    stiffness: float = 0.0
    damping: float = 0.0
    armature: float = 0.0
    rgba: list = vec(0.5, 0.5, 0.5, 1.0)
    user: list = vec()
    springyield: float = 0.0
    epsilon: Optional[float] = None
    kappa: Optional[float] = None
    rmin: Optional[float] = None
    path: list = vec()                        # [Wrap]

    @property
    def xml_tag(self):
        return self.kind

    def add_joint(self, joint, coef):
        return self._wrap("joint", joint, coef=coef)

    def add_site(self, site):
        return self._wrap("site", site)

    def add_geom(self, geom, sidesite=None):
        return self._wrap("geom", geom, sidesite=sidesite)

    def add_pulley(self, divisor):
        return self._wrap("pulley", "", divisor=divisor)

    def _wrap(self, kind, target, **kw):
        w = Wrap(kind=kind, target=target, **kw)
        self.path.append(w)
        return w


ACTUATOR_TARGETS = ("joint", "jointinparent", "tendon", "cranksite", "site", "body")


@spec_dataclass("actuator")
class Actuator(Element):
    """An actuator in MuJoCo's general form (shortcut elements are expanded when read)."""
    name: str = ""
    classname: str = "main"
    joint: Optional[str] = None
    jointinparent: Optional[str] = None
    tendon: Optional[str] = None
    cranksite: Optional[str] = None
    site: Optional[str] = None
    body: Optional[str] = None
    slidersite: Optional[str] = None
    refsite: Optional[str] = None
    group: int = 0
    ctrllimited: TFAuto = TFAuto.AUTO
    forcelimited: TFAuto = TFAuto.AUTO
    actlimited: TFAuto = TFAuto.AUTO
    ctrlrange: list = vec(0.0, 0.0)
    forcerange: list = vec(0.0, 0.0)
    actrange: list = vec(0.0, 0.0)
    lengthrange: list = vec(0.0, 0.0)
    gear: list = vec(1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    cranklength: float = 0.0
    user: list = vec()
    actdim: int = -1
    dyntype: DynType = DynType.NONE
    gaintype: GainType = GainType.FIXED
    biastype: BiasType = BiasType.NONE
    dynprm: list = vec(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    gainprm: list = vec(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    biasprm: list = vec(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    actearly: bool = False
    inheritrange: float = 0.0
    armature: float = 0.0
    damping: list = vec(0.0, 0.0, 0.0)
    delay: float = 0.0
    nsample: int = 0
    interp: str = "zoh"
    ffrange: list = vec(0.0, 0.0)
    velrange: list = vec(0.0, 0.0)
    input: Optional[str] = None
    shortcut: str = "general"                 # the element it was written as

    def target(self):
        """(transmission attribute, target name) of the first target given, or (None, None)."""
        for t in ACTUATOR_TARGETS:
            if getattr(self, t) is not None:
                return t, getattr(self, t)
        return None, None


@spec_dataclass("sensor")
class Sensor(Element):
    """A sensor: ``type`` is its MJCF element (jointpos, framepos, touch ...)."""
    type: str = "user"
    name: str = ""
    site: Optional[str] = None
    joint: Optional[str] = None
    tendon: Optional[str] = None
    actuator: Optional[str] = None
    body: Optional[str] = None
    geom: Optional[str] = None
    camera: Optional[str] = None
    mesh: Optional[str] = None
    objtype: Optional[str] = None
    objname: Optional[str] = None
    reftype: Optional[str] = None
    refname: Optional[str] = None
    geom1: Optional[str] = None
    geom2: Optional[str] = None
    body1: Optional[str] = None
    body2: Optional[str] = None
    subtree1: Optional[str] = None
    subtree2: Optional[str] = None
    data: Optional[str] = None
    num: int = 1
    reduce: Optional[str] = None
    datatype: Optional[str] = None
    needstage: Optional[str] = None
    dim: Optional[int] = None
    enclosed: Optional[str] = None
    noise: float = 0.0
    cutoff: float = 0.0
    user: list = vec()
    # a history buffer (nsample) used with a delay or a sampling interval is not implemented
    delay: float = 0.0
    interp: Optional[str] = None
    interval: Optional[list] = None
    nsample: int = 0

    @property
    def xml_tag(self):
        return self.type


@spec_dataclass("key")
class Key(Element):
    name: str = ""
    time: float = 0.0
    qpos: Optional[list] = None
    qvel: Optional[list] = None
    act: Optional[list] = None
    ctrl: Optional[list] = None
    mpos: Optional[list] = None
    mquat: Optional[list] = None


# ----------------------------------------------------------------------------------------------
# global settings
# ----------------------------------------------------------------------------------------------
@spec_dataclass("compiler")
class CompilerOptions(Element):
    autolimits: bool = True
    boundmass: float = 0.0
    boundinertia: float = 0.0
    settotalmass: float = -1.0
    balanceinertia: bool = False
    strippath: bool = False
    coordinate: str = "local"
    angle: str = "degree"
    fitaabb: bool = False
    eulerseq: str = "xyz"
    meshdir: str = ""
    texturedir: str = ""
    discardvisual: bool = False
    usethread: bool = True
    fusestatic: bool = False
    inertiafromgeom: TFAuto = TFAuto.AUTO
    inertiagrouprange: list = vec(0, 5)
    saveinertial: bool = False
    assetdir: str = ""
    alignfree: bool = False
    savecanonical: bool = False
    savecompiled: Optional[str] = None
    conflict: Optional[str] = None
    passthrough: bool = False
    lengthrange: Optional[dict] = None        # <lengthrange>: how actuator length ranges
                                              # are computed (setconst.set_length_range)


@spec_dataclass("option")
class Option(Element):
    timestep: float = 0.002
    impratio: float = 1.0
    tolerance: float = 1e-8
    ls_tolerance: float = 0.01
    noslip_tolerance: float = 1e-6
    ccd_tolerance: float = 1e-6
    sleep_tolerance: float = 1e-4
    gravity: list = vec(0.0, 0.0, -9.81)
    wind: list = vec(0.0, 0.0, 0.0)
    magnetic: list = vec(0.0, -0.5, 0.0)
    density: float = 0.0
    viscosity: float = 0.0
    o_margin: float = 0.0
    o_solref: list = vec(*SOLREF)
    o_solimp: list = vec(*SOLIMP)
    o_friction: list = vec(1.0, 1.0, 0.005, 0.0001, 0.0001)
    integrator: str = "Euler"
    cone: str = "elliptic"
    jacobian: str = "auto"
    solver: str = "PGS"
    iterations: int = 100
    ls_iterations: int = 50
    noslip_iterations: int = 0
    ccd_iterations: int = 35
    sdf_iterations: int = 10
    sdf_initpoints: int = 40
    actuatorgroupdisable: list = vec()
    epsilon: float = 0.1
    kappa: float = 0.02
    rmin: float = 1e-8
    impedance: Optional[list] = None   # epsilon at width, width, midpoint, power
    stabilization: int = 0
    flags: dict = field(default_factory=dict)   # <flag> attribute -> "enable" / "disable"

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "attr_src", {})   # attribute -> the <option> that set it

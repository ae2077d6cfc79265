"""Python-side views of Model and Data, as MuJoCo's Python bindings give them.

- Object kinds (``ObjType``, MuJoCo's mjtObj) and names: ``name2id``, ``id2name``.
- Named access: ``m.body("torso").mass``, ``d.joint("hip").qpos``: an ``ObjectView`` whose
  attributes are numpy views of one object's part of the arrays (reads and writes go to the
  Model or Data). The attribute names follow MuJoCo's bindings (python/mujoco/indexer_xmacro.h):
  a Model view strips the kind's prefix (``body_mass`` -> ``mass``; a joint also has its
  ``qpos0``, ``qpos_spring`` and ``dof_*`` entries), a Data view has MuJoCo's list per kind.
- Contacts: ``d.contact`` is a ``ContactView`` (field arrays of the valid contacts, indexing,
  slicing, iteration); ``d.contact[i]`` is a ``Contact`` record.
- ``unknown_attribute``: the AttributeError for a misspelt field, naming the closest valid one.
Nothing here runs on the simulation's hot path; every view is looked up when read, so it
follows ``Data.grow``, and nothing is copied.
"""
from __future__ import annotations

import difflib
import operator

from .enums import JointType, ObjType


def unknown_attribute(owner: str, name: str, valid, what: str = "field",
                      note: str = "") -> AttributeError:
    """AttributeError for ``owner.name``: names the closest valid name (difflib) if any."""
    msg = f"{owner} has no {what} {name!r}"
    if note:
        msg += f" ({note})"
    close = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.6)
    if close:
        msg += f"; did you mean {close[0]!r}?"
    return AttributeError(msg)


# ------------------------------------------------------------------------------------------------
# object kinds and names
# ------------------------------------------------------------------------------------------------
# ObjType -> key of m.names (kinds with names; the others have none, as in MuJoCo)
_NAMED = {ObjType.BODY: "body", ObjType.XBODY: "body", ObjType.JOINT: "joint",
          ObjType.GEOM: "geom", ObjType.SITE: "site", ObjType.CAMERA: "camera",
          ObjType.LIGHT: "light", ObjType.MESH: "mesh", ObjType.HFIELD: "hfield",
          ObjType.TEXTURE: "texture", ObjType.MATERIAL: "material", ObjType.EQUALITY: "equality",
          ObjType.TENDON: "tendon", ObjType.ACTUATOR: "actuator", ObjType.SENSOR: "sensor",
          ObjType.KEY: "key"}
# the string kinds of the earlier API and the short names of MuJoCo's bindings
_ALIASES = {"jnt": "joint", "cam": "camera", "eq": "equality", "ten": "tendon",
            "keyframe": "key", "mat": "material", "tex": "texture", "xbody": "body"}


def _names_key(objtype) -> str | None:
    """The m.names key of an ObjType (or int, or kind name); None for kinds without names."""
    if isinstance(objtype, str):
        kind = _ALIASES.get(objtype.lower(), objtype.lower())
        if kind not in _NAMED.values():
            try:
                return _NAMED.get(ObjType[objtype.upper()])
            except KeyError:
                raise ValueError(f"unknown object kind {objtype!r}; one of "
                                 f"{sorted(set(_NAMED.values()))} or an engine.ObjType") from None
        return kind
    try:
        return _NAMED.get(ObjType(operator.index(objtype)))
    except (TypeError, ValueError):
        raise ValueError(f"unknown object type {objtype!r}: use engine.ObjType") from None


def name2id(m, objtype, name: str) -> int:
    """Id of the object of the given type named name, -1 if there is none (MuJoCo's
    mj_name2id). objtype: an ``ObjType`` (or its int value), or a kind name ("body", "joint",
    "geom", ...)."""
    kind = _names_key(objtype)
    if kind is None:
        return -1
    return m._name_index[kind].get(name, -1)


def id2name(m, objtype, i: int) -> str | None:
    """Name of object i of the given type, None if it has none or i is out of range (MuJoCo's
    mj_id2name)."""
    kind = _names_key(objtype)
    names = m.names.get(kind, []) if kind is not None else []
    i = operator.index(i)
    return (names[i] or None) if 0 <= i < len(names) else None


# ------------------------------------------------------------------------------------------------
# named access
# ------------------------------------------------------------------------------------------------
class Kind:
    """One object kind of the named access: its names, size, Model prefix and Data fields."""

    def __init__(self, name, size, prefix, data_fields=()):
        self.name, self.size, self.prefix = name, size, prefix
        # Data fields: (attribute, array, slicing), slicing one of "row", "qpos", "dof",
        # "act", "sensor" (see _part)
        self.data_fields = tuple(data_fields)


def _rows(*names, prefix=""):
    return [(n, prefix + n, "row") for n in names]


_DOF = ("qvel qacc_warmstart qfrc_applied qacc cdof qLDiagInv cdof_dot qfrc_bias qfrc_spring "
        "qfrc_damper qfrc_fluid qfrc_passive qfrc_actuator qfrc_smooth qacc_smooth "
        "qfrc_constraint qfrc_inverse").split()

KINDS = {k.name: k for k in (
    Kind("body", "nbody", "body_", _rows(
        *"xfrc_applied xpos xquat xmat xipos xiquat ximat subtree_com cinert crb cvel "
         "subtree_linvel subtree_angmom cacc cfrc_int cfrc_ext".split())),
    Kind("joint", "njnt", "jnt_", [("qpos", "qpos", "qpos")] + [(n, n, "dof") for n in _DOF]
         + _rows("xanchor", "xaxis")),
    Kind("geom", "ngeom", "geom_", _rows("xpos", "xmat", prefix="geom_")),
    Kind("site", "nsite", "site_", _rows("xpos", "xmat", prefix="site_")),
    Kind("camera", "ncam", "cam_", _rows("xpos", "xmat", prefix="cam_")),
    Kind("light", "nlight", "light_", _rows("xpos", "xdir", prefix="light_")),
    Kind("mesh", "nmesh", "mesh_"),
    Kind("hfield", "nhfield", "hfield_"),
    Kind("tendon", "ntendon", "tendon_",
         _rows("wrapadr", "wrapnum", "length", "velocity", "J", prefix="ten_")),
    Kind("actuator", "nu", "actuator_", [("ctrl", "ctrl", "row"), ("act", "act", "act")]
         + _rows("length", "moment", "velocity", "force", prefix="actuator_")),
    Kind("sensor", "nsensor", "sensor_", [("data", "sensordata", "sensor")]),
    Kind("equality", "neq", "eq_"),
    Kind("key", "nkey", "key_"),
)}

# per-dof Model fields shown in a joint's view (as MuJoCo's), and its qpos-sized ones
_JOINT_MODEL_DOF = "dof_"
_JOINT_MODEL_QPOS = ("qpos0", "qpos_spring")


def _model_fields(kind: Kind, spec) -> dict:
    """attribute -> (array, slicing) of a Model view: the fields named prefix + attribute whose
    first dimension is the kind's size (and a joint's qpos- and dof-sized fields)."""
    out = {}
    for name, _, shape in spec:
        if name.startswith(kind.prefix) and shape and shape[0] == kind.size:
            out[name[len(kind.prefix):]] = (name, "row")
        elif kind.name == "joint" and name.startswith(_JOINT_MODEL_DOF) and shape[:1] == ("nv",):
            out[name[len(_JOINT_MODEL_DOF):]] = (name, "dof")
        elif kind.name == "joint" and name in _JOINT_MODEL_QPOS:
            out[name] = (name, "qpos")
    return out


_FIELDS = {}      # (owner class name, kind) -> {attribute: (array, slicing)}


def _fields(owner, kind: Kind) -> dict:
    key = (type(owner).__name__, kind.name)
    if key not in _FIELDS:
        from .types import MODEL_SPEC
        if key[0] == "Model":
            _FIELDS[key] = _model_fields(kind, MODEL_SPEC)
        else:
            _FIELDS[key] = {a: (arr, how) for a, arr, how in kind.data_fields}
    return _FIELDS[key]


def _model_of(owner):
    return owner if type(owner).__name__ == "Model" else owner.model


def _part(owner, array: str, how: str, i: int):
    """The part of owner's array that belongs to object i (a numpy view)."""
    a = owner._arrays[array]
    if how == "row":
        return a[i:i + 1] if a.ndim == 1 else a[i]     # a scalar field as shape (1,), as MuJoCo
    m = _model_of(owner)._arrays
    if how in ("qpos", "dof"):
        t = JointType(int(m["jnt_type"][i]))
        if how == "qpos":
            adr, num = int(m["jnt_qposadr"][i]), t.qpos_width()
        else:
            adr, num = int(m["jnt_dofadr"][i]), t.dof_width()
    elif how == "act":
        adr, num = max(int(m["actuator_actadr"][i]), 0), int(m["actuator_actnum"][i])
    else:   # "sensor"
        adr, num = int(m["sensor_adr"][i]), int(m["sensor_dim"][i])
    return a[adr:adr + num]


def _needs(how):
    return {"qpos": ("jnt_type", "jnt_qposadr"), "dof": ("jnt_type", "jnt_dofadr"),
            "act": ("actuator_actadr", "actuator_actnum"),
            "sensor": ("sensor_adr", "sensor_dim")}.get(how, ())


def _exists(owner, spec) -> bool:
    """Has this engine the array of a view field, and the Model arrays that locate it?"""
    array, how = spec
    m = _model_of(owner)
    return array in owner._arrays and all(n in m._arrays for n in _needs(how))


class ObjectView:
    """One named object of a Model or Data (``m.geom("g")``, ``d.body("torso")``): ``id``,
    ``name``, and its part of every array of its kind as attributes (numpy views: writes go
    to the Model or Data; assigning an attribute copies into it)."""

    __slots__ = ("_owner", "_kind", "id", "name")

    def __init__(self, owner, kind: Kind, i: int, name: str):
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "id", i)
        object.__setattr__(self, "name", name)

    def _available(self) -> list:
        """The attributes of the fields this engine has."""
        owner = self._owner
        return [a for a, spec in _fields(owner, self._kind).items() if _exists(owner, spec)]

    def __getattr__(self, attr):
        owner, kind = self._owner, self._kind
        fields = _fields(owner, kind)
        if attr.startswith("_") and kind.name == "tendon" and attr[1:] in fields:
            attr = attr[1:]          # MuJoCo's spelling of the tendon fields: m.tendon(t)._range
        spec = fields.get(attr)
        if spec is None or not _exists(owner, spec):
            owner_name = f"{type(owner).__name__}.{kind.name}({self.name or self.id!r})"
            note = "MuJoCo's, not computed by this engine" if spec is not None else ""
            raise unknown_attribute(owner_name, attr, self._available(), note=note)
        return _part(owner, spec[0], spec[1], self.id)

    def __setattr__(self, attr, value):
        if attr in ("id", "name"):
            raise AttributeError(f"{attr} of a {self._kind.name} view is read-only")
        part = getattr(self, attr)
        if type(self._owner).__name__ == "Model" and part.dtype.kind == "f":
            from .types import check_parameter
            check_parameter(f"Model.{self._kind.name}({self.name or self.id!r}).{attr}", value)
        part[...] = value           # a structural Model field refuses (types.GuardedArray)

    def __dir__(self):
        return ["id", "name", *self._available()]

    def __repr__(self):
        owner = type(self._owner).__name__
        lines = [f"<{owner} {self._kind.name} {self.id} {self.name!r}"]
        lines += [f"  {a}: {getattr(self, a)!r}" for a in sorted(self._available())]
        return "\n".join(lines) + "\n>"


def _view(owner, kind_name: str, key) -> ObjectView:
    kind = KINDS[kind_name]
    m = _model_of(owner)
    names = m.names.get(kind_name, [])
    n = getattr(m, kind.size, len(names))
    if isinstance(key, str):
        i = m._name_index[kind_name].get(key)
        if i is None:
            valid = sorted(x for x in names if x)
            close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            shown = valid if len(valid) <= 30 else valid[:30] + ["..."]
            raise KeyError(f"Invalid name {key!r}: the model has no {kind_name} of that name; "
                           f"{hint}Valid names: {shown}")
        return ObjectView(owner, kind, i, key)
    try:
        i = operator.index(key)
    except TypeError:
        raise TypeError(f"{kind_name} key must be a name (str) or an id (int), got "
                        f"{type(key).__name__}") from None
    if not 0 <= i < n:
        raise IndexError(f"Invalid index {i}. Valid {kind_name} indices from 0 to {n - 1}")
    return ObjectView(owner, kind, i, names[i] if i < len(names) else "")


def accessor(kind_name: str):
    """The method ``owner.<kind>(name_or_id)`` returning that object's ObjectView."""
    def view(self, key):
        return _view(self, kind_name, key)
    view.__name__ = kind_name
    view.__doc__ = (f"View of one {kind_name} by name or id: its part of every {kind_name} "
                    f"array (numpy views; writes go through). KeyError for an unknown name.")
    return view


# ------------------------------------------------------------------------------------------------
# contacts
# ------------------------------------------------------------------------------------------------
# fields of MuJoCo's mjContact that this engine's contacts do not have
_MUJOCO_ONLY = ("mu", "H", "solref", "solreffriction", "solimp", "adhesion", "flex", "elem",
                "vert", "surfacevel")


def _contact_fields(d):
    return [n[len("contact_"):] for n in d._arrays if n.startswith("contact_")]


def _contact_array(d, name, owner):
    try:
        return d._arrays["contact_" + name]
    except KeyError:
        note = "MuJoCo's, not in this engine's contacts" if name in _MUJOCO_ONLY else ""
        raise unknown_attribute(owner, name, _contact_fields(d), note=note) from None


class Contact:
    """Contact i of a Data, with MuJoCo's field names: ``dist``, ``pos`` (3,), ``frame`` (9,),
    ``includemargin``, ``friction`` (5,), ``dim``, ``geom`` (2,), ``geom1``, ``geom2``,
    ``exclude``, ``efc_address`` (and the softness ``epsilon``, ``kappa``, ``rmin``,
    ``impedance``, ``dampratio``). Array fields are views and scalars Python numbers;
    assigning a field writes into the Data."""

    __slots__ = ("_d", "_i")

    def __init__(self, d, i):
        object.__setattr__(self, "_d", d)
        object.__setattr__(self, "_i", i)

    def __getattr__(self, name):
        a = _contact_array(self._d, name, "Contact")
        return a[self._i] if a.ndim > 1 else a[self._i].item()

    def __setattr__(self, name, value):
        _contact_array(self._d, name, "Contact")[self._i] = value

    def __dir__(self):
        return _contact_fields(self._d)

    def __repr__(self):
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in _contact_fields(self._d))
        return f"Contact({fields})"


class ContactView:
    """The valid contacts of a Data (``d.contact``), as MuJoCo's contact list: a field gives
    the array over the contacts (``d.contact.dist`` is ``d.contact_dist[:d.ncon]``, a view;
    writes go to the Data), ``d.contact[i]`` a Contact, ``d.contact[a:b]`` a ContactView of
    those contacts, ``for c in d.contact`` the Contacts in order."""

    __slots__ = ("_d", "_range")

    def __init__(self, d, rng: range | None = None):
        object.__setattr__(self, "_d", d)
        object.__setattr__(self, "_range", rng)

    def _rng(self) -> range:
        return self._range if self._range is not None else range(self._d.ncon)

    def __getattr__(self, name):
        a = _contact_array(self._d, name, "d.contact")
        r = self._rng()
        if self._range is None:
            return a[:r.stop]
        stop = r.stop if r.stop >= 0 else None     # a negative step down to index 0
        return a[r.start:stop:r.step]

    def __setattr__(self, name, value):
        getattr(self, name)[...] = value

    def __len__(self):
        return len(self._rng())

    def __getitem__(self, key):
        r = self._rng()
        if isinstance(key, slice):
            return ContactView(self._d, r[key])
        try:
            return Contact(self._d, r[operator.index(key)])
        except IndexError:
            raise IndexError(f"contact index {key} out of range: {len(r)} contacts") from None

    def __iter__(self):
        d = self._d
        return (Contact(d, i) for i in self._rng())

    def __dir__(self):
        return _contact_fields(self._d)

    def __repr__(self):
        return f"<{len(self)} contacts: fields {' '.join(_contact_fields(self._d))}>"

"""MJCF compiler: MuJoCo's XML format -> engine.types.Model.

The file is read the way MuJoCo 4.0 reads it (src/xml/xml_native_reader.cc) and compiled the
way MuJoCo's compiler does it (src/user/user_objects.cc, user_model.cc), so that the arrays
agree field by field with ``mujoco.MjModel.from_xml_path``. Stages:

1. parse (expat, with file and line of every element), splice <include> files;
2. read <compiler>, <option>, <size>, <visual>, <statistic>, the <default> classes, <asset>;
3. build the body tree from <worldbody> (frames, childclass, orientation specifiers), compile
   geoms (fromto, mesh frames, mass and inertia), joints, sites, cameras, lights, then each body
   (inertia from geoms, principal axes, bounds);
4. read <contact>, <equality>, <tendon>, <actuator>, <sensor>, <keyframe>, resolving names;
5. number everything (bodies in depth-first order), fill the arrays and build the Model.

Physics that the engine does not implement raises ModelError naming the feature; purely visual
elements that are not rendered are skipped with a logged warning. Every error names file, line,
element and attribute.
"""
from __future__ import annotations

import logging
import math
import os

import numpy as np

from ..enums import (BiasType, Cone, DisableBit, DynType, EqType, GainType, GeomType, LightType,
                     Integrator, JointType, Solver, TrnType, WrapType)
from ..types import Model, ModelError
from . import inertia as I
from .fluid import ellipsoid_fluid_coefs
from . import sensors as sensor_specs
from . import schema as S
from .xmltree import Node, Source, expand_includes, parse_text

OBJ_BODY, OBJ_SITE = 1, 6  # eq_objtype values (MuJoCo's mjtObj)

log = logging.getLogger("engine.compiler")

PI = math.pi


# ----------------------------------------------------------------------------------------------
# entry points
# ----------------------------------------------------------------------------------------------
def load_mjcf(path):
    """Compile the MJCF file at `path`."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ModelError(f"cannot read model file: {e.strerror}", file=path) from None
    return _compile_guarded(data, path, os.path.dirname(os.path.abspath(path)), None)


def load_mjcf_string(xml_text, assets=None, path=None):
    """Compile MJCF text; `assets` maps file names to bytes (meshes, included files)."""
    model_dir = os.path.dirname(os.path.abspath(path)) if path else None
    return _compile_guarded(xml_text, path or "<string>", model_dir, assets)


def _compile_guarded(data, file, model_dir, assets):
    c = _Compiler(file, model_dir, assets)
    try:
        return c.run(data)
    except ModelError:
        raise
    except RecursionError:
        raise ModelError("model nesting is too deep", file=file) from None
    except Exception as e:  # never let a Python traceback reach the user
        node = c.current
        raise ModelError(f"internal compiler error: {type(e).__name__}: {e}",
                         file=node.file if node else file, line=node.line if node else None,
                         element=node.tag if node else None) from e


# ----------------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------------
class Obj:
    """A compiled element (body, joint, geom ...): plain attribute bag."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _read(node, name, kind):
    """Read attribute `name` of `node` according to a schema kind tuple."""
    k = kind[0]
    if k == "f":
        n = kind[1]
        return node.float(name) if n == 1 else node.floats(name, n)
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


def _overlay(base, node, table, skip=(), builtin=None):
    """Spec dict `base` with the attributes of `node` (read by `table`) on top."""
    spec = dict(base)
    if any(a in node.attrib for a in S.ORIENT if a in table):
        for a in S.ORIENT:
            spec.pop(a, None)
    for a in node.attrib:
        if a in skip:
            continue
        kind = table.get(a)
        if kind is None:
            raise node.error(f"unknown attribute '{a}' in <{node.tag}>", a)
        v = _read(node, a, kind)
        if kind[0] == "p":
            old = spec.get(a)
            if old is None and builtin is not None:
                old = builtin.get(a)
            if old is not None:
                v = list(v) + list(old[len(v):])
        spec[a] = v
    return spec


class _Spec:
    """Element spec: own/class values first, builtin defaults after."""

    __slots__ = ("d", "builtin", "node")

    def __init__(self, d, builtin, node):
        self.d, self.builtin, self.node = d, builtin, node

    def __getitem__(self, k):
        if k in self.d:
            return self.d[k]
        return self.builtin.get(k)

    def given(self, k):
        return k in self.d


class DefClass:
    def __init__(self, name, parent, node):
        self.name = name
        self.node = node
        if parent is None:
            self.spec = {k: {} for k in S.DEFAULT_KINDS}
            self.act = {t: S.actuator_default() for t in S.ACT_SPECIFIC}
            self.texture = {}
        else:
            self.spec = {k: dict(v) for k, v in parent.spec.items()}
            self.act = {t: dict(v) for t, v in parent.act.items()}
            self.texture = dict(parent.texture)


def _orientation(spec, degree, eulerseq, node, default_quat=(1.0, 0.0, 0.0, 0.0)):
    """Quaternion from quat / axisangle / xyaxes / zaxis / euler (MuJoCo's ResolveOrientation)."""
    given = [a for a in S.ORIENT if spec.get(a) is not None]
    if len(given) > 1:
        raise node.error("multiple orientation specifiers: " + ", ".join(given), given[1])
    given = [a for a in given if a != "quat"]
    if not given:
        q = spec.get("quat")
        q = list(q) if q is not None else list(default_quat)
        if I.normvec(q) < I.EPS and spec.get("quat") is not None:
            raise node.error("quaternion is zero", "quat")
        return q
    a = given[0]
    v = list(spec[a])
    if a == "axisangle":
        ang = v[3] / 180.0 * PI if degree else v[3]
        ax = v[:3]
        if I.normvec(ax) < I.EPS:
            raise node.error("axisangle too small", a)
        s = math.sin(ang / 2)
        return [math.cos(ang / 2), s * ax[0], s * ax[1], s * ax[2]]
    if a == "xyaxes":
        x, y = v[:3], v[3:]
        if I.normvec(x) < I.EPS:
            raise node.error("xaxis too small", a)
        d = x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
        y = [y[0] - x[0] * d, y[1] - x[1] * d, y[2] - x[2] * d]
        if I.normvec(y) < I.EPS:
            raise node.error("yaxis too small", a)
        z = I.cross(x, y)
        if I.normvec(z) < I.EPS:
            raise node.error("cross(xaxis, yaxis) too small", a)
        return I.frame2quat(x, y, z)
    if a == "zaxis":
        if I.normvec(v) < I.EPS:
            raise node.error("zaxis too small", a)
        return I.z2quat(v)
    # euler
    if degree:
        v = [e / 180.0 * PI for e in v]
    q = [1.0, 0.0, 0.0, 0.0]
    for i in range(3):
        ch = eulerseq[i]
        qr = [math.cos(v[i] / 2), 0.0, 0.0, 0.0]
        sa = math.sin(v[i] / 2)
        qr["xyz".index(ch.lower()) + 1] = sa
        q = I.mulquat(q, qr) if ch.islower() else I.mulquat(qr, q)
    I.normvec(q)
    return q


def _png_rows(data, path, node):
    """Elevation rows of a PNG height map, top image row first, as MuJoCo reads them: a grey
    image as is, a colour image by its red channel (MuJoCo 4 converts to grey that way), a
    16-bit image by its high byte (MuJoCo decodes to 8 bits)."""
    import io

    from PIL import Image, UnidentifiedImageError
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except (UnidentifiedImageError, OSError, ValueError) as e:
        raise node.error(f"cannot read hfield file '{path}' as a PNG image: {e}", "file") from None
    if img.format != "PNG":
        raise node.error(f"hfield file '{path}' is not a PNG image ({img.format})", "file")
    if img.mode == "P":
        img = img.convert("RGBA")
    a = np.asarray(img)
    if a.ndim == 3:
        a = a[:, :, 0]
    a = a.astype(np.float64)
    if img.mode.startswith("I"):
        a = np.floor(a / 256.0)
    if a.shape[0] < 2 or a.shape[1] < 2:
        raise node.error(f"hfield image '{path}' must be at least 2 x 2 pixels", "file")
    return a


def _soft(spec, own_eps, own_kappa, ref_key, imp_key, warn, what):
    """(epsilon, kappa, rmin) overrides: our own attributes, else (epsilon, kappa) mapped from
    solref / solimp; -1 = the global option. Our own values must be admissible (epsilon >= 0,
    kappa > 0, rmin > 0).

    Both engines' reference acceleration has the same form once R = eps A, i.e. 1 + eps = 1/d:
    MuJoCo's a_ref = -B v - K d x with B = 2 / (d timeconst), K = 1 / (d timeconst dampratio)^2
    (standard solref) or B = b / d, K = k / d^2 (direct solref = (-k, -b)), ours
    -(1 + eps) (2 v / kappa + x / kappa^2) (eq. 24, 28).
    - standard (timeconst, dampratio): kappa = timeconst (same damping term); our constraints
      are critically damped, so a dampratio other than 1 is reported;
    - direct (-k, -b): kappa = 1 / sqrt(k) (same stiffness, hence the same resting
      penetration); a damping b other than the critical 2 sqrt(k) is reported; with k = 0,
      kappa = 2 / b;
    - solimp (d0, dmax, width, ...): epsilon = (1 - d0) / d0, the impedance at zero violation;
      a position-dependent impedance (d0 != dmax) is reported.
    Only values written in the file (element or default class) are mapped; -1 = global option.
    warn(key, message) records a warning once per key.
    """
    for key, ok, word in ((own_eps, lambda v: v >= 0.0, "non-negative"),
                          (own_kappa, lambda v: v > 0.0, "positive"),
                          ("rmin", lambda v: v > 0.0, "positive")):
        if spec.given(key) and not ok(spec[key]):
            raise spec.node.error(f"{key} must be {word}, got {spec[key]:g}", key)
    eps = spec[own_eps] if spec.given(own_eps) else None
    kap = spec[own_kappa] if spec.given(own_kappa) else None
    if kap is None and ref_key and spec.given(ref_key):
        ref = [float(v) for v in spec[ref_key]]
        tag = (ref_key, tuple(ref))
        if ref[0] > 0 and ref[1] > 0:
            kap = ref[0]
            if abs(ref[1] - 1.0) > 1e-9:
                warn(tag, f"{what}: {ref_key}={ref}: constraints are critically damped in this "
                          f"engine; dampratio {ref[1]:g} is replaced by 1 (kappa = {kap:g})")
        elif ref[0] <= 0 and ref[1] <= 0 and (ref[0] < 0 or ref[1] < 0):
            k, b = -ref[0], -ref[1]
            kap = 1.0 / math.sqrt(k) if k > 0 else 2.0 / b
            if k > 0 and abs(b / (2.0 * math.sqrt(k)) - 1.0) > 0.01:
                warn(tag, f"{what}: {ref_key}={ref} (direct stiffness, damping): mapped to "
                          f"kappa = 1/sqrt(stiffness) = {kap:g}; constraints are critically "
                          f"damped in this engine, so the damping {b:g} becomes "
                          f"{2 * math.sqrt(k):g}")
            elif k == 0:
                warn(tag, f"{what}: {ref_key}={ref} (pure damping): mapped to kappa = 2/damping"
                          f" = {kap:g}, which adds the critical stiffness 1/kappa^2")
        else:
            warn(tag, f"{what}: {ref_key}={ref} mixes the standard and direct formats; the "
                      "global kappa is used")
    if eps is None and imp_key and spec.given(imp_key):
        imp = [float(v) for v in spec[imp_key]]
        d = imp[0]
        if 0 < d <= 1:
            eps = (1 - d) / d
            if abs(imp[1] - d) > 1e-12 and imp[2] > 0:
                warn((imp_key, tuple(imp)),
                     f"{what}: {imp_key}={imp}: the impedance does not depend on the violation "
                     f"in this engine; epsilon = (1 - d0) / d0 = {eps:g} from d0 = {d:g}")
        else:
            warn((imp_key, tuple(imp)), f"{what}: {imp_key}={imp} has no counterpart; the "
                                        "global epsilon is used")
    return ((-1.0 if eps is None else float(eps)), (-1.0 if kap is None else float(kap)),
            (float(spec["rmin"]) if spec.given("rmin") else -1.0))


def _islimited(limited, rng):
    return limited == 1 or (limited == 2 and rng[0] < rng[1])


# ----------------------------------------------------------------------------------------------
# the compiler
# ----------------------------------------------------------------------------------------------
class _Compiler:
    def __init__(self, file, model_dir, assets):
        self.file = file
        self.model_dir = model_dir
        self.source = Source(assets, model_dir)
        self.current = None
        self.warnings = []
        self._warned = set()

    def warn_once(self, key, msg):
        """A warning recorded once per key (a solref/solimp value shared by many elements)."""
        if key not in self._warned:
            self._warned.add(key)
            self.warn(msg + " (reported once for this value)")

    def warn(self, msg, node=None):
        if node is not None:
            msg = f"{node.file}, line {node.line}, element <{node.tag}>: {msg}"
        self.warnings.append(msg)
        log.warning(msg)

    def unsupported(self, node, feature, attribute=None):
        return node.error(f"{feature} is not implemented", attribute)

    def reject_set(self, node, spec, features):
        """ModelError for the first attribute in `features` ({attribute: feature}) that spec
        sets to a value other than MuJoCo's default (physics this engine does not have)."""
        for a, feature in features.items():
            if spec.given(a) and spec[a] != spec.builtin[a]:
                raise self.unsupported(node, feature, a)

    def ignore_visual(self, node, spec, attributes):
        """Accept purely visual attributes that the engine does not use, reported once each."""
        for a in attributes:
            if spec.given(a):
                self.warn_once((node.tag, a), f"<{node.tag}> attribute '{a}' only affects "
                                              "rendering in MuJoCo and is not used here")

    # ------------------------------------------------------------------------------------------
    def run(self, data):
        root = parse_text(data, self.file, self.warn)
        self.current = root
        if root.tag != "mujoco":
            raise root.error("root element must be <mujoco>")
        root.check_attrs(("model",))
        expand_includes(root, self.source, self.model_dir, warn=self.warn)
        self.root = root
        self.model_name = root.text("model", "MuJoCo Model")

        sections = {}
        known = ("compiler", "option", "size", "visual", "statistic", "default", "custom",
                 "extension", "asset", "worldbody", "contact", "equality", "tendon",
                 "actuator", "sensor", "keyframe", "deformable")
        for child in root.children:
            if child.tag not in known:
                raise child.error(f"unknown element <{child.tag}> in <mujoco>")
            sections.setdefault(child.tag, []).append(child)
        self.sections = sections

        self.read_compiler(sections.get("compiler", []))
        self.read_option(sections.get("option", []))
        self.read_size(sections.get("size", []))
        self.read_visual(sections.get("visual", []))
        self.read_statistic(sections.get("statistic", []))
        self.read_defaults(sections.get("default", []))
        self.read_custom(sections.get("custom", []) + sections.get("extension", []))
        for n in sections.get("deformable", []):
            raise self.unsupported(n, "deformable objects (<deformable>)")
        self.read_assets(sections.get("asset", []))
        self.build_tree(sections.get("worldbody", []))
        self.compile_tree()
        self.read_contact(sections.get("contact", []))
        self.read_equality(sections.get("equality", []))
        self.read_tendons(sections.get("tendon", []))
        self.read_actuators(sections.get("actuator", []))
        self.read_sensors(sections.get("sensor", []))
        self.read_keyframes(sections.get("keyframe", []))
        return self.assemble()

    # ------------------------------------------------------------------------------------------
    # <compiler>
    # ------------------------------------------------------------------------------------------
    def read_lengthrange(self, n):
        """<compiler><lengthrange>: how actuator length ranges are computed (MuJoCo's mjLROpt;
        setconst.set_length_range)."""
        n.check_attrs(tuple(self.lropt) + ("mode",))
        if n.has("mode"):
            self.lropt["mode"] = n.keyword("mode", {"none": "none", "muscle": "muscle",
                                                    "muscleuser": "muscleuser", "all": "all"})
        for a in ("useexisting", "uselimit"):
            if n.has(a):
                self.lropt[a] = n.bool(a)
        for a in ("accel", "maxforce", "timeconst", "timestep", "inttotal", "interval",
                  "tolrange"):
            if n.has(a):
                self.lropt[a] = n.float(a)

    def read_compiler(self, nodes):
        self.lropt = {"mode": "muscle", "useexisting": True, "uselimit": False, "accel": 20.0,
                      "maxforce": 0.0, "timeconst": 1.0, "timestep": 0.01, "inttotal": 10.0,
                      "interval": 2.0, "tolrange": 0.05}
        c = {"autolimits": True, "boundmass": 0.0, "boundinertia": 0.0, "settotalmass": -1.0,
             "balanceinertia": False, "strippath": False, "coordinate": "local",
             "angle": "degree", "fitaabb": False, "eulerseq": "xyz", "meshdir": "",
             "texturedir": "", "discardvisual": False, "usethread": True, "fusestatic": False,
             "inertiafromgeom": 2, "inertiagrouprange": [0, 5], "saveinertial": False,
             "assetdir": "", "alignfree": False, "passthrough": False}
        for n in nodes:
            self.current = n
            for child in n.children:
                if child.tag != "lengthrange":
                    raise child.error(f"unknown element <{child.tag}> in <compiler>")
                self.read_lengthrange(child)
            for a in n.attrib:
                kind = S.COMPILER.get(a)
                if kind is None:
                    raise n.error(f"unknown attribute '{a}' in <compiler>", a)
                c[a] = _read(n, a, kind)
            if n.has("eulerseq"):
                seq = c["eulerseq"]
                if len(seq) != 3 or any(ch not in "xyzXYZ" for ch in seq):
                    raise n.error("euler sequence must be 3 characters from x, y, z, X, Y, Z",
                                  "eulerseq")
            if c["coordinate"] == "global":
                raise n.error("coordinate=\"global\" is not supported by MuJoCo 4; use local",
                              "coordinate")
            if c["fusestatic"]:
                raise self.unsupported(n, "fusestatic (merging static bodies)", "fusestatic")
            if c["passthrough"]:
                raise self.unsupported(n, "passthrough (no compiler processing)", "passthrough")
            for a in ("savecanonical", "savecompiled", "conflict"):
                if n.has(a):
                    self.warn(f"compiler option '{a}' has no effect in this engine", n)
        if c["assetdir"]:
            c["meshdir"] = c["meshdir"] or c["assetdir"]
            c["texturedir"] = c["texturedir"] or c["assetdir"]
        self.cc = c
        self.degree = c["angle"] == "degree"
        self.eulerseq = c["eulerseq"]

    # ------------------------------------------------------------------------------------------
    # <option>, <size>, <visual>, <statistic>
    # ------------------------------------------------------------------------------------------
    def read_option(self, nodes):
        o = {"timestep": 0.002, "gravity": [0.0, 0.0, -9.81], "wind": [0.0, 0.0, 0.0],
             "magnetic": [0.0, -0.5, 0.0], "density": 0.0, "viscosity": 0.0, "impratio": 1.0,
             "tolerance": 1e-8, "iterations": 100, "integrator": int(Integrator.SEMIIMPLICIT),
             "noslip_iterations": 0, "noslip_tolerance": 1e-6,
             "solver": int(Solver.PGS), "cone": int(Cone.ELLIPTIC), "epsilon": 0.1,
             "kappa": 0.02, "rmin": 1e-8, "disableflags": 0, "enableflags": 0,
             "stabilization": 0}
        integ = {"Euler": Integrator.SEMIIMPLICIT, "RK4": Integrator.RK4,
                 "explicit": Integrator.EXPLICIT, "midpoint": Integrator.MIDPOINT,
                 "interleave": Integrator.INTERLEAVE, "semiimplicit": Integrator.SEMIIMPLICIT,
                 "implicit": Integrator.IMPLICIT, "implicitfast": Integrator.IMPLICITFAST,
                 "discrete": None}
        for n in nodes:
            self.current = n
            for a in n.attrib:
                if a not in S.OPTION:
                    raise n.error(f"unknown attribute '{a}' in <option>", a)
            for a in ("timestep", "density", "viscosity", "impratio", "tolerance", "epsilon",
                      "kappa", "rmin"):
                if n.has(a):
                    o[a] = n.float(a)
            for a in ("gravity", "wind", "magnetic"):
                if n.has(a):
                    o[a] = n.floats(a, 3)
            if n.has("iterations"):
                o["iterations"] = n.int("iterations")
            if n.has("integrator"):
                v = n.keyword("integrator", integ)
                if v is None:
                    raise self.unsupported(n, "MuJoCo 4's discrete integrator", "integrator")
                o["integrator"] = int(v)
            if n.has("solver"):
                v = n.keyword("solver", {"PGS": "PGS", "Newton": "Newton", "CG": "CG"})
                if v == "CG":
                    self.warn("solver=\"CG\" is not implemented; using Newton", n)
                o["solver"] = int(Solver.PGS if v == "PGS" else Solver.NEWTON)
            if n.has("cone"):
                v = n.keyword("cone", {"pyramidal": Cone.PYRAMIDAL, "elliptic": Cone.ELLIPTIC})
                o["cone"] = int(v)
            if n.has("stabilization"):
                o["stabilization"] = _read(n, "stabilization", S.OPTION["stabilization"])
            for a in ("ls_tolerance", "ccd_tolerance", "sleep_tolerance"):
                n.float(a)
            for a in ("ls_iterations", "ccd_iterations", "sdf_iterations", "sdf_initpoints"):
                n.int(a)
            self.read_noslip(n, o)
            for a in ("o_margin", "o_solref", "o_solimp", "o_friction"):
                if n.has(a):
                    _read(n, a, S.OPTION[a])
                    self.warn(f"option '{a}' has no effect (MuJoCo applies it only with the "
                              "'override' flag)", n)
            if n.has("jacobian"):      # dense or sparse storage: the same numbers
                _read(n, "jacobian", S.OPTION["jacobian"])
            if n.has("actuatorgroupdisable") and \
                    _read(n, "actuatorgroupdisable", S.OPTION["actuatorgroupdisable"]):
                raise self.unsupported(n, "disabling actuator groups (actuatorgroupdisable)",
                                       "actuatorgroupdisable")
            for child in n.children:
                self.current = child
                if child.tag != "flag":
                    raise child.error(f"unknown element <{child.tag}> in <option>")
                self.read_flags(child, o)
        self.opt = o

    def read_noslip(self, n, o):
        """noslip_iterations (>= 0) and noslip_tolerance (>= 0) of <option>."""
        if n.has("noslip_iterations"):
            o["noslip_iterations"] = n.int("noslip_iterations")
            if o["noslip_iterations"] < 0:
                raise n.error("noslip_iterations must be >= 0", "noslip_iterations")
        if n.has("noslip_tolerance"):
            o["noslip_tolerance"] = n.float("noslip_tolerance")
            if not o["noslip_tolerance"] >= 0:
                raise n.error("noslip_tolerance must be >= 0", "noslip_tolerance")

    def read_flags(self, n, o):
        bits = {"constraint": DisableBit.CONSTRAINT, "equality": DisableBit.EQUALITY,
                "frictionloss": DisableBit.FRICTIONLOSS, "limit": DisableBit.LIMIT,
                "contact": DisableBit.CONTACT, "passive": DisableBit.PASSIVE,
                "spring": DisableBit.SPRING, "damper": DisableBit.DAMPER,
                "gravity": DisableBit.GRAVITY, "clampctrl": DisableBit.CLAMPCTRL,
                "warmstart": DisableBit.WARMSTART, "filterparent": DisableBit.FILTERPARENT,
                "actuation": DisableBit.ACTUATION, "eulerdamp": DisableBit.EULERDAMP,
                "sensor": DisableBit.SENSOR}
        # flags without a counterpart: those that change the physics are refused, the others
        # (diagnostics, performance, the choice among collision algorithms) are reported
        physics = {"diagexact": True, "ipc": True, "speculative": True, "override": True,
                   "sleep": True, "refsafe": False, "autoreset": False}
        reported = {"fwdinv": (True, "the forward-inverse comparison is not computed"),
                    "multiccd": (True, "convex collisions here already give up to 4 contacts "
                                       "on flat faces"),
                    "nativeccd": (False, "collisions use this engine's own GJK/EPA")}
        quiet = {"energy": True,        # energy is always computed (engine.energy, d.energy)
                 "invdiscrete": True,   # engine.inverse is the inverse of the discrete step
                 "midphase": False, "island": False}     # performance only
        for a in n.attrib:
            if a not in S.FLAGS:
                raise n.error(f"unknown attribute '{a}' in <flag>", a)
            v = n.keyword(a, {"enable": True, "disable": False})
            if a in bits:
                if not v:
                    o["disableflags"] |= int(bits[a])
            elif a in physics:
                if v == physics[a]:
                    raise self.unsupported(n, f"{a}=\"{n.text(a)}\"", a)
            elif a in reported:
                if v == reported[a][0]:
                    self.warn(f"flag {a}=\"{n.text(a)}\" has no counterpart: "
                              f"{reported[a][1]}", n)
            elif a not in quiet:
                raise AssertionError(a)     # every flag of the schema is classified above

    def read_size(self, nodes):
        self.size = {}
        for n in nodes:
            n.check_attrs(S.SIZE)
            for a in n.attrib:
                if a == "memory":
                    self.size[a] = n.text(a)
                else:
                    self.size[a] = n.int(a)

    def read_visual(self, nodes):
        self.visual = {}
        for n in nodes:
            n.check_attrs(())
            for child in n.children:
                if child.tag not in S.VISUAL:
                    raise child.error(f"unknown element <{child.tag}> in <visual>")
                child.check_attrs(S.VISUAL[child.tag])
                self.visual.setdefault(child.tag, {}).update(child.attrib)

    def read_statistic(self, nodes):
        self.statistic = {}
        for n in nodes:
            n.check_attrs(S.STATISTIC)
            for a in n.attrib:
                self.statistic[a] = n.floats(a, 3) if a == "center" else n.float(a)

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
                self.warn(f"custom <{child.tag}> data is not used by this engine; skipped",
                          child)

    # ------------------------------------------------------------------------------------------
    # <default>
    # ------------------------------------------------------------------------------------------
    def read_defaults(self, nodes):
        self.classes = {}
        main = DefClass("main", None, None)
        self.classes["main"] = main
        for n in nodes:
            self.current = n
            n.check_attrs(("class",))
            name = n.text("class", "main")
            if name != "main":
                # a top-level default with another name is a child of main
                self._default_class(n, main)
            else:
                self._fill_default(n, main)

    def _default_class(self, n, parent):
        n.check_attrs(("class",))
        name = n.text("class")
        if not name:
            raise n.error("nested default class must have a name", "class")
        if name in self.classes:
            raise n.error(f"repeated default class name '{name}'", "class")
        d = DefClass(name, parent, n)
        self.classes[name] = d
        self._fill_default(n, d)

    def _fill_default(self, n, d):
        nested = []
        for child in n.children:
            self.current = child
            tag = child.tag
            if tag == "default":
                nested.append(child)
            elif tag in S.DEFAULT_KINDS:
                table, builtin = S.DEFAULT_KINDS[tag]
                d.spec[tag] = _overlay(d.spec[tag], child, table, builtin=builtin)
            elif tag in S.ACT_SPECIFIC:
                self._default_actuator(d, child)
            elif tag in ("orientation", "pid", "dcmotor"):
                raise self.unsupported(child, f"<{tag}> actuators")
            elif tag == "texture":
                child.check_attrs(S.TEXTURE_DEFAULT)
                d.texture.update(child.attrib)
            else:
                raise child.error(f"unknown element <{tag}> in <default>")
        for child in nested:
            self._default_class(child, d)

    def _default_actuator(self, d, n):
        """An actuator element inside <default>, with MuJoCo 4's per-element defaults.

        Attributes common to all actuators (ranges, limits, gear, group ...) apply to the
        defaults of every actuator element; <general> attributes apply to all of them too; a
        shortcut (<position kp=...> ...) sets the defaults of that shortcut and of <general>.
        """
        tag = n.tag
        spec = d.act[tag]
        before = dict(spec)
        self._apply_actuator(spec, n, is_default=True)
        common = [k for k in S.ACT_COMMON if n.has(k)]
        if tag == "general":
            changed = [k for k in spec if spec[k] != before[k]]
            for t, other in d.act.items():
                if t != tag:
                    for k in changed:
                        other[k] = spec[k] if not isinstance(spec[k], list) else list(spec[k])
        else:
            for t, other in d.act.items():
                if t == tag:
                    continue
                if t == "general":
                    d.act[t] = dict(spec)
                else:
                    for k in common:
                        other[k] = spec[k] if not isinstance(spec[k], list) else list(spec[k])

    def defclass(self, node, inherited):
        """Default class of an element: its class attribute, else the inherited childclass."""
        name = node.text("class")
        if name is None:
            name = inherited or "main"
            if name not in self.classes:
                raise node.error(f"unknown default class '{name}'", "childclass")
            return self.classes[name]
        if name not in self.classes:
            raise node.error(f"unknown default class '{name}'", "class")
        return self.classes[name]

    def spec(self, node, kind, cls, extra=(), skip=()):
        table, builtin = S.DEFAULT_KINDS[kind]
        t = dict(table)
        for a in extra:
            t[a] = extra[a] if isinstance(extra, dict) else S.S
        t["name"] = S.S
        t["class"] = S.S
        d = _overlay(cls.spec[kind], node, t, skip=skip, builtin=builtin)
        return _Spec(d, builtin, node)

    # ------------------------------------------------------------------------------------------
    # <asset>
    # ------------------------------------------------------------------------------------------
    def read_assets(self, nodes):
        self.meshes, self.materials, self.textures, self.hfields = [], [], [], []
        for n in nodes:
            n.check_attrs(())
            for child in n.children:
                self.current = child
                tag = child.tag
                if tag == "mesh":
                    self.read_mesh(child)
                elif tag == "material":
                    self.read_material(child)
                elif tag == "texture":
                    child.check_attrs(S.TEXTURE)
                    t = dict(self.defclass(child, None).texture)
                    t.update(child.attrib)
                    t.pop("class", None)
                    for a in S.TEXTURE_FILES:
                        if a in t:
                            found = self.find_file(child, t[a], "texturedir", "texturedir")
                            if found is None:
                                raise child.error(f"texture file '{t[a]}' not found", a)
                            t[a] = found[1]
                    if "name" not in t:
                        t["name"] = os.path.splitext(os.path.basename(child.text("file", "")))[0]
                    t["_node"] = child
                    self.textures.append(t)
                elif tag == "hfield":
                    self.read_hfield(child)
                elif tag == "skin":
                    self.warn("<skin> is a visual element that is not rendered; skipped", child)
                elif tag == "model":
                    raise self.unsupported(child, "model assets for <attach>")
                else:
                    raise child.error(f"unknown element <{tag}> in <asset>")
        self.check_names(self.meshes, "mesh")
        self.check_names(self.materials, "material")
        self.check_names([Obj(name=t["name"], node=t["_node"]) for t in self.textures],
                         "texture")
        self.check_names([Obj(name=h["name"], node=h["_node"]) for h in self.hfields],
                         "hfield")
        self.mesh_index = {m.name: i for i, m in enumerate(self.meshes)}
        self.mat_index = {m.name: i for i, m in enumerate(self.materials) if m.name}
        self.tex_names = {t["name"] for t in self.textures}
        self.hfield_index = {h["name"]: i for i, h in enumerate(self.hfields)}
        for m in self.materials:
            if m.texture and m.texture not in self.tex_names:
                raise m.node.error(f"unknown texture '{m.texture}'", "texture")

    def _dir(self, d):
        if not d:
            return self.model_dir
        if os.path.isabs(d) or self.model_dir is None:
            return d
        return os.path.join(self.model_dir, d)

    def find_file(self, node, name, check_dir, load_dir):
        """(bytes, path) of the file an asset element names, or None, found as MuJoCo finds it
        (xml_util.cc ResolveFilePath, then the asset's compilation): relative to the model
        file's directory joined with the compiler's `load_dir` (meshdir, texturedir); if the
        element comes from an included file and the name is not found relative to the model
        file's directory joined with `check_dir` (MuJoCo's reader checks height fields against
        assetdir but loads them from meshdir), relative to the included file's directory."""
        if self.cc["strippath"]:
            name = os.path.basename(name)
        if os.path.isabs(name):
            return self.source.find(name, [])
        included = node.file != self.file and self.model_dir is not None
        if included and not self._exists(os.path.join(self._dir(self.cc[check_dir]), name)):
            name = os.path.normpath(os.path.join(os.path.dirname(node.file), name))
            if os.path.isabs(name):
                return self.source.find(name, [])
        return self.source.find(name, [self._dir(self.cc[load_dir])])

    def _exists(self, path):
        return os.path.isfile(path) or path in self.source.assets

    def read_hfield(self, n):
        """A height field asset (MuJoCo's mjCHField): elevations from a PNG file, inline
        ``elevation`` (nrow x ncol, first row first) or zeros, then, as MuJoCo, rows reversed
        (the first image/inline row is the +y edge, data row 0 the -y edge) and the values
        rescaled to [0, 1]. ``size`` = (radius_x, radius_y, elevation_z, base_z)."""
        n.check_attrs(S.HFIELD)
        size = n.floats("size", 4)
        if size is None or any(s <= 0 for s in size):
            raise n.error("hfield size must have 4 positive numbers", "size")
        file = n.text("file")
        name = n.text("name") or (os.path.splitext(os.path.basename(file))[0] if file else "")
        nrow, ncol = n.int("nrow", 0), n.int("ncol", 0)
        elevation = n.floats("elevation", None, minimum=0)
        if file is not None:
            if n.has("nrow") or n.has("ncol") or n.has("elevation"):
                self.warn("hfield file given: nrow, ncol and elevation are ignored", n)
            # MuJoCo checks the asset directory and loads from the mesh directory
            found = self.find_file(n, file, "assetdir", "meshdir")
            if found is None:
                raise n.error(f"hfield file '{file}' not found", "file")
            rows = _png_rows(found[0], found[1], n)
            nrow, ncol = rows.shape
        else:
            if nrow < 2 or ncol < 2:
                raise n.error("hfield needs a file, or nrow and ncol of at least 2",
                              "nrow" if nrow < 2 else "ncol")
            if elevation is not None and len(elevation) > 0:
                if len(elevation) != nrow * ncol:
                    raise n.error(f"hfield elevation has {len(elevation)} numbers, nrow*ncol = "
                                  f"{nrow * ncol}", "elevation")
                rows = np.asarray(elevation, dtype=np.float64).reshape(nrow, ncol)
            else:
                rows = np.zeros((nrow, ncol))
        data = rows[::-1].astype(np.float32).astype(np.float64)  # MuJoCo stores floats
        lo, hi = data.min(), data.max()
        data -= lo
        if hi - lo > I.MINVAL:
            data /= hi - lo
        self.hfields.append({"name": name, "file": found[1] if file is not None else None,
                             "nrow": nrow, "ncol": ncol, "size": size,
                             "data": np.ascontiguousarray(data.reshape(-1)), "_node": n})

    def read_material(self, n):
        n.check_attrs(S.MATERIAL_DEFAULT.keys() | {"name", "class"})
        for child in n.children:
            if child.tag != "layer":
                raise child.error(f"unknown element <{child.tag}> in <material>")
            child.check_attrs(("texture", "role"))
        cls = self.defclass(n, None)
        sp = self.spec(n, "material", cls)
        self.materials.append(Obj(
            name=sp["name"] or "", node=n, texture=sp["texture"] or "", rgba=list(sp["rgba"]),
            texrepeat=list(sp["texrepeat"]), texuniform=bool(sp["texuniform"]),
            emission=sp["emission"], specular=sp["specular"], shininess=sp["shininess"],
            reflectance=sp["reflectance"]))

    def read_mesh(self, n):
        n.check_attrs(S.MESH_ASSET)
        for child in n.children:
            raise self.unsupported(child, "mesh plugins")
        if n.has("builtin") or n.has("params"):
            raise self.unsupported(n, "builtin meshes", "builtin")
        cls = self.defclass(n, None)
        sp = self.spec(n, "mesh", cls, extra={"content_type": S.S, "file": S.S, "vertex": S.V,
                                              "normal": S.V, "texcoord": S.V, "face": S.V,
                                              "refpos": S.F(3), "refquat": S.F(4),
                                              "smoothnormal": S.B, "material": S.S})
        from . import mesh as meshmod
        file = n.text("file")
        name = n.text("name")
        if not name:
            if not file:
                raise n.error("mesh without a name or a file", "name")
            name = os.path.splitext(os.path.basename(file))[0]
        scale = list(sp["scale"])
        if file is not None:
            if n.has("vertex"):
                raise n.error("mesh given both by file and by vertex", "vertex")
            found = self.find_file(n, file, "meshdir", "meshdir")
            if found is None:
                raise n.error(f"mesh file '{file}' not found", "file")
            data, path = found
            try:
                vert, face = meshmod.load_mesh(data, path)
            except ModelError as e:
                raise n.error(e.reason, "file") from None
        else:
            v = sp["vertex"]
            if not v or len(v) % 3:
                raise n.error("mesh vertex data must be a positive multiple of 3 numbers",
                              "vertex")
            vert = np.asarray(v, dtype=np.float64).reshape(-1, 3)
            f = sp["face"]
            if f:
                if len(f) % 3 or any(x != int(x) or x < 0 or x >= len(vert) for x in f):
                    raise n.error("mesh faces must be triples of vertex indices", "face")
                face = np.asarray(f, dtype=np.int64).reshape(-1, 3)
            else:
                face = np.zeros((0, 3), dtype=np.int64)
            path = None
        try:
            info = meshmod.process_mesh(vert, face, scale, sp["inertia"],
                                        refpos=sp["refpos"], refquat=sp["refquat"],
                                        maxhullvert=sp["maxhullvert"], name=name, file=path)
        except ModelError as e:
            raise n.error(e.reason, "file" if file else "vertex") from None
        self.meshes.append(Obj(name=name, node=n, info=info, file=path))

    # ------------------------------------------------------------------------------------------
    # the body tree
    # ------------------------------------------------------------------------------------------
    def build_tree(self, nodes):
        world = Obj(name="world", node=nodes[0] if nodes else self.root, parent=None,
                    children=[], joints=[], geoms=[], sites=[], cams=[], lights=[],
                    pos=[0.0, 0.0, 0.0], quat=[1.0, 0.0, 0.0, 0.0], mocap=False, gravcomp=0.0,
                    inertial=None, frame=None, childclass=None, level=0)
        self.world = world
        for n in nodes:
            self.current = n
            n.check_attrs(())
            self.read_body_children(n, world, None, None)

    def read_body_children(self, node, body, childclass, frame):
        for child in node.children:
            self.current = child
            tag = child.tag
            if tag == "body":
                self.read_body(child, body, childclass, frame)
            elif tag == "frame":
                child.check_attrs(S.FRAME)
                cc = child.text("childclass", childclass)
                if child.has("childclass") and cc not in self.classes:
                    raise child.error(f"unknown default class '{cc}'", "childclass")
                sp = {a: _read(child, a, S.ORIENT_TABLE.get(a, S.F(3)))
                      for a in child.attrib if a in S.ORIENT or a == "pos"}
                pos = sp.get("pos") or [0.0, 0.0, 0.0]
                quat = _orientation(sp, self.degree, self.eulerseq, child)
                if frame is not None:
                    pos, quat = I.frameaccum(frame[0], frame[1], pos, quat)
                I.normvec(quat)
                self.read_body_children(child, body, cc, (pos, quat))
            elif tag == "inertial":
                if body.parent is None:
                    raise child.error("<inertial> is not allowed in <worldbody>")
                if body.inertial is not None:
                    raise child.error("repeated <inertial> in body")
                if frame is not None:
                    raise child.error("<inertial> cannot be placed inside a <frame>")
                body.inertial = child
            elif tag in ("joint", "freejoint"):
                if body.parent is None:
                    raise child.error("joint found in world body")
                self.read_joint(child, body, childclass, frame)
            elif tag == "geom":
                self.read_geom(child, body, childclass, frame)
            elif tag == "site":
                self.read_site(child, body, childclass, frame)
            elif tag == "camera":
                self.read_camera(child, body, childclass, frame)
            elif tag == "light":
                self.read_light(child, body, childclass, frame)
            elif tag in ("composite", "flexcomp", "plugin", "attach", "replicate", "skin"):
                raise self.unsupported(child, {"composite": "composite objects (<composite>)",
                                               "flexcomp": "flexible objects (<flexcomp>)",
                                               "plugin": "engine plugins (<plugin>)",
                                               "attach": "model attachment (<attach>)",
                                               "replicate": "<replicate>",
                                               "skin": "<skin>"}[tag])
            else:
                raise child.error(f"unknown element <{tag}> in <{node.tag}>")

    def read_body(self, n, parent, childclass, frame):
        n.check_attrs(S.BODY)
        cc = n.text("childclass", childclass)
        if n.has("childclass") and cc not in self.classes:
            raise n.error(f"unknown default class '{cc}'", "childclass")
        sp = {a: _read(n, a, S.ORIENT_TABLE[a]) for a in S.ORIENT if n.has(a)}
        body = Obj(name=n.text("name", ""), node=n, parent=parent, children=[], joints=[],
                   geoms=[], sites=[], cams=[], lights=[], pos=n.floats("pos", 3) or
                   [0.0, 0.0, 0.0], orient=sp, mocap=n.bool("mocap", False),
                   gravcomp=n.float("gravcomp", 0.0), inertial=None, frame=frame,
                   childclass=cc, level=parent.level + 1)
        if n.has("sleep"):
            n.keyword("sleep", {"auto": 0, "never": 1, "allowed": 2, "init": 3})
            self.warn("body sleep settings have no effect in this engine", n)
        if n.keyword("fuse", {"true": True, "false": False, "auto": False}, False):
            raise self.unsupported(n, "merging a static body into its parent (fuse)", "fuse")
        if n.has("simple"):
            n.keyword("simple", {"true": 1, "false": 0, "auto": 2})
        n.floats("user", None, minimum=0)
        parent.children.append(body)
        self.read_body_children(n, body, cc, None)

    # ---- joints ------------------------------------------------------------------------------
    def read_joint(self, n, body, childclass, frame):
        if n.tag == "freejoint":
            n.check_attrs(S.FREEJOINT)
            j = Obj(name=n.text("name", ""), node=n, body=body, type=0, group=n.int("group", 0),
                    pos=[0.0, 0.0, 0.0], axis=[0.0, 0.0, 1.0], limited=False, range=[0.0, 0.0],
                    stiffness=0.0, springref=0.0, ref=0.0, armature=0.0, damping=0.0,
                    frictionloss=0.0, margin=0.0, epsilon=-1.0, kappa=-1.0, rmin=-1.0,
                    align=n.keyword("align", {"false": 0, "true": 1, "auto": 2}, 2),
                    actfrclimited=False, actfrcrange=[0.0, 0.0], springdamper=None)
            body.joints.append(j)
            return
        cls = self.defclass(n, childclass)
        sp = self.spec(n, "joint", cls)
        jtype = sp["type"]
        rng = list(sp["range"])
        limited = sp["limited"]
        if jtype == 0:
            limited = 0
        elif limited == 2:
            hasrange = not (rng[0] == 0 and rng[1] == 0)
            if not self.cc["autolimits"] and hasrange:
                raise n.error("joint has 'range' but not 'limited'; set autolimits=\"true\" "
                              "in <compiler> or give limited explicitly", "range")
        is_lim = _islimited(limited, rng)
        if is_lim:
            if rng[0] >= rng[1] and jtype != 1:
                raise n.error("range[0] should be smaller than range[1]", "range")
            if rng[0] and jtype == 1:
                raise n.error("range[0] should be 0 in ball joint", "range")
            if self.degree and jtype in (1, 3):
                rng = [r * PI / 180.0 if r else r for r in rng]
        springdamper = list(sp["springdamper"])
        if springdamper[0] or springdamper[1]:
            if springdamper[0] <= 0 or springdamper[1] <= 0:
                raise n.error("when defined, springdamper values must be positive",
                              "springdamper")
        else:
            springdamper = None
        # limits of the total actuator force on a hinge or slide joint
        afl, afr = sp["actuatorfrclimited"], list(sp["actuatorfrcrange"])
        if afl == 2 and not self.cc["autolimits"] and not (afr[0] == 0 and afr[1] == 0):
            raise n.error("joint has 'actuatorfrcrange' but not 'actuatorfrclimited'; set "
                          "autolimits=\"true\" in <compiler> or give actuatorfrclimited "
                          "explicitly", "actuatorfrcrange")
        act_limited = jtype in (2, 3) and _islimited(afl, afr)
        if act_limited and afr[0] >= afr[1]:
            raise n.error("actuatorfrcrange[0] should be smaller than actuatorfrcrange[1]",
                          "actuatorfrcrange")
        if sp["actuatorgravcomp"]:
            raise self.unsupported(n, "actuatorgravcomp", "actuatorgravcomp")
        for a in ("solreffriction", "solimpfriction"):
            if sp.given(a):
                self.warn(f"'{a}' has no counterpart in this engine (friction loss uses the "
                          "global softness)", n)
        self.reject_set(n, sp, {"springyield": "spring yield (plasticity)"})
        axis = list(sp["axis"])
        pos = list(sp["pos"])
        if jtype in (0, 1):
            axis = [0.0, 0.0, 1.0]
        elif frame is not None:
            axis = I.rotvecquat(axis, frame[1])
        if I.normvec(axis) < I.EPS:
            raise n.error("axis too small in joint", "axis")
        if jtype == 0:
            pos = [0.0, 0.0, 0.0]
        elif frame is not None:
            pos, _ = I.frameaccum(frame[0], frame[1], pos, [1.0, 0.0, 0.0, 0.0])
        ref, springref = sp["ref"], sp["springref"]
        if jtype == 3 and self.degree:
            ref *= PI / 180.0
            springref *= PI / 180.0
        eps, kap, rmin = _soft(sp, "epsilon", "kappa", "solreflimit", "solimplimit", self.warn_once,
                         f"joint '{sp['name'] or ''}' (line {n.line})")
        body.joints.append(Obj(
            name=sp["name"] or "", node=n, body=body, type=jtype, group=sp["group"], pos=pos,
            axis=axis, limited=is_lim, range=rng, stiffness=sp["stiffness"],
            springref=springref, ref=ref, armature=sp["armature"], damping=sp["damping"],
            frictionloss=sp["frictionloss"], margin=sp["margin"], epsilon=eps, kappa=kap,
            rmin=rmin,
            align=2, actfrclimited=act_limited, actfrcrange=afr, springdamper=springdamper))

    # ---- geoms -------------------------------------------------------------------------------
    def read_geom(self, n, body, childclass, frame):
        cls = self.defclass(n, childclass)
        for child in n.children:
            raise self.unsupported(child, "geom plugins")
        sp = self.spec(n, "geom", cls)
        gtype = sp["type"]
        name = sp["name"] or ""
        if gtype == 8:
            raise self.unsupported(n, "signed distance field geoms (type=\"sdf\")", "type")
        self.reject_set(n, sp, {"adhesion": "contact adhesion",
                                "surfacevel": "surface velocity (conveyor contacts)"})
        self.ignore_visual(n, sp, ("castshadow",))
        condim = sp["condim"]
        if condim not in (1, 3, 4, 6):
            raise n.error("invalid condim in geom (must be 1, 3, 4 or 6)", "condim")
        meshname, hfname = sp["mesh"], sp["hfield"]
        mesh = None
        if meshname:
            if meshname not in self.mesh_index:
                raise n.error(f"unknown mesh '{meshname}'", "mesh")
            mesh = self.meshes[self.mesh_index[meshname]]
        if gtype == 7 and mesh is None:
            raise n.error("mesh geom must name a mesh asset", "mesh")
        hfield = None
        if hfname:
            if hfname not in self.hfield_index:
                raise n.error(f"unknown hfield '{hfname}'", "hfield")
            hfield = self.hfields[self.hfield_index[hfname]]
        if (gtype == 1) != (hfield is not None):
            raise n.error("hfield geom must name an hfield asset (and only hfield geoms can)",
                          "hfield")
        matid = -1
        if sp["material"]:
            if sp["material"] not in self.mat_index:
                raise n.error(f"unknown material '{sp['material']}'", "material")
            matid = self.mat_index[sp["material"]]
        size = list(sp["size"])
        pos = list(sp["pos"])
        quat = list(sp["quat"]) if sp["quat"] is not None else [1.0, 0.0, 0.0, 0.0]
        fromto = sp["fromto"]
        if fromto is not None:
            if gtype not in (3, 5, 4, 6):
                raise n.error("fromto requires capsule, cylinder, box or ellipsoid", "fromto")
            if sp.given("pos") and (pos[0] or pos[1] or pos[2]):
                raise n.error("both pos and fromto defined in geom", "fromto")
            vec = [fromto[0] - fromto[3], fromto[1] - fromto[4], fromto[2] - fromto[5]]
            size[1] = I.normvec(vec) / 2
            if size[1] < I.EPS:
                raise n.error("fromto points too close", "fromto")
            if gtype in (4, 6):
                size[2] = size[1]
                size[1] = size[0]
            pos = [(fromto[0] + fromto[3]) / 2, (fromto[1] + fromto[4]) / 2,
                   (fromto[2] + fromto[5]) / 2]
            quat = I.z2quat(vec)
        else:
            quat = _orientation(sp.d, self.degree, self.eulerseq, n)
        I.normvec(quat)
        if mesh is not None:
            from . import mesh as meshmod
            info = mesh.info
            if gtype != 7:
                fsize, mpos = meshmod.fit_geom(info, gtype, self.cc["fitaabb"], sp["fitscale"])
                size = [float(x) for x in fsize]
                mpos = [float(x) for x in mpos]
                mesh_for_geom = None
            else:
                if sp["shellinertia"]:
                    raise n.error("for mesh geoms, inertia should be specified in the mesh "
                                  "asset", "shellinertia")
                mpos = [float(x) for x in info.pos]
                mesh_for_geom = mesh
            pos, quat = I.frameaccum(pos, quat, mpos, [float(x) for x in info.quat])
        else:
            mesh_for_geom = None
        # size checks
        if gtype == 0:
            if size[2] <= 0:
                raise n.error("plane size(3) must be positive", "size")
        else:
            need = {1: 0, 2: 1, 3: 2, 4: 3, 5: 2, 6: 3, 7: 0}[gtype]
            for i in range(need):
                if size[i] <= 0:
                    raise n.error(f"size {i} must be positive in geom (a {list(S.GEOM_TYPES)[gtype]} "
                                  f"needs {need} size parameters)", "size")
        aamm = None
        if gtype == 1:
            hs = hfield["size"]
            size = [hs[0], hs[1], 0.25 * hs[2] + 0.5 * hs[3]]
        elif gtype == 7:
            aamm = [float(x) for x in mesh.info.aamm]
            size = [max(abs(aamm[0]), abs(aamm[3])), max(abs(aamm[1]), abs(aamm[4])),
                    max(abs(aamm[2]), abs(aamm[5]))]
        mass = sp["mass"]
        density = sp["density"]
        if mass is not None and mass < 0:
            raise n.error("geom mass cannot be negative", "mass")
        if density < 0:
            raise n.error("geom density cannot be negative", "density")
        eps, kap, rmin = _soft(sp, "epsilon", "kappa", "solref", "solimp", self.warn_once,
                         f"geom '{name}' (line {n.line})")
        for a in ("solmix",):
            if sp.given(a):
                self.warn(f"'{a}' has no counterpart in this engine", n)
        g = Obj(name=name, node=n, body=body, type=gtype, contype=sp["contype"],
                conaffinity=sp["conaffinity"], condim=condim, group=sp["group"],
                priority=sp["priority"], size=size, pos=pos, quat=quat,
                friction=list(sp["friction"]), margin=sp["margin"], gap=sp["gap"],
                rgba=list(sp["rgba"]), matid=matid, mass_given=mass, density=density,
                shell=bool(sp["shellinertia"]), mesh=mesh_for_geom, meshid=(
                    self.mesh_index[meshname] if mesh_for_geom is not None else -1),
                hfield=hfield, hfieldid=(self.hfield_index[hfname] if hfield else -1),
                aamm=aamm, frame=frame, epsilon=eps, kappa=kap, rmin=rmin, mass=0.0,
                inertia=[0.0, 0.0, 0.0],
                fluid=(ellipsoid_fluid_coefs(gtype, size, sp["fluidcoef"])
                       if sp["fluidshape"] == "ellipsoid" else [0.0] * 12))
        body.geoms.append(g)

    def compile_geom_inertia(self, g, infer):
        """Geom mass and principal inertia (MuJoCo's mjCGeom::Compile, inertia part)."""
        if not infer:
            return
        mvol = g.mesh.info.volume if g.mesh is not None else None
        mbox = [float(x) for x in g.mesh.info.boxsz] if g.mesh is not None else None
        vol = I.geom_volume(g.type, g.size, g.shell, mvol)
        if g.mass_given is not None:
            if g.mass_given == 0:
                g.mass = 0.0
            elif vol > I.EPS:
                g.mass = g.mass_given
                g.inertia = I.geom_inertia(g.type, g.size, g.mass, g.shell, mbox)
        else:
            if g.density == 0:
                g.mass = 0.0
            else:
                g.mass = g.density * vol
                g.inertia = I.geom_inertia(g.type, g.size, g.mass, g.shell, mbox)
        if g.mass < 0 or min(g.inertia) < 0:
            raise g.node.error("mass, inertia or density are negative in geom")

    # ---- sites, cameras, lights --------------------------------------------------------------
    def read_site(self, n, body, childclass, frame):
        cls = self.defclass(n, childclass)
        sp = self.spec(n, "site", cls)
        self.ignore_visual(n, sp, ("mesh",))
        stype = sp["type"]
        if stype in (0, 1, 7, 8):
            raise n.error("meshes, hfields and planes are not allowed in site", "type")
        size = list(sp["size"])
        pos = list(sp["pos"])
        fromto = sp["fromto"]
        if fromto is not None:
            if stype not in (3, 5, 4, 6):
                raise n.error("fromto requires capsule, cylinder, box or ellipsoid", "fromto")
            if sp.given("pos") and (pos[0] or pos[1] or pos[2]):
                raise n.error("both pos and fromto defined in site", "fromto")
            vec = [fromto[0] - fromto[3], fromto[1] - fromto[4], fromto[2] - fromto[5]]
            size[1] = I.normvec(vec) / 2
            if size[1] < I.EPS:
                raise n.error("fromto points too close", "fromto")
            if stype in (4, 6):
                size[2] = size[1]
                size[1] = size[0]
            pos = [(fromto[0] + fromto[3]) / 2, (fromto[1] + fromto[4]) / 2,
                   (fromto[2] + fromto[5]) / 2]
            quat = I.z2quat(vec)
        else:
            quat = _orientation(sp.d, self.degree, self.eulerseq, n)
        if frame is not None:
            pos, quat = I.frameaccum(frame[0], frame[1], pos, quat)
        I.normvec(quat)
        need = {2: 1, 3: 2, 4: 3, 5: 2, 6: 3}[stype]
        for i in range(need):
            if size[i] <= 0:
                raise n.error(f"size {i} must be positive in site", "size")
        if sp["material"] and sp["material"] not in self.mat_index:
            raise n.error(f"unknown material '{sp['material']}'", "material")
        body.sites.append(Obj(name=sp["name"] or "", node=n, body=body, type=stype,
                              group=sp["group"], size=size, pos=pos, quat=quat,
                              rgba=list(sp["rgba"])))

    def read_camera(self, n, body, childclass, frame):
        cls = self.defclass(n, childclass)
        sp = self.spec(n, "camera", cls, extra=("target",))
        self.ignore_visual(n, sp, ("output",))
        quat = _orientation(sp.d, self.degree, self.eulerseq, n)
        pos = list(sp["pos"])
        if frame is not None:
            pos, quat = I.frameaccum(frame[0], frame[1], pos, quat)
        I.normvec(quat)
        if sp["fovy"] >= 180:
            raise n.error("fovy too large in camera", "fovy")
        body.cams.append(Obj(name=sp["name"] or "", node=n, body=body, mode=sp["mode"],
                             target=sp["target"] or "", pos=pos, quat=quat,
                             **self.camera_sensor(n, sp)))

    def camera_sensor(self, n, sp):
        """Image size, projection and intrinsics of a camera (mjCCamera::Compile): focal
        lengths and principal point (length units) from pixels and the sensor size, in single
        precision as MuJoCo stores them; a sensor size sets fovy."""
        f32 = np.float32
        res = [int(v) for v in sp["resolution"]]
        size = [f32(v) for v in sp["sensorsize"]]
        fovy = sp["fovy"]
        given = [sp[a] for a in ("focal", "focalpixel", "principal", "principalpixel")]
        if any(v for pair in given for v in pair) and not (size[0] > 0 and size[1] > 0):
            raise n.error("focal/principal require sensorsize in camera", "sensorsize")
        if size[0] > 0 and size[1] > 0:
            if res[0] <= 0 or res[1] <= 0:
                raise n.error("sensorsize requires positive resolution in camera",
                              "resolution")
            density = [f32(res[k]) / size[k] for k in range(2)]
            # pixel values override length values
            intrinsic = [f32(pix[k]) / density[k] if pix[k] else f32(length[k])
                         for pix, length in ((sp["focalpixel"], sp["focal"]),
                                             (sp["principalpixel"], sp["principal"]))
                         for k in range(2)]
            fovy = float(np.arctan2(size[1] / f32(2), intrinsic[1])) * 360.0 / math.pi
        else:
            znear = f32(float(self.visual.get("map", {}).get("znear", 0.01)))
            intrinsic = [znear, znear, 0.0, 0.0]
        projection = sp["projection"] == "orthographic" or sp["orthographic"]
        return dict(resolution=res, sensorsize=[float(v) for v in size], fovy=fovy,
                    intrinsic=[float(v) for v in intrinsic], projection=int(projection))

    def read_light(self, n, body, childclass, frame):
        cls = self.defclass(n, childclass)
        sp = self.spec(n, "light", cls, extra=("target", "texture"))
        self.ignore_visual(n, sp, ("softness",))
        pos = list(sp["pos"])
        ldir = list(sp["dir"])
        if frame is not None:
            pos, _ = I.frameaccum(frame[0], frame[1], pos, [1.0, 0.0, 0.0, 0.0])
            ldir = I.rotvecquat(ldir, frame[1])
        if I.normvec(ldir) < I.EPS:
            raise n.error("zero direction in light", "dir")
        directional = sp["directional"] if sp.given("directional") else \
            sp["type"] == "directional"
        if sp["texture"] and sp["texture"] not in self.tex_names:
            raise n.error(f"unknown texture '{sp['texture']}'", "texture")
        body.lights.append(Obj(name=sp["name"] or "", node=n, body=body, mode=sp["mode"],
                               target=sp["target"] or "", pos=pos, dir=ldir,
                               directional=bool(directional), castshadow=bool(sp["castshadow"]),
                               type="directional" if directional else sp["type"],
                               active=bool(sp["active"]), attenuation=list(sp["attenuation"]),
                               cutoff=sp["cutoff"], exponent=sp["exponent"],
                               ambient=list(sp["ambient"]), diffuse=list(sp["diffuse"]),
                               specular=list(sp["specular"])))

    # ------------------------------------------------------------------------------------------
    # compile the tree: ids, inertia, frames
    # ------------------------------------------------------------------------------------------
    def compile_tree(self):
        bodies = []

        def visit(b):
            bodies.append(b)
            for c in b.children:
                visit(c)
        visit(self.world)
        self.bodies = bodies
        for i, b in enumerate(bodies):
            b.id = i
        self.joints = [j for b in bodies for j in b.joints]
        self.geoms = [g for b in bodies for g in b.geoms]
        self.sites = [s for b in bodies for s in b.sites]
        self.cams = [c for b in bodies for c in b.cams]
        self.lights = [lt for b in bodies for lt in b.lights]
        for lst in (self.joints, self.geoms, self.sites, self.cams, self.lights):
            for i, o in enumerate(lst):
                o.id = i
        self.check_names(bodies, "body")
        self.check_names(self.joints, "joint")
        self.check_names(self.geoms, "geom")
        self.check_names(self.sites, "site")
        self.check_names(self.cams, "camera")
        self.check_names(self.lights, "light")
        self.body_index = {b.name: b.id for b in bodies if b.name}
        self.joint_index = {j.name: j.id for j in self.joints if j.name}
        self.geom_index = {g.name: g.id for g in self.geoms if g.name}
        self.site_index = {s.name: s.id for s in self.sites if s.name}
        self.cam_index = {c.name: c.id for c in self.cams if c.name}

        world = self.world
        world.weldid = 0
        world.rootid = 0
        world.ipos, world.iquat = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
        world.mass, world.inertia = 0.0, [0.0, 0.0, 0.0]
        world.xpos0, world.xquat0 = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
        for g in world.geoms:
            self.compile_geom_inertia(g, False)
            self.apply_frame(g)
        for b in bodies[1:]:
            self.current = b.node
            self.compile_body(b)
        for b in bodies:
            for c in b.cams:
                self.current = c.node
                c.targetbodyid = self.lookup_body(c.node, c.target, "target") if c.target \
                    else -1
                if c.mode in (3, 4) and c.targetbodyid < 0:
                    raise c.node.error("camera in target mode needs a target body", "target")
            for lt in b.lights:
                self.current = lt.node
                lt.targetbodyid = self.lookup_body(lt.node, lt.target, "target") \
                    if lt.target else -1
                if lt.mode in (3, 4) and lt.targetbodyid < 0:
                    raise lt.node.error("light in target mode needs a target body", "target")
        if self.cc["discardvisual"]:
            self.discard_visual()
        # moving bodies need mass (MuJoCo's CheckBodiesMassInertia)
        for b in bodies[1:]:
            if b.joints and not self._mass_ok(b):
                raise b.node.error("mass and inertia of moving bodies must be larger than "
                                   "mjMINVAL (give the body geoms with mass or an <inertial>)")

    def discard_visual(self):
        """compiler discardvisual: drop visual-only geoms (after their mass has been counted)
        unless pairs, tendons or sensors name them, and drop materials and textures."""
        referenced = set()
        for sec in ("contact", "tendon", "sensor"):
            for n in self.sections.get(sec, []):
                stack = list(n.children)
                while stack:
                    c = stack.pop()
                    stack.extend(c.children)
                    for a in ("geom", "geom1", "geom2", "objname", "refname"):
                        if c.has(a):
                            referenced.add(c.text(a))
        for b in self.bodies:
            b.geoms = [g for g in b.geoms if g.contype or g.conaffinity or
                       (g.name and g.name in referenced)]
        self.geoms = [g for b in self.bodies for g in b.geoms]
        for i, g in enumerate(self.geoms):
            g.id = i
            g.matid = -1
        self.geom_index = {g.name: g.id for g in self.geoms if g.name}
        self.materials, self.textures, self.mat_index = [], [], {}

    def _mass_ok(self, b):
        if b.mass >= I.MINVAL and min(b.inertia) >= I.MINVAL:
            return True
        return any(not c.joints and self._mass_ok(c) for c in b.children)

    @staticmethod
    def apply_frame(o):
        if o.frame is not None:
            o.pos, o.quat = I.frameaccum(o.frame[0], o.frame[1], o.pos, o.quat)

    def compile_body(self, b):
        n = b.node
        cc = self.cc
        parent = b.parent
        b.weldid = b.id if (b.joints or b.mocap) else parent.weldid
        b.rootid = b.id if parent is self.world else parent.rootid
        quat = _orientation(b.orient, self.degree, self.eulerseq, n)
        b.quat = quat
        # explicit inertial
        explicit = b.inertial is not None
        ipos = None
        iquat = [1.0, 0.0, 0.0, 0.0]
        mass, inert = 0.0, [0.0, 0.0, 0.0]
        if explicit:
            e = b.inertial
            self.current = e
            e.check_attrs(S.INERTIAL)
            if not e.has("mass"):
                raise e.error("missing attribute 'mass' in <inertial>", "mass")
            if not e.has("pos"):
                raise e.error("missing attribute 'pos' in <inertial>", "pos")
            ipos = e.floats("pos", 3)
            mass = e.float("mass")
            if mass < 0:
                raise e.error("mass cannot be negative", "mass")
            orient = {a: _read(e, a, S.ORIENT_TABLE[a]) for a in S.ORIENT if e.has(a)}
            if e.has("fullinertia"):
                if e.has("diaginertia"):
                    raise e.error("fullinertia and diagonal inertia cannot both be specified",
                                  "fullinertia")
                if any(a in orient for a in S.ORIENT if a != "quat"):
                    raise e.error("fullinertia and inertial orientation cannot both be "
                                  "specified", "fullinertia")
                res = I.full_inertia(e.floats("fullinertia", 6))
                if res is None:
                    raise e.error("inertia must have positive eigenvalues", "fullinertia")
                iquat, inert = res
            else:
                if not e.has("diaginertia"):
                    raise e.error("<inertial> needs diaginertia or fullinertia", "diaginertia")
                inert = e.floats("diaginertia", 3)
                iquat = _orientation(orient, self.degree, self.eulerseq, e)
            I.normvec(iquat)
            self.current = n
        grp = cc["inertiagrouprange"]
        ifg = cc["inertiafromgeom"]
        for g in b.geoms:
            self.current = g.node
            infer = (not explicit or ifg == 1) and grp[0] <= g.group <= grp[1]
            self.compile_geom_inertia(g, infer)
            self.apply_frame(g)
        self.current = n
        if ifg == 1 or (ipos is None and ifg == 2):
            # MuJoCo 4 leaves massless geoms out of the selection
            sel = [g for g in b.geoms if grp[0] <= g.group <= grp[1] and g.mass > 0]
            if len(sel) == 1:
                g = sel[0]
                ipos, iquat, mass, inert = list(g.pos), list(g.quat), g.mass, list(g.inertia)
            elif len(sel) > 1:
                mass = sum(g.mass for g in sel)
                if mass < I.EPS:
                    raise n.error("body mass is too small, cannot compute center of mass")
                com = [sum(g.mass * g.pos[k] for g in sel) / mass for k in range(3)]
                toti = [0.0] * 6
                for g in sel:
                    d = [g.pos[k] - com[k] for k in range(3)]
                    a = I.global_inertia(g.inertia, g.quat)
                    o = I.offcenter(g.mass, d)
                    toti = [toti[k] + a[k] + o[k] for k in range(6)]
                res = I.full_inertia(toti)
                if res is None:
                    raise n.error("inertia must have positive eigenvalues (from geoms)")
                ipos = com
                iquat, inert = res
        if ipos is None:
            ipos, iquat = list(b.pos), list(quat)
        mass = max(mass, cc["boundmass"])
        inert = [max(x, cc["boundinertia"]) for x in inert]
        if mass < 0 or min(inert) < 0:
            raise n.error("mass and inertia cannot be negative")
        if (inert[0] + inert[1] < inert[2] or inert[0] + inert[2] < inert[1]
                or inert[1] + inert[2] < inert[0]):
            if cc["balanceinertia"]:
                inert = [(inert[0] + inert[1] + inert[2]) / 3.0] * 3
            else:
                raise n.error("inertia must satisfy A + B >= C; use 'balanceinertia' to fix")
        b.ipos, b.iquat, b.mass, b.inertia = ipos, iquat, mass, inert
        if b.frame is not None:
            b.pos, b.quat = I.frameaccum(b.frame[0], b.frame[1], b.pos, b.quat)
        # joints
        dofnum = sum({0: 6, 1: 3, 2: 1, 3: 1}[j.type] for j in b.joints)
        if dofnum > 6:
            raise n.error(f"more than 6 dofs in body '{b.name}'")
        hasball = False
        nfree = sum(j.type == 0 for j in b.joints)
        for j in b.joints:
            if j.type in (1, 3) and hasball:
                raise j.node.error(f"ball followed by rotation in body '{b.name}'")
            hasball = hasball or j.type == 1
        if nfree > 1 or (nfree == 1 and len(b.joints) > 1):
            raise n.error("free joint can only appear by itself")
        if nfree and parent is not self.world:
            raise n.error("free joint can only be used on top level")
        if b.mocap and (dofnum or parent is not self.world):
            raise n.error(f"mocap body '{b.name}' is not a fixed child of world", "mocap")
        b.dofnum = dofnum
        # free-joint alignment (MuJoCo's alignfree)
        align = (len(b.joints) == 1 and b.joints[0].type == 0 and not b.children and
                 (b.joints[0].align == 1 or (b.joints[0].align == 2 and cc["alignfree"])))
        if align:
            b.pos, b.quat = I.frameaccum(b.pos, b.quat, b.ipos, b.iquat)
            ipinv, iqinv = I.frameinvert(b.ipos, b.iquat)
            b.ipos, b.iquat = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
            for g in b.geoms:
                g.pos, g.quat = I.frameaccum(ipinv, iqinv, g.pos, g.quat)
            for s in b.sites:
                s.pos, s.quat = I.frameaccum(ipinv, iqinv, s.pos, s.quat)
            for c in b.cams:
                c.pos, c.quat = I.frameaccum(ipinv, iqinv, c.pos, c.quat)
            for lt in b.lights:
                lt.pos, _ = I.frameaccum(ipinv, iqinv, lt.pos, [1.0, 0.0, 0.0, 0.0])
                lt.dir = I.rotvecquat(lt.dir, iqinv)
        # global pose at qpos0 (for eq_data)
        b.xpos0 = [a + c for a, c in zip(I.rotvecquat(b.pos, parent.xquat0), parent.xpos0)]
        b.xquat0 = I.mulquat(parent.xquat0, b.quat)
        for g in b.geoms:
            if g.type == 0 and b.weldid != 0:
                raise g.node.error("plane only allowed in static bodies", "type")

    # ------------------------------------------------------------------------------------------
    # names
    # ------------------------------------------------------------------------------------------
    def check_names(self, objs, kind):
        seen = {}
        for o in objs:
            if o.name:
                if o.name in seen:
                    node = o.node
                    raise ModelError(f"repeated name '{o.name}' in {kind}", file=node.file,
                                     line=node.line, element=node.tag, attribute="name")
                seen[o.name] = o

    def _lookup(self, index, node, name, attr, kind):
        if name not in index:
            raise node.error(f"unknown {kind} '{name}'", attr)
        return index[name]

    def lookup_body(self, node, name, attr):
        return self._lookup(self.body_index, node, name, attr, "body")

    def lookup_joint(self, node, name, attr):
        return self._lookup(self.joint_index, node, name, attr, "joint")

    def lookup_geom(self, node, name, attr):
        return self._lookup(self.geom_index, node, name, attr, "geom")

    def lookup_site(self, node, name, attr):
        return self._lookup(self.site_index, node, name, attr, "site")

    # ------------------------------------------------------------------------------------------
    # <contact>
    # ------------------------------------------------------------------------------------------
    def read_contact(self, nodes):
        self.pairs, self.excludes = [], []
        for n in nodes:
            n.check_attrs(())
            for child in n.children:
                self.current = child
                if child.tag == "pair":
                    self.read_pair(child)
                elif child.tag == "exclude":
                    child.check_attrs(("name", "body1", "body2"))
                    for a in ("body1", "body2"):
                        if not child.has(a):
                            raise child.error(f"missing attribute '{a}'", a)
                    b1 = self.lookup_body(child, child.text("body1"), "body1")
                    b2 = self.lookup_body(child, child.text("body2"), "body2")
                    if b1 > b2:
                        b1, b2 = b2, b1
                    self.excludes.append(Obj(name=child.text("name", ""), node=child, b1=b1,
                                             b2=b2, sig=(b1 << 16) + b2))
                else:
                    raise child.error(f"unknown element <{child.tag}> in <contact>")
        self.pairs.sort(key=lambda p: p.sig)
        self.excludes.sort(key=lambda p: p.sig)

    def read_pair(self, n):
        cls = self.defclass(n, None)
        sp = self.spec(n, "pair", cls, extra=("geom1", "geom2"))
        for a in ("geom1", "geom2"):
            if not sp[a]:
                raise n.error(f"missing attribute '{a}'", a)
        g1 = self.geoms[self.lookup_geom(n, sp["geom1"], "geom1")]
        g2 = self.geoms[self.lookup_geom(n, sp["geom2"], "geom2")]
        if g1.body.id > g2.body.id:
            g1, g2 = g2, g1
        # MuJoCo 4 takes every pair parameter from the pair (and its defaults), not the geoms
        condim = sp["condim"]
        if condim not in (1, 3, 4, 6):
            raise n.error("invalid condim in contact pair", "condim")
        self.reject_set(n, sp, {"adhesion": "contact adhesion"})
        margin, gap, fr = sp["margin"], sp["gap"], list(sp["friction"])
        if sp.given("solreffriction"):
            self.warn("'solreffriction' has no counterpart in this engine", n)
        eps, kap, rmin = _soft(sp, "epsilon", "kappa", "solref", "solimp", self.warn_once,
                         f"pair (line {n.line})")
        self.pairs.append(Obj(name=sp["name"] or "", node=n, g1=g1.id, g2=g2.id, condim=condim,
                              friction=fr, margin=margin, gap=gap, epsilon=eps, kappa=kap, rmin=rmin,
                              sig=(g1.body.id << 16) + g2.body.id))

    # ------------------------------------------------------------------------------------------
    # <equality>
    # ------------------------------------------------------------------------------------------
    def read_equality(self, nodes):
        self.eqs = []
        attrs = {"connect": ("body1", "body2", "anchor", "site1", "site2"),
                 "weld": ("body1", "body2", "relpose", "anchor", "site1", "site2",
                          "torquescale"),
                 "joint": ("joint1", "joint2", "polycoef"),
                 "tendon": ("tendon1", "tendon2", "polycoef")}
        for n in nodes:
            n.check_attrs(())
            for child in n.children:
                self.current = child
                tag = child.tag
                if tag in ("flex", "flexstrain", "distance"):
                    raise self.unsupported(child, f"<{tag}> equality constraints")
                if tag not in attrs:
                    raise child.error(f"unknown element <{tag}> in <equality>")
                cls = self.defclass(child, None)
                extra = {a: S.S for a in attrs[tag]}
                extra.update({"anchor": S.F(3), "relpose": S.F(7), "torquescale": S.F1,
                              "polycoef": S.P(5)})
                extra = {a: extra[a] for a in attrs[tag]}
                sp = self.spec(child, "equality", cls, extra=extra)
                eps, kap, rmin = _soft(sp, "epsilon", "kappa", "solref", "solimp", self.warn_once,
                                 f"equality (line {child.line})")
                self.eqs.append(Obj(name=sp["name"] or "", node=child, tag=tag, sp=sp,
                                    active=bool(sp["active"]), hard=bool(sp["hard"]),
                                    epsilon=eps, kappa=kap, rmin=rmin))
        self.check_names(self.eqs, "equality")

    def compile_equalities(self):
        """Resolve names and fill eq_data (after tendons are known)."""
        for e in self.eqs:
            n, sp, tag = e.node, e.sp, e.tag
            self.current = n
            data = [0.0] * 11
            if tag in ("connect", "weld"):
                bodies = sp["body1"] is not None or sp["body2"] is not None
                sites = sp["site1"] is not None or sp["site2"] is not None
                if bodies and sites:
                    raise n.error("use either body1/body2 or site1/site2, not both", "site1")
                if sites:
                    if sp["site1"] is None or sp["site2"] is None:
                        raise n.error("site semantics needs both site1 and site2",
                                      "site1" if sp["site1"] is None else "site2")
                    o1 = self.lookup_site(n, sp["site1"], "site1")
                    o2 = self.lookup_site(n, sp["site2"], "site2")
                    objtype = "site"
                else:
                    if sp["body1"] is None:
                        raise n.error("missing attribute 'body1'", "body1")
                    o1 = self.lookup_body(n, sp["body1"], "body1")
                    o2 = self.lookup_body(n, sp["body2"], "body2") if sp["body2"] is not None \
                        else 0
                    objtype = "body"
                if o1 == o2:
                    raise n.error("the two objects of an equality constraint must differ")
                etype = EqType.CONNECT if tag == "connect" else EqType.WELD
                anchor = sp["anchor"] if sp["anchor"] is not None else [0.0, 0.0, 0.0]
                if tag == "connect":
                    if objtype == "body":
                        if sp["anchor"] is None:
                            raise n.error("missing attribute 'anchor'", "anchor")
                        data[0:3] = anchor
                        b1, b2 = self.bodies[o1], self.bodies[o2]
                        p = [a + c for a, c in zip(b1.xpos0, I.rotvecquat(anchor, b1.xquat0))]
                        d = [p[k] - b2.xpos0[k] for k in range(3)]
                        data[3:6] = I.rotvecquat(d, I.negquat(b2.xquat0))
                        data[10] = 1.0
                else:
                    ts = sp["torquescale"] if sp["torquescale"] is not None else 1.0
                    if objtype == "body":
                        data[0:3] = anchor
                        rel = sp["relpose"]
                        if rel is not None and any(rel[3:]):
                            data[3:10] = rel
                        else:
                            b1, b2 = self.bodies[o1], self.bodies[o2]
                            p = [a + c for a, c in zip(b2.xpos0,
                                                       I.rotvecquat(anchor, b2.xquat0))]
                            d = [p[k] - b1.xpos0[k] for k in range(3)]
                            data[3:6] = I.rotvecquat(d, I.negquat(b1.xquat0))
                            data[6:10] = I.mulquat(I.negquat(b1.xquat0), b2.xquat0)
                    else:
                        data[1] = 1.0
                    data[10] = ts
            elif tag == "joint":
                if sp["joint1"] is None:
                    raise n.error("missing attribute 'joint1'", "joint1")
                o1 = self.lookup_joint(n, sp["joint1"], "joint1")
                o2 = self.lookup_joint(n, sp["joint2"], "joint2") if sp["joint2"] is not None \
                    else -1
                for o, a in ((o1, "joint1"), (o2, "joint2")):
                    if o >= 0 and self.joints[o].type not in (2, 3):
                        raise n.error("only hinge and slide joints allowed in constraint", a)
                if o1 == o2:
                    raise n.error("the two joints of an equality constraint must differ")
                etype = EqType.JOINT
                pc = list(sp["polycoef"] or [])
                data[0:5] = pc + [0.0, 1.0, 0.0, 0.0, 0.0][len(pc):]
                data[10] = 1.0
            else:
                if sp["tendon1"] is None:
                    raise n.error("missing attribute 'tendon1'", "tendon1")
                o1 = self._lookup(self.tendon_index, n, sp["tendon1"], "tendon1", "tendon")
                o2 = self._lookup(self.tendon_index, n, sp["tendon2"], "tendon2", "tendon") \
                    if sp["tendon2"] is not None else -1
                if o1 == o2:
                    raise n.error("the two tendons of an equality constraint must differ")
                etype = EqType.TENDON
                pc = list(sp["polycoef"] or [])
                data[0:5] = pc + [0.0, 1.0, 0.0, 0.0, 0.0][len(pc):]
                data[10] = 1.0
            if tag in ("connect", "weld") and objtype == "site":
                etype_site = True
            else:
                etype_site = False
            e.type, e.obj1, e.obj2, e.data, e.site = int(etype), o1, o2, data, etype_site

    # ------------------------------------------------------------------------------------------
    # <tendon>
    # ------------------------------------------------------------------------------------------
    def read_tendons(self, nodes):
        self.tendons = []
        for n in nodes:
            n.check_attrs(())
            for child in n.children:
                self.current = child
                if child.tag not in ("spatial", "fixed"):
                    raise child.error(f"unknown element <{child.tag}> in <tendon>")
                self.read_tendon(child)
        self.check_names(self.tendons, "tendon")
        self.tendon_index = {t.name: t.id for t in self.tendons if t.name}
        self.compile_equalities()

    def read_tendon(self, n):
        cls = self.defclass(n, None)
        skip = ("width", "material", "rgba") if n.tag == "fixed" else ()
        for a in skip:
            if n.has(a):
                raise n.error(f"unknown attribute '{a}' in <fixed>", a)
        sp = self.spec(n, "tendon", cls)
        name = sp["name"] or ""
        path = []
        for w in n.children:
            self.current = w
            if n.tag == "fixed":
                if w.tag != "joint":
                    raise w.error(f"unknown element <{w.tag}> in <fixed>")
                w.check_attrs(("joint", "coef"))
                if not w.has("joint"):
                    raise w.error("missing attribute 'joint'", "joint")
                if not w.has("coef"):
                    raise w.error("missing attribute 'coef'", "coef")
                jid = self.lookup_joint(w, w.text("joint"), "joint")
                if self.joints[jid].type not in (2, 3):
                    raise w.error("fixed tendons can only use hinge and slide joints", "joint")
                path.append((int(WrapType.JOINT), jid, w.float("coef"), w))
            else:
                if w.tag == "site":
                    w.check_attrs(("site",))
                    if not w.has("site"):
                        raise w.error("missing attribute 'site'", "site")
                    path.append((int(WrapType.SITE), self.lookup_site(w, w.text("site"), "site"),
                                 0.0, w))
                elif w.tag == "geom":
                    w.check_attrs(("geom", "sidesite"))
                    if not w.has("geom"):
                        raise w.error("missing attribute 'geom'", "geom")
                    gid = self.lookup_geom(w, w.text("geom"), "geom")
                    gt = self.geoms[gid].type
                    if gt not in (2, 5):
                        raise w.error("wrapping geom must be a sphere or a cylinder", "geom")
                    side = self.lookup_site(w, w.text("sidesite"), "sidesite") \
                        if w.has("sidesite") else -1
                    path.append((int(WrapType.SPHERE if gt == 2 else WrapType.CYLINDER), gid,
                                 float(side), w))
                elif w.tag == "pulley":
                    w.check_attrs(("divisor",))
                    if not w.has("divisor"):
                        raise w.error("missing attribute 'divisor'", "divisor")
                    div = w.float("divisor")
                    if div < 0:
                        raise w.error("pulley has negative divisor", "divisor")
                    path.append((int(WrapType.PULLEY), -1, div, w))
                else:
                    raise w.error(f"unknown element <{w.tag}> in <spatial>")
        self.current = n
        if not path:
            raise n.error(f"tendon '{name}': path cannot be empty")
        if n.tag == "spatial":
            if len(path) < 2:
                raise n.error(f"tendon '{name}': spatial path must contain at least two "
                              "objects")
            if sp["width"] <= 0:
                raise n.error("tendon must have positive width", "width")
            for i, (t, oid, prm, w) in enumerate(path):
                if t == WrapType.PULLEY:
                    if i > 0 and path[i - 1][0] == WrapType.PULLEY:
                        raise w.error("consecutive pulleys in tendon path")
                    if i == len(path) - 1:
                        raise w.error("tendon path ends with a pulley")
                elif t == WrapType.SITE:
                    if (i == 0 or path[i - 1][0] == WrapType.PULLEY) and \
                            (i == len(path) - 1 or path[i + 1][0] == WrapType.PULLEY):
                        raise w.error("site needs a neighbour that is not a pulley")
                    if i < len(path) - 1 and path[i + 1][0] == WrapType.SITE and \
                            path[i + 1][1] == oid:
                        raise w.error("site is repeated in tendon path")
                else:
                    if i == 0 or i == len(path) - 1 or path[i - 1][0] != WrapType.SITE or \
                            path[i + 1][0] != WrapType.SITE:
                        raise w.error("wrapping geom not bracketed by sites")
        rng = list(sp["range"])
        limited = sp["limited"]
        if limited == 2 and not self.cc["autolimits"] and not (rng[0] == 0 and rng[1] == 0):
            raise n.error("tendon has 'range' but not 'limited'; set autolimits=\"true\" or "
                          "give limited explicitly", "range")
        is_lim = _islimited(limited, rng)
        if is_lim and rng[0] >= rng[1]:
            raise n.error("invalid limits in tendon", "range")
        self.reject_set(n, sp, {"armature": "tendon armature",
                                "springyield": "spring yield (plasticity)"})
        if sp["actuatorfrclimited"] == 1 or (sp["actuatorfrclimited"] == 2 and
                                             self.cc["autolimits"] and
                                             sp["actuatorfrcrange"][0] <
                                             sp["actuatorfrcrange"][1]):
            raise self.unsupported(n, "tendon actuator force limits (actuatorfrcrange)",
                                   "actuatorfrcrange")
        sl = sp["springlength"]
        if sl is None:
            springlength = [-1.0, -1.0]
        else:
            raw = n.floats("springlength", 2, exact=False) if n.has("springlength") else sl
            springlength = [raw[0], raw[0]] if len(raw) == 1 else list(raw[:2])
            if springlength[0] > springlength[1]:
                raise n.error("invalid springlength in tendon", "springlength")
        for a in ("solreffriction", "solimpfriction"):
            if sp.given(a):
                self.warn(f"'{a}' has no counterpart in this engine", n)
        if sp["material"] and sp["material"] not in self.mat_index:
            raise n.error(f"unknown material '{sp['material']}'", "material")
        eps, kap, rmin = _soft(sp, "epsilon", "kappa", "solreflimit", "solimplimit", self.warn_once,
                         f"tendon '{name}' (line {n.line})")
        self.tendons.append(Obj(
            name=name, node=n, id=len(self.tendons), path=path, limited=is_lim, range=rng,
            margin=sp["margin"], stiffness=sp["stiffness"], damping=sp["damping"],
            frictionloss=sp["frictionloss"], springlength=springlength, epsilon=eps,
            kappa=kap, rmin=rmin, width=sp["width"], rgba=list(sp["rgba"])))

    # ------------------------------------------------------------------------------------------
    # <actuator>
    # ------------------------------------------------------------------------------------------
    def _apply_actuator(self, a, n, is_default):
        """MuJoCo's OneActuator: read common attributes, then expand the shortcut."""
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
            if tag in ("motor", "position", "velocity", "intvelocity", "damper", "cylinder",
                       "general"):
                pass
            if tag != "general" and tag != "adhesion":
                allowed -= {"body"}
            if tag == "general":
                pass
        n.check_attrs(allowed)
        for k in ("group",):
            if n.has(k):
                a[k] = n.int(k)
        for k in ("ctrllimited", "forcelimited", "actlimited"):
            if n.has(k) and k in table:
                a[k] = _read(n, k, table[k])
        for k in ("ctrlrange", "forcerange", "actrange", "lengthrange"):
            if n.has(k) and k in table:
                a[k] = n.floats(k, 2)
        if n.has("gear") and "gear" in table:
            g = n.floats("gear", 6, exact=False)
            a["gear"] = g + a["gear"][len(g):]
        if n.has("cranklength") and "cranklength" in table:
            a["cranklength"] = n.float("cranklength")
        for k in ("armature", "damping", "delay", "nsample", "interp", "ffrange", "velrange",
                  "input", "inheritrange"):
            if n.has(k) and k in table:
                v = _read(n, k, table[k])
                a[k] = v + a[k][len(v):] if table[k][0] == "p" else v
        if n.has("user"):
            n.floats("user", None, minimum=0)
        a["shortcut"] = tag
        if tag == "general":
            for k in ("dyntype", "gaintype", "biastype"):
                if n.has(k):
                    a[k] = _read(n, k, table[k])
            if n.has("actearly"):
                a["actearly"] = n.bool("actearly")
            for k in ("dynprm", "gainprm", "biasprm"):
                if n.has(k):
                    v = n.floats(k, 10, exact=False)
                    a[k] = v + a[k][len(v):]
            if n.has("actdim"):
                a["actdim"] = n.int("actdim")
        elif tag == "motor":
            a["gainprm"] = [1.0] + [0.0] * 9
            a["biasprm"] = [0.0] * 10
            a["dynprm"] = [1.0] + [0.0] * 9
            a["dyntype"], a["gaintype"], a["biastype"] = 0, 0, 0
        elif tag in ("position", "intvelocity"):
            kp = n.float("kp", a["gainprm"][0])
            kv = n.float("kv")
            dampratio = n.float("dampratio")
            timeconst = n.float("timeconst") if tag == "position" else None
            inherit = n.float("inheritrange", a["inheritrange"])
            gp = [kp] + [0.0] * 9
            bp = [0.0, -kp, a["biasprm"][2]] + [0.0] * 7
            dp = [1.0] + [0.0] * 9
            a["dyntype"] = 0
            gp[0] = kp
            if kv is not None and dampratio is not None:
                raise n.error("kv and dampratio cannot both be defined", "dampratio")
            if kv is not None:
                if kv < 0:
                    raise n.error("kv cannot be negative", "kv")
                bp[2] = -kv
            if dampratio is not None:
                if dampratio < 0:
                    raise n.error("dampratio cannot be negative", "dampratio")
                bp[2] = dampratio       # positive: converted to damping at qpos0 by set_const
            if timeconst is not None:
                if timeconst < 0:
                    raise n.error("timeconst cannot be negative", "timeconst")
                dp[0] = timeconst
                a["dyntype"] = 0 if timeconst == 0 else 3
            a["inheritrange"] = inherit
            if inherit > 0 and (a["ctrlrange"][0] or a["ctrlrange"][1]) and tag == "position":
                raise n.error("ctrlrange and inheritrange cannot both be defined",
                              "inheritrange")
            a["gaintype"], a["biastype"] = 0, 1
            a["gainprm"], a["biasprm"], a["dynprm"] = gp, bp, dp
            if tag == "intvelocity":
                a["dyntype"] = 1
                a["actlimited"] = 1
                if inherit > 0 and (a["actrange"][0] or a["actrange"][1]):
                    raise n.error("actrange and inheritrange cannot both be defined",
                                  "inheritrange")
        elif tag == "velocity":
            kv = n.float("kv", a["gainprm"][0])
            a["biasprm"] = [0.0] * 10
            a["gainprm"] = [kv] + [0.0] * 9
            a["dynprm"] = [1.0] + [0.0] * 9
            a["biasprm"][2] = -kv
            a["dyntype"], a["gaintype"], a["biastype"] = 0, 0, 1
        elif tag == "damper":
            kv = n.float("kv", -a["gainprm"][2] if a["gaintype"] == 1 else 0.0)
            a["gainprm"] = [0.0] * 10
            a["gainprm"][2] = -kv
            a["ctrllimited"] = 1
            a["dyntype"], a["gaintype"], a["biastype"] = 0, 1, 0
            if kv < 0:
                raise n.error("damping coefficient cannot be negative", "kv")
            if a["ctrlrange"][0] < 0 or a["ctrlrange"][1] < 0:
                raise n.error("damper control range cannot be negative", "ctrlrange")
        elif tag == "cylinder":
            timeconst = n.float("timeconst", a["dynprm"][0])
            bias = n.floats("bias", 3)
            area = n.float("area", a["gainprm"][0])
            diameter = n.float("diameter", -1.0)
            dp, bp, gp = list(a["dynprm"]), list(a["biasprm"]), list(a["gainprm"])
            dp[0] = timeconst
            if bias is not None:
                bp[0:3] = bias
            gp[0] = area
            if diameter >= 0:
                gp[0] = PI / 4 * diameter * diameter
            a["dynprm"], a["biasprm"], a["gainprm"] = dp, bp, gp
            a["dyntype"], a["gaintype"], a["biastype"] = 2, 0, 1
        elif tag == "muscle":
            self._set_to_muscle(a, n)
        elif tag == "adhesion":
            gain = n.float("gain", a["gainprm"][0])
            if n.has("ctrlrange"):
                a["ctrlrange"] = n.floats("ctrlrange", 2)
            a["gainprm"] = [gain] + a["gainprm"][1:]
            a["ctrllimited"] = 1
            a["gaintype"], a["biastype"] = 0, 0
            if gain < 0:
                raise n.error("adhesion gain cannot be negative", "gain")
            if a["ctrlrange"][0] < 0 or a["ctrlrange"][1] < 0:
                raise n.error("adhesion control range cannot be negative", "ctrlrange")

    @staticmethod
    def _set_to_muscle(a, n):
        """The <muscle> shortcut (MuJoCo's mjs_setToMuscle): dynprm = (timeconst[2], tausmooth),
        gainprm = biasprm = (range[2], force, scale, lmin, lmax, vmax, fpmax, fvmax); parameters
        still at <general>'s defaults take the muscle's defaults first, then the element's
        attributes apply (a force of -1 given explicitly restores the scaling by acc0)."""
        dp, gp = list(a["dynprm"]), list(a["gainprm"])
        for k, general, muscle in ((0, 1.0, 0.01), (1, 0.0, 0.04)):
            if dp[k] == general:
                dp[k] = muscle
        for k, general, muscle in ((0, 1.0, 0.75), (1, 0.0, 1.05), (2, 0.0, -1.0),
                                   (3, 0.0, 200.0), (4, 0.0, 0.5), (5, 0.0, 1.6), (6, 0.0, 1.5),
                                   (7, 0.0, 1.3), (8, 0.0, 1.2)):
            if gp[k] == general:
                gp[k] = muscle
        tausmooth = n.float("tausmooth", dp[2])
        if tausmooth < 0:
            raise n.error("muscle tausmooth cannot be negative", "tausmooth")
        dp[2] = tausmooth
        if n.has("timeconst"):
            dp[0:2] = n.floats("timeconst", 2)
        if n.has("range"):
            gp[0:2] = n.floats("range", 2)
        for k, attr in enumerate(("force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax")):
            if n.has(attr):
                gp[2 + k] = n.float(attr)
        a["dynprm"], a["gainprm"] = dp, gp
        a["biasprm"] = gp[:9] + list(a["biasprm"][9:])
        a["dyntype"], a["gaintype"], a["biastype"] = 4, 2, 2

    def read_actuators(self, nodes):
        self.actuators = []
        for n in nodes:
            n.check_attrs(())
            for child in n.children:
                self.current = child
                if child.tag == "plugin":
                    raise self.unsupported(child, "actuator plugins")
                if child.tag in ("orientation", "pid", "dcmotor"):
                    raise self.unsupported(child, f"<{child.tag}> actuators")
                if child.tag not in S.ACT_SPECIFIC:
                    raise child.error(f"unknown element <{child.tag}> in <actuator>")
                self.read_actuator(child)
        self.check_names(self.actuators, "actuator")

    def read_actuator(self, n):
        cls = self.defclass(n, None)
        a = dict(cls.act[n.tag])
        self._apply_actuator(a, n, is_default=False)
        name = n.text("name", "")
        for prm, kind in ((a["gainprm"], a["gaintype"]), (a["biasprm"], a["biastype"])):
            if kind != 2:       # muscle gain or bias
                continue
            if prm[0] >= prm[1]:
                raise n.error("range[0] < range[1] required in muscle", "range")
            if prm[4] >= 1 or prm[5] <= 1:
                raise n.error("lmin < 1 < lmax required in muscle",
                              "lmin" if prm[4] >= 1 else "lmax")
            if prm[3] <= 0 or prm[6] <= 0 or prm[7] <= 0 or prm[8] <= 0:
                raise n.error("positive scale, vmax, fpmax and fvmax required in muscle")
        # MuJoCo 4 actuator features without a counterpart here (the history buffer size
        # nsample and its interpolation only matter together with a delay)
        default = S.actuator_default()
        for k, feature in (("armature", "actuator armature"), ("damping", "actuator damping"),
                           ("delay", "actuator delays"), ("ffrange", "actuator ffrange"),
                           ("velrange", "actuator velrange"), ("input", "actuator input")):
            if a[k] != default[k]:
                raise self.unsupported(n, feature, k)
        for k, enum in (("dyntype", 5), ("gaintype", 3), ("biastype", 3)):
            if a[k] == enum:
                raise self.unsupported(n, f"user-defined actuator {k} (callbacks)", k)
        # transmission
        targets = [t for t in ("joint", "jointinparent", "tendon", "cranksite", "site", "body")
                   if n.has(t)]
        if len(targets) > 1:
            raise n.error("actuator can have at most one transmission target", targets[1])
        if not targets:
            raise n.error("missing transmission target for actuator (joint, tendon, site, "
                          "body ...)")
        t = targets[0]
        tname = n.text(t)
        trnid = [-1, -1]
        if (n.has("cranklength") or n.has("slidersite")) and t != "cranksite":
            raise n.error("cranklength and slidersite can only be used in slidercrank "
                          "transmission", "slidersite" if n.has("slidersite") else "cranklength")
        if n.has("refsite") and t != "site":
            raise n.error("refsite can only be used with site transmission", "refsite")
        if t in ("joint", "jointinparent"):
            trntype = TrnType.JOINT if t == "joint" else TrnType.JOINTINPARENT
            trnid[0] = self.lookup_joint(n, tname, t)
            if self.joints[trnid[0]].type in (0, 1):
                raise self.unsupported(n, "actuator transmission on a ball or free joint", t)
        elif t == "tendon":
            trntype = TrnType.TENDON
            trnid[0] = self._lookup(self.tendon_index, n, tname, t, "tendon")
        elif t == "cranksite":
            raise self.unsupported(n, "slider-crank transmission", "cranksite")
        elif t == "site":
            trntype = TrnType.SITE
            trnid[0] = self.lookup_site(n, tname, t)
            if n.has("refsite"):
                self.lookup_site(n, n.text("refsite"), "refsite")
                raise self.unsupported(n, "site transmission with a reference site (refsite)",
                                       "refsite")
        else:
            trntype = TrnType.BODY
            trnid[0] = self.lookup_body(n, tname, t)
        # inheritrange
        if a["gaintype"] == 0 and a["biastype"] == 1 and a["gainprm"][0] == -a["biasprm"][1] \
                and a["inheritrange"] > 0:
            rng_key = "ctrlrange" if a["dyntype"] in (0, 3) else "actrange"
            if a["dyntype"] not in (0, 3, 1):
                raise n.error("inheritrange only available for position and intvelocity "
                              "actuators", "inheritrange")
            if trntype == TrnType.JOINT:
                j = self.joints[trnid[0]]
                if j.type not in (2, 3):
                    raise n.error("inheritrange can only be used with hinge and slide joints",
                                  "inheritrange")
                tr = j.range
            elif trntype == TrnType.TENDON:
                tr = self.tendons[trnid[0]].range
            else:
                raise n.error("inheritrange can only be used with joint and tendon "
                              "transmission", "inheritrange")
            if tr[0] == tr[1]:
                raise n.error("inheritrange used but target has no range defined",
                              "inheritrange")
            mean = 0.5 * (tr[1] + tr[0])
            radius = 0.5 * (tr[1] - tr[0]) * a["inheritrange"]
            a[rng_key] = [mean - radius, mean + radius]
        # limits
        lim = {}
        for k, r in (("force", "forcerange"), ("ctrl", "ctrlrange"), ("act", "actrange")):
            limited = a[k + "limited"]
            rng = a[r]
            if limited == 2 and not self.cc["autolimits"] and not (rng[0] == 0 and rng[1] == 0):
                raise n.error(f"actuator has '{r}' but not '{k}limited'; set "
                              "autolimits=\"true\" or give it explicitly", r)
            lim[k] = _islimited(limited, rng)
            if lim[k] and rng[0] >= rng[1]:
                raise n.error(f"invalid {r} for actuator", r)
        if lim["act"] and a["dyntype"] == 0:
            raise n.error("actrange specified but dyntype is 'none' in actuator", "actrange")
        actdim = a["actdim"]
        if actdim > 1 and a["dyntype"] != 5:
            raise n.error("actdim > 1 is only allowed for dyntype 'user'", "actdim")
        if actdim == 1 and a["dyntype"] == 0:
            raise n.error("invalid actdim 1 in stateless actuator", "actdim")
        if actdim == 0 and a["dyntype"] != 0:
            raise n.error("invalid actdim 0 in stateful actuator", "actdim")
        if actdim < 0:
            actdim = 1 if a["dyntype"] != 0 else 0
        self.actuators.append(Obj(
            name=name, node=n, trntype=int(trntype), trnid=trnid, dyntype=a["dyntype"],
            gaintype=a["gaintype"], biastype=a["biastype"], actnum=actdim, group=a["group"],
            ctrllimited=lim["ctrl"], forcelimited=lim["force"], actlimited=lim["act"],
            actearly=bool(a["actearly"]), dynprm=list(a["dynprm"]), gainprm=list(a["gainprm"]),
            biasprm=list(a["biasprm"]), ctrlrange=list(a["ctrlrange"]),
            forcerange=list(a["forcerange"]), actrange=list(a["actrange"]),
            lengthrange=list(a["lengthrange"]), gear=list(a["gear"]),
            cranklength=a["cranklength"]))

    # ------------------------------------------------------------------------------------------
    # <sensor>
    # ------------------------------------------------------------------------------------------
    def read_sensors(self, nodes):
        self.sensors = sensor_specs.read_sensors(self, nodes)
        self.check_names([Obj(name=sp.pop("node").text("name", ""), node=n) for sp, n in
                          zip(self.sensors, [ch for n in nodes for ch in n.children])],
                         "sensor")

    def lookup_named(self, node, kind, name, attr):
        if name is None:
            raise node.error(f"missing attribute '{attr}'", attr)
        index = {"body": self.body_index, "xbody": self.body_index, "joint": self.joint_index,
                 "geom": self.geom_index, "site": self.site_index, "camera": self.cam_index,
                 "tendon": self.tendon_index,
                 "actuator": {a.name: i for i, a in enumerate(self.actuators) if a.name}}[kind]
        return self._lookup(index, node, name, attr, kind)

    # ------------------------------------------------------------------------------------------
    # <keyframe>
    # ------------------------------------------------------------------------------------------
    def read_keyframes(self, nodes):
        self.keys = []
        for n in nodes:
            n.check_attrs(())
            for child in n.children:
                self.current = child
                if child.tag != "key":
                    raise child.error(f"unknown element <{child.tag}> in <keyframe>")
                child.check_attrs(("name", "time", "qpos", "qvel", "act", "mpos", "mquat",
                                   "ctrl", "plastic"))
                if child.has("plastic"):
                    raise self.unsupported(child, "plastic deformation state in keyframes",
                                           "plastic")
                self.keys.append(child)

    # ------------------------------------------------------------------------------------------
    # assemble the Model
    # ------------------------------------------------------------------------------------------
    def assemble(self):
        bodies, joints, geoms = self.bodies, self.joints, self.geoms
        sites, cams, lights = self.sites, self.cams, self.lights
        nbody, njnt, ngeom = len(bodies), len(joints), len(geoms)
        nq = sum({0: 7, 1: 4, 2: 1, 3: 1}[j.type] for j in joints)
        nv = sum({0: 6, 1: 3, 2: 1, 3: 1}[j.type] for j in joints)
        nu = len(self.actuators)
        na = sum(a.actnum for a in self.actuators)
        mocap = [b for b in bodies if b.mocap]
        nmocap = len(mocap)
        A = {}

        def arr(name, shape, dtype=float, fill=0.0):
            A[name] = np.full(shape, fill, dtype=np.int64 if dtype is int else np.float64)
            return A[name]

        o = self.opt
        for k in ("timestep", "density", "viscosity", "tolerance", "epsilon", "kappa", "rmin",
                  "impratio", "noslip_tolerance"):
            arr("opt_" + k, 1)[0] = o[k]
        for k in ("gravity", "wind", "magnetic"):
            arr("opt_" + k, 3)[:] = o[k]
        for k in ("integrator", "solver", "cone", "stabilization", "iterations",
                  "noslip_iterations", "disableflags", "enableflags"):
            arr("opt_" + k, 1, int)[0] = o[k]

        # bodies
        for k in ("parentid", "rootid", "weldid", "mocapid", "jntnum", "jntadr", "dofnum",
                  "dofadr", "geomnum", "geomadr", "sameframe"):
            arr("body_" + k, nbody, int)
        for k, w in (("pos", 3), ("quat", 4), ("ipos", 3), ("iquat", 4), ("inertia", 3)):
            arr("body_" + k, (nbody, w))
        for k in ("mass", "subtreemass", "gravcomp"):
            arr("body_" + k, nbody)
        jntadr = dofadr = qposadr = 0
        mocapid = 0
        # joints / dofs
        jt = {k: arr("jnt_" + k, njnt, int) for k in ("type", "qposadr", "dofadr", "bodyid",
                                                       "actfrclimited",
                                                       "group", "limited")}
        arr("jnt_pos", (njnt, 3))
        arr("jnt_axis", (njnt, 3))
        arr("jnt_range", (njnt, 2))
        arr("jnt_actfrcrange", (njnt, 2))
        for k in ("stiffness", "margin", "epsilon", "kappa", "rmin"):
            arr("jnt_" + k, njnt)
        for k in ("bodyid", "jntid", "parentid", "Madr"):
            arr("dof_" + k, nv, int)
        for k in ("armature", "damping", "frictionloss"):
            arr("dof_" + k, nv)
        qpos0 = arr("qpos0", nq)
        qpos_spring = arr("qpos_spring", nq)
        lastdof = {}
        for b in bodies:
            i = b.id
            A["body_parentid"][i] = b.parent.id if b.parent else 0
            A["body_rootid"][i] = b.rootid
            A["body_weldid"][i] = b.weldid
            if b.mocap:
                A["body_mocapid"][i] = mocapid
                mocapid += 1
            else:
                A["body_mocapid"][i] = -1
            A["body_jntnum"][i] = len(b.joints)
            A["body_jntadr"][i] = jntadr if b.joints else -1
            A["body_geomnum"][i] = len(b.geoms)
            A["body_geomadr"][i] = b.geoms[0].id if b.geoms else -1
            A["body_pos"][i] = b.pos
            A["body_quat"][i] = b.quat
            A["body_ipos"][i] = b.ipos
            A["body_iquat"][i] = b.iquat
            A["body_mass"][i] = b.mass
            A["body_inertia"][i] = b.inertia
            A["body_gravcomp"][i] = b.gravcomp
            A["body_sameframe"][i] = I.same_frame(b.ipos, b.iquat)
            ndof = sum({0: 6, 1: 3, 2: 1, 3: 1}[j.type] for j in b.joints)
            A["body_dofnum"][i] = ndof
            A["body_dofadr"][i] = dofadr if ndof else -1
            last = lastdof.get(b.parent.id, -1) if b.parent else -1
            for j in b.joints:
                jid = j.id
                jt["type"][jid] = j.type
                jt["qposadr"][jid] = qposadr
                jt["dofadr"][jid] = dofadr
                jt["bodyid"][jid] = i
                jt["group"][jid] = j.group
                jt["limited"][jid] = int(j.limited)
                A["jnt_pos"][jid] = j.pos
                A["jnt_axis"][jid] = j.axis
                A["jnt_range"][jid] = j.range
                jt["actfrclimited"][jid] = int(j.actfrclimited)
                A["jnt_actfrcrange"][jid] = j.actfrcrange
                A["jnt_stiffness"][jid] = j.stiffness
                A["jnt_margin"][jid] = j.margin
                A["jnt_epsilon"][jid] = j.epsilon
                A["jnt_kappa"][jid] = j.kappa
                A["jnt_rmin"][jid] = j.rmin
                if j.type == 0:
                    qpos0[qposadr:qposadr + 3] = b.pos
                    qpos0[qposadr + 3:qposadr + 7] = b.quat
                    qpos_spring[qposadr:qposadr + 7] = qpos0[qposadr:qposadr + 7]
                elif j.type == 1:
                    qpos0[qposadr:qposadr + 4] = [1, 0, 0, 0]
                    qpos_spring[qposadr:qposadr + 4] = [1, 0, 0, 0]
                else:
                    qpos0[qposadr] = j.ref
                    qpos_spring[qposadr] = j.springref
                for _ in range({0: 6, 1: 3, 2: 1, 3: 1}[j.type]):
                    A["dof_bodyid"][dofadr] = i
                    A["dof_jntid"][dofadr] = jid
                    A["dof_armature"][dofadr] = j.armature
                    A["dof_damping"][dofadr] = j.damping
                    A["dof_frictionloss"][dofadr] = j.frictionloss
                    A["dof_parentid"][dofadr] = last
                    last = dofadr
                    dofadr += 1
                jntadr += 1
                qposadr += {0: 7, 1: 4, 2: 1, 3: 1}[j.type]
            lastdof[i] = last
        nM = 0
        for i in range(nv):
            A["dof_Madr"][i] = nM
            j = i
            while j >= 0:
                nM += 1
                j = A["dof_parentid"][j]
        for i in range(nbody - 1, 0, -1):
            A["body_subtreemass"][i] += A["body_mass"][i]
            A["body_subtreemass"][A["body_parentid"][i]] += A["body_subtreemass"][i]
        A["body_subtreemass"][0] += A["body_mass"][0]

        # geoms
        gi = {k: arr("geom_" + k, ngeom, int) for k in ("type", "contype", "conaffinity",
                                                        "condim", "bodyid", "dataid", "matid",
                                                        "group", "priority", "sameframe")}
        for k, w in (("size", 3), ("pos", 3), ("quat", 4), ("friction", 3), ("rgba", 4),
                     ("fluid", 12)):
            arr("geom_" + k, (ngeom, w))
        for k in ("rbound", "margin", "gap", "epsilon", "kappa", "rmin"):
            arr("geom_" + k, ngeom)
        for g in geoms:
            k = g.id
            gi["type"][k] = g.type
            gi["contype"][k] = g.contype
            gi["conaffinity"][k] = g.conaffinity
            gi["condim"][k] = g.condim
            gi["bodyid"][k] = g.body.id
            gi["dataid"][k] = g.meshid if g.type == 7 else (g.hfieldid if g.type == 1 else -1)
            gi["matid"][k] = g.matid
            gi["group"][k] = g.group
            gi["priority"][k] = g.priority
            A["geom_size"][k] = g.size
            A["geom_pos"][k] = g.pos
            A["geom_quat"][k] = g.quat
            A["geom_friction"][k] = g.friction
            A["geom_rgba"][k] = g.rgba
            A["geom_fluid"][k] = g.fluid
            A["geom_sameframe"][k] = I.same_frame(g.pos, g.quat, g.body.ipos, g.body.iquat)
            A["geom_margin"][k] = g.margin
            A["geom_gap"][k] = g.gap
            A["geom_epsilon"][k] = g.epsilon
            A["geom_kappa"][k] = g.kappa
            A["geom_rmin"][k] = g.rmin
            A["geom_rbound"][k] = I.geom_rbound(g.type, g.size, g.aamm,
                                                g.hfield["size"] if g.hfield else None)

        # sites
        nsite = len(sites)
        for k in ("type", "bodyid", "group", "sameframe"):
            arr("site_" + k, nsite, int)
        for k, w in (("size", 3), ("pos", 3), ("quat", 4), ("rgba", 4)):
            arr("site_" + k, (nsite, w))
        for s in sites:
            A["site_type"][s.id] = s.type
            A["site_bodyid"][s.id] = s.body.id
            A["site_group"][s.id] = s.group
            A["site_size"][s.id] = s.size
            A["site_pos"][s.id] = s.pos
            A["site_quat"][s.id] = s.quat
            A["site_rgba"][s.id] = s.rgba
            A["site_sameframe"][s.id] = I.same_frame(s.pos, s.quat, s.body.ipos, s.body.iquat)

        # cameras
        ncam = len(cams)
        for k in ("mode", "bodyid", "targetbodyid"):
            arr("cam_" + k, ncam, int)
        for k, w in (("pos", 3), ("quat", 4), ("poscom0", 3), ("pos0", 3), ("mat0", 9)):
            arr("cam_" + k, (ncam, w))
        arr("cam_fovy", ncam)
        for c in cams:
            A["cam_mode"][c.id] = c.mode
            A["cam_bodyid"][c.id] = c.body.id
            A["cam_targetbodyid"][c.id] = c.targetbodyid
            A["cam_pos"][c.id] = c.pos
            A["cam_quat"][c.id] = c.quat
            A["cam_fovy"][c.id] = c.fovy
        arr("cam_projection", ncam, int)
        arr("cam_resolution", (ncam, 2), int)
        for k, w in (("sensorsize", 2), ("intrinsic", 4)):
            arr("cam_" + k, (ncam, w))
        for c in cams:
            for k in ("projection", "resolution", "sensorsize", "intrinsic"):
                A["cam_" + k][c.id] = getattr(c, k)

        # lights
        nlight = len(lights)
        for k in ("mode", "bodyid", "targetbodyid", "directional", "castshadow", "active"):
            arr("light_" + k, nlight, int)
        for k in ("pos", "dir", "poscom0", "pos0", "dir0", "attenuation", "ambient", "diffuse",
                  "specular"):
            arr("light_" + k, (nlight, 3))
        for k in ("cutoff", "exponent"):
            arr("light_" + k, nlight)
        for lt in lights:
            k = lt.id
            A["light_mode"][k] = lt.mode
            A["light_bodyid"][k] = lt.body.id
            A["light_targetbodyid"][k] = lt.targetbodyid
            A["light_directional"][k] = int(lt.directional)
            A["light_castshadow"][k] = int(lt.castshadow)
            A["light_active"][k] = int(lt.active)
            for f in ("pos", "dir", "attenuation", "ambient", "diffuse", "specular", "cutoff",
                      "exponent"):
                A["light_" + f][k] = getattr(lt, f)

        # meshes
        nmesh = len(self.meshes)
        vert = [np.asarray(m.info.vert, dtype=np.float64).reshape(-1, 3) for m in self.meshes]
        face = [np.asarray(m.info.face, dtype=np.int64).reshape(-1, 3) for m in self.meshes]
        nmeshvert = sum(len(v) for v in vert)
        nmeshface = sum(len(f) for f in face)
        for k in ("vertadr", "vertnum", "faceadr", "facenum"):
            arr("mesh_" + k, nmesh, int)
        A["mesh_vert"] = np.concatenate(vert) if vert else np.zeros((0, 3))
        A["mesh_face"] = np.concatenate(face) if face else np.zeros((0, 3), dtype=np.int64)
        va = fa = 0
        for i in range(nmesh):
            A["mesh_vertadr"][i], A["mesh_vertnum"][i] = va, len(vert[i])
            A["mesh_faceadr"][i], A["mesh_facenum"][i] = fa, len(face[i])
            va += len(vert[i])
            fa += len(face[i])

        # height fields
        nhfield = len(self.hfields)
        hdata = [h["data"] for h in self.hfields]
        nhfielddata = sum(len(x) for x in hdata)
        for k in ("nrow", "ncol", "adr"):
            arr("hfield_" + k, nhfield, int)
        arr("hfield_size", (nhfield, 4))
        A["hfield_data"] = np.concatenate(hdata) if hdata else np.zeros(0)
        adr = 0
        for i, h in enumerate(self.hfields):
            A["hfield_nrow"][i], A["hfield_ncol"][i] = h["nrow"], h["ncol"]
            A["hfield_adr"][i] = adr
            A["hfield_size"][i] = h["size"]
            adr += len(hdata[i])

        # tendons and wraps
        tendons = self.tendons
        ntendon = len(tendons)
        nwrap = sum(len(t.path) for t in tendons)
        for k in ("adr", "num", "limited"):
            arr("tendon_" + k, ntendon, int)
        arr("tendon_range", (ntendon, 2))
        arr("tendon_lengthspring", (ntendon, 2))
        arr("tendon_rgba", (ntendon, 4))
        for k in ("margin", "stiffness", "damping", "frictionloss", "length0", "epsilon",
                  "kappa", "rmin", "width"):
            arr("tendon_" + k, ntendon)
        arr("wrap_type", nwrap, int)
        arr("wrap_objid", nwrap, int)
        arr("wrap_prm", nwrap)
        adr = 0
        for t in tendons:
            k = t.id
            A["tendon_adr"][k] = adr
            A["tendon_num"][k] = len(t.path)
            A["tendon_limited"][k] = int(t.limited)
            A["tendon_range"][k] = t.range
            A["tendon_lengthspring"][k] = t.springlength
            A["tendon_rgba"][k] = t.rgba
            for f in ("margin", "stiffness", "damping", "frictionloss", "epsilon", "kappa",
                      "rmin", "width"):
                A["tendon_" + f][k] = getattr(t, f)
            for wt, oid, prm, _ in t.path:
                A["wrap_type"][adr] = wt
                A["wrap_objid"][adr] = oid
                A["wrap_prm"][adr] = prm
                adr += 1

        # actuators
        acts = self.actuators
        for k in ("trntype", "dyntype", "gaintype", "biastype", "actadr", "actnum", "group",
                  "ctrllimited", "forcelimited", "actlimited", "actearly"):
            arr("actuator_" + k, nu, int)
        arr("actuator_trnid", (nu, 2), int)
        for k in ("dynprm", "gainprm", "biasprm"):
            arr("actuator_" + k, (nu, 10))
        for k in ("ctrlrange", "forcerange", "actrange", "lengthrange"):
            arr("actuator_" + k, (nu, 2))
        arr("actuator_gear", (nu, 6))
        arr("actuator_cranklength", nu)
        arr("actuator_length0", nu)
        actadr = 0
        for i, a in enumerate(acts):
            for f in ("trntype", "dyntype", "gaintype", "biastype", "actnum", "group"):
                A["actuator_" + f][i] = getattr(a, f)
            for f in ("ctrllimited", "forcelimited", "actlimited", "actearly"):
                A["actuator_" + f][i] = int(getattr(a, f))
            A["actuator_actadr"][i] = actadr if a.actnum else -1
            actadr += a.actnum
            A["actuator_trnid"][i] = a.trnid
            for f in ("dynprm", "gainprm", "biasprm", "ctrlrange", "forcerange", "actrange",
                      "lengthrange", "gear", "cranklength"):
                A["actuator_" + f][i] = getattr(a, f)

        # equality
        neq = len(self.eqs)
        for k in ("type", "obj1id", "obj2id", "active0"):
            arr("eq_" + k, neq, int)
        arr("eq_objtype", neq, int)
        arr("eq_data", (neq, 11))
        arr("eq_epsilon", neq)
        arr("eq_kappa", neq)
        arr("eq_rmin", neq)
        arr("eq_hard", neq, int)
        for i, e in enumerate(self.eqs):
            A["eq_type"][i] = e.type
            A["eq_obj1id"][i] = e.obj1
            A["eq_obj2id"][i] = e.obj2
            A["eq_active0"][i] = int(e.active)
            A["eq_objtype"][i] = OBJ_SITE if e.site else OBJ_BODY
            A["eq_data"][i] = e.data
            A["eq_epsilon"][i] = e.epsilon
            A["eq_kappa"][i] = e.kappa
            A["eq_rmin"][i] = e.rmin
            A["eq_hard"][i] = int(e.hard)

        # pairs, excludes
        npair = len(self.pairs)
        for k in ("geom1", "geom2", "condim"):
            arr("pair_" + k, npair, int)
        arr("pair_friction", (npair, 5))
        for k in ("margin", "gap", "epsilon", "kappa", "rmin"):
            arr("pair_" + k, npair)
        for i, p in enumerate(self.pairs):
            A["pair_geom1"][i], A["pair_geom2"][i], A["pair_condim"][i] = p.g1, p.g2, p.condim
            A["pair_friction"][i] = p.friction
            for f in ("margin", "gap", "epsilon", "kappa", "rmin"):
                A["pair_" + f][i] = getattr(p, f)
        nexclude = len(self.excludes)
        arr("exclude_body1", nexclude, int)[:] = [e.b1 for e in self.excludes]
        arr("exclude_body2", nexclude, int)[:] = [e.b2 for e in self.excludes]
        # convex hull graphs of the colliding meshes (support functions climb them)
        from .mesh import mesh_graphs
        A["mesh_graphadr"], A["mesh_graph"], A["mesh_extrema"] = mesh_graphs(
            [m.info for m in self.meshes], A["geom_type"], A["geom_dataid"], A["geom_contype"],
            A["geom_conaffinity"], {g for p in self.pairs for g in (p.g1, p.g2)})

        # keyframes
        nkey_min = int(self.size.get("nkey", 0) or 0)
        nkey = max(len(self.keys), nkey_min)
        arr("key_time", nkey)
        kq = arr("key_qpos", (nkey, nq))
        kv = arr("key_qvel", (nkey, nv))
        ka = arr("key_act", (nkey, na))
        kc = arr("key_ctrl", (nkey, nu))
        kmp = arr("key_mpos", (nkey, nmocap, 3))
        kmq = arr("key_mquat", (nkey, nmocap, 4))
        key_names = []
        for i in range(nkey):
            kq[i] = qpos0
            for m_i, b in enumerate(mocap):
                kmp[i, m_i] = b.pos
                kmq[i, m_i] = b.quat
            if i >= len(self.keys):
                key_names.append("")
                continue
            n = self.keys[i]
            self.current = n
            key_names.append(n.text("name", ""))
            A["key_time"][i] = n.float("time", 0.0)
            # a key may give the first values only: qpos is completed from qpos0, qvel, act
            # and ctrl with zeros (as MuJoCo); mocap poses must be complete or are ignored
            for attr, target, size in (("qpos", kq, nq), ("qvel", kv, nv), ("act", ka, na),
                                       ("ctrl", kc, nu), ("mpos", kmp, 3 * nmocap),
                                       ("mquat", kmq, 4 * nmocap)):
                if n.has(attr):
                    v = n.floats(attr, None, minimum=0)
                    if len(v) > size:
                        raise n.error(f"expected at most {size} numbers ({attr} size), got "
                                      f"{len(v)}", attr)
                    if attr in ("qpos", "qvel", "act", "ctrl"):
                        target[i, :len(v)] = v
                    elif len(v) == size:
                        target[i] = np.reshape(v, target[i].shape)
            for j in joints:
                if j.type in (0, 1):
                    a0 = A["jnt_qposadr"][j.id] + (3 if j.type == 0 else 0)
                    q = list(kq[i, a0:a0 + 4])
                    I.normvec(q)
                    kq[i, a0:a0 + 4] = q
            for m_i in range(nmocap):
                q = list(kmq[i, m_i])
                I.normvec(q)
                kmq[i, m_i] = q
        self.check_names([Obj(name=nm, node=self.keys[i]) for i, nm in
                          enumerate(key_names[:len(self.keys)])], "key")

        # total mass scaling (MuJoCo's settotalmass)
        stm = self.cc["settotalmass"]
        if stm > 0:
            total = A["body_mass"][1:].sum()
            if total > I.MINVAL:
                scale = stm / total
                A["body_mass"] *= scale
                A["body_inertia"] *= scale
                A["body_subtreemass"] *= scale

        sizes = dict(nq=nq, nv=nv, nu=nu, na=na, nbody=nbody, njnt=njnt, ngeom=ngeom,
                     nsite=nsite, ncam=ncam, nlight=nlight, nmesh=nmesh, nmeshvert=nmeshvert,
                     nmeshface=nmeshface, nmeshgraph=len(A["mesh_graph"]), nhfield=nhfield,
                     nhfielddata=nhfielddata, ntendon=ntendon, nwrap=nwrap, neq=neq, nkey=nkey,
                     npair=npair, nexclude=nexclude, nM=nM, nmocap=nmocap,
                     nmat=len(self.materials))
        A["mat_rgba"] = np.array([m.rgba for m in self.materials], dtype=float).reshape(-1, 4)
        sensor_arrays, sensor_sizes = sensor_specs.sensor_arrays(self.sensors)
        A.update(sensor_arrays)
        sizes.update(sensor_sizes)
        names = {"body": [b.name for b in bodies], "joint": [j.name for j in joints],
                 "geom": [g.name for g in geoms], "site": [s.name for s in sites],
                 "camera": [c.name for c in cams], "light": [lt.name for lt in lights],
                 "mesh": [m.name for m in self.meshes], "tendon": [t.name for t in tendons],
                 "actuator": [a.name for a in acts], "equality": [e.name for e in self.eqs],
                 "key": key_names, "sensor": [s["name"] for s in self.sensors],
                 "material": [m.name for m in self.materials],
                 "texture": [t["name"] for t in self.textures],
                 "hfield": [h["name"] for h in self.hfields]}
        materials = [dict(name=m.name, rgba=m.rgba, texture=m.texture, texrepeat=m.texrepeat,
                          texuniform=m.texuniform, emission=m.emission, specular=m.specular,
                          shininess=m.shininess, reflectance=m.reflectance)
                     for m in self.materials]
        textures = [{k: v for k, v in t.items() if k != "_node"} for t in self.textures]
        path = self.file if self.file != "<string>" else None
        return Model(sizes, A, names, path=path, materials=materials, textures=textures,
                     sensors=self.sensors, visual=self.visual,
                     statistic=self.statistic, warnings=list(self.warnings),
                     light_type=np.array([int(LightType[lt.type.upper()]) for lt in lights], int),
                     size=dict(self.size), model_name=self.model_name,
                     springdamper={j.id: tuple(j.springdamper) for j in joints
                                   if j.springdamper},
                     lengthrange_options=dict(self.lropt))

"""Compile step: Spec -> Model, the way MuJoCo's compiler does it (user_model.cc, user_objects.cc).

``compile_spec(spec)`` runs one ``compile_<kind>`` per object (compile_tree.py: frames, bodies,
joints, geoms, sites, cameras, lights; compile_objects.py: assets, pairs, equalities, tendons,
actuators; sensors.py: sensors), then allocates the Model's arrays from the field table of
engine/types.py and copies the compiled objects and the keyframes into them (assemble.py). Units are converted
here (degrees, euler sequences), frames composed, names resolved; physics that the engine does
not implement raises ModelError naming the feature, purely visual settings that are not used
are reported as warnings. Errors name the file, line, element and attribute of the spec object
at fault (or its kind and name for objects made in code).
"""
from __future__ import annotations

import logging
import math
import os
import sys
from enum import IntEnum

from ..constants import EPS
from ..enums import Cone, DisableBit, Integrator, Jacobian, Solver
from ..types import CapacityError, ModelError, check_option
from . import frames as F
from .elements import ORIENT, SOLIMP, TFAuto
from .xmltree import Source

log = logging.getLogger("engine.compiler")

INTEGRATORS = {"Euler": Integrator.SEMIIMPLICIT, "RK4": Integrator.RK4,
               "explicit": Integrator.EXPLICIT, "midpoint": Integrator.MIDPOINT,
               "interleave": Integrator.INTERLEAVE, "semiimplicit": Integrator.SEMIIMPLICIT,
               "implicit": Integrator.IMPLICIT, "implicitfast": Integrator.IMPLICITFAST,
               "discrete": None}
# "LCP": our extension, hard contact (engine.hard_contact); MuJoCo refuses it
SOLVERS = {"PGS": Solver.PGS, "Newton": Solver.NEWTON, "CG": None, "LCP": Solver.LCP}
CONES = {"pyramidal": Cone.PYRAMIDAL, "elliptic": Cone.ELLIPTIC}
JACOBIANS = {"dense": Jacobian.DENSE, "sparse": Jacobian.SPARSE, "auto": Jacobian.AUTO}
DISABLE_FLAGS = {"constraint": DisableBit.CONSTRAINT, "equality": DisableBit.EQUALITY,
                 "frictionloss": DisableBit.FRICTIONLOSS, "limit": DisableBit.LIMIT,
                 "contact": DisableBit.CONTACT, "passive": DisableBit.PASSIVE,
                 "spring": DisableBit.SPRING, "damper": DisableBit.DAMPER,
                 "gravity": DisableBit.GRAVITY, "clampctrl": DisableBit.CLAMPCTRL,
                 "warmstart": DisableBit.WARMSTART, "filterparent": DisableBit.FILTERPARENT,
                 "actuation": DisableBit.ACTUATION, "eulerdamp": DisableBit.EULERDAMP,
                 "sensor": DisableBit.SENSOR, "nativeccd": DisableBit.NATIVECCD,
                 "multiccd": DisableBit.MULTICCD}
# flags without a counterpart: those that change the physics are refused (when set to the value
# given here), the others (diagnostics, performance, the choice among collision algorithms) are
# reported (when set to the value given) or accepted quietly
PHYSICS_FLAGS = {"diagexact": True, "ipc": True, "speculative": True, "override": True,
                 "sleep": True, "refsafe": False, "autoreset": False}
REPORTED_FLAGS = {"fwdinv": (True, "the forward-inverse comparison is not computed")}
QUIET_FLAGS = ("energy", "invdiscrete", "midphase", "island")
# where asset files are looked for: (directory checked, directory loaded from, kind)
ASSET_DIRS = {"mesh": ("meshdir", "meshdir", "mesh"), "hfield": ("assetdir", "meshdir", "hfield"),
              "texture": ("texturedir", "texturedir", "texture")}
TEXTURE_FILES = ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")
# MuJoCo's mjLROpt: how actuator length ranges are computed (setconst.set_length_range)
LENGTHRANGE = {"mode": "muscle", "useexisting": True, "uselimit": False, "accel": 20.0,
               "maxforce": 0.0, "timeconst": 1.0, "timestep": 0.01, "inttotal": 10.0,
               "interval": 2.0, "tolrange": 0.05}


def read_asset(obj, path, name, what, attribute="file", nbytes=-1):
    """The bytes of an asset file; a file that cannot be read (a device, /proc/self/mem) is a
    ModelError at the attribute naming the file and the system's reason."""
    try:
        with open(path, "rb") as f:
            return f.read(nbytes)
    except OSError as e:
        raise obj.error(f"{what} file '{name}' cannot be read: {e.strerror or e}",
                        attribute) from None


def compile_spec(spec):
    """The Model of `spec` (before set_const)."""
    c = Compiler(spec)
    try:
        return c.run()
    except (ModelError, CapacityError):
        raise
    except RecursionError:
        raise ModelError("model nesting is too deep (about "
                         f"{sys.getrecursionlimit() // 2} nested bodies at most)",
                         file=c.file) from None
    except Exception as e:  # never let a Python traceback reach the user
        src = getattr(c.current, "_src", None)
        raise ModelError(f"internal compiler error: {type(e).__name__}: {e}",
                         file=src.file if src else c.file, line=src.line if src else None,
                         element=src.tag if src else None) from e


class Compiler:
    """What the compile of one spec shares: settings, warnings, names and compiled objects."""

    def __init__(self, spec):
        self.spec = spec
        self.file = spec.file or "<string>"
        self.model_dir = spec.modelfiledir
        self.source = Source(spec.assets, spec.modelfiledir)
        self.current = None
        self.warnings = list(spec.read_warnings)
        self._warned = set()

    def run(self):
        from . import assemble, compile_objects as O, compile_tree as T, sensors
        self.settings()
        self.opt = compile_option(self, self.spec.option)
        O.compile_assets(self)
        T.compile_tree(self)
        O.compile_contact(self)
        O.compile_equalities(self)
        O.compile_tendons(self)
        O.resolve_equalities(self)
        O.compile_actuators(self)
        sensors.compile_sensors(self)
        return assemble.assemble(self)

    # ---- reporting ------------------------------------------------------------------------------
    def warn(self, msg, obj=None):
        """Record a warning about `obj` (a spec object or an XML element)."""
        if obj is not None:
            src = obj if hasattr(obj, "line") else obj._src
            where = (f"{src.file}, line {src.line}, element <{src.tag}>" if src is not None
                     else f"element <{obj.tag}> '{getattr(obj, 'name', '')}'")
            msg = f"{where}: {msg}"
        self.warnings.append(msg)
        log.warning(msg)

    def warn_once(self, key, msg):
        """A warning recorded once per key (a solref/solimp value shared by many elements)."""
        if key not in self._warned:
            self._warned.add(key)
            self.warn(msg + " (reported once for this value)")

    @staticmethod
    def unsupported(obj, feature, attribute=None):
        return obj.error(f"{feature} is not implemented", attribute)

    def reject_set(self, obj, features):
        """ModelError for the first attribute in `features` ({attribute: feature}) that `obj`
        sets to a value other than MuJoCo's default (physics this engine does not have)."""
        for a, feature in features.items():
            if getattr(obj, a) != obj.defaults()[a]:
                raise self.unsupported(obj, feature, a)

    def ignore_visual(self, obj, attributes):
        """Accept purely visual attributes that the engine does not use, reported once each."""
        for a in attributes:
            if obj.given(a):
                self.warn_once((obj.tag, a), f"<{obj.tag}> attribute '{a}' only affects "
                                             "rendering in MuJoCo and is not used here")

    # ---- <compiler> -----------------------------------------------------------------------------
    def settings(self):
        c = self.spec.compiler
        self.cc = c
        self.degree = c.angle == "degree"
        self.eulerseq = c.eulerseq
        self.lengthrange = dict(LENGTHRANGE, **(c.lengthrange or {}))

    def directory(self, d):
        if not d:
            return self.model_dir
        if os.path.isabs(d) or self.model_dir is None:
            return d
        return os.path.join(self.model_dir, d)

    def find_file(self, obj, name, check, load, attribute, what, read=True):
        """(bytes, path) of the file an asset names, found as MuJoCo finds it (xml_util.cc
        ResolveFilePath, then the asset's compilation), or ModelError at `obj`: relative to
        the model file's directory joined with the compiler's `load` directory (meshdir,
        texturedir); if the asset comes from an included file and the name is not found
        relative to the `check` directory (MuJoCo's reader checks height fields against
        assetdir but loads them from meshdir), relative to the included file's directory.
        With read=False, (None, path) for a file on disk (not read)."""
        fname = os.path.basename(name) if self.cc.strippath else name
        src = obj._src
        included = src is not None and src.file != self.file and self.model_dir is not None
        if not os.path.isabs(fname) and included and \
                not self._exists(os.path.join(self.directory(self.setting(check)), fname)):
            fname = os.path.normpath(os.path.join(os.path.dirname(src.file), fname))
        dirs = [] if os.path.isabs(fname) else [self.directory(self.setting(load))]
        found = self.source.locate(fname, dirs)
        if found is None:
            raise obj.error(f"{what} file '{name}' not found", attribute)
        if found[0] is None and read:
            return read_asset(obj, found[1], name, what, attribute), found[1]
        return found

    def asset_file(self, obj, attribute="file", read=True):
        """find_file for the file attribute of a mesh, texture or height field."""
        check, load, what = ASSET_DIRS[obj.tag]
        return self.find_file(obj, getattr(obj, attribute), check, load, attribute, what, read)

    def setting(self, which):
        """meshdir, texturedir (assetdir where not given) or assetdir of <compiler>."""
        c = self.cc
        return {"meshdir": c.meshdir or c.assetdir, "texturedir": c.texturedir or c.assetdir,
                "assetdir": c.assetdir}[which]

    def _exists(self, path):
        return os.path.isfile(path) or path in self.source.assets

    # ---- names ----------------------------------------------------------------------------------
    @staticmethod
    def check_names(objs, kind):
        """ModelError at the second of two compiled objects of one kind with the same name."""
        check_names([(o.name, o.spec) for o in objs], kind)

    @staticmethod
    def index(objs):
        return {o.name: i for i, o in enumerate(objs) if o.name}

    def lookup(self, kind, obj, name, attribute):
        """Id of the `kind` object called `name`, named by `attribute` of spec object `obj`."""
        if name is None:
            raise obj.error(f"missing attribute '{attribute}'", attribute)
        index = self.indices[kind]
        if name not in index:
            raise obj.error(f"unknown {kind} '{name}'", attribute)
        return index[name]

    # ---- orientation ----------------------------------------------------------------------------
    def orientation(self, obj, default_quat=(1.0, 0.0, 0.0, 0.0)):
        """Quaternion from quat / axisangle / xyaxes / zaxis / euler (MuJoCo's
        ResolveOrientation), in the units of <compiler angle eulerseq>."""
        given = [a for a in ORIENT
                 if (obj.given("quat") if a == "quat" else getattr(obj, a) is not None)]
        if len(given) > 1:
            raise obj.error("multiple orientation specifiers: " + ", ".join(given), given[1])
        given = [a for a in given if a != "quat"]
        if not given:
            q = list(obj.quat) if obj.given("quat") else list(default_quat)
            if F.normvec(q) < EPS and obj.given("quat"):
                raise obj.error("quaternion is zero", "quat")
            return q
        return alt_orientation(obj, given[0], self.degree, self.eulerseq)


def check_names(named, kind):
    """ModelError at the second of two (name, spec object) pairs with the same name."""
    seen = set()
    for name, obj in named:
        if name:
            if name in seen:
                raise obj.error(f"repeated name '{name}' in {kind}", "name")
            seen.add(name)


def islimited(limited, rng):
    """Does a false / true / auto limit flag with range `rng` limit (auto: a nonempty range)?"""
    return limited == TFAuto.TRUE or (limited == TFAuto.AUTO and rng[0] < rng[1])


def check_autolimits(c, obj, limited, rng, attribute, message):
    """MuJoCo's rule without autolimits: a range needs an explicit limited flag."""
    if limited == TFAuto.AUTO and not c.cc.autolimits and not (rng[0] == 0 and rng[1] == 0):
        raise obj.error(message, attribute)


def alt_orientation(obj, a, degree, eulerseq):
    """Quaternion of the orientation alternative `a` of `obj`."""
    v = list(getattr(obj, a))
    if a == "axisangle":
        ang = v[3] / 180.0 * math.pi if degree else v[3]
        ax = v[:3]
        if F.normvec(ax) < EPS:
            raise obj.error("axisangle too small", a)
        s = math.sin(ang / 2)
        return [math.cos(ang / 2), s * ax[0], s * ax[1], s * ax[2]]
    if a == "xyaxes":
        x, y = v[:3], v[3:]
        if F.normvec(x) < EPS:
            raise obj.error("xaxis too small", a)
        d = x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
        y = [y[0] - x[0] * d, y[1] - x[1] * d, y[2] - x[2] * d]
        if F.normvec(y) < EPS:
            raise obj.error("yaxis too small", a)
        z = F.cross(x, y)
        if F.normvec(z) < EPS:
            raise obj.error("cross(xaxis, yaxis) too small", a)
        return F.frame2quat(x, y, z)
    if a == "zaxis":
        if F.normvec(v) < EPS:
            raise obj.error("zaxis too small", a)
        return F.z2quat(v)
    if degree:                                  # euler
        v = [e / 180.0 * math.pi for e in v]
    q = [1.0, 0.0, 0.0, 0.0]
    for i in range(3):
        ch = eulerseq[i]
        qr = [math.cos(v[i] / 2), 0.0, 0.0, 0.0]
        qr["xyz".index(ch.lower()) + 1] = math.sin(v[i] / 2)
        q = F.mulquat(q, qr) if ch.islower() else F.mulquat(qr, q)
    F.normvec(q)
    return q


def keyword(obj, attribute, choices):
    """Value of a keyword attribute looked up in `choices`, or ModelError listing them."""
    raw = getattr(obj, attribute)
    if isinstance(raw, IntEnum) and raw in choices.values():
        return raw
    key = raw.strip() if isinstance(raw, str) else raw
    if key not in choices:
        raise obj.error(f"unknown value '{key}', expected one of: {', '.join(choices)}",
                        attribute)
    return choices[key]


def compile_option(c, o):
    """<option>: the opt_* values; what the engine does not implement is reported."""
    c.current = o
    out = {k: getattr(o, k) for k in ("timestep", "density", "viscosity", "impratio",
                                       "tolerance", "iterations", "epsilon", "kappa", "rmin",
                                       "stabilization")}
    for k in ("gravity", "wind", "magnetic"):
        out[k] = list(getattr(o, k))
    # objects without softness of their own follow the option's impedance shape: as given,
    # else constant if the file sets the global epsilon (the paper's impedance), else MuJoCo's
    # default solimp
    from .compile_objects import mujoco_impedance     # (it imports this module)
    eps, shape = mujoco_impedance(SOLIMP)
    if not o.given("epsilon"):
        out["epsilon"] = eps
    if o.impedance is not None:
        out["impedance"] = list(o.impedance)
    elif o.given("epsilon"):
        out["impedance"] = [o.epsilon, 0.0, 0.5, 2.0]
    else:
        out["impedance"] = list(shape)
    src = o.attr_src.get
    integ = keyword(o, "integrator", INTEGRATORS)
    if integ is None:
        raise c.unsupported(src("integrator", o), "MuJoCo 4's discrete integrator", "integrator")
    out["integrator"] = int(integ)
    solver = keyword(o, "solver", SOLVERS)
    if solver is None:
        c.warn("solver=\"CG\" is not implemented; using Newton", src("solver", o))
        solver = Solver.NEWTON
    out["solver"] = int(solver)
    out["cone"] = int(keyword(o, "cone", CONES))
    out["jacobian"] = int(keyword(o, "jacobian", JACOBIANS))
    for a in ("noslip_iterations", "noslip_tolerance", "ccd_iterations", "ccd_tolerance"):
        out[a] = getattr(o, a)
        if not out[a] >= 0:
            raise src(a, o).error(f"{a} must be >= 0", a)
    for a in ("o_margin", "o_solref", "o_solimp", "o_friction"):
        if o.given(a):
            c.warn(f"option '{a}' has no effect (MuJoCo applies it only with the 'override' "
                   "flag)", src(a, o))
    if o.actuatorgroupdisable:
        raise c.unsupported(src("actuatorgroupdisable", o), "disabling actuator groups "
                            "(actuatorgroupdisable)", "actuatorgroupdisable")
    out["disableflags"], out["enableflags"] = compile_flags(c, o), 0
    for a in out:      # the values m.opt would refuse are refused here too
        try:
            out[a] = check_option(a, out[a])
        except ValueError as e:
            raise src(a, o).error(str(e), a) from None
    return out


def compile_flags(c, o):
    """<flag>: the disable bits; unsupported flags raise, ineffective ones are reported."""
    src = getattr(o, "_flag_src", None) or o
    bits = 0
    for a, value in o.flags.items():
        on = value == "enable"
        if a in DISABLE_FLAGS:
            bits |= 0 if on else int(DISABLE_FLAGS[a])
        elif a in PHYSICS_FLAGS:
            if on == PHYSICS_FLAGS[a]:
                raise c.unsupported(src, f"{a}=\"{value}\"", a)
        elif a in REPORTED_FLAGS:
            if on == REPORTED_FLAGS[a][0]:
                c.warn(f"flag {a}=\"{value}\" has no counterpart: {REPORTED_FLAGS[a][1]}", src)
        elif a not in QUIET_FLAGS:
            raise AssertionError(a)     # every flag of the schema is classified above
    if bits & DisableBit.NATIVECCD and c.spec.hfields:
        c.warn("flag nativeccd=\"disable\": height-field contacts keep this engine's GJK/EPA "
               "(MuJoCo's libccd path runs MPR on each prism)", src)
    return bits

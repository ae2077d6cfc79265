"""A compiled Model keeps the spec it came from, so that it can be saved as MJCF with the edits
made to it since (``engine.save_model_xml(m, path)``).

The compile step gives the Model a ``SpecLink``: the spec and its objects in the order of the
Model's ids. Saving compiles the spec again and copies every value of the Model that differs
into the spec object it came from (options, masses and inertias, joint and
dof parameters, geom contact parameters and colours, tendon, actuator, equality and pair
parameters), in the spec's units (degrees where <compiler angle="degree">), then writes the
spec. Arrays derived by the compiler from several spec values (geom sizes, frames, qpos0) are
not written back.
"""
from __future__ import annotations

import math

import numpy as np

from ..enums import Cone, Integrator, Jacobian, JointType, Solver
from .compile import DISABLE_FLAGS
from .elements import Inertial, TFAuto

INTEGRATOR_WORDS = {Integrator.SEMIIMPLICIT: "Euler", Integrator.RK4: "RK4",
                    Integrator.IMPLICIT: "implicit", Integrator.IMPLICITFAST: "implicitfast",
                    Integrator.EXPLICIT: "explicit", Integrator.MIDPOINT: "midpoint",
                    Integrator.INTERLEAVE: "interleave"}
SOLVER_WORDS = {Solver.PGS: "PGS", Solver.NEWTON: "Newton", Solver.LCP: "LCP"}
CONE_WORDS = {Cone.PYRAMIDAL: "pyramidal", Cone.ELLIPTIC: "elliptic"}
JACOBIAN_WORDS = {Jacobian.DENSE: "dense", Jacobian.SPARSE: "sparse", Jacobian.AUTO: "auto"}

# Model array -> (kind of spec object, attribute); the array's row i belongs to object i
DIRECT = {
    "body_gravcomp": ("body", "gravcomp"),
    "jnt_stiffness": ("joint", "stiffness"), "jnt_margin": ("joint", "margin"),
    "jnt_actfrcrange": ("joint", "actuatorfrcrange"),
    "geom_friction": ("geom", "friction"), "geom_rgba": ("geom", "rgba"),
    "geom_margin": ("geom", "margin"), "geom_gap": ("geom", "gap"),
    "geom_contype": ("geom", "contype"), "geom_conaffinity": ("geom", "conaffinity"),
    "geom_condim": ("geom", "condim"), "geom_priority": ("geom", "priority"),
    "geom_group": ("geom", "group"), "site_rgba": ("site", "rgba"),
    "tendon_stiffness": ("tendon", "stiffness"), "tendon_damping": ("tendon", "damping"),
    "tendon_frictionloss": ("tendon", "frictionloss"), "tendon_margin": ("tendon", "margin"),
    "tendon_range": ("tendon", "range"), "tendon_rgba": ("tendon", "rgba"),
    "actuator_gear": ("actuator", "gear"), "actuator_ctrlrange": ("actuator", "ctrlrange"),
    "actuator_forcerange": ("actuator", "forcerange"),
    "actuator_gainprm": ("actuator", "gainprm"), "actuator_biasprm": ("actuator", "biasprm"),
    "actuator_dynprm": ("actuator", "dynprm"), "eq_active0": ("equality", "active"),
    "pair_friction": ("pair", "friction"), "pair_margin": ("pair", "margin"),
    "pair_gap": ("pair", "gap"),
}
SOFTNESS = {"jnt": "joint", "geom": "geom", "tendon": "tendon", "eq": "equality", "pair": "pair"}
# the MJCF attributes of an object kind's impedance shape and damping ratio
SOLIMP_SOLREF = {"joint": ("solimplimit", "solreflimit"), "tendon": ("solimplimit", "solreflimit"),
                 "geom": ("solimp", "solref"), "equality": ("solimp", "solref"),
                 "pair": ("solimp", "solref")}
LIMITS = {"jnt_limited": ("joint", "limited"), "tendon_limited": ("tendon", "limited"),
          "actuator_ctrllimited": ("actuator", "ctrllimited"),
          "actuator_forcelimited": ("actuator", "forcelimited")}
DOF = {"dof_damping": "damping", "dof_armature": "armature", "dof_frictionloss": "frictionloss"}
INERTIA = ("body_mass", "body_inertia", "body_ipos", "body_iquat")
OPTIONS = ("timestep", "gravity", "wind", "magnetic", "density", "viscosity", "impratio",
           "tolerance", "iterations", "noslip_iterations", "noslip_tolerance", "ccd_iterations",
           "ccd_tolerance", "epsilon", "kappa", "rmin", "impedance", "stabilization")


def editable_fields():
    soft = [f"{p}_{k}" for p in SOFTNESS
            for k in ("epsilon", "kappa", "rmin", "impedance", "dampratio")]
    return (list(DIRECT) + soft + list(LIMITS) + list(DOF) + list(INERTIA) +
            ["jnt_range", "qpos_spring", "tendon_lengthspring"] +
            ["opt_" + k for k in OPTIONS + ("integrator", "solver", "cone", "jacobian",
                                            "disableflags")])


class SpecLink:
    """What a Model keeps of its spec (see the module docstring)."""

    def __init__(self, spec, objects, inertial_frames):
        self.spec = spec
        self.objects = objects                    # kind -> spec objects in id order
        self.inertial_frames = inertial_frames    # body id -> (ipos, iquat) before alignment

    def __deepcopy__(self, memo):
        # shared by copies of the Model: saving compares a model with its spec compiled again,
        # so each copy saves its own values whatever the others wrote into the spec
        return self

    def reference(self):
        """The editable arrays of the spec compiled again (with set_const's values)."""
        from ..setconst import set_const
        from .attach import copy_spec
        from .compile import compile_spec
        m = set_const(compile_spec(copy_spec(self.spec)))
        return {k: np.array(getattr(m, k)) for k in editable_fields()}


def update_spec(m):
    """Copy the values of `m` that changed since it was compiled into its spec; returns it."""
    link = getattr(m, "_spec", None)
    if link is None:
        raise ValueError("this model was not compiled from a spec (engine.load_model or "
                         "Spec.compile): it has no MJCF to save")
    spec = link.spec
    changed = {k: _changed_rows(getattr(m, k), v) for k, v in link.reference().items()}
    _write_options(m, spec.option, changed)
    obj = link.objects
    for field, (kind, attr) in DIRECT.items():
        for i in changed[field]:
            setattr(obj[kind][i], attr, _value(getattr(m, field)[i]))
    for field, (kind, attr) in LIMITS.items():
        for i in changed[field]:
            setattr(obj[kind][i], attr, TFAuto(int(getattr(m, field)[i])))
    for prefix, kind in SOFTNESS.items():
        for k in ("epsilon", "kappa", "rmin"):
            values = getattr(m, f"{prefix}_{k}")
            for i in changed[f"{prefix}_{k}"]:
                setattr(obj[kind][i], k, None if values[i] < 0 else float(values[i]))
    for prefix, kind in SOFTNESS.items():
        _write_impedance(m, prefix, obj[kind], changed, *SOLIMP_SOLREF[kind])
    for field, attr in DOF.items():
        for d in changed[field]:
            setattr(obj["joint"][int(m.dof_jntid[d])], attr, float(getattr(m, field)[d]))
    _write_joints(m, spec, obj["joint"], changed)
    for i in changed["tendon_lengthspring"]:
        obj["tendon"][i].springlength = [float(x) for x in m.tendon_lengthspring[i]]
    for i in sorted(set().union(*(changed[f] for f in INERTIA))):
        _write_inertial(m, obj["body"][i], link.inertial_frames[i], i)
    return spec


def _write_impedance(m, prefix, objects, changed, imp_key, ref_key):
    """Changed impedance shapes as solimp (d0 from the object's epsilon or the option's) and
    changed damping ratios as a standard solref (kappa, dampratio)."""
    for i in changed[f"{prefix}_impedance"]:
        epsw, width, mid, power = (float(x) for x in getattr(m, f"{prefix}_impedance")[i])
        if width >= 0:
            eps = float(getattr(m, f"{prefix}_epsilon")[i])
            d0 = 1.0 / (1.0 + (eps if eps >= 0 else m.opt.epsilon))
            dw = 1.0 / (1.0 + epsw) if width > 0 else d0
            setattr(objects[i], imp_key, [d0, dw, width, mid, power])
    for i in changed[f"{prefix}_dampratio"]:
        kappa = float(getattr(m, f"{prefix}_kappa")[i])
        setattr(objects[i], ref_key, [kappa if kappa > 0 else m.opt.kappa,
                                      float(getattr(m, f"{prefix}_dampratio")[i])])


def _changed_rows(now, then):
    now = np.asarray(now)
    if now.shape != then.shape:
        return range(now.shape[0])
    diff = now != then
    if diff.size == 0:
        return []
    if diff.ndim > 1:
        diff = diff.reshape(diff.shape[0], -1).any(axis=1)
    return [int(i) for i in np.flatnonzero(diff)]


def _value(v):
    v = np.asarray(v)
    if v.ndim == 0:
        return v.item()
    return [x.item() for x in v]


def _write_options(m, o, changed):
    opt = m.opt
    if changed["opt_epsilon"]:        # an <option epsilon> alone would make it constant
        changed["opt_impedance"] = [0]
    for k in OPTIONS:
        if changed["opt_" + k]:
            v = getattr(m, "opt_" + k)
            setattr(o, k, _value(v) if v.size > 1 else v[0].item())
    for k, words in (("integrator", INTEGRATOR_WORDS), ("solver", SOLVER_WORDS),
                     ("cone", CONE_WORDS), ("jacobian", JACOBIAN_WORDS)):
        if changed["opt_" + k]:
            setattr(o, k, words[getattr(opt, k)])
    if changed["opt_disableflags"]:
        bits = int(opt.disableflags)
        flags = dict(o.flags)
        for name, bit in DISABLE_FLAGS.items():
            if bits & int(bit):
                flags[name] = "disable"
            elif flags.get(name) == "disable":
                del flags[name]
        o.flags = flags


def _write_joints(m, spec, joints, changed):
    """Joint ranges and spring references, in degrees where the spec's angles are."""
    degree = spec.compiler.angle == "degree"
    for i in changed["jnt_range"]:
        j = joints[i]
        scale = 180.0 / math.pi if degree and j.type in (JointType.HINGE, JointType.BALL) \
            else 1.0
        j.range = [float(x) * scale for x in m.jnt_range[i]]
    for q in changed["qpos_spring"]:
        i = int(np.searchsorted(m.jnt_qposadr, q, side="right")) - 1
        j = joints[i]
        if j.type in (JointType.HINGE, JointType.SLIDE):
            scale = 180.0 / math.pi if degree and j.type == JointType.HINGE else 1.0
            j.springref = float(m.qpos_spring[q]) * scale


def _write_inertial(m, body, frame, i):
    """An explicit inertial with the model's mass and inertia, in the frame the body had
    before a free-joint alignment moved it."""
    ipos, iquat = frame
    if list(m.body_ipos[i]) != [0.0, 0.0, 0.0] or list(m.body_iquat[i]) != [1, 0, 0, 0]:
        ipos, iquat = [float(x) for x in m.body_ipos[i]], [float(x) for x in m.body_iquat[i]]
    e = Inertial()
    e.pos, e.quat = list(ipos), list(iquat)
    e.mass = float(m.body_mass[i])
    e.diaginertia = [float(x) for x in m.body_inertia[i]]
    body.inertial = e


def save_model_xml(m, path):
    """Write model `m` as MJCF to `path`, with the edits made to it since it was compiled."""
    spec = update_spec(m)
    spec.save_xml(path)

"""Compile step of <sensor>: each Sensor of the spec into a sensor dict, then the Model's arrays.

MuJoCo's rules (xml_native_reader.cc Sensor, user_objects.cc mjCSensor::Compile): the object a
type attaches to (sensor_objtype, sensor_objid) and its reference (sensor_reftype,
sensor_refid), the data type that decides what the cutoff does, the stage the sensor needs and
its dimension. Plugin and tactile sensors, and a history buffer used for delays or sampling
intervals (nsample with delay or interval), raise a ModelError naming the sensor.
"""
from __future__ import annotations

from ..enums import (CONDATA_SIZE, RAYDATA_SIZE, ConDataField, ConReduce, DataType, GeomType,
                     JointType, ObjType, RayDataField, SensorType, Stage)
from . import schema as S
from .compile import check_names

T = SensorType
# tag -> type
TYPES = {"touch": T.TOUCH, "accelerometer": T.ACCELEROMETER, "velocimeter": T.VELOCIMETER,
         "gyro": T.GYRO, "force": T.FORCE, "torque": T.TORQUE, "magnetometer": T.MAGNETOMETER,
         "rangefinder": T.RANGEFINDER, "camprojection": T.CAMPROJECTION,
         "jointpos": T.JOINTPOS, "jointvel": T.JOINTVEL, "tendonpos": T.TENDONPOS,
         "tendonvel": T.TENDONVEL, "actuatorpos": T.ACTUATORPOS, "actuatorvel": T.ACTUATORVEL,
         "actuatorfrc": T.ACTUATORFRC, "jointactuatorfrc": T.JOINTACTFRC,
         "tendonactuatorfrc": T.TENDONACTFRC, "ballquat": T.BALLQUAT,
         "ballangvel": T.BALLANGVEL, "jointlimitpos": T.JOINTLIMITPOS,
         "jointlimitvel": T.JOINTLIMITVEL, "jointlimitfrc": T.JOINTLIMITFRC,
         "tendonlimitpos": T.TENDONLIMITPOS, "tendonlimitvel": T.TENDONLIMITVEL,
         "tendonlimitfrc": T.TENDONLIMITFRC, "framepos": T.FRAMEPOS,
         "framequat": T.FRAMEQUAT, "framexaxis": T.FRAMEXAXIS, "frameyaxis": T.FRAMEYAXIS,
         "framezaxis": T.FRAMEZAXIS, "framelinvel": T.FRAMELINVEL,
         "frameangvel": T.FRAMEANGVEL, "framelinacc": T.FRAMELINACC,
         "frameangacc": T.FRAMEANGACC, "subtreecom": T.SUBTREECOM,
         "subtreelinvel": T.SUBTREELINVEL, "subtreeangmom": T.SUBTREEANGMOM,
         "insidesite": T.INSIDESITE, "distance": T.GEOMDIST, "normal": T.GEOMNORMAL,
         "fromto": T.GEOMFROMTO, "contact": T.CONTACT, "e_potential": T.E_POTENTIAL,
         "e_kinetic": T.E_KINETIC, "clock": T.CLOCK, "user": T.USER, "tactile": T.TACTILE}

DIM = {T.TOUCH: 1, T.ACCELEROMETER: 3, T.VELOCIMETER: 3, T.GYRO: 3, T.FORCE: 3, T.TORQUE: 3,
       T.MAGNETOMETER: 3, T.CAMPROJECTION: 2, T.BALLQUAT: 4, T.BALLANGVEL: 3,
       T.FRAMEPOS: 3, T.FRAMEQUAT: 4, T.FRAMEXAXIS: 3, T.FRAMEYAXIS: 3, T.FRAMEZAXIS: 3,
       T.FRAMELINVEL: 3, T.FRAMEANGVEL: 3, T.FRAMELINACC: 3, T.FRAMEANGACC: 3,
       T.SUBTREECOM: 3, T.SUBTREELINVEL: 3, T.SUBTREEANGMOM: 3, T.GEOMNORMAL: 3,
       T.GEOMFROMTO: 6}                                          # every other type: 1

DATATYPE = {T.TOUCH: DataType.POSITIVE, T.INSIDESITE: DataType.POSITIVE,
            T.FRAMEXAXIS: DataType.AXIS, T.FRAMEYAXIS: DataType.AXIS,
            T.FRAMEZAXIS: DataType.AXIS, T.GEOMNORMAL: DataType.AXIS,
            T.BALLQUAT: DataType.QUATERNION, T.FRAMEQUAT: DataType.QUATERNION}  # else REAL

NEEDSTAGE = {**{t: Stage.ACC for t in (T.TOUCH, T.ACCELEROMETER, T.FORCE, T.TORQUE,
                                       T.ACTUATORFRC, T.JOINTACTFRC, T.TENDONACTFRC,
                                       T.JOINTLIMITFRC, T.TENDONLIMITFRC, T.FRAMELINACC,
                                       T.FRAMEANGACC, T.CONTACT)},
             **{t: Stage.VEL for t in (T.VELOCIMETER, T.GYRO, T.JOINTVEL, T.TENDONVEL,
                                       T.ACTUATORVEL, T.BALLANGVEL, T.JOINTLIMITVEL,
                                       T.TENDONLIMITVEL, T.FRAMELINVEL, T.FRAMEANGVEL,
                                       T.SUBTREELINVEL, T.SUBTREEANGMOM)}}  # else POS

# objects named by keyword (objtype, reftype)
OBJTYPES = {"body": ObjType.BODY, "xbody": ObjType.XBODY, "joint": ObjType.JOINT,
            "geom": ObjType.GEOM, "site": ObjType.SITE, "camera": ObjType.CAMERA,
            "tendon": ObjType.TENDON, "actuator": ObjType.ACTUATOR}
FRAME_TYPES = {k: k for k in ("body", "xbody", "geom", "site", "camera")}
CONDATA = {f.name.lower(): f for f in ConDataField}
RAYDATA = {f.name.lower(): f for f in RayDataField}
REDUCE = {r.name.lower(): r for r in ConReduce}
STAGES = {"none": Stage.NONE, "pos": Stage.POS, "vel": Stage.VEL, "acc": Stage.ACC}
DATATYPES = {t.name.lower(): t for t in DataType}


def compile_sensors(c):
    """c.sensors: the compiled sensors, in order; their names checked."""
    c.sensors = []
    for s in c.spec.sensors:
        c.current = s
        c.sensors.append(compile_sensor(c, s))
    check_names([(d["name"], s) for s, d in zip(c.spec.sensors, c.sensors)], "sensor")


def _keyword(s, attribute, choices, default=None):
    """Value of a keyword attribute of sensor `s` looked up in `choices` (default: not given)."""
    raw = getattr(s, attribute)
    if raw is None:
        return default
    raw = raw.strip()
    if raw not in choices:
        raise s.error(f"unknown value '{raw}', expected one of: {', '.join(choices)}",
                      attribute)
    return choices[raw]


def _bits(s, attribute, fields, default):
    """Bit set of the keywords of data="..." (fields in their order)."""
    words = (getattr(s, attribute) or default).split()
    if not words:
        raise s.error("expected at least one keyword", attribute)
    bits, last = 0, -1
    for w in words:
        if w not in fields:
            raise s.error(f"unknown value '{w}', expected one of: {', '.join(fields)}",
                          attribute)
        if int(fields[w]) <= last:
            raise s.error("data attributes must be in order: " + ", ".join(fields), attribute)
        last = int(fields[w])
        bits |= 1 << last
    return bits


def _one_of(s, attrs, required=True):
    """The one attribute of attrs that the sensor gives (None if none and not required)."""
    given = [a for a in attrs if getattr(s, a) is not None]
    if len(given) > 1:
        raise s.error(f"at most one of {', '.join(attrs)} can be given", given[1])
    if not given and required:
        raise s.error(f"one of {', '.join(attrs)} is required", attrs[0])
    return given[0] if given else None


def compile_sensor(c, s):
    """mjCSensor::Compile: the sensor as a dict (type, stype, name, objtype, objid, objname,
    reftype, refid, refname, intprm, noise, cutoff, datatype, needstage, dim, line)."""
    from .compile_objects import lookup_named
    tag = s.type
    stype = TYPES[tag]
    if stype == T.TACTILE:
        raise c.unsupported(s, "tactile sensors")
    out = {"type": tag, "name": s.name or "", "line": s._src.line if s._src else None,
           "stype": stype, "objtype": ObjType.UNKNOWN, "objid": -1, "objname": None,
           "reftype": ObjType.UNKNOWN, "refid": -1, "refname": None, "intprm": [0, 0, 0],
           "noise": s.noise, "cutoff": s.cutoff, "datatype": DATATYPE.get(stype, DataType.REAL),
           "needstage": NEEDSTAGE.get(stype, Stage.POS)}
    if s.noise < 0:
        raise s.error("negative noise in sensor", "noise")
    if s.cutoff < 0:
        raise s.error("negative cutoff in sensor", "cutoff")
    interval = s.interval or [0.0]
    if s.delay > 0 and s.nsample <= 0:
        raise s.error("setting delay > 0 without a history buffer", "delay")
    if s.nsample > 0 and (s.delay > 0 or interval[0] > 0):
        raise c.unsupported(s, "sensor delays and sampling intervals (a history buffer with "
                               "delay or interval)", "delay" if s.delay > 0 else "interval")

    def obj(kind, attribute, ref=False):
        """Look up the object named by `attribute` as the sensor's object (or reference)."""
        name = getattr(s, attribute)
        oid = lookup_named(c, s, kind, name, attribute)
        key = "ref" if ref else "obj"
        out[key + "type"], out[key + "id"], out[key + "name"] = OBJTYPES[kind], oid, name
        return oid

    def frame_obj(type_attr, name_attr, ref=False):
        kind = _keyword(s, type_attr, FRAME_TYPES)
        if kind is None:
            raise s.error(f"missing attribute '{type_attr}'", type_attr)
        return obj(kind, name_attr, ref=ref)

    attr = S.SENSORS[tag][0]
    if stype == T.RANGEFINDER:
        which = _one_of(s, ("site", "camera"))
        cid = obj(which, which)
        if which == "camera":
            _check_resolution(c, s, cid, "rangefinder")
        out["intprm"][0] = _bits(s, "data", RAYDATA, "dist")
    elif stype == T.CAMPROJECTION:
        obj("site", "site")
        cid = obj("camera", "camera", ref=True)
        _check_resolution(c, s, cid, "camera projection")
    elif stype == T.INSIDESITE:
        frame_obj("objtype", "objname")
        obj("site", "site", ref=True)
    elif attr:
        _check_object(c, s, stype, attr, obj(attr, attr))
    elif tag.startswith("frame"):
        frame_obj("objtype", "objname")
        if s.reftype is not None or s.refname is not None:
            if s.reftype is None or s.refname is None:
                raise s.error("reftype and refname must be given together",
                              "refname" if s.reftype is not None else "reftype")
            frame_obj("reftype", "refname", ref=True)
    elif stype in (T.GEOMDIST, T.GEOMNORMAL, T.GEOMFROMTO):
        _geom_pair(c, s, out, obj)
    elif stype == T.CONTACT:
        _contact(s, out, obj)
    elif stype == T.USER:
        if s.objtype is not None or s.objname is not None:
            kind = _keyword(s, "objtype", {k: k for k in OBJTYPES})
            if kind is None:
                raise s.error("missing attribute 'objtype'", "objtype")
            obj(kind, "objname")
        out["datatype"] = _keyword(s, "datatype", DATATYPES, DataType.REAL)
        out["needstage"] = _keyword(s, "needstage", STAGES, Stage.ACC)
    out["dim"] = _dim(c, s, out)
    if out["cutoff"] > 0 and (out["datatype"] == DataType.QUATERNION or
                              (out["datatype"] == DataType.AXIS and stype != T.GEOMNORMAL)):
        raise s.error("cutoff applied to axis or quaternion datatype in sensor", "cutoff")
    return out


def _geom_pair(c, s, out, obj):
    """distance, normal, fromto: two different geoms or bodies, no height field."""
    a1 = _one_of(s, ("geom1", "body1"))
    a2 = _one_of(s, ("geom2", "body2"))
    obj(a1[:-1], a1)
    obj(a2[:-1], a2, ref=True)
    if out["objtype"] == out["reftype"] and out["objid"] == out["refid"]:
        raise s.error("1st body/geom must be different from 2nd body/geom", a2)
    for a, key in ((a1, "objid"), (a2, "refid")):
        if a.startswith("geom") and c.geoms[out[key]].type == GeomType.HFIELD:
            raise s.error("height fields are not supported in geom distance sensors", a)


def _contact(s, out, obj):
    """contact: the matching criteria, data bits, reduction, slots and the stage they need."""
    a1 = _one_of(s, ("site", "body1", "subtree1", "geom1"), required=False)
    a2 = _one_of(s, ("body2", "subtree2", "geom2"), required=False)
    kinds = {"site": "site", "body1": "body", "subtree1": "xbody", "geom1": "geom",
             "body2": "body", "subtree2": "xbody", "geom2": "geom"}
    if a1:
        obj(kinds[a1], a1)
    if a2:
        obj(kinds[a2], a2, ref=True)
    if s.num <= 0:
        raise s.error("'num' must be positive in sensor", "num")
    bits = _bits(s, "data", CONDATA, "found")
    reduce = _keyword(s, "reduce", REDUCE, ConReduce.NONE)
    out["intprm"] = [bits, int(reduce), s.num]
    velocity = (1 << ConDataField.LINVEL) | (1 << ConDataField.ANGVEL)
    if reduce == ConReduce.NETFORCE and bits & velocity:
        raise s.error("netforce reduction is incompatible with linvel or angvel", "data")
    # computed as soon as what it reads is known: forces, velocities or the contacts alone
    if (bits & ((1 << ConDataField.FORCE) | (1 << ConDataField.TORQUE))
            or reduce in (ConReduce.MAXFORCE, ConReduce.NETFORCE)):
        out["needstage"] = Stage.ACC
    else:
        out["needstage"] = Stage.VEL if bits & velocity else Stage.POS


def _check_resolution(c, s, cam, what):
    if min(c.cams[cam].resolution) <= 0:
        raise s.error(f"{what} sensor requires camera resolution", "camera")


def _check_object(c, s, stype, attr, oid):
    """The joint or tendon fits the sensor: scalar or ball joints, limits where measured."""
    if attr == "joint":
        jtype = c.joints[oid].type
        if stype in (T.BALLQUAT, T.BALLANGVEL):
            if jtype != JointType.BALL:
                raise s.error("joint must be ball in sensor", attr)
        elif stype in (T.JOINTLIMITPOS, T.JOINTLIMITVEL, T.JOINTLIMITFRC):
            if not c.joints[oid].limited:
                raise s.error("joint must be limited in sensor", attr)
        elif jtype not in (JointType.SLIDE, JointType.HINGE):
            raise s.error("joint must be slide or hinge in sensor", attr)
    if attr == "tendon" and stype in (T.TENDONLIMITPOS, T.TENDONLIMITVEL, T.TENDONLIMITFRC):
        if not c.tendons[oid].limited:
            raise s.error("tendon must be limited in sensor", attr)


def _dim(c, s, out):
    stype = out["stype"]
    if stype == T.CONTACT:
        bits, _, num = out["intprm"]
        return num * sum(CONDATA_SIZE[k] for k in range(len(CONDATA_SIZE)) if bits >> k & 1)
    if stype == T.RANGEFINDER:
        bits = out["intprm"][0]
        rays = 1
        if out["objtype"] == ObjType.CAMERA:
            width, height = c.cams[out["objid"]].resolution
            rays = width * height          # one ray per pixel
        return rays * sum(RAYDATA_SIZE[k] for k in range(len(RAYDATA_SIZE)) if bits >> k & 1)
    if stype == T.USER:
        dim = 1 if s.dim is None else s.dim
        if dim < 0:
            raise s.error("sensor dim must be non-negative in sensor", "dim")
        if out["datatype"] == DataType.AXIS and dim != 3:
            raise s.error("datatype AXIS requires dim=3 in sensor", "dim")
        if out["datatype"] == DataType.QUATERNION and dim != 4:
            raise s.error("datatype QUATERNION requires dim=4 in sensor", "dim")
        return dim
    return DIM.get(stype, 1)


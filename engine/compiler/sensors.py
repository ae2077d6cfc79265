"""<sensor>: each element read into a sensor spec, then the Model's sensor arrays.

MuJoCo's rules (xml_native_reader.cc Sensor, user_objects.cc mjCSensor::Compile): the object a
type attaches to (sensor_objtype, sensor_objid) and its reference (sensor_reftype,
sensor_refid), the data type that decides what the cutoff does, the stage the sensor needs and
its dimension. Plugin and tactile sensors, and a history buffer used for delays or sampling
intervals (nsample with delay or interval), raise a ModelError naming the sensor.
"""
from __future__ import annotations

import numpy as np

from ..enums import (CONDATA_SIZE, RAYDATA_SIZE, ConDataField, ConReduce, DataType, GeomType,
                     JointType, ObjType, RayDataField, SensorType, Stage)
from . import schema as S

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
FRAME_TYPES = ("body", "xbody", "geom", "site", "camera")
CONDATA = {f.name.lower(): f for f in ConDataField}
RAYDATA = {f.name.lower(): f for f in RayDataField}
REDUCE = {r.name.lower(): r for r in ConReduce}
STAGES = {"none": Stage.NONE, "pos": Stage.POS, "vel": Stage.VEL, "acc": Stage.ACC}
DATATYPES = {t.name.lower(): t for t in DataType}


def _bits(node, attr, fields, default):
    """Bit set of the keywords of attribute attr (MuJoCo's data="..."), in the fields' order."""
    words = node.text(attr, default).split()
    if not words:
        raise node.error("expected at least one keyword", attr)
    bits, last = 0, -1
    for w in words:
        if w not in fields:
            raise node.error(f"unknown value '{w}', expected one of: {', '.join(fields)}", attr)
        if int(fields[w]) <= last:
            raise node.error("data attributes must be in order: " + ", ".join(fields), attr)
        last = int(fields[w])
        bits |= 1 << last
    return bits


def _one_of(node, attrs, required=True):
    """The one attribute of attrs that node gives (None if none and not required)."""
    given = [a for a in attrs if node.has(a)]
    if len(given) > 1:
        raise node.error(f"at most one of {', '.join(attrs)} can be given", given[1])
    if not given and required:
        raise node.error(f"one of {', '.join(attrs)} is required", attrs[0])
    return given[0] if given else None


def read_sensor(c, node):
    """The spec (a dict) of one sensor element; c is the compiler (object lookups, errors)."""
    tag = node.tag
    if tag == "plugin":
        raise c.unsupported(node, "sensor plugins")
    if tag not in TYPES:
        raise node.error(f"unknown element <{tag}> in <sensor>")
    attr, _, _ = S.SENSORS[tag]
    allowed = set(S.SENSOR_COMMON) | set(S.SENSOR_EXTRA.get(tag, ()))
    if attr:
        allowed.add(attr)
    node.check_attrs(allowed)
    stype = TYPES[tag]
    if stype == T.TACTILE:
        raise c.unsupported(node, "tactile sensors")
    s = {"type": tag, "name": node.text("name", ""), "line": node.line, "node": node,
         "stype": stype, "objtype": ObjType.UNKNOWN, "objid": -1, "objname": None,
         "reftype": ObjType.UNKNOWN, "refid": -1, "refname": None, "intprm": [0, 0, 0],
         "noise": node.float("noise", 0.0), "cutoff": node.float("cutoff", 0.0),
         "datatype": DATATYPE.get(stype, DataType.REAL),
         "needstage": NEEDSTAGE.get(stype, Stage.POS)}
    if s["noise"] < 0:
        raise node.error("negative noise in sensor", "noise")
    if s["cutoff"] < 0:
        raise node.error("negative cutoff in sensor", "cutoff")
    nsample = node.int("nsample", 0)
    interval = node.floats("interval", 2, exact=False, default=[0.0])
    delay = node.float("delay", 0.0)
    if delay > 0 and nsample <= 0:
        raise node.error("setting delay > 0 without a history buffer", "delay")
    if nsample > 0 and (delay > 0 or interval[0] > 0):
        raise c.unsupported(node, "sensor delays and sampling intervals (a history buffer "
                                  "with delay or interval)", "delay" if delay > 0 else "interval")

    def obj(kind, attr_name, name=None, ref=False):
        """Look up the object named by attr_name as the sensor's object (or reference)."""
        name = node.text(attr_name) if name is None else name
        oid = c.lookup_named(node, kind, name, attr_name)
        key = "ref" if ref else "obj"
        s[key + "type"], s[key + "id"], s[key + "name"] = OBJTYPES[kind], oid, name
        return oid

    def frame_obj(type_attr, name_attr, ref=False):
        kind = node.keyword(type_attr, {k: k for k in FRAME_TYPES})
        if kind is None:
            raise node.error(f"missing attribute '{type_attr}'", type_attr)
        return obj(kind, name_attr, ref=ref)

    if stype == T.RANGEFINDER:
        which = _one_of(node, ("site", "camera"))
        cid = obj(which, which)
        if which == "camera":
            _check_resolution(c, node, cid, "rangefinder")
        s["intprm"][0] = _bits(node, "data", RAYDATA, "dist")
    elif stype == T.CAMPROJECTION:
        obj("site", "site")
        cid = obj("camera", "camera", ref=True)
        _check_resolution(c, node, cid, "camera projection")
    elif stype == T.INSIDESITE:
        frame_obj("objtype", "objname")
        obj("site", "site", ref=True)
    elif attr:
        oid = obj(attr, attr)
        _check_object(c, node, stype, attr, oid)
    elif tag.startswith("frame"):
        frame_obj("objtype", "objname")
        if node.has("reftype") or node.has("refname"):
            if not (node.has("reftype") and node.has("refname")):
                raise node.error("reftype and refname must be given together",
                                 "refname" if node.has("reftype") else "reftype")
            frame_obj("reftype", "refname", ref=True)
    elif stype in (T.GEOMDIST, T.GEOMNORMAL, T.GEOMFROMTO):
        a1 = _one_of(node, ("geom1", "body1"))
        a2 = _one_of(node, ("geom2", "body2"))
        obj(a1[:-1], a1)
        obj(a2[:-1], a2, ref=True)
        if s["objtype"] == s["reftype"] and s["objid"] == s["refid"]:
            raise node.error("1st body/geom must be different from 2nd body/geom", a2)
        for a, key in ((a1, "objid"), (a2, "refid")):
            if a.startswith("geom") and c.geoms[s[key]].type == GeomType.HFIELD:
                raise node.error("height fields are not supported in geom distance sensors", a)
    elif stype == T.CONTACT:
        a1 = _one_of(node, ("site", "body1", "subtree1", "geom1"), required=False)
        a2 = _one_of(node, ("body2", "subtree2", "geom2"), required=False)
        kinds = {"site": "site", "body1": "body", "subtree1": "xbody", "geom1": "geom",
                 "body2": "body", "subtree2": "xbody", "geom2": "geom"}
        if a1:
            obj(kinds[a1], a1)
        if a2:
            obj(kinds[a2], a2, ref=True)
        num = node.int("num", 1)
        if num <= 0:
            raise node.error("'num' must be positive in sensor", "num")
        s["intprm"] = [_bits(node, "data", CONDATA, "found"),
                       int(node.keyword("reduce", REDUCE, ConReduce.NONE)), num]
        bits, reduce = s["intprm"][:2]
        velocity = (1 << ConDataField.LINVEL) | (1 << ConDataField.ANGVEL)
        if reduce == ConReduce.NETFORCE and bits & velocity:
            raise node.error("netforce reduction is incompatible with linvel or angvel", "data")
        # computed as soon as what it reads is known: forces, velocities or the contacts alone
        if (bits & ((1 << ConDataField.FORCE) | (1 << ConDataField.TORQUE))
                or reduce in (ConReduce.MAXFORCE, ConReduce.NETFORCE)):
            s["needstage"] = Stage.ACC
        else:
            s["needstage"] = Stage.VEL if bits & velocity else Stage.POS
    elif stype == T.USER:
        if node.has("objtype") or node.has("objname"):
            kind = node.keyword("objtype", {k: k for k in OBJTYPES})
            if kind is None:
                raise node.error("missing attribute 'objtype'", "objtype")
            obj(kind, "objname")
        s["datatype"] = node.keyword("datatype", DATATYPES, DataType.REAL)
        s["needstage"] = node.keyword("needstage", STAGES, Stage.ACC)
    s["dim"] = _dim(c, node, s)
    if s["cutoff"] > 0 and (s["datatype"] == DataType.QUATERNION or
                            (s["datatype"] == DataType.AXIS and stype != T.GEOMNORMAL)):
        raise node.error("cutoff applied to axis or quaternion datatype in sensor", "cutoff")
    return s


def _check_resolution(c, node, cam, what):
    if min(c.cams[cam].resolution) <= 0:
        raise node.error(f"{what} sensor requires camera resolution", "camera")


def _check_object(c, node, stype, attr, oid):
    """The joint or tendon fits the sensor: scalar or ball joints, limits where measured."""
    if attr == "joint":
        jtype = c.joints[oid].type
        if stype in (T.BALLQUAT, T.BALLANGVEL):
            if jtype != JointType.BALL:
                raise node.error("joint must be ball in sensor", attr)
        elif stype in (T.JOINTLIMITPOS, T.JOINTLIMITVEL, T.JOINTLIMITFRC):
            if not c.joints[oid].limited:
                raise node.error("joint must be limited in sensor", attr)
        elif jtype not in (JointType.SLIDE, JointType.HINGE):
            raise node.error("joint must be slide or hinge in sensor", attr)
    if attr == "tendon" and stype in (T.TENDONLIMITPOS, T.TENDONLIMITVEL, T.TENDONLIMITFRC):
        if not c.tendons[oid].limited:
            raise node.error("tendon must be limited in sensor", attr)


def _dim(c, node, s):
    stype = s["stype"]
    if stype == T.CONTACT:
        bits, _, num = s["intprm"]
        return num * sum(CONDATA_SIZE[k] for k in range(len(CONDATA_SIZE)) if bits >> k & 1)
    if stype == T.RANGEFINDER:
        bits = s["intprm"][0]
        rays = 1
        if s["objtype"] == ObjType.CAMERA:
            width, height = c.cams[s["objid"]].resolution
            rays = width * height          # one ray per pixel
        return rays * sum(RAYDATA_SIZE[k] for k in range(len(RAYDATA_SIZE)) if bits >> k & 1)
    if stype == T.USER:
        dim = node.int("dim", 1)
        if dim < 0:
            raise node.error("sensor dim must be non-negative in sensor", "dim")
        if s["datatype"] == DataType.AXIS and dim != 3:
            raise node.error("datatype AXIS requires dim=3 in sensor", "dim")
        if s["datatype"] == DataType.QUATERNION and dim != 4:
            raise node.error("datatype QUATERNION requires dim=4 in sensor", "dim")
        return dim
    return DIM.get(stype, 1)


def read_sensors(c, nodes):
    """Specs of every sensor element of the <sensor> sections."""
    sensors = []
    for n in nodes:
        n.check_attrs(())
        for child in n.children:
            c.current = child
            sensors.append(read_sensor(c, child))
    return sensors


def sensor_arrays(sensors):
    """The Model's sensor arrays and sizes (nsensor, nsensordata) from the specs."""
    n = len(sensors)
    A = {k: np.zeros(n, dtype=np.int64) for k in
         ("sensor_type", "sensor_datatype", "sensor_needstage", "sensor_objtype",
          "sensor_objid", "sensor_reftype", "sensor_refid", "sensor_dim", "sensor_adr")}
    A["sensor_intprm"] = np.zeros((n, 3), dtype=np.int64)
    A["sensor_cutoff"] = np.zeros(n)
    A["sensor_noise"] = np.zeros(n)
    adr = 0
    for i, s in enumerate(sensors):
        for k in ("type", "datatype", "needstage", "objtype", "objid", "reftype", "refid",
                  "dim", "cutoff", "noise"):
            A["sensor_" + k][i] = s["stype"] if k == "type" else s[k]
        A["sensor_intprm"][i] = s["intprm"]
        A["sensor_adr"][i] = adr
        adr += s["dim"]
    return A, {"nsensor": n, "nsensordata": adr}

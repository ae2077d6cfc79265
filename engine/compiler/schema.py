"""MJCF grammar: which attributes each element takes and how to read (and write) them.

Attribute kinds: ("f", n) exactly n numbers (n=1: a scalar), ("p", n) 1..n numbers where the rest
keep the inherited value (MuJoCo reads size, friction, gear, *prm, solref, solimp that way),
("v",) any number of numbers, ("i",) integer, ("s",) text, ("k", {keyword: value}) keyword,
("b",) true/false. The default values are those of the spec objects (elements.py).
"""
from __future__ import annotations

from ..enums import BiasType, CamLight, DynType, GainType, GeomType, JointType
from .elements import TFAuto

F1 = ("f", 1)
# a scalar that MuJoCo 4 follows with polynomial coefficients (joint and tendon stiffness and
# damping): only zero coefficients are read
F1POLY = ("f", 1, "poly")


def F(n):
    return ("f", n)


def P(n):
    return ("p", n)


V = ("v",)
I1 = ("i",)
S = ("s",)
B = ("b",)


def K(*words, values=None):
    if values is None:
        values = {w: w for w in words}
    return ("k", values)


TFAUTO = K(values={t.name.lower(): t for t in TFAuto})
ORIENT = ("quat", "axisangle", "xyaxes", "zaxis", "euler")
ORIENT_TABLE = {"quat": F(4), "axisangle": F(4), "xyaxes": F(6), "zaxis": F(3), "euler": F(3)}
SOFT_TABLE = {"epsilon": F1, "kappa": F1, "rmin": F1}

GEOM_TYPES = {t.name.lower(): t for t in GeomType}
GEOM_TYPES["sdf"] = None                       # signed distance fields: not implemented
JOINT_TYPES = {t.name.lower(): t for t in JointType}
CAMLIGHT = {t.name.lower(): t for t in CamLight}

SOLREF = P(2)
SOLIMP = P(5)

JOINT = {
    "type": K(values=JOINT_TYPES), "group": I1, "pos": F(3), "axis": F(3),
    "springdamper": F(2), "limited": TFAUTO, "actuatorfrclimited": TFAUTO,
    "solreflimit": SOLREF, "solimplimit": SOLIMP, "solreffriction": SOLREF,
    "solimpfriction": SOLIMP, "stiffness": F1POLY, "range": F(2), "actuatorfrcrange": F(2),
    "actuatorgravcomp": B, "margin": F1, "ref": F1, "springref": F1, "armature": F1,
    "damping": F1POLY, "frictionloss": F1, "springyield": F1, "user": V, **SOFT_TABLE}

GEOM = {
    "type": K(values=GEOM_TYPES), "pos": F(3), **ORIENT_TABLE, "contype": I1,
    "conaffinity": I1, "condim": I1, "group": I1, "priority": I1, "size": P(3), "material": S,
    "friction": P(3), "mass": F1, "density": F1, "shellinertia": B, "solmix": F1,
    "solref": SOLREF, "solimp": SOLIMP, "margin": F1, "gap": F1, "fromto": F(6), "hfield": S,
    "mesh": S, "fitscale": F1, "rgba": F(4), "fluidshape": K("none", "ellipsoid"),
    "fluidcoef": P(5), "user": V, "castshadow": B, "adhesion": F1, "surfacevel": P(6),
    **SOFT_TABLE}

SITE = {"type": K(values=GEOM_TYPES), "group": I1, "pos": F(3), **ORIENT_TABLE, "material": S,
        "size": P(3), "fromto": F(6), "rgba": F(4), "user": V, "mesh": S}

CAMERA = {"projection": K("perspective", "orthographic"), "orthographic": B, "fovy": F1,
          "ipd": F1, "resolution": F(2), "pos": F(3), **ORIENT_TABLE, "mode": K(values=CAMLIGHT),
          "focal": F(2), "focalpixel": F(2), "principal": F(2), "principalpixel": F(2),
          "sensorsize": F(2), "user": V, "output": S}

LIGHT = {"pos": F(3), "dir": F(3), "bulbradius": F1, "intensity": F1, "range": F1,
         "directional": B, "type": K("spot", "directional", "point", "image"),
         "castshadow": B, "active": B, "attenuation": F(3), "cutoff": F1, "exponent": F1,
         "ambient": F(3), "diffuse": F(3), "specular": F(3), "mode": K(values=CAMLIGHT),
         "softness": F1}

MESH = {"scale": F(3), "maxhullvert": I1,
        "inertia": K("legacy", "convex", "exact", "shell")}

MATERIAL = {"texture": S, "emission": F1, "specular": F1, "shininess": F1, "reflectance": F1,
            "metallic": F1, "roughness": F1, "rgba": F(4), "texrepeat": F(2), "texuniform": B}

PAIR = {"condim": I1, "friction": P(5), "solref": SOLREF, "solreffriction": SOLREF,
        "solimp": SOLIMP, "gap": F1, "margin": F1, "adhesion": F1, **SOFT_TABLE}

EQUALITY = {"active": B, "solref": SOLREF, "solimp": SOLIMP, "hard": B, **SOFT_TABLE}

TENDON = {"group": I1, "limited": TFAUTO, "actuatorfrclimited": TFAUTO, "range": F(2),
          "actuatorfrcrange": F(2), "solreflimit": SOLREF, "solimplimit": SOLIMP,
          "solreffriction": SOLREF, "solimpfriction": SOLIMP, "frictionloss": F1,
          "springlength": P(2), "width": F1, "material": S, "margin": F1, "stiffness": F1POLY,
          "damping": F1POLY, "armature": F1, "rgba": F(4), "user": V, "springyield": F1,
          **SOFT_TABLE}

# actuators: attributes common to all shortcut elements, then per element
ACT_COMMON = {"ctrllimited": TFAUTO, "forcelimited": TFAUTO, "actlimited": TFAUTO,
              "ctrlrange": F(2), "forcerange": F(2), "actrange": F(2), "lengthrange": F(2),
              "gear": P(6), "cranklength": F1, "user": V, "group": I1,
              # MuJoCo 4 additions, all rejected when set except the history buffer size:
              "armature": F1, "damping": P(3), "delay": F1, "nsample": I1,
              "interp": K("zoh", "linear", "cubic")}
DYN_TYPES = {t.name.lower(): t for t in DynType}
GAIN_TYPES = {t.name.lower(): t for t in GainType}
BIAS_TYPES = {t.name.lower(): t for t in BiasType}
ACT_SPECIFIC = {
    "general": {"actdim": I1, "dyntype": K(values=DYN_TYPES), "gaintype": K(values=GAIN_TYPES),
                "biastype": K(values=BIAS_TYPES), "dynprm": P(10), "gainprm": P(10),
                "biasprm": P(10), "actearly": B, "inheritrange": F1, "ffrange": F(2),
                "velrange": F(2), "input": S},
    "motor": {},
    "position": {"kp": F1, "kv": F1, "dampratio": F1, "timeconst": F1, "inheritrange": F1},
    "velocity": {"kv": F1},
    "intvelocity": {"kp": F1, "kv": F1, "dampratio": F1, "inheritrange": F1},
    "damper": {"kv": F1},
    "cylinder": {"timeconst": F1, "area": F1, "diameter": F1, "bias": F(3)},
    "muscle": {"timeconst": F(2), "tausmooth": F1, "range": F(2), "force": F1, "scale": F1,
               "lmin": F1, "lmax": F1, "vmax": F1, "fpmax": F1, "fvmax": F1},
    "adhesion": {"gain": F1},
}
ACT_NOT_IN = {"motor": ("actlimited", "actrange"), "position": ("actlimited", "actrange"),
              "velocity": ("actlimited", "actrange"), "damper": ("actlimited", "actrange",
                                                                  "ctrllimited"),
              "cylinder": ("actlimited", "actrange"), "muscle": ("actlimited", "actrange"),
              "adhesion": ("actlimited", "actrange", "ctrllimited", "gear", "cranklength",
                           "lengthrange", "armature", "damping"),
              "intvelocity": (), "general": ()}
ACT_TARGETS = ("joint", "jointinparent", "tendon", "slidersite", "cranksite", "site", "refsite",
               "body")


def act_table(tag):
    t = {k: v for k, v in ACT_COMMON.items() if k not in ACT_NOT_IN[tag]}
    t.update(ACT_SPECIFIC[tag])
    return t


DEFAULT_KINDS = {"joint": JOINT, "geom": GEOM, "site": SITE, "camera": CAMERA, "light": LIGHT,
                 "mesh": MESH, "material": MATERIAL, "pair": PAIR, "equality": EQUALITY,
                 "tendon": TENDON}

# <option>
OPTION = {"timestep": F1, "impratio": F1, "tolerance": F1, "ls_tolerance": F1,
          "noslip_tolerance": F1, "ccd_tolerance": F1, "sleep_tolerance": F1, "gravity": F(3),
          "wind": F(3), "magnetic": F(3), "density": F1, "viscosity": F1, "o_margin": F1,
          "o_solref": F(2), "o_solimp": F(5), "o_friction": F(5), "integrator": S, "cone": S,
          "jacobian": K("dense", "sparse", "auto"), "solver": S, "iterations": I1,
          "ls_iterations": I1, "noslip_iterations": I1, "ccd_iterations": I1,
          "sdf_iterations": I1, "sdf_initpoints": I1, "actuatorgroupdisable": V,
          "epsilon": F1, "kappa": F1, "rmin": F1, "impedance": F(4),
          "stabilization": K(values={"diagonal": 0, "exact": 1})}
FLAGS = ("constraint", "equality", "frictionloss", "limit", "contact", "spring", "damper",
         "gravity", "clampctrl", "warmstart", "filterparent", "actuation", "refsafe", "sensor",
         "midphase", "eulerdamp", "autoreset", "nativeccd", "island", "override", "energy",
         "fwdinv", "invdiscrete", "multiccd", "sleep", "passive", "diagexact", "ipc",
         "speculative")

COMPILER = {"autolimits": B, "boundmass": F1, "boundinertia": F1, "settotalmass": F1,
            "balanceinertia": B, "strippath": B, "coordinate": K("local", "global"),
            "angle": K("radian", "degree"), "fitaabb": B, "eulerseq": S, "meshdir": S,
            "texturedir": S, "discardvisual": B, "usethread": B, "fusestatic": B,
            "inertiafromgeom": TFAUTO,
            "inertiagrouprange": ("i2",), "saveinertial": B, "assetdir": S, "alignfree": B,
            "savecanonical": B, "savecompiled": S, "conflict": S, "passthrough": B}

LENGTHRANGE = {"mode": K("none", "muscle", "muscleuser", "all"), "useexisting": B,
               "uselimit": B, "accel": F1, "maxforce": F1, "timeconst": F1, "timestep": F1,
               "inttotal": F1, "interval": F1, "tolrange": F1}

SIZE = ("memory", "njmax", "nconmax", "nstack", "nuserdata", "nkey", "nuser_body",
        "nuser_jnt", "nuser_geom", "nuser_site", "nuser_cam", "nuser_tendon", "nuser_actuator",
        "nuser_sensor")

VISUAL = {"global": ("cameraid", "orthographic", "fovy", "ipd", "azimuth", "elevation",
                     "linewidth", "glow", "offwidth", "offheight", "realtime",
                     "ellipsoidinertia", "bvactive"),
          "quality": ("shadowsize", "offsamples", "numslices", "numstacks", "numquads"),
          "headlight": ("ambient", "diffuse", "specular", "active"),
          "map": ("stiffness", "stiffnessrot", "force", "torque", "alpha", "fogstart", "fogend",
                  "znear", "zfar", "haze", "shadowclip", "shadowscale", "actuatortendon"),
          "scale": ("forcewidth", "contactwidth", "contactheight", "connect", "com", "camera",
                    "light", "selectpoint", "jointlength", "jointwidth", "actuatorlength",
                    "actuatorwidth", "framelength", "framewidth", "constraint", "slidercrank",
                    "frustum"),
          "rgba": ("fog", "haze", "force", "inertia", "joint", "actuator", "actuatornegative",
                   "actuatorpositive", "com", "camera", "light", "selectpoint", "connect",
                   "contactpoint", "contactforce", "contactfriction", "contacttorque",
                   "contactgap", "rangefinder", "constraint", "slidercrank", "crankbroken",
                   "frustum", "bv", "bvactive")}

STATISTIC = ("meaninertia", "meanmass", "meansize", "extent", "center")

TEXTURE = {"type": S, "colorspace": S, "content_type": S, "file": S, "gridsize": ("i2",),
           "gridlayout": S, "fileright": S, "fileleft": S, "fileup": S, "filedown": S,
           "filefront": S, "fileback": S, "builtin": S, "rgb1": F(3), "rgb2": F(3), "mark": S,
           "markrgb": F(3), "random": F1, "width": I1, "height": I1, "hflip": B, "vflip": B,
           "nchannel": I1, "embed": S}
TEXTURE_DEFAULT = ("builtin", "colorspace", "embed", "gridlayout", "gridsize", "height", "hflip",
                   "mark", "markrgb", "nchannel", "random", "rgb1", "rgb2", "type", "vflip",
                   "width")
TEXTURE_FILES = ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")

MESH_ASSET = {**MESH, "name": S, "class": S, "content_type": S, "file": S, "vertex": V,
              "normal": V, "texcoord": V, "face": V, "refpos": F(3), "refquat": F(4),
              "smoothnormal": B, "material": S, "builtin": S, "params": V}
HFIELD = {"name": S, "content_type": S, "file": S, "nrow": I1, "ncol": I1, "size": F(4),
          "elevation": V}

BODY = {"name": S, "childclass": S, "pos": F(3), **ORIENT_TABLE, "mocap": B, "gravcomp": F1,
        "user": V, "sleep": K("auto", "never", "allowed", "init"),
        "fuse": K("true", "false", "auto"), "simple": K("true", "false", "auto")}
FRAME = {"name": S, "childclass": S, "pos": F(3), **ORIENT_TABLE}
INERTIAL = {"pos": F(3), **ORIENT_TABLE, "mass": F1, "diaginertia": F(3), "fullinertia": F(6)}
FREEJOINT = {"name": S, "group": I1, "align": TFAUTO}
KEY = {"name": S, "time": F1, "qpos": V, "qvel": V, "act": V, "mpos": V, "mquat": V, "ctrl": V,
       "plastic": V}
EXCLUDE = {"name": S, "body1": S, "body2": S}

# sensors: tag -> (object attribute, object type, dim)
SENSORS = {
    "touch": ("site", "site", 1), "accelerometer": ("site", "site", 3),
    "velocimeter": ("site", "site", 3), "gyro": ("site", "site", 3),
    "force": ("site", "site", 3), "torque": ("site", "site", 3),
    "magnetometer": ("site", "site", 3), "rangefinder": ("site", "site", 1),
    "camprojection": ("site", "site", 2),
    "jointpos": ("joint", "joint", 1), "jointvel": ("joint", "joint", 1),
    "tendonpos": ("tendon", "tendon", 1), "tendonvel": ("tendon", "tendon", 1),
    "actuatorpos": ("actuator", "actuator", 1), "actuatorvel": ("actuator", "actuator", 1),
    "actuatorfrc": ("actuator", "actuator", 1), "jointactuatorfrc": ("joint", "joint", 1),
    "tendonactuatorfrc": ("tendon", "tendon", 1),
    "ballquat": ("joint", "joint", 4), "ballangvel": ("joint", "joint", 3),
    "jointlimitpos": ("joint", "joint", 1), "jointlimitvel": ("joint", "joint", 1),
    "jointlimitfrc": ("joint", "joint", 1), "tendonlimitpos": ("tendon", "tendon", 1),
    "tendonlimitvel": ("tendon", "tendon", 1), "tendonlimitfrc": ("tendon", "tendon", 1),
    "framepos": (None, None, 3), "framequat": (None, None, 4), "framexaxis": (None, None, 3),
    "frameyaxis": (None, None, 3), "framezaxis": (None, None, 3),
    "framelinvel": (None, None, 3), "frameangvel": (None, None, 3),
    "framelinacc": (None, None, 3), "frameangacc": (None, None, 3),
    "subtreecom": ("body", "body", 3), "subtreelinvel": ("body", "body", 3),
    "subtreeangmom": ("body", "body", 3),
    "insidesite": ("site", "site", 1),
    "distance": (None, None, 1), "normal": (None, None, 3), "fromto": (None, None, 6),
    "contact": (None, None, None),
    "e_potential": ("", None, 1), "e_kinetic": ("", None, 1), "clock": ("", None, 1),
    "user": (None, None, None), "tactile": ("geom", "geom", None),
}
SENSOR_COMMON = ("name", "cutoff", "noise", "user", "delay", "interp", "interval", "nsample")
SENSOR_EXTRA = {
    "camprojection": ("site", "camera"), "framelinacc": ("objtype", "objname"),
    "frameangacc": ("objtype", "objname"), "insidesite": ("site", "objtype", "objname", "enclosed"),
    "rangefinder": ("site", "camera", "data"),
    "distance": ("geom1", "geom2", "body1", "body2"), "normal": ("geom1", "geom2", "body1",
                                                                  "body2"),
    "fromto": ("geom1", "geom2", "body1", "body2"),
    "contact": ("geom1", "geom2", "body1", "body2", "subtree1", "subtree2", "site", "num",
                "data", "reduce"),
    "user": ("objtype", "objname", "datatype", "needstage", "dim"),
    "tactile": ("geom", "mesh"),
}
for _t in ("framepos", "framequat", "framexaxis", "frameyaxis", "framezaxis", "framelinvel",
           "frameangvel"):
    SENSOR_EXTRA[_t] = ("objtype", "objname", "reftype", "refname")


def sensor_table(tag):
    """The attributes of sensor element `tag` and how to read them (others are text)."""
    attr = SENSORS[tag][0]
    names = list(SENSOR_COMMON) + list(SENSOR_EXTRA.get(tag, ())) + ([attr] if attr else [])
    return {a: SENSOR_KINDS.get(a, S) for a in names}


SENSOR_KINDS = {"noise": F1, "cutoff": F1, "user": V, "dim": I1, "num": I1, "nsample": I1,
                "delay": F1, "interval": P(2)}

# equality constraints: the attributes of each element besides EQUALITY's
EQUALITY_ATTRS = {"connect": ("body1", "body2", "anchor", "site1", "site2"),
                  "weld": ("body1", "body2", "relpose", "anchor", "site1", "site2", "torquescale"),
                  "joint": ("joint1", "joint2", "polycoef"),
                  "tendon": ("tendon1", "tendon2", "polycoef")}
EQUALITY_KINDS = {"anchor": F(3), "relpose": F(7), "torquescale": F1, "polycoef": P(5)}


def equality_table(tag):
    return {a: EQUALITY_KINDS.get(a, S) for a in EQUALITY_ATTRS[tag]}

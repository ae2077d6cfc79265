"""MJCF grammar: which attributes each element takes, how to read them, and their defaults.

Attribute kinds: ("f", n) exactly n numbers (n=1: a scalar), ("p", n) 1..n numbers where the rest
keep the inherited value (MuJoCo reads size, friction, gear, *prm, solref, solimp that way),
("v",) any number of numbers, ("i",) integer, ("s",) text, ("k", {keyword: value}) keyword,
("b",) true/false. Values are MuJoCo 4.0's defaults (mjs_default* in src/user/user_init.c).
"""
from __future__ import annotations

F1 = ("f", 1)


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


TFAUTO = K(values={"false": 0, "true": 1, "auto": 2})
ORIENT = ("quat", "axisangle", "xyaxes", "zaxis", "euler")
ORIENT_TABLE = {"quat": F(4), "axisangle": F(4), "xyaxes": F(6), "zaxis": F(3), "euler": F(3)}
SOFT_TABLE = {"epsilon": F1, "kappa": F1, "rmin": F1}

GEOM_TYPES = {"plane": 0, "hfield": 1, "sphere": 2, "capsule": 3, "ellipsoid": 4,
              "cylinder": 5, "box": 6, "mesh": 7, "sdf": 8}
JOINT_TYPES = {"free": 0, "ball": 1, "slide": 2, "hinge": 3}
CAMLIGHT = {"fixed": 0, "track": 1, "trackcom": 2, "targetbody": 3, "targetbodycom": 4}

SOLREF = P(2)
SOLIMP = P(5)

JOINT = {
    "type": K(values=JOINT_TYPES), "group": I1, "pos": F(3), "axis": F(3),
    "springdamper": F(2), "limited": TFAUTO, "actuatorfrclimited": TFAUTO,
    "solreflimit": SOLREF, "solimplimit": SOLIMP, "solreffriction": SOLREF,
    "solimpfriction": SOLIMP, "stiffness": F1, "range": F(2), "actuatorfrcrange": F(2),
    "actuatorgravcomp": B, "margin": F1, "ref": F1, "springref": F1, "armature": F1,
    "damping": F1, "frictionloss": F1, "springyield": F1, "user": V, **SOFT_TABLE}
JOINT_DEFAULT = {
    "type": 3, "group": 0, "pos": [0.0, 0.0, 0.0], "axis": [0.0, 0.0, 1.0],
    "springdamper": [0.0, 0.0], "limited": 2, "actuatorfrclimited": 2,
    "solreflimit": [0.02, 1.0], "solimplimit": [0.9, 0.95, 0.001, 0.5, 2.0],
    "solreffriction": [0.02, 1.0], "solimpfriction": [0.9, 0.95, 0.001, 0.5, 2.0],
    "stiffness": 0.0, "range": [0.0, 0.0], "actuatorfrcrange": [0.0, 0.0],
    "actuatorgravcomp": False, "margin": 0.0, "ref": 0.0, "springref": 0.0, "armature": 0.0,
    "damping": 0.0, "frictionloss": 0.0, "springyield": 0.0, "user": []}

GEOM = {
    "type": K(values=GEOM_TYPES), "pos": F(3), **ORIENT_TABLE, "contype": I1,
    "conaffinity": I1, "condim": I1, "group": I1, "priority": I1, "size": P(3), "material": S,
    "friction": P(3), "mass": F1, "density": F1, "shellinertia": B, "solmix": F1,
    "solref": SOLREF, "solimp": SOLIMP, "margin": F1, "gap": F1, "fromto": F(6), "hfield": S,
    "mesh": S, "fitscale": F1, "rgba": F(4), "fluidshape": K("none", "ellipsoid"),
    "fluidcoef": P(5), "user": V, "castshadow": B, "adhesion": F1, "surfacevel": P(6),
    **SOFT_TABLE}
GEOM_DEFAULT = {
    "type": 2, "pos": [0.0, 0.0, 0.0], "quat": [1.0, 0.0, 0.0, 0.0], "contype": 1,
    "conaffinity": 1, "condim": 3, "group": 0, "priority": 0, "size": [0.0, 0.0, 0.0],
    "material": "", "friction": [1.0, 0.005, 0.0001], "mass": None, "density": 1000.0,
    "shellinertia": False, "solmix": 1.0, "solref": [0.02, 1.0],
    "solimp": [0.9, 0.95, 0.001, 0.5, 2.0], "margin": 0.0, "gap": 0.0, "fromto": None,
    "hfield": "", "mesh": "", "fitscale": 1.0, "rgba": [0.5, 0.5, 0.5, 1.0],
    "fluidshape": "none", "fluidcoef": [0.5, 0.25, 1.5, 1.0, 1.0], "user": [],
    "castshadow": True, "adhesion": 0.0, "surfacevel": [0.0] * 6}

SITE = {"type": K(values=GEOM_TYPES), "group": I1, "pos": F(3), **ORIENT_TABLE, "material": S,
        "size": P(3), "fromto": F(6), "rgba": F(4), "user": V, "mesh": S}
SITE_DEFAULT = {"type": 2, "group": 0, "pos": [0.0, 0.0, 0.0], "quat": [1.0, 0.0, 0.0, 0.0],
                "material": "", "size": [0.005, 0.005, 0.005], "fromto": None,
                "rgba": [0.5, 0.5, 0.5, 1.0], "user": [], "mesh": ""}

CAMERA = {"projection": K("perspective", "orthographic"), "orthographic": B, "fovy": F1,
          "ipd": F1, "resolution": F(2), "pos": F(3), **ORIENT_TABLE, "mode": K(values=CAMLIGHT),
          "focal": F(2), "focalpixel": F(2), "principal": F(2), "principalpixel": F(2),
          "sensorsize": F(2), "user": V, "output": S}
CAMERA_DEFAULT = {"projection": "perspective", "orthographic": False, "fovy": 45.0,
                  "ipd": 0.068, "resolution": [1.0, 1.0], "pos": [0.0, 0.0, 0.0],
                  "quat": [1.0, 0.0, 0.0, 0.0], "mode": 0, "focal": [0.0, 0.0],
                  "focalpixel": [0.0, 0.0], "principal": [0.0, 0.0],
                  "principalpixel": [0.0, 0.0], "sensorsize": [0.0, 0.0], "user": [],
                  "output": "rgb"}

LIGHT = {"pos": F(3), "dir": F(3), "bulbradius": F1, "intensity": F1, "range": F1,
         "directional": B, "type": K("spot", "directional", "point", "image"),
         "castshadow": B, "active": B, "attenuation": F(3), "cutoff": F1, "exponent": F1,
         "ambient": F(3), "diffuse": F(3), "specular": F(3), "mode": K(values=CAMLIGHT),
         "softness": F1}
LIGHT_DEFAULT = {"pos": [0.0, 0.0, 0.0], "dir": [0.0, 0.0, -1.0], "bulbradius": 0.02,
                 "intensity": 0.0, "range": 10.0, "directional": False, "type": "spot",
                 "castshadow": True, "active": True, "attenuation": [1.0, 0.0, 0.0],
                 "cutoff": 45.0, "exponent": 10.0, "ambient": [0.0, 0.0, 0.0],
                 "diffuse": [0.7, 0.7, 0.7], "specular": [0.3, 0.3, 0.3], "mode": 0,
                 "softness": 0.2}

MESH = {"scale": F(3), "maxhullvert": I1,
        "inertia": K("legacy", "convex", "exact", "shell")}
MESH_DEFAULT = {"scale": [1.0, 1.0, 1.0], "maxhullvert": -1, "inertia": "legacy"}

MATERIAL = {"texture": S, "emission": F1, "specular": F1, "shininess": F1, "reflectance": F1,
            "metallic": F1, "roughness": F1, "rgba": F(4), "texrepeat": F(2), "texuniform": B}
MATERIAL_DEFAULT = {"texture": "", "emission": 0.0, "specular": 0.5, "shininess": 0.5,
                    "reflectance": 0.0, "metallic": -1.0, "roughness": -1.0,
                    "rgba": [1.0, 1.0, 1.0, 1.0], "texrepeat": [1.0, 1.0], "texuniform": False}

PAIR = {"condim": I1, "friction": P(5), "solref": SOLREF, "solreffriction": SOLREF,
        "solimp": SOLIMP, "gap": F1, "margin": F1, "adhesion": F1, **SOFT_TABLE}
PAIR_DEFAULT = {"condim": 3, "friction": [1.0, 1.0, 0.005, 0.0001, 0.0001],
                "solref": [0.02, 1.0], "solreffriction": [0.0, 0.0],
                "solimp": [0.9, 0.95, 0.001, 0.5, 2.0], "gap": 0.0, "margin": 0.0,
                "adhesion": 0.0}

EQUALITY = {"active": B, "solref": SOLREF, "solimp": SOLIMP, "hard": B, **SOFT_TABLE}
EQUALITY_DEFAULT = {"active": True, "hard": False, "solref": [0.02, 1.0],
                    "solimp": [0.9, 0.95, 0.001, 0.5, 2.0]}

TENDON = {"group": I1, "limited": TFAUTO, "actuatorfrclimited": TFAUTO, "range": F(2),
          "actuatorfrcrange": F(2), "solreflimit": SOLREF, "solimplimit": SOLIMP,
          "solreffriction": SOLREF, "solimpfriction": SOLIMP, "frictionloss": F1,
          "springlength": P(2), "width": F1, "material": S, "margin": F1, "stiffness": F1,
          "damping": F1, "armature": F1, "rgba": F(4), "user": V, "springyield": F1,
          **SOFT_TABLE}
TENDON_DEFAULT = {"group": 0, "limited": 2, "actuatorfrclimited": 2, "range": [0.0, 0.0],
                  "actuatorfrcrange": [0.0, 0.0], "solreflimit": [0.02, 1.0],
                  "solimplimit": [0.9, 0.95, 0.001, 0.5, 2.0], "solreffriction": [0.02, 1.0],
                  "solimpfriction": [0.9, 0.95, 0.001, 0.5, 2.0], "frictionloss": 0.0,
                  "springlength": None, "width": 0.003, "material": "", "margin": 0.0,
                  "stiffness": 0.0, "damping": 0.0, "armature": 0.0,
                  "rgba": [0.5, 0.5, 0.5, 1.0], "user": [], "springyield": 0.0}

# actuators: attributes common to all shortcut elements, then per element
ACT_COMMON = {"ctrllimited": TFAUTO, "forcelimited": TFAUTO, "actlimited": TFAUTO,
              "ctrlrange": F(2), "forcerange": F(2), "actrange": F(2), "lengthrange": F(2),
              "gear": P(6), "cranklength": F1, "user": V, "group": I1,
              # MuJoCo 4 additions, all rejected when set except the history buffer size:
              "armature": F1, "damping": P(3), "delay": F1, "nsample": I1,
              "interp": K("zoh", "linear", "cubic")}
DYN_TYPES = {"none": 0, "integrator": 1, "filter": 2, "filterexact": 3, "muscle": 4, "user": 5}
GAIN_TYPES = {"fixed": 0, "affine": 1, "muscle": 2, "user": 3}
BIAS_TYPES = {"none": 0, "affine": 1, "muscle": 2, "user": 3}
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


def actuator_default():
    return {"ctrllimited": 2, "forcelimited": 2, "actlimited": 2, "ctrlrange": [0.0, 0.0],
            "forcerange": [0.0, 0.0], "actrange": [0.0, 0.0], "lengthrange": [0.0, 0.0],
            "gear": [1.0, 0, 0, 0, 0, 0], "cranklength": 0.0, "user": [], "group": 0,
            "actdim": -1, "dyntype": 0, "gaintype": 0, "biastype": 0,
            "dynprm": [1.0] + [0.0] * 9, "gainprm": [1.0] + [0.0] * 9, "biasprm": [0.0] * 10,
            "actearly": False, "inheritrange": 0.0, "shortcut": "general",
            "armature": 0.0, "damping": [0.0, 0.0, 0.0], "delay": 0.0,
            "nsample": 0, "interp": "zoh", "ffrange": [0.0, 0.0], "velrange": [0.0, 0.0],
            "input": None}


DEFAULT_KINDS = {"joint": (JOINT, JOINT_DEFAULT), "geom": (GEOM, GEOM_DEFAULT),
                 "site": (SITE, SITE_DEFAULT), "camera": (CAMERA, CAMERA_DEFAULT),
                 "light": (LIGHT, LIGHT_DEFAULT), "mesh": (MESH, MESH_DEFAULT),
                 "material": (MATERIAL, MATERIAL_DEFAULT), "pair": (PAIR, PAIR_DEFAULT),
                 "equality": (EQUALITY, EQUALITY_DEFAULT), "tendon": (TENDON, TENDON_DEFAULT)}

# <option>
OPTION = {"timestep": F1, "impratio": F1, "tolerance": F1, "ls_tolerance": F1,
          "noslip_tolerance": F1, "ccd_tolerance": F1, "sleep_tolerance": F1, "gravity": F(3),
          "wind": F(3), "magnetic": F(3), "density": F1, "viscosity": F1, "o_margin": F1,
          "o_solref": F(2), "o_solimp": F(5), "o_friction": F(5), "integrator": S, "cone": S,
          "jacobian": K("dense", "sparse", "auto"), "solver": S, "iterations": I1,
          "ls_iterations": I1, "noslip_iterations": I1, "ccd_iterations": I1,
          "sdf_iterations": I1, "sdf_initpoints": I1, "actuatorgroupdisable": V,
          "epsilon": F1, "kappa": F1, "rmin": F1,
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
            "inertiafromgeom": K(values={"false": 0, "true": 1, "auto": 2}),
            "inertiagrouprange": ("i2",), "saveinertial": B, "assetdir": S, "alignfree": B,
            "savecanonical": B, "savecompiled": S, "conflict": S, "passthrough": B}

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

TEXTURE = ("name", "type", "colorspace", "content_type", "file", "gridsize", "gridlayout",
           "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback", "builtin",
           "rgb1", "rgb2", "mark", "markrgb", "random", "width", "height", "hflip", "vflip",
           "nchannel", "class", "embed")
TEXTURE_DEFAULT = ("builtin", "colorspace", "embed", "gridlayout", "gridsize", "height", "hflip",
                   "mark", "markrgb", "nchannel", "random", "rgb1", "rgb2", "type", "vflip",
                   "width")
TEXTURE_FILES = ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")

MESH_ASSET = ("name", "class", "content_type", "file", "vertex", "normal", "texcoord", "face",
              "refpos", "refquat", "scale", "smoothnormal", "maxhullvert", "inertia", "builtin",
              "params", "material")
HFIELD = ("name", "content_type", "file", "nrow", "ncol", "size", "elevation")

BODY = ("name", "childclass", "pos", "quat", "mocap", "axisangle", "xyaxes", "zaxis", "euler",
        "gravcomp", "sleep", "user", "fuse", "simple")
FRAME = ("name", "childclass", "pos", "quat", "axisangle", "xyaxes", "zaxis", "euler")
INERTIAL = ("pos", "quat", "mass", "diaginertia", "axisangle", "xyaxes", "zaxis", "euler",
            "fullinertia")
FREEJOINT = ("name", "group", "align")

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

"""Compile the kinematic tree: frames, bodies, joints, geoms, sites, cameras and lights.

One ``compile_<kind>`` per object (MuJoCo's mjCBody::Compile, mjCJoint::Compile ...), each making
a compiled record (the spec object plus what the compiler derives: ids, poses in the body frame,
mass and inertia, softness). Bodies are numbered depth first, parents before children.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..constants import EPS, MINVAL
from ..enums import CamLight, GeomType, JointType
from . import frames as F
from . import inertia as I
from .compile import check_autolimits, islimited
from .compile_objects import NO_SOFTNESS, soft
from .fluid import ellipsoid_fluid_coefs
from .elements import Body, Camera, Geom, Joint, TFAuto

IDENTITY = (1.0, 0.0, 0.0, 0.0)
FROMTO_TYPES = (GeomType.CAPSULE, GeomType.CYLINDER, GeomType.ELLIPSOID, GeomType.BOX)
SIZE_PARAMS = {GeomType.HFIELD: 0, GeomType.SPHERE: 1, GeomType.CAPSULE: 2,
               GeomType.ELLIPSOID: 3, GeomType.CYLINDER: 2, GeomType.BOX: 3, GeomType.MESH: 0}


@dataclass(eq=False)
class CBody:
    spec: Body
    id: int
    parent: Optional["CBody"]
    name: str = ""
    children: list = field(default_factory=list)
    joints: list = field(default_factory=list)
    geoms: list = field(default_factory=list)
    sites: list = field(default_factory=list)
    cams: list = field(default_factory=list)
    lights: list = field(default_factory=list)
    pos: list = field(default_factory=lambda: [0.0, 0.0, 0.0])
    quat: list = field(default_factory=lambda: [1.0, 0.0, 0.0, 0.0])
    ipos: list = field(default_factory=lambda: [0.0, 0.0, 0.0])
    iquat: list = field(default_factory=lambda: [1.0, 0.0, 0.0, 0.0])
    mass: float = 0.0
    inertia: list = field(default_factory=lambda: [0.0, 0.0, 0.0])
    xpos0: list = field(default_factory=lambda: [0.0, 0.0, 0.0])
    xquat0: list = field(default_factory=lambda: [1.0, 0.0, 0.0, 0.0])
    weldid: int = 0
    rootid: int = 0
    dofnum: int = 0
    inertial_frame: tuple = ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))   # before alignment


@dataclass(eq=False)
class CJoint:
    spec: Joint
    body: CBody
    name: str
    type: JointType
    pos: list
    axis: list
    limited: bool
    range: list
    ref: float
    springref: float
    actfrclimited: bool
    springdamper: Optional[list]
    softness: tuple
    id: int = -1


@dataclass(eq=False)
class CGeom:
    spec: Geom
    body: CBody
    name: str
    type: GeomType
    size: list
    pos: list
    quat: list
    frame: Optional[tuple]
    matid: int = -1
    mesh: object = None           # compiled mesh whose inertia the geom takes (mesh geoms)
    meshid: int = -1
    hfield: Optional[dict] = None
    hfieldid: int = -1
    aamm: Optional[list] = None
    softness: tuple = NO_SOFTNESS
    fluid: list = field(default_factory=lambda: [0.0] * 12)   # ellipsoid fluid model (fluid.py)
    mass: float = 0.0
    inertia: list = field(default_factory=lambda: [0.0, 0.0, 0.0])
    id: int = -1


@dataclass(eq=False)
class CFrameObject:
    """A compiled site, camera or light: its pose in the body frame."""
    spec: object
    body: CBody
    name: str
    pos: list
    quat: list
    size: Optional[list] = None
    dir: Optional[list] = None
    targetbodyid: int = -1
    id: int = -1


@dataclass(eq=False)
class CCamera(CFrameObject):
    """A compiled camera: its pose, field of view, image size and intrinsics."""
    fovy: float = 45.0
    projection: int = 0
    resolution: list = field(default_factory=lambda: [1, 1])
    sensorsize: list = field(default_factory=lambda: [0.0, 0.0])
    intrinsic: list = field(default_factory=lambda: [0.0, 0.0, 0.0, 0.0])


# ----------------------------------------------------------------------------------------------
# the tree
# ----------------------------------------------------------------------------------------------
def compile_tree(c):
    """Number the bodies depth first, compile every object, then each body (inertia, frames)."""
    c.frame_poses = {}
    bodies = []

    stack = [(c.spec.worldbody, None)]           # depth first, iterative (any depth)
    while stack:
        b, parent = stack.pop()
        cb = CBody(spec=b, id=len(bodies), parent=parent, name=b.name or "")
        bodies.append(cb)
        if parent is not None:
            parent.children.append(cb)
        stack.extend((child, cb) for child in reversed(b.bodies))
    bodies[0].name = "world"
    for cb in bodies:
        b = cb.spec
        cb.joints = [compile_joint(c, j, cb) for j in b.joints]
        cb.geoms = [compile_geom(c, g, cb) for g in b.geoms]
        cb.sites = [compile_site(c, s, cb) for s in b.sites]
        cb.cams = [compile_camera(c, cam, cb) for cam in b.cameras]
        cb.lights = [compile_light(c, lt, cb) for lt in b.lights]
    c.bodies = bodies
    number_objects(c)
    world = bodies[0]
    for g in world.geoms:
        apply_frame(g)
    for b in bodies[1:]:
        c.current = b.spec
        compile_body(c, b)
    for obj in c.cams + c.lights:
        c.current = obj.spec
        target = obj.spec.target
        obj.targetbodyid = c.lookup("body", obj.spec, target, "target") if target else -1
        if obj.spec.mode in (CamLight.TARGETBODY, CamLight.TARGETBODYCOM) and \
                obj.targetbodyid < 0:
            what = "camera" if isinstance(obj.spec, Camera) else "light"
            raise obj.spec.error(f"{what} in target mode needs a target body", "target")
    if c.cc.discardvisual:
        discard_visual(c)
    for b in bodies[1:]:         # moving bodies need mass (MuJoCo's CheckBodiesMassInertia)
        if b.joints and not _mass_ok(b):
            raise b.spec.error("mass and inertia of moving bodies must be larger than "
                               "mjMINVAL (give the body geoms with mass or an <inertial>)")


def number_objects(c):
    """Ids of every tree object (in body order), name checks and name indices."""
    bodies = c.bodies
    for kind in ("joints", "geoms", "sites", "cams", "lights"):
        objs = [o for b in bodies for o in getattr(b, kind)]
        for i, o in enumerate(objs):
            o.id = i
        setattr(c, kind, objs)
    for objs, kind in ((bodies, "body"), (c.joints, "joint"), (c.geoms, "geom"),
                       (c.sites, "site"), (c.cams, "camera"), (c.lights, "light")):
        c.check_names(objs, kind)
    c.indices.update(body=c.index(bodies), xbody=c.index(bodies), joint=c.index(c.joints),
                     geom=c.index(c.geoms),
                     site=c.index(c.sites), camera=c.index(c.cams))


def frame_pose(c, frame):
    """(pos, quat) of a <frame> in its body, outer frames composed."""
    if frame is None:
        return None
    pose = c.frame_poses.get(id(frame))
    if pose is None:
        pos = list(frame.pos)
        quat = c.orientation(frame)
        if frame.frame is not None:
            outer = frame_pose(c, frame.frame)
            pos, quat = F.frameaccum(outer[0], outer[1], pos, quat)
        F.normvec(quat)
        pose = c.frame_poses[id(frame)] = (pos, quat)
    return pose


def apply_frame(o):
    if o.frame is not None:
        o.pos, o.quat = F.frameaccum(o.frame[0], o.frame[1], o.pos, o.quat)


def _mass_ok(b):
    """b, or a body welded to it (no joint in between), has mass and inertia."""
    stack = [b]
    while stack:
        b = stack.pop()
        if b.mass >= MINVAL and min(b.inertia) >= MINVAL:
            return True
        stack.extend(ch for ch in b.children if not ch.joints)
    return False


# ----------------------------------------------------------------------------------------------
# bodies
# ----------------------------------------------------------------------------------------------
def compile_body(c, b):
    """mjCBody::Compile: inertial frame (explicit or from geoms), frame, joints, alignment."""
    s = b.spec
    parent = b.parent
    b.weldid = b.id if (s.joints or s.mocap) else parent.weldid
    b.rootid = b.id if parent.parent is None else parent.rootid
    b.pos = list(s.pos)
    b.quat = c.orientation(s)
    ipos, iquat, mass, inert = explicit_inertial(c, s)
    grp = c.cc.inertiagrouprange
    ifg = c.cc.inertiafromgeom
    explicit = s.inertial is not None
    for g in b.geoms:
        c.current = g.spec
        infer = (not explicit or ifg == TFAuto.TRUE) and grp[0] <= g.spec.group <= grp[1]
        compile_geom_inertia(g, infer)
        apply_frame(g)
    c.current = s
    if ifg == TFAuto.TRUE or (ipos is None and ifg == TFAuto.AUTO):
        res = inertia_from_geoms(b, grp)
        if res is not None:
            ipos, iquat, mass, inert = res
    if ipos is None:
        ipos, iquat = list(b.pos), list(b.quat)
    mass = max(mass, c.cc.boundmass)
    inert = [max(x, c.cc.boundinertia) for x in inert]
    if mass < 0 or min(inert) < 0:
        raise s.error("mass and inertia cannot be negative")
    if (inert[0] + inert[1] < inert[2] or inert[0] + inert[2] < inert[1]
            or inert[1] + inert[2] < inert[0]):
        if c.cc.balanceinertia:
            inert = [(inert[0] + inert[1] + inert[2]) / 3.0] * 3
        else:
            raise s.error("inertia must satisfy A + B >= C; use 'balanceinertia' to fix")
    b.ipos, b.iquat, b.mass, b.inertia = ipos, iquat, mass, inert
    pose = frame_pose(c, s.frame)
    if pose is not None:
        b.pos, b.quat = F.frameaccum(pose[0], pose[1], b.pos, b.quat)
    check_joints(b)
    b.inertial_frame = (list(b.ipos), list(b.iquat))
    if _aligned(c, b):
        align_free_body(b)
    # global pose at qpos0 (for eq_data)
    b.xpos0 = [a + p for a, p in zip(F.rotvecquat(b.pos, parent.xquat0), parent.xpos0)]
    b.xquat0 = F.mulquat(parent.xquat0, b.quat)
    for g in b.geoms:
        if g.type == GeomType.PLANE and b.weldid != 0:
            raise g.spec.error("plane only allowed in static bodies", "type")


def explicit_inertial(c, s):
    """(ipos, iquat, mass, inertia) of the body's <inertial> ((None, ...) if it has none)."""
    e = s.inertial
    if e is None:
        return None, [1.0, 0.0, 0.0, 0.0], 0.0, [0.0, 0.0, 0.0]
    c.current = e
    if e.mass is None:
        raise e.error("missing attribute 'mass' in <inertial>", "mass")
    if not e.given("pos"):
        raise e.error("missing attribute 'pos' in <inertial>", "pos")
    ipos, mass = list(e.pos), e.mass
    if mass < 0:
        raise e.error("mass cannot be negative", "mass")
    if e.fullinertia is not None:
        if e.diaginertia is not None:
            raise e.error("fullinertia and diagonal inertia cannot both be specified",
                          "fullinertia")
        if any(getattr(e, a) is not None for a in ("axisangle", "xyaxes", "zaxis", "euler")):
            raise e.error("fullinertia and inertial orientation cannot both be specified",
                          "fullinertia")
        res = I.full_inertia(list(e.fullinertia))
        if res is None:
            raise e.error("inertia must have positive eigenvalues", "fullinertia")
        iquat, inert = res
    else:
        if e.diaginertia is None:
            raise e.error("<inertial> needs diaginertia or fullinertia", "diaginertia")
        inert = list(e.diaginertia)
        iquat = c.orientation(e)
    F.normvec(iquat)
    return ipos, iquat, mass, inert


def inertia_from_geoms(b, grp):
    """Mass, centre and principal inertia of the body's geoms (MuJoCo 4 leaves massless geoms
    out); None when no geom counts."""
    sel = [g for g in b.geoms if grp[0] <= g.spec.group <= grp[1] and g.mass > 0]
    if len(sel) == 1:
        g = sel[0]
        return list(g.pos), list(g.quat), g.mass, list(g.inertia)
    if not sel:
        return None
    mass = sum(g.mass for g in sel)
    if mass < EPS:
        raise b.spec.error("body mass is too small, cannot compute center of mass")
    com = [sum(g.mass * g.pos[k] for g in sel) / mass for k in range(3)]
    toti = [0.0] * 6
    for g in sel:
        d = [g.pos[k] - com[k] for k in range(3)]
        a = I.global_inertia(g.inertia, g.quat)
        o = I.offcenter(g.mass, d)
        toti = [toti[k] + a[k] + o[k] for k in range(6)]
    res = I.full_inertia(toti)
    if res is None:
        raise b.spec.error("inertia must have positive eigenvalues (from geoms)")
    iquat, inert = res
    return com, iquat, mass, inert


def check_joints(b):
    """At most 6 dofs; a ball not followed by rotations; a free joint alone, at the top."""
    s = b.spec
    b.dofnum = sum(j.type.dof_width() for j in b.joints)
    if b.dofnum > 6:
        raise s.error(f"more than 6 dofs in body '{b.name}'")
    hasball = False
    nfree = sum(j.type == JointType.FREE for j in b.joints)
    for j in b.joints:
        if j.type in (JointType.BALL, JointType.HINGE) and hasball:
            raise j.spec.error(f"ball followed by rotation in body '{b.name}'")
        hasball = hasball or j.type == JointType.BALL
    if nfree > 1 or (nfree == 1 and len(b.joints) > 1):
        raise s.error("free joint can only appear by itself")
    if nfree and b.parent.parent is not None:
        raise s.error("free joint can only be used on top level")
    if s.mocap and (b.dofnum or b.parent.parent is not None):
        raise s.error(f"mocap body '{b.name}' is not a fixed child of world", "mocap")


def _aligned(c, b):
    """Free-joint alignment (MuJoCo's alignfree): a childless free body whose frame moves to its
    inertial frame."""
    if len(b.joints) != 1 or b.joints[0].type != JointType.FREE or b.children:
        return False
    align = b.joints[0].spec.align
    return align == TFAuto.TRUE or (align == TFAuto.AUTO and c.cc.alignfree)


def align_free_body(b):
    b.pos, b.quat = F.frameaccum(b.pos, b.quat, b.ipos, b.iquat)
    ipinv, iqinv = F.frameinvert(b.ipos, b.iquat)
    b.ipos, b.iquat = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
    for o in b.geoms + b.sites + b.cams:
        o.pos, o.quat = F.frameaccum(ipinv, iqinv, o.pos, o.quat)
    for lt in b.lights:
        lt.pos, _ = F.frameaccum(ipinv, iqinv, lt.pos, [1.0, 0.0, 0.0, 0.0])
        lt.dir = F.rotvecquat(lt.dir, iqinv)


# ----------------------------------------------------------------------------------------------
# joints
# ----------------------------------------------------------------------------------------------
def compile_joint(c, j, body):
    """mjCJoint::Compile: limits (degrees to radians), axis and anchor in the body frame."""
    c.current = j
    jtype = j.type
    rng = list(j.range)
    limited = j.limited
    if jtype == JointType.FREE:
        limited = TFAuto.FALSE
    else:
        check_autolimits(c, j, limited, rng, "range", "joint has 'range' but not 'limited'; "
                         "set autolimits=\"true\" in <compiler> or give limited explicitly")
    is_lim = islimited(limited, rng)
    if is_lim:
        if rng[0] >= rng[1] and jtype != JointType.BALL:
            raise j.error("range[0] should be smaller than range[1]", "range")
        if rng[0] and jtype == JointType.BALL:
            raise j.error("range[0] should be 0 in ball joint", "range")
        if c.degree and jtype in (JointType.BALL, JointType.HINGE):
            rng = [r * math.pi / 180.0 if r else r for r in rng]
    springdamper = list(j.springdamper)
    if springdamper[0] or springdamper[1]:
        if springdamper[0] <= 0 or springdamper[1] <= 0:
            raise j.error("when defined, springdamper values must be positive", "springdamper")
    else:
        springdamper = None
    afl, afr = j.actuatorfrclimited, list(j.actuatorfrcrange)
    check_autolimits(c, j, afl, afr, "actuatorfrcrange", "joint has 'actuatorfrcrange' but not "
                     "'actuatorfrclimited'; set autolimits=\"true\" in <compiler> or give "
                     "actuatorfrclimited explicitly")
    act_limited = jtype in (JointType.SLIDE, JointType.HINGE) and islimited(afl, afr)
    if act_limited and afr[0] >= afr[1]:
        raise j.error("actuatorfrcrange[0] should be smaller than actuatorfrcrange[1]",
                      "actuatorfrcrange")
    if j.actuatorgravcomp:
        raise c.unsupported(j, "actuatorgravcomp", "actuatorgravcomp")
    for a in ("solreffriction", "solimpfriction"):
        if j.given(a):
            c.warn(f"'{a}' has no counterpart in this engine (friction loss uses the global "
                   "softness)", j)
    c.reject_set(j, {"springyield": "spring yield (plasticity)"})
    pos, axis = joint_frame(c, j)
    ref, springref = j.ref, j.springref
    if jtype == JointType.HINGE and c.degree:
        ref *= math.pi / 180.0
        springref *= math.pi / 180.0
    softness = soft(c, j, "solreflimit", "solimplimit", f"joint '{j.name or ''}'")
    return CJoint(spec=j, body=body, name=j.name or "", type=jtype, pos=pos, axis=axis,
                  limited=is_lim, range=rng, ref=ref, springref=springref,
                  actfrclimited=act_limited, springdamper=springdamper, softness=softness)


def joint_frame(c, j):
    """Anchor and unit axis of a joint in its body frame."""
    axis, pos = list(j.axis), list(j.pos)
    pose = frame_pose(c, j.frame)
    if j.type in (JointType.FREE, JointType.BALL):
        axis = [0.0, 0.0, 1.0]
    elif pose is not None:
        axis = F.rotvecquat(axis, pose[1])
    if F.normvec(axis) < EPS:
        raise j.error("axis too small in joint", "axis")
    if j.type == JointType.FREE:
        pos = [0.0, 0.0, 0.0]
    elif pose is not None:
        pos, _ = F.frameaccum(pose[0], pose[1], pos, [1.0, 0.0, 0.0, 0.0])
    return pos, axis


# ----------------------------------------------------------------------------------------------
# geoms
# ----------------------------------------------------------------------------------------------
def compile_geom(c, g, body):
    """mjCGeom::Compile (all but the inertia): type checks, assets, fromto, mesh frames,
    sizes, softness. The geom frame is composed with its <frame> when its body compiles."""
    c.current = g
    gtype = g.type
    if gtype is None:
        raise c.unsupported(g, "signed distance field geoms (type=\"sdf\")", "type")
    c.reject_set(g, {"adhesion": "contact adhesion",
                     "surfacevel": "surface velocity (conveyor contacts)"})
    c.ignore_visual(g, ("castshadow",))
    if g.condim not in (1, 3, 4, 6):
        raise g.error("invalid condim in geom (must be 1, 3, 4 or 6)", "condim")
    mesh, hfield, matid = geom_assets(c, g)
    size, pos = list(g.size), list(g.pos)
    if g.fromto is not None:
        size, pos, quat = fromto_pose(g, size, pos)
    else:
        quat = c.orientation(g)
    F.normvec(quat)
    mesh_for_geom = None
    if mesh is not None:
        info = mesh.info
        if gtype != GeomType.MESH:
            from .mesh import fit_geom
            fsize, mpos = fit_geom(info, gtype, c.cc.fitaabb, g.fitscale)
            size = [float(x) for x in fsize]
            mpos = [float(x) for x in mpos]
        else:
            if g.shellinertia:
                raise g.error("for mesh geoms, inertia should be specified in the mesh asset",
                              "shellinertia")
            mpos = [float(x) for x in info.pos]
            mesh_for_geom = mesh
        pos, quat = F.frameaccum(pos, quat, mpos, [float(x) for x in info.quat])
    check_geom_size(g, gtype, size)
    aamm = None
    if gtype == GeomType.HFIELD:
        hs = hfield["size"]
        size = [hs[0], hs[1], 0.25 * hs[2] + 0.5 * hs[3]]
    elif gtype == GeomType.MESH:
        aamm = [float(x) for x in mesh.info.aamm]
        size = [max(abs(aamm[0]), abs(aamm[3])), max(abs(aamm[1]), abs(aamm[4])),
                max(abs(aamm[2]), abs(aamm[5]))]
    if g.mass is not None and g.mass < 0:
        raise g.error("geom mass cannot be negative", "mass")
    if g.density < 0:
        raise g.error("geom density cannot be negative", "density")
    softness = soft(c, g, "solref", "solimp", f"geom '{g.name or ''}'")
    if g.given("solmix"):
        c.warn("'solmix' has no counterpart in this engine", g)
    fluid = ellipsoid_fluid_coefs(gtype, size, g.fluidcoef) if g.fluidshape == "ellipsoid" \
        else [0.0] * 12
    return CGeom(spec=g, body=body, name=g.name or "", type=gtype, size=size, pos=pos,
                 quat=quat, frame=frame_pose(c, g.frame), matid=matid, mesh=mesh_for_geom,
                 meshid=c.indices["mesh"][g.mesh] if mesh_for_geom is not None else -1,
                 hfield=hfield, hfieldid=c.indices["hfield"][g.hfield] if hfield else -1,
                 aamm=aamm, softness=softness, fluid=fluid)


def geom_assets(c, g):
    """(compiled mesh, height field, material id) named by the geom."""
    mesh = hfield = None
    if g.mesh:
        if g.mesh not in c.indices["mesh"]:
            raise g.error(f"unknown mesh '{g.mesh}'", "mesh")
        mesh = c.meshes[c.indices["mesh"][g.mesh]]
    if g.type == GeomType.MESH and mesh is None:
        raise g.error("mesh geom must name a mesh asset", "mesh")
    if g.hfield:
        if g.hfield not in c.indices["hfield"]:
            raise g.error(f"unknown hfield '{g.hfield}'", "hfield")
        hfield = c.hfields[c.indices["hfield"][g.hfield]]
    if (g.type == GeomType.HFIELD) != (hfield is not None):
        raise g.error("hfield geom must name an hfield asset (and only hfield geoms can)",
                      "hfield")
    matid = -1
    if g.material:
        if g.material not in c.indices["material"]:
            raise g.error(f"unknown material '{g.material}'", "material")
        matid = c.indices["material"][g.material]
    return mesh, hfield, matid


def fromto_pose(obj, size, pos):
    """Size, centre and orientation of a capsule, cylinder, box or ellipsoid given fromto."""
    fromto = obj.fromto
    what = obj.tag
    if obj.type not in FROMTO_TYPES:
        raise obj.error("fromto requires capsule, cylinder, box or ellipsoid", "fromto")
    if pos[0] or pos[1] or pos[2]:
        raise obj.error(f"both pos and fromto defined in {what}", "fromto")
    vec = [fromto[0] - fromto[3], fromto[1] - fromto[4], fromto[2] - fromto[5]]
    size[1] = F.normvec(vec) / 2
    if size[1] < EPS:
        raise obj.error("fromto points too close", "fromto")
    if obj.type in (GeomType.ELLIPSOID, GeomType.BOX):
        size[2] = size[1]
        size[1] = size[0]
    pos = [(fromto[0] + fromto[3]) / 2, (fromto[1] + fromto[4]) / 2,
           (fromto[2] + fromto[5]) / 2]
    return size, pos, F.z2quat(vec)


def check_geom_size(g, gtype, size):
    if gtype == GeomType.PLANE:
        if size[2] <= 0:
            raise g.error("plane size(3) must be positive", "size")
        return
    need = SIZE_PARAMS[gtype]
    for i in range(need):
        if size[i] <= 0:
            raise g.error(f"size {i} must be positive in geom (a {gtype.name.lower()} needs "
                          f"{need} size parameters)", "size")


def compile_geom_inertia(g, infer):
    """Geom mass and principal inertia (MuJoCo's mjCGeom::Compile, inertia part)."""
    if not infer:
        return
    s = g.spec
    try:
        _geom_mass_inertia(g, s)
    except OverflowError:
        g.mass = g.inertia = None
    if g.mass is None or not math.isfinite(g.mass) or not all(map(math.isfinite, g.inertia)):
        # (MuJoCo loads a box of size 1e200 with an infinite inertia, and every step of it
        # diverges)
        raise s.error(f"the geom's size {list(g.size)} gives a mass or an inertia too large to "
                      "represent (not finite): give a smaller size, or mass and inertia in an "
                      "<inertial>", "size")
    if g.mass < 0 or min(g.inertia) < 0:
        raise s.error("mass, inertia or density are negative in geom")


def _geom_mass_inertia(g, s):
    mvol = g.mesh.info.volume if g.mesh is not None else None
    mbox = [float(x) for x in g.mesh.info.boxsz] if g.mesh is not None else None
    vol = I.geom_volume(g.type, g.size, s.shellinertia, mvol)
    if s.mass is not None:
        if s.mass == 0:
            g.mass = 0.0
        elif vol > EPS:
            g.mass = s.mass
            g.inertia = I.geom_inertia(g.type, g.size, g.mass, s.shellinertia, mbox)
    else:
        if s.density == 0:
            g.mass = 0.0
        else:
            g.mass = s.density * vol
            g.inertia = I.geom_inertia(g.type, g.size, g.mass, s.shellinertia, mbox)


def discard_visual(c):
    """compiler discardvisual: drop visual-only geoms (after their mass has been counted)
    unless pairs, tendons or sensors name them, and drop materials and textures."""
    spec = c.spec
    referenced = {n for p in spec.pairs for n in (p.geom1, p.geom2)}
    referenced |= {w.target for t in spec.tendons for w in t.path if w.kind == "geom"}
    referenced |= {getattr(s, a) for s in spec.sensors
                   for a in ("geom", "geom1", "geom2", "objname", "refname")}
    referenced.discard(None)
    for b in c.bodies:
        b.geoms = [g for g in b.geoms if g.spec.contype or g.spec.conaffinity or
                   (g.name and g.name in referenced)]
    c.geoms = [g for b in c.bodies for g in b.geoms]
    for i, g in enumerate(c.geoms):
        g.id = i
        g.matid = -1
    c.indices["geom"] = c.index(c.geoms)
    c.materials, c.textures = [], []
    c.indices["material"] = {}


# ----------------------------------------------------------------------------------------------
# sites, cameras, lights
# ----------------------------------------------------------------------------------------------
def compile_site(c, s, body):
    """mjCSite::Compile: type, fromto, frame, size."""
    c.current = s
    c.ignore_visual(s, ("mesh",))
    if s.type in (GeomType.PLANE, GeomType.HFIELD, GeomType.MESH, None):
        raise s.error("meshes, hfields and planes are not allowed in site", "type")
    size, pos = list(s.size), list(s.pos)
    if s.fromto is not None:
        size, pos, quat = fromto_pose(s, size, pos)
    else:
        quat = c.orientation(s)
    pose = frame_pose(c, s.frame)
    if pose is not None:
        pos, quat = F.frameaccum(pose[0], pose[1], pos, quat)
    F.normvec(quat)
    for i in range(SIZE_PARAMS[s.type]):
        if size[i] <= 0:
            raise s.error(f"size {i} must be positive in site", "size")
    if s.material and s.material not in c.indices["material"]:
        raise s.error(f"unknown material '{s.material}'", "material")
    return CFrameObject(spec=s, body=body, name=s.name or "", pos=pos, quat=quat, size=size)


def compile_camera(c, cam, body):
    c.current = cam
    c.ignore_visual(cam, ("output",))
    quat = c.orientation(cam)
    pos = list(cam.pos)
    pose = frame_pose(c, cam.frame)
    if pose is not None:
        pos, quat = F.frameaccum(pose[0], pose[1], pos, quat)
    F.normvec(quat)
    if cam.fovy >= 180:
        raise cam.error("fovy too large in camera", "fovy")
    return CCamera(spec=cam, body=body, name=cam.name or "", pos=pos, quat=quat,
                   **camera_sensor(c, cam))


def camera_sensor(c, cam):
    """Image size, projection and intrinsics of a camera (mjCCamera::Compile): focal lengths
    and principal point (length units) from pixels and the sensor size, in single precision as
    MuJoCo stores them; a sensor size sets fovy."""
    f32 = np.float32
    res = [int(v) for v in cam.resolution]
    size = [f32(v) for v in cam.sensorsize]
    fovy = cam.fovy
    given = (cam.focal, cam.focalpixel, cam.principal, cam.principalpixel)
    if any(v for pair in given for v in pair) and not (size[0] > 0 and size[1] > 0):
        raise cam.error("focal/principal require sensorsize in camera", "sensorsize")
    if size[0] > 0 and size[1] > 0:
        if res[0] <= 0 or res[1] <= 0:
            raise cam.error("sensorsize requires positive resolution in camera", "resolution")
        density = [f32(res[k]) / size[k] for k in range(2)]
        # pixel values override length values
        intrinsic = [f32(pix[k]) / density[k] if pix[k] else f32(length[k])
                     for pix, length in ((cam.focalpixel, cam.focal),
                                         (cam.principalpixel, cam.principal))
                     for k in range(2)]
        fovy = float(np.arctan2(size[1] / f32(2), intrinsic[1])) * 360.0 / math.pi
    else:
        znear = f32(float(c.spec.visual.get("map", {}).get("znear", 0.01)))
        intrinsic = [znear, znear, 0.0, 0.0]
    projection = cam.projection == "orthographic" or cam.orthographic
    return dict(resolution=res, sensorsize=[float(v) for v in size], fovy=fovy,
                intrinsic=[float(v) for v in intrinsic], projection=int(projection))


def compile_light(c, lt, body):
    c.current = lt
    c.ignore_visual(lt, ("softness",))
    pos, ldir = list(lt.pos), list(lt.dir)
    pose = frame_pose(c, lt.frame)
    if pose is not None:
        pos, _ = F.frameaccum(pose[0], pose[1], pos, [1.0, 0.0, 0.0, 0.0])
        ldir = F.rotvecquat(ldir, pose[1])
    if F.normvec(ldir) < EPS:
        raise lt.error("zero direction in light", "dir")
    if lt.texture and lt.texture not in c.texture_names:
        raise lt.error(f"unknown texture '{lt.texture}'", "texture")
    return CFrameObject(spec=lt, body=body, name=lt.name or "", pos=pos,
                        quat=[1.0, 0.0, 0.0, 0.0], dir=ldir)

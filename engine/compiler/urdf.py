"""URDF reader: a URDF robot read into a Spec, as MuJoCo's xml_urdf.cc reads it.

The translation follows what MuJoCo does when it loads a URDF file, so that the compiled model
agrees with ``mujoco.MjModel.from_xml_path("robot.urdf")``:

* every link is a body placed at the origin of the joint that connects it to its parent; the
  link named ``world`` (if any) is the world body itself;
* joints: revolute -> hinge (range from lower/upper), continuous -> hinge without range,
  prismatic -> slide, floating -> free, planar -> two slides and a hinge (as MuJoCo),
  spherical (a common extension) -> ball; fixed -> no joint. dynamics damping / friction ->
  damping / frictionloss, limit effort -> actuatorfrcrange (as MuJoCo). Angles are radians.
* inertial: origin, mass and the full inertia matrix (diagonalised as MuJoCo does);
* geometry: box, cylinder, sphere, capsule (an extension MuJoCo accepts) and mesh (filename,
  scale); collision elements become colliding geoms, visual elements are discarded unless
  ``<mujoco><compiler discardvisual="false"/></mujoco>`` is given (then they become non-colliding,
  massless geoms in group 1); colours come from the last visual's material;
* static bodies (connected by fixed joints, and the root link) are fused into their parent as
  MuJoCo's ``fusestatic`` (on by default for URDF) does: their geoms and mass move to the parent.
* the optional ``<mujoco>`` element may hold ``<compiler>``, ``<option>`` and ``<size>``.

Errors name the URDF file, line, element and attribute; errors found by the compile step are
reported at the URDF element behind the spec object (the link's <inertial> for mass and inertia),
with the URDF name of the attribute.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..enums import GeomType, JointType
from ..types import ModelError
from . import frames as F
from .elements import Inertial, TFAuto
from .inertia import full_inertia
from .spec import Spec
from .xmltree import parse_text

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar", "spherical")


# ----------------------------------------------------------------------------------------------
# frames (the compiler's helpers, frames.py, on numpy vectors)
# ----------------------------------------------------------------------------------------------
def _floats(values):
    return [float(x) for x in np.ravel(values)]


def _quat2mat(q):
    return np.array(F.quat2mat(_floats(q))).reshape(3, 3)


def _mulquat(a, b):
    return np.array(F.mulquat(_floats(a), _floats(b)))


def rpy2quat(rpy):
    """URDF roll-pitch-yaw (fixed axes x, then y, then z) as a quaternion: qz * qy * qx."""
    q = [1.0, 0.0, 0.0, 0.0]
    for axis, angle in enumerate(rpy):
        rot = [math.cos(angle / 2), 0.0, 0.0, 0.0]
        rot[axis + 1] = math.sin(angle / 2)
        q = F.mulquat(rot, q)
    F.normvec(q)
    return np.array(q)


def _accum(pos, quat, cpos, cquat):
    """Frame (cpos, cquat) given in frame (pos, quat), expressed in the outer frame."""
    p, q = F.frameaccum(_floats(pos), _floats(quat), _floats(cpos), _floats(cquat))
    return np.array(p), np.array(q)


# ----------------------------------------------------------------------------------------------
# the intermediate robot description
# ----------------------------------------------------------------------------------------------
@dataclass
class _Inertial:
    mass: float
    com: np.ndarray          # (3,) in the link frame
    full: np.ndarray         # (3,3) about the com, in the link frame
    node: object


@dataclass
class _Geom:
    node: object             # the <visual> or <collision> element
    kind: str                # box cylinder sphere capsule mesh
    size: np.ndarray
    pos: np.ndarray
    quat: np.ndarray
    collision: bool
    mesh: str = ""
    rgba: object = None
    name: str = ""


@dataclass
class _Joint:
    node: object
    name: str
    type: str
    pos: np.ndarray
    quat: np.ndarray
    axis: np.ndarray
    lower: object = None
    upper: object = None
    damping: float = 0.0
    friction: float = 0.0
    effort: float = 0.0
    mimic: object = None     # (mimicked joint name, multiplier, offset, <mimic> element)


@dataclass
class _Link:
    node: object
    name: str
    inertials: list = field(default_factory=list)   # fused inertials, in this link's frame
    explicit: bool = False
    geoms: list = field(default_factory=list)
    children: list = field(default_factory=list)    # [(joint, link)]
    parent: object = None


class _Reader:
    def __init__(self, path):
        self.path = path
        self.dir = os.path.dirname(os.path.abspath(path))
        self.meshes = {}           # mesh name -> [(scale, key, node)]
        self.mesh_list = []        # (name, key, scale, node) in creation order
        self.mesh_keys = {}        # mesh name -> (key, scale, node)
        self.mesh_infos = {}       # mesh name -> MeshInfo
        self.materials = {}
        self.compiler_attrs = {}
        self.extra_sections = []   # (tag, attrib, node) for <option>, <size>

    # ---- reading attributes ----------------------------------------------------------------
    def floats(self, node, name, n, default=None, required=False):
        if not node.given(name):             # absent, or blank: no value
            if required:
                raise node.error(f"missing attribute '{name}'", name)
            return None if default is None else np.array(default, float)
        vals = node.floats(name)
        if len(vals) != n:
            raise node.error(f"attribute '{name}' needs {n} number{'s' if n > 1 else ''}, "
                             f"got {len(vals)}", name)
        return np.array(vals, float)

    def origin_of(self, node):
        pos, quat = np.zeros(3), np.array([1.0, 0, 0, 0])
        for c in node.children:
            if c.tag == "origin":
                pos = self.floats(c, "xyz", 3, (0, 0, 0))
                rpy = self.floats(c, "rpy", 3)
                if rpy is not None:
                    quat = rpy2quat(rpy)
                break
        return pos, quat

    @staticmethod
    def child(node, tag, required=False):
        for c in node.children:
            if c.tag == tag:
                return c
        if required:
            raise node.error(f"<{node.tag}> needs a <{tag}> element")
        return None

    # ---- the robot ---------------------------------------------------------------------------
    def read(self):
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ModelError(f"cannot read URDF file: {e.strerror}", file=self.path) from None
        root = parse_text(data, self.path)
        if root.tag != "robot":
            raise root.error(f"URDF root element must be <robot>, found <{root.tag}>")
        self.robot = root
        self.read_mujoco_section(root)
        self.read_materials(root)

        links = {}
        for n in root.children:
            if n.tag == "link":
                name = n.text("name")
                if not name:
                    raise n.error("link without a name", "name")
                if name in links:
                    raise n.error(f"repeated link name '{name}'", "name")
                links[name] = _Link(node=n, name=name)
        if not links:
            raise root.error("URDF has no links")

        joints = []
        jnames = set()
        for n in root.children:
            if n.tag != "joint":
                continue
            jname = n.text("name")
            if not jname:
                raise n.error("joint without a name", "name")
            if jname in jnames:
                raise n.error(f"repeated joint name '{jname}'", "name")
            jnames.add(jname)
            ends = []
            for tag in ("parent", "child"):
                e = self.child(n, tag, required=True)
                lname = e.text("link")
                if not lname:
                    raise e.error(f"<{tag}> needs a 'link' attribute", "link")
                if lname not in links:
                    raise e.error(f"joint '{jname}' refers to unknown link '{lname}'", "link")
                ends.append(links[lname])
            parent, child = ends
            if child.parent is not None:
                raise self.child(n, "child").error(
                    f"link '{child.name}' has more than one parent joint", "link")
            if child is parent:
                raise self.child(n, "child").error(f"joint '{jname}' connects link "
                                                   f"'{child.name}' to itself", "link")
            joints.append((self.read_joint(n, jname), parent, child))
            child.parent = parent
        for j, parent, child in joints:
            parent.children.append((j, child))
        self.joints = {j.name: j for j, _, _ in joints}
        for j in self.joints.values():
            if j.mimic is not None:
                target, node = j.mimic[0], j.mimic[3]
                if target not in self.joints:
                    raise node.error(f"joint '{j.name}' mimics unknown joint '{target}'",
                                     "joint")
                for k in (j, self.joints[target]):
                    if k.type not in ("revolute", "continuous", "prismatic"):
                        raise node.error(f"mimic needs revolute, continuous or prismatic "
                                         f"joints; '{k.name}' is {k.type}", "joint")

        roots = [link for link in links.values() if link.parent is None]
        if not roots:
            raise root.error("URDF links form a cycle: no root link")
        if len(roots) > 1:
            names = ", ".join(f"'{r.name}'" for r in roots)
            raise roots[1].node.error(f"URDF has more than one root link ({names}); "
                                      "connect them with joints", "name")
        # a cycle below the root leaves links unreachable
        seen, stack = set(), [roots[0]]
        while stack:
            link = stack.pop()
            seen.add(link.name)
            stack.extend(c for _, c in link.children)
        if len(seen) != len(links):
            bad = next(link for link in links.values() if link.name not in seen)
            raise bad.node.error(f"link '{bad.name}' is part of a cycle of joints", "name")

        for link in links.values():
            self.read_link(link)
        self.root = roots[0]
        self.links = links

    def read_mujoco_section(self, root):
        for m in root.children:
            if m.tag != "mujoco":
                continue
            for sec in m.children:
                if sec.tag == "compiler":
                    self.compiler_attrs.update(sec.attrib)
                    self.compiler_node = sec
                elif sec.tag in ("option", "size"):
                    self.extra_sections.append(sec)
                else:
                    raise sec.error(f"<{sec.tag}> is not supported inside <mujoco> of a URDF "
                                    "(only compiler, option and size)")

    def compiler_flag(self, name, default):
        v = self.compiler_attrs.get(name)
        if v is None:
            return default
        if v not in ("true", "false"):
            raise self.compiler_node.error(f"'{v}' is not true or false", name)
        return v == "true"

    def read_materials(self, node):
        # every named material with a colour, anywhere in the file; the first one wins
        if node.tag == "material":
            name = node.text("name")
            color = self.child(node, "color")
            if name and color is not None and name not in self.materials:
                self.materials[name] = self.floats(color, "rgba", 4, required=True)
        for c in node.children:
            self.read_materials(c)

    def read_joint(self, n, name):
        jtype = n.text("type")
        if jtype is None:
            raise n.error("missing attribute 'type'", "type")
        if jtype not in JOINT_TYPES:
            raise n.error(f"unknown joint type '{jtype}' (expected one of "
                          f"{', '.join(JOINT_TYPES)})", "type")
        pos, quat = self.origin_of(n)
        axis = np.array([1.0, 0.0, 0.0])
        a = self.child(n, "axis")
        if a is not None:
            axis = self.floats(a, "xyz", 3, required=True)
            if jtype not in ("fixed", "floating", "spherical") and np.linalg.norm(axis) < 1e-10:
                raise a.error("joint axis is zero", "xyz")
        j = _Joint(node=n, name=name, type=jtype, pos=pos, quat=quat, axis=axis)
        lim = self.child(n, "limit")
        if lim is not None:
            if jtype != "continuous":     # continuous joints have no range
                j.lower = lim.float("lower") if lim.given("lower") else None
                j.upper = lim.float("upper") if lim.given("upper") else None
            j.effort = abs(lim.float("effort", 0.0))   # the actuator force range (as MuJoCo)
            lim.float("velocity")         # validated; MuJoCo has no velocity limit
        dyn = self.child(n, "dynamics")
        if dyn is not None:
            j.damping = dyn.float("damping", 0.0)
            j.friction = dyn.float("friction", 0.0)
        mimic = self.child(n, "mimic")
        if mimic is not None:
            target = mimic.text("joint")
            if not target:
                raise mimic.error("<mimic> needs a 'joint' attribute", "joint")
            j.mimic = (target, mimic.float("multiplier", 1.0), mimic.float("offset", 0.0), mimic)
        return j

    def read_link(self, link):
        n = link.node
        inert = self.child(n, "inertial")
        if inert is not None:
            pos, quat = self.origin_of(inert)
            mnode = self.child(inert, "mass", required=True)
            mass = mnode.float("value")
            if mass is None:
                raise mnode.error("missing attribute 'value'", "value")
            if mass < 0:
                raise mnode.error("mass must not be negative", "value")
            inode = self.child(inert, "inertia", required=True)
            vals = {}
            for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"):
                v = inode.float(k)
                if v is None:
                    raise inode.error(f"missing attribute '{k}'", k)
                vals[k] = v
            full = np.array([[vals["ixx"], vals["ixy"], vals["ixz"]],
                             [vals["ixy"], vals["iyy"], vals["iyz"]],
                             [vals["ixz"], vals["iyz"], vals["izz"]]])
            R = _quat2mat(quat)
            link.inertials.append(_Inertial(mass=mass, com=pos, full=R @ full @ R.T, node=inert))
            link.explicit = True
            link.inertial_local = (pos, quat, full, mass, inert)

        rgba = None
        discard = self.compiler_flag("discardvisual", True)
        for c in n.children:
            if c.tag == "visual":
                mat = self.child(c, "material")
                if mat is not None:
                    color = self.child(mat, "color")
                    if color is not None:
                        rgba = self.floats(color, "rgba", 4, required=True)
                    else:
                        mname = mat.text("name")
                        if not mname:
                            raise mat.error("material without a name or a color", "name")
                        if mname in self.materials:
                            rgba = self.materials[mname]
                if not discard:
                    g = self.read_geom(c, collision=False)
                    if rgba is not None:
                        g.rgba = rgba
                    link.geoms.append(g)
            elif c.tag == "collision":
                g = self.read_geom(c, collision=True)
                if rgba is not None:
                    g.rgba = rgba
                link.geoms.append(g)

    def read_geom(self, c, collision):
        geo = self.child(c, "geometry", required=True)
        pos, quat = self.origin_of(c)
        shape = next((s for s in geo.children), None)
        if shape is None:
            raise geo.error("geometry specification not found (box, cylinder, sphere or mesh)")
        g = _Geom(node=c, kind=shape.tag, size=np.zeros(3), pos=pos, quat=quat,
                  collision=collision, name=c.text("name", ""))

        def positive(node, name):
            v = node.float(name)
            if v is None:
                raise node.error(f"missing attribute '{name}'", name)
            if not v > 0:
                raise node.error(f"'{name}' must be positive", name)
            return v

        if shape.tag == "box":
            size = self.floats(shape, "size", 3, required=True)
            if np.any(size <= 0):
                raise shape.error("box sizes must be positive", "size")
            g.size = size / 2
        elif shape.tag in ("cylinder", "capsule"):
            g.size = np.array([positive(shape, "radius"), positive(shape, "length") / 2, 0])
        elif shape.tag == "sphere":
            g.size = np.array([positive(shape, "radius"), 0, 0])
        elif shape.tag == "mesh":
            g.mesh = self.read_mesh(shape)
        else:
            raise shape.error(f"unknown geometry <{shape.tag}> (expected box, cylinder, sphere "
                              "or mesh)")
        return g

    # ---- meshes -----------------------------------------------------------------------------
    def read_mesh(self, shape):
        fname = shape.text("filename")
        if not fname:
            raise shape.error("mesh without a filename", "filename")
        scale = self.floats(shape, "scale", 3, (1, 1, 1))
        path = self.resolve(fname)
        if path is None:
            raise shape.error(f"mesh file '{fname}' not found", "filename")
        base = os.path.splitext(os.path.basename(fname.replace("\\", "/")))[0]
        entries = self.meshes.setdefault(base, [])
        for i, (sc, name) in enumerate(entries):
            if np.array_equal(sc, scale):
                return name
        name = base if not entries else f"{base}{len(entries)}"
        entries.append((scale, name))
        self.mesh_list.append((name, path, scale, shape))
        self.mesh_keys[name] = (path, scale, shape)
        return name

    def mesh_info(self, name):
        """Processed mesh (volume, inertia, frame) for the mass of fused geoms."""
        if name not in self.mesh_infos:
            from .mesh import load_mesh, process_mesh
            path, scale, shape = self.mesh_keys[name]
            try:
                with open(path, "rb") as f:
                    v, f = load_mesh(f.read(), path)
                self.mesh_infos[name] = process_mesh(v, f, scale, "legacy", name=name)
            except ModelError as e:
                raise shape.error(e.reason, "filename") from None
        return self.mesh_infos[name]

    def resolve(self, fname):
        """Find a mesh file: package:// and file:// URIs, relative paths, the meshdir."""
        name = fname.strip()
        rest = name
        if name.startswith("package://"):
            rest = name[len("package://"):]
        elif name.startswith("file://"):
            rest = name[len("file://"):]
            if os.path.isfile(rest):
                return rest
        rest = rest.replace("\\", "/")
        parts = [p for p in rest.split("/") if p]
        candidates = []
        if os.path.isabs(rest) and os.path.isfile(rest):
            return rest
        meshdir = self.compiler_attrs.get("meshdir")
        dirs, d = [], self.dir
        for _ in range(5):                      # the file's directory and its parents
            dirs.append(d)
            up = os.path.dirname(d)
            if up == d:
                break
            d = up
        if meshdir:
            for d in dirs[:1]:
                candidates.append(os.path.join(d, meshdir, parts[-1] if parts else ""))
        for d in dirs:
            for k in range(len(parts)):         # drop the package name and leading folders
                candidates.append(os.path.join(d, *parts[k:]))
        for c in candidates:
            if os.path.isfile(c):
                return c
        return None

    # ---- fusing static bodies (MuJoCo's fusestatic) -------------------------------------------
    def fuse(self, root):
        """Fuse children connected by fixed joints into their parents, deepest links first
        (iterative: any depth)."""
        order, stack = [], [root]
        while stack:
            link = stack.pop()
            order.append(link)
            stack.extend(child for _, child in link.children)
        for link in reversed(order):
            kept = []
            for j, child in link.children:
                if j.type == "fixed":
                    self.merge_into(link, child, j.pos, j.quat)
                    for cj, grandchild in child.children:
                        cj.pos, cj.quat = _accum(j.pos, j.quat, cj.pos, cj.quat)
                        kept.append((cj, grandchild))
                else:
                    kept.append((j, child))
            link.children = kept

    def geom_inertials(self, link):
        """Mass of a link without <inertial>: its colliding geoms at density 1000 (as MuJoCo)."""
        from . import inertia as I
        out = []
        types = {"sphere": 2, "capsule": 3, "cylinder": 5, "box": 6, "mesh": 7}
        for g in link.geoms:
            if not g.collision:
                continue                      # visual geoms have density 0
            gtype = types[g.kind]
            pos, quat = g.pos, g.quat
            mesh_volume = mesh_boxsz = None
            if g.kind == "mesh":
                info = self.mesh_info(g.mesh)
                pos, quat = _accum(pos, quat, info.pos, info.quat)
                mesh_volume, mesh_boxsz = info.volume, [float(x) for x in info.boxsz]
            vol = I.geom_volume(gtype, list(g.size), mesh_volume=mesh_volume)
            mass = 1000.0 * vol
            diag = I.geom_inertia(gtype, list(g.size), mass, mesh_boxsz=mesh_boxsz)
            R = _quat2mat(quat)
            out.append(_Inertial(mass=mass, com=np.asarray(pos, float),
                                 full=R @ np.diag(diag) @ R.T, node=link.node))
        return out

    def merge_into(self, link, child, pos, quat):
        # a link without <inertial> weighs what its geoms weigh (inertiafromgeom)
        if not link.explicit and not link.inertials:
            link.inertials = self.geom_inertials(link)
        if not child.explicit and not child.inertials:
            child.inertials = self.geom_inertials(child)
        R = _quat2mat(quat)
        for g in child.geoms:
            g.pos, g.quat = _accum(pos, quat, g.pos, g.quat)
            link.geoms.append(g)
        for it in child.inertials:
            link.inertials.append(_Inertial(mass=it.mass, com=pos + R @ it.com,
                                            full=R @ it.full @ R.T, node=it.node))
        link.fused = True
        link.inertial_local = None

    # ---- the spec ------------------------------------------------------------------------------
    def build(self):
        """The Spec of the robot (static links fused first, as MuJoCo's fusestatic)."""
        from .reader import _Reader
        fusestatic = self.compiler_flag("fusestatic", True)
        root = self.root
        if fusestatic:
            self.fuse(root)
        spec = Spec()
        spec.file = self.path
        spec.modelfiledir = self.dir
        spec.modelname = self.robot.text("name", "robot")
        spec._src = self.robot
        spec.worldbody._src = _Source(self.robot)
        reader = _Reader(spec, self.path)
        node = getattr(self, "compiler_node", None)
        if node is not None:
            reader.read_compiler(node, skip=URDF_COMPILER_OWN)
        spec.compiler.angle = "radian"
        for sec in self.extra_sections:
            if sec.tag == "option":
                reader.read_option(sec)
            else:
                reader.read_size([sec])
        for mname, path, scale, shape in self.mesh_list:
            m = spec.add_mesh(name=mname, file=path, scale=[float(x) for x in scale])
            m._src = _Source(shape)
        self.geom_names = set()
        world = spec.worldbody
        if root.name == "world" or fusestatic:
            # the root is the world itself, or a static body fused into it
            for g in root.geoms:
                self.add_geom(world, g)
            self.add_bodies(world, [(j, child) for j, child in root.children])
        else:
            self.add_bodies(world, [(None, root)])
        # <mimic>: joint = offset + multiplier * mimicked joint, a joint equality (as MuJoCo)
        for j in self.joints.values():
            if j.mimic is not None:
                target, multiplier, offset, node = j.mimic
                e = spec.add_equality("joint", joint1=j.name, joint2=target,
                                      polycoef=[offset, multiplier, 0.0, 0.0, 0.0])
                e._src = _Source(node)
        return spec

    def add_bodies(self, parent, children):
        """Bodies of the links `children` [(joint, link)] and their subtrees, depth first in
        document order, without recursion (any depth)."""
        stack = [(parent, j, link) for j, link in reversed(children)]
        while stack:
            parent, j, link = stack.pop()
            b = self.add_body(parent, link, j)
            stack.extend((b, cj, child) for cj, child in reversed(link.children))

    def add_body(self, parent, link, j):
        """The body of `link` (its joint j, inertial and geoms) in `parent`."""
        pos = j.pos if j is not None else np.zeros(3)
        quat = j.quat if j is not None else np.array([1.0, 0, 0, 0])
        node = j.node if j is not None else link.node
        # errors about mass or inertia found at the body are reported at the link's inertial
        inode = link.inertials[0].node if link.inertials else link.node
        b = parent.add_body(name=link.name, pos=_floats(pos), quat=_floats(quat))
        b._src = _Source(node, inode)
        self.add_inertial(b, link)
        if j is not None and j.type != "fixed":
            self.add_joints(b, j)
        for g in link.geoms:
            self.add_geom(b, g)
        return b

    def add_inertial(self, body, link):
        if not link.inertials or not (link.explicit or getattr(link, "fused", False)):
            return                    # nothing fused in: the compiler infers it from the geoms
        local = getattr(link, "inertial_local", None)
        if local is not None and len(link.inertials) == 1:
            pos, quat, full, mass, node = local
            if not np.any(full):
                # all-zero inertia in URDF: undefined, keep the mass only
                self.set_inertial(body, node, pos=pos, quat=quat, mass=mass,
                                  diaginertia=[0.0, 0.0, 0.0])
                return
            # diagonalise in the inertial frame, then rotate by the URDF origin (as MuJoCo)
            res = full_inertia([full[0, 0], full[1, 1], full[2, 2], full[0, 1], full[0, 2],
                                full[1, 2]])
            if res is not None:
                lquat, diag = res
                iquat = _mulquat(quat, np.asarray(lquat, float))
                self.set_inertial(body, node, pos=pos, quat=iquat, mass=mass, diaginertia=diag)
                return
        # fused inertials: total mass, centre of mass, full inertia about it (parallel axes)
        mass = sum(it.mass for it in link.inertials)
        node = link.inertials[0].node
        if mass <= 0:
            com = np.mean([it.com for it in link.inertials], axis=0)
            self.set_inertial(body, node, pos=com, mass=0.0, diaginertia=[0.0, 0.0, 0.0])
            return
        com = sum(it.mass * it.com for it in link.inertials) / mass
        full = np.zeros((3, 3))
        for it in link.inertials:
            d = it.com - com
            full += it.full + it.mass * (d @ d * np.eye(3) - np.outer(d, d))
        fi = [full[0, 0], full[1, 1], full[2, 2], full[0, 1], full[0, 2], full[1, 2]]
        self.set_inertial(body, node, pos=com, mass=mass, fullinertia=fi)

    @staticmethod
    def set_inertial(body, node, **values):
        e = Inertial()
        for k, v in values.items():
            setattr(e, k, float(v) if k == "mass" else _floats(v))
        e._src = _Source(node)
        body.inertial = e

    def add_joints(self, body, j):
        common = {}
        if j.damping:
            common["damping"] = float(j.damping)
        if j.friction:
            common["frictionloss"] = float(j.friction)
        if j.effort > 0:
            common["actuatorfrcrange"] = [-j.effort, j.effort]
        zero = [0.0, 0.0, 0.0]
        if j.type in ("revolute", "continuous", "prismatic"):
            jt = JointType.SLIDE if j.type == "prismatic" else JointType.HINGE
            rng = {}
            if j.lower is not None or j.upper is not None:
                lo = j.lower if j.lower is not None else 0.0
                hi = j.upper if j.upper is not None else 0.0
                if (j.lower is None) != (j.upper is None) or lo > hi:
                    rng = {"limited": TFAuto.FALSE}     # as MuJoCo: a malformed range is ignored
                else:
                    rng = {"range": [float(lo), float(hi)]}
            joints = [body.add_joint(name=j.name, type=jt, pos=zero, axis=_floats(j.axis),
                                     **rng, **common)]
        elif j.type == "floating":
            joints = [body.add_joint(name=j.name, type=JointType.FREE, **common)]
        elif j.type == "spherical":
            joints = [body.add_joint(name=j.name, type=JointType.BALL, pos=zero, **common)]
        else:
            # planar: the plane normal is the axis: slides along the frame's x and y, a hinge
            # about z
            mat = _quat2mat(F.z2quat(_floats(j.axis)))
            joints = [body.add_joint(name=j.name + suffix, type=jt, pos=zero, axis=_floats(ax),
                                     **common)
                      for suffix, jt, ax in (("_TX", JointType.SLIDE, mat[:, 0]),
                                             ("_TY", JointType.SLIDE, mat[:, 1]),
                                             ("_RZ", JointType.HINGE, j.axis))]
        for joint in joints:
            joint._src = _Source(j.node)

    def add_geom(self, body, g):
        kw = {}
        if g.name and g.name not in self.geom_names:
            self.geom_names.add(g.name)
            kw["name"] = g.name
        if g.kind == "mesh":
            kw.update(type=GeomType.MESH, mesh=g.mesh)
        else:
            n = {"box": 3, "cylinder": 2, "capsule": 2, "sphere": 1}[g.kind]
            kw.update(type=GeomType[g.kind.upper()], size=_floats(g.size[:n]) + [0.0] * (3 - n))
        kw.update(pos=_floats(g.pos), quat=_floats(g.quat))
        if g.collision:
            kw.update(contype=1, conaffinity=1)
        else:
            kw.update(contype=0, conaffinity=0, group=1, density=0.0)
        if g.rgba is not None:
            kw["rgba"] = _floats(g.rgba)
        geom = body.add_geom(**kw)
        geom._src = _Source(g.node)


URDF_COMPILER_OWN = ("fusestatic", "discardvisual", "strippath", "meshdir", "angle", "assetdir",
                     "texturedir")
_ATTRIBUTE_MAP = {"range": "lower", "axis": "xyz", "mass": "value", "fullinertia": "inertia",
                  "diaginertia": "inertia", "scale": "scale", "file": "filename"}


class _Source:
    """Where a spec object made from URDF came from: errors name the URDF element (the link's
    inertial for errors about mass and inertia) and the URDF attribute behind an MJCF one."""

    def __init__(self, node, inertia_node=None):
        self.node, self.inertia_node = node, inertia_node
        self.file, self.line, self.tag = node.file, node.line, node.tag

    def error(self, message, attribute=None):
        node = self.node
        if self.inertia_node is not None and ("inertia" in message.lower() or
                                              "mass" in message.lower()):
            node = self.inertia_node
        attr = _ATTRIBUTE_MAP.get(attribute) if attribute else None
        return ModelError(message, file=node.file, line=node.line, element=node.tag,
                          attribute=attr)


def read_urdf(path):
    """Spec of a URDF file (see the module docstring for the translation)."""
    r = _Reader(os.fspath(path))
    r.read()
    return r.build()


def urdf_to_mjcf(path):
    """Translate a URDF file to MJCF: returns (MJCF text, assets dict)."""
    return read_urdf(path).to_xml(), {}


def load_urdf(path):
    """Compile a URDF file into a Model (see the module docstring for the translation)."""
    from .compile import compile_spec
    return compile_spec(read_urdf(path))

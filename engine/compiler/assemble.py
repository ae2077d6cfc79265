"""The Model's arrays: allocated from the field table of engine/types.py, then filled from the
compiled objects (MuJoCo's mjCModel::CopyTree and CopyObjects)."""
from __future__ import annotations

import itertools

import numpy as np

from ..constants import MINVAL
from ..enums import SPARSE_NV, GeomType, Jacobian, JointType, LightType, Solver
from ..types import (DATA_SPEC, DERIVED_SIZES, MODEL_SIZES, MODEL_SPEC, Model, _DTYPES, _gib,
                     _shape, check_memory, spec_nbytes)
from . import frames as F
from .compile import check_names
from .mesh import mesh_graphs
from .save import SpecLink


def assemble(c):
    """Sizes, arrays, names and extras of the Model of compiler `c`."""
    sizes = model_sizes(c)
    check_model_memory(c, sizes)
    A = {name: np.zeros(_shape(shape, sizes), dtype=_DTYPES[dtype])
         for name, dtype, shape in MODEL_SPEC}
    copy_options(c.opt, A)
    copy_tree(c, A)
    copy_assets(c, A)
    copy_tendons(c, A)
    copy_actuators(c, A)
    copy_constraints(c, A)
    copy_sensors(c, A)
    key_names = copy_keys(c, A, sizes)
    scale_total_mass(c.cc.settotalmass, A)
    names = {"body": [b.name for b in c.bodies], "joint": [j.name for j in c.joints],
             "geom": [g.name for g in c.geoms], "site": [s.name for s in c.sites],
             "camera": [o.name for o in c.cams], "light": [o.name for o in c.lights],
             "mesh": [m.name for m in c.meshes], "tendon": [t.name for t in c.tendons],
             "actuator": [a.name for a in c.actuators], "equality": [e.name for e in c.eqs],
             "key": key_names, "sensor": [s["name"] for s in c.sensors],
             "material": [m.name or "" for m in c.materials],
             "texture": [t["name"] for t in c.textures],
             "hfield": [h["name"] for h in c.hfields]}
    materials = [dict(name=m.name or "", rgba=list(m.rgba), texture=m.texture or "",
                      texrepeat=list(m.texrepeat), texuniform=bool(m.texuniform),
                      emission=m.emission, specular=m.specular, shininess=m.shininess,
                      reflectance=m.reflectance) for m in c.materials]
    textures = [{k: v for k, v in t.items() if k != "_spec"} for t in c.textures]
    spec = c.spec
    objects = {"body": c.bodies, "joint": c.joints, "geom": c.geoms, "site": c.sites,
               "tendon": c.tendons, "actuator": c.actuators, "equality": c.eqs,
               "pair": c.pairs}
    link = SpecLink(spec, {k: [o.spec for o in v] for k, v in objects.items()},
                    [b.inertial_frame for b in c.bodies])
    return Model(sizes, A, names, path=spec.file, materials=materials, textures=textures,
                 sensors=c.sensors, visual=spec.visual, statistic=spec.statistic,
                 warnings=list(c.warnings), size=dict(spec.size), model_name=spec.modelname,
                 springdamper={j.id: tuple(j.springdamper) for j in c.joints
                               if j.springdamper},
                 light_type=np.array([int(light_type(o.spec)) for o in c.lights], int),
                 lengthrange_options=length_range_options(c),
                 _spec=link)


def length_range_options(c):
    """The <lengthrange> options, and the solver of MuJoCo's length-range run: the file's, or
    MuJoCo's default Newton where the file gives none (this engine's default is PGS, whose
    stopping point would show in the range)."""
    o = c.spec.option
    solver = c.opt["solver"] if o.given("solver") else int(Solver.NEWTON)
    return dict(c.lengthrange, solver=solver)


def model_sizes(c):
    """The sizes of MODEL_SIZES, and the address layout of joints and dofs on `c`."""
    layout_dofs(c)
    c.mesh_graphs = hull_graphs(c)
    nmocap = sum(1 for b in c.bodies if b.spec.mocap)
    sizes = dict(
        nq=c.nq, nv=len(c.dof_parent), nu=len(c.actuators),
        na=sum(a.actnum for a in c.actuators), nbody=len(c.bodies), njnt=len(c.joints),
        ngeom=len(c.geoms), nsite=len(c.sites), ncam=len(c.cams), nlight=len(c.lights),
        nmesh=len(c.meshes), nmeshvert=sum(len(m.info.vert) for m in c.meshes),
        nmeshface=sum(len(m.info.face) for m in c.meshes),
        nmeshgraph=len(c.mesh_graphs[1]), nmeshcluster=len(c.mesh_graphs[5]),
        nhfield=len(c.hfields),
        nhfielddata=sum(len(h["data"]) for h in c.hfields), ntendon=len(c.tendons),
        nwrap=sum(len(t.path) for t in c.tendons), neq=len(c.eqs),
        nkey=max(len(c.spec.keys), int(c.spec.size.get("nkey", 0) or 0)),
        npair=len(c.pairs), nexclude=len(c.excludes), nM=c.nM, nmocap=nmocap,
        nmat=len(c.materials), nsensor=len(c.sensors),
        nsensordata=sum(s["dim"] for s in c.sensors))
    for k, derive in DERIVED_SIZES.items():
        sizes[k] = derive(sizes)
    assert set(sizes) == set(MODEL_SIZES), set(sizes) ^ set(MODEL_SIZES)
    return sizes


def hull_graphs(c):
    """The convex hull graphs of the meshes that collide (used by a mesh geom with a nonzero
    contype or conaffinity, or by one named in a <pair>) and of those given without faces,
    as MuJoCo: support functions climb them."""
    in_pair = {g for p in c.pairs for g in (p.geom1, p.geom2)}
    need = np.array([m.info.hull_only for m in c.meshes], dtype=bool)
    for g in c.geoms:
        if g.type == GeomType.MESH and g.meshid >= 0 and (
                g.spec.contype or g.spec.conaffinity or g.id in in_pair):
            need[g.meshid] = True
    return mesh_graphs([m.info for m in c.meshes], need)


def layout_dofs(c):
    """qpos and dof addresses of the joints, the dof tree (dof_parentid) and the sparse
    inertia layout (dof_Madr, nM)."""
    qposadr = 0
    c.dof_parent = []
    lastdof = {}
    for b in c.bodies:
        last = lastdof.get(b.parent.id, -1) if b.parent is not None else -1
        for j in b.joints:
            j.qposadr, j.dofadr = qposadr, len(c.dof_parent)
            for _ in range(j.type.dof_width()):
                c.dof_parent.append(last)
                last = len(c.dof_parent) - 1
            qposadr += j.type.qpos_width()
        lastdof[b.id] = last
    c.nq = qposadr
    # row i of the sparse inertia holds dof i and its ancestors: depth(i) + 1 entries
    rowlen = []
    for p in c.dof_parent:
        rowlen.append(rowlen[p] + 1 if p >= 0 else 1)
    c.dof_Madr = [0] + list(itertools.accumulate(rowlen))[:-1] if rowlen else []
    c.nM = sum(rowlen)


def check_model_memory(c, sizes):
    """Refuse (CapacityError) before allocating a Model whose arrays, with the Data set_const
    makes (no room for contacts or rows), need more memory than is available: the bytes and
    the sizes that drive them (a deep chain's nM = sum of the dofs' depths, nD = 2 nM - nv)."""
    model = spec_nbytes(MODEL_SPEC, sizes)
    jac = c.opt["jacobian"]
    sparse = jac == Jacobian.SPARSE or (jac == Jacobian.AUTO and sizes["nv"] >= SPARSE_NV)
    nv = sizes["nv"]
    nhullmax = max((len(m.info.vert) for m in c.meshes), default=0)    # at least the hulls'
    data = spec_nbytes(DATA_SPEC, dict(sizes, nwrap2=2 * sizes["nwrap"], nhullmax=nhullmax,
                                       nconmax=1, njmax=1,
                                       npairmax=max(64, 8 * sizes["ngeom"]), njcol=nv,
                                       nvdense=0 if sparse else nv, njrow=3 if sparse else 0))
    model += 8 * sizes["nkey"]          # the list of key names (<size nkey> reserves keys)
    check_memory(model + data, f"the Model ({_gib(model)}: nbody={sizes['nbody']}, nv={nv}, "
                               f"nM={sizes['nM']}, nD={sizes['nD']}, ngeom={sizes['ngeom']}, "
                               f"nkey={sizes['nkey']}) "
                               f"with the Data of its constants ({_gib(data)})")


def copy_softness(A, prefix, k, softness):
    """Row k of the softness arrays of an object kind (compile_objects.soft)."""
    for name, v in zip(("epsilon", "kappa", "rmin", "impedance", "dampratio"), softness):
        A[f"{prefix}_{name}"][k] = v


def copy_options(opt, A):
    for name, _, _ in MODEL_SPEC:
        if name.startswith("opt_"):
            A[name][...] = opt[name[4:]]


# ----------------------------------------------------------------------------------------------
# the tree (CopyTree)
# ----------------------------------------------------------------------------------------------
def copy_tree(c, A):
    """Bodies, joints, dofs, geoms, sites, cameras and lights."""
    mocapid = 0
    for b in c.bodies:
        i = b.id
        s = b.spec
        A["body_parentid"][i] = b.parent.id if b.parent is not None else 0
        A["body_rootid"][i] = b.rootid
        A["body_weldid"][i] = b.weldid
        A["body_mocapid"][i] = mocapid if s.mocap else -1
        mocapid += bool(s.mocap)
        A["body_jntnum"][i] = len(b.joints)
        A["body_jntadr"][i] = b.joints[0].id if b.joints else -1
        A["body_geomnum"][i] = len(b.geoms)
        A["body_geomadr"][i] = b.geoms[0].id if b.geoms else -1
        A["body_pos"][i] = b.pos
        A["body_quat"][i] = b.quat
        A["body_ipos"][i] = b.ipos
        A["body_iquat"][i] = b.iquat
        A["body_mass"][i] = b.mass
        A["body_inertia"][i] = b.inertia
        A["body_gravcomp"][i] = s.gravcomp
        A["body_sameframe"][i] = F.same_frame(b.ipos, b.iquat)
        ndof = sum(j.type.dof_width() for j in b.joints)
        A["body_dofnum"][i] = ndof
        A["body_dofadr"][i] = b.joints[0].dofadr if ndof else -1
        for j in b.joints:
            copy_joint(j, A)
    A["dof_parentid"][:] = c.dof_parent
    A["dof_Madr"][:] = c.dof_Madr
    for i in range(len(c.bodies) - 1, 0, -1):
        A["body_subtreemass"][i] += A["body_mass"][i]
        A["body_subtreemass"][A["body_parentid"][i]] += A["body_subtreemass"][i]
    A["body_subtreemass"][0] += A["body_mass"][0]
    for g in c.geoms:
        copy_geom(g, A)
    for s in c.sites:
        copy_site(s, A)
    for cam in c.cams:
        copy_camera(cam, A)
    for lt in c.lights:
        copy_light(lt, A)


def copy_joint(j, A):
    """jnt_*, its dofs and its part of qpos0 / qpos_spring."""
    k, s, q = j.id, j.spec, j.qposadr
    A["jnt_type"][k] = j.type
    A["jnt_qposadr"][k] = q
    A["jnt_dofadr"][k] = j.dofadr
    A["jnt_bodyid"][k] = j.body.id
    A["jnt_group"][k] = s.group
    A["jnt_limited"][k] = int(j.limited)
    A["jnt_pos"][k] = j.pos
    A["jnt_axis"][k] = j.axis
    A["jnt_range"][k] = j.range
    A["jnt_actfrclimited"][k] = int(j.actfrclimited)
    A["jnt_actfrcrange"][k] = s.actuatorfrcrange
    A["jnt_stiffness"][k] = s.stiffness
    A["jnt_margin"][k] = s.margin
    copy_softness(A, "jnt", k, j.softness)
    qpos0, spring = A["qpos0"], A["qpos_spring"]
    if j.type == JointType.FREE:
        qpos0[q:q + 3] = j.body.pos
        qpos0[q + 3:q + 7] = j.body.quat
        spring[q:q + 7] = qpos0[q:q + 7]
    elif j.type == JointType.BALL:
        qpos0[q:q + 4] = [1, 0, 0, 0]
        spring[q:q + 4] = [1, 0, 0, 0]
    else:
        qpos0[q] = j.ref
        spring[q] = j.springref
    for d in range(j.dofadr, j.dofadr + j.type.dof_width()):
        A["dof_bodyid"][d] = j.body.id
        A["dof_jntid"][d] = k
        A["dof_armature"][d] = s.armature
        A["dof_damping"][d] = s.damping
        A["dof_frictionloss"][d] = s.frictionloss


def copy_geom(g, A):
    k, s = g.id, g.spec
    A["geom_type"][k] = g.type
    A["geom_contype"][k] = s.contype
    A["geom_conaffinity"][k] = s.conaffinity
    A["geom_condim"][k] = s.condim
    A["geom_bodyid"][k] = g.body.id
    A["geom_dataid"][k] = g.meshid if g.type == GeomType.MESH else (
        g.hfieldid if g.type == GeomType.HFIELD else -1)
    A["geom_matid"][k] = g.matid
    A["geom_group"][k] = s.group
    A["geom_priority"][k] = s.priority
    A["geom_size"][k] = g.size
    A["geom_pos"][k] = g.pos
    A["geom_quat"][k] = g.quat
    A["geom_friction"][k] = s.friction
    A["geom_rgba"][k] = s.rgba
    A["geom_fluid"][k] = g.fluid
    A["geom_sameframe"][k] = F.same_frame(g.pos, g.quat, g.body.ipos, g.body.iquat)
    A["geom_margin"][k] = s.margin
    A["geom_gap"][k] = s.gap
    copy_softness(A, "geom", k, g.softness)
    from .inertia import geom_rbound
    A["geom_rbound"][k] = geom_rbound(g.type, g.size, g.aamm,
                                      g.hfield["size"] if g.hfield else None)


def copy_site(o, A):
    k, s = o.id, o.spec
    A["site_type"][k] = s.type
    A["site_bodyid"][k] = o.body.id
    A["site_group"][k] = s.group
    A["site_size"][k] = o.size
    A["site_pos"][k] = o.pos
    A["site_quat"][k] = o.quat
    A["site_rgba"][k] = s.rgba
    A["site_sameframe"][k] = F.same_frame(o.pos, o.quat, o.body.ipos, o.body.iquat)


def copy_camera(o, A):
    k, s = o.id, o.spec
    A["cam_mode"][k] = s.mode
    A["cam_bodyid"][k] = o.body.id
    A["cam_targetbodyid"][k] = o.targetbodyid
    A["cam_pos"][k] = o.pos
    A["cam_quat"][k] = o.quat
    for f in ("fovy", "projection", "resolution", "sensorsize", "intrinsic"):
        A["cam_" + f][k] = getattr(o, f)


def light_type(s):
    """LightType of a light: directional="true" (given), else its type."""
    directional = s.directional if s.given("directional") else s.type == "directional"
    return LightType.DIRECTIONAL if directional else LightType[s.type.upper()]


def copy_light(o, A):
    k, s = o.id, o.spec
    A["light_mode"][k] = s.mode
    A["light_bodyid"][k] = o.body.id
    A["light_targetbodyid"][k] = o.targetbodyid
    A["light_directional"][k] = int(light_type(s) == LightType.DIRECTIONAL)
    A["light_castshadow"][k] = int(s.castshadow)
    A["light_active"][k] = int(s.active)
    A["light_pos"][k] = o.pos
    A["light_dir"][k] = o.dir
    for f in ("attenuation", "ambient", "diffuse", "specular", "cutoff", "exponent"):
        A["light_" + f][k] = getattr(s, f)


# ----------------------------------------------------------------------------------------------
# the other objects (CopyObjects)
# ----------------------------------------------------------------------------------------------
def copy_assets(c, A):
    """Meshes (vertices and faces concatenated), height fields and material colours."""
    for i, m in enumerate(c.materials):
        A["mat_rgba"][i] = m.rgba
    vert = [np.asarray(m.info.vert, dtype=np.float64).reshape(-1, 3) for m in c.meshes]
    face = [np.asarray(m.info.face, dtype=np.int64).reshape(-1, 3) for m in c.meshes]
    if vert:
        A["mesh_vert"][:] = np.concatenate(vert)
        A["mesh_face"][:] = np.concatenate(face)
    va = fa = 0
    for i in range(len(c.meshes)):
        A["mesh_vertadr"][i], A["mesh_vertnum"][i] = va, len(vert[i])
        A["mesh_faceadr"][i], A["mesh_facenum"][i] = fa, len(face[i])
        va += len(vert[i])
        fa += len(face[i])
    for name, value in zip(("mesh_graphadr", "mesh_graph", "mesh_extrema", "mesh_clusteradr",
                            "mesh_clusternum", "mesh_cluster"), c.mesh_graphs):
        A[name][...] = value
    adr = 0
    for i, h in enumerate(c.hfields):
        A["hfield_nrow"][i], A["hfield_ncol"][i] = h["nrow"], h["ncol"]
        A["hfield_adr"][i] = adr
        A["hfield_size"][i] = h["size"]
        A["hfield_data"][adr:adr + len(h["data"])] = h["data"]
        adr += len(h["data"])


def copy_tendons(c, A):
    adr = 0
    for k, t in enumerate(c.tendons):
        s = t.spec
        A["tendon_adr"][k] = adr
        A["tendon_num"][k] = len(t.path)
        A["tendon_limited"][k] = int(t.limited)
        A["tendon_range"][k] = t.range
        A["tendon_lengthspring"][k] = t.springlength
        A["tendon_rgba"][k] = s.rgba
        for f in ("margin", "stiffness", "damping", "frictionloss", "width"):
            A["tendon_" + f][k] = getattr(s, f)
        copy_softness(A, "tendon", k, t.softness)
        for wt, oid, prm in t.path:
            A["wrap_type"][adr] = wt
            A["wrap_objid"][adr] = oid
            A["wrap_prm"][adr] = prm
            adr += 1


def copy_actuators(c, A):
    actadr = 0
    for i, a in enumerate(c.actuators):
        s = a.spec
        for f in ("dyntype", "gaintype", "biastype", "group"):
            A["actuator_" + f][i] = getattr(s, f)
        A["actuator_trntype"][i] = a.trntype
        A["actuator_actnum"][i] = a.actnum
        for f in ("ctrllimited", "forcelimited", "actlimited"):
            A["actuator_" + f][i] = int(getattr(a, f))
        A["actuator_actearly"][i] = int(s.actearly)
        A["actuator_actadr"][i] = actadr if a.actnum else -1
        actadr += a.actnum
        A["actuator_trnid"][i] = a.trnid
        A["actuator_ctrlrange"][i] = a.ctrlrange
        A["actuator_actrange"][i] = a.actrange
        for f in ("dynprm", "gainprm", "biasprm", "forcerange", "lengthrange", "gear",
                  "cranklength"):
            A["actuator_" + f][i] = getattr(s, f)


def copy_constraints(c, A):
    """Equality constraints, contact pairs and exclusions."""
    for i, e in enumerate(c.eqs):
        A["eq_type"][i] = e.type
        A["eq_obj1id"][i] = e.obj1
        A["eq_obj2id"][i] = e.obj2
        A["eq_active0"][i] = int(e.spec.active)
        A["eq_objtype"][i] = e.objtype
        A["eq_data"][i] = e.data
        copy_softness(A, "eq", i, e.softness)
        A["eq_hard"][i] = int(e.spec.hard)
    for i, p in enumerate(c.pairs):
        s = p.spec
        A["pair_geom1"][i], A["pair_geom2"][i], A["pair_condim"][i] = p.geom1, p.geom2, s.condim
        A["pair_friction"][i] = s.friction
        A["pair_margin"][i], A["pair_gap"][i] = s.margin, s.gap
        copy_softness(A, "pair", i, p.softness)
    A["exclude_body1"][:] = [e.geom1 for e in c.excludes]
    A["exclude_body2"][:] = [e.geom2 for e in c.excludes]


def copy_keys(c, A, sizes):
    """Keyframes: a key may give the first values only; qpos is completed from qpos0, qvel,
    act and ctrl with zeros (as MuJoCo); mocap poses must be complete or are ignored."""
    keys = c.spec.keys
    nq, nv, na, nu, nmocap = (sizes[k] for k in ("nq", "nv", "na", "nu", "nmocap"))
    mocap = [b for b in c.bodies if b.spec.mocap]
    kq, kmp, kmq = A["key_qpos"], A["key_mpos"], A["key_mquat"]
    names = []
    # every key starts from the model's pose; keys beyond those given (<size nkey>) stay so
    # (filled at once: a large nkey costs its memory, not a Python loop)
    kq[:] = A["qpos0"]
    for m_i, b in enumerate(mocap):
        kmp[:, m_i] = b.pos
        kmq[:, m_i] = np.asarray(b.quat) / max(float(np.linalg.norm(b.quat)), MINVAL)
    for i in range(min(len(keys), sizes["nkey"])):
        k = keys[i]
        c.current = k
        names.append(k.name or "")
        A["key_time"][i] = k.time
        for attr, size in (("qpos", nq), ("qvel", nv), ("act", na), ("ctrl", nu),
                           ("mpos", 3 * nmocap), ("mquat", 4 * nmocap)):
            v = getattr(k, attr)
            if v is None:
                continue
            if len(v) > size:
                raise k.error(f"expected at most {size} numbers ({attr} size), got {len(v)}",
                              attr)
            target = A["key_" + attr]
            if attr in ("qpos", "qvel", "act", "ctrl"):
                target[i, :len(v)] = v
            elif len(v) == size:
                target[i] = np.reshape(v, target[i].shape)
        for j in c.joints:
            if j.type in (JointType.FREE, JointType.BALL):
                a0 = j.qposadr + (3 if j.type == JointType.FREE else 0)
                q = list(kq[i, a0:a0 + 4])
                F.normvec(q)
                kq[i, a0:a0 + 4] = q
        for m_i in range(nmocap):
            q = list(kmq[i, m_i])
            F.normvec(q)
            kmq[i, m_i] = q
    check_names([(k.name or "", k) for k in keys], "key")
    return names + [""] * (sizes["nkey"] - len(names))


def scale_total_mass(total_mass, A):
    """MuJoCo's settotalmass: masses and inertias scaled to the given total."""
    if total_mass > 0:
        total = A["body_mass"][1:].sum()
        if total > MINVAL:
            scale = total_mass / total
            A["body_mass"] *= scale
            A["body_inertia"] *= scale
            A["body_subtreemass"] *= scale


def copy_sensors(c, A):
    """The sensor arrays (sensor_adr: the sensors' outputs one after the other)."""
    adr = 0
    for i, s in enumerate(c.sensors):
        for k in ("datatype", "needstage", "objtype", "objid", "reftype", "refid", "dim",
                  "cutoff", "noise", "intprm"):
            A["sensor_" + k][i] = s[k]
        A["sensor_type"][i] = s["stype"]
        A["sensor_adr"][i] = adr
        adr += s["dim"]

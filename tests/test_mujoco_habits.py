"""A MuJoCo user's habits: each test does what a user of MuJoCo's Python bindings writes, once with
``mujoco`` and once with ``engine``, on the same model, and compares the two.

Counts as ints, copies and pickling, named access for every object kind, object types and names,
keyframes by name, step(nstep=), contacts as records, errors for misspelt attributes, the energy
after forward; and the outputs people read: CSV files in plain numbers, the analysis and
benchmark figures, the README's example.
"""
import concurrent.futures
import copy
import csv
import importlib.util
import multiprocessing
import os
import pickle
import re
import subprocess
import sys

import mujoco
import numpy as np
import pytest

import engine
from engine import ObjType

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

XML = """
<mujoco model="habits">
  <option timestep="0.002" cone="elliptic"/>
  <asset>
    <mesh name="wedge" vertex="0 0 0  0.12 0 0  0 0.08 0  0 0 0.05  0.03 0.02 0.04"/>
  </asset>
  <worldbody>
    <light name="lamp" pos="0 0 3" dir="0 0 -1"/>
    <camera name="side" pos="0 -3 1" xyaxes="1 0 0 0 0 1"/>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="box" pos="0 0 0.099">
      <freejoint name="free"/>
      <geom name="box" type="box" size="0.1 0.1 0.1"/>
      <site name="box_top" pos="0 0 0.1"/>
    </body>
    <body name="hover" pos="1 0 0.06">
      <joint name="lift" type="slide" axis="0 0 1" stiffness="50"/>
      <geom name="ball" type="sphere" size="0.05" gap="0.05"/>
    </body>
    <body name="arm" pos="-1 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" stiffness="2" damping="0.1"/>
      <geom name="upper" type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
      <site name="elbow_site" pos="0.4 0 0"/>
      <body name="forearm" pos="0.4 0 0">
        <joint name="wrist" type="ball" damping="0.05"/>
        <geom name="fore" type="capsule" fromto="0 0 0 0.3 0 0" size="0.025"/>
        <geom type="mesh" mesh="wedge" pos="0.3 0 0" contype="0" conaffinity="0" density="0"/>
        <site name="tip" pos="0.35 0 0"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <spatial name="cable" limited="true" range="0 2">
      <site site="elbow_site"/>
      <site site="tip"/>
    </spatial>
    <fixed name="coupling">
      <joint joint="shoulder" coef="1"/>
      <joint joint="lift" coef="0.5"/>
    </fixed>
  </tendon>
  <equality>
    <connect name="pin" body1="forearm" body2="box" anchor="0 0 0" active="false"/>
  </equality>
  <actuator>
    <motor name="shoulder_motor" joint="shoulder" gear="10"/>
    <position name="lift_servo" joint="lift" kp="100"/>
    <general name="filter" joint="shoulder" dyntype="filter" dynprm="0.1"/>
  </actuator>
  <sensor>
    <jointpos name="angle" joint="shoulder"/>
    <framepos name="tip_pos" objtype="site" objname="tip"/>
  </sensor>
  <keyframe>
    <key name="home" time="0.5" qpos="0 0 0.099 1 0 0 0  0.01  0.3  0.98 0 0.2 0"
         qvel="0 0 0 0 0 0  0  0.5  0 0 1" ctrl="0.1 0.02 0.3" act="0.2"/>
  </keyframe>
</mujoco>
"""

# the kinds of MuJoCo's named access and their mjtObj
MODEL_KINDS = {"body": ObjType.BODY, "joint": ObjType.JOINT, "geom": ObjType.GEOM,
               "site": ObjType.SITE, "camera": ObjType.CAMERA, "light": ObjType.LIGHT,
               "mesh": ObjType.MESH, "tendon": ObjType.TENDON, "actuator": ObjType.ACTUATOR,
               "sensor": ObjType.SENSOR, "equality": ObjType.EQUALITY, "key": ObjType.KEY}
DATA_KINDS = ("body", "joint", "geom", "site", "camera", "light", "tendon", "actuator")
# the size of each kind's count
SIZE = {"body": "nbody", "joint": "njnt", "geom": "ngeom", "site": "nsite", "camera": "ncam",
        "light": "nlight", "mesh": "nmesh", "tendon": "ntendon", "actuator": "nu",
        "sensor": "nsensor", "equality": "neq", "key": "nkey"}


@pytest.fixture
def models():
    return engine.load_model_from_string(XML), mujoco.MjModel.from_xml_string(XML)


def both_at_home(m, mm):
    d, md = engine.make_data(m), mujoco.MjData(mm)
    engine.reset_keyframe(m, d, "home")
    mujoco.mj_resetDataKeyframe(mm, md, mm.key("home").id)
    return d, md


# ------------------------------------------------------------------------------------------------
# counts
# ------------------------------------------------------------------------------------------------
def test_counts_are_python_ints(models):
    m, mm = models
    d, md = both_at_home(m, mm)
    engine.forward(m, d)
    mujoco.mj_forward(mm, md)
    assert type(d.ncon) is int and type(d.nefc) is int
    assert d.ncon == md.ncon == 5              # the box's 4 corners and the ball in its gap
    assert d.nefc == md.nefc == 12             # same cone: 3 rows per box corner
    # counts index and print as MuJoCo's do
    assert d.efc_force[:d.nefc].shape == md.efc_force[:md.nefc].shape
    assert [i for i in range(d.ncon)] == [i for i in range(md.ncon)]
    assert f"{d.ncon} {d.nefc}" == f"{md.ncon} {md.nefc}"
    assert d.contact_dist[:d.ncon].shape == (md.ncon,)
    # MuJoCo's solver_niter is an array (one entry per island): index it the same way
    assert isinstance(int(d.solver_niter[0]), int) and isinstance(int(md.solver_niter[0]), int)
    d.ncon = 2                                 # a count can be set, as the kernels see it
    assert d.ncon == 2 and len(d.contact) == 2


# ------------------------------------------------------------------------------------------------
# copies and pickling
# ------------------------------------------------------------------------------------------------
def test_copies_are_independent(models):
    m, mm = models
    d, md = both_at_home(m, mm)
    # d.copy() (MuJoCo's MjData has only copy.copy), copy.copy, copy.deepcopy
    for ours, theirs in ((lambda x: x.copy(), copy.copy), (copy.copy, copy.copy),
                         (copy.deepcopy, copy.deepcopy)):
        same_model = ours is not copy.deepcopy
        assert (ours(d).model is m) == (theirs(md).model is mm) == same_model
        d2 = ours(d)
        engine.step(m, d2, 20)
        md2 = theirs(md)
        mujoco.mj_step(mm, md2, 20)
        # the copy moved, the original did not, in both
        assert d2.time == md2.time != d.time == md.time
        assert not np.array_equal(d2.qpos, d.qpos)
        np.testing.assert_array_equal(d.qpos, md.qpos)
    # a copy continues exactly as the original
    d.ctrl[:] = [0.5, -0.1, 0.2]
    engine.step(m, d, 30)
    d2 = d.copy()
    engine.step(m, d, 40)
    engine.step(m, d2, 40)
    np.testing.assert_array_equal(d2.qpos, d.qpos)
    np.testing.assert_array_equal(d2.efc_force[:d2.nefc], d.efc_force[:d.nefc])


def test_model_copies_are_independent(models):
    m, mm = models
    for ours, theirs in ((lambda x: x.copy(), copy.copy), (copy.copy, copy.copy),
                         (copy.deepcopy, copy.deepcopy)):
        m2, mm2 = ours(m), theirs(mm)
        for mx in (m2, mm2):
            mx.opt.timestep = 0.01
            mx.body_mass[1] = 7.0
            mx.geom("floor").friction[0] = 0.3
        assert m.opt.timestep == mm.opt.timestep == 0.002
        assert m.body_mass[1] == mm.body_mass[1] != 7.0
        assert m.geom_friction[0, 0] == mm.geom_friction[0, 0] == 1.0
        assert m2.names == m.names and m2.names is not m.names
        d2 = engine.make_data(m2)
        engine.step(m2, d2)
        assert d2.time == 0.01


def test_pickle_round_trip(models):
    m, mm = models
    d, md = both_at_home(m, mm)
    engine.step(m, d, 10)
    m2, d2 = pickle.loads(pickle.dumps((m, d)))
    assert d2.model is m2                       # one model in the pickle, shared
    for name, a in m._arrays.items():
        np.testing.assert_array_equal(getattr(m2, name), a, err_msg=name)
    for name, a in d._arrays.items():
        np.testing.assert_array_equal(d2._arrays[name], a, err_msg=name)
    assert m2.names == m.names and m2.opt.cone == m.opt.cone
    engine.step(m, d, 25)
    engine.step(m2, d2, 25)
    np.testing.assert_array_equal(d2.qpos, d.qpos)
    # MuJoCo's pickle does the same
    md2 = pickle.loads(pickle.dumps(md))
    np.testing.assert_array_equal(md2.qpos, md.qpos)


def _rollout(m, d, nstep):
    """Run in a worker process: continue the simulation and send everything back."""
    engine.step(m, d, nstep)
    return d


def test_pickle_into_a_worker_process(models):
    """Model and Data sent to a process started afresh (spawn), stepped there and sent back:
    the same state as stepping here, to the last bit."""
    m, mm = models
    d, _ = both_at_home(m, mm)
    engine.step(m, d, 10)
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        back = pool.submit(_rollout, m, d, 200).result(timeout=600)
    engine.step(m, d, 200)
    assert back.time == d.time
    for name in ("qpos", "qvel", "act", "qacc", "xpos", "efc_force"):
        np.testing.assert_array_equal(getattr(back, name), getattr(d, name), err_msg=name)


# ------------------------------------------------------------------------------------------------
# named access
# ------------------------------------------------------------------------------------------------
# Model view fields whose values differ from MuJoCo's for a known reason
MODEL_VIEW_EXCEPTIONS = {
    # MuJoCo's tendon view declares lengthspring with one entry (of the (ntendon, 2) array)
    ("tendon", "lengthspring"),
    # MuJoCo 4 stores 12 entries per equality, this engine 11 (compared below on those)
    ("equality", "data"),
    # MuJoCo 4 averages the translational inverse weight over the directions a body can move
    # in; this engine over all three (a body on one slide joint: 1/m against 1/(3 m))
    ("body", "invweight0"),
}


def _as_array(x):
    return np.atleast_1d(np.asarray(x, dtype=float))


def test_model_views_match_mujoco(models):
    """m.<kind>(name) for every kind and object: every attribute MuJoCo's view also has holds
    the same numbers (ids, sizes, ranges, ...), by name and by id."""
    m, mm = models
    compared = set()
    for kind, objtype in MODEL_KINDS.items():
        n = getattr(mm, SIZE[kind])
        assert n == getattr(m, SIZE[kind], n) > 0, kind
        for i in range(n):
            name = mujoco.mj_id2name(mm, objtype, i)
            ours, theirs = getattr(m, kind)(i), getattr(mm, kind)(i)
            assert ours.id == theirs.id == i and ours.name == theirs.name == (name or "")
            if name:
                assert getattr(m, kind)(name).id == i
            for attr in dir(ours):
                if attr in ("id", "name"):
                    continue
                their_attr = "_" + attr if kind == "tendon" else attr   # MuJoCo's spelling
                if not hasattr(theirs, their_attr):
                    continue
                a, b = _as_array(getattr(ours, attr)), _as_array(getattr(theirs, their_attr))
                if (kind, attr) == ("equality", "data"):
                    b = b[:a.size]
                if (kind, attr) in MODEL_VIEW_EXCEPTIONS - {("equality", "data")}:
                    continue
                np.testing.assert_allclose(a.ravel(), b.ravel(), rtol=1e-6, atol=1e-7,
                                           err_msg=f"m.{kind}({i}).{attr}")
                compared.add((kind, attr))
    # the comparison covered each kind's main fields
    for kind, attr in (("body", "mass"), ("joint", "qposadr"), ("joint", "qpos0"),
                       ("joint", "damping"), ("geom", "size"), ("site", "pos"),
                       ("camera", "pos"), ("light", "dir"), ("mesh", "vertnum"),
                       ("tendon", "range"), ("actuator", "gear"), ("equality", "obj1id"),
                       ("key", "qpos"), ("key", "ctrl")):
        assert (kind, attr) in compared, (kind, attr)


def test_data_views_match_mujoco(models):
    """d.<kind>(name) after forward at the same state: every attribute both have agrees."""
    m, mm = models
    d, md = both_at_home(m, mm)
    engine.forward(m, d)
    mujoco.mj_forward(mm, md)
    # quantities that do not depend on the contact solver (PGS here, Newton in MuJoCo); not
    # qacc_smooth either, into which this engine folds the semi-implicit step's damping
    smooth = {"body": "xpos xquat xmat xipos ximat subtree_com cinert xfrc_applied",
              "joint": "qpos qvel xanchor xaxis cdof qfrc_bias qfrc_passive qfrc_actuator "
                       "qfrc_smooth qfrc_applied",
              "geom": "xpos xmat", "site": "xpos xmat", "camera": "xpos xmat",
              "light": "xpos xdir", "tendon": "length velocity wrapadr wrapnum",
              "actuator": "ctrl length velocity force moment"}
    for kind in DATA_KINDS:
        for i in range(getattr(mm, SIZE[kind])):
            ours, theirs = getattr(d, kind)(i), getattr(md, kind)(i)
            assert ours.name == theirs.name
            for attr in smooth[kind].split():
                # MuJoCo keeps mesh vertices in float32: the mesh geom's frame (at the mesh's
                # centre and principal axes) agrees to ~1e-8
                mesh = kind == "geom" and m.geom_type[i] == engine.GeomType.MESH
                np.testing.assert_allclose(_as_array(getattr(ours, attr)),
                                           _as_array(getattr(theirs, attr)), rtol=1e-9,
                                           atol=1e-6 if mesh else 1e-10,
                                           err_msg=f"d.{kind}({i}).{attr}")
    # the widths of a joint's slices: free 7/6, slide 1, hinge 1, ball 4/3
    assert [d.joint(j).qpos.size for j in range(m.njnt)] == \
           [md.joint(j).qpos.size for j in range(mm.njnt)] == [7, 1, 1, 4]
    assert [d.joint(j).qvel.size for j in range(m.njnt)] == \
           [md.joint(j).qvel.size for j in range(mm.njnt)] == [6, 1, 1, 3]
    assert d.joint("wrist").cdof.shape == md.joint("wrist").cdof.shape == (3, 6)
    # the activation of an actuator (this engine's addition): its slice of d.act
    assert d.actuator("filter").act.tolist() == [0.2]
    assert d.actuator("shoulder_motor").act.size == 0


def test_views_write_through(models):
    """Assigning through a view writes the Model or Data, as in MuJoCo."""
    m, mm = models
    d, md = both_at_home(m, mm)
    for mx, dx in ((m, d), (mm, md)):
        dx.joint("shoulder").qpos = 0.7
        dx.joint("free").qvel[3:] = [0.1, 0.2, 0.3]
        dx.actuator("shoulder_motor").ctrl = -0.4
        dx.body("box").xfrc_applied[2] = 5.0
        mx.body("box").mass = 3.0
        mx.geom("floor").friction[0] = 0.6
        mx.joint("shoulder").damping[0] = 0.25        # a dof field, through its joint
        mx.actuator("lift_servo").gainprm[0] = 80.0
        mx.key("home").qvel[0] = 1.5
    m.tendon("cable").range[1] = 1.5
    mm.tendon("cable")._range[1] = 1.5                # MuJoCo's spelling, accepted too
    assert m.tendon("cable")._range[1] == 1.5
    np.testing.assert_array_equal(d.qpos, md.qpos)
    np.testing.assert_array_equal(d.qvel, md.qvel)
    np.testing.assert_array_equal(d.ctrl, md.ctrl)
    np.testing.assert_array_equal(d.xfrc_applied, md.xfrc_applied)
    for name in ("body_mass", "dof_damping", "key_qvel", "tendon_range"):
        np.testing.assert_array_equal(getattr(m, name), getattr(mm, name), err_msg=name)
    assert m.geom_friction[0, 0] == mm.geom_friction[0, 0] == 0.6
    assert m.actuator_gainprm[1, 0] == mm.actuator_gainprm[1, 0] == 80.0
    # views are views: no copy in between
    assert np.shares_memory(d.body("box").xpos, d.xpos)
    assert np.shares_memory(m.joint("wrist").qpos0, m.qpos0)
    # forward sees the edits as MuJoCo does (the forces: MuJoCo 4 keeps the inertia of a
    # "simple" body, the box, from compile time in qM until mj_setConst)
    engine.forward(m, d)
    mujoco.mj_forward(mm, md)
    for name in ("qfrc_actuator", "qfrc_passive", "qfrc_bias"):
        np.testing.assert_allclose(getattr(d, name), getattr(md, name), rtol=1e-10,
                                   atol=1e-12, err_msg=name)


def test_missing_names_raise(models):
    """A missing name is a KeyError naming the closest valid names (never index -1);
    name2id keeps MuJoCo's -1; an id out of range is an IndexError."""
    m, mm = models
    d = engine.make_data(m)
    md = mujoco.MjData(mm)
    for owner, their in ((m, mm), (d, md)):
        with pytest.raises(KeyError, match=r"Invalid name 'bx'.*did you mean 'box'"):
            owner.body("bx")
        with pytest.raises(KeyError):
            their.body("bx")
        for key in (-1, m.nbody):
            with pytest.raises(IndexError):
                owner.body(key)
            with pytest.raises(IndexError):
                their.body(key)
    assert engine.name2id(m, ObjType.BODY, "bx") == mujoco.mj_name2id(mm, ObjType.BODY, "bx") == -1
    with pytest.raises(KeyError, match="wrist"):
        d.joint("wirst")


def test_sensor_views(models):
    """d.sensor(name).data: the sensor's slice of d.sensordata (sensor_adr, sensor_dim), as
    MuJoCo's. Where this build has no sensor arrays yet, the name still resolves, .data says
    what is missing, and the view lights up as soon as the arrays exist (shown here with
    MuJoCo's sensor_adr, sensor_dim and sensordata put into a copy of the Model and Data)."""
    m, mm = models
    d, md = both_at_home(m, mm)
    engine.forward(m, d)
    mujoco.mj_forward(mm, md)
    assert [d.sensor(n).id for n in ("angle", "tip_pos")] == \
           [md.sensor(n).id for n in ("angle", "tip_pos")] == [0, 1]
    if "sensordata" not in d._arrays:
        with pytest.raises(AttributeError, match="data.*not computed by this engine"):
            d.sensor("tip_pos").data
        m = m.copy()
        for name in ("sensor_adr", "sensor_dim"):
            m._arrays[name] = getattr(mm, name).astype(np.int64)
        d = d.copy()
        d._arrays["sensordata"] = md.sensordata.copy()
        object.__setattr__(d, "model", m)
    for name in ("angle", "tip_pos"):
        np.testing.assert_allclose(d.sensor(name).data, md.sensor(name).data, rtol=1e-9,
                                   atol=1e-12, err_msg=name)
    assert np.shares_memory(d.sensor("tip_pos").data, d._arrays["sensordata"])


# ------------------------------------------------------------------------------------------------
# object types, names, keyframes, nstep
# ------------------------------------------------------------------------------------------------
def test_objtype_matches_mjtobj():
    for t in ObjType:
        assert int(t) == int(getattr(mujoco.mjtObj, "mjOBJ_" + t.name)), t


def test_name2id_and_id2name_match_mujoco(models):
    m, mm = models
    sizes = {ObjType.XBODY: "nbody", ObjType.DOF: "nv", ObjType.PAIR: "npair",
             ObjType.HFIELD: "nhfield", ObjType.MATERIAL: "nmat"}
    sizes.update({t: SIZE[kind] for kind, t in MODEL_KINDS.items()})
    for t, size in sizes.items():
        for i in range(-1, getattr(mm, size) + 1):                  # out of range on both sides: None
            name = engine.id2name(m, t, i)
            assert name == mujoco.mj_id2name(mm, t, i), (t, i)
            if name is not None:
                assert engine.name2id(m, t, name) == mujoco.mj_name2id(mm, t, name) == i
        assert engine.name2id(m, t, "absent") == mujoco.mj_name2id(mm, t, "absent") == -1
    # the string form of the earlier API, and MuJoCo's short names
    assert engine.name2id(m, "body", "arm") == engine.name2id(m, ObjType.BODY, "arm") == 3
    assert engine.name2id(m, "jnt", "wrist") == mujoco.mj_name2id(mm, ObjType.JOINT, "wrist")
    assert engine.id2name(m, "actuator", 2) == "filter"
    with pytest.raises(ValueError):
        engine.name2id(m, "planet", "earth")


def test_reset_keyframe_by_name(models):
    m, mm = models
    d, md = both_at_home(m, mm)
    for name in ("time", "qpos", "qvel", "act", "ctrl"):
        np.testing.assert_array_equal(getattr(d, name), getattr(md, name), err_msg=name)
    assert d.time == 0.5
    d2 = engine.make_data(m)
    engine.reset_keyframe(m, d2, 0)                 # by id, as before
    np.testing.assert_array_equal(d2.qpos, d.qpos)
    with pytest.raises(KeyError, match="Invalid name 'hme'.*did you mean 'home'"):
        engine.reset_keyframe(m, d2, "hme")
    with pytest.raises(IndexError):
        engine.reset_keyframe(m, d2, 1)


def test_step_nstep(models):
    m, mm = models
    d, md = both_at_home(m, mm)
    engine.step(m, d, nstep=10)
    mujoco.mj_step(mm, md, nstep=10)
    assert d.time == pytest.approx(md.time, abs=1e-15) and d.time == pytest.approx(0.52)
    d2, _ = both_at_home(m, mm)
    for _ in range(10):
        engine.step(m, d2)
    np.testing.assert_array_equal(d2.qpos, d.qpos)


# ------------------------------------------------------------------------------------------------
# contacts
# ------------------------------------------------------------------------------------------------
def _contact_key(c):
    return (tuple(int(g) for g in c.geom), round(float(c.pos[0]), 6), round(float(c.pos[1]), 6))


def test_contacts_iterate_index_and_slice(models):
    m, mm = models
    d, md = both_at_home(m, mm)
    engine.forward(m, d)
    mujoco.mj_forward(mm, md)
    ours = sorted(d.contact, key=_contact_key)
    theirs = sorted(md.contact, key=_contact_key)
    assert len(ours) == len(theirs) == len(d.contact) == d.ncon == 5
    for c, mc in zip(ours, theirs):
        np.testing.assert_array_equal(c.geom, mc.geom)
        assert (c.geom1, c.geom2) == (mc.geom1, mc.geom2) == tuple(c.geom)
        assert c.exclude == mc.exclude
        assert c.dim == mc.dim
        assert c.includemargin == pytest.approx(mc.includemargin, abs=1e-12)
        assert c.dist == pytest.approx(mc.dist, abs=1e-9)
        np.testing.assert_allclose(c.pos, mc.pos, atol=1e-9)
        np.testing.assert_allclose(c.frame[:3], mc.frame[:3], atol=1e-9)    # the normal
        np.testing.assert_allclose(c.friction, mc.friction, atol=1e-12)
        assert (c.efc_address < 0) == (mc.efc_address < 0)
        assert isinstance(c.dist, float) and isinstance(c.dim, int)
    # the ball floats in its gap: listed, excluded, no rows (MuJoCo's exclude = 1)
    ball = [c for c in ours if m.geom("ball").id in c.geom]
    assert len(ball) == 1 and ball[0].exclude == 1 and ball[0].efc_address == -1
    # indexing and slicing as a list; the field arrays over the contacts, as MuJoCo's
    assert d.contact[0].dist == d.contact.dist[0]
    assert d.contact[-1].dist == d.contact.dist[d.ncon - 1]
    assert len(d.contact[:d.ncon]) == len(md.contact[:md.ncon]) == d.ncon
    np.testing.assert_array_equal(d.contact[1:3].dist, d.contact.dist[1:3])
    np.testing.assert_array_equal(d.contact[::-2].geom, d.contact.geom[::-2])
    assert [c.efc_address for c in d.contact[1:4]] == list(d.contact.efc_address[1:4])
    assert d.contact.geom.shape == md.contact.geom.shape == (5, 2)
    np.testing.assert_array_equal(np.sort(d.contact.exclude), np.sort(md.contact.exclude))
    with pytest.raises(IndexError):
        d.contact[d.ncon]
    # views, not copies: a write goes to the Data
    assert np.shares_memory(d.contact.dist, d.contact_dist)
    assert np.shares_memory(d.contact.geom, d.contact_geom)
    assert np.shares_memory(d.contact[2].frame, d.contact_frame)
    d.contact[2].dist = -0.5
    d.contact[3].pos[:] = 7.0
    assert d.contact_dist[2] == -0.5 and np.all(d.contact_pos[3] == 7.0)
    d.contact.friction[:, 0] = 0.25
    assert np.all(d.contact_friction[:d.ncon, 0] == 0.25)


# ------------------------------------------------------------------------------------------------
# attributes that do not exist
# ------------------------------------------------------------------------------------------------
def test_unknown_attributes_raise(models):
    m, mm = models
    d, md = engine.make_data(m), mujoco.MjData(mm)
    cases = [(d, md, "qpso", "qpos"), (m, mm, "body_mas", "body_mass"),
             (m.opt, mm.opt, "timestpe", "timestep")]
    for ours, theirs, typo, meant in cases:
        for obj in (ours, theirs):
            with pytest.raises(AttributeError):
                setattr(obj, typo, 0.1)
            with pytest.raises(AttributeError):
                getattr(obj, typo)
        with pytest.raises(AttributeError, match=f"'{typo}'.*did you mean '{meant}'"):
            setattr(ours, typo, 0.1)
        with pytest.raises(AttributeError, match=f"'{typo}'.*did you mean '{meant}'"):
            getattr(ours, typo)
        assert not hasattr(ours, typo)              # nothing was stored
    with pytest.raises(AttributeError, match="did you mean 'xpos'"):
        d.body("box").xpso
    with pytest.raises(AttributeError, match="did you mean 'mass'"):
        m.body("box").mas = 1.0
    with pytest.raises(AttributeError, match="did you mean 'dist'"):
        d.contact.dsit
    with pytest.raises(AttributeError, match="read-only"):
        m.nq = 3
    # MuJoCo's names that this engine does not have are said to be so
    with pytest.raises(AttributeError, match="MuJoCo's, not supported"):
        m.opt.sdf_initpoints
    # writing a field copies into the buffer the kernels hold
    qpos = d.qpos
    d.qpos = np.arange(m.nq)
    assert d.qpos is qpos and d.qpos[3] == 3.0


# ------------------------------------------------------------------------------------------------
# energy
# ------------------------------------------------------------------------------------------------
def test_energy_after_forward_and_step(models):
    """d.energy after forward and after step, against MuJoCo with its energy flag (this engine
    fills it always): gravity, joint springs (slide, hinge) and kinetic energy."""
    m, mm = models
    mm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    d, md = both_at_home(m, mm)
    rng = np.random.default_rng(3)
    d.qvel[:] = md.qvel[:] = rng.normal(0.0, 0.5, m.nv)
    d.energy[:] = np.nan
    engine.forward(m, d)
    mujoco.mj_forward(mm, md)
    assert np.all(np.abs(md.energy) > 0.1)
    np.testing.assert_allclose(d.energy, md.energy, rtol=1e-10)
    d.energy[:] = np.nan
    engine.step(m, d)
    mujoco.mj_step(mm, md)              # the energy of the state the step started from
    np.testing.assert_allclose(d.energy, md.energy, rtol=1e-10)


# ------------------------------------------------------------------------------------------------
# outputs people read
# ------------------------------------------------------------------------------------------------
ARM = os.path.join(ROOT, "tests", "data", "trajectory_arm.xml")


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """A short recording of the test arm, its inverse analysis and its output files."""
    from engine.analysis import analyse, write_outputs
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_trajectory import drive
    m = engine.load_model(ARM)
    m.opt.solver = engine.Solver.NEWTON
    m.opt.tolerance = 1e-12
    folder = tmp_path_factory.mktemp("analysis")
    d = engine.make_data(m)
    rng = np.random.default_rng(11)
    with engine.Recorder(m, folder / "arm.traj", d=d) as rec:
        for _ in range(150):
            drive(m, d, rng)
            engine.step(m, d)
            rec.record(d)
    traj = engine.load_trajectory(folder / "arm.traj")
    a = analyse(traj, m)
    paths = write_outputs(a, folder / "out")
    traj.to_csv(folder / "csv")
    return a, traj, folder, paths


def test_csv_files_hold_plain_numbers(analysed):
    a, traj, folder, paths = analysed
    text_columns = {"signal", "family", "unit"}          # impulses.csv's labels
    for path in [p for p in paths if p.endswith(".csv")] + [
            str(folder / "csv" / f) for f in os.listdir(folder / "csv")]:
        with open(path, newline="") as f:
            header, *rows = list(csv.reader(f))
        assert rows, path
        numeric = [i for i, h in enumerate(header) if h not in text_columns]
        for row in rows:
            assert len(row) == len(header)
            for i in numeric:
                float(row[i])           # a plain number (ValueError otherwise)
    # every numeric column reads back exactly what the analysis holds
    with open(folder / "out" / "impulses.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == sum(len(s.steps) for s in a.efc_signals.values())
    for row in rows:
        s = a.efc_signals[row["signal"]]
        k = s.steps.index(int(row["step"]))
        assert float(row["forward"]) == s.forward[k] and float(row["inverse"]) == s.inverse[k]
        assert float(row["time"]) == traj.time[int(row["step"])]
        assert row["unit"] == s.unit in ("N", "N m")
    table = np.loadtxt(folder / "out" / "controls.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(table[:, 1], traj.time)
    np.testing.assert_array_equal(np.loadtxt(folder / "csv" / "qpos.csv", delimiter=",",
                                             skiprows=1)[:, 2:], traj.qpos)


def _drawn(fig):
    fig.canvas.draw()
    return fig


def test_analysis_figures(analysed):
    """Labelled axes with units, ticks and a grid; inverse dashed on top of forward in the same
    colour; legends outside the data; zero signals drawn as zero; PNG and SVG."""
    from engine import figures
    a, traj, folder, paths = analysed
    for stem in ("controls", "impulses"):
        assert str(folder / "out" / f"{stem}.png") in paths
        assert (folder / "out" / f"{stem}.svg").read_text().lstrip().startswith("<?xml")
    for fig in (figures.controls_figure(a), figures.impulses_figure(a)):
        _drawn(fig)
        axes = fig.get_axes()
        assert axes and fig.legends                  # the line styles, below the panels
        legend_box = fig.legends[0].get_window_extent()
        for ax in axes:
            assert ax.get_xlabel() == "time (s)"
            assert re.search(r"\((N|N m|actuator input|actuation space)\)|activation",
                             ax.get_ylabel()), ax.get_ylabel()
            assert ax.get_title(loc="left")
            assert len(ax.get_yticks()) >= 3 and len(ax.get_xticks()) >= 3
            assert all(g.get_visible() for g in ax.get_xgridlines() + ax.get_ygridlines())
            box = ax.get_window_extent()
            assert legend_box.y1 <= box.y0 + 1      # the figure legend is below every panel
            if ax.get_legend() is not None:         # several rows: their legend at the right
                assert ax.get_legend().get_window_extent().x0 >= box.x1
            lines = ax.get_lines()
            forward, inverse = lines[0::2], lines[1::2]
            assert len(forward) == len(inverse) >= 1
            for f, i in zip(forward, inverse):
                assert f.get_linestyle() == "-" and i.get_linestyle() == "--"
                assert i.get_zorder() > f.get_zorder() and i.get_color() == f.get_color()
                assert f.get_linewidth() > i.get_linewidth()
    # a control that is zero (the inverse recovering it with rounding noise) is drawn as zero
    zero = copy.copy(a)
    zero.ctrl_recorded, zero.ctrl_recovered = a.ctrl_recorded.copy(), a.ctrl_recovered.copy()
    zero.ctrl_recorded[:, 0] = 0.0
    zero.ctrl_recovered[:, 0] = 1e-15 * np.sin(np.arange(len(a.time)))
    ax, other = _drawn(figures.controls_figure(zero)).get_axes()[:2]
    assert ax.get_ylim() == (-1.0, 1.0)
    assert ax.get_yaxis().get_offset_text().get_text() == ""
    assert other.get_ylim()[1] - other.get_ylim()[0] > 0.5    # the others keep their scale


def test_benchmark_figure(tmp_path, monkeypatch):
    """benchmarks/inverse.py: every line labelled, times and ratios from 0, files in the
    directory given (nothing in the current one)."""
    spec = importlib.util.spec_from_file_location("bench_inverse",
                                                  os.path.join(ROOT, "benchmarks", "inverse.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    names = ["ours PGS 5", "ours PGS 50", "ours inverse", "MuJoCo PGS 5", "MuJoCo PGS 50",
             "MuJoCo inverse"]
    medians = {b: {n: 10.0 + b + 5 * k for k, n in enumerate(names)} for b in (10, 20, 30)}
    medians[30]["MuJoCo inverse"] = np.nan            # a bin MuJoCo never reached
    fig = _drawn(bench.build_figure(medians))
    for ax in fig.get_axes():
        assert ax.get_ylim()[0] == 0.0 and ax.get_xlabel() and ax.get_ylabel()
        labels = [ln.get_label() for ln in ax.get_lines()]
        assert labels and not any(lb.startswith("_") for lb in labels)
        assert len(set(labels)) == len(labels)
        legend = ax.get_legend()
        assert [t.get_text() for t in legend.get_texts()] == labels
        assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
    assert "\u00b5s" in fig.get_axes()[0].get_ylabel()
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "figures"
    paths = bench.figure(medians, out)
    assert sorted(p.name for p in paths) == ["inverse_fig3.png", "inverse_fig3.svg"]
    assert sorted(os.listdir(out)) == ["inverse_fig3.png", "inverse_fig3.svg"]
    assert sorted(os.listdir(tmp_path)) == ["figures"]
    assert bench.OUT == __import__("pathlib").Path(ROOT, "benchmarks", "out")
    ignored = subprocess.run(["git", "check-ignore", "-q", str(bench.OUT / "x.png")], cwd=ROOT)
    assert ignored.returncode == 0


def test_readme_example_prints_what_it_says():
    """The README's short script, run as a user would: it prints, every 50 steps, the time, the
    position of the arm's hand (checked against MuJoCo driving the same scene) and the number
    of contacts."""
    readme = open(os.path.join(ROOT, "README.md")).read()
    intro, code = re.search(r"A short script: (.*?)\n\n```python\n(.*?)```", readme, re.S).groups()
    assert "hand" in intro and "contacts" in intro
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 10
    mm = mujoco.MjModel.from_xml_path(os.path.join(ROOT, "assets", "scene.xml"))
    md = mujoco.MjData(mm)
    md.ctrl[:] = 0.5
    for line in lines:
        match = re.fullmatch(r"t=(\S+)\s+hand=\((\S+), (\S+), (\S+)\)\s+ncon=(\d+)", line)
        assert match, line
        mujoco.mj_step(mm, md, 50)
        t, x, y, z, ncon = match.groups()
        assert float(t) == pytest.approx(md.time, abs=0.005)
        np.testing.assert_allclose([float(x), float(y), float(z)], md.geom("hand").xpos,
                                   atol=1.5e-3)
        assert int(ncon) == md.ncon

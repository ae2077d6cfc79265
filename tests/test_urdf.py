"""URDF reader, checked against MuJoCo loading the same URDF files."""
import os
import textwrap

import numpy as np
import pytest

import engine
from engine import ModelError
from engine.compiler.urdf import load_urdf, rpy2quat, urdf_to_mjcf

mujoco = pytest.importorskip("mujoco")

DATA = os.path.join(os.path.dirname(__file__), "data")
FILES = ["urdf_arm.urdf", "urdf_floating.urdf"]

FIELDS = ["body_parentid", "body_mass", "body_inertia", "body_ipos", "body_pos", "body_quat",
          "jnt_type", "jnt_bodyid", "jnt_axis", "jnt_range", "jnt_limited", "dof_damping",
          "dof_frictionloss", "geom_type", "geom_size", "geom_bodyid", "geom_pos",
          "geom_contype", "geom_conaffinity", "geom_rgba", "jnt_actfrclimited",
          "jnt_actfrcrange"]
SIZES = ["nq", "nv", "nbody", "njnt", "ngeom", "nmesh"]


def compare(ours, ref, rtol=1e-9, atol=1e-12):
    for s in SIZES:
        assert getattr(ours, s) == getattr(ref, s), s
    for f in FIELDS:
        a, b = np.asarray(getattr(ours, f), float), np.asarray(getattr(ref, f), float)
        if f == "geom_rgba":   # float32 in MuJoCo
            np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=f)
        else:
            np.testing.assert_allclose(a, b.reshape(a.shape), rtol=rtol, atol=atol, err_msg=f)
    # orientations up to sign
    for f in ("geom_quat",):
        a, b = np.asarray(getattr(ours, f)), np.asarray(getattr(ref, f))
        d = np.minimum(np.abs(a - b).max(axis=1), np.abs(a + b).max(axis=1))
        assert d.max() < 1e-9, f
    if ref.nmesh:
        np.testing.assert_allclose(np.asarray(ours.mesh_vert), ref.mesh_vert, rtol=0,
                                   atol=1e-6 * np.abs(ref.mesh_vert).max())


@pytest.mark.parametrize("name", FILES)
def test_generated_mjcf_matches_mujoco_urdf(name):
    # the translation alone, both sides compiled by MuJoCo
    path = os.path.join(DATA, name)
    xml, assets = urdf_to_mjcf(path)
    compare(mujoco.MjModel.from_xml_string(xml, assets), mujoco.MjModel.from_xml_path(path))


@pytest.mark.parametrize("name", FILES)
def test_load_urdf_matches_mujoco(name):
    path = os.path.join(DATA, name)
    compare(load_urdf(path), mujoco.MjModel.from_xml_path(path))
    m = engine.load_model(path)        # the public entry point dispatches on the extension
    assert m.nbody == mujoco.MjModel.from_xml_path(path).nbody


def test_mimic_is_a_joint_equality():
    """<mimic joint multiplier offset>: joint = offset + multiplier * mimicked, MuJoCo's joint
    equality with polycoef (offset, multiplier, 0, 0, 0); the constrained motion agrees."""
    path = os.path.join(DATA, "urdf_mimic.urdf")
    ref = mujoco.MjModel.from_xml_path(path)
    m = engine.load_model(path)
    compare(m, ref)
    assert m.neq == ref.neq == 1
    assert m.eq_type[0] == engine.EqType.JOINT == ref.eq_type[0]
    assert (m.eq_obj1id[0], m.eq_obj2id[0]) == (ref.eq_obj1id[0], ref.eq_obj2id[0])
    np.testing.assert_array_equal(m.eq_data[0, :5], ref.eq_data[0, :5])
    assert m.names["joint"][m.eq_obj1id[0]] == "j2" and m.names["joint"][m.eq_obj2id[0]] == "j1"
    # driven from rest, j2 tracks 0.1 - 0.5 j1 (to the constraint softness: gravity acts on j2)
    d = engine.make_data(m)
    d.qfrc_applied[0] = 0.02
    engine.step(m, d, 200)
    assert abs(d.qpos[0]) > 0.2 and abs(d.qpos[1] - (0.1 - 0.5 * d.qpos[0])) < 3e-3


def test_mimic_of_unknown_joint(tmp_path):
    e = error_of(tmp_path, f"""
        <robot name="r">
          <link name="a">{INERTIAL}</link><link name="b">{INERTIAL}</link>
          <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
            <mimic joint="nope"/>
          </joint>
        </robot>""")
    assert (e.line, e.element, e.attribute) == (6, "mimic", "joint") and "nope" in str(e)


def test_arm_structure():
    m = load_urdf(os.path.join(DATA, "urdf_arm.urdf"))
    # base is static (fused into the world), tool_mount is fixed to upper (fused)
    assert m.nbody == 3 and m.nq == 2
    assert list(m.jnt_type) == [engine.JointType.HINGE, engine.JointType.SLIDE]
    assert engine.name2id(m, "body", "upper") == 1
    assert engine.name2id(m, "body", "tool_mount") == -1
    np.testing.assert_allclose(m.body_mass, [0, 1.5, 0.5])
    np.testing.assert_allclose(m.jnt_range, [[-1.5, 2.0], [0, 0.2]])


def test_floating_base():
    path = os.path.join(DATA, "urdf_floating.urdf")
    m = load_urdf(path)
    assert m.jnt_type[0] == engine.JointType.FREE
    assert m.nq == 7 + 2 and m.nv == 6 + 2
    assert not m.jnt_limited[1]          # continuous: no range
    assert m.nmesh == 2


def write(tmp_path, text, name="robot.urdf"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip())
    return str(p)


INERTIAL = """<inertial><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>"""


def test_planar_spherical_and_unfused(tmp_path):
    path = write(tmp_path, f"""
        <robot name="r">
          <mujoco><compiler fusestatic="false"/></mujoco>
          <link name="a">{INERTIAL}</link>
          <link name="b">{INERTIAL}<collision><geometry><sphere radius="0.1"/></geometry></collision></link>
          <link name="c">{INERTIAL}<collision><geometry><capsule radius="0.05" length="0.3"/></geometry></collision></link>
          <link name="d">{INERTIAL}</link>
          <joint name="p" type="planar"><parent link="a"/><child link="b"/>
            <origin xyz="0 0 1" rpy="0.3 0.2 0.1"/><axis xyz="0 1 1"/>
            <dynamics damping="0.2" friction="0.1"/></joint>
          <joint name="s" type="spherical"><parent link="b"/><child link="c"/></joint>
          <joint name="f" type="fixed"><parent link="c"/><child link="d"/>
            <origin xyz="0.1 0 0"/></joint>
        </robot>""")
    ref = mujoco.MjModel.from_xml_path(path)
    compare(load_urdf(path), ref)
    assert ref.nbody == 5


def test_rpy_convention():
    # roll about x, then pitch about y, then yaw about z, all about fixed axes
    rpy = (0.3, -0.4, 1.1)
    R = np.asarray(engine.compiler.mesh.quat2mat(rpy2quat(rpy)))
    cx, sx, cy, sy, cz, sz = (np.cos(rpy[0]), np.sin(rpy[0]), np.cos(rpy[1]), np.sin(rpy[1]),
                              np.cos(rpy[2]), np.sin(rpy[2]))
    Rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    Ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    Rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    np.testing.assert_allclose(R, Rz @ Ry @ Rx, atol=1e-15)


# ---- bad input -------------------------------------------------------------------------------
def error_of(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(ModelError) as e:
        load_urdf(path)
    assert e.value.file == path
    assert "<string>" not in str(e.value)
    return e.value


def test_malformed_xml(tmp_path):
    e = error_of(tmp_path, """
        <robot name="r">
          <link name="a">
        </robot>""")
    assert e.line == 3 and "malformed" in str(e)


def test_unknown_link(tmp_path):
    e = error_of(tmp_path, f"""
        <robot name="r">
          <link name="a">{INERTIAL}</link>
          <joint name="j" type="revolute">
            <parent link="a"/>
            <child link="nope"/>
          </joint>
        </robot>""")
    assert (e.line, e.element, e.attribute) == (6, "child", "link")
    assert "nope" in str(e)


def test_two_roots(tmp_path):
    e = error_of(tmp_path, f"""
        <robot name="r">
          <link name="a">{INERTIAL}</link>
          <link name="b">{INERTIAL}</link>
        </robot>""")
    assert e.element == "link" and e.line == 4 and "root" in str(e)


def test_two_parents(tmp_path):
    e = error_of(tmp_path, f"""
        <robot name="r">
          <link name="a"/><link name="b"/><link name="c">{INERTIAL}</link>
          <joint name="j1" type="fixed"><parent link="a"/><child link="c"/></joint>
          <joint name="j2" type="fixed"><parent link="b"/><child link="c"/></joint>
        </robot>""")
    assert e.line == 5 and e.element == "child"   # (INERTIAL spans two lines)


def test_missing_mesh(tmp_path):
    e = error_of(tmp_path, f"""
        <robot name="r">
          <link name="a">{INERTIAL}
            <collision>
              <geometry><mesh filename="package://r/meshes/gone.stl"/></geometry>
            </collision>
          </link>
        </robot>""")
    assert (e.line, e.element, e.attribute) == (5, "mesh", "filename")
    assert "gone.stl" in str(e)


def test_bad_joint_type_and_number(tmp_path):
    e = error_of(tmp_path, f"""
        <robot name="r">
          <link name="a">{INERTIAL}</link><link name="b">{INERTIAL}</link>
          <joint name="j" type="screw"><parent link="a"/><child link="b"/></joint>
        </robot>""")
    assert (e.line, e.element, e.attribute) == (5, "joint", "type")
    e = error_of(tmp_path, f"""
        <robot name="r">
          <link name="a">{INERTIAL}</link><link name="b">{INERTIAL}</link>
          <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
            <origin xyz="0 zero 0"/>
          </joint>
        </robot>""")
    assert (e.line, e.element, e.attribute) == (6, "origin", "xyz")


def test_compile_error_points_at_urdf(tmp_path):
    # a moving link whose inertia violates the triangle inequality: found by the compiler
    e = error_of(tmp_path, """
        <robot name="r">
          <link name="a"/>
          <link name="b">
            <inertial><mass value="1"/>
              <inertia ixx="1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
          </link>
          <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
            <limit lower="-1" upper="1"/></joint>
        </robot>""")
    assert e.line == 4 and e.element == "inertial"


def test_fused_links_without_inertial(tmp_path):
    # links without <inertial> weigh what their geoms weigh (density 1000) when fused
    path = write(tmp_path, """
        <robot name="r">
          <link name="a"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
          <link name="b"><inertial><origin xyz="0 0 0.1"/><mass value="1"/>
              <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
            <collision><geometry><sphere radius="0.05"/></geometry></collision></link>
          <link name="c"><collision><origin xyz="0.2 0 0" rpy="0.1 0.2 0.3"/>
            <geometry><box size="0.1 0.05 0.1"/></geometry></collision></link>
          <link name="d"><collision><origin xyz="0.1 0 0"/>
            <geometry><cylinder radius="0.02" length="0.2"/></geometry></collision></link>
          <link name="e"><inertial><mass value="0.5"/>
              <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.0015"/></inertial></link>
          <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
            <axis xyz="0 0 1"/><limit lower="-1" upper="1"/></joint>
          <joint name="f" type="fixed"><parent link="b"/><child link="c"/><origin xyz="0 0.1 0"/></joint>
          <joint name="k" type="prismatic"><parent link="b"/><child link="d"/><origin xyz="0 0 0.3"/></joint>
          <joint name="g" type="fixed"><parent link="d"/><child link="e"/>
            <origin xyz="0 0.1 0" rpy="0 0 1"/></joint>
        </robot>""")
    ref = mujoco.MjModel.from_xml_path(path)
    compare(load_urdf(path), ref)
    assert ref.body_mass[1] == pytest.approx(1 + 1000 * 0.1 * 0.05 * 0.1)   # b with c fused

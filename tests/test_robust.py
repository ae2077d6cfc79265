"""Bad input at run time: a Data of another model, structural Model fields, wrong shapes and
types assigned to fields, invalid options (from Python and from MJCF), non-finite inputs
(counted as warnings and handled as MuJoCo handles them, checked against the mujoco package),
divergence that leaves nothing bad behind, capacities refused before allocation."""
import copy
import pickle

import mujoco
import numpy as np
import pytest

import engine
from engine.enums import Warning
from engine.types import STRUCTURAL, CapacityError

ARM = """
<mujoco>
  <option timestep="0.005" solver="{solver}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body name="mocap" mocap="true" pos="1 0 1"><geom type="box" size=".1 .1 .1" contype="0"
      conaffinity="0"/></body>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1"/>
      <body name="lower" pos="0.5 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.04" mass="1"/>
        <site name="tip" pos="0.5 0 0"/>
      </body>
    </body>
    <body name="ball" pos="0.3 0.5 0.2"><freejoint/>
      <geom type="sphere" size="0.1" mass="1"/></body>
  </worldbody>
  <equality><connect body1="ball" body2="world" anchor="0.3 0.5 0.25"/></equality>
  <actuator>
    <motor joint="shoulder" ctrlrange="-1 1" ctrllimited="true"/>
    <general joint="elbow" dyntype="filter" dynprm="0.05" gainprm="2"/>
  </actuator>
</mujoco>
"""


def arm(solver="Newton"):
    m = engine.load_model_from_string(ARM.format(solver=solver))
    return m, engine.make_data(m)


def same_data(a, b):
    """Every array of two Data equal (NaN equal to NaN)."""
    for k in a._arrays:
        np.testing.assert_array_equal(a._arrays[k], b._arrays[k], err_msg=k)


# ------------------------------------------------------------------------------------------------
# Data of another model, nstep
# ------------------------------------------------------------------------------------------------
def test_a_data_of_another_model_is_refused_by_every_entry():
    m, d = arm()
    other = engine.load_model_from_string("<mujoco><worldbody><body><freejoint/>"
                                          "<geom size='.1'/></body></worldbody></mujoco>")
    d2 = engine.make_data(other)
    calls = [lambda: engine.step(m, d2), lambda: engine.forward(m, d2),
             lambda: engine.inverse(m, d2), lambda: engine.energy(m, d2),
             lambda: engine.full_inertia(m, d2), lambda: engine.reset_data(m, d2),
             lambda: engine.jac(m, d2, np.zeros(3), 1), lambda: engine.contact_force(m, d2, 0),
             lambda: engine.get_state(m, d2, engine.State.PHYSICS),
             lambda: engine.set_state(m, d2, np.zeros(engine.state_size(m, engine.State.PHYSICS)),
                                      engine.State.PHYSICS)]
    for call in calls:
        with pytest.raises(ValueError, match="belongs to another model.*make_data"):
            call()
    with pytest.raises(TypeError, match="expected an engine.Data"):
        engine.step(m, m)
    with pytest.raises(TypeError, match="expected an engine.Model"):
        engine.step(d, d)
    for bad in (None, d, "model.xml"):
        with pytest.raises(TypeError, match="expected an engine.Model"):
            engine.make_data(bad)
    d2_before = copy.deepcopy(d2)
    with pytest.raises(ValueError):
        engine.step(m, d2, 10)
    same_data(d2, d2_before)                      # untouched


def test_a_data_of_a_copy_of_the_model_is_accepted():
    m, d = arm()
    m2 = copy.deepcopy(m)
    engine.step(m2, d, 3)                        # same structure: the same signature
    assert m2.signature == m.signature and d.time == pytest.approx(3 * m.opt.timestep)


@pytest.mark.parametrize("n", [0, -1, 2.5, "10", True, None, np.float64(3.0)])
def test_nstep_must_be_a_positive_integer(n):
    m, d = arm()
    with pytest.raises(ValueError, match="nstep must be a positive integer"):
        engine.step(m, d, n)
    assert d.time == 0.0


def test_nstep_accepts_numpy_integers():
    m, d = arm()
    engine.step(m, d, np.int64(4))
    assert d.time == pytest.approx(4 * m.opt.timestep)


# ------------------------------------------------------------------------------------------------
# structural Model fields
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("write", [
    lambda m: m.geom_condim.__setitem__(slice(None), 7),
    lambda m: setattr(m, "geom_condim", 7),
    lambda m: m.geom_bodyid.__setitem__(0, 1000000),
    lambda m: m.body_parentid.__setitem__(1, 1000000),
    lambda m: m.actuator_trnid.__setitem__((0, 0), 1000000),
    lambda m: m.dof_Madr.__setitem__(0, 1000000),
    lambda m: m.jnt_type.__setitem__(0, 99),
    lambda m: m.geom_condim[1:].__setitem__(0, 7),          # a view keeps the guard
    lambda m: setattr(m.geom(1), "condim", 6),
])
def test_structural_fields_are_read_only_with_a_message_saying_what_to_do(write):
    m, d = arm()
    before = {k: a.copy() for k, a in m._arrays.items()}
    with pytest.raises(ValueError, match="structural.*read-only.*body_mass.*compile it again"):
        write(m)
    for k, a in m._arrays.items():
        np.testing.assert_array_equal(a, before[k], err_msg=k)
    engine.step(m, d, 5)
    assert d.warning.sum() == 0


def test_every_index_address_count_and_type_field_is_guarded():
    m, _ = arm()
    assert {"geom_condim", "geom_bodyid", "body_parentid", "actuator_trnid", "dof_Madr",
            "hfield_nrow", "jnt_qposadr", "geom_type"} <= STRUCTURAL
    for name in sorted(STRUCTURAL):
        a = getattr(m, name)
        assert not a.flags.writeable, name
        if a.size:
            first = (0,) * a.ndim
            with pytest.raises(ValueError, match=name):
                a[first] = 0 if a[first] else 1
    with pytest.raises(ValueError, match="m.opt.timestep"):
        m.opt_timestep[0] = 0.1


def test_physical_parameters_and_flags_stay_editable_and_are_seen_by_the_step():
    m, d = arm()
    upper, lower = m.body("upper").id, m.body("lower").id
    m.geom_friction[:, 0] = 0.5
    m.body_mass[lower] = 2.0
    m.body("upper").mass = 3.0
    m.geom_contype[0] = 0
    m.actuator_ctrllimited[0] = 0
    assert m.body_mass[upper] == 3.0 and m.body_mass[lower] == 2.0 and m.geom_contype[0] == 0
    for bad in (np.nan, np.inf, [1.0, np.nan]):
        with pytest.raises(ValueError, match="must be finite"):
            m.body_mass = np.full(m.nbody, bad) if np.isscalar(bad) else bad * (m.nbody // 2)
    with pytest.raises(ValueError, match="must be finite"):
        m.body("upper").mass = np.nan
    assert m.body_mass[upper] == 3.0
    engine.step(m, d, 5)
    assert d.warning.sum() == 0


# ------------------------------------------------------------------------------------------------
# assignment to fields: shapes and types
# ------------------------------------------------------------------------------------------------
def test_fields_take_numbers_in_their_shape():
    m, d = arm()
    with pytest.raises(ValueError, match=r"Data.qpos has shape \(9,\), got a value of shape"):
        d.qpos = np.zeros(3)
    with pytest.raises(ValueError, match="Data.qvel takes numbers"):
        d.qvel = "abc"
    with pytest.raises(ValueError, match="Data.ctrl takes numbers"):
        d.ctrl = [None, None]
    with pytest.raises(ValueError, match="Model.geom_contype takes integers"):
        m.geom_contype = 1.5
    with pytest.raises(ValueError, match=r"d.ncon must be within 0 and d.nconmax"):
        d.ncon = -1
    with pytest.raises(ValueError, match=r"d.nefc must be within 0 and d.njmax"):
        d.nefc = d.njmax + 1
    with pytest.raises(ValueError, match="d.time must be finite"):
        d.time = np.nan
    d.qvel = 0.0                              # a scalar fills the field
    d.qpos = m.qpos0.tolist()
    d.ctrl = np.array([1, 0])                 # integers into a float field
    np.testing.assert_array_equal(d.qpos, m.qpos0)
    assert d.time == 0.0 and d.ncon == 0


def test_capacities_are_refused_before_allocation_with_the_numbers():
    m, d = arm()
    with pytest.raises(CapacityError, match=r"needs [0-9.e+]+ GiB .* more than the .* available"):
        engine.Data(m, njmax=10 ** 12)
    with pytest.raises(CapacityError, match="growing the Data"):
        d.grow(10 ** 11, 10 ** 12)
    assert d.njmax < 10 ** 6                 # nothing lost
    engine.step(m, d, 2)
    for bad in (0, -5, 2.5, "8"):
        with pytest.raises(ValueError, match="nconmax must be"):
            engine.Data(m, nconmax=bad)


# ------------------------------------------------------------------------------------------------
# options
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, value, message", [
    ("cone", 99, "cone must be one of engine.Cone"),
    ("solver", -1, "solver must be one of engine.Solver"),
    ("integrator", 42, "integrator must be one of engine.Integrator"),
    ("stabilization", 7, "stabilization must be one of engine.Stabilization"),
    ("iterations", 2.5, "iterations must be an integer"),
    ("iterations", -1, "iterations must be non-negative"),
    ("timestep", 0, "timestep must be positive"),
    ("timestep", -1, "timestep must be positive"),
    ("timestep", np.nan, "timestep must be finite"),
    ("impratio", 0, "impratio must be positive"),
    ("tolerance", "1e-8", "tolerance must be a number"),
    ("gravity", [0, 0], "gravity takes 3 numbers"),
    ("gravity", [0, 0, np.inf], "gravity must be finite"),
    ("disableflags", 1 << 30, "disableflags must combine engine.DisableBit"),
    ("enableflags", 1, "enableflags must be 0"),
])
def test_invalid_options_are_refused_and_change_nothing(name, value, message):
    m, d = arm()
    before = {k: a.copy() for k, a in m._arrays.items() if k.startswith("opt_")}
    with pytest.raises(ValueError, match=message):
        setattr(m.opt, name, value)
    for k, a in before.items():
        np.testing.assert_array_equal(getattr(m, k), a)


def test_option_vectors_are_checked_element_by_element():
    m, d = arm()
    with pytest.raises(ValueError, match="gravity must be finite"):
        m.opt.gravity[2] = np.nan
    with pytest.raises(ValueError, match="wind must be finite"):
        m.opt.wind[:] = [0, np.inf, 0]
    m.opt.gravity[2] = -5.0                   # a good value is written into the kernel's array
    assert m.opt_gravity[2] == -5.0
    m.opt.integrator = engine.Integrator.RK4
    m.opt.iterations = np.int32(7)
    assert m.opt.integrator is engine.Integrator.RK4 and m.opt.iterations == 7


@pytest.mark.parametrize("attr, value, message", [
    ("impratio", "0", "impratio must be positive"),
    ("timestep", "0", "timestep must be positive"),
    ("timestep", "-1", "timestep must be positive"),
    ("iterations", "-3", "iterations must be non-negative"),
    ("gravity", "0 0 nan", "'nan' is not a finite number"),
    ("tolerance", "inf", "'inf' is not a finite number"),
])
def test_invalid_options_in_mjcf_are_located_model_errors(attr, value, message):
    xml = f'<mujoco>\n<option {attr}="{value}"/>\n<worldbody/></mujoco>'
    with pytest.raises(engine.ModelError, match=message) as e:
        engine.load_model_from_string(xml)
    assert e.value.line == 2 and e.value.element == "option" and e.value.attribute == attr


# ------------------------------------------------------------------------------------------------
# non-finite inputs, against MuJoCo
# ------------------------------------------------------------------------------------------------
def mujoco_pair():
    xml = ARM.format(solver="Newton")
    return engine.load_model_from_string(xml), mujoco.MjModel.from_xml_string(xml)


@pytest.mark.parametrize("ctrl, bad", [([np.nan, 0.3], True), ([0.2, np.inf], True),
                                       ([np.inf, 0.3], False), ([-np.inf, 1e11], True)])
def test_bad_controls_count_badctrl_and_zero_every_control_as_mujoco(ctrl, bad):
    """The count and the actuator at fault as MuJoCo's mjWARN_BADCTRL; the motion that of zero
    controls (a run with zeros, bit for bit) when a control is bad after clamping (the first
    actuator clamps to its ctrlrange, so its inf is good), else that of the clamped controls."""
    m, mm = mujoco_pair()
    d, md, ref = engine.make_data(m), mujoco.MjData(mm), engine.make_data(m)
    used = [0.0, 0.0] if bad else np.clip(ctrl, -1, 1)
    for _ in range(3):
        d.ctrl[:] = ctrl
        md.ctrl[:] = ctrl
        ref.ctrl[:] = used
        engine.step(m, d)
        engine.step(m, ref)
        mujoco.mj_step(mm, md)
    mj = md.warning[mujoco.mjtWarning.mjWARN_BADCTRL]
    assert d.warning[Warning.BADCTRL] == mj.number == (3 if bad else 0)
    if bad:
        assert d.warning_info[Warning.BADCTRL] == mj.lastinfo
    np.testing.assert_array_equal(d.ctrl, ctrl)                   # the user's ctrl untouched
    np.testing.assert_array_equal(d.qpos, ref.qpos)
    np.testing.assert_array_equal(d.act, ref.act)
    np.testing.assert_allclose(d.act, md.act, atol=1e-12)
    assert d.warning[Warning.BADQACC] == 0


def test_a_bad_mocap_pose_counts_badmocap_and_uses_the_model_pose():
    m, d = arm()
    k = m.body("mocap").id
    d.mocap_pos[0] = [np.nan, 0, 0]
    engine.forward(m, d)
    assert d.warning[Warning.BADMOCAP] == 1 and d.warning_info[Warning.BADMOCAP] == 0
    np.testing.assert_array_equal(d.xpos[k], m.body_pos[k])
    d.mocap_pos[0] = [0, 0, 2]
    d.mocap_quat[0] = [np.inf, 0, 0, 0]
    engine.step(m, d, 2)
    assert d.warning[Warning.BADMOCAP] == 3
    assert np.all(np.isfinite(d.xpos)) and np.all(np.isfinite(d.xquat))
    d.mocap_quat[0] = [1, 0, 0, 0]
    engine.step(m, d)
    np.testing.assert_array_equal(d.xpos[k], [0, 0, 2])
    assert d.warning[Warning.BADMOCAP] == 3 and d.warning[Warning.BADQACC] == 0


def test_a_non_finite_time_counts_badtime_and_resets():
    m, d = arm()
    engine.step(m, d, 3)
    d._arrays["time"][0] = np.inf            # past the d.time setter, which refuses it
    engine.step(m, d)
    assert d.warning[Warning.BADTIME] == 1
    assert d.time == pytest.approx(m.opt.timestep)


# ------------------------------------------------------------------------------------------------
# divergence: recovery leaves nothing bad behind
# ------------------------------------------------------------------------------------------------
def poison_qfrc(m, d):
    d.qfrc_applied[2] = np.nan


def poison_xfrc(m, d):
    d.xfrc_applied[m.body("ball").id, 1] = np.nan


def poison_act(m, d):
    d.act[0] = np.nan


def poison_qvel(m, d):
    d.qvel[0] = np.inf


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
@pytest.mark.parametrize("poison, warning", [(poison_qfrc, Warning.BADQACC),
                                             (poison_xfrc, Warning.BADQACC),
                                             (poison_act, Warning.BADACT),
                                             (poison_qvel, Warning.BADQVEL)])
def test_after_a_bad_input_the_run_continues_exactly_as_from_a_fresh_reset(solver, poison,
                                                                             warning):
    """With an equality constraint (warm-started rows): one bad input, the reset, then 100 steps
    equal bit for bit to 100 steps of a fresh Data from the same reset state."""
    m, d = arm(solver)
    d.ctrl[:] = [0.5, 0.3]
    engine.step(m, d, 50)
    poison(m, d)
    engine.step(m, d)
    assert d.warning[warning] == 1
    assert d.time == pytest.approx(m.opt.timestep)             # reset, then one good step
    fresh = engine.make_data(m)
    engine.step(m, fresh)
    engine.step(m, d, 100)
    engine.step(m, fresh, 100)
    assert d.time > 50 * m.opt.timestep
    np.testing.assert_array_equal(d.qpos, fresh.qpos)
    np.testing.assert_array_equal(d.qacc_warmstart, fresh.qacc_warmstart)


def test_a_bad_model_parameter_repaired_lets_the_run_go_on():
    m, d = arm()
    b = m.body("lower").id
    engine.step(m, d, 10)
    m.body_mass[b] = np.nan                  # in place (m.body_mass = ... refuses it)
    engine.step(m, d, 5)
    assert d.warning[Warning.BADQACC] == 5 and d.time == 0.0
    m.body_mass[b] = 1.0
    fresh = engine.make_data(m)
    engine.step(m, d, 30)
    engine.step(m, fresh, 30)
    np.testing.assert_array_equal(d.qpos, fresh.qpos)


def test_reset_data_restores_a_data_equal_to_a_new_one():
    m, d = arm()
    engine.step(m, d, 30)
    d.qfrc_applied[:] = np.nan
    d.mocap_pos[:] = np.inf
    d.ctrl[:] = np.nan
    engine.step(m, d, 3)
    engine.reset_data(m, d)
    same_data(d, engine.make_data(m))


def _extents(d):
    return sorted((a.ctypes.data, a.ctypes.data + a.nbytes) for a in d._arrays.values() if a.size)


def test_a_datas_arrays_share_one_aligned_buffer_through_copy_grow_and_pickle():
    """Every array of a Data is a view of one buffer (as MuJoCo's mjData), at a cache-line
    boundary and not overlapping another: after make_data, copy, deepcopy, grow and a pickle
    round trip; the copies hold the same values in buffers of their own."""
    m, d = arm()
    engine.step(m, d, 30)
    grown = d.copy().grow(2 * d.nconmax, 2 * d.njmax)
    for x in (d, d.copy(), copy.deepcopy(d), grown, pickle.loads(pickle.dumps(d))):
        lo = x._arena.ctypes.data
        spans = _extents(x)
        assert all(a % engine.types.ARENA_ALIGN == 0 for a, _ in spans)
        assert all(e0 <= a1 for (_, e0), (a1, _) in zip(spans, spans[1:]))
        assert lo <= spans[0][0] and spans[-1][1] <= lo + x._arena.nbytes
        if x is not d:
            assert not np.shares_memory(x._arena, d._arena)
            for k, a in d._arrays.items():
                if x is grown and a.shape != x._arrays[k].shape:
                    assert np.array_equal(x._arrays[k][tuple(slice(0, n) for n in a.shape)], a)
                else:
                    assert np.array_equal(x._arrays[k], a, equal_nan=True), k
    # the copy steps on alone
    c = d.copy()
    engine.step(m, c, 5)
    engine.step(m, d, 5)
    same_data(c, d)


# ------------------------------------------------------------------------------------------------
# load errors quote attributes, never file contents
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, content, element", [
    ("m.obj", b"v 0 0 0\nv 1 0 SECRET\nv 0 1 0\nf 1 2 3\n", "mesh"),
    ("m.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 SECRET\n", "mesh"),
    ("m.stl", b"solid x\nSECRET\nendsolid\n", "mesh"),
    ("h.png", b"SECRET: a text file, not an image", "hfield"),
])
def test_load_errors_do_not_quote_the_files_they_read(name, content, element):
    use = ('<geom type="mesh" mesh="a"/>' if element == "mesh" else
           '<geom type="hfield" hfield="a"/>')
    size = "" if element == "mesh" else ' size="1 1 1 1"'
    xml = (f'<mujoco><asset><{element} name="a" file="{name}"{size}/></asset>'
           f'<worldbody>{use}</worldbody></mujoco>')
    with pytest.raises(engine.ModelError) as e:
        engine.load_model_from_string(xml, {name: content})
    msg = str(e.value)
    assert "SECRET" not in msg and "BytesIO" not in msg and " at 0x" not in msg
    assert e.value.element == element and e.value.attribute == "file" and name in msg


# ---- strict MJCF reading, as MuJoCo reads ---------------------------------------------------
_BODY = '<mujoco><worldbody><body><joint name="j" damping="{}"/><geom size=".1"/></body>' \
        '</worldbody></mujoco>'
_TEXTURE = '<mujoco><asset><texture name="t" type="2d" file="{}"/><material name="m" ' \
           'texture="t"/></asset><worldbody><geom size="1" material="m"/></worldbody></mujoco>'
_STRICT = {
    "underscore": (_BODY.format("1_0"), {}),
    "arabic_digit": (_BODY.format("\u0661"), {}),
    "fullwidth_digit": (_BODY.format("\uff11"), {}),
    "trailing_text": (_BODY.format("1abc"), {}),
    "comma_list": ('<mujoco><worldbody><geom pos="1,2,3" size=".1"/></worldbody></mujoco>', {}),
    "float_integer": ('<mujoco><option iterations="2.5"/><worldbody/></mujoco>', {}),
    "repeated_default": ('<mujoco><default><joint damping="1"/><joint damping="2"/></default>'
                         '<worldbody/></mujoco>', {}),
    "tendon_repeat": ('<mujoco><worldbody><body><joint name="j"/><geom size=".1"/></body>'
                      '</worldbody><tendon><fixed><joint joint="j" coef="1"/>'
                      '<joint joint="j" coef="1"/></fixed></tendon></mujoco>', {}),
    "include_twice": ('<mujoco><include file="a.xml"/><worldbody><body><include file="a.xml"/>'
                      '</body></worldbody></mujoco>',
                      {"a.xml": b'<mujoco><geom size="1"/></mujoco>'}),
    "texture_not_png": (_TEXTURE.format("t.png"), {"t.png": b"plain text\n"}),
    "texture_unknown_type": (_TEXTURE.format("t.txt"), {"t.txt": b"plain text\n"}),
    "include_cycle": ('<mujoco><include file="a.xml"/><worldbody/></mujoco>',
                      {"a.xml": b'<mujoco><include file="b.xml"/></mujoco>',
                       "b.xml": b'<mujoco><include file="a.xml"/></mujoco>'}),
}


@pytest.mark.parametrize("case", sorted(_STRICT))
def test_mjcf_refused_where_mujoco_refuses_it(case):
    xml, assets = _STRICT[case]
    with pytest.raises(ValueError):          # mujoco's own error: the oracle refuses it too
        mujoco.MjModel.from_xml_string(xml, assets)
    with pytest.raises(engine.ModelError) as e:
        engine.load_model_from_string(xml, assets)
    assert e.value.line is not None, str(e.value)


def test_numbers_mujoco_accepts_are_read_alike():
    for text, value in (("+1.", 1.0), (".5", 0.5), ("2E-1", 0.2), ("0x10", 16.0)):
        xml = _BODY.format(text)
        assert engine.load_model_from_string(xml).dof_damping[0] == value
        assert mujoco.MjModel.from_xml_string(xml).dof_damping[0] == value


def test_includes_of_distinct_files_nest():
    xml = ('<mujoco><include file="a.xml"/><worldbody><body><include file="b.xml"/></body>'
           '</worldbody></mujoco>')
    assets = {"a.xml": b'<mujoco><option timestep="0.01"/></mujoco>',
              "b.xml": b'<mujoco><geom size="1"/><body><include file="c.xml"/></body></mujoco>',
              "c.xml": b'<mujoco><geom size="2"/></mujoco>'}
    m = engine.load_model_from_string(xml, assets)
    assert (m.nbody, m.ngeom, m.opt.timestep) == (3, 2, 0.01)


def test_unknown_xml_encoding_is_a_model_error_and_deep_nesting_loads():
    with pytest.raises(engine.ModelError, match="encoding"):
        engine.load_model_from_string('<?xml version="1.0" encoding="klingon"?><mujoco/>')
    n = 2000        # beyond MuJoCo's limits; the reader and compiler do not recurse
    deep = '<body><joint/><geom size=".1"/>' * n + '</body>' * n
    m = engine.load_model_from_string(f"<mujoco><worldbody>{deep}</worldbody></mujoco>")
    assert (m.nbody, m.nv, m.body_parentid[-1]) == (n + 1, n, n - 1)

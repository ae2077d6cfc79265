"""The MJCF compiler against MuJoCo's own compiler, field by field.

Every model is compiled twice: by engine.load_model and by mujoco.MjModel (the oracle, used in
tests only). Arrays are compared with a tolerance relative to the field's scale (1e-12). Quaternions
are compared up to sign, principal axes of inertia included: the compiler repeats MuJoCo's
eigen-decomposition operation for operation, so that they agree even for repeated moments.
"""
import glob
import os

import numpy as np
import pytest

import engine
from engine import compiler
from engine.enums import Integrator

mujoco = pytest.importorskip("mujoco")

SUITE = os.path.join(os.path.dirname(mujoco.__file__), "..", "dm_control", "suite")
SUITE = os.path.normpath(SUITE)
DATA = os.path.join(os.path.dirname(__file__), "data")

# dm_control suite models this engine cannot load, and why
SUITE_UNSUPPORTED = {}

RTOL = 1e-12


def _close(name, a, b, tol=RTOL):
    if np.asarray(b).dtype == np.float32:  # MuJoCo keeps colours etc. in single precision
        a64 = np.asarray(a, dtype=np.float64)
        b64 = np.asarray(b, dtype=np.float64).reshape(a64.shape)
        scale = max(1.0, float(np.max(np.abs(b64)))) if b64.size else 1.0
        err = float(np.max(np.abs(a64 - b64))) if b64.size else 0.0
        assert err <= 2e-7 * scale, f"{name} (float32): max error {err:.3g}"
        return
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, f"{name}: shape {a.shape} != {b.shape}"
    if a.size == 0:
        return
    scale = max(1.0, float(np.max(np.abs(b))))
    err = np.max(np.abs(a - b))
    assert err <= tol * scale, f"{name}: max error {err:.3g}\nours\n{a}\nmujoco\n{b}"


def _equal(name, a, b):
    a = np.asarray(a).astype(np.int64)
    b = np.asarray(b).astype(np.int64)
    assert a.shape == b.shape, f"{name}: shape {a.shape} != {b.shape}"
    assert np.array_equal(a, b), f"{name}:\nours   {a}\nmujoco {b}"


def _quat_close(name, a, b, tol=RTOL):
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    assert a.shape == b.shape, f"{name}: shape {a.shape} != {b.shape}"
    for i in range(len(a)):
        err = min(np.max(np.abs(a[i] - b[i])), np.max(np.abs(a[i] + b[i])))
        assert err <= tol * 10, f"{name}[{i}]: {a[i]} != {b[i]} (up to sign)"


SAME_INT = """
body_parentid body_rootid body_weldid body_mocapid body_jntnum body_jntadr body_dofnum
body_dofadr body_geomnum body_geomadr
jnt_type jnt_qposadr jnt_dofadr jnt_bodyid jnt_group jnt_limited jnt_actfrclimited
body_sameframe geom_sameframe site_sameframe
dof_bodyid dof_jntid dof_parentid dof_Madr
geom_type geom_contype geom_conaffinity geom_condim geom_bodyid geom_dataid geom_matid
geom_group geom_priority
site_type site_bodyid site_group
cam_mode cam_bodyid cam_targetbodyid
light_mode light_bodyid light_targetbodyid light_castshadow light_active
mesh_vertadr mesh_vertnum mesh_faceadr mesh_facenum
tendon_adr tendon_num tendon_limited wrap_type wrap_objid
actuator_trntype actuator_dyntype actuator_gaintype actuator_biastype actuator_trnid
actuator_actadr actuator_actnum actuator_group actuator_ctrllimited actuator_forcelimited
actuator_actlimited actuator_actearly
eq_type eq_obj1id eq_obj2id eq_active0
pair_geom1 pair_geom2
cam_projection cam_resolution
sensor_type sensor_datatype sensor_needstage sensor_objtype sensor_objid sensor_reftype
sensor_refid sensor_intprm sensor_dim sensor_adr
""".split()

SAME_FLOAT = """
body_pos body_ipos body_mass body_subtreemass body_gravcomp
jnt_pos jnt_axis jnt_stiffness jnt_range jnt_margin jnt_actfrcrange
dof_armature dof_damping dof_frictionloss dof_M0
geom_size geom_rbound geom_pos geom_friction geom_margin geom_gap geom_rgba
site_size site_pos site_rgba
cam_pos cam_fovy cam_sensorsize cam_intrinsic mat_rgba sensor_cutoff sensor_noise
light_pos light_dir light_attenuation light_cutoff light_exponent light_ambient
light_diffuse light_specular
mesh_vert
tendon_range tendon_margin tendon_stiffness tendon_damping tendon_frictionloss tendon_width
tendon_rgba wrap_prm
actuator_dynprm actuator_gainprm actuator_biasprm actuator_ctrlrange actuator_forcerange
actuator_actrange actuator_gear actuator_cranklength
pair_friction pair_margin pair_gap
key_time key_qpos key_qvel key_act key_ctrl key_mpos key_mquat
qpos0 qpos_spring
""".split()

SAME_QUAT = "body_quat geom_quat site_quat cam_quat".split()

SIZES = ("nq nv nu na nbody njnt ngeom nsite ncam nlight nmesh nmeshvert nmeshface ntendon "
         "nwrap neq nkey npair nexclude nM nmocap nmat nsensor nsensordata").split()


def compare_models(ours, mj):
    """Assert that our Model agrees with MuJoCo's mjModel (see module docstring)."""
    for s in SIZES:
        assert getattr(ours, s) == getattr(mj, s), f"{s}: {getattr(ours, s)} != {getattr(mj, s)}"
    for f in SAME_INT:
        _equal(f, getattr(ours, f), np.asarray(getattr(mj, f)).reshape(getattr(ours, f).shape))
    for f in SAME_FLOAT:
        theirs = np.asarray(getattr(mj, f))
        _close(f, getattr(ours, f), theirs.reshape(getattr(ours, f).shape))
    for f in SAME_QUAT:
        _quat_close(f, getattr(ours, f), getattr(mj, f))
    _equal("light_directional", ours.light_directional, np.asarray(mj.light_type) == 1)
    _equal("pair_condim", ours.pair_condim, mj.pair_dim)
    _close("eq_data", ours.eq_data, np.asarray(mj.eq_data)[:, :11])
    sig = np.asarray(mj.exclude_signature)
    _equal("exclude_body1", ours.exclude_body1, sig >> 16)
    _equal("exclude_body2", ours.exclude_body2, sig & 0xFFFF)
    given = ours.tendon_lengthspring[:, 0] >= 0
    _close("tendon_lengthspring", ours.tendon_lengthspring[given],
           np.asarray(mj.tendon_lengthspring)[given])
    # principal axes and moments: the compiler repeats MuJoCo's eigen-decomposition operation for
    # operation, so even the (arbitrary) axes of repeated moments agree
    _close("body_inertia", ours.body_inertia, mj.body_inertia)
    _quat_close("body_iquat", ours.body_iquat, mj.body_iquat)
    # options
    for k in ("timestep", "density", "viscosity", "impratio", "tolerance", "iterations",
              "noslip_iterations", "noslip_tolerance", "ccd_iterations", "ccd_tolerance"):
        _close(f"opt.{k}", getattr(ours.opt, k), getattr(mj.opt, k))
    for k in ("gravity", "wind", "magnetic"):
        _close(f"opt.{k}", getattr(ours.opt, k), getattr(mj.opt, k))
    assert ours.opt.integrator == Integrator(int(mj.opt.integrator))     # MuJoCo's values
    # disable flags that both engines have: MuJoCo bit -> ours
    mjbits = {"CONSTRAINT": 1 << 0, "EQUALITY": 1 << 1, "FRICTIONLOSS": 1 << 2,
              "LIMIT": 1 << 3, "CONTACT": 1 << 4, "SPRING": 1 << 5, "DAMPER": 1 << 6,
              "GRAVITY": 1 << 7, "CLAMPCTRL": 1 << 8, "WARMSTART": 1 << 9,
              "FILTERPARENT": 1 << 10, "ACTUATION": 1 << 11,
              "NATIVECCD": int(mujoco.mjtDisableBit.mjDSBL_NATIVECCD),
              "MULTICCD": int(mujoco.mjtDisableBit.mjDSBL_MULTICCD)}
    for name, bit in mjbits.items():
        assert bool(ours.opt.disableflags & engine.DisableBit[name]) == \
            bool(mj.opt.disableflags & bit), f"disable flag {name}"
    # names
    for kind, obj in (("body", mujoco.mjtObj.mjOBJ_BODY), ("joint", mujoco.mjtObj.mjOBJ_JOINT),
                      ("geom", mujoco.mjtObj.mjOBJ_GEOM), ("site", mujoco.mjtObj.mjOBJ_SITE),
                      ("actuator", mujoco.mjtObj.mjOBJ_ACTUATOR),
                      ("tendon", mujoco.mjtObj.mjOBJ_TENDON),
                      ("camera", mujoco.mjtObj.mjOBJ_CAMERA),
                      ("sensor", mujoco.mjtObj.mjOBJ_SENSOR)):
        theirs = [mujoco.mj_id2name(mj, obj, i) or "" for i in range(len(ours.names[kind]))]
        assert ours.names[kind] == theirs, f"{kind} names"


def _suite_models():
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(SUITE, "*.xml")))


@pytest.mark.parametrize("name", _suite_models())
def test_dm_control_suite(name):
    path = os.path.join(SUITE, name)
    if name in SUITE_UNSUPPORTED:
        with pytest.raises(engine.ModelError):
            compiler.load_model(path)
        return
    mj = mujoco.MjModel.from_xml_path(path)
    ours = engine.load_model(path)
    compare_models(ours, mj)


# real models beyond the suite: bodies with tilted capsules and symmetric meshes, whose principal
# axes are sensitive to every rounding
WALKERS = os.path.join(os.path.dirname(SUITE), "locomotion", "walkers", "assets")
WALKER_MODELS = ["humanoid_CMU_V2019.xml", "humanoid_CMU_V2020.xml", "rodent.xml",
                 "build_fruitfly/assets/drosophila_fused.xml"]


@pytest.mark.parametrize("name", WALKER_MODELS)
def test_dm_control_walkers(name):
    path = os.path.join(WALKERS, name)
    compare_models(engine.load_model(path), mujoco.MjModel.from_xml_path(path))


def test_suite_list_is_complete():
    required = {"acrobot", "cartpole", "cheetah", "finger", "hopper", "humanoid", "humanoid_CMU",
                "pendulum", "point_mass", "reacher", "swimmer", "walker"}
    have = {os.path.splitext(n)[0] for n in _suite_models()}
    assert required <= have


def _data_models():
    return sorted(os.path.basename(p) for pattern in ("compiler_*.xml", "sensors_*.xml")
                  for p in glob.glob(os.path.join(DATA, pattern)))


@pytest.mark.parametrize("name", _data_models())
def test_data_models(name):
    path = os.path.join(DATA, name)
    mj = mujoco.MjModel.from_xml_path(path)
    ours = engine.load_model(path)
    compare_models(ours, mj)


# ----------------------------------------------------------------------------------------------
# our own option semantics (no MuJoCo counterpart to compare with)
# ----------------------------------------------------------------------------------------------
def _model(body="", options="", extra=""):
    return compiler.load_model_from_string(
        f"<mujoco>{options}<worldbody>{body}</worldbody>{extra}</mujoco>")


def test_option_defaults():
    m = _model()
    assert m.opt.solver == engine.Solver.PGS
    assert m.opt.cone == engine.Cone.ELLIPTIC
    assert m.opt.integrator == Integrator.SEMIIMPLICIT
    # MuJoCo's default solimp (0.9 0.95 0.001 0.5 2) and solref (0.02 1)
    assert (m.opt.epsilon, m.opt.kappa, m.opt.rmin) == (pytest.approx(1 / 9), 0.02, 1e-8)
    np.testing.assert_allclose(m.opt.impedance, [1 / 19, 0.001, 0.5, 2])
    assert m.opt.timestep == 0.002 and list(m.opt.gravity) == [0, 0, -9.81]
    assert list(m.opt.magnetic) == [0, -0.5, 0]
    assert m.warnings == []


def test_option_keywords_and_own_attributes():
    m = _model(options='<option solver="Newton" cone="pyramidal" integrator="midpoint" '
                       'epsilon="0.1" kappa="0.05" rmin="1e-6"/>')
    assert m.opt.solver == engine.Solver.NEWTON and m.opt.cone == engine.Cone.PYRAMIDAL
    assert m.opt.stabilization == engine.Stabilization.DIAGONAL
    assert _model(options='<option stabilization="exact"/>').opt.stabilization == 1
    assert m.opt.integrator == Integrator.MIDPOINT
    assert (m.opt.epsilon, m.opt.kappa, m.opt.rmin) == (0.1, 0.05, 1e-6)
    for name, value in (("explicit", Integrator.EXPLICIT), ("interleave", Integrator.INTERLEAVE),
                        ("RK4", Integrator.RK4), ("Euler", Integrator.SEMIIMPLICIT)):
        assert _model(options=f'<option integrator="{name}"/>').opt.integrator == value


def test_implicit_integrators_and_cg_warning(caplog):
    m = _model(options='<option integrator="implicit" solver="CG"/>')
    assert m.opt.integrator == Integrator.IMPLICIT
    assert _model(options='<option integrator="implicitfast"/>').opt.integrator \
        == Integrator.IMPLICITFAST
    assert m.opt.solver == engine.Solver.NEWTON
    assert any("CG" in w for w in m.warnings)
    assert not any("implicit" in w for w in m.warnings)


def test_discrete_integrator_is_refused():
    with pytest.raises(engine.ModelError, match="discrete integrator") as e:
        _model(options='<option integrator="discrete"/>')
    assert e.value.attribute == "integrator" and e.value.element == "option"


def test_integrator_option_takes_enum_values_only():
    m = _model()
    m.opt.integrator = 3
    assert m.opt.integrator is Integrator.IMPLICITFAST
    with pytest.raises(ValueError):
        m.opt.integrator = 7


def test_disable_flags():
    m = _model(options='<option><flag contact="disable" spring="disable" damper="disable" '
                       'gravity="disable" passive="disable" energy="enable"/></option>')
    D = engine.DisableBit
    assert m.opt.disableflags == int(D.CONTACT | D.SPRING | D.DAMPER | D.GRAVITY | D.PASSIVE)
    assert not any("energy" in w for w in m.warnings)     # the engine computes it anyway


def test_softness_mapping():
    body = ('<body><joint name="j" range="-1 1" solreflimit="0.05 1" solimplimit="0.8 0.9 .01"/>'
            '<geom size=".1" epsilon="0.3" kappa="0.04"/><geom size=".1" solref="-100 -10"/>'
            '<geom size=".1"/></body>')
    m = _model(body)
    assert m.jnt_kappa[0] == 0.05 and abs(m.jnt_epsilon[0] - 0.2 / 0.8) < 1e-15
    assert (m.geom_epsilon[0], m.geom_kappa[0]) == (0.3, 0.04)
    # direct (-stiffness, -damping): kappa = 2 / damping, dampratio damping / 2 sqrt(stiffness)
    assert m.geom_kappa[1] == pytest.approx(0.2) and m.geom_dampratio[1] == pytest.approx(0.5)
    np.testing.assert_allclose(m.jnt_impedance[0], [0.1 / 0.9, 0.01, 0.5, 2])
    assert (m.geom_epsilon[2], m.geom_kappa[2]) == (-1, -1)


def test_tendon_springlength_unset_is_marked():
    m = _model('<body><joint name="j"/><geom size=".1"/></body>',
               extra='<tendon><fixed><joint joint="j" coef="1"/></fixed>'
                     '<fixed springlength=".5"><joint joint="j" coef="1"/></fixed></tendon>')
    assert list(m.tendon_lengthspring[0]) == [-1, -1]
    assert list(m.tendon_lengthspring[1]) == [0.5, 0.5]


def test_extras():
    path = os.path.join(DATA, "compiler_defaults.xml")
    m = compiler.load_model(path)
    assert m.path == path
    assert m.materials[0]["name"] == "red" and m.materials[0]["texrepeat"] == [2.0, 2.0]
    assert m.textures[0]["name"] == "grid"
    assert m.names["body"][0] == "world"
    m = compiler.load_model(os.path.join(DATA, "compiler_constraints.xml"))
    assert [s["type"] for s in m.sensors][:3] == ["jointpos", "framepos", "touch"]
    assert m.sensors[1]["objid"] == m.names["site"].index("sc")
    assert m.sensors[0]["dim"] == 1 and m.sensors[1]["dim"] == 3


def test_assetdir_and_texturedir(tmp_path):
    """meshdir and texturedir default to assetdir; each can be set on its own (as MuJoCo)."""
    with open(os.path.join(DATA, "compiler_tetra.obj"), "rb") as f:
        obj = f.read()
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de"
                        "0000000c49444154789c63f8cfc0000003010100c9fe92ef0000000049454e44ae"
                        "426082")
    (tmp_path / "assets").mkdir()
    (tmp_path / "meshes").mkdir()
    (tmp_path / "assets" / "tetra.obj").write_bytes(obj)
    (tmp_path / "assets" / "grid.png").write_bytes(png)
    (tmp_path / "meshes" / "tetra2.obj").write_bytes(obj)
    body = ('<worldbody><body><freejoint/><geom type="mesh" mesh="tetra"/>'
            '<geom type="mesh" mesh="tetra2" pos="1 0 0"/></body></worldbody>')
    asset = ('<asset><mesh file="tetra.obj"/><mesh file="{}"/>'
             '<texture name="grid" type="2d" file="grid.png"/></asset>')
    for compiler_attrs, mesh2 in (('assetdir="assets"', "../meshes/tetra2.obj"),
                                  ('assetdir="assets" meshdir="meshes"', "tetra2.obj")):
        if "meshdir" in compiler_attrs:
            (tmp_path / "meshes" / "tetra.obj").write_bytes(obj)
        path = tmp_path / "model.xml"
        path.write_text(f"<mujoco><compiler {compiler_attrs}/>{asset.format(mesh2)}{body}"
                        "</mujoco>")
        m = engine.load_model(str(path))
        compare_models(m, mujoco.MjModel.from_xml_path(str(path)))
        assert m.textures[0]["file"] == str(tmp_path / "assets" / "grid.png")
    # texturedir on its own
    path.write_text('<mujoco><compiler texturedir="assets"/><asset><texture name="grid" '
                    'type="2d" file="grid.png"/></asset></mujoco>')
    assert engine.load_model(str(path)).textures[0]["file"] == str(tmp_path / "assets/grid.png")
    mujoco.MjModel.from_xml_path(str(path))       # MuJoCo finds it there too


def test_load_from_string_with_assets():
    with open(os.path.join(DATA, "compiler_tetra.obj"), "rb") as f:
        obj = f.read()
    xml = ('<mujoco><include file="part.xml"/><asset><mesh file="tetra.obj"/></asset>'
           '<worldbody><body><freejoint/><geom type="mesh" mesh="tetra"/></body></worldbody>'
           '</mujoco>')
    part = b'<mujoco><option timestep="0.004"/></mujoco>'
    m = engine.load_model_from_string(xml, {"tetra.obj": obj, "part.xml": part})
    assert m.nmesh == 1 and m.opt.timestep == 0.004 and m.names["mesh"] == ["tetra"]
    spec = mujoco.MjSpec.from_string(xml.replace('<include file="part.xml"/>',
                                                 '<option timestep="0.004"/>'),
                                     assets={"tetra.obj": obj})
    compare_models(m, spec.compile())

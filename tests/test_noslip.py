"""The noslip post-processing solver (solver.noslip, MuJoCo's mj_solNoSlip).

Oracles: MuJoCo's own noslip sweeps, run on MuJoCo's constraint rows (the stage on its own: the
rows, the main solver's forces and efc_b are MuJoCo's, so both engines sweep the same problem);
textbook friction (a box on a slope below atan(mu) does not creep); real models that use it.
"""
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from engine import Integrator, solver
from mj_adapter import model_from_mujoco

import dm_control

DM = pathlib.Path(dm_control.__file__).parent

# boxes on a tilted floor with every contact dimension, and joints with friction loss
SCENE = """
<mujoco>
  <option timestep="0.004" cone="{cone}" noslip_iterations="{noslip}" jacobian="dense"/>
  <worldbody>
    <geom type="plane" size="3 3 .1" euler="0 20 0" friction="0.7 0.02 0.001"/>
    <body pos="-0.5 0 0.3"><freejoint/><geom type="box" size=".1 .08 .05" condim="3"/></body>
    <body pos="0 0 0.12"><freejoint/><geom type="box" size=".1 .08 .05" condim="4"/></body>
    <body pos="0.5 0 -0.08"><freejoint/><geom type="sphere" size=".08" condim="6"/></body>
    <body pos="0 1 1">
      <joint name="a" axis="0 1 0" frictionloss="0.3"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size=".03" contype="0" conaffinity="0"/>
      <body pos="0.3 0 0">
        <joint name="b" axis="1 0 0" frictionloss="0.1"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size=".03" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def load_rows_from_mujoco(m, d, mm, md):
    """Our constraint rows set to MuJoCo's (dense Jacobian), impulses and efc_b in our units
    (impulse = h force, b = h (J qacc_smooth - aref)), A's blocks and M^-1 J' by our compute_A
    from our factor of the same M."""
    h = mm.opt.timestep
    nefc, nv = md.nefc, mm.nv
    assert mm.opt.jacobian == mujoco.mjtJacobian.mjJAC_DENSE
    d.ncon = md.ncon
    for c in range(md.ncon):
        d.contact_dim[c] = md.contact.dim[c]
        d.contact_efc_address[c] = md.contact.efc_address[c]
        d.contact_friction[c] = md.contact.friction[c]
    d.nefc = nefc
    J = np.array(md.efc_J).reshape(nefc, nv)
    for i in range(nefc):
        d.efc_type[i], d.efc_id[i] = md.efc_type[i], md.efc_id[i]
        d.efc_J[i, :nv] = J[i]
        d.efc_range[i] = (0, nv, 0, 0)
        d.efc_R[i] = md.efc_R[i]
        d.efc_hard[i] = 0
        d.efc_frictionloss[i] = h * md.efc_frictionloss[i]
        d.efc_b[i] = h * md.efc_b[i]
        d.efc_mu[i] = 0.0
    for c in range(md.ncon):
        adr, dim = md.contact.efc_address[c], md.contact.dim[c]
        if adr < 0:
            continue
        if md.efc_type[adr] == mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC:
            d.efc_mu[adr + 1:adr + dim] = md.contact.friction[c, :dim - 1]
    solver.compute_A(m._struct, d._struct, True)


def mujoco_with_and_without_noslip(mm, md):
    """MuJoCo's forward at md's state without noslip and with it: (forces without, forces with,
    sweeps it took)."""
    n = mm.opt.noslip_iterations
    mm.opt.noslip_iterations = 0
    mujoco.mj_forward(mm, md)
    f0, niter0 = md.efc_force.copy(), md.solver_niter[0]
    mm.opt.noslip_iterations = n
    mujoco.mj_forward(mm, md)
    return f0, md.efc_force.copy(), md.solver_niter[0] - niter0


def check_stage(mm, md):
    # MuJoCo sweeps each constraint island on its own, each with its own stopping test; ours is
    # one problem, as MuJoCo's with islands disabled
    mm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ISLAND
    m = model_from_mujoco(mm)
    m.opt.integrator = Integrator.IMPLICITFAST    # qLD = M, as MuJoCo's constraint problem
    d = engine.make_data(m)
    d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = md.qpos, md.qvel, md.act, md.ctrl
    engine.forward(m, d)                          # our factor of M at the state
    f0, f1, sweeps = mujoco_with_and_without_noslip(mm, md)
    assert md.nefc > 0 and not np.allclose(f0, f1)    # noslip changed the forces
    load_rows_from_mujoco(m, d, mm, md)
    f = mm.opt.timestep * f0[:md.nefc]
    w = np.zeros(mm.nv)
    solver.impulse_velocity(d._struct, f, w)
    ours = solver.noslip(m._struct, d._struct, f, w, mm.opt.noslip_iterations,
                         mm.opt.noslip_tolerance)
    assert ours == sweeps
    force = f / mm.opt.timestep
    ref = f1[:md.nefc]
    # MuJoCo minimises a 5-dimensional friction block (condim 6) by at most 20 Newton steps on
    # |x|^2 - fn^2 (mju_QCQP), then scales onto the ellipse: an approximate minimum, where ours
    # is exact (_friction_ellipse). Those rows agree loosely, and ours costs no more.
    loose = np.zeros(md.nefc, dtype=bool)
    for c in range(md.ncon):
        adr, dim = md.contact.efc_address[c], md.contact.dim[c]
        if adr >= 0 and dim == 6 and mm.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC:
            loose[adr + 1:adr + dim] = True
    scale = np.abs(ref).max()
    err = np.abs(force - ref)
    assert err[~loose].max() < 1e-9 * scale, err[~loose].max() / scale
    if loose.any():
        assert err[loose].max() < 1e-3 * scale
        cost = [dual_cost_without_r(d, mm.opt.timestep * x) for x in (force, ref)]
        assert cost[0] <= cost[1] + 1e-12 * abs(cost[1]), cost
    return md.efc_type[:md.nefc]


def dual_cost_without_r(d, f):
    """1/2 f' A f + f' b: the problem the noslip sweeps lower."""
    w = np.zeros(d.qvel.shape[0])
    solver.impulse_velocity(d._struct, f, w)
    return sum(f[i] * (0.5 * d.efc_J[i] @ w + d.efc_b[i]) for i in range(d.nefc))


@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
def test_noslip_stage_against_mujoco(cone):
    """Friction loss and contacts of dimension 3, 4 and 6 at a state of MuJoCo's run, the
    sweeps of both engines from the same forces: the same number of sweeps, the same forces."""
    mm = mujoco.MjModel.from_xml_string(SCENE.format(cone=cone, noslip=6))
    md = mujoco.MjData(mm)
    md.qvel[9:] = 0.0
    md.qvel[-2:] = [2.0, -3.0]
    for _ in range(60):
        mujoco.mj_step(mm, md)
    types = check_stage(mm, md)
    assert int(mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF) in types
    assert {3, 4, 6} <= set(md.contact.dim[:md.ncon].tolist())


def test_noslip_stage_against_mujoco_dog():
    """dm_control's dog (pyramidal cones, Newton, noslip_iterations 4) standing on the floor."""
    path = DM / "suite" / "dog.xml"
    mm = mujoco.MjModel.from_xml_path(str(path))
    mm.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    md = mujoco.MjData(mm)
    for _ in range(100):
        mujoco.mj_step(mm, md)
    assert mm.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL and md.ncon >= 4
    check_stage(mm, md)


SLOPE = """
<mujoco>
  <option timestep="0.002" cone="{cone}" solver="{solver}" noslip_iterations="{noslip}"
          noslip_tolerance="{tolerance}"/>
  <worldbody>
    <geom type="plane" size="2 2 .1" euler="0 25 0" friction="0.6"/>
    <body pos="0 0 0" euler="0 25 0">
      <freejoint/>
      <geom type="box" size=".1 .1 .05" pos="0 0 0.049" mass="1" friction="0.6"/>
    </body>
  </worldbody>
</mujoco>
"""


def slope(cone, solver_name, noslip, tolerance=1e-6):
    return SLOPE.format(cone=cone, solver=solver_name, noslip=noslip, tolerance=tolerance)


def creep_mm(xml, engine_name="ours"):
    """Distance in mm the box slides along the 25-degree slope (mu 0.6 > tan 25 = 0.466) in
    the second after it has settled for 0.5 s."""
    if engine_name == "mujoco":
        mm = mujoco.MjModel.from_xml_string(xml)
        md = mujoco.MjData(mm)
        for _ in range(250):
            mujoco.mj_step(mm, md)
        x0 = md.qpos[:3].copy()
        for _ in range(500):
            mujoco.mj_step(mm, md)
        return 1000 * np.linalg.norm(md.qpos[:3] - x0)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    engine.step(m, d, 250)
    x0 = d.qpos[:3].copy()
    engine.step(m, d, 500)
    assert not d.warning.any() and d.ncon >= 4
    return 1000 * np.linalg.norm(d.qpos[:3] - x0)


@pytest.mark.parametrize("solver_name", ["PGS", "Newton"])
def test_box_on_slope_does_not_creep_with_noslip(solver_name):
    """The target: a box on a 25-degree slope with mu 0.6 and noslip (elliptic cones)
    creeps less than 1e-3 mm in a second; without noslip the soft friction creeps about 1 mm.
    The sweeps stop at noslip_tolerance: at MuJoCo's default 1e-6 they leave ~1e-3 mm (MuJoCo
    ~5e-5 mm, its soft solution starting the sweeps closer to their optimum), and each further
    sweep takes a factor of about 10 off; 1e-8 is used here."""
    assert creep_mm(slope("elliptic", solver_name, 10, 1e-8)) < 1e-3
    assert creep_mm(slope("elliptic", solver_name, 0)) > 0.1


def test_pyramidal_noslip_keeps_the_pyramid_pairs_as_mujoco():
    """With pyramidal cones MuJoCo's noslip keeps the sum of each pair of opposite edges (the
    soft solution's share of the normal force per friction direction) and only moves their
    difference: a pair that the soft solution saturates stays saturated, and the box keeps
    creeping, in MuJoCo too (by about as much)."""
    xml = slope("pyramidal", "Newton", 10, 1e-8)
    ours, theirs = creep_mm(xml), creep_mm(xml, "mujoco")
    assert ours > 0.5 and theirs > 0.5
    assert 0.5 < ours / theirs < 2.0


def test_noslip_options():
    """MJCF noslip_iterations and noslip_tolerance (MuJoCo's defaults 0 and 1e-6), live in
    m.opt, recorded with trajectories; negative values are refused."""
    m = engine.load_model_from_string(SCENE.format(cone="elliptic", noslip=0))
    assert (m.opt.noslip_iterations, m.opt.noslip_tolerance) == (0, 1e-6)
    m = engine.load_model_from_string(slope("elliptic", "PGS", 7, 1e-9))
    assert (m.opt.noslip_iterations, m.opt.noslip_tolerance) == (7, 1e-9)
    m.opt.noslip_iterations = 3
    with pytest.raises(ValueError):
        m.opt.noslip_iterations = -1
    with pytest.raises(engine.ModelError, match="noslip_iterations"):
        engine.load_model_from_string(slope("elliptic", "PGS", -2))
    assert engine.trajectory.options_dict(m)["noslip_iterations"] == [3]


def test_noslip_with_hard_equality_rows():
    """A hard equality (welded bodies) stays exact through the noslip sweeps, with both
    solvers: the sweeps move the impulses along the hard rows' null space."""
    xml = slope("elliptic", "{solver}", 10).replace(
        "</worldbody>", """<body name="b2" pos="0.3 0 0.3"><freejoint/>
      <geom type="sphere" size=".05" mass=".3"/></body></worldbody>
      <equality><connect body1="b2" body2="world" anchor="0 0 0" hard="true"/></equality>""")
    for name in ("PGS", "Newton"):
        m = engine.load_model_from_string(xml.replace("{solver}", name))
        d = engine.make_data(m)
        engine.step(m, d, 300)
        # the connect's hard rows: J v' = v* exactly, v* from (24) with eps = 0
        engine.forward(m, d)
        hard = np.flatnonzero(d.efc_hard[:d.nefc])
        assert hard.size == 3
        vnext = d.qvel + m.opt.timestep * d.qacc
        err = d.efc_J[hard] @ vnext - d.efc_vstar[hard]
        assert np.abs(err).max() < 1e-10, (name, err)


CORPUS = [DM / "suite" / "dog.xml",
          DM / "locomotion" / "walkers" / "assets" / "dog_v2" / "dog.xml",
          DM / "locomotion" / "walkers" / "assets" / "fruitfly_v2" / "fruitfly.xml",
          DM / "composer" / "arena.xml"]


def load_corpus_model(path, tmp_path):
    """The model; the fruit fly without its adhesion actuators (body transmission, another
    feature), read from a copy of its directory (links to its meshes)."""
    if path.name != "fruitfly.xml":
        return engine.load_model(str(path))
    import re
    for f in path.parent.iterdir():
        (tmp_path / f.name).symlink_to(f)
    xml = re.sub(r"<adhesion[^>]*/>", "", path.read_text())
    (tmp_path / "fly.xml").write_text(xml)
    return engine.load_model(str(tmp_path / "fly.xml"))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_models_with_noslip_load_and_run(path, tmp_path):
    """dm_control's models that use noslip load with MuJoCo's options and run 0.2 s from their
    first keyframe without an auto-reset; the dog stands on its contacts with the noslip
    sweeps at work (the fly alone has no floor; the arena has no dofs)."""
    m = load_corpus_model(path, tmp_path)
    mm = mujoco.MjModel.from_xml_path(str(path))
    assert m.opt.noslip_iterations == mm.opt.noslip_iterations > 0
    assert m.opt.noslip_tolerance == mm.opt.noslip_tolerance
    d = engine.make_data(m)
    if m.nkey:
        engine.reset_keyframe(m, d, 0)
    engine.step(m, d, int(round(0.2 / m.opt.timestep)))
    assert not d.warning.any() and np.isfinite(d.qpos).all()
    if path.name == "dog.xml":
        assert d.ncon >= 4 and d.qpos[2] > 0.2
        engine.forward(m, d)
        with_noslip = d.solver_niter[0]
        m.opt.noslip_iterations = 0
        engine.forward(m, d)
        assert with_noslip > d.solver_niter[0]

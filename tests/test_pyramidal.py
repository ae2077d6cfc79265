"""Pyramidal friction cones: rows and regularisers as MuJoCo (its own results are the oracle),
resting and sliding contacts with known answers, contact forces in the contact frame, and PGS
against Newton on the pyramidal problem."""
import mujoco
import numpy as np
import pytest

import engine
from engine.enums import ConstraintType as CT

G = 9.81
EPS, KAPPA = 0.1, 0.02

DROP = """
<mujoco>
  <option timestep="0.002" cone="{cone}" solver="{solver}" {extra}/>
  <worldbody>
    <geom type="plane" size="5 5 .1" friction="{mu} 0.005 0.0001" {soft}/>
    <body pos="0 0 {z}"><freejoint/>
      <geom type="{geom}" size="{size}" mass="{mass}" friction="{mu} 0.005 0.0001" {soft}/>
    </body>
  </worldbody>
</mujoco>
"""
# the same softness in both engines: kappa = timeconst, epsilon = (1 - d) / d (README)
SOFT = f'solref="{KAPPA} 1" solimp="{1 / (1 + EPS)} {1 / (1 + EPS)} 0.001 0.5 2"'


def rest(cone, solver, geom, size, mu, mass=1.0):
    z = 0.1
    xml = DROP.format(cone=cone, solver=solver, extra=f'epsilon="{EPS}" kappa="{KAPPA}"',
                      mu=mu, soft="", z=z, geom=geom, size=size, mass=mass)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    engine.step(m, d, 1500)
    return m, d, z - d.qpos[2]


def rest_mujoco(cone, geom, size, mu, mass=1.0):
    xml = DROP.format(cone=cone, solver="Newton", extra="", mu=mu, soft=SOFT, z=0.1,
                      geom=geom, size=size, mass=mass)
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    for _ in range(1500):
        mujoco.mj_step(mm, md)
    return mm, md, 0.1 - md.qpos[2]


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
@pytest.mark.parametrize("geom, size", [("sphere", "0.1"), ("box", "0.1 0.1 0.1")])
@pytest.mark.parametrize("mu", [1.0, 0.5])
def test_resting_contact_as_mujoco(solver, geom, size, mu):
    """2 (condim - 1) edge rows per contact with MuJoCo's regulariser: the resting penetration
    equals MuJoCo's with the pyramidal cone; at mu = 1 (condim 3) on a single contact also our
    elliptic one (on several the elliptic normal includes the lever arms, the edges do not);
    the contact forces carry the weight."""
    m, d, depth = rest("pyramidal", solver, geom, size, mu)
    mm, md, depth_mj = rest_mujoco("pyramidal", geom, size, mu)
    assert d.ncon == md.ncon
    n = d.nefc
    assert n == md.nefc == 4 * d.ncon
    assert np.all(d.efc_type[:n] == CT.CONTACT_PYRAMIDAL)
    np.testing.assert_allclose(d.efc_R[:n], md.efc_R[:n], rtol=1e-9)
    assert depth == pytest.approx(depth_mj, rel=0.01)
    normal = sum(engine.contact_force(m, d, c)[0] for c in range(d.ncon))
    assert normal == pytest.approx(G, rel=1e-3)
    if mu == 1.0 and geom == "sphere":
        _, _, depth_el = rest("elliptic", solver, geom, size, mu)
        assert depth == pytest.approx(depth_el, rel=0.01)


INCLINE = """
<mujoco>
  <option timestep="0.001" solver="{solver}" epsilon="0.01" cone="pyramidal"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" euler="0 {deg} 0" friction="{mu} 0 0"/>
    <body euler="0 {deg} 0">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.02" pos="0 0 0.02" mass="1" friction="{mu} 0 0"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
def test_box_on_incline_sticks_then_slides(solver):
    """Coulomb's threshold tan(theta) = mu and the sliding acceleration g (sin - mu cos). The
    pyramid is exact for friction along an edge direction: the slope runs along a contact
    tangent here (checked), where the pyramid's friction bound is mu f_n as the cone's."""
    mu = 0.5
    critical = np.degrees(np.arctan(mu))
    for deg in (critical - 7, critical - 2, critical + 4, critical + 9):
        m = engine.load_model_from_string(INCLINE.format(solver=solver, deg=deg, mu=mu))
        d = engine.make_data(m)
        engine.step(m, d, 100)
        theta = np.radians(deg)
        slope = np.array([np.cos(theta), 0.0, -np.sin(theta)])
        for c in range(d.ncon):
            frame = d.contact_frame[c].reshape(3, 3)
            assert max(abs(frame[1] @ slope), abs(frame[2] @ slope)) > 1 - 1e-9
        start = d.qpos[:3].copy()
        times, speeds = [], []
        for _ in range(200):                       # 2 s
            engine.step(m, d, 10)
            times.append(d.time)
            speeds.append(np.linalg.norm(d.qvel[:3]))
        drift = np.linalg.norm(d.qpos[:3] - start)
        if deg < critical:
            assert drift < 1e-3
        else:
            accel = np.polyfit(times, speeds, 1)[0]
            assert accel == pytest.approx(G * (np.sin(theta) - mu * np.cos(theta)), rel=0.05)


PUSHED = """
<mujoco>
  <option timestep="0.002" cone="{cone}" solver="{solver}" iterations="{it}" tolerance="{tol}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" euler="0 5 10" condim="{condim}"/>
    <body pos="0 0 0.1" euler="3 -4 20"><freejoint/>
      <geom type="box" size="0.2 0.1 0.05" mass="2" condim="{condim}"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("condim", [3, 4, 6])
def test_contact_force_balances_the_load(cone, condim):
    """A box held on a tilted plane by a sideways force below the friction limit: the contact
    forces, rotated from their frames to the world, balance gravity and the push (Newton's
    law; the contact points' torques balance too)."""
    m = engine.load_model_from_string(PUSHED.format(cone=cone, solver="Newton", it=100,
                                                    tol=1e-12, condim=condim))
    d = engine.make_data(m)
    push = np.array([3.0, -2.0, 0.0])
    d.xfrc_applied[1, :3] = push
    engine.step(m, d, 1500)
    engine.forward(m, d)
    # settled: soft friction may leave a steady creep, but no acceleration
    assert np.abs(d.qacc).max() < 1e-4
    total = np.zeros(3)
    torque = np.zeros(3)
    com = d.xipos[1]
    for c in range(d.ncon):
        f = engine.contact_force(m, d, c)
        frame = d.contact_frame[c].reshape(3, 3)
        fw = frame.T @ f[:3]                     # force on geom 2 (the box), world frame
        total += fw
        torque += np.cross(d.contact_pos[c] - com, fw) + frame.T @ f[3:]
    weight = np.array([0.0, 0.0, -2.0 * G])
    np.testing.assert_allclose(total, -(weight + push), atol=1e-3)
    np.testing.assert_allclose(torque, 0.0, atol=1e-3)


@pytest.mark.parametrize("condim", [3, 4, 6])
def test_pgs_reaches_newton_on_the_pyramidal_problem(condim):
    """Same state, same rows: PGS with many sweeps converges to Newton's impulses."""
    forces = []
    for solver, it, tol in (("Newton", 100, 1e-14), ("PGS", 20000, 0.0)):
        m = engine.load_model_from_string(PUSHED.format(cone="pyramidal", solver=solver, it=it,
                                                        tol=tol, condim=condim))
        m.opt.disableflags = engine.DisableBit.WARMSTART
        d = engine.make_data(m)
        d.qpos[2] = 0.06                         # penetrating, sliding and spinning
        d.qvel[:6] = [0.3, -0.1, 0.0, 0.5, -0.2, 2.0]
        engine.forward(m, d)
        assert d.nefc == 2 * (condim - 1) * d.ncon > 0
        forces.append(d.efc_force[:d.nefc].copy())
    scale = np.abs(forces[0]).max()
    np.testing.assert_allclose(forces[1], forces[0], atol=1e-7 * scale, rtol=0)
    assert np.all(forces[0] >= -1e-12 * scale)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("stab", ["diagonal", "exact"])
def test_inverse_recovers_the_forward_step(cone, stab):
    """Forward (Newton, converged) then inverse on the same qacc: the inverse's half-line
    projection of each pyramid edge (and the exact stabilization's v*) give back the applied
    force and the constraint forces of the step (Theorem 4)."""
    xml = PUSHED.format(cone=cone, solver="Newton", it=100, tol=1e-14, condim=3).replace(
        "<option ", f'<option stabilization="{stab}" ')
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    d.qpos[2] = 0.055
    d.qvel[:6] = [0.3, -0.1, 0.0, 0.5, -0.2, 2.0]
    d.qfrc_applied[:] = np.random.default_rng(0).standard_normal(m.nv)
    engine.forward(m, d)
    n = d.nefc
    assert n > 0 and d.ncon > 0
    assert d.solver_residual[0] < 1e-9              # the forward converged
    f_fwd = d.efc_force[:n].copy()
    d.efc_force[:] = np.nan                        # a row the inverse skips shows
    d.qfrc_inverse[:] = np.nan
    engine.inverse(m, d)
    scale = np.abs(d.qfrc_applied).max()
    assert np.abs(d.qfrc_inverse - d.qfrc_applied).max() <= 1e-9 * scale
    assert np.abs(d.efc_force[:n] - f_fwd).max() <= 1e-9 * np.abs(f_fwd).max()

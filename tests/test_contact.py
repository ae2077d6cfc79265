"""Frictional contact with known answers: resting penetration, stick and slip on an incline,
torsional and rolling friction, and stability of stacks and of the humanoid at 10 ms with 5
solver iterations (paper section V)."""
import pathlib
import zlib

import dm_control
import mujoco
import numpy as np
import pytest

import engine

SUITE = pathlib.Path(dm_control.__file__).parent / "suite"
G = 9.81

DROP = """
<mujoco>
  <option timestep="0.002" epsilon="{eps}" kappa="{kappa}" solver="{solver}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 0.1"><freejoint/><geom type="{geom}" size="{size}" mass="{mass}"/></body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
@pytest.mark.parametrize("geom, size, ncontacts", [("sphere", "0.1", 1),
                                                   ("box", "0.1 0.1 0.1", 4)])
def test_resting_penetration(solver, geom, size, ncontacts):
    """A body at rest sinks kappa^2 eps g / (1 + eps) (paper section V), whatever its mass and
    on however many contacts: a cube rests on 4, each carrying a quarter of the weight with
    R = eps A_ii four times a lone point's (A_ii includes the lever arm of the corner)."""
    for eps, kappa in [(0.05, 0.02), (0.1, 0.05), (0.01, 0.03)]:
        depths = []
        for mass in (0.1, 10.0):
            m = engine.load_model_from_string(DROP.format(eps=eps, kappa=kappa, solver=solver,
                                                          geom=geom, size=size, mass=mass))
            d = engine.make_data(m)
            engine.step(m, d, 1500)
            assert d.ncon == ncontacts
            depths.append(0.1 - d.qpos[2])
        predicted = kappa ** 2 * eps * G / (1 + eps)
        assert depths[0] == pytest.approx(predicted, rel=0.1)
        assert depths[1] == pytest.approx(depths[0], rel=1e-3)      # independent of the mass


INCLINE = """
<mujoco>
  <option timestep="0.001" solver="{solver}" epsilon="0.01"/>
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
    mu = 0.5
    critical = np.degrees(np.arctan(mu))
    for deg in (critical - 7, critical - 2, critical + 4, critical + 9):
        m = engine.load_model_from_string(INCLINE.format(solver=solver, deg=deg, mu=mu))
        d = engine.make_data(m)
        engine.step(m, d, 100)
        start = d.qpos[:3].copy()
        times, speeds = [], []
        for _ in range(200):                       # 2 s
            engine.step(m, d, 10)
            times.append(d.time)
            speeds.append(np.linalg.norm(d.qvel[:3]))
        drift = np.linalg.norm(d.qpos[:3] - start)
        theta = np.radians(deg)
        if deg < critical:
            assert drift < 1e-3
        else:
            accel = np.polyfit(times, speeds, 1)[0]
            assert accel == pytest.approx(G * (np.sin(theta) - mu * np.cos(theta)), rel=0.05)


SPIN = """
<mujoco>
  <option timestep="0.002" solver="{solver}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" condim="{condim}" friction="1 {torsion} {rolling}"/>
    <body pos="0 0 0.1">
      <freejoint/>
      <geom type="sphere" size="0.1" mass="1" condim="{condim}" friction="1 {torsion} {rolling}"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
def test_spinning_ball_stops_under_torsional_friction(solver):
    """Spinning about the normal, the only resistance is torsional friction: torque mu_t m g,
    so omega falls linearly at mu_t m g / I (I = 2/5 m r^2) and stops at omega0 I / (mu_t m g)."""
    mu_t, w0, r = 0.02, 10.0, 0.1
    m = engine.load_model_from_string(SPIN.format(solver=solver, condim=4, torsion=mu_t,
                                                  rolling=0))
    d = engine.make_data(m)
    engine.step(m, d, 200)                  # settle on the floor
    d.qvel[5] = w0
    t0 = d.time
    times, spins = [], []
    while d.qvel[5] > 0.5 * w0:
        engine.step(m, d, 5)
        times.append(d.time - t0)
        spins.append(d.qvel[5])
    rate = -np.polyfit(times, spins, 1)[0]
    inertia = 0.4 * 1.0 * r * r
    assert rate == pytest.approx(mu_t * 1.0 * G / inertia, rel=0.05)
    engine.step(m, d, 1000)
    assert abs(d.qvel[5]) < 0.05 * w0


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
def test_rolling_ball_stops_under_rolling_friction(solver):
    """Rolling without slip against a torque mu_r m g: v falls at mu_r g / (r (1 + I/(m r^2)))."""
    mu_r, v0, r = 0.005, 1.0, 0.1
    m = engine.load_model_from_string(SPIN.format(solver=solver, condim=6, torsion=0.001,
                                                  rolling=mu_r))
    d = engine.make_data(m)
    engine.step(m, d, 200)
    d.qvel[0] = v0
    d.qvel[4] = v0 / r                      # rolling about +y moves the ball along +x
    t0 = d.time
    times, speeds = [], []
    while d.qvel[0] > 0.5 * v0:
        engine.step(m, d, 5)
        times.append(d.time - t0)
        speeds.append(d.qvel[0])
    decel = -np.polyfit(times, speeds, 1)[0]
    assert decel == pytest.approx(mu_r * G / (r * 1.4), rel=0.05)
    engine.step(m, d, 2000)
    assert abs(d.qvel[0]) < 0.05 * v0


STACK = """
<mujoco>
  <option timestep="0.01" iterations="5"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    {bodies}
  </worldbody>
</mujoco>
"""


def total_energy(m, d):
    return engine.energy(m, d).sum()


def test_stack_of_five_boxes_is_stable_at_10ms_with_5_iterations():
    bodies = "\n".join(f'<body pos="0 0 {0.1 + 0.2 * k + 0.001 * k}"><freejoint/>'
                       f'<geom type="box" size="0.1 0.1 0.1"/></body>' for k in range(5))
    m = engine.load_model_from_string(STACK.format(bodies=bodies))
    d = engine.make_data(m)
    engine.forward(m, d)
    e0 = total_energy(m, d)
    for _ in range(300):                    # 3 s
        engine.step(m, d)
        assert np.all(np.isfinite(d.qpos))
        # bounded: contact stabilisation (v*, eq. 24) may return a little of the energy that
        # settling into soft contacts stored, never more than 0.5% of the total
        assert total_energy(m, d) <= e0 + 0.005 * abs(e0)
    assert d.warning.sum() == 0
    # 5 sweeps leave the 20 contacts not quite converged: the stack sways a little, with a
    # kinetic energy below 0.5% of its potential energy
    assert engine.energy(m, d)[1] < 0.005 * abs(e0)
    # still a stack: every box above the one below, within a centimetre of the axis
    z = d.qpos[2::7]
    assert np.all(np.diff(z) > 0.19)
    assert np.abs(d.qpos[0::7]).max() < 0.05 and np.abs(d.qpos[1::7]).max() < 0.05


def test_humanoid_dropped_on_the_floor_is_stable_at_10ms_with_5_iterations():
    m = engine.load_model(str(SUITE / "humanoid.xml"))
    m.opt.timestep = 0.01
    m.opt.iterations = 5
    d = engine.make_data(m)
    d.qpos[2] = 1.5
    engine.forward(m, d)
    e0 = total_energy(m, d)
    for _ in range(600):                    # 6 s: it falls, tumbles and settles
        engine.step(m, d)
        assert np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))
        assert total_energy(m, d) <= e0 + 0.05 * abs(e0)
    assert d.warning.sum() == 0
    assert d.ncon > 0
    assert engine.energy(m, d)[1] < 0.01 * (e0 - engine.energy(m, d)[0])   # it came to rest


def test_interleave_integrator():
    """Without contacts it is RK4; resting on the floor it sinks as the other integrators do."""
    free = DROP.format(eps=0.05, kappa=0.02, solver="PGS", geom="sphere", size="0.1", mass=1)
    a = engine.load_model_from_string(free)
    b = engine.load_model_from_string(free)
    a.opt.integrator = engine.Integrator.INTERLEAVE
    b.opt.integrator = engine.Integrator.RK4
    da, db = engine.make_data(a), engine.make_data(b)
    for d in (da, db):
        d.qpos[2] = 1.0
        d.qvel[3:6] = [1.0, -2.0, 0.5]
    engine.step(a, da, 100)
    engine.step(b, db, 100)
    np.testing.assert_allclose(da.qpos, db.qpos, atol=1e-12)
    engine.reset_data(a, da)
    engine.step(a, da, 1500)
    assert da.ncon == 1
    assert 0.1 - da.qpos[2] == pytest.approx(0.02 ** 2 * 0.05 * G / 1.05, rel=0.1)


DISK = """
<mujoco>
  <option timestep="0.002" solver="{solver}" tolerance="1e-12" iterations="100" cone="elliptic"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" euler="{euler}" condim="4" friction="1e-4 {torsion} 0"/>
    <body euler="{euler}">
      <freejoint/>
      <geom type="cylinder" size="0.1 0.01" mass="1" condim="4" friction="1e-4 {torsion} 0"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
@pytest.mark.parametrize("euler", ["0 0 0", "33 12 -7", "-50 10 80", "70 -20 15", "-25 -35 5"])
def test_spinning_disk_stops_under_torsional_friction(solver, euler):
    """A disk lying flat on a plane (gravity along the plane's normal, the plane in several
    orientations) and spinning about its axis stops under torsional friction: each of the three
    rim contacts resists with mu_t f_n, together mu_t m g, so omega falls linearly at
    mu_t m g / I with I = m r^2 / 2. It stays on the plane: 3 contacts at every step, no
    sideways drift, and a normal speed below 1 mm/s.

    Sliding friction is nearly zero: at a rim contact sliding friction resists the spin as well
    (torque mu r f_n: with mu = 1, a hundred times the torsional one here). The spin is slow because
    the convex model lifts a slipping contact (its cone's dual asks v_n >= mu_t |omega|, eq. 11):
    at mu_t omega = 1 mm/s the disk rises by less than 1 mm/s, at a few cm/s it leaves the plane,
    as in MuJoCo."""
    mu_t, w0, r = 1e-3, 1.0, 0.1
    m = engine.load_model_from_string(DISK.format(solver=solver, euler=euler, torsion=mu_t))
    d = engine.make_data(m)
    engine.forward(m, d)
    normal = d.geom_xmat[0].reshape(3, 3)[:, 2]
    m.opt.gravity[:] = -G * normal
    d.qpos[:3] = 0.0101 * normal
    engine.step(m, d, 200)                  # settle on the plane
    assert d.ncon == 3
    d.qvel[3:6] = [0.0, 0.0, w0]            # the free joint's angular velocity is in the body frame
    start = d.qpos[:3].copy()
    times, spins, normal_speeds, ncons = [], [], [], []
    while d.qvel[5] > 0.1 * w0:
        engine.step(m, d)
        times.append(d.time)
        spins.append(d.qvel[5])
        normal_speeds.append(d.qvel[:3] @ normal)
        ncons.append(d.ncon)
    rate = -np.polyfit(times, spins, 1)[0]
    assert rate == pytest.approx(mu_t * G / (0.5 * r * r), rel=0.05)
    engine.step(m, d, 100)
    assert abs(d.qvel[5]) < 1e-3 * w0       # stopped, and not turning back
    assert set(ncons) == {3}
    assert np.abs(normal_speeds).max() < 1e-3
    shift = d.qpos[:3] - start
    assert np.linalg.norm(shift - (shift @ normal) * normal) < 1e-6


PLANE_CYLINDER = """
<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" pos="0.2 -0.1 0.3" quat="{quat}"/>
    <body><freejoint/><geom type="cylinder" size="0.1 0.01"/></body>
  </worldbody>
</mujoco>
"""


def _quat(axis, angle):
    q = np.zeros(4)
    mujoco.mju_axisAngle2Quat(q, np.asarray(axis, float) / np.linalg.norm(axis), angle)
    return q


def _mulquat(a, b):
    q = np.zeros(4)
    mujoco.mju_mulQuat(q, a, b)
    return q


def _disk_on_plane(rng, plane_quat, plane_pos, tilt, depth):
    """qpos of the cylinder tilted by `tilt` from lying flat on the plane (upside down half of
    the time), spun about its axis, moved along the plane, its deepest point `depth` below it."""
    spin = _quat([0, 0, 1], rng.uniform(0, 2 * np.pi))
    flip = _quat([1, 0, 0], np.pi * rng.integers(2))
    q = _mulquat(plane_quat, _mulquat(_quat([*rng.normal(size=2), 0], tilt), _mulquat(spin, flip)))
    frame = np.zeros(9)
    mujoco.mju_quat2Mat(frame, plane_quat)
    frame = frame.reshape(3, 3)
    centre = 0.01 * abs(np.cos(tilt)) + 0.1 * np.sin(tilt) - depth
    return np.r_[plane_pos + frame @ [*rng.uniform(-1, 1, 2), centre], q]


def _contacts(m, d, qpos):
    d.qpos[:] = qpos
    d.contact_dist[:] = np.nan
    d.contact_pos[:] = np.nan
    d.contact_frame[:] = np.nan
    engine.forward(m, d)
    n = d.ncon
    return d.contact_dist[:n].copy(), d.contact_pos[:n].copy(), d.contact_frame[:n].copy()


@pytest.mark.parametrize("plane", ["1 0 0 0", "0.8 0.3 -0.4 0.33", "0.2 -0.9 0.1 0.37"])
def test_plane_cylinder_nearly_flat_matches_mujoco_and_geometry(plane):
    """Plane-cylinder contacts of a disk lying flat or nearly flat on a plane (tilt 0, or 1e-16
    to 0.3 rad) and of tilted ones (up to 90 degrees). Where MuJoCo's rim direction is accurate
    (tilt >= 1e-4: it forms axis * prjaxis - normal, whose rounding error along the axis is
    ~1e-16 / tilt of the radius) its contacts are the oracle, in order: distance, point, frame.
    Below that the oracle is the geometry: each point is on the rim of the face towards the
    plane, its distance is that rim point's height above the plane, the deepest is `depth` below
    it, and the three points form MuJoCo's equilateral triangle (sides r sqrt(3))."""
    xml = PLANE_CYLINDER.format(quat=plane)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    plane_quat = np.array([float(x) for x in plane.split()])
    plane_quat /= np.linalg.norm(plane_quat)
    plane_pos = np.array([0.2, -0.1, 0.3])
    rng = np.random.default_rng(zlib.crc32(plane.encode()))
    r, h = 0.1, 0.01
    nmujoco = ngeometry = 0
    for trial in range(400):
        if trial < 300:
            tilt = 10.0 ** rng.uniform(-16, np.log10(0.3)) if trial % 20 else 0.0
        else:
            tilt = rng.uniform(0.3, 1.57)
        depth = rng.uniform(1e-4, 0.005)
        qpos = _disk_on_plane(rng, plane_quat, plane_pos, tilt, depth)
        dist, pos, frame = _contacts(m, d, qpos)
        msg = f"trial {trial}: tilt {tilt:.1e}"
        # the deepest rim point, the opposite one on the far face, the triangle on the near face
        count = 1 + (2 * h * np.cos(tilt) <= depth) + 2 * (1.5 * r * np.sin(tilt) <= depth)
        assert len(dist) == count, msg
        assert dist.min() == pytest.approx(-depth, abs=1e-12), msg
        normal = d.geom_xmat[0].reshape(3, 3)[:, 2]
        np.testing.assert_allclose(frame[:, :3], np.tile(normal, (len(dist), 1)), atol=1e-15)
        if tilt >= 1e-4:
            dd.qpos[:] = qpos
            mujoco.mj_forward(mm, dd)
            assert dd.ncon == len(dist), msg
            np.testing.assert_allclose(dist, dd.contact.dist[:dd.ncon], atol=1e-12, err_msg=msg)
            np.testing.assert_allclose(pos, dd.contact.pos[:dd.ncon], atol=1e-12, err_msg=msg)
            np.testing.assert_allclose(frame, dd.contact.frame[:dd.ncon], atol=1e-12, err_msg=msg)
            nmujoco += 1
        else:
            axis = d.geom_xmat[1].reshape(3, 3)[:, 2]
            axis = axis if axis @ normal < 0 else -axis          # towards the plane
            near = []
            for k in range(len(dist)):
                point = pos[k] + 0.5 * dist[k] * normal           # on the cylinder
                arm = point - d.geom_xpos[1]
                along = arm @ axis
                assert abs(np.linalg.norm(arm - along * axis) - r) < 1e-12, msg
                assert abs(abs(along) - h) < 1e-12, msg
                assert abs((point - d.geom_xpos[0]) @ normal - dist[k]) < 1e-12, msg
                if along > 0:
                    near.append(point)
            assert len(near) == 3, msg
            sides = [np.linalg.norm(near[i] - near[j]) for i, j in ((0, 1), (1, 2), (0, 2))]
            np.testing.assert_allclose(sides, r * np.sqrt(3), atol=1e-12, err_msg=msg)
            ngeometry += 1
    assert nmujoco > 80 and ngeometry > 150

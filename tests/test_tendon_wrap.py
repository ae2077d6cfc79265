"""Spatial tendons wrapping spheres and cylinders (tests/data/tendon_wrap.xml) against MuJoCo,
field by field at random states, through both model sources; against the closed form of a wrap
around a sphere; the tendon Jacobian against finite differences of the length; and the forces
that follow (passive, actuator, limits) through the inverse dynamics."""
import math
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from engine import DisableBit, wrap
from mj_adapter import model_from_mujoco
from test_smooth_oracle import assert_close, random_state, set_state

DATA = pathlib.Path(__file__).parent / "data"
MODEL = str(DATA / "tendon_wrap.xml")


def dense_rows(values, rownnz, rowadr, colind, nrow, ncol):
    """A dense matrix from MuJoCo's compressed rows (ten_J, actuator_moment)."""
    out = np.zeros((nrow, ncol))
    for i in range(nrow):
        for k in range(rowadr[i], rowadr[i] + rownnz[i]):
            out[i, colind[k]] = values[k]
    return out


def load(source):
    mm = mujoco.MjModel.from_xml_path(MODEL)
    mm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    m = engine.load_model(MODEL) if source == "ours" else model_from_mujoco(mm)
    m.opt.disableflags = m.opt.disableflags | DisableBit.CONSTRAINT
    return mm, m


@pytest.mark.parametrize("source", ["ours", "mujoco"])
def test_against_mujoco(source):
    mm, m = load(source)
    md, d = mujoco.MjData(mm), engine.make_data(m)
    rng = np.random.default_rng(3)
    wraps = {}          # (geom, side site inside?) -> number of wraps seen
    fields = ("ten_length", "ten_J", "ten_velocity", "ten_wrapadr", "ten_wrapnum", "wrap_obj",
              "wrap_xpos", "actuator_length", "actuator_moment", "qfrc_passive",
              "qfrc_actuator")
    for _ in range(20):
        state = random_state(mm, rng)
        set_state(md, state)
        set_state(d, state)
        mujoco.mj_forward(mm, md)
        for name in fields:
            getattr(d, name)[...] = -7 if getattr(d, name).dtype.kind == "i" else np.nan
        engine.forward(m, d)
        total = int(md.ten_wrapadr[-1] + md.ten_wrapnum[-1])
        ref = {"ten_J": dense_rows(md.ten_J, mm.ten_J_rownnz, mm.ten_J_rowadr,
                                   mm.ten_J_colind, mm.ntendon, mm.nv),
               "actuator_moment": dense_rows(md.actuator_moment, md.moment_rownnz,
                                             md.moment_rowadr, md.moment_colind, mm.nu, mm.nv),
               "wrap_obj": md.wrap_obj.reshape(-1)[:total],
               "wrap_xpos": md.wrap_xpos.reshape(-1, 3)[:total]}
        for name in fields:
            ours = getattr(d, name)
            if name in ("wrap_obj", "wrap_xpos"):
                ours = ours[:total]
            theirs = ref.get(name, getattr(md, name))
            if ours.dtype.kind == "i":
                np.testing.assert_array_equal(ours, np.asarray(theirs).reshape(ours.shape),
                                              err_msg=name)
            else:
                assert_close(name, ours, theirs)
        for t in range(mm.ntendon):
            adr = mm.tendon_adr[t]
            for w in range(adr, adr + mm.tendon_num[t]):
                if int(mm.wrap_type[w]) in (int(mujoco.mjtWrap.mjWRAP_SPHERE),
                                            int(mujoco.mjtWrap.mjWRAP_CYLINDER)):
                    g = mm.wrap_objid[w]
                    path = d.wrap_obj[d.ten_wrapadr[t]:d.ten_wrapadr[t] + d.ten_wrapnum[t]]
                    side = int(mm.wrap_prm[w])
                    inside = side >= 0 and "in" in mujoco.mj_id2name(
                        mm, mujoco.mjtObj.mjOBJ_SITE, side)
                    if g in path:
                        key = (int(mm.geom_type[g]), inside)
                        wraps[key] = wraps.get(key, 0) + 1
    # every kind of wrap was exercised: sphere and cylinder, outside and inside
    for key in ((2, False), (5, False), (2, True), (5, True)):
        assert wraps.get(key, 0) >= 3, wraps


def test_sphere_wrap_closed_form():
    """Two points in a plane through the centre of a sphere of radius r, the segment between
    them crossing it: the path is two tangent lines and the arc between the tangent points,
    sqrt(|p0|^2 - r^2) + sqrt(|p1|^2 - r^2) + r (angle(p0, p1) - acos(r/|p0|) - acos(r/|p1|))."""
    r = 0.3
    for a0, a1, l0, l1 in ((0.0, 2.5, 1.0, 0.7), (0.3, -2.9, 0.5, 2.0), (1.0, 3.8, 0.9, 0.9)):
        p0 = np.array([l0 * math.cos(a0), l0 * math.sin(a0), 0.0])
        p1 = np.array([l1 * math.cos(a1), l1 * math.sin(a1), 0.0])
        angle = math.acos(p0 @ p1 / (l0 * l1))
        expected_arc = r * (angle - math.acos(r / l0) - math.acos(r / l1))
        rot = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])   # plane x-y -> y-z
        centre = np.array([0.1, -0.2, 0.3])
        wlen, t0, t1 = wrap.wrap(tuple(rot @ p0 + centre), tuple(rot @ p1 + centre),
                                 tuple(centre), tuple(rot.ravel()), r, wrap.SPHERE, False,
                                 (0.0, 0.0, 0.0))
        assert wlen == pytest.approx(expected_arc, rel=1e-12)
        t0, t1 = np.array(t0) - centre, np.array(t1) - centre
        assert np.linalg.norm(t0) == pytest.approx(r, rel=1e-12)
        assert np.linalg.norm(t1) == pytest.approx(r, rel=1e-12)
        # tangency: the line from each end touches the sphere at right angles to the radius
        assert abs(t0 @ (t0 - rot @ p0)) < 1e-12 and abs(t1 @ (t1 - rot @ p1)) < 1e-12
        # a side point on the far side makes the path go round the other way
        far = -(t0 + t1)
        wlen2, _, _ = wrap.wrap(tuple(rot @ p0 + centre), tuple(rot @ p1 + centre),
                                tuple(centre), tuple(rot.ravel()), r, wrap.SPHERE, True,
                                tuple(centre + 2 * far))
        assert wlen2 == pytest.approx(r * (2 * math.pi - angle - math.acos(r / l0)
                                           - math.acos(r / l1)), rel=1e-12)


def test_jacobian_against_finite_differences():
    """d ten_length / dt = ten_J qvel, by central differences along the velocity (ball and free
    joints integrated on their manifolds)."""
    m = engine.load_model(MODEL)
    mm = mujoco.MjModel.from_xml_path(MODEL)
    d = engine.make_data(m)
    rng = np.random.default_rng(7)
    for _ in range(5):
        state = random_state(mm, rng)
        set_state(d, state)
        engine.forward(m, d)
        J, qpos, v = d.ten_J.copy(), d.qpos.copy(), d.qvel.copy()
        lengths = []
        for h in (1e-6, -1e-6):
            q = qpos.copy()
            mujoco.mj_integratePos(mm, q, v, h)
            d.qpos[:] = q
            engine.forward(m, d)
            lengths.append(d.ten_length.copy())
        rate = (lengths[0] - lengths[1]) / 2e-6
        np.testing.assert_allclose(rate, J @ v, rtol=1e-6, atol=1e-7)


def test_inverse_dynamics_with_wrapped_tendons():
    """A step with wrapped tendons (springs, dampers, a limit, actuators on them), solved by
    Newton: the inverse dynamics gives back the applied and actuator forces of the step."""
    m = engine.load_model(MODEL)
    m.opt.solver = engine.Solver.NEWTON
    m.opt.tolerance = 1e-14
    m.opt.iterations = 100
    mm = mujoco.MjModel.from_xml_path(MODEL)
    d = engine.make_data(m)
    rng = np.random.default_rng(11)
    limit_rows = 0
    for _ in range(5):
        set_state(d, random_state(mm, rng))
        d.qfrc_applied[:] = rng.standard_normal(m.nv)
        qpos, qvel, act = d.qpos.copy(), d.qvel.copy(), d.act.copy()
        engine.forward(m, d)
        nefc = int(np.ravel(d.nefc)[0])
        limit_rows += int(np.sum(d.efc_type[:nefc] == engine.enums.ConstraintType.LIMIT_TENDON))
        applied = d.qfrc_applied + d.qfrc_actuator
        engine.step(m, d)
        qacc = (d.qvel - qvel) / m.opt.timestep
        d.qpos[:], d.qvel[:], d.act[:], d.qacc[:] = qpos, qvel, act, qacc
        engine.inverse(m, d)
        assert_close("qfrc_inverse", d.qfrc_inverse, applied, tol=1e-8)
    assert limit_rows > 0


def test_random_wraps_against_mujoco():
    """Many single wraps in general position (sphere or cylinder, no side site, a side site
    outside in any direction, a side site inside), each a tendon of one model: lengths, paths
    and the choice of wrapping or not as MuJoCo's."""
    rng = np.random.default_rng(5)
    geoms, sites, tendons = [], [], []
    for i in range(120):
        kind = ("sphere", "cylinder")[i % 2]
        r = rng.uniform(0.05, 0.3)
        pos = rng.uniform(-1, 1, 3)
        quat = rng.standard_normal(4)
        quat /= np.linalg.norm(quat)
        size = f"{r} 0.5" if kind == "cylinder" else f"{r}"
        geoms.append(f'<geom name="g{i}" type="{kind}" size="{size}" pos="{pos[0]} {pos[1]} '
                     f'{pos[2]}" quat="{quat[0]} {quat[1]} {quat[2]} {quat[3]}"/>')
        for k in range(2):
            direction = rng.standard_normal(3)
            p = pos + direction / np.linalg.norm(direction) * rng.uniform(1.2 * r, 4 * r)
            sites.append(f'<site name="s{i}_{k}" pos="{p[0]} {p[1]} {p[2]}"/>')
        side = ""
        if i % 3:
            direction = rng.standard_normal(3)
            scale = rng.uniform(1.5 * r, 3 * r) if i % 3 == 1 else rng.uniform(0, 0.8 * r)
            p = pos + direction / np.linalg.norm(direction) * scale
            sites.append(f'<site name="side{i}" pos="{p[0]} {p[1]} {p[2]}"/>')
            side = f'sidesite="side{i}"'
        tendons.append(f'<spatial><site site="s{i}_0"/><geom geom="g{i}" {side}/>'
                       f'<site site="s{i}_1"/></spatial>')
    xml = ("<mujoco><worldbody>" + "".join(geoms + sites) + "</worldbody><tendon>"
           + "".join(tendons) + "</tendon></mujoco>")
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    mujoco.mj_forward(mm, md)
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    engine.forward(m, d)
    total = int(md.ten_wrapadr[-1] + md.ten_wrapnum[-1])
    np.testing.assert_array_equal(d.ten_wrapnum, md.ten_wrapnum)
    np.testing.assert_array_equal(d.wrap_obj[:total], md.wrap_obj.reshape(-1)[:total])
    assert_close("ten_length", d.ten_length, md.ten_length, tol=1e-12)
    assert_close("wrap_xpos", d.wrap_xpos[:total], md.wrap_xpos.reshape(-1, 3)[:total],
                 tol=1e-12)
    assert 30 < np.sum(md.ten_wrapnum == 4) < 110      # both outcomes are well represented

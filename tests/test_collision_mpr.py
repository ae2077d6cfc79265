"""Convex pairs of a model with ``<flag nativeccd="disable"/>``: MPR, MuJoCo's fixed normals and
its multiccd contacts (engine.collision_mpr), against MuJoCo's own (libccd) on the same poses.

Both sides run the same algorithm on the same support points, so the contacts agree to the
rounding of the portal's arithmetic: tolerances 1e-9. With a mesh, MuJoCo's vertices are in
single precision and the engine's in double (5e-9 apart here): depths and points to 1e-7, and
normals to 2e-6 (the last portal, converged to ccd_tolerance 1e-6, may differ). Looser where
a support direction is perpendicular to a mesh face (several vertices tie as the support
point: the engine's hill climb may return another of them than MuJoCo's, which moves the
portal's path; the depth is still the same to ccd_tolerance, but the point found may move
along the face)."""
import importlib.util
import logging
import pathlib

import mujoco
import numpy as np
import pytest

import engine
from test_collision import pair_xml, random_qpos, run_mj, run_ours, SIZES

FLAG = '<option gravity="0 0 0"><flag nativeccd="disable"/></option>'
PAIRS = [("sphere", "cylinder"), ("capsule", "cylinder"), ("capsule", "ellipsoid"),
         ("ellipsoid", "box"), ("cylinder", "box"), ("cylinder", "cylinder"),
         ("sphere", "mesh"), ("capsule", "mesh"), ("box", "mesh"), ("cylinder", "mesh"),
         ("mesh", "mesh")]


def _pairs_of(ours, theirs):
    """MuJoCo's contacts each with the engine's nearest of the same geom pair."""
    assert len(ours) == len(theirs)
    out = []
    used = set()
    for c in theirs:
        k = min((k for k, o in enumerate(ours) if k not in used and o["geom"] == c["geom"]),
                key=lambda k: np.linalg.norm(ours[k]["pos"] - c["pos"]))
        used.add(k)
        out.append((ours[k], c))
    return out


@pytest.mark.parametrize("pair", PAIRS)
def test_mpr_contacts_are_mujocos(pair):
    """120 random poses of each pair (margin 0.01): the same number of contacts as MuJoCo
    (multiccd's included), each with MuJoCo's depth, normal and point to 1e-9 (with a mesh:
    see above); at least a third of the poses in contact."""
    t1, t2 = pair
    xml = pair_xml(t1, t2, 0.01).replace('<option gravity="0 0 0"/>', FLAG)
    m = engine.load_model_from_string(xml)
    assert m.opt.disableflags & engine.DisableBit.NATIVECCD
    d = engine.make_data(m)
    mm = mujoco.MjModel.from_xml_string(xml)
    dd = mujoco.MjData(mm)
    rng = np.random.default_rng(sum(map(ord, t1 + t2)))
    scale = sum(float(SIZES[t].split()[0]) for t in pair) * 1.6
    tol, tol_normal = (1e-7, 2e-6) if "mesh" in pair else (1e-9, 1e-9)
    touching = 0
    for trial in range(120):
        q = random_qpos(rng, t1, m.nq, scale)
        theirs = run_mj(mm, dd, q)
        ours = run_ours(m, d, q)
        msg = f"{pair} trial {trial}"
        assert len(ours) == len(theirs), f"{msg}: {len(ours)} contacts, MuJoCo {len(theirs)}"
        touching += bool(theirs)
        for o, c in _pairs_of(ours, theirs):
            assert abs(o["dist"] - c["dist"]) < tol, f"{msg}: dist {o['dist']} {c['dist']}"
            assert np.linalg.norm(o["frame"][:3] - c["frame"][:3]) < tol_normal, msg
            assert np.linalg.norm(o["pos"] - c["pos"]) < tol, msg
    assert touching > 40


def _jaco():
    spec = importlib.util.find_spec("dm_control")
    if spec is None:
        pytest.skip("dm_control is not installed")
    return str(pathlib.Path(spec.origin).parent / "third_party/kinova/jaco_arm.xml")


def test_jaco_arm_starts_in_mujocos_contacts():
    """dm_control's Kinova Jaco arm (its common.xml disables nativeccd) starts with its links
    overlapping by up to 15 cm: the same 39 contacts as MuJoCo, each pair's depth to
    ccd_tolerance (1e-6; MPR stops there), its points within 2 mm and its normals within 2e-3
    (faces of the 500-vertex hulls perpendicular to a support direction; see above). The
    engine's own GJK/EPA finds 26, the least overlaps, along other normals."""
    path = _jaco()
    m = engine.load_model(path)
    d = engine.make_data(m)
    engine.forward(m, d)
    mm = mujoco.MjModel.from_xml_path(path)
    dd = mujoco.MjData(mm)
    mujoco.mj_forward(mm, dd)
    assert dd.ncon == 39
    ours = run_ours(m, d, mm.qpos0)
    theirs = run_mj(mm, dd, mm.qpos0)
    assert sorted(o["geom"] for o in ours) == sorted(c["geom"] for c in theirs)
    for o, c in _pairs_of(ours, theirs):
        assert abs(o["dist"] - c["dist"]) < 1e-6
        assert np.linalg.norm(o["pos"] - c["pos"]) < 2e-3
        assert np.linalg.norm(o["frame"][:3] - c["frame"][:3]) < 2e-3
    m.opt.disableflags = m.opt.disableflags & ~engine.DisableBit.NATIVECCD
    assert len(run_ours(m, d, mm.qpos0)) == 26


CUBE = " ".join(f"{x} {y} {z}" for x in (-.1, .1) for y in (-.1, .1) for z in (-.1, .1))
STACK = ('<mujoco><option gravity="0 0 0">{flags}</option><asset><mesh name="cube" '
         f'vertex="{CUBE}"/></asset><worldbody><geom type="box" size=".2 .2 .1"/>'
         '<body pos=".03 .02 .19"><freejoint/><geom type="mesh" mesh="cube"/></body>'
         '</worldbody></mujoco>')


def test_multiccd_disabled_keeps_one_contact_per_pair():
    """A mesh cube resting 1 cm deep on a box: with multiccd disabled too, one contact, as
    MuJoCo's; with multiccd alone disabled, the engine's flat-face contacts go as well (MuJoCo
    gives one); with neither, the four corners of the face."""
    for flags in ('<flag nativeccd="disable" multiccd="disable"/>', '<flag multiccd="disable"/>'):
        xml = STACK.format(flags=flags)
        m = engine.load_model_from_string(xml)
        mm = mujoco.MjModel.from_xml_string(xml)
        ours = run_ours(m, engine.make_data(m), mm.qpos0)
        theirs = run_mj(mm, mujoco.MjData(mm), mm.qpos0)
        assert len(ours) == len(theirs) == 1, flags
        assert abs(ours[0]["dist"] - theirs[0]["dist"]) < 1e-8     # single-precision vertices
    m.opt.disableflags = 0
    assert len(run_ours(m, engine.make_data(m), mm.qpos0)) == 4


def test_ccd_options_follow_the_file_and_round_trip(tmp_path):
    """ccd_iterations and ccd_tolerance are options of the model (MuJoCo 4's defaults 35 and
    1e-6) and are saved with the flags."""
    m = engine.load_model_from_string('<mujoco><option ccd_iterations="7" ccd_tolerance="1e-4">'
                                      '<flag nativeccd="disable"/></option><worldbody/></mujoco>')
    assert (m.opt.ccd_iterations, m.opt.ccd_tolerance) == (7, 1e-4)
    assert engine.load_model_from_string("<mujoco/>").opt.ccd_iterations == \
        mujoco.MjModel.from_xml_string("<mujoco/>").opt.ccd_iterations
    path = tmp_path / "saved.xml"
    engine.save_model_xml(m, str(path))
    m2 = engine.load_model(str(path))
    assert (m2.opt.ccd_iterations, m2.opt.ccd_tolerance) == (7, 1e-4)
    assert m2.opt.disableflags & engine.DisableBit.NATIVECCD
    with pytest.raises(ValueError):
        m.opt.ccd_iterations = -1


def test_height_fields_with_nativeccd_disabled_are_reported(caplog):
    """Height-field contacts keep the engine's GJK/EPA: a file that disables nativeccd and has
    a height field is told so."""
    xml = ('<mujoco><option><flag nativeccd="disable"/></option><asset>'
           '<hfield name="h" nrow="2" ncol="2" size="1 1 .1 .1"/></asset><worldbody>'
           '<geom type="hfield" hfield="h"/><body pos="0 0 .3"><freejoint/><geom size=".1"/>'
           '</body></worldbody></mujoco>')
    with caplog.at_level(logging.WARNING, logger="engine.compiler"):
        engine.load_model_from_string(xml)
    assert any("height-field contacts" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="engine.compiler"):
        engine.load_model_from_string(xml.replace('<flag nativeccd="disable"/>', ""))
    assert not any("height-field" in r.getMessage() for r in caplog.records)

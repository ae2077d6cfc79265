"""Size and depth: deep kinematic chains (MJCF and URDF) and thousands of bodies load, and
their derived quantities match MuJoCo's (tests/scaled_models.py makes the models). Nothing
here is timed: benchmarks/scaling.py measures the speed."""
import logging

import mujoco
import numpy as np
import pytest

import engine
import scaled_models

DEEP = 3000          # beyond MuJoCo's own limits (XML nesting ~500, body depth 1023)
MUJOCO_DEPTH = 450   # the deepest MJCF chain MuJoCo's XML reader accepts, with margin


def random_state(m, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.3, 0.3, m.nq), rng.uniform(-1, 1, m.nv)


def our_bias(m, qpos, qvel):
    d = engine.make_data(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    d.qfrc_bias[:] = np.nan
    engine.forward(m, d)
    return d


@pytest.fixture(scope="module")
def deep_chains(tmp_path_factory):
    path = tmp_path_factory.mktemp("chain") / "chain.urdf"
    path.write_text(scaled_models.urdf_chain(DEEP))
    logging.disable(logging.WARNING)
    try:
        return engine.load_model_from_string(scaled_models.chain(DEEP)), engine.load_model(path)
    finally:
        logging.disable(logging.NOTSET)


def test_deep_chain_structure(deep_chains):
    for m in deep_chains:
        assert (m.nbody, m.njnt, m.nv) == (DEEP + 1, DEEP, DEEP)
        np.testing.assert_array_equal(m.body_parentid, np.arange(-1, DEEP).clip(0))
        np.testing.assert_array_equal(m.dof_parentid, np.arange(-1, DEEP - 1))
        np.testing.assert_array_equal(m.body_rootid[1:], 1)
        assert np.isfinite(m.body_invweight0).all() and (m.dof_invweight0 > 0).all()


def test_deep_chain_mjcf_and_urdf_agree(deep_chains):
    """The two readers give one model: same constants and same smooth dynamics (the URDF's
    inertia is a full matrix, put on its principal axes: body_inertia and body_iquat differ)."""
    mjcf, urdf = deep_chains
    for f in ("body_mass", "body_ipos", "body_pos", "jnt_axis", "dof_M0"):
        np.testing.assert_allclose(getattr(urdf, f), getattr(mjcf, f), rtol=1e-9, atol=1e-12,
                                   err_msg=f)
    # M^-1 of a 3000-link chain is ill-conditioned: rounding differences of 1e-16 in the
    # inertia's principal axes come out near 1e-6 in the inverse weights
    for f in ("body_invweight0", "dof_invweight0"):
        np.testing.assert_allclose(getattr(urdf, f), getattr(mjcf, f), rtol=1e-5, err_msg=f)
    qpos, qvel = random_state(mjcf, 0)
    np.testing.assert_allclose(our_bias(urdf, qpos, qvel).qfrc_bias,
                               our_bias(mjcf, qpos, qvel).qfrc_bias, rtol=1e-9, atol=1e-9)


def test_deep_chain_gravity_bias(deep_chains):
    """At rest, qfrc_bias of hinge k is the gravity torque of the subtree it carries,
    -axis . ((com - anchor) x M g), summed here from the body positions (independent of the
    engine's recursive dynamics)."""
    m = deep_chains[0]
    qpos, _ = random_state(m, 1)
    d = our_bias(m, qpos, np.zeros(m.nv))
    mass = m.body_mass[1:]
    weighted = np.cumsum((mass[:, None] * d.xipos[1:])[::-1], axis=0)[::-1]
    subtree_mass = np.cumsum(mass[::-1])[::-1]
    com = weighted / subtree_mass[:, None]
    force = subtree_mass[:, None] * m.opt.gravity
    expected = -np.einsum("ij,ij->i", d.xaxis, np.cross(com - d.xanchor, force))
    np.testing.assert_allclose(d.qfrc_bias, expected, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("fmt", ["mjcf", "urdf"])
def test_chain_matches_mujoco(fmt, tmp_path):
    """The deepest chain MuJoCo reads, field by field and in its smooth dynamics."""
    if fmt == "mjcf":
        xml = scaled_models.chain(MUJOCO_DEPTH)
        ours, theirs = engine.load_model_from_string(xml), mujoco.MjModel.from_xml_string(xml)
    else:
        path = tmp_path / "chain.urdf"
        path.write_text(scaled_models.urdf_chain(MUJOCO_DEPTH))
        ours, theirs = engine.load_model(path), mujoco.MjModel.from_xml_path(str(path))
    assert (ours.nbody, ours.nv) == (theirs.nbody, theirs.nv)
    np.testing.assert_array_equal(ours.body_parentid, theirs.body_parentid)
    np.testing.assert_array_equal(ours.dof_parentid, theirs.dof_parentid)
    for f in ("dof_M0", "body_invweight0", "dof_invweight0"):
        # rtol: the chain's M is ill-conditioned; MuJoCo's route (solves with its factor) and
        # ours (articulated inertias) round differently
        np.testing.assert_allclose(getattr(ours, f), getattr(theirs, f), rtol=1e-6, err_msg=f)
    qpos, qvel = random_state(ours, 2)
    md = mujoco.MjData(theirs)
    md.qpos[:], md.qvel[:] = qpos, qvel
    mujoco.mj_forward(theirs, md)
    np.testing.assert_allclose(our_bias(ours, qpos, qvel).qfrc_bias, md.qfrc_bias,
                               rtol=1e-8, atol=1e-8)


SINGULAR = {
    "two identical hinges": '<body><joint axis="0 1 0"/><joint axis="0 1 0"/>'
                            '<geom size=".1" pos=".2 0 0"/></body>',
    "slide and hinge": '<body><joint type="slide" axis="1 0 0"/><joint axis="0 0 1"/>'
                       '<geom type="box" size=".1 .2 .3"/><body pos="0 .3 0">'
                       '<joint type="ball"/><geom size=".1" pos="0 .1 0"/></body></body>',
    "armature and weld": '<body><joint axis="1 0 0" armature="0.5"/><geom size=".1"/>'
                         '<body pos="0 0 .3"><geom size=".05"/><body pos="0 0 .2">'
                         '<joint type="ball"/><geom type="capsule" size=".05 .1"/></body></body>'
                         '</body>',
}


@pytest.mark.parametrize("name", list(SINGULAR))
def test_invweight_matches_mujoco(name):
    """Mean inverse inertias (articulated-inertia recursion; MuJoCo's solve when a joint
    subspace is singular) and the actuator and tendon constants built on M^-1."""
    xml = (f'<mujoco><worldbody>{SINGULAR[name]}</worldbody><actuator>'
           '<motor joint="j0"/></actuator></mujoco>').replace("<joint ", '<joint name="j0" ', 1)
    logging.disable(logging.WARNING)
    try:
        ours = engine.load_model_from_string(xml)
    finally:
        logging.disable(logging.NOTSET)
    theirs = mujoco.MjModel.from_xml_string(xml)
    for f in ("dof_M0", "body_invweight0", "dof_invweight0", "actuator_acc0"):
        np.testing.assert_allclose(getattr(ours, f), getattr(theirs, f), rtol=1e-9,
                                   atol=1e-12, err_msg=f)


def test_thousands_of_free_bodies_load():
    """2000 free spheres: the counts, addresses and mass constants MuJoCo gives (a smoke test
    of the loader's scaling: this took minutes when set_const worked on dense nv x nv
    matrices)."""
    xml = scaled_models.spheres(2000)
    ours, theirs = engine.load_model_from_string(xml), mujoco.MjModel.from_xml_string(xml)
    for f in ("nbody", "njnt", "ngeom", "nq", "nv"):
        assert getattr(ours, f) == getattr(theirs, f), f
    for f in ("body_parentid", "body_rootid", "jnt_qposadr", "jnt_dofadr", "dof_bodyid",
              "geom_bodyid"):
        np.testing.assert_array_equal(getattr(ours, f), getattr(theirs, f), err_msg=f)
    tree = theirs.body_treeid[1:]
    np.testing.assert_array_equal(ours.body_treedofadr[1:], theirs.tree_dofadr[tree])
    np.testing.assert_array_equal(ours.body_treedofnum[1:], theirs.tree_dofnum[tree])
    for f in ("body_mass", "body_invweight0", "dof_invweight0", "dof_M0", "qpos0"):
        np.testing.assert_allclose(getattr(ours, f), getattr(theirs, f), rtol=1e-9, err_msg=f)


def test_deeply_nested_default_classes_load_and_save(tmp_path):
    """Default classes nested deeper than Python's recursion limit: read, copied and written
    without recursion (MuJoCo's XML reader refuses this depth; our reader has no such limit).
    The deepest class's geom size reaches the geom, and survives a save and reload."""
    n = 1500
    xml = ("<mujoco><default>"
           + "".join(f'<default class="c{i}"><geom size="{0.1 + i * 1e-5:.5f}"/>'
                     for i in range(n))
           + "</default>" * n
           + f'</default><worldbody><body><freejoint/><geom class="c{n - 1}"/></body>'
           "</worldbody></mujoco>")
    m = engine.load_model_from_string(xml)
    assert m.geom_size[0, 0] == pytest.approx(0.1 + (n - 1) * 1e-5, abs=1e-12)
    path = tmp_path / "nested.xml"
    engine.save_model_xml(m, str(path))
    assert engine.load_model(str(path)).geom_size[0, 0] == m.geom_size[0, 0]

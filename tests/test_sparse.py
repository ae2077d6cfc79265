"""Sparse constraint rows (m.opt.jacobian): the option as MuJoCo's, the sparse layout giving the
dense layout's numbers (every solver and cone), its rows matching MuJoCo's sparse efc_J, a Data
whose size follows the bodies and their contacts, and the refusal of a Data that cannot fit."""
import os

import mujoco
import numpy as np
import pytest

import engine
import scaled_models
from engine import Cone, Jacobian, Solver
from engine import solver as solver_module
from engine.constraint import dense_jacobian, sparse_rows
from engine.types import DATA_SPEC, CapacityError, data_sizes, spec_nbytes
from mj_adapter import random_qpos

DATA = os.path.join(os.path.dirname(__file__), "data")

# free bodies touching one another and the floor, a connect between two of them, a limited
# hinge with friction loss: rows on one tree and on two, islands of several trees
PILE = """
<mujoco>
  <option cone="{cone}" solver="{solver}" noslip_iterations="{noslip}"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body pos="0 0 0.099"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body pos="0.19 0 0.099"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body pos="0.1 0 0.28"><freejoint/><geom type="sphere" size="0.1" condim="6"/></body>
    <body pos="1 0 0.099"><freejoint/><geom type="capsule" size="0.1 0.2" euler="0 90 0"
      condim="4"/></body>
    <body pos="2 0 0.5">
      <joint type="hinge" axis="0 1 0" range="-10 10" frictionloss="0.3"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.05"/>
      <body pos="0.3 0 0"><joint type="hinge" axis="0 1 0" range="-5 5"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 -0.4" size="0.05"/></body>
    </body>
    <body name="hung" pos="3 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body name="swing" pos="3.5 0 0.3"><freejoint/><geom type="sphere" size="0.1"/></body>
  </worldbody>
  <equality>
    <connect body1="world" body2="hung" anchor="3 0 0.6"/>
    <weld body1="hung" body2="swing" relpose="-0.5 0 0 1 0 0 0"/>
  </equality>
</mujoco>
"""


def humanoid():
    import dm_control
    path = os.path.join(os.path.dirname(dm_control.__file__), "suite", "humanoid.xml")
    m = engine.load_model(path)
    m.dof_frictionloss[6:] = 0.05                # friction-loss rows as well
    return m


def pile(cone="elliptic", solver="Newton", noslip=0):
    return engine.load_model_from_string(PILE.format(cone=cone, solver=solver,
                                                     noslip=noslip))


def layouts(m):
    """Two Data of m: dense and sparse rows (the layout is read when the Data is made)."""
    m.opt.jacobian = Jacobian.DENSE
    dense = engine.make_data(m)
    m.opt.jacobian = Jacobian.SPARSE
    sparse = engine.make_data(m)
    assert dense.efc_Jrow.shape[0] == 0 and dense.dense_M.shape == (m.nv, m.nv)
    assert sparse.efc_Jrow.shape[0] == 6 and sparse.dense_M.shape == (0, 0)
    return dense, sparse


def state(m, seed):
    rng = np.random.default_rng(seed)
    qpos = m.qpos0.copy()
    if m.nv == 27:                               # the humanoid: lying on the floor
        qpos[2] = 0.15
        qpos[3:7] = [np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0]
    qpos[m.nq - (m.nv - 6):] += 0.2 * rng.standard_normal(m.nv - 6) if m.nv == 27 else 0.0
    return qpos, 0.3 * rng.standard_normal(m.nv)


def close(a, b, what, rtol=1e-12):
    scale = max(1.0, np.abs(a).max(initial=0.0))
    np.testing.assert_allclose(b, a, rtol=0, atol=rtol * scale, err_msg=what)


CASES = [(Solver.NEWTON, Cone.ELLIPTIC, 0), (Solver.NEWTON, Cone.PYRAMIDAL, 0),
         (Solver.PGS, Cone.ELLIPTIC, 0), (Solver.PGS, Cone.PYRAMIDAL, 0),
         (Solver.NEWTON, Cone.ELLIPTIC, 4), (Solver.PGS, Cone.PYRAMIDAL, 4)]


@pytest.mark.parametrize("solver,cone,noslip", CASES)
@pytest.mark.parametrize("model", ["humanoid", "pile", "compiler_constraints"])
def test_sparse_layout_equals_dense(model, solver, cone, noslip):
    """Forward on the same states and a few steps: the sparse layout's rows equal the dense
    layout's to 1e-12, forces and accelerations to 1e-10 (relative to their scale)."""
    if model == "humanoid":
        m = humanoid()
    elif model == "pile":
        m = pile()
    else:
        m = engine.load_model(os.path.join(DATA, "compiler_constraints.xml"))
    m.opt.solver, m.opt.cone, m.opt.noslip_iterations = solver, cone, noslip
    dense, sparse = layouts(m)
    for seed in range(2):
        qpos, qvel = state(m, seed)
        for d in (dense, sparse):
            engine.reset_data(m, d)
            d.qpos[:], d.qvel[:] = qpos, qvel
            d.qacc[:] = np.nan
            d.efc_force[:] = np.nan
            engine.forward(m, d)
        assert dense.nefc == sparse.nefc > 0
        n = dense.nefc
        # Newton's Hessian along the tree (the humanoid on the floor) or not (the pile's
        # bodies touch one another), in both layouts alike
        tree = solver_module.tree_rows(m._struct, sparse._struct)
        assert tree == solver_module.tree_rows(m._struct, dense._struct)
        assert tree == (model == "humanoid")
        np.testing.assert_array_equal(dense.efc_range[:n], sparse.efc_range[:n])
        close(dense.efc_J[:n], dense_jacobian(sparse), "efc_J")
        # 1e-10: with rows across branches Newton's dense layout updates the tree factor
        # (solver._low_rank_solve) where the sparse layout factors the islands densely
        close(dense.efc_force[:n], sparse.efc_force[:n], "efc_force", 1e-10)
        close(dense.qacc, sparse.qacc, "qacc", 1e-10)
        engine.step(m, dense, 5)
        engine.step(m, sparse, 5)
        close(dense.qvel, sparse.qvel, "qvel after 5 steps", 1e-10)
        close(dense.qpos, sparse.qpos, "qpos after 5 steps", 1e-10)


@pytest.mark.parametrize("model", ["compiler_constraints", "ball_limits"])
def test_sparse_rows_match_mujoco_sparse(model):
    """With jacobian="sparse" in both engines: the same rows as MuJoCo's compressed efc_J
    (values on the dofs MuJoCo stores; ours store the whole trees, the rest zero)."""
    path = os.path.join(DATA, f"{model}.xml")
    mm = mujoco.MjModel.from_xml_path(path)
    mm.opt.jacobian = mujoco.mjtJacobian.mjJAC_SPARSE
    mm.opt.disableflags = int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    m = engine.load_model(path)
    m.opt.jacobian = Jacobian.SPARSE
    m.opt.disableflags = engine.DisableBit.CONTACT
    md, d = mujoco.MjData(mm), engine.make_data(m)
    assert mujoco.mj_isSparse(mm) and d.efc_Jrow.shape[0] > 0
    rng = np.random.default_rng(3)
    qpos = random_qpos(mm, rng, 0.3)
    md.qpos[:] = d.qpos[:] = qpos
    mujoco.mj_forward(mm, md)
    engine.forward(m, d)
    assert d.nefc == md.nefc > 0
    theirs = np.zeros((md.nefc, mm.nv))
    mujoco.mju_sparse2dense(theirs, md.efc_J, md.efc_J_rownnz, md.efc_J_rowadr,
                            md.efc_J_colind)
    ours = dense_jacobian(d)
    np.testing.assert_allclose(ours, theirs, atol=1e-9 * max(1.0, np.abs(theirs).max()))
    rownnz, rowadr, colind = sparse_rows(d)
    for i in range(d.nefc):       # MuJoCo's stored dofs are among ours
        mine = set(colind[rowadr[i]:rowadr[i] + rownnz[i]])
        assert set(md.efc_J_colind[md.efc_J_rowadr[i]:md.efc_J_rowadr[i]
                                   + md.efc_J_rownnz[i]]) <= mine


def test_jacobian_option_as_mujoco():
    """<option jacobian=...> and m.opt.jacobian; auto is sparse from nv = 60 (mj_isSparse)."""
    from engine.types import sparse_jacobian
    for word, value in (("dense", Jacobian.DENSE), ("sparse", Jacobian.SPARSE),
                        ("auto", Jacobian.AUTO)):
        xml = scaled_models.spheres(2).replace("<mujoco>",
                                               f'<mujoco><option jacobian="{word}"/>')
        m = engine.load_model_from_string(xml)
        assert m.opt.jacobian == value
        assert sparse_jacobian(m) == (value == Jacobian.SPARSE)
    assert engine.load_model_from_string(scaled_models.spheres(9)).opt.jacobian == Jacobian.AUTO
    assert not sparse_jacobian(engine.load_model_from_string(scaled_models.spheres(9)))  # nv 54
    assert sparse_jacobian(engine.load_model_from_string(scaled_models.spheres(10)))     # nv 60
    with pytest.raises(ValueError, match="jacobian"):
        m.opt.jacobian = 7
    with pytest.raises(engine.ModelError, match="jacobian"):
        engine.load_model_from_string('<mujoco><option jacobian="banded"/></mujoco>')


N_BODIES = 2000


def data_bytes(d):
    return sum(a.nbytes for a in d._arrays.values())


def test_thousands_of_free_bodies_step_in_memory_of_their_contacts():
    """2,000 free spheres resting on a plane: sparse by default, each a contact (3 rows of 6
    dofs) and an island of its own. Data's bytes are within the stated bound
        8 (4 njmax njcol + 89 njmax + 43 nconmax + 4 npairmax + 20 ngeom + 105 nbody + 75 nv
           + 3 nq + 5 nM + 2 nD) + 64 KiB
    (efc_J, efc_MinvJT, efc_Y and solver_X packed to njcol = 12 columns; no term in njmax nv or
    nv^2, where the dense rows need 8 njmax nv bytes for each of the four) and grow linearly
    with the number of bodies."""
    def spheres(n, solver="Newton"):
        xml = scaled_models.spheres(n).replace(' 0.2"><freejoint/>', ' 0.0999"><freejoint/>')
        return engine.load_model_from_string(
            xml.replace("<mujoco>", f'<mujoco><option solver="{solver}"/>'))
    for solver in ("Newton", "PGS"):
        m = spheres(N_BODIES, solver)
        d = engine.make_data(m)
        assert d.efc_J.shape[1] == 12 and d.dense_M.size == 0
        bound = 8 * (4 * d.njmax * 12 + 89 * d.njmax + 43 * d.nconmax + 4 * 8 * m.ngeom
                     + 20 * m.ngeom + 105 * m.nbody + 75 * m.nv + 3 * m.nq + 5 * m.nM
                     + 2 * m.nD) + 65536
        assert data_bytes(d) <= bound
        dense = spec_nbytes(DATA_SPEC, data_sizes(m, d.nconmax, d.njmax, sparse=False))
        assert dense > 100 * data_bytes(d)
        engine.step(m, d, 20)
        assert d.ncon == N_BODIES and d.nefc == 3 * N_BODIES
        assert np.abs(d.qpos[2::7] - 0.1).max() < 2e-3         # resting on the plane
        assert np.abs(d.qvel).max() < 0.05
    half = data_bytes(engine.make_data(spheres(N_BODIES // 2)))
    assert data_bytes(d) <= 2.01 * half


def test_set_const_and_refusal_state_the_bytes(monkeypatch):
    """Loading needs no full-size Data (set_const makes one without rows); a Data that does not
    fit is refused with its bytes and the sizes that drive them, before any allocation."""
    xml = scaled_models.spheres(500).replace("<mujoco>", '<mujoco><option jacobian="dense"/>')
    monkeypatch.setattr(engine.types, "available_memory", lambda: 200 << 20)
    m = engine.load_model_from_string(xml)            # 200 MiB are plenty to load
    need = spec_nbytes(DATA_SPEC, data_sizes(m, 501, 4 * 501 + m.nv))
    assert need > 200 << 20
    with pytest.raises(CapacityError) as err:
        engine.make_data(m)
    text = str(err.value)
    assert f"({need} bytes)" in text
    for part in ("nv=3000", "nconmax=501", f"njmax={4 * 501 + 3000}", "dense rows",
                 "largest: efc_J"):
        assert part in text, (part, text)
    m.opt.jacobian = Jacobian.SPARSE                  # the same model with sparse rows fits
    d = engine.make_data(m)
    engine.step(m, d, 2)
    assert np.isfinite(d.qpos).all()


def test_model_too_large_is_refused_before_allocation(monkeypatch):
    """The compiler estimates the Model and set_const's Data before allocating them: a deep
    chain's nM (the sum of the dofs' depths) is named with the bytes (a 30,000-deep chain
    needs 30 GiB, refused this way)."""
    xml = scaled_models.chain(300)
    monkeypatch.setattr(engine.types, "available_memory", lambda: 1 << 20)
    with pytest.raises(CapacityError, match=r"the Model \(.*nv=300, nM=45150, nD=90000.*\) "
                                            r"with the Data of its constants .* needs .*bytes"):
        engine.load_model_from_string(xml)

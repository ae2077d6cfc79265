"""engine.rollout and the packed state vectors (engine.State, state_size, get_state, set_state).

Oracles: MuJoCo's mj_stateSize / mj_getState on the same model and values, mujoco.rollout on a
model without contacts (where the two engines agree to rounding), and, bit for bit, each rollout
stepped alone on a fresh Data with engine.step.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import engine
from engine import State

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

mujoco = pytest.importorskip("mujoco")

FULL = int(State.FULLPHYSICS)

# a free box, sphere and capsule dropped on a plane next to a motor-driven arm: contacts
PILE = """<mujoco model="pile">
  <option timestep="0.004"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="box" pos="0 0 0.12"><freejoint/><geom type="box" size="0.1 0.08 0.06"/></body>
    <body name="ball" pos="0.3 0 0.3"><freejoint/><geom type="sphere" size="0.07"/></body>
    <body name="pill" pos="-0.3 0.1 0.2" euler="0 80 0"><freejoint/>
      <geom type="capsule" size="0.04 0.1"/></body>
    <body name="arm" pos="0 -0.4 0.15">
      <joint name="shoulder" type="hinge" axis="0 0 1" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0.35 0" size="0.03"/>
    </body>
  </worldbody>
  <actuator><motor name="m" joint="shoulder" gear="2"/></actuator>
</mujoco>"""

# 12 spheres touching in a 3 x 4 grid on a plane: 29 contacts, more than a fresh Data holds
GRID = """<mujoco model="grid">
  <option timestep="0.005"/>
  <worldbody>
    <geom type="plane" size="2 2 0.1"/>
""" + "\n".join(f'    <body pos="{0.199 * i - 0.2} {0.199 * j - 0.3} 0.099"><freejoint/>'
                f'<geom type="sphere" size="0.1"/></body>'
                for i in range(3) for j in range(4)) + """
  </worldbody>
</mujoco>"""

# no contacts: a chain with hinge, slide and ball joints, a filter actuator (act) and a mocap
# body; both engines integrate it alike
CHAIN = """<mujoco model="chain">
  <option timestep="0.002"/>
  <worldbody>
    <body name="mocap" mocap="true" pos="1 0 0"><geom type="sphere" size="0.05" contype="0"
      conaffinity="0"/></body>
    <body name="a" pos="0 0 1">
      <joint name="h1" type="hinge" axis="0 1 0" damping="0.05"/>
      <site name="tip" pos="0.3 0 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" contype="0" conaffinity="0"/>
      <body name="b" pos="0.3 0 0">
        <joint name="s" type="slide" axis="1 0 0"/>
        <geom type="box" size="0.05 0.04 0.03" contype="0" conaffinity="0"/>
        <body name="c" pos="0.1 0 0">
          <joint name="ball" type="ball"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.25" size="0.02" contype="0"
            conaffinity="0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="m1" joint="h1"/>
    <general name="f" joint="s" dyntype="filter" dynprm="0.05" gainprm="3"/>
  </actuator>
  <sensor>
    <jointpos joint="s"/>
    <jointvel joint="h1"/>
    <ballquat joint="ball"/>
    <actuatorfrc actuator="f"/>
    <accelerometer site="tip"/>
    <framepos objtype="body" objname="c"/>
  </sensor>
</mujoco>"""


@pytest.fixture(scope="module")
def pile():
    return engine.load_model_from_string(PILE)


def random_states(m, n, rng, speed=1.0):
    """n full-physics states: the default pose, random velocities (and activations)."""
    d = engine.make_data(m)
    x = np.tile(engine.get_state(m, d, FULL), (n, 1))
    x[:, 1 + m.nq:1 + m.nq + m.nv] = speed * rng.normal(size=(n, m.nv))
    x[:, 1 + m.nq + m.nv:] = rng.uniform(-1, 1, size=(n, m.na))
    return x


def step_alone(m, x0, control, nstep, spec=FULL, control_spec=int(State.CTRL)):
    """The rollout stepped by hand on a fresh Data: states and sensor values after each step."""
    d = engine.make_data(m)
    if x0 is not None:
        engine.set_state(m, d, x0, spec)
    states, sensors = [], []
    for t in range(nstep):
        if control is not None:
            engine.set_state(m, d, control[min(t, len(control) - 1)], control_spec)
        engine.step(m, d)
        states.append(engine.get_state(m, d, spec))
        sensors.append(d.sensordata.copy())
    return np.array(states), np.array(sensors), d


# ------------------------------------------------------------------------------------------------
# state vectors
# ------------------------------------------------------------------------------------------------
def test_state_size_and_packing_match_mujoco():
    m = engine.load_model_from_string(CHAIN)
    mm = mujoco.MjModel.from_xml_string(CHAIN)
    rng = np.random.default_rng(1)
    d, md = engine.make_data(m), mujoco.MjData(mm)
    for name in ("time", "qpos", "qvel", "act", "qacc_warmstart", "ctrl", "qfrc_applied",
                 "xfrc_applied", "mocap_pos", "mocap_quat"):
        value = rng.normal(size=np.shape(getattr(md, name)))
        setattr(md, name, value)
        setattr(d, name, value)
    # our State's bits, and MuJoCo's own mjtState members (a script comparing both engines)
    members = [v for k, v in mujoco.mjtState.__members__.items() if k.startswith("mjSTATE_")]
    assert len(members) > State.NSTATE
    specs = [1 << i for i in range(State.NSTATE)] + [
        int(State.PHYSICS), FULL, int(State.USER), int(State.INTEGRATION),
        int(State.QPOS | State.MOCAP_QUAT | State.CTRL)] + members
    for spec in specs:
        n = mujoco.mj_stateSize(mm, spec)
        assert engine.state_size(m, spec) == n, spec
        ref = np.empty(n)
        mujoco.mj_getState(mm, md, ref, spec)
        assert np.array_equal(engine.get_state(m, d, spec), ref), spec
        engine.set_state(m, d, ref, spec)


def test_set_state_writes_what_get_state_reads():
    m = engine.load_model_from_string(CHAIN)
    d = engine.make_data(m)
    spec = int(State.INTEGRATION)
    x = np.random.default_rng(2).normal(size=engine.state_size(m, spec))
    engine.set_state(m, d, x, spec)
    assert np.array_equal(engine.get_state(m, d, spec), x)
    assert d.time == x[0] and np.array_equal(d.qpos, x[1:1 + m.nq])
    assert np.array_equal(d.mocap_quat.ravel(), x[-4:])


def test_state_errors_are_clear():
    m = engine.load_model_from_string(CHAIN)
    d = engine.make_data(m)
    with pytest.raises(ValueError, match="shape"):
        engine.set_state(m, d, np.zeros(3), FULL)
    with pytest.raises(ValueError, match="invalid state specification"):
        engine.state_size(m, 1 << State.NSTATE)
    with pytest.raises(TypeError):
        engine.get_state(m, d, 1.5)
    # the sizes kept with the model after a first call do not let a bad specification through
    assert engine.state_size(m, 1) == 1
    with pytest.raises(TypeError):
        engine.state_size(m, True)
    with pytest.raises(ValueError, match="invalid state specification"):
        engine.state_size(m, -1)


def test_eq_active_is_read_from_the_model_and_cannot_be_switched():
    m = engine.load_model_from_string("""<mujoco><worldbody>
      <body name="a"><freejoint/><geom size="0.1"/></body>
      <body name="b" pos="1 0 0"><freejoint/><geom size="0.1"/></body></worldbody>
      <equality><connect body1="a" body2="b" anchor="0 0 0"/>
        <weld body1="a" active="false"/></equality></mujoco>""")
    d = engine.make_data(m)
    assert list(engine.get_state(m, d, State.EQ_ACTIVE)) == [1.0, 0.0]
    engine.set_state(m, d, [1.0, 0.0], State.EQ_ACTIVE)
    with pytest.raises(ValueError, match="eq_active0"):
        engine.set_state(m, d, [1.0, 1.0], State.EQ_ACTIVE)
    with pytest.raises(ValueError, match="eq_active0"):
        engine.rollout(m, None, np.ones((1, 3, 2)), control_spec=State.EQ_ACTIVE)


# ------------------------------------------------------------------------------------------------
# rollouts
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", [engine.Solver.PGS, engine.Solver.NEWTON])
def test_rollout_equals_stepping_each_alone_bit_for_bit(pile, solver):
    m = pile.copy()
    m.opt.solver = solver
    rng = np.random.default_rng(3)
    B, T = 7, 60
    x0 = random_states(m, B, rng)
    control = rng.normal(size=(B, T, m.nu))
    # two threads, two rollouts per chunk: each thread's Data runs several rollouts in turn
    datas = [engine.make_data(m) for _ in range(2)]
    states, sensors = engine.rollout(m, x0, control, data=datas, chunk_size=2)
    assert states.shape == (B, T, engine.state_size(m, FULL))
    assert sensors.shape == (B, T, getattr(m, "nsensordata", 0))
    ncon = 0
    for b in range(B):
        ref, ref_sensors, d = step_alone(m, x0[b], control[b], T)
        ncon = max(ncon, d.ncon)
        np.testing.assert_array_equal(states[b], ref, err_msg=f"rollout {b}")
        np.testing.assert_array_equal(sensors[b], ref_sensors, err_msg=f"rollout {b}")
    assert ncon > 0                               # the rollouts had contacts
    assert all(d.time > 0 for d in datas)         # both threads stepped
    assert len({tuple(x[-1, 1:4]) for x in states}) == B


def test_rollout_does_not_depend_on_the_capacity_left_by_earlier_rollouts():
    """Each thread's Data outgrows its contact capacity in its first rollout; the later rollouts
    run on the grown Data without overflowing, and still equal a fresh Data stepped alone
    (which overflows and grows in its first step)."""
    m = engine.load_model_from_string(GRID)
    rng = np.random.default_rng(4)
    B, T = 4, 25
    x0 = random_states(m, B, rng, speed=0.3)
    states, _ = engine.rollout(m, x0, nstep=T, nthread=2, chunk_size=1)
    fresh = engine.make_data(m)
    for b in range(B):
        ref, _, d = step_alone(m, x0[b], None, T)
        assert d.nconmax > fresh.nconmax              # the reference overflowed and grew
        np.testing.assert_array_equal(states[b], ref, err_msg=f"rollout {b}")


def test_kernels_borrow_the_arrays_their_struct_proxy_keeps_alive():
    """The jitted bundle borrows the Data's arrays (no reference counting in compiled code, so
    threads sharing a Model never write a shared counter): the proxy keeps them alive, a proxy
    held across Data.grow still runs on its own arrays, and the arrays are freed with it."""
    import gc
    import weakref

    from engine.forward import forward_kernel
    m = engine.load_model_from_string(GRID)
    d = engine.make_data(m)
    engine.forward(m, d)                           # grown to the contacts of this state
    old_struct, old_pos = d._struct, weakref.ref(d.efc_pos)
    d.grow(2 * d.nconmax, 2 * d.njmax)
    gc.collect()
    assert old_pos() is not None and old_pos() is not d.efc_pos
    old_pos().fill(np.nan)
    forward_kernel(m._struct, old_struct)          # runs on the old, still valid, arrays
    assert d.nefc > 0 and not np.isnan(old_pos()[:d.nefc]).any()
    engine.forward(m, d)
    np.testing.assert_array_equal(old_pos()[:d.nefc], d.efc_pos[:d.nefc])
    del old_struct
    gc.collect()
    assert old_pos() is None


def test_a_threads_model_handle_is_the_same_type_over_the_same_arrays():
    """Model.thread_struct, taken after the structural fields were frozen, holds the very arrays
    of the Model, with the types of the Model's own handle: the struct's constructor is not
    compiled a second time for read-only arrays."""
    from engine import _structs
    m = engine.load_model_from_string(GRID)
    handle = m.thread_struct()
    assert not m.body_parentid.flags.writeable
    assert len(_structs._model_set0.signatures) == 1
    for mine, theirs in zip(handle._arrays, m._struct._arrays):
        assert mine.shape == theirs.shape and (mine.size == 0 or np.shares_memory(mine, theirs))
    with pytest.raises(ValueError):
        m.body_parentid[0] = 3          # the Model's fields stay frozen


def test_sensor_values_are_copied_after_each_step():
    """sensordata holds, bit for bit, the sensor values of each step stepped alone (those its
    forward computed, at the state before the step), on a model whose contacts come and go."""
    m = engine.load_model(os.path.join(ROOT, "tests", "data", "sensors_contact.xml"))
    assert m.nsensordata > 0
    rng = np.random.default_rng(10)
    x0 = random_states(m, 3, rng)
    control = rng.normal(size=(3, 12, m.nu))
    _, sensors = engine.rollout(m, x0, control, nthread=2, chunk_size=1)
    assert sensors.shape == (3, 12, m.nsensordata)
    for b in range(3):
        _, ref, _ = step_alone(m, x0[b], control[b], 12)
        np.testing.assert_array_equal(sensors[b], ref, err_msg=f"rollout {b}")


def test_one_model_per_rollout(pile):
    rng = np.random.default_rng(5)
    models = []
    for eps, kappa, g in ((0.1, 0.02, -9.81), (0.01, 0.05, -9.81), (0.5, 0.01, -3.0)):
        mk = pile.copy()
        mk.opt.epsilon, mk.opt.kappa, mk.opt.gravity = eps, kappa, (0, 0, g)
        models.append(mk)
    T = 40
    control = rng.normal(size=(1, T, pile.nu))          # one sequence for every rollout
    states, _ = engine.rollout(models, None, control, nthread=2)
    assert states.shape[0] == 3
    for b, mk in enumerate(models):
        ref, _, _ = step_alone(mk, None, control[0], T)
        np.testing.assert_array_equal(states[b], ref, err_msg=f"model {b}")
    assert not np.array_equal(states[0], states[1])


def test_default_initial_state_broadcasts_and_constant_controls(pile):
    rng = np.random.default_rng(6)
    u = rng.normal(size=(3, 1, pile.nu))                 # one control per rollout, held
    states, _ = engine.rollout(pile, None, u, nstep=20, nthread=1)
    for b in range(3):
        ref, _, _ = step_alone(pile, None, u[b], 20)
        np.testing.assert_array_equal(states[b], ref)
    x = engine.get_state(pile, engine.make_data(pile), FULL)
    one, _ = engine.rollout(pile, x, u[0, 0], nstep=20)  # (nstate,) and (nu,): one rollout
    np.testing.assert_array_equal(one[0], states[0])


def test_state_spec_and_control_spec(pile):
    """Initial states and outputs packed by state_spec (fields left out start at their
    defaults); controls by control_spec (here ctrl and qfrc_applied)."""
    rng = np.random.default_rng(7)
    spec = int(State.QPOS | State.QVEL)
    cspec = int(State.CTRL | State.QFRC_APPLIED)
    x0 = random_states(pile, 2, rng)[:, 1:1 + pile.nq + pile.nv]
    control = rng.normal(size=(2, 15, engine.state_size(pile, cspec)))
    states, _ = engine.rollout(pile, x0, control, state_spec=spec, control_spec=cspec,
                               nthread=2, chunk_size=1)
    assert states.shape == (2, 15, pile.nq + pile.nv)
    for b in range(2):
        ref, _, _ = step_alone(pile, x0[b], control[b], 15, spec=spec, control_spec=cspec)
        np.testing.assert_array_equal(states[b], ref)


def test_divergence_repeats_the_state_reached(pile):
    """As mujoco.rollout: after a warning (here BADQVEL: the step resets the state) the rest of
    the rollout repeats the state reached; the other rollouts are unaffected."""
    rng = np.random.default_rng(8)
    x0 = random_states(pile, 2, rng)
    x0[1, 1 + pile.nq] = np.nan
    states, _ = engine.rollout(pile, x0, np.zeros((2, 10, pile.nu)), nthread=2, chunk_size=1)
    ref, _, d = step_alone(pile, x0[1], None, 1)
    assert d.warning[engine.enums.Warning.BADQVEL] == 1
    assert not np.isnan(states[1]).any()
    np.testing.assert_array_equal(states[1], np.repeat(ref, 10, axis=0))
    ref0, _, _ = step_alone(pile, x0[0], np.zeros((10, pile.nu)), 10)
    np.testing.assert_array_equal(states[0], ref0)


def test_matches_mujoco_rollout_without_contacts():
    """The same initial states and controls through mujoco.rollout and engine.rollout: the
    state layout, the time and the control timing agree; the chain's dynamics match MuJoCo's
    to rounding."""
    from mujoco import rollout as mj_rollout
    m = engine.load_model_from_string(CHAIN)
    mm = mujoco.MjModel.from_xml_string(CHAIN)
    rng = np.random.default_rng(9)
    B, T = 5, 200
    x0 = random_states(m, B, rng)
    x0[:, 0] = rng.uniform(0, 1, B)                      # start times
    control = rng.normal(size=(B, T, m.nu))
    ours, our_sensors = engine.rollout(m, x0, control, nthread=2)
    ref, ref_sensors = mj_rollout.rollout(mm, [mujoco.MjData(mm) for _ in range(2)], x0,
                                          control)
    assert ours.shape == ref.shape and our_sensors.shape == ref_sensors.shape == (B, T, 13)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(our_sensors, ref_sensors, rtol=1e-9, atol=1e-9)


def test_python_runs_while_a_rollout_is_stepping(pile):
    """The compiled rollout releases the GIL: while one call steps a long rollout in another
    thread (its first state written, its last not yet), this thread runs Python."""
    import sys
    import threading
    assert sys.modules["engine.rollout"].rollout_kernel.targetoptions["nogil"] is True
    T = 3000
    states = np.full((1, T, engine.state_size(pile, FULL)), np.nan)
    worker = threading.Thread(target=engine.rollout, args=(pile, None),
                              kwargs=dict(nstep=T, nthread=1, state=states))
    seen_between = 0
    worker.start()
    while worker.is_alive():
        if not np.isnan(states[0, 0, 0]) and np.isnan(states[0, -1, 0]):
            seen_between += 1
    worker.join()
    assert not np.isnan(states).any()
    assert seen_between > 0


def test_rollout_errors_are_clear(pile):
    d = engine.make_data(pile)
    x = engine.get_state(pile, d, FULL)
    with pytest.raises(ValueError, match="trailing dimension of control must be 1"):
        engine.rollout(pile, x, np.zeros((1, 5, 3)))
    with pytest.raises(ValueError, match="trailing dimension of initial_state"):
        engine.rollout(pile, x[:-1], np.zeros((1, 5, 1)))
    with pytest.raises(ValueError, match="control_spec"):
        engine.rollout(pile, x, np.zeros((1, 5, 1)), control_spec=State.QPOS)
    with pytest.raises(ValueError, match="along axis 0"):
        engine.rollout(pile, np.tile(x, (3, 1)), np.zeros((2, 5, 1)))
    other = engine.load_model_from_string(CHAIN)
    with pytest.raises(ValueError, match="not compatible"):
        engine.rollout([pile, other], None, nstep=2)
    with pytest.raises(ValueError, match="one per thread"):
        engine.rollout(pile, x, nstep=2, nthread=3, data=[d])

"""The lean kernels of engine.step/forward (forward.kernels): only what a model can use is
compiled in, and they compute exactly what the general kernels compute."""
import dis
import importlib
import types
import uuid

import numpy as np
import pytest

import engine
from engine import Integrator, Solver, collision_driver, compiler, constraint, jit, passive, sensor
from engine import solver as engine_solver

forward = importlib.import_module("engine.forward")     # engine.forward is the function


@pytest.fixture(autouse=True)
def lean(monkeypatch):
    """The lean kernels, as a process gets them by default (the test suite sets ENGINE_LEAN=0)."""
    monkeypatch.setattr(jit, "LEAN", True)

BALLS = """<mujoco><worldbody><geom type="plane" size="2 2 .1"/>
  <body pos="0 0 .12"><freejoint/><geom type="sphere" size=".1"/><site name="s" size=".11"/></body>
  <body pos="0.05 .02 .35" euler="0 40 10"><freejoint/><geom type="capsule" size=".05 .1"/></body>
  <body pos="-.1 .05 .6"><freejoint/><geom type="sphere" size=".08"/></body></worldbody>
  <sensor><accelerometer site="s"/><touch site="s"/><gyro site="s"/></sensor></mujoco>"""


def test_unused_narrowphase_follows_the_geom_types():
    m = compiler.load_model_from_string(BALLS)
    assert set(collision_driver.unused_narrowphase(m)) == {
        "box_box", "box_box_clean", "capsule_box", "plane_convex", "convex_convex",
        "mpr_contacts", "hfield_convex"}
    one_box = BALLS.replace('type="sphere" size=".08"', 'type="box" size=".05 .05 .05"')
    m = compiler.load_model_from_string(one_box)
    # a box with a capsule, a box with itself (were there two), a box with a plane: kept
    assert set(collision_driver.unused_narrowphase(m)) == {
        "plane_convex", "convex_convex", "mpr_contacts", "hfield_convex"}
    m = compiler.load_model_from_string(BALLS.replace('type="capsule" size=".05 .1"',
                                                      'type="ellipsoid" size=".05 .06 .1"'))
    assert "convex_convex" not in collision_driver.unused_narrowphase(m)
    assert "mpr_contacts" not in collision_driver.unused_narrowphase(m)
    assert "plane_convex" not in collision_driver.unused_narrowphase(m)


def test_unused_sensors_follow_the_sensor_types():
    m = compiler.load_model_from_string(BALLS)
    assert set(sensor.unused_sensors(m)) == {"_rangefinder", "_geom_distance_sensor",
                                            "_contact_sensor", "_cam_project"}
    m = compiler.load_model_from_string(BALLS.replace(
        '<gyro site="s"/>', '<rangefinder site="s"/><distance geom1="g1" geom2="g2"/>').replace(
        'type="sphere" size=".1"', 'name="g1" type="sphere" size=".1"').replace(
        'type="capsule"', 'name="g2" type="capsule"'))
    assert set(sensor.unused_sensors(m)) == {"_contact_sensor", "_cam_project"}


def test_options_choose_the_kernels_at_every_call():
    m = compiler.load_model_from_string(BALLS)
    m.opt.solver = Solver.PGS
    pgs = forward.lean_calls(m)
    m.opt.solver = Solver.NEWTON
    m.opt.integrator = Integrator.RK4
    newton = forward.lean_calls(m)
    assert pgs is not newton
    assert pgs["solve"].py_func.__code__ is forward._solve_pgs.py_func.__code__
    assert newton["solve"].py_func.__code__ is forward._solve_newton.py_func.__code__
    assert newton["solve"].py_func.__globals__["_noslip"] is forward._without_noslip
    m.opt.noslip_iterations = 3
    assert forward.lean_calls(m)["solve"].py_func.__globals__["_noslip"] is forward._noslip
    assert pgs["integrate"] is forward.euler
    assert newton["integrate"].py_func.__code__ is forward.runge_kutta4.py_func.__code__
    # the variants are distinct kernels, cached under their own names
    assert newton["step_kernel"] is not forward.step_kernel
    assert newton["step_kernel"].py_func.__qualname__.startswith("step_kernel__1newton_")


def test_integrators_share_the_lean_forward_chain():
    """The forward chain does not depend on the integrator: two integrators with the same
    solver and stubs share its kernels (compiled once) and differ in the step only."""
    m = compiler.load_model_from_string(BALLS)
    m.opt.integrator = Integrator.IMPLICIT
    implicit = forward.lean_calls(m)
    m.opt.integrator = Integrator.IMPLICITFAST
    fast = forward.lean_calls(m)
    for name in ("forward_kernel", "collision", "sensor_pos", "fwd_constraint", "solve"):
        assert fast[name] is implicit[name], name
    assert fast["forward_kernel"] is not forward.forward_kernel
    assert fast["step_kernel"] is not implicit["step_kernel"]
    assert fast["step_kernel"].py_func.__qualname__.startswith("step_kernel__3pgs_")


def test_lean_step_equals_the_general_step():
    """Balls dropped on each other (contacts, sensors), semi-implicit Euler with the model's
    solver: the lean step and the general one agree to the bit."""
    m = engine.load_model_from_string(BALLS)
    lean = forward.lean_calls(m)["step_kernel"]
    assert lean is not forward.step_kernel
    d1, d2 = engine.make_data(m), engine.make_data(m)
    for d in (d1, d2):
        d.qvel[:] = np.linspace(-0.3, 0.3, m.nv)
    for _ in range(60):
        assert lean(m._struct, d1._struct, 1) == 1
        assert forward.step_kernel(m._struct, d2._struct, 1) == 1
    assert d1.ncon > 0
    for name in ("qpos", "qvel", "qacc", "sensordata", "efc_force", "act"):
        np.testing.assert_array_equal(getattr(d1, name), getattr(d2, name), err_msg=name)


def test_a_changed_option_takes_effect_at_the_next_step():
    """engine.step keeps the kernels it chose for a model's options (choosing costs more than a
    small step) and chooses again when an option changes: stepped through it, PGS, then Newton,
    then PGS again, the state equals the general kernel's, which branches on the options."""
    m = engine.load_model_from_string(BALLS)
    d1, d2 = engine.make_data(m), engine.make_data(m)
    for d in (d1, d2):
        d.qvel[:] = np.linspace(-0.3, 0.3, m.nv)
    for solver in (Solver.PGS, Solver.NEWTON, Solver.PGS):
        m.opt.solver = solver
        for _ in range(20):
            engine.step(m, d1)
            assert forward.step_kernel(m._struct, d2._struct, 1) == 1
        np.testing.assert_array_equal(d1.qvel, d2.qvel)
        np.testing.assert_array_equal(d1.efc_force, d2.efc_force)
    assert d1.ncon > 0


def test_fluid_forces_and_exact_stabilization_follow_their_options():
    """Fluid forces and exact stabilization are left out of the lean kernels while their
    options are off, and come back when they are switched on between steps: stepped through
    engine.step, the state equals the general kernel's at each setting."""
    m = engine.load_model_from_string(BALLS)
    calls = forward.lean_calls(m)
    assert calls["passive"].py_func.__globals__["ellipsoid_fluid"] is forward._no_fluid_geom
    assert calls["reference"].py_func.__globals__["exact_stabilization"] is forward._no_stage
    assert calls["make_constraint"].py_func.__globals__["_equality_rows"] is forward._no_stage
    d1, d2 = engine.make_data(m), engine.make_data(m)
    for d in (d1, d2):
        d.qvel[:] = np.linspace(-0.3, 0.3, m.nv)
    for density, stabilization in ((0.0, 0), (1.2, 0), (1.2, 1), (0.0, 0)):
        m.opt.density = density
        m.opt.stabilization = stabilization
        for _ in range(15):
            engine.step(m, d1)
            assert forward.step_kernel(m._struct, d2._struct, 1) == 1
        if density:
            assert np.abs(d1.qfrc_fluid).max() > 0.0
        np.testing.assert_array_equal(d1.qvel, d2.qvel)
        np.testing.assert_array_equal(d1.efc_force, d2.efc_force)
    assert d1.ncon > 0
    m.opt.density = 1.2
    m.opt.stabilization = 1
    calls = forward.lean_calls(m)
    assert calls["passive"] is passive.passive
    assert calls["reference"] is constraint.reference


def test_equality_rows_only_with_equality_constraints():
    """A model with an equality constraint keeps its rows in the lean kernels."""
    m = compiler.load_model_from_string(BALLS.replace(
        "</worldbody>", '</worldbody><equality><connect body1="b1" anchor="0 0 0"/></equality>'
    ).replace('<body pos="0 0 .12">', '<body name="b1" pos="0 0 .12">'))
    assert forward.lean_calls(m)["make_constraint"] is constraint.make_constraint


def test_a_step_from_python_calls_the_compiled_function():
    """engine.step and engine.forward call the chosen kernel's compiled function, not numba's
    dispatcher (which types the arguments on every call), kept with the model per options; a
    copy of the model keeps none of them. (That it gives the dispatcher's results: above.)"""
    m = engine.load_model_from_string(BALLS)
    d = engine.make_data(m)
    for _ in range(2):                    # (a first call may compile: the dispatcher does)
        engine.step(m, d)
        engine.forward(m, d)
    m.opt.solver = Solver.NEWTON
    engine.step(m, d, 2)
    engine.step(m, d)
    entries = forward._kept(m, "_entry_points")
    assert sorted(name for _, name in entries) == ["forward_kernel", "step_kernel", "step_kernel"]
    for entry in entries.values():
        assert callable(entry) and not hasattr(entry, "overloads")
    assert "_entry_points" not in m.copy().__dict__


def test_a_process_compiles_one_lean_variant_then_the_full_kernels(monkeypatch):
    """In a fresh process (nothing compiled yet) on an empty cache: the first model's lean
    kernels, then the general ones for a model that needs more."""
    monkeypatch.setattr(forward, "_KERNELS", {})
    monkeypatch.setattr(forward, "_CHAINS", {})
    monkeypatch.setattr(forward, "_CHOSEN", {})
    monkeypatch.setattr(forward, "_compiled", lambda kernel: False)
    monkeypatch.setattr(forward, "_on_disk", lambda kernel: False)
    first = compiler.load_model_from_string(BALLS)
    other = compiler.load_model_from_string(BALLS.replace('<gyro site="s"/>',
                                                          '<rangefinder site="s"/>'))
    lean = forward.kernels(first)
    assert lean == (forward.lean_calls(first)["forward_kernel"],
                    forward.lean_calls(first)["step_kernel"])
    assert lean[1] is not forward.step_kernel
    assert forward.kernels(other) == (forward.forward_kernel, forward.step_kernel)
    assert forward.kernels(first) == lean


def test_without_lean_kernels_a_process_compiles_the_general_ones(monkeypatch):
    """ENGINE_LEAN=0: the general kernels from the first model on."""
    monkeypatch.setattr(forward, "_KERNELS", {})
    monkeypatch.setattr(forward, "_CHOSEN", {})
    monkeypatch.setattr(jit, "LEAN", False)
    m = compiler.load_model_from_string(BALLS)
    assert forward.kernels(m) == (forward.forward_kernel, forward.step_kernel)


def test_a_process_loads_the_general_kernels_an_earlier_one_compiled(monkeypatch):
    """In a fresh process whose cache holds the general kernels but not the lean ones of its
    first model (another process stepped other models): the general kernels, loaded rather
    than a lean variant compiled. With the lean ones on disk too: those."""
    monkeypatch.setattr(forward, "_KERNELS", {})
    monkeypatch.setattr(forward, "_CHAINS", {})
    monkeypatch.setattr(forward, "_CHOSEN", {})
    monkeypatch.setattr(forward, "_compiled", lambda kernel: False)
    general = {forward.forward_kernel, forward.step_kernel}
    monkeypatch.setattr(forward, "_on_disk", lambda kernel: kernel in general)
    m = compiler.load_model_from_string(BALLS)
    assert forward.kernels(m) == (forward.forward_kernel, forward.step_kernel)
    monkeypatch.setattr(forward, "_CHOSEN", {})
    monkeypatch.setattr(forward, "_on_disk", lambda kernel: True)
    assert forward.kernels(m) == (forward.lean_calls(m)["forward_kernel"],
                                  forward.lean_calls(m)["step_kernel"])


def test_on_disk_sees_what_the_cache_holds():
    """_on_disk reads numba's cache index: a kernel once compiled (and so cached) is there, a
    variant never compiled is not."""
    m = compiler.load_model_from_string(BALLS)
    d = engine.make_data(m)
    engine_solver.clear_warmstart(d._struct)
    assert forward._on_disk(engine_solver.clear_warmstart)
    never = jit.variant(engine_solver.pgs, "never_compiled_" + uuid.uuid4().hex,
                        dual_cost=engine_solver.dual_cost)
    assert never is not engine_solver.pgs
    assert not forward._on_disk(never)


def test_hard_row_elimination_only_with_hard_equalities():
    """PGS's elimination of hard rows is compiled into the lean kernels of a model with a hard
    equality constraint only (hard rows come from nothing else)."""
    m = compiler.load_model_from_string(BALLS)
    m.opt.solver = Solver.PGS
    assert forward.lean_calls(m)["solve"].py_func.__globals__["condense_hard"] is \
        forward._no_condense_hard
    hard = compiler.load_model_from_string(BALLS.replace(
        "</worldbody>", '</worldbody><equality><weld body1="b1" hard="true"/></equality>').replace(
        '<body pos="0 0 .12">', '<body name="b1" pos="0 0 .12">'))
    hard.opt.solver = Solver.PGS
    calls = forward.lean_calls(hard)
    assert calls["solve"].py_func.__globals__["condense_hard"] is forward.condense_hard
    assert calls["solve"].py_func.__globals__["hard_impulses"] is forward.hard_impulses
    hard.eq_hard[0] = 0            # a plain array, edited in place: seen at the next call
    assert forward.lean_calls(hard)["solve"].py_func.__globals__["condense_hard"] is \
        forward._no_condense_hard


def _reachable(kernel, found=None):
    """The kernels that kernel's code calls, and theirs: the globals it loads and the attributes
    it reads from modules it loads (engine.warmup's _callees looks every name up on every
    module, more than the code calls)."""
    found = set() if found is None else found
    fn = kernel.py_func
    codes = [fn.__code__]
    while codes:
        code = codes.pop()
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        loaded = None
        for ins in dis.get_instructions(code):
            callee = None
            if ins.opname == "LOAD_GLOBAL":
                callee = loaded = fn.__globals__.get(ins.argval)
            elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and isinstance(loaded,
                                                                           types.ModuleType):
                callee = getattr(loaded, ins.argval, None)
            if ins.opname != "LOAD_GLOBAL":
                loaded = None
            if hasattr(callee, "py_func") and callee not in found:
                found.add(callee)
                _reachable(callee, found)
    return found


def test_the_lean_step_reaches_no_routine_the_model_cannot_use():
    """Every kernel between the step and a stubbed routine is in a lean chain: a kernel left
    out (the broadphase's filter, which calls the narrowphase) compiles the general routines
    back in."""
    m = compiler.load_model_from_string(BALLS)
    calls = forward.lean_calls(m)
    reached = _reachable(calls["step_kernel"]) | _reachable(calls["forward_kernel"])
    general = {collision_driver.narrowphase, collision_driver.collide_geoms,
               sensor._compute_pos, sensor._compute_acc, constraint.make_constraint,
               constraint.reference, passive.passive, forward.fwd_velocity}
    assert not reached & general, sorted(k.py_func.__qualname__ for k in reached & general)
    stubs = forward._lean_key(m)[1]      # narrowphase, sensors, noslip, hard rows, ...
    assert {"box_box", "_rangefinder", "_noslip", "condense_hard", "_equality_rows",
            "exact_stabilization", "ellipsoid_fluid", "inertia_box_fluid"} <= set(stubs)
    names = {k.py_func.__name__ for k in reached}
    assert not names & set(stubs), sorted(names & set(stubs))
    # the stubs stand where the routines were
    assert {"_no_pair", "_no_primitive_pair"} & names

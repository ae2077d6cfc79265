"""Time per pipeline stage of one model at one state (a profile, outside the compiled step).

``stage_times(m, d)`` runs the forward pipeline once, then calls the stage kernels one by one
from Python, round after round in pipeline order (each stage recomputes its outputs from the
earlier stages' outputs, so repeating it leaves the state as a forward leaves it), and returns
the median time per call of each stage, the cost of a call from Python taken off (an empty
kernel is called just before each call and its time subtracted: measured once per round, the
empty call ran with warmer caches than the stages and could exceed a small stage). The stages
are those of MuJoCo's timers where MuJoCo has one:

    kinematics            smooth.kinematics, com_pos, camlight, tendon (mjTIMER_POS_KINEMATICS)
    inertia               crb, factor_inertia                        (mjTIMER_POS_INERTIA)
    collision broad       boxes, sweep and prune, filters            (mjTIMER_COL_BROAD)
    collision narrow      midphase and narrowphase of the pairs      (mjTIMER_COL_NARROW)
    constraint rows       make_constraint                            (mjTIMER_POS_MAKE)
    transmission          actuator.transmission
    velocity              fwd_velocity                               (mjTIMER_VELOCITY)
    actuation             fwd_actuation                              (mjTIMER_ACTUATION)
    acceleration          energy, fwd_acceleration
    constraint projection A = J M^-1 J' blocks (PGS only)            (mjTIMER_POS_PROJECT)
    solver                fwd_constraint without the projection      (mjTIMER_CONSTRAINT)
    integration           step minus forward                         (mjTIMER_ADVANCE)
and the totals ``forward`` and ``step``. The state of ``d`` is left as after a forward.
"""
import importlib
import time

import numpy as np

from . import actuator, collision_driver, constraint, smooth, solver
from .enums import Solver
from .jit import jit

STAGES = ("kinematics", "inertia", "collision broad", "collision narrow", "constraint rows",
          "transmission", "velocity", "actuation", "acceleration", "constraint projection",
          "solver", "integration")
_STATE = ("qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat", "qfrc_applied",
          "xfrc_applied", "qacc_warmstart")


@jit
def _noop(m, d):
    """An empty kernel: the cost of a call from Python."""
    return


@jit
def _projection(m, d):
    """compute_A as PGS's step calls it (M^-1 J' only for hard rows or noslip)."""
    solver.compute_A(m, d, solver.count_hard(d) > 0 or m.opt_noslip_iterations[0] > 0)


def _kernels():
    forward = importlib.import_module("engine.forward")   # (engine.forward is the function)
    return [("kinematics", [smooth.kinematics, smooth.com_pos, smooth.camlight, smooth.tendon]),
            ("collision", [collision_driver.collision]),
            ("collision broad", [collision_driver.collision_broadphase]),
            ("inertia", [smooth.crb, forward.factor_inertia]),
            ("constraint rows", [constraint.make_constraint]),
            ("transmission", [actuator.transmission]),
            ("velocity", [forward.fwd_velocity]),
            ("actuation", [actuator.fwd_actuation]),
            ("acceleration", [forward.energy_kernel, forward.fwd_acceleration]),
            ("constraint projection", [_projection]),
            ("fwd_constraint", [forward.fwd_constraint]),
            ("forward", [forward.forward_kernel]),
            ("step", [forward.step_kernel])]


def stage_times(m, d, rounds=200, seconds=None):
    """{stage: seconds per call} at the state of d (median over `rounds` rounds, or over as
    many as fit in `seconds`); the keys are STAGES, "forward" and "step"."""
    forward = importlib.import_module("engine.forward")
    ms = m._struct
    forward.forward(m, d)             # compiled, capacities grown, state as after a forward
    ds = d._struct
    shadow = d.copy()                 # the step runs on a copy restored before every call
    saved = {k: getattr(d, k).copy() for k in _STATE}
    kernels = _kernels()
    samples = {name: [] for name, _ in kernels}
    pgs = m.opt.solver == Solver.PGS
    deadline = None if seconds is None else time.perf_counter() + seconds
    for r in range(rounds):
        for name, fns in kernels:
            if name == "constraint projection" and not pgs:
                continue
            if name == "step":
                for k in _STATE:
                    getattr(shadow, k)[...] = saved[k]
                shadow.time = d.time
                t = time.perf_counter()
                _noop(ms, ds)
                t1 = time.perf_counter()
                forward.step_kernel(ms, shadow._struct, 1)
                samples[name].append((time.perf_counter() - t1) - (t1 - t))
                continue
            total = 0.0
            for fn in fns:             # each call less an empty call made just before it
                t = time.perf_counter()
                _noop(ms, ds)
                t1 = time.perf_counter()
                fn(ms, ds)
                t2 = time.perf_counter()
                total += (t2 - t1) - (t1 - t)
            samples[name].append(total)
        if deadline is not None and r >= 4 and time.perf_counter() > deadline:
            break
    med = {name: max(float(np.median(samples[name])), 0.0) if samples[name] else 0.0
           for name, _ in kernels}
    out = {s: med.get(s, 0.0) for s in STAGES}
    out["collision narrow"] = max(med["collision"] - med["collision broad"], 0.0)
    out["solver"] = max(med["fwd_constraint"] - med["constraint projection"], 0.0)
    out["forward"] = med["forward"]
    out["step"] = med["step"]
    out["integration"] = max(med["step"] - med["forward"], 0.0)
    return out

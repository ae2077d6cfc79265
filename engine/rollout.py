"""Batch rollouts on all cores (MuJoCo's mujoco.rollout), and the state vectors they exchange.

``rollout(m, initial_state, control)`` steps B rollouts of T steps from B initial states under
B open-loop control sequences and returns the states after every step, (B, T, nstate), and the
sensor values, (B, T, nsensordata). Threads share the batch in chunks of rollouts; a chunk is
one compiled call (``rollout_kernel``, which releases the GIL) on the thread's own Data, so no
Python runs between steps. Each rollout starts from a Data reset as ``make_data`` leaves it
(``reset_state``, ``reset_history``): its result does not depend on the rollouts the thread ran
before, and equals stepping that rollout alone on a fresh Data, bit for bit.

State vectors are packed as MuJoCo's mj_getState packs them: the fields of the bits of a
``State`` specification, in the order of the bits (``state_size``, ``get_state``,
``set_state``).
"""
from __future__ import annotations

import operator
import os
import threading
from collections.abc import Sequence

import numpy as np
from numba import typed

from . import warmup
from .enums import Integrator, Solver, State, Warning
from .forward import _grow, _kept, make_data, reset_history, reset_state, step_kernel
from .jit import calls_stages, jit
from .types import Data, Model, check_data

TIME = int(State.TIME)
QPOS = int(State.QPOS)
QVEL = int(State.QVEL)
ACT = int(State.ACT)
WARMSTART = int(State.WARMSTART)
CTRL = int(State.CTRL)
QFRC_APPLIED = int(State.QFRC_APPLIED)
XFRC_APPLIED = int(State.XFRC_APPLIED)
EQ_ACTIVE = int(State.EQ_ACTIVE)
MOCAP_POS = int(State.MOCAP_POS)
MOCAP_QUAT = int(State.MOCAP_QUAT)
NWARNING = int(Warning.NWARNING)


def _element_sizes(m: Model) -> tuple:
    """Length of the field of each State bit, in the order of the bits, in model m (0 for
    fields this engine does not have). Kept with the model: the dimensions are fixed once it is
    compiled, and a state read or written in a loop from Python should not pay for this."""
    kept = _kept(m, "_state_sizes")       # also state_size of each specification
    sizes = kept.get("fields")
    if sizes is None:
        size = {State.TIME: 1, State.QPOS: m.nq, State.QVEL: m.nv, State.ACT: m.na,
                State.WARMSTART: m.nv, State.CTRL: m.nu, State.QFRC_APPLIED: m.nv,
                State.XFRC_APPLIED: 6 * m.nbody, State.EQ_ACTIVE: m.neq,
                State.MOCAP_POS: 3 * m.nmocap, State.MOCAP_QUAT: 4 * m.nmocap}
        sizes = kept["fields"] = tuple(int(size.get(State(1 << i), 0))
                                       for i in range(State.NSTATE))
    return sizes


def _check_spec(spec) -> int:
    """spec as an int: bits of engine.State, given as an int or any integer (MuJoCo's mjtState
    members too: its bits are the same)."""
    if isinstance(spec, bool) or not hasattr(type(spec), "__index__"):
        raise TypeError(f"a state specification is an int of engine.State bits, got {spec!r}")
    spec = operator.index(spec)
    if not 0 <= spec < 1 << State.NSTATE:
        raise ValueError(f"invalid state specification {spec}: bits of engine.State only "
                         f"(0 <= spec < {1 << State.NSTATE})")
    return spec


def state_size(m: Model, spec: int) -> int:
    """Length of the state vector of specification spec (MuJoCo's mj_stateSize)."""
    kept = _kept(m, "_state_sizes")
    n = kept.get(spec) if type(spec) is int else None      # (not a bool: an error below)
    if n is None:
        spec = _check_spec(spec)
        n = kept[spec] = sum(n for i, n in enumerate(_element_sizes(m)) if spec >> i & 1)
    return n


def _offset(m: Model, spec: int, bit: State) -> int:
    """Where the field of bit starts in a state vector of specification spec."""
    return sum(n for i, n in enumerate(_element_sizes(m)) if spec >> i & 1 and 1 << i < bit)


def _check_eq_active(m: Model, values, where: str) -> None:
    if not np.array_equal(np.asarray(values), m.eq_active0):
        raise ValueError(f"{where}: EQ_ACTIVE differs from m.eq_active0; equality constraints "
                         f"cannot be switched on or off during a run in this engine (set "
                         f"m.eq_active0 instead)")


def get_state(m: Model, d: Data, spec: int, out: np.ndarray | None = None) -> np.ndarray:
    """The fields of spec packed into one vector (MuJoCo's mj_getState); into out if given."""
    check_data(m, d)
    n = state_size(m, spec)
    if out is None:
        out = np.empty(n)
    elif out.shape != (n,) or out.dtype != np.float64:
        raise ValueError(f"out must be a float64 array of shape ({n},), got {out.dtype} "
                         f"{out.shape}")
    _get_state(m._struct, d._struct, int(spec), out)
    return out


def set_state(m: Model, d: Data, state, spec: int) -> None:
    """Write a packed state vector into the fields of spec (MuJoCo's mj_setState)."""
    check_data(m, d)
    n = state_size(m, spec)
    x = np.ascontiguousarray(state, dtype=np.float64)
    if x.shape != (n,):
        raise ValueError(f"state must have shape ({n},) for specification {int(spec)}, got "
                         f"{x.shape}")
    if spec & EQ_ACTIVE and m.neq:
        a = _offset(m, spec, State.EQ_ACTIVE)
        _check_eq_active(m, x[a:a + m.neq], "set_state")
    _set_state(m._struct, d._struct, int(spec), x)


# ------------------------------------------------------------------------------------------------
# compiled
# ------------------------------------------------------------------------------------------------
@jit
def _get_state(m, d, spec, out):
    """out <- the fields of spec, in the order of the State bits."""
    a = 0
    if spec & TIME:
        out[a] = d.time[0]
        a += 1
    if spec & QPOS:
        out[a:a + d.qpos.shape[0]] = d.qpos
        a += d.qpos.shape[0]
    if spec & QVEL:
        out[a:a + d.qvel.shape[0]] = d.qvel
        a += d.qvel.shape[0]
    if spec & ACT:
        out[a:a + d.act.shape[0]] = d.act
        a += d.act.shape[0]
    if spec & WARMSTART:
        out[a:a + d.qacc_warmstart.shape[0]] = d.qacc_warmstart
        a += d.qacc_warmstart.shape[0]
    if spec & CTRL:
        out[a:a + d.ctrl.shape[0]] = d.ctrl
        a += d.ctrl.shape[0]
    if spec & QFRC_APPLIED:
        out[a:a + d.qfrc_applied.shape[0]] = d.qfrc_applied
        a += d.qfrc_applied.shape[0]
    if spec & XFRC_APPLIED:
        for b in range(d.xfrc_applied.shape[0]):
            out[a:a + 6] = d.xfrc_applied[b]
            a += 6
    if spec & EQ_ACTIVE:
        for e in range(m.eq_active0.shape[0]):
            out[a] = m.eq_active0[e]
            a += 1
    if spec & MOCAP_POS:
        for k in range(d.mocap_pos.shape[0]):
            out[a:a + 3] = d.mocap_pos[k]
            a += 3
    if spec & MOCAP_QUAT:
        for k in range(d.mocap_quat.shape[0]):
            out[a:a + 4] = d.mocap_quat[k]
            a += 4


@jit
def _set_state(m, d, spec, x):
    """The fields of spec <- x (EQ_ACTIVE is checked by the caller and skipped here)."""
    a = 0
    if spec & TIME:
        d.time[0] = x[a]
        a += 1
    if spec & QPOS:
        d.qpos[:] = x[a:a + d.qpos.shape[0]]
        a += d.qpos.shape[0]
    if spec & QVEL:
        d.qvel[:] = x[a:a + d.qvel.shape[0]]
        a += d.qvel.shape[0]
    if spec & ACT:
        d.act[:] = x[a:a + d.act.shape[0]]
        a += d.act.shape[0]
    if spec & WARMSTART:
        d.qacc_warmstart[:] = x[a:a + d.qacc_warmstart.shape[0]]
        a += d.qacc_warmstart.shape[0]
    if spec & CTRL:
        d.ctrl[:] = x[a:a + d.ctrl.shape[0]]
        a += d.ctrl.shape[0]
    if spec & QFRC_APPLIED:
        d.qfrc_applied[:] = x[a:a + d.qfrc_applied.shape[0]]
        a += d.qfrc_applied.shape[0]
    if spec & XFRC_APPLIED:
        for b in range(d.xfrc_applied.shape[0]):
            d.xfrc_applied[b, :] = x[a:a + 6]
            a += 6
    if spec & EQ_ACTIVE:
        a += m.eq_active0.shape[0]
    if spec & MOCAP_POS:
        for k in range(d.mocap_pos.shape[0]):
            d.mocap_pos[k, :] = x[a:a + 3]
            a += 3
    if spec & MOCAP_QUAT:
        for k in range(d.mocap_quat.shape[0]):
            d.mocap_quat[k, :] = x[a:a + 4]
            a += 4


@jit
def _warned(d):
    for i in range(d.warning.shape[0]):
        if d.warning[i]:
            return True
    return False


@calls_stages
def rollout_kernel(models, d, r, t, r_end, nstep, state_spec, control_spec,
                   initial_state, initial_warmstart, control, state, sensordata):
    """Rollouts r .. r_end - 1, from step t of rollout r on: state, sensordata.

    # Model: models (one, or one per rollout)
    # Data in: d, the thread's
    # Inputs: initial_state (1 or B, nstate; 0 rows: the model's default state),
    #   initial_warmstart (1 or B, nv; 0 rows: none), control (1 or B, 1 or T, ncontrol)
    # Out: state (B, T, nstate), sensordata (B, T, nsensordata)

    A rollout starts (t = 0) from d reset as make_data leaves it. As MuJoCo's rollout, once a
    step has raised a warning (a divergence, after which the step reset the state) the
    remaining steps repeat that state. Returns (r, t): (r_end, 0) when done, or the rollout and
    step at which the contacts or constraint rows outgrew d (the caller grows d and calls again
    from there: the overflowed step left the state as it was)."""
    while r < r_end:
        m = models[r if len(models) > 1 else 0]
        if t == 0:
            reset_state(m, d)
            reset_history(d)
            if initial_state.shape[0] > 0:
                _set_state(m, d, state_spec, initial_state[r if initial_state.shape[0] > 1 else 0])
            if initial_warmstart.shape[0] > 0:
                d.qacc_warmstart[:] = initial_warmstart[r if initial_warmstart.shape[0] > 1 else 0]
        rc = r if control.shape[0] > 1 else 0
        while t < nstep:
            if _warned(d):
                for k in range(t, nstep):
                    _get_state(m, d, state_spec, state[r, k])
                    sensordata[r, k, :] = d.sensordata
                break
            if control_spec:
                _set_state(m, d, control_spec, control[rc, t if control.shape[1] > 1 else 0])
            if step_kernel(m, d, 1) == 0:
                return r, t
            _get_state(m, d, state_spec, state[r, t])
            sensordata[r, t, :] = d.sensordata
            t += 1
        r += 1
        t = 0
    return r, 0


# ------------------------------------------------------------------------------------------------
# public API
# ------------------------------------------------------------------------------------------------
def _as_array(name, x, ndim):
    """x as a C-contiguous float64 array with ndim axes, leading axes added (as MuJoCo's)."""
    if x is None:
        return None
    a = np.asarray(x, dtype=np.float64)
    if a.ndim > ndim:
        raise ValueError(f"{name} can have at most {ndim} dimensions, got shape {a.shape}")
    return np.ascontiguousarray(a.reshape((1,) * (ndim - a.ndim) + a.shape))


def _infer(axis, value, **arrays):
    """The common length of axis over arrays (1 broadcasts), starting from value (1: unknown)."""
    for name, a in arrays.items():
        if a is None or a.shape[axis] == value:
            continue
        if value == 1:
            value = a.shape[axis]
        elif a.shape[axis] != 1:
            raise ValueError(f"{name} has {a.shape[axis]} entries along axis {axis}, "
                             f"expected {value} (or 1)")
    return value


def default_nthread() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def rollout(model: Model | Sequence[Model], initial_state=None, control=None, *,
            nstep: int | None = None, nthread: int | None = None,
            control_spec: int = State.CTRL, state_spec: int = State.FULLPHYSICS,
            initial_warmstart=None, data: Data | Sequence[Data] | None = None,
            state: np.ndarray | None = None, sensordata: np.ndarray | None = None,
            chunk_size: int | None = None):
    """Roll out open-loop trajectories on all cores; returns (state, sensordata).

    model: a Model, or one per rollout (same sizes; different parameters per rollout).
    initial_state: (B or 1, nstate) packed by state_spec (default State.FULLPHYSICS: time,
        qpos, qvel, act), or None: every rollout from its model's default state (qpos0, ...);
        fields outside state_spec start at their defaults.
    control: (B or 1, T or 1, ncontrol) packed by control_spec (bits of State.USER; default
        State.CTRL), applied before each step; None: no inputs (zero; give nstep).
    nthread: threads (default: every core of the process; 1 or 0: the calling thread).
    initial_warmstart: (B or 1, nv) qacc_warmstart of the first step (the Newton solver's warm
        start; PGS starts cold), default zero.
    data: Data to run on, one per thread (nthread = len(data)); made here otherwise.
    state, sensordata: output arrays to fill, (B, T, nstate) and (B, T, nsensordata).
    chunk_size: rollouts per compiled call (default max(1, B / (10 nthread)), as MuJoCo).

    Returns state (B, T, nstate), the state after each step, and sensordata (B, T,
    nsensordata), the sensor values each step computed (its forward, at the state before it).
    B is inferred from initial_state, control and the models, T from control or nstep. After a
    divergence (a warning) the rest of a rollout repeats the state reached (MuJoCo's rule).
    """
    models = [model] if isinstance(model, Model) else list(model)
    if not models or not all(isinstance(x, Model) for x in models):
        raise TypeError("model must be an engine.Model or a non-empty sequence of them")
    for i, x in enumerate(models[1:], 1):
        if x._sizes != models[0]._sizes:
            diff = sorted(k for k in x._sizes if x._sizes[k] != models[0]._sizes[k])
            raise ValueError(f"models are not compatible: model {i} differs from model 0 in "
                             f"{', '.join(diff)}")
    batch = _Batch(models, _check_spec(state_spec), _check_spec(control_spec), initial_state,
                   initial_warmstart, control, nstep, state, sensordata)
    datas = _thread_data(models[0], data, nthread, batch.nbatch)
    if chunk_size is None:
        chunk_size = max(1, batch.nbatch // (10 * len(datas)))
    elif isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) \
            or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    if batch.nbatch and batch.nstep:
        if any(x.opt.solver == Solver.LCP for x in batch.models):
            _run_lcp(batch, datas[0])
        else:
            _run(batch, datas, [(r, min(r + chunk_size, batch.nbatch))
                                for r in range(0, batch.nbatch, chunk_size)])
    return batch.state, batch.sensordata


def _run_lcp(batch, d):
    """The rollouts of hard-contact models (Solver.LCP): its step is a Python-level driver
    (engine.hard_contact), which the compiled rollout_kernel cannot call, so the rollouts run one
    after another in the calling thread, each from d reset as rollout_kernel resets it (the LCP's
    warm start forgotten), with the same outputs."""
    from . import hard_contact
    ds = d._struct
    for r in range(batch.nbatch):
        m = batch.models[r if len(batch.models) > 1 else 0]
        ms = m._struct
        reset_state(ms, ds)
        reset_history(ds)
        hard_contact.forget_warm_start(d)
        if batch.initial_state.shape[0] > 0:
            _set_state(ms, ds, batch.state_spec,
                       batch.initial_state[r if batch.initial_state.shape[0] > 1 else 0])
        rc = r if batch.control.shape[0] > 1 else 0
        for t in range(batch.nstep):
            if batch.control_spec:
                _set_state(ms, ds, batch.control_spec,
                           batch.control[rc, t if batch.control.shape[1] > 1 else 0])
            hard_contact.step(m, d)
            _get_state(ms, ds, batch.state_spec, batch.state[r, t])
            batch.sensordata[r, t, :] = d.sensordata


class _Batch:
    """The inputs and outputs of a rollout call, checked, with B (nbatch) and T (nstep) inferred
    as MuJoCo infers them; absent inputs become arrays with no rows (see rollout_kernel)."""

    def __init__(self, models, state_spec, control_spec, initial_state, initial_warmstart,
                 control, nstep, state, sensordata):
        m = models[0]
        if control_spec & ~int(State.USER):
            raise ValueError("control_spec can only contain bits of State.USER")
        if nstep is not None and (isinstance(nstep, bool) or nstep < 0
                                  or not isinstance(nstep, (int, np.integer))):
            raise ValueError(f"nstep must be a non-negative integer, got {nstep!r}")
        x0 = _as_array("initial_state", initial_state, 2)
        w0 = _as_array("initial_warmstart", initial_warmstart, 2)
        u = _as_array("control", control, 3)
        for name, a in (("state", state), ("sensordata", sensordata)):
            if a is not None and (not isinstance(a, np.ndarray) or a.ndim != 3
                                  or a.dtype != np.float64 or not a.flags.c_contiguous):
                raise ValueError(f"{name} must be a C-contiguous float64 array (B, T, n)")
        nbatch = _infer(0, 1, initial_state=x0, initial_warmstart=w0, control=u, state=state,
                        sensordata=sensordata)
        if len(models) > 1 and nbatch == 1:
            nbatch = len(models)
        elif len(models) > 1 and nbatch != len(models):
            raise ValueError(f"{len(models)} models for a batch of {nbatch} rollouts")
        T = _infer(1, 1 if nstep is None else int(nstep), control=u, state=state,
                   sensordata=sensordata)
        if nstep is not None and T != nstep:
            raise ValueError(f"nstep={nstep} but the arrays have {T} steps")
        nstate, ncontrol = state_size(m, state_spec), state_size(m, control_spec)
        nsens = int(getattr(m, "nsensordata", 0))
        for name, a, n in (("initial_state", x0, nstate), ("initial_warmstart", w0, m.nv),
                           ("control", u, ncontrol), ("state", state, nstate),
                           ("sensordata", sensordata, nsens)):
            if a is not None and a.shape[-1] != n:
                raise ValueError(f"trailing dimension of {name} must be {n}, got {a.shape[-1]}")
        for name, a in (("state", state), ("sensordata", sensordata)):
            if a is not None and a.shape[:2] != (nbatch, T):
                raise ValueError(f"{name} must have shape ({nbatch}, {T}, n), got {a.shape}")
        if u is not None and control_spec & EQ_ACTIVE:
            a = _offset(m, control_spec, State.EQ_ACTIVE)
            for r in range(nbatch):
                _check_eq_active(models[r if len(models) > 1 else 0],
                                 u[r if u.shape[0] > 1 else 0, :, a:a + m.neq],
                                 f"control of rollout {r}")
        self.models, self.nbatch, self.nstep = models, nbatch, T
        self.state_spec = state_spec
        self.control_spec = control_spec if u is not None else 0
        self.initial_state = np.zeros((0, nstate)) if x0 is None else x0
        self.initial_warmstart = np.zeros((0, m.nv)) if w0 is None else w0
        self.control = np.zeros((1, 1, 0)) if u is None else u
        self.state = np.empty((nbatch, T, nstate)) if state is None else state
        self.sensordata = np.empty((nbatch, T, nsens)) if sensordata is None else sensordata


def _thread_data(m, data, nthread, nbatch) -> list:
    """One Data per thread: data as given, or made for nthread threads (at most nbatch)."""
    if data is None:
        n = default_nthread() if nthread is None else max(1, int(nthread))
        return [make_data(m) for _ in range(max(1, min(n, nbatch)))]
    datas = [data] if isinstance(data, Data) else list(data)
    if nthread is not None and nthread != len(datas):
        raise ValueError(f"nthread={nthread} but {len(datas)} Data given (one per thread)")
    for d in datas:
        if not isinstance(d, Data) or d.model._sizes != m._sizes:
            raise ValueError("data must be Data of a model with the sizes of model")
    return datas


def _run(batch: _Batch, datas: list, chunks: list) -> None:
    """Each Data's thread (the calling thread for a single Data) takes chunks of rollouts until
    none is left; one rollout_kernel call per chunk, and another after the contacts or rows of
    a step outgrew the Data (which then grows). An error in a thread is raised here."""
    # the interleaved integrator switches m.opt.disableflags during a step: one model per thread
    private = any(x.opt.integrator == Integrator.INTERLEAVE for x in batch.models)
    warmup.join()
    lock = threading.Lock()
    todo = iter(chunks)
    errors = []

    def work(d):
        # each thread its own copies of the models, or its own handles of them
        copies = [x.copy() for x in batch.models] if private else []
        models = typed.List([x._struct for x in copies] if private
                            else [x.thread_struct() for x in batch.models])
        try:
            while not errors:
                with lock:
                    chunk = next(todo, None)
                if chunk is None:
                    return
                r, r_end = chunk
                t = 0
                while r < r_end:
                    r, t = rollout_kernel(models, d._struct, r, t, r_end,
                                          batch.nstep, batch.state_spec, batch.control_spec,
                                          batch.initial_state, batch.initial_warmstart,
                                          batch.control, batch.state, batch.sensordata)
                    if r < r_end:
                        _grow(d.model, d)
        except BaseException as e:
            errors.append(e)

    if len(datas) == 1:
        work(datas[0])
    else:
        threads = [threading.Thread(target=work, args=(d,), daemon=True) for d in datas]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    if errors:
        raise errors[0]

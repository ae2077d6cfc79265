"""engine.sweep: parameter grids as Ray tasks on a local Ray instance (two workers, one session
shared by the tests: conftest.ray_session), the table, the figures, resuming, the command line.

Oracles: the paper's resting penetration kappa^2 eps g / (1 + eps) (section V), and every cell
run on Ray equal, metric for metric, to the same cell run in this process.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import engine
from engine import sweep

ray = pytest.importorskip("ray")
ROOT = Path(__file__).resolve().parent.parent

# a box resting on a plane, and a ball rolling next to it
BOX = """<mujoco model="box on a plane">
  <option timestep="0.005" epsilon="0.1"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="box" pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body name="ball" pos="0.5 0 0.05"><freejoint/><geom type="sphere" size="0.05"/></body>
  </worldbody>
  <keyframe><key name="rolling" qpos="0 0 0.1 1 0 0 0  0.5 0 0.05 1 0 0 0"
    qvel="0 0 0 0 0 0  1 0 0 0 20 0"/></keyframe>
</mujoco>"""
METRICS = ["penetration:box", "creep:box", "energy_drift", "iterations", "realtime",
           "divergence"]


@pytest.fixture
def box(tmp_path):
    path = tmp_path / "box.xml"
    path.write_text(BOX)
    return path


def small_sweep(path, duration=1.0, metrics=METRICS, params=None, keyframe=None):
    m, sha = sweep.load_model_any(str(path))
    params = params or [sweep.parse_param("epsilon=0.01:0.1:log:2"),
                        sweep.parse_param("kappa=0.02,0.05")]
    return m, sweep.Sweep(str(path), sha, params, duration, metrics, 0.01, keyframe)


def read_rows(directory):
    rows = {}
    for line in (Path(directory) / sweep.CELLS).read_text().splitlines():
        row = json.loads(line)
        rows[row["cell"]] = row
    return rows


# ------------------------------------------------------------------------------------------------
# parameters and metrics, in this process
# ------------------------------------------------------------------------------------------------
def test_param_specs():
    p = sweep.parse_param("epsilon=1e-3:1:log:4")
    np.testing.assert_allclose(p.values, [1e-3, 1e-2, 1e-1, 1.0], rtol=1e-12)
    assert sweep.parse_param("kappa=0.01:0.04:lin:4").values == pytest.approx(
        (0.01, 0.02, 0.03, 0.04))
    assert sweep.parse_param("iterations=5,10,50").values == (5, 10, 50)
    assert sweep.parse_param("solver=PGS,NEWTON").values == ("PGS", "NEWTON")
    for bad in ("epsilon", "epsilon=1:2:cubic:3", "epsilon=0:1:log:3", "epsilon=1:2:log",
                "epsilon=a:b:lin:3"):
        with pytest.raises(ValueError, match="--param"):
            sweep.parse_param(bad)


def test_params_set_options_entries_and_named_attributes(box):
    m = engine.load_model(str(box))
    sweep.parse_param("solver=NEWTON").apply(m, "NEWTON")
    assert m.opt.solver == engine.Solver.NEWTON
    sweep.Param("gravity[2]", (-3.0,)).apply(m, -3.0)
    assert list(m.opt.gravity) == [0.0, 0.0, -3.0]
    sweep.Param("geom:floor.friction[0]", (0.4,)).apply(m, 0.4)
    assert m.geom_friction[m.geom("floor").id, 0] == 0.4
    sweep.Param("body:box.mass", (2.5,)).apply(m, 2.5)
    assert m.body_mass[m.body("box").id] == 2.5
    with pytest.raises(ValueError, match="kappa"):
        sweep.Param("kapa", (1,)).apply(m, 1)              # names the closest option
    with pytest.raises(ValueError, match="gravity\\[0\\]"):
        sweep.Param("gravity", (1,)).apply(m, 1)           # a vector needs an entry
    with pytest.raises(ValueError, match="no body"):
        sweep.Param("body:crate.mass", (1,)).apply(m, 1)
    with pytest.raises(ValueError, match="must be positive"):
        sweep.Param("kappa", (1,)).apply(m, -1.0)


def test_metrics_against_physics(box):
    """Resting penetration as the paper predicts (kappa^2 eps g / (1 + eps)); the box does not
    creep; no divergence; the registry refuses unknown metrics and missing bodies."""
    m = engine.load_model(str(box))
    params = [sweep.Param("epsilon", (0.1,)), sweep.Param("kappa", (0.03,))]
    row = sweep.run_cell(m, params, (0.1, 0.03), 1.5, METRICS)
    expected = 0.03 ** 2 * 0.1 * 9.81 / 1.1
    assert row["penetration_box"] == pytest.approx(expected, rel=0.02)
    assert row["creep_box"] < 1e-6
    assert row["diverged"] == 0 and np.isnan(row["divergence_time"])
    assert 1 <= row["iterations_mean"] <= row["iterations_max"] <= m.opt.iterations
    # contacts store no energy: the bodies' weight times the depth they sank is lost
    mass = m.body("box").mass[0] + m.body("ball").mass[0]
    assert row["energy_drift"] == pytest.approx(-mass * 9.81 * expected, rel=0.05)
    assert row["steps"] == 300 and row["sim_time"] == pytest.approx(1.5)
    assert row["realtime_factor"] == pytest.approx(row["sim_time"] / row["wall"])
    with pytest.raises(ValueError, match="unknown metric"):
        sweep.make_metric(m, "penetrate:box")
    with pytest.raises(ValueError, match="needs a body"):
        sweep.make_metric(m, "creep")
    with pytest.raises(ValueError, match="no body"):
        sweep.make_metric(m, "creep:crate")


SPRING = """<mujoco model="stiff spring">
  <worldbody><body><joint name="x" type="slide" axis="1 0 0" stiffness="1e6"/>
    <geom type="sphere" size="0.1" mass="1" contype="0" conaffinity="0"/></body></worldbody>
  <keyframe><key qpos="0.01"/></keyframe>
</mujoco>"""


def test_divergence_metric():
    """An undamped spring of natural frequency 1000 rad/s: stable with the semi-implicit Euler
    integrator while h omega < 2, divergent (the state grows past 1e10 and is reset) above."""
    m = engine.load_model_from_string(SPRING)
    p = [sweep.Param("timestep", (1e-3, 1e-2))]
    ok = sweep.run_cell(m, p, (1e-3,), 0.5, ["divergence", "energy_drift"], keyframe=0)
    assert ok["diverged"] == 0 and np.isnan(ok["divergence_time"])
    assert abs(ok["energy_drift"]) < 0.05 * 0.5 * 1e6 * 0.01 ** 2    # bounded oscillation
    bad = sweep.run_cell(m, p, (1e-2,), 0.5, ["divergence"], keyframe=0)
    assert bad["diverged"] == 1
    # |x| grows by about (h omega)^2 = 100 per step from 0.01: past 1e10 within 7 steps,
    # seen at the first sample (every 0.01 s)
    assert bad["divergence_time"] == pytest.approx(0.01)


# ------------------------------------------------------------------------------------------------
# sweeps on Ray
# ------------------------------------------------------------------------------------------------
def test_sweep_on_ray_equals_the_cells_run_here(ray_session, box, tmp_path):
    m, sw = small_sweep(box)
    out = tmp_path / "sw"
    result = sweep.run_sweep(m, sw, out, progress=False)
    assert result["ran"] == result["cells"] == 4 and not result["errors"]
    rows = read_rows(out)
    workers = {r["worker"] for r in rows.values()}
    assert all(str(os.getpid()) not in w for w in workers)          # run by the Ray workers
    for c, values in sweep.grid(sw.params):
        here = sweep.run_cell(m, sw.params, values, sw.duration, sw.metrics)
        for k, v in here.items():
            if k not in ("wall", "realtime_factor"):
                assert rows[c][k] == v or (np.isnan(v) and np.isnan(rows[c][k])), (c, k)
        eps, kappa = values
        assert rows[c]["penetration_box"] == pytest.approx(kappa ** 2 * eps * 9.81 / (1 + eps),
                                                           rel=0.03)
    # the table: one row per cell, parameters then metrics; the Parquet twin holds the same
    table = sweep.read_table(out)
    assert [r["cell"] for r in table] == ["c0000", "c0001", "c0002", "c0003"]
    assert [(r["epsilon"], r["kappa"]) for r in table] == [
        (0.01, 0.02), (0.01, 0.05), (0.1, 0.02), (0.1, 0.05)]
    for r in table:
        assert r["penetration_box"] == rows[r["cell"]]["penetration_box"]  # written exactly
    pq = pytest.importorskip("pyarrow.parquet")
    t = pq.read_table(out / "results.parquet").to_pydict()
    assert t["penetration_box"] == [r["penetration_box"] for r in table]
    # a heatmap per metric column, its four cells in four colours
    from PIL import Image
    png = out / "heatmap_penetration_box.png"
    assert (out / "heatmap_penetration_box.svg").exists()
    with Image.open(png) as im:
        px = np.asarray(im.convert("RGB")).reshape(-1, 3)
    colours, counts = np.unique(px, axis=0, return_counts=True)
    assert (counts > 500).sum() >= 5          # background and the four cells' blocks


def _shared_probe(arr, k):
    """A task of map_tasks: its value, and whether arr is the copy its worker keeps."""
    from engine import sweep as worker_sweep
    kept = any(shared and arr is shared[0] for shared in worker_sweep._SHARED.values())
    return os.getpid(), kept, float(arr[k])


def test_shared_arguments_fetched_once_per_worker(ray_session):
    # the workers cannot import this module: its function travels by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        for scale in (1.0, 2.0, 3.0):      # later calls get their own shared object, not a kept one
            seen = {}
            sweep.map_tasks(_shared_probe, [(k, (k,)) for k in range(12)], seen.__setitem__,
                            shared=(scale * np.arange(12.0),))
            assert {k: v[2] for k, v in seen.items()} == {k: scale * k for k in range(12)}
            assert all(kept for _, kept, _ in seen.values())
            assert len({pid for pid, _, _ in seen.values()}) <= 2
    finally:
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def test_batch_size_is_guided_by_what_is_left_and_the_time_per_call():
    assert sweep.batch_size(64, 2, None) == 1             # nothing timed yet: one call
    assert sweep.batch_size(64, 2, 1e-3) == 16            # a quarter of what is left
    assert sweep.batch_size(20, 2, 1e-3) == 5
    assert sweep.batch_size(3, 2, 1e-3) == 1              # the last ones alone
    assert sweep.batch_size(64, 2, 0.2) == int(sweep.BATCH_SECONDS / 0.2)   # long calls
    assert sweep.batch_size(64, 2, 5.0) == 1


def _batch_probe(arr, k):
    """A task of map_tasks: the Ray task that ran it and arr[k]; key 7 raises."""
    if k == 7:
        raise ValueError("call 7 fails")
    return ray.get_runtime_context().get_task_id(), float(arr[k])


def test_calls_run_in_batches_and_a_failing_call_fails_alone(ray_session):
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        seen = {}
        sweep.map_tasks(_batch_probe, [(k, (k,)) for k in range(40)], seen.__setitem__,
                        shared=(np.arange(40.0),),
                        error_row=lambda k, e: ("error", f"{type(e).__name__}: {e}"))
        assert seen.pop(7) == ("error", "ValueError: call 7 fails")
        assert {k: v[1] for k, v in seen.items()} == {k: float(k) for k in range(40) if k != 7}
        tasks = {v[0] for v in seen.values()}
        assert len(tasks) < 20                 # the calls timed, later tasks carry several
        with pytest.raises(ValueError, match="call 7 fails"):     # without error_row: raised
            sweep.map_tasks(_batch_probe, [(k, (k,)) for k in range(10)], lambda k, v: None,
                            shared=(np.arange(10.0),))
    finally:
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


LOCAL_CALLS = """
import os, sys, time
from engine import sweep

repeatable = sys.argv[1] == "repeatable"
N = 60

def call(driver, k):
    # 6 s of calls in the driver: Ray starts meanwhile and gets some of them
    if os.getpid() != driver and repeatable:
        time.sleep(3600)                 # a stuck worker: the driver runs its calls too
    time.sleep(0.1)
    if not repeatable:                   # a second run of a call would fail here
        os.close(os.open(f"ran_{k}", os.O_CREAT | os.O_EXCL))
    if k == 3:
        raise ValueError("call 3 fails")
    return os.getpid(), 2.0 * k

got = []
sweep.map_tasks(call, [(k, (k,)) for k in range(N)], lambda k, v: got.append((k, v)),
                shared=(os.getpid(),), jobs=2, error_row=lambda k, e: ("error", str(e)),
                repeatable=repeatable)
assert sorted(k for k, _ in got) == list(range(N))       # each once (also if run twice)
seen = dict(got)
assert seen.pop(3) == ("error", "call 3 fails"), seen.get(3)
assert {k: v[1] for k, v in seen.items()} == {k: 2.0 * k for k in range(N) if k != 3}, seen
print(sum(v[0] == os.getpid() for v in seen.values()), len(seen))
"""


@pytest.mark.parametrize("mode", ["once", "repeatable"])
def test_a_sweep_that_starts_ray_runs_calls_here_meanwhile(tmp_path, mode):
    # a fresh interpreter: Ray not yet started (the session's Ray is started in this one).
    # Every key gets one result, the right one; calls that are not repeatable run once (each
    # creates a file of its own exclusively; the workers share this directory), repeatable
    # ones held by a worker still busy are run here too, and the first result counts (the
    # stuck workers' calls: waiting for them would end in the timeout).
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", LOCAL_CALLS, mode], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    here, total = out.stdout.split()[-2:]
    assert int(total) == 59
    assert int(here) > 0         # ray.init alone takes seconds: this process ran calls meanwhile
    if mode == "once":
        assert len(list(tmp_path.glob("ran_*"))) == 60
    else:                        # the stuck workers' calls too
        assert int(here) == 59


def test_resume_runs_only_the_missing_cells(ray_session, box, tmp_path):
    m, sw = small_sweep(box, duration=0.3)
    out = tmp_path / "sw"
    sweep.run_sweep(m, sw, out, progress=False, figures=False)
    before = read_rows(out)
    lines = (out / sweep.CELLS).read_text().splitlines()
    # an interruption: two cells never finished, the last line cut short
    kept = [ln for ln in lines if json.loads(ln)["cell"] not in ("c0001", "c0003")]
    (out / sweep.CELLS).write_text("\n".join(kept) + "\n" + lines[1][:25])
    result = sweep.run_sweep(m, sw, out, progress=False, figures=False)
    assert result["ran"] == 2 and result["cells"] == 4
    after = read_rows(out)
    for c in ("c0000", "c0002"):
        assert after[c] == before[c]                  # not run again: same worker and wall
    assert set(after) == {"c0000", "c0001", "c0002", "c0003"}
    # a directory holding another sweep is refused
    _, other = small_sweep(box, duration=0.4)
    with pytest.raises(ValueError, match="another sweep.*duration"):
        sweep.run_sweep(m, other, out, progress=False)


def test_failing_cell_is_reported_and_the_others_run(ray_session, box, tmp_path):
    m, sw = small_sweep(box, duration=0.2, metrics=["energy_drift"],
                        params=[sweep.parse_param("kappa=0.02,-1,0.05")])
    result = sweep.run_sweep(m, sw, tmp_path / "sw", progress=False, figures=False)
    assert list(result["errors"]) == ["c0001"]
    assert "kappa must be positive" in result["errors"]["c0001"]
    table = sweep.read_table(tmp_path / "sw")
    assert [r["status"] for r in table] == ["ok", "error", "ok"]
    again = sweep.run_sweep(m, sw, tmp_path / "sw", progress=False, figures=False)
    assert again["ran"] == 0 and list(again["errors"]) == ["c0001"]
    again = sweep.run_sweep(m, sw, tmp_path / "sw", progress=False, figures=False,
                            retry_failed=True)
    assert again["ran"] == 1 and list(again["errors"]) == ["c0001"]


def test_command_line_on_a_running_cluster_interrupted_and_resumed(ray_session, box, tmp_path):
    """python -m engine.sweep ... --address ADDR (this module's Ray): killed once two cells are
    done, then run again, it finishes the others only."""
    address = ray.get_runtime_context().gcs_address
    out = tmp_path / "cli"
    args = [str(box), "--param", "epsilon=0.01:0.1:log:3", "--param", "kappa=0.02,0.04",
            "--duration", "2", "--metric", "penetration:box", "--metric", "iterations",
            "--out", str(out), "--quiet"]
    proc = subprocess.Popen([sys.executable, "-m", sweep.__name__, *args, "--address", address,
                             "--jobs", "1"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    cells = out / sweep.CELLS
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        if cells.exists() and len(cells.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = read_rows(out)
    assert 2 <= len(before) < 6
    assert sweep.main(args + ["--no-figures"]) == 0     # this process: the module's Ray
    after = read_rows(out)
    assert len(after) == 6
    for c, row in before.items():
        assert after[c] == row
    table = sweep.read_table(out)
    assert len(table) == 6 and {r["status"] for r in table} == {"ok"}


def test_command_line_errors(box, tmp_path, capsys):
    base = [str(box), "--duration", "0.1", "--serial", "--out", str(tmp_path / "e")]
    assert sweep.main(base + ["--param", "kapa=0.01,0.02"]) == 2
    assert "did you mean 'kappa'" in capsys.readouterr().err
    assert sweep.main(base + ["--param", "kappa=0.01,0.02", "--metric", "creep"]) == 2
    assert "needs a body" in capsys.readouterr().err
    assert sweep.main([str(tmp_path / "none.xml"), "--param", "kappa=1,2", "--duration", "1",
                       "--serial"]) == 2
    assert "none.xml" in capsys.readouterr().err


def test_pickled_model_and_keyframe_serial(box, tmp_path):
    """The model as a pickled Model; cells from a keyframe (the ball rolls: it creeps)."""
    import pickle
    pkl = tmp_path / "box.pkl"
    pkl.write_bytes(pickle.dumps(engine.load_model(str(box))))
    out = tmp_path / "pk"
    code = sweep.main([str(pkl), "--param", "geom:floor.friction[0]=0.5,1", "--duration",
                       "0.3", "--metric", "creep:ball", "--keyframe", "rolling", "--serial",
                       "--out", str(out), "--quiet"])
    assert code == 0
    table = sweep.read_table(out)
    assert [r["geom:floor.friction[0]"] for r in table] == [0.5, 1]
    assert all(r["creep_ball"] > 0.1 for r in table)
    m, row = sweep.cell_model(str(out / "c0001"))
    assert m.geom_friction[m.geom("floor").id, 0] == 1.0 and row["creep_ball"] > 0.1

"""Recording from the studio (the runner thread and --record) and the Analysis panel's worker,
without a window: the file loads with engine.load_trajectory, replaying its controls from its
initial state reproduces its states, and the analysis of it recovers the recorded controls."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import engine
from studio.runner import Runner

ROOT = Path(__file__).resolve().parent.parent


def newton_single_joint(tmp_path) -> Path:
    """assets/single_joint.xml with the NEWTON solver converged (the inverse is then exact)."""
    text = (ROOT / "assets" / "single_joint.xml").read_text().replace(
        '<option timestep="0.01"',
        '<option solver="Newton" iterations="100" tolerance="1e-15" timestep="0.01"')
    p = tmp_path / "single_joint_newton.xml"
    p.write_text(text)
    return p


def wait_for(cond, timeout=10.0):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def record_in_thread(model_path, traj_path, seconds=0.4):
    m = engine.load_model(str(model_path))
    d = engine.make_data(m)
    engine.forward(m, d)
    r = Runner(m, d)
    r.start_thread()
    rng = np.random.default_rng(0)

    def push(m, d):
        d.ctrl[:] = rng.uniform(-6, 6, m.nu)
    r.start_recording(traj_path)
    assert wait_for(lambda: r.recording)
    t_end = r.snapshot.time + seconds
    while r.snapshot.time < t_end:
        r.submit(push)                         # controls change between steps, as from the UI
        time.sleep(0.02)
    r.stop_recording()
    assert wait_for(lambda: not r.recording)
    r.stop_thread()
    return m


def test_recording_through_the_runner_loads_and_replays(tmp_path):
    path = tmp_path / "run.traj"
    m = record_in_thread(newton_single_joint(tmp_path), path)
    traj = engine.load_trajectory(str(path))
    n = len(traj)
    assert n >= 20
    h = m.opt.timestep
    np.testing.assert_allclose(np.diff(traj.time), h, rtol=1e-9)   # every step, none missing
    # replay: from the stored initial state, the recorded controls reproduce the recorded states
    d = engine.make_data(m)
    init = traj.initial
    d.time = init["time"]
    d.qpos[:], d.qvel[:], d.act[:] = init["qpos"], init["qvel"], init["act"]
    for k in range(n):
        d.ctrl[:] = traj.ctrl[k]
        engine.step(m, d)
        np.testing.assert_allclose(d.qpos, traj.qpos[k], rtol=0, atol=1e-8)
        np.testing.assert_allclose(d.qvel, traj.qvel[k], rtol=0, atol=1e-8)


def test_record_option_headless(tmp_path):
    path = tmp_path / "cli.traj"
    proc = subprocess.run([sys.executable, "-m", "studio", str(ROOT / "assets" / "single_joint.xml"),
                           "--headless", "--duration", "0.5", "--record", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    steps = int(proc.stdout.split("steps=")[1].split()[0])
    traj = engine.load_trajectory(str(path))
    assert len(traj) == steps > 0


def test_analysis_panel_worker_recovers_the_controls(tmp_path):
    from studio.ui.analysis import AnalysisState
    model = newton_single_joint(tmp_path)
    path = tmp_path / "run.traj"
    record_in_thread(model, path)
    st = AnalysisState()
    st.start(path, str(model))
    assert st.wait(600)
    assert st.error == "" and st.result is not None
    labels = [s[0] for s in st.signals]
    assert any(label.startswith("ctrl") for label in labels)
    assert any(label.startswith("impulse") for label in labels)
    _, t, ref, got = next(s for s in st.signals if s[0].startswith("ctrl"))
    ok = np.isfinite(ref) & np.isfinite(got)
    assert ok.sum() >= 20
    np.testing.assert_allclose(got[ok], ref[ok], rtol=1e-6, atol=1e-6)
    files = st.export(str(tmp_path / "out"))
    assert any(f.endswith(".csv") for f in files) and any(f.endswith(".png") for f in files)
    assert all(Path(f).stat().st_size > 0 for f in files)

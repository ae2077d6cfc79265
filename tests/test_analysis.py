"""Inverse analysis of recordings: the controls and forces recovered from the motion alone.

The oracles are the inputs the simulation was driven with (random controls, applied forces and
wrenches) and the constraint forces the converged forward solver produced; the analysis sees only
the recorded states and inputs other than the controls.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import engine
from engine.analysis import AnalysisError, analyse
from engine.trajectory import TrajectoryModelMismatch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARM = os.path.join(ROOT, "tests", "data", "trajectory_arm.xml")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_trajectory import drive  # noqa: E402


def converged(m):
    m.opt.solver = engine.Solver.NEWTON
    m.opt.tolerance = 1e-12
    m.opt.iterations = 100
    return m


def record(m, path, n, seed=7, initial=True, reset_at=None, edit=None):
    d = engine.make_data(m)
    rng = np.random.default_rng(seed)
    with engine.Recorder(m, path, d=d if initial else None) as rec:
        for k in range(n):
            if k == reset_at:
                engine.reset_data(m, d)
            if edit is not None and k == edit[0]:
                getattr(d, edit[1])[edit[2]] += 1e-3     # an edit that keeps the time
            drive(m, d, rng)
            engine.step(m, d)
            rec.record(d)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    path = tmp_path_factory.mktemp("rec") / "arm.traj"
    record(converged(engine.load_model(ARM)), path, 400)
    return path


def test_recovers_controls_and_impulses(recording):
    m = engine.load_model(ARM)          # the file's options; the recording's are applied
    traj = engine.load_trajectory(recording)
    a = analyse(traj, m)
    assert a.analysed.all() and not a.skipped
    assert m.opt.solver == engine.Solver.PGS, "the model's own options are restored"
    kinds = [k for k, _ in a.kinds]
    assert kinds == ["ctrl", "ctrl", "act"]
    # controls: the random inputs, clamped to ctrlrange for the servo
    ctrl = traj.ctrl.copy()
    ctrl[:, 1] = np.clip(ctrl[:, 1], -1.5, 1.5)
    np.testing.assert_allclose(a.ctrl_recovered[:, :2], ctrl[:, :2], rtol=0, atol=1e-8)
    assert np.isnan(a.ctrl_recovered[:, 2]).all()
    # the filter actuator: the activation before each step
    before = np.concatenate([traj.initial["act"][None], traj.act[:-1]])
    np.testing.assert_allclose(a.act_recovered[:, 2], before[:, 0], rtol=0, atol=1e-8)
    assert np.abs(before).max() > 0.05
    # generalised force, box wrench included: J' xfrc_applied
    scale = np.abs(a.qfrc_expected).max()
    np.testing.assert_allclose(a.qfrc_inverse, a.qfrc_expected, rtol=0, atol=1e-8 * scale)
    # constraint forces: every row of every step, against the forward solver's
    families = {s.family for s in a.efc_signals.values()}
    assert {"friction", "contact_normal", "contact_friction"} <= families
    nrows = sum(len(s.steps) for s in a.efc_signals.values())
    assert nrows == traj.efc_offset[-1]
    summary = a.summary()
    for fam in ("efc_friction", "efc_contact_normal", "efc_contact_friction"):
        st = summary["families"][fam]
        assert st["n"] > 100 and st["scale"] > 0.1
        assert st["max_rel"] < 1e-6, (fam, st)
    for fam in ("ctrl", "act", "actuator_force", "qfrc"):
        assert summary["families"][fam]["max_rel"] < 1e-8, (fam, summary["families"][fam])
    # dry joint friction both sticking (inside the bound) and slipping (on it)
    fr = np.concatenate([s.forward for s in a.efc_signals.values() if s.family == "friction"])
    bound = np.abs(fr).max()
    assert np.any(np.abs(fr) < 0.9 * bound) and np.any(np.abs(fr) > (1 - 1e-9) * bound)


@pytest.mark.parametrize("integrator", ["IMPLICIT", "IMPLICITFAST", "EXPLICIT"])
def test_other_one_stage_integrators(tmp_path, integrator):
    """Recordings made with the implicit integrators (and explicit Euler) are analysed like
    the semi-implicit ones: every step, controls and forces recovered; an edit of the
    velocities between records is still detected (through the recovered forward acceleration)."""
    m = converged(engine.load_model(ARM))
    m.opt.integrator = engine.Integrator[integrator]
    path = tmp_path / "run.traj"
    record(m, path, 150)
    traj = engine.load_trajectory(path)
    a = analyse(traj, engine.load_model(ARM))
    assert a.analysed.all() and not a.skipped
    fam = a.summary()["families"]
    for name in ("efc_friction", "efc_contact_normal", "efc_contact_friction"):
        assert fam[name]["n"] > 30 and fam[name]["max_rel"] < 1e-6, (name, fam[name])
    for name in ("ctrl", "act", "actuator_force", "qfrc"):
        assert fam[name]["max_rel"] < 1e-8, (name, fam[name])
    record(m, tmp_path / "edit.traj", 40, edit=(25, "qvel", 1))
    e = analyse(engine.load_trajectory(tmp_path / "edit.traj"), engine.load_model(ARM))
    assert np.flatnonzero(~e.analysed).tolist() == [25]
    assert list(e.skipped) == ["the state was edited between records"]


def test_noslip_steps_with_friction_are_skipped(tmp_path):
    """noslip changes the friction forces after the solver; the soft inverse cannot recover
    them, so the steps with friction rows are skipped (with the reason), the others analysed."""
    m = converged(engine.load_model(ARM))
    m.opt.noslip_iterations = 5
    path = tmp_path / "noslip.traj"
    record(m, path, 60)
    traj = engine.load_trajectory(path)
    a = analyse(traj, engine.load_model(ARM))
    types = [traj.efc(k)["type"] for k in range(len(traj))]
    friction = np.array([np.isin(t, [1, 2, 6, 7]).any() for t in types])
    assert friction.any()
    np.testing.assert_array_equal(a.analysed, ~friction)
    assert a.skipped == {"noslip changed the friction forces (no inverse)": int(friction.sum())}


def test_pyramidal_cone(tmp_path):
    """Pyramidal contacts: one signal per edge, forward and inverse equal."""
    m = converged(engine.load_model(ARM))
    m.opt.cone = engine.Cone.PYRAMIDAL
    path = tmp_path / "pyramid.traj"
    record(m, path, 150)
    a = analyse(engine.load_trajectory(path), engine.load_model(ARM))
    assert a.analysed.all()
    edges = [s for s in a.efc_signals.values() if s.family == "contact_edge"]
    assert any(s.label.endswith("edge spin-") for s in edges)   # the tip's condim 4
    fam = a.summary()["families"]
    assert fam["efc_contact_edge"]["n"] > 100 and fam["efc_contact_edge"]["max_rel"] < 1e-6
    assert fam["ctrl"]["max_rel"] < 1e-8


def test_skipped_steps(tmp_path):
    """No initial state: the first step cannot be paired; a reset breaks the time sequence;
    an edit of the state between two steps (velocity or position) is detected."""
    m = converged(engine.load_model(ARM))
    path = tmp_path / "reset.traj"
    record(m, path, 60, initial=False, reset_at=30)
    a = analyse(engine.load_trajectory(path), m)
    assert a.analysed.sum() == 58
    assert not a.analysed[0] and not a.analysed[30]
    assert sum(a.skipped.values()) == 2
    for field, i in (("qvel", 1), ("qpos", 0), ("qpos", 3)):
        record(m, tmp_path / "edit.traj", 40, edit=(25, field, i))
        e = analyse(engine.load_trajectory(tmp_path / "edit.traj"), m)
        assert np.flatnonzero(~e.analysed).tolist() == [25], field
        assert list(e.skipped) == ["the state was edited between records"]
    ok = a.analysed
    np.testing.assert_allclose(a.ctrl_recovered[ok, 0], engine.load_trajectory(path).ctrl[ok, 0],
                               rtol=0, atol=1e-8)


def test_cli_writes_csv_png_json(recording, tmp_path):
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "engine.analyze", str(recording), "--out", str(out)],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr
    assert "400/400 steps analysed" in r.stdout
    assert "100.0% 400/400 steps" in r.stderr          # the progress bar
    summary = json.loads((out / "summary.json").read_text())
    assert summary["analysed"] == 400 and summary["model_path"] == os.path.abspath(ARM)
    assert summary["families"]["efc_contact_normal"]["max_rel"] < 1e-6
    assert summary["signals"]["ctrl shoulder_motor"]["max_abs"] < 1e-8
    header = (out / "controls.csv").read_text().splitlines()[0].split(",")
    assert header[:4] == ["step", "time", "shoulder_motor_ctrl_recorded",
                          "shoulder_motor_ctrl_recovered"]
    assert "wrist_filter_act_recovered" in header
    table = np.loadtxt(out / "controls.csv", delimiter=",", skiprows=1)
    assert table.shape == (400, len(header))
    traj = engine.load_trajectory(recording)
    np.testing.assert_array_equal(table[:, 2], traj.ctrl[:, 0])
    np.testing.assert_allclose(table[:, 3], traj.ctrl[:, 0], rtol=0, atol=1e-8)
    lines = (out / "impulses.csv").read_text().splitlines()
    assert lines[0] == "step,time,signal,family,unit,forward,inverse"
    assert len(lines) - 1 == traj.efc_offset[-1]
    # plain numbers, read back exactly
    numbers = np.loadtxt(out / "impulses.csv", delimiter=",", skiprows=1, usecols=(0, 1, 5, 6))
    assert numbers.shape == (traj.efc_offset[-1], 4)
    np.testing.assert_array_equal(numbers[:, 1], traj.time[numbers[:, 0].astype(int)])
    assert set(np.loadtxt(out / "impulses.csv", delimiter=",", skiprows=1, usecols=4,
                          dtype=str)) == {"N", "N m"}     # the tip's spin row in N m
    qfrc = (out / "qfrc.csv").read_text().splitlines()
    assert len(qfrc) == 401 and qfrc[0].split(",")[2:4] == ["shoulder_applied", "shoulder_inverse"]
    for name in ("controls", "impulses"):
        img = Image.open(out / f"{name}.png")
        assert img.format == "PNG" and img.size[0] >= 500 and img.size[1] >= 200
        # drawn: more than the white background and black text
        assert len(img.convert("RGB").getcolors(1 << 20)) > 10
        assert (out / f"{name}.svg").read_text().lstrip().startswith("<?xml")


def test_model_mismatch(recording, tmp_path):
    other_path = tmp_path / "longer_arm.xml"
    other_path.write_text(open(ARM).read().replace('fromto="0 0 0 0.25 0 0"',
                                                   'fromto="0 0 0 0.26 0 0"'))
    other = engine.load_model(other_path)
    with pytest.raises(TrajectoryModelMismatch, match="longer_arm.xml"):
        analyse(engine.load_trajectory(recording), other)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "engine.analyze", str(recording), "--model",
                        str(other_path), "--out", str(tmp_path / "out"), "--quiet"],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 2
    assert "trajectory_arm.xml" in r.stderr and "longer_arm.xml" in r.stderr
    assert not (tmp_path / "out").exists()


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "engine.analyze", *map(str, args), "--quiet"],
                          capture_output=True, text=True, env=env, timeout=900)


def test_hard_equality_is_refused(tmp_path):
    """A model with an active hard equality cannot be inverted: analyse raises AnalysisError
    before the first step, and the command line says so and exits with code 2 (no
    traceback, no outputs)."""
    path = tmp_path / "hard_arm.xml"
    path.write_text(open(ARM).read().replace(
        "</actuator>", '</actuator><equality><joint name="lock" joint1="wrist" hard="true"/>'
                       '</equality>'))
    m = converged(engine.load_model(path))
    record(m, tmp_path / "hard.traj", 5)
    with pytest.raises(AnalysisError, match="hard equality constraints \\(lock\\)"):
        analyse(engine.load_trajectory(tmp_path / "hard.traj"), m)
    r = run_cli(tmp_path / "hard.traj", "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert "hard equality constraints (lock)" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_nothing_analysed_fails(tmp_path):
    """A recording made with RK4 (no step can be inverted): the command line writes the
    outputs, gives the reason and exits with code 1."""
    m = converged(engine.load_model(ARM))
    m.opt.integrator = engine.Integrator.RK4
    record(m, tmp_path / "rk4.traj", 10)
    r = run_cli(tmp_path / "rk4.traj", "--out", tmp_path / "out")
    assert r.returncode == 1, r.stderr
    assert "none of the 10 steps could be analysed" in r.stderr
    assert "skipped 10: the RK4 integrator has several stages (no inverse)" in r.stdout
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["analysed"] == 0


def test_impulse_panels_limit_is_reported(recording, tmp_path, monkeypatch, capsys):
    """impulses.png draws at most IMPULSE_PANELS objects: the summary and the command line
    say how many of how many (here with the limit lowered to 2)."""
    from engine import analysis, analyze
    monkeypatch.setattr(analysis, "IMPULSE_PANELS", 2)
    assert analyze.main([str(recording), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    groups = {s.rsplit(" ", 2)[0] for s in summary["signals"] if s.startswith("contact ")}
    assert summary["impulses_png"]["shown"] == 2
    assert summary["impulses_png"]["objects"] > len(groups) >= 2
    assert (f"impulses.png shows 2 of {summary['impulses_png']['objects']} constraint objects"
            in capsys.readouterr().out)

"""Inverse analysis of a recording with the rigid-contact inverse models (engine.analysis with
inverse="noslip" | "coulomb" | "convex", and python -m engine.analyze --inverse)."""
import json
import pathlib

import numpy as np
import pytest

import engine
from engine import analysis, analyze

ROOT = pathlib.Path(__file__).resolve().parents[1]
GO1 = str(ROOT / "assets" / "unitree_go1" / "scene.xml")


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """Go1 standing on its position actuators: 0.2 s to settle, then 60 recorded steps."""
    m = engine.load_model(GO1)
    d = engine.make_data(m)
    engine.reset_keyframe(m, d, 0)
    engine.step(m, d, 100)
    path = tmp_path_factory.mktemp("rec") / "go1.traj"
    with engine.Recorder(m, str(path), d=d) as rec:
        for _ in range(60):
            engine.step(m, d)
            rec.record(d)
    return m, engine.load_trajectory(str(path))


@pytest.mark.parametrize("model", ["noslip", "coulomb", "convex"])
def test_rigid_analysis(recording, model):
    """Every step analysed; per foot the predicted normal force and the forward's; their sums
    both carry the robot (within 5 % of the weight: the robot barely moves); the recorded
    chatter is that of the recorded actuator forces (computed here with numpy)."""
    m, traj = recording
    a = analysis.analyse(traj, m, inverse=model)
    assert a.analysed.all() and a.inverse_model == model
    normals = [s for s in a.efc_signals.values() if s.family == "contact_normal"]
    assert len(normals) == 4
    weight = m.body_mass.sum() * -m.opt.gravity[2]
    pred = np.sum([s.arrays()[2] for s in normals], axis=0)
    fwd = np.sum([s.arrays()[1] for s in normals], axis=0)
    assert np.all(np.abs(pred - weight) < 0.05 * weight)
    assert np.all(np.abs(fwd - weight) < 0.05 * weight)
    if model != "noslip":                     # forces in the (linearised) cones
        for s in a.efc_signals.values():
            if s.family == "contact_friction":
                mu = 0.8                                          # the feet's friction
                n = a.efc_signals[s.group + " normal"].arrays()[2]
                assert np.all(np.abs(s.arrays()[2]) <= mu * n * (1 + 1e-9) + 1e-9)
    expect = np.abs(np.diff(traj.actuator_force, axis=0)).sum()
    s = a.summary()
    assert s["chatter"]["recorded"]["sum"] == pytest.approx(expect, rel=1e-12)
    assert s["chatter"]["recovered"]["steps"] == len(traj) - 1
    np.testing.assert_array_equal(s["chatter"]["recovered"]["sum"],
                                  np.abs(np.diff(a.force_recovered, axis=0)).sum())


def test_rigid_analysis_outputs_and_cli(recording, tmp_path, capsys):
    m, traj = recording
    out = tmp_path / "out"
    code = analyze.main([traj.path, "--inverse", "noslip", "--out", str(out), "--quiet"])
    assert code == 0
    text = capsys.readouterr().out
    assert "noslip inverse" in text and "torque chatter" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["inverse_model"] == "noslip" and summary["chatter"]["recovered"]["sum"] > 0
    for name in ("controls.csv", "impulses.csv", "qfrc.csv", "controls.png", "impulses.svg"):
        assert (out / name).stat().st_size > 0
    with pytest.raises(SystemExit):
        analyze.main([traj.path, "--inverse", "rigid"])
    with pytest.raises(ValueError, match="inverse must be"):
        analysis.analyse(traj, m, inverse="rigid")

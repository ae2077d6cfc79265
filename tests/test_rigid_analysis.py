"""Inverse analysis of a recording with the rigid-contact inverse models (engine.analysis with
inverse_model="noslip" | "coulomb" | "convex", and python -m engine.analyze --inverse)."""
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
    """Go1 standing on its position actuators: 0.2 s to settle, then 60 recorded steps (Newton
    solver converged, so that a forward at a recorded state gives back the recorded forces)."""
    m = engine.load_model(GO1)
    m.opt.solver, m.opt.iterations, m.opt.tolerance = engine.Solver.NEWTON, 100, 1e-14
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
    """The analysis pairs each record with the state before it and compares the right numbers:
    its predictions are those of engine.rigid_inverse called directly along the recording
    (state of record k-1, qacc = (qvel[k] - qvel[k-1]) / h, warm-started, stabilization 0);
    its recorded contact forces are those of engine.contact_force after a forward at that
    state; the chatter is numpy's sum and peak of |f_k - f_k-1|; a step without a solution is
    skipped with its reason. (How far a rigid model's forces are from a compliant recording's
    is not tested here: see the README.)"""
    m, traj = recording
    a = analysis.analyse(traj, m, inverse_model=model)
    assert a.inverse_model == model
    assert a.analysed.sum() + sum(a.skipped.values()) == len(traj)
    assert a.analysed.sum() >= len(traj) - 3
    d = engine.make_data(m)
    h = m.opt.timestep
    ws = None
    signals = {s.label: s for s in a.efc_signals.values()}
    checked = 0
    for k in range(len(traj)):
        prev = traj.initial if k == 0 else {f: getattr(traj, f)[k - 1]
                                            for f in ("qpos", "qvel", "act")}
        d.qpos[:], d.qvel[:], d.act[:] = prev["qpos"], prev["qvel"], prev["act"]
        d.ctrl[:] = traj.ctrl[k]
        res = engine.rigid_inverse(m, d, (traj.qvel[k] - prev["qvel"]) / h, model=model,
                                   warmstart=ws, stabilization=0.0)
        ws = res.warmstart
        if not a.analysed[k]:
            assert res.status != engine.lcp.LCPStatus.SOLVED
            continue
        np.testing.assert_array_equal(a.force_recovered[k], res.actuator_force)
        np.testing.assert_array_equal(a.force_recorded[k], traj.actuator_force[k])
        engine.forward(m, d)
        rank = {}
        for c in range(len(d.contact.dist)):
            g1, g2 = d.contact.geom1[c], d.contact.geom2[c]
            r = rank[g1, g2] = rank.get((g1, g2), -1) + 1
            group = (f"contact {engine.id2name(m, 'geom', g1) or f'geom{g1}'}/"
                     f"{engine.id2name(m, 'geom', g2) or f'geom{g2}'}" + (f" [{r}]" if r else ""))
            s = signals.get(group + " normal")
            if s is None:
                continue
            steps, fwd, inv = s.arrays()
            i = np.flatnonzero(steps == k)
            if not i.size:
                continue
            f = engine.contact_force(m, d, c)
            assert fwd[i[0]] == pytest.approx(f[0], rel=1e-8, abs=1e-8)
            assert inv[i[0]] == pytest.approx(res.contact_force[c, 0], rel=1e-12, abs=1e-12)
            checked += 1
    assert checked >= len(traj)
    ok = a.analysed
    both = ok[1:] & ok[:-1]
    for name, f in (("recorded", traj.actuator_force), ("recovered", a.force_recovered)):
        dif = np.abs(np.diff(f, axis=0))[both]
        ch = a.summary()["chatter"][name]
        assert ch["sum"] == pytest.approx(dif.sum(), rel=1e-12)
        assert ch["peak"] == pytest.approx(dif.max(), rel=1e-12) and ch["steps"] == both.sum()


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
    with pytest.raises(ValueError, match="inverse_model must be"):
        analysis.analyse(traj, m, inverse_model="rigid")


def test_analysis_panel_worker_with_a_rigid_model(recording, tmp_path):
    """The studio's Analysis panel with the no-slip model chosen: its worker runs the rigid
    inverse, the signals are the actuator forces and the contact forces (recorded against
    predicted, those of engine.analysis), the summary carries the chatter the panel shows, and
    the export writes the CSV and PNG files."""
    from studio.ui.analysis import AnalysisState
    m, traj = recording
    st = AnalysisState()
    st.inverse = "noslip"
    st.start(traj.path, GO1)
    assert st.wait(600)
    assert st.error == "" and st.summary["inverse_model"] == "noslip"
    labels = [s[0] for s in st.signals]
    assert sum(label.startswith("force contact") for label in labels) >= 4
    assert not any(label.startswith(("ctrl", "impulse")) for label in labels)
    first = next(s for s in st.signals if s[0].startswith("force "))
    np.testing.assert_array_equal(first[2], st.result.force_recorded[:, 0])
    np.testing.assert_array_equal(first[3], st.result.force_recovered[:, 0])
    assert st.summary["chatter"]["recovered"]["sum"] > 0
    files = st.export(str(tmp_path / "out"))
    assert any(f.endswith(".csv") for f in files) and any(f.endswith(".png") for f in files)

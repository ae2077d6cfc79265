"""python -m engine.analyze on a set of recordings: one Ray task per recording (the local Ray of
conftest.ray_session), each recording's outputs beside it, one summary table across them, and a
failing recording reported in its row without stopping the others.

Oracle: each recording analysed alone in this process (engine.analysis.analyse) gives the
numbers of its row.
"""
import csv
import os
import shutil
import sys

import pytest

import engine
from engine import analyze
from engine.analysis import analyse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_analysis import ARM, converged, record  # noqa: E402

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """two good recordings in subdirectories, one that is no recording, one whose model is gone"""
    root = tmp_path_factory.mktemp("dataset")
    (root / "a").mkdir()
    (root / "b").mkdir()
    record(converged(engine.load_model(ARM)), root / "a" / "arm1.traj", 120, seed=1)
    record(converged(engine.load_model(ARM)), root / "b" / "arm2.traj", 150, seed=2)
    (root / "broken.traj").write_bytes(b"this is not a recording\n" * 10)
    gone = root / "gone_model.xml"
    shutil.copy(ARM, gone)
    record(converged(engine.load_model(str(gone))), root / "orphan.traj", 30, seed=3)
    gone.unlink()
    return root


def read_summary(path):
    with open(path, newline="") as f:
        return {os.path.relpath(r["recording"], os.path.dirname(path)): r
                for r in csv.DictReader(f)}


def test_dataset_on_ray(ray_session, dataset, capsys):
    code = analyze.main([str(dataset), "--jobs", "2", "--quiet"])
    out = capsys.readouterr().out
    assert code == 1                                  # some recordings failed
    assert "4 recordings, 2 analysed, 2 failed" in out
    rows = read_summary(dataset / "analysis_summary.csv")
    assert sorted(rows) == ["a/arm1.traj", "b/arm2.traj", "broken.traj", "orphan.traj"]
    assert rows["broken.traj"]["status"] == "error"
    assert "TrajectoryError" in rows["broken.traj"]["error"]
    assert rows["orphan.traj"]["status"] == "error"
    assert "gone_model.xml not found" in rows["orphan.traj"]["error"]
    for name in ("a/arm1.traj", "b/arm2.traj"):
        row = rows[name]
        assert row["status"] == "ok" and str(os.getpid()) not in row["worker"]
        # the same numbers as the recording analysed alone here
        path = dataset / name
        s = analyse(engine.load_trajectory(str(path)), engine.load_model(ARM)).summary()
        assert int(row["steps"]) == s["steps"] == int(row["analysed"])
        for fam, st in s["families"].items():
            if st["n"]:
                assert float(row[f"{fam}_max_abs"]) == st["max_abs"], fam
        assert float(row["efc_contact_normal_max_rel"]) < 1e-8
        # its own outputs beside it
        own = path.parent / (path.stem + "_analysis")
        assert row["outputs"] == str(own)
        for f in ("summary.json", "impulses.csv", "controls.png", "impulses.svg"):
            assert (own / f).is_file(), f
    pq = pytest.importorskip("pyarrow.parquet")
    t = pq.read_table(dataset / "analysis_summary.parquet").to_pydict()
    assert [os.path.relpath(p, dataset) for p in t["recording"]] == sorted(rows)
    assert t["efc_contact_normal_max_abs"][0] == float(rows["a/arm1.traj"]
                                                       ["efc_contact_normal_max_abs"])


def test_glob_summary_goes_to_the_common_directory(ray_session, dataset, tmp_path):
    code = analyze.main([str(dataset / "*" / "arm*.traj"), "--quiet", "--out", str(tmp_path)])
    assert code == 0
    rows = read_summary(tmp_path / "analysis_summary.csv")
    assert len(rows) == 2 and {r["status"] for r in rows.values()} == {"ok"}
    assert analyze.recordings(str(dataset / "*" / "arm*.traj"))[1] == str(dataset)


def test_inverse_model_is_passed_through(dataset, tmp_path, capsys):
    """--inverse reaches engine.analysis.analyse(inverse_model=...): the row of a recording
    analysed with the rigid no-slip model has the numbers of that analysis run alone."""
    code = analyze.main([str(dataset / "a"), "--inverse", "noslip", "--serial", "--quiet",
                         "--out", str(tmp_path)])
    assert code == 0
    rows = read_summary(tmp_path / "analysis_summary.csv")
    (row,) = rows.values()
    assert row["status"] == "ok"
    path = str(dataset / "a" / "arm1.traj")
    alone = analyse(engine.load_trajectory(path), engine.load_model(ARM),
                    inverse_model="noslip").summary()
    assert int(row["analysed"]) == alone["analysed"] > 0
    for fam, st in alone["families"].items():
        if st["n"]:
            assert float(row[f"{fam}_max_abs"]) == pytest.approx(st["max_abs"], rel=1e-12)


def test_nothing_to_analyse(tmp_path, capsys):
    assert analyze.main([str(tmp_path), "--serial"]) == 2
    assert "no recordings" in capsys.readouterr().err
    assert analyze.main([str(tmp_path / "missing.traj")]) == 2
    assert "missing.traj" in capsys.readouterr().err

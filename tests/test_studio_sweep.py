"""The studio replays a cell of a parameter sweep: ``python -m studio --sweep DIR/CELL`` (or
DIR/CELL as the model) opens the sweep's model with that cell's parameters.

Through the window (under Xvfb, in a subprocess as the user runs it) with --record: the recorded
options are the cell's, and the box comes to rest as deep as the sweep measured for that cell
in its own run.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import engine
from engine import sweep

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_studio_cli import needs_xvfb, summary  # noqa: E402

BOX = """<mujoco model="box on a plane">
  <option timestep="0.005"/>
  <worldbody>
    <light directional="true" dir="0 0 -1"/>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="box" pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
  </worldbody>
</mujoco>"""


@pytest.fixture(scope="module")
def box_sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    (root / "box.xml").write_text(BOX)
    out = root / "box_sweep"
    assert sweep.main([str(root / "box.xml"), "--param", "epsilon=0.1", "--param",
                       "kappa=0.02,0.06", "--duration", "2", "--metric", "penetration:box",
                       "--serial", "--no-figures", "--quiet", "--out", str(out)]) == 0
    return out


@needs_xvfb
def test_window_replays_the_cell(box_sweep, tmp_path):
    table = {r["cell"]: r for r in sweep.read_table(box_sweep)}
    rec = tmp_path / "cell.traj"
    proc = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x720x24", sys.executable,
                           "-m", "studio", "--sweep", str(box_sweep / "c0001"), "--duration", "4",
                           "--size", "640x360", "--msaa", "0", "--record", str(rec)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, LP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr
    assert summary(proc)["frames"] > 5
    assert "sweep cell c0001 of box.xml: epsilon=0.1 kappa=0.06" in proc.stderr
    traj = engine.load_trajectory(str(rec))
    opts = traj.options_at(len(traj) - 1)
    assert opts["kappa"] == [table["c0001"]["kappa"]] == [0.06] and opts["epsilon"] == [0.1]
    assert traj.time[-1] > 1.5                         # settled (the sweep averages 1.5-2 s)
    k = int(np.searchsorted(traj.time, 1.5))
    depth = np.mean([-traj.contact(i)["dist"].min() for i in range(k, len(traj))])
    assert depth == pytest.approx(table["c0001"]["penetration_box"], rel=0.01)
    assert depth > 5 * table["c0000"]["penetration_box"]


def test_command_line_refuses_an_unknown_cell(box_sweep):
    proc = subprocess.run([sys.executable, "-m", "studio", "--headless", "--duration", "0.2",
                           "--sweep", str(box_sweep / "c0007")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2
    assert "c0007: no such cell; the sweep's cells are c0000 to c0001" in proc.stderr
    assert "Traceback" not in proc.stderr

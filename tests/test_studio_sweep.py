"""The studio replays a cell of a parameter sweep: ``python -m studio --sweep DIR/CELL`` (or
DIR/CELL as the model) opens the sweep's model with that cell's parameters.

In the window (the Xvfb display of test_studio_app): the running engine has the cell's options,
and the box rests as deep as the sweep measured for that cell in its own run.
"""
import os
import subprocess
import sys

import pytest

from engine import sweep

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_studio_app import make_app, pump_until, xdisplay  # noqa: E402,F401,F811 (a fixture)
from test_studio_app import pytestmark  # noqa: E402,F401 (skipped without Xvfb and GL)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


def test_window_replays_the_cell(xdisplay, box_sweep):  # noqa: F811
    table = {r["cell"]: r for r in sweep.read_table(box_sweep)}
    app = make_app(box_sweep / "c0001")
    try:
        r = app.runner
        assert app.m.opt.kappa == table["c0001"]["kappa"] == 0.06
        assert app.m.opt.epsilon == 0.1
        assert app.window.caption.startswith("studio - c0001")
        assert pump_until(app, lambda: r.snapshot.time > 2.0, timeout=60)
        depth = -r.snapshot.contact_dist.min()
        # the sweep's own run of this cell measured the same resting depth
        assert depth == pytest.approx(table["c0001"]["penetration_box"], rel=0.01)
        assert depth > 5 * table["c0000"]["penetration_box"]
    finally:
        app.close()
        app.window.close()


def test_command_line_names_the_cell_and_refuses_an_unknown_one(box_sweep):
    run = [sys.executable, "-m", "studio", "--headless", "--duration", "0.2", "--sweep"]
    env = dict(os.environ, LP_NUM_THREADS="1")
    proc = subprocess.run(run + [str(box_sweep / "c0000")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "sweep cell c0000 of box.xml: epsilon=0.1 kappa=0.02 (penetration_box=" in proc.stderr
    proc = subprocess.run(run + [str(box_sweep / "c0007")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2
    assert "c0007: no such cell; the sweep's cells are c0000 to c0001" in proc.stderr

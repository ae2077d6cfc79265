"""Bad MJCF input: every error is a ModelError naming file, line, element and attribute.

Models are loaded through the public engine.load_model, so that no check can hide in a later
stage (set_const) where the file position is no longer known."""
import logging

import pytest

import engine


def load_error(tmp_path, xml, name="model.xml", files=None):
    """Write xml (and extra files) to tmp_path, load it, return the ModelError raised."""
    for fname, text in (files or {}).items():
        (tmp_path / fname).write_text(text)
    path = tmp_path / name
    path.write_text(xml)
    with pytest.raises(engine.ModelError) as info:
        engine.load_model(str(path))
    e = info.value
    assert e.file is not None
    return e, str(path)


def check(e, file, line, element, attribute=None, words=()):
    assert e.file == file, e
    assert e.line == line, e
    assert e.element == element, e
    assert e.attribute == attribute, e
    text = str(e)
    assert file in text and f"line {line}" in text and f"<{element}>" in text
    if attribute:
        assert f"'{attribute}'" in text
    for w in words:
        assert w in text, text


BODY = """<mujoco>
  <worldbody>
    <body name="b">
      {}
    </body>
  </worldbody>
</mujoco>
"""


def test_malformed_xml(tmp_path):
    e, path = load_error(tmp_path, "<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>\n")
    assert e.file == path and e.line == 4 and "malformed XML" in str(e)


def test_root_must_be_mujoco(tmp_path):
    e, path = load_error(tmp_path, "<robot/>\n")
    check(e, path, 1, "robot", None, ["<mujoco>"])


def test_unknown_element(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom size=".1"/><gizmo/>'))
    check(e, path, 4, "gizmo", None, ["unknown element"])


def test_unknown_top_level_element(tmp_path):
    e, path = load_error(tmp_path, "<mujoco>\n  <world/>\n</mujoco>\n")
    check(e, path, 2, "world", None, ["unknown element"])


def test_unknown_attribute(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom size=".1" colour="red"/>'))
    check(e, path, 4, "geom", "colour", ["unknown attribute"])


def test_unknown_attribute_in_default(tmp_path):
    xml = "<mujoco>\n<default>\n<joint stiff='1'/>\n</default>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml)
    check(e, path, 3, "joint", "stiff")


def test_missing_mesh_file(tmp_path):
    xml = "<mujoco>\n<asset>\n<mesh file='nothere.stl'/>\n</asset>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml)
    check(e, path, 3, "mesh", "file", ["nothere.stl", "not found"])


def test_missing_include_file(tmp_path):
    xml = "<mujoco>\n  <include file='missing.xml'/>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml)
    check(e, path, 2, "include", "file", ["missing.xml"])


def test_error_inside_included_file_names_that_file(tmp_path):
    xml = "<mujoco>\n  <include file='part.xml'/>\n</mujoco>\n"
    part = "<mujoco>\n  <option>\n    <flag bogus='disable'/>\n  </option>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml, files={"part.xml": part})
    check(e, str(tmp_path / "part.xml"), 3, "flag", "bogus")


def test_negative_mass(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom size=".1" mass="-1"/>'))
    check(e, path, 4, "geom", "mass", ["negative"])


def test_negative_inertial_mass(tmp_path):
    e, path = load_error(tmp_path,
                         BODY.format('<inertial pos="0 0 0" mass="-2" diaginertia="1 1 1"/>'))
    check(e, path, 4, "inertial", "mass", ["negative"])


def test_too_few_numbers_in_size(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom type="box" size=".1 .2"/>'))
    check(e, path, 4, "geom", "size", ["size"])


def test_too_few_numbers_in_vector(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom size=".1" pos="0 0"/>'))
    check(e, path, 4, "geom", "pos", ["expected 3 numbers, got 2"])


def test_too_many_numbers(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<joint axis="0 0 1 0"/><geom size=".1"/>'))
    check(e, path, 4, "joint", "axis", ["expected 3 numbers, got 4"])


def test_blank_numbers_are_absent_as_in_mujoco():
    """An empty or blank number attribute is no value: the default class's applies (MuJoCo
    reads it so); a blank keyword or class name stays an error in both."""
    import mujoco
    xml = """<mujoco><default><joint damping="3"/><geom pos="1 2 3" rgba="1 0 0 1"/></default>
      <option timestep=" "/><worldbody><body><joint damping=" " range=""/>
      <geom size=".1" pos="" rgba=" " quat="" contype=""/></body></worldbody></mujoco>"""
    m, mm = engine.load_model_from_string(xml), mujoco.MjModel.from_xml_string(xml)
    for ours, theirs in ((m.dof_damping, mm.dof_damping), (m.geom_pos, mm.geom_pos),
                         (m.geom_rgba, mm.geom_rgba), (m.geom_quat, mm.geom_quat),
                         (m.geom_contype, mm.geom_contype), (m.jnt_range, mm.jnt_range)):
        assert ours.tolist() == theirs.tolist()
    assert m.opt.timestep == mm.opt.timestep
    for bad, attribute in (('<geom size=".1" type=""/>', "type"),
                           ('<geom size=".1" class=""/>', "class")):
        with pytest.raises(engine.ModelError) as info:
            engine.load_model_from_string(BODY.format(bad))
        assert info.value.attribute == attribute
        with pytest.raises(ValueError):
            mujoco.MjModel.from_xml_string(BODY.format(bad))


@pytest.mark.parametrize("element, attribute, loads", [
    ('<compiler eulerseq=" "/>', "eulerseq", False),
    ('<actuator><motor joint="j" ctrllimited=""/></actuator>', "ctrllimited", False),
    ('<actuator><general joint="j" dyntype=""/></actuator>', "dyntype", False),
    ('<actuator><position joint="j" kp=""/></actuator>', None, True),
    ('<actuator><motor joint="j" gear=" "/></actuator>', None, True),
    ('<size nconmax=" "/>', "nconmax", False),
])
def test_blank_attributes_as_in_mujoco(element, attribute, loads):
    """Blank numbers of actuators are no value; blank keywords, an Euler sequence and a size
    are refused at their attribute, as MuJoCo refuses them."""
    import mujoco
    xml = (f'<mujoco>{element}<worldbody><body><joint name="j"/><geom size=".1"/></body>'
           '</worldbody></mujoco>')
    if loads:
        engine.load_model_from_string(xml)
        mujoco.MjModel.from_xml_string(xml)
        return
    with pytest.raises(engine.ModelError) as info:
        engine.load_model_from_string(xml)
    assert info.value.attribute == attribute
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)


def test_polynomial_stiffness_and_damping_refused_unless_zero(tmp_path):
    """MuJoCo 4 reads up to two polynomial coefficients after a joint's or tendon's stiffness
    and damping; zero ones are the linear spring and damper, others are refused by name."""
    import mujoco
    xml = BODY.format('<joint stiffness="2 0 0" damping="1 0"/><geom size=".1"/>')
    m, mm = engine.load_model_from_string(xml), mujoco.MjModel.from_xml_string(xml)
    assert m.jnt_stiffness.tolist() == mm.jnt_stiffness.tolist() == [2.0]
    assert m.dof_damping.tolist() == mm.dof_damping.tolist() == [1.0]
    e, path = load_error(tmp_path, BODY.format('<joint damping="1 2"/><geom size=".1"/>'))
    check(e, path, 4, "joint", "damping", ["polynomial damping", "not supported"])


@pytest.mark.parametrize("value", ["1G", "1g", "100M", "-1", "-1K", "0", "-2", "1 G", " 100 ",
                                   "abc", "1.5G", "", "10000000000000000000000E"])
def test_size_memory_syntax_as_in_mujoco(value):
    """<size memory>: -1 or an unsigned integer with an optional suffix; the same values load
    or fail in both engines, ours naming the attribute."""
    import mujoco
    xml = f'<mujoco><size memory="{value}"/><statistic meansize=" "/></mujoco>'
    try:
        mujoco.MjModel.from_xml_string(xml)
        theirs = True
    except ValueError:
        theirs = False
    try:
        engine.load_model_from_string(xml)
        ours = True
    except engine.ModelError as e:
        assert e.attribute == "memory"
        ours = False
    assert ours == theirs


def test_non_numeric_number(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom size="0.1x"/>'))
    check(e, path, 4, "geom", "size", ["0.1x"])


def test_non_integer(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom size=".1" contype="1.5"/>'))
    check(e, path, 4, "geom", "contype")


def test_unknown_joint_type(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<joint type="prismatic"/><geom size=".1"/>'))
    check(e, path, 4, "joint", "type", ["prismatic", "hinge"])


def test_unknown_geom_type(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom type="cone" size=".1"/>'))
    check(e, path, 4, "geom", "type", ["cone"])


def test_unknown_keyword(tmp_path):
    xml = "<mujoco>\n<option integrator='leapfrog'/>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml)
    check(e, path, 2, "option", "integrator", ["leapfrog"])


def test_unknown_compiler_keyword(tmp_path):
    xml = "<mujoco>\n<compiler angle='gradian'/>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml)
    check(e, path, 2, "compiler", "angle", ["gradian"])


def test_unknown_default_class(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom class="nope" size=".1"/>'))
    check(e, path, 4, "geom", "class", ["nope"])


def test_unknown_childclass(tmp_path):
    xml = "<mujoco>\n<worldbody>\n<body childclass='nope'/>\n</worldbody>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml)
    check(e, path, 3, "body", "childclass", ["nope"])


def test_repeated_default_class(tmp_path):
    xml = ("<mujoco>\n<default>\n<default class='a'/>\n<default class='a'/>\n</default>\n"
           "</mujoco>\n")
    e, path = load_error(tmp_path, xml)
    check(e, path, 4, "default", "class", ["repeated"])


TREE = """<mujoco>
  <worldbody>
    <body name="b">
      <joint name="j"/>
      <geom size=".1"/>
      <site name="s"/>
    </body>
  </worldbody>
{}
</mujoco>
"""


def test_tendon_unknown_joint(tmp_path):
    e, path = load_error(tmp_path, TREE.format(
        "  <tendon>\n    <fixed>\n      <joint joint='nope' coef='1'/>\n    </fixed>\n"
        "  </tendon>"))
    check(e, path, 11, "joint", "joint", ["unknown joint 'nope'"])


def test_tendon_unknown_site(tmp_path):
    e, path = load_error(tmp_path, TREE.format(
        "  <tendon>\n    <spatial>\n      <site site='s'/>\n      <site site='nope'/>\n"
        "    </spatial>\n  </tendon>"))
    check(e, path, 12, "site", "site", ["unknown site 'nope'"])


def test_actuator_unknown_joint(tmp_path):
    e, path = load_error(tmp_path, TREE.format(
        "  <actuator>\n    <motor joint='nope'/>\n  </actuator>"))
    check(e, path, 10, "motor", "joint", ["nope"])


def test_actuator_without_target(tmp_path):
    e, path = load_error(tmp_path, TREE.format("  <actuator>\n    <motor/>\n  </actuator>"))
    check(e, path, 10, "motor", None, ["transmission"])


def test_equality_unknown_body(tmp_path):
    e, path = load_error(tmp_path, TREE.format(
        "  <equality>\n    <weld body1='b' body2='nope'/>\n  </equality>"))
    check(e, path, 10, "weld", "body2", ["unknown body 'nope'"])


def test_sensor_unknown_site(tmp_path):
    e, path = load_error(tmp_path, TREE.format(
        "  <sensor>\n    <touch site='nope'/>\n  </sensor>"))
    check(e, path, 10, "touch", "site", ["nope"])


def test_pair_unknown_geom(tmp_path):
    e, path = load_error(tmp_path, TREE.format(
        "  <contact>\n    <pair geom1='a' geom2='b'/>\n  </contact>"))
    check(e, path, 10, "pair", "geom1", ["unknown geom 'a'"])


def test_duplicate_names(tmp_path):
    xml = BODY.format('<geom name="g" size=".1"/>\n      <geom name="g" size=".2"/>')
    e, path = load_error(tmp_path, xml)
    check(e, path, 5, "geom", "name", ["repeated name 'g'"])


def test_duplicate_body_names(tmp_path):
    xml = ("<mujoco>\n<worldbody>\n<body name='a'/>\n<body name='a'/>\n</worldbody>\n"
           "</mujoco>\n")
    e, path = load_error(tmp_path, xml)
    check(e, path, 4, "body", "name", ["repeated name 'a'"])


def test_keyframe_wrong_size(tmp_path):
    e, path = load_error(tmp_path, TREE.format(
        "  <keyframe>\n    <key qpos='1 2'/>\n  </keyframe>"))
    check(e, path, 10, "key", "qpos", ["expected at most 1 numbers"])


def test_moving_body_without_mass(tmp_path):
    xml = "<mujoco>\n<worldbody>\n<body>\n<joint/>\n</body>\n</worldbody>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml)
    check(e, path, 3, "body", None, ["mass"])


def test_bad_range(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<joint limited="true" range="1 -1"/><geom size=".1"/>'))
    check(e, path, 4, "joint", "range")


def test_fromto_on_sphere(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom size=".1" fromto="0 0 0 1 0 0"/>'))
    check(e, path, 4, "geom", "fromto")


# ---- features that are recognised but not implemented ----------------------------------------
def test_composite_not_implemented(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<composite type="cable" count="3"/>'))
    check(e, path, 4, "composite", None, ["not implemented"])


def test_flexcomp_not_implemented(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<flexcomp name="f" type="grid"/>'))
    check(e, path, 4, "flexcomp", None, ["not implemented"])


def test_plugin_not_implemented(tmp_path):
    xml = "<mujoco>\n<extension>\n<plugin plugin='x'/>\n</extension>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml)
    check(e, path, 3, "plugin", None, ["not implemented"])


def test_ball_joint_transmission_not_implemented(tmp_path):
    xml = BODY.format("<joint name='ball' type='ball'/><geom size='.1'/>")
    xml = xml.replace("</mujoco>", "<actuator>\n<motor joint='ball'/>\n</actuator>\n</mujoco>")
    e, path = load_error(tmp_path, xml)
    check(e, path, 8, "motor", "joint", ["ball or free joint", "not implemented"])


@pytest.mark.parametrize("element, attribute, feature", [
    ("<joint springyield='1'/>", "springyield", "spring yield"),
    ("<geom size='.1' adhesion='1'/>", "adhesion", "contact adhesion"),
    ("<geom size='.1' surfacevel='1'/>", "surfacevel", "surface velocity"),
    ("<body fuse='true'><geom size='.1'/></body>", "fuse", "fuse"),
])
def test_newer_physics_attributes_not_implemented(tmp_path, element, attribute, feature):
    e, path = load_error(tmp_path, BODY.format(element + "<geom size='.1'/>"))
    check(e, path, 4, element.split()[0][1:].rstrip(">"), attribute, [feature, "not implemented"])


@pytest.mark.parametrize("actuator, attribute, words", [
    ("<position joint='j' kv='1' dampratio='1'/>", "dampratio", ["kv and dampratio"]),
    ("<general site='s' refsite='s'/>", "refsite", ["reference site", "not implemented"]),
    ("<adhesion body='nobody' ctrlrange='0 1'/>", "body", ["nobody"]),
    ("<motor joint='j' armature='0.1'/>", "armature", ["not implemented"]),
    ("<motor joint='j' damping='1'/>", "damping", ["not implemented"]),
    ("<motor joint='j' delay='0.01' nsample='3'/>", "delay", ["not implemented"]),
    ("<general joint='j' velrange='-1 1'/>", "velrange", ["not implemented"]),
    ("<pid joint='j' kp='1'/>", None, ["<pid> actuators", "not implemented"]),
])
def test_actuator_errors(tmp_path, actuator, attribute, words):
    e, path = load_error(tmp_path, TREE.format(f"  <actuator>\n    {actuator}\n  </actuator>"))
    check(e, path, 10, actuator.split()[0][1:], attribute, words)


def test_newer_enable_flag_not_implemented(tmp_path):
    xml = "<mujoco>\n<option>\n<flag speculative='enable'/>\n</option>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml)
    check(e, path, 3, "flag", "speculative", ["not implemented"])


def test_newer_visual_attributes_are_accepted(caplog):
    xml = ("<mujoco><default><texture builtin='flat'/></default><worldbody>"
           "<light softness='0.3'/><camera output='rgb'/><body><joint/>"
           "<geom size='.1' castshadow='false'/></body></worldbody></mujoco>")
    with caplog.at_level(logging.WARNING, logger="engine.compiler"):
        m = engine.load_model_from_string(xml)
    for a in ("softness", "output", "castshadow"):
        assert sum(a in w for w in m.warnings) == 1


def test_tendon_wrapping_geom_checks(tmp_path):
    """A wrapping geom must be a sphere or a cylinder, between two sites."""
    xml = """<mujoco>
  <worldbody>
    <body>
      <joint/>
      <geom name="w" type="{}" size=".1 .1 .1"/>
      <site name="s1" pos="0 .2 0"/>
      <site name="s2" pos="0 -.2 0"/>
    </body>
  </worldbody>
  <tendon>
    <spatial>
      <site site="s1"/>
      <geom geom="w"/>
      {}
    </spatial>
  </tendon>
</mujoco>
"""
    e, path = load_error(tmp_path, xml.format("box", '<site site="s2"/>'))
    check(e, path, 13, "geom", "geom", ["sphere or a cylinder"])
    e, path = load_error(tmp_path, xml.format("cylinder", '<pulley divisor="2"/><site site="s2"/>'))
    check(e, path, 13, "geom", None, ["bracketed by sites"])


def test_slider_crank_not_implemented(tmp_path):
    e, path = load_error(tmp_path, TREE.format(
        "  <actuator>\n    <general cranksite='s' slidersite='s' cranklength='1'/>\n"
        "  </actuator>"))
    check(e, path, 10, "general", "cranksite", ["slider-crank"])


def test_skin_is_skipped_with_a_warning(tmp_path, caplog):
    path = tmp_path / "m.xml"
    path.write_text("<mujoco>\n<asset>\n<skin name='s'/>\n</asset>\n</mujoco>\n")
    with caplog.at_level(logging.WARNING, logger="engine.compiler"):
        m = engine.load_model(str(path))
    assert any("skin" in w for w in m.warnings)
    assert any("skin" in r.getMessage() for r in caplog.records)


def test_missing_model_file(tmp_path):
    with pytest.raises(engine.ModelError) as info:
        engine.load_model(str(tmp_path / "none.xml"))
    assert info.value.file == str(tmp_path / "none.xml")


def test_string_errors_name_the_string(tmp_path):
    with pytest.raises(engine.ModelError) as info:
        engine.load_model_from_string("<mujoco>\n<worldbody>\n<geom size='a'/>\n"
                                        "</worldbody>\n</mujoco>")
    e = info.value
    assert (e.file, e.line, e.element, e.attribute) == ("<string>", 3, "geom", "size")


def test_no_python_traceback_escapes(tmp_path, monkeypatch):
    # an unexpected failure inside the compiler is wrapped with the element being compiled
    from engine.compiler import inertia

    def boom(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(inertia, "geom_volume", boom)
    e, path = load_error(tmp_path, BODY.format('<geom size=".1"/>'))
    assert e.line == 4 and e.element == "geom" and "internal compiler error" in str(e)


def test_missing_texture_file(tmp_path):
    xml = "<mujoco>\n<asset>\n<texture name='t' type='2d' file='nothere.png'/>\n</asset>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml)
    check(e, path, 3, "texture", "file", ["nothere.png", "not found"])


@pytest.mark.parametrize("name, content, words", [
    ("notes.png", b"just some text, not an image\n", ["notes.png", "not a PNG image"]),
    ("photo.jpg", b"\xff\xd8\xff\xe0 JFIF", ["photo.jpg", "unsupported content type"]),
    ("empty.ktx", b"", ["empty.ktx", "is empty"]),
])
def test_texture_file_that_is_not_an_image(tmp_path, name, content, words):
    """As MuJoCo: a texture file is PNG (by its signature) or KTX; anything else is refused at
    its attribute, and the message names the file without quoting its contents."""
    (tmp_path / name).write_bytes(content)
    xml = f"<mujoco>\n<asset>\n<texture name='t' type='2d' file='{name}'/>\n</asset>\n</mujoco>\n"
    e, path = load_error(tmp_path, xml)
    check(e, path, 3, "texture", "file", words)
    assert "just some text" not in str(e)


def test_quat_together_with_euler(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom size=".1" quat="1 0 0 0" euler="0 0 1"/>'))
    check(e, path, 4, "geom", "euler", ["multiple orientation specifiers"])


def test_integer_overflow_names_the_attribute(tmp_path):
    e, path = load_error(tmp_path, BODY.format('<geom size=".1" contype="99999999999"/>'))
    check(e, path, 4, "geom", "contype", ["too large"])


def test_reserved_keyframes_are_filled_at_once_and_their_memory_checked(tmp_path):
    """<size nkey> reserves keyframes: a large count is filled without a loop over the keys
    (10^9 used to run for hours), and one that does not fit in memory is refused with the
    number before allocation."""
    m = engine.load_model_from_string('<mujoco><size nkey="200000"/><worldbody><body mocap='
                                      '"true" quat="2 0 0 0"><geom size=".1"/></body><body>'
                                      '<freejoint/><geom size=".1"/></body></worldbody>'
                                      '<keyframe><key name="k" qpos="1 0 0 0 1 0 0"/>'
                                      '</keyframe></mujoco>')
    assert m.nkey == 200000 and engine.name2id(m, "key", "k") == 0
    assert m.key_qpos[0, 0] == 1 and (m.key_qpos[1:, 0] == 0).all()
    assert (m.key_mquat[-1] == [1, 0, 0, 0]).all() and (m.key_qpos[-1, 3:] == [1, 0, 0, 0]).all()
    path = tmp_path / "keys.xml"
    path.write_text('<mujoco><size nkey="1000000000"/><worldbody><body><freejoint/>'
                    '<geom size=".1"/></body></worldbody></mujoco>')
    with pytest.raises(engine.CapacityError, match=r"nkey=1000000000.*needs [0-9.]+ GiB"):
        engine.load_model(str(path))


def test_huge_height_field_is_refused_before_allocation(tmp_path):
    e, path = load_error(tmp_path, '<mujoco>\n<asset>\n<hfield name="h" nrow="100000" '
                                   'ncol="100000" size="1 1 1 1"/>\n</asset>\n</mujoco>\n')
    check(e, path, 3, "hfield", "nrow", ["nrow=100000 x ncol=100000", "GiB", "available"])


def test_unreadable_asset_file_is_a_located_error(tmp_path):
    """A file that exists but cannot be read (here /proc/self/mem) is refused at its
    attribute with the system's reason, not as an internal compiler error."""
    e, path = load_error(tmp_path, '<mujoco>\n<asset>\n<mesh name="m" file="/proc/self/mem"/>'
                                   '\n</asset>\n</mujoco>\n')
    check(e, path, 3, "mesh", "file", ["cannot be read"])
    assert "internal" not in str(e)


def test_geom_size_whose_inertia_overflows(tmp_path):
    """A box of size 1e200: its inertia is not a finite number (MuJoCo loads it with an
    infinite inertia, and every step diverges); refused at the size, not as an internal
    compiler error."""
    e, path = load_error(tmp_path, BODY.format('<freejoint/><geom type="box" size="1e200 1 1"/>'))
    check(e, path, 4, "geom", "size", ["too large to represent"])

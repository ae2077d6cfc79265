"""Included files and the files they name, found as MuJoCo finds them (xml.cc IncludeXML,
xml_util.cc ResolveFilePath): every case is loaded by both engines, and either both load the same
model or both refuse it."""
import logging
import os
import shutil

import pytest

import engine
from test_compiler import compare_models

mujoco = pytest.importorskip("mujoco")

MESHES = os.path.join(os.path.dirname(__file__), "data", "meshes")
BODY = ('<worldbody><body><freejoint/><geom type="mesh" mesh="{}"/></body></worldbody>')


def both(path):
    """Our model and MuJoCo's, or the two errors (None for an engine that loaded it)."""
    ours = theirs = ours_error = theirs_error = None
    try:
        ours = engine.load_model(str(path))
    except engine.ModelError as e:
        ours_error = e
    try:
        theirs = mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        theirs_error = e
    assert (ours_error is None) == (theirs_error is None), (ours_error, theirs_error)
    if ours is not None:
        compare_models(ours, theirs)
    return ours, ours_error


@pytest.fixture
def tree(tmp_path):
    """A robot directory with meshes in robot/assets and robot/other, models elsewhere."""
    for d in ("robot/assets", "robot/other", "scenes/a"):
        (tmp_path / d).mkdir(parents=True)
    shutil.copy(os.path.join(MESHES, "box.stl"), tmp_path / "robot" / "assets" / "box.stl")
    shutil.copy(os.path.join(MESHES, "tetra.stl"), tmp_path / "robot" / "other" / "tetra.stl")
    return tmp_path


def test_mujocoinclude_root(tree):
    """An included file whose root is <mujocoinclude> (as in MyoSuite) is spliced like one whose
    root is <mujoco>."""
    (tree / "robot" / "parts.xml").write_text(
        '<mujocoinclude model="parts"><compiler meshdir="assets"/>'
        '<asset><mesh file="box.stl"/></asset></mujocoinclude>')
    (tree / "robot" / "robot.xml").write_text(
        '<mujoco><include file="parts.xml"/>' + BODY.format("box") + '</mujoco>')
    m, _ = both(tree / "robot" / "robot.xml")
    assert m.nmesh == 1


def test_empty_include_is_an_error(tree):
    (tree / "robot" / "empty.xml").write_text('<mujocoinclude/>')
    (tree / "robot" / "robot.xml").write_text('<mujoco><include file="empty.xml"/></mujoco>')
    _, error = both(tree / "robot" / "robot.xml")
    assert error.element == "include" and "empty" in str(error)


def test_include_looks_in_the_model_directory_first(tree):
    """MuJoCo's legacy rule: an include is found relative to the main model's directory before
    the including file's directory."""
    (tree / "scenes" / "opt.xml").write_text('<mujoco><option timestep="0.004"/></mujoco>')
    (tree / "scenes" / "a" / "opt.xml").write_text('<mujoco><option timestep="0.003"/></mujoco>')
    (tree / "scenes" / "a" / "mid.xml").write_text('<mujoco><include file="opt.xml"/></mujoco>')
    (tree / "scenes" / "main.xml").write_text('<mujoco><include file="a/mid.xml"/></mujoco>')
    m, _ = both(tree / "scenes" / "main.xml")
    assert m.opt.timestep == 0.004
    (tree / "scenes" / "opt.xml").unlink()
    m, _ = both(tree / "scenes" / "main.xml")
    assert m.opt.timestep == 0.003


def test_mesh_named_by_an_included_file_in_another_directory(tree):
    """As the Playground's Panda scenes: the robot file, included from another directory, names
    its meshes relative to its own directory and sets meshdir; meshdir applies relative to the
    main model file, and a mesh not found there is looked for relative to the included file."""
    robot = tree / "robot"
    # meshdir="assets" with file="assets/box.stl": found relative to the included file
    (robot / "panda.xml").write_text('<mujoco><compiler meshdir="assets"/><asset>'
                                     '<mesh file="assets/box.stl"/></asset>'
                                     + BODY.format("box") + '</mujoco>')
    (tree / "scenes" / "panda_scene.xml").write_text(
        '<mujoco><include file="../robot/panda.xml"/></mujoco>')
    m, _ = both(tree / "scenes" / "panda_scene.xml")
    assert m.nmesh == 1
    # without meshdir: relative to the included file
    (robot / "other.xml").write_text('<mujoco><asset><mesh file="other/tetra.stl"/></asset>'
                                     + BODY.format("tetra") + '</mujoco>')
    (tree / "scenes" / "a" / "deep.xml").write_text(
        '<mujoco><include file="../../robot/other.xml"/></mujoco>')
    both(tree / "scenes" / "a" / "deep.xml")
    # the main file's meshdir does not apply to a file found through the include's directory
    (tree / "scenes" / "a" / "deep2.xml").write_text(
        '<mujoco><compiler meshdir="assets"/><include file="../../robot/other.xml"/></mujoco>')
    both(tree / "scenes" / "a" / "deep2.xml")
    # meshdir of the included robot (relative to the main file) and a bare file name: the
    # included file's directory is tried without meshdir, so neither engine finds it
    (robot / "bare.xml").write_text('<mujoco><compiler meshdir="assets"/><asset>'
                                    '<mesh file="box.stl"/></asset>' + BODY.format("box")
                                    + '</mujoco>')
    (tree / "scenes" / "bare_scene.xml").write_text(
        '<mujoco><include file="../robot/bare.xml"/></mujoco>')
    _, error = both(tree / "scenes" / "bare_scene.xml")
    assert error.attribute == "file" and error.file.endswith("bare.xml")
    # ... unless the main file's directory has it under meshdir
    (tree / "scenes" / "assets").mkdir()
    shutil.copy(os.path.join(MESHES, "box.stl"), tree / "scenes" / "assets" / "box.stl")
    both(tree / "scenes" / "bare_scene.xml")


def test_height_field_from_an_included_file(tree):
    """Height fields: MuJoCo's reader checks the file against assetdir, the compiler loads it
    from meshdir."""
    from PIL import Image
    Image.new("L", (4, 3), 128).save(tree / "robot" / "terrain.png")
    (tree / "robot" / "terrain.xml").write_text(
        '<mujoco><asset><hfield name="t" file="terrain.png" size="1 1 0.1 0.1"/></asset>'
        '<worldbody><geom type="hfield" hfield="t"/></worldbody></mujoco>')
    (tree / "scenes" / "terrain_scene.xml").write_text(
        '<mujoco><include file="../robot/terrain.xml"/></mujoco>')
    m, _ = both(tree / "scenes" / "terrain_scene.xml")
    assert m.nhfield == 1


def test_attributes_without_whitespace(tmp_path, caplog):
    """tinyxml2 (MuJoCo's parser) reads `name="a"type="box"`; so do we, with a warning."""
    path = tmp_path / "m.xml"
    path.write_text('<mujoco>\n<worldbody>\n<body>\n<freejoint/>\n'
                    '<geom name="g"type="box" size=".1 .2 .3"/>\n</body>\n</worldbody>\n'
                    '</mujoco>\n')
    with caplog.at_level(logging.WARNING, logger="engine.compiler"):
        m, _ = both(path)
    assert m.geom_type[0] == engine.enums.GeomType.BOX
    assert any("line 5" in r.getMessage() and "whitespace" in r.getMessage()
               for r in caplog.records)
    # a genuinely broken file is still an error at its line
    path.write_text('<mujoco>\n<worldbody>\n<geom size=".1"\n</worldbody>\n</mujoco>\n')
    with pytest.raises(engine.ModelError) as e:
        engine.load_model(str(path))
    assert e.value.line == 4


def test_texture_from_an_included_file(tree):
    """Textures are found like meshes, with texturedir."""
    from PIL import Image
    Image.new("RGB", (8, 8), (200, 10, 10)).save(tree / "robot" / "other" / "red.png")
    (tree / "robot" / "skin.xml").write_text(
        '<mujoco><asset><texture name="red" type="2d" file="other/red.png"/>'
        '<material name="red" texture="red"/></asset>'
        '<worldbody><geom size="0.1" material="red"/></worldbody></mujoco>')
    (tree / "scenes" / "skin_scene.xml").write_text(
        '<mujoco><include file="../robot/skin.xml"/></mujoco>')
    m, _ = both(tree / "scenes" / "skin_scene.xml")
    assert m.textures[0]["file"] == str(tree / "robot" / "other" / "red.png")

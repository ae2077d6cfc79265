"""Model compiler: MJCF (MuJoCo's XML) and URDF -> engine.types.Model, through a Spec.

The reader (reader.py for MJCF, urdf.py for URDF) fills a Spec of typed objects (elements.py,
spec.py); the compile step (compile.py, compile_tree.py, compile_objects.py, sensors.py) compiles
each object and copies the results into the Model's arrays (assemble.py); the writer (writer.py)
turns a Spec back into MJCF (save.py: with a compiled Model's edits; attach.py: one spec into
another). ``load_model(path)`` dispatches on the file extension;
``load_model_from_string(xml, assets)`` compiles MJCF text with an optional {filename: bytes}
dict for meshes and included files.
"""
from __future__ import annotations

import os

from ..types import ModelError
from .spec import DefaultClass, Spec

__all__ = ["load_model", "load_model_from_string", "ModelError", "Spec", "DefaultClass"]


def load_model(path):
    """Compile a model file: .xml (MJCF) or .urdf (URDF)."""
    from .compile import compile_spec
    path = os.fspath(path)
    if os.path.splitext(path)[1].lower() != ".urdf" and not os.path.isfile(path):
        raise ModelError("model file not found", file=path)
    return compile_spec(Spec.from_file(path))


def load_model_from_string(xml_text, assets=None):
    """Compile MJCF text; `assets` maps file names to bytes (meshes, included files)."""
    from .compile import compile_spec
    return compile_spec(Spec.from_string(xml_text, assets))

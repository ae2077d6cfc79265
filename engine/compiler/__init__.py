"""Model compilers: MJCF (MuJoCo's XML) and URDF -> engine.types.Model.

``load_model(path)`` dispatches on the file extension; ``load_model_from_string(xml, assets)``
compiles MJCF text with an optional {filename: bytes} dict for meshes and included files.
"""
from __future__ import annotations

import os

from ..types import ModelError

__all__ = ["load_model", "load_model_from_string", "ModelError"]


def load_model(path):
    """Compile a model file: .xml (MJCF) or .urdf (URDF)."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".urdf":
        from .urdf import load_urdf
        return load_urdf(path)
    if not os.path.isfile(path):
        raise ModelError("model file not found", file=path)
    from .mjcf import load_mjcf
    return load_mjcf(path)


def load_model_from_string(xml_text, assets=None):
    """Compile MJCF text; `assets` maps file names to bytes (meshes, included files)."""
    from .mjcf import load_mjcf_string
    return load_mjcf_string(xml_text, assets)

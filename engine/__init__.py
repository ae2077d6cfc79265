"""A multi-joint dynamics engine with contact in the spirit of MuJoCo.

Public API (see README): load_model, load_model_from_string, make_data, reset_data, reset_keyframe,
name2id, forward, step, full_inertia, Model, Data, ModelError and the enums.
"""
from .enums import (BiasType, CamLight, Cone, DisableBit, DynType, EqType, GainType, GeomType,
                    Integrator, JointType, Solver, TrnType, WrapType)
from .types import Data, Model, ModelError

__all__ = [
    "BiasType", "CamLight", "Cone", "DisableBit", "DynType", "EqType", "GainType", "GeomType",
    "Integrator", "JointType", "Solver", "TrnType", "WrapType", "Data", "Model", "ModelError",
    "load_model", "load_model_from_string", "make_data", "reset_data", "reset_keyframe",
    "name2id", "forward", "step", "full_inertia",
]


def __getattr__(name):
    # Submodules are imported on first use so that `import engine` stays fast.
    if name in ("load_model", "load_model_from_string"):
        from . import compiler
        return getattr(compiler, name)
    if name in ("make_data", "reset_data", "reset_keyframe", "name2id", "forward", "step",
                "full_inertia"):
        from . import forward
        return getattr(forward, name)
    raise AttributeError(f"module 'engine' has no attribute {name!r}")

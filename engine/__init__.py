"""A multi-joint dynamics engine with contact in the spirit of MuJoCo.

Public API (see README): load_model, load_model_from_string, make_data, reset_data, reset_keyframe,
name2id, id2name, forward, step, inverse, full_inertia, energy, contact_force, jac, rollout,
state_size, get_state, set_state, transition_fd, inverse_fd, transition_derivatives,
inverse_derivatives, smooth_derivatives, rigid_inverse, lcp (LCP solvers), Recorder,
load_trajectory, Model, Data, ModelError, CapacityError and the enums (ObjType, SensorType and
State among them); Spec (models edited in code) and save_model_xml.
"""
from .enums import (BiasType, CamLight, Cone, DisableBit, DynType, EqType, GainType, GeomType,
                    Integrator, Jacobian, JointType, ObjType, SensorType, Solver, Stabilization, State,
                    TrnType, WrapType)
from .types import CapacityError, Data, Model, ModelError
from .views import id2name, name2id
# imported after the submodule of the same name, so that engine.forward is the function
from .forward import (energy, forward, full_inertia, make_data, reset_data,  # noqa: E402
                      reset_keyframe, step)
from .inverse import inverse  # noqa: E402
from .constraint import contact_force  # noqa: E402
from .rollout import get_state, rollout, set_state, state_size  # noqa: E402
from .smooth import jac  # noqa: E402
from .derivative_fd import inverse_fd, transition_fd  # noqa: E402
from .derivative_analytic import (inverse_derivatives, smooth_derivatives,  # noqa: E402
                                  transition_derivatives)
from . import lcp  # noqa: E402
from .rigid_inverse import rigid_inverse  # noqa: E402
from .trajectory import Recorder, TrajectoryModelMismatch, load_trajectory  # noqa: E402
from .compiler import Spec  # noqa: E402
from .compiler.save import save_model_xml  # noqa: E402
from . import warmup  # noqa: E402

warmup.start()     # on an empty numba cache: compile part of the engine in a second process

__all__ = [
    "BiasType", "CamLight", "Cone", "DisableBit", "DynType", "EqType", "GainType", "GeomType",
    "Integrator", "Jacobian", "JointType", "ObjType", "SensorType", "Solver", "Stabilization", "State",
    "TrnType", "WrapType", "Data", "Model", "ModelError", "CapacityError",
    "load_model", "load_model_from_string", "make_data", "reset_data", "reset_keyframe",
    "name2id", "id2name", "forward", "step", "full_inertia", "energy", "inverse", "contact_force",
    "rollout", "state_size", "get_state", "set_state", "jac",
    "transition_fd", "inverse_fd", "transition_derivatives", "inverse_derivatives",
    "smooth_derivatives",
    "Recorder", "load_trajectory", "TrajectoryModelMismatch", "Spec", "save_model_xml",
    "lcp", "rigid_inverse",
]


def load_model(path):
    """Compile an MJCF (.xml) or URDF (.urdf) file into a Model."""
    from . import compiler
    from .setconst import set_const
    m = compiler.load_model(path)
    warmup.model(m)         # the background compilation (cold cache) goes on with m's kernels
    return set_const(m)


def load_model_from_string(xml_text, assets=None):
    """Compile MJCF text; assets maps file names (meshes, includes) to bytes."""
    from . import compiler
    from .setconst import set_const
    m = compiler.load_model_from_string(xml_text, assets)
    warmup.model(m)
    return set_const(m)

"""Loading a model file for the studio: never raises for a bad or missing file.

``load_model_file(path)`` returns ``(m, d, None)`` with the step kernels compiled (or loaded from
numba's cache) before any clock starts, or ``(None, None, message)`` with the ModelError's
message (file, line, element, attribute) or the reason the file could not be read.
``empty_world()`` is what the window shows when the model given on the command line fails.
"""
from __future__ import annotations

import os

EMPTY_WORLD = '<mujoco model="empty"/>'


def _prepared(m):
    import engine
    d = engine.make_data(m)
    engine.forward(m, d)
    engine.step(m, engine.make_data(m))       # compile or load the step kernel now
    return m, d


def load_model_file(path):
    """(m, d, None) or (None, None, message)."""
    import engine
    try:
        return (*_prepared(engine.load_model(str(path))), None)
    except engine.ModelError as e:
        msg = str(e)
        if os.path.basename(str(path)) not in msg:
            msg = f"{path}: {msg}"
        return None, None, msg
    except OSError as e:
        return None, None, f"cannot read model {path}: {e.strerror or e}"
    except Exception as e:                        # a compiler bug must not take the studio down
        return None, None, f"{path}: {type(e).__name__}: {e}"


def empty_world():
    """(m, d) of a world without bodies or geoms."""
    import engine
    return _prepared(engine.load_model_from_string(EMPTY_WORLD))

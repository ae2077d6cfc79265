"""Loading a model file for the studio: never raises for a bad or missing file.

``load_model_file(path, preview=None)`` returns ``(m, d, None)`` with the step kernels compiled
(or loaded from numba's cache) before any clock starts, or ``(None, None, message)`` with the
ModelError's message (file, line, element, attribute) or the reason the file could not be read.
A path DIR/CELL into a sweep directory (engine.sweep) loads that cell's model.
``empty_world()`` is what the window shows when the model given on the command line fails.
``save_mjcf(m, path, keys)`` writes the model as MJCF with the edits made in the panels and the
studio's keyframes.
"""
from __future__ import annotations

import os

EMPTY_WORLD = '<mujoco model="empty"/>'


def _prepared(m, keyframe=None):
    import engine
    engine.warmup.join(m)      # on a cold cache the kernels compile now, not run as plain Python
    d = engine.make_data(m)
    if keyframe is not None:
        engine.reset_keyframe(m, d, keyframe)
    engine.forward(m, d)
    engine.step(m, engine.make_data(m))       # compile or load the step kernel now
    return m, d


def load_model_file(path, preview=None):
    """(m, d, None) or (None, None, message). A cell of a sweep directory (DIR/CELL, written
    by python -m engine.sweep) loads as the sweep's model with that cell's parameters.
    ``preview(m, keyframe)``, when given, is called once the model is compiled, before its
    kernels are (studio.startup shows the model meanwhile)."""
    import engine
    from engine import sweep
    try:
        if sweep.is_cell(str(path)):
            m, cell = sweep.cell_model(str(path))
            keyframe = cell["keyframe"]
        else:
            m, keyframe = engine.load_model(str(path)), None
        if preview is not None:
            preview(m, keyframe)
        return (*_prepared(m, keyframe), None)
    except (engine.ModelError, sweep.SweepError) as e:
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


def save_mjcf(m, path, keys=None):
    """Write model `m` as MJCF to `path`: its spec with the values edited since it was loaded
    (options, equality switches ...) and, when given, `keys` (studio.keyframes.Key) as its
    keyframes. Returns None, or the reason it could not be written."""
    from engine.compiler.elements import Key
    from engine.compiler.save import update_spec
    try:
        spec = update_spec(m).copy()
    except ValueError as e:
        return str(e)
    if keys is not None:
        spec.keys = []
        for k in keys:
            values = {f: [float(x) for x in getattr(k, f)] for f in
                      ("qpos", "qvel", "act", "ctrl", "mpos", "mquat") if len(getattr(k, f))}
            spec.keys.append(Key(name=k.name, time=float(k.time), **values))
    try:
        spec.save_xml(path)
    except OSError as e:
        return f"cannot write {path}: {e.strerror or e}"
    return None

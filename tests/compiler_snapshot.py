"""Bit-for-bit reference of the compiler's output on every model that loads.

    python tests/compiler_snapshot.py save DIR     # compile every model, store one pickle each
    python tests/compiler_snapshot.py check DIR    # compile again, compare with what was stored
        [--ignore=EXTRA ...]                       # leave out a non-array attribute (textures)

A snapshot holds every array of the Model (dtype, shape and bytes), the sizes, the names and every
other attribute the compiler sets (materials, textures, sensors, warnings ...); models that fail
to load are stored as their error (file, line, element, attribute, message), so that a rewrite of
the compiler can be checked to keep both the models and the error reports. The models are those of
tests/corpus.py (set ENGINE_CORPUS_DIRS for more). DIR is meant to live outside version control
(out/ is ignored by git): a stored reference is a tool for a refactoring, not a lasting test.
"""
import hashlib
import logging
import os
import pickle
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from engine import compiler  # noqa: E402
from engine.types import ModelError  # noqa: E402

import corpus  # noqa: E402

_INTERNAL = {"_arrays", "_struct", "_sizes", "_name_index", "opt", "_spec", "_extras"}


def snapshot(m):
    """Everything the compiler produced, as plain comparable values."""
    arrays = {k: (str(a.dtype), a.shape, a.tobytes()) for k, a in m._arrays.items()}
    extras = {k: v for k, v in vars(m).items()
              if k not in _INTERNAL and k not in m._arrays and k not in m._sizes}
    return {"sizes": dict(m._sizes), "arrays": arrays, "extras": _plain(extras)}


def _plain(v):
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return ("ndarray", str(v.dtype), v.shape, v.tobytes())
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    return v


def compile_one(path):
    try:
        return snapshot(compiler.load_model(path))
    except ModelError as e:
        return {"error": (e.file, e.line, e.element, e.attribute, e.reason)}


def _key(path):
    """File name of a model's snapshot: the same for the same model in another checkout."""
    short = corpus.short_name(path)
    name = short.replace(os.sep, "__")
    return name[-120:] + "." + hashlib.sha1(short.encode()).hexdigest()[:8] + ".pkl"


def differences(old, new, ignore=()):
    """Human-readable differences between two snapshots (empty if identical); extras named in
    `ignore` are not compared."""
    if "error" in old or "error" in new:
        if old.get("error") != new.get("error"):
            return [f"error: {old.get('error')} -> {new.get('error')}"]
        return []
    out = []
    if old["sizes"] != new["sizes"]:
        out.append(f"sizes: {old['sizes']} -> {new['sizes']}")
    for k in sorted(set(old["arrays"]) | set(new["arrays"])):
        a, b = old["arrays"].get(k), new["arrays"].get(k)
        if a != b:
            if a is None or b is None:
                out.append(f"array {k}: {'added' if a is None else 'removed'}")
            else:
                x = np.frombuffer(a[2], dtype=a[0]).reshape(a[1]) if a[0] == b[0] else None
                y = np.frombuffer(b[2], dtype=b[0]).reshape(b[1]) if a[0] == b[0] else None
                if x is not None and x.shape == y.shape:
                    bad = np.argwhere(x != y)
                    out.append(f"array {k}: {len(bad)} entries differ, first at "
                               f"{tuple(bad[0])}: {x[tuple(bad[0])]!r} -> {y[tuple(bad[0])]!r}")
                else:
                    out.append(f"array {k}: dtype/shape {a[:2]} -> {b[:2]}")
    for k in sorted(set(old["extras"]) | set(new["extras"])):
        if k in ignore:
            continue
        a, b = old["extras"].get(k), new["extras"].get(k)
        if k == "warnings" and a is not None and b is not None:
            a, b = sorted(a), sorted(b)        # the order of the reports may change
        if a != b:
            out.append(f"extra {k}: {str(old['extras'].get(k))[:300]} -> "
                       f"{str(new['extras'].get(k))[:300]}")
    return out


def main(argv):
    logging.disable(logging.WARNING)
    if len(argv) < 2 or argv[0] not in ("save", "check"):
        print(__doc__)
        return 2
    mode, folder = argv[0], argv[1]
    ignore = [a.split("=", 1)[1] for a in argv if a.startswith("--ignore=")]
    os.makedirs(folder, exist_ok=True)
    n_ok = n_err = n_diff = 0
    for path in corpus.all_models():
        snap = compile_one(path)
        n_ok += "error" not in snap
        n_err += "error" in snap
        file = os.path.join(folder, _key(path))
        if mode == "save":
            with open(file, "wb") as f:
                pickle.dump({"path": path, "snapshot": snap}, f)
            continue
        if not os.path.exists(file):
            print(f"NEW   {corpus.short_name(path)}")
            continue
        with open(file, "rb") as f:
            old = pickle.load(f)["snapshot"]
        diff = differences(old, snap, ignore)
        if diff:
            n_diff += 1
            print(f"DIFF  {corpus.short_name(path)}")
            for line in diff[:8]:
                print("      " + line)
    print(f"{mode}: {n_ok} models compiled, {n_err} errors" +
          (f", {n_diff} differ from {folder}" if mode == "check" else f", stored in {folder}"))
    return 1 if n_diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

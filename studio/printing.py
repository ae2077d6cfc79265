"""Print the model and the data as text, as MuJoCo's mj_printModel and mj_printData: the sizes
and options, then every array by its field name (engine.types' tables, in their order), one row
per line. The Simulation panel's Print button writes both into the output folder."""
from __future__ import annotations

import numpy as np


def _array(out, name, a) -> None:
    a = np.asarray(a)
    out.append(f"{name} {a.shape if a.ndim else ''}".rstrip())
    if a.ndim == 0:
        out[-1] += f"  {a.item()!r}"
        return
    if a.size == 0:
        return
    rows = a.reshape(a.shape[0], -1) if a.ndim > 1 else a.reshape(1, -1)
    fmt = "{:.9g}".format if np.issubdtype(a.dtype, np.floating) else str
    out.extend("  " + " ".join(map(fmt, row)) for row in rows.tolist())


def print_model(m, path) -> None:
    from engine.types import MODEL_SIZES, MODEL_SPEC
    out = [f"MODEL {getattr(m, 'model_name', '') or ''}".rstrip(), "", "SIZES"]
    out += [f"  {k:12s} {getattr(m, k)}" for k in MODEL_SIZES]
    out += ["", "OPTION", f"  {m.opt!r}", ""]
    for name, _, _ in MODEL_SPEC:
        if not name.startswith("opt_"):
            _array(out, name, getattr(m, name))
    for kind, names in m.names.items():
        if names:
            out.append(f"names.{kind}")
            out += [f"  {i} {n}" for i, n in enumerate(names)]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def data_arrays(d) -> dict:
    """Copies of the Data's fields (the first ncon contacts and nefc rows), taken between two
    steps so that printing can happen elsewhere."""
    from engine.types import DATA_SPEC
    ncon = int(np.asarray(d.ncon).reshape(-1)[0])      # a Python int, or a 1-element array
    nefc = int(np.asarray(d.nefc).reshape(-1)[0])
    out = {}
    for name, _, shape in DATA_SPEC:
        a = getattr(d, name)
        if shape and shape[0] == "nconmax":
            a = a[:ncon]
        elif shape and shape[0] == "njmax":
            a = a[:nefc]
        out[name] = np.array(a)
    return out


def print_data(arrays: dict, path) -> None:
    """Write the arrays of ``data_arrays`` as text."""
    def first(name):
        return np.asarray(arrays[name]).reshape(-1)[0]
    out = [f"DATA  time {float(first('time'))!r}  ncon {int(first('ncon'))}  "
           f"nefc {int(first('nefc'))}", ""]
    for name, a in arrays.items():
        _array(out, name, a)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")

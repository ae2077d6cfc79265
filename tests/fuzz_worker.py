"""Worker of tests/test_fuzz.py: loads each model file, and when it loads, steps it, feeds it
non-finite state and inputs, and resets it. The files are listed in the file given as argument,
one ``ID<tab>PATH`` a line. Prints one line per file: ``start ID`` before, then ``ok ID
load|modelerror`` or ``stray ID ExceptionType: message`` (an exception other than
engine.ModelError at load, any exception or a missed warning at run time).
A signal or a hang shows as a ``start`` line without its outcome."""
import sys
import warnings

import numpy as np

import engine
from engine.enums import Warning


def run(m):
    """Step, poison, step, reset, step; a message for what went wrong, or None."""
    d = engine.make_data(m)
    engine.step(m, d, 10)
    if m.nq:
        d.qpos[0] = np.nan
        engine.step(m, d, 2)
        if d.warning[Warning.BADQPOS] != 1:
            return f"NaN qpos counted {d.warning[Warning.BADQPOS]} times, not once"
    if m.nu:
        d.ctrl[:] = np.inf
        d.ctrl[0] = np.nan
        for k in (1, 2):    # counted at each step while it stays bad (an auto-reset zeroes it)
            if np.isfinite(d.ctrl).all():
                break
            engine.step(m, d)
            if d.warning[Warning.BADCTRL] < k:
                return "a NaN ctrl was not counted"
        d.ctrl[:] = 0.0
    if m.nv:
        d.qfrc_applied[-1] = np.nan
        engine.step(m, d)
        if d.warning[Warning.BADQACC] < 1:
            return "a NaN qfrc_applied was not counted"
    engine.reset_data(m, d)
    if d.warning.any() or d.time != 0.0:
        return "reset_data left warnings or time"
    engine.step(m, d, 5)
    return None


def main():
    warnings.simplefilter("ignore")
    with open(sys.argv[1]) as f:
        jobs = f.read().splitlines()
    for line in jobs:
        ident, path = line.split("\t")
        print("start", ident, flush=True)
        try:
            m = engine.load_model(path)
        except engine.ModelError:
            print("ok", ident, "modelerror", flush=True)
            continue
        except BaseException as e:           # noqa: BLE001 - the point is to catch any
            print("stray", ident, f"load {type(e).__name__}: {str(e)[:200]!r}", flush=True)
            continue
        try:
            problem = run(m)
        except BaseException as e:           # noqa: BLE001
            problem = f"run {type(e).__name__}: {str(e)[:200]!r}"
        if problem:
            print("stray", ident, problem, flush=True)
        else:
            print("ok", ident, "load", flush=True)


if __name__ == "__main__":
    main()

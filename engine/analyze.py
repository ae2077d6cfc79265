"""Command line: inverse analysis of a recording.

    python -m engine.analyze TRAJ [--model MODEL] [--out DIR] [--quiet]

Loads the recording, the model it names (or MODEL; its hash must match the recording's), runs the
inverse dynamics over every step (engine.analysis) and writes into DIR (default: TRAJ without its
extension + "_analysis"): controls.csv, qfrc.csv, impulses.csv, summary.json, and the figures
controls.png, impulses.png with their SVG twins (engine.figures). Prints one line per signal
family (max and RMS error) on stdout and a progress bar on stderr. Exit code 2, with one line on
stderr, on a bad recording (any engine.trajectory.TrajectoryError, or a file that cannot be
read), a missing model, a model mismatch or a model that cannot be inverted (hard equality
constraints); exit code 1 when no step could be analysed (every step skipped, e.g. a recording
made with a multi-stage integrator such as RK4): the outputs are written, and the reasons
printed.
"""
import argparse
import os
import sys

from .analysis import AnalysisError, analyse, write_outputs
from .trajectory import TrajectoryError, TrajectoryModelMismatch, load_trajectory
from .types import ModelError


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m engine.analyze",
                                description="Inverse analysis of a recorded trajectory.")
    p.add_argument("traj", help="trajectory file written by engine.Recorder")
    p.add_argument("--model", help="model file (default: the path stored in the recording)")
    p.add_argument("--out", help="output directory (default: TRAJ_analysis)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    from . import load_model
    try:
        traj = load_trajectory(args.traj)
        model_path = args.model or traj.model_path
        if model_path is None:
            raise FileNotFoundError("the recording names no model file (it was compiled from a "
                                    "string): pass --model")
        if not os.path.isfile(model_path):
            raise FileNotFoundError(f"model file {model_path} not found: pass --model")
        m = load_model(model_path)
        result = analyse(traj, m, progress=not args.quiet)
    except (TrajectoryError, TrajectoryModelMismatch, ModelError, OSError,
            AnalysisError) as e:
        print(f"analyze: error: {e}", file=sys.stderr)
        return 2
    out = args.out or os.path.splitext(args.traj)[0] + "_analysis"
    write_outputs(result, out)
    s = result.summary()
    us = s["inverse_us_per_step"]
    print(f"analyze: {s['analysed']}/{s['steps']} steps analysed, inverse "
          + (f"{us:.1f} us/step (median)" if us is not None else "not run")
          + f", outputs in {out}")
    for reason, count in s["skipped"].items():
        print(f"  skipped {count}: {reason}")
    print(f"  {'signal family':<22}{'max abs error':>15}{'rms error':>13}{'max |ref|':>13}"
          f"{'max rel':>11}")
    for fam, st in s["families"].items():
        if st["n"]:
            rel = "n/a" if st["max_rel"] is None else f"{st['max_rel']:.2e}"
            print(f"  {fam:<22}{st['max_abs']:>15.3e}{st['rms']:>13.3e}{st['scale']:>13.3e}"
                  f"{rel:>11}")
    png = s["impulses_png"]
    if png["shown"] < png["objects"]:
        print(f"  impulses.png shows {png['shown']} of {png['objects']} constraint objects "
              f"(those present in the most steps); impulses.csv has them all")
    if s["analysed"] == 0:
        print(f"analyze: error: none of the {s['steps']} steps could be analysed (reasons "
              f"above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Command line: inverse analysis of a recording, or of a set of recordings on Ray.

    python -m engine.analyze TRAJ [--model MODEL] [--out DIR] [--inverse MODEL] [--quiet]
    python -m engine.analyze DIR_OR_GLOB [--jobs N] [--address ADDR] [--serial] [--out DIR] ...

One recording: loads it, the model it names (or MODEL; its hash must match the recording's), runs
the inverse dynamics over every step (engine.analysis) and writes into DIR (default: TRAJ without
its extension + "_analysis"): controls.csv, qfrc.csv, impulses.csv, summary.json, and the figures
controls.png, impulses.png with their SVG twins (engine.figures). Prints one line per signal
family (max and RMS error) on stdout and a progress bar on stderr. Exit code 2, with one line on
stderr, on a bad recording (any engine.trajectory.TrajectoryError, or a file that cannot be
read), a missing model, a model mismatch or a model that cannot be inverted (hard equality
constraints); exit code 1 when no step could be analysed (every step skipped, e.g. a recording
made with a multi-stage integrator such as RK4): the outputs are written, and the reasons printed.

A directory (every *.traj below it) or a glob pattern: each recording is analysed as a Ray task
(``--jobs`` workers on this machine, or the cluster at ``--address``; ``--serial``: one after
another in this process) and writes its outputs beside itself (TRAJ_analysis/); one table across
the recordings, analysis_summary.csv (and .parquet with pyarrow), goes to DIR (default: the
directory given, or the deepest directory common to the matches). A recording that fails is
reported in its row and does not stop the others; the exit code is then 1. On a cluster the
recordings and models are read, and the outputs written, at the same paths on every node (a
shared file system).

``--inverse``: ``soft`` (default, engine.inverse) or a rigid-contact model (``noslip``,
``coulomb``, ``convex``: engine.analysis.analyse passes it on to engine.rigid_inverse); for one
recording the torque chatter of the recorded and the predicted actuator forces is printed.
"""
import argparse
import glob
import os
import socket
import sys
import time

from . import analysis
from .analysis import AnalysisError, write_outputs
from .trajectory import TrajectoryError, TrajectoryModelMismatch, load_trajectory
from .types import ModelError

SUMMARY = "analysis_summary"
ERRORS = (TrajectoryError, TrajectoryModelMismatch, ModelError, OSError, AnalysisError)


def _analyse_file(path, model=None, out=None, inverse="soft", progress=False):
    """Load, analyse and write the outputs of one recording: (result, out directory)."""
    from . import load_model
    traj = load_trajectory(path)
    model_path = model or traj.model_path
    if model_path is None:
        raise FileNotFoundError("the recording names no model file (it was compiled from a "
                                "string): pass --model")
    if not os.path.isfile(model_path):
        raise FileNotFoundError(f"model file {model_path} not found: pass --model")
    m = load_model(model_path)
    result = analysis.analyse(traj, m, progress=progress, inverse_model=inverse)
    out = out or os.path.splitext(path)[0] + "_analysis"
    write_outputs(result, out)
    return result, out


def summary_row(path, model=None, inverse="soft") -> dict:
    """Analyse one recording (outputs beside it) and return its row of the summary table; a
    failure becomes a row with status "error" and the message (never raises)."""
    row = {"recording": path, "status": "ok", "error": ""}
    t0 = time.perf_counter()
    try:
        result, out = _analyse_file(path, model, None, inverse)
    except Exception as e:                      # any failure of one recording is its row's
        row.update(status="error", error=f"{type(e).__name__}: {e}")
        return row
    s = result.summary()
    row.update(status="ok" if s["analysed"] else "error",
               error="" if s["analysed"] else "no step could be analysed: " + "; ".join(
                   f"{n} {why}" for why, n in s["skipped"].items()),
               model=s["model_path"], steps=s["steps"], analysed=s["analysed"],
               skipped=sum(s["skipped"].values()), inverse_us_per_step=s["inverse_us_per_step"],
               outputs=out, wall=time.perf_counter() - t0,
               worker=f"{socket.gethostname()}:{os.getpid()}")
    for fam, st in s["families"].items():
        if st["n"]:
            row.update({f"{fam}_max_abs": st["max_abs"], f"{fam}_rms": st["rms"],
                        f"{fam}_max_rel": st["max_rel"]})
    return row


def recordings(pattern) -> tuple[list, str]:
    """The recordings of a directory (every *.traj below it) or a glob pattern, sorted, and the
    directory for the summary table."""
    if os.path.isdir(pattern):
        paths = glob.glob(os.path.join(pattern, "**", "*.traj"), recursive=True)
        where = pattern
    elif not glob.has_magic(pattern):
        raise FileNotFoundError(f"{pattern}: no such file or directory")
    else:
        paths = [p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)]
        where = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in paths]) \
            if paths else "."
    return sorted(paths), where


def analyse_dataset(pattern, *, model=None, inverse="soft", out=None, address=None, jobs=None,
                    serial=False, progress=True) -> tuple[list, list]:
    """Analyse every recording of pattern; returns (rows, paths of the summary table)."""
    from .sweep import map_tasks, write_rows
    paths, where = recordings(pattern)
    if not paths:
        raise FileNotFoundError(f"no recordings (*.traj) in {pattern}")
    bar = analysis.Progress(len(paths), label="analyze", enabled=progress, unit="recordings")
    rows = {}

    def done(path, row):
        rows[path] = row
        bar.update(len(rows))

    map_tasks(summary_row, [(p, (p, model, inverse)) for p in paths], done,
              address=address, jobs=jobs, serial=serial,
              error_row=lambda p, e: {"recording": p, "status": "error",
                                      "error": f"{type(e).__name__}: {e}"})
    bar.close()
    rows = [rows[p] for p in paths]
    header = ["recording", "status", "error"]
    for row in rows:
        header += [k for k in row if k not in header]
    os.makedirs(out or where, exist_ok=True)
    written = write_rows(os.path.join(out or where, SUMMARY), header, rows)
    return rows, written


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m engine.analyze",
                                description="Inverse analysis of recorded trajectories: one "
                                            "file, or a directory or glob of them on Ray.")
    p.add_argument("traj", help="a trajectory file written by engine.Recorder, a directory (every "
                                "*.traj below it) or a glob pattern (quote it)")
    p.add_argument("--model", help="model file (default: the path stored in each recording)")
    p.add_argument("--out", help="output directory (one recording: default TRAJ_analysis; "
                                 "several: where the summary table goes)")
    p.add_argument("--inverse", choices=analysis.INVERSE_MODELS, default="soft",
                   help="inverse model: soft (the engine's convex soft contacts, default) or a "
                        "rigid-contact model")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="several recordings: Ray workers on this machine (default: every core)")
    p.add_argument("--address", help="several recordings: address of a running Ray cluster")
    p.add_argument("--serial", action="store_true",
                   help="several recordings: one after another in this process, without Ray")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        p.error("--jobs must be at least 1")
    if not os.path.isfile(args.traj):
        return _main_dataset(args)
    try:
        result, out = _analyse_file(args.traj, args.model, args.out, args.inverse,
                                    progress=not args.quiet)
    except ERRORS as e:
        print(f"analyze: error: {e}", file=sys.stderr)
        return 2
    s = result.summary()
    us = s["inverse_us_per_step"]
    print(f"analyze: {s['analysed']}/{s['steps']} steps analysed, {args.inverse} inverse "
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
    if s["chatter"] is not None:
        rec, got = s["chatter"]["recorded"], s["chatter"]["recovered"]
        print(f"  torque chatter (sum |f_k - f_k-1| over {got['steps']} step pairs): recorded "
              f"{rec['sum']:.4g} (peak {rec['peak']:.4g}), {args.inverse} inverse "
              f"{got['sum']:.4g} (peak {got['peak']:.4g})")
    png = s["impulses_png"]
    if png["shown"] < png["objects"]:
        print(f"  impulses.png shows {png['shown']} of {png['objects']} constraint objects "
              f"(those present in the most steps); impulses.csv has them all")
    if s["analysed"] == 0:
        print(f"analyze: error: none of the {s['steps']} steps could be analysed (reasons "
              f"above)", file=sys.stderr)
        return 1
    return 0


def _main_dataset(args):
    try:
        rows, written = analyse_dataset(args.traj, model=args.model, inverse=args.inverse,
                                        out=args.out, address=args.address, jobs=args.jobs,
                                        serial=args.serial, progress=not args.quiet)
    except (FileNotFoundError, ValueError) as e:
        print(f"analyze: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        if e.name != "ray":
            raise
        print("analyze: error: Ray is not installed (pip install 'engine-studio[ray]'), or "
              "analyse the recordings in this process with --serial", file=sys.stderr)
        return 2
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"analyze: {len(rows)} recordings, {len(rows) - len(failed)} analysed, "
          f"{len(failed)} failed; summary {written[0]}")
    for r in failed:
        print(f"  {r['recording']}: {r['error']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Time per step against MuJoCo on every corpus model that loads, and where the time goes.

    python benchmarks/corpus_speed.py [--filter TEXT] [--rounds 5] [--chunk 0.004]
                                      [--worst 5] [--csv FILE]
    python benchmarks/corpus_speed.py --steps 1000      # the first 1000 steps of each model
    python benchmarks/corpus_speed.py --best 300 [--filter TEXT]  # best single steps instead
    python benchmarks/corpus_speed.py --profile TEXT     # the stage profile of matching models
    python benchmarks/corpus_speed.py --settle 1 --same-solver   # see below
    python benchmarks/corpus_speed.py --mujoco-solver --filter dog
    python benchmarks/corpus_speed.py --steps 1000 --same-state 25  # ours from MuJoCo's states

The corpus is benchmarks/corpus.py's (every distinct model MuJoCo loads under the installed
dm_control, gymnasium and envpool asset packages). For each model that our compiler loads, both
engines start from the first keyframe (or the default state) with its controls and the model's
own options, and run in the same process in interleaved chunks: a chunk of n MuJoCo steps
(`mj_step(..., nstep=n)`, n chosen so that it takes about --chunk seconds), then n of ours
(`engine.step(m, d, n)`), --rounds times. The ratio of a model is the median over the rounds of
ours / MuJoCo's time per step: both engines see the same machine load at nearly the same
moment. With --best N the ratio is instead that of the best single step of N interleaved
ones, which a loaded machine disturbs least. Printed: every model's ratio and contact counts
at the end in both engines, the median, the 90th percentile and the worst five (timed again
at the same states, as --same-state 25 does), and for the --worst slowest models the time
per stage of both engines side by side (ours from engine.profile.stage_times, MuJoCo's from
its own stage timers, mjData.timer, fed by a clock compiled with numba) at the state where
the run ended.

The chunks cover the first few hundred steps of a light model but only the first few dozen of a
heavy one, where many models still settle (objects dropped onto a table, feet finding the
floor); --steps N times the first N steps of every model instead; --settle S first runs
both engines S simulated seconds from the start, untimed, to measure the steps that follow
instead. A model file that names no solver gets MuJoCo's default there (Newton, pyramidal
cones) and ours here (the paper's PGS, elliptic cones: engine.Solver); --same-solver gives
MuJoCo our solver and cone, so that both solve the same problem the same way, and
--mujoco-solver gives ours MuJoCo's (where it is PGS or Newton).
"""
import argparse
import ctypes
import logging
import pathlib
import sys
import time
import warnings

import mujoco
import numba
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import engine  # noqa: E402
from engine.profile import STAGES, stage_times  # noqa: E402
from corpus import corpus, corpus_roots, short_name  # noqa: E402

# MuJoCo's timer of each of our stages (None: MuJoCo has no timer of its own for it)
MJ_TIMER = {"kinematics": "POS_KINEMATICS", "inertia": "POS_INERTIA",
            "collision broad": "COL_BROAD", "collision narrow": "COL_NARROW",
            "constraint rows": "POS_MAKE", "transmission": None, "velocity": "VELOCITY",
            "actuation": "ACTUATION", "acceleration": None,
            "constraint projection": "POS_PROJECT", "solver": "CONSTRAINT",
            "integration": "ADVANCE", "forward": "FORWARD", "step": "STEP"}


# ------------------------------------------------------------------------------------------------
# MuJoCo's stage timers: a monotonic clock in microseconds as a C function
# ------------------------------------------------------------------------------------------------
_libc = ctypes.CDLL(None)
_clock_gettime = _libc.clock_gettime
_clock_gettime.argtypes = [ctypes.c_int, ctypes.c_void_p]
_clock_gettime.restype = ctypes.c_int
CLOCK_MONOTONIC = 1


@numba.cfunc("float64()")
def _now_us():
    ts = np.empty(2, np.int64)
    _clock_gettime(CLOCK_MONOTONIC, ts.ctypes.data)
    return ts[0] * 1e6 + ts[1] * 1e-3


_CLOCK = ctypes.cast(_now_us.address, ctypes.CFUNCTYPE(ctypes.c_double))


# the state --same-state copies from MuJoCo to ours (the fields both engines pack the same way)
_S = engine.State
SYNCED = int(_S.TIME | _S.QPOS | _S.QVEL | _S.ACT | _S.WARMSTART | _S.CTRL | _S.QFRC_APPLIED
             | _S.XFRC_APPLIED | _S.MOCAP_POS | _S.MOCAP_QUAT)
# the worst five are timed again from MuJoCo's states every SAME_STATE steps: a model whose two
# motions part (a chaotic start, different contact counts at the end) shows a ratio of two
# different motions, and this one of the same states
SAME_STATE = 25


def mujoco_stage_times(mm, md, nstep):
    """{stage: seconds per step} of MuJoCo's timers over nstep steps from md's state."""
    timers = {k: getattr(mujoco.mjtTimer, "mjTIMER_" + v) for k, v in MJ_TIMER.items() if v}
    before = {k: (md.timer[t].duration, md.timer[t].number) for k, t in timers.items()}
    mujoco.set_mjcb_time(_CLOCK)
    try:
        mujoco.mj_step(mm, md, nstep=nstep)
    finally:
        mujoco.set_mjcb_time(None)
    out = {}
    for k, t in timers.items():
        out[k] = (md.timer[t].duration - before[k][0]) * 1e-6 / nstep
    return out


# ------------------------------------------------------------------------------------------------
# one model
# ------------------------------------------------------------------------------------------------
class Run:
    """Both engines on one model, from the first keyframe (or the default state)."""

    def __init__(self, path, settle=0.0, same_solver=False, same_state=0, mujoco_solver=False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.mm = mujoco.MjModel.from_xml_path(str(path))
        self.name = short_name(path)
        self.m = engine.load_model(str(path))
        if same_solver and self.m.opt.solver in (engine.Solver.PGS, engine.Solver.NEWTON):
            self.mm.opt.solver = int(self.m.opt.solver)      # the same numbers as mjtSolver
            self.mm.opt.cone = int(self.m.opt.cone)          # ... and mjtCone
        if mujoco_solver and self.mm.opt.solver in (engine.Solver.PGS, engine.Solver.NEWTON):
            self.m.opt.solver = engine.Solver(int(self.mm.opt.solver))
            self.m.opt.cone = engine.Cone(int(self.mm.opt.cone))
        self.md, self.d = mujoco.MjData(self.mm), engine.make_data(self.m)
        self.same_state = same_state
        self.state = np.empty(mujoco.mj_stateSize(self.mm, SYNCED))
        if self.mm.nkey:
            mujoco.mj_resetDataKeyframe(self.mm, self.md, 0)
            engine.reset_keyframe(self.m, self.d, 0)
        engine.step(self.m, self.d)            # any compilation outside the timing
        mujoco.mj_step(self.mm, self.md)
        if settle > 0:
            n = int(round(settle / self.mm.opt.timestep))
            mujoco.mj_step(self.mm, self.md, nstep=n)
            engine.step(self.m, self.d, n)

    def ratio(self, chunk, rounds, steps=None):
        """(median of ours / MuJoCo's time per step over the rounds, MuJoCo's and our time per
        step in that median round). A round is a chunk of about `chunk` seconds of MuJoCo's
        steps (found by doubling from one step, untimed), or steps / rounds steps."""
        n = max(1, steps // rounds) if steps else 1
        while not steps:
            t = time.perf_counter()
            mujoco.mj_step(self.mm, self.md, nstep=n)
            if time.perf_counter() - t > chunk or n >= 1 << 16:
                break
            n *= 2
        rows = []
        for _ in range(rounds):
            t_mj, t_ours = self.steps(n)
            rows.append((t_ours / t_mj, t_mj / n, t_ours / n))
        rows.sort()
        return rows[len(rows) // 2]

    def steps(self, n):
        """MuJoCo's and our seconds for n steps each. With same_state = k, ours start every k
        steps from the state MuJoCo's steps started from (untimed): both then step the same
        states, though the trajectories of a model whose motion is chaotic part ways (the Jaco
        arm starts with its links deep inside one another, which the two engines' collisions
        resolve differently: a speed ratio of two different motions)."""
        t_mj = t_ours = 0.0
        for k in range(0, n, self.same_state or n):
            piece = min(self.same_state or n, n - k)
            if self.same_state:
                mujoco.mj_getState(self.mm, self.md, self.state, SYNCED)
            t = time.perf_counter()
            mujoco.mj_step(self.mm, self.md, nstep=piece)
            t_mj += time.perf_counter() - t
            if self.same_state:
                engine.set_state(self.m, self.d, self.state, SYNCED)
            t = time.perf_counter()
            engine.step(self.m, self.d, piece)
            t_ours += time.perf_counter() - t
        return t_mj, t_ours

    def best_step(self, nstep):
        """(ours / MuJoCo's best time of a single step over nstep interleaved steps, MuJoCo's
        and our best times): the least disturbed by other work on a loaded machine."""
        t_mj = t_ours = np.inf
        for _ in range(nstep):
            t = time.perf_counter()
            engine.step(self.m, self.d)
            t1 = time.perf_counter()
            mujoco.mj_step(self.mm, self.md)
            t2 = time.perf_counter()
            t_ours, t_mj = min(t_ours, t1 - t), min(t_mj, t2 - t1)
        return t_ours / t_mj, t_mj, t_ours

    def profile(self, seconds=1.0):
        """(ours, MuJoCo's) {stage: seconds} at the states where the runs are (ours at
        MuJoCo's with same_state)."""
        if self.same_state:
            mujoco.mj_getState(self.mm, self.md, self.state, SYNCED)
            engine.set_state(self.m, self.d, self.state, SYNCED)
        ours = stage_times(self.m, self.d, rounds=100000, seconds=seconds)
        n = max(1, int(seconds / max(ours["step"], 1e-7) / 20))
        mine = mujoco_stage_times(self.mm, self.md, n)
        return ours, mine


def print_profile(name, ours, mj, ncon, nefc, mj_ncon, mj_nefc):
    print(f"\n{name}   (ours: ncon {ncon} nefc {nefc}; MuJoCo: ncon {mj_ncon} nefc {mj_nefc})")
    print(f"  {'stage':<22} {'ours us':>9} {'MuJoCo us':>10} {'ratio':>7}")
    for s in STAGES + ("forward", "step"):
        a = ours[s] * 1e6
        b = mj.get(s)
        if b is None:
            print(f"  {s:<22} {a:9.2f} {'-':>10} {'-':>7}")
        else:
            b *= 1e6
            r = f"{a / b:7.2f}" if b > 0.05 else "      -"
            print(f"  {s:<22} {a:9.2f} {b:10.2f} {r}")


def load_line():
    try:
        with open("/proc/loadavg") as f:
            return "load average " + " ".join(f.read().split()[:3])
    except OSError:
        return "load average unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--filter", help="only files whose path contains this text")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per model")
    parser.add_argument("--chunk", type=float, default=0.004,
                        help="seconds of MuJoCo steps per round")
    parser.add_argument("--steps", type=int, metavar="N",
                        help="instead of chunks of --chunk seconds: N steps per model from the "
                             "start, in --rounds interleaved rounds")
    parser.add_argument("--best", type=int, metavar="N",
                        help="instead of chunks: the best single step of N interleaved ones")
    parser.add_argument("--worst", type=int, default=5, help="stage profiles of the worst N")
    parser.add_argument("--profile", metavar="TEXT",
                        help="only the stage profile of the models whose path contains TEXT")
    parser.add_argument("--csv", help="also write name, nv, ratio, MuJoCo us, ours us")
    parser.add_argument("--settle", type=float, default=0.0, metavar="S",
                        help="simulated seconds run untimed by both engines before the chunks")
    parser.add_argument("--same-solver", action="store_true",
                        help="MuJoCo runs with our solver and cone instead of its defaults")
    parser.add_argument("--same-state", type=int, default=0, metavar="K",
                        help="ours start every K steps from MuJoCo's state (both engines time "
                             "the same states, whatever their motions do)")
    parser.add_argument("--mujoco-solver", action="store_true",
                        help="ours run with MuJoCo's solver and cone (the file's, else Newton "
                             "and pyramidal) instead of ours")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    print("corpus:", ", ".join(label for label, _ in corpus_roots()) or "none installed")
    print(load_line(), f"({numba.config.NUMBA_NUM_THREADS} cores)")
    print(f"settle {args.settle} s untimed; MuJoCo's solver and cone: "
          + ("ours" if args.same_solver else "the file's (its defaults where it names none)")
          + ("; ours: MuJoCo's" if args.mujoco_solver else "")
          + (f"; ours from MuJoCo's state every {args.same_state} steps" if args.same_state
             else ""))
    paths, _ = corpus(args.profile or args.filter)
    rows, runs, refused = [], {}, 0
    for k, path in enumerate(paths):
        print(f"\r[{k + 1}/{len(paths)}] {short_name(path)[:100]:<100}", end="", flush=True,
              file=sys.stderr)
        try:
            run = Run(path, args.settle, args.same_solver, args.same_state, args.mujoco_solver)
        except engine.ModelError:
            refused += 1
            continue
        if args.profile:
            run.ratio(args.chunk, 1)
            ours, mj = run.profile()
            print(file=sys.stderr)
            print_profile(run.name, ours, mj, run.d.ncon, run.d.nefc, run.md.ncon, run.md.nefc)
            continue
        if args.best:
            ratio, t_mj, t_ours = run.best_step(args.best)
        else:
            ratio, t_mj, t_ours = run.ratio(args.chunk, args.rounds, args.steps)
        rows.append((ratio, run.name, run.mm.nv, t_mj, t_ours, run.d.ncon, run.md.ncon))
        runs[run.name] = path
    print(file=sys.stderr)
    if args.profile:
        return
    rows.sort(reverse=True)
    print(f"\n{'model':<80} {'nv':>4} {'MuJoCo us':>10} {'ours us':>9} {'ratio':>7} "
          f"{'contacts':>9}")
    for ratio, name, nv, t_mj, t_ours, ncon, mj_ncon in rows:
        print(f"{name:<80} {nv:>4} {t_mj * 1e6:10.1f} {t_ours * 1e6:9.1f} {ratio:7.2f} "
              f"{ncon:>4}/{mj_ncon:<4}")
    ratios = np.array([r[0] for r in rows])
    print(f"\n{len(rows)} models timed ({refused} refused by our compiler); "
          f"{load_line()} at the end")
    if len(rows):
        how = (f"best of {args.best} interleaved steps" if args.best
               else f"median over {args.rounds} interleaved rounds"
               + (f" of {max(1, args.steps // args.rounds)} steps" if args.steps else ""))
        print(f"time per step, ours / MuJoCo's ({how}): "
              f"median {np.median(ratios):.2f}, 90th percentile {np.quantile(ratios, 0.9):.2f}, "
              f"quartiles {np.quantile(ratios, 0.25):.2f}-{np.quantile(ratios, 0.75):.2f}; "
              f"above 2x: {int(np.sum(ratios > 2))}, above 4x: {int(np.sum(ratios > 4))}")
        print("worst five (contacts at the end, ours/MuJoCo's"
              + ("" if args.same_state or args.best else
                 f"; and the ratio with ours from MuJoCo's state every {SAME_STATE} steps")
              + "):")
        for ratio, name, nv, t_mj, t_ours, ncon, mj_ncon in rows[:5]:
            again = ""
            if not (args.same_state or args.best):
                run = Run(runs[name], args.settle, args.same_solver, SAME_STATE,
                          args.mujoco_solver)
                again = f"  same states {run.ratio(args.chunk, args.rounds, args.steps)[0]:7.2f}"
            print(f"  {ratio:7.2f}  contacts {ncon:>3}/{mj_ncon:<3}{again}  {name}")
    for ratio, name, *_ in rows[:args.worst]:
        run = Run(runs[name], args.settle, args.same_solver, args.same_state,
                  args.mujoco_solver)
        run.ratio(args.chunk, 1)
        ours, mj = run.profile()
        print_profile(f"{name} ({ratio:.2f}x)", ours, mj, run.d.ncon, run.d.nefc,
                      run.md.ncon, run.md.nefc)
    if args.csv:
        import csv
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(("model", "nv", "ratio", "mujoco_us", "ours_us"))
            for ratio, name, nv, t_mj, t_ours, *_ in rows:
                w.writerow((name, nv, f"{ratio:.4f}", f"{t_mj * 1e6:.3f}", f"{t_ours * 1e6:.3f}"))


if __name__ == "__main__":
    main()

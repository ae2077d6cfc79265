"""Load and step time against model size, ours beside MuJoCo's, and the scaling exponents.

    python benchmarks/scaling.py [--spheres 100 300 1000 3000] [--walkers 10 30 100 400]
                                 [--chains 100 300 450 1000 3000] [--steps 200]
                                 [--free-bodies 10000]

Families (tests/scaled_models.py): N free spheres on a plane, dm_control's walker replicated N
times, a chain of N nested hinged bodies (MJCF; MuJoCo's XML reader refuses nesting deeper than
about 500 elements and its compiler bodies deeper than 1023, so MuJoCo's column stays empty
there). Load is MJCF text -> model (ours: engine.load_model_from_string, set_const included;
MuJoCo: MjModel.from_xml_string); "load+step" adds make_data and `--steps` steps from the
initial state (the spheres reach the plane and touch it on the way). The exponent column is
log(t_N / t_prev) / log(N / N_prev): 1 is linear. One run per size, both engines in the same
process one after the other: absolute times follow the machine's load, compare the ratios.

Memory (--free-bodies N): N free spheres on a plane (sparse rows: jacobian="auto"), each engine
in a child process of its own, one after the other: load, make_data and `--steps` steps timed
apart, the peak resident set (VmHWM) of the child and its resident set after the imports
(the difference is what the model and its Data took), and the bytes of Data's arrays (ours)
or the arena MuJoCo was given (`<size memory="1G"/>`: its default does not hold 10,000
contacts; the pages it does not touch do not count in its resident set).
"""
import argparse
import json
import logging
import math
import pathlib
import resource
import subprocess
import sys
import time

import mujoco

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import engine  # noqa: E402
import scaled_models  # noqa: E402


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def ours_steps(xml, steps):
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    engine.step(m, d, steps)
    return d.ncon


def mujoco_steps(xml, steps):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d, steps)
    return d.ncon


def exponent(prev, n, t):
    if prev is None or prev[1] is None or t is None:
        return "     "
    return f"{math.log(t / prev[1]) / math.log(n / prev[0]):5.2f}"


def family(name, sizes, make, steps, mujoco_limit=None):
    print(f"\n{name}")
    head = f"{'N':>6s} {'ours s':>8s} {'MuJoCo s':>9s} {'ratio':>6s} {'exp':>5s} {'exp MJ':>6s}"
    if steps:
        head += f" | {'load+step ours':>14s} {'MuJoCo':>7s} {'ratio':>6s} {'ncon':>11s}"
    print(head)
    prev_ours = prev_mj = None
    for n in sizes:
        xml = make(n)
        t_ours, _ = timed(lambda: engine.load_model_from_string(xml))
        t_mj = None
        if mujoco_limit is None or n <= mujoco_limit:
            t_mj, _ = timed(lambda: mujoco.MjModel.from_xml_string(xml))
        mj = f"{t_mj:9.3f}" if t_mj is not None else f"{'-':>9s}"
        ratio = f"{t_ours / t_mj:6.1f}" if t_mj else f"{'-':>6s}"
        line = (f"{n:6d} {t_ours:8.3f} {mj} {ratio} {exponent(prev_ours, n, t_ours)} "
                f"{exponent(prev_mj, n, t_mj):>6s}")
        if steps:
            s_ours, c_ours = timed(lambda: ours_steps(xml, steps))
            s_mj, c_mj = timed(lambda: mujoco_steps(xml, steps))
            line += f" | {s_ours:14.3f} {s_mj:7.3f} {s_ours / s_mj:6.1f} {c_ours:5d} {c_mj:5d}"
        print(line, flush=True)
        prev_ours, prev_mj = (n, t_ours), (n, t_mj)


def _rss_mib():
    """Current resident set of this process (MiB)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2 ** 20


def _peak_mib():
    """Peak resident set of this process (MiB): VmHWM, the high-water mark of this program's
    memory (ru_maxrss of a child also counts the parent's resident set when it was forked)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_child(which, n, steps):
    """Run in a child process: load, make the data and step n free spheres; print JSON."""
    logging.disable(logging.WARNING)
    xml = scaled_models.spheres(n)
    if which == "ours":
        ours_steps(scaled_models.spheres(2), 1)          # kernels loaded, not measured
    base = _rss_mib()
    out = {}
    if which == "ours":
        out["load"], m = timed(lambda: engine.load_model_from_string(xml))
        out["make"], d = timed(lambda: engine.make_data(m))
        out["step"], _ = timed(lambda: engine.step(m, d, steps))
        out["data_mib"] = sum(a.nbytes for a in d._arrays.values()) / 2 ** 20
        out["sparse"] = d.efc_Jrow.shape[0] > 0
    else:
        # MuJoCo's default arena does not hold 10,000 contacts: give it room (its pages are
        # touched only when used, so the resident set shows what it takes)
        xml = xml.replace("<mujoco>", '<mujoco><size memory="1G"/>')
        out["load"], m = timed(lambda: mujoco.MjModel.from_xml_string(xml))
        out["make"], d = timed(lambda: mujoco.MjData(m))
        out["step"], _ = timed(lambda: mujoco.mj_step(m, d, steps))
        out["data_mib"] = m.narena / 2 ** 20          # the arena it was given
        out["sparse"] = bool(mujoco.mj_isSparse(m))
    out.update(ncon=int(d.ncon), nefc=int(d.nefc), base_mib=base, peak_mib=_peak_mib())
    print(json.dumps(out))


def free_bodies(n, steps):
    print(f"\n{n} free spheres on a plane, {steps} steps (each engine in a child process)")
    print(f"{'':8s} {'load s':>7s} {'make s':>7s} {'step s':>7s} {'ncon':>6s} {'nefc':>6s} "
          f"{'sparse':>6s} {'Data MiB':>9s} {'peak RSS MiB':>13s} {'after imports':>14s}")
    for which in ("ours", "MuJoCo"):
        run = subprocess.run([sys.executable, __file__, "--memory-child", which, str(n),
                              str(steps)], capture_output=True, text=True)
        if run.returncode:
            print(f"{which:8s} failed: {run.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(run.stdout.strip().splitlines()[-1])
        print(f"{which:8s} {r['load']:7.2f} {r['make']:7.2f} {r['step']:7.2f} {r['ncon']:6d} "
              f"{r['nefc']:6d} {str(r['sparse']):>6s} {r['data_mib']:9.1f} "
              f"{r['peak_mib']:13.0f} {r['base_mib']:14.0f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spheres", type=int, nargs="*", default=[100, 300, 1000, 3000])
    ap.add_argument("--walkers", type=int, nargs="*", default=[10, 30, 100, 400])
    ap.add_argument("--chains", type=int, nargs="*", default=[100, 300, 450, 1000, 3000])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--free-bodies", type=int, nargs="*", default=[10000])
    ap.add_argument("--memory-child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        which, n, steps = args.memory_child
        return memory_child(which, int(n), int(steps))
    logging.disable(logging.WARNING)
    ours_steps(scaled_models.spheres(2), 1)          # imports and compiled kernels, not timed
    family("free spheres on a plane", args.spheres, scaled_models.spheres, args.steps)
    family("dm_control walkers", args.walkers, scaled_models.walkers, args.steps)
    family("chain of hinges (MJCF)", args.chains, scaled_models.chain, 0, mujoco_limit=450)
    for n in args.free_bodies:
        free_bodies(n, args.steps)


if __name__ == "__main__":
    main()

"""Forward versus inverse dynamics on the humanoid: the paper's Fig. 3.

The dm_control humanoid (all contact friction directions enabled, condim 6, as in the paper) is
dropped on the floor and pushed around by random forces. At every step the forward dynamics
(PGS with 5 and with 50 iterations, tolerance 0 so that all iterations run) and the inverse
dynamics are timed at the same state, together with MuJoCo's mj_forward (PGS, same iterations)
and mj_inverse. Times are medians per bucket of constraint rows; ratios are printed side by side.

    python benchmarks/inverse.py [--steps 600] [--out DIR]

The figure (inverse_fig3.png and .svg) goes into DIR, by default benchmarks/out/ (not tracked).
"""
import argparse
import pathlib
import shutil
import sys
import tempfile
import time

import mujoco
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import engine  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent / "out"


def suite_path(name):
    import dm_control
    return str(pathlib.Path(dm_control.__file__).parent / "suite" / f"{name}.xml")


def best_time(fn, repeat=5):
    """Shortest of a few runs (the state is restored by fn itself)."""
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def humanoid_condim6(folder):
    """The humanoid with every geom at condim 6 (torsional and rolling friction as well),
    written into folder beside a copy of the suite's common assets; returns its path."""
    suite = pathlib.Path(suite_path("humanoid")).parent
    shutil.copytree(suite / "common", folder / "common")
    xml = (suite / "humanoid.xml").read_text()
    path = folder / "humanoid_condim6.xml"
    path.write_text(xml.replace("<default>", '<default>\n    <geom condim="6"/>', 1))
    return str(path)


def collect(steps, seed=0):
    with tempfile.TemporaryDirectory() as folder:
        path = humanoid_condim6(pathlib.Path(folder))
        m = engine.load_model(path)
        mm = mujoco.MjModel.from_xml_path(path)
    m.opt.timestep = 0.01
    m.opt.tolerance = 0.0
    d = engine.make_data(m)
    mm.opt.timestep = 0.01
    mm.opt.tolerance = 0.0
    mm.opt.solver = mujoco.mjtSolver.mjSOL_PGS
    mm.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    md = mujoco.MjData(mm)
    rng = np.random.default_rng(seed)
    d.qpos[2] = 1.0
    engine.step(m, d, 100)
    names = ["ours PGS 5", "ours PGS 50", "ours inverse", "MuJoCo PGS 5", "MuJoCo PGS 50",
             "MuJoCo inverse"]
    times = {name: {} for name in names}
    push = np.zeros((m.nbody, 6))
    for k in range(steps):
        if k % 40 == 0:                              # a new random push on a random body
            push[:] = 0.0
            push[rng.integers(1, m.nbody), :3] = rng.normal(0, 200, 3)
        d.xfrc_applied[:] = push
        m.opt.iterations = 5
        engine.step(m, d)
        qpos, qvel, warm = d.qpos.copy(), d.qvel.copy(), d.qacc_warmstart.copy()
        engine.forward(m, d)
        nefc = d.nefc
        bucket = 10 * (nefc // 10)
        qacc = d.qacc.copy()

        def ours_forward():
            d.qpos[:], d.qvel[:], d.qacc_warmstart[:] = qpos, qvel, warm
            engine.forward(m, d)

        def ours_inverse():
            d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel, qacc
            engine.inverse(m, d)

        def mj_forward():
            md.qpos[:], md.qvel[:] = qpos, qvel
            mujoco.mj_forward(mm, md)

        def mj_inverse():
            md.qpos[:], md.qvel[:], md.qacc[:] = qpos, qvel, qacc
            mujoco.mj_inverse(mm, md)

        # MuJoCo's calls go by its own number of rows (its contacts can differ from ours)
        mj_forward()
        mj_bucket = 10 * (int(md.nefc) // 10)
        for it in (5, 50):
            m.opt.iterations = mm.opt.iterations = it
            times[f"ours PGS {it}"].setdefault(bucket, []).append(best_time(ours_forward))
            times[f"MuJoCo PGS {it}"].setdefault(mj_bucket, []).append(best_time(mj_forward))
        times["ours inverse"].setdefault(bucket, []).append(best_time(ours_inverse))
        times["MuJoCo inverse"].setdefault(mj_bucket, []).append(best_time(mj_inverse))
        d.qpos[:], d.qvel[:], d.qacc_warmstart[:] = qpos, qvel, warm
    return times


def report(times):
    names = list(times)
    buckets = sorted(set().union(*times.values()))
    print("\nhumanoid (condim 6) at dt = 10 ms, pushed around; median time per call (us) by "
          "constraint rows (ours by our rows, MuJoCo's by its own; n: states of each)")
    print(f"  {'rows':>6s}{'n':>5s}{'n MJ':>5s}" + "".join(f"{n:>16s}" for n in names)
          + f"{'fwd5/inv':>10s}{'fwd50/inv':>10s}{'inv/MuJoCo':>11s}")
    medians = {}
    for b in buckets:
        med = {n: np.median(times[n].get(b, [np.nan])) * 1e6 for n in names}
        medians[b] = med
        print(f"  {b:4d}+ {len(times['ours inverse'].get(b, [])):5d}"
              f"{len(times['MuJoCo inverse'].get(b, [])):5d}"
              + "".join(f"{med[n]:16.1f}" for n in names)
              + f"{med['ours PGS 5'] / med['ours inverse']:10.1f}"
              + f"{med['ours PGS 50'] / med['ours inverse']:10.1f}"
              + f"{med['ours inverse'] / med['MuJoCo inverse']:11.2f}")
    return medians


def build_figure(medians):
    """The two panels of Fig. 3 against the number of constraint rows: time per call (ours
    solid, MuJoCo dashed, one colour per method) and the forward / inverse time ratio."""
    from matplotlib.figure import Figure

    rows = np.array(sorted(medians), float)

    def series(name):
        return np.array([medians[b][name] for b in sorted(medians)])

    fig = Figure(figsize=(12.0, 4.2), layout="constrained")
    times, speedup = fig.subplots(1, 2)
    for c, kind in enumerate(("PGS 5", "PGS 50", "inverse")):
        for who, ls in (("ours", "-"), ("MuJoCo", "--")):
            label = f"{who} {'forward ' if kind != 'inverse' else ''}{kind}"
            times.plot(rows, series(f"{who} {kind}"), color=f"C{c}", ls=ls, marker="o", ms=4,
                       label=label)
    for c, it in enumerate((5, 50)):
        for who, ls in (("ours", "-"), ("MuJoCo", "--")):
            speedup.plot(rows, series(f"{who} PGS {it}") / series(f"{who} inverse"),
                         color=f"C{c}", ls=ls, marker="o", ms=4,
                         label=f"{who}: forward PGS {it} / inverse")
    times.set_ylabel("time per call (\u00b5s)")
    speedup.set_ylabel("forward time / inverse time")
    for ax, title in ((times, "time per call"), (speedup, "speed-up of the inverse")):
        ax.set_title(title, loc="left")
        ax.set_xlabel("constraint rows (bins of 10)")
        ax.set_ylim(bottom=0.0)
        ax.grid(True, alpha=0.35)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  fontsize="small", frameon=False)
    fig.suptitle("humanoid, condim 6, dt = 10 ms: forward (PGS 5, 50 iterations) and inverse "
                 "dynamics\n(MuJoCo's calls binned by MuJoCo's own number of rows)")
    return fig


def figure(medians, out_dir):
    """Write the figure as inverse_fig3.png and .svg into out_dir; returns the paths."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fig = build_figure(medians)
    paths = [out_dir / f"inverse_fig3.{ext}" for ext in ("png", "svg")]
    for path in paths:
        fig.savefig(path, dpi=110)
    print("\nfigure written to " + ", ".join(map(str, paths)))
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--out", default=str(OUT),
                    help="directory of the figure (default: %(default)s)")
    args = ap.parse_args()
    print(f"MuJoCo {mujoco.__version__}")
    figure(report(collect(args.steps)), args.out)


if __name__ == "__main__":
    main()

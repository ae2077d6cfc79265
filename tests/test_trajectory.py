"""Trajectory recording: round trip, crash safety under SIGKILL, torn tails, model identity, CSV.

The oracle is the simulation itself: every loaded array is compared bit for bit with copies of
the Data fields taken while simulating, or with a re-simulation from the same initial state.
"""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest

import engine
from engine.trajectory import MAGIC, TrajectoryModelMismatch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARM = os.path.join(ROOT, "tests", "data", "trajectory_arm.xml")

STEP_FIELDS = ("time", "qpos", "qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied", "qacc",
               "actuator_force", "solver_residual")
CONTACT = ("dist", "pos", "frame", "friction", "geom1", "geom2", "dim", "efc_address")
EFC = ("type", "id", "force")


def drive(m, d, rng):
    """Random inputs for one step: controls, a generalised force, a wrench on the box."""
    d.ctrl[:] = rng.uniform(-1.0, 1.0, m.nu)
    d.qfrc_applied[:3] = rng.normal(0.0, 0.2, 3)
    d.xfrc_applied[engine.name2id(m, "body", "box")] = rng.normal(0.0, 0.5, 6)


def snapshot(d):
    s = {k: np.array(d.time if k == "time" else getattr(d, k), copy=True) for k in STEP_FIELDS}
    nc, ne = d.ncon, d.nefc
    s["ncon"], s["nefc"], s["solver_niter"] = nc, ne, int(d.solver_niter[0])
    s.update({"contact_" + k: getattr(d, "contact_" + k)[:nc].copy() for k in CONTACT})
    s.update({"efc_" + k: getattr(d, "efc_" + k)[:ne].copy() for k in EFC})
    return s


def assert_step_equal(traj, k, s):
    for f in STEP_FIELDS:
        np.testing.assert_array_equal(getattr(traj, f)[k], s[f], err_msg=f"step {k} {f}")
    assert (traj.ncon[k], traj.nefc[k], traj.solver_niter[k]) == (s["ncon"], s["nefc"],
                                                                   s["solver_niter"])
    c, e = traj.contact(k), traj.efc(k)
    for f in CONTACT:
        np.testing.assert_array_equal(c[f], s["contact_" + f], err_msg=f"step {k} contact {f}")
    for f in EFC:
        np.testing.assert_array_equal(e[f], s["efc_" + f], err_msg=f"step {k} efc {f}")


@pytest.fixture(scope="module")
def arm():
    m = engine.load_model(ARM)
    m.opt.solver = engine.Solver.NEWTON
    m.opt.tolerance = 1e-12
    m.opt.iterations = 100
    return m


def test_round_trip_equals_simulation(arm, tmp_path):
    m = arm
    d = engine.make_data(m)
    rng = np.random.default_rng(3)
    path = tmp_path / "run.traj"
    snaps = []
    start = {k: getattr(d, k).copy() for k in ("qpos", "qvel", "act", "ctrl")}
    tol0 = m.opt.tolerance
    with engine.Recorder(m, path, d=d) as rec:
        for k in range(300):
            if k == 150:
                m.opt.tolerance = 1e-10   # an options record goes before step 150
            drive(m, d, rng)
            engine.step(m, d)
            rec.record(d)
            snaps.append(snapshot(d))
    m.opt.tolerance = tol0
    assert rec.closed
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # an intact file loads without a warning
        traj = engine.load_trajectory(path, model=m)
    assert len(traj) == 300
    assert sum(s["ncon"] for s in snaps) > 300, "the test needs contacts in most steps"
    for k, s in enumerate(snaps):
        assert_step_equal(traj, k, s)
    for f in ("qpos", "qvel", "act", "ctrl"):
        np.testing.assert_array_equal(traj.initial[f], start[f])
    assert traj.initial["time"] == 0.0
    assert traj.options_at(149)["tolerance"] == [1e-12]
    assert traj.options_at(150)["tolerance"] == [1e-10]
    assert traj.model_path == os.path.abspath(ARM)
    with pytest.raises(ValueError, match="closed"):
        rec.record(d)


def test_records_reach_disk_while_idle(arm, tmp_path):
    """No record() call for a while: the sync thread still writes what was recorded."""
    m = arm
    d = engine.make_data(m)
    path = tmp_path / "idle.traj"
    rec = engine.Recorder(m, path)
    for _ in range(5):
        engine.step(m, d)
        rec.record(d)
    time.sleep(1.5)
    with open(path, "rb") as f:   # another reader of the open file, as after a crash
        data = f.read()
    copy = tmp_path / "copy.traj"
    copy.write_bytes(data)
    assert len(engine.load_trajectory(copy)) == 5
    rec.close()


# the child records about a thousand steps a second (the studio records in real time): the
# parent re-simulates and compares every step on disk, at about 1 ms a step
CHILD = textwrap.dedent("""
    import sys, time, numpy as np, engine
    sys.path.insert(0, {tests!r})
    from test_trajectory import drive
    m = engine.load_model({arm!r})
    m.opt.solver = engine.Solver.NEWTON
    m.opt.tolerance = 1e-12
    m.opt.iterations = 100
    d = engine.make_data(m)
    rng = np.random.default_rng(11)
    rec = engine.Recorder(m, {path!r}, d=d)
    k = 0
    while True:
        drive(m, d, rng)
        engine.step(m, d)
        rec.record(d)
        k += 1
        if k % 25 == 0:
            print(k, flush=True)
        time.sleep(0.001)
""")


def test_sigkill_keeps_everything_but_the_last_second(arm, tmp_path):
    m = arm
    d = engine.make_data(m)
    engine.step(m, d)      # compiled kernels are cached before the child starts
    path = str(tmp_path / "killed.traj")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = CHILD.format(tests=os.path.join(ROOT, "tests"), arm=ARM, path=path)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env,
                            text=True)
    progress = []      # (receive time, records done)

    def reader():
        for line in proc.stdout:
            progress.append((time.monotonic(), int(line)))

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    deadline = time.monotonic() + 900
    while not progress and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert progress, "the recording process did not start"
    time.sleep(3.0)
    t_kill = time.monotonic()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    t.join(5)
    assert proc.returncode == -signal.SIGKILL
    safe = max([n for tr, n in progress if tr <= t_kill - 1.0], default=0)
    assert safe > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the last frame may be torn
        traj = engine.load_trajectory(path, model=m)
    n = len(traj)
    assert n >= safe, f"only {n} steps on disk, {safe} were recorded more than 1 s before the kill"
    assert np.all(np.diff(traj.time) > 0)
    # re-simulate from the same initial state with the same inputs: identical, bit for bit
    d = engine.make_data(m)
    for f in ("qpos", "qvel", "act"):
        np.testing.assert_array_equal(traj.initial[f], getattr(d, f))
    rng = np.random.default_rng(11)
    for k in range(n):
        drive(m, d, rng)
        engine.step(m, d)
        assert_step_equal(traj, k, snapshot(d))


def _record(m, path, n, seed=5):
    d = engine.make_data(m)
    rng = np.random.default_rng(seed)
    with engine.Recorder(m, path) as rec:
        for _ in range(n):
            drive(m, d, rng)
            engine.step(m, d)
            rec.record(d)
    return d


def _frame_starts(data):
    starts, pos = [], len(MAGIC)
    while pos < len(data):
        starts.append(pos)
        pos += 8 + int.from_bytes(data[pos:pos + 4], "little")
    return starts


def test_torn_or_corrupted_tail_is_dropped_with_a_warning(arm, tmp_path):
    m = arm
    path = tmp_path / "full.traj"
    _record(m, path, 40)
    data = path.read_bytes()
    full = engine.load_trajectory(path)
    assert len(full) == 40
    starts = _frame_starts(data)        # header, then 40 steps
    assert len(starts) == 41
    last = starts[-1]
    bad = tmp_path / "bad.traj"
    # cut inside the frame header, inside the payload, one byte short
    for cut in (last + 3, last + 8 + 17, len(data) - 1):
        bad.write_bytes(data[:cut])
        with pytest.warns(RuntimeWarning, match="dropped the last"):
            traj = engine.load_trajectory(bad)
        assert len(traj) == 39
        np.testing.assert_array_equal(traj.qpos, full.qpos[:39])
    # a flipped bit in the last frame's payload: bad checksum
    flipped = bytearray(data)
    flipped[last + 8 + 100] ^= 0x10
    bad.write_bytes(bytes(flipped))
    with pytest.warns(RuntimeWarning, match="bad checksum"):
        assert len(engine.load_trajectory(bad)) == 39
    # damage in the middle: everything from the damaged frame on is dropped
    flipped = bytearray(data)
    flipped[starts[21] + 8 + 40] ^= 0x01
    bad.write_bytes(bytes(flipped))
    with pytest.warns(RuntimeWarning, match="bad checksum"):
        traj = engine.load_trajectory(bad)
    assert len(traj) == 20
    np.testing.assert_array_equal(traj.efc_force, full.efc_force[:full.efc_offset[20]])
    bad.write_bytes(b"not a trajectory")
    with pytest.raises(ValueError, match="not a trajectory"):
        engine.load_trajectory(bad)


def test_model_mismatch_is_a_clear_error(arm, tmp_path):
    path = tmp_path / "run.traj"
    _record(arm, path, 10)
    text = open(ARM).read()
    same = engine.load_model_from_string(text)         # same content, no file: accepted
    engine.load_trajectory(path, model=same)
    other_path = tmp_path / "heavier_box.xml"
    other_path.write_text(text.replace('mass="0.5"', 'mass="0.6"'))
    other = engine.load_model(other_path)
    with pytest.raises(TrajectoryModelMismatch) as err:
        engine.load_trajectory(path, model=other)
    msg = str(err.value)
    assert os.path.abspath(ARM) in msg and str(other_path) in msg
    traj = engine.load_trajectory(path)
    with pytest.raises(TrajectoryModelMismatch):
        traj.check_model(other)


def test_csv_export(arm, tmp_path):
    m = arm
    path = tmp_path / "run.traj"
    _record(m, path, 60)
    traj = engine.load_trajectory(path)
    files = traj.to_csv(tmp_path / "csv")
    names = {os.path.basename(f) for f in files}
    assert {"qpos.csv", "qvel.csv", "ctrl.csv", "act.csv", "qfrc_applied.csv", "xfrc_applied.csv",
            "qacc.csv", "actuator_force.csv", "solver.csv", "contacts.csv", "efc.csv"} <= names

    def read(name):
        with open(tmp_path / "csv" / name) as f:
            header = f.readline().strip().split(",")
        return header, np.loadtxt(tmp_path / "csv" / name, delimiter=",", skiprows=1, ndmin=2)

    header, qpos = read("qpos.csv")
    assert header[:2] == ["step", "time"] and len(header) == 2 + m.nq
    assert "qpos_shoulder" in header and "qpos_box_3" in header
    assert qpos.shape == (60, 2 + m.nq)
    np.testing.assert_array_equal(qpos[:, 1], traj.time)
    np.testing.assert_array_equal(qpos[:, 2:], traj.qpos)    # %.17g round-trips doubles
    header, ctrl = read("ctrl.csv")
    assert header[2:] == ["ctrl_shoulder_motor", "ctrl_elbow_servo", "ctrl_wrist_filter"]
    np.testing.assert_array_equal(ctrl[:, 2:], traj.ctrl)
    header, xfrc = read("xfrc_applied.csv")
    assert len(header) == 2 + 6 * m.nbody and "xfrc_box_fx" in header
    header, con = read("contacts.csv")
    assert con.shape == (traj.contact_offset[-1], len(header))
    np.testing.assert_array_equal(con[:, 0], np.repeat(np.arange(60), traj.ncon))
    np.testing.assert_array_equal(con[:, header.index("dist")], traj.contact_dist)
    np.testing.assert_array_equal(con[:, header.index("geom2")], traj.contact_geom2)
    np.testing.assert_array_equal(con[:, header.index("frame_0"):header.index("frame_8") + 1],
                                  traj.contact_frame)
    header, efc = read("efc.csv")
    assert header == ["step", "time", "row", "type", "id", "force"]
    assert efc.shape == (traj.efc_offset[-1], 6)
    np.testing.assert_array_equal(efc[:, 5], traj.efc_force)
    header, solver = read("solver.csv")
    np.testing.assert_array_equal(solver[:, header.index("nefc")], traj.nefc)


def test_version_1_recordings_load_with_their_integrators_renumbered(arm, tmp_path):
    """Version 1 numbered the integrators SEMIIMPLICIT RK4 EXPLICIT MIDPOINT INTERLEAVE = 0..4;
    the loader maps them to engine.Integrator's values (MuJoCo's), so an old recording made
    with EXPLICIT (then 2) is not read as IMPLICIT (now 2)."""
    import json
    import struct
    import zlib
    m, d = arm, engine.make_data(arm)
    path = tmp_path / "old.traj"
    m.opt.integrator = engine.Integrator.EXPLICIT
    try:
        with engine.Recorder(m, path, d=d) as rec:
            engine.step(m, d)
            rec.record(d)
            m.opt.integrator = engine.Integrator.MIDPOINT     # an options record
            engine.step(m, d)
            rec.record(d)
    finally:
        m.opt.integrator = engine.Integrator.SEMIIMPLICIT
    # rewrite the file as version 1 wrote it: version 1, the old integer values
    data = path.read_bytes()
    out, pos = [data[:len(MAGIC)]], len(MAGIC)
    old_value = {int(engine.Integrator.EXPLICIT): 2, int(engine.Integrator.MIDPOINT): 3}
    while pos < len(data):
        length, _ = struct.unpack_from("<II", data, pos)
        payload = data[pos + 8:pos + 8 + length]
        kind, body = payload[:8], payload[8:]
        if kind[:1] in (b"H", b"O"):
            obj = json.loads(body)
            opts = obj["options"]
            opts["integrator"] = [old_value[v] for v in opts["integrator"]]
            if kind[:1] == b"H":
                obj["version"] = 1
            body = json.dumps(obj, separators=(",", ":")).encode()
            body += b" " * (-len(body) % 8)
            payload = kind + body
        out.append(struct.pack("<II", len(payload), zlib.crc32(payload)) + payload)
        pos += 8 + length
    path.write_bytes(b"".join(out))
    traj = engine.load_trajectory(path, model=m)
    assert traj.header["version"] == 1
    assert traj.options_at(0)["integrator"] == [int(engine.Integrator.EXPLICIT)]
    assert traj.options_at(1)["integrator"] == [int(engine.Integrator.MIDPOINT)]
    # a file of the current version is read as written
    assert engine.trajectory.VERSION == 2


def test_sensordata_is_recorded_with_each_step(tmp_path):
    """The sensors of each step (those of the state before it, as after mj_step) round-trip bit
    for bit, by name too, and go to sensordata.csv with a column per sensor component."""
    m = engine.load_model(os.path.join(ROOT, "tests", "data", "sensors_contact.xml"))
    d = engine.make_data(m)
    rng = np.random.default_rng(4)
    path = tmp_path / "sensors.traj"
    snaps = []
    with engine.Recorder(m, path, d=d) as rec:
        for _ in range(40):
            d.ctrl[:] = rng.uniform(-1, 1, m.nu)
            engine.step(m, d)
            rec.record(d)
            snaps.append(d.sensordata.copy())
    traj = engine.load_trajectory(path, model=m)
    assert traj.sensordata.shape == (40, m.nsensordata)
    np.testing.assert_array_equal(traj.sensordata, np.array(snaps))
    i = m.names["sensor"].index("maxforce")
    adr, dim = m.sensor_adr[i], m.sensor_dim[i]
    np.testing.assert_array_equal(traj.sensor("maxforce"), traj.sensordata[:, adr:adr + dim])
    files = traj.to_csv(tmp_path / "csv")
    csv = [f for f in files if f.endswith("sensordata.csv")][0]
    with open(csv) as f:
        header = f.readline().strip().split(",")
    assert len(header) == 2 + m.nsensordata and "maxforce_0" in header
    np.testing.assert_array_equal(np.loadtxt(csv, delimiter=",", skiprows=1)[:, 2:],
                                  traj.sensordata)


def test_version_1_recordings_still_load():
    """A recording made before sensordata was recorded (format version 1, made by the engine
    of that time from trajectory_arm.xml) loads, with no sensor data. Its model hash covers the
    inverse weights, which this engine computes with other rounding (1e-13 relative, by the
    articulated-inertia recursion): it can no longer be matched to its model, and the error
    says why."""
    traj = engine.load_trajectory(os.path.join(ROOT, "tests", "data", "trajectory_v1.traj"))
    assert traj.header["version"] == 1 and len(traj) == 5
    assert traj.sensordata.shape == (5, 0)
    with pytest.raises(TrajectoryModelMismatch, match="earlier version.*dof_invweight0"):
        traj.check_model(engine.load_model(ARM))


def test_model_hash_ignores_the_rounding_of_derived_quantities(tmp_path):
    """A recording's model hash leaves out the quantities the engine derives at qpos0 (inverse
    weights, dof_M0, actuator_acc0): a model whose derived arrays differ in their last bits is
    still its model; a changed mass is not."""
    m = engine.load_model(ARM)
    path = str(tmp_path / "arm.traj")
    d = engine.make_data(m)
    with engine.Recorder(m, path, d=d) as rec:
        engine.step(m, d)
        rec.record(d)
    traj = engine.load_trajectory(path)
    assert not set(engine.trajectory.DERIVED_ARRAYS) & set(traj.header["model_hash_fields"]["arrays"])
    again = engine.load_model(ARM)
    for name in engine.trajectory.DERIVED_ARRAYS:
        a = getattr(again, name)
        a[...] = np.nextafter(a, np.inf)
    traj.check_model(again)
    other = engine.load_model_from_string(open(ARM).read().replace('mass="0.5"', 'mass="0.6"'))
    with pytest.raises(TrajectoryModelMismatch, match="they differ$"):
        traj.check_model(other)

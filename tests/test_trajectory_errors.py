"""Bad recordings: every damaged or inconsistent file raises TrajectoryError naming the fault (or,
for a torn tail, loads its intact prefix with a warning), and ``python -m engine.analyze`` exits
with 2 and a one-line error. The cases rebuild frames with valid checksums, so the loader's
checks of the contents are reached, not just the checksum."""
import contextlib
import io
import json
import os
import struct
import warnings
import zlib

import numpy as np
import pytest

import engine
from engine import analyze
from engine.trajectory import MAGIC, TrajectoryError, load_trajectory

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARM = os.path.join(ROOT, "tests", "data", "trajectory_arm.xml")
FRAME = struct.Struct("<II")


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """A recording with an initial state, an options change and contacts; its frames."""
    m = engine.load_model(ARM)
    d = engine.make_data(m)
    path = str(tmp_path_factory.mktemp("traj") / "arm.traj")
    rec = engine.Recorder(m, path, d)
    rng = np.random.default_rng(0)
    for k in range(40):
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        if k == 20:
            m.opt.timestep = 0.5 * m.opt.timestep
        engine.step(m, d)
        rec.record(d)
    rec.close()
    traj = load_trajectory(path)
    assert traj.ncon.max() > 0 and len(traj.options) == 2 and traj.initial is not None
    with open(path, "rb") as f:
        data = f.read()
    return path, data, split(data)


def split(data):
    """[(kind, body)] of a well-formed file."""
    out, pos = [], len(MAGIC)
    while pos < len(data):
        length, _ = FRAME.unpack_from(data, pos)
        payload = data[pos + FRAME.size:pos + FRAME.size + length]
        out.append((payload[:8], payload[8:]))
        pos += FRAME.size + length
    return out


def join(frames):
    """A file of these frames, each with a valid checksum (bodies padded to 8 bytes with
    spaces, as the recorder pads its JSON)."""
    parts = [MAGIC]
    for kind, body in frames:
        payload = kind + body + b" " * (-len(body) % 8)
        parts.append(FRAME.pack(len(payload), zlib.crc32(payload)) + payload)
    return b"".join(parts)


def kinds(frames, k):
    return [i for i, (kind, _) in enumerate(frames) if kind.rstrip(b"\0") == k]


def header_of(frames):
    return json.loads(frames[0][1])


def with_header(frames, edit):
    h = header_of(frames)
    edit(h)
    return [(frames[0][0], json.dumps(h).encode())] + frames[1:]


def with_step(frames, k, edit):
    """frames with the k-th step body replaced by edit(bytearray)."""
    i = kinds(frames, b"S")[k]
    body = bytearray(frames[i][1])
    body = edit(body)
    return frames[:i] + [(frames[i][0], bytes(body))] + frames[i + 1:]


def set_word(index, value, fmt="<q"):
    def edit(body):
        struct.pack_into(fmt, body, 8 * index, value)
        return body
    return edit


def nwords(h, key):
    return sum(int(np.prod(sh)) for _, sh in h["layout"][key])


def contact_word(h, field, ncon):
    """Offset (in words) of the first contact's ``field`` inside a step body with ncon
    contacts (stored field by field, ncon values each)."""
    o = sum(k for _, k in h["layout"]["counts"]) + nwords(h, "state")
    for name, sh, _ in h["layout"]["contact"]:
        if name == field:
            return o
        o += ncon * int(np.prod(sh))
    raise KeyError(field)


def with_first_contact(frames, path, field, value):
    """frames with ``field`` of the first contact of the first step with contacts = value."""
    traj = load_trajectory(path)
    k = int(np.flatnonzero(traj.ncon > 0)[0])
    return with_step(frames, k, set_word(contact_word(header_of(frames), field,
                                                      int(traj.ncon[k])), value))


CASES = {
    "header not JSON": (lambda f, p: [(f[0][0], b"\xff\xfe{{{")] + f[1:], "not valid JSON"),
    "header a list": (lambda f, p: [(f[0][0], b"[1, 2]")] + f[1:], "not a JSON object"),
    "no layout": (lambda f, p: with_header(f, lambda h: h.pop("layout")), "has no 'layout'"),
    "version 99": (lambda f, p: with_header(f, lambda h: h.update(version=99)),
                   "unsupported trajectory version 99"),
    "negative size": (lambda f, p: with_header(f, lambda h: h["sizes"].update(nq=-4)),
                      "sizes are not non-negative integers"),
    "qpos shape": (lambda f, p: with_header(
        f, lambda h: h["layout"]["state"][1].__setitem__(1, [3])), "'qpos' the shape"),
    "unknown contact field": (lambda f, p: with_header(
        f, lambda h: h["layout"]["contact"].append(["spin", [2], "f"])), "unknown contact field"),
    "counts not first": (lambda f, p: with_header(
        f, lambda h: h["layout"]["counts"].reverse()), "ncon, nefc"),
    "bad option in header": (lambda f, p: with_header(
        f, lambda h: h["options"].update(integrator=[42])), "integrator must be one of"),
    "warnings not a list": (lambda f, p: with_header(f, lambda h: h.update(warnings=5)),
                            "malformed recording"),
    "short step": (lambda f, p: with_step(f, 2, lambda b: b[:40]), "step 2 holds 5 words"),
    "long step": (lambda f, p: with_step(f, 3, lambda b: b + bytes(8)), "step 3 holds"),
    "negative ncon": (lambda f, p: with_step(f, 1, set_word(0, -3)), "ncon=-3"),
    "huge nefc": (lambda f, p: with_step(f, 1, set_word(1, 1 << 60)), f"nefc={1 << 60}"),
    "geom out of range": (lambda f, p: with_first_contact(f, p, "geom1", 10 ** 6),
                          "contact_geom1 1000000 at row .* outside"),
    "contact dim 5": (lambda f, p: with_first_contact(f, p, "dim", 5),
                      "contact_dim is not 1, 3, 4 or 6"),
    "options not JSON": (lambda f, p: [x if x[0][:1] != b"O" else (x[0], b"{oops")
                                       for x in f], "malformed recording .*JSONDecodeError"),
    "options without step": (lambda f, p: [x if x[0][:1] != b"O" else (x[0], b'{"options": {}}')
                                           for x in f], "options record has no step"),
    "bad option value": (lambda f, p: [
        x if x[0][:1] != b"O" else
        (x[0], json.dumps({"step": 20, "options": {"timestep": [-1.0]}}).encode()) for x in f],
        "options record of step 20 records a bad option: option timestep must be positive"),
    "short initial state": (lambda f, p: [x if x[0][:1] != b"I" else (x[0], x[1][:16])
                                          for x in f], "initial state holds 2 words"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_inconsistent_contents_with_valid_checksums_raise_trajectory_error(recording, tmp_path,
                                                                           case):
    path, _, frames = recording
    make, message = CASES[case]
    bad = tmp_path / "bad.traj"
    bad.write_bytes(join(make(frames, path)))
    with pytest.raises(TrajectoryError, match=message) as e:
        load_trajectory(bad)
    assert str(bad) in str(e.value)


def test_rebuilt_frames_load_as_the_original(recording, tmp_path):
    """The frame helpers of these tests write a file the loader reads like the original."""
    path, data, frames = recording
    assert join(frames) == data
    a, b = load_trajectory(path), load_trajectory(path)
    np.testing.assert_array_equal(a.qpos, b.qpos)


def test_an_unknown_record_kind_is_skipped_with_a_warning(recording, tmp_path):
    path, _, frames = recording
    bad = tmp_path / "x.traj"
    bad.write_bytes(join(frames[:3] + [(b"Z".ljust(8, b"\0"), bytes(16))] + frames[3:]))
    with pytest.warns(RuntimeWarning, match="unknown kind"):
        traj = load_trajectory(bad)
    np.testing.assert_array_equal(traj.qpos, load_trajectory(path).qpos)


def test_not_a_file_or_not_a_trajectory(tmp_path):
    with pytest.raises(TrajectoryError, match="is a directory"):
        load_trajectory(tmp_path)
    for content in (b"", b"ENGTRAJ", b"hello world, not a recording"):
        (tmp_path / "x.traj").write_bytes(content)
        with pytest.raises(TrajectoryError, match="bad magic"):
            load_trajectory(tmp_path / "x.traj")
    (tmp_path / "x.traj").write_bytes(MAGIC)
    with pytest.raises(TrajectoryError, match="header frame is missing"):
        load_trajectory(tmp_path / "x.traj")
    with pytest.raises(FileNotFoundError):
        load_trajectory(tmp_path / "missing.traj")


def test_every_truncation_and_bit_flip_loads_a_prefix_or_raises_trajectory_error(recording,
                                                                                 tmp_path):
    path, data, _ = recording
    full = len(load_trajectory(path))
    rng = np.random.default_rng(1)
    bad = tmp_path / "cut.traj"
    cuts = np.unique(np.concatenate([rng.integers(0, len(data), 150),
                                     np.arange(len(data) - 64, len(data))]))
    flips = [(int(rng.integers(len(MAGIC), len(data))), int(rng.integers(8))) for _ in range(150)]
    variants = [data[:c] for c in cuts]
    for pos, bit in flips:
        b = bytearray(data)
        b[pos] ^= 1 << bit
        variants.append(bytes(b))
    outcomes = {"prefix": 0, "error": 0}
    for v in variants:
        bad.write_bytes(v)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                n = len(load_trajectory(bad))
            except TrajectoryError:
                outcomes["error"] += 1
                continue
        assert n <= full
        outcomes["prefix"] += 1
    assert outcomes["prefix"] > 0 and outcomes["error"] > 0


@pytest.mark.parametrize("case", ["directory", "garbage", "short step"])
def test_analyze_exits_2_with_a_one_line_error(recording, tmp_path, case):
    path, _, frames = recording
    target = tmp_path / "bad.traj"
    if case == "directory":
        target = tmp_path
    elif case == "garbage":
        target.write_bytes(b"\0" * 100)
    else:
        target.write_bytes(join(CASES["short step"][0](frames, path)))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = analyze.main([str(target), "--model", ARM, "--quiet", "--out",
                             str(tmp_path / "out")])
    assert code == 2
    assert err.getvalue().startswith("analyze: error: ") and "Traceback" not in err.getvalue()
    assert len(err.getvalue().strip().splitlines()) == 1

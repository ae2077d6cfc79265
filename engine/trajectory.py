"""Trajectory recording: a crash-safe, append-only file of simulation steps, and its loader.

``Recorder(m, path).record(d)`` after each ``step`` appends one *step record*: the state after the
step (time qpos qvel act), the inputs the step used (ctrl qfrc_applied xfrc_applied mocap), and what
the step's forward pass computed at the state *before* the step (qacc, actuator_force, the contacts,
the constraint rows with their forces, solver iterations and residual). ``load_trajectory(path)``
returns a ``Trajectory`` of numpy arrays.

File layout (all integers little-endian; every payload is a multiple of 8 bytes)::

    b"ENGTRAJ\\0"                          8-byte magic
    frame*                                 one frame per record, appended in order
    frame   = u32 length | u32 crc32(payload) | payload (length bytes)
    payload = 8-byte kind (b"H" header, b"I" initial state, b"O" options, b"S" step; zero padded)
              + body: JSON (header, options; space padded) or float64/int64 words (I, S)

The first frame is the header (JSON): format version, model path, model hashes (see
``model_hash``), sizes, the options at creation, names and the per-record field layout. A step body
holds ``int64[3 + NWARNING] = ncon, nefc, solver_niter, warning[NWARNING]`` (d.warning's
counters, named in the header's ``warnings``; recordings without that list hold the three
counters BADQACC, BADQPOS, BADQVEL) and then
float64 words: the fixed fields of STATE_FIELDS, the contacts field by field (CONTACT_FIELDS,
ncon values each; ints stored as int64) and the constraint rows (EFC_FIELDS, nefc values each).
The header's layout lists the fields, so the loader reads what each file holds: version 1 files
(before sensordata) load with an empty sensordata (n, 0).
An options frame is written before the first step whose options differ from the previous ones.
A torn or corrupted frame (short, length past the end, crc mismatch) ends the file: the loader
drops it with a warning.

Crash safety: frames are written with plain ``os.write`` from an in-memory list; a background
thread writes the list out and calls ``os.fsync`` every ``sync_interval`` seconds (0.5 s), and
``record`` writes it out when it exceeds 1 MiB. After ``kill -9`` everything recorded more than
one second before the kill is on disk.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import struct
import threading
import warnings
import weakref
import zlib

import numpy as np

from .enums import Warning
from .types import MODEL_SIZES, MODEL_SPEC, check_data, check_option

MAGIC = b"ENGTRAJ\0"
VERSION = 2
# version 2: sensordata in the step record, the hashed model fields listed, and engine.Integrator's
# values (MuJoCo's 0-3, then the manual's 4-6); version 1 numbered the integrators SEMIIMPLICIT
# RK4 EXPLICIT MIDPOINT INTERLEAVE = 0..4
_V1_INTEGRATOR = {0: 0, 1: 1, 2: 4, 3: 5, 4: 6}
_FRAME = struct.Struct("<II")
_KIND_HEADER, _KIND_INITIAL, _KIND_OPTIONS, _KIND_STEP = (k.ljust(8, b"\0")
                                                          for k in (b"H", b"I", b"O", b"S"))

# fixed-size float64 fields of a step record, in file order: (name, shape in model sizes)
STATE_FIELDS = (
    ("time", ()), ("qpos", ("nq",)), ("qvel", ("nv",)), ("act", ("na",)), ("ctrl", ("nu",)),
    ("qfrc_applied", ("nv",)), ("xfrc_applied", ("nbody", 6)), ("mocap_pos", ("nmocap", 3)),
    ("mocap_quat", ("nmocap", 4)), ("qacc", ("nv",)), ("actuator_force", ("nu",)),
    ("solver_residual", ()), ("sensordata", ("nsensordata",)),
)
# fields of the initial-state record (the state before the first step, when given)
INITIAL_FIELDS = STATE_FIELDS[:9]
# per-contact fields, ncon values each: (name, trailing shape, dtype)
CONTACT_FIELDS = (
    ("dist", (), "f"), ("pos", (3,), "f"), ("frame", (9,), "f"), ("friction", (5,), "f"),
    ("geom1", (), "i"), ("geom2", (), "i"), ("dim", (), "i"), ("efc_address", (), "i"),
)
# per-row fields, nefc values each
EFC_FIELDS = (("type", (), "i"), ("id", (), "i"), ("force", (), "f"))
# int64 words at the start of a step body: (name, count)
_COUNTS = (("ncon", 1), ("nefc", 1), ("solver_niter", 1), ("warning", int(Warning.NWARNING)))
WARNING_NAMES = [w.name for w in Warning if w != Warning.NWARNING]     # d.warning's counters
_OLD_WARNING_NAMES = ["BADQACC", "BADQPOS", "BADQVEL"]       # recordings before the list
_COUNT_PACK = struct.Struct("<qqq")
_DT = {"f": np.float64, "i": np.int64}
_FLUSH_BYTES = 1 << 20


class TrajectoryError(ValueError):
    """A file that is not a trajectory, or of an unsupported version."""


class TrajectoryModelMismatch(ValueError):
    """A recording analysed against a model other than the one it was recorded with."""


# the Model arrays that version 1 recordings hashed (the model's fields when that format was
# current); later recordings list theirs in the header, so that fields added to the Model since a
# recording was made do not make its model a stranger
V1_MODEL_ARRAYS = tuple("""
body_parentid body_rootid body_weldid body_mocapid body_jntnum body_jntadr body_dofnum
body_dofadr body_geomnum body_geomadr body_pos body_quat body_ipos body_iquat body_mass
body_subtreemass body_inertia body_gravcomp body_sameframe jnt_type jnt_qposadr jnt_dofadr
jnt_bodyid jnt_group jnt_limited jnt_pos jnt_axis jnt_stiffness jnt_range jnt_margin
jnt_epsilon jnt_kappa jnt_rmin jnt_actfrclimited jnt_actfrcrange dof_bodyid dof_jntid
dof_parentid dof_Madr dof_armature dof_damping dof_frictionloss geom_type geom_contype
geom_conaffinity geom_condim geom_bodyid geom_dataid geom_matid geom_group geom_priority
geom_size geom_rbound geom_pos geom_quat geom_friction geom_margin geom_gap geom_epsilon
geom_kappa geom_rmin geom_rgba geom_sameframe site_type site_bodyid site_group site_size
site_pos site_quat site_rgba site_sameframe cam_mode cam_bodyid cam_targetbodyid cam_pos
cam_quat cam_poscom0 cam_pos0 cam_mat0 cam_fovy light_mode light_bodyid light_targetbodyid
light_directional light_castshadow light_active light_pos light_dir light_poscom0 light_pos0
light_dir0 light_attenuation light_cutoff light_exponent light_ambient light_diffuse
light_specular mesh_vertadr mesh_vertnum mesh_faceadr mesh_facenum mesh_vert mesh_face
hfield_size hfield_nrow hfield_ncol hfield_adr hfield_data tendon_adr tendon_num
tendon_limited tendon_range tendon_margin tendon_stiffness tendon_damping
tendon_frictionloss tendon_lengthspring tendon_length0 tendon_epsilon tendon_kappa
tendon_rmin tendon_width tendon_rgba wrap_type wrap_objid wrap_prm actuator_trntype
actuator_dyntype actuator_gaintype actuator_biastype actuator_trnid actuator_actadr
actuator_actnum actuator_group actuator_ctrllimited actuator_forcelimited
actuator_actlimited actuator_actearly actuator_dynprm actuator_gainprm actuator_biasprm
actuator_ctrlrange actuator_forcerange actuator_actrange actuator_gear actuator_cranklength
actuator_length0 actuator_lengthrange eq_type eq_obj1id eq_obj2id eq_objtype eq_active0
eq_data eq_epsilon eq_kappa eq_rmin eq_hard pair_geom1 pair_geom2 pair_condim pair_friction
pair_margin pair_gap pair_epsilon pair_kappa pair_rmin exclude_body1 exclude_body2 key_time
key_qpos key_qvel key_act key_ctrl key_mpos key_mquat body_invweight0 body_treedofadr
body_treedofnum dof_invweight0 dof_M0 tendon_invweight0 geom_aabb qpos0 qpos_spring
""".split())


# quantities the engine derives from the other arrays at qpos0 (engine.setconst): functions of
# what the hash covers, whose last bits depend on how this version of the engine computes them,
# not on the model; recordings made before they were left out hashed them bit for bit
DERIVED_ARRAYS = ("body_invweight0", "dof_invweight0", "tendon_invweight0", "dof_M0",
                  "actuator_acc0")


def hash_fields(m) -> dict:
    """The sizes and arrays model_hash covers: every size, every array but the options and
    DERIVED_ARRAYS."""
    return {"sizes": list(MODEL_SIZES),
            "arrays": [name for name, _, _ in MODEL_SPEC
                       if not name.startswith("opt_") and name not in DERIVED_ARRAYS]}


def model_hash(m, fields=None) -> str:
    """SHA-256 of the compiled model: sizes and every numeric Model array except the options
    (or the sizes and arrays of ``fields``, as hash_fields gives them).

    The compiled arrays (not the file bytes) determine the dynamics, so included files, meshes and
    defaults count while comments and formatting do not. Options (``opt_*``) are live-editable;
    the recording stores them itself. Names do not change the dynamics and are not hashed.
    """
    fields = fields or hash_fields(m)
    h = hashlib.sha256()
    for k in fields["sizes"]:
        h.update(f"{k}={int(getattr(m, k))};".encode())
    for name in fields["arrays"]:
        a = np.ascontiguousarray(getattr(m, name))
        h.update(f"{name}:{a.dtype.str}:{a.shape};".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def recorded_hash_fields(header) -> dict:
    """The fields a recording's model_sha256 covers (version 1: its sizes, V1_MODEL_ARRAYS)."""
    if "model_hash_fields" in header:
        return header["model_hash_fields"]
    return {"sizes": list(header["sizes"]), "arrays": list(V1_MODEL_ARRAYS)}


def file_hash(path) -> str | None:
    """SHA-256 of a model file's bytes (informative: includes and meshes are not covered)."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except (OSError, TypeError):
        return None


def _option_names(m):
    return [name[4:] for name, _, _ in MODEL_SPEC if name.startswith("opt_")]


def options_dict(m) -> dict:
    """The model's options as JSON-ready lists, keyed by option name."""
    return {k: getattr(m, "opt_" + k).tolist() for k in _option_names(m)}


def apply_options(m, options: dict) -> None:
    """Set recorded options (``options_dict`` form) through m.opt (ValueError for a value
    m.opt refuses)."""
    for k, v in options.items():
        setattr(m.opt, k, v[0] if isinstance(v, list) and len(v) == 1 else v)


def _sizes(m):
    return {k: int(getattr(m, k)) for k in MODEL_SIZES}


def _shape(shape, sizes):
    return tuple(sizes[s] if isinstance(s, str) else s for s in shape)


def check_model(header: dict, m, what="recording") -> None:
    """Raise TrajectoryModelMismatch unless m is the model the recording was made with."""
    want = header["model_sha256"]
    fields = recorded_hash_fields(header)
    missing = [k for k in fields["sizes"] + fields["arrays"] if not hasattr(m, k)]
    got = model_hash(m, fields) if not missing else "missing " + ",".join(missing)
    if got != want:
        path = getattr(m, "path", None)
        derived = [k for k in DERIVED_ARRAYS if k in fields["arrays"]]
        why = (f" (or the recording was made by an earlier version of the engine, whose model "
               f"hash covered {', '.join(derived)}, derived quantities this version computes "
               f"with other rounding: such a recording cannot be matched to its model)"
               if derived else "")
        raise TrajectoryModelMismatch(
            f"{what} was made with model {header.get('model_path') or '<string>'} "
            f"(sha256 {want[:16]}) but the model given is {path or '<string>'} "
            f"(sha256 {got[:16]}): they differ{why}")


# --------------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------------
class _Sink:
    """The open file, the frames not yet written and the lock between record() and the syncer.

    Held apart from the Recorder so that the sync thread and the exit finaliser do not keep the
    Recorder alive."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.lock = threading.Lock()
        self.pending = []
        self.nbytes = 0
        self.closed = False

    def append(self, *chunks):
        with self.lock:
            for c in chunks:
                self.pending.append(c)
                self.nbytes += len(c)
            if self.nbytes > _FLUSH_BYTES:
                self._write_locked()

    def _write_locked(self):
        if self.pending:
            buf = b"".join(self.pending)
            self.pending = []
            self.nbytes = 0
            view = memoryview(buf)
            while view:
                view = view[os.write(self.fd, view):]

    def sync(self):
        """Write out the pending frames and fsync."""
        with self.lock:
            if self.closed:
                return
            self._write_locked()
            fd = self.fd
        os.fsync(fd)

    def close(self):
        with self.lock:
            if self.closed:
                return
            self._write_locked()
            self.closed = True
            os.fsync(self.fd)
            os.close(self.fd)


def _sync_loop(sink, stop, interval):
    while not stop.wait(interval):
        try:
            sink.sync()
        except OSError:  # the file went away (closed, disk error): stop syncing
            return


def _frame(kind, body):
    payload = kind + body
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def _json_body(obj):
    b = json.dumps(obj, separators=(",", ":")).encode()
    return b + b" " * (-len(b) % 8)


class Recorder:
    """Append one record per simulation step to a crash-safe trajectory file.

        rec = Recorder(m, "run.traj")          # or: with Recorder(m, path) as rec: ...
        engine.step(m, d); rec.record(d)       # after each step
        rec.close()

    ``d`` (optional) stores the current state of d as the initial state, the state before the
    first recorded step, so that the first step can be analysed as well. ``model_path`` overrides
    the path stored in the header (default: the path the model was loaded from). The model's
    options are checked on every record and an options record is written when they change.
    """

    def __init__(self, m, path, d=None, model_path=None, sync_interval=0.5):
        if d is not None:
            check_data(m, d)
        self.m = m
        self.path = os.fspath(path)
        self.nrecords = 0
        self._sizes = _sizes(m)
        self._opt_views = [memoryview(getattr(m, "opt_" + k)).cast("B") for k in _option_names(m)]
        self._opt_bytes = self._options_bytes()
        model_path = model_path or getattr(m, "path", None)
        if model_path is not None:
            model_path = os.path.abspath(model_path)
        s = self._sizes
        self.header = {
            "format": "engine-trajectory", "version": VERSION,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "model_path": model_path, "model_sha256": model_hash(m),
            "model_hash_fields": hash_fields(m),
            "model_file_sha256": file_hash(model_path) if model_path else None,
            "sizes": s, "options": options_dict(m),
            "names": {k: list(m.names.get(k, [])) for k in ("body", "joint", "geom", "actuator",
                                                               "tendon", "equality", "sensor")},
            "sensor_adr": m.sensor_adr.tolist(), "sensor_dim": m.sensor_dim.tolist(),
            "jnt_type": m.jnt_type.tolist(), "jnt_qposadr": m.jnt_qposadr.tolist(),
            "jnt_dofadr": m.jnt_dofadr.tolist(), "warnings": WARNING_NAMES,
            "layout": {
                "counts": [[n, k] for n, k in _COUNTS],
                "state": [[n, list(_shape(sh, s))] for n, sh in STATE_FIELDS],
                "initial": [[n, list(_shape(sh, s))] for n, sh in INITIAL_FIELDS],
                "contact": [[n, list(sh), t] for n, sh, t in CONTACT_FIELDS],
                "efc": [[n, list(sh), t] for n, sh, t in EFC_FIELDS],
            },
        }
        self._sink = _Sink(self.path)
        os.write(self._sink.fd, MAGIC)
        self._sink.append(_frame(_KIND_HEADER, _json_body(self.header)))
        self._sink.sync()
        if d is not None:
            self._sink.append(_frame(_KIND_INITIAL, b"".join(
                self._field(d, n).tobytes() for n, _ in INITIAL_FIELDS)))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=_sync_loop, name="trajectory-sync", daemon=True,
                                        args=(self._sink, self._stop, sync_interval))
        self._thread.start()
        self._finalizer = weakref.finalize(self, _finish, self._sink, self._stop)

    @staticmethod
    def _field(d, name):
        return d._arrays["time"] if name == "time" else getattr(d, name)

    def _options_bytes(self):
        return b"".join(self._opt_views)

    def _bind(self, d):
        """Cache byte views of the arrays of d that every record reads (again when d grows);
        d must be a Data of the recorder's model."""
        check_data(self.m, d)
        self._d_id = (id(d), d.nconmax, d.njmax)

        def view(a):
            return memoryview(a).cast("B") if a.size else memoryview(b"")

        fixed = [self._field(d, n) for n, _ in STATE_FIELDS]
        self._fixed = [view(a) for a in fixed if a.size]
        self._contact = [(view(getattr(d, "contact_" + n)), 8 * int(np.prod(sh, dtype=int)))
                         for n, sh, _ in CONTACT_FIELDS]
        self._efc = [view(getattr(d, "efc_" + n)) for n, _, _ in EFC_FIELDS]
        self._counts = (d._arrays["ncon"], d._arrays["nefc"], d.solver_niter, view(d.warning))

    def record(self, d) -> None:
        """Append the step just taken (call after each engine.step)."""
        if self._sink.closed:
            raise ValueError(f"recorder of {self.path} is closed")
        if getattr(self, "_d_id", None) != (id(d), d.nconmax, d.njmax):
            self._bind(d)
        if b"".join(self._opt_views) != self._opt_bytes:
            self._opt_bytes = self._options_bytes()
            self._sink.append(_frame(_KIND_OPTIONS, _json_body(
                {"step": self.nrecords, "options": options_dict(self.m)})))
        ncon, nefc, niter, warn = self._counts
        nc = int(ncon[0])
        ne = 8 * int(nefc[0])
        parts = [_KIND_STEP, _COUNT_PACK.pack(nc, nefc[0], niter[0]), warn]
        parts += self._fixed
        parts += [a[:nc * w] for a, w in self._contact]
        parts += [a[:ne] for a in self._efc]
        payload = b"".join(parts)
        self._sink.append(_FRAME.pack(len(payload), zlib.crc32(payload)), payload)
        self.nrecords += 1

    def flush(self) -> None:
        """Write everything recorded so far to disk (fsync) now."""
        self._sink.sync()

    def close(self) -> None:
        """Write out, fsync and close the file; further record() calls raise."""
        self._finalizer()
        self._thread.join()

    @property
    def closed(self):
        return self._sink.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _finish(sink, stop):
    stop.set()
    sink.close()


# --------------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------------
class Trajectory:
    """A loaded recording: per-step arrays (first axis = step) and flat per-contact/per-row arrays.

    Per step k (``len(traj)`` steps): ``time qpos qvel act ctrl qfrc_applied xfrc_applied
    mocap_pos mocap_quat qacc actuator_force solver_residual sensordata solver_niter ncon nefc``
    and ``warning`` (n, NWARNING): d.warning's cumulative counters after the step, columns in
    the order of engine.enums.Warning (counters a recording does not hold are zero).
    Contacts of step k are rows ``contact_offset[k]:contact_offset[k+1]`` of ``contact_dist
    contact_pos contact_frame contact_friction contact_geom1 contact_geom2 contact_dim
    contact_efc_address``; constraint rows are ``efc_offset[k]:efc_offset[k+1]`` of ``efc_type
    efc_id efc_force`` (``contact(k)`` and ``efc(k)`` slice them). State fields are the state
    after the step; qacc, actuator_force, sensordata, contacts and rows belong to the forward pass
    at the state before it (as MuJoCo's sensordata after mj_step). ``sensor(name)`` is one
    sensor's (n, dim) slice of sensordata. ``initial`` is the state before the first step (dict)
    or None; ``options`` lists ``(step, options dict)`` in force from that step on (the first is
    the header's).
    """

    def __init__(self, header, arrays, initial, options, path=None):
        self.header = header
        self.path = path
        self.initial = initial
        self.options = options
        for k, v in arrays.items():
            setattr(self, k, v)

    def __len__(self):
        return len(self.time)

    @property
    def model_path(self):
        return self.header.get("model_path")

    @property
    def model_sha256(self):
        return self.header["model_sha256"]

    @property
    def names(self):
        return self.header["names"]

    def options_at(self, k: int) -> dict:
        """The model options in force during step k."""
        out = self.options[0][1]
        for start, opt in self.options:
            if start <= k:
                out = opt
        return out

    def contact(self, k: int) -> dict:
        """The contacts of step k: {field: array} over its ncon contacts."""
        s = slice(self.contact_offset[k], self.contact_offset[k + 1])
        return {n: getattr(self, "contact_" + n)[s] for n, _, _ in CONTACT_FIELDS}

    def efc(self, k: int) -> dict:
        """The constraint rows of step k: {type, id, force} over its nefc rows."""
        s = slice(self.efc_offset[k], self.efc_offset[k + 1])
        return {n: getattr(self, "efc_" + n)[s] for n, _, _ in EFC_FIELDS}

    def sensor(self, name) -> np.ndarray:
        """The (n, dim) values of the named sensor (or sensor index) over the steps."""
        names = self.header["names"].get("sensor", [])
        i = names.index(name) if isinstance(name, str) else int(name)
        adr = self.header["sensor_adr"][i]
        return self.sensordata[:, adr:adr + self.header["sensor_dim"][i]]

    def check_model(self, m) -> None:
        """Raise TrajectoryModelMismatch unless m is the model this was recorded with."""
        check_model(self.header, m, f"recording {self.path or ''}".strip())

    # ---- CSV --------------------------------------------------------------------------------
    def _columns(self, name):
        """Column names of a per-step field: joint/actuator/body names where they apply."""
        s = self.header["sizes"]
        names = self.header["names"]

        def label(kind, i):
            n = names.get(kind, [])
            return n[i] if i < len(n) and n[i] else str(i)

        if name == "qpos" or name in ("qvel", "qacc", "qfrc_applied"):
            adr = self.header["jnt_qposadr" if name == "qpos" else "jnt_dofadr"]
            size = s["nq"] if name == "qpos" else s["nv"]
            width = {0: 7, 1: 4} if name == "qpos" else {0: 6, 1: 3}
            cols = [f"{name}_{i}" for i in range(size)]
            for j, (t, a) in enumerate(zip(self.header["jnt_type"], adr)):
                w = width.get(t, 1)
                for c in range(w):
                    cols[a + c] = f"{name}_{label('joint', j)}" + (f"_{c}" if w > 1 else "")
            return cols
        if name in ("ctrl", "actuator_force"):
            return [f"{name}_{label('actuator', i)}" for i in range(s["nu"])]
        if name == "act":
            return [f"act_{i}" for i in range(s["na"])]
        if name == "xfrc_applied":
            return [f"xfrc_{label('body', b)}_{c}" for b in range(s["nbody"])
                    for c in ("fx", "fy", "fz", "tx", "ty", "tz")]
        if name == "sensordata":
            cols = []
            for i, (adr, dim) in enumerate(zip(self.header["sensor_adr"],
                                               self.header["sensor_dim"])):
                base = f"{label('sensor', i)}"
                cols += [base + (f"_{c}" if dim > 1 else "") for c in range(dim)]
            return cols
        if name in ("mocap_pos", "mocap_quat"):
            w = 3 if name == "mocap_pos" else 4
            return [f"{name}_{i}_{c}" for i in range(s["nmocap"]) for c in range(w)]
        raise KeyError(name)

    def to_csv(self, directory) -> list[str]:
        """Write one CSV file per signal family into directory; returns the paths.

        Per-step families (``step,time`` then one column per component): qpos qvel act ctrl
        qfrc_applied xfrc_applied mocap (when the model has mocap bodies) qacc actuator_force,
        sensordata (when the model has sensors; a column per sensor component) and solver.csv
        (ncon nefc solver_niter solver_residual and the warning counters). Long tables, one
        line per item: contacts.csv (step,time,index,geom1,geom2,dim,dist,pos_*,frame_*,
        friction_*,efc_address) and efc.csv (step,time,row,type,id,force).
        """
        os.makedirs(directory, exist_ok=True)
        n = len(self)
        step = np.arange(n)
        written = []

        def write(fname, header, cols):
            path = os.path.join(directory, fname)
            table = np.column_stack(cols) if cols else np.zeros((0, len(header)))
            ints = [np.issubdtype(np.asarray(c).dtype, np.integer) for c in cols]
            fmt = ["%d" if i else "%.17g" for i in ints]
            np.savetxt(path, table, delimiter=",", header=",".join(header), comments="", fmt=fmt)
            written.append(path)

        families = ["qpos", "qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied", "qacc",
                    "actuator_force"]
        for name in families:
            a = getattr(self, name).reshape(n, -1)
            write(f"{name}.csv", ["step", "time"] + self._columns(name),
                  [step, self.time] + [a[:, i] for i in range(a.shape[1])])
        if self.sensordata.shape[1]:
            write("sensordata.csv", ["step", "time"] + self._columns("sensordata"),
                  [step, self.time] + list(self.sensordata.T))
        if self.header["sizes"]["nmocap"]:
            a = np.concatenate([self.mocap_pos.reshape(n, -1), self.mocap_quat.reshape(n, -1)], 1)
            write("mocap.csv", ["step", "time"] + self._columns("mocap_pos")
                  + self._columns("mocap_quat"), [step, self.time] + list(a.T))
        write("solver.csv", ["step", "time", "ncon", "nefc", "solver_niter", "solver_residual"]
              + [f"warning_{name.lower()}" for name in WARNING_NAMES],
              [step, self.time, self.ncon, self.nefc, self.solver_niter, self.solver_residual]
              + list(self.warning.T))
        cstep = np.repeat(step, self.ncon)
        index = np.arange(len(cstep)) - np.repeat(self.contact_offset[:-1], self.ncon)
        cols = [cstep, self.time[cstep], index, self.contact_geom1, self.contact_geom2,
                self.contact_dim, self.contact_dist]
        cols += (list(self.contact_pos.T) + list(self.contact_frame.T)
                 + list(self.contact_friction.T))
        cols += [self.contact_efc_address]
        write("contacts.csv", ["step", "time", "index", "geom1", "geom2", "dim", "dist", "pos_x",
                               "pos_y", "pos_z"] + [f"frame_{i}" for i in range(9)]
              + [f"friction_{i}" for i in range(5)] + ["efc_address"], cols)
        estep = np.repeat(step, self.nefc)
        row = np.arange(len(estep)) - np.repeat(self.efc_offset[:-1], self.nefc)
        write("efc.csv", ["step", "time", "row", "type", "id", "force"],
              [estep, self.time[estep], row, self.efc_type, self.efc_id, self.efc_force])
        return written


def _read_frames(data, path):
    """Yield (kind, payload memoryview) of each intact frame; warn about a dropped tail."""
    view = memoryview(data)
    pos = len(MAGIC)
    end = len(data)
    while pos < end:
        reason = None
        if end - pos < _FRAME.size:
            reason = "a torn frame header"
        else:
            length, crc = _FRAME.unpack_from(view, pos)
            if length < 8 or pos + _FRAME.size + length > end:
                reason = "a frame running past the end of the file"
            else:
                payload = view[pos + _FRAME.size: pos + _FRAME.size + length]
                if zlib.crc32(payload) != crc:
                    reason = "a frame with a bad checksum"
        if reason is not None:
            warnings.warn(f"{path}: dropped the last {end - pos} bytes ({reason}): the recording "
                          "was interrupted or the file is damaged", RuntimeWarning, stacklevel=4)
            return
        yield bytes(payload[:8]), payload[8:]
        pos += _FRAME.size + length


def load_trajectory(path, model=None) -> Trajectory:
    """Load a trajectory file as numpy arrays (see Trajectory). A torn or corrupted tail is
    dropped with a RuntimeWarning. Any other bad file (not a trajectory, a directory, an
    unsupported version, intact frames with inconsistent contents) raises TrajectoryError
    naming the file and the fault; a missing file FileNotFoundError. With ``model`` given,
    check that it is the recording's model (TrajectoryModelMismatch otherwise)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise TrajectoryError(f"{path} is a directory, not a trajectory file")
    with open(path, "rb") as f:
        data = f.read()
    if data[:len(MAGIC)] != MAGIC:
        raise TrajectoryError(f"{path} is not a trajectory file (bad magic)")
    try:
        traj = _decode(data, path)
    except TrajectoryError:
        raise
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, OverflowError,
            struct.error) as e:
        # intact frames whose contents do not fit together (the JSON or the layout)
        raise TrajectoryError(f"{path}: malformed recording ({type(e).__name__}: {e})") from None
    if model is not None:
        traj.check_model(model)
    return traj


def _require(ok, path, message):
    if not ok:
        raise TrajectoryError(f"{path}: {message}")


def _check_header(header, path):
    """The header's keys and layout, against its sizes and this format's field tables."""
    _require(isinstance(header, dict), path, "the header is not a JSON object")
    for key in ("version", "layout", "sizes", "options", "names", "model_sha256"):
        _require(key in header, path, f"the header has no {key!r}")
    version = header["version"]
    _require(version in (1, VERSION), path, f"unsupported trajectory version {version}")
    sizes, lay = header["sizes"], header["layout"]
    _require(isinstance(sizes, dict) and all(type(v) is int and v >= 0 for v in sizes.values()),
             path, "the header's sizes are not non-negative integers")
    _require(isinstance(lay, dict), path, "the header's layout is not a JSON object")
    for key in ("counts", "state", "contact", "efc"):
        _require(isinstance(lay.get(key), list), path, f"the header's layout has no {key!r} list")
    want_counts = {n: k for n, k in _COUNTS}
    for n, k in lay["counts"]:
        _require(n in want_counts and type(k) is int and (k == want_counts[n] or n == "warning")
                 and k >= 0, path, f"the header's layout has a bad count field {n!r}: {k!r}")
    _require([n for n, _ in lay["counts"]][:2] == ["ncon", "nefc"], path,
             "the header's layout does not start with ncon, nefc")
    _require(any(n == "time" for n, _ in lay["state"]), path, "the header's layout has no time")
    known = dict(STATE_FIELDS)
    for key in ("state", "initial"):
        for n, sh in lay.get(key, []):
            if n in known and all(s in sizes for s in known[n] if isinstance(s, str)):
                want = list(_shape(known[n], sizes))
                _require(list(sh) == want, path, f"the header's layout gives {key} field {n!r} "
                         f"the shape {sh}, its sizes {want}")
            _require(all(type(s) is int and s >= 0 for s in sh), path,
                     f"the header's layout gives {key} field {n!r} the shape {sh}")
    for key, table in (("contact", CONTACT_FIELDS), ("efc", EFC_FIELDS)):
        fields = {n: (list(sh), t) for n, sh, t in table}
        for n, sh, t in lay[key]:
            _require(fields.get(n) == (list(sh), t), path,
                     f"the header's layout has an unknown {key} field {n!r} {sh} {t!r}")
    _check_options(header["options"], path, "the header")


def _check_options(options, path, where):
    """Recorded options: known names with values m.opt would accept."""
    _require(isinstance(options, dict), path, f"{where}'s options are not a JSON object")
    for k, v in options.items():
        try:
            check_option(k, v[0] if isinstance(v, list) and len(v) == 1 else v)
        except ValueError as e:
            raise TrajectoryError(f"{path}: {where} records a bad option: {e}") from None


def _check_indices(arrays, sizes, path):
    """The recorded ids and addresses within the recorded model's sizes."""
    def within(name, lo, hi):
        a = arrays[name]
        bad = np.flatnonzero((a < lo) | (a >= hi))
        _require(bad.size == 0, path, f"{name} {int(a[bad[0]]) if bad.size else 0} at row "
                 f"{int(bad[0]) if bad.size else 0} is outside [{lo}, {hi})")
    ngeom = sizes.get("ngeom", 0)
    if "contact_geom1" in arrays:
        within("contact_geom1", 0, ngeom)
        within("contact_geom2", 0, ngeom)
        dims = arrays["contact_dim"]
        _require(np.isin(dims, (1, 3, 4, 6)).all(), path, "a contact_dim is not 1, 3, 4 or 6")
    if "efc_type" in arrays:
        from .enums import ConstraintType
        within("efc_type", 0, max(int(t) for t in ConstraintType) + 1)


def _decode(data, path) -> Trajectory:
    """The Trajectory of a file's bytes (after the magic); errors as load_trajectory's."""
    frames = _read_frames(data, path)
    first = next(frames, None)
    if first is None or first[0] != _KIND_HEADER:
        raise TrajectoryError(f"{path}: the header frame is missing or damaged")
    try:
        header = json.loads(bytes(first[1]))
    except (ValueError, UnicodeDecodeError) as e:
        raise TrajectoryError(f"{path}: the header is not valid JSON ({e})") from None
    _check_header(header, path)
    version = header["version"]
    lay = header["layout"]
    state = [(n, tuple(sh)) for n, sh in lay["state"]]
    nstate = sum(int(np.prod(sh)) for _, sh in state)
    cfields = [(n, tuple(sh), t) for n, sh, t in lay["contact"]]
    cwidth = [int(np.prod(sh)) for _, sh, _ in cfields]
    efields = [(n, tuple(sh), t) for n, sh, t in lay["efc"]]
    ncount = sum(k for _, k in lay["counts"])
    initial = None
    options = [(0, header["options"])]
    counts, fixed, cblocks, eblocks = [], [], [], []
    for kind, body in frames:
        if kind == _KIND_STEP:
            k = len(counts)
            words = np.frombuffer(body, dtype=np.float64)
            _require(len(words) >= ncount + nstate, path, f"step {k} holds {len(words)} words, "
                     f"fewer than the {ncount + nstate} of its fixed fields")
            c = words[:ncount].view(np.int64)
            nc, ne = int(c[0]), int(c[1])
            o = ncount + nstate
            _require(nc >= 0 and ne >= 0 and len(words) == o + nc * sum(cwidth)
                     + ne * len(efields), path, f"step {k} holds {len(words)} words, not the "
                     f"{ncount + nstate} + contacts and rows its counts ncon={nc}, nefc={ne} ask")
            counts.append(c)
            fixed.append(words[ncount:o])
            cblocks.append(words[o:o + nc * sum(cwidth)])
            eblocks.append(words[o + nc * sum(cwidth):])
        elif kind == _KIND_OPTIONS:
            rec = json.loads(bytes(body))
            _require(isinstance(rec, dict) and type(rec.get("step")) is int, path,
                     f"an options record has no step: {str(rec)[:80]!r}")
            _check_options(rec.get("options"), path, f"the options record of step {rec['step']}")
            options.append((rec["step"], rec["options"]))
        elif kind == _KIND_INITIAL:
            words = np.frombuffer(body, dtype=np.float64)
            want = sum(int(np.prod(sh)) for _, sh in lay.get("initial", []))
            _require(len(words) == want, path, f"the initial state holds {len(words)} words, "
                     f"not the {want} of its layout")
            initial, o = {}, 0
            for n, sh in lay["initial"]:
                k = int(np.prod(sh))
                initial[n] = words[o:o + k].reshape(sh).copy()
                o += k
            initial["time"] = float(initial["time"])
        else:
            warnings.warn(f"{path}: skipped a record of unknown kind {kind!r}", RuntimeWarning,
                          stacklevel=4)
    n = len(counts)
    arrays = {}
    counts = np.array(counts, dtype=np.int64).reshape(n, ncount)
    o = 0
    for name, k in lay["counts"]:
        arrays[name] = (counts[:, o] if k == 1 else counts[:, o:o + k]).copy()
        o += k
    # the warning counters in the order of engine.enums.Warning
    recorded = arrays.get("warning", np.zeros((n, 0), dtype=np.int64)).reshape(n, -1)
    arrays["warning"] = np.zeros((n, len(WARNING_NAMES)), dtype=np.int64)
    for j, name in enumerate(header.get("warnings", _OLD_WARNING_NAMES)[:recorded.shape[1]]):
        if name in WARNING_NAMES:
            arrays["warning"][:, WARNING_NAMES.index(name)] = recorded[:, j]
    fixed = np.array(fixed).reshape(n, nstate)
    o = 0
    for name, sh in state:
        k = int(np.prod(sh))
        arrays[name] = fixed[:, o:o + k].reshape((n,) + sh).copy()
        o += k
    for key, blocks, fields, count in (("contact", cblocks, cfields, arrays["ncon"]),
                                       ("efc", eblocks, efields, arrays["nefc"])):
        offset = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(count, out=offset[1:])
        arrays[key + "_offset"] = offset
        total = int(offset[-1])
        cols = {name: [] for name, _, _ in fields}
        widths = [(cols[name], int(np.prod(sh))) for name, sh, _ in fields]
        for blk, cnt in zip(blocks, count.tolist()):
            o = 0
            for col, w in widths:
                col.append(blk[o:o + cnt * w])
                o += cnt * w
        for name, sh, t in fields:
            a = np.concatenate(cols[name]) if cols[name] else np.zeros(0)
            if t == "i":
                a = a.view(np.int64)
            arrays[f"{key}_{name}"] = a.reshape((total,) + sh).copy()
    if version == 1:
        for _, opt in options:
            if "integrator" in opt:
                opt["integrator"] = [_V1_INTEGRATOR[int(v)] for v in opt["integrator"]]
    if "sensordata" not in arrays:       # version 1: no sensors recorded
        arrays["sensordata"] = np.zeros((n, 0))
    _check_indices(arrays, header["sizes"], path)
    return Trajectory(header, arrays, initial, options, path)

"""Inverse analysis of a recording: the controls and constraint forces that produced the motion.

For every recorded step k the analysis rebuilds the state before the step (the state recorded
after step k-1, or the recording's initial state for k = 0), sets the step's inputs (ctrl,
qfrc_applied, xfrc_applied, mocap poses of record k) and the finite-difference acceleration
``qacc = (qvel[k] - qvel[k-1]) / h`` (paper eq. 1), and runs ``engine.inverse``, whose discrete
convention covers the one-stage integrators SEMIIMPLICIT, EXPLICIT, IMPLICIT and IMPLICITFAST.
It then compares:

* the inverse constraint forces (``efc_force``) with the forward forces recorded for step k, row
  by row, grouped into signals per object: each friction-loss dof or tendon, each limit, each
  equality row, and each row (normal, tangents, spin, rolling; or the pyramid's edges) of each
  contact, a contact being identified by its geom pair and its rank among the contacts of that
  pair;
* the generalised force: ``qfrc_inverse`` against ``qfrc_applied + J' xfrc_applied + moment'
  actuator_force`` of the record;
* the actuators. The actuator part of the inverse force, ``qfrc_inverse - qfrc_applied -
  J' xfrc_applied``, equals ``actuator_moment' actuator_force``; the forces follow by least squares
  on the moments (unique when the moment rows are independent). Then, with MuJoCo's model
  ``force = gain * input + bias``, ``gain = g0 + g1 length + g2 velocity`` (GainType FIXED or
  AFFINE) or the muscle's active force per unit activation (MUSCLE), and ``bias = b0 + b1 length
  + b2 velocity`` (BiasType AFFINE, 0 for NONE) or the muscle's passive force (MUSCLE), gain and
  bias depending on the state only:

  - dyntype NONE: ``input = ctrl``, so ``ctrl = (force - bias) / gain`` is recovered and compared
    with the recorded control after clamping to ctrlrange (the control the step used);
  - dyntype INTEGRATOR / FILTER / FILTEREXACT / MUSCLE: ``input = act`` (the activation before
    the step, or after it with actearly), so the activation is recovered and compared. The
    control of such an actuator enters the step only through ``act_dot`` and is not recovered
    from forces;
  - user gains, biases or dynamics: only the force is recovered.

  A control is not recoverable (NaN) when the recorded force sits on its forcerange limit.

Steps are skipped (and counted) when the state before them is unknown (no initial state), when
time does not advance by one timestep from the previous record (a reset or a gap), when a
bad-value warning fired (the step reset the state), when the integrator has several stages (RK4,
MIDPOINT, INTERLEAVE: the inverse of a step is not defined), when the state was edited between
records (the scalar positions do not follow from the previous record's by one step, or the
forward acceleration the inverse recovers is not the recorded one), when noslip post-processed
the step's friction rows (their forces are not the soft model's), or
when the inverse finds other constraint rows than the forward recorded. A model with active hard
equality constraints cannot be analysed at all (their impulses are not determined by the
motion): ``analyse`` raises AnalysisError before the first step.

With ``inverse_model="noslip" | "coulomb" | "convex"`` the rigid-contact inverse
(``engine.rigid_inverse``) replaces the soft one: each step's recorded acceleration is the desired
one (the model predicts the unactuated dofs' and the contact forces itself), the call is
warm-started from the previous step's. Its actuator forces are compared with the recorded ones
(and, as above, the controls), its contact forces (normal and tangents in each contact's frame)
with the forward's recorded ones, and the summary adds the torque chatter of both (sum over
consecutive analysed steps of |force_k - force_k-1|, and the largest single change).
Hard equality constraints are held rigidly by that inverse, so they are not refused.
"""
from __future__ import annotations

import csv
import json
import os
import sys
import time

import numpy as np

from .enums import BiasType, DisableBit, DynType, EqType, GainType, Integrator, JointType
from .enums import ConstraintType as CT
from .actuator import muscle_bias, muscle_gain
from .forward import make_data
from .inverse import inverse as inverse_soft
from .lcp import LCPStatus
from .rigid_inverse import rigid_inverse
from .trajectory import Trajectory, apply_options, options_dict

ROW_NAMES = ("normal", "tangent1", "tangent2", "spin", "roll1", "roll2")
IMPULSE_PANELS = 16     # constraint objects drawn in impulses.png
INVERSE_MODELS = ("soft", "noslip", "coulomb", "convex")     # analyse(inverse_model=...)
FAMILIES = {CT.EQUALITY: "equality", CT.FRICTION_DOF: "friction", CT.FRICTION_TENDON: "friction",
            CT.LIMIT_JOINT: "limit", CT.LIMIT_TENDON: "limit"}


class AnalysisError(ValueError):
    """The recording cannot be analysed with this model (hard equality constraints)."""


class Progress:
    """A plain-text progress bar on stderr, redrawn at most every 0.25 s."""

    def __init__(self, total, label="analyze", stream=None, enabled=True, width=30,
                 unit="steps"):
        self.total, self.label, self.width, self.unit = max(1, total), label, width, unit
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.last = -1.0
        self.t0 = time.monotonic()

    def update(self, done):
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.25 and done < self.total:
            return
        self.last = now
        frac = done / self.total
        bar = "#" * int(frac * self.width)
        self.stream.write(f"\r{self.label}: [{bar:<{self.width}}] {100 * frac:5.1f}% "
                          f"{done}/{self.total} {self.unit} {now - self.t0:6.1f} s")
        self.stream.flush()

    def close(self):
        if self.enabled:
            self.update(self.total)
            self.stream.write("\n")
            self.stream.flush()


def jt_xfrc(m, d, xfrc):
    """J' xfrc_applied: each body's wrench (world frame, at its centre of mass xipos) mapped to
    joint space with the body's point Jacobian (MuJoCo's mj_applyFT); needs cdof, subtree_com."""
    out = np.zeros(m.nv)
    for b in np.flatnonzero(np.any(xfrc != 0.0, axis=1)):
        if b == 0:
            continue
        force, torque = xfrc[b, :3], xfrc[b, 3:]
        offset = d.xipos[b] - d.subtree_com[m.body_rootid[b]]
        body = b
        while body > 0 and m.body_dofnum[body] == 0:
            body = m.body_parentid[body]
        j = m.body_dofadr[body] + m.body_dofnum[body] - 1 if body > 0 else -1
        while j >= 0:
            rot, lin = d.cdof[j, :3], d.cdof[j, 3:]
            # jacp column = cdof_lin + cdof_rot x offset; jacr column = cdof_rot
            out[j] += (lin + np.cross(rot, offset)) @ force + rot @ torque
            j = m.dof_parentid[j]
    return out


def actuator_kinds(m):
    """Per actuator: what the analysis recovers ("ctrl", "act" or "force") and why."""
    kinds = []
    for i in range(m.nu):
        known = (m.actuator_gaintype[i] != GainType.USER
                 and m.actuator_biastype[i] != BiasType.USER)
        dyn = m.actuator_dyntype[i]
        if not known:
            kinds.append(("force", "user gain/bias: only the force is recovered"))
        elif dyn == DynType.NONE:
            kinds.append(("ctrl", "force = gain ctrl + bias"))
        elif dyn in (DynType.INTEGRATOR, DynType.FILTER, DynType.FILTEREXACT, DynType.MUSCLE):
            kinds.append(("act", "activation dynamics: force = gain act + bias, the activation "
                                 "is recovered; ctrl acts only through act_dot"))
        else:
            kinds.append(("force", "user dynamics: only the force is recovered"))
    return kinds


def _gain_bias(m, d):
    """gain and bias of every actuator at the current lengths and velocities."""
    length, vel = d.actuator_length, d.actuator_velocity
    g, b = m.actuator_gainprm, m.actuator_biasprm
    gain = g[:, 0] + np.where(m.actuator_gaintype == GainType.AFFINE,
                              g[:, 1] * length + g[:, 2] * vel, 0.0)
    bias = np.where(m.actuator_biastype == BiasType.AFFINE,
                    b[:, 0] + b[:, 1] * length + b[:, 2] * vel, 0.0)
    for i in np.flatnonzero(m.actuator_gaintype == GainType.MUSCLE):
        gain[i] = muscle_gain(length[i], vel[i], m.actuator_lengthrange[i],
                              m.actuator_acc0[i], g[i])
    for i in np.flatnonzero(m.actuator_biastype == BiasType.MUSCLE):
        bias[i] = muscle_bias(length[i], m.actuator_lengthrange[i], m.actuator_acc0[i], b[i])
    return gain, bias


def _effective_ctrl(m, ctrl, flags):
    """The control the forward step used: zeros if any is not finite, clamped to ctrlrange."""
    if not np.all(np.isfinite(ctrl)):
        return np.zeros_like(ctrl)
    if flags & DisableBit.CLAMPCTRL:
        return ctrl.copy()
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    return np.where(m.actuator_ctrllimited != 0, np.clip(ctrl, lo, hi), ctrl)


def _stats(ref, got):
    """max |error|, RMS error, scale = max |reference| and max |error| / scale over finite pairs
    (None when the reference is zero throughout)."""
    ref, got = np.asarray(ref, float).ravel(), np.asarray(got, float).ravel()
    ok = np.isfinite(ref) & np.isfinite(got)
    if not ok.any():
        return {"n": 0, "max_abs": None, "rms": None, "scale": None, "max_rel": None}
    err = got[ok] - ref[ok]
    scale = float(np.max(np.abs(ref[ok])))
    max_abs = float(np.max(np.abs(err)))
    return {"n": int(ok.sum()), "max_abs": max_abs, "rms": float(np.sqrt(np.mean(err * err))),
            "scale": scale, "max_rel": max_abs / scale if scale > 0 else None}


class Signal:
    """One compared trace: (step, forward/recorded value, inverse/recovered value) samples;
    unit: "N" or "N m"."""

    def __init__(self, label, family, group, unit="N"):
        self.label, self.family, self.group, self.unit = label, family, group, unit
        self.steps, self.forward, self.inverse = [], [], []

    def add(self, k, fwd, inv):
        self.steps.append(k)
        self.forward.append(fwd)
        self.inverse.append(inv)

    def arrays(self):
        return np.array(self.steps, dtype=int), np.array(self.forward), np.array(self.inverse)

    def stats(self):
        return _stats(self.forward, self.inverse)


class Analysis:
    """Result of analyse(): per-step arrays, the compared signals and the summary.

    Per step (length len(traj), NaN where a step was skipped): ``ctrl_recorded`` /
    ``ctrl_recovered`` (n, nu) (NaN for actuators whose control is not recovered),
    ``force_recorded`` / ``force_recovered``, ``act_recorded`` / ``act_recovered`` (n, nu, for
    activation actuators), ``qfrc_expected`` / ``qfrc_inverse`` (n, nv); ``efc_signals`` maps a
    label to a Signal; ``skipped`` counts skipped steps by reason; ``analysed`` is a bool mask.
    """

    def __init__(self, traj, m):
        n, nu, nv = len(traj), m.nu, m.nv
        self.traj, self.m = traj, m
        self.time = traj.time
        nan = np.full
        self.ctrl_recorded, self.ctrl_recovered = nan((n, nu), np.nan), nan((n, nu), np.nan)
        self.force_recorded, self.force_recovered = nan((n, nu), np.nan), nan((n, nu), np.nan)
        self.act_recorded, self.act_recovered = nan((n, nu), np.nan), nan((n, nu), np.nan)
        self.qfrc_expected, self.qfrc_inverse = nan((n, nv), np.nan), nan((n, nv), np.nan)
        self.analysed = np.zeros(n, dtype=bool)
        self.efc_signals = {}
        self.skipped = {}
        self.kinds = actuator_kinds(m)
        self.inverse_times = []     # wall time of each inverse call
        self.inverse_model = "soft"
        self.chatter = None         # rigid models: chatter of recorded and recovered forces

    def skip(self, reason):
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def summary(self) -> dict:
        """Max and RMS error per signal and per family (JSON-ready)."""
        names = self.traj.names
        act_names = [_name(names, "actuator", i) for i in range(self.m.nu)]
        dof_names = _dof_names(self.traj.header, self.m.nv)
        fam = {}
        sig = {}
        for key, ref, got, labels in (("ctrl", self.ctrl_recorded, self.ctrl_recovered, act_names),
                                      ("act", self.act_recorded, self.act_recovered, act_names),
                                      ("actuator_force", self.force_recorded,
                                       self.force_recovered, act_names),
                                      ("qfrc", self.qfrc_expected, self.qfrc_inverse, dof_names)):
            fam[key] = _stats(ref, got)
            for i, label in enumerate(labels):
                s = _stats(ref[:, i], got[:, i])
                if s["n"]:
                    sig[f"{key} {label}"] = dict(s, family=key)
        groups = {}
        for label, s in self.efc_signals.items():
            sig[label] = dict(s.stats(), family="efc_" + s.family)
            groups.setdefault(s.family, []).append(s)
        for family, ss in sorted(groups.items()):
            fam["efc_" + family] = _stats(np.concatenate([s.forward for s in ss]),
                                          np.concatenate([s.inverse for s in ss]))
        n_an = int(self.analysed.sum())
        nobj = len({s.group for s in self.efc_signals.values()})
        return {
            "trajectory": self.traj.path, "model_path": self.traj.model_path,
            "model_sha256": self.traj.model_sha256,
            "steps": len(self.traj), "analysed": n_an, "skipped": self.skipped,
            # the median, as the first call may compile
            "inverse_us_per_step": (1e6 * float(np.median(self.inverse_times))
                                    if self.inverse_times else None),
            "inverse_model": self.inverse_model,
            "chatter": self.chatter,
            "actuators": [{"name": act_names[i], "recovered": k, "model": why}
                          for i, (k, why) in enumerate(self.kinds)],
            "families": fam, "signals": sig,
            # the impulses figure draws the objects present in the most steps (the CSV: all)
            "impulses_png": {"objects": nobj, "shown": min(nobj, IMPULSE_PANELS)},
            "errors": "max_abs = max |inverse - forward|, rms = root mean square of the "
                      "difference, scale = max |forward|, max_rel = max_abs / scale",
        }


def _name(names, kind, i):
    n = names.get(kind, [])
    return n[i] if i < len(n) and n[i] else f"{kind}{i}"


def _dof_names(header, nv):
    out = [f"dof{i}" for i in range(nv)]
    names = header["names"]
    width = {0: 6, 1: 3}
    for j, (t, a) in enumerate(zip(header["jnt_type"], header["jnt_dofadr"])):
        w = width.get(t, 1)
        for c in range(w):
            out[a + c] = _name(names, "joint", j) + (f"_{c}" if w > 1 else "")
    return out


def analyse(traj: Trajectory, m, progress=False, inverse_model="soft",
            **rigid_options) -> Analysis:
    """Inverse dynamics over every step of traj with model m (checked against the recording's
    hash; TrajectoryModelMismatch otherwise). inverse_model: "soft" (the engine's contacts,
    engine.inverse) or a rigid-contact model of INVERSE_MODELS (engine.rigid_inverse, which
    receives rigid_options: nedges, stabilization (default 0: the recording's penetration is
    the compliant contacts' resting state), max_bases). See the module docstring."""
    if inverse_model not in INVERSE_MODELS:
        raise AnalysisError(f"inverse_model must be one of {', '.join(INVERSE_MODELS)}, not "
                            f"{inverse_model!r}")
    inverse = inverse_model
    # the recording's contacts are compliant: their resting penetration is no error to remove
    rigid_options.setdefault("stabilization", 0.0)
    traj.check_model(m)
    hard = [_name(traj.names, "equality", i) for i in range(m.neq)
            if m.eq_hard[i] and m.eq_active0[i]]
    if hard and inverse == "soft":
        raise AnalysisError(f"the model has hard equality constraints ({', '.join(hard)}): "
                            f"their forces are not determined by the motion, so the recording "
                            f"cannot be inverted (make them soft to analyse it)")
    out = Analysis(traj, m)
    out.inverse_model = inverse
    n = len(traj)
    d = make_data(m)
    warm = None
    names = traj.names
    dof_names = _dof_names(traj.header, m.nv)
    saved_options = options_dict(m)
    bar = Progress(n, enabled=progress)
    kinds = [k for k, _ in out.kinds]
    ctrl_idx = np.array([i for i, k in enumerate(kinds) if k == "ctrl"], dtype=int)
    act_idx = np.array([i for i, k in enumerate(kinds) if k == "act"], dtype=int)
    act_last = m.actuator_actadr + m.actuator_actnum - 1
    current = None
    try:
        for k in range(n):
            bar.update(k)
            if k == 0:
                if traj.initial is None:
                    out.skip("no state before the first step (Recorder(m, path, d=d) stores it)")
                    continue
                prev = traj.initial
                t_prev, qpos, qvel, act = prev["time"], prev["qpos"], prev["qvel"], prev["act"]
            else:
                t_prev, qpos, qvel, act = (traj.time[k - 1], traj.qpos[k - 1], traj.qvel[k - 1],
                                           traj.act[k - 1])
            opts = traj.options_at(k)
            if opts is not current:
                apply_options(m, opts)
                current = opts
            h = m.opt.timestep
            if abs(t_prev + h - traj.time[k]) > 1e-9 * h:
                out.skip("time does not advance by one timestep (reset or gap)")
                continue
            if k > 0 and np.any(traj.warning[k] != traj.warning[k - 1]):
                out.skip("a bad-value warning reset the state")
                continue
            integrator = m.opt.integrator
            if integrator not in ONE_STAGE:
                out.skip(f"the {integrator.name} integrator has several stages (no inverse)")
                continue
            if (inverse == "soft" and m.opt.noslip_iterations > 0
                    and np.isin(traj.efc(k)["type"], FRICTION_ROWS).any()):
                out.skip("noslip changed the friction forces (no inverse)")
                continue
            explicit = integrator == Integrator.EXPLICIT
            if not _positions_follow(m, qpos, traj.qpos[k], qvel if explicit else traj.qvel[k],
                                     h):
                out.skip("the state was edited between records")
                continue
            d.time = t_prev
            d.qpos[:], d.qvel[:], d.act[:] = qpos, qvel, act
            d.ctrl[:], d.qfrc_applied[:] = traj.ctrl[k], traj.qfrc_applied[k]
            d.xfrc_applied[:] = traj.xfrc_applied[k]
            d.mocap_pos[:], d.mocap_quat[:] = traj.mocap_pos[k], traj.mocap_quat[k]
            # (1): v' = v + h qacc
            d.qacc[:] = (traj.qvel[k] - qvel) / h
            if inverse != "soft":
                t0 = time.perf_counter()
                res = rigid_inverse(m, d, d.qacc, model=inverse, warmstart=warm,
                                    **rigid_options)
                out.inverse_times.append(time.perf_counter() - t0)
                warm = res.warmstart
                if res.status != LCPStatus.SOLVED:
                    out.skip(f"the {inverse} inverse found no solution ({res.status.name})")
                    continue
                out.analysed[k] = True
                _compare_contacts(out, traj, m, d, k, res.contact_force, names)
                _compare_actuation(out, traj, m, d, k, act, ctrl_idx, act_idx, act_last,
                                   res.actuator_force)
                continue
            t0 = time.perf_counter()
            inverse_soft(m, d)
            out.inverse_times.append(time.perf_counter() - t0)
            if not _velocities_follow(qvel, traj.qvel[k], d.qacc_continuous, traj.qacc[k], h):
                out.skip("the state was edited between records")
                continue
            rows = traj.efc(k)
            ne = d.nefc
            if (ne != len(rows["type"]) or not np.array_equal(d.efc_type[:ne], rows["type"])
                    or not np.array_equal(d.efc_id[:ne], rows["id"])):
                out.skip("the inverse found other constraint rows than the forward (state edited)")
                continue
            out.analysed[k] = True
            _compare_rows(out, traj, m, d, k, rows, names, dof_names)
            _compare_actuation(out, traj, m, d, k, act, ctrl_idx, act_idx, act_last)
        if inverse != "soft":
            out.chatter = {"recorded": _chatter(out.force_recorded, out.analysed),
                           "recovered": _chatter(out.force_recovered, out.analysed)}
    finally:
        apply_options(m, saved_options)
        bar.close()
    return out


ONE_STAGE = (Integrator.SEMIIMPLICIT, Integrator.EXPLICIT, Integrator.IMPLICIT,
             Integrator.IMPLICITFAST)
FRICTION_ROWS = (CT.FRICTION_DOF, CT.FRICTION_TENDON, CT.CONTACT_ELLIPTIC, CT.CONTACT_PYRAMIDAL)


def _positions_follow(m, qpos0, qpos1, v, h, tol=1e-9):
    """Did record k's positions come from the previous ones by one step? Scalar joint
    coordinates (and free-joint positions) q1 = q0 + h v, v the velocity the integrator moves
    them with (the new one; the old one for EXPLICIT), up to rounding."""
    for j in range(m.njnt):
        pa, da, t = m.jnt_qposadr[j], m.jnt_dofadr[j], m.jnt_type[j]
        n = 3 if t == JointType.FREE else (0 if t == JointType.BALL else 1)
        for c in range(n):
            q0, q1, vc = qpos0[pa + c], qpos1[pa + c], v[da + c]
            if abs(q1 - q0 - h * vc) > tol * (abs(q0) + abs(q1) + h * abs(vc) + 1e-12):
                return False
    return True


def _velocities_follow(qvel0, qvel1, qacc_continuous, qacc, h, tol=1e-9):
    """Did record k's velocities come from the previous ones by one step? The forward
    acceleration the inverse recovered from them (d.qacc_continuous) is the recorded forward
    qacc, up to rounding."""
    return not np.any(np.abs(h * (qacc_continuous - qacc))
                      > tol * (np.abs(qvel0) + np.abs(qvel1) + h * np.abs(qacc) + 1e-12))


def _compare_rows(out, traj, m, d, k, rows, names, dof_names):
    """Forward (recorded) against inverse efc_force, one signal per object row."""
    ne = len(rows["type"])
    seen = {}
    i = 0
    while i < ne:
        t, oid = int(rows["type"][i]), int(rows["id"][i])
        if t in (CT.CONTACT_ELLIPTIC, CT.CONTACT_FRICTIONLESS, CT.CONTACT_PYRAMIDAL):
            g1, g2 = int(d.contact_geom1[oid]), int(d.contact_geom2[oid])
            rank = seen.get((g1, g2), 0)
            seen[(g1, g2)] = rank + 1
            dim = int(d.contact_dim[oid])
            group = (f"contact {_name(names, 'geom', g1)}/{_name(names, 'geom', g2)}"
                     + (f" [{rank}]" if rank else ""))     # no "#": a comment in CSV readers
            if t == CT.CONTACT_PYRAMIDAL:
                # edges J_n +- mu_j J_j, two per friction direction j
                labels = [(f"{group} edge {ROW_NAMES[1 + r // 2]}{'+-'[r % 2]}", "contact_edge")
                          for r in range(2 * (dim - 1))]
            else:
                nrow = dim if t == CT.CONTACT_ELLIPTIC else 1
                labels = [(group + " " + ROW_NAMES[r], "contact_normal" if r == 0
                           else "contact_friction") for r in range(nrow)]
            nrow = len(labels)
        else:
            family = FAMILIES.get(t, "other")
            if t == CT.FRICTION_DOF:
                group = f"friction {dof_names[oid]}"
            elif t == CT.FRICTION_TENDON:
                group = f"friction tendon {_name(names, 'tendon', oid)}"
            elif t == CT.LIMIT_JOINT:
                group = f"limit {_name(names, 'joint', oid)}"
            elif t == CT.LIMIT_TENDON:
                group = f"limit tendon {_name(names, 'tendon', oid)}"
            else:
                group = f"equality {_name(names, 'equality', oid)}"
            nrow = 1
            rank = seen.get((t, oid), 0)
            seen[(t, oid)] = rank + 1
            label = group if t != CT.EQUALITY else f"{group} row {rank}"
            labels = [(label, family)]
        for r, (label, family) in enumerate(labels):
            s = out.efc_signals.get(label)
            if s is None:
                unit = _row_unit(m, t, oid, rank if t == CT.EQUALITY else r)
                s = out.efc_signals[label] = Signal(label, family, group, unit)
            s.add(k, float(rows["force"][i + r]), float(d.efc_force[i + r]))
        i += nrow


def _recorded_contact_force(con, rows, c):
    """Force of recorded contact c in its frame (normal, tangent 1, tangent 2) from the
    recorded rows, as engine.contact_force: elliptic rows as they are, pyramid edges
    f_n = sum e, f_j = mu_j (e+ - e-)."""
    out = np.zeros(3)
    adr = int(con["efc_address"][c])
    if adr < 0:
        return out
    dim = int(con["dim"][c])
    if int(rows["type"][adr]) == CT.CONTACT_PYRAMIDAL:
        for j in range(1, min(dim, 3)):
            plus, minus = rows["force"][adr + 2 * (j - 1)], rows["force"][adr + 2 * (j - 1) + 1]
            out[0] += plus + minus
            out[j] = con["friction"][c][j - 1] * (plus - minus)
        for j in range(3, dim):                 # torsional and rolling edges add to the normal
            out[0] += rows["force"][adr + 2 * (j - 1)] + rows["force"][adr + 2 * (j - 1) + 1]
    else:
        n = min(dim, 3) if int(rows["type"][adr]) == CT.CONTACT_ELLIPTIC else 1
        out[:n] = rows["force"][adr:adr + n]
    return out


def _compare_contacts(out, traj, m, d, k, predicted, names):
    """Recorded forward contact forces against a rigid inverse's (normal, tangents in each
    contact's frame), contacts matched by geom pair and rank (the inverse's collision runs at
    the same state; contacts in the gap zone, which the forward records without rows, count as
    recorded with zero force)."""
    con, rows = traj.contact(k), traj.efc(k)
    recorded = {}
    seen = {}
    for c in range(len(con["geom1"])):
        key = (int(con["geom1"][c]), int(con["geom2"][c]))
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        recorded[key + (rank,)] = (_recorded_contact_force(con, rows, c), int(con["dim"][c]))
    seen = {}
    for c in range(len(predicted)):
        g1, g2 = int(d.contact_geom1[c]), int(d.contact_geom2[c])
        rank = seen.get((g1, g2), 0)
        seen[(g1, g2)] = rank + 1
        ref, dim = recorded.get((g1, g2, rank), (np.zeros(3), int(d.contact_dim[c])))
        group = (f"contact {_name(names, 'geom', g1)}/{_name(names, 'geom', g2)}"
                 + (f" [{rank}]" if rank else ""))
        for r in range(1 if dim == 1 else 3):
            label = f"{group} {ROW_NAMES[r]}"
            s = out.efc_signals.get(label)
            if s is None:
                family = "contact_normal" if r == 0 else "contact_friction"
                s = out.efc_signals[label] = Signal(label, family, group, "N")
            s.add(k, float(ref[r]), float(predicted[c, r]))


def _chatter(force, analysed):
    """Torque chatter of a (steps, nu) force history over consecutive analysed steps: the sum
    of |f_k - f_k-1| (all actuators) and the largest single change."""
    both = analysed[1:] & analysed[:-1]
    if not both.any() or force.shape[1] == 0:
        return {"sum": 0.0, "peak": 0.0, "steps": 0}
    dif = np.abs(np.diff(force, axis=0))[both]
    dif = dif[np.all(np.isfinite(dif), axis=1)]
    return {"sum": float(dif.sum()), "peak": float(dif.max()) if dif.size else 0.0,
            "steps": int(len(dif))}


def _joint_unit(m, j, dof=0):
    """Unit of a joint's generalised force: N along a translation, N m about a rotation."""
    t = m.jnt_type[j]
    translation = t == JointType.SLIDE or (t == JointType.FREE and dof < 3)
    return "N" if translation else "N m"


def _row_unit(m, t, oid, r):
    """Unit of row r of constraint object oid of type t (r: the row within the object)."""
    if t in (CT.CONTACT_ELLIPTIC, CT.CONTACT_FRICTIONLESS):
        return "N" if r < 3 else "N m"           # normal, tangents; spin, rolling
    if t == CT.FRICTION_DOF:
        j = m.dof_jntid[oid]
        return _joint_unit(m, j, oid - m.jnt_dofadr[j])
    if t == CT.LIMIT_JOINT:
        return _joint_unit(m, oid)
    if t == CT.EQUALITY:
        kind = m.eq_type[oid]
        if kind == EqType.WELD:
            return "N" if r < 3 else "N m"
        if kind == EqType.JOINT:
            return _joint_unit(m, m.eq_obj1id[oid])
    return "N"      # pyramid edges, connect, tendons


def _compare_actuation(out, traj, m, d, k, act_prev, ctrl_idx, act_idx, act_last, force=None):
    """qfrc_inverse against the recorded applied forces; actuator forces (given: those of a
    rigid-contact inverse; else by least squares on the actuator moments), ctrl and act
    (module docstring)."""
    flags = m.opt.disableflags
    external = traj.qfrc_applied[k] + jt_xfrc(m, d, traj.xfrc_applied[k])
    moment = d.actuator_moment
    out.qfrc_expected[k] = external + moment.T @ traj.actuator_force[k]
    if force is not None:
        out.qfrc_inverse[k] = external + moment.T @ force
    else:
        out.qfrc_inverse[k] = d.qfrc_inverse
    if m.nu == 0 or flags & DisableBit.ACTUATION:
        return
    if force is None:
        # qfrc_inverse - applied - J' xfrc = moment' force
        force = np.linalg.lstsq(moment.T, d.qfrc_inverse - external, rcond=None)[0]
    out.force_recorded[k] = traj.actuator_force[k]
    out.force_recovered[k] = force
    gain, bias = _gain_bias(m, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (force - bias) / gain
    saturated = (m.actuator_forcelimited != 0) & (
        (traj.actuator_force[k] <= m.actuator_forcerange[:, 0])
        | (traj.actuator_force[k] >= m.actuator_forcerange[:, 1]))
    value[saturated | (gain == 0.0)] = np.nan
    if len(ctrl_idx):
        ctrl = _effective_ctrl(m, traj.ctrl[k], flags)
        out.ctrl_recorded[k, ctrl_idx] = ctrl[ctrl_idx]
        out.ctrl_recovered[k, ctrl_idx] = value[ctrl_idx]
    if len(act_idx):
        # the activation the force used: before the step, or after it with actearly
        early = m.actuator_actearly[act_idx] != 0
        used = np.where(early, traj.act[k][act_last[act_idx]], act_prev[act_last[act_idx]])
        out.act_recorded[k, act_idx] = used
        out.act_recovered[k, act_idx] = value[act_idx]


# --------------------------------------------------------------------------------------------
# outputs: CSV, JSON, figures (engine.figures)
# --------------------------------------------------------------------------------------------
def _write_csv(path, header, cols):
    table = np.column_stack(cols) if cols else np.zeros((0, len(header)))
    np.savetxt(path, table, delimiter=",", header=",".join(header), comments="", fmt="%.17g")


def write_outputs(a: Analysis, directory) -> list[str]:
    """controls.csv, qfrc.csv, impulses.csv, summary.json, and the figures controls and
    impulses as PNG and SVG; returns the paths."""
    from . import figures

    os.makedirs(directory, exist_ok=True)
    names = a.traj.names
    n = len(a.traj)
    step = np.arange(n)
    paths = []
    act_names = [_name(names, "actuator", i) for i in range(a.m.nu)]
    header, cols = ["step", "time"], [step, a.time]
    for i, nm in enumerate(act_names):
        kind = a.kinds[i][0]
        pairs = [("force", a.force_recorded, a.force_recovered)]
        if kind == "ctrl":
            pairs.insert(0, ("ctrl", a.ctrl_recorded, a.ctrl_recovered))
        if kind == "act":
            pairs.insert(0, ("act", a.act_recorded, a.act_recovered))
        for what, ref, got in pairs:
            header += [f"{nm}_{what}_recorded", f"{nm}_{what}_recovered"]
            cols += [ref[:, i], got[:, i]]
    paths.append(os.path.join(directory, "controls.csv"))
    _write_csv(paths[-1], header, cols)
    dof_names = _dof_names(a.traj.header, a.m.nv)
    header, cols = ["step", "time"], [step, a.time]
    for i, nm in enumerate(dof_names):
        header += [f"{nm}_applied", f"{nm}_inverse"]
        cols += [a.qfrc_expected[:, i], a.qfrc_inverse[:, i]]
    paths.append(os.path.join(directory, "qfrc.csv"))
    _write_csv(paths[-1], header, cols)
    paths.append(os.path.join(directory, "impulses.csv"))
    with open(paths[-1], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "time", "signal", "family", "unit", "forward", "inverse"])
        for label, s in a.efc_signals.items():
            ks, fwd, inv = s.arrays()
            # repr of a Python float: the shortest text that reads back to the same number
            w.writerows([int(kk), repr(float(a.time[kk])), label, s.family, s.unit,
                         repr(float(x)), repr(float(y))] for kk, x, y in zip(ks, fwd, inv))
    paths.append(os.path.join(directory, "summary.json"))
    with open(paths[-1], "w") as f:
        json.dump(a.summary(), f, indent=1, default=_json_default)
    paths += figures.save(figures.controls_figure(a), os.path.join(directory, "controls"))
    paths += figures.save(figures.impulses_figure(a), os.path.join(directory, "impulses"))
    return paths


def _json_default(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    raise TypeError(type(x))

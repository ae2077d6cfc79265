"""Live forward-vs-inverse consistency: the inverse dynamics run on every step of the simulation.

For a step from (q, v) to v' the inverse dynamics at the pre-step state with qacc = (v' - v) / h
must give back the applied force of that step, qfrc_applied + qfrc_actuator + J' xfrc_applied,
and the forward's constraint forces on the same rows (Todorov 2014, section IV; the identity
that tests/test_inverse.py checks). ``InverseCheck`` does this beside the simulation: before the
step it copies the state into its own Data (``engine.inverse`` overwrites the contacts, the
constraint rows and qfrc_constraint, so it must not run on the simulated Data), after the step it
runs the inverse there and keeps two relative residuals per step in ring buffers:

- force:   |qfrc_inverse - applied| / max(|applied|, |qfrc_bias|)  (the bias force, gravity among
           it, is the force scale of the state when nothing is applied)
- impulse: |efc_force_inverse - efc_force_forward| / |efc_force_forward| over the step's rows
           (0 without rows; NaN when the inverse found other rows than the forward).

The identity holds for the one-stage integrators (SEMIIMPLICIT, EXPLICIT, IMPLICIT, IMPLICITFAST):
after RK4 or MIDPOINT the Data's forces belong to the last stage, not to the pre-step state.
"""
from __future__ import annotations

import numpy as np

import engine

CAPACITY = 4000                      # steps kept
COPIED = ("qpos", "qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied", "mocap_pos", "mocap_quat",
          "qacc_warmstart")


class InverseCheck:
    """Per-step residuals of the inverse dynamics against the forward step (see module doc)."""

    def __init__(self, m, capacity: int = CAPACITY):
        self.di = engine.make_data(m)
        self.capacity = int(capacity)
        self.time = np.zeros(self.capacity)
        self.force = np.zeros(self.capacity)
        self.impulse = np.zeros(self.capacity)
        self.n = 0                   # steps checked (the newest is at (n - 1) % capacity)

    def before(self, m, d) -> None:
        """Copy the pre-step state of ``d``."""
        di = self.di
        di.time = d.time
        for f in COPIED:
            getattr(di, f)[...] = getattr(d, f)

    def after(self, m, d) -> tuple[float, float]:
        """Run the inverse at the copied pre-step state with qacc = (v' - v) / h; returns and
        stores (force residual, impulse residual)."""
        di = self.di
        h = float(m.opt.timestep)
        di.qacc[:] = (d.qvel - di.qvel) / h
        engine.inverse(m, di)
        # after step, d's force fields are those of the forward at the pre-step state
        applied = d.qfrc_smooth - d.qfrc_passive + d.qfrc_bias
        scale = max(float(np.linalg.norm(applied)), float(np.linalg.norm(d.qfrc_bias)), 1e-12)
        force = float(np.linalg.norm(di.qfrc_inverse - applied)) / scale
        nefc = d.nefc
        if nefc == 0:
            impulse = 0.0
        elif di.nefc != nefc or np.any(di.efc_type[:nefc] != d.efc_type[:nefc]):
            impulse = float("nan")
        else:
            ff = d.efc_force[:nefc]
            impulse = float(np.linalg.norm(di.efc_force[:nefc] - ff)) / max(
                float(np.linalg.norm(ff)), 1e-12)
        i = self.n % self.capacity
        self.time[i], self.force[i], self.impulse[i] = d.time, force, impulse
        self.n += 1
        return force, impulse

    def series(self):
        """(time, force residual, impulse residual), oldest first (copies)."""
        k = min(self.n, self.capacity)
        idx = np.arange(self.n - k, self.n) % self.capacity
        return self.time[idx], self.force[idx], self.impulse[idx]

"""Steps a simulation at real-time pace and keeps the statistics of the summary line.

The runner owns the (Model, Data) pair. Two ways to drive it:

- synchronously (headless loop, screenshots): ``advance()`` steps until ``d.time`` catches up with
  the wall clock, ``step_n(n)`` steps exactly n times;
- in a background thread (the window): ``start()`` launches the simulation thread. The compiled
  step releases the GIL, so stepping runs beside the UI. The UI never writes to the engine's
  state directly: it ``submit``s a function ``fn(m, d)`` that the simulation thread applies
  between steps. After each chunk of steps the thread publishes a ``Snapshot`` (copies of the
  fields the scene, the panels and the plots read), so the UI never sees a half-written step.
  A chunk is every step due (at least ~1/120 s of simulated time, at most ~1/60 s) in one
  compiled call, so the thread holds the GIL only between chunks. The published positions,
  contacts and forces are those of the last step's forward pass (MuJoCo's mj_step leaves them
  at the pre-step state): no extra forward per chunk.

Per step, only when asked for (each forces one compiled call per step): the perturbation
spring (``perturb``), control noise (``noise``, ControlNoise), a trajectory ``Recorder``
(``start_recording``; ``rec.record(d)`` after
each step, closed by ``stop_recording``) and the live inverse-dynamics check
(``set_inverse_check``, studio.consistency).

A history ring buffer keeps the state of the last ``history`` published frames; ``seek`` moves
through it while paused. Divergence (``d.warning`` counters rising: the engine has reset the
state) pauses the simulation and leaves a message in ``warning_message`` naming the simulated
time at which it happened; resuming clears it. A queued command (or anything else in the
thread) that raises pauses the simulation and leaves its message in ``error_message``; the
thread keeps running.
"""
from __future__ import annotations

import sys
import threading
import time
import traceback
from collections import deque

import numpy as np

import engine
from engine.enums import Warning

from . import keyframes
from .consistency import InverseCheck

WARNING_NAMES = {Warning.BADQACC: "BADQACC: bad acceleration",
                 Warning.BADQPOS: "BADQPOS: bad position", Warning.BADQVEL: "BADQVEL: bad velocity",
                 Warning.BADACT: "BADACT: bad activation", Warning.BADTIME: "BADTIME: bad time",
                 Warning.BADCTRL: "BADCTRL: bad control, zeros used",
                 Warning.BADMOCAP: "BADMOCAP: bad mocap pose, the model's used"}
RESETTING = (Warning.BADQACC, Warning.BADQPOS, Warning.BADQVEL, Warning.BADACT, Warning.BADTIME)

# fields copied into a Snapshot after every chunk of steps (first ncon / nefc rows only where noted)
SNAPSHOT_FIELDS = (
    "qpos qvel act ctrl qfrc_applied xfrc_applied mocap_pos mocap_quat warning xpos xquat xmat "
    "xipos ximat xanchor xaxis geom_xpos geom_xmat site_xpos site_xmat cam_xpos cam_xmat "
    "light_xpos light_xdir subtree_com ten_wrapadr ten_wrapnum ten_length ten_velocity wrap_obj "
    "wrap_xpos actuator_force actuator_length qfrc_actuator energy solver_niter "
    "solver_residual cvel sensordata"
).split()
PUBLISH_MIN, PUBLISH_MAX = 1.0 / 120.0, 1.0 / 60.0   # simulated seconds per chunk (at speed 1)
CONTACT_FIELDS = "dist pos frame geom1 geom2 dim friction efc_address".split()
STATE_FIELDS = ("qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat", "qfrc_applied")


class Snapshot:
    """Copies of Data fields at one instant (``time``, ``ncon``, ``contact_*``, ``efc_force``...)."""

    def __init__(self, m, d, step_seconds: float = 0.0):
        for name in SNAPSHOT_FIELDS:
            setattr(self, name, getattr(d, name).copy())
        self.time = d.time
        self.ncon = d.ncon
        self.nefc = d.nefc
        for name in CONTACT_FIELDS:
            setattr(self, "contact_" + name, getattr(d, "contact_" + name)[:self.ncon].copy())
        self.efc_force = d.efc_force[:self.nefc].copy()
        self.efc_type = d.efc_type[:self.nefc].copy()
        self.efc_id = d.efc_id[:self.nefc].copy()
        self.efc_mu = d.efc_mu[:self.nefc].copy()
        self.step_seconds = step_seconds


class History:
    """Ring buffer of states (time and STATE_FIELDS) with preallocated arrays."""

    def __init__(self, m, d, capacity: int):
        self.capacity = max(1, int(capacity))
        self.time = np.zeros(self.capacity)
        self.arrays = {f: np.zeros((self.capacity,) + getattr(d, f).shape) for f in STATE_FIELDS}
        self.count = 0          # valid entries
        self.head = 0           # next write position

    def push(self, d) -> None:
        self.time[self.head] = d.time
        for f, a in self.arrays.items():
            a[self.head] = getattr(d, f)
        self.head = (self.head + 1) % self.capacity
        self.count = min(self.count + 1, self.capacity)

    def index(self, back: int) -> int:
        """Buffer slot of the entry ``back`` frames before the newest (0: newest)."""
        return (self.head - 1 - back) % self.capacity

    def restore(self, d, back: int) -> None:
        i = self.index(back)
        d.time = self.time[i]
        for f, a in self.arrays.items():
            getattr(d, f)[...] = a[i]

    def truncate(self, back: int) -> None:
        """Forget the ``back`` newest entries (the future of a state the user went back to)."""
        back = min(back, self.count - 1) if self.count else 0
        self.head = (self.head - back) % self.capacity
        self.count -= back


class ControlNoise:
    """Noise added to the controls before every step, as simulate's: an Ornstein-Uhlenbeck
    process per actuator, ``n <- a n + std sqrt(1 - a^2) N(0, 1)`` with ``a = exp(-h / rate)``
    (stationary standard deviation ``std`` times the actuator's control range, correlation time
    ``rate`` seconds). The controls hold the user's value plus the current noise."""

    def __init__(self, std: float = 0.0, rate: float = 0.1, seed: int | None = None):
        self.std, self.rate = std, rate
        self.rng = np.random.default_rng(seed)
        self.value = None                 # the noise now in d.ctrl

    @property
    def on(self) -> bool:
        return self.std > 0.0 or (self.value is not None and np.any(self.value))

    def apply(self, m, d) -> None:
        if self.value is None or self.value.shape != d.ctrl.shape:
            self.value = np.zeros_like(d.ctrl)
        span = np.where(m.actuator_ctrllimited,
                        np.diff(m.actuator_ctrlrange, axis=1)[:, 0] / 2, 1.0)
        a = np.exp(-float(m.opt.timestep) / max(self.rate, 1e-6))
        new = a * self.value + self.std * np.sqrt(1.0 - a * a) * self.rng.standard_normal(
            self.value.shape) * span if self.std > 0 else np.zeros_like(self.value)
        d.ctrl += new - self.value
        self.value = new


class Runner:
    """Real-time pacing of one (Model, Data) pair, synchronous or in a simulation thread."""

    def __init__(self, m, d, paused: bool = False, recorder=None, max_frame_seconds: float = 0.1,
                 history: int = 1000):
        self.m, self.d = m, d
        self.paused = paused
        self.recorder = recorder
        self.max_frame_seconds = max_frame_seconds  # never try to catch up more than this per call
        self.steps = 0
        self.frames = 0
        self.sim_time = 0.0                           # simulated seconds advanced (across resets)
        self.start_time = self.start = time.perf_counter()
        self._last = self.start
        self._debt = 0.0                              # wall seconds not yet simulated
        # threaded mode
        self.speed = 1.0                              # simulated seconds per wall second
        self.realtime_factor = 0.0                    # measured, over the last ~0.5 s
        self.step_seconds = 0.0                       # measured wall time per step
        self.warning_message = ""                     # divergence (cleared on resume and reset)
        self.error_message = ""                       # an exception in the simulation thread
        self.perturb = None                           # callable(m, d) run before every step
        self.noise = ControlNoise()                   # control noise (off: std 0)
        self._perturb_requested = None                # the last value passed to set_perturb
        self.inverse_check = None                     # InverseCheck while the live check is on
        self.record_path = None                       # file of the open recorder, if known
        self.record_error = ""
        self.history = History(m, d, history)
        self.history_back = 0                         # frames behind the newest while scrubbing
        self._commands: deque = deque()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = None
        self._warnings_seen = d.warning.copy()
        self._chunk_end = d.time                      # d.time at the end of the last chunk
        self._pace = (d.time, self.start, 1.0)        # (sim time, wall time, speed) of the pace
        self._rtf_window: deque = deque()
        self.lock = threading.Lock()                  # held while the engine state is in use
        self.idle = False                             # paused, and the state it holds published
        engine.energy(m, d)                           # compiled here, not in the thread
        self.snapshot = Snapshot(m, d)
        self.history.push(d)

    # -- synchronous stepping (headless, screenshots) --------------------------------------------
    def step_n(self, n: int) -> None:
        """Advance exactly ``n`` steps (recording each one when a recorder is attached)."""
        if n <= 0:
            return
        m, d = self.m, self.d
        t0 = d.time
        # each read once: the UI thread may replace them (through the queue) between chunks
        perturb, check, recorder = self.perturb, self.inverse_check, self.recorder
        noise = self.noise if self.noise.on else None
        if recorder is None and perturb is None and check is None and noise is None:
            engine.step(m, d, n)
        else:
            for _ in range(n):
                if perturb is not None:
                    perturb(m, d)
                if noise is not None:
                    noise.apply(m, d)
                if check is not None:
                    check.before(m, d)
                engine.step(m, d)
                if check is not None:
                    check.after(m, d)
                if recorder is not None:
                    recorder.record(d)
        self.steps += n
        dt = float(m.opt.timestep)
        self.sim_time += n * dt             # not d.time - t0: a divergence resets d.time to 0
        self._chunk_end = t0 + n * dt       # where d.time would be without a reset

    def advance(self) -> int:
        """Step as many timesteps as the wall time elapsed since the last call; returns the count."""
        now = time.perf_counter()
        elapsed, self._last = now - self._last, now
        if self.paused:
            self._debt = 0.0
            return 0
        self._debt = min(self._debt + elapsed * self.speed, self.max_frame_seconds)
        dt = float(self.m.opt.timestep)
        n = int(self._debt / dt + 1e-9)
        if n <= 0:
            return 0
        t0 = time.perf_counter()
        self.step_n(n)
        self._debt -= n * dt
        # if stepping took longer than the time it simulated, drop the backlog instead of spiralling
        if time.perf_counter() - t0 > n * dt / max(self.speed, 1e-9):
            self._debt = 0.0
        return n

    # -- commands from the UI ---------------------------------------------------------------------
    def submit(self, fn) -> None:
        """Queue ``fn(m, d)`` to run in the simulation thread between two steps."""
        self._commands.append(fn)
        self._wake.set()
        if self._thread is None:                      # not threaded: apply at once
            self._apply_commands()

    def set_perturb(self, fn, release=None) -> None:
        """Queue a change of the per-step perturbation ``fn(m, d)`` (None: none); ``release(m, d)``
        runs with it (to clear the forces the previous one wrote). Repeated requests of the same
        perturbation are not queued again."""
        if fn == self._perturb_requested and release is None:
            return
        self._perturb_requested = fn

        def apply(m, d):
            self.perturb = fn
            if release is not None:
                release(m, d)
        self.submit(apply)

    def _apply_commands(self) -> bool:
        did = False
        while self._commands:
            fn = self._commands.popleft()
            fn(self.m, self.d)
            did = True
        return did

    def set_option(self, name: str, value) -> None:
        """Queue an edit of ``m.opt.<name>`` (the path every option widget uses)."""
        def apply(m, d):
            setattr(m.opt, name, value)
        self.submit(apply)

    def start_recording(self, path) -> None:
        """Record every following step to ``path`` through ``engine.Recorder`` (closes any open
        recorder first); an error is left in ``record_error``."""
        path = str(path)

        def apply(m, d):
            self._close_recorder()
            try:
                self.recorder = engine.Recorder(m, path, d=d)   # d: the state before step 1
                self.record_path = path
                self.record_error = ""
            except Exception as e:               # unwritable file, no Recorder in this engine
                self.record_error = f"cannot record to {path}: {type(e).__name__}: {e}"
        self.submit(apply)

    def stop_recording(self) -> None:
        self.submit(lambda m, d: self._close_recorder())

    def _close_recorder(self) -> None:
        rec, self.recorder = self.recorder, None
        if rec is not None:
            rec.close()

    def close_recorder(self) -> None:
        """Close the recorder now (the thread must be stopped); safe to call twice."""
        with self.lock:
            self._close_recorder()

    @property
    def recording(self) -> bool:
        return self.recorder is not None

    def set_inverse_check(self, on: bool) -> None:
        """Turn the live forward-vs-inverse check (studio.consistency) on or off."""
        def apply(m, d):
            if on and self.inverse_check is None:
                self.inverse_check = InverseCheck(m)
            elif not on:
                self.inverse_check = None
        self.submit(apply)

    def toggle_pause(self) -> None:
        self.set_paused(not self.paused)

    def set_paused(self, paused: bool) -> None:
        """Pause or resume; resuming clears the divergence and error messages."""
        if not paused:
            self.warning_message = self.error_message = ""
        if not paused and self.history_back:
            back = self.history_back
            self.submit(lambda m, d: self.history.truncate(back))
            self.history_back = 0
        self.paused = paused
        self._last = time.perf_counter()
        self._debt = 0.0
        self._wake.set()

    def single_step(self) -> None:
        """One step while paused."""
        def apply(m, d):
            if self.history_back:
                self.history.truncate(self.history_back)
                self.history_back = 0
            self.step_n(1)
            self._check_warnings()
            self.history.push(d)
        self.submit(apply)

    def reset(self, key=None) -> None:
        """Reset to the default state, to the model's keyframe of index ``key``, or to a
        studio.keyframes.Key."""
        def apply(m, d):
            if key is None:
                engine.reset_data(m, d)
            elif isinstance(key, (int, np.integer)):
                engine.reset_keyframe(m, d, int(key))
            else:
                keyframes.apply(m, d, key)
            engine.forward(m, d)
            self._warnings_seen[:] = d.warning
            self.warning_message = self.error_message = ""
            self.history_back = 0
            self.history.push(d)
            self._debt = 0.0
        self.submit(apply)

    def seek_to(self, back: int) -> None:
        """Show the state ``back`` frames before the newest in the history; pauses."""
        self.seek(self.history_back - int(back))

    def seek(self, delta: int) -> None:
        """Move ``delta`` frames through the history (negative: back in time); pauses."""
        self.paused = True
        back = int(np.clip(self.history_back - delta, 0, max(self.history.count - 1, 0)))
        self.history_back = back

        def apply(m, d):
            self.history.restore(d, back)
            engine.forward(m, d)
        self.submit(apply)

    # -- the simulation thread -------------------------------------------------------------------
    def start_thread(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="simulation", daemon=True)
        self._thread.start()

    def stop_thread(self) -> None:
        """Stop the simulation thread and wait for it, however long its step in progress takes
        (a kernel compiling on a loaded machine): the thread writes into the Data, which the
        caller may free next (a reload, or the exit of the program)."""
        if self._thread is None:
            return
        self._stop.set()
        self._wake.set()
        self._thread.join()
        self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def _publish(self) -> None:
        self.snapshot = Snapshot(self.m, self.d, self.step_seconds)

    def _check_warnings(self) -> None:
        """After a chunk of steps: the engine counts a bad state in d.warning and resets the
        state (time 0), so the divergence happened ``d.time`` before the chunk's end."""
        w = self.d.warning
        if np.any(w > self._warnings_seen):
            new = [i for i in range(len(w)) if w[i] > self._warnings_seen[i]]
            names = [WARNING_NAMES.get(i, Warning(i).name) for i in new]
            if any(i in RESETTING for i in new):
                t = self._chunk_end - self.d.time
                self.warning_message = (f"simulation diverged at t={t:.4f} ("
                                        + ", ".join(names) + "); the state was reset and the "
                                        "simulation paused")
            else:
                self.warning_message = ("bad input (" + ", ".join(names) + "); the simulation "
                                        "paused")
            self._warnings_seen[:] = w
            self.paused = True

    def _fail(self, e: Exception) -> None:
        """An exception in the simulation thread: keep its message, pause, keep running."""
        traceback.print_exception(e, file=sys.stderr)
        self.error_message = f"{type(e).__name__}: {e}"
        self.paused = True

    def _restart_pace(self) -> None:
        """Real-time pacing starts afresh from the current simulated time and speed."""
        self._pace = (self.d.time, time.perf_counter(), max(self.speed, 1e-6))

    def _loop(self) -> None:
        m, d = self.m, self.d
        self._restart_pace()
        was_paused = True
        while not self._stop.is_set():
            try:
                with self.lock:
                    changed = self._apply_commands()
                    if changed:
                        engine.forward(m, d)
                        self._restart_pace()
                if self.paused:
                    if changed or not was_paused:
                        was_paused = True             # (not again if publishing raises)
                        with self.lock:
                            engine.forward(m, d)
                            engine.energy(m, d)
                            self._publish()
                    self.idle = not self._commands
                    self.realtime_factor = 0.0
                    self._rtf_window.clear()
                    self._wake.wait(0.01)
                    self._wake.clear()
                    continue
                self.idle = False
                if was_paused:
                    self._restart_pace()
                    was_paused = False
                self._step_due()
            except Exception as e:                    # noqa: BLE001 - shown in the window
                self._fail(e)
                was_paused = False                    # publish the state as it is, once

    def _step_due(self) -> None:
        """Take the steps due at real-time pace as one chunk (at least PUBLISH_MIN and at most
        PUBLISH_MAX of simulated time at speed 1), or wait briefly for them."""
        m, d = self.m, self.d
        now = time.perf_counter()
        if max(self.speed, 1e-6) != self._pace[2]:   # a new pace starts from here
            self._restart_pace()
        sim0, wall0, speed = self._pace
        dt = float(m.opt.timestep)
        lag = sim0 + speed * (now - wall0) - d.time
        if lag > self.max_frame_seconds * speed:      # cannot keep up: drop the backlog
            self._restart_pace()
            lag = 0.0
        n = int(lag / dt + 1e-9)
        n_min = max(1, int(speed * PUBLISH_MIN / dt))
        if n < n_min:
            self._wake.wait(min(max((n_min * dt - lag) / speed, 0.0), 0.005))
            self._wake.clear()
            return
        n = min(n, max(1, int(speed * PUBLISH_MAX / dt)))
        t0 = time.perf_counter()
        with self.lock:
            self.step_n(n)
            engine.energy(m, d)
            self._check_warnings()
            elapsed = time.perf_counter() - t0
            self.step_seconds = 0.9 * self.step_seconds + 0.1 * elapsed / n \
                if self.step_seconds else elapsed / n
            self.history.push(d)
            self._publish()
            if d.time < sim0:                         # the engine reset the state
                self._restart_pace()
        self._measure_rtf(now, self.sim_time)

    def _measure_rtf(self, wall, sim) -> None:
        w = self._rtf_window
        w.append((wall, sim))
        while len(w) > 2 and wall - w[0][0] > 0.5:
            w.popleft()
        if len(w) >= 2 and w[-1][0] > w[0][0]:
            self.realtime_factor = (w[-1][1] - w[0][1]) / (w[-1][0] - w[0][0])

    def summary(self) -> str:
        wall = max(time.perf_counter() - self.start, 1e-9)
        return (f"studio: frames={self.frames} fps={self.frames / wall:.2f} "
                f"sim_time={self.sim_time:.4f} realtime_factor={self.sim_time / wall:.4f} "
                f"steps={self.steps}")

"""The profiler: time per pipeline stage, and the solver's iterations and residual over time.

The simulation thread runs the whole step as one compiled call, so it cannot time the stages
itself without slowing down. ``Profiler`` instead samples, while it is switched on, a few times
a second in a thread of its own: it copies the simulated state into its own Data and runs the
pipeline's stages there one compiled call each (the stages of forward.py's fwd_position,
fwd_velocity, the actuation, fwd_acceleration and fwd_constraint, in that order), timing each.
Each time includes the ~1 us of a call from Python. The solver's iterations and residual and
the whole step's time come from the published Snapshots (every chunk of steps).
"""
from __future__ import annotations

import threading
import time

import numpy as np

CAPACITY = 600                     # samples kept per series
PERIOD = 0.2                       # seconds between stage timings
STATE = ("qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat", "qfrc_applied",
         "xfrc_applied", "qacc_warmstart")


def stages():
    """[(name, [compiled stage kernels])] in pipeline order."""
    import importlib

    from engine import actuator, collision_driver, constraint, smooth
    forward = importlib.import_module("engine.forward")   # (engine.forward is the function)
    return [("kinematics", [smooth.kinematics, smooth.com_pos, smooth.camlight]),
            ("tendons", [smooth.tendon]),
            ("collision", [collision_driver.collision]),
            ("inertia", [smooth.crb, forward.factor_inertia]),
            ("constraint rows", [constraint.make_constraint, actuator.transmission]),
            ("velocity", [forward.fwd_velocity]),
            ("actuation", [actuator.fwd_actuation]),
            ("acceleration", [forward.fwd_acceleration]),
            ("solver", [forward.fwd_constraint])]


class Series:
    """A ring buffer of (time, values) samples."""

    def __init__(self, width: int):
        self.t = np.zeros(CAPACITY)
        self.v = np.full((CAPACITY, width), np.nan)
        self.n = 0

    def add(self, t, values) -> None:
        i = self.n % CAPACITY
        self.t[i] = t
        self.v[i] = values
        self.n += 1

    def ordered(self):
        k = min(self.n, CAPACITY)
        idx = np.arange(self.n - k, self.n) % CAPACITY
        return self.t[idx], self.v[idx]


class Profiler:
    def __init__(self):
        self.names = None
        self.stage_times = None          # Series of seconds per stage
        self.solver = Series(2)          # iterations, residual
        self.step = Series(1)            # seconds per step (the runner's measurement)
        self.last_time = None
        self.enabled = False
        self._thread = None
        self._runner = None
        self._stop = threading.Event()

    def clear(self) -> None:
        self.stop()
        self.stage_times = None
        self.solver = Series(2)
        self.step = Series(1)
        self.last_time = None

    def sample(self, runner) -> None:
        """Once per frame (UI thread): the solver statistics of the newest Snapshot."""
        snap = runner.snapshot
        if snap.time != self.last_time:
            if self.last_time is not None and snap.time < self.last_time:
                self.solver, self.step = Series(2), Series(1)
            self.last_time = snap.time
            self.solver.add(snap.time, (float(snap.solver_niter[0]),
                                        float(snap.solver_residual[0])))
            self.step.add(snap.time, (runner.step_seconds,))
        if self.enabled and (self._thread is None or self._runner is not runner):
            self.start(runner)
        elif not self.enabled and self._thread is not None:
            self.stop()

    # -- stage timing (own thread) ---------------------------------------------------------------
    def start(self, runner) -> None:
        self.stop()
        self._runner = runner
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, args=(runner,), name="profiler",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5.0)
        self._thread = None
        self._runner = None

    def _loop(self, runner) -> None:
        import engine
        m = runner.m
        d = engine.make_data(m)
        plan = stages()
        self.names = [name for name, _ in plan]
        if self.stage_times is None or self.stage_times.v.shape[1] != len(plan):
            self.stage_times = Series(len(plan))
        while not self._stop.wait(PERIOD):
            with runner.lock:
                src = runner.d
                for f in STATE:
                    getattr(d, f)[...] = getattr(src, f)
                d.time = src.time
            times = self.time_stages(m, d, plan)
            if times is not None:
                self.stage_times.add(d.time, times)

    @staticmethod
    def time_stages(m, d, plan):
        """Seconds per stage of one forward pass at the state in ``d``; None (and ``d`` grown)
        when the contacts or rows outgrew its capacity."""
        import engine
        ms, ds = m._struct, d._struct
        out = np.zeros(len(plan))
        for k, (_, kernels) in enumerate(plan):
            t0 = time.perf_counter()
            for kernel in kernels:
                kernel(ms, ds)
            out[k] = time.perf_counter() - t0
        if d.nefc_overflow[0]:
            engine.forward(m, d)                    # grows d
            return None
        return out

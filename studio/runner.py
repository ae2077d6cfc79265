"""Steps a simulation at real-time pace and keeps the statistics of the summary line.

The runner owns the (Model, Data) pair; the window and the headless loop only ask it to catch up
with the wall clock. All stepping goes through ``engine.step(m, d, n)``, so a frame costs one call
into compiled code however many steps it takes.
"""
from __future__ import annotations

import time

import engine


class Runner:
    """Real-time pacing: ``advance()`` steps until ``d.time`` catches up with the wall clock."""

    def __init__(self, m, d, paused: bool = False, recorder=None, max_frame_seconds: float = 0.1):
        self.m, self.d = m, d
        self.paused = paused
        self.recorder = recorder
        self.max_frame_seconds = max_frame_seconds  # never try to catch up more than this per call
        self.steps = 0
        self.frames = 0
        self.sim_time = 0.0                           # simulated seconds advanced (across resets)
        self.start = time.perf_counter()
        self._last = self.start
        self._debt = 0.0                              # wall seconds not yet simulated

    def step_n(self, n: int) -> None:
        """Advance exactly ``n`` steps (recording each one when a recorder is attached)."""
        if n <= 0:
            return
        t0 = self.d.time
        if self.recorder is None:
            engine.step(self.m, self.d, n)
        else:
            for _ in range(n):
                engine.step(self.m, self.d)
                self.recorder.record(self.d)
        self.steps += n
        self.sim_time += self.d.time - t0

    def advance(self) -> int:
        """Step as many timesteps as the wall time elapsed since the last call; returns the count."""
        now = time.perf_counter()
        elapsed, self._last = now - self._last, now
        if self.paused:
            self._debt = 0.0
            return 0
        self._debt = min(self._debt + elapsed, self.max_frame_seconds)
        dt = float(self.m.opt.timestep)
        n = int(self._debt / dt + 1e-9)
        if n <= 0:
            return 0
        t0 = time.perf_counter()
        self.step_n(n)
        self._debt -= n * dt
        # if stepping took longer than the time it simulated, drop the backlog instead of spiralling
        if time.perf_counter() - t0 > n * dt:
            self._debt = 0.0
        return n

    def toggle_pause(self) -> None:
        self.paused = not self.paused
        self._last = time.perf_counter()
        self._debt = 0.0

    def reset(self) -> None:
        engine.reset_data(self.m, self.d)
        engine.forward(self.m, self.d)
        self._debt = 0.0

    def summary(self) -> str:
        wall = max(time.perf_counter() - self.start, 1e-9)
        return (f"studio: frames={self.frames} fps={self.frames / wall:.2f} "
                f"sim_time={self.sim_time:.4f} realtime_factor={self.sim_time / wall:.4f} "
                f"steps={self.steps}")

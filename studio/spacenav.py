"""Client of the spacenavd socket protocol (3D mice), optional at run time.

spacenavd serves a UNIX socket (``$SPNAV_SOCKET`` or ``/var/run/spnav.sock``). A client that sends
nothing gets the original protocol: every event is eight native int32 values,
``[0, x, y, z, rx, ry, rz, period]`` for motion and ``[1 | 2, button, ...]`` for a button press or
release. Axis values are deflections of about +-350 at full travel. ``SpaceNav.poll()`` reads
what has arrived without blocking and returns the latest 6-DOF deflection, scaled to [-1, 1].
"""
from __future__ import annotations

import os
import socket
import struct
import time

import numpy as np

DEFAULT_SOCKET = "/var/run/spnav.sock"
EVENT = struct.Struct("=8i")
MOTION, PRESS, RELEASE = 0, 1, 2
FULL_SCALE = 350.0
RETRY_SECONDS = 2.0


def socket_path() -> str:
    return os.environ.get("SPNAV_SOCKET", DEFAULT_SOCKET)


class SpaceNav:
    """Non-blocking spacenavd client; quietly does nothing while no daemon is running."""

    def __init__(self, path: str | None = None):
        self.path = path or socket_path()
        self.sock = None
        self.buffer = b""
        self.motion = np.zeros(6)          # x y z rx ry rz in [-1, 1]
        self.buttons: set[int] = set()
        self._next_try = 0.0
        self.connect()

    @property
    def connected(self) -> bool:
        return self.sock is not None

    def connect(self) -> bool:
        if self.sock is not None:
            return True
        now = time.monotonic()
        if now < self._next_try:
            return False
        self._next_try = now + RETRY_SECONDS
        if not os.path.exists(self.path):
            return False
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.path)
        except OSError:
            s.close()
            return False
        s.setblocking(False)
        self.sock = s
        return True

    def poll(self) -> np.ndarray:
        """Read every pending event; returns the current 6-DOF deflection (zeros when idle)."""
        if self.sock is None and not self.connect():
            return self.motion
        while True:
            try:
                chunk = self.sock.recv(4096)
            except BlockingIOError:
                break
            except OSError:
                self.close()
                break
            if not chunk:                      # the daemon went away
                self.close()
                break
            self.buffer += chunk
        n = len(self.buffer) // EVENT.size
        for i in range(n):
            ev = EVENT.unpack_from(self.buffer, i * EVENT.size)
            if ev[0] == MOTION:
                self.motion = np.clip(np.array(ev[1:7], float) / FULL_SCALE, -1.0, 1.0)
            elif ev[0] == PRESS:
                self.buttons.add(ev[1])
            elif ev[0] == RELEASE:
                self.buttons.discard(ev[1])
        self.buffer = self.buffer[n * EVENT.size:]
        return self.motion

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None
        self.motion = np.zeros(6)


def to_world(motion, view) -> tuple[np.ndarray, np.ndarray]:
    """Device axes (x right, y up, z towards the user) to world directions through the view."""
    right, up, back = view[0, :3], view[1, :3], view[2, :3]
    t = motion[0] * right + motion[1] * up + motion[2] * back
    r = motion[3] * right + motion[4] * up + motion[5] * back
    return t, r

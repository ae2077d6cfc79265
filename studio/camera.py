"""An orbit camera (z up) and the matrices it produces, framed from a model's geoms."""
from __future__ import annotations

import math

import numpy as np

PLANE = 0   # engine.GeomType.PLANE; kept local so that this module needs no engine import


def perspective(fovy_deg: float, aspect: float, znear: float, zfar: float) -> np.ndarray:
    f = 1.0 / math.tan(math.radians(fovy_deg) / 2.0)
    p = np.zeros((4, 4))
    p[0, 0] = f / aspect
    p[1, 1] = f
    p[2, 2] = (zfar + znear) / (znear - zfar)
    p[2, 3] = 2.0 * zfar * znear / (znear - zfar)
    p[3, 2] = -1.0
    return p


def look_at(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    eye, target, up = (np.asarray(a, float) for a in (eye, target, up))
    f = target - eye
    f /= np.linalg.norm(f)
    s = np.cross(f, up)
    if np.linalg.norm(s) < 1e-9:                       # looking straight up or down
        s = np.cross(f, (0.0, 1.0, 0.0))
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    v = np.eye(4)
    v[0, :3], v[1, :3], v[2, :3] = s, u, -f
    v[:3, 3] = -v[:3, :3] @ eye
    return v


class OrbitCamera:
    """Looks at ``target`` from ``distance`` at ``azimuth`` and ``elevation`` (degrees)."""

    def __init__(self, target=(0.0, 0.0, 0.0), distance=3.0, azimuth=-70.0, elevation=25.0,
                 fovy=45.0):
        self.target = np.array(target, dtype=float)
        self.distance = float(distance)
        self.azimuth = float(azimuth)
        self.elevation = float(elevation)
        self.fovy = float(fovy)

    @property
    def eye(self) -> np.ndarray:
        az, el = math.radians(self.azimuth), math.radians(self.elevation)
        d = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
        return self.target + self.distance * d

    def view(self) -> np.ndarray:
        return look_at(self.eye, self.target)

    def projection(self, aspect: float) -> np.ndarray:
        znear = max(0.01, 0.01 * self.distance)
        return perspective(self.fovy, aspect, znear, 200.0 * max(1.0, self.distance))

    # -- interaction ---------------------------------------------------------------------------
    def orbit(self, dx_pixels: float, dy_pixels: float) -> None:
        self.azimuth = (self.azimuth - 0.3 * dx_pixels) % 360.0
        self.elevation = float(np.clip(self.elevation - 0.3 * dy_pixels, -89.0, 89.0))

    def zoom(self, steps: float) -> None:
        self.distance = float(np.clip(self.distance * 0.9 ** steps, 0.05, 500.0))

    def pan(self, dx_pixels: float, dy_pixels: float, viewport_height: float) -> None:
        v = self.view()
        right, up = v[0, :3], v[1, :3]
        scale = 2.0 * self.distance * math.tan(math.radians(self.fovy) / 2.0) / max(viewport_height, 1)
        self.target -= scale * (dx_pixels * right + dy_pixels * up)

    # -- framing -------------------------------------------------------------------------------
    def frame(self, geom_xpos, geom_type, geom_size, geom_rbound=None) -> None:
        """Aim at the bounding box of the non-plane geoms and back off until it fits."""
        pos = np.asarray(geom_xpos, float).reshape(-1, 3)
        gtype = np.asarray(geom_type).reshape(-1)
        keep = gtype != PLANE
        if not np.any(keep):
            self.target[:] = 0.0
            self.distance = 5.0
            return
        size = np.asarray(geom_size, float).reshape(-1, 3)[keep]
        rad = size.max(axis=1)
        if geom_rbound is not None:
            rb = np.asarray(geom_rbound, float).reshape(-1)[keep]
            rad = np.where(rb > 0, rb, rad)
        lo = (pos[keep] - rad[:, None]).min(axis=0)
        hi = (pos[keep] + rad[:, None]).max(axis=0)
        self.target = 0.5 * (lo + hi)
        radius = max(0.5 * float(np.linalg.norm(hi - lo)), 0.1)
        self.distance = 0.8 * radius / math.sin(math.radians(self.fovy) / 2.0)

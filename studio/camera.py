"""The free camera (MuJoCo's conventions), its matrices, and the model statistic that frames it.

``OrbitCamera`` is MuJoCo's free camera: it looks at ``lookat`` from ``distance``, its viewing
direction given by ``azimuth`` and ``elevation`` in degrees (elevation < 0 looks down), so the
numbers a MuJoCo user knows (``<visual><global azimuth elevation fovy>``) mean the same here.
``model_statistic`` is MuJoCo's ``stat.center`` / ``stat.extent`` (engine_setconst.c setStat: the
bounding box of the bodies, joint anchors, sites and geoms at qpos0, the extent at least twice
the mean body size), overridden by ``<statistic center extent>``; ``frame`` places the camera
as ``mjv_defaultFreeCamera`` does (lookat = center, distance = 1.5 extent), farther back when
the visible view is narrower than it is tall.
"""
from __future__ import annotations

import math

import numpy as np

PLANE, HFIELD = 0, 1      # engine.GeomType values; kept local: this module needs no engine import
DEFAULT_AZIMUTH, DEFAULT_ELEVATION, DEFAULT_FOVY = 90.0, -45.0, 45.0   # MuJoCo's vis.global


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


def _box(lo, hi, pos, radius=0.0):
    pos = np.asarray(pos, float).reshape(-1, 3)
    if pos.size:
        r = np.broadcast_to(np.asarray(radius, float), (pos.shape[0],))[:, None]
        np.minimum(lo, (pos - r).min(axis=0), out=lo)
        np.maximum(hi, (pos + r).max(axis=0), out=hi)


def model_statistic(m, d) -> tuple[np.ndarray, float]:
    """(center, extent) of the model as MuJoCo's setStat computes them from ``d`` (kinematics
    at qpos0), then ``<statistic center=... extent=...>`` where the model gives them."""
    lo, hi = np.full(3, 1e10), np.full(3, -1e10)
    _box(lo, hi, np.asarray(d.xpos)[1:])
    _box(lo, hi, np.asarray(d.xipos)[1:])
    _box(lo, hi, d.xanchor)
    _box(lo, hi, d.site_xpos)
    gtype = np.asarray(m.geom_type).reshape(-1)
    size = np.asarray(m.geom_size, float).reshape(-1, 3)
    rb = np.asarray(m.geom_rbound, float).reshape(-1).copy()
    for g in np.nonzero(rb <= 0)[0]:                    # planes and height fields: a tenth
        if gtype[g] == PLANE:
            rb[g] = 0.1 * max(size[g, 0], size[g, 1]) if size[g, 0] or size[g, 1] else 0.01
        elif gtype[g] == HFIELD:
            rb[g] = 0.1 * float(np.max(m.hfield_size[int(m.geom_dataid[g])]))
    _box(lo, hi, d.geom_xpos, rb)
    center = 0.5 * (lo + hi) if np.all(hi >= lo) else np.zeros(3)
    extent = max(1e-5, float(np.max(hi - lo))) if hi[0] > lo[0] else 2.0
    # body sizes: the largest com-anchor and com-geom (plus rbound) distances
    body = np.zeros(m.nbody)
    xipos = np.asarray(d.xipos)
    for j in range(m.njnt):
        for b in (int(m.jnt_bodyid[j]), int(m.body_parentid[int(m.jnt_bodyid[j])])):
            body[b] = max(body[b], float(np.linalg.norm(xipos[b] - d.xanchor[j])))
    body[0] = 0.0
    gb = np.asarray(m.geom_bodyid).reshape(-1)
    for g in np.nonzero((np.asarray(m.geom_rbound) > 0) & (gb > 0))[0]:
        b = gb[g]
        body[b] = max(body[b], m.geom_rbound[g] + float(np.linalg.norm(xipos[b] - d.geom_xpos[g])))
    if m.nbody > 1:
        extent = max(extent, 2.0 * float(np.mean(np.maximum(body[1:], 1e-5))))
    stat = getattr(m, "statistic", None) or {}
    if "center" in stat:
        center = np.asarray(stat["center"], float)
    if "extent" in stat:
        extent = float(stat["extent"])
    return center, extent


def global_view(m) -> tuple[float, float, float]:
    """(azimuth, elevation, fovy) of the model's ``<visual><global>`` (MuJoCo's defaults)."""
    g = (getattr(m, "visual", None) or {}).get("global", {})

    def num(key, default):
        try:
            return float(g.get(key, default))
        except (TypeError, ValueError):
            return default
    return num("azimuth", DEFAULT_AZIMUTH), num("elevation", DEFAULT_ELEVATION), \
        num("fovy", DEFAULT_FOVY)


class OrbitCamera:
    """MuJoCo's free camera: looks at ``lookat`` along (azimuth, elevation) from ``distance``."""

    def __init__(self, lookat=(0.0, 0.0, 0.0), distance=3.0, azimuth=DEFAULT_AZIMUTH,
                 elevation=DEFAULT_ELEVATION, fovy=DEFAULT_FOVY, extent=1.0):
        self.lookat = np.array(lookat, dtype=float)
        self.distance = float(distance)
        self.azimuth = float(azimuth)
        self.elevation = float(elevation)
        self.fovy = float(fovy)
        self.extent = float(extent)              # the model's stat.extent: near and far planes

    @property
    def forward(self) -> np.ndarray:
        az, el = math.radians(self.azimuth), math.radians(self.elevation)
        return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])

    @property
    def eye(self) -> np.ndarray:
        return self.lookat - self.distance * self.forward

    def view(self) -> np.ndarray:
        return look_at(self.eye, self.lookat)

    def clip_planes(self) -> tuple[float, float]:
        """MuJoCo's znear = 0.01 extent and zfar = 50 extent, widened to keep the model in
        view when the camera is far away."""
        near = 0.01 * self.extent
        far = max(50.0 * self.extent, 2.0 * self.distance + 10.0 * self.extent)
        return near, far

    def projection(self, aspect: float) -> np.ndarray:
        return perspective(self.fovy, aspect, *self.clip_planes())

    # -- interaction ---------------------------------------------------------------------------
    def orbit(self, dx_pixels: float, dy_pixels: float) -> None:
        """Drag right turns the view left (the scene follows the mouse), drag up looks down."""
        self.azimuth = (self.azimuth - 0.3 * dx_pixels) % 360.0
        self.elevation = float(np.clip(self.elevation - 0.3 * dy_pixels, -89.0, 89.0))

    def zoom(self, steps: float) -> None:
        lo, hi = 0.01 * self.extent, 100.0 * self.extent
        self.distance = float(np.clip(self.distance * 0.9 ** steps, lo, max(hi, lo)))

    def pan(self, dx_pixels: float, dy_pixels: float, viewport_height: float) -> None:
        v = self.view()
        right, up = v[0, :3], v[1, :3]
        scale = 2.0 * self.distance * math.tan(math.radians(self.fovy) / 2.0) \
            / max(viewport_height, 1)
        self.lookat -= scale * (dx_pixels * right + dy_pixels * up)

    # -- framing -------------------------------------------------------------------------------
    def frame(self, center, extent, aspect: float = 16.0 / 9.0) -> None:
        """mjv_defaultFreeCamera: look at ``center`` from 1.5 ``extent``; a view narrower than
        it is tall (``aspect`` = width / height < 1) backs off until the model fits across."""
        self.lookat = np.array(center, dtype=float)
        self.extent = float(extent)
        self.distance = 1.5 * self.extent / min(max(float(aspect), 1e-3), 1.0)

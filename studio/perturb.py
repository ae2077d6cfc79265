"""Selection by ray casting and perturbation of the selected body through a virtual spring.

``pick`` casts the ray under a pixel with ``engine.ray``. A ``Perturbation`` holds the grabbed
point (in the body frame) and its target pose, both set by the UI thread; its ``apply(m, d)``
runs in the simulation thread before every step and writes a critically damped spring force and
torque to ``d.xfrc_applied`` (world frame, at the body's centre of mass, as fwd_acceleration
reads it). The spring acts through the operational-space inertia at the grabbed point
(``(J M^-1 J')^-1``), so a light finger and a heavy torso answer the drag alike. While paused,
``move_pose`` moves the body itself (mocap pose, or the qpos of its free joint).
"""
from __future__ import annotations

import math
import time

import numpy as np

import engine

FREE = 0
SPRING_PERIOD = 0.25          # seconds: the period of the undamped spring
INERTIA_REFRESH = 0.05        # seconds of wall time between recomputations of the spring inertia


def pixel_ray(renderer, x, y, width, height):
    """World-space origin and unit direction of the ray through pixel (x, y), y measured up."""
    vp, eye = renderer.view_projection(width, height)
    inv = np.linalg.inv(vp)
    ndc = np.array([2.0 * x / width - 1.0, 2.0 * y / height - 1.0])
    near = inv @ np.array([ndc[0], ndc[1], -1.0, 1.0])
    far = inv @ np.array([ndc[0], ndc[1], 1.0, 1.0])
    near, far = near[:3] / near[3], far[:3] / far[3]
    direction = far - near
    return near, direction / np.linalg.norm(direction)


def pick(runner, renderer, x, y, width, height, geomgroup=None):
    """(bodyid, geomid, world point) under pixel (x, y), or (-1, -1, None) for nothing/world."""
    from engine.ray import ray
    pnt, vec = pixel_ray(renderer, x, y, width, height)
    with runner.lock:
        gid, dist = ray(runner.m, runner.d, pnt, vec, geomgroup=geomgroup)
    if gid < 0:
        return -1, -1, None
    return int(runner.m.geom_bodyid[gid]), gid, pnt + dist * vec


def _body_chain_dofs(m, body):
    dofs = []
    b = body
    while b > 0:
        n = int(m.body_dofnum[b])
        if n:
            a = int(m.body_dofadr[b])
            dofs.extend(range(a, a + n))
        b = int(m.body_parentid[b])
    return np.array(sorted(dofs), dtype=int)


def point_jacobians(m, d, body, point):
    """Translational and rotational Jacobians (3, nv) of a point fixed to ``body``, from cdof."""
    jp = np.zeros((3, m.nv))
    jr = np.zeros((3, m.nv))
    dofs = _body_chain_dofs(m, body)
    if dofs.size == 0:
        return jp, jr
    root = int(m.body_rootid[body])
    offset = np.asarray(point) - d.subtree_com[root]
    cd = d.cdof[dofs]
    jr[:, dofs] = cd[:, :3].T
    jp[:, dofs] = (cd[:, 3:] + np.cross(cd[:, :3], offset)).T
    return jp, jr


def quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def axis_angle_quat(axis, angle):
    axis = np.asarray(axis, float)
    n = np.linalg.norm(axis)
    if n < 1e-12 or angle == 0.0:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis / n])


def quat_to_rotvec(q):
    q = np.asarray(q, float)
    if q[0] < 0:
        q = -q
    s = np.linalg.norm(q[1:])
    if s < 1e-12:
        return np.zeros(3)
    return 2.0 * math.atan2(s, q[0]) * q[1:] / s


class Perturbation:
    """The grab of one body: target pose set by the UI, spring force applied by the sim thread."""

    def __init__(self, m, d, body, point_world, period=SPRING_PERIOD):
        self.m = m
        self.body = int(body)
        self.local = d.xmat[body].reshape(3, 3).T @ (np.asarray(point_world) - d.xpos[body])
        self.target_pos = np.array(point_world, float)
        self.target_quat = d.xquat[body].copy()
        self.active = False
        self.mode = None                      # "translate" or "rotate"
        self.omega = 2.0 * math.pi / period
        self._lam = None
        self._lam_at = -1.0
        self.extra_force = np.zeros(3)        # from a 3D mouse (world frame)
        self.extra_torque = np.zeros(3)

    # -- UI side ---------------------------------------------------------------------------------
    def grab_point(self, d):
        return d.xpos[self.body] + d.xmat[self.body].reshape(3, 3) @ self.local

    def translate(self, delta):
        self.target_pos = self.target_pos + np.asarray(delta, float)

    def rotate(self, axis, angle):
        self.target_quat = quat_mul(axis_angle_quat(axis, angle), self.target_quat)

    # -- simulation side -------------------------------------------------------------------------
    def _inertias(self, m, d, point):
        now = time.perf_counter()
        if self._lam is None or now - self._lam_at > INERTIA_REFRESH:
            jp, jr = point_jacobians(m, d, self.body, point)
            M = engine.full_inertia(m, d)
            try:
                minv_jp = np.linalg.solve(M, jp.T)
                minv_jr = np.linalg.solve(M, jr.T)
                lam_p = np.linalg.pinv(jp @ minv_jp, rcond=1e-9)
                lam_r = np.linalg.pinv(jr @ minv_jr, rcond=1e-9)
            except np.linalg.LinAlgError:
                mass = float(m.body_subtreemass[self.body])
                lam_p = mass * np.eye(3)
                lam_r = np.diag(m.body_inertia[self.body])
            self._lam = (lam_p, lam_r)
            self._lam_at = now
        return self._lam

    def apply(self, m, d) -> None:
        """Write the spring's force and torque to d.xfrc_applied[body] (called before a step)."""
        b = self.body
        d.xfrc_applied[b] = 0.0
        if self.active or np.any(self.extra_force) or np.any(self.extra_torque):
            point = self.grab_point(d)
            force = np.array(self.extra_force, float)
            torque = np.array(self.extra_torque, float)
            if self.active:
                jp, jr = point_jacobians(m, d, b, point)
                vel = jp @ d.qvel
                angvel = jr @ d.qvel
                lam_p, lam_r = self._inertias(m, d, point)
                w = self.omega
                # critically damped spring: a = w^2 e - 2 w v, through the inertia at the point
                if self.mode == "translate":
                    err = self.target_pos - point
                    force += lam_p @ (w * w * err - 2.0 * w * vel)
                    torque += lam_r @ (-2.0 * w * angvel) * 0.2
                elif self.mode == "rotate":
                    q = d.xquat[b]
                    qerr = quat_mul(self.target_quat, q * np.array([1, -1, -1, -1]))
                    err = quat_to_rotvec(qerr)
                    torque += lam_r @ (w * w * err - 2.0 * w * angvel)
            # force at the grabbed point -> force and torque at the centre of mass
            d.xfrc_applied[b, :3] = force
            d.xfrc_applied[b, 3:] = torque + np.cross(point - d.xipos[b], force)

    def release(self, m, d) -> None:
        d.xfrc_applied[self.body] = 0.0

    # -- paused: move the body itself ------------------------------------------------------------
    def move_pose(self, m, d) -> bool:
        """Put the body at the target pose (mocap or free joint); False if it cannot move freely."""
        b = self.body
        mocap = int(m.body_mocapid[b])
        point = self.grab_point(d)
        if mocap >= 0:
            if self.mode == "rotate":
                d.mocap_quat[mocap] = self.target_quat
            else:
                d.mocap_pos[mocap] += self.target_pos - point
            return True
        if int(m.body_jntnum[b]) >= 1 and int(m.jnt_type[m.body_jntadr[b]]) == FREE:
            a = int(m.jnt_qposadr[m.body_jntadr[b]])
            if self.mode == "rotate":
                # rotate about the grabbed point: keep it fixed in the world
                R_new = _quat2mat(self.target_quat)
                d.qpos[a + 3:a + 7] = self.target_quat / np.linalg.norm(self.target_quat)
                d.qpos[a:a + 3] = point - R_new @ self.local
            else:
                d.qpos[a:a + 3] += self.target_pos - point
            return True
        return False


def _quat2mat(q):
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])

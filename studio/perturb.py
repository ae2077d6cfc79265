"""Selection by ray casting and perturbation of the selected body through a virtual spring.

``pick`` casts the ray under a pixel with ``engine.ray``. A ``Perturbation`` holds the grabbed
point (in the body frame) and its target pose, both set by the UI thread; its ``apply(m, d)``
runs in the simulation thread before every step and writes a critically damped spring force and
torque to ``d.xfrc_applied`` (world frame, at the body's centre of mass, as fwd_acceleration
reads it). The spring acts through the operational-space inertia at the grabbed point
(``(J M^-1 J')^-1`` with ``J`` from ``engine.jac``), so a light finger and a heavy torso answer
the drag alike. A body welded to a floating body (no joint of its own, as a humanoid's head)
is pulled like any other: its Jacobian reaches the root's free joint, as MuJoCo's
mjv_applyPerturbForce on the selected body does. While paused, ``move_pose`` moves the body
itself: a mocap body's pose, the qpos of its own free joint, the hinge, slide and ball joints
between it and its root by damped least-squares steps (``ik_step``), or else the root's free
joint, carrying the whole tree rigidly (mjv_applyPerturbPose's "child of floating body"); a body
with none of these (welded to the world) cannot be moved (``movable``). The mode says what
follows the target: "translate" the grabbed point, "rotate" the body's orientation, "pose" both
(the 3D mouse while paused).
"""
from __future__ import annotations

import math
import time

import numpy as np

import engine
from engine import math as engine_math

FREE, BALL, SLIDE, HINGE = (int(t) for t in engine.JointType)
SPRING_PERIOD = 0.25          # seconds: the period of the undamped spring
INERTIA_REFRESH = 0.05        # seconds of wall time between recomputations of the spring inertia
IK_ITERATIONS = 20            # damped least-squares steps per paused drag event
IK_DAMPING = 1e-2             # lambda of the damped least squares (metres, radians)


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


def _free_joint(m, body) -> int:
    """The body's own free joint, or -1."""
    j = int(m.body_jntadr[body])
    return j if int(m.body_jntnum[body]) >= 1 and int(m.jnt_type[j]) == FREE else -1


def chain_joints(m, body) -> list[int]:
    """Hinge, slide and ball joints from ``body`` up to its root (the joints a paused drag
    moves when the body is neither a mocap body nor free)."""
    out = []
    b = body
    while b > 0:
        for j in range(int(m.body_jntadr[b]), int(m.body_jntadr[b]) + int(m.body_jntnum[b])):
            if int(m.jnt_type[j]) != FREE:
                out.append(j)
        b = int(m.body_parentid[b])
    return out


def root_free_joint(m, body) -> int:
    """The free joint of the root of ``body``'s tree (the body whose weld reaches the world),
    or -1."""
    return _free_joint(m, int(m.body_rootid[body]))


def movable(m, body) -> bool:
    """Whether a drag can move the body: mocap, free, joints up to its root, or a root that
    floats (a body welded to a floating body moves with it)."""
    return int(m.body_mocapid[body]) >= 0 or _free_joint(m, body) >= 0 \
        or bool(chain_joints(m, body)) or root_free_joint(m, body) >= 0


def point_jacobians(m, d, body, point):
    """Translational and rotational Jacobians (3, nv) of a point fixed to ``body``."""
    return engine.jac(m, d, point, body)


def quat_mul(a, b):
    """Hamilton product of two quaternions (w, x, y, z) as an array."""
    return np.array(engine_math.quat_mul(tuple(map(float, a)), tuple(map(float, b))))


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
        """Move the body to the target (see the module doc); False if it cannot move."""
        b = self.body
        quat = self.target_quat / np.linalg.norm(self.target_quat)
        if self.mode == "translate":
            quat = d.xquat[b] / np.linalg.norm(d.xquat[b])
        # the body's position that puts the grabbed point at the target (rotate: where it is)
        point = self.grab_point(d) if self.mode == "rotate" else self.target_pos
        pos = point - _quat2mat(quat) @ self.local
        mocap, free = int(m.body_mocapid[b]), _free_joint(m, b)
        if mocap >= 0:
            d.mocap_quat[mocap] = quat
            d.mocap_pos[mocap] += pos - d.xpos[b]
            return True
        if free >= 0:
            a = int(m.jnt_qposadr[free])
            d.qpos[a + 3:a + 7] = quat
            d.qpos[a:a + 3] += pos - d.xpos[b]
            return True
        joints = chain_joints(m, b)
        if joints:
            for _ in range(IK_ITERATIONS):
                if not self.ik_step(m, d, joints):
                    break
            return True
        root = root_free_joint(m, b)
        if root < 0:
            return False
        # the tree moves rigidly: root <- target * inv(body) * root (mjv_applyPerturbPose)
        a = int(m.jnt_qposadr[root])
        rot = _quat2mat(quat) @ _quat2mat(d.xquat[b]).T          # the body's rotation to target
        root_quat = quat_mul(quat, quat_mul(d.xquat[b] * [1, -1, -1, -1], d.qpos[a + 3:a + 7]))
        d.qpos[a:a + 3] = pos + rot @ (d.qpos[a:a + 3] - d.xpos[b])
        d.qpos[a + 3:a + 7] = root_quat / np.linalg.norm(root_quat)
        return True

    def ik_step(self, m, d, joints) -> bool:
        """One damped least-squares step of the chain's joints towards the target:
        dq = J' (J J' + lambda^2 I)^-1 e, with e the grabbed point's error (translate), the
        rotation vector to the target orientation (rotate), or both (pose); then forward
        kinematics. False once the error is negligible."""
        b = self.body
        point = self.grab_point(d)
        jp, jr = point_jacobians(m, d, b, point)
        rot_err = quat_to_rotvec(quat_mul(self.target_quat, d.xquat[b] * [1, -1, -1, -1]))
        rows, errs = [], []
        if self.mode in ("translate", "pose"):
            rows.append(jp)
            errs.append(self.target_pos - point)
        if self.mode in ("rotate", "pose"):
            rows.append(jr)
            errs.append(rot_err)
        J, e = np.vstack(rows), np.concatenate(errs)
        if np.linalg.norm(e) < 1e-9:
            return False
        ndof = {j: 3 if int(m.jnt_type[j]) == BALL else 1 for j in joints}
        dofs = np.concatenate([int(m.jnt_dofadr[j]) + np.arange(ndof[j]) for j in joints])
        Jc = J[:, dofs]
        dq = Jc.T @ np.linalg.solve(Jc @ Jc.T + IK_DAMPING ** 2 * np.eye(len(e)), e)
        step = np.zeros(m.nv)
        step[dofs] = dq
        for j in joints:
            qa, da = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
            if int(m.jnt_type[j]) == BALL:           # body-frame rotation of the ball's quaternion
                q = quat_mul(d.qpos[qa:qa + 4], axis_angle_quat(step[da:da + 3],
                                                                np.linalg.norm(step[da:da + 3])))
                d.qpos[qa:qa + 4] = q / np.linalg.norm(q)
            else:
                d.qpos[qa] += step[da]
                if m.jnt_limited[j]:
                    d.qpos[qa] = np.clip(d.qpos[qa], m.jnt_range[j, 0], m.jnt_range[j, 1])
        engine.forward(m, d)
        return True


def _quat2mat(q):
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])

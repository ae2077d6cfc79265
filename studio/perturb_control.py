"""The perturbation controller: turns mouse drags and the 3D mouse into ``studio.perturb``
springs and paused pose edits on the selected body.

Ctrl+right drag pulls the grabbed point, Ctrl+left drag turns the body; the spring
(``Perturbation.apply``) acts whenever the simulation runs, also after resuming a drag begun
while paused, and while paused each drag event moves the pose (``Perturbation.move_pose``). A
drag that cannot start (nothing selected, or a body welded to the world) says why in the status
line and keeps the mouse until the button is released: it never turns into a camera move.
"""
from __future__ import annotations

import math
import time

import numpy as np

SPACENAV_SPEED = 1.0     # while paused, full deflection: the model's size per second, 1 rad/s


class PerturbController:
    def __init__(self, app):
        self.app = app
        self.perturbation = None         # the mouse's Perturbation while a drag is on
        self.holding = None              # the mouse button of a Ctrl+drag (started or not)
        self._spacenav_pert = None
        self._spacenav_t = None          # time of the last poll while deflected

    @property
    def active(self) -> bool:
        return self.perturbation is not None and self.perturbation.active

    # -- mouse -----------------------------------------------------------------------------------
    def begin(self, x, y, mode, button=None) -> bool:
        """Ctrl+press at window point (x, y) (y up): grab the selected body under the mouse
        (else at its centre of mass); False, with the reason in the status line, if it cannot
        move. The button is held either way (``holding``)."""
        from .perturb import Perturbation, movable
        app = self.app
        self.holding = button if button is not None else mode
        b = app.ui.selected_body
        if b is None or b <= 0:
            app.ui.say("select a body first (double-click it), then Ctrl+drag it")
            return False
        if not movable(app.m, b):
            app.ui.say(f"{app.body_name(b)} is welded to the world: a drag cannot move it")
            return False
        body, _, point = app.pick(x, y)
        r = app.runner
        with r.lock:
            if body != b or point is None:
                point = r.d.xipos[b].copy()
            p = Perturbation(r.m, r.d, b, point)
        p.mode = mode
        p.active = True
        self.perturbation = p
        r.set_perturb(p.apply)           # the spring acts whenever the simulation runs
        return True

    def drag(self, dx, dy) -> None:
        p = self.perturbation
        if p is None or not p.active:
            return
        app = self.app
        cam = app.renderer.camera
        view = cam.view()
        right, up = view[0, :3], view[1, :3]
        if p.mode == "translate":
            dist = float(np.linalg.norm(p.target_pos - cam.eye))
            _, _, _, h = app.view_rect
            sy = app.fb_scale()[1]
            scale = 2.0 * dist * math.tan(math.radians(cam.fovy) / 2.0) / max(h / sy, 1)
            p.translate(scale * (dx * right + dy * up))
        else:
            if dx:
                p.rotate(up, 0.01 * dx)
            if dy:
                p.rotate(right, -0.01 * dy)
        if app.runner.paused:
            def move(m, d, p=p):
                p.move_pose(m, d)
            app.runner.submit(move)

    def end(self) -> None:
        self.holding = None
        p = self.perturbation
        if p is None:
            return
        p.active = False
        if not np.any(p.extra_force) and not np.any(p.extra_torque):
            self.app.runner.set_perturb(None, release=p.release)
        self.perturbation = None

    def spring_line(self, snap):
        """(grabbed point, target) of a translating drag, for the scene's spring."""
        p = self.perturbation
        if p is None or not p.active or p.mode != "translate":
            return None
        point = snap.xpos[p.body] + snap.xmat[p.body].reshape(3, 3) @ p.local
        return point, p.target_pos

    def reset(self) -> None:
        """A new model: forget the drags."""
        self.perturbation = self._spacenav_pert = None
        self.holding = None

    # -- 3D mouse --------------------------------------------------------------------------------
    def update_spacenav(self, spacenav) -> None:
        """3D mouse: a force and torque on the selected body proportional to the deflection;
        while paused, the deflection moves the body's pose."""
        from .perturb import Perturbation
        from .spacenav import to_world
        app = self.app
        motion = spacenav.poll()
        b = app.ui.selected_body
        p = self._spacenav_pert
        r = app.runner
        if p is not None and (p.body != b or not np.any(motion) or r.paused):
            p.extra_force[:] = 0.0
            p.extra_torque[:] = 0.0
            r.set_perturb(None, release=p.release)
            self._spacenav_pert = p = None
        now = time.perf_counter()
        dt = min(now - self._spacenav_t, 0.1) if self._spacenav_t is not None else 1.0 / 60.0
        self._spacenav_t = now if np.any(motion) else None
        if b is None or b <= 0 or not np.any(motion):
            return
        if self.active:
            return                              # the mouse drag has the body
        if r.paused:
            self._spacenav_move(b, motion, dt)
            return
        if p is None:
            with r.lock:
                p = Perturbation(r.m, r.d, b, r.d.xipos[b].copy())
            self._spacenav_pert = p
        t, rot = to_world(motion, app.renderer.camera.view())
        m = app.m
        weight = float(m.body_subtreemass[b]) * max(float(np.linalg.norm(m.opt.gravity)), 9.81)
        p.extra_force = 2.0 * weight * t
        p.extra_torque = 2.0 * weight * app.renderer.extent * 0.2 * rot
        r.set_perturb(p.apply)

    def _spacenav_move(self, b, motion, dt) -> None:
        """Paused: move the pose of body ``b`` (mocap, free, its joints or its floating root:
        move_pose) by the deflection times ``dt``."""
        from .perturb import Perturbation
        from .spacenav import to_world
        app = self.app
        t, rot = to_world(motion, app.renderer.camera.view())
        shift = SPACENAV_SPEED * app.renderer.extent * dt * t
        angle = SPACENAV_SPEED * dt * float(np.linalg.norm(rot))

        def move(m, d):
            p = Perturbation(m, d, b, d.xipos[b].copy())
            p.mode = "pose"
            p.translate(shift)
            p.rotate(rot, angle)
            p.move_pose(m, d)
        app.runner.submit(move)

"""ImPlot panel: chosen signals over the last seconds (joint positions and velocities, controls,
contact forces, energy), sampled from the runner's Snapshots once per frame; and, when switched
on, the live forward-vs-inverse consistency (studio.consistency: the inverse dynamics run on
every step, relative residuals of the recovered applied force and of the impulses, log scale).
The sensors chosen in the Sensors panel are sampled here too (signal "sensors") and drawn there."""
from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

import engine

from . import PANEL_PLOT, header, push_width_for_labels, track

SIGNALS = ["joint positions", "joint velocities", "controls", "contact forces", "energy"]
SENSORS = "sensors"                # the Sensors panel's signal, sampled with the others
CAPACITY = 600                     # samples kept per signal (about 10 s at 60 FPS)
DEFAULT_CHOSEN = 3                 # joints / actuators plotted until the user chooses
FREE, BALL = int(engine.JointType.FREE), int(engine.JointType.BALL)
QPOS_SUFFIXES = {FREE: ("x", "y", "z", "qw", "qx", "qy", "qz"), BALL: ("qw", "qx", "qy", "qz")}
QVEL_SUFFIXES = {FREE: ("vx", "vy", "vz", "wx", "wy", "wz"), BALL: ("wx", "wy", "wz")}


def _name(m, kind, i, fallback) -> str:
    names = m.names[kind]
    return names[i] if i < len(names) and names[i] else f"{fallback} {i}"


def joint_columns(m, j, velocity=False):
    """(indices into qpos or qvel, labels) of joint ``j``: its name, with a suffix per
    coordinate for free and ball joints."""
    t = int(m.jnt_type[j])
    name = _name(m, "joint", j, "joint")
    suffixes = (QVEL_SUFFIXES if velocity else QPOS_SUFFIXES).get(t)
    adr = int(m.jnt_dofadr[j] if velocity else m.jnt_qposadr[j])
    if suffixes is None:
        return [adr], [name]
    return list(range(adr, adr + len(suffixes))), [f"{name}.{s}" for s in suffixes]


class PlotState:
    """Ring buffers of the sampled signals and the chosen joints and actuators; owned by the UI,
    fed from Snapshots. Changing a choice restarts that signal's buffer."""

    def __init__(self):
        self.enabled = {"joint positions": True, "energy": True}
        self.joints = None                 # chosen joint ids (None: the first DEFAULT_CHOSEN)
        self.actuators = None              # chosen actuator ids
        self.sensors = []                  # chosen sensor ids (Sensors panel)
        self.sensor_filter = ""            # the Sensors panel's name filter
        self.t = np.zeros(CAPACITY)
        self.data = {}                     # signal -> (CAPACITY, columns)
        self.labels = {}                   # signal -> column labels
        self.fns = {}                      # signal -> values of a Snapshot
        self.n = 0
        self.last_time = None

    def clear(self):
        """Forget the samples."""
        self.n = 0
        self.data.clear()
        self.last_time = None

    def reset_choices(self):
        """A new model: the default joints and actuators again, no samples."""
        self.joints = self.actuators = None
        self.sensors = []
        self.enabled.pop(SENSORS, None)
        self.clear()

    def chosen_joints(self, m):
        """The chosen joints; by default the first hinge and slide joints (a free or ball
        joint's quaternion makes a busy default plot), else the first joint."""
        if self.joints is not None:
            return self.joints
        scalar = [j for j in range(m.njnt) if int(m.jnt_type[j]) not in (FREE, BALL)]
        return (scalar or list(range(min(m.njnt, 1))))[:DEFAULT_CHOSEN]

    def chosen_actuators(self, m):
        return list(range(min(m.nu, DEFAULT_CHOSEN))) if self.actuators is None else self.actuators

    def columns(self, m, name):
        """(function of a Snapshot -> values, labels) of a signal."""
        if name in ("joint positions", "joint velocities"):
            vel = name == "joint velocities"
            idx, labels = [], []
            for j in self.chosen_joints(m):
                i, lab = joint_columns(m, j, vel)
                idx += i
                labels += lab
            field = "qvel" if vel else "qpos"
            return (lambda snap: getattr(snap, field)[idx]), labels
        if name == "controls":
            idx = self.chosen_actuators(m)
            return (lambda snap: snap.ctrl[idx]), [_name(m, "actuator", i, "actuator") for i in idx]
        if name == SENSORS:
            from .sensors import sensor_columns
            idx, labels = [], []
            for i in self.sensors:
                k, lab = sensor_columns(m, i)
                idx += k
                labels += lab
            return (lambda snap: snap.sensordata[idx]), labels
        if name == "contact forces":
            def totals(snap):
                from ..scene import contact_force_parts
                normal, friction = contact_force_parts(snap)
                return np.array([np.linalg.norm(normal, axis=1).sum(),
                                 np.linalg.norm(friction, axis=1).sum()])
            return totals, ["normal (sum of |f|)", "friction (sum of |f|)"]
        return (lambda snap: np.array([snap.energy[0], snap.energy[1], snap.energy.sum()])), \
            ["potential", "kinetic", "total"]

    def sample(self, app):
        snap = app.runner.snapshot
        if self.last_time is not None and snap.time == self.last_time:
            return
        if self.last_time is not None and snap.time < self.last_time:
            self.clear()
        self.last_time = snap.time
        i = self.n % CAPACITY
        self.t[i] = snap.time
        for name in SIGNALS + [SENSORS]:
            if not self.enabled.get(name):
                continue
            buf = self.data.get(name)
            if buf is None:
                self.fns[name], self.labels[name] = self.columns(app.m, name)
                buf = self.data[name] = np.full((CAPACITY, len(self.labels[name])), np.nan)
            buf[i] = self.fns[name](snap)
        self.n += 1

    def restart(self, *names):
        """The columns of these signals changed: new buffers from the next sample."""
        for name in names:
            self.data.pop(name, None)

    def ordered(self, name):
        """(time, values) of the samples of ``name`` still in the buffer, oldest first."""
        k = min(self.n, CAPACITY)
        idx = (np.arange(self.n - k, self.n)) % CAPACITY
        return self.t[idx], self.data[name][idx]


def _choose(app, label, chosen, count, name_of) -> list | None:
    """A combo listing the joints or actuators with a checkbox each; the new choice, or None
    when unchanged (the widgets are tracked as ``label`` and ``label:name``)."""
    preview = ", ".join(name_of(i) for i in chosen[:3]) + (" ..." if len(chosen) > 3 else "")
    new = None
    opened = imgui.begin_combo(label, preview or "(none)")
    track(app, label)
    if opened:
        for i in range(count):
            changed, on = imgui.checkbox(f"{name_of(i)}##{label}{i}", i in chosen)
            track(app, f"{label}:{name_of(i)}")
            if changed:
                new = sorted(set(chosen) | {i}) if on else [c for c in chosen if c != i]
        imgui.end_combo()
    return new


def draw(app) -> None:
    st = app.plots
    m = app.m
    st.sample(app)
    if not header(app, "Plots"):
        return
    for name in SIGNALS:
        changed, v = imgui.checkbox(name, bool(st.enabled.get(name)))
        track(app, name)
        if changed:
            st.enabled[name] = v
            st.restart(name)
    push_width_for_labels(["joints", "actuators"])
    new = _choose(app, "joints", st.chosen_joints(m), m.njnt,
                  lambda j: _name(m, "joint", j, "joint"))
    if new is not None:
        st.joints = new
        st.restart("joint positions", "joint velocities")
    if m.nu:
        new = _choose(app, "actuators", st.chosen_actuators(m), m.nu,
                      lambda i: _name(m, "actuator", i, "actuator"))
        if new is not None:
            st.actuators = new
            st.restart("controls")
    imgui.pop_item_width()
    height = 150 * app.ui_scale
    draw_consistency(app, height)
    for name in SIGNALS:
        draw_signal(app, name, height)


def draw_signal(app, name, height) -> None:
    """The plot of one sampled signal over the buffer's time span (tracked as "plot:name")."""
    st = app.plots
    if not st.enabled.get(name) or name not in st.data or st.n < 2:
        return
    t, y = st.ordered(name)
    # at most about one sample per pixel column: the lines ImPlot builds cost per segment
    step = max(1, int(np.ceil(len(t) / max(imgui.get_content_region_avail().x, 1.0))))
    t, y = t[::-1][::step][::-1], y[::-1][::step][::-1]        # (keeps the newest sample)
    if implot.begin_plot(name, imgui.ImVec2(-1, height), PANEL_PLOT):
        implot.setup_axes("time (s)", "")
        implot.setup_axes_limits(float(t[0]), float(max(t[-1], t[0] + 1e-6)), 0, 1,
                                 imgui.Cond_.always)
        if np.isfinite(y).any():
            implot.setup_axis_limits(implot.ImAxis_.y1, float(np.nanmin(y)) - 1e-6,
                                     float(np.nanmax(y)) + 1e-6, imgui.Cond_.always)
        tt = np.ascontiguousarray(t)
        for k, lab in enumerate(st.labels[name]):
            implot.plot_line(lab, tt, np.ascontiguousarray(y[:, k]))
        implot.end_plot()
    track(app, "plot:" + name)


RESIDUAL_FLOOR = 1e-17             # zero residuals are drawn here on the log axis


def draw_consistency(app, height) -> None:
    """Checkbox and log-scale plot of the per-step inverse residuals (off by default)."""
    r = app.runner
    check = r.inverse_check
    changed, on = imgui.checkbox("forward vs inverse check", check is not None)
    if imgui.is_item_hovered():
        imgui.set_tooltip("Runs engine.inverse at each pre-step state with qacc = (v' - v)/h on a\n"
                          "copy of the state and plots the relative residuals of the recovered\n"
                          "applied force and of the impulses (forward vs inverse efc_force).\n"
                          "Meaningful with the one-stage integrators (SEMIIMPLICIT, EXPLICIT,\n"
                          "IMPLICIT, IMPLICITFAST).")
    if changed:
        r.set_inverse_check(on)
    if check is None or check.n < 2:
        return
    t, force, impulse = check.series()
    imgui.text(f"last step: force {force[-1]:.2e}   impulse {impulse[-1]:.2e}")
    if implot.begin_plot("forward vs inverse", imgui.ImVec2(-1, height), PANEL_PLOT):
        implot.setup_axes("time (s)", "relative residual")
        implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
        implot.setup_axes_limits(float(t[0]), float(max(t[-1], t[0] + 1e-6)), 1e-16, 1.0,
                                 imgui.Cond_.always)
        ys = np.maximum(np.nan_to_num(np.vstack([force, impulse]), nan=1.0), RESIDUAL_FLOOR)
        implot.setup_axis_limits(implot.ImAxis_.y1, max(float(ys.min()) / 3, RESIDUAL_FLOOR),
                                 max(float(ys.max()) * 3, 1e-12), imgui.Cond_.always)
        tt = np.ascontiguousarray(t)
        implot.plot_line("applied force", tt, np.ascontiguousarray(ys[0]))
        implot.plot_line("impulses", tt, np.ascontiguousarray(ys[1]))
        implot.end_plot()

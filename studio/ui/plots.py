"""ImPlot panel: chosen signals over the last seconds (joint positions and velocities, controls,
contact forces, energy), sampled from the runner's Snapshots once per frame; and, when switched
on, the live forward-vs-inverse consistency (studio.consistency: the inverse dynamics run on
every step, relative residuals of the recovered applied force and of the impulses, log scale)."""
from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from . import header

SIGNALS = ["joint positions", "joint velocities", "controls", "contact forces", "energy"]
CAPACITY = 600                     # samples kept per signal (about 10 s at 60 FPS)
MAX_LINES = 8


class PlotState:
    """Ring buffers of the sampled signals; owned by the UI, fed from Snapshots."""

    def __init__(self):
        self.enabled = {"joint positions": True, "energy": True}
        self.t = np.zeros(CAPACITY)
        self.data = {}
        self.n = 0
        self.last_time = None

    def clear(self):
        self.n = 0
        self.data.clear()
        self.last_time = None

    def values(self, app, name, snap):
        m = app.m
        if name == "joint positions":
            return snap.qpos[:MAX_LINES]
        if name == "joint velocities":
            return snap.qvel[:MAX_LINES]
        if name == "controls":
            return snap.ctrl[:MAX_LINES]
        if name == "contact forces":
            from ..scene import contact_forces
            f = contact_forces(snap)
            return np.array([np.linalg.norm(f, axis=1).sum() if len(f) else 0.0])
        if name == "energy":
            return np.array([snap.energy[0], snap.energy[1], snap.energy.sum()])
        _ = m
        return np.zeros(0)

    def sample(self, app):
        snap = app.runner.snapshot
        if self.last_time is not None and snap.time == self.last_time:
            return
        if self.last_time is not None and snap.time < self.last_time:
            self.clear()
        self.last_time = snap.time
        i = self.n % CAPACITY
        self.t[i] = snap.time
        for name in SIGNALS:
            if not self.enabled.get(name):
                continue
            v = np.asarray(self.values(app, name, snap), float)
            buf = self.data.get(name)
            if buf is None or buf.shape[1] != v.size:
                buf = self.data[name] = np.full((CAPACITY, v.size), np.nan)
            buf[i] = v
        self.n += 1

    def ordered(self, name):
        k = min(self.n, CAPACITY)
        idx = (np.arange(self.n - k, self.n)) % CAPACITY
        return self.t[idx], self.data[name][idx]


LABELS = {"energy": ["potential", "kinetic", "total"], "contact forces": ["sum |f|"]}


def draw(app) -> None:
    st = app.plots
    st.sample(app)
    if not header(app, "Plots"):
        return
    for name in SIGNALS:
        changed, v = imgui.checkbox(name, bool(st.enabled.get(name)))
        if changed:
            st.enabled[name] = v
            st.data.pop(name, None)
    height = 150 * app.ui_scale
    draw_consistency(app, height)
    for name in SIGNALS:
        if not st.enabled.get(name) or name not in st.data or st.n < 2:
            continue
        t, y = st.ordered(name)
        if implot.begin_plot(name, imgui.ImVec2(-1, height)):
            implot.setup_axes("time (s)", "")
            implot.setup_axes_limits(float(t[0]), float(max(t[-1], t[0] + 1e-6)), 0, 1,
                                     imgui.Cond_.always)
            implot.setup_axis_limits(implot.ImAxis_.y1, float(np.nanmin(y)) - 1e-6,
                                     float(np.nanmax(y)) + 1e-6, imgui.Cond_.always)
            labels = LABELS.get(name, [])
            for k in range(y.shape[1]):
                lab = labels[k] if k < len(labels) else f"[{k}]"
                implot.plot_line(lab, np.ascontiguousarray(t), np.ascontiguousarray(y[:, k]))
            implot.end_plot()


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
                          "Meaningful with the EXPLICIT and SEMIIMPLICIT integrators.")
    if changed:
        r.set_inverse_check(on)
    if check is None or check.n < 2:
        return
    t, force, impulse = check.series()
    imgui.text(f"last step: force {force[-1]:.2e}   impulse {impulse[-1]:.2e}")
    if implot.begin_plot("forward vs inverse", imgui.ImVec2(-1, height)):
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

"""Control panel: one slider per actuator within ctrlrange; edits are queued."""
from __future__ import annotations

from imgui_bundle import imgui


def set_ctrl(app, i, value) -> None:
    def apply(m, d):
        d.ctrl[i] = value
    app.runner.submit(apply)


def draw(app) -> None:
    m = app.m
    if not imgui.collapsing_header("Controls", imgui.TreeNodeFlags_.default_open):
        return
    if m.nu == 0:
        imgui.text_disabled("no actuators")
        return
    snap = app.runner.snapshot
    if imgui.button("zero all"):
        app.runner.submit(lambda m, d: d.ctrl.fill(0.0))
    names = m.names["actuator"]
    for i in range(m.nu):
        if m.actuator_ctrllimited[i]:
            lo, hi = float(m.actuator_ctrlrange[i, 0]), float(m.actuator_ctrlrange[i, 1])
        else:
            lo, hi = -1.0, 1.0
        label = names[i] if i < len(names) and names[i] else f"actuator {i}"
        changed, v = imgui.slider_float(f"{label}##u{i}", float(snap.ctrl[i]), lo, hi, "%.3f")
        if changed:
            set_ctrl(app, i, float(v))

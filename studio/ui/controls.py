"""Control panel: one slider per actuator within ctrlrange; edits are queued."""
from __future__ import annotations

from imgui_bundle import imgui

from . import header, push_width_for_labels


def set_ctrl(app, i, value) -> None:
    def apply(m, d):
        d.ctrl[i] = value
    app.runner.submit(apply)


def actuator_label(m, i) -> str:
    names = m.names["actuator"]
    return names[i] if i < len(names) and names[i] else f"actuator {i}"


def draw(app) -> None:
    m = app.m
    if not header(app, "Controls", True):
        return
    if m.nu == 0:
        imgui.text_disabled("no actuators")
        return
    snap = app.runner.snapshot
    if imgui.button("zero all"):
        app.runner.submit(lambda m, d: d.ctrl.fill(0.0))
    labels = [actuator_label(m, i) for i in range(m.nu)]
    push_width_for_labels(labels)
    for i, label in enumerate(labels):
        if m.actuator_ctrllimited[i]:
            lo, hi = float(m.actuator_ctrlrange[i, 0]), float(m.actuator_ctrlrange[i, 1])
        else:
            lo, hi = -1.0, 1.0
        changed, v = imgui.slider_float(f"{label}##u{i}", float(snap.ctrl[i]), lo, hi, "%.3f")
        if changed:
            set_ctrl(app, i, float(v))
    imgui.pop_item_width()

"""Joint panel: one slider per scalar joint (hinge, slide) within its range; edits are queued."""
from __future__ import annotations

import math

from imgui_bundle import imgui

from . import header, push_width_for_labels

HINGE, SLIDE = 3, 2


def set_joint(app, j, value) -> None:
    adr = int(app.m.jnt_qposadr[j])

    def apply(m, d):
        d.qpos[adr] = value
    app.runner.submit(apply)


def joint_label(m, j) -> str:
    names = m.names["joint"]
    return names[j] if j < len(names) and names[j] else f"joint {j}"


def draw(app) -> None:
    m = app.m
    if not header(app, "Joints"):
        return
    snap = app.runner.snapshot
    scalar = [j for j in range(m.njnt) if int(m.jnt_type[j]) in (HINGE, SLIDE)]
    if not scalar:
        imgui.text_disabled("no hinge or slide joints")
        return
    labels = [joint_label(m, j) for j in scalar]
    push_width_for_labels(labels)
    for j, label in zip(scalar, labels):
        if m.jnt_limited[j]:
            lo, hi = float(m.jnt_range[j, 0]), float(m.jnt_range[j, 1])
        else:
            lo, hi = (-math.pi, math.pi) if int(m.jnt_type[j]) == HINGE else (-1.0, 1.0)
        adr = int(m.jnt_qposadr[j])
        changed, v = imgui.slider_float(f"{label}##j{j}", float(snap.qpos[adr]), lo, hi, "%.3f")
        if changed:
            set_joint(app, j, float(v))
    imgui.pop_item_width()

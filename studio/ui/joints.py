"""Joint panel: one slider per scalar joint (hinge, slide) within its range; edits are queued."""
from __future__ import annotations

import math

from imgui_bundle import imgui

HINGE, SLIDE = 3, 2


def set_joint(app, j, value) -> None:
    adr = int(app.m.jnt_qposadr[j])

    def apply(m, d):
        d.qpos[adr] = value
    app.runner.submit(apply)


def draw(app) -> None:
    m = app.m
    if not imgui.collapsing_header("Joints"):
        return
    snap = app.runner.snapshot
    names = m.names["joint"]
    shown = 0
    for j in range(m.njnt):
        t = int(m.jnt_type[j])
        if t not in (HINGE, SLIDE):
            continue
        adr = int(m.jnt_qposadr[j])
        if m.jnt_limited[j]:
            lo, hi = float(m.jnt_range[j, 0]), float(m.jnt_range[j, 1])
        else:
            lo, hi = (-math.pi, math.pi) if t == HINGE else (-1.0, 1.0)
        label = names[j] if j < len(names) and names[j] else f"joint {j}"
        changed, v = imgui.slider_float(f"{label}##j{j}", float(snap.qpos[adr]), lo, hi, "%.3f")
        if changed:
            set_joint(app, j, float(v))
        shown += 1
    if shown == 0:
        imgui.text_disabled("no hinge or slide joints")

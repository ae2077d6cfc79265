"""Labels over the 3D view: the names of the bodies, geoms or sites (Rendering panel) drawn at
where they are, behind the panels (ImGui's background draw list)."""
from __future__ import annotations

import numpy as np
from imgui_bundle import imgui

from . import label

POSITIONS = {"body": "xpos", "geom": "geom_xpos", "site": "site_xpos"}
drawn: list[str] = []           # the labels of the last frame (for tests and scripts)


def draw(app, snap) -> None:
    drawn.clear()
    kind = app.ui.labels
    if kind not in POSITIONS:
        return
    pos = np.asarray(getattr(snap, POSITIONS[kind]), float).reshape(-1, 3)
    first = 1 if kind == "body" else 0
    if len(pos) <= first:
        return
    x0, y0, w, h = app.view_rect
    vp, _ = app.renderer.view_projection(w, h)
    clip = np.c_[pos[first:], np.ones(len(pos) - first)] @ vp.T
    front = clip[:, 3] > 1e-9
    ndc = clip[:, :2] / np.where(front, clip[:, 3], 1.0)[:, None]
    sx, sy = app.fb_scale()
    xs = (x0 + (ndc[:, 0] + 1) * 0.5 * w) / sx
    ys = app.window.height - (y0 + (ndc[:, 1] + 1) * 0.5 * h) / sy
    dl = imgui.get_background_draw_list()
    white, shade = imgui.get_color_u32((1, 1, 1, 1)), imgui.get_color_u32((0, 0, 0, 0.8))
    inside = front & (np.abs(ndc) <= 1).all(axis=1)
    for i in np.nonzero(inside)[0]:
        text = label(app.m, kind, int(i) + first)
        drawn.append(text)
        p = imgui.ImVec2(float(xs[i]) + 4, float(ys[i]) - 8)
        dl.add_text(imgui.ImVec2(p.x + 1, p.y + 1), shade, text)
        dl.add_text(p, white, text)

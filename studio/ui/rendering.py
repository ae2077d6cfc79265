"""Rendering panel: what to draw (each decoration a toggle), geom groups, camera choice."""
from __future__ import annotations

from imgui_bundle import imgui

TOGGLES = [("geoms", "geoms"), ("sites", "sites"), ("tendons", "tendons"),
           ("contact_points", "contact points"), ("contact_frames", "contact frames"),
           ("contact_forces", "contact forces"), ("joints", "joint axes"),
           ("com", "centres of mass"), ("inertia", "inertia boxes"),
           ("perturbation", "perturbation spring"), ("transparent", "transparent geoms"),
           ("shadows", "shadows")]


def camera_names(m) -> list[str]:
    names = ["free (orbit)"]
    cams = m.names.get("camera", [])
    for i in range(m.ncam):
        names.append(cams[i] if i < len(cams) and cams[i] else f"camera {i}")
    return names


def draw(app) -> None:
    if not imgui.collapsing_header("Rendering"):
        return
    opts = app.renderer.options
    for i, (attr, label) in enumerate(TOGGLES):
        changed, v = imgui.checkbox(label, getattr(opts, attr))
        if changed:
            setattr(opts, attr, v)
        if i % 2 == 0:
            imgui.same_line(170 * app.ui_scale)
    imgui.new_line()
    imgui.text("geom groups")
    for g in range(6):
        imgui.same_line()
        changed, v = imgui.checkbox(f"{g}##grp", opts.groups[g])
        if changed:
            opts.groups[g] = v
    changed, idx = imgui.combo("camera", app.camera_index + 1, camera_names(app.m))
    if changed:
        app.set_camera(idx - 1)
    changed, v = imgui.checkbox("track the selected body (T)", app.tracking)
    if changed:
        app.set_tracking(v)

"""Rendering panel: what to draw (each decoration a toggle), the look (shadows, reflections,
skybox, haze, fog, textures, wireframe), labels and frames, geom groups, the camera (Align,
the model's cameras, tracking), and the 3D view's render scale and antialiasing
(``studio.viewport``)."""
from __future__ import annotations

from imgui_bundle import imgui

from . import checkbox_grid, header, push_width_for_labels, track

TOGGLES = [("geoms", "geoms"), ("sites", "sites"), ("tendons", "tendons"),
           ("contact_points", "contact points"), ("contact_frames", "contact frames"),
           ("contact_forces", "contact forces"), ("joints", "joint axes"),
           ("com", "centres of mass"), ("inertia", "inertia boxes"),
           ("perturbation", "perturbation spring"), ("transparent", "transparent geoms"),
           ("shadows", "shadows"), ("reflections", "reflections"), ("skybox", "skybox"),
           ("haze", "haze"), ("fog", "fog"), ("textures", "textures"),
           ("cull_faces", "cull back faces")]
LABELS = ("none", "body", "geom", "site")
FRAMES = ("none", "body", "geom", "site", "world")


def camera_names(m) -> list[str]:
    names = ["free (orbit)"]
    cams = m.names.get("camera", [])
    for i in range(m.ncam):
        names.append(cams[i] if i < len(cams) and cams[i] else f"camera {i}")
    return names


MSAA_CHOICES = (0, 2, 4, 8)
FORCE_SCALE_MIN, FORCE_SCALE_MAX = 0.01, 100.0


def draw_force_scale(app) -> None:
    """Contact-force arrows: the colours of the normal and friction arrows and the length scale
    (log slider, a factor of the default: the model's weight about half the model's size)."""
    from ..scene import FRICTION_RGBA, NORMAL_RGBA, default_force_scale, model_weight
    imgui.text("contact forces:")
    imgui.same_line()
    imgui.text_colored(imgui.ImVec4(*NORMAL_RGBA), "normal")
    imgui.same_line()
    imgui.text_colored(imgui.ImVec4(*FRICTION_RGBA), "friction")
    imgui.set_next_item_width(150 * app.ui_scale)
    changed, v = imgui.slider_float("arrow scale", app.ui.force_scale, FORCE_SCALE_MIN,
                                    FORCE_SCALE_MAX, "%.3gx", imgui.SliderFlags_.logarithmic)
    track(app, "force_scale")
    if changed:
        app.ui.force_scale = min(max(float(v), FORCE_SCALE_MIN), FORCE_SCALE_MAX)
    if imgui.is_item_hovered():
        weight = model_weight(app.m)
        per_newton = app.ui.force_scale * default_force_scale(app.m, app.renderer.extent)
        imgui.set_tooltip(f"{per_newton * 1000:.3g} mm per N up to the model's weight "
                          f"({weight:.3g} N),\nlogarithmic above it (impacts stay readable).")


def set_render_scale(app, value) -> None:
    """None: auto; else clamped to [MIN_SCALE, MAX_SCALE]."""
    from ..viewport import MAX_SCALE, MIN_SCALE
    app.ui.render_scale_setting = None if value is None else min(max(float(value), MIN_SCALE),
                                                              MAX_SCALE)


def draw_quality(app) -> None:
    """Render scale of the 3D view (slider, or auto) and its multisampling."""
    from ..viewport import MAX_SCALE, MIN_SCALE, scaled_size
    auto = app.ui.render_scale_setting is None
    imgui.set_next_item_width(150 * app.ui_scale)
    imgui.begin_disabled(auto)
    changed, v = imgui.slider_float("##scale", app.render_scale, MIN_SCALE, MAX_SCALE, "%.2f")
    imgui.end_disabled()
    if changed and not auto:
        set_render_scale(app, v)
    imgui.same_line()
    changed, v = imgui.checkbox("auto##scale", auto)
    if changed:
        set_render_scale(app, None if v else app.render_scale)
    imgui.same_line()
    imgui.text("render scale")
    w, h = app.window.get_framebuffer_size()
    sw, sh = scaled_size(w, h, app.render_scale)
    gl = app.gl_renderer.split(" (")[0]
    imgui.text_disabled(f"3D view {sw}x{sh} of {w}x{h} ({gl})")
    if imgui.is_item_hovered():
        imgui.set_tooltip("auto: 0.5 with a software renderer (llvmpipe, softpipe, swrast), 1 "
                          "otherwise.\nScreenshots (Ctrl+P) and video are drawn at full "
                          "resolution.")
    choices = sorted(set(MSAA_CHOICES) | {app.ui.msaa})
    labels = [f"{n}x" if n else "off" for n in choices]
    imgui.set_next_item_width(150 * app.ui_scale)
    changed, idx = imgui.combo("multisampling", choices.index(app.ui.msaa), labels)
    if changed:
        app.ui.msaa = choices[idx]
    changed, v = imgui.checkbox("FXAA (smooth edges at the render scale)", app.ui.fxaa)
    track(app, "fxaa")
    if changed:
        app.ui.fxaa = v


def draw_tendon_reference(app) -> None:
    """Tendons are coloured from their own colour to red as their force (studio.scene.
    tendon_forces) reaches a reference: a log slider (default the model's weight) and, as a
    legend, the largest tendon force of the frame."""
    import numpy as np

    from ..scene import TENDON_RGBA_FULL, model_weight, tendon_forces
    m = app.m
    if m.ntendon == 0:
        return
    weight = model_weight(m)
    ref = weight if app.ui.tendon_reference is None else app.ui.tendon_reference
    imgui.set_next_item_width(150 * app.ui_scale)
    changed, v = imgui.slider_float("tendon red at", ref, 1e-3 * weight, 1e3 * weight, "%.3g N",
                                    imgui.SliderFlags_.logarithmic)
    if changed:
        app.ui.tendon_reference = float(v)
    f = np.abs(tendon_forces(m, app.runner.snapshot))
    k = int(np.argmax(f))
    name = m.names["tendon"][k] if k < len(m.names["tendon"]) and m.names["tendon"][k] else k
    imgui.text_colored(imgui.ImVec4(*TENDON_RGBA_FULL, min(1.0, 0.35 + f[k] / ref)),
                       f"largest tendon force {f[k]:.3g} N ({name})")


def draw(app) -> None:
    if not header(app, "Rendering"):
        return
    ui = app.ui
    if imgui.button("Align (Ctrl+A)"):
        app.align_camera()
    track(app, "align")
    if imgui.is_item_hovered():
        imgui.set_tooltip("Frame the whole model in the 3D view (MuJoCo's free camera on load)")
    imgui.same_line()
    changed, v = imgui.checkbox("wireframe (W)", ui.wireframe)
    track(app, "wireframe")
    if changed:
        ui.wireframe = v
    opts = app.renderer.options
    for i, v in checkbox_grid([(label, getattr(opts, attr)) for attr, label in TOGGLES],
                              app=app, prefix="show:"):
        setattr(opts, TOGGLES[i][0], v)
    push_width_for_labels(["labels", "frames", "camera"])
    changed, idx = imgui.combo("labels", LABELS.index(ui.labels), list(LABELS))
    track(app, "labels")
    if changed:
        ui.labels = LABELS[idx]
    changed, idx = imgui.combo("frames", FRAMES.index(ui.frames), list(FRAMES))
    track(app, "frames")
    if changed:
        ui.frames = FRAMES[idx]
    changed, idx = imgui.combo("camera", ui.camera_index + 1, camera_names(app.m))
    if changed:
        app.set_camera(idx - 1)
    imgui.pop_item_width()
    changed, v = imgui.checkbox("track the selected body (T)", ui.tracking)
    if changed:
        app.set_tracking(v)
    draw_force_scale(app)
    draw_tendon_reference(app)
    imgui.text("geom groups")
    for g in range(6):
        imgui.same_line()
        changed, v = imgui.checkbox(f"{g}##grp", opts.groups[g])
        if changed:
            opts.groups[g] = v
    draw_quality(app)

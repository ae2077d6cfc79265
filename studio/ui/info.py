"""Info overlay: time, FPS, real-time factor, step time, contacts, rows, solver statistics."""
from __future__ import annotations

from imgui_bundle import imgui


def lines(app) -> list[str]:
    r, snap = app.runner, app.runner.snapshot
    state = "paused" if r.paused else "running"
    return [
        f"time     {snap.time:9.4f} s {state}",
        f"fps      {app.fps:9.1f}",
        f"realtime {r.realtime_factor:9.3f} (speed {r.speed:.3g}x)",
        f"step     {r.step_seconds * 1e6:9.1f} us",
        f"ncon     {snap.ncon:9d}",
        f"nefc     {snap.nefc:9d}",
        f"solver   {int(snap.solver_niter[0]):9d} it",
        f"residual {float(snap.solver_residual[0]):9.3g}",
        f"energy   {float(snap.energy[0]):9.4g} pot",
        f"         {float(snap.energy[1]):9.4g} kin",
    ]


def draw(app) -> None:
    # no_inputs: the mouse reaches the 3D view through the overlay (picking, dragging)
    flags = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.always_auto_resize
             | imgui.WindowFlags_.no_focus_on_appearing | imgui.WindowFlags_.no_nav
             | imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_inputs)
    vp = imgui.get_main_viewport()
    pad = 10.0 * app.ui_scale
    left = vp.work_pos.x
    panel = getattr(app, "panel_rect", None)
    if panel is not None and panel[0] <= left + 0.5:     # bottom left of the 3D view, not the panel
        left = panel[2]
    imgui.set_next_window_pos(imgui.ImVec2(left + pad, vp.work_pos.y + vp.work_size.y - pad),
                              imgui.Cond_.always, imgui.ImVec2(0.0, 1.0))
    imgui.set_next_window_bg_alpha(0.55)
    if imgui.begin("info", None, flags)[0]:
        for ln in lines(app):
            imgui.text(ln)
        if app.runner.warning_message:
            imgui.text_colored(imgui.ImVec4(1.0, 0.45, 0.3, 1.0), "diverged: paused")
        if app.runner.error_message:
            imgui.text_colored(imgui.ImVec4(1.0, 0.45, 0.3, 1.0), "error: paused")
        if app.selected_body is not None and app.selected_body > 0:
            names = app.m.names["body"]
            b = app.selected_body
            imgui.text(f"selected  {names[b] if names[b] else f'body {b}'}")
    imgui.end()

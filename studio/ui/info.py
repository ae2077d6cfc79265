"""Info overlay at the bottom left of the 3D view: time, FPS, real-time factor, step time,
contacts, rows, solver statistics, energy, flowed into a few lines at most half the view's
width (the whole width of a small view, under 420 px high), so that it never hides much of it."""
from __future__ import annotations

from imgui_bundle import imgui

from . import label

SMALL_VIEW = 420            # pixels: below this view height the overlay is compact


def items(app) -> list[str]:
    r, snap = app.runner, app.runner.snapshot
    return [f"time {snap.time:.4f} s", "paused" if r.paused else "running",
            f"{app.fps:.1f} fps", f"realtime {r.realtime_factor:.3f} ({r.speed:.3g}x)",
            f"step {r.step_seconds * 1e6:.1f} us", f"ncon {snap.ncon}", f"nefc {snap.nefc}",
            f"solver {int(snap.solver_niter[0])} it",
            f"residual {float(snap.solver_residual[0]):.2g}",
            f"energy {float(snap.energy[0]):.4g} pot", f"{float(snap.energy[1]):.4g} kin"]


def lines(app, width=None) -> list[str]:
    """The items flowed into lines of at most ``width`` pixels (None: no limit, one line)."""
    out = []
    for item in items(app):
        if out and (width is None or imgui.calc_text_size(out[-1] + "   " + item).x <= width):
            out[-1] += "   " + item
        else:
            out.append(item)
    return out


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
    # at most half the view's width (the whole width in a small window), a few short lines;
    # the room for the text is the view's width less the margins and the window's own padding
    room = vp.work_size.x - left - 2 * pad - 2 * imgui.get_style().window_padding.x
    small = vp.work_size.y < SMALL_VIEW * app.ui_scale
    width = room if small else min(room, max(0.5 * room, 420 * app.ui_scale))
    imgui.set_next_window_pos(imgui.ImVec2(left + pad, vp.work_pos.y + vp.work_size.y - pad),
                              imgui.Cond_.always, imgui.ImVec2(0.0, 1.0))
    imgui.set_next_window_bg_alpha(0.55)
    # never wider than the view (a long item is clipped rather than overrun the window)
    imgui.set_next_window_size_constraints(
        imgui.ImVec2(0.0, 0.0),
        imgui.ImVec2(max(room + 2 * imgui.get_style().window_padding.x, 1.0), vp.work_size.y))
    if imgui.begin("info", None, flags)[0]:
        for ln in lines(app, width):
            imgui.text(ln)
        if app.runner.warning_message:
            imgui.text_colored(imgui.ImVec4(1.0, 0.45, 0.3, 1.0), "diverged: paused")
        if app.runner.error_message:
            imgui.text_colored(imgui.ImVec4(1.0, 0.45, 0.3, 1.0), "error: paused")
        b = app.ui.selected_body
        if b is not None and b > 0:
            imgui.text(f"selected  {label(app.m, 'body', b)}")
    imgui.end()

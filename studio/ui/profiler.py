"""Profiler panel (and the F2 window): time per pipeline stage (studio.profiler), the solver's
iterations and residual, and the time per step, over the last seconds."""
from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from . import PANEL_PLOT, header, track


def _plots(app, height) -> None:
    prof = app.profiler
    changed, on = imgui.checkbox("time the pipeline stages", prof.enabled)
    track(app, "profile_stages")
    if changed:
        prof.enabled = on
    if imgui.is_item_hovered():
        imgui.set_tooltip("A few times a second, a copy of the state is run through the\n"
                          "forward pipeline one compiled stage at a time and each is timed")
    st = prof.stage_times
    if prof.enabled and st is not None and st.n and prof.names:
        t, v = st.ordered()
        recent = np.nanmedian(v[-10:], axis=0) * 1e6
        total = float(np.nansum(recent))
        imgui.text(f"forward {total:.1f} us (median of the last samples)")
        if implot.begin_plot("stages (us)", imgui.ImVec2(-1, height), PANEL_PLOT):
            implot.setup_axes("", "us", implot.AxisFlags_.no_tick_labels,
                              implot.AxisFlags_.auto_fit)
            implot.setup_axis_ticks(implot.ImAxis_.x1, 0.0, float(len(recent) - 1), len(recent),
                                    prof.names)
            implot.plot_bars("time", np.ascontiguousarray(recent), 0.67)
            implot.end_plot()
        track(app, "plot:stages")
        for name, us in zip(prof.names, recent):
            imgui.text(f"{name:16s} {us:9.1f} us")
    t, v = prof.solver.ordered()
    if len(t) >= 2:
        tt = np.ascontiguousarray(t)
        lim = (float(t[0]), float(max(t[-1], t[0] + 1e-6)))
        if implot.begin_plot("solver iterations", imgui.ImVec2(-1, height), PANEL_PLOT):
            implot.setup_axes("time (s)", "")
            implot.setup_axes_limits(*lim, 0, 1, imgui.Cond_.always)
            implot.setup_axis(implot.ImAxis_.y1, "", implot.AxisFlags_.auto_fit)
            implot.plot_line("iterations", tt, np.ascontiguousarray(v[:, 0]))
            implot.end_plot()
        track(app, "plot:solver iterations")
        res = np.maximum(np.nan_to_num(v[:, 1], nan=1.0), 1e-17)
        if implot.begin_plot("solver residual", imgui.ImVec2(-1, height), PANEL_PLOT):
            implot.setup_axes("time (s)", "")
            implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
            implot.setup_axes_limits(*lim, float(res.min()) / 3, float(res.max()) * 3,
                                     imgui.Cond_.always)
            implot.plot_line("residual", tt, np.ascontiguousarray(res))
            implot.end_plot()
        ts, step = prof.step.ordered()
        if len(ts) >= 2 and implot.begin_plot("step time (us)", imgui.ImVec2(-1, height),
                                              PANEL_PLOT):
            implot.setup_axes("time (s)", "")
            implot.setup_axes_limits(*lim, 0, 1, imgui.Cond_.always)
            implot.setup_axis(implot.ImAxis_.y1, "", implot.AxisFlags_.auto_fit)
            implot.plot_line("step", np.ascontiguousarray(ts),
                             np.ascontiguousarray(step[:, 0] * 1e6))
            implot.end_plot()


def draw(app) -> None:
    if not header(app, "Profiler"):
        return
    if imgui.button("Open in a window (F2)"):
        app.ui.show_profiler = True
    if not app.ui.show_profiler:
        _plots(app, 120 * app.ui_scale)


def draw_window(app) -> None:
    if not app.ui.show_profiler:
        return
    vp = imgui.get_main_viewport()
    imgui.set_next_window_pos(imgui.ImVec2(vp.work_pos.x + vp.work_size.x - 10, vp.work_pos.y + 10),
                              imgui.Cond_.first_use_ever, imgui.ImVec2(1.0, 0.0))
    imgui.set_next_window_size(imgui.ImVec2(min(420 * app.ui_scale, vp.work_size.x * 0.4),
                                            min(640 * app.ui_scale, vp.work_size.y * 0.9)),
                               imgui.Cond_.first_use_ever)
    expanded, opened = imgui.begin("Profiler (F2)", True)
    if expanded:
        _plots(app, 120 * app.ui_scale)
    imgui.end()
    if not opened:
        app.ui.show_profiler = False

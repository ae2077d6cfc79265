"""Analysis panel: the inverse analysis of a recording (engine.analysis), shown with ImPlot.

Loads a recording (the one just made, a typed path or the file browser), runs
``engine.analysis.analyse`` in a background thread on a model of its own (loaded from the path
stored in the recording, else the studio's model file; never the simulated Model, whose options
the analysis edits) and shows: per signal the recorded (forward) and recovered (inverse) traces
(controls of the actuators, constraint forces per object row), the max/RMS error table, and an
export of the CSV files and PNG plots (``engine.analysis.write_outputs``). The inverse model is
chosen in the panel: the soft analytical inverse or a rigid-contact one (engine.rigid_inverse:
noslip, coulomb, convex), whose actuator and contact forces are plotted against the recorded
ones, with the torque chatter of both. All the numbers come from engine.analysis; this module
only runs it and draws.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import numpy as np
from imgui_bundle import imgui, implot

import engine
from engine.analysis import INVERSE_MODELS

from . import header, track
from .file_browser import FileBrowser

TABLE_ROWS = 200                     # error table rows shown (worst max_rel first)


class AnalysisState:
    """A recording being analysed or analysed: the worker thread and its result."""

    def __init__(self):
        self.path_text = ""
        self.thread = None
        self.started = 0.0
        self.message = ""
        self.error = ""
        self.result = None                 # engine.analysis.Analysis
        self.summary = None                # result.summary()
        self.signals = []                  # [(label, time, forward, inverse)]
        self.selected = 0
        self.export_status = ""
        self.browser = None
        self.reveal = False                # open the panel's header on the next frame
        self.plotted = None                # (label, t, recorded, recovered) drawn in the last frame
        self.inverse = "soft"              # one of INVERSE_MODELS: soft or a rigid one

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def start(self, path, fallback_model=None) -> None:
        """Analyse ``path`` in a background thread (ignored while one runs)."""
        if self.running:
            return
        self.path_text = str(path)
        self.error, self.export_status = "", ""
        self.result, self.summary, self.signals = None, None, []
        self.message = f"loading {path}"
        self.reveal = True
        self.started = time.perf_counter()
        self.thread = threading.Thread(target=self._work, args=(str(path), fallback_model),
                                       name="analysis", daemon=True)
        self.thread.start()

    def wait(self, timeout=None) -> bool:
        if self.thread is not None:
            self.thread.join(timeout)
        return not self.running

    def _work(self, path, fallback_model) -> None:
        from engine import analysis
        try:
            traj = engine.load_trajectory(path)
            model_path = getattr(traj, "model_path", None)
            if not model_path or not os.path.exists(model_path):
                model_path = fallback_model
            if not model_path:
                raise ValueError("the recording names no model file that exists here")
            self.message = f"analysing {len(traj)} steps with {os.path.basename(model_path)}"
            m = engine.load_model(model_path)
            a = analysis.analyse(traj, m, inverse_model=self.inverse)
            self.summary = a.summary()
            self.signals = signals_of(a)
            self.result = a
            self.message = (f"{self.summary.get('analysed', '?')} of {len(traj)} steps analysed "
                            f"({self.inverse} inverse) in "
                            f"{time.perf_counter() - self.started:.1f} s")
        except Exception as e:                    # shown in the panel, never raised in the UI
            self.error = f"{type(e).__name__}: {e}"
            self.message = ""

    def export(self, directory=None) -> list:
        """CSV files and PNG plots of the result into ``directory`` (default: beside the
        recording, ``<name>-analysis/``)."""
        from engine import analysis
        if self.result is None:
            return []
        directory = directory or str(Path(self.path_text).with_suffix("")) + "-analysis"
        try:
            paths = analysis.write_outputs(self.result, directory)
            self.export_status = f"wrote {len(paths)} files to {directory}"
        except Exception as e:
            paths = []
            self.export_status = f"export failed: {type(e).__name__}: {e}"
        return paths


def signals_of(a) -> list:
    """(label, time, recorded/forward, recovered/inverse) for every actuator whose control (or
    activation, or force) is recovered and every constraint-force signal."""
    out = []
    rigid = getattr(a, "inverse_model", "soft") != "soft"
    names = a.traj.names.get("actuator", []) if hasattr(a.traj, "names") else []
    for i, (kind, _) in enumerate(a.kinds):
        name = names[i] if i < len(names) and names[i] else f"actuator{i}"
        kind = "force" if rigid else kind          # a rigid model predicts forces
        ref, got = {"ctrl": (a.ctrl_recorded, a.ctrl_recovered),
                    "act": (a.act_recorded, a.act_recovered)}.get(
            kind, (a.force_recorded, a.force_recovered))
        out.append((f"{kind} {name}", np.asarray(a.time), ref[:, i], got[:, i]))
    for label, s in a.efc_signals.items():
        steps, fwd, inv = s.arrays()
        out.append((f"{'force' if rigid else 'impulse'} {label}", np.asarray(a.time)[steps], fwd,
                    inv))
    return out


def _plot(label, t, ref, got, height):
    """Plot the finite samples of a signal; returns the arrays drawn (t, recorded, recovered)."""
    ok = np.isfinite(ref) & np.isfinite(got)
    drawn = tuple(np.ascontiguousarray(a[ok], dtype=float) for a in (t, ref, got))
    if implot.begin_plot(label, imgui.ImVec2(-1, height)):
        implot.setup_axes("time (s)", "")
        # the legend beside the plot (below it), not over the data
        implot.setup_legend(implot.Location_.south, implot.LegendFlags_.outside
                            | implot.LegendFlags_.horizontal)
        if drawn[0].size:
            implot.plot_line("recorded / forward", drawn[0], drawn[1])
            implot.plot_line("recovered / inverse", drawn[0], drawn[2])
        implot.end_plot()
    return drawn


def _number(s, key) -> float:
    """A summary statistic; engine.analysis writes None where it is undefined (no samples, or
    max_rel of a signal whose reference is zero throughout)."""
    v = s.get(key)
    return np.nan if v is None else float(v)


def _badness(s) -> float:
    """Sort key, worst first: the relative error; a non-finite one is the worst; where it is
    undefined (zero reference), any absolute error is the worst and none is perfect."""
    rel, err = _number(s, "max_rel"), _number(s, "max_abs")
    if s.get("max_rel") is None:
        return 0.0 if not err or np.isnan(err) else np.inf
    return np.nan_to_num(rel, nan=np.inf)


def _cell(s, key) -> str:
    """A statistic as text: "n/a" where engine.analysis leaves it undefined (no samples, or
    the relative error of a signal whose reference is zero throughout)."""
    v = s.get(key)
    return "n/a" if v is None else f"{float(v):.3g}"


def _table(summary) -> None:
    sig = summary.get("signals", {})
    rows = sorted(sig.items(), key=lambda kv: -_badness(kv[1]))
    flags = (imgui.TableFlags_.borders | imgui.TableFlags_.row_bg | imgui.TableFlags_.scroll_y
             | imgui.TableFlags_.resizable)
    if imgui.begin_table("errors", 4, flags, imgui.ImVec2(0, 180)):
        imgui.table_setup_scroll_freeze(0, 1)
        imgui.table_setup_column("signal", imgui.TableColumnFlags_.width_stretch, 3.0)
        for h in ("max |err|", "RMS err", "max rel"):
            imgui.table_setup_column(h, imgui.TableColumnFlags_.width_stretch, 1.0)
        imgui.table_headers_row()
        for label, s in rows[:TABLE_ROWS]:
            imgui.table_next_row()
            imgui.table_set_column_index(0)
            imgui.text(label)
            if imgui.is_item_hovered():
                imgui.set_tooltip(label)
            for col, key in enumerate(("max_abs", "rms", "max_rel"), start=1):
                imgui.table_set_column_index(col)
                imgui.text(_cell(s, key))
                if key == "max_rel" and s.get(key) is None and imgui.is_item_hovered():
                    imgui.set_tooltip("undefined: the recorded signal is zero throughout")
        imgui.end_table()


def draw(app) -> None:
    st = app.analysis
    if st.reveal:
        imgui.set_next_item_open(True)
        st.reveal = False
    if not header(app, "Analysis"):
        return
    last = getattr(app, "last_recording", None)
    imgui.begin_disabled(st.running)
    imgui.set_next_item_width(150 * app.ui_scale)
    _, k = imgui.combo("inverse model", INVERSE_MODELS.index(st.inverse), list(INVERSE_MODELS))
    st.inverse = INVERSE_MODELS[k]
    imgui.end_disabled()
    track(app, "inverse_model")
    imgui.begin_disabled(st.running or not last)
    if imgui.button("Analyse last recording"):
        st.start(last, app.model_path)
    imgui.end_disabled()
    track(app, "analyse_last")
    imgui.same_line()
    imgui.begin_disabled(st.running)
    if imgui.button("Open recording..."):
        if st.browser is None:
            st.browser = FileBrowser(Path(last or app.model_path).parent, (".traj",),
                                     "Open recording", lambda p: st.start(p, app.model_path))
        st.browser.show()
    imgui.end_disabled()
    changed, st.path_text = imgui.input_text("recording", st.path_text,
                                             imgui.InputTextFlags_.enter_returns_true)
    if changed and st.path_text:
        st.start(st.path_text, app.model_path)
    if st.browser is not None:
        from . import file_browser
        file_browser.draw(app, st.browser)
    if st.running:
        # analyse() reports no progress to callers: an indeterminate bar with the elapsed time
        el = time.perf_counter() - st.started
        imgui.progress_bar(-1.0 * el, imgui.ImVec2(-1, 0), f"{st.message}  {el:.1f} s")
    elif st.message:
        imgui.text_wrapped(st.message)
    if st.error:
        imgui.text_colored(imgui.ImVec4(1.0, 0.45, 0.3, 1.0), st.error)
    if st.result is not None:
        imgui.text("results in the Analysis window")


def draw_window(app) -> None:
    """The result in its own window: signal selector, plot, error table, export."""
    st = app.analysis
    if st.result is None or not st.signals:
        return
    vp = imgui.get_main_viewport()
    imgui.set_next_window_pos(imgui.ImVec2(vp.work_pos.x + vp.work_size.x - 10, vp.work_pos.y + 10),
                              imgui.Cond_.first_use_ever, imgui.ImVec2(1.0, 0.0))
    imgui.set_next_window_size(imgui.ImVec2(min(560 * app.ui_scale, vp.work_size.x * 0.55), 0),
                               imgui.Cond_.first_use_ever)
    expanded, opened = imgui.begin(f"Analysis: {os.path.basename(st.path_text)}", True)
    if expanded:
        _results(app, st)
    imgui.end()
    if not opened:
        st.result, st.signals = None, []


def _results(app, st) -> None:
    st.selected = min(st.selected, len(st.signals) - 1)
    _, st.selected = imgui.combo("signal", st.selected, [s[0] for s in st.signals])
    label, t, ref, got = st.signals[st.selected]
    st.plotted = (label, *_plot(label, t, ref, got, 180 * app.ui_scale))
    chatter = st.summary.get("chatter")
    if chatter:
        imgui.text(f"torque chatter (sum |f_k - f_k-1|): recorded {chatter['recorded']['sum']:.4g}, "
                   f"{st.summary['inverse_model']} inverse {chatter['recovered']['sum']:.4g} "
                   f"(peaks {chatter['recorded']['peak']:.3g}, {chatter['recovered']['peak']:.3g})")
    _table(st.summary)
    if imgui.button("Export CSV + PNG"):
        st.export()
    if st.export_status:
        imgui.text_wrapped(st.export_status)

"""Figures of the inverse analysis (engine.analysis), drawn with matplotlib.

One panel per actuator (controls) or constraint object (impulses): the forward, recorded value
as a thick pale line and the inverse, recovered one dashed on top in the same colour, so both
show where they agree; time in seconds on x, the quantity and its unit on y, a grid, legends
outside the data. A panel whose values all stay within rounding of zero is drawn on a fixed
[-1, 1] scale, flat at zero. Written as PNG and SVG; no pyplot state is used (any thread, no
display).
"""
from __future__ import annotations

import math

import numpy as np

FORMATS = ("png", "svg")
PANEL_INCHES = (6.4, 2.5)
COLUMNS = 2
ZERO = 1e-9        # a panel within ZERO x (the figure's largest value, at least 1) is zero
FEW_POINTS = 60    # traces with fewer samples also get markers (short-lived contacts)
CONTROL_AXES = {"ctrl": "control (actuator input)", "act": "activation",
                "force": "force (actuation space)"}


def _new_figure(npanels, title, forward_label, inverse_label):
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    cols = max(1, min(COLUMNS, npanels))
    rows = max(1, math.ceil(npanels / cols))
    fig = Figure(figsize=(PANEL_INCHES[0] * cols, PANEL_INCHES[1] * rows + 1.0),
                 layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[npanels:]:
        fig.delaxes(ax)
    fig.suptitle(title)
    fig.legend(handles=[Line2D([], [], color="0.3", lw=3.0, alpha=0.45, label=forward_label),
                        Line2D([], [], color="0.3", lw=1.2, ls="--", label=inverse_label)],
               loc="outside lower center", ncols=2, frameon=False)
    return fig, list(axes[:npanels])


def _draw_panel(ax, title, traces, ylabel, x_range):
    """traces: [(time, forward, inverse, label)]; a legend of the labels right of the axes
    when there are several."""
    for c, (t, fwd, inv, label) in enumerate(traces):
        colour = f"C{c % 10}"
        marker = "o" if np.isfinite(fwd).sum() < FEW_POINTS else None
        ax.plot(t, fwd, color=colour, lw=3.0, alpha=0.45, marker=marker, ms=4,
                label=label or "forward", zorder=2)
        ax.plot(t, inv, color=colour, lw=1.2, ls="--", marker="x" if marker else None, ms=3,
                label=f"{label or 'inverse'} (inverse)", zorder=3)
    ax.set_title(title, loc="left", fontsize="medium")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(*x_range)
    ax.grid(True, alpha=0.35)
    ax.ticklabel_format(axis="y", useOffset=False)
    if len(traces) > 1:
        handles = [h for h in ax.get_lines() if not h.get_label().endswith("(inverse)")]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0.0, fontsize="small", frameon=False)


def _zero_panels(axes, values):
    """Draw panels whose values are rounding noise around zero on [-1, 1] (else their axis
    would magnify the noise)."""
    peaks = [float(np.nanmax(np.abs(v))) if np.isfinite(v).any() else 0.0 for v in values]
    scale = max(peaks + [1.0])
    for ax, peak in zip(axes, peaks):
        if peak <= ZERO * scale:
            ax.set_ylim(-1.0, 1.0)


def _x_range(time):
    t = np.asarray(time, float)
    t = t[np.isfinite(t)]
    if t.size == 0:
        return 0.0, 1.0
    lo, hi = float(t.min()), float(t.max())
    return (lo, hi) if hi > lo else (lo - 0.5, lo + 0.5)


def controls_figure(a):
    """One panel per actuator: the recorded control, activation or force (solid) and the
    one recovered by inverse dynamics (dashed)."""
    from .analysis import _name

    rigid = getattr(a, "inverse_model", "soft") != "soft"
    panels = []
    for i in range(a.m.nu):
        kind = "force" if rigid else a.kinds[i][0]      # a rigid model's prediction: forces
        ref, got = {"ctrl": (a.ctrl_recorded, a.ctrl_recovered),
                    "act": (a.act_recorded, a.act_recovered),
                    "force": (a.force_recorded, a.force_recovered)}[kind]
        panels.append((f"{kind} {_name(a.traj.names, 'actuator', i)}", CONTROL_AXES[kind],
                       [(a.time, ref[:, i], got[:, i], "")]))
    if not panels:
        panels = [("the model has no actuators", CONTROL_AXES["ctrl"], [])]
    title = "actuators: recorded and recovered by inverse dynamics"
    if rigid:
        ch = a.chatter
        title = (f"actuator forces: recorded and predicted by the {a.inverse_model} rigid-contact "
                 f"inverse; chatter (sum |f_k - f_k-1|) recorded {ch['recorded']['sum']:.4g}, "
                 f"predicted {ch['recovered']['sum']:.4g}")
    return _grid(panels, a.time, title, "recorded (forward)", "recovered by inverse dynamics")


def impulses_figure(a, max_panels=None):
    """The paper's Fig. 2: forward (solid) and inverse (dashed) constraint forces, one panel
    per friction object, limit, equality and contact (its rows overlaid), at most max_panels
    (default analysis.IMPULSE_PANELS) objects: those present in the most steps (the title
    says how many of how many; impulses.csv has them all)."""
    from . import analysis

    max_panels = analysis.IMPULSE_PANELS if max_panels is None else max_panels
    groups = {}
    for s in a.efc_signals.values():
        groups.setdefault(s.group, []).append(s)
    order = sorted(groups, key=lambda g: (-max(len(s.steps) for s in groups[g]), g))
    panels = []
    for g in order[:max_panels]:
        traces = []
        for s in groups[g]:
            ks, fwd, inv = s.arrays()
            y1 = np.full(len(a.time), np.nan)
            y2 = y1.copy()
            y1[ks], y2[ks] = fwd, inv
            traces.append((a.time, y1, y2, s.label[len(g):].strip()))
        panels.append((g, _force_axis({s.unit for s in groups[g]}), traces))
    if not panels:
        panels = [("no constraint rows in the recording", "force (N)", [])]
    title = "constraint forces: forward and inverse dynamics"
    if getattr(a, "inverse_model", "soft") != "soft":
        title = f"contact forces: forward dynamics and the {a.inverse_model} rigid-contact inverse"
    if len(order) > max_panels:
        title += (f"; the {max_panels} of {len(order)} objects present in the most steps "
                  f"(all in impulses.csv)")
    return _grid(panels, a.time, title, "forward dynamics", "inverse dynamics")


def _force_axis(units):
    names = {"N": "force (N)", "N m": "torque (N m)"}
    return " / ".join(names.get(u, u) for u in sorted(units)) or "force (N)"


def _grid(panels, time, title, forward_label, inverse_label):
    fig, axes = _new_figure(len(panels), title, forward_label, inverse_label)
    x_range = _x_range(time)
    values = []
    for ax, (ptitle, ylabel, traces) in zip(axes, panels):
        _draw_panel(ax, ptitle, traces, ylabel, x_range)
        values.append(np.concatenate([np.ravel(y) for _, f, i, _ in traces for y in (f, i)])
                      if traces else np.zeros(0))
    _zero_panels(axes, values)
    return fig


def save(fig, stem) -> list[str]:
    """Write the figure as stem.png and stem.svg; returns the paths."""
    paths = [f"{stem}.{ext}" for ext in FORMATS]
    for path in paths:
        fig.savefig(path, dpi=110)
    return paths

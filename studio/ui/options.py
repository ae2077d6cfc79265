"""Physics options panel: every field of m.opt, live (edits are queued to the simulation thread)."""
from __future__ import annotations

import numpy as np
from imgui_bundle import imgui
from scipy.optimize import brentq

from . import checkbox_grid, header, push_width_for_labels, track

import engine
from engine import constraint

INTEGRATORS = [e.name for e in engine.Integrator]
SOLVERS = [e.name for e in engine.Solver]
CONES = [e.name for e in engine.Cone]
STABILIZATIONS = [e.name for e in engine.Stabilization]
DISABLE_BITS = [e for e in engine.DisableBit]


def set_option(app, name, value) -> None:
    """The one path every option widget takes: queue ``m.opt.<name> = value``."""
    app.runner.set_option(name, value)


def predicted_penetration(opt) -> float:
    """Resting penetration x of a body on a contact of the global softness: the impedance
    d(x) of the option's epsilon and impedance shape (engine.constraint.impedance) makes the
    contact hold the weight where K d(x)^2 x = (1 - d(x)) g, K = 1 / (dw kappa)^2 (MuJoCo's
    law); with a constant epsilon, kappa^2 epsilon g / (1 + epsilon), the paper's."""
    g = float(np.linalg.norm(opt.gravity))
    imp = [float(v) for v in opt.impedance]
    soft = (opt.epsilon, opt.kappa, opt.rmin, *imp, 1.0)
    impedance = getattr(constraint.impedance, "py_func", constraint.impedance)
    d0, _, dw = impedance(soft, 0.0)
    k = 1.0 / (dw * opt.kappa) ** 2

    def excess(x):
        d = impedance(soft, x)[0]
        return k * d * d * x - (1.0 - d) * g
    dmin = min(d0, dw)
    hi = (1.0 - dmin) * g / (k * dmin * dmin)
    return brentq(excess, 0.0, hi) if hi > 0 else 0.0


def measured_penetration(m, snap, body) -> float | None:
    """Deepest penetration (-min contact_dist) among contacts of the body's geoms, None if none."""
    if body is None or body <= 0 or snap.ncon == 0:
        return None
    gb = np.asarray(m.geom_bodyid)
    mine = (gb[snap.contact_geom1] == body) | (gb[snap.contact_geom2] == body)
    if not np.any(mine):
        return None
    return float(-snap.contact_dist[mine].min())


def _enum_combo(app, label, name, enum_cls, names):
    cur = getattr(app.m.opt, name)
    members = list(enum_cls)
    idx = members.index(cur) if cur in members else 0
    changed, idx = imgui.combo(label, idx, names)
    if changed:
        set_option(app, name, int(members[idx]))


def _log_slider(app, label, name, lo, hi, fmt="%.3g"):
    v = float(getattr(app.m.opt, name))
    changed, v = imgui.slider_float(label, max(v, lo), lo, hi, fmt, imgui.SliderFlags_.logarithmic)
    if changed:
        set_option(app, name, float(v))


def _impedance_slider(app, label, k, lo, hi):
    """Element k of the global impedance shape (m.opt.impedance) on a log scale; the width at
    its lower end means 0 (a constant epsilon)."""
    imp = np.array(app.m.opt.impedance, float)
    changed, v = imgui.slider_float(label, max(float(imp[k]), lo), lo, hi, "%.3g",
                                    imgui.SliderFlags_.logarithmic)
    if changed:
        imp[k] = 0.0 if k == 1 and v <= lo else float(v)
        set_option(app, "impedance", imp)


LABELS = ("timestep", "integrator", "solver", "cone", "stabilization", "iterations",
          "tolerance", "noslip iterations", "noslip tolerance", "gravity", "epsilon",
          "epsilon at width", "impedance width", "kappa",
          "rmin", "impratio", "viscosity", "density", "wind")
# MuJoCo's enable flags: (name, state in this engine, explanation). "fwdinv" is the studio's
# live forward-vs-inverse check; the others are fixed by the engine.
ENABLE_FLAGS = (
    ("energy", True, "the energy (d.energy) is computed after every chunk of steps"),
    ("fwdinv", None, "compare the forward and the inverse dynamics at every step\n"
                     "(the live check of the Plots panel)"),
    ("invdiscrete", True, "the inverse dynamics is always discrete-time (README)"),
    ("override", False, "contact override parameters are not supported by this engine"),
    ("multiccd", False, "multiple-contact convex collision is not supported by this engine"),
    ("sleep", False, "island sleeping is not supported by this engine"),
)


def draw(app) -> None:
    if not header(app, "Physics options", True):
        return
    push_width_for_labels(LABELS)
    _draw(app)
    imgui.pop_item_width()


def _draw(app) -> None:
    m, opt = app.m, app.m.opt
    changed, v = imgui.input_float("timestep", float(opt.timestep), 0.0005, 0.001, "%.5f")
    if changed and v > 0:
        set_option(app, "timestep", float(v))
    _enum_combo(app, "integrator", "integrator", engine.Integrator, INTEGRATORS)
    _enum_combo(app, "solver", "solver", engine.Solver, SOLVERS)
    _enum_combo(app, "cone", "cone", engine.Cone, CONES)
    _enum_combo(app, "stabilization", "stabilization", engine.Stabilization, STABILIZATIONS)
    changed, v = imgui.slider_int("iterations", int(opt.iterations), 1, 1000)
    if changed:
        set_option(app, "iterations", int(v))
    _log_slider(app, "tolerance", "tolerance", 1e-12, 1e-2)
    changed, v = imgui.slider_int("noslip iterations", int(opt.noslip_iterations), 0, 100)
    if changed:
        set_option(app, "noslip_iterations", int(v))
    if imgui.is_item_hovered():
        imgui.set_tooltip("MuJoCo's noslip post-processing: sweeps over the friction rows\n"
                          "without regularisation, so that sticking contacts do not creep (0: off)")
    if opt.noslip_iterations > 0:
        _log_slider(app, "noslip tolerance", "noslip_tolerance", 1e-14, 1e-2)
    changed, g = imgui.input_float3("gravity", [float(x) for x in opt.gravity])
    if changed:
        set_option(app, "gravity", np.array(g, float))
    imgui.separator_text("constraint softness (Todorov 2014)")
    _log_slider(app, "epsilon", "epsilon", 1e-4, 10.0)
    if imgui.is_item_hovered():
        imgui.set_tooltip("impulse regularisation at zero violation (MuJoCo: solimp d0 =\n"
                          "1 / (1 + epsilon)) of the objects without their own")
    _impedance_slider(app, "epsilon at width", 0, 1e-4, 10.0)
    _impedance_slider(app, "impedance width", 1, 1e-5, 1.0)
    if imgui.is_item_hovered():
        imgui.set_tooltip("the violation over which epsilon runs to its value at width\n"
                          "(MuJoCo's solimp width; at the left end: constant epsilon)")
    _log_slider(app, "kappa", "kappa", 1e-3, 1.0)
    track(app, "kappa")
    _log_slider(app, "rmin", "rmin", 1e-9, 1e-1)
    _log_slider(app, "impratio", "impratio", 1e-2, 1e3)
    track(app, "impratio")
    if imgui.is_item_hovered():
        imgui.set_tooltip("ratio of the frictional to the normal impedance: divides the friction\n"
                          "regulariser of (22), as MuJoCo's impratio")
    imgui.text_wrapped(f"resting penetration: {predicted_penetration(opt) * 1000:.4g} mm "
                       "predicted")
    if imgui.is_item_hovered():
        imgui.set_tooltip("kappa^2 epsilon g / (1 + epsilon): a body resting on one contact\n"
                          "(Todorov 2014, section V)")
    meas = measured_penetration(m, app.runner.snapshot, app.ui.selected_body)
    if app.ui.selected_body is None or app.ui.selected_body <= 0:
        imgui.text_disabled("measured: select a body (double-click)")
    elif meas is None:
        imgui.text_disabled("measured: the selected body has no contact")
    else:
        imgui.text_wrapped(f"measured: {meas * 1000:.4g} mm (the selected body)")
    imgui.separator_text("medium")
    for name, lo, hi in (("viscosity", 0.0, 10.0), ("density", 0.0, 2000.0)):
        changed, v = imgui.slider_float(name, float(getattr(opt, name)), lo, hi, "%.4g")
        if changed:
            set_option(app, name, float(v))
    changed, w = imgui.input_float3("wind", [float(x) for x in opt.wind])
    if changed:
        set_option(app, "wind", np.array(w, float))
    imgui.separator_text("disable flags")
    flags = int(opt.disableflags)
    boxes = [(bit.name.lower(), bool(flags & int(bit))) for bit in DISABLE_BITS]
    for i, on in checkbox_grid(boxes, app=app, prefix="disable:"):
        bit = int(DISABLE_BITS[i])
        set_option(app, "disableflags", (flags | bit) if on else (flags & ~bit))
    imgui.separator_text("enable flags")
    draw_enable_flags(app)


def draw_enable_flags(app) -> None:
    r = app.runner
    values = [(r.inverse_check is not None) if state is None else state
              for _, state, _ in ENABLE_FLAGS]
    items = [(f"{name}##enable", v) for (name, _, _), v in zip(ENABLE_FLAGS, values)]
    fixed = [i for i, (_, state, _) in enumerate(ENABLE_FLAGS) if state is not None]
    for i, on in checkbox_grid(items, disabled=fixed, tooltips=[e[2] for e in ENABLE_FLAGS],
                               app=app, prefix="enable:"):
        if ENABLE_FLAGS[i][0] == "fwdinv":
            r.set_inverse_check(on)

"""Equality panel: enable or disable each equality constraint (m.eq_active0), queued."""
from __future__ import annotations

from imgui_bundle import imgui

import engine

from . import header


def set_active(app, i, on) -> None:
    def apply(m, d):
        m.eq_active0[i] = 1 if on else 0
    app.runner.submit(apply)


def draw(app) -> None:
    m = app.m
    if m.neq == 0 or not header(app, "Equality constraints"):
        return
    names = m.names["equality"]
    for i in range(m.neq):
        kind = engine.EqType(int(m.eq_type[i])).name.lower()
        label = names[i] if i < len(names) and names[i] else f"{kind} {i}"
        changed, on = imgui.checkbox(f"{label} ({kind})##eq{i}", bool(m.eq_active0[i]))
        if changed:
            set_active(app, i, on)

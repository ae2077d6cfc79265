"""ImGui panels of the studio, one module per panel.

Every panel has ``draw(app)``; it reads the runner's published Snapshot and the Model, and
changes the simulation only through ``app.runner.submit`` / ``app.runner.set_option`` (applied
by the simulation thread between steps). Panels never step physics.
"""
from __future__ import annotations


def track(app, name: str) -> None:
    """Keep where the last widget was drawn, ``app.widgets[name] = (x0, y0, x1, y1)`` in window
    coordinates (y down), so that scripts and tests can point the mouse at it."""
    from imgui_bundle import imgui
    a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    app.widgets[name] = (a.x, a.y, b.x, b.y)

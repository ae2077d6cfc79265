"""ImGui panels of the studio, one module per panel.

Every panel has ``draw(app)``; it reads the runner's published Snapshot and the Model, and
changes the simulation only through ``app.runner.submit`` / ``app.runner.set_option`` (applied
by the simulation thread between steps). Panels never step physics.
"""
from __future__ import annotations

from imgui_bundle import implot

# plots in the side panel: no mouse input (their axes follow the data every frame), so that the
# mouse wheel over a plot scrolls the panel instead of zooming the plot
PANEL_PLOT = implot.Flags_.no_inputs


def label(m, kind: str, i: int) -> str:
    """The name of object ``i`` of a kind (body, joint, geom, ...), or "kind i" if unnamed."""
    names = m.names.get(kind, [])
    return names[i] if 0 <= i < len(names) and names[i] else f"{kind} {i}"


def track(app, name: str) -> None:
    """Keep where the last widget was drawn, ``app.widgets[name] = (x0, y0, x1, y1)`` in window
    coordinates (y down), so that scripts and tests can point the mouse at it; when
    ``app.scroll_to`` names it, scroll its window to bring it into view."""
    from imgui_bundle import imgui
    if app.scroll_to == name:
        imgui.set_scroll_here_y(0.5)
        app.scroll_to = None
    a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    app.widgets[name] = (a.x, a.y, b.x, b.y)


def header(app, label: str, default_open: bool = False) -> bool:
    """A collapsing header of the side panel; ``app.open_panels`` lists headers to open on the
    next frame (``App.open_panel``)."""
    from imgui_bundle import imgui
    if label in app.open_panels:
        imgui.set_next_item_open(True)
        app.open_panels.discard(label)
    return imgui.collapsing_header(label, imgui.TreeNodeFlags_.default_open if default_open else 0)


def checkbox_grid(items, disabled=(), tooltips=None, app=None, prefix="") -> list:
    """Checkboxes ``(label, value)`` in as many equal columns as the widest label lets fit in
    the panel's width; returns ``[(index, new value)]`` of those clicked. The indices in
    ``disabled`` are drawn greyed (not clickable), ``tooltips[i]`` shown on hover; with ``app``
    each checkbox is tracked as ``prefix + label`` (``track``)."""
    from imgui_bundle import imgui
    style = imgui.get_style()
    widest = max(imgui.calc_text_size(label.split("##")[0]).x for label, _ in items) \
        + imgui.get_frame_height() + style.item_inner_spacing.x + style.item_spacing.x
    avail = imgui.get_content_region_avail().x
    ncol = max(1, min(len(items), int((avail + style.item_spacing.x) // widest)))
    x0 = imgui.get_cursor_pos_x()
    clicked = []
    for i, (label, value) in enumerate(items):
        if i % ncol:
            imgui.same_line(x0 + (i % ncol) * avail / ncol)
        imgui.begin_disabled(i in disabled)
        changed, value = imgui.checkbox(label, value)
        imgui.end_disabled()
        if app is not None:
            track(app, prefix + label)
        if tooltips and imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
            imgui.set_tooltip(tooltips[i])
        if changed:
            clicked.append((i, value))
    return clicked


def push_width_for_labels(labels, most: float = 0.5) -> None:
    """Set the width of the following widgets so that their labels (drawn on their right) fit
    in the panel: the available width less the widest label, the label taking at most
    ``most`` of it (longer labels are clipped). Pop with ``imgui.pop_item_width()``."""
    from imgui_bundle import imgui
    avail = imgui.get_content_region_avail().x
    widest = max([imgui.calc_text_size(str(label).split("##")[0]).x for label in labels] or [0.0])
    room = min(widest + imgui.get_style().item_inner_spacing.x, most * avail)
    imgui.push_item_width(max(avail - room, 1.0))

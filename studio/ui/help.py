"""F1 help overlay: every shortcut and mouse action."""
from __future__ import annotations

from imgui_bundle import imgui

SHORTCUTS = [
    ("F1", "show / hide this help"),
    ("Space", "run / pause"),
    ("Right arrow (paused)", "one step (at the newest history frame), else forward in history"),
    ("Left / Right arrows (paused)", "scrub the history ring buffer"),
    ("Backspace", "reset to the model's default state"),
    ("Ctrl+L", "reload the model file (keeps the state when sizes match)"),
    ("Ctrl+O", "open a model (file browser); or drop a file on the window"),
    ("Ctrl+P", "save a screenshot (PNG) of the 3D view in the output folder"),
    ("Ctrl+V", "start / stop recording an MP4 video of the viewport"),
    ("Ctrl+A", "align the camera: frame the whole model in the 3D view"),
    ("Ctrl+Q", "quit"),
    ("Tab", "show / hide the panels"),
    ("- / =", "slower / faster (speed 0.01x to 1x)"),
    ("Esc", "close the help, release the selection, back to the free camera (never quits)"),
    ("Double-click", "select the body under the mouse (double-click empty space: none)"),
    ("Ctrl+right drag", "pull the selected body (spring at the grabbed point)"),
    ("Ctrl+left drag", "rotate the selected body (paused: moves the pose directly)"),
    ("Left drag", "orbit the camera"),
    ("Right / middle drag", "pan the camera"),
    ("Scroll", "zoom"),
    ("T", "camera tracks the selected body (again: stop)"),
    ("C", "next camera (free orbit, then the model's cameras)"),
    ("W", "wireframe on / off"),
    ("F2", "profiler window"),
]


def draw(app) -> None:
    if not app.ui.show_help:
        return
    vp = imgui.get_main_viewport()
    imgui.set_next_window_pos(imgui.ImVec2(vp.work_pos.x + vp.work_size.x * 0.5,
                                           vp.work_pos.y + vp.work_size.y * 0.5),
                              imgui.Cond_.always, imgui.ImVec2(0.5, 0.5))
    imgui.set_next_window_bg_alpha(0.85)
    # a width that fits the window (the descriptions wrap), the height of the contents up to
    # the window's (then it scrolls)
    width = min(640 * app.ui_scale, 0.92 * vp.work_size.x)
    imgui.set_next_window_size_constraints(imgui.ImVec2(width, 0),
                                           imgui.ImVec2(width, 0.92 * vp.work_size.y))
    imgui.set_next_window_size(imgui.ImVec2(width, 0))
    expanded, opened = imgui.begin("Help (F1)", True, imgui.WindowFlags_.no_collapse)
    if expanded and imgui.begin_table("shortcuts", 2, imgui.TableFlags_.sizing_fixed_fit):
        imgui.table_setup_column("key", imgui.TableColumnFlags_.width_fixed)
        imgui.table_setup_column("action", imgui.TableColumnFlags_.width_stretch)
        for k, v in SHORTCUTS:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(k)
            imgui.table_next_column()
            imgui.text_wrapped(v)
        imgui.end_table()
    imgui.end()
    if not opened:
        app.ui.show_help = False

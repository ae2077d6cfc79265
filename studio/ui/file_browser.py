"""A small ImGui file browser for opening models (.xml, .urdf)."""
from __future__ import annotations

import os
from pathlib import Path

from imgui_bundle import imgui

EXTENSIONS = (".xml", ".urdf", ".mjcf")


class FileBrowser:
    def __init__(self, start: str | os.PathLike):
        p = Path(start)
        self.dir = (p if p.is_dir() else p.parent).resolve()
        self.open = False
        self.path_text = str(self.dir)

    def show(self, start=None):
        if start is not None:
            p = Path(start)
            self.dir = (p if p.is_dir() else p.parent).resolve()
        self.path_text = str(self.dir)
        self.open = True

    def entries(self):
        try:
            items = sorted(self.dir.iterdir(), key=lambda q: (not q.is_dir(), q.name.lower()))
        except OSError:
            return []
        return [q for q in items if not q.name.startswith(".")
                and (q.is_dir() or q.suffix.lower() in EXTENSIONS)]


def draw(app) -> None:
    fb = app.file_browser
    if not fb.open:
        return
    vp = imgui.get_main_viewport()
    imgui.set_next_window_size(imgui.ImVec2(520 * app.ui_scale, 420 * app.ui_scale),
                               imgui.Cond_.first_use_ever)
    imgui.set_next_window_pos(imgui.ImVec2(vp.work_pos.x + vp.work_size.x * 0.5,
                                           vp.work_pos.y + vp.work_size.y * 0.5),
                              imgui.Cond_.first_use_ever, imgui.ImVec2(0.5, 0.5))
    expanded, opened = imgui.begin("Open model", True)
    if expanded:
        changed, text = imgui.input_text("path", fb.path_text,
                                         imgui.InputTextFlags_.enter_returns_true)
        fb.path_text = text
        if changed:
            p = Path(text).expanduser()
            if p.is_dir():
                fb.dir = p.resolve()
            elif p.is_file():
                app.open_model(str(p))
                fb.open = False
        if imgui.button(".. (up)"):
            fb.dir = fb.dir.parent
            fb.path_text = str(fb.dir)
        imgui.begin_child("files", imgui.ImVec2(0, 0), imgui.ChildFlags_.borders)
        for q in fb.entries():
            label = q.name + ("/" if q.is_dir() else "")
            if imgui.selectable(label, False, imgui.SelectableFlags_.allow_double_click)[0]:
                if q.is_dir():
                    fb.dir = q.resolve()
                    fb.path_text = str(fb.dir)
                else:
                    app.open_model(str(q))
                    fb.open = False
        imgui.end_child()
    imgui.end()
    if not opened:
        fb.open = False

"""A small ImGui file browser: models (.xml, .urdf) by default, or any extensions with a callback
(the Analysis panel opens recordings with it); in save mode a typed name that does not exist yet
is picked too (Save as MJCF)."""
from __future__ import annotations

import os
from pathlib import Path

from imgui_bundle import imgui

from . import track

EXTENSIONS = (".xml", ".urdf", ".mjcf")


class FileBrowser:
    def __init__(self, start: str | os.PathLike, extensions=EXTENSIONS, title="Open model",
                 on_pick=None, save=False):
        p = Path(start)
        self.dir = (p if p.is_dir() else p.parent).resolve()
        self.open = False
        self.path_text = str(self.dir)
        self.extensions = tuple(extensions)
        self.title = title
        self.on_pick = on_pick                   # callable(path); None: open it as a model
        self.save = save                         # pick new file names (and show a Save button)

    def pick(self, app, path) -> None:
        self.open = False
        if self.on_pick is None:
            app.open_model(str(path))
        else:
            self.on_pick(str(path))

    def show(self, start=None):
        """Open the browser at `start` (a folder; in save mode, a file name to propose)."""
        if start is not None:
            p = Path(start)
            self.dir = (p if p.is_dir() else p.parent).resolve()
        self.path_text = str(start) if self.save and start is not None and \
            not Path(start).is_dir() else str(self.dir)
        self.open = True

    def entries(self):
        try:
            items = sorted(self.dir.iterdir(), key=lambda q: (not q.is_dir(), q.name.lower()))
        except OSError:
            return []
        return [q for q in items if not q.name.startswith(".")
                and (q.is_dir() or q.suffix.lower() in self.extensions)]


def draw(app, fb=None) -> None:
    fb = fb or app.file_browser
    if not fb.open:
        return
    vp = imgui.get_main_viewport()
    imgui.set_next_window_size(imgui.ImVec2(520 * app.ui_scale, 420 * app.ui_scale),
                               imgui.Cond_.first_use_ever)
    imgui.set_next_window_pos(imgui.ImVec2(vp.work_pos.x + vp.work_size.x * 0.5,
                                           vp.work_pos.y + vp.work_size.y * 0.5),
                              imgui.Cond_.first_use_ever, imgui.ImVec2(0.5, 0.5))
    expanded, opened = imgui.begin(fb.title, True)
    if expanded:
        changed, text = imgui.input_text("path", fb.path_text,
                                         imgui.InputTextFlags_.enter_returns_true)
        fb.path_text = text
        if fb.save:
            imgui.same_line()
            changed = imgui.button("Save") or changed
            track(app, "save_as")
        if changed:
            p = Path(fb.path_text).expanduser()
            if p.is_dir():
                fb.dir = p.resolve()
            elif p.is_file() or (fb.save and p.parent.is_dir()):
                fb.pick(app, p)
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
                    fb.pick(app, q)
        imgui.end_child()
    imgui.end()
    if not opened:
        fb.open = False

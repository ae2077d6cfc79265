"""A small ImGui file browser: models (.xml, .urdf) by default, or any extensions with a callback
(the Analysis panel opens recordings with it), or folders (``folders=True``: the output folder),
or a file name to write (``save=True``: a name that does not exist yet is picked too, Save as
MJCF). It stays in the folder it was last in, also across sessions (``remember``: a
studio.settings key).
"""
from __future__ import annotations

import os
from pathlib import Path

from imgui_bundle import imgui

from . import track

EXTENSIONS = (".xml", ".urdf", ".mjcf")


class FileBrowser:
    def __init__(self, start: str | os.PathLike, extensions=EXTENSIONS, title="Open model",
                 on_pick=None, remember: str | None = None, folders: bool = False,
                 save: bool = False):
        from .. import settings
        p = Path(start)
        default = p if p.is_dir() else p.parent
        self.remember = remember
        self.dir = (settings.folder(remember, default) if remember else default).resolve()
        self.open = False
        self.path_text = str(self.dir)
        self.extensions = tuple(extensions)
        self.title = title
        self.on_pick = on_pick                   # callable(path); None: open it as a model
        self.folders = folders                   # pick a folder instead of a file
        self.save = save                         # pick a new file name (and show a Save button)

    def cd(self, path) -> None:
        self.dir = Path(path).resolve()
        self.path_text = str(self.dir)
        if self.remember:
            from .. import settings
            settings.save(**{self.remember: self.dir})

    def pick(self, app, path) -> None:
        self.open = False
        if self.remember and not self.folders:
            self.cd(Path(path).parent)
        if self.on_pick is None:
            app.open_model(str(path))
        else:
            self.on_pick(str(path))

    def show(self, start=None):
        """Open the browser in ``start``, or where it was last (in save mode ``start`` may be
        the file name proposed)."""
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
                and (q.is_dir() or (not self.folders and q.suffix.lower() in self.extensions))]


def draw(app, fb=None) -> None:
    fb = fb or app.file_browser
    if not fb.open:
        return
    vp = imgui.get_main_viewport()
    imgui.set_next_window_size(imgui.ImVec2(min(520 * app.ui_scale, vp.work_size.x * 0.9),
                                            min(420 * app.ui_scale, vp.work_size.y * 0.9)),
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
                fb.cd(p)
            elif (p.is_file() or (fb.save and p.parent.is_dir())) and not fb.folders:
                fb.pick(app, p)
        if imgui.button(".. (up)"):
            fb.cd(fb.dir.parent)
        if fb.folders:
            imgui.same_line()
            if imgui.button("Use this folder"):
                fb.pick(app, fb.dir)
        imgui.begin_child("files", imgui.ImVec2(0, 0), imgui.ChildFlags_.borders)
        for q in fb.entries():
            label = q.name + ("/" if q.is_dir() else "")
            if imgui.selectable(label, False, imgui.SelectableFlags_.allow_double_click)[0]:
                if q.is_dir():
                    fb.cd(q)
                else:
                    fb.pick(app, q)
        imgui.end_child()
    imgui.end()
    if not opened:
        fb.open = False

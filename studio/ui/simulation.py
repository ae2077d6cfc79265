"""Simulation panel: run/pause, step, reset, speed, keyframes, history, warnings, recording."""
from __future__ import annotations

import os
import time

import numpy as np
from imgui_bundle import imgui

from . import header, track

SPEED_MIN, SPEED_MAX = 0.01, 1.0


def set_speed(app, speed) -> None:
    app.runner.speed = float(np.clip(speed, SPEED_MIN, SPEED_MAX))


def save_keyframe(app, new: bool = False) -> None:
    """Save the current state (taken in the simulation thread) over the chosen keyframe, or as
    a new one at the end of the list (``new``, or when there is none)."""
    from .. import keyframes
    k = app.keyframe
    new = new or not app.keys

    def apply(m, d):
        if new:
            app.keys.append(keyframes.capture(m, d, f"studio {len(app.keys)}"))
            app.keyframe = len(app.keys) - 1
        else:
            old = app.keys[k]
            app.keys[k] = keyframes.capture(m, d, old.name, source=old.source)
    app.runner.submit(apply)


def export_keyframes(app, path=None) -> str:
    """Write the keyframes as an MJCF ``<keyframe>`` element to ``path`` (default: beside the
    model, ``<model>-keyframes.xml``; the working directory if that is not writable)."""
    from pathlib import Path

    from .. import keyframes
    text = keyframes.mjcf(app.keys)
    model = Path(app.model_path)
    for target in ([Path(path)] if path else
                   [model.with_name(model.stem + "-keyframes.xml"),
                    Path.cwd() / (model.stem + "-keyframes.xml")]):
        try:
            target.write_text(text)
        except OSError as e:
            app.status = f"cannot write {target}: {e.strerror or e}"
            continue
        app.status = f"wrote {len(app.keys)} keyframes to {target}"
        return str(target)
    return ""


def draw_keyframes(app) -> None:
    from .. import keyframes
    r = app.runner
    keys = app.keys
    if keys:
        app.keyframe = min(app.keyframe, len(keys) - 1)
        _, app.keyframe = imgui.combo("keyframe", app.keyframe,
                                      [keyframes.label(key, i) for i, key in enumerate(keys)])
        if imgui.button("Load key"):
            r.reset(keys[app.keyframe])
        track(app, "load_key")
        imgui.same_line()
        if imgui.button("Save over"):
            save_keyframe(app)
        track(app, "save_key")
        imgui.same_line()
    else:
        imgui.text_disabled("no keyframes in the model")
    if imgui.button("Add key"):
        save_keyframe(app, new=True)
    track(app, "add_key")
    if keys:
        imgui.same_line()
        if imgui.button("Export"):
            export_keyframes(app)
        track(app, "export_keys")
        if imgui.is_item_hovered():
            imgui.set_tooltip("Write the keyframes as an MJCF <keyframe> element beside the model\n"
                              "(* marks the keys saved in the studio)")


def toggle_recording(app, path=None) -> None:
    """Start recording every step to ``path`` (default: a time-stamped .traj file in the working
    directory), or stop the running recording; the Analysis panel offers the file just made."""
    r = app.runner
    if r.recording:
        r.stop_recording()
        app.status = f"saved {r.record_path}"
        app.last_recording = r.record_path
        return
    path = os.path.abspath(path or time.strftime("studio-%Y%m%d-%H%M%S.traj"))
    r.start_recording(path)
    app.status = f"recording {path}"


def draw(app) -> None:
    r = app.runner
    if not header(app, "Simulation", True):
        return
    if imgui.button("Run" if r.paused else "Pause"):
        r.toggle_pause()
    track(app, "run")
    imgui.same_line()
    imgui.begin_disabled(not r.paused)
    if imgui.button("Step"):
        r.single_step()
    imgui.end_disabled()
    imgui.same_line()
    if imgui.button("Reset"):
        r.reset()
    imgui.same_line()
    if imgui.button("Reload"):
        app.reload()
    changed, v = imgui.slider_float("speed", r.speed, SPEED_MIN, SPEED_MAX, "%.3fx",
                                    imgui.SliderFlags_.logarithmic)
    if changed:
        set_speed(app, v)
    draw_keyframes(app)
    h = r.history
    imgui.text_wrapped(f"history: {h.count} frames, {r.history_back} back (arrow keys)")
    for message in (r.warning_message, r.error_message):
        if message:
            imgui.push_style_color(imgui.Col_.text, imgui.ImVec4(1.0, 0.45, 0.3, 1.0))
            imgui.text_wrapped(message)
            imgui.pop_style_color()
    if r.error_message:
        imgui.text_wrapped("The simulation thread caught this error and paused; Run resumes.")
    imgui.separator()
    if imgui.button("Stop recording" if r.recording else "Record"):
        toggle_recording(app)
    track(app, "record")
    imgui.same_line()
    if imgui.button("Screenshot"):
        app.request_screenshot()
    imgui.same_line()
    if imgui.button("Stop video" if app.video is not None else "Video"):
        app.toggle_video()
    if r.recording:
        imgui.text_colored(imgui.ImVec4(1.0, 0.4, 0.35, 1.0), f"recording to {r.record_path}")
    if r.record_error:
        imgui.text_wrapped(r.record_error)
    if app.status:
        imgui.text_wrapped(app.status)

"""Simulation panel: run/pause, step, reset, speed, keyframes, the history slider, control noise,
warnings, recording, screenshots and video, printing the model and the data, the output folder."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
from imgui_bundle import imgui

from . import header, push_width_for_labels, track

SPEED_MIN, SPEED_MAX = 0.01, 1.0


def set_speed(app, speed) -> None:
    app.runner.speed = float(np.clip(speed, SPEED_MIN, SPEED_MAX))


def save_keyframe(app, new: bool = False) -> None:
    """Save the current state (taken in the simulation thread) over the chosen keyframe, or as
    a new one at the end of the list (``new``, or when there is none)."""
    from .. import keyframes
    k = app.ui.keyframe
    new = new or not app.keys

    def apply(m, d):
        if new:
            app.keys.append(keyframes.capture(m, d, f"studio {len(app.keys)}"))
            app.ui.keyframe = len(app.keys) - 1
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
            app.ui.say(f"cannot write {target}: {e.strerror or e}")
            continue
        app.ui.say(f"wrote {len(app.keys)} keyframes to {target}")
        return str(target)
    return ""


def draw_keyframes(app) -> None:
    from .. import keyframes
    keys = app.keys
    if keys:
        app.ui.keyframe = min(app.ui.keyframe, len(keys) - 1)
        _, app.ui.keyframe = imgui.combo("keyframe", app.ui.keyframe,
                                      [keyframes.label(key, i) for i, key in enumerate(keys)])
        if imgui.button("Load key"):
            app.reset(keys[app.ui.keyframe])
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
    """Start recording every step to ``path`` (default: a time-stamped .traj file in the output
    folder), or stop the running recording; the Analysis panel offers the file just made."""
    from ..capture import output_path
    r = app.runner
    if r.recording:
        r.stop_recording()
        app.ui.say(f"saved {r.record_path}")
        app.last_recording = r.record_path
        return
    try:
        path = os.path.abspath(path or output_path(app.ui, app.model_path, ".traj"))
    except OSError as e:
        app.ui.say(f"cannot record: {e}")
        return
    r.start_recording(path)
    app.ui.say(f"recording {path}")


def print_model_and_data(app) -> None:
    """Write the model and the current data as text into the output folder (MuJoCo's
    mj_printModel / mj_printData; studio.printing)."""
    from .. import printing
    from ..capture import output_path
    try:
        mpath = output_path(app.ui, app.model_path, "-model.txt")
        dpath = mpath.with_name(mpath.name.replace("-model.txt", "-data.txt"))
    except OSError as e:
        app.ui.say(f"cannot print: {e}")
        return

    def write(m, d):                  # in the simulation thread: copy; write elsewhere
        arrays = printing.data_arrays(d)

        def save():
            try:
                printing.print_model(m, mpath)
                printing.print_data(arrays, dpath)
                app.ui.say(f"wrote {mpath.name} and {dpath.name} to {mpath.parent}")
            except OSError as e:
                app.ui.say(f"cannot print: {e}")
        threading.Thread(target=save, name="print", daemon=True).start()
    app.runner.submit(write)


def choose_output_folder(app) -> None:
    from .. import settings
    from .file_browser import FileBrowser

    def pick(path):
        app.ui.output_dir = Path(path)
        settings.save(output_dir=app.ui.output_dir)
        app.ui.say(f"output folder: {path}")
    app.folder_browser = FileBrowser(app.ui.output_dir if Path(app.ui.output_dir).is_dir()
                                     else Path.home(), title="Output folder", on_pick=pick,
                                     folders=True)
    app.folder_browser.show()


def draw_history(app) -> None:
    """The history ring buffer as a slider of frames back in time (0: the newest); moving it
    pauses and shows the state of that frame; Run continues from there."""
    r = app.runner
    count = r.history.count
    label_width = imgui.calc_text_size("history").x + imgui.get_style().item_inner_spacing.x
    imgui.set_next_item_width(-label_width)
    changed, back = imgui.slider_int("history", -r.history_back, -max(count - 1, 0), 0,
                                     f"%d of {count} frames")
    track(app, "history")
    if changed:
        r.seek_to(-back)
    if imgui.is_item_hovered():
        imgui.set_tooltip("frames back in time (also the Left/Right arrow keys while paused);\n"
                          "Run continues from the frame shown")


def draw_noise(app) -> None:
    """Control noise (as simulate's): an Ornstein-Uhlenbeck process added to every control."""
    r = app.runner
    if app.m.nu == 0:
        return
    n = r.noise
    push_width_for_labels(["noise std", "noise rate (s)"])
    changed, v = imgui.slider_float("noise std", n.std, 0.0, 1.0, "%.3f")
    track(app, "noise_std")
    if changed:
        n.std = max(float(v), 0.0)
    if imgui.is_item_hovered():
        imgui.set_tooltip("Noise added to the controls each step: an Ornstein-Uhlenbeck process\n"
                          "with this standard deviation (times half the control range)")
    changed, v = imgui.slider_float("noise rate (s)", n.rate, 0.001, 10.0, "%.3g",
                                    imgui.SliderFlags_.logarithmic)
    if changed:
        n.rate = max(float(v), 1e-3)
    imgui.pop_item_width()


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
        app.reset()
    track(app, "reset")
    imgui.same_line()
    if imgui.button("Reload"):
        app.reload()
    changed, v = imgui.slider_float("speed", r.speed, SPEED_MIN, SPEED_MAX, "%.3fx",
                                    imgui.SliderFlags_.logarithmic)
    if changed:
        set_speed(app, v)
    draw_keyframes(app)
    draw_history(app)
    draw_noise(app)
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
        app.capture.request_screenshot()
    track(app, "screenshot")
    imgui.same_line()
    if imgui.button("Stop video" if app.capture.video is not None else "Video"):
        app.capture.toggle_video()
    imgui.same_line()
    if imgui.button("Print"):
        print_model_and_data(app)
    track(app, "print")
    if imgui.is_item_hovered():
        imgui.set_tooltip("Write the model and the current data as text files (mj_printModel,\n"
                          "mj_printData) into the output folder")
    if imgui.button("Output folder..."):
        choose_output_folder(app)
    track(app, "output_folder")
    imgui.same_line()
    avail = imgui.get_content_region_avail().x
    text = str(app.ui.output_dir)
    while len(text) > 4 and imgui.calc_text_size(text).x > avail:
        text = "..." + text[4:]
    imgui.text_disabled(text)
    if imgui.is_item_hovered():
        imgui.set_tooltip(str(app.ui.output_dir))
    if r.recording:
        imgui.text_colored(imgui.ImVec4(1.0, 0.4, 0.35, 1.0), f"recording to {r.record_path}")
    if r.record_error:
        imgui.text_wrapped(r.record_error)
    status = app.ui.current_status()
    if status:
        imgui.text_wrapped(status)
    browser = getattr(app, "folder_browser", None)
    if browser is not None:
        from . import file_browser
        file_browser.draw(app, browser)


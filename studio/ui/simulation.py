"""Simulation panel: run/pause, step, reset, speed, keyframes, history, warnings, recording."""
from __future__ import annotations

import time

import numpy as np
from imgui_bundle import imgui

from . import header, track

SPEED_MIN, SPEED_MAX = 0.01, 1.0


def set_speed(app, speed) -> None:
    app.runner.speed = float(np.clip(speed, SPEED_MIN, SPEED_MAX))


def save_keyframe(app) -> None:
    """Copy the current state into the first keyframe slot named in the combo (in the model)."""
    k = app.keyframe

    def apply(m, d):
        if m.nkey == 0:
            return
        m.key_time[k] = d.time
        m.key_qpos[k] = d.qpos
        m.key_qvel[k] = d.qvel
        m.key_act[k] = d.act
        m.key_ctrl[k] = d.ctrl
        m.key_mpos[k] = d.mocap_pos
        m.key_mquat[k] = d.mocap_quat
    app.runner.submit(apply)


def toggle_recording(app, path=None) -> None:
    """Start recording every step to ``path`` (default: a time-stamped .traj file in the working
    directory), or stop the running recording; the Analysis panel offers the file just made."""
    r = app.runner
    if r.recording:
        r.stop_recording()
        app.status = f"saved {r.record_path}"
        app.last_recording = r.record_path
        return
    path = path or time.strftime("studio-%Y%m%d-%H%M%S.traj")
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
    m = app.m
    if m.nkey:
        names = [n or f"key {i}" for i, n in enumerate(m.names["key"][:m.nkey])]
        names += [f"key {i}" for i in range(len(names), m.nkey)]
        _, app.keyframe = imgui.combo("keyframe", app.keyframe, names)
        if imgui.button("Load key"):
            r.reset(app.keyframe)
        imgui.same_line()
        if imgui.button("Save key"):
            save_keyframe(app)
    else:
        imgui.text_disabled("no keyframes in the model")
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

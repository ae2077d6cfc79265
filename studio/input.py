"""Window input: pyglet events to ImGui, the camera, selection, dragging and the shortcuts
(as simulate's UiEvent). What ImGui wants (a panel under the mouse, a text field being edited)
goes to ImGui only; the rest drives the 3D view. Every shortcut is listed in studio.ui.help.
"""
from __future__ import annotations

import time

DOUBLE_CLICK = 0.35          # seconds between the presses of a double-click


def install(app) -> None:
    """Install the event handlers of ``app.window``."""
    import pyglet
    from imgui_bundle import imgui
    from pyglet.window import key, mouse

    win = app.window
    io = imgui.get_io()
    press = {}                   # button -> (time, x, y) of the last press
    ctl = app.perturb

    @win.event
    def on_draw():
        app.draw_frame()

    @win.event
    def on_mouse_motion(x, y, dx, dy):
        app.imgui_input.mouse_motion(x, y)

    @win.event
    def on_mouse_press(x, y, button, modifiers):
        app.imgui_input.mouse_button(x, y, button, modifiers, True)
        if io.want_capture_mouse:
            return pyglet.event.EVENT_HANDLED
        now = time.perf_counter()
        last = press.get(button)
        press[button] = (now, x, y)
        if modifiers & key.MOD_CTRL and button in (mouse.LEFT, mouse.RIGHT):
            ctl.begin(x, y, "rotate" if button == mouse.LEFT else "translate", button)
            press.pop(button, None)
        elif button == mouse.LEFT and last is not None and now - last[0] < DOUBLE_CLICK \
                and abs(x - last[1]) < 6 and abs(y - last[2]) < 6:
            app.select_at(x, y)
            press.pop(button, None)
        return pyglet.event.EVENT_HANDLED

    @win.event
    def on_mouse_release(x, y, button, modifiers):
        app.imgui_input.mouse_button(x, y, button, modifiers, False)
        if ctl.holding is not None and ctl.holding == button:
            ctl.end()
        return pyglet.event.EVENT_HANDLED

    @win.event
    def on_mouse_drag(x, y, dx, dy, buttons, modifiers):
        app.imgui_input.mouse_motion(x, y)
        if ctl.holding is not None:          # a Ctrl+drag, started or refused: never the camera
            ctl.drag(dx, dy)
            return pyglet.event.EVENT_HANDLED
        if io.want_capture_mouse:
            return pyglet.event.EVENT_HANDLED
        cam = app.renderer.camera
        sy = app.fb_scale()[1]
        if buttons & mouse.LEFT:
            cam.orbit(dx, -dy)
        elif buttons & (mouse.RIGHT | mouse.MIDDLE):
            cam.pan(dx, dy, app.view_rect[3] / sy)
            app.ui.tracking = False
        return pyglet.event.EVENT_HANDLED

    @win.event
    def on_mouse_scroll(x, y, scroll_x, scroll_y):
        app.imgui_input.scroll(scroll_x, scroll_y)
        if not io.want_capture_mouse:
            app.renderer.camera.zoom(scroll_y)
        return pyglet.event.EVENT_HANDLED

    @win.event
    def on_text(text):
        app.imgui_input.text(text)

    @win.event
    def on_key_release(symbol, modifiers):
        app.imgui_input.key(symbol, modifiers, False)
        return pyglet.event.EVENT_HANDLED

    @win.event
    def on_key_press(symbol, modifiers):
        app.imgui_input.key(symbol, modifiers, True)
        if io.want_capture_keyboard:     # a text field (or a widget being edited) has it
            return pyglet.event.EVENT_HANDLED
        shortcut(app, symbol, modifiers)
        return pyglet.event.EVENT_HANDLED

    @win.event
    def on_close():
        app.close()
        return pyglet.event.EVENT_HANDLED

    def on_file_drop(x, y, paths):
        if paths:
            app.open_model(paths[0])
    win.push_handlers(on_file_drop=on_file_drop)


def shortcut(app, symbol, modifiers) -> None:
    """Keyboard shortcuts (listed in studio.ui.help)."""
    from pyglet.window import key

    from .ui.simulation import set_speed
    r, ui = app.runner, app.ui
    ctrl = bool(modifiers & key.MOD_CTRL)
    if ctrl and symbol == key.Q:
        app.close()
    elif ctrl and symbol == key.L:
        app.reload()
    elif ctrl and symbol == key.O:
        app.file_browser.show()
    elif ctrl and symbol == key.P:
        app.capture.request_screenshot()
    elif ctrl and symbol == key.V:
        app.capture.toggle_video()
    elif ctrl and symbol == key.A:
        app.align_camera()
    elif symbol == key.ESCAPE:           # never quits: Ctrl+Q or closing the window does
        if ui.show_help:
            ui.show_help = False
        elif ui.selected_body is not None:
            ui.selected_body = None
            ui.tracking = False
        elif ui.camera_index >= 0:
            app.set_camera(-1)
    elif symbol == key.F1:
        ui.show_help = not ui.show_help
    elif symbol == key.F2:
        ui.show_profiler = not ui.show_profiler
    elif symbol == key.SPACE:
        r.toggle_pause()
    elif symbol == key.BACKSPACE:
        app.reset()
    elif symbol == key.RIGHT and r.paused:
        if r.history_back > 0:
            r.seek(+1)
        else:
            r.single_step()
    elif symbol == key.LEFT:
        r.seek(-1)
    elif symbol == key.TAB:
        ui.show_panels = not ui.show_panels
    elif symbol == key.MINUS:
        set_speed(app, r.speed / 2.0)
    elif symbol == key.EQUAL:
        set_speed(app, r.speed * 2.0)
    elif symbol == key.T:
        app.set_tracking(not ui.tracking)
    elif symbol == key.C:
        nxt = ui.camera_index + 1
        app.set_camera(nxt if nxt < app.m.ncam else -1)
    elif symbol == key.W:
        ui.wireframe = not ui.wireframe

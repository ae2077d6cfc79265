"""Sensors panel: each sensor's name, type and live values (the published Snapshot's
sensordata, that of the state the last step started from, as after MuJoCo's mj_step), with a
name filter; a checkbox per sensor adds its values to the sensor plot drawn below it (the Plots
panel's sampling: studio.ui.plots, signal "sensors")."""
from __future__ import annotations

from imgui_bundle import imgui

from engine.enums import DataType, SensorType

from . import header, track
from .plots import SENSORS, draw_signal

SHOWN = 6                        # values written out per sensor (the rest counted)
PLOTTED = 16                     # components plotted per sensor at most (contact, rangefinder)
AXES = ("x", "y", "z")
QUAT = ("w", "x", "y", "z")


def sensor_label(m, i) -> str:
    names = m.names["sensor"]
    return names[i] if i < len(names) and names[i] else f"{type_name(m, i)} {i}"


def type_name(m, i) -> str:
    return SensorType(int(m.sensor_type[i])).name.lower()


def sensor_columns(m, i):
    """(indices into sensordata, labels) of sensor i: its name, with a suffix per component
    (x y z for 3-vectors, w x y z for quaternions, else the index); at most PLOTTED."""
    adr, dim = int(m.sensor_adr[i]), int(m.sensor_dim[i])
    name = sensor_label(m, i)
    if dim == 1:
        return [adr], [name]
    if dim == 3:
        suffixes = AXES
    elif dim == 4 and int(m.sensor_datatype[i]) == DataType.QUATERNION:
        suffixes = QUAT
    else:
        suffixes = [str(k) for k in range(min(dim, PLOTTED))]
    return list(range(adr, adr + len(suffixes))), [f"{name}.{s}" for s in suffixes]


def values_text(values) -> str:
    text = "  ".join(f"{v:.4g}" for v in values[:SHOWN])
    return text + (f"  ... ({len(values)} values)" if len(values) > SHOWN else "")


def values_lines(values, most=60) -> str:
    """Up to ``most`` values, SHOWN a line (the tooltip of a long sensor)."""
    rows = ["  ".join(f"{v:.4g}" for v in values[k:k + SHOWN])
            for k in range(0, min(len(values), most), SHOWN)]
    return "\n".join(rows) + (f"\n... ({len(values)} values)" if len(values) > most else "")


def fit(text, width) -> str:
    """text cut to fit width (pixels), ending with '..' when cut: the table stays within the
    panel however long a name or a sensor's values are."""
    if imgui.calc_text_size(text).x <= width:
        return text
    lo, hi = 0, len(text)
    while lo < hi:                                   # the longest prefix that fits
        mid = (lo + hi + 1) // 2
        if imgui.calc_text_size(text[:mid] + "..").x <= width:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + ".."


def set_plotted(app, i, on) -> None:
    """Add sensor i to the sensor plot or take it out (the plot restarts)."""
    st = app.plots
    st.sensors = sorted(set(st.sensors) | {i}) if on else [s for s in st.sensors if s != i]
    st.enabled[SENSORS] = bool(st.sensors)
    st.restart(SENSORS)


def draw(app) -> None:
    m = app.m
    if not header(app, "Sensors"):
        return
    if m.nsensor == 0:
        imgui.text_disabled("no sensors")
        return
    st = app.plots
    snap = app.runner.snapshot
    _, st.sensor_filter = imgui.input_text("filter", st.sensor_filter)
    track(app, "sensor filter")
    words = st.sensor_filter.lower().split()
    shown = [i for i in range(m.nsensor)
             if all(w in f"{sensor_label(m, i)} {type_name(m, i)}".lower() for w in words)]
    flags = (imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_h
             | imgui.TableFlags_.sizing_stretch_prop)
    if imgui.begin_table("sensor table", 4, flags):
        imgui.table_setup_column("plot", imgui.TableColumnFlags_.width_fixed)
        imgui.table_setup_column("name", 0, 1.6)
        imgui.table_setup_column("type", 0, 1.9)
        imgui.table_setup_column("values", 0, 2.6)
        imgui.table_headers_row()
        for i in shown:
            label = sensor_label(m, i)
            adr, dim = int(m.sensor_adr[i]), int(m.sensor_dim[i])
            imgui.table_next_row()
            imgui.table_set_column_index(0)
            changed, on = imgui.checkbox(f"##plot sensor {i}", i in st.sensors)
            track(app, f"sensor:{label}")
            if changed:
                set_plotted(app, i, on)
            for col, text in ((1, label), (2, type_name(m, i)),
                              (3, values_text(snap.sensordata[adr:adr + dim]))):
                imgui.table_set_column_index(col)
                shown_text = fit(text, imgui.get_content_region_avail().x)
                imgui.text(shown_text)
                if imgui.is_item_hovered() and (shown_text != text or col == 3 and dim > SHOWN):
                    imgui.set_tooltip(values_lines(snap.sensordata[adr:adr + dim]) if col == 3
                                      else text)
        imgui.end_table()
    if not shown:
        imgui.text_disabled("no sensor matches the filter")
    if st.sensors:
        draw_signal(app, SENSORS, 150 * app.ui_scale)
    else:
        imgui.text_disabled("tick sensors to plot their values")

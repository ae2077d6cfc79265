"""Keyframes in the studio: the model's ``<key>`` elements and the states the user saves.

A ``Key`` holds MuJoCo's keyframe fields (time, qpos, qvel, act, ctrl, mpos, mquat). The
studio's list starts from the model's keys (``from_model``); saving overwrites one of them or
adds the current state as a new key, also in a model without keyframes (``capture``); loading
one resets the Data and copies the fields in (``apply``, as ``engine.reset_keyframe``). The
Model's own arrays are never resized: the list lives in the studio. ``merge`` keeps the keys
saved in the studio across a reload of a model of the same sizes, and ``mjcf`` writes the list
as a ``<keyframe>`` element to paste into the model file.
"""
from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

import numpy as np

import engine

FIELDS = ("qpos", "qvel", "act", "ctrl", "mpos", "mquat")
DATA_FIELD = {"qpos": "qpos", "qvel": "qvel", "act": "act", "ctrl": "ctrl",
              "mpos": "mocap_pos", "mquat": "mocap_quat"}


@dataclass
class Key:
    name: str
    time: float
    qpos: np.ndarray
    qvel: np.ndarray
    act: np.ndarray
    ctrl: np.ndarray
    mpos: np.ndarray
    mquat: np.ndarray
    source: int | None = None       # index among the model's keys (None: added in the studio)
    edited: bool = False            # saved in the studio (added, or a model key overwritten)


def from_model(m) -> list[Key]:
    names = m.names["key"]
    return [Key(names[k] if k < len(names) else "", float(m.key_time[k]),
                *(np.array(getattr(m, "key_" + f)[k], float) for f in FIELDS), source=k)
            for k in range(m.nkey)]


def capture(m, d, name: str, source: int | None = None) -> Key:
    """The current state of ``d`` as a key (copies)."""
    return Key(name, float(d.time), *(np.array(getattr(d, DATA_FIELD[f]), float) for f in FIELDS),
               source=source, edited=True)


def apply(m, d, key: Key) -> None:
    """Reset ``d`` to ``key`` (engine.reset_data, then the key's fields)."""
    engine.reset_data(m, d)
    d.time = key.time
    for f in FIELDS:
        getattr(d, DATA_FIELD[f])[...] = np.asarray(getattr(key, f)).reshape(
            getattr(d, DATA_FIELD[f]).shape)


def label(key: Key, index: int) -> str:
    return (key.name or f"key {index}") + (" *" if key.edited else "")


def merge(m, keys: list[Key]) -> list[Key]:
    """The keys of a reloaded model ``m`` (same sizes as before) with those saved in the studio
    on top: an overwritten model key replaces the file's key of the same index, an added key is
    appended."""
    out = from_model(m)
    for key in keys:
        if not key.edited:
            continue
        if key.source is not None and key.source < len(out):
            out[key.source] = key
        else:
            out.append(Key(**{**key.__dict__, "source": None}))
    return out


def _numbers(a) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(a).ravel())


def mjcf(keys: list[Key]) -> str:
    """A ``<keyframe>`` element with one ``<key>`` per key (numbers written exactly: repr)."""
    lines = ["<keyframe>"]
    for key in keys:
        attrs = [f"name={quoteattr(key.name)}"] if key.name else []
        attrs.append(f'time="{repr(float(key.time))}"')
        attrs += [f'{f}="{_numbers(getattr(key, f))}"' for f in FIELDS if np.size(getattr(key, f))]
        lines.append("  <key " + " ".join(attrs) + "/>")
    lines.append("</keyframe>")
    return "\n".join(lines) + "\n"

"""Actuator shortcuts expanded into MuJoCo's general actuator (xml_native_reader's OneActuator).

``expand_shortcut(a, tag, prm, error)`` turns the shortcut element `tag` (motor, position,
velocity, intvelocity, damper, cylinder, muscle, adhesion) with its own parameters `prm` (kp,
kv, dampratio, timeconst, inheritrange, area, diameter, bias, gain, the muscle's range, force,
scale, lmin ...) into dyntype / gaintype / biastype and their parameter vectors on the Actuator
`a`. The reader calls it for every actuator element, ``Spec.add_actuator(shortcut, ...)`` for
actuators made in code.
"""
from __future__ import annotations

import math

from ..enums import BiasType, DynType, GainType
from .elements import TFAuto


def _zeros(n):
    return [0.0] * n


def _unit(n):
    return [1.0] + [0.0] * (n - 1)


def expand_shortcut(a, tag, prm, error):
    """Expand shortcut `tag` with parameters `prm` on `a`; error(message, attribute) builds the
    ModelError of an invalid parameter."""
    a.shortcut = tag
    if tag == "general":
        return
    if tag == "motor":
        a.gainprm, a.biasprm, a.dynprm = _unit(10), _zeros(10), _unit(10)
        a.dyntype, a.gaintype, a.biastype = DynType.NONE, GainType.FIXED, BiasType.NONE
    elif tag in ("position", "intvelocity"):
        _position(a, tag, prm, error)
    elif tag == "velocity":
        kv = prm.get("kv", a.gainprm[0])
        a.gainprm, a.dynprm = [kv] + _zeros(9), _unit(10)
        a.biasprm = [0.0, 0.0, -kv] + _zeros(7)
        a.dyntype, a.gaintype, a.biastype = DynType.NONE, GainType.FIXED, BiasType.AFFINE
    elif tag == "damper":
        kv = prm.get("kv", -a.gainprm[2] if a.gaintype == GainType.AFFINE else 0.0)
        a.gainprm = [0.0, 0.0, -kv] + _zeros(7)
        a.ctrllimited = TFAuto.TRUE
        a.dyntype, a.gaintype, a.biastype = DynType.NONE, GainType.AFFINE, BiasType.NONE
        if kv < 0:
            raise error("damping coefficient cannot be negative", "kv")
        if a.ctrlrange[0] < 0 or a.ctrlrange[1] < 0:
            raise error("damper control range cannot be negative", "ctrlrange")
    elif tag == "cylinder":
        dp, bp, gp = list(a.dynprm), list(a.biasprm), list(a.gainprm)
        dp[0] = prm.get("timeconst", a.dynprm[0])
        if prm.get("bias") is not None:
            bp[0:3] = prm["bias"]
        gp[0] = prm.get("area", a.gainprm[0])
        diameter = prm.get("diameter", -1.0)
        if diameter >= 0:
            gp[0] = math.pi / 4 * diameter * diameter
        a.dynprm, a.biasprm, a.gainprm = dp, bp, gp
        a.dyntype, a.gaintype, a.biastype = DynType.FILTER, GainType.FIXED, BiasType.AFFINE
    elif tag == "muscle":
        _muscle(a, prm, error)
    elif tag == "adhesion":
        gain = prm.get("gain", a.gainprm[0])
        a.gainprm = [gain] + a.gainprm[1:]
        a.ctrllimited = TFAuto.TRUE
        a.gaintype, a.biastype = GainType.FIXED, BiasType.NONE
        if gain < 0:
            raise error("adhesion gain cannot be negative", "gain")
        if a.ctrlrange[0] < 0 or a.ctrlrange[1] < 0:
            raise error("adhesion control range cannot be negative", "ctrlrange")
    else:
        raise error(f"unknown actuator shortcut <{tag}>")


# the parameters of <general> and of <muscle> (MuJoCo's mjs_setToMuscle), where they differ
MUSCLE_DYNPRM = ((0, 1.0, 0.01), (1, 0.0, 0.04))
MUSCLE_GAINPRM = ((0, 1.0, 0.75), (1, 0.0, 1.05), (2, 0.0, -1.0), (3, 0.0, 200.0), (4, 0.0, 0.5),
                  (5, 0.0, 1.6), (6, 0.0, 1.5), (7, 0.0, 1.3), (8, 0.0, 1.2))
MUSCLE_PARAMETERS = ("force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax")


def _muscle(a, prm, error):
    """<muscle> (MuJoCo's mjs_setToMuscle): dynprm = (timeconst[2], tausmooth), gainprm = biasprm
    = (range[2], force, scale, lmin, lmax, vmax, fpmax, fvmax); parameters still at <general>'s
    defaults take the muscle's defaults first, then the element's attributes apply (a force of
    -1 given explicitly restores the scaling by acc0)."""
    dp, gp = list(a.dynprm), list(a.gainprm)
    for k, general, muscle in MUSCLE_DYNPRM:
        if dp[k] == general:
            dp[k] = muscle
    for k, general, muscle in MUSCLE_GAINPRM:
        if gp[k] == general:
            gp[k] = muscle
    tausmooth = prm.get("tausmooth", dp[2])
    if tausmooth < 0:
        raise error("muscle tausmooth cannot be negative", "tausmooth")
    dp[2] = tausmooth
    if prm.get("timeconst") is not None:
        dp[0:2] = prm["timeconst"]
    if prm.get("range") is not None:
        gp[0:2] = prm["range"]
    for k, attr in enumerate(MUSCLE_PARAMETERS):
        if attr in prm:
            gp[2 + k] = prm[attr]
    a.dynprm, a.gainprm = dp, gp
    a.biasprm = gp[:9] + list(a.biasprm[9:])
    a.dyntype, a.gaintype, a.biastype = DynType.MUSCLE, GainType.MUSCLE, BiasType.MUSCLE


def _position(a, tag, prm, error):
    """<position> and <intvelocity>: gain kp, bias -kp q - kv qdot (dampratio: a positive
    biasprm[2], turned into a damping at qpos0 by set_const), optional filter timeconst."""
    kp = prm.get("kp", a.gainprm[0])
    kv, dampratio = prm.get("kv"), prm.get("dampratio")
    timeconst = prm.get("timeconst") if tag == "position" else None
    inherit = prm.get("inheritrange", a.inheritrange)
    gp = [kp] + _zeros(9)
    bp = [0.0, -kp, a.biasprm[2]] + _zeros(7)
    dp = _unit(10)
    a.dyntype = DynType.NONE
    if kv is not None and dampratio is not None:
        raise error("kv and dampratio cannot both be defined", "dampratio")
    if kv is not None:
        if kv < 0:
            raise error("kv cannot be negative", "kv")
        bp[2] = -kv
    if dampratio is not None:
        if dampratio < 0:
            raise error("dampratio cannot be negative", "dampratio")
        bp[2] = dampratio
    if timeconst is not None:
        if timeconst < 0:
            raise error("timeconst cannot be negative", "timeconst")
        dp[0] = timeconst
        a.dyntype = DynType.NONE if timeconst == 0 else DynType.FILTEREXACT
    a.inheritrange = inherit
    if inherit > 0 and (a.ctrlrange[0] or a.ctrlrange[1]) and tag == "position":
        raise error("ctrlrange and inheritrange cannot both be defined", "inheritrange")
    a.gaintype, a.biastype = GainType.FIXED, BiasType.AFFINE
    a.gainprm, a.biasprm, a.dynprm = gp, bp, dp
    if tag == "intvelocity":
        a.dyntype = DynType.INTEGRATOR
        a.actlimited = TFAuto.TRUE
        if inherit > 0 and (a.actrange[0] or a.actrange[1]):
            raise error("actrange and inheritrange cannot both be defined", "inheritrange")

"""Offscreen rendering through EGL: every shader program compiles, every shipped model shows its
geoms (pixel statistics against the background), and every decoration toggle draws."""
from __future__ import annotations

import ctypes.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SHADERS = ROOT / "shaders"
MODELS = sorted((ROOT / "assets").glob("*.xml"))
HAVE_EGL = bool(ctypes.util.find_library("EGL")) and bool(ctypes.util.find_library("GL"))
pytestmark = pytest.mark.skipif(not HAVE_EGL, reason="libEGL/libGL not installed "
                                "(Debian: libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri)")


@pytest.fixture(scope="module")
def ctx():
    from studio.headless import GLUnavailable, create_egl_context
    try:
        c = create_egl_context()
    except GLUnavailable as e:
        pytest.skip(str(e))
    yield c
    c.release()


def programs():
    stems = sorted({p.stem for p in SHADERS.glob("*.vert")})
    assert stems, "no shaders found"
    return stems


@pytest.mark.parametrize("stem", programs())
def test_every_shader_program_compiles(ctx, stem):
    vert = (SHADERS / f"{stem}.vert").read_text()
    frag = (SHADERS / f"{stem}.frag").read_text()
    prog = ctx.program(vertex_shader=vert, fragment_shader=frag)
    prog.release()


def test_no_orphan_shader_files():
    for p in SHADERS.glob("*.frag"):
        assert (SHADERS / f"{p.stem}.vert").exists(), p


def _render(ctx, m, d, options=None, size=(480, 360), **build):
    from studio import scene
    from studio.headless import render_offscreen
    from studio.renderer import Renderer
    r = Renderer(ctx, m)
    r.frame_model(d)
    if options is not None:
        r.options = options
    sc = scene.build(m, d, r.options, colors=r.colors, extent=r.extent, **build)
    orig = r.render
    r.render = lambda fbo, w, h, dd: orig(fbo, w, h, dd, scene=sc)
    img = render_offscreen(ctx, r, d, *size, msaa=0)
    return r, img


def _differs(img):
    from studio.renderer import BACKGROUND
    bg = np.array(BACKGROUND) * 255.0
    return np.abs(img.astype(float) - bg).max(axis=2) > 12


@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_screenshot_of_each_shipped_model_shows_its_geoms(ctx, path):
    import engine
    m = engine.load_model(str(path))
    d = engine.make_data(m)
    engine.forward(m, d)
    r, img = _render(ctx, m, d)
    fg = _differs(img)
    assert fg.mean() > 0.05, f"{path.name}: almost nothing drawn"
    h, w = fg.shape
    vp, _ = r.view_projection(w, h)
    seen = 0
    for g in range(m.ngeom):
        if m.geom_type[g] == 0 or m.geom_rgba[g, 3] == 0 or m.geom_group[g] >= 3:
            continue
        c = vp @ np.append(d.geom_xpos[g], 1.0)
        x, y = (c[0] / c[3] + 1) * 0.5 * w, (1 - (c[1] / c[3] + 1) * 0.5) * h
        if 0 <= x < w and 0 <= y < h:
            assert fg[int(y), int(x)], f"{path.name}: geom {g} not drawn at its centre"
            seen += 1
    assert seen > 0
    r.release()


def test_every_decoration_draws(ctx):
    import engine
    from studio.scene import SceneOptions
    m = engine.load_model(str(ROOT / "assets" / "tendon_arm.xml"))
    d = engine.make_data(m)
    engine.forward(m, d)
    off = SceneOptions(geoms=False, tendons=False, contact_points=False, contact_forces=False)
    _, blank = _render(ctx, m, d, off)
    assert not _differs(blank).any()
    for name in ("sites", "tendons", "joints", "com", "inertia"):
        flags = dict(geoms=False, tendons=False, contact_points=False, contact_forces=False)
        flags[name] = True
        opts = SceneOptions(**flags)
        _, img = _render(ctx, m, d, opts)
        assert _differs(img).sum() > 20, name
    opts = SceneOptions(geoms=False, tendons=False, perturbation=True)
    _, img = _render(ctx, m, d, opts, perturb_line=(d.xpos[1], d.xpos[1] + [0, 0, 0.3]))
    assert _differs(img).sum() > 20

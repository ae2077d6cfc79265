"""The 3D view's look, offscreen through EGL: MJCF textures against MuJoCo's own texture data,
the skybox, materials and the model's lights, shadows from a spot light, reflections on a
reflective floor, and the meshes' levels of detail."""
from __future__ import annotations

import ctypes.util

import numpy as np
import pytest

HAVE_EGL = bool(ctypes.util.find_library("EGL")) and bool(ctypes.util.find_library("GL"))
needs_egl = pytest.mark.skipif(not HAVE_EGL, reason="libEGL/libGL not installed")


@pytest.fixture(scope="module")
def ctx():
    if not HAVE_EGL:
        pytest.skip("libEGL/libGL not installed")
    from studio.headless import GLUnavailable, create_egl_context
    try:
        c = create_egl_context()
    except GLUnavailable as e:
        pytest.skip(str(e))
    yield c
    c.release()


TEXTURES = """<mujoco><asset>
  <texture name="c2" type="2d" builtin="checker" rgb1=".1 .2 .3" rgb2=".4 .5 .6" width="8" height="6"
           mark="edge" markrgb="1 1 1"/>
  <texture name="g2" type="2d" builtin="gradient" rgb1=".9 .8 .1" rgb2=".1 .2 .7" width="9" height="7"
           mark="cross" markrgb="0 1 0"/>
  <texture name="f2" type="2d" builtin="flat" rgb1=".3 .6 .9" width="4" height="4"/>
  <texture name="gc" type="cube" builtin="gradient" rgb1=".3 .5 .7" rgb2="0 0 0" width="6"/>
  <texture name="cc" type="cube" builtin="checker" rgb1=".8 .1 .1" rgb2=".1 .8 .1" width="4"
           mark="edge" markrgb="0 0 1"/>
  <texture name="fc" type="skybox" builtin="flat" rgb1=".2 .3 .4" rgb2=".5 .6 .7" width="4"/>
</asset><worldbody/></mujoco>"""


def test_builtin_textures_match_mujoco():
    """Every builtin 2D and cube texture (gradient, checker, flat; edge and cross marks) has
    MuJoCo's pixels (mjModel.tex_data), to one level of 8-bit rounding."""
    mujoco = pytest.importorskip("mujoco")
    import engine
    from studio.textures import texture_pixels
    mm = mujoco.MjModel.from_xml_string(TEXTURES)
    m = engine.load_model_from_string(TEXTURES)
    for i in range(mm.ntex):
        kind, pix = texture_pixels(m, i)
        a, w, h = mm.tex_adr[i], mm.tex_width[i], mm.tex_height[i]
        ref = mm.tex_data[a:a + w * h * 3].reshape(h, w, 3).astype(int)
        ours = pix.reshape(-1, pix.shape[-2], 3).astype(int)       # cube faces stacked
        assert ours.shape == ref.shape, (i, ours.shape, ref.shape)
        assert np.abs(ours - ref).max() <= 1, (i, kind)


def _render(ctx, xml, size=(320, 240), setup=None, **options):
    import engine
    from studio import scene
    from studio.headless import render_offscreen
    from studio.renderer import Renderer
    m = engine.load_model_from_string(xml)
    d = engine.make_data(m)
    engine.forward(m, d)
    r = Renderer(ctx, m, d)
    r.align(size[0] / size[1])
    r.options = scene.SceneOptions(contact_points=False, contact_forces=False, **options)
    if setup is not None:
        setup(r)
    r.wait_for_meshes()
    img = render_offscreen(ctx, r, d, *size, msaa=0).astype(float)
    r.release()
    return img


SKY = """<mujoco><asset>
  <texture type="skybox" builtin="gradient" rgb1="0.3 0.5 0.7" rgb2="0 0 0" width="64" height="384"/>
</asset><worldbody><geom type="sphere" size=".1" rgba=".9 .9 .9 1"/></worldbody></mujoco>"""


def test_skybox_is_bright_above_and_dark_below(ctx):
    """Seen level (elevation 0) the gradient skybox is rgb1-ish above the horizon and darker
    below it, left and right alike (MuJoCo's orientation: the texture's up face is +z)."""
    from studio.renderer import BACKGROUND

    def level(r):
        r.camera.elevation = 0.0
    img = _render(ctx, SKY, setup=level)
    corner = (slice(5, 30), slice(5, 60))                 # the sphere is in the middle
    top, bottom = img[corner].reshape(-1, 3).mean(axis=0), \
        img[-30:-5, 5:60].reshape(-1, 3).mean(axis=0)
    assert np.abs(top - np.array(BACKGROUND) * 255).max() > 20       # the sky is drawn
    assert top[2] > top[0] and top.sum() > bottom.sum() + 60
    off = _render(ctx, SKY, setup=level, skybox=False)
    assert np.abs(off[corner] - np.array(BACKGROUND) * 255).max() <= 2


FLOOR = """<mujoco><asset>
  <texture name="grid" type="2d" builtin="checker" rgb1="1 1 1" rgb2="0 0 0" width="64" height="64"/>
  <material name="grid" texture="grid" texrepeat="{repeat} {repeat}" texuniform="true"
            reflectance="{reflectance}"/>
</asset>
<visual><headlight ambient=".3 .3 .3" diffuse=".5 .5 .5" specular="0 0 0"/></visual>
<worldbody>
  <light pos="0 0 3" dir="0 0 -1" directional="true" castshadow="false"/>
  <geom type="plane" size="2 2 .1" material="grid"/>
  <geom type="sphere" pos="0 0 .5" size=".2" rgba="1 0 0 1"/>
</worldbody></mujoco>"""


def test_floor_texture_follows_texrepeat(ctx):
    """A checker floor: the texture shows (two shades), and with texuniform its squares are
    1 / texrepeat / 2 wide in metres: more repeats, more changes of shade along a row."""
    def top_down(r):
        r.camera.elevation, r.camera.distance = -89.0, 2.5
    counts = []
    for repeat in (1, 4):
        img = _render(ctx, FLOOR.format(repeat=repeat, reflectance=0), setup=top_down,
                      shadows=False, haze=False)
        row = img[20, :, 1]                        # a row of floor away from the sphere
        assert row.max() - row.min() > 80
        light = row > 0.5 * (row.max() + row.min())
        counts.append(np.count_nonzero(light[1:] != light[:-1]))
    assert counts[1] >= 3 * counts[0] > 0, counts


def test_reflective_floor_mirrors_the_sphere(ctx):
    """With reflectance the floor below the red sphere turns red (its reflection); without,
    it does not."""
    def side(r):
        r.camera.elevation, r.camera.distance = -12.0, 2.0
        r.camera.lookat[:] = (0.0, 0.0, 0.2)

    def redness(img):
        return img[:, :, 0] - 0.5 * (img[:, :, 1] + img[:, :, 2])
    plain = _render(ctx, FLOOR.format(repeat=0.001, reflectance=0), setup=side, shadows=False)
    mirror = _render(ctx, FLOOR.format(repeat=0.001, reflectance=0.5), setup=side, shadows=False)
    changed = np.abs(mirror - plain).max(axis=2) > 20
    assert changed.sum() > 100                                   # the reflection shows
    assert np.median(redness(mirror)[changed]) > np.median(redness(plain)[changed]) + 30
    ys = np.nonzero(changed)[0]
    sphere = np.nonzero(redness(plain) > 100)[0]
    assert ys.mean() > sphere.mean()                             # below the sphere, on the floor
    assert changed.sum() < 0.2 * changed.size                    # the rest as without it


EDGE = """<mujoco><visual><headlight ambient=".3 .3 .3" diffuse=".5 .5 .5" specular="0 0 0"/>
</visual><asset><material name="m" reflectance="{reflectance}" rgba=".5 .5 .5 1"/></asset>
<worldbody><geom type="plane" size=".3 .3 .1" material="m"/>
<geom type="sphere" pos=".25 0 .15" size=".12" rgba="1 0 0 1"/></worldbody></mujoco>"""


def test_reflection_stays_on_its_plane(ctx):
    """A sphere overhanging the edge of a small mirror, no skybox: its reflection shows on the
    plane only; beyond the plane's edge the picture keeps the background, as without the
    reflection (the mirror pass draws into the picture, the background colour covers it)."""
    def side(r):
        r.camera.azimuth, r.camera.elevation, r.camera.distance = 90.0, -25.0, 1.6
        r.camera.lookat[:] = (0.1, 0.0, 0.0)
    plain = _render(ctx, EDGE.format(reflectance=0), setup=side, shadows=False, haze=False)
    mirror = _render(ctx, EDGE.format(reflectance=0.8), setup=side, shadows=False, haze=False)
    changed = np.abs(mirror - plain).max(axis=2) > 20
    assert changed.sum() > 50                                    # the reflection shows
    from studio.renderer import BACKGROUND
    background = np.abs(plain - 255 * np.array(BACKGROUND)).max(axis=2) < 3
    assert background.sum() > 0.3 * background.size
    assert not changed[background].any()


SPOT = """<mujoco>
<visual><headlight active="0"/></visual>
<worldbody>
  <light name="spot" pos="-0.8 0 2" dir="0.4 0 -0.5" cutoff="40" exponent="1" castshadow="{shadow}"
         diffuse="1 1 1" ambient="0 0 0" specular="0 0 0"/>
  <geom type="plane" size="3 3 .1" rgba=".8 .8 .8 1"/>
  <geom type="box" pos="0 0 1" size=".15 .15 .15" rgba=".2 .2 .9 1"/>
</worldbody></mujoco>"""


def test_spot_light_cone_and_its_shadow(ctx):
    """A spot light (headlight off) lights a disc of the floor, black outside its cone; with
    castshadow the box between it and the floor darkens a patch of the disc on the far side of
    the box from the light (+x, the image's right)."""
    def top_down(r):
        r.camera.elevation, r.camera.azimuth, r.camera.distance = -89.9, 90.0, 4.0
        r.camera.lookat[:] = 0.0
    lit = _render(ctx, SPOT.format(shadow="false"), setup=top_down, haze=False).mean(axis=2)
    shade = _render(ctx, SPOT.format(shadow="true"), setup=top_down, haze=False).mean(axis=2)
    h, w = lit.shape
    assert lit[:15, :15].max() < 5 and lit[-15:, :15].max() < 5      # outside the cone: dark
    assert (lit > 40).sum() > 0.1 * h * w                            # the cone's disc
    dark = (lit > 40) & (shade < 0.5 * lit)
    assert dark.sum() > 100
    ys, xs = np.nonzero(dark)
    assert xs.mean() > w / 2 + 10                                    # beyond the box
    assert np.percentile(np.abs(shade[~dark] - lit[~dark]), 99) < 5  # the rest is as lit


# an open mesh: a box without its lid (outward winding), opening upwards, above a lit floor
CUP = """<mujoco>
<visual><headlight active="0"/></visual>
<asset><mesh name="cup" vertex="-1 -1 0  1 -1 0  1 1 0  -1 1 0  -1 -1 1  1 -1 1  1 1 1  -1 1 1"
  face="0 2 1  0 3 2  0 1 5  0 5 4  1 2 6  1 6 5  2 3 7  2 7 6  3 0 4  3 4 7"
  scale=".3 .3 .3"/></asset>
<worldbody>
  <light directional="true" pos="0 0 3" dir="0 0 -1" castshadow="true" diffuse="1 1 1"
         ambient=".1 .1 .1" specular="0 0 0"/>
  <geom type="plane" size="3 3 .1" rgba=".8 .8 .8 1"/>
  <geom type="mesh" mesh="cup" pos="0 0 0.5" rgba=".9 .1 .1 1" contype="0" conaffinity="0"/>
</worldbody></mujoco>"""


def test_mesh_back_faces_are_culled_but_cast_shadows(ctx):
    """As MuJoCo's renderer ("Cull Face", on by default): looking down into an open mesh, every
    face shows its back, so with culling the floor is seen through it, in the shadow that all
    its faces cast; without culling the inside of the cup is drawn (red)."""
    def top_down(r):
        r.camera.elevation, r.camera.azimuth, r.camera.distance = -89.9, 90.0, 3.0
        r.camera.lookat[:] = 0.0
    culled = _render(ctx, CUP, setup=top_down, haze=False, reflections=False)
    drawn = _render(ctx, CUP, setup=top_down, haze=False, reflections=False, cull_faces=False)
    h, w = culled.shape[:2]
    centre = (slice(h // 2 - 5, h // 2 + 5), slice(w // 2 - 5, w // 2 + 5))
    red, green = drawn[centre + (0,)], drawn[centre + (1,)]
    assert red.min() > 120 and green.max() < 60                      # the cup's inside
    assert np.abs(culled[centre + (0,)] - culled[centre + (1,)]).max() < 10   # floor: not red
    no_cup = _render(ctx, CUP.replace(".9 .1 .1 1", ".9 .1 .1 0"), setup=top_down, haze=False,
                     reflections=False)
    lit = no_cup[centre].mean(axis=2)
    assert lit.min() > 60 and (culled[centre].mean(axis=2) < 0.5 * lit).all()   # the shadow


def test_mesh_levels_of_detail():
    """Coarser levels have fewer triangles, stay inside the mesh's bounding box, and their
    normals are unit vectors; the full level keeps every triangle."""
    from studio import meshes
    # a finely tessellated sphere as a mesh
    v, idx = meshes.sphere(120, 60)
    vert, face = v[:, :3].astype(float), idx.reshape(-1, 3)
    levels = meshes.mesh_lods(vert, face)
    area = np.linalg.norm(np.cross(vert[face[:, 1]] - vert[face[:, 0]],
                                   vert[face[:, 2]] - vert[face[:, 0]]), axis=1)
    assert levels[0][0] == 0.0 and levels[0][1][1].size == 3 * np.count_nonzero(area > 1e-12)
    assert len(levels) >= 3
    ntri = [lv[1][1].size // 3 for lv in levels]
    assert all(b <= 2 * a / 3 for a, b in zip(ntri, ntri[1:])), ntri
    for cell, (verts, indices) in levels:
        assert np.all(np.abs(verts[:, :3]) <= 1.0 + 1e-6)
        np.testing.assert_allclose(np.linalg.norm(verts[:, 3:6], axis=1), 1.0, atol=1e-5)
        # a coarse sphere still points its normals outwards
        assert np.median(np.einsum("ij,ij->i", verts[:, :3], verts[:, 3:6])) > 0.9


def test_a_second_renderer_of_a_model_starts_with_its_levels_of_detail(ctx):
    """The studio's renderer, made after the start-up screen's of the same model, starts with
    the meshes' levels of detail the first one computed (not with the triangle soup while it
    computes them again)."""
    import engine
    from studio.renderer import Renderer
    m = engine.load_model_from_string(CUP)
    d = engine.make_data(m)
    engine.forward(m, d)
    first = Renderer(ctx, m, d)
    first.wait_for_meshes()
    second = Renderer(ctx, m, d)
    try:
        assert first.mesh_data and all(data.levels is not None
                                       for data in first.mesh_data.values())
        for i, data in first.mesh_data.items():
            assert second.mesh_data[i].levels is data.levels
    finally:
        second.wait_for_meshes()
        first.release()
        second.release()


def test_fxaa_draws_the_view_where_its_rectangle_is(ctx):
    """The 3D view drawn at full scale with FXAA into a rectangle away from the target's origin
    (beside a panel) is the picture drawn without FXAA, softened on its edges only."""
    import engine
    from studio.renderer import Renderer
    from studio.viewport import SceneViewport
    m = engine.load_model_from_string(SKY)
    d = engine.make_data(m)
    engine.forward(m, d)
    r = Renderer(ctx, m, d)
    w, h, x0 = 480, 240, 160
    screen = ctx.framebuffer(color_attachments=[ctx.renderbuffer((x0 + w, h), 4)])
    vp = SceneViewport(ctx)
    images = []
    try:
        for fxaa in (False, True):
            screen.use()
            screen.clear(1.0, 0.0, 1.0, 1.0)
            vp.draw(r, screen, (x0, 0, w, h), d, scale=1.0, fxaa=fxaa)
            raw = screen.read(components=3, alignment=1)
            images.append(np.frombuffer(raw, np.uint8).reshape(h, x0 + w, 3).astype(int))
    finally:
        vp.release()
        screen.color_attachments[0].release()
        screen.release()
        r.release()
    plain, smooth = images
    assert (smooth[:, :x0] == [255, 0, 255]).all()                   # left of the rectangle
    diff = np.abs(smooth[:, x0:] - plain[:, x0:])
    assert diff.mean() < 2.0 and diff.max() > 10                     # edges softened, in place


def test_texture_files_match_mujoco(tmp_path):
    """PNG textures: a 2D image, a cube from one image laid out on a grid, a cube from six
    files, and a 2D image flipped: the pixels of MuJoCo's tex_data."""
    mujoco = pytest.importorskip("mujoco")
    from PIL import Image

    import engine
    from studio.textures import texture_pixels
    rng = np.random.default_rng(3)

    def png(name, h, w):
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(tmp_path / name)
    png("flat.png", 6, 10)
    png("grid.png", 12, 16)                                   # 3 rows x 4 columns of 4x4
    for face in ("r", "l", "u", "d", "f", "b"):
        png(f"{face}.png", 5, 5)
    xml = """<mujoco><asset>
      <texture name="a" type="2d" file="flat.png"/>
      <texture name="b" type="2d" file="flat.png" vflip="true" hflip="true"/>
      <texture name="c" type="cube" file="grid.png" gridsize="3 4" gridlayout=".U..LFRB.D.."/>
      <texture name="d" type="skybox" fileright="r.png" fileleft="l.png" fileup="u.png"
               filedown="d.png" filefront="f.png" fileback="b.png"/>
    </asset><worldbody/></mujoco>"""
    path = tmp_path / "textures.xml"
    path.write_text(xml)
    mm = mujoco.MjModel.from_xml_path(str(path))
    m = engine.load_model(str(path))
    for i in range(mm.ntex):
        _, pix = texture_pixels(m, i)
        a, w, h = mm.tex_adr[i], mm.tex_width[i], mm.tex_height[i]
        ref = mm.tex_data[a:a + w * h * 3].reshape(h, w, 3)
        np.testing.assert_array_equal(pix.reshape(-1, pix.shape[-2], 3), ref, err_msg=str(i))


FOG_HAZE = """<mujoco>
<visual><headlight ambient=".4 .4 .4" diffuse=".5 .5 .5"/><map fogstart="0.1" fogend="0.2"/>
  <rgba fog="1 0 0 1" haze="0 1 0 1"/></visual>
<worldbody>
  <geom type="plane" size="0 0 .1" rgba=".5 .5 .5 1"/>
  <geom type="sphere" pos="0 0 .3" size=".3" rgba=".5 .5 .5 1"/>
</worldbody></mujoco>"""


def test_fog_and_haze(ctx):
    """Fog (off by default) turns what is beyond fogend (times the model's extent) the fog's
    colour; the haze (on by default) fades an infinite floor into the haze colour towards the
    horizon, and only there."""
    def low(r):
        r.camera.elevation, r.camera.distance = -6.0, 3.0
        r.camera.lookat[:] = (0.0, 0.0, 0.3)
    plain = _render(ctx, FOG_HAZE, setup=low, haze=False, reflections=False)
    fog = _render(ctx, FOG_HAZE, setup=low, haze=False, fog=True, reflections=False)
    haze = _render(ctx, FOG_HAZE, setup=low, reflections=False)
    drawn = np.abs(plain - plain[0, 0]).max(axis=2) > 10             # not the background
    red = (fog[..., 0] > 200) & (fog[..., 1] < 40) & (fog[..., 2] < 40)
    assert red[drawn].mean() > 0.95 and not red[~drawn].any()
    assert not ((plain[..., 0] > 200) & (plain[..., 1] < 40)).any()
    greener = (haze[..., 1] - plain[..., 1])[:, :20]                 # the floor beside the ball
    floor = drawn[:, :20]
    horizon = np.nonzero(floor.any(axis=1))[0].min()                 # the floor's far edge
    assert np.median(greener[horizon:horizon + 2][floor[horizon:horizon + 2]]) > 40
    assert np.abs(greener[-10:]).max() < 3                           # the near floor: as before


POINT = """<mujoco>
<visual><headlight active="0"/></visual>
<worldbody>
  <light type="point" pos="0 0 .6" castshadow="false" diffuse="1 1 1" ambient="0 0 0"
         specular="0 0 0" attenuation="1 0 0"/>
  <geom type="plane" size="3 3 .1" rgba=".8 .8 .8 1"/>
</worldbody></mujoco>"""


def test_point_light_lights_all_around(ctx):
    """A point light above the floor (headlight off) lights it in every direction, brightest
    below it and falling off with the angle of incidence (no cone: the corners are lit too,
    unlike the spot light's)."""
    def top_down(r):
        r.camera.elevation, r.camera.azimuth, r.camera.distance = -89.9, 90.0, 3.0
        r.camera.lookat[:] = 0.0
    img = _render(ctx, POINT, setup=top_down, haze=False, reflections=False,
                  textures=False).mean(axis=2)
    h, w = img.shape
    centre = img[h // 2 - 5:h // 2 + 5, w // 2 - 5:w // 2 + 5].mean()
    corner = img[:15, :15].mean()
    assert centre > 120 and 5 < corner < 0.5 * centre

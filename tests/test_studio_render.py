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


def _render(ctx, m, d, options=None, size=(480, 360), colors=None, **build):
    from studio import scene
    from studio.headless import render_offscreen
    from studio.renderer import Renderer
    r = Renderer(ctx, m)
    r.frame_model(d)
    r.wait_for_meshes()                   # the meshes' levels of detail: the same in every call
    if options is not None:
        r.options = options
    sc = scene.build(m, d, r.options, colors=r.colors if colors is None else colors,
                     extent=r.extent, **build)
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
    """Each visible geom (groups 0-2, not a plane) in the camera's view: the picture without
    it (its alpha set to 0) differs from the full one on its silhouette, in its own colour
    (shadows off, so only the geom's own pixels change)."""
    import engine
    from studio.scene import SceneOptions
    m = engine.load_model(str(path))
    d = engine.make_data(m)
    engine.forward(m, d)
    opts = SceneOptions(contact_points=False, contact_forces=False, tendons=False, shadows=False)
    r, full = _render(ctx, m, d, opts)
    assert _differs(full).mean() > 0.05, f"{path.name}: almost nothing drawn"
    h, w = full.shape[:2]
    vp, _ = r.view_projection(w, h)
    colors = r.colors
    r.release()
    seen = 0
    for g in range(m.ngeom):
        if m.geom_type[g] == 0 or colors[g, 3] == 0 or m.geom_group[g] >= 3:
            continue
        c = vp @ np.append(d.geom_xpos[g], 1.0)
        if not (abs(c[0]) < c[3] and abs(c[1]) < c[3]):
            continue                                   # centre outside the picture
        hidden = colors.copy()
        hidden[g, 3] = 0.0
        r, without = _render(ctx, m, d, opts, colors=hidden)
        r.release()
        changed = np.abs(full.astype(int) - without).max(axis=2) > 12
        assert changed.sum() >= 10, f"{path.name}: geom {g} not drawn"
        pix = full[changed].astype(float)
        ref = colors[g, :3]
        cos = pix @ ref / np.maximum(np.linalg.norm(pix, axis=1) * np.linalg.norm(ref), 1e-9)
        assert np.median(cos) > 0.97, f"{path.name}: geom {g} drawn in another colour"
        seen += 1
    assert seen > 0


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


def test_perturbation_spring_is_a_coil_in_its_own_colour():
    """The perturbation spring is a helix of segments around the line from the grabbed point to
    the target (not a thin line), in a colour of its own (not a force arrow's)."""
    from studio.scene import FRICTION_RGBA, NORMAL_RGBA, SPRING_RGBA, spring
    p0, p1, extent = np.zeros(3), np.array([0.0, 0.0, 1.0]), 1.0
    coil, ends = spring(p0, p1, extent)
    colours = np.vstack([coil, ends])[:, 15:19]
    np.testing.assert_allclose(colours, np.tile(SPRING_RGBA, (len(colours), 1)),
                               rtol=1e-6)
    assert SPRING_RGBA not in (FRICTION_RGBA, NORMAL_RGBA)
    centres = coil[:, 0:3]
    radius = np.linalg.norm(centres[:, :2], axis=1)                  # off the line's axis
    assert len(coil) >= 40 and radius.min() > 0.005 * extent
    angle = np.unwrap(np.arctan2(centres[:, 1], centres[:, 0]))
    assert abs(angle[-1] - angle[0]) > 4 * 2 * np.pi                 # several turns around it
    np.testing.assert_allclose(ends[:, 0:3], [p0, p1])


@pytest.mark.parametrize("name", ["sphere", "capsule", "cylinder", "box"])
def test_closed_unit_meshes_face_outwards(name):
    """Back faces of these shapes are culled: every triangle must be wound counter-clockwise
    seen from outside (its normal points away from the shape's axis or centre)."""
    from studio import meshes
    from studio.renderer import CLOSED_SHAPES
    assert name in CLOSED_SHAPES
    verts, idx = getattr(meshes, name)()
    pos = verts[:, :3] + np.outer(verts[:, 6], [0.0, 0.0, 1.0])    # capsule: half-length 1
    tri = pos[idx.reshape(-1, 3)]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    area = np.linalg.norm(normal, axis=1)
    keep = area > 1e-9                                # degenerate triangles at the poles
    centroid = tri.mean(axis=1)
    # outward direction: from the nearest point of the shape's core (centre, or axis segment)
    core = np.zeros_like(centroid)
    if name == "capsule":
        core[:, 2] = np.clip(centroid[:, 2], -1.0, 1.0)
    outward = np.einsum("ij,ij->i", normal[keep], centroid[keep] - core[keep]) / area[keep]
    assert keep.sum() > 10 and np.all(outward > 0), outward.min()


# three bodies of distinct colours, no floor: silhouettes compared across render scales
THREE = """<mujoco model="three">
  <worldbody>
    <light directional="true" dir="0 0 -1"/>
    <body name="red" pos="-0.6 0 0"><geom type="box" size="0.2 0.2 0.2" rgba="0.9 0.1 0.1 1"/></body>
    <body name="green" pos="0 0 0.1"><geom type="sphere" size="0.25" rgba="0.1 0.9 0.1 1"/></body>
    <body name="blue" pos="0.6 0 0" euler="30 0 0">
      <geom type="capsule" size="0.1 0.2" rgba="0.1 0.1 0.9 1"/></body>
  </worldbody>
</mujoco>
"""


def classify(img):
    """Per pixel: 0, 1, 2 for a red, green or blue dominated colour, -1 for anything else."""
    img = img.astype(float)
    c = img.argmax(axis=2)
    top = img.max(axis=2)
    rest = np.sort(img, axis=2)[:, :, 1]
    return np.where(top > 1.6 * rest + 20, c, -1)


def dilate(mask, r):
    out = mask.copy()
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            out |= np.roll(np.roll(mask, dy, axis=0), dx, axis=1)
    return out


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    import engine
    p = tmp_path_factory.mktemp("three") / "three.xml"
    p.write_text(THREE)
    m = engine.load_model(str(p))
    d = engine.make_data(m)
    engine.forward(m, d)
    return m, d


def _viewport_image(ctx, r, d, size, scale, msaa):
    """What the window shows: the scene drawn through SceneViewport into a window-sized target."""
    from studio.viewport import SceneViewport
    w, h = size
    screen = ctx.framebuffer(color_attachments=[ctx.renderbuffer((w, h), 4)])
    vp = SceneViewport(ctx)
    try:
        vp.draw(r, screen, (0, 0, w, h), d, scale=scale, msaa=msaa)
        raw = screen.read(components=3, alignment=1)
    finally:
        vp.release()
        screen.color_attachments[0].release()
        screen.release()
    return np.frombuffer(raw, np.uint8).reshape(h, w, 3)[::-1].copy()


@pytest.mark.parametrize("scale,msaa", [(0.5, 0), (0.5, 4), (0.37, 0), (1.0, 4)])
def test_scaled_viewport_keeps_the_silhouettes(ctx, three, scale, msaa):
    """A render at a reduced scale (odd window size: the scaled target's aspect differs by a
    rounding) shows each geom where the full-resolution render does, within a few pixels."""
    from studio.renderer import Renderer
    m, d = three
    size = (481, 359)
    r = Renderer(ctx, m)
    r.frame_model(d)
    ref = classify(_viewport_image(ctx, r, d, size, 1.0, 0))
    img = classify(_viewport_image(ctx, r, d, size, scale, msaa))
    tol = max(2, int(np.ceil(1.0 / scale)))
    for c in range(3):
        a, b = ref == c, img == c
        assert a.sum() > 800, f"colour {c}: the reference shows almost nothing"
        assert abs(int(b.sum()) - int(a.sum())) < 0.12 * a.sum(), (c, a.sum(), b.sum())
        assert not (b & ~dilate(a, tol)).any(), f"colour {c} drawn where the reference has none"
        assert not (a & ~dilate(b, tol)).any(), f"colour {c} missing where the reference has it"
        ya, xa = np.nonzero(a)
        yb, xb = np.nonzero(b)
        assert abs(xa.mean() - xb.mean()) < 1.0 and abs(ya.mean() - yb.mean()) < 1.0
    r.release()


def test_shadow_map_follows_the_render_scale():
    from studio.renderer import SHADOW_SIZE, Renderer
    assert Renderer.shadow_size(1.0) == SHADOW_SIZE
    assert Renderer.shadow_size(0.5) == SHADOW_SIZE // 2
    assert Renderer.shadow_size(0.25) == SHADOW_SIZE // 4


# a box held by static friction on a plane tilted by 15 degrees (mu = 1 > tan 15 deg)
SLOPE = """<mujoco model="slope">
  <option timestep="0.002" cone="{cone}"/>
  <worldbody>
    <light directional="true" dir="0 0 -1"/>
    <geom name="slope" type="plane" size="2 2 0.1" euler="0 15 0" rgba="0.5 0.5 0.5 1"/>
    <body name="box" pos="0 0 0.2" euler="0 15 0">
      <freejoint/>
      <geom type="box" size="0.2 0.2 0.1" mass="2" rgba="0.4 0.4 0.45 1"/>
    </body>
  </worldbody>
</mujoco>
"""


def settled_slope(cone):
    import engine
    m = engine.load_model_from_string(SLOPE.format(cone=cone))
    d = engine.make_data(m)
    engine.step(m, d, 1000)                   # 2 s: at rest on the slope
    engine.forward(m, d)
    assert np.linalg.norm(d.qvel) < 5e-3            # (soft friction creeps slowly)
    return m, d


@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
def test_contact_force_parts_on_a_slope(cone):
    """Static friction on a 15 degree slope: the normal forces add up to m g cos(15 deg) along
    the slope's normal, the friction forces to m g sin(15 deg) up the slope (analytic); per
    contact, the local forces are engine.contact_force's (MuJoCo's mj_contactForce)."""
    import engine
    from studio import scene
    m, d = settled_slope(cone)
    n = d.ncon
    assert n >= 3
    local = scene.contact_local_forces(d)
    for i in range(n):
        np.testing.assert_allclose(local[i], engine.contact_force(m, d, i)[:3], atol=1e-9)
    normal, friction = scene.contact_force_parts(d)
    weight = 2.0 * 9.81
    th = np.radians(15.0)
    slope_normal = np.array([np.sin(th), 0.0, np.cos(th)])    # plane normal after euler y 15
    up_slope = np.array([-np.cos(th), 0.0, np.sin(th)])
    np.testing.assert_allclose(normal.sum(axis=0), weight * np.cos(th) * slope_normal,
                               atol=0.01 * weight)
    np.testing.assert_allclose(friction.sum(axis=0), weight * np.sin(th) * up_slope,
                               atol=0.01 * weight)
    np.testing.assert_allclose(scene.contact_forces(d).sum(axis=0), [0, 0, weight],
                               atol=0.01 * weight)


def test_arrow_length_is_linear_then_logarithmic():
    from studio.scene import arrow_lengths
    f = np.array([[0.0, 0.0, 0.01], [0.0, 3.0, 4.0], [0.0, 0.0, 1000.0]])
    length = arrow_lengths(f, 0.1, 10.0)
    assert length[0] == pytest.approx(0.1 * 0.01, rel=1e-3)          # |f| << F: scale |f|
    assert length[1] == pytest.approx(0.1 * 10.0 * np.log(1.5))
    # an impact 100 times the reference: 4.6 times the reference's arrow, not 100 times
    assert length[2] / arrow_lengths(np.array([[10.0, 0, 0]]), 0.1, 10.0)[0] == pytest.approx(
        np.log(101.0) / np.log(2.0))


def test_contact_force_arrows_are_drawn_in_their_colours(ctx):
    """On the slope: with the force arrows on, pixels in the normal arrows' colour and in the
    friction arrows' colour appear (contact points off); their number grows with the scale."""
    from studio.scene import FRICTION_RGBA, NORMAL_RGBA, SceneOptions, default_force_scale
    m, d = settled_slope("elliptic")
    off = SceneOptions(contact_points=False, contact_forces=False, shadows=False)
    on = SceneOptions(contact_points=False, contact_forces=True, shadows=False)
    r, bare = _render(ctx, m, d, off)
    extent = r.extent
    r.release()

    def coloured(img, rgba):
        """Pixels whose colour points the way of rgba (any shading) and that the arrows added."""
        c = img.astype(float)
        ref = np.array(rgba[:3])
        cos = (c @ ref) / np.maximum(np.linalg.norm(c, axis=2) * np.linalg.norm(ref), 1e-9)
        return (cos > 0.97) & (np.abs(c - bare).max(axis=2) > 30) & (c.max(axis=2) > 60)

    counts = []
    for factor in (2.0, 6.0):
        r, img = _render(ctx, m, d, on,
                         force_scale=factor * default_force_scale(m, extent))
        r.release()
        counts.append((coloured(img, NORMAL_RGBA).sum(), coloured(img, FRICTION_RGBA).sum()))
    (n1, f1), (n2, f2) = counts
    assert n1 > 30 and f1 > 10, counts
    assert n2 > 1.5 * n1 and f2 > 1.5 * f1, counts
    assert not coloured(bare, NORMAL_RGBA).any() and not coloured(bare, FRICTION_RGBA).any()


def test_checker_squares_follow_the_model_size():
    """1-2-5 squares at most half the model's size, whatever the plane's size."""
    import engine
    from studio import scene
    assert [scene.checker_cell(e) for e in (0.03, 0.35, 1.0, 3.0, 30.0)] == \
        pytest.approx([0.01, 0.1, 0.5, 1.0, 10.0])
    for size, r in (("0 0 1", 0.05), ("0 0 1", 0.5), ("5 5 1", 2.0)):
        m = engine.load_model_from_string(
            f'<mujoco><worldbody><geom type="plane" size="{size}"/><body pos="0 0 {2 * r}">'
            f'<freejoint/><geom type="sphere" size="{r}"/></body></worldbody></mujoco>')
        d = engine.make_data(m)
        engine.forward(m, d)
        extent = scene.model_extent(m, d)
        plane = scene.build(m, d).instances[("plane", "opaque", scene.GRID)]
        # the grid texture holds 2 x 2 squares; uv = position / 2 * repeat: a square per cell
        assert plane[0, 23] == plane[0, 24] == pytest.approx(1.0 / scene.checker_cell(extent))
        assert extent == pytest.approx(r * np.sqrt(3), rel=1e-6)


# a box above a floor, far from where the model starts
FAR = """<mujoco model="far">
  <worldbody>
    <light directional="true" dir="0.2 0.1 -1"/>
    <geom type="plane" size="0 0 1" rgba="0.6 0.6 0.6 1"/>
    <body name="box" pos="0 0 0.5"><freejoint/><geom type="box" size="0.2 0.2 0.2"/></body>
  </worldbody>
</mujoco>"""


def test_shadows_follow_the_bodies(ctx):
    """The camera framed where the box started; the box then moved 40 m away and the camera
    follows it: its shadow is on the floor there (the shadow map covers the bodies where they
    are, not where they were framed)."""
    import engine
    from studio.scene import SceneOptions
    from studio.renderer import Renderer
    from studio.headless import render_offscreen
    from studio import scene
    m = engine.load_model_from_string(FAR)
    d = engine.make_data(m)
    engine.forward(m, d)
    r = Renderer(ctx, m)
    r.frame_model(d)                              # framed at the origin
    d.qpos[:3] = [40.0, -25.0, 0.5]
    engine.forward(m, d)
    r.camera.lookat = d.xpos[1].copy()
    images = []
    for shadows in (False, True):
        r.options = SceneOptions(shadows=shadows, contact_points=False)
        sc = scene.build(m, d, r.options, colors=r.colors, extent=r.extent)
        orig = r.render
        r.render = lambda fbo, w, h, dd, sc=sc, orig=orig: orig(fbo, w, h, dd, scene=sc)
        images.append(render_offscreen(ctx, r, d, 320, 240, msaa=0).astype(int))
        r.render = orig
    r.release()
    darker = (images[0] - images[1]).min(axis=2) > 25         # every channel darker
    assert darker.sum() > 300, darker.sum()

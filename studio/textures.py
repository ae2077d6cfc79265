"""The model's textures as pixel arrays (no GPU code): MuJoCo's builtin textures and image files.

``texture_pixels(m, i)`` gives texture ``i`` of ``m.textures`` (the compiler keeps each
``<texture>`` element's attributes) as ``("2d", (h, w, 3) uint8)`` or ``("cube", (6, w, w, 3)
uint8)``, the cube's faces in OpenGL's order (+x right, -x left, +y up, -y down, +z front, -z
back, MuJoCo's order too); skyboxes are cube textures. The builtins follow MuJoCo's
mjCTexture::Builtin2D / BuiltinCube: ``gradient`` (a sigmoid from rgb1 to rgb2, radial on a 2D
texture, by elevation on a cube), ``checker`` (2 x 2 squares per texture), ``flat``, and the
marks ``edge``, ``cross`` and ``random`` (dots of markrgb with probability ``random``). Files
are PNG: a 2D image, a cube from one image (``gridsize`` and ``gridlayout``, or one square
repeated on every face) or from six (``fileright`` ... ``fileback``).
"""
from __future__ import annotations

import numpy as np

FACES = "RLUDFB"                      # right left up down front back: GL's +x -x +y -y +z -z
MAX_SIZE = 1024                       # texels per side at most (larger builtins are reduced)


def _floats(t, key, default):
    v = t.get(key)
    if v is None:
        return np.asarray(default, float)
    return np.asarray([float(x) for x in str(v).split()], float) if isinstance(v, str) \
        else np.asarray(v, float)


def _int(t, key, default):
    try:
        return int(float(t.get(key, default)))
    except (TypeError, ValueError):
        return default


def _interp(rgb1, rgb2, pos):
    """MuJoCo's interp: a sigmoid of ``pos`` in (-1, 1) from rgb2 (-1) to rgb1 (+1)."""
    alpha = 0.5 * (1.0 + pos / np.sqrt(1.0 + pos * pos) * np.sqrt(2.0))
    alpha = np.clip(alpha, 0.0, 1.0)[..., None]
    return alpha * rgb1 + (1.0 - alpha) * rgb2


def _checker(w, h, c1, c2):
    img = np.empty((h, w, 3))
    img[:, :] = c2
    img[:h // 2, :w // 2] = c1
    img[h // 2:, w // 2:] = c1
    return img


def _marks(img, t, markrgb):
    """Edge, cross or random marks on one face (h, w, 3), in place."""
    mark = t.get("mark", "none")
    h, w = img.shape[:2]
    if mark == "edge":
        img[:, [0, w - 1]] = markrgb
        img[[0, h - 1], :] = markrgb
    elif mark == "cross":
        img[:, w // 2] = markrgb
        img[h // 2, :] = markrgb
    elif mark == "random":
        p = float(t.get("random", 0.01))
        if p > 0:
            rng = np.random.default_rng(42)
            img[rng.random((h, w)) < p] = markrgb


def _u8(img):
    return np.ascontiguousarray(np.clip(img * 255.0, 0, 255).astype(np.uint8))


def builtin_2d(t):
    rgb1 = _floats(t, "rgb1", (0.8, 0.8, 0.8))
    rgb2 = _floats(t, "rgb2", (0.5, 0.5, 0.5))
    markrgb = _floats(t, "markrgb", (0.0, 0.0, 0.0))
    w = min(max(_int(t, "width", 0), 1), MAX_SIZE)
    h = min(max(_int(t, "height", 0), 1), MAX_SIZE)
    kind = t.get("builtin", "none")
    if kind == "gradient":
        x = 2.0 * np.arange(w) / max(w - 1, 1) - 1.0
        y = 1.0 - 2.0 * np.arange(h) / max(h - 1, 1)
        pos = 2.0 * np.sqrt(x[None, :] ** 2 + y[:, None] ** 2) - 1.0
        img = _interp(rgb2, rgb1, pos)
    elif kind == "checker":
        img = _checker(w, h, rgb1, rgb2)
    else:
        img = np.empty((h, w, 3))
        img[:] = rgb1
    _marks(img, t, markrgb)
    return _u8(img)


def builtin_cube(t):
    rgb1 = _floats(t, "rgb1", (0.8, 0.8, 0.8))
    rgb2 = _floats(t, "rgb2", (0.5, 0.5, 0.5))
    markrgb = _floats(t, "markrgb", (0.0, 0.0, 0.0))
    w = min(max(_int(t, "width", 0), 1), MAX_SIZE // 2)
    kind = t.get("builtin", "none")
    faces = np.empty((6, w, w, 3))
    if kind == "gradient":
        x = 2.0 * np.arange(w) / max(w - 1, 1) - 1.0
        y = 1.0 - 2.0 * np.arange(w) / max(w - 1, 1)
        x, y = x[None, :], y[:, None]
        r = np.sqrt(1.0 + x * x + y * y)
        elside = np.arcsin(y / r) / (0.5 * np.pi)
        elup = 1.0 - np.arccos(1.0 / r) / (0.5 * np.pi)
        side = _interp(rgb1, rgb2, elside)
        faces[[0, 1, 4, 5]] = side
        faces[2] = _interp(rgb1, rgb2, elup)
        faces[3] = _interp(rgb1, rgb2, -elup)
    elif kind == "checker":
        for k in range(6):
            a, b = (rgb1, rgb2) if k < 4 else (rgb2, rgb1)
            faces[k] = _checker(w, w, a, b)
    else:
        faces[:] = rgb1
        faces[3] = rgb2
    for k in range(6):
        if t.get("mark") == "random":       # MuJoCo scatters the dots over the whole cube image
            continue
        _marks(faces[k], t, markrgb)
    if t.get("mark") == "random":
        flat = faces.reshape(6 * w, w, 3)
        _marks(flat, t, markrgb)
    return _u8(faces)


def _read_png(path):
    from PIL import Image
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), np.uint8)


def _flip(img, t):
    if str(t.get("hflip", "false")).lower() == "true":
        img = img[:, ::-1]
    if str(t.get("vflip", "false")).lower() == "true":
        img = img[::-1]
    return np.ascontiguousarray(img)


def cube_from_files(t):
    if t.get("file"):
        img = _read_png(t["file"])
        rows, cols = (int(v) for v in str(t.get("gridsize", "1 1")).split())
        if rows == 1 and cols == 1:                  # one square on every face
            square = img[:, :img.shape[0]]
            return np.ascontiguousarray(np.broadcast_to(square, (6,) + square.shape))
        w = img.shape[1] // cols
        layout = str(t.get("gridlayout", "")).upper()
        faces = np.zeros((6, w, w, 3), np.uint8)
        for k, ch in enumerate(layout[:rows * cols]):
            if ch in FACES:
                r, c = divmod(k, cols)
                faces[FACES.index(ch)] = img[r * w:(r + 1) * w, c * w:(c + 1) * w]
        return faces
    names = ("fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")
    imgs = [_read_png(t[n]) if t.get(n) else None for n in names]
    w = max((i.shape[0] for i in imgs if i is not None), default=1)
    faces = np.zeros((6, w, w, 3), np.uint8)
    for k, img in enumerate(imgs):
        if img is not None and img.shape[:2] == (w, w):
            faces[k] = img
    return faces


def texture_pixels(m, i):
    """("2d", (h, w, 3)) or ("cube", (6, w, w, 3)) uint8 pixels of texture ``i``."""
    t = m.textures[i]
    kind = t.get("type", "cube")
    cube = kind in ("cube", "skybox")
    if t.get("builtin", "none") not in ("none", None):
        return ("cube", builtin_cube(t)) if cube else ("2d", builtin_2d(t))
    if cube:
        return "cube", _flip_cube(cube_from_files(t), t)
    return "2d", _flip(_read_png(t["file"]), t)


def _flip_cube(faces, t):
    return np.ascontiguousarray(np.stack([_flip(f, t) for f in faces]))


def skybox_index(m) -> int:
    """The first skybox texture of the model, or -1."""
    for i, t in enumerate(getattr(m, "textures", None) or []):
        if t.get("type") == "skybox":
            return i
    return -1


def default_grid(size: int = 256):
    """The floor texture of a plane without one: two shades of grey-blue in 2 x 2 squares with
    light edges (as the Menagerie's ground plane), tinted by the plane's colour."""
    t = {"builtin": "checker", "rgb1": "0.42 0.46 0.52", "rgb2": "0.34 0.38 0.44",
         "mark": "edge", "markrgb": "0.62 0.66 0.72", "width": str(size), "height": str(size)}
    return builtin_2d(t)

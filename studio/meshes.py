"""Procedural unit meshes for the geom primitives, and flat-shaded triangle soups for mesh geoms.

Every mesh is returned as ``(vertices, indices)``: ``vertices`` is float32 ``(n, 7)`` holding
position, normal and a capsule end marker (0 for every shape but the capsule), ``indices`` is uint32 ``(m,)`` (three per triangle, counter-clockwise seen from
outside). The renderer scales the unit shapes per instance:

- sphere: radius 1 (an ellipsoid is a sphere scaled by its three semi-axes)
- cylinder: radius 1, half-height 1 along z, with caps
- capsule: a unit sphere cut at its equator; the vertices of the upper half carry end = +1, of the
  lower half end = -1, and the vertex shader moves them by +-half-length along z (so one instance
  with scale (radius, radius, half-length) draws the whole capsule, the tube joining the two rims)
- box: half-size 1 (the cube [-1, 1]^3)
- plane: the square [-1, 1]^2 at z = 0 facing +z
"""
from __future__ import annotations

import numpy as np


def _pack(pos, nrm, idx, end=None):
    pos = np.asarray(pos, np.float32).reshape(-1, 3)
    end = np.zeros((pos.shape[0], 1)) if end is None else np.asarray(end).reshape(-1, 1)
    v = np.concatenate([pos, np.asarray(nrm, np.float32).reshape(-1, 3), end], axis=1)
    return np.ascontiguousarray(v, dtype=np.float32), np.ascontiguousarray(idx, dtype=np.uint32)


def _grid_indices(rows: int, cols: int) -> np.ndarray:
    """Two triangles per cell of a (rows + 1) x (cols + 1) vertex grid stored row by row."""
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    a = (i * (cols + 1) + j).ravel()
    b = a + cols + 1
    return np.stack([a, b, a + 1, a + 1, b, b + 1], axis=1).ravel()


def _rings(theta, nlon):
    phi = np.linspace(0.0, 2.0 * np.pi, nlon + 1)        # azimuth (seam duplicated)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    return np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1).reshape(-1, 3)


def sphere(nlon: int = 20, nlat: int = 10):
    """Unit UV sphere with smooth normals."""
    pos = _rings(np.linspace(0.0, np.pi, nlat + 1), nlon)   # polar angle from +z
    return _pack(pos, pos, _grid_indices(nlat, nlon))


def capsule(nlon: int = 20, nlat: int = 10):
    """Unit capsule: two hemispheres (end = +1 above, -1 below) joined by the tube between rims."""
    half = nlat // 2
    theta = np.concatenate([np.linspace(0.0, np.pi / 2, half + 1),
                            np.linspace(np.pi / 2, np.pi, half + 1)])
    pos = _rings(theta, nlon)
    end = np.repeat([1.0, -1.0], (half + 1) * (nlon + 1))
    return _pack(pos, pos, _grid_indices(2 * half + 1, nlon), end)


def cylinder(n: int = 20):
    """Unit cylinder (radius 1, z in [-1, 1]) with flat caps; sides have smooth normals."""
    ang = np.linspace(0.0, 2.0 * np.pi, n + 1)
    c, s = np.cos(ang), np.sin(ang)
    pos, nrm, idx = [], [], []
    # side: two rings
    for z in (-1.0, 1.0):
        for k in range(n + 1):
            pos.append((c[k], s[k], z))
            nrm.append((c[k], s[k], 0.0))
    for k in range(n):
        a, b = k, k + n + 1
        idx += [a, a + 1, b, b, a + 1, b + 1]
    # caps: a centre vertex and a ring each
    for z in (-1.0, 1.0):
        base = len(pos)
        pos.append((0.0, 0.0, z))
        nrm.append((0.0, 0.0, z))
        for k in range(n + 1):
            pos.append((c[k], s[k], z))
            nrm.append((0.0, 0.0, z))
        for k in range(n):
            if z > 0:
                idx += [base, base + 1 + k, base + 2 + k]
            else:
                idx += [base, base + 2 + k, base + 1 + k]
    return _pack(pos, nrm, idx)


def box():
    """The cube [-1, 1]^3, four vertices per face so that normals are flat."""
    pos, nrm, idx = [], [], []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sign
            u = np.zeros(3)
            u[(axis + 1) % 3] = 1.0
            v = np.cross(n, u)
            base = len(pos)
            for du, dv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                pos.append(n + du * u + dv * v)
                nrm.append(n)
            idx += [base, base + 1, base + 2, base, base + 2, base + 3]
    return _pack(pos, nrm, idx)


def plane(n: int = 1):
    """The square [-1, 1]^2 at z = 0 facing +z, split into n x n quads."""
    g = np.linspace(-1.0, 1.0, n + 1)
    x, y = np.meshgrid(g, g, indexing="ij")
    pos = np.stack([x.ravel(), y.ravel(), np.zeros(x.size)], axis=1)
    nrm = np.tile([0.0, 0.0, 1.0], (pos.shape[0], 1))
    idx = []
    for i in range(n):
        for j in range(n):
            a = i * (n + 1) + j
            b = a + n + 1
            idx += [a, b, b + 1, a, b + 1, a + 1]
    return _pack(pos, nrm, idx)


def triangle_soup(vert, face):
    """Flat-shaded mesh from shared vertices (k, 3) and triangles (f, 3): one normal per face."""
    vert = np.asarray(vert, np.float64).reshape(-1, 3)
    face = np.asarray(face, np.int64).reshape(-1, 3)
    if face.size == 0:
        return _pack(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))
    tri = vert[face]                                        # (f, 3, 3)
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
    pos = tri.reshape(-1, 3)
    nrm = np.repeat(n, 3, axis=0)
    return _pack(pos, nrm, np.arange(pos.shape[0]))


CREASE_COS = np.cos(np.radians(60.0))     # corners more than 60 degrees off the smooth normal


def smooth_mesh(vert, face):
    """Indexed mesh with smooth normals (area-weighted averages of the faces at each vertex,
    as MuJoCo's smoothnormal), split at creases: a corner whose face turns more than 60 degrees
    from its vertex's smooth normal keeps the face's own normal (box edges stay sharp)."""
    vert = np.asarray(vert, np.float64).reshape(-1, 3)
    face = np.asarray(face, np.int64).reshape(-1, 3)
    if face.size == 0:
        return _pack(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))
    tri = vert[face]
    fn = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])     # area-weighted
    area = np.linalg.norm(fn, axis=1)
    keep = area > 1e-12 * max(float(area.max()), 1e-300)              # no degenerate triangles
    face, fn = face[keep], fn[keep]
    if face.size == 0:
        return _pack(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))
    vn = np.zeros_like(vert)
    for k in range(3):
        np.add.at(vn, face[:, k], fn)
    vn /= np.maximum(np.linalg.norm(vn, axis=1, keepdims=True), 1e-30)
    unit = fn / np.maximum(np.linalg.norm(fn, axis=1, keepdims=True), 1e-30)
    corner_v = face.reshape(-1)
    corner_f = np.repeat(np.arange(face.shape[0]), 3)
    sharp = np.einsum("ij,ij->i", vn[corner_v], unit[corner_f]) < CREASE_COS
    # a smooth corner shares its vertex; a sharp one gets a vertex of its own
    key = np.where(sharp, vert.shape[0] + np.arange(corner_v.size), corner_v)
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    pos = vert[corner_v[first]]
    nrm = np.where(sharp[first, None], unit[corner_f[first]], vn[corner_v[first]])
    return _pack(pos, nrm, inverse.reshape(-1))


def cluster(vert, face, cell):
    """Vertex clustering decimation: vertices in the same cube of side ``cell`` merge into
    their mean; triangles that collapse are dropped, duplicates too. Returns (vert, face)."""
    vert = np.asarray(vert, np.float64).reshape(-1, 3)
    face = np.asarray(face, np.int64).reshape(-1, 3)
    q = np.floor((vert - vert.min(axis=0)) / cell).astype(np.int64)
    _, cid, counts = np.unique(q, axis=0, return_inverse=True, return_counts=True)
    cid = cid.reshape(-1)
    merged = np.zeros((counts.size, 3))
    np.add.at(merged, cid, vert)
    merged /= counts[:, None]
    f = cid[face]
    keep = (f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])
    f = f[keep]
    if f.size:                                  # one triangle per set of three vertices
        _, first = np.unique(np.sort(f, axis=1), axis=0, return_index=True)
        f = f[np.sort(first)]
    return merged, f


LOD_DIVISIONS = (256, 96, 40, 16)         # cells across the mesh's bounding box, finest first


def mesh_lods(vert, face):
    """Levels of detail of a mesh: [(cell size, (vertices, indices))], the full mesh first
    (cell 0), then vertex-clustered levels each with at most two thirds of the previous
    level's triangles. A geom is drawn with the coarsest level whose cells cover at most about
    a pixel (studio.renderer)."""
    vert = np.asarray(vert, np.float64).reshape(-1, 3)
    face = np.asarray(face, np.int64).reshape(-1, 3)
    levels = [(0.0, smooth_mesh(vert, face))]
    if face.shape[0] < 600:
        return levels
    diag = float(np.linalg.norm(vert.max(axis=0) - vert.min(axis=0)))
    ntri = face.shape[0]
    for div in LOD_DIVISIONS:
        cell = diag / div
        v, f = cluster(vert, face, cell)
        if f.shape[0] == 0:
            break
        if f.shape[0] <= 2 * ntri / 3:
            levels.append((cell, smooth_mesh(v, f)))
            ntri = f.shape[0]
    return levels

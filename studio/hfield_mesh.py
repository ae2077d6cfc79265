"""Triangle meshes of height fields, built once per model and drawn like mesh geoms.

A height field's mesh is expressed in its geom frame (the renderer places it with the geom's pose
and unit scale): the surface grid (x = -radius_x + c dx, y = -radius_y + r dy,
z = data elevation_z, cells split along the (r, c)-(r+1, c+1) diagonal as in collision), with
smooth normals (area-weighted averages of the adjacent triangle normals), the four side walls
down to z = -base_z and the bottom, with flat normals. Arrays follow ``studio.meshes``: vertices
float32 (n, 6) position + normal, indices uint32, counter-clockwise seen from outside.

The renderer keeps mesh geoms by mesh id; height fields come after them, at ``shape_id`` =
nmesh + hfield id, so that the scene's ("mesh", id) draw lists reach them unchanged.
"""
from __future__ import annotations

import numpy as np

from .meshes import _pack


def shape_id(m, hid: int) -> int:
    """Id under which the renderer keeps the mesh of height field hid."""
    return int(getattr(m, "nmesh", 0)) + int(hid)


def grid(m, hid: int):
    """Local grid points (nrow, ncol, 3) of height field hid."""
    nrow, ncol = int(m.hfield_nrow[hid]), int(m.hfield_ncol[hid])
    sx, sy, sz, _ = (float(v) for v in m.hfield_size[hid])
    adr = int(m.hfield_adr[hid])
    z = np.asarray(m.hfield_data[adr:adr + nrow * ncol], float).reshape(nrow, ncol) * sz
    x = np.linspace(-sx, sx, ncol)
    y = np.linspace(-sy, sy, nrow)
    xx, yy = np.meshgrid(x, y)                      # (nrow, ncol): row index along y
    return np.stack([xx, yy, z], axis=-1)


def surface_triangles(nrow: int, ncol: int) -> np.ndarray:
    """Vertex indices (into the row-major grid) of the surface triangles, counter-clockwise
    seen from +z: per cell (r+1, c), (r, c), (r+1, c+1) and (r, c), (r, c+1), (r+1, c+1)."""
    r, c = np.meshgrid(np.arange(nrow - 1), np.arange(ncol - 1), indexing="ij")
    v00 = (r * ncol + c).ravel()
    v01 = v00 + 1
    v10 = v00 + ncol
    v11 = v10 + 1
    t0 = np.stack([v10, v00, v11], axis=1)
    t1 = np.stack([v00, v01, v11], axis=1)
    return np.concatenate([t0, t1]).astype(np.int64)


def hfield_mesh(m, hid: int):
    """(vertices, indices) of height field hid in its geom frame."""
    g = grid(m, hid)
    nrow, ncol = g.shape[:2]
    base = -float(m.hfield_size[hid][3])
    pos = g.reshape(-1, 3)
    tri = surface_triangles(nrow, ncol)
    fn = np.cross(pos[tri[:, 1]] - pos[tri[:, 0]], pos[tri[:, 2]] - pos[tri[:, 0]])
    nrm = np.zeros_like(pos)
    for k in range(3):
        np.add.at(nrm, tri[:, k], fn)
    nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-12)
    parts = [(pos, nrm, tri)]
    # side walls: the boundary profile and its copy at the base, outward normals
    for edge, normal in ((g[0, :], (0, -1, 0)), (g[-1, ::-1], (0, 1, 0)),
                         (g[::-1, 0], (-1, 0, 0)), (g[:, -1], (1, 0, 0))):
        k = edge.shape[0]
        bottom = edge.copy()
        bottom[:, 2] = base
        wall = np.concatenate([edge, bottom])
        i = np.arange(k - 1)
        # quad (top i, top i+1, bottom i+1, bottom i), counter-clockwise seen from outside
        quads = np.concatenate([np.stack([k + i, k + i + 1, i + 1], axis=1),
                                np.stack([k + i, i + 1, i], axis=1)])
        parts.append((wall, np.tile(np.asarray(normal, float), (2 * k, 1)), quads))
    c = g[[0, 0, -1, -1], [0, -1, -1, 0]].copy()
    c[:, 2] = base
    parts.append((c, np.tile([0.0, 0.0, -1.0], (4, 1)), np.array([[0, 2, 1], [0, 3, 2]])))
    allpos, allnrm, allidx, off = [], [], [], 0
    for p, n, t in parts:
        allpos.append(p)
        allnrm.append(n)
        allidx.append(t.ravel() + off)
        off += p.shape[0]
    return _pack(np.concatenate(allpos), np.concatenate(allnrm), np.concatenate(allidx))


def hfield_meshes(m) -> dict:
    """{shape_id: (vertices, indices)} for every height field of the model (cached on m)."""
    cache = getattr(m, "_hfield_meshes", None)
    if cache is None:
        cache = {shape_id(m, h): hfield_mesh(m, h) for h in range(int(getattr(m, "nhfield", 0)))}
        try:
            object.__setattr__(m, "_hfield_meshes", cache)
        except (AttributeError, TypeError):
            pass
    return cache

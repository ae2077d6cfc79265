"""Mesh assets: file readers (STL, OBJ, MSH) and MuJoCo's mesh processing.

``load_mesh`` turns file bytes into vertices and triangles. ``process_mesh`` does what MuJoCo's
compiler does to a mesh asset: scale it, compute its volume, centre of mass and inertia (per unit
density), then move the vertices into the frame of the centre of mass and principal axes. The
transform of that frame (``pos``, ``quat``) is applied by the MJCF compiler to every geom that uses
the mesh: ``geom_pos = pos_geom + R(quat_geom) @ info.pos``, ``geom_quat = quat_geom * info.quat``.
``fit_geom`` gives the primitive fitted to a mesh (a geom with ``type`` != mesh and a ``mesh``).

Conventions follow MuJoCo (src/user/user_mesh.cc) so that compiled fields agree with MuJoCo:
vertices are read as float32, duplicate STL vertices are merged in order of first appearance, the
eigen-decomposition is the same Jacobi iteration with the same ordering (descending principal
moments) so that ``vert`` and ``quat`` match ``mesh_vert`` and ``geom_quat``.
"""
from __future__ import annotations

import math
import struct
from typing import NamedTuple

import numpy as np

from ..collision_convex import CLUSTER
from ..constants import MINVAL
from ..enums import GeomType
from ..types import ModelError
from . import frames
from .inertia import eig3
_MAX_COORD = 2.0 ** 30  # MuJoCo refuses larger STL coordinates

INERTIA_MODES = ("legacy", "convex", "exact", "shell")


class MeshInfo(NamedTuple):
    """A processed mesh. All arrays are float64 / int64."""
    vert: np.ndarray       # (n,3) vertices in the mesh frame (com, principal axes)
    face: np.ndarray       # (m,3) triangles, indices into vert
    volume: float          # volume (surface area for inertia="shell"); mass = density * volume
    pos: np.ndarray        # (3,) origin of the mesh frame in the file frame (centre of mass)
    quat: np.ndarray       # (4,) orientation of the mesh frame in the file frame (w, x, y, z)
    inertia: np.ndarray    # (3,) principal moments of inertia per unit density, descending
    hull_face: np.ndarray  # (k,3) convex hull triangles, indices into vert, oriented outward
    boxsz: np.ndarray      # (3,) half-sizes of the box with the same inertia (for fitting)
    aamm: np.ndarray       # (6,) axis-aligned bounds in the mesh frame: min xyz, max xyz
    hull_only: bool = False  # no faces were given: the surface is the convex hull


# ----------------------------------------------------------------------------------------------
# readers
# ----------------------------------------------------------------------------------------------
def load_mesh(data: bytes, filename: str):
    """Read a mesh file: returns (vertices (n,3) float64, faces (m,3) int64).

    Supported: binary and ASCII STL, OBJ, MuJoCo's binary MSH. Vertex coordinates are rounded to
    float32 as MuJoCo stores them. STL vertices that repeat exactly are merged (order of first
    appearance). An OBJ or MSH file with vertices but no faces gives an empty face array: the
    convex hull is then used as the surface (see ``process_mesh``).
    """
    if isinstance(data, str):
        data = data.encode()
    data = bytes(data)
    ext = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    if ext == "stl":
        vert, face = _load_stl(data, filename)
        vert, face = merge_repeated(vert, face)
    elif ext == "obj":
        vert, face = _load_obj(data, filename)
    elif ext == "msh":
        vert, face = _load_msh(data, filename)
    else:
        raise ModelError(f"unknown mesh file extension '.{ext}' (expected .stl, .obj or .msh)"
                         if ext else "mesh file has no extension (expected .stl, .obj or .msh)",
                         file=filename)
    _check_vertices(vert, filename)
    if face.size and (face.min() < 0 or face.max() >= len(vert)):
        bad = int(np.argmax((face < 0).any(axis=1) | (face >= len(vert)).any(axis=1)))
        raise ModelError(f"face {bad} refers to a vertex that does not exist "
                         f"({len(vert)} vertices)", file=filename)
    return vert.astype(np.float64), face.astype(np.int64).reshape(-1, 3)


def _check_vertices(vert, filename):
    if len(vert) == 0:
        raise ModelError("mesh has no vertices", file=filename)
    if not np.all(np.isfinite(vert)):
        i = int(np.argmax(~np.isfinite(vert).all(axis=1)))
        raise ModelError(f"vertex {i} has a coordinate that is not finite", file=filename)


def merge_repeated(vert, face):
    """Merge exactly repeated vertices (float32 comparison, -0 == 0), keeping first appearances."""
    v32 = np.ascontiguousarray(vert, dtype=np.float32) + np.float32(0.0)  # -0.0 -> +0.0
    if len(v32) == 0:
        return v32.astype(np.float64), face
    keys = v32.view(np.dtype((np.void, 12))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if len(first) == len(v32):
        return v32.astype(np.float64), face
    order = np.argsort(first, kind="stable")        # unique groups in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    new_index = rank[inverse.ravel()]
    return v32[first[order]].astype(np.float64), new_index[face]


def _load_stl(data, filename):
    n = len(data)
    if n == 0:
        raise ModelError("STL file is empty", file=filename)
    if n >= 84:
        ntri = struct.unpack_from("<I", data, 80)[0]
        if n == 84 + 50 * ntri:
            if ntri == 0:
                raise ModelError("STL file has no faces", file=filename)
            return _binary_stl(data, ntri, filename)
    head = data[:512].lstrip()
    if head[:5].lower() == b"solid" and (b"facet" in data[:4096] or b"endsolid" in data):
        return _ascii_stl(data, filename)
    if n < 84:
        raise ModelError(f"binary STL is truncated: {n} bytes, the header alone needs 84",
                         file=filename)
    ntri = struct.unpack_from("<I", data, 80)[0]
    if ntri == 0:
        raise ModelError("STL file has no faces", file=filename)
    expect = 84 + 50 * ntri
    raise ModelError(f"binary STL has the wrong size: the header announces {ntri} triangles "
                     f"({expect} bytes) but the file has {n} bytes"
                     + (" (truncated)" if n < expect else ""), file=filename)


def _binary_stl(data, ntri, filename):
    rec = np.dtype([("normal", "<f4", (3,)), ("v", "<f4", (3, 3)), ("attr", "<u2")])
    tri = np.frombuffer(data, dtype=rec, count=ntri, offset=84)
    vert = tri["v"].reshape(-1, 3).astype(np.float32)
    if not np.all(np.isfinite(vert)):
        i = int(np.argmax(~np.isfinite(vert).all(axis=1)))
        raise ModelError(f"vertex of triangle {i // 3} is not finite", file=filename)
    if np.any(np.abs(vert) > _MAX_COORD):
        raise ModelError("vertex coordinate exceeds 2^30 in STL file", file=filename)
    face = np.arange(3 * ntri, dtype=np.int64).reshape(-1, 3)
    return vert, face


def _ascii_stl(data, filename):
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    verts, faces, loop = [], [], None
    for lineno, line in enumerate(text.splitlines(), 1):
        tok = line.split()
        if not tok:
            continue
        key = tok[0].lower()
        if key == "vertex":
            if loop is None:
                raise ModelError("'vertex' outside of an 'outer loop'", file=filename, line=lineno)
            try:
                xyz = [float(t) for t in tok[1:4]]
            except ValueError:
                raise ModelError("a vertex coordinate is not a number",
                                 file=filename, line=lineno) from None
            if len(xyz) != 3:
                raise ModelError("a vertex needs three coordinates", file=filename, line=lineno)
            loop.append(len(verts))
            verts.append(xyz)
        elif key == "outer":
            loop = []
        elif key == "endloop":
            if loop is None or len(loop) < 3:
                raise ModelError("a facet needs at least three vertices", file=filename,
                                 line=lineno)
            for k in range(1, len(loop) - 1):      # fan triangulation (normally one triangle)
                faces.append((loop[0], loop[k], loop[k + 1]))
            loop = None
        elif key in ("solid", "endsolid", "facet", "endfacet"):
            continue
        else:
            raise ModelError("a line of the ASCII STL starts with an unknown keyword",
                             file=filename, line=lineno)
    if not faces:
        raise ModelError("STL file has no faces", file=filename)
    vert = np.array(verts, dtype=np.float64).astype(np.float32)
    if np.any(np.abs(vert) > _MAX_COORD):
        raise ModelError("vertex coordinate exceeds 2^30 in STL file", file=filename)
    return vert, np.array(faces, dtype=np.int64)


def _load_obj(data, filename):
    text = data.decode("utf-8", errors="replace")
    verts, faces, quads = [], [], []
    lines = text.splitlines()
    i = 0
    lineno = 0
    while i < len(lines):
        line = lines[i]
        lineno = i + 1
        i += 1
        while line.endswith("\\") and i < len(lines):   # line continuation
            line = line[:-1] + " " + lines[i]
            i += 1
        hash_at = line.find("#")
        if hash_at >= 0:
            line = line[:hash_at]
        tok = line.split()
        if not tok:
            continue
        key = tok[0]
        if key == "v":
            try:
                xyz = [float(t) for t in tok[1:4]]
            except ValueError:
                raise ModelError("a vertex coordinate is not a number",
                                 file=filename, line=lineno) from None
            if len(xyz) != 3:
                raise ModelError("a vertex needs three coordinates", file=filename, line=lineno)
            verts.append(xyz)
        elif key == "f":
            idx = []
            for t in tok[1:]:
                head = t.split("/", 1)[0]
                try:
                    k = int(head)
                except ValueError:
                    raise ModelError("a face index is not an integer", file=filename,
                                     line=lineno) from None
                if k > 0:
                    k -= 1
                elif k < 0:
                    k += len(verts)          # relative to the vertices read so far
                else:
                    raise ModelError("face index 0 is invalid (OBJ indices start at 1)",
                                     file=filename, line=lineno)
                if not 0 <= k < len(verts):
                    raise ModelError(f"face index {head} refers to a vertex not defined yet "
                                     f"({len(verts)} so far)", file=filename, line=lineno)
                idx.append(k)
            if len(idx) < 3:
                raise ModelError("a face needs at least three vertices", file=filename,
                                 line=lineno)
            if len(idx) == 4:
                quads.append(len(faces))
            for k in range(1, len(idx) - 1):   # fan triangulation of polygons
                faces.append((idx[0], idx[k], idx[k + 1]))
        # vt vn vp o g s l p usemtl mtllib ...: not needed for physics
    if not verts:
        raise ModelError("OBJ file has no vertices", file=filename)
    vert = np.array(verts, dtype=np.float64).astype(np.float32)
    face = np.array(faces, dtype=np.int64).reshape(-1, 3)
    # quads are split along their shorter diagonal, compared in float32 as MuJoCo's OBJ reader
    # does (ties go to the b-d diagonal)
    for q in quads:
        a, b, c = face[q]
        d = face[q + 1][2]
        e02, e13 = vert[c] - vert[a], vert[d] - vert[b]
        l02 = e02[0] * e02[0] + e02[1] * e02[1] + e02[2] * e02[2]
        l13 = e13[0] * e13[0] + e13[1] * e13[1] + e13[2] * e13[2]
        if not l02 < l13:
            face[q] = (a, b, d)
            face[q + 1] = (b, c, d)
    return vert, face


def _load_msh(data, filename):
    n = len(data)
    if n < 16:
        raise ModelError(f"MSH file is truncated: {n} bytes, the header needs 16", file=filename)
    nv, nn, nt, nf = struct.unpack_from("<4i", data, 0)
    if nv < 4 or nf < 0 or nn < 0 or nt < 0 or (nn and nn != nv) or (nt and nt != nv):
        raise ModelError(f"invalid sizes in MSH header (vertices {nv}, normals {nn}, "
                         f"texcoords {nt}, faces {nf})", file=filename)
    expect = 16 + 12 * nv + 12 * nn + 8 * nt + 12 * nf
    if n != expect:
        raise ModelError(f"MSH file has the wrong size: the header announces {expect} bytes, "
                         f"the file has {n}", file=filename)
    vert = np.frombuffer(data, dtype="<f4", count=3 * nv, offset=16).reshape(-1, 3)
    off = 16 + 12 * nv + 12 * nn + 8 * nt
    face = np.frombuffer(data, dtype="<i4", count=3 * nf, offset=off).reshape(-1, 3)
    return vert.astype(np.float32), face.astype(np.int64)


# ----------------------------------------------------------------------------------------------
# rotation helpers (MuJoCo conventions: quaternion w, x, y, z; R maps frame to parent)
# ----------------------------------------------------------------------------------------------
def quat2mat(q):
    """3x3 rotation matrix of a quaternion (MuJoCo's compiler formula)."""
    return np.array(frames.quat2mat([float(x) for x in q])).reshape(3, 3)


def _sum(x):
    """Sum of x left to right, as a C loop accumulates it (numpy's sum is pairwise)."""
    return float(np.add.accumulate(x)[-1]) if len(x) else 0.0


def _dot3(a, b):
    return (a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1]) + a[:, 2] * b[:, 2]


def _mulmatvec(m, v):
    """m @ v for each row v of an (n, 3) array, each entry summed left to right."""
    return np.stack([(m[i, 0] * v[:, 0] + m[i, 1] * v[:, 1]) + m[i, 2] * v[:, 2]
                     for i in range(3)], axis=1)


# ----------------------------------------------------------------------------------------------
# processing
# ----------------------------------------------------------------------------------------------
def _triangles(v, f):
    """Per-triangle area, unit normal and centre, each as MuJoCo computes it (user_mesh.cc
    triangle()): centre (a + b + c) / 3, normal (b - a) x (c - a) / |.|, area |.| / 2, and
    faces with |(b - a) x (c - a)| < MINVAL ignored (area 0)."""
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    center = (a + b + c) / 3
    e1, e2 = b - a, c - a
    cross = np.stack([e1[:, 1] * e2[:, 2] - e1[:, 2] * e2[:, 1],
                      e1[:, 2] * e2[:, 0] - e1[:, 0] * e2[:, 2],
                      e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]], axis=1)
    length = np.sqrt(_dot3(cross, cross))
    ok = length >= MINVAL
    normal = cross.copy()
    normal[ok] = cross[ok] / length[ok, None]
    area = np.where(ok, 0.5 * length, 0.0)
    return area, normal, center


def convex_hull(vert, maxhullvert=-1):
    """Triangles of the convex hull of vert (indices into vert), oriented outward.

    Empty (0,3) when the points span no volume.
    """
    from scipy.spatial import ConvexHull, QhullError
    if len(vert) < 4:
        return np.zeros((0, 3), dtype=np.int64)
    opts = "Qt"
    if maxhullvert is not None and maxhullvert > -1:
        # as MuJoCo: Q9 adds the furthest of all furthest points first, TA stops after that
        # many vertices beyond the initial simplex
        opts += f" Q9 TA{max(maxhullvert - 4, 0)}"
    try:
        hull = ConvexHull(vert, qhull_options=opts)
    except (QhullError, ValueError):
        return np.zeros((0, 3), dtype=np.int64)
    tri = hull.simplices.astype(np.int64)
    a, b, c = vert[tri[:, 0]], vert[tri[:, 1]], vert[tri[:, 2]]
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0
    tri[flip] = tri[flip][:, [0, 2, 1]]
    return tri


def hull_graph(hull_face):
    """MuJoCo's convex hull graph of a mesh (mesh_graph), from the hull's triangles:
    numvert, numface, vert_edgeadr[numvert], vert_globalid[numvert],
    edge_localid[numvert + 3 numface], face_globalid[3 numface]. The hull vertices are the
    mesh vertices vert_globalid (in index order); the neighbours of hull vertex i, as hull
    vertex indices, start at edge_localid[vert_edgeadr[i]] and end with -1 (support functions
    climb them). None when there is no hull or its triangles do not close a surface."""
    tri = np.asarray(hull_face, dtype=np.int64).reshape(-1, 3)
    nface = len(tri)
    if nface == 0:
        return None
    globalid = np.unique(tri)
    nvert = len(globalid)
    local = np.full(globalid[-1] + 1, -1, dtype=np.int64)
    local[globalid] = np.arange(nvert)
    edges = np.unique(np.concatenate([tri[:, [a, b]] for a in range(3) for b in range(3)
                                      if a != b]), axis=0)
    if len(edges) != 3 * nface:      # a closed triangulated surface has 3 F / 2 edges
        return None
    src, dst = local[edges[:, 0]], local[edges[:, 1]]
    count = np.bincount(src, minlength=nvert)
    edgeadr = np.concatenate([[0], np.cumsum(count + 1)[:-1]])
    edge_local = np.full(nvert + 3 * nface, -1, dtype=np.int64)
    # edges are sorted by source: the k-th edge of vertex i goes to edgeadr[i] + k
    first = np.concatenate([[0], np.cumsum(count)[:-1]])
    edge_local[edgeadr[src] + np.arange(len(src)) - first[src]] = dst
    return np.concatenate([[nvert, nface], edgeadr, globalid, edge_local, tri.ravel()])


def hull_extrema(vert, graph):
    """The hull vertex (local id in graph) farthest along each of the 27 directions
    (cx, cy, cz) in {-1, 0, 1}^3, at index 9 (cx + 1) + 3 (cy + 1) + cz + 1 (MuJoCo's
    mesh_extrema): the seeds of hill climbing."""
    nvert = graph[0]
    hull = np.asarray(vert)[graph[2 + nvert:2 + 2 * nvert]]
    grid = np.array([(cx, cy, cz) for cx in (-1, 0, 1) for cy in (-1, 0, 1) for cz in (-1, 0, 1)])
    return np.argmax(hull @ grid.T, axis=0)


def hull_clusters(vert, graph):
    """Clusters of the vertices of a mesh's convex hull (of every vertex without a hull graph)
    for the bounded searches of plane : mesh (collision_convex._plane_mesh_patch): the
    vertices split at the median of their longest extent until a part has at most CLUSTER.
    Rows: per cluster its bounding sphere (centre of the part's box, radius), then CLUSTER rows
    (vertex, its hull index), the part's last vertex repeated to fill them."""
    nvert = graph[0] if graph is not None else len(vert)
    ids = graph[2 + nvert:2 + 2 * nvert] if graph is not None else np.arange(nvert)
    pts = np.asarray(vert, dtype=np.float64)[ids]
    parts, stack = [], [np.arange(nvert)]
    while stack:
        p = stack.pop()
        if len(p) <= CLUSTER:
            parts.append(np.sort(p))
            continue
        axis = int(np.argmax(pts[p].max(axis=0) - pts[p].min(axis=0)))
        p = p[np.argsort(pts[p, axis], kind="stable")]
        stack += [p[len(p) // 2:], p[:len(p) // 2]]
    rows = np.zeros((len(parts) * (1 + CLUSTER), 4))
    for c, p in enumerate(parts):
        centre = 0.5 * (pts[p].min(axis=0) + pts[p].max(axis=0))
        radius = np.sqrt(((pts[p] - centre) ** 2).sum(axis=1)).max()
        fill = np.concatenate([p, np.full(CLUSTER - len(p), p[-1])])
        base = c * (1 + CLUSTER)
        rows[base] = (*centre, radius * (1.0 + 1e-9))       # (covers the rounding of radius)
        rows[base + 1:base + 1 + CLUSTER, :3] = pts[fill]
        rows[base + 1:base + 1 + CLUSTER, 3] = fill
    return rows


def mesh_graphs(infos, need):
    """(mesh_graphadr, mesh_graph, mesh_extrema, mesh_clusteradr, mesh_clusternum,
    mesh_cluster) of the meshes flagged in `need`; address -1, extrema 0 and no clusters for
    the others."""
    adr = np.full(len(infos), -1, dtype=np.int64)
    extrema = np.zeros((len(infos), 27), dtype=np.int64)
    cluster_adr = np.full(len(infos), -1, dtype=np.int64)
    cluster_num = np.zeros(len(infos), dtype=np.int64)
    parts, size = [], 0
    clusters, rows = [], 0
    for k, info in enumerate(infos):
        if not need[k]:
            continue
        graph = hull_graph(info.hull_face)
        if graph is not None:
            adr[k] = size
            extrema[k] = hull_extrema(info.vert, graph)
            parts.append(graph)
            size += len(graph)
        clusters.append(hull_clusters(info.vert, graph))
        cluster_adr[k], cluster_num[k] = rows, len(clusters[-1]) // (1 + CLUSTER)
        rows += len(clusters[-1])
    return (adr, (np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)), extrema,
            cluster_adr, cluster_num, np.concatenate(clusters) if clusters else np.zeros((0, 4)))


def process_mesh(vertices, faces, scale=(1.0, 1.0, 1.0), inertia_mode="legacy", *,
                 refpos=None, refquat=None, maxhullvert=-1, name="mesh", file=None):
    """Scale the mesh, compute volume / centre of mass / principal inertia, move it to that frame.

    inertia_mode (MuJoCo's <mesh inertia=...>, default "legacy" as in MuJoCo):
      legacy: volume of tetrahedra from the face centroid taken in absolute value,
      exact: signed volumes (the mesh must be closed and consistently oriented),
      convex: signed volumes of the convex hull,
      shell: mass spread uniformly on the surface (volume then holds the area).
    refpos/refquat: MuJoCo's (deprecated) mesh reference frame, applied before scaling.
    Bad meshes raise ModelError naming the mesh (and file when given).
    """
    if inertia_mode not in INERTIA_MODES:
        raise ModelError(f"unknown mesh inertia mode {inertia_mode!r} (expected one of "
                         f"{', '.join(INERTIA_MODES)})", file=file, attribute="inertia")
    v = np.array(vertices, dtype=np.float64).reshape(-1, 3)
    f = np.array(faces, dtype=np.int64).reshape(-1, 3)
    scale = np.asarray(scale, dtype=np.float64).reshape(3)
    if len(v) < 4:
        raise ModelError(f"mesh '{name}': at least 4 vertices required", file=file)
    if not np.all(np.isfinite(v)):
        raise ModelError(f"mesh '{name}': vertex coordinates must be finite", file=file)
    if f.size and (f.min() < 0 or f.max() >= len(v)):
        raise ModelError(f"mesh '{name}': face refers to a vertex that does not exist", file=file)

    # a mirroring scale flips the orientation of every face: swap two corners
    if scale[0] * scale[1] * scale[2] < 0:
        f = f[:, [0, 2, 1]]

    # no faces: the surface is the convex hull
    hull_only = len(f) == 0
    if hull_only:
        f = convex_hull(v, maxhullvert)
        if len(f) == 0:
            raise ModelError(f"mesh '{name}': the vertices span no volume, cannot make a hull",
                             file=file)

    # exact inertia needs consistently oriented faces: a directed edge may appear only once
    if inertia_mode == "exact":
        area, _, _ = _triangles(v, f)
        good = f[area > math.sqrt(MINVAL)]
        edges = np.concatenate([good[:, [0, 1]], good[:, [1, 2]], good[:, [2, 0]]])
        if len(edges):
            e, cnt = np.unique(edges, axis=0, return_counts=True)
            if np.any(cnt > 1):
                a, b = e[np.argmax(cnt > 1)] + 1
                raise ModelError(f"faces of mesh '{name}' have inconsistent orientation; check "
                                 f"the faces containing vertices {a} and {b}", file=file)

    # user offset, rotation, scaling (MuJoCo's ApplyTransformations)
    if refpos is not None and np.any(np.asarray(refpos) != 0):
        v = v - np.asarray(refpos, dtype=np.float64)
    if refquat is not None and np.any(np.asarray(refquat) != (1, 0, 0, 0)):
        R = quat2mat(frames.normalized([float(x) for x in refquat]))
        v = _mulmatvec(R.T, v)
    if np.any(scale != 1):
        v = v * scale

    # Sums over faces run in file order, left to right, and each product is formed as MuJoCo
    # forms it (user_mesh.cc), so that volume, centre of mass and inertia agree to the last bit.
    # area-weighted centroid of the faces: apex of the tetrahedra
    area, normal, center = _triangles(v, f)
    total_area = _sum(area)
    if total_area < MINVAL:
        raise ModelError(f"mesh '{name}': surface area is too small", file=file)
    facecen = np.array([_sum(area * center[:, k]) for k in range(3)]) / total_area

    inertia_faces = convex_hull(v, maxhullvert) if inertia_mode == "convex" else f
    if inertia_mode == "convex":
        if len(inertia_faces) == 0:
            raise ModelError(f"mesh '{name}': volume is too small (flat convex hull); "
                             "try inertia='shell'", file=file)
        area, normal, center = _triangles(v, inertia_faces)

    # centre of mass: tetrahedra (face, facecen) of volume (c - facecen).n * area / 3,
    # each with its centroid at 3/4 c + 1/4 facecen
    if inertia_mode == "shell":
        weight = area
    else:
        weight = _dot3(center - facecen, normal) * area / 3
        if inertia_mode == "legacy":
            weight = np.abs(weight)
    total = _sum(weight)
    com = np.array([_sum(weight * (center[:, k] * 3.0 / 4.0 + facecen[k] / 4.0))
                    for k in range(3)])
    if total >= MINVAL:
        com = com / total
    if inertia_mode == "shell":
        if total < MINVAL:
            raise ModelError(f"mesh '{name}': surface area is too small", file=file)
    elif total < MINVAL:
        if total < 0:
            raise ModelError(f"mesh '{name}': volume is negative (misoriented triangles)",
                             file=file)
        raise ModelError(f"mesh '{name}': volume is too small; try inertia='shell'", file=file)

    # second moments about the com, per tetrahedron (com, D, E, F) or triangle shell:
    # P_kl = vol / C (2 (D_k D_l + E_k E_l + F_k F_l) + D_k E_l + D_l E_k + D_k F_l + D_l F_k
    #                 + E_k F_l + E_l F_k), C = 20 for solids, 12 for shells
    vc = v - com
    area, normal, center = _triangles(vc, inertia_faces)
    if inertia_mode == "shell":
        vol = area
    else:
        vol = _dot3(center, normal) * area / 3
        if inertia_mode == "legacy":
            vol = np.abs(vol)
    volume = _sum(vol)
    D, E, F = vc[inertia_faces[:, 0]], vc[inertia_faces[:, 1]], vc[inertia_faces[:, 2]]
    C = 12 if inertia_mode == "shell" else 20
    P = []
    for k, l in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)):
        term = (2 * ((D[:, k] * D[:, l] + E[:, k] * E[:, l]) + F[:, k] * F[:, l])
                + D[:, k] * E[:, l] + D[:, l] * E[:, k] + D[:, k] * F[:, l]
                + D[:, l] * F[:, k] + E[:, k] * F[:, l] + E[:, l] * F[:, k])
        P.append(_sum(vol / C * term))
    full = [P[1] + P[2], -P[3], -P[4],
            -P[3], P[0] + P[2], -P[5],
            -P[4], -P[5], P[0] + P[1]]

    eigval, quat = eig3(full, tol=1e-7)
    eigval, quat = np.array(eigval), np.array(quat)
    if eigval[2] <= 0:
        raise ModelError(f"mesh '{name}': eigenvalue of mesh inertia must be positive", file=file)
    rtol, atol = 1e-6, 1e-9
    a, b, c = eigval
    if (a + b < c * (1 - rtol) - atol or a + c < b * (1 - rtol) - atol
            or b + c < a * (1 - rtol) - atol):
        raise ModelError(f"mesh '{name}': eigenvalues of mesh inertia violate A + B >= C",
                         file=file)
    boxsz = 0.5 * np.sqrt(6 * np.array([b + c - a, a + c - b, a + b - c]) / volume)

    # vertices in the principal frame: R' (v - com)
    vert = _mulmatvec(quat2mat(frames.negquat(list(quat))), vc)
    aamm = np.concatenate([vert.min(axis=0), vert.max(axis=0)])
    hull = convex_hull(vert, maxhullvert)
    return MeshInfo(vert=vert, face=f, volume=volume, pos=com, quat=quat, inertia=eigval,
                    hull_face=hull, boxsz=boxsz, aamm=aamm, hull_only=hull_only)


def mesh_geom_size(info: MeshInfo):
    """geom_size MuJoCo gives a mesh geom: the largest |coordinate| of the mesh per axis."""
    return np.maximum(np.abs(info.aamm[:3]), np.abs(info.aamm[3:]))


def fit_geom(info: MeshInfo, geom_type, fitaabb: bool = False, fitscale: float = 1.0):
    """Primitive fitted to a mesh (MuJoCo's mjCMesh::FitGeom): returns (size (3,), pos (3,)).

    pos is the offset to compose with the geom frame together with info.quat:
    geom_pos = pos_geom + R(quat_geom) @ pos, geom_quat = quat_geom * info.quat.
    Without fitaabb the sizes come from the box of equivalent inertia; with fitaabb from the
    bounding box in the mesh frame (MuJoCo 4: sphere radius = largest half-size, capsule and
    cylinder radius = larger of the x, y half-sizes), centred on that box.
    """
    gt = GeomType(int(geom_type))
    size = np.zeros(3)
    pos = np.array(info.pos, dtype=np.float64)
    if not fitaabb:
        bx = info.boxsz
        if gt == GeomType.SPHERE:
            size[0] = (bx[0] + bx[1] + bx[2]) / 3
        elif gt == GeomType.CAPSULE:
            size[0] = (bx[0] + bx[1]) / 2
            size[1] = max(0.0, bx[2] - size[0] / 2)
        elif gt == GeomType.CYLINDER:
            size[0] = (bx[0] + bx[1]) / 2
            size[1] = bx[2]
        elif gt in (GeomType.ELLIPSOID, GeomType.BOX):
            size[:] = bx
        else:
            raise ModelError(f"cannot fit a geom of type {gt.name.lower()} to a mesh")
    else:
        # bounding box in the mesh frame; its centre moves the geom (rotated into the file frame)
        lo, hi = info.aamm[:3], info.aamm[3:]
        cen = (lo + hi) / 2
        half = hi - cen
        pos = pos + np.array(frames.rotvecquat([float(x) for x in cen],
                                                [float(x) for x in info.quat]))
        if gt == GeomType.SPHERE:
            size[0] = half.max()
        elif gt == GeomType.CAPSULE:
            size[0] = max(half[0], half[1])
            size[1] = max(0.0, half[2] - size[0])
        elif gt == GeomType.CYLINDER:
            size[0] = max(half[0], half[1])
            size[1] = half[2]
        elif gt in (GeomType.ELLIPSOID, GeomType.BOX):
            size[:] = half
        else:
            raise ModelError(f"cannot fit a geom of type {gt.name.lower()} to a mesh")
    return size * fitscale, pos

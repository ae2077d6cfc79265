"""General convex collision: support functions, GJK distance, EPA penetration, plane-convex.

Every convex geom is described by its support function s(u) = argmax_{x in geom} u . x (a mesh
by its vertices, i.e. its convex hull). GJK finds the distance between two geoms (the point of
the Minkowski difference A - B nearest to the origin, with witness points on A and B); when the
geoms overlap, EPA expands the final GJK simplex into a polytope of A - B and returns the
penetration depth, the normal and the witness points. The depth is the least overlap of the
two geoms' projections over all directions, and the normal that direction; where EPA would
need too many faces (deep contacts of smooth geoms) Newton's method on that overlap finishes
it. A contact reports, as MuJoCo, dist (signed), the normal from geom 1 to geom 2 and the
point midway between the witnesses.

Multiple contacts for flat contacts between polytopes (box-mesh, mesh-mesh), where a single
point would let the geoms rock: the faces of both geoms nearly orthogonal to the normal
(vertices within a small tolerance of each support plane) are intersected in the contact plane
(Sutherland-Hodgman clipping of one polygon by the other) and at most 4 points are kept
(the deepest and the ones farthest from it), each with its own depth along the normal, none
deeper than the EPA depth (which stays the deepest contact when no clipped point reaches it);
none with multiccd disabled (MuJoCo then gives one contact). A model with nativeccd disabled
collides these pairs by MPR instead (collision_mpr).

Scratch (no allocation in a step) lives in Data: ``gjk_simplex``, the ``epa_*`` arrays, ``col_work``
(face polygons and their clipping) and ``col_hullpt``/``col_hullid`` (the clusters of a hull
that reach below a plane, or a hull's heights along a face normal).
"""
import math

from numba import float64, uint64

from .collision_primitive import normalize3, put
from .enums import DisableBit, GeomType
from .jit import inlined, jit
from .math import (MINVAL, add3, cross3, dot3, mat9, mulmattvec3, mulmatvec3, norm3, scl3, sub3,
                   vec3)

SPHERE = int(GeomType.SPHERE)
CAPSULE = int(GeomType.CAPSULE)
ELLIPSOID = int(GeomType.ELLIPSOID)
CYLINDER = int(GeomType.CYLINDER)
BOX = int(GeomType.BOX)
MESH = int(GeomType.MESH)
MULTICCD = int(DisableBit.MULTICCD)

GJK_ITER = 100
EPA_TOL = 1e-10      # EPA stops when a new support point improves the face distance by less
POLISH_ITER = 20     # Newton steps on the overlap after EPA stopped short of its tolerance
POLISH_EPS = 1e-6    # their finite-difference step of the support direction
TOLPLANEMESH = 1e-3  # least spacing of plane-mesh contacts (fraction of rbound)
FACE_TOL = 1e-3      # relative tolerance for the vertices of a flat contact face
HILLCLIMB_MIN = 10   # meshes with fewer vertices are searched exhaustively (MuJoCo's value)
CLUSTER = 16         # hull vertices per cluster of the plane-mesh searches (m.mesh_cluster)


# ------------------------------------------------------------------------------------------------
# support functions
# ------------------------------------------------------------------------------------------------
@jit
def hull_size(m, g):
    """Number of vertices of the convex hull of mesh geom g (all its vertices when the mesh
    has no hull graph)."""
    k = m.geom_dataid[g]
    adr = m.mesh_graphadr[k]
    return m.mesh_vertnum[k] if adr < 0 else m.mesh_graph[adr]


@jit
def hull_vertex(m, g, i):
    """Vertex i of the convex hull of mesh geom g, in the geom frame."""
    k = m.geom_dataid[g]
    a = m.mesh_vertadr[k]
    adr = m.mesh_graphadr[k]
    if adr >= 0:
        a += m.mesh_graph[adr + 2 + m.mesh_graph[adr] + i]      # vert_globalid[i]
    return (m.mesh_vert[a, 0], m.mesh_vert[a, 1], m.mesh_vert[a, 2])


@inlined
def hull_layout(m, g):
    """(base, globalid, graph) of mesh geom g for hull_row: its first row of mesh_vert, the
    address of its hull's vert_globalid in mesh_graph, and whether it has a hull graph. For
    loops over a hull that read mesh_vert and mesh_graph as locals, with unsigned indices."""
    k = m.geom_dataid[g]
    adr = m.mesh_graphadr[k]
    graph = adr >= 0
    return (uint64(m.mesh_vertadr[k]), uint64(adr + 2 + m.mesh_graph[adr]) if graph
            else uint64(0), graph)


@inlined
def hull_row(G, base, globalid, graph, i):
    """Row of mesh_vert of hull vertex i (hull_vertex), G being mesh_graph and the rest from
    hull_layout."""
    iu = uint64(i)
    return base + (uint64(G[globalid + iu]) if graph else iu)


@jit
def _grid(x):
    """Index 0, 1, 2 of the grid coordinate -1, 0, 1 nearest to the direction component x."""
    return 2 if x > 0.4 else (0 if x < -0.4 else 1)


@inlined
def mesh_support(m, d, g, ld):
    """Support point of mesh geom g along ld (geom frame).

    A mesh with a hull graph and at least HILLCLIMB_MIN vertices is searched as MuJoCo's
    mjc_hillclimbSupport: start from the better of the vertex of the previous call
    (d.geom_meshwarm) and the precomputed extremum of the nearest of 27 grid directions
    (mesh_extrema), then move to the neighbour farthest along ld while one is farther: a local
    maximum of a linear function over the vertex graph of a convex polytope is the global one.
    Other meshes try every vertex."""
    k = m.geom_dataid[g]
    a = m.mesh_vertadr[k]
    adr = m.mesh_graphadr[k]
    V = m.mesh_vert
    if adr < 0 or m.mesh_vertnum[k] < HILLCLIMB_MIN:
        best = -1e300
        ib = a
        for i in range(a, a + m.mesh_vertnum[k]):
            v = ld[0] * V[i, 0] + ld[1] * V[i, 1] + ld[2] * V[i, 2]
            if v > best:
                best = v
                ib = i
        return (V[ib, 0], V[ib, 1], V[ib, 2])
    G = m.mesh_graph
    nvert = G[adr]
    edgeadr = adr + 2
    globalid = adr + 2 + nvert
    # seed: the extremum of the grid direction (cx, cy, cz), each -1, 0 or 1 by ld's sign
    i = m.mesh_extrema[k, 9 * _grid(ld[0]) + 3 * _grid(ld[1]) + _grid(ld[2])]
    j = a + G[globalid + i]
    best = ld[0] * V[j, 0] + ld[1] * V[j, 1] + ld[2] * V[j, 2]
    w = d.geom_meshwarm[g]
    if 0 <= w < nvert:                 # kept between steps: a stray value is ignored
        j = a + G[globalid + w]
        v = ld[0] * V[j, 0] + ld[1] * V[j, 1] + ld[2] * V[j, 2]
        if v >= best:
            best = v
            i = w
    prev = -1
    while i != prev:
        prev = i
        e = G[edgeadr + prev] + edgeadr + 2 * nvert
        while G[e] >= 0:
            j = a + G[globalid + G[e]]
            v = ld[0] * V[j, 0] + ld[1] * V[j, 1] + ld[2] * V[j, 2]
            if v > best:
                best = v
                i = G[e]
            e += 1
    d.geom_meshwarm[g] = i
    j = a + G[globalid + i]
    return (V[j, 0], V[j, 1], V[j, 2])


@inlined
def support_local(m, d, g, ld):
    """Support point of geom g in its own frame along the (not necessarily unit) ld."""
    t = m.geom_type[g]
    s0 = m.geom_size[g, 0]
    s1 = m.geom_size[g, 1]
    s2 = m.geom_size[g, 2]
    if t == BOX:
        return (s0 if ld[0] >= 0 else -s0, s1 if ld[1] >= 0 else -s1, s2 if ld[2] >= 0 else -s2)
    if t == SPHERE:
        u, _ = normalize3(ld)
        return scl3(u, s0)
    if t == CAPSULE:
        u, _ = normalize3(ld)
        return (u[0] * s0, u[1] * s0, u[2] * s0 + (s1 if ld[2] >= 0 else -s1))
    if t == ELLIPSOID:
        # x = S^2 u / |S u|
        u, _ = normalize3((ld[0] * s0, ld[1] * s1, ld[2] * s2))
        return (u[0] * s0, u[1] * s1, u[2] * s2)
    if t == CYLINDER:
        r = math.sqrt(ld[0] * ld[0] + ld[1] * ld[1])
        z = s1 if ld[2] > 0 else (-s1 if ld[2] < 0 else 0.0)
        if r > MINVAL:
            return (ld[0] / r * s0, ld[1] / r * s0, z)
        return (0.0, 0.0, z)
    if t == MESH:
        return mesh_support(m, d, g, ld)
    return (0.0, 0.0, 0.0)


@jit
def support(m, d, g, u):
    """Support point of geom g along the world direction u, in world coordinates.

    g < 0 stands for the height-field prism held in d.hfield_prism (6 world vertices), and
    g >= ngeom for the core of sphere or capsule g - ngeom (its centre or its axis segment)."""
    ngeom = m.geom_type.shape[0]
    if g >= ngeom:
        g -= ngeom
        p = vec3(d.geom_xpos, g)
        if m.geom_type[g] != CAPSULE:
            return p
        ax = (d.geom_xmat[g, 2], d.geom_xmat[g, 5], d.geom_xmat[g, 8])
        return add3(p, scl3(ax, m.geom_size[g, 1] if dot3(ax, u) >= 0 else -m.geom_size[g, 1]))
    if g < 0:
        P = d.hfield_prism
        ib = 0
        best = -1e300
        for i in range(6):
            v = u[0] * P[i, 0] + u[1] * P[i, 1] + u[2] * P[i, 2]
            if v > best:
                best = v
                ib = i
        return (P[ib, 0], P[ib, 1], P[ib, 2])
    r = mat9(d.geom_xmat, g)
    p = support_local(m, d, g, mulmattvec3(r, u))
    return add3(mulmatvec3(r, p), vec3(d.geom_xpos, g))


# ------------------------------------------------------------------------------------------------
# plane : convex (ellipsoid, mesh)
# ------------------------------------------------------------------------------------------------
@jit
def plane_convex(m, d, g1, g2, margin):
    """Contacts of a plane and an ellipsoid (its deepest point) or a mesh (up to 4 vertices
    below the margin, spread over the contact patch, as many as MuJoCo 4 reports).

    The first contact is the deepest point (the support along -normal), as MuJoCo's
    mjc_PlaneConvex. For a mesh the others are vertices below the margin (distinct from
    those already chosen), picked greedily to span a large quadrilateral: the vertex
    farthest from the first; the one making the largest triangle with those two; the one
    farthest outside that triangle (or, when none is outside, the one farthest from the
    three). A flat face thus rests on its outermost corners (a cube face on its 4 corners),
    and a patch with at most 4 vertices below the margin gives all of them."""
    cd = d.col_dist
    cp = d.col_pos
    cf = d.col_frame
    pos1 = vec3(d.geom_xpos, g1)
    n = (d.geom_xmat[g1, 2], d.geom_xmat[g1, 5], d.geom_xmat[g1, 8])
    s = support(m, d, g2, scl3(n, -1.0))
    dist = dot3(n, sub3(s, pos1))
    if dist > margin:
        return 0
    put(cd, cp, cf, 0, dist, add3(s, scl3(n, -0.5 * dist)), n)
    if m.geom_type[g2] != MESH:
        return 1
    return _plane_mesh_patch(m, d, g2, n, pos1, s, margin)


# the searches of _plane_mesh_patch: the objective of each pick at a point (u, v) of the plane
FARTHEST = 0     # from contact 0 (the origin): u^2 + v^2
AREA = 1         # twice the area of the triangle with contacts 0 and 1: |u1 v - v1 u|
OUTSIDE = 2      # distance outside triangle 0, 1, 2 (times an edge): the largest outward area
APART = 3        # the squared distance to the nearest of contacts 0, 1, 2


@inlined
def _pick_value(kind, u, v, u1, v1, u2, v2, orient):
    """The objective of a plane-mesh pick (FARTHEST ... APART) at (u, v), and the squared
    distance to the nearest contact so far (the candidates closer than TOLPLANEMESH do not
    count)."""
    d0 = u * u + v * v
    d1 = (u - u1) * (u - u1) + (v - v1) * (v - v1)
    d2 = (u - u2) * (u - u2) + (v - v2) * (v - v2)
    if kind == FARTHEST:
        return d0, d0
    if kind == AREA:
        return abs(u1 * v - v1 * u), min(d0, d1)
    near = min(d0, d1, d2)
    if kind == OUTSIDE:
        return -min(orient * (u1 * v - v1 * u),
                    orient * ((u2 - u1) * (v - v1) - (v2 - v1) * (u - u1)),
                    orient * (v2 * (u - u2) - u2 * (v - v2))), near
    return near, near


@inlined
def _pick_bound(kind, u, v, r, u1, v1, u2, v2, orient):
    """An upper bound of the objective of a pick over the disk of radius r about (u, v) (the
    objectives grow by at most their slope times r; APART's distances by r)."""
    if kind == FARTHEST:
        return (math.sqrt(u * u + v * v) + r) ** 2
    if kind == AREA:
        return abs(u1 * v - v1 * u) + math.sqrt(u1 * u1 + v1 * v1) * r
    if kind == OUTSIDE:
        e1 = math.sqrt(u1 * u1 + v1 * v1)
        e2 = math.sqrt((u2 - u1) * (u2 - u1) + (v2 - v1) * (v2 - v1))
        e3 = math.sqrt(u2 * u2 + v2 * v2)
        return max(-orient * (u1 * v - v1 * u) + e1 * r,
                   -orient * ((u2 - u1) * (v - v1) - (v2 - v1) * (u - u1)) + e2 * r,
                   -orient * (v2 * (u - u2) - u2 * (v - v2)) + e3 * r)
    return min((math.sqrt(u * u + v * v) + r) ** 2,
               (math.sqrt((u - u1) * (u - u1) + (v - v1) * (v - v1)) + r) ** 2,
               (math.sqrt((u - u2) * (u - u2) + (v - v2) * (v - v2)) + r) ** 2)


@inlined
def _in_plane(frame, x):
    """Coordinates (u, v) in the plane, relative to contact 0, of x (geom frame)."""
    _, _, t1, t2, u0, v0 = frame
    return dot3(t1, x) - u0, dot3(t2, x) - v0


@inlined
def _consider(X, j, index, frame, margin, tol2, kind, u1, v1, u2, v2, orient, best, row, at):
    """(best, row, at) after vertex row j of X (hull index `index`) is considered for a pick:
    taken when below the margin, not nearer than tol2 to a contact so far, and better than the
    best (or as good with a lower hull index)."""
    nl, off = frame[0], frame[1]
    x = vec3(X, j)
    if dot3(nl, x) + off > margin:
        return best, row, at
    u, v = _in_plane(frame, x)
    value, near = _pick_value(kind, u, v, u1, v1, u2, v2, orient)
    if (value > best or (value == best and row >= 0 and index < at)) and near >= tol2:
        return value, j, index
    return best, row, at


@jit
def _pick(m, d, k, nlive, kind, frame, margin, tol2, floor, u1, v1, u2, v2, orient):
    """The row (of m.mesh_cluster, or of m.mesh_vert for a mesh without clusters) of the hull
    vertex below the margin that maximises the pick's objective above floor (the lowest hull
    index among equals), none nearer than tol2 to a contact so far; -1 if there is none. Of
    the clusters below the margin (d.col_hullid, their centres in the plane in d.col_hullpt),
    only those whose bound reaches the best so far are read (the bound's slack covers its
    rounding). A mesh made collidable after loading has no clusters: all its vertices are
    read."""
    adr = m.mesh_clusteradr[k]
    best = floor
    row = -1
    at = -1.0
    if adr < 0:
        V = m.mesh_vert
        a = m.mesh_vertadr[k]
        for j in range(a, a + m.mesh_vertnum[k]):
            best, row, at = _consider(V, j, float64(j - a), frame, margin, tol2, kind, u1, v1,
                                      u2, v2, orient, best, row, at)
        return row
    C = m.mesh_cluster
    P = d.col_hullpt
    live = d.col_hullid
    for q in range(nlive):
        base = adr + live[q] * (1 + CLUSTER)
        if _pick_bound(kind, P[q, 0], P[q, 1], C[base, 3], u1, v1, u2, v2, orient) \
                < best * (1.0 - 1e-9):
            continue
        for j in range(base + 1, base + 1 + CLUSTER):
            best, row, at = _consider(C, j, C[j, 3], frame, margin, tol2, kind, u1, v1, u2, v2,
                                      orient, best, row, at)
    return row


@jit
def _plane_mesh_patch(m, d, g2, n, pos1, s, margin):
    """Contacts 1-3 of plane : mesh g2 (see plane_convex), contact 0 being at its deepest hull
    point s; returns the number of contacts.

    Each pick is the hull vertex below the margin that maximises its objective (FARTHEST,
    AREA, OUTSIDE, APART) in the plane (coordinates relative to contact 0 along two tangents
    of the normal, in the geom frame: distances and areas in the plane do not change under the
    geom's rotation), the lowest hull index among equals, as a scan in hull order would find;
    a candidate counts when it is TOLPLANEMESH * rbound away, in the plane, from every contact
    so far. The hull's vertices are searched cluster by cluster (m.mesh_cluster, made by the
    compiler): a first pass keeps the clusters whose sphere reaches below the margin, with their
    centres in the plane (d.col_hullid, d.col_hullpt); a pick then reads only the clusters
    whose bound of its objective over the sphere (a point moves in the plane by at most its
    distance) reaches the best so far: on a dense hull deep in the floor, those near the
    patch's rim. A mesh made collidable after loading has no clusters: its picks read every
    vertex."""
    k = m.geom_dataid[g2]
    adr = m.mesh_clusteradr[k]
    X = m.mesh_cluster if adr >= 0 else m.mesh_vert       # the rows the picks return
    r2 = mat9(d.geom_xmat, g2)
    p2 = vec3(d.geom_xpos, g2)
    rbound = m.geom_rbound[g2]
    tol2 = (TOLPLANEMESH * rbound) ** 2
    floor = 1e-12 * rbound * rbound         # below: the same point or a straight line
    # geom frame: the normal nl, tangents t1 and t2, depth of x = nl . x + off
    nl = mulmattvec3(r2, n)
    ax = (1.0, 0.0, 0.0) if abs(nl[0]) < 0.6 else (0.0, 1.0, 0.0)
    t1 = cross3(nl, ax)
    t1 = scl3(t1, 1.0 / norm3(t1))
    t2 = cross3(nl, t1)
    off = dot3(n, sub3(p2, pos1))
    x0 = mulmattvec3(r2, sub3(s, p2))
    u0 = dot3(t1, x0)
    v0 = dot3(t2, x0)
    frame = (nl, off, t1, t2, u0, v0)
    # the clusters whose sphere reaches below the margin (with a slack for rounding)
    P = d.col_hullpt
    live = d.col_hullid
    nlive = 0
    C = m.mesh_cluster
    for q in range(m.mesh_clusternum[k] if adr >= 0 else 0):
        base = adr + q * (1 + CLUSTER)
        c = vec3(C, base)
        if dot3(nl, c) + off - C[base, 3] > margin + 1e-9 * rbound:
            continue
        P[nlive, 0], P[nlive, 1] = _in_plane(frame, c)
        live[nlive] = q
        nlive += 1
    j1 = _pick(m, d, k, nlive, FARTHEST, frame, margin, tol2, floor, 0.0, 0.0, 0.0, 0.0, 0.0)
    if j1 < 0:
        return 1
    _plane_mesh_put(d, g2, n, pos1, X, j1, 1)
    u1, v1 = _in_plane(frame, vec3(X, j1))
    j2 = _pick(m, d, k, nlive, AREA, frame, margin, tol2, floor, u1, v1, 0.0, 0.0, 0.0)
    if j2 < 0:
        return 2
    _plane_mesh_put(d, g2, n, pos1, X, j2, 2)
    u2, v2 = _in_plane(frame, vec3(X, j2))
    # the farthest outside an edge of triangle 0, 1, 2 (outward areas positive), or, with
    # none outside, the farthest from the three
    orient = 1.0 if u1 * v2 - v1 * u2 > 0 else -1.0
    j3 = _pick(m, d, k, nlive, OUTSIDE, frame, margin, tol2, floor, u1, v1, u2, v2, orient)
    if j3 < 0:
        j3 = _pick(m, d, k, nlive, APART, frame, margin, tol2, floor, u1, v1, u2, v2, orient)
    if j3 < 0:
        return 3
    _plane_mesh_put(d, g2, n, pos1, X, j3, 3)
    return 4


@jit
def _plane_mesh_put(d, g2, n, pos1, X, j, count):
    """Contact `count` of plane : mesh at the vertex of row j of X (m.mesh_cluster or
    m.mesh_vert): midway between the vertex and the plane, at the vertex's depth, along the
    plane's normal."""
    v = add3(mulmatvec3(mat9(d.geom_xmat, g2), vec3(X, j)), vec3(d.geom_xpos, g2))
    depth = dot3(n, sub3(v, pos1))
    put(d.col_dist, d.col_pos, d.col_frame, count, depth, add3(v, scl3(n, -0.5 * depth)), n)


# ------------------------------------------------------------------------------------------------
# GJK
# ------------------------------------------------------------------------------------------------
@jit
def _w(S, i):
    return (S[i, 0], S[i, 1], S[i, 2])


@jit
def _solve_subset(S, i0, i1, i2, i3, k):
    """Barycentric weights of the point of aff(S[i0..]) (k points) nearest to the origin, and
    whether the system is well posed. Normal equations E'E mu = -E'p0 with E = [p_i - p0]."""
    p0 = _w(S, i0)
    if k == 1:
        return (1.0, 0.0, 0.0, 0.0), True
    e1 = sub3(_w(S, i1), p0)
    if k == 2:
        a = dot3(e1, e1)
        if a < 1e-30:
            return (1.0, 0.0, 0.0, 0.0), False
        mu = -dot3(e1, p0) / a
        return (1.0 - mu, mu, 0.0, 0.0), True
    e2 = sub3(_w(S, i2), p0)
    if k == 3:
        # with n = e1 x e2: mu1 = (e2 x p0) . n / |n|^2, mu2 = (p0 x e1) . n / |n|^2 (ratios
        # of signed areas; the normal equations' determinant |e1|^2 |e2|^2 - (e1 . e2)^2
        # would lose all its digits on a thin triangle)
        nrm = cross3(e1, e2)
        det = dot3(nrm, nrm)
        if det <= 1e-14 * dot3(e1, e1) * dot3(e2, e2) or det < 1e-60:
            return (1.0, 0.0, 0.0, 0.0), False
        mu1 = dot3(cross3(e2, p0), nrm) / det
        mu2 = dot3(cross3(p0, e1), nrm) / det
        return (1.0 - mu1 - mu2, mu1, mu2, 0.0), True
    e3 = sub3(_w(S, i3), p0)
    # origin = p0 + E mu exactly (square system): Cramer's rule
    det = dot3(e1, cross3(e2, e3))
    scale = math.sqrt(dot3(e1, e1) * dot3(e2, e2) * dot3(e3, e3))
    if abs(det) <= 1e-12 * scale or scale < 1e-60:
        return (1.0, 0.0, 0.0, 0.0), False
    b = scl3(p0, -1.0)
    mu1 = dot3(b, cross3(e2, e3)) / det
    mu2 = dot3(e1, cross3(b, e3)) / det
    mu3 = dot3(e1, cross3(e2, b)) / det
    return (1.0 - mu1 - mu2 - mu3, mu1, mu2, mu3), True


@jit
def _closest(S, n):
    """Reduce the simplex S[:n] to the smallest face containing its point nearest to the origin
    (all subsets tried, Johnson's criterion: positive weights, nearest point); S is compacted
    and the weights are stored in column 9. Returns the new size and the nearest point."""
    best = 1e300
    bmask = 0
    bl = (1.0, 0.0, 0.0, 0.0)
    for mask in range(1, 1 << n):
        k = 0
        i0 = i1 = i2 = i3 = 0
        for i in range(n):
            if mask & (1 << i):
                if k == 0:
                    i0 = i
                elif k == 1:
                    i1 = i
                elif k == 2:
                    i2 = i
                else:
                    i3 = i
                k += 1
        lam, ok = _solve_subset(S, i0, i1, i2, i3, k)
        if not ok:
            continue
        good = True
        for i in range(k):
            if lam[i] <= 0.0:
                good = False
        if not good:
            continue
        v = add3(add3(scl3(_w(S, i0), lam[0]), scl3(_w(S, i1), lam[1])),
                 add3(scl3(_w(S, i2), lam[2]), scl3(_w(S, i3), lam[3])))
        dv = dot3(v, v)
        if dv < best:
            best = dv
            bmask = mask
            bl = lam
    if bmask == 0:
        # numerically degenerate: keep the vertex nearest to the origin
        ib = 0
        for i in range(n):
            if dot3(_w(S, i), _w(S, i)) < dot3(_w(S, ib), _w(S, ib)):
                ib = i
        bmask = 1 << ib
        bl = (1.0, 0.0, 0.0, 0.0)
    k = 0
    for i in range(n):
        if bmask & (1 << i):
            if k != i:
                for c in range(9):
                    S[k, c] = S[i, c]
            S[k, 9] = bl[k]
            k += 1
    v = (0.0, 0.0, 0.0)
    for i in range(k):
        v = add3(v, scl3(_w(S, i), S[i, 9]))
    return k, v


@jit
def _add_vertex(S, i, a, b):
    w = sub3(a, b)
    for c in range(3):
        S[i, c] = w[c]
        S[i, 3 + c] = a[c]
        S[i, 6 + c] = b[c]


@jit
def _center(d, g):
    """A point inside geom g (its frame origin; the centroid for the prism g < 0; the geom's
    origin for the core g >= ngeom)."""
    ngeom = d.geom_xpos.shape[0]
    if g >= ngeom:
        return vec3(d.geom_xpos, g - ngeom)
    if g < 0:
        P = d.hfield_prism
        c0 = c1 = c2 = 0.0
        for i in range(6):
            c0 += P[i, 0]
            c1 += P[i, 1]
            c2 += P[i, 2]
        return (c0 / 6.0, c1 / 6.0, c2 / 6.0)
    return vec3(d.geom_xpos, g)


@jit
def _midpoint(S, n):
    """The point midway between the witnesses on A and B of the simplex S[:n] (weights in
    column 9)."""
    p = (0.0, 0.0, 0.0)
    for i in range(n):
        p = add3(p, scl3(add3((S[i, 3], S[i, 4], S[i, 5]), (S[i, 6], S[i, 7], S[i, 8])),
                         0.5 * S[i, 9]))
    return p


@jit
def gjk(m, d, g1, g2, margin):
    """GJK on A - B. Returns (status, n, v, pos): status 0 separated by more than margin,
    1 separated within margin (v the nearest point of A - B, pos midway between its witnesses
    on A and B), 2 overlapping (the simplex S[:n] holds the origin, for EPA).

    Each iterate v has a lower bound on the distance, v.w / |v| with w the support point of
    A - B along -v, and |v| - v.w / |v| is how far the normal -v / |v| is from separating by
    the distance. Near the end |v| is far smaller than the points of A - B and roundoff can
    make the last subsimplex step swing v: the iterate with the smallest such gap is kept."""
    S = d.gjk_simplex
    v = sub3(_center(d, g1), vec3(d.geom_xpos, g2))
    if dot3(v, v) < 1e-20:
        v = (1.0, 0.0, 0.0)
    n = 0
    pos = (0.0, 0.0, 0.0)
    vbest = v
    pbest = pos
    gbest = 1e300
    for _ in range(GJK_ITER):
        a = support(m, d, g1, scl3(v, -1.0))
        b = support(m, d, g2, v)
        w = sub3(a, b)
        vv = dot3(v, v)
        vw = dot3(v, w)
        if vw > 0 and vw * vw > vv * margin * margin:
            return 0, n, v, pos
        if n > 0 and (vv - vw) / math.sqrt(vv) < gbest:
            gbest = (vv - vw) / math.sqrt(vv)
            vbest = v
            pbest = pos
        if n > 0 and vv - vw <= 1e-12 * vv:
            break
        dup = False
        for i in range(n):
            if S[i, 0] == w[0] and S[i, 1] == w[1] and S[i, 2] == w[2]:
                dup = True
        if dup:
            break
        _add_vertex(S, n, a, b)
        n += 1
        n, v = _closest(S, n)
        if n == 4 or dot3(v, v) < 1e-24:
            return 2, n, v, pos
        pos = _midpoint(S, n)
    return 1, n, vbest, pbest


# ------------------------------------------------------------------------------------------------
# EPA
# ------------------------------------------------------------------------------------------------
@jit
def _epa_face(d, f, i, j, k):
    """Set face f = (i, j, k) of the polytope with its outward normal and distance."""
    V = d.epa_vert
    a = _w(V, i)
    # normalised here, not by normalize3: its MINVAL floor would give a small face near the
    # origin (edges of 1e-8) an arbitrary normal and a wrong distance
    c = cross3(sub3(_w(V, j), a), sub3(_w(V, k), a))
    ln = math.sqrt(dot3(c, c))
    n = scl3(c, 1.0 / ln) if ln > 0.0 else c
    d.epa_face[f, 0] = i
    d.epa_face[f, 1] = j
    d.epa_face[f, 2] = k
    d.epa_fdata[f, 0] = n[0]
    d.epa_fdata[f, 1] = n[1]
    d.epa_fdata[f, 2] = n[2]
    # a face of no area (no normal) stays in the polytope, never seen nor nearest
    d.epa_fdata[f, 3] = dot3(n, a) if ln > 0.0 else 1e300
    d.epa_falive[f] = 1


@jit
def _epa_init(m, d, g1, g2, n):
    """Polytope vertices from the GJK simplex, completed to a tetrahedron; returns nvert."""
    S = d.gjk_simplex
    V = d.epa_vert
    for i in range(n):
        for c in range(9):
            V[i, c] = S[i, c]
    dirs = ((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, -1.0, 0.0),
            (0.0, 0.0, 1.0), (0.0, 0.0, -1.0))
    nv = n
    if nv == 1:
        for u in dirs:
            a = support(m, d, g1, u)
            b = support(m, d, g2, scl3(u, -1.0))
            w = sub3(a, b)
            q = sub3(w, _w(V, 0))
            if dot3(q, q) > 1e-20:
                _add_vertex(V, 1, a, b)
                nv = 2
                break
    if nv == 2:
        e = sub3(_w(V, 1), _w(V, 0))
        for u0 in dirs:
            u = cross3(e, u0)
            if dot3(u, u) < 1e-20:
                continue
            for sgn in (1.0, -1.0):
                us = scl3(u, sgn)
                a = support(m, d, g1, us)
                b = support(m, d, g2, scl3(us, -1.0))
                w = sub3(a, b)
                c = cross3(e, sub3(w, _w(V, 0)))
                if dot3(c, c) > 1e-20 * dot3(e, e):
                    _add_vertex(V, 2, a, b)
                    nv = 3
                    break
            if nv == 3:
                break
    if nv == 3:
        nrm = cross3(sub3(_w(V, 1), _w(V, 0)), sub3(_w(V, 2), _w(V, 0)))
        for sgn in (1.0, -1.0):
            us = scl3(nrm, sgn)
            a = support(m, d, g1, us)
            b = support(m, d, g2, scl3(us, -1.0))
            w = sub3(a, b)
            vol = dot3(nrm, sub3(w, _w(V, 0)))
            if abs(vol) > 1e-14 * math.sqrt(dot3(nrm, nrm)) * max(1e-10, math.sqrt(dot3(nrm, nrm))):
                _add_vertex(V, 3, a, b)
                nv = 4
                break
    return nv


@jit
def _epa_adjacent(F, f, g):
    """Whether faces f and g share an edge (each holds it in the other direction)."""
    for e in range(3):
        a = F[f, e]
        b = F[f, (e + 1) % 3]
        if ((F[g, 0] == b and F[g, 1] == a) or (F[g, 1] == b and F[g, 2] == a)
                or (F[g, 2] == b and F[g, 0] == a)):
            return True
    return False


@jit
def _epa_horizon(d, nf, f0, w):
    """Remove the faces seen from the new vertex w and put the horizon (the edges of the
    removed faces that no other removed face shares, directed as in the removed face) in
    d.epa_edge; returns the number of horizon edges.

    The removed faces are those seen from w that are connected to face f0 (the nearest,
    seen from w) across shared edges: the part of a convex polytope seen from a point is
    connected, and a face elsewhere that roundoff alone shows (a tiny face a few 1e-16 from
    w's side) would otherwise open a second horizon and fold the polytope. When a new face
    would still leave the origin outside (the polytope is no longer convex to working
    precision), or the edge scratch is full, nothing is changed and -1 is returned.

    The faces seen from w are listed from the end of d.epa_edge (column 0 the face, column 1
    set once the face is known to be connected to f0), the horizon from its start."""
    F = d.epa_face
    V = d.epa_vert
    E = d.epa_edge
    last = E.shape[0] - 1
    k = 0
    for f in range(nf):
        fn = (d.epa_fdata[f, 0], d.epa_fdata[f, 1], d.epa_fdata[f, 2])
        if d.epa_falive[f] and (f == f0 or dot3(fn, sub3(w, _w(V, F[f, 0]))) > 1e-14):
            if k > last // 2:
                return -1
            E[last - k, 0] = f
            E[last - k, 1] = 1 if f == f0 else 0
            k += 1
    # grow the connected part from f0 (marks: 0 not reached, 1 reached, 2 neighbours visited)
    grown = True
    while grown:
        grown = False
        for i in range(k):
            if E[last - i, 1] != 1:
                continue
            E[last - i, 1] = 2
            for j in range(k):
                if E[last - j, 1] == 0 and _epa_adjacent(F, E[last - i, 0], E[last - j, 0]):
                    E[last - j, 1] = 1
                    grown = True
    ne = 0
    for i in range(k):
        if E[last - i, 1] == 0:
            continue
        f = E[last - i, 0]
        for e in range(3):
            a = F[f, e]
            b = F[f, (e + 1) % 3]
            found = -1
            for q in range(ne):
                if E[q, 0] == b and E[q, 1] == a:
                    found = q
                    break
            if found >= 0:
                ne -= 1
                E[found, 0] = E[ne, 0]
                E[found, 1] = E[ne, 1]
            elif ne < last - k:
                E[ne, 0] = a
                E[ne, 1] = b
                ne += 1
            else:
                return -1
    for q in range(ne):
        # the new face (a, b, w) keeps the origin inside: ((b - a) x (w - a)) . a >= 0
        va = _w(V, E[q, 0])
        c = cross3(sub3(_w(V, E[q, 1]), va), sub3(w, va))
        if dot3(c, va) < -1e-12 * math.sqrt(dot3(c, c)):
            return -1
    for i in range(k):
        if E[last - i, 1] != 0:
            d.epa_falive[E[last - i, 0]] = 0
    return ne


@jit
def _overlap(m, d, g1, g2, u):
    """Support points a of A along u and b of B along -u, and the overlap (a - b) . u of
    the two geoms' projections on u (the penetration depth is its minimum over unit u)."""
    a = support(m, d, g1, u)
    b = support(m, d, g2, scl3(u, -1.0))
    return a, b, dot3(sub3(a, b), u)


@jit
def _slope(m, d, g1, g2, u, t, x):
    """The sign of the derivative in x of the overlap h at the unit vector along u + x t
    (u, t orthonormal): w . t |v|^2 - h(v) x with v = u + x t."""
    v = add3(u, scl3(t, x))
    a, b, h = _overlap(m, d, g1, g2, v)
    return dot3(sub3(a, b), t) * dot3(v, v) - h * x


@jit
def _newton_step(m, d, g1, g2, u, a, b, h, step):
    """u (with its support points a, b and overlap h) moved by the Newton step (tangent),
    halved until the overlap decreases: (decreased, u, a, b, h), unchanged if it does not."""
    for _ in range(10):
        un, _ = normalize3(add3(u, step))
        an, bn, hn = _overlap(m, d, g1, g2, un)
        if hn < h:
            return True, un, an, bn, hn
        step = scl3(step, 0.5)
    return False, u, a, b, h


@jit
def _line_min(m, d, g1, g2, u, t):
    """Bracket (lo, hi), 1e-18 wide, of the least overlap h along the great circle from u
    towards t (u, t orthonormal; h decreasing at u): the step doubles from POLISH_EPS until
    h rises, then bisection. hi < 0 when h still falls at a step of 0.1."""
    lo = 0.0
    hi = POLISH_EPS
    while _slope(m, d, g1, g2, u, t, hi) < 0.0:
        lo = hi
        hi *= 2.0
        if hi > 0.1:
            return lo, -1.0
    for _ in range(60):
        x = 0.5 * (lo + hi)
        if _slope(m, d, g1, g2, u, t, x) < 0.0:
            lo = x
        else:
            hi = x
    return lo, hi


@jit
def _polish_ridge(m, d, g1, g2, u, e, tol):
    """The minimum of the overlap h on a ridge of A - B: a segment of its boundary along e (a
    cylinder's side line, an edge of a polytope, plus a point of the other geom), where the
    support point jumps across the great circle of directions orthogonal to e. h is kinked
    across that circle and smooth along it: Newton's method in the angle along the circle
    (the support's ambiguity along e does not change the derivative w . s along it).
    Returns as _epa_polish."""
    u, _ = normalize3(sub3(u, scl3(e, dot3(u, e))))
    a, b, h = _overlap(m, d, g1, g2, u)
    for _ in range(POLISH_ITER):
        s = cross3(e, u)
        # dh/dangle = w . s, and its derivative by central differences
        rs = dot3(sub3(a, b), s)
        ap, bp, _ = _overlap(m, d, g1, g2, add3(u, scl3(s, POLISH_EPS)))
        an, bn, _ = _overlap(m, d, g1, g2, add3(u, scl3(s, -POLISH_EPS)))
        hss = dot3(sub3(sub3(ap, bp), sub3(an, bn)), s) / (2.0 * POLISH_EPS) - h
        if hss <= 0.0:
            break
        if 0.5 * rs * rs / hss < tol * max(1.0, h):
            return True, u, h, a, b
        ok, u, a, b, h = _newton_step(m, d, g1, g2, u, a, b, h, scl3(s, -rs / hss))
        if not ok:
            break
    return False, u, h, a, b


@jit
def _epa_polish(m, d, g1, g2, u, tol):
    """Newton's method for the minimum over unit u of the overlap h(u) = (s_A(u) - s_B(-u)) . u,
    from EPA's normal u: for EPA stopped short of its tolerance on a smooth, nearly
    concentric part of A - B (deep contacts of ellipsoids), where its polytope would need
    many more faces. Returns (converged, u, h, a, b): converged once the Newton step would
    decrease h by less than tol.

    On the unit sphere the gradient of h is the tangential part of w = s_A(u) - s_B(-u), and
    the Hessian is P (dw/du) P - h I (P the projector on the tangent plane); dw/du (the radii
    of curvature of A - B) is taken by finite differences of the support. Where the
    Hessian is not positive definite, h is minimised down the gradient: a ridge found there
    (a jump of the support) goes to _polish_ridge. A Newton step is halved until h
    decreases."""
    a, b, h = _overlap(m, d, g1, g2, u)
    for _ in range(POLISH_ITER):
        w = sub3(a, b)
        t1, _ = normalize3(cross3(u, (1.0, 0.0, 0.0) if abs(u[0]) < 0.6 else (0.0, 1.0, 0.0)))
        t2 = cross3(u, t1)
        r1 = dot3(w, t1)
        r2 = dot3(w, t2)
        # dw/du along t1 and t2 (times POLISH_EPS)
        a1, b1, _ = _overlap(m, d, g1, g2, add3(u, scl3(t1, POLISH_EPS)))
        a2, b2, _ = _overlap(m, d, g1, g2, add3(u, scl3(t2, POLISH_EPS)))
        dw1 = sub3(sub3(a1, b1), w)
        dw2 = sub3(sub3(a2, b2), w)
        h11 = dot3(dw1, t1) / POLISH_EPS - h
        h22 = dot3(dw2, t2) / POLISH_EPS - h
        h12 = 0.5 * (dot3(dw1, t2) + dot3(dw2, t1)) / POLISH_EPS
        det = h11 * h22 - h12 * h12
        if h11 <= 0.0 or det <= 0.0:
            # not locally convex: to the least h down the gradient, where w may jump
            t, lr = normalize3(add3(scl3(t1, -r1), scl3(t2, -r2)))
            if lr < MINVAL:
                break
            lo, hi = _line_min(m, d, g1, g2, u, t)
            if hi < 0.0:
                break
            an, bn, _ = _overlap(m, d, g1, g2, add3(u, scl3(t, lo - 1e-12)))
            ap, bp, _ = _overlap(m, d, g1, g2, add3(u, scl3(t, hi + 1e-12)))
            u, _ = normalize3(add3(u, scl3(t, hi)))
            # the jump across the bracket is the ridge's segment (to 1e-12: the smooth
            # part of w moves by the radius of curvature times the tiny step)
            e, le = normalize3(sub3(sub3(ap, bp), sub3(an, bn)))
            if le > 1e-6 * h:
                return _polish_ridge(m, d, g1, g2, u, e, tol)
            a, b, h = _overlap(m, d, g1, g2, u)
            continue
        s1 = -(h22 * r1 - h12 * r2) / det
        s2 = -(h11 * r2 - h12 * r1) / det
        # the Newton decrement: what the step would still gain
        if -0.5 * (s1 * r1 + s2 * r2) < tol * max(1.0, h):
            return True, u, h, a, b
        step = add3(scl3(t1, s1), scl3(t2, s2))
        ok, u, a, b, h = _newton_step(m, d, g1, g2, u, a, b, h, step)
        if not ok:
            break
    return False, u, h, a, b


@jit
def epa(m, d, g1, g2, n, tol):
    """Penetration of A and B: (ok, depth, normal from A to B, witness on A, witness on B);
    stops when a new support point improves the nearest face's distance by less than tol.
    Stopped short of it (its storage full, or its polytope no longer convex to working
    precision), it is finished by _epa_polish when that converges."""
    V = d.epa_vert
    zero = (0.0, 0.0, 0.0)
    nv = _epa_init(m, d, g1, g2, n)
    if nv < 4:
        return False, 0.0, zero, zero, zero
    # orient the tetrahedron's faces outwards
    if dot3(sub3(_w(V, 3), _w(V, 0)), cross3(sub3(_w(V, 1), _w(V, 0)),
                                              sub3(_w(V, 2), _w(V, 0)))) > 0:
        _epa_face(d, 0, 0, 2, 1)
        _epa_face(d, 1, 0, 1, 3)
        _epa_face(d, 2, 1, 2, 3)
        _epa_face(d, 3, 2, 0, 3)
    else:
        _epa_face(d, 0, 0, 1, 2)
        _epa_face(d, 1, 0, 3, 1)
        _epa_face(d, 2, 1, 3, 2)
        _epa_face(d, 3, 2, 3, 0)
    nf = 4
    maxv = V.shape[0]
    maxf = d.epa_face.shape[0]
    maxe = d.epa_edge.shape[0]
    best = -1
    converged = False
    for _ in range(maxv):
        # nearest live face
        best = -1
        bd = 1e300
        for f in range(nf):
            if d.epa_falive[f] and d.epa_fdata[f, 3] < bd:
                bd = d.epa_fdata[f, 3]
                best = f
        if best < 0:
            return False, 0.0, zero, zero, zero
        u = (d.epa_fdata[best, 0], d.epa_fdata[best, 1], d.epa_fdata[best, 2])
        a = support(m, d, g1, u)
        b = support(m, d, g2, scl3(u, -1.0))
        w = sub3(a, b)
        if dot3(w, u) - bd < tol * max(1.0, bd):
            converged = True
            break
        if nv >= maxv or nf + maxe > maxf:
            break
        ne = _epa_horizon(d, nf, best, w)
        if ne < 0:
            break
        _add_vertex(V, nv, a, b)
        # new faces on the horizon, in the slots of removed faces first
        slot = 0
        for q in range(ne):
            while slot < nf and d.epa_falive[slot]:
                slot += 1
            _epa_face(d, slot, d.epa_edge[q, 0], d.epa_edge[q, 1], nv)
            if slot == nf:
                nf += 1
            slot += 1
        nv += 1
    f = best
    u = (d.epa_fdata[f, 0], d.epa_fdata[f, 1], d.epa_fdata[f, 2])
    depth = d.epa_fdata[f, 3]
    if not converged:
        ok, un, h, pa, pb = _epa_polish(m, d, g1, g2, u, tol)
        if ok:
            return True, h, un, pa, pb
    # barycentric coordinates of the origin's projection on the face
    i, j, k = d.epa_face[f, 0], d.epa_face[f, 1], d.epa_face[f, 2]
    p = scl3(u, depth)
    a0 = _w(V, i)
    e1 = sub3(_w(V, j), a0)
    e2 = sub3(_w(V, k), a0)
    q = sub3(p, a0)
    d11 = dot3(e1, e1)
    d12 = dot3(e1, e2)
    d22 = dot3(e2, e2)
    q1 = dot3(q, e1)
    q2 = dot3(q, e2)
    det = d11 * d22 - d12 * d12
    if det > 1e-300:
        l1 = (d22 * q1 - d12 * q2) / det
        l2 = (d11 * q2 - d12 * q1) / det
    else:
        l1 = 0.0
        l2 = 0.0
    l0 = 1.0 - l1 - l2
    pa = add3(add3(scl3((V[i, 3], V[i, 4], V[i, 5]), l0), scl3((V[j, 3], V[j, 4], V[j, 5]), l1)),
              scl3((V[k, 3], V[k, 4], V[k, 5]), l2))
    pb = add3(add3(scl3((V[i, 6], V[i, 7], V[i, 8]), l0), scl3((V[j, 6], V[j, 7], V[j, 8]), l1)),
              scl3((V[k, 6], V[k, 7], V[k, 8]), l2))
    return True, depth, u, pa, pb


# ------------------------------------------------------------------------------------------------
# convex : convex
# ------------------------------------------------------------------------------------------------
@jit
def convex_contact(m, d, g1, g2, margin, tol):
    """One contact of two convex objects by GJK (within the margin) or EPA (overlap):
    (found, dist, pos, normal from 1 to 2); tol: EPA's tolerance. g1 < 0 is the height-field
    prism."""
    zero = (0.0, 0.0, 0.0)
    status, n, v, pos = gjk(m, d, g1, g2, margin)
    if status == 0:
        return False, 0.0, zero, zero
    dist = math.sqrt(dot3(v, v))
    if status == 1 and dist > 1e-10:
        if dist > margin:
            return False, 0.0, zero, zero
        return True, dist, pos, scl3(v, -1.0 / dist)
    ok, depth, normal, pa, pb = epa(m, d, g1, g2, n, tol)
    if not ok:
        return False, 0.0, zero, zero
    return True, -depth, scl3(add3(pa, pb), 0.5), normal


@jit
def convex_convex(m, d, g1, g2, margin):
    """Contacts of two convex geoms: convex_contact, plus flat-face points for polytopes.

    A sphere or capsule (always geom 1: the lowest types) is collided as its core (centre
    or axis segment) with the margin grown by its radius, and the radius taken off the
    distance: GJK then ends exactly on the core's distance, and EPA is needed only when the
    core itself penetrates (against a box or mesh both are then polytopes, which EPA
    resolves exactly, where it converges slowly on a curved surface)."""
    t1 = m.geom_type[g1]
    t2 = m.geom_type[g2]
    rad = m.geom_size[g1, 0] if t1 == SPHERE or t1 == CAPSULE else 0.0
    gc = g1 + m.geom_type.shape[0] if rad > 0.0 else g1
    found, dist, pos, normal = convex_contact(m, d, gc, g2, margin + rad, EPA_TOL)
    if not found:
        return 0
    if rad > 0.0:
        # the midpoint moves by half the radius towards geom 2
        dist -= rad
        pos = add3(pos, scl3(normal, 0.5 * rad))
    put(d.col_dist, d.col_pos, d.col_frame, 0, dist, pos, normal)
    if ((t1 == BOX or t1 == MESH) and (t2 == BOX or t2 == MESH)
            and not m.opt_disableflags[0] & MULTICCD):
        return polytope_contacts(m, d, g1, g2, margin, dist, normal)
    return 1


# ------------------------------------------------------------------------------------------------
# flat polytope contacts (box-mesh, mesh-mesh)
# ------------------------------------------------------------------------------------------------
_PA = 0        # rows of d.col_work: polygon of A (u, v, height along the normal)
_PB = 16       # polygon of B
_CLIP = 32     # clipping buffers: columns 0-1 and 3-4 of rows 32..63
_NPOLY = 15


@jit
def _nvertex(m, g):
    """Number of vertices of a box (8) or of the convex hull of a mesh."""
    if m.geom_type[g] == BOX:
        return 8
    return hull_size(m, g)


@jit
def _vertex(m, g, i):
    """Vertex i of a box (corner bits) or of the convex hull of a mesh, in the geom frame."""
    if m.geom_type[g] == BOX:
        return (m.geom_size[g, 0] if i & 1 else -m.geom_size[g, 0],
                m.geom_size[g, 1] if i & 2 else -m.geom_size[g, 1],
                m.geom_size[g, 2] if i & 4 else -m.geom_size[g, 2])
    return hull_vertex(m, g, i)


@inlined
def _face_vertex(w, row, k, x, t1, t2, u):
    """Row row + k of w = the world point x as (t1, t2, height along u); returns k + 1."""
    w[row + k, 0] = dot3(x, t1)
    w[row + k, 1] = dot3(x, t2)
    w[row + k, 2] = dot3(x, u)
    return k + 1


@jit
def _face_polygon(m, d, g, u, t1, t2, w, row):
    """Vertices of geom g whose height along u is within FACE_TOL * rbound of the maximum,
    as (t1, t2, height along u) rows of w sorted by angle; returns their number."""
    r = mat9(d.geom_xmat, g)
    p = vec3(d.geom_xpos, g)
    # heights in the geom frame: u . (R x + p) = (R' u) . x + u . p
    ul = mulmattvec3(r, u)
    tol = FACE_TOL * m.geom_rbound[g]
    k = 0
    if m.geom_type[g] == BOX:
        hmax = -1e300
        for i in range(8):
            hmax = max(hmax, dot3(ul, _vertex(m, g, i)))
        for i in range(8):
            xl = _vertex(m, g, i)
            if dot3(ul, xl) >= hmax - tol and k < _NPOLY:
                k = _face_vertex(w, row, k, add3(mulmatvec3(r, xl), p), t1, t2, u)
    else:
        # a mesh: its hull's heights kept from the first pass (d.col_hullpt column 0), the
        # arrays read once and indexed unsigned
        V = m.mesh_vert
        G = m.mesh_graph
        H = d.col_hullpt
        base, globalid, graph = hull_layout(m, g)
        nvert = hull_size(m, g)
        hmax = -1e300
        for i in range(nvert):
            a = hull_row(G, base, globalid, graph, i)
            h = dot3(ul, (float64(V[a, 0]), float64(V[a, 1]), float64(V[a, 2])))
            H[i, 0] = h
            hmax = max(hmax, h)
        for i in range(nvert):
            if H[i, 0] >= hmax - tol and k < _NPOLY:
                k = _face_vertex(w, row, k, add3(mulmatvec3(r, hull_vertex(m, g, i)), p),
                                 t1, t2, u)
    # sort counter-clockwise about the centroid (insertion sort on the angle)
    cu = 0.0
    cv = 0.0
    for i in range(k):
        cu += w[row + i, 0] / k
        cv += w[row + i, 1] / k
    for i in range(k):
        w[row + i, 3] = math.atan2(w[row + i, 1] - cv, w[row + i, 0] - cu)
    for i in range(1, k):
        j = i
        while j > 0 and w[row + j - 1, 3] > w[row + j, 3]:
            for c in range(4):
                tmp = w[row + j - 1, c]
                w[row + j - 1, c] = w[row + j, c]
                w[row + j, c] = tmp
            j -= 1
    return k


@jit
def _height(w, row, k, x, y):
    """Height of the polygon's plane (or segment's line, or point) above the 2D point x, y."""
    if k >= 3:
        # plane through the first vertex with the normal of the polygon's largest triangle
        ax, ay, az = w[row, 0], w[row, 1], w[row, 2]
        best = 0.0
        nx = ny = nz = 0.0
        for i in range(1, k - 1):
            e1 = (w[row + i, 0] - ax, w[row + i, 1] - ay, w[row + i, 2] - az)
            e2 = (w[row + i + 1, 0] - ax, w[row + i + 1, 1] - ay, w[row + i + 1, 2] - az)
            c = cross3(e1, e2)
            if abs(c[2]) > best:
                best = abs(c[2])
                nx, ny, nz = c
        if best > 1e-300:
            return az - (nx * (x - ax) + ny * (y - ay)) / nz
        return az
    if k == 2:
        dx = w[row + 1, 0] - w[row, 0]
        dy = w[row + 1, 1] - w[row, 1]
        l2 = dx * dx + dy * dy
        t = 0.0
        if l2 > 1e-300:
            t = min(1.0, max(0.0, ((x - w[row, 0]) * dx + (y - w[row, 1]) * dy) / l2))
        return w[row, 2] + t * (w[row + 1, 2] - w[row, 2])
    return w[row, 2]


@jit
def _clip(w, clip_row, kc, n_in, src, dst):
    """Sutherland-Hodgman: clip the polygon in columns src of rows _CLIP.. (n_in points) by
    the half-plane left of edge (clip_row, clip_row + 1) of the clipper; result in dst."""
    ax, ay = w[clip_row, 0], w[clip_row, 1]
    bx, by = w[clip_row + 1, 0], w[clip_row + 1, 1]
    n_out = 0
    for i in range(n_in):
        px, py = w[_CLIP + i, src], w[_CLIP + i, src + 1]
        j = (i + 1) % n_in
        qx, qy = w[_CLIP + j, src], w[_CLIP + j, src + 1]
        sp = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
        sq = (bx - ax) * (qy - ay) - (by - ay) * (qx - ax)
        if sp >= 0 and n_out < 32:
            w[_CLIP + n_out, dst] = px
            w[_CLIP + n_out, dst + 1] = py
            n_out += 1
        if (sp >= 0) != (sq >= 0) and n_out < 32 and n_in > 1:
            t = sp / (sp - sq)
            w[_CLIP + n_out, dst] = px + t * (qx - px)
            w[_CLIP + n_out, dst + 1] = py + t * (qy - py)
            n_out += 1
        if n_in == 2 and i == 0:
            # a segment is not a closed polygon: its closing edge must not add points
            if sq >= 0 and n_out < 32:
                w[_CLIP + n_out, dst] = qx
                w[_CLIP + n_out, dst + 1] = qy
                n_out += 1
            break
    return n_out


@jit
def _point3(w, r, t1, t2, normal):
    return add3(add3(scl3(t1, w[r, 0]), scl3(t2, w[r, 1])), scl3(normal, w[r, 3]))


@jit
def polytope_contacts(m, d, g1, g2, margin, dist0, normal):
    """Up to 4 contacts from the overlap of the two faces orthogonal to the normal; the single
    GJK/EPA contact already in d.col_* row 0 (dist0, exact) is kept when the faces do not give
    more, and is the deepest one unless a clipped point reaches its depth."""
    w = d.col_work
    f = d.col_frame
    f[0, 3] = f[0, 4] = f[0, 5] = 0.0
    # tangent frame of the normal (as the contact frame)
    nx, ny, nz = normal
    if ny < 0.5 and ny > -0.5:
        t = (0.0, 1.0, 0.0)
    else:
        t = (0.0, 0.0, 1.0)
    t1, _ = normalize3(sub3(t, scl3(normal, dot3(normal, t))))
    t2 = cross3(normal, t1)
    ka = _face_polygon(m, d, g1, normal, t1, t2, w, _PA)
    kb = _face_polygon(m, d, g2, scl3(normal, -1.0), t1, t2, w, _PB)
    for i in range(kb):
        w[_PB + i, 2] = -w[_PB + i, 2]
    # clip the smaller polygon (subject) by the larger (clipper, counter-clockwise)
    if ka >= kb:
        crow, kc, srow, ks = _PA, ka, _PB, kb
    else:
        crow, kc, srow, ks = _PB, kb, _PA, ka
    if kc < 3 or ks < 2:
        return 1
    for i in range(ks):
        w[_CLIP + i, 0] = w[srow + i, 0]
        w[_CLIP + i, 1] = w[srow + i, 1]
    # the clipper closes on itself: copy its first vertex after its last
    w[crow + kc, 0] = w[crow, 0]
    w[crow + kc, 1] = w[crow, 1]
    n = ks
    src = 0
    for e in range(kc):
        n = _clip(w, crow + e, kc, n, src, 3 - src)
        src = 3 - src
        if n == 0:
            return 1
    # contacts: heights on both faces, keep those within the margin
    cnt = 0
    best = 0
    for i in range(n):
        x, y = w[_CLIP + i, src], w[_CLIP + i, src + 1]
        ha = _height(w, _PA, ka, x, y)
        hb = _height(w, _PB, kb, x, y)
        dist = hb - ha
        if dist > margin:
            continue
        w[_CLIP + cnt, 0] = x
        w[_CLIP + cnt, 1] = y
        w[_CLIP + cnt, 2] = dist
        w[_CLIP + cnt, 3] = 0.5 * (ha + hb)
        w[_CLIP + cnt, 5] = 0.0
        if dist < w[_CLIP + best, 2]:
            best = cnt
        cnt += 1
    if cnt < 2:
        return 1
    if abs(w[_CLIP + best, 2] - dist0) > EPA_TOL * max(1.0, abs(dist0)):
        # faces only nearly flat (vertices within the tolerance of the support plane): the
        # heights between their vertices are approximate and the clipped points may miss
        # or overshoot the deepest one; the GJK/EPA contact (row 0) is the deepest
        p0 = (d.col_pos[0, 0], d.col_pos[0, 1], d.col_pos[0, 2])
        w[_CLIP + cnt, 0] = dot3(p0, t1)
        w[_CLIP + cnt, 1] = dot3(p0, t2)
        w[_CLIP + cnt, 2] = dist0
        w[_CLIP + cnt, 3] = dot3(p0, normal)
        w[_CLIP + cnt, 5] = 0.0
        best = cnt
        cnt += 1
    for i in range(cnt):
        # along the normal no point is deeper than the overlap of the two geoms (dist0)
        w[_CLIP + i, 2] = max(w[_CLIP + i, 2], dist0)
    # keep the deepest, then repeatedly the point farthest from those kept (column 5 marks)
    w[_CLIP + best, 5] = 1.0
    put(d.col_dist, d.col_pos, d.col_frame, 0, w[_CLIP + best, 2],
        _point3(w, _CLIP + best, t1, t2, normal), normal)
    nsel = 1
    for _ in range(3):
        bi = -1
        bval = -1.0
        for i in range(cnt):
            if w[_CLIP + i, 5] != 0.0:
                continue
            val = 1e300
            for q in range(cnt):
                if w[_CLIP + q, 5] != 0.0:
                    dx = w[_CLIP + i, 0] - w[_CLIP + q, 0]
                    dy = w[_CLIP + i, 1] - w[_CLIP + q, 1]
                    val = min(val, dx * dx + dy * dy)
            if val > bval:
                bval = val
                bi = i
        if bi < 0 or bval < 1e-12 * m.geom_rbound[g1] * m.geom_rbound[g1]:
            break
        w[_CLIP + bi, 5] = 1.0
        put(d.col_dist, d.col_pos, d.col_frame, nsel, w[_CLIP + bi, 2],
            _point3(w, _CLIP + bi, t1, t2, normal), normal)
        nsel += 1
    return nsel

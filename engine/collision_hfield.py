"""Height field : convex geom collision (MuJoCo's mjc_ConvexHField).

A height field is the solid under a triangulated surface: grid point (r, c) sits at
x = -radius_x + c dx, y = -radius_y + r dy (dx = 2 radius_x / (ncol - 1), dy likewise) and
z = data[r, c] elevation_z in the geom frame, and the solid reaches down to z = -base_z. Each grid
cell is split along its (r, c)-(r+1, c+1) diagonal into two triangles, and each triangle extruded
down to the base is a convex triangular prism (6 vertices). As MuJoCo:

1. the convex geom's bounding box in the height-field frame comes from its support function
   along the six frame axes; a box disjoint from the field (inflated by the margin) ends the test;
2. the grid cells under that box give the prisms to test; a prism whose three top vertices are
   all below the geom's lowest point is skipped;
3. each remaining prism is collided with the geom by the general convex routine (GJK within the
   margin, EPA when they overlap: collision_convex.convex_contact, with the prism as object -1
   whose vertices live in d.hfield_prism, in world coordinates), one contact per touching prism.
   A sphere or capsule is collided as its core (centre point or axis segment) with the margin
   grown by its radius, then the radius is taken off the distance: both objects are then
   polytopes, for which GJK and EPA end exactly in a few iterations. Other curved geoms
   (ellipsoid, cylinder) stop EPA at MuJoCo's ccd_tolerance (1e-6, HFIELD_EPA_TOL) rather than
   the 1e-10 of convex pairs: EPA on a curved surface gains about one digit per few support
   points, and a field gives several contacts per geom;
4. up to MAXCONPAIR (mjMAXCONPAIR = 50) contacts are kept, in grid order (rows, then columns,
   then the two triangles of a cell), normals pointing from the height field to the geom.

Prisms are solids, so a geom near a cell boundary also touches the neighbouring prism through
its vertical walls: those contacts exist in MuJoCo as well and are kept, as MuJoCo does.

One departure: a prism's vertical walls inside the field are not surfaces of the terrain (the
neighbouring prism continues the solid there). When a geom has sunk so deep into a triangle
that its least penetration is through such a wall (its core below the surface, near the cell
edge or the diagonal), the contact normal would be horizontal, and the prisms on the two sides
push in opposite directions while nothing holds the geom up: it falls through the field
(Menagerie's Barkour on its height field, whose soft foot contacts sink that deep). So when a
geom's centre lies inside the field's solid (below its surface), its contacts through inner
walls are replaced by the contacts with those prisms' top faces (_top_face_contact): the face's
normal, and the depth of the geom's lowest point along it. Walls on the field's outer boundary
are surfaces and keep their contacts, and so do the inner-wall contacts of a geom whose centre
is above the surface (a geom resting across a cell edge, as MuJoCo).
"""
import math

from .collision_convex import convex_contact, support
from .collision_primitive import MAXCONPAIR, normalize3, put
from .enums import GeomType
from .jit import jit
from .math import add3, cross3, dot3, mat9, scl3, sub3, vec3

SPHERE = int(GeomType.SPHERE)
CAPSULE = int(GeomType.CAPSULE)
HFIELD_EPA_TOL = 1e-6   # MuJoCo's default ccd_tolerance


@jit
def _set_prism(d, p, r, x0, y0, z0, x1, y1, z1, x2, y2, z2, zb):
    """d.hfield_prism = world vertices of the prism over the local triangle (x_i, y_i, z_i):
    rows 0-2 at the base height zb, rows 3-5 on the surface."""
    P = d.hfield_prism
    xs = (x0, x1, x2)
    ys = (y0, y1, y2)
    zs = (z0, z1, z2)
    for i in range(3):
        for k in range(3):
            h = p[k] + r[3 * k] * xs[i] + r[3 * k + 1] * ys[i]
            P[i, k] = h + r[3 * k + 2] * zb
            P[3 + i, k] = h + r[3 * k + 2] * zs[i]


@jit
def hfield_convex(m, d, g1, g2, margin):
    """Contacts of height-field geom g1 with convex geom g2 into d.col_*; returns their number."""
    hid = m.geom_dataid[g1]
    nrow = m.hfield_nrow[hid]
    ncol = m.hfield_ncol[hid]
    adr = m.hfield_adr[hid]
    sx = m.hfield_size[hid, 0]
    sy = m.hfield_size[hid, 1]
    sz = m.hfield_size[hid, 2]
    sb = m.hfield_size[hid, 3]
    p1 = vec3(d.geom_xpos, g1)
    r1 = mat9(d.geom_xmat, g1)
    # bounding box of geom 2 in the height-field frame: support along +-(frame axes)
    lo = [0.0, 0.0, 0.0]
    hi = [0.0, 0.0, 0.0]
    for k in range(3):
        axis = (r1[k], r1[3 + k], r1[6 + k])
        hi[k] = dot3(axis, sub3(support(m, d, g2, axis), p1))
        lo[k] = dot3(axis, sub3(support(m, d, g2, (-axis[0], -axis[1], -axis[2])), p1))
    if (lo[0] - margin > sx or hi[0] + margin < -sx or lo[1] - margin > sy
            or hi[1] + margin < -sy or lo[2] - margin > sz or hi[2] + margin < -sb):
        return 0
    # grid cells under the box
    dx = 2.0 * sx / (ncol - 1)
    dy = 2.0 * sy / (nrow - 1)
    cmin = max(0, int(math.floor((lo[0] - margin + sx) / dx)))
    cmax = min(ncol - 1, int(math.ceil((hi[0] + margin + sx) / dx)))
    rmin = max(0, int(math.floor((lo[1] - margin + sy) / dy)))
    rmax = min(nrow - 1, int(math.ceil((hi[1] + margin + sy) / dy)))
    zlow = lo[2] - margin
    # spheres and capsules: their core, with the radius added to the margin
    t2 = m.geom_type[g2]
    rad = m.geom_size[g2, 0] if t2 == SPHERE or t2 == CAPSULE else 0.0
    gc = g2 + m.geom_type.shape[0] if rad > 0.0 else g2
    data = m.hfield_data
    sunk = _centre_below_surface(m, d, g2, hid, p1, r1)
    cnt = 0
    for r in range(rmin, rmax):
        y0 = dy * r - sy
        y1 = y0 + dy
        for c in range(cmin, cmax):
            x0 = dx * c - sx
            x1 = x0 + dx
            h00 = data[adr + r * ncol + c] * sz            # (r, c)
            h01 = data[adr + r * ncol + c + 1] * sz        # (r, c + 1)
            h10 = data[adr + (r + 1) * ncol + c] * sz      # (r + 1, c)
            h11 = data[adr + (r + 1) * ncol + c + 1] * sz  # (r + 1, c + 1)
            for t in range(2):
                if t == 0:   # (r+1, c), (r, c), (r+1, c+1)
                    if h10 < zlow and h00 < zlow and h11 < zlow:
                        continue
                    _set_prism(d, p1, r1, x0, y1, h10, x0, y0, h00, x1, y1, h11, -sb)
                else:        # (r, c), (r+1, c+1), (r, c+1)
                    if h00 < zlow and h11 < zlow and h01 < zlow:
                        continue
                    _set_prism(d, p1, r1, x0, y0, h00, x1, y1, h11, x1, y0, h01, -sb)
                found, dist, pos, normal = convex_contact(m, d, -1, gc, margin + rad, HFIELD_EPA_TOL)
                if not found:
                    continue
                if rad > 0.0:
                    # witness on the surface: the core's witness moved by -radius along normal
                    dist -= rad
                    pos = add3(pos, scl3(normal, -0.5 * rad))
                if sunk and _through_inner_wall(r1, normal, r, c, t, nrow, ncol):
                    found, dist, pos, normal = _top_face_contact(m, d, g2, margin)
                    if not found:
                        continue
                put(d.col_dist, d.col_pos, d.col_frame, cnt, dist, pos, normal)
                cnt += 1
                if cnt >= MAXCONPAIR:
                    return cnt
    return cnt


WALL_COS = 1.0 - 1e-6     # a contact normal this close to a wall's is through that wall


@jit
def _through_inner_wall(r1, normal, r, c, t, nrow, ncol):
    """Does the contact normal (world) leave the prism of triangle t of cell (r, c) through one
    of its vertical walls that lies inside the field? Walls: the cell edges x = x0 (-x), x = x1
    (+x), y = y0 (-y), y = y1 (+y) and the diagonal (r, c)-(r+1, c+1), whose outward normal is
    along (dy, -dx) for triangle 0 (above it in y) and (-dy, dx) for triangle 1; triangle 0 has
    the edges x = x0 and y = y1, triangle 1 the edges y = y0 and x = x1. The direction is compared
    in the height-field frame; the diagonal is always inside, a cell edge on the field's
    border is not."""
    nl = (r1[0] * normal[0] + r1[3] * normal[1] + r1[6] * normal[2],
          r1[1] * normal[0] + r1[4] * normal[1] + r1[7] * normal[2],
          r1[2] * normal[0] + r1[5] * normal[1] + r1[8] * normal[2])
    if abs(nl[2]) > 1.0 - WALL_COS:
        return False
    # the edges: (outward direction x, y, is it inside the field)
    if t == 0:
        if -nl[0] > WALL_COS:
            return c > 0                          # x = x0
        if nl[1] > WALL_COS:
            return r + 1 < nrow - 1               # y = y1
    else:
        if -nl[1] > WALL_COS:
            return r > 0                          # y = y0
        if nl[0] > WALL_COS:
            return c + 1 < ncol - 1               # x = x1
    # the diagonal: any other horizontal normal of a wall
    return True


@jit
def _centre_below_surface(m, d, g, hid, p1, r1):
    """Is geom g's centre inside the height field's solid: over the field and below its
    surface (the triangle under it, split along the (r, c)-(r+1, c+1) diagonal)?"""
    nrow = m.hfield_nrow[hid]
    ncol = m.hfield_ncol[hid]
    adr = m.hfield_adr[hid]
    sx = m.hfield_size[hid, 0]
    sy = m.hfield_size[hid, 1]
    sz = m.hfield_size[hid, 2]
    rel = sub3(vec3(d.geom_xpos, g), p1)
    x = r1[0] * rel[0] + r1[3] * rel[1] + r1[6] * rel[2]
    y = r1[1] * rel[0] + r1[4] * rel[1] + r1[7] * rel[2]
    z = r1[2] * rel[0] + r1[5] * rel[1] + r1[8] * rel[2]
    if abs(x) > sx or abs(y) > sy or z < -m.hfield_size[hid, 3]:
        return False
    # grid coordinates, the cell (r, c) and the position (u, v) in it
    gx = min((x + sx) / (2.0 * sx) * (ncol - 1), ncol - 1 - 1e-9)
    gy = min((y + sy) / (2.0 * sy) * (nrow - 1), nrow - 1 - 1e-9)
    c = int(gx)
    r = int(gy)
    u = gx - c
    v = gy - r
    h00 = m.hfield_data[adr + r * ncol + c]
    h01 = m.hfield_data[adr + r * ncol + c + 1]
    h10 = m.hfield_data[adr + (r + 1) * ncol + c]
    h11 = m.hfield_data[adr + (r + 1) * ncol + c + 1]
    if v >= u:      # triangle (r+1, c), (r, c), (r+1, c+1)
        h = h00 + v * (h10 - h00) + u * (h11 - h10)
    else:           # triangle (r, c), (r+1, c+1), (r, c+1)
        h = h00 + u * (h01 - h00) + v * (h11 - h01)
    return z < h * sz


@jit
def _top_plane(d):
    """Upward unit normal (away from the base) and a point of the top face of the prism in
    d.hfield_prism (rows 3-5 on the surface, 0-2 at the base)."""
    P = d.hfield_prism
    a = (P[3, 0], P[3, 1], P[3, 2])
    b = (P[4, 0], P[4, 1], P[4, 2])
    e = (P[5, 0], P[5, 1], P[5, 2])
    n, _ = normalize3(cross3(sub3(b, a), sub3(e, a)))
    if dot3(n, sub3(a, (P[0, 0], P[0, 1], P[0, 2]))) < 0.0:
        n = scl3(n, -1.0)
    return n, a


@jit
def _top_face_contact(m, d, g2, margin):
    """Contact of geom g2 with the top face of the prism in d.hfield_prism: the face's upward
    normal n, the distance of g2's lowest point along n (its support point along -n) from the
    face's plane, the point midway. (found, dist, pos, normal)."""
    n, a = _top_plane(d)
    s = support(m, d, g2, scl3(n, -1.0))
    dist = dot3(n, sub3(s, a))
    if dist > margin:
        return False, 0.0, s, n
    return True, dist, add3(s, scl3(n, -0.5 * dist)), n

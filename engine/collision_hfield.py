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
"""
import math

from .collision_convex import convex_contact, support
from .collision_primitive import MAXCONPAIR, put
from .enums import GeomType
from .jit import jit
from .math import add3, dot3, mat9, scl3, sub3, vec3

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
                put(d.col_dist, d.col_pos, d.col_frame, cnt, dist, pos, normal)
                cnt += 1
                if cnt >= MAXCONPAIR:
                    return cnt
    return cnt

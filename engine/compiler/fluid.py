"""Coefficients of the ellipsoid fluid model of a geom (MuJoCo's mjCGeom::SetFluidCoefs).

geom_fluid = (interaction coefficient, blunt drag, slender drag, angular drag, Kutta lift,
Magnus lift, virtual mass (3), virtual inertia (3)). The virtual (added) mass and inertia of an
ellipsoid with semi-axes (dx, dy, dz) moving in an ideal fluid are those of Lamb (Hydrodynamics,
sec. 373): with kappa_x = dx dy dz int_0^inf dl / ((dx^2 + l) sqrt((dx^2 + l) (dy^2 + l) (dz^2 + l))),
the virtual mass along x is V kappa_x / (2 - kappa_x) and the virtual moment of inertia about x
is V / 5 (dy^2 - dz^2)^2 (kappa_z - kappa_y) / (2 (dy^2 - dz^2) + (dy^2 + dz^2) (kappa_y - kappa_z)),
V the ellipsoid's volume (per unit fluid density). The integral is taken, as MuJoCo does, by
15-point Gauss-Kronrod quadrature after the change of variables l = x^3 / (1 - x)^2.
"""
import math

from ..enums import GeomType

# Kronrod weights, abscissae l(x) and dl/dx(x) of the 15 points (MuJoCo's GetAddedMassKappa)
_KRONROD_W = (0.01146766, 0.03154605, 0.05239501, 0.07032663, 0.08450236, 0.09517529,
              0.10221647, 0.10474107, 0.10221647, 0.09517529, 0.08450236, 0.07032663,
              0.05239501, 0.03154605, 0.01146766)
_KRONROD_L = (7.865151709349917e-08, 1.7347976913907274e-05, 0.0003548008144506193,
              0.002846636252924549, 0.014094260903596077, 0.053063261727396636,
              0.17041978741317773, 0.5, 1.4036301548686991, 3.9353484827022642,
              11.644841677041734, 39.53187807410903, 177.5711362220801, 1429.4772912937397,
              54087.416549217705)
_KRONROD_D = (5.538677720489877e-05, 0.002080868285293228, 0.016514126520723166,
              0.07261900344370877, 0.23985243401862602, 0.6868318249020725,
              1.8551129519182894, 5.0, 14.060031152313941, 43.28941239611009,
              156.58546376397112, 747.9826085305024, 5827.4042950027115, 116754.0197944512,
              25482945.327264845)
_EPS = 1e-14        # MuJoCo's mjEPS


def _kappa(dx, dy, dz):
    """kappa_x of the module docstring (symmetric in dy, dz)."""
    invdx2 = 1.0 / (dx * dx)
    invdy2 = 1.0 / (dy * dy)
    invdz2 = 1.0 / (dz * dz)
    # l is scaled by (dx^3 dy dz)^(2/5) for numerical stability
    scale = math.pow(dx * dx * dx * dy * dz, 0.4)
    kappa = 0.0
    for w, lk, dk in zip(_KRONROD_W, _KRONROD_L, _KRONROD_D):
        lam = scale * lk
        denom = (1 + lam * invdx2) * math.sqrt((1 + lam * invdx2) * (1 + lam * invdy2)
                                               * (1 + lam * invdz2))
        kappa += scale * dk / denom * w
    return kappa * invdx2


def semiaxes(gtype, size):
    """Semi-axes of the ellipsoid that stands for a geom (MuJoCo's mju_geomSemiAxes)."""
    if gtype == GeomType.SPHERE:
        return size[0], size[0], size[0]
    if gtype == GeomType.CAPSULE:
        return size[0], size[0], size[1] + size[0]
    if gtype == GeomType.CYLINDER:
        return size[0], size[0], size[1]
    return size[0], size[1], size[2]


def ellipsoid_fluid_coefs(gtype, size, fluidcoef):
    """geom_fluid of a geom with fluidshape="ellipsoid" and the given fluidcoef (5 numbers)."""
    dx, dy, dz = semiaxes(gtype, size)
    volume = 4.0 / 3.0 * math.pi * dx * dy * dz
    kx = _kappa(dx, dy, dz)
    ky = _kappa(dy, dz, dx)
    kz = _kappa(dz, dx, dy)

    def inertia_factor(a, b, ka, kb):
        # (a^2 - b^2)^2 |kb - ka| / |2 (a^2 - b^2) + (a^2 + b^2) (ka - kb)|; the numerator's and
        # the denominator's signs agree, so both are taken in absolute value
        return ((a * a - b * b) ** 2 * abs(kb - ka)
                / max(_EPS, abs(2 * (a * a - b * b) + (a * a + b * b) * (ka - kb))))

    ix = inertia_factor(dy, dz, ky, kz)
    iy = inertia_factor(dz, dx, kz, kx)
    iz = inertia_factor(dx, dy, kx, ky)
    mass = [volume * k / max(_EPS, 2 - k) for k in (kx, ky, kz)]
    inertia = [volume * f / 5 for f in (ix, iy, iz)]
    return [1.0] + [float(c) for c in fluidcoef] + mass + inertia

"""Model and Data: structures of arrays with MuJoCo's field names, allocated once.

The tables below are the single source of truth for every numeric array. Each line reads
``name dtype shape...  # meaning`` where dtype is ``f`` (float64) or ``i`` (int64) and the shape is
made of size names (``nbody``) and integers. Jitted kernels receive a ``numba`` structref holding
the very same arrays (no copies), so writing ``d.qpos[:] = x`` from Python is seen by the next
``step``. Assigning a whole array (``d.qpos = x``) copies into the existing buffer for that reason.

The structref constructors are generated into ``engine/_structs.py`` (numba cannot cache functions
created at run time); ``python -m engine.types`` rewrites that file after the tables change and a
test checks that it is current.

The structref borrows its arrays (``borrow``): compiled code does not count references to them,
the Model or Data owns them. Reading ``m.body_pos`` in a kernel would otherwise increment and
decrement the array's reference count, an atomic instruction, thousands of times a step; with a
Model shared by threads (engine.rollout) those counters are written by every core at once and
their cache lines bounce between the cores. The struct proxy (``m._struct``, ``d._struct``)
keeps the arrays it was built from alive, so a proxy held across ``Data.grow`` stays valid.
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import math
import operator
import os
import weakref
from types import SimpleNamespace

import numpy as np
from numba import types as nbtypes
from numba.core import cgutils
from numba.experimental import structref
from numba.extending import intrinsic

from . import jit
from .enums import SPARSE_NV, Cone, DisableBit, Integrator, Jacobian, Solver, Stabilization
from .views import ContactView, accessor, unknown_attribute

# --------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------
MODEL_SIZES = (
    "nq nv nu na nbody njnt ngeom nsite ncam nlight nmesh nmeshvert nmeshface nmeshgraph "
    "nmeshcluster nhfield "
    "nhfielddata ntendon nwrap nmat "
    "neq nkey npair nexclude nM nD nmocap nsensor nsensordata"
).split()
# sizes the Model derives from others when the compiler does not give them
DERIVED_SIZES = {"nD": lambda s: 2 * s["nM"] - s["nv"]}   # dof pairs on one kinematic chain

MODEL_FIELDS = """
# options (one-element arrays so that jitted code sees live edits; m.opt exposes them as scalars)
opt_timestep        f 1          # simulation timestep (s)
opt_gravity         f 3          # gravitational acceleration
opt_wind            f 3          # wind velocity of the medium
opt_magnetic        f 3          # global magnetic flux
opt_density         f 1          # density of the medium
opt_viscosity       f 1          # viscosity of the medium
opt_tolerance       f 1          # solver tolerance
opt_epsilon         f 1          # impulse regularisation scaling (paper eq. 27)
opt_kappa           f 1          # error-reduction time constant in s (paper eq. 28)
opt_rmin            f 1          # regulariser floor (paper eq. 27)
opt_impedance       f 4          # impedance shape of objects without their own (constraint.py):
                                 # epsilon reached at |x| >= width, width (0: constant
                                 # epsilon), midpoint, power (MuJoCo's solimp[1:5])
opt_impratio        f 1          # ratio of frictional to normal impedance (MuJoCo)
opt_integrator      i 1          # Integrator
opt_solver          i 1          # Solver
opt_cone            i 1          # Cone
opt_jacobian        i 1          # Jacobian: row storage of the Data made for the model
opt_stabilization   i 1          # Stabilization: diagonal B, K (eq. 28) or exact critical damping
opt_iterations      i 1          # maximum solver iterations
opt_noslip_iterations i 1        # noslip sweeps after the solver (0: no noslip)
opt_noslip_tolerance  f 1        # noslip stops when a sweep improves the cost by less (MuJoCo's)
opt_ccd_iterations  i 1          # MPR expansions (nativeccd disabled: collision_mpr)
opt_ccd_tolerance   f 1          # MPR stops when the surface is this near the portal
opt_disableflags    i 1          # DisableBit
opt_enableflags     i 1          # enable bits (reserved)
# bodies (body 0 is the world; parents come before children)
body_parentid       i nbody      # id of the parent body
body_rootid         i nbody      # id of the root above the body (child of world)
body_weldid         i nbody      # id of the body this one is welded to (no joints in between)
body_mocapid        i nbody      # mocap index, -1 if not a mocap body
body_jntnum         i nbody      # number of joints of this body
body_jntadr         i nbody      # first joint address, -1 if none
body_dofnum         i nbody      # number of dofs of this body
body_dofadr         i nbody      # first dof address, -1 if none
body_geomnum        i nbody      # number of geoms
body_geomadr        i nbody      # first geom address, -1 if none
body_pos            f nbody 3    # position offset relative to the parent body
body_quat           f nbody 4    # orientation offset relative to the parent body
body_ipos           f nbody 3    # local position of the centre of mass
body_iquat          f nbody 4    # local orientation of the inertia ellipsoid
body_mass           f nbody      # mass
body_subtreemass    f nbody      # mass of the subtree starting at this body
body_inertia        f nbody 3    # diagonal inertia in the ipos/iquat frame
body_gravcomp       f nbody      # gravity compensation (fraction of the body's weight)
body_sameframe      i nbody      # SameFrame of the inertial frame: NONE, BODY or BODYROT
# joints
jnt_type            i njnt       # JointType
jnt_qposadr         i njnt       # start address in qpos
jnt_dofadr          i njnt       # start address in qvel
jnt_bodyid          i njnt       # id of the joint's body
jnt_group           i njnt       # group for visibility
jnt_limited         i njnt       # does the joint have limits (0/1)
jnt_pos             f njnt 3     # local anchor position
jnt_axis            f njnt 3     # local joint axis
jnt_stiffness       f njnt       # stiffness coefficient
jnt_range           f njnt 2     # joint limits
jnt_margin          f njnt       # minimum distance for limit detection
jnt_epsilon         f njnt       # softness epsilon of the joint's limit (-1: use opt)
jnt_kappa           f njnt       # softness kappa of the joint's limit (-1: use opt)
jnt_rmin            f njnt       # regulariser floor rmin (-1: use opt)
jnt_impedance       f njnt 4     # impedance shape (width < 0: use opt)
jnt_dampratio       f njnt       # damping ratio of the error reduction (1: critical)
jnt_actfrclimited   i njnt       # is the actuator force on the joint limited (0/1)
jnt_actfrcrange     f njnt 2     # range of the total actuator force on the joint
# dofs
dof_bodyid          i nv         # id of the dof's body
dof_jntid           i nv         # id of the dof's joint
dof_parentid        i nv         # id of the parent dof, -1 for none
dof_Madr            i nv         # address of the dof's diagonal in the sparse qM
dof_armature        f nv         # dof armature inertia
dof_damping         f nv         # damping coefficient
dof_frictionloss    f nv         # dof friction loss
# geoms
geom_type           i ngeom      # GeomType
geom_contype        i ngeom      # contact type bits
geom_conaffinity    i ngeom      # contact affinity bits
geom_condim         i ngeom      # contact dimensionality (1, 3, 4, 6)
geom_bodyid         i ngeom      # id of the geom's body
geom_dataid         i ngeom      # mesh id (mesh geoms), hfield id (hfield geoms), else -1
geom_matid          i ngeom      # material id, -1 for none
geom_group          i ngeom      # group for visibility
geom_priority       i ngeom      # contact parameter mixing priority
geom_size           f ngeom 3    # type-specific size parameters
geom_rbound         f ngeom      # radius of the bounding sphere about geom_pos (0 for planes)
geom_pos            f ngeom 3    # local position offset relative to the body
geom_quat           f ngeom 4    # local orientation offset relative to the body
geom_friction       f ngeom 3    # friction: sliding, torsional, rolling
geom_margin         f ngeom      # constraint rows if dist < margin (summed over the pair)
geom_gap            f ngeom      # detect within margin + gap; no rows beyond margin
geom_epsilon        f ngeom      # softness epsilon (-1: use opt)
geom_kappa          f ngeom      # softness kappa (-1: use opt)
geom_rmin           f ngeom      # regulariser floor rmin (-1: use opt)
geom_impedance      f ngeom 4    # impedance shape (width < 0: use opt)
geom_dampratio      f ngeom      # damping ratio of the error reduction (1: critical)
geom_rgba           f ngeom 4    # colour
geom_sameframe      i ngeom      # SameFrame: the geom frame is (the orientation of) the body's
                                 # or inertial frame, copied in kinematics
geom_fluid          f ngeom 12   # ellipsoid fluid model: interaction coefficient (0: off), blunt
                                 # drag, slender drag, angular drag, Kutta lift, Magnus lift,
                                 # virtual mass (3), virtual inertia (3)
# sites
site_type           i nsite      # GeomType of the site's visual shape
site_bodyid         i nsite      # id of the site's body
site_group          i nsite      # group for visibility
site_size           f nsite 3    # geom-like size
site_pos            f nsite 3    # local position offset relative to the body
site_quat           f nsite 4    # local orientation offset relative to the body
site_rgba           f nsite 4    # colour
site_sameframe      i nsite      # SameFrame, as geom_sameframe
# cameras
cam_mode            i ncam       # CamLight
cam_bodyid          i ncam       # id of the camera's body
cam_targetbodyid    i ncam       # id of the targeted body, -1 for none
cam_pos             f ncam 3     # position relative to the body
cam_quat            f ncam 4     # orientation relative to the body
cam_poscom0         f ncam 3     # global position relative to the subtree com at qpos0
cam_pos0            f ncam 3     # global position relative to the body at qpos0
cam_mat0            f ncam 9     # global orientation at qpos0
cam_fovy            f ncam       # vertical field of view (degrees)
cam_projection      i ncam       # Projection: perspective or orthographic
cam_resolution      i ncam 2     # image size in pixels: width, height
cam_sensorsize      f ncam 2     # sensor size (length units; 0: from fovy)
cam_intrinsic       f ncam 4     # focal lengths x, y and principal point x, y (length units)
# lights
light_mode          i nlight     # CamLight
light_bodyid        i nlight     # id of the light's body
light_targetbodyid  i nlight     # id of the targeted body, -1 for none
light_directional   i nlight     # directional light (0/1)
light_castshadow    i nlight     # does the light cast shadows (0/1)
light_active        i nlight     # is the light on (0/1)
light_pos           f nlight 3   # position relative to the body
light_dir           f nlight 3   # direction relative to the body
light_poscom0       f nlight 3   # global position relative to the subtree com at qpos0
light_pos0          f nlight 3   # global position relative to the body at qpos0
light_dir0          f nlight 3   # global direction at qpos0
light_attenuation   f nlight 3   # OpenGL attenuation
light_cutoff        f nlight     # spot cutoff angle (degrees)
light_exponent      f nlight     # spot exponent
light_ambient       f nlight 3   # ambient colour
light_diffuse       f nlight 3   # diffuse colour
light_specular      f nlight 3   # specular colour
# meshes (vertices in the mesh frame: centred at the mesh's com, aligned with its principal axes)
mesh_vertadr        i nmesh      # first vertex address
mesh_vertnum        i nmesh      # number of vertices
mesh_faceadr        i nmesh      # first face address
mesh_facenum        i nmesh      # number of faces
mesh_vert           f nmeshvert 3  # vertex positions
mesh_face           i nmeshface 3  # vertex indices (relative to mesh_vertadr) of triangles
mesh_graphadr       i nmesh      # address of the mesh's convex hull graph, -1 if none
mesh_graph          i nmeshgraph # convex hull graphs (MuJoCo's layout: compiler.mesh.hull_graph)
mesh_extrema        i nmesh 27   # hull vertex (graph local id) farthest along 27 grid directions
mesh_clusteradr     i nmesh      # first row of the mesh's hull clusters in mesh_cluster, -1 if none
mesh_clusternum     i nmesh      # number of those clusters
mesh_cluster        f nmeshcluster 4  # a cluster's sphere (centre, radius), then CLUSTER rows
#                                       (hull vertex, its hull index): compiler.mesh.hull_clusters
# materials (the rest of a material is rendering data: m.materials)
mat_rgba            f nmat 4     # colour; alpha 0 hides the geoms that use it from rays
# height fields (elevation of grid point (r, c) at x = -radius_x + 2 radius_x c / (ncol - 1),
# y = -radius_y + 2 radius_y r / (nrow - 1): z = data * elevation_z; the solid reaches down to
# z = -base_z; each grid cell is two triangles split along its (r, c)-(r+1, c+1) diagonal)
hfield_size         f nhfield 4  # radius_x, radius_y, elevation_z, base_z
hfield_nrow         i nhfield    # number of rows (along y)
hfield_ncol         i nhfield    # number of columns (along x)
hfield_adr          i nhfield    # address of the first elevation in hfield_data
hfield_data         f nhfielddata  # elevations in [0, 1], row-major, row 0 at y = -radius_y
# tendons
tendon_adr          i ntendon    # address of the first wrap object
tendon_num          i ntendon    # number of wrap objects
tendon_limited      i ntendon    # does the tendon have length limits (0/1)
tendon_range        f ntendon 2  # tendon length limits
tendon_margin       f ntendon    # minimum distance for limit detection
tendon_stiffness    f ntendon    # stiffness coefficient
tendon_damping      f ntendon    # damping coefficient
tendon_frictionloss f ntendon    # friction loss
tendon_lengthspring f ntendon 2  # spring rest length range (a dead band when the two differ)
tendon_length0      f ntendon    # tendon length at qpos0
tendon_epsilon      f ntendon    # softness epsilon of the tendon's limit (-1: use opt)
tendon_kappa        f ntendon    # softness kappa of the tendon's limit (-1: use opt)
tendon_rmin         f ntendon    # regulariser floor rmin (-1: use opt)
tendon_impedance    f ntendon 4  # impedance shape (width < 0: use opt)
tendon_dampratio    f ntendon    # damping ratio of the error reduction (1: critical)
tendon_width        f ntendon    # width for rendering
tendon_rgba         f ntendon 4  # colour
wrap_type           i nwrap      # WrapType
wrap_objid          i nwrap      # joint, site or geom id; -1 for a pulley
wrap_prm            f nwrap      # joint coefficient, or pulley divisor
# actuators
actuator_trntype    i nu         # TrnType
actuator_dyntype    i nu         # DynType
actuator_gaintype   i nu         # GainType
actuator_biastype   i nu         # BiasType
actuator_trnid      i nu 2       # transmission target ids (second: refsite for site transmission)
actuator_actadr     i nu         # first activation address, -1 for stateless
actuator_actnum     i nu         # number of activation variables
actuator_group      i nu         # group for visibility
actuator_ctrllimited  i nu       # is the control limited (0/1)
actuator_forcelimited i nu       # is the force limited (0/1)
actuator_actlimited   i nu       # is the activation limited (0/1)
actuator_actearly   i nu         # act_dot used in the force computation (0/1)
actuator_dynprm     f nu 10      # dynamics parameters
actuator_gainprm    f nu 10      # gain parameters
actuator_biasprm    f nu 10      # bias parameters
actuator_ctrlrange  f nu 2       # range of controls
actuator_forcerange f nu 2       # range of forces
actuator_actrange   f nu 2       # range of activations
actuator_gear       f nu 6       # scale length and transmitted force
actuator_cranklength f nu        # crank length for slider-crank
actuator_length0    f nu         # actuator length at qpos0
actuator_lengthrange f nu 2      # feasible actuator length range
# equality constraints (stored for the constraint stage)
eq_type             i neq        # EqType
eq_obj1id           i neq        # id of the first object
eq_obj2id           i neq        # id of the second object, -1 for world / none
eq_objtype          i neq        # connect and weld: 1 bodies, 6 sites (MuJoCo's mjtObj values)
eq_active0          i neq        # initial enable state (0/1)
eq_data             f neq 11     # type-specific data
eq_epsilon          f neq        # softness epsilon (-1: use opt)
eq_kappa            f neq        # softness kappa (-1: use opt)
eq_rmin             f neq        # regulariser floor rmin (-1: use opt)
eq_impedance        f neq 4      # impedance shape (width < 0: use opt)
eq_dampratio        f neq        # damping ratio of the error reduction (1: critical)
eq_hard             i neq        # 1: hard constraint (R_E -> 0, solved exactly; paper section II.C)
# explicit contact pairs and exclusions (stored for the collision stage)
pair_geom1          i npair      # id of geom 1
pair_geom2          i npair      # id of geom 2
pair_condim         i npair      # contact dimensionality
pair_friction       f npair 5    # tangent1, tangent2, spin, roll1, roll2
pair_margin         f npair      # constraint rows if dist < margin
pair_gap            f npair      # detect within margin + gap; no rows beyond margin
pair_epsilon        f npair      # softness epsilon (-1: use opt)
pair_kappa          f npair      # softness kappa (-1: use opt)
pair_rmin           f npair      # regulariser floor rmin (-1: use opt)
pair_impedance      f npair 4    # impedance shape (width < 0: use opt)
pair_dampratio      f npair      # damping ratio of the error reduction (1: critical)
exclude_body1       i nexclude   # id of body 1
exclude_body2       i nexclude   # id of body 2
# sensors (outputs in d.sensordata[sensor_adr : sensor_adr + sensor_dim])
sensor_type         i nsensor    # SensorType
sensor_datatype     i nsensor    # DataType: what the cutoff does
sensor_needstage    i nsensor    # Stage at which the sensor is computed
sensor_objtype      i nsensor    # ObjType of the sensorized object
sensor_objid        i nsensor    # id of the sensorized object, -1 for none
sensor_reftype      i nsensor    # ObjType of the reference object
sensor_refid        i nsensor    # id of the reference object; -1: global frame / none
sensor_intprm       i nsensor 3  # contact: data bits, reduce, num; rangefinder: data bits
sensor_dim          i nsensor    # number of scalar outputs
sensor_adr          i nsensor    # address in sensordata
sensor_cutoff       f nsensor    # cutoff for REAL and POSITIVE data; 0: none
sensor_noise        f nsensor    # noise standard deviation (stored only, as in MuJoCo 3.1.4+)
# keyframes
key_time            f nkey       # time
key_qpos            f nkey nq    # positions
key_qvel            f nkey nv    # velocities
key_act             f nkey na    # activations
key_ctrl            f nkey nu    # controls
key_mpos            f nkey nmocap 3  # mocap positions
key_mquat           f nkey nmocap 4  # mocap orientations
# derived at compile time by set_const (the compiler does not give them; marked with a +)
body_invweight0     f+ nbody 2   # mean inverse inertia at qpos0: translation, rotation
body_treedofadr     i+ nbody     # first dof of the body's kinematic tree (dofs of a tree are contiguous)
body_treedofnum     i+ nbody     # number of dofs of the body's kinematic tree
dof_invweight0      f+ nv        # mean inverse inertia of the dof's joint at qpos0
dof_M0              f+ nv        # diagonal of the inertia matrix (with armature) at qpos0
body_isfree         i+ nbody     # a standalone free body: one free joint, no children (0/1)
# dof-dof sparsity (MuJoCo's D, of qDeriv and qLU): row i holds, columns ascending, the dof
# ancestors of i, i itself and its dof descendants (contiguous: i .. i + D_rownnz - D_diag - 1)
D_rownnz            i+ nv        # number of nonzeros in row i
D_rowadr            i+ nv        # address of row i
D_diag              i+ nv        # position of the diagonal in row i (number of dof ancestors)
D_colind            i+ nD        # column indices
tendon_invweight0   f+ ntendon   # inverse inertia of the tendon at qpos0
actuator_acc0       f+ nu        # |M^-1 moment| at qpos0: acceleration of a unit actuator force
geom_aabb           f+ ngeom 6   # local bounding box of the geom: centre, half sizes (collision)
# default state
qpos0               f nq         # qpos at the reference configuration
qpos_spring         f nq         # reference configuration of joint springs
"""

# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------
DATA_FIELDS = """
# state and inputs
time                f 1          # simulation time
qpos                f nq         # position
qvel                f nv         # velocity
act                 f na         # actuator activation
ctrl                f nu         # control
qfrc_applied        f nv         # applied generalised force
xfrc_applied        f nbody 6    # applied Cartesian force/torque (world frame, at the com)
mocap_pos           f nmocap 3   # positions of mocap bodies
mocap_quat          f nmocap 4   # orientations of mocap bodies
qacc                f nv         # acceleration
act_dot             f na         # time derivative of act
warning             i 10         # warning counters (enums.Warning)
warning_info        i 10         # index at fault when each warning was last counted
# kinematics
xpos                f nbody 3    # Cartesian position of the body frame
xquat               f nbody 4    # Cartesian orientation of the body frame
xmat                f nbody 9    # Cartesian orientation of the body frame
xipos               f nbody 3    # Cartesian position of the body com
ximat               f nbody 9    # Cartesian orientation of the body inertia
xanchor             f njnt 3     # Cartesian position of the joint anchor
xaxis               f njnt 3     # Cartesian joint axis
geom_xpos           f ngeom 3    # Cartesian geom position
geom_xmat           f ngeom 9    # Cartesian geom orientation
site_xpos           f nsite 3    # Cartesian site position
site_xmat           f nsite 9    # Cartesian site orientation
cam_xpos            f ncam 3     # Cartesian camera position
cam_xmat            f ncam 9     # Cartesian camera orientation
light_xpos          f nlight 3   # Cartesian light position
light_xdir          f nlight 3   # Cartesian light direction
subtree_com         f nbody 3    # centre of mass of each subtree
cdof                f nv 6       # com-based motion axis of each dof (rot:lin)
cinert              f nbody 10   # com-based body inertia and mass
# tendons and actuators
ten_wrapadr         i ntendon    # start address of the tendon's path in wrap_xpos
ten_wrapnum         i ntendon    # number of points in the tendon's path
ten_length          f ntendon    # tendon lengths
ten_J               f ntendon nv # tendon moments
ten_velocity        f ntendon    # tendon velocities
wrap_obj            i nwrap2     # geom id, -1 for site, -2 for pulley
wrap_xpos           f nwrap2 3   # Cartesian 3D points of all tendon paths
actuator_length     f nu         # actuator lengths
actuator_moment     f nu nv      # actuator moments
actuator_velocity   f nu         # actuator velocities
actuator_force      f nu         # actuator force in actuation space
# velocity-dependent
cvel                f nbody 6    # com-based velocity (rot:lin)
cdof_dot            f nv 6       # time derivative of cdof
# inertia
crb                 f nbody 10   # com-based composite inertia and mass
qM                  f nM         # joint-space inertia (sparse, see dof_Madr)
qLD                 f nM         # L'*D*L factorisation of M (sparse)
qLDiagInv           f nv         # 1/diag(D)
# derivatives (engine/derivative.py) and the implicit integrators
qDeriv              f nD         # d (qfrc_actuator + qfrc_passive - qfrc_bias) / d qvel (D_*)
qLU                 f nD         # LU factorisation of M - h qDeriv (implicit; D_*)
qH                  f nM         # L'DL factorisation of M - h qDeriv (implicitfast; as qLD)
qHDiagInv           f nv         # 1/diag(D) of qH
qacc_implicit       f nv         # implicit integrators: (M - h qDeriv)^-1 (qfrc_smooth + qfrc_constraint)
deriv_cvel          f nbody 6    # rne_vel scratch: d cvel / d qvel_k
deriv_cacc          f nbody 6    # rne_vel scratch: d cacc / d qvel_k
deriv_cfrc          f nbody 6    # rne_vel scratch: d cfrc_int / d qvel_k
deriv_jac           f 6 nv       # passive_vel scratch: local 6D velocity Jacobian of a body frame (rot:lin)
deriv_B             f 6 6        # passive_vel scratch: d (local fluid force) / d (local velocity)
implicit_free       f 6 7        # implicitfast scratch: a free body's 6x6 system and right side
# forces
qfrc_bias           f nv         # C(qpos, qvel): Coriolis, centrifugal, gravity
qfrc_spring         f nv         # joint and tendon spring forces
qfrc_damper         f nv         # joint and tendon damping forces
qfrc_fluid          f nv         # forces of the medium (viscosity, density, wind)
qfrc_passive        f nv         # total passive force
qfrc_actuator       f nv         # actuator force in joint space
qfrc_smooth         f nv         # net unconstrained force
qacc_smooth         f nv         # unconstrained acceleration
qfrc_constraint     f nv         # constraint force
qfrc_inverse        f nv         # net external force from inverse dynamics
qacc_continuous     f nv         # inverse dynamics: the forward's acceleration of the step, qacc
                                 # or, implicit integrators, M^-1 (M - h qDeriv) qacc
cacc                f nbody 6    # com-based acceleration
cfrc_int            f nbody 6    # com-based interaction force with the parent
cfrc_ext            f nbody 6    # com-based external force on the body
energy              f 2          # potential, kinetic energy
subtree_linvel      f nbody 3    # linear velocity of the subtree's com (subtree_vel)
subtree_angmom      f nbody 3    # angular momentum of the subtree about its com (subtree_vel)
# sensors
sensordata          f nsensordata  # sensor outputs (m.sensor_adr, m.sensor_dim)
sensor_qacc         f nv         # joint accelerations the sensors measure (sensor.sensor_qacc)
sensor_qLD          f nM         # scratch: factor of M without implicit damping (sensor_qacc)
sensor_qLDiagInv    f nv         # scratch: its inverse diagonal
# contacts: the first ncon entries are valid; the capacity nconmax grows on demand
ncon                i 1          # number of detected contacts
contact_dist        f nconmax    # signed distance between the surfaces (negative: penetration)
contact_pos         f nconmax 3  # point midway between the two surfaces
contact_frame       f nconmax 9  # contact frame, rows: normal (from geom1 to geom2), tangents
contact_includemargin f nconmax  # include in the solver if dist < includemargin (margin)
contact_friction    f nconmax 5  # tangent1, tangent2, spin, roll1, roll2
contact_epsilon     f nconmax    # softness epsilon of the contact
contact_kappa       f nconmax    # softness kappa of the contact
contact_rmin        f nconmax    # regulariser floor rmin of the contact (-1: use opt)
contact_impedance   f nconmax 4  # impedance shape of the contact (width < 0: use opt)
contact_dampratio   f nconmax    # damping ratio of the contact
contact_geom1       i nconmax    # id of geom 1
contact_geom2       i nconmax    # id of geom 2
contact_geom        i nconmax 2  # the pair (geom1, geom2), as MuJoCo's mjContact.geom
contact_dim         i nconmax    # contact dimensionality (1, 3, 4, 6)
contact_exclude     i nconmax    # 0: include, 1: in the gap (dist >= includemargin: no rows)
contact_efc_address i nconmax    # first constraint row of the contact, -1 if excluded
sensor_match        i nconmax 2  # scratch of a contact sensor: matching contact, flipped (0/1)
sensor_criterion    f nconmax    # scratch of a contact sensor: sort key of the match
# collision scratch (broadphase)
geom_aabb_world     f ngeom 6    # world axis-aligned box of each geom inflated by its margin: lo, hi
bp_order            i ngeom      # geoms sorted along the sweep axis
bp_pairs            i npairmax 2 # candidate geom pairs from the broadphase
bp_cand             i npairmax 2 # pairs whose boxes overlap, waiting for the filters
bp_npairs           i 1          # number of candidate pairs
bp_axis             i 1          # sweep axis of the broadphase (kept between steps)
# collision scratch (narrowphase)
col_dist            f 50         # contacts of one geom pair: distance
col_pos             f 50 3       # contacts of one geom pair: position
col_frame           f 50 9       # contacts of one geom pair: normal, optional first tangent
col_work            f 72 6       # box-box and polytope clipping work rows
gjk_simplex         f 4 10       # GJK simplex: A-B point, point on A, point on B, weight
epa_vert            f 128 9      # EPA polytope vertices: A-B point, point on A, point on B
epa_face            i 512 3      # EPA faces (vertex indices)
epa_fdata           f 512 4      # EPA face normal and distance to the origin
epa_falive          i 512        # EPA face still on the polytope (0/1)
epa_edge            i 256 2      # EPA horizon edges
hfield_prism        f 6 3        # vertices of the height-field prism under test (world frame)
geom_meshwarm       i ngeom      # hull vertex of a mesh geom's last support point (-1: none)
col_hullpt          f nhullmax 2 # plane-mesh: clusters' centres in the plane; faces: heights
col_hullid          i nhullmax   # plane-mesh: the clusters below the plane (m.mesh_cluster)
# constraints: the first nefc rows are valid; the capacity njmax grows on demand
nefc                i 1          # number of constraint rows
nefc_overflow       i 1          # set when contacts or rows did not fit: the caller grows Data
efc_type            i njmax      # constraint type (enums.ConstraintType)
efc_id              i njmax      # id of the object the row belongs to (joint, tendon, contact...)
efc_J               f njmax njcol  # constraint Jacobian: row i's entries on the dofs of
                                 # efc_range, at the dofs' columns (dense layout, njcol = nv)
                                 # or packed from column 0 (sparse layout, njcol <= nv); read
                                 # and write rows through constraint.row_* only
efc_pos             f njmax      # constraint position (violation, distance)
efc_margin          f njmax      # inclusion margin
efc_frictionloss    f njmax      # friction loss (friction rows)
efc_mu              f njmax      # friction coefficient of the row (contact friction rows)
efc_R               f njmax      # regulariser R (paper eq. 27)
efc_B               f njmax      # stabilisation damping B (paper eq. 28)
efc_K               f njmax      # stabilisation stiffness K (paper eq. 28)
efc_kappa           f njmax      # time constant kappa of the row (exact stabilization)
efc_imp             f njmax 3    # impedance d(x) of the row, d'(x) (MuJoCo's efc_KBIP[2:4]),
                                 # dR/dx (0 where R is rmin)
efc_hard            i njmax      # 1: hard equality row (R = 0, solved exactly)
efc_vstar           f njmax      # desired velocity v* (paper eq. 24)
efc_vel             f njmax      # J qvel
efc_range           i njmax 4    # the row's nonzero dofs: two tree ranges (adr, num, adr, num)
efc_Jrow            f njrow nv   # scratch: rows being built (dense, zero outside them); no rows:
                                 # the dense layout
efc_force           f njmax      # constraint force (impulse / timestep)
efc_impulse         f njmax      # constraint impulse f of the paper
efc_warm            f njmax      # impulses of the previous step's rows, for warm starting
warm_nefc           i 1          # number of rows of the previous step
warm_type           i njmax      # their types
warm_id             i njmax      # their object ids (contact rows: index into warm_contact_*)
warm_ncon           i 1          # number of contacts of the previous step
warm_contact_geom   i nconmax 2  # their geoms
warm_contact_pos    f nconmax 3  # their positions
warm_contact_adr    i nconmax    # their first rows
efc_A               f njmax 6    # A = J M^-1 J' (paper eq. 8) within each object: row i, column
                                 # j holds A(i, first + j), first = the object's first row
efc_MinvJT          f njmax njcol  # rows of M^-1 J' (efc_J's layout)
efc_Y               f njmax njcol  # rows of D^-1/2 L^-T J' (M = L' D L; efc_J's layout): A = Y Y',
                                 # each row nonzero on its bodies' chains only (PGS)
efc_run             i njmax 37     # the runs of consecutive dofs on which efc_Y's rows of the
                                 # row's object are nonzero: their number, then (column, dof,
                                 # length) per run, at most 6 per range (PGS)
efc_b               f njmax      # v- - v*: linear term of the impulse problem (paper eq. 11)
efc_grad            f njmax      # scratch: gradient of the impulse problem
qacc_warmstart      f nv         # qacc of the previous step, to warm-start the solver
solver_w            f nv         # scratch: M^-1 J' f, the velocity change of the impulses
solver_v            f nv         # scratch: M^-1 J' f of the cost (solver.dual_cost)
solver_y            f nv         # scratch: Y' f, PGS's impulse velocity before L^-1 D^-1/2
solver_L            f njmax 6    # scratch: Cholesky factors of the contact blocks (PGS)
solver_lam          f njmax      # scratch: a contact's ellipse multiplier in PGS's last sweep
solver_order        i njmax      # scratch: PGS's order of the objects in a sweep (first rows)
solver_fprev        f njmax      # scratch: PGS's impulses before the last sweep (momentum)
solver_fmom         f njmax      # scratch: PGS's extrapolated impulses (momentum restart)
solver_eig          f njmax 7    # scratch: Q and Theta of Q Theta Q' = diag(mu) H diag(mu), H the
                                 # friction block of a condim 4 or 6 contact: row i+1+a holds
                                 # row a of Q, column 6 theta_a (PGS, _friction_eigen)
solver_X            f njmax njcol  # scratch: rows of M^-1 J' being solved, dof by dof (compute_A)
solver_vec          f 10 12      # scratch vectors of a contact block (PGS, noslip, primal cost)
solver_mat          f 12 7       # scratch matrices of a contact block (PGS, noslip)
newton_H            f nvdense nvdense  # scratch: Hessian of the primal problem (dense Newton)
newton_vec          f 6 nv       # scratch of the Newton solver: gradient, step, M p, J_E' lam, M dv, 1/D
newton_DJ           f 6 nv       # scratch of the Newton solver: D J of one object
newton_Jv           f njmax      # scratch of the Newton solver: J v' (Hessian, line search)
newton_Jp           f njmax      # scratch of the Newton solver: J p (line search)
newton_CU           f 12 nvdense  # scratch: D J of Newton's rows across branches (CROSS_MAX)
newton_Y            f 12 nvdense  # scratch: H_t^-1 J' of those rows (H_t: the tree's factor)
newton_S            f 12 13      # scratch: I + D J H_t^-1 J' over those rows, right-hand side
newton_w            f 12         # scratch: the solution of that system
newton_cross        i 12         # scratch: those rows
dense_M             f nvdense nvdense  # scratch: dense inertia of the step (M + h B), Newton solver
solver_niter        i 1          # solver iterations used in the last step
solver_residual     f 1          # final residual of the last solve
# integrator scratch (allocated once)
qpos_save           f nq         # state at the start of a multi-stage step
qvel_save           f nv
act_save            f na
rk_qvel             f 4 nv       # Runge-Kutta stage velocities
rk_qacc             f 4 nv       # Runge-Kutta stage accelerations
rk_act_dot          f 4 na       # Runge-Kutta stage activation derivatives
qpos_stage          f nq         # interleaved integrator: positions after the smooth step
act_stage           f na         # interleaved integrator: activations after the smooth step
scratch_nv          f 6 nv       # scratch vectors: 0-1 Runge-Kutta, 2 energy and hard rows, 3-5 constraints
scratch_M           f nM         # scratch sparse matrix (the Newton Hessian in qM's layout)
"""


def _parse_table(text):
    fields = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, dtype, *shape = line.split()
        fields.append((name, dtype.rstrip("+"),
                       tuple(int(s) if s.isdigit() else s for s in shape)))
        if dtype.endswith("+"):
            DERIVED.add(name)
    return tuple(fields)


DERIVED = set()  # Model fields computed by set_const after compilation


MODEL_SPEC = _parse_table(MODEL_FIELDS)
DATA_SPEC = _parse_table(DATA_FIELDS)
_DTYPES = {"f": np.float64, "i": np.int64}
_NBTYPES = {"f": nbtypes.float64, "i": nbtypes.int64}


def _nbtype(dtype, shape):
    return nbtypes.Array(_NBTYPES[dtype], len(shape), "C")


class _ShortNamedStructRef(nbtypes.StructRef):
    """A StructRef whose name is its class's and a digest of its fields.

    numba names a StructRef by spelling out all of its fields (some 25 kB for the Model), and
    that name is the type's mangled form in every symbol of a function that takes it: a kernel
    of (m, d) had a 42 kB symbol, repeated at each declaration and call of the LLVM modules
    (575 kB of IR for a two-line function), which LLVM parsed, hashed and wrote into every
    object file and cache entry. The digest keeps types of different fields distinct."""

    def __init__(self, fields):
        super().__init__(fields)
        self.name = f"{self._typename}_{hashlib.sha1(self.name.encode()).hexdigest()[:16]}"

    def preprocess_fields(self, fields):
        return tuple((n, nbtypes.unliteral(t)) for n, t in fields)


@structref.register
class ModelStructType(_ShortNamedStructRef):
    """numba type of the array bundle that jitted kernels receive as ``m``."""


@structref.register
class DataStructType(_ShortNamedStructRef):
    """numba type of the array bundle that jitted kernels receive as ``d``."""


class ModelStruct(structref.StructRefProxy):
    """Python handle of a ModelStructType; ``_arrays`` keeps the borrowed arrays alive."""


class DataStruct(structref.StructRefProxy):
    """Python handle of a DataStructType; ``_arrays`` keeps the borrowed arrays alive."""


@intrinsic
def borrow(typingctx, arr):
    """arr without its NRT meminfo and parent object: a view whose references compiled code does
    not count (no atomic increments and decrements when a kernel reads it). Whoever holds the
    structref must keep the array itself alive (the struct proxies hold their arrays)."""
    def codegen(context, builder, sig, args):
        view = context.make_array(arr)(context, builder, value=args[0])
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        return view._getvalue()
    return arr(arr), codegen


structref.define_boxing(ModelStructType, ModelStruct)
structref.define_boxing(DataStructType, DataStruct)

MODEL_TYPE = ModelStructType([(n, _nbtype(t, s)) for n, t, s in MODEL_SPEC])
DATA_TYPE = DataStructType([(n, _nbtype(t, s)) for n, t, s in DATA_SPEC])


def _new_struct(constructor, spec, arrays):
    """The handle that kernels receive: a structref over the arrays of the field table spec
    (built by the generated constructor of _structs.py), which keeps the arrays alive; with
    ENGINE_JIT=0, or while a cold cache compiles (jit.interpreting), where the kernels run as
    plain Python, a namespace of the arrays (rebuilt by compiled_structs)."""
    if not jit.ENABLED or jit.interpreting():
        return SimpleNamespace(**{n: arrays[n] for n, _, _ in spec})
    from . import _structs
    s = getattr(_structs, constructor)(*[arrays[n] for n, _, _ in spec])
    s._arrays = tuple(arrays.values())
    return s


_PLAIN_OWNERS = []           # weak references to the Models and Data holding plain handles


def _owns_plain(obj) -> None:
    if jit.ENABLED and isinstance(obj._struct, SimpleNamespace):
        _PLAIN_OWNERS.append(weakref.ref(obj))


def compiled_structs() -> None:
    """Give the Models and Data made while the kernels ran as plain Python (a cold cache) the
    compiled handles, once they compile (warmup.join)."""
    while _PLAIN_OWNERS:
        obj = _PLAIN_OWNERS.pop()()
        if obj is None or not isinstance(obj._struct, SimpleNamespace):
            continue
        if isinstance(obj, Model):
            object.__setattr__(obj, "_struct", obj.thread_struct())
        else:
            object.__setattr__(obj, "_struct",
                               _new_struct("new_data_struct", DATA_SPEC, obj._arrays))


def _shape(shape, sizes):
    return tuple(s if isinstance(s, int) else int(sizes[s]) for s in shape)


ARENA_ALIGN = 64      # bytes: a cache line (MuJoCo aligns mjData's arrays the same way)


def _arena_layout(fields) -> tuple:
    """(layout, nbytes) of arrays of (name, dtype, shape) in one buffer (_arena): each at an
    ARENA_ALIGN boundary and padded to one; layout lists (name, dtype, shape, offset, size),
    the offset counted in items of the array's dtype."""
    layout = []
    nbytes = 0
    for name, dtype, shape in fields:
        dt = np.dtype(dtype)
        size = math.prod(shape)
        layout.append((name, dt, shape, nbytes // dt.itemsize, size))
        nbytes += -(-size * dt.itemsize // ARENA_ALIGN) * ARENA_ALIGN
    return layout, nbytes


def _arena(layout, nbytes, zero=True):
    """(buffer, views): the arrays of an _arena_layout in one buffer, as MuJoCo keeps mjData's
    arrays in one. A reset is then one fill, a copy one memcpy, and no cache line holds
    arrays of two Data (the threads of engine.rollout each write their own). zero: zeroed
    by allocation (pages are touched on first use, not here), else left as they come."""
    buffer = (np.zeros if zero else np.empty)(nbytes + ARENA_ALIGN, np.uint8)
    start = _arena_start(buffer)
    flat = {}            # the buffer as one array of each dtype: views are then slices of it
    views = {}
    for name, dt, shape, at, size in layout:
        if dt not in flat:
            flat[dt] = buffer[start:start + nbytes].view(dt)
        v = flat[dt][at:at + size]
        views[name] = v if len(shape) == 1 else v.reshape(shape)
    return buffer, views


def _arena_start(buffer) -> int:
    """Offset in buffer (of _arena) of its first array."""
    return -buffer.ctypes.data % ARENA_ALIGN


class ModelError(Exception):
    """Bad model input. The message names the file, line, element and attribute at fault."""

    def __init__(self, message, file=None, line=None, element=None, attribute=None):
        self.file, self.line, self.element, self.attribute = file, line, element, attribute
        where = []
        if file is not None:
            where.append(f"{file}")
        if line is not None:
            where.append(f"line {line}")
        if element is not None:
            where.append(f"element <{element}>")
        if attribute is not None:
            where.append(f"attribute '{attribute}'")
        self.reason = message
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class CapacityError(MemoryError):
    """An allocation refused before it is made: the arrays asked for need more memory than the
    machine has available. The message gives both numbers and what asked for them."""


def available_memory() -> int:
    """Bytes of memory available to a new allocation (Linux's MemAvailable, else free pages)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def _gib(nbytes):
    return f"{nbytes / 2 ** 30:.3g} GiB"


def check_memory(nbytes: int, what: str) -> None:
    """Raise CapacityError if nbytes exceed the memory available; what names the request."""
    avail = available_memory()
    if nbytes > avail:
        raise CapacityError(f"{what} needs {_gib(nbytes)} ({nbytes} bytes), more than the "
                            f"{_gib(avail)} of memory available")


def spec_nbytes(spec, sizes) -> int:
    """Bytes of the arrays of a field table (MODEL_SPEC, DATA_SPEC) at the given sizes."""
    return sum(8 * math.prod(_shape(shape, sizes)) for _, _, shape in spec)


# --------------------------------------------------------------------------------------------
# structural Model fields: read-only
# --------------------------------------------------------------------------------------------
# Integer Model fields that are flags, bit masks or groups: any value is safe for the kernels,
# so they stay editable like the float parameters. Every other integer field (ids, addresses,
# counts, types, condim: what a kernel uses as an index or a loop bound) is structural and
# read-only, and so are the option arrays opt_* (edited through m.opt, which checks them).
EDITABLE_INTS = frozenset((
    "jnt_group jnt_limited jnt_actfrclimited geom_contype geom_conaffinity geom_group "
    "geom_priority site_group light_directional light_castshadow light_active tendon_limited "
    "actuator_group actuator_ctrllimited actuator_forcelimited actuator_actlimited "
    "actuator_actearly eq_active0 eq_hard").split())
STRUCTURAL = frozenset(n for n, t, _ in MODEL_SPEC
                       if t == "i" and not n.startswith("opt_") and n not in EDITABLE_INTS)


def _readonly_message(name):
    if name.startswith("opt_"):
        return (f"Model.{name} is read-only: set the option through m.opt.{name[4:]}, which "
                "checks the value")
    return (f"Model.{name} is structural (an index, address, count, type or dimension that "
            "the compiled kernels rely on) and read-only. Editable are the physical parameters "
            "(every float field: body_mass, geom_size, geom_friction, dof_damping, "
            "actuator_gainprm, ...), the integer flags and groups ("
            + ", ".join(sorted(EDITABLE_INTS)) + ") and the options (m.opt). To change the "
            "structure, edit the model (its MJCF, or its engine.Spec) and compile it again.")


class GuardedArray(np.ndarray):
    """A Model array whose indexed writes are checked (the kernels see a plain array): a
    structural field, read-only, raises an error that says what may be edited instead; an
    option vector (m.opt.gravity) refuses a value its option does not admit. Views keep the
    check; copies are plain writable arrays."""

    _field = None     # name of the read-only Model field (the message), or None
    _check = None     # callable(value) raising ValueError for a refused value, or None

    def __array_finalize__(self, obj):
        if obj is not None and self.base is not None:     # a view: the same memory
            self._field = getattr(obj, "_field", None)
            self._check = getattr(obj, "_check", None)

    def __setitem__(self, key, value):
        if self._field is not None and not self.flags.writeable:
            raise ValueError(_readonly_message(self._field))
        if self._check is not None:
            self._check(value)
        super().__setitem__(key, value)

    def __repr__(self):
        return repr(self.view(np.ndarray))


def _guard(a, field=None, check=None):
    g = a.view(GuardedArray)
    g._field, g._check = field, check
    return g


def check_option(name: str, value):
    """The value to store for option ``name`` (a float, an int or a float vector), or
    ValueError naming the option and what it admits: finite numbers; positive timestep, kappa,
    rmin and impratio; non-negative epsilon, tolerance, iterations, density and viscosity;
    integers for the integer options, the enum options among their members, disableflags
    within DisableBit and enableflags 0 (no enable flag is implemented). The same check serves
    m.opt and the MJCF <option> element."""
    spec = _OPTION_SPEC.get(name)
    if spec is None:
        raise ValueError(f"unknown option {name!r}")
    dtype, shape = spec
    if isinstance(value, (str, bytes)):
        raise ValueError(f"option {name} must be a number, got {value!r}")
    if dtype == "i":
        try:
            v = operator.index(value.item() if isinstance(value, np.ndarray) and value.size == 1
                               else value)
        except TypeError:
            raise ValueError(f"option {name} must be an integer, got {value!r}") from None
        enum = Option._ENUMS.get(name)
        if enum is not None and v not in set(enum):
            members = ", ".join(f"{e.name} ({e.value})" for e in enum)
            raise ValueError(f"option {name} must be one of engine.{enum.__name__}: "
                             f"{members}; got {value!r}")
        if name == "disableflags":
            known = 0
            for bit in DisableBit:
                known |= int(bit)
            if v < 0 or v & ~known:
                raise ValueError(f"option disableflags must combine engine.DisableBit bits "
                                 f"(0 to {known}), got {value!r}")
        if name == "enableflags" and v != 0:
            raise ValueError(f"option enableflags must be 0 (no enable flag is implemented), "
                             f"got {value!r}")
        x = float(v)
    else:
        try:
            x = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"option {name} must be a number, got {value!r}") from None
        want = int(np.prod(shape))
        if x.size != want or (want == 1 and x.ndim > 1):
            raise ValueError(f"option {name} takes {want} number{'s' * (want > 1)}, got "
                             f"{value!r}")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"option {name} must be finite, got {value!r}")
        v = x.reshape(shape).copy() if want > 1 else float(x.reshape(()))
        x = x.min()
    if name in Option._POSITIVE and not x > 0:
        raise ValueError(f"option {name} must be positive, got {value!r}")
    if name in Option._NONNEGATIVE and not x >= 0:
        raise ValueError(f"option {name} must be non-negative, got {value!r}")
    return v


_OPTION_SPEC = {n[4:]: (t, s) for n, t, s in MODEL_SPEC if n.startswith("opt_")}


def check_parameter(label: str, value) -> None:
    """A value assigned to a float Model field (m.body_mass = ..., m.body("b").mass = ...):
    finite numbers, else ValueError. (A bad value written in place into the array is not
    seen here: the step reports what it does, as a bad qacc.)"""
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{label} takes numbers, got {value!r}")
    try:
        x = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{label} takes numbers, got {value!r}") from None
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{label} must be finite, got {value!r}")


def _option_check(name):
    """The element check of the option vector ``name`` (GuardedArray._check): finite numbers."""
    return lambda value: check_parameter(f"option {name}", value)


def _assign(label, a, value):
    """a[...] = value, or ValueError naming the field: numbers only (integers for an integer
    field), in a shape that fills a (a scalar, a's shape, or one numpy broadcasts to it)."""
    v = np.asarray(value)
    if v.dtype.kind not in "biuf":
        raise ValueError(f"{label} takes numbers, got {value!r:.80}")
    if a.dtype.kind == "i" and v.dtype.kind == "f" and not np.all(v == np.round(v)):
        raise ValueError(f"{label} takes integers, got {value!r:.80}")
    try:
        fits = np.broadcast_shapes(v.shape, a.shape) == a.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{label} has shape {a.shape}, got a value of shape {v.shape}")
    a[...] = v


class _ArrayHolder:
    """Attribute access to the arrays of a Model or Data. Assigning a field copies into the
    existing buffer (the jitted kernels hold it); reading or assigning a name that is not a
    field raises AttributeError naming the closest field, so a typo is never stored."""

    _READONLY: tuple = ()     # attributes that may be read but not assigned

    def __setattr__(self, name, value):
        arrays = self.__dict__.get("_arrays")
        if isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)        # d.time, d.ncon, d.nefc
        elif arrays is not None and name in arrays:
            _assign(f"{type(self).__name__}.{name}", arrays[name], value)
        elif name in self._READONLY:
            raise AttributeError(f"{type(self).__name__}.{name} is read-only")
        elif name in self.__dict__:
            object.__setattr__(self, name, value)        # the Model's extras (path, names ...)
        else:
            raise unknown_attribute(type(self).__name__, name, self._public_names())

    def __getattr__(self, name):
        # called only when the normal lookup failed
        if name.startswith("_"):
            raise AttributeError(name)
        raise unknown_attribute(type(self).__name__, name, self._public_names())

    def _public_names(self):
        return ([n for n in self.__dict__ if not n.startswith("_")]
                + [n for n in dir(type(self)) if not n.startswith("_")])


class Option:
    """Live view of the model options (``m.opt``); every edit is seen by the next step and
    checked first (check_option): scalars by value, enums by their members, vectors
    (``m.opt.gravity[2] = x`` included) by element."""

    _SCALARS = ("timestep density viscosity tolerance epsilon kappa rmin impratio integrator "
                "solver cone jacobian stabilization iterations noslip_iterations noslip_tolerance "
                "ccd_iterations ccd_tolerance disableflags enableflags").split()
    _ENUMS = {"integrator": Integrator, "solver": Solver, "cone": Cone, "jacobian": Jacobian,
              "stabilization": Stabilization}

    def __init__(self, arrays):
        """arrays: writable views of the Model's opt_* arrays (which are read-only)."""
        vectors = {k: _guard(a, check=_option_check(k[4:])) for k, a in arrays.items()
                   if k[4:] not in self._SCALARS}
        object.__setattr__(self, "_arrays", arrays)
        object.__setattr__(self, "_vectors", vectors)
        object.__setattr__(self, "_kept", None)     # forward._options; cleared by every edit

    def __getattr__(self, name):
        arrays = self.__dict__.get("_arrays")
        key = "opt_" + name
        if arrays is None or key not in arrays:
            raise self._unknown(name)
        a = arrays[key]
        if name in self._SCALARS:
            v = a[0]
            if name in self._ENUMS:
                return self._ENUMS[name](int(v))
            return int(v) if a.dtype.kind == "i" else float(v)
        return self._vectors[key]

    # admissible values: the solvers divide by R >= rmin, kappa and impratio; NaN is refused
    _POSITIVE = ("timestep", "kappa", "rmin", "impratio")
    _NONNEGATIVE = ("epsilon", "impedance", "tolerance", "iterations", "density", "viscosity",
                    "noslip_iterations", "noslip_tolerance", "ccd_iterations", "ccd_tolerance")

    def __setattr__(self, name, value):
        key = "opt_" + name
        if key not in self._arrays:
            raise self._unknown(name)
        self._arrays[key][...] = check_option(name, value)
        object.__setattr__(self, "_kept", None)

    # MuJoCo's options that this engine does not have
    _MUJOCO_ONLY = ("ls_tolerance sleep_tolerance o_margin o_solref o_solimp o_friction "
                    "ls_iterations disableactuator sdf_iterations sdf_initpoints").split()

    def _unknown(self, name):
        if name.startswith("_"):
            return AttributeError(name)
        arrays = self.__dict__.get("_arrays") or {}
        note = "MuJoCo's, not supported by this engine" if name in self._MUJOCO_ONLY else ""
        return unknown_attribute("m.opt", name, [k[4:] for k in arrays if k.startswith("opt_")],
                                 what="option", note=note)

    def __repr__(self):
        keys = [k[4:] for k in self._arrays if k.startswith("opt_")]
        return "Option(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in keys) + ")"


NAME_KINDS = ("body", "joint", "geom", "site", "camera", "light", "mesh", "tendon", "actuator",
              "equality", "key", "sensor", "material", "texture", "hfield")


class Model(_ArrayHolder):
    """A compiled model: sizes, numeric arrays (MODEL_SPEC), names and rendering assets.

    Built by the compiler from a dict of arrays; missing arrays are an error so that the
    compiler's output is checked against the table. Non-numeric extras (names, materials,
    textures, sensors, the source path) are plain attributes. ``m.copy()``, ``copy.copy`` and
    ``copy.deepcopy`` give an independent model; a Model pickles (the jitted bundle is rebuilt
    when it is loaded). ``m.body("name")`` ... give named views (engine.views).
    """

    _READONLY = tuple(MODEL_SIZES) + ("opt", "signature")

    def __init__(self, sizes: dict, arrays: dict, names: dict | None = None, **extras):
        arrays = dict(arrays)
        sizes = dict(sizes)
        for k, derive in DERIVED_SIZES.items():
            if k not in sizes:
                sizes[k] = derive(sizes)
        sizes = {k: int(sizes[k]) for k in MODEL_SIZES}
        out = {}
        for name, dtype, shape in MODEL_SPEC:
            want = _shape(shape, sizes)
            if name not in arrays and name in DERIVED:
                arrays[name] = np.zeros(want, dtype=_DTYPES[dtype])
            if name not in arrays:
                raise ValueError(f"compiler did not produce Model.{name}")
            a = np.ascontiguousarray(np.asarray(arrays.pop(name), dtype=_DTYPES[dtype]))
            if not a.flags.writeable:
                a = a.copy()           # a read-only field of another Model
            if a.shape != want:
                a = a.reshape(want) if a.size == int(np.prod(want)) else a
            if a.shape != want:
                raise ValueError(f"Model.{name} has shape {a.shape}, expected {want}")
            out[name] = a
        if arrays:
            raise ValueError(f"unknown Model arrays: {sorted(arrays)}")
        # structural fields and options: guarded views, frozen once the jitted bundle holds them
        option_handles = {k: a.view(np.ndarray) for k, a in out.items() if k.startswith("opt_")}
        for k, a in out.items():
            if k in STRUCTURAL or k.startswith("opt_"):
                out[k] = _guard(a, field=k)
        object.__setattr__(self, "_arrays", out)
        object.__setattr__(self, "_sizes", sizes)
        for k, v in sizes.items():
            object.__setattr__(self, k, v)
        for k, v in out.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "opt", Option(option_handles))
        names = names or {}
        object.__setattr__(self, "names", {k: list(names.get(k, [])) for k in NAME_KINDS})
        object.__setattr__(self, "_name_index",
                           {k: {n: i for i, n in enumerate(v) if n} for k, v in self.names.items()})
        object.__setattr__(self, "_extras", tuple(extras))
        for k, v in extras.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_struct", self.thread_struct())
        _owns_plain(self)
        self._freeze()

    def thread_struct(self):
        """A compiled-code handle of this Model over its very arrays (no copy). A thread that
        runs kernels on a Model shared with other threads takes its own: each compiled call
        counts references to the struct it is given (an atomic write), and threads sharing one
        struct would write the same counter from every core (engine.rollout).

        The handle holds the writable arrays that the frozen fields guard: numba types a
        read-only array apart, and the struct's constructor compiled a second time for them."""
        return _new_struct("new_model_struct", MODEL_SPEC,
                           {k: a if a.flags.writeable else a.base for k, a in self._arrays.items()})

    def _freeze(self) -> None:
        """Make the structural fields and option arrays read-only; compute the signature."""
        for k, a in self._arrays.items():
            if isinstance(a, GuardedArray):
                a.flags.writeable = False
        h = hashlib.blake2b(digest_size=8)
        h.update(repr(sorted(self._sizes.items())).encode())
        for k in sorted(STRUCTURAL):
            h.update(k.encode())
            h.update(self._arrays[k].tobytes())
        object.__setattr__(self, "signature", int.from_bytes(h.digest(), "little"))

    @contextlib.contextmanager
    def _unfrozen(self):
        """Structural fields writable within the block (set_const fills the derived ones)."""
        for k in STRUCTURAL:
            self._arrays[k].flags.writeable = True
        try:
            yield self
        finally:
            self._freeze()

    def __setattr__(self, name, value):
        a = self.__dict__["_arrays"].get(name)
        if a is not None and a.dtype.kind == "f":
            check_parameter(f"Model.{name}", value)
        super().__setattr__(name, value)

    @property
    def nwrap2(self):
        """Capacity of the tendon path buffers (two points per wrap object at most)."""
        return 2 * self.nwrap

    @property
    def nhullmax(self):
        """Capacity of the hull scratch (col_hullpt, col_hullid): the most vertices of one
        mesh's convex hull (all its vertices when it has no hull graph)."""
        return max((int(self.mesh_graph[a]) if a >= 0 else int(n)
                    for a, n in zip(self.mesh_graphadr, self.mesh_vertnum)), default=0)

    # named access, MuJoCo's m.body("name"), m.jnt / m.joint(...), ... (engine.views)
    body = accessor("body")
    joint = jnt = accessor("joint")
    geom = accessor("geom")
    site = accessor("site")
    camera = cam = accessor("camera")
    light = accessor("light")
    mesh = accessor("mesh")
    hfield = accessor("hfield")
    tendon = accessor("tendon")
    actuator = accessor("actuator")
    sensor = accessor("sensor")
    equality = eq = accessor("equality")
    key = keyframe = accessor("key")

    def __reduce__(self):
        """Pickle the sizes, arrays, names and extras; the jitted bundle is rebuilt on load."""
        return (_model_from_state, (self._sizes, self._arrays, self.names,
                                    {k: getattr(self, k) for k in self._extras}))

    def copy(self) -> "Model":
        """An independent copy (arrays, names and extras copied)."""
        return copy.deepcopy(self)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        sizes, arrays, names, extras = self.__reduce__()[1]
        m = _model_from_state(sizes, {k: a.copy() for k, a in arrays.items()},
                              copy.deepcopy(names, memo), copy.deepcopy(extras, memo))
        memo[id(self)] = m
        return m

    def __repr__(self):
        return (f"Model(nq={self.nq}, nv={self.nv}, nu={self.nu}, na={self.na}, nbody={self.nbody}, "
                f"ngeom={self.ngeom}, ntendon={self.ntendon})")


def _model_from_state(sizes, arrays, names, extras):
    return Model(sizes, arrays, names, **extras)


def sparse_jacobian(m) -> bool:
    """Whether a Data made now for m stores its constraint rows sparse (m.opt.jacobian: SPARSE,
    or AUTO with nv >= SPARSE_NV, as MuJoCo's mj_isSparse). Hard equality rows need the dense
    layout: a model with m.eq_hard set is dense."""
    jac = int(m.opt_jacobian[0])
    sparse = jac == Jacobian.SPARSE or (jac == Jacobian.AUTO and m.nv >= SPARSE_NV)
    return sparse and not m.eq_hard.any()


def jacobian_columns(m, sparse) -> int:
    """Columns of efc_J's rows: nv (dense layout), or in the sparse layout the most dofs a row
    can touch, the two largest kinematic trees (a contact or an equality between them), nv
    when a tendon row may touch every dof."""
    if not sparse or m.ntendon > 0 or m.nv == 0:
        return m.nv
    trees = np.sort(np.bincount(m.body_rootid, weights=m.body_dofnum))[::-1]
    return int(min(m.nv, trees[:2].sum()))


def data_sizes(m, nconmax, njmax, sparse=None) -> dict:
    """The sizes of DATA_SPEC for m with these capacities, with sparse rows or not (by default
    sparse_jacobian(m)): njcol columns of efc_J, nvdense x nvdense for the dense Newton's
    matrices and njrow scratch rows (0 x 0 and 6 in the sparse layout, nv x nv and 0 dense)."""
    sparse = sparse_jacobian(m) if sparse is None else sparse
    return dict(m._sizes, nwrap2=m.nwrap2, nhullmax=m.nhullmax, nconmax=nconmax,
                npairmax=max(64, 8 * m.ngeom),
                njmax=njmax, njcol=jacobian_columns(m, sparse), nvdense=0 if sparse else m.nv,
                njrow=6 if sparse else 0)


def _data_request(m, sizes) -> str:
    """What a Data of these sizes is, for check_memory's message: the sizes that drive it."""
    layout = "sparse" if sizes["nvdense"] == 0 else "dense"
    big = sorted(((8 * math.prod(_shape(shape, sizes)), name)
                  for name, _, shape in DATA_SPEC), key=lambda b: -b[0])[:3]
    parts = ", ".join(f"{name} {_gib(n)}" for n, name in big)
    return (f"Data for this model ({m.nbody} bodies, nv={m.nv}, {layout} rows of "
            f"{sizes['njcol']} columns; room for nconmax={sizes['nconmax']} contacts and "
            f"njmax={sizes['njmax']} constraint rows; largest: {parts})")


class Data(_ArrayHolder):
    """Simulation state and every intermediate result (DATA_SPEC), allocated once by make_data.

    ``d.ncon`` and ``d.nefc`` are Python ints (the jitted kernels keep one-element arrays);
    ``d.contact`` lists the contacts (engine.views.ContactView); ``d.body("name")`` ... give
    named views. ``d.copy()`` and ``copy.copy`` give an independent Data of the same model,
    ``copy.deepcopy`` copies the model as well; a Data pickles together with its model.
    """

    _READONLY = ("model", "nconmax", "njmax")
    _PROPERTIES = ("time", "ncon", "nefc")     # arrays exposed as Python numbers

    def __init__(self, m: Model, nconmax: int | None = None, njmax: int | None = None):
        if not isinstance(m, Model):
            raise TypeError(f"expected an engine.Model, got {type(m).__name__}")
        nconmax = max(16, m.ngeom) if nconmax is None else positive_int(nconmax, "nconmax")
        njmax = max(64, 4 * nconmax + m.nv) if njmax is None else positive_int(njmax, "njmax")
        sizes = data_sizes(m, nconmax, njmax)
        check_memory(spec_nbytes(DATA_SPEC, sizes), _data_request(m, sizes))
        layout = _arena_layout((name, _DTYPES[dtype], _shape(shape, sizes))
                               for name, dtype, shape in DATA_SPEC)
        self._adopt(m, *_arena(*layout), layout)

    def _adopt(self, m: Model, arena, arrays: dict, layout=None) -> None:
        """Take arrays (one per DATA_SPEC field) as this Data's and build the jitted bundle;
        arena and layout: the buffer they are views of and its _arena_layout, or None (the
        arrays are then copied into a new arena)."""
        if arena is None:
            layout = _arena_layout((k, a.dtype, a.shape) for k, a in arrays.items())
            arena, views = _arena(*layout, zero=False)
            for k, a in arrays.items():
                views[k][...] = a
            arrays = views
        object.__setattr__(self, "_arena", arena)
        object.__setattr__(self, "_layout", layout)
        object.__setattr__(self, "model", m)
        object.__setattr__(self, "nconmax", int(arrays["contact_dist"].shape[0]))
        object.__setattr__(self, "njmax", int(arrays["efc_type"].shape[0]))
        object.__setattr__(self, "_arrays", arrays)
        for k, v in arrays.items():
            if k not in self._PROPERTIES:
                object.__setattr__(self, k, v)
        object.__setattr__(self, "_struct", _new_struct("new_data_struct", DATA_SPEC, arrays))
        _owns_plain(self)

    def grow(self, nconmax: int, njmax: int) -> "Data":
        """Raise the contact and constraint-row capacities in place and return self.

        Only the arrays whose shape involves nconmax or njmax are reallocated; their valid
        leading rows are copied, every other array (the state included) is kept as it is.
        The jitted bundle ``_struct`` is rebuilt, so pass ``d._struct`` afresh after growing.
        """
        cap = {"nconmax": max(positive_int(nconmax, "nconmax"), self.nconmax),
               "njmax": max(positive_int(njmax, "njmax"), self.njmax)}
        grown = [(name, dtype, shape) for name, dtype, shape in DATA_SPEC
                 if "nconmax" in shape or "njmax" in shape]
        sizes = data_sizes(self.model, cap["nconmax"], cap["njmax"],
                           self._arrays["efc_Jrow"].shape[0] > 0)
        check_memory(spec_nbytes(grown, sizes), "growing the " + _data_request(self.model, sizes))
        out = dict(self._arrays)
        for name, dtype, shape in DATA_SPEC:
            if "nconmax" not in shape and "njmax" not in shape:
                continue
            old = out[name]
            new_shape = tuple(cap[s] if s in cap else old.shape[i] for i, s in enumerate(shape))
            a = np.zeros(new_shape, dtype=_DTYPES[dtype])
            a[tuple(slice(0, n) for n in old.shape)] = old
            out[name] = a
        self._adopt(self.model, None, out)         # all in a new arena
        return self

    def copy(self) -> "Data":
        """An independent copy of every array, for the same model (MuJoCo's mj_copyData)."""
        new = Data.__new__(Data)
        new._adopt(self.model, *self._copy_arrays())
        return new

    def _copy_arrays(self):
        """(arena, arrays, layout) for _adopt: a copy of this Data's arena, in one piece."""
        arena, arrays = _arena(*self._layout, zero=False)
        a, b, n = _arena_start(self._arena), _arena_start(arena), self._layout[1]
        arena[b:b + n] = self._arena[a:a + n]
        return arena, arrays, self._layout

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        new = Data.__new__(Data)
        memo[id(self)] = new
        new._adopt(copy.deepcopy(self.model, memo), *self._copy_arrays())
        return new

    def __reduce__(self):
        """Pickle the model and the arrays; the jitted bundle is rebuilt on load."""
        return (_data_from_state, (self.model, self._arrays))

    # named access, MuJoCo's d.body("name"), d.jnt / d.joint(...), ... (engine.views)
    body = accessor("body")
    joint = jnt = accessor("joint")
    geom = accessor("geom")
    site = accessor("site")
    camera = cam = accessor("camera")
    light = accessor("light")
    tendon = ten = accessor("tendon")
    actuator = accessor("actuator")
    sensor = accessor("sensor")

    @property
    def contact(self) -> ContactView:
        """The valid contacts: ``d.contact.dist`` is ``d.contact_dist[:d.ncon]`` (a view),
        ``d.contact[i]`` one contact, ``for c in d.contact`` each (engine.views)."""
        return ContactView(self)

    @property
    def time(self) -> float:
        return float(self._arrays["time"][0])

    @time.setter
    def time(self, value):
        t = float(value)
        if not np.isfinite(t):
            raise ValueError(f"d.time must be finite, got {value!r}")
        self._arrays["time"][0] = t

    @property
    def ncon(self) -> int:
        """Number of detected contacts (the first ncon entries of contact_* are valid)."""
        return int(self._arrays["ncon"][0])

    @ncon.setter
    def ncon(self, value):
        self._arrays["ncon"][0] = _count(value, self.nconmax, "ncon", "nconmax")

    @property
    def nefc(self) -> int:
        """Number of constraint rows (the first nefc entries of efc_* are valid)."""
        return int(self._arrays["nefc"][0])

    @nefc.setter
    def nefc(self, value):
        self._arrays["nefc"][0] = _count(value, self.njmax, "nefc", "njmax")


def positive_int(value, name) -> int:
    """value as an int, or ValueError unless it is a positive integer (not a bool or a float)."""
    try:
        n = operator.index(value)
    except TypeError:
        n = None
    if n is None or isinstance(value, bool) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return n


def _count(value, capacity, name, cap_name) -> int:
    """A count of valid entries (d.ncon, d.nefc): an integer from 0 to the capacity."""
    try:
        n = operator.index(value)
    except TypeError:
        raise ValueError(f"d.{name} must be an integer, got {value!r}") from None
    if not 0 <= n <= capacity:
        raise ValueError(f"d.{name} must be within 0 and d.{cap_name} = {capacity}, got {n}")
    return n


def check_data(m, d) -> None:
    """Raise unless d is a Data of m: made for m, for a copy of m, or for a model of the same
    structure (equal signatures). One identity test when d was made for m itself."""
    dm = getattr(d, "model", None)
    if dm is m:
        return
    if not isinstance(m, Model):
        raise TypeError(f"expected an engine.Model, got {type(m).__name__}")
    if not isinstance(d, Data):
        raise TypeError(f"expected an engine.Data, got {type(d).__name__}")
    if dm.signature != m.signature:
        raise ValueError(
            f"this Data belongs to another model ({dm!r}, signature {dm.signature:#018x}) than "
            f"the one given ({m!r}, signature {m.signature:#018x}): make one for the model "
            "with engine.make_data(m)")


def _data_from_state(m, arrays):
    d = Data.__new__(Data)
    d._adopt(m, None, arrays)
    return d


STRUCT_CHUNK = 32      # fields set per compiled setter of a generated constructor


def _generate_structs_source():
    """_structs.py: per struct, a kernel that allocates it, kernels that each set STRUCT_CHUNK
    fields, and the constructor (Python) that calls them. One kernel setting every field is a
    single basic block of thousands of instructions, whose instruction selection in LLVM grows
    faster than its length: it took 10 s of the cold start for Model, chunks take about 3."""
    lines = [
        '"""Generated by ``python -m engine.types`` from the tables in types.py. Do not edit."""',
        "from numba import njit",
        "from numba.experimental import structref",
        "",
        "from .types import DATA_TYPE, MODEL_TYPE, borrow",
    ]
    for fn, part, spec, ty in (("new_model_struct", "_model", MODEL_SPEC, "MODEL_TYPE"),
                               ("new_data_struct", "_data", DATA_SPEC, "DATA_TYPE")):
        names = [n for n, _, _ in spec]
        setters = []
        lines += ["", "", "@njit(cache=True)", f"def {part}_new():",
                  f"    return structref.new({ty})"]
        for k in range(0, len(names), STRUCT_CHUNK):
            chunk = names[k:k + STRUCT_CHUNK]
            setters.append((f"{part}_set{k // STRUCT_CHUNK}", chunk))
            lines += ["", "", "@njit(cache=True)", f"def {setters[-1][0]}(s, " + ", ".join(chunk)
                      + "):"]
            lines += [f"    s.{n} = borrow({n})" for n in chunk]
        lines += ["", "", f"{part.upper()[1:]}_KERNELS = (" + ", ".join(
            repr(n) for n in [f"{part}_new"] + [n for n, _ in setters]) + ")"]
        lines += ["", "", f"def {fn}(" + ", ".join(names) + "):",
                  f"    s = {part}_new()"]
        lines += [f"    {n}(s, " + ", ".join(chunk) + ")" for n, chunk in setters]
        lines += ["    return s"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import pathlib

    path = pathlib.Path(__file__).with_name("_structs.py")
    path.write_text(_generate_structs_source())
    print(f"wrote {path}")

"""Enumerations, mirroring MuJoCo's mjt* enums where MuJoCo has a counterpart."""
from enum import IntEnum


class JointType(IntEnum):
    FREE = 0
    BALL = 1
    SLIDE = 2
    HINGE = 3

    def qpos_width(self) -> int:
        """Number of qpos entries of a joint of this type (MJX's JointType.qpos_width)."""
        return (7, 4, 1, 1)[self]

    def dof_width(self) -> int:
        """Number of dofs (qvel entries) of a joint of this type."""
        return (6, 3, 1, 1)[self]


class GeomType(IntEnum):
    PLANE = 0
    HFIELD = 1
    SPHERE = 2
    CAPSULE = 3
    ELLIPSOID = 4
    CYLINDER = 5
    BOX = 6
    MESH = 7


class SameFrame(IntEnum):
    """A frame that coincides with (the orientation of) its body's frame or inertial frame:
    kinematics copies that frame instead of composing it (MuJoCo's mjtSameFrame)."""
    NONE = 0
    BODY = 1
    INERTIA = 2
    BODYROT = 3
    INERTIAROT = 4


class Integrator(IntEnum):
    """MuJoCo's mjtIntegrator values (0-3), then the manual's other integrators (4-6).
    SEMIIMPLICIT is MuJoCo's "Euler" (EULER is the same member)."""
    SEMIIMPLICIT = 0
    EULER = 0
    RK4 = 1
    IMPLICIT = 2
    IMPLICITFAST = 3
    EXPLICIT = 4
    MIDPOINT = 5
    INTERLEAVE = 6


class Solver(IntEnum):
    PGS = 0
    NEWTON = 2
    LCP = 3         # our extension: rigid contact as an LCP (engine.hard_contact), not MuJoCo's


class Cone(IntEnum):
    PYRAMIDAL = 0
    ELLIPTIC = 1


class Jacobian(IntEnum):
    """Storage of the constraint rows (MuJoCo's mjtJacobian, read when a Data is made):
    DENSE rows of nv entries, SPARSE rows of the dofs they touch, AUTO sparse for nv >= 60."""
    DENSE = 0
    SPARSE = 1
    AUTO = 2


SPARSE_NV = 60   # Jacobian.AUTO: sparse from this many dofs on (MuJoCo's threshold)


class Stabilization(IntEnum):
    """How B and K of v* (paper eq. 24) are chosen: DIAGONAL is eq. 28 (critical damping under
    the diagonal approximation of A); EXACT solves A R^-1 B = 2 kappa^-1 (I + A R^-1),
    A R^-1 K = kappa^-2 (I + A R^-1) with the full A (the variant after eq. 28)."""
    DIAGONAL = 0
    EXACT = 1


class DisableBit(IntEnum):
    """Bits of m.opt.disableflags (combine with |)."""
    CONSTRAINT = 1 << 0
    EQUALITY = 1 << 1
    FRICTIONLOSS = 1 << 2
    LIMIT = 1 << 3
    CONTACT = 1 << 4
    PASSIVE = 1 << 5       # springs and dampers together (MuJoCo's old "passive" flag)
    GRAVITY = 1 << 6
    ACTUATION = 1 << 7
    WARMSTART = 1 << 8
    CLAMPCTRL = 1 << 9
    FILTERPARENT = 1 << 10
    EULERDAMP = 1 << 11
    SPRING = 1 << 12
    DAMPER = 1 << 13
    SENSOR = 1 << 14       # sensors are not computed (sensordata keeps its values)
    NATIVECCD = 1 << 15    # convex pairs by MPR as MuJoCo's libccd path (collision_mpr)
    MULTICCD = 1 << 16     # one contact per convex pair (no flat-face or turned points)


class TrnType(IntEnum):
    JOINT = 0
    JOINTINPARENT = 1
    SLIDERCRANK = 2
    TENDON = 3
    SITE = 4
    BODY = 5


class DynType(IntEnum):
    NONE = 0
    INTEGRATOR = 1
    FILTER = 2
    FILTEREXACT = 3
    MUSCLE = 4
    USER = 5


class GainType(IntEnum):
    FIXED = 0
    AFFINE = 1
    MUSCLE = 2
    USER = 3


class BiasType(IntEnum):
    NONE = 0
    AFFINE = 1
    MUSCLE = 2
    USER = 3


class WrapType(IntEnum):
    NONE = 0
    JOINT = 1
    PULLEY = 2
    SITE = 3
    SPHERE = 4
    CYLINDER = 5


class EqType(IntEnum):
    CONNECT = 0
    WELD = 1
    JOINT = 2
    TENDON = 3


class CamLight(IntEnum):
    FIXED = 0
    TRACK = 1
    TRACKCOM = 2
    TARGETBODY = 3
    TARGETBODYCOM = 4


class LightType(IntEnum):
    """mjtLightType: what a light is (Model.light_type, a rendering extra of the compiler)."""
    SPOT = 0
    DIRECTIONAL = 1
    POINT = 2
    IMAGE = 3


class Warning(IntEnum):
    """Indices into d.warning (counts) and d.warning_info (the index at fault when last
    counted), with MuJoCo's mjtWarning names and values; BADACT, BADMOCAP and BADTIME are this
    engine's own. A step that finds a bad state (qpos, qvel, act, time) or a bad qacc counts it
    and resets the state, as MuJoCo's auto-reset; a bad input (ctrl, a mocap pose) is counted
    at each forward and replaced by its default (zero controls, the mocap body's model pose)
    while it stays bad. Unlike MuJoCo, the automatic reset keeps the counts (reset_data clears
    them). INERTIA, CONTACTFULL and CNSTRFULL are never counted: the inertia factor clamps its
    pivots, and the contact and row capacities grow."""
    INERTIA = 0        # (near) singular inertia matrix
    CONTACTFULL = 1    # too many contacts
    CNSTRFULL = 2      # too many constraint rows
    BADQPOS = 3        # NaN, inf or huge value in qpos (info: the qpos index)
    BADQVEL = 4        # ... in qvel (info: the dof)
    BADQACC = 5        # ... in qacc, qacc_smooth or the constraint forces (info: the dof)
    BADCTRL = 6        # ... in ctrl after clamping (info: the actuator)
    BADACT = 7         # ... in act (info: the activation index)
    BADMOCAP = 8       # ... in mocap_pos or mocap_quat (info: the mocap index)
    BADTIME = 9        # time is not finite
    NWARNING = 10


class ConstraintType(IntEnum):
    """Rows of the constraint problem, in the paper's order of objects (efc_type); the values
    are MuJoCo's mjtConstraint. A pyramidal contact has 2 (condim - 1) rows, one per edge."""
    EQUALITY = 0
    FRICTION_DOF = 1
    FRICTION_TENDON = 2
    LIMIT_JOINT = 3
    LIMIT_TENDON = 4
    CONTACT_FRICTIONLESS = 5
    CONTACT_PYRAMIDAL = 6
    CONTACT_ELLIPTIC = 7


class ObjType(IntEnum):
    """Kinds of model objects, with MuJoCo's mjtObj values (name2id, id2name, eq_objtype,
    sensor_objtype, sensor_reftype)."""
    UNKNOWN = 0
    BODY = 1           # a body's inertial frame (xipos, ximat) for sensors
    XBODY = 2          # the body frame (as opposed to the inertial frame): body names
    JOINT = 3
    DOF = 4
    GEOM = 5
    SITE = 6
    CAMERA = 7
    LIGHT = 8
    FLEX = 9
    MESH = 10
    SKIN = 11
    HFIELD = 12
    TEXTURE = 13
    MATERIAL = 14
    PAIR = 15
    EXCLUDE = 16
    EQUALITY = 17
    TENDON = 18
    ACTUATOR = 19
    SENSOR = 20
    NUMERIC = 21
    TEXT = 22
    TUPLE = 23
    KEY = 24
    PLUGIN = 25
    FRAME = 100
    DEFAULT = 101
    MODEL = 102


class State(IntEnum):
    """Bits of a state specification (MuJoCo's mjtState): which fields get_state / set_state /
    rollout pack, in the order of the bits (engine.rollout.state_size gives the length).
    HISTORY, USERDATA, PLUGIN and PLASTIC have no counterpart in this engine: size 0."""
    TIME = 1 << 0
    QPOS = 1 << 1
    QVEL = 1 << 2
    ACT = 1 << 3
    HISTORY = 1 << 4
    WARMSTART = 1 << 5          # qacc_warmstart (the Newton solver's warm start)
    CTRL = 1 << 6
    QFRC_APPLIED = 1 << 7
    XFRC_APPLIED = 1 << 8
    EQ_ACTIVE = 1 << 9          # m.eq_active0: read-only here (no switching during a run)
    MOCAP_POS = 1 << 10
    MOCAP_QUAT = 1 << 11
    USERDATA = 1 << 12
    PLUGIN = 1 << 13
    PLASTIC = 1 << 14
    NSTATE = 15                 # number of bits
    PHYSICS = QPOS | QVEL | ACT | HISTORY | PLASTIC
    FULLPHYSICS = TIME | PHYSICS | PLUGIN
    USER = CTRL | QFRC_APPLIED | XFRC_APPLIED | EQ_ACTIVE | MOCAP_POS | MOCAP_QUAT | USERDATA
    INTEGRATION = FULLPHYSICS | USER | WARMSTART


class SensorType(IntEnum):
    """Sensor kinds (m.sensor_type), as MuJoCo's mjtSensor."""
    TOUCH = 0
    ACCELEROMETER = 1
    VELOCIMETER = 2
    GYRO = 3
    FORCE = 4
    TORQUE = 5
    MAGNETOMETER = 6
    RANGEFINDER = 7
    CAMPROJECTION = 8
    JOINTPOS = 9
    JOINTVEL = 10
    TENDONPOS = 11
    TENDONVEL = 12
    ACTUATORPOS = 13
    ACTUATORVEL = 14
    ACTUATORFRC = 15
    JOINTACTFRC = 16
    TENDONACTFRC = 17
    BALLQUAT = 18
    BALLANGVEL = 19
    JOINTLIMITPOS = 20
    JOINTLIMITVEL = 21
    JOINTLIMITFRC = 22
    TENDONLIMITPOS = 23
    TENDONLIMITVEL = 24
    TENDONLIMITFRC = 25
    FRAMEPOS = 26
    FRAMEQUAT = 27
    FRAMEXAXIS = 28
    FRAMEYAXIS = 29
    FRAMEZAXIS = 30
    FRAMELINVEL = 31
    FRAMEANGVEL = 32
    FRAMELINACC = 33
    FRAMEANGACC = 34
    SUBTREECOM = 35
    SUBTREELINVEL = 36
    SUBTREEANGMOM = 37
    INSIDESITE = 38
    GEOMDIST = 39
    GEOMNORMAL = 40
    GEOMFROMTO = 41
    CONTACT = 42
    E_POTENTIAL = 43
    E_KINETIC = 44
    CLOCK = 45
    TACTILE = 46
    PLUGIN = 47
    USER = 48


class DataType(IntEnum):
    """What a sensor's numbers are (m.sensor_datatype), as MuJoCo's mjtDataType: the cutoff
    clips REAL values on both sides and POSITIVE ones from above only."""
    REAL = 0
    POSITIVE = 1
    AXIS = 2
    QUATERNION = 3


class Stage(IntEnum):
    """Pipeline stages, as MuJoCo's mjtStage: the stage a sensor needs (m.sensor_needstage);
    a computation that skips a stage reuses what the last one computed for it (finite
    differences)."""
    NONE = 0
    POS = 1
    VEL = 2
    ACC = 3


class ConDataField(IntEnum):
    """Fields of a contact sensor (bits of sensor_intprm[:, 0]), as MuJoCo's mjtConDataField;
    sizes in CONDATA_SIZE."""
    FOUND = 0
    FORCE = 1
    TORQUE = 2
    DIST = 3
    POS = 4
    NORMAL = 5
    TANGENT = 6
    LINVEL = 7
    ANGVEL = 8


CONDATA_SIZE = (1, 3, 3, 1, 3, 3, 3, 3, 3)


class ConReduce(IntEnum):
    """How a contact sensor picks its contacts (sensor_intprm[:, 1]): in contact order, the
    nearest first, the strongest first, or one slot with the net wrench."""
    NONE = 0
    MINDIST = 1
    MAXFORCE = 2
    NETFORCE = 3


class RayDataField(IntEnum):
    """Fields of a rangefinder (bits of sensor_intprm[:, 0]), as MuJoCo's mjtRayDataField;
    sizes in RAYDATA_SIZE."""
    DIST = 0
    DIR = 1
    ORIGIN = 2
    POINT = 3
    NORMAL = 4
    DEPTH = 5


RAYDATA_SIZE = (1, 3, 3, 3, 3, 1)


class Projection(IntEnum):
    """Camera projection (m.cam_projection), as MuJoCo's mjtProjection."""
    PERSPECTIVE = 0
    ORTHOGRAPHIC = 1

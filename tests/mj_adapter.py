"""Test helper: a Model built from MuJoCo's compiled model, to check the pipeline on its own.

The pipeline is compared with MuJoCo on MuJoCo's own compilation of a file, independently of our
compiler (which has its own field-by-field tests).
"""
import mujoco
import numpy as np

from engine.enums import Cone, DisableBit, Integrator, Solver, Stabilization
from engine.setconst import set_const
from engine.types import MODEL_SIZES, MODEL_SPEC, Model

_RENAMED = {"eq_active0": "eq_active0"}


def sparse_layout(parentid):
    nv = len(parentid)
    madr = np.zeros(nv, dtype=np.int64)
    adr = 0
    for i in range(nv):
        madr[i] = adr
        j = i
        while j >= 0:
            adr += 1
            j = parentid[j]
    return madr, adr


def disableflags_from_mujoco(flags: int) -> int:
    """Our DisableBit bits for MuJoCo's mjtDisableBit bits of the same names."""
    out = 0
    for bit in DisableBit:
        mj = getattr(mujoco.mjtDisableBit, "mjDSBL_" + bit.name, None)
        if mj is not None and flags & int(mj):
            out |= int(bit)
    return out


def model_from_mujoco(mm: mujoco.MjModel) -> Model:
    sizes = {k: getattr(mm, k, 0) for k in MODEL_SIZES}
    madr, nM = sparse_layout(mm.dof_parentid)
    sizes["nM"] = nM
    sizes["nmocap"] = mm.nmocap
    arrays = {}
    for name, _, shape in MODEL_SPEC:
        if name.startswith("opt_"):
            continue
        if name.endswith(("_epsilon", "_kappa", "_rmin")):
            n = sizes[shape[0]]
            arrays[name] = -np.ones(n)
            continue
        if name.endswith("_impedance"):      # the option's constant epsilon
            arrays[name] = np.tile([0.0, -1.0, 0.5, 2.0], (sizes[shape[0]], 1))
            continue
        if name.endswith("_dampratio"):
            arrays[name] = np.ones(sizes[shape[0]])
            continue
        if hasattr(mm, name):
            arrays[name] = np.array(getattr(mm, name)).copy()
        else:  # fields MuJoCo 4 renamed; not used by the pipeline stages under test
            arrays[name] = np.zeros([sizes[s] if isinstance(s, str) else s for s in shape])
    arrays["dof_Madr"] = madr
    arrays["actuator_gainprm"] = mm.actuator_gainprm[:, :10]
    arrays["actuator_biasprm"] = mm.actuator_biasprm[:, :10]
    arrays["actuator_dynprm"] = mm.actuator_dynprm[:, :10]
    arrays["eq_data"] = mm.eq_data[:, :11]
    o = mm.opt
    arrays.update(
        opt_timestep=[o.timestep], opt_gravity=o.gravity, opt_wind=o.wind, opt_magnetic=o.magnetic,
        opt_density=[o.density], opt_viscosity=[o.viscosity], opt_tolerance=[o.tolerance],
        opt_epsilon=[0.1], opt_impedance=[0.1, 0.0, 0.5, 2.0], opt_kappa=[0.02],
        opt_rmin=[1e-8], opt_impratio=[o.impratio],
        opt_integrator=[Integrator(o.integrator)],   # MuJoCo's values (0-3)
        opt_solver=[Solver.PGS], opt_cone=[Cone.ELLIPTIC], opt_jacobian=[o.jacobian],
        opt_iterations=[o.iterations],
        opt_noslip_iterations=[o.noslip_iterations], opt_noslip_tolerance=[o.noslip_tolerance],
        opt_ccd_iterations=[o.ccd_iterations], opt_ccd_tolerance=[o.ccd_tolerance],
        opt_disableflags=[disableflags_from_mujoco(o.disableflags)], opt_enableflags=[0],
        opt_stabilization=[Stabilization.DIAGONAL])
    names = {}
    for kind, objtype, count in (("body", mujoco.mjtObj.mjOBJ_BODY, mm.nbody),
                                 ("joint", mujoco.mjtObj.mjOBJ_JOINT, mm.njnt),
                                 ("geom", mujoco.mjtObj.mjOBJ_GEOM, mm.ngeom),
                                 ("site", mujoco.mjtObj.mjOBJ_SITE, mm.nsite),
                                 ("actuator", mujoco.mjtObj.mjOBJ_ACTUATOR, mm.nu),
                                 ("tendon", mujoco.mjtObj.mjOBJ_TENDON, mm.ntendon),
                                 ("camera", mujoco.mjtObj.mjOBJ_CAMERA, mm.ncam),
                                 ("sensor", mujoco.mjtObj.mjOBJ_SENSOR, mm.nsensor)):
        names[kind] = [mujoco.mj_id2name(mm, objtype, i) or "" for i in range(count)]
    m = Model(sizes, arrays, names, path=None)
    return set_const(m)


def random_qpos(mm: mujoco.MjModel, rng, scale: float = 0.3) -> np.ndarray:
    """qpos0 plus scale * a standard normal draw (nq numbers from rng), the quaternions of free
    and ball joints normalised: a random configuration of MuJoCo's model mm."""
    qpos = mm.qpos0 + scale * rng.standard_normal(mm.nq)
    for j in range(mm.njnt):
        a = mm.jnt_qposadr[j]
        if mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a + 3:a + 7] /= np.linalg.norm(qpos[a + 3:a + 7])
        elif mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
    return qpos

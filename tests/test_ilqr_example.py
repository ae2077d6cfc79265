"""examples/ilqr.py swings the dm_control cartpole up with both derivative sources.

The oracle is independent of the example's cost: the final state of the optimised trajectory is
replayed from its controls, the pole's tip height is computed by MuJoCo's kinematics from the pole
geom (its half-length and axis) and compared with the height of the upright pole read from the
XML (cart height plus the pole's fromto length). (MuJoCo does not replay the controls itself: its
joint-limit impedance depends on the violation, the engine's does not, so the two part once the
cart touches its rail limit.)"""
import importlib.util
import pathlib
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import engine

pytest.importorskip("dm_control")
mujoco = pytest.importorskip("mujoco")

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "ilqr.py"


@pytest.fixture(scope="module")
def ilqr():
    spec = importlib.util.spec_from_file_location("ilqr_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def upright_tip_height(xml_path):
    """Height of the tip of the upright pole from the XML: cart body z + pole fromto length."""
    root = ET.parse(xml_path).getroot()
    cart = root.find(".//body[@name='cart']")
    pole_class = root.find(".//default[@class='pole']/geom")
    fromto = np.array(pole_class.get("fromto").split(), dtype=float)
    return float(cart.get("pos").split()[2]) + np.linalg.norm(fromto[3:] - fromto[:3])


def replay(task, U):
    """Final (qpos, qvel) of the controls U applied open loop from the start state."""
    m = task.m
    d = engine.make_data(m)
    d.qpos[:], d.qvel[:] = task.x0[:m.nq], task.x0[m.nq:m.nq + m.nv]
    for u in U:
        d.ctrl[:] = u
        engine.step(m, d)
    return d.qpos.copy(), d.qvel.copy()


def tip_height(xml_path, qpos):
    """Highest point of the pole's axis, by MuJoCo's kinematics."""
    mm = mujoco.MjModel.from_xml_path(str(xml_path))
    md = mujoco.MjData(mm)
    md.qpos[:] = qpos
    mujoco.mj_kinematics(mm, md)
    pole = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_GEOM, "pole_1")
    half = mm.geom_size[pole, 1]
    ends = md.geom_xpos[pole] + np.outer([1.0, -1.0], md.geom_xmat[pole].reshape(3, 3)[:, 2] * half)
    return ends[:, 2].max()


@pytest.mark.parametrize("source", ["analytical", "finite differences"])
def test_cartpole_swings_up(ilqr, source):
    task = ilqr.Cartpole()
    ilqr.configure(task.m)
    # hanging down at rest: the tip is below the cart
    assert np.cos(task.x0[1]) == pytest.approx(-1.0)
    X, U, costs, _ = ilqr.ILQR(task, ilqr.SOURCES[source]).solve(60)
    assert np.all(np.diff(costs) < 0)                      # every accepted step lowers the cost
    assert costs[-1] < 0.5 * costs[0]

    qpos, qvel = replay(task, U)
    np.testing.assert_allclose(qpos, X[-1, :2], atol=1e-9)  # the optimiser's own rollout
    angle = np.degrees(np.angle(np.exp(1j * qpos[1])))      # from upright, wrapped
    assert abs(angle) < 3.0
    assert abs(qvel[1]) < 0.2                              # nearly at rest
    assert tip_height(task.xml, qpos) == pytest.approx(upright_tip_height(task.xml), abs=0.01)


def test_box_qp_meets_kkt(ilqr):
    """The projected-Newton box QP against the optimality conditions of the strictly convex QP:
    inside the box, zero gradient on the free controls, a gradient pushing outwards on the
    clamped ones."""
    rng = np.random.default_rng(3)
    for n in (1, 5, 21):
        for _ in range(20):
            F = rng.normal(size=(n, n))
            H = F @ F.T + 0.1 * np.eye(n)
            g = 3.0 * rng.normal(size=n)
            lo, hi = -rng.uniform(0.1, 1.0, n), rng.uniform(0.1, 1.0, n)
            x, free, factor = ilqr.box_qp(H, g, lo, hi, np.zeros(n))
            assert factor is not None or not free.any()
            grad = g + H @ x
            assert np.all(x >= lo) and np.all(x <= hi)
            np.testing.assert_allclose(grad[free], 0.0, atol=1e-7)
            assert np.all(grad[x <= lo] >= -1e-7) and np.all(grad[x >= hi] <= 1e-7)
            assert np.all((x[~free] <= lo[~free]) | (x[~free] >= hi[~free]))


def test_humanoid_residual_jacobian(ilqr):
    """The humanoid cost's residual Jacobian against centered differences of the residual along
    tangent-space perturbations of the state (positions moved by integrate_pos)."""
    from engine.forward import integrate_pos
    task = ilqr.Humanoid(horizon=1)
    m = task.m
    d = engine.make_data(m)
    rng = np.random.default_rng(4)
    x = task.x0.copy()
    x[m.nq:m.nq + m.nv] = rng.normal(size=m.nv)
    x[7:m.nq] += 0.2 * rng.normal(size=m.nq - 7)

    def residual(y, jacobian=False):
        d.qpos[:], d.qvel[:] = y[:m.nq], y[m.nq:m.nq + m.nv]
        engine.forward(m, d)
        return task.residual(d, y, jacobian)

    _, J = residual(x, True)
    eps = 1e-6
    for i in range(2 * m.nv):
        xs = []
        for h in (eps, -eps):
            y = x.copy()
            if i < m.nv:
                dq = np.zeros(m.nv)
                dq[i] = 1.0
                integrate_pos(m._struct, y[:m.nq], dq, h)
            else:
                y[m.nq + i - m.nv] += h
            xs.append(residual(y)[0])
        np.testing.assert_allclose(J[:, i], (xs[0] - xs[1]) / (2 * eps), atol=1e-6,
                                   err_msg=f"column {i}")

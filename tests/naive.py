"""Slow, obvious references for the smooth dynamics: dense Jacobians built joint by joint from
world-frame quantities, the joint-space inertia as a sum over bodies, the bias force by
Newton-Euler on each body, the kinetic energy. Nothing here uses the engine's spatial algebra
(cdof, cinert, the recursive passes); the only inputs are the kinematics outputs (body frames,
joint anchors and axes) and the model's masses and inertias.
"""
import numpy as np

FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3


def _dof_axes(m, d, j):
    """World directions of the dofs of joint j: [(direction, is_rotation)]."""
    b = m.jnt_bodyid[j]
    R = d.xmat[b].reshape(3, 3)
    t = m.jnt_type[j]
    if t == FREE:
        return [(e, False) for e in np.eye(3)] + [(R[:, k], True) for k in range(3)]
    if t == BALL:
        return [(R[:, k], True) for k in range(3)]
    return [(d.xaxis[j].copy(), t == HINGE)]


def _chain(m, b):
    """Bodies from b up to (not including) the world."""
    while b > 0:
        yield b
        b = m.body_parentid[b]


def point_jacobians(m, d, b, point, last_joint=None):
    """(jacp, jacr) (3, nv) of a point moving with body b: a hinge dof contributes
    axis x (point - anchor) and axis, a slide dof its axis, ball and free rotations likewise
    about the joint's anchor. With last_joint, the joints of body b after it are left out (the
    motion of the frame in which that joint sits)."""
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    for a in _chain(m, b):
        end = m.body_jntadr[a] + m.body_jntnum[a]
        if a == b and last_joint is not None:
            end = last_joint + 1
        for j in range(m.body_jntadr[a], end):
            for k, (axis, rot) in enumerate(_dof_axes(m, d, j)):
                dof = m.jnt_dofadr[j] + k
                if rot:
                    jacr[:, dof] = axis
                    jacp[:, dof] = np.cross(axis, point - d.xanchor[j])
                else:
                    jacp[:, dof] = axis
    return jacp, jacr


def _body_inertia(m, d, b):
    R = d.ximat[b].reshape(3, 3)
    return R @ np.diag(m.body_inertia[b]) @ R.T


def crba(m, d):
    """Joint-space inertia M = sum_b m_b Jp' Jp + Jr' I_b Jr, plus armature."""
    M = np.diag(m.dof_armature.astype(float))
    for b in range(1, m.nbody):
        jacp, jacr = point_jacobians(m, d, b, d.xipos[b])
        M += m.body_mass[b] * jacp.T @ jacp + jacr.T @ _body_inertia(m, d, b) @ jacr
    return M


def _jacobian_rate(m, d, b, point, qvel):
    """(Jp_dot v, Jr_dot v) at qacc = 0 for a point moving with body b. Each dof direction is
    fixed in the frame that follows its joint (the parent's frame moved by the joints of the
    body up to this one), so it turns with that frame's angular velocity w_j; a rotation's
    lever arm (point - anchor) changes with the velocities of both ends."""
    accp, accr = np.zeros(3), np.zeros(3)
    vpoint = point_jacobians(m, d, b, point)[0] @ qvel
    for a in _chain(m, b):
        for j in range(m.body_jntadr[a], m.body_jntadr[a] + m.body_jntnum[a]):
            jp, jr = point_jacobians(m, d, a, d.xanchor[j], last_joint=j)
            wj, vanchor = jr @ qvel, jp @ qvel
            for k, (axis, rot) in enumerate(_dof_axes(m, d, j)):
                qd = qvel[m.jnt_dofadr[j] + k]
                fixed = m.jnt_type[j] == FREE and not rot   # translations in the world frame
                daxis = np.zeros(3) if fixed else np.cross(wj, axis)
                if rot:
                    accr += daxis * qd
                    lever = point - d.xanchor[j]
                    accp += (np.cross(daxis, lever) + np.cross(axis, vpoint - vanchor)) * qd
                else:
                    accp += daxis * qd
    return accp, accr


def rne(m, d, qvel):
    """Bias force at qacc = 0 by Newton-Euler on each body: the force m_b (a_b - g) and torque
    I_b alpha_b + w_b x I_b w_b the body needs, mapped to joint space by its Jacobians."""
    f = np.zeros(m.nv)
    for b in range(1, m.nbody):
        jacp, jacr = point_jacobians(m, d, b, d.xipos[b])
        w = jacr @ qvel
        acc, alpha = _jacobian_rate(m, d, b, d.xipos[b], qvel)
        inertia = _body_inertia(m, d, b)
        force = m.body_mass[b] * (acc - m.opt.gravity)
        torque = inertia @ alpha + np.cross(w, inertia @ w)
        f += jacp.T @ force + jacr.T @ torque
    return f


def kinetic_energy(m, d, qvel):
    """0.5 sum_b (m_b |v_b|^2 + w_b' I_b w_b), plus 0.5 armature v^2."""
    e = 0.5 * float(np.sum(m.dof_armature * qvel * qvel))
    for b in range(1, m.nbody):
        jacp, jacr = point_jacobians(m, d, b, d.xipos[b])
        v, w = jacp @ qvel, jacr @ qvel
        e += 0.5 * (m.body_mass[b] * v @ v + w @ _body_inertia(m, d, b) @ w)
    return e


def lcp_enumerate(M, q, tol=1e-9):
    """Every complementary basic solution of w = M z + q, z >= 0, w >= 0, z'w = 0: for each
    index set a with M_aa nonsingular, z_a = -M_aa^-1 q_a (the rest 0), kept when z and w are
    non-negative. Exponential (2^n sets); an independent oracle for small n."""
    import itertools
    n = len(q)
    scale = max(1.0, np.abs(q).max(), np.abs(M).max())
    out = []
    for k in range(n + 1):
        for a in itertools.combinations(range(n), k):
            a = list(a)
            z = np.zeros(n)
            if k:
                block = M[np.ix_(a, a)]
                if np.linalg.cond(block) > 1e12:
                    continue
                z[a] = np.linalg.solve(block, -q[a])
            w = M @ z + q
            if z.min() >= -tol * scale and w.min() >= -tol * scale:
                out.append((z, w, tuple(a)))
    return out

"""Models made to a size: free spheres on a plane, replicated dm_control walkers, and chains of
hinges as MJCF (nested bodies) or URDF (links and joints). Used by tests/test_scaling.py and
benchmarks/scaling.py."""
import math
import os
import re


def spheres(n):
    """n free spheres (radius 0.1) in a square grid 0.1 above a plane."""
    k = max(1, math.ceil(math.sqrt(n)))
    bodies = "".join(f'<body pos="{(i % k) * 0.3:.3f} {(i // k) * 0.3:.3f} 0.2"><freejoint/>'
                     f'<geom type="sphere" size="0.1"/></body>' for i in range(n))
    return ('<mujoco><worldbody><geom type="plane" size="0 0 1"/>' + bodies +
            '</worldbody></mujoco>')


INERTIA = (0.001, 0.002, 0.003)


def chain(n):
    """n bodies nested in one another, each on a hinge (axes alternating x, y) 0.1 above its
    parent, mass 0.1 at 0.05 along its z, a small sphere each: the model of urdf_chain(n)."""
    inertial = ('<inertial pos="0 0 0.05" mass="0.1" diaginertia="%g %g %g"/>' % INERTIA +
                '<geom type="sphere" size="0.01"/>')
    opening = "".join(f'<body pos="0 0 0.1"><joint axis="{"1 0 0" if i % 2 == 0 else "0 1 0"}"/>'
                      f'{inertial}' for i in range(n))
    return f'<mujoco><worldbody>{opening}{"</body>" * n}</worldbody></mujoco>'


def urdf_chain(n):
    """The URDF of chain(n): links l1..ln on continuous joints under a root link l0 (fused
    into the world)."""
    inertia = '<inertia ixx="%g" iyy="%g" izz="%g" ixy="0" ixz="0" iyz="0"/>' % INERTIA
    links = ['<link name="l0"><inertial><mass value="1"/>' + inertia + '</inertial></link>']
    joints = []
    for i in range(1, n + 1):
        links.append(f'<link name="l{i}"><inertial><origin xyz="0 0 0.05"/><mass value="0.1"/>'
                     f'{inertia}</inertial><collision><geometry><sphere radius="0.01"/>'
                     '</geometry></collision></link>')
        axis = "1 0 0" if i % 2 else "0 1 0"
        joints.append(f'<joint name="j{i}" type="continuous"><parent link="l{i - 1}"/>'
                      f'<child link="l{i}"/><origin xyz="0 0 0.1"/><axis xyz="{axis}"/>'
                      '</joint>')
    return '<robot name="chain">' + "".join(links) + "".join(joints) + '</robot>'


def walkers(n):
    """dm_control's planar walker replicated n times along x (names suffixed _i; the included
    visual and material files left out)."""
    import dm_control
    path = os.path.join(os.path.dirname(dm_control.__file__), "suite", "walker.xml")
    with open(path) as f:
        src = f.read()
    src = re.sub(r'\s*<include[^>]*/>', '', src)
    src = re.sub(r'\s*material="[^"]*"', '', src)
    head, rest = src.split("<worldbody>")
    world, tail = rest.split("</worldbody>")
    floor, body = world.strip().split("\n", 1)
    sensor = re.search(r"<sensor>(.*)</sensor>", tail, re.S).group(1)
    actuator = re.search(r"<actuator>(.*)</actuator>", tail, re.S).group(1)

    def renamed(s, i):
        return re.sub(r'(name|joint|body)="([^"]*)"', lambda g: f'{g[1]}="{g[2]}_{i}"', s)
    bodies = "".join(renamed(body, i).replace('pos="0 0 1.3"', f'pos="{2.0 * i} 0 1.3"', 1)
                     for i in range(n))
    sensors = "".join(renamed(sensor, i) for i in range(n))
    actuators = "".join(renamed(actuator, i) for i in range(n))
    return (f"{head}<worldbody>{floor}{bodies}</worldbody><sensor>{sensors}</sensor>"
            f"<actuator>{actuators}</actuator></mujoco>")

"""Inverse-dynamics control of a quadruped (Unitree Go1) with rigid-contact force prediction.

The robot stands (slow squats: slowly varying desired accelerations) or trots slowly in the
engine's forward simulation, driven by torque motors. Controllers, as in Zapolsky & Drumwright
section 7:
    pd             joint PD on the reference (error feedback only)
    id-sensed      inverse dynamics with the contact forces sensed from the simulator (those of
                   the previous step, as a force sensor would report them)
    noslip         rigid_inverse, no-slip model, warm-started PPM, the least contact forces
                   among the equally valid ones (noslip-cold: restarted at every call;
                   noslip-vertex and noslip-vertex-cold: least_norm=False, the pivoting's
                   vertex solution as in the paper, warm-started by Algorithm 2 or not)
    coulomb        rigid_inverse, Coulomb friction (Lemke; Algorithm 3 only below its limit,
                   which four feet exceed)
    convex         rigid_inverse, complementarity-free convex model (convex-cold: no warm
                   start, no previous torques for the tie-breaker)
The inverse-dynamics controllers ask for qacc_des = qacc_ref + Kp (q_ref - q) + Kd (v_ref - v)
on the joints and add the PD baseline's torques (the feedforward carries gravity, inertia and
contact; the PD what the contact model mispredicts).

Two tables per task. Closed loop, per controller: joint tracking error (RMS, rad), torque
chatter (sum over steps of |tau_t - tau_t-1|_1, N m, and the largest single change), the error
of the predicted normal force per foot against the simulator's (RMS, fraction of the weight)
and of their sum over the feet (which internal forces between the feet do not change),
falls, time per controller call. Then the commands every rigid model computes along one and the
same trajectory (driven by id-sensed, not applied): their chatter isolates the solver's choice
among equally valid force distributions, and the ratio cold / warm is printed.

    python examples/quadruped_control.py [--task stand|walk|both] [--duration S]
        [--epsilon E] [--kappa K] [--soft-feet]

The simulated contact is the engine's soft contact with default softness (the Menagerie model's
very soft rubber feet, solimp 0.015, are replaced by the default; --soft-feet keeps them), the
feet listed as contacts 1 cm before they touch (gap) so that the controllers anticipate
landings (section 3.2), and the controllers leave the simulator's resting penetration alone
(stabilization=0).
"""
import argparse
import pathlib
import re
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import engine  # noqa: E402

GO1 = ROOT / "assets" / "unitree_go1" / "go1.xml"
FEET = ("FR", "FL", "RR", "RL")
TORQUE_LIMIT = {"abduction": 23.7, "hip": 23.7, "knee": 35.55}   # the Menagerie forceranges
KP, KD = 25.0, 10.0             # feedback of the desired accelerations (1/s^2, 1/s)
PD_KP, PD_KD = 100.0, 4.0       # the PD baseline (N m/rad, N m s/rad)


def go1_torque_xml(soft_feet=False, box_feet=False):
    """MJCF of the Go1 with torque motors (ctrlrange = the position actuators' forcerange) on a
    floor; box_feet: 4 x 4 x 2.4 cm boxes instead of the sphere feet, level at the home pose
    (four corner contacts per foot)."""
    src = GO1.read_text()

    def motor(mo):
        cls, name, joint = mo.groups()
        lim = TORQUE_LIMIT[cls]
        return f'<motor name="{name}" joint="{joint}" ctrlrange="-{lim} {lim}"/>'
    src = re.sub(r'<position class="(\w+)" name="(\w+)" joint="(\w+)"/>', motor, src)
    if not soft_feet:
        src = src.replace(' solimp="0.015 1 0.023"', "")
    if box_feet:
        src = src.replace('type="sphere" size="0.023" pos="0 0 -0.213"',
                          'type="box" size="0.02 0.02 0.012" pos="0 0 -0.213" euler="0 0.9 0"')
    # contacts within 1 cm of the floor are listed (and exert no force until within the margin):
    # the controllers see the feet about to land (Zapolsky & Drumwright section 3.2)
    src = src.replace('condim="6"', 'condim="6" gap="0.01"')
    floor = ('<light pos="0 0 1.5" dir="0 0 -1" directional="true"/>\n'
             '    <geom name="floor" size="0 0 0.05" type="plane"/>\n    ')
    return src.replace("<worldbody>", "<worldbody>\n    " + floor, 1)


def go1_torque_model(soft_feet=False, epsilon=None, kappa=None, box_feet=False):
    """The model of go1_torque_xml; epsilon, kappa: the contacts' softness and time constant
    (default: the engine's)."""
    m = engine.load_model_from_string(go1_torque_xml(soft_feet, box_feet))
    if epsilon is not None:
        m.opt.epsilon = epsilon
    if kappa is not None:
        m.opt.kappa = kappa
    return m


class Reference:
    """Joint reference q_ref(t) with its first two derivatives, around the home pose."""

    def __init__(self, m, task):
        self.home = m.key_qpos[0, 7:].copy()
        self.task = task

    def __call__(self, t):
        q, v, a = self.home.copy(), np.zeros(12), np.zeros(12)
        if self.task == "stand":
            # slow squats from rest: thighs and knees together, 0.5 Hz (slowly varying
            # accelerations), q = home + amp (1 - cos w t) / 2
            w = 2 * np.pi * 0.5
            amp = np.tile([0.0, 0.15, -0.3], 4)
            q += amp * (1 - np.cos(w * t)) / 2
            v += amp * w * np.sin(w * t) / 2
            a += amp * w * w * np.cos(w * t) / 2
        else:
            # trot: diagonal pairs in antiphase, 2 Hz, ramped in over the first second
            w = 2 * np.pi * 2.0
            ramp, dramp = min(1.0, t), (1.0 if t < 1.0 else 0.0)
            for leg, phase in enumerate((0.0, np.pi, np.pi, 0.0)):   # FR FL RR RL
                th = w * t + phase
                i = 3 * leg
                # thigh: fore-aft swing; calf: lift during the first half of the cycle
                q[i + 1] += ramp * 0.12 * np.cos(th)
                v[i + 1] += ramp * -0.12 * w * np.sin(th) + dramp * 0.12 * np.cos(th)
                a[i + 1] += ramp * -0.12 * w * w * np.cos(th) - 2 * dramp * 0.12 * w * np.sin(th)
                lift = np.sin(th)
                if lift > 0:
                    q[i + 2] += -ramp * 0.35 * lift
                    v[i + 2] += -ramp * 0.35 * w * np.cos(th) - dramp * 0.35 * lift
                    a[i + 2] += ramp * 0.35 * w * w * lift - 2 * dramp * 0.35 * w * np.cos(th)
        return q, v, a


class Controller:
    """Base: holds the controller's own model state (dc) and reports predictions."""
    predicts = False

    def __init__(self, m):
        self.m = m
        self.dc = engine.make_data(m)
        self.pred = None

    def qacc_des(self, d, ref):
        q, v, a = ref
        qd = np.zeros(self.m.nv)
        qd[6:] = a + KP * (q - d.qpos[7:]) + KD * (v - d.qvel[6:])
        return qd

    def feedback(self, d, ref):
        q, v, _ = ref
        return PD_KP * (q - d.qpos[7:]) + PD_KD * (v - d.qvel[6:])

    def sync(self, d):
        self.dc.qpos[:], self.dc.qvel[:], self.dc.act[:] = d.qpos, d.qvel, d.act


class PD(Controller):
    def __call__(self, d, ref, sensed):
        return self.feedback(d, ref)


class SensedID(Controller):
    """Inverse dynamics with the simulator's constraint forces of the previous step taken as
    known external forces (no contact model): the hybrid dynamics of the free base."""

    def __init__(self, m, m_free):
        super().__init__(m_free)

    def __call__(self, d, ref, sensed):
        self.sync(d)
        self.dc.qfrc_applied[:] = sensed
        res = engine.rigid_inverse(self.m, self.dc, self.qacc_des(d, ref), model="noslip")
        return res.actuator_force + self.feedback(d, ref)


class RigidID(Controller):
    predicts = True

    def __init__(self, m, model, warm=True, **options):
        super().__init__(m)
        self.model, self.warm, self.options = model, warm, options
        self.ws = None
        self.feet = [engine.name2id(m, "geom", f) for f in FEET]

    def __call__(self, d, ref, sensed):
        self.sync(d)
        res = engine.rigid_inverse(self.m, self.dc, self.qacc_des(d, ref), model=self.model,
                                   warmstart=self.ws if self.warm else None,
                                   stabilization=0.0, **self.options)
        self.ws = res.warmstart
        self.pred = foot_normals(self.dc, self.feet, res.contact_force[:, 0])
        return res.actuator_force + self.feedback(d, ref)


def foot_normals(d, feet, normal):
    """Sum of the normal forces of each foot's contacts."""
    out = np.zeros(len(feet))
    for c in range(len(d.contact.dist)):
        for k, g in enumerate(feet):
            if g in (d.contact.geom1[c], d.contact.geom2[c]):
                out[k] += normal[c]
    return out


def settled(m):
    """The home pose standing on the ground at rest: feet at the contact margin, then 0.5 s
    of PD holding the pose so that the soft contacts reach their resting penetration."""
    d = engine.make_data(m)
    engine.reset_keyframe(m, d, 0)
    engine.forward(m, d)
    d.qpos[2] -= (d.contact.dist - d.contact.includemargin).min()
    home = m.key_qpos[0, 7:]
    for _ in range(int(0.5 / m.opt.timestep)):
        d.ctrl[:] = PD_KP * (home - d.qpos[7:]) - PD_KD * d.qvel[6:]
        engine.step(m, d)
    d.time = 0.0
    return d


def run(m, controller, task, duration, start):
    """Simulate from the state `start`; returns the metrics of the run."""
    d = engine.make_data(m)
    d.qpos[:], d.qvel[:], d.act[:] = start.qpos, start.qvel, start.act
    reference = Reference(m, task)
    feet = [engine.name2id(m, "geom", f) for f in FEET]
    weight = m.body_mass.sum() * -m.opt.gravity[2]
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    nstep = int(round(duration / m.opt.timestep))
    tau_prev, sensed = None, np.zeros(m.nv)
    chatter = peak = 0.0
    track, force_err, calls = [], [], []
    fell = False
    prev_normals = None
    for k in range(nstep):
        ref = reference(d.time)
        t0 = time.perf_counter()
        tau = controller(d, ref, sensed)
        calls.append(time.perf_counter() - t0)
        tau = np.clip(tau, lo, hi)
        if tau_prev is not None:
            dt = np.abs(tau - tau_prev)
            chatter += dt.sum()
            peak = max(peak, dt.max())
        tau_prev = tau
        d.ctrl[:] = tau
        engine.step(m, d)
        track.append(d.qpos[7:] - reference(d.time)[0])
        # the simulator's forces of this step (computed at the pre-step state)
        normals = foot_normals(d, feet, [engine.contact_force(m, d, c)[0]
                                         for c in range(len(d.contact.dist))])
        if controller.predicts:
            force_err.append((controller.pred - normals) / weight)
        elif isinstance(controller, SensedID) and prev_normals is not None:
            force_err.append((prev_normals - normals) / weight)   # the sensor's delay
        prev_normals = normals
        sensed = d.qfrc_constraint.copy()
        up = d.xmat[1].reshape(3, 3)[2, 2]
        if d.qpos[2] < 0.12 or up < 0.5:
            fell = True
            break
    track = np.array(track)
    return {
        "tracking_rms": float(np.sqrt(np.mean(track ** 2))),
        "chatter": chatter, "chatter_peak": peak,
        "force_rms": float(np.sqrt(np.mean(np.square(force_err)))) if force_err else np.nan,
        "total_rms": (float(np.sqrt(np.mean(np.square(np.sum(force_err, axis=1)))))
                      if force_err else np.nan),
        "fell": fell, "time_us": 1e6 * float(np.median(calls)), "steps": k + 1,
    }


def controllers(m, m_free):
    return {
        "pd": PD(m),
        "id-sensed": SensedID(m, m_free),
        "noslip": RigidID(m, "noslip"),
        "noslip-cold": RigidID(m, "noslip", warm=False),
        "noslip-vertex": RigidID(m, "noslip", least_norm=False),
        "noslip-vertex-cold": RigidID(m, "noslip", warm=False, least_norm=False),
        "coulomb": RigidID(m, "coulomb"),
        "convex": RigidID(m, "convex"),
        "convex-cold": RigidID(m, "convex", warm=False),
    }


SHADOWED = ("noslip", "noslip-cold", "noslip-vertex", "noslip-vertex-cold", "coulomb", "convex",
            "convex-cold")


def shadow(m, m_free, task, duration, start):
    """The sensed-force controller drives the robot; at every state each rigid model also
    computes its command (not applied). The chatter of those commands along one and the same
    smooth trajectory isolates the solvers' choice among equally valid force distributions
    from the closed loop's own behaviour."""
    d = engine.make_data(m)
    d.qpos[:], d.qvel[:], d.act[:] = start.qpos, start.qvel, start.act
    reference = Reference(m, task)
    driver = SensedID(m, m_free)
    models = {k: v for k, v in controllers(m, m_free).items() if k in SHADOWED}
    feet = [engine.name2id(m, "geom", f) for f in FEET]
    weight = m.body_mass.sum() * -m.opt.gravity[2]
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    taus = {k: [] for k in models}
    err = {k: [] for k in models}
    calls = {k: [] for k in models}
    sensed = np.zeros(m.nv)
    for _ in range(int(round(duration / m.opt.timestep))):
        ref = reference(d.time)
        for k, ctrl in models.items():
            t0 = time.perf_counter()
            taus[k].append(ctrl(d, ref, sensed))
            calls[k].append(time.perf_counter() - t0)
        d.ctrl[:] = np.clip(driver(d, ref, sensed), lo, hi)
        engine.step(m, d)
        normals = foot_normals(d, feet, [engine.contact_force(m, d, c)[0]
                                         for c in range(len(d.contact.dist))])
        for k, ctrl in models.items():
            err[k].append((ctrl.pred - normals) / weight)
        sensed = d.qfrc_constraint.copy()
    out = {}
    for k in models:
        dt = np.abs(np.diff(np.array(taus[k]), axis=0))
        out[k] = {"chatter": float(dt.sum()), "chatter_peak": float(dt.max()),
                  "force_rms": float(np.sqrt(np.mean(np.square(err[k])))),
                  "total_rms": float(np.sqrt(np.mean(np.square(np.sum(err[k], axis=1))))),
                  "time_us": 1e6 * float(np.median(calls[k]))}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", choices=["stand", "walk", "both"], default="both")
    parser.add_argument("--duration", type=float, default=4.0, help="simulated seconds per run")
    parser.add_argument("--soft-feet", action="store_true",
                        help="keep the Menagerie's soft feet (solimp 0.015)")
    parser.add_argument("--epsilon", type=float, default=None,
                        help="softness of the simulated contacts (default: the engine's)")
    parser.add_argument("--kappa", type=float, default=None,
                        help="time constant of the simulated contacts (default: the engine's)")
    args = parser.parse_args(argv)
    m = go1_torque_model(args.soft_feet, args.epsilon, args.kappa)
    m_free = go1_torque_model(args.soft_feet, args.epsilon, args.kappa)
    m_free.opt.disableflags = int(m_free.opt.disableflags) | int(engine.DisableBit.CONTACT)
    tasks = ["stand", "walk"] if args.task == "both" else [args.task]
    start = settled(m)
    results = {}
    for task in tasks:
        print(f"\n{task}, closed loop: {args.duration:g} s at h = {m.opt.timestep:g} s "
              f"(force errors relative to the weight, {m.body_mass.sum():.2f} kg)")
        print(f"{'controller':18s} {'track rms':>10s} {'chatter':>10s} {'peak':>8s} "
              f"{'force rms':>10s} {'total rms':>10s} {'fell':>5s} {'us/call':>8s}")
        for name, ctrl in controllers(m, m_free).items():
            r = run(m, ctrl, task, args.duration, start)
            results[task, name] = r
            print(f"{name:18s} {r['tracking_rms']:10.4f} {r['chatter']:10.1f} "
                  f"{r['chatter_peak']:8.2f} {r['force_rms']:10.4f} {r['total_rms']:10.4f} "
                  f"{str(r['fell']):>5s} "
                  f"{r['time_us']:8.0f}")
        sh = shadow(m, m_free, task, args.duration, start)
        results[task, "shadow"] = sh
        print(f"{task}, commands along the id-sensed trajectory (not applied):")
        print(f"{'model':18s} {'chatter':>10s} {'peak':>8s} {'force rms':>10s} {'total rms':>10s} "
              f"{'us/call':>8s}")
        for name, r in sh.items():
            print(f"{name:18s} {r['chatter']:10.1f} {r['chatter_peak']:8.2f} "
                  f"{r['force_rms']:10.4f} {r['total_rms']:10.4f} {r['time_us']:8.0f}")
        for model in ("noslip", "noslip-vertex", "convex"):
            ratio = sh[model + "-cold"]["chatter"] / max(sh[model]["chatter"], 1e-300)
            print(f"warm-started {model}: {ratio:.1f}x less torque chatter than cold-started")
    return results


if __name__ == "__main__":
    main()

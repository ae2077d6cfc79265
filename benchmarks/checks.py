"""Cost of the run-time checks of a step: engine.step's compiled loop (state check: BADQPOS,
BADQVEL, BADACT, BADTIME; acceleration check: BADQACC; a bad qacc kept out of the warm start)
against the same semi-implicit Euler loop without them, compiled here; then engine.step(m, d)
(its Python entry checks: the Data belongs to the model, nstep a positive integer) against a
direct call of the compiled kernel. The checks inside forward (BADCTRL, BADMOCAP, bad impulses
kept out of the warm start) run in both variants: they cost one comparison per control, mocap
body and constraint row.

    python benchmarks/checks.py [--models pendulum cheetah humanoid] [--rounds 7] [--steps 2000]

Timings are interleaved (with, without, without, with, ...) in one process and measured as the
thread's CPU time, so that both see the same machine and waits for the CPU do not count; the
medians of the rounds and their ratio are printed.
"""
import argparse
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine import actuator  # noqa: E402
from engine.enums import DisableBit, Integrator  # noqa: E402
from engine.forward import forward_kernel, integrate_pos, step_kernel  # noqa: E402
from engine.jit import jit  # noqa: E402


@jit
def unchecked_steps(m, d, n):
    """n semi-implicit Euler steps as step_kernel takes them, without any check."""
    h = m.opt_timestep[0]
    for _ in range(n):
        forward_kernel(m, d)
        if not m.opt_disableflags[0] & DisableBit.ACTUATION:
            for i in range(m.actuator_actadr.shape[0]):
                adr = m.actuator_actadr[i]
                for j in range(adr, adr + m.actuator_actnum[i]):
                    d.act[j] = actuator.next_activation(m, i, d.act[j], d.act_dot[j], h)
        for i in range(d.qvel.shape[0]):
            d.qvel[i] += h * d.qacc[i]
        integrate_pos(m, d.qpos, d.qvel, h)
        d.time[0] += h
        d.qacc_warmstart[:] = d.qacc
    return n


def model(name):
    if name == "pendulum":
        return engine.load_model_from_string(
            "<mujoco><worldbody><body><joint axis='0 1 0'/><geom type='capsule' "
            "fromto='0 0 0 0 0 -1' size='.05'/></body></worldbody></mujoco>")
    import dm_control
    return engine.load_model(str(pathlib.Path(dm_control.__file__).parent / "suite"
                                 / f"{name}.xml"))


def timed(fn, calls):
    """CPU time of this thread per call: on a loaded machine, wall time counts the waits."""
    t = time.thread_time()
    for _ in range(calls):
        fn()
    return (time.thread_time() - t) / calls


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=["pendulum", "cheetah", "humanoid"])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--steps", type=int, default=2000)
    a = p.parse_args()
    print(f"{'model':<10}{'variant':<34}{'with checks':>14}{'without':>14}{'ratio':>8}")
    for name in a.models:
        m = model(name)
        m.opt.integrator = Integrator.EULER
        d = engine.make_data(m)
        engine.step(m, d, 50)                        # settle, grow the capacities, compile
        ms, ds = m._struct, d._struct
        unchecked_steps(ms, ds, 1)
        rows = {"compiled loop (us/step)": (lambda: step_kernel(ms, ds, a.steps),
                                            lambda: unchecked_steps(ms, ds, a.steps), a.steps),
                "engine.step(m, d) (us/call)": (lambda: engine.step(m, d),
                                                lambda: step_kernel(ms, ds, 1), 1)}
        for label, (with_, without, per) in rows.items():
            calls = 3 if per > 1 else a.steps
            t_with, t_without = [], []
            for k in range(a.rounds):          # alternate which goes first
                for fn, times in ((with_, t_with), (without, t_without))[::1 - 2 * (k % 2)]:
                    times.append(timed(fn, calls) / per)
            tw, to = np.median(t_with) * 1e6, np.median(t_without) * 1e6
            print(f"{name:<10}{label:<34}{tw:>14.3f}{to:>14.3f}{tw / to:>8.3f}")
        assert d.warning.sum() == 0


if __name__ == "__main__":
    main()

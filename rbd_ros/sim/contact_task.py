"""The press task of ``bringup --task press`` without ROS: approach, press, slide, retreat.

``run_press(model, "hybrid_force_position", force=10)`` runs the arm in lockstep in a scene
(default the bundled table, placed by ``contact_site``): the law holds the probe
``approach`` m above the slide's start, brings it down onto the surface, presses ``force`` N
along the inward normal, slides ``length`` m along the surface holding the force, and
retreats.  The law's measured wrench is the simulated F/T sensor's payload-compensated
reading (``rbd_ros.sim.ft_sensor``), fed every cycle as the controller node gets it.

How each law presses:

* ``hybrid_force_position`` and ``admittance``: the normal axis is force-controlled from the
  start of the approach (target wrench ``-force n``; the pose reference stays above): the
  probe comes down at the law's velocity bound and the contact stops it (the hybrid law's
  guarded approach, by default: the bound lowered for the last ``GUARD`` m, ``guard_plan``,
  so that the impact stays near the force); to retreat, the hybrid law's normal axis goes
  back to position control (the reference taken where the probe is) and the admittance
  law's target wrench to zero (its offset folded into the reference:
  ``Admittance.fold_offset``, as the controller node does with a new target pose), then the
  reference moves up;
* ``impedance``: the reference goes ``force / K_n`` below the surface (``K_n`` the stiffness
  along the normal), so the spring presses ``force`` there.

Measured, per cycle, against MuJoCo's own contact forces (``mj_contactForce`` on the probe's
contacts with the scene, the oracle): the normal force, the contact flag; and the probe's
position.  ``PressResult``: force error RMS and max over the slide (its middle 80 %, the
first and last 10 % being the reference's speed-up and slow-down), the impact peak (the
largest normal force before the slide, over ``force``), the cycles without contact during
the slide, the position error along the surface's free axes (the reference's slide position
minus the probe's, in the surface plane), the F/T sensor's and the joint-torque estimate's
normal force over the slide beside MuJoCo's, and the time series.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from rbd_ros.control.press_gains import DEPTH, PRESS_LAWS, press_gains, retreat_gains, world_axis
from rbd_ros.model import MdhModel

if TYPE_CHECKING:
    from rbd_ros.control.force_laws import Admittance, HybridForcePosition, Impedance

    PressLaw = HybridForcePosition | Impedance | Admittance  # the PRESS_LAWS' classes

#: the guarded approach (``guard_plan``): the hybrid law's bound along the normal goes down to
#: the guard speed (ramped over ``force_laws.RAMP_TIME``) when the probe, never faster than the
#: bound, is still at least GUARD m above the surface; the speed keeps an impact's kinetic
#: energy over the contact's stiffness under IMPACT_SHARE of the force, not below GUARD_MIN
GUARD, IMPACT_SHARE, GUARD_MIN = 0.01, 0.2, 0.002


@dataclass
class PressResult:
    law: str
    robot: str
    force: float  # N, the set force
    force_rms: float  # N, |f_n - force| over the slide (RMS), MuJoCo's contact force
    force_max: float  # N, its max
    impact_peak: float  # the largest normal force before the slide / force
    contact_lost: int  # cycles of the slide without a probe contact
    position_rms: float  # m, the error along the surface's free axes over the slide
    position_max: float
    sensor_rms: float  # N, the F/T sensor's normal force minus MuJoCo's over the slide (RMS)
    estimate_rms: float  # N, the joint-torque estimate's minus MuJoCo's (RMS), same window
    unstable_steps: int
    phases: dict[str, float]  # start time of each phase, s
    series: dict[str, np.ndarray] = field(default_factory=dict)  # t, f_n, f_sensor, ...
    notes: list[str] = field(default_factory=list)

    def report(self) -> dict[str, Any]:
        """The numbers for the bringup report (JSON-able)."""
        return {"law": self.law, "robot": self.robot, "force_N": self.force,
                "force_error_rms_N": self.force_rms, "force_error_max_N": self.force_max,
                "impact_peak_ratio": self.impact_peak, "contact_lost_cycles": self.contact_lost,
                "position_error_rms_m": self.position_rms, "position_error_max_m": self.position_max,
                "sensor_vs_mujoco_rms_N": self.sensor_rms, "estimate_vs_mujoco_rms_N": self.estimate_rms,
                "unstable_steps": self.unstable_steps, "phases_s": self.phases}


def guard_speed(mass: float, stiffness: float, force: float, bound: float) -> float:
    """The guarded approach's speed onto a surface (m/s): the impact's kinetic energy
    ``mass v^2 / 2`` (``mass`` the arm's effective mass along the normal, ``normal_mass``) into
    a contact of ``stiffness`` N/m stores ``df^2 / (2 k)``: the force overshoots ``df = v
    sqrt(mass k)``, kept under ``IMPACT_SHARE force``: ``v = IMPACT_SHARE force / sqrt(mass
    k)``, not above ``bound`` (the law's velocity bound)."""
    v = IMPACT_SHARE * force / math.sqrt(max(mass, 1e-6) * stiffness)
    return float(min(bound, v))


def guard_plan(approach: float, bound: float, speed: float) -> tuple[float, float, float]:
    """The hybrid law's guarded approach for a probe coming down ``approach`` m at the law's
    velocity ``bound`` (m/s), to touch at ``speed`` (``guard_speed``): ``(t_slow, limit,
    extra)``.  The bound goes to ``limit`` ``t_slow = (approach - GUARD) / bound`` s after the
    approach starts (the probe is then at least ``GUARD`` above: it is never faster than the
    bound), ramped over ``RAMP_TIME`` (the law's ``set_gains``).  Past its bound the law
    brakes with ``OVER_DAMPING D_f`` of the excess and unwinds the push its force integral
    wound at the faster bound (``HybridForcePosition``): the probe settles at the bound, so
    ``limit = speed`` (not below ``GUARD_MIN``).  (With the integral frozen past the bound,
    the code before, the probe went at ``(OVER_DAMPING limit + bound) / (OVER_DAMPING + 1)``
    against a push of ``Lambda D_f bound``, and the contact took that push: 18.7 N on the
    upside-down UR5's wall.)  The contact comes ``extra = GUARD (1 / speed - 1 / bound) -
    RAMP_TIME (bound - speed) / (2 speed)`` s later than unguarded (later still by the
    approach's start: the probe reaches the bound 0.1 s or so after it starts, and comes the
    last centimetre at the guard's speed, not faster: the mounted arms touched 0.1-0.37 s
    into the press phase).  ``run_press`` uses it by default (``guarded``), and so does the bringup's press
    through the nodes (``press_nodes.PressTask``, ``--no-guard`` to opt out)."""
    from rbd_ros.control.force_laws import RAMP_TIME  # lazy: the force laws (0.4 s of import)

    if speed >= bound:
        return math.inf, bound, 0.0
    limit = max(speed, GUARD_MIN)
    speed = limit
    extra = GUARD * (1.0 / speed - 1.0 / bound) - RAMP_TIME * (bound - speed) / (2.0 * speed)
    return float(max(approach - GUARD, 0.0) / bound), float(limit), float(max(extra, 0.0))


def guarded_bound(site: Any, stiffness: float, force: float, bound: np.ndarray,
                  approach: float) -> tuple[float, np.ndarray, float, str]:
    """The hybrid law's guarded approach onto ``site``'s surface (its contact ``stiffness``,
    N/m: ``scene_stiffness``) for a law whose velocity bound is ``bound`` (6, world axes):
    ``(t_slow, guard, extra, note)``, the bound ``guard`` (``bound`` with ``guard_plan``'s limit
    along the normal) from ``t_slow`` s after the approach starts (``inf``: no guard, where the
    guard's speed is not below the bound), the contact ``extra`` s later than unguarded, and the
    log's line.  One home for ``run_press`` and the bringup's press through the nodes
    (``press_nodes.PressTask``)."""
    axis = world_axis(site.normal)
    guard = np.array(bound, dtype=float)  # a copy
    k = float(stiffness)
    speed = guard_speed(site.mass or 1.0, k, force, guard[axis])
    slow, guard[axis], extra = guard_plan(approach, float(bound[axis]), speed)
    note = (f"guarded approach: {speed * 100:.3g} cm/s (the bound {guard[axis] * 100:.3g} cm/s) "
            f"from {GUARD * 100:.3g} cm above the surface (mass {site.mass:.3g} kg along the "
            f"normal, contact {k:.3g} N/m): +{extra:.2f} s")
    return slow, guard, extra, note


def scene_stiffness(scene) -> float:
    """The stiffest contact of ``scene`` (as loaded, not yet placed) in N/m: the guard's ``k``
    (``guard_speed``); objects given as MuJoCo's ``solref`` count as ``DEFAULT_STIFFNESS``."""
    from rbd_ros.sim.scene import DEFAULT_STIFFNESS  # lazy: the scenes (0.4 s of import)

    return max([o.stiffness or DEFAULT_STIFFNESS for o in scene.objects] or [DEFAULT_STIFFNESS])


def probe_contact(sim, tip: int, out: np.ndarray) -> bool:
    """MuJoCo's contact force on the probe (geom ``tip``) from the scene, world axes, summed
    into ``out`` (the force the probe exerts on the scene: minus that); True if touching."""
    import mujoco

    m, d = sim.mj_model, sim.mj_data
    out.fill(0.0)
    touching = False
    f = np.zeros(6)
    for i in range(d.ncon):
        c = d.contact[i]
        if tip not in (c.geom1, c.geom2) or c.exclude != 0 or c.efc_address < 0:
            continue
        mujoco.mj_contactForce(m, d, i, f)  # in the contact frame, on geom2 from geom1
        fw = c.frame.reshape(3, 3).T @ f[:3]
        sign = 1.0 if c.geom1 == tip else -1.0  # on the scene from the probe
        out += sign * fw
        touching = touching or f[0] > 0.0
    return touching


def link_contacts(sim, tip: int, cycles: np.ndarray) -> None:
    """Count this step in ``cycles[b]`` (per MuJoCo body) for every robot body whose collision
    geoms other than the probe (geom ``tip``) touch the scene (``mujoco_model.scene_touches``):
    the press measures the probe's force only, so such a touch (a collision shape too large,
    a site too close to the arm) makes its numbers untrustworthy (``run_press`` notes it)."""
    from rbd_ros.sim.mujoco_model import scene_touches  # lazy: the MuJoCo model (0.3 s of import)

    for b in scene_touches(sim.mj_model, sim.mj_data, tip):  # once per body and step
        cycles[b] += 1


def run_press(model: MdhModel, law_name: str = "hybrid_force_position", force: float = 10.0,
              scene: Any = "table", length: float = 0.1, approach: float = 0.08,
              settle: float = 0.3, approach_time: float = 1.5, press_time: float = 0.7,
              slide_time: float = 3.0, retreat_time: float = 0.8,
              depth: float = DEPTH, gains: dict[str, Any] | None = None,
              bridge: dict[str, Any] | None = None, urdf: Any = None,
              hook: Any = None, guarded: bool = True, **law_kw: Any) -> PressResult:
    """Run the press task (module docstring) and measure it.  The slide takes ``slide_time``
    (3 s: a quintic, 0.06 m/s at its peak for 0.1 m; MuJoCo's convex contacts lift a sliding
    probe at about friction x speed, and at 2 s the kinova lost 1-2 cycles of contact).  ``depth``: for ``impedance``
    without a given ``stiffness``, the stiffness along the normal is ``force / depth`` (the
    reference ``depth`` m into the surface), its damping scaled to stay critical.  ``urdf``:
    the URDF ``model`` came from, whose collision shapes then touch the scene (``Simulator``).
    ``hook(t, law)``: called every cycle before the law computes (online changes: gains,
    targets; ``law.tau`` is then the last cycle's command).  ``guarded`` (default; hybrid only):
    the hybrid law's approach slows down before the surface (``guard_speed``, ``guard_plan``),
    the phases shifted by the time it adds (0.35-0.67 s on the mounted arms of issue 41):
    impact 1.09-1.18x where unguarded (``guarded=False``) 1.47-1.87x (TALOS 18.7 N, PR2
    15.03 N: over issue 41.5's 15 N).  It is the default since the hybrid law compensates a
    joint's Coulomb friction at the reference's sign until the joint breaks away
    (``HybridForcePosition``): at the measured sign TALOS's and TIAGo++'s guarded slides stuck
    wrist joints (0.50 and 0.57 N RMS), now 0.047 and 0.026 N.  Not the admittance's: its
    compliant reference starts down ~0.1 s late, so the time-planned guard found it 1.25 cm
    up, not 1 cm, and touched 0.3 s late on the UR5; unguarded its impact is 1.0-1.5x."""
    from rbd_ros.control.laws import Reference, make_law  # lazy: the laws (0.3 s of import)
    from rbd_ros.sim.scene import load_scene  # lazy: the scenes (0.3 s of import)
    from rbd_ros.sim.simulator import BridgeConfig, Simulator  # lazy: the simulator (0.4 s of import)

    if law_name not in PRESS_LAWS:
        raise ValueError(f"the press task needs a force law: one of {', '.join(PRESS_LAWS)}; "
                         f"got '{law_name}'")
    if not (np.isfinite(force) and force > 0):
        raise ValueError(f"force must be > 0 N, got {force}")
    log_lines: list[str] = []
    cfg = BridgeConfig(**{"mode": "lockstep", "command_timeout": 0.0, **(bridge or {})})
    loaded = load_scene(scene)
    sim = Simulator(model, cfg, scene=loaded, urdf=urdf,
                    log=lambda lv, s: log_lines.append(f"{lv}: {s}"))
    site = sim.site
    if site is None:
        raise ValueError("the press task places the scene itself: give a scene whose objects "
                         "have pose 'auto'")
    sim.q0 = site.q_above.copy()  # start above the slide, at rest
    sim.reset(keep_time=False)
    tool_model = sim.model  # the probe is its tool
    dt = cfg.timestep
    law = cast("PressLaw", make_law(law_name, tool_model, gains, q0=sim.q, rate=1.0 / dt,
                                    **law_kw))  # law_name is one of PRESS_LAWS (checked above)
    measured = sim.ft.wrench  # the model's compensation, or the identified payload's (issue 41.3)
    if law.use_compensated_wrench:
        if sim.ft.compensator is None:
            raise ValueError("use_compensated_wrench needs bridge={'ft_payload': FILE} (a payload "
                             "file of rbd-ros identify --payload)")
        measured = sim.ft.compensated
    n_vec = site.normal
    above, start_T = site.tool_pose(0.0, approach), site.tool_pose(0.0)
    given = [k for k, source in law.gain_source.items() if source != "model"]  # the user's
    pressed: dict[str, Any] = press_gains(law_name, law.gains, n_vec, force, depth, given=given)
    law.set_gains(**pressed)
    press_depth = 0.0
    if law_name == "impedance":
        K_n = float(n_vec**2 @ law.gains["stiffness"][:3])  # n^T K n (world axes, diagonal K)
        press_depth = force / K_n
    bound = law.gains["velocity_limit"].copy() if law_name != "impedance" else None
    slow, extra = math.inf, 0.0  # the guarded approach (guard_plan): the hybrid law comes down
    guard = bound
    if law_name == "hybrid_force_position" and guarded:  # at its bound
        bound = cast(np.ndarray, bound)  # the hybrid law has a velocity bound (not impedance)
        slow, guard, extra, note = guarded_bound(site, scene_stiffness(loaded), force, bound,
                                                 approach)
        log_lines.append(f"info: {note}")
    t1 = settle
    t2 = t1 + approach_time + extra
    t3 = t2 + press_time
    t4 = t3 + slide_time
    t5 = t4 + retreat_time + 0.3
    plan = _Plan(site, above, start_T, press_depth, (t1, t2, t3, t4), approach_time,
                 slide_time, retreat_time)
    bounds = [(t1 + slow, guard), (t3, bound)] if math.isfinite(slow) else []
    steps = int(round(t5 / dt))
    ref = Reference(tool_model.dof)
    ref.joint, ref.task = False, True
    import mujoco

    tip = mujoco.mj_name2id(sim.mj_model, mujoco.mjtObj.mjOBJ_GEOM, "tip")
    cols = ("t", "f_n", "f_sensor", "f_estimate", "touch", "e_free", "tau_max")
    rec = {c: np.zeros(steps) for c in cols}
    fc, est, fw = np.zeros(3), np.zeros(6), np.zeros(6)
    target = -force * np.concatenate([n_vec, np.zeros(3)])
    phase = 0
    touched = np.zeros(sim.mj_model.nbody, dtype=np.int64)  # link_contacts
    for k in range(steps):
        t = sim.time
        q, qd, _ = sim.measure()
        new_phase = plan.phase(t)
        if new_phase != phase:
            phase = new_phase
            _enter(phase, law, law_name, target, plan, ref.T, tool_model, q)
        plan.reference(t, ref)
        if bounds and t >= bounds[0][0]:  # the guard, until the slide gives the bound back
            law.set_gains(velocity_limit=bounds.pop(0)[1])
        if hook is not None:
            hook(t, law)
        law.set_measured_wrench(measured)
        tau = law.compute(t, q, qd, ref)
        sim.command(tau)
        sim.step()
        touch = probe_contact(sim, tip, fc)
        link_contacts(sim, tip, touched)
        sim.ft.estimate(sim._good_q, sim._pre_qd, sim._qdd, sim._ctrl, est)  # the step's torque
        R = sim.mj_data.site_xmat[mujoco.mj_name2id(sim.mj_model, mujoco.mjtObj.mjOBJ_SITE, "ft_sensor")].reshape(3, 3)
        fw[:3] = R @ sim.ft.wrench[:3]
        p = sim.mj_data.site_xpos[mujoco.mj_name2id(sim.mj_model, mujoco.mjtObj.mjOBJ_SITE, "ft_sensor")]
        e = ref.T[:3, 3] - p
        rec["t"][k] = t
        rec["f_n"][k] = -(n_vec @ fc)  # pressing into the surface: positive
        rec["f_sensor"][k] = -(n_vec @ fw[:3])
        rec["f_estimate"][k] = -(n_vec @ (R @ est[:3]))
        rec["touch"][k] = touch
        rec["e_free"][k] = np.linalg.norm(e - (e @ n_vec) * n_vec)
        rec["tau_max"][k] = float(np.max(np.abs(tau) / law.limit))
    links = {mujoco.mj_id2name(sim.mj_model, mujoco.mjtObj.mjOBJ_BODY, b): int(touched[b])
             for b in np.flatnonzero(touched)}
    if links:  # the numbers measure the probe only (link_contacts)
        log_lines.append(f"warn: the scene touched the arm besides the probe ({links} cycles of "
                         f"{steps}): the force numbers measure the probe only; a collision shape "
                         "too large for the scene, or a contact site too close to the arm?")
    return _result(law_name, tool_model.name, force, rec, plan, sim, log_lines + list(law.gain_notes))


class _Plan:
    """The task's reference: hold above, come down, press, slide, retreat (module docstring)."""

    def __init__(self, site, above, start_T, depth, times, t_app, t_slide, t_ret) -> None:
        self.site, self.above, self.start_T, self.depth = site, above, start_T, depth
        self.t1, self.t2, self.t3, self.t4 = times
        self.t_app, self.t_slide, self.t_ret = t_app, t_slide, t_ret
        self.retreat_from: np.ndarray | None = None
        self.descend = depth > 0.0  # impedance: the reference comes down (module docstring)

    def phase(self, t: float) -> int:
        return int(t >= self.t1) + int(t >= self.t2) + int(t >= self.t3) + int(t >= self.t4)

    def reference(self, t: float, ref) -> None:
        s = self.site
        T = ref.T
        ref.v.fill(0.0)
        ref.a.fill(0.0)
        if t < self.t1:
            np.copyto(T, self.above)
            return
        if t < self.t3:  # come down to the surface, then (impedance) depth into it
            if t < self.t2:
                sig, sd, sdd = _minjerk((t - self.t1) / self.t_app, self.t_app)
                drop, base = self.site.approach, 0.0
            else:
                t_in = 0.6 * (self.t3 - self.t2)
                sig, sd, sdd = _minjerk(min((t - self.t2) / t_in, 1.0), t_in)
                drop, base = self.depth, self.site.approach
            np.copyto(T, self.above)
            if not self.descend:  # the force laws come down at their velocity bound
                return
            T[:3, 3] -= (base + sig * drop) * s.normal
            if t < self.t2:  # into the surface: a quasi-static set point (no D q_d': its
                ref.v[:3] = -sd * drop * s.normal  # damping would press D v_d on top)
                ref.a[:3] = -sdd * drop * s.normal
            return
        if t < self.t4:
            sig, sd, sdd = _minjerk((t - self.t3) / self.t_slide, self.t_slide)
            np.copyto(T, self.start_T)
            T[:3, 3] += sig * s.length * s.slide - self.depth * s.normal
            if not self.descend:  # the reference the force laws pressed from stays above
                T[:3, 3] += s.approach * s.normal
            ref.v[:3] = sd * s.length * s.slide
            ref.a[:3] = sdd * s.length * s.slide
            return
        sig, sd, sdd = _minjerk(min((t - self.t4) / self.t_ret, 1.0), self.t_ret)
        np.copyto(T, cast(np.ndarray, self.retreat_from))  # phase 4: _enter has set it
        T[:3, 3] += sig * s.approach * s.normal
        ref.v[:3] = sd * s.approach * s.normal
        ref.a[:3] = sdd * s.approach * s.normal


def _minjerk(x: float, T: float) -> tuple[float, float, float]:
    """The rest-to-rest quintic ``sigma(x)`` (x in [0, 1]) and its time derivatives."""
    x = min(max(x, 0.0), 1.0)
    s = x**3 * (10 - 15 * x + 6 * x * x)
    sd = 30 * x * x * (1 - x) ** 2 / T
    sdd = 60 * x * (1 - x) * (1 - 2 * x) / T**2
    return s, sd, sdd


def _enter(phase: int, law, law_name: str, target: np.ndarray, plan: _Plan, ref_T: np.ndarray,
           tool_model, q: np.ndarray) -> None:
    """Switch the law's targets at a phase's start (module docstring); ``ref_T`` the pose
    reference of the phase before."""
    if phase == 1 and law_name != "impedance":
        law.set_target_wrench(target, q)
    if phase == 4:
        from rbd_ros.robot import Robot  # lazy: the robot front (0.3 s of import)

        law.set_target_wrench(np.zeros(6), q)
        law.set_gains(**retreat_gains(law_name))
        plan.retreat_from = ref_T.copy()  # admittance: from its compliant reference, the
        if law.fold_offset(plan.retreat_from):  # offset folded in (as the controller does)
            return
        plan.retreat_from = plan.start_T.copy()  # else from where the probe is
        plan.retreat_from[:3, 3] = Robot(tool_model).fk(q)[:3, 3]


def _result(law_name: str, robot: str, force: float, rec: dict, plan: _Plan, sim,
            notes: list[str]) -> PressResult:
    t = rec["t"]
    span = plan.t4 - plan.t3
    slide = (t >= plan.t3 + 0.1 * span) & (t < plan.t4 - 0.1 * span)
    before = t < plan.t3
    err = rec["f_n"][slide] - force
    return PressResult(
        law=law_name, robot=robot, force=force,
        force_rms=float(np.sqrt(np.mean(err**2))), force_max=float(np.abs(err).max()),
        impact_peak=float(rec["f_n"][before].max() / force),
        contact_lost=int(np.sum(rec["touch"][(t >= plan.t3) & (t < plan.t4)] == 0)),
        position_rms=float(np.sqrt(np.mean(rec["e_free"][slide] ** 2))),
        position_max=float(rec["e_free"][slide].max()),
        sensor_rms=float(np.sqrt(np.mean((rec["f_sensor"][slide] - rec["f_n"][slide]) ** 2))),
        estimate_rms=float(np.sqrt(np.mean((rec["f_estimate"][slide] - rec["f_n"][slide]) ** 2))),
        unstable_steps=sim.stats.unstable_steps,
        phases={"approach": plan.t1, "press": plan.t2, "slide": plan.t3, "retreat": plan.t4},
        series=rec, notes=notes)

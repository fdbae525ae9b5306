"""A new model for a running controller or dynamics server, checked and built off the cycle
(issue 44: an identified model swapped in without a restart, which would drop the torque).

* ``swap_refusal(running, new)``: why ``new`` cannot replace ``running`` (None when it can):
  other joints (names, count or order), a non-finite or negative mass, a non-finite centre of
  mass or inertia, or a link inertia that is not physical -- a negative principal moment or a
  broken triangle inequality ``I1 + I2 >= I3`` (``rbd_ros.model.physical.physical_inertia``),
  also one the loader already replaced (``MdhModel.inertia_notes``: the file itself is wrong).
* ``law_for_model(law, model, q, ...)``: the running law's type over ``model``; the running
  gains kept, except those derived from the model (``law.gain_source == "model"``), which are
  derived again from ``model`` at the pose ``q`` (``ControlLaw.derive_gains``); an integral
  term carried over.  Returns the law and a sentence saying what was kept and derived.

``rbd_ros.control.loop.ControlLoop.swap_model`` hands the result to the cycle and blends the
torque from the old law into the new one over ``SWAP_CYCLES`` cycles.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from rbd_ros.model.physical import physical_inertia


def swap_refusal(running: Any, new: Any) -> str | None:
    """Why the model ``new`` cannot replace ``running`` in a live controller (module
    docstring), or None."""

    old_names, names = list(running.joint_names), list(new.joint_names)
    if names != old_names:
        return (f"the new model's joints {names} are not the running model's {old_names} "
                "(same names, count and order needed)")
    if new.base_type != running.base_type:
        return f"the new model has a {new.base_type} base, the running one a {running.base_type} base"
    mass, com, inertia = (np.asarray(x, dtype=float) for x in (new.mass, new.com, new.inertia))
    for i, link in enumerate(new.link_names):
        where = f"link '{link}' (joint '{names[i]}')"
        if not (np.isfinite(mass[i]) and mass[i] >= 0.0):
            return f"{where}: mass {mass[i]!r} is not a finite non-negative number"
        if not np.isfinite(com[i]).all():
            return f"{where}: centre of mass {com[i].tolist()} is not finite"
        if not np.isfinite(inertia[i]).all():
            return f"{where}: inertia {inertia[i].tolist()} is not finite"
        _, msg = physical_inertia(inertia[i], where)
        if msg is not None:
            return msg.split(". Using")[0]
    notes = getattr(new, "inertia_notes", ())
    if notes:
        return notes[0].split(". Using")[0] + " (the loader replaced it: fix the file)"
    return None


def law_for_model(law: Any, model: Any, q: np.ndarray, *, bandwidth: float, damping_ratio: float,
                  rate: float, gains_file: str | None = None) -> tuple[Any, str]:
    """The law ``law.name`` over ``model`` with the running gains, the model's derived again at
    ``q`` (module docstring); ``(law, what was kept and derived)``.  ``ValueError`` when the
    new model cannot carry the running gains (e.g. an ``effort_limit`` above its limits)."""
    from rbd_ros.control.laws import make_law  # lazy: the laws (0.4 s of import)

    derived = [k for k, src in law.gain_source.items() if src == "model"]
    kept = {k: v.copy() for k, v in law.gains.items() if k not in derived}
    new = make_law(law.name, model, kept, model_actuators=law.model_actuators, gains_file=gains_file,
                   q0=np.asarray(q, dtype=float), bandwidth=bandwidth, damping_ratio=damping_ratio, rate=rate)
    new.gain_source = dict(law.gain_source)
    new.schedule = law.schedule
    if hasattr(law, "use_compensated_wrench"):  # a force law's wrench source (issue 41.3)
        setattr(new, "use_compensated_wrench", law.use_compensated_wrench)  # noqa: B010 (not ControlLaw's)
    integral = getattr(law, "integral", None)
    new_integral = None if integral is None else getattr(new, "integral", None)
    if new_integral is not None:
        new_integral[:] = integral  # the PID's integral term goes on
    text = "gains kept: " + (", ".join(sorted(kept)) or "none")
    if derived:
        text += (f"; derived from the new model at q = {np.round(q, 4).tolist()}: "
                 + ", ".join(f"{k}={np.round(new.gains[k], 4).tolist()}" for k in derived))
    return new, text

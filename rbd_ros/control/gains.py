"""Gains and limits of the control laws: what each law takes, defaults from YAML, validation.

ROS-free.  A gain is given as a scalar (same for every axis) or a list with one entry per
axis; ``validate_gains`` turns it into a float array of the right length or raises
``ValueError`` with a reason (the node returns that reason from ``set_parameters``).

Units (torques in N m at the joints, 003 §6.2-6.9; forces in N):

=====================  ========  =====================================================
law                    gain      meaning
=====================  ========  =====================================================
pd, pid, pd_gravity    kp        joint stiffness ``K_p``, N m/rad (n)
                       kd        joint damping ``K_v``, N m s/rad (n)
pid                    ki        integral gain ``K_i``, N m/(rad s) (n)
                       i_clamp   anti-windup bound on ``|K_i int e dt|``, N m (n)
computed_torque        kp, kd    acceleration gains of (6.42), 1/s^2 and 1/s (n)
task_pd                kp        task stiffness of (6.47), [N/m x3, N m/rad x3] (6)
                       kd        joint damping ``K_v`` of (6.47), N m s/rad (n)
resolved_acceleration  kp, kd    task acceleration gains of (6.49), 1/s^2, 1/s (6)
                       k_null    null-space damping, 1/s (n; redundant arms only)
                       kp_null   null-space posture stiffness toward a joint reference,
                                 1/s^2 (n; redundant arms, joint references only)
every law              effort_limit  optional extra torque bound, N m (n; the smaller of
                                 this and the model's effort limit applies)
=====================  ========  =====================================================
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

JOINT = "joint"  # one entry per joint
TASK = "task"  # one entry per task-space axis: x, y, z, rx, ry, rz

#: the gains each law takes and their size
LAW_GAINS: dict[str, dict[str, str]] = {
    "pd": {"kp": JOINT, "kd": JOINT},
    "pid": {"kp": JOINT, "kd": JOINT, "ki": JOINT, "i_clamp": JOINT},
    "pd_gravity": {"kp": JOINT, "kd": JOINT},
    "computed_torque": {"kp": JOINT, "kd": JOINT},
    "task_pd": {"kp": TASK, "kd": JOINT},
    "resolved_acceleration": {"kp": TASK, "kd": TASK, "k_null": JOINT, "kp_null": JOINT},
}
LAWS = tuple(LAW_GAINS)
#: limits accepted by every law (validated like gains, but must be strictly positive)
LIMITS: dict[str, str] = {"effort_limit": JOINT}


def gain_names(law: str) -> tuple[str, ...]:
    """Gains (then limits) the law ``law`` takes."""
    _check_law(law)
    return tuple(LAW_GAINS[law]) + tuple(LIMITS)


def _check_law(law: str) -> None:
    if law not in LAW_GAINS:
        raise ValueError(f"unknown controller type '{law}'; use one of {', '.join(LAWS)}")


def validate_gain(law: str, name: str, value: Any, dof: int) -> np.ndarray:
    """``value`` (scalar or sequence) as a float array of the gain's size, or ``ValueError``."""
    _check_law(law)
    kinds = {**LAW_GAINS[law], **LIMITS}
    if name not in kinds:
        raise ValueError(f"'{name}' is not a gain of {law}; its gains are {', '.join(kinds)}")
    size = dof if kinds[name] == JOINT else 6
    what = "joint" if kinds[name] == JOINT else "task-space axis (x y z rx ry rz)"
    items = value if isinstance(value, (list, tuple)) else [value]
    if any(isinstance(v, (bool, np.bool_, str)) for v in items) or (
            isinstance(value, np.ndarray) and value.dtype.kind not in "iuf"):
        raise ValueError(f"{name} must be a number or a list of numbers, got {value!r}")
    try:
        arr = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or a list of numbers, got {value!r}") from None
    if arr.size == 1:
        arr = np.full(size, arr[0])
    if arr.size != size:
        raise ValueError(f"{name} needs 1 or {size} values (one per {what}), got {arr.size}")
    if not np.isfinite(arr).all():
        if name == "effort_limit" and not np.isnan(arr).any():
            pass  # +inf means "no extra limit"
        else:
            raise ValueError(f"{name} contains NaN or Inf: {arr.tolist()}")
    if name in LIMITS:
        if (arr <= 0).any():
            raise ValueError(f"{name} must be positive, got {arr.tolist()}")
    elif (arr < 0).any():
        bad = np.flatnonzero(arr < 0).tolist()
        raise ValueError(f"{name} must be non-negative (a negative gain destabilises the loop); "
                         f"negative at index {bad}: {arr.tolist()}")
    return arr


def validate_gains(law: str, values: Mapping[str, Any], dof: int) -> dict[str, np.ndarray]:
    """All gains of ``law`` from ``values`` (unknown keys refused, missing gains refused)."""
    _check_law(law)
    allowed = gain_names(law)
    unknown = [k for k in values if k not in allowed]
    if unknown:
        raise ValueError(f"{law} does not take {unknown}; its gains are {', '.join(allowed)}")
    missing = [k for k in LAW_GAINS[law] if k not in values]
    if missing:
        raise ValueError(f"{law} needs gains {missing}")
    return {k: validate_gain(law, k, v, dof) for k, v in values.items()}


def default_gains_file() -> Path:
    from rbd_ros.resources import config_file

    return config_file("controllers")


def load_gains(law: str, robot_names: list[str] | tuple[str, ...] = (), path: str | Path | None = None
               ) -> dict[str, Any]:
    """Raw (unvalidated) gains of ``law`` from a gains YAML file (default
    ``config/controllers.yaml``): ``defaults[law]``, overridden by ``robots[NAME][law]`` for the
    first of ``robot_names`` listed there.  Returns ``{gain: scalar or list}``."""
    import yaml

    _check_law(law)
    p = Path(path) if path else default_gains_file()
    if not p.is_file():
        raise FileNotFoundError(f"gains file '{p}' does not exist")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"gains file '{p}' is not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise ValueError(f"gains file '{p}': expected a mapping with 'defaults' and 'robots'")
    out: dict[str, Any] = dict((data.get("defaults") or {}).get(law) or {})
    robots = data.get("robots") or {}
    for name in robot_names:
        if name in robots:
            out.update((robots[name] or {}).get(law) or {})
            break
    return out

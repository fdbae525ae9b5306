"""The checker's view of ``BridgeConfig``'s fields (issue 40 item 6).

``BridgeConfig`` gets its fields at run time from ``config/schema/mujoco_bridge.yaml``
(``rbd_ros.util.schema.settings``), which mypy cannot read.  ``simulator`` makes this class the
base of ``BridgeConfig`` under ``TYPE_CHECKING`` only (``object`` at run time): the annotations
are the values as ``BridgeConfig.__post_init__`` leaves them.  The keys, their defaults and
meaning stay the schema's; ``test_bridge_fields`` holds these names to the schema's.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar


class BridgeFields:
    """The fields of ``rbd_ros.sim.BridgeConfig`` (schema order), for the type checker."""

    SCHEMA: ClassVar[Mapping[str, Mapping[str, Any]]]
    __dataclass_fields__: ClassVar[dict[str, Any]]  # a dataclass at run time (dataclasses.fields)
    timestep: float
    integrator: str
    contacts: bool
    gripper: str
    gripper_initial: Any
    scene: str
    ft_sensor: bool
    ft_link: str
    ft_force_noise: float
    ft_torque_noise: float
    ft_cutoff: float
    ft_payload: str
    ft_tool: str
    mode: str
    publish_every: int
    joints: tuple[str, ...]
    initial_positions: tuple[float, ...]
    initial_velocities: tuple[float, ...]
    diagnostics_period: float
    stats_period: float
    rt_priority: int
    sched_slice_us: float
    cpu_affinity: tuple[int, ...]
    lock_memory: bool
    gc_freeze: bool
    publish_thread: bool
    command_timeout: float
    brake_damping: float
    command_mode: str
    command_interface: tuple[str, ...]
    drive_kp: float | tuple[float, ...]
    drive_kd: float | tuple[float, ...]
    drive_bandwidth: float
    saturation: bool
    armature: bool
    viscous_friction: bool
    coulomb_friction: bool
    voltage_limit: Any
    latency_steps: int
    encoder_resolution: Any
    position_noise: Any
    velocity_noise: Any
    effort_noise: Any
    noise_seed: int
    min_mass: float
    min_inertia: float

    def __init__(self, **settings: Any) -> None:
        """The keys of the schema, as keywords (the dataclass's own ``__init__`` at run time)."""


#: the field names declared above, in order (for the test against the schema)
FIELDS = tuple(name for name in BridgeFields.__annotations__
               if name not in ("SCHEMA", "__dataclass_fields__"))

__all__ = ["FIELDS", "BridgeFields"]

"""The services floor: the dynamics server's ROS-free request rules (issue 40 item 5).

* ``requests``: ``DynamicsService``, bounded and validated requests over a ``Robot`` (what the
  dynamics server computes, without ROS), ``RequestError``, the request bounds and the base
  names' rules (``base_names``, ``DEFAULT_WHEELS``, ``LATERAL_FORCE``)

Above the robot floor (it calls ``Robot``), below ``sim`` and ``ros`` (the server node and the
simulated mobile model use it). Until issue 40 the module was ``rbd_ros.robot.services`` (that
name still imports, with a ``DeprecationWarning``).
"""
from rbd_ros.services.requests import (
    BASE_NAMES,
    CHUNK_STATES,
    CHUNK_STEPS,
    DEFAULT_MAX_POINTS,
    DEFAULT_MAX_REQUEST_SECONDS,
    DEFAULT_WHEELS,
    LATERAL_FORCE,
    MAX_SUBSTEPS,
    BaseNames,
    DynamicsService,
    Linearization,
    RequestError,
    SimulationResult,
    base_names,
    hold_substeps,
    named_model,
    renamed_field,
)

__all__ = ["BASE_NAMES", "CHUNK_STATES", "CHUNK_STEPS", "DEFAULT_MAX_POINTS", "DEFAULT_MAX_REQUEST_SECONDS",
           "DEFAULT_WHEELS", "LATERAL_FORCE", "MAX_SUBSTEPS", "BaseNames", "DynamicsService", "Linearization",
           "RequestError", "SimulationResult", "base_names", "hold_substeps", "named_model", "renamed_field"]

"""Topic and service names of the rbd_ros nodes, and the dynamics services' types: one place
for the nodes, the bringup and ``DynamicsClient``.  ``~/x`` topics are the node's own
(``/controller/x`` for the node named ``controller``: ``node_topic``)."""
from __future__ import annotations

import warnings

# ros2_control's topics: the bridge publishes states and simulated time, takes commands
JOINT_STATES = "/joint_states"
COMMANDS = "/effort_controller/commands"
CLOCK = "/clock"
# a mobile base's (the bridge publishes them; rbd_ros.ros.mobile_bridge)
ODOM = "/odom"
TF = "/tf"
# the controller's own
CONTROLLER_STATE = "~/controller_state"
JOINT_TRAJECTORY = "~/joint_trajectory"
FOLLOW_JOINT_TRAJECTORY = "~/follow_joint_trajectory"  # control_msgs/action/FollowJointTrajectory
TARGET_POSE = "~/target_pose"
TASK_STATE = "~/task_state"
# the bridge's own
DIAGNOSTICS = "~/diagnostics"
RESET = "~/reset"
PAUSE = "~/pause"

#: the dynamics server's services (under ``/<service_namespace>/``) -> rbd_ros_interfaces/srv type
DYNAMICS_SERVICES = {"inverse_dynamics": "InverseDynamics", "forward_simulate": "ForwardSimulate",
                     "mass_matrix": "MassMatrix", "gravity": "Gravity",
                     "forward_kinematics": "ForwardKinematics", "jacobian": "Jacobian",
                     "get_model": "GetModel", "inverse_kinematics": "InverseKinematics",
                     "static_torques": "StaticTorques", "regressor": "Regressor",
                     "linearize": "Linearize"}


def node_topic(node: str, name: str) -> str:
    """The absolute name of node ``node``'s topic ``name`` (``~/x`` -> ``/node/x``)."""
    return f"/{node.strip('/')}/{name[2:]}" if name.startswith("~/") else name


def dynamics_service_types() -> dict[str, type]:
    """``DYNAMICS_SERVICES`` with the generated service classes.  A type the installed
    ``rbd_ros_interfaces`` lacks (built before the service was added) is left out with a
    warning naming it and the fix, so the other services still run."""

    from rbd_ros_interfaces import srv

    out = {}
    for name, kind in DYNAMICS_SERVICES.items():
        if not hasattr(srv, kind):
            warnings.warn(f"rbd_ros_interfaces has no {kind}: the '{name}' service is left out; rebuild "
                          f"the interfaces (scripts/setup.sh)", RuntimeWarning, stacklevel=2)
            continue
        out[name] = getattr(srv, kind)
    return out

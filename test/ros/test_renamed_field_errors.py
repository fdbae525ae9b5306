"""A ForwardSimulate request that uses the deprecated ``torques``/``torque_period`` and is
refused gets a message naming the field it sent (before: ``efforts``/``effort_period``, which
the caller never wrote), and the new fields keep their own names.  The server's handler runs
on a stand-in for its node (a logger only): no ROS graph."""
from __future__ import annotations

import math
from types import SimpleNamespace as NS

import pytest

from robots_data import example_robot_urdf

UR3 = str(example_robot_urdf("ur_description/urdf/ur3_gripper.urdf"))


@pytest.fixture(scope="module")
def handler():
    """``DynamicsServer._forward_simulate`` behind its ``_guard``, on the UR3."""
    from rbd_ros import Robot
    from rbd_ros.ros.nodes.dynamics_server import DynamicsServer
    from rbd_ros.services import DynamicsService

    logged: list[str] = []
    node = NS(get_logger=lambda: NS(warning=logged.append, error=logged.append))
    server = NS(node=node, sim_service=DynamicsService(Robot.from_urdf(UR3)), _warned_torques=False)
    guarded = DynamicsServer._guard(server, lambda req, res: DynamicsServer._forward_simulate(server, req, res))
    return guarded, list(server.sim_service.robot.joint_names)


def _request(names: list[str], **fields):
    from rbd_ros_interfaces.srv import ForwardSimulate

    n = len(names)
    base = dict(joint_names=names, initial_positions=[0.1] * n, initial_velocities=[0.0] * n,
                dt=1e-3)
    return ForwardSimulate.Request(**{**base, **fields}), ForwardSimulate.Response()


@pytest.mark.parametrize("fields, says", [
    (dict(torques=[0.0] * 5, torque_period=0.01), "torques has 5 values"),
    (dict(torques=[0.0] * 6, torque_period=math.nan), "torque_period must be a positive number, got nan"),
    (dict(efforts=[0.0] * 6, torque_period=-1.0), "torque_period must be a positive number, got -1.0"),
    (dict(efforts=[0.0] * 5, effort_period=0.01), "efforts has 5 values"),
    (dict(torques=[0.0] * 6, effort_period=-1.0), "effort_period must be a positive number, got -1.0"),
])
def test_a_refusal_names_the_field_the_request_used(handler, fields, says) -> None:
    call, names = handler
    res = call(*_request(names, **fields))
    assert not res.success and res.message.startswith(says), res.message

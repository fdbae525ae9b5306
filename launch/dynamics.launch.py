"""ros2 launch rbd_ros dynamics.launch.py [robot:=...|urdf:=...] [base_link:=...] [tip_link:=...]
    [params_file:=FILE]

Only the dynamics services, e.g. beside a real arm. The node and its parameters come from
``rbd_ros.ros.bringup.description.describe(..., simulate=False, controller='none')``.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from rbd_ros.ros.bringup.description import ARGUMENTS, describe
from rbd_ros.ros.bringup.params import launch_parameters

ARGS = ("robot", "urdf", "base_link", "tip_link", "use_sim_time")


def _nodes(context, *args, **kwargs):
    values = {key: LaunchConfiguration(key).perform(context) for key in ARGS}
    return [Node(package="rbd_ros", executable=spec.executable, name=spec.name,
                 parameters=[spec.parameters], output="screen")
            for spec in launch_parameters(context, describe(**values, controller="none", simulate=False))]


def generate_launch_description() -> LaunchDescription:
    defaults = {**ARGUMENTS, "use_sim_time": ("false", "follow /clock")}
    return LaunchDescription(
        [DeclareLaunchArgument(key, default_value=defaults[key][0], description=defaults[key][1])
         for key in ARGS]
        + [OpaqueFunction(function=_nodes)])

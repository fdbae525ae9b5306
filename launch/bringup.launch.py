"""ros2 launch rbd_ros bringup.launch.py [robot:=puma560] [urdf:=...] [base_link:=...]
    [tip_link:=...] [controller:=computed_torque] [mode:=realtime] [use_sim_time:=true]
    [composed:=false] [rt_priority:=0] [params_file:=FILE]

MuJoCo bridge + state publisher (/robot_description, /tf) + dynamics services + a controller.
The nodes and their parameters come from
``rbd_ros.ros.bringup.description.describe`` -- the same description ``rbd-ros bringup`` starts.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from rbd_ros.ros.bringup.description import ARGUMENTS, describe
from rbd_ros.ros.bringup.params import launch_parameters


def _nodes(context, *args, **kwargs):
    values = {key: LaunchConfiguration(key).perform(context) for key in ARGUMENTS}
    return [Node(package="rbd_ros", executable=spec.executable, name=spec.name,
                 parameters=[spec.parameters], output="screen")
            for spec in launch_parameters(context, describe(**values))]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription(
        [DeclareLaunchArgument(key, default_value=default, description=text)
         for key, (default, text) in ARGUMENTS.items()]
        + [OpaqueFunction(function=_nodes)])

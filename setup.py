"""ament_python package rbd_ros (also pip-installable; `pip install -e .`)."""
from glob import glob

from setuptools import find_packages, setup

package_name = "rbd_ros"

setup(
    name=package_name,
    version="0.3.0",
    packages=find_packages(include=["rbd_ros", "rbd_ros.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.py")),
        ("share/" + package_name + "/config", glob("config/*.yaml") + glob("config/*.xml")),
        ("share/" + package_name + "/config/schema", glob("config/schema/*.yaml")),
        ("share/" + package_name + "/config/scenes", glob("config/scenes/*.yaml")),
        ("share/" + package_name + "/urdf", glob("urdf/*.urdf") + glob("urdf/*.xacro")),
    ],
    install_requires=["setuptools"],
    # rbd-ros sweep --ray ADDRESS (issue 32): pip install 'rbd_ros[sweep]' on every node of the cluster
    # rbd-ros identify's semidefinite program (issue 31; without it: alternating projections)
    extras_require={"sweep": ["ray>=2.60"], "identify": ["cvxpy>=1.9", "clarabel>=0.11"]},
    zip_safe=True,
    maintainer="rbd_ros maintainers",
    maintainer_email="maintainers@rbd-ros.org",
    description="Fast, verified rigid-body dynamics of robot arms for ROS 2",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            "rbd-ros = rbd_ros.cli:main",
            "dynamics_server = rbd_ros.ros.nodes.dynamics_server:main",
            "mujoco_bridge = rbd_ros.ros.nodes.mujoco_bridge:main",
            "controller = rbd_ros.ros.nodes.controller:main",
            "state_publisher = rbd_ros.ros.nodes.state_publisher:main",
        ],
    },
)

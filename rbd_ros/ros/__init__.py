"""Everything of rbd_ros that imports rclpy: nodes, the dynamics client, the Fast DDS profile,
the lean executor, parameter loading and the bringup.  The rest of ``rbd_ros`` is ROS-free and
never imports from here."""

"""Bringup: which nodes make up a running system, and the console command that starts them.

``description.describe(...)`` is the single source for both ``launch/*.launch.py`` (for a
standard ROS 2 install) and ``rbd-ros bringup`` (processes started directly), so the two cannot
drift apart.
"""

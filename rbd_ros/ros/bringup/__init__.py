"""Bringup: which nodes make up a running system, and the console command that starts them.

``description.describe(...)`` is the single source for both ``launch/*.launch.py`` (for a
standard ROS 2 install) and ``rbd-ros bringup`` (processes started directly), so the two cannot
drift apart.

``rbd-ros bringup`` in three parts: ``cli`` parses (``args``) and builds a ``plan.RunPlan``,
ROS-free (the robot loaded once, the tour or the press task, the nodes and their parameters);
``runner.Runner`` (over ``inbox.Inbox``, what it receives) starts and supervises the nodes over
ROS and runs the plan's task -- ``tour_task.TourTask``, ``ExcitationTask``, ``MobileTourTask``,
``press_nodes.PressTask``: objects with one small interface, ``runner.Task`` --, which report
(``tour_report``, ``report``; ``press``; the page, ``page``).
"""

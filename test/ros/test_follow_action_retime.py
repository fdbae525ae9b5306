"""Goals through ``/controller/follow_joint_trajectory`` on a 7-joint arm (issue 37): Centauro's
chain from ``pelvis`` to ``arm1_6`` (torso yaw, the shoulder pan that carries the whole arm,
and six arm joints), MuJoCo in lockstep, a separate computed-torque controller whose torso-yaw
drive is limited (``effort_limit``) to 18.6 N m; a plain rclpy ``ActionClient``.

* A MoveIt-like path (8 waypoints, positions only, 0.5 s) needs 39 N m of the torso yaw: 3x
  the 13 N m a plan may use (70 % of its limit).  It is retimed: the result says "retimed to
  ... (given 0.500 s)", and its feedback's time runs to the new duration; the commanded torque
  is at the limit in under 15 % of the cycles (the plan keeps 30 % for the feedback, which
  reaches the limit briefly at the timing's switches), and every measured configuration lies
  within the goal's path tolerance (0.01 rad) of the given path (the densely sampled spline
  through the waypoints).
* A first point at ``time_from_start`` 0, 0.5 rad from the arm, is joined from the current state
  (the result says so) and the measured joint speeds never exceed the URDF's velocity limits.
* A 10 000-point goal stamped 0 (a slow ramp from where the arm is, once it settled at the
  reference the previous goal left) starts at its first point: its first feedback's desired
  position is that reference and where the arm was, and the arm never moves faster than the
  ramp does.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from robots_data import example_robot_urdf
from ros_helpers import NodeProcess, ros_context, spin_in_background

pytestmark = pytest.mark.slow  # ROS processes, a closed loop

CENTAURO = "centauro_description/urdf/centauro.urdf"
ACTION = "/controller/follow_joint_trajectory"
TORSO_LIMIT = 18.6  # N m: the given timing needs 39 N m, 3 x 70 % of this


def _t(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


class Client:
    """An ActionClient with recorders of /joint_states and the commands (joint order ``names``)."""

    def __init__(self, ctx, names: list[str]) -> None:
        import rclpy
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionClient
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        from rbd_ros.ros.common import recordable_qos

        self.Action, self.names = FollowJointTrajectory, names
        self.node = rclpy.create_node("retime_client", context=ctx)
        self.client = ActionClient(self.node, FollowJointTrajectory, ACTION)
        self.lock = threading.Lock()
        self.states: list[tuple[float, np.ndarray, np.ndarray]] = []
        self.commands: list[np.ndarray] = []
        self.feedback: list = []
        self.recorder = rclpy.create_node("retime_recorder", context=ctx)
        self.recorder.create_subscription(JointState, "/joint_states", self._on_state, recordable_qos())
        self.recorder.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                          self._on_command, recordable_qos())
        self.spinners = [spin_in_background(self.node), spin_in_background(self.recorder)]

    def _on_state(self, msg) -> None:
        index = [list(msg.name).index(j) for j in self.names]
        with self.lock:
            self.states.append((_t(msg.header.stamp), np.asarray(msg.position)[index],
                                np.asarray(msg.velocity)[index]))

    def _on_command(self, msg) -> None:
        with self.lock:
            self.commands.append(np.asarray(msg.data))

    def latest(self) -> tuple[float, np.ndarray]:
        deadline = time.monotonic() + 60
        while True:
            with self.lock:
                if self.states:
                    return self.states[-1][0], self.states[-1][1].copy()
            assert time.monotonic() < deadline, "no /joint_states"
            time.sleep(0.01)

    def wait_until(self, t: float, timeout: float = 60.0) -> None:
        """Until a recorded state is stamped ``t`` or later."""
        deadline = time.monotonic() + timeout
        while self.latest()[0] < t:
            assert time.monotonic() < deadline, f"no state at {t}"
            time.sleep(0.01)

    def goal(self, points, tol: float = 0.01, goal_time: float = 1.0, stamp: float = 0.0):
        from control_msgs.msg import JointTolerance
        from trajectory_msgs.msg import JointTrajectoryPoint

        from rbd_ros.ros.messages import set_stamp

        g = self.Action.Goal()
        g.trajectory.joint_names = list(self.names)
        set_stamp(g.trajectory.header.stamp, stamp)
        for tfs, q in points:
            p = JointTrajectoryPoint(positions=[float(x) for x in q])
            set_stamp(p.time_from_start, tfs)
            g.trajectory.points.append(p)
        g.path_tolerance = [JointTolerance(name=n, position=tol) for n in self.names]
        g.goal_tolerance = [JointTolerance(name=n, position=tol) for n in self.names]
        set_stamp(g.goal_time_tolerance, goal_time)
        return g

    def send(self, goal):
        assert self.client.wait_for_server(timeout_sec=60), "no action server"
        # sent again while unanswered (``send_goal_answered``: discovery on a loaded machine)
        handle = self.spinners[0].send_goal_answered(
            self.client, goal, 20.0,
            feedback_callback=lambda m: self.feedback.append((bytes(m.goal_id.uuid), m.feedback)))
        assert handle.accepted
        return handle

    @staticmethod
    def wait(future, timeout: float):
        deadline = time.monotonic() + timeout
        while not future.done():
            assert time.monotonic() < deadline, "no answer"
            time.sleep(0.005)
        return future.result()

    def result(self, handle, timeout: float = 180.0):
        res = self.wait(handle.get_result_async(), timeout)
        return res.status, res.result.error_code, res.result.error_string

    def goal_feedback(self, handle) -> list:
        uuid = bytes(handle.goal_id.uuid)
        return [fb for gid, fb in list(self.feedback) if gid == uuid]

    def window(self, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
        with self.lock:
            rows = [(q, qd) for t, q, qd in self.states if t0 <= t <= t1]
        return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])

    def close(self) -> None:
        for s in self.spinners:
            s.shutdown(timeout_sec=1.0)
        self.recorder.destroy_node()
        self.client.destroy()
        self.node.destroy_node()


def _distance_to_path(q: np.ndarray, path: np.ndarray) -> float:
    """The largest distance (max over joints) of a configuration of ``q`` to the nearest of
    the densely sampled ``path``: a k-d tree's nearest neighbour in the max norm (``p=inf``).
    A row-by-row scan of the 20 001 samples took 18 s here: the test's main thread held the GIL
    that long against its own recorder's spinners, which then fell behind the 1 kHz lockstep
    stream."""
    from scipy.spatial import cKDTree

    return float(cKDTree(path).query(q, p=np.inf)[0].max())


@pytest.mark.flaky(reruns=1, reruns_delay=1)  # a 7-joint closed loop through the nodes under load
def test_goals_on_a_7_joint_arm_retimed_joined_and_started_at_their_first_point() -> None:
    from action_msgs.msg import GoalStatus

    from rbd_ros.control.trajectory import JointSpline
    from rbd_ros.robot import Robot

    urdf = str(example_robot_urdf(CENTAURO))
    model = Robot.from_urdf(urdf, base_link="pelvis", tip_link="arm1_6").model
    names, n = list(model.joint_names), model.dof
    q0 = np.clip(np.full(n, 0.1), model.lower + 0.3, model.upper - 0.3)
    limit = [TORSO_LIMIT, *model.effort_limit[1:]]
    robot = ["-p", f"urdf_path:={urdf}", "-p", "base_link:=pelvis", "-p", "tip_link:=arm1_6"]
    procs = [NodeProcess(["mujoco-bridge", "--ros-args", *robot, "-p", "mode:=lockstep",
                          "-p", f"initial_positions:={q0.tolist()}"])]
    with ros_context() as ctx:
        client = None
        try:
            procs[0].wait_for("mujoco_bridge: ready", 240)
            procs.append(NodeProcess(["controller", "--ros-args", *robot, "-p", "type:=computed_torque",
                                      "-p", "rate:=1000.0", "-p", f"effort_limit:={[float(x) for x in limit]}"]))
            procs[1].wait_for("controller: ready", 240)
            client = Client(ctx, names)
            t_start, here = client.latest()

            # ---- 3x too fast for the torso yaw's torque: retimed, then tracked -------------------
            s = np.linspace(0.0, 1.0, 9)[1:]
            path = here + np.array([0.8, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]) * np.sin(np.pi * s / 2)[:, None] ** 2
            given = JointSpline.from_points(0.0, 0.5 * s, path, start=(here, np.zeros(n), np.zeros(n)))
            dense = given.sample(np.linspace(0.0, 0.5, 20_001))[0]
            n_cmd = len(client.commands)
            deadline = time.monotonic() + 60
            while True:  # 'ready' comes before the controller's first /joint_states
                handle = client.send(client.goal(list(zip(0.5 * s, path))))
                status, code, text = client.result(handle)
                if "no /joint_states yet" not in text or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert (status, code) == (GoalStatus.STATUS_SUCCEEDED, 0), text
            assert "retimed to" in text and "(given 0.500 s)" in text, text
            duration = float(text.split("retimed to ")[1].split(" s")[0])
            assert duration > 0.55, text
            fbs = client.goal_feedback(handle)
            assert fbs and max(_t(fb.desired.time_from_start) for fb in fbs) <= duration + 1.0
            t_fb0 = _t(fbs[0].header.stamp) - _t(fbs[0].desired.time_from_start)  # the goal's start
            client.wait_until(t_fb0 + duration + 0.3)
            q, _ = client.window(t_fb0, t_fb0 + duration + 0.3)
            assert len(q) > 100 and _distance_to_path(q, dense) < 0.01, _distance_to_path(q, dense)
            tau = np.array(client.commands[n_cmd:])
            at_limit = (np.abs(tau) >= np.array(limit) * 0.999).mean(axis=0)
            assert (np.abs(tau) <= np.array(limit) + 1e-9).all()  # (the law saturates there)
            # the plan uses 70 % of the limit; the feedback reaches the limit only briefly (2-6 %
            # of the cycles here: at the bang-bang timing's switches); the given timing (3x
            # the torque) would ride it all along and leave the path
            assert at_limit.max() < 0.15 and np.abs(tau[:, 0]).max() > 0.5 * TORSO_LIMIT, at_limit.tolist()

            # ---- a first point at time 0, 0.5 rad away: joined within the velocity limits ----------
            t_before, here = client.latest()
            far = here.copy()
            far[0] -= 0.5
            handle = client.send(client.goal([(0.0, far), (1.0, far)]))
            status, code, text = client.result(handle)
            assert (status, code) == (GoalStatus.STATUS_SUCCEEDED, 0), text
            assert "joined from the current state" in text, text
            t_end = max(_t(fb.header.stamp) for fb in client.goal_feedback(handle))
            client.wait_until(t_end)  # (the recorder may lag the lockstep stream)
            _, qd = client.window(t_before, t_end)
            speed = np.abs(qd).max(axis=0)
            assert (speed <= model.velocity_limit).all() and speed[0] > 0.1, (speed.tolist(),
                                                                             model.velocity_limit.tolist())

            # ---- 10 000 points stamped 0: starts at its first point --------------------------------
            # the arm settles at the reference the last goal left (far): the measured state follows
            # it (sampled during the torso's overshoot after the 0.5 rad join, 'here' was once
            # 0.042 rad past it, and the goal rightly started from the reference, not from there)
            # (and at rest: once within 2e-3 rad of it still at 0.085 rad/s, which the window
            # below then read as the new goal's speed spike)
            deadline = time.monotonic() + 30
            while True:
                with client.lock:
                    _, q_now, qd_now = client.states[-1]
                if np.abs(q_now - far).max() <= 2e-3 and np.abs(qd_now).max() <= 0.01:
                    break
                assert time.monotonic() < deadline, ("the arm did not settle at the reference",
                                                     q_now.tolist(), qd_now.tolist(), far.tolist())
                time.sleep(0.01)
            t_before, here = client.latest()
            times = np.linspace(10.0 / 10_000, 10.0, 10_000)
            ramp = here + np.outer(0.5 - 0.5 * np.cos(np.pi * times / 10.0), np.full(n, 0.05))
            handle = client.send(client.goal(list(zip(times, ramp)), tol=0.05))
            deadline = time.monotonic() + 120
            while not client.goal_feedback(handle):
                assert time.monotonic() < deadline, "no feedback of the 10 000-point goal"
                time.sleep(0.01)
            first = client.goal_feedback(handle)[0]
            # from the current reference (joint_trajectory_controller's semantics), where the arm is
            # (its first feedback may come a cycle or two into the join from the reference to the
            # first point, 1 ms: between the two, never past them; one run in two here once)
            assert _t(first.desired.time_from_start) < 0.05, _t(first.desired.time_from_start)
            assert (np.abs(np.asarray(first.desired.positions) - far)
                    <= np.abs(ramp[0] - far) + 1e-6).all(), (list(first.desired.positions), far, ramp[0])
            np.testing.assert_allclose(first.desired.positions, here, atol=2e-3)
            t_goal = _t(first.header.stamp) - _t(first.desired.time_from_start)
            client.wait_until(t_goal + 2.0)
            client.wait(handle.cancel_goal_async(), 30)
            client.result(handle)
            _, qd = client.window(t_before, t_goal + 2.0)
            ramp_speed = np.pi / 2 * 0.05 / 10.0  # its peak, rad/s
            assert np.abs(qd).max() < 10 * ramp_speed, np.abs(qd).max()  # no jump: no speed spike
        except BaseException:
            for p in procs:
                print(p.output[-6000:])
            raise
        finally:
            if client is not None:
                client.close()
            for p in procs:
                p.stop()

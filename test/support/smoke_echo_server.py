"""A minimal server of a custom rbd_ros_interfaces service, run as its own process by
test_smoke.py: answers /smoke/gravity with efforts = 2 * positions."""
import rclpy
import rclpy.executors

from rbd_ros_interfaces.srv import Gravity


def main() -> None:
    rclpy.init()
    node = rclpy.create_node("smoke_echo_server")

    def handle(request: Gravity.Request, response: Gravity.Response) -> Gravity.Response:
        response.efforts = [2.0 * x for x in request.positions]
        response.success = True
        response.message = f"{len(request.joint_names)} joints from pid"
        return response

    node.create_service(Gravity, "/smoke/gravity", handle)
    print("smoke server ready", flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):  # SIGINT / SIGTERM
        pass
    finally:
        # rclpy's shutdown can hang on a Fast DDS mutex (seen in loaded suite runs: 2 of 3):
        # the product nodes' guard (a C watchdog thread, _exit after 10 s) covers it here too
        from rbd_ros.ros.common import _exit_if_stuck

        _exit_if_stuck()
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


if __name__ == "__main__":
    main()

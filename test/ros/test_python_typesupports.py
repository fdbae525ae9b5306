"""The interface packages that scripts/setup.sh builds with colcon (interfaces_compat/*,
rbd_ros_interfaces) carry only what Python uses: rosidl_generator_c and _py, rosidl_typesupport_c
and its two C type supports (fastrtps_c for rmw_fastrtps_*, introspection_c for rmw_cyclonedds_cpp,
rmw_zenoh_cpp and the dynamic RMWs); the C++ generators are left out to halve the build
(scripts/cmake/python_typesupports_only.cmake, issue 39). Proven here for every message, service
and action of those packages: rosidl_typesupport_c hands out both C type supports by name, as an
RMW asks for them, and introspection_c describes each type as its Python class does (a second
description of the type: the generated Python code, not the C library); every type survives a CDR
round trip through rmw_fastrtps_cpp with every field set to a non-default value; and one topic,
one service and one action goal go through DDS from rclpy."""
from __future__ import annotations

import ctypes
import importlib
import sysconfig
import time
from pathlib import Path

import pytest

VENV = Path(sysconfig.get_paths()["data"])
PACKAGES = ("control_msgs", "tf2_msgs", "rbd_ros_interfaces")
C_TYPESUPPORTS = ("rosidl_typesupport_fastrtps_c", "rosidl_typesupport_introspection_c")


def _built_here(package: str) -> bool:
    """Whether colcon built ``package`` into this venv (not a wheel or a ROS install)."""
    return (VENV / "share/colcon-core/packages" / package).exists()


def _interfaces(package: str) -> list[tuple[str, str]]:
    """``(kind, Name)`` of each interface of ``package``, from its ament index entry."""
    text = (VENV / "share/ament_index/resource_index/rosidl_interfaces" / package).read_text()
    return sorted({tuple(Path(line).with_suffix("").parts) for line in text.split()
                   if line.endswith(".idl")})


def _message_types(package: str) -> list[tuple[str, str]]:
    """``(kind, Class)`` of every message type, the parts of services and actions included."""
    out = []
    for kind, name in _interfaces(package):
        parts = {"msg": [""], "srv": ["_Request", "_Response", "_Event"],
                 "action": ["_Goal", "_Result", "_Feedback", "_FeedbackMessage",
                            "_SendGoal_Request", "_SendGoal_Response",
                            "_GetResult_Request", "_GetResult_Response"]}[kind]
        out += [(kind, name + p) for p in parts]
    return out


def _service_types(package: str) -> list[tuple[str, str]]:
    out = []
    for kind, name in _interfaces(package):
        if kind == "srv":
            out.append((kind, name))
        elif kind == "action":
            out += [(kind, name + "_SendGoal"), (kind, name + "_GetResult")]
    return out


# the Python attribute path of each part of an action (rclpy's names, not the C ones)
_ACTION_PARTS = {"FeedbackMessage": "Impl.FeedbackMessage",
                 "SendGoal_Request": "Impl.SendGoalService.Request",
                 "SendGoal_Response": "Impl.SendGoalService.Response",
                 "GetResult_Request": "Impl.GetResultService.Request",
                 "GetResult_Response": "Impl.GetResultService.Response"}


def _python_class(package: str, kind: str, cls: str):
    head, _, part = cls.partition("_")
    obj = getattr(importlib.import_module(f"{package}.{kind}"), head)
    for attr in (_ACTION_PARTS.get(part, part).split(".") if part else []):
        obj = getattr(obj, attr)
    return obj


CASES = [(p, k, c) for p in PACKAGES for k, c in _message_types(p)]
SERVICES = [(p, k, s) for p in PACKAGES for k, s in _service_types(p)]


class _Handle(ctypes.Structure):  # rosidl_message_type_support_t / rosidl_service_type_support_t
    _fields_ = [("typesupport_identifier", ctypes.c_char_p), ("data", ctypes.c_void_p),
                ("func", ctypes.c_void_p)]


class _Members(ctypes.Structure):  # rosidl_typesupport_introspection_c__MessageMembers (head)
    _fields_ = [("message_namespace_", ctypes.c_char_p), ("message_name_", ctypes.c_char_p),
                ("member_count_", ctypes.c_uint32), ("size_of_", ctypes.c_size_t)]


def _runtime_c():
    lib = ctypes.CDLL(str(VENV / "lib/librosidl_runtime_c.so"))
    for fn in ("get_message_typesupport_handle", "get_service_typesupport_handle"):
        getattr(lib, fn).restype = ctypes.POINTER(_Handle)
        getattr(lib, fn).argtypes = [ctypes.POINTER(_Handle), ctypes.c_char_p]
    return lib


def _typesupport_c_handle(package: str, what: str, kind: str, name: str):
    lib = ctypes.CDLL(str(VENV / f"lib/lib{package}__rosidl_typesupport_c.so"))
    fn = getattr(lib, f"rosidl_typesupport_c__get_{what}_type_support_handle__{package}__{kind}__{name}")
    fn.restype = ctypes.POINTER(_Handle)
    handle = fn()
    assert handle and handle.contents.typesupport_identifier == b"rosidl_typesupport_c"
    return handle


def test_the_built_packages_have_both_c_typesupports():
    built = [p for p in PACKAGES if _built_here(p)]
    assert "rbd_ros_interfaces" in built
    missing = [f"lib{p}__{ts}.so" for p in built for ts in ("rosidl_typesupport_c", *C_TYPESUPPORTS)
               if not (VENV / f"lib/lib{p}__{ts}.so").exists()]
    assert not missing


def _both_c_typesupports(what: str, case: tuple[str, str, str]) -> dict:
    """The handle of each C type support of a ``what`` ("message" or "service") type, asked of
    rosidl_typesupport_c by name as an RMW asks for it (it loads the library on demand)."""
    package, kind, name = case
    lookup = getattr(_runtime_c(), f"get_{what}_typesupport_handle")
    handle = _typesupport_c_handle(package, what, kind, name)
    out = {}
    for ts in C_TYPESUPPORTS:
        inner = lookup(handle, ts.encode())
        assert inner, f"{package}/{kind}/{name}: no {ts} (an RMW that needs it cannot use the type)"
        assert inner.contents.typesupport_identifier == ts.encode()
        out[ts] = inner
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}/{c[1]}/{c[2]}")
def test_each_message_type_has_both_c_typesupports(case):
    package, kind, name = case
    intro = _both_c_typesupports("message", case)["rosidl_typesupport_introspection_c"]
    members = ctypes.cast(intro.contents.data, ctypes.POINTER(_Members)).contents
    fields = _python_class(package, kind, name).get_fields_and_field_types()
    assert members.message_namespace_ == f"{package}__{kind}".encode()
    assert members.message_name_ == name.encode()
    # an empty message has the one placeholder member rosidl adds to every empty structure
    assert members.member_count_ == max(len(fields), 1)


@pytest.mark.parametrize("case", SERVICES, ids=lambda c: f"{c[0]}/{c[1]}/{c[2]}")
def test_each_service_type_has_both_c_typesupports(case):
    assert set(_both_c_typesupports("service", case)) == set(C_TYPESUPPORTS)


_SCALARS = {"boolean": True, "octet": b"\x07", "char": "c", "float": 1.5, "double": -2.25,
            "int8": -3, "uint8": 4, "int16": -5, "uint16": 6, "int32": -7, "uint32": 8,
            "int64": -9, "uint64": 10, "string": "non-default", "wstring": "wide"}


def _value(slot, depth: int):
    """A non-default value of the rosidl field type ``slot`` (a ``rosidl_parser.definition``
    type, the class's ``SLOT_TYPES``), nested messages filled in turn."""
    from rosidl_parser import definition as d

    if isinstance(slot, (d.Array, d.AbstractSequence)):
        n = slot.size if isinstance(slot, d.Array) else min(2, getattr(slot, "maximum_size", 2))
        return [_value(slot.value_type, depth + 1) for _ in range(n)]
    if isinstance(slot, d.AbstractWString):
        return _SCALARS["wstring"]
    if isinstance(slot, d.AbstractString):
        return _SCALARS["string"]
    if isinstance(slot, d.BasicType):
        return _SCALARS[slot.typename.replace("unsigned ", "u").replace("long long", "int64")]
    package, kind = slot.namespaces
    return _filled(_python_class(package, kind, slot.name)(), depth + 1)


def _filled(msg, depth: int = 0):
    """``msg`` with every field set to a non-default value (to depth 4)."""
    if depth > 4:
        return msg
    for field, slot in zip(msg.get_fields_and_field_types(), msg.SLOT_TYPES, strict=True):
        setattr(msg, field, _value(slot, depth))
    return msg


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}/{c[1]}/{c[2]}")
def test_each_message_type_round_trips_through_rmw_fastrtps(case):
    from rclpy.serialization import deserialize_message, serialize_message

    package, kind, name = case
    cls = _python_class(package, kind, name)
    msg = _filled(cls())
    assert msg != cls() or not cls.get_fields_and_field_types()
    back = deserialize_message(serialize_message(msg), cls)
    assert back == msg


@pytest.mark.slow  # DDS discovery
def test_topic_service_and_action_from_rclpy():
    import rclpy
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient, ActionServer
    from rclpy.executors import SingleThreadedExecutor
    from tf2_msgs.msg import TFMessage

    from rbd_ros_interfaces.msg import MdhJoint
    from rbd_ros_interfaces.srv import Gravity
    from ros_helpers import call, ros_context, spin_in_background

    heard: list = []
    with ros_context() as ctx:
        server = rclpy.create_node("typesupport_server", context=ctx)
        client = rclpy.create_node("typesupport_client", context=ctx)
        server.create_subscription(TFMessage, "/typesupport_tf", heard.append, 10)
        server.create_subscription(MdhJoint, "/typesupport_mdh", heard.append, 10)

        def gravity(request, response):
            response.efforts = [2.0 * v for v in request.positions]
            return response

        server.create_service(Gravity, "/typesupport_gravity", gravity)

        def execute(handle):
            feedback = FollowJointTrajectory.Feedback(joint_names=handle.request.trajectory.joint_names)
            handle.publish_feedback(feedback)
            handle.succeed()
            return FollowJointTrajectory.Result(error_code=0, error_string="done " + feedback.joint_names[0])

        ActionServer(server, FollowJointTrajectory, "/typesupport_follow", execute)
        spinner = spin_in_background(server)
        try:
            tf, mdh = _filled(TFMessage()), _filled(MdhJoint())
            pubs = [client.create_publisher(TFMessage, "/typesupport_tf", 10),
                    client.create_publisher(MdhJoint, "/typesupport_mdh", 10)]
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not (tf in heard and mdh in heard):
                pubs[0].publish(tf)
                pubs[1].publish(mdh)
                time.sleep(0.1)
            assert tf in heard and mdh in heard

            srv = client.create_client(Gravity, "/typesupport_gravity")
            assert srv.wait_for_service(timeout_sec=30)
            answer = call(client, srv, Gravity.Request(positions=[0.5, -1.0]))
            assert list(answer.efforts) == [1.0, -2.0]

            action = ActionClient(client, FollowJointTrajectory, "/typesupport_follow")
            assert action.wait_for_server(timeout_sec=30)
            goal = FollowJointTrajectory.Goal()
            goal.trajectory.joint_names = ["j1"]
            feedback: list = []
            future = action.send_goal_async(goal, feedback_callback=feedback.append)
            ex = SingleThreadedExecutor(context=ctx)
            ex.add_node(client)
            try:
                ex.spin_until_future_complete(future, timeout_sec=30)
                assert future.done() and future.result().accepted
                answer = future.result().get_result_async()
                ex.spin_until_future_complete(answer, timeout_sec=30)
                deadline = time.monotonic() + 10  # the feedback may come after the result
                while not feedback and time.monotonic() < deadline:
                    ex.spin_once(timeout_sec=0.1)
            finally:
                ex.shutdown()
            assert answer.done()
            assert answer.result().status == 4  # action_msgs/GoalStatus STATUS_SUCCEEDED
            assert answer.result().result.error_string == "done j1"
            assert feedback and list(feedback[0].feedback.joint_names) == ["j1"]
        finally:
            spinner.shutdown()
            client.destroy_node()
            server.destroy_node()

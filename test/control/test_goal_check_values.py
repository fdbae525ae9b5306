"""The trajectory goal's checks at their boundary values (issue 45: a goal check's mutant was
caught only by the wording of its refusal): each check accepts the goal just inside its bound
and refuses it just outside, with its result code and the offending number; a check moved by
a margin, or turned from ``>`` to ``>=``, fails here whatever it says.

Bounds (``follow_trajectory``): positions within the joint limits to 1e-9; the last point's
velocity at most ``VELOCITY_AT_END`` (joint_trajectory_controller's float32 epsilon); times
strictly increasing (1 ns apart is increasing); a stamped goal ends after ``now``; a stamp at
most ``future_limit`` ahead; a first point at time 0 within ``START_TOLERANCE`` of the
reference (``retime: never``)."""
from __future__ import annotations

import numpy as np
import pytest
from test_follow_trajectory import _goal, _plan

from rbd_ros.control import follow_trajectory as ft

NOW = 10.0  # _plan's control time; the reference holds Q0 = [0, 0.5, 0]


def _refused(goal, code: int, **kw) -> str:
    with pytest.raises(ft.GoalError) as info:
        _plan(goal, **kw)
    assert info.value.code == code, (info.value.code, str(info.value))
    return str(info.value)


@pytest.mark.parametrize("limit, side", [(1.0, 1.0), (-1.0, -1.0)])
def test_position_limit_to_a_nanoradian(limit: float, side: float) -> None:
    inside = _goal(["a"], [(1.0, [limit + side * 0.9e-9], [0.0], [0.0])])
    assert _plan(inside).spline is not None
    outside = limit + side * 1.1e-9
    text = _refused(_goal(["a"], [(1.0, [outside], [0.0], [0.0])]), ft.INVALID_GOAL)
    assert "point 0" in text and "of a is outside its limits [-1, 1]" in text
    far = limit + side * 0.25
    text = _refused(_goal(["a"], [(1.0, [0.0], [0.0], [0.0]), (2.0, [far], [0.0], [0.0])]), ft.INVALID_GOAL)
    assert f"point 1: position {far:.6g} of a" in text  # the point and the value refused


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_last_point_at_rest_to_float32_epsilon(sign: float) -> None:
    eps = ft.VELOCITY_AT_END
    assert eps == float(np.finfo(np.float32).eps)
    assert _plan(_goal(["b"], [(1.0, [0.6], [sign * eps])])).spline is not None
    text = _refused(_goal(["b"], [(1.0, [0.6], [sign * 2 * eps])]), ft.INVALID_GOAL)
    assert f"velocity of b is {sign * 2 * eps:.6g}" in text


def test_times_one_nanosecond_apart_are_increasing() -> None:
    assert _plan(_goal(["a"], [(1.0, [0.1]), (1.000000001, [0.1])])).spline is not None
    text = _refused(_goal(["a"], [(1.0, [0.1]), (1.0, [0.2])]), ft.INVALID_GOAL)
    assert "points 0 and 1" in text and "1 s then 1 s" in text


def test_a_stamped_goal_must_end_after_now() -> None:
    text = _refused(_goal(["a"], [(1.0, [0.1])], stamp=NOW - 1.0), ft.OLD_HEADER_TIMESTAMP)  # ends at now
    assert f"ends at {NOW:.6f} s" in text
    ex = _plan(_goal(["a"], [(1.001, [0.0])], stamp=NOW - 1.0))  # ends 1 ms after now (where a is)
    assert ex.spline.end_time == pytest.approx(NOW + 0.001, abs=1e-9)


def test_future_stamp_limit() -> None:
    assert _plan(_goal(["a"], [(1.0, [0.1])], stamp=NOW + 100.0), future_limit=100.0).spline is not None
    text = _refused(_goal(["a"], [(1.0, [0.1])], stamp=NOW + 100.5), ft.INVALID_GOAL, future_limit=100.0)
    assert "100 s after now" in text  # the 100.5 s rounded: the value, not only the words
    assert _plan(_goal(["a"], [(1.0, [0.1])], stamp=NOW + 3000.0)).spline is not None  # default: an hour


def test_first_point_at_time_zero_within_the_start_tolerance() -> None:
    tol = ft.START_TOLERANCE
    near = _goal(["b"], [(0.0, [0.5 + 0.9 * tol]), (1.0, [0.6])])
    assert _plan(near, retime="never").spline is not None
    text = _refused(_goal(["b"], [(0.0, [0.5 + 1.1 * tol]), (1.0, [0.6])]), ft.INVALID_GOAL, retime="never")
    assert f"but {1.1 * tol:.6g} from the current reference of b (start tolerance {tol:g})" in text


def test_first_time_from_start_not_negative() -> None:
    assert _plan(_goal(["a"], [(0.0, [0.0]), (1.0, [0.1])])).spline is not None  # 0: where the arm is
    text = _refused(_goal(["a"], [(-0.001, [0.0]), (1.0, [0.1])]), ft.INVALID_GOAL)
    assert "point 0: time_from_start -0.001 s is negative" in text


def test_minus_one_erases_to_float32_epsilon_only() -> None:
    eps = ft.VELOCITY_AT_END
    assert ft.resolve_tolerance(0.1, -1.0 + 0.5 * eps, "x") == 0.0  # -1: no tolerance
    for value in (-1.0 + 2 * eps, -1.0 - 2 * eps, -0.6, -1.4):
        with pytest.raises(ft.GoalError) as info:
            ft.resolve_tolerance(0.1, value, "path_tolerance of a")
        assert info.value.code == ft.INVALID_GOAL and f"is {value}" in str(info.value)

"""``DynamicsClient.urdf_link_poses(q, "tool0")``: a single string where the link names go is
refused naming it and the fix, before any request (before: sent as the links 't', 'o', 'o',
'l', '0', and the server's refusal named the link 't')."""
from __future__ import annotations

import pytest


def test_a_string_for_links_is_refused_with_the_fix() -> None:
    from rbd_ros.ros.client import DynamicsClient

    client = object.__new__(DynamicsClient)  # no node: the check comes before any request
    client._names = lambda names: pytest.fail("a request was being built")
    with pytest.raises(TypeError, match=r"links must be a list of URDF link names, got the "
                                        r"string 'tool0': use \['tool0'\]"):
        client.urdf_link_poses([0.0] * 6, "tool0")

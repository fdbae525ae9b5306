"""Kernels compiled for one signature on first use (``rbd_ros.algorithm.first_use``, issue 39).

Before, the thirteen checked entry points of ``algorithm.checked``, ``floating_base`` and
``planar_base`` were compiled when their modules were imported: a fixed-base controller paid
for the floating and ground bases' (70 s of an 86 s cold start).  Importing every robot front
must now compile nothing; a call compiles its own entry point only, and afterwards the fast
path calls the compiled function itself (the stand-in is gone from the module's globals).
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading

import numpy as np
import pytest

from rbd_ros.algorithm.first_use import OneSignature, on_first_call, one_signature

_PROBE = r"""
import json, sys
import rbd_ros.robot.arm, rbd_ros.robot.floating, rbd_ros.robot.mobile  # every front's entry points
from numba.core.dispatcher import Dispatcher
from rbd_ros.algorithm.first_use import OneSignature

def state():
    compiled, lazy = set(), {}
    for name, mod in list(sys.modules.items()):
        if name.startswith("rbd_ros"):
            for attr, value in vars(mod).items():
                if isinstance(value, Dispatcher) and value.overloads:
                    compiled.add(f"{name}.{attr}")
                if isinstance(value, OneSignature):
                    lazy[f"{name}.{attr}"] = value.compiled
    return {"compiled": sorted(compiled), "lazy": lazy}

imported = state()
import numpy as np
from rbd_ros.robot import Robot
from rbd_ros.util.resources import bundled_urdf
Robot.from_urdf(str(bundled_urdf("puma560"))).inverse_dynamics(np.full(6, 0.3), np.zeros(6), np.ones(6))
print(json.dumps({"imported": imported, "called": state()}))
"""


@pytest.fixture(scope="module")
def probe() -> dict:
    """What a fresh process has compiled after importing every robot front, and after one
    ``inverse_dynamics``."""
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # a fresh process (and, after an edit of a kernel module, its compilation)
def test_importing_every_robot_front_compiles_no_kernel(probe) -> None:
    found = probe["imported"]
    assert found["compiled"] == [], f"compiled at import: {found['compiled']}"
    assert {"rbd_ros.algorithm.checked.rnea_checked", "rbd_ros.algorithm.floating_base.aba_floating_checked",
            "rbd_ros.algorithm.planar_base.aba_diff_drive_checked"} <= set(found["lazy"])
    assert not any(found["lazy"].values())


@pytest.mark.slow
def test_a_call_compiles_its_own_entry_point_only(probe) -> None:
    lazy = probe["called"]["lazy"]
    assert lazy["rbd_ros.algorithm.checked.rnea_checked"]
    assert [n for n, done in lazy.items() if done] == ["rbd_ros.algorithm.checked.rnea_checked"]


@pytest.mark.slow
def test_the_stand_in_gives_way_to_the_compiled_entry_point() -> None:
    from rbd_ros.algorithm import checked, first_use
    from rbd_ros.robot import Robot, arm
    from rbd_ros.util.resources import bundled_urdf

    pin = pytest.importorskip("pinocchio")
    r = Robot.from_urdf(str(bundled_urdf("puma560")))
    q, v, a = np.full(6, 0.3), np.full(6, -0.2), np.ones(6)
    tau = r.inverse_dynamics(q, v, a)
    assert arm._gravity_checked is not None
    r.gravity(q)
    assert arm._rnea_checked is first_use.entry(checked.rnea_checked)  # no stand-in any more
    assert arm._gravity_checked is first_use.entry(checked.gravity_checked)
    model = pin.buildModelFromUrdf(str(bundled_urdf("puma560")))
    model.gravity.linear = np.array(r.model.gravity)
    data = model.createData()
    assert np.allclose(tau, pin.rnea(model, data, q, v, a), atol=1e-9)  # the oracle
    assert np.allclose(r.gravity(q), pin.computeGeneralizedGravity(model, data, q), atol=1e-9)


def test_one_signature_compiles_once_across_threads() -> None:
    calls = []

    def add(x, y):
        return x + y

    kernel = one_signature("float64(float64, float64)")(add)
    assert isinstance(kernel, OneSignature) and not kernel.compiled and kernel.__name__ == "add"
    namespace: dict = {}
    namespace["add"] = on_first_call(kernel, namespace, "add")
    stand_in = namespace["add"]
    barrier = threading.Barrier(4)

    def run() -> None:
        barrier.wait()
        calls.append(stand_in(1.5, 2.0))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [3.5] * 4
    assert kernel.compiled and len(kernel.dispatcher().signatures) == 1
    assert namespace["add"] is not stand_in and namespace["add"](2.0, 2.0) == 4.0
    with pytest.raises(TypeError):  # one signature: no new specialisation for other types
        kernel.dispatcher()("a", "b")

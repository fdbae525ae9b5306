"""The laws' registry is explicit (issue 40 item 4): ``laws.LAW_CLASSES`` names every law of
``LAWS``, the force laws by ``"module:Class"``; importing ``rbd_ros.control`` registers nothing
and imports no force law, and ``make_law`` builds each law as the class its module defines."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest


def test_importing_the_laws_registers_and_imports_nothing_else() -> None:
    code = ("import json, sys\nimport rbd_ros.control.laws as laws\n"
            "print(json.dumps({'loaded': 'rbd_ros.control.force_laws' in sys.modules, "
            "'names': list(laws.LAW_CLASSES), 'laws': list(laws.LAWS)}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["loaded"] is False, got  # no side effect: the force laws load when first built
    assert got["names"] == got["laws"], got  # one entry per law, in LAWS' order


@pytest.mark.parametrize("name, cls", [("impedance", "Impedance"), ("hybrid_force_position", "HybridForcePosition"),
                                       ("admittance", "Admittance"), ("pd_gravity", "PDGravity")])
def test_each_name_is_the_class_its_module_defines(name: str, cls: str) -> None:
    from rbd_ros.control import force_laws, laws

    module = force_laws if hasattr(force_laws, cls) else laws
    assert laws.law_class(name) is getattr(module, cls)


def test_an_unknown_law_is_refused_naming_the_laws() -> None:
    from rbd_ros.control import laws

    with pytest.raises(ValueError, match="unknown controller type 'impedence'; use one of pd, pid, .*admittance"):
        laws.law_class("impedence")

"""A flag given in its deprecated and its new spelling with different values (bringup's
``--base`` / ``--base-type``, ``--tip`` / ``--tip-link``; urdf2mdh's ``--base`` /
``--base-link``; sweep's ``--out`` / ``--output``) is refused with one line naming both, in
either order (before: the last one won, silently but for the deprecation line); the same
value twice is accepted, and one spelling repeated keeps argparse's rule (the last wins)."""
from __future__ import annotations

import pytest


def _bringup(argv):
    from rbd_ros.ros.bringup.cli import parse_args

    return parse_args(["--urdf", "x.urdf", *argv])


def _urdf2mdh(argv):
    """The parsed flags; refused: urdf2mdh's own exit (its parser raises, ``main`` prints)."""
    from rbd_ros.urdf.cli import _parser, main
    from rbd_ros.urdf.errors import UrdfError

    try:
        return _parser().parse_args(["x.urdf", *argv])
    except UrdfError:
        raise SystemExit(main(["x.urdf", *argv])) from None


def _sweep(argv):
    from rbd_ros.sweep.cli import parser

    return parser().parse_known_args(argv)[0]


@pytest.mark.parametrize("parse, old, new, a, b", [
    (_bringup, "--base", "--base-type", "planar", "fixed"),
    (_bringup, "--tip", "--tip-link", "tool0", "ee_link"),
    (_urdf2mdh, "--base", "--base-link", "base_link", "world"),
    (_sweep, "--out", "--output", "o1", "o2")])
def test_both_spellings_disagreeing_are_refused_naming_both(capsys, parse, old, new, a, b) -> None:
    for argv in ([old, a, new, b], [new, b, old, a]):
        with pytest.raises(SystemExit) as exit_:
            parse(argv)
        assert exit_.value.code in (1, 2)
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert f"{old} {a}" in last and f"{new} {b}" in last and last.endswith(f"give only {new}"), last
    dest = {"--base-type": "base", "--tip-link": "tip_link", "--base-link": "base_link",
            "--output": "output"}[new]
    assert getattr(parse([old, a, new, a]), dest) == a  # the same value: accepted
    assert getattr(parse([new, a, new, b]), dest) == b  # one spelling twice: the last

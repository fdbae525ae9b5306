"""One flag vocabulary for every ``rbd-ros`` subcommand (issue 29): the chain's ends are
``--base-link LINK`` and ``--tip-link LINK``, a moving base's kind ``--base-type TYPE``.

The older spellings (``--base LINK`` and ``--tip LINK`` of urdf2mdh and formulations,
``--base TYPE`` of bringup) are kept for one release: they still work and print one line on
stderr naming the new spelling.  Imports nothing of ``rbd_ros``.
"""
from __future__ import annotations

import argparse
import sys
import weakref


class DeprecatedFlag(argparse.Action):
    """An old spelling of a flag: stores into the new flag's ``dest`` and prints
    ``PROG: OLD is deprecated, use NEW (OLD goes in the next release)`` on stderr; given with
    the new spelling (``NewSpelling``) and another value, in either order, it is an error
    naming both (not the last one winning)."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"{parser.prog}: {option_string} is deprecated, use {self.new} "
              f"({option_string} goes in the next release)", file=sys.stderr, flush=True)
        _one_value(parser, namespace, self.dest, f"{option_string} {values}", values, self.new)
        setattr(namespace, self.dest, values)


class NewSpelling(argparse.Action):
    """The ``store`` action of a flag that has a deprecated spelling (``add_deprecated``):
    both given with different values is an error naming both."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        _one_value(parser, namespace, self.dest, f"{option_string} {values}", values, option_string)
        setattr(namespace, self.dest, values)


_GIVEN: dict[int, tuple[weakref.ref, dict[str, tuple[str, object]]]] = {}  # per namespace


def _one_value(parser, namespace, dest: str, given: str, value, new: str) -> None:
    """``parser.error`` when ``dest`` was already given another value by another spelling in
    this parse (``namespace``)."""
    key = id(namespace)
    entry = _GIVEN.get(key)
    if entry is None or entry[0]() is not namespace:
        def forget(_: weakref.ref, k: int = key) -> None:  # the namespace is gone: its entry too
            _GIVEN.pop(k, None)

        entry = _GIVEN[key] = (weakref.ref(namespace, forget), {})
    before = entry[1].get(dest)
    if before is not None and before[1] != value and before[0].split()[0] != given.split()[0]:
        parser.error(f"{before[0]} and {given} are one flag, given twice with different values "
                     f"(the other spelling is deprecated): give only {new}")
    entry[1][dest] = (given, value)


def add_deprecated(parser: argparse.ArgumentParser, old: str, new: str, dest: str, **kwargs) -> None:
    """``old`` as a hidden, deprecated spelling of the flag ``new`` (same ``dest``; ``new``
    declared with ``action=NewSpelling``, so that both given differently is an error)."""
    parser.add_argument(old, dest=dest, action=DeprecatedFlag, new=new, help=argparse.SUPPRESS,
                        default=argparse.SUPPRESS, **kwargs)


def add_chain_flags(parser: argparse.ArgumentParser, default: str | None = None,
                    old_base_link: bool = True) -> None:
    """``--base-link LINK`` and ``--tip-link LINK`` (dest ``base_link``, ``tip_link``), with
    the deprecated ``--tip`` (and ``--base`` as a link, unless ``old_base_link`` is False:
    bringup's ``--base`` was the base type)."""
    parser.add_argument("--base-link", metavar="LINK", default=default, action=NewSpelling,
                        help="first link of the chain (the world frame); default the URDF root")
    parser.add_argument("--tip-link", metavar="LINK", default=default, action=NewSpelling,
                        help="last link of the chain; inferred for an unbranched robot")
    if old_base_link:
        add_deprecated(parser, "--base", "--base-link", "base_link", metavar="LINK")
    add_deprecated(parser, "--tip", "--tip-link", "tip_link", metavar="LINK")

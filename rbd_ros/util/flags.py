"""One flag vocabulary for every ``rbd-ros`` subcommand (issue 29): the chain's ends are
``--base-link LINK`` and ``--tip-link LINK``, a moving base's kind ``--base-type TYPE``.

The older spellings (``--base LINK`` and ``--tip LINK`` of urdf2mdh and formulations,
``--base TYPE`` of bringup) are kept for one release: they still work and print one line on
stderr naming the new spelling.  Imports nothing of ``rbd_ros``.
"""
from __future__ import annotations

import argparse
import sys


class DeprecatedFlag(argparse.Action):
    """An old spelling of a flag: stores into the new flag's ``dest`` and prints
    ``PROG: OLD is deprecated, use NEW (OLD goes in the next release)`` on stderr."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs) -> None:  # noqa: ANN001
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # noqa: ANN001
        print(f"{parser.prog}: {option_string} is deprecated, use {self.new} "
              f"({option_string} goes in the next release)", file=sys.stderr, flush=True)
        setattr(namespace, self.dest, values)


def add_deprecated(parser: argparse.ArgumentParser, old: str, new: str, dest: str, **kwargs) -> None:
    """``old`` as a hidden, deprecated spelling of the flag ``new`` (same ``dest``)."""
    parser.add_argument(old, dest=dest, action=DeprecatedFlag, new=new, help=argparse.SUPPRESS,
                        default=argparse.SUPPRESS, **kwargs)


def add_chain_flags(parser: argparse.ArgumentParser, default: str | None = None,
                    old_base_link: bool = True) -> None:
    """``--base-link LINK`` and ``--tip-link LINK`` (dest ``base_link``, ``tip_link``), with
    the deprecated ``--tip`` (and ``--base`` as a link, unless ``old_base_link`` is False:
    bringup's ``--base`` was the base type)."""
    parser.add_argument("--base-link", metavar="LINK", default=default,
                        help="first link of the chain (the world frame); default the URDF root")
    parser.add_argument("--tip-link", metavar="LINK", default=default,
                        help="last link of the chain; inferred for an unbranched robot")
    if old_base_link:
        add_deprecated(parser, "--base", "--base-link", "base_link", metavar="LINK")
    add_deprecated(parser, "--tip", "--tip-link", "tip_link", metavar="LINK")

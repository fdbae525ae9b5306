"""``rbd-ros urdf2mdh``: print a URDF/xacro robot's modified-DH table, write a YAML model.

    rbd-ros urdf2mdh ROBOT.urdf[.xacro] [--base-link L] [--tip-link L] [--lock J=val ...]
                     [--xacro-arg k:=v ...] [--format table|yaml|json] [-o model.yaml]
                     [--base-type fixed|floating|planar|diff_drive] [--wheels LEFT RIGHT]

``--base-type`` puts the chain on a moving base (``Robot.from_urdf``'s ``base_type``; a
``diff_drive`` base's wheels found in the URDF or named with ``--wheels``), so ``-o`` writes a
model file the bridge and bringup read (``model_yaml``).

The table lists Craig's parameters a_{i-1}, alpha_{i-1}, d_i, theta_i (offset; radians)
of 003 §1.6 with joint type, limits and the relation of each axis to
the next.  ``-o`` writes the YAML that ``MdhModel.from_yaml`` / ``Robot.from_yaml`` read
back identically.  Bad input exits non-zero with one line ``rbd-ros urdf2mdh: error: ...``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import warnings

import numpy as np

from rbd_ros.model import BASE_TYPES, JOINT_TYPE_NAMES
from rbd_ros.urdf.convert import UrdfConversion, load_conversion
from rbd_ros.urdf.errors import UrdfError
from rbd_ros.util.flags import add_chain_flags

PROG = "rbd-ros urdf2mdh"


class _Parser(argparse.ArgumentParser):
    """argparse that reports one line and raises instead of exiting."""

    def error(self, message: str):  # type: ignore[override]
        raise UrdfError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Convert a URDF/xacro robot to a modified-DH (Craig) model.")
    p.add_argument("source", help="robot .urdf or .xacro file")
    add_chain_flags(p)  # --base-link, --tip-link (--base, --tip: deprecated)
    p.add_argument("--lock", metavar="JOINT=VALUE", action="append", default=[],
                   help="freeze a joint at a position (repeatable)")
    p.add_argument("--xacro-arg", metavar="NAME:=VALUE", action="append", default=[],
                   help="xacro argument (repeatable)")
    p.add_argument("--gravity", metavar="G", nargs=3, type=float, default=[0.0, 0.0, -9.81],
                   help="gravity in the base frame (default 0 0 -9.81)")
    p.add_argument("--base-type", choices=BASE_TYPES, default="fixed",
                   help="root joint of the base link (default fixed: the world)")
    p.add_argument("--wheels", metavar=("LEFT", "RIGHT"), nargs=2,
                   help="diff_drive: the drive wheel joints (default: found in the URDF)")
    p.add_argument("--keep-inertia", action="store_true",
                   help="keep a physically impossible link inertia as the URDF gives it (the raw URDF, "
                        "for a comparison with other tools; MuJoCo refuses it) instead of the nearest "
                        "physical one")
    p.add_argument("--format", choices=("table", "yaml", "json"), default="table", help="what to print")
    p.add_argument("-o", "--output", metavar="MODEL.yaml", help="write the YAML model here")
    return p


def _pairs(items: list[str], seps: tuple[str, ...], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        for sep in seps:
            if sep in item:
                key, value = item.split(sep, 1)
                break
        else:
            raise UrdfError(f"{what} '{item}' is not of the form NAME{seps[0]}VALUE")
        if not key:
            raise UrdfError(f"{what} '{item}' has an empty name")
        out[key] = value
    return out


def _locks(items: list[str]) -> dict[str, float]:
    out = {}
    for key, value in _pairs(items, ("=",), "--lock").items():
        try:
            out[key] = float(value)
        except ValueError:
            raise UrdfError(f"--lock {key}={value}: '{value}' is not a number") from None
    return out


def _finite(obj):
    """Strict JSON: infinite limits become the strings "inf"/"-inf" (``from_dict`` reads them)."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    if isinstance(obj, float) and math.isinf(obj):
        return "inf" if obj > 0 else "-inf"
    return obj


def _num(x: float) -> str:
    return ("-inf" if x < 0 else "inf") if math.isinf(x) else f"{x:.6g}"


def format_table(conv: UrdfConversion) -> str:
    """Human-readable MDH table with limits, axis cases, base and tool transforms."""
    m = conv.model
    head = ("i", "joint", "type", "a[i-1]", "alpha[i-1]", "d[i]", "theta[i]", "lower", "upper",
            "velocity", "effort", "axis->next")
    rows = []
    for i in range(m.dof):
        rows.append((str(i + 1), m.joint_names[i], JOINT_TYPE_NAMES[int(m.joint_type[i])],
                     *(_num(float(v[i])) for v in (m.a, m.alpha, m.d, m.theta, m.lower, m.upper,
                                                   m.velocity_limit, m.effort_limit)),
                     conv.cases[i] if i < len(conv.cases) else "-"))
    widths = [max(len(r[k]) for r in [head, *rows]) for k in range(len(head))]
    lines = [f"robot '{m.name}': {m.dof} joints, base_link '{m.base_link}' -> tip_link '{m.tip_link}' "
             f"(Craig modified DH; lengths m, angles rad; q adds to theta / d)"]
    lines += ["  ".join(c.rjust(w) if k >= 3 else c.ljust(w) for k, (c, w) in enumerate(zip(r, widths)))
              for r in (head, *rows)]
    with np.printoptions(precision=6, suppress=True):
        lines.append("base (base_link -> frame 0):\n" + str(np.round(m.base, 12) + 0.0))
        lines.append(f"tool (frame {m.dof} -> {m.tip_link}):\n" + str(np.round(m.tool, 12) + 0.0))
    if m.base_type != "fixed":
        lines.append(f"base: {m.base_type}, {m.base_mass:.6g} kg" + (
            f"; wheels {m.wheel_joints[0]}, {m.wheel_joints[1]}: radius {m.wheel_radius:.6g} m, separation "
            f"{m.wheel_separation:.6g} m, {len(m.casters)} casters" if m.base_type == "diff_drive" else ""))
    if conv.positions:
        lines.append("locked: " + ", ".join(f"{k}={v:g}" for k, v in conv.positions.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``rbd-ros urdf2mdh`` (see module docstring); returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if any(a in ("-h", "--help") for a in argv):
            _parser().print_help()
            return 0
        args = _parser().parse_args(argv)
        with warnings.catch_warnings():  # conv.warnings and conv.model.inertia_notes hold them
            warnings.simplefilter("ignore")  # (printed below as lines of their own)
            conv = load_conversion(args.source, base_link=args.base_link, tip_link=args.tip_link,
                                   locked_joints=_locks(args.lock),
                                   xacro_args=_pairs(args.xacro_arg, (":=", "="), "--xacro-arg"),
                                   gravity=args.gravity, base_type=args.base_type,
                                   wheels=dict(zip(("left", "right"), args.wheels)) if args.wheels else None,
                                   keep_inertia=args.keep_inertia)
        if args.output:
            try:
                conv.model.to_yaml(args.output)
            except OSError as exc:
                raise UrdfError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    except ValueError as exc:  # UrdfError, or the model refusing a value (gravity NaN ...)
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    if args.format == "yaml":
        print(conv.model.to_yaml(), end="")
    elif args.format == "json":
        print(json.dumps(_finite(conv.model.to_dict()), indent=1, allow_nan=False))
    else:
        print(format_table(conv))
    for note in (*conv.warnings, *conv.model.inertia_notes):
        print(f"{PROG}: warning: {note}", file=sys.stderr)
    if args.output:
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""RIHS01 type hashes of interface definitions, computed the way rosidl computes them.

``rihs01(package, "msg/Name.msg", text)`` runs rosidl's own pipeline on a definition given as
text (the upstream file, pinned in a test): rosidl_adapter turns it into IDL and
rosidl_generator_type_description hashes it, with the type descriptions of the packages it
refers to taken from the installed ones (``share/<pkg>/**/*.json``, found on AMENT_PREFIX_PATH).
Independent of any build of the package itself: the oracle for interfaces_compat/."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path


def _share_dirs() -> dict[str, Path]:
    """Every installed package's share/<pkg> folder, first prefix on AMENT_PREFIX_PATH wins."""
    found: dict[str, Path] = {}
    prefixes = os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) + [sys.prefix]
    for prefix in filter(None, prefixes):
        share = Path(prefix) / "share"
        if share.is_dir():
            for pkg in share.iterdir():
                found.setdefault(pkg.name, pkg)
    return found


def rihs01(package: str, rel_path: str, text: str, siblings: dict[str, str] | None = None) -> str:
    """The RIHS01 hash of ``package/rel_path`` (e.g. "msg/TFMessage.msg") defined by ``text``;
    ``siblings``: {rel_path: text} of the package's other definitions it refers to (an action
    using the package's own messages), hashed in the same run."""
    from rosidl_adapter.action import convert_action_to_idl
    from rosidl_adapter.msg import convert_msg_to_idl
    from rosidl_adapter.srv import convert_srv_to_idl
    from rosidl_generator_type_description import generate_type_hash

    converters = {".msg": convert_msg_to_idl, ".srv": convert_srv_to_idl,
                  ".action": convert_action_to_idl}
    with tempfile.TemporaryDirectory() as tmp:
        pkg_dir = Path(tmp) / "src" / package
        idl_dir = Path(tmp) / "idl"
        idl_tuples = []
        for rel, body in {**(siblings or {}), rel_path: text}.items():
            source = pkg_dir / rel
            source.parent.mkdir(parents=True, exist_ok=True)
            source.write_text(body)
            idl = converters[Path(rel).suffix](pkg_dir, package, Path(rel), idl_dir / Path(rel).parent)
            idl_tuples.append(f"{idl_dir}:{idl.relative_to(idl_dir)}")
        out = Path(tmp) / "out"
        args = {
            "package_name": package,
            "output_dir": str(out),
            "idl_tuples": idl_tuples,
            "include_paths": [f"{name}:{path}" for name, path in _share_dirs().items()
                              if name != package],
        }
        args_file = Path(tmp) / "args.json"
        args_file.write_text(json.dumps(args))
        generated = generate_type_hash(str(args_file))
        stem = Path(rel_path).stem
        top = f"{package}/{Path(rel_path).parent}/{stem}"
        for path in generated:
            for entry in json.loads(Path(path).read_text())["type_hashes"]:
                if entry["type_name"] == top:
                    return entry["hash_string"]
    raise LookupError(f"rosidl produced no hash for {top}")

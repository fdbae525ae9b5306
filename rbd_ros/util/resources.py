"""Where the bundled robots and configuration live (ROS-free).

In a source checkout or editable install they sit beside the package (``urdf/``,
``config/``, ``launch/``); in an ament install they are in ``share/rbd_ros``.
"""
from __future__ import annotations

from pathlib import Path

DEFAULT_ROBOT = "puma560"


def share_dir() -> Path:
    """The folder holding ``urdf/``, ``config/`` and ``launch/``."""
    source = Path(__file__).resolve().parents[2]
    if (source / "urdf").is_dir() and (source / "package.xml").is_file():
        return source
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory("rbd_ros"))
    except Exception as exc:  # any failure means "not installed"
        raise FileNotFoundError("rbd_ros share directory not found (no urdf/ beside the package "
                                "and no ament install)") from exc


def bundled_robots() -> list[str]:
    """Names of the bundled robots (``urdf/NAME.urdf``)."""
    return sorted(p.stem for p in (share_dir() / "urdf").glob("*.urdf"))


def bundled_urdf(name: str = DEFAULT_ROBOT) -> Path:
    path = share_dir() / "urdf" / f"{name}.urdf"
    if not path.is_file():
        raise FileNotFoundError(f"no bundled robot '{name}'; bundled: {', '.join(bundled_robots())}")
    return path


def config_file(name: str) -> Path:
    """``config/NAME.yaml``."""
    path = share_dir() / "config" / f"{name}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"no config file {path}")
    return path

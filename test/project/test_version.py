"""One version: ``setup.py``'s, ``package.xml``'s, ``rbd_ros.__version__`` and the newest
section of CHANGELOG.rst (a release per section, ``X.Y.Z (YYYY-MM-DD)``) say the same."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import rbd_ros

REPO = Path(__file__).resolve().parents[2]


def test_setup_package_xml_module_and_changelog_agree() -> None:
    setup = re.search(r'version="([^"]+)"', (REPO / "setup.py").read_text()).group(1)
    package = ET.parse(REPO / "package.xml").getroot().findtext("version")
    sections = re.findall(r"^(\d+\.\d+\.\d+) \((\d{4}-\d{2}-\d{2}|unreleased)\)\n-+$",
                          (REPO / "CHANGELOG.rst").read_text(), re.M)
    assert sections, "CHANGELOG.rst has no 'X.Y.Z (date)' section"
    assert setup == package == rbd_ros.__version__ == sections[0][0], (
        setup, package, rbd_ros.__version__, sections[0])
    versions = [tuple(map(int, v.split("."))) for v, _ in sections]
    assert versions == sorted(versions, reverse=True), "CHANGELOG sections newest first"

"""Sphinx configuration of rbd_ros's documentation (``make docs``): MyST Markdown pages, the
furo theme and the API reference from the docstrings (autodoc), as rosdoc2 builds ROS 2
packages' documentation.  The core needs no ROS: the API pages document ROS-free modules only."""
from __future__ import annotations

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)

project = "rbd_ros"
author = "rbd_ros contributors"
copyright = "rbd_ros contributors"  # noqa: A001
release = "0.1.0"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
html_theme = "furo"
html_title = "rbd_ros"
exclude_patterns = ["_build"]
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_typehints = "description"
# docstrings name other objects in ``literal`` form, not as cross-references
nitpicky = False

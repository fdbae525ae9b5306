"""Sphinx configuration of rbd_ros's documentation (``make docs``): MyST Markdown pages, the
furo theme and the API reference from the docstrings (autodoc), as rosdoc2 builds ROS 2
packages' documentation.  The core needs no ROS: the API pages document ROS-free modules only."""
from __future__ import annotations

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))  # memo_python_lookup

project = "rbd_ros"
author = "rbd_ros contributors"
copyright = "rbd_ros contributors"
release = "0.1.0"

# memo_python_lookup (docs/_ext): the Python domain's lookups computed once each (its docstring)
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode",
              "memo_python_lookup"]
# ``make docs-fast`` (RBD_DOCS_FAST=1): the same pages, text and API reference, without the two
# costs that grow with the package (measured, docs/guides/performance-notes.md "The documentation
# build"): viewcode's highlighted source pages (one per module, each also given furo's whole
# navigation tree) and the per-function entries of the "On this page" panel
# (``toc_object_entries``: furo copies the site's toctree, those ~5,000 nodes included, for every
# page).  The full site is ``make docs``.
FAST = os.environ.get("RBD_DOCS_FAST", "") not in ("", "0")
if FAST:
    extensions.remove("sphinx.ext.viewcode")
    toc_object_entries = False
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
# the only cross-references are autodoc's type hints: a builtin there (``-> type``) is looked up
# among the package's attributes of that name (``JointInfo.type``, ``GripperJoint.type``), and two
# of them are "more than one target found", a warning about a link nobody wrote
suppress_warnings = ["ref.python"]

"""The one exception the URDF converter raises for bad input."""
from __future__ import annotations


class UrdfError(ValueError):
    """A URDF/xacro description cannot be converted; the message names the culprit.

    Subclasses ``ValueError`` so callers that already catch bad-value errors keep working.
    """

"""The ground floor, imported by every other: ``validate`` (one rule per kind of argument, the
result checks and their errors) and ``resources`` (where the bundled robots and configuration
live).  Imports nothing else of ``rbd_ros``."""

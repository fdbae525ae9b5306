"""YAML read in one place, through libyaml when PyYAML has it (``CSafeLoader``): the same data
as PyYAML's pure-Python ``safe_load`` (the safe schema either way), ~8-10x faster.  Each node
process reads its parameter schema, the robot's config and the controllers' defaults at
start-up: ~80 ms of pure-Python parsing per process (the controller's and the bridge's schemas
37 ms each), ~8 ms through libyaml (issue 39).  Writing stays PyYAML's own ``safe_dump``: its
text is what the tests and users have seen (libyaml's emitter wraps and quotes differently).
Errors are ``yaml.YAMLError`` as before, with the line and column of the problem."""
from __future__ import annotations

from typing import Any

import yaml

#: libyaml's loader when PyYAML was built with it, else the pure-Python one
SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(stream: Any) -> Any:
    """``yaml.safe_load`` (the safe schema: plain data only), through libyaml when present."""
    return yaml.load(stream, Loader=SafeLoader)

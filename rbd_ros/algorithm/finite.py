"""One compiled finiteness test for the checks of ``rbd_ros.validate`` (apart from it, so that
``import rbd_ros`` does not import numba)."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def all_finite(a: np.ndarray) -> bool:
    """No NaN or Inf in ``a`` (any shape): one compiled loop, ~0.2 us per call against ~1 us
    for ``np.isfinite(a).all()`` on a small array."""
    for v in a.flat:
        if not np.isfinite(v):
            return False
    return True

"""The modified-DH link transform, the one formula every frame in rbd_ros comes from.

003 §1.6 (Craig's convention; misprint 003 (4.40), docs/references.md)::

    ^{i-1}T_i = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)

              [ c_t        -s_t        0       a        ]
            = [ s_t c_a     c_t c_a   -s_a    -d s_a    ]
              [ s_t s_a     c_t s_a    c_a     d c_a    ]
              [ 0           0          0       1        ]

Jitted so kernels inline it; also callable from Python (the converter and exporter use it).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, fastmath=False)
def mdh_transform(a: float, alpha: float, d: float, theta: float) -> np.ndarray:
    """4x4 homogeneous transform ^{i-1}T_i of 003 §1.6 (see module docstring)."""
    ct, st = np.cos(theta), np.sin(theta)
    ca, sa = np.cos(alpha), np.sin(alpha)
    T = np.empty((4, 4))
    T[0, 0] = ct
    T[0, 1] = -st
    T[0, 2] = 0.0
    T[0, 3] = a
    T[1, 0] = st * ca
    T[1, 1] = ct * ca
    T[1, 2] = -sa
    T[1, 3] = -d * sa
    T[2, 0] = st * sa
    T[2, 1] = ct * sa
    T[2, 2] = ca
    T[2, 3] = d * ca
    T[3, 0] = 0.0
    T[3, 1] = 0.0
    T[3, 2] = 0.0
    T[3, 3] = 1.0
    return T

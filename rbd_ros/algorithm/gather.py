"""Index kernels for the per-step copies between joint orders, without allocation.

A controller or a simulator keeps its joints in one order (the model's) and talks to the
outside in another (a message's, ``config.joints``).  ``np.take`` or fancy indexing makes a new
array every call, and ``np.take(..., out=)`` buffers; these write into the caller's
preallocated arrays:

* ``gather``: ``out[i] = src[index[i]]``;
* ``gather2``: two arrays through the same index;
* ``scatter_finite``: ``out[index[i]] = src[i]`` if every ``src[i]`` is finite, else nothing
  written (a command with a NaN must leave the last safe one in place); returns which.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def gather(src: np.ndarray, index: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - jitted
    """``out[i] = src[index[i]]`` (np.take costs ~3x more on 7 entries)."""
    for i in range(index.shape[0]):
        out[i] = src[index[i]]


@njit(cache=True)
def gather2(a: np.ndarray, b: np.ndarray, index: np.ndarray, out_a: np.ndarray,
            out_b: np.ndarray) -> None:  # pragma: no cover - jitted
    """``out_a[i] = a[index[i]]``, ``out_b[i] = b[index[i]]``."""
    for i in range(index.shape[0]):
        out_a[i] = a[index[i]]
        out_b[i] = b[index[i]]


@njit(cache=True)
def scatter_finite(src: np.ndarray, index: np.ndarray, out: np.ndarray) -> bool:  # pragma: no cover
    """``out[index[i]] = src[i]`` when all of ``src`` is finite (True); else False, ``out``
    untouched."""
    for i in range(src.shape[0]):
        if not math.isfinite(src[i]):
            return False
    for i in range(src.shape[0]):
        out[index[i]] = src[i]
    return True
